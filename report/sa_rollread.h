/*
 * sa_rollread.h - slurm-report's reading of the usage rollups slurm-ingest keeps
 * (schema/jobdoc/sa_rollup.h): a report reads its window's days by _id, whole days as their
 * rows documents and a day its window's boundaries cut as its members document, so it
 * costs the window's days whatever the archive holds. Internal to report/.
 */
#ifndef SA_ROLLREAD_H
#define SA_ROLLREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_rdb.h"
#include "sa_rollup.h"

/* True when the report can use the rows of day alone (no boundary of it cuts the day). */
typedef bool (*sa_rollread_whole_fn)(int64_t day, void *ctx);
/* Called with each rollup document read (borrowed for the call). */
typedef bool (*sa_rollread_fn)(const sa_rolldoc_t *d, void *ctx, sa_error_t *error);

/*
 * Reads the rollup documents of cluster for the UTC days that [from, to) touches, and
 * the open runs' document when open, by _id (a day nobody worked is absent: not read,
 * not an error). *docs (may be NULL) counts the documents read.
 */
bool sa_rollread(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, bool open, sa_rollread_whole_fn whole,
                 sa_rollread_fn fn, void *ctx, size_t *docs, sa_error_t *error);

/* Reads the rollup documents ids[0..n) by _id (absent ones are skipped); *docs (may be NULL) counts them. */
bool sa_rollread_ids(sa_rdb_t *db, char **ids, size_t n, sa_rollread_fn fn, void *ctx, size_t *docs,
                     sa_error_t *error);

/*
 * Reads a cluster's job lists (schema/jobdoc/sa_rollup.h): its live shards when live, and the
 * ended lists of the days [from, to) touches.
 */
bool sa_rollread_lists(sa_rdb_t *db, const char *cluster, bool live, int64_t from, int64_t to, sa_rollread_fn fn,
                       void *ctx, size_t *docs, sa_error_t *error);

/*
 * Reads the job documents ids names from coll (jobs or jobs_superseded) by _id, 400 per
 * $in query, in job id order (ids is sorted so, duplicates dropped); projection may be NULL.
 */
bool sa_rollread_jobs(sa_rdb_t *db, const char *coll, sa_strv_t *ids, const bson_t *projection, sa_rdb_doc_cb fn,
                      void *ctx, sa_error_t *error);
/* Reads a cluster's started lists (schema/jobdoc/sa_rollup.h) of the days [from, to) touches. */
bool sa_rollread_started(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, sa_rollread_fn fn, void *ctx,
                         size_t *docs, sa_error_t *error);

#endif
