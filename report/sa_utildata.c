/*
 * sa_utildata.c - a cluster's utilization by GPU type and node state (sa_util_compute of
 * sa_util.h): the time series' state hours, hour by hour (sa_tsdb_state_hours_by), each
 * hour's CPUs, memory and GPUs split by class with what the runs had allocated in it
 * (sa_util_split), summed over the window per (GPU type, state); and what the table, the
 * summary and the site say of it (sa_util_notes).
 */
#include "sa_util.h"

#include <stdlib.h>
#include <string.h>

#include "sa_render.h"
#include "sa_vec.h"

#define HOUR 3600

void sa_util_clear(sa_util_t *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->nrows; i++) {
        free(u->rows[i].type);
        free(u->rows[i].state);
    }
    free(u->rows);
    memset(u, 0, sizeof *u);
}

/* One state row of the hour being read, and the utilization row it adds to. */
typedef struct {
    sa_tsdb_hours_t h;
    size_t row;
} hrow_t;

typedef struct {
    sa_util_t *u;
    const sa_ualloc_t *a;
    bool per_type;      /* the BY_GPU_TYPE pass */
    int64_t bucket;     /* the hour being read (SA_UNSET: none yet) */
    hrow_t *v;          /* its rows */
    size_t n, cap, last; /* last: the utilization row found last (rows come in the same order each hour) */
    sa_uin_t *in;       /* scratch for a split */
    double *out;
    size_t incap;
} pass_t;

/* The utilization row of (type, state) (type NULL: all nodes; unknown: nodes of unknown GPUs), created. */
static bool row_of(pass_t *p, const char *type, bool unknown, const char *state, size_t *at)
{
    sa_util_t *u = p->u;
    for (size_t k = 0; k < u->nrows; k++) {
        size_t i = (p->last + k) % u->nrows;
        const sa_urow_t *r = &u->rows[i];
        if (r->config_unknown == unknown && !r->type == !type && (!type || strcmp(r->type, type) == 0) &&
            strcmp(r->state, state) == 0) {
            *at = p->last = i;
            return true;
        }
    }
    if (!SA_VEC_GROW(u->rows, u->cap, u->nrows, 1, 16))
        return false;
    memset(&u->rows[u->nrows], 0, sizeof u->rows[0]);
    u->rows[u->nrows].config_unknown = unknown;
    if ((type && !(u->rows[u->nrows].type = strdup(type))) || !(u->rows[u->nrows].state = strdup(state))) {
        free(u->rows[u->nrows].type);
        return false;
    }
    *at = p->last = u->nrows++;
    return true;
}

/* The runs' allocation of resource r (GPU type type when not NULL) in hour h; < 0 when not known. */
static double exact_of(const sa_ualloc_t *a, sa_ures_t r, const char *type, size_t h)
{
    if (!a || !a->exact || h >= a->nh)
        return -1;
    if (!type)
        return a->res[r][h];
    for (size_t t = 0; t < a->ntypes; t++) {
        if (strcmp(a->types[t], type) == 0)
            return a->type_gpu[t][h];
    }
    return 0;
}

/* The series' figures of resource r of a state row, for a split (resource-seconds). */
static sa_uin_t input_of(const sa_tsdb_hours_t *h, sa_ures_t r)
{
    sa_uin_t x = {0, 0, 0, 0, h->free_class};
    switch (r) {
    case SA_UR_CPU:
        x.total = h->cpu_hours_total * HOUR;
        x.sampled = h->cpu_hours_alloc * HOUR;
        x.unknown = h->cpu_hours_unknown * HOUR;
        x.other = h->cpu_hours_other * HOUR;
        break;
    case SA_UR_MEM:
        x.total = h->mem_mb_hours_total * HOUR;
        x.sampled = h->mem_mb_hours_alloc * HOUR;
        x.unknown = h->mem_mb_hours_unknown * HOUR;
        break;
    default:
        x.total = h->gpu_hours_total * HOUR;
        x.sampled = h->gpu_hours_used * HOUR;
        x.unknown = h->gpu_hours_use_unknown * HOUR;
        break;
    }
    return x;
}

