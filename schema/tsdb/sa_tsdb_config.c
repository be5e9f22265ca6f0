/*
 * sa_tsdb_config.c - nodes' configured GPUs observed per node, and carrying them to
 * snapshots that do not say them (a grouped `sinfo --json`): see sa_tsdb.h, "node
 * configurations", and attr.gpu_config / node_config_gpu in schema/tsdb/timeseries.sql.
 */
#include "sa_tsdb_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_hostlist.h"

/* The id of node name of cluster cid (0 when absent and !create). */
static bool node_id(sa_tsdb_t *db, int64_t cid, const char *name, bool create, int64_t *id, sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, S_NODE_GET, error);
    bool found;

    *id = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (!tsdb_step_int(db, s, id, &found, "reading nodes", error))
        return false;
    if (found || !create)
        return true;
    if (!(s = tsdb_stmt(db, S_NODE_INS, error)))
        return false;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (!tsdb_step_done(db, s, "adding a node", error))
        return false;
    *id = sqlite3_last_insert_rowid(db->conn);
    return true;
}

/* Adds one node_config_gpu row. */
static bool put_config_row(sa_tsdb_t *db, int64_t nid, int64_t at, const char *type, int64_t total,
                           sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t tid;

    if (!tsdb_dict_id(db, K_GPU_TYPE, type, true, NULL, &tid, NULL, error) || !(s = tsdb_stmt(db, S_CFG_INS, error)))
        return false;
    sqlite3_bind_int64(s, 1, nid);
    sqlite3_bind_int64(s, 2, at);
    sqlite3_bind_int64(s, 3, tid);
    sqlite3_bind_int64(s, 4, total);
    return tsdb_step_done(db, s, "recording a node configuration", error);
}

/* Replaces node's configuration record at `at`. */
static bool put_config(sa_tsdb_t *db, int64_t cid, int64_t at, const sa_node_t *node, sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t nid;
    bool any = false;

    if (!node_id(db, cid, node->name, true, &nid, error) || !(s = tsdb_stmt(db, S_CFG_DEL, error)))
        return false;
    sqlite3_bind_int64(s, 1, nid);
    sqlite3_bind_int64(s, 2, at);
    if (!tsdb_step_done(db, s, "recording a node configuration", error))
        return false;
    for (size_t i = 0; i < node->gpus_total.n; i++) {
        if (node->gpus_total.v[i].count <= 0)
            continue;
        if (!put_config_row(db, nid, at, node->gpus_total.v[i].type ? node->gpus_total.v[i].type : "",
                            node->gpus_total.v[i].count, error))
            return false;
        any = true;
    }
    return any || put_config_row(db, nid, at, "", 0, error); /* no GPUs */
}

bool sa_tsdb_write_node_config(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                               sa_error_t *error)
{
    char q[80], tbuf[32];
    int64_t cid;
    bool ok = false;

    snprintf(db->ctx, sizeof db->ctx, "node configuration of %s at %s",
             sa_error_quote(cluster ? cluster : "", 64, q, sizeof q), sa_time_format(at, tbuf, sizeof tbuf));
    if (db->readonly) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "opened read-only");
        goto done;
    }
    if (!tsdb_exec(db, "BEGIN IMMEDIATE", "starting a write", error))
        goto done;
    if (!tsdb_cluster_id(db, cluster, true, &cid, error))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (nodes[i]->name && nodes[i]->gpu_config == SA_NODE_GPUS_OBSERVED && !put_config(db, cid, at, nodes[i], error))
            goto fail;
    }
    if (!tsdb_exec(db, "COMMIT", "committing", error))
        goto fail;
    ok = true;
    goto done;
fail:
    tsdb_rollback(db);
done:
    db->ctx[0] = '\0';
    return ok;
}

/* A candidate observation: when, and the interval's attribute set (0: a node_config_gpu record). */
typedef struct {
    int64_t at, attr_id;
    bool found;
} cand_t;

/*
 * The node's latest observation from the intervals (iv: those that start before `at`) or
 * the records (at or before `at`). Never a later one: what a snapshot lands as must not
 * depend on what was landed after it (a replay into the same time series, or a replay
 * killed halfway and run again, then gives what one clean replay gives).
 */
