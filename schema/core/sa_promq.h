/*
 * sa_promq.h - asking a Prometheus server's HTTP API (/api/v1/query, /api/v1/query_range):
 * libcurl for the HTTP (POSTed form, a timeout, the answer capped, http and https only,
 * no shell), jansson for the answer. The URL may carry credentials (user:password@): they
 * go to the server and nowhere else; messages name the URL with them redacted.
 *
 * Errors are SA_ERR_IO: the server could not be reached, did not answer in time, answered
 * more than the cap, with an HTTP error, with something that is not Prometheus's JSON, or
 * with status "error" (its error text quoted). An answer of status "error" whose errorType
 * says the query itself failed (bad_data, execution: asking again will not help) has the
 * code SA_PROMQ_REFUSED; any other failure code 0.
 */
#define SA_PROMQ_REFUSED 1
#ifndef SA_PROMQ_H
#define SA_PROMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sa_error.h"
#include "sa_vec.h"

typedef struct {
    const char *url;   /* the server's base URL: http://host:9090 (a path prefix allowed) */
    int64_t timeout_s; /* the whole request, connection included */
    size_t max_bytes;  /* the largest answer read (0: 64 MiB) */
    size_t requests;   /* requests made (counted by sa_promq_post) */
} sa_promq_t;

/*
 * POSTs the form (name, value pairs, NULL-terminated; values URL-encoded here) to the
 * server's path ("/api/v1/query") and returns in *data (a new reference) the "data"
 * member of a "success" answer.
 */
bool sa_promq_post(sa_promq_t *q, const char *path, const char *const *form, json_t **data, sa_error_t *error);

/*
 * The samples of an instant vector ("resultType": "vector") in data: fn(ctx, the value of
 * label (NULL when the series lacks it), the value) for each; values that are not finite
 * numbers are skipped. A matrix: fn once per point of each series (t given). Fails
 * (SA_ERR_IO) on another shape.
 */
typedef bool (*sa_promq_sample_fn)(void *ctx, const char *label, int64_t t, double value, sa_error_t *error);
bool sa_promq_samples(const json_t *data, const char *label, sa_promq_sample_fn fn, void *ctx, sa_error_t *error);

/*
 * Sets what every request of the project's HTTP clients has (this one and CloudWatch's,
 * report/sa_cw_aws.c) on the libcurl handle c: the URL, a timeout of timeout_s for
 * the whole request, the answer read into b (its cap ends it: CURLE_WRITE_ERROR),
 * libcurl's message into errbuf (CURL_ERROR_SIZE), http and https only, no signals.
 */
void sa_http_setup(CURL *c, const char *url, long timeout_s, sa_buf_t *b, char *errbuf);

/* The URL with the user information ("user:password@") replaced by "***@": for messages. New string. */
char *sa_promq_redact(const char *url);

#endif
