/*
 * test_cw.c - report/sa_cw.c and sa_cw_aws.c without a server: the seed's node classes of
 * exact states (Slurm's node_state_string order), the datums named from the Prometheus
 * figures (fixed names sent as 0, other states kept, final job states from the finished
 * jobs, each family at its observation's time), PutMetricData's bodies within a request's
 * limits, the embedded metric format (at most 100 metrics a line) and the credential
 * sources that need no network (the environment, the systemd credential, none).
 * The requests themselves: test_cloudwatch (moto's server, boto3).
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "sa_cw.h"
#include "sa_prom.h"
#include "sa_vec.h"

/* The seed's class of every kind of exact state, after sinfo's word for it. */
static void test_node_class(void **state)
{
    static const struct {
        const char *state, *cls;
    } cases[] = {
        {"IDLE", "Idle"},
        {"ALLOCATED", "Allocated"},
        {"MIXED", "Mixed"},
        {"DOWN", "Down"},
        {"IDLE+DRAIN", "Drain"},             /* DRAINED */
        {"MIXED+DRAIN", "Drain"},            /* DRAINING */
        {"ALLOCATED+DRAIN", "Drain"},        /* DRAINING */
        {"DOWN+DRAIN", "Drain"},             /* DRAINED: the flag before the base */
        {"DOWN+DRAIN+NOT_RESPONDING", "Drain"},
        {"IDLE+COMPLETING", "Completing"},
        {"ALLOCATED+COMPLETING", "Allocated"}, /* ALLOCATED+ */
        {"MIXED+COMPLETING", "Completing"},  /* COMPLETING before IDLE and MIXED */
        {"IDLE+FAIL", "Fail"},
        {"ALLOCATED+FAIL", "Fail"},          /* FAILING */
        {"IDLE+MAINTENANCE", "Maint"},
        {"IDLE+MAINTENANCE+RESERVED", "Maint"},
        {"MIXED+MAINTENANCE", "Mixed"},      /* busy: MIXED$ */
        {"IDLE+DRAIN+MAINTENANCE", "Drain"}, /* DRAINED$ */
        {"IDLE+RESERVED", "Resv"},
        {"MIXED+RESERVED", "Mixed"},
        {"IDLE+PLANNED", "Planned"},
        {"IDLE+NOT_RESPONDING", "Idle"},     /* IDLE* */
        {"IDLE+POWERED_DOWN", "Idle"},       /* IDLE~ */
        {"IDLE+REBOOT_REQUESTED", "Reboot"},
        {"MIXED+REBOOT_REQUESTED", "Mixed"},
        {"IDLE+DRAINING_SOON", "Idle"},      /* not the DRAIN flag */
        {"ERROR", "Error"},
        {"FUTURE", "Future"},
        {"UNKNOWN", "Unknown"},
        {"POWERED_DOWN_BASE", "PoweredDownBase"}, /* a base Slurm adds is kept by its own name */
        {NULL, "Unknown"},
    };
    char buf[64];
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = sa_cw_node_class(cases[i].state, buf);
        if (strcmp(got, cases[i].cls) != 0)
            fail_msg("%s: got %s, expected %s", cases[i].state ? cases[i].state : "(null)", got, cases[i].cls);
    }
}

/* The datum of s named name with these dimensions (NULL: none); fails when it is not there exactly once. */
static const sa_cw_datum_t *find(const sa_cw_set_t *s, const char *name, const char *part, const char *gpu)
{
    const sa_cw_datum_t *found = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const sa_cw_datum_t *d = &s->v[i];
        if (strcmp(d->name, name) == 0 && !d->partition == !part && (!part || strcmp(d->partition, part) == 0) &&
            !d->gpu_type == !gpu && (!gpu || strcmp(d->gpu_type, gpu) == 0)) {
            if (found)
                fail_msg("%s (%s, %s) twice", name, part ? part : "-", gpu ? gpu : "-");
            found = d;
        }
    }
    if (!found)
        fail_msg("%s (%s, %s) not sent", name, part ? part : "-", gpu ? gpu : "-");
    return found;
}

/* Asserts the datum's value text, unit and time. */
static void expect(const sa_cw_set_t *s, const char *name, const char *part, const char *gpu, const char *value,
                   const char *unit, int64_t at)
{
    const sa_cw_datum_t *d = find(s, name, part, gpu);
    assert_string_equal(d->value, value);
    assert_string_equal(d->unit, unit);
    assert_string_equal(d->cluster, "c1");
    assert_int_equal(d->at, at);
}