/*
 * Splits resource r over the rows v[0..n) of one hour (exact: the runs' allocation, < 0
 * for the snapshots') and adds each row's classes and capacity to its utilization row.
 * *idle gets the hour's idle time of the resource. False on out of memory.
 */
static bool split_rows(pass_t *p, const hrow_t *v, size_t n, sa_ures_t r, double exact, double *capped,
                       double *idle)
{
    sa_util_t *u = p->u;
    if (n > p->incap) {
        sa_uin_t *in = realloc(p->in, n * sizeof *in);
        double *out = in ? realloc(p->out, n * SA_UC_N * sizeof *out) : NULL;
        if (in)
            p->in = in;
        if (!out)
            return false;
        p->out = out;
        p->incap = n;
    }
    for (size_t i = 0; i < n; i++)
        p->in[i] = input_of(&v[i].h, r);
    sa_util_split(p->in, n, exact, r == SA_UR_CPU, p->out, capped);
    *idle = 0;
    for (size_t i = 0; i < n; i++) {
        sa_urow_t *row = &u->rows[v[i].row];
        row->cap[r] += p->in[i].total;
        for (int c = 0; c < SA_UC_N; c++)
            row->cls[r][c] += p->out[i * SA_UC_N + c];
        *idle += p->out[i * SA_UC_N + SA_UC_IDLE];
    }
    return true;
}

/* The hour's rows of the BY_STATE pass: CPUs, memory and all GPUs; the planned time. */
static bool hour_all(pass_t *p, size_t h)
{
    sa_util_t *u = p->u;
    double capped, idle;

    for (int r = 0; r < SA_UR_N; r++) {
        if (!split_rows(p, p->v, p->n, (sa_ures_t)r, exact_of(p->a, (sa_ures_t)r, NULL, h), &capped, &idle))
            return false;
        u->capped[r] += capped;
        if (r == SA_UR_CPU && p->a && p->a->plan && h < p->a->nh) {
            u->planned += sa_util_planned(p->a->plan[h], idle);
            u->planned_raw += p->a->plan[h];
        }
    }
    return true;
}

/* The hour's rows of the BY_GPU_TYPE pass: each GPU type's GPUs; the types the runs had but the series has not. */
static bool hour_types(pass_t *p, size_t h)
{
    sa_util_t *u = p->u;
    double capped, idle;
    size_t i = 0;

    while (i < p->n) {
        size_t j = i;
        const char *type = p->v[i].h.group;
        while (j < p->n && p->v[j].h.group && type && strcmp(p->v[j].h.group, type) == 0)
            j++;
        if (!type) { /* nodes without GPUs, or of unknown GPU configuration: no GPU split */
            i++;
            continue;
        }
        if (!split_rows(p, p->v + i, j - i, SA_UR_GPU, exact_of(p->a, SA_UR_GPU, type, h), &capped, &idle))
            return false;
        u->capped_types += capped;
        i = j;
    }
    for (size_t t = 0; p->a && p->a->exact && t < p->a->ntypes && h < p->a->nh; t++) {
        bool have = false;
        for (size_t k = 0; !have && k < p->n; k++)
            have = p->v[k].h.group && strcmp(p->v[k].h.group, p->a->types[t]) == 0;
        if (!have)
            u->typeless_gpu += p->a->type_gpu[t][h];
    }
    return true;
}

/* Splits the hour read (p->bucket) and empties it. */
static bool flush_hour(pass_t *p)
{
    size_t h = p->a && p->bucket != SA_UNSET ? (size_t)((p->bucket - p->a->h0) / HOUR) : SIZE_MAX;
    bool ok = p->n == 0 || (p->per_type ? hour_types(p, h) : hour_all(p, h));
    p->n = 0;
    return ok;
}

