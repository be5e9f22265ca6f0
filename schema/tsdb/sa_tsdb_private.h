/*
 * sa_tsdb_private.h - what the files of the time series share (internal to schema/;
 * the public API is sa_tsdb.h). The storage design is described at the top of
 * sa_tsdb.c.
 *
 *   sa_tsdb.c          the handle, errors, cached statements, dictionaries (text <-> id),
 *                      attribute sets, per-snapshot totals, decoding an observation
 *   sa_tsdb_migrate.c  opening: checking a file is ours, creating and migrating the schema
 *   sa_tsdb_write.c    writing snapshots (in or out of order) and sdiag statistics
 *   sa_tsdb_read.c     the read API of slurm-report (state hours, coverage, nodes, ...)
 *   sa_tsdb_verify.c   the whole-database check (sa_tsdb_verify)
 *
 * Shared functions are prefixed tsdb_; they follow the conventions of the public API
 * (bool, error last) and set errors that name the database (tsdb_err).
 */
#ifndef SA_TSDB_PRIVATE_H
#define SA_TSDB_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "sa_map.h"
#include "sa_tsdb.h"

/* ---- small containers (sa_tsdb.c) ---------------------------------------------------- */

#define FNV_INIT SA_FNV1A_INIT /* hashes are sa_fnv1a_more's (sa_map.h) */

/* Mixes a 64-bit key for the open-addressing tables. */
uint64_t tsdb_mix64(uint64_t x);

/* A map from a 64-bit key to an integer and a pointer: its entries, found by an sa_map. */
typedef struct {
    uint64_t key;
    int64_t ival;
    void *ptr;
} u64ent_t;

typedef struct {
    u64ent_t *v; /* in the order they were added */
    size_t n, cap;
    sa_map_t map; /* key -> index in v */
} u64map_t;

u64ent_t *tsdb_u64map_get(const u64map_t *m, uint64_t key);
/* Returns the entry of key, adding it (zeroed) when absent; NULL on OOM. */
u64ent_t *tsdb_u64map_put(u64map_t *m, uint64_t key);
/* Empties the map; free_ptr (may be NULL) is called on every pointer. */
void tsdb_u64map_clear(u64map_t *m, void (*free_ptr)(void *));

/* ---- the handle ------------------------------------------------------------------------ */

/* Dictionary kinds: tables mapping a text to an id. */
enum { K_CLUSTER, K_STATE, K_REASON, K_PARTITION, K_PARTSET, K_GPU_TYPE, K_RPC_NAME, K_COUNT };

/* An attribute set in memory (a row of attr with its attr_gpu rows). */
typedef struct {
    int64_t type_id, total, used;
} agpu_t;

typedef struct {
    int64_t state_id, reason_id, partset_id; /* reason_id 0: none */
    int64_t cpus_total, cpus_alloc, cpus_idle, cpus_other, mem_total_mb, mem_alloc_mb; /* SA_UNSET: NULL */
    int64_t gpu_config; /* attr.gpu_config: 0 (NULL) observed, SA_NODE_GPUS_CARRIED, SA_NODE_GPUS_UNKNOWN */
    int64_t cpu_config; /* attr.cpu_config: 0 (NULL) observed, SA_NODE_CPUS_SPLIT */
    size_t ngpus;
    agpu_t *gpus;       /* sorted by type_id */
    /* derived on load: the partition ids of partset_id (borrowed from the partset cache) */
    size_t nparts;
    const int64_t *parts;
} attr_t;

typedef struct {
    size_t n;
    int64_t ids[];
} idlist_t;

