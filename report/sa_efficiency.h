/*
 * sa_efficiency.h - what the allocated resources of a run did (internal to report/):
 * the per-run figures `slurm-report efficiency` sums and `slurm-report job` prints.
 *
 * The figures of one run, as seff defines them:
 *   CPU efficiency     TotalCPU / (elapsed x allocated CPUs)
 *   memory efficiency  MaxRSS (the largest of any step) / requested memory (req.mem_mb:
 *                      ReqTRES mem, the job's total; ReqMem n/c of Slurm <= 20.11
 *                      times the nodes / CPUs; else the run's allocated memory)
 *   GPU utilisation    runs[].usage.gpu_util_pct, per allocated GPU (schema/jobdoc/sa_jobdoc.c)
 * A figure whose inputs Slurm did not gather is absent (has_* false), never 0.
 */
#ifndef SA_EFFICIENCY_H
#define SA_EFFICIENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_jobview.h"
#include "sa_runsrc.h"

/* sa_eff_run_t and sa_eff_run(): the one run source, schema/jobdoc/sa_runsrc.h. */

#endif
