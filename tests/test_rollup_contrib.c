/*
 * test_rollup_contrib.c - schema/rollup/sa_rollup_contrib.c: what one job document
 * contributes to the rollups, against hand-computed figures: a run across midnight, a
 * requeued job with an open run on two GPU types, untyped GPUs of no known type, the job
 * lists (live, ended), the started lists (each run's own submit and eligible), times no
 * rollup can name; the record widths, row keys, the job lists' CPUs and memory, and the
 * projection (a document cut to it contributes exactly what the whole one does).
 */
#include "tu_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D4 TU_D4
#define H TU_H

/*
 * One run of 2 a100 GPUs and 8 CPUs, 2026-10-04 22:00 to 2026-10-05 02:00, COMPLETED,
 * TotalCPU 14400 s:
 *   day 10-04: [22:00, 24:00) = 7200 s: gpu_s 2 x 7200 = 14400, cpu_s 8 x 7200 = 57600, started 1
 *   day 10-05: [00:00, 02:00) = 7200 s: the same sums; the run ended there: runs 1, gpu_s of
 *   the whole run 2 x 14400 = 28800, CPU used 14,400,000 ms of 8 x 14400 = 115200 s allocated
 */
static void test_contrib_across_midnight(void **state)
{
    char json[2048];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    sa_rollup_doc_t d;
    sa_rollup_sum_t *sums;
    int64_t *ended;
    sa_error_t err;
    bson_t *b;
    const sa_rollup_contrib_doc_t *x;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:1\", \"_v\": 3, \"cluster\": \"c\", \"account\": \"phys\", \"user\": \"ann\", "
             "\"partition\": \"gpu\", \"qos\": \"normal\", \"state\": \"COMPLETED\", "
             "\"end\": {\"$date\": %lld}, \"runs\": [{\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, "
             "\"state\": \"COMPLETED\", \"cpus\": 8, \"mem_mb\": 1024, \"gpus\": 2, \"elapsed_s\": 14400, "
             "\"gpus_by_type\": [{\"type\": \"a100\", \"count\": 2}], \"usage\": {\"cpu_s\": 14400.0}}]}",
             (D4 + 26 * H) * 1000, (D4 + 22 * H) * 1000, (D4 + 26 * H) * 1000);
    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&v, &c, &b, json);
    assert_int_equal(c.ndocs, 4); /* two days of usage, the started list of 10-04 and the ended list of 10-05 */
    assert_null(sa_rollup_contrib_find(&c, SA_ROLLUP_K_OPEN, 0));
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_STARTED, D4));
    assert_int_equal(x->nrec, 1);
    assert_int_equal(x->rec[SA_RS_START], D4 + 22 * H);
    assert_int_equal(x->rec[SA_RS_GPUS], 2);
    assert_int_equal(x->rec[SA_RS_SUBMIT], SA_UNSET); /* the document says no submit time */
    assert_int_equal(x->rec[SA_RS_ELIGIBLE], SA_UNSET);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_ENDED, D4 + 24 * H));
    assert_int_equal(x->nrec, 1);
    assert_int_equal(x->rec[SA_RR_END], D4 + 26 * H);
    assert_string_equal(c.states[x->rec[SA_RR_STATE]], "COMPLETED");
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_MEMBERS, D4));
    assert_int_equal(x->nrec, 1);
    assert_int_equal(x->rec[SA_RR_START], D4 + 22 * H);
    assert_int_equal(x->rec[SA_RR_END], D4 + 24 * H);
    assert_int_equal(x->rec[SA_RR_STARTED], 1);
    assert_int_equal(x->rec[SA_RR_ENDED_AT], -1);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_MEMBERS, D4 + 24 * H));
    assert_int_equal(x->rec[SA_RR_STARTED], 0);
    assert_int_equal(x->rec[SA_RR_ENDED_AT], D4 + 26 * H);
    assert_int_equal(x->rec[SA_RR_E_RUNS], 1);
    assert_int_equal(x->rec[SA_RR_E_GPU_S], 28800);
    assert_int_equal(x->rec[SA_RR_E_NODATA_S], 28800); /* no GPU utilisation gathered */
    assert_int_equal(x->rec[SA_RR_E_CPU_USED_MS], 14400000);
    assert_int_equal(x->rec[SA_RR_E_CPU_ALLOC_S], 115200);

    /* the day document of 10-05 holding it: one row */
    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4 + 24 * H, 0);
    assert_true(sa_rollup_doc_put(&d, "c:1", 3, &c, &err));
    assert_true(d.changed);
    assert_true(sa_rollup_doc_sums(&d, &sums, &ended, &err));
    assert_int_equal(d.nkeys, 1);
    assert_string_equal(d.keys[0].s[4], "a100");
    assert_int_equal(sums[0].gpu_s, 14400);
    assert_int_equal(sums[0].cpu_s, 57600);
    assert_int_equal(sums[0].mem_mb_s, 1024 * 7200);
    assert_int_equal(ended[0], 1); /* COMPLETED */
    free(sums);
    free(ended);
    sa_rollup_doc_clear(&d);
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/*
 * A requeued job: run 1 [10-04 01:00, 03:00) 4 untyped GPUs its nodes' type (h100, found
 * at ingest), run 2 from 05:00 still running with 1 h100 + 1 a100: run 1 is closed on
 * 10-04; run 2 is open (in the open-runs document, split by type, CPUs on its first type).
 */
