/*
 * sa_runsrc.h - the one source of typed runs: what every report and the usage rollups
 * count, read from a job document (through the typed view of sa_jobview.h). The
 * `--from-jobs` path of the reports, the rollup rebuild and slurm-ingest's rollup
 * writer all take runs from here, so the rules below are written once.
 *
 * Accounting rules of a run:
 * - Only runs with a start count. A run's end is its own end; else the next run's
 *   start; else the job's end when the job is final (a final job without an end counts
 *   nothing); else, for a job no squeue listing shows any more (vanished_at), that time;
 *   else the first later history entry that is not RUNNING/SUSPENDED when the job left
 *   RUNNING (requeued, pending again); else the run is open: it counts up to the
 *   cluster's last observation (end SA_UNSET here). An end before the start is the start.
 * - GPUs by type (the one GPU-type rule): the typed TRES (gres/gpu:a100); untyped GPUs
 *   take the type slurm-ingest found on the run's nodes at its start
 *   (runs[].gpu_type with gpu_type_source node or carried: sa_tsdb_run_gpu_type at
 *   ingest, re-typed when a later observation says it), else "unknown".
 * - The efficiency figures (seff's) of a run whose own end is known: sa_eff_run. Slurm's
 *   figures first (runs[].usage: TotalCPU, MaxRSS, gres/gpuutil); where one is missing, the
 *   Prometheus import's (runs[].prom: GPU utilisation mean, CPU cores used x elapsed, memory
 *   max), each figure saying its source; then a run's idle GPU-seconds are those Prometheus
 *   saw under the threshold (runs[].prom.idle_gpu_s), not the whole run's when its mean is.
 *   A run of several GPU types is split by type: GPU-seconds exactly, CPU and memory
 *   figures in shares (GPUs of the type / GPUs, rounded), the run counted under its
 *   first type.
 */
#ifndef SA_RUNSRC_H
#define SA_RUNSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_jobview.h"

/* The type of GPUs neither the TRES nor the run's nodes type. */
#define SA_GPU_TYPE_UNKNOWN "unknown"

/* The efficiency figures of one run, as seff defines them (absent: has_* false, never 0). */
typedef struct {
    int64_t elapsed_s;      /* the run's elapsed_s, else end - start; SA_UNSET while it runs */
    int64_t gpu_s;          /* allocated GPUs x elapsed (0: CPU-only or still running) */
    bool has_cpu;           /* TotalCPU, CPUs and elapsed known, elapsed x CPUs > 0 */
    double cpu_used_s;      /* TotalCPU */
    double cpu_alloc_s;     /* elapsed x CPUs */
    bool has_mem;           /* MaxRSS and a requested memory > 0 known */
    int64_t mem_used_bytes; /* MaxRSS */
    int64_t mem_req_bytes;  /* the requested memory (req.mem_mb, else the run's allocated memory) */
    bool has_util;          /* the run's GPU utilisation is known (and it has GPUs) */
    double gpu_util_pct;
    /* where each figure came from: SA_EFF_SRC_SACCT (Slurm's usage), SA_EFF_SRC_PROM (runs[].prom, when
     * Slurm's is missing), SA_EFF_SRC_NONE (absent) */
    int util_src, cpu_src, mem_src;
    /* with util_src SA_EFF_SRC_PROM: the GPU-seconds Prometheus saw under prom_idle_pct (-1: not known) */
    double prom_idle_gpu_s, prom_idle_pct;
} sa_eff_run_t;

enum { SA_EFF_SRC_NONE = 0, SA_EFF_SRC_SACCT, SA_EFF_SRC_PROM };
/* "sacct", "prometheus" or "-". */
const char *sa_eff_src_name(int src);

/* The figures of run r of job j. */
void sa_eff_run(const sa_jobview_t *j, const sa_jobview_run_t *r, sa_eff_run_t *e);

/* GPUs of one type in a run (type never NULL nor empty: "unknown" when not known). */
typedef struct {
    const char *type;
    int64_t count;
} sa_run_gpus_t;

/* One typed run. Strings point into the job view (or are static). */
typedef struct {
    const sa_jobview_run_t *v; /* the view's run */
    int64_t start;
    int64_t end;               /* by the rules above; SA_UNSET: open (counts to the cluster's last observation) */
    int64_t cpus;              /* allocated CPUs, 0 when unknown */
    int64_t mem_mb;            /* allocated memory, 0 when unknown */
    int64_t billing_milli;     /* the job's billing weight x 1000 (rounded), 0 when unknown */
    const sa_run_gpus_t *gpus; /* by type, types unique, in the document's order */
    size_t ngpus;
    int64_t gpu_total;         /* sum of gpus[].count */
} sa_typed_run_t;

typedef struct {
    sa_typed_run_t *runs;
    size_t n, cap;
    sa_run_gpus_t *gbuf;
    size_t ng, gcap;
} sa_runsrc_t;

void sa_runsrc_init(sa_runsrc_t *rs);
void sa_runsrc_clear(sa_runsrc_t *rs);

/*
 * The runs of job view j that have a start, into rs->runs (replacing the previous
 * job's). have_history: j was read with its history. *need_history (may be NULL) is
 * set, and no run given, when an end needs the history that was not read. False only
 * on out of memory.
 */
bool sa_runsrc_read(sa_runsrc_t *rs, const sa_jobview_t *j, bool have_history, bool *need_history,
                    sa_error_t *error);

/* a's share num/den (den > 0), rounded to the nearest: how a multi-type run's figures are split. */
int64_t sa_runsrc_share(int64_t a, int64_t num, int64_t den);

#endif
