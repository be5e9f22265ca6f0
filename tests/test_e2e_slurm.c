/*
 * test_e2e_slurm.c - end to end against a real Slurm cluster (issue 7).
 *
 * tools/slurm-test-cluster brings up a one-host Slurm 22.05 (real slurmctld, slurmd,
 * slurmdbd, MariaDB; node vm with 2 CPUs and 2 a100 GPUs; ghost[1-2] never
 * register). The test submits a scenario, drains and resumes the node, and runs
 * slurm-ingest in its default mode (calling squeue, sinfo, sacct, sdiag itself)
 * every few seconds while that happens. Then it checks the archive and the time
 * series against what it knows it did: every job once with the right final state and
 * exit code, the requeued job with two runs and its full history, the node's DRAIN
 * interval with its reason, the GPU job's GPU-hours = 2 GPUs x its real elapsed time,
 * and no unfinished job left behind.
 *
 * Skipped (exit 77, saying why) when the cluster cannot be brought up here, and in
 * the sanitizer build unless SLURM_E2E_ASAN=1 (the scenario takes minutes; it runs
 * once per test run, in the release build).
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <math.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

static mongoc_client_t *client;
static char *db_name;
static const char *uri;
static char tmp[256];
static const char *cluster = "demo";

/* Runs a command (argv[0] looked up in /usr/bin or /bin); returns exit code, stdout (caller frees). */
static int cmd(char **out, const char *prog, ...)
{
    char *argv[32], path[256], *o, *e;
    va_list ap;
    int argc = 0, rc;

    snprintf(path, sizeof path, "%s%s", prog[0] == '/' ? "" : "/usr/bin/", prog);
    if (prog[0] != '/' && access(path, X_OK) != 0)
        snprintf(path, sizeof path, "/bin/%s", prog);
    argv[argc++] = path;
    va_start(ap, prog);
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 31;)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    rc = tu_run(argv, NULL, &o, &e);
    if (rc != 0)
        printf("  (%s exited %d: %.300s)\n", prog, rc, e);
    free(e);
    if (out)
        *out = o;
    else
        free(o);
    return rc;
}

/* sbatch --parsable ... -> job id. */
static long submit(const char *what, const char *a1, const char *a2, const char *a3, const char *a4)
{
    char *out;
    long id;
    int rc = cmd(&out, "sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null", a1, a2, a3, a4, NULL);
    if (rc != 0)
        fail_msg("sbatch for '%s' failed", what);
    id = atol(out);
    printf("  submitted %-28s job %ld\n", what, id);
    free(out);
    return id;
}

/* One slurm-ingest run in its default mode. */
static void ingest(void)
{
    char *argv[16], *o, *e, db[128], lock[300], spool[300], sqlite[300], env_uri[600];
    char *env[] = {env_uri, NULL};
    int rc;

    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(lock, sizeof lock, "--lock-dir=%s", tmp);
    snprintf(spool, sizeof spool, "--spool-dir=%s/spool", tmp);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(env_uri, sizeof env_uri, "SLURM_INGEST_MONGO_URI=%s", uri);
    argv[0] = (char *)SA_INGEST_BIN;
    argv[1] = (char *)"--cluster=demo";
    argv[2] = db;
    argv[3] = lock;
    argv[4] = spool;
    argv[5] = sqlite;
    argv[6] = (char *)"--max-gap=10m";
    argv[7] = (char *)"-q";
    argv[8] = NULL;
    rc = tu_run(argv, env, &o, &e);
    if (rc != 0)
        fail_msg("slurm-ingest exited %d: %s", rc, e);
    free(o);
    free(e);
}

/* squeue's state of a job ("" when squeue no longer lists it); static buffer. */
static const char *job_state(long id)
{
    static char state[64];
    char jid[32], *out;
    snprintf(jid, sizeof jid, "%ld", id);
    state[0] = '\0';
    if (cmd(&out, "squeue", "-h", "-j", jid, "-o", "%T", NULL) == 0)
        snprintf(state, sizeof state, "%s", out);
    state[strcspn(state, "\n")] = '\0';
    free(out);
    return state;
}

