/*
 * test_cloudwatch.c - `slurm-report current --cloudwatch` and `--cloudwatch-emf` (issue 35,
 * item 2) through real parts: the small cluster of fixtures/prom-export (its sdiag with the
 * scheduler's cycles: fixtures/cloudwatch/sdiag.json) is ingested by the real slurm-ingest
 * into the test MongoDB server and a time series; the metrics are put to moto's CloudWatch
 * emulator on a loopback port (tools/aws-test-server, from PyPI) and read back with boto3,
 * AWS's own SDK; every value must be the value `current --prometheus` writes for the same
 * snapshot, with one datum a metric, at the snapshot's time. The embedded metric format says
 * the same. What CloudWatch refuses (credentials, a throttle: the stub of aws-test-server
 * answers as AWS does) and an endpoint that is down are one line and exit 11; the
 * credentials come from the environment, the systemd credential or the instance's role
 * (IMDSv2, the stub), and no secret is ever printed.
 *
 * The cluster "promx" at 2026-10-15T12:00:00Z (test_prom_export.c has its figures): nodes
 * g1 MIXED, g2 IDLE (partition gpu, 4 a100 each, 3 in use), c1 IDLE+DRAIN, c2 ALLOCATED
 * (partition cpu); 4 RUNNING and 3 PENDING jobs; sdiag: 3 threads, cycles of 1234 and 4321 us,
 * backfill of 250001 and 187654 us, depth 42.
 */
#include "testutil.h"
#include "tu_archive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <mongoc/mongoc.h>

#define SNAPSHOT 1792065600 /* 2026-10-15T12:00:00Z */
#define SECRET "tEsT/sEcReT+kEy0123456789"

static mongoc_client_t *client;
static char *db_name, *prom_text;
static char box[64] = "/tmp/sa-cloudwatch-XXXXXX";
static char aws_url[128], stub_url[128];
static bool aws_started;

static const char *path_in(const char *rel)
{
    static char p[2][300];
    static int k;
    k = !k;
    snprintf(p[k], sizeof p[k], "%s/%s", box, rel);
    return p[k];
}

/*
 * slurm-report with args (NULL-terminated) on the test's archive, in an environment without
 * AWS credentials nor the instance metadata service, to which env (NULL-terminated "K=V") adds;
 * its exit status, stdout and stderr.
 */
