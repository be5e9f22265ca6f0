/*
 * sa_tsdb.h - the SQLite time series of node, CPU and GPU states.
 *
 * slurm-ingest writes one snapshot per run (every node as Slurm printed it, at the
 * observation time --at); slurm-report reads state hours back. States are stored
 * exactly (base + every flag, never collapsed), per node as intervals, with per
 * snapshot totals by state and partition, gaps (time without snapshots) recorded as
 * unknown, and sdiag scheduler statistics. The schema and what every column means:
 * schema/tsdb/timeseries.sql. The storage design: the comment at the top of sa_tsdb.c;
 * which file does what: sa_tsdb_private.h.
 *
 * Readers (slurm-report) use only the read API below: no SQL outside schema/.
 *
 * Concurrency: the database is in WAL mode; any number of readers (other processes)
 * work while one writer writes. Each write is one transaction: a snapshot lands whole
 * or not at all. A write waits up to busy_timeout_ms for another writer, then fails
 * with SA_ERR_LOCKED.
 *
 * Errors are one line and name the database path and what is wrong ("/x/ts.db:
 * schema version 3 is newer than this program (1); nothing was changed"). On any
 * error the database keeps its previous contents.
 *
 * A handle is not thread-safe; use one per thread.
 */
#ifndef SA_TSDB_H
#define SA_TSDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_model.h"

/* PRAGMA user_version of the schema this code writes (schema/tsdb/timeseries.sql). */
#define SA_TSDB_SCHEMA_VERSION 4
/* PRAGMA application_id marking our databases: 'SATS'. */
#define SA_TSDB_APPLICATION_ID 0x53415453
/* Snapshots further apart than this leave a gap (unknown time) between them. */
#define SA_TSDB_DEFAULT_MAX_GAP_S 900

/* ---- scheduler statistics (sdiag --json "statistics") ---------------------- */

/*
 * The figures kept, as X(name, kind): kind INT is a count or duration (microseconds
 * for cycle times), TIME an epoch time, BOOL 0/1. Each is a column of table `sched`
 * with the same name. SA_UNSET when sdiag did not give it.
 */
#define SA_SDIAG_FIELDS(X)                                                                                  \
    X(req_time, TIME) X(req_time_start, TIME) X(server_thread_count, INT) X(agent_queue_size, INT)        \
    X(agent_count, INT) X(agent_thread_count, INT) X(dbd_agent_queue_size, INT) X(jobs_submitted, INT)    \
    X(jobs_started, INT) X(jobs_completed, INT) X(jobs_canceled, INT) X(jobs_failed, INT)                 \
    X(jobs_pending, INT) X(jobs_running, INT) X(job_states_ts, TIME) X(schedule_cycle_last, INT)          \
    X(schedule_cycle_max, INT) X(schedule_cycle_mean, INT) X(schedule_cycle_mean_depth, INT)              \
    X(schedule_cycle_per_minute, INT) X(schedule_cycle_total, INT) X(schedule_queue_length, INT)          \
    X(bf_active, BOOL) X(bf_backfilled_jobs, INT) X(bf_last_backfilled_jobs, INT)                        \
    X(bf_cycle_counter, INT) X(bf_cycle_last, INT) X(bf_cycle_max, INT) X(bf_cycle_mean, INT)             \
    X(bf_depth_mean, INT) X(bf_depth_mean_try, INT) X(bf_last_depth, INT) X(bf_last_depth_try, INT)       \
    X(bf_queue_len, INT) X(bf_queue_len_mean, INT) X(bf_when_last_cycle, TIME)

/* What an RPC count is counted by: sdiag's rpcs_by_message_type or rpcs_by_user. */
typedef enum { SA_SDIAG_RPC_TYPE = 0, SA_SDIAG_RPC_USER = 1 } sa_sdiag_rpc_kind_t;

/* One entry of rpcs_by_message_type or rpcs_by_user (table sched_rpc). */
typedef struct {
    sa_sdiag_rpc_kind_t kind;
    char *name;         /* the message type ("REQUEST_JOB_INFO") or the user's name (its uid when unnamed) */
    int64_t count;      /* RPCs since slurmctld started or the statistics were reset (sdiag --reset) */
    int64_t total_time; /* their total time, microseconds; SA_UNSET when not said */
} sa_sdiag_rpc_t;

