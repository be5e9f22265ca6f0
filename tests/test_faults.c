/*
 * test_faults.c - the fault matrix of issue 10: faults injected into slurm-ingest runs
 * as the timer makes them, each case's final archive compared with that of an
 * uninterrupted run over the same inputs (job documents minus run metadata, see
 * tu_archive.h; the time series too where the case keeps it).
 *
 * The inputs: a cluster that evolves over five snapshots 5 minutes apart, written by
 * tools/gen-cluster --evolve (squeue, sinfo -N and the sacct window of each snapshot,
 * all consistent). Every sacct window of a run reaches an hour back, so the fake sacct
 * prints at each step every job seen so far, as the newest window shows it. Every crash
 * recovery merges a snapshot twice: merging is idempotent (test_durable's
 * test_requeued_merged_twice), also for job 1024, a requeued job pending again.
 *
 * Cases: MongoDB stopped, then restarted; MongoDB killed in the middle of the bulk write
 * of a sacct capture of 61,000 lines (15,000 jobs and their steps) (release build only); kill -9 of slurm-ingest at six points (the test-only
 * binary slurm-ingest-faults); fake Slurm commands that hang, print half their JSON, an
 * HTML page or more than max-output; two runs at once and replay during a timer run;
 * two writers on two lock directories; the spool on a full file system; the time series
 * corrupt and read-only; the Prometheus import's server down and slow. The last line sums it up: faults injected, documents compared,
 * lost, duplicated.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

#include "sa_exit.h"
#include "tu_archive.h"

#define STEPS 5
#define GEN_TOOL SA_FIXTURES_DIR "/../tools/gen-cluster"

static mongoc_client_t *client;
static char *db_base;
static const char *uri;
static char data[256];          /* generated inputs */
static char at[STEPS][32];      /* observation time of each step */
static tu_server_t server;      /* a server of this test's own (stopped, killed, restarted) */
static bool have_server;
static char server_why[600];

/* What the matrix found, for the summary line. */
static struct {
    int faults;
    tu_cmp_t cmp;
    size_t conflicts;
    size_t rollups_checked; /* archives whose rollups were checked against their documents */
} total;

/* ---- inputs and runs ------------------------------------------------------------------------- */

/* Runs a program (argv[0] a path) and fails the test unless it exits 0. */
static void must_run(char *const argv[])
{
    char *out = NULL, *err = NULL;
    int rc = tu_run(argv, NULL, &out, &err);
    if (rc != 0)
        fail_msg("%s exited %d: %s", argv[0], rc, err);
    free(out);
    free(err);
}

/* Reads index.json of the generated evolution: the steps' times. */
static void read_index(void)
{
    char path[400];
    json_error_t jerr;
    json_t *idx;
    snprintf(path, sizeof path, "%s/evolve/index.json", data);
    idx = json_load_file(path, 0, &jerr);
    if (!idx || json_array_size(idx) < STEPS)
        fail_msg("%s: %s", path, idx ? "too few steps" : jerr.text);
    for (int k = 0; k < STEPS; k++)
        snprintf(at[k], sizeof at[k], "%s", json_string_value(json_object_get(json_array_get(idx, (size_t)k), "at")));
    json_decref(idx);
}

/* The job a sacct text line is of: its JobIDRaw (second field) up to a '.' (steps), in key. */
static void line_job(const char *line, char *key, size_t keylen)
{
    const char *f = strchr(line, '\x1f');
    size_t n = f ? strcspn(f + 1, ".\x1f\n") : 0;
    snprintf(key, keylen, "%.*s", (int)n, f ? f + 1 : "");
}

/*
 * data/cum-K.txt: what sacct prints at step K. Every window overlaps the last hour, so
 * it is every job of windows 1..K, each as the newest window shows it (Slurm prints a
 * job's current record once, whatever window asks for it).
 */
static void write_cumulative(int k)
{
    char path[400], key[64];
    char *text[STEPS] = {NULL};
    char (*taken)[64] = calloc(4096, sizeof *taken);
    int *from = calloc(4096, sizeof *from), ntaken = 0;
    FILE *out;

    snprintf(path, sizeof path, "%s/cum-%d.txt", data, k);
    out = fopen(path, "w");
    assert_non_null(out);
    for (int j = k; j >= 1; j--) {
        char *line;
        snprintf(path, sizeof path, "%s/clean/sacct-%03d.txt", data, j);
        text[j] = tu_read_file(path, NULL);
        line = strchr(text[j], '\n') + 1;
        if (j == k)
            fprintf(out, "%.*s", (int)(line - text[j]), text[j]); /* the header, once */
        while (*line) {
            char *nl = strchr(line, '\n');
            int t;
            line_job(line, key, sizeof key);
            for (t = 0; t < ntaken && strcmp(taken[t], key) != 0; t++)
                ;
            if (t == ntaken) {
                assert_true(ntaken < 4096);
                snprintf(taken[ntaken], sizeof taken[ntaken], "%s", key);
                from[ntaken++] = j;
            }
            if (from[t] == j)
                fprintf(out, "%.*s\n", (int)(nl ? nl - line : (long)strlen(line)), line);
            line = nl ? nl + 1 : line + strlen(line);
        }
    }
    fclose(out);
    for (int j = 1; j <= k; j++)
        free(text[j]);
    free(taken);
    free(from);
}

/* data/clean/: the squeue and sacct files of each step (links); data/cum-K.txt: sacct at step K. */
static void prepare_inputs(void)
{
    char src[400], dst[400];

    snprintf(dst, sizeof dst, "%s/clean", data);
    mkdir(dst, 0755);
    for (int k = 0; k < STEPS; k++) {
        snprintf(src, sizeof src, "%s/evolve/squeue-%03d.json", data, k);
        snprintf(dst, sizeof dst, "%s/clean/squeue-%03d.json", data, k);
        if (symlink(src, dst) != 0)
            fail_msg("cannot link %s: %s", dst, strerror(errno));
        if (k == 0)
            continue;
        snprintf(src, sizeof src, "%s/evolve/sacct-%03d.txt", data, k);
        snprintf(dst, sizeof dst, "%s/clean/sacct-%03d.txt", data, k);
        if (symlink(src, dst) != 0)
            fail_msg("cannot link %s: %s", dst, strerror(errno));
    }
    for (int k = 1; k < STEPS; k++)
        write_cumulative(k);
}

/* A fresh sandbox (and database) for one timeline, on the shared server or this test's own. */
static void box_new(tu_box_t *b, const char *name, bool own_server)
{
    char db[160];
    snprintf(db, sizeof db, "%s_%s", db_base, name);
    tu_box_init(b, name, own_server ? server.uri : uri, db);
}

