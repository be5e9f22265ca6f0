/*
 * sa_rdb.h - slurm-report's read-only access to the job archive in MongoDB (the
 * collections slurm-ingest writes: jobs, jobs_superseded, clusters, ingest_runs, ingest_days, rollups;
 * schema/jobdoc/job.schema.json). Nothing here writes, creates or indexes anything.
 *
 * Every query is a plain find (filter, projection, batch size) valid on MongoDB
 * and on FerretDB 1.24; everything else is computed in C.
 */
#ifndef SA_RDB_H
#define SA_RDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mongoc/mongoc.h>

#include "sa_bson.h"
#include "sa_error.h"
#include <stdio.h>

#include "sa_model.h"

typedef struct sa_rdb sa_rdb_t;

/*
 * Connects and pings. The URI is never printed: errors name the host list only.
 * Fails with SA_ERR_USAGE on a malformed URI, SA_ERR_MONGO when the server does not
 * answer within serverSelectionTimeoutMS (10 s unless the URI says).
 */
sa_rdb_t *sa_rdb_open(const char *uri, const char *db_name, sa_error_t *error);
/* Closes db, or drops one reference sa_rdb_ref took (the last close frees). Accepts NULL. */
void sa_rdb_close(sa_rdb_t *db);
/* Another reference to db, for a report run inside another (the site's sections): each closes its own. */
sa_rdb_t *sa_rdb_ref(sa_rdb_t *db);

/*
 * Turns the read cache on (max_bytes > 0) for what sa_rdb_each_id reads: each document
 * read by _id, and each _id found absent, is kept for the connection's life (the site's
 * run), keyed by collection, options and _id, until max_bytes of documents are kept;
 * past that, documents are read again. Only for reads that give the same answer every
 * time for as long as db lives: rollup documents read at the commit db pinned
 * (sa_rdb_rollup_seq), ingest_days; and the job documents the job lists name
 * (sa_rollup_read_jobs), so that every section of one run sees a job as one version (an
 * ingest writing meanwhile changes it for the next run, not between two sections).
 */
void sa_rdb_cache(sa_rdb_t *db, size_t max_bytes);
/* The read cache of one run that runs many reports over one connection (the site, utilization over time). */
#define SA_RDB_RUN_CACHE_BYTES ((size_t)256 << 20)
/*
 * What the read cache did: *fetched documents read from the server, *kept of them held
 * (every one unless the cache filled up), *hits documents given from it.
 */
void sa_rdb_cache_stats(const sa_rdb_t *db, size_t *fetched, size_t *kept, size_t *hits);

/*
 * -v: each commit a report takes is said on verbose (NULL: nothing), one line per cluster:
 * "# rollups of CLUSTER read at commit N (observed to ISO)". tools/kill-loop's readers use
 * it: two reads of one commit must give one answer.
 */
void sa_rdb_set_verbose(sa_rdb_t *db, FILE *verbose);

/* A collection of the archive database (borrowed: owned by db). */
mongoc_collection_t *sa_rdb_collection(sa_rdb_t *db, const char *name);

/*
 * Sets *error from a driver error: "MongoDB at HOSTS: what: message" (code 1 when
 * the server could not be reached, else 0; see sa_mongo_error()).
 */
void sa_rdb_error(sa_error_t *error, const sa_rdb_t *db, const char *what, const bson_error_t *berr);

/* A cluster document (collection clusters): times SA_UNSET when absent. */
typedef struct {
    char *name;
    int64_t last_squeue_at, last_sacct_at, last_sinfo_at;
    int64_t rollup_version; /* slurm-ingest keeps the cluster's usage rollups (schema/jobdoc/sa_rollup.h); 0: not */
    /* slurm-ingest keeps the cluster's ingest_days and first_submit (schema/rollup/sa_runlog.h); 0: not */
    int64_t ingest_days_version;
    int64_t first_run_at, last_run_at; /* the span of its ingest runs' started_at */
    int64_t first_submit;              /* the earliest submit of its job documents */
    /* the last commit of its rollups when the report began (schema/rollup/sa_rollup.h, "Commits"): every rollup
     * document is read as it was then; and what open runs count up to at that commit (SA_UNSET: not said) */
    int64_t roll_seq, roll_as_of;
    bool in_archive; /* false: named by -M but no document */
} sa_rcluster_t;

typedef struct {
    sa_rcluster_t *v;
    size_t n;
} sa_rclusters_t;

/*
 * The clusters to report on: those named (when names->n > 0, in that order) or every
 * cluster document of the archive (sorted by name). Fails with SA_ERR_USAGE (one line,
 * naming the clusters the database has) when a named cluster has no document, or the
 * database has none at all (a misspelt --db).
 */
bool sa_rdb_clusters(sa_rdb_t *db, const sa_strv_t *names, sa_rclusters_t *out, sa_error_t *error);
void sa_rclusters_clear(sa_rclusters_t *c);

