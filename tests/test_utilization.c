/*
 * test_utilization.c - utilization as sreport counts it (issue 32, items 1 and 6), through
 * the binaries, on hand-written fixtures (fixtures/utilization/), every figure computed by
 * hand in the comments:
 * - slurmdbd's planned time and the runs' exact allocation (cluster plan, against the
 *   test server); the same figures as usage's; without an archive, the snapshots';
 * - the CPUs of grouped sinfo --json records (cluster grp, a time series alone).
 */
#include "testutil.h"
#include "tu_archive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <mongoc/mongoc.h>

#include "tu_rollup.h"

/* Fails unless s holds want, showing s. */
static void expect_in(const char *s, const char *want)
{
    if (!strstr(s, want))
        fail_msg("'%s' not in:\n%s", want, s);
}

/* slurm-ingest of cluster into dir (its series dir/ts.sqlite) with extra; fails unless it exits 0. */
static void ingest(const char *uri, const char *db, const char *dir, const char *cluster, const char *const *extra)
{
    char *err = NULL;
    int rc = tu_run_ingest(SA_INGEST_BIN, uri, db, dir, cluster, extra, &err);
    if (rc != 0)
        fail_msg("slurm-ingest exited %d: %s", rc, err ? err : "");
    free(err);
}

/*
 * slurm-report args (NULL-terminated) with --sqlite dir/ts.sqlite; with the archive (db)
 * when db is not NULL, else with no MongoDB URI at all. Returns its output (caller frees).
 */
static char *report(const char *uri, const char *db, const char *dir, const char *const *args)
{
    char sqlite[300], dbopt[200], *out = NULL, *err = NULL;
    const char *last[] = {"--sqlite", sqlite, db ? dbopt : NULL, NULL};
    int rc;

    snprintf(sqlite, sizeof sqlite, "%s/ts.sqlite", dir);
    snprintf(dbopt, sizeof dbopt, "--db=%s", db ? db : "");
    if (db) {
        rc = tu_run_report(SA_REPORT_BIN, uri, NULL, args, last, &out, &err);
    } else {
        char *argv[40];
        size_t n = 0;
        argv[n++] = (char *)SA_REPORT_BIN;
        for (; *args; args++)
            argv[n++] = (char *)*args;
        argv[n++] = (char *)"--sqlite";
        argv[n++] = sqlite;
        argv[n] = NULL;
        rc = tu_run(argv, NULL, &out, &err);
    }
    if (rc != 0)
        fail_msg("slurm-report exited %d: %s", rc, err ? err : "");
    free(err);
    return out;
}


/*
 * Cluster plan, 2026-10-04 from 10:00 to 12:00 (fixtures/utilization: two IDLE nodes of 8
 * CPUs, snapshots at 10:00 and 12:00 with a gap limit of 3 h: the series knows the two
 * hours; sacct at 12:00). Capacity 16 CPUs x 2 h = 32 core-hours.
 * Allocated (the runs): 201, 4 CPUs from 10:40 to 11:40 (1.33 in hour 10, 2.67 in hour
 * 11); 206, 12 CPUs from 11:00, running at the last observation 12:00 (12 in hour 11):
 * 16 core-hours, usage's.
 * Planned, slurmdbd's rule, hour 10 (16 - 1.33 = 14.67 idle): 201 eligible 10:10, started
 * 10:40: 4 x 30 min = 2; 202 pending from 10:30: 8 x 30 min = 4; 203 eligible 10:00,
 * cancelled 11:30 without starting: 2 x 60 min = 2; 206 eligible 10:50, started 11:00: 12
 * x 10 min = 2; 205 is in a reservation: none. 10 in all, under the idle time.
 * Hour 11 (16 - 2.67 - 12 = 1.33 idle): 202 8 x 60 min = 8; 203 2 x 30 min = 1; 204, 3
 * pending array tasks of 1 CPU from 11:00: 3 x 60 min = 3: 12, capped at the 1.33 idle.
 * Planned 10 + 1.33 = 11.33 of 22; idle 14.67 - 10 + 0 = 4.67. Percent of 32: allocated
 * 50.00, idle 14.58, planned 35.42.
 * Memory: 2 x 32000 MB = 62.5 GB x 2 h = 125 GB-hours; allocated 4 GB x 1 h + 12 GB x 1 h
 * = 16, idle 109.
 */
