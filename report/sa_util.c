/*
 * sa_util.c - `slurm-report utilization`: where the GPUs' (and CPUs') time went over
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
 * Stranded (idle GPUs nobody can use): the node is DOWN, drained or failing (DRAIN,
 * FAIL), reserved (RESERVED, MAINTENANCE), or has no free CPU: ALLOCATED, or MIXED
 * when no idle CPU-hour was recorded in that state. The state is the unit of the
 * series' aggregation, so a MIXED state that had idle CPUs part of the time counts as
 * usable (the per-interval split would need the raw intervals).
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sa_rutil.h"

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

static bool base_is(const char *state, const char *base)
{
    size_t bl = strlen(base);
    return strncmp(state, base, bl) == 0 && (state[bl] == '\0' || state[bl] == '+');
}

/* True when idle GPUs of nodes in this state (with these CPU hours) are stranded. */
static bool state_strands(const char *state, double cpu_total, double cpu_idle)
{
    if (base_is(state, "DOWN") || base_is(state, "ALLOCATED") || has_flag(state, "DRAIN") ||
        has_flag(state, "FAIL") || has_flag(state, "RESERVED") || has_flag(state, "MAINTENANCE") ||
        has_flag(state, "MAINT"))
        return true;
    return base_is(state, "MIXED") && cpu_total > 0 && cpu_idle <= 0;
}

enum { U_CLUSTER, U_TYPE, U_STATE, U_CLASS, U_NODE_H, U_CPU_H, U_CPU_ALLOC, U_CPU_IDLE, U_CPU_OTHER, U_GPU_H,
       U_GPU_USED, U_GPU_IDLE, U_GPU_STRANDED, U_N };

static const sa_col_t util_cols[U_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0},
    {"gpu_type", "GPU type", SA_COL_STR, 0},
    {"state", "Node state", SA_COL_STR, 0},
    {"class", "Class", SA_COL_STR, 0},
    {"node_hours", "Node-h", SA_COL_NUM, 2},
    {"cpu_hours", "CPU-h", SA_COL_NUM, 2},
    {"cpu_alloc_hours", "CPU-h alloc", SA_COL_NUM, 2},
    {"cpu_idle_hours", "CPU-h idle", SA_COL_NUM, 2},
    {"cpu_other_hours", "CPU-h other", SA_COL_NUM, 2},
    {"gpu_hours", "GPU-h", SA_COL_NUM, 2},
    {"gpu_used_hours", "GPU-h used", SA_COL_NUM, 2},
    {"gpu_idle_hours", "GPU-h idle", SA_COL_NUM, 2},
    {"gpu_stranded_hours", "GPU-h stranded", SA_COL_NUM, 2},
};

/* Per-type totals while the rows of one cluster are read. */
typedef struct {
    char *type;
    double total, used, idle, stranded;
} type_sum_t;

typedef struct {
    sa_rtable_t *t;
    const char *cluster;
    bool per_type;
    type_sum_t *sums;
    size_t nsums;
    double all_gpu, all_used, all_idle, all_stranded;
} rows_ctx_t;

/* sa_tsdb_state_hours callback: one row per (group, state). */
static bool add_row(const sa_tsdb_hours_t *h, void *vctx, sa_error_t *error)
{
    rows_ctx_t *c = vctx;
    size_t r;
    bool stranded = state_strands(h->state, h->cpu_hours_total, h->cpu_hours_idle);

    if (c->per_type && !h->group)
        return true; /* nodes without GPUs: in the "*" rows */
    if ((r = sa_rtable_add_row(c->t)) == SIZE_MAX) {
        sa_error_set(error, SA_ERR_SQLITE, ENOMEM, "out of memory");
        return false;
    }
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
    if (c->per_type) {
        type_sum_t *s = c->nsums ? &c->sums[c->nsums - 1] : NULL;
        sa_rtable_str(c->t, r, U_CLASS, stranded ? "stranded" : "usable");
        sa_rtable_num(c->t, r, U_GPU_STRANDED, stranded ? h->gpu_hours_idle : 0);
        if (!s || strcmp(s->type, h->group) != 0) { /* rows come sorted by group */
            type_sum_t *v = realloc(c->sums, (c->nsums + 1) * sizeof *v);
            if (!v) {
                sa_error_set(error, SA_ERR_SQLITE, ENOMEM, "out of memory");
                return false;
            }
            c->sums = v;
            s = &c->sums[c->nsums++];
            memset(s, 0, sizeof *s);
            s->type = strdup(h->group);
        }
        s->total += h->gpu_hours_total;
        s->used += h->gpu_hours_used;
        s->idle += h->gpu_hours_idle;
        if (stranded)
            s->stranded += h->gpu_hours_idle;
    } else if (h->gpu_hours_total > 0) {
        sa_rtable_num(c->t, r, U_GPU_STRANDED, stranded ? h->gpu_hours_idle : 0);
        sa_rtable_str(c->t, r, U_CLASS, stranded ? "stranded" : "usable");
    }
    return true;
}

