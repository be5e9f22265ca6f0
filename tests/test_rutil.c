/*
 * test_rutil.c - report/sa_rutil.c: lists, months, durations, wrapping and interning (files
 * written atomically: test_fsutil).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_time.h"

static int64_t utc(const char *iso)
{
    int64_t t;
    assert_true(sa_time_parse_iso(iso, &t));
    return t;
}

static void test_list_split(void **state)
{
    sa_strv_t v;
    (void)state;
    sa_strv_init(&v);
    assert_true(sa_rlist_split(" physics, bio ,,chem ", &v));
    assert_int_equal(v.n, 3);
    assert_string_equal(v.v[0], "physics");
    assert_string_equal(v.v[1], "bio");
    assert_string_equal(v.v[2], "chem");
    assert_true(sa_rlist_split("", &v));
    assert_int_equal(v.n, 3); /* appended to: nothing */
    sa_strv_clear(&v);
    /* what the options refuse: an empty list or item */
    assert_true(sa_rlist_has_empty(" physics, bio ,,chem "));
    assert_true(sa_rlist_has_empty(""));
    assert_true(sa_rlist_has_empty(" "));
    assert_true(sa_rlist_has_empty("a,"));
    assert_true(sa_rlist_has_empty(",a"));
    assert_true(sa_rlist_has_empty("a, ,b"));
    assert_false(sa_rlist_has_empty("a"));
    assert_false(sa_rlist_has_empty(" physics, bio , chem "));
}

static void test_months(void **state)
{
    int64_t s, e;
    char buf[16];
    (void)state;

    assert_true(sa_rmonth_parse("2026-02", &s, &e));
    assert_int_equal(s, utc("2026-02-01T00:00:00Z"));
    assert_int_equal(e, utc("2026-03-01T00:00:00Z")); /* 28 days */
    assert_int_equal(e - s, 28 * 86400);
    assert_true(sa_rmonth_parse("2028-02", &s, &e));
    assert_int_equal(e - s, 29 * 86400); /* leap year */
    assert_false(sa_rmonth_parse("2026-00", &s, &e));
    assert_false(sa_rmonth_parse("2026-1", &s, &e));
    /* floor and add, across a year */
    assert_int_equal(sa_rmonth_floor(utc("2026-12-31T23:59:59Z")), utc("2026-12-01T00:00:00Z"));
    assert_int_equal(sa_rmonth_floor(utc("2026-12-01T00:00:00Z")), utc("2026-12-01T00:00:00Z"));
    assert_int_equal(sa_rmonth_add(utc("2026-12-01T00:00:00Z"), 1), utc("2027-01-01T00:00:00Z"));
    assert_int_equal(sa_rmonth_add(utc("2026-01-01T00:00:00Z"), -1), utc("2025-12-01T00:00:00Z"));
    assert_int_equal(sa_rmonth_add(utc("2026-01-01T00:00:00Z"), 14), utc("2027-03-01T00:00:00Z"));
    assert_string_equal(sa_rmonth_label(utc("2026-10-31T12:00:00Z"), buf, sizeof buf), "2026-10");
}

static void test_durations_and_times(void **state)
{
    int64_t t;
    (void)state;
    assert_true(sa_rduration_parse("30m", &t));
    assert_int_equal(t, 1800);
    assert_true(sa_rduration_parse("1w", &t));
    assert_int_equal(t, 604800);
    assert_false(sa_rduration_parse("", &t));
    assert_false(sa_rduration_parse("-5m", &t));
    assert_true(sa_rtime_parse("2026-09-01T01:02:03Z", &t));
    assert_int_equal(t, utc("2026-09-01T01:02:03Z"));
    assert_false(sa_rtime_parse("now", &t)); /* relative: not for files */
}

static void test_wrap(void **state)
{
    sa_strv_t v;
    (void)state;
    sa_strv_init(&v);
    /* "the quick brown fox jumps" at 10: breaks at the last blank within 10 */
    sa_rwrap("the quick brown fox jumps", 10, &v);
    assert_int_equal(v.n, 3);
    assert_string_equal(v.v[0], "the quick");
    assert_string_equal(v.v[1], "brown fox");
    assert_string_equal(v.v[2], "jumps");
    sa_strv_clear(&v);
    sa_strv_init(&v);
    sa_rwrap("short", 10, &v);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.v[0], "short");
    sa_rwrap("", 10, &v);
    assert_int_equal(v.n, 1);
    sa_strv_clear(&v);
}

