/*
 * sa_flatspool.c - the flat spool layout of 0.1, which replays of old trees still read (see sa_flatspool.h).
 */
#define _GNU_SOURCE

#include "sa_flatspool.h"

#include "sa_time.h"
#include "sa_vec.h"
#include "sa_fsutil.h"
#include "sa_model.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The kinds, in replay order within one snapshot. */
static const char *const kinds[] = {"sinfo", "squeue", "sacct", "sdiag"};
#define NKINDS (sizeof kinds / sizeof kinds[0])

#define TS_LEN 16 /* "YYYYMMDDTHHMMSSZ" */
#define TS_FORMAT "%Y%m%dT%H%M%SZ"
#define AT_MAX ((int64_t)253402300799) /* 9999-12-31T23:59:59Z */

/* A newly allocated formatted string, or NULL when memory runs out. */
__attribute__((format(printf, 1, 2))) static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int rc;

    va_start(ap, fmt);
    rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    return rc < 0 ? NULL : s;
}

/* Index of kind in kinds[], or -1. */
static int kind_index(const char *kind)
{
    for (size_t i = 0; kind && i < NKINDS; i++) {
        if (strcmp(kind, kinds[i]) == 0)
            return (int)i;
    }
    return -1;
}

/* Checks dir and cluster; sets *error (SA_ERR_USAGE) and returns false if unusable. */
bool sa_flatspool_check_names(const char *dir, const char *cluster, sa_error_t *error)
{
    char q[160];

    if (!dir || !dir[0]) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "no spool directory given");
        return false;
    }
    if (!sa_cluster_name_ok(cluster)) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL,
                     "cluster name \"%s\" cannot name a spool directory: %s",
                     sa_error_quote(cluster, 64, q, sizeof q), SA_CLUSTER_NAME_RULE);
        return false;
    }
    return true;
}

/* Formats at as "YYYYMMDDTHHMMSSZ" (UTC) into buf (>= TS_LEN + 1 bytes). */
bool sa_flatspool_format_at(int64_t at, char *buf, size_t bufsz)
{
    time_t t = (time_t)at;
    struct tm tm;

    if (at < 0 || at > AT_MAX || !gmtime_r(&t, &tm))
        return false;
    return strftime(buf, bufsz, TS_FORMAT, &tm) == TS_LEN;
}

/*
 * Parses the first TS_LEN bytes of s as "YYYYMMDDTHHMMSSZ" (UTC). Strict: exactly
 * that shape, and it must format back to the same text (no "20260230", no second 60).
 */
/* The value of n decimal digits. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

bool sa_flatspool_parse_at(const char *s, int64_t *at)
{
    char ts[TS_LEN + 1], back[TS_LEN + 8];
    int64_t t;

    for (int i = 0; i < TS_LEN; i++) {
        char want = i == 8 ? 'T' : i == 15 ? 'Z' : '0';
        if (want == '0' ? !isdigit((unsigned char)s[i]) : s[i] != want)
            return false;
    }
    memcpy(ts, s, TS_LEN);
    ts[TS_LEN] = '\0';
    /* YYYYMMDDTHHMMSSZ: the digits were checked above; schema/core/sa_time.c makes the time */
    if (!sa_time_from_fields(digits(ts, 4), digits(ts + 4, 2), digits(ts + 6, 2), digits(ts + 9, 2),
                             digits(ts + 11, 2), digits(ts + 13, 2), &t) ||
        !sa_flatspool_format_at(t, back, sizeof back) || strcmp(back, ts) != 0)
        return false;
    *at = t;
    return true;
}

/*
 * Parses a file name "<ts>-<kind>.<json|txt>". Returns the kind index (and *at,
 * *json), or -1 for anything else (temporary files start with '.').
 */
