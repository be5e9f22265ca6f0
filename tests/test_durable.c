/*
 * test_durable.c - one regression test per defect of issue 10 ("nothing lost"), and the
 * security checks, against the real test server: slurm-ingest runs as the timer runs it
 * (tests/tu_archive.h: fake Slurm commands, its own lock, spool and time series) on
 * real Slurm 22.05 captures (fixtures/slurm-22.05) and inputs broken the ways the issue
 * found them broken. Cases that need root (another user's files, a read-only mount) or
 * the test-only binary slurm-ingest-faults say why when they are skipped.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

#include "sa_exit.h"
#include "sa_mongo.h"
#include "tu_archive.h"

#define F22 SA_FIXTURES_DIR "/slurm-22.05/"
#define OTHER_UID 65534 /* nobody */

static mongoc_client_t *client;
static char *db_base;
static const char *uri;
static const char *unreachable = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300";

/* A fresh sandbox and database for one case ("<base>_<name>"). */
static void box_new(tu_box_t *b, const char *name)
{
    char db[160];
    snprintf(db, sizeof db, "%s_%s", db_base, name);
    tu_box_init(b, name, uri, db);
}

static void box_done(tu_box_t *b)
{
    tu_mongo_drop(client, b->db);
    tu_box_destroy(b);
}

/* Runs the box with --at and more options; the env of the fake commands as given. */
static int run_at(const tu_box_t *b, const char *at, const char *const more[], const char *const env[], char **err)
{
    const char *args[24];
    char at_opt[64];
    int n = 0;
    snprintf(at_opt, sizeof at_opt, "--at=%s", at);
    args[n++] = at_opt;
    for (int i = 0; more && more[i]; i++)
        args[n++] = more[i];
    args[n] = NULL;
    return tu_box_run(b, args, env, err);
}

/* Asserts an exit code, printing stderr when it is not the one expected. */
#define EXPECT_EXIT(rc, want, err)                                                                                    \
    do {                                                                                                              \
        int rc_ = (rc);                                                                                               \
        if (rc_ != (want))                                                                                            \
            fail_msg("exit %d, expected %d; stderr: %s", rc_, (want), (err) ? (err) : "");                            \
    } while (0)

/* The sacct watermark of the box (-1 when none). */
static long long watermark(const tu_box_t *b)
{
    const char *p = tu_box_path(b, "lock/demo.sacct-watermark");
    char *text;
    long long v;
    if (access(p, F_OK) != 0)
        return -1;
    text = tu_read_file(p, NULL);
    v = atoll(text);
    free(text);
    return v;
}

