/*
 * sa_invocation.h - what one invocation of slurm-ingest does for one cluster.
 *
 * Words: an invocation is one start of slurm-ingest (the timer's, or by hand); each is
 * recorded in the collection ingest_runs, a stored name that keeps the word "run". A
 * run, everywhere else (sa_run_t, a job document's runs[]), is one execution of a job:
 * a requeued job runs several times.
 *
 * The rule every entry point keeps (a timer run, `replay`, a backfill, `migrate`):
 *
 *   lock -> capture -> keep -> parse -> SQLite -> MongoDB -> watermark, drop
 *
 * - lock: the cluster's lock (<lock-dir>/<cluster>.lock) is held throughout;
 * - capture: each Slurm command's output (or each input file, standard input
 *   included) is read exactly once, streamed into the spool under a cap;
 * - keep: the snapshot is made durable in the spool (temporary directory, fsync,
 *   rename, fsync of the parent) and copied to --archive-dir, before it is parsed;
 * - parse: every input is parsed and validated before anything is written; a record
 *   that cannot be parsed is set aside (kept raw, counted, logged), an input that
 *   cannot be parsed at all moves to <spool-dir>/<cluster>/rejected/;
 * - SQLite: the time series of the snapshot, one transaction;
 * - MongoDB: the changed job documents, idempotent writes keyed by _id;
 * - only then: the sacct watermark moves to the end of the window the snapshot held,
 *   and the snapshot leaves the spool.
 * Either a snapshot lands whole or it is still in the spool. When MongoDB cannot be
 * reached, squeue, sinfo and sdiag are still captured and kept and the time series
 * written; sacct waits (Slurm keeps it), and the next run replays the spool first.
 */
#ifndef SA_INVOCATION_H
#define SA_INVOCATION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_config.h"
#include "sa_error.h"
#include "sa_ingest.h"

typedef struct {
    const sa_ingest_config_t *cfg;  /* the typed configuration */
    char *mongo_uri;             /* resolved; never printed */
    int64_t at;                  /* --at, or now */
    const char *files[SA_IN_COUNT]; /* --sinfo/--squeue/--sacct/--sdiag FILE; all NULL: run Slurm */
    sa_sacct_text_opts_t topts;  /* --delimiter, --sacct-fields for sacct text files */
    bool print_stats;            /* --stats */
    bool no_mongo;               /* --no-mongo: time series only */
    bool verify;                 /* --verify: check the job cache against the archive */
    const char *node_config;     /* --node-config FILE: nodes' configured GPUs (scontrol show nodes --json), as of at */
} sa_invocation_opts_t;

/* The outcome, for the exit code and the log. */
typedef enum {
    SA_INVOCATION_OK = 0,
    SA_INVOCATION_SPOOLED,   /* MongoDB unreachable: captures spooled, nothing lost */
    SA_INVOCATION_FAILED,    /* error says why (its domain gives the exit code) */
} sa_invocation_result_t;

/* One ingest run (the default command). */
sa_invocation_result_t sa_invocation_ingest(const sa_invocation_opts_t *opts, sa_error_t *error);

/*
 * `slurm-ingest replay DIR`: re-ingests every snapshot of the cluster under DIR (an
 * --archive-dir, a spool, or the flat directories of 0.1) in time order, under the
 * cluster's lock. Nothing under DIR is changed.
 */
sa_invocation_result_t sa_invocation_replay(const sa_invocation_opts_t *opts, const char *dir, sa_error_t *error);

/*
 * `slurm-ingest rollup [--rebuild]`: recomputes the cluster's usage rollups from its job
 * documents and compares them with the stored ones (*differ: how many differ, each
 * named on standard output), or, with rebuild, rewrites them.
 */
sa_invocation_result_t sa_invocation_rollup(const sa_invocation_opts_t *opts, bool rebuild, size_t *differ, sa_error_t *error);

/*
 * `slurm-ingest audit -S FROM -E TO [--sacct FILE] [--repair]` (sa_audit.h): slurmdbd's
 * records of [from, to) (sacct run in backfill-window pieces, or the --sacct capture)
 * compared with the archive's job documents, one line on out for each difference, then a
 * summary; *left: the differences there are at the end. With repair, under the cluster's
 * lock, the missing and changed jobs' records are merged through the archive's write path
 * (job cache and rollups with it) and the archive compared again. Without, nothing is
 * written and no lock is taken (an ingest may run meanwhile).
 */
sa_invocation_result_t sa_invocation_audit(const sa_invocation_opts_t *o, int64_t from, int64_t to, bool repair,
                                           FILE *out, size_t *left, sa_error_t *error);

/* `slurm-ingest migrate`: moves an archive written by 0.1 to the _id scheme of 0.2 (resumable). */
sa_invocation_result_t sa_invocation_migrate(const sa_invocation_opts_t *opts, sa_error_t *error);

#endif
