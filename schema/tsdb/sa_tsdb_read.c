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

#include "sa_vec.h"

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

/* Seconds of recorded gaps of cluster cid within [from, to), in a read transaction. */
static bool window_gaps(sa_tsdb_t *db, int64_t cid, int64_t from, int64_t to, int64_t *secs, sa_error_t *error)
{
    span_t *g = NULL;
    size_t ng = 0;

    *secs = 0;
    if (!cid || to <= from)
        return true;
    if (!tsdb_load_gaps(db, cid, true, from, to, &g, &ng, error))
        return false;
    for (size_t i = 0; i < ng; i++) {
        int64_t a = g[i].start > from ? g[i].start : from, b = g[i].end < to ? g[i].end : to;
        if (b > a)
            *secs += b - a;
    }
    free(g);
    return true;
}

bool sa_tsdb_gap_seconds(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t *secs,
                         sa_error_t *error)
{
    int64_t cid;
    bool ok;

    *secs = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    ok = window_gaps(db, cid, from, to, secs, error);
    tsdb_end_read(db);
    return ok;
}

bool sa_tsdb_clusters(sa_tsdb_t *db, sa_strv_t *out, sa_error_t *error)
{
    sqlite3_stmt *s;
    bool ok = false;
    int rc;

    if (!tsdb_exec(db, "BEGIN", "starting a read", error))
        return false;
    if (!(s = tsdb_stmt(db, S_CLUSTERS, error)))
        goto done;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!sa_strv_push(out, (const char *)sqlite3_column_text(s, 0))) {
            sqlite3_reset(s);
            tsdb_oom(db, error);
            goto done;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading clusters", error);
        goto done;
    }
    ok = true;
done:
    tsdb_end_read(db);
    return ok;
}

bool sa_tsdb_snapshot_times(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t **ats, size_t *n,
                            sa_error_t *error)
{
    int64_t cid;
    bool ok;

    *ats = NULL;
    *n = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    ok = !cid || tsdb_load_snapshots(db, cid, from, to, ats, n, error);
    tsdb_end_read(db);
    return ok;
}

/* The cluster's first and latest snapshot times (SA_UNSET when none), in a read transaction. */
static bool first_last(sa_tsdb_t *db, int64_t cid, int64_t *first, int64_t *last, sa_error_t *error)
{
    sqlite3_stmt *s;
    bool found;

    *first = *last = SA_UNSET;
    for (int k = 0; cid && k < 2; k++) {
        int64_t *out = k ? last : first;
        if (!(s = tsdb_stmt(db, k ? S_SNAP_LATEST : S_SNAP_FIRST, error)))
            return false;
        sqlite3_bind_int64(s, 1, cid);
        if (!tsdb_step_int(db, s, out, &found, "reading snapshots", error))
            return false;
        if (!found)
            *out = SA_UNSET;
    }
    return true;
}

bool sa_tsdb_coverage(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_coverage_t *c,
                      sa_error_t *error)
{
    int64_t cid;
    bool ok = false;

    memset(c, 0, sizeof *c);
    c->window_s = to > from ? to - from : 0;
    c->first = c->last = SA_UNSET;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!first_last(db, cid, &c->first, &c->last, error) || !window_gaps(db, cid, from, to, &c->gap_s, error))
        goto done;
    /* time before the first and after the last snapshot is unknown too */
    if (c->first == SA_UNSET || c->last == SA_UNSET) {
        c->before_s = c->window_s;
    } else if (to > from) {
        int64_t b = c->first < to ? c->first : to, a = c->last > from ? c->last : from;
        c->before_s = b > from ? b - from : 0;
        c->after_s = a < to ? to - a : 0;
        if (c->before_s + c->after_s > c->window_s) /* the series is outside the window */
            c->after_s = c->window_s - c->before_s;
    }
    c->known_s = c->window_s - c->gap_s - c->before_s - c->after_s;
    ok = true;
done:
    tsdb_end_read(db);
    return ok;
}