typedef struct {
#define SA_SDIAG_MEMBER(name, kind) int64_t name;
    SA_SDIAG_FIELDS(SA_SDIAG_MEMBER)
#undef SA_SDIAG_MEMBER
    sa_sdiag_rpc_t *rpcs; /* by message type, then by user; NULL when none (owned) */
    size_t nrpcs;
    json_t *extra; /* every other key of "statistics" (rpcs_by_user, bf_exit, ...); NULL when none */
} sa_sdiag_t;

/* Sets every figure to SA_UNSET, rpcs and extra to NULL. */
void sa_sdiag_init(sa_sdiag_t *sd);
/* Frees rpcs and extra; the figures are left as they are. Accepts NULL. */
void sa_sdiag_clear(sa_sdiag_t *sd);

/* ---- opening ---------------------------------------------------------------- */

typedef struct sa_tsdb sa_tsdb_t;

/*
 * Opens (readonly: false creates) the time series at path. A new or empty database
 * gets the schema; a database of an older schema version is migrated; WAL mode is
 * set. busy_timeout_ms (>= 0) is how long any call waits for another process's lock.
 * Fails, leaving the file untouched, on: a file that is not SQLite, an SQLite database
 * that is not ours (other tables / another application_id), a schema version newer
 * than SA_TSDB_SCHEMA_VERSION, a corrupt file, a lock held beyond the timeout; and
 * when readonly and the file does not exist or has no schema. A path that is a symbolic
 * link is refused, in either mode (SA_ERR_SQLITE, ELOOP: "... is a symbolic link:
 * refused"): in a directory others can write, a planted link would aim the time series
 * at any file of the caller's.
 * Returns a handle to free with sa_tsdb_close(), or NULL with *error set.
 */
sa_tsdb_t *sa_tsdb_open(const char *path, bool readonly, int busy_timeout_ms, sa_error_t *error);

/* Closes the handle (finalises the cached statements). Accepts NULL. */
void sa_tsdb_close(sa_tsdb_t *db);

/*
 * The underlying connection, borrowed, for tests only (PRAGMA max_page_count,
 * integrity checks, dumping tables). Writing through it bypasses every invariant;
 * the programs never use it (everything they need is in the read API).
 */
struct sqlite3 *sa_tsdb_handle(sa_tsdb_t *db);

/* ---- writing -------------------------------------------------------------------- */

typedef struct {
    /* Snapshots more than this many seconds apart leave a gap (> 0; 0 = default 900).
     * Use the same value for every write of a cluster. */
    int64_t max_gap_s;
    /* Scheduler statistics to store at the same time, in the same transaction; NULL
     * for none. Borrowed. */
    const sa_sdiag_t *sdiag;
} sa_tsdb_opts_t;

void sa_tsdb_opts_init(sa_tsdb_opts_t *opts);

/*
 * Records a snapshot of cluster at time `at`: nodes[0..n) (borrowed, n >= 1, names
 * unique) are every node Slurm listed; a node of the cluster that is not among them
 * is absent from this snapshot on. One transaction: the snapshot lands whole or not at
 * all.
 * Intervals: an unchanged node's open interval continues; a change closes it and opens
 * a new one; absence closes it; more than max_gap_s since the previous snapshot closes
 * every interval at that snapshot and records the time between as a gap.
 * Order does not matter: a snapshot older than the cluster's latest is put in its
 * place (giving the same database as if the snapshots had come in time order), and a
 * snapshot at an existing `at` replaces that one (the same data: no change).
 * opts may be NULL (defaults).
 */
bool sa_tsdb_write_snapshot(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                            const sa_tsdb_opts_t *opts, sa_error_t *error);

/* Stores (replaces) the scheduler statistics of cluster at `at` alone, one transaction. */
bool sa_tsdb_write_sdiag(sa_tsdb_t *db, const char *cluster, int64_t at, const sa_sdiag_t *sd, sa_error_t *error);

/* ---- node configurations (GPUs a grouped sinfo does not say per node) ------------- */

/*
 * Records the configured GPUs (gpus_total) of nodes[0..n) as observed at `at`, without
 * their state: `scontrol show nodes --json` given to slurm-ingest --node-config. Only
 * nodes whose gpu_config is SA_NODE_GPUS_OBSERVED are recorded (a node without GPUs as
 * having none); an observation at the same `at` is replaced. One transaction.
 */
bool sa_tsdb_write_node_config(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                               sa_error_t *error);

