/*
 * sa_tsdb.c - the SQLite time series of node, CPU and GPU states (see sa_tsdb.h and
 * schema/tsdb/timeseries.sql): the handle, errors, cached statements, dictionaries,
 * attribute sets, per-snapshot totals and decoding. Opening is in sa_tsdb_migrate.c,
 * writing in sa_tsdb_write.c, the read API in sa_tsdb_read.c, the check in
 * sa_tsdb_verify.c; sa_tsdb_private.h is what they share.
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
#include "sa_tsdb_private.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_vec.h"

/* ---- small containers ------------------------------------------------------------ */

/* Mixes a 64-bit key for the open-addressing tables. */
uint64_t tsdb_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t u64_hash_at(size_t i, void *ctx)
{
    const u64map_t *m = ctx;
    return tsdb_mix64(m->v[i].key);
}

static bool u64_eq_at(size_t i, const void *key, void *ctx)
{
    const u64map_t *m = ctx;
    return m->v[i].key == *(const uint64_t *)key;
}

/* The entry of key, NULL when absent. */
u64ent_t *tsdb_u64map_get(const u64map_t *m, uint64_t key)
{
    size_t i = sa_map_find(&m->map, tsdb_mix64(key), &key, u64_eq_at, (void *)m);
    return i == SIZE_MAX ? NULL : &m->v[i];
}

/* Returns the entry of key, adding it (zeroed) when absent; NULL on OOM. */
u64ent_t *tsdb_u64map_put(u64map_t *m, uint64_t key)
{
    uint32_t *slot = sa_map_slot(&m->map, tsdb_mix64(key), &key, m->n, u64_hash_at, u64_eq_at, m);
    u64ent_t *e;

    if (!slot)
        return NULL;
    if (*slot)
        return &m->v[*slot - 1];
    if (!SA_VEC_GROW(m->v, m->cap, m->n, 1, 32))
        return NULL;
    e = &m->v[m->n];
    memset(e, 0, sizeof *e);
    e->key = key;
    *slot = (uint32_t)m->n + 1;
    m->n++;
    return e;
}