/* Prepared statements, cached in the handle (index into the SQL texts of sa_tsdb.c). */
enum {
    S_CLUSTER_GET, S_CLUSTER_INS,
    S_STATE_GET, S_STATE_INS, S_REASON_GET, S_REASON_INS, S_PART_GET, S_PART_INS,
    S_PARTSET_GET, S_PARTSET_INS, S_PARTSET_MEM_INS, S_PARTSET_MEMBERS, S_GPUTYPE_GET, S_GPUTYPE_INS,
    S_NAME_STATE, S_STATE_PARTS, S_NAME_REASON, S_NAME_PART, S_NAME_PARTSET, S_NAME_GPUTYPE,
    S_ATTR_BY_HASH, S_ATTR_GET, S_ATTR_GPUS, S_ATTR_INS, S_ATTR_GPU_INS,
    S_NODES, S_NODE_INS, S_NODE_SET_CUR,
    S_SNAP_GET, S_SNAP_PREV, S_SNAP_NEXT, S_SNAP_LATEST, S_SNAP_PUT,
    S_GAP_DEL, S_GAP_INS, S_GAP_LAST_END, S_GAPS_ALL, S_GAPS_RANGE,
    S_IV_AT, S_IV_PUT, S_IV_DEL, S_IV_WINDOW, S_IV_ALL,
    S_TKEY_GET, S_TKEY_INS, S_TOT_DEL, S_TOT_INS, S_GTOT_DEL, S_GTOT_INS, S_TOT_ALL, S_GTOT_ALL,
    S_SCHED_PUT, S_SCHED_RANGE, S_RPCNAME_GET, S_RPCNAME_INS, S_NAME_RPCNAME, S_RPC_DEL, S_RPC_LATER, S_RPC_INS, S_RPC_AT,
    S_CLUSTERS, S_SNAP_FIRST, S_SNAPS_RANGE,
    S_NODE_GET, S_CFG_IV_BEFORE, S_CFG_BEFORE, S_CFG_IV_AFTER, S_CFG_AFTER, S_CFG_GPUS, S_CFG_DEL, S_CFG_INS,
    S_COUNT
};

struct sa_tsdb {
    sqlite3 *conn;
    char *path;
    bool readonly;
    int busy_ms;
    char ctx[200];           /* what a write is doing, for error messages ("snapshot of c at T") */
    sqlite3_stmt *stmts[S_COUNT];
    /* caches of committed rows (dropped on rollback) */
    u64map_t ids[K_COUNT];   /* fnv(text) -> id (ptr: owned copy of the text, to compare) */
    u64map_t names[K_COUNT]; /* id -> ptr: owned text */
    u64map_t attrs;          /* attr id -> attr_t * */
    u64map_t attr_hash;      /* attr hash -> attr id (the last one seen) */
    u64map_t partsets;       /* partset id -> idlist_t * */
    u64map_t tkeys;          /* hash of (state, partition, gpu type) -> total_key id (ptr: the triple) */
};

/* ---- errors ---------------------------------------------------------------------------- */

