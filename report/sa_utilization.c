/*
 * sa_utilization.c - `slurm-report utilization`: where the GPUs' (and CPUs') time went over
 * a window, by exact node state (base + flags) and GPU type: the capacity and the states
 * from the SQLite time series, the allocated time from the runs' exact start and end (as
 * usage counts them), the rest by class (sa_utilcalc.h; sa_util_compute of sa_util.h).
 *
 * Rows:
 * - gpu_type "*": all nodes of the cluster, per exact state: node, CPU and GPU hours by class;
 * - per GPU type and state: GPU hours of that type by class; the node and CPU hours of the
 *   nodes having it (a node with two types counts in both);
 * - per GPU type, state "(all)": the type's totals;
 * - "(unknown GPU configuration)": nodes whose GPUs nobody said (grouped sinfo).
 * Class: the classes of the row's GPU time (its CPU time without GPUs), joined with '+';
 * reason: why its free time is not idle. The rows go to the shared renderers (sa_render.h).
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_util.h"

enum { U_CLUSTER, U_TYPE, U_STATE, U_CLASS, U_NODE_H, U_CPU_H, U_CPU_ALLOC, U_CPU_IDLE, U_CPU_UNUSABLE,
       U_CPU_UNKNOWN, U_GPU_H, U_GPU_ALLOC, U_GPU_IDLE, U_GPU_UNUSABLE, U_GPU_UNKNOWN, U_REASON, U_N };
#define U_NTIME (U_GPU_UNKNOWN - U_NODE_H + 1)

/* Per unit (-t hours, minutes, percent): the keys and titles of the time columns U_NODE_H .. U_GPU_UNKNOWN. */
static const char *const time_keys[3][U_NTIME] = {
    {"node_hours", "cpu_hours", "cpu_alloc_hours", "cpu_idle_hours", "cpu_unusable_hours", "cpu_unknown_hours",
     "gpu_hours", "gpu_alloc_hours", "gpu_idle_hours", "gpu_unusable_hours", "gpu_unknown_hours"},
    {"node_minutes", "cpu_minutes", "cpu_alloc_minutes", "cpu_idle_minutes", "cpu_unusable_minutes",
     "cpu_unknown_minutes", "gpu_minutes", "gpu_alloc_minutes", "gpu_idle_minutes", "gpu_unusable_minutes",
     "gpu_unknown_minutes"},
    {"node_percent", "cpu_percent", "cpu_alloc_percent", "cpu_idle_percent", "cpu_unusable_percent",
     "cpu_unknown_percent", "gpu_percent", "gpu_alloc_percent", "gpu_idle_percent", "gpu_unusable_percent",
     "gpu_unknown_percent"},
};
static const char *const time_titles[3][U_NTIME] = {
    {"Node-h", "CPU-h", "CPU-h alloc", "CPU-h idle", "CPU-h unusable", "CPU-h unknown", "GPU-h", "GPU-h alloc",
     "GPU-h idle", "GPU-h unusable", "GPU-h unknown"},
    {"Node-min", "CPU-min", "CPU-min alloc", "CPU-min idle", "CPU-min unusable", "CPU-min unknown", "GPU-min",
     "GPU-min alloc", "GPU-min idle", "GPU-min unusable", "GPU-min unknown"},
    {"Node %", "CPU %", "CPU % alloc", "CPU % idle", "CPU % unusable", "CPU % unknown", "GPU %", "GPU % alloc",
     "GPU % idle", "GPU % unusable", "GPU % unknown"},
};

/*
 * The columns for a unit (0 hours, 1 minutes, 2 percent): the node-hours, the CPU detail, the
 * unknown and the reason are long (the table keeps to 120 columns).
 */
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
    for (int i = 0; i < U_NTIME; i++) {
        int c = U_NODE_H + i;
        bool lng = c == U_NODE_H || (c >= U_CPU_H && c <= U_CPU_UNKNOWN) || c == U_GPU_UNKNOWN;
        cols[c] = (sa_col_t){time_keys[unit][i], time_titles[unit][i], SA_COL_NUM, unit == 2 ? 1 : 2,
                             lng ? SA_COL_LONG : 0};
    }
    cols[U_REASON] = (sa_col_t){"reason", "Why not idle", SA_COL_STR, 0, SA_COL_LONG};
}

const sa_col_t *sa_utilization_cols(size_t *n)
{
    static sa_col_t cols[U_N];
    util_columns(0, cols);
    *n = U_N;
    return cols;
}

/* The GPU type shown for nodes of unknown GPU configuration (sa_urow_t.config_unknown). */

/* Free time in a class other than idle (and not unknown): down, planned_down, reserved, stranded. */
static double unusable(const double *cls)
{
    return cls[SA_UC_STRANDED] + cls[SA_UC_DOWN] + cls[SA_UC_PLANNED_DOWN] + cls[SA_UC_RESERVED];
}

