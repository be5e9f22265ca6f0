/*
 * sa_rollup_rebuild.h - rebuilding and verifying a cluster's rollups (schema/rollup/sa_rollup.h)
 * from its job documents, in memory bounded by one rollup document whatever the archive
 * holds.
 *
 * One pass over the job documents (jobs and jobs_superseded) computes each one's members
 * and spills them, a small BSON document per rollup document and job, to a temporary
 * SQLite database; the rollup documents are then assembled one at a time in _id order
 * (ORDER BY, SQLite's external sort), each compared with the stored one read by _id (and
 * written when it differs, with a rebuild). The stored documents no job document
 * contributes to are found from their _ids (a projection) and removed.
 */
#ifndef SA_ROLLUP_REBUILD_H
#define SA_ROLLUP_REBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_archive.h"
#include "sa_docstore.h"
#include "sa_error.h"

/*
 * Recomputes every rollup document of the cluster from the job documents of jobs and
 * jobs_superseded (the store's collections). rebuild: replaces the stored ones that differ
 * and empties those no document contributes to (committed every few dozen documents, as
 * the writer commits); else compares, as of the last commit: *differ counts the rollup documents
 * that differ from the recomputed ones, each named on out (may be NULL). since (SA_UNSET:
 * all): only the days from the one holding since on, the open runs and the live shards,
 * from the job documents that can touch them (ended since, or unfinished); the untyped
 * list then only gains. *docs: the rollup documents recomputed.
 */
bool sa_rollup_rebuild(sa_docstore_t *store, const char *hosts, const char *cluster, bool rebuild, int64_t since,
                       size_t *docs, size_t *differ, FILE *out, sa_error_t *error);

/*
 * Builds the rollups of w's cluster from its job documents once (an archive written
 * before rollups of this version; a new cluster: nothing to build), then records
 * rollup_version in its clusters document. *built: rollup documents recomputed.
 */
struct sa_rollup_writer;
bool sa_rollup_init(sa_archive_t *a, struct sa_rollup_writer *w, size_t *built, sa_error_t *error);

#endif
