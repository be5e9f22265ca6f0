/*
 * sa_http.c - one HTTP request through libcurl (sa_http.h).
 */
#include "sa_http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#define HTTP_MAX_DEFAULT ((size_t)64 << 20)

/* libcurl's write callback: into the capped buffer (past the cap libcurl stops: CURLE_WRITE_ERROR). */
static size_t body_write(char *p, size_t size, size_t nmemb, void *ctx)
{
    return sa_buf_append(ctx, p, size * nmemb) ? size * nmemb : 0;
}

char *sa_http_redact(const char *url, bool query)
{
    const char *scheme = url ? strstr(url, "://") : NULL, *host, *at;
    size_t pre;
    char *out, *q;

    if (!url || !(out = malloc(strlen(url) + 8)))
        return NULL;
    host = scheme ? scheme + 3 : url;
    pre = (size_t)(host - url);
    memcpy(out, url, pre);
    out[pre] = '\0';
    /* an '@' past the authority (in the path, the query) only hides more, never less */
    if ((at = strrchr(host, '@'))) {
        strcat(out, "***");
        strcat(out, at);
    } else {
        strcat(out, host);
    }
    if (query && (q = strpbrk(out + pre + (at ? 3 : 0), "?#")))
        strcpy(q, "?***");
    return out;
}

void sa_http_setup(CURL *c, const char *url, long timeout_s, sa_buf_t *b, char *errbuf)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if CURL_AT_LEAST_VERSION(7, 85, 0)
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

bool sa_http_request(const sa_http_req_t *req, bool http_errors, sa_buf_t *body, long *status, sa_error_t *error)
{
    CURL *c = curl_easy_init();
    struct curl_slist *headers = NULL;
    size_t max = req->max_bytes ? req->max_bytes : HTTP_MAX_DEFAULT;
    char errbuf[CURL_ERROR_SIZE] = "", *auth = NULL;
    CURLcode rc;
    bool ok = false;

    *status = 0;
    sa_buf_init(body, max);
    if (!c)
        return sa_error_nomem(error);
    if (req->bearer) {
        size_t n = strlen(req->bearer) + sizeof "Authorization: Bearer ";
        if (!(auth = malloc(n)) || (snprintf(auth, n, "Authorization: Bearer %s", req->bearer),
                                    !(headers = curl_slist_append(NULL, auth)))) {
            sa_error_nomem(error);
            goto done;
        }
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    }
    if (req->user) {
        curl_easy_setopt(c, CURLOPT_USERNAME, req->user);
        curl_easy_setopt(c, CURLOPT_PASSWORD, req->password ? req->password : "");
    }
    sa_http_setup(c, req->url, (long)(req->timeout_s > 0 ? req->timeout_s : 30), body, errbuf);
    if (req->post)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->post);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (rc == CURLE_WRITE_ERROR && body->len + CURL_MAX_WRITE_SIZE > max)
        sa_error_set(error, SA_ERR_IO, EFBIG, "%s: the answer is larger than %zu bytes", req->what, max);
    else if (rc != CURLE_OK)
        sa_error_set(error, SA_ERR_IO, 0, "%s: %s", req->what, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (http_errors && *status >= 300)
        sa_error_set(error, SA_ERR_IO, 0, "%s: HTTP %ld%s", req->what, *status,
                     *status == 401 || *status == 403 ? " (refused: check the credentials)" : "");
    else
        ok = true;
done:
    curl_slist_free_all(headers);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    curl_easy_cleanup(c);
    return ok;
}
