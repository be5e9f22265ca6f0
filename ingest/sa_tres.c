/*
 * sa_tres.c - TRES strings ("cpu=4,mem=16G,gres/gpu:a100=2") and GRES strings
 * ("gpu:a100:4(S:0-1)") (see sa_tres.h; the forms are those of Slurm's documentation:
 * TRES in sacct(1) (AllocTRES, ReqTRES, TRESUsage*) and slurm.conf(5), GRES in gres.conf(5)).
 *
 * Memory: units K M G T P are powers of 1024; the result is in MiB, rounded to the
 * nearest whole MiB (half up), so "12248K" is 12 MiB and "1K" is 0 MiB. A bare
 * number is MiB.
 */
#include "sa_slurmtext.h"
#include "sa_tres.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 64
#define MAX_COUNT (INT64_C(1) << 53) /* counts beyond this are refused (doubles lose precision) */

#define Q(s, buf) sa_error_quote((s), QUOTE_MAX, (buf), sizeof(buf))

/* A non-negative integer count no larger than 2^53. */
static bool parse_count(const char *s, int64_t *out)
{
    int64_t v;

    if (!s || !isdigit((unsigned char)s[0]) || !sa_parse_int64(s, &v) || v < 0 || v > MAX_COUNT)
        return false;
    *out = v;
    return true;
}

/*
 * "62.50G", "500M", "1294440K", "4000" (MiB) -> MiB rounded to nearest. Only
 * digits with an optional fraction and one unit letter are accepted.
 */
static bool parse_mem_mib(const char *s, int64_t *out)
{
    size_t i = 0, digits = 0;
    double v, scale = 1.0;
    char *end;

    while (isdigit((unsigned char)s[i])) {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return false;
    switch (toupper((unsigned char)s[i])) {
    case '\0':
        break;
    case 'K':
        scale = 1.0 / 1024;
        break;
    case 'M':
        scale = 1.0;
        break;
    case 'G':
        scale = 1024.0;
        break;
    case 'T':
        scale = 1024.0 * 1024;
        break;
    case 'P':
        scale = 1024.0 * 1024 * 1024;
        break;
    default:
        return false;
    }
    if (s[i] && s[i + 1])
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s)
        return false;
    v *= scale;
    if (!isfinite(v) || v < 0 || v > (double)MAX_COUNT)
        return false;
    *out = (int64_t)(v + 0.5); /* v >= 0: nearest, half up */
    return true;
}

/*
 * "1294440K", "0.31M", "20500736K", "934556828" -> bytes, rounded to the nearest (a
 * bare number is bytes). Digits with an optional fraction and one unit letter.
 */
static bool parse_bytes(const char *s, int64_t *out)
{
    int64_t mib;
    double v;
    char *end;

    if (!*s)
        return false;
    if (isdigit((unsigned char)s[strlen(s) - 1])) { /* bare: bytes */
        errno = 0;
        v = strtod(s, &end);
        if (errno || *end || !isdigit((unsigned char)s[0]) || !isfinite(v) || v < 0 || v > (double)MAX_COUNT)
            return false;
        *out = (int64_t)(v + 0.5);
        return true;
    }
    if (!parse_mem_mib(s, &mib)) /* checks the syntax; the value is taken again unrounded */
        return false;
    v = strtod(s, &end);
    switch (toupper((unsigned char)*end)) {
    case 'K': v *= 1024.0; break;
    case 'M': v *= 1024.0 * 1024; break;
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
    default: v *= 1024.0 * 1024 * 1024 * 1024 * 1024; break; /* 'P' */
    }
    if (!isfinite(v) || v > (double)INT64_MAX / 2)
        return false;
    *out = (int64_t)(v + 0.5);
    return true;
}

bool sa_size_bytes_parse(const char *s, int64_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];

    *out = SA_UNSET;
    if (!s || !*s)
        return true;
    if (!parse_bytes(s, out)) {
        *out = SA_UNSET;
        sa_error_set(error, SA_ERR_INPUT, 0, "expected a size like 1294440K, got '%s'", Q(s, q));
        return false;
    }
    return true;
}

bool sa_tres_usage_get(const char *s, const char *name, int64_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8], q2[QUOTE_MAX + 8];
    size_t n = strlen(name);
    const char *p = s;

    *out = SA_UNSET;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len > n && strncmp(p, name, n) == 0 && p[n] == '=') {
            char val[64];
            size_t vlen = len - n - 1;
            snprintf(val, sizeof val, "%.*s", (int)(vlen < sizeof val ? vlen : sizeof val - 1), p + n + 1);
            if (vlen >= sizeof val || !parse_bytes(val, out)) {
                *out = SA_UNSET;
                sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': %s: expected a number or a size, got '%s'",
                             Q(s, q), name, Q(val, q2));
                return false;
            }
            return true;
        }
        p = comma ? comma + 1 : NULL;
    }
    return true;
}

