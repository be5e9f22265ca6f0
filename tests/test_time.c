/*
 * test_time.c - schema/core/sa_time.h: the date/time parser (sacct's forms, UTC, with
 * "now" injected), the strict ISO form, and durations. Table-driven: each case is
 * an input, the now it is read at, and the expected time (written as a UTC
 * calendar time, converted here with timegm, independently of the code under test).
 */
#define _GNU_SOURCE /* strptime */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_time.h"

/* Thursday 2026-10-15 14:30:45 UTC: the "now" of the cases that give none. */
#define NOW_TEXT "2026-10-15T14:30:45"

/* "YYYY-MM-DDTHH:MM:SS" (UTC) as epoch seconds, with libc only. */
static int64_t utc(const char *s)
{
    struct tm tm;
    const char *end;

    memset(&tm, 0, sizeof tm);
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || *end)
        fail_msg("bad expected time '%s' in the test table", s);
    return (int64_t)timegm(&tm);
}

/* ---- dates and times ---------------------------------------------------------------- */

static const struct {
    const char *in;
    const char *want; /* UTC */
    const char *now;  /* NULL: NOW_TEXT */
} good_times[] = {
    /* YYYY-MM-DD[THH:MM[:SS]] and the ISO Z */
    {"2026-10-05", "2026-10-05T00:00:00", NULL},
    {"2026-10-05T06:07", "2026-10-05T06:07:00", NULL},
    {"2026-10-05T06:07:08", "2026-10-05T06:07:08", NULL},
    {"2026-10-05 06:07:08", "2026-10-05T06:07:08", NULL},
    {"2026-10-05T06:07:08Z", "2026-10-05T06:07:08", NULL},
    {"2026-10-05Z", "2026-10-05T00:00:00", NULL},
    {"2024-02-29T23:59:59", "2024-02-29T23:59:59", NULL},
    {"1970-01-01T00:00:00", "1970-01-01T00:00:00", NULL},
    {"2031-12-31", "2031-12-31T00:00:00", NULL}, /* the future is allowed */
    /* MMDD[YY], MM/DD[/YY], MM.DD[.YY]; without a year: this year, or last year for a later month */
    {"1005", "2026-10-05T00:00:00", NULL},
    {"1020", "2026-10-20T00:00:00", NULL}, /* same month, later day: this year (as sacct) */
    {"1105", "2025-11-05T00:00:00", NULL},
    {"100525", "2025-10-05T00:00:00", NULL},
    {"10/05", "2026-10-05T00:00:00", NULL},
    {"1/5", "2026-01-05T00:00:00", NULL},
    {"12/31", "2025-12-31T00:00:00", NULL},
    {"10/05/24", "2024-10-05T00:00:00", NULL},
    {"10.05.24", "2024-10-05T00:00:00", NULL},
    {"1231", "2025-12-31T00:00:00", "2026-01-10T08:00:00"},
    {"0110", "2026-01-10T00:00:00", "2026-01-10T08:00:00"},
    /* a date with a time */
    {"10/05-06:07", "2026-10-05T06:07:00", NULL},
    {"1005-06:07:08", "2026-10-05T06:07:08", NULL},
    {"10/05/24 6:07pm", "2024-10-05T18:07:00", NULL},
    /* a time alone: today, even later than now */
    {"06:07", "2026-10-15T06:07:00", NULL},
    {"6:07:08", "2026-10-15T06:07:08", NULL},
    {"16:00", "2026-10-15T16:00:00", NULL},
    {"6:07pm", "2026-10-15T18:07:00", NULL},
    {"12:00am", "2026-10-15T00:00:00", NULL},
    {"12:30 PM", "2026-10-15T12:30:00", NULL},
    {"11:59 am", "2026-10-15T11:59:00", NULL},
    /* keywords */
    {"today", "2026-10-15T00:00:00", NULL},
    {"Today", "2026-10-15T00:00:00", NULL},
    {"TOMORROW", "2026-10-16T00:00:00", NULL},
    {"tomorrow", "2026-11-01T00:00:00", "2026-10-31T23:59:59"},
    {"midnight", "2026-10-15T00:00:00", NULL},
    {"noon", "2026-10-15T12:00:00", NULL},
    {"elevenses", "2026-10-15T11:00:00", NULL},
    {"fika", "2026-10-15T15:00:00", NULL},
    {"teatime", "2026-10-15T16:00:00", NULL},
    {"tomorrow noon", "2026-10-16T12:00:00", NULL},
    {"noon tomorrow", "2026-10-16T12:00:00", NULL},
    {"2026-10-01T teatime", "2026-10-01T16:00:00", NULL},
    {"2026-10-01 midnight", "2026-10-01T00:00:00", NULL},
    {"today 06:07", "2026-10-15T06:07:00", NULL},
    /* now[{+|-}N[unit]] */
    {"now", NOW_TEXT, NULL},
    {"NOW", NOW_TEXT, NULL},
    {"now-90", "2026-10-15T14:29:15", NULL},
    {"now+30seconds", "2026-10-15T14:31:15", NULL},
    {"now-1second", "2026-10-15T14:30:44", NULL},
    {"now+5minutes", "2026-10-15T14:35:45", NULL},
    {"now-1minute", "2026-10-15T14:29:45", NULL},
    {"now+1hour", "2026-10-15T15:30:45", NULL},
    {"now-3hours", "2026-10-15T11:30:45", NULL},
    {"now-7days", "2026-10-08T14:30:45", NULL},
    {"now-1DAY", "2026-10-14T14:30:45", NULL},
    {"now-2weeks", "2026-10-01T14:30:45", NULL},
    {"now+1week", "2026-10-22T14:30:45", NULL},
    {"now - 2 days", "2026-10-13T14:30:45", NULL},
    {"now-3d", "2026-10-12T14:30:45", NULL},
    {"now-15m", "2026-10-15T14:15:45", NULL},
    {"now-2h", "2026-10-15T12:30:45", NULL},
    {"now-1w", "2026-10-08T14:30:45", NULL},
    {"now-10s", "2026-10-15T14:30:35", NULL},
};

