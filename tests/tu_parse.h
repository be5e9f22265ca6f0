/*
 * tu_parse.h - the test helpers that parse (they link ingest/'s parsers: sa_ingest): the
 * records of a parse, the generated cluster's files parsed, and the fixtures' job
 * documents merged. The rest of the helpers are testutil.h's (schema/ only).
 */
#ifndef SA_TU_PARSE_H
#define SA_TU_PARSE_H

#include "testutil.h"

#include "sa_parse.h"

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

/* Parses fixtures/gen/<version>/<file> (a header-less sacct file with the field list its
 * manifest.json records); fails the test with the file and the message on error. */
void tu_parse_gen(const char *version, const char *file, tu_parsed_t *out);

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

/* A reader of data[0..len) that hands out one byte per read (a pipe at its slowest). */
void tu_reader_one_byte(sa_reader_t *r, const char *data, size_t len);

#endif
