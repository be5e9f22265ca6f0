/*
 * test_runsrc.c - schema/jobdoc/sa_runsrc.c, the one source of typed runs: every rule of a
 * run's end (its own; the next run's start; a final job's end; vanished_at; open while
 * running; the history of a job that left RUNNING, and a read that needs it), the one
 * GPU-type rule (typed TRES, the nodes' type found at ingest, "unknown"), CPUs, memory and
 * billing; seff's figures of a run, Slurm's first, then Prometheus's, each saying its source;
 * shares of a multi-type run.
 */
#include "tu_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_runsrc.h"

#define D4 TU_D4
#define H TU_H

/* A job document read into v (its runs into rs); b holds it (caller destroys). */
typedef struct {
    bson_t *b;
    sa_jobview_t v;
    sa_runsrc_t rs;
    bool need_history;
} job_t;

/* Reads json into j and its typed runs (have_history: as a reader that read the history). */
static void job_read(job_t *j, const char *json, bool have_history)
{
    sa_error_t err;
    j->b = tu_bson(json);
    sa_jobview_init(&j->v);
    sa_runsrc_init(&j->rs);
    assert_true(sa_jobview_read(&j->v, j->b, &err));
    assert_true(sa_runsrc_read(&j->rs, &j->v, have_history, &j->need_history, &err));
}

static void job_clear(job_t *j)
{
    sa_runsrc_clear(&j->rs);
    sa_jobview_clear(&j->v);
    bson_destroy(j->b);
}

/* A run's times at D4 + h hours, as JSON ({"$date": ms}) into buf. */
static const char *at(char *buf, size_t len, double h)
{
    snprintf(buf, len, "{\"$date\": %lld}", (long long)((D4 + (int64_t)(h * H)) * 1000));
    return buf;
}

/*
 * The ends: run 1 without one ends where run 2 starts; run 2 with its own keeps it; a
 * run without a start is no run; an end before its start is the start.
 */
static void test_end_own_and_next(void **state)
{
    char json[1024], a[40], b[40], c[40], d[40];
    job_t j;
    (void)state;

    /* the fourth run ends (7:00) before it starts (8:00) */
    snprintf(json, sizeof json,
             "{\"_id\": \"c:1\", \"state\": \"COMPLETED\", \"end\": {\"$date\": %lld}, \"runs\": [{\"start\": %s, "
             "\"gpus\": 1}, {\"gpus\": 4}, {\"start\": %s, \"end\": %s, \"gpus\": 1}, {\"start\": %s, \"end\": "
             "{\"$date\": %lld}}]}",
             (D4 + 9 * H) * 1000, at(a, sizeof a, 1), at(b, sizeof b, 3), at(c, sizeof c, 5), at(d, sizeof d, 8),
             (D4 + 7 * H) * 1000);
    job_read(&j, json, true);
    assert_int_equal(j.rs.n, 3); /* the run without a start is none */
    assert_int_equal(j.rs.runs[0].start, D4 + H);
    assert_int_equal(j.rs.runs[0].end, D4 + 3 * H);
    assert_int_equal(j.rs.runs[1].end, D4 + 5 * H);
    assert_int_equal(j.rs.runs[2].start, D4 + 8 * H);
    assert_int_equal(j.rs.runs[2].end, D4 + 8 * H);
    assert_false(j.need_history);
    job_clear(&j);
}