#define T_NODES 1000
#define T_SQUEUE 2000
#define T_SDIAG 3000

/* The figures of a small cluster c1 (and c2, which has neither a time series nor a squeue listing). */
static sa_prom_t *figures(void)
{
    sa_prom_t *p = sa_prom_new();
    bool ok = p != NULL;
#define ADD(...) ok = ok && sa_prom_add(p, __VA_ARGS__, NULL)
    ADD("slurm_archive_finished_since_timestamp_seconds", 0, false, "cluster", "c1");
    ADD("slurm_archive_finished_since_timestamp_seconds", 0, false, "cluster", "c2");
    ADD("slurm_archive_last_ingest_timestamp_seconds", T_SQUEUE, false, "cluster", "c1", "source", "squeue");
    ADD("slurm_archive_last_ingest_timestamp_seconds", 1, false, "cluster", "c1", "source", "sacct");
    ADD("slurm_archive_jobs", 5, false, "cluster", "c1", "state", "RUNNING");
    ADD("slurm_archive_jobs", 2, false, "cluster", "c1", "state", "PENDING");
    ADD("slurm_archive_jobs", 1, false, "cluster", "c1", "state", "REQUEUE_HOLD"); /* a state kept by its name */
    ADD("slurm_archive_partition_jobs", 5, false, "cluster", "c1", "partition", "gpu a&b", "state", "RUNNING");
    ADD("slurm_archive_partition_jobs", 2, false, "cluster", "c1", "partition", "cpu", "state", "PENDING");
    ADD("slurm_archive_finished_jobs", 7, false, "cluster", "c1", "state", "COMPLETED");
    ADD("slurm_archive_finished_jobs", 3, false, "cluster", "c1", "state", "OUT_OF_MEMORY");
    ADD("slurm_archive_partition_finished_jobs", 7, false, "cluster", "c1", "partition", "cpu", "state",
        "COMPLETED");
    ADD("slurm_archive_nodes", 2, true, "cluster", "c1", "state", "IDLE");
    ADD("slurm_archive_nodes", 1, true, "cluster", "c1", "state", "IDLE+DRAIN");
    ADD("slurm_archive_nodes", 1, true, "cluster", "c1", "state", "MIXED+DRAIN");
    ADD("slurm_archive_nodes", 1, true, "cluster", "c1", "state", "FUTURE");
    ADD("slurm_archive_partition_nodes", 2, true, "cluster", "c1", "partition", "cpu", "state", "IDLE");
    ADD("slurm_archive_gpus", 3, true, "cluster", "c1", "gpu_type", "a100", "state", "MIXED+DRAIN", "status",
        "allocated");
    ADD("slurm_archive_gpus", 1, true, "cluster", "c1", "gpu_type", "a100", "state", "MIXED+DRAIN", "status",
        "down");
    ADD("slurm_archive_gpus", 4, true, "cluster", "c1", "gpu_type", "h100", "state", "IDLE", "status", "idle");
    ADD("slurm_archive_gpus", 2, true, "cluster", "c1", "gpu_type", "h100", "state", "IDLE+DRAIN", "status",
        "planned_down");
    ADD("slurm_archive_nodes_snapshot_timestamp_seconds", T_NODES, false, "cluster", "c1");
    ADD("slurm_archive_scheduler_threads", 3, false, "cluster", "c1");
    ADD("slurm_archive_scheduler_cycle_last_seconds", 1234 * 1e-6, false, "cluster", "c1");
    ADD("slurm_archive_scheduler_backfill_depth_mean", 42, false, "cluster", "c1");
    ADD("slurm_archive_scheduler_sample_timestamp_seconds", T_SDIAG, false, "cluster", "c1");
    ADD("slurm_archive_report_timestamp_seconds", 9999, false);
#undef ADD
    assert_true(ok);
    return p;
}

