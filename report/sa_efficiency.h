/*
 * sa_efficiency.h - what the allocated resources of a run did (internal to report/):
 * the per-run figures `slurm-report efficiency` sums and `slurm-report job` prints.
 *
 * The figures of one run, as seff defines them:
 *   CPU efficiency     TotalCPU / (elapsed x allocated CPUs)
 *   memory efficiency  MaxRSS (the largest of any step) / requested memory (req.mem_mb:
 *                      ReqTRES mem, the job's total; ReqMem n/c of Slurm <= 20.11
 *                      times the nodes / CPUs; else the run's allocated memory)
 *   GPU utilisation    runs[].usage.gpu_util_pct, per allocated GPU (schema/sa_jobdoc.c)
 * A figure whose inputs Slurm did not gather is absent (has_* false), never 0.
 */
#ifndef SA_EFFICIENCY_H
#define SA_EFFICIENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_jobview.h"

typedef struct {
    int64_t elapsed_s;      /* the run's elapsed_s, else end - start; SA_UNSET while it runs */
    int64_t gpu_s;          /* allocated GPUs x elapsed (0: CPU-only or still running) */
    bool has_cpu;           /* TotalCPU, CPUs and elapsed known, elapsed x CPUs > 0 */
    double cpu_used_s;      /* TotalCPU */
    double cpu_alloc_s;     /* elapsed x CPUs */
    bool has_mem;           /* MaxRSS and a requested memory > 0 known */
    int64_t mem_used_bytes; /* MaxRSS */
    int64_t mem_req_bytes;  /* the requested memory */
    bool has_util;          /* the run's GPU utilisation is known (and it has GPUs) */
    double gpu_util_pct;
} sa_eff_run_t;

/* The figures of run r of job j. */
void sa_eff_run(const sa_jobview_t *j, const sa_jobview_run_t *r, sa_eff_run_t *e);

#endif
