/*
 * sa_tsdb.c - the SQLite time series of node, CPU and GPU states (see sa_tsdb.h and
 * schema/timeseries.sql, which this file embeds).
 *
 * Design: intervals as change points over deduplicated attribute sets.
 *
 * - What a node looked like at a snapshot (state base + flags, reason, CPU counts,
 *   memory, GPUs per type total/used, partitions) is an attribute set, stored once in
 *   `attr` (+ `attr_gpu` rows) and shared by every node and interval that looked the
 *   same: nodes of one hardware type in the same state and load share rows. Attribute
 *   sets are found again by a 64-bit hash of their contents (indexed column) and
 *   compared field by field, so a hash collision costs a second row, never wrong data.
 * - A node's observations are stored as intervals, one `node_interval` row
 *   (node, start, attr) where an interval starts and none where the node is unchanged:
 *   a row exists at snapshot s exactly when the node's attribute set at s differs
 *   from the one at the previous snapshot (absence counting as a value; a gap before s
 *   counting as "absent before"). The interval's end is implied: the node's next row,
 *   the first gap after its start, or the latest snapshot (open). So an unchanged node
 *   costs nothing per snapshot - extending an open interval writes no row - and a
 *   change costs one row of ~18 bytes. With ~1% of 2,000 nodes changing every 5
 *   minutes that is ~1.8 M rows a year; storing the end in every row, or rewriting the
 *   open intervals every snapshot, would cost ~30% more space and thousands of row
 *   updates per snapshot. The view `node_interval_span` spells the ends out.
 * - Per-snapshot totals (by state and partition, and by GPU type) are stored the same
 *   way: a row per key only when its figures changed since the previous snapshot; the
 *   key (state, partition, GPU type) is one small id into `total_key`.
 * - Measured (tools/bench-tsdb: 2,000 nodes, 5-minute snapshots, one year, job-level
 *   churn): ~92 MB, 2.3 ms per snapshot; a third is intervals, half is totals.
 * - `node.cur_attr_id` caches each node's attribute set at the latest snapshot, so the
 *   in-order writer (the common case) finds every open interval in one small scan and
 *   writes only what changed.
 *
 * Why this makes replay easy: the rows are a pure function of the sequence of
 * per-snapshot observations (a row at s depends only on the observations at s and at
 * the snapshot before it, and on whether a gap separates them). The observation of
 * node n at any snapshot s can be decoded from the rows (the node's last row at or
 * before s, unless a gap lies between). So a snapshot t arriving out of order (or
 * again) changes only the rows at t and at the snapshot after t: the writer decodes
 * the observations at the snapshots before and after t, then rewrites the rows, totals
 * and gaps at t and at the next snapshot from the same rules as the in-order case.
 * The database is then identical (up to id numbering) to the in-order one.
 *
 * Everything a write does is one BEGIN IMMEDIATE ... COMMIT; on error ROLLBACK and the
 * in-memory caches (ids, attribute sets) are dropped, since they may name rows that
 * were rolled back. Cached ids of committed rows stay valid: rows are never deleted
 * from the dictionary tables (cluster, node, state, reason, partition, partset,
 * gpu_type, attr, total_key).
 */
#include "sa_tsdb.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "sa_timeseries_sql.h" /* generated from schema/timeseries.sql: sa_timeseries_sql[] */

/* ---- small containers ------------------------------------------------------------ */

/* FNV-1a over bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_INIT 14695981039346656037ULL

/* Mixes a 64-bit key for the open-addressing tables. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* An open-addressing map from a 64-bit key to an integer and a pointer. */
typedef struct {
    uint64_t key;
    int64_t ival;
    void *ptr;
    bool used;
} u64ent_t;

typedef struct {
    u64ent_t *v;
    size_t n, cap; /* cap is 0 or a power of two */
} u64map_t;

static u64ent_t *u64map_get(const u64map_t *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->v[i].used)
            return NULL;
        if (m->v[i].key == key)
            return &m->v[i];
    }
}

/* Returns the entry of key, adding it (zeroed) when absent; NULL on OOM. */
static u64ent_t *u64map_put(u64map_t *m, uint64_t key)
{
    u64ent_t *e;

    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        u64ent_t *nv = calloc(ncap, sizeof *nv);
        if (!nv)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].used)
                continue;
            size_t j = mix64(m->v[i].key) & (ncap - 1);
            while (nv[j].used)
                j = (j + 1) & (ncap - 1);
            nv[j] = m->v[i];
        }
        free(m->v);
        m->v = nv;
        m->cap = ncap;
    }
    size_t i = mix64(key) & (m->cap - 1);
    while (m->v[i].used && m->v[i].key != key)
        i = (i + 1) & (m->cap - 1);
    e = &m->v[i];
    if (!e->used) {
        e->used = true;
        e->key = key;
        e->ival = 0;
        e->ptr = NULL;
        m->n++;
    }
    return e;
}

