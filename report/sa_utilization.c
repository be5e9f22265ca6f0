/*
 * sa_utilization.c - `slurm-report utilization`: where the GPUs' (and CPUs') time went over
 * a window, by exact node state (base + flags) and GPU type, from the SQLite time
 * series (sa_tsdb_state_hours), with stranded GPUs as their own class and the unknown
 * time (gaps between snapshots) said.
 *
 * Rows:
 * - gpu_type "*": all nodes of the cluster, per exact state (BY_STATE): node, CPU and
 *   GPU hours;
 * - per GPU type and state (BY_GPU_TYPE): GPU hours of that type; node and CPU hours
 *   of the nodes having it (a node with two types counts in both); class "stranded"
 *   when the state strands idle GPUs, else "usable";
 * - per GPU type, state "(all)": the type's totals, idle split into usable and
 *   stranded.
 * Stranded (idle GPUs nobody can use): sa_tsdb_state_strands() of schema/tsdb/sa_tsdb.h.
 * Everything comes through the time series' read API; the rows go to the shared
 * renderers (sa_render.h).
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"

enum { U_CLUSTER, U_TYPE, U_STATE, U_CLASS, U_NODE_H, U_CPU_H, U_CPU_ALLOC, U_CPU_IDLE, U_CPU_OTHER, U_GPU_H,
       U_GPU_USED, U_GPU_IDLE, U_GPU_STRANDED, U_REASON, U_N };

/* Per unit (-t hours, minutes, percent): the keys and titles of the time columns U_NODE_H .. U_GPU_STRANDED. */
static const char *const time_keys[3][9] = {
    {"node_hours", "cpu_hours", "cpu_alloc_hours", "cpu_idle_hours", "cpu_other_hours", "gpu_hours", "gpu_used_hours",
     "gpu_idle_hours", "gpu_stranded_hours"},
    {"node_minutes", "cpu_minutes", "cpu_alloc_minutes", "cpu_idle_minutes", "cpu_other_minutes", "gpu_minutes",
     "gpu_used_minutes", "gpu_idle_minutes", "gpu_stranded_minutes"},
    {"node_percent", "cpu_percent", "cpu_alloc_percent", "cpu_idle_percent", "cpu_other_percent", "gpu_percent",
     "gpu_used_percent", "gpu_idle_percent", "gpu_stranded_percent"},
};
static const char *const time_titles[3][9] = {
    {"Node-h", "CPU-h", "CPU-h alloc", "CPU-h idle", "CPU-h other", "GPU-h", "GPU-h used", "GPU-h idle",
     "GPU-h stranded"},
    {"Node-min", "CPU-min", "CPU-min alloc", "CPU-min idle", "CPU-min other", "GPU-min", "GPU-min used",
     "GPU-min idle", "GPU-min stranded"},
    {"Node %", "CPU %", "CPU % alloc", "CPU % idle", "CPU % other", "GPU %", "GPU % used", "GPU % idle",
     "GPU % stranded"},
};

/* The columns for a unit (0 hours, 1 minutes, 2 percent): the CPU detail and the reason are long. */
static void util_columns(int unit, sa_col_t *cols)
{
    static const sa_col_t keys[4] = {
        {"cluster", "Cluster", SA_COL_STR, 0, 0},
        {"gpu_type", "GPU type", SA_COL_STR, 0, 0},
        {"state", "Node state", SA_COL_STR, 0, 0},
        {"class", "Class", SA_COL_STR, 0, SA_COL_BADGE},
    };
    for (int i = 0; i < 4; i++)
        cols[i] = keys[i];
    for (int i = 0; i < 9; i++) {
        sa_col_t c = {time_keys[unit][i], time_titles[unit][i], SA_COL_NUM, unit == 2 ? 1 : 2,
                      U_NODE_H + i >= U_CPU_H && U_NODE_H + i <= U_CPU_OTHER ? SA_COL_LONG : 0};
        cols[U_NODE_H + i] = c;
    }
    cols[U_REASON] = (sa_col_t){"stranded_reason", "Why stranded", SA_COL_STR, 0, SA_COL_LONG};
}

const sa_col_t *sa_utilization_cols(size_t *n)
{
    static sa_col_t cols[U_N];
    util_columns(0, cols);
    *n = U_N;
    return cols;
}

/* Per-type totals while the rows of one cluster are read. */
typedef struct {
    char *type;
    double total, used, idle, stranded, use_unknown;
} type_sum_t;