/*
 * Fills in the configured GPUs of every node of nodes[0..n) whose gpu_config is
 * SA_NODE_GPUS_UNKNOWN, for the snapshot at `at`, from the node's latest per-node
 * observation of cluster before it: in the intervals that start before `at` (written
 * from snapshots that said the node's own GPUs, or carried), or in
 * sa_tsdb_write_node_config's records at or before `at`. Never from a later one, so that
 * the result does not depend on what was written after `at` (a replay into a time
 * series that holds the same snapshots already, or a replay killed halfway and run
 * again, gives what one clean replay gives); a node seen per node only later stays
 * unknown. A node found gets gpus_total, gpu_config SA_NODE_GPUS_CARRIED and
 * gpu_config_at; its gpus_used stays as it was (empty: unknown, except on IDLE and DOWN
 * nodes). *unknown (may be NULL) gets the number of nodes left SA_NODE_GPUS_UNKNOWN.
 * Reads only.
 */
bool sa_tsdb_carry_gpu_config(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                              size_t *unknown, sa_error_t *error);

/*
 * The single GPU type of the nodes of hostlist at a run's start, for runs whose GPUs are
 * untyped: from the snapshot at or before start (or, when the series starts later, the
 * first snapshot before end), never one after `until`, the time the run was observed
 * (SA_UNSET: no bound), so that the result does not depend on snapshots written after
 * it. *type (caller frees) is NULL and *source
 * SA_RUN_GPU_TYPE_UNKNOWN when the nodes have no type, several, differ, are absent or of
 * unknown GPU configuration; else *source is NODE, or CARRIED when any node's GPUs were
 * carried. Reads only; a cluster without snapshots gives UNKNOWN.
 */
bool sa_tsdb_run_gpu_type(sa_tsdb_t *db, const char *cluster, const char *hostlist, int64_t start, int64_t end,
                          int64_t until, char **type, int *source, sa_error_t *error);

/*
 * sa_tsdb_run_gpu_type for the re-typing of runs already archived (no bound in time):
 * a node whose GPUs the run's snapshot did not say (grouped sinfo) takes the type of its
 * nearest later per-node observation (a per-node snapshot, or --node-config), and the
 * run's source is then CARRIED. *cfg_unknown: a node's GPUs are not known at all yet (a
 * later observation may still type the run).
 */
bool sa_tsdb_run_gpu_type_later(sa_tsdb_t *db, const char *cluster, const char *hostlist, int64_t start, int64_t end,
                                char **type, int *source, bool *cfg_unknown, sa_error_t *error);

/* ---- reading ---------------------------------------------------------------------- */
/*
 * Every read is one read transaction (a consistent view while a writer commits). A
 * cluster the database does not know reads as empty (no snapshot, no hours), not as
 * an error, except in sa_tsdb_nodes_at().
 */

/* Appends the names of the clusters of the database to out, sorted. */
bool sa_tsdb_clusters(sa_tsdb_t *db, sa_strv_t *out, sa_error_t *error);

/* Time of the cluster's latest snapshot in *at, SA_UNSET when it has none. */
bool sa_tsdb_last_snapshot(sa_tsdb_t *db, const char *cluster, int64_t *at, sa_error_t *error);

/*
 * The snapshot times of cluster within [from, to), ascending, in *ats (n of them;
 * the caller frees *ats; NULL when none).
 */
bool sa_tsdb_snapshot_times(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t **ats, size_t *n,
                            sa_error_t *error);

/* Seconds of recorded gaps (unknown time) of cluster within [from, to), in *secs. */
bool sa_tsdb_gap_seconds(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t *secs,
                         sa_error_t *error);

/* How much of a window [from, to) the series knows, in seconds. */
typedef struct {
    int64_t first, last; /* the cluster's first and latest snapshot times, SA_UNSET when none */
    int64_t window_s;    /* to - from */
    int64_t before_s;    /* unknown: before the first snapshot (the whole window when there is none) */
    int64_t gap_s;       /* unknown: recorded gaps (sa_tsdb_gap_seconds) */
    int64_t after_s;     /* unknown: after the latest snapshot */
    int64_t known_s;     /* the rest: window_s - before_s - gap_s - after_s */
} sa_tsdb_coverage_t;

bool sa_tsdb_coverage(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_coverage_t *c,
                      sa_error_t *error);

/*
 * The time of [from, to) the series of cluster knows (sa_tsdb_coverage's known_s): from its
 * first snapshot to its latest, less the gaps, as spans in time order: (*spans)[2k] the
 * start and (*spans)[2k + 1] the end of span k, *n spans (the caller frees *spans; NULL when
 * none).
 */
bool sa_tsdb_known_spans(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t **spans, size_t *n,
                         sa_error_t *error);

