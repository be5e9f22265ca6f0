/*
 * sa_rollw.h - slurm-ingest's rollup writer: keeps the `rollups` collection
 * (schema/jobdoc/sa_rollup.h) equal to what the job documents contribute, in the same run as
 * the job writes.
 *
 * For each job document written, the archive stages its id, version and the document
 * before and after; the writer computes the new document's contribution by day and
 * stages, for every rollup document the old or the new contribution touches, the job's
 * records there (or their removal). A flush reads those rollup documents by _id, puts
 * the staged members in (a member written from a newer job version stays), and replaces
 * each one that changed, conditional on the version read (a conflict re-reads and puts
 * again). Nothing is incremented, so a retry, a replay or a second writer gives the
 * same documents.
 *
 * Rebuild and verify (sa_rollbuild.h) recompute every rollup document of a cluster from
 * its job documents (jobs and jobs_superseded).
 */
#ifndef SA_ROLLW_H
#define SA_ROLLW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mongoc/mongoc.h>

#include "sa_error.h"
#include "sa_jobview.h"
#include "sa_model.h"

typedef struct sa_rollw sa_rollw_t;

typedef struct {
    size_t staged;        /* job documents staged */
    size_t docs_read;     /* rollup documents read */
    size_t docs_written;  /* rollup documents written */
    size_t conflicts;     /* rollup writes that found the document changed (retried) */
} sa_rollw_stats_t;

/* A writer for cluster, into coll (borrowed); hosts names the server in messages. */
sa_rollw_t *sa_rollw_new(mongoc_collection_t *coll, const char *hosts, const char *cluster);
void sa_rollw_free(sa_rollw_t *w);
const sa_rollw_stats_t *sa_rollw_stats(const sa_rollw_t *w);

/*
 * Stages job document id at version v: new_doc (NULL: the document is gone from this
 * _id) replaces what old_doc (NULL: none, or not known) contributed. with_open: the
 * open-runs document is touched even when neither document has an open run.
 */
bool sa_rollw_stage(sa_rollw_t *w, const char *id, int64_t v, const bson_t *old_doc, const bson_t *new_doc,
                    bool with_open, sa_error_t *error);
/* The same with the days (SA_UNSET: the open runs' document) the job's members may be in instead of an old document. */
bool sa_rollw_stage_days(sa_rollw_t *w, const char *id, int64_t v, const int64_t *days, size_t ndays,
                         const bson_t *new_doc, sa_error_t *error);
/*
 * Writes what was staged, and keeps the list of the cluster's job documents that have a
 * run whose untyped GPUs have no type yet (document "<cluster>:untyped"), which the
 * re-typing of sa_archive_retype reads.
 */
bool sa_rollw_flush(sa_rollw_t *w, sa_error_t *error);

/*
 * True when run r has untyped GPUs whose type slurm-ingest has not found (gpu_type_source
 * not node or carried) and nodes it could be found on; sa_rollw_needs_type: a run of job j.
 */
bool sa_rollw_run_needs_type(const sa_jobview_run_t *r);
bool sa_rollw_needs_type(const sa_jobview_t *j);
/* The ids of the untyped list (appended to ids), and its version (0: none). */
bool sa_rollw_untyped_list(sa_rollw_t *w, sa_strv_t *ids, int64_t *v, sa_error_t *error);
/* list := (list - del) + add, conditional on its version (retried). */
bool sa_rollw_untyped_update(sa_rollw_t *w, const sa_strv_t *add, const sa_strv_t *del, sa_error_t *error);
/*
 * The same for the list of jobs waiting for their nodes' GPUs to be said ("<cluster>:
 * untyped-config": untyped runs on nodes seen only in grouped sinfo so far), which the
 * re-typing reads only when a run brought per-node observations.
 */
#define SA_ROLLW_WAITING_MAX 50000 /* jobs at most (the oldest leave first) */
bool sa_rollw_waiting_list(sa_rollw_t *w, sa_strv_t *ids, int64_t *v, sa_error_t *error);
bool sa_rollw_waiting_update(sa_rollw_t *w, const sa_strv_t *add, const sa_strv_t *del, sa_error_t *error);

/*
 * The journal (document "<cluster>:pending" of the rollups collection) makes a kill
 * between a batch's job writes and its rollup flush harmless: before the batch is
 * written, each job that will be written is journaled with the days (and the open runs'
 * document) its members are in now, that is, of the document it replaces; after the
 * flush the batch leaves the journal. A run that finds a batch of a dead writer (this
 * host, a pid no longer alive; any writer after an hour) reads those jobs again and
 * stages them with the journaled days, so their members leave the days they no longer
 * touch.
 */
/* Adds job document id to the batch to journal, with the days old_doc (NULL: none) contributes to. */
bool sa_rollw_journal_add(sa_rollw_t *w, const char *id, const bson_t *old_doc, sa_error_t *error);
/* Adds job document id with the open runs' document alone (a job about to be marked vanished). */
bool sa_rollw_journal_add_open(sa_rollw_t *w, const char *id, sa_error_t *error);
/* Writes the jobs added since the last call as one batch of the journal (nothing when none). */
bool sa_rollw_journal_write(sa_rollw_t *w, sa_error_t *error);
/* After the flush: removes this writer's batches from the journal. */
bool sa_rollw_journal_done(sa_rollw_t *w, sa_error_t *error);
/*
 * Restages the jobs of the batches dead writers left in the journal (jobs, superseded:
 * the collections their documents are in), flushes and removes those batches. *jobs
 * (may be NULL) counts the jobs restaged.
 */
bool sa_rollw_recover(sa_rollw_t *w, mongoc_collection_t *jobs, mongoc_collection_t *superseded, size_t *njobs,
                      sa_error_t *error);

#endif
