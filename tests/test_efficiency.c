/*
 * test_efficiency.c - slurm-report efficiency and slurm-report job on sacct text with
 * usage fields, ingested through the real ingest code:
 * - fixtures/efficiency/sacct-gpu.txt (cluster effi; made by hand, see its README): every
 *   figure of the efficiency report against the arithmetic in the comments;
 * - the shared Hábrók capture (gres/gpuutil, gres/gpumem in TRESUsage; cluster habrok),
 *   read from ../shared/slurm-samples: a job's story and its GPU figures;
 * - fixtures/slurm-22.05/sacct-ingest.txt is older than the usage columns: no usage, and
 *   the report says "no data" rather than 0.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_archive.h"
#include "sa_ingest.h"
#include "sa_report.h"
#include "sa_rutil.h"

static char *uri;
static char *db_name;
static mongoc_client_t *client;

#define HABROK "sacct-parsable/sacct-p-snowman-delim-37fields_habrok-2023-2024_gpu-tresusage-none-start.txt"

static int64_t iso(const char *s)
{
    int64_t t;
    if (!sa_rtime_parse(s, &t))
        fail_msg("bad time %s", s);
    return t;
}

/* Ingests one capture (sacct text, or squeue JSON when kind is SA_IN_SQUEUE) as cluster at time at. */
static void ingest_kind(sa_archive_t *a, const char *cluster, int kind, const char *path, const char *at,
                        const char *delim, const char *fields)
{
    sa_snapshot_t snap;
    sa_ingest_env_t env;
    sa_ingest_outcome_t out;
    sa_ingest_stats_t st;
    sa_error_t err;

    memset(&snap, 0, sizeof snap);
    memset(&env, 0, sizeof env);
    env.archive = a;
    snap.cluster = cluster;
    snap.at = iso(at);
    snap.files[kind] = path;
    snap.topts.delimiter = delim;
    snap.topts.fields = fields;
    sa_ingest_stats_init(&st);
    if (!sa_ingest_snapshot(&env, &snap, &st, &out, &err))
        fail_msg("ingest %s: %s", path, err.message);
    if (out.rejected)
        fail_msg("ingest %s: %s", path, out.why.message);
    sa_ingest_stats_clear(&st);
}

static void ingest(sa_archive_t *a, const char *cluster, const char *path, const char *at, const char *delim,
                   const char *fields)
{
    ingest_kind(a, cluster, SA_IN_SACCT, path, at, delim, fields);
}

/*
 * fixtures/slurm-22.05 as a live run saw it (cluster t2205): the squeue captures in the
 * order they were taken (times from the jobs' own: jobs.txt), then sacct -P -D. And the
 * first capture alone (cluster early), where job 7 is pending with a start forecast.
 */
static void ingest_2205(sa_archive_t *a)
{
    static const char *const seq[][2] = {
        {"squeue-A.json", "2026-11-26T06:28:05"}, {"squeue-B.json", "2026-11-26T06:28:18"},
        {"squeue-requeued.json", "2026-11-26T06:29:10"}, {"squeue-C.json", "2026-11-26T06:30:20"},
        {"squeue-E.json", "2026-11-26T06:30:30"},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        char *path = sa_rprintf("%s/slurm-22.05/%s", SA_FIXTURES_DIR, seq[i][0]);
        ingest_kind(a, "t2205", SA_IN_SQUEUE, path, seq[i][1], NULL, NULL);
        if (i == 0)
            ingest_kind(a, "early", SA_IN_SQUEUE, path, seq[i][1], NULL, NULL);
        free(path);
    }
    {
        char *path = sa_rprintf("%s/slurm-22.05/sacct-P-D.txt", SA_FIXTURES_DIR);
        ingest(a, "t2205", path, "2026-11-26T06:31:00", NULL, NULL);
        free(path);
    }
}

static int group_setup(void **state)
{
    char *note = NULL, *gpu = sa_rprintf("%s/efficiency/sacct-gpu.txt", SA_FIXTURES_DIR);
    char *old = sa_rprintf("%s/slurm-22.05/sacct-ingest.txt", SA_FIXTURES_DIR);
    sa_error_t err;
    sa_archive_t *a;
    (void)state;

    a = sa_archive_open(uri, db_name, &note, &err);
    if (!a)
        fail_msg("sa_archive_open: %s", err.message);
    free(note);
    ingest(a, "effi", gpu, "2026-10-31T00:00:00", NULL, NULL);
    if (tu_samples_present()) { /* else test_habrok_gpu_job skips, saying why */
        char *path = strdup(tu_sample(HABROK)), *fields = strdup(tu_sample_fields(HABROK));
        ingest(a, "habrok", path, "2024-04-30T00:00:00", "\xe2\x98\x83", fields);
        free(path);
        free(fields);
    }
    ingest(a, "old2205", old, "2026-11-27T00:00:00", "\x1f", NULL);
    ingest_2205(a);
    sa_archive_close(a);
    free(gpu);
    free(old);
    return 0;
}

