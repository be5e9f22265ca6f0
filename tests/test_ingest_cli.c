/*
 * test_ingest_cli.c - slurm-ingest as the timer runs it, against the real test
 * server, with fake Slurm commands (scripts printing real captures): the default
 * mode, the sacct watermark, spool and replay with no loss and no duplicate, lock
 * contention, a hung command killed at the timeout, replay of an archive giving the
 * same documents as the live runs, credentials kept out of messages.
 */
#include "testutil.h"
#include "tu_parse.h"
#include "tu_archive.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

#include "sa_exit.h"
#include "sa_time.h"

static mongoc_client_t *client;
static char *db_name;
static const char *uri;
static char tmp[256];

/* Writes an executable script. */
static void script(const char *name, const char *body)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/bin/%s", tmp, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

/*
 * A real 22.05 capture: the shared sample rel, else our own capture of the same scenario
 * on the project's Slurm 22.05 test cluster (fixtures/slurm-22.05); a static buffer.
 */
static const char *capture(const char *rel)
{
    static const char *const own[][2] = {
        {"sinfo/local-cli-v0038_22.05.8_allocated-drain-gres-used-idx.json", "slurm-22.05/sinfo-B.json"},
        {"squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json", "slurm-22.05/squeue-A.json"},
        {"squeue/local-cli-v0038_22.05.8_B-gpu-running-gres-detail.json", "slurm-22.05/squeue-B.json"},
        {"squeue/local-cli-v0038_22.05.8_C-requeued-timeout-cancelled-depneversatisfied.json",
         "slurm-22.05/squeue-C.json"},
        {"squeue/local-cli-v0038_22.05.8_E-array-meta-record-1-10pct3-held_filter-j-ignored.json",
         "slurm-22.05/squeue-E.json"},
        {"sacct-parsable/local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", "slurm-22.05/sacct-P-D.txt"},
    };
    const char *fixture = NULL; /* not mapped: without ../shared the program skips, saying why */

    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (strcmp(own[i][0], rel) == 0)
            fixture = own[i][1];
    }
    return tu_sample_or_fixture(rel, fixture);
}

/* Fake Slurm: prints real 22.05 captures; sacct logs its arguments. */
static void fake_slurm(void)
{
    char body[2048];
    snprintf(body, sizeof body, "echo sinfo >> '%s/calls'\ncat '%s'", tmp,
             capture("sinfo/local-cli-v0038_22.05.8_allocated-drain-gres-used-idx.json"));
    script("sinfo", body);
    snprintf(body, sizeof body, "cat '%s'",
             capture("squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json"));
    script("squeue", body);
    /* sacct -P with the delimiter slurm-ingest asks for (the capture used '|') */
    snprintf(body, sizeof body, "echo \"$@\" >> '%s/sacct.args'\ntr '|' '\\037' < '%s'", tmp,
             capture("sacct-parsable/local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt"));
    script("sacct", body);
    script("sdiag", "echo 'sdiag: unrecognized option --json' >&2; exit 1");
    script("hang", "sleep 600 & sleep 600");
    script("slowsqueue", "sleep 3; exec squeue \"$@\"");
    snprintf(body, sizeof body, "printf '{\"meta\":{},\"errors\":[{\"error\":\"Unable to contact slurm controller (connect failure)\",\"errno\":1}],\"jobs\":[]}'");
    script("brokensqueue", body);
    script("grumblingsinfo", "echo 'sinfo: error: slurm_load_partitions: Zero Bytes were transmitted' >&2; exit 0");
}

/* Runs slurm-ingest with the common options plus extra ones; returns the exit code. */
static int ingest(const char *db, const char *mongo_uri, const char *const extra[], char **err_out)
{
    char *argv[48], *out, *err, opt_db[128], opt_lock[300], opt_spool[300], opt_sqlite[300], opt_cmds[4][300];
    char env_path[600], env_uri[600];
    char *env[] = {env_path, env_uri, NULL};
    int argc = 0, rc;

    snprintf(opt_db, sizeof opt_db, "--db=%s", db);
    snprintf(opt_lock, sizeof opt_lock, "--lock-dir=%s/lock", tmp);
    snprintf(opt_spool, sizeof opt_spool, "--spool-dir=%s/spool", tmp);
    snprintf(opt_sqlite, sizeof opt_sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(opt_cmds[0], sizeof opt_cmds[0], "--sinfo-command=%s/bin/sinfo", tmp);
    snprintf(opt_cmds[1], sizeof opt_cmds[1], "--squeue-command=%s/bin/squeue", tmp);
    snprintf(opt_cmds[2], sizeof opt_cmds[2], "--sacct-command=%s/bin/sacct", tmp);
    snprintf(opt_cmds[3], sizeof opt_cmds[3], "--sdiag-command=%s/bin/sdiag", tmp);
    snprintf(env_path, sizeof env_path, "PATH=%s/bin:/usr/bin:/bin", tmp);
    snprintf(env_uri, sizeof env_uri, "SLURM_INGEST_MONGO_URI=%s", mongo_uri);
    argv[argc++] = (char *)SA_INGEST_BIN;
    argv[argc++] = (char *)"--cluster=demo";
    argv[argc++] = opt_db;
    argv[argc++] = opt_lock;
    argv[argc++] = opt_spool;
    argv[argc++] = opt_sqlite;
    for (int i = 0; i < 4; i++)
        argv[argc++] = opt_cmds[i];
    for (int i = 0; extra && extra[i]; i++)
        argv[argc++] = (char *)extra[i];
    argv[argc] = NULL;
    rc = tu_run(argv, env, &out, &err);
    if (err_out)
        *err_out = err;
    else
        free(err);
    free(out);
    return rc;
}

static int64_t count_jobs(const char *db, const char *cluster)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "jobs");
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bson_error_t berr;
    int64_t n = mongoc_collection_count_documents(c, filter, NULL, NULL, NULL, &berr);
    bson_destroy(filter);
    mongoc_collection_destroy(c);
    return n;
}

/* Every job document of a database, sorted by job_id, as one JSON text (without _id). */
static char *all_jobs(const char *db)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "jobs");
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW("sort", "{", "job_id", BCON_INT32(1), "}", "projection", "{", "_id", BCON_INT32(0), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, &filter, opts, NULL);
    const bson_t *doc;
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    while (mongoc_cursor_next(cur, &doc)) {
        /* key order is not part of a document's meaning: compare with sorted keys */
        char *text = bson_as_canonical_extended_json(doc, NULL);
        json_t *j = json_loads(text, 0, NULL);
        char *s = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(1));
        size_t n = strlen(s);
        json_decref(j);
        bson_free(text);
        while (len + n + 2 > cap)
            out = realloc(out, cap *= 2);
        memcpy(out + len, s, n);
        len += n;
        out[len++] = '\n';
        out[len] = '\0';
        free(s);
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(opts);
    mongoc_collection_destroy(c);
    return out;
}