static void test_contrib_requeue_open_and_split(void **state)
{
    char json[2048];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    bson_t *b;
    const sa_rollup_contrib_doc_t *x;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:2\", \"cluster\": \"c\", \"account\": \"bio\", \"user\": \"bo\", \"state\": \"RUNNING\", "
             "\"runs\": [{\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"state\": \"REQUEUED\", "
             "\"gpus\": 4, \"cpus\": 4, \"gpu_type\": \"h100\", \"gpu_type_source\": \"node\"}, "
             "{\"start\": {\"$date\": %lld}, \"gpus\": 2, \"cpus\": 16, "
             "\"gpus_by_type\": [{\"type\": \"h100\", \"count\": 1}, {\"type\": \"a100\", \"count\": 1}]}]}",
             (D4 + 1 * H) * 1000, (D4 + 3 * H) * 1000, (D4 + 5 * H) * 1000);
    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&v, &c, &b, json);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_MEMBERS, D4));
    assert_int_equal(x->nrec, 1);
    assert_string_equal(c.keys[x->rec[SA_RR_KEY]].s[4], "h100");
    assert_int_equal(x->rec[SA_RR_GPUS] * (x->rec[SA_RR_END] - x->rec[SA_RR_START]), 4 * 2 * H);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_OPEN, 0));
    assert_int_equal(x->nrec, 2);
    assert_int_equal(x->rec[SA_RR_START], D4 + 5 * H);
    assert_string_equal(c.keys[x->rec[SA_RR_KEY]].s[4], "h100");
    assert_int_equal(x->rec[SA_RR_CPUS], 16);
    assert_string_equal(c.keys[x->rec[SA_RR_NF + SA_RR_KEY]].s[4], "a100");
    assert_int_equal(x->rec[SA_RR_NF + SA_RR_CPUS], 0);
    assert_null(sa_rollup_contrib_find(&c, SA_ROLLUP_K_ENDED, D4)); /* not final: in the live list */
    assert_non_null(sa_rollup_contrib_find(&c, SA_ROLLUP_K_LIVE, 0));
    bson_destroy(b);

    /* untyped GPUs whose type ingest could not find: "unknown" */
    snprintf(json, sizeof json,
             "{\"_id\": \"c:3\", \"cluster\": \"c\", \"state\": \"COMPLETED\", \"runs\": [{\"start\": {\"$date\": %lld}, "
             "\"end\": {\"$date\": %lld}, \"gpus\": 2, \"gpu_type_source\": \"unknown\"}]}",
             (D4 + 1 * H) * 1000, (D4 + 2 * H) * 1000);
    tu_contrib_of(&v, &c, &b, json);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_MEMBERS, D4));
    assert_string_equal(c.keys[x->rec[SA_RR_KEY]].s[4], SA_GPU_TYPE_UNKNOWN);
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/*
 * The job lists: a pending job of `jobs` is in the live list with the GPUs it asks for;
 * marked vanished, the same record carries vanished_at; its jobs_superseded copy
 * (unfinished) is in no list; a final job is in the ended list of its end's day.
 */
