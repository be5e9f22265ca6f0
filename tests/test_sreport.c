/*
 * test_sreport.c - `slurm-report sreport` (issue 32, item 5) through the binary: the reports'
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
        cmocka_unit_test(test_golden_beta),
        cmocka_unit_test(test_utilization_is_summary),
        cmocka_unit_test(test_refused),
    };
    int rc;

    if (getenv("SLURM_TEST_MONGO_URI"))
        client = tu_mongo_client("sreport", &db_name);
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = tu_run_group_tests("sreport", tests, group_setup, group_teardown);
    if (client) {
        tu_mongo_drop(client, db_name);
        mongoc_client_destroy(client);
    }
    free(db_name);
    return rc;
}