typedef enum {
    SA_TSDB_BY_STATE = 0,  /* one row per exact state */
    SA_TSDB_BY_NODE,       /* per node and state */
    SA_TSDB_BY_PARTITION,  /* per partition and state (a node in two partitions counts in both) */
    SA_TSDB_BY_GPU_TYPE,   /* per GPU type and state: node/CPU hours of nodes having that type,
                              GPU hours of that type; nodes without GPUs under group NULL, and
                              nodes whose GPU configuration is unknown under group NULL with
                              gpu_config_unknown set (a row of their own) */
} sa_tsdb_group_t;

/*
 * The class of what a node in an exact state has free (neither allocated nor of unknown
 * use: its idle GPUs, CPUs, memory), the classes of sreport cluster utilization and ours:
 *   PLANNED_DOWN  a maintenance reservation (MAINT, MAINTENANCE flags), a node powered down
 *                 (POWERED_DOWN) or not yet there (base FUTURE): slurmdbd's "planned down"
 *                 (as_mysql_rollup.c: MAINT reservations, FUTURE and POWERED_DOWN events);
 *   DOWN          base DOWN, or the FAIL or DRAIN flags: slurmdbd's node events ("down");
 *   RESERVED      a RESERVED flag (a reservation other than maintenance: only its jobs run);
 *   STRANDED      no free CPU (ALLOCATED, or MIXED when no idle CPU-hour was recorded in that
 *                 state): GPUs and memory nobody can use (an idle CPU is never stranded);
 *   IDLE          the rest: free and usable.
 * The first that applies, in that order.
 */
typedef enum {
    SA_TSDB_FREE_IDLE = 0,
    SA_TSDB_FREE_STRANDED,
    SA_TSDB_FREE_DOWN,
    SA_TSDB_FREE_PLANNED_DOWN,
    SA_TSDB_FREE_RESERVED,
    SA_TSDB_FREE_N
} sa_tsdb_free_t;

/*
 * The class of the free resources of nodes in this exact state (with these CPU hours in
 * it: the state is the unit of the aggregation, so a MIXED state that had idle CPUs part
 * of the time counts as usable). *reason (may be NULL) gets why a class other than IDLE
 * ("maintenance", "node powered down", "node not yet in service", "node down", "node
 * failing", "node drained", "node reserved", "no free CPU"), NULL for IDLE. A NULL state
 * is IDLE.
 */
sa_tsdb_free_t sa_tsdb_free_class(const char *state, double cpu_hours_total, double cpu_hours_idle,
                                  const char **reason);
/* "idle", "stranded", "down", "planned_down", "reserved". */
const char *sa_tsdb_free_name(sa_tsdb_free_t c);
/*
 * The class of a node's free CPUs when its free resources are of class c: an idle CPU is
 * never stranded (IDLE instead); Slurm's "other" CPUs (other: neither allocated nor idle)
 * of a node whose class is IDLE or STRANDED are DOWN (Slurm counts a drained or down node's
 * CPUs so), else of class c.
 */
sa_tsdb_free_t sa_tsdb_cpu_free_class(sa_tsdb_free_t c, bool other);

/* One row of sa_tsdb_state_hours(). Strings are borrowed for the callback only. */
typedef struct {
    const char *state;  /* exact "BASE+FLAG+FLAG" */
    const char *group;  /* node / partition / GPU type name; NULL for BY_STATE (and no-GPU nodes) */
    int64_t bucket;     /* sa_tsdb_state_hours_by: the start of the row's bucket (clipped to the window) */
    double node_hours;
    double cpu_hours_total, cpu_hours_alloc, cpu_hours_idle, cpu_hours_other;
    /* Of cpu_hours_total: the CPUs of nodes whose counts are their grouped sinfo record's sums split
     * over its nodes (attr.cpu_config), and of nodes whose allocated CPUs nobody said (a grouped
     * sinfo record whose sums could not be split: counted in none of alloc, idle, other) */
    double cpu_hours_split, cpu_hours_unknown;
    double gpu_hours_total, gpu_hours_used, gpu_hours_idle; /* idle = total - used */
    /* memory, MiB x hours: configured; allocated (where Slurm said it); of nodes whose allocated memory
     * nobody said (a grouped sinfo record) */
    double mem_mb_hours_total, mem_mb_hours_alloc, mem_mb_hours_unknown;
    sa_tsdb_free_t free_class;  /* sa_tsdb_free_class(state, cpu_hours_total, cpu_hours_idle) */
    /* Nodes whose GPUs a grouped sinfo did not say (attr.gpu_config): */
    bool gpu_config_unknown;      /* BY_GPU_TYPE: the row of nodes of unknown GPU configuration */
    double node_hours_gpu_unknown; /* of node_hours: nodes of unknown GPU configuration (GPU time not counted) */
    double gpu_hours_carried;     /* of gpu_hours_total: GPUs carried from an earlier per-node observation */
    double gpu_hours_use_unknown; /* of those: in use or not, unknown (node not IDLE or DOWN); in
                                     neither gpu_hours_used nor gpu_hours_idle */
} sa_tsdb_hours_t;