typedef struct {
    const sa_report_opts_t *o;
    sa_rtable_t *t;
    const char *cluster;
    bool per_type;
    type_sum_t *sums;
    size_t nsums;
    /* nodes whose GPUs a grouped sinfo did not say, from the "*" rows */
    double unknown_node_h, carried_gpu_h, use_unknown_gpu_h;
} rows_ctx_t;

/* The GPU type shown for nodes of unknown GPU configuration (sa_tsdb_hours_t.gpu_config_unknown). */
#define UNKNOWN_CONFIG "(unknown GPU configuration)"

/*
 * The row of nodes whose GPU configuration is unknown (a grouped sinfo --json said no
 * node's own GPUs, nothing earlier did): their node and CPU time, class "unknown", and
 * no GPU figure (not 0: nobody knows).
 */
static bool add_unknown_row(rows_ctx_t *c, const sa_tsdb_hours_t *h)
{
    size_t r;

    if (c->o->stranded_only)
        return true;
    if ((r = sa_rtable_add_row(c->t)) == SIZE_MAX)
        return false;
    sa_rtable_str(c->t, r, U_CLUSTER, c->cluster);
    sa_rtable_str(c->t, r, U_TYPE, UNKNOWN_CONFIG);
    sa_rtable_str(c->t, r, U_STATE, h->state);
    sa_rtable_str(c->t, r, U_CLASS, "unknown");
    sa_rtable_num(c->t, r, U_NODE_H, h->node_hours);
    sa_rtable_num(c->t, r, U_CPU_H, h->cpu_hours_total);
    sa_rtable_num(c->t, r, U_CPU_ALLOC, h->cpu_hours_alloc);
    sa_rtable_num(c->t, r, U_CPU_IDLE, h->cpu_hours_idle);
    sa_rtable_num(c->t, r, U_CPU_OTHER, h->cpu_hours_other);
    return true;
}

/* Adds h's GPU hours to the totals of its type (rows come sorted by group). */
static bool sum_type(rows_ctx_t *c, const sa_tsdb_hours_t *h)
{
    type_sum_t *s = c->nsums ? &c->sums[c->nsums - 1] : NULL;

    if (!s || strcmp(s->type, h->group) != 0) {
        type_sum_t *v = realloc(c->sums, (c->nsums + 1) * sizeof *v);
        if (!v)
            return false;
        c->sums = v;
        s = &c->sums[c->nsums++];
        memset(s, 0, sizeof *s);
        if (!(s->type = strdup(h->group)))
            return false;
    }
    s->total += h->gpu_hours_total;
    s->used += h->gpu_hours_used;
    s->idle += h->gpu_hours_idle;
    s->use_unknown += h->gpu_hours_use_unknown;
    if (h->stranded)
        s->stranded += h->gpu_hours_idle;
    return true;
}

/*
 * The class of a row's GPU-hours: what they were, "used", "idle" (usable), "stranded"
 * (idle, nobody could use them), joined with '+' ("used+stranded": an ALLOCATED node
 * whose jobs left GPUs idle); NULL without GPU time.
 */
static const char *gpu_class(double used, double idle_usable, double stranded, double use_unknown, char *buf,
                             size_t sz)
{
    buf[0] = '\0';
    if (used > 0)
        snprintf(buf, sz, "used");
    if (use_unknown > 0) /* carried GPUs on a node that may run jobs: used or idle, nobody said */
        snprintf(buf + strlen(buf), sz - strlen(buf), "%sunknown", buf[0] ? "+" : "");
    if (idle_usable > 0)
        snprintf(buf + strlen(buf), sz - strlen(buf), "%sidle", buf[0] ? "+" : "");
    if (stranded > 0)
        snprintf(buf + strlen(buf), sz - strlen(buf), "%sstranded", buf[0] ? "+" : "");
    return buf[0] ? buf : NULL;
}