/* Empties the map; free_ptr (may be NULL) is called on every pointer. */
static void u64map_clear(u64map_t *m, void (*free_ptr)(void *))
{
    if (free_ptr) {
        for (size_t i = 0; i < m->cap; i++) {
            if (m->v[i].used && m->v[i].ptr)
                free_ptr(m->v[i].ptr);
        }
    }
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* ---- the handle -------------------------------------------------------------------- */

/* Dictionary kinds: tables mapping a text to an id. */
enum { K_CLUSTER, K_STATE, K_REASON, K_PARTITION, K_PARTSET, K_GPU_TYPE, K_COUNT };

/* An attribute set in memory (a row of attr with its attr_gpu rows). */
typedef struct {
    int64_t type_id, total, used;
} agpu_t;

typedef struct {
    int64_t state_id, reason_id, partset_id; /* reason_id 0: none */
    int64_t cpus_total, cpus_alloc, cpus_idle, cpus_other, mem_total_mb, mem_alloc_mb; /* SA_UNSET: NULL */
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

/* Prepared statements, cached in the handle (index into stmt_sql). */
enum {
    S_CLUSTER_GET, S_CLUSTER_INS,
    S_STATE_GET, S_STATE_INS, S_REASON_GET, S_REASON_INS, S_PART_GET, S_PART_INS,
    S_PARTSET_GET, S_PARTSET_INS, S_PARTSET_MEM_INS, S_PARTSET_MEMBERS, S_GPUTYPE_GET, S_GPUTYPE_INS,
    S_NAME_STATE, S_STATE_PARTS, S_NAME_REASON, S_NAME_PART, S_NAME_PARTSET, S_NAME_GPUTYPE,
    S_ATTR_BY_HASH, S_ATTR_GET, S_ATTR_GPUS, S_ATTR_INS, S_ATTR_GPU_INS,
    S_NODES, S_NODE_INS, S_NODE_SET_CUR,
    S_SNAP_GET, S_SNAP_PREV, S_SNAP_NEXT, S_SNAP_LATEST, S_SNAP_PUT, S_SNAPS_ALL,
    S_GAP_DEL, S_GAP_INS, S_GAP_LAST_END, S_GAPS_ALL, S_GAPS_RANGE,
    S_IV_AT, S_IV_PUT, S_IV_DEL, S_IV_WINDOW, S_IV_ALL,
    S_TKEY_GET, S_TKEY_INS, S_TOT_DEL, S_TOT_INS, S_GTOT_DEL, S_GTOT_INS, S_TOT_ALL, S_GTOT_ALL,
    S_SCHED_PUT, S_SCHED_RANGE,
    S_COUNT
};

#define SDIAG_COLS_(name, kind) ", " #name
#define SDIAG_COLS SA_SDIAG_FIELDS(SDIAG_COLS_)
#define SDIAG_QMARK_(name, kind) ",?"
#define SDIAG_QMARKS SA_SDIAG_FIELDS(SDIAG_QMARK_)

static const char *const stmt_sql[S_COUNT] = {
    [S_CLUSTER_GET] = "SELECT id FROM cluster WHERE name = ?1",
    [S_CLUSTER_INS] = "INSERT INTO cluster (name) VALUES (?1)",
    [S_STATE_GET] = "SELECT id FROM state WHERE text = ?1",
    [S_STATE_INS] = "INSERT INTO state (text, base, flags) VALUES (?1, ?2, ?3)",
    [S_REASON_GET] = "SELECT id FROM reason WHERE text = ?1",
    [S_REASON_INS] = "INSERT INTO reason (text) VALUES (?1)",
    [S_PART_GET] = "SELECT id FROM partition WHERE name = ?1",
    [S_PART_INS] = "INSERT INTO partition (name) VALUES (?1)",
    [S_PARTSET_GET] = "SELECT id FROM partset WHERE names = ?1",
    [S_PARTSET_INS] = "INSERT INTO partset (names) VALUES (?1)",
    [S_PARTSET_MEM_INS] = "INSERT INTO partset_member (partset_id, partition_id) VALUES (?1, ?2)",
    [S_PARTSET_MEMBERS] = "SELECT partition_id FROM partset_member WHERE partset_id = ?1 ORDER BY partition_id",
    [S_GPUTYPE_GET] = "SELECT id FROM gpu_type WHERE name = ?1",
    [S_GPUTYPE_INS] = "INSERT INTO gpu_type (name) VALUES (?1)",
    [S_NAME_STATE] = "SELECT text FROM state WHERE id = ?1",
    [S_STATE_PARTS] = "SELECT base, flags FROM state WHERE id = ?1",
    [S_NAME_REASON] = "SELECT text FROM reason WHERE id = ?1",
    [S_NAME_PART] = "SELECT name FROM partition WHERE id = ?1",
    [S_NAME_PARTSET] = "SELECT names FROM partset WHERE id = ?1",
    [S_NAME_GPUTYPE] = "SELECT name FROM gpu_type WHERE id = ?1",
    [S_ATTR_BY_HASH] = "SELECT id FROM attr WHERE hash = ?1",
    [S_ATTR_GET] = "SELECT state_id, reason_id, partset_id, cpus_total, cpus_alloc, cpus_idle, cpus_other,"
                   " mem_total_mb, mem_alloc_mb FROM attr WHERE id = ?1",
    [S_ATTR_GPUS] = "SELECT gpu_type_id, total, used FROM attr_gpu WHERE attr_id = ?1 ORDER BY gpu_type_id",
    [S_ATTR_INS] = "INSERT INTO attr (hash, state_id, reason_id, partset_id, cpus_total, cpus_alloc, cpus_idle,"
                   " cpus_other, mem_total_mb, mem_alloc_mb) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_ATTR_GPU_INS] = "INSERT INTO attr_gpu (attr_id, gpu_type_id, total, used) VALUES (?1, ?2, ?3, ?4)",
    [S_NODES] = "SELECT id, name, cur_attr_id FROM node WHERE cluster_id = ?1 ORDER BY name",
    [S_NODE_INS] = "INSERT INTO node (cluster_id, name) VALUES (?1, ?2)",
    [S_NODE_SET_CUR] = "UPDATE node SET cur_attr_id = ?2 WHERE id = ?1",
    [S_SNAP_GET] = "SELECT nodes FROM snapshot WHERE cluster_id = ?1 AND at = ?2",
    [S_SNAP_PREV] = "SELECT max(at) FROM snapshot WHERE cluster_id = ?1 AND at < ?2",
    [S_SNAP_NEXT] = "SELECT min(at) FROM snapshot WHERE cluster_id = ?1 AND at > ?2",
    [S_SNAP_LATEST] = "SELECT max(at) FROM snapshot WHERE cluster_id = ?1",
    [S_SNAP_PUT] = "INSERT OR REPLACE INTO snapshot (cluster_id, at, nodes) VALUES (?1, ?2, ?3)",
    [S_SNAPS_ALL] = "SELECT at FROM snapshot WHERE cluster_id = ?1 ORDER BY at",
    [S_GAP_DEL] = "DELETE FROM gap WHERE cluster_id = ?1 AND start = ?2",
    [S_GAP_INS] = "INSERT OR REPLACE INTO gap (cluster_id, start, end) VALUES (?1, ?2, ?3)",
    [S_GAP_LAST_END] = "SELECT max(end) FROM gap WHERE cluster_id = ?1 AND end <= ?2",
    [S_GAPS_ALL] = "SELECT start, end FROM gap WHERE cluster_id = ?1 ORDER BY start",
    [S_GAPS_RANGE] = "SELECT start, end FROM gap WHERE cluster_id = ?1 AND start < ?3 AND end > ?2",
    [S_IV_AT] = "SELECT start, attr_id FROM node_interval WHERE node_id = ?1 AND start <= ?2"
                " ORDER BY start DESC LIMIT 1",
    [S_IV_PUT] = "INSERT OR REPLACE INTO node_interval (node_id, start, attr_id) VALUES (?1, ?2, ?3)",
    [S_IV_DEL] = "DELETE FROM node_interval WHERE node_id = ?1 AND start = ?2",
    [S_IV_WINDOW] = "SELECT start, attr_id FROM node_interval WHERE node_id = ?1 AND start >= coalesce("
                    "(SELECT max(start) FROM node_interval WHERE node_id = ?1 AND start <= ?2),"
                    " -9223372036854775807 - 1) AND start < ?3 ORDER BY start",
    [S_IV_ALL] = "SELECT i.node_id, i.start, i.attr_id FROM node_interval i JOIN node n ON n.id = i.node_id"
                 " WHERE n.cluster_id = ?1 ORDER BY i.start, i.node_id",
    [S_TOT_DEL] = "DELETE FROM total WHERE cluster_id = ?1 AND at = ?2",
    [S_TKEY_GET] = "SELECT id FROM total_key WHERE state_id = ?1 AND partition_id = ?2 AND gpu_type_id = ?3",
    [S_TKEY_INS] = "INSERT INTO total_key (state_id, partition_id, gpu_type_id) VALUES (?1, ?2, ?3)",
    [S_TOT_INS] = "INSERT INTO total (cluster_id, at, key_id, nodes, cpus_total, cpus_alloc, cpus_idle, cpus_other)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_GTOT_DEL] = "DELETE FROM gpu_total WHERE cluster_id = ?1 AND at = ?2",
    [S_GTOT_INS] = "INSERT INTO gpu_total (cluster_id, at, key_id, nodes, total, used) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [S_TOT_ALL] = "SELECT t.at, k.state_id, k.partition_id, 0, t.nodes, t.cpus_total, t.cpus_alloc, t.cpus_idle,"
                  " t.cpus_other FROM total t JOIN total_key k ON k.id = t.key_id WHERE t.cluster_id = ?1"
                  " ORDER BY t.at, k.state_id, k.partition_id",
    [S_GTOT_ALL] = "SELECT t.at, k.state_id, k.partition_id, k.gpu_type_id, t.nodes, t.total, t.used, 0, 0"
                   " FROM gpu_total t JOIN total_key k ON k.id = t.key_id WHERE t.cluster_id = ?1"
                   " ORDER BY t.at, k.state_id, k.partition_id, k.gpu_type_id",
    [S_SCHED_PUT] = "INSERT OR REPLACE INTO sched (cluster_id, at" SDIAG_COLS ") VALUES (?, ?" SDIAG_QMARKS ")",
    [S_SCHED_RANGE] = "SELECT at" SDIAG_COLS " FROM sched WHERE cluster_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY at",
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
static void tsdb_err(const sa_tsdb_t *db, sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void tsdb_err(const sa_tsdb_t *db, sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sa_error_set(error, domain, code, "%s: %s%s%s", db->path, db->ctx, db->ctx[0] ? ": " : "", msg);
}

/* Words for an SQLite result code, with the domain it belongs to. */
static const char *rc_words(sa_tsdb_t *db, int rc, sa_err_domain_t *domain, char *buf, size_t bufsz)
{
    *domain = SA_ERR_SQLITE;
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        *domain = SA_ERR_LOCKED;
        snprintf(buf, bufsz, "database is locked by another process (gave up after %d ms)", db->busy_ms);
        return buf;
    case SQLITE_FULL:
        return "disk full (or the database size limit was reached)";
    case SQLITE_NOTADB:
        return "not an SQLite database";
    case SQLITE_CORRUPT:
        return "database file is corrupt (malformed)";
    case SQLITE_READONLY:
        return "database is read-only";
    case SQLITE_NOMEM:
        return "out of memory";
    case SQLITE_IOERR:
        snprintf(buf, bufsz, "I/O error (%s)", sqlite3_errstr(rc));
        return buf;
    default:
        snprintf(buf, bufsz, "%s", db->conn ? sqlite3_errmsg(db->conn) : sqlite3_errstr(rc));
        return buf;
    }
}

/* Sets *error from an SQLite result code: "PATH: <what>: <words>". */
static void sql_err(sa_tsdb_t *db, int rc, const char *what, sa_error_t *error)
{
    char buf[400];
    sa_err_domain_t domain;
    const char *words = rc_words(db, rc, &domain, buf, sizeof buf);

    tsdb_err(db, error, domain, rc, "%s: %s", what, words);
}

static void oom(sa_tsdb_t *db, sa_error_t *error)
{
    tsdb_err(db, error, SA_ERR_SQLITE, SQLITE_NOMEM, "out of memory");
}

/* ---- statements ------------------------------------------------------------------------ */

/* The cached statement k, reset with its bindings cleared; NULL with *error set. */
static sqlite3_stmt *stmt(sa_tsdb_t *db, int k, sa_error_t *error)
{
    sqlite3_stmt *st = db->stmts[k];

    if (!st) {
        int rc = sqlite3_prepare_v3(db->conn, stmt_sql[k], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
        if (rc != SQLITE_OK) {
            sql_err(db, rc, "preparing a statement", error);
            return NULL;
        }
        db->stmts[k] = st;
        return st;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

/* Binds v, or NULL when v is SA_UNSET. */
static void bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == SA_UNSET)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

/* Column i as int64, SA_UNSET when NULL. */
static int64_t col_opt(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? SA_UNSET : sqlite3_column_int64(st, i);
}

/* Steps a statement that returns no row (or whose rows are not wanted). */
static bool step_done(sa_tsdb_t *db, sqlite3_stmt *st, const char *what, sa_error_t *error)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/*
 * Steps a statement expected to return at most one integer (column 0): *found tells
 * whether a row with a non-NULL value came; *out gets it.
 */
static bool step_int(sa_tsdb_t *db, sqlite3_stmt *st, int64_t *out, bool *found, const char *what,
                     sa_error_t *error)
{
    int rc = sqlite3_step(st);

    *found = false;
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
            *out = sqlite3_column_int64(st, 0);
            *found = true;
        }
    } else if (rc != SQLITE_DONE) {
        sqlite3_reset(st);
        sql_err(db, rc, what, error);
        return false;
    }
    sqlite3_reset(st);
    return true;
}

/* Runs SQL text with no parameters. */
static bool exec(sa_tsdb_t *db, const char *sql, const char *what, sa_error_t *error)
{
    int rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/* ---- caches ----------------------------------------------------------------------------- */

static void attr_free(void *p)
{
    attr_t *a = p;
    if (a) {
        free(a->gpus);
        free(a);
    }
}

/* Drops every cached id (after a rollback, or at close). */
static void cache_reset(sa_tsdb_t *db)
{
    for (int k = 0; k < K_COUNT; k++) {
        u64map_clear(&db->ids[k], free);
        u64map_clear(&db->names[k], free);
    }
    u64map_clear(&db->attrs, attr_free);
    u64map_clear(&db->attr_hash, NULL);
    u64map_clear(&db->partsets, free);
    u64map_clear(&db->tkeys, free);
}

/* Ends a write transaction that failed: ROLLBACK (unless SQLite already did) and drop the caches. */
static void rollback(sa_tsdb_t *db)
{
    for (int k = 0; k < S_COUNT; k++) {
        if (db->stmts[k])
            sqlite3_reset(db->stmts[k]);
    }
    if (!sqlite3_get_autocommit(db->conn))
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
    cache_reset(db);
}

/* Ends a read transaction. */
static void end_read(sa_tsdb_t *db)
{
    for (int k = 0; k < S_COUNT; k++) {
        if (db->stmts[k])
            sqlite3_reset(db->stmts[k]);
    }
    if (!sqlite3_get_autocommit(db->conn))
        sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
}

/* ---- dictionaries (text <-> id) -------------------------------------------------------- */

static const struct {
    int get, ins, name;
    const char *what;
} dict[K_COUNT] = {
    [K_CLUSTER] = {S_CLUSTER_GET, S_CLUSTER_INS, -1, "cluster"},
    [K_STATE] = {S_STATE_GET, S_STATE_INS, S_NAME_STATE, "state"},
    [K_REASON] = {S_REASON_GET, S_REASON_INS, S_NAME_REASON, "reason"},
    [K_PARTITION] = {S_PART_GET, S_PART_INS, S_NAME_PART, "partition"},
    [K_PARTSET] = {S_PARTSET_GET, S_PARTSET_INS, S_NAME_PARTSET, "partition set"},
    [K_GPU_TYPE] = {S_GPUTYPE_GET, S_GPUTYPE_INS, S_NAME_GPUTYPE, "GPU type"},
};

/*
 * The id of text in dictionary k: from the cache, the table, or (create) a new row.
 * *id is 0 when absent and !create. For K_STATE, st gives base and flags of a new row.
 */
static bool dict_id(sa_tsdb_t *db, int k, const char *text, bool create, const sa_state_t *st, int64_t *id,
                    bool *created, sa_error_t *error)
{
    uint64_t h = fnv(FNV_INIT + (uint64_t)k, text, strlen(text));
    u64ent_t *e = u64map_get(&db->ids[k], h);
    sqlite3_stmt *s;
    char what[64];
    bool found;
    char *flags = NULL;
    bool ok = false;

    if (created)
        *created = false;
    if (e && strcmp(e->ptr, text) == 0) {
        *id = e->ival;
        return true;
    }
    snprintf(what, sizeof what, "looking up a %s", dict[k].what);
    if (!(s = stmt(db, dict[k].get, error)))
        return false;
    sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
    if (!step_int(db, s, id, &found, what, error))
        return false;
    if (!found) {
        *id = 0;
        if (!create)
            return true;
        snprintf(what, sizeof what, "adding a %s", dict[k].what);
        if (!(s = stmt(db, dict[k].ins, error)))
            return false;
        sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
        if (k == K_STATE) {
            size_t len = 1;
            for (size_t i = 0; i < st->flags.n; i++)
                len += strlen(st->flags.v[i]) + 1;
            if (!(flags = malloc(len))) {
                oom(db, error);
                goto done;
            }
            flags[0] = '\0';
            for (size_t i = 0; i < st->flags.n; i++) {
                if (i)
                    strcat(flags, "+");
                strcat(flags, st->flags.v[i]);
            }
            if (st->base)
                sqlite3_bind_text(s, 2, st->base, -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 3, flags, -1, SQLITE_STATIC);
        }
        if (!step_done(db, s, what, error))
            goto done;
        *id = sqlite3_last_insert_rowid(db->conn);
        if (created)
            *created = true;
    }
    if (!e && u64map_get(&db->ids[k], h) == NULL) {
        char *copy = strdup(text);
        if (!copy || !(e = u64map_put(&db->ids[k], h))) {
            free(copy);
            oom(db, error);
            goto done;
        }
        e->ptr = copy;
        e->ival = *id;
    }
    ok = true;
done:
    free(flags);
    return ok;
}

/* The text of id in dictionary k (borrowed from the cache); NULL with *error set. */
static const char *dict_name(sa_tsdb_t *db, int k, int64_t id, sa_error_t *error)
{
    u64ent_t *e = u64map_get(&db->names[k], (uint64_t)id);
    sqlite3_stmt *s;
    char *copy;
    int rc;

    if (e)
        return e->ptr;
    if (!(s = stmt(db, dict[k].name, error)))
        return NULL;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "%s id %" PRId64 " is missing (database damaged?)",
                     dict[k].what, id);
        else
            sql_err(db, rc, "reading names", error);
        return NULL;
    }
    copy = strdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    if (!copy || !(e = u64map_put(&db->names[k], (uint64_t)id))) {
        free(copy);
        oom(db, error);
        return NULL;
    }
    e->ptr = copy;
    return copy;
}

/* The partition ids of a partition set (cached). */
static const idlist_t *partset_parts(sa_tsdb_t *db, int64_t partset_id, sa_error_t *error)
{
    u64ent_t *e = u64map_get(&db->partsets, (uint64_t)partset_id);
    sqlite3_stmt *s;
    idlist_t *l = NULL, *nl;
    size_t cap = 0;
    int rc;

    if (e)
        return e->ptr;
    if (!(s = stmt(db, S_PARTSET_MEMBERS, error)))
        return NULL;
    sqlite3_bind_int64(s, 1, partset_id);
    if (!(l = malloc(sizeof *l + 4 * sizeof(int64_t))))
        goto nomem;
    l->n = 0;
    cap = 4;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (l->n == cap) {
            cap *= 2;
            if (!(nl = realloc(l, sizeof *l + cap * sizeof(int64_t))))
                goto nomem;
            l = nl;
        }
        l->ids[l->n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(l);
        sql_err(db, rc, "reading partition sets", error);
        return NULL;
    }
    if (!(e = u64map_put(&db->partsets, (uint64_t)partset_id)))
        goto nomem;
    e->ptr = l;
    return l;
nomem:
    sqlite3_reset(s);
    free(l);
    oom(db, error);
    return NULL;
}

/* The id of a node's partition set, creating it (and its members) when new. */
static bool partset_id(sa_tsdb_t *db, const sa_strv_t *parts, int64_t *id, sa_error_t *error)
{
    size_t len = 1;
    char *names;
    bool created, ok = false;
    sqlite3_stmt *s;

    for (size_t i = 0; i < parts->n; i++)
        len += strlen(parts->v[i]) + 1;
    if (!(names = malloc(len))) {
        oom(db, error);
        return false;
    }
    names[0] = '\0';
    for (size_t i = 0; i < parts->n; i++) {
        if (i)
            strcat(names, ",");
        strcat(names, parts->v[i]);
    }
    if (!dict_id(db, K_PARTSET, names, true, NULL, id, &created, error))
        goto done;
    if (created) {
        size_t np = parts->n ? parts->n : 1;
        for (size_t i = 0; i < np; i++) {
            int64_t pid;
            if (!dict_id(db, K_PARTITION, parts->n ? parts->v[i] : "", true, NULL, &pid, NULL, error))
                goto done;
            if (!(s = stmt(db, S_PARTSET_MEM_INS, error)))
                goto done;
            sqlite3_bind_int64(s, 1, *id);
            sqlite3_bind_int64(s, 2, pid);
            if (!step_done(db, s, "adding a partition set", error))
                goto done;
        }
    }
    ok = true;
done:
    free(names);
    return ok;
}

/* ---- attribute sets ---------------------------------------------------------------------- */

static int agpu_cmp(const void *a, const void *b)
{
    const agpu_t *x = a, *y = b;
    return (x->type_id > y->type_id) - (x->type_id < y->type_id);
}

static uint64_t attr_hash(const attr_t *a)
{
    int64_t f[9] = {a->state_id,   a->reason_id,  a->partset_id,   a->cpus_total,  a->cpus_alloc,
                    a->cpus_idle,  a->cpus_other, a->mem_total_mb, a->mem_alloc_mb};
    uint64_t h = fnv(FNV_INIT, f, sizeof f);
    h = fnv(h, &a->ngpus, sizeof a->ngpus);
    for (size_t i = 0; i < a->ngpus; i++)
        h = fnv(h, &a->gpus[i], sizeof a->gpus[i]);
    /* 32 bits: 4 bytes in the row and in its index entry instead of 8; a collision
     * only costs a comparison (attr_id() compares every candidate field by field) */
    return (h ^ (h >> 32)) & 0xffffffffu;
}

static bool attr_equal(const attr_t *a, const attr_t *b)
{
    if (a->state_id != b->state_id || a->reason_id != b->reason_id || a->partset_id != b->partset_id ||
        a->cpus_total != b->cpus_total || a->cpus_alloc != b->cpus_alloc || a->cpus_idle != b->cpus_idle ||
        a->cpus_other != b->cpus_other || a->mem_total_mb != b->mem_total_mb ||
        a->mem_alloc_mb != b->mem_alloc_mb || a->ngpus != b->ngpus)
        return false;
    for (size_t i = 0; i < a->ngpus; i++) {
        if (a->gpus[i].type_id != b->gpus[i].type_id || a->gpus[i].total != b->gpus[i].total ||
            a->gpus[i].used != b->gpus[i].used)
            return false;
    }
    return true;
}

/* Loads attribute set id (cached; borrowed). NULL with *error set. */
static const attr_t *attr_get(sa_tsdb_t *db, int64_t id, sa_error_t *error)
{
    u64ent_t *e = u64map_get(&db->attrs, (uint64_t)id);
    sqlite3_stmt *s;
    attr_t *a;
    const idlist_t *parts;
    size_t cap = 0;
    int rc;

    if (e)
        return e->ptr;
    if (!(a = calloc(1, sizeof *a))) {
        oom(db, error);
        return NULL;
    }
    if (!(s = stmt(db, S_ATTR_GET, error)))
        goto fail;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "attribute set %" PRId64 " is missing (database damaged?)",
                     id);
        else
            sql_err(db, rc, "reading attribute sets", error);
        goto fail;
    }
    a->state_id = sqlite3_column_int64(s, 0);
    a->reason_id = sqlite3_column_int64(s, 1); /* NULL reads as 0 */
    a->partset_id = sqlite3_column_int64(s, 2);
    a->cpus_total = col_opt(s, 3);
    a->cpus_alloc = col_opt(s, 4);
    a->cpus_idle = col_opt(s, 5);
    a->cpus_other = col_opt(s, 6);
    a->mem_total_mb = col_opt(s, 7);
    a->mem_alloc_mb = col_opt(s, 8);
    sqlite3_reset(s);

    if (!(s = stmt(db, S_ATTR_GPUS, error)))
        goto fail;
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (a->ngpus == cap) {
            agpu_t *ng = realloc(a->gpus, (cap = cap ? cap * 2 : 2) * sizeof *ng);
            if (!ng) {
                sqlite3_reset(s);
                oom(db, error);
                goto fail;
            }
            a->gpus = ng;
        }
        a->gpus[a->ngpus].type_id = sqlite3_column_int64(s, 0);
        a->gpus[a->ngpus].total = sqlite3_column_int64(s, 1);
        a->gpus[a->ngpus].used = sqlite3_column_int64(s, 2);
        a->ngpus++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        sql_err(db, rc, "reading attribute sets", error);
        goto fail;
    }
    if (!(parts = partset_parts(db, a->partset_id, error)))
        goto fail;
    a->nparts = parts->n;
    a->parts = parts->ids;
    if (!(e = u64map_put(&db->attrs, (uint64_t)id))) {
        oom(db, error);
        goto fail;
    }
    e->ptr = a;
    return a;
