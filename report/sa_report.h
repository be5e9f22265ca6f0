/*
 * sa_report.h - slurm-report's reports: usage (GPU time against allocations),
 * utilization (node states from the time series), health (of the archive) and
 * current (job counts of the latest snapshot). main.c parses the command line into
 * sa_report_opts_t and calls one of these; tests call them directly.
 *
 * Accounting rules (usage), stated in every output:
 * - A job's GPU time is, for each run, its allocated GPUs x the overlap of
 *   [run start, run end) with the window. Every run of a requeued job counts
 *   (jobs_superseded too: documents displaced by job-id reuse were real jobs).
 * - A run's end: its own end; else the next run's start; else the job's end when it
 *   is final; else, for a job no squeue listing shows any more (vanished_at), the
 *   last snapshot that listed it; else the first later state of its history when the
 *   job left RUNNING (requeued, pending again); else, still running, the cluster's
 *   last observation (the later of clusters.last_squeue_at and last_sacct_at; the
 *   report's "now" when the cluster has neither).
 * - Pending time counts nothing; a CPU-only run counts nothing.
 * - GPU type: typed TRES (gres/gpu:a100); else the single GPU type of every node of
 *   the run in the time series at its start; else "unknown".
 * - GPU-year = hours_per_gpu_year GPU-hours (24 x --year-days, default 365 -> 8760).
 * - RGU-years = GPU-years x the RGU weight of the type (sa_rgu.h); types without
 *   a weight are counted apart (gpu_hours_unweighted) and named on stderr.
 * GPU time is accumulated in integer GPU-seconds, so results do not depend on the
 * order in which the server returns documents.
 */
#ifndef SA_REPORT_H
#define SA_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"
#include "sa_model.h"
#include "sa_rtable.h"

#include "sa_exit.h" /* the exit codes of both binaries, SA_EXIT_UNHEALTHY for health */

typedef enum {
    SA_FMT_TABLE = 0,
    SA_FMT_PARSABLE,
    SA_FMT_CSV,
    SA_FMT_JSON,
    SA_FMT_SVG,
    SA_FMT_HTML,
    SA_FMT_PROMETHEUS,
} sa_format_t;

/* The unit of time figures: -t hours|minutes|percent|years (sreport), --unit. */
typedef enum {
    SA_UNIT_GPU_HOURS = 0,
    SA_UNIT_GPU_YEARS,
    SA_UNIT_RGU_YEARS,
    SA_UNIT_GPU_MINUTES,
    SA_UNIT_PERCENT, /* percent of the cluster's total over the window */
} sa_unit_t;

/*
 * The trackable resources usage and top count (-T, sreport's names): gres/gpu in
 * GPU-seconds, cpu in CPU-seconds, mem in MiB-seconds, billing in thousandths of a
 * billing unit x seconds (the rollups' gpu_s, cpu_s, mem_mb_s, billing_milli_s).
 */
typedef enum { SA_TRES_GPU = 0, SA_TRES_CPU, SA_TRES_MEM, SA_TRES_BILLING, SA_TRES_N } sa_rtres_t;
/* sreport's name of a TRES ("gres/gpu", "cpu", "mem", "billing"), and back (also "gpu"), case-insensitive. */
const char *sa_rtres_name(sa_rtres_t r);
bool sa_rtres_parse(const char *s, sa_rtres_t *r);

struct sa_rdoc; /* a report's document, sa_render.h */
/* Receives a report's document instead of its being written (the site writes it several ways). */
typedef bool (*sa_rdoc_cb)(const struct sa_rdoc *doc, void *ctx, sa_error_t *error);

/* --by keys (usage: account user gpu-type; current: partition account user). */
enum {
    SA_BY_ACCOUNT = 1 << 0,
    SA_BY_USER = 1 << 1,
    SA_BY_GPU_TYPE = 1 << 2,
    SA_BY_PARTITION = 1 << 3,
    SA_BY_GPUS = 1 << 4,  /* waits: GPUs of the run, in XDMoD's bins */
    SA_BY_NODES = 1 << 5, /* waits: nodes of the run, in XDMoD's bins */
    SA_BY_RPC_TYPE = 1 << 6, /* scheduler: sdiag's RPCs by message type */
    SA_BY_RPC_USER = 1 << 7, /* scheduler: sdiag's RPCs by user */
};

