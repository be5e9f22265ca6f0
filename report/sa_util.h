/*
 * sa_util.h - utilization's data (internal to report/): what the runs had allocated hour by
 * hour (sa_utilalloc.c: the usage rollups or the job documents, through usage's own sums;
 * slurmdbd's planned time from the started and job lists), and the classes of a cluster's
 * time by GPU type and node state (sa_utildata.c, by the rule of sa_utilcalc.h), which the
 * table (sa_utilization.c), the summary (sa_utilsum.c) and the site read.
 */
#ifndef SA_UTIL_H
#define SA_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_rcommon.h"
#include "sa_utilcalc.h"

/* The resources utilization counts. */
typedef enum { SA_UR_CPU = 0, SA_UR_MEM, SA_UR_GPU, SA_UR_N } sa_ures_t;

/*
 * What the runs of one cluster had allocated, per UTC hour of the window ([h0 + 3600 k,
 * h0 + 3600 (k + 1)) clipped to it), within the time the cluster's series knows, in
 * CPU-, MiB- and GPU-seconds.
 */
typedef struct {
    char *cluster;
    bool exact;       /* the runs' (the archive has the cluster); false: not known, the snapshots' are used */
    char *why;        /* not exact: why (no archive given; the archive's message) */
    int64_t as_of;    /* the cluster's last observation of its jobs (usage's as-of); SA_UNSET when not read */
    bool lists;       /* exact, and its rollups' started and job lists are there (not --from-jobs, built) */
    int64_t h0;       /* the start of the window's first hour (floored to the hour) */
    size_t nh;        /* hours */
    double *res[SA_UR_N]; /* per hour (nh each): CPUs, memory, all GPUs */
    char **types;     /* the GPU types of the runs ("": untyped, as the runs say them) */
    double **type_gpu; /* per type, per hour */
    size_t ntypes;
    double *plan;     /* per hour: slurmdbd's planned CPU-seconds before the cap at idle; NULL: not read */
    size_t plan_docs; /* job documents read for it (jobs that never started, their lists written before 0.5.1) */
    size_t plan_listed; /* jobs that never started read from their lists */
    size_t plan_unknown; /* pending jobs whose eligible time is not known: no planned time */
} sa_ualloc_t;

void sa_ualloc_clear(sa_ualloc_t *a);

/*
 * Reads slurmdbd's planned time of a's cluster (sa_utilplan.c) into a->plan, per hour of
 * the known time (spans[0..2 nsp)): every run that started from the window's start to the
 * cluster's last observation (the started lists: its eligible time, start and CPUs), and
 * every job that never started and was pending in the window (the live and ended lists,
 * then their documents by _id for eligible, ReqCPUS, reservation and array tasks).
 */
bool sa_util_read_planned(const sa_report_opts_t *o, sa_rdb_t *db, const int64_t *spans, size_t nsp,
                          sa_ualloc_t *a, size_t *docs, sa_error_t *error);

/*
 * Reads what the runs of each of clusters[0..n) had allocated over the window of o (the
 * archive's: rollups, or job documents with --from-jobs, as usage reads them) and, when
 * planned, slurmdbd's planned time (the started lists and the job lists, and the documents
 * of the jobs that never started). out[i] (cleared with sa_ualloc_clear) is exact only when
 * the archive has cluster i; without a MongoDB URI (no option, environment or credential,
 * no --db) nothing is read and none is. *docs counts the rollup documents read.
 */
bool sa_util_read_alloc(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_rtsdbs_t *tsdbs, bool planned,
                        sa_ualloc_t *out, size_t *docs, sa_error_t *error);

/* One row of the utilization by node state: a GPU type (or all nodes) in an exact state. */
typedef struct {
    char *type;          /* NULL: all nodes ("*"); else the GPU type ("": untyped) */
    bool config_unknown; /* type NULL: the nodes whose GPU configuration nobody said */
    char *state;
    double node_s;
    double cap[SA_UR_N];          /* CPU-, MiB-, GPU-seconds of capacity (type rows: GPUs, and their nodes' CPUs) */
    double cls[SA_UR_N][SA_UC_N]; /* by class (type rows: GPUs only) */
    double cpu_seen_total, cpu_seen_idle; /* the snapshots' CPU-seconds in the state: the class of its free time */
} sa_urow_t;

/* A cluster's utilization over a window. */
typedef struct {
    sa_urow_t *rows;     /* "*" rows by state, then each type's by state (sorted) */
    size_t nrows, cap;
    bool exact;          /* the allocation is the runs' */
    double capped[SA_UR_N]; /* allocation over the capacity of its hour, cut (as slurmdbd does) */
    double typeless_gpu; /* GPU-seconds of the runs' types the series has no GPUs of: in the * rows only */
    double planned, planned_raw; /* CPU-seconds: slurmdbd's planned, capped at each hour's idle; before */
    bool has_planned;
    double cpu_split, cpu_unknown, mem_unknown; /* CPU-, MiB-seconds of grouped sinfo nodes (split; nobody said) */
    double gpu_carried, gpu_use_unknown, node_config_unknown; /* GPU-seconds carried; node-seconds of unknown GPUs */
    double capped_types; /* GPU-seconds of a type over its capacity in an hour, cut */
} sa_util_t;

void sa_util_clear(sa_util_t *u);

/*
 * The window check, the clusters (-M, else the --sqlite file's, else the archive's) and
 * what their runs had allocated (sa_util_read_alloc; planned: slurmdbd's planned time too):
 * *alloc has clusters->n entries (free with sa_util_free_alloc). For the table, the summary
 * and the site.
 */
bool sa_util_prepare(const sa_report_opts_t *o, sa_rtsdbs_t *tsdbs, sa_strv_t *clusters, bool planned,
                     sa_ualloc_t **alloc, sa_error_t *error);
void sa_util_free_alloc(sa_ualloc_t *alloc, size_t n);

/* The GPU type of the rows of nodes whose GPUs nobody said (grouped sinfo --json). */
#define SA_UTIL_UNKNOWN_CONFIG "(unknown GPU configuration)"

/*
 * The preamble lines and JSON members (into jcl, the cluster's object) that say where the
 * allocated time of cluster's utilization u comes from (a) and what it could not count.
 */
bool sa_util_notes(const char *cluster, const sa_util_t *u, const sa_ualloc_t *a, sa_strv_t *preamble, json_t *jcl);

/*
 * The capacity of a cluster's utilization u by resource and class, as --summary and
 * `sreport cluster Utilization` say it: the rows of all nodes (GPU type "*") summed, and
 * slurmdbd's planned CPU time taken out of idle. Returns the index of u's first GPU type
 * row.
 */
size_t sa_util_summary_classes(const sa_util_t *u, double all[SA_UR_N][SA_UC_N]);

/*
 * utilization --summary (sa_utilsum.c): per cluster of clusters (alloc[i]: what its runs
 * had allocated), its CPUs, memory, GPUs and each GPU type's capacity by class, each row
 * adding to 100 %.
 */
bool sa_report_utilization_summary(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_rtsdbs_t *tsdbs,
                                   const sa_ualloc_t *alloc, FILE *out, sa_error_t *error);

/*
 * Computes cluster's utilization over [from, to) from its series db and what its runs had
 * allocated (a; NULL or not exact: the snapshots'), hour by hour (sa_utilcalc.h). u is
 * cleared first.
 */
bool sa_util_compute(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, const sa_ualloc_t *a,
                     sa_util_t *u, sa_error_t *error);

#endif
