/*
 * test_sreport.c - `slurm-report sreport` (issue 32, item 5): sreport's grammar as Slurm
 * 22.05's sreport reads it (report words, conditions and their abbreviations, -t and -T,
 * the window rounded to hours), Slurm's print_fields as sreport prints with it (widths,
 * cuts, -p/-P, time cells and their rounding, the usage columns' widths), and the reports'
 * text on the report dataset (fixtures/report-dataset.json) against golden files whose
 * figures are worked out by hand in fixtures/golden/sreport/README.md; cluster Utilization
 * against utilization --summary's classes. The comparison with the real sreport is in
 * test_e2e_slurm.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include <jansson.h>
#include <mongoc/mongoc.h>

#include "report_dataset.h"
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
static char *printed(FILE *f, char **buf)
{
    fclose(f);
    return *buf;
}

/* print_fields: titles, the dashes, padding and cutting, -p and -P. */
static void test_print_fields(void **state)
{
    const sa_srfield_t f[] = {{0, "Cluster", 9}, {0, "Account", -20}, {0, "Used", 8}};
    char *buf = NULL, *s;
    size_t len;
    FILE *m;
    sa_srprint_t p;
    (void)state;

    m = open_memstream(&buf, &len);
    p = (sa_srprint_t){m, SA_SRP_TABLE, SA_SRT_MINS};
    sa_srprint_titles(&p, f, 3);
    sa_srprint_str(&p, &f[0], "averylongname", false); /* cut: its last character shown as '+' */
    sa_srprint_str(&p, &f[1], NULL, false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    s = printed(m, &buf);
    assert_string_equal(s, "  Cluster Account                  Used \n"
                           "--------- -------------------- -------- \n"
                           "averylon+                             2 \n");
    free(s);
    buf = NULL;
    m = open_memstream(&buf, &len);
    p = (sa_srprint_t){m, SA_SRP_ENDING, SA_SRT_SECS};
    sa_srprint_titles(&p, f, 3);
    sa_srprint_str(&p, &f[0], "averylongname", false); /* never cut in -p */
    sa_srprint_str(&p, &f[1], NULL, false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    p.parsable = SA_SRP_NO_ENDING;
    sa_srprint_titles(&p, f, 3);
    sa_srprint_uint(&p, &f[0], 7, false);
    sa_srprint_str(&p, &f[1], "x", false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    s = printed(m, &buf);
    assert_string_equal(s, "Cluster|Account|Used|\naverylongname||90|\nCluster|Account|Used\n7|x|90\n");
    free(s);
}

/* sreport's time cells: the same double arithmetic, so that halves round to even. */
static void test_time_text(void **state)
{
    static const struct {
        sa_srtime_t t;
        uint64_t v, total;
        const char *want;
    } c[] = {
        {SA_SRT_MINS, 90, 0, "2"},     {SA_SRT_MINS, 30, 0, "0"},       {SA_SRT_MINS, 150, 0, "2"},
        {SA_SRT_MINS, 29, 0, "0"},     {SA_SRT_MINS, 31, 0, "1"},       {SA_SRT_HOURS, 5400, 0, "2"},
        {SA_SRT_HOURS, 1800, 0, "0"},  {SA_SRT_SECS, 777600, 0, "777600"}, {SA_SRT_PERCENT, 1, 3, "33.33%"},
        {SA_SRT_PERCENT, 2, 3, "66.67%"}, {SA_SRT_PERCENT, 5, 0, "500.00%"}, /* a total of 0 divides by 1 */
        {SA_SRT_SECS_PER, 3600, 7200, "3600(50.00%)"}, {SA_SRT_MINS_PER, 3600, 7200, "60(50.00%)"},
        {SA_SRT_HOURS_PER, 36000, 36000, "10(100.00%)"},
    };
    char buf[64];
    (void)state;

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *got = sa_srprint_time_text(c[i].t, c[i].v, c[i].total, buf, sizeof buf);
        if (strcmp(got, c[i].want) != 0)
            fail_msg("case %zu: '%s', want '%s'", i, got, c[i].want);
    }
    /* the usage columns: 8 up to 99,999,999 s, one more each power of ten up to sreport's wrapped limit */
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 0), 8);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 99999999), 8);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 100000000), 9);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_HOURS, UINT64_C(1000000000)), 10);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS_PER, 100000000), 18);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_SECS, UINT64_C(1000000000000000000)), 19);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_SECS, UINT64_MAX), 19); /* 1e8 x 1e17 wraps to ~1.59e18 */
    assert_string_equal(sa_srprint_date(iso("2026-10-31T23:59:59"), buf, sizeof buf), "2026-10-31T23:59:59");
}

