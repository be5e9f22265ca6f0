/*
 * sa_rollup_contrib.h - what one job document contributes to the rollups
 * (sa_rollup_contrib_of): its records in each rollup document it touches, all of them
 * in the job's part. The one function every rollup derives from: the writer, the
 * rebuild, the verify and the reports' --from-jobs path call it.
 *
 * Records are int64 arrays of a width that depends on the document's kind
 * (sa_rollup_nf): SA_RR_NF fields for members, open runs and the job lists (SA_RR_*),
 * SA_RS_NF for the started lists (SA_RS_*). Field 0 is always the record's row key (an
 * index into the contribution's or document's keys table).
 */
#ifndef SA_ROLLUP_CONTRIB_H
#define SA_ROLLUP_CONTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "sa_error.h"
#include "sa_jobview.h"
#include "sa_rollup_key.h"
#include "sa_runsrc.h"

/* The idle threshold of the efficiency sums kept in rollups (percent; efficiency's default). */
#define SA_ROLLUP_IDLE_PCT 5.0
/* A run counts at most this many days (an end years after the start is a broken record). */
#define SA_ROLLUP_MAX_DAYS 3660

/*
 * The fields of a member record (members, open runs; the job lists use some of them, see
 * sa_rollup.h).
 */
enum {
    SA_RR_KEY,        /* index into the document's keys */
    SA_RR_START,      /* the run's interval clipped to the day (open: the run's start) */
    SA_RR_END,        /* ... its end (open: 0) */
    SA_RR_GPUS,       /* GPUs of the key's type */
    SA_RR_CPUS,       /* allocated CPUs (on the run's first type only) */
    SA_RR_MEM,        /* allocated memory, MiB (first type only) */
    SA_RR_BILL,       /* billing weight x 1000 (first type only) */
    SA_RR_STARTED,    /* 1: the run started this day (first type only) */
    SA_RR_ENDED_AT,   /* the run's own end when it ended this day, else -1 */
    SA_RR_STATE,      /* index into states of the run's final state (first type only), else -1 */
    SA_RR_E_RUNS,     /* efficiency figures of a run that ended this day (the type's share) */
    SA_RR_E_GPU_RUNS,
    SA_RR_E_MEM_RUNS,
    SA_RR_E_GPU_S,
    SA_RR_E_IDLE_S,
    SA_RR_E_NODATA_S,
    SA_RR_E_UTIL_S,
    SA_RR_E_UTIL_MPCT_S,
    SA_RR_E_CPU_USED_MS,
    SA_RR_E_CPU_ALLOC_S,
    SA_RR_E_MEM_USED_KIB,
    SA_RR_E_MEM_REQ_KIB,
    SA_RR_E_PROM_S,   /* of SA_RR_E_UTIL_S, the GPU-seconds whose utilisation is Prometheus's (runs[].prom) */
    SA_RR_HOSTS,      /* members, open runs: a run with GPUs, index into the document's hosts (its nodes, a
                         hostlist); -1 none (no GPU, or no nodes said); SA_RR_HOSTS_UNKEPT: read from a
                         document written before 0.5.1, which kept none */
    SA_RR_NF
};
/* The efficiency slots end before SA_RR_HOSTS (the rows' sums: SA_RR_E_END - SA_RR_E_RUNS of them). */
#define SA_RR_E_END SA_RR_HOSTS
/* The record width 0.4 and 0.5.0 stored (no SA_RR_HOSTS); such records are read with SA_RR_HOSTS_UNKEPT. */
#define SA_RR_NF_05 (SA_RR_NF - 1)
#define SA_RR_HOSTS_UNKEPT (-2)

/*
 * In a job list's record (LIVE, ENDED) the efficiency slots, unused there, keep what
 * utilization's planned time needs of a job that never started (pending, or ended without
 * a start), so that it reads the lists and not the jobs' documents. SA_RL_PLAN 0: not kept
 * (a list written before 0.5.1, or a job that started): a reader reads the document.
 */
enum {
    SA_RL_PLAN = SA_RR_E_RUNS,         /* SA_RL_PLAN_KEPT, | SA_RL_PLAN_RESV for a job of a reservation */
    SA_RL_ELIGIBLE = SA_RR_E_GPU_RUNS, /* the job's eligible time, SA_UNSET when not known */
    SA_RL_PLAN_CPUS = SA_RR_E_MEM_RUNS, /* the CPUs it asked for (req.cpus, else cpus), SA_UNSET when not known */
    SA_RL_TASKS = SA_RR_E_GPU_S        /* an array meta-record's pending tasks (sa_rollup_array_tasks), else 0 */
};
#define SA_RL_PLAN_KEPT 1
#define SA_RL_PLAN_RESV 2

