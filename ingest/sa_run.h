/*
 * sa_run.h - what one invocation of slurm-ingest does for one cluster: take the
 * lock, replay the spool, capture (run Slurm or read files), archive the raw
 * captures, ingest, spool when MongoDB is unreachable, record the run.
 * main.c turns the result into an exit code (sa_exit.h).
 */
#ifndef SA_RUN_H
#define SA_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_config.h"
#include "sa_error.h"
#include "sa_ingest.h"

typedef struct {
    const sa_config_t *cfg;      /* every table option (cluster, db, sqlite, dirs, commands, limits) */
    char *mongo_uri;             /* resolved; never printed */
    int64_t at;                  /* --at, or now */
    const char *files[SA_IN_COUNT]; /* --sinfo/--squeue/--sacct/--sdiag FILE; all NULL: run Slurm */
    sa_sacct_text_opts_t topts;  /* --delimiter, --sacct-fields for sacct text files */
    bool print_stats;            /* --stats */
    bool no_mongo;               /* --no-mongo: time series only */
} sa_run_opts_t;

/* The outcome, for the exit code and the log. */
typedef enum {
    SA_RUN_OK = 0,
    SA_RUN_SPOOLED,   /* MongoDB unreachable: captures spooled, nothing lost */
    SA_RUN_FAILED,    /* error says why (domain tells which code) */
} sa_run_result_t;

/* One ingest run (the default command). */
sa_run_result_t sa_run_ingest(const sa_run_opts_t *opts, sa_error_t *error);

/*
 * `slurm-ingest replay DIR`: re-ingests every capture of the cluster under DIR (an
 * --archive-dir or a spool directory) in time order, snapshot by snapshot. Files are
 * not removed.
 */
sa_run_result_t sa_run_replay(const sa_run_opts_t *opts, const char *dir, sa_error_t *error);

#endif