/* Runs a report (efficiency or job) into a string; fails the test on error. */
static char *run(bool job, const sa_report_opts_t *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    sa_error_t err;
    bool ok = job ? sa_report_job(o, out, NULL, &err) : sa_report_efficiency(o, out, NULL, &err);
    fclose(out);
    if (!ok)
        fail_msg("report failed: %s", err.message);
    return buf;
}

static json_t *run_json(bool job, sa_report_opts_t *o)
{
    json_error_t jerr;
    char *s;
    json_t *doc;
    o->format = SA_FMT_JSON;
    s = run(job, o);
    doc = json_loads(s, 0, &jerr);
    if (!doc)
        fail_msg("JSON does not parse: %s: %s", jerr.text, s);
    free(s);
    return doc;
}

static void opts(sa_report_opts_t *o, const char *cluster)
{
    sa_report_opts_init(o);
    o->mongo_uri = uri;
    o->db_name = db_name;
    sa_strv_push(&o->clusters, cluster);
}

/* The row whose key column equals value (rows or totals). */
static json_t *row(json_t *doc, const char *member, const char *key, const char *value)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, member), i, r) {
        const char *v = json_string_value(json_object_get(r, key));
        if (v && strcmp(v, value) == 0)
            return r;
    }
    fail_msg("no %s row with %s = %s", member, key, value);
    return NULL;
}

static void near(const json_t *r, const char *key, double want)
{
    const json_t *v = json_object_get(r, key);
    if (!json_is_number(v))
        fail_msg("%s: not a number", key);
    if (fabs(json_number_value(v) - want) > 1e-6)
        fail_msg("%s: %.9f, want %.9f", key, json_number_value(v), want);
}

static void is_null(const json_t *r, const char *key)
{
    if (!json_is_null(json_object_get(r, key)))
        fail_msg("%s: want null (no data), got a value", key);
}

/*
 * By account, October 2026 (job 105 ended in September: not counted). Per run:
 *   101 physics  2 a100 x 36000 s = 72000 GPU-s, util 160/2 = 80 %, CPU 144000 of 36000 x 8 = 288000,
 *                MaxRSS 16 GiB of 64 GiB
 *   102 physics  1 a100 x 18000 s = 18000 GPU-s, util 3 % (idle, < 5), CPU 7200 of 18000 x 4 = 72000,
 *                4 GiB of 32 GiB
 *   106 physics  run 1: 1 x 3600 GPU-s, util 50, CPU 1800 of 3600 x 2 = 7200, 2 GiB of 8 GiB
 *                run 2: 1 x 7200 GPU-s, util 100, CPU 10800 of 7200 x 2 = 14400, 4 GiB of 8 GiB
 *   103 chem     4 h100 x 7200 s = 28800 GPU-s, no gres/gpuutil (no data), CPU 57600 of 7200 x 16 = 115200,
 *                64 GiB of 128 GiB
 *   104 chem     CPU-only, CPU 1800 of 3600 x 2 = 7200, 1 GiB of 4 GiB
 * physics: GPU-s 72000 + 18000 + 3600 + 7200 = 100800 (28 h); idle 18000 (5 h, 17.857 %);
 *   util (80 x 72000 + 3 x 18000 + 50 x 3600 + 100 x 7200) / 100800 = 6714000 / 100800 = 66.607 %;
 *   CPU (144000 + 7200 + 1800 + 10800) / (288000 + 72000 + 7200 + 14400) = 163800 / 381600;
 *   memory (16 + 4 + 2 + 4) / (64 + 32 + 8 + 8) = 26 / 112.
 * chem: GPU-s 28800 (8 h), all without data (100 %); CPU (57600 + 1800) / (115200 + 7200) = 59400 / 122400;
 *   memory (64 + 1) / (128 + 4) = 65 / 132.
 * TOTAL: 36 h, idle 5 h, util 66.607 % (the no-data hours left out), no data 8 / 36;
 *   CPU 223200 / 504000; memory 91 / 244.
 */
