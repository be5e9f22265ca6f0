/*
 * test_slurmtext.c - ingest/sa_slurmtext.c: Slurm's other text forms: sacct's dates (and
 * the words that mean none), durations, integers, exit codes "rc:sig", node states as
 * scontrol and sinfo print them (suffixes, unknown words kept). Inputs are taken from the
 * real samples where they occur there (the sample is named next to the case).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_slurmtext.h"
#include "sa_time.h"

/* ---- helpers ------------------------------------------------------------------ */

static int64_t when(const char *s)
{
    sa_error_t err;
    int64_t t;
    sa_error_clear(&err);
    if (!sa_time_parse_text(s, &t, &err))
        fail_msg("date '%s': %s", s, err.message);
    return t;
}

static int64_t secs(const char *s)
{
    sa_error_t err;
    int64_t t;
    sa_error_clear(&err);
    if (!sa_duration_parse(s, &t, &err))
        fail_msg("duration '%s': %s", s, err.message);
    return t;
}

/* Node state text -> "BASE+FLAGS" (static buffer of tu_state). */
static const char *nstate(const char *s)
{
    static char buf[256];
    sa_state_t st;
    sa_error_t err;

    sa_state_init(&st);
    sa_error_clear(&err);
    if (!sa_node_state_parse_text(s, &st, &err))
        fail_msg("node state '%s': %s", s, err.message);
    snprintf(buf, sizeof buf, "%s", tu_state(&st));
    sa_state_clear(&st);
    return buf;
}

/* ---- dates, durations, numbers ----------------------------------------------------- */

static void test_time_text(void **state)
{
    (void)state;
    /* local-sacct-P-D: job 1 Submit */
    assert_int_equal(when("2026-11-25T21:37:49"), 1795642669);
    assert_int_equal(when("2026-11-25T21:37:49Z"), 1795642669);
    assert_int_equal(when("1970-01-01T00:00:00"), 0);
    assert_int_equal(when("2019-07-31T22:29:13"), 1564612153);
    assert_int_equal(when("2024-02-29T12:00:00"), 1709208000);
}

/* "Unknown" (0 / INFINITE) and "None" (NO_VAL, 22.05+) mean not set. */
static void test_time_text_unset_words(void **state)
{
    int64_t t = 0;
    (void)state;
    assert_int_equal(when("Unknown"), SA_UNSET);
    assert_int_equal(when("None"), SA_UNSET);
    assert_int_equal(when("N/A"), SA_UNSET);
    assert_int_equal(when(""), SA_UNSET);
    assert_true(sa_time_parse_text(NULL, &t, NULL));
    assert_int_equal(t, SA_UNSET);
}

static void test_time_text_errors(void **state)
{
    static const char *const bad[] = {"yesterday", "2026-13-01T00:00:00", "2026-02-30T00:00:00", "2026-11-25",
                                      "2026-11-25 21:37:49", " 2026-11-25T21:37:49", "2026-11-25T25:00:00",
                                      "2026-11-25T21:37:49+01", "2023-02-29T00:00:00"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_time_parse_text(bad[i], &t, &err))
            fail_msg("date '%s' parsed as %lld", bad[i], (long long)t);
        assert_non_null(strstr(err.message, "expected a date"));
    }
}

static void test_duration_elapsed(void **state)
{
    (void)state;
    assert_int_equal(secs("00:00:03"), 3);
    assert_int_equal(secs("00:10:00"), 600);
    assert_int_equal(secs("1-04:33:44"), 102824);
    assert_int_equal(secs("163-00:18:41"), 163 * 86400 + 18 * 60 + 41); /* habrok TotalCPU */
}

/* TotalCPU / UserCPU below an hour: MM:SS.mmm, the fraction dropped. */
static void test_duration_fraction(void **state)
{
    (void)state;
    assert_int_equal(secs("00:15.057"), 15);  /* aalto TotalCPU */
    assert_int_equal(secs("01:53.961"), 113); /* peregrine */
    assert_int_equal(secs("23:08.358"), 1388);
    assert_int_equal(secs("00:00.001"), 0);
}