fail:
    attr_free(a);
    return NULL;
}

/*
 * Builds the attribute set of a node in *a (a->gpus owned by the caller), creating
 * the dictionary rows it needs.
 */
static bool attr_from_node(sa_tsdb_t *db, const sa_node_t *node, attr_t *a, sa_error_t *error)
{
    char *text = NULL;
    size_t cap;
    bool ok = false;

    memset(a, 0, sizeof *a);
    if (!(text = sa_state_format(&node->state))) {
        oom(db, error);
        goto done;
    }
    if (!dict_id(db, K_STATE, text, true, &node->state, &a->state_id, NULL, error))
        goto done;
    if (node->reason && !dict_id(db, K_REASON, node->reason, true, NULL, &a->reason_id, NULL, error))
        goto done;
    if (!partset_id(db, &node->partitions, &a->partset_id, error))
        goto done;
    a->cpus_total = node->cpus_total;
    a->cpus_alloc = node->cpus_alloc;
    a->cpus_idle = node->cpus_idle;
    a->cpus_other = node->cpus_other;
    a->mem_total_mb = node->mem_total_mb;
    a->mem_alloc_mb = node->mem_alloc_mb;

    /* GPUs: every type configured or in use */
    cap = node->gpus_total.n + node->gpus_used.n;
    if (cap && !(a->gpus = calloc(cap, sizeof *a->gpus))) {
        oom(db, error);
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        const sa_gpus_t *g = pass == 0 ? &node->gpus_total : &node->gpus_used;
        for (size_t i = 0; i < g->n; i++) {
            const char *type = g->v[i].type ? g->v[i].type : "";
            int64_t total = sa_gpus_get(&node->gpus_total, type), used = sa_gpus_get(&node->gpus_used, type);
            int64_t tid;
            bool seen = false;
            if (total == 0 && used == 0)
                continue;
            if (!dict_id(db, K_GPU_TYPE, type, true, NULL, &tid, NULL, error))
                goto done;
            for (size_t j = 0; j < a->ngpus; j++)
                seen = seen || a->gpus[j].type_id == tid;
            if (seen)
                continue;
            a->gpus[a->ngpus].type_id = tid;
            a->gpus[a->ngpus].total = total;
            a->gpus[a->ngpus].used = used;
            a->ngpus++;
        }
    }
    if (a->ngpus > 1)
        qsort(a->gpus, a->ngpus, sizeof *a->gpus, agpu_cmp);
    ok = true;
done:
    free(text);
    return ok;
}

