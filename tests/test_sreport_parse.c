/*
 * test_sreport_parse.c - report/sa_sreport_parse.c without a server: sreport's grammar as
 * Slurm 22.05's sreport reads it (report words, conditions and their abbreviations, -t and
 * -T, the window rounded to hours as slurmdb_report_set_start_end_time rounds it).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_sreport.h"

/* 2026-10-15T13:45:00Z: the "now" of the grammar's cases */
#define NOW INT64_C(1792071900)

static int64_t iso(const char *s)
{
    int64_t t;
    if (!sa_rtime_parse(s, &t))
        fail_msg("bad time %s", s);
    return t;
}

/* Parses the command words (a NULL-terminated list) into r at NOW; returns whether it succeeded. */
static bool command(sa_sreport_req_t *r, sa_error_t *e, const char *const *words)
{
    int n = 0;
    while (words[n])
        n++;
    sa_sreport_req_clear(r);
    sa_sreport_req_init(r);
    sa_error_clear(e);
    return sa_sreport_command(r, n, (char *const *)words, NOW, e);
}

static void expect_kind(const char *const *words, sa_sreport_kind_t kind)
{
    sa_sreport_req_t r;
    sa_error_t e;
    sa_sreport_req_init(&r);
    if (!command(&r, &e, words))
        fail_msg("'%s %s' refused: %s", words[0], words[1], e.message);
    assert_int_equal(r.kind, kind);
    sa_sreport_req_clear(&r);
}

/* The words must be refused with a message holding want. */
static void expect_refused(const char *const *words, const char *want)
{
    sa_sreport_req_t r;
    sa_error_t e;
    sa_sreport_req_init(&r);
    if (command(&r, &e, words))
        fail_msg("'%s %s ...' accepted", words[0], words[1]);
    assert_int_equal(e.domain, SA_ERR_USAGE);
    if (!strstr(e.message, want))
        fail_msg("'%s' not in '%s'", want, e.message);
    sa_sreport_req_clear(&r);
}

/* The report words as sreport abbreviates them (sreport.c _process_command, _cluster_rep, ...). */
static void test_report_words(void **state)
{
    (void)state;
    expect_kind((const char *const[]){"cluster", "AccountUtilizationByUser", NULL}, SA_SR_ACCOUNT_BY_USER);
    expect_kind((const char *const[]){"cl", "a", NULL}, SA_SR_ACCOUNT_BY_USER);      /* any word with an 'a' */
    expect_kind((const char *const[]){"CLUSTER", "acct", NULL}, SA_SR_ACCOUNT_BY_USER);
    expect_kind((const char *const[]){"cluster", "UserUtilizationByAccount", NULL}, SA_SR_USER_BY_ACCOUNT);
    expect_kind((const char *const[]){"cluster", "UserUtilizationByAcc", NULL}, SA_SR_USER_BY_ACCOUNT); /* 18 chars */
    expect_kind((const char *const[]){"cluster", "ua", NULL}, SA_SR_USER_BY_ACCOUNT);
    expect_kind((const char *const[]){"cluster", "Utilization", NULL}, SA_SR_UTILIZATION);
    expect_kind((const char *const[]){"cl", "ut", NULL}, SA_SR_UTILIZATION);
    expect_kind((const char *const[]){"user", "TopUsage", NULL}, SA_SR_TOP_USAGE);
    expect_kind((const char *const[]){"u", "t", NULL}, SA_SR_TOP_USAGE);
    expect_kind((const char *const[]){"job", "SizesByAccount", NULL}, SA_SR_SIZES_BY_ACCOUNT);
    expect_kind((const char *const[]){"j", "s", NULL}, SA_SR_SIZES_BY_ACCOUNT);
    expect_kind((const char *const[]){"job", "sizes", NULL}, SA_SR_SIZES_BY_ACCOUNT);
    /* what sreport refuses */
    expect_refused((const char *const[]){"c", "ut", NULL}, "invalid keyword 'c'"); /* "cluster" needs 2 */
    expect_refused((const char *const[]){"cluster", "u", NULL}, "not a valid report 'u'");
    expect_refused((const char *const[]){"cluster", "UserUtil", NULL}, "not a valid report");
    expect_refused((const char *const[]){"user", "x", NULL}, "not a valid report 'x'");
    expect_refused((const char *const[]){"job", "SizesByAcc2", NULL}, "not a valid report");
    expect_refused((const char *const[]){"cluster", NULL}, "needs a report");
    /* what sreport has and the archive does not answer */
    expect_refused((const char *const[]){"cluster", "UserUtilizationByWckey", NULL}, "not answered from the archive");
    expect_refused((const char *const[]){"cluster", "WCKeyUtilizationByUser", NULL}, "not answered");
    expect_refused((const char *const[]){"cluster", "AccountUtilizationByQOS", NULL}, "not answered");
    expect_refused((const char *const[]){"job", "SizesByWckey", NULL}, "not answered");
    expect_refused((const char *const[]){"job", "SizesByAccountAndWckey", NULL}, "not answered");
    expect_refused((const char *const[]){"reservation", "Utilization", NULL}, "not answered");
}

