/*
 * sa_promq.c - a Prometheus server's HTTP API through libcurl and jansson (sa_promq.h).
 */
#include "sa_promq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "sa_error.h"
#include "sa_vec.h"

#define PROMQ_MAX_DEFAULT ((size_t)64 << 20)

/* libcurl's write callback: into the capped buffer (past the cap libcurl stops: CURLE_WRITE_ERROR). */
static size_t body_write(char *p, size_t size, size_t nmemb, void *ctx)
{
    return sa_buf_append(ctx, p, size * nmemb) ? size * nmemb : 0;
}

void sa_http_setup(CURL *c, const char *url, long timeout_s, sa_buf_t *b, char *errbuf)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
#if CURL_AT_LEAST_VERSION(7, 85, 0)
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

char *sa_promq_redact(const char *url)
{
    const char *scheme = url ? strstr(url, "://") : NULL, *host, *end, *at = NULL;
    char *out;

    if (!url)
        return NULL;
    host = scheme ? scheme + 3 : url;
    /*
     * User information: up to the LAST '@', so that a password holding a raw '@', '/' or '?'
     * (curl refuses such a URL, and the message names it) is hidden whole, as sa_redact_uri
     * hides a MongoDB URI's; an '@' later (in the path) only hides more.
     */
    end = host + strlen(host);
    for (const char *p = host; p < end; p++) {
        if (*p == '@')
            at = p;
    }
    if (!at)
        return strdup(url);
    if (!(out = malloc(strlen(url) + 4)))
        return NULL;
    memcpy(out, url, (size_t)(host - url));
    strcpy(out + (host - url), "***");
    strcat(out, at);
    return out;
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
    size_t max = q->max_bytes ? q->max_bytes : PROMQ_MAX_DEFAULT;
    sa_buf_t b;
    char *url = NULL, *red = NULL, *body = NULL, errbuf[CURL_ERROR_SIZE] = "", where[600];
    size_t ul = strlen(q->url);
    long status = 0;
    CURLcode rc;
    bool ok = false;

    *data = NULL;
    sa_buf_init(&b, max);
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
    sa_http_setup(c, url, (long)(q->timeout_s > 0 ? q->timeout_s : 30), &b, errbuf);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    rc = curl_easy_perform(c);
    q->requests++;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_WRITE_ERROR && b.len + CURL_MAX_WRITE_SIZE > max)
        sa_error_set(error, SA_ERR_IO, 0, "%s: the answer is larger than %zu bytes", where, max);
    else if (rc != CURLE_OK)
        sa_error_set(error, SA_ERR_IO, 0, "%s: %s", where, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else
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
