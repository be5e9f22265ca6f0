/*
 * sa_rollup.h - usage rollups: what every job document contributes to each UTC day of
 * its cluster, kept beside the archive so that a report reads its window's days by _id
 * instead of the window's job documents (sreport's usage tables; XDMoD's aggregates).
 *
 * Collection `rollups`. A cluster's documents of a day are split in parts by job id
 * (part = job id / SA_ROLLUP_PART_BLOCK mod SA_ROLLUP_PARTS, sa_rollup_part_of; the
 * superseded documents of a job go where the job goes), so that a document holds at most
 * the jobs of its part whatever the cluster runs in a day, a writer reads and rewrites
 * only the parts its batch of consecutive job ids touches (one or two), and a small
 * cluster's day is one or two documents. Per cluster, UTC day and part two documents: the
 * rows, _id "<cluster>:<YYYY-MM-DD>:r<part>", and the members, "<cluster>:<YYYY-MM-DD>:m<part>".
 *   rows     the sums, one per (account, user, partition, qos, gpu_type): allocated
 *            gpu_s (GPUs of the row's type x seconds), cpu_s, mem_mb_s, billing_milli_s;
 *            runs started that day; runs ended that day by final state; and the
 *            efficiency sums of runs that ended that day (runs, gpu_runs, mem_runs,
 *            gpu_s, idle_gpu_s under SA_ROLLUP_IDLE_PCT, no_data_gpu_s, util_gpu_s,
 *            util_mpct_s, cpu_used_ms, cpu_alloc_s, mem_used_kib, mem_req_kib, prom_s), packed
 *            like the members (r: zigzag varints per row; kt, st: the keys and states
 *            tables, NUL-terminated strings): the server then decodes a day as a few
 *            values (FerretDB spends microseconds per value; a day of 349 rows as BSON
 *            documents cost it 150 ms to return). CPU-only runs have gpu_type "".
 *   members  per job document (_id of jobs or jobs_superseded, with its version _v)
 *            what it adds to that day: the run's interval clipped to the day, its rates,
 *            and the end and efficiency figures of a run that ended that day. Packed
 *            (ids: the _ids joined by NUL; m: per member its version, record count and
 *            tombstone time, then SA_RR_NF zigzag varints per record, times as seconds
 *            into the day, about 30 bytes a record; keys and states: the tables the
 *            records index), so the server stores a day as a few values whatever its job
 *            count. rows = the sum of the members; a report reads rows for whole days
 *            and members for a day a boundary of its window cuts, so any window is exact
 *            to the second. A document holds at most 16 MB (MongoDB's limit): about
 *            500,000 job runs of one day and part, 32 million a day.
 * and per cluster and part, _id "<cluster>:open:<part>": the members of runs still open
 * (no end yet): their start and rates, counted by a report up to the cluster's last
 * observation. A poll rewrites a part only when one of its runs starts or ends.
 *
 * Three lists of job documents, with the same members, versions and tombstones, so that
 * `current`, `health` and `waits` read their answer by _id too:
 *   "<cluster>:live:<k>"  the unfinished jobs of `jobs` (k: the job's part, of SA_ROLLUP_LIVE_SHARDS =
 *            SA_ROLLUP_PARTS: a queue of millions stays under 16 MB a document,
 *            and a batch of consecutive ids touches one or two shards): one record each, its state, GPUs (asked for while pending),
 *            CPUs, memory asked for, submit time (START) and vanished_at (ENDED_AT, -1
 *            when listed);
 *   "<cluster>:<YYYY-MM-DD>:e<part>"  the final documents (jobs and jobs_superseded) whose end
 *            is that day: state, GPUs, CPUs, start and end;
 *   "<cluster>:<YYYY-MM-DD>:s<part>"  the runs that started that day (jobs and jobs_superseded;
 *            `waits` reads them): per run its key (gpu_type: the run's first type, "" for a
 *            CPU-only run), start, submit and eligible (SA_RS_*; times as seconds into the
 *            day, SA_UNSET when not known), GPUs (all types), nodes, CPUs. Every run of a
 *            requeued job counts (each waited in the queue), with its own incarnation's
 *            submit and eligible (runs[].submit, runs[].eligible: Slurm resets both when it
 *            requeues a job, as sacct -D shows): sa_rollup_queue_times.
 * A contribution names its documents by a "day" value (sa_rollup_kind): a day's start,
 * SA_UNSET (open), SA_ROLLUP_LIVE + k (live shard k), a day's start + SA_ROLLUP_ENDED,
 * a day's start + SA_ROLLUP_STARTED; and the job's part (the live shards have none: 0).
 *
 * Each member is replaced whole from the job document (never incremented), and only
 * by a document version at least as new as the one it came from, so writing the same
 * job twice, in any order, from two writers or after a crash, gives the same rollups as
 * one clean run; a rebuild from the documents gives the same rollups byte for byte.
 */
