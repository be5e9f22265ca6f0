/*
 * test_report.c - slurm-report: golden outputs of every report and format on a
 * dataset ingested through the real ingest code (fixtures/report-dataset.json lists
 * the Slurm output and the order), exact numbers of the accounting rules, the
 * allocations arithmetic, the helpers (time parsing, hostlists, RGU weights, CSV
 * quoting) and the command line (exit codes, -o, no URI in messages).
 *
 * Golden files live in fixtures/golden/. The test only compares; `test_report
 * --update` (or SA_UPDATE_GOLDEN=1) rewrites them from the current output - review
 * the diff before committing.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_alloc.h"
#include "sa_archive.h"
#include "sa_ingest.h"
#include "sa_report.h"
#include "sa_rgu.h"
#include "sa_rtable.h"
#include "sa_rutil.h"

static char *uri;
static char *db_name;
static mongoc_client_t *client;
static char sqlite_path[64] = "";
static int64_t now_t;
static bool update_golden;
static int golden_written;

/* ---- the dataset: tests/report_dataset.h ---- */

#include "report_dataset.h"

static int group_setup(void **state)
{
    (void)state;
    now_t = rd_setup(uri, db_name, sqlite_path, "/tmp/sa-test-report-XXXXXX");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    rd_remove_sqlite(sqlite_path);
    return 0;
}

static const char *temp_file(const char *text);
static int run_cli(const char *const *args, char **out, char **err);

/* ---- running reports ------------------------------------------------------------------------ */

typedef enum { R_USAGE, R_UTIL, R_HEALTH, R_CURRENT } rkind_t;

static void opts_init(sa_report_opts_t *o, sa_format_t fmt)
{
    sa_report_opts_init(o);
    o->mongo_uri = uri;
    o->db_name = db_name;
    o->sqlite_path = sqlite_path;
    o->now = now_t;
    o->format = fmt;
}

/* Runs a report into a string (caller frees); fails the test on error. *healthy may be NULL. */
static char *run_report(rkind_t kind, const sa_report_opts_t *o, bool *healthy)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    sa_error_t err;
    bool ok, h = true;

    switch (kind) {
    case R_USAGE: ok = sa_report_usage(o, out, NULL, &err); break;
    case R_UTIL: ok = sa_report_utilization(o, out, NULL, &err); break;
    case R_HEALTH: ok = sa_report_health(o, out, NULL, &h, &err); break;
    default: ok = sa_report_current(o, out, NULL, &err); break;
    }
    fclose(out);
    if (!ok)
        fail_msg("report failed: %s", err.message);
    if (healthy)
        *healthy = h;
    return buf;
}

/* Compares got with fixtures/golden/name (or rewrites it in update mode). */
static void golden(const char *name, const char *got)
{
    char *path = sa_rprintf("%s/golden/%s", SA_FIXTURES_DIR, name);
    struct stat st;

    if (update_golden) {
        FILE *f = fopen(path, "w");
        if (!f || fputs(got, f) < 0 || fclose(f) != 0)
            fail_msg("writing %s: %s", path, strerror(errno));
        golden_written++;
    } else {
        char *want, gotpath[128];
        if (stat(path, &st) != 0)
            fail_msg("%s is missing: run `test_report --update` to create it", path);
        want = tu_read_file(path, NULL);
        if (strcmp(want, got) != 0) {
            FILE *f;
            snprintf(gotpath, sizeof gotpath, "/tmp/sa-report-got-%s", name);
            f = fopen(gotpath, "w");
            if (f) {
                fputs(got, f);
                fclose(f);
            }
            free(want);
            fail_msg("output differs from %s; see: diff -u %s %s", path, path, gotpath);
        }
        free(want);
    }
    free(path);
}

/* Runs one report in several formats against golden files base.<format>. */
static void golden_formats(rkind_t kind, const char *base, sa_report_opts_t *o, const sa_format_t *fmts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[128];
        char *got;
        o->format = fmts[i];
        snprintf(name, sizeof name, "%s.%s", base, sa_format_name(fmts[i]));
        got = run_report(kind, o, NULL);
        golden(name, got);
        free(got);
    }
}

/* The JSON rows of a report. */
static json_t *report_json(rkind_t kind, sa_report_opts_t *o)
{
    char *s;
    json_t *doc;
    json_error_t jerr;
    o->format = SA_FMT_JSON;
    s = run_report(kind, o, NULL);
    doc = json_loads(s, 0, &jerr);
    if (!doc)
        fail_msg("report JSON does not parse: %s: %s", jerr.text, s);
    free(s);
    return doc;
}

/* The row of a JSON report whose keys equal the given ones ("cluster", "alpha", "account", "chem", NULL). */
static json_t *find_row(json_t *doc, ...)
{
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(doc, "rows"), i, row) {
        va_list ap;
        const char *k;
        bool all = true;
        va_start(ap, doc);
        while ((k = va_arg(ap, const char *))) {
            const char *v = va_arg(ap, const char *);
            if (!json_is_string(json_object_get(row, k)) || strcmp(json_string_value(json_object_get(row, k)), v))
                all = false;
        }
        va_end(ap);
        if (all)
            return row;
    }
    return NULL;
}

static double num(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    if (!json_is_number(v))
        fail_msg("no number %s", key);
    return json_number_value(v);
}

static const sa_format_t ALL_USAGE[] = {SA_FMT_TABLE, SA_FMT_PARSABLE, SA_FMT_CSV, SA_FMT_JSON, SA_FMT_SVG, SA_FMT_HTML};
static const sa_format_t TABLES[] = {SA_FMT_TABLE, SA_FMT_PARSABLE, SA_FMT_CSV, SA_FMT_JSON, SA_FMT_HTML};

/* ---- the accounting rules, by number ---------------------------------------------------------- */

static void test_usage_numbers(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *row;
    (void)state;

    opts_init(&o, SA_FMT_JSON);
    sa_rmonth_parse("2026-09", &o.start, &o.end);
    doc = report_json(R_USAGE, &o);
    assert_int_equal(json_integer_value(json_object_get(doc, "hours_per_gpu_year")), 8760);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "period"), "start")),
                        "2026-09-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "period"), "end")),
                        "2026-10-01T00:00:00Z");
    /* physics: 101 (12 h x 4 in the window) 48 + 103 (6 + 2) 8 + 107 (6 h x 2) 12 + 108 first job 4
     * + 112 (untyped, 5 h x 2) 10 + 113 (11:00 -> 00:00, 1 GPU) 13; 105 CPU-only and 109 pending: 0 */
    assert_non_null(row = find_row(doc, "cluster", "alpha", "account", "physics", NULL));
    assert_true(fabs(num(row, "gpu_hours") - 95) < 1e-9);
    assert_true(fabs(num(row, "gpu_years") - 95.0 / 8760) < 1e-12);
    /* chem: 102 20 + 106 24 + 108 second job 4 + 110 2 */
    assert_non_null(row = find_row(doc, "cluster", "alpha", "account", "chem", NULL));
    assert_true(fabs(num(row, "gpu_hours") - 50) < 1e-9);
    /* bio: 104 running since 09-29 on 8 GPUs, to the window end: 384; 111 vanished at 12:00 after 2 h: 2 */
    assert_non_null(row = find_row(doc, "cluster", "alpha", "account", "bio", NULL));
    assert_true(fabs(num(row, "gpu_hours") - 386) < 1e-9);
    assert_non_null(row = find_row(doc, "cluster", "beta", "account", "lab,\"q\"<b>&", NULL));
    assert_true(fabs(num(row, "gpu_hours") - 3) < 1e-9);
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 5);
    json_decref(doc);

    /* by GPU type: the untyped run on gpu02 is h100 from the series; untyped on the MIG node and on the
     * untyped node are unknown */
    o.by = SA_BY_GPU_TYPE;
    sa_strv_push(&o.clusters, "alpha");
    doc = report_json(R_USAGE, &o);
    assert_true(fabs(num(find_row(doc, "gpu_type", "h100", NULL), "gpu_hours") - 406) < 1e-9);
    assert_true(fabs(num(find_row(doc, "gpu_type", "a100", NULL), "gpu_hours") - 89) < 1e-9);
    assert_true(fabs(num(find_row(doc, "gpu_type", "a100_3g.20gb", NULL), "gpu_hours") - 24) < 1e-9);
    assert_true(fabs(num(find_row(doc, "gpu_type", "unknown", NULL), "gpu_hours") - 12) < 1e-9);
    json_decref(doc);

    /* a window past the last observation: 104 counts to 10-01T08:00 (56 h x 8), 113 to the PENDING
     * of its history (21 h), 107 12 h x 2 */
    o.by = SA_BY_GPU_TYPE;
    o.start = rd_iso("2026-09-25");
    o.end = rd_iso("2026-10-15");
    o.unit = SA_UNIT_GPU_HOURS;
    doc = report_json(R_USAGE, &o);
    assert_true(fabs(num(find_row(doc, "gpu_type", "h100", NULL), "gpu_hours") - 450) < 1e-9);
    assert_true(fabs(num(find_row(doc, "gpu_type", "a100", NULL), "gpu_hours") - 45) < 1e-9);
    json_decref(doc);

    /* RGU: MIG 3g.20gb weighs 2.0, h100 12.2, a100 4.0; unknown has no weight */
    o.start = rd_iso("2026-09-01");
    o.end = rd_iso("2026-10-01");
    o.unit = SA_UNIT_RGU_YEARS;
    doc = report_json(R_USAGE, &o);
    assert_true(fabs(num(find_row(doc, "gpu_type", "a100_3g.20gb", NULL), "rgu_years") - 24 * 2.0 / 8760) < 1e-12);
    assert_true(fabs(num(find_row(doc, "gpu_type", "h100", NULL), "rgu_years") - 406 * 12.2 / 8760) < 1e-12);
    assert_true(fabs(num(find_row(doc, "gpu_type", "unknown", NULL), "gpu_hours_unweighted") - 12) < 1e-9);
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "unweighted_gpu_types"), 0)), "unknown");
    json_decref(doc);

    /* --year-days 365.25: 8766 hours */
    o.unit = SA_UNIT_GPU_YEARS;
    o.year_days = 365.25;
    o.by = 0;
    doc = report_json(R_USAGE, &o);
    assert_true(fabs(num(doc, "hours_per_gpu_year") - 8766) < 1e-9);
    assert_true(fabs(num(find_row(doc, "account", "bio", NULL), "gpu_years") - 386 / 8766.0) < 1e-12);
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/*
 * A run left without an end by a job pending again (requeued) ends at the PENDING of its
 * history, not at the cluster's last observation: the first pass does not fetch the
 * history, so the scan reads such a document again by its _id (a string since 0.2).
 * A database of its own: job 501 (1 a100) runs from 10:00, is pending again from 12:00:01
 * (BeginTime; the snapshot of 12:00:00 lists it with that submit time: its capture began a
 * second before slurmctld requeued it, and the PENDING entry takes slurmctld's time), still
 * pending at 15:00, the cluster's last snapshot.
 */
