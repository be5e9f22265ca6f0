/*
 * sa_model.h - the data model shared by slurm-ingest and slurm-report.
 *
 * Parsers turn Slurm output into these records; the Mongo and SQLite layers store
 * them; the report reads them back. A newcomer traces a Slurm field from its parser
 * (ingest/parse_*.c) to a member here, to its Mongo field (schema/jobdoc/job.schema.json)
 * and its SQLite column (schema/tsdb/timeseries.sql).
 *
 * Conventions
 * - Integers are int64_t. SA_UNSET (INT64_MIN) means "Slurm did not say" (NO_VAL,
 *   null, absent, "Unknown", "None", ""). SA_INFINITE (INT64_MAX) means UNLIMITED /
 *   INFINITE where Slurm has that notion (time limits).
 * - Times are seconds since the epoch, UTC. 0 from Slurm ("not set") is stored as
 *   SA_UNSET.
 * - Strings are owned, NUL-terminated UTF-8, NULL when absent. "" from Slurm is
 *   stored as NULL.
 * - Ownership: a record owns everything it points to; sa_*_destroy() frees it and
 *   accepts NULL. Records passed to a parser callback are BORROWED: the parser frees
 *   them after the callback returns; a callback that wants to keep one steals it by
 *   calling sa_job_steal()/sa_node_steal() (which moves the contents out).
 * - Unknown values are kept: states and flags as the words Slurm printed, TRES
 *   entries we do not model in tres->other, JSON keys we do not model in ->extra.
 * - The values in ->extra are references to what the parser decoded, not copies:
 *   a record may share them with other records of the same document. They are
 *   read-only; a caller that wants to change one copies it first (json_deep_copy).
 */
#ifndef SA_MODEL_H
#define SA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"

#define SA_UNSET INT64_MIN
#define SA_INFINITE INT64_MAX

/* Job ids are 1..2^53 in every format (JSON's exact integers): 0 is not one. */
#define SA_JOB_ID_MAX (INT64_C(1) << 53)

/* ---- cluster names ------------------------------------------------------------ */

/*
 * The one rule for a cluster name, shared by the configuration, the spool, the lock,
 * the job cache and slurm-report -M: 1 to 128 ASCII letters, digits, '.', '_' or '-',
 * not starting with '.' or '-' (it names files and directories).
 */
#define SA_CLUSTER_NAME_RULE "use 1 to 128 letters, digits, '.', '_' or '-', not starting with '.' or '-'"
bool sa_cluster_name_ok(const char *name);

/* ---- strings ------------------------------------------------------------- */

/* A growable list of owned strings. */
typedef struct {
    char **v;
    size_t n, cap;
} sa_strv_t;

void sa_strv_init(sa_strv_t *sv);
void sa_strv_clear(sa_strv_t *sv);            /* frees every string and the array */
bool sa_strv_push(sa_strv_t *sv, const char *s); /* copies s; false on OOM */
bool sa_strv_contains(const sa_strv_t *sv, const char *s);
/* Adds s unless present; keeps the list sorted (for canonical flag sets). */
bool sa_strv_add_sorted_unique(sa_strv_t *sv, const char *s);

/* ---- state: a base state plus a set of flags, as Slurm holds it ----------- */

/*
 * Job:  base PENDING RUNNING SUSPENDED COMPLETED CANCELLED FAILED TIMEOUT NODE_FAIL
 *       PREEMPTED BOOT_FAIL DEADLINE OUT_OF_MEMORY (and REQUEUED for sacct's
 *       requeued-instance records); flags COMPLETING, CONFIGURING, REQUEUED, ...
 * Node: base IDLE ALLOCATED MIXED DOWN ERROR FUTURE UNKNOWN INVALID;
 *       flags DRAIN, NOT_RESPONDING, MAINTENANCE, RESERVED, PLANNED, ...
 * Words are upper case (Slurm's v0.0.37/38 lower-case node bases are upper-cased).
 * A word the parser does not know is kept as printed (upper-cased) - never dropped.
 * Flags are kept sorted and unique, so two equal states compare equal.
 */