/* sa_tsdb_state_hours_by callback: collects an hour's rows, splitting the previous hour when a new one starts. */
static bool on_hours(const sa_tsdb_hours_t *h, void *vctx, sa_error_t *error)
{
    pass_t *p = vctx;
    sa_util_t *u = p->u;
    bool unknown = p->per_type && !h->group && h->gpu_config_unknown;
    size_t at;
    sa_urow_t *row;

    if (h->bucket != p->bucket && !flush_hour(p))
        return sa_error_nomem(error);
    p->bucket = h->bucket;
    if (p->per_type && !h->group && !unknown)
        return true; /* nodes without GPUs: in the "*" rows */
    if (!row_of(p, p->per_type ? (unknown ? NULL : h->group) : NULL, unknown, h->state, &at) ||
        !SA_VEC_GROW(p->v, p->cap, p->n, 1, 32))
        return sa_error_nomem(error);
    p->v[p->n].h = *h;
    p->v[p->n].h.group = unknown ? NULL : p->u->rows[at].type; /* borrowed for the callback only: kept by the row */
    p->v[p->n++].row = at;
    row = &u->rows[at];
    row->node_s += h->node_hours * HOUR;
    row->cpu_seen_total += h->cpu_hours_total * HOUR;
    row->cpu_seen_idle += h->cpu_hours_idle * HOUR;
    if (unknown)
        row->cap[SA_UR_CPU] += h->cpu_hours_total * HOUR;
    if (!p->per_type) {
        u->cpu_split += h->cpu_hours_split * HOUR;
        u->cpu_unknown += h->cpu_hours_unknown * HOUR;
        u->mem_unknown += h->mem_mb_hours_unknown * HOUR;
        u->gpu_carried += h->gpu_hours_carried * HOUR;
        u->gpu_use_unknown += h->gpu_hours_use_unknown * HOUR;
        u->node_config_unknown += h->node_hours_gpu_unknown * HOUR;
    }
    return true;
}

/* "*" rows, then the GPU types' (by name), then those of unknown GPU configuration; each by state. */
static int row_cmp(const void *x, const void *y)
{
    const sa_urow_t *a = x, *b = y;
    int ka = a->config_unknown ? 2 : a->type ? 1 : 0, kb = b->config_unknown ? 2 : b->type ? 1 : 0, c;
    if (ka != kb)
        return ka - kb;
    if (ka == 1 && (c = strcmp(a->type, b->type)) != 0)
        return c;
    return strcmp(a->state, b->state);
}

bool sa_util_compute(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, const sa_ualloc_t *a,
                     sa_util_t *u, sa_error_t *error)
{
    pass_t p;
    bool ok = true;

    memset(u, 0, sizeof *u);
    u->exact = a && a->exact;
    u->has_planned = u->exact && a->plan;
    for (int pass = 0; ok && pass < 2; pass++) {
        memset(&p, 0, sizeof p);
        p.u = u;
        p.a = a;
        p.per_type = pass == 1;
        p.bucket = SA_UNSET;
        ok = sa_tsdb_state_hours_by(db, cluster, from, to, HOUR, pass ? SA_TSDB_BY_GPU_TYPE : SA_TSDB_BY_STATE,
                                    on_hours, &p, error);
        if (ok && !flush_hour(&p))
            ok = sa_error_nomem(error);
        free(p.v);
        free(p.in);
        free(p.out);
    }
    if (ok && u->nrows > 1)
        qsort(u->rows, u->nrows, sizeof *u->rows, row_cmp);
    return ok;
}