static void box_done(tu_box_t *b, bool own_server)
{
    if (own_server) {
        mongoc_client_t *c = mongoc_client_new(server.uri);
        tu_mongo_drop(c, b->db);
        mongoc_client_destroy(c);
    } else {
        tu_mongo_drop(client, b->db);
    }
    tu_box_destroy(b);
}

/* The environment of step k's fake commands. */
typedef struct {
    char sq[500], si[500], sa[500];
    const char *v[8];
} step_env_t;

static const char *const *step_env(step_env_t *e, int k, const char *extra)
{
    int n = 0;
    snprintf(e->sq, sizeof e->sq, "TU_SQUEUE=%s/clean/squeue-%03d.json", data, k);
    snprintf(e->si, sizeof e->si, "TU_SINFO=%s/evolve/sinfo-N-%03d.json", data, k);
    snprintf(e->sa, sizeof e->sa, "TU_SACCT=%s/cum-%d.txt", data, k);
    e->v[n++] = e->sq;
    e->v[n++] = e->si;
    if (k > 0)
        e->v[n++] = e->sa;
    if (extra)
        e->v[n++] = extra;
    e->v[n] = NULL;
    return e->v;
}

/* One timer run of step k (more options and one more environment entry may be given). */
static int step(const tu_box_t *b, int k, const char *const more[], const char *extra_env, char **err)
{
    const char *args[16];
    char at_opt[64];
    step_env_t e;
    int n = 0;
    snprintf(at_opt, sizeof at_opt, "--at=%.31s", at[k]);
    args[n++] = at_opt;
    for (int i = 0; more && more[i]; i++)
        args[n++] = more[i];
    args[n] = NULL;
    return tu_box_run(b, args, step_env(&e, k, extra_env), err);
}

/* Runs step k and fails unless it exits with want. */
static void step_expect(const tu_box_t *b, int k, const char *const more[], const char *extra_env, int want,
                        const char *what)
{
    char *err = NULL;
    int rc = step(b, k, more, extra_env, &err);
    if (rc != want)
        fail_msg("%s: step %d exited %d, expected %d: %s", what, k, rc, want, err);
    free(err);
}

/*
 * Step k of a files-mode reference with part of a timer run's inputs: sinfo always, the
 * squeue snapshot when with_squeue, every sacct window so far when with_sacct (step 0 has
 * none). Without squeue: its capture was refused. Without sacct: the run met an
 * unreachable MongoDB, and sacct waits for the next run, which reads it from the
 * watermark (what only this step's window showed, a pending job's flags changing, is
 * never seen).
 */
static void step_part(const tu_box_t *b, int k, bool with_squeue, bool with_sacct)
{
    char at_opt[64], si[400], sq[400], sa[400], *err = NULL;
    const char *args[8] = {at_opt, "--sinfo", si};
    int n = 3;
    snprintf(at_opt, sizeof at_opt, "--at=%.31s", at[k]);
    snprintf(si, sizeof si, "%s/evolve/sinfo-N-%03d.json", data, k);
    if (with_squeue) {
        snprintf(sq, sizeof sq, "%s/evolve/squeue-%03d.json", data, k);
        args[n++] = "--squeue";
        args[n++] = sq;
    }
    if (with_sacct && k > 0) {
        snprintf(sa, sizeof sa, "%s/cum-%d.txt", data, k);
        args[n++] = "--sacct";
        args[n++] = sa;
    }
    args[n] = NULL;
    if (tu_box_run(b, args, NULL, &err) != 0)
        fail_msg("reference step %d without %s: %s", k, with_squeue ? "sacct" : "squeue", err);
    free(err);
}

/* ---- references ------------------------------------------------------------------------------ */

/*
 * The archive of an uninterrupted timeline: plan[k] is 'n' (a timer run), '-' (no run:
 * its capture never landed), 'q' (sinfo and sacct only: its squeue was refused) or 's'
 * (squeue and sinfo only: MongoDB was unreachable). The results are kept by plan.
 */
typedef struct {
    char plan[STEPS + 1];
    json_t *docs;
    char *ts;
} ref_t;

static ref_t refs[8];

static const ref_t *reference(const char *plan)
{
    tu_box_t b;
    ref_t *r = NULL;
    char name[32];

    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (refs[i].docs && strcmp(refs[i].plan, plan) == 0)
            return &refs[i];
        if (!refs[i].docs && !r)
            r = &refs[i];
    }
    assert_non_null(r);
    snprintf(name, sizeof name, "ref%ld", (long)(r - refs));
    box_new(&b, name, false);
    for (int k = 0; k < STEPS; k++) {
        if (plan[k] == 'n')
            step_expect(&b, k, NULL, NULL, SA_EXIT_OK, "reference");
        else if (plan[k] == 'q')
            step_part(&b, k, false, true);
        else if (plan[k] == 's')
            step_part(&b, k, true, false);
    }
    snprintf(r->plan, sizeof r->plan, "%s", plan);
    r->docs = tu_archive_docs(client, b.db, "jobs");
    r->ts = tu_tsdb_dump(tu_box_path(&b, "ts.db"));
    assert_true(json_array_size(r->docs) > 50);
    box_done(&b, false);
    return r;
}

/*
 * The box's usage rollups equal the ones recomputed from its job documents (`slurm-ingest
 * rollup` exits 0): with the documents equal to an uninterrupted run's, so are the rollups.
 */
static void rollups_ok(const tu_box_t *b, const char *what)
{
    static const char *const args[] = {"rollup", NULL};
    char *err = NULL;
    tu_box_t v = *b;
    int rc;

    v.bin = SA_INGEST_BIN; /* not the faults binary */
    rc = tu_box_run(&v, args, NULL, &err);
    if (rc != 0)
        fail_msg("%s: the rollups differ from the job documents (slurm-ingest rollup exited %d: %s)", what, rc,
                 err ? err : "");
    free(err);
    total.rollups_checked++;
}

/* Compares a box's archive (and time series when with_ts) with the reference of plan. */
static void compare(const tu_box_t *b, bool own_server, const char *plan, bool with_ts, const char *what)
{
    const ref_t *r = reference(plan);
    mongoc_client_t *c = own_server ? mongoc_client_new(server.uri) : client;
    json_t *got = tu_archive_docs(c, b->db, "jobs");
    tu_cmp_t one;

    memset(&one, 0, sizeof one);
    if (!tu_archive_compare(r->docs, got, &one)) {
        char path[300], ref[320];
        snprintf(path, sizeof path, "/tmp/sa-faults-%s.json", b->db);
        snprintf(ref, sizeof ref, "/tmp/sa-faults-%s-reference.json", b->db);
        tu_json_to_file(got, path);
        tu_json_to_file(r->docs, ref);
        fail_msg("%s: the archive differs from an uninterrupted run (%zu lost, %zu duplicated, %zu differ; first: "
                 "%s; documents in %s, the uninterrupted run's in %s)", what, one.lost, one.duplicated, one.differ,
                 one.first, path, ref);
    }
    if (with_ts) {
        char *ts = tu_tsdb_dump(tu_box_path(b, "ts.db"));
        if (!ts || strcmp(ts, r->ts) != 0)
            fail_msg("%s: the time series differs from an uninterrupted run", what);
        free(ts);
    }
    total.cmp.compared += one.compared;
    json_decref(got);
    if (own_server)
        mongoc_client_destroy(c);
    rollups_ok(b, what);
    printf("  %-58s %zu documents equal\n", what, one.compared);
    fflush(stdout);
}