static void test_by_account(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *r;
    (void)state;
    opts(&o, "effi");
    o.start = iso("2026-10-01T00:00:00");
    o.end = iso("2026-11-01T00:00:00");
    doc = run_json(false, &o);
    r = row(doc, "rows", "account", "physics");
    assert_int_equal(json_integer_value(json_object_get(r, "runs")), 4);
    near(r, "gpu_hours", 28.0);
    near(r, "idle_gpu_hours", 5.0);
    near(r, "idle_percent", 100.0 * 18000 / 100800);
    near(r, "gpu_util_percent", 6714000.0 / 100800);
    near(r, "no_data_gpu_hours", 0);
    near(r, "cpu_efficiency_percent", 100.0 * 163800 / 381600);
    near(r, "mem_efficiency_percent", 100.0 * 26 / 112);
    r = row(doc, "rows", "account", "chem");
    assert_int_equal(json_integer_value(json_object_get(r, "runs")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "gpu_runs")), 1);
    near(r, "gpu_hours", 8.0);
    near(r, "no_data_gpu_hours", 8.0);
    near(r, "no_data_percent", 100.0);
    is_null(r, "gpu_util_percent"); /* no data is not 0 % */
    near(r, "idle_gpu_hours", 0);
    near(r, "cpu_efficiency_percent", 100.0 * 59400 / 122400);
    near(r, "mem_efficiency_percent", 100.0 * 65 / 132);
    r = row(doc, "totals", "account", "TOTAL");
    near(r, "gpu_hours", 36.0);
    near(r, "gpu_util_percent", 6714000.0 / 100800);
    near(r, "no_data_percent", 100.0 * 8 / 36);
    near(r, "cpu_efficiency_percent", 100.0 * 223200 / 504000);
    near(r, "mem_efficiency_percent", 100.0 * 91 / 244);
    json_decref(doc);

    /* --idle-threshold 60: 102 (3 %) and 106's first run (50 %) are idle: 18000 + 3600 GPU-s = 6 h */
    o.idle_threshold = 60;
    doc = run_json(false, &o);
    near(row(doc, "rows", "account", "physics"), "idle_gpu_hours", 6.0);
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/* By GPU type and user: a100 28 h (101, 102, 106), h100 8 h (103), none (104: CPU-only, 0 GPU-hours). */
static void test_by_type_and_user(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *r;
    (void)state;
    opts(&o, "effi");
    o.start = iso("2026-10-01T00:00:00");
    o.end = iso("2026-11-01T00:00:00");
    o.by = SA_BY_GPU_TYPE;
    doc = run_json(false, &o);
    r = row(doc, "rows", "gpu_type", "a100");
    near(r, "gpu_hours", 28.0);
    assert_int_equal(json_integer_value(json_object_get(r, "runs")), 4);
    r = row(doc, "rows", "gpu_type", "h100");
    near(r, "no_data_gpu_hours", 8.0);
    r = row(doc, "rows", "gpu_type", "none");
    near(r, "gpu_hours", 0);
    near(r, "cpu_efficiency_percent", 25.0); /* 1800 / 7200 */
    json_decref(doc);
    o.by = SA_BY_USER;
    doc = run_json(false, &o);
    r = row(doc, "rows", "user", "bob");
    near(r, "gpu_hours", 5.0);
    near(r, "gpu_util_percent", 3.0);
    near(r, "idle_percent", 100.0);
    near(r, "cpu_efficiency_percent", 10.0);   /* 7200 / 72000 */
    near(r, "mem_efficiency_percent", 12.5);   /* 4 / 32 */
    r = row(doc, "rows", "user", "alice");
    /* 101 and 106: (80 x 72000 + 50 x 3600 + 100 x 7200) / 82800 */
    near(r, "gpu_util_percent", (80.0 * 72000 + 50 * 3600 + 100 * 7200) / 82800);
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/* The formats of the other reports: table, parsable, CSV, HTML carry the same rows. */
static void test_formats(void **state)
{
    static const sa_format_t fmts[] = {SA_FMT_TABLE, SA_FMT_PARSABLE, SA_FMT_CSV, SA_FMT_HTML};
    sa_report_opts_t o;
    (void)state;
    opts(&o, "effi");
    o.start = iso("2026-10-01T00:00:00");
    o.end = iso("2026-11-01T00:00:00");
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        char *s;
        o.format = fmts[i];
        s = run(false, &o);
        if (!strstr(s, "physics") || !strstr(s, "66.6") || !strstr(s, "chem"))
            fail_msg("format %s lacks the rows: %s", sa_format_name(fmts[i]), s);
        free(s);
    }
    sa_report_opts_clear(&o);
}