/* Each report's conditions, as sreport reads them: which key, which flag, what a bare word means. */
static void test_conditions(void **state)
{
    sa_sreport_req_t r;
    sa_error_t e;
    (void)state;

    sa_sreport_req_init(&r);
    /* cluster reports: a bare word is a user; Users= and Accounts= lower-cased, deduplicated; Format= with widths */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "AccountUtilizationByUser", "Alice", "u=Bob,alice",
                                                      "ac=Physics", "acct=bio", "c=Demo", "tree",
                                                      "format=Cluster,login%20,Used%-12", NULL}));
    assert_int_equal(r.users.n, 2);
    assert_string_equal(r.users.v[0], "alice");
    assert_string_equal(r.users.v[1], "bob");
    assert_int_equal(r.accounts.n, 2);
    assert_string_equal(r.accounts.v[0], "physics");
    assert_string_equal(r.clusters.v[0], "demo");
    assert_true(r.tree);
    assert_int_equal(r.nformat, 3);
    assert_string_equal(r.format[1].name, "login");
    assert_int_equal(r.format[1].width, 20);
    assert_int_equal(r.format[2].width, -12);
    /* "tre" is no Tree (4 characters at least): a user; "a" alone is All_Clusters; "a=" is no key */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "tre", "a", NULL}));
    assert_false(r.tree);
    assert_true(r.all_clusters);
    assert_int_equal(r.users.n, 1);
    assert_string_equal(r.users.v[0], "tre");
    assert_false(command(&r, &e, (const char *const[]){"cluster", "a", "a=bio", NULL}));
    assert_non_null(strstr(e.message, "unknown condition 'a=bio'"));
    assert_false(command(&r, &e, (const char *const[]){"cluster", "a", "q=normal", NULL}));
    assert_non_null(strstr(e.message, "not answered"));
    /* Utilization: a bare word is a cluster; Users= is not its condition */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "ut", "beta", "alpha", NULL}));
    assert_int_equal(r.clusters.n, 2);
    assert_string_equal(r.clusters.v[0], "alpha"); /* sreport lists clusters by name */
    assert_false(command(&r, &e, (const char *const[]){"cluster", "ut", "u=alice", NULL}));
    /* TopUsage: Group, TopCount (a negative count: all) */
    assert_true(command(&r, &e, (const char *const[]){"user", "top", "g", "t=3", NULL}));
    assert_true(r.group);
    assert_int_equal(r.top_count, 3);
    assert_true(command(&r, &e, (const char *const[]){"user", "top", "topcount=-1", NULL}));
    assert_int_equal(r.top_count, UINT32_MAX);
    assert_false(command(&r, &e, (const char *const[]){"user", "top", "x=1", NULL}));
    /* job reports: Format needs 2 characters, Partitions 2, grouping 2; flags */
    assert_true(command(&r, &e, (const char *const[]){"job", "s", "fo=cl,a", "pa=gpu", "gr=10,20", "pr", "fl",
                                                      "demo", NULL}));
    assert_int_equal(r.nformat, 2);
    assert_string_equal(r.partitions.v[0], "gpu");
    assert_int_equal(r.ngrouping, 2);
    assert_int_equal(r.grouping[1], 20);
    assert_true(r.print_job_count);
    assert_true(r.flat_view);
    assert_string_equal(r.clusters.v[0], "demo");
    assert_true(command(&r, &e, (const char *const[]){"job", "s", NULL}));
    assert_int_equal(r.ngrouping, 4); /* 50,250,500,1000 */
    assert_int_equal(r.grouping[3], 1000);
    assert_true(command(&r, &e, (const char *const[]){"job", "s", "grouping=individual", NULL}));
    assert_true(r.individual);
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "f=cl", NULL})); /* Format needs fo= here */
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "p=gpu", NULL}));
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "grouping=20,10", NULL}));
    assert_non_null(strstr(e.message, "ascend"));
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "grouping=0", NULL}));
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "nodes=vm", NULL}));
    assert_non_null(strstr(e.message, "not answered"));
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "wckeys=x", NULL}));
    assert_false(command(&r, &e, (const char *const[]){"job", "s", "ac=bio", "acctasparent", NULL}));
    assert_non_null(strstr(e.message, "hierarchy"));
    assert_true(command(&r, &e, (const char *const[]){"job", "s", "acctasparent", NULL}));
    assert_true(r.acct_as_parent);
    assert_false(command(&r, &e, (const char *const[]){"cluster", "a", "start=2026-13-45", NULL}));
    assert_non_null(strstr(e.message, "Start="));
    sa_sreport_req_clear(&r);
}