/* A billing value: digits with an optional fraction. */
static bool parse_billing(const char *s, double *out)
{
    size_t i = 0;
    char *end;
    double v;

    while (isdigit((unsigned char)s[i]))
        i++;
    if (i == 0)
        return false;
    if (s[i] == '.') {
        size_t j = ++i;
        while (isdigit((unsigned char)s[i]))
            i++;
        if (i == j)
            return false;
    }
    if (s[i])
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Stores name -> value text in t->other (created on first use). */
static bool tres_other(sa_tres_t *t, const char *name, const char *value)
{
    json_t *v;

    if (!t->other && !(t->other = json_object()))
        return false;
    v = json_string(value);
    if (!v)
        return false;
    return json_object_set_new(t->other, name, v) == 0;
}

void sa_tres_gpus_init(sa_tres_gpus_t *b)
{
    b->untyped = SA_UNSET;
    b->typed_sum = 0;
}

void sa_tres_gpus_untyped(sa_tres_gpus_t *b, int64_t n)
{
    b->untyped = n;
}

bool sa_tres_gpus_typed(sa_tres_gpus_t *b, sa_tres_t *t, const char *type, int64_t n, const char *where,
                        sa_error_t *error)
{
    if (__builtin_add_overflow(b->typed_sum, n, &b->typed_sum) || b->typed_sum > MAX_COUNT) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: GPU count sum out of range", where);
        return false;
    }
    return sa_gpus_add(&t->gpus, type, n) || sa_error_nomem(error);
}

bool sa_tres_gpus_finish(const sa_tres_gpus_t *b, sa_tres_t *t, sa_error_t *error)
{
    if (b->untyped == SA_UNSET) {
        t->gpu_total = b->typed_sum;
        return true;
    }
    t->gpu_total = b->untyped;
    return b->typed_sum >= b->untyped || sa_gpus_add(&t->gpus, "", b->untyped - b->typed_sum) ||
           sa_error_nomem(error);
}

/*
 * Parses "name=value(,name=value)*". GPUs (sa_tres_gpus_t): the untyped "gres/gpu=N" is the total;
 * typed "gres/gpu:T=N" give the split; the typed sum is the total only when no
 * untyped entry is present; typed entries that sum to less than the untyped total
 * leave the rest under type "".
 */
bool sa_tres_parse(const char *s, bool usage, sa_tres_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8], q2[QUOTE_MAX + 8], q3[QUOTE_MAX + 8];
    char *copy = NULL, *tok, *next;
    sa_tres_gpus_t gpus;
    bool ok = false;

    sa_tres_gpus_init(&gpus);
    if (!s || !*s)
        return true;
    copy = strdup(s);
    if (!copy) {
        sa_error_nomem(error);
        return false;
    }
    for (tok = copy; tok; tok = next) {
        char *eq, *name, *val;
        int64_t n;

        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        eq = strchr(tok, '=');
        if (!*tok || !eq || eq == tok || !eq[1]) {
            sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': expected name=value, got '%s'", Q(s, q), Q(tok, q2));
            goto done;
        }
        *eq = '\0';
        name = tok;
        val = eq + 1;
        if (strcmp(name, "mem") == 0) {
            if (!parse_mem_mib(val, &out->mem_mb)) {
                sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': mem: expected a size like 16G, got '%s'", Q(s, q),
                             Q(val, q2));
                goto done;
            }
        } else if (strcmp(name, "node") == 0) {
            if (!parse_count(val, &out->node))
                goto bad_count;
        } else if (!usage && strcmp(name, "cpu") == 0) {
            if (!parse_count(val, &out->cpu))
                goto bad_count;
        } else if (!usage && strcmp(name, "billing") == 0) {
            if (!parse_billing(val, &out->billing)) {
                sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': billing: expected a number, got '%s'", Q(s, q),
                             Q(val, q2));
                goto done;
            }
        } else if (!usage && strcmp(name, "gres/gpu") == 0) {
            if (!parse_count(val, &n))
                goto bad_count;
            sa_tres_gpus_untyped(&gpus, n);
        } else if (!usage && strncmp(name, "gres/gpu:", 9) == 0 && name[9]) {
            char where[QUOTE_MAX + 16];
            if (!parse_count(val, &n))
                goto bad_count;
            snprintf(where, sizeof where, "TRES '%s'", Q(s, q));
            if (!sa_tres_gpus_typed(&gpus, out, name + 9, n, where, error))
                goto done;
        } else if (!tres_other(out, name, val)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': %s: value is not UTF-8 text", Q(s, q), Q(name, q2));
            goto done;
        }
        continue;
    bad_count:
        sa_error_set(error, SA_ERR_INPUT, 0, "TRES '%s': %s: expected a count (0..2^53), got '%s'", Q(s, q),
                     Q(name, q2), Q(val, q3));
        goto done;
    }
    ok = sa_tres_gpus_finish(&gpus, out, error);
