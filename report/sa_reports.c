/*
 * sa_reports.c - the one table of slurm-report's reports (sa_report_def_t of sa_report.h):
 * name, columns and run function. It stands above the reports it lists, so that nothing
 * they use depends on it (report/ has no include circle).
 */
#include "sa_rcommon.h"

#include <string.h>

static bool run_usage(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_usage(o, out, warn, error);
}

/* utilization; its --svg draws it over time (sa_utilsvg.c, built on utilization --summary's documents) */
static bool run_utilization(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    if (o->format == SA_FMT_SVG)
        return sa_report_utilization_over_time(o, out, warn, error);
    return sa_report_utilization(o, out, warn, error);
}

static bool run_current(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_current(o, out, warn, error);
}

static bool run_efficiency(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_efficiency(o, out, warn, error);
}

static bool run_job(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_job(o, out, warn, error);
}

static bool run_jobs(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_jobs(o, out, warn, error);
}

static bool run_top(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_top(o, out, warn, error);
}

static bool run_waits(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_waits(o, out, warn, error);
}

static bool run_scheduler(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_scheduler(o, out, warn, error);
}

static bool run_sreport(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    (void)healthy;
    return sa_report_sreport(o, out, warn, error);
}

static const sa_report_def_t reports[] = {
    {"usage", sa_usage_cols, run_usage},
    {"utilization", sa_utilization_cols, run_utilization},
    {"health", sa_health_cols, sa_report_health},
    {"current", sa_current_cols, run_current},
    {"site", NULL, NULL},
    {"efficiency", sa_efficiency_cols, run_efficiency},
    {"job", sa_job_cols, run_job},
    {"jobs", sa_jobs_cols, run_jobs},
    {"top", sa_top_cols, run_top},
    {"waits", sa_waits_cols, run_waits},
    {"scheduler", sa_scheduler_cols, run_scheduler},
    {"sreport", NULL, run_sreport},
};

const sa_report_def_t *sa_report_all(size_t *n)
{
    *n = sizeof reports / sizeof reports[0];
    return reports;
}

const sa_report_def_t *sa_report_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof reports / sizeof reports[0]; i++) {
        if (strcmp(reports[i].name, name) == 0)
            return &reports[i];
    }
    return NULL;
}

const sa_col_t *sa_report_columns(const char *report, size_t *n)
{
    const sa_report_def_t *r = sa_report_find(report);
    *n = 0;
    return r && r->cols ? r->cols(n) : NULL;
}

