/*
 * test_alloc.c - report/sa_alloc.c: the allocations file (--allocations), read into
 * awards with their bands, and refused with a message naming the file, the award and
 * the field.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_alloc.h"
#include "sa_time.h"

static char dir[] = "/tmp/sa-test-alloc.XXXXXX";

static bool load_text(const char *name, const char *text, sa_awards_t *out, sa_error_t *err)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write_text(path, text);
    memset(out, 0, sizeof *out);
    return sa_awards_load(path, out, err);
}

static int64_t utc(const char *iso)
{
    int64_t t;
    assert_true(sa_time_parse_iso(iso, &t));
    return t;
}

static void test_read(void **state)
{
    sa_awards_t a;
    sa_error_t err;
    (void)state;

    assert_true(load_text("ok.json",
                          "{\"recent_days\": 14, \"bands\": {\"under_pct\": 70, \"over_pct\": 130}, \"awards\": ["
                          "{\"cluster\": \"demo\", \"account\": \"physics\", \"amount\": 6, \"unit\": \"gpu-years\","
                          " \"start\": \"2026-07-01\", \"end\": \"2027-07-01\"},"
                          "{\"cluster\": \"demo\", \"account\": \"bio\", \"gpu_type\": \"a100*\", \"amount\": 2.5,"
                          " \"unit\": \"rgu-years\", \"start\": \"2026-07-01T12:00\", \"end\": \"2026-12-31\","
                          " \"bands\": {\"under_pct\": 50, \"over_pct\": 200}, \"note\": \"RAC 2026\"}]}",
                          &a, &err));
    assert_int_equal(a.n, 2);
    assert_true(a.recent_days == 14);
    assert_string_equal(a.v[0].cluster, "demo");
    assert_string_equal(a.v[0].account, "physics");
    assert_null(a.v[0].gpu_type);
    assert_null(a.v[0].note);
    assert_true(a.v[0].amount == 6);
    assert_int_equal(a.v[0].unit, SA_AWARD_GPU_YEARS);
    assert_int_equal(a.v[0].start, utc("2026-07-01T00:00:00Z"));
    assert_int_equal(a.v[0].end, utc("2027-07-01T00:00:00Z"));
    /* the file's bands apply to an award without its own */
    assert_true(a.v[0].under_pct == 70 && a.v[0].over_pct == 130);
    assert_int_equal(a.v[0].index, 0);
    assert_string_equal(a.v[1].gpu_type, "a100*");
    assert_string_equal(a.v[1].note, "RAC 2026");
    assert_int_equal(a.v[1].unit, SA_AWARD_RGU_YEARS);
    assert_int_equal(a.v[1].start, utc("2026-07-01T12:00:00Z"));
    assert_true(a.v[1].under_pct == 50 && a.v[1].over_pct == 200);
    assert_int_equal(a.v[1].index, 1);
    sa_awards_clear(&a);
    assert_int_equal(a.n, 0);
    assert_string_equal(sa_award_unit_name(SA_AWARD_GPU_YEARS), "gpu-years");

    /* members, the group's size: a whole number (12 and 12.0 alike); absent is 0 */
    assert_true(load_text("members.json",
                          "{\"awards\": [{\"cluster\": \"demo\", \"account\": \"physics\", \"amount\": 6,"
                          " \"unit\": \"gpu-years\", \"start\": \"2026-07-01\", \"end\": \"2027-07-01\","
                          " \"members\": 12},"
                          "{\"cluster\": \"demo\", \"account\": \"bio\", \"amount\": 5, \"unit\": \"gpu-years\","
                          " \"start\": \"2026-07-01\", \"end\": \"2027-07-01\", \"members\": 3.0},"
                          "{\"cluster\": \"demo\", \"account\": \"chem\", \"amount\": 1, \"unit\": \"gpu-years\","
                          " \"start\": \"2026-07-01\", \"end\": \"2027-07-01\"}]}",
                          &a, &err));
    assert_int_equal(a.v[0].members, 12);
    assert_int_equal(a.v[1].members, 3);
    assert_int_equal(a.v[2].members, 0);
    sa_awards_clear(&a);
    assert_string_equal(sa_award_unit_name(SA_AWARD_RGU_YEARS), "rgu-years");
}