/* PRAGMA integrity_check of the box's time series. */
static void integrity_ok(const tu_box_t *b)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(tu_box_path(b, "ts.db"), &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static int spooled(const tu_box_t *b)
{
    int n = tu_count_entries(tu_box_path(b, "spool/demo"));
    n -= access(tu_box_path(b, "spool/demo/rejected"), F_OK) == 0;
    n -= access(tu_box_path(b, "spool/demo/setaside"), F_OK) == 0;
    return n < 0 ? 0 : n;
}

static void need_server(void)
{
    if (!have_server) {
        printf("SKIP: no MongoDB server of the test's own: %s\n", server_why);
        skip();
    }
}

/* ---- MongoDB stopped, then restarted --------------------------------------------------------- */

static void test_mongo_stopped(void **state)
{
    tu_box_t b;
    char *err = NULL;
    (void)state;

    need_server();
    box_new(&b, "stopped", true);
    step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, "stopped");
    step_expect(&b, 1, NULL, NULL, SA_EXIT_OK, "stopped");
    tu_server_stop(&server, SIGTERM);
    total.faults++;
    {
        int rc = step(&b, 2, NULL, NULL, &err);
        if (rc != SA_EXIT_SPOOLED)
            fail_msg("MongoDB stopped: exit %d, expected 8: %s", rc, err);
        free(err);
    }
    assert_int_equal(spooled(&b), 1);
    if (!tu_server_restart(&server, server_why, sizeof server_why))
        fail_msg("restarting the server: %s", server_why);
    for (int k = 3; k < STEPS; k++)
        step_expect(&b, k, NULL, NULL, SA_EXIT_OK, "stopped");
    assert_int_equal(spooled(&b), 0);
    compare(&b, true, "nnsnn", true, "MongoDB stopped at step 2, restarted");
    box_done(&b, true);
}

/* ---- MongoDB killed in the middle of a large bulk write -------------------------------------- */