/* Number of lines of a file (0 when absent). */
static int count_lines(const char *path)
{
    char *text;
    int n = 0;
    if (access(path, F_OK) != 0)
        return 0;
    text = tu_read_file(path, NULL);
    for (char *p = text; *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Snapshots waiting in the box's spool (directories named by time). */
static int spooled(const tu_box_t *b)
{
    int n = tu_count_entries(tu_box_path(b, "spool/demo"));
    const char *skip[] = {"spool/demo/rejected", "spool/demo/setaside"};
    if (n < 0)
        return 0;
    for (size_t i = 0; i < 2; i++)
        n -= access(tu_box_path(b, skip[i]), F_OK) == 0;
    return n;
}

/* The last ingest_runs document of the box's database. */
static json_t *last_run(const tu_box_t *b)
{
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW("sort", "{", "finished_at", BCON_INT32(-1), "_id", BCON_INT32(-1), "}", "limit",
                            BCON_INT64(1));
    json_t *j = tu_find_one(client, b->db, "ingest_runs", &filter, opts);
    bson_destroy(opts);
    if (!j)
        fail_msg("%s: no ingest_runs document", b->db);
    return j;
}

static long long run_count(const json_t *run, const char *key)
{
    return (long long)json_integer_value(json_object_get(json_object_get(run, "counts"), key));
}

/* The job document demo:<id> (NULL when absent). */
static json_t *job(const tu_box_t *b, long long id)
{
    char key[64];
    snprintf(key, sizeof key, "demo:%lld", id);
    return tu_find_id(client, b->db, "jobs", key);
}

static const char *str_of(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Fake-command environments for the three 22.05 moments. */
static const char *const env_a[] = {"TU_SINFO=" F22 "sinfo-A.json", "TU_SQUEUE=" F22 "squeue-A.json",
                                    "TU_SACCT=" F22 "sacct-ingest.txt", NULL};
static const char *const env_b[] = {"TU_SINFO=" F22 "sinfo-B.json", "TU_SQUEUE=" F22 "squeue-B.json",
                                    "TU_SACCT=" F22 "sacct-ingest.txt", NULL};

/* ---- 1. standard input is read once and spooled whole ---------------------------------------- */

static void test_stdin_read_once(void **state)
{
    tu_box_t b;
    char *err = NULL;
    struct stat st, want;
    const char *const args[] = {"--at=2026-11-26T06:28:00Z", "--squeue", "-", NULL};
    (void)state;

    box_new(&b, "stdin");
    assert_int_equal(stat(F22 "squeue-A.json", &want), 0);
    /* MongoDB unreachable: the capture from the pipe is spooled whole */
    snprintf(b.uri, sizeof b.uri, "%s", unreachable);
    EXPECT_EXIT(tu_box_run_piped(&b, args, NULL, F22 "squeue-A.json", &err), SA_EXIT_SPOOLED, err);
    free(err);
    assert_int_equal(stat(tu_box_path(&b, "spool/demo/20261126T062800Z/squeue.json"), &st), 0);
    assert_int_equal(st.st_size, want.st_size);
    /* the next run replays it: every job lands, nothing blocks */
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    EXPECT_EXIT(tu_box_run_piped(&b, args, NULL, F22 "squeue-A.json", &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 16);
    assert_int_equal(spooled(&b), 0);
    box_done(&b);
}

/* ---- 2. the watermark moves only after its sacct window landed ------------------------------- */

static void test_watermark_after_landing(void **state)
{
    tu_box_t b;
    char *err = NULL;
    const char *env_html[] = {env_a[0], env_a[1], "TU_SACCT=" F22 "../README.md", NULL};
    long long wm;
    (void)state;

    box_new(&b, "watermark");
    /* MongoDB unreachable: sacct is not even run (Slurm keeps it), the watermark stays */
    snprintf(b.uri, sizeof b.uri, "%s", unreachable);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", NULL, env_a, &err), SA_EXIT_SPOOLED, err);
    free(err);
    assert_int_equal(count_lines(tu_box_path(&b, "sacct.argv")), 0);
    assert_int_equal(watermark(&b), -1);
    /* sacct's output cannot be parsed: it moves to rejected/, the watermark stays */
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:35:00Z", NULL, env_html, &err), SA_EXIT_INPUT, err);
    assert_non_null(strstr(err, "rejected"));
    free(err);
    assert_int_equal(watermark(&b), -1);
    assert_true(tu_count_entries(tu_box_path(&b, "spool/demo/rejected")) == 1);
    /* the spooled squeue landed all the same */
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 16);
    /* a good window lands: the watermark is its end; the next run starts an hour before it */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:40:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    wm = watermark(&b);
    assert_int_equal(wm, 1795675200); /* 2026-11-26T06:40:00Z */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:45:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    {
        char *args = tu_read_file(tu_box_path(&b, "sacct.argv"), NULL);
        assert_non_null(strstr(args, "--starttime=2026-11-26T05:40:00 --endtime=2026-11-26T06:45:00"));
        free(args);
    }
    /* a corrupt time series stops the landing: the window is not done, the watermark stays */
    tu_write_text(tu_box_path(&b, "ts.db"), "this is not an SQLite database, not at all, no");
    unlink(tu_box_path(&b, "ts.db-wal"));
    unlink(tu_box_path(&b, "ts.db-shm"));
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:50:00Z", NULL, env_a, &err), SA_EXIT_SQLITE, err);
    free(err);
    assert_int_equal(watermark(&b), 1795675500);
    assert_int_equal(spooled(&b), 1);
    box_done(&b);
}

/* Killed between the job writes and the watermark: the window is read again, nothing lost. */
static void test_watermark_kill(void **state)
{
    tu_box_t b;
    char *err = NULL;
    const char *env_kill[] = {env_a[0], env_a[1], env_a[2], "SA_FAULT=before-watermark", NULL};
    const char *normal;
    (void)state;

    if (!SA_FAULTS_BIN[0]) {
        printf("SKIP: slurm-ingest-faults is not built (cmake -DSA_FAULT_INJECTION=ON; tools/test does)\n");
        skip();
    }
    box_new(&b, "wmkill");
    normal = b.bin;
    b.bin = SA_FAULTS_BIN;
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", NULL, env_kill, &err), 128 + SIGKILL, err);
    free(err);
    assert_int_equal(watermark(&b), -1);
    assert_int_equal(spooled(&b), 1);
    b.bin = normal;
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:35:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(watermark(&b), 1795674900);
    assert_int_equal(spooled(&b), 0);
    box_done(&b);
}

/* ---- 3. replay takes the cluster's lock ------------------------------------------------------ */

static void test_replay_takes_lock(void **state)
{
    tu_box_t b;
    char *err = NULL, archive[400];
    const char *more[] = {archive, NULL};
    const char *replay[] = {"replay", NULL, NULL};
    int fd;
    (void)state;

    box_new(&b, "replaylock");
    snprintf(archive, sizeof archive, "--archive-dir=%s/archive", b.dir);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", more, env_a, &err), SA_EXIT_OK, err);
    free(err);
    replay[1] = strdup(tu_box_path(&b, "archive"));
    /* what a timer run holds while it works */
    fd = open(tu_box_path(&b, "lock/demo.lock"), O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    EXPECT_EXIT(tu_box_run(&b, replay, NULL, &err), SA_EXIT_LOCKED, err);
    assert_non_null(strstr(err, "another slurm-ingest"));
    free(err);
    close(fd);
    EXPECT_EXIT(tu_box_run(&b, replay, NULL, &err), SA_EXIT_OK, err);
    free(err);
    free((char *)replay[1]);
    box_done(&b);
}

/* ---- 4. jobs_superseded is keyed by _id: a retry never adds a second copy -------------------- */

static const char reuse_header[] = "JobID|JobIDRaw|Partition|Account|User|Submit|Eligible|Start|End|State|ExitCode|"
                                   "NNodes|NCPUS|AllocTRES|NodeList|JobName\n";

static void test_superseded_once(void **state)
{
    tu_box_t b;
    char *err = NULL, f1[400], f2[400], text[1024];
    const char *a1[] = {"--sacct", f1, NULL}, *a2[] = {"--sacct", f2, NULL};
    json_t *doc;
    (void)state;

    box_new(&b, "superseded");
    snprintf(f1, sizeof f1, "%s/reuse1.txt", b.dir);
    snprintf(f2, sizeof f2, "%s/reuse2.txt", b.dir);
    snprintf(text, sizeof text, "%s500|500|gpu|physics|alice|2026-11-01T00:00:00|2026-11-01T00:00:00|"
             "2026-11-01T00:10:00|2026-11-01T01:00:00|COMPLETED|0:0|1|4|billing=4,cpu=4,gres/gpu:a100=2,mem=8G,"
             "node=1|vm|first\n", reuse_header);
    tu_write_text(f1, text);
    snprintf(text, sizeof text, "%s500|500|gpu|bio|bob|2026-11-20T00:00:00|2026-11-20T00:00:00|"
             "2026-11-20T00:05:00|Unknown|RUNNING|0:0|1|2|billing=2,cpu=2,mem=4G,node=1|vm|second\n", reuse_header);
    tu_write_text(f2, text);
    EXPECT_EXIT(run_at(&b, "2026-11-02T00:00:00Z", a1, NULL, &err), SA_EXIT_OK, err);
    free(err);
    if (SA_FAULTS_BIN[0]) {
        /* killed after jobs_superseded was written, before jobs: the retry finds it there */
        const char *kill_env[] = {"SA_FAULT=superseded-written", NULL}, *normal = b.bin;
        b.bin = SA_FAULTS_BIN;
        EXPECT_EXIT(run_at(&b, "2026-11-20T01:00:00Z", a2, kill_env, &err), 128 + SIGKILL, err);
        free(err);
        b.bin = normal;
        assert_int_equal(tu_count(client, b.db, "jobs_superseded", NULL), 1);
        doc = job(&b, 500);
        assert_string_equal(str_of(doc, "user"), "alice"); /* the jobs write never happened */
        json_decref(doc);
    } else {
        printf("note: slurm-ingest-faults is not built: the kill between the two writes is not tested; the retry "
               "after a lost jobs write is simulated instead\n");
    }
    EXPECT_EXIT(run_at(&b, "2026-11-20T01:00:00Z", a2, NULL, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(tu_count(client, b.db, "jobs_superseded", NULL), 1);
    /* the jobs write lost again (the old document back, the cache forgotten): a retry adds nothing */
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, b.db, "jobs");
        bson_t *filter = BCON_NEW("_id", BCON_UTF8("demo:500"));
        bson_t *upd = BCON_NEW("$set", "{", "user", BCON_UTF8("alice"), "submit",
                               BCON_DATE_TIME(INT64_C(1793491200000)), "state", BCON_UTF8("COMPLETED"), "}");
        bson_error_t berr;
        if (!mongoc_collection_update_one(c, filter, upd, NULL, NULL, &berr))
            fail_msg("%s", berr.message);
        bson_destroy(filter);
        bson_destroy(upd);
        mongoc_collection_destroy(c);
        unlink(tu_box_path(&b, "lock/demo.jobcache.sqlite"));
    }
    EXPECT_EXIT(run_at(&b, "2026-11-20T01:00:00Z", a2, NULL, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(tu_count(client, b.db, "jobs_superseded", NULL), 1);
    assert_int_equal(tu_count(client, b.db, "jobs_superseded", "{\"_id\": \"demo:500:1793491200\"}"), 1);
    doc = job(&b, 500);
    assert_string_equal(str_of(doc, "user"), "bob");
    json_decref(doc);
    box_done(&b);
}

/* ---- 5. REVOKED is final in the archive ------------------------------------------------------ */

static void test_revoked_is_final(void **state)
{
    tu_box_t b;
    char *err = NULL, sacct[400], squeue[400], text[1024];
    const char *a1[] = {"--squeue", F22 "squeue-A.json", NULL}, *a2[] = {"--sacct", sacct, NULL},
               *a3[] = {"--squeue", squeue, NULL};
    json_t *doc;
    (void)state;

    box_new(&b, "revoked");
    snprintf(sacct, sizeof sacct, "%s/revoked.txt", b.dir);
    snprintf(squeue, sizeof squeue, "%s/squeue-no12.json", b.dir);
    /* job 12 (pending in squeue-A) was revoked (a federated sibling started it) */
    snprintf(text, sizeof text, "%s12|12|compute|physics|root|2026-11-26T06:27:55|Unknown|None|"
             "2026-11-26T06:29:00|REVOKED|0:0|1|1||None assigned|dep\n", reuse_header);
    tu_write_text(sacct, text);
    tu_copy_without_job(F22 "squeue-A.json", squeue, 12);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", a1, NULL, &err), SA_EXIT_OK, err);
    free(err);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", a2, NULL, &err), SA_EXIT_OK, err);
    free(err);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:31:00Z", a3, NULL, &err), SA_EXIT_OK, err);
    free(err);
    doc = job(&b, 12);
    assert_non_null(doc);
    assert_string_equal(str_of(doc, "state"), "REVOKED");
    assert_null(json_object_get(doc, "vanished_at"));
    json_decref(doc);
    assert_int_equal(tu_count(client, b.db, "jobs", "{\"vanished_at\": {\"$exists\": true}}"), 0);
    box_done(&b);
}

/* ---- 7. spool-max and a full spool: exit 10, nothing else lost, no watermark moved ----------- */

static void test_spool_max(void **state)
{
    tu_box_t b;
    char *err = NULL, *before, *after;
    const char *small[] = {"--spool-max=100k", NULL};
    const char *none[] = {"--spool-max=1", NULL};
    const char *snap = "spool/demo/20261126T062800Z/squeue.json";
    (void)state;

    box_new(&b, "spoolmax");
    snprintf(b.uri, sizeof b.uri, "%s", unreachable);
    /* the first capture fits (squeue-A 53 KB, sinfo-A 4 KB) */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", small, env_a, &err), SA_EXIT_SPOOLED, err);
    free(err);
    before = tu_read_file(tu_box_path(&b, snap), NULL);
    /* the next one does not (squeue-B is 69 KB, some 40 KB left): refused as a full spool */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:29:00Z", small, env_b, &err), SA_EXIT_SPOOL, err);
    assert_non_null(strstr(err, "spool-max"));
    free(err);
    /* the spool already holds spool-max */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", none, env_b, &err), SA_EXIT_SPOOL, err);
    assert_non_null(strstr(err, "spool-max"));
    free(err);
    /* nothing else lost: the first snapshot whole, no half snapshot left, no watermark, no sacct run */
    after = tu_read_file(tu_box_path(&b, snap), NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    assert_int_equal(spooled(&b), 1);
    assert_int_equal(watermark(&b), -1);
    assert_int_equal(count_lines(tu_box_path(&b, "sacct.argv")), 0);
    /* MongoDB back: the spooled snapshot lands even though this run's capture is refused */
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:31:00Z", none, env_b, &err), SA_EXIT_SPOOL, err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 16);
    box_done(&b);
}

/* Entries of dir whose name starts with prefix (0 when dir is absent). */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)) != NULL)
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/*
 * Issue 22: a run killed while it captures leaves its half-written snapshot
 * (".new-<time>-XXXXXX") in the spool. It used to stay there for good and count against
 * spool-max, so a capture that fits an otherwise empty spool was refused (exit 10). The
 * next run holds the lock, so that writer is gone: the leftover goes, and is never counted.
 */
static void test_killed_capture_leftover(void **state)
{
    tu_box_t b;
    char slow[400], cmd[500], at_opt[64], *err = NULL, part[700];
    const char *args[] = {at_opt, cmd, NULL};
    const char *small[] = {"--spool-max=100k", NULL};
    struct stat want, st;
    bool whole = false;
    pid_t pid;
    int rc;
    (void)state;

    box_new(&b, "killed");
    assert_int_equal(stat(F22 "squeue-A.json", &want), 0);
    snprintf(slow, sizeof slow, "%s/bin/slow-squeue", b.dir);
    tu_write_script(slow, "cat \"$TU_SQUEUE\"; exec sleep 5");
    snprintf(cmd, sizeof cmd, "--squeue-command=%s", slow);
    snprintf(at_opt, sizeof at_opt, "--at=2026-11-26T06:20:00Z");
    /* a run killed once its squeue capture is whole in the temporary snapshot */
    pid = tu_box_start(&b, args, env_a);
    for (int i = 0; i < 200 && !whole; i++) {
        DIR *d = opendir(tu_box_path(&b, "spool/demo"));
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (strncmp(de->d_name, ".new-", 5) != 0)
                continue;
            snprintf(part, sizeof part, "%s/spool/demo/%s/squeue.part", b.dir, de->d_name);
            whole = whole || (stat(part, &st) == 0 && st.st_size == want.st_size);
        }
        if (d)
            closedir(d);
        if (!whole)
            usleep(50 * 1000);
    }
    kill(pid, SIGKILL);
    tu_wait(pid);
    if (!whole)
        fail_msg("the run never had its squeue capture whole in a .new-* snapshot of %s/spool/demo", b.dir);
    assert_int_equal(count_prefixed(tu_box_path(&b, "spool/demo"), ".new-"), 1);
    /* a capture of some 60 KB fits an otherwise empty spool of 100 KB: the leftover (some
     * 60 KB too) is removed, not counted; the snapshot lands, nothing is spooled */
    rc = run_at(&b, "2026-11-26T06:28:00Z", small, env_a, &err);
    if (rc != SA_EXIT_OK)
        fail_msg("after a killed capture: exit %d, expected 0 (the leftovers counted against spool-max?): %s", rc,
                 err);
    free(err);
    assert_int_equal(count_prefixed(tu_box_path(&b, "spool/demo"), ".new-"), 0);
    assert_int_equal(spooled(&b), 0);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 20);
    box_done(&b);
}

/* A backfill whose --archive-dir fills up: exit 10, not a crash (the snapshot was freed twice). */
static void test_backfill_archive_full(void **state)
{
    tu_box_t b;
    char *err = NULL, archive[400], opt[500], empty[400], env_sq[500];
    const char *more[] = {opt, "--since=2026-11-16T00:00:00", "--backfill-window=1d", NULL};
    const char *env[] = {env_a[0], env_sq, env_a[2], NULL};
    int rc;
    (void)state;

    if (geteuid() != 0) {
        printf("SKIP: a small full file system for --archive-dir needs a tmpfs mount (root); CI runs as root\n");
        skip();
    }
    box_new(&b, "backfillfull");
    snprintf(archive, sizeof archive, "%s/archive", b.dir);
    snprintf(opt, sizeof opt, "--archive-dir=%s", archive);
    snprintf(empty, sizeof empty, "%s/empty.json", b.dir);
    snprintf(env_sq, sizeof env_sq, "TU_SQUEUE=%s", empty);
    tu_write_text(empty, "{\"meta\": {}, \"errors\": [], \"jobs\": []}");
    mkdir(archive, 0750);
    if (mount("tmpfs", archive, "tmpfs", 0, "size=40k,mode=0750") != 0) {
        printf("SKIP: cannot mount a tmpfs (%s)\n", strerror(errno));
        box_done(&b);
        skip();
    }
    /* the first window and two more fit; the next copy does not */
    rc = run_at(&b, "2026-11-26T07:00:00Z", more, env, &err);
    umount(archive);
    if (rc != SA_EXIT_SPOOL || !strstr(err, "archive-dir"))
        fail_msg("a backfill with a full archive-dir: exit %d, expected 10 naming archive-dir: %s", rc, err);
    free(err);
    assert_true(spooled(&b) >= 1); /* the window that could not be archived waits in the spool */
    box_done(&b);
}

/* ---- 8. one bad record is set aside (or repaired), never a reason to stop -------------------- */

/* sacct-ingest.txt with job 1's name holding 0xFF, job 2's a newline, job 3's allocation line over 1 MiB. */
static void write_bad_sacct(const char *path)
{
    size_t len = 0;
    char *src = tu_read_file(F22 "sacct-ingest.txt", &len), *line = src;
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    while (*line) {
        char *nl = strchr(line, '\n'), *last;
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        line[n] = '\0';
        last = strrchr(line, '\x1f');
        if (strncmp(line, "1\x1f", 2) == 0)
            fprintf(out, "%.*s\x1fok\xffname\n", (int)(last - line), line);
        else if (strncmp(line, "2\x1f", 2) == 0)
            fprintf(out, "%.*s\x1f" "fail\nsecond line\n", (int)(last - line), line);
        else if (strncmp(line, "3\x1f", 2) == 0) {
            fprintf(out, "%.*s\x1f", (int)(last - line), line);
            for (int i = 0; i < (1 << 20) + 100; i++)
                fputc('z', out);
            fputc('\n', out);
        } else
            fprintf(out, "%s\n", line);
        line += n + (nl ? 1 : 0);
    }
    fclose(out);
    free(src);
}

static void test_bad_records_set_aside(void **state)
{
    tu_box_t b;
    char *err = NULL, sacct[400], squeue[400], aside[500];
    const char *env[] = {env_a[0], NULL, NULL, NULL};
    char env_sq[500], env_sa[500];
    json_t *doc, *run;
    (void)state;

    box_new(&b, "badrecords");
    snprintf(sacct, sizeof sacct, "%s/bad-sacct.txt", b.dir);
    snprintf(squeue, sizeof squeue, "%s/bad-squeue.json", b.dir);
    write_bad_sacct(sacct);
    {
        /* squeue-A with job 4's name made invalid UTF-8 */
        size_t len = 0;
        char *text = tu_read_file(F22 "squeue-A.json", &len), *p = strstr(text, "\"name\": \"arr\"");
        assert_non_null(p);
        memcpy(p + 9, "\xff\xfe\xfd", 3);
        tu_write_file(squeue, text, len);
        free(text);
    }
    snprintf(env_sq, sizeof env_sq, "TU_SQUEUE=%s", squeue);
    snprintf(env_sa, sizeof env_sa, "TU_SACCT=%s", sacct);
    env[1] = env_sq;
    env[2] = env_sa;
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:40:00Z", NULL, env, &err), SA_EXIT_OK, err);
    assert_non_null(strstr(err, "record set aside"));
    assert_non_null(strstr(err, "repaired and kept"));
    free(err);
    /* every job landed: 16 listed by squeue, 20 with sacct's */
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 20);
    doc = job(&b, 1);
    assert_string_equal(str_of(doc, "name"), "ok\xef\xbf\xbdname"); /* U+FFFD */
    json_decref(doc);
    doc = job(&b, 2);
    assert_string_equal(str_of(doc, "name"), "fail\nsecond line"); /* the continuation joined */
    json_decref(doc);
    doc = job(&b, 4); /* its squeue record repaired (sacct's name, authoritative, is the current one) */
    assert_non_null(doc);
    json_decref(doc);
    doc = job(&b, 3); /* its sacct line set aside: what squeue said stays */
    assert_string_equal(str_of(doc, "state"), "RUNNING");
    json_decref(doc);
    /* set aside means kept, counted and logged; and the window is done */
    snprintf(aside, sizeof aside, "%s/spool/demo/setaside/20261126T064000Z-sacct.txt", b.dir);
    {
        size_t len = 0;
        char *kept = tu_read_file(aside, &len);
        /* over 1 MiB: held in an unlinked temporary file, not in memory, and copied in whole */
        assert_true(len > (1u << 20));
        assert_non_null(strstr(kept, "zzzzzzzzzz"));
        assert_int_equal(strncmp(kept, "### ", 4), 0);
        assert_non_null(strstr(kept, "### set aside: "));
        assert_int_equal(kept[len - 1], '\n');
        free(kept);
    }
    {
        /* and nothing else is left there */
        char dir[400];
        struct dirent *e;
        DIR *d;
        snprintf(dir, sizeof dir, "%s/spool/demo/setaside", b.dir);
        assert_non_null(d = opendir(dir));
        while ((e = readdir(d)))
            assert_true(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || e->d_name[0] != '.');
        closedir(d);
    }
    run = last_run(&b);
    assert_int_equal(run_count(run, "records_set_aside"), 1);
    assert_int_equal(run_count(run, "records_repaired"), 2);
    json_decref(run);
    assert_int_equal(watermark(&b), 1795675200);
    box_done(&b);
}

/* ---- 9. only a connection that cannot be made spools; authentication and TLS are exit 5 ------ */

static void test_mongo_errors(void **state)
{
    tu_box_t b;
    char *err = NULL, host[128];
    const char *more[] = {"--squeue", F22 "squeue-A.json", NULL};
    const char *port = strrchr(uri, ':');
    static const struct {
        const char *opts, *want;
    } cases[] = {
        {"tls=true&serverSelectionTimeoutMS=1500", "MongoDB at"},
        {"tls=true&tlsCAFile=/nonexistent/ca.pem&serverSelectionTimeoutMS=1500", "tlscafile cannot be read"},
    };
    (void)state;

    box_new(&b, "mongoerr");
    /* the test server's host:port */
    assert_non_null(port);
    snprintf(host, sizeof host, "%.*s", (int)strcspn(uri + 10, "/?"), uri + 10);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(b.uri, sizeof b.uri, "mongodb://%s/?%s", host, cases[i].opts);
        EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, NULL, &err), SA_EXIT_MONGO, err);
        if (!strstr(err, cases[i].want))
            fail_msg("%s: expected \"%s\" in: %s", cases[i].opts, cases[i].want, err);
        free(err);
    }
    /* a user the server does not know (SCRAM): refused, not spooled */
    snprintf(b.uri, sizeof b.uri, "mongodb://nobody:no-such-pw@%s/?authMechanism=SCRAM-SHA-256&"
             "serverSelectionTimeoutMS=1500", host);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, NULL, &err), SA_EXIT_MONGO, err);
    assert_null(strstr(err, "no-such-pw"));
    free(err);
    /* nobody listening: spooled, nothing lost */
    snprintf(b.uri, sizeof b.uri, "%s", unreachable);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, NULL, &err), SA_EXIT_SPOOLED, err);
    assert_non_null(strstr(err, "unreachable"));
    free(err);
    /* a server lost mid-run (killed between ping and createIndexes): libmongoc's selection cooldown says
     * "No servers yet eligible for rescan"; that is a lost connection, 8 wherever it happens (issue 22) */
    {
        bson_error_t berr;
        sa_error_t e;
        bson_set_error(&berr, MONGOC_ERROR_SERVER_SELECTION, MONGOC_ERROR_SERVER_SELECTION_FAILURE,
                       "No servers yet eligible for rescan");
        sa_mongo_error(&e, host, "createIndexes", &berr);
        assert_int_equal(e.domain, SA_ERR_UNREACHABLE);
        assert_int_equal(sa_exit_code_for(&e, true), SA_EXIT_SPOOLED);
    }
    /* each refused run kept its capture too: the next good run lands them all */
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:29:00Z", more, NULL, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 16);
    box_done(&b);
}