/*
 * The jobs a default-mode run over the fake Slurm archives: the distinct job ids of the
 * squeue capture's and the sacct capture's records, as the parsers read them.
 */
static size_t expected_jobs(void)
{
    static const char *const rel[] = {
        "squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json",
        "sacct-parsable/local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt",
    };
    int64_t ids[4096];
    size_t n = 0, out = 0;

    for (int f = 0; f < 2; f++) {
        tu_parsed_t p;
        sa_error_t err;
        if (!tu_parse_file(capture(rel[f]), NULL, &p, &err))
            fail_msg("%s: %s", rel[f], err.message);
        for (size_t i = 0; i < p.njobs && n < 4096; i++)
            ids[n++] = p.jobs[i]->job_id;
        tu_parsed_clear(&p);
    }
    for (size_t i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < i && ids[k] != ids[i]; k++)
            ;
        out += k == i;
    }
    return out;
}

static void test_default_mode_and_watermark(void **state)
{
    const char *extra[] = {"--at=2026-11-25T21:45:00Z", NULL};
    char db[96], path[400], *err, *args;
    struct stat st;
    (void)state;

    snprintf(db, sizeof db, "%s_default", db_name);
    assert_int_equal(ingest(db, uri, extra, &err), SA_EXIT_OK);
    /* squeue's jobs and sacct's (19 in the shared capture: the same ids, and none else) */
    assert_int_equal(count_jobs(db, "demo"), expected_jobs());
    /* sdiag --json is missing in 22.05: said, not fatal */
    assert_non_null(strstr(err, "no scheduler statistics"));
    free(err);
    snprintf(path, sizeof path, "%s/ts.db", tmp);
    assert_int_equal(stat(path, &st), 0);
    /* first run: sacct from a day back; the watermark is the run's time */
    snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
    args = tu_read_file(path, NULL);
    assert_int_equal(atoll(args), 1795643100);
    free(args);
    snprintf(path, sizeof path, "%s/sacct.args", tmp);
    args = tu_read_file(path, NULL);
    assert_non_null(strstr(args, "--allusers --duplicates --parsable2"));
    assert_non_null(strstr(args, "--starttime=2026-11-24T21:45:00 --endtime=2026-11-25T21:45:00"));
    free(args);
    unlink(path);
    /* next run 5 minutes later: from the watermark minus the 1 h overlap */
    {
        const char *extra2[] = {"--at=2026-11-25T21:50:00Z", NULL};
        assert_int_equal(ingest(db, uri, extra2, NULL), SA_EXIT_OK);
    }
    args = tu_read_file(path, NULL);
    assert_non_null(strstr(args, "--starttime=2026-11-25T20:45:00 --endtime=2026-11-25T21:50:00"));
    free(args);
    unlink(path);
    /* ingest_runs has both runs */
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db, "ingest_runs");
        bson_t *f = BCON_NEW("cluster", BCON_UTF8("demo"), "ok", BCON_BOOL(true));
        bson_error_t berr;
        assert_int_equal(mongoc_collection_count_documents(c, f, NULL, NULL, NULL, &berr), 2);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
    unlink(path);
}

/*
 * A job the cache does not know whose document is in the archive (a new cache, or an id
 * Slurm reused) is inserted, finds its _id taken, and is read, merged and replaced: that
 * is counted as insert_rereads, never as a write conflict (issue 22, item 20; conflicts
 * are writes that found a document changed since it was read).
 */
static void test_insert_rereads_not_conflicts(void **state)
{
    const char *first[] = {"--at=2026-11-25T21:45:00Z", NULL};
    const char *second[] = {"--at=2026-11-25T21:50:00Z", NULL};
    char db[96], path[400];
    int rc;
    (void)state;

    snprintf(db, sizeof db, "%s_rereads", db_name);
    rc = ingest(db, uri, first, NULL);
    snprintf(path, sizeof path, "%s/sacct.args", tmp);
    unlink(path);
    assert_int_equal(rc, SA_EXIT_OK);
    assert_int_equal(tu_sum(client, db, "ingest_runs", "counts.insert_rereads"), 0);
    /* a new machine: the cache is gone; the rebuild brings back the live jobs only */
    snprintf(path, sizeof path, "%s/lock/demo.jobcache.sqlite", tmp);
    assert_int_equal(unlink(path), 0);
    rc = ingest(db, uri, second, NULL);
    /* the next tests start without this one's watermark, whatever happens below */
    snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
    unlink(path);
    snprintf(path, sizeof path, "%s/sacct.args", tmp);
    unlink(path);
    assert_int_equal(rc, SA_EXIT_OK);
    assert_int_equal(tu_count(client, db, "ingest_runs", NULL), 2);
    /* the finished jobs of sacct's window were inserted and found there: no writer raced this one */
    assert_int_equal(tu_sum(client, db, "ingest_runs", "counts.conflicts"), 0);
    assert_true(tu_sum(client, db, "ingest_runs", "counts.insert_rereads") > 0);
}

static void test_backfill_windows(void **state)
{
    const char *extra[] = {"--at=2026-11-25T21:45:00Z", "--since=2026-11-21T21:45:00", "--backfill-window=1d", NULL};
    char db[96], path[400], *args, *p;
    int windows = 0;
    (void)state;

    snprintf(db, sizeof db, "%s_backfill", db_name);
    assert_int_equal(ingest(db, uri, extra, NULL), SA_EXIT_OK);
    snprintf(path, sizeof path, "%s/sacct.args", tmp);
    args = tu_read_file(path, NULL);
    for (p = args; (p = strstr(p, "--starttime")); p++)
        windows++;
    assert_int_equal(windows, 4); /* four days, one window each */
    assert_non_null(strstr(args, "--starttime=2026-11-21T21:45:00 --endtime=2026-11-22T21:45:00"));
    assert_non_null(strstr(args, "--starttime=2026-11-24T21:45:00 --endtime=2026-11-25T21:45:00"));
    free(args);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
    unlink(path);
}

/*
 * --since takes sacct's dates (MM/DD/YY here) and is checked before any Slurm command
 * runs: a bad one is one line and exit 2, with no command run and nothing spooled.
 */
static void test_since_forms(void **state)
{
    const char *good[] = {"--at=2026-11-25T21:45:00Z", "--since=11/24/26", "--backfill-window=1d", NULL};
    const char *bad[] = {"--at=2026-11-25T21:45:00Z", "--since=2025-13-01", NULL};
    char db[96], path[400], *args, *err, *p;
    int windows = 0;
    (void)state;

    snprintf(db, sizeof db, "%s_since", db_name);
    snprintf(path, sizeof path, "%s/calls", tmp);
    unlink(path);
    assert_int_equal(ingest(db, uri, bad, &err), SA_EXIT_USAGE);
    assert_non_null(strstr(err, "--since: invalid time '2025-13-01'"));
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
    free(err);
    assert_int_equal(access(path, F_OK), -1); /* sinfo never ran */
    snprintf(path, sizeof path, "%s/sacct.args", tmp);
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(ingest(db, uri, good, NULL), SA_EXIT_OK);
    args = tu_read_file(path, NULL);
    for (p = args; (p = strstr(p, "--starttime")); p++)
        windows++;
    assert_int_equal(windows, 2); /* from 11-24 00:00: a day, then to --at */
    assert_non_null(strstr(args, "--starttime=2026-11-24T00:00:00 --endtime=2026-11-25T00:00:00"));
    free(args);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
    unlink(path);
}