static bool find_cand_dir(sa_tsdb_t *db, int64_t nid, int64_t at, bool iv, bool after, cand_t *c, sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, after ? (iv ? S_CFG_IV_AFTER : S_CFG_AFTER) : (iv ? S_CFG_IV_BEFORE : S_CFG_BEFORE),
                                error);
    int rc;

    c->found = false;
    c->attr_id = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, nid);
    sqlite3_bind_int64(s, 2, at);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
        c->found = true;
        c->at = sqlite3_column_int64(s, 0);
        if (iv)
            c->attr_id = sqlite3_column_int64(s, 1);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading node configurations", error);
        return false;
    }
    return true;
}

static bool find_cand(sa_tsdb_t *db, int64_t nid, int64_t at, bool iv, cand_t *c, sa_error_t *error)
{
    return find_cand_dir(db, nid, at, iv, false, c, error);
}

/*
 * Sets node's carried GPUs from candidate c: an interval observed per node, or one
 * carried before (the same totals), or a record of sa_tsdb_write_node_config.
 */
static bool carry_from(sa_tsdb_t *db, int64_t nid, const cand_t *c, sa_node_t *node, sa_error_t *error)
{
    sa_gpus_clear(&node->gpus_total);
    sa_gpus_init(&node->gpus_total);
    if (c->attr_id) {
        const attr_t *a = tsdb_attr_get(db, c->attr_id, error);
        if (!a)
            return false;
        for (size_t g = 0; g < a->ngpus; g++) {
            const char *type = tsdb_dict_name(db, K_GPU_TYPE, a->gpus[g].type_id, error);
            if (!type)
                return false;
            if (a->gpus[g].total > 0 && !sa_gpus_set(&node->gpus_total, type, a->gpus[g].total))
                goto nomem;
        }
    } else {
        sqlite3_stmt *s = tsdb_stmt(db, S_CFG_GPUS, error);
        int rc;
        if (!s)
            return false;
        sqlite3_bind_int64(s, 1, nid);
        sqlite3_bind_int64(s, 2, c->at);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            int64_t tid = sqlite3_column_int64(s, 0), total = sqlite3_column_int64(s, 1);
            const char *type = tsdb_dict_name(db, K_GPU_TYPE, tid, error);
            if (!type || !sa_gpus_set(&node->gpus_total, type, total)) {
                sqlite3_reset(s);
                if (type)
                    goto nomem;
                return false;
            }
        }
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) {
            tsdb_sql_err(db, rc, "reading node configurations", error);
            return false;
        }
    }
    node->gpu_config = SA_NODE_GPUS_CARRIED;
    node->gpu_config_at = c->at;
    return true;
nomem:
    tsdb_oom(db, error);
    return false;
}

/* Carries one node's configuration, when one was observed before `at`. */
static bool carry_node(sa_tsdb_t *db, int64_t cid, int64_t at, sa_node_t *node, sa_error_t *error)
{
    cand_t iv, rec;
    const cand_t *best;
    int64_t nid;

    if (!node_id(db, cid, node->name, false, &nid, error))
        return false;
    if (!nid)
        return true;
    if (!find_cand(db, nid, at, true, &iv, error) || !find_cand(db, nid, at, false, &rec, error))
        return false;
    if (iv.found && rec.found) /* the later one; an interval when both are at the same time */
        best = iv.at >= rec.at ? &iv : &rec;
    else
        best = iv.found ? &iv : rec.found ? &rec : NULL;
    return !best || carry_from(db, nid, best, node, error);
}

bool sa_tsdb_carry_gpu_config(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t *const *nodes, size_t n,
                              size_t *unknown, sa_error_t *error)
{
    int64_t cid;
    size_t left = 0;
    bool ok = false;

    if (unknown)
        *unknown = 0;
    for (size_t i = 0; i < n; i++)
        left += nodes[i]->gpu_config == SA_NODE_GPUS_UNKNOWN;
    if (!left) {
        ok = true;
        goto done;
    }
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    for (size_t i = 0; cid && i < n; i++) {
        if (nodes[i]->gpu_config == SA_NODE_GPUS_UNKNOWN && nodes[i]->name &&
            !carry_node(db, cid, at, nodes[i], error))
            goto end;
    }
    left = 0;
    for (size_t i = 0; i < n; i++)
        left += nodes[i]->gpu_config == SA_NODE_GPUS_UNKNOWN;
    ok = true;
end:
    tsdb_end_read(db);
done:
    if (unknown)
        *unknown = left;
    return ok;
}

