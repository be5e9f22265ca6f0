/*
 * sa_utilsum.c - `slurm-report utilization --summary`: where each cluster's capacity went,
 * as `sreport cluster utilization` says it (allocated, down, planned down, idle, planned),
 * with our classes beside (stranded, reserved, unknown): per cluster a row for its CPUs,
 * its memory, its GPUs and each GPU type, whose classes add to 100 % of its capacity (the
 * CPUs, memory or GPUs of every node in every state over the time the series knows).
 *
 * The figures are the table's (sa_util_compute: the runs' allocation, the rest by the node
 * states, hour by hour, sa_utilcalc.h), summed by class; planned (CPUs only) is slurmdbd's:
 * the CPU time eligible pending jobs waited for, at most each hour's idle CPU time, taken
 * out of idle.
 */
#include "sa_rcommon.h"

#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_util.h"

/* The summary's classes, in column order. */
static const sa_uclass_t col_class[] = {SA_UC_ALLOCATED, SA_UC_IDLE,   SA_UC_PLANNED,  SA_UC_STRANDED,
                                        SA_UC_DOWN,      SA_UC_PLANNED_DOWN, SA_UC_RESERVED, SA_UC_UNKNOWN};
#define K_N (sizeof col_class / sizeof col_class[0])
enum { S_CLUSTER, S_RES, S_TYPE, S_CAP, S_CLASS, S_N = S_CLASS + K_N };

static const char *const class_titles[K_N] = {"Allocated", "Idle", "Planned", "Stranded", "Down", "Planned down",
                                              "Reserved", "Unknown"};

/* The columns: keys, capacity in hours, each class in the unit (0 hours, 1 minutes, 2 percent). */
static void sum_columns(int unit, sa_col_t *cols, char keys[K_N][32], char titles[K_N][32])
{
    static const char *const suffix[3] = {"hours", "minutes", "percent"};
    cols[S_CLUSTER] = (sa_col_t){"cluster", "Cluster", SA_COL_STR, 0, 0};
    cols[S_RES] = (sa_col_t){"resource", "Resource", SA_COL_STR, 0, 0};
    cols[S_TYPE] = (sa_col_t){"gpu_type", "GPU type", SA_COL_STR, 0, 0};
    cols[S_CAP] = (sa_col_t){"capacity_hours", "Capacity-h", SA_COL_NUM, 2, 0};
    for (size_t k = 0; k < K_N; k++) {
        snprintf(keys[k], 32, "%s_%s", sa_uclass_name(col_class[k]), suffix[unit]);
        snprintf(titles[k], 32, "%s%s", class_titles[k], unit == 2 ? " %" : unit == 1 ? " min" : " h");
        cols[S_CLASS + k] = (sa_col_t){keys[k], titles[k], SA_COL_NUM, unit == 1 ? 1 : 2, 0};
    }
}

/* One row: a resource's capacity and classes in resource-seconds (scale: to the row's unit-hours). */
static bool put_row(sa_rtable_t *t, const char *cluster, const char *res, const char *type, const double *cls,
                    double scale, int unit)
{
    double cap = 0;
    size_t r;

    for (int c = 0; c < SA_UC_N; c++)
        cap += cls[c];
    if (!(cap > 0))
        return true;
    if ((r = sa_rtable_add_row(t)) == SIZE_MAX)
        return false;
    sa_rtable_str(t, r, S_CLUSTER, cluster);
    sa_rtable_str(t, r, S_RES, res);
    sa_rtable_str(t, r, S_TYPE, type);
    sa_rtable_num(t, r, S_CAP, cap / scale);
    for (size_t k = 0; k < K_N; k++) {
        double v = cls[col_class[k]];
        sa_rtable_num(t, r, S_CLASS + k, unit == 2 ? 100 * v / cap : unit == 1 ? 60 * v / scale : v / scale);
    }
    return true;
}

size_t sa_util_summary_classes(const sa_util_t *u, double all[SA_UR_N][SA_UC_N])
{
    size_t i = 0;

    memset(all, 0, sizeof(double) * SA_UR_N * SA_UC_N);
    for (; i < u->nrows && !u->rows[i].type && !u->rows[i].config_unknown; i++) {
        for (int r = 0; r < SA_UR_N; r++) {
            for (int c = 0; c < SA_UC_N; c++)
                all[r][c] += u->rows[i].cls[r][c];
        }
    }
    all[SA_UR_CPU][SA_UC_IDLE] -= u->planned;
    all[SA_UR_CPU][SA_UC_PLANNED] += u->planned;
    return i;
}

/* The rows of one cluster: CPUs (planned taken out of idle), memory, all GPUs, each GPU type. */
static bool cluster_rows(const char *cluster, const sa_util_t *u, int unit, sa_rtable_t *t)
{
    double all[SA_UR_N][SA_UC_N];
    size_t i = sa_util_summary_classes(u, all);

    if (!put_row(t, cluster, "cpu", "*", all[SA_UR_CPU], 3600.0, unit) ||
        !put_row(t, cluster, "mem", "*", all[SA_UR_MEM], 3600.0 * 1024, unit) ||
        !put_row(t, cluster, "gpu", "*", all[SA_UR_GPU], 3600.0, unit))
        return false;
    while (i < u->nrows && u->rows[i].type) {
        double cls[SA_UC_N] = {0};
        size_t j = i;
        for (; j < u->nrows && u->rows[j].type && strcmp(u->rows[j].type, u->rows[i].type) == 0; j++) {
            for (int c = 0; c < SA_UC_N; c++)
                cls[c] += u->rows[j].cls[SA_UR_GPU][c];
        }
        if (!put_row(t, cluster, "gpu", u->rows[i].type[0] ? u->rows[i].type : "(untyped)", cls, 3600.0, unit))
            return false;
        i = j;
    }
    return true;
}