#ifndef SA_ROLLUP_H
#define SA_ROLLUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "sa_error.h"
#include "sa_jobview.h"
#include "sa_runsrc.h"

#define SA_ROLLUP_COLL "rollups"
/* The rollups' version, in the clusters document (rollup_version): older ones are rebuilt.
 * 3: the started lists; the efficiency sums take Prometheus's figures (runs[].prom) and count prom_s.
 * 4: a day's documents and the open runs' split in parts by job id. */
#define SA_ROLLUP_VERSION 4
/* The encoding of the packed members ("enc"): zigzag varints. */
#define SA_ROLLUP_ENC "varint2"
/* The idle threshold of the efficiency sums kept in rollups (percent; efficiency's default). */
#define SA_ROLLUP_IDLE_PCT 5.0
#define SA_DAY 86400
/* A run counts at most this many days (an end years after the start is a broken record). */
#define SA_ROLLUP_MAX_DAYS 3660
/* How long a removed member's tombstone stays (longer than any writer stages before it flushes). */
#define SA_ROLLUP_TOMBSTONE_S 3600
/* The last day a rollup _id can name (9999-12-31). */
#define SA_ROLLUP_LAST_DAY 253402214400LL
/* The parts of a day's documents: blocks of SA_ROLLUP_PART_BLOCK consecutive job ids, mod SA_ROLLUP_PARTS. */
#define SA_ROLLUP_PARTS 64
#define SA_ROLLUP_PART_BLOCK 4096
/* The live shards' "day" values: SA_ROLLUP_LIVE + k, k < SA_ROLLUP_LIVE_SHARDS. */
#define SA_ROLLUP_LIVE (INT64_MIN + 1)
#define SA_ROLLUP_LIVE_SHARDS SA_ROLLUP_PARTS
/* A day's start + SA_ROLLUP_ENDED: the jobs that ended that day. */
#define SA_ROLLUP_ENDED 1
/* A day's start + SA_ROLLUP_STARTED: the runs that started that day. */
#define SA_ROLLUP_STARTED 2

/* What a "day" value names. */
typedef enum { SA_ROLLUP_K_DAY, SA_ROLLUP_K_OPEN, SA_ROLLUP_K_LIVE, SA_ROLLUP_K_ENDED, SA_ROLLUP_K_STARTED } sa_rollup_kind_t;
sa_rollup_kind_t sa_rollup_kind(int64_t day);
/*
 * The live shard of job document id of cluster ("<cluster>:<job_id>"): SA_ROLLUP_LIVE + k;
 * SA_UNSET for any other _id (jobs_superseded's "<cluster>:<job_id>:<submit>").
 */
int64_t sa_rollup_live_of(const char *cluster, const char *id);
/* The part of job document id ("<cluster>:<job_id>[:<submit>]"): 0 .. SA_ROLLUP_PARTS - 1. */
int sa_rollup_part_of(const char *id);
/*
 * Orders job document _ids ("<cluster>:<job_id>[:<submit>]"; a cluster name has no ':')
 * by the job id they name, then as strings: a qsort comparator of char *.
 */
int sa_rollup_id_job_cmp(const void *a, const void *b);

/*
 * What a job list records of job j (and what `current --from-jobs` counts, the same rule):
 * its CPUs, allocated, or asked for while pending or when the allocation is not said; its
 * memory, the job's total asked for (what Slurm allocates), MiB. 0 when not said.
 */
int64_t sa_rollup_list_cpus(const sa_jobview_t *j);
int64_t sa_rollup_list_mem_mb(const sa_jobview_t *j);

/* The fields of a member record (int64 each). */
enum {
    SA_RR_KEY,        /* index into the document's keys */
    SA_RR_START,      /* the run's interval clipped to the day (open: the run's start) */
    SA_RR_END,        /* ... its end (open: 0) */
    SA_RR_GPUS,       /* GPUs of the key's type */
    SA_RR_CPUS,       /* allocated CPUs (on the run's first type only) */
    SA_RR_MEM,        /* allocated memory, MiB (first type only) */
    SA_RR_BILL,       /* billing weight x 1000 (first type only) */
    SA_RR_STARTED,    /* 1: the run started this day (first type only) */
    SA_RR_ENDED_AT,   /* the run's own end when it ended this day, else -1 */
    SA_RR_STATE,      /* index into states of the run's final state (first type only), else -1 */
    SA_RR_E_RUNS,     /* efficiency figures of a run that ended this day (the type's share) */
    SA_RR_E_GPU_RUNS,
    SA_RR_E_MEM_RUNS,
    SA_RR_E_GPU_S,
    SA_RR_E_IDLE_S,
    SA_RR_E_NODATA_S,
    SA_RR_E_UTIL_S,
    SA_RR_E_UTIL_MPCT_S,
    SA_RR_E_CPU_USED_MS,
    SA_RR_E_CPU_ALLOC_S,
    SA_RR_E_MEM_USED_KIB,
    SA_RR_E_MEM_REQ_KIB,
    SA_RR_E_PROM_S,   /* of SA_RR_E_UTIL_S, the GPU-seconds whose utilisation is Prometheus's (runs[].prom) */
    SA_RR_NF
};

