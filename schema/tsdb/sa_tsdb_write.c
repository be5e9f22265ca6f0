/*
 * sa_tsdb_write.c - writing the time series: snapshots, in time order or not, and
 * scheduler statistics (see sa_tsdb.h for the contract and the top of sa_tsdb.c for
 * the design: rows at a snapshot depend only on the observations there and at the
 * snapshot before, so a late snapshot rewrites the rows at its time and at the next).
 */
#include "sa_tsdb_private.h"
#include "sa_fault.h"

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
    uint64_t h = sa_fnv1a_more(FNV_INIT, f, sizeof f);
    if (a->gpu_config) /* only then: the hashes of version 1 attribute sets stay valid */
        h = sa_fnv1a_more(h, &a->gpu_config, sizeof a->gpu_config);
    if (a->cpu_config) /* likewise for version 3's */
        h = sa_fnv1a_more(h, &a->cpu_config, sizeof a->cpu_config);
    h = sa_fnv1a_more(h, &a->ngpus, sizeof a->ngpus);
    for (size_t i = 0; i < a->ngpus; i++)
        h = sa_fnv1a_more(h, &a->gpus[i], sizeof a->gpus[i]);
    /* 32 bits: 4 bytes in the row and in its index entry instead of 8; a collision
     * only costs a comparison (attr_id() compares every candidate field by field) */
    return (h ^ (h >> 32)) & 0xffffffffu;
}

static bool attr_equal(const attr_t *a, const attr_t *b)
{
    if (a->state_id != b->state_id || a->reason_id != b->reason_id || a->partset_id != b->partset_id ||
        a->cpus_total != b->cpus_total || a->cpus_alloc != b->cpus_alloc || a->cpus_idle != b->cpus_idle ||
        a->cpus_other != b->cpus_other || a->mem_total_mb != b->mem_total_mb ||
        a->mem_alloc_mb != b->mem_alloc_mb || a->gpu_config != b->gpu_config || a->cpu_config != b->cpu_config ||
        a->ngpus != b->ngpus)
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
    a->gpu_config = node->gpu_config == SA_NODE_GPUS_CARRIED || node->gpu_config == SA_NODE_GPUS_UNKNOWN
                        ? node->gpu_config
                        : 0;
    a->cpu_config = node->cpu_config == SA_NODE_CPUS_SPLIT ? SA_NODE_CPUS_SPLIT : 0;

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
        if (a->gpu_config)
            sqlite3_bind_int64(s, 11, a->gpu_config);
        if (a->cpu_config)
            sqlite3_bind_int64(s, 12, a->cpu_config);
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
    uint64_t h = sa_fnv1a_more(FNV_INIT, k, sizeof k);
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
    int i = 3, rc;
    int64_t hour;

    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
#define SDIAG_BIND_(name, kind) tsdb_bind_opt(s, i++, sd->name);
    SA_SDIAG_FIELDS(SDIAG_BIND_)
#undef SDIAG_BIND_
    if (!tsdb_step_done(db, s, "writing scheduler statistics", error) || !(s = tsdb_stmt(db, S_RPC_LATER, error)))
        return false;
    /*
     * The RPC counts (cumulative since slurmctld's start) are kept for the latest observation
     * of each UTC hour, in whatever order snapshots come: one a poll would be 100 names x 288
     * polls a day (220 MB a year). A later row of the hour keeps its own; else this one
     * replaces the hour's earlier one.
     */
    hour = at - (at % 3600 + 3600) % 3600;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    sqlite3_bind_int64(s, 3, hour);
    if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sqlite3_reset(s);
        return true;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading RPC statistics", error);
        return false;
    }
    if (!(s = tsdb_stmt(db, S_RPC_DEL, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, at);
    sqlite3_bind_int64(s, 3, hour);
    if (!tsdb_step_done(db, s, "writing scheduler statistics", error))
        return false;
    for (size_t k = 0; k < sd->nrpcs; k++) {
        const sa_sdiag_rpc_t *r = &sd->rpcs[k];
        int64_t name_id;
        if (!tsdb_dict_id(db, K_RPC_NAME, r->name, true, NULL, &name_id, NULL, error) ||
            !(s = tsdb_stmt(db, S_RPC_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, at);
        sqlite3_bind_int64(s, 3, r->kind);
        sqlite3_bind_int64(s, 4, name_id);
        sqlite3_bind_int64(s, 5, r->count);
        tsdb_bind_opt(s, 6, r->total_time);
        if (!tsdb_step_done(db, s, "writing RPC statistics", error))
            return false;
    }
    return true;
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

/* What a snapshot write works on: the input, the cluster's nodes, the observations around `at`. */
typedef struct {
    int64_t cid, at, prev, next;
    bool has_prev, has_next, exists, gap_before, gap_after;
    const sa_node_t **sorted; /* the input, by name */
    size_t n;
    wnode_t *wn;              /* the cluster's nodes: known ones (by name), then new ones */
    char **names;             /* the known nodes' names (nold) */
    size_t nn, nold;
    int64_t *ids, *v_new, *v_prev, *v_next, *v_old; /* per node: id, attribute sets (0 = absent) */
    bool *row_at, *row_next;  /* per node: a row exists at `at` / at next */
    totv_t t_prev, t_new, t_next, g_prev, g_new, g_next; /* CPU and GPU totals */
} wsnap_t;

static void wsnap_clear(wsnap_t *w)
{
    tsdb_free_names(w->names, w->nold);
    free(w->wn);
    free(w->sorted);
    free(w->ids);
    free(w->v_new);
    free(w->v_prev);
    free(w->v_next);
    free(w->v_old);
    free(w->row_at);
    free(w->row_next);
    tsdb_totv_free(&w->t_prev);
    tsdb_totv_free(&w->t_new);
    tsdb_totv_free(&w->t_next);
    tsdb_totv_free(&w->g_prev);
    tsdb_totv_free(&w->g_new);
    tsdb_totv_free(&w->g_next);
}

/* The input nodes sorted by name into w->sorted; names must be present and unique. */
static bool sort_input(sa_tsdb_t *db, wsnap_t *w, sa_node_t *const *nodes, size_t n, sa_error_t *error)
{
    char q[80];

    if (n == 0 || !nodes) {
        tsdb_err(db, error, SA_ERR_INPUT, 0, "no nodes given (refusing to record every node as gone)");
        return false;
    }
    if (!(w->sorted = malloc(n * sizeof *w->sorted))) {
        tsdb_oom(db, error);
        return false;
    }
    w->n = n;
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i] || !nodes[i]->name || !*nodes[i]->name) {
            tsdb_err(db, error, SA_ERR_INPUT, 0, "node %zu has no name", i);
            return false;
        }
        w->sorted[i] = nodes[i];
    }
    qsort(w->sorted, n, sizeof *w->sorted, node_ptr_cmp);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(w->sorted[i - 1]->name, w->sorted[i]->name) == 0) {
            tsdb_err(db, error, SA_ERR_INPUT, 0, "node %s is listed twice",
                     sa_error_quote(w->sorted[i]->name, 64, q, sizeof q));
            return false;
        }
    }
    return true;
}