/* The cluster's first snapshot time (SA_UNSET when none): the read API has no call for it. */
static bool first_snapshot(sa_tsdb_t *db, const char *cluster, int64_t *at, sa_error_t *error)
{
    sqlite3 *h = sa_tsdb_handle(db);
    sqlite3_stmt *st = NULL;
    int rc;

    *at = SA_UNSET;
    if (sqlite3_prepare_v2(h, "SELECT min(s.at) FROM snapshot s JOIN cluster c ON c.id = s.cluster_id WHERE c.name = ?1",
                           -1, &st, NULL) != SQLITE_OK) {
        sa_error_set(error, SA_ERR_SQLITE, 0, "%s: %s", sa_tsdb_path(db), sqlite3_errmsg(h));
        return false;
    }
    sqlite3_bind_text(st, 1, cluster, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *at = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sa_error_set(error, SA_ERR_SQLITE, 0, "%s: %s", sa_tsdb_path(db), sqlite3_errmsg(h));
        return false;
    }
    return true;
}

/* The clusters of a --sqlite file (when -M is not given). */
static bool series_clusters(sa_tsdb_t *db, sa_strv_t *out, sa_error_t *error)
{
    sqlite3 *h = sa_tsdb_handle(db);
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(h, "SELECT name FROM cluster ORDER BY name", -1, &st, NULL) != SQLITE_OK) {
        sa_error_set(error, SA_ERR_SQLITE, 0, "%s: %s", sa_tsdb_path(db), sqlite3_errmsg(h));
        return false;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        sa_strv_push(out, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        sa_error_set(error, SA_ERR_SQLITE, 0, "%s: %s", sa_tsdb_path(db), sqlite3_errmsg(h));
        return false;
    }
    return true;
}

