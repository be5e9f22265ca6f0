/*
 * sa_jobsvg.h - `slurm-report job --svg`: each GPU run's utilisation drawn small, from
 * the series a Prometheus holds (query_range, --prometheus-url) or, without one, from
 * the summary slurm-ingest stored (runs[].prom: mean, median and maximum as lines).
 */
#ifndef SA_JOBSVG_H
#define SA_JOBSVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"

typedef struct {
    int64_t t;
    double v;
} sa_jsvg_pt_t;

/* One run's panel. */
typedef struct {
    char *label;            /* "cluster 1084 run 1 (2 x a100)" (owned) */
    int64_t start, end;
    sa_jsvg_pt_t *pts;      /* the series (mean over the run's GPUs, percent), in time order (owned) */
    size_t n, cap;
    bool has_summary;       /* mean, p50, max known */
    double mean, p50, max;
    const char *source;     /* static: what is drawn and from where */
} sa_jsvg_run_t;

/*
 * Fetches run's series of job_id from the Prometheus at url (query_range over [start, end],
 * about 240 points; exporter "jobstats" or slurm-job-exporter's names): false with
 * *error (SA_ERR_IO) when the server failed.
 */
bool sa_jsvg_fetch(sa_jsvg_run_t *run, const char *url, const char *exporter, int64_t job_id, sa_error_t *error);

/* Writes the panels as one standalone SVG document. */
void sa_jsvg_write(FILE *out, const char *title, const sa_jsvg_run_t *runs, size_t n);

/* Frees the panels' memory and the array. */
void sa_jsvg_free(sa_jsvg_run_t *runs, size_t n);

#endif
