/*
 * sa_http.h - one HTTP request through libcurl, the one place both binaries set it up:
 * http and https only (redirects are not followed), a timeout for the whole request,
 * the answer read into a buffer capped at creation (past the cap, an error, never
 * unbounded growth), no signals, no shell. Used by the Prometheus client (sa_promq.h)
 * and slurm-report's --allocations URL (report/sa_alloc_url.c).
 *
 * Credentials (a bearer token, a user and password) go to the server and nowhere else:
 * messages name the URL as sa_http_redact gives it.
 */
#ifndef SA_HTTP_H
#define SA_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "sa_error.h"
#include "sa_vec.h"

typedef struct {
    const char *url;        /* http:// or https:// (user information is sent as basic authentication) */
    const char *post;       /* the body of a POST (application/x-www-form-urlencoded); NULL: a GET */
    const char *bearer;     /* "Authorization: Bearer <bearer>"; NULL: none (never printed) */
    const char *user, *password; /* basic authentication; NULL: none (never printed) */
    int64_t timeout_s;      /* the whole request, connection included (<= 0: 30 s) */
    size_t max_bytes;       /* the largest answer read (0: 64 MiB) */
    const char *what;       /* names the request in messages ("Prometheus URL", "allocations URL"), the URL redacted */
} sa_http_req_t;

/*
 * Sends the request and reads the answer into body (initialised here, capped at
 * max_bytes; the caller clears it, whatever the result) and its HTTP status into
 * *status (0 when none came). True when an answer came (with http_errors: of a
 * status below 300). Else false with SA_ERR_IO and one line "<what>: <cause>": the
 * server could not be reached, did not answer within the timeout, answered more than
 * max_bytes ("the answer is larger than N bytes", code EFBIG); with http_errors, an
 * answer of status 300 or more ("HTTP 401 (refused: check the credentials)").
 */
bool sa_http_request(const sa_http_req_t *req, bool http_errors, sa_buf_t *body, long *status, sa_error_t *error);

/*
 * What every request has, on the libcurl handle c, for a client that sets more of its own
 * (CloudWatch's: report/sa_cw_aws.c, signed with CURLOPT_AWS_SIGV4): the URL, a timeout of
 * timeout_s for the whole request, the answer read into b (its cap ends it:
 * CURLE_WRITE_ERROR), libcurl's message into errbuf (CURL_ERROR_SIZE), http and https
 * only, redirects not followed, no signals. sa_http_request uses it.
 */
void sa_http_setup(CURL *c, const char *url, long timeout_s, sa_buf_t *b, char *errbuf);

/*
 * The URL for messages: the user information ("user:password@") replaced by "***@"
 * (up to the last '@' of the authority, so that a password holding a raw '@' is hidden
 * whole) and, when query, the query and fragment by "?***" (a token may be in it). New
 * string; NULL when url is NULL or out of memory.
 */
char *sa_http_redact(const char *url, bool query);

#endif