typedef struct {
    char *base;      /* NULL only when Slurm gave no state at all */
    sa_strv_t flags; /* sorted, unique */
} sa_state_t;

void sa_state_init(sa_state_t *st);
void sa_state_clear(sa_state_t *st);
/* "IDLE+DRAIN+NOT_RESPONDING": base then sorted flags joined by '+'. Caller frees. */
char *sa_state_format(const sa_state_t *st);
bool sa_state_equal(const sa_state_t *a, const sa_state_t *b);
bool sa_state_has_flag(const sa_state_t *st, const char *flag);
/* True if word is one of Slurm's node base states (upper case). */
bool sa_node_base_is_known(const char *word);
/* True if word is one of Slurm's job base states (upper case). */
bool sa_job_base_is_known(const char *word);
/*
 * The final job base states, NULL-terminated: COMPLETED CANCELLED FAILED TIMEOUT
 * NODE_FAIL PREEMPTED BOOT_FAIL DEADLINE OUT_OF_MEMORY REVOKED (a federated sibling
 * that another cluster ran), and REQUEUED (the end of a requeued run as sacct records
 * it). The one list both binaries use (ingest's vanish rule, the report's open runs).
 */
extern const char *const sa_job_final_states[];
/* True if base is one of sa_job_final_states (false for NULL). */
bool sa_job_state_is_final(const char *base);

/* ---- GPUs by type and TRES ------------------------------------------------ */

/*
 * GPU counts by type. type is "" for untyped GPUs ("gpu:4", "gres/gpu=4" with no
 * typed entry); MIG profiles are types ("3g.40gb", "1g.10gb").
 */
typedef struct {
    char *type;
    int64_t count;
} sa_gpu_t;

typedef struct {
    sa_gpu_t *v;
    size_t n, cap;
} sa_gpus_t;

void sa_gpus_init(sa_gpus_t *g);
void sa_gpus_clear(sa_gpus_t *g);
/* Adds count to type (creating it); keeps entries sorted by type. */
bool sa_gpus_add(sa_gpus_t *g, const char *type, int64_t count);
/* Sets type to count (creating it). */
bool sa_gpus_set(sa_gpus_t *g, const char *type, int64_t count);
int64_t sa_gpus_total(const sa_gpus_t *g);
int64_t sa_gpus_get(const sa_gpus_t *g, const char *type); /* 0 when absent */

/*
 * A TRES set (requested or allocated). Memory in MiB (Slurm's MB).
 * gpus: the GPUs by type. Slurm reports typed entries in ADDITION to the untyped
 * total ("gres/gpu=2,gres/gpu:a100=2"); gpu_total is the untyped total when given,
 * else the sum of typed entries - never both added. When the typed entries sum to
 * less than the total, the rest is recorded under type "".
 * other: every entry not modelled ("energy", "fs/disk", "license/x", "gres/shard"...)
 * as name -> value text, kept so nothing is lost.
 */
typedef struct {
    int64_t cpu;       /* SA_UNSET when absent */
    int64_t mem_mb;    /* SA_UNSET when absent */
    int64_t node;      /* SA_UNSET when absent */
    double billing;    /* < 0 when absent */
    int64_t gpu_total; /* 0 when no GPUs */
    sa_gpus_t gpus;
    json_t *other;     /* object name -> string; NULL when empty */
} sa_tres_t;

void sa_tres_init(sa_tres_t *t);
void sa_tres_clear(sa_tres_t *t);
bool sa_tres_is_empty(const sa_tres_t *t);

/* ---- usage: what Slurm measured of a step or a job ---------------------------- */