/* sa_tsdb_state_hours callback: one row per (group, state). */
static bool add_row(const sa_tsdb_hours_t *h, void *vctx, sa_error_t *error)
{
    rows_ctx_t *c = vctx;
    const char *reason = sa_tsdb_strand_reason(h->state, h->cpu_hours_total, h->cpu_hours_idle);
    char cls[32];
    size_t r;

    if (c->per_type && !h->group) /* nodes without GPUs: in the "*" rows; unknown GPUs: a row apart */
        return !h->gpu_config_unknown || add_unknown_row(c, h) || sa_error_nomem(error);
    if (!c->per_type) {
        c->unknown_node_h += h->node_hours_gpu_unknown;
        c->carried_gpu_h += h->gpu_hours_carried;
        c->use_unknown_gpu_h += h->gpu_hours_use_unknown;
    }
    if (c->per_type && !sum_type(c, h))
        goto nomem;
    if (c->o->stranded_only && (!c->per_type || !(h->gpu_hours_stranded > 0)))
        return true;
    if ((r = sa_rtable_add_row(c->t)) == SIZE_MAX)
        goto nomem;
    sa_rtable_str(c->t, r, U_CLUSTER, c->cluster);
    sa_rtable_str(c->t, r, U_TYPE, c->per_type ? (h->group[0] ? h->group : "(untyped)") : "*");
    sa_rtable_str(c->t, r, U_STATE, h->state);
    sa_rtable_num(c->t, r, U_NODE_H, h->node_hours);
    sa_rtable_num(c->t, r, U_CPU_H, h->cpu_hours_total);
    sa_rtable_num(c->t, r, U_CPU_ALLOC, h->cpu_hours_alloc);
    sa_rtable_num(c->t, r, U_CPU_IDLE, h->cpu_hours_idle);
    sa_rtable_num(c->t, r, U_CPU_OTHER, h->cpu_hours_other);
    sa_rtable_num(c->t, r, U_GPU_H, h->gpu_hours_total);
    sa_rtable_num(c->t, r, U_GPU_USED, h->gpu_hours_used);
    sa_rtable_num(c->t, r, U_GPU_IDLE, h->gpu_hours_idle);
    if (c->per_type || h->gpu_hours_total > 0) {
        sa_rtable_str(c->t, r, U_CLASS, gpu_class(h->gpu_hours_used, h->stranded ? 0 : h->gpu_hours_idle,
                                                  h->gpu_hours_stranded, h->gpu_hours_use_unknown, cls, sizeof cls));
        sa_rtable_num(c->t, r, U_GPU_STRANDED, h->gpu_hours_stranded);
        if (h->gpu_hours_stranded > 0)
            sa_rtable_str(c->t, r, U_REASON, reason);
    }
    return true;
nomem:
    sa_error_nomem(error);
    return false;
}

/*
 * Converts the time cells of rows [first, t->nrows) (one cluster) from hours to the
 * unit: minutes, or percent of the cluster's node-, CPU- and GPU-hours in the window
 * (the sums of its "*" rows).
 */
static void convert_rows(sa_rtable_t *t, size_t first, int unit)
{
    double tot[3] = {0, 0, 0}; /* node, CPU, GPU hours of the cluster */

    if (unit == 0)
        return;
    for (size_t r = first; r < t->nrows; r++) {
        const sa_cell_t *ty = sa_rtable_cell(t, r, U_TYPE);
        if (ty->kind == SA_CELL_STR && strcmp(ty->s, "*") == 0) {
            tot[0] += sa_rtable_cell(t, r, U_NODE_H)->d;
            tot[1] += sa_rtable_cell(t, r, U_CPU_H)->d;
            tot[2] += sa_rtable_cell(t, r, U_GPU_H)->d;
        }
    }
    for (size_t r = first; r < t->nrows; r++) {
        for (int c = U_NODE_H; c <= U_GPU_STRANDED; c++) {
            const sa_cell_t *cell = sa_rtable_cell(t, r, (size_t)c);
            double base = tot[c == U_NODE_H ? 0 : c <= U_CPU_OTHER ? 1 : 2];
            if (cell->kind != SA_CELL_NUM)
                continue;
            sa_rtable_num(t, r, (size_t)c, unit == 1 ? cell->d * 60 : base > 0 ? 100 * cell->d / base : 0);
        }
    }
}

/*
 * Says how much of cluster's GPU time the series could not count or split (nodes whose
 * GPUs a grouped sinfo --json did not say): a preamble line and members of jcl (the
 * cluster's JSON object).
 */
static void gpu_config_notes(const rows_ctx_t *c, sa_strv_t *preamble, json_t *jcl)
{
    json_object_set_new(jcl, "gpu_unknown_config_node_hours", json_real(c->unknown_node_h));
    json_object_set_new(jcl, "gpu_carried_hours", json_real(c->carried_gpu_h));
    json_object_set_new(jcl, "gpu_use_unknown_hours", json_real(c->use_unknown_gpu_h));
    if (c->unknown_node_h > 0)
        sa_rpreamble_add(preamble,
                         "%s: %.2f node-hours on nodes of unknown GPU configuration (rows " UNKNOWN_CONFIG
                         "): snapshots from a grouped sinfo --json did not say these nodes' GPUs and no "
                         "per-node observation did; their GPU time is counted nowhere. Capture sinfo -N --json, "
                         "or give slurm-ingest --node-config (scontrol show nodes --json) before the snapshots.",
                         c->cluster, c->unknown_node_h);
    if (c->carried_gpu_h > 0)
        sa_rpreamble_add(preamble,
                         "%s: %.2f GPU-hours are of GPUs carried from the nodes' last per-node observation "
                         "(grouped sinfo --json); %.2f GPU-hours of them, on nodes that could run jobs, are "
                         "neither used nor idle: their use is unknown (class unknown).",
                         c->cluster, c->carried_gpu_h, c->use_unknown_gpu_h);
}

