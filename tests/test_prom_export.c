/*
 * test_prom_export.c - `slurm-report current --prometheus --per-node` (issue 24, export
 * parity) through real parts: the small cluster of fixtures/prom-export (written by hand:
 * sinfo -N --json, squeue --json, sdiag --json of Slurm 24.05) is ingested by the real
 * slurm-ingest into the test MongoDB server and a time series; the metrics file is
 * written into a textfile-collector directory, checked by `promtool check metrics`,
 * served by Debian's prometheus-node-exporter and scraped by a real Prometheus
 * (tools/prometheus-test-server); then families are queried back through Prometheus's
 * HTTP API (/api/v1/query, the curl binary) and compared with figures computed by hand.
 *
 * The fixture cluster "promx" at 2026-10-15T12:00:00Z:
 *   nodes  g1 MIXED     partition gpu, 64 CPUs (24 allocated: jobs 101-103, 8 each), 256000 MiB (96000
 *                       allocated: 3 x 32000), gpu:a100:4 (3 used)
 *          g2 IDLE      partition gpu, 64 CPUs, 256000 MiB, gpu:a100:4 (none used)
 *          c1 IDLE+DRAIN partition cpu, 32 CPUs (all "other"), 128000 MiB
 *          c2 ALLOCATED partition cpu, 32 CPUs (job 104), 128000 MiB (64000 allocated)
 *   jobs   101 RUNNING gpu physics alice  8 CPUs 32000 MiB 1 GPU
 *          102 RUNNING gpu physics alice  8 CPUs 32000 MiB 1 GPU
 *          103 RUNNING gpu bio     bob    8 CPUs 32000 MiB 1 GPU
 *          104 RUNNING cpu bio     bob   32 CPUs 64000 MiB
 *          105 PENDING gpu physics carol 16 CPUs 64000 MiB 2 GPUs
 *          106 PENDING gpu bio     bob    4 CPUs  8000 MiB 1 GPU
 *          107 PENDING cpu physics alice 64 CPUs 128000 MiB
 *   sdiag  REQUEST_JOB_INFO 1200 RPCs in 3,600,000 us; REQUEST_NODE_INFO 800 in 1,200,000 us;
 *          REQUEST_SUBMIT_BATCH_JOB 7 in 70,000 us; root 1500 RPCs, alice 507 in 870,000 us
 */
#include "testutil.h"
#include "tu_archive.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <mongoc/mongoc.h>

#define MIB 1048576.0

static mongoc_client_t *client;
static char *db_name;
static char box[64] = "/tmp/sa-prom-export-XXXXXX";
static char prom_url[128];
static bool prom_started;

static const char *path_in(const char *rel)
{
    static char p[2][300];
    static int k;
    k = !k;
    snprintf(p[k], sizeof p[k], "%s/%s", box, rel);
    return p[k];
}

/* slurm-report with args (NULL-terminated) on the test's archive and time series; its exit status. */
static int report(const char *const *args, char **out, char **err)
{
    const char *last[] = {"--db", db_name, "--sqlite", path_in("ts.sqlite"), "--now", "2026-10-15T12:05:00Z", NULL};
    return tu_run_report(SA_REPORT_BIN, getenv("SLURM_TEST_MONGO_URI"), NULL, args, last, out, err);
}