/* slurm-report job: the requeued job 106 with both runs, seff's lines, the steps. */
static void test_job_story(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *job, *runs;
    char *s;
    (void)state;
    opts(&o, "effi");
    o.job_arg = "106";
    s = run(true, &o);
    if (!strstr(s, "Requeued: 2 runs") || !strstr(s, "CPU Efficiency: 25.00% of 02:00:00 core-walltime") ||
        !strstr(s, "CPU Efficiency: 75.00% of 04:00:00 core-walltime") ||
        !strstr(s, "Memory Efficiency: 50.00% of 8.00 GB") || !strstr(s, "GPU Utilization: 100.0%") ||
        !strstr(s, "History: 2026-10-10T01:00:00Z REQUEUED") || !strstr(s, "batch"))
        fail_msg("job 106's story lacks a line:\n%s", s);
    free(s);
    doc = run_json(true, &o);
    job = json_array_get(json_object_get(doc, "jobs"), 0);
    runs = json_object_get(job, "runs");
    assert_int_equal(json_array_size(runs), 2);
    near(json_array_get(runs, 0), "cpu_efficiency_percent", 25.0);
    near(json_object_get(json_array_get(runs, 1), "usage"), "cpu_s", 10800.0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(runs, 1), "usage"),
                                                        "max_rss_bytes")),
                     INT64_C(4194304) * 1024);
    json_decref(doc);
    /* unknown job: a usage error */
    {
        sa_error_t err;
        FILE *out = fopen("/dev/null", "w");
        o.job_arg = "4242";
        assert_false(sa_report_job(&o, out, NULL, &err));
        assert_int_equal(err.domain, SA_ERR_USAGE);
        fclose(out);
    }
    sa_report_opts_clear(&o);
}

/*
 * The Hábrók capture: 7965768.batch TRESUsageInTot gres/gpuutil=90 over 1 v100, gpumem
 * 20500736K, MaxRSS 1294440K; the job line's TotalCPU 15:33:59; 1 v100 x 15:28:22 elapsed,
 * 8 CPUs: CPU efficiency 56039 / (55702 x 8).
 */