bool sa_tsdb_known_spans(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t **spans, size_t *n,
                         sa_error_t *error)
{
    int64_t cid, first, last, *v = NULL, t;
    span_t *g = NULL;
    size_t ng = 0, k = 0;
    bool ok = false;

    *spans = NULL;
    *n = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid || !first_last(db, cid, &first, &last, error) ||
        (first != SA_UNSET && !tsdb_load_gaps(db, cid, true, from, to, &g, &ng, error))) {
        ok = !cid;
        goto done;
    }
    if (first == SA_UNSET || last <= first) {
        ok = true;
        goto done;
    }
    if (first < from)
        first = from;
    if (last > to)
        last = to;
    if (!(v = calloc(2 * (ng + 1), sizeof *v))) {
        tsdb_oom(db, error);
        goto done;
    }
    t = first; /* the start of the span being read: [first, last) less the gaps, sorted by start */
    for (size_t i = 0; i <= ng; i++) {
        int64_t e = i < ng && g[i].start < last ? g[i].start : last;
        if (e > t) {
            v[2 * k] = t;
            v[2 * k + 1] = e;
            k++;
        }
        if (i < ng && g[i].end > t)
            t = g[i].end;
    }
    *spans = v;
    *n = k;
    v = NULL;
    ok = true;
done:
    tsdb_end_read(db);
    free(g);
    free(v);
    return ok;
}

/* True if a flag word is in the '+'-joined state after its base. */
static bool has_flag(const char *state, const char *flag)
{
    size_t fl = strlen(flag);
    const char *p = strchr(state, '+');
    while (p) {
        const char *q = strchr(p + 1, '+');
        size_t len = q ? (size_t)(q - p - 1) : strlen(p + 1);
        if (len == fl && strncmp(p + 1, flag, fl) == 0)
            return true;
        p = q;
    }
    return false;
}

/* True if the state's base is base. */
static bool base_is(const char *state, const char *base)
{
    size_t bl = strlen(base);
    return strncmp(state, base, bl) == 0 && (state[bl] == '\0' || state[bl] == '+');
}

sa_tsdb_free_t sa_tsdb_free_class(const char *state, double cpu_hours_total, double cpu_hours_idle,
                                  const char **reason)
{
    static const struct {
        const char *flag, *base, *why;
        sa_tsdb_free_t c;
    } rules[] = {
        {"MAINT", NULL, "maintenance", SA_TSDB_FREE_PLANNED_DOWN},
        {"MAINTENANCE", NULL, "maintenance", SA_TSDB_FREE_PLANNED_DOWN},
        {"POWERED_DOWN", NULL, "node powered down", SA_TSDB_FREE_PLANNED_DOWN},
        {NULL, "FUTURE", "node not yet in service", SA_TSDB_FREE_PLANNED_DOWN},
        {NULL, "DOWN", "node down", SA_TSDB_FREE_DOWN},
        {"FAIL", NULL, "node failing", SA_TSDB_FREE_DOWN},
        {"DRAIN", NULL, "node drained", SA_TSDB_FREE_DOWN},
        {"RESERVED", NULL, "node reserved", SA_TSDB_FREE_RESERVED},
    };
    const char *why = NULL;
    sa_tsdb_free_t c = SA_TSDB_FREE_IDLE;

    for (size_t i = 0; state && !why && i < sizeof rules / sizeof rules[0]; i++) {
        if (rules[i].flag ? has_flag(state, rules[i].flag) : base_is(state, rules[i].base)) {
            why = rules[i].why;
            c = rules[i].c;
        }
    }
    if (state && !why &&
        (base_is(state, "ALLOCATED") || (base_is(state, "MIXED") && cpu_hours_total > 0 && cpu_hours_idle <= 0))) {
        why = "no free CPU";
        c = SA_TSDB_FREE_STRANDED;
    }
    if (reason)
        *reason = why;
    return c;
}