/* The distinct "demo:<JobIDRaw>" of a sacct text file (steps folded into their job). */
static char **sacct_ids(const char *path, size_t *n, size_t *nlines)
{
    char *text = tu_read_file(path, NULL), *line = strchr(text, '\n') + 1, **ids = NULL, last[64] = "";
    size_t cap = 0;

    *n = 0;
    *nlines = 0;
    while (*line) {
        char key[64], *nl = strchr(line, '\n');
        ++*nlines;
        line_job(line, key, sizeof key);
        if (key[0] && strcmp(key, last) != 0) { /* sacct prints a job's steps right after it */
            if (*n == cap)
                ids = realloc(ids, (cap = cap ? 2 * cap : 4096) * sizeof *ids);
            if (asprintf(&ids[(*n)++], "demo:%s", key) < 0)
                abort();
            snprintf(last, sizeof last, "%s", key);
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
    return ids;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * The big case: gen-cluster's month of 15,000 job records, which sacct prints with their
 * steps as some 61,000 lines (the 50,000+ records); 30 write chunks of 500 jobs,
 * enough for a kill to land in the middle (50,000 jobs found the same loss in 7 minutes;
 * this takes 2).
 */
#define BIG_RECORDS "15000"

/* Runs the big capture with the server killed after delay_s; the exit status. */
static int run_and_kill(const tu_box_t *b, const char *const args[], double delay_s)
{
    pid_t pid = tu_box_start(b, args, NULL);
    usleep((useconds_t)(delay_s * 1e6));
    tu_server_stop(&server, SIGKILL);
    return tu_wait(pid);
}

static void test_mongo_killed_mid_bulk(void **state)
{
    tu_box_t ref, b;
    char big[400], sinfo[400], **ids;
    const char *a1[] = {"--at=2026-11-01T00:00:00Z", "--sacct", big, NULL};
    const char *a2[] = {"--at=2026-11-01T00:05:00Z", "--sinfo", sinfo, NULL};
    char *err = NULL;
    json_t *want, *got;
    mongoc_client_t *own;
    tu_cmp_t one;
    size_t nids, nlines = 0;
    double ref_s, delay = 0.4;
    int rc = 0;
    struct timespec t0, t1;
    (void)state;

    need_server();
    if (SA_SANITIZED) {
        printf("SKIP: the 61,000-line sacct bulk write runs in the release build only (minutes on the FerretDB test "
               "server there, several times that under AddressSanitizer); the small cases cover the same code\n");
        skip();
    }
    if (getenv("SLURM_TEST_SKIP_BIG") && strcmp(getenv("SLURM_TEST_SKIP_BIG"), "1") == 0) {
        printf("SKIP: SLURM_TEST_SKIP_BIG=1: the 61,000-line sacct bulk write (minutes on the FerretDB test server) is "
               "left out\n");
        skip();
    }
    {
        char out_opt[400];
        char *argv[] = {(char *)"/usr/bin/env", (char *)"python3", (char *)GEN_TOOL, (char *)"--sacct-month",
                        (char *)"--records", (char *)BIG_RECORDS, (char *)"--jobs", (char *)"20", (char *)"--nodes",
                        (char *)"24", (char *)"--at", (char *)"2026-11-15T00:00:00Z", (char *)"--out", out_opt,
                        (char *)"-q", NULL};
        snprintf(out_opt, sizeof out_opt, "%s/big", data);
        must_run(argv);
        snprintf(big, sizeof big, "%s/big/sacct-month-2026-10.txt", data);
        snprintf(sinfo, sizeof sinfo, "%s/evolve/sinfo-N-000.json", data);
        ids = sacct_ids(big, &nids, &nlines);
        assert_true(nlines >= 50000);
        assert_true(nids >= (size_t)atoi(BIG_RECORDS) * 9 / 10);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the uninterrupted run */
    box_new(&ref, "bigref", false);
    if (tu_box_run(&ref, a1, NULL, &err) != 0)
        fail_msg("the uninterrupted run failed: %s", err);
    free(err);
    ref_s = seconds_since(&t0);
    if (tu_box_run(&ref, a2, NULL, &err) != 0)
        fail_msg("the uninterrupted run failed: %s", err);
    free(err);
    /* the same, with the server killed part of the way through (sooner if the run was done by then) */
    box_new(&b, "bigkill", true);
    for (int attempt = 0; attempt < 3; attempt++, delay /= 2) {
        rc = run_and_kill(&b, a1, ref_s * delay);
        if (!tu_server_restart(&server, server_why, sizeof server_why))
            fail_msg("restarting the server: %s", server_why);
        if (rc != SA_EXIT_OK)
            break;
        box_done(&b, true);
        box_new(&b, "bigkill", true);
    }
    total.faults++;
    if (rc != SA_EXIT_SPOOLED)
        fail_msg("MongoDB killed after %.0f s of a %.0f s write: exit %d, expected 8 (see %s)", ref_s * delay,
                 ref_s, rc, b.dir);
    assert_int_equal(spooled(&b), 1);
    /* the next run lands the rest */
    if (tu_box_run(&b, a2, NULL, &err) != 0)
        fail_msg("the run after the kill failed: %s", err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    own = mongoc_client_new(server.uri);
    /* it was in the middle: some records had landed (the cache knew them), some had not */
    if (tu_count(own, b.db, "ingest_runs", NULL) != 1 ||
        tu_sum(own, b.db, "ingest_runs", "counts.cache_skipped") == 0 ||
        tu_sum(own, b.db, "ingest_runs", "counts.jobs_inserted") == 0)
        fail_msg("the kill was not in the middle of the write: cache_skipped %lld, jobs_inserted %lld",
                 tu_sum(own, b.db, "ingest_runs", "counts.cache_skipped"),
                 tu_sum(own, b.db, "ingest_runs", "counts.jobs_inserted"));
    got = tu_archive_docs_by_id(own, b.db, "jobs", ids, nids);
    assert_int_equal(tu_count(own, b.db, "jobs_superseded", NULL), 0);
    mongoc_client_destroy(own);
    want = tu_archive_docs_by_id(client, ref.db, "jobs", ids, nids);
    assert_int_equal(json_array_size(want), nids);
    memset(&one, 0, sizeof one);
    if (!tu_archive_compare(want, got, &one))
        fail_msg("MongoDB killed mid-write: %zu lost, %zu duplicated, %zu differ (first: %s)", one.lost,
                 one.duplicated, one.differ, one.first);
    total.cmp.compared += one.compared;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    {
        char what[80];
        snprintf(what, sizeof what, "MongoDB killed mid bulk write (%zu sacct lines)", nlines);
        printf("  %-58s %zu documents equal (killed after %.0f s of %.0f s; the case took %ld s)\n", what,
               one.compared, ref_s * delay, ref_s, (long)(t1.tv_sec - t0.tv_sec));
    }
    json_decref(want);
    json_decref(got);
    for (size_t i = 0; i < nids; i++)
        free(ids[i]);
    free(ids);
    box_done(&ref, false);
    box_done(&b, true);
}

/* ---- kill -9 of slurm-ingest at its fault points --------------------------------------------- */

static void test_kill_points(void **state)
{
    static const char *const points[] = {"kept", "tsdb-commit", "mongo-write:1", "mongo-write:2", "rollup-write",
                                         "before-watermark", "before-drop"};
    (void)state;

    if (!SA_FAULTS_BIN[0]) {
        printf("SKIP: slurm-ingest-faults is not built (cmake -DSA_FAULT_INJECTION=ON; tools/test does): kill -9 "
               "at a chosen point needs its fault points\n");
        skip();
    }
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        tu_box_t b;
        char name[32], fault[64], what[128];
        const char *normal;
        snprintf(name, sizeof name, "kill%zu", i);
        snprintf(fault, sizeof fault, "SA_FAULT=%s", points[i]);
        box_new(&b, name, false);
        normal = b.bin;
        step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, points[i]);
        b.bin = SA_FAULTS_BIN;
        step_expect(&b, 1, NULL, fault, 128 + SIGKILL, points[i]);
        total.faults++;
        b.bin = normal;
        for (int k = 2; k < STEPS; k++)
            step_expect(&b, k, NULL, NULL, SA_EXIT_OK, points[i]);
        assert_int_equal(spooled(&b), 0);
        integrity_ok(&b);
        snprintf(what, sizeof what, "kill -9 at %s (step 1)", points[i]);
        compare(&b, false, "nnnnn", true, what);
        box_done(&b, false);
    }
}

/* ---- kill -9 at the writes of a poll that supersedes (job ids reused) --------------------- */

/*
 * sacct of the wrap scenario: step 0, 60 ended jobs 7340000..7340059; step 1, ids
 * 7340000..7340029 come back for new jobs (MaxJobId wrapped: the ended documents move to
 * jobs_superseded), running; step 2, those end. Each capture lists what its window shows.
 */
static void write_wrap(const char *path, int step)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("JobID|JobIDRaw|User|Account|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|AllocTRES|NodeList\n", f);
    for (int i = 0; i < 60; i++) {
        bool reused = i < 30 && step > 0;
        if (!reused)
            fprintf(f, "%d|%d|u%d|acct%d|gpu|COMPLETED|0:0|2026-10-01T00:%02d:00|2026-10-01T01:%02d:00|"
                       "2026-10-02T%02d:00:00|%d|cpu=4,gres/gpu:a100=1,node=1|ga%03d\n",
                    7340000 + i, 7340000 + i, i % 5, i % 3, i, i, i % 24, 82800 + (i % 24) * 3600 - i * 60, i % 16 + 1);
        else
            fprintf(f, "%d|%d|v%d|acct%d|gpu|%s|0:0|2026-10-05T00:%02d:00|2026-10-05T01:%02d:00|%s|%d|"
                       "cpu=8,gres/gpu:a100=2,node=1|ga%03d\n",
                    7340000 + i, 7340000 + i, i % 4, i % 2, step == 2 ? "COMPLETED" : "RUNNING", i, i,
                    step == 2 ? "2026-10-07T00:00:00" : "Unknown", step == 2 ? 169200 - i * 60 : 0, i % 16 + 1);
    }
    fclose(f);
}

/*
 * slurm-ingest killed (SIGKILL, SA_FAULT=write:N) before the Nth write of a poll that
 * supersedes 30 documents, for N over the poll's writes (every one in the Release build, a
 * third of them under the sanitizers; test_rollup_writer kills at every write of such polls
 * without a server): after the poll run again, and after the next poll (with or without the
 * poll again), the rollups, the run log and the clusters document equal what their
 * documents say (issue 31, item 2: before, the recovery missed the displaced documents'
 * members and `slurm-ingest rollup` exited 9; a run killed between its ingest_runs record
 * and its run log entry left the entry out for good).
 */
static void test_kill_supersede(void **state)
{
    char files[3][300];
    size_t kills = 0;
    int writes = 0;
    (void)state;

    if (!SA_FAULTS_BIN[0]) {
        printf("SKIP: slurm-ingest-faults is not built (cmake -DSA_FAULT_INJECTION=ON; tools/test does): kill -9 "
               "at a chosen write needs its fault points\n");
        skip();
    }
    for (int k = 0; k < 3; k++) {
        snprintf(files[k], sizeof files[k], "%s/wrap-%d.txt", data, k);
        write_wrap(files[k], k);
    }
    for (int n = 1;; n += SA_SANITIZED ? 5 : 1) {
        for (int rerun = 0; rerun < 2; rerun++) {
            static const char *const ats[3] = {"--at=2026-10-04T00:00:00Z", "--at=2026-10-05T06:00:00Z",
                                              "--at=2026-10-07T06:00:00Z"};
            tu_box_t b;
            char name[32], fault[64], what[128], *err = NULL;
            const char *normal;
            int rc;
            snprintf(name, sizeof name, "wrap%d_%d", n, rerun);
            snprintf(fault, sizeof fault, "SA_FAULT=write:%d", n);
            box_new(&b, name, false);
            normal = b.bin;
            {
                const char *args[] = {ats[0], "--sacct", files[0], NULL};
                assert_int_equal(tu_box_run(&b, args, NULL, NULL), 0);
            }
            {
                const char *args[] = {ats[1], "--sacct", files[1], NULL};
                const char *env[] = {fault, NULL};
                b.bin = SA_FAULTS_BIN;
                rc = tu_box_run(&b, args, env, &err);
                b.bin = normal;
                free(err);
                err = NULL;
                if (rc == 0) { /* the poll has fewer writes than n: every one was killed at */
                    box_done(&b, false);
                    goto done;
                }
                if (rc != 128 + SIGKILL)
                    fail_msg("the poll killed at write %d exited %d", n, rc);
                kills++;
                total.faults++;
                if (rerun)
                    assert_int_equal(tu_box_run(&b, args, NULL, NULL), 0);
            }
            snprintf(what, sizeof what, "supersede killed at write %d%s", n, rerun ? ", run again" : "");
            if (rerun)
                rollups_ok(&b, what);
            {
                const char *args[] = {ats[2], "--sacct", files[2], NULL};
                assert_int_equal(tu_box_run(&b, args, NULL, NULL), 0);
            }
            snprintf(what + strlen(what), sizeof what - strlen(what), ", then the next poll");
            rollups_ok(&b, what);
            assert_int_equal(tu_count(client, b.db, "jobs_superseded", "{}"), 30);
            box_done(&b, false);
        }
        writes = n;
    }
done:
    printf("  kill -9 at the writes of a poll that supersedes 30 documents: %zu kills (its writes 1..%d%s), the "
           "rollups equal to their documents after each\n",
           kills, writes, SA_SANITIZED ? ", every fifth under ASan: the Release build kills at each" : "");
    assert_true(writes >= 5);
}

/* ---- a killed run's write that lands after the next run's recovery ---------------------------- */

/* Every document of a box's collection, copied (caller frees with coll_free). */
static bson_t **coll_save(const tu_box_t *b, const char *coll, size_t *n)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, b->db, coll);
    bson_t none = BSON_INITIALIZER, **v = NULL;
    const bson_t *doc;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, &none, NULL, NULL);
    size_t cap = 0;

    *n = 0;
    while (mongoc_cursor_next(cur, &doc)) {
        if (*n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v)))
            abort();
        v[(*n)++] = bson_copy(doc);
    }
    assert_false(mongoc_cursor_error(cur, NULL));
    mongoc_cursor_destroy(cur);
    mongoc_collection_destroy(c);
    return v;
}