/* Empties the map; free_ptr (may be NULL) is called on every pointer. */
void tsdb_u64map_clear(u64map_t *m, void (*free_ptr)(void *))
{
    if (free_ptr) {
        for (size_t i = 0; i < m->n; i++) {
            if (m->v[i].ptr)
                free_ptr(m->v[i].ptr);
        }
    }
    free(m->v);
    sa_map_clear(&m->map);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* ---- the SQL texts of the cached statements --------------------------------------------- */

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
                   " mem_total_mb, mem_alloc_mb, gpu_config, cpu_config FROM attr WHERE id = ?1",
    [S_ATTR_GPUS] = "SELECT gpu_type_id, total, used FROM attr_gpu WHERE attr_id = ?1 ORDER BY gpu_type_id",
    [S_ATTR_INS] = "INSERT INTO attr (hash, state_id, reason_id, partset_id, cpus_total, cpus_alloc, cpus_idle,"
                   " cpus_other, mem_total_mb, mem_alloc_mb, gpu_config, cpu_config)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [S_ATTR_GPU_INS] = "INSERT INTO attr_gpu (attr_id, gpu_type_id, total, used) VALUES (?1, ?2, ?3, ?4)",
    [S_NODES] = "SELECT id, name, cur_attr_id FROM node WHERE cluster_id = ?1 ORDER BY name",
    [S_NODE_INS] = "INSERT INTO node (cluster_id, name) VALUES (?1, ?2)",
    [S_NODE_SET_CUR] = "UPDATE node SET cur_attr_id = ?2 WHERE id = ?1",
    [S_SNAP_GET] = "SELECT nodes FROM snapshot WHERE cluster_id = ?1 AND at = ?2",
    [S_SNAP_PREV] = "SELECT max(at) FROM snapshot WHERE cluster_id = ?1 AND at < ?2",
    [S_SNAP_NEXT] = "SELECT min(at) FROM snapshot WHERE cluster_id = ?1 AND at > ?2",
    [S_SNAP_LATEST] = "SELECT max(at) FROM snapshot WHERE cluster_id = ?1",
    [S_SNAP_PUT] = "INSERT OR REPLACE INTO snapshot (cluster_id, at, nodes) VALUES (?1, ?2, ?3)",
    [S_GAP_DEL] = "DELETE FROM gap WHERE cluster_id = ?1 AND start = ?2",
    [S_GAP_INS] = "INSERT OR REPLACE INTO gap (cluster_id, start, end) VALUES (?1, ?2, ?3)",
    [S_GAP_LAST_END] = "SELECT max(end) FROM gap WHERE cluster_id = ?1 AND end <= ?2",
    [S_GAPS_ALL] = "SELECT start, end FROM gap WHERE cluster_id = ?1 ORDER BY start",
    [S_GAPS_RANGE] = "SELECT start, end FROM gap WHERE cluster_id = ?1 AND start < ?3 AND end > ?2 ORDER BY start",
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
    /* sdiag's RPC counts by message type (kind 0) and by user (1), schema version 3 */
    [S_RPCNAME_GET] = "SELECT id FROM rpc_name WHERE name = ?1",
    [S_RPCNAME_INS] = "INSERT INTO rpc_name (name) VALUES (?1)",
    [S_NAME_RPCNAME] = "SELECT name FROM rpc_name WHERE id = ?1",
    /* one row's RPC counts are kept per cluster and UTC hour: the latest observation's (?3: the hour's start) */
    [S_RPC_DEL] = "DELETE FROM sched_rpc WHERE cluster_id = ?1 AND at <= ?2 AND at >= ?3",
    [S_RPC_LATER] = "SELECT 1 FROM sched_rpc WHERE cluster_id = ?1 AND at > ?2 AND at < ?3 + 3600 LIMIT 1",
    [S_RPC_INS] = "INSERT OR REPLACE INTO sched_rpc (cluster_id, at, kind, name_id, count, total_time)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [S_RPC_AT] = "SELECT r.kind, n.name, r.count, r.total_time FROM sched_rpc r JOIN rpc_name n ON n.id = r.name_id"
                 " WHERE r.cluster_id = ?1 AND r.at = ?2 ORDER BY r.kind, n.name",
    [S_CLUSTERS] = "SELECT name FROM cluster ORDER BY name",
    [S_SNAP_FIRST] = "SELECT min(at) FROM snapshot WHERE cluster_id = ?1",
    [S_SNAPS_RANGE] = "SELECT at FROM snapshot WHERE cluster_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY at",
    /* a node's configured GPUs observed per node: in its intervals, or alone (node_config_gpu) */
    [S_NODE_GET] = "SELECT id FROM node WHERE cluster_id = ?1 AND name = ?2",
    /* before: an interval carried earlier holds the same totals, and ends the walk back at once;
     * strictly before, as a row at ?2 is what an earlier landing of the same snapshot wrote */
    [S_CFG_IV_BEFORE] = "SELECT i.start, i.attr_id FROM node_interval i JOIN attr a ON a.id = i.attr_id"
                        " WHERE i.node_id = ?1 AND i.start < ?2 AND (a.gpu_config IS NULL OR a.gpu_config = 1)"
                        " ORDER BY i.start DESC LIMIT 1",
    [S_CFG_BEFORE] = "SELECT max(at) FROM node_config_gpu WHERE node_id = ?1 AND at <= ?2",
    /* after: a run's re-typing takes the nearest later observation of a node unknown at its start */
    [S_CFG_IV_AFTER] = "SELECT i.start, i.attr_id FROM node_interval i JOIN attr a ON a.id = i.attr_id"
                       " WHERE i.node_id = ?1 AND i.start >= ?2 AND (a.gpu_config IS NULL OR a.gpu_config = 1)"
                       " ORDER BY i.start LIMIT 1",
    [S_CFG_AFTER] = "SELECT min(at) FROM node_config_gpu WHERE node_id = ?1 AND at >= ?2",
    [S_CFG_GPUS] = "SELECT gpu_type_id, total FROM node_config_gpu WHERE node_id = ?1 AND at = ?2 AND total > 0",
    [S_CFG_DEL] = "DELETE FROM node_config_gpu WHERE node_id = ?1 AND at = ?2",
    [S_CFG_INS] = "INSERT INTO node_config_gpu (node_id, at, gpu_type_id, total) VALUES (?1, ?2, ?3, ?4)",
};

