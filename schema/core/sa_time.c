/*
 * sa_time.c - date/time and duration parsing (see sa_time.h).
 *
 * The date/time parser reads the string as a sequence of tokens (a keyword, a
 * clock time, a numeric date), skipping blanks, 'T' and '-' between them as Slurm's
 * parse_time() does, fills a date and a time, and resolves what is missing from now
 * the way sacct does ("past" mode). Unlike parse_time() it refuses a date or time
 * given twice and "now" combined with anything, rather than letting the last win.
 */
#include "sa_time.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sa_model.h" /* SA_UNSET */

#define MAX_NOW_DELTA 1000000000000LL /* digits after now+/now-: ~31,700 years of seconds at most */

bool sa_time_from_fields(int year, int month, int day, int hour, int min, int sec, int64_t *out)
{
    struct tm tm, back;
    time_t t;

    if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
        min < 0 || min > 59 || sec < 0 || sec > 59)
        return false;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    t = timegm(&tm);
    /* timegm normalises 02-30 to 03-02: a real date comes back unchanged */
    if (!gmtime_r(&t, &back) || back.tm_mday != day || back.tm_mon != month - 1 || back.tm_year != year - 1900)
        return false;
    *out = (int64_t)t;
    return true;
}

/* Reads exactly n decimal digits at p into *v. */
static bool fixed_digits(const char *p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i]))
            return false;
        *v = *v * 10 + (p[i] - '0');
    }
    return true;
}

/* The number of decimal digits at p. */
static size_t count_digits(const char *p)
{
    size_t n = 0;
    while (isdigit((unsigned char)p[n]))
        n++;
    return n;
}

/* "YYYY-MM-DDTHH:MM:SS[Z]" -> fields (*utc: it ended with Z); false on any other shape. */
static bool iso_fields(const char *s, int f[6], bool *utc)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t len;

    if (!s)
        return false;
    len = strlen(s);
    if (len != 19 && !(len == 20 && s[19] == 'Z'))
        return false;
    for (size_t i = 0; i < 19; i++) {
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    }
    fixed_digits(s, 4, &f[0]);
    fixed_digits(s + 5, 2, &f[1]);
    fixed_digits(s + 8, 2, &f[2]);
    fixed_digits(s + 11, 2, &f[3]);
    fixed_digits(s + 14, 2, &f[4]);
    fixed_digits(s + 17, 2, &f[5]);
    *utc = len == 20;
    return true;
}

bool sa_time_parse_iso(const char *s, int64_t *out)
{
    int f[6];
    bool utc;
    return iso_fields(s, f, &utc) && sa_time_from_fields(f[0], f[1], f[2], f[3], f[4], f[5], out);
}

bool sa_time_parse_iso_local(const char *s, int64_t *out)
{
    int f[6];
    bool utc;
    if (!iso_fields(s, f, &utc))
        return false;
    return utc ? sa_time_from_fields(f[0], f[1], f[2], f[3], f[4], f[5], out)
               : sa_time_from_local_fields(f[0], f[1], f[2], f[3], f[4], f[5], out);
}

/* ---- a capture's local time ------------------------------------------------------------- */

bool sa_tz_is_utc(const char *zone)
{
    static const char *const names[] = {"UTC", "Etc/UTC", "Z", "Zulu", "Etc/Zulu", "UCT", "Etc/UCT",
                                        "Universal", "Etc/Universal", "GMT", "Etc/GMT", NULL};
    if (!zone || !*zone)
        return true;
    if (*zone == ':')
        zone++;
    for (size_t i = 0; names[i]; i++) {
        if (strcmp(zone, names[i]) == 0)
            return true;
    }
    return false;
}

bool sa_tz_valid(const char *zone, sa_error_t *error)
{
    const char *dir = getenv("TZDIR");
    char path[4096], magic[4];
    FILE *f;
    bool ok;

    if (sa_tz_is_utc(zone))
        return true;
    if (!dir || !*dir)
        dir = "/usr/share/zoneinfo";
    bool name_ok = *zone != '/' && !strstr(zone, "..") && strlen(zone) <= 255;
    for (const char *p = zone; name_ok && *p; p++)
        name_ok = isalnum((unsigned char)*p) || strchr("/_+-", *p);
    if (!name_ok) {
        char q[80];
        sa_error_set(error, SA_ERR_USAGE, 0, "time zone '%s': give a name of the zone database, such as "
                     "Europe/Helsinki", sa_error_quote(zone, 64, q, sizeof q));
        return false;
    }
    snprintf(path, sizeof path, "%s/%s", dir, zone);
    f = fopen(path, "rb");
    ok = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "TZif", 4) == 0;
    if (f)
        fclose(f);
    if (!ok)
        sa_error_set(error, SA_ERR_USAGE, 0, "time zone '%s' is not in the zone database (%s): is tzdata installed?",
                     zone, dir);
    return ok;
}

