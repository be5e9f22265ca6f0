/*
 * sa_rollup_key.c - the names of the rollup documents (sa_rollup_key.h).
 */
#include "sa_rollup_key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What each kind is called: in an _id after the day (dated kinds) or the cluster (the others). */
static const struct {
    const char *name;   /* sa_rollup_kind_name */
    const char *tag;    /* in the _id */
    bool dated, parted;
} kinds[SA_ROLLUP_K_COUNT] = {
    [SA_ROLLUP_K_ROWS] = {"rows", "r", true, true},
    [SA_ROLLUP_K_MEMBERS] = {"members", "m", true, true},
    [SA_ROLLUP_K_ENDED] = {"ended", "e", true, true},
    [SA_ROLLUP_K_STARTED] = {"started", "s", true, true},
    [SA_ROLLUP_K_OPEN] = {"open", "open", false, true},
    [SA_ROLLUP_K_LIVE] = {"live", "live", false, true},
    [SA_ROLLUP_K_UNTYPED] = {"untyped", "untyped", false, false},
    [SA_ROLLUP_K_WAITING] = {"waiting", "untyped-config", false, false},
    [SA_ROLLUP_K_JOURNAL] = {"journal", "pending", false, false},
    [SA_ROLLUP_K_COMMIT] = {"commit", "commit", false, false},
    [SA_ROLLUP_K_PARTS] = {"parts", "parts", false, false},
};

bool sa_rollup_kind_dated(sa_rollup_kind_t kind)
{
    return kind < SA_ROLLUP_K_COUNT && kinds[kind].dated;
}

bool sa_rollup_kind_parted(sa_rollup_kind_t kind)
{
    return kind < SA_ROLLUP_K_COUNT && kinds[kind].parted;
}

const char *sa_rollup_kind_name(sa_rollup_kind_t kind)
{
    return kind < SA_ROLLUP_K_COUNT ? kinds[kind].name : "?";
}

int64_t sa_rollup_day(int64_t t)
{
    int64_t d = t / SA_DAY;
    if (t % SA_DAY < 0)
        d--;
    return d * SA_DAY;
}

int64_t sa_rollup_month(int64_t t)
{
    time_t tt = (time_t)sa_rollup_day(t);
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return sa_rollup_day(t);
    return sa_rollup_day(t) - (int64_t)(tm.tm_mday - 1) * SA_DAY;
}

sa_rollup_key_t sa_rollup_key(const char *cluster, sa_rollup_kind_t kind, int64_t day, int part)
{
    sa_rollup_key_t k = {cluster, kind, 0, 0};
    if (sa_rollup_kind_dated(kind))
        k.day = sa_rollup_day(day);
    else if (kind == SA_ROLLUP_K_PARTS)
        k.day = sa_rollup_month(day);
    if (sa_rollup_kind_parted(kind))
        k.part = part;
    return k;
}

char *sa_rollup_key_id(const sa_rollup_key_t *k)
{
    size_t n;
    char *s;

    if (k->kind >= SA_ROLLUP_K_COUNT || !k->cluster ||
        (sa_rollup_kind_parted(k->kind) && (k->part < 0 || k->part >= SA_ROLLUP_PARTS)))
        return NULL;
    n = strlen(k->cluster) + 40;
    if (!(s = malloc(n)))
        return NULL;
    if (sa_rollup_kind_dated(k->kind)) {
        time_t tt = (time_t)k->day;
        struct tm tm;
        if (k->day < 0 || k->day > SA_ROLLUP_LAST_DAY || !gmtime_r(&tt, &tm)) {
            free(s);
            return NULL;
        }
        snprintf(s, n, "%s:%04d-%02d-%02d:%s%d", k->cluster, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 kinds[k->kind].tag, k->part);
    } else if (k->kind == SA_ROLLUP_K_PARTS) {
        time_t tt = (time_t)k->day;
        struct tm tm;
        if (k->day < 0 || k->day > SA_ROLLUP_LAST_DAY || !gmtime_r(&tt, &tm)) {
            free(s);
            return NULL;
        }
        snprintf(s, n, "%s:%s:%04d-%02d", k->cluster, kinds[k->kind].tag, tm.tm_year + 1900, tm.tm_mon + 1);
    } else if (sa_rollup_kind_parted(k->kind)) {
        snprintf(s, n, "%s:%s:%d", k->cluster, kinds[k->kind].tag, k->part);
    } else {
        snprintf(s, n, "%s:%s", k->cluster, kinds[k->kind].tag);
    }
    return s;
}

/* Reads a part number (0 .. SA_ROLLUP_PARTS - 1, no sign, no leading zero) that ends the string. */
static bool read_part(const char *p, int *part)
{
    int v = 0;
    if (!*p || (*p == '0' && p[1]))
        return false;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) >= SA_ROLLUP_PARTS)
            return false;
    }
    *part = v;
    return true;
}

