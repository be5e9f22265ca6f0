/*
 * sa_tsdb_write.c - writing the time series: snapshots, in time order or not, and
 * scheduler statistics (see sa_tsdb.h for the contract and the top of sa_tsdb.c for
 * the design: rows at a snapshot depend only on the observations there and at the
 * snapshot before, so a late snapshot rewrites the rows at its time and at the next).
 */
#include "sa_tsdb_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- partition sets and attribute sets ------------------------------------------------ */

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
        tsdb_oom(db, error);
        return false;
    }
    names[0] = '\0';
    for (size_t i = 0; i < parts->n; i++) {
        if (i)
            strcat(names, ",");
        strcat(names, parts->v[i]);
    }
    if (!tsdb_dict_id(db, K_PARTSET, names, true, NULL, id, &created, error))
        goto done;
    if (created) {
        size_t np = parts->n ? parts->n : 1;
        for (size_t i = 0; i < np; i++) {
            int64_t pid;
            if (!tsdb_dict_id(db, K_PARTITION, parts->n ? parts->v[i] : "", true, NULL, &pid, NULL, error))
                goto done;
            if (!(s = tsdb_stmt(db, S_PARTSET_MEM_INS, error)))
                goto done;
            sqlite3_bind_int64(s, 1, *id);
            sqlite3_bind_int64(s, 2, pid);
            if (!tsdb_step_done(db, s, "adding a partition set", error))
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
    uint64_t h = tsdb_fnv(FNV_INIT, f, sizeof f);
    h = tsdb_fnv(h, &a->ngpus, sizeof a->ngpus);
    for (size_t i = 0; i < a->ngpus; i++)
        h = tsdb_fnv(h, &a->gpus[i], sizeof a->gpus[i]);
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
        tsdb_oom(db, error);
        goto done;
    }
    if (!tsdb_dict_id(db, K_STATE, text, true, &node->state, &a->state_id, NULL, error))
        goto done;
    if (node->reason && !tsdb_dict_id(db, K_REASON, node->reason, true, NULL, &a->reason_id, NULL, error))
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
        tsdb_oom(db, error);
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
            if (!tsdb_dict_id(db, K_GPU_TYPE, type, true, NULL, &tid, NULL, error))
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
    u64ent_t *e = tsdb_u64map_get(&db->attr_hash, h);
    const attr_t *c;
    sqlite3_stmt *s;
    int rc;

    if (e) {
        if (!(c = tsdb_attr_get(db, e->ival, error)))
            return false;
        if (attr_equal(c, a)) {
            *id = e->ival;
            return true;
        }
    }
    /* candidates with the same hash in the table */
    *id = 0;
    if (!(s = tsdb_stmt(db, S_ATTR_BY_HASH, error)))
        return false;
    sqlite3_bind_int64(s, 1, (int64_t)h);
    for (;;) {
        int64_t cid;
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
            break;
        cid = sqlite3_column_int64(s, 0);
        /* tsdb_attr_get() uses other statements; this one stays positioned */
        if (!(c = tsdb_attr_get(db, cid, error))) {
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
        tsdb_sql_err(db, rc, "looking up an attribute set", error);
        return false;
    }
    if (*id == 0) {
        if (!(s = tsdb_stmt(db, S_ATTR_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, (int64_t)h);
        sqlite3_bind_int64(s, 2, a->state_id);
        if (a->reason_id)
            sqlite3_bind_int64(s, 3, a->reason_id);
        sqlite3_bind_int64(s, 4, a->partset_id);
        tsdb_bind_opt(s, 5, a->cpus_total);
        tsdb_bind_opt(s, 6, a->cpus_alloc);
        tsdb_bind_opt(s, 7, a->cpus_idle);
        tsdb_bind_opt(s, 8, a->cpus_other);
        tsdb_bind_opt(s, 9, a->mem_total_mb);
        tsdb_bind_opt(s, 10, a->mem_alloc_mb);
        if (!tsdb_step_done(db, s, "adding an attribute set", error))
            return false;
        *id = sqlite3_last_insert_rowid(db->conn);
        for (size_t i = 0; i < a->ngpus; i++) {
            if (!(s = tsdb_stmt(db, S_ATTR_GPU_INS, error)))
                return false;
            sqlite3_bind_int64(s, 1, *id);
            sqlite3_bind_int64(s, 2, a->gpus[i].type_id);
            sqlite3_bind_int64(s, 3, a->gpus[i].total);
            sqlite3_bind_int64(s, 4, a->gpus[i].used);
            if (!tsdb_step_done(db, s, "adding an attribute set", error))
                return false;
        }
    }
    if (!(e = tsdb_u64map_put(&db->attr_hash, h))) {
        tsdb_oom(db, error);
        return false;
    }
    e->ival = *id;
    return true;
}

/* The total_key id of a total row's key (cached), creating it when new. */
static bool total_key_id(sa_tsdb_t *db, const tot_t *t, int64_t *id, sa_error_t *error)
{
    int64_t k[3] = {t->state_id, t->part_id, t->gpu_id};
    uint64_t h = tsdb_fnv(FNV_INIT, k, sizeof k);
    u64ent_t *e = tsdb_u64map_get(&db->tkeys, h);
    sqlite3_stmt *s;
    int64_t *copy;
    bool found;

    if (e && memcmp(e->ptr, k, sizeof k) == 0) {
        *id = e->ival;
        return true;
    }
    if (!(s = tsdb_stmt(db, S_TKEY_GET, error)))
        return false;
    for (int i = 0; i < 3; i++)
        sqlite3_bind_int64(s, i + 1, k[i]);
    if (!tsdb_step_int(db, s, id, &found, "looking up a total key", error))
        return false;
    if (!found) {
        if (!(s = tsdb_stmt(db, S_TKEY_INS, error)))
            return false;
        for (int i = 0; i < 3; i++)
            sqlite3_bind_int64(s, i + 1, k[i]);
        if (!tsdb_step_done(db, s, "adding a total key", error))
            return false;
        *id = sqlite3_last_insert_rowid(db->conn);
    }
    if (!e) {
        if (!(copy = malloc(sizeof k)) || !(e = tsdb_u64map_put(&db->tkeys, h))) {
            free(copy);
            tsdb_oom(db, error);
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
        int c = i >= now->n ? 1 : j >= before->n ? -1 : tsdb_tot_key_cmp(&now->v[i], &before->v[j]);
        sqlite3_stmt *s;

        if (c < 0) {
            w = &now->v[i++];
        } else if (c > 0) {
            zero = before->v[j++];
            zero.nodes = 0;
            memset(zero.v, 0, sizeof zero.v);
            w = &zero;
        } else {
            if (!tsdb_tot_same(&now->v[i], &before->v[j]))
                w = &now->v[i];
            i++;
            j++;
        }
        if (!w)
            continue;
        if (!total_key_id(db, w, &key, error) || !(s = tsdb_stmt(db, gpu ? S_GTOT_INS : S_TOT_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, cluster_id);
        sqlite3_bind_int64(s, 2, at);
        sqlite3_bind_int64(s, 3, key);
        sqlite3_bind_int64(s, 4, w->nodes);
        for (int k = 0; k < (gpu ? 2 : 4); k++)
            sqlite3_bind_int64(s, 5 + k, w->v[k]);
        if (!tsdb_step_done(db, s, "writing totals", error))
            return false;
    }
    return true;
}

/* Deletes the total rows (both tables) of cluster at `at`. */
static bool delete_total_rows(sa_tsdb_t *db, int64_t cluster_id, int64_t at, sa_error_t *error)
{
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *s = tsdb_stmt(db, k ? S_GTOT_DEL : S_TOT_DEL, error);
        if (!s)
            return false;
        sqlite3_bind_int64(s, 1, cluster_id);
        sqlite3_bind_int64(s, 2, at);
        if (!tsdb_step_done(db, s, "rewriting totals", error))
            return false;
    }
    return true;
}

void sa_tsdb_opts_init(sa_tsdb_opts_t *opts)
{
    opts->max_gap_s = SA_TSDB_DEFAULT_MAX_GAP_S;
    opts->sdiag = NULL;
}


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
    return tsdb_exec(db, "BEGIN IMMEDIATE", "starting a write", error);
}
/* Stores sdiag figures at (cluster, at). */
static bool put_sdiag(sa_tsdb_t *db, int64_t cid, int64_t at, const sa_sdiag_t *sd, sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, S_SCHED_PUT, error);
    int i = 3;

    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
#define SDIAG_BIND_(name, kind) tsdb_bind_opt(s, i++, sd->name);
    SA_SDIAG_FIELDS(SDIAG_BIND_)
#undef SDIAG_BIND_
    return tsdb_step_done(db, s, "writing scheduler statistics", error);
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
        if (!(st = tsdb_stmt(db, S_IV_PUT, error)))
            return false;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, s);
        if (v)
            sqlite3_bind_int64(st, 3, v);
        return tsdb_step_done(db, st, "writing intervals", error);
    }
    if (!had_row)
        return true;
    if (!(st = tsdb_stmt(db, S_IV_DEL, error)))
        return false;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, s);
    return tsdb_step_done(db, st, "writing intervals", error);
}