/* ---- a run's GPU type from its nodes ------------------------------------------------------- */

/*
 * The snapshot for a run [start, end) observed at `until`: the last at or before start,
 * else the first before end; never one after `until` (SA_UNSET: no bound). *at SA_UNSET
 * when none.
 */
static bool run_snapshot(sa_tsdb_t *db, int64_t cid, int64_t start, int64_t end, int64_t until, int64_t *at,
                         sa_error_t *error)
{
    int64_t last = until != SA_UNSET && until < start ? until : start;
    sqlite3_stmt *s;
    bool found;

    *at = SA_UNSET;
    for (int k = 0; k < 2; k++) {
        if (!(s = tsdb_stmt(db, k ? S_SNAP_NEXT : S_SNAP_PREV, error)))
            return false;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, k ? start : last == INT64_MAX ? last : last + 1); /* PREV: at < last + 1 */
        if (!tsdb_step_int(db, s, at, &found, "reading snapshots", error))
            return false;
        if (found && (k == 0 || ((end == SA_UNSET || *at < end) && (until == SA_UNSET || *at <= until))))
            return true;
        *at = SA_UNSET;
    }
    return true;
}

/* The single GPU type of the nodes ids[0..n) at snapshot at: *type_id 0 when none; *carried when any was. */
/*
 * The single GPU type of node nid's nearest per-node observation at or after `at` (an
 * interval, or a record of sa_tsdb_write_node_config; the earlier of the two): *t 0 when
 * none was observed, -1 when several types or none.
 */
static bool later_type(sa_tsdb_t *db, int64_t nid, int64_t at, int64_t *t, sa_error_t *error)
{
    cand_t iv, rec;
    const cand_t *best;
    sa_node_t node;
    bool ok;

    *t = 0;
    if (!find_cand_dir(db, nid, at, true, true, &iv, error) || !find_cand_dir(db, nid, at, false, true, &rec, error))
        return false;
    if (iv.found && rec.found)
        best = iv.at <= rec.at ? &iv : &rec;
    else
        best = iv.found ? &iv : rec.found ? &rec : NULL;
    if (!best)
        return true;
    memset(&node, 0, sizeof node);
    sa_gpus_init(&node.gpus_total);
    ok = carry_from(db, nid, best, &node, error);
    for (size_t g = 0; ok && g < node.gpus_total.n; g++) {
        const char *type = node.gpus_total.v[g].type;
        int64_t tid;
        if (!type || !*type || node.gpus_total.v[g].count <= 0)
            continue;
        if (!(ok = tsdb_dict_id(db, K_GPU_TYPE, type, false, NULL, &tid, NULL, error)))
            break;
        *t = *t == 0 || *t == tid ? tid : -1;
    }
    if (ok && *t == 0)
        *t = -1; /* observed, without a type */
    sa_gpus_clear(&node.gpus_total);
    return ok;
}

