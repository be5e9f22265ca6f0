/*
 * sa_promimp.h - the Prometheus import: what each job run's GPUs, CPUs and memory did,
 * summarised from the per-job exporters' series once the run ended, into the run's
 * runs[].prom (schema/jobdoc/job.schema.json).
 *
 * Which runs: those of the final job documents in the cluster's ended lists
 * ("<cluster>:<YYYY-MM-DD>:e", read by _id) whose job ended after the cluster's
 * prom_watermark (less an hour: a job whose end arrives late), or after the backfill start,
 * and the documents of prom_todo (a write that lost a race); a run that has runs[].prom is
 * not asked again. The clusters document keeps prom_watermark (a date): every job that
 * ended before it is done or in prom_todo. The first import (no watermark) starts a day
 * before the run's time.
 *
 * The queries (the server's /api/v1/query, POSTed): one per statistic for a batch of up
 * to 32 runs, each run's term evaluated over [start, end] with the `@ end` modifier (runs
 * of the same start and end share a term: `slurmjobid=~"1|2"`); the terms of a batch joined
 * by `or` (so a batch holds a job id once). For slurm-job-exporter, per GPU series
 * labelled slurmjobid:
 *   gpu_util_mean   avg by (slurmjobid) (avg_over_time(slurm_job_utilization_gpu{..}[Ds] @ E))
 *   gpu_util_p50    quantile_over_time(0.5, (avg by (slurmjobid) (..))[Ds:Ss] @ E)
 *   gpu_util_max    max by (..) (max_over_time(..[Ds] @ E))
 *   idle_gpu_s      sum by (..) (avg_over_time((.. < bool 5)[Ds:Ss] @ E)) x D
 *   gpu_series      count by (..) (max_over_time(..[Ds] @ E))
 *   gpu_mem_*       slurm_job_memory_usage_gpu (bytes): max of the maxima, mean of the means
 *   gpu_power_mean_w slurm_job_power_gpu (milliwatts) / 1000: mean of the GPUs' means
 *   sm_occupancy_mean slurm_job_sm_occupancy_gpu: mean of the means
 *   cpu_cores_mean  sum by (..) (rate(slurm_job_core_usage_total{..}[Ds] @ E)) / 1e9 (nanoseconds)
 *   mem_max_bytes   max by (..) (max_over_time(slurm_job_memory_max{..}[Ds] @ E))
 * (D the run's duration, E its end, S prometheus-step). For jobstats the GPU series are
 * nvidia_gpu_duty_cycle, nvidia_gpu_memory_used_bytes and nvidia_gpu_power_usage_milliwatts
 * of the GPUs whose nvidia_gpu_jobId was the job's (`and on(instance, minor_number)
 * (nvidia_gpu_jobId == ID)`, labelled jobid=ID by label_replace, all through subqueries),
 * CPU and memory cgroup_cpu_total_seconds and cgroup_memory_rss_bytes labelled jobid.
 *
 * A server that cannot be reached, does not answer in time or answers garbage stops the
 * import where it is: nothing half-summarised is written, the watermark stays before the
 * first run not done, and the error is returned in *warning for one log line: the
 * archive's run goes on as if no import had been asked for.
 */
#ifndef SA_PROMIMP_H
#define SA_PROMIMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_archive.h"
#include "sa_error.h"

typedef struct {
    const char *url;      /* the server (may carry credentials: never logged) */
    const char *exporter; /* "slurm-job-exporter" (default) or "jobstats" */
    int64_t budget_s, timeout_s, step_s;
    int64_t since;        /* a backfill's start, SA_UNSET: none */
    int64_t at;           /* the run's time: jobs that ended up to it */
    double idle_pct;      /* idle under this GPU utilisation (SA_ROLLUP_IDLE_PCT) */
} sa_promimp_opts_t;

typedef struct {
    size_t queries;       /* HTTP requests made */
    size_t runs;          /* runs summarised */
    size_t jobs;          /* job documents written */
    size_t left;          /* runs found that wait for a later run */
    size_t todo;          /* documents in prom_todo afterwards */
} sa_promimp_stats_t;

/*
 * Imports for cluster. False only when the archive failed (error: MongoDB's); the server's
 * failures and a spent budget leave *warning (a new string: one line, the URL without
 * credentials) and return true.
 */
bool sa_promimp_run(sa_archive_t *a, const char *cluster, const sa_promimp_opts_t *o, sa_promimp_stats_t *st,
                    char **warning, sa_error_t *error);

#endif