static int report(const char *const *args, const char *const *env, char **out, char **err)
{
    static char uri[600];
    char *argv[40], *envv[24];
    size_t n = 0, e = 0;

    snprintf(uri, sizeof uri, "SLURM_REPORT_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    argv[n++] = (char *)SA_REPORT_BIN;
    for (; *args; args++)
        argv[n++] = (char *)*args;
    argv[n++] = "--db";
    argv[n++] = db_name;
    argv[n++] = "--sqlite";
    argv[n++] = (char *)path_in("ts.sqlite");
    argv[n++] = "--now";
    argv[n++] = "2026-10-15T12:05:00Z";
    argv[n] = NULL;
    envv[e++] = uri;
    envv[e++] = "AWS_ACCESS_KEY_ID=";
    envv[e++] = "AWS_SECRET_ACCESS_KEY=";
    envv[e++] = "AWS_SESSION_TOKEN=";
    envv[e++] = "AWS_REGION=";
    envv[e++] = "AWS_DEFAULT_REGION=";
    envv[e++] = "CREDENTIALS_DIRECTORY=";
    envv[e++] = "AWS_EC2_METADATA_DISABLED=true"; /* never 169.254.169.254 from a test */
    for (; env && *env; env++)
        envv[e++] = (char *)*env;
    envv[e] = NULL;
    return tu_run(argv, envv, out, err);
}

static int setup(void **state)
{
    char *err = NULL;
    (void)state;

    if (!(client = tu_mongo_client("cloudwatch", &db_name)))
        exit(77);
    if (!mkdtemp(box))
        fail_msg("mkdtemp: %s", strerror(errno));
    tu_ingest_prom_export(db_name, box, tu_fixture("cloudwatch/sdiag.json"));
    {
        const char *args[] = {"current", "--prometheus", NULL};
        if (report(args, NULL, &prom_text, &err) != 0)
            fail_msg("slurm-report current --prometheus: %s", err);
        free(err);
    }
    {
        const char *args[] = {path_in("aws"), NULL};
        char *urls = tu_tool_start("test_cloudwatch", SA_SOURCE_DIR "/tools/aws-test-server", args);
        const char *a = strstr(urls, "AWS_URL="), *s = strstr(urls, "STUB_URL=");
        aws_started = true;
        if (!a || !s)
            fail_msg("aws-test-server start printed no AWS_URL and STUB_URL: %s", urls);
        sscanf(a + strlen("AWS_URL="), "%127s", aws_url);
        sscanf(s + strlen("STUB_URL="), "%127s", stub_url);
        free(urls);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (aws_started)
        tu_tool_stop(SA_SOURCE_DIR "/tools/aws-test-server", path_in("aws"));
    if (client) {
        tu_mongo_drop(client, db_name);
        mongoc_client_destroy(client);
        free(db_name);
    }
    free(prom_text);
    if (strchr(box, 'X') == NULL)
        tu_rm_rf(box);
    return 0;
}

/* ---- what the Prometheus export says ------------------------------------------------------ */

/*
 * The sum of the samples of metric in the Prometheus text whose labels hold every
 * name="value" of filters (NULL-terminated pairs; a NULL value: the label must be absent
 * from the filter, i.e. not checked). 0 when none matches.
 */
static double prom_sum(const char *metric, const char *const *filters)
{
    double sum = 0;
    size_t ml = strlen(metric);

    for (const char *l = prom_text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *brace = l + ml, *end = strchr(l, '\n');
        bool match = strncmp(l, metric, ml) == 0 && *brace == '{';
        for (const char *const *f = filters; match && *f; f += 2) {
            char want[200];
            const char *at;
            snprintf(want, sizeof want, "%s=\"%s\"", f[0], f[1]);
            at = strstr(brace, want);
            match = at && (!end || at < end) && (at[-1] == '{' || at[-1] == ',');
        }
        if (match)
            sum += strtod(strchr(brace, '}') + 2, NULL);
    }
    return sum;
}

/* One expected datum: its name, its dimensions as "Name=value,..." (sorted), its value. */
typedef struct {
    char name[48], dims[96];
    double value;
    bool seen;
} want_t;

static want_t wants[128];
static size_t nwants;

static void want(const char *name, const char *dims, double value)
{
    assert_true(nwants < sizeof wants / sizeof wants[0]);
    snprintf(wants[nwants].name, sizeof wants[0].name, "%s", name);
    snprintf(wants[nwants].dims, sizeof wants[0].dims, "%s", dims);
    wants[nwants].value = value;
    wants[nwants++].seen = false;
}

/*
 * Every datum the seed's metrics give for promx, with the value the Prometheus text has for
 * it: nodes by class (this cluster's exact states: the classes of sinfo's words), jobs by
 * state (the final states: those that ended since --since), GPUs by status, the scheduler.
 */
static void expected(void)
{
    static const char *const classes[][2] = {{"Allocated", "ALLOCATED"}, {"Completing", NULL}, {"Down", NULL},
                                             {"Drain", "IDLE+DRAIN"},    {"Fail", NULL},       {"Error", NULL},
                                             {"Idle", "IDLE"},           {"Maint", NULL},      {"Mixed", "MIXED"},
                                             {"Resv", NULL}};
    static const char *const jobs[][3] = {
        {"Pending", "PENDING", ""},       {"Running", "RUNNING", ""},     {"Suspended", "SUSPENDED", ""},
        {"Cancelled", "CANCELLED", "f"},  {"Completing", "COMPLETING", ""}, {"Completed", "COMPLETED", "f"},
        {"Configuring", "CONFIGURING", ""}, {"Failed", "FAILED", "f"},    {"Timeout", "TIMEOUT", "f"},
        {"Preempted", "PREEMPTED", "f"},  {"NodeFail", "NODE_FAIL", "f"}};
    static const char *const gpus[][2] = {{"Allocated", "allocated"}, {"Idle", "idle"},
                                          {"Stranded", "stranded"},   {"Down", "down"},
                                          {"PlannedDown", "planned_down"}, {"Reserved", "reserved"},
                                          {"Unknown", "unknown"}};
    static const char *const sched[][2] = {
        {"ServerThreadCount", "threads"},
        {"AgentQueueSize", "agent_queue_size"},
        {"ScheduleCycleLast", "cycle_last_seconds"},
        {"ScheduleCycleMean", "cycle_mean_seconds"},
        {"ScheduleCyclesPerMinute", "cycles_per_minute"},
        {"BackfillCycleLast", "backfill_cycle_last_seconds"},
        {"BackfillCycleMean", "backfill_cycle_mean_seconds"},
        {"BackfillDepthMean", "backfill_depth_mean"},
    };
    static const char *const parts[] = {NULL, "cpu", "gpu"};
    char name[48], dims[96], metric[96];

    nwants = 0;
    for (size_t p = 0; p < 3; p++) {
        snprintf(dims, sizeof dims, "ClusterName=promx%s%s", parts[p] ? ",Partition=" : "", parts[p] ? parts[p] : "");
        for (size_t i = 0; i < 10; i++) {
            const char *f[] = {"cluster", "promx", "state", classes[i][1], "partition", parts[p], NULL};
            if (!parts[p])
                f[4] = NULL;
            snprintf(name, sizeof name, "Nodes%s", classes[i][0]);
            want(name, dims, classes[i][1] ? prom_sum(parts[p] ? "slurm_archive_partition_nodes"
                                                               : "slurm_archive_nodes", f)
                                           : 0);
        }
        for (size_t i = 0; i < 11; i++) {
            const char *f[] = {"cluster", "promx", "state", jobs[i][1], "partition", parts[p], NULL};
            if (!parts[p])
                f[4] = NULL;
            snprintf(name, sizeof name, "Jobs%s", jobs[i][0]);
            snprintf(metric, sizeof metric, "slurm_archive_%s%s", parts[p] ? "partition_" : "",
                     jobs[i][2][0] ? "finished_jobs" : "jobs");
            want(name, dims, prom_sum(metric, f));
        }
    }
    for (size_t t = 0; t < 2; t++) {
        snprintf(dims, sizeof dims, "ClusterName=promx%s", t ? ",GPUType=a100" : "");
        for (size_t i = 0; i < 7; i++) {
            const char *f[] = {"cluster", "promx", "status", gpus[i][1], "gpu_type", "a100", NULL};
            if (!t)
                f[4] = NULL; /* the cluster's: every type */
            snprintf(name, sizeof name, "GPUs%s", gpus[i][0]);
            want(name, dims, prom_sum("slurm_archive_gpus", f));
        }
    }
    for (size_t i = 0; i < 8; i++) {
        const char *f[] = {"cluster", "promx", NULL};
        snprintf(metric, sizeof metric, "slurm_archive_scheduler_%s", sched[i][1]);
        want(sched[i][0], "ClusterName=promx", prom_sum(metric, f));
    }
    assert_int_equal(nwants, 30 + 33 + 14 + 8);
    /* the figures are there to compare (a failure of the export would make them all 0) */
    assert_true(prom_sum("slurm_archive_scheduler_cycle_last_seconds", (const char *const[]){NULL}) == 0.001234);
    assert_true(prom_sum("slurm_archive_nodes", (const char *const[]){"state", "IDLE+DRAIN", NULL}) == 1);
}

/* Marks the expected datum (name, dims) seen with value v; fails on a datum not expected, twice, or another value. */
static void seen(const char *name, const char *dims, double v)
{
    for (size_t i = 0; i < nwants; i++) {
        if (strcmp(wants[i].name, name) != 0 || strcmp(wants[i].dims, dims) != 0)
            continue;
        if (wants[i].seen)
            fail_msg("%s %s: twice", name, dims);
        if (v != wants[i].value)
            fail_msg("%s %s: %.17g, the Prometheus export says %.17g", name, dims, v, wants[i].value);
        wants[i].seen = true;
        return;
    }
    fail_msg("%s %s: not a metric of the export", name, dims);
}

static void all_seen(void)
{
    for (size_t i = 0; i < nwants; i++) {
        if (!wants[i].seen)
            fail_msg("%s %s: not sent", wants[i].name, wants[i].dims);
    }
}

/* What moto holds in namespace ns, read with boto3 (aws-test-server read): checked against expected(). */
static void read_back(const char *ns)
{
    char *argv[] = {(char *)SA_SOURCE_DIR "/tools/aws-test-server", "read", aws_url, (char *)ns, "1792065000",
                    "1792066200", NULL};
    char *out = NULL, *err = NULL, *save = NULL;
    int rc = tu_run(argv, NULL, &out, &err);

    if (rc != 0)
        fail_msg("aws-test-server read: exit %d: %s", rc, err ? err : "");
    expected();
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char name[64], dims[128];
        long long t;
        double sum, count;
        if (sscanf(l, "%63[^\t]\t%127[^\t]\t%lld\t%lf\t%lf", name, dims, &t, &sum, &count) != 5)
            fail_msg("aws-test-server read: '%s'", l);
        assert_int_equal(t, SNAPSHOT); /* every figure at its observation's time */
        if (count != 1)
            fail_msg("%s %s: %g data points, expected 1", name, dims, count);
        seen(name, dims, sum);
    }
    all_seen();
    free(out);
    free(err);
}

/* ---- the cases -------------------------------------------------------------------------- */

/* Put to moto's CloudWatch, read back with boto3: every datum, the Prometheus export's value. */
static void test_put_equals_prometheus(void **state)
{
    const char *args[] = {"current", "--cloudwatch", "--cloudwatch-region", "us-east-1", "--cloudwatch-endpoint",
                          aws_url, "-v", NULL};
    const char *env[] = {"AWS_ACCESS_KEY_ID=AKIATESTKEY", "AWS_SECRET_ACCESS_KEY=" SECRET, NULL};
    char *out = NULL, *err = NULL;
    (void)state;

    if (report(args, env, &out, &err) != 0)
        fail_msg("current --cloudwatch: %s", err);
    assert_string_equal(out, ""); /* it sends, it prints nothing */
    assert_non_null(strstr(err, "# CloudWatch: 85 metric data in 1 request(s), namespace Slurm\n"));
    assert_null(strstr(err, SECRET));
    read_back("Slurm");
    free(out);
    free(err);
}

/* --cloudwatch-emf: the same metrics, one document per dimension set, at the snapshot's time. */
static void test_emf_equals_prometheus(void **state)
{
    const char *args[] = {"current", "--cloudwatch-emf", "--cloudwatch-namespace", "Slurm/Test", NULL};
    char *out = NULL, *err = NULL, *save = NULL;
    size_t lines = 0;
    (void)state;

    if (report(args, NULL, &out, &err) != 0)
        fail_msg("current --cloudwatch-emf: %s", err);
    expected();
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        json_t *doc = json_loads(l, 0, NULL), *aws, *dir, *m;
        const char *part, *gpu;
        char dims[128];
        size_t i;
        if (!doc)
            fail_msg("not JSON: %s", l);
        aws = json_object_get(doc, "_aws");
        dir = json_array_get(json_object_get(aws, "CloudWatchMetrics"), 0);
        assert_int_equal(json_integer_value(json_object_get(aws, "Timestamp")), SNAPSHOT * 1000LL);
        assert_string_equal(json_string_value(json_object_get(dir, "Namespace")), "Slurm/Test");
        part = json_string_value(json_object_get(doc, "Partition"));
        gpu = json_string_value(json_object_get(doc, "GPUType"));
        snprintf(dims, sizeof dims, "ClusterName=%s%s%s%s%s", json_string_value(json_object_get(doc, "ClusterName")),
                 part ? ",Partition=" : "", part ? part : "", gpu ? ",GPUType=" : "", gpu ? gpu : "");
        assert_int_equal(json_array_size(json_array_get(json_object_get(dir, "Dimensions"), 0)),
                         1 + (part != NULL) + (gpu != NULL));
        json_array_foreach(json_object_get(dir, "Metrics"), i, m) {
            const char *name = json_string_value(json_object_get(m, "Name"));
            seen(name, dims, json_number_value(json_object_get(doc, name)));
        }
        json_decref(doc);
        lines++;
    }
    all_seen();
    assert_int_equal(lines, 3 + 3 + 2 + 1); /* nodes, jobs (cluster, cpu, gpu); GPUs (cluster, a100); scheduler */
    free(out);
    free(err);
}