/* The classes with time in cls, joined with '+' (NULL when none). */
static const char *class_of(const double *cls, char *buf, size_t sz)
{
    static const sa_uclass_t order[] = {SA_UC_ALLOCATED, SA_UC_UNKNOWN, SA_UC_IDLE, SA_UC_STRANDED,
                                        SA_UC_DOWN, SA_UC_PLANNED_DOWN, SA_UC_RESERVED};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (cls[order[i]] >= 0.5) /* at least half a resource-second */
            snprintf(buf + strlen(buf), sz - strlen(buf), "%s%s", buf[0] ? "+" : "", sa_uclass_name(order[i]));
    }
    return buf[0] ? buf : NULL;
}

/* The seconds-based figures (v: cls of a resource) into a row's columns from c0 (alloc, idle, unusable, unknown). */
static void put_classes(sa_rtable_t *t, size_t r, size_t c0, const double *cls)
{
    sa_rtable_num(t, r, c0, cls[SA_UC_ALLOCATED] / 3600.0);
    sa_rtable_num(t, r, c0 + 1, cls[SA_UC_IDLE] / 3600.0);
    sa_rtable_num(t, r, c0 + 2, unusable(cls) / 3600.0);
    sa_rtable_num(t, r, c0 + 3, cls[SA_UC_UNKNOWN] / 3600.0);
}

/* One table row of a utilization row (hours). */
static bool add_row(const sa_report_opts_t *o, sa_rtable_t *t, const char *cluster, const sa_urow_t *x)
{
    const char *why = NULL;
    char cls[96];
    bool gpus = x->cap[SA_UR_GPU] > 0;
    size_t r;

    sa_tsdb_free_class(x->state, x->cpu_seen_total, x->cpu_seen_idle, &why);
    if (o->unusable_only && (!x->type || !(unusable(x->cls[SA_UR_GPU]) >= 0.5)))
        return true;
    if ((r = sa_rtable_add_row(t)) == SIZE_MAX)
        return false;
    sa_rtable_str(t, r, U_CLUSTER, cluster);
    sa_rtable_str(t, r, U_TYPE, x->config_unknown ? SA_UTIL_UNKNOWN_CONFIG : !x->type ? "*" : x->type[0] ? x->type : "(untyped)");
    sa_rtable_str(t, r, U_STATE, x->state);
    sa_rtable_num(t, r, U_NODE_H, x->node_s / 3600.0);
    sa_rtable_num(t, r, U_CPU_H, x->cpu_seen_total / 3600.0);
    if (x->config_unknown) {
        sa_rtable_str(t, r, U_CLASS, "unknown");
        return true;
    }
    if (!x->type) /* CPUs by class: the cluster's rows (a run's CPUs are not said per GPU type) */
        put_classes(t, r, U_CPU_ALLOC, x->cls[SA_UR_CPU]);
    sa_rtable_num(t, r, U_GPU_H, x->cap[SA_UR_GPU] / 3600.0);
    put_classes(t, r, U_GPU_ALLOC, x->cls[SA_UR_GPU]);
    sa_rtable_str(t, r, U_CLASS, class_of(gpus || x->type ? x->cls[SA_UR_GPU] : x->cls[SA_UR_CPU], cls, sizeof cls));
    if (why && unusable(gpus || x->type ? x->cls[SA_UR_GPU] : x->cls[SA_UR_CPU]) >= 0.5)
        sa_rtable_str(t, r, U_REASON, why);
    return true;
}

/* The "(all)" row of GPU type rows [first, last) of u. */
static bool add_type_total(sa_rtable_t *t, const char *cluster, const sa_util_t *u, size_t first, size_t last)
{
    double cls[SA_UC_N] = {0}, cap = 0;
    char buf[96];
    size_t r;

    for (size_t i = first; i < last; i++) {
        cap += u->rows[i].cap[SA_UR_GPU];
        for (int c = 0; c < SA_UC_N; c++)
            cls[c] += u->rows[i].cls[SA_UR_GPU][c];
    }
    if ((r = sa_rtable_add_row(t)) == SIZE_MAX)
        return false;
    sa_rtable_str(t, r, U_CLUSTER, cluster);
    sa_rtable_str(t, r, U_TYPE, u->rows[first].type[0] ? u->rows[first].type : "(untyped)");
    sa_rtable_str(t, r, U_STATE, "(all)");
    sa_rtable_str(t, r, U_CLASS, class_of(cls, buf, sizeof buf));
    sa_rtable_num(t, r, U_GPU_H, cap / 3600.0);
    put_classes(t, r, U_GPU_ALLOC, cls);
    return true;
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
        for (int c = U_NODE_H; c <= U_GPU_UNKNOWN; c++) {
            const sa_cell_t *cell = sa_rtable_cell(t, r, (size_t)c);
            double base = tot[c == U_NODE_H ? 0 : c <= U_CPU_UNKNOWN ? 1 : 2];
            if (cell->kind != SA_CELL_NUM)
                continue;
            sa_rtable_num(t, r, (size_t)c, unit == 1 ? cell->d * 60 : base > 0 ? 100 * cell->d / base : 0);
        }
    }
}