/* The id of attribute set *a: found again by hash, or added. */
static bool attr_id(sa_tsdb_t *db, const attr_t *a, int64_t *id, sa_error_t *error)
{
    uint64_t h = attr_hash(a);
    u64ent_t *e = u64map_get(&db->attr_hash, h);
    const attr_t *c;
    sqlite3_stmt *s;
    int rc;

    if (e) {
        if (!(c = attr_get(db, e->ival, error)))
            return false;
        if (attr_equal(c, a)) {
            *id = e->ival;
            return true;
        }
    }
    /* candidates with the same hash in the table */
    *id = 0;
    if (!(s = stmt(db, S_ATTR_BY_HASH, error)))
        return false;
    sqlite3_bind_int64(s, 1, (int64_t)h);
    for (;;) {
        int64_t cid;
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
            break;
        cid = sqlite3_column_int64(s, 0);
        /* attr_get() uses other statements; this one stays positioned */
        if (!(c = attr_get(db, cid, error))) {
            sqlite3_reset(s);
            return false;
        }
        if (attr_equal(c, a)) {
            *id = cid;
            break;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sql_err(db, rc, "looking up an attribute set", error);
        return false;
    }
    if (*id == 0) {
        if (!(s = stmt(db, S_ATTR_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, (int64_t)h);
        sqlite3_bind_int64(s, 2, a->state_id);
        if (a->reason_id)
            sqlite3_bind_int64(s, 3, a->reason_id);
        sqlite3_bind_int64(s, 4, a->partset_id);
        bind_opt(s, 5, a->cpus_total);
        bind_opt(s, 6, a->cpus_alloc);
        bind_opt(s, 7, a->cpus_idle);
        bind_opt(s, 8, a->cpus_other);
        bind_opt(s, 9, a->mem_total_mb);
        bind_opt(s, 10, a->mem_alloc_mb);
        if (!step_done(db, s, "adding an attribute set", error))
            return false;
        *id = sqlite3_last_insert_rowid(db->conn);
        for (size_t i = 0; i < a->ngpus; i++) {
            if (!(s = stmt(db, S_ATTR_GPU_INS, error)))
                return false;
            sqlite3_bind_int64(s, 1, *id);
            sqlite3_bind_int64(s, 2, a->gpus[i].type_id);
            sqlite3_bind_int64(s, 3, a->gpus[i].total);
            sqlite3_bind_int64(s, 4, a->gpus[i].used);
            if (!step_done(db, s, "adding an attribute set", error))
                return false;
        }
    }
    if (!(e = u64map_put(&db->attr_hash, h))) {
        oom(db, error);
        return false;
    }
    e->ival = *id;
    return true;
}

/* ---- totals ------------------------------------------------------------------------------ */

/* One total row: key (state, partition, gpu type; gpu 0 for CPU totals) and figures. */
typedef struct {
    int64_t state_id, part_id, gpu_id;
    int64_t nodes, v[4]; /* CPU: total alloc idle other; GPU: total used 0 0 */
} tot_t;

typedef struct {
    tot_t *v;
    size_t n, cap;
} totv_t;

static int tot_key_cmp(const tot_t *a, const tot_t *b)
{
    if (a->state_id != b->state_id)
        return a->state_id < b->state_id ? -1 : 1;
    if (a->part_id != b->part_id)
        return a->part_id < b->part_id ? -1 : 1;
    if (a->gpu_id != b->gpu_id)
        return a->gpu_id < b->gpu_id ? -1 : 1;
    return 0;
}

static int tot_qsort_cmp(const void *a, const void *b)
{
    return tot_key_cmp(a, b);
}

static bool tot_same(const tot_t *a, const tot_t *b)
{
    return a->nodes == b->nodes && memcmp(a->v, b->v, sizeof a->v) == 0;
}

static tot_t *totv_push(totv_t *t)
{
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 32;
        tot_t *nv = realloc(t->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        t->v = nv;
        t->cap = ncap;
    }
    memset(&t->v[t->n], 0, sizeof t->v[0]);
    return &t->v[t->n++];
}

static void totv_free(totv_t *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

/* Sorts by key and sums rows with equal keys. */
static void totv_merge(totv_t *t)
{
    size_t o = 0;

    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, tot_qsort_cmp);
    for (size_t i = 0; i < t->n; i++) {
        if (o > 0 && tot_key_cmp(&t->v[o - 1], &t->v[i]) == 0) {
            t->v[o - 1].nodes += t->v[i].nodes;
            for (int j = 0; j < 4; j++)
                t->v[o - 1].v[j] += t->v[i].v[j];
        } else {
            t->v[o++] = t->v[i];
        }
    }
    t->n = o;
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t known(int64_t v)
{
    return v == SA_UNSET ? 0 : v;
}

/*
 * Totals of the nodes whose attribute sets are vals[0..n) (0 = absent): CPU totals
 * into *cpu and GPU totals into *gpu (both emptied first), sorted by key.
 */
static bool compute_totals(sa_tsdb_t *db, const int64_t *vals, size_t n, totv_t *cpu, totv_t *gpu,
                           sa_error_t *error)
{
    int64_t *ids = NULL;
    size_t m = 0;
    bool ok = false;

    cpu->n = gpu->n = 0;
    if (n && !(ids = malloc(n * sizeof *ids))) {
        oom(db, error);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (vals[i])
            ids[m++] = vals[i];
    }
    qsort(ids, m, sizeof *ids, i64_cmp);
    for (size_t i = 0; i < m;) {
        size_t j = i;
        const attr_t *a;
        int64_t cnt;
        while (j < m && ids[j] == ids[i])
            j++;
        cnt = (int64_t)(j - i);
        if (!(a = attr_get(db, ids[i], error)))
            goto done;
        for (size_t p = 0; p < a->nparts; p++) {
            tot_t *t = totv_push(cpu);
            if (!t)
                goto nomem;
            t->state_id = a->state_id;
            t->part_id = a->parts[p];
            t->nodes = cnt;
            t->v[0] = cnt * known(a->cpus_total);
            t->v[1] = cnt * known(a->cpus_alloc);
            t->v[2] = cnt * known(a->cpus_idle);
            t->v[3] = cnt * known(a->cpus_other);
            for (size_t g = 0; g < a->ngpus; g++) {
                if (!(t = totv_push(gpu)))
                    goto nomem;
                t->state_id = a->state_id;
                t->part_id = a->parts[p];
                t->gpu_id = a->gpus[g].type_id;
                t->nodes = cnt;
                t->v[0] = cnt * a->gpus[g].total;
                t->v[1] = cnt * a->gpus[g].used;
            }
        }
        i = j;
    }
    totv_merge(cpu);
    totv_merge(gpu);
    ok = true;
    goto done;
nomem:
    oom(db, error);
done:
    free(ids);
    return ok;
}

/* The total_key id of a total row's key (cached), creating it when new. */
static bool total_key_id(sa_tsdb_t *db, const tot_t *t, int64_t *id, sa_error_t *error)
{
    int64_t k[3] = {t->state_id, t->part_id, t->gpu_id};
    uint64_t h = fnv(FNV_INIT, k, sizeof k);
    u64ent_t *e = u64map_get(&db->tkeys, h);
    sqlite3_stmt *s;
    int64_t *copy;
    bool found;

    if (e && memcmp(e->ptr, k, sizeof k) == 0) {
        *id = e->ival;
        return true;
    }
    if (!(s = stmt(db, S_TKEY_GET, error)))
        return false;
    for (int i = 0; i < 3; i++)
        sqlite3_bind_int64(s, i + 1, k[i]);
    if (!step_int(db, s, id, &found, "looking up a total key", error))
        return false;
    if (!found) {
        if (!(s = stmt(db, S_TKEY_INS, error)))
            return false;
        for (int i = 0; i < 3; i++)
            sqlite3_bind_int64(s, i + 1, k[i]);
        if (!step_done(db, s, "adding a total key", error))
            return false;
        *id = sqlite3_last_insert_rowid(db->conn);
    }
    if (!e) {
        if (!(copy = malloc(sizeof k)) || !(e = u64map_put(&db->tkeys, h))) {
            free(copy);
            oom(db, error);
            return false;
        }
        memcpy(copy, k, sizeof k);
        e->ptr = copy;
        e->ival = *id;
    }
    return true;
}

/*
 * Writes the total rows at `at` for figures `now` given the carried figures `before`
 * (those of the previous snapshot, or empty after a gap): a row for every key whose
 * figures differ, and a zero row for every key that disappeared. gpu selects the table.
 */
static bool write_total_rows(sa_tsdb_t *db, int64_t cluster_id, int64_t at, const totv_t *now,
                             const totv_t *before, bool gpu, sa_error_t *error)
{
    size_t i = 0, j = 0;

    while (i < now->n || j < before->n) {
        const tot_t *w = NULL;
        tot_t zero;
        int64_t key;
        int c = i >= now->n ? 1 : j >= before->n ? -1 : tot_key_cmp(&now->v[i], &before->v[j]);
        sqlite3_stmt *s;

        if (c < 0) {
            w = &now->v[i++];
        } else if (c > 0) {
            zero = before->v[j++];
            zero.nodes = 0;
            memset(zero.v, 0, sizeof zero.v);
            w = &zero;
        } else {
            if (!tot_same(&now->v[i], &before->v[j]))
                w = &now->v[i];
            i++;
            j++;
        }
        if (!w)
            continue;
        if (!total_key_id(db, w, &key, error) || !(s = stmt(db, gpu ? S_GTOT_INS : S_TOT_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, cluster_id);
        sqlite3_bind_int64(s, 2, at);
        sqlite3_bind_int64(s, 3, key);
        sqlite3_bind_int64(s, 4, w->nodes);
        for (int k = 0; k < (gpu ? 2 : 4); k++)
            sqlite3_bind_int64(s, 5 + k, w->v[k]);
        if (!step_done(db, s, "writing totals", error))
            return false;
    }
    return true;
}

/* Deletes the total rows (both tables) of cluster at `at`. */
static bool delete_total_rows(sa_tsdb_t *db, int64_t cluster_id, int64_t at, sa_error_t *error)
{
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *s = stmt(db, k ? S_GTOT_DEL : S_TOT_DEL, error);
        if (!s)
            return false;
        sqlite3_bind_int64(s, 1, cluster_id);
        sqlite3_bind_int64(s, 2, at);
        if (!step_done(db, s, "rewriting totals", error))
            return false;
    }
    return true;
}

/* ---- decoding observations ----------------------------------------------------------------- */

/*
 * The attribute sets of nodes ids[0..n) at snapshot s of the cluster, into vals
 * (0 = absent), from the interval rows: the node's last row at or before s, unless a
 * gap lies between that row and s. row_at[i] (may be NULL) tells whether node i has a
 * row exactly at s; start[i] (may be NULL) gets that last row's start.
 */
static bool decode_at(sa_tsdb_t *db, int64_t cluster_id, const int64_t *ids, size_t n, int64_t s, int64_t *vals,
                      bool *row_at, int64_t *start, sa_error_t *error)
{
    sqlite3_stmt *st;
    int64_t gap_end = INT64_MIN;
    bool found;

    if (!(st = stmt(db, S_GAP_LAST_END, error)))
        return false;
    sqlite3_bind_int64(st, 1, cluster_id);
    sqlite3_bind_int64(st, 2, s);
    if (!step_int(db, st, &gap_end, &found, "reading gaps", error))
        return false;
    if (!found)
        gap_end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int rc;
        vals[i] = 0;
        if (row_at)
            row_at[i] = false;
        if (start)
            start[i] = SA_UNSET;
        if (!(st = stmt(db, S_IV_AT, error)))
            return false;
        sqlite3_bind_int64(st, 1, ids[i]);
        sqlite3_bind_int64(st, 2, s);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            int64_t rs = sqlite3_column_int64(st, 0);
            int64_t a = sqlite3_column_int64(st, 1); /* NULL -> 0: absent */
            if (row_at)
                row_at[i] = rs == s;
            if (start)
                start[i] = rs;
            vals[i] = rs < gap_end ? 0 : a;
        } else if (rc != SQLITE_DONE) {
            sqlite3_reset(st);
            sql_err(db, rc, "reading intervals", error);
            return false;
        }
        sqlite3_reset(st);
    }
    return true;
}

/* ---- opening --------------------------------------------------------------------------------- */

void sa_sdiag_init(sa_sdiag_t *sd)
{
#define SDIAG_UNSET_(name, kind) sd->name = SA_UNSET;
    SA_SDIAG_FIELDS(SDIAG_UNSET_)
#undef SDIAG_UNSET_
    sd->extra = NULL;
}

void sa_sdiag_clear(sa_sdiag_t *sd)
{
    if (!sd)
        return;
    json_decref(sd->extra);
    sd->extra = NULL;
}

void sa_tsdb_opts_init(sa_tsdb_opts_t *opts)
{
    opts->max_gap_s = SA_TSDB_DEFAULT_MAX_GAP_S;
    opts->sdiag = NULL;
}

/* The tables schema version 1 has; all must exist in a database marked as ours. */
static const char *const our_tables[] = {
    "cluster", "snapshot", "gap", "node", "state", "reason", "partition", "partset", "partset_member",
    "gpu_type", "attr", "attr_gpu", "node_interval", "total_key", "total", "gpu_total", "sched", NULL,
};

/* Reads one integer from a query with no parameters (e.g. a PRAGMA). */
static bool query_int(sa_tsdb_t *db, const char *sql, int64_t *out, const char *what, sa_error_t *error)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &s, NULL);

    *out = 0;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_OK) {
        sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/* What the file holds, read without changing it. */
typedef struct {
    int64_t app_id, version, ntables;
    const char *missing; /* first of our_tables that is absent */
} probe_t;

static bool probe(sa_tsdb_t *db, probe_t *p, sa_error_t *error)
{
    char sql[160];

    memset(p, 0, sizeof *p);
    if (!query_int(db, "PRAGMA application_id", &p->app_id, "reading the database header", error) ||
        !query_int(db, "PRAGMA user_version", &p->version, "reading the database header", error) ||
        !query_int(db, "SELECT count(*) FROM sqlite_master", &p->ntables, "reading the schema", error))
        return false;
    for (int i = 0; our_tables[i]; i++) {
        int64_t n;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
                 our_tables[i]);
        if (!query_int(db, sql, &n, "reading the schema", error))
            return false;
        if (n == 0) {
            p->missing = our_tables[i];
            break;
        }
    }
    return true;
}

/*
 * Checks that the probed file is ours and usable. *fresh is set when it is an empty
 * database that needs the schema.
 */
static bool check_probe(sa_tsdb_t *db, const probe_t *p, bool *fresh, sa_error_t *error)
{
    *fresh = false;
    if (p->app_id == 0 && p->version == 0 && p->ntables == 0) {
        if (db->readonly) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "no time series here (empty database)");
            return false;
        }
        *fresh = true;
        return true;
    }
    if (p->app_id != SA_TSDB_APPLICATION_ID) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "not a slurm-archive time series (another application's SQLite database: application_id "
                 "0x%08" PRIx64 ", %" PRId64 " schema objects); nothing was changed",
                 (uint64_t)(uint32_t)p->app_id, p->ntables);
        return false;
    }
    if (p->version > SA_TSDB_SCHEMA_VERSION) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "schema version %" PRId64 " is newer than this program knows (%d); upgrade slurm-archive; "
                 "nothing was changed",
                 p->version, SA_TSDB_SCHEMA_VERSION);
        return false;
    }
    if (db->readonly && p->version < SA_TSDB_SCHEMA_VERSION && p->version >= 1) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "schema version %" PRId64 " is older than this program's (%d); open it read-write once to migrate",
                 p->version, SA_TSDB_SCHEMA_VERSION);
        return false;
    }
    if (p->version < 1) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "schema version %" PRId64 " is not valid; nothing was changed",
                 p->version);
        return false;
    }
    if (p->missing) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "table %s is missing (database damaged?); nothing was changed",
                 p->missing);
        return false;
    }
    return true;
}