done:
    free(copy);
    return ok;
}

/* ---- GRES ------------------------------------------------------------------------ */

/*
 * Parses one GRES item (no parenthesised suffix, no "gres:" prefix) and adds its
 * GPUs. Forms: name, name:count, name:type, name:type:count, and with request
 * also name[:type]=count. A missing count means 1; zero counts add nothing.
 */
static bool gres_item(const char *s, const char *item, bool request, sa_gpus_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8], q2[QUOTE_MAX + 8];
    const char *eq = request ? strchr(item, '=') : NULL;
    size_t left_len = eq ? (size_t)(eq - item) : strlen(item);
    const char *c1 = memchr(item, ':', left_len);
    const char *type = "", *last_colon;
    char *type_buf = NULL, *count_buf = NULL;
    int64_t count = 1;
    bool ok = false;

    if ((c1 ? (size_t)(c1 - item) : left_len) != 3 || strncmp(item, "gpu", 3) != 0) {
        if (left_len == 0)
            goto bad;
        return true; /* not a GPU */
    }
    last_colon = c1;
    if (c1) {
        for (const char *p = c1 + 1; p < item + left_len; p++) {
            if (*p == ':')
                last_colon = p;
        }
    }
    if (eq) {
        if (!parse_count(eq + 1, &count))
            goto bad;
        if (c1) {
            type_buf = strndup(c1 + 1, left_len - (size_t)(c1 + 1 - item));
            if (!type_buf)
                goto oom;
            type = type_buf;
        }
    } else if (c1) {
        const char *tail = last_colon + 1;
        size_t tail_len = left_len - (size_t)(tail - item);
        bool numeric = tail_len > 0;

        for (size_t i = 0; i < tail_len; i++)
            numeric = numeric && isdigit((unsigned char)tail[i]);
        if (numeric) {
            count_buf = strndup(tail, tail_len);
            if (!count_buf)
                goto oom;
            if (!parse_count(count_buf, &count))
                goto bad;
            if (last_colon != c1) {
                type_buf = strndup(c1 + 1, (size_t)(last_colon - c1 - 1));
                if (!type_buf)
                    goto oom;
                type = type_buf;
            }
        } else if (last_colon == c1) {
            /* name:type without a count */
            type_buf = strndup(c1 + 1, tail_len);
            if (!type_buf)
                goto oom;
            type = type_buf;
        } else {
            goto bad;
        }
    }
    if (type_buf && (!*type_buf || strchr(type_buf, ':')))
        goto bad; /* "gpu:", "gpu::2", "gpu:=2", "gpu:a:b:2" */
    if (count > 0 && !sa_gpus_add(out, type, count))
        goto oom;
    ok = true;
    goto done;
bad:
    sa_error_set(error, SA_ERR_INPUT, 0, "GRES '%s': cannot read '%s' as name[:type][:count]", Q(s, q),
                 Q(item, q2));
    goto done;
oom:
    sa_error_nomem(error);
done:
    free(type_buf);
    free(count_buf);
    return ok;
}

/*
 * Splits a GRES string on the commas outside parentheses; each item loses its
 * "(S:0-1)" / "(IDX:0-3,5-9)" suffix (and with request its "gres:"/"gres/" prefix)
 * and is read by gres_item().
 */
bool sa_gres_parse_gpus(const char *s, bool request, sa_gpus_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    char *copy, *p, *item;
    bool ok = false;
    int depth = 0;

    if (!s || !*s || strcmp(s, "(null)") == 0 || strcmp(s, "N/A") == 0 || strcmp(s, "none") == 0)
        return true;
    copy = strdup(s);
    if (!copy) {
        sa_error_nomem(error);
        return false;
    }
    for (item = p = copy;; p++) {
        if (*p == '(') {
            if (depth++ > 0)
                goto unbalanced;
            *p = '\0'; /* the item ends here; the suffix is skipped */
            continue;
        }
        if (*p == ')') {
            if (--depth < 0 || (p[1] && p[1] != ','))
                goto unbalanced;
            continue;
        }
        if (depth > 0 && *p)
            continue;
        if (*p && *p != ',')
            continue;
        if (depth > 0)
            goto unbalanced;
        {
            char end = *p;
            const char *it = item;
            *p = '\0';
            if (request) {
                if (strncmp(it, "gres:", 5) == 0 || strncmp(it, "gres/", 5) == 0)
                    it += 5;
            }
            if (!gres_item(s, it, request, out, error))
                goto done;
            if (!end)
                break;
            item = p + 1;
        }
    }
    ok = true;
    goto done;
unbalanced:
    sa_error_set(error, SA_ERR_INPUT, 0, "GRES '%s': unbalanced parentheses", Q(s, q));
done:
    free(copy);
    return ok;
}