/* Gets prev/next/existence of the snapshots around w->at, and whether gaps separate them. */
static bool neighbours(sa_tsdb_t *db, wsnap_t *w, int64_t max_gap, sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t dummy;

    if (!(s = tsdb_stmt(db, S_SNAP_GET, error)))
        return false;
    sqlite3_bind_int64(s, 1, w->cid);
    sqlite3_bind_int64(s, 2, w->at);
    if (!tsdb_step_int(db, s, &dummy, &w->exists, "reading snapshots", error))
        return false;
    if (!(s = tsdb_stmt(db, S_SNAP_PREV, error)))
        return false;
    sqlite3_bind_int64(s, 1, w->cid);
    sqlite3_bind_int64(s, 2, w->at);
    if (!tsdb_step_int(db, s, &w->prev, &w->has_prev, "reading snapshots", error))
        return false;
    if (!(s = tsdb_stmt(db, S_SNAP_NEXT, error)))
        return false;
    sqlite3_bind_int64(s, 1, w->cid);
    sqlite3_bind_int64(s, 2, w->at);
    if (!tsdb_step_int(db, s, &w->next, &w->has_next, "reading snapshots", error))
        return false;
    w->gap_before = w->has_prev && w->at - w->prev > max_gap;
    w->gap_after = w->has_next && w->next - w->at > max_gap;
    return true;
}

/*
 * Merges the cluster's known nodes with the input (both sorted by name): a known node
 * gets its input record (or none: absent), a new node is added to the table and
 * appended after the known ones.
 */