static void test_time_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good_times / sizeof good_times[0]; i++) {
        int64_t now = utc(good_times[i].now ? good_times[i].now : NOW_TEXT), got = -1, want = utc(good_times[i].want);
        sa_error_t err;
        sa_error_clear(&err);
        if (!sa_time_parse(good_times[i].in, now, &got, &err))
            fail_msg("'%s': %s", good_times[i].in, err.message);
        if (got != want) {
            char buf[32];
            fail_msg("'%s' gave %s, want %s", good_times[i].in, sa_time_format(got, buf, sizeof buf),
                     good_times[i].want);
        }
    }
}

static const struct {
    const char *in;
    const char *why; /* part of the message */
} bad_times[] = {
    {"", "empty"},
    {"yesterday", "unexpected text"},
    {"next week", "unexpected text"},
    {"2026-02-30", "no such date"},
    {"2025-02-29", "no such date"},
    {"2026-13-01", "expected a date"},
    {"2026-10-05T25:00", "expected a time"},
    {"2026-10-05T10:60", "expected a time"},
    {"2026-10-05T10:00:60", "expected a time"},
    {"2026-10-05T10:00+02:00", "unexpected text"},
    {"2026-10-05T10", "expected a date"},
    {"2026-9-5", "expected a date"},
    {"20261005", "expected a date"},
    {"10/32", "expected a date"},
    {"1305", "expected a date"},
    {"0230", "no such date"},
    {"10/5/2025", "expected a date"},
    {"2026-10-05 1006", "a date is given twice"},
    {"today tomorrow", "a date is given twice"},
    {"10:00 11:00", "a time is given twice"},
    {"noon teatime", "a time is given twice"},
    {"13:00pm", "expected a time"},
    {"0:30am", "expected a time"},
    {"now-", "expected a number"},
    {"now-x", "expected a number"},
    {"now-5x", "unknown unit"},
    {"now-5years", "unknown unit"},
    {"now-5 days later", "cannot be combined"},
    {"now noon", "cannot be combined"},
    {"today now", "cannot be combined"},
    {"now-1234567890123", "too far"},
    {"now-999999999999weeks", "too far"},
    {"nowish", "unexpected text"},
    {"2026-10-05Q", "unexpected text"},
    {"Z", "unexpected text"},
    {"noonZ", "unexpected text"},
};

static void test_time_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; i++) {
        int64_t got = 42;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_time_parse(bad_times[i].in, utc(NOW_TEXT), &got, &err))
            fail_msg("'%s' parsed (as %lld)", bad_times[i].in, (long long)got);
        assert_int_equal(got, 42);
        assert_int_equal(err.domain, SA_ERR_USAGE);
        if (!strstr(err.message, bad_times[i].why) || !strstr(err.message, "invalid time '"))
            fail_msg("'%s': message '%s' lacks '%s'", bad_times[i].in, err.message, bad_times[i].why);
    }
    assert_false(sa_time_parse(NULL, utc(NOW_TEXT), &(int64_t){0}, NULL));
}

