/*
 * sa_jobcache.h - what the archive last merged, per job, kept beside the time series:
 * change detection that does not ask MongoDB.
 *
 * One SQLite file per cluster (default <lock-dir>/<cluster>.jobcache.sqlite) holds
 *   - rec:  for each record key (job id, source, submit, start) the digest of the record
 *           last merged into the archive (sa_job_digest);
 *   - job:  each job id the archive is known to hold, whether it is live (unfinished and
 *           not marked vanished), and when the cache last touched it;
 *   - meta: the cache's token (random, made when the file is created) and the archive's
 *           write sequence number after this cache's last writes.
 * A poll skips every record whose digest is already there, reads back only the
 * documents of jobs that changed, and finds the jobs squeue stopped listing among the
 * live ones, so an unchanged poll reads no job document and a changed one costs in
 * proportion to the change.
 *
 * It is a cache: the archive's `clusters` document records which cache wrote last and
 * its sequence number (sa_archive.h). When they differ from meta (a new machine, a
 * restored database, another host that wrote), the run resets the cache, reads back
 * every document it needs, and rebuilds it. A row is written only after MongoDB
 * acknowledged the write it describes, so a crash leaves the cache behind the archive
 * (the next run merges again and finds nothing to write), never ahead of it.
 */
#ifndef SA_JOBCACHE_H
#define SA_JOBCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"

typedef struct sa_jobcache sa_jobcache_t;

/* Opens (creating it 0600 if missing) the cache at path. SQLite errors are SA_ERR_SQLITE. */
sa_jobcache_t *sa_jobcache_open(const char *path, sa_error_t *error);
void sa_jobcache_close(sa_jobcache_t *c);

/* The cache's token (static for the life of c) and the archive sequence it last saw (-1: none). */
const char *sa_jobcache_token(const sa_jobcache_t *c);
int64_t sa_jobcache_seq(const sa_jobcache_t *c);

/* Empties the cache (rows and sequence) and gives it a new token. */
bool sa_jobcache_reset(sa_jobcache_t *c, sa_error_t *error);

/* Transactions around a batch of puts (nested calls are not allowed). */
bool sa_jobcache_begin(sa_jobcache_t *c, sa_error_t *error);
bool sa_jobcache_commit(sa_jobcache_t *c, sa_error_t *error);
void sa_jobcache_rollback(sa_jobcache_t *c);

/*
 * The key a record's digest is kept under: (job id, source, submit, start), where a
 * pending squeue record's start (a forecast) counts as 0 and unset times as 0.
 */
void sa_jobcache_key(const sa_job_t *rec, int *source, int64_t *submit, int64_t *start);

/* The digest stored for a record key: true with *digest set, false when none. */
bool sa_jobcache_get_record(sa_jobcache_t *c, int64_t job_id, int source, int64_t submit, int64_t start,
                            uint64_t *digest);
bool sa_jobcache_put_record(sa_jobcache_t *c, int64_t job_id, int source, int64_t submit, int64_t start,
                            uint64_t digest, sa_error_t *error);

/* 1: the archive holds the job (live or not, *live set); 0: unknown; -1: error. */
int sa_jobcache_get_job(sa_jobcache_t *c, int64_t job_id, bool *live);
bool sa_jobcache_put_job(sa_jobcache_t *c, int64_t job_id, bool live, int64_t at, sa_error_t *error);
/* Forgets the record digests of a job (its document changed under them: vanished). */
bool sa_jobcache_forget_records(sa_jobcache_t *c, int64_t job_id, sa_error_t *error);

/* The live job ids, sorted (caller frees *ids). */
bool sa_jobcache_live_ids(sa_jobcache_t *c, int64_t **ids, size_t *n, sa_error_t *error);

/*
 * A run's sets of job ids too large for memory (squeue's listing, an input's changed
 * jobs), numbered by the caller: kept in a temporary table of this connection (SQLite's
 * temporary file, unlinked once open: nothing is left by a killed run). add takes ids in
 * one transaction (a savepoint: also inside sa_jobcache_begin), adding to *present (may
 * be NULL) the ids the set held already; vanished_ids gives the live jobs not in set, sorted (caller frees *ids).
 */
bool sa_jobcache_idset_add(sa_jobcache_t *c, int set, const int64_t *ids, size_t n, size_t *present,
                           sa_error_t *error);
bool sa_jobcache_idset_clear(sa_jobcache_t *c, sa_error_t *error); /* the spans too */

/*
 * Where a changed record is in its input (sa_span_t), once a snapshot's outgrow memory:
 * the same temporary file as the id sets. sa_jobcache_spans_each hands them out in job id
 * order (then input, then offset); fn returning false stops it with its error.
 */
typedef struct {
    int64_t job_id;
    int input;       /* sa_input_kind_t */
    uint64_t off, len;
    uint64_t digest; /* sa_job_digest of the record read from them */
} sa_jobcache_span_t;

bool sa_jobcache_spans_add(sa_jobcache_t *c, const sa_jobcache_span_t *v, size_t n, sa_error_t *error);
bool sa_jobcache_spans_drop(sa_jobcache_t *c, int input, sa_error_t *error); /* those of one input */
bool sa_jobcache_spans_each(sa_jobcache_t *c, bool (*fn)(const sa_jobcache_span_t *span, void *ctx, sa_error_t *error),
                            void *ctx, sa_error_t *error);
bool sa_jobcache_vanished_ids(sa_jobcache_t *c, int set, int64_t **ids, size_t *n, sa_error_t *error);
/* The set of the job documents written for the snapshot being ingested (sa_archive.c). */
#define SA_JOBCACHE_SET_WRITTEN 100

/* Records the archive's sequence number after this cache's writes. */
bool sa_jobcache_set_seq(sa_jobcache_t *c, int64_t seq, sa_error_t *error);

/* Drops jobs that are not live and were last touched before `before` (and their records). */
bool sa_jobcache_prune(sa_jobcache_t *c, int64_t before, size_t *pruned, sa_error_t *error);

#endif