/* The last run without an end of: a final job ends at its end (none: counts nothing), a vanished one at vanished_at. */
static void test_end_final_vanished_open(void **state)
{
    char json[1024], a[40], b[40];
    job_t j;
    (void)state;

    snprintf(json, sizeof json, "{\"_id\": \"c:2\", \"state\": \"TIMEOUT\", \"end\": %s, \"runs\": [{\"start\": %s}]}",
             at(b, sizeof b, 6), at(a, sizeof a, 2));
    job_read(&j, json, false);
    assert_int_equal(j.rs.runs[0].end, D4 + 6 * H);
    job_clear(&j);
    snprintf(json, sizeof json, "{\"_id\": \"c:2\", \"state\": \"FAILED\", \"runs\": [{\"start\": %s}]}",
             at(a, sizeof a, 2));
    job_read(&j, json, false);
    assert_int_equal(j.rs.runs[0].end, D4 + 2 * H);
    job_clear(&j);
    snprintf(json, sizeof json,
             "{\"_id\": \"c:2\", \"state\": \"RUNNING\", \"vanished_at\": %s, \"runs\": [{\"start\": %s}]}",
             at(b, sizeof b, 4.5), at(a, sizeof a, 2));
    job_read(&j, json, false);
    assert_int_equal(j.rs.runs[0].end, D4 + 4 * H + 1800);
    job_clear(&j);
    snprintf(json, sizeof json, "{\"_id\": \"c:2\", \"state\": \"RUNNING\", \"runs\": [{\"start\": %s}]}",
             at(a, sizeof a, 2));
    job_read(&j, json, false);
    assert_int_equal(j.rs.runs[0].end, SA_UNSET); /* open: counts up to the last observation */
    job_clear(&j);
}

/*
 * A job that left RUNNING (requeued, pending again) ends its run at the first later
 * history entry that is not RUNNING or SUSPENDED; read without the history, the reader is
 * told it needs it and gets no run; a history without such an entry: open.
 */