/* ---- 10. two writers: versions, conditional replaces, the cache names its writer ------------- */

/* The job cache's token (meta table of the box's cache). */
static char *cache_token(const tu_box_t *b)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *tok = NULL;
    if (sqlite3_open_v2(tu_box_path(b, "lock/demo.jobcache.sqlite"), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'token'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        tok = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (!tok)
        fail_msg("%s: no cache token", b->dir);
    return tok;
}

static void test_two_writers_named(void **state)
{
    tu_box_t b1, b2;
    char *err = NULL, *tok;
    json_t *cl, *run, *doc;
    const char *sq[] = {"--squeue", F22 "squeue-A.json", NULL}, *sa[] = {"--sacct", F22 "sacct-ingest.txt", NULL};
    (void)state;

    box_new(&b1, "writer1");
    tu_box_init(&b2, "writer2", uri, b1.db); /* another host: its own lock dir and cache, the same archive */
    EXPECT_EXIT(run_at(&b1, "2026-11-26T06:28:00Z", sq, NULL, &err), SA_EXIT_OK, err);
    free(err);
    cl = tu_find_id(client, b1.db, "clusters", "demo");
    tok = cache_token(&b1);
    assert_string_equal(str_of(cl, "cache_writer"), tok);
    free(tok);
    json_decref(cl);
    EXPECT_EXIT(run_at(&b2, "2026-11-26T06:40:00Z", sa, NULL, &err), SA_EXIT_OK, err);
    free(err);
    cl = tu_find_id(client, b1.db, "clusters", "demo");
    tok = cache_token(&b2);
    assert_string_equal(str_of(cl, "cache_writer"), tok);
    free(tok);
    json_decref(cl);
    /* the first writer sees another wrote since: its cache is rebuilt, nothing of the other's is undone */
    EXPECT_EXIT(run_at(&b1, "2026-11-26T06:41:00Z", sq, NULL, &err), SA_EXIT_OK, err);
    free(err);
    run = last_run(&b1);
    assert_true(json_is_true(json_object_get(run, "cache_rebuilt")));
    json_decref(run);
    doc = job(&b1, 9); /* requeued, then completed: both runs from sacct */
    assert_true(json_array_size(json_object_get(doc, "runs")) >= 2);
    assert_true(json_integer_value(json_object_get(doc, "_v")) >= 2);
    json_decref(doc);
    tu_box_destroy(&b2);
    box_done(&b1);
}

/* ---- 11. credentials: '@' in a password refused, the URI never reaches Slurm ----------------- */

static void test_uri_never_leaks(void **state)
{
    tu_box_t b;
    char *err = NULL, where[600];
    (void)state;

    box_new(&b, "uri");
    snprintf(b.uri, sizeof b.uri, "mongodb://ingest:p@ss-w0rd@127.0.0.1:1/?serverSelectionTimeoutMS=300");
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", NULL, env_a, &err), SA_EXIT_USAGE, err);
    assert_non_null(strstr(err, "more than one '@'"));
    assert_non_null(strstr(err, "%40"));
    assert_null(strstr(err, "ss-w0rd"));
    free(err);
    /* a good URI with a password: the Slurm commands see neither it nor the variable */
    snprintf(b.uri, sizeof b.uri, "mongodb://ingest:Zq7-secret-Zq7@127.0.0.1:1/?serverSelectionTimeoutMS=300");
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", NULL, env_a, &err), SA_EXIT_SPOOLED, err);
    assert_null(strstr(err, "Zq7-secret-Zq7"));
    free(err);
    assert_true(count_lines(tu_box_path(&b, "squeue.argv")) >= 1);
    assert_int_equal(tu_grep_tree(b.dir, "Zq7-secret-Zq7", where, sizeof where), 0);
    assert_int_equal(tu_grep_tree(b.dir, "SLURM_INGEST_MONGO_URI", where, sizeof where), 0);
    box_done(&b);
}

/* ---- 12. what MongoDB would refuse never half-writes ----------------------------------------- */

/* squeue-A with job 1 given an empty key, job 2 a 1,500-deep value and job 3 a 17 MiB comment. */
static void write_hostile_squeue(const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(F22 "squeue-A.json", 0, &jerr), *jobs;
    char *text, *pos, *big;
    size_t len, deep_len = 1500 * 6 + 1 + 1500;
    FILE *f;

    assert_non_null(doc);
    jobs = json_object_get(doc, "jobs");
    json_object_set_new(json_array_get(jobs, 0), "", json_string("empty key"));
    json_object_set_new(json_array_get(jobs, 1), "deepfield", json_string("@DEEP@"));
    big = malloc((17u << 20) + 1);
    memset(big, 'x', 17u << 20);
    big[17u << 20] = '\0';
    json_object_set_new(json_array_get(jobs, 2), "comment", json_string(big));
    free(big);
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    pos = strstr(text, "\"@DEEP@\"");
    assert_non_null(pos);
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(pos - text), f);
    for (int i = 0; i < 1500; i++)
        fputs("{\"a\":", f);
    fputc('1', f);
    for (int i = 0; i < 1500; i++)
        fputc('}', f);
    len = strlen(pos + 8);
    fwrite(pos + 8, 1, len, f);
    fclose(f);
    (void)deep_len;
    free(text);
}

