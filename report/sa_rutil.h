/*
 * sa_rutil.h - small helpers of slurm-report: comma lists, string interning, times,
 * durations and printf into a new string.
 *
 * Times are seconds since the epoch, UTC, as everywhere in slurm-archive; the report
 * prints them as ISO-8601 with a Z (sa_time_format of schema/core/sa_model.h).
 */
#ifndef SA_RUTIL_H
#define SA_RUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_map.h"
#include "sa_error.h"
#include "sa_model.h"

/* Appends the non-empty, blank-trimmed items of a comma-separated list to out. */
bool sa_rlist_split(const char *s, sa_strv_t *out);
/* True if the comma-separated list s is empty or holds an empty (or blank) item: "", "cpu,,mem", "a,". */
bool sa_rlist_has_empty(const char *s);

/* printf into a new string (caller frees); NULL on out of memory. */
char *sa_rprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parses an absolute UTC time (sa_time_parse() of schema/core/sa_time.h without a "now":
 * YYYY-MM-DD[Thh:mm[:ss]][Z], MM/DD/YY, ...). Fails on a relative time ("today"),
 * anything else, or an impossible date (2026-02-30). For files (awards).
 */
bool sa_rtime_parse(const char *s, int64_t *t);

/* The calendar month "YYYY-MM" as the window [*start, *end). */
bool sa_rmonth_parse(const char *s, int64_t *start, int64_t *end);

/* Start of the calendar month (UTC) that holds t, and that month moved by n months. */
int64_t sa_rmonth_floor(int64_t t);
int64_t sa_rmonth_add(int64_t month_start, int n);

/*
 * The buckets the reports draw a window [start, end) over time in: UTC days, or hours when
 * the window is at most SA_RBUCKET_HOURS_MAX long; the first and the last clipped to the
 * window. *bounds (caller frees) gets the n + 1 bounds; returns n (0 for an empty window,
 * SIZE_MAX on out of memory). *step gets 86400 or 3600.
 */
#define SA_RBUCKET_HOURS_MAX (3 * 86400)
size_t sa_rbuckets(int64_t start, int64_t end, int64_t **bounds, int64_t *step);
/* The index of the bucket holding t in bounds[0..n] (SIZE_MAX: outside). */
size_t sa_rbucket_of(const int64_t *bounds, size_t n, int64_t t);

/* "YYYY-MM" of the month that holds t, into buf (>= 8 bytes). */
const char *sa_rmonth_label(int64_t t, char *buf, size_t bufsz);

/* Parses a duration > 0 (sa_time_parse_duration(): "90", "90s", "30m", "1h", "2d", "1w"). */
bool sa_rduration_parse(const char *s, int64_t *secs);

/* Splits s at blanks into lines of at most width characters (a longer word alone), appended to out. */
void sa_rwrap(const char *s, size_t width, sa_strv_t *out);

/* ---- interning: each distinct string gets a small id (0, 1, 2, ...) ---------- */

typedef struct {
    char **strs;     /* id -> string (owned) */
    uint32_t n;
    size_t cap;
    sa_map_t map;    /* string -> id */
} sa_rintern_t;

void sa_rintern_init(sa_rintern_t *in);
void sa_rintern_clear(sa_rintern_t *in);
/* The id of s (len bytes, not necessarily NUL-terminated), adding it if new; UINT32_MAX on OOM. */
uint32_t sa_rintern_n(sa_rintern_t *in, const char *s, size_t len);
uint32_t sa_rintern(sa_rintern_t *in, const char *s);
/* The id of s if interned, else UINT32_MAX. */
uint32_t sa_rintern_find(const sa_rintern_t *in, const char *s);
static inline const char *sa_rintern_str(const sa_rintern_t *in, uint32_t id)
{
    return id < in->n ? in->strs[id] : "";
}

/* ISO-8601 of t ("" for SA_UNSET) in a static rotating buffer (8 live at once). */
const char *sa_riso(int64_t t);
/* A job id of digits only, s[0..len), into *id; false when it is not one (0, past SA_JOB_ID_MAX, too long). */
bool sa_rjob_id_digits(const char *s, size_t len, int64_t *id);
/* seconds -> "[D-]HH:MM:SS" (sacct's Elapsed, seff's times) into buf; returns buf. */
const char *sa_rhms(int64_t s, char *buf, size_t n);

#endif
