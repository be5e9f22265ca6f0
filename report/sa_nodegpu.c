/*
 * sa_nodegpu.c - GPU types of nodes from the time series (see sa_nodegpu.h).
 *
 * The snapshot times of the cluster are read once (sa_tsdb_snapshot_times); each
 * snapshot used is loaded once with sa_tsdb_nodes_at() into a node -> type map,
 * and the last few maps are kept (runs are met in no particular order, but most
 * untyped runs of a month fall on a few snapshots only when the series is sparse;
 * with a dense series the maps are small and cheap to rebuild).
 */
#include "sa_nodegpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_hostlist.h"
#include "sa_rutil.h"
#include "sa_vec.h"

/* ---- hostlist expansion --------------------------------------------------------- */

/* sa_hostlist_expand() (schema/), failing without a message; "" and max 0 fail. */
bool sa_rhostlist_expand(const char *expr, size_t max, sa_strv_t *out)
{
    return expr && *expr && max && sa_hostlist_expand(expr, max, out, NULL);
}

/* ---- the resolver ------------------------------------------------------------------ */

#define MAPS 4 /* snapshot maps kept */

typedef struct {
    int64_t at;      /* SA_UNSET: unused slot */
    sa_rintern_t names;
    uint32_t *type;  /* node id -> type id in r->types, or NONE/MULTI */
    size_t cap;
} snapmap_t;

#define TYPE_NONE UINT32_MAX        /* no GPU, or only untyped GPUs */
#define TYPE_MULTI (UINT32_MAX - 1) /* several GPU types */

struct sa_nodegpu {
    sa_tsdb_t *db;
    char *cluster;
    int64_t *snaps; /* snapshot times, ascending */
    size_t nsnaps;
    bool loaded;
    sa_rintern_t types;
    snapmap_t maps[MAPS];
    unsigned next_map;
    sa_strv_t scratch;
};

sa_nodegpu_t *sa_nodegpu_new(sa_tsdb_t *db, const char *cluster)
{
    sa_nodegpu_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->db = db;
    r->cluster = strdup(cluster);
    sa_rintern_init(&r->types);
    for (int i = 0; i < MAPS; i++) {
        r->maps[i].at = SA_UNSET;
        sa_rintern_init(&r->maps[i].names);
    }
    sa_strv_init(&r->scratch);
    return r;
}

void sa_nodegpu_free(sa_nodegpu_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < MAPS; i++) {
        sa_rintern_clear(&r->maps[i].names);
        free(r->maps[i].type);
    }
    sa_rintern_clear(&r->types);
    sa_strv_clear(&r->scratch);
    free(r->snaps);
    free(r->cluster);
    free(r);
}

/* Reads the cluster's snapshot times once. */
static bool load_snaps(sa_nodegpu_t *r, sa_error_t *error)
{
    r->loaded = true;
    return sa_tsdb_snapshot_times(r->db, r->cluster, INT64_MIN, INT64_MAX, &r->snaps, &r->nsnaps, error);
}

/* The snapshot to use for a run [start, end): the last at or before start, else the first before end. */
static int64_t pick_snapshot(const sa_nodegpu_t *r, int64_t start, int64_t end)
{
    size_t lo = 0, hi = r->nsnaps;
    while (lo < hi) { /* first index with snaps[i] > start */
        size_t mid = (lo + hi) / 2;
        if (r->snaps[mid] <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0)
        return r->snaps[lo - 1];
    if (lo < r->nsnaps && r->snaps[lo] < end)
        return r->snaps[lo];
    return SA_UNSET;
}

typedef struct {
    sa_nodegpu_t *r;
    snapmap_t *m;
} fill_ctx_t;

/* sa_tsdb_nodes_at callback: records the node's single GPU type. */
static bool fill_node(const sa_tsdb_node_t *node, void *vctx, sa_error_t *error)
{
    fill_ctx_t *ctx = vctx;
    snapmap_t *m = ctx->m;
    uint32_t id = sa_rintern(&m->names, node->name), type = TYPE_NONE;

    if (id == UINT32_MAX) {
        sa_error_nomem(error);
        return false;
    }
    for (size_t i = 0; i < node->ngpus; i++) {
        uint32_t t;
        if (!node->gpus[i].type || !node->gpus[i].type[0] || node->gpus[i].total <= 0)
            continue; /* untyped GPUs say nothing about the type */
        t = sa_rintern(&ctx->r->types, node->gpus[i].type);
        if (t == UINT32_MAX) {
            sa_error_nomem(error);
            return false;
        }
        type = type == TYPE_NONE || type == t ? t : TYPE_MULTI;
    }
    if (id >= m->cap) {
        size_t cap = m->cap;
        if (!SA_VEC_GROW(m->type, m->cap, cap, (size_t)id + 1 - cap, 256))
            return sa_error_nomem(error);
    }
    m->type[id] = type;
    return true;
}

/* The node map of snapshot `at`, loading it into the oldest slot when not kept. */
static snapmap_t *get_map(sa_nodegpu_t *r, int64_t at, sa_error_t *error)
{
    snapmap_t *m;
    fill_ctx_t ctx;

    for (int i = 0; i < MAPS; i++) {
        if (r->maps[i].at == at)
            return &r->maps[i];
    }
    m = &r->maps[r->next_map++ % MAPS];
    sa_rintern_clear(&m->names);
    sa_rintern_init(&m->names);
    m->at = SA_UNSET;
    ctx.r = r;
    ctx.m = m;
    if (!sa_tsdb_nodes_at(r->db, r->cluster, at, fill_node, &ctx, error))
        return NULL;
    m->at = at;
    return m;
}

bool sa_nodegpu_type(sa_nodegpu_t *r, const char *hostlist, int64_t run_start, int64_t run_end,
                     const char **type, sa_error_t *error)
{
    snapmap_t *m;
    uint32_t found = TYPE_NONE;
    int64_t at;

    *type = NULL;
    if (!r || !r->db || !hostlist || !*hostlist)
        return true;
    if (!r->loaded && !load_snaps(r, error))
        return false;
    at = pick_snapshot(r, run_start, run_end);
    if (at == SA_UNSET)
        return true;
    if (!(m = get_map(r, at, error)))
        return false;
    for (size_t i = 0; i < r->scratch.n; i++)
        free(r->scratch.v[i]);
    r->scratch.n = 0;
    if (!sa_hostlist_expand(hostlist, 100000, &r->scratch, NULL))
        return true; /* a list we cannot read: no type */
    for (size_t i = 0; i < r->scratch.n; i++) {
        uint32_t id = sa_rintern_find(&m->names, r->scratch.v[i]), t;
        if (id == UINT32_MAX)
            return true; /* not in the snapshot */
        t = m->type[id];
        if (t == TYPE_NONE || t == TYPE_MULTI || (found != TYPE_NONE && t != found))
            return true;
        found = t;
    }
    if (found != TYPE_NONE)
        *type = sa_rintern_str(&r->types, found);
    return true;
}