/* Gets prev/next/existence of the snapshots around `at`. */
static bool neighbours(sa_tsdb_t *db, int64_t cid, int64_t at, int64_t *prev, bool *has_prev, int64_t *next,
                       bool *has_next, bool *exists, sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t dummy;

    if (!(s = tsdb_stmt(db, S_SNAP_GET, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    if (!tsdb_step_int(db, s, &dummy, exists, "reading snapshots", error))
        return false;
    if (!(s = tsdb_stmt(db, S_SNAP_PREV, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    if (!tsdb_step_int(db, s, prev, has_prev, "reading snapshots", error))
        return false;
    if (!(s = tsdb_stmt(db, S_SNAP_NEXT, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    return tsdb_step_int(db, s, next, has_next, "reading snapshots", error);
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
    if (!tsdb_cluster_id(db, cluster, true, &cid, error))
        goto done;
    if (!neighbours(db, cid, at, &prev, &has_prev, &next, &has_next, &exists, error))
        goto done;
    gap_before = has_prev && at - prev > max_gap;
    gap_after = has_next && next - at > max_gap;

    /* merge the cluster's known nodes with the input (both sorted by name) */
    if (!tsdb_load_nodes(db, cid, &wn, &nold, n, &names, error))
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
                if (!(s = tsdb_stmt(db, S_NODE_INS, error)))
                    goto done;
                sqlite3_bind_int64(s, 1, cid);
                sqlite3_bind_text(s, 2, sorted[j]->name, -1, SQLITE_STATIC);
                if (!tsdb_step_done(db, s, "adding a node", error))
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
        } else if (!tsdb_decode_at(db, cid, ids, nn, prev, v_prev, NULL, NULL, error)) {
            goto done;
        }
    }
    if (exists && !tsdb_decode_at(db, cid, ids, nn, at, v_old, row_at, NULL, error))
        goto done;
    if (has_next && !tsdb_decode_at(db, cid, ids, nn, next, v_next, row_next, NULL, error))
        goto done;

    if (exists && memcmp(v_old, v_new, nn * sizeof *v_new) == 0) {
        /* the same snapshot again: nothing changes (sdiag figures are still stored) */
        if (opts->sdiag && !put_sdiag(db, cid, at, opts->sdiag, error))
            goto done;
        if (!tsdb_exec(db, "COMMIT", "committing", error))
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
            if (!(s = tsdb_stmt(db, S_GAP_DEL, error)))
                goto done;
            sqlite3_bind_int64(s, 1, cid);
            sqlite3_bind_int64(s, 2, k == 0 ? prev : at);
            if (!tsdb_step_done(db, s, "writing gaps", error))
                goto done;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (k == 0 ? !gap_before : !gap_after)
            continue;
        if (!(s = tsdb_stmt(db, S_GAP_INS, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, k == 0 ? prev : at);
        sqlite3_bind_int64(s, 3, k == 0 ? at : next);
        if (!tsdb_step_done(db, s, "writing gaps", error))
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
            if (!(s = tsdb_stmt(db, S_NODE_SET_CUR, error)))
                goto done;
            sqlite3_bind_int64(s, 1, ids[i]);
            if (v_new[i])
                sqlite3_bind_int64(s, 2, v_new[i]);
            if (!tsdb_step_done(db, s, "writing nodes", error))
                goto done;
        }
    }

    /* snapshot and totals */
    if (!(s = tsdb_stmt(db, S_SNAP_PUT, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    sqlite3_bind_int64(s, 3, (int64_t)n);
    if (!tsdb_step_done(db, s, "writing the snapshot", error))
        goto done;
    if (!tsdb_compute_totals(db, v_new, nn, &t_new, &g_new, error))
        goto done;
    if (has_prev && !gap_before && !tsdb_compute_totals(db, v_prev, nn, &t_prev, &g_prev, error))
        goto done;
    if (exists && !delete_total_rows(db, cid, at, error))
        goto done;
    if (!write_total_rows(db, cid, at, &t_new, &t_prev, false, error) ||
        !write_total_rows(db, cid, at, &g_new, &g_prev, true, error))
        goto done;
    if (has_next) {
        if (!tsdb_compute_totals(db, v_next, nn, &t_next, &g_next, error) || !delete_total_rows(db, cid, next, error) ||
            !write_total_rows(db, cid, next, &t_next, gap_after ? &empty : &t_new, false, error) ||
            !write_total_rows(db, cid, next, &g_next, gap_after ? &empty : &g_new, true, error))
            goto done;
    }
    if (opts->sdiag && !put_sdiag(db, cid, at, opts->sdiag, error))
        goto done;
    if (!tsdb_exec(db, "COMMIT", "committing", error))
        goto done;
    in_txn = false;
    ok = true;
    goto done;
nomem:
    tsdb_oom(db, error);
done:
    if (in_txn)
        tsdb_rollback(db);
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
    tsdb_totv_free(&t_prev);
    tsdb_totv_free(&t_new);
    tsdb_totv_free(&t_next);
    tsdb_totv_free(&g_prev);
    tsdb_totv_free(&g_new);
    tsdb_totv_free(&g_next);
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
    if (!tsdb_cluster_id(db, cluster, true, &cid, error) || !put_sdiag(db, cid, at, sd, error) ||
        !tsdb_exec(db, "COMMIT", "committing", error)) {
        tsdb_rollback(db);
        goto done;
    }
    ok = true;
done:
    db->ctx[0] = '\0';
    return ok;
}