/* Migrations from version v to v+1, in order; index v-1. None yet. */
static const char *const migrations[] = {NULL};

/* Creates the schema in an empty database, or migrates an older one, in one transaction. */
static bool init_schema(sa_tsdb_t *db, bool fresh, int64_t version, sa_error_t *error)
{
    char sql[96];
    probe_t p;

    if (!exec(db, "BEGIN IMMEDIATE", "starting the schema transaction", error))
        return false;
    /* another process may have created it meanwhile */
    if (!probe(db, &p, error))
        goto fail;
    if (fresh && p.app_id == SA_TSDB_APPLICATION_ID) {
        bool f;
        if (!check_probe(db, &p, &f, error))
            goto fail;
        fresh = false;
        version = p.version;
    }
    if (fresh) {
        if (!exec(db, sa_timeseries_sql, "creating the schema", error))
            goto fail;
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", SA_TSDB_APPLICATION_ID);
        if (!exec(db, sql, "creating the schema", error))
            goto fail;
        version = 1;
    }
    for (int64_t v = version; v < SA_TSDB_SCHEMA_VERSION; v++) {
        if (!migrations[v - 1] || !exec(db, migrations[v - 1], "migrating the schema", error))
            goto fail;
    }
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SA_TSDB_SCHEMA_VERSION);
    if (!exec(db, sql, "creating the schema", error) || !exec(db, "COMMIT", "creating the schema", error))
        goto fail;
    return true;
fail:
    rollback(db);
    return false;
}

sa_tsdb_t *sa_tsdb_open(const char *path, bool readonly, int busy_timeout_ms, sa_error_t *error)
{
    sa_tsdb_t *db = calloc(1, sizeof *db);
    probe_t p;
    bool fresh;
    int rc;

    if (!db || !(db->path = strdup(path ? path : ""))) {
        sa_error_set(error, SA_ERR_SQLITE, SQLITE_NOMEM, "%s: out of memory", path ? path : "");
        free(db);
        return NULL;
    }
    db->readonly = readonly;
    db->busy_ms = busy_timeout_ms < 0 ? 0 : busy_timeout_ms;
    if (!path || !*path) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "no database path given");
        goto fail;
    }
    if (readonly) {
        struct stat sb;
        if (stat(path, &sb) != 0) {
            tsdb_err(db, error, SA_ERR_IO, 0, "no such database");
            goto fail;
        }
    }
    rc = sqlite3_open_v2(path, &db->conn,
                         readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_CANTOPEN)
            tsdb_err(db, error, SA_ERR_IO, rc, "cannot open the database file");
        else
            sql_err(db, rc, "opening", error);
        goto fail;
    }
    sqlite3_extended_result_codes(db->conn, 1);
    sqlite3_busy_timeout(db->conn, db->busy_ms);

    /* look before touching anything */
    if (!probe(db, &p, error) || !check_probe(db, &p, &fresh, error))
        goto fail;
    if (!readonly) {
        sqlite3_stmt *s = NULL;
        const unsigned char *mode = NULL;
        char modebuf[16] = "";

        rc = sqlite3_prepare_v2(db->conn, "PRAGMA journal_mode = WAL", -1, &s, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            mode = sqlite3_column_text(s, 0);
            snprintf(modebuf, sizeof modebuf, "%s", mode ? (const char *)mode : "");
            rc = SQLITE_OK;
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_OK) {
            sql_err(db, rc, "switching to WAL mode", error);
            goto fail;
        }
        if (strcmp(modebuf, "wal") != 0) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "cannot switch to WAL mode (journal mode stays %s)",
                     modebuf);
            goto fail;
        }
        if (!exec(db, "PRAGMA synchronous = NORMAL", "setting up", error))
            goto fail;
        if ((fresh || p.version < SA_TSDB_SCHEMA_VERSION) && !init_schema(db, fresh, p.version, error))
            goto fail;
    }
    return db;
fail:
    sa_tsdb_close(db);
    return NULL;
}

void sa_tsdb_close(sa_tsdb_t *db)
{
    if (!db)
        return;
    for (int k = 0; k < S_COUNT; k++)
        sqlite3_finalize(db->stmts[k]);
    if (db->conn)
        sqlite3_close_v2(db->conn);
    cache_reset(db);
    free(db->path);
    free(db);
}

const char *sa_tsdb_path(const sa_tsdb_t *db)
{
    return db->path;
}

struct sqlite3 *sa_tsdb_handle(sa_tsdb_t *db)
{
    return db->conn;
}

/* ---- writing ----------------------------------------------------------------------------------- */

/* A node of the cluster during a write. */
typedef struct {
    int64_t id;
    int64_t cur;            /* node.cur_attr_id (0 = absent at the latest snapshot) */
    const char *name;       /* borrowed: from the input or the name buffer */
    const sa_node_t *in;    /* the input record, NULL when absent from this snapshot */
} wnode_t;

static int node_ptr_cmp(const void *a, const void *b)
{
    const sa_node_t *x = *(const sa_node_t *const *)a, *y = *(const sa_node_t *const *)b;
    return strcmp(x->name, y->name);
}

/* Begins a write transaction (waiting up to the busy timeout). */
static bool begin_write(sa_tsdb_t *db, sa_error_t *error)
{
    if (db->readonly) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "opened read-only");
        return false;
    }
    return exec(db, "BEGIN IMMEDIATE", "starting a write", error);
}

/* The id of cluster (0 when unknown and !create). */
static bool cluster_id(sa_tsdb_t *db, const char *cluster, bool create, int64_t *id, sa_error_t *error)
{
    if (!cluster || !*cluster) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "no cluster name given");
        return false;
    }
    return dict_id(db, K_CLUSTER, cluster, create, NULL, id, NULL, error);
}

/* Stores sdiag figures at (cluster, at). */
static bool put_sdiag(sa_tsdb_t *db, int64_t cid, int64_t at, const sa_sdiag_t *sd, sa_error_t *error)
{
    sqlite3_stmt *s = stmt(db, S_SCHED_PUT, error);
    int i = 3;

    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
#define SDIAG_BIND_(name, kind) bind_opt(s, i++, sd->name);
    SA_SDIAG_FIELDS(SDIAG_BIND_)
#undef SDIAG_BIND_
    return step_done(db, s, "writing scheduler statistics", error);
}

/* Loads the cluster's nodes (sorted by name) into *out; names copied into *names. */
static bool load_nodes(sa_tsdb_t *db, int64_t cid, wnode_t **out, size_t *n, size_t extra, char ***names,
                       sa_error_t *error)
{
    sqlite3_stmt *s = stmt(db, S_NODES, error);
    wnode_t *v = NULL;
    char **nm = NULL;
    size_t cap = 0, len = 0;
    int rc;

    *out = NULL;
    *names = NULL;
    *n = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            wnode_t *nv = realloc(v, (ncap + extra) * sizeof *nv);
            char **nn = nv ? realloc(nm, ncap * sizeof *nn) : NULL;
            if (nv)
                v = nv;
            if (!nn) {
                sqlite3_reset(s);
                goto nomem;
            }
            nm = nn;
            cap = ncap;
        }
        memset(&v[len], 0, sizeof v[len]);
        v[len].id = sqlite3_column_int64(s, 0);
        v[len].cur = sqlite3_column_int64(s, 2);
        if (!(nm[len] = strdup((const char *)sqlite3_column_text(s, 1)))) {
            sqlite3_reset(s);
            goto nomem;
        }
        v[len].name = nm[len];
        len++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        sql_err(db, rc, "reading nodes", error);
        goto fail;
    }
    if (!v && !(v = malloc((extra ? extra : 1) * sizeof *v)))
        goto nomem;
    *out = v;
    *names = nm;
    *n = len;
    return true;
nomem:
    oom(db, error);
fail:
    for (size_t i = 0; i < len; i++)
        free(nm[i]);
    free(nm);
    free(v);
    return false;
}

/*
 * Writes the interval row of node id at s for attribute set v, given the carried
 * attribute set (the one at the snapshot before, 0 after a gap) and whether a row is
 * there now.
 */
static bool put_row(sa_tsdb_t *db, int64_t id, int64_t s, int64_t v, int64_t carry, bool had_row, int64_t old_v,
                    sa_error_t *error)
{
    sqlite3_stmt *st;
    bool want = v != carry;

    if (want) {
        if (had_row && old_v == v)
            return true;
        if (!(st = stmt(db, S_IV_PUT, error)))
            return false;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, s);
        if (v)
            sqlite3_bind_int64(st, 3, v);
        return step_done(db, st, "writing intervals", error);
    }
    if (!had_row)
        return true;
    if (!(st = stmt(db, S_IV_DEL, error)))
        return false;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, s);
    return step_done(db, st, "writing intervals", error);
}