/* The collection as coll_save found it: emptied, then those documents (freed). */
static void coll_restore(const tu_box_t *b, const char *coll, bson_t **v, size_t n)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, b->db, coll);
    bson_t none = BSON_INITIALIZER;
    bson_error_t berr;

    if (!mongoc_collection_delete_many(c, &none, NULL, NULL, &berr))
        fail_msg("emptying %s: %s", coll, berr.message);
    for (size_t i = 0; i < n; i++) {
        if (!mongoc_collection_insert_one(c, v[i], NULL, NULL, &berr))
            fail_msg("restoring %s: %s", coll, berr.message);
        bson_destroy(v[i]);
    }
    free(v);
    mongoc_collection_destroy(c);
}

static void copy_file(const char *from, const char *to)
{
    char *argv[] = {(char *)"/bin/cp", (char *)"-p", (char *)from, (char *)to, NULL};
    must_run(argv);
}

/*
 * A run killed while a write of its was in flight: MongoDB (or FerretDB) carries out a
 * request whose client is gone, so the job documents may change after the next run
 * restaged the dead run's journal from them (it read them before the write landed). That
 * next run then lands the killed run's inputs again (the spool, or sacct from the old
 * watermark) and finds the documents already as they say: nothing to write. Their rollups
 * must be staged all the same, from the documents as found (tools/kill-loop found 1 to 19
 * jobs left RUNNING in the live and open lists so, with the journal empty). Here: the
 * documents of step 2 landed, the rollups, the job cache and the sacct watermark as step
 * 1 left them; then step 2 runs again, and the rollups must equal the documents.
 */
static void test_late_write(void **state)
{
    tu_box_t b;
    bson_t **saved;
    size_t nsaved;
    char cache[400], mark[400], keep_cache[420], keep_mark[420];
    (void)state;

    box_new(&b, "late", false);
    step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, "late write");
    step_expect(&b, 1, NULL, NULL, SA_EXIT_OK, "late write");
    snprintf(cache, sizeof cache, "%s", tu_box_path(&b, "lock/demo.jobcache.sqlite"));
    snprintf(mark, sizeof mark, "%s", tu_box_path(&b, "lock/demo.sacct-watermark"));
    snprintf(keep_cache, sizeof keep_cache, "%s.step1", cache);
    snprintf(keep_mark, sizeof keep_mark, "%s.step1", mark);
    copy_file(cache, keep_cache);
    copy_file(mark, keep_mark);
    saved = coll_save(&b, "rollups", &nsaved);
    assert_true(nsaved > 0);
    step_expect(&b, 2, NULL, NULL, SA_EXIT_OK, "late write");
    /* the documents of step 2; the rest as a run killed in step 2 before its flush and its cache left them, its
     * journal already restaged */
    coll_restore(&b, "rollups", saved, nsaved);
    copy_file(keep_cache, cache);
    copy_file(keep_mark, mark);
    step_expect(&b, 2, NULL, NULL, SA_EXIT_OK, "late write, step 2 again");
    rollups_ok(&b, "the writes of a killed run landed after the next run's recovery, then its inputs again");
    total.faults++;
    printf("  a killed run's writes landed late: the next run found the documents as its inputs say and staged "
           "their rollups\n");
    box_done(&b, false);
}

