/*
 * sa_jobdoc.h - a job's archive document, and how a new observation merges into it.
 *
 * Pure: no I/O. The document is built and merged as a jansson object in the shape
 * that schema/jobdoc/job.schema.json describes; sa_bson.c turns it into BSON (times, held
 * here as integer epoch seconds, become BSON dates) and back.
 *
 * Merging is order-independent for whole histories: the document keeps
 * - history: one entry per state transition, {state, flags, reason, at, source},
 *   sorted by (at, lifecycle rank). Submit, start and end times give exact transition
 *   times; a snapshot's state gives "seen in state S at T" (the entry is marked
 *   _observed). A sighting of the state the job was already in adds nothing; one of
 *   the state that follows moves that entry's "at" earlier unless that time is exact;
 *   two exact times of PENDING or RUNNING are two transitions (a requeue), of a
 *   terminal state one (the earlier); a sighting of another state after a terminal
 *   one is stale and dropped; anything else is inserted in place.
 * - runs: one entry per start time (a requeued job has several), each replaced only
 *   by a better observation of the same run (final beats running, sacct beats
 *   squeue, later beats earlier), filled in with the steps and a reliable exit code
 *   of the other.
 * - the current fields (state, owner, placement, request, allocation) from the
 *   observation with the greatest merge key (submit, final, sacct, at), so an older
 *   snapshot never rolls them back (monotonic) and the same input twice changes
 *   nothing (idempotent).
 * - exit and derived_exit from final records only, the greatest by (reliable, sacct,
 *   submit, at).
 * Job-id reuse: a record submitted after the stored job reached a final state that
 * is not a requeue (and without a higher restart count) is a different job; the
 * caller keeps the stored document aside (jobs_superseded) and starts a new one.
 */
#ifndef SA_JOBDOC_H
#define SA_JOBDOC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_model.h"

typedef struct {
    const char *cluster;      /* the --cluster name (documents are keyed by it) */
    int64_t at;               /* observation time of the snapshot (epoch s) */
    const char *slurm_release;/* may be NULL */
    const char *data_parser;  /* may be NULL */
} sa_obs_ctx_t;

typedef enum {
    SA_MERGE_UNCHANGED = 0, /* nothing new: no write */
    SA_MERGE_CHANGED,       /* the document changed: replace it */
    SA_MERGE_NEW,           /* no document existed: insert */
    SA_MERGE_REUSED,        /* the id was reused: *superseded holds the old document, *doc the new job */
    SA_MERGE_STALE,         /* the record belongs to an older job that had this id: ignored */
} sa_merge_kind_t;

/*
 * Merges one record into *doc (a document as stored, or NULL for none). On return
 * *doc is the merged document (a new reference; the old one is released) and
 * *kind says what happened. For SA_MERGE_REUSED, *superseded receives the previous
 * document (new reference), else NULL. The document's "_id" (if any) is kept on
 * CHANGED and dropped on REUSED.
 */
bool sa_jobdoc_merge(json_t **doc, const sa_job_t *rec, const sa_obs_ctx_t *ctx, sa_merge_kind_t *kind,
                     json_t **superseded, sa_error_t *error);

/*
 * True if the job-level exit code e (a document's "exit" or "derived_exit", with its
 * "_key") replaces the stored old (NULL: none) by the merge's rule: the greatest (reliable,
 * sacct, submit, at, start, code, signal), the same code of the same incarnation seen again
 * keeping the stored one. The one rule of the merge and of whoever combines documents'
 * exit codes (slurm-ingest audit).
 */
bool sa_jobdoc_exit_replaces(const json_t *e, const json_t *old);

/*
 * The document's _id: "<cluster>:<job_id>" (e.g. "demo:1234"), so that every single-
 * document read and write is a lookup by _id (indexed on MongoDB, and on the bundled
 * test server). A document displaced by job-id reuse (jobs_superseded) is
 * "<cluster>:<job_id>:<submit epoch>", so storing it twice stores it once. Caller
 * frees; NULL on out of memory.
 */
char *sa_jobdoc_id(const char *cluster, int64_t job_id);

/* The integer member key of a document's object o (a time as epoch seconds), SA_UNSET when absent or not one. */
int64_t sa_jobdoc_int(const json_t *o, const char *key);
char *sa_jobdoc_superseded_id(const char *cluster, int64_t job_id, int64_t submit);

/*
 * Members of "extra" that Slurm's scheduler rewrites every cycle (priority, last
 * evaluation, planned nodes), NULL-terminated. With expected_start and expected_end
 * they are left out of the change test: a merge that would change only them changes
 * nothing, and sa_job_digest ignores them (but for whether a pending job has a start
 * forecast at all: one that appears or goes is a change).
 */
extern const char *const sa_jobdoc_volatile_extra[];

/*
 * The start forecast of a pending job that squeue's record gives (its start_time, kept in
 * the record's extra "expected_start"), epoch seconds; SA_UNSET for any other record.
 */
int64_t sa_job_forecast(const sa_job_t *rec);

/*
 * A 64-bit digest of everything in a record that the merge uses, except the volatile
 * members above and what grows while a job or step runs (its elapsed time and usage so
 * far): two records with the same digest (and the same salt, e.g. the Slurm release of
 * the snapshot) merge to the same document but for those. For change detection
 * (ingest/sa_jobcache.h): a record whose digest was merged before is skipped.
 */
uint64_t sa_job_digest(const sa_job_t *rec, const char *salt);

/* Names of the document members that hold times (epoch seconds <-> BSON dates). */
bool sa_jobdoc_is_time_key(const char *key);

#endif
