/*
 * sa_slurmtext.c - the small text encodings of Slurm's command line tools: sacct
 * dates and durations, text node states, integers and "rc:sig" exit codes
 * (see sa_slurmtext.h).
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "sa_slurmtext.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sa_time.h"

#define QUOTE_MAX 64

/* Quotes s for an error message (a static-free helper: the buffer is the caller's). */
#define Q(s, buf) sa_error_quote((s), QUOTE_MAX, (buf), sizeof(buf))

/* True if s is one of the words sacct prints for "no date" ("Unknown", "None", ...). */
static bool is_no_value(const char *s)
{
    static const char *const words[] = {"Unknown", "None", "N/A", "(null)", NULL};

    if (!s || !*s)
        return true;
    for (size_t i = 0; words[i]; i++) {
        if (strcasecmp(s, words[i]) == 0)
            return true;
    }
    return false;
}

/* strtoll with the checks: no leading blank, nothing after the digits, no overflow. */
bool sa_parse_int64(const char *s, int64_t *out)
{
    char *end = NULL;
    long long v;

    if (!s || !*s || isspace((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = (int64_t)v;
    return true;
}

/* True if s[0..n) are all decimal digits (and n > 0). */
static bool all_digits(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
    }
    return true;
}

/*
 * Parses the date "YYYY-MM-DDTHH:MM:SS" (optionally followed by "Z") as UTC: exactly
 * the form Slurm prints (sa_time_parse_iso() of schema/core/sa_time.h), or a no-value word.
 */
bool sa_time_parse_text(const char *s, int64_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];

    *out = SA_UNSET;
    if (is_no_value(s) || sa_time_parse_iso(s, out))
        return true;
    sa_error_set(error, SA_ERR_INPUT, 0, "expected a date YYYY-MM-DDTHH:MM:SS, got '%s'", Q(s, q));
    return false;
}

bool sa_time_parse_text_local(const char *s, int64_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];

    *out = SA_UNSET;
    if (is_no_value(s) || sa_time_parse_iso_local(s, out))
        return true;
    sa_error_set(error, SA_ERR_INPUT, 0, "expected a date YYYY-MM-DDTHH:MM:SS, got '%s'", Q(s, q));
    return false;
}

/* Parses n digits at s into *v (at most 9 digits, so no overflow). */
static bool small_number(const char *s, size_t n, int64_t *v)
{
    int64_t x = 0;

    if (!all_digits(s, n) || n > 9)
        return false;
    for (size_t i = 0; i < n; i++)
        x = x * 10 + (s[i] - '0');
    *v = x;
    return true;
}

/*
 * Durations as Slurm prints and accepts them (time_str2secs): "M", "M:S", "H:M:S",
 * "D-H", "D-H:M", "D-H:M:S"; the seconds may carry a fraction ("00:15.057"), which is
 * dropped. "UNLIMITED" -> SA_INFINITE; "", "INVALID", "Partition_Limit", "NONE",
 * "N/A", "Unknown" -> SA_UNSET.
 */
bool sa_duration_parse(const char *s, int64_t *out, sa_error_t *error)
{
    static const char *const unset_words[] = {"INVALID", "Partition_Limit", "NONE", "N/A", "Unknown", NULL};
    int64_t days = 0, part[3] = {0, 0, 0};
    size_t nparts = 0;
    const char *p, *dash, *end;
    char q[QUOTE_MAX + 8];
    bool has_days = false;

    *out = SA_UNSET;
    if (!s || !*s)
        return true;
    if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0) {
        *out = SA_INFINITE;
        return true;
    }
    for (size_t i = 0; unset_words[i]; i++) {
        if (strcasecmp(s, unset_words[i]) == 0)
            return true;
    }
    p = s;
    end = s + strlen(s);
    dash = strchr(s, '-');
    if (dash) {
        if (!small_number(s, (size_t)(dash - s), &days))
            goto bad;
        has_days = true;
        p = dash + 1;
    }
    /* split the rest on ':'; the last part may have a fraction */
    for (;;) {
        const char *colon = strchr(p, ':');
        const char *stop = colon ? colon : end;
        const char *dot = memchr(p, '.', (size_t)(stop - p));
        size_t n = (size_t)((dot ? dot : stop) - p);

        if (nparts == 3 || !small_number(p, n, &part[nparts]))
            goto bad;
        if (dot && (colon || has_days || !all_digits(dot + 1, (size_t)(stop - dot - 1))))
            goto bad;
        nparts++;
        if (!colon)
            break;
        p = colon + 1;
    }
    if (has_days) {
        /* D-H, D-H:M, D-H:M:S */
        *out = days * 86400 + part[0] * 3600 + (nparts > 1 ? part[1] * 60 : 0) + (nparts > 2 ? part[2] : 0);
    } else if (nparts == 1) {
        *out = part[0] * 60; /* minutes */
    } else if (nparts == 2) {
        *out = part[0] * 60 + part[1];
    } else {
        *out = part[0] * 3600 + part[1] * 60 + part[2];
    }
    return true;
