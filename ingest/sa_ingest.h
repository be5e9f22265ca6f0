/*
 * sa_ingest.h - one snapshot, from its kept files to the archive: parse (records that
 * cannot be parsed are set aside), write the time series, write the jobs.
 *
 * A snapshot's inputs are files already kept durably (a spool or archive snapshot,
 * sa_snapshot.h): nothing here reads Slurm or standard input. Each input is streamed
 * twice at most and never held whole in memory: the first pass parses and validates
 * every record and keeps only the records that changed (the job cache's digests tell),
 * the second (only when more changed than fit in memory) picks the changed jobs'
 * records out again and writes them in batches. The job ids a run collects (squeue's
 * listing, each input's changed jobs) go past a few thousand to the job cache's
 * temporary table, and a sinfo's nodes are held without their unmodelled keys and only
 * until the time series has landed, so memory does not grow with the queue. An input
 * that cannot be parsed at all (truncated JSON, an HTML page, errors[] from Slurm) is
 * refused whole and writes nothing; the other inputs of the snapshot land.
 */
#ifndef SA_INGEST_H
#define SA_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_archive.h"
#include "sa_error.h"
#include "sa_jobcache.h"
#include "sa_parse.h"

/* The kinds of input one snapshot may have, in the order they are applied. */
typedef enum { SA_IN_SINFO = 0, SA_IN_SQUEUE, SA_IN_SACCT, SA_IN_SDIAG, SA_IN_COUNT } sa_input_kind_t;

const char *sa_input_kind_name(sa_input_kind_t k); /* "sinfo", "squeue", "sacct", "sdiag" */

/* One snapshot to ingest. */
typedef struct {
    const char *cluster;
    int64_t at;                       /* observation time */
    const char *files[SA_IN_COUNT];   /* kept input files, NULL when absent (borrowed) */
    const char *names[SA_IN_COUNT];   /* what messages call them: the file the user gave
                                         (NULL: the kept file's path) */
    sa_sacct_text_opts_t topts;       /* for sacct text */
    bool tsdb_done;                   /* its time series part landed already */
} sa_snapshot_t;

/* Where a snapshot goes. */
typedef struct {
    sa_archive_t *archive;       /* NULL: jobs are parsed, not written (MongoDB away, --no-mongo) */
    sa_jobcache_t *cache;        /* NULL: every job document is read back before merging */
    const char *sqlite_path;     /* NULL: no time series */
    int64_t max_gap_s;           /* time series gap limit */
    const char *setaside_dir;    /* where records set aside are kept (NULL: nowhere, only counted) */
    bool verify;                 /* merge every record, and count the cache's wrong claims */
    bool check_stored;           /* a backfill's window: a record the cache skips is merged again when its
                                    job's document is gone (one _id query per 1000 such records) */
    size_t keep_records;         /* changed records held at once (0 = 2000); past it, read again where they are */
} sa_ingest_env_t;

typedef struct {
    sa_archive_stats_t jobs;
    size_t nodes;
    size_t squeue_records, sacct_records;
    size_t setaside, repaired;   /* records set aside; records repaired and kept */
    size_t second_passes;        /* inputs whose changed records were read again where they are */
    size_t cache_mismatches;     /* --verify: documents the cache claimed current that were not */
    size_t cache_restored;       /* check_stored: records the cache skipped whose document was gone, merged again */
    double ms_parse, ms_mongo, ms_sqlite;
    char *slurm_release, *data_parser;
    sa_strv_t warnings;   /* Slurm's warnings[] */
    /* nodes of a snapshot whose GPUs Slurm did not say per node (grouped sinfo --json):
     * the most in one snapshot, carried from an earlier per-node observation or left unknown */
    size_t nodes_gpu_carried, nodes_gpu_unknown;
    /* the Prometheus import: requests, runs summarised, runs left for a later run, documents in its to-do */
    size_t prom_queries, prom_runs, prom_left, prom_todo;
} sa_ingest_stats_t;

void sa_ingest_stats_init(sa_ingest_stats_t *st);
void sa_ingest_stats_clear(sa_ingest_stats_t *st);

/* What became of a snapshot. */
typedef struct {
    unsigned rejected;           /* inputs refused whole (bit per sa_input_kind_t) */
    sa_error_t why;              /* the first input refused: why (its domain sets the exit code) */
    bool tsdb_done;              /* its time series part has landed (now or before) */
    bool jobs_done;              /* its jobs have landed (false when env->archive is NULL) */
} sa_ingest_outcome_t;

/*
 * Ingests one snapshot. Returns false (with *error) when a store failed: SQLite
 * (SA_ERR_SQLITE), MongoDB (SA_ERR_MONGO, SA_ERR_UNREACHABLE), memory: the snapshot
 * must stay where it is, to be ingested again. Inputs refused whole are not a
 * failure of the call: they are in out->rejected (the caller sets them aside) and the
 * rest landed.
 */
bool sa_ingest_snapshot(const sa_ingest_env_t *env, const sa_snapshot_t *snap, sa_ingest_stats_t *stats,
                        sa_ingest_outcome_t *out, sa_error_t *error);

#endif