/* The rows of one cluster: all nodes by state, each GPU type by state, each GPU type's "(all)". */
static bool cluster_rows(const sa_report_opts_t *o, sa_tsdb_t *db, const char *cluster, int unit, sa_rtable_t *t,
                         sa_strv_t *preamble, json_t *jgpu, sa_error_t *error)
{
    rows_ctx_t c = {o, t, cluster, false, NULL, 0, 0, 0, 0};
    size_t first = t->nrows;
    bool ok = sa_tsdb_state_hours(db, cluster, o->start, o->end, SA_TSDB_BY_STATE, add_row, &c, error);

    c.per_type = true;
    ok = ok && sa_tsdb_state_hours(db, cluster, o->start, o->end, SA_TSDB_BY_GPU_TYPE, add_row, &c, error);
    for (size_t k = 0; k < c.nsums; k++) {
        size_t r = ok && !o->stranded_only ? sa_rtable_add_row(t) : SIZE_MAX;
        char cls[32];
        if (r != SIZE_MAX) {
            sa_rtable_str(t, r, U_CLUSTER, cluster);
            sa_rtable_str(t, r, U_TYPE, c.sums[k].type[0] ? c.sums[k].type : "(untyped)");
            sa_rtable_str(t, r, U_STATE, "(all)");
            sa_rtable_str(t, r, U_CLASS, gpu_class(c.sums[k].used, c.sums[k].idle - c.sums[k].stranded,
                                                   c.sums[k].stranded, c.sums[k].use_unknown, cls, sizeof cls));
            sa_rtable_num(t, r, U_GPU_H, c.sums[k].total);
            sa_rtable_num(t, r, U_GPU_USED, c.sums[k].used);
            sa_rtable_num(t, r, U_GPU_IDLE, c.sums[k].idle);
            sa_rtable_num(t, r, U_GPU_STRANDED, c.sums[k].stranded);
        }
        free(c.sums[k].type);
    }
    free(c.sums);
    if (ok) {
        convert_rows(t, first, unit);
        gpu_config_notes(&c, preamble, jgpu);
    }
    return ok;
}

/* The preamble line and the JSON object saying how much of the window cluster's series knows. */
static bool cluster_coverage(const sa_report_opts_t *o, sa_tsdb_t *db, const char *cluster, sa_strv_t *preamble,
                             json_t *jcl, sa_error_t *error)
{
    sa_tsdb_coverage_t c;
    double window_h = (double)(o->end - o->start) / 3600.0, before_h, gap_h, after_h, known_h;

    if (!sa_tsdb_coverage(db, cluster, o->start, o->end, &c, error))
        return false;
    before_h = (double)c.before_s / 3600.0;
    gap_h = (double)c.gap_s / 3600.0;
    after_h = (double)c.after_s / 3600.0;
    known_h = window_h - gap_h - before_h - after_h;
    sa_rpreamble_add(preamble,
                     "%s: snapshots %s to %s; of the window's %.2f h, %.2f h are known; unknown: %.2f h "
                     "before the first snapshot, %.2f h of gaps, %.2f h after the last",
                     cluster, c.first == SA_UNSET ? "none" : sa_riso(c.first),
                     c.last == SA_UNSET ? "none" : sa_riso(c.last), window_h, known_h, before_h, gap_h, after_h);
    json_array_append_new(jcl, json_pack("{s:s, s:s?, s:s?, s:f, s:f, s:f, s:f, s:f}", "name", cluster,
                                         "first_snapshot", c.first == SA_UNSET ? NULL : sa_riso(c.first),
                                         "last_snapshot", c.last == SA_UNSET ? NULL : sa_riso(c.last),
                                         "window_hours", window_h, "known_hours", known_h,
                                         "before_first_snapshot_hours", before_h, "gap_hours", gap_h,
                                         "after_last_snapshot_hours", after_h));
    return true;
}