static int parse_name(const char *name, int64_t *at, bool *json)
{
    const char *rest;

    if (strlen(name) < TS_LEN + 2 || name[TS_LEN] != '-' || !sa_flatspool_parse_at(name, at))
        return -1;
    rest = name + TS_LEN + 1;
    for (size_t i = 0; i < NKINDS; i++) {
        size_t kl = strlen(kinds[i]);
        if (strncmp(rest, kinds[i], kl) != 0 || rest[kl] != '.')
            continue;
        if (strcmp(rest + kl + 1, "json") == 0)
            *json = true;
        else if (strcmp(rest + kl + 1, "txt") == 0)
            *json = false;
        else
            return -1;
        return (int)i;
    }
    return -1;
}

/* Orders entries by time, then kind (replay order), then path. */
static int entry_cmp(const void *a, const void *b)
{
    const sa_flatspool_entry_t *x = a, *y = b;
    int kx = kind_index(x->kind), ky = kind_index(y->kind);

    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return strcmp(x->path, y->path);
}

void sa_flatspool_entries_free(sa_flatspool_entry_t *entries, size_t n)
{
    if (!entries)
        return;
    for (size_t i = 0; i < n; i++)
        free(entries[i].path);
    free(entries);
}

bool sa_flatspool_list(const char *dir, const char *cluster, sa_flatspool_entry_t **entries, size_t *n,
                   sa_error_t *error)
{
    sa_flatspool_entry_t *v = NULL;
    size_t len = 0, cap = 0;
    char *cdir = NULL, q[300];
    DIR *d = NULL;
    struct dirent *de;
    bool ok = false;
    int saved;

    *entries = NULL;
    *n = 0;
    if (!sa_flatspool_check_names(dir, cluster, error))
        goto done;
    if (!(cdir = str_printf("%s/%s", dir, cluster))) {
        sa_error_nomem(error);
        goto done;
    }
    d = opendir(cdir);
    if (!d) {
        saved = errno;
        if (saved == ENOENT) {
            ok = true; /* nothing spooled yet */
            goto done;
        }
        sa_error_set(error, SA_ERR_IO, saved, "cannot read directory %s: %s",
                     sa_error_quote(cdir, 256, q, sizeof q), strerror(saved));
        goto done;
    }
    for (;;) {
        struct stat st;
        int64_t at;
        bool json;
        int k;

        errno = 0;
        de = readdir(d);
        if (!de) {
            if (errno != 0) {
                saved = errno;
                sa_error_set(error, SA_ERR_IO, saved, "cannot read directory %s: %s",
                             sa_error_quote(cdir, 256, q, sizeof q), strerror(saved));
                goto done;
            }
            break;
        }
        k = parse_name(de->d_name, &at, &json);
        if (k < 0)
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue; /* vanished, or not a plain file */
        if (!SA_VEC_GROW(v, cap, len, 1, 16)) {
            sa_error_nomem(error);
            goto done;
        }
        if (!(v[len].path = str_printf("%s/%s", cdir, de->d_name))) {
            sa_error_nomem(error);
            goto done;
        }
        v[len].at = at;
        v[len].kind = kinds[k];
        v[len].json = json;
        len++;
    }
    if (len > 1)
        qsort(v, len, sizeof *v, entry_cmp);
    ok = true;

done:
    if (d)
        closedir(d);
    free(cdir);
    if (ok) {
        *entries = v;
        *n = len;
    } else {
        sa_flatspool_entries_free(v, len);
    }
    return ok;
}

bool sa_flatspool_remove(const char *path, sa_error_t *error)
{
    char q[300], *parent;
    bool ok;

    if (!path || !path[0]) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "no spool file given");
        return false;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        int saved = errno;
        sa_error_set(error, SA_ERR_IO, saved, "cannot remove %s: %s",
                     sa_error_quote(path, 256, q, sizeof q), strerror(saved));
        return false;
    }
    parent = sa_parent_of(path);
    if (!parent) {
        sa_error_nomem(error);
        return false;
    }
    ok = sa_fsync_dir(parent);
    if (!ok) {
        int saved = errno;
        /* ENOENT: the directory is gone too, so the file certainly is */
        ok = saved == ENOENT;
        if (!ok)
            sa_error_set(error, SA_ERR_IO, saved, "cannot sync directory %s: %s",
                         sa_error_quote(parent, 256, q, sizeof q), strerror(saved));
    }
    free(parent);
    return ok;
}