/* The planned time's preamble line and JSON members of a cluster. */
static void planned_notes(const char *cluster, const sa_util_t *u, const sa_ualloc_t *a, sa_strv_t *p, json_t *jc)
{
    json_object_set_new(jc, "planned_cpu_hours", json_real(u->planned / 3600.0));
    json_object_set_new(jc, "planned_raw_cpu_hours", json_real(u->planned_raw / 3600.0));
    if (!u->has_planned) {
        sa_rpreamble_add(p, "%s: planned not counted: %s", cluster,
                         a->exact ? "it is read from the rollups' started and job lists (not with --from-jobs, nor "
                                    "before slurm-ingest has built them)"
                                  : "the pending jobs are known from the archive only");
        return;
    }
    sa_rpreamble_add(p, "%s: planned %.2f CPU-hours of the %.2f the pending jobs waited (the rest was more than the "
                        "idle CPU time of its hour); %zu job(s) that never started (%zu of them from their documents), "
                        "%zu pending job(s) without an eligible time not counted",
                     cluster, u->planned / 3600.0, u->planned_raw / 3600.0, a->plan_listed + a->plan_docs, a->plan_docs,
                     a->plan_unknown);
}

bool sa_report_utilization_summary(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_rtsdbs_t *tsdbs,
                                   const sa_ualloc_t *alloc, FILE *out, sa_error_t *error)
{
    sa_col_t cols[S_N];
    char keys[K_N][32], titles[K_N][32];
    sa_strv_t preamble, notes;
    sa_rtable_t t;
    json_t *extra = NULL, *jcl = json_array();
    bool ok = true;
    /* percent unless -t hours or minutes */
    int unit = !o->unit_given || o->unit == SA_UNIT_PERCENT ? 2 : o->unit == SA_UNIT_GPU_MINUTES ? 1 : 0;

    sa_strv_init(&preamble);
    sa_strv_init(&notes);
    sum_columns(unit, cols, keys, titles);
    sa_rtable_init(&t, cols, S_N);
    for (size_t i = 0; ok && i < clusters->n; i++) {
        sa_tsdb_t *db;
        sa_util_t u;
        json_t *jc = json_pack("{s:s}", "name", clusters->v[i]);
        ok = sa_rtsdbs_get(tsdbs, o, clusters->v[i], true, &db, error) &&
             sa_util_compute(db, clusters->v[i], o->start, o->end, &alloc[i], &u, error) &&
             sa_util_notes(clusters->v[i], &u, &alloc[i], &notes, jc) &&
             (cluster_rows(clusters->v[i], &u, unit, &t) || sa_error_nomem(error));
        if (ok)
            planned_notes(clusters->v[i], &u, &alloc[i], &notes, jc);
        json_array_append_new(jcl, jc);
        sa_util_clear(&u);
    }
    if (ok) {
        sa_rpreamble_add(&preamble, "Capacity from %s to %s (UTC, end excluded) by class, like sreport cluster "
                                    "utilization: the allocated time from the runs, the rest by the exact node states "
                                    "of the time series",
                         sa_riso(o->start), sa_riso(o->end));
        sa_rpreamble_add(&preamble, "Capacity: the CPUs (memory in GB, GPUs) of every node in every state x the time "
                                    "the series knows (gaps count nowhere); %s",
                         unit == 2 ? "the classes are percent of it and add to 100 per row"
                                   : unit == 1 ? "the classes in minutes add to it x 60" : "the classes in hours add to it");
        sa_rpreamble_add(&preamble, "Classes: allocated to jobs (the runs' exact start and end, as usage counts them, "
                                    "at most the capacity of each hour, as slurmdbd counts it); the free time by the "
                                    "node's state: planned_down (maintenance, powered down: sreport's PLND Down), down "
                                    "(DOWN, FAIL, DRAIN; CPUs: also Slurm's other CPUs: sreport's Down), reserved "
                                    "(RESERVED: sreport counts a reservation as allocated), stranded (GPUs and memory "
                                    "on a node with no free CPU), idle; unknown (use nobody said).");
        sa_rpreamble_add(&preamble, "Planned (CPUs, as slurmdbd's hourly rollup counts it): each job eligible to run "
                                    "and not started, not in a reservation, counts its requested CPUs (allocated "
                                    "ones for the runs that started: the rollups keep those) x the seconds from its "
                                    "eligible time to its start (or its end) in each hour, x its pending array "
                                    "tasks; at most the hour's idle CPU time, taken out of idle.");
        for (size_t i = 0; i < notes.n; i++)
            sa_rpreamble_add(&preamble, "%s", notes.v[i]);
        extra = json_object();
        json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
        json_object_set_new(extra, "clusters", jcl);
        jcl = NULL;
        json_object_set_new(extra, "header", sa_rjson_strv(&preamble));
        sa_rdoc_t doc = {.kind = "utilization", .title = "slurm-report: utilization summary", .preamble = &preamble,
                         .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
    json_decref(jcl);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    sa_strv_clear(&notes);
    return ok;
}
