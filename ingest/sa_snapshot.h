/*
 * sa_snapshot.h - snapshots kept on disk: the spool (captures waiting to land), the
 * --archive-dir (every capture, for replays) and the rejected folder.
 *
 * Layout: DIR/<cluster>/<YYYYMMDDTHHMMSSZ>[-N]/ holding one file per input
 * (sinfo, squeue, sacct, sdiag; ".json" or ".txt" by content), meta.json (what the
 * run knew: observation time, sacct window, text options) and marks (empty files such
 * as "tsdb.done": a step already done for this snapshot).
 *
 * A snapshot lands whole or not at all: it is written under a temporary name
 * (".new-*"), every file fsync'ed, then the directory is renamed into place and its
 * parent fsync'ed. Captures stream straight from the Slurm command (or the input
 * file, read once) into the temporary directory, never whole in memory. Files are
 * 0640, directories 0750, created with O_EXCL | O_NOFOLLOW; files read back must
 * belong to this user. The flat layout of 0.1 (sa_flatspool.h) is still listed: each
 * group of flat files of one time is a "legacy" snapshot.
 */
#ifndef SA_SNAPSHOT_H
#define SA_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"

#define SA_SNAP_KINDS 4 /* sinfo, squeue, sacct, sdiag: the order of sa_input_kind_t */

/* ---- writing ------------------------------------------------------------------- */

typedef struct sa_snapshot_txn sa_snapshot_txn_t;

/* Starts a snapshot of cluster observed at `at` under DIR/<cluster>/ (created 0750). */
sa_snapshot_txn_t *sa_snapshot_begin(const char *dir, const char *cluster, int64_t at, sa_error_t *error);

/*
 * A new file for one input, open for writing (the transaction closes it). A capture
 * streams into it; sa_snapshot_commit syncs it.
 */
int sa_snapshot_open_input(sa_snapshot_txn_t *t, int kind, sa_error_t *error);

/*
 * Copies a file ("-" = standard input) into the snapshot as input `kind`, reading it
 * exactly once; more than cap bytes is an error (SA_ERR_INPUT, "<path>: larger than
 * ..."), as is a read error (SA_ERR_INPUT). A full disk is SA_ERR_SPOOL.
 */
bool sa_snapshot_copy_input(sa_snapshot_txn_t *t, int kind, const char *path, uint64_t cap, sa_error_t *error);

/* Forgets an input (a failed optional capture): its file goes. */
void sa_snapshot_drop_input(sa_snapshot_txn_t *t, int kind);

/* Sets meta.json's content (a copy is kept). */
void sa_snapshot_set_meta(sa_snapshot_txn_t *t, const json_t *meta);

/*
 * Makes the snapshot durable and visible. *path_out (may be NULL) receives its
 * directory. Frees t whatever happens; on failure nothing is left behind. A failure to
 * write (full disk, quota) is SA_ERR_SPOOL.
 */
bool sa_snapshot_commit(sa_snapshot_txn_t *t, char **path_out, sa_error_t *error);

/* Drops an uncommitted snapshot and frees t. Accepts NULL. */
void sa_snapshot_abort(sa_snapshot_txn_t *t);

/* How the temporary directory of a snapshot being written starts (".new-<time>-XXXXXX"). */
#define SA_SNAP_TMP_PREFIX ".new-"

/*
 * Removes the temporary snapshot directories (".new-*") that a killed run left in
 * DIR/<cluster> and in its rejected/ folder. Only a run holding the cluster's lock may
 * call it: every writer of the spool holds that lock, so what it finds there belongs to
 * a process that is gone. Only directories of this user are removed (a symbolic link or
 * another user's entry is left alone). *removed (may be NULL) receives how many went.
 * A directory that cannot be read or removed is an error (SA_ERR_IO); the others still go.
 */
bool sa_snapshot_sweep(const char *dir, const char *cluster, size_t *removed, sa_error_t *error);

/* ---- reading ---------------------------------------------------------------------- */

typedef struct {
    char *path;                   /* the snapshot's directory (legacy: the cluster directory) */
    char *name;                   /* its name, for messages ("20261005T120000Z") */
    int64_t at;                   /* observation time */
    char *files[SA_SNAP_KINDS];   /* each input's file, NULL when absent */
    json_t *meta;                 /* meta.json, NULL when absent (legacy) */
    bool legacy;                  /* flat files of 0.1 */
} sa_snapdir_t;

/*
 * Lists the snapshots of cluster in DIR, oldest first (then by name). A file that is
 * not this user's, a symbolic link or anything that is not a capture is skipped with
 * a warning (it is never read). A missing DIR/<cluster> is an empty list.
 */
bool sa_snapdir_list(const char *dir, const char *cluster, sa_snapdir_t **v, size_t *n, sa_error_t *error);
void sa_snapdir_list_free(sa_snapdir_t *v, size_t n);

/* Marks: empty files in the snapshot's directory ("tsdb.done"). Legacy snapshots have none. */
bool sa_snapdir_has_mark(const sa_snapdir_t *s, const char *mark);
bool sa_snapdir_set_mark(const sa_snapdir_t *s, const char *mark, sa_error_t *error);

/* Removes a snapshot for good (it landed), durably. */
bool sa_snapdir_drop(const sa_snapdir_t *s, sa_error_t *error);

/*
 * Moves a snapshot that cannot be parsed to DIR/<cluster>/rejected/ with a reason.txt
 * (one line), so it never blocks later runs. Only the inputs named in `kinds` (a bit
 * per kind; 0 = all) move; the rest stay.
 */
bool sa_snapdir_reject(const sa_snapdir_t *s, const char *dir, const char *cluster, unsigned kinds,
                       const char *reason, sa_error_t *error);

/* Copies a snapshot (durably, as a new snapshot) into DIR/<cluster>/: --archive-dir. */
bool sa_snapdir_copy_to(const sa_snapdir_t *s, const char *dir, const char *cluster, sa_error_t *error);

#endif