static void test_spool_and_replay(void **state)
{
    const char *squeue_file[] = {"--at=2026-11-25T21:50:00Z", "--squeue", NULL, NULL};
    char db[96], spool[400], bad_uri[256], *err;
    (void)state;

    /* capture() returns a static buffer: keep copies */
    squeue_file[2] = strdup(capture("squeue/local-cli-v0038_22.05.8_C-requeued-timeout-cancelled-depneversatisfied.json"));
    snprintf(db, sizeof db, "%s_spool", db_name);
    snprintf(bad_uri, sizeof bad_uri, "mongodb://ingest:s3cret-pw@127.0.0.1:1/?serverSelectionTimeoutMS=300");
    assert_int_equal(ingest(db, bad_uri, squeue_file, &err), SA_EXIT_SPOOLED);
    assert_non_null(strstr(err, "spooled"));
    assert_null(strstr(err, "s3cret")); /* credentials never in messages */
    free(err);
    snprintf(spool, sizeof spool, "%s/spool/demo/20261125T215000Z/squeue.json", tmp);
    assert_int_equal(access(spool, R_OK), 0);
    assert_int_equal(count_jobs(db, "demo"), 0);
    /* the next run replays the spool first, then ingests its own snapshot */
    {
        const char *next[] = {"--at=2026-11-25T21:55:00Z", "--squeue", NULL, NULL};
        next[2] = strdup(capture("squeue/local-cli-v0038_22.05.8_E-array-meta-record-1-10pct3-held_filter-j-ignored.json"));
        assert_int_equal(ingest(db, uri, next, NULL), SA_EXIT_OK);
        assert_int_equal(access(spool, R_OK), -1);
        /* the same documents as ingesting both snapshots directly, in order */
        {
            char db2[96], *a, *b;
            snprintf(db2, sizeof db2, "%s_direct", db_name);
            assert_int_equal(ingest(db2, uri, squeue_file, NULL), SA_EXIT_OK);
            assert_int_equal(ingest(db2, uri, next, NULL), SA_EXIT_OK);
            a = all_jobs(db);
            b = all_jobs(db2);
            if (strcmp(a, b) != 0) {
                char pa[400], pb[400];
                FILE *f;
                snprintf(pa, sizeof pa, "/tmp/sa-spool-replayed.txt");
                snprintf(pb, sizeof pb, "/tmp/sa-spool-direct.txt");
                if ((f = fopen(pa, "w"))) { fputs(a, f); fclose(f); }
                if ((f = fopen(pb, "w"))) { fputs(b, f); fclose(f); }
                fail_msg("documents differ between spool+replay and direct ingest: see %s and %s", pa, pb);
            }
            free(a);
            free(b);
            /* and again: nothing changes, nothing duplicates */
            assert_int_equal(ingest(db, uri, next, NULL), SA_EXIT_OK);
            assert_int_equal(count_jobs(db, "demo"), count_jobs(db2, "demo"));
        }
        free((char *)next[2]);
    }
    free((char *)squeue_file[2]);
}