typedef bool (*sa_tsdb_hours_cb)(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error);

/*
 * Node, CPU and GPU hours of cluster within [from, to), by exact state and the
 * grouping, from the intervals clipped to the window (gaps count nowhere; see
 * sa_tsdb_gap_seconds). Calls cb once per (group, state) with non-zero time, sorted by
 * group then state; cb returning false stops with its error. CPU hours count only
 * intervals where Slurm gave the figure.
 */
bool sa_tsdb_state_hours(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_group_t group_by,
                         sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error);

/*
 * sa_tsdb_state_hours cut in buckets of bucket_s seconds aligned on the epoch (3600: UTC
 * hours; 0: one bucket, the window): one row per (bucket, group, state) with time, sorted by
 * bucket, then group, then state; row.bucket is the bucket's start, or from for the first.
 */
bool sa_tsdb_state_hours_by(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t bucket_s,
                            sa_tsdb_group_t group_by, sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error);

/* A node as observed at one snapshot. Borrowed for the callback only. */
typedef struct {
    const char *name;
    const char *state;      /* exact "BASE+FLAG+FLAG" */
    const char *base;       /* NULL when Slurm gave no state */
    const char *flags;      /* sorted, '+'-joined, "" when none */
    const char *reason;     /* NULL when none */
    const char *partitions; /* sorted, ','-joined, "" when none */
    int64_t cpus_total, cpus_alloc, cpus_idle, cpus_other, mem_total_mb, mem_alloc_mb; /* SA_UNSET */
    int64_t start;          /* start of the interval the node is in */
    int gpu_config;         /* sa_node_gpu_config_t: where gpus come from */
    int cpu_config;         /* sa_node_cpu_config_t: where the CPU counts come from */
    size_t ngpus;
    const struct sa_tsdb_gpu {
        const char *type;
        int64_t total, used;
    } *gpus;                /* sorted by type */
} sa_tsdb_node_t;

typedef bool (*sa_tsdb_node_cb)(const sa_tsdb_node_t *node, void *ctx, sa_error_t *error);

/*
 * Every node present in cluster's snapshot at `at` (which must be a snapshot time),
 * in name order. Fails when there is no such snapshot.
 */
bool sa_tsdb_nodes_at(sa_tsdb_t *db, const char *cluster, int64_t at, sa_tsdb_node_cb cb, void *ctx,
                      sa_error_t *error);

typedef bool (*sa_tsdb_sdiag_cb)(int64_t at, const sa_sdiag_t *sd, void *ctx, sa_error_t *error);

/* The stored scheduler statistics of cluster within [from, to), in time order (extra and rpcs are NULL:
 * sa_tsdb_sdiag_rpcs reads those of one). */
bool sa_tsdb_sdiag_range(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_sdiag_cb cb,
                         void *ctx, sa_error_t *error);

typedef bool (*sa_tsdb_rpc_cb)(const sa_sdiag_rpc_t *rpc, void *ctx, sa_error_t *error);

/*
 * The RPC counts of cluster's scheduler statistics stored at `at` (table sched_rpc): by
 * message type, then by user, each in name order. None (true) when there are none.
 */
bool sa_tsdb_sdiag_rpcs(sa_tsdb_t *db, const char *cluster, int64_t at, sa_tsdb_rpc_cb cb, void *ctx,
                        sa_error_t *error);

/*
 * Checks that cluster's data is whole: every interval row starts at a snapshot, every
 * snapshot's stored totals equal the totals of the nodes its intervals say were there,
 * and the nodes' current attributes match the intervals. *nsnapshots (may be NULL)
 * gets the number of snapshots checked. Reads everything: for tests and --check.
 */
bool sa_tsdb_verify(sa_tsdb_t *db, const char *cluster, size_t *nsnapshots, sa_error_t *error);

#endif
