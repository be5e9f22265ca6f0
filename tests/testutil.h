/*
 * testutil.h - helpers shared by the cmocka test programs.
 * cmocka needs these includes in this order.
 */
#ifndef SA_TESTUTIL_H
#define SA_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>

/*
 * Every test program runs its cases through tu_run_group_tests (cmocka_run_group_tests_name's
 * arguments) and returns what it returns: 1 when a case of any group run so far failed
 * (or a group's setup), else 77 (ctest: skipped) when none of their cases ran (each that
 * could not said why on a line "SKIP ...", and called skip()), else 0. So a program that
 * ran nothing is never "Passed". skip() is counted here: it is cmocka's, through tu_skip_.
 */
#define tu_run_group_tests(name, tests, group_setup, group_teardown)                                 \
    tu_run_group_(name, tests, sizeof(tests) / sizeof((tests)[0]), group_setup, group_teardown)
int tu_run_group_(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction group_setup,
                  CMFixtureFunction group_teardown);
#undef skip
#define skip() tu_skip_(__FILE__, __LINE__)
void tu_skip_(const char *file, int line);

#include <jansson.h>

#include "sa_model.h"

/*
 * The real Slurm samples live outside the repository (../shared/slurm-samples; env
 * SLURM_SAMPLES_DIR overrides). A fresh clone does not have them: a test case that reads
 * them calls tu_require_samples() first, which prints why and skips the case (cmocka
 * skip()) when they are absent. tu_samples_dir() and tu_sample() called without that check
 * print why and end the whole program with 77 (ctest: skipped) when they are absent.
 */
bool tu_samples_present(void);
void tu_require_samples(void);

/* Directory of the real Slurm samples. */
const char *tu_samples_dir(void);

/* Reads a whole file (abort on failure). *len may be NULL. Caller frees. */
char *tu_read_file(const char *path, size_t *len);

/* Path of a sample: tu_sample("squeue/x.json") -> static buffer (valid until next call). */
const char *tu_sample(const char *rel);

/*
 * A capture that is in the shared samples and, of the same scenario, in fixtures/ (our
 * own capture, e.g. "slurm-22.05/squeue-A.json"): the sample when ../shared is there,
 * else the fixture (tu_sample's or tu_fixture's static buffer). Without a fixture, as
 * tu_sample.
 */
const char *tu_sample_or_fixture(const char *rel, const char *fixture);

/* Path of a file of the repository's fixtures/: tu_fixture("gen/v0.0.40/squeue.json"); static buffer. */
const char *tu_fixture(const char *rel);

/*
 * fixtures/gen/<version>/: a small synthetic cluster written by tools/gen-cluster for every
 * data_parser version (fixtures/gen/README.md has the commands). The same scenario in each:
 * observation time TU_GEN_AT, the scenario's job ids below (each manifest.json lists them under
 * "scenario_jobs"; test_samples checks they agree), nodes c0001.. (16 CPUs), ga001.. (A100),
 * gh001.. (H100), gm001.. (MIG), gu01 (untyped GPUs), gz01 (two types) with the states of
 * tools/gen-cluster's NODE_SCENARIO.
 */
#define TU_GEN_AT INT64_C(1792065600) /* 2026-10-15T12:00:00Z */
enum {
    TU_J_OK = 1001, TU_J_TRAIN, TU_J_MIG, TU_J_LLM, TU_J_PERTASK, TU_J_DRAINEE, TU_J_FAIL3, TU_J_SIGKILL,
    TU_J_TIMEOUT, TU_J_CANCELLED, TU_J_CANCEL_PENDING, TU_J_OOM, TU_J_NODEFAIL, TU_J_COMPLETED, TU_J_EPILOG,
    TU_J_QUEUED, TU_J_BIG, TU_J_DEP, TU_J_HELD, TU_J_LATER, TU_J_QOS_LIMIT, TU_J_MULTI_PART, TU_J_UNAVAIL,
    TU_J_REQUEUED, TU_J_REQUEUED_RUN, TU_J_REQUEUED_DONE, TU_J_BOOTING, TU_J_FOREVER, TU_J_PAUSED,
    TU_J_SWEEP,              /* 1030: array 1-100%10; tasks 1..14 have ids 1031..1044, 15-100 pending */
    TU_J_SMALL_ARRAY = 1045, /* array 1-4: tasks 1..3 are 1046..1048, task 4 kept the master's id */
    TU_J_HET_RUN = 1049,     /* 1049+0, 1049+1 (raw id 1050), running */
    TU_J_HET_WAIT = 1051,    /* 1051+0, 1051+1, pending */
    TU_J_HOSTILE = 1053, TU_J_LEGACY_GPU, TU_J_TWO_TYPES,
};
#define TU_HOSTILE_NAME "na\xc3\xafve \"quoted\" \\ back/slash \xe2\x98\x83"
extern const char *const tu_gen_versions[]; /* "v0.0.37" .. "v0.0.44", NULL-terminated */
/* The version number: 37 for "v0.0.37". */
int tu_gen_vn(const char *version);
/* The field list of a header-less sacct file of fixtures/gen/<version> (caller frees), or NULL. */
char *tu_gen_fields(const char *version, const char *file);
/* A number of fixtures/gen/<version>/manifest.json: files.<file>.<key> ("jobs", "nodes"...), -1 if absent. */
int64_t tu_gen_count(const char *version, const char *file, const char *key);