sa_tsdb_free_t sa_tsdb_cpu_free_class(sa_tsdb_free_t c, bool other)
{
    if (c == SA_TSDB_FREE_IDLE || c == SA_TSDB_FREE_STRANDED)
        return other ? SA_TSDB_FREE_DOWN : SA_TSDB_FREE_IDLE;
    return c;
}

const char *sa_tsdb_free_name(sa_tsdb_free_t c)
{
    static const char *const names[SA_TSDB_FREE_N] = {"idle", "stranded", "down", "planned_down", "reserved"};
    return c < SA_TSDB_FREE_N ? names[c] : "idle";
}

/* Accumulated seconds of one (bucket, group, state). */
typedef struct {
    int64_t bucket; /* the bucket's index in the window */
    int64_t group;  /* node id / partition id / GPU type id / 0 */
    bool has_group;
    int64_t state_id;
    int64_t node_s, cpu_s[6], gpu_total_s, gpu_used_s; /* cpu_s: total, alloc, idle, other, split, unknown */
    int64_t mem_s[3];                                  /* MiB-seconds: total, alloc, alloc unknown */
    int64_t unknown_s, carried_s, use_unknown_s; /* gpu_config: node seconds unknown; GPU seconds carried */
    const char *gname, *sname;
} hacc_t;

typedef struct {
    hacc_t *v;
    size_t n, cap;
    u64map_t index; /* (bucket, group, state) -> position + 1 */
} hacc_list_t;

/* The accumulator of (bucket, group, state). */
static hacc_t *hacc_get(hacc_list_t *l, int64_t bucket, int64_t group, bool has_group, int64_t state_id)
{
    uint64_t key = sa_fnv1a_more(sa_fnv1a_more(sa_fnv1a_more(FNV_INIT, &bucket, sizeof bucket), &group, sizeof group),
                                 &state_id, sizeof state_id) ^
                   (uint64_t)has_group;
    u64ent_t *e = tsdb_u64map_get(&l->index, key);

    /* verify: the key is a hash of the triple, collisions are resolved by probing on */
    while (e && e->ival) {
        hacc_t *h = &l->v[e->ival - 1];
        if (h->bucket == bucket && h->group == group && h->state_id == state_id && h->has_group == has_group)
            return h;
        key = tsdb_mix64(key + 1);
        e = tsdb_u64map_get(&l->index, key);
    }
    if (!SA_VEC_GROW(l->v, l->cap, l->n, 1, 64))
        return NULL;
    if (!(e = tsdb_u64map_put(&l->index, key)))
        return NULL;
    memset(&l->v[l->n], 0, sizeof l->v[0]);
    l->v[l->n].bucket = bucket;
    l->v[l->n].group = group;
    l->v[l->n].has_group = has_group;
    l->v[l->n].state_id = state_id;
    e->ival = (int64_t)++l->n;
    return &l->v[l->n - 1];
}

/* Adds d seconds of attribute set a to accumulator h (gpu: only that type, or all when NULL). */
static void hacc_add(hacc_t *h, const attr_t *a, int64_t d, const agpu_t *gpu, bool use_unknown)
{
    h->node_s += d;
    if (a->gpu_config == SA_NODE_GPUS_UNKNOWN)
        h->unknown_s += d;
    h->cpu_s[0] += tsdb_known(a->cpus_total) * d;
    h->cpu_s[1] += tsdb_known(a->cpus_alloc) * d;
    h->cpu_s[2] += tsdb_known(a->cpus_idle) * d;
    h->cpu_s[3] += tsdb_known(a->cpus_other) * d;
    if (a->cpu_config == SA_NODE_CPUS_SPLIT)
        h->cpu_s[4] += tsdb_known(a->cpus_total) * d;
    if (a->cpus_alloc == SA_UNSET) /* how they were used, nobody said (a grouped sinfo record) */
        h->cpu_s[5] += tsdb_known(a->cpus_total) * d;
    h->mem_s[0] += tsdb_known(a->mem_total_mb) * d;
    h->mem_s[1] += tsdb_known(a->mem_alloc_mb) * d;
    if (a->mem_alloc_mb == SA_UNSET)
        h->mem_s[2] += tsdb_known(a->mem_total_mb) * d;
    for (size_t g = 0; g < a->ngpus; g++) {
        if (gpu && gpu != &a->gpus[g])
            continue;
        h->gpu_total_s += a->gpus[g].total * d;
        h->gpu_used_s += a->gpus[g].used * d;
        if (a->gpu_config == SA_NODE_GPUS_CARRIED) {
            h->carried_s += a->gpus[g].total * d;
            if (use_unknown)
                h->use_unknown_s += (a->gpus[g].total - a->gpus[g].used) * d;
        }
    }
}