/* The window: each end rounded to the nearest hour as slurmdb_report_set_start_end_time does, UTC. */
static void test_window(void **state)
{
    sa_sreport_req_t r;
    sa_error_t e;
    (void)state;

    sa_sreport_req_init(&r);
    /* the default: the day before now's */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", NULL}));
    assert_int_equal(r.start, iso("2026-10-14T00:00:00"));
    assert_int_equal(r.end, iso("2026-10-15T00:00:00"));
    /* 29:29 rounds down, 29:30 up (the second rounds the minute, the minute the hour); 23:59:59 to midnight */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "s=2026-10-01T05:29:29",
                                                      "e=2026-10-01T23:59:59", NULL}));
    assert_int_equal(r.start, iso("2026-10-01T05:00:00"));
    assert_int_equal(r.end, iso("2026-10-02T00:00:00"));
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "Start=2026-10-01T05:29:30", NULL}));
    assert_int_equal(r.start, iso("2026-10-01T06:00:00"));
    assert_int_equal(r.end, iso("2026-10-15T00:00:00")); /* End not given: today's midnight */
    /* End after now is now, then rounded: 13:45 -> 14:00 */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "start=10/01", "end=2026-12-01", NULL}));
    assert_int_equal(r.start, iso("2026-10-01T00:00:00"));
    assert_int_equal(r.end, iso("2026-10-15T14:00:00"));
    /* at least an hour */
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "start=2026-10-05T10:00",
                                                      "end=2026-10-05T10:10", NULL}));
    assert_int_equal(r.end - r.start, 3600);
    assert_true(command(&r, &e, (const char *const[]){"cluster", "a", "start=now-2days", "end=now", NULL}));
    assert_int_equal(r.start, iso("2026-10-13T14:00:00"));
    assert_int_equal(r.end, iso("2026-10-15T14:00:00"));
    sa_sreport_req_clear(&r);
}

/* -t and -T as sreport reads them. */
static void test_time_and_tres(void **state)
{
    static const struct {
        const char *s;
        int t; /* -1: refused */
    } t[] = {{"minper", SA_SRT_MINS_PER}, {"MinPer", SA_SRT_MINS_PER}, {"secper", SA_SRT_SECS_PER},
             {"hourper", SA_SRT_HOURS_PER}, {"HOURP", -1}, {"minp", -1}, {"m", SA_SRT_MINS}, {"Minutes", SA_SRT_MINS},
             {"s", SA_SRT_SECS}, {"seconds", SA_SRT_SECS}, {"h", SA_SRT_HOURS}, {"p", SA_SRT_PERCENT},
             {"percent", SA_SRT_PERCENT}, {"", -1}, {"x", -1}, {"hoursx", -1}};
    sa_sreport_req_t r;
    sa_error_t e;
    (void)state;

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sa_srtime_t v = SA_SRT_SECS;
        bool ok = sa_sreport_time_format(t[i].s, &v);
        if (ok != (t[i].t >= 0) || (ok && (int)v != t[i].t))
            fail_msg("-t '%s': %d %d (want %d)", t[i].s, ok, (int)v, t[i].t);
    }
    assert_string_equal(sa_sreport_time_name(SA_SRT_HOURS_PER), "Hours/Percentage of Total");
    assert_string_equal(sa_sreport_time_name(SA_SRT_PERCENT), "Percentage of Total");
    sa_sreport_req_init(&r);
    assert_false(r.tres_given);
    assert_int_equal(r.ntres, 1);
    assert_int_equal(r.tres[0], SA_TRES_CPU);
    /* in the order given (sreport prints a line per TRES so), each once */
    assert_true(sa_sreport_set_tres(&r, "gres/gpu,billing,CPU,mem,cpu", &e));
    assert_true(r.tres_given);
    assert_int_equal(r.ntres, 4);
    assert_int_equal(r.tres[0], SA_TRES_GPU);
    assert_int_equal(r.tres[1], SA_TRES_BILLING);
    assert_int_equal(r.tres[2], SA_TRES_CPU);
    assert_int_equal(r.tres[3], SA_TRES_MEM);
    assert_string_equal(r.tres_str, "gres/gpu,billing,CPU,mem,cpu");
    for (const char *const *bad = (const char *const[]){"ALL", "energy", "gpu", "gres/gpu:a100", "node", "", NULL};
         *bad; bad++) {
        if (sa_sreport_set_tres(&r, *bad, &e))
            fail_msg("-T %s accepted", *bad);
    }
    /* a job report takes one TRES */
    assert_true(sa_sreport_set_tres(&r, "cpu,gres/gpu", &e));
    assert_false(sa_sreport_command(&r, 2, (char *const[]){(char *)"job", (char *)"s"}, NOW, &e));
    assert_non_null(strstr(e.message, "single"));
    sa_sreport_req_clear(&r);
}

/* What p printed, from a memstream (caller frees). */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_words),
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_time_and_tres),
    };
    return tu_run_group_tests("sreport_parse", tests, NULL, NULL);
}