enum { SA_CW_PUT = 1, SA_CW_EMF = 2 }; /* sa_report_opts_t.cloudwatch: what current does with the metrics */

typedef struct {
    /* where the data is */
    const char *mongo_uri;   /* never printed */
    const char *db_name;     /* default "slurm" */
    bool db_given;           /* --db was given (utilization reads the archive only when one is named) */
    const char *sqlite_path; /* NULL: /var/lib/slurm-ingest/CLUSTER.sqlite when it exists */
    const char *sqlite_dir;  /* directory of the per-cluster default (tests); NULL: /var/lib/slurm-ingest */
    /* what */
    sa_strv_t clusters, accounts, users; /* empty = all */
    int64_t start, end;                  /* window [start, end); SA_UNSET when not given */
    int64_t now;                         /* the report's "now" (--now; default: the clock) */
    unsigned by;                         /* SA_BY_* bits; 0 = the report's default */
    sa_unit_t unit;
    bool unit_given;                     /* -t or --unit was given (utilization: hours by default) */
    double year_days;                    /* 365 */
    const char *allocations_path;        /* --allocations FILE or URL; NULL: none */
    const char *allocations_json;        /* the URL's awards as main.c read them once (sa_alloc_url.h; borrowed),
                                            parsed in place of the file; NULL: allocations_path is a file */
    size_t allocations_len;
    const char *rgu_weights_path;        /* NULL: built-in table */
    int64_t stale_s;                     /* health: ingest older than this is stale (3600) */
    int64_t since;                       /* current: finished jobs since (SA_UNSET: now - 24 h) */
    /* how */
    sa_format_t format;
    bool no_header;                      /* -n */
    FILE *verbose;                       /* -v: the preamble of parsable, CSV and JSON output is written here
                                            too (stderr); NULL: it is not */
    bool long_format;                    /* -l: every column in the table and HTML */
    bool trailing_delimiter;             /* -p: parsable lines end in the delimiter too */
    const char *delimiter;               /* --delimiter (parsable); NULL: "|" */
    sa_colspec_t *columns;               /* -o: the columns and widths (owned; freed by clear) */
    size_t ncolumns;
    /* where to (NULL: the report is written to its FILE in format) */
    sa_rdoc_cb doc_cb;
    void *doc_ctx;
    struct sa_rdb *shared_db;            /* the connection (and its read cache) of a run of many reports, the
                                            site's or utilization over time's (borrowed; NULL: a report connects) */
    struct sa_rtsdbs *shared_tsdbs;      /* ... and its time series, each opened once (borrowed; NULL: a report
                                            opens its own) */
    /* internal views of the site (not on the command line) */
    bool unusable_only;                  /* utilization: the GPU types' rows with unusable GPU-hours alone (free but
                                            not idle: stranded, down, planned down, reserved), with their reason */
    bool names_known;                    /* -A and -u came from the archive's own rows (the site's account pages):
                                            not looked up again */
    /* efficiency and job */
    double idle_threshold;               /* efficiency: a run under this GPU utilisation % is idle (5) */
    const char *job_arg;                 /* job: the job id as given (raw id, or 123_4 / 123+1 as Slurm shows it) */
    bool from_jobs;                      /* --from-jobs: sums from the job documents, not the rollups (the reference) */
    bool per_node;                       /* --per-node: current --prometheus adds a gauge per node */
    int cloudwatch;                      /* current: SA_CW_PUT (--cloudwatch), SA_CW_EMF (--cloudwatch-emf), or 0 */
    const char *cw_namespace;            /* --cloudwatch-namespace (NULL: "Slurm") */
    const char *cw_region, *cw_endpoint; /* --cloudwatch-region, --cloudwatch-endpoint (NULL: from the region) */
    /* jobs (sacct's options) */
    sa_strv_t states;                    /* -s: state names or sacct's abbreviations, as given; empty = any */
    sa_strv_t names, partitions, job_ids; /* --name, --partition / -r, -j; empty = any */
    bool duplicates;                     /* -D: every run of a requeued job, and jobs whose id was reused */
    /* usage and top: -T, the TRES counted, in the order given (ntres 0: gres/gpu alone) */
    sa_rtres_t tres[SA_TRES_N];
    size_t ntres;
    size_t top_n;                        /* top: --top N (10) */
    bool summary;                        /* utilization: --summary, percent of capacity per class */
    bool sort_idle;                      /* efficiency --sort idle: the most idle GPU-hours first */
    const char *prometheus_url;          /* job --svg --prometheus-url URL: the series fetched (query_range) */
    const char *prometheus_exporter;     /* its exporter: slurm-job-exporter (NULL) or jobstats */
    const struct sa_sreport_req *sreport; /* sreport: the sreport command line parsed (sa_sreport.h; borrowed) */
} sa_report_opts_t;