static void test_lock_contention(void **state)
{
    char db[96], slow[300], *err;
    const char *extra[] = {slow, "--at=2026-11-25T21:45:00Z", "--no-mongo", NULL};
    pid_t pid;
    int status;
    (void)state;

    snprintf(db, sizeof db, "%s_lock", db_name);
    snprintf(slow, sizeof slow, "--squeue-command=%s/bin/slowsqueue", tmp);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(ingest(db, uri, extra, NULL));
    usleep(1000 * 1000); /* the first run now holds the lock, waiting for its squeue */
    {
        const char *quick[] = {"--at=2026-11-25T21:46:00Z", "--no-mongo", NULL};
        assert_int_equal(ingest(db, uri, quick, &err), SA_EXIT_LOCKED);
        assert_non_null(strstr(err, "another slurm-ingest"));
        free(err);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(WEXITSTATUS(status), SA_EXIT_OK);
    {
        char path[400];
        snprintf(path, sizeof path, "%s/lock/demo.sacct-watermark", tmp);
        unlink(path);
    }
}

static void test_hung_command(void **state)
{
    char db[96], hang[300], *err;
    const char *extra[] = {hang, "--timeout=1s", "--at=2026-11-25T21:45:00Z", NULL};
    struct timespec t0, t1;
    (void)state;

    snprintf(db, sizeof db, "%s_hang", db_name);
    snprintf(hang, sizeof hang, "--squeue-command=%s/bin/hang", tmp);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(ingest(db, uri, extra, &err), SA_EXIT_SLURM);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(strstr(err, "timed out"));
    assert_true(t1.tv_sec - t0.tv_sec < 10);
    assert_int_equal(count_jobs(db, "demo"), 0); /* nothing half-written */
    free(err);
}

static void test_slurm_errors(void **state)
{
    char db[96], broken[300], *err;
    const char *extra[] = {broken, "--at=2026-11-25T21:45:00Z", NULL};
    (void)state;

    snprintf(db, sizeof db, "%s_broken", db_name);
    snprintf(broken, sizeof broken, "--squeue-command=%s/bin/brokensqueue", tmp);
    assert_int_equal(ingest(db, uri, extra, &err), SA_EXIT_SLURM);
    assert_non_null(strstr(err, "Unable to contact slurm controller"));
    free(err);
    /* an error on stderr with exit status 0 is a failure too */
    snprintf(broken, sizeof broken, "--sinfo-command=%s/bin/grumblingsinfo", tmp);
    assert_int_equal(ingest(db, uri, extra, &err), SA_EXIT_SLURM);
    assert_non_null(strstr(err, "grumblingsinfo printed an error: sinfo: error: slurm_load_partitions"));
    free(err);
}

static void test_replay_archive(void **state)
{
    char live[96], replayed[96], archive[300], *a, *b;
    static const char *snaps[][2] = {
        {"2026-11-25T21:40:00Z", "squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json"},
        {"2026-11-25T21:41:00Z", "squeue/local-cli-v0038_22.05.8_B-gpu-running-gres-detail.json"},
        {"2026-11-25T21:50:00Z", "squeue/local-cli-v0038_22.05.8_C-requeued-timeout-cancelled-depneversatisfied.json"},
    };
    (void)state;

    snprintf(live, sizeof live, "%s_live", db_name);
    snprintf(replayed, sizeof replayed, "%s_replayed", db_name);
    snprintf(archive, sizeof archive, "--archive-dir=%s/archive", tmp);
    for (size_t i = 0; i < 3; i++) {
        char at[64];
        const char *extra[] = {at, archive, "--squeue", NULL, NULL};
        snprintf(at, sizeof at, "--at=%s", snaps[i][0]);
        extra[3] = capture(snaps[i][1]);
        assert_int_equal(ingest(live, uri, extra, NULL), SA_EXIT_OK);
    }
    {
        char dir[300];
        const char *extra[] = {"replay", dir, NULL};
        snprintf(dir, sizeof dir, "%s/archive", tmp);
        assert_int_equal(ingest(replayed, uri, extra, NULL), SA_EXIT_OK);
    }
    a = all_jobs(live);
    b = all_jobs(replayed);
    assert_true(strlen(a) > 1000);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

/* ---- replays of grouped sinfo captures (issue 22, item 2) -------------------------------- */

/* Runs a box's slurm-ingest with args; fails, printing its stderr, on another exit status. */
static void box_expect(const tu_box_t *b, const char *const args[], const char *const env[], int want)
{
    char *err = NULL;
    int rc = tu_box_run(b, args, env, &err);
    if (rc != want)
        fail_msg("%s %s in %s: exit %d, expected %d; stderr: %.2000s", b->bin, args[0], b->dir, rc, want,
                 err ? err : "");
    free(err);
}

/* One integer from the time series at path. */
static long long ts_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    long long v = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s: %s", path, sql, sqlite3_errmsg(db));
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* Fails unless box b holds the documents and the time series of the reference box ref. */
static void expect_same_archive(const tu_box_t *ref, const tu_box_t *b, const char *what)
{
    json_t *want = tu_archive_docs(client, ref->db, "jobs"), *got = tu_archive_docs(client, b->db, "jobs");
    char *ts_want = tu_tsdb_dump(tu_box_path(ref, "ts.db")), *ts_got;
    tu_cmp_t cmp;
    bool same;

    memset(&cmp, 0, sizeof cmp);
    assert_true(json_array_size(want) > 100);
    same = tu_archive_compare(want, got, &cmp);
    json_decref(want);
    json_decref(got);
    if (!same)
        fail_msg("%s: the job documents differ from one clean replay's: %zu lost, %zu duplicated, %zu differ "
                 "(first: %s)", what, cmp.lost, cmp.duplicated, cmp.differ, cmp.first);
    ts_got = tu_tsdb_dump(tu_box_path(b, "ts.db"));
    assert_non_null(ts_want);
    assert_non_null(ts_got);
    if (strcmp(ts_want, ts_got) != 0) {
        size_t i = 0, line = 1;
        for (; ts_want[i] && ts_want[i] == ts_got[i]; i++)
            line += ts_want[i] == '\n';
        fail_msg("%s: the time series differs from one clean replay's from its line %zu (%.200s vs %.200s)", what,
                 line, ts_want + i, ts_got + i);
    }
    free(ts_want);
    free(ts_got);
}

/*
 * tools/gen-cluster --evolve 30 --grouped-sinfo --untyped-tres a100 --only none in
 * tmp/gen-evolve, made once; false (after printing why) when python3 is missing.
 */
static bool gen_evolve(char *gen, size_t len)
{
    static bool made;
    char *out = NULL, *err = NULL;
    int rc;

#if defined(__SANITIZE_ADDRESS__)
    /* about 150 slurm-ingest runs a case: 4 minutes under AddressSanitizer, which would take the suite past its
     * 20 minutes; the same code (a snapshot's carried GPUs, a run's type bounded by its observation) runs under
     * the sanitizers in test_tsdb's test_gpu_config_replayed and test_run_gpu_type_until */
    printf("SKIP: replays of 30 evolving snapshots run in the Release build only (AddressSanitizer: test_tsdb covers "
           "their code)\n");
    (void)made;
    (void)out;
    (void)err;
    (void)rc;
    (void)gen;
    (void)len;
    return false;
#endif
    snprintf(gen, len, "%s/gen-evolve", tmp);
    if (made)
        return true;
    if (access(SA_PYTHON3, X_OK) != 0) {
        printf("SKIP: no python3 (%s) to run tools/gen-cluster\n", SA_PYTHON3);
        return false;
    }
    {
        char *argv[] = {(char *)SA_PYTHON3, (char *)SA_SOURCE_DIR "/tools/gen-cluster", (char *)"--evolve",
                        (char *)"30", (char *)"--grouped-sinfo", (char *)"--untyped-tres", (char *)"a100",
                        (char *)"--only", (char *)"none", (char *)"-q", (char *)"--out", gen, NULL};
        rc = tu_run(argv, NULL, &out, &err);
        if (rc != 0)
            fail_msg("tools/gen-cluster: exit %d: %s", rc, err);
        free(out);
        free(err);
    }
    made = true;
    return true;
}

/*
 * The snapshots of gen/evolve (node states from the capture index.json names sinfo_key)
 * ingested live with --archive-dir, then replayed once (the reference: *clean), twice into
 * the same database, and (kill) killed halfway then run again: the job documents and the
 * time series of each equal the clean replay's, and `slurm-ingest rollup` finds the
 * rollups equal to the documents. The live box and the clean one are left to the caller (*live,
 * *clean) for its own checks; the others are removed.
 */
static void replay_idempotent(const char *gen, const char *sinfo_key, const char *tag, bool kill, tu_box_t *live,
                              tu_box_t *clean)
{
    char path[400], archive[300], archive_opt[320], name[64], db[160];
    const char *replay[] = {"replay", archive, NULL}, *rollup[] = {"rollup", NULL};
    tu_box_t twice, killed;
    json_t *index;
    json_error_t jerr;

    snprintf(path, sizeof path, "%s/evolve/index.json", gen);
    assert_non_null(index = json_load_file(path, 0, &jerr));
    assert_int_equal(json_array_size(index), 30);

    /* the live runs, each snapshot kept in an archive */
    snprintf(name, sizeof name, "%s-live", tag);
    snprintf(db, sizeof db, "%s_%s_live", db_name, tag);
    tu_box_init(live, name, uri, db);
    snprintf(archive, sizeof archive, "%s/archive", live->dir);
    snprintf(archive_opt, sizeof archive_opt, "--archive-dir=%s", archive);
    for (size_t i = 0; i < json_array_size(index); i++) {
        const json_t *snap = json_array_get(index, i);
        char at[64], files[3][400];
        const char *args[12] = {at, archive_opt, "--sinfo", files[0], "--squeue", files[1], NULL};
        snprintf(at, sizeof at, "--at=%s", json_string_value(json_object_get(snap, "at")));
        snprintf(files[0], sizeof files[0], "%s/evolve/%s", gen, json_string_value(json_object_get(snap, sinfo_key)));
        snprintf(files[1], sizeof files[1], "%s/evolve/%s", gen, json_string_value(json_object_get(snap, "squeue")));
        if (json_object_get(snap, "sacct")) {
            snprintf(files[2], sizeof files[2], "%s/evolve/%s", gen,
                     json_string_value(json_object_get(snap, "sacct")));
            args[6] = "--sacct";
            args[7] = files[2];
            args[8] = NULL;
        }
        box_expect(live, args, NULL, SA_EXIT_OK);
    }
    json_decref(index);

    /* one clean replay: the reference; the live runs landed each snapshot as it does */
    snprintf(name, sizeof name, "%s-clean", tag);
    snprintf(db, sizeof db, "%s_%s_clean", db_name, tag);
    tu_box_init(clean, name, uri, db);
    box_expect(clean, replay, NULL, SA_EXIT_OK);
    box_expect(clean, rollup, NULL, SA_EXIT_OK);
    expect_same_archive(clean, live, "the live runs");

    /* replayed twice into the same database and time series */
    snprintf(name, sizeof name, "%s-twice", tag);
    snprintf(db, sizeof db, "%s_%s_twice", db_name, tag);
    tu_box_init(&twice, name, uri, db);
    box_expect(&twice, replay, NULL, SA_EXIT_OK);
    box_expect(&twice, replay, NULL, SA_EXIT_OK);
    expect_same_archive(clean, &twice, "replayed twice");
    box_expect(&twice, rollup, NULL, SA_EXIT_OK);
    tu_mongo_drop(client, twice.db);
    tu_box_destroy(&twice);

    /* a replay killed halfway (after a bulk write of a snapshot's jobs), then run again */
    if (!kill)
        return;
    if (!SA_FAULTS_BIN[0]) {
        printf("note: built without SA_FAULT_INJECTION: the replay killed halfway is not checked\n");
        return;
    }
    snprintf(name, sizeof name, "%s-killed", tag);
    snprintf(db, sizeof db, "%s_%s_killed", db_name, tag);
    tu_box_init(&killed, name, uri, db);
    {
        const char *fault[] = {"SA_FAULT=mongo-write:40", NULL};
        long long landed;
        killed.bin = SA_FAULTS_BIN;
        box_expect(&killed, replay, fault, 128 + SIGKILL);
        killed.bin = SA_INGEST_BIN;
        landed = ts_int(tu_box_path(&killed, "ts.db"), "SELECT count(*) FROM snapshot");
        if (landed < 5 || landed > 25)
            fail_msg("the replay was killed after %lld of 30 snapshots, not halfway", landed);
    }
    box_expect(&killed, replay, NULL, SA_EXIT_OK);
    expect_same_archive(clean, &killed, "a replay killed halfway and run again");
    box_expect(&killed, rollup, NULL, SA_EXIT_OK);
    tu_mongo_drop(client, killed.db);
    tu_box_destroy(&killed);
}

static void boxes_done(tu_box_t *a, tu_box_t *b)
{
    tu_mongo_drop(client, a->db);
    tu_mongo_drop(client, b->db);
    tu_box_destroy(a);
    tu_box_destroy(b);
}

/*
 * Issue 22, item 2: an archive of grouped `sinfo --json` captures (nodes whose GPUs Slurm
 * does not say per node, untyped A100 TRES) replayed twice, or killed halfway and run
 * again, gives what one clean replay gives. A snapshot once took a node's configuration
 * (and an untyped run its GPU type) from the nearest per-node observation, during a second
 * replay a later one: GPU-hours carried went from 9.50 to 96.50 and 15 of 594 documents
 * changed runs[].gpu_type_source.
 */
static void test_replay_grouped_idempotent(void **state)
{
    char gen[300];
    tu_box_t live, clean;
    (void)state;

    if (!gen_evolve(gen, sizeof gen))
        skip();
    replay_idempotent(gen, "sinfo_grouped", "grp", true, &live, &clean);
    /* the case of the issue: carried and unknown GPU configurations, runs typed from their nodes and not */
    assert_true(ts_int(tu_box_path(&clean, "ts.db"), "SELECT count(*) FROM attr WHERE gpu_config = 1") > 0);
    assert_true(ts_int(tu_box_path(&clean, "ts.db"), "SELECT count(*) FROM attr WHERE gpu_config = 2") > 0);
    {
        long long node = tu_count(client, clean.db, "jobs", "{\"runs.gpu_type_source\": \"node\"}"),
                  carried = tu_count(client, clean.db, "jobs", "{\"runs.gpu_type_source\": \"carried\"}"),
                  unknown = tu_count(client, clean.db, "jobs", "{\"runs.gpu_type_source\": \"unknown\"}");
        printf("grouped: jobs with runs typed from their nodes %lld, carried %lld, unknown %lld\n", node, carried,
               unknown);
        assert_true(node + carried > 0 && unknown > 0);
    }
    boxes_done(&live, &clean);
}

/*
 * Issue 22, item 22: the clean replay again by slurm-ingest-faults with the limits of a
 * large queue made small (SA_IDS_SPILL=16: squeue's listing and each input's changed ids
 * past 16 go to the job cache's temporary table, and the vanished jobs are found there;
 * SA_KEEP_RECORDS=20: past 20 changed records, a second pass picks them out by that
 * table): the same documents and time series as the clean replay of the live runs'
 * archive, which held every set in memory (the evolve snapshots list about 200 jobs, 10 % changing state at each).
 */
static void replay_spilled(const char *gen, const tu_box_t *live, const tu_box_t *clean)
{
    const char *replay[] = {"replay", NULL, NULL}, *env[] = {"SA_IDS_SPILL=16", "SA_KEEP_RECORDS=20", NULL};
    char archive[300], db[160];
    tu_box_t spilled;

    if (!SA_FAULTS_BIN[0]) {
        printf("note: built without SA_FAULT_INJECTION: the replay with small memory limits is not checked\n");
        return;
    }
    snprintf(db, sizeof db, "%s_pn_spilled", db_name);
    tu_box_init(&spilled, "pn-spilled", uri, db);
    snprintf(archive, sizeof archive, "%s/archive", live->dir);
    replay[1] = archive;
    spilled.bin = SA_FAULTS_BIN;
    box_expect(&spilled, replay, env, SA_EXIT_OK);
    /* then a listing of every other job of the last snapshot, an hour later: the others vanish */
    {
        char path[400], half[400];
        const char *args[] = {"--at=2026-10-15T16:00:00Z", "--squeue", half, NULL};
        json_t *index, *sq, *jobs, *kept = json_array();
        json_error_t jerr;
        snprintf(path, sizeof path, "%s/evolve/index.json", gen);
        assert_non_null(index = json_load_file(path, 0, &jerr));
        snprintf(path, sizeof path, "%s/evolve/%s", gen,
                 json_string_value(json_object_get(json_array_get(index, json_array_size(index) - 1), "squeue")));
        json_decref(index);
        assert_non_null(sq = json_load_file(path, 0, &jerr));
        jobs = json_object_get(sq, "jobs");
        for (size_t i = 0; i < json_array_size(jobs); i += 2)
            json_array_append(kept, json_array_get(jobs, i));
        json_object_set_new(sq, "jobs", kept);
        snprintf(half, sizeof half, "%s/half-squeue.json", spilled.dir);
        assert_int_equal(json_dump_file(sq, half, JSON_COMPACT), 0);
        json_decref(sq);
        box_expect(clean, args, NULL, SA_EXIT_OK);
        box_expect(&spilled, args, env, SA_EXIT_OK);
    }
    /* the small limits were in force: second passes ran, and jobs were marked vanished from the cache's table */
    printf("spilled replay: second passes %lld, vanished %lld (clean replay: %lld)\n",
           tu_sum(client, spilled.db, "ingest_runs", "counts.second_passes"),
           tu_sum(client, spilled.db, "ingest_runs", "counts.jobs_vanished"),
           tu_sum(client, clean->db, "ingest_runs", "counts.jobs_vanished"));
    assert_true(tu_sum(client, spilled.db, "ingest_runs", "counts.second_passes") > 0);
    assert_true(tu_sum(client, spilled.db, "ingest_runs", "counts.jobs_vanished") > 0);
    assert_int_equal(tu_sum(client, spilled.db, "ingest_runs", "counts.jobs_vanished"),
                     tu_sum(client, clean->db, "ingest_runs", "counts.jobs_vanished"));
    assert_int_equal(tu_sum(client, clean->db, "ingest_runs", "counts.second_passes"), 0);
    expect_same_archive(clean, &spilled, "a replay with the limits of a large queue made small");
    tu_mongo_drop(client, spilled.db);
    tu_box_destroy(&spilled);
}

/*
 * Issue 22, item 21: a first ingest of a snapshot whose squeue and sacct (tools/gen-cluster,
 * 200 jobs; sacct JSON, then sacct -P text) hold the same running jobs. With every changed
 * record held (the default keep_records), each job document is written once: docs_rewritten
 * 0 and one statement a job. With SA_KEEP_RECORDS=20 (slurm-ingest-faults) the changed
 * records outgrow memory: they are read again where they are in the inputs (both inputs
 * counted in second_passes), in job id order, squeue's and sacct's records of a job
 * together: each job is still written once (docs_rewritten 0, one statement a job, every
 * job inserted), and the documents are the same. Before, the inputs were written one at a
 * time: every job of both was inserted, then replaced (docs_rewritten = jobs_changed).
 */
static void test_docs_rewritten_counted(void **state)
{
    char gen[300], sq[340], sa[340];
    const char *args[] = {"--at=2026-10-15T12:00:00Z", "--squeue", sq, "--sacct", sa, NULL};
    const char *env[] = {"SA_KEEP_RECORDS=20", "SA_IDS_SPILL=16", NULL};
    tu_box_t held, apart;
    (void)state;

    if (access(SA_PYTHON3, X_OK) != 0 || !SA_FAULTS_BIN[0]) {
        printf("SKIP: needs python3 (tools/gen-cluster) and slurm-ingest-faults (-DSA_FAULT_INJECTION=ON)\n");
        skip();
    }
    snprintf(gen, sizeof gen, "%s/gen-both", tmp);
    {
        char *argv[] = {(char *)SA_PYTHON3, (char *)SA_SOURCE_DIR "/tools/gen-cluster", (char *)"--only",
                        (char *)"squeue,sacct", (char *)"-q", (char *)"--out", gen, NULL}, *out = NULL, *err = NULL;
        int rc = tu_run(argv, NULL, &out, &err);
        if (rc != 0)
            fail_msg("tools/gen-cluster: exit %d: %s", rc, err);
        free(out);
        free(err);
    }
    snprintf(sq, sizeof sq, "%s/squeue.json", gen);
    for (int text = 0; text <= 1; text++) {
    snprintf(sa, sizeof sa, "%s/%s", gen, text ? "sacct-P.txt" : "sacct.json");
    {
        char db[160];
        snprintf(db, sizeof db, "%s_rw_held%d", db_name, text);
        tu_box_init(&held, text ? "rw-held-text" : "rw-held", uri, db);
        snprintf(db, sizeof db, "%s_rw_apart%d", db_name, text);
        tu_box_init(&apart, text ? "rw-apart-text" : "rw-apart", uri, db);
    }
    box_expect(&held, args, NULL, SA_EXIT_OK);
    apart.bin = SA_FAULTS_BIN;
    box_expect(&apart, args, env, SA_EXIT_OK);
    {
        long long seen = tu_sum(client, held.db, "ingest_runs", "counts.jobs_seen"),
                  jobs = tu_count(client, held.db, "jobs", NULL),
                  inserted = tu_sum(client, apart.db, "ingest_runs", "counts.jobs_inserted"),
                  rewritten = tu_sum(client, apart.db, "ingest_runs", "counts.docs_rewritten");
        printf("%s: docs_rewritten: %lld of %lld jobs with every record held, %lld (jobs_inserted %lld) with 20\n",
               sa, tu_sum(client, held.db, "ingest_runs", "counts.docs_rewritten"), jobs, rewritten, inserted);
        assert_true(jobs >= 200 && seen == jobs);
        assert_int_equal(tu_sum(client, held.db, "ingest_runs", "counts.docs_rewritten"), 0);
        assert_int_equal(tu_sum(client, held.db, "ingest_runs", "counts.write_statements"), jobs);
        assert_int_equal(rewritten, 0);
        assert_int_equal(inserted, jobs);
        assert_int_equal(tu_sum(client, apart.db, "ingest_runs", "counts.write_statements"), jobs);
        assert_int_equal(tu_sum(client, apart.db, "ingest_runs", "counts.second_passes"), 2);
    }
    {
        json_t *want = tu_archive_docs(client, held.db, "jobs"), *got = tu_archive_docs(client, apart.db, "jobs");
        assert_non_null(want);
        assert_non_null(got);
        assert_true(json_equal(want, got));
        json_decref(want);
        json_decref(got);
    }
    boxes_done(&held, &apart);
    }
}

/* The same snapshots captured per node (sinfo -N --json): nothing carried, replayed twice as once. */
static void test_replay_pernode_idempotent(void **state)
{
    char gen[300];
    tu_box_t live, clean;
    (void)state;

    if (!gen_evolve(gen, sizeof gen))
        skip();
    replay_idempotent(gen, "sinfo", "pn", false, &live, &clean);
    assert_int_equal(ts_int(tu_box_path(&clean, "ts.db"), "SELECT count(*) FROM attr WHERE gpu_config IS NOT NULL"),
                     0);
    assert_true(tu_count(client, clean.db, "jobs", "{\"runs.gpu_type_source\": \"node\"}") > 0);
    replay_spilled(gen, &live, &clean);
    boxes_done(&live, &clean);
}

/* The start of job job_id in db (epoch seconds), SA_UNSET when absent. */
static int64_t job_start(const char *db, int64_t job_id)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "jobs");
    bson_t *filter = BCON_NEW("job_id", BCON_INT64(job_id));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, filter, NULL, NULL);
    const bson_t *doc;
    bson_iter_t it;
    int64_t t = SA_UNSET;
    if (mongoc_cursor_next(cur, &doc) && bson_iter_init_find(&it, doc, "start") && BSON_ITER_HOLDS_DATE_TIME(&it))
        t = bson_iter_date_time(&it) / 1000;
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    mongoc_collection_destroy(c);
    return t;
}