/*
 * True when the GPUs in use of attribute set a are unknown: carried GPUs (no per-node
 * gres_used) on a node that may run jobs (neither IDLE nor DOWN).
 */
static bool use_unknown(sa_tsdb_t *db, const attr_t *a, sa_error_t *error, bool *out)
{
    const char *st;

    *out = false;
    if (a->gpu_config != SA_NODE_GPUS_CARRIED || a->ngpus == 0)
        return true;
    if (!(st = tsdb_dict_name(db, K_STATE, a->state_id, error)))
        return false;
    *out = !base_is(st, "IDLE") && !base_is(st, "DOWN");
    return true;
}

static int hacc_cmp(const void *x, const void *y)
{
    const hacc_t *a = x, *b = y;
    int c;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    if (!a->gname != !b->gname)
        return a->gname ? 1 : -1;
    if (a->gname && (c = strcmp(a->gname, b->gname)) != 0)
        return c;
    if (!a->gname && a->group != b->group) /* no GPUs (0) before unknown GPUs (-1) */
        return a->group == 0 ? -1 : b->group == 0 ? 1 : 0;
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

/* What sa_tsdb_state_hours() works on. */
typedef struct {
    sa_tsdb_group_t group_by;
    int64_t from, to, latest;
    int64_t bucket_s;  /* > 0: buckets aligned on the epoch; 0: the window is one */
    int64_t from0;     /* the start of the first bucket (from, floored to a bucket) */
    span_t *gaps;      /* every gap of the cluster, by start */
    size_t ng;
    wnode_t *wn;       /* the cluster's nodes, by name */
    char **names;
    size_t nn;
    int64_t *rs, *ra;  /* one node's interval rows in the window: starts, attribute sets */
    size_t nr, rcap;
    hacc_list_t acc;
} hours_t;

static void hours_clear(hours_t *h)
{
    tsdb_free_names(h->names, h->nn);
    free(h->wn);
    free(h->gaps);
    free(h->rs);
    free(h->ra);
    free(h->acc.v);
    tsdb_u64map_clear(&h->acc.index, NULL);
}

/* Reads node id's interval rows that cover [from, to) (the one open at from, then those starting before to). */
static bool window_rows(sa_tsdb_t *db, hours_t *h, int64_t node_id, sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, S_IV_WINDOW, error);
    int rc;

    h->nr = 0;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, node_id);
    sqlite3_bind_int64(s, 2, h->from);
    sqlite3_bind_int64(s, 3, h->to);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        size_t acap = h->rcap; /* rs and ra share rcap: ra grows first, on a copy */
        if (!SA_VEC_GROW(h->ra, acap, h->nr, 1, 64) || !SA_VEC_GROW(h->rs, h->rcap, h->nr, 1, 64)) {
            sqlite3_reset(s);
            tsdb_oom(db, error);
            return false;
        }
        h->rs[h->nr] = sqlite3_column_int64(s, 0);
        h->ra[h->nr] = sqlite3_column_int64(s, 1);
        h->nr++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading intervals", error);
        return false;
    }
    return true;
}