/* Ingests the fixture, writes the metrics into box/textfile and starts Prometheus scraping them. */
static int setup(void **state)
{
    char *out = NULL, *err = NULL;
    (void)state;

    if (!(client = tu_mongo_client("prom_export", &db_name)))
        exit(77);
    if (!mkdtemp(box))
        fail_msg("mkdtemp: %s", strerror(errno));
    tu_ingest_prom_export(db_name, box, NULL);
    assert_int_equal(mkdir(path_in("textfile"), 0755), 0);
    {
        const char *args[] = {"current", "--prometheus", "--per-node", "--output",
                              path_in("textfile/slurm_archive.prom"), NULL};
        if (report(args, &out, &err) != 0)
            fail_msg("slurm-report current --prometheus --per-node: %s", err);
        free(out);
        free(err);
    }
    {
        const char *args[] = {path_in("prom"), "--textfile-dir", path_in("textfile"), NULL};
        char *urls = tu_tool_start("test_prom_export", SA_SOURCE_DIR "/tools/prometheus-test-server", args);
        const char *u = strstr(urls, "PROM_URL=");
        prom_started = true;
        if (!u)
            fail_msg("prometheus-test-server start printed no PROM_URL: %s", urls);
        sscanf(u + strlen("PROM_URL="), "%127s", prom_url);
        free(urls);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (prom_started)
        tu_tool_stop(SA_SOURCE_DIR "/tools/prometheus-test-server", path_in("prom"));
    if (client) {
        tu_mongo_drop(client, db_name);
        mongoc_client_destroy(client);
        free(db_name);
    }
    if (strchr(box, 'X') == NULL)
        tu_rm_rf(box);
    return 0;
}

/*
 * The one value of an instant query (PromQL expr) through /api/v1/query; fails the test
 * when Prometheus answers anything but one sample.
 */
static double query(const char *expr)
{
    char url[200], q[600];
    char *argv[] = {"/usr/bin/curl", "-fsS", "--max-time", "10", "-G", url, "--data-urlencode", q, NULL};
    char *out = NULL, *err = NULL;
    json_error_t jerr;
    json_t *doc, *res;
    double v;
    int rc;

    snprintf(url, sizeof url, "%s/api/v1/query", prom_url);
    snprintf(q, sizeof q, "query=%s", expr);
    rc = tu_run(argv, NULL, &out, &err);
    if (rc != 0)
        fail_msg("curl %s: exit %d: %s", expr, rc, err);
    doc = json_loads(out, 0, &jerr);
    if (!doc)
        fail_msg("%s: not JSON: %s", expr, out);
    res = json_object_get(json_object_get(doc, "data"), "result");
    if (json_array_size(res) != 1)
        fail_msg("%s: %zu samples, expected 1: %s", expr, json_array_size(res), out);
    v = strtod(json_string_value(json_array_get(json_object_get(json_array_get(res, 0), "value"), 1)), NULL);
    json_decref(doc);
    free(out);
    free(err);
    return v;
}

#define assert_query(expr, want)                                                                                  \
    do {                                                                                                           \
        double got_ = query(expr), want_ = (want);                                                                 \
        if (fabs(got_ - want_) > 1e-9 * fabs(want_))                                                               \
            fail_msg("%s = %.17g, expected %.17g", expr, got_, (double)(want));                                    \
    } while (0)

/* The written file passes promtool's checks; without --per-node it has no per-node gauge. */
static void test_promtool_and_option(void **state)
{
    char *argv[] = {"/bin/sh", "-c", NULL, NULL};
    char cmd[400], *out = NULL, *err = NULL;
    (void)state;

    snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < '%s'", path_in("textfile/slurm_archive.prom"));
    argv[2] = cmd;
    if (tu_run(argv, NULL, &out, &err) != 0)
        fail_msg("promtool check metrics: %s%s", out, err);
    free(out);
    free(err);
    {
        const char *args[] = {"current", "--prometheus", NULL};
        assert_int_equal(report(args, &out, &err), 0);
        assert_null(strstr(out, "slurm_archive_node_"));
        assert_non_null(strstr(out, "slurm_archive_partition_cpus{"));
        free(out);
        free(err);
    }
    {
        /* the reference path, the job documents, gives the same file as the job lists */
        const char *args[] = {"current", "--prometheus", "--per-node", "--from-jobs", NULL};
        char *lists = tu_read_file(path_in("textfile/slurm_archive.prom"), NULL);
        assert_int_equal(report(args, &out, &err), 0);
        assert_string_equal(out, lists);
        free(lists);
        free(out);
        free(err);
    }
    {
        const char *args[] = {"current", "--per-node", NULL};
        assert_int_equal(report(args, &out, &err), 2);
        assert_non_null(strstr(err, "--per-node is for `current --prometheus`"));
        free(out);
        free(err);
    }
}

/* CPUs and memory by node state and partition, scraped and queried back. */
static void test_nodes(void **state)
{
    (void)state;
    /* g1: 64 CPUs, 3 jobs of 8: allocated 24, idle 64 - 24 = 40 */
    assert_query("slurm_archive_partition_cpus{cluster=\"promx\",partition=\"gpu\",state=\"MIXED\",status=\"allocated\"}",
                 24);
    assert_query("slurm_archive_partition_cpus{cluster=\"promx\",partition=\"gpu\",state=\"MIXED\",status=\"idle\"}", 40);
    /* the partition's total is the sum over states and statuses: g1 64 + g2 64 = 128 */
    assert_query("sum(slurm_archive_partition_cpus{cluster=\"promx\",partition=\"gpu\"})", 128);
    /* c1 drained: its 32 CPUs are "other" (sinfo's %C), none idle: down, as utilization --summary counts them */
    assert_query("slurm_archive_cpus{cluster=\"promx\",state=\"IDLE+DRAIN\",status=\"down\"}", 32);
    /* g1's free memory: 256000 - 96000 = 160000 MiB */
    assert_query("slurm_archive_memory_bytes{cluster=\"promx\",state=\"MIXED\",status=\"idle\"}", 160000 * MIB);
    /* c2's free memory is stranded (its CPUs are all taken): 128000 - 64000 = 64000 MiB */
    assert_query("slurm_archive_partition_memory_bytes{cluster=\"promx\",partition=\"cpu\",state=\"ALLOCATED\","
                 "status=\"stranded\"}",
                 64000 * MIB);
    /* RealMemory of the cluster: 2 x 256000 + 2 x 128000 = 768000 MiB */
    assert_query("slurm_archive_cluster_memory_bytes{cluster=\"promx\"}", 768000 * MIB);
}

/* CPUs, memory and GPUs of running jobs per account and user; pending jobs' asks per partition. */
static void test_jobs(void **state)
{
    (void)state;
    /* bio running: 103 (8) + 104 (32) = 40 CPUs; physics: 101 + 102 = 16 */
    assert_query("slurm_archive_account_job_cpus{cluster=\"promx\",account=\"bio\",state=\"RUNNING\"}", 40);
    assert_query("slurm_archive_account_job_cpus{cluster=\"promx\",account=\"physics\",state=\"RUNNING\"}", 16);
    /* alice running: 2 x 32000 MiB; her GPUs: 1 + 1 */
    assert_query("slurm_archive_user_job_memory_bytes{cluster=\"promx\",user=\"alice\",state=\"RUNNING\"}",
                 64000 * MIB);
    assert_query("slurm_archive_user_job_gpus{cluster=\"promx\",user=\"alice\",state=\"RUNNING\"}", 2);
    /* pending in gpu: 105 and 106 ask 16 + 4 = 20 CPUs, 64000 + 8000 = 72000 MiB, 2 + 1 = 3 GPUs */
    assert_query("slurm_archive_partition_job_cpus{cluster=\"promx\",partition=\"gpu\",state=\"PENDING\"}", 20);
    assert_query("slurm_archive_partition_job_memory_bytes{cluster=\"promx\",partition=\"gpu\",state=\"PENDING\"}",
                 72000 * MIB);
    assert_query("slurm_archive_partition_job_gpus{cluster=\"promx\",partition=\"gpu\",state=\"PENDING\"}", 3);
}

/* --per-node gauges and sdiag's RPC counts. */
static void test_per_node_and_rpcs(void **state)
{
    (void)state;
    assert_query("slurm_archive_node_cpus_alloc{cluster=\"promx\",node=\"g1\",state=\"MIXED\"}", 24);
    assert_query("slurm_archive_node_cpus{cluster=\"promx\",node=\"c1\",state=\"IDLE+DRAIN\"}", 32);
    assert_query("slurm_archive_node_memory_alloc_bytes{cluster=\"promx\",node=\"g1\"}", 96000 * MIB);
    assert_query("slurm_archive_node_gpus_alloc{cluster=\"promx\",node=\"g1\",gpu_type=\"a100\"}", 3);
    assert_query("slurm_archive_node_gpus{cluster=\"promx\",node=\"g2\",state=\"IDLE\",gpu_type=\"a100\"}", 4);
    /* 3,600,000 us = 3.6 s; every message type: 1200 + 800 + 7 = 2007 RPCs */
    assert_query("slurm_archive_scheduler_rpc_time_seconds{cluster=\"promx\",operation=\"REQUEST_JOB_INFO\"}", 3.6);
    assert_query("sum(slurm_archive_scheduler_rpcs{cluster=\"promx\"})", 2007);
    assert_query("slurm_archive_scheduler_user_rpcs{cluster=\"promx\",user=\"alice\"}", 507);
    assert_query("slurm_archive_scheduler_user_rpc_time_seconds{cluster=\"promx\",user=\"alice\"}", 0.87);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_promtool_and_option),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_per_node_and_rpcs),
    };
    return tu_run_group_tests("prom_export", tests, setup, teardown);
}