/*
 * A capture in local time (slurm2sql's, made on a cluster in Helsinki) given with --tz is read in
 * that zone, and its snapshot says so: a replay of the archive reads it the same way. Without
 * --tz a file is read as UTC, as the live sacct call (TZ=UTC) prints it. An unknown zone is
 * refused before anything is kept.
 */
static void test_sacct_local_time(void **state)
{
    char file[300], archive[300], local[96], as_utc[96], replayed[96], *err;
    const int64_t start = 1564601354; /* slurm2sql's test: Start 2019-07-31T22:29:14 Europe/Helsinki */
    FILE *f;
    (void)state;

    if (!sa_tz_valid("Europe/Helsinki", NULL)) {
        printf("  skipped: Europe/Helsinki is not in the zone database (install tzdata)\n");
        skip();
    }
    snprintf(file, sizeof file, "%s/sacct-helsinki.txt", tmp);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("JobID|JobIDRaw|JobName|User|Account|State|Submit|Start|End|ElapsedRaw|AllocTRES|NodeList\n"
          "43974388|43974388|spawner-jupyterhub|user1|cs|COMPLETED|2019-07-31T22:29:13|2019-07-31T22:29:14|"
          "2019-08-01T02:02:39|12805|cpu=2,node=1|pe2\n", f);
    fclose(f);
    snprintf(local, sizeof local, "%s_tz", db_name);
    snprintf(as_utc, sizeof as_utc, "%s_tzutc", db_name);
    snprintf(replayed, sizeof replayed, "%s_tzreplayed", db_name);
    snprintf(archive, sizeof archive, "--archive-dir=%s/tzarchive", tmp);
    {
        const char *extra[] = {"--at=2019-08-02T00:00:00Z", archive, "--sacct", file, "--tz", "Europe/Helsinki", NULL};
        assert_int_equal(ingest(local, uri, extra, NULL), SA_EXIT_OK);
        assert_int_equal(job_start(local, 43974388), start);
    }
    {
        const char *extra[] = {"--at=2019-08-02T00:00:00Z", "--sacct", file, NULL};
        assert_int_equal(ingest(as_utc, uri, extra, NULL), SA_EXIT_OK);
        assert_int_equal(job_start(as_utc, 43974388), start + 3 * 3600);
    }
    {
        char dir[300];
        const char *extra[] = {"replay", dir, NULL};
        snprintf(dir, sizeof dir, "%s/tzarchive", tmp);
        assert_int_equal(ingest(replayed, uri, extra, NULL), SA_EXIT_OK);
        assert_int_equal(job_start(replayed, 43974388), start);
    }
    {
        /* --dump reads it the same way */
        char *argv[] = {(char *)SA_INGEST_BIN, (char *)"--dump", (char *)"--tz=Europe/Helsinki", file, NULL}, *out;
        assert_int_equal(tu_run(argv, NULL, &out, &err), SA_EXIT_OK);
        assert_non_null(strstr(out, "\"start\":\"2019-07-31T19:29:14Z\""));
        free(out);
        free(err);
    }
    {
        const char *extra[] = {"--at=2019-08-02T00:00:00Z", "--sacct", file, "--tz", "Mars/Olympus_Mons", NULL};
        assert_int_equal(ingest(local, uri, extra, &err), SA_EXIT_USAGE);
        assert_non_null(strstr(err, "Mars/Olympus_Mons"));
        assert_non_null(strstr(err, "zone database"));
        free(err);
    }
}