static void test_habrok_gpu_job(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *run, *u;
    (void)state;
    if (!tu_samples_present()) {
        printf("SKIP test_habrok_gpu_job: the shared samples (../shared/slurm-samples) are not here\n");
        skip();
    }
    opts(&o, "habrok");
    o.job_arg = "7965768";
    doc = run_json(true, &o);
    run = json_array_get(json_object_get(json_array_get(json_object_get(doc, "jobs"), 0), "runs"), 0);
    u = json_object_get(run, "usage");
    near(u, "gpu_util_pct", 90.0);
    near(u, "cpu_s", 56039.0);
    assert_int_equal(json_integer_value(json_object_get(u, "gpu_mem_bytes")), INT64_C(20500736) * 1024);
    assert_int_equal(json_integer_value(json_object_get(u, "max_rss_bytes")), INT64_C(1294440) * 1024);
    near(run, "gpu_util_percent", 90.0);
    near(run, "cpu_efficiency_percent", 100.0 * 56039 / (55702.0 * 8));
    near(run, "mem_efficiency_percent", 100.0 * 1294440 / (10.0 * 1024 * 1024)); /* ReqMem 10G */
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/* A capture without usage columns: GPU-hours counted, all of them without data, efficiencies null. */
static void test_no_usage_columns(void **state)
{
    sa_report_opts_t o;
    json_t *doc, *r;
    (void)state;
    opts(&o, "old2205");
    o.start = iso("2026-11-01T00:00:00");
    o.end = iso("2026-12-01T00:00:00");
    o.by = 0;
    doc = run_json(false, &o);
    r = row(doc, "totals", "account", "TOTAL");
    assert_true(json_number_value(json_object_get(r, "gpu_hours")) > 0);
    near(r, "no_data_percent", 100.0);
    is_null(r, "gpu_util_percent");
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/*
 * Untyped GPUs take the type slurm-ingest found on the run's nodes (runs[].gpu_type):
 * a document as the merge writes it, inserted directly (cluster "untyped").
 */
static void test_untyped_gpu_type(void **state)
{
    mongoc_collection_t *jobs = mongoc_client_get_collection(client, db_name, "jobs");
    mongoc_collection_t *cl = mongoc_client_get_collection(client, db_name, "clusters");
    bson_t *c = BCON_NEW("_id", BCON_UTF8("untyped"), "last_sacct_at", BCON_DATE_TIME(iso("2026-10-31T00:00:00") * 1000));
    /* 2 untyped GPUs found to be h100 on the node, 4 h x 2 = 8 GPU-hours at 40 % */
    bson_t *d = BCON_NEW("_id", BCON_UTF8("untyped:1"), "cluster", BCON_UTF8("untyped"), "job_id", BCON_INT64(1),
                         "account", BCON_UTF8("a"), "user", BCON_UTF8("u"), "state", BCON_UTF8("COMPLETED"),
                         "runs", "[", "{", "start", BCON_DATE_TIME(iso("2026-10-02T00:00:00") * 1000), "end",
                         BCON_DATE_TIME(iso("2026-10-02T04:00:00") * 1000), "state", BCON_UTF8("COMPLETED"), "cpus",
                         BCON_INT64(4), "gpus", BCON_INT64(2), "gpus_by_type", "[", "{", "type", BCON_UTF8(""), "count",
                         BCON_INT64(2), "}", "]", "gpu_type", BCON_UTF8("h100"), "gpu_type_source", BCON_UTF8("node"),
                         "elapsed_s", BCON_INT64(14400), "usage", "{", "gpu_util_pct", BCON_DOUBLE(40.0), "}", "}",
                         "]");
    bson_error_t berr;
    sa_report_opts_t o;
    json_t *doc, *r;
    (void)state;
    assert_true(mongoc_collection_insert_one(cl, c, NULL, NULL, &berr));
    assert_true(mongoc_collection_insert_one(jobs, d, NULL, NULL, &berr));
    bson_destroy(c);
    bson_destroy(d);
    mongoc_collection_destroy(jobs);
    mongoc_collection_destroy(cl);
    opts(&o, "untyped");
    o.start = iso("2026-10-01T00:00:00");
    o.end = iso("2026-11-01T00:00:00");
    o.by = SA_BY_GPU_TYPE;
    doc = run_json(false, &o);
    r = row(doc, "rows", "gpu_type", "h100");
    near(r, "gpu_hours", 8.0);
    near(r, "gpu_util_percent", 40.0);
    json_decref(doc);
    sa_report_opts_clear(&o);
}

/* The story of one id on cluster t2205 (text), and its JSON. */
static char *story(const char *cluster, const char *id, json_t **json)
{
    sa_report_opts_t o;
    char *s;
    opts(&o, cluster);
    o.job_arg = id;
    s = run(true, &o);
    if (json)
        *json = run_json(true, &o);
    sa_report_opts_clear(&o);
    return s;
}

/* The job_id_display of every story of a JSON job report, comma-separated, into buf. */
static const char *displays(const json_t *doc, char *buf, size_t n)
{
    size_t i, len = 0;
    json_t *j;
    buf[0] = '\0';
    json_array_foreach(json_object_get(doc, "jobs"), i, j) {
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", i ? "," : "",
                                json_string_value(json_object_get(j, "job_id_display")));
    }
    return buf;
}

/*
 * Issue 22, item 13: slurm-report job 4 (array 1-5%2 of the 22.05 test cluster: tasks
 * 4_1..4_4 got raw ids 17-20, 4_5 kept 4) shows every task, as sacct -j 4 does, and job
 * 5 (het job 5+0, 5+1: raw 5 and 6) both components, each with a summary line; 4_3 and
 * 5+1 show that one. No finished job's history keeps sacct's pending reason on its end.
 */
static void test_array_and_het_story(void **state)
{
    json_t *doc;
    char *s, buf[256];
    (void)state;

    s = story("t2205", "4", &doc);
    if (!strstr(s, "Array job 4: 5 tasks: COMPLETED 4, FAILED 1") || !strstr(s, "Job ID: 4_1 (raw 17)") ||
        !strstr(s, "Job ID: 4_5 (raw 4)"))
        fail_msg("job 4 is not the whole array:\n%s", s);
    assert_string_equal(displays(doc, buf, sizeof buf), "4_1,4_2,4_3,4_4,4_5");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(doc, "summaries"), 0),
                                                        "members")), 5);
    /* sacct's Reason of the tasks (JobArrayTaskLimit: why they waited) is on their PENDING entry only */
    if (strstr(s, "COMPLETED reason") || !strstr(s, "PENDING reason JobArrayTaskLimit"))
        fail_msg("a task's history has a stale reason on its end, or lost it:\n%s", s);
    free(s);
    json_decref(doc);

    s = story("t2205", "5", &doc);
    if (!strstr(s, "Het job 5: 2 components: CANCELLED 2"))
        fail_msg("job 5 is not the whole het job:\n%s", s);
    assert_string_equal(displays(doc, buf, sizeof buf), "5+0,5+1");
    free(s);
    json_decref(doc);

    s = story("t2205", "4_3", &doc);
    assert_string_equal(displays(doc, buf, sizeof buf), "4_3");
    assert_null(strstr(s, "Array job"));
    free(s);
    json_decref(doc);
    s = story("t2205", "5+1", &doc);
    assert_string_equal(displays(doc, buf, sizeof buf), "5+1");
    free(s);
    json_decref(doc);
    /* a plain job: no summary */
    s = story("t2205", "9", &doc);
    assert_string_equal(displays(doc, buf, sizeof buf), "9");
    if (strstr(s, "Array job") || strstr(s, "Het job") || strstr(s, "COMPLETED reason"))
        fail_msg("job 9:\n%s", s);
    free(s);
    json_decref(doc);
}