/* Adds d seconds of node i in attribute set a, in bucket k, to the accumulators of its group(s). */
static bool hours_add_in(hours_t *h, int64_t k, size_t i, const attr_t *a, int64_t d, bool uu)
{
    hacc_t *x;

    switch (h->group_by) {
    case SA_TSDB_BY_STATE:
    case SA_TSDB_BY_NODE:
        if (!(x = hacc_get(&h->acc, k, h->group_by == SA_TSDB_BY_NODE ? (int64_t)i : 0,
                           h->group_by == SA_TSDB_BY_NODE, a->state_id)))
            return false;
        hacc_add(x, a, d, NULL, uu);
        return true;
    case SA_TSDB_BY_PARTITION:
        for (size_t p = 0; p < a->nparts; p++) {
            if (!(x = hacc_get(&h->acc, k, a->parts[p], true, a->state_id)))
                return false;
            hacc_add(x, a, d, NULL, uu);
        }
        return true;
    default: /* by GPU type: nodes without GPUs under no group, those of unknown GPUs apart (-1) */
        if (a->ngpus == 0) {
            if (!(x = hacc_get(&h->acc, k, a->gpu_config == SA_NODE_GPUS_UNKNOWN ? -1 : 0, false, a->state_id)))
                return false;
            hacc_add(x, a, d, NULL, uu);
        }
        for (size_t g = 0; g < a->ngpus; g++) {
            if (!(x = hacc_get(&h->acc, k, a->gpus[g].type_id, true, a->state_id)))
                return false;
            hacc_add(x, a, d, &a->gpus[g], uu);
        }
        return true;
    }
}

/* The first bucket boundary after t (the window's end when there is one bucket). */
static int64_t bucket_end(const hours_t *h, int64_t t)
{
    int64_t e;
    if (h->bucket_s <= 0)
        return h->to;
    e = t - (t % h->bucket_s + h->bucket_s) % h->bucket_s + h->bucket_s; /* floor to the bucket, then one on */
    return e < h->to ? e : h->to;
}

/* Adds node i in attribute set a over [b, e) (within the window), cut at the bucket boundaries. */
static bool hours_add(hours_t *h, size_t i, const attr_t *a, int64_t b, int64_t e, bool uu)
{
    while (b < e) {
        int64_t be = bucket_end(h, b), k = h->bucket_s > 0 ? (b - h->from0) / h->bucket_s : 0;
        if (be > e)
            be = e;
        if (!hours_add_in(h, k, i, a, be - b, uu))
            return false;
        b = be;
    }
    return true;
}

/*
 * Accumulates node i's intervals clipped to the window. An interval ends at the
 * node's next row, the first gap after its start, or the latest snapshot.
 */
static bool hours_node(sa_tsdb_t *db, hours_t *h, size_t i, sa_error_t *error)
{
    if (!window_rows(db, h, h->wn[i].id, error))
        return false;
    for (size_t r = 0; r < h->nr; r++) {
        const attr_t *a;
        int64_t end, b, e;
        bool uu;
        if (!h->ra[r])
            continue;
        end = r + 1 < h->nr ? h->rs[r + 1] : INT64_MAX;
        b = gap_after(h->gaps, h->ng, h->rs[r]);
        if (b < end)
            end = b;
        if (h->latest < end)
            end = h->latest;
        b = h->rs[r] > h->from ? h->rs[r] : h->from;
        e = end < h->to ? end : h->to;
        if (e - b <= 0)
            continue;
        if (!(a = tsdb_attr_get(db, h->ra[r], error)) || !use_unknown(db, a, error, &uu))
            return false;
        if (!hours_add(h, i, a, b, e, uu)) {
            tsdb_oom(db, error);
            return false;
        }
    }
    return true;
}