/*
 * Checks that every name of names (accounts, users: field "account" or "user") has a
 * job document in the clusters cl (or is in also, which may be NULL: the awards file's
 * accounts); fails with SA_ERR_USAGE naming the first that has none. One indexed-or-
 * scanning find with limit 1 per name and collection.
 */
bool sa_rdb_check_names(sa_rdb_t *db, const sa_rclusters_t *cl, const char *field, const sa_strv_t *names,
                        const sa_strv_t *also, sa_error_t *error);

/*
 * The cluster's last observation of its jobs: what its rollups' last commit says (open runs
 * count up to it), else the later of last_squeue_at and last_sacct_at, else fallback.
 */
int64_t sa_rcluster_as_of(const sa_rcluster_t *c, int64_t fallback);

/*
 * The commit of cluster's rollups this report reads at (sa_rcluster_t.roll_seq), taken
 * once per report: by sa_rdb_clusters, else at the first call; *parts: it says every
 * month's parts index is complete (schema/rollup/sa_rollup_key.h).
 */
bool sa_rdb_rollup_pin(sa_rdb_t *db, const char *cluster, int64_t *seq, bool *parts, sa_error_t *error);

/* ---- reading BSON values: sa_bson_iter_time/int/str of schema/jobdoc/sa_bson.h ---------- */

/*
 * Appends the filter of an array's tasks (array.job_id: id, and array.task_id: sub when
 * sub is not SA_UNSET) or of a het job's components (array.job_id: null, het.job_id: id,
 * and het.offset: sub): the index {cluster, array.job_id, het.job_id} serves both.
 */
void sa_rbson_append_members(bson_t *b, bool array, int64_t id, int64_t sub);

/* Appends {key: {$in: [names...]}} to b. */
void sa_rbson_append_in(bson_t *b, const char *key, const sa_strv_t *names);

/* ---- reading documents ------------------------------------------------------------ */

typedef bool (*sa_rdb_doc_cb)(const bson_t *doc, void *ctx, sa_error_t *error);

/*
 * Runs a find over collection coll (filter; opts: projection, sort, ...; may be NULL)
 * and calls fn with each document (borrowed for the call); fn returning false stops
 * with its error.
 */
bool sa_rdb_each(sa_rdb_t *db, const char *coll, const bson_t *filter, const bson_t *opts, sa_rdb_doc_cb fn, void *ctx,
                 sa_error_t *error);

/*
 * Calls fn with each document of coll whose _id is one of ids[0..n) (one {_id: {$in}}
 * find with opts; absent ones are skipped). With the read cache on (sa_rdb_cache), only
 * the documents not read before are asked for, and every document is given in the order
 * of ids.
 */
bool sa_rdb_each_id(sa_rdb_t *db, const char *coll, char **ids, size_t n, const bson_t *opts, sa_rdb_doc_cb fn,
                    void *ctx, sa_error_t *error);

/*
 * The members of an ingest_runs document that health, the site and the metrics read
 * (job documents are read through schema/jobdoc/sa_jobview.h). Times SA_UNSET, strings NULL when absent; strings are
 * borrowed from the document.
 */
typedef struct {
    const char *error_text;
    int64_t finished_at;
    bool ok_flag, has_ok;
    int64_t started_at;
} sa_ringest_run_t;

void sa_ringest_run_read(const bson_t *doc, sa_ringest_run_t *f);

/* Which ingest runs sa_rdb_ingest_runs gives. */
typedef struct {
    int64_t from, to;  /* started_at in [from, to); SA_UNSET: unbounded */
    int ok;            /* -1: any; 0: failed runs only (ok false); 1: successful runs only */
    bool newest_first; /* else oldest first */
    size_t limit;      /* at most this many (0: all) */
} sa_rdb_runs_query_t;

/*
 * Calls fn with each ingest run of cluster c that q selects (an entry of its ingest_days,
 * which has the members of an ingest_runs document the reports read, under their names;
 * one per run), by started_at. The days are read by _id, SA_RUNLOG_BATCH at a time,
 * from the latest day the query and the cluster's runs allow back to the earliest, and
 * the walk stops once limit runs are given (newest first) or after two years of days
 * without a run. A cluster whose ingest_days slurm-ingest has not built yet (an archive
 * of an older version) is read from ingest_runs as before, with one find.
 */
bool sa_rdb_ingest_runs(sa_rdb_t *db, const sa_rcluster_t *c, const sa_rdb_runs_query_t *q, sa_rdb_doc_cb fn,
                        void *ctx, sa_error_t *error);
/* A number of an ingest_runs document by its dotted path ("phases_ms.exec", "counts.docs_read"); 0 when absent. */
double sa_ringest_run_number(const bson_t *doc, const char *path);
/*
 * Appends to names the phases an ingest_runs document records (the members of its
 * phases_ms, in its order) that names lacks. False on out of memory.
 */
bool sa_ringest_run_phases(const bson_t *doc, sa_strv_t *names);

#endif
