/*
 * sa_rollup_writer.h - slurm-ingest's rollup writer: keeps the `rollups` collection
 * (schema/rollup/sa_rollup.h) equal to what the job documents contribute, in the same run
 * as the job writes, one commit per flush. How it goes, and why a kill at any point loses
 * nothing: ingest/rollup/README.md.
 *
 * The archive hands it, through one hook (sa_archive_hook_t), each batch of job documents
 * before it writes them (sa_rollup_writer_journal: the journal) and after (
 * sa_rollup_writer_stage). The writer computes each document's contribution before and
 * after and stages, for every rollup document either touches, the job's records there (or
 * their removal). A flush (every SA_ROLLUP_FLUSH_JOBS jobs, at the end of an input, and
 * when asked) writes its intent to the commit document, reads the rollup documents it
 * staged by _id, puts the staged members in (a member written from a newer job version
 * stays), writes each one that changed whole with the version it replaces beside it, and
 * commits: one write. Nothing is incremented, so a retry, a replay or a second writer
 * gives the same documents; readers see only committed versions.
 *
 * Every read and write goes through a document store (ingest/sa_docstore.h): MongoDB, or
 * in the tests an in-memory one.
 */
#ifndef SA_ROLLUP_WRITER_H
#define SA_ROLLUP_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_archive.h"
#include "sa_docstore.h"
#include "sa_error.h"
#include "sa_jobview.h"
#include "sa_model.h"
#include "sa_rollup.h"

typedef struct sa_rollup_writer sa_rollup_writer_t;

typedef struct {
    size_t staged;        /* job documents staged */
    size_t docs_read;     /* rollup documents read */
    size_t docs_written;  /* rollup documents written (removals included) */
    size_t conflicts;     /* rollup writes that found the document changed (retried) */
    size_t commits;       /* flushes committed */
    size_t reverted;      /* documents of a dead writer's flush taken back */
    size_t waits;         /* times a live writer's flush was waited for */
} sa_rollup_writer_stats_t;

/* Jobs staged before a flush (a steady poll writes a few thousand jobs, whose live lists are then written once). */
#define SA_ROLLUP_FLUSH_JOBS 4000

/* A writer for cluster over store (borrowed); hosts names the server in messages. */
sa_rollup_writer_t *sa_rollup_writer_new(sa_docstore_t *store, const char *hosts, const char *cluster);
/*
 * Tests only: w says it is process pid (a pid that is no longer alive), so that writers of
 * one test process see each other as separate processes, the ones before as dead.
 */
void sa_rollup_writer_claim_pid(sa_rollup_writer_t *w, int64_t pid);
/* Frees w without flushing: what it staged is in the journal, and the next run restages it. */
void sa_rollup_writer_free(sa_rollup_writer_t *w);
const sa_rollup_writer_stats_t *sa_rollup_writer_stats(const sa_rollup_writer_t *w);
const char *sa_rollup_writer_cluster(const sa_rollup_writer_t *w);

/* The hook to give the archive (sa_archive_set_hook): journal, stage, flush and as_of of w. */
sa_archive_hook_t sa_rollup_writer_hook(sa_rollup_writer_t *w);
/*
 * A writer for cluster over a's store, set as a's hook: a's job writes keep the rollups from
 * here on. sa_rollup_detach takes the hook back and frees w (without flushing).
 */
sa_rollup_writer_t *sa_rollup_attach(sa_archive_t *a, const char *cluster, sa_error_t *error);
void sa_rollup_detach(sa_archive_t *a, sa_rollup_writer_t *w);

/*
 * Before the archive writes changes[0..n): journals each job with the rollup documents its
 * members are in now (those of change.before, and the open runs' and live list's with
 * with_open), so that a run killed before the flush is made good by the next
 * (sa_rollup_writer_recover).
 */
bool sa_rollup_writer_journal(sa_rollup_writer_t *w, const sa_archive_change_t *changes, size_t n,
                              sa_error_t *error);
/* After the archive wrote changes[0..n): stages them; flushes once SA_ROLLUP_FLUSH_JOBS jobs are staged. */
bool sa_rollup_writer_stage(sa_rollup_writer_t *w, const sa_archive_change_t *changes, size_t n,
                            sa_error_t *error);
/*
 * Commits what is staged (one flush: intent, documents, commit), then removes this
 * writer's batches from the journal. Nothing staged and no as_of to say: nothing written.
 */