/* Names the accumulators, sorts them by bucket, group and state and calls cb with each. */
static bool hours_emit(sa_tsdb_t *db, hours_t *h, sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error)
{
    for (size_t i = 0; i < h->acc.n; i++) {
        hacc_t *x = &h->acc.v[i];
        if (!(x->sname = tsdb_dict_name(db, K_STATE, x->state_id, error)))
            return false;
        x->gname = NULL;
        if (!x->has_group)
            continue;
        if (h->group_by == SA_TSDB_BY_NODE)
            x->gname = h->wn[x->group].name;
        else if (!(x->gname = tsdb_dict_name(db, h->group_by == SA_TSDB_BY_PARTITION ? K_PARTITION : K_GPU_TYPE,
                                             x->group, error)))
            return false;
    }
    if (h->acc.n > 1)
        qsort(h->acc.v, h->acc.n, sizeof *h->acc.v, hacc_cmp);
    for (size_t i = 0; i < h->acc.n; i++) {
        const hacc_t *x = &h->acc.v[i];
        int64_t bucket = h->from0 + x->bucket * (h->bucket_s > 0 ? h->bucket_s : 0);
        sa_tsdb_hours_t row = {
            .state = x->sname,
            .group = x->gname,
            .bucket = bucket > h->from ? bucket : h->from,
            .node_hours = x->node_s / 3600.0,
            .cpu_hours_total = x->cpu_s[0] / 3600.0,
            .cpu_hours_alloc = x->cpu_s[1] / 3600.0,
            .cpu_hours_idle = x->cpu_s[2] / 3600.0,
            .cpu_hours_other = x->cpu_s[3] / 3600.0,
            .cpu_hours_split = x->cpu_s[4] / 3600.0,
            .cpu_hours_unknown = x->cpu_s[5] / 3600.0,
            .gpu_hours_total = x->gpu_total_s / 3600.0,
            .gpu_hours_used = x->gpu_used_s / 3600.0,
            .gpu_hours_idle = (x->gpu_total_s - x->gpu_used_s - x->use_unknown_s) / 3600.0,
            .gpu_config_unknown = h->group_by == SA_TSDB_BY_GPU_TYPE && !x->has_group && x->group == -1,
            .node_hours_gpu_unknown = x->unknown_s / 3600.0,
            .gpu_hours_carried = x->carried_s / 3600.0,
            .gpu_hours_use_unknown = x->use_unknown_s / 3600.0,
            .mem_mb_hours_total = x->mem_s[0] / 3600.0,
            .mem_mb_hours_alloc = x->mem_s[1] / 3600.0,
            .mem_mb_hours_unknown = x->mem_s[2] / 3600.0,
        };
        row.free_class = sa_tsdb_free_class(row.state, row.cpu_hours_total, row.cpu_hours_idle, NULL);
        if (!cb(&row, ctx, error))
            return false;
    }
    return true;
}

bool sa_tsdb_state_hours(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_group_t group_by,
                         sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error)
{
    return sa_tsdb_state_hours_by(db, cluster, from, to, 0, group_by, cb, ctx, error);
}