/* Ingests every 5 s until cond() or the deadline; returns whether cond() held. */
static bool ingest_until(bool (*cond)(void *), void *arg, int seconds)
{
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        ingest();
        if (cond(arg))
            return true;
        sleep(5);
    }
    return cond(arg);
}

static bool is_running(void *arg)
{
    return strcmp(job_state(*(long *)arg), "RUNNING") == 0;
}

static bool is_pending(void *arg)
{
    return strcmp(job_state(*(long *)arg), "PENDING") == 0;
}

static bool queue_empty(void *arg)
{
    char *out;
    bool empty;
    (void)arg;
    if (cmd(&out, "squeue", "-h", "-o", "%i", NULL) != 0)
        return false;
    empty = out[0] == '\0';
    free(out);
    return empty;
}

/* The archived document of a job (NULL if absent). */
static bson_t *get_doc(long id)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster), "job_id", BCON_INT64(id));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, filter, NULL, NULL);
    const bson_t *doc;
    bson_t *copy = NULL;
    if (mongoc_cursor_next(cur, &doc))
        copy = bson_copy(doc);
    assert_false(mongoc_cursor_next(cur, &doc)); /* once */
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    mongoc_collection_destroy(c);
    return copy;
}

static const char *doc_str(const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f) && BSON_ITER_HOLDS_UTF8(&f))
        return bson_iter_utf8(&f, NULL);
    return "";
}

static int64_t doc_int(const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f)) {
        if (BSON_ITER_HOLDS_NUMBER(&f))
            return bson_iter_as_int64(&f);
        if (BSON_ITER_HOLDS_DATE_TIME(&f))
            return bson_iter_date_time(&f) / 1000;
    }
    return -1;
}

static uint32_t doc_array_len(const bson_t *d, const char *path)
{
    bson_iter_t it, f, child;
    uint32_t n = 0;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f) && BSON_ITER_HOLDS_ARRAY(&f) &&
        bson_iter_recurse(&f, &child))
        while (bson_iter_next(&child))
            n++;
    return n;
}

/* Checks one job's final state and exit code. */
static void expect(long id, const char *state, int code, int sig, uint32_t runs)
{
    bson_t *d = get_doc(id);
    if (!d)
        fail_msg("job %ld is not in the archive", id);
    if (strcmp(doc_str(d, "state"), state) != 0) {
        /* what Slurm itself says, to tell an ingest bug from a scenario that went otherwise */
        char arg[32], *out = NULL;
        char *j = bson_as_relaxed_extended_json(d, NULL);
        snprintf(arg, sizeof arg, "%ld", id);
        cmd(&out, "sacct", "-D", "-P", "-j", arg, "-o", "JobID,State,ExitCode,Submit,Start,End,NodeList", NULL);
        printf("  sacct says:\n%s  archive: %s\n", out ? out : "", j);
        free(out);
        bson_free(j);
        fail_msg("job %ld: state %s, expected %s", id, doc_str(d, "state"), state);
    }
    if (code >= 0 && doc_int(d, "exit.code") != code)
        fail_msg("job %ld: exit code %lld, expected %d", id, (long long)doc_int(d, "exit.code"), code);
    if (sig >= 0 && doc_int(d, "exit.signal") != sig)
        fail_msg("job %ld: signal %lld, expected %d", id, (long long)doc_int(d, "exit.signal"), sig);
    printf("  job %-6ld %-10s exit %lld:%lld  runs %u  history %u\n", id, state, (long long)doc_int(d, "exit.code"),
           (long long)doc_int(d, "exit.signal"), doc_array_len(d, "runs"), doc_array_len(d, "history"));
    if (doc_array_len(d, "runs") != runs)
        fail_msg("job %ld: %u runs, expected %u", id, doc_array_len(d, "runs"), runs);
    bson_destroy(d);
}

