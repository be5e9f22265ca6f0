/*
 * tu_archive.h - what the "nothing lost" tests (issue 10) share: a sandbox in which
 * slurm-ingest runs as the timer runs it (fake Slurm commands on PATH, its own lock,
 * spool and time series), a MongoDB wire-protocol server of the test's own that can be
 * stopped, killed and restarted, and the archive read back without run metadata so two
 * archives can be compared.
 */
#ifndef SA_TU_ARCHIVE_H
#define SA_TU_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct _mongoc_client_t;

/* ---- the sandbox -------------------------------------------------------------------------- */

/*
 * DIR/bin holds fake sinfo, squeue, sacct and sdiag: each prints the file named by
 * TU_SINFO, TU_SQUEUE, TU_SACCT or TU_SDIAG in its environment (sdiag without one says
 * "unrecognized option" and exits 1, as Slurm 22.05's does; sacct prints an empty
 * window in slurm-ingest's format). Every command appends its arguments to DIR/<name>.argv and its environment to
 * DIR/<name>.env. DIR/lock, DIR/spool and DIR/ts.db are the run's.
 */
typedef struct {
    char dir[256];
    char db[128];          /* MongoDB database */
    char uri[512];         /* SLURM_INGEST_MONGO_URI of the runs */
    const char *bin;       /* the slurm-ingest to run (default SA_INGEST_BIN) */
    const char *cluster;   /* "demo" */
} tu_box_t;

/* Makes a sandbox /tmp/sa-<name>-XXXXXX for database db on uri. */
void tu_box_init(tu_box_t *b, const char *name, const char *uri, const char *db);
/* Removes the sandbox directory (not the database). */
void tu_box_destroy(tu_box_t *b);

/* DIR/rel in a static buffer (valid until the next call). */
const char *tu_box_path(const tu_box_t *b, const char *rel);

/*
 * Runs the sandbox's slurm-ingest with its options (--cluster, --db, --lock-dir,
 * --spool-dir, --sqlite, the fake commands) then args (NULL-terminated, may be NULL),
 * with env ("K=V", NULL-terminated, may be NULL) added to the environment. Returns the
 * exit status (128 + signal when killed). *err (may be NULL) receives stderr; caller frees.
 */
int tu_box_run(const tu_box_t *b, const char *const args[], const char *const env[], char **err);

/* The same run, with its standard output too (*out, may be NULL; caller frees). */
int tu_box_run_out(const tu_box_t *b, const char *const args[], const char *const env[], char **out, char **err);

/* The same run with standard input fed from the file stdin_file through a pipe. */
int tu_box_run_piped(const tu_box_t *b, const char *const args[], const char *const env[], const char *stdin_file,
                     char **err);

/* Starts the same run without waiting (stdout/stderr to DIR/bg-<pid>.log); tu_wait() reaps it. */
pid_t tu_box_start(const tu_box_t *b, const char *const args[], const char *const env[]);
int tu_wait(pid_t pid);

/* ---- a server of the test's own ------------------------------------------------------------ */

typedef struct {
    pid_t pid;
    int port;
    char bin[512];      /* mongod or FerretDB */
    bool mongod;
    char datadir[256];
    char log[300];
    char uri[128];
} tu_server_t;

/*
 * Starts a server on a free loopback port with a fresh data directory: mongod when it is
 * on PATH, else the FerretDB that tools/mongo-test-server builds and caches. False with
 * why (a line saying why; the caller skips) when neither can start.
 */
bool tu_server_start(tu_server_t *s, char *why, size_t whylen);
/* Starts it again on the same port and data directory. */
bool tu_server_restart(tu_server_t *s, char *why, size_t whylen);
/* Stops it: sig = SIGKILL (crash) or SIGTERM; waits until it is gone. */
void tu_server_stop(tu_server_t *s, int sig);
/* Stops it and removes its data. */
void tu_server_destroy(tu_server_t *s);

/* ---- the archive read back -------------------------------------------------------------------- */