static void test_usage_pending_again(void **state)
{
    static const char *const snaps[3] = {
        "{\"jobs\":[{\"job_id\":501,\"job_state\":\"RUNNING\",\"user_name\":\"ann\",\"account\":\"geo\","
        "\"submit_time\":1790845200,\"start_time\":1790848800,\"end_time\":1790935200,\"time_limit\":1440,"
        "\"restart_cnt\":0,\"nodes\":\"gpu09\",\"node_count\":1,"
        "\"tres_alloc_str\":\"cpu=4,node=1,gres/gpu=1,gres/gpu:a100=1\"}]}",
        "{\"jobs\":[{\"job_id\":501,\"job_state\":[\"PENDING\",\"REQUEUED\"],\"state_reason\":\"BeginTime\","
        "\"user_name\":\"ann\",\"account\":\"geo\",\"submit_time\":1790856001,\"time_limit\":1440,"
        "\"restart_cnt\":1,\"nodes\":\"\"}]}",
        NULL};
    const int64_t at[3] = {1790852400, 1790856000, 1790866800}; /* 11:00, 12:00, 15:00 on 2026-10-01 */
    char *db = sa_rprintf("%s_again", db_name), *note = NULL;
    sa_archive_t *a;
    sa_report_opts_t o;
    sa_error_t err;
    json_t *doc, *t;
    (void)state;

    if (!(a = sa_archive_open(uri, db, &note, &err)))
        fail_msg("sa_archive_open: %s", err.message);
    free(note);
    for (int i = 0; i < 3; i++) {
        const char *text = snaps[i] ? snaps[i] : snaps[1]; /* 15:00: still pending */
        sa_obs_ctx_t ctx = {"gamma", at[i], NULL, NULL};
        sa_archive_stats_t st = {0};
        tu_parsed_t p;
        if (!tu_parse_mem(text, strlen(text), NULL, &p, &err) ||
            !sa_archive_write_jobs(a, NULL, &ctx, p.jobs, p.njobs, &st, &err))
            fail_msg("ingest: %s", err.message);
        tu_parsed_clear(&p);
    }
    t = json_pack("{s:I}", "last_squeue_at", (json_int_t)at[2]);
    assert_true(sa_archive_cluster_update(a, "gamma", t, NULL, &err));
    json_decref(t);
    sa_archive_close(a);

    opts_init(&o, SA_FMT_JSON);
    o.db_name = db;
    o.start = rd_iso("2026-10-01");
    o.end = rd_iso("2026-10-02");
    o.unit = SA_UNIT_GPU_HOURS;
    doc = report_json(R_USAGE, &o);
    /* 10:00 -> 12:00:01 on one GPU; to the last snapshot (15:00) it would be 5 */
    assert_true(fabs(num(find_row(doc, "cluster", "gamma", "account", "geo", NULL), "gpu_hours") - (2 + 1 / 3600.0)) <
                1e-9);
    json_decref(doc);
    sa_report_opts_clear(&o);
    tu_mongo_drop(client, db);
    free(db);
}

/*
 * CSV injection (issue 22): an account and a user whose names a spreadsheet would run
 * as formulas are written as text in --csv and in the site's CSV files. A database of
 * its own: job 601 of account "=1+2" and user "@me" runs on cluster delta from 10:00
 * to 12:00 on 2026-10-01.
 */
static void test_csv_formula_names(void **state)
{
    static const char snap[] =
        "{\"jobs\":[{\"job_id\":601,\"job_state\":\"RUNNING\",\"user_name\":\"@me\",\"account\":\"=1+2\","
        "\"name\":\"-cmd|' /C calc'!A0\",\"submit_time\":1790845200,\"start_time\":1790848800,"
        "\"end_time\":1790935200,\"time_limit\":1440,\"restart_cnt\":0,\"nodes\":\"gpu09\",\"node_count\":1,"
        "\"tres_alloc_str\":\"cpu=4,node=1,gres/gpu=1,gres/gpu:a100=1\"}]}";
    const int64_t at[2] = {1790848800, 1790856000}; /* 10:00, 12:00 */
    char *db = sa_rprintf("%s_csv", db_name), *note = NULL, dir[] = "/tmp/sa-test-report-site-XXXXXX", *csv, *path;
    char *out, *err;
    sa_archive_t *a;
    sa_error_t e;
    json_t *t;
    (void)state;

    if (!(a = sa_archive_open(uri, db, &note, &e)))
        fail_msg("sa_archive_open: %s", e.message);
    free(note);
    for (int i = 0; i < 2; i++) {
        sa_obs_ctx_t ctx = {"delta", at[i], NULL, NULL};
        sa_archive_stats_t st = {0};
        tu_parsed_t p;
        if (!tu_parse_mem(snap, strlen(snap), NULL, &p, &e) ||
            !sa_archive_write_jobs(a, NULL, &ctx, p.jobs, p.njobs, &st, &e))
            fail_msg("ingest: %s", e.message);
        tu_parsed_clear(&p);
    }
    t = json_pack("{s:I}", "last_squeue_at", (json_int_t)at[1]);
    assert_true(sa_archive_cluster_update(a, "delta", t, NULL, &e));
    json_decref(t);
    sa_archive_close(a);

    {
        const char *args[] = {"--db", db, "-S", "2026-10-01", "-E", "2026-10-02", "--by", "account,user", "--csv",
                              "-t", "hours", "-o", "cluster,account,user,gpu_hours", NULL};
        assert_int_equal(run_cli(args, &out, &err), 0);
        assert_string_equal(out, "cluster,account,user,gpu_hours\r\ndelta,\"'=1+2\",\"'@me\",2.00\r\n");
        free(out);
        free(err);
    }
    assert_non_null(mkdtemp(dir));
    path = sa_rprintf("%s/site", dir);
    {
        const char *args[] = {"site", path, "--db", db, "--sqlite", sqlite_path, "--now", "2026-10-01T13:00:00Z",
                              "--months", "1", NULL};
        int rc = run_cli(args, &out, &err);
        if (rc != 0)
            fail_msg("slurm-report site: exit %d: %s", rc, err);
        free(out);
        free(err);
    }
    free(path);
    path = sa_rprintf("%s/site/delta/index.usage.csv", dir);
    csv = tu_read_file(path, NULL);
    if (!strstr(csv, "\r\ndelta,\"'=1+2\",") || strstr(csv, ",=1+2"))
        fail_msg("%s does not write the account as text:\n%s", path, csv);
    free(csv);
    free(path);
    {
        char *argv[] = {(char *)"/bin/rm", (char *)"-rf", dir, NULL};
        tu_run(argv, NULL, &out, &err);
        free(out);
        free(err);
    }
    tu_mongo_drop(client, db);
    free(db);
}

static void test_allocation_numbers(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *row;
    char *path = rd_fixture("allocations-example.json");
    double frac;
    (void)state;

    opts_init(&o, SA_FMT_JSON);
    sa_rmonth_parse("2026-09", &o.start, &o.end);
    o.allocations_path = path;
    doc = report_json(R_USAGE, &o);
    /* physics: 1 GPU-year from 2026-04-01 to 2027-04-01 (365 days), as of the window end 10-01 */
    row = find_row(doc, "cluster", "alpha", "account", "physics", NULL);
    assert_non_null(row);
    frac = (double)(rd_iso("2026-10-01") - rd_iso("2026-04-01")) / (365.0 * 86400);
    assert_true(fabs(num(row, "target_to_date") - frac) < 1e-12);
    /* since the start: 101 in August too (48 more) */
    assert_true(fabs(num(row, "used_since_start") - (95.0 + 48) / 8760) < 1e-12);
    assert_true(fabs(num(row, "used_window") - 95.0 / 8760) < 1e-12);
    assert_true(fabs(num(row, "percent_of_target") - 100 * (143.0 / 8760) / frac) < 1e-9);
    /* recent rate: the last 30 days (09-01 .. 10-01) = the window's 95 h; 182 days left */
    assert_true(fabs(num(row, "projected_at_end") -
                     (143.0 / 8760 + 95.0 / 8760 / (30 * 86400.0) * (double)(rd_iso("2027-04-01") - rd_iso("2026-10-01")))) <
                1e-12);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "under");
    assert_string_equal(json_string_value(json_object_get(row, "note")), "RAC 2026 <b>\"physics\" & co</b>");
    /* bio: h100 only, 0.05 GPU-years from 09-01: 386 h in 30 days of 365 -> far over */
    row = find_row(doc, "account", "bio", NULL);
    assert_string_equal(json_string_value(json_object_get(row, "gpu_type")), "h100");
    assert_string_equal(json_string_value(json_object_get(row, "status")), "over");
    /* chem in RGU-years: 102 h100 20 h x 12.2 + 106 MIG 24 h x 2.0 + 108 a100 4 h x 4.0; 110 unknown unweighted */
    row = find_row(doc, "account", "chem", NULL);
    assert_true(fabs(num(row, "used_since_start") - (20 * 12.2 + 24 * 2.0 + 4 * 4.0) / 8760) < 1e-12);
    assert_true(fabs(num(row, "gpu_hours_unweighted") - 2) < 1e-9);
    /*
     * physics' core-year award, 2 core-years from 09-01 (after its GPU award: same account, later start): alice's
     * 101 (32 CPUs, 12 h in September) 384 + 105 (32 CPUs, no GPU, 24 h) 768 + 108 (8 x 4 h) 32 + 107 (16 x 6 h)
     * 96 + 112 (8 x 5 h) 40, and carol's 168 (103: 8 x 6 h + 8 x 2 h = 64, 113: 104) = 1488 core-hours; target
     * 2 x 30 / 365; projection at the 30 days' rate over the 335 days left: 1488 x (1 + 335 / 30) / 8760 = 2.067,
     * past the award: over pace
     */
    {
        json_t *rows = json_object_get(doc, "rows");
        size_t i;
        row = NULL;
        json_array_foreach(rows, i, row) {
            const char *unit = json_string_value(json_object_get(row, "award_unit"));
            if (unit && strcmp(unit, "core-years") == 0)
                break;
        }
        assert_true(i < json_array_size(rows));
        assert_string_equal(json_string_value(json_object_get(row, "account")), "physics");
        assert_true(fabs(num(row, "used_since_start") - 1488.0 / 8760) < 1e-12);
        assert_true(fabs(num(row, "core_hours") - 1488.0) < 1e-9);
        assert_true(fabs(num(row, "target_to_date") - 2.0 * 30 / 365) < 1e-12);
        assert_true(fabs(num(row, "projected_at_end") - 1488.0 * (1 + 335.0 / 30) / 8760) < 1e-9);
        assert_string_equal(json_string_value(json_object_get(row, "status")), "over pace");
    }
    /* the award that ended before the window is not reported; the beta account without award is */
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 6);
    row = find_row(doc, "cluster", "beta", "account", "lab,\"q\"<b>&", NULL);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "no award");
    json_decref(doc);
    sa_report_opts_clear(&o);
    free(path);
}