static void test_scenario(void **state)
{
    long ok, fail, killed, timeout, array, het, gpu, requeue, held, cancelled;
    char jid[32];
    time_t t_begin = time(NULL);
    (void)state;

    ingest(); /* the cluster before anything happens */
    timeout = submit("timeout (-t 1)", "-t", "1", "--wrap", "sleep 300");
    gpu = submit("GPU job (2 x a100)", "-p", "gpu", "--gres=gpu:a100:2", "--wrap=sleep 20");
    ok = submit("normal", "--wrap", "sleep 2", NULL, NULL);
    fail = submit("fails with exit 3", "--wrap", "exit 3", NULL, NULL);
    killed = submit("killed by signal 9", "--wrap", "kill -9 $$", NULL, NULL);
    array = submit("array 1-4%2", "--array=1-4%2", "--wrap", "sleep 3", NULL);
    requeue = submit("requeued while running", "--requeue", "--wrap", "sleep 12", NULL);
    held = submit("held, then released", "-H", "--wrap", "sleep 1", NULL);
    cancelled = submit("cancelled while pending", "--begin=now+1hour", "--wrap", "sleep 1", NULL);
    {
        /* a heterogeneous job: it cannot be placed on one node here, so it is cancelled pending */
        char *out;
        if (cmd(&out, "sbatch", "--parsable", "-o", "/dev/null", "-n1", ":", "-n1", "--wrap", "sleep 1", NULL) != 0)
            fail_msg("sbatch of the het job failed");
        het = atol(out);
        free(out);
        printf("  submitted %-28s job %ld\n", "het job (2 components)", het);
    }

    /* requeue the job once it runs, and let it run again at once */
    if (!ingest_until(is_running, &requeue, 150))
        fail_msg("job %ld never ran", requeue);
    sleep(3); /* well into its batch script, past CONFIGURING */
    snprintf(jid, sizeof jid, "%ld", requeue);
    assert_int_equal(cmd(NULL, "scontrol", "requeue", jid, NULL), 0);
    /* it completes its first run (COMPLETING) and waits as PENDING (BeginTime) */
    if (!ingest_until(is_pending, &requeue, 60))
        fail_msg("job %ld did not go back to PENDING after the requeue", requeue);
    {
        /* a requeued job waits ~2 minutes (BeginTime); make it eligible now */
        char arg[64];
        snprintf(arg, sizeof arg, "jobid=%ld", requeue);
        assert_int_equal(cmd(NULL, "scontrol", "update", arg, "starttime=now", NULL), 0);
    }
    /* cancel the pending ones, release the held one */
    snprintf(jid, sizeof jid, "%ld", cancelled);
    assert_int_equal(cmd(NULL, "scancel", jid, NULL), 0);
    snprintf(jid, sizeof jid, "%ld", het);
    assert_int_equal(cmd(NULL, "scancel", jid, NULL), 0);
    ingest();
    snprintf(jid, sizeof jid, "%ld", held);
    assert_int_equal(cmd(NULL, "scontrol", "release", jid, NULL), 0);

    /* drain the node for a while, then resume it */
    assert_int_equal(cmd(NULL, "scontrol", "update", "nodename=vm", "state=drain", "reason=e2e maintenance", NULL),
                     0);
    for (int i = 0; i < 3; i++) {
        sleep(4);
        ingest();
    }
    assert_int_equal(cmd(NULL, "scontrol", "update", "nodename=vm", "state=resume", NULL), 0);

    /* everything finishes (the timeout job takes 60-90 s) */
    if (!ingest_until(queue_empty, NULL, 300))
        fail_msg("the queue did not empty");
    sleep(2);
    ingest(); /* sacct has the last records */
    ingest(); /* and the same input again changes nothing */

    printf("  checking the archive\n");
    expect(ok, "COMPLETED", 0, 0, 1);
    expect(fail, "FAILED", 3, 0, 1);
    expect(killed, "FAILED", 0, 9, 1);
    expect(timeout, "TIMEOUT", -1, -1, 1);
    expect(gpu, "COMPLETED", 0, 0, 1);
    expect(held, "COMPLETED", 0, 0, 1);
    expect(cancelled, "CANCELLED", -1, -1, 0);
    expect(het, "CANCELLED", -1, -1, 0);
    expect(het + 1, "CANCELLED", -1, -1, 0); /* the second component */
    expect(requeue, "COMPLETED", 0, 0, 2);
    /* the array: four tasks, each its own job */
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
        bson_t *f = BCON_NEW("cluster", BCON_UTF8(cluster), "array.job_id", BCON_INT64(array), "state",
                             BCON_UTF8("COMPLETED"));
        bson_error_t berr;
        assert_int_equal(mongoc_collection_count_documents(c, f, NULL, NULL, NULL, &berr), 4);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    /* the requeued job: two runs, and its whole history in order */
    {
        bson_t *d = get_doc(requeue);
        bson_iter_t it, h, e;
        char seq[256] = "";
        if (doc_array_len(d, "runs") != 2) {
            char *j = bson_as_relaxed_extended_json(d, NULL);
            printf("  requeued job document: %s\n", j);
            bson_free(j);
        }
        assert_int_equal(doc_array_len(d, "runs"), 2);
        assert_true(bson_iter_init_find(&it, d, "history") && bson_iter_recurse(&it, &h));
        while (bson_iter_next(&h)) {
            if (bson_iter_recurse(&h, &e) && bson_iter_find(&e, "state")) {
                strcat(seq, bson_iter_utf8(&e, NULL));
                strcat(seq, " ");
            }
        }
        printf("  requeued job history: %s\n", seq);
        assert_string_equal(seq, "PENDING RUNNING REQUEUED PENDING RUNNING COMPLETED ");
        bson_destroy(d);
    }
    /* GPU-hours of the GPU job: 2 x its real elapsed time (from sacct) */
    {
        char *out, arg[32];
        bson_t *d = get_doc(gpu);
        long elapsed;
        snprintf(arg, sizeof arg, "%ld", gpu);
        assert_int_equal(cmd(&out, "sacct", "-n", "-X", "-P", "-j", arg, "-o", "ElapsedRaw", NULL), 0);
        elapsed = atol(out);
        free(out);
        assert_true(elapsed >= 15);
        assert_int_equal(doc_int(d, "runs.0.gpus"), 2);
        assert_string_equal(doc_str(d, "runs.0.gpus_by_type.0.type"), "a100");
        assert_int_equal(doc_int(d, "runs.0.end") - doc_int(d, "runs.0.start"), elapsed);
        printf("  GPU job: 2 GPUs x %ld s = %.4f GPU-hours\n", elapsed, 2.0 * (double)elapsed / 3600);
        bson_destroy(d);
    }
    /* slurm-report: the window's GPU-hours are the GPU job's 2 GPUs x its elapsed time */
    {
        char *out, arg[32], *argv[16], *o, *e, start[64], end[64], sqlite[300], db[128], env_uri[600];
        char *env[] = {env_uri, NULL};
        long elapsed;
        json_t *j, *row;
        size_t i;
        double gpu_hours = 0;
        snprintf(arg, sizeof arg, "%ld", gpu);
        assert_int_equal(cmd(&out, "sacct", "-n", "-X", "-P", "-j", arg, "-o", "ElapsedRaw", NULL), 0);
        elapsed = atol(out);
        free(out);
        sa_time_format(t_begin - 3600, start, sizeof start);
        sa_time_format(time(NULL) + 3600, end, sizeof end);
        snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
        snprintf(db, sizeof db, "--db=%s", db_name);
        snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
        argv[0] = (char *)SA_REPORT_BIN;
        argv[1] = (char *)"usage";
        argv[2] = (char *)"-M";
        argv[3] = (char *)cluster;
        argv[4] = (char *)"-S";
        argv[5] = start;
        argv[6] = (char *)"-E";
        argv[7] = end;
        argv[8] = (char *)"--by=account,gpu-type";
        argv[9] = (char *)"--format=json";
        argv[10] = sqlite;
        argv[11] = db;
        argv[12] = NULL;
        if (tu_run(argv, env, &o, &e) != 0)
            fail_msg("slurm-report usage failed: %s", e);
        j = json_loads(o, 0, NULL);
        assert_non_null(j);
        json_array_foreach(json_object_get(j, "rows"), i, row) {
            gpu_hours += json_real_value(json_object_get(row, "gpu_hours"));
            assert_string_equal(json_string_value(json_object_get(row, "gpu_type")), "a100");
        }
        printf("  slurm-report: %.6f GPU-hours; sacct: 2 x %ld s = %.6f\n", gpu_hours, elapsed,
               2.0 * (double)elapsed / 3600);
        assert_true(fabs(gpu_hours - 2.0 * (double)elapsed / 3600) < 1e-6);
        json_decref(j);
        free(o);
        free(e);
        /* and the archive is healthy: nothing left running, ingest fresh, no failed run */
        argv[1] = (char *)"health";
        argv[8] = sqlite;
        argv[9] = db;
        argv[10] = NULL;
        if (tu_run(argv, env, &o, &e) != 0)
            fail_msg("slurm-report health is not quiet:\n%s%s", o, e);
        free(o);
        free(e);
    }
    /* no unfinished job left: nothing RUNNING or PENDING in the archive */
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
        bson_t *f = BCON_NEW("cluster", BCON_UTF8(cluster), "state", "{", "$in", "[", BCON_UTF8("RUNNING"),
                             BCON_UTF8("PENDING"), "]", "}");
        bson_error_t berr;
        assert_int_equal(mongoc_collection_count_documents(c, f, NULL, NULL, NULL, &berr), 0);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    /* the node's DRAIN interval, with its reason, in the time series */
    {
        char path[300];
        sqlite3 *db;
        sqlite3_stmt *st;
        int n = 0;
        snprintf(path, sizeof path, "%s/ts.db", tmp);
        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT state, reason, end - start FROM node_interval_span "
                                            "WHERE node = 'vm' AND '+' || flags || '+' LIKE '%+DRAIN+%'",
                                            -1, &st, NULL),
                         SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            printf("  vm: %s '%s' for %d s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                   sqlite3_column_int(st, 2));
            assert_string_equal((const char *)sqlite3_column_text(st, 1), "e2e maintenance");
            n++;
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        assert_true(n >= 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_scenario)};
    char *out = NULL, *err = NULL, tool[512];
    char *check[] = {tool, (char *)"check", NULL}, *up[] = {tool, (char *)"up", NULL}, *down[] = {tool, (char *)"down", NULL};
    int rc;

#if defined(__SANITIZE_ADDRESS__)
    if (!getenv("SLURM_E2E_ASAN")) {
        printf("SKIP e2e_slurm: the real-Slurm scenario takes minutes and runs once, in the release build "
               "(set SLURM_E2E_ASAN=1 to run it here too)\n");
        return 77;
    }
#endif
    snprintf(tool, sizeof tool, "%s/tools/slurm-test-cluster", SA_SOURCE_DIR);
    if (tu_run(check, NULL, &out, &err) != 0) {
        printf("SKIP e2e_slurm: no Slurm cluster can run here: %s%s\n", out, err);
        return 77;
    }
    free(out);
    free(err);
    client = tu_mongo_client("e2e_slurm", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    if (tu_run(up, NULL, &out, &err) != 0) {
        printf("FAIL e2e_slurm: tools/slurm-test-cluster up failed:\n%s\n", err);
        return 1;
    }
    /* the export lines: SLURM_CONF=..., SLURM_TEST_CLUSTER_DIR=..., SLURM_TEST_CLUSTER_NAME=... */
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq;
        if (strncmp(line, "export ", 7) == 0)
            line += 7;
        eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        {
            char *v = eq + 1;
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            setenv(line, v, 1);
        }
    }
    free(out);
    free(err);
    if (getenv("SLURM_TEST_CLUSTER_NAME"))
        cluster = getenv("SLURM_TEST_CLUSTER_NAME");
    snprintf(tmp, sizeof tmp, "/tmp/sa-e2e-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    rc = cmocka_run_group_tests_name("e2e_slurm", tests, NULL, NULL);
    tu_run(down, NULL, &out, &err);
    free(out);
    free(err);
    {
        char *rm[] = {(char *)"/bin/rm", (char *)"-rf", tmp, NULL};
        tu_run(rm, NULL, &out, &err);
        free(out);
        free(err);
    }
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
