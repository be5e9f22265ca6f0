/*
 * sa_hostlist.c - expands Slurm hostlist expressions (see sa_hostlist.h).
 *
 *   "cn-a[001-004,010]"  -> cn-a001 .. cn-a004, cn-a010 (the width of the low end of
 *                           a range is the zero-padded width, as in Slurm)
 *   "gpu[1-2]-ib[0-1]"   -> gpu1-ib0 gpu1-ib1 gpu2-ib0 gpu2-ib1 (cartesian product,
 *                           leftmost group varying slowest)
 *   "a,b c"              -> hosts separated by commas (outside brackets) or blanks
 */
#include "sa_hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 80
#define DEFAULT_MAX_HOSTS 1000000
#define MAX_DIGITS 18 /* numbers up to 10^18 - 1: no overflow in uint64 */

#define Q(s, buf) sa_error_quote((s), QUOTE_MAX, (buf), sizeof(buf))

/* One "lo-hi" (or "n") inside brackets. */
typedef struct {
    uint64_t lo, hi;
    int width;
} range_t;

/* A piece of one host expression: literal text, or a bracket group of ranges. */
typedef struct {
    const char *lit;
    size_t lit_len;
    range_t *ranges; /* NULL for literal pieces */
    size_t nranges;
    uint64_t size;   /* names in the group */
    /* odometer position */
    size_t cur_range;
    uint64_t cur;
} piece_t;

/* Parses up to MAX_DIGITS digits at s[0..n) into *v. */
static bool parse_num(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;

    if (n == 0 || n > MAX_DIGITS)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return true;
}

/*
 * Parses the inside of a bracket group "001-004,010" into p->ranges. Fails (with
 * *error) on empty items, non-digits, reversed ranges and groups larger than max.
 */
static bool parse_group(const char *expr, const char *s, size_t n, uint64_t max, piece_t *p, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    size_t i = 0;

    p->size = 0;
    while (i <= n) {
        size_t j = i, dash;
        range_t r;

        while (j < n && s[j] != ',')
            j++;
        for (dash = i; dash < j && s[dash] != '-'; dash++)
            ;
        if (!parse_num(s + i, dash - i, &r.lo) ||
            (dash < j && !parse_num(s + dash + 1, j - dash - 1, &r.hi))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': bad range '%.*s' in brackets", Q(expr, q),
                         (int)(j - i > 40 ? 40 : j - i), s + i);
            return false;
        }
        if (dash == j)
            r.hi = r.lo;
        if (r.hi < r.lo) {
            sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': reversed range '%.*s'", Q(expr, q),
                         (int)(j - i > 40 ? 40 : j - i), s + i);
            return false;
        }
        r.width = (int)(dash - i);
        if (r.hi - r.lo >= max || p->size + (r.hi - r.lo + 1) > max) {
            sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': more than %llu names", Q(expr, q),
                         (unsigned long long)max);
            return false;
        }
        p->size += r.hi - r.lo + 1;
        {
            range_t *v = realloc(p->ranges, (p->nranges + 1) * sizeof *v);
            if (!v) {
                sa_error_nomem(error);
                return false;
            }
            p->ranges = v;
            p->ranges[p->nranges++] = r;
        }
        i = j + 1;
    }
    return true;
}

/* Frees the ranges of pieces[0..n). */
static void pieces_free(piece_t *pieces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(pieces[i].ranges);
    free(pieces);
}

/*
 * Expands one host expression s[0..n) (no top-level commas) into out. *budget is
 * how many names may still be added; it is decreased.
 */