/* Runs --cloudwatch against endpoint with env; asserts exit code rc and one line on stderr holding what. */
static void refused(const char *endpoint, const char *const *env, int rc, const char *what)
{
    const char *args[] = {"current", "--cloudwatch", "--cloudwatch-region", "eu-west-1", "--cloudwatch-endpoint",
                          endpoint, NULL};
    char *out = NULL, *err = NULL;
    int got = report(args, env, &out, &err);

    if (got != rc || !strstr(err, what))
        fail_msg("%s: exit %d (expected %d): %s", endpoint, got, rc, err);
    assert_string_equal(out, "");
    assert_true(strlen(err) > 0 && strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    assert_null(strstr(err, SECRET));
    free(out);
    free(err);
}

/* Credentials CloudWatch refuses, a throttle, an endpoint that is down: one line each, exit 11. */
static void test_failures(void **state)
{
    const char *env[] = {"AWS_ACCESS_KEY_ID=AKIATESTKEY", "AWS_SECRET_ACCESS_KEY=" SECRET, NULL};
    char denied[200], throttled[200];
    (void)state;

    snprintf(denied, sizeof denied, "%s/denied", stub_url);
    snprintf(throttled, sizeof throttled, "%s/throttled", stub_url);
    refused(denied, env, 11, "slurm-report: CloudWatch PutMetricData at ");
    refused(denied, env, 11, "/denied: HTTP 403 InvalidClientTokenId: The security token included in the request "
                             "is invalid.\n");
    refused(throttled, env, 11, "/throttled: HTTP 400 Throttling: Rate exceeded\n");
    /* port 1 of the loopback: nothing listens */
    refused("http://127.0.0.1:1/", env, 11, "CloudWatch PutMetricData at http://127.0.0.1:1/: ");
    /* no credentials at all: a configuration error, before the archive is read */
    refused(denied, NULL, 2, "slurm-report: no AWS credentials: ");
    /* the command line: a region that is none, an endpoint that is no URL, a namespace of AWS's, a file */
    {
        static const char *const bad[][6] = {
            {"--cloudwatch-region", "us east", NULL, NULL, "--cloudwatch-region: 'us east' is not a region"},
            {"--cloudwatch-region", "us-east-1", "--cloudwatch-endpoint", "ftp://x/", "expected an http:// or https:"},
            {"--cloudwatch-region", "us-east-1", "--cloudwatch-namespace", "AWS/EC2", "is not a namespace CloudWatch"},
            {"--cloudwatch-region", "us-east-1", "--output", "/tmp/x", "--output is for --cloudwatch-emf"},
            {"--cloudwatch-region", "us-east-1", "--prometheus", NULL, "without another output kind"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const char *args[] = {"current", "--cloudwatch", bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL};
            char *out = NULL, *err = NULL;
            assert_int_equal(report(args, env, &out, &err), 2);
            if (!strstr(err, bad[i][4]))
                fail_msg("%s %s: %s", bad[i][2] ? bad[i][2] : bad[i][0], bad[i][3] ? bad[i][3] : "", err);
            assert_string_equal(out, "");
            free(out);
            free(err);
        }
    }
}

/* The instance's role through IMDSv2 (the stub): its session token goes with the signed request. */
static void test_instance_role(void **state)
{
    char env_imds[200], denied[200], *log;
    const char *env[] = {"AWS_EC2_METADATA_DISABLED=false", env_imds, NULL};
    const char *args[] = {"current", "--cloudwatch", "--cloudwatch-namespace", "SlurmRole", "--cloudwatch-region",
                          "us-east-1", "--cloudwatch-endpoint", aws_url, NULL};
    char *out = NULL, *err = NULL;
    (void)state;

    snprintf(env_imds, sizeof env_imds, "AWS_EC2_METADATA_SERVICE_ENDPOINT=%s", stub_url);
    snprintf(denied, sizeof denied, "%s/denied", stub_url);
    refused(denied, env, 11, "HTTP 403 InvalidClientTokenId");
    log = tu_read_file(path_in("aws/stub.log"), NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "PUT /latest/api/token token=no"));
    assert_non_null(strstr(log, "GET /latest/meta-data/iam/security-credentials/ token=no"));
    assert_non_null(strstr(log, "GET /latest/meta-data/iam/security-credentials/sa-test-role token=no"));
    assert_non_null(strstr(log, "POST /denied token=yes sigv4=yes"));
    free(log);
    /* and moto takes the role's request */
    if (report(args, env, &out, &err) != 0)
        fail_msg("current --cloudwatch with the instance role: %s", err);
    assert_null(strstr(err, "stub/role/secret+key"));
    read_back("SlurmRole");
    free(out);
    free(err);
}

/* The systemd credential (LoadCredential=aws-credentials:...): $CREDENTIALS_DIRECTORY/aws-credentials. */
static void test_systemd_credential(void **state)
{
    char env_dir[200];
    const char *env[] = {env_dir, NULL};
    const char *args[] = {"current", "--cloudwatch", "--cloudwatch-namespace", "SlurmCred", "--cloudwatch-region",
                          "us-east-1", "--cloudwatch-endpoint", aws_url, NULL};
    char *out = NULL, *err = NULL;
    (void)state;

    assert_int_equal(mkdir(path_in("creds"), 0700), 0);
    tu_write_text(path_in("creds/aws-credentials"),
                  "[default]\naws_access_key_id = AKIACREDFILE\naws_secret_access_key = " SECRET "\n");
    snprintf(env_dir, sizeof env_dir, "CREDENTIALS_DIRECTORY=%s", path_in("creds"));
    if (report(args, env, &out, &err) != 0)
        fail_msg("current --cloudwatch with the systemd credential: %s", err);
    read_back("SlurmCred");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_equals_prometheus), cmocka_unit_test(test_emf_equals_prometheus),
        cmocka_unit_test(test_failures),              cmocka_unit_test(test_instance_role),
        cmocka_unit_test(test_systemd_credential),
    };
    return tu_run_group_tests("cloudwatch", tests, setup, teardown);
}