/* ---- errors ---------------------------------------------------------------------------- */

/* Sets *error to "PATH: <what the handle is doing>: <fmt>". */
void tsdb_err(const sa_tsdb_t *db, sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
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
        *domain = SA_ERR_NOMEM; /* exit 1, wherever memory runs out */
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
void tsdb_sql_err(sa_tsdb_t *db, int rc, const char *what, sa_error_t *error)
{
    char buf[400];
    sa_err_domain_t domain;
    const char *words = rc_words(db, rc, &domain, buf, sizeof buf);

    tsdb_err(db, error, domain, rc, "%s: %s", what, words);
}

void tsdb_oom(sa_tsdb_t *db, sa_error_t *error)
{
    tsdb_err(db, error, SA_ERR_NOMEM, SQLITE_NOMEM, "out of memory");
}

/* ---- statements ------------------------------------------------------------------------ */

/* The cached statement k, reset with its bindings cleared; NULL with *error set. */
sqlite3_stmt *tsdb_stmt(sa_tsdb_t *db, int k, sa_error_t *error)
{
    sqlite3_stmt *st = db->stmts[k];

    if (!st) {
        int rc = sqlite3_prepare_v3(db->conn, stmt_sql[k], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
        if (rc != SQLITE_OK) {
            tsdb_sql_err(db, rc, "preparing a statement", error);
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
void tsdb_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == SA_UNSET)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

/* Column i as int64, SA_UNSET when NULL. */
int64_t tsdb_col_opt(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? SA_UNSET : sqlite3_column_int64(st, i);
}

/* Steps a statement that returns no row (or whose rows are not wanted). */
bool tsdb_step_done(sa_tsdb_t *db, sqlite3_stmt *st, const char *what, sa_error_t *error)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        tsdb_sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/*
 * Steps a statement expected to return at most one integer (column 0): *found tells
 * whether a row with a non-NULL value came; *out gets it.
 */
bool tsdb_step_int(sa_tsdb_t *db, sqlite3_stmt *st, int64_t *out, bool *found, const char *what,
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
        tsdb_sql_err(db, rc, what, error);
        return false;
    }
    sqlite3_reset(st);
    return true;
}

/* Runs SQL text with no parameters. */
bool tsdb_exec(sa_tsdb_t *db, const char *sql, const char *what, sa_error_t *error)
{
    int rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        tsdb_sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/* ---- caches ----------------------------------------------------------------------------- */

void tsdb_attr_free(void *p)
{
    attr_t *a = p;
    if (a) {
        free(a->gpus);
        free(a);
    }
}

/* Drops every cached id (after a rollback, or at close). */
void tsdb_cache_reset(sa_tsdb_t *db)
{
    for (int k = 0; k < K_COUNT; k++) {
        tsdb_u64map_clear(&db->ids[k], free);
        tsdb_u64map_clear(&db->names[k], free);
    }
    tsdb_u64map_clear(&db->attrs, tsdb_attr_free);
    tsdb_u64map_clear(&db->attr_hash, NULL);
    tsdb_u64map_clear(&db->partsets, free);
    tsdb_u64map_clear(&db->tkeys, free);
}

/* Ends a write transaction that failed: ROLLBACK (unless SQLite already did) and drop the caches. */
void tsdb_rollback(sa_tsdb_t *db)
{
    for (int k = 0; k < S_COUNT; k++) {
        if (db->stmts[k])
            sqlite3_reset(db->stmts[k]);
    }
    if (!sqlite3_get_autocommit(db->conn))
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
    tsdb_cache_reset(db);
}

/* Ends a read transaction. */
void tsdb_end_read(sa_tsdb_t *db)
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
    [K_RPC_NAME] = {S_RPCNAME_GET, S_RPCNAME_INS, S_NAME_RPCNAME, "RPC name"},
};

/*
 * The id of text in dictionary k: from the cache, the table, or (create) a new row.
 * *id is 0 when absent and !create. For K_STATE, st gives base and flags of a new row.
 */
bool tsdb_dict_id(sa_tsdb_t *db, int k, const char *text, bool create, const sa_state_t *st, int64_t *id,
                  bool *created, sa_error_t *error)
{
    uint64_t h = sa_fnv1a_more(FNV_INIT + (uint64_t)k, text, strlen(text));
    u64ent_t *e = tsdb_u64map_get(&db->ids[k], h);
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
    if (!(s = tsdb_stmt(db, dict[k].get, error)))
        return false;
    sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
    if (!tsdb_step_int(db, s, id, &found, what, error))
        return false;
    if (!found) {
        *id = 0;
        if (!create)
            return true;
        snprintf(what, sizeof what, "adding a %s", dict[k].what);
        if (!(s = tsdb_stmt(db, dict[k].ins, error)))
            return false;
        sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
        if (k == K_STATE) {
            size_t len = 1;
            for (size_t i = 0; i < st->flags.n; i++)
                len += strlen(st->flags.v[i]) + 1;
            if (!(flags = malloc(len))) {
                tsdb_oom(db, error);
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
        if (!tsdb_step_done(db, s, what, error))
            goto done;
        *id = sqlite3_last_insert_rowid(db->conn);
        if (created)
            *created = true;
    }
    if (!e && tsdb_u64map_get(&db->ids[k], h) == NULL) {
        char *copy = strdup(text);
        if (!copy || !(e = tsdb_u64map_put(&db->ids[k], h))) {
            free(copy);
            tsdb_oom(db, error);
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
const char *tsdb_dict_name(sa_tsdb_t *db, int k, int64_t id, sa_error_t *error)
{
    u64ent_t *e = tsdb_u64map_get(&db->names[k], (uint64_t)id);
    sqlite3_stmt *s;
    char *copy;
    int rc;

    if (e)
        return e->ptr;
    if (!(s = tsdb_stmt(db, dict[k].name, error)))
        return NULL;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "%s id %" PRId64 " is missing (database damaged?)",
                     dict[k].what, id);
        else
            tsdb_sql_err(db, rc, "reading names", error);
        return NULL;
    }
    copy = strdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    if (!copy || !(e = tsdb_u64map_put(&db->names[k], (uint64_t)id))) {
        free(copy);
        tsdb_oom(db, error);
        return NULL;
    }
    e->ptr = copy;
    return copy;
}

/* The partition ids of a partition set (cached). */
static const idlist_t *partset_parts(sa_tsdb_t *db, int64_t partset_id, sa_error_t *error)
{
    u64ent_t *e = tsdb_u64map_get(&db->partsets, (uint64_t)partset_id);
    sqlite3_stmt *s;
    idlist_t *l = NULL;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc;

    if (e)
        return e->ptr;
    if (!(s = tsdb_stmt(db, S_PARTSET_MEMBERS, error)))
        return NULL;
    sqlite3_bind_int64(s, 1, partset_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!SA_VEC_GROW(ids, cap, n, 1, 4))
            goto nomem;
        ids[n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(ids);
        tsdb_sql_err(db, rc, "reading partition sets", error);
        return NULL;
    }
    if (!(l = malloc(sizeof *l + n * sizeof(int64_t))))
        goto nomem;
    l->n = n;
    if (n)
        memcpy(l->ids, ids, n * sizeof(int64_t));
    free(ids);
    ids = NULL;
    if (!(e = tsdb_u64map_put(&db->partsets, (uint64_t)partset_id)))
        goto nomem;
    e->ptr = l;
    return l;
nomem:
    sqlite3_reset(s);
    free(ids);
    free(l);
    tsdb_oom(db, error);
    return NULL;
}


/* Loads attribute set id (cached; borrowed). NULL with *error set. */
const attr_t *tsdb_attr_get(sa_tsdb_t *db, int64_t id, sa_error_t *error)
{
    u64ent_t *e = tsdb_u64map_get(&db->attrs, (uint64_t)id);
    sqlite3_stmt *s;
    attr_t *a;
    const idlist_t *parts;
    size_t cap = 0;
    int rc;

    if (e)
        return e->ptr;
    if (!(a = calloc(1, sizeof *a))) {
        tsdb_oom(db, error);
        return NULL;
    }
    if (!(s = tsdb_stmt(db, S_ATTR_GET, error)))
        goto fail;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "attribute set %" PRId64 " is missing (database damaged?)",
                     id);
        else
            tsdb_sql_err(db, rc, "reading attribute sets", error);
        goto fail;
    }
    a->state_id = sqlite3_column_int64(s, 0);
    a->reason_id = sqlite3_column_int64(s, 1); /* NULL reads as 0 */
    a->partset_id = sqlite3_column_int64(s, 2);
    a->cpus_total = tsdb_col_opt(s, 3);
    a->cpus_alloc = tsdb_col_opt(s, 4);
    a->cpus_idle = tsdb_col_opt(s, 5);
    a->cpus_other = tsdb_col_opt(s, 6);
    a->mem_total_mb = tsdb_col_opt(s, 7);
    a->mem_alloc_mb = tsdb_col_opt(s, 8);
    a->gpu_config = sqlite3_column_int64(s, 9); /* NULL reads as 0: observed */
    a->cpu_config = sqlite3_column_int64(s, 10);
    sqlite3_reset(s);

    if (!(s = tsdb_stmt(db, S_ATTR_GPUS, error)))
        goto fail;
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!SA_VEC_GROW(a->gpus, cap, a->ngpus, 1, 2)) {
            sqlite3_reset(s);
            tsdb_oom(db, error);
            goto fail;
        }
        a->gpus[a->ngpus].type_id = sqlite3_column_int64(s, 0);
        a->gpus[a->ngpus].total = sqlite3_column_int64(s, 1);
        a->gpus[a->ngpus].used = sqlite3_column_int64(s, 2);
        a->ngpus++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading attribute sets", error);
        goto fail;
    }
    if (!(parts = partset_parts(db, a->partset_id, error)))
        goto fail;
    a->nparts = parts->n;
    a->parts = parts->ids;
    if (!(e = tsdb_u64map_put(&db->attrs, (uint64_t)id))) {
        tsdb_oom(db, error);
        goto fail;
    }
    e->ptr = a;
    return a;
fail:
    tsdb_attr_free(a);
    return NULL;
}

/* ---- totals ------------------------------------------------------------------------------ */

int tsdb_tot_key_cmp(const tot_t *a, const tot_t *b)
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
    return tsdb_tot_key_cmp(a, b);
}

bool tsdb_tot_same(const tot_t *a, const tot_t *b)
{
    return a->nodes == b->nodes && memcmp(a->v, b->v, sizeof a->v) == 0;
}

tot_t *tsdb_totv_push(totv_t *t)
{
    if (!SA_VEC_GROW(t->v, t->cap, t->n, 1, 32))
        return NULL;
    memset(&t->v[t->n], 0, sizeof t->v[0]);
    return &t->v[t->n++];
}

void tsdb_totv_free(totv_t *t)
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
        if (o > 0 && tsdb_tot_key_cmp(&t->v[o - 1], &t->v[i]) == 0) {
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

int64_t tsdb_known(int64_t v)
{
    return v == SA_UNSET ? 0 : v;
}

/*
 * Totals of the nodes whose attribute sets are vals[0..n) (0 = absent): CPU totals
 * into *cpu and GPU totals into *gpu (both emptied first), sorted by key.
 */
bool tsdb_compute_totals(sa_tsdb_t *db, const int64_t *vals, size_t n, totv_t *cpu, totv_t *gpu,
                         sa_error_t *error)
{
    int64_t *ids = NULL;
    size_t m = 0;
    bool ok = false;

    cpu->n = gpu->n = 0;
    if (n && !(ids = malloc(n * sizeof *ids))) {
        tsdb_oom(db, error);
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
        if (!(a = tsdb_attr_get(db, ids[i], error)))
            goto done;
        for (size_t p = 0; p < a->nparts; p++) {
            tot_t *t = tsdb_totv_push(cpu);
            if (!t)
                goto nomem;
            t->state_id = a->state_id;
            t->part_id = a->parts[p];
            t->nodes = cnt;
            t->v[0] = cnt * tsdb_known(a->cpus_total);
            t->v[1] = cnt * tsdb_known(a->cpus_alloc);
            t->v[2] = cnt * tsdb_known(a->cpus_idle);
            t->v[3] = cnt * tsdb_known(a->cpus_other);
            for (size_t g = 0; g < a->ngpus; g++) {
                if (!(t = tsdb_totv_push(gpu)))
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
    tsdb_oom(db, error);
done:
    free(ids);
    return ok;
}

/* ---- decoding observations ----------------------------------------------------------------- */

/*
 * The attribute sets of nodes ids[0..n) at snapshot s of the cluster, into vals
 * (0 = absent), from the interval rows: the node's last row at or before s, unless a
 * gap lies between that row and s. row_at[i] (may be NULL) tells whether node i has a
 * row exactly at s; start[i] (may be NULL) gets that last row's start.
 */
bool tsdb_decode_at(sa_tsdb_t *db, int64_t cluster_id, const int64_t *ids, size_t n, int64_t s, int64_t *vals,
                    bool *row_at, int64_t *start, sa_error_t *error)
{
    sqlite3_stmt *st;
    int64_t gap_end = INT64_MIN;
    bool found;

    if (!(st = tsdb_stmt(db, S_GAP_LAST_END, error)))
        return false;
    sqlite3_bind_int64(st, 1, cluster_id);
    sqlite3_bind_int64(st, 2, s);
    if (!tsdb_step_int(db, st, &gap_end, &found, "reading gaps", error))
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
        if (!(st = tsdb_stmt(db, S_IV_AT, error)))
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
            tsdb_sql_err(db, rc, "reading intervals", error);
            return false;
        }
        sqlite3_reset(st);
    }
    return true;
}

/* ---- the handle ------------------------------------------------------------------------------ */

void sa_sdiag_init(sa_sdiag_t *sd)
{
#define SDIAG_UNSET_(name, kind) sd->name = SA_UNSET;
    SA_SDIAG_FIELDS(SDIAG_UNSET_)
#undef SDIAG_UNSET_
    sd->rpcs = NULL;
    sd->nrpcs = 0;
    sd->extra = NULL;
}

void sa_sdiag_clear(sa_sdiag_t *sd)
{
    if (!sd)
        return;
    for (size_t i = 0; i < sd->nrpcs; i++)
        free(sd->rpcs[i].name);
    free(sd->rpcs);
    sd->rpcs = NULL;
    sd->nrpcs = 0;
    json_decref(sd->extra);
    sd->extra = NULL;
}

void sa_tsdb_close(sa_tsdb_t *db)
{
    if (!db)
        return;
    for (int k = 0; k < S_COUNT; k++)
        sqlite3_finalize(db->stmts[k]);
    if (db->conn)
        sqlite3_close_v2(db->conn);
    tsdb_cache_reset(db);
    free(db->path);
    free(db);
}

struct sqlite3 *sa_tsdb_handle(sa_tsdb_t *db)
{
    return db->conn;
}


/* The id of cluster (0 when unknown and !create). */
bool tsdb_cluster_id(sa_tsdb_t *db, const char *cluster, bool create, int64_t *id, sa_error_t *error)
{
    if (!cluster || !*cluster) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "no cluster name given");
        return false;
    }
    return tsdb_dict_id(db, K_CLUSTER, cluster, create, NULL, id, NULL, error);
}


/* Loads the cluster's nodes (sorted by name) into *out; names copied into *names. */
bool tsdb_load_nodes(sa_tsdb_t *db, int64_t cid, wnode_t **out, size_t *n, size_t extra, char ***names,
                     sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, S_NODES, error);
    wnode_t *v = NULL;
    char **nm = NULL;
    size_t cap = 0, vcap = 0, len = 0;
    int rc;

    *out = NULL;
    *names = NULL;
    *n = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        /* v keeps room for `extra` more nodes after the last */
        if (!SA_VEC_GROW(v, vcap, len, 1 + extra, 256) || !SA_VEC_GROW(nm, cap, len, 1, 256)) {
            sqlite3_reset(s);
            goto nomem;
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
        tsdb_sql_err(db, rc, "reading nodes", error);
        goto fail;
    }
    if (!v && !(v = malloc((extra ? extra : 1) * sizeof *v)))
        goto nomem;
    *out = v;
    *names = nm;
    *n = len;
    return true;
nomem:
    tsdb_oom(db, error);
fail:
    tsdb_free_names(nm, len);
    free(v);
    return false;
}