static void test_contrib_job_lists(void **state)
{
    char json[1024];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    bson_t *b;
    const sa_rollup_contrib_doc_t *x;
    (void)state;

    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    snprintf(json, sizeof json,
             "{\"_id\": \"c:21000\", \"job_id\": 21000, \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", "
             "\"partition\": \"gpu\", \"state\": \"PENDING\", \"submit\": {\"$date\": %lld}, \"gpus\": 0, "
             "\"req\": {\"gpus\": 4, \"cpus\": 32}, \"vanished_at\": {\"$date\": %lld}}",
             (D4 + H) * 1000, (D4 + 3 * H) * 1000);
    tu_contrib_of(&v, &c, &b, json);
    assert_int_equal(c.ndocs, 1);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_LIVE, 0));
    assert_int_equal(x->nrec, 1);
    assert_int_equal(x->rec[SA_RR_GPUS], 4);
    assert_int_equal(x->rec[SA_RR_CPUS], 32);
    assert_int_equal(x->rec[SA_RR_START], D4 + H);
    assert_int_equal(x->rec[SA_RR_ENDED_AT], D4 + 3 * H);
    assert_string_equal(c.keys[x->rec[SA_RR_KEY]].s[2], "gpu");
    assert_string_equal(c.states[x->rec[SA_RR_STATE]], "PENDING");
    bson_destroy(b);

    /* the same job kept aside by a reuse of its id: in no list */
    snprintf(json, sizeof json,
             "{\"_id\": \"c:21000:%lld\", \"job_id\": 21000, \"cluster\": \"c\", \"state\": \"RUNNING\"}",
             (D4 + H));
    tu_contrib_of(&v, &c, &b, json);
    assert_int_equal(c.ndocs, 0); /* and nothing of the job before it is left */
    bson_destroy(b);

    /* final: the ended list of its end's day */
    snprintf(json, sizeof json,
             "{\"_id\": \"c:7\", \"job_id\": 7, \"cluster\": \"c\", \"state\": \"CANCELLED\", \"gpus\": 1, "
             "\"end\": {\"$date\": %lld}}",
             (D4 + 5 * H) * 1000);
    tu_contrib_of(&v, &c, &b, json);
    assert_int_equal(c.ndocs, 1);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_ENDED, D4));
    assert_int_equal(x->rec[SA_RR_END], D4 + 5 * H);
    assert_int_equal(x->rec[SA_RR_START], -1);
    assert_int_equal(x->rec[SA_RR_GPUS], 1);
    bson_destroy(b);

    /* final without an end: in no day's list */
    tu_contrib_of(&v, &c, &b, "{\"_id\": \"c:8\", \"job_id\": 8, \"cluster\": \"c\", \"state\": \"FAILED\"}");
    assert_int_equal(c.ndocs, 0);
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/*
 * A requeued job as slurm-ingest stored it before runs[].eligible: run 1 (submit 06:00,
 * start 06:10, until 07:00), run 2 (submit 07:00, start 07:32, until 08:00); the document's
 * submit and eligible are the second incarnation's (07:00, 07:02). Run 1 keeps its submit,
 * its eligible is not known; run 2 takes the document's. Given runs[].eligible, run 1 has
 * its own. A job still pending has no record.
 */