/* Reads "YYYY-MM-DD" at p: *day its start; false when it is not a date. */
static bool read_date(const char *p, int64_t *day)
{
    int y, m, d, used = 0;
    struct tm tm;
    if (sscanf(p, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || used != 10 || m < 1 || m > 12 || d < 1 || d > 31)
        return false;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    *day = (int64_t)timegm(&tm);
    return true;
}

bool sa_rollup_key_parse(const char *cluster, const char *id, sa_rollup_key_t *k)
{
    size_t cl = strlen(cluster);
    const char *rest;

    if (strncmp(id, cluster, cl) != 0 || id[cl] != ':')
        return false;
    rest = id + cl + 1;
    *k = (sa_rollup_key_t){cluster, SA_ROLLUP_K_COUNT, 0, 0};
    if (rest[0] >= '0' && rest[0] <= '9' && strlen(rest) > 12 && rest[10] == ':') { /* a day's */
        for (int kind = 0; kind < SA_ROLLUP_K_COUNT; kind++) {
            if (kinds[kind].dated && rest[11] == kinds[kind].tag[0] && read_part(rest + 12, &k->part) &&
                read_date(rest, &k->day)) {
                char *back;
                k->kind = (sa_rollup_kind_t)kind;
                back = sa_rollup_key_id(k); /* one spelling only: 2026-02-30 is no day */
                if (back && strcmp(back, id) == 0) {
                    free(back);
                    return true;
                }
                free(back);
                return false;
            }
        }
        return false;
    }
    if (strncmp(rest, "parts:", 6) == 0) { /* "parts:YYYY-MM" */
        char date[16];
        char *back;
        bool ok;
        if (strlen(rest + 6) != 7)
            return false;
        snprintf(date, sizeof date, "%s-01", rest + 6);
        if (!read_date(date, &k->day))
            return false;
        k->kind = SA_ROLLUP_K_PARTS;
        back = sa_rollup_key_id(k);
        ok = back && strcmp(back, id) == 0;
        free(back);
        return ok;
    }
    for (int kind = 0; kind < SA_ROLLUP_K_COUNT; kind++) {
        size_t tl = strlen(kinds[kind].tag);
        if (kinds[kind].dated || kind == SA_ROLLUP_K_PARTS || strncmp(rest, kinds[kind].tag, tl) != 0)
            continue;
        if (kinds[kind].parted ? rest[tl] == ':' && read_part(rest + tl + 1, &k->part) : rest[tl] == '\0') {
            k->kind = (sa_rollup_kind_t)kind;
            return true;
        }
    }
    return false;
}

int sa_rollup_key_cmp(const sa_rollup_key_t *a, const sa_rollup_key_t *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->day != b->day)
        return a->day < b->day ? -1 : 1;
    return a->part < b->part ? -1 : a->part > b->part;
}

bool sa_rollup_key_eq(const sa_rollup_key_t *a, const sa_rollup_key_t *b)
{
    return sa_rollup_key_cmp(a, b) == 0;
}

bool sa_rollup_key_part_ids(sa_strv_t *ids, const char *cluster, sa_rollup_kind_t kind, int64_t day, uint64_t mask,
                            sa_error_t *error)
{
    for (int part = 0; part < SA_ROLLUP_PARTS; part++) {
        sa_rollup_key_t k = sa_rollup_key(cluster, kind, day, part);
        char *id;
        bool ok;
        if (!(mask >> part & 1))
            continue;
        id = sa_rollup_key_id(&k);
        ok = id && sa_strv_push(ids, id);
        free(id);
        if (!ok)
            return sa_error_nomem(error);
    }
    return true;
}

/* The slot of a dated kind in a parts index (rows go with their members), or -1. */
static int parts_slot(sa_rollup_kind_t kind)
{
    switch (kind) {
    case SA_ROLLUP_K_ROWS:
    case SA_ROLLUP_K_MEMBERS: return 0;
    case SA_ROLLUP_K_ENDED: return 1;
    case SA_ROLLUP_K_STARTED: return 2;
    default: return -1;
    }
}

bool sa_rollup_parts_set(sa_rollup_parts_t *p, sa_rollup_kind_t kind, int64_t day, int part)
{
    int slot = parts_slot(kind);
    int64_t d = (sa_rollup_day(day) - sa_rollup_month(day)) / SA_DAY;
    if (slot < 0 || d < 0 || d >= 31 || part < 0 || part >= SA_ROLLUP_PARTS)
        return false;
    p->mask[slot][d] |= (uint64_t)1 << part;
    return true;
}

uint64_t sa_rollup_parts_of(const sa_rollup_parts_t *p, sa_rollup_kind_t kind, int64_t day)
{
    int slot = parts_slot(kind);
    int64_t d = (sa_rollup_day(day) - sa_rollup_month(day)) / SA_DAY;
    return slot < 0 || d < 0 || d >= 31 ? 0 : p->mask[slot][d];
}

bool sa_rollup_parts_covers(const sa_rollup_parts_t *a, const sa_rollup_parts_t *b)
{
    for (int k = 0; k < SA_ROLLUP_PARTS_KINDS; k++) {
        for (int d = 0; d < 31; d++) {
            if (b->mask[k][d] & ~a->mask[k][d])
                return false;
        }
    }
    return true;
}

/* The job id a job document _id names (0 when none). */
static int64_t id_job(const char *id)
{
    const char *p = strchr(id, ':');
    return p ? strtoll(p + 1, NULL, 10) : 0;
}

int sa_rollup_part_of(const char *id)
{
    int64_t job = id_job(id);
    return job <= 0 ? 0 : (int)(job / SA_ROLLUP_PART_BLOCK % SA_ROLLUP_PARTS);
}

bool sa_rollup_is_jobs_id(const char *cluster, const char *id)
{
    size_t n = strlen(cluster);
    if (strncmp(id, cluster, n) != 0 || id[n] != ':' || !id[n + 1])
        return false;
    for (const char *p = id + n + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return false; /* jobs_superseded's ":<submit>", or not a job id */
    }
    return true;
}

int sa_rollup_id_job_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int64_t jx = id_job(x), jy = id_job(y);
    return jx != jy ? (jx < jy ? -1 : 1) : strcmp(x, y);
}