static void test_server_limits(void **state)
{
    tu_box_t b;
    char *err = NULL, path[400];
    const char *args[] = {"--at=2026-11-26T06:28:00Z", "--squeue", "-", NULL};
    json_t *doc, *extra, *v, *run;
    struct timespec t0, t1;
    int depth = 0;
    (void)state;

    box_new(&b, "limits");
    snprintf(path, sizeof path, "%s/hostile.json", b.dir);
    write_hostile_squeue(path);
    /* through a pipe: an 18 MB input read once, in seconds (the pipe path was quadratic) */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    EXPECT_EXIT(tu_box_run_piped(&b, args, NULL, path, &err), SA_EXIT_OK, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(strstr(err, "16 MiB"));
    free(err);
    assert_true(t1.tv_sec - t0.tv_sec < 60);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 15);
    /* the empty key is escaped */
    doc = job(&b, 1);
    extra = json_object_get(doc, "extra");
    assert_non_null(extra);
    assert_null(json_object_get(extra, ""));
    {
        const char *k;
        bool found = false;
        json_object_foreach(extra, k, v) {
            if (json_is_string(v) && strcmp(json_string_value(v), "empty key") == 0)
                found = strlen(k) > 0;
        }
        assert_true(found);
    }
    json_decref(doc);
    /* the deep value is stored, its deep part as JSON text */
    doc = job(&b, 2);
    v = json_object_get(json_object_get(doc, "extra"), "deepfield");
    while (json_is_object(v) && json_object_size(v) == 1) {
        v = json_object_iter_value(json_object_iter(v));
        depth++;
    }
    assert_true(depth > 0 && depth < 100);
    assert_true(json_is_string(v) && strncmp(json_string_value(v), "{\"a\":", 5) == 0);
    json_decref(doc);
    /* the 17 MiB record: set aside whole, counted */
    assert_null(job(&b, 3));
    run = last_run(&b);
    assert_int_equal(run_count(run, "records_set_aside"), 1);
    json_decref(run);
    {
        struct stat st;
        assert_int_equal(stat(tu_box_path(&b, "spool/demo/setaside/20261126T062800Z-squeue.txt"), &st), 0);
        assert_true(st.st_size > (17 << 20));
    }
    box_done(&b);
}