static void test_duration_days(void **state)
{
    (void)state;
    assert_int_equal(secs("3-00:00:00"), 259200);
    assert_int_equal(secs("5-00:00:00"), 432000);
    assert_int_equal(secs("2-12"), 2 * 86400 + 12 * 3600);
    assert_int_equal(secs("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
    assert_int_equal(secs("30"), 1800); /* Slurm: a bare number is minutes */
}

static void test_duration_specials(void **state)
{
    (void)state;
    assert_int_equal(secs("UNLIMITED"), SA_INFINITE);
    assert_int_equal(secs("Partition_Limit"), SA_UNSET);
    assert_int_equal(secs("INVALID"), SA_UNSET);
    assert_int_equal(secs(""), SA_UNSET);
}

static void test_duration_errors(void **state)
{
    static const char *const bad[] = {"abc", "1:2:3:4", "-5", "1-", "00:-1", "1.5:00", "1-00:00.5", "12:", ":30"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_duration_parse(bad[i], &t, &err))
            fail_msg("duration '%s' parsed as %lld", bad[i], (long long)t);
        assert_non_null(strstr(err.message, "duration"));
    }
}

static void test_parse_int64(void **state)
{
    int64_t v = 0;
    (void)state;
    assert_true(sa_parse_int64("0", &v));
    assert_int_equal(v, 0);
    assert_true(sa_parse_int64("9223372036854775807", &v));
    assert_true(v == INT64_MAX);
    assert_true(sa_parse_int64("-42", &v));
    assert_int_equal(v, -42);
    assert_false(sa_parse_int64("9223372036854775808", &v));
    assert_false(sa_parse_int64("99999999999999999999999", &v));
    assert_false(sa_parse_int64("", &v));
    assert_false(sa_parse_int64("12abc", &v));
    assert_false(sa_parse_int64(" 12", &v));
    assert_false(sa_parse_int64("0x10", &v));
    assert_false(sa_parse_int64(NULL, &v));
}

static void test_exitcode(void **state)
{
    int rc = -1, sig = -1;
    sa_error_t err;
    (void)state;
    assert_true(sa_exitcode_parse_text("0:15", &rc, &sig, &err));
    assert_int_equal(rc, 0);
    assert_int_equal(sig, 15);
    assert_true(sa_exitcode_parse_text("3:0", &rc, &sig, &err));
    assert_int_equal(rc, 3);
    assert_int_equal(sig, 0);
    assert_true(sa_exitcode_parse_text("0:9", &rc, &sig, &err));
    assert_int_equal(sig, 9);
    assert_false(sa_exitcode_parse_text("3", &rc, &sig, &err));
    assert_non_null(strstr(err.message, "rc:signal"));
    assert_false(sa_exitcode_parse_text("a:b", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("1:2:3", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("256:0", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("", &rc, &sig, &err));
}

/* ---- node states ------------------------------------------------------------------- */

static void test_node_state_scontrol(void **state)
{
    (void)state;
    /* local-scontrol-show-node-o */
    assert_string_equal(nstate("UNKNOWN+DRAIN+NOT_RESPONDING"), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_string_equal(nstate("UNKNOWN+MAINTENANCE+RESERVED+NOT_RESPONDING"),
                        "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_string_equal(nstate("IDLE"), "IDLE");
    assert_string_equal(nstate("MIXED+DRAIN"), "MIXED+DRAIN");
    assert_string_equal(nstate("IDLE+CLOUD+POWERED_DOWN"), "IDLE+CLOUD+POWERED_DOWN");
    assert_string_equal(nstate("idle"), "IDLE"); /* v0.0.37/38 lower case */
}

/* sinfo's derived words: a flag printed instead of the base. */
static void test_node_state_sinfo_words(void **state)
{
    (void)state;
    assert_string_equal(nstate("drained"), "IDLE+DRAIN");
    assert_string_equal(nstate("drain*"), "IDLE+DRAIN+NOT_RESPONDING");
    assert_string_equal(nstate("draining"), "ALLOCATED+DRAIN");
    assert_string_equal(nstate("drng"), "ALLOCATED+DRAIN");
    assert_string_equal(nstate("maint"), "IDLE+MAINTENANCE");
    assert_string_equal(nstate("resv"), "IDLE+RESERVED");
    assert_string_equal(nstate("comp"), "IDLE+COMPLETING");
    assert_string_equal(nstate("failg"), "ALLOCATED+FAIL");
    assert_string_equal(nstate("futr"), "FUTURE");
    assert_string_equal(nstate("alloc"), "ALLOCATED");
}

/* sinfo's suffix characters. */
static void test_node_state_sinfo_suffixes(void **state)
{
    (void)state;
    assert_string_equal(nstate("idle~"), "IDLE+POWERED_DOWN");
    assert_string_equal(nstate("down*"), "DOWN+NOT_RESPONDING");
    assert_string_equal(nstate("mix-"), "MIXED+PLANNED");
    assert_string_equal(nstate("alloc#"), "ALLOCATED+POWERING_UP");
    assert_string_equal(nstate("idle%"), "IDLE+POWERING_DOWN");
    assert_string_equal(nstate("idle!"), "IDLE+POWER_DOWN");
    assert_string_equal(nstate("mix@"), "MIXED+REBOOT_REQUESTED");
    assert_string_equal(nstate("alloc^"), "ALLOCATED+REBOOT_ISSUED");
    assert_string_equal(nstate("idle$"), "IDLE+MAINTENANCE");
}

static void test_node_state_unknown_kept(void **state)
{
    sa_state_t st;
    sa_error_t err;
    (void)state;
    assert_string_equal(nstate("quantum+SPACE_WEATHER"), "QUANTUM+SPACE_WEATHER");
    sa_state_init(&st);
    assert_false(sa_node_state_parse_text("IDLE++DRAIN", &st, &err));
    assert_false(sa_node_state_parse_text("*", &st, &err));
    assert_false(sa_node_state_parse_text("IDLE DRAIN", &st, &err));
    sa_state_clear(&st);
}

/* ---- CPU times, local dates -------------------------------------------------------------- */

/* TotalCPU, UserCPU, SystemCPU: the milliseconds kept; "" absent (-1). */
static void test_cputime(void **state)
{
    static const struct {
        const char *s;
        double secs;
    } ok[] = {
        {"01:02.500", 62.5}, {"02:03:04", 7384.0}, {"1-02:03:04", 93784.0}, {"00:00:00", 0.0}, {"", -1.0},
    };
    sa_error_t err;
    double v;
    (void)state;

    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (!sa_cputime_parse(ok[i].s, &v, &err))
            fail_msg("'%s': %s", ok[i].s, err.message);
        if (v != ok[i].secs)
            fail_msg("'%s': %f, want %f", ok[i].s, v, ok[i].secs);
    }
    assert_false(sa_cputime_parse("abc", &v, &err));
    assert_non_null(strstr(err.message, "abc"));
}

/* A capture in local time, read in its zone: 2026-07-01 12:00 in Europe/Berlin (CEST, UTC+2) is 10:00Z. */
static void test_time_local(void **state)
{
    sa_tz_scope_t scope = {0};
    sa_error_t err;
    int64_t t;
    (void)state;

    if (!sa_tz_enter("Europe/Berlin", &scope, &err)) {
        printf("SKIP test_slurmtext: no zone database here (%s)\n", err.message);
        skip();
    }
    assert_true(sa_time_parse_text_local("2026-07-01T12:00:00", &t, &err));
    sa_tz_leave(&scope);
    assert_int_equal(t, 1782900000); /* 2026-07-01T10:00:00Z */
    assert_true(sa_time_parse_text("2026-07-01T12:00:00", &t, &err));
    assert_int_equal(t, 1782907200); /* in UTC */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_text),
        cmocka_unit_test(test_time_text_unset_words),
        cmocka_unit_test(test_time_text_errors),
        cmocka_unit_test(test_duration_elapsed),
        cmocka_unit_test(test_duration_fraction),
        cmocka_unit_test(test_duration_days),
        cmocka_unit_test(test_duration_specials),
        cmocka_unit_test(test_duration_errors),
        cmocka_unit_test(test_parse_int64),
        cmocka_unit_test(test_exitcode),
        cmocka_unit_test(test_node_state_scontrol),
        cmocka_unit_test(test_node_state_sinfo_words),
        cmocka_unit_test(test_node_state_sinfo_suffixes),
        cmocka_unit_test(test_node_state_unknown_kept),
        cmocka_unit_test(test_cputime),
        cmocka_unit_test(test_time_local),
    };
    return tu_run_group_tests("slurmtext", tests, NULL, NULL);
}