/*
 * Issue 22: every slurm-ingest, even --dump, made /dev/shm/mongoc-<pid> (libmongoc's
 * counters; libmongoc initialises itself before main, so the MONGOC_DISABLE_SHM that
 * main set came too late): a killed one left it, and a later process of the same pid
 * printed libmongoc's "Falling back to malloc for counters." on stderr.
 */
static void test_no_mongoc_shm(void **state)
{
    char *dump[] = {(char *)SA_INGEST_BIN, (char *)"--dump", (char *)SA_FIXTURES_DIR "/gen/v0.0.40/squeue.json", NULL};
    char *dump_stdin[] = {(char *)SA_INGEST_BIN, (char *)"--dump", (char *)"-", NULL};
    char *err = NULL;
    long pid;
    int in, rc;
    bool left;
    (void)state;

    if (access("/dev/shm", W_OK) != 0) {
        printf("SKIP: /dev/shm is not writable here: libmongoc makes no counters file to look for\n");
        skip();
    }
    /* a file of the same pid already there: no warning */
    rc = tu_run_stale_shm(dump, NULL, &err);
    if (rc != 0 || err[0])
        fail_msg("slurm-ingest --dump with /dev/shm/mongoc-<its pid> there: exit %d, stderr '%s'", rc, err);
    free(err);
    /* a run waiting on its input has no counters file, and leaves none when killed */
    pid = tu_start_sleeping(dump_stdin, NULL, &in);
    if (pid < 0)
        fail_msg("slurm-ingest --dump - never waited on its standard input");
    left = tu_mongoc_shm_exists(pid);
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, NULL, 0);
    close(in);
    left = tu_mongoc_shm_exists(pid) || left;
    if (left) {
        char path[64];
        snprintf(path, sizeof path, "/dev/shm/mongoc-%ld", pid);
        unlink(path);
        fail_msg("slurm-ingest --dump (pid %ld) made %s, and left it when killed", pid, path);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Every millisecond of a run is in a named phase (issue 22, item 14): the first run of a
 * new cluster in an archive that holds another cluster's documents spends its time setting
 * up (the migration check, the rollups, the job cache rebuilt), before any snapshot. Its
 * ingest_runs document's phases must sum to the run's wall time (wall_ms, the monotonic
 * clock) within 5 % or 50 ms, and that wall time must be finished_at - started_at (whole
 * seconds: within one) and, within 10 % or 300 ms, the time the test saw the process take.
 */
static void test_phases_sum_to_wall(void **state)
{
    enum { OTHER_DOCS = 3000 };
    char db[96], opt_sinfo[400], opt_cluster[64];
    const char *extra[] = {opt_cluster, opt_sinfo, "--at=2026-11-26T06:30:00Z", NULL};
    mongoc_collection_t *c;
    bson_t *f, *opts;
    json_t *run, *phases, *v;
    const char *k;
    double sum = 0, wall, secs, t0, took;
    int64_t started, finished;
    (void)state;

    snprintf(db, sizeof db, "%s_phases", db_name);
    /* another cluster's documents: what a new cluster's set-up must look past */
    c = mongoc_client_get_collection(client, db, "jobs");
    {
        mongoc_bulk_operation_t *bulk = mongoc_collection_create_bulk_operation_with_opts(c, NULL);
        bson_error_t berr;
        char pad[257];
        memset(pad, 'x', sizeof pad - 1);
        pad[sizeof pad - 1] = '\0';
        for (int i = 1; i <= OTHER_DOCS; i++) {
            char id[32];
            bson_t *d;
            snprintf(id, sizeof id, "other:%d", i);
            d = BCON_NEW("_id", BCON_UTF8(id), "cluster", BCON_UTF8("other"), "job_id", BCON_INT64(i), "state",
                         BCON_UTF8("COMPLETED"), "end", BCON_DATE_TIME((int64_t)1795600000000 + i * 1000),
                         "runs", "[", "]", "history", "[", "]", "extra", "{", "a", BCON_UTF8(pad), "b", BCON_UTF8(pad),
                         "c", BCON_UTF8(pad), "d", BCON_UTF8(pad), "}");
            mongoc_bulk_operation_insert(bulk, d);
            bson_destroy(d);
        }
        if (!mongoc_bulk_operation_execute(bulk, NULL, &berr))
            fail_msg("inserting the other cluster's documents: %s", berr.message);
        mongoc_bulk_operation_destroy(bulk);
    }
    mongoc_collection_destroy(c);

    snprintf(opt_cluster, sizeof opt_cluster, "--cluster=fresh");
    snprintf(opt_sinfo, sizeof opt_sinfo, "--sinfo=%s/slurm-22.05/sinfo-B.json", SA_FIXTURES_DIR);
    t0 = now_ms();
    assert_int_equal(ingest(db, uri, extra, NULL), SA_EXIT_OK);
    took = now_ms() - t0;

    f = BCON_NEW("cluster", BCON_UTF8("fresh"));
    opts = BCON_NEW("sort", "{", "started_at", BCON_INT32(-1), "}");
    {
        mongoc_collection_t *rc = mongoc_client_get_collection(client, db, "ingest_runs");
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts(rc, f, opts, NULL);
        const bson_t *doc;
        bson_iter_t it;
        char *text;
        if (!mongoc_cursor_next(cur, &doc))
            fail_msg("no ingest_runs document for the first run of cluster fresh");
        /* started_at and finished_at are dates (ms since the epoch, whole seconds) */
        if (!bson_iter_init_find(&it, doc, "started_at") || !BSON_ITER_HOLDS_DATE_TIME(&it))
            fail_msg("ingest_runs.started_at is not a date");
        started = bson_iter_date_time(&it);
        if (!bson_iter_init_find(&it, doc, "finished_at") || !BSON_ITER_HOLDS_DATE_TIME(&it))
            fail_msg("ingest_runs.finished_at is not a date");
        finished = bson_iter_date_time(&it);
        text = bson_as_relaxed_extended_json(doc, NULL);
        run = json_loads(text, 0, NULL);
        bson_free(text);
        mongoc_cursor_destroy(cur);
        mongoc_collection_destroy(rc);
    }
    bson_destroy(f);
    bson_destroy(opts);
    assert_non_null(run);
    phases = json_object_get(run, "phases_ms");
    json_object_foreach(phases, k, v) {
        if (!json_is_number(v) || json_number_value(v) < 0)
            fail_msg("phases_ms.%s is not a duration", k);
        sum += json_number_value(v);
    }
    printf("first run of a new cluster beside %d documents: %.0f ms (the process), phases sum %.0f ms\n",
           OTHER_DOCS, took, sum);
    secs = (double)(finished - started) / 1000;
    /* the run's own clock: whole seconds, so within one second (and the tolerance) */
    if (sum < (secs - 1) * 1000 - 50 || sum > (secs + 1) * 1000 + 50)
        fail_msg("the phases sum to %.0f ms; the run took %.0f s (finished_at - started_at): %s unaccounted for",
                 sum, secs, sum < secs * 1000 ? "time" : "extra time");
    /* and as the test saw it: the process also starts, re-executes itself and records the run */
    if (sum < took - (took * 0.1 > 300 ? took * 0.1 : 300))
        fail_msg("the phases sum to %.0f ms of a run the test saw take %.0f ms", sum, took);
    if (!json_is_number(json_object_get(run, "wall_ms")))
        fail_msg("the run records no wall_ms");
    wall = json_number_value(json_object_get(run, "wall_ms"));
    if (wall < (secs - 1) * 1000 || wall > (secs + 1) * 1000)
        fail_msg("wall_ms %.0f is not finished_at - started_at (%.0f s)", wall, secs);
    if (fabs(sum - wall) > (wall * 0.05 > 50 ? wall * 0.05 : 50))
        fail_msg("the phases sum to %.1f ms of a %.1f ms run", sum, wall);
    /* the set-up is named: the phases of opening the archive and the job cache are there */
    {
        static const char *const named[] = {"lock", "connect", "validator", "indexes", "migrate", "rollups",
                                            "cache", "capture", "land", "exec", "parse", "sqlite", "mongo", NULL};
        for (const char *const *n = named; *n; n++) {
            if (!json_is_number(json_object_get(phases, *n)))
                fail_msg("phases_ms has no %s", *n);
        }
    }
    json_decref(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_mode_and_watermark),
        cmocka_unit_test(test_insert_rereads_not_conflicts),
        cmocka_unit_test(test_backfill_windows),
        cmocka_unit_test(test_since_forms),
        cmocka_unit_test(test_spool_and_replay),
        cmocka_unit_test(test_lock_contention),
        cmocka_unit_test(test_hung_command),
        cmocka_unit_test(test_slurm_errors),
        cmocka_unit_test(test_replay_archive),
        cmocka_unit_test(test_replay_grouped_idempotent),
        cmocka_unit_test(test_replay_pernode_idempotent),
        cmocka_unit_test(test_docs_rewritten_counted),
        cmocka_unit_test(test_sacct_local_time),
        cmocka_unit_test(test_no_mongoc_shm),
        cmocka_unit_test(test_phases_sum_to_wall),
    };
    char path[300];
    int rc;

    client = tu_mongo_client("ingest_cli", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    snprintf(tmp, sizeof tmp, "/tmp/sa-ingest-cli-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    snprintf(path, sizeof path, "%s/bin", tmp);
    mkdir(path, 0755);
    fake_slurm();
    if (getenv("SA_TEST_FILTER")) /* one case: SA_TEST_FILTER=test_name */
        cmocka_set_test_filter(getenv("SA_TEST_FILTER"));
    rc = tu_run_group_tests("ingest_cli", tests, NULL, NULL);
    {
        char *argv[] = {(char *)"/bin/rm", (char *)"-rf", tmp, NULL}, *o, *e;
        tu_run(argv, NULL, &o, &e);
        free(o);
        free(e);
    }
    {
        const char *suffixes[] = {"_default", "_backfill", "_spool", "_direct", "_lock", "_hang", "_broken", "_live",
                                  "_replayed", "_tz", "_tzutc", "_tzreplayed"};
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
            char db[128];
            snprintf(db, sizeof db, "%s%s", db_name, suffixes[i]);
            tu_mongo_drop(client, db);
        }
    }
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