static void test_planned(void **state)
{
    char *db = NULL, dir[] = "/tmp/sa-util-XXXXXX", *out;
    mongoc_client_t *client = tu_mongo_client("test_utilization", &db);
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    char nodes[300], sacct[300];
    const char *sum[] = {"utilization", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00", "--summary",
                         "-t", "hours", "-P", NULL};
    const char *pct[] = {"utilization", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00", "--summary",
                         "-P", "-n", NULL};
    const char *tab[] = {"utilization", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00", "-P", "-n",
                         "-o", "gpu_type,state,cpu_hours,cpu_alloc_hours,cpu_idle_hours", NULL};
    const char *use[] = {"usage", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00", "-T", "cpu",
                         "-t", "hours", "-P", "-n", "-o", "account,core_hours", NULL};
    (void)state;

    if (!client)
        skip();
    assert_non_null(mkdtemp(dir));
    snprintf(nodes, sizeof nodes, "%s", tu_fixture("utilization/nodes.txt"));
    snprintf(sacct, sizeof sacct, "%s", tu_fixture("utilization/sacct.txt"));
    {
        const char *a[] = {"--max-gap", "3h", "--sinfo", nodes, "--at", "2026-10-04T10:00:00Z", NULL};
        const char *b[] = {"--max-gap", "3h", "--sinfo", nodes, "--sacct", sacct, "--at", "2026-10-04T12:00:00Z",
                           NULL};
        ingest(uri, db, dir, "plan", a);
        ingest(uri, db, dir, "plan", b);
    }
    out = report(uri, db, dir, sum);
    expect_in(out, "cluster|resource|gpu_type|capacity_hours|allocated_hours|idle_hours|planned_hours|");
    expect_in(out, "plan|cpu|*|32.00|16.00|4.67|11.33|0.00|0.00|0.00|0.00|0.00\n");
    expect_in(out, "plan|mem|*|125.00|16.00|109.00|0.00|");
    free(out);
    out = report(uri, db, dir, pct);
    expect_in(out, "plan|cpu|*|32.00|50.00|14.58|35.42|0.00|0.00|0.00|0.00|0.00\n");
    free(out);
    /* the header says the rule and what it read: 202, 203, 204 and 205 from their lists (205 then left out) */
    {
        const char *v[] = {"utilization", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00",
                           "--summary", NULL};
        out = report(uri, db, dir, v);
        expect_in(out, "plan: planned 11.33 CPU-hours of the 22.00 the pending jobs waited");
        expect_in(out, "4 job(s) that never started (0 of them from their documents)");
        expect_in(out, "Planned (CPUs, as slurmdbd's hourly rollup counts it)");
        free(out);
        /* lists as 0.5.0 wrote them (no planned fields): the same figures from the 4 documents, and the verify holds */
        assert_true(tu_rollup_store_as_05(client, db, "plan") >= 2); /* the live list, the ended list of 10-04, ... */
        out = report(uri, db, dir, v);
        expect_in(out, "plan: planned 11.33 CPU-hours of the 22.00 the pending jobs waited");
        expect_in(out, "4 job(s) that never started (4 of them from their documents)");
        free(out);
        {
            const char *verify[] = {"rollup", NULL};
            char *err = NULL;
            int rc = tu_run_ingest(SA_INGEST_BIN, uri, db, dir, "plan", verify, &err);
            if (rc != 0)
                fail_msg("slurm-ingest rollup exited %d: %s", rc, err ? err : "");
            free(err);
        }
    }
    /* the table: the runs' 16 core-hours on the IDLE nodes (the snapshots saw none), usage's 16 */
    out = report(uri, db, dir, tab);
    expect_in(out, "*|IDLE|32.00|16.00|16.00\n");
    free(out);
    out = report(uri, db, dir, use);
    expect_in(out, "phys|16.00\n");
    free(out);
    /* without an archive: the snapshots' allocation (none: both nodes IDLE at 10:00 and 12:00), no planned time */
    {
        const char *n[] = {"utilization", "-M", "plan", "-S", "2026-10-04T10:00", "-E", "2026-10-04T12:00",
                           "--summary", "-t", "hours", NULL};
        out = report(uri, NULL, dir, n);
        expect_in(out, "plan: allocated time: the snapshots' (a job's start and end move to the poll times): no "
                       "archive was given");
        expect_in(out, "plan: planned not counted");
        expect_in(out, "plan     cpu       *              32.00         0.00   32.00");
        free(out);
    }
    tu_mongo_drop(client, db);
    mongoc_client_destroy(client);
    free(db);
    tu_rm_rf(dir);
}

