/*
 * sa_ingest.h - one ingest run: capture (or read) Slurm's output, parse all of it,
 * then write jobs to MongoDB and node states to SQLite.
 *
 * Whole or nothing: every input is parsed before anything is written, so a bad file
 * writes nothing. If MongoDB is unreachable the raw captures are spooled and
 * replayed (in time order) at the start of the next run; replay is idempotent, so a
 * run cut short by a MongoDB failure converges when its spool is replayed.
 */
#ifndef SA_INGEST_H
#define SA_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_archive.h"
#include "sa_error.h"
#include "sa_parse.h"

/* The kinds of input one snapshot may have, in the order they are applied. */
typedef enum { SA_IN_SINFO = 0, SA_IN_SQUEUE, SA_IN_SACCT, SA_IN_SDIAG, SA_IN_COUNT } sa_input_kind_t;

const char *sa_input_kind_name(sa_input_kind_t k); /* "sinfo", "squeue", "sacct", "sdiag" */

/* One captured input: a file (path, "-" = stdin) or bytes in memory. */
typedef struct {
    const char *path; /* borrowed; NULL when data is used */
    char *data;       /* owned when not NULL */
    size_t len;
    bool present;
} sa_input_t;

typedef struct {
    const char *cluster;
    int64_t at;                 /* observation time */
    sa_input_t in[SA_IN_COUNT];
    sa_sacct_text_opts_t topts; /* for sacct text inputs */
    const char *sqlite_path;    /* NULL: no time series */
    int64_t max_gap_s;          /* time series gap limit */
} sa_snapshot_t;

typedef struct {
    sa_archive_stats_t jobs;
    size_t nodes;
    size_t squeue_records, sacct_records;
    double ms_parse, ms_mongo, ms_sqlite;
    char *slurm_release, *data_parser;
    sa_strv_t warnings;   /* Slurm's warnings[] */
} sa_ingest_stats_t;

void sa_ingest_stats_init(sa_ingest_stats_t *st);
void sa_ingest_stats_clear(sa_ingest_stats_t *st);

/*
 * Reads a whole file (path, or "-" for stdin) into *data (caller frees), at most cap
 * bytes; past that the error is "<path>: <too_big>". For sdiag captures, and for
 * spooling and archiving captured files.
 */
bool sa_ingest_read_file(const char *path, size_t cap, const char *too_big, char **data, size_t *len,
                         sa_error_t *error);

/*
 * Parses every present input of the snapshot, then writes: jobs (squeue, then sacct)
 * to the archive, nodes (and sdiag) to the time series, and the cluster's times.
 * a may be NULL (then jobs are parsed but not written; used with --sqlite only).
 * *parsed_ok (may be NULL) tells whether the failure, if any, came after parsing.
 */
bool sa_ingest_snapshot(sa_archive_t *a, const sa_snapshot_t *snap, sa_ingest_stats_t *stats, bool *parsed_ok,
                        sa_error_t *error);

#endif