/*
 * A pending job's story says it has not started and gives squeue's forecast, stored as a
 * date (expected_start); a document written before, with extra.expected_start in epoch
 * seconds, is read the same.
 */
static void test_pending_story(void **state)
{
    json_t *doc;
    char *s;
    (void)state;

    s = story("early", "7", &doc); /* squeue-A: job 7 PENDING (Priority), start_time 1795678680 */
    if (!strstr(s, "Start: not yet, expected 2026-11-26T07:38:00Z (forecast)  End: not yet"))
        fail_msg("job 7's story has no forecast:\n%s", s);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "jobs"), 0),
                                                          "expected_start")), "2026-11-26T07:38:00Z");
    free(s);
    json_decref(doc);
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
        bson_t *f = BCON_NEW("_id", BCON_UTF8("early:7")), *old;
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, f, NULL, NULL);
        const bson_t *d;
        bson_iter_t it, sub;
        bson_error_t berr;
        assert_true(mongoc_cursor_next(cur, &d));
        assert_true(bson_iter_init_find(&it, d, "expected_start"));
        assert_true(BSON_ITER_HOLDS_DATE_TIME(&it));
        assert_int_equal(bson_iter_date_time(&it), INT64_C(1795678680000));
        assert_true(bson_iter_init(&it, d));
        assert_false(bson_iter_find_descendant(&it, "extra.expected_start", &sub)); /* no epoch copy */
        mongoc_cursor_destroy(cur);
        bson_destroy(f);
        /* as 0.1 and earlier 0.2 archives hold it */
        old = BCON_NEW("_id", BCON_UTF8("early:99"), "cluster", BCON_UTF8("early"), "job_id", BCON_INT64(99),
                       "job_id_display", BCON_UTF8("99"), "state", BCON_UTF8("PENDING"), "submit",
                       BCON_DATE_TIME(INT64_C(1795674475000)), "history", "[", "]", "runs", "[", "]", "extra", "{",
                       "expected_start", BCON_INT64(1795680000), "}");
        if (!mongoc_collection_insert_one(c, old, NULL, NULL, &berr))
            fail_msg("insert: %s", berr.message);
        bson_destroy(old);
        mongoc_collection_destroy(c);
    }
    s = story("early", "99", NULL);
    if (!strstr(s, "Start: not yet, expected 2026-11-26T08:00:00Z (forecast)"))
        fail_msg("an older document's extra.expected_start is not read:\n%s", s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_account),       cmocka_unit_test(test_by_type_and_user),
        cmocka_unit_test(test_formats),          cmocka_unit_test(test_job_story),
        cmocka_unit_test(test_habrok_gpu_job),   cmocka_unit_test(test_no_usage_columns),
        cmocka_unit_test(test_untyped_gpu_type),  cmocka_unit_test(test_array_and_het_story),
        cmocka_unit_test(test_pending_story),
    };
    int rc;

    client = tu_mongo_client("efficiency", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = tu_run_group_tests("efficiency", tests, group_setup, NULL);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
