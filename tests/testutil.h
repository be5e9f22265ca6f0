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

#include "sa_model.h"
#include "sa_parse.h"

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


/*
 * Collected records of one parse: every job and node the parser emitted, stolen.
 */
typedef struct {
    sa_job_t **jobs;
    size_t njobs;
    sa_node_t **nodes;
    size_t nnodes;
    sa_meta_t meta;
    sa_kind_t kind;
} tu_parsed_t;

/* Parses a file with sa_parse_any (topts may be NULL). Returns false and fills error on failure. */
bool tu_parse_file(const char *path, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error);
/* Parses what a reader gives with sa_parse_any. */
bool tu_parse_reader(sa_reader_t *r, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error);
/* Parses bytes with sa_parse_any. */
bool tu_parse_mem(const char *data, size_t len, const sa_sacct_text_opts_t *topts, tu_parsed_t *out,
                  sa_error_t *error);
void tu_parsed_clear(tu_parsed_t *p);

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
/* Parses fixtures/gen/<version>/<file> (a header-less sacct file with the field list its
 * manifest.json records); fails the test with the file and the message on error. */
void tu_parse_gen(const char *version, const char *file, tu_parsed_t *out);
/* The field list of a header-less sacct file of fixtures/gen/<version> (caller frees), or NULL. */
char *tu_gen_fields(const char *version, const char *file);
/* A number of fixtures/gen/<version>/manifest.json: files.<file>.<key> ("jobs", "nodes"...), -1 if absent. */
int64_t tu_gen_count(const char *version, const char *file, const char *key);
/* Parses fixtures/<rel> (no sacct options); fails the test on error. */
void tu_parse_fixture(const char *rel, tu_parsed_t *out);

/*
 * Merges every job record of the repository's fixtures - fixtures/gen/<each version>/ and
 * fixtures/slurm-22.05/, each directory's squeue and sacct files in name order, as cluster
 * "fx" - with sa_jobdoc_merge (no server), and calls fn with each resulting document
 * (borrowed), the ones displaced by id reuse included; where names the directory. Returns
 * the number of documents.
 */
typedef void (*tu_doc_fn)(const json_t *doc, const char *where, void *ctx);
size_t tu_merge_fixtures(tu_doc_fn fn, void *ctx);

/* Finds a parsed job by raw job id (first match, or the nth match with tu_find_job_n). */
sa_job_t *tu_find_job(tu_parsed_t *p, int64_t job_id);
sa_job_t *tu_find_job_n(tu_parsed_t *p, int64_t job_id, size_t nth);
sa_node_t *tu_find_node(tu_parsed_t *p, const char *name);

/*
 * Field list of a sample captured with sacct -n (no header), from SOURCES.md, or
 * NULL for a sample with a header. rel is "sacct-parsable/<file>".
 */
const char *tu_sample_fields(const char *rel);

/* Every record of a parse as one JSON text (records in order); caller frees. */
char *tu_parsed_dump(const tu_parsed_t *p);

/*
 * The test MongoDB server: SLURM_TEST_MONGO_URI (tools/test starts a server and
 * sets it). Returns NULL after printing why when it is not set; the caller then
 * exits with 77 (ctest's "skipped"), never silently. *db_name receives a fresh
 * database name unique to this process (caller frees); tu_mongo_drop() removes it.
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

/* State as "BASE+FLAG+FLAG" (static buffer, valid until next call). */
const char *tu_state(const sa_state_t *st);

#endif
