/*
 * sa_cw_aws.c - AWS credentials and PutMetricData through libcurl (see sa_cw.h).
 *
 * The request is signed by libcurl (CURLOPT_AWS_SIGV4 "aws:amz:REGION:monitoring", the key
 * and secret as CURLOPT_USERNAME / CURLOPT_PASSWORD, a session token as the
 * X-Amz-Security-Token header): nothing here signs by hand, and no credential reaches argv, a
 * message or a log (libcurl's verbose output is never turned on). Answers are read into a
 * capped buffer; a request has a timeout.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_cw.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sa_fsutil.h"
#include "sa_http.h"
#include "sa_promq.h"
#include "sa_vec.h"

#define ANSWER_MAX ((size_t)64 << 10) /* an answer read, at most */
#define CRED_FILE_MAX 16384           /* a credential file, at most */
#define IMDS_TIMEOUT_S 2L             /* each IMDS request */

/* Frees a string after overwriting it (a secret). */
static void free_secret(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = '\0';
        free(s);
    }
}

void sa_aws_creds_clear(sa_aws_creds_t *c)
{
    free(c->key_id);
    free_secret(c->secret);
    free_secret(c->token);
    memset(c, 0, sizeof *c);
}

/* The value of an environment variable, NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* ---- credentials ------------------------------------------------------------------------ */

/* Trims spaces at both ends of s in place; returns s. */
static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/*
 * Reads the systemd credential file path (aws_access_key_id = ..., aws_secret_access_key =
 * ..., aws_session_token = ...): *found false when it is not there. Another user's file or
 * link is refused; a file without both keys is SA_ERR_INPUT.
 */
static bool creds_file(const char *path, sa_aws_creds_t *c, bool *found, sa_error_t *error)
{
    char buf[CRED_FILE_MAX + 1], *save = NULL;
    ssize_t n;
    size_t len = 0;
    int fd;
    bool ok = false;

    *found = false;
    if (!sa_path_links_ours(path, "the credential", error))
        return false;
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        if (errno == ENOENT)
            return true;
        sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", path, strerror(errno));
        return false;
    }
    *found = true;
    if (!sa_file_is_ours(fd, path, error))
        goto done;
    while (len < CRED_FILE_MAX && (n = read(fd, buf + len, CRED_FILE_MAX - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", path, strerror(errno));
            goto done;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '='), *k, *v, **dst = NULL;
        line = trim(line);
        if (!eq || *line == '#' || *line == ';' || *line == '[')
            continue;
        *eq = '\0';
        k = trim(line);
        v = trim(eq + 1);
        if (strcmp(k, "aws_access_key_id") == 0)
            dst = &c->key_id;
        else if (strcmp(k, "aws_secret_access_key") == 0)
            dst = &c->secret;
        else if (strcmp(k, "aws_session_token") == 0)
            dst = &c->token;
        if (dst && *v) {
            free_secret(*dst);
            if (!(*dst = strdup(v))) {
                sa_error_nomem(error);
                goto done;
            }
        }
    }
    explicit_bzero(buf, sizeof buf);
    if (!c->key_id || !c->secret) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: no aws_access_key_id and aws_secret_access_key lines", path);
        goto done;
    }
    c->source = "systemd credential";
    ok = true;
done:
    close(fd);
    return ok;
}

/*
 * One IMDS request: method "PUT" (the token) or "GET" with the token; the answer into *out
 * (new string). False with the cause in *error.
 */
static bool imds_request(const char *base, const char *path, const char *token, char **out, sa_error_t *error)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    sa_buf_t b;
    char *url = NULL, *hdr = NULL, errbuf[CURL_ERROR_SIZE] = "";
    long status = 0;
    CURLcode rc;
    bool ok = false;

    *out = NULL;
    sa_buf_init(&b, ANSWER_MAX);
    /* the endpoint's trailing slash goes: "http://host/" + "/latest/..." has one */
    if (!c || asprintf(&url, "%.*s%s", (int)(strlen(base) - (base[0] && base[strlen(base) - 1] == '/')), base,
                       path) < 0) {
        url = NULL;
        sa_error_nomem(error);
        goto done;
    }
    sa_http_setup(c, url, IMDS_TIMEOUT_S, &b, errbuf);
    if (!token) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        h = curl_slist_append(h, "X-aws-ec2-metadata-token-ttl-seconds: 300");
    } else if (asprintf(&hdr, "X-aws-ec2-metadata-token: %s", token) >= 0) {
        h = curl_slist_append(h, hdr);
    }
    if (!h) {
        sa_error_nomem(error);
        goto done;
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK)
        sa_error_set(error, SA_ERR_USAGE, 0, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (status != 200)
        sa_error_set(error, SA_ERR_USAGE, 0, "HTTP %ld for %s", status, path);
    else if (!(*out = strdup(b.data ? b.data : "")))
        sa_error_nomem(error);
    else
        ok = true;
done:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free_secret(hdr);
    free(url);
    if (b.data)
        explicit_bzero(b.data, b.len);
    sa_buf_clear(&b);
    return ok;
}