/* The fields of a started-list record: one run that started that day. */
enum {
    SA_RS_KEY,        /* index into the keys (gpu_type: the run's first type, "" for a CPU-only run) */
    SA_RS_START,      /* the run's start */
    SA_RS_SUBMIT,     /* the submit time of the run's incarnation, SA_UNSET when not known */
    SA_RS_ELIGIBLE,   /* when it became eligible, SA_UNSET when not known */
    SA_RS_GPUS,       /* its GPUs (all types) */
    SA_RS_NODES,      /* its nodes, 0 when not known */
    SA_RS_CPUS,       /* its CPUs */
    SA_RS_NF
};

/*
 * The record width of documents of kind; the field holding a state (an index into states),
 * or -1; the field holding a hostlist (an index into hosts), or -1.
 */
size_t sa_rollup_nf(sa_rollup_kind_t kind);
int sa_rollup_state_field(sa_rollup_kind_t kind);
int sa_rollup_hosts_field(sa_rollup_kind_t kind);

/* A row key: account, user, partition, qos, gpu_type ("" when absent). */
#define SA_ROLLUP_ROWKEY_N 5
typedef struct {
    char *s[SA_ROLLUP_ROWKEY_N];
} sa_rollup_rowkey_t;
int sa_rollup_rowkey_cmp(const sa_rollup_rowkey_t *a, const sa_rollup_rowkey_t *b);

/*
 * The submit and eligible times of run r of job view j (SA_UNSET when not known): the
 * run's own (runs[].submit, runs[].eligible); a run written before they were kept takes
 * the document's submit when it started at the document's start, and the document's
 * eligible when its submit is the document's (the incarnation the document describes).
 */
void sa_rollup_queue_times(const sa_jobview_t *j, const sa_jobview_run_t *r, int64_t *submit, int64_t *eligible);

/*
 * What a job list records of job j (and what `current --from-jobs` counts, the same rule):
 * its CPUs, allocated, or asked for while pending or when the allocation is not said; its
 * memory, the job's total asked for (what Slurm allocates), MiB. 0 when not said.
 */
int64_t sa_rollup_list_cpus(const sa_jobview_t *j);
int64_t sa_rollup_list_mem_mb(const sa_jobview_t *j);
/* The number of tasks of an array's task string ("1-10%3", "1,3,5-7", "0-15:4"); 0 when not read. */
int64_t sa_rollup_array_tasks(const char *s);
/* The planned fields (SA_RL_*) of job j, a job that never started, into the list record x. */
void sa_rollup_plan_fields(const sa_jobview_t *j, int64_t *x);

/* The records one job document adds to one rollup document (of the job's part). */
typedef struct {
    sa_rollup_kind_t kind;
    int64_t day;       /* the day's start for the dated kinds, else 0 */
    int64_t *rec;      /* nrec x sa_rollup_nf(kind) */
    size_t nrec, cap;
} sa_rollup_contrib_doc_t;

typedef struct {
    double idle_pct;   /* a run under this GPU utilisation is idle: SA_ROLLUP_IDLE_PCT (reports may set another) */
    sa_runsrc_t rs;
    sa_rollup_rowkey_t *keys; /* borrowed strings (the job view's) */
    size_t nkeys, keycap;
    const char **states;
    size_t nstates, statecap;
    const char **hosts; /* borrowed (the job view's runs[].nodes) */
    size_t nhosts, hostcap;
    sa_rollup_contrib_doc_t *docs; /* the documents it adds to, in no order */
    size_t ndocs, doccap, docinit;
} sa_rollup_contrib_t;

void sa_rollup_contrib_init(sa_rollup_contrib_t *c);
void sa_rollup_contrib_clear(sa_rollup_contrib_t *c);
/* The contribution of job view j (read with its history). False only on out of memory. */
bool sa_rollup_contrib_of(sa_rollup_contrib_t *c, const sa_jobview_t *j, sa_error_t *error);
/* The records c adds to the document of kind and day (NULL: none). */
const sa_rollup_contrib_doc_t *sa_rollup_contrib_find(const sa_rollup_contrib_t *c, sa_rollup_kind_t kind,
                                                      int64_t day);

/* Appends to find options the projection of every field sa_rollup_contrib_of reads (and _v). */
void sa_rollup_projection(bson_t *opts);

#endif