static bool merge_nodes(sa_tsdb_t *db, wsnap_t *w, sa_error_t *error)
{
    size_t i = 0, j = 0, add = 0;
    sqlite3_stmt *s;

    if (!tsdb_load_nodes(db, w->cid, &w->wn, &w->nold, w->n, &w->names, error))
        return false;
    while (j < w->n) {
        int c = i < w->nold ? strcmp(w->wn[i].name, w->sorted[j]->name) : 1;
        if (c < 0) {
            i++;
        } else if (c == 0) {
            w->wn[i++].in = w->sorted[j++];
        } else {
            wnode_t *nw = &w->wn[w->nold + add];
            if (!(s = tsdb_stmt(db, S_NODE_INS, error)))
                return false;
            sqlite3_bind_int64(s, 1, w->cid);
            sqlite3_bind_text(s, 2, w->sorted[j]->name, -1, SQLITE_STATIC);
            if (!tsdb_step_done(db, s, "adding a node", error))
                return false;
            nw->id = sqlite3_last_insert_rowid(db->conn);
            nw->cur = 0;
            nw->name = w->sorted[j]->name;
            nw->in = w->sorted[j];
            add++;
            j++;
        }
    }
    w->nn = w->nold + add;
    return true;
}

/* Allocates the per-node arrays and finds (or adds) each present node's attribute set. */
static bool new_attrs(sa_tsdb_t *db, wsnap_t *w, sa_error_t *error)
{
    size_t nn = w->nn;
    attr_t a = {0};
    bool ok = true;

    if (!(w->ids = calloc(nn, sizeof *w->ids)) || !(w->v_new = calloc(nn, sizeof *w->v_new)) ||
        !(w->v_prev = calloc(nn, sizeof *w->v_prev)) || !(w->v_next = calloc(nn, sizeof *w->v_next)) ||
        !(w->v_old = calloc(nn, sizeof *w->v_old)) || !(w->row_at = calloc(nn, sizeof *w->row_at)) ||
        !(w->row_next = calloc(nn, sizeof *w->row_next))) {
        tsdb_oom(db, error);
        return false;
    }
    for (size_t i = 0; ok && i < nn; i++) {
        w->ids[i] = w->wn[i].id;
        if (w->wn[i].in)
            ok = attr_from_node(db, w->wn[i].in, &a, error) && attr_id(db, &a, &w->v_new[i], error);
        free(a.gpus);
        a.gpus = NULL;
    }
    return ok;
}

/* The observations around `at` as stored before this write: at prev, at `at` (when it exists), at next. */
static bool decode_around(sa_tsdb_t *db, wsnap_t *w, sa_error_t *error)
{
    if (w->has_prev) {
        if (!w->has_next && !w->exists) {
            for (size_t i = 0; i < w->nn; i++)
                w->v_prev[i] = w->wn[i].cur; /* prev is the latest snapshot */
        } else if (!tsdb_decode_at(db, w->cid, w->ids, w->nn, w->prev, w->v_prev, NULL, NULL, error)) {
            return false;
        }
    }
    if (w->exists && !tsdb_decode_at(db, w->cid, w->ids, w->nn, w->at, w->v_old, w->row_at, NULL, error))
        return false;
    return !w->has_next || tsdb_decode_at(db, w->cid, w->ids, w->nn, w->next, w->v_next, w->row_next, NULL, error);
}

/* Rewrites the gaps starting at prev and at `at`. */
static bool write_gaps(sa_tsdb_t *db, const wsnap_t *w, sa_error_t *error)
{
    sqlite3_stmt *s;

    for (int k = 0; (w->has_prev || w->exists) && k < 2; k++) {
        if (k == 0 && !w->has_prev)
            continue;
        if (!(s = tsdb_stmt(db, S_GAP_DEL, error)))
            return false;
        sqlite3_bind_int64(s, 1, w->cid);
        sqlite3_bind_int64(s, 2, k == 0 ? w->prev : w->at);
        if (!tsdb_step_done(db, s, "writing gaps", error))
            return false;
    }
    for (int k = 0; k < 2; k++) {
        if (k == 0 ? !w->gap_before : !w->gap_after)
            continue;
        if (!(s = tsdb_stmt(db, S_GAP_INS, error)))
            return false;
        sqlite3_bind_int64(s, 1, w->cid);
        sqlite3_bind_int64(s, 2, k == 0 ? w->prev : w->at);
        sqlite3_bind_int64(s, 3, k == 0 ? w->at : w->next);
        if (!tsdb_step_done(db, s, "writing gaps", error))
            return false;
    }
    return true;
}

