/* SPDX-License-Identifier: MIT */
/* schema.h -- the JSON Schema subset mcpd checks tool arguments against.
 *
 * Supported keywords: type (a name or a list), properties, required,
 * additionalProperties (false or a schema), enum, const, items, minimum,
 * maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
 * minItems, maxItems.  Other keywords are passed to clients verbatim and not
 * enforced here; the plugin stays responsible for them. */
#ifndef MCPD_SCHEMA_H
#define MCPD_SCHEMA_H

#include <stddef.h>

#include <json-c/json.h>

/* Checks a schema a plugin declares: it must be an object whose "type" is
 * "object", and the keywords above must have the right shapes.  Returns 0 or
 * -1 with a reason in `err`. */
int schema_check_root(json_object *schema, char *err, size_t errlen);

/* Validates `value` against `schema`.  Returns 0, or -1 with a message in
 * `err` that names the offending argument ("argument 'text': expected a
 * string, got a number"). */
int schema_validate(json_object *schema, json_object *value, char *err,
                    size_t errlen);

#endif