/* ---- golden outputs ------------------------------------------------------------------------------ */

static void test_golden_usage(void **state)
{
    sa_report_opts_t o;
    char *alloc = rd_fixture("allocations-example.json");
    (void)state;

    opts_init(&o, SA_FMT_TABLE);
    sa_rmonth_parse("2026-09", &o.start, &o.end);
    golden_formats(R_USAGE, "usage-month", &o, ALL_USAGE, 6);

    o.allocations_path = alloc;
    golden_formats(R_USAGE, "usage-allocations", &o, ALL_USAGE, 6);
    o.allocations_path = NULL;

    o.by = SA_BY_USER | SA_BY_GPU_TYPE;
    o.unit = SA_UNIT_RGU_YEARS;
    golden_formats(R_USAGE, "usage-user-type-rgu", &o, TABLES, 4);

    o.by = SA_BY_GPU_TYPE;
    o.unit = SA_UNIT_GPU_HOURS;
    o.start = rd_iso("2026-09-25");
    o.end = rd_iso("2026-10-15");
    sa_strv_push(&o.clusters, "alpha");
    golden_formats(R_USAGE, "usage-running", &o, ALL_USAGE, 6);
    sa_report_opts_clear(&o);

    /* an empty window */
    opts_init(&o, SA_FMT_TABLE);
    sa_rmonth_parse("2025-01", &o.start, &o.end);
    golden_formats(R_USAGE, "usage-empty", &o, ALL_USAGE, 6);
    sa_report_opts_clear(&o);

    /* filters, no header */
    opts_init(&o, SA_FMT_TABLE);
    sa_rmonth_parse("2026-09", &o.start, &o.end);
    sa_strv_push(&o.accounts, "physics");
    sa_strv_push(&o.users, "alice");
    o.by = SA_BY_ACCOUNT | SA_BY_USER;
    o.no_header = true;
    golden_formats(R_USAGE, "usage-filtered-noheader", &o, TABLES, 3);
    sa_report_opts_clear(&o);
    free(alloc);
}

static void test_golden_utilization(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *row;
    (void)state;

    opts_init(&o, SA_FMT_TABLE);
    sa_rmonth_parse("2026-09", &o.start, &o.end);
    golden_formats(R_UTIL, "utilization", &o, TABLES, 5);
    doc = report_json(R_UTIL, &o);
    /* 09-20 00:00-02:00 (24 intervals of 5 min, 2 h): gpu03 IDLE+DRAIN, 4 h100 idle -> 8 GPU-h down (drained,
     * as sreport counts it); gpux1 DOWN: 2 untyped idle -> 4 down */
    row = find_row(doc, "gpu_type", "h100", "state", "IDLE+DRAIN", NULL);
    assert_non_null(row);
    assert_true(fabs(num(row, "gpu_unusable_hours") - 8) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(row, "class")), "down");
    assert_string_equal(json_string_value(json_object_get(row, "reason")), "node drained");
    /* gpu01 ALLOCATED, 4 a100: the runs had 2 (108, 00:10-02:10: 2 x 110 min = 3.67 GPU-h, usage's figure), the
     * rest of its 8 GPU-hours, 4.33, stranded: no free CPU */
    row = find_row(doc, "gpu_type", "a100", "state", "ALLOCATED", NULL);
    assert_true(fabs(num(row, "gpu_alloc_hours") - 2 * 110 / 60.0) < 1e-9);
    assert_true(fabs(num(row, "gpu_unusable_hours") - (8 - 2 * 110 / 60.0)) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(row, "class")), "allocated+stranded");
    assert_string_equal(json_string_value(json_object_get(row, "reason")), "no free CPU");
    row = find_row(doc, "gpu_type", "h100", "state", "IDLE", NULL);
    assert_string_equal(json_string_value(json_object_get(row, "class")), "idle");
    assert_true(json_is_null(json_object_get(row, "reason")));
    row = find_row(doc, "gpu_type", "(untyped)", "state", "DOWN+NOT_RESPONDING", NULL);
    assert_string_equal(json_string_value(json_object_get(row, "class")), "down");
    assert_string_equal(json_string_value(json_object_get(row, "reason")), "node down");
    /* the allocation is the runs' (the archive has alpha) */
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "clusters"), 0),
                                                          "allocation")), "runs");
    json_decref(doc);
    sa_report_opts_clear(&o);
}

static void test_golden_health(void **state)
{
    sa_report_opts_t o;
    bool healthy = true;
    char *s;
    (void)state;

    opts_init(&o, SA_FMT_TABLE);
    golden_formats(R_HEALTH, "health", &o, TABLES, 5);
    s = run_report(R_HEALTH, &o, &healthy);
    assert_false(healthy);
    assert_non_null(strstr(s, "vanished-job"));
    assert_non_null(strstr(s, "job 111"));
    assert_non_null(strstr(s, "failed-ingest"));
    free(s);
    /* a cluster with nothing wrong: healthy */
    sa_strv_push(&o.clusters, "alpha");
    o.now = rd_iso("2026-10-01T08:10:00");
    o.start = rd_iso("2026-10-01T07:45:00");
    o.stale_s = 30 * 86400; /* the vanished job is then young enough to wait for sacct... */
    s = run_report(R_HEALTH, &o, &healthy);
    /* ...but sacct ran after it vanished: still an error */
    assert_false(healthy);
    free(s);
    sa_strv_clear(&o.clusters);
    sa_strv_init(&o.clusters);
    sa_strv_push(&o.clusters, "beta");
    o.now = rd_iso("2026-09-30T00:30:00");
    o.start = SA_UNSET;
    o.stale_s = 3600;
    s = run_report(R_HEALTH, &o, &healthy);
    assert_true(healthy);
    free(s);
    sa_report_opts_clear(&o);
}

/*
 * `promtool check metrics` (Debian's prometheus package; tools/install-deps) accepts
 * the text: the exposition format and the naming rules. Says so when promtool is missing.
 */
static void promtool_check(const char *text)
{
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", NULL, NULL};
    char *out, *err, cmd[256];
    const char *path = temp_file(text);
    int rc;

    if (access("/usr/bin/promtool", X_OK) != 0) {
        printf("note: /usr/bin/promtool is missing (apt-get install prometheus, or tools/install-deps): the metrics "
               "were not checked by promtool\n");
        unlink(path);
        return;
    }
    snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < '%s'", path);
    argv[2] = cmd;
    rc = tu_run(argv, NULL, &out, &err);
    unlink(path);
    if (rc != 0)
        fail_msg("promtool check metrics: exit %d: %s%s", rc, out, err);
    printf("promtool check metrics: ok\n");
    free(out);
    free(err);
}

static void test_golden_current(void **state)
{
    static const sa_format_t fmts[] = {SA_FMT_TABLE, SA_FMT_CSV, SA_FMT_JSON, SA_FMT_PROMETHEUS};
    sa_report_opts_t o;
    char *s;
    (void)state;

    opts_init(&o, SA_FMT_TABLE);
    golden_formats(R_CURRENT, "current", &o, fmts, 4);
    o.format = SA_FMT_PROMETHEUS;
    s = run_report(R_CURRENT, &o, NULL);
    /* 104 running, 109 and 113 pending; 111 vanished is not in the latest snapshot; 107 ended at 06:00 */
    assert_non_null(strstr(s, "slurm_archive_jobs{cluster=\"alpha\",state=\"RUNNING\"} 1\n"));
    assert_non_null(strstr(s, "slurm_archive_jobs{cluster=\"alpha\",state=\"PENDING\"} 2\n"));
    assert_non_null(strstr(s, "slurm_archive_finished_jobs{cluster=\"alpha\",state=\"COMPLETED\"} 1\n"));
    /* the GPUs of the running job (104 on 8 h100), nodes by exact state, the class of idle GPUs and CPUs (as
     * utilization --summary says it: a drained node's are down, an ALLOCATED node's idle GPUs stranded), the
     * scheduler, the ingester */
    assert_non_null(strstr(s, "slurm_archive_job_gpus{cluster=\"alpha\",state=\"RUNNING\"} 8\n"));
    assert_non_null(strstr(s, "slurm_archive_nodes{cluster=\"alpha\",state=\"IDLE+DRAIN\"} 1\n"));
    assert_non_null(strstr(s, "slurm_archive_gpus{cluster=\"alpha\",gpu_type=\"h100\",state=\"IDLE+DRAIN\","
                              "status=\"down\"} 4\n"));
    assert_non_null(strstr(s, "slurm_archive_gpus{cluster=\"alpha\",gpu_type=\"a100\",state=\"ALLOCATED\","
                              "status=\"stranded\"} 2\n"));
    assert_non_null(strstr(s, "slurm_archive_cpus{cluster=\"alpha\",state=\"IDLE+DRAIN\",status=\"down\"} 64\n"));
    assert_non_null(strstr(s, "slurm_archive_scheduler_cycle_last_seconds{cluster=\"alpha\"} 0.020411\n"));
    assert_non_null(strstr(s, "slurm_archive_scheduler_jobs{cluster=\"alpha\",event=\"submitted\"} 8412\n"));
    assert_non_null(strstr(s, "slurm_archive_ingest_lag_seconds{cluster=\"beta\",source=\"sacct\"} 117000\n"));
    assert_non_null(strstr(s, "slurm_archive_ingest_last_success_timestamp_seconds{cluster=\"alpha\"} 1790841605\n"));
    assert_non_null(strstr(s, "slurm_archive_ingest_last_run_success{cluster=\"alpha\"} 1\n"));
    promtool_check(s);
    free(s);
    sa_report_opts_clear(&o);
}