/* Every family named from the figures, fixed names as 0, each at its own observation's time. */
static void test_from_prom(void **state)
{
    sa_prom_t *p = figures();
    sa_cw_set_t s;
    sa_error_t e;
    (void)state;

    sa_cw_set_init(&s);
    assert_true(sa_cw_from_prom(p, 9999, &s, &e));
    /* nodes: DRAINED and DRAINING are Drain, FUTURE kept by its name, every class of the seed sent */
    expect(&s, "NodesIdle", NULL, NULL, "2", "Count", T_NODES);
    expect(&s, "NodesDrain", NULL, NULL, "2", "Count", T_NODES);
    expect(&s, "NodesFuture", NULL, NULL, "1", "Count", T_NODES);
    expect(&s, "NodesResv", NULL, NULL, "0", "Count", T_NODES);
    expect(&s, "NodesError", NULL, NULL, "0", "Count", T_NODES);
    expect(&s, "NodesIdle", "cpu", NULL, "2", "Count", T_NODES);
    expect(&s, "NodesMixed", "cpu", NULL, "0", "Count", T_NODES);
    /* jobs: the listing's unfinished states, the finished ones' final states, at the listing's time */
    expect(&s, "JobsRunning", NULL, NULL, "5", "Count", T_SQUEUE);
    expect(&s, "JobsPending", NULL, NULL, "2", "Count", T_SQUEUE);
    expect(&s, "JobsCompleted", NULL, NULL, "7", "Count", T_SQUEUE);
    expect(&s, "JobsOutOfMemory", NULL, NULL, "3", "Count", T_SQUEUE);
    expect(&s, "JobsRequeueHold", NULL, NULL, "1", "Count", T_SQUEUE);
    expect(&s, "JobsNodeFail", NULL, NULL, "0", "Count", T_SQUEUE);
    expect(&s, "JobsConfiguring", NULL, NULL, "0", "Count", T_SQUEUE);
    expect(&s, "JobsRunning", "gpu a&b", NULL, "5", "Count", T_SQUEUE);
    expect(&s, "JobsPending", "gpu a&b", NULL, "0", "Count", T_SQUEUE);
    expect(&s, "JobsCompleted", "cpu", NULL, "7", "Count", T_SQUEUE);
    /* GPUs by status, summed over types and node states, and per type */
    expect(&s, "GPUsAllocated", NULL, NULL, "3", "Count", T_NODES);
    expect(&s, "GPUsIdle", NULL, NULL, "4", "Count", T_NODES);
    expect(&s, "GPUsDown", NULL, NULL, "1", "Count", T_NODES);
    expect(&s, "GPUsPlannedDown", NULL, NULL, "2", "Count", T_NODES);
    expect(&s, "GPUsUnknown", NULL, NULL, "0", "Count", T_NODES);
    expect(&s, "GPUsAllocated", NULL, "a100", "3", "Count", T_NODES);
    expect(&s, "GPUsIdle", NULL, "a100", "0", "Count", T_NODES);
    expect(&s, "GPUsPlannedDown", NULL, "h100", "2", "Count", T_NODES);
    /* the scheduler: what the sdiag gave, in seconds as the Prometheus text writes them */
    expect(&s, "ServerThreadCount", NULL, NULL, "3", "Count", T_SDIAG);
    expect(&s, "ScheduleCycleLast", NULL, NULL, "0.001234", "Seconds", T_SDIAG);
    expect(&s, "BackfillDepthMean", NULL, NULL, "42", "Count", T_SDIAG);
    /* c2 has no observation: nothing of it is sent */
    for (size_t i = 0; i < s.n; i++)
        assert_string_equal(s.v[i].cluster, "c1");
    /* cluster: 10 node classes + Future, partition cpu 10; jobs 11 + 2 kept, partitions 2 x 11; GPUs 7 x 3;
     * the scheduler 3 */
    assert_int_equal(s.n, 11 + 10 + 13 + 22 + 21 + 3);
    sa_cw_set_clear(&s);
    sa_prom_free(p);
}

/* An sdiag without its own time is sent at the node snapshot's, else at now; with no node snapshot, no node metric. */
static void test_sched_time(void **state)
{
    sa_prom_t *p = sa_prom_new();
    sa_cw_set_t s;
    sa_error_t e;
    size_t n3 = 0;
    (void)state;

    assert_true(sa_prom_add(p, "slurm_archive_finished_since_timestamp_seconds", 0, false, "cluster", "c3", NULL) &&
                sa_prom_add(p, "slurm_archive_finished_since_timestamp_seconds", 0, false, "cluster", "c4", NULL) &&
                sa_prom_add(p, "slurm_archive_nodes_snapshot_timestamp_seconds", 1500, false, "cluster", "c3", NULL) &&
                sa_prom_add(p, "slurm_archive_scheduler_threads", 5, false, "cluster", "c3", NULL) &&
                sa_prom_add(p, "slurm_archive_scheduler_threads", 6, false, "cluster", "c4", NULL));
    sa_cw_set_init(&s);
    assert_true(sa_cw_from_prom(p, 9999, &s, &e));
    for (size_t i = 0; i < s.n; i++) {
        if (strcmp(s.v[i].cluster, "c3") == 0) {
            n3++;
            assert_int_equal(s.v[i].at, 1500);
        } else {
            /* c4: only its scheduler, at now */
            assert_string_equal(s.v[i].name, "ServerThreadCount");
            assert_string_equal(s.v[i].value, "6");
            assert_int_equal(s.v[i].at, 9999);
        }
    }
    assert_int_equal(n3, 10 + 7 + 1); /* the node classes and GPU statuses as 0, the scheduler */
    assert_int_equal(s.n, n3 + 1);
    sa_cw_set_clear(&s);
    sa_prom_free(p);
}