/* The interval rows at `at` and at the next snapshot, and (when `at` is the latest) each node's current set. */
static bool write_rows(sa_tsdb_t *db, const wsnap_t *w, sa_error_t *error)
{
    sqlite3_stmt *s;

    for (size_t i = 0; i < w->nn; i++) {
        int64_t carry = w->gap_before ? 0 : w->v_prev[i];
        if (!put_row(db, w->ids[i], w->at, w->v_new[i], carry, w->row_at[i], w->v_old[i], error))
            return false;
        if (w->has_next && !put_row(db, w->ids[i], w->next, w->v_next[i], w->gap_after ? 0 : w->v_new[i],
                                    w->row_next[i], w->v_next[i], error))
            return false;
    }
    for (size_t i = 0; !w->has_next && i < w->nn; i++) {
        if (w->wn[i].cur == w->v_new[i])
            continue;
        if (!(s = tsdb_stmt(db, S_NODE_SET_CUR, error)))
            return false;
        sqlite3_bind_int64(s, 1, w->ids[i]);
        if (w->v_new[i])
            sqlite3_bind_int64(s, 2, w->v_new[i]);
        if (!tsdb_step_done(db, s, "writing nodes", error))
            return false;
    }
    return true;
}

/* The snapshot row and the total rows at `at` and at the next snapshot. */
static bool write_totals(sa_tsdb_t *db, wsnap_t *w, sa_error_t *error)
{
    totv_t empty = {0};
    sqlite3_stmt *s;

    if (!(s = tsdb_stmt(db, S_SNAP_PUT, error)))
        return false;
    sqlite3_bind_int64(s, 1, w->cid);
    sqlite3_bind_int64(s, 2, w->at);
    sqlite3_bind_int64(s, 3, (int64_t)w->n);
    if (!tsdb_step_done(db, s, "writing the snapshot", error) ||
        !tsdb_compute_totals(db, w->v_new, w->nn, &w->t_new, &w->g_new, error))
        return false;
    if (w->has_prev && !w->gap_before &&
        !tsdb_compute_totals(db, w->v_prev, w->nn, &w->t_prev, &w->g_prev, error))
        return false;
    if (w->exists && !delete_total_rows(db, w->cid, w->at, error))
        return false;
    if (!write_total_rows(db, w->cid, w->at, &w->t_new, &w->t_prev, false, error) ||
        !write_total_rows(db, w->cid, w->at, &w->g_new, &w->g_prev, true, error))
        return false;
    if (!w->has_next)
        return true;
    return tsdb_compute_totals(db, w->v_next, w->nn, &w->t_next, &w->g_next, error) &&
           delete_total_rows(db, w->cid, w->next, error) &&
           write_total_rows(db, w->cid, w->next, &w->t_next, w->gap_after ? &empty : &w->t_new, false, error) &&
           write_total_rows(db, w->cid, w->next, &w->g_next, w->gap_after ? &empty : &w->g_new, true, error);
}

bool sa_tsdb_write_snapshot(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                            const sa_tsdb_opts_t *opts, sa_error_t *error)
{
    sa_tsdb_opts_t defaults;
    wsnap_t w;
    int64_t max_gap;
    bool ok = false, in_txn = false, same;
    char q[80], tbuf[32];

    if (!opts) {
        sa_tsdb_opts_init(&defaults);
        opts = &defaults;
    }
    max_gap = opts->max_gap_s > 0 ? opts->max_gap_s : SA_TSDB_DEFAULT_MAX_GAP_S;
    if (at == SA_UNSET || at == SA_INFINITE) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "snapshot time not set");
        return false;
    }
    memset(&w, 0, sizeof w);
    w.at = at;
    sa_time_format(at, tbuf, sizeof tbuf);
    snprintf(db->ctx, sizeof db->ctx, "snapshot of %s at %s", sa_error_quote(cluster ? cluster : "", 64, q, sizeof q),
             tbuf);
    if (!sort_input(db, &w, nodes, n, error) || !begin_write(db, error))
        goto done;
    in_txn = true;
    if (!tsdb_cluster_id(db, cluster, true, &w.cid, error) || !neighbours(db, &w, max_gap, error) ||
        !merge_nodes(db, &w, error) || !new_attrs(db, &w, error) || !decode_around(db, &w, error))
        goto done;
    /* the same snapshot again changes nothing (its sdiag figures are still stored) */
    same = w.exists && memcmp(w.v_old, w.v_new, w.nn * sizeof *w.v_new) == 0;
    if (!same && (!write_gaps(db, &w, error) || !write_rows(db, &w, error) || !write_totals(db, &w, error)))
        goto done;
    if (opts->sdiag && !put_sdiag(db, w.cid, at, opts->sdiag, error))
        goto done;
    SA_FAULT_POINT("tsdb-commit");
    if (!tsdb_exec(db, "COMMIT", "committing", error))
        goto done;
    in_txn = false;
    ok = true;
done:
    if (in_txn)
        tsdb_rollback(db);
    db->ctx[0] = '\0';
    wsnap_clear(&w);
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

