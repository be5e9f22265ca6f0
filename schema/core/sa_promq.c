/*
 * sa_promq.c - a Prometheus server's HTTP API through libcurl and jansson (sa_promq.h).
 */
#include "sa_promq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "sa_error.h"
#include "sa_http.h"
#include "sa_vec.h"

char *sa_promq_redact(const char *url)
{
    return sa_http_redact(url, false);
}

/* The form, URL-encoded ("a=x&b=y"); NULL when out of memory. */
static char *form_encode(CURL *c, const char *const *form)
{
    size_t len = 1;
    char *out = NULL;

    for (int pass = 0; pass < 2; pass++) {
        size_t o = 0;
        for (size_t i = 0; form[i] && form[i + 1]; i += 2) {
            char *v = curl_easy_escape(c, form[i + 1], 0);
            size_t kl = strlen(form[i]), vl = v ? strlen(v) : 0;
            if (!v) {
                free(out);
                return NULL;
            }
            if (pass == 0) {
                len += kl + vl + 2;
            } else {
                if (o)
                    out[o++] = '&';
                memcpy(out + o, form[i], kl);
                o += kl;
                out[o++] = '=';
                memcpy(out + o, v, vl);
                o += vl;
                out[o] = '\0';
            }
            curl_free(v);
        }
        if (pass == 0 && !(out = calloc(1, len)))
            return NULL;
    }
    return out;
}

/* The answer's JSON: data of a "success", else the error. */
static bool parse_answer(const sa_buf_t *b, long status, const char *where, json_t **data, sa_error_t *error)
{
    json_error_t jerr;
    json_t *root = b->data ? json_loadb(b->data, b->len, 0, &jerr) : NULL;
    const char *st = json_string_value(json_object_get(root, "status"));
    bool ok = false;

    if (!root || !st) {
        sa_error_set(error, SA_ERR_IO, 0, "%s: HTTP %ld, not a Prometheus API answer%s%s", where, status,
                     root ? "" : ": ", root ? "" : jerr.text);
    } else if (strcmp(st, "success") != 0 || !json_object_get(root, "data")) {
        char q[200];
        const char *e = json_string_value(json_object_get(root, "error"));
        const char *type = json_string_value(json_object_get(root, "errorType"));
        bool refused = type && (strcmp(type, "bad_data") == 0 || strcmp(type, "execution") == 0);
        sa_error_set(error, SA_ERR_IO, refused ? SA_PROMQ_REFUSED : 0, "%s: HTTP %ld, the server says: %s", where,
                     status, sa_error_quote(e ? e : st, 160, q, sizeof q));
    } else {
        *data = json_incref(json_object_get(root, "data"));
        ok = true;
    }
    json_decref(root);
    return ok;
}

bool sa_promq_post(sa_promq_t *q, const char *path, const char *const *form, json_t **data, sa_error_t *error)
{
    CURL *c = curl_easy_init();
    sa_http_req_t req = {.timeout_s = q->timeout_s, .max_bytes = q->max_bytes};
    sa_buf_t b;
    char *url = NULL, *red = NULL, *body = NULL, where[600];
    size_t ul = strlen(q->url);
    long status = 0;
    bool ok = false;

    *data = NULL;
    sa_buf_init(&b, 0);
    if (!c || !(url = malloc(ul + strlen(path) + 1)) || !(body = form_encode(c, form))) {
        sa_error_nomem(error);
        goto done;
    }
    /* the base URL's trailing slashes go: "http://prom:9090/" + "/api/v1/query" has one */
    memcpy(url, q->url, ul);
    while (ul > 0 && url[ul - 1] == '/')
        ul--;
    strcpy(url + ul, path);
    red = sa_promq_redact(url); /* messages name the URL asked, as asked */
    snprintf(where, sizeof where, "Prometheus %s", red ? red : "(URL)");
    req.url = url;
    req.post = body;
    req.what = where;
    q->requests++;
    /* an HTTP error's answer says why in Prometheus's JSON: parse_answer reads it */
    if (sa_http_request(&req, false, &b, &status, error))
        ok = parse_answer(&b, status, where, data, error);
done:
    curl_easy_cleanup(c);
    sa_buf_clear(&b);
    free(url);
    free(red);
    free(body);
    return ok;
}

/* A sample [t, "value"]: false when it is not one. */
static bool sample_of(const json_t *p, int64_t *t, double *v)
{
    const char *s = json_string_value(json_array_get(p, 1));
    char *end;

    if (!json_is_number(json_array_get(p, 0)) || !s)
        return false;
    *t = (int64_t)floor(json_number_value(json_array_get(p, 0)));
    *v = strtod(s, &end);
    return end != s && *end == '\0';
}

bool sa_promq_samples(const json_t *data, const char *label, sa_promq_sample_fn fn, void *ctx, sa_error_t *error)
{
    const char *type = json_string_value(json_object_get(data, "resultType"));
    const json_t *res = json_object_get(data, "result"), *s;
    bool matrix = type && strcmp(type, "matrix") == 0;
    size_t i, k;

    if (!type || (!matrix && strcmp(type, "vector") != 0) || !json_is_array(res)) {
        sa_error_set(error, SA_ERR_IO, 0, "Prometheus answered a %s, not a vector or matrix", type ? type : "?");
        return false;
    }
    json_array_foreach(res, i, s) {
        const char *lv = label ? json_string_value(json_object_get(json_object_get(s, "metric"), label)) : NULL;
        const json_t *pts = json_object_get(s, matrix ? "values" : "value"), *p;
        int64_t t;
        double v;
        if (!matrix) {
            if (sample_of(pts, &t, &v) && isfinite(v) && !fn(ctx, lv, t, v, error))
                return false;
            continue;
        }
        json_array_foreach(pts, k, p) {
            if (sample_of(p, &t, &v) && isfinite(v) && !fn(ctx, lv, t, v, error))
                return false;
        }
    }
    return true;
}