/*
 * The started lists' records use these fields (the others 0, SA_RR_STATE -1): the run's
 * start is SA_RR_START, its GPUs SA_RR_GPUS, its CPUs SA_RR_CPUS.
 */
enum {
    SA_RS_SUBMIT = SA_RR_END,        /* the submit time of the run's incarnation, SA_UNSET when not known */
    SA_RS_ELIGIBLE = SA_RR_ENDED_AT, /* when it became eligible, SA_UNSET when not known */
    SA_RS_NODES = SA_RR_MEM,         /* its nodes, 0 when not known */
};

/*
 * The submit and eligible times of run r of job view j (SA_UNSET when not known): the
 * run's own (runs[].submit, runs[].eligible); a run written before they were kept takes
 * the document's submit when it started at the document's start, and the document's
 * eligible when its submit is the document's (the incarnation the document describes).
 */
void sa_rollup_queue_times(const sa_jobview_t *j, const sa_jobview_run_t *r, int64_t *submit, int64_t *eligible);

/* A row key: account, user, partition, qos, gpu_type ("" when absent). */
#define SA_RK_N 5
typedef struct {
    char *s[SA_RK_N];
} sa_rkey_t;

/* One job document's records in a rollup document. */
typedef struct {
    char *id;       /* the job document's _id */
    int64_t v;      /* its _v */
    int64_t *rec;   /* nrec x SA_RR_NF */
    size_t nrec;    /* 0: a tombstone (the job left this document at version v) */
    int64_t gone_at; /* a tombstone's time (epoch s), else 0 */
} sa_rmember_t;

/* The sums of one row (rows[] of a rollup document). */
typedef struct {
    int64_t gpu_s, cpu_s, mem_mb_s, bill_milli_s, started;
    int64_t e[SA_RR_NF - SA_RR_E_RUNS]; /* the efficiency sums, in the order of SA_RR_E_* */
} sa_rsum_t;

/* A row as read: its key (index into keys), sums, and runs ended by state (rended[first .. first + n)). */
typedef struct {
    int64_t key;
    sa_rsum_t s;
    size_t ended_first, nended;
} sa_rrow_t;

/* Runs ended in a state (index into states). */
typedef struct {
    int64_t state, n;
} sa_rended_t;

/* One rollup document in memory. */
typedef struct {
    char *id;          /* its _id (sa_rollup_id, sa_rollup_rows_id) */
    char *cluster;
    int64_t day;       /* the day's start (epoch s); SA_UNSET for the open document */
    int part;          /* its part (0 for a live shard) */
    int64_t v;         /* _v as read; 0: not stored yet */
    int64_t m_v;       /* a rows document: the version of the members it was computed from */
    sa_rkey_t *keys;
    size_t nkeys, keycap;
    char **states;
    size_t nstates, statecap;
    sa_rmember_t *m;   /* sorted by id */
    size_t nm, mcap;
    sa_rrow_t *rows;   /* rows as stored (read only: written ones are computed from the members) */
    size_t nrows, rowcap;
    sa_rended_t *rended;
    size_t nrended, rendedcap;
    bool has_rows, has_members; /* what the query returned */
    bool foreign;      /* written by another version (another record size or encoding): read as empty, so
                          that a rebuild replaces it whole; a report refuses it */
    bool changed;
} sa_rolldoc_t;

/*
 * The _id of a cluster's members document of a day and part, "<cluster>:<YYYY-MM-DD>:m<part>"
 * (SA_UNSET: "<cluster>:open:<part>"; live shard k: "<cluster>:live:<k>", whatever the part;
 * ended: "<cluster>:<YYYY-MM-DD>:e<part>"; started: "<cluster>:<YYYY-MM-DD>:s<part>").
 * NULL on out of memory, or a part out of range.
 */
char *sa_rollup_id(const char *cluster, int64_t day, int part);
/* The _id of a cluster's rows document of a day and part, "<cluster>:<YYYY-MM-DD>:r<part>" (any other kind: NULL). */
char *sa_rollup_rows_id(const char *cluster, int64_t day, int part);
/*
 * Appends to ids the _ids of every part of cluster's documents of day (rows: its rows
 * documents, else its members; SA_UNSET: the open runs'). False only on out of memory.
 */
