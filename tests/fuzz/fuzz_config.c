/*
 * fuzz_config.c - the configuration file parser and its value parsers.
 *
 * The input is a configuration file: sa_config_load() reads it from a memfd (a
 * regular file in memory, through /proc/self/fd/N), into a store that already
 * holds a value, and must either succeed or leave the store as it was. The first
 * line of the input also goes through sa_parse_duration, sa_parse_size,
 * sa_parse_bool, sa_option_parse_value for every option, sa_option_suggest and
 * sa_redact_uri, which must hide a URI's password.
 */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sa_config.h"

/*
 * The ":PASSWORD@" of a "scheme://user:PASSWORD@host" in s[0..n), as a new string,
 * or NULL when there is none (or it is too short or holds '*', the redaction mark,
 * to be told apart).
 */
static char *password_of(const char *s, size_t n)
{
    char *line = fz_strndup((const uint8_t *)s, n), *secret = NULL;
    char *scheme = strstr(line, "://");
    const char *at, *colon;

    if (scheme && (at = strrchr(scheme + 3, '@')) && (colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3))) &&
        at - colon > 2) {
        secret = fz_strndup((const uint8_t *)colon, (size_t)(at - colon) + 1);
        *scheme = '\0'; /* the same text before the URI is not its password */
        if (strchr(secret, '*') || strstr(line, secret)) {
            free(secret);
            secret = NULL;
        }
    }
    free(line);
    return secret;
}

/* sa_redact_uri must hide the password of "scheme://user:PASSWORD@host". */
static void redact(const char *s)
{
    char *out = sa_redact_uri(s), *secret = password_of(s, strlen(s));
    const char *user, *pass;

    if (!out)
        fz_fail("sa_redact_uri returned NULL");
    /* what comes before the first ':' after the scheme is the user name, shown */
    user = strstr(out, "://");
    pass = user ? strchr(user + 3, ':') : NULL;
    if (secret && pass && strstr(pass, secret))
        fz_fail("sa_redact_uri('%s') = '%s' shows the password", s, out);
    free(secret);
    free(out);
}

/*
 * The message of a failed load names "path:N:"; line N's URI password may not
 * appear in it.
 */
static void check_load_message(const char *path, const char *data, size_t size, const char *message)
{
    size_t plen = strlen(path), i = 0;
    unsigned long lineno = 0, n = 1;

    if (strncmp(message, path, plen) != 0 || sscanf(message + plen, ":%lu", &lineno) != 1)
        return; /* not about a line */
    while (i < size && n < lineno) {
        const char *nl = memchr(data + i, '\n', size - i);
        if (!nl)
            return;
        i = (size_t)(nl - data) + 1;
        n++;
    }
    if (n == lineno && i < size) {
        const char *nl = memchr(data + i, '\n', size - i);
        size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
        char *secret = password_of(data + i, len), *line = fz_strndup((const uint8_t *)data + i, len);
        char *shown = sa_redact_uri(line); /* text the redacted line shows anyway */
        if (secret && shown && !strstr(shown, secret) && strstr(message, secret))
            fz_fail("sa_config_load: the error message shows a URI password: %s", message);
        free(secret);
        free(line);
        free(shown);
    }
}

/* Loads data as a configuration file over cfg (holding "db = before"). */
static void load(const uint8_t *data, size_t size)
{
    sa_config_t cfg;
    sa_error_t error;
    char path[64];
    int fd = memfd_create("fuzz.conf", MFD_CLOEXEC);
    bool ok;

    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        fz_fail("memfd: cannot write %zu bytes", size);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sa_config_init(&cfg);
    sa_error_clear(&error);
    if (!sa_config_set(&cfg, "db", "before", "fuzz", &error))
        fz_fail("sa_config_set: %s", error.message);
    ok = sa_config_load(path, &cfg, &error);
    fz_check_error(ok, &error, "sa_config_load");
    if (!ok)
        check_load_message(path, (const char *)data, size, error.message);
    if (!ok && (cfg.n != 1 || strcmp(sa_config_get(&cfg, "db"), "before") != 0 || cfg.path))
        fz_fail("sa_config_load failed (%s) but changed the configuration", error.message);
    for (size_t i = 0; ok && i < cfg.n; i++) {
        if (!sa_option_find(cfg.v[i].key) || !cfg.v[i].value || !cfg.v[i].origin)
            fz_fail("sa_config_load: entry %zu (%s) is not a known option with a value", i, cfg.v[i].key);
        (void)sa_config_get_num(&cfg, cfg.v[i].key, 0);
    }
    sa_config_clear(&cfg);
    close(fd);
}

/* The value parsers on one string. */
static void values(const char *s)
{
    sa_error_t error;
    int64_t v;
    bool ok, b;

    sa_error_clear(&error);
    ok = sa_parse_duration(s, &v, &error);
    fz_check_error(ok, &error, "sa_parse_duration");
    if (ok && v < 0)
        fz_fail("sa_parse_duration('%s') = %lld", s, (long long)v);
    ok = sa_parse_size(s, &v, &error);
    fz_check_error(ok, &error, "sa_parse_size");
    if (ok && v < 0)
        fz_fail("sa_parse_size('%s') = %lld", s, (long long)v);
    ok = sa_parse_bool(s, &b, &error);
    fz_check_error(ok, &error, "sa_parse_bool");
    for (size_t i = 0; i < sa_ingest_noptions; i++) {
        const sa_option_t *opt = &sa_ingest_options[i];
        ok = sa_option_parse_value(opt, s, &v, &error);
        fz_check_error(ok, &error, opt->name);
        /* a URI may hold a password: its messages never quote it */
        if (!ok && strcmp(opt->name, "mongo-uri") == 0 && strlen(s) >= 6 && strstr(error.message, s))
            fz_fail("mongo-uri: the error message quotes the value: %s", error.message);
    }
    (void)sa_option_suggest(s);
    redact(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    char *first = fz_strndup(data, nl ? (size_t)(nl - data) : size);

    load(data, size);
    values(first);
    free(first);
    return 0;
}