bool sa_tsdb_state_hours_by(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, int64_t bucket_s,
                            sa_tsdb_group_t group_by, sa_tsdb_hours_cb cb, void *ctx, sa_error_t *error)
{
    hours_t h;
    int64_t cid;
    bool found, ok = false;
    sqlite3_stmt *s;

    memset(&h, 0, sizeof h);
    h.group_by = group_by;
    h.from = from;
    h.to = to;
    h.bucket_s = bucket_s > 0 ? bucket_s : 0;
    h.from0 = h.bucket_s ? from - ((from % h.bucket_s) + h.bucket_s) % h.bucket_s : from;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid || to <= from) {
        ok = true;
        goto done;
    }
    if (!(s = tsdb_stmt(db, S_SNAP_LATEST, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    if (!tsdb_step_int(db, s, &h.latest, &found, "reading snapshots", error))
        goto done;
    if (!found) {
        ok = true;
        goto done;
    }
    if (!tsdb_load_gaps(db, cid, false, 0, 0, &h.gaps, &h.ng, error) ||
        !tsdb_load_nodes(db, cid, &h.wn, &h.nn, 0, &h.names, error))
        goto done;
    for (size_t i = 0; i < h.nn; i++) {
        if (!hours_node(db, &h, i, error))
            goto done;
    }
    ok = hours_emit(db, &h, cb, ctx, error);
done:
    tsdb_end_read(db);
    hours_clear(&h);
    return ok;
}

/* True when cluster has a snapshot at `at`; fails naming them otherwise. */
static bool snapshot_exists(sa_tsdb_t *db, const char *cluster, int64_t cid, int64_t at, sa_error_t *error)
{
    sqlite3_stmt *s;
    int64_t dummy;
    bool found = false;
    char q[80], tbuf[32];

    if (cid) {
        if (!(s = tsdb_stmt(db, S_SNAP_GET, error)))
            return false;
        sqlite3_bind_int64(s, 1, cid);
        sqlite3_bind_int64(s, 2, at);
        if (!tsdb_step_int(db, s, &dummy, &found, "reading snapshots", error))
            return false;
    }
    if (!found)
        tsdb_err(db, error, SA_ERR_USAGE, 0, "cluster %s has no snapshot at %s",
                 sa_error_quote(cluster, 64, q, sizeof q), sa_time_format(at, tbuf, sizeof tbuf));
    return found;
}

/* Buffers a sa_tsdb_node_t points into while it is handed to the callback. */
typedef struct {
    char base[128], flags[1024];
    struct sa_tsdb_gpu *gpus;
} nodebuf_t;

/* Fills *node (name and start set by the caller) from attribute set a; strings borrowed from the caches and nb. */
static bool fill_node(sa_tsdb_t *db, const attr_t *a, sa_tsdb_node_t *node, nodebuf_t *nb, sa_error_t *error)
{
    sqlite3_stmt *b;
    int rc;

    if (!(node->state = tsdb_dict_name(db, K_STATE, a->state_id, error)) || !(b = tsdb_stmt(db, S_STATE_PARTS, error)))
        return false;
    sqlite3_bind_int64(b, 1, a->state_id);
    rc = sqlite3_step(b);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(b);
        tsdb_sql_err(db, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading states", error);
        return false;
    }
    snprintf(nb->base, sizeof nb->base, "%s",
             sqlite3_column_type(b, 0) == SQLITE_NULL ? "" : (const char *)sqlite3_column_text(b, 0));
    node->base = sqlite3_column_type(b, 0) == SQLITE_NULL ? NULL : nb->base;
    snprintf(nb->flags, sizeof nb->flags, "%s", (const char *)sqlite3_column_text(b, 1));
    node->flags = nb->flags;
    sqlite3_reset(b);
    if (a->reason_id && !(node->reason = tsdb_dict_name(db, K_REASON, a->reason_id, error)))
        return false;
    if (!(node->partitions = tsdb_dict_name(db, K_PARTSET, a->partset_id, error)))
        return false;
    node->cpus_total = a->cpus_total;
    node->cpus_alloc = a->cpus_alloc;
    node->cpus_idle = a->cpus_idle;
    node->cpus_other = a->cpus_other;
    node->mem_total_mb = a->mem_total_mb;
    node->mem_alloc_mb = a->mem_alloc_mb;
    free(nb->gpus);
    nb->gpus = NULL;
    if (a->ngpus && !(nb->gpus = calloc(a->ngpus, sizeof *nb->gpus))) {
        tsdb_oom(db, error);
        return false;
    }
    for (size_t g = 0; g < a->ngpus; g++) {
        if (!(nb->gpus[g].type = tsdb_dict_name(db, K_GPU_TYPE, a->gpus[g].type_id, error)))
            return false;
        nb->gpus[g].total = a->gpus[g].total;
        nb->gpus[g].used = a->gpus[g].used;
    }
    /* by type name (insertion sort: a node has few types) */
    for (size_t x = 1; x < a->ngpus; x++) {
        for (size_t y = x; y > 0 && strcmp(nb->gpus[y - 1].type, nb->gpus[y].type) > 0; y--) {
            struct sa_tsdb_gpu t = nb->gpus[y - 1];
            nb->gpus[y - 1] = nb->gpus[y];
            nb->gpus[y] = t;
        }
    }
    node->ngpus = a->ngpus;
    node->gpu_config = (int)a->gpu_config;
    node->cpu_config = (int)a->cpu_config;
    node->gpus = nb->gpus;
    return true;
}

bool sa_tsdb_nodes_at(sa_tsdb_t *db, const char *cluster, int64_t at, sa_tsdb_node_cb cb, void *ctx,
                      sa_error_t *error)
{
    int64_t cid;
    bool ok = false;
    wnode_t *wn = NULL;
    char **names = NULL;
    size_t nn = 0;
    int64_t *ids = NULL, *vals = NULL, *starts = NULL;
    nodebuf_t nb;

    nb.gpus = NULL;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!snapshot_exists(db, cluster, cid, at, error) || !tsdb_load_nodes(db, cid, &wn, &nn, 0, &names, error))
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
        if (!vals[i])
            continue;
        memset(&node, 0, sizeof node);
        node.name = wn[i].name;
        node.start = starts[i];
        if (!(a = tsdb_attr_get(db, vals[i], error)) || !fill_node(db, a, &node, &nb, error) ||
            !cb(&node, ctx, error))
            goto done;
    }
    ok = true;
done:
    tsdb_end_read(db);
    tsdb_free_names(names, nn);
    free(wn);
    free(ids);
    free(vals);
    free(starts);
    free(nb.gpus);
    return ok;
}

