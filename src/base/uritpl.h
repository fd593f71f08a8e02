/* SPDX-License-Identifier: MIT */
/* uritpl.h -- RFC 6570 URI templates, parsed once and matched against the
 * URIs clients read.
 *
 * A template is literal text and expressions.  Matching supports the
 * expressions a resource template needs to name a family of resources:
 *   {var}   one value without '/', '?', '#' or ','
 *   {+var}  any characters ("reserved" expansion), '/' included
 *   {#var}  the same after a literal '#'
 *   {/var}  one path segment after '/'
 *   {.var}  one label after '.'
 * Query forms, prefix and explode modifiers, several variables in one
 * expression and two expressions without literal text between them are
 * refused by uritpl_parse(): nothing could match them unambiguously.
 * Matched values are percent-decoded and must be non-empty UTF-8. */
#ifndef MCPD_URITPL_H
#define MCPD_URITPL_H

#include <stddef.h>

#include <json-c/json.h>

typedef struct uritpl uritpl;

/* Parses `text`; NULL with a reason in `err` when it is not a template
 * this module can match. */
uritpl *uritpl_parse(const char *text, char *err, size_t errlen);
void uritpl_free(uritpl *t);

/* Matches `uri` against `t`: a new object mapping each variable to its
 * decoded value (a string), or NULL when the URI does not match. */
json_object *uritpl_match(const uritpl *t, const char *uri);

/* The template's variables, in order. */
size_t uritpl_vars(const uritpl *t);
const char *uritpl_var(const uritpl *t, size_t i);

#endif
