/*
 * sa_rcommon.h - what the reports share (internal to report/): the time series of
 * a cluster, the archive, the final job states; the renderers (sa_render.h).
 */
#ifndef SA_RCOMMON_H
#define SA_RCOMMON_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "sa_rdb.h"
#include "sa_render.h"
#include "sa_report.h"
#include "sa_rtable.h"
#include "sa_tsdb.h"

/* The time series files opened for a report (one shared --sqlite file, or one per cluster). */
typedef struct sa_rtsdbs {
    sa_tsdb_t *shared;
    char **names;      /* per-cluster files: cluster names */
    sa_tsdb_t **dbs;   /* ... and their handles (NULL: no file) */
    size_t n;
    bool none;         /* set by health when --sqlite cannot be read: no cluster has a time series */
} sa_rtsdbs_t;

void sa_rtsdbs_init(sa_rtsdbs_t *t);
void sa_rtsdbs_clear(sa_rtsdbs_t *t);
/*
 * The time series holding cluster: --sqlite PATH (opened read-only once), else
 * DIR/CLUSTER.sqlite when it exists (DIR: --sqlite-dir, $SLURM_REPORT_SQLITE_DIR, else
 * /var/lib/slurm-ingest); from o->shared_tsdbs when the report runs inside another (the
 * site, utilization over time: each file opened once for all of them). *db is NULL (and
 * true returned) when there is none (or t->none) and required is false; when required,
 * its absence is SA_ERR_USAGE (exit 2, as a file named that is not there), saying why
 * (sa_rtsdbs_missing).
 */
bool sa_rtsdbs_get(sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, bool required, sa_tsdb_t **db,
                   sa_error_t *error);
/*
 * Why cluster has no time series, one line into buf (returned): the file looked for and
 * how to name another ("cluster demo: no time series (/var/lib/slurm-ingest/demo.sqlite
 * does not exist; give --sqlite PATH, ...)"), or what is wrong with --sqlite.
 */
const char *sa_rtsdbs_missing(const sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, char *buf,
                              size_t sz);
/*
 * The clusters of a report over the time series (scheduler, utilization over time): -M,
 * else every cluster of the --sqlite file, else the archive's; appended to out.
 */
bool sa_report_series_clusters(const sa_report_opts_t *o, sa_rtsdbs_t *tsdbs, sa_strv_t *out, sa_error_t *error);
/*
 * What a report says when it leaves out what needs cluster's time series (what: "its
 * share of capacity is left out"): one line on warn (may be NULL), with why.
 */
void sa_rtsdbs_left_out(FILE *warn, const sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster,
                        const char *what);

/*
 * The one rule of a report's window [start, end): when needed (usage, utilization, top,
 * waits, efficiency), both ends are known ("<report> needs a window: ...") and the end is
 * after the start; when not (jobs: start may be SA_UNSET), an end before a known start is
 * refused all the same ("the window is empty: END (...) is not after START (...)").
 * SA_ERR_USAGE.
 */
bool sa_report_window(const char *report, int64_t start, int64_t end, bool needed, sa_error_t *error);

/*
 * Connects to the archive given by the options (URI: --mongo-uri, SLURM_REPORT_MONGO_URI,
 * SLURM_INGEST_MONGO_URI), or takes a reference to o->shared_db (the site's). Close with
 * sa_rdb_close either way.
 */
sa_rdb_t *sa_report_connect(const sa_report_opts_t *o, sa_error_t *error);
/*
 * True when the options, the environment or the systemd credential name an archive (a
 * MongoDB URI, or --db): sa_report_connect would not fall back to the local default.
 */
bool sa_report_archive_given(const sa_report_opts_t *o);

/*
 * The job base states the reports count as final: sa_job_final_states (schema/), the one
 * list slurm-ingest uses too (REVOKED, a federated sibling job, included).
 */
bool sa_rstate_is_final(const char *s);
/* Appends {"state": {op: [those states]}} to b; op is "$in" or "$nin". */
void sa_rbson_append_final_states(bson_t *b, const char *op);

/*
 * utilization over time (sa_utilsvg.c; --svg, and the site): the classes of each cluster's
 * GPU and CPU time by day (hour for 3 days or less), from utilization --summary's document
 * of each of them, stacked.
 */
bool sa_report_utilization_over_time(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);

/* The columns of each report (sa_report_columns). */
const sa_col_t *sa_usage_cols(size_t *n);
const sa_col_t *sa_utilization_cols(size_t *n);
const sa_col_t *sa_health_cols(size_t *n);
const sa_col_t *sa_current_cols(size_t *n);
const sa_col_t *sa_efficiency_cols(size_t *n);
const sa_col_t *sa_job_cols(size_t *n);
const sa_col_t *sa_jobs_cols(size_t *n);
const sa_col_t *sa_top_cols(size_t *n);
const sa_col_t *sa_waits_cols(size_t *n);
const sa_col_t *sa_scheduler_cols(size_t *n);

#endif
