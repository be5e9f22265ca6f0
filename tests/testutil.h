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

/* Directory of the real Slurm samples (env SLURM_SAMPLES_DIR overrides). */
const char *tu_samples_dir(void);

/* Reads a whole file (abort on failure). *len may be NULL. Caller frees. */
char *tu_read_file(const char *path, size_t *len);

/* Path of a sample: tu_sample("squeue/x.json") -> static buffer (valid until next call). */
const char *tu_sample(const char *rel);

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
 * terminated; may be NULL); returns its exit status (128+signal when killed) and
 * fills *out and *err with what it printed (caller frees).
 */
int tu_run(char *const argv[], char *const env_extra[], char **out, char **err);

/* State as "BASE+FLAG+FLAG" (static buffer, valid until next call). */
const char *tu_state(const sa_state_t *st);

#endif
