/*
 * sa_archive.h - the job archive in MongoDB: collections, indexes, and writing a
 * batch of job records (a squeue snapshot or a sacct window) with the merge rules of
 * schema/jobdoc/sa_jobdoc.h.
 *
 * Collections (database default "slurm"):
 *   jobs             one document per (cluster, job_id), _id "<cluster>:<job_id>"
 *   jobs_superseded  documents displaced by job-id reuse, _id "<cluster>:<job_id>:<submit>"
 *   clusters         one document per cluster (_id = name): last snapshot times, the
 *                    job cache that wrote last and its write sequence, schema version
 *   ingest_runs      one document per slurm-ingest run: phases, counts, errors
 *
 * Every statement on a job document is addressed by _id (an indexed lookup on MongoDB
 * and on the bundled test server): reads are `_id: {$in: [...]}` finds of the jobs
 * that changed, writes are inserts of new jobs and replaces conditional on the
 * version read (`{_id, _v}`: optimistic concurrency; a conflict re-reads, re-merges
 * and retries). With a job cache (sa_jobcache.h) an unchanged poll reads no job
 * document at all, and only documents that change are written. Bulk updates are sent
 * 50 statements at a time (FerretDB 1.24 holds a connection per matched statement
 * until the command ends and deadlocks past ~100).
 */
#ifndef SA_ARCHIVE_H
#define SA_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bson/bson.h>
#include <jansson.h>

#include "sa_error.h"
#include "sa_jobcache.h"
#include "sa_jobdoc.h"
#include "sa_model.h"

typedef struct sa_archive sa_archive_t;

/*
 * A job document the archive writes, as the rollup writer (ingest/rollup/) is told of it
 * through the archive's one hook.
 */
typedef struct {
    const char *id;        /* its _id */
    const bson_t *before;  /* the document its rollups were made from (NULL: none, or not known) */
    const bson_t *after;   /* the document as written (NULL: no document at this _id any more) */
    int64_t v;             /* after's _v (0 when it has none, as jobs_superseded's) */
    bool with_open;        /* the open runs' and live list's documents are touched whatever the documents say */
} sa_archive_change_t;

typedef enum {
    SA_ARCHIVE_BEFORE, /* changes about to be written (their before) */
    SA_ARCHIVE_AFTER,  /* changes written */
    SA_ARCHIVE_FLUSH,  /* an input's last batch is written: what is staged may be committed */
    SA_ARCHIVE_AS_OF   /* a snapshot taken at `at` is landed whole */
} sa_archive_event_t;

typedef struct {
    bool (*fn)(void *ctx, sa_archive_event_t ev, const sa_archive_change_t *changes, size_t n, int64_t at,
               sa_error_t *error);
    void *ctx;
} sa_archive_hook_t;

/* The archive tells hook of every job document it writes (none: the rollups are not kept). */
void sa_archive_set_hook(sa_archive_t *a, sa_archive_hook_t hook);
/* The archive's document store (ingest/sa_docstore.h), for the rollup writer. */
struct sa_docstore *sa_archive_store(sa_archive_t *a);
/* The server's host list, for messages. */
const char *sa_archive_hosts(const sa_archive_t *a);

/*
 * Connects (the URI is never printed: errors name the host list only), checks the
 * server answers within the URI's serverSelectionTimeoutMS, creates the collections,
 * indexes and the $jsonSchema validator (where the server supports validators;
 * *validator_note says which happened and may be NULL).
 * SA_ERR_UNREACHABLE: no connection could be made (the caller spools).
 */
sa_archive_t *sa_archive_open(const char *uri, const char *db_name, char **validator_note, sa_error_t *error);
void sa_archive_close(sa_archive_t *a);

/* What sa_archive_open took, in ms of the monotonic clock: connecting (the server's
 * first answer), the validator (create or collMod of jobs) and listing or creating the
 * indexes. */
typedef struct {
    double connect, validator, indexes;
} sa_archive_open_ms_t;
sa_archive_open_ms_t sa_archive_open_ms(const sa_archive_t *a);