/*
 * sacct's usage fields of one step (or of an allocation line), typed. Absent (Slurm did
 * not gather it, or the column was not asked for): doubles < 0, integers SA_UNSET -
 * never 0. Sizes in bytes (K M G T P are powers of 1024; a bare number is bytes).
 *   cpu_s, user_cpu_s, system_cpu_s  TotalCPU, UserCPU, SystemCPU (seconds, ms kept)
 *   max_rss_bytes    MaxRSS, else mem of TRESUsageInMax (the largest RSS of one task)
 *   ave_rss_bytes    AveRSS, else mem of TRESUsageInAve
 *   mem_total_bytes  mem of TRESUsageInTot: the step's memory summed over its tasks
 *   gpu_util_pct     gres/gpuutil of TRESUsageInTot (else InAve): the step's GPU
 *                    utilisation summed over its tasks, as acct_gather_gpu reports it
 *   gpu_mem_bytes    gres/gpumem of TRESUsageInMax (the largest of one task)
 *   disk_read_bytes  fs/disk of TRESUsageInTot; disk_write_bytes: of TRESUsageOutTot
 *   energy_j         ConsumedEnergyRaw (else energy of TRESUsageOutTot); 0 is what Slurm
 *                    prints without an energy plugin, so 0 is absent
 * The entries of the TRESUsage* columns not read here (cpu, vmem, pages, ...) stay in the
 * record's extra as printed (sa_usage_extra_columns).
 */
typedef struct {
    double cpu_s, user_cpu_s, system_cpu_s;
    int64_t max_rss_bytes, ave_rss_bytes, mem_total_bytes;
    double gpu_util_pct;
    int64_t gpu_mem_bytes;
    int64_t disk_read_bytes, disk_write_bytes;
    int64_t energy_j;
} sa_stats_t;

void sa_stats_init(sa_stats_t *s);
bool sa_stats_is_empty(const sa_stats_t *s);

/*
 * The sacct text columns whose unmodelled entries a record keeps in its extra (under the
 * column's name): TRESUsageInTot, TRESUsageInAve, TRESUsageInMax, TRESUsageOutTot,
 * NULL-terminated. Like the usage members they grow while a job or step runs, so the
 * change test and the job document take them only once it ended.
 */
extern const char *const sa_usage_extra_columns[];
/* True if key names one of sa_usage_extra_columns (any case, as sacct headers are). */
bool sa_usage_extra_column(const char *key);

/* Where a run's GPU type comes from (runs[].gpu_type_source in the job documents;
 * sa_job_t.run_gpu_type_source). */
typedef enum {
    SA_RUN_GPU_TYPE_NONE = 0, /* not resolved (no GPUs, or not looked up) */
    SA_RUN_GPU_TYPE_TRES,     /* the run's TRES named it (gres/gpu:a100=2) */
    SA_RUN_GPU_TYPE_NODE,     /* its nodes' gres at the run's start, as Slurm printed them */
    SA_RUN_GPU_TYPE_CARRIED,  /* its nodes' GPUs carried from an earlier per-node observation */
    SA_RUN_GPU_TYPE_UNKNOWN,  /* untyped, and the nodes did not tell */
} sa_run_gpu_type_source_t;

/* "tres", "node", "carried", "unknown"; NULL for SA_RUN_GPU_TYPE_NONE. */
const char *sa_run_gpu_type_source_name(int source);
/* The source of a name of sa_run_gpu_type_source_name(), SA_RUN_GPU_TYPE_NONE for any other. */
int sa_run_gpu_type_source_parse(const char *name);

/* ---- jobs ------------------------------------------------------------------ */

typedef enum {
    SA_SRC_SQUEUE = 1,   /* squeue --json, scontrol show job --json, restd /jobs */
    SA_SRC_SACCT_JSON,   /* sacct --json, restd /slurmdb/jobs */
    SA_SRC_SACCT_TEXT,   /* sacct -P / -p */
} sa_source_t;

const char *sa_source_name(sa_source_t s); /* "squeue", "sacct-json", "sacct-text" */

/* One step of a job (sacct only). */
typedef struct {
    char *id;            /* "batch", "extern", "interactive", "0", "1", "0+1", "TDB" */
    char *name;
    sa_state_t state;
    int64_t start, end;  /* epoch or SA_UNSET */
    int64_t elapsed;     /* seconds or SA_UNSET */
    int exit_code;       /* -1 when unknown */
    int exit_signal;     /* -1 when unknown */
    char *nodes;         /* hostlist expression */
    sa_tres_t alloc;
    sa_stats_t stats;    /* what Slurm measured of the step */
    json_t *extra;
} sa_step_t;