/* ---- helpers --------------------------------------------------------------------------------- */

static void test_helpers(void **state)
{
    int64_t t, e;
    sa_rgu_t *r;
    sa_error_t err;
    double w;
    const char *name;
    char buf[32];
    (void)state;

    /* times */
    assert_true(sa_rtime_parse("2026-09-01", &t));
    assert_int_equal(t, 1788220800);
    assert_true(sa_rtime_parse("2026-09-01T01:02:03Z", &t));
    assert_int_equal(t, 1788220800 + 3723);
    assert_true(sa_rtime_parse("2026-09-01 01:02", &t));
    assert_int_equal(t, 1788220800 + 3720);
    assert_false(sa_rtime_parse("2026-02-30", &t));
    assert_false(sa_rtime_parse("2026-09-01T25:00", &t));
    assert_false(sa_rtime_parse("2026-09-01T10:00+02:00", &t));
    assert_false(sa_rtime_parse("yesterday", &t));
    assert_true(sa_rmonth_parse("2026-12", &t, &e));
    assert_string_equal(sa_time_format(e, buf, sizeof buf), "2027-01-01T00:00:00Z");
    assert_false(sa_rmonth_parse("2026-13", &t, &e));
    assert_true(sa_rduration_parse("90s", &t) && t == 90);
    assert_true(sa_rduration_parse("2d", &t) && t == 172800);
    assert_true(sa_rduration_parse("3600", &t) && t == 3600);
    assert_false(sa_rduration_parse("1y", &t));
    assert_false(sa_rduration_parse("0m", &t));

    /* RGU weights: built-in table (Alliance values) */
    r = sa_rgu_load(NULL, &err);
    assert_non_null(r);
    assert_true(sa_rgu_weight(r, "a100", &w, &name) && w == 4.0);
    assert_string_equal(name, "A100-40gb");
    assert_true(sa_rgu_weight(r, "nvidia_a100-sxm4-80gb", &w, NULL) && w == 4.8);
    assert_true(sa_rgu_weight(r, "NVIDIA_H100_80GB_HBM3", &w, NULL) && w == 12.2);
    assert_true(sa_rgu_weight(r, "a100_3g.20gb", &w, NULL) && w == 2.0);
    assert_true(sa_rgu_weight(r, "3g.40gb", &w, NULL) && w == 6.1);
    assert_true(sa_rgu_weight(r, "nvidia_h100_80gb_hbm3_1g.10gb", &w, NULL) && w == 1.74);
    assert_true(sa_rgu_weight(r, "v100l", &w, NULL) && w == 2.6);
    assert_true(sa_rgu_weight(r, "tesla_t4", &w, NULL) && w == 1.3);
    assert_false(sa_rgu_weight(r, "unknown", &w, NULL));
    assert_false(sa_rgu_weight(r, "rtx8000", &w, NULL));
    assert_false(sa_rgu_weight(r, "", &w, NULL));
    {
        /* a bare MIG profile does not say its parent GPU: weighted as H100, flagged a guess */
        bool guess = false;
        assert_true(sa_rgu_weight_on(r, "c", "1g.10gb", &w, NULL, &guess) && w == 1.74 && guess);
        assert_true(sa_rgu_weight_on(r, "c", "nvidia_a100_80gb_pcie_1g.10gb", &w, NULL, &guess) && w == 0.69);
        assert_false(guess);
        assert_true(sa_rgu_weight_on(r, "c", "nvidia_h100_80gb_hbm3_3g.40gb", &w, NULL, &guess) && w == 6.1);
        assert_false(guess);
        assert_false(sa_rgu_has_clusters(r));
    }
    sa_rgu_free(r);
    {
        /* a cluster's table: a GPU type to its parent model and weight, that cluster only, never a guess */
        const char *path = temp_file("{\"include_defaults\": true, \"clusters\": {\"mig80\": ["
                                     "{\"gpu_type\": \"1g.10gb\", \"parent\": \"A100-80gb\", \"rgu\": 0.69},"
                                     "{\"gpu_type\": \"*3g.40gb\", \"parent\": \"A100-80gb\", \"rgu\": 2.4}]}}");
        bool guess = true;
        r = sa_rgu_load(path, &err);
        if (!r)
            fail_msg("%s", err.message);
        assert_true(sa_rgu_has_clusters(r));
        assert_true(sa_rgu_weight_on(r, "mig80", "1g.10gb", &w, &name, &guess) && w == 0.69 && !guess);
        assert_string_equal(name, "A100-80gb 1g.10gb");
        assert_true(sa_rgu_weight_on(r, "mig80", "3G.40GB", &w, NULL, &guess) && w == 2.4 && !guess);
        assert_true(sa_rgu_weight_on(r, "other", "1g.10gb", &w, NULL, &guess) && w == 1.74 && guess);
        assert_true(sa_rgu_weight_on(r, "mig80", "a100", &w, NULL, &guess) && w == 4.0); /* the general entries */
        sa_rgu_free(r);
        unlink(path);
        path = temp_file("{\"clusters\": {\"x\": [{\"gpu_type\": \"1g.10gb\", \"rgu\": 0.69}]}}");
        assert_null(sa_rgu_load(path, &err));
        assert_non_null(strstr(err.message, "clusters: x[0]: expected"));
        assert_non_null(strstr(err.message, path));
        unlink(path);
    }

    /* CSV quoting and parsable output */
    {
        static const sa_col_t cols[] = {{"a", "A", SA_COL_STR, 0, 0}, {"n", "N", SA_COL_NUM, 2, 0}};
        sa_rtable_t tb;
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        size_t row;
        sa_rtable_init(&tb, cols, 2);
        row = sa_rtable_add_row(&tb);
        sa_rtable_str(&tb, row, 0, "lab,\"q\"<b>&");
        sa_rtable_num(&tb, row, 1, -0.001);
        row = sa_rtable_add_row(&tb);
        sa_rtable_str(&tb, row, 0, "two\nlines");
        assert_true(sa_rtable_write_text(&tb, SA_TEXT_CSV, NULL, false, f));
        assert_true(sa_rtable_write_text(&tb, SA_TEXT_PARSABLE, NULL, true, f));
        fclose(f);
        assert_string_equal(out, "a,n\r\n\"lab,\"\"q\"\"<b>&\",0.00\r\n\"two\nlines\",\r\n"
                                 "lab,\"q\"<b>&|0.00\ntwo?lines|\n");
        free(out);
        sa_rtable_clear(&tb);
    }

    /*
     * CSV formula injection (OWASP): a text cell starting with = + - @ TAB or CR gets a
     * leading ' and is quoted, so a spreadsheet shows it as text; numbers (negative ones
     * too) stay numbers; parsable output (-p/-P, for scripts) is written as is.
     */
    {
        static const sa_col_t cols[] = {{"job", "Job", SA_COL_STR, 0, 0}, {"n", "N", SA_COL_NUM, 1, 0},
                                        {"i", "I", SA_COL_INT, 0, 0}};
        static const char *const names[] = {"=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1)",
                                            "\tx", "\rx", "a=b", "-", ""};
        static const char *const want[] = {"\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"", "\"'+1+2\"", "\"'-2+3\"",
                                           "\"'@SUM(A1)\"", "\"'\tx\"", "\"'\rx\"", "a=b", "\"'-\"", ""};
        sa_rtable_t tb;
        char *out = NULL, *exp = NULL;
        size_t len = 0, elen = 0;
        FILE *f = open_memstream(&out, &len), *ef = open_memstream(&exp, &elen);
        sa_rtable_init(&tb, cols, 3);
        fputs("job,n,i\r\n", ef);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            size_t row = sa_rtable_add_row(&tb);
            sa_rtable_str(&tb, row, 0, names[k]);
            sa_rtable_num(&tb, row, 1, -1.5 - (double)k);
            sa_rtable_int(&tb, row, 2, -(int64_t)k);
            fprintf(ef, "%s,%.1f,%d\r\n", want[k], -1.5 - (double)k, -(int)k);
        }
        assert_true(sa_rtable_write_text(&tb, SA_TEXT_CSV, NULL, false, f));
        fclose(f);
        fclose(ef);
        assert_string_equal(out, exp);
        free(out);
        out = NULL;
        f = open_memstream(&out, &len);
        assert_true(sa_rtable_write_text(&tb, SA_TEXT_PARSABLE, NULL, false, f));
        fclose(f);
        assert_non_null(strstr(out, "\n=HYPERLINK(\"http://x\",\"y\")|-1.5|0\n+1+2|-2.5|-1\n"));
        free(out);
        free(exp);
        sa_rtable_clear(&tb);
    }
}