typedef struct {
    size_t records;    /* records handed in */
    size_t jobs;       /* distinct job ids among them */
    size_t inserted;   /* new documents */
    size_t changed;    /* documents replaced because they changed */
    size_t unchanged;  /* documents read and merged, left alone */
    size_t reused;     /* job ids reused: old document moved to jobs_superseded */
    size_t stale;      /* records of an older job that had the id: ignored */
    size_t vanished;   /* jobs no longer listed by squeue, marked */
    size_t write_statements; /* statements sent in bulk writes (inserts, replaces, updates) */
    size_t rewritten;  /* job documents written more than once for one snapshot (each write after the
                          first; counted with a job cache) */
    size_t docs_read;  /* job documents read back */
    size_t read_queries; /* find commands on jobs */
    size_t conflicts;  /* writes that found the document changed since it was read (retried) */
    size_t insert_rereads; /* inserts of a job the cache did not know whose _id was taken (a new or
                              rebuilt cache, a reused id): read, merged, replaced; not conflicts */
    size_t cache_skipped; /* records skipped because the job cache had their digest */
} sa_archive_stats_t;

/*
 * Makes the job cache agree with the archive of cluster: when the archive's clusters
 * document names another writer or sequence than the cache holds (or the cache is
 * new), the cache is reset and its live-job list rebuilt with one query. *rebuilt (may
 * be NULL) says so. cache may be NULL (nothing to do).
 */
bool sa_archive_sync_cache(sa_archive_t *a, const char *cluster, sa_jobcache_t *cache, bool *rebuilt,
                           sa_error_t *error);

/*
 * After this run's writes: increments the cluster's write sequence, records this cache
 * as the writer, and stores the new sequence in the cache.
 */
bool sa_archive_bump_seq(sa_archive_t *a, const char *cluster, sa_jobcache_t *cache, sa_error_t *error);

/*
 * Merges a batch of job records of one cluster into the archive. jobs are borrowed;
 * records of one job id should be in the same batch (sacct -D prints each run). With a
 * cache, the documents of jobs the cache does not know are inserted without being
 * read (a duplicate key then reads, merges and replaces), and the cache learns the
 * digest of every record merged. Adds to *stats.
 */
bool sa_archive_write_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx, sa_job_t *const *jobs,
                           size_t n, sa_archive_stats_t *stats, sa_error_t *error);
/*
 * The same for the records of two inputs of one snapshot at once (squeue's and sacct's):
 * a job both changed is merged and written once. Records from sacct are merged with
 * sacct_ctx (its release and data_parser), the others with ctx; both have the same
 * cluster and observation time. sacct_ctx may be NULL (all records use ctx).
 */
bool sa_archive_write_snapshot_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx,
                            const sa_obs_ctx_t *sacct_ctx, sa_job_t *const *jobs, size_t n, sa_archive_stats_t *stats,
                            sa_error_t *error);
/*
 * Tells the hook that an input's last batch is written (the rollup writer may commit what
 * it staged). Call it after an input's last batch (sa_archive_write_jobs does). A run that
 * ends without it leaves the staged jobs in the writer's journal, and the next run
 * restages them.
 */
bool sa_archive_flush_rollups(sa_archive_t *a, sa_error_t *error);
/* Tells the hook that a snapshot taken at `at` is landed whole (open runs count up to it). */
bool sa_archive_landed(sa_archive_t *a, int64_t at, sa_error_t *error);

/*
 * After a complete squeue listing taken at ctx->at with job ids listed[0..n) (sorted):
 * live documents of the cluster that it does not list are marked vanished at the
 * previous snapshot's time (clusters.last_squeue_at). The live jobs come from the cache
 * (or, without one, from a query). With listed_set >= 0 the listing is instead the
 * cache's id set of that number (sa_jobcache_idset_add; listed and n unused), and only
 * the vanished jobs are read from the cache. Does nothing when a newer snapshot was
 * already ingested. Call before updating last_squeue_at.
 */
bool sa_archive_mark_vanished(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx, const int64_t *listed,
                              size_t n, int listed_set, sa_archive_stats_t *stats, sa_error_t *error);