bool sa_rollup_part_ids(sa_strv_t *ids, const char *cluster, int64_t day, bool rows, sa_error_t *error);
/* "<cluster>:<YYYY-MM-DD>" of the day holding day (ingest_days' documents are named so). */
char *sa_rollup_day_id(const char *cluster, int64_t day);
/* The start of the UTC day holding t. */
int64_t sa_rollup_day(int64_t t);

void sa_rolldoc_init(sa_rolldoc_t *d);
void sa_rolldoc_clear(sa_rolldoc_t *d);
/* An empty rollup document of cluster, day (SA_UNSET: open) and part. */
bool sa_rolldoc_new(sa_rolldoc_t *d, const char *cluster, int64_t day, int part, sa_error_t *error);
/*
 * Reads a stored rollup document: its rows and members, when the query returned them
 * (a report reads a whole day's rows without its members).
 */
bool sa_rolldoc_read(sa_rolldoc_t *d, const bson_t *b, sa_error_t *error);
/* The members document to store: members packed, _v = v. */
bool sa_rolldoc_to_bson(const sa_rolldoc_t *d, int64_t v, bson_t *out, sa_error_t *error);
/* The rows document of a day: the sums of d's members, m_v = the members' version they come from. */
bool sa_rolldoc_rows_bson(const sa_rolldoc_t *d, int64_t m_v, bson_t *out, sa_error_t *error);
/* True when the rows read into rows are the sums of the members of members (a day's two documents agree). */
bool sa_rolldoc_rows_match(const sa_rolldoc_t *members, const sa_rolldoc_t *rows);
/* The sums of each key (sums[nkeys]) and per key and state the runs ended (ended[nkeys x nstates]). */
bool sa_rolldoc_sums(const sa_rolldoc_t *d, sa_rsum_t **sums, int64_t **ended, sa_error_t *error);

/*
 * The position of id among n elements sorted by id (each stride bytes, beginning with its
 * char *id), or where it would go; *found says whether it is there.
 */
size_t sa_rollup_find(const void *base, size_t n, size_t stride, const char *id, bool *found);
_Static_assert(offsetof(sa_rmember_t, id) == 0, "sa_rollup_find finds a member's id at its start");
_Static_assert(offsetof(sa_rolldoc_t, id) == 0, "sa_rollup_find finds a rollup document's id at its start");

/* The member of a job document, or NULL. */
const sa_rmember_t *sa_rolldoc_member(const sa_rolldoc_t *d, const char *id);

/*
 * What one job document contributes: records per rollup document, built by
 * sa_rcontrib_of. Records index the contribution's own key and state tables.
 */
typedef struct {
    int64_t day;       /* SA_UNSET: the open document */
    int64_t *rec;      /* nrec x SA_RR_NF */
    size_t nrec, cap;
} sa_rcday_t;

typedef struct {
    double idle_pct;   /* a run under this GPU utilisation is idle: SA_ROLLUP_IDLE_PCT (reports may set another) */
    sa_runsrc_t rs;
    sa_rkey_t *keys;   /* borrowed strings (the job view's) */
    size_t nkeys, keycap;
    const char **states;
    size_t nstates, statecap;
    sa_rcday_t *days;  /* the days (and the open document) it adds to, in no order */
    size_t ndays, daycap, dayinit;
} sa_rcontrib_t;

void sa_rcontrib_init(sa_rcontrib_t *c);
void sa_rcontrib_clear(sa_rcontrib_t *c);
/* The contribution of job view j (read with its history). False only on out of memory. */
bool sa_rcontrib_of(sa_rcontrib_t *c, const sa_jobview_t *j, sa_error_t *error);

/* Appends to find options the projection of every field sa_rcontrib_of reads (and _v). */
void sa_rollup_projection(bson_t *opts);

/*
 * Sets the member id (version v) of d to the records of c for d's day (none: the member
 * goes, leaving a tombstone of version v for SA_ROLLUP_TOMBSTONE_S), unless d holds that
 * member from a newer version. d->changed says whether anything changed.
 */
bool sa_rolldoc_put(sa_rolldoc_t *d, const char *id, int64_t v, const sa_rcontrib_t *c, sa_error_t *error);

/* Puts every member of src (tombstones remove) into dst, as sa_rolldoc_put does. */
bool sa_rolldoc_merge(sa_rolldoc_t *dst, const sa_rolldoc_t *src, sa_error_t *error);

/* True when the two documents hold the same members and records (tables may differ in order). */
bool sa_rolldoc_equal(const sa_rolldoc_t *a, const sa_rolldoc_t *b);

#endif