/* Gets prev/next/existence of the snapshots around `at`. */
static bool neighbours(sa_tsdb_t *db, int64_t cid, int64_t at, int64_t *prev, bool *has_prev, int64_t *next,
                       bool *has_next, bool *exists, sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t dummy;

    if (!(s = stmt(db, S_SNAP_GET, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    if (!step_int(db, s, &dummy, exists, "reading snapshots", error))
        return false;
    if (!(s = stmt(db, S_SNAP_PREV, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    if (!step_int(db, s, prev, has_prev, "reading snapshots", error))
        return false;
    if (!(s = stmt(db, S_SNAP_NEXT, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    return step_int(db, s, next, has_next, "reading snapshots", error);
}

bool sa_tsdb_write_snapshot(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                            const sa_tsdb_opts_t *opts, sa_error_t *error)
{
    sa_tsdb_opts_t defaults;
    const sa_node_t **sorted = NULL;
    wnode_t *wn = NULL;
    char **names = NULL;
    size_t nn = 0, nold = 0;
    int64_t *ids = NULL, *v_new = NULL, *v_prev = NULL, *v_next = NULL, *v_old = NULL;
    bool *row_at = NULL, *row_next = NULL;
    totv_t t_prev = {0}, t_new = {0}, t_next = {0}, g_prev = {0}, g_new = {0}, g_next = {0}, empty = {0};
    int64_t cid, prev = 0, next = 0, max_gap;
    bool has_prev, has_next, exists, gap_before, gap_after, ok = false, in_txn = false;
    attr_t a = {0};
    char q[80], tbuf[32];
    sqlite3_stmt *s;

    if (!opts) {
        sa_tsdb_opts_init(&defaults);
        opts = &defaults;
    }
    max_gap = opts->max_gap_s > 0 ? opts->max_gap_s : SA_TSDB_DEFAULT_MAX_GAP_S;
    if (at == SA_UNSET || at == SA_INFINITE) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "snapshot time not set");
        return false;
    }
    sa_time_format(at, tbuf, sizeof tbuf);
    snprintf(db->ctx, sizeof db->ctx, "snapshot of %s at %s", sa_error_quote(cluster ? cluster : "", 64, q, sizeof q),
             tbuf);
    if (n == 0 || !nodes) {
        tsdb_err(db, error, SA_ERR_INPUT, 0, "no nodes given (refusing to record every node as gone)");
        goto done;
    }
    /* the input, sorted by name; names must be present and unique */
    if (!(sorted = malloc(n * sizeof *sorted)))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i] || !nodes[i]->name || !*nodes[i]->name) {
            tsdb_err(db, error, SA_ERR_INPUT, 0, "node %zu has no name", i);
            goto done;
        }
        sorted[i] = nodes[i];
    }
    qsort(sorted, n, sizeof *sorted, node_ptr_cmp);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
            tsdb_err(db, error, SA_ERR_INPUT, 0, "node %s is listed twice",
                     sa_error_quote(sorted[i]->name, 64, q, sizeof q));
            goto done;
        }
    }

    if (!begin_write(db, error))
        goto done;
    in_txn = true;
    if (!cluster_id(db, cluster, true, &cid, error))
        goto done;
    if (!neighbours(db, cid, at, &prev, &has_prev, &next, &has_next, &exists, error))
        goto done;
    gap_before = has_prev && at - prev > max_gap;
    gap_after = has_next && next - at > max_gap;

    /* merge the cluster's known nodes with the input (both sorted by name) */
    if (!load_nodes(db, cid, &wn, &nold, n, &names, error))
        goto done;
    {
        size_t i = 0, j = 0, add = 0;
        nn = nold;
        while (j < n) {
            int c = i < nold ? strcmp(wn[i].name, sorted[j]->name) : 1;
            if (c < 0) {
                i++;
            } else if (c == 0) {
                wn[i++].in = sorted[j++];
            } else {
                /* a new node: appended after the known ones */
                if (!(s = stmt(db, S_NODE_INS, error)))
                    goto done;
                sqlite3_bind_int64(s, 1, cid);
                sqlite3_bind_text(s, 2, sorted[j]->name, -1, SQLITE_STATIC);
                if (!step_done(db, s, "adding a node", error))
                    goto done;
                wn[nold + add].id = sqlite3_last_insert_rowid(db->conn);
                wn[nold + add].cur = 0;
                wn[nold + add].name = sorted[j]->name;
                wn[nold + add].in = sorted[j];
                add++;
                j++;
            }
        }
        nn = nold + add;
    }

    if (!(ids = calloc(nn, sizeof *ids)) || !(v_new = calloc(nn, sizeof *v_new)) ||
        !(v_prev = calloc(nn, sizeof *v_prev)) || !(v_next = calloc(nn, sizeof *v_next)) ||
        !(v_old = calloc(nn, sizeof *v_old)) || !(row_at = calloc(nn, sizeof *row_at)) ||
        !(row_next = calloc(nn, sizeof *row_next)))
        goto nomem;
    for (size_t i = 0; i < nn; i++) {
        ids[i] = wn[i].id;
        if (wn[i].in) {
            if (!attr_from_node(db, wn[i].in, &a, error))
                goto done;
            if (!attr_id(db, &a, &v_new[i], error))
                goto done;
            free(a.gpus);
            a.gpus = NULL;
        }
    }

    /* the observations around `at`, as stored before this write */
    if (has_prev) {
        if (!has_next && !exists) {
            for (size_t i = 0; i < nn; i++)
                v_prev[i] = wn[i].cur; /* prev is the latest snapshot */
        } else if (!decode_at(db, cid, ids, nn, prev, v_prev, NULL, NULL, error)) {
            goto done;
        }
    }
    if (exists && !decode_at(db, cid, ids, nn, at, v_old, row_at, NULL, error))
        goto done;
    if (has_next && !decode_at(db, cid, ids, nn, next, v_next, row_next, NULL, error))
        goto done;

    if (exists && memcmp(v_old, v_new, nn * sizeof *v_new) == 0) {
        /* the same snapshot again: nothing changes (sdiag figures are still stored) */
        if (opts->sdiag && !put_sdiag(db, cid, at, opts->sdiag, error))
            goto done;
        if (!exec(db, "COMMIT", "committing", error))
            goto done;
        in_txn = false;
        ok = true;
        goto done;
    }

    /* gaps */
    if (has_prev || exists) {
        for (int k = 0; k < 2; k++) {
            if (k == 0 && !has_prev)
                continue;
            if (!(s = stmt(db, S_GAP_DEL, error)))
                goto done;
            sqlite3_bind_int64(s, 1, cid);
            sqlite3_bind_int64(s, 2, k == 0 ? prev : at);
            if (!step_done(db, s, "writing gaps", error))
                goto done;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (k == 0 ? !gap_before : !gap_after)
            continue;
        if (!(s = stmt(db, S_GAP_INS, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, k == 0 ? prev : at);
        sqlite3_bind_int64(s, 3, k == 0 ? at : next);
        if (!step_done(db, s, "writing gaps", error))
            goto done;
    }

    /* interval rows at `at` and at the next snapshot */
    for (size_t i = 0; i < nn; i++) {
        int64_t carry = gap_before ? 0 : v_prev[i];
        if (!put_row(db, ids[i], at, v_new[i], carry, row_at[i], v_old[i], error))
            goto done;
        if (has_next &&
            !put_row(db, ids[i], next, v_next[i], gap_after ? 0 : v_new[i], row_next[i], v_next[i], error))
            goto done;
    }
    /* the latest snapshot's attributes per node */
    if (!has_next) {
        for (size_t i = 0; i < nn; i++) {
            if (wn[i].cur == v_new[i])
                continue;
            if (!(s = stmt(db, S_NODE_SET_CUR, error)))
                goto done;
            sqlite3_bind_int64(s, 1, ids[i]);
            if (v_new[i])
                sqlite3_bind_int64(s, 2, v_new[i]);
            if (!step_done(db, s, "writing nodes", error))
                goto done;
        }
    }

    /* snapshot and totals */
    if (!(s = stmt(db, S_SNAP_PUT, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    sqlite3_bind_int64(s, 3, (int64_t)n);
    if (!step_done(db, s, "writing the snapshot", error))
        goto done;
    if (!compute_totals(db, v_new, nn, &t_new, &g_new, error))
        goto done;
    if (has_prev && !gap_before && !compute_totals(db, v_prev, nn, &t_prev, &g_prev, error))
        goto done;
    if (exists && !delete_total_rows(db, cid, at, error))
        goto done;
    if (!write_total_rows(db, cid, at, &t_new, &t_prev, false, error) ||
        !write_total_rows(db, cid, at, &g_new, &g_prev, true, error))
        goto done;
    if (has_next) {
        if (!compute_totals(db, v_next, nn, &t_next, &g_next, error) || !delete_total_rows(db, cid, next, error) ||
            !write_total_rows(db, cid, next, &t_next, gap_after ? &empty : &t_new, false, error) ||
            !write_total_rows(db, cid, next, &g_next, gap_after ? &empty : &g_new, true, error))
            goto done;
    }
    if (opts->sdiag && !put_sdiag(db, cid, at, opts->sdiag, error))
        goto done;
    if (!exec(db, "COMMIT", "committing", error))
        goto done;
    in_txn = false;
    ok = true;
    goto done;
nomem:
    oom(db, error);
done:
    if (in_txn)
        rollback(db);
    db->ctx[0] = '\0';
    free(a.gpus);
    for (size_t i = 0; i < nold; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(sorted);
    free(ids);
    free(v_new);
    free(v_prev);
    free(v_next);
    free(v_old);
    free(row_at);
    free(row_next);
    totv_free(&t_prev);
    totv_free(&t_new);
    totv_free(&t_next);
    totv_free(&g_prev);
    totv_free(&g_new);
    totv_free(&g_next);
    return ok;
}

bool sa_tsdb_write_sdiag(sa_tsdb_t *db, const char *cluster, int64_t at, const sa_sdiag_t *sd, sa_error_t *error)
{
    int64_t cid;

    char q[80], tbuf[32];
    bool ok = false;

    snprintf(db->ctx, sizeof db->ctx, "scheduler statistics of %s at %s",
             sa_error_quote(cluster ? cluster : "", 64, q, sizeof q), sa_time_format(at, tbuf, sizeof tbuf));
    if (!sd) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "none given");
        goto done;
    }
    if (!begin_write(db, error))
        goto done;
    if (!cluster_id(db, cluster, true, &cid, error) || !put_sdiag(db, cid, at, sd, error) ||
        !exec(db, "COMMIT", "committing", error)) {
        rollback(db);
        goto done;
    }
    ok = true;
done:
    db->ctx[0] = '\0';
    return ok;
}

/* ---- reading ---------------------------------------------------------------------------------- */

/* Starts a read transaction (a consistent view while a writer commits) and finds the cluster. */
static bool begin_read(sa_tsdb_t *db, const char *cluster, int64_t *cid, sa_error_t *error)
{
    if (!exec(db, "BEGIN", "starting a read", error))
        return false;
    if (!cluster_id(db, cluster, false, cid, error)) {
        end_read(db);
        return false;
    }
    return true;
}

bool sa_tsdb_last_snapshot(sa_tsdb_t *db, const char *cluster, int64_t *at, sa_error_t *error)
{
    int64_t cid;
    bool found, ok = false;
    sqlite3_stmt *s;

    *at = SA_UNSET;
    if (!begin_read(db, cluster, &cid, error))
        return false;
    if (cid) {
        if (!(s = stmt(db, S_SNAP_LATEST, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        if (!step_int(db, s, at, &found, "reading snapshots", error))
            goto done;
        if (!found)
            *at = SA_UNSET;
    }
    ok = true;
done:
    end_read(db);
    return ok;
}

/* A [start, end) span. */
typedef struct {
    int64_t start, end;
} span_t;

/* Reads gaps of cluster: all (range false) or those overlapping [from, to). */
static bool load_gaps(sa_tsdb_t *db, int64_t cid, bool range, int64_t from, int64_t to, span_t **out, size_t *n,
                      sa_error_t *error)
{
    sqlite3_stmt *s = stmt(db, range ? S_GAPS_RANGE : S_GAPS_ALL, error);
    span_t *v = NULL;
    size_t cap = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    if (range) {
        sqlite3_bind_int64(s, 2, from);
        sqlite3_bind_int64(s, 3, to);
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            span_t *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *nv);
            if (!nv) {
                sqlite3_reset(s);
                free(v);
                oom(db, error);
                return false;
            }
            v = nv;
        }
        v[*n].start = sqlite3_column_int64(s, 0);
        v[*n].end = sqlite3_column_int64(s, 1);
        (*n)++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        sql_err(db, rc, "reading gaps", error);
        return false;
    }
    *out = v;
    return true;
}

bool sa_tsdb_gap_seconds(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t *secs,
                         sa_error_t *error)
{
    int64_t cid;
    span_t *g = NULL;
    size_t ng = 0;
    bool ok = false;

    *secs = 0;
    if (!begin_read(db, cluster, &cid, error))
        return false;
    if (cid && to > from) {
        if (!load_gaps(db, cid, true, from, to, &g, &ng, error))
            goto done;
        for (size_t i = 0; i < ng; i++) {
            int64_t a = g[i].start > from ? g[i].start : from, b = g[i].end < to ? g[i].end : to;
            if (b > a)
                *secs += b - a;
        }
    }
    ok = true;
done:
    free(g);
    end_read(db);
    return ok;
}

/* Accumulated seconds of one (group, state). */
typedef struct {
    int64_t group; /* node id / partition id / GPU type id / 0 */
    bool has_group;
    int64_t state_id;
    int64_t node_s, cpu_s[4], gpu_total_s, gpu_used_s;
    const char *gname, *sname;
} hacc_t;

typedef struct {
    hacc_t *v;
    size_t n, cap;
    u64map_t index; /* (group, state) -> position + 1 */
} hacc_list_t;

/* The accumulator of (group, state). */
static hacc_t *hacc_get(hacc_list_t *l, int64_t group, bool has_group, int64_t state_id)
{
    uint64_t key = fnv(fnv(FNV_INIT, &group, sizeof group), &state_id, sizeof state_id) ^ (uint64_t)has_group;
    u64ent_t *e = u64map_get(&l->index, key);

    /* verify: the key is a hash of the pair, collisions are resolved by probing on */
    while (e && e->ival) {
        hacc_t *h = &l->v[e->ival - 1];
        if (h->group == group && h->state_id == state_id && h->has_group == has_group)
            return h;
        key = mix64(key + 1);
        e = u64map_get(&l->index, key);
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        hacc_t *nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    if (!(e = u64map_put(&l->index, key)))
        return NULL;
    memset(&l->v[l->n], 0, sizeof l->v[0]);
    l->v[l->n].group = group;
    l->v[l->n].has_group = has_group;
    l->v[l->n].state_id = state_id;
    e->ival = (int64_t)++l->n;
    return &l->v[l->n - 1];
}

/* Adds d seconds of attribute set a to accumulator h (gpu: only that type, or all when NULL). */
static void hacc_add(hacc_t *h, const attr_t *a, int64_t d, const agpu_t *gpu)
{
    h->node_s += d;
    h->cpu_s[0] += known(a->cpus_total) * d;
    h->cpu_s[1] += known(a->cpus_alloc) * d;
    h->cpu_s[2] += known(a->cpus_idle) * d;
    h->cpu_s[3] += known(a->cpus_other) * d;
    for (size_t g = 0; g < a->ngpus; g++) {
        if (gpu && gpu != &a->gpus[g])
            continue;
        h->gpu_total_s += a->gpus[g].total * d;
        h->gpu_used_s += a->gpus[g].used * d;
    }
}

static int hacc_cmp(const void *x, const void *y)
{
    const hacc_t *a = x, *b = y;
    int c;
    if (!a->gname != !b->gname)
        return a->gname ? 1 : -1;
    if (a->gname && (c = strcmp(a->gname, b->gname)) != 0)
        return c;
    return strcmp(a->sname, b->sname);
}

/* The first gap starting at or after t (gaps sorted), INT64_MAX when none. */
static int64_t gap_after(const span_t *g, size_t ng, int64_t t)
{
    size_t lo = 0, hi = ng;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ng ? g[lo].start : INT64_MAX;
}

bool sa_tsdb_state_hours(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_group_t group_by,
                         sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error)
{
    int64_t cid, latest;
    bool found, ok = false;
    span_t *gaps = NULL;
    size_t ng = 0, nn = 0;
    wnode_t *wn = NULL;
    char **names = NULL;
    hacc_list_t acc = {0};
    sqlite3_stmt *s;
    int64_t *rs = NULL, *ra = NULL;
    size_t rcap = 0;

    if (!begin_read(db, cluster, &cid, error))
        return false;
    if (!cid || to <= from) {
        ok = true;
        goto done;
    }
    if (!(s = stmt(db, S_SNAP_LATEST, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    if (!step_int(db, s, &latest, &found, "reading snapshots", error))
        goto done;
    if (!found) {
        ok = true;
        goto done;
    }
    if (!load_gaps(db, cid, false, 0, 0, &gaps, &ng, error) || !load_nodes(db, cid, &wn, &nn, 0, &names, error))
        goto done;

    for (size_t i = 0; i < nn; i++) {
        size_t nr = 0;
        int rc;
        if (!(s = stmt(db, S_IV_WINDOW, error)))
            goto done;
        sqlite3_bind_int64(s, 1, wn[i].id);
        sqlite3_bind_int64(s, 2, from);
        sqlite3_bind_int64(s, 3, to);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            if (nr == rcap) {
                size_t ncap = rcap ? rcap * 2 : 64;
                int64_t *n1 = realloc(rs, ncap * sizeof *n1), *n2;
                if (n1)
                    rs = n1;
                if (!n1 || !(n2 = realloc(ra, ncap * sizeof *n2))) {
                    sqlite3_reset(s);
                    oom(db, error);
                    goto done;
                }
                ra = n2;
                rcap = ncap;
            }
            rs[nr] = sqlite3_column_int64(s, 0);
            ra[nr] = sqlite3_column_int64(s, 1);
            nr++;
        }
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) {
            sql_err(db, rc, "reading intervals", error);
            goto done;
        }
        for (size_t r = 0; r < nr; r++) {
            const attr_t *a;
            int64_t end, b, e, d;
            if (!ra[r])
                continue;
            end = r + 1 < nr ? rs[r + 1] : INT64_MAX;
            b = gap_after(gaps, ng, rs[r]);
            if (b < end)
                end = b;
            if (latest < end)
                end = latest;
            b = rs[r] > from ? rs[r] : from;
            e = end < to ? end : to;
            if ((d = e - b) <= 0)
                continue;
            if (!(a = attr_get(db, ra[r], error)))
                goto done;
            if (group_by == SA_TSDB_BY_STATE || group_by == SA_TSDB_BY_NODE) {
                hacc_t *h = hacc_get(&acc, group_by == SA_TSDB_BY_NODE ? (int64_t)i : 0,
                                     group_by == SA_TSDB_BY_NODE, a->state_id);
                if (!h)
                    goto nomem;
                hacc_add(h, a, d, NULL);
            } else if (group_by == SA_TSDB_BY_PARTITION) {
                for (size_t p = 0; p < a->nparts; p++) {
                    hacc_t *h = hacc_get(&acc, a->parts[p], true, a->state_id);
                    if (!h)
                        goto nomem;
                    hacc_add(h, a, d, NULL);
                }
            } else {
                if (a->ngpus == 0) {
                    hacc_t *h = hacc_get(&acc, 0, false, a->state_id);
                    if (!h)
                        goto nomem;
                    hacc_add(h, a, d, NULL);
                }
                for (size_t g = 0; g < a->ngpus; g++) {
                    hacc_t *h = hacc_get(&acc, a->gpus[g].type_id, true, a->state_id);
                    if (!h)
                        goto nomem;
                    hacc_add(h, a, d, &a->gpus[g]);
                }
            }
        }
    }

    /* names, order, callbacks */
    for (size_t i = 0; i < acc.n; i++) {
        hacc_t *h = &acc.v[i];
        if (!(h->sname = dict_name(db, K_STATE, h->state_id, error)))
            goto done;
        h->gname = NULL;
        if (!h->has_group)
            continue;
        if (group_by == SA_TSDB_BY_NODE)
            h->gname = wn[h->group].name;
        else if (!(h->gname = dict_name(db, group_by == SA_TSDB_BY_PARTITION ? K_PARTITION : K_GPU_TYPE, h->group,
                                        error)))
            goto done;
    }
    if (acc.n > 1)
        qsort(acc.v, acc.n, sizeof *acc.v, hacc_cmp);
    for (size_t i = 0; i < acc.n; i++) {
        const hacc_t *h = &acc.v[i];
        sa_tsdb_hours_t row = {
            .state = h->sname,
            .group = h->gname,
            .node_hours = h->node_s / 3600.0,
            .cpu_hours_total = h->cpu_s[0] / 3600.0,
            .cpu_hours_alloc = h->cpu_s[1] / 3600.0,
            .cpu_hours_idle = h->cpu_s[2] / 3600.0,
            .cpu_hours_other = h->cpu_s[3] / 3600.0,
            .gpu_hours_total = h->gpu_total_s / 3600.0,
            .gpu_hours_used = h->gpu_used_s / 3600.0,
            .gpu_hours_idle = (h->gpu_total_s - h->gpu_used_s) / 3600.0,
        };
        if (!cb(&row, ctx, error))
            goto done;
    }
    ok = true;
    goto done;
nomem:
    oom(db, error);
done:
    end_read(db);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(gaps);
    free(rs);
    free(ra);
    free(acc.v);
    u64map_clear(&acc.index, NULL);
    return ok;
}

bool sa_tsdb_nodes_at(sa_tsdb_t *db, const char *cluster, int64_t at, sa_tsdb_node_cb cb, void *ctx,
                      sa_error_t *error)
{
    int64_t cid, dummy;
    bool found, ok = false;
    wnode_t *wn = NULL;
    char **names = NULL;
    size_t nn = 0;
    int64_t *ids = NULL, *vals = NULL, *starts = NULL;
    struct sa_tsdb_gpu *gpus = NULL;
    char base[128], flags[1024], q[80], tbuf[32];
    sqlite3_stmt *s, *b;
    int rc;

    if (!begin_read(db, cluster, &cid, error))
        return false;
    found = false;
    if (cid) {
        if (!(s = stmt(db, S_SNAP_GET, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, at);
        if (!step_int(db, s, &dummy, &found, "reading snapshots", error))
            goto done;
    }
    if (!found) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "cluster %s has no snapshot at %s",
                 sa_error_quote(cluster, 64, q, sizeof q), sa_time_format(at, tbuf, sizeof tbuf));
        goto done;
    }
    if (!load_nodes(db, cid, &wn, &nn, 0, &names, error))
        goto done;
    if (nn && (!(ids = calloc(nn, sizeof *ids)) || !(vals = calloc(nn, sizeof *vals)) ||
               !(starts = calloc(nn, sizeof *starts)))) {
        oom(db, error);
        goto done;
    }
    for (size_t i = 0; i < nn; i++)
        ids[i] = wn[i].id;
    if (!decode_at(db, cid, ids, nn, at, vals, NULL, starts, error))
        goto done;
    for (size_t i = 0; i < nn; i++) {
        const attr_t *a;
        sa_tsdb_node_t node;
        const char *state;
        if (!vals[i])
            continue;
        if (!(a = attr_get(db, vals[i], error)) || !(state = dict_name(db, K_STATE, a->state_id, error)))
            goto done;
        memset(&node, 0, sizeof node);
        node.name = wn[i].name;
        node.state = state;
        if (!(b = stmt(db, S_STATE_PARTS, error)))
            goto done;
        sqlite3_bind_int64(b, 1, a->state_id);
        rc = sqlite3_step(b);
        if (rc != SQLITE_ROW) {
            sqlite3_reset(b);
            sql_err(db, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading states", error);
            goto done;
        }
        snprintf(base, sizeof base, "%s",
                 sqlite3_column_type(b, 0) == SQLITE_NULL ? "" : (const char *)sqlite3_column_text(b, 0));
        node.base = sqlite3_column_type(b, 0) == SQLITE_NULL ? NULL : base;
        snprintf(flags, sizeof flags, "%s", (const char *)sqlite3_column_text(b, 1));
        node.flags = flags;
        sqlite3_reset(b);
        if (a->reason_id && !(node.reason = dict_name(db, K_REASON, a->reason_id, error)))
            goto done;
        if (!(node.partitions = dict_name(db, K_PARTSET, a->partset_id, error)))
            goto done;
        node.cpus_total = a->cpus_total;
        node.cpus_alloc = a->cpus_alloc;
        node.cpus_idle = a->cpus_idle;
        node.cpus_other = a->cpus_other;
        node.mem_total_mb = a->mem_total_mb;
        node.mem_alloc_mb = a->mem_alloc_mb;
        node.start = starts[i];
        free(gpus);
        gpus = NULL;
        if (a->ngpus && !(gpus = calloc(a->ngpus, sizeof *gpus))) {
            oom(db, error);
            goto done;
        }
        for (size_t g = 0; g < a->ngpus; g++) {
            if (!(gpus[g].type = dict_name(db, K_GPU_TYPE, a->gpus[g].type_id, error)))
                goto done;
            gpus[g].total = a->gpus[g].total;
            gpus[g].used = a->gpus[g].used;
        }
        /* by type name */
        for (size_t x = 1; x < a->ngpus; x++) {
            for (size_t y = x; y > 0 && strcmp(gpus[y - 1].type, gpus[y].type) > 0; y--) {
                struct sa_tsdb_gpu t = gpus[y - 1];
                gpus[y - 1] = gpus[y];
                gpus[y] = t;
            }
        }
        node.ngpus = a->ngpus;
        node.gpus = gpus;
        if (!cb(&node, ctx, error))
            goto done;
    }
    ok = true;
done:
    end_read(db);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(ids);
    free(vals);
    free(starts);
    free(gpus);
    return ok;
}

bool sa_tsdb_sdiag_range(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_sdiag_cb cb,
                         void *ctx, sa_error_t *error)
{
    int64_t cid;
    bool ok = false;
    sqlite3_stmt *s;
    int rc;

    if (!begin_read(db, cluster, &cid, error))
        return false;
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!(s = stmt(db, S_SCHED_RANGE, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, from);
    sqlite3_bind_int64(s, 3, to);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sa_sdiag_t sd;
        int i = 1;
        sa_sdiag_init(&sd);
#define SDIAG_COL_(name, kind) sd.name = col_opt(s, i++);
        SA_SDIAG_FIELDS(SDIAG_COL_)
#undef SDIAG_COL_
        if (!cb(sqlite3_column_int64(s, 0), &sd, ctx, error)) {
            sqlite3_reset(s);
            goto done;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        sql_err(db, rc, "reading scheduler statistics", error);
        goto done;
    }
    ok = true;
done:
    end_read(db);
    return ok;
}

/* ---- verification --------------------------------------------------------------------------- */

/* Reads every total row of a table (S_TOT_ALL / S_GTOT_ALL) with its `at` into rows/ats. */
static bool load_total_rows(sa_tsdb_t *db, int k, int64_t cid, totv_t *rows, int64_t **ats, sa_error_t *error)
{
    sqlite3_stmt *s = stmt(db, k, error);
    size_t cap = 0;
    int rc;

    *ats = NULL;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        tot_t *t = totv_push(rows);
        if (rows->n > cap) {
            int64_t *na = realloc(*ats, (cap = rows->cap) * sizeof *na);
            if (!na)
                t = NULL;
            else
                *ats = na;
        }
        if (!t) {
            sqlite3_reset(s);
            oom(db, error);
            return false;
        }
        (*ats)[rows->n - 1] = sqlite3_column_int64(s, 0);
        t->state_id = sqlite3_column_int64(s, 1);
        t->part_id = sqlite3_column_int64(s, 2);
        t->gpu_id = sqlite3_column_int64(s, 3);
        t->nodes = sqlite3_column_int64(s, 4);
        for (int j = 0; j < 4; j++)
            t->v[j] = sqlite3_column_int64(s, 5 + j);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        sql_err(db, rc, "reading totals", error);
        return false;
    }
    return true;
}

/* Applies the stored rows at one snapshot to the running totals *run (sorted by key). */
static bool apply_rows(totv_t *run, const tot_t *rows, size_t n)
{
    totv_t out = {0};
    size_t i = 0, j = 0;

    while (i < run->n || j < n) {
        int c = i >= run->n ? 1 : j >= n ? -1 : tot_key_cmp(&run->v[i], &rows[j]);
        const tot_t *src = c < 0 ? &run->v[i] : &rows[j];
        if (c >= 0)
            j++;
        if (c <= 0)
            i++;
        if (src->nodes == 0)
            continue;
        tot_t *t = totv_push(&out);
        if (!t) {
            totv_free(&out);
            return false;
        }
        *t = *src;
    }
    totv_free(run);
    *run = out;
    return true;
}

static bool totv_equal(const totv_t *a, const totv_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (tot_key_cmp(&a->v[i], &b->v[i]) != 0 || !tot_same(&a->v[i], &b->v[i]))
            return false;
    }
    return true;
}

bool sa_tsdb_verify(sa_tsdb_t *db, const char *cluster, size_t *nsnapshots, sa_error_t *error)
{
    int64_t cid;
    bool ok = false;
    wnode_t *wn = NULL;
    char **names = NULL;
    size_t nn = 0, nsnap = 0, ng = 0, scap = 0;
    int64_t *snaps = NULL, *cur = NULL, *tat = NULL, *gat = NULL;
    span_t *gaps = NULL;
    totv_t trows = {0}, grows = {0}, trun = {0}, grun = {0}, tcalc = {0}, gcalc = {0};
    sqlite3_stmt *s;
    int rc;
    size_t ti = 0, gi = 0, gp = 0;
    char tbuf[32];

    if (nsnapshots)
        *nsnapshots = 0;
    if (!begin_read(db, cluster, &cid, error))
        return false;
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!load_nodes(db, cid, &wn, &nn, 0, &names, error) || !load_gaps(db, cid, false, 0, 0, &gaps, &ng, error))
        goto done;
    if (!(cur = calloc(nn ? nn : 1, sizeof *cur)))
        goto nomem;
    if (!(s = stmt(db, S_SNAPS_ALL, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (nsnap == scap) {
            int64_t *nv = realloc(snaps, (scap = scap ? scap * 2 : 256) * sizeof *nv);
            if (!nv) {
                sqlite3_reset(s);
                goto nomem;
            }
            snaps = nv;
        }
        snaps[nsnap++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        sql_err(db, rc, "reading snapshots", error);
        goto done;
    }
    if (!load_total_rows(db, S_TOT_ALL, cid, &trows, &tat, error) ||
        !load_total_rows(db, S_GTOT_ALL, cid, &grows, &gat, error))
        goto done;

    /* sweep the snapshots in time order, applying interval rows as they start */
    if (!(s = stmt(db, S_IV_ALL, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    rc = sqlite3_step(s);
    for (size_t k = 0; k < nsnap; k++) {
        int64_t at = snaps[k];
        size_t t0;
        sa_time_format(at, tbuf, sizeof tbuf);
        while (gp < ng && gaps[gp].end < at)
            gp++;
        if (gp < ng && gaps[gp].end == at) {
            if (k == 0 || gaps[gp].start != snaps[k - 1]) {
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "gap ending at %s does not start at the snapshot before",
                         tbuf);
                goto reset;
            }
            memset(cur, 0, nn * sizeof *cur);
            trun.n = grun.n = 0;
        }
        while (rc == SQLITE_ROW && sqlite3_column_int64(s, 1) <= at) {
            int64_t nid = sqlite3_column_int64(s, 0), st = sqlite3_column_int64(s, 1);
            size_t lo = 0, hi = nn;
            if (st != at) {
                char b2[32];
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row at %s is not at a snapshot time",
                         sa_time_format(st, b2, sizeof b2));
                goto reset;
            }
            /* nodes are sorted by name, not id: linear search is fine for a check */
            for (lo = 0; lo < nn && wn[lo].id != nid; lo++)
                ;
            (void)hi;
            if (lo == nn) {
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row of unknown node %" PRId64, nid);
                goto reset;
            }
            cur[lo] = sqlite3_column_int64(s, 2);
            rc = sqlite3_step(s);
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            sql_err(db, rc, "reading intervals", error);
            goto reset;
        }
        for (t0 = ti; ti < trows.n && tat[ti] == at; ti++)
            ;
        if (!apply_rows(&trun, trows.v + t0, ti - t0))
            goto nomem_reset;
        for (t0 = gi; gi < grows.n && gat[gi] == at; gi++)
            ;
        if (!apply_rows(&grun, grows.v + t0, gi - t0))
            goto nomem_reset;
        if ((ti < trows.n && tat[ti] < at) || (gi < grows.n && gat[gi] < at)) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows before %s are not at a snapshot time", tbuf);
            goto reset;
        }
        if (!compute_totals(db, cur, nn, &tcalc, &gcalc, error))
            goto reset;
        if (!totv_equal(&tcalc, &trun) || !totv_equal(&gcalc, &grun)) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0,
                     "snapshot at %s is not whole: its stored totals differ from its intervals", tbuf);
            goto reset;
        }
    }
    sqlite3_reset(s);
    if (ti != trows.n || gi != grows.n) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows after the latest snapshot");
        goto done;
    }
    for (size_t i = 0; nsnap && i < nn; i++) {
        if (wn[i].cur != cur[i]) {
            char q[80];
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "node %s: current attributes differ from its intervals",
                     sa_error_quote(wn[i].name, 64, q, sizeof q));
            goto done;
        }
    }
    if (nsnapshots)
        *nsnapshots = nsnap;
    ok = true;
    goto done;
nomem_reset:
    oom(db, error);
reset:
    sqlite3_reset(s);
    goto done;
nomem:
    oom(db, error);
done:
    end_read(db);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(snaps);
    free(cur);
    free(tat);
    free(gat);
    free(gaps);
    totv_free(&trows);
    totv_free(&grows);
    totv_free(&trun);
    totv_free(&grun);
    totv_free(&tcalc);
    totv_free(&gcalc);
    return ok;
}
