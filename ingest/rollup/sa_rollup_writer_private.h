/*
 * sa_rollup_writer_private.h - the rollup writer's state, shared by its files, layered so
 * that each uses only those below it:
 *   sa_rollup_writer.c   what the archive's hook does, the flush, the recovery
 *   sa_rollup_commit.c   a flush as one commit, and taking back a dead writer's flush
 *   sa_rollup_journal.c  the journal of job batches written and not yet committed
 *   sa_rollup_untyped.c  the lists of jobs whose GPUs have no type yet
 *   sa_rollup_stage.c    the state, and staging what job documents contribute
 * Not for other modules.
 */
#ifndef SA_ROLLUP_WRITER_PRIVATE_H
#define SA_ROLLUP_WRITER_PRIVATE_H

#include "sa_rollup_writer.h"

/* A job of the batch being journaled: its _id and the rollup documents its members are in. */
typedef struct {
    char *id;
    sa_strv_t docs; /* their _ids */
} sa_rollup_jentry_t;

/* A month's parts index bits to add at the next commit. */
typedef struct {
    int64_t month;
    sa_rollup_parts_t p;
} sa_rollup_month_parts_t;

/* One rollup document staged: what to merge into it, or (whole) what replaces it. */
typedef struct {
    sa_rollup_doc_t d;  /* its members (tombstones for removals); its _id first (sa_rollup_find) */
    bool whole;         /* d replaces the stored document (the rebuild); else it is merged in */
    bool remove;        /* the document goes (the rebuild) */
} sa_rollup_staged_t;

struct sa_rollup_writer {
    sa_docstore_t *store;
    char *hosts, *cluster;
    sa_jobview_t view;
    sa_rollup_contrib_t oldc, newc;
    sa_rollup_staged_t *staged; /* sorted by _id */
    size_t nstaged, stagedcap;
    size_t staged_jobs;         /* jobs staged since the last flush */
    sa_rollup_jentry_t *jn;     /* the batch to journal */
    size_t njn, jncap;
    char **nonces;              /* this writer's batches in the journal */
    size_t nnonces, noncecap;
    sa_strv_t untyped_add, untyped_del; /* job documents with (without) a run whose GPUs have no type yet */
    sa_rollup_month_parts_t *marks; /* the parts index bits of the documents staged, by month */
    size_t nmarks, markcap;
    bool parts_ready;           /* the next commit says every month's parts index is complete (commit.parts) */
    int64_t pid;                /* this writer's pid as its journal batches and intents say it (getpid()) */
    char proc[96];              /* and its process as this host knows it (sa_rollup_proc of pid; "": unknown) */
    int64_t as_of;              /* what the next commit says open runs count up to (SA_UNSET: not said) */
    bool as_of_new;             /* as_of to commit */
    int settle_s;               /* recovery waits this long first when a dead writer left a batch (sa_rollup_writer_settle) */
    sa_rollup_writer_stats_t stats;
};

/* This host's name as a field name (no '.', no '$'). */
void sa_rollup_host(char *host, size_t n);
/*
 * The process pid as this host knows it, into buf: "<boot id>/<start time>" from /proc (a
 * pid is reused once its process ended, and after a reboot; the pair is not). False (buf
 * "") when no such process, or /proc does not say.
 */
bool sa_rollup_proc(int64_t pid, char *buf, size_t n);
/*
 * True when a writer (host, pid, proc: sa_rollup_proc as it recorded it, "" or NULL when it
 * did not) that started at `at` is gone, as w sees it: not w itself; on this host no
 * process pid, or one that is another process than proc says (its pid reused); on another
 * host an hour old.
 */
bool sa_rollup_writer_dead(const sa_rollup_writer_t *w, const char *host, int64_t pid, const char *proc,
                           int64_t at);
/* The _id of the cluster's document of kind (a bookkeeping kind). NULL on out of memory. */
char *sa_rollup_writer_doc_id(const sa_rollup_writer_t *w, sa_rollup_kind_t kind);
/* The staged document of k, created empty (whole and remove false); NULL on out of memory. */
sa_rollup_staged_t *sa_rollup_writer_staged(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error);
/* Stages job document id (version v): new_doc's contribution, and its removal from the documents of old_ids it leaves. */
bool sa_rollup_writer_stage_one(sa_rollup_writer_t *w, const char *id, int64_t v, const sa_strv_t *old_ids,
                                const bson_t *new_doc, sa_error_t *error);
/* The _ids of the documents a change's members are in now: its before's, and with with_open the open and live ones. */
bool sa_rollup_change_ids(sa_rollup_writer_t *w, const sa_archive_change_t *ch, sa_strv_t *ids, sa_error_t *error);
/* Writes the commit document c (stored at c->v) as the next version; *conflict when someone wrote it since. */
bool sa_rollup_commit_put(sa_rollup_writer_t *w, sa_rollup_commit_t *c, bool *conflict, sa_error_t *error);
/* Frees what is staged. */
void sa_rollup_staged_clear(sa_rollup_writer_t *w);

/* Commits what is staged: intent, documents, commit (sa_rollup_commit.c). */
bool sa_rollup_commit_staged(sa_rollup_writer_t *w, sa_error_t *error);
/* Takes the documents of a dead writer's uncommitted flush back (c: the commit as read; updated). */
bool sa_rollup_revert(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error);

/* The journal (sa_rollup_journal.c): removes this writer's batches, after a flush. */
bool sa_rollup_journal_done(sa_rollup_writer_t *w, sa_error_t *error);
/* Stages again the jobs of the batches dead writers left; their nonces are appended to dead. */
bool sa_rollup_journal_restage(sa_rollup_writer_t *w, sa_strv_t *dead, size_t *njobs, sa_error_t *error);
/* The nonces of the batches dead writers left, appended to dead (nothing restaged). */
bool sa_rollup_journal_dead(sa_rollup_writer_t *w, sa_strv_t *dead, sa_error_t *error);
/* Removes the batches dead from the journal. */
bool sa_rollup_journal_drop(sa_rollup_writer_t *w, const sa_strv_t *dead, sa_error_t *error);

#endif