static void test_end_from_history(void **state)
{
    char json[1024], a[40], b[40], c[40], d[40], e[40];
    job_t j;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:3\", \"state\": \"PENDING\", \"runs\": [{\"start\": %s}], \"history\": "
             "[{\"state\": \"RUNNING\", \"at\": %s}, {\"state\": \"SUSPENDED\", \"at\": %s}, "
             "{\"state\": \"REQUEUED\", \"at\": %s}, {\"state\": \"PENDING\", \"at\": %s}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 1), at(c, sizeof c, 2), at(d, sizeof d, 3), at(e, sizeof e, 3.5));
    job_read(&j, json, true);
    assert_int_equal(j.rs.n, 1);
    assert_int_equal(j.rs.runs[0].end, D4 + 3 * H);
    job_clear(&j);
    job_read(&j, json, false);
    assert_true(j.need_history);
    assert_int_equal(j.rs.n, 0);
    job_clear(&j);
    snprintf(json, sizeof json,
             "{\"_id\": \"c:3\", \"state\": \"PENDING\", \"runs\": [{\"start\": %s}], \"history\": "
             "[{\"state\": \"RUNNING\", \"at\": %s}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 1));
    job_read(&j, json, true);
    assert_int_equal(j.rs.runs[0].end, SA_UNSET);
    job_clear(&j);
}

/*
 * The one GPU-type rule: typed TRES as they are (a type twice is one, a count of 0 none);
 * untyped GPUs take the type found on the run's nodes (source node or carried), else
 * "unknown"; GPUs beyond the typed ones count as untyped.
 */
static void test_gpu_types(void **state)
{
    char json[1024], a[40], b[40];
    job_t j;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:4\", \"state\": \"COMPLETED\", \"runs\": ["
             "{\"start\": %s, \"end\": %s, \"gpus\": 5, \"gpus_by_type\": [{\"type\": \"a100\", \"count\": 2}, "
             "{\"type\": \"h100\", \"count\": 0}, {\"type\": \"a100\", \"count\": 1}]}, "
             "{\"start\": %s, \"end\": %s, \"gpus\": 2, \"gpu_type\": \"l40s\", \"gpu_type_source\": \"node\"}, "
             "{\"start\": %s, \"end\": %s, \"gpus\": 2, \"gpu_type\": \"l40s\", \"gpu_type_source\": \"carried\"}, "
             "{\"start\": %s, \"end\": %s, \"gpus\": 2, \"gpu_type\": \"l40s\", \"gpu_type_source\": \"unknown\"}, "
             "{\"start\": %s, \"end\": %s, \"cpus\": 4}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 2), a, b, a, b, a, b, a, b);
    job_read(&j, json, true);
    assert_int_equal(j.rs.n, 5);
    assert_int_equal(j.rs.runs[0].ngpus, 2); /* a100 x 3, and the 2 not typed */
    assert_string_equal(j.rs.runs[0].gpus[0].type, "a100");
    assert_int_equal(j.rs.runs[0].gpus[0].count, 3);
    assert_string_equal(j.rs.runs[0].gpus[1].type, SA_GPU_TYPE_UNKNOWN);
    assert_int_equal(j.rs.runs[0].gpus[1].count, 2);
    assert_int_equal(j.rs.runs[0].gpu_total, 5);
    assert_string_equal(j.rs.runs[1].gpus[0].type, "l40s");
    assert_string_equal(j.rs.runs[2].gpus[0].type, "l40s");
    assert_string_equal(j.rs.runs[3].gpus[0].type, SA_GPU_TYPE_UNKNOWN);
    assert_int_equal(j.rs.runs[3].gpu_total, 2);
    assert_int_equal(j.rs.runs[4].ngpus, 0); /* CPU-only */
    assert_int_equal(j.rs.runs[4].gpu_total, 0);
    assert_int_equal(j.rs.runs[4].cpus, 4);
    job_clear(&j);
}

/* CPUs and memory of the run (0 when not said); the job's billing x 1000, rounded (0 when not a weight). */
static void test_cpus_memory_billing(void **state)
{
    char json[1024], a[40], b[40];
    job_t j;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:5\", \"state\": \"COMPLETED\", \"alloc\": {\"billing\": 2.0005}, \"runs\": "
             "[{\"start\": %s, \"end\": %s, \"cpus\": 8, \"mem_mb\": 4096}, {\"start\": %s, \"end\": %s, \"cpus\": 0}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 2), b, at(a, sizeof a, 3));
    job_read(&j, json, true);
    assert_int_equal(j.rs.runs[0].cpus, 8);
    assert_int_equal(j.rs.runs[0].mem_mb, 4096);
    assert_int_equal(j.rs.runs[0].billing_milli, 2001);
    assert_int_equal(j.rs.runs[1].cpus, 0);
    assert_int_equal(j.rs.runs[1].mem_mb, 0);
    job_clear(&j);
    snprintf(json, sizeof json,
             "{\"_id\": \"c:5\", \"state\": \"COMPLETED\", \"alloc\": {\"billing\": -1}, \"runs\": "
             "[{\"start\": %s, \"end\": %s}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 2));
    job_read(&j, json, true);
    assert_int_equal(j.rs.runs[0].billing_milli, 0);
    job_clear(&j);
}

/*
 * seff's figures of a run of 2 GPUs and 4 CPUs for 2 h (7200 s), asked 8192 MiB: Slurm's
 * TotalCPU 3600 s of 4 x 7200 = 28800 s, MaxRSS 2 GiB of 8 GiB, GPU utilisation 40 %.
 */
static void test_eff_from_sacct(void **state)
{
    char json[1024], a[40], b[40];
    job_t j;
    sa_eff_run_t e;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:6\", \"state\": \"COMPLETED\", \"req\": {\"mem_mb\": 8192}, \"runs\": [{\"start\": %s, "
             "\"end\": %s, \"gpus\": 2, \"cpus\": 4, \"usage\": {\"cpu_s\": 3600.0, \"max_rss_bytes\": 2147483648, "
             "\"gpu_util_pct\": 40.0}, \"prom\": {\"gpu_util_mean\": 90.0, \"cpu_cores_mean\": 3.0, "
             "\"mem_max_bytes\": 1.0}}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 3));
    job_read(&j, json, true);
    sa_eff_run(&j.v, &j.v.runs[0], &e);
    assert_int_equal(e.elapsed_s, 7200);
    assert_int_equal(e.gpu_s, 14400);
    assert_true(e.has_cpu);
    assert_true(e.cpu_used_s == 3600.0);
    assert_true(e.cpu_alloc_s == 28800.0);
    assert_true(e.has_mem);
    assert_int_equal(e.mem_used_bytes, 2147483648LL);
    assert_int_equal(e.mem_req_bytes, 8192LL * 1048576);
    assert_true(e.has_util);
    assert_true(e.gpu_util_pct == 40.0); /* Slurm's, not Prometheus's 90 */
    assert_string_equal(sa_eff_src_name(e.util_src), "sacct");
    assert_string_equal(sa_eff_src_name(e.cpu_src), "sacct");
    assert_string_equal(sa_eff_src_name(e.mem_src), "sacct");
    assert_true(e.prom_idle_gpu_s == -1);
    job_clear(&j);
}

/*
 * Where Slurm said nothing, Prometheus's: utilisation mean 3 % with 1800 idle GPU-seconds
 * under 5 %; CPU cores 1.5 x 3600 s = 5400 s of 2 x 3600 = 7200 s; memory max 1 GiB of the
 * run's 4096 MiB (no req.mem_mb). Neither: no figure, source "-".
 */
static void test_eff_from_prometheus(void **state)
{
    char json[1024], a[40], b[40];
    job_t j;
    sa_eff_run_t e;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:7\", \"state\": \"COMPLETED\", \"runs\": [{\"start\": %s, \"end\": %s, \"elapsed_s\": 3600, "
             "\"gpus\": 1, \"cpus\": 2, \"mem_mb\": 4096, \"prom\": {\"gpu_util_mean\": 3.0, \"idle_gpu_s\": 1800.0, "
             "\"idle_pct\": 5.0, \"cpu_cores_mean\": 1.5, \"mem_max_bytes\": 1073741824.0}}]}",
             at(a, sizeof a, 1), at(b, sizeof b, 3));
    job_read(&j, json, true);
    sa_eff_run(&j.v, &j.v.runs[0], &e);
    assert_int_equal(e.elapsed_s, 3600); /* its elapsed_s, not end - start */
    assert_int_equal(e.gpu_s, 3600);
    assert_true(e.has_util && e.gpu_util_pct == 3.0);
    assert_string_equal(sa_eff_src_name(e.util_src), "prometheus");
    assert_true(e.prom_idle_gpu_s == 1800.0 && e.prom_idle_pct == 5.0);
    assert_true(e.has_cpu && e.cpu_used_s == 5400.0 && e.cpu_alloc_s == 7200.0);
    assert_int_equal(e.cpu_src, SA_EFF_SRC_PROM);
    assert_true(e.has_mem);
    assert_int_equal(e.mem_used_bytes, 1073741824LL);
    assert_int_equal(e.mem_req_bytes, 4096LL * 1048576);
    assert_int_equal(e.mem_src, SA_EFF_SRC_PROM);
    job_clear(&j);

    snprintf(json, sizeof json,
             "{\"_id\": \"c:7\", \"state\": \"RUNNING\", \"runs\": [{\"start\": %s, \"gpus\": 1, \"cpus\": 2}]}",
             at(a, sizeof a, 1));
    job_read(&j, json, true);
    sa_eff_run(&j.v, &j.v.runs[0], &e);
    assert_int_equal(e.elapsed_s, SA_UNSET); /* still running */
    assert_int_equal(e.gpu_s, 0);
    assert_false(e.has_cpu || e.has_mem || e.has_util);
    assert_string_equal(sa_eff_src_name(e.util_src), "-");
    job_clear(&j);
}

/* A multi-type run's figures are split in shares: exactly when whole, else rounded to the nearest. */
static void test_shares(void **state)
{
    (void)state;
    assert_int_equal(sa_runsrc_share(7, 3, 3), 7);
    assert_int_equal(sa_runsrc_share(7, 1, 3), 2);  /* 2.33 */
    assert_int_equal(sa_runsrc_share(7, 2, 3), 5);  /* 4.67 */
    assert_int_equal(sa_runsrc_share(5, 1, 2), 3);  /* 2.5: away from zero */
    assert_int_equal(sa_runsrc_share(0, 1, 4), 0);
    assert_int_equal(sa_runsrc_share(1000000000000LL, 1, 4), 250000000000LL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_own_and_next),    cmocka_unit_test(test_end_final_vanished_open),
        cmocka_unit_test(test_end_from_history),    cmocka_unit_test(test_gpu_types),
        cmocka_unit_test(test_cpus_memory_billing), cmocka_unit_test(test_eff_from_sacct),
        cmocka_unit_test(test_eff_from_prometheus), cmocka_unit_test(test_shares),
    };
    return tu_run_group_tests("runsrc", tests, NULL, NULL);
}