bool sa_tz_enter(const char *zone, sa_tz_scope_t *scope, sa_error_t *error)
{
    const char *old = getenv("TZ");

    memset(scope, 0, sizeof *scope);
    if (!sa_tz_valid(zone, error))
        return false;
    if (old && !(scope->saved = strdup(old))) {
        sa_error_nomem(error);
        return false;
    }
    if (setenv("TZ", zone, 1) != 0) {
        free(scope->saved);
        scope->saved = NULL;
        sa_error_nomem(error);
        return false;
    }
    tzset();
    scope->active = true;
    return true;
}

void sa_tz_leave(sa_tz_scope_t *scope)
{
    if (!scope->active)
        return;
    if (scope->saved)
        setenv("TZ", scope->saved, 1);
    else
        unsetenv("TZ");
    tzset();
    free(scope->saved);
    scope->saved = NULL;
    scope->active = false;
}

/* The offset from UTC (seconds east) in force at t in the current TZ; false when t cannot be converted. */
static bool utc_offset(int64_t t, int64_t *off)
{
    time_t tt = (time_t)t;
    struct tm lt;
    if (!localtime_r(&tt, &lt))
        return false;
    *off = (int64_t)timegm(&lt) - t;
    return true;
}

/*
 * The fields read as UTC give g; a local time t of them satisfies t + offset(t) = g. The
 * candidates are g minus each offset in force around g (a day before, at g, a day after:
 * zones are within a day of UTC); those that satisfy it are the times the fields name.
 */
bool sa_time_from_local_fields(int year, int month, int day, int hour, int min, int sec, int64_t *out)
{
    int64_t g, before, offs[3], best = 0;
    bool found = false;

    if (!sa_time_from_fields(year, month, day, hour, min, sec, &g))
        return false;
    if (!utc_offset(g - 86400, &offs[0]) || !utc_offset(g, &offs[1]) || !utc_offset(g + 86400, &offs[2]))
        return false;
    before = offs[0];
    for (int i = 0; i < 3; i++) {
        int64_t t = g - offs[i], o;
        if (utc_offset(t, &o) && o == offs[i] && (!found || t < best)) {
            best = t; /* the first occurrence of a repeated time */
            found = true;
        }
    }
    *out = found ? best : g - before; /* a skipped time: the offset in force before the change */
    return true;
}

/* ---- durations ----------------------------------------------------------------------- */

/* Seconds per duration unit letter; 0 for anything else. */
static int64_t unit_seconds(char c)
{
    switch (c) {
    case 's': return 1;
    case 'm': return 60;
    case 'h': return 3600;
    case 'd': return 86400;
    case 'w': return 7 * 86400;
    default: return 0;
    }
}

bool sa_time_parse_duration(const char *s, int64_t *secs, sa_error_t *error)
{
    long long v;
    int64_t mult = 1;
    char *end, q[80];

    if (!s || !isdigit((unsigned char)s[0]))
        goto bad;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        goto bad;
    if (*end && (end[1] != '\0' || (mult = unit_seconds(*end)) == 0))
        goto bad;
    if (v > INT64_MAX / mult)
        goto bad;
    if (secs)
        *secs = (int64_t)v * mult;
    return true;
bad:
    sa_error_set(error, SA_ERR_USAGE, 0, "invalid duration '%s' (use 90, 90s, 15m, 1h, 2d or 1w)",
                 sa_error_quote(s ? s : "", 64, q, sizeof q));
    return false;
}

/* ---- dates and times ------------------------------------------------------------------ */

typedef struct {
    const char *p;           /* the cursor */
    int64_t now;             /* SA_UNSET: relative forms refused */
    int year, month, day;    /* month 0: no date; year 0: no year given */
    int hour, min, sec;      /* hour -1: no time */
    int64_t whole;           /* now[{+|-}N...]: the whole result; SA_UNSET otherwise */
    bool relative;           /* the result depends on now */
    const char *why;         /* what is wrong (static text) */
} tparse_t;

/* True when the word w (lowercase) is at p, case-insensitively, and not followed by a letter. */
static bool word_at(const char *p, const char *w)
{
    size_t n = strlen(w);
    return strncasecmp(p, w, n) == 0 && !isalpha((unsigned char)p[n]);
}

/* Sets the date to that of now + days days. */
static bool set_date_from_now(tparse_t *t, int days)
{
    struct tm tm;
    time_t tt;

    if (t->month) {
        t->why = "a date is given twice";
        return false;
    }
    t->relative = true;
    if (t->now == SA_UNSET)
        return true; /* refused in finish() */
    tt = (time_t)(t->now + (int64_t)days * 86400);
    gmtime_r(&tt, &tm);
    t->year = tm.tm_year + 1900;
    t->month = tm.tm_mon + 1;
    t->day = tm.tm_mday;
    return true;
}