/* Writes text to a temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text)
{
    static char path[64];
    FILE *f;
    int fd;
    strcpy(path, "/tmp/sa-test-report-in-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void expect_award_error(const char *text, const char *want)
{
    sa_awards_t a;
    sa_error_t err;
    const char *path = temp_file(text);
    bool ok = sa_awards_load(path, &a, &err);
    unlink(path);
    assert_false(ok);
    if (!strstr(err.message, want))
        fail_msg("error '%s' does not contain '%s'", err.message, want);
    assert_int_equal(err.domain, SA_ERR_INPUT);
}

static void test_allocations_file(void **state)
{
    sa_awards_t a;
    sa_error_t err;
    char *path = rd_fixture("allocations-example.json");
    (void)state;

    assert_true(sa_awards_load(path, &a, &err));
    assert_int_equal(a.n, 6);
    assert_int_equal(a.v[4].unit, SA_AWARD_CORE_YEARS);
    assert_string_equal(a.v[2].account, "bio");
    assert_string_equal(a.v[2].gpu_type, "h100");
    assert_true(a.v[2].under_pct == 50 && a.v[2].over_pct == 150);
    assert_true(a.v[0].under_pct == 80 && a.v[0].over_pct == 120);
    assert_int_equal(a.v[1].unit, SA_AWARD_RGU_YEARS);
    assert_true(a.recent_days == 30);
    sa_awards_clear(&a);
    free(path);

    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"account\": \"x\", \"amount\": 1, \"unit\": \"gpu-years\", "
                       "\"start\": \"2026-04-01\", \"end\": \"2026-03-01\"}]}",
                       "awards[0] (c/x): end: must be after start");
    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"account\": \"x\", \"amount\": -1, \"unit\": \"gpu-years\", "
                       "\"start\": \"2026-04-01\", \"end\": \"2027-03-01\"}]}",
                       "awards[0] (c/x): amount: expected a number > 0");
    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"account\": \"x\", \"amount\": 1, \"unit\": \"cpu-years\", "
                       "\"start\": \"2026-04-01\", \"end\": \"2027-03-01\"}]}",
                       "unit: expected \"gpu-years\", \"rgu-years\", \"core-years\" or \"billing-years\"");
    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"account\": \"x\", \"amount\": 1, \"unit\": \"gpu-years\", "
                       "\"start\": \"April\", \"end\": \"2027-03-01\"}]}",
                       "start: expected YYYY-MM-DD[Thh:mm[:ss]] (UTC), got 'April'");
    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"amount\": 1}]}", "awards[0]: account: expected a non-empty string");
    expect_award_error("{\"awards\": [{\"cluster\": \"c\", \"account\": \"x\", \"amount\": 1, \"unit\": \"gpu-years\", "
                       "\"start\": \"2026-04-01\", \"end\": \"2027-03-01\", \"gpus\": 3}]}",
                       "unknown key 'gpus'");
    expect_award_error("{\"bands\": {\"under_pct\": 130}, \"awards\": []}", "under_pct (130) is above over_pct (120)");
    expect_award_error("{\"awards\": {}}", "awards: expected an array");
    expect_award_error("[1, 2", "");
    expect_award_error("{\"recent_days\": 0, \"awards\": []}", "recent_days: expected a number of days > 0");
}

static void test_rgu_file(void **state)
{
    sa_rgu_t *r;
    sa_error_t err;
    double w;
    const char *path;
    (void)state;

    path = temp_file("{\"include_defaults\": true, \"weights\": [{\"name\": \"L40S\", \"rgu\": 10.36, \"match\": [\"l40s*\"]}]}");
    r = sa_rgu_load(path, &err);
    unlink(path);
    assert_non_null(r);
    assert_true(sa_rgu_weight(r, "L40S", &w, NULL) && w == 10.36);
    assert_true(sa_rgu_weight(r, "a100", &w, NULL) && w == 4.0); /* defaults follow */
    sa_rgu_free(r);
    path = temp_file("{\"weights\": [{\"name\": \"only\", \"rgu\": 1, \"match\": [\"x\"]}]}");
    r = sa_rgu_load(path, &err);
    unlink(path);
    assert_non_null(r);
    assert_false(sa_rgu_weight(r, "a100", &w, NULL)); /* replaces the defaults */
    sa_rgu_free(r);
    path = temp_file("{\"weights\": [{\"name\": \"bad\", \"rgu\": \"4\", \"match\": [\"x\"]}]}");
    r = sa_rgu_load(path, &err);
    unlink(path);
    assert_null(r);
    assert_non_null(strstr(err.message, "weights[0]: rgu: expected a number >= 0"));
}

/* ---- the command line -------------------------------------------------------------------------- */

static int run_cli(const char *const *args, char **out, char **err)
{
    char *argv[32];
    size_t n = 0;
    char *env[2];
    int rc;
    /* SA_TEST_REPORT_BIN runs the cases against another build (an older one, to see a case fail) */
    argv[n++] = (char *)(getenv("SA_TEST_REPORT_BIN") && *getenv("SA_TEST_REPORT_BIN") ? getenv("SA_TEST_REPORT_BIN")
                                                                                       : SA_REPORT_BIN);
    for (; *args && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    env[0] = sa_rprintf("SLURM_REPORT_MONGO_URI=%s", uri);
    env[1] = NULL;
    rc = tu_run(argv, env, out, err);
    free(env[0]);
    return rc;
}

static void test_cli(void **state)
{
    char *out, *err, *alloc = rd_fixture("allocations-example.json"), outpath[64], *got;
    const char *bad_alloc;
    int rc;
    (void)state;

    /* usage report to a file, atomically */
    snprintf(outpath, sizeof outpath, "/tmp/sa-test-report-out-%d.json", (int)getpid());
    {
        const char *a[] = {"--db", db_name, "--sqlite", sqlite_path, "--month", "2026-09", "--now",
                           "2026-10-01T08:30:00Z", "--format", "json", "-o", outpath, NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 0);
        assert_string_equal(out, "");
        got = tu_read_file(outpath, NULL);
        {
            sa_report_opts_t o;
            char *api;
            opts_init(&o, SA_FMT_JSON);
            sa_rmonth_parse("2026-09", &o.start, &o.end);
            api = run_report(R_USAGE, &o, NULL);
            assert_string_equal(got, api); /* the CLI and the API agree */
            free(api);
            sa_report_opts_clear(&o);
        }
        free(got);
        unlink(outpath);
        free(out);
        free(err);
    }
    /* health: exit status 9 */
    {
        const char *a[] = {"health", "--db", db_name, "--now", "2026-10-01T08:30:00Z", "-P", NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, SA_EXIT_UNHEALTHY);
        assert_non_null(strstr(out, "alpha|vanished-job|error|job 111|"));
        free(out);
        free(err);
    }
    /* bad usage: 2 */
    {
        const char *a[] = {"--month", "2026-9", NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "--month: expected YYYY-MM, got '2026-9'"));
        free(out);
        free(err);
    }
    {
        const char *a[] = {"--db", db_name, "--month", "2026-09", "--by", "user", "--allocations", alloc, NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "with --allocations the rows are the awards"));
        free(out);
        free(err);
    }
    /* a bad allocations file: 3, and nothing written to -o */
    bad_alloc = temp_file("{\"awards\": [{\"cluster\": \"alpha\"}]}");
    {
        const char *a[] = {"--db", db_name, "--month", "2026-09", "--allocations", bad_alloc, "-o", outpath, NULL};
        struct stat st;
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 3);
        assert_non_null(strstr(err, "awards[0]: account: expected a non-empty string"));
        assert_int_not_equal(stat(outpath, &st), 0);
        free(out);
        free(err);
    }
    unlink(bad_alloc);
    /* MongoDB unreachable: 5, and the password is never printed */
    {
        const char *a[] = {"--mongo-uri", "mongodb://reporter:s3cret@127.0.0.1:1/?serverSelectionTimeoutMS=300",
                           "--month", "2026-09", NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 5);
        assert_non_null(strstr(err, "127.0.0.1:1"));
        assert_null(strstr(err, "s3cret"));
        free(out);
        free(err);
    }
    /* utilization without a time series: 2, as every report where a file named is not there (one line, saying
     * which file and how to name another) */
    {
        const char *a[] = {"utilization", "--db", db_name, "-M", "beta", "--sqlite-dir", "/nonexistent", "--month",
                           "2026-09", NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "cluster beta: no time series (/nonexistent/beta.sqlite does not exist; give "
                                    "--sqlite PATH, or --sqlite-dir DIR or SLURM_REPORT_SQLITE_DIR)"));
        assert_true(strchr(err, '\n') == err + strlen(err) - 1);
        free(out);
        free(err);
    }
    /* prometheus is for current only */
    {
        const char *a[] = {"--month", "2026-09", "--format", "prometheus", NULL};
        rc = run_cli(a, &out, &err);
        assert_int_equal(rc, 2);
        free(out);
        free(err);
    }
    free(alloc);
}

/* Runs the CLI on the dataset (--db, --sqlite, --now added) with args; returns the exit code. */
static int run_ds(const char *const *args, char **out, char **err)
{
    const char *a[40] = {"--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z"};
    size_t n = 6;
    for (; *args && n < 39; args++)
        a[n++] = *args;
    a[n] = NULL;
    return run_cli(a, out, err);
}

/* Fails unless s holds want, showing s. */
static void expect_in(const char *s, const char *want)
{
    if (!strstr(s, want))
        fail_msg("'%s' not in:\n%s", want, s);
}

/* The widest line of s (in bytes: the dataset's text is ASCII). */
static size_t widest(const char *s)
{
    size_t w = 0;
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > w)
            w = n;
        p += n + (p[n] != 0);
    }
    return w;
}

/* Expects exit code rc, empty stdout and exactly one line on stderr containing want. */
static void expect_one_line_error(const char *const *args, int rc, const char *want)
{
    char *out, *err;
    int got = run_ds(args, &out, &err);
    if (got != rc || !strstr(err, want) || strchr(err, '\n') != err + strlen(err) - 1 || out[0])
        fail_msg("%s ...: exit %d (want %d), stdout '%.200s', stderr '%s' (want one line with '%s')", args[0], got,
                 rc, out, err, want);
    free(out);
    free(err);
}

/*
 * Issue 22: what an admin names wrongly is exit 2, never 1 (kept for out of memory and
 * bugs): a --sqlite that is not there, --output into a directory that is not there, a
 * site DIR that is a link to nothing. A site DIR that is a symbolic link to a directory
 * is written there. health goes on without a time series and says so.
 */