/*
 * Runs statement k with the cluster's id and a (and b when nb is 2) bound, calling row for
 * each row, in one read transaction; an unknown cluster has no rows.
 */
static bool each_row(sa_tsdb_t *db, const char *cluster, int k, int nb, int64_t a, int64_t b,
                     bool (*row)(sqlite3_stmt *s, void *ctx, sa_error_t *error), void *ctx, const char *what,
                     sa_error_t *error)
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
    if (!(s = tsdb_stmt(db, k, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    sqlite3_bind_int64(s, 2, a);
    if (nb == 2)
        sqlite3_bind_int64(s, 3, b);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!row(s, ctx, error)) {
            sqlite3_reset(s);
            goto done;
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, what, error);
        goto done;
    }
    ok = true;
done:
    tsdb_end_read(db);
    return ok;
}

typedef struct {
    sa_tsdb_sdiag_cb cb;
    sa_tsdb_rpc_cb rpc_cb;
    void *ctx;
    sa_tsdb_t *db;
} sched_rows_t;

static bool sdiag_row(sqlite3_stmt *s, void *vctx, sa_error_t *error)
{
    sched_rows_t *c = vctx;
    sa_sdiag_t sd;
    int i = 1;

    sa_sdiag_init(&sd);
#define SDIAG_COL_(name, kind) sd.name = tsdb_col_opt(s, i++);
    SA_SDIAG_FIELDS(SDIAG_COL_)
#undef SDIAG_COL_
    return c->cb(sqlite3_column_int64(s, 0), &sd, c->ctx, error);
}

bool sa_tsdb_sdiag_range(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_sdiag_cb cb,
                         void *ctx, sa_error_t *error)
{
    sched_rows_t c = {cb, NULL, ctx, db};
    return each_row(db, cluster, S_SCHED_RANGE, 2, from, to, sdiag_row, &c, "reading scheduler statistics", error);
}

static bool rpc_row(sqlite3_stmt *s, void *vctx, sa_error_t *error)
{
    sched_rows_t *c = vctx;
    sa_sdiag_rpc_t r = {sqlite3_column_int(s, 0) ? SA_SDIAG_RPC_USER : SA_SDIAG_RPC_TYPE,
                        (char *)sqlite3_column_text(s, 1), sqlite3_column_int64(s, 2), tsdb_col_opt(s, 3)};
    if (!r.name) {
        tsdb_oom(c->db, error);
        return false;
    }
    return c->rpc_cb(&r, c->ctx, error);
}

bool sa_tsdb_sdiag_rpcs(sa_tsdb_t *db, const char *cluster, int64_t at, sa_tsdb_rpc_cb cb, void *ctx,
                        sa_error_t *error)
{
    sched_rows_t c = {NULL, cb, ctx, db};
    return each_row(db, cluster, S_RPC_AT, 1, at, 0, rpc_row, &c, "reading RPC statistics", error);
}