/*
 * Moves an archive written by slurm-ingest 0.1 (ObjectId _ids) of cluster to the _id
 * scheme above, resumably (a crash at any point loses nothing: documents pass through
 * the `jobs_migrating` collection), then records schema version 2 in the cluster's
 * document. Cheap when already done. *moved (may be NULL) counts documents moved.
 */
bool sa_archive_migrate(sa_archive_t *a, const char *cluster, size_t *moved, sa_error_t *error);

/*
 * The cluster's run log (schema/rollup/sa_runlog.h) recomputed from ingest_runs, and the
 * clusters document's first_run_at, last_run_at (its runs' span) and first_submit (the
 * earliest submit of its job documents, jobs and jobs_superseded): rebuild replaces the
 * stored ones; else they are compared: *differ documents or fields differ (each named on
 * out, may be NULL). *docs: how many documents there should be.
 */
bool sa_archive_derived(sa_archive_t *a, const char *cluster, bool rebuild, size_t *docs, size_t *differ, FILE *out,
                        sa_error_t *error);
/*
 * Makes the run log entry of a run killed after its ingest_runs record (pending_run);
 * builds the cluster's run log and first_submit once (an archive written before them, or
 * its log by day: version 1), then records ingest_days_version in its clusters document.
 * *built: log documents there are.
 */
bool sa_archive_ingest_days_init(sa_archive_t *a, const char *cluster, size_t *built, sa_error_t *error);

/* Reads the cluster's document ({} when none). New reference. */
json_t *sa_archive_cluster_get(sa_archive_t *a, const char *cluster, sa_error_t *error);
/* $min of the times of min_times, $max of max_times ({"last_squeue_at": t, ...}), $set of set (each may be NULL). */
bool sa_archive_cluster_times(sa_archive_t *a, const char *cluster, const json_t *min_times, const json_t *max_times,
                              const json_t *set, sa_error_t *error);
/* $max-updates the named time fields ({"last_squeue_at": t, ...}) and $set others. */
bool sa_archive_cluster_update(sa_archive_t *a, const char *cluster, const json_t *max_times, const json_t *set,
                               sa_error_t *error);

/*
 * Inserts one ingest_runs document (times as epoch seconds under time keys), then its
 * entry in the run log (ingest_days) and the span of the cluster's runs (first_run_at,
 * last_run_at). The clusters document names the run first (pending_run): a run killed
 * between the two has its entry made by the next one (sa_archive_ingest_days_init).
 */
bool sa_archive_record_run(sa_archive_t *a, const json_t *run, sa_error_t *error);

/* Reads job documents by _id: docs[i] the document of ids[i] (NULL when there is none). */
bool sa_archive_read_jobs(sa_archive_t *a, char *const *ids, size_t n, json_t **docs, sa_error_t *error);

/*
 * Changes job documents by _id through the archive's path: fn is handed each stored
 * document and returns in *changed a changed copy (NULL: leave it); the changed ones are
 * journaled, replaced if still at the version read (one changed since is left as it is,
 * not counted), and their rollups staged and written. *written: documents replaced;
 * replaced (may be NULL; n entries) says which.
 */
typedef bool (*sa_archive_patch_fn)(void *ctx, const char *id, const json_t *stored, json_t **changed,
                                    sa_error_t *error);
bool sa_archive_patch_jobs(sa_archive_t *a, const char *cluster, char *const *ids, size_t n, sa_archive_patch_fn fn,
                           void *ctx, size_t *written, bool *replaced, sa_error_t *error);

/* Reads one job document (NULL when absent, with no error). For tests and tools. */
json_t *sa_archive_get_job(sa_archive_t *a, const char *cluster, int64_t job_id, sa_error_t *error);

/*
 * When *error says the server was unreachable, asks again with a fresh connection and a
 * short timeout: a server that answers makes the error SA_ERR_MONGO (it was slow or cut
 * a command short, e.g. a socket timeout), so only a server that is really gone spools.
 */
void sa_archive_confirm_unreachable(sa_archive_t *a, sa_error_t *error);

#endif
