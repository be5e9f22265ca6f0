/*
 * sa_jobview.h - a typed read view of a stored job document (BSON, as MongoDB returns
 * it): what the reports use - identity, state, GPUs, times, the runs with their GPUs by
 * type, the state history - so that nothing else walks a job document by member name. The
 * members are those of schema/jobdoc/sa_jobfields.c; a member the document lacks (or a query
 * did not project) reads as absent.
 *
 * The GPU count by type, from Slurm's text to a report's GPU-hours, passes these files:
 *   1. ingest/sa_tres.c        "gres/gpu:a100=2" (AllocTRES, tres_alloc_str) -> sa_tres_t.gpus
 *                              {a100: 2} (sa_tres_parse; squeue's gres_detail: sa_gres_parse_gpus)
 *   2. schema/jobdoc/sa_jobdoc.c      record -> document: runs[].gpus, runs[].gpus_by_type [{type, count}]
 *                              (run_json, tres_json)
 *   3. schema/jobdoc/sa_jobview.c     document -> sa_jobview_t: runs[i].gpus, runs[i].gpu_types[k]
 *   4. report/sa_usage_scan.c  GPU-seconds of each run by type in the report's window (count_run);
 *                              report/sa_usage_calc.c turns them into hours and years
 *
 * Ownership: strings and the id point into the BSON document and are valid while it
 * is; the arrays are the view's, reused by the next sa_jobview_read. Times are epoch
 * seconds, SA_UNSET when absent.
 */
#ifndef SA_JOBVIEW_H
#define SA_JOBVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "sa_error.h"
#include "sa_model.h" /* sa_stats_t: runs[].usage, runs[].steps[].usage */

/* GPUs of one type in a run. */
typedef struct {
    const char *type; /* "" = untyped; NULL when the document has no type */
    int64_t count;
} sa_jobview_gpu_t;

/* One allocated TRES the model does not name (alloc.other[], runs[].other[]), as Slurm printed it. */
typedef struct {
    const char *name, *value; /* NULL when absent */
} sa_jobview_tres_t;

/* One step of a run (runs[].steps[]). */
typedef struct {
    const char *id, *name, *state, *nodes; /* NULL when absent */
    int64_t start, end, elapsed_s;         /* SA_UNSET when absent */
    int64_t cpus;                          /* alloc.cpus, SA_UNSET when absent */
    int64_t gpus;                          /* alloc.gpus, 0 when absent */
    int exit_code, exit_signal;            /* -1 when absent */
    sa_stats_t usage;                      /* runs[].steps[].usage (absent members: sa_model.h) */
} sa_jobview_step_t;

/*
 * What the cluster's Prometheus recorded of a run (runs[].prom, slurm-ingest's import):
 * each figure -1 when absent; has false when the run has no prom at all.
 */
typedef struct {
    bool has;
    int64_t read_at;        /* SA_UNSET when absent */
    int64_t gpu_series;     /* -1 when absent */
    double gpu_util_mean, gpu_util_p50, gpu_util_max, idle_gpu_s, idle_pct;
    double gpu_mem_max_bytes, gpu_mem_mean_bytes, gpu_power_mean_w, sm_occupancy_mean;
    double cpu_cores_mean, mem_max_bytes;
    const char *exporter;   /* NULL when absent */
} sa_jobview_prom_t;

/* One run of a job (runs[]). */
typedef struct {
    int64_t start, end;     /* SA_UNSET when absent (end: still running, or never seen to end) */
    int64_t submit, eligible; /* runs[].submit, runs[].eligible: of the run's incarnation, SA_UNSET when absent */
    const char *state;      /* base state of the run, NULL when absent */
    const char *nodes;      /* hostlist expression, NULL when absent */
    int64_t node_count;     /* SA_UNSET when absent */
    int64_t cpus;           /* SA_UNSET when absent */
    int64_t gpus;           /* 0 when absent */
    const sa_jobview_gpu_t *gpu_types; /* runs[].gpus_by_type, in the document's order */
    size_t ngpu_types;
    const char *gpu_type;   /* runs[].gpu_type, NULL when absent */
    int gpu_type_source;    /* runs[].gpu_type_source: sa_run_gpu_type_source_t, 0 when absent */
    int exit_code, exit_signal; /* -1 when absent */
    int64_t elapsed_s;      /* SA_UNSET when absent (still running) */
    int64_t mem_mb;         /* allocated memory, SA_UNSET when absent */
    double billing;         /* runs[].billing, -1 when absent */
    const sa_jobview_tres_t *other; /* runs[].other, in the document's order */
    size_t nother;
    const char *reason;     /* runs[].reason: why the run's incarnation waited (sacct's Reason), NULL when absent */
    sa_stats_t usage;       /* runs[].usage (absent members: sa_model.h) */
    sa_jobview_prom_t prom; /* runs[].prom */
    const sa_jobview_step_t *steps; /* runs[].steps, in the document's order */
    size_t nsteps;
} sa_jobview_run_t;