static bool expand_one(const char *expr, const char *s, size_t n, uint64_t *budget, uint64_t max, sa_strv_t *out,
                       sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    piece_t *pieces = NULL;
    size_t npieces = 0, i = 0, name_len = 0;
    uint64_t total = 1;
    char *name = NULL;
    bool ok = false;

    while (i < n) {
        piece_t p;
        size_t j;
        piece_t *v;

        memset(&p, 0, sizeof p);
        if (s[i] == '[') {
            for (j = i + 1; j < n && s[j] != ']'; j++)
                ;
            if (j == n) {
                sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': unbalanced '['", Q(expr, q));
                goto done;
            }
            if (!parse_group(expr, s + i + 1, j - i - 1, max, &p, error)) {
                free(p.ranges);
                goto done;
            }
            name_len += MAX_DIGITS + 2; /* one number, width <= MAX_DIGITS */
            if (total > *budget / p.size) {
                sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': more than %llu names", Q(expr, q),
                             (unsigned long long)max);
                free(p.ranges);
                goto done;
            }
            total *= p.size;
            i = j + 1;
        } else {
            for (j = i; j < n && s[j] != '['; j++) {
                if (s[j] == ']') {
                    sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': unbalanced ']'", Q(expr, q));
                    goto done;
                }
            }
            p.lit = s + i;
            p.lit_len = j - i;
            name_len += p.lit_len;
            i = j;
        }
        v = realloc(pieces, (npieces + 1) * sizeof *v);
        if (!v) {
            free(p.ranges);
            goto oom;
        }
        pieces = v;
        pieces[npieces++] = p;
    }
    if (total > *budget) {
        sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': more than %llu names", Q(expr, q),
                     (unsigned long long)max);
        goto done;
    }
    name = malloc(name_len + 1);
    if (!name)
        goto oom;
    for (size_t k = 0; k < npieces; k++) {
        pieces[k].cur_range = 0;
        pieces[k].cur = pieces[k].ranges ? pieces[k].ranges[0].lo : 0;
    }
    for (uint64_t made = 0; made < total; made++) {
        char *w = name;
        size_t k;

        for (k = 0; k < npieces; k++) {
            piece_t *p = &pieces[k];
            if (!p->ranges) {
                memcpy(w, p->lit, p->lit_len);
                w += p->lit_len;
            } else {
                w += sprintf(w, "%0*llu", p->ranges[p->cur_range].width, (unsigned long long)p->cur);
            }
        }
        *w = '\0';
        if (!sa_strv_push(out, name))
            goto oom;
        /* advance the odometer: rightmost group fastest */
        for (k = npieces; k-- > 0;) {
            piece_t *p = &pieces[k];
            if (!p->ranges)
                continue;
            if (p->cur < p->ranges[p->cur_range].hi) {
                p->cur++;
                break;
            }
            if (p->cur_range + 1 < p->nranges) {
                p->cur_range++;
                p->cur = p->ranges[p->cur_range].lo;
                break;
            }
            p->cur_range = 0;
            p->cur = p->ranges[0].lo;
        }
    }
    *budget -= total;
    ok = true;
    goto done;
oom:
    sa_error_nomem(error);
done:
    free(name);
    pieces_free(pieces, npieces);
    return ok;
}

/*
 * Splits expr at commas and blanks outside brackets and expands each host
 * expression. Nested or unbalanced brackets fail.
 */
bool sa_hostlist_expand(const char *expr, size_t max_hosts, sa_strv_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    uint64_t max = max_hosts ? max_hosts : DEFAULT_MAX_HOSTS;
    uint64_t budget = max;
    size_t start = 0, i;
    int depth = 0;

    if (!expr || !*expr || strcmp(expr, "None assigned") == 0 || strcmp(expr, "(null)") == 0)
        return true;
    for (i = 0;; i++) {
        char c = expr[i];

        if (c == '[') {
            if (depth++ > 0) {
                sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': nested '['", Q(expr, q));
                return false;
            }
        } else if (c == ']') {
            if (--depth < 0) {
                sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': unbalanced ']'", Q(expr, q));
                return false;
            }
        } else if (c == '\0' || ((c == ',' || isspace((unsigned char)c)) && depth == 0)) {
            if (c == '\0' && depth > 0) {
                sa_error_set(error, SA_ERR_INPUT, 0, "hostlist '%s': unbalanced '['", Q(expr, q));
                return false;
            }
            if (i > start && !expand_one(expr, expr + start, i - start, &budget, max, out, error))
                return false;
            if (c == '\0')
                break;
            start = i + 1;
        }
    }
    return true;
}