/* Without a now (SA_UNSET) only absolute times are accepted. */
static void test_time_no_now(void **state)
{
    static const char *const relative[] = {"now", "now-1day", "today", "tomorrow noon", "10:00", "noon", "1005",
                                           "10/05"};
    static const struct {
        const char *in, *want;
    } absolute[] = {
        {"2026-10-05", "2026-10-05T00:00:00"},
        {"2026-10-05T06:07:08Z", "2026-10-05T06:07:08"},
        {"10/05/26", "2026-10-05T00:00:00"},
        {"100526-06:07", "2026-10-05T06:07:00"},
        {"2026-10-05 noon", "2026-10-05T12:00:00"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
        int64_t t;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_time_parse(relative[i], SA_UNSET, &t, &err))
            fail_msg("'%s' parsed without a now", relative[i]);
        if (!strstr(err.message, "relative to now"))
            fail_msg("'%s': %s", relative[i], err.message);
    }
    for (size_t i = 0; i < sizeof absolute / sizeof absolute[0]; i++) {
        int64_t t = 0;
        sa_error_t err;
        if (!sa_time_parse(absolute[i].in, SA_UNSET, &t, &err))
            fail_msg("'%s': %s", absolute[i].in, err.message);
        assert_int_equal(t, utc(absolute[i].want));
    }
}

/* Exactly the form Slurm prints. */
static void test_time_iso(void **state)
{
    static const char *const bad[] = {"2026-11-25", "2026-11-25 21:37:49", "2026-11-25T21:37", " 2026-11-25T21:37:49",
                                      "2026-11-25T21:37:49+01", "2026-02-30T00:00:00", "2026-11-25T24:00:00",
                                      "2026-11-25T21:37:49ZZ", "now", ""};
    int64_t t = 0;
    (void)state;
    assert_true(sa_time_parse_iso("2026-11-25T21:37:49", &t));
    assert_int_equal(t, 1795642669);
    assert_true(sa_time_parse_iso("2026-11-25T21:37:49Z", &t));
    assert_int_equal(t, 1795642669);
    assert_true(sa_time_parse_iso("1969-12-31T23:59:59", &t));
    assert_int_equal(t, -1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (sa_time_parse_iso(bad[i], &t))
            fail_msg("'%s' parsed", bad[i]);
    }
    assert_false(sa_time_parse_iso(NULL, &t));
    assert_true(sa_time_from_fields(2024, 2, 29, 0, 0, 0, &t));
    assert_false(sa_time_from_fields(2023, 2, 29, 0, 0, 0, &t));
    assert_false(sa_time_from_fields(10000, 1, 1, 0, 0, 0, &t));
    assert_false(sa_time_from_fields(2026, 4, 31, 0, 0, 0, &t));
}

/* ---- durations ------------------------------------------------------------------------ */

static void test_durations(void **state)
{
    static const struct {
        const char *in;
        int64_t secs;
    } good[] = {
        {"0", 0},           {"90", 90},        {"90s", 90},    {"15m", 900},
        {"1h", 3600},       {"2d", 172800},    {"1w", 604800}, {"007s", 7},
        {"9223372036854775807", INT64_MAX},    {"15250284452471w", INT64_C(15250284452471) * 604800},
    };
    static const char *const bad[] = {"",    "s",   "-5",  "+5",  " 5",   "5 ", "5 m", "1.5h", "5mm", "5M",
                                      "5W",  "5S",  "0x10", "1e3", "2y",  "h1", "9223372036854775808",
                                      "15250284452472w", "9223372036854775807s0"};
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t v = -1;
        sa_error_t err;
        if (!sa_time_parse_duration(good[i].in, &v, &err))
            fail_msg("'%s': %s", good[i].in, err.message);
        assert_int_equal(v, good[i].secs);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 42;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_time_parse_duration(bad[i], &v, &err))
            fail_msg("'%s' parsed as %lld", bad[i], (long long)v);
        assert_int_equal(v, 42);
        assert_int_equal(err.domain, SA_ERR_USAGE);
    }
    sa_error_t err;
    assert_false(sa_time_parse_duration("5y", NULL, &err));
    assert_string_equal(err.message, "invalid duration '5y' (use 90, 90s, 15m, 1h, 2d or 1w)");
    assert_false(sa_time_parse_duration(NULL, NULL, &err));
    assert_true(sa_time_parse_duration("2w", NULL, NULL));
}