/* ---- 13. directories others can write, planted links, other users' files --------------------- */

static void test_unsafe_dirs(void **state)
{
    tu_box_t b;
    char *err = NULL;
    static const char *const dirs[] = {"lock", "spool"};
    (void)state;

    box_new(&b, "unsafe");
    for (size_t i = 0; i < 2; i++) {
        char opt[64];
        mkdir(tu_box_path(&b, dirs[i]), 0750);
        chmod(tu_box_path(&b, dirs[i]), 0777);
        EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", NULL, env_a, &err), SA_EXIT_USAGE, err);
        snprintf(opt, sizeof opt, "%s-dir", dirs[i]);
        assert_non_null(strstr(err, opt));
        assert_non_null(strstr(err, "writable by other users"));
        free(err);
        chmod(tu_box_path(&b, dirs[i]), 0750);
    }
    assert_int_equal(count_lines(tu_box_path(&b, "squeue.argv")), 0); /* refused before any Slurm command */
    box_done(&b);
}

static void test_planted_symlink(void **state)
{
    tu_box_t b;
    char *err = NULL, victim[400], *text;
    struct stat st;
    (void)state;

    box_new(&b, "symlink");
    snprintf(victim, sizeof victim, "%s/victim", b.dir);
    tu_write_text(victim, "precious\n");
    mkdir(tu_box_path(&b, "lock"), 0750);
    assert_int_equal(symlink(victim, tu_box_path(&b, "lock/demo.sacct-watermark")), 0);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    text = tu_read_file(victim, NULL);
    assert_string_equal(text, "precious\n");
    free(text);
    assert_int_equal(lstat(tu_box_path(&b, "lock/demo.sacct-watermark"), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(watermark(&b), 1795674600);
    /* a snapshot directory planted as a link to a forged capture is never read */
    {
        char forged[400];
        snprintf(forged, sizeof forged, "%s/forged", b.dir);
        mkdir(forged, 0750);
        tu_write_text(tu_box_path(&b, "forged/squeue.json"), "{\"jobs\": null}");
        assert_int_equal(symlink(forged, tu_box_path(&b, "spool/demo/20261126T060000Z")), 0);
    }
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:35:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(access(tu_box_path(&b, "forged/squeue.json"), F_OK), 0);
    box_done(&b);
}

/*
 * Issue 22: --sqlite followed a planted link. As root, with the time series in a 1777
 * directory where another user made it a link to a root-only SQLite file, a snapshot was
 * written into that file. Its directory is now checked like the others (exit 2 before
 * any Slurm command), and a link in a private directory is never opened (exit 6, the
 * snapshot stays in the spool).
 */
static void test_planted_sqlite_link(void **state)
{
    tu_box_t b;
    char *err = NULL, victim[400], opt[500], *before, *after;
    const char *more[] = {opt, NULL};
    struct stat st;
    (void)state;

    box_new(&b, "sqlitelink");
    mkdir(tu_box_path(&b, "private"), 0700);
    snprintf(victim, sizeof victim, "%s/private/victim.sqlite", b.dir);
    snprintf(opt, sizeof opt, "--sqlite=%s", victim);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, env_a, &err), SA_EXIT_OK, err);
    free(err);
    before = tu_tsdb_dump(victim);
    /* a directory every user can write (as /tmp), the time series a link planted there */
    mkdir(tu_box_path(&b, "public"), 0750);
    chmod(tu_box_path(&b, "public"), 01777);
    assert_int_equal(symlink(victim, tu_box_path(&b, "public/ts.db")), 0);
    snprintf(opt, sizeof opt, "--sqlite=%s/public/ts.db", b.dir);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", more, env_b, &err), SA_EXIT_USAGE, err);
    assert_non_null(strstr(err, "sqlite"));
    assert_non_null(strstr(err, "writable by other users"));
    assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    free(err);
    assert_int_equal(count_lines(tu_box_path(&b, "squeue.argv")), 1); /* refused before any Slurm command */
    /* a link in a directory of ours is not opened either */
    mkdir(tu_box_path(&b, "mine"), 0750);
    assert_int_equal(symlink(victim, tu_box_path(&b, "mine/ts.db")), 0);
    snprintf(opt, sizeof opt, "--sqlite=%s/mine/ts.db", b.dir);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:31:00Z", more, env_b, &err), SA_EXIT_SQLITE, err);
    assert_non_null(strstr(err, "mine/ts.db: is a symbolic link: refused"));
    free(err);
    after = tu_tsdb_dump(victim);
    assert_string_equal(before, after);
    assert_int_equal(lstat(tu_box_path(&b, "mine/ts.db"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(spooled(&b), 1); /* nothing lost: the snapshot waits for a usable time series */
    snprintf(opt, sizeof opt, "--sqlite=%s/mine/real.db", b.dir);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:32:00Z", more, env_b, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    free(before);
    free(after);
    box_done(&b);
}

static void test_other_users_files(void **state)
{
    tu_box_t b;
    char *err = NULL;
    (void)state;

    if (geteuid() != 0) {
        printf("SKIP: files of another user need root to be made (chown); CI runs the suite as root\n");
        skip();
    }
    box_new(&b, "otheruser");
    /* captures in the spool that are not ours are never read (a forged job 999 would land) */
    {
        static const char forged[] = "JobID|JobIDRaw|User|Submit|State\n999|999|mallory|2026-11-26T05:00:00|RUNNING\n";
        static const char *const dirs[] = {"spool/demo/20261126T060000Z", "spool/demo/20261126T060100Z"};
        char file[2][600];
        EXPECT_EXIT(run_at(&b, "2026-11-26T05:55:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
        free(err);
        for (int i = 0; i < 2; i++) {
            mkdir(tu_box_path(&b, dirs[i]), 0750);
            snprintf(file[i], sizeof file[i], "%s/%s/sacct.txt", b.dir, dirs[i]);
            tu_write_text(file[i], forged);
            assert_int_equal(chown(file[i], OTHER_UID, OTHER_UID), 0);
        }
        /* the first: a snapshot directory of another user; the second: ours, holding another user's file */
        assert_int_equal(chown(tu_box_path(&b, dirs[0]), OTHER_UID, OTHER_UID), 0);
        EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
        assert_non_null(strstr(err, "belongs to another user"));
        free(err);
        assert_null(job(&b, 999));
        assert_int_equal(access(file[0], F_OK), 0); /* left where it is */
    }
    /* a lock file made by another user: refused with a message saying what to do */
    assert_int_equal(chown(tu_box_path(&b, "lock/demo.lock"), OTHER_UID, OTHER_UID), 0);
    {
        int rc = run_at(&b, "2026-11-26T06:32:00Z", NULL, env_a, &err);
        if (rc != SA_EXIT_USAGE)
            fail_msg("a lock file of another user: exit %d, expected 2: %s", rc, err);
        assert_non_null(strstr(err, "belongs to uid 65534"));
        free(err);
    }
    box_done(&b);
}

/* ---- 14. SQLite failures keep the snapshot; {"jobs": null}; an unusable path ----------------- */

static void test_sqlite_corrupt(void **state)
{
    tu_box_t b;
    char *err = NULL;
    (void)state;

    box_new(&b, "corrupt");
    tu_write_text(tu_box_path(&b, "ts.db"), "garbage garbage garbage garbage garbage garbage garbage");
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", NULL, env_a, &err), SA_EXIT_SQLITE, err);
    assert_non_null(strstr(err, "not an SQLite database"));
    free(err);
    assert_int_equal(spooled(&b), 1);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 0);
    /* a good file: the spooled snapshot lands first, then this run's */
    unlink(tu_box_path(&b, "ts.db"));
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:35:00Z", NULL, env_b, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    assert_int_equal(tu_count(client, b.db, "jobs", NULL), 20);
    box_done(&b);
}

static void test_sqlite_readonly(void **state)
{
    tu_box_t b;
    char *err = NULL, mnt[400], opt[500];
    const char *more[] = {opt, NULL};
    bool mounted = false;
    (void)state;

    box_new(&b, "readonly");
    snprintf(mnt, sizeof mnt, "%s/ro", b.dir);
    mkdir(mnt, 0750);
    snprintf(opt, sizeof opt, "--sqlite=%s/ts.db", mnt);
    /* make the file, then make it read-only: a read-only mount as root (root ignores modes) */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:25:00Z", more, env_a, &err), SA_EXIT_OK, err);
    free(err);
    if (geteuid() == 0) {
        char *data;
        size_t len;
        mounted = mount("tmpfs", mnt, "tmpfs", 0, "size=4m,mode=0750") == 0;
        if (!mounted) {
            printf("SKIP: cannot mount a tmpfs (%s): a read-only file cannot be made for root\n", strerror(errno));
            box_done(&b);
            skip();
        }
        /* the file the previous run wrote was hidden by the mount: write it again, then freeze */
        EXPECT_EXIT(run_at(&b, "2026-11-26T06:25:00Z", more, env_a, &err), SA_EXIT_OK, err);
        free(err);
        data = tu_read_file(tu_box_path(&b, "ro/ts.db"), &len);
        free(data);
        assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0);
    } else {
        chmod(tu_box_path(&b, "ro/ts.db"), 0440);
        chmod(mnt, 0550);
    }
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:30:00Z", more, env_b, &err), SA_EXIT_SQLITE, err);
    free(err);
    assert_int_equal(spooled(&b), 1);
    if (mounted)
        assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT, "size=4m,mode=0750"), 0);
    else {
        chmod(mnt, 0750);
        chmod(tu_box_path(&b, "ro/ts.db"), 0640);
    }
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:35:00Z", more, env_b, &err), SA_EXIT_OK, err);
    free(err);
    assert_int_equal(spooled(&b), 0);
    if (mounted)
        umount(mnt);
    box_done(&b);
}

static void test_jobs_null_refused(void **state)
{
    tu_box_t b;
    char *err = NULL, path[400], env_sq[500];
    const char *env[] = {env_a[0], env_sq, env_a[2], NULL};
    (void)state;

    box_new(&b, "jobsnull");
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", NULL, env_a, &err), SA_EXIT_OK, err);
    free(err);
    snprintf(path, sizeof path, "%s/null.json", b.dir);
    tu_write_text(path, "{\"meta\": {}, \"errors\": [], \"jobs\": null}");
    snprintf(env_sq, sizeof env_sq, "TU_SQUEUE=%s", path);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:33:00Z", NULL, env, &err), SA_EXIT_INPUT, err);
    assert_non_null(strstr(err, "expected an array"));
    assert_null(strstr(err, "tsdb.done")); /* the rejected snapshot is gone: nothing more is done to it */
    free(err);
    /* a snapshot holding nothing else: rejected whole, nothing more is done to it, the run goes on */
    {
        const char *only[] = {"--squeue", path, NULL};
        EXPECT_EXIT(run_at(&b, "2026-11-26T06:34:00Z", only, NULL, &err), SA_EXIT_INPUT, err);
        assert_null(strstr(err, "tsdb.done"));
        assert_null(strstr(err, "cannot write"));
        free(err);
    }
    /* not an empty queue: no unfinished job was marked vanished */
    assert_int_equal(tu_count(client, b.db, "jobs", "{\"vanished_at\": {\"$exists\": true}}"), 0);
    assert_int_equal(tu_count_entries(tu_box_path(&b, "spool/demo/rejected")), 2);
    assert_int_equal(spooled(&b), 0);
    box_done(&b);
}

static void test_sqlite_unusable_path(void **state)
{
    tu_box_t b;
    char *err = NULL, opt[500];
    const char *more[] = {opt, NULL};
    (void)state;

    box_new(&b, "sqlitepath");
    mkdir(tu_box_path(&b, "adir"), 0750);
    snprintf(opt, sizeof opt, "--sqlite=%s/adir", b.dir); /* a directory */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, env_a, &err), SA_EXIT_SQLITE, err);
    free(err);
    snprintf(opt, sizeof opt, "--sqlite=%s/missing/dir/ts.db", b.dir);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:29:00Z", more, env_a, &err), SA_EXIT_SQLITE, err);
    free(err);
    assert_int_equal(spooled(&b), 2);
    box_done(&b);
}