/* The clusters: -M, else every cluster of the --sqlite file, else the archive's. */
static bool util_clusters(const sa_report_opts_t *o, sa_rtsdbs_t *tsdbs, sa_strv_t *clusters, sa_error_t *error)
{
    sa_rdb_t *db;
    sa_rclusters_t rc;
    bool ok;

    for (size_t i = 0; i < o->clusters.n; i++)
        sa_strv_push(clusters, o->clusters.v[i]);
    if (clusters->n && !o->sqlite_path)
        return true;
    if (o->sqlite_path) {
        sa_tsdb_t *ts;
        sa_strv_t have;
        bool named = clusters->n > 0;
        sa_strv_init(&have);
        ok = sa_rtsdbs_get(tsdbs, o, "", true, &ts, error) && sa_tsdb_clusters(ts, &have, error);
        for (size_t i = 0; ok && i < clusters->n; i++) {
            if (!sa_strv_contains(&have, clusters->v[i])) {
                sa_error_set(error, SA_ERR_USAGE, 0, "cluster '%s' is not in the time series %s (%zu cluster(s))",
                             clusters->v[i], o->sqlite_path, have.n);
                ok = false;
            }
        }
        for (size_t i = 0; ok && !named && i < have.n; i++)
            sa_strv_push(clusters, have.v[i]);
        sa_strv_clear(&have);
        return ok;
    }
    if (!(db = sa_report_connect(o, error)))
        return false;
    if ((ok = sa_rdb_clusters(db, &o->clusters, &rc, error))) {
        for (size_t i = 0; i < rc.n; i++)
            sa_strv_push(clusters, rc.v[i].name);
        sa_rclusters_clear(&rc);
    }
    sa_rdb_close(db);
    return ok;
}

bool sa_report_utilization(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, preamble;
    sa_rtable_t t;
    json_t *extra = NULL, *jcl = json_array();
    bool ok = false;
    sa_col_t cols[U_N];
    int unit = !o->unit_given || o->unit == SA_UNIT_GPU_HOURS ? 0 : o->unit == SA_UNIT_GPU_MINUTES ? 1 : 2;

    (void)warn;
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&clusters);
    sa_strv_init(&preamble);
    util_columns(unit, cols);
    sa_rtable_init(&t, cols, U_N);
    if (!sa_report_window("utilization", o->start, o->end, true, error))
        goto done;
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for utilization", sa_format_name(o->format));
        goto done;
    }
    if (o->unit_given && o->unit != SA_UNIT_GPU_HOURS && o->unit != SA_UNIT_GPU_MINUTES && o->unit != SA_UNIT_PERCENT) {
        sa_error_set(error, SA_ERR_USAGE, 0, "utilization counts time in hours, minutes or percent (-t)");
        goto done;
    }
    if (!util_clusters(o, &tsdbs, &clusters, error))
        goto done;
    if (o->summary) {
        ok = sa_report_utilization_summary(o, &clusters, &tsdbs, out, error);
        goto done;
    }
    sa_rpreamble_add(&preamble, "GPU and CPU time by exact node state from %s to %s (UTC, end excluded)",
                     sa_riso(o->start), sa_riso(o->end));
    for (size_t i = 0; i < clusters.n; i++) {
        sa_tsdb_t *db;
        json_t *jgpu = json_object();
        bool cok = sa_rtsdbs_get(&tsdbs, o, clusters.v[i], true, &db, error) &&
                   cluster_rows(o, db, clusters.v[i], unit, &t, &preamble, jgpu, error) &&
                   cluster_coverage(o, db, clusters.v[i], &preamble, jcl, error);
        if (cok)
            json_object_update(json_array_get(jcl, json_array_size(jcl) - 1), jgpu);
        json_decref(jgpu);
        if (!cok)
            goto done;
    }
    sa_rpreamble_add(&preamble, "Rows with GPU type * are all nodes; a GPU type's rows count the nodes having that "
                                "type (a node with two types counts in both); state (all) sums a type's states.");
    sa_rpreamble_add(&preamble, "Class: what the row's GPU time was: used (allocated to jobs), idle (free and usable), "
                                "stranded (idle where nobody could use it: the node DOWN, drained or failing, "
                                "reserved, or with no free CPU: ALLOCATED, or MIXED with no idle CPU).");
    if (unit)
        sa_rpreamble_add(&preamble, "%s", unit == 1 ? "Time in minutes."
                                                    : "Time in percent of the cluster's node-, CPU- and GPU-hours "
                                                      "in the window (its rows with GPU type *).");
    sa_rpreamble_add(&preamble, "Time between snapshots further apart than the ingester's gap limit is unknown and "
                                "counted nowhere.");
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "clusters", jcl);
    jcl = NULL;
    json_object_set_new(extra, "header", sa_rjson_strv(&preamble));
    {
        sa_rdoc_t doc = {.kind = "utilization", .title = "slurm-report: utilization", .preamble = &preamble, .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(jcl);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&clusters);
    sa_strv_clear(&preamble);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