/* The instance role's credentials through IMDSv2 at base. */
static bool creds_imds(const char *base, sa_aws_creds_t *c, sa_error_t *error)
{
    char *token = NULL, *role = NULL, *doc = NULL, *path = NULL;
    json_t *j = NULL;
    bool ok = false;

    if (!imds_request(base, "/latest/api/token", NULL, &token, error) ||
        !imds_request(base, "/latest/meta-data/iam/security-credentials/", token, &role, error))
        goto done;
    role[strcspn(role, "\r\n")] = '\0';
    if (!*role) {
        sa_error_set(error, SA_ERR_USAGE, 0, "the instance has no role");
        goto done;
    }
    if (asprintf(&path, "/latest/meta-data/iam/security-credentials/%s", role) < 0) {
        path = NULL;
        sa_error_nomem(error);
        goto done;
    }
    if (!imds_request(base, path, token, &doc, error))
        goto done;
    j = json_loads(doc, 0, NULL);
    {
        const char *k = json_string_value(json_object_get(j, "AccessKeyId"));
        const char *s = json_string_value(json_object_get(j, "SecretAccessKey"));
        const char *t = json_string_value(json_object_get(j, "Token"));
        if (!k || !s) {
            sa_error_set(error, SA_ERR_USAGE, 0, "the role's credentials hold no AccessKeyId and SecretAccessKey");
            goto done;
        }
        if (!(c->key_id = strdup(k)) || !(c->secret = strdup(s)) || (t && !(c->token = strdup(t)))) {
            sa_error_nomem(error);
            goto done;
        }
    }
    c->source = "instance role";
    ok = true;
done:
    json_decref(j);
    free_secret(token);
    free_secret(doc);
    free(role);
    free(path);
    return ok;
}

bool sa_aws_creds_load(sa_aws_creds_t *c, sa_error_t *error)
{
    const char *dir = env("CREDENTIALS_DIRECTORY"), *disabled = env("AWS_EC2_METADATA_DISABLED");
    const char *imds = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    sa_error_t why;
    bool found = false;

    memset(c, 0, sizeof *c);
    if (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
        if (!(c->key_id = strdup(env("AWS_ACCESS_KEY_ID"))) || !(c->secret = strdup(env("AWS_SECRET_ACCESS_KEY"))) ||
            (env("AWS_SESSION_TOKEN") && !(c->token = strdup(env("AWS_SESSION_TOKEN"))))) {
            sa_aws_creds_clear(c);
            return sa_error_nomem(error);
        }
        c->source = "environment";
        return true;
    }
    if (dir) {
        char *path = NULL;
        bool ok;
        if (asprintf(&path, "%s/aws-credentials", dir) < 0)
            return sa_error_nomem(error);
        ok = creds_file(path, c, &found, error);
        free(path);
        if (!ok) {
            sa_aws_creds_clear(c);
            return false;
        }
        if (found)
            return true;
    }
    if (disabled && strcasecmp(disabled, "true") == 0) {
        sa_error_set(error, SA_ERR_USAGE, 0,
                     "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, there is no "
                     "systemd credential aws-credentials, and AWS_EC2_METADATA_DISABLED is true");
        return false;
    }
    if (creds_imds(imds ? imds : "http://169.254.169.254", c, &why))
        return true;
    sa_aws_creds_clear(c);
    if (why.domain == SA_ERR_NOMEM) {
        *error = why;
        return false;
    }
    sa_error_set(error, SA_ERR_USAGE, 0,
                 "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, there is no systemd "
                 "credential aws-credentials, and the instance metadata service (%s) gave none: %s",
                 imds ? imds : "http://169.254.169.254", why.message);
    return false;
}

/* ---- PutMetricData ---------------------------------------------------------------------- */

/* The text of <tag>...</tag> in an XML answer into out (empty when absent). */
static void xml_text(const char *xml, const char *tag, char *out, size_t size)
{
    char open[40], close[40];
    const char *a, *b;

    out[0] = '\0';
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    if (!xml || !(a = strstr(xml, open)) || !(b = strstr(a, close)))
        return;
    a += strlen(open);
    snprintf(out, size, "%.*s", (int)(b - a), a);
}

