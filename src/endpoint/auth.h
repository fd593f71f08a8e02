/* SPDX-License-Identifier: MIT */
/* auth.h -- the OAuth resource-server role of the HTTP transport.
 *
 * When a token source is configured, every HTTP request to the MCP
 * endpoint must carry `Authorization: Bearer <token>`, where the token is
 * either one of the static tokens of --auth-token-file or a JWT access
 * token signed by a key of --auth-jwks, issued by --auth-jwt-issuer for
 * --auth-jwt-audience.  Both sources may be configured at once; a token
 * either accepts is valid.
 *
 * Unauthenticated clients discover where to get a token from the RFC 9728
 * protected-resource metadata, which the HTTP layer serves without a token
 * at the paths auth_is_metadata_path() accepts, and which every 401 names
 * in its WWW-Authenticate challenge (auth_challenge()).
 *
 * What the caller does, per HTTP request, before anything else:
 *
 *   if (a != NULL && auth_is_metadata_path(a, path))
 *     -> GET: 200, Content-Type: application/json, auth_metadata();
 *        other methods: 405.
 *   else if (a != NULL && auth_verify(a, authorization, &why) != 0)
 *     -> 401, WWW-Authenticate: auth_challenge(a, why, ...), no session
 *        touched, nothing of the token logged.
 *
 * Tokens never reach a log line or a reply from this module.  An auth
 * object is immutable after auth_new(), so any thread may verify with it. */
#ifndef MCPD_AUTH_H
#define MCPD_AUTH_H

#include <stddef.h>

#include "auth_settings.h"

typedef struct auth auth;

/* The longest resource URL auth_new() accepts, and a buffer size for
 * auth_challenge() that always suffices. */
#define AUTH_MAX_RESOURCE_URL 1024
#define AUTH_CHALLENGE_SIZE 2048

/* The path prefix of every metadata document (RFC 9728 §3). */
#define AUTH_METADATA_PATH "/.well-known/oauth-protected-resource"

/* Builds the verifier from the options.  Returns 0 and sets *out to NULL
 * when no token source is configured; -1 after logging a clear error when
 * the configuration is wrong (missing pieces, unreadable file, bad JWKS).
 * `default_resource_url` (e.g. "http://127.0.0.1:8080/mcp") is used when
 * the options give no resource URL; it must be an absolute http(s) URL. */
int auth_new(const auth_settings *o, const char *default_resource_url,
             auth **out);
void auth_free(auth *a);

/* Checks an Authorization header value (may be NULL).  Returns 0 and sets
 * *why = NULL when the bearer token is valid; otherwise -1 and *why = a
 * short static reason fit for the client ("missing bearer token" when no
 * bearer token was presented at all -- no header, another scheme, an empty
 * one -- else "invalid token", "token expired", ...).  Never logs or
 * returns any part of the token, so the caller may log `why`.  The scheme
 * is matched case-insensitively, as RFC 7235 says.  `a` must not be NULL. */
int auth_verify(const auth *a, const char *authorization, const char **why);
/* auth_verify(), and on success writes who the token speaks for into
 * `who` (AUTH_WHO_SIZE bytes): "token:<n>" for the n-th static token,
 * "sub:<subject>" for a JWT with a subject, else the token's SHA-256.  A
 * session belongs to the identity that opened it. */
#define AUTH_WHO_SIZE 256
int auth_verify_who(const auth *a, const char *authorization, const char **why,
                    char *who, size_t who_size);

/* The RFC 9728 protected-resource metadata document (JSON text, owned by
 * `a`) served at the metadata paths: resource, authorization_servers (the
 * issuer, when JWT is configured), bearer_methods_supported ["header"] and
 * resource_name. */
const char *auth_metadata(const auth *a, size_t *len);

/* The metadata URL for WWW-Authenticate (owned by `a`): the path-suffixed
 * form of RFC 9728 §3.1, e.g.
 * https://h/.well-known/oauth-protected-resource/mcp for https://h/mcp, and the
 * bare form when the resource URL has no path. */
const char *auth_metadata_url(const auth *a);

/* Whether a request path (a query part is ignored) is one of the metadata
 * paths, which are served without a token: the path-suffixed one and the
 * bare AUTH_METADATA_PATH. */
int auth_is_metadata_path(const auth *a, const char *path);

/* Writes the value of the WWW-Authenticate header for a 401 into `buf`:
 *
 *   Bearer resource_metadata="<auth_metadata_url()>"
 *
 * and, when `why` is a reason auth_verify() gave for a token that was
 * presented but rejected, also error="invalid_token" and
 * error_description="<why>" (RFC 6750 §3).  With why == NULL or the
 * missing-token reason, no error is named, since RFC 6750 §3.1 says a
 * request without credentials gets none.  Returns the length written, or
 * -1 when `size` is too small (AUTH_CHALLENGE_SIZE never is). */
int auth_challenge(const auth *a, const char *why, char *buf, size_t size);

#endif