static bool set_time(tparse_t *t, int hour, int min, int sec)
{
    if (t->hour >= 0) {
        t->why = "a time is given twice";
        return false;
    }
    t->hour = hour;
    t->min = min;
    t->sec = sec;
    return true;
}

/* The unit after now+N / now-N: seconds per unit (1 when none), cursor moved past it; 0 when unknown. */
static int64_t now_unit(const char **pp)
{
    static const struct {
        const char *word;
        int64_t secs;
    } units[] = {
        {"seconds", 1},    {"second", 1},    {"minutes", 60}, {"minute", 60}, {"hours", 3600},
        {"hour", 3600},    {"days", 86400},  {"day", 86400},  {"weeks", 604800}, {"week", 604800},
    };
    const char *p = *pp;

    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (word_at(p, units[i].word)) {
            *pp = p + strlen(units[i].word);
            return units[i].secs;
        }
    }
    if (*p && !isalpha((unsigned char)p[1]) && unit_seconds(*p)) {
        *pp = p + 1;
        return unit_seconds(*p);
    }
    return isalpha((unsigned char)*p) ? 0 : 1;
}

/* "now[{+|-}N[unit]]" at the cursor (after the word): the whole string. */
static bool read_now(tparse_t *t)
{
    const char *p = t->p + 3;
    int64_t sign = 1, n = 0, unit = 1;

    if (t->month || t->hour >= 0) {
        t->why = "now cannot be combined with a date or time";
        return false;
    }
    while (isblank((unsigned char)*p))
        p++;
    if (*p == '+' || *p == '-') {
        size_t nd;
        sign = *p++ == '-' ? -1 : 1;
        while (isblank((unsigned char)*p))
            p++;
        if ((nd = count_digits(p)) == 0 || nd > 12) {
            t->why = nd ? "too far from now" : "expected a number after now+ or now-";
            return false;
        }
        n = strtoll(p, NULL, 10);
        p += nd;
        while (isblank((unsigned char)*p))
            p++;
        if (!(unit = now_unit(&p))) {
            t->why = "unknown unit after now+N or now-N (seconds, minutes, hours, days, weeks)";
            return false;
        }
        while (isblank((unsigned char)*p))
            p++;
    }
    if (*p) {
        t->why = "now cannot be combined with a date or time";
        return false;
    }
    if (n > MAX_NOW_DELTA / unit) {
        t->why = "too far from now";
        return false;
    }
    t->relative = true;
    t->whole = t->now == SA_UNSET ? 0 : t->now + sign * n * unit;
    t->p = p;
    return true;
}

/* A keyword at the cursor: 1 when read, 0 when none is there, -1 on error. */
static int read_keyword(tparse_t *t)
{
    static const struct {
        const char *word;
        int days; /* a date: now + days; -1 for a time */
        int hour;
    } words[] = {
        {"today", 0, -1},    {"tomorrow", 1, -1}, {"midnight", -1, 0}, {"noon", -1, 12},
        {"elevenses", -1, 11}, {"fika", -1, 15},  {"teatime", -1, 16},
    };

    if (word_at(t->p, "now"))
        return read_now(t) ? 1 : -1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (!word_at(t->p, words[i].word))
            continue;
        t->p += strlen(words[i].word);
        if (words[i].days >= 0)
            return set_date_from_now(t, words[i].days) ? 1 : -1;
        return set_time(t, words[i].hour, 0, 0) ? 1 : -1;
    }
    return 0;
}

/* "H:MM[:SS] [AM|PM]" at the cursor. */
static bool read_clock(tparse_t *t)
{
    const char *p = t->p, *q;
    int h, mi, sec = 0;
    size_t nh = count_digits(p);

    if (nh < 1 || nh > 2 || !fixed_digits(p, (int)nh, &h) || p[nh] != ':' || count_digits(p + nh + 1) != 2)
        goto bad;
    fixed_digits(p + nh + 1, 2, &mi);
    p += nh + 3;
    if (*p == ':') {
        if (count_digits(p + 1) != 2)
            goto bad;
        fixed_digits(p + 1, 2, &sec);
        p += 3;
    }
    for (q = p; isblank((unsigned char)*q); q++)
        ;
    if (word_at(q, "am") || word_at(q, "pm")) {
        bool pm = tolower((unsigned char)*q) == 'p';
        if (h < 1 || h > 12)
            goto bad;
        h = pm ? (h == 12 ? 12 : h + 12) : (h == 12 ? 0 : h);
        p = q + 2;
    }
    if (h > 23 || mi > 59 || sec > 59)
        goto bad;
    t->p = p;
    return set_time(t, h, mi, sec);
bad:
    t->why = "expected a time HH:MM[:SS] [AM|PM]";
    return false;
}