/*
 * Cluster grp, one hour of fixtures/utilization/sinfo-grouped.json (snapshots at 10:00 and
 * 11:00), 8 nodes of 8 CPUs: 64 core-hours, none lost to unknown counts.
 * - a[1-3] IDLE, 24 CPUs all idle: each node's 8 idle;
 * - b[1-2] MIXED, 6 allocated and 10 idle: split (3 + 3 allocated, 5 + 5 idle);
 * - d[1-2] (p1) MIXED+DRAIN, 4 allocated, 12 other, split (2 + 2, 6 + 6); d[2-3] (p2) shares d2:
 *   not split, d3's 8 CPUs nobody said.
 * Without an archive (the snapshots' allocation): allocated 6 + 4 = 10 (15.625 %, printed
 * 15.62), idle 24 + 10 = 34 (53.125 %), down (the drained nodes' other CPUs) 12 (18.75 %),
 * unknown d3's 8 (12.50 %). Split: b1, b2, d1, d2: 32 core-hours.
 */
static void test_grouped_cpus(void **state)
{
    char dir[] = "/tmp/sa-util-grp-XXXXXX", *out, sinfo[300];
    const char *sum[] = {"utilization", "-M", "grp", "-S", "2026-10-04T10:00", "-E", "2026-10-04T11:00", "--summary",
                         "--json", NULL};
    const char *pct[] = {"utilization", "-M", "grp", "-S", "2026-10-04T10:00", "-E", "2026-10-04T11:00", "--summary",
                         "-P", "-n", NULL};
    (void)state;

    assert_non_null(mkdtemp(dir));
    snprintf(sinfo, sizeof sinfo, "%s", tu_fixture("utilization/sinfo-grouped.json"));
    {
        const char *a[] = {"--no-mongo", "--max-gap", "2h", "--sinfo", sinfo, "--at", "2026-10-04T10:00:00Z", NULL};
        const char *b[] = {"--no-mongo", "--max-gap", "2h", "--sinfo", sinfo, "--at", "2026-10-04T11:00:00Z", NULL};
        ingest("", "unused", dir, "grp", a);
        ingest("", "unused", dir, "grp", b);
    }
    out = report(NULL, NULL, dir, pct);
    expect_in(out, "grp|cpu|*|64.00|15.62|53.12|0.00|0.00|18.75|0.00|0.00|12.50\n");
    free(out);
    out = report(NULL, NULL, dir, sum);
    {
        json_error_t je;
        json_t *doc = json_loads(out, 0, &je), *cl, *line;
        char *header = NULL;
        size_t i, len = 0;
        FILE *m = open_memstream(&header, &len);
        if (!doc)
            fail_msg("not JSON: %s", je.text);
        cl = json_array_get(json_object_get(doc, "clusters"), 0);
        assert_true(json_number_value(json_object_get(cl, "cpu_split_hours")) == 32);
        assert_true(json_number_value(json_object_get(cl, "cpu_unknown_hours")) == 8);
        json_array_foreach(json_object_get(doc, "header"), i, line)
            fprintf(m, "%s\n", json_string_value(line));
        fclose(m);
        expect_in(header, "grp: 32.00 CPU-hours are of nodes in grouped sinfo --json records of several states: "
                          "their counts are their record's sums split over its nodes");
        expect_in(header, "grp: 8.00 CPU-hours are of nodes whose CPU counts no snapshot said");
        free(header);
        json_decref(doc);
    }
    free(out);
    tu_rm_rf(dir);
}

int main(void)
{
    /* "without an archive" means none in the environment either (the archive case passes its URI explicitly) */
    unsetenv("SLURM_REPORT_MONGO_URI");
    unsetenv("SLURM_INGEST_MONGO_URI");
    unsetenv("CREDENTIALS_DIRECTORY");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planned),
        cmocka_unit_test(test_grouped_cpus),
    };
    return tu_run_group_tests("utilization", tests, NULL, NULL);
}
