/*
 * sa_tsdb_read.c - the read API of the time series (sa_tsdb.h): snapshots, gaps
 * and coverage, node/CPU/GPU hours by exact state and grouping, the nodes of a
 * snapshot, scheduler statistics. Every call is one read transaction.
 */
#include "sa_tsdb_private.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sa_tsdb_last_snapshot(sa_tsdb_t *db, const char *cluster, int64_t *at, sa_error_t *error)
{
    int64_t cid;
    bool found, ok = false;
    sqlite3_stmt *s;

    *at = SA_UNSET;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (cid) {
        if (!(s = tsdb_stmt(db, S_SNAP_LATEST, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        if (!tsdb_step_int(db, s, at, &found, "reading snapshots", error))
            goto done;
        if (!found)
            *at = SA_UNSET;
    }
    ok = true;
done:
    tsdb_end_read(db);
    return ok;
}

bool sa_tsdb_gap_seconds(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t *secs,
                         sa_error_t *error)
{
    int64_t cid;
    span_t *g = NULL;
    size_t ng = 0;
    bool ok = false;

    *secs = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (cid && to > from) {
        if (!tsdb_load_gaps(db, cid, true, from, to, &g, &ng, error))
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
    tsdb_end_read(db);
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
    uint64_t key = tsdb_fnv(tsdb_fnv(FNV_INIT, &group, sizeof group), &state_id, sizeof state_id) ^ (uint64_t)has_group;
    u64ent_t *e = tsdb_u64map_get(&l->index, key);

    /* verify: the key is a hash of the pair, collisions are resolved by probing on */
    while (e && e->ival) {
        hacc_t *h = &l->v[e->ival - 1];
        if (h->group == group && h->state_id == state_id && h->has_group == has_group)
            return h;
        key = tsdb_mix64(key + 1);
        e = tsdb_u64map_get(&l->index, key);
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        hacc_t *nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    if (!(e = tsdb_u64map_put(&l->index, key)))
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
    h->cpu_s[0] += tsdb_known(a->cpus_total) * d;
    h->cpu_s[1] += tsdb_known(a->cpus_alloc) * d;
    h->cpu_s[2] += tsdb_known(a->cpus_idle) * d;
    h->cpu_s[3] += tsdb_known(a->cpus_other) * d;
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

    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid || to <= from) {
        ok = true;
        goto done;
    }
    if (!(s = tsdb_stmt(db, S_SNAP_LATEST, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    if (!tsdb_step_int(db, s, &latest, &found, "reading snapshots", error))
        goto done;
    if (!found) {
        ok = true;
        goto done;
    }
    if (!tsdb_load_gaps(db, cid, false, 0, 0, &gaps, &ng, error) || !tsdb_load_nodes(db, cid, &wn, &nn, 0, &names, error))
        goto done;

    for (size_t i = 0; i < nn; i++) {
        size_t nr = 0;
        int rc;
        if (!(s = tsdb_stmt(db, S_IV_WINDOW, error)))
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
                    tsdb_oom(db, error);
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
            tsdb_sql_err(db, rc, "reading intervals", error);
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
            if (!(a = tsdb_attr_get(db, ra[r], error)))
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
        if (!(h->sname = tsdb_dict_name(db, K_STATE, h->state_id, error)))
            goto done;
        h->gname = NULL;
        if (!h->has_group)
            continue;
        if (group_by == SA_TSDB_BY_NODE)
            h->gname = wn[h->group].name;
        else if (!(h->gname = tsdb_dict_name(db, group_by == SA_TSDB_BY_PARTITION ? K_PARTITION : K_GPU_TYPE, h->group,
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
    tsdb_oom(db, error);
done:
    tsdb_end_read(db);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(gaps);
    free(rs);
    free(ra);
    free(acc.v);
    tsdb_u64map_clear(&acc.index, NULL);
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

    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    found = false;
    if (cid) {
        if (!(s = tsdb_stmt(db, S_SNAP_GET, error)))
            goto done;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, at);
        if (!tsdb_step_int(db, s, &dummy, &found, "reading snapshots", error))
            goto done;
    }
    if (!found) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "cluster %s has no snapshot at %s",
                 sa_error_quote(cluster, 64, q, sizeof q), sa_time_format(at, tbuf, sizeof tbuf));
        goto done;
    }
    if (!tsdb_load_nodes(db, cid, &wn, &nn, 0, &names, error))
        goto done;
    if (nn && (!(ids = calloc(nn, sizeof *ids)) || !(vals = calloc(nn, sizeof *vals)) ||
               !(starts = calloc(nn, sizeof *starts)))) {
        tsdb_oom(db, error);
        goto done;
    }
    for (size_t i = 0; i < nn; i++)
        ids[i] = wn[i].id;
    if (!tsdb_decode_at(db, cid, ids, nn, at, vals, NULL, starts, error))
        goto done;
    for (size_t i = 0; i < nn; i++) {
        const attr_t *a;
        sa_tsdb_node_t node;
        const char *state;
        if (!vals[i])
            continue;
        if (!(a = tsdb_attr_get(db, vals[i], error)) || !(state = tsdb_dict_name(db, K_STATE, a->state_id, error)))
            goto done;
        memset(&node, 0, sizeof node);
        node.name = wn[i].name;
        node.state = state;
        if (!(b = tsdb_stmt(db, S_STATE_PARTS, error)))
            goto done;
        sqlite3_bind_int64(b, 1, a->state_id);
        rc = sqlite3_step(b);
        if (rc != SQLITE_ROW) {
            sqlite3_reset(b);
            tsdb_sql_err(db, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading states", error);
            goto done;
        }
        snprintf(base, sizeof base, "%s",
                 sqlite3_column_type(b, 0) == SQLITE_NULL ? "" : (const char *)sqlite3_column_text(b, 0));
        node.base = sqlite3_column_type(b, 0) == SQLITE_NULL ? NULL : base;
        snprintf(flags, sizeof flags, "%s", (const char *)sqlite3_column_text(b, 1));
        node.flags = flags;
        sqlite3_reset(b);
        if (a->reason_id && !(node.reason = tsdb_dict_name(db, K_REASON, a->reason_id, error)))
            goto done;
        if (!(node.partitions = tsdb_dict_name(db, K_PARTSET, a->partset_id, error)))
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
            tsdb_oom(db, error);
            goto done;
        }
        for (size_t g = 0; g < a->ngpus; g++) {
            if (!(gpus[g].type = tsdb_dict_name(db, K_GPU_TYPE, a->gpus[g].type_id, error)))
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
    tsdb_end_read(db);
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

    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!(s = tsdb_stmt(db, S_SCHED_RANGE, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, from);
    sqlite3_bind_int64(s, 3, to);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sa_sdiag_t sd;
        int i = 1;
        sa_sdiag_init(&sd);
#define SDIAG_COL_(name, kind) sd.name = tsdb_col_opt(s, i++);
        SA_SDIAG_FIELDS(SDIAG_COL_)
#undef SDIAG_COL_
        if (!cb(sqlite3_column_int64(s, 0), &sd, ctx, error)) {
            sqlite3_reset(s);
            goto done;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading scheduler statistics", error);
        goto done;
    }
    ok = true;
done:
    tsdb_end_read(db);
    return ok;
}