/* ---- security: a password never written anywhere; nothing world-readable --------------------- */

static void test_password_never_written(void **state)
{
    tu_box_t b;
    char *err = NULL, where[600], host[128], archive[400], *dump;
    const char *more[] = {archive, "-vv", NULL};
    static const char pw[] = "Pw-9f3c1e-never-written";
    json_t *all;
    int rc;
    (void)state;

    box_new(&b, "password");
    snprintf(host, sizeof host, "%.*s", (int)strcspn(uri + 10, "/?"), uri + 10);
    snprintf(archive, sizeof archive, "--archive-dir=%s/archive", b.dir);
    /* PLAIN: FerretDB's SQLite backend takes any user (a mongod without users refuses it) */
    snprintf(b.uri, sizeof b.uri, "mongodb://ingest:%s@%s/?authMechanism=PLAIN&authSource=%%24external&"
             "serverSelectionTimeoutMS=3000", pw, host);
    rc = run_at(&b, "2026-11-26T06:28:00Z", more, env_a, &err);
    if (rc == SA_EXIT_MONGO) {
        assert_null(strstr(err, pw));
        printf("SKIP: the test server refuses PLAIN authentication (%s); a run with a password cannot reach "
               "ingest_runs here (FerretDB, the suite's server, accepts it)\n", err);
        free(err);
        box_done(&b);
        skip();
    }
    EXPECT_EXIT(rc, SA_EXIT_OK, err);
    assert_null(strstr(err, pw));
    free(err);
    /* a failing run's messages too: MongoDB gone, then an unusable time series */
    snprintf(b.uri, sizeof b.uri, "mongodb://ingest:%s@127.0.0.1:1/?serverSelectionTimeoutMS=300", pw);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:29:00Z", more, env_b, &err), SA_EXIT_SPOOLED, err);
    assert_null(strstr(err, pw));
    free(err);
    /* argv and environment of every Slurm command, logs, spool, archive, set-aside, lock, cache, time series */
    assert_true(count_lines(tu_box_path(&b, "squeue.argv")) == 2);
    if (tu_grep_tree(b.dir, pw, where, sizeof where) != 0)
        fail_msg("the password is in %s", where);
    if (tu_grep_tree(b.dir, "authMechanism", where, sizeof where) != 0)
        fail_msg("the URI is in %s", where);
    /* and in the database: ingest_runs, clusters, jobs */
    all = tu_archive_docs(client, b.db, "ingest_runs");
    dump = json_dumps(all, 0);
    assert_int_equal(json_array_size(all), 1);
    assert_null(strstr(dump, pw));
    free(dump);
    json_decref(all);
    all = tu_archive_docs(client, b.db, "clusters");
    dump = json_dumps(all, 0);
    assert_null(strstr(dump, pw));
    free(dump);
    json_decref(all);
    box_done(&b);
}