bool sa_report_utilization(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, preamble;
    sa_rtable_t t;
    json_t *extra = NULL, *jcl = json_array();
    bool ok = false;
    double window_h;

    (void)warn;
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&clusters);
    sa_strv_init(&preamble);
    sa_rtable_init(&t, util_cols, U_N);
    if (o->start == SA_UNSET || o->end == SA_UNSET || o->end <= o->start) {
        sa_error_set(error, SA_ERR_USAGE, 0, "utilization needs a non-empty window: --month YYYY-MM, or -S START [-E END]");
        goto done;
    }
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for utilization", sa_format_name(o->format));
        goto done;
    }
    window_h = (double)(o->end - o->start) / 3600.0;
    /* the clusters: -M, else every cluster of the --sqlite file, else the archive's */
    for (size_t i = 0; i < o->clusters.n; i++)
        sa_strv_push(&clusters, o->clusters.v[i]);
    if (!clusters.n && o->sqlite_path) {
        sa_tsdb_t *db;
        if (!sa_rtsdbs_get(&tsdbs, o, "", true, &db, error) || !series_clusters(db, &clusters, error))
            goto done;
    } else if (!clusters.n) {
        sa_rdb_t *db = sa_report_connect(o, error);
        sa_rclusters_t rc;
        if (!db)
            goto done;
        if (!sa_rdb_clusters(db, &o->clusters, &rc, error)) {
            sa_rdb_close(db);
            goto done;
        }
        for (size_t i = 0; i < rc.n; i++)
            sa_strv_push(&clusters, rc.v[i].name);
        sa_rclusters_clear(&rc);
        sa_rdb_close(db);
    }

    sa_rpreamble_add(&preamble, "GPU and CPU time by exact node state from %s to %s (UTC, end excluded)",
                    sa_riso(o->start), sa_riso(o->end));
    for (size_t i = 0; i < clusters.n; i++) {
        sa_tsdb_t *db;
        int64_t gap = 0, last = SA_UNSET, first = SA_UNSET;
        rows_ctx_t c = {&t, clusters.v[i], false, NULL, 0, 0, 0, 0, 0};
        double gap_h;
        if (!sa_rtsdbs_get(&tsdbs, o, clusters.v[i], true, &db, error) ||
            !sa_tsdb_last_snapshot(db, clusters.v[i], &last, error) || !first_snapshot(db, clusters.v[i], &first, error) ||
            !sa_tsdb_gap_seconds(db, clusters.v[i], o->start, o->end, &gap, error) ||
            !sa_tsdb_state_hours(db, clusters.v[i], o->start, o->end, SA_TSDB_BY_STATE, add_row, &c, error))
            goto done;
        c.per_type = true;
        if (!sa_tsdb_state_hours(db, clusters.v[i], o->start, o->end, SA_TSDB_BY_GPU_TYPE, add_row, &c, error)) {
            for (size_t k = 0; k < c.nsums; k++)
                free(c.sums[k].type);
            free(c.sums);
            goto done;
        }
        for (size_t k = 0; k < c.nsums; k++) {
            size_t r = sa_rtable_add_row(&t);
            if (r != SIZE_MAX) {
                sa_rtable_str(&t, r, U_CLUSTER, clusters.v[i]);
                sa_rtable_str(&t, r, U_TYPE, c.sums[k].type[0] ? c.sums[k].type : "(untyped)");
                sa_rtable_str(&t, r, U_STATE, "(all)");
                sa_rtable_num(&t, r, U_GPU_H, c.sums[k].total);
                sa_rtable_num(&t, r, U_GPU_USED, c.sums[k].used);
                sa_rtable_num(&t, r, U_GPU_IDLE, c.sums[k].idle);
                sa_rtable_num(&t, r, U_GPU_STRANDED, c.sums[k].stranded);
            }
            free(c.sums[k].type);
        }
        free(c.sums);
        gap_h = (double)gap / 3600.0;
        /* time before the first and after the last snapshot is unknown too */
        {
            double before_h = 0, after_h = 0, known_h;
            if (last == SA_UNSET || first == SA_UNSET) {
                before_h = window_h;
            } else {
                int64_t b = first < o->end ? first : o->end, a = last > o->start ? last : o->start;
                before_h = b > o->start ? (double)(b - o->start) / 3600.0 : 0;
                after_h = a < o->end ? (double)(o->end - a) / 3600.0 : 0;
                if (before_h + after_h > window_h) /* the series is outside the window */
                    after_h = window_h - before_h;
            }
            known_h = window_h - gap_h - before_h - after_h;
            sa_rpreamble_add(&preamble,
                             "%s: snapshots %s to %s; of the window's %.2f h, %.2f h are known; unknown: %.2f h "
                             "before the first snapshot, %.2f h of gaps, %.2f h after the last",
                             clusters.v[i], first == SA_UNSET ? "none" : sa_riso(first),
                             last == SA_UNSET ? "none" : sa_riso(last), window_h, known_h, before_h, gap_h, after_h);
            json_array_append_new(jcl, json_pack("{s:s, s:s?, s:s?, s:f, s:f, s:f, s:f, s:f}", "name", clusters.v[i],
                                                 "first_snapshot", first == SA_UNSET ? NULL : sa_riso(first),
                                                 "last_snapshot", last == SA_UNSET ? NULL : sa_riso(last),
                                                 "window_hours", window_h, "known_hours", known_h,
                                                 "before_first_snapshot_hours", before_h, "gap_hours", gap_h,
                                                 "after_last_snapshot_hours", after_h));
        }
    }
    sa_rpreamble_add(&preamble, "Rows with GPU type * are all nodes; a GPU type's rows count the nodes having that "
                               "type (a node with two types counts in both); state (all) sums a type's states.");
    sa_rpreamble_add(&preamble, "Stranded: idle GPUs on nodes DOWN, drained or failing (DRAIN, FAIL), reserved "
                               "(RESERVED, MAINTENANCE), or with no free CPU (ALLOCATED; MIXED with no idle CPU).");
    sa_rpreamble_add(&preamble, "Time between snapshots further apart than the ingester's gap limit is unknown and "
                               "counted nowhere.");
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "clusters", jcl);
    jcl = NULL;
    json_object_set_new(extra, "notes", sa_rjson_strv(&preamble));
    ok = sa_rwrite_table_doc(o, "slurm-report: utilization", &preamble, &t, extra, out, error);
done:
    json_decref(jcl);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&clusters);
    sa_strv_clear(&preamble);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