/* ---- fake Slurm commands that misbehave ------------------------------------------------------ */

static void test_bad_commands(void **state)
{
    static const struct {
        const char *name, *body;
        const char *opt;
        int exit;
        const char *plan, *says;
    } cases[] = {
        {"hang", "sleep 600 & sleep 600", "--timeout=1s", SA_EXIT_SLURM, "nn-nn", "timed out"},
        {"half", "head -c 20000 \"$TU_SQUEUE\"", NULL, SA_EXIT_INPUT, "nnqnn", "truncated"},
        {"html", "printf '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\\n'", NULL,
         SA_EXIT_INPUT, "nnqnn", "squeue"},
        {"huge", "cat \"$TU_SQUEUE\" \"$TU_SQUEUE\"", "--max-output=300k", SA_EXIT_SLURM, "nn-nn", "exceeded"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_box_t b;
        char name[32], path[400], cmd[500], what[128], *err = NULL;
        const char *more[] = {cmd, cases[i].opt, NULL};
        int rc;
        snprintf(name, sizeof name, "cmd-%s", cases[i].name);
        box_new(&b, name, false);
        snprintf(path, sizeof path, "%s/bin/bad-squeue", b.dir);
        tu_write_script(path, cases[i].body);
        snprintf(cmd, sizeof cmd, "--squeue-command=%s", path);
        step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, cases[i].name);
        step_expect(&b, 1, NULL, NULL, SA_EXIT_OK, cases[i].name);
        rc = step(&b, 2, more, NULL, &err);
        if (rc != cases[i].exit || !strstr(err, cases[i].says))
            fail_msg("squeue that does \"%s\": exit %d, expected %d with \"%s\": %s", cases[i].name, rc, cases[i].exit,
                     cases[i].says, err);
        free(err);
        total.faults++;
        for (int k = 3; k < STEPS; k++)
            step_expect(&b, k, NULL, NULL, SA_EXIT_OK, cases[i].name);
        assert_int_equal(spooled(&b), 0);
        snprintf(what, sizeof what, "squeue: %s (step 2; exit %d)", cases[i].name, cases[i].exit);
        compare(&b, false, cases[i].plan, true, what);
        box_done(&b, false);
    }
}

/* ---- a Prometheus that is down or slow (issue 24) --------------------------------------------- */

/*
 * The Prometheus import asked of a server that is down (a closed port; the URL carries a
 * password that must not be printed) or slow (a socket that accepts and never answers):
 * every run exits 0 with one warning, the archive (and its rollups) is an uninterrupted
 * run's, and the watermark of the import stays before the jobs that ended. A server
 * that comes back completes the import: tests/test_promimport.c (a real Prometheus).
 */
static void test_prometheus_faults(void **state)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int closed = socket(AF_INET, SOCK_STREAM, 0), slow = socket(AF_INET, SOCK_STREAM, 0);
    char urls[2][160], opt[200 + 160];
    const char *names[2] = {"down", "slow"};
    (void)state;

    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(closed, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(closed, (struct sockaddr *)&sa, &len), 0);
    close(closed);
    snprintf(urls[0], sizeof urls[0], "http://reader:s3cret@127.0.0.1:%d", ntohs(sa.sin_port));
    sa.sin_port = 0;
    assert_int_equal(bind(slow, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(slow, 16), 0);
    len = sizeof sa;
    assert_int_equal(getsockname(slow, (struct sockaddr *)&sa, &len), 0);
    snprintf(urls[1], sizeof urls[1], "http://127.0.0.1:%d", ntohs(sa.sin_port));
    for (int i = 0; i < 2; i++) {
        tu_box_t b;
        char name[32], what[128];
        const char *more[] = {opt, "--prometheus-timeout=1s", NULL};
        snprintf(name, sizeof name, "prom-%s", names[i]);
        snprintf(opt, sizeof opt, "--prometheus-url=%s", urls[i]);
        int warned = 0;
        box_new(&b, name, false);
        for (int k = 0; k < STEPS; k++) {
            char *err = NULL;
            int rc = step(&b, k, more, NULL, &err);
            if (rc != SA_EXIT_OK || strstr(err, "s3cret"))
                fail_msg("Prometheus %s: step %d exited %d (expected 0, no password printed): %s", names[i], k, rc,
                         err);
            warned += strstr(err, "warning: Prometheus import stopped") != NULL;
            free(err);
            total.faults++;
        }
        if (!warned)
            fail_msg("Prometheus %s: no run warned that the import stopped", names[i]);
        snprintf(what, sizeof what, "Prometheus %s at every step (exit 0, one warning)", names[i]);
        compare(&b, false, "nnnnn", true, what);
        box_done(&b, false);
    }
    close(slow);
}

/* ---- two runs at once; replay during a timer run --------------------------------------------- */

static void test_two_runs_at_once(void **state)
{
    tu_box_t b;
    char slow[400], cmd[500], archive[400], *err = NULL;
    const char *more[] = {archive, NULL};
    const char *replay[] = {"replay", NULL, NULL};
    step_env_t e;
    pid_t pid;
    int rc;
    (void)state;

    box_new(&b, "atonce", false);
    snprintf(slow, sizeof slow, "%s/bin/slow-squeue", b.dir);
    tu_write_script(slow, "sleep 3; exec cat \"$TU_SQUEUE\"");
    snprintf(cmd, sizeof cmd, "--squeue-command=%s", slow);
    snprintf(archive, sizeof archive, "--archive-dir=%s/archive", b.dir);
    replay[1] = strdup(tu_box_path(&b, "archive"));
    step_expect(&b, 0, more, NULL, SA_EXIT_OK, "at once");
    step_expect(&b, 1, more, NULL, SA_EXIT_OK, "at once");
    /* step 2 is slow; a second run of the same step meanwhile is refused, and so is a replay */
    {
        const char *args[] = {NULL, cmd, archive, NULL};
        char at_opt[64];
        snprintf(at_opt, sizeof at_opt, "--at=%.31s", at[2]);
        args[0] = at_opt;
        pid = tu_box_start(&b, args, step_env(&e, 2, NULL));
    }
    usleep(1000 * 1000);
    rc = step(&b, 2, more, NULL, &err);
    if (rc != SA_EXIT_LOCKED)
        fail_msg("a second run at once: exit %d, expected 7: %s", rc, err);
    free(err);
    rc = tu_box_run(&b, replay, NULL, &err);
    if (rc != SA_EXIT_LOCKED)
        fail_msg("replay during a timer run: exit %d, expected 7: %s", rc, err);
    free(err);
    total.faults += 2;
    assert_int_equal(tu_wait(pid), SA_EXIT_OK);
    for (int k = 3; k < STEPS; k++)
        step_expect(&b, k, more, NULL, SA_EXIT_OK, "at once");
    compare(&b, false, "nnnnn", true, "a second run and a replay during a timer run");
    /* the refused replay, run again now: the same archive (replays are idempotent) */
    rc = tu_box_run(&b, replay, NULL, &err);
    if (rc != SA_EXIT_OK)
        fail_msg("replay: exit %d: %s", rc, err);
    free(err);
    compare(&b, false, "nnnnn", false, "replay of the archive afterwards");
    free((char *)replay[1]);
    box_done(&b, false);
}