bool sa_util_notes(const char *cluster, const sa_util_t *u, const sa_ualloc_t *a, sa_strv_t *preamble, json_t *jcl)
{
    const double H = 3600.0;

    json_object_set_new(jcl, "allocation", json_string(u->exact ? "runs" : "snapshots"));
    if (u->exact)
        sa_rpreamble_add(preamble, "%s: allocated time: the runs' exact start and end, as usage counts them, within "
                                   "the time the series knows; each node state keeps the allocation its snapshots "
                                   "saw, what the runs had more is on the states whose free time is idle",
                         cluster);
    else
        sa_rpreamble_add(preamble, "%s: allocated time: the snapshots' (a job's start and end move to the poll "
                                   "times): %s",
                         cluster, a && a->why ? a->why : "the runs are not known");
    json_object_set_new(jcl, "allocation_capped_cpu_hours", json_real(u->capped[SA_UR_CPU] / H));
    json_object_set_new(jcl, "allocation_capped_gpu_hours", json_real(u->capped[SA_UR_GPU] / H));
    json_object_set_new(jcl, "gpu_hours_type_not_in_series", json_real(u->typeless_gpu / H));
    json_object_set_new(jcl, "cpu_split_hours", json_real(u->cpu_split / H));
    json_object_set_new(jcl, "cpu_unknown_hours", json_real(u->cpu_unknown / H));
    json_object_set_new(jcl, "gpu_unknown_config_node_hours", json_real(u->node_config_unknown / H));
    json_object_set_new(jcl, "gpu_carried_hours", json_real(u->gpu_carried / H));
    json_object_set_new(jcl, "gpu_use_unknown_hours", json_real(u->gpu_use_unknown / H));
    if (u->capped[SA_UR_CPU] + u->capped[SA_UR_GPU] >= 36)
        sa_rpreamble_add(preamble, "%s: %.2f CPU-hours and %.2f GPU-hours the runs had allocated beyond the "
                                   "capacity of their hour are not counted (as slurmdbd caps them: the jobs' TRES "
                                   "and the nodes' configuration disagree; health's gpu-capacity check names the "
                                   "nodes)",
                         cluster, u->capped[SA_UR_CPU] / H, u->capped[SA_UR_GPU] / H);
    if (u->typeless_gpu >= 36)
        sa_rpreamble_add(preamble, "%s: %.2f GPU-hours of runs whose GPU type no node of the series has (unknown, "
                                   "or a TRES name the nodes' gres does not use) count in the * rows only",
                         cluster, u->typeless_gpu / H);
    if (u->capped_types >= 36)
        sa_rpreamble_add(preamble, "%s: %.2f GPU-hours the runs had of a GPU type beyond its capacity in their hour "
                                   "count in the * rows only",
                         cluster, u->capped_types / H);
    if (u->cpu_split >= 36)
        sa_rpreamble_add(preamble, "%s: %.2f CPU-hours are of nodes in grouped sinfo --json records of several "
                                   "states: their counts are their record's sums split over its nodes (exact summed "
                                   "over the record, not per node)",
                         cluster, u->cpu_split / H);
    if (u->cpu_unknown >= 36)
        sa_rpreamble_add(preamble, "%s: %.2f CPU-hours are of nodes whose CPU counts no snapshot said (grouped "
                                   "sinfo --json records that overlap or list fewer nodes than they count)%s",
                         cluster, u->cpu_unknown / H,
                         u->exact ? ": their free time is in their state's class" : ": class unknown");
    if (u->node_config_unknown > 0)
        sa_rpreamble_add(preamble,
                         "%s: %.2f node-hours on nodes of unknown GPU configuration (rows " SA_UTIL_UNKNOWN_CONFIG
                         "): snapshots from a grouped sinfo --json did not say these nodes' GPUs and no "
                         "per-node observation did; their GPU time is counted nowhere. Capture sinfo -N --json, "
                         "or give slurm-ingest --node-config (scontrol show nodes --json) before the snapshots.",
                         cluster, u->node_config_unknown / H);
    if (u->gpu_carried > 0)
        sa_rpreamble_add(preamble,
                         "%s: %.2f GPU-hours are of GPUs carried from the nodes' last per-node observation "
                         "(grouped sinfo --json); %.2f GPU-hours of them, on nodes that could run jobs, are "
                         "neither allocated nor idle at the snapshots%s.",
                         cluster, u->gpu_carried / H, u->gpu_use_unknown / H,
                         u->exact ? ": the runs say how many were allocated" : " (class unknown)");
    return true;
}