/* ---- the reports on the dataset ------------------------------------------------------------- */

static char *uri;
static char *db_name;
static mongoc_client_t *client;
static char sqlite_path[64] = "";

static int group_setup(void **state)
{
    (void)state;
    if (!client)
        return 0;
    rd_setup(uri, db_name, sqlite_path, "/tmp/sa-test-sreport-XXXXXX");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (sqlite_path[0])
        rd_remove_sqlite(sqlite_path);
    return 0;
}

/* Runs `slurm-report sreport` on the dataset with args; returns the exit code. */
static int run(const char *const *args, char **out, char **err)
{
    const char *first[] = {"sreport", "--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z", NULL};
    int rc = tu_run_report(SA_REPORT_BIN, uri, NULL, first, args, out, err);
    if (getenv("SA_SREPORT_SHOW"))
        fprintf(stderr, "---- exit %d\n%s%s", rc, *out, *err);
    return rc;
}

static char *ok_run(const char *const *args)
{
    char *out, *err;
    int rc = run(args, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(err);
    return out;
}

/* The output of args equals fixtures/golden/sreport/NAME (SA_SREPORT_UPDATE=1 prints it instead of failing). */
static void golden(const char *name, const char *const *args)
{
    char path[512], *want, *got = ok_run(args);
    snprintf(path, sizeof path, "%s/golden/sreport/%s", SA_FIXTURES_DIR, name);
    want = tu_read_file(path, NULL);
    if (strcmp(got, want) != 0)
        fail_msg("%s differs: got\n%s\nwant\n%s", name, got, want);
    free(want);
    free(got);
}

static void require_archive(void)
{
    if (!client) {
        printf("  skipped: no test MongoDB server (SLURM_TEST_MONGO_URI)\n");
        skip();
    }
}

/* The dataset's beta (two jobs, no time series), every report whose figures README.md works out. */
static void test_golden_beta(void **state)
{
    (void)state;
    require_archive();
    golden("beta-account-by-user.txt", (const char *const[]){"-M", "beta", "cluster", "AccountUtilizationByUser",
                                                             "start=2026-09-01", "end=2026-10-01", NULL});
    golden("beta-account-by-user.P.txt", (const char *const[]){"-P", "-T", "gres/gpu,cpu", "-t", "hours", "cluster",
                                                               "a", "cl=beta", "s=2026-09-01", "e=2026-10-01", NULL});
    golden("beta-user-by-account.p.txt", (const char *const[]){"-p", "-n", "-T", "gres/gpu", "-t", "s", "-M", "beta",
                                                               "cluster", "UserUtilizationByAccount",
                                                               "start=2026-09-01", "end=2026-10-01", NULL});
    /* columns the report has nothing for: 0 as sreport prints them (Allocated keeps its width, -10) */
    golden("beta-account-by-user-fields.txt", (const char *const[]){"-t", "hours", "-M", "beta", "cluster", "a",
                                                                    "format=login,allocated%-10,count,used",
                                                                    "start=2026-09-01", "end=2026-10-01", NULL});
    golden("beta-top.txt", (const char *const[]){"-t", "hours", "-M", "beta", "user", "TopUsage", "start=2026-09-01",
                                                 "end=2026-10-01", "TopCount=1", NULL});
    golden("beta-sizes.txt", (const char *const[]){"-M", "beta", "job", "SizesByAccount", "start=2026-09-01",
                                                   "end=2026-10-01", NULL});
    golden("beta-sizes-flat.P.txt", (const char *const[]){"-P", "-T", "gres/gpu", "-M", "beta", "job", "s", "fl",
                                                          "PrintJobCount", "grouping=1,2", "start=2026-09-01",
                                                          "end=2026-10-01", NULL});
    golden("beta-sizes-grouping.txt", (const char *const[]){"-t", "hourper", "-M", "beta", "job", "s", "flatview",
                                                            "grouping=5,10", "format=account%12,cluster",
                                                            "start=2026-09-01", "end=2026-10-01", NULL});
}

/* What the archive cannot answer, and what sreport only warns about: one line, exit 2, nothing on stdout. */
static void test_refused(void **state)
{
    static const struct {
        const char *args[10], *want;
    } c[] = {
        {{"cluster", "UserUtilizationByWckey", NULL}, "not answered from the archive"},
        {{"-T", "ALL", "cluster", "a", NULL}, "sreport -T"},
        {{"-T", "billing", "-M", "alpha", "cluster", "ut", "start=2026-09-01", "end=2026-10-01", NULL},
         "no billing capacity"},
        {{"cluster", "a", "nosuch=1", NULL}, "unknown condition"},
        {{"cluster", "a", "format=used,nosuch", NULL}, "unknown field 'nosuch'"},
        {{"--from-jobs", "job", "sizes", NULL}, "--from-jobs"},
        {{"-t", "percent", "-M", "beta", "user", "top", "start=2026-09-01", "end=2026-10-01", NULL}, "not known"},
        {{"--federation", "cluster", "ut", NULL}, "federation"},
    };
    (void)state;
    require_archive();

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *out, *err;
        int rc = run(c[i].args, &out, &err);
        if (rc != 2 || *out || !strstr(err, c[i].want) || strchr(err, '\n') != err + strlen(err) - 1)
            fail_msg("case %zu: exit %d, stdout '%s', stderr '%s' (want one line with '%s')", i, rc, out, err,
                     c[i].want);
        free(out);
        free(err);
    }
}