/*
 * The cause of a refused request, from AWS's error answer: the XML of the Query API
 * (<Code>, <Message>) or the JSON of the JSON protocol (__type, message); else the status.
 */
static void refusal(const sa_buf_t *b, long status, char *out, size_t size)
{
    char code[128], msg[300], q[340];
    json_t *j = b->data ? json_loadb(b->data, b->len, 0, NULL) : NULL;

    xml_text(b->data, "Code", code, sizeof code);
    xml_text(b->data, "Message", msg, sizeof msg);
    if (!code[0] && j) {
        const char *t = json_string_value(json_object_get(j, "__type"));
        const char *m = json_string_value(json_object_get(j, "message"));
        if (!m)
            m = json_string_value(json_object_get(j, "Message"));
        snprintf(code, sizeof code, "%s", t ? (strchr(t, '#') ? strchr(t, '#') + 1 : t) : "");
        snprintf(msg, sizeof msg, "%s", m ? m : "");
    }
    json_decref(j);
    if (code[0])
        snprintf(out, size, "HTTP %ld %s%s%s", status, code, msg[0] ? ": " : "",
                 msg[0] ? sa_error_quote(msg, 200, q, sizeof q) : "");
    else
        snprintf(out, size, "HTTP %ld", status);
}

/* POSTs one body; false with the one-line cause (SA_ERR_ENDPOINT). */
static bool put_one(const sa_cw_target_t *t, const char *url, const char *where, const sa_aws_creds_t *creds,
                    const char *body, sa_error_t *error)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    sa_buf_t b;
    char *tok = NULL, *sigv4 = NULL, errbuf[CURL_ERROR_SIZE] = "", why[600];
    long status = 0;
    CURLcode rc;
    bool ok = false;

    sa_buf_init(&b, ANSWER_MAX);
    if (!c || asprintf(&sigv4, "aws:amz:%s:monitoring", t->region) < 0 ||
        (creds->token && asprintf(&tok, "X-Amz-Security-Token: %s", creds->token) < 0)) {
        sigv4 = NULL;
        tok = NULL;
        sa_error_nomem(error);
        goto done;
    }
    h = curl_slist_append(NULL, "Content-Type: application/x-www-form-urlencoded; charset=utf-8");
    if (h && tok)
        h = curl_slist_append(h, tok);
    if (!h) {
        sa_error_nomem(error);
        goto done;
    }
    sa_http_setup(c, url, t->timeout_s > 0 ? t->timeout_s : 30, &b, errbuf);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(c, CURLOPT_USERNAME, creds->key_id);
    curl_easy_setopt(c, CURLOPT_PASSWORD, creds->secret);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_WRITE_ERROR && b.len + CURL_MAX_WRITE_SIZE > ANSWER_MAX)
        sa_error_set(error, SA_ERR_ENDPOINT, 0, "%s: the answer is larger than %zu bytes", where, ANSWER_MAX);
    else if (rc != CURLE_OK)
        sa_error_set(error, SA_ERR_ENDPOINT, 0, "%s: %s", where, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (status < 200 || status > 299) {
        refusal(&b, status, why, sizeof why);
        sa_error_set(error, SA_ERR_ENDPOINT, (int)status, "%s: %s", where, why);
    } else
        ok = true;
done:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free_secret(tok);
    free(sigv4);
    sa_buf_clear(&b);
    return ok;
}

bool sa_cw_put(sa_cw_target_t *t, const sa_aws_creds_t *creds, const sa_cw_set_t *s, sa_error_t *error)
{
    char **bodies = NULL, *url = NULL, *red = NULL, where[600];
    size_t n = 0;
    bool ok = false;

    if (t->endpoint)
        url = strdup(t->endpoint);
    else if (asprintf(&url, "https://monitoring.%s.amazonaws.com/", t->region) < 0)
        url = NULL;
    if (!url || !(red = sa_promq_redact(url))) {
        sa_error_nomem(error);
        goto done;
    }
    snprintf(where, sizeof where, "CloudWatch PutMetricData at %s", red);
    if (!sa_cw_bodies(s, t->ns, t->max_data ? t->max_data : SA_CW_MAX_DATA,
                      t->max_bytes ? t->max_bytes : SA_CW_MAX_BYTES, &bodies, &n, error))
        goto done;
    ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        ok = put_one(t, url, where, creds, bodies[i], error);
        t->requests++;
    }
done:
    for (size_t i = 0; i < n; i++)
        free(bodies[i]);
    free(bodies);
    free(url);
    free(red);
    return ok;
}