typedef struct {
    sa_source_t source;
    char *cluster;          /* as Slurm printed it (may be NULL; the ingester sets --cluster) */
    int64_t job_id;         /* raw id (JobIDRaw) */
    char *job_id_display;   /* "123", "123_4", "123_[1-3%2]", "123+1" when known */
    int64_t array_job_id;   /* SA_UNSET when not an array job */
    int64_t array_task_id;  /* SA_UNSET for non-array jobs and pending meta-records */
    char *array_task_string;/* pending meta-record range, e.g. "1-10%3" */
    int64_t array_max_tasks;/* throttle, SA_UNSET when none */
    int64_t het_job_id;     /* SA_UNSET when not heterogeneous */
    int64_t het_job_offset; /* SA_UNSET when not heterogeneous */

    char *user, *group;
    int64_t user_id, group_id; /* SA_UNSET when unknown */
    char *account, *partition, *qos, *name, *reservation, *wckey;

    sa_state_t state;
    char *reason;           /* state_reason / Reason; "None" kept as is */
    char *state_description;

    int64_t submit, eligible, start, end; /* epoch, SA_UNSET */
    int64_t elapsed;                      /* seconds, SA_UNSET */
    int64_t time_limit;                   /* minutes, SA_UNSET, SA_INFINITE */

    char *nodes;                          /* hostlist expression; NULL when none */
    int64_t node_count;
    int64_t cpus;                         /* allocated when running/ended, else requested */
    sa_tres_t req;                        /* requested TRES */
    sa_tres_t alloc;                      /* allocated TRES */
    sa_gpus_t gres_gpus;                  /* GPUs from gres_detail / tres_per_* (by type), when TRES lack them */
    /* the type of the run's untyped GPUs from its nodes (set by slurm-ingest from the time
     * series, not by parsers): owned, NULL when not found; source: sa_run_gpu_type_source_t
     * (0: not looked up) */
    char *run_gpu_type;
    int run_gpu_type_source;

    int exit_code;          /* -1 when unknown */
    int exit_signal;        /* -1 when unknown; 0 = none */
    bool exit_reliable;     /* false for sacct JSON <= v0.0.39 (always SUCCESS/0 bug) */
    int derived_exit_code, derived_exit_signal;

    int64_t restart_cnt;    /* SA_UNSET when unknown */
    bool requeue_allowed;

    sa_stats_t stats;       /* the allocation line's usage fields (sacct: TotalCPU...) */
    sa_step_t *steps;       /* sacct only */
    size_t nsteps, steps_cap;

    json_t *extra;          /* every key / column the parser does not model */
} sa_job_t;

sa_job_t *sa_job_new(sa_source_t source);
void sa_job_destroy(sa_job_t *job);
/* Moves the contents of *job into a new heap record, leaving *job empty. */
sa_job_t *sa_job_steal(sa_job_t *job);
sa_step_t *sa_job_add_step(sa_job_t *job); /* zero-initialised step appended, NULL on OOM */
void sa_job_drop_last_step(sa_job_t *job);  /* frees and removes the last step, if any */

/* ---- nodes ----------------------------------------------------------------- */