static void test_nothing_world_readable(void **state)
{
    tu_box_t b;
    char *err = NULL, where[600], archive[400], sacct[400], env_sa[500];
    const char *more[] = {archive, NULL};
    const char *env[] = {env_a[0], env_a[1], env_sa, NULL};
    mode_t old = umask(022); /* a usual umask: slurm-ingest must not depend on the caller's */
    (void)state;

    box_new(&b, "modes");
    snprintf(archive, sizeof archive, "--archive-dir=%s/archive", b.dir);
    snprintf(sacct, sizeof sacct, "%s/bad-sacct.txt", b.dir);
    write_bad_sacct(sacct); /* so that records are set aside */
    snprintf(env_sa, sizeof env_sa, "TU_SACCT=%s", sacct);
    snprintf(b.uri, sizeof b.uri, "%s", unreachable); /* a spooled snapshot stays */
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:28:00Z", more, env, &err), SA_EXIT_SPOOLED, err);
    free(err);
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    EXPECT_EXIT(run_at(&b, "2026-11-26T06:40:00Z", more, env, &err), SA_EXIT_OK, err);
    free(err);
    unlink(sacct);
    assert_int_equal(access(tu_box_path(&b, "spool/demo/setaside"), F_OK), 0);
    assert_int_equal(access(tu_box_path(&b, "ts.db"), F_OK), 0);
    {
        /* the fake commands' own files are the test's; everything else is slurm-ingest's */
        static const char *const of_ingest[] = {"lock", "spool", "archive", "ts.db", "ts.db-wal", "ts.db-shm"};
        for (size_t i = 0; i < sizeof of_ingest / sizeof of_ingest[0]; i++) {
            struct stat st;
            const char *p = tu_box_path(&b, of_ingest[i]);
            if (lstat(p, &st) != 0)
                continue;
            if (S_ISREG(st.st_mode) ? (st.st_mode & S_IROTH) != 0 : tu_world_readable(p, where, sizeof where) != 0)
                fail_msg("%s is readable by every user", S_ISREG(st.st_mode) ? p : where);
        }
    }
    umask(old);
    box_done(&b);
}