/* Sets *error to "PATH: <what the handle is doing>: <fmt>". */
void tsdb_err(const sa_tsdb_t *db, sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Sets *error from an SQLite result code: "PATH: <what>: <words>". */
void tsdb_sql_err(sa_tsdb_t *db, int rc, const char *what, sa_error_t *error);
void tsdb_oom(sa_tsdb_t *db, sa_error_t *error);

/* ---- statements and transactions -------------------------------------------------------- */

/* The cached statement k, reset with its bindings cleared; NULL with *error set. */
sqlite3_stmt *tsdb_stmt(sa_tsdb_t *db, int k, sa_error_t *error);
/* Binds v, or NULL when v is SA_UNSET. */
void tsdb_bind_opt(sqlite3_stmt *st, int i, int64_t v);
/* Column i as int64, SA_UNSET when NULL. */
int64_t tsdb_col_opt(sqlite3_stmt *st, int i);
/* Steps a statement that returns no row (or whose rows are not wanted). */
bool tsdb_step_done(sa_tsdb_t *db, sqlite3_stmt *st, const char *what, sa_error_t *error);
/*
 * Steps a statement expected to return at most one integer (column 0): *found tells
 * whether a row with a non-NULL value came; *out gets it.
 */
bool tsdb_step_int(sa_tsdb_t *db, sqlite3_stmt *st, int64_t *out, bool *found, const char *what, sa_error_t *error);
/* Runs SQL text with no parameters. */
bool tsdb_exec(sa_tsdb_t *db, const char *sql, const char *what, sa_error_t *error);

/* Drops every cached id (after a rollback, or at close). */
void tsdb_cache_reset(sa_tsdb_t *db);
/* Ends a write transaction that failed: ROLLBACK (unless SQLite already did) and drop the caches. */
void tsdb_rollback(sa_tsdb_t *db);
/* Starts a read transaction (a consistent view while a writer commits) and finds the cluster (*cid 0: unknown). */
bool tsdb_begin_read(sa_tsdb_t *db, const char *cluster, int64_t *cid, sa_error_t *error);
/* Ends a read transaction. */
void tsdb_end_read(sa_tsdb_t *db);

/* ---- dictionaries and attribute sets ----------------------------------------------------- */

/*
 * The id of text in dictionary k: from the cache, the table, or (create) a new row.
 * *id is 0 when absent and !create. For K_STATE, st gives base and flags of a new row.
 */
bool tsdb_dict_id(sa_tsdb_t *db, int k, const char *text, bool create, const sa_state_t *st, int64_t *id,
                  bool *created, sa_error_t *error);
/* The text of id in dictionary k (borrowed from the cache); NULL with *error set. */
const char *tsdb_dict_name(sa_tsdb_t *db, int k, int64_t id, sa_error_t *error);
/* The id of cluster (0 when unknown and !create). */
bool tsdb_cluster_id(sa_tsdb_t *db, const char *cluster, bool create, int64_t *id, sa_error_t *error);

/* Loads attribute set id (cached; borrowed). NULL with *error set. */
const attr_t *tsdb_attr_get(sa_tsdb_t *db, int64_t id, sa_error_t *error);
/* Frees an attr_t and its GPUs (a u64map_clear callback). */
void tsdb_attr_free(void *p);

/* v, or 0 when v is SA_UNSET. */
int64_t tsdb_known(int64_t v);

/* ---- per-snapshot totals ------------------------------------------------------------------- */

/* One total row: key (state, partition, gpu type; gpu 0 for CPU totals) and figures. */
typedef struct {
    int64_t state_id, part_id, gpu_id;
    int64_t nodes, v[4]; /* CPU: total alloc idle other; GPU: total used 0 0 */
} tot_t;

typedef struct {
    tot_t *v;
    size_t n, cap;
} totv_t;

int tsdb_tot_key_cmp(const tot_t *a, const tot_t *b);
/* True when the figures (not the key) are equal. */
bool tsdb_tot_same(const tot_t *a, const tot_t *b);
/* Appends a zeroed row; NULL on OOM. */
tot_t *tsdb_totv_push(totv_t *t);
void tsdb_totv_free(totv_t *t);
/*
 * Totals of the nodes whose attribute sets are vals[0..n) (0 = absent): CPU totals
 * into *cpu and GPU totals into *gpu (both emptied first), sorted by key.
 */
bool tsdb_compute_totals(sa_tsdb_t *db, const int64_t *vals, size_t n, totv_t *cpu, totv_t *gpu,
                         sa_error_t *error);

/* ---- nodes, gaps and observations ------------------------------------------------------------ */

/* A node of the cluster during a write or a read. */
typedef struct {
    int64_t id;
    int64_t cur;            /* node.cur_attr_id (0 = absent at the latest snapshot) */
    const char *name;       /* borrowed: from the input or the name buffer */
    const sa_node_t *in;    /* writing: the input record, NULL when absent from this snapshot */
} wnode_t;

/*
 * Loads the cluster's nodes (sorted by name) into *out (room for extra more), their
 * names copied into *names (n of them; free with tsdb_free_names).
 */
bool tsdb_load_nodes(sa_tsdb_t *db, int64_t cid, wnode_t **out, size_t *n, size_t extra, char ***names,
                     sa_error_t *error);
/* Frees n names and the array. */
void tsdb_free_names(char **names, size_t n);

/* The snapshot times of cluster cid within [from, to), ascending (*ats: caller frees; NULL when none). */
bool tsdb_load_snapshots(sa_tsdb_t *db, int64_t cid, int64_t from, int64_t to, int64_t **ats, size_t *n,
                         sa_error_t *error);

/* A [start, end) span. */
typedef struct {
    int64_t start, end;
} span_t;

/* Reads gaps of cluster: all (range false) or those overlapping [from, to); sorted by start. */
bool tsdb_load_gaps(sa_tsdb_t *db, int64_t cid, bool range, int64_t from, int64_t to, span_t **out, size_t *n,
                    sa_error_t *error);

/*
 * The attribute sets of nodes ids[0..n) at snapshot s of the cluster, into vals
 * (0 = absent), from the interval rows: the node's last row at or before s, unless a
 * gap lies between that row and s. row_at[i] (may be NULL) tells whether node i has a
 * row exactly at s; start[i] (may be NULL) gets that last row's start.
 */
bool tsdb_decode_at(sa_tsdb_t *db, int64_t cluster_id, const int64_t *ids, size_t n, int64_t s, int64_t *vals,
                    bool *row_at, int64_t *start, sa_error_t *error);

#endif