void tsdb_free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

bool tsdb_load_snapshots(sa_tsdb_t *db, int64_t cid, int64_t from, int64_t to, int64_t **ats, size_t *n,
                         sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, S_SNAPS_RANGE, error);
    int64_t *v = NULL;
    size_t cap = 0;
    int rc;

    *ats = NULL;
    *n = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, from);
    sqlite3_bind_int64(s, 3, to);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!SA_VEC_GROW(v, cap, *n, 1, 256)) {
            sqlite3_reset(s);
            free(v);
            *n = 0;
            tsdb_oom(db, error);
            return false;
        }
        v[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        *n = 0;
        tsdb_sql_err(db, rc, "reading snapshots", error);
        return false;
    }
    *ats = v;
    return true;
}

/* Starts a read transaction (a consistent view while a writer commits) and finds the cluster. */
bool tsdb_begin_read(sa_tsdb_t *db, const char *cluster, int64_t *cid, sa_error_t *error)
{
    if (!tsdb_exec(db, "BEGIN", "starting a read", error))
        return false;
    if (!tsdb_cluster_id(db, cluster, false, cid, error)) {
        tsdb_end_read(db);
        return false;
    }
    return true;
}


/* Reads gaps of cluster: all (range false) or those overlapping [from, to). */
bool tsdb_load_gaps(sa_tsdb_t *db, int64_t cid, bool range, int64_t from, int64_t to, span_t **out, size_t *n,
                    sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, range ? S_GAPS_RANGE : S_GAPS_ALL, error);
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
        if (!SA_VEC_GROW(v, cap, *n, 1, 16)) {
            sqlite3_reset(s);
            free(v);
            tsdb_oom(db, error);
            return false;
        }
        v[*n].start = sqlite3_column_int64(s, 0);
        v[*n].end = sqlite3_column_int64(s, 1);
        (*n)++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        tsdb_sql_err(db, rc, "reading gaps", error);
        return false;
    }
    *out = v;
    return true;
}