/* ---- a requeued job's records merged twice -------------------------------------------------- */

/*
 * Every recovery merges a snapshot a second time, so merging must be idempotent, also for
 * job 1024 of fixtures/gen (requeued, pending again), whose second merge once added a
 * history entry "PENDING at the requeue time, from squeue". test_faults and test_oom keep
 * that job in their inputs.
 */
static void test_requeued_merged_twice(void **state)
{
    tu_box_t b;
    char *err = NULL;
    const char *files[] = {"--squeue", SA_FIXTURES_DIR "/gen/v0.0.40/squeue.json", "--sacct",
                           SA_FIXTURES_DIR "/gen/v0.0.40/sacct-ingest.txt", NULL};
    json_t *once, *twice;
    tu_cmp_t cmp;
    bool same;
    (void)state;

    box_new(&b, "twice");
    EXPECT_EXIT(run_at(&b, "2026-10-15T12:00:00Z", files, NULL, &err), SA_EXIT_OK, err);
    free(err);
    once = tu_archive_docs(client, b.db, "jobs");
    unlink(tu_box_path(&b, "lock/demo.jobcache.sqlite")); /* as after a crash: nothing known, all merged again */
    EXPECT_EXIT(run_at(&b, "2026-10-15T12:00:00Z", files, NULL, &err), SA_EXIT_OK, err);
    free(err);
    twice = tu_archive_docs(client, b.db, "jobs");
    memset(&cmp, 0, sizeof cmp);
    same = tu_archive_compare(once, twice, &cmp);
    json_decref(once);
    json_decref(twice);
    box_done(&b);
    if (!same)
        fail_msg("merging fixtures/gen/v0.0.40 twice is not idempotent: %zu lost, %zu duplicated, %zu differ (first: %s)",
                 cmp.lost, cmp.duplicated, cmp.differ, cmp.first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdin_read_once),
        cmocka_unit_test(test_watermark_after_landing),
        cmocka_unit_test(test_watermark_kill),
        cmocka_unit_test(test_replay_takes_lock),
        cmocka_unit_test(test_superseded_once),
        cmocka_unit_test(test_revoked_is_final),
        cmocka_unit_test(test_spool_max),
        cmocka_unit_test(test_killed_capture_leftover),
        cmocka_unit_test(test_backfill_archive_full),
        cmocka_unit_test(test_bad_records_set_aside),
        cmocka_unit_test(test_mongo_errors),
        cmocka_unit_test(test_two_writers_named),
        cmocka_unit_test(test_uri_never_leaks),
        cmocka_unit_test(test_server_limits),
        cmocka_unit_test(test_unsafe_dirs),
        cmocka_unit_test(test_planted_symlink),
        cmocka_unit_test(test_planted_sqlite_link),
        cmocka_unit_test(test_other_users_files),
        cmocka_unit_test(test_sqlite_corrupt),
        cmocka_unit_test(test_sqlite_readonly),
        cmocka_unit_test(test_jobs_null_refused),
        cmocka_unit_test(test_sqlite_unusable_path),
        cmocka_unit_test(test_password_never_written),
        cmocka_unit_test(test_nothing_world_readable),
        cmocka_unit_test(test_requeued_merged_twice),
    };
    int rc;

    client = tu_mongo_client("durable", &db_base);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    if (strncmp(uri, "mongodb://", 10) != 0 || strchr(uri, '@')) {
        printf("SKIP test_durable: SLURM_TEST_MONGO_URI must be a plain mongodb://host:port/ URI (the cases build "
               "URIs with other options on its host)\n");
        return 77;
    }
    if (getenv("SA_TEST_FILTER")) /* one case: SA_TEST_FILTER=test_name */
        cmocka_set_test_filter(getenv("SA_TEST_FILTER"));
    rc = tu_run_group_tests("durable", tests, NULL, NULL);
    mongoc_client_destroy(client);
    free(db_base);
    return rc;
}
