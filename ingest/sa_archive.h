/*
 * sa_archive.h - the job archive in MongoDB: collections, indexes, and writing a
 * batch of job records (a squeue snapshot or a sacct window) with the merge rules of
 * sa_jobdoc.h.
 *
 * Collections (database default "slurm"):
 *   jobs             one document per (cluster, job_id) - schema/job.schema.json
 *   jobs_superseded  documents displaced by job-id reuse, never merged again
 *   clusters         one document per cluster: last snapshot times, sacct watermark
 *   ingest_runs      one document per slurm-ingest run: phases, counts, errors
 *
 * Writes are bulk and unordered, and only documents that change are written: on a
 * steady poll (nothing new) a batch makes no job write at all.
 */
#ifndef SA_ARCHIVE_H
#define SA_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_jobdoc.h"
#include "sa_model.h"

typedef struct sa_archive sa_archive_t;

/*
 * Connects (the URI is never printed: errors name the host list only), checks the
 * server answers within the URI's serverSelectionTimeoutMS, creates the collections,
 * indexes and the $jsonSchema validator (where the server supports validators;
 * *validator_note says which happened and may be NULL).
 * SA_ERR_MONGO with code 1 means "unreachable" (the caller spools).
 */
sa_archive_t *sa_archive_open(const char *uri, const char *db_name, char **validator_note, sa_error_t *error);
void sa_archive_close(sa_archive_t *a);

typedef struct {
    size_t records;    /* records handed in */
    size_t jobs;       /* distinct job ids among them */
    size_t inserted;   /* new documents */
    size_t changed;    /* documents replaced because they changed */
    size_t unchanged;  /* documents left alone */
    size_t reused;     /* job ids reused: old document moved to jobs_superseded */
    size_t stale;      /* records of an older job that had the id: ignored */
    size_t vanished;   /* jobs no longer listed by squeue, marked */
    size_t write_statements; /* statements sent in bulk writes (inserts, replaces, updates) */
} sa_archive_stats_t;

/*
 * Merges a batch of job records of one cluster into the archive. jobs are borrowed.
 * Records of one job id should be in the same batch (sacct -D prints each run). Adds
 * to *stats.
 */
bool sa_archive_ingest_jobs(sa_archive_t *a, const sa_obs_ctx_t *ctx, sa_job_t *const *jobs, size_t n,
                            sa_archive_stats_t *stats, sa_error_t *error);

/*
 * After a complete squeue listing taken at ctx->at with job ids ids[0..n) (sorted
 * here in place): unfinished documents of the cluster that it does not list are
 * marked vanished at the previous snapshot's time (clusters.last_squeue_at). Does
 * nothing when a newer snapshot was already ingested. Call before updating
 * last_squeue_at.
 */
bool sa_archive_mark_vanished(sa_archive_t *a, const sa_obs_ctx_t *ctx, int64_t *ids, size_t n,
                              sa_archive_stats_t *stats, sa_error_t *error);

/* Reads the cluster's document ({} when none). New reference. */
json_t *sa_archive_cluster_get(sa_archive_t *a, const char *cluster, sa_error_t *error);
/* $max-updates the named time fields ({"last_squeue_at": t, ...}) and $set others. */
bool sa_archive_cluster_update(sa_archive_t *a, const char *cluster, const json_t *max_times, const json_t *set,
                               sa_error_t *error);

/* Inserts one ingest_runs document (times as epoch seconds under time keys). */
bool sa_archive_record_run(sa_archive_t *a, const json_t *run, sa_error_t *error);

/* Reads one job document (NULL when absent, with no error). For tests and tools. */
json_t *sa_archive_get_job(sa_archive_t *a, const char *cluster, int64_t job_id, sa_error_t *error);

#endif