/* The rows of one cluster: all nodes by state, each GPU type by state and "(all)", unknown GPU configurations. */
static bool cluster_rows(const sa_report_opts_t *o, const char *cluster, const sa_util_t *u, int unit, sa_rtable_t *t)
{
    size_t first = t->nrows, i = 0;

    while (i < u->nrows) {
        size_t j = i + 1;
        if (!add_row(o, t, cluster, &u->rows[i]))
            return false;
        if (!u->rows[i].type || u->rows[i].config_unknown) {
            i++;
            continue;
        }
        while (j < u->nrows && u->rows[j].type && !u->rows[j].config_unknown &&
               strcmp(u->rows[j].type, u->rows[i].type) == 0) {
            if (!add_row(o, t, cluster, &u->rows[j]))
                return false;
            j++;
        }
        if (!o->unusable_only && !add_type_total(t, cluster, u, i, j))
            return false;
        i = j;
    }
    convert_rows(t, first, unit);
    return true;
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
    json_object_update_new(jcl, json_pack("{s:s, s:s?, s:s?, s:f, s:f, s:f, s:f, s:f}", "name", cluster,
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

bool sa_util_prepare(const sa_report_opts_t *o, sa_rtsdbs_t *tsdbs, sa_strv_t *clusters, bool planned,
                     sa_ualloc_t **alloc, sa_error_t *error)
{
    size_t docs = 0; /* usage's reading says how many under -v */

    *alloc = NULL;
    if (o->start == SA_UNSET || o->end == SA_UNSET || o->end <= o->start) {
        sa_error_set(error, SA_ERR_USAGE, 0, "utilization needs a non-empty window: --month YYYY-MM, or -S START [-E END]");
        return false;
    }
    if (!util_clusters(o, tsdbs, clusters, error))
        return false;
    if (!(*alloc = calloc(clusters->n + 1, sizeof **alloc)))
        return sa_error_nomem(error);
    return sa_util_read_alloc(o, clusters, tsdbs, planned, *alloc, &docs, error);
}

void sa_util_free_alloc(sa_ualloc_t *alloc, size_t n)
{
    for (size_t i = 0; alloc && i < n; i++)
        sa_ualloc_clear(&alloc[i]);
    free(alloc);
}

bool sa_report_utilization(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, preamble;
    sa_rtable_t t;
    sa_ualloc_t *alloc = NULL;
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
    if (!sa_util_prepare(o, &tsdbs, &clusters, o->summary, &alloc, error))
        goto done;
    if (o->summary) {
        ok = sa_report_utilization_summary(o, &clusters, &tsdbs, alloc, out, error);
        goto done;
    }
    sa_rpreamble_add(&preamble, "GPU and CPU time by exact node state from %s to %s (UTC, end excluded)",
                     sa_riso(o->start), sa_riso(o->end));
    for (size_t i = 0; i < clusters.n; i++) {
        sa_tsdb_t *db;
        sa_util_t u;
        json_t *jc = json_object();
        bool cok = sa_rtsdbs_get(&tsdbs, o, clusters.v[i], true, &db, error) &&
                   sa_util_compute(db, clusters.v[i], o->start, o->end, &alloc[i], &u, error) &&
                   cluster_coverage(o, db, clusters.v[i], &preamble, jc, error) &&
                   sa_util_notes(clusters.v[i], &u, &alloc[i], &preamble, jc) &&
                   (cluster_rows(o, clusters.v[i], &u, unit, &t) || sa_error_nomem(error));
        json_array_append_new(jcl, jc);
        sa_util_clear(&u);
        if (!cok)
            goto done;
    }
    sa_rpreamble_add(&preamble, "Rows with GPU type * are all nodes; a GPU type's rows count the nodes having that "
                                "type (a node with two types counts in both); state (all) sums a type's states.");
    sa_rpreamble_add(&preamble, "Class: what the row's GPU time was (its CPU time when it has no GPUs): allocated "
                                "(to jobs); the free time by the node's state: idle (usable), stranded (no free CPU: "
                                "ALLOCATED, or MIXED with no idle CPU), down (DOWN, FAIL, DRAIN), planned_down "
                                "(maintenance, powered down, not yet in service), reserved (RESERVED); unknown "
                                "(use nobody said). Unusable: free in any class but idle, the reason says why. The "
                                "same classes as --summary, the site and the metrics.");
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
    sa_util_free_alloc(alloc, clusters.n);
    json_decref(jcl);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&clusters);
    sa_strv_clear(&preamble);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