/* The bodies of a set: within the limits, every datum once, members numbered from 1 in each. */
static void test_bodies(void **state)
{
    sa_prom_t *p = figures();
    sa_cw_set_t s;
    sa_error_t e;
    char **b = NULL;
    size_t n = 0, members = 0;
    (void)state;

    sa_cw_set_init(&s);
    assert_true(sa_cw_from_prom(p, 9999, &s, &e));
    /* 1000 a request: one body */
    assert_true(sa_cw_bodies(&s, "Slurm", SA_CW_MAX_DATA, SA_CW_MAX_BYTES, &b, &n, &e));
    assert_int_equal(n, 1);
    assert_true(strncmp(b[0], "Action=PutMetricData&Version=2010-08-01&Namespace=Slurm&", 55) == 0);
    /* form-encoded values: the partition "gpu a&b", the ISO-8601 time */
    assert_non_null(strstr(b[0], "Dimensions.member.2.Name=Partition&"));
    assert_non_null(strstr(b[0], "Value=gpu%20a%26b&"));
    assert_non_null(strstr(b[0], "Timestamp=1970-01-01T00%3A16%3A40Z&"));
    assert_non_null(strstr(b[0], "MetricData.member.1.MetricName="));
    free(b[0]);
    free(b);
    /* 7 a request: ceil(n / 7) bodies, members 1..7 */
    assert_true(sa_cw_bodies(&s, "Slurm", 7, SA_CW_MAX_BYTES, &b, &n, &e));
    assert_int_equal(n, (s.n + 6) / 7);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(strstr(b[i], "MetricData.member.1.MetricName="));
        assert_null(strstr(b[i], "MetricData.member.8."));
        for (size_t k = 1; k <= 7; k++) {
            char key[64];
            snprintf(key, sizeof key, "MetricData.member.%zu.MetricName=", k);
            members += strstr(b[i], key) != NULL;
        }
        free(b[i]);
    }
    free(b);
    assert_int_equal(members, s.n);
    /* 1500 bytes a request: every body within them, and more of them */
    assert_true(sa_cw_bodies(&s, "Slurm", SA_CW_MAX_DATA, 1500, &b, &n, &e));
    assert_true(n > 1);
    for (size_t i = 0; i < n; i++) {
        assert_true(strlen(b[i]) <= 1500);
        free(b[i]);
    }
    free(b);
    /* a datum alone larger than a request: refused, one line */
    assert_false(sa_cw_bodies(&s, "Slurm", SA_CW_MAX_DATA, 100, &b, &n, &e));
    assert_int_equal(e.domain, SA_ERR_ENDPOINT);
    assert_non_null(strstr(e.message, "larger than a request may be (100 bytes)"));
    assert_null(b);
    assert_int_equal(n, 0);
    sa_cw_set_clear(&s);
    sa_prom_free(p);
}