static bool nodes_type(sa_tsdb_t *db, int64_t cid, const int64_t *ids, size_t n, int64_t at, bool later,
                       int64_t *type_id, bool *carried, bool *cfg_unknown, sa_error_t *error)
{
    int64_t *vals = calloc(n ? n : 1, sizeof *vals);
    bool ok = false;

    *type_id = 0;
    *carried = false;
    if (cfg_unknown)
        *cfg_unknown = false;
    if (!vals) {
        tsdb_oom(db, error);
        return false;
    }
    if (!tsdb_decode_at(db, cid, ids, n, at, vals, NULL, NULL, error))
        goto done;
    ok = true;
    for (size_t i = 0; i < n; i++) {
        const attr_t *a;
        int64_t t = 0;
        if (!vals[i] || !(a = tsdb_attr_get(db, vals[i], error))) {
            ok = vals[i] == 0; /* absent: no type; else a database error */
            *type_id = 0;
            goto done;
        }
        if (a->gpu_config == SA_NODE_GPUS_UNKNOWN && later) {
            /* its GPUs unknown then (grouped sinfo): the nearest later per-node observation */
            if (!later_type(db, ids[i], at, &t, error)) {
                ok = false;
                goto done;
            }
            if (t == 0)
                *cfg_unknown = true;
            if (t <= 0 || (*type_id && *type_id != t)) {
                *type_id = 0;
                goto done;
            }
            *type_id = t;
            *carried = true;
            continue;
        }
        for (size_t g = 0; g < a->ngpus; g++) {
            const char *name = tsdb_dict_name(db, K_GPU_TYPE, a->gpus[g].type_id, error);
            if (!name) {
                ok = false;
                goto done;
            }
            if (!*name || a->gpus[g].total <= 0)
                continue; /* untyped GPUs say nothing about the type */
            t = t == 0 || t == a->gpus[g].type_id ? a->gpus[g].type_id : -1;
        }
        if (t <= 0 || (*type_id && *type_id != t)) { /* none, several, or differing between nodes */
            *type_id = 0;
            goto done;
        }
        *type_id = t;
        *carried = *carried || a->gpu_config == SA_NODE_GPUS_CARRIED;
    }
done:
    free(vals);
    return ok;
}

static bool run_gpu_type(sa_tsdb_t *db, const char *cluster, const char *hostlist, int64_t start, int64_t end,
                         int64_t until, bool later, char **type, int *source, bool *cfg_unknown, sa_error_t *error)
{
    sa_strv_t names;
    int64_t cid, at, *ids = NULL, tid = 0;
    bool carried = false, ok = false;

    *type = NULL;
    *source = SA_RUN_GPU_TYPE_UNKNOWN;
    if (!hostlist || !*hostlist || start == SA_UNSET)
        return true;
    sa_strv_init(&names);
    if (!sa_hostlist_expand(hostlist, 100000, &names, NULL) || names.n == 0) {
        sa_strv_clear(&names);
        return true; /* a list we cannot read: no type */
    }
    if (!tsdb_begin_read(db, cluster, &cid, error)) {
        sa_strv_clear(&names);
        return false;
    }
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!run_snapshot(db, cid, start, end, until, &at, error))
        goto done;
    if (at == SA_UNSET) {
        ok = true;
        goto done;
    }
    if (!(ids = calloc(names.n, sizeof *ids))) {
        tsdb_oom(db, error);
        goto done;
    }
    for (size_t i = 0; i < names.n; i++) {
        if (!node_id(db, cid, names.v[i], false, &ids[i], error))
            goto done;
        if (!ids[i]) { /* a node the series never saw */
            ok = true;
            goto done;
        }
    }
    if (!nodes_type(db, cid, ids, names.n, at, later, &tid, &carried, cfg_unknown, error))
        goto done;
    if (tid > 0) {
        const char *name = tsdb_dict_name(db, K_GPU_TYPE, tid, error);
        if (!name || !(*type = strdup(name))) {
            if (name)
                tsdb_oom(db, error);
            goto done;
        }
        *source = carried ? SA_RUN_GPU_TYPE_CARRIED : SA_RUN_GPU_TYPE_NODE;
    }
    ok = true;
done:
    tsdb_end_read(db);
    free(ids);
    sa_strv_clear(&names);
    return ok;
}

bool sa_tsdb_run_gpu_type(sa_tsdb_t *db, const char *cluster, const char *hostlist, int64_t start, int64_t end,
                          int64_t until, char **type, int *source, sa_error_t *error)
{
    return run_gpu_type(db, cluster, hostlist, start, end, until, false, type, source, NULL, error);
}

bool sa_tsdb_run_gpu_type_later(sa_tsdb_t *db, const char *cluster, const char *hostlist, int64_t start, int64_t end,
                                char **type, int *source, bool *cfg_unknown, sa_error_t *error)
{
    *cfg_unknown = false;
    return run_gpu_type(db, cluster, hostlist, start, end, SA_UNSET, true, type, source, cfg_unknown, error);
}