/*
 * cluster Utilization is utilization --summary in sreport's columns (alpha's September):
 * Allocated = allocated + reserved, Down, PLND Down = planned_down, Planned, Idle = idle +
 * stranded + unknown, Reported = their sum; each to the second.
 */
static void test_utilization_is_summary(void **state)
{
    static const char *const res[2][2] = {{"cpu", "cpu"}, {"gres/gpu", "gpu"}};
    const char *const sr[] = {"-P", "-n", "-t", "seconds", "-T", "cpu,gres/gpu", "-M", "alpha", "cluster", "ut",
                              "start=2026-09-01", "end=2026-10-01",
                              "format=Allocated,Down,PlannedDown,Idle,Reserved,Reported,TresName", NULL};
    const char *const first[] = {"--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z", NULL};
    const char *const su[] = {"utilization", "--summary", "-t", "hours", "--json", "-M", "alpha", "-S", "2026-09-01",
                              "-E", "2026-10-01", NULL};
    char *out = ok_run(sr), *o2, *e2;
    json_t *j;
    (void)state;
    require_archive();

    if (tu_run_report(SA_REPORT_BIN, uri, NULL, first, su, &o2, &e2) != 0)
        fail_msg("utilization --summary: %s", e2);
    assert_non_null(j = json_loads(o2, 0, NULL));
    for (int t = 0; t < 2; t++) {
        double a, d, pd, idle, pl, rep, want[6];
        char name[32], line[256];
        const char *l = out;
        for (int k = 0; k < t; k++)
            l = strchr(l, '\n') + 1;
        snprintf(line, sizeof line, "%.*s", (int)strcspn(l, "\n"), l);
        if (sscanf(line, "%lf|%lf|%lf|%lf|%lf|%lf|%31s", &a, &d, &pd, &idle, &pl, &rep, name) != 7)
            fail_msg("not a Utilization line: '%s'", line);
        assert_string_equal(name, res[t][0]);
        want[0] = tu_summary_seconds(j, res[t][1], "allocated") + tu_summary_seconds(j, res[t][1], "reserved");
        want[1] = tu_summary_seconds(j, res[t][1], "down");
        want[2] = tu_summary_seconds(j, res[t][1], "planned_down");
        want[3] = tu_summary_seconds(j, res[t][1], "idle") + tu_summary_seconds(j, res[t][1], "stranded") +
                  tu_summary_seconds(j, res[t][1], "unknown");
        want[4] = tu_summary_seconds(j, res[t][1], "planned");
        want[5] = want[0] + want[1] + want[2] + want[3] + want[4];
        printf("  %s: %s (summary: %.0f|%.0f|%.0f|%.0f|%.0f|%.0f)\n", res[t][0], line, want[0], want[1], want[2],
               want[3], want[4], want[5]);
        assert_true(rep > 0);
        if (fabs(a - want[0]) > 1 || fabs(d - want[1]) > 1 || fabs(pd - want[2]) > 1 || fabs(idle - want[3]) > 1 ||
            fabs(pl - want[4]) > 1 || fabs(rep - want[5]) > 5)
            fail_msg("%s: sreport's columns are not the summary's classes", res[t][0]);
    }
    json_decref(j);
    free(o2);
    free(e2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_words), cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_window),       cmocka_unit_test(test_time_and_tres),
        cmocka_unit_test(test_print_fields), cmocka_unit_test(test_time_text),
        cmocka_unit_test(test_golden_beta),  cmocka_unit_test(test_utilization_is_summary),
        cmocka_unit_test(test_refused),
    };
    int rc;

    if (getenv("SLURM_TEST_MONGO_URI"))
        client = tu_mongo_client("sreport", &db_name);
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = cmocka_run_group_tests_name("sreport", tests, group_setup, group_teardown);
    if (client) {
        tu_mongo_drop(client, db_name);
        mongoc_client_destroy(client);
    }
    free(db_name);
    return rc;
}