bool sa_rollup_writer_flush(sa_rollup_writer_t *w, sa_error_t *error);
/*
 * Open runs count up to t (the observation a snapshot completed) from the next commit
 * on: flushed (a commit of no document) when nothing is staged. Never moves back.
 */
bool sa_rollup_writer_as_of(sa_rollup_writer_t *w, int64_t t, sa_error_t *error);

/*
 * The parts index (schema/rollup/sa_rollup_key.h): sa_rollup_writer_note marks the
 * document of k as holding something (its bit is added at the next commit); once every
 * month's index is complete (the rebuild, or the first run of 0.5), sa_rollup_writer_parts_ready
 * commits `parts: true`, from which readers name only the parts there are.
 */
bool sa_rollup_writer_note(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error);
bool sa_rollup_writer_parts_ready(sa_rollup_writer_t *w, sa_error_t *error);

/*
 * Whole documents, for the rebuild: d (its members; a members document's rows follow)
 * replaces the stored one at the next flush; sa_rollup_writer_remove removes the
 * document of k. Flushed every few dozen documents.
 */
bool sa_rollup_writer_replace(sa_rollup_writer_t *w, const sa_rollup_doc_t *d, sa_error_t *error);
bool sa_rollup_writer_remove(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error);

/*
 * Makes good what dead writers left: the documents of a flush that died before its commit
 * go back to the versions before it; the jobs of journal batches never flushed are read
 * again (jobs, then jobs_superseded) and staged with the documents the journal names, and
 * committed. *jobs (may be NULL) counts the jobs restaged.
 */
bool sa_rollup_writer_recover(sa_rollup_writer_t *w, size_t *jobs, sa_error_t *error);

/*
 * The verify's and the rebuild's recovery (0, the default: a poll's) first waits seconds
 * when a dead writer left a journal batch: a request of a killed process may still be
 * carried out by the server after it died (MongoDB and FerretDB finish what they read), so
 * a job document may change after the recovery read it. A poll needs no wait: it lands
 * the killed run's inputs again and stages what it finds (sa_archive_write.c); the verify
 * lands nothing, and would name those jobs' rollups as differing (tools/kill-loop, a
 * verify right after a kill).
 */
void sa_rollup_writer_settle(sa_rollup_writer_t *w, int seconds);
#define SA_ROLLUP_SETTLE_S 5

/* The last commit as stored (the commit document of the cluster). */
bool sa_rollup_writer_commit_read(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error);

/*
 * True when run r has untyped GPUs whose type slurm-ingest has not found (gpu_type_source
 * not node or carried) and nodes it could be found on; sa_rollup_needs_type: a run of job j.
 */
bool sa_rollup_run_needs_type(const sa_jobview_run_t *r);
bool sa_rollup_needs_type(const sa_jobview_t *j);

/*
 * The list of the cluster's job documents that have a run whose untyped GPUs have no type
 * yet ("<cluster>:untyped", kept by every flush), which the re-typing reads; and the list
 * of jobs waiting for their nodes' GPUs to be said ("<cluster>:untyped-config": untyped
 * runs on nodes seen only in grouped sinfo so far), read only by a run that brought
 * per-node observations. The ids are appended to ids; *v: the list's version (0: none).
 */
#define SA_ROLLUP_WAITING_MAX 50000 /* jobs at most in the waiting list (the oldest leave first) */
bool sa_rollup_untyped_list(sa_rollup_writer_t *w, bool waiting, sa_strv_t *ids, int64_t *v, sa_error_t *error);
/* list := (list - del) + add, conditional on its version (retried). */
bool sa_rollup_untyped_update(sa_rollup_writer_t *w, bool waiting, const sa_strv_t *add, const sa_strv_t *del,
                              sa_error_t *error);

/*
 * The _ids of the final job documents of the cluster whose end is in (after, to]: the
 * ended lists of those days, read by _id at the last commit. Appended to ids, in the
 * lists' order (by day); each one's end appended to *ends (a growable array of capacity
 * *ends_cap, parallel to ids).
 */
bool sa_rollup_ended_ids(sa_docstore_t *store, const char *cluster, int64_t after, int64_t to, sa_strv_t *ids,
                         int64_t **ends, size_t *ends_cap, sa_error_t *error);

#endif