/*
 * The buckets of a window drawn over time: hours for a window of three days or less
 * (10-01T06:00 to 10-03T12:00: 54), else UTC days, the first and last clipped (10-01T06:00
 * to 10-04T12:00: [06:00, 10-02), [10-02, 10-03), [10-03, 10-04), [10-04, 12:00)); three
 * days exactly are 72 hours, a second more makes days; an empty window has none;
 * sa_rbucket_of finds a time's bucket.
 */
static void test_buckets(void **state)
{
    int64_t d1 = 1790812800, *b = NULL, step; /* 2026-10-01T00:00:00Z */
    size_t n;
    (void)state;

    n = sa_rbuckets(d1 + 6 * 3600, d1 + 2 * 86400 + 12 * 3600, &b, &step);
    assert_int_equal(step, 3600);
    assert_int_equal(n, 54);
    assert_true(b[0] == d1 + 6 * 3600 && b[1] == d1 + 7 * 3600 && b[54] == d1 + 2 * 86400 + 12 * 3600);
    free(b);
    n = sa_rbuckets(d1 + 6 * 3600, d1 + 3 * 86400 + 12 * 3600, &b, &step);
    assert_int_equal(step, 86400);
    assert_int_equal(n, 4);
    assert_true(b[0] == d1 + 6 * 3600 && b[1] == d1 + 86400 && b[3] == d1 + 3 * 86400 && b[4] == d1 + 3 * 86400 + 12 * 3600);
    assert_int_equal(sa_rbucket_of(b, n, d1 + 6 * 3600), 0);
    assert_int_equal(sa_rbucket_of(b, n, d1 + 86400 - 1), 0);
    assert_int_equal(sa_rbucket_of(b, n, d1 + 86400), 1);
    assert_int_equal(sa_rbucket_of(b, n, d1 + 3 * 86400 + 12 * 3600 - 1), 3);
    assert_int_equal(sa_rbucket_of(b, n, d1 + 3 * 86400 + 12 * 3600), SIZE_MAX);
    assert_int_equal(sa_rbucket_of(b, n, d1), SIZE_MAX);
    free(b);
    n = sa_rbuckets(d1, d1 + 3 * 86400, &b, &step);
    assert_int_equal(step, 3600);
    assert_int_equal(n, 72);
    free(b);
    n = sa_rbuckets(d1, d1 + 3 * 86400 + 1, &b, &step);
    assert_int_equal(step, 86400);
    assert_int_equal(n, 4); /* the last a second long */
    free(b);
    assert_int_equal(sa_rbuckets(d1, d1, &b, &step), 0);
    assert_null(b);
}

static void test_intern(void **state)
{
    sa_rintern_t in;
    char name[32];
    (void)state;

    sa_rintern_init(&in);
    assert_int_equal(sa_rintern_find(&in, "a"), UINT32_MAX);
    assert_int_equal(sa_rintern(&in, "physics"), 0);
    assert_int_equal(sa_rintern(&in, "bio"), 1);
    assert_int_equal(sa_rintern(&in, "physics"), 0);
    assert_int_equal(sa_rintern_n(&in, "bioXYZ", 3), 1); /* the first 3 bytes: "bio" */
    /* many names: ids stay dense and stable through the table's growth */
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "user%d", i);
        assert_int_equal(sa_rintern(&in, name), (uint32_t)i + 2);
    }
    assert_int_equal(sa_rintern_find(&in, "user4999"), 5001);
    assert_string_equal(sa_rintern_str(&in, 1), "bio");
    assert_string_equal(sa_rintern_str(&in, 5001), "user4999");
    assert_string_equal(sa_rintern_str(&in, 999999), ""); /* no such id */
    assert_int_equal(sa_rintern_find(&in, "nobody"), UINT32_MAX);
    sa_rintern_clear(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_split),
        cmocka_unit_test(test_months),
        cmocka_unit_test(test_durations_and_times),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_buckets),
    };
    return tu_run_group_tests("rutil", tests, NULL, NULL);
}