/* EMF: one document per (cluster, dimensions, time), at most 100 metrics each, the values of the set. */
static void test_emf(void **state)
{
    sa_cw_set_t s;
    char *text = NULL, *save = NULL, name[32];
    size_t len = 0, lines = 0, metrics = 0;
    FILE *m = open_memstream(&text, &len);
    sa_error_t e;
    (void)state;

    sa_cw_set_init(&s);
    /* 150 metrics of one document, then one of another partition */
    for (int i = 0; i < 151; i++) {
        assert_true(SA_VEC_GROW(s.v, s.cap, s.n, 1, 16));
        memset(&s.v[s.n], 0, sizeof s.v[s.n]);
        snprintf(name, sizeof name, "M%d", i);
        s.v[s.n].name = strdup(name);
        s.v[s.n].cluster = strdup("c1");
        s.v[s.n].partition = strdup(i < 150 ? "p1" : "p2");
        s.v[s.n].unit = "Seconds";
        snprintf(s.v[s.n].value, sizeof s.v[s.n].value, "%s", i == 3 ? "0.001234" : "7");
        s.v[s.n].at = 1792065600;
        s.n++;
    }
    assert_non_null(m);
    assert_true(sa_cw_write_emf(&s, "Slurm", m, &e));
    assert_int_equal(fclose(m), 0);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *doc = json_loads(line, 0, NULL), *dir;
        size_t n;
        assert_non_null(doc);
        dir = json_array_get(json_object_get(json_object_get(doc, "_aws"), "CloudWatchMetrics"), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "_aws"), "Timestamp")),
                         1792065600000LL);
        assert_string_equal(json_string_value(json_object_get(dir, "Namespace")), "Slurm");
        assert_string_equal(json_string_value(json_array_get(json_array_get(json_object_get(dir, "Dimensions"), 0), 1)),
                            "Partition");
        assert_string_equal(json_string_value(json_object_get(doc, "ClusterName")), "c1");
        n = json_array_size(json_object_get(dir, "Metrics"));
        assert_true(n >= 1 && n <= 100);
        metrics += n;
        if (lines == 0) {
            assert_int_equal(n, 100);
            assert_true(json_real_value(json_object_get(doc, "M3")) == 0.001234);
            assert_int_equal(json_integer_value(json_object_get(doc, "M4")), 7);
            assert_non_null(strstr(line, "\"M3\":0.001234")); /* the Prometheus text's digits */
        }
        if (lines == 2)
            assert_string_equal(json_string_value(json_object_get(doc, "Partition")), "p2");
        lines++;
        json_decref(doc);
    }
    assert_int_equal(lines, 3);
    assert_int_equal(metrics, 151);
    free(text);
    sa_cw_set_clear(&s);
}

static char credsdir[] = "/tmp/sa-test-cw-XXXXXX";

/* Sets the environment of the credential sources (NULL: unset). */
static void creds_env(const char *key, const char *secret, const char *token, const char *dir)
{
    const char *names[4] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "CREDENTIALS_DIRECTORY"};
    const char *values[4] = {key, secret, token, dir};
    for (int i = 0; i < 4; i++) {
        if (values[i])
            setenv(names[i], values[i], 1);
        else
            unsetenv(names[i]);
    }
    /* never the real instance metadata service from a test */
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

/* The environment first; then the systemd credential; none: one line without a secret. */
static void test_creds(void **state)
{
    sa_aws_creds_t c;
    sa_error_t e;
    char path[300];
    (void)state;

    assert_non_null(mkdtemp(credsdir));
    snprintf(path, sizeof path, "%s/aws-credentials", credsdir);
    tu_write_text(path, "# the service's key\n[default]\naws_access_key_id = AKIAFILE\n"
                        "aws_secret_access_key=file/secret+key \n aws_session_token = tok3n\n");
    /* the environment wins */
    creds_env("AKIAENV", "env-secret", NULL, credsdir);
    assert_true(sa_aws_creds_load(&c, &e));
    assert_string_equal(c.key_id, "AKIAENV");
    assert_string_equal(c.secret, "env-secret");
    assert_null(c.token);
    assert_string_equal(c.source, "environment");
    sa_aws_creds_clear(&c);
    /* half the environment: the systemd credential */
    creds_env("AKIAENV", NULL, NULL, credsdir);
    assert_true(sa_aws_creds_load(&c, &e));
    assert_string_equal(c.key_id, "AKIAFILE");
    assert_string_equal(c.secret, "file/secret+key");
    assert_string_equal(c.token, "tok3n");
    assert_string_equal(c.source, "systemd credential");
    sa_aws_creds_clear(&c);
    /* a credential without the secret: bad input, named, the key not in the message */
    tu_write_text(path, "aws_access_key_id = AKIAFILE\n");
    assert_false(sa_aws_creds_load(&c, &e));
    assert_int_equal(e.domain, SA_ERR_INPUT);
    assert_non_null(strstr(e.message, "aws-credentials: no aws_access_key_id and aws_secret_access_key"));
    assert_null(strstr(e.message, "AKIAFILE"));
    /* none at all (the metadata service turned off): a configuration error, one line */
    unlink(path);
    creds_env(NULL, NULL, NULL, credsdir);
    assert_false(sa_aws_creds_load(&c, &e));
    assert_int_equal(e.domain, SA_ERR_USAGE);
    assert_non_null(strstr(e.message, "no AWS credentials"));
    assert_null(strchr(e.message, '\n'));
    rmdir(credsdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_class), cmocka_unit_test(test_from_prom), cmocka_unit_test(test_sched_time),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_emf),        cmocka_unit_test(test_creds),
    };
    return tu_run_group_tests("cw", tests, NULL, NULL);
}