static void test_cli_paths(void **state)
{
    char *out, *err, base[64], link[96], target[96], page[160];
    struct stat st;
    (void)state;

    /* a --sqlite that is not there: 2, one line naming it */
    {
        const char *a[] = {"utilization", "--db", db_name, "--sqlite", "/nonexistent/ts.sqlite", "--month",
                           "2026-09", NULL};
        int rc = run_cli(a, &out, &err);
        if (rc != SA_EXIT_USAGE || !strstr(err, "--sqlite /nonexistent/ts.sqlite: no such file") ||
            strchr(err, '\n') != err + strlen(err) - 1)
            fail_msg("missing --sqlite: exit %d, stderr '%s'", rc, err);
        free(out);
        free(err);
    }
    /* --output into a directory that does not exist: 2 */
    {
        const char *a[] = {"--month", "2026-09", "--output", "/nonexistent/dir/usage.txt", NULL};
        expect_one_line_error(a, SA_EXIT_USAGE, "/nonexistent/dir/usage.txt: cannot create a temporary file");
    }
    /* health without a time series: not exit 1; each cluster says its time series checks were not made */
    {
        const char *a[] = {"health", "--db", db_name, "-M", "beta", "--sqlite", "/nonexistent/ts.sqlite", "--now",
                           "2026-09-30T00:30:00Z", "-P", NULL};
        int rc = run_cli(a, &out, &err);
        if (rc != SA_EXIT_OK)
            fail_msg("health, --sqlite missing: exit %d, stderr '%s'", rc, err);
        expect_in(out, "beta|time-series|warning|time series||cluster beta: no time series (--sqlite "
                       "/nonexistent/ts.sqlite cannot be read): the time series checks were not made");
        free(out);
        free(err);
    }
    {
        const char *a[] = {"health", "--db", db_name, "-M", "beta", "--sqlite-dir", "/nonexistent", "--now",
                           "2026-09-30T00:30:00Z", "-P", NULL};
        int rc = run_cli(a, &out, &err);
        if (rc != SA_EXIT_OK)
            fail_msg("health, no time series: exit %d, stderr '%s'", rc, err);
        expect_in(out, "beta|time-series|info|time series||cluster beta: no time series (/nonexistent/beta.sqlite "
                       "does not exist");
        /* what health leaves out, said on stderr too: one line */
        expect_in(err, "slurm-report: cluster beta: no time series (/nonexistent/beta.sqlite does not exist; give "
                       "--sqlite PATH, or --sqlite-dir DIR or SLURM_REPORT_SQLITE_DIR): the time series checks were not "
                       "made\n");
        free(out);
        free(err);
    }
    /* site DIR a symbolic link to a directory: the site is written there and the link stays */
    snprintf(base, sizeof base, "/tmp/sa-test-site-link-XXXXXX");
    assert_non_null(mkdtemp(base));
    snprintf(target, sizeof target, "%s/site", base);
    snprintf(link, sizeof link, "%s/link", base);
    assert_int_equal(mkdir(target, 0755), 0);
    assert_int_equal(symlink(target, link), 0);
    {
        const char *a[] = {"site", link, "--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z",
                           "--months", "1", NULL};
        int rc = run_cli(a, &out, &err);
        if (rc != SA_EXIT_OK)
            fail_msg("site into a symbolic link: exit %d, stderr '%s'", rc, err);
        free(out);
        free(err);
    }
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    snprintf(page, sizeof page, "%s/index.html", target);
    assert_int_equal(access(page, R_OK), 0);
    /* a link to nothing: 2 */
    assert_int_equal(unlink(link), 0);
    assert_int_equal(symlink("/nonexistent/site", link), 0);
    {
        const char *a[] = {"site", link, "--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z",
                           NULL};
        int rc = run_cli(a, &out, &err);
        if (rc != SA_EXIT_USAGE || !strstr(err, "a symbolic link to nothing"))
            fail_msg("site into a dangling link: exit %d, stderr '%s'", rc, err);
        free(out);
        free(err);
    }
    {
        char *argv[] = {(char *)"/bin/rm", (char *)"-rf", base, NULL}, *o, *e;
        tu_run(argv, NULL, &o, &e);
        free(o);
        free(e);
    }
}

/* sacct's and sreport's conventions: columns and widths, -p/-P, --delimiter, -n, -t, the kind flags, -e, -l. */
static void test_cli_conventions(void **state)
{
    char *out, *err;
    (void)state;

    /* -o chooses columns (sacct --format), %N right-justified and cut with a '+', %-N left-justified */
    {
        const char *a[] = {"--month", "2026-09", "-M", "beta", "-o", "account%-6,gpu_hours%9,cluster%3", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        expect_in(out, "Accou+  GPU-hours  Cl+\n------  ---------  ---\n");
        expect_in(out, "\nlab,\"+       3.00  be+\n");
        expect_in(out, "\nphysi+      24.00  be+\n");
        free(out);
        free(err);
    }
    /* -p ends lines with the delimiter, -P does not; --delimiter; -n; no total rows in parsable output */
    {
        const char *p[] = {"--month", "2026-09", "-M", "beta", "-p", "-n", "-o", "account,gpu_hours", NULL};
        const char *pp[] = {"--month", "2026-09", "-M", "beta", "--parsable2", "--delimiter=;", "-n", "--format",
                            "account,gpu_hours", NULL};
        assert_int_equal(run_ds(p, &out, &err), 0);
        assert_string_equal(out, "lab,\"q\"<b>&|3.00|\nphysics|24.00|\n");
        free(out);
        free(err);
        assert_int_equal(run_ds(pp, &out, &err), 0);
        assert_string_equal(out, "lab,\"q\"<b>&;3.00\nphysics;24.00\n");
        free(out);
        free(err);
    }
    /*
     * -t like sreport: minutes; percent of the cluster's capacity, which beta's (no time
     * series) does not have: one line, exit 2 (test_top checks the figures on alpha)
     */
    {
        const char *m[] = {"--month", "2026-09", "-M", "beta", "-t", "min", "-n", NULL};
        const char *pc[] = {"--month", "2026-09", "-M", "beta", "-t", "Percent", "-n", NULL};
        /* -P -t minutes: the minutes alone, whole, as sreport -t minutes prints them (issue 32) */
        const char *mp[] = {"--month", "2026-09", "-M", "beta", "-t", "minutes", "-P", "-T", "gres/gpu,cpu", NULL};
        assert_int_equal(run_ds(m, &out, &err), 0);
        expect_in(out, "beta  physics      1440.0\n");
        expect_in(out, "beta  (total)      1620.0\n");
        free(out);
        free(err);
        assert_int_equal(run_ds(mp, &out, &err), 0);
        /* 201: 1 GPU and 8 CPUs x 24 h = 1440 GPU-minutes, 11520 core-minutes; 202: 3 h, 180 and 1440 */
        assert_string_equal(out, "cluster|account|gpu_minutes|core_minutes\n"
                                 "beta|lab,\"q\"<b>&|180|1440\n"
                                 "beta|physics|1440|11520\n");
        free(out);
        free(err);
        assert_int_equal(run_ds(pc, &out, &err), 2);
        assert_string_equal(out, "");
        expect_in(err, "-t percent cannot be computed: the time series has no snapshot of cluster beta in the window");
        assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
        free(out);
        free(err);
    }
    /* the kind flags; --format KIND and -o FILE of 0.2 still work (no column has such a name) */
    {
        const char *j[] = {"--month", "2026-09", "--json", NULL};
        const char *c[] = {"--month", "2026-09", "--csv", "-n", NULL};
        const char *f[] = {"--month", "2026-09", "--format", "json", NULL};
        char *out2, *err2;
        assert_int_equal(run_ds(j, &out, &err), 0);
        assert_int_equal(run_ds(f, &out2, &err2), 0);
        assert_string_equal(out, out2);
        assert_int_equal(out[0], '{');
        free(out);
        free(err);
        free(out2);
        free(err2);
        assert_int_equal(run_ds(c, &out, &err), 0);
        expect_in(out, "alpha,bio,386.00,0.0441");
        free(out);
        free(err);
    }
    /* -e lists the columns; -l shows them all */
    {
        const char *e[] = {"-e", NULL};
        const char *l[] = {"--month", "2026-09", "-l", "-M", "beta", NULL};
        assert_int_equal(run_ds(e, &out, &err), 0);
        expect_in(out, "projected_percent_of_award");
        expect_in(out, "gpu_hours                    GPU-hours  (-l)\n");
        free(out);
        free(err);
        assert_int_equal(run_ds(l, &out, &err), 0);
        expect_in(out, "Cluster  Account      GPU-hours  GPU-years\n");
        free(out);
        free(err);
    }
    /* without --by, the keys -o names are the grouping (sreport): -o user,... is --by user (usage, efficiency) */
    {
        static const char *const reps[2] = {"usage", "efficiency"};
        for (int i = 0; i < 2; i++) {
            const char *a[] = {reps[i], "--month", "2026-09", "-M", "alpha", "-P", "-o", "user,account,gpu_hours", NULL};
            const char *b[] = {reps[i], "--month", "2026-09", "-M", "alpha", "-P", "-o", "user,account,gpu_hours",
                               "--by", "account,user", NULL};
            char *out2, *err2;
            assert_int_equal(run_ds(a, &out, &err), 0);
            assert_int_equal(run_ds(b, &out2, &err2), 0);
            assert_string_equal(out, out2);
            expect_in(out, "user|account|gpu_hours\n");
            expect_in(out, "\nalice|physics|");
            free(out);
            free(err);
            free(out2);
            free(err2);
        }
    }
    /* dates as sacct takes them: MM/DD/YY and MMDD[YY] give the month's report */
    {
        const char *a[] = {"--month", "2026-09", "--json", NULL};
        const char *b[] = {"-S", "09/01/26", "-E", "100126", "--json", NULL};
        char *out2, *err2;
        assert_int_equal(run_ds(a, &out, &err), 0);
        assert_int_equal(run_ds(b, &out2, &err2), 0);
        assert_string_equal(out, out2);
        free(out);
        free(err);
        free(out2);
        free(err2);
    }
}

/* Mistakes are one line on stderr and exit 2: options, columns, clusters, databases, accounts, users. */
static void test_cli_mistakes(void **state)
{
    (void)state;
    {
        const char *a[] = {"--month", "2026-09", "--bogus", NULL};
        expect_one_line_error(a, 2, "unknown option '--bogus'");
    }
    {
        const char *a[] = {"--month", "2026-09", "-x", NULL};
        expect_one_line_error(a, 2, "unknown option '-x'");
    }
    {
        const char *a[] = {"--month", "2026-09", "-M", NULL};
        expect_one_line_error(a, 2, "option '-M' needs a value");
    }
    {
        /* what the user typed comes back as one line of valid UTF-8 */
        const char *a[] = {"--month", "2026-09", "--bo\xffgus", NULL};
        expect_one_line_error(a, 2, "unknown option '--bo?gus'");
    }
    {
        const char *a[] = {"us\xe9\nage", "--month", "2026-09", NULL};
        expect_one_line_error(a, 2, "unknown report 'us?" "?age'");
    }
    {
        /* 0.2 wrote a file named 'account,used'; -o is sacct's column list now */
        const char *a[] = {"--month", "2026-09", "-o", "account,used", NULL};
        expect_one_line_error(a, 2, "no column 'used' in this report; its columns: cluster,account,");
    }
    {
        const char *a[] = {"--month", "2026-09", "-o", "account%x", NULL};
        expect_one_line_error(a, 2, "-o: expected a comma list of columns");
    }
    {
        const char *a[] = {"--month", "2026-09", "-t", "fortnights", NULL};
        expect_one_line_error(a, 2, "-t: expected hours, minutes, percent or years");
    }
    {
        const char *a[] = {"--month", "2026-09", "-M", "alhpa", NULL};
        expect_one_line_error(a, 2, "cluster 'alhpa' is not in database");
    }
    {
        const char *a[] = {"current", "-M", "alpha,gamma", NULL};
        expect_one_line_error(a, 2, "cluster 'gamma' is not in database");
    }
    {
        const char *a[] = {"--month", "2026-09", "--db", "slurm_misspelt_xyz", NULL};
        expect_one_line_error(a + 0, 2, "database 'slurm_misspelt_xyz'");
    }
    {
        const char *a[] = {"--month", "2026-09", "-A", "phisics", NULL};
        expect_one_line_error(a, 2, "account 'phisics' has no job in database");
    }
    {
        const char *a[] = {"--month", "2026-09", "-u", "nobody", NULL};
        expect_one_line_error(a, 2, "user 'nobody' has no job in database");
    }
    {
        const char *a[] = {"utilization", "--month", "2026-09", "-M", "gamma", NULL};
        expect_one_line_error(a, 2, "cluster 'gamma' is not in the time series");
    }
    {
        const char *a[] = {"-S", "2026-13-01", NULL};
        expect_one_line_error(a, 2, "-S: invalid time '2026-13-01'");
    }
    /* a window that ends before it starts: one rule, one line, in every report (waits and efficiency printed an
     * empty table); an empty one ([S, S)) in those that need a window (jobs lists what ran at an instant) */
    {
        static const char *const reports[] = {"usage", "utilization", "top", "waits", "efficiency", "jobs"};
        for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
            const char *a[] = {reports[i], "-S", "2026-09-05", "-E", "2026-09-01", NULL};
            const char *b[] = {reports[i], "-S", "2026-09-05", "-E", "2026-09-05", NULL};
            expect_one_line_error(a, 2,
                                  "slurm-report: the window is empty: END (2026-09-01T00:00:00Z) is not after START "
                                  "(2026-09-05T00:00:00Z)\n");
            if (strcmp(reports[i], "jobs") != 0)
                expect_one_line_error(b, 2, "the window is empty: END (2026-09-05T00:00:00Z) is not after START");
        }
    }
}