/* A numeric date at the cursor: YYYY-MM-DD, MMDD[YY], MM/DD[/YY] or MM.DD[.YY]. */
static bool read_date(tparse_t *t)
{
    const char *p = t->p;
    size_t n = count_digits(p);
    int y = 0, mo, d;

    if (n == 4 && p[4] == '-' && count_digits(p + 5) == 2 && p[7] == '-' && count_digits(p + 8) == 2) {
        fixed_digits(p, 4, &y);
        fixed_digits(p + 5, 2, &mo);
        fixed_digits(p + 8, 2, &d);
        p += 10;
    } else if ((n == 4 || n == 6) && p[n] != '/' && p[n] != '.') {
        fixed_digits(p, 2, &mo);
        fixed_digits(p + 2, 2, &d);
        if (n == 6 && fixed_digits(p + 4, 2, &y))
            y += 2000;
        p += n;
    } else if ((n == 1 || n == 2) && (p[n] == '/' || p[n] == '.')) {
        char sep = p[n];
        size_t nd = count_digits(p + n + 1);
        fixed_digits(p, (int)n, &mo);
        if (nd < 1 || nd > 2)
            goto bad;
        fixed_digits(p + n + 1, (int)nd, &d);
        p += n + 1 + nd;
        if (*p == sep) {
            if (count_digits(p + 1) != 2)
                goto bad;
            fixed_digits(p + 1, 2, &y);
            y += 2000;
            p += 3;
        }
    } else {
        goto bad;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31)
        goto bad;
    if (t->month) {
        t->why = "a date is given twice";
        return false;
    }
    t->year = y;
    t->month = mo;
    t->day = d;
    t->relative = t->relative || y == 0;
    t->p = p;
    return true;
bad:
    t->why = "expected a date YYYY-MM-DD, MMDD[YY] or MM/DD[/YY]";
    return false;
}

/* Reads every token of the string. */
static bool read_tokens(tparse_t *t, const char *s)
{
    for (t->p = s; *t->p;) {
        const char *p = t->p;
        int k;
        if ((k = read_keyword(t)) != 0) {
            if (k < 0)
                return false;
        } else if (isblank((unsigned char)*p) || *p == 'T' || *p == '-') {
            t->p++;
        } else if (isdigit((unsigned char)*p)) {
            bool clock = p[1] == ':' || (p[1] && p[2] == ':');
            if (!(clock ? read_clock(t) : read_date(t)))
                return false;
        } else if (*p == 'Z' && p[1] == '\0' && p > s && isdigit((unsigned char)p[-1])) {
            t->p++; /* ISO-8601 UTC designator */
        } else {
            t->why = "unexpected text";
            return false;
        }
    }
    return true;
}

/* Fills what the tokens left out from now and computes the time. */
static bool finish(tparse_t *t, int64_t *out)
{
    struct tm now_tm;
    time_t tt;

    if (t->relative && t->now == SA_UNSET) {
        t->why = "relative to now, which has no meaning here (give YYYY-MM-DD[THH:MM[:SS]])";
        return false;
    }
    if (t->whole != SA_UNSET) {
        *out = t->whole;
        return true;
    }
    if (!t->month && t->hour < 0) {
        t->why = "no date or time";
        return false;
    }
    if (!t->month || !t->year) {
        t->relative = true;
        if (t->now == SA_UNSET) {
            t->why = "relative to now, which has no meaning here (give YYYY-MM-DD[THH:MM[:SS]])";
            return false;
        }
        tt = (time_t)t->now;
        gmtime_r(&tt, &now_tm);
        if (!t->month && !set_date_from_now(t, 0))
            return false;
        if (!t->year)
            t->year = now_tm.tm_year + 1900 - (t->month > now_tm.tm_mon + 1);
    }
    if (t->hour < 0)
        t->hour = t->min = t->sec = 0;
    if (!sa_time_from_fields(t->year, t->month, t->day, t->hour, t->min, t->sec, out)) {
        t->why = "no such date";
        return false;
    }
    return true;
}

bool sa_time_parse(const char *s, int64_t now, int64_t *out, sa_error_t *error)
{
    tparse_t t;
    int64_t v;
    char q[80];

    memset(&t, 0, sizeof t);
    t.now = now;
    t.hour = -1;
    t.whole = SA_UNSET;
    if (!s || !*s)
        t.why = "empty";
    else if (read_tokens(&t, s) && finish(&t, &v)) {
        *out = v;
        return true;
    }
    sa_error_set(error, SA_ERR_USAGE, 0,
                 "invalid time '%s': %s; use YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], HH:MM[:SS], today, "
                 "midnight, noon or now[{+|-}N{seconds|minutes|hours|days|weeks}] (UTC)",
                 sa_error_quote(s ? s : "", 64, q, sizeof q), t.why ? t.why : "not understood");
    return false;
}