/*
 * The test MongoDB server: SLURM_TEST_MONGO_URI (tools/test starts a server and
 * sets it). Returns NULL after printing why ("SKIP ...") when it is not set; the caller
 * then exits with 77 (ctest's "skipped") or skips its case, never silently. A server
 * promised (the URI set) that does not answer fails: the case, or called outside one,
 * the program (exit 255); once it did not answer, every later call fails at once.
 * *db_name receives a fresh database name unique to this process (caller frees);
 * tu_mongo_drop() removes it.
 */
struct _mongoc_client_t;
struct _mongoc_client_t *tu_mongo_client(const char *test_name, char **db_name);
void tu_mongo_drop(struct _mongoc_client_t *client, const char *db_name);

/*
 * Runs a program (argv[0] is the path) with extra environment entries ("K=V", NULL-
 * terminated; may be NULL) and MONGOC_DISABLE_SHM=1; returns its exit status (128+signal
 * when killed) and fills *out and *err with what it printed (caller frees).
 */
int tu_run(char *const argv[], char *const env_extra[], char **out, char **err);

/*
 * Runs slurm-ingest (bin) with extra[] (NULL-terminated) for cluster, MongoDB database db
 * at uri (SLURM_INGEST_MONGO_URI), and its time series, lock and spool under dir
 * (ts.sqlite, dir, spool); returns its exit status. An exit other than 0 or 9 prints its
 * stderr; *err_out (may be NULL) receives that stderr (caller frees).
 */
int tu_run_ingest(const char *bin, const char *uri, const char *db, const char *dir, const char *cluster,
                  const char *const *extra, char **err_out);

/*
 * Runs slurm-report (bin) with first[] then args[] (each NULL-terminated, either may be NULL;
 * options may stand before the report's name: slurm-report permutes them as getopt does), with
 * SLURM_REPORT_MONGO_URI=uri and env_extra ("NAME=value", may be NULL) in its environment; returns
 * its exit status, *out and *err what it printed (as tu_run). Aborts rather than overflow its argv.
 */
int tu_run_report(const char *bin, const char *uri, const char *env_extra, const char *const *first,
                  const char *const *args, char **out, char **err);

/*
 * utilization --summary --json -t hours: the row of resource res ("cpu", "mem", "gpu") with GPU
 * type "*", its class cls ("allocated", "idle", ...) in seconds; 0 when there is no such row.
 */
double tu_summary_seconds(const json_t *summary, const char *res, const char *cls);

/* ---- libmongoc's shared memory (issue 22) ---- */

/* True if /dev/shm/mongoc-<pid> (libmongoc's counters of process pid) exists. */
bool tu_mongoc_shm_exists(long pid);

/*
 * Runs a program as tu_run does, but without MONGOC_DISABLE_SHM in its environment and
 * with /dev/shm/mongoc-<its pid> already there when it starts, as a killed process of the
 * same pid leaves it (the file is removed afterwards). Returns its exit status; *err
 * receives what it printed on stderr (caller frees); its stdout is discarded.
 */
int tu_run_stale_shm(char *const argv[], char *const env_extra[], char **err);

/*
 * Starts a program without MONGOC_DISABLE_SHM in its environment, its standard input a
 * pipe kept open (*in_fd receives the write end; caller closes) and its output discarded,
 * and waits up to 10 s until it has slept twice 200 ms apart (blocked in a read or a
 * poll: its libraries' constructors have run). Returns its pid, or -1 if it never slept
 * (it is then killed and reaped).
 */
long tu_start_sleeping(char *const argv[], char *const env_extra[], int *in_fd);

/* The string member key of object o (borrowed), NULL when o or the member is absent or not a string. */
const char *tu_json_str(const json_t *o, const char *key);

/* State as "BASE+FLAG+FLAG" (static buffer, valid until next call). */
const char *tu_state(const sa_state_t *st);

/* ---- files ----------------------------------------------------------------------------------------- */

/* Writes data to path (created 0644, replaced). */
void tu_write_file(const char *path, const void *data, size_t len);
/* Writes a string to path (tu_write_file with its length). */
void tu_write_text(const char *path, const char *text);
/* Makes a shell script at path (0755) with the body after "#!/bin/sh". */
void tu_write_script(const char *path, const char *body);
/* rm -rf path, without following symbolic links. */
void tu_rm_rf(const char *path);
/* Files under dir (recursive, not following links) holding needle: 0 when none; the first in *where. */
int tu_grep_tree(const char *dir, const char *needle, char *where, size_t wherelen);
/* Regular files under dir that others can read (mode & 004): count, the first in *where. */
int tu_world_readable(const char *dir, char *where, size_t wherelen);
/* Entries directly in dir (not . and ..), -1 when dir cannot be read. */
int tu_count_entries(const char *dir);

/* ---- stderr ---- */

/* What this process writes on stderr, captured in a temporary file (sa_log's lines, say). */
typedef struct {
    char path[128];
    int saved;
    int fd;
} tu_capture_t;
/* Starts capturing stderr. */
void tu_stderr_capture(tu_capture_t *c);
/* Restores stderr and returns what was written meanwhile (caller frees). */
char *tu_stderr_end(tu_capture_t *c);

/* ---- documents ---- */

/* What a renderer writes to a FILE, in memory (open_memstream). */
typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} tu_mem_t;
/* A FILE writing into m (fails the test when none can be made). */
FILE *tu_mem_open(tu_mem_t *m);
/* Closes the FILE; returns what was written (caller frees). */
char *tu_mem_close(tu_mem_t *m);

/*
 * True when s is well-formed XML as the SVG the reports write is (an optional <?xml ...?>
 * declaration, elements opened and closed in order or self-closed, one root, no '<' in
 * text and every '&' an entity); else false with why (a line naming the first fault).
 */
bool tu_xml_well_formed(const char *s, char *why, size_t whylen);

#endif