/* The zone database has zone (tzdata installed); else the case is skipped, saying why. */
static void require_zone(const char *zone)
{
    if (!sa_tz_valid(zone, NULL)) {
        printf("  skipped: %s is not in the zone database (install tzdata)\n", zone);
        skip();
    }
}

/* Reads text as local time in zone (sa_tz_enter / sa_tz_leave around it). */
static int64_t local_in(const char *zone, const char *text)
{
    sa_tz_scope_t scope;
    sa_error_t err;
    int64_t t = INT64_MIN;
    bool ok;
    if (!sa_tz_enter(zone, &scope, &err))
        fail_msg("%s: %s", zone, err.message);
    ok = sa_time_parse_iso_local(text, &t);
    sa_tz_leave(&scope);
    if (!ok)
        fail_msg("%s in %s: not read", text, zone);
    return t;
}

/*
 * Local time through the C library's zone database: a plain offset (Sao Paulo, UTC-3 since
 * 2019), summer and winter time (Helsinki), the hour skipped in spring (read with the offset
 * before the change) and the hour repeated in autumn (its first occurrence); TZ is put back.
 */
static void test_local_time(void **state)
{
    sa_tz_scope_t scope;
    sa_error_t err;
    int64_t t;
    (void)state;
    require_zone("America/Sao_Paulo");
    require_zone("Europe/Helsinki");
    setenv("TZ", "Asia/Tokyo", 1);
    assert_int_equal(local_in("America/Sao_Paulo", "2024-03-01T09:00:00"), utc("2024-03-01T12:00:00"));
    /* slurm2sql's capture (Aalto, Helsinki summer time): Start 2019-07-31T22:29:14 is 1564601354 */
    assert_int_equal(local_in("Europe/Helsinki", "2019-07-31T22:29:14"), 1564601354);
    assert_int_equal(local_in("Europe/Helsinki", "2026-01-15T12:00:00"), utc("2026-01-15T10:00:00"));
    /* spring 2026-03-29: 03:00 EET -> 04:00 EEST at 01:00Z; 03:30 does not exist */
    assert_int_equal(local_in("Europe/Helsinki", "2026-03-29T02:59:59"), utc("2026-03-29T00:59:59"));
    assert_int_equal(local_in("Europe/Helsinki", "2026-03-29T03:30:00"), utc("2026-03-29T01:30:00"));
    assert_int_equal(local_in("Europe/Helsinki", "2026-03-29T04:00:00"), utc("2026-03-29T01:00:00"));
    /* autumn 2026-10-25: 04:00 EEST -> 03:00 EET at 01:00Z; 03:30 occurs twice: the first (EEST) */
    assert_int_equal(local_in("Europe/Helsinki", "2026-10-25T03:30:00"), utc("2026-10-25T00:30:00"));
    assert_int_equal(local_in("Europe/Helsinki", "2026-10-25T02:59:59"), utc("2026-10-24T23:59:59"));
    assert_int_equal(local_in("Europe/Helsinki", "2026-10-25T04:00:00"), utc("2026-10-25T02:00:00"));
    /* a Z still means UTC; an impossible date is refused */
    assert_int_equal(local_in("Europe/Helsinki", "2026-01-15T12:00:00Z"), utc("2026-01-15T12:00:00"));
    assert_true(sa_tz_enter("Europe/Helsinki", &scope, &err));
    assert_false(sa_time_parse_iso_local("2026-02-30T00:00:00", &t));
    sa_tz_leave(&scope);
    /* TZ as it was */
    assert_string_equal(getenv("TZ"), "Asia/Tokyo");
    unsetenv("TZ");
    assert_true(sa_tz_enter("UTC", &scope, &err));
    sa_tz_leave(&scope);
    assert_null(getenv("TZ"));
    /* names that are not zones */
    assert_false(sa_tz_valid("Mars/Olympus_Mons", &err));
    assert_non_null(strstr(err.message, "not in the zone database"));
    assert_false(sa_tz_valid("../../etc/passwd", &err));
    assert_false(sa_tz_valid("/etc/localtime", &err));
    assert_false(sa_tz_valid("EET-2EEST,M3.5.0/3", &err));
    assert_true(sa_tz_valid("UTC", &err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_good),
        cmocka_unit_test(test_time_bad),
        cmocka_unit_test(test_time_no_now),
        cmocka_unit_test(test_time_iso),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_local_time),
    };
    return tu_run_group_tests("time", tests, NULL, NULL);
}