bad:
    sa_error_set(error, SA_ERR_INPUT, 0, "expected a duration [D-]HH:MM:SS, got '%s'", Q(s, q));
    return false;
}

bool sa_cputime_parse(const char *s, double *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    const char *dot;
    int64_t whole;
    double frac = 0;

    *out = -1;
    if (!s || !*s)
        return true;
    if (!isdigit((unsigned char)s[0]) || !strchr(s, ':') || !sa_duration_parse(s, &whole, NULL) ||
        whole == SA_UNSET || whole == SA_INFINITE)
        goto bad;
    if ((dot = strchr(s, '.'))) {
        char buf[16] = "0";
        size_t n = strlen(dot);
        if (n < 2 || n > 10)
            goto bad;
        memcpy(buf + 1, dot, n + 1);
        frac = strtod(buf, NULL);
    }
    *out = (double)whole + frac;
    return true;
bad:
    sa_error_set(error, SA_ERR_INPUT, 0, "expected a CPU time [D-]HH:MM:SS or MM:SS.mmm, got '%s'", Q(s, q));
    return false;
}

/* ---- node states ------------------------------------------------------------- */

/* Words sinfo/scontrol print (compact and long forms, lower case) -> base + flag. */
typedef struct {
    const char *word;
    const char *base;
    const char *flag; /* may be NULL */
} state_word_t;

static const state_word_t state_words[] = {
    {"idle", "IDLE", NULL},
    {"alloc", "ALLOCATED", NULL},
    {"allocated", "ALLOCATED", NULL},
    {"mix", "MIXED", NULL},
    {"mixed", "MIXED", NULL},
    {"down", "DOWN", NULL},
    {"err", "ERROR", NULL},
    {"error", "ERROR", NULL},
    {"futr", "FUTURE", NULL},
    {"future", "FUTURE", NULL},
    {"unk", "UNKNOWN", NULL},
    {"unknown", "UNKNOWN", NULL},
    {"inval", "INVALID", NULL},
    {"invalid", "INVALID", NULL},
    /* derived words: a flag shown instead of the base */
    {"drain", "IDLE", "DRAIN"},
    {"drained", "IDLE", "DRAIN"},
    {"drng", "ALLOCATED", "DRAIN"},
    {"draining", "ALLOCATED", "DRAIN"},
    {"comp", "IDLE", "COMPLETING"},
    {"completing", "IDLE", "COMPLETING"},
    {"fail", "IDLE", "FAIL"},
    {"failing", "ALLOCATED", "FAIL"},
    {"failg", "ALLOCATED", "FAIL"},
    {"maint", "IDLE", "MAINTENANCE"},
    {"maintenance", "IDLE", "MAINTENANCE"},
    {"resv", "IDLE", "RESERVED"},
    {"reserved", "IDLE", "RESERVED"},
    {"plnd", "IDLE", "PLANNED"},
    {"planned", "IDLE", "PLANNED"},
    {"blocked", "IDLE", "BLOCKED"},
    {"npc", "ALLOCATED", "PERFCTRS"},
    {"perfctrs", "ALLOCATED", "PERFCTRS"},
    {"boot", "IDLE", "REBOOT_ISSUED"},
    {"reboot_issued", "IDLE", "REBOOT_ISSUED"},
    {"reboot_requested", "IDLE", "REBOOT_REQUESTED"},
    {"pow_dn", "IDLE", "POWERED_DOWN"},
    {"powered_down", "IDLE", "POWERED_DOWN"},
    {"pow_up", "IDLE", "POWERING_UP"},
    {"powering_up", "IDLE", "POWERING_UP"},
    {"powering_down", "IDLE", "POWERING_DOWN"},
    {NULL, NULL, NULL},
};

