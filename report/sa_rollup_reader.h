/*
 * sa_rollup_read.h - slurm-report's reading of the usage rollups slurm-ingest keeps
 * (schema/rollup/sa_rollup.h): a report reads its window's days by _id, whole days as their
 * rows documents and a day its window's boundaries cut as its members document, so it
 * costs the window's days whatever the archive holds. Every document is read as the
 * cluster's last commit when the report began saw it (sa_rdb_rollup_seq; schema/rollup/
 * sa_rollup.h, "Commits"): a report never sums half of an ingest's flush. A document
 * written twice since fails the read with SA_ERR_CHANGED, and slurm-report runs the report
 * again from a newer commit. Internal to report/.
 */
#ifndef SA_ROLLUP_READER_H
#define SA_ROLLUP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_rdb.h"
#include "sa_rollup.h"

/* True when the report can use the rows of day alone (no boundary of it cuts the day). */
typedef bool (*sa_rollup_read_whole_fn)(int64_t day, void *ctx);
/* Called with each rollup document read (borrowed for the call). */
typedef bool (*sa_rollup_read_fn)(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error);

/*
 * Reads the rollup documents of cluster for the UTC days that [from, to) touches, and
 * the open runs' document when open, by _id (a day nobody worked is absent: not read,
 * not an error). *docs (may be NULL) counts the documents read.
 */
bool sa_rollup_read(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, bool open, sa_rollup_read_whole_fn whole,
                 sa_rollup_read_fn fn, void *ctx, size_t *docs, sa_error_t *error);

/* Reads cluster's rollup documents ids[0..n) by _id (absent ones are skipped); *docs (may be NULL) counts them. */
bool sa_rollup_read_ids(sa_rdb_t *db, const char *cluster, char **ids, size_t n, sa_rollup_read_fn fn, void *ctx,
                        size_t *docs, sa_error_t *error);

/*
 * Reads a cluster's job lists (schema/rollup/sa_rollup.h): its live shards when live, and the
 * ended lists of the days [from, to) touches.
 */
bool sa_rollup_read_lists(sa_rdb_t *db, const char *cluster, bool live, int64_t from, int64_t to, sa_rollup_read_fn fn,
                       void *ctx, size_t *docs, sa_error_t *error);

/*
 * Reads the job documents ids names from coll (jobs or jobs_superseded) by _id, 400 per
 * $in query, in job id order (ids is sorted so, duplicates dropped); projection may be NULL.
 * With the connection's read cache on (sa_rdb_cache: the site, utilization over time), each
 * document is read from the server once per run and projection.
 */
bool sa_rollup_read_jobs(sa_rdb_t *db, const char *coll, sa_strv_t *ids, const bson_t *projection, sa_rdb_doc_cb fn,
                      void *ctx, sa_error_t *error);
/* Reads a cluster's started lists (schema/rollup/sa_rollup.h) of the days [from, to) touches. */
bool sa_rollup_read_started(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, sa_rollup_read_fn fn, void *ctx,
                         size_t *docs, sa_error_t *error);

#endif
