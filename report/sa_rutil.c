/*
 * sa_rutil.c - small helpers of slurm-report (see sa_rutil.h).
 */
#define _GNU_SOURCE /* vasprintf */
#include "sa_rutil.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_time.h"
#include "sa_vec.h"

bool sa_rlist_split(const char *s, sa_strv_t *out)
{
    const char *p = s;

    while (p && *p) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (b > a) {
            char *item = strndup(a, (size_t)(b - a));
            bool ok = item && sa_strv_push(out, item);
            free(item);
            if (!ok)
                return false;
        }
        p = comma ? comma + 1 : end;
    }
    return true;
}

bool sa_rlist_has_empty(const char *s)
{
    for (const char *p = s;;) {
        const char *end = p + strcspn(p, ",");
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p == end)
            return true;
        if (!*end)
            return false;
        p = end + 1;
    }
}

char *sa_rprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* Reads exactly n digits at *p into *v and advances. */
static bool digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        *v = *v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return true;
}

bool sa_rtime_parse(const char *s, int64_t *t)
{
    return sa_time_parse(s, SA_UNSET, t, NULL);
}

bool sa_rmonth_parse(const char *s, int64_t *start, int64_t *end)
{
    const char *p = s;
    int y, mo;

    if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p != '\0')
        return false;
    if (y < 1970 || !sa_time_from_fields(y, mo, 1, 0, 0, 0, start))
        return false;
    *end = sa_rmonth_add(*start, 1);
    return true;
}

int64_t sa_rmonth_floor(int64_t t)
{
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (int64_t)timegm(&tm);
}

int64_t sa_rmonth_add(int64_t month_start, int n)
{
    struct tm tm;
    time_t tt = (time_t)month_start;
    gmtime_r(&tt, &tm);
    tm.tm_mon += n;
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (int64_t)timegm(&tm); /* timegm normalises tm_mon out of range */
}

const char *sa_rmonth_label(int64_t t, char *buf, size_t bufsz)
{
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    snprintf(buf, bufsz, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
    return buf;
}

bool sa_rduration_parse(const char *s, int64_t *secs)
{
    int64_t v;

    if (!sa_time_parse_duration(s, &v, NULL) || v <= 0)
        return false;
    *secs = v;
    return true;
}

/* ---- interning ---------------------------------------------------------------- */

/* A string of len bytes (not NUL-terminated), looked up among the interned ones. */
typedef struct {
    const char *s;
    size_t len;
} strkey_t;

static uint64_t intern_hash_at(size_t id, void *ctx)
{
    const sa_rintern_t *in = ctx;
    return sa_fnv1a(in->strs[id], strlen(in->strs[id]));
}

static bool intern_eq_at(size_t id, const void *key, void *ctx)
{
    const sa_rintern_t *in = ctx;
    const strkey_t *k = key;
    const char *cand = in->strs[id];
    return strncmp(cand, k->s, k->len) == 0 && cand[k->len] == '\0';
}

void sa_rintern_init(sa_rintern_t *in)
{
    memset(in, 0, sizeof *in);
}

void sa_rintern_clear(sa_rintern_t *in)
{
    for (uint32_t i = 0; i < in->n; i++)
        free(in->strs[i]);
    free(in->strs);
    sa_map_clear(&in->map);
    memset(in, 0, sizeof *in);
}

uint32_t sa_rintern_n(sa_rintern_t *in, const char *s, size_t len)
{
    strkey_t k = {s, len};
    uint32_t *slot = sa_map_slot(&in->map, sa_fnv1a(s, len), &k, in->n, intern_hash_at, intern_eq_at, in);

    if (!slot)
        return UINT32_MAX;
    if (*slot)
        return *slot - 1;
    if (!SA_VEC_GROW(in->strs, in->cap, in->n, 1, 32))
        return UINT32_MAX;
    if (!(in->strs[in->n] = strndup(s, len)))
        return UINT32_MAX;
    *slot = in->n + 1;
    return in->n++;
}

uint32_t sa_rintern(sa_rintern_t *in, const char *s)
{
    return sa_rintern_n(in, s, strlen(s));
}

uint32_t sa_rintern_find(const sa_rintern_t *in, const char *s)
{
    strkey_t k = {s, strlen(s)};
    size_t id = sa_map_find(&in->map, sa_fnv1a(s, k.len), &k, intern_eq_at, (void *)in);
    return id == SIZE_MAX ? UINT32_MAX : (uint32_t)id;
}

void sa_rwrap(const char *s, size_t width, sa_strv_t *out)
{
    while (strlen(s) > width) {
        size_t cut = width;
        char *piece;
        while (cut > 0 && s[cut] != ' ')
            cut--;
        if (cut == 0)
            cut = width;
        piece = strndup(s, cut);
        if (piece)
            sa_strv_push(out, piece);
        free(piece);
        s += cut;
        while (*s == ' ')
            s++;
    }
    if (*s)
        sa_strv_push(out, s);
}

const char *sa_riso(int64_t t)
{
    static char bufs[8][32];
    static unsigned next;
    char *b = bufs[next++ % 8];
    if (t == SA_UNSET)
        b[0] = '\0';
    else
        sa_time_format(t, b, 32);
    return b;
}

const char *sa_rhms(int64_t s, char *buf, size_t n)
{
    int64_t d = s / 86400;
    if (d > 0)
        snprintf(buf, n, "%" PRId64 "-%02d:%02d:%02d", d, (int)(s % 86400 / 3600), (int)(s % 3600 / 60),
                 (int)(s % 60));
    else
        snprintf(buf, n, "%02d:%02d:%02d", (int)(s / 3600), (int)(s % 3600 / 60), (int)(s % 60));
    return buf;
}

bool sa_rjob_id_digits(const char *s, size_t len, int64_t *id)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *id = strtoll(buf, NULL, 10);
    return errno == 0 && *id >= 1 && *id <= SA_JOB_ID_MAX;
}

size_t sa_rbuckets(int64_t start, int64_t end, int64_t **bounds, int64_t *step)
{
    int64_t st = end - start <= SA_RBUCKET_HOURS_MAX ? 3600 : 86400, t;
    size_t n = 0;

    *bounds = NULL;
    *step = st;
    if (end <= start)
        return 0;
    for (t = start - ((start % st) + st) % st; t < end; t += st)
        n++;
    if (!(*bounds = malloc((n + 1) * sizeof **bounds)))
        return SIZE_MAX;
    t = start - ((start % st) + st) % st;
    for (size_t i = 0; i <= n; i++, t += st)
        (*bounds)[i] = i == 0 ? start : i == n ? end : t;
    return n;
}

size_t sa_rbucket_of(const int64_t *bounds, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;

    if (!n || t < bounds[0] || t >= bounds[n])
        return SIZE_MAX;
    while (hi - lo > 1) { /* bounds[lo] <= t < bounds[hi] */
        size_t mid = (lo + hi) / 2;
        if (bounds[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