/* The flag a trailing sinfo suffix character stands for, or NULL. */
static const char *suffix_flag(char c)
{
    switch (c) {
    case '*':
        return "NOT_RESPONDING";
    case '~':
        return "POWERED_DOWN";
    case '#':
        return "POWERING_UP";
    case '%':
        return "POWERING_DOWN";
    case '!':
        return "POWER_DOWN";
    case '@':
        return "REBOOT_REQUESTED";
    case '^':
        return "REBOOT_ISSUED";
    case '-':
        return "PLANNED";
    case '$':
        return "MAINTENANCE";
    }
    return NULL;
}

/* Upper-cases a copy of s[0..n). Caller frees; NULL on OOM. */
static char *upper_dup(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)toupper((unsigned char)s[i]);
    out[n] = '\0';
    return out;
}

/* Sets the base of *st (replacing any) to a copy of base. */
static bool state_set_base(sa_state_t *st, const char *base)
{
    char *copy = strdup(base);
    if (!copy)
        return false;
    free(st->base);
    st->base = copy;
    return true;
}

/*
 * "IDLE+DRAIN", "idle~", "down*", "drained", "MIXED+DRAIN": the first word is the
 * base (sinfo's derived words expand to base + flag), the others are flags; trailing
 * suffix characters add their flags. Unknown words are kept upper-cased.
 */
bool sa_node_state_parse_text(const char *s, sa_state_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    size_t len, i, start;
    bool first = true;

    if (!s || !*s)
        return true;
    len = strlen(s);
    /* suffix characters: only at the end */
    while (len > 0 && suffix_flag(s[len - 1])) {
        if (!sa_strv_add_sorted_unique(&out->flags, suffix_flag(s[len - 1])))
            goto oom;
        len--;
    }
    if (len == 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "node state '%s' has no word", Q(s, q));
        return false;
    }
    for (start = 0, i = 0; i <= len; i++) {
        char *word;
        const state_word_t *w = NULL;

        if (i < len && s[i] != '+')
            continue;
        if (i == start) {
            sa_error_set(error, SA_ERR_INPUT, 0, "node state '%s' has an empty word", Q(s, q));
            return false;
        }
        for (size_t k = start; k < i; k++) {
            unsigned char c = (unsigned char)s[k];
            if (!(isalnum(c) || c == '_')) {
                sa_error_set(error, SA_ERR_INPUT, 0, "node state '%s': unexpected character '%c'", Q(s, q),
                             isprint(c) ? (char)c : '?');
                return false;
            }
        }
        word = upper_dup(s + start, i - start);
        if (!word)
            goto oom;
        if (first) {
            for (size_t k = 0; state_words[k].word; k++) {
                if (strlen(state_words[k].word) == i - start &&
                    strncasecmp(state_words[k].word, s + start, i - start) == 0) {
                    w = &state_words[k];
                    break;
                }
            }
            if (!state_set_base(out, w ? w->base : word) ||
                (w && w->flag && !sa_strv_add_sorted_unique(&out->flags, w->flag))) {
                free(word);
                goto oom;
            }
            first = false;
        } else if (!sa_strv_add_sorted_unique(&out->flags, word)) {
            free(word);
            goto oom;
        }
        free(word);
        start = i + 1;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/* "rc:sig" with 0 <= rc, sig <= 255. */
bool sa_exitcode_parse_text(const char *s, int *rc, int *sig, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    const char *colon;
    int64_t a, b;

    if (!s || !(colon = strchr(s, ':')))
        goto bad;
    if (!small_number(s, (size_t)(colon - s), &a) || !small_number(colon + 1, strlen(colon + 1), &b))
        goto bad;
    if (a > 255 || b > 255)
        goto bad;
    *rc = (int)a;
    *sig = (int)b;
    return true;
bad:
    sa_error_set(error, SA_ERR_INPUT, 0, "expected an exit code rc:signal, got '%s'", Q(s ? s : "", q));
    return false;
}