static void test_started_records(void **state)
{
    char json[2048];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    bson_t *b;
    const sa_rollup_contrib_doc_t *x;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:104\", \"_v\": 2, \"cluster\": \"c\", \"account\": \"bio\", \"user\": \"carol\", "
             "\"partition\": \"gpu\", \"qos\": \"normal\", \"state\": \"COMPLETED\", \"submit\": {\"$date\": %lld}, "
             "\"eligible\": {\"$date\": %lld}, \"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, "
             "\"runs\": [{\"submit\": {\"$date\": %lld}, \"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, "
             "\"state\": \"REQUEUED\", \"gpus\": 1, \"node_count\": 1, \"gpus_by_type\": [{\"type\": \"a100\", "
             "\"count\": 1}]}, {\"submit\": {\"$date\": %lld}, \"start\": {\"$date\": %lld}, \"end\": {\"$date\": "
             "%lld}, \"state\": \"COMPLETED\", \"gpus\": 1, \"node_count\": 1, \"gpus_by_type\": [{\"type\": "
             "\"a100\", \"count\": 1}]}]}",
             (D4 + 7 * H) * 1000, (D4 + 7 * H + 120) * 1000, (D4 + 7 * H + 1920) * 1000, (D4 + 8 * H) * 1000,
             (D4 + 6 * H) * 1000, (D4 + 6 * H + 600) * 1000, (D4 + 7 * H) * 1000, (D4 + 7 * H) * 1000,
             (D4 + 7 * H + 1920) * 1000, (D4 + 8 * H) * 1000);
    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&v, &c, &b, json);
    assert_non_null(x = sa_rollup_contrib_find(&c, SA_ROLLUP_K_STARTED, D4));
    assert_int_equal(x->nrec, 2);
    assert_int_equal(x->rec[SA_RS_START], D4 + 6 * H + 600);
    assert_int_equal(x->rec[SA_RS_SUBMIT], D4 + 6 * H);
    assert_int_equal(x->rec[SA_RS_ELIGIBLE], SA_UNSET); /* reset by the requeue: not known */
    assert_int_equal(x->rec[SA_RS_NF + SA_RS_START], D4 + 7 * H + 1920);
    assert_int_equal(x->rec[SA_RS_NF + SA_RS_SUBMIT], D4 + 7 * H);
    assert_int_equal(x->rec[SA_RS_NF + SA_RS_ELIGIBLE], D4 + 7 * H + 120);
    assert_int_equal(x->rec[SA_RS_NF + SA_RS_GPUS], 1);
    assert_int_equal(x->rec[SA_RS_NF + SA_RS_NODES], 1);
    assert_string_equal(c.keys[x->rec[SA_RS_KEY]].s[4], "a100");
    {
        sa_jobview_run_t r1 = v.runs[0];
        int64_t sub, elig;
        r1.eligible = D4 + 6 * H; /* runs[].eligible said: its own */
        sa_rollup_queue_times(&v, &r1, &sub, &elig);
        assert_int_equal(sub, D4 + 6 * H);
        assert_int_equal(elig, D4 + 6 * H);
        r1 = v.runs[1];
        r1.submit = SA_UNSET; /* written before runs[].submit: the run that started at the document's start */
        sa_rollup_queue_times(&v, &r1, &sub, &elig);
        assert_int_equal(sub, D4 + 7 * H);
        assert_int_equal(elig, D4 + 7 * H + 120);
        r1 = v.runs[0];
        r1.submit = SA_UNSET; /* ... and not another run */
        sa_rollup_queue_times(&v, &r1, &sub, &elig);
        assert_int_equal(sub, SA_UNSET);
        assert_int_equal(elig, SA_UNSET);
    }
    bson_destroy(b);

    /* pending: no run, no record */
    snprintf(json, sizeof json,
             "{\"_id\": \"c:105\", \"cluster\": \"c\", \"state\": \"PENDING\", \"submit\": {\"$date\": %lld}, "
             "\"eligible\": {\"$date\": %lld}}",
             (D4 + 9 * H) * 1000, (D4 + 9 * H) * 1000);
    tu_contrib_of(&v, &c, &b, json);
    for (size_t i = 0; i < c.ndocs; i++)
        assert_int_not_equal(c.docs[i].kind, SA_ROLLUP_K_STARTED);
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/*
 * A run whose start no rollup _id can name (before 1970) counts nowhere; one whose end is
 * years after its start counts SA_ROLLUP_MAX_DAYS + 1 days at most.
 */