/*
 * Every document of db.coll, sorted by _id, as a JSON array, minus run metadata: what
 * depends on how often or in which order the runs wrote, not on what Slurm said.
 *   _v          the document's version: one more per replace (retries, replays, conflicts);
 *   seen.last   moves with writes only (a steady poll does not move it), so it depends on
 *               which observations made a write;
 *   _merge.at   the observation time of the record that last changed the current fields
 *               (same reason);
 *   runs[]._key.at  the same for each run;
 *   exit._key.at, derived_exit._key.at  the same for the exit codes' final record (a run that skipped sacct
 *               while MongoDB was down sees the final record at a later poll).
 * Everything else (_id, current fields, history, runs, seen.first, vanished_at, extra) is
 * compared. New reference.
 */
json_t *tu_archive_docs(struct _mongoc_client_t *client, const char *db, const char *coll);

/*
 * The same for the documents whose _id is in ids[0..n), read by _id 1,000 at a time (on
 * the FerretDB test server a scan of 50,000 documents takes minutes, lookups by _id do not).
 */
json_t *tu_archive_docs_by_id(struct _mongoc_client_t *client, const char *db, const char *coll, char **ids,
                              size_t n);

/* The sum of a numeric field ("counts.conflicts") over every document of db.coll. */
long long tu_sum(struct _mongoc_client_t *client, const char *db, const char *coll, const char *dotted);

/* Number of documents of db.coll matching the JSON filter (NULL = all). */
long long tu_count(struct _mongoc_client_t *client, const char *db, const char *coll, const char *filter_json);

/* The first document of db.coll a find gives (relaxed JSON; NULL when none). New reference. */
struct _bson_t;
json_t *tu_find_one(struct _mongoc_client_t *client, const char *db, const char *coll, const struct _bson_t *filter,
                    const struct _bson_t *opts);

/* One document of db.coll by its _id, as JSON (NULL when absent). New reference. */
json_t *tu_find_id(struct _mongoc_client_t *client, const char *db, const char *coll, const char *id);

/* How an archive compares with the archive of an uninterrupted run. */
typedef struct {
    size_t compared;    /* documents of the reference */
    size_t lost;        /* reference documents missing, or with history/runs entries missing */
    size_t duplicated;  /* documents the reference does not have, or with entries twice */
    size_t differ;      /* other differences */
    char first[600];    /* the first difference, for the failure message */
} tu_cmp_t;

/* Compares got with want (arrays from tu_archive_docs); adds to *c. True if equal. */
bool tu_archive_compare(const json_t *want, const json_t *got, tu_cmp_t *c);

/*
 * Every row of every table of the time series at path, tables by name and rows in
 * their natural order, as text (caller frees); NULL when the file cannot be opened.
 */
char *tu_tsdb_dump(const char *path);

/* Writes a JSON value to path (for a failing test to point at). */
void tu_json_to_file(const json_t *v, const char *path);

/*
 * Copies a capture without the records of one job: squeue/sacct JSON ("jobs" entries
 * whose job_id is it) or sacct text (lines whose JobIDRaw, the second field, is it or
 * "<it>.<step>").
 */
void tu_copy_without_job(const char *src, const char *dst, long long job_id);

/* ---- the export's cluster --------------------------------------------------------------- */

/*
 * Ingests fixtures/prom-export (sinfo -N, squeue and sdiag --json of "promx" at
 * 2026-10-15T12:00:00Z; sdiag: this file instead when not NULL) into database db of the test
 * server, with the time series dir/ts.sqlite: the cluster of test_prom_export and
 * test_cloudwatch. Fails the test when slurm-ingest does.
 */
void tu_ingest_prom_export(const char *db, const char *dir, const char *sdiag);

/*
 * Runs `tool start ARGS...` (args NULL-terminated; tools/aws-test-server, prometheus-test-server)
 * and returns its stdout, where it prints its URLs (caller frees). When the tool skips (exit 77:
 * what it needs is not installed) the program exits 77 saying why on a line "SKIP prog: ...";
 * another failure fails the test.
 */
char *tu_tool_start(const char *prog, const char *tool, const char *const *args);

/* Runs `tool stop dir` (tools/aws-test-server, prometheus-test-server: it stops what `start dir` started). */
void tu_tool_stop(const char *tool, const char *dir);

#endif