typedef struct {
    char *name;
    sa_state_t state;
    char *reason;
    int64_t reason_time;    /* epoch, SA_UNSET */
    char *reason_user;
    int64_t cpus_total, cpus_alloc, cpus_idle, cpus_other; /* SA_UNSET when unknown */
    int64_t mem_total_mb, mem_alloc_mb, mem_free_mb;       /* SA_UNSET when unknown */
    sa_gpus_t gpus_total;   /* from gres (configured) */
    sa_gpus_t gpus_used;    /* from gres_used */
    sa_strv_t partitions;   /* sorted unique */
    char *gres, *gres_used; /* raw strings as Slurm printed them */
    /* where gpus_total comes from (sa_node_gpu_config_t); SA_NODE_GPUS_OBSERVED unless said */
    int gpu_config;
    int64_t gpu_config_at;  /* CARRIED: the time of what it was carried from (a per-node observation, a
                             * --node-config record, or the start of an interval carried before); else SA_UNSET */
    bool listed_twice;      /* the input listed it twice (sinfo: in one partition): one record, merged by
                             * sa_node_merge (ingest/sa_parse.h); said by slurm-ingest, never dropped */
    /* where cpus_alloc/idle/other (and cpus_total) come from (sa_node_cpu_config_t) */
    int cpu_config;
    json_t *extra;
} sa_node_t;

/*
 * Where a node record's configured GPUs (gpus_total) come from:
 * - OBSERVED: Slurm printed this node's gres (scontrol, sinfo -N, a one-node sinfo group);
 * - CARRIED: Slurm did not say them per node (a grouped `sinfo --json`), and they were
 *   carried from the node's last per-node observation (a node's configured GPUs change
 *   only when an admin reconfigures it); gpus_used is then unknown, except on IDLE and
 *   DOWN nodes (no job: none in use);
 * - UNKNOWN: Slurm did not say them per node and nothing earlier did: gpus_total is empty
 *   but the node may have GPUs (its sinfo group's gres names some).
 */
typedef enum {
    SA_NODE_GPUS_OBSERVED = 0,
    SA_NODE_GPUS_CARRIED = 1,
    SA_NODE_GPUS_UNKNOWN = 2,
} sa_node_gpu_config_t;

/* "observed", "carried", "unknown". */
const char *sa_node_gpu_config_name(int c);

/*
 * Where a node record's CPU counts come from:
 * - OBSERVED: Slurm printed this node's own (scontrol, sinfo -N, a one-node sinfo group, or
 *   a group whose CPUs are all in one state: all allocated, all idle or all other);
 * - SPLIT: the node is in a grouped `sinfo --json` record whose CPUs are in several states:
 *   cpus_alloc, cpus_idle and cpus_other (and cpus_total when the group's nodes differ) are
 *   the node's share of the group's sums, split evenly over its nodes: exact summed over the
 *   group (whose nodes share one state), not per node.
 * CPU counts Slurm did not say at all are SA_UNSET (OBSERVED).
 */
typedef enum {
    SA_NODE_CPUS_OBSERVED = 0,
    SA_NODE_CPUS_SPLIT = 1,
} sa_node_cpu_config_t;

sa_node_t *sa_node_new(void);
void sa_node_destroy(sa_node_t *node);
sa_node_t *sa_node_steal(sa_node_t *node);

/* ---- one parsed document: what came with the records ----------------------- */

typedef struct {
    char *slurm_release;    /* "22.05.8", from meta; NULL when absent */
    char *data_parser;      /* "v0.0.38", "v0.0.44" ... normalised; NULL when absent */
    char *cluster;          /* meta.slurm.cluster when present */
    sa_strv_t warnings;     /* Slurm's warnings[] descriptions */
    sa_strv_t errors;       /* Slurm's errors[] descriptions */
    int64_t last_update;    /* epoch or SA_UNSET */
} sa_meta_t;

void sa_meta_init(sa_meta_t *m);
void sa_meta_clear(sa_meta_t *m);

/* ---- JSON form of the records (slurm-ingest --dump, tests) ------------------ */

/* New references; NULL on OOM. Times are ISO-8601 UTC strings. */
json_t *sa_job_to_json(const sa_job_t *job);
json_t *sa_node_to_json(const sa_node_t *node);
json_t *sa_tres_to_json(const sa_tres_t *t);
json_t *sa_gpus_to_json(const sa_gpus_t *g);
/* The members of s that are present; NULL when none is. */
json_t *sa_stats_to_json(const sa_stats_t *s);

/* Formats epoch t as "2026-10-05T12:00:00Z" into buf (>= 21 bytes). */
const char *sa_time_format(int64_t t, char *buf, size_t bufsz);

#endif