/* --output FILE is written atomically with the mode the umask gives (not always 0600). */
static void test_cli_output_mode(void **state)
{
    static const mode_t masks[2] = {022, 077};
    char path[96], *out, *err;
    struct stat st;
    (void)state;

    snprintf(path, sizeof path, "/tmp/sa-test-report-mode-%d.txt", (int)getpid());
    for (int i = 0; i < 2; i++) {
        const char *a[] = {"--month", "2026-09", "--output", path, NULL};
        mode_t old = umask(masks[i]);
        int rc = run_ds(a, &out, &err);
        umask(old);
        assert_int_equal(rc, 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0666 & ~masks[i]);
        free(out);
        free(err);
        unlink(path);
    }
    /* 0.2's -o FILE: a value with a '.' or '/' is no column list: a file, with a note */
    {
        const char *a[] = {"--month", "2026-09", "-o", path, NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        assert_non_null(strstr(err, "-o FILE is read as --output FILE"));
        assert_int_equal(stat(path, &st), 0);
        free(out);
        free(err);
        unlink(path);
    }
}

/* The first line of s (a copy; caller frees). */
static char *first_line(const char *s)
{
    return strndup(s, strcspn(s, "\r\n"));
}

/*
 * Parsable and CSV output is the header and the rows, as sacct's and sreport's: no '#'
 * preamble lines (the header dropped by -n). The preamble is in the table, in JSON as
 * "header", and on stderr under -v. Every report.
 */
static void test_parsable_no_preamble(void **state)
{
    static const struct {
        const char *args[6], *header, *pre; /* the report's arguments, its header's start, a preamble line's */
    } reports[] = {
        {{"usage", "--month", "2026-09", NULL}, "cluster", "GPU usage from 2026-09-01T00:00:00Z"},
        {{"utilization", "--month", "2026-09", NULL}, "cluster", "GPU and CPU time by exact node state"},
        {{"health", NULL}, "cluster", "Archive health at 2026-10-01T08:30:00Z"},
        {{"current", NULL}, "cluster", "latest squeue snapshot"},
        {{"efficiency", "--month", "2026-09", NULL}, "cluster", "Efficiency of the runs that ended"},
        {{"job", "-M", "alpha", "102", NULL}, "", "Job ID: 102"},
    };
    static const char *const kinds[] = {"-P", "-p", "--csv"};
    (void)state;

    for (size_t r = 0; r < sizeof reports / sizeof reports[0]; r++) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            const char *a[12], *an[12], *av[12];
            size_t n = 0;
            int rc;
            char *out, *err, *out_n, *err_n, *out_v, *err_v, *line;
            for (; reports[r].args[n]; n++)
                a[n] = an[n] = av[n] = reports[r].args[n];
            a[n] = an[n] = av[n] = kinds[k];
            an[n + 1] = "-n";
            av[n + 1] = "-v";
            a[n + 1] = an[n + 2] = av[n + 2] = NULL;
            rc = run_ds(a, &out, &err);
            if ((rc != 0 && rc != SA_EXIT_UNHEALTHY) || run_ds(an, &out_n, &err_n) != rc ||
                run_ds(av, &out_v, &err_v) != rc)
                fail_msg("%s %s: exit %d: %s", reports[r].args[0], kinds[k], rc, err);
            line = first_line(out);
            if (out[0] == '#' || strstr(out, "\n#") || strncmp(line, reports[r].header, strlen(reports[r].header)) ||
                !strchr(line, kinds[k][1] == '-' ? ',' : '|'))
                fail_msg("%s %s: not a header and rows:\n%s", reports[r].args[0], kinds[k], out);
            /* -n: the rows alone; -v: the same output, the preamble on stderr */
            if (strcmp(out_n, out + strlen(line) + strspn(out + strlen(line), "\r\n")) != 0)
                fail_msg("%s %s -n: not the rows of\n%s\nbut\n%s", reports[r].args[0], kinds[k], out, out_n);
            if (strcmp(out_v, out) != 0 || !strstr(err_v, reports[r].pre) || strstr(err, reports[r].pre))
                fail_msg("%s %s -v: stdout differs or stderr lacks '%s':\n%s", reports[r].args[0], kinds[k],
                         reports[r].pre, err_v);
            free(line);
            free(out);
            free(err);
            free(out_n);
            free(err_n);
            free(out_v);
            free(err_v);
        }
        /* the table keeps its preamble; JSON carries it as "header" */
        {
            const char *a[12], *aj[12];
            size_t n = 0;
            char *out, *err;
            json_t *doc, *h;
            json_error_t jerr;
            for (; reports[r].args[n]; n++)
                a[n] = aj[n] = reports[r].args[n];
            a[n] = NULL;
            aj[n] = "--json";
            aj[n + 1] = NULL;
            run_ds(a, &out, &err);
            if (!strstr(out, reports[r].pre))
                fail_msg("%s: the table lacks its preamble '%s':\n%s", reports[r].args[0], reports[r].pre, out);
            free(out);
            free(err);
            run_ds(aj, &out, &err);
            if (!(doc = json_loads(out, 0, &jerr)))
                fail_msg("%s --json: %s", reports[r].args[0], jerr.text);
            h = json_object_get(doc, "header");
            {
                size_t i;
                json_t *v;
                bool found = false;
                json_array_foreach(h, i, v) {
                    found = found || (json_is_string(v) && strstr(json_string_value(v), reports[r].pre));
                }
                if (!found)
                    fail_msg("%s --json: no \"header\" with '%s':\n%s", reports[r].args[0], reports[r].pre, out);
            }
            json_decref(doc);
            free(out);
            free(err);
        }
    }
}