static void test_times_of_no_rollup(void **state)
{
    char json[1024];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    bson_t *b;
    size_t members = 0;
    (void)state;

    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&v, &c, &b,
                  "{\"_id\": \"c:5\", \"cluster\": \"c\", \"state\": \"COMPLETED\", \"runs\": [{\"start\": "
                  "{\"$date\": -7200000}, \"end\": {\"$date\": -3600000}, \"gpus\": 1}]}");
    assert_int_equal(c.ndocs, 0);
    bson_destroy(b);
    snprintf(json, sizeof json,
             "{\"_id\": \"c:6\", \"cluster\": \"c\", \"state\": \"RUNNING\", \"runs\": [{\"start\": {\"$date\": "
             "%lld}, \"end\": {\"$date\": %lld}, \"gpus\": 1}]}",
             D4 * 1000, (D4 + 20LL * 365 * SA_DAY) * 1000);
    tu_contrib_of(&v, &c, &b, json);
    for (size_t i = 0; i < c.ndocs; i++)
        members += c.docs[i].kind == SA_ROLLUP_K_MEMBERS;
    assert_int_equal(members, SA_ROLLUP_MAX_DAYS + 1);
    assert_non_null(sa_rollup_contrib_find(&c, SA_ROLLUP_K_MEMBERS, D4 + SA_ROLLUP_MAX_DAYS * (int64_t)SA_DAY));
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/* Members, open runs and the job lists have SA_RR_NF fields and a state; the started lists SA_RS_NF and none. */
static void test_record_widths(void **state)
{
    (void)state;
    for (int kind = 0; kind < SA_ROLLUP_K_COUNT; kind++) {
        bool started = kind == SA_ROLLUP_K_STARTED;
        assert_int_equal(sa_rollup_nf((sa_rollup_kind_t)kind), started ? SA_RS_NF : SA_RR_NF);
        assert_int_equal(sa_rollup_state_field((sa_rollup_kind_t)kind), started ? -1 : SA_RR_STATE);
    }
}

/* Row keys order by account, user, partition, qos, then GPU type. */
static void test_rowkey_order(void **state)
{
    sa_rollup_rowkey_t a = {{"phys", "ann", "gpu", "normal", "a100"}};
    sa_rollup_rowkey_t b = {{"phys", "ann", "gpu", "normal", "h100"}};
    sa_rollup_rowkey_t c = {{"phys", "bob", "cpu", "", ""}};
    sa_rollup_rowkey_t d = {{"bio", "zed", "gpu", "normal", "a100"}};
    (void)state;

    assert_true(sa_rollup_rowkey_cmp(&a, &b) < 0);
    assert_true(sa_rollup_rowkey_cmp(&b, &c) < 0);
    assert_true(sa_rollup_rowkey_cmp(&d, &a) < 0);
    assert_int_equal(sa_rollup_rowkey_cmp(&a, &a), 0);
}

/*
 * The job lists' CPUs: allocated; asked for while pending or when the allocation is not
 * said; memory: the job's total asked for; 0 when not said.
 */
static void test_list_cpus_and_memory(void **state)
{
    static const struct {
        const char *json;
        int64_t cpus, mem_mb;
    } cases[] = {
        {"{\"state\": \"RUNNING\", \"cpus\": 8, \"req\": {\"cpus\": 4, \"mem_mb\": 2048}}", 8, 2048},
        {"{\"state\": \"PENDING\", \"cpus\": 8, \"req\": {\"cpus\": 4, \"mem_mb\": 2048}}", 4, 2048},
        {"{\"state\": \"RUNNING\", \"req\": {\"cpus\": 4}}", 4, 0},
        {"{\"state\": \"COMPLETED\"}", 0, 0},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sa_jobview_t v;
        sa_error_t err;
        bson_t *b = tu_bson(cases[i].json);
        sa_jobview_init(&v);
        assert_true(sa_jobview_read(&v, b, &err));
        assert_int_equal(sa_rollup_list_cpus(&v), cases[i].cpus);
        assert_int_equal(sa_rollup_list_mem_mb(&v), cases[i].mem_mb);
        sa_jobview_clear(&v);
        bson_destroy(b);
    }
}

/* ---- the projection ---------------------------------------------------------------------------- */

/* True when the projection proj keeps path whole ("runs.start", or "runs" for "runs.start"; _id always). */
static bool kept(const bson_t *proj, const char *path)
{
    bson_iter_t it;
    if (strcmp(path, "_id") == 0)
        return true; /* MongoDB returns it unless the projection excludes it */
    if (!bson_iter_init(&it, proj))
        return false;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        size_t n = strlen(k);
        if (strncmp(path, k, n) == 0 && (path[n] == '\0' || path[n] == '.'))
            return true;
    }
    return false;
}

