/*
 * sa_rcommon.h - what the reports share (internal to report/): the time series of
 * a cluster, the Mongo URI, the period line, JSON and HTML documents, and writing
 * a table in the format asked for.
 */
#ifndef SA_RCOMMON_H
#define SA_RCOMMON_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "sa_rdb.h"
#include "sa_report.h"
#include "sa_rtable.h"
#include "sa_tsdb.h"

/* The time series files opened for a report (one shared --sqlite file, or one per cluster). */
typedef struct {
    sa_tsdb_t *shared;
    char **names;      /* per-cluster files: cluster names */
    sa_tsdb_t **dbs;   /* ... and their handles (NULL: no file) */
    size_t n;
} sa_rtsdbs_t;

void sa_rtsdbs_init(sa_rtsdbs_t *t);
void sa_rtsdbs_clear(sa_rtsdbs_t *t);
/*
 * The time series holding cluster: --sqlite PATH (opened read-only once), else
 * DIR/CLUSTER.sqlite when it exists (DIR = /var/lib/slurm-ingest). *db is NULL (and
 * true returned) when there is none and required is false.
 */
bool sa_rtsdbs_get(sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, bool required, sa_tsdb_t **db,
                   sa_error_t *error);

/* Connects to the archive given by the options (URI: --mongo-uri, SLURM_REPORT_MONGO_URI, SLURM_INGEST_MONGO_URI). */
sa_rdb_t *sa_report_connect(const sa_report_opts_t *o, sa_error_t *error);

/* ISO-8601 of t ("" for SA_UNSET) in a static rotating buffer (8 live at once). */
const char *sa_riso(int64_t t);

/* Adds a line (printf) to a preamble. */
void sa_rpreamble_add(sa_strv_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Dumps a JSON document (2-space indent, keys in insertion order, 12 significant digits) and a newline. */
bool sa_rjson_write(const json_t *doc, FILE *out);

/* {"start": ISO, "end": ISO}. New reference. */
json_t *sa_rjson_period(int64_t start, int64_t end);

/* The preamble as a JSON array of strings. New reference. */
json_t *sa_rjson_strv(const sa_strv_t *v);

/* Starts / ends a self-contained HTML page (no script; inline CSS); title and lines escaped. */
void sa_rhtml_begin(FILE *out, const char *title, const sa_strv_t *preamble);
void sa_rhtml_end(FILE *out);

/*
 * Writes one table in a text format (table, parsable, csv), as JSON {...extra, "rows"},
 * or as an HTML page; extra (may be NULL) is a JSON object of the members that come
 * before "rows" (borrowed). Fails with SA_ERR_USAGE on svg/prometheus.
 */
bool sa_rwrite_table_doc(const sa_report_opts_t *o, const char *title, const sa_strv_t *preamble,
                        const sa_rtable_t *t, const json_t *extra, FILE *out, sa_error_t *error);

/* Text format of a report format (only TABLE, PARSABLE, CSV are text). */
sa_text_format_t sa_rtext_format(sa_format_t f);

/*
 * The job base states the reports count as final: sa_job_final_states (schema/) and
 * REVOKED (a federated sibling job), which slurm-ingest does not count as final.
 */
bool sa_rstate_is_final(const char *s);
/* Appends {"state": {op: [those states]}} to b; op is "$in" or "$nin". */
void sa_rbson_append_final_states(bson_t *b, const char *op);

#endif