/* The default tables fit 120 columns, with a total per cluster; status looks at the projection. */
static void test_tables_fit(void **state)
{
    char *alloc = rd_fixture("allocations-example.json"), *out, *err;
    const char *path;
    (void)state;

    {
        const char *a[] = {"--month", "2026-09", "--allocations", alloc, NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        assert_true(widest(out) <= 120);
        assert_non_null(strstr(out, "\nalpha    (total)      -            0.0606"));
        assert_non_null(strstr(out, "\nbeta     (total)      -            0.0031"));
        free(out);
        free(err);
    }
    {
        const char *a[] = {"utilization", "--month", "2026-09", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        assert_true(widest(out) <= 120);
        free(out);
        free(err);
    }
    /*
     * bio used 386 h from 09-01 (0.0441 GPU-years); an award of 0.0661 from 06-01 to 12-01 is at 100 % of its
     * target on 10-01 (122 of 183 days), but the rate of September goes on to 0.134: "over pace", not "on track"
     */
    path = temp_file("{\"awards\": [{\"cluster\": \"alpha\", \"account\": \"bio\", \"amount\": 0.0661, "
                     "\"unit\": \"gpu-years\", \"start\": \"2026-06-01\", \"end\": \"2026-12-01\"}]}");
    {
        const char *a[] = {"--month", "2026-09", "-M", "alpha", "-A", "bio", "--allocations", path, "-P", "-n",
                           "-o", "account,percent_of_target,projected_percent_of_award,status", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        assert_string_equal(out, "bio|100.0|202.2|over pace\n");
        free(out);
        free(err);
    }
    unlink(path);
    free(alloc);
}

/*
 * An award's members (issue 35, part 3): the group's size gives the award and the use since its start per
 * member, in the table, -P, CSV and JSON; an award without members leaves them empty.
 */
static void test_members(void **state)
{
    const char *path;
    char *out, *err;
    json_t *doc, *row;
    (void)state;

    /* physics: 1 GPU-year from 04-01, 143 GPU-hours used by 10-01 (test_allocation_numbers), 4 members */
    path = temp_file("{\"awards\": [{\"cluster\": \"alpha\", \"account\": \"physics\", \"amount\": 1.0, "
                     "\"unit\": \"gpu-years\", \"start\": \"2026-04-01\", \"end\": \"2027-04-01\", \"members\": 4},"
                     "{\"cluster\": \"alpha\", \"account\": \"bio\", \"amount\": 0.05, \"unit\": \"gpu-years\","
                     " \"start\": \"2026-09-01\", \"end\": \"2027-09-01\"}]}");
    {
        const char *a[] = {"--month", "2026-09", "-M", "alpha", "-A", "physics,bio", "--allocations", path, "-P", "-n",
                           "-o", "account,award,members,award_per_member,used_since_start,used_per_member", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        /* 143 / 8760 = 0.0163 GPU-years, 0.0041 a member */
        expect_in(out, "physics|1.0000|4|0.2500|0.0163|0.0041\n");
        expect_in(out, "bio|0.0500|||0.0441|\n"); /* no members: no per-member figures */
        free(out);
        free(err);
    }
    {
        const char *a[] = {"--month", "2026-09", "-M", "alpha", "-A", "physics", "--allocations", path, NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        expect_in(out, "Members");
        expect_in(out, "Used/member");
        assert_true(widest(out) <= 120);
        free(out);
        free(err);
    }
    {
        const char *a[] = {"--month", "2026-09", "-M", "alpha", "-A", "physics", "--allocations", path, "--csv", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        expect_in(out, ",members,award_per_member,");
        free(out);
        free(err);
    }
    {
        const char *a[] = {"--month", "2026-09", "-M", "alpha", "-A", "physics", "--allocations", path, "--json", NULL};
        assert_int_equal(run_ds(a, &out, &err), 0);
        doc = json_loads(out, 0, NULL);
        assert_non_null(doc);
        row = find_row(doc, "account", "physics", NULL);
        assert_non_null(row);
        assert_int_equal(json_integer_value(json_object_get(row, "members")), 4);
        assert_true(fabs(num(row, "award_per_member") - 0.25) < 1e-12);
        assert_true(fabs(num(row, "used_per_member") - 143.0 / 8760 / 4) < 1e-12);
        json_decref(doc);
        free(out);
        free(err);
    }
    unlink(path);
}

/* ---- what a careful admin trips on (issue 22) ------------------------------------------------ */

/* Makes dir/name a directory holding one file, modified `age` seconds ago. */
static void plant_dir(const char *dir, const char *name, time_t age)
{
    char *p = sa_rprintf("%s/%s", dir, name), *f = sa_rprintf("%s/%s/index.html", dir, name);
    struct timespec ts[2];
    FILE *fp;
    assert_int_equal(mkdir(p, 0755), 0);
    assert_non_null(fp = fopen(f, "w"));
    fputs("half a site\n", fp);
    fclose(fp);
    ts[0].tv_sec = ts[1].tv_sec = time(NULL) - age;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    free(p);
    free(f);
}

static bool exists_in(const char *dir, const char *name)
{
    char *p = sa_rprintf("%s/%s", dir, name);
    struct stat st;
    bool there = lstat(p, &st) == 0;
    free(p);
    return there;
}

/*
 * A killed `slurm-report site DIR` leaves the site it was building in DIR.new-*, and
 * used to leave it for good. The name now carries the builder's pid: the next run
 * removes those whose pid is gone, and those of older versions (DIR.new-XXXXXX, no pid)
 * untouched for a day; a live builder's, a fresh one of an older version, a link and
 * other names stay.
 */
static void test_site_leftovers(void **state)
{
    char tmp[64] = "/tmp/sa-test-siteleft-XXXXXX", *site, *out = NULL, *err = NULL, dead_name[64], live_name[64];
    char *outside, *link;
    pid_t dead;
    int rc;
    (void)state;

    assert_non_null(mkdtemp(tmp));
    site = sa_rprintf("%s/site", tmp);
    /* a pid that ran and is gone */
    dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    snprintf(dead_name, sizeof dead_name, "site.new-%ld-Ab12Cd", (long)dead);
    snprintf(live_name, sizeof live_name, "site.new-%ld-Ef34Gh", (long)getpid());
    plant_dir(tmp, dead_name, 0);
    plant_dir(tmp, live_name, 0);
    plant_dir(tmp, "site.new-Xy56Zw", 2 * 86400); /* an older version's, two days old */
    plant_dir(tmp, "site.new-Fresh1", 0);          /* an older version's, maybe still building */
    plant_dir(tmp, "site.old", 2 * 86400);
    outside = sa_rprintf("%s/outside", tmp);
    link = sa_rprintf("%s/site.new-%ld-Li99nk", tmp, (long)dead); /* a link is never a leftover */
    plant_dir(tmp, "outside", 0);
    assert_int_equal(symlink(outside, link), 0);
    {
        const char *args[] = {"site", site, "--db", db_name, "--sqlite", sqlite_path, "--now",
                              "2026-10-01T08:30:00Z", "--months", "1", NULL};
        rc = run_cli(args, &out, &err);
    }
    if (rc != 0)
        fail_msg("slurm-report site: exit %d: %s", rc, err);
    assert_true(exists_in(tmp, "site/index.html"));
    if (exists_in(tmp, dead_name) || exists_in(tmp, "site.new-Xy56Zw"))
        fail_msg("slurm-report site left what killed runs left beside %s: %s%s", site,
                 exists_in(tmp, dead_name) ? dead_name : "", exists_in(tmp, "site.new-Xy56Zw") ? " site.new-Xy56Zw" : "");
    assert_true(exists_in(tmp, live_name));
    assert_true(exists_in(tmp, "site.new-Fresh1/index.html"));
    assert_true(exists_in(tmp, "site.old/index.html"));
    assert_true(exists_in(tmp, strrchr(link, '/') + 1));
    assert_true(exists_in(tmp, "outside/index.html"));
    /* the site's own temporary directory is gone too */
    {
        char *again = sa_rprintf("rm -rf '%s'", tmp);
        int n = 0;
        DIR *d = opendir(tmp);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL)
            n += strncmp(de->d_name, "site.new-", 9) == 0;
        if (d)
            closedir(d);
        assert_int_equal(n, 3); /* live, Fresh1, the link: nothing of this run */
        assert_int_equal(system(again), 0);
        free(again);
    }
    free(out);
    free(err);
    free(outside);
    free(link);
    free(site);
}

/* The time series is never read through a symbolic link (issue 22): one line, exit 6, whatever it points at. */
static void test_sqlite_link_refused(void **state)
{
    char *link = sa_rprintf("%s.link", sqlite_path);
    const char *args[] = {"utilization", "--sqlite", link, "--month", "2026-09", NULL};
    (void)state;

    unlink(link);
    assert_int_equal(symlink(sqlite_path, link), 0);
    expect_one_line_error(args, 6, "is a symbolic link: refused");
    unlink(link);
    free(link);
}

/*
 * Every slurm-report made /dev/shm/mongoc-<pid> (libmongoc initialises itself before
 * main): a killed one left it, and a later process of the same pid printed libmongoc's
 * "Falling back to malloc for counters." (issue 22).
 */
static void test_no_mongoc_shm(void **state)
{
    char *env[2], *err = NULL, path[64];
    char *usage[] = {(char *)SA_REPORT_BIN, (char *)"usage", (char *)"--db", db_name, (char *)"--sqlite", sqlite_path,
                     (char *)"--now", (char *)"2026-10-01T08:30:00Z", (char *)"--month", (char *)"2026-09", NULL};
    char *health[] = {(char *)SA_REPORT_BIN, (char *)"health", NULL};
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    int lfd, in, rc;
    long pid;
    bool left;
    (void)state;

    if (access("/dev/shm", W_OK) != 0) {
        printf("SKIP: /dev/shm is not writable here: libmongoc makes no counters file to look for\n");
        skip();
    }
    if (getenv("SA_TEST_REPORT_BIN") && *getenv("SA_TEST_REPORT_BIN"))
        usage[0] = health[0] = getenv("SA_TEST_REPORT_BIN");
    /* a file of the same pid already there: no warning */
    env[0] = sa_rprintf("SLURM_REPORT_MONGO_URI=%s", uri);
    env[1] = NULL;
    rc = tu_run_stale_shm(usage, env, &err);
    if (rc != 0 || strstr(err, "mongoc"))
        fail_msg("slurm-report usage with /dev/shm/mongoc-<its pid> there: exit %d, stderr '%s'", rc, err);
    free(err);
    free(env[0]);
    /* a report waiting for a server that never answers has no counters file, and leaves none when killed */
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &salen), 0);
    env[0] = sa_rprintf("SLURM_REPORT_MONGO_URI=mongodb://127.0.0.1:%d/?serverSelectionTimeoutMS=30000&"
                        "connectTimeoutMS=30000&socketTimeoutMS=30000", ntohs(sa.sin_port));
    pid = tu_start_sleeping(health, env, &in);
    if (pid < 0)
        fail_msg("slurm-report health never waited for the silent server");
    left = tu_mongoc_shm_exists(pid);
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, NULL, 0);
    close(in);
    close(lfd);
    free(env[0]);
    left = tu_mongoc_shm_exists(pid) || left;
    snprintf(path, sizeof path, "/dev/shm/mongoc-%ld", pid);
    if (left) {
        unlink(path);
        fail_msg("slurm-report (pid %ld) made %s, and left it when killed", pid, path);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_allocations_file),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_rgu_file),
        cmocka_unit_test(test_usage_numbers),
        cmocka_unit_test(test_usage_pending_again),
        cmocka_unit_test(test_csv_formula_names),
        cmocka_unit_test(test_allocation_numbers),
        cmocka_unit_test(test_golden_usage),
        cmocka_unit_test(test_golden_utilization),
        cmocka_unit_test(test_golden_health),
        cmocka_unit_test(test_golden_current),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_cli_conventions),
        cmocka_unit_test(test_cli_paths),
        cmocka_unit_test(test_cli_mistakes),
        cmocka_unit_test(test_cli_output_mode),
        cmocka_unit_test(test_tables_fit),
        cmocka_unit_test(test_site_leftovers),
        cmocka_unit_test(test_sqlite_link_refused),
        cmocka_unit_test(test_no_mongoc_shm),
        cmocka_unit_test(test_parsable_no_preamble),
    };
    int rc;

    update_golden = (argc > 1 && strcmp(argv[1], "--update") == 0) ||
                    (getenv("SA_UPDATE_GOLDEN") && strcmp(getenv("SA_UPDATE_GOLDEN"), "1") == 0);
    client = tu_mongo_client("report", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    if (getenv("SA_TEST_FILTER")) /* one case: SA_TEST_FILTER=test_name */
        cmocka_set_test_filter(getenv("SA_TEST_FILTER"));
    rc = tu_run_group_tests("report", tests, group_setup, group_teardown);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    if (update_golden)
        printf("wrote %d golden file(s) in %s/golden\n", golden_written, SA_FIXTURES_DIR);
    return rc;
}