/* One bad field: refused, the message says where. */
static void test_errors(void **state)
{
    static const struct {
        const char *award, *want;
    } cases[] = {
        {"\"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", \"end\": "
         "\"2027-01-01\"", "cluster"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 0, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\"", "awards[0] (c/a): amount"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\"", "unit"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-02-30\", "
         "\"end\": \"2027-01-01\"", "start"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2027-01-01\", "
         "\"end\": \"2026-01-01\"", "end: must be after start"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"colour\": \"red\"", "unknown key 'colour'"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"bands\": {\"under_pct\": 90, \"over_pct\": 80}", "under_pct (90) is above"},
        /* members: a whole number of people, at least one */
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"members\": 0", "awards[0] (c/a): members: expected a whole number >= 1"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"members\": -3", "awards[0] (c/a): members"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"members\": 2.5", "awards[0] (c/a): members"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"members\": \"12\"", "awards[0] (c/a): members"},
        {"\"cluster\": \"c\", \"account\": \"a\", \"amount\": 1, \"unit\": \"gpu-years\", \"start\": \"2026-01-01\", "
         "\"end\": \"2027-01-01\", \"members\": 1e12", "awards[0] (c/a): members"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        sa_awards_t a;
        sa_error_t err;
        snprintf(text, sizeof text, "{\"awards\": [{%s}]}", cases[i].award);
        if (load_text("bad.json", text, &a, &err))
            fail_msg("case %zu accepted: %s", i, text);
        if (!strstr(err.message, cases[i].want) || !strstr(err.message, "bad.json"))
            fail_msg("case %zu: message '%s' lacks '%s'", i, err.message, cases[i].want);
        assert_int_equal(a.n, 0);
    }
    {
        sa_awards_t a;
        sa_error_t err;
        assert_false(load_text("top.json", "{\"awards\": {}}", &a, &err));
        assert_non_null(strstr(err.message, "awards: expected an array"));
        assert_false(load_text("rd.json", "{\"recent_days\": 0, \"awards\": []}", &a, &err));
        assert_non_null(strstr(err.message, "recent_days"));
        assert_false(load_text("key.json", "{\"award\": []}", &a, &err));
        assert_non_null(strstr(err.message, "unknown key 'award'"));
    }
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    return 0;
}

/* The bytes of a URL's answer are read by the same parser: a message names the URL given, never the file. */
static void test_parse_bytes(void **state)
{
    static const char ok[] = "{\"awards\": [{\"cluster\": \"demo\", \"account\": \"bio\", \"amount\": 5, \"unit\":"
                             " \"gpu-years\", \"start\": \"2026-07-01\", \"end\": \"2027-07-01\", \"members\": 4}]}";
    sa_awards_t a;
    sa_error_t err;
    (void)state;

    assert_true(sa_awards_parse(ok, strlen(ok), "https://awards.example/x", &a, &err));
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].members, 4);
    assert_true(a.recent_days == 30);
    sa_awards_clear(&a);
    assert_false(sa_awards_parse("{\"awards\": [", 12, "https://awards.example/x", &a, &err));
    assert_non_null(strstr(err.message, "https://awards.example/x:1: "));
    assert_int_equal(err.domain, SA_ERR_INPUT);
    /* through sa_awards_read: the URL as messages show it, without its user information and query */
    assert_false(sa_awards_read("https://u:pw@awards.example/x?key=k3y", "[]", 2, &a, &err));
    assert_non_null(strstr(err.message, "https://***@awards.example/x?***: expected a JSON object"));
    assert_null(strstr(err.message, "k3y"));
    assert_null(strstr(err.message, "pw"));
    assert_true(sa_awards_read("https://awards.example/x", ok, strlen(ok), &a, &err));
    assert_int_equal(a.n, 1);
    sa_awards_clear(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_parse_bytes),
    };
    return tu_run_group_tests("alloc", tests, setup, teardown);
}