/*
 * One writer's series, files mode: every squeue snapshot (squeue true) or every sacct
 * window. Returns 0, or the first failing exit status (said on stdout).
 */
static int series(const tu_box_t *b, bool squeue)
{
    for (int k = squeue ? 0 : 1; k < STEPS; k++) {
        char at_opt[64], f[400], *err = NULL;
        const char *args[] = {at_opt, squeue ? "--squeue" : "--sacct", f, NULL};
        int rc;
        snprintf(at_opt, sizeof at_opt, "--at=%.31s", at[k]);
        if (squeue)
            snprintf(f, sizeof f, "%s/clean/squeue-%03d.json", data, k);
        else
            snprintf(f, sizeof f, "%s/cum-%d.txt", data, k);
        rc = tu_box_run(b, args, NULL, &err);
        if (rc != 0) {
            printf("%s series, step %d: exit %d: %s\n", squeue ? "squeue" : "sacct", k, rc, err);
            fflush(stdout);
        }
        free(err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Runs a series in a child process (the exit status says how it went). */
static pid_t series_async(const tu_box_t *b, bool squeue)
{
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0)
        _exit(series(b, squeue) ? 1 : 0);
    return pid;
}

/*
 * Two writers on two lock directories (two hosts), the same archive, at the same time:
 * one ingests every squeue snapshot, the other every sacct window. Where the two serial
 * orders give the same document the result must be that; where they do not (the merge
 * depends on the order there), it must be one of them. Anything else is a lost update.
 */
static void test_two_writers(void **state)
{
    tu_box_t w1, w2, r1, r2;
    json_t *want_a, *want_b, *got;
    size_t agree = 0, ordered = 0, conflicts;
    pid_t p1, p2;
    int rc1, rc2;
    (void)state;

    box_new(&r1, "order-a", false);
    box_new(&r2, "order-b", false);
    assert_int_equal(series(&r1, true), 0);
    assert_int_equal(series(&r1, false), 0);
    assert_int_equal(series(&r2, false), 0);
    assert_int_equal(series(&r2, true), 0);
    want_a = tu_archive_docs(client, r1.db, "jobs");
    want_b = tu_archive_docs(client, r2.db, "jobs");
    box_new(&w1, "writer1", false);
    tu_box_init(&w2, "writer2", uri, w1.db);
    p1 = series_async(&w1, true);
    p2 = series_async(&w2, false);
    rc1 = tu_wait(p1);
    rc2 = tu_wait(p2);
    assert_int_equal(rc1, 0);
    assert_int_equal(rc2, 0);
    total.faults++;
    got = tu_archive_docs(client, w1.db, "jobs");
    assert_int_equal(json_array_size(got), json_array_size(want_a));
    for (size_t i = 0; i < json_array_size(got); i++) {
        json_t *g = json_array_get(got, i), *a = json_array_get(want_a, i), *b = json_array_get(want_b, i);
        bool same = json_equal(a, b);
        if (same ? json_equal(g, a) : json_equal(g, a) || json_equal(g, b)) {
            agree += same;
            ordered += !same;
            continue;
        }
        {
            json_t *all = json_pack("[O, O, O]", a, b, g);
            tu_json_to_file(all, "/tmp/sa-faults-two-writers.json");
            json_decref(all);
        }
        fail_msg("two writers: %s: an update was lost (both serial orders, then the result, in "
                 "/tmp/sa-faults-two-writers.json)", json_string_value(json_object_get(g, "_id")));
    }
    total.cmp.compared += agree + ordered;
    rollups_ok(&w1, "two writers");
    conflicts = (size_t)tu_sum(client, w1.db, "ingest_runs", "counts.conflicts");
    total.conflicts += conflicts;
    printf("  %-58s %zu documents equal, %zu order-dependent ones equal to one order; %zu conflicts retried\n",
           "two writers on two lock directories at once", agree, ordered, conflicts);
    json_decref(want_a);
    json_decref(want_b);
    json_decref(got);
    tu_box_destroy(&w2);
    box_done(&w1, false);
    box_done(&r1, false);
    box_done(&r2, false);
}

/* ---- the spool on a full file system --------------------------------------------------------- */

static void test_spool_full(void **state)
{
    tu_box_t b;
    char *err = NULL, spool[400];
    int rc;
    (void)state;

    box_new(&b, "spoolfull", false);
    snprintf(spool, sizeof spool, "%s/spool", b.dir);
    mkdir(spool, 0750);
    if (geteuid() != 0 || mount("tmpfs", spool, "tmpfs", 0, "size=800k,mode=0750") != 0) {
        printf("SKIP: cannot mount a small tmpfs on the spool (%s); CI runs the suite as root\n",
               geteuid() != 0 ? "not root" : strerror(errno));
        box_done(&b, false);
        skip();
    }
    step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, "spool full");
    /* MongoDB gone: step 1 is spooled (some 540 KB), step 2 does not fit */
    snprintf(b.uri, sizeof b.uri, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300");
    step_expect(&b, 1, NULL, NULL, SA_EXIT_SPOOLED, "spool full");
    rc = step(&b, 2, NULL, NULL, &err);
    if (rc != SA_EXIT_SPOOL)
        fail_msg("the spool on a full file system: exit %d, expected 10: %s", rc, err);
    free(err);
    total.faults++;
    assert_int_equal(spooled(&b), 1); /* step 1's snapshot, whole */
    assert_int_equal(access(tu_box_path(&b, "lock/demo.sacct-watermark"), F_OK), 0);
    /* MongoDB back: step 3's capture still does not fit, but step 1's snapshot lands; step 4 is whole */
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    step_expect(&b, 3, NULL, NULL, SA_EXIT_SPOOL, "spool full");
    step_expect(&b, 4, NULL, NULL, SA_EXIT_OK, "spool full");
    assert_int_equal(spooled(&b), 0);
    umount(spool);
    compare(&b, false, "ns--n", true, "spool on a full tmpfs (steps 2 and 3 refused, exit 10)");
    box_done(&b, false);
}

/* ---- the time series corrupt, then read-only ------------------------------------------------- */

static void test_sqlite_faults(void **state)
{
    tu_box_t b;
    char mnt[400], opt[500];
    const char *more[] = {opt, NULL};
    bool mounted = false;
    (void)state;

    /* corrupt: exit 6, the snapshot waits; a new file then takes it (the older history is gone with the file) */
    box_new(&b, "corrupt", false);
    step_expect(&b, 0, NULL, NULL, SA_EXIT_OK, "corrupt");
    step_expect(&b, 1, NULL, NULL, SA_EXIT_OK, "corrupt");
    tu_write_text(tu_box_path(&b, "ts.db"), "this is not a database, this is garbage, garbage");
    unlink(tu_box_path(&b, "ts.db-wal"));
    unlink(tu_box_path(&b, "ts.db-shm"));
    step_expect(&b, 2, NULL, NULL, SA_EXIT_SQLITE, "corrupt");
    total.faults++;
    assert_int_equal(spooled(&b), 1);
    unlink(tu_box_path(&b, "ts.db"));
    for (int k = 3; k < STEPS; k++)
        step_expect(&b, k, NULL, NULL, SA_EXIT_OK, "corrupt");
    compare(&b, false, "nnnnn", false, "time series corrupt at step 2 (replaced)");
    box_done(&b, false);

    /* read-only: exit 6, the snapshot waits; writable again, everything lands in order */
    box_new(&b, "readonly", false);
    snprintf(mnt, sizeof mnt, "%s/ts", b.dir);
    mkdir(mnt, 0750);
    snprintf(opt, sizeof opt, "--sqlite=%s/ts.db", mnt);
    if (geteuid() == 0) {
        mounted = mount("tmpfs", mnt, "tmpfs", 0, "size=8m,mode=0750") == 0;
        if (!mounted) {
            printf("SKIP: cannot mount a tmpfs (%s): root writes a read-only file anyway\n", strerror(errno));
            box_done(&b, false);
            skip();
        }
    }
    step_expect(&b, 0, more, NULL, SA_EXIT_OK, "read-only");
    step_expect(&b, 1, more, NULL, SA_EXIT_OK, "read-only");
    if (mounted)
        assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0);
    else
        chmod(mnt, 0550), chmod(tu_box_path(&b, "ts/ts.db"), 0440);
    step_expect(&b, 2, more, NULL, SA_EXIT_SQLITE, "read-only");
    total.faults++;
    assert_int_equal(spooled(&b), 1);
    if (mounted)
        assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT, "size=8m,mode=0750"), 0);
    else
        chmod(mnt, 0750), chmod(tu_box_path(&b, "ts/ts.db"), 0640);
    for (int k = 3; k < STEPS; k++)
        step_expect(&b, k, more, NULL, SA_EXIT_OK, "read-only");
    {
        /* the reference's time series lives at ts.db: compare this one's by path */
        const ref_t *r = reference("nnnnn");
        char *ts = tu_tsdb_dump(tu_box_path(&b, "ts/ts.db"));
        if (!ts || strcmp(ts, r->ts) != 0)
            fail_msg("read-only time series: it differs from an uninterrupted run's");
        free(ts);
    }
    compare(&b, false, "nnnnn", false, "time series read-only at step 2");
    if (mounted)
        umount(mnt);
    box_done(&b, false);
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int setup(void **state)
{
    char out[400];
    char *argv[] = {(char *)"/usr/bin/env", (char *)"python3", (char *)GEN_TOOL, (char *)"--version",
                    (char *)"v0.0.40", (char *)"--nodes", (char *)"24", (char *)"--jobs", (char *)"60",
                    (char *)"--finished", (char *)"6", (char *)"--cpu-cores", (char *)"8", (char *)"--seed",
                    (char *)"3", (char *)"--at", (char *)"2026-10-15T12:00:00Z", (char *)"--evolve", (char *)"5",
                    (char *)"--churn", (char *)"30", (char *)"--out", out, (char *)"-q", NULL};
    (void)state;
    snprintf(out, sizeof out, "%s", data);
    must_run(argv);
    read_index();
    prepare_inputs();
    have_server = tu_server_start(&server, server_why, sizeof server_why);
    if (!have_server)
        printf("note: no server of the test's own (%s): the cases that stop or kill MongoDB are skipped\n", server_why);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (have_server)
        tu_server_destroy(&server);
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        json_decref(refs[i].docs);
        free(refs[i].ts);
    }
    tu_rm_rf(data);
    printf("fault matrix: %d faults injected, %zu documents compared, lost %zu, duplicated %zu (other differences %zu; "
           "%zu write conflicts retried; rollups equal to their documents in %zu archives)\n",
           total.faults, total.cmp.compared, total.cmp.lost, total.cmp.duplicated, total.cmp.differ, total.conflicts,
           total.rollups_checked);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mongo_stopped),
        cmocka_unit_test(test_mongo_killed_mid_bulk),
        cmocka_unit_test(test_kill_points),
        cmocka_unit_test(test_kill_supersede),
        cmocka_unit_test(test_late_write),
        cmocka_unit_test(test_bad_commands),
        cmocka_unit_test(test_two_runs_at_once),
        cmocka_unit_test(test_two_writers),
        cmocka_unit_test(test_spool_full),
        cmocka_unit_test(test_sqlite_faults),
        cmocka_unit_test(test_prometheus_faults),
    };
    int rc;
    char *out = NULL, *err = NULL;
    char *py[] = {(char *)"/usr/bin/env", (char *)"python3", (char *)"--version", NULL};

    if (tu_run(py, NULL, &out, &err) != 0) {
        printf("SKIP test_faults: python3 is not installed (tools/gen-cluster writes the evolving cluster the "
               "matrix runs on)\n");
        free(out);
        free(err);
        return 77;
    }
    free(out);
    free(err);
    client = tu_mongo_client("faults", &db_base);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    snprintf(data, sizeof data, "/tmp/sa-faults-data-XXXXXX");
    if (!mkdtemp(data))
        return 1;
    if (getenv("SA_TEST_FILTER")) /* one case: SA_TEST_FILTER=test_name */
        cmocka_set_test_filter(getenv("SA_TEST_FILTER"));
    rc = tu_run_group_tests("faults", tests, setup, teardown);
    mongoc_client_destroy(client);
    free(db_base);
    return rc;
}