void sa_report_opts_init(sa_report_opts_t *o);
void sa_report_opts_clear(sa_report_opts_t *o);

/*
 * The grouping keys of usage and efficiency: --by when given; else the key columns -o
 * names (account, user, gpu_type), as sreport's format fields choose its rows' keys, so
 * `-o account,user,gpu_hours` gives a row per account and user; else dflt.
 */
unsigned sa_report_by(const sa_report_opts_t *o, unsigned dflt);

/*
 * The reports. Each writes one document to out and returns false with *error set
 * (domain SA_ERR_USAGE, SA_ERR_INPUT, SA_ERR_MONGO, SA_ERR_SQLITE or SA_ERR_IO) when
 * it cannot. Warnings (unweighted GPU types, clusters without data) go to warn
 * (may be NULL), one line each.
 */
bool sa_report_usage(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
bool sa_report_utilization(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* *healthy: false when a check failed (the caller exits SA_EXIT_UNHEALTHY). */
bool sa_report_health(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error);
bool sa_report_current(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* What the allocated GPUs and CPUs did over the window (sa_efficiency.c). */
bool sa_report_efficiency(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* Queue waits of the runs that started in the window (sa_waits.c). */
bool sa_report_waits(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* One job's whole story from the archive (sa_jobreport.c); SA_ERR_USAGE when the archive has no such job. */
bool sa_report_job(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* A sacct-like listing of the archive's jobs (sa_jobs.c). */
bool sa_report_jobs(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* The top users and accounts by a TRES, with their share of capacity (sa_top.c). */
bool sa_report_top(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* The scheduler's statistics (sdiag) over the window, from the time series (sa_scheduler.c). */
bool sa_report_scheduler(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);
/* sreport's own reports and text, in sreport's grammar (o->sreport; sa_sreport.c). */
bool sa_report_sreport(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error);

/*
 * The one table of slurm-report's reports: name, columns (-e, -o), and the function that
 * runs it (*healthy: false when health found a problem; the others leave it). The site
 * (sa_site.h) has neither: it writes every report into a directory.
 */
typedef bool (*sa_report_fn)(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error);
typedef struct {
    const char *name;
    const sa_col_t *(*cols)(size_t *n); /* NULL: no table */
    sa_report_fn run;                   /* NULL: not a report of one document (site) */
} sa_report_def_t;

/* The report named name, or NULL. */
const sa_report_def_t *sa_report_find(const char *name);
/* Every report, in the order `slurm-report --help` lists them; *n gets their number. */
const sa_report_def_t *sa_report_all(size_t *n);

/*
 * Every column a report can have (usage, utilization in hours, health, current, efficiency, job), for
 * -e; NULL for a report without a table (site).
 */
const sa_col_t *sa_report_columns(const char *report, size_t *n);

/* "table", "parsable", ... -> format; false when unknown. */
bool sa_format_parse(const char *s, sa_format_t *f);
const char *sa_format_name(sa_format_t f);

#endif