/* True when the projection keeps some member below path. */
static bool kept_below(const bson_t *proj, const char *path)
{
    bson_iter_t it;
    size_t n = strlen(path);
    if (!bson_iter_init(&it, proj))
        return false;
    while (bson_iter_next(&it)) {
        if (strncmp(bson_iter_key(&it), path, n) == 0 && bson_iter_key(&it)[n] == '.')
            return true;
    }
    return false;
}

/*
 * Appends to out the members of src the projection keeps, as MongoDB applies one: a dotted
 * path reaches into documents and into the documents of arrays (prefix: src's path).
 */
static void project(const bson_t *proj, const bson_t *src, const char *prefix, bson_t *out)
{
    bson_iter_t it;
    assert_true(bson_iter_init(&it, src));
    while (bson_iter_next(&it)) {
        char path[256];
        const char *k = bson_iter_key(&it);
        snprintf(path, sizeof path, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", k);
        if (kept(proj, path)) {
            assert_true(bson_append_iter(out, k, -1, &it));
        } else if (kept_below(proj, path) && (BSON_ITER_HOLDS_DOCUMENT(&it) || BSON_ITER_HOLDS_ARRAY(&it))) {
            bool array = BSON_ITER_HOLDS_ARRAY(&it);
            const uint8_t *data;
            uint32_t len;
            bson_t sub, child;
            if (array)
                bson_iter_array(&it, &len, &data);
            else
                bson_iter_document(&it, &len, &data);
            assert_true(bson_init_static(&sub, data, len));
            if (array) {
                bson_iter_t el;
                bson_append_array_begin(out, k, -1, &child);
                assert_true(bson_iter_init(&el, &sub));
                while (bson_iter_next(&el)) {
                    bson_t item, pitem;
                    if (!BSON_ITER_HOLDS_DOCUMENT(&el))
                        continue;
                    bson_iter_document(&el, &len, &data);
                    assert_true(bson_init_static(&item, data, len));
                    bson_append_document_begin(&child, bson_iter_key(&el), -1, &pitem);
                    project(proj, &item, path, &pitem);
                    bson_append_document_end(&child, &pitem);
                }
                bson_append_array_end(out, &child);
            } else {
                bson_append_document_begin(out, k, -1, &child);
                project(proj, &sub, path, &child);
                bson_append_document_end(out, &child);
            }
        }
    }
}

/* The records of a contribution as text, keys and states by name (to compare two). */
static char *contrib_text(const sa_rollup_contrib_t *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    for (size_t i = 0; i < c->ndocs; i++) {
        const sa_rollup_contrib_doc_t *d = &c->docs[i];
        size_t nf = sa_rollup_nf(d->kind);
        int sf = sa_rollup_state_field(d->kind);
        fprintf(f, "%s %lld:", sa_rollup_kind_name(d->kind), (long long)d->day);
        for (size_t r = 0; r < d->nrec; r++) {
            const int64_t *x = &d->rec[r * nf];
            const sa_rollup_rowkey_t *k = &c->keys[x[0]];
            fprintf(f, " [%s/%s/%s/%s/%s", k->s[0], k->s[1], k->s[2], k->s[3], k->s[4]);
            for (size_t j = 1; j < nf; j++) {
                if ((int)j == sf && x[j] >= 0)
                    fprintf(f, " %s", c->states[x[j]]);
                else
                    fprintf(f, " %lld", (long long)x[j]);
            }
            fputc(']', f);
        }
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

/*
 * A job document cut to sa_rollup_projection contributes what the whole document does: a
 * field the contribution reads and the projection forgot would change a record (its
 * usage, its Prometheus figures, its eligible time, the billing...).
 */
static void test_projection_reads_enough(void **state)
{
    char json[4096];
    bson_t opts = BSON_INITIALIZER, proj, *whole, cut = BSON_INITIALIZER;
    bson_iter_t it;
    const uint8_t *data;
    uint32_t len;
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    sa_error_t err;
    char *want, *got;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:42\", \"_v\": 9, \"job_id\": 42, \"cluster\": \"c\", \"name\": \"train\", "
             "\"account\": \"phys\", \"user\": \"ann\", \"partition\": \"gpu\", \"qos\": \"high\", "
             "\"state\": \"COMPLETED\", \"submit\": {\"$date\": %lld}, \"eligible\": {\"$date\": %lld}, "
             "\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"gpus\": 3, \"cpus\": 12, "
             "\"alloc\": {\"billing\": 2.5, \"cpus\": 12}, \"req\": {\"mem_mb\": 8192, \"gpus\": 3, \"cpus\": 12}, "
             "\"nodes\": \"ga001\", \"exit\": {\"code\": 0, \"signal\": 0}, "
             "\"history\": [{\"state\": \"PENDING\", \"at\": {\"$date\": %lld}}, {\"state\": \"RUNNING\", "
             "\"at\": {\"$date\": %lld}}], "
             "\"runs\": [{\"submit\": {\"$date\": %lld}, \"eligible\": {\"$date\": %lld}, \"start\": {\"$date\": %lld}, "
             "\"end\": {\"$date\": %lld}, \"state\": \"COMPLETED\", \"nodes\": \"ga001\", \"node_count\": 1, "
             "\"cpus\": 12, \"mem_mb\": 8192, \"gpus\": 3, \"elapsed_s\": 7200, "
             "\"gpus_by_type\": [{\"type\": \"a100\", \"count\": 2}, {\"type\": \"h100\", \"count\": 1}], "
             "\"usage\": {\"cpu_s\": 3600.0, \"max_rss_bytes\": 4294967296}, "
             "\"prom\": {\"gpu_util_mean\": 3.0, \"idle_gpu_s\": 1800.0, \"idle_pct\": 5.0, \"read_at\": "
             "{\"$date\": %lld}}, \"steps\": [{\"id\": \"batch\", \"state\": \"COMPLETED\"}]}]}",
             (D4 + H) * 1000, (D4 + H + 60) * 1000, (D4 + 2 * H) * 1000, (D4 + 4 * H) * 1000, (D4 + H) * 1000,
             (D4 + 2 * H) * 1000, (D4 + H) * 1000, (D4 + H + 60) * 1000, (D4 + 2 * H) * 1000, (D4 + 4 * H) * 1000,
             (D4 + 5 * H) * 1000);
    whole = tu_bson(json);
    sa_rollup_projection(&opts);
    assert_true(bson_iter_init_find(&it, &opts, "projection") && BSON_ITER_HOLDS_DOCUMENT(&it));
    bson_iter_document(&it, &len, &data);
    assert_true(bson_init_static(&proj, data, len));
    project(&proj, whole, NULL, &cut);
    assert_false(bson_has_field(&cut, "name")); /* the cut is one */
    assert_false(bson_has_field(&cut, "runs.0.steps"));
    assert_true(bson_has_field(&cut, "runs.0.usage"));

    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    assert_true(sa_jobview_read(&v, whole, &err));
    assert_true(sa_rollup_contrib_of(&c, &v, &err));
    want = contrib_text(&c);
    assert_true(sa_jobview_read(&v, &cut, &err));
    assert_true(sa_rollup_contrib_of(&c, &v, &err));
    got = contrib_text(&c);
    assert_string_equal(got, want);
    /* and the figures it carries are the document's: billing 2.5 -> 2500, the eligible of the run */
    assert_non_null(strstr(want, " 2500 "));
    free(want);
    free(got);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
    bson_destroy(&cut);
    bson_destroy(whole);
    bson_destroy(&opts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contrib_across_midnight), cmocka_unit_test(test_contrib_requeue_open_and_split),
        cmocka_unit_test(test_contrib_job_lists),       cmocka_unit_test(test_started_records),
        cmocka_unit_test(test_times_of_no_rollup),      cmocka_unit_test(test_record_widths),
        cmocka_unit_test(test_rowkey_order),            cmocka_unit_test(test_list_cpus_and_memory),
        cmocka_unit_test(test_projection_reads_enough),
    };
    return tu_run_group_tests("rollup_contrib", tests, NULL, NULL);
}