/* One state transition (history[]). */
typedef struct {
    const char *state; /* NULL when absent */
    int64_t at;
    const char *reason; /* NULL when absent */
    bool observed;      /* at is when a snapshot first saw the state (_observed) */
} sa_jobview_hist_t;

typedef struct {
    /* identity */
    bson_value_t id;        /* _id (a string "<cluster>:<job_id>", an ObjectId before 0.2); valid when has_id */
    bool has_id;
    const char *cluster, *user, *account, *partition, *qos; /* NULL when absent */
    int64_t job_id;
    const char *state;      /* base state, NULL when absent */
    bool final;             /* state is one of sa_job_final_states */
    int64_t gpus;           /* GPUs of the current run (0 when absent) */
    int64_t req_gpus;       /* GPUs asked for: req.gpus (0 when absent) */
    int64_t req_mem_mb;     /* memory asked for, the job's total: req.mem_mb (SA_UNSET when absent) */
    int64_t req_cpus;       /* req.cpus (SA_UNSET when absent) */
    double alloc_billing;   /* alloc.billing, the billing weight allocated (-1 when absent) */
    const sa_jobview_tres_t *alloc_other; /* alloc.other, in the document's order */
    size_t nalloc_other;
    int64_t req_nodes;      /* req.nodes, the nodes asked for (SA_UNSET when absent) */
    const char *cancelled_by; /* extra.cancelled_by: the uid sacct's "CANCELLED by <uid>" named, NULL when absent */
    const char *source;     /* slurm.source: the source of the record behind the current fields, NULL when absent */
    const char *name, *job_id_display, *nodes; /* NULL when absent */
    int64_t cpus, restart_cnt, time_limit_min, elapsed_s; /* SA_UNSET when absent */
    bool time_limit_unlimited; /* time_limit_unlimited: true */
    int exit_code, exit_signal; /* exit {code, signal}, -1 when absent */
    /* times */
    int64_t submit, start, end, expected_end, vanished_at, seen_first, seen_last;
    int64_t eligible;       /* when the job (the incarnation of submit) became eligible: eligible, SA_UNSET when absent */
    const char *reason;     /* Slurm's state reason: reason, NULL when absent */
    int64_t expected_start; /* a pending job's forecast start: expected_start, else (archives written before it was
                               a date) extra.expected_start in epoch seconds; SA_UNSET when absent */
    /* membership: array.job_id / array.task_id, het.job_id / het.offset (SA_UNSET when absent) */
    int64_t array_job_id, array_task_id, het_job_id, het_offset;
    const char *array_tasks; /* array.task_string: an array meta-record's pending tasks ("1-10%3"), NULL when absent */
    const char *reservation; /* NULL when absent */
    /* runs and history, in the document's order */
    const sa_jobview_run_t *runs;
    size_t nruns;
    bool has_runs;          /* the document has a runs array (even an empty one) */
    const sa_jobview_hist_t *history;
    size_t nhistory;
    bool has_history;
    /* storage (private) */
    sa_jobview_run_t *run_buf;
    sa_jobview_hist_t *hist_buf;
    sa_jobview_gpu_t *gpu_buf;
    size_t run_cap, hist_cap, gpu_cap;
    sa_jobview_step_t *step_buf;
    size_t step_cap;
    sa_jobview_tres_t *other_buf; /* the runs' and alloc's other TRES, in the order read */
    size_t other_cap, other_used, run_other_off, alloc_other_off;
} sa_jobview_t;

void sa_jobview_init(sa_jobview_t *v);
/* Frees the view's arrays (the view can be read into again after sa_jobview_init). */
void sa_jobview_clear(sa_jobview_t *v);

/*
 * Reads a job document into v (everything from a previous read is replaced). Fails on
 * out of memory or a document that is not BSON. Members of another type than the field
 * table's read as absent; integers may be int32, int64 or double, times dates or integers.
 */
bool sa_jobview_read(sa_jobview_t *v, const bson_t *doc, sa_error_t *error);

#endif
