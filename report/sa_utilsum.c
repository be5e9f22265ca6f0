/*
 * sa_utilsum.c - `slurm-report utilization --summary`: where each cluster's capacity
 * went, as `sreport cluster utilization` says it (allocated, down, planned down, idle,
 * reserved) but from the exact node states the time series keeps (sa_tsdb_state_hours),
 * per cluster for its CPUs, its GPUs and each GPU type: one row each whose classes add
 * to 100 % of its capacity (the GPUs or CPUs of every node in every state over the
 * known time of the window).
 *
 * The classes of a (state, GPU type) row's time:
 *   allocated     GPUs (CPUs) allocated to jobs, in any state;
 *   unknown       GPUs carried from an earlier per-node observation whose use nobody said;
 *   then the rest (idle GPUs, idle and "other" CPUs) by the node's state, first match:
 *   planned_down  a MAINT(ENANCE) flag (a maintenance reservation: sreport's PLND DOWN);
 *   down          base DOWN, or FAIL or DRAIN flags (CPUs: also the "other" CPUs, which
 *                 Slurm counts neither allocated nor idle);
 *   reserved      a RESERVED flag;
 *   stranded      GPUs idle where no job could use them: no free CPU (ALLOCATED, or
 *                 MIXED without an idle CPU; sa_tsdb_strand_reason);
 *   idle          the rest.
 */
#include "sa_rcommon.h"

#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"

enum { K_ALLOC, K_IDLE, K_STRANDED, K_DOWN, K_PLANNED, K_RESERVED, K_UNKNOWN, K_N };
enum { S_CLUSTER, S_RES, S_TYPE, S_CAP, S_CLASS, S_N = S_CLASS + K_N };

static const char *const class_keys[K_N] = {"allocated", "idle", "stranded", "down", "planned_down", "reserved",
                                            "unknown"};
static const char *const class_titles[K_N] = {"Allocated", "Idle", "Stranded", "Down", "Planned down", "Reserved",
                                              "Unknown"};

/* The columns: keys, capacity in hours, each class in the unit (0 hours, 1 minutes, 2 percent). */
static void sum_columns(int unit, sa_col_t *cols, char keys[K_N][32], char titles[K_N][32])
{
    static const char *const suffix[3] = {"hours", "minutes", "percent"};
    cols[S_CLUSTER] = (sa_col_t){"cluster", "Cluster", SA_COL_STR, 0, 0};
    cols[S_RES] = (sa_col_t){"resource", "Resource", SA_COL_STR, 0, 0};
    cols[S_TYPE] = (sa_col_t){"gpu_type", "GPU type", SA_COL_STR, 0, 0};
    cols[S_CAP] = (sa_col_t){"capacity_hours", "Capacity-h", SA_COL_NUM, 2, 0};
    for (int k = 0; k < K_N; k++) {
        snprintf(keys[k], 32, "%s_%s", class_keys[k], suffix[unit]);
        snprintf(titles[k], 32, "%s%s", class_titles[k], unit == 2 ? " %" : unit == 1 ? " min" : " h");
        cols[S_CLASS + k] = (sa_col_t){keys[k], titles[k], SA_COL_NUM, unit == 1 ? 1 : 2, 0};
    }
}

/* The class of the time of a state that is neither allocated nor of unknown use (see the top). */
static int rest_class(const char *state, double cpu_total, double cpu_idle)
{
    const char *why = sa_tsdb_strand_reason(state, cpu_total, cpu_idle);
    if (state && strstr(state, "MAINT"))
        return K_PLANNED;
    if (!why)
        return K_IDLE;
    if (strcmp(why, "node reserved") == 0)
        return K_RESERVED;
    if (strcmp(why, "no free CPU") == 0)
        return K_STRANDED;
    return K_DOWN;
}

/* One row of the summary being summed: a cluster's CPUs, GPUs, or one GPU type. */
typedef struct {
    char *type; /* NULL: CPUs or all GPUs */
    bool cpu;
    double h[K_N];
} srow_t;

typedef struct {
    srow_t *v;
    size_t n;
    bool per_type; /* the BY_GPU_TYPE pass */
} srows_t;

static srow_t *row_get(srows_t *rs, bool cpu, const char *type)
{
    srow_t *v;
    for (size_t i = 0; i < rs->n; i++) {
        if (rs->v[i].cpu == cpu && ((!type && !rs->v[i].type) || (type && rs->v[i].type && !strcmp(type, rs->v[i].type))))
            return &rs->v[i];
    }
    if (!(v = realloc(rs->v, (rs->n + 1) * sizeof *v)))
        return NULL;
    rs->v = v;
    v = &rs->v[rs->n];
    memset(v, 0, sizeof *v);
    v->cpu = cpu;
    if (type && !(v->type = strdup(type)))
        return NULL;
    rs->n++;
    return v;
}

/*
 * sa_tsdb_state_hours callback: the BY_STATE pass adds the cluster's CPUs and all its
 * GPUs; the BY_GPU_TYPE pass each type's GPUs (nodes without GPUs, or of unknown GPU
 * configuration, have no type: their CPUs are in the first pass).
 */
static bool add_state(const sa_tsdb_hours_t *h, void *vctx, sa_error_t *error)
{
    srows_t *rs = vctx;
    int rest = rest_class(h->state, h->cpu_hours_total, h->cpu_hours_idle);
    srow_t *g;

    if (rs->per_type && !h->group)
        return true;
    if (!rs->per_type) {
        srow_t *c = row_get(rs, true, NULL);
        if (!c)
            return sa_error_nomem(error);
        c->h[K_ALLOC] += h->cpu_hours_alloc;
        c->h[rest == K_STRANDED ? K_IDLE : rest] += h->cpu_hours_idle; /* an idle CPU is not stranded */
        c->h[K_DOWN] += h->cpu_hours_other;
    }
    if (h->gpu_hours_total <= 0)
        return true;
    if (!(g = row_get(rs, false, rs->per_type ? (h->group[0] ? h->group : "(untyped)") : NULL)))
        return sa_error_nomem(error);
    g->h[K_ALLOC] += h->gpu_hours_used;
    g->h[K_UNKNOWN] += h->gpu_hours_use_unknown;
    g->h[rest] += h->gpu_hours_idle;
    return true;
}

/* The rows of one cluster: CPUs, all GPUs, each GPU type; capacity = the sum of the classes. */
static bool cluster_rows(const sa_report_opts_t *o, sa_tsdb_t *db, const char *cluster, int unit, sa_rtable_t *t,
                         sa_error_t *error)
{
    srows_t rs = {NULL, 0, false};
    bool ok = sa_tsdb_state_hours(db, cluster, o->start, o->end, SA_TSDB_BY_STATE, add_state, &rs, error);

    rs.per_type = true;
    ok = ok && sa_tsdb_state_hours(db, cluster, o->start, o->end, SA_TSDB_BY_GPU_TYPE, add_state, &rs, error);
    for (size_t i = 0; i < rs.n; i++) {
        const srow_t *x = &rs.v[i];
        double cap = 0;
        size_t r = ok ? sa_rtable_add_row(t) : SIZE_MAX;
        if (ok && r == SIZE_MAX)
            ok = sa_error_nomem(error);
        for (int k = 0; k < K_N; k++)
            cap += x->h[k];
        if (ok) {
            sa_rtable_str(t, r, S_CLUSTER, cluster);
            sa_rtable_str(t, r, S_RES, x->cpu ? "cpu" : "gpu");
            sa_rtable_str(t, r, S_TYPE, x->type ? x->type : "*");
            sa_rtable_num(t, r, S_CAP, cap);
            for (int k = 0; k < K_N; k++)
                sa_rtable_num(t, r, S_CLASS + (size_t)k, unit == 2 ? (cap > 0 ? 100 * x->h[k] / cap : 0)
                                                          : unit == 1 ? 60 * x->h[k] : x->h[k]);
        }
        free(rs.v[i].type);
    }
    free(rs.v);
    return ok;
}

bool sa_report_utilization_summary(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_rtsdbs_t *tsdbs,
                                   FILE *out, sa_error_t *error)
{
    sa_col_t cols[S_N];
    char keys[K_N][32], titles[K_N][32];
    sa_strv_t preamble;
    sa_rtable_t t;
    json_t *extra = NULL;
    bool ok = true;
    /* percent unless -t hours or minutes */
    int unit = !o->unit_given || o->unit == SA_UNIT_PERCENT ? 2 : o->unit == SA_UNIT_GPU_MINUTES ? 1 : 0;

    sa_strv_init(&preamble);
    sum_columns(unit, cols, keys, titles);
    sa_rtable_init(&t, cols, S_N);
    for (size_t i = 0; ok && i < clusters->n; i++) {
        sa_tsdb_t *db;
        ok = sa_rtsdbs_get(tsdbs, o, clusters->v[i], true, &db, error) &&
             cluster_rows(o, db, clusters->v[i], unit, &t, error);
    }
    if (ok) {
        sa_rpreamble_add(&preamble, "Capacity from %s to %s (UTC, end excluded) by class, like sreport cluster "
                                    "utilization, from the exact node states of the time series",
                         sa_riso(o->start), sa_riso(o->end));
        sa_rpreamble_add(&preamble, "Capacity: the CPUs (GPUs) of every node in every state x the time the series "
                                    "knows (gaps count nowhere); %s",
                         unit == 2 ? "the classes are percent of it and add to 100 per row"
                                   : unit == 1 ? "the classes in minutes add to it x 60" : "the classes in hours add to it");
        sa_rpreamble_add(&preamble, "Classes: allocated to jobs; unknown (carried GPUs whose use nobody said); the "
                                    "rest by the node's state: planned_down (MAINT), down (DOWN, FAIL, DRAIN; CPUs: "
                                    "also Slurm's other CPUs), reserved (RESERVED), stranded (idle GPUs on a node "
                                    "with no free CPU), idle.");
        extra = json_object();
        json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
        json_object_set_new(extra, "header", sa_rjson_strv(&preamble));
        sa_rdoc_t doc = {.kind = "utilization", .title = "slurm-report: utilization summary", .preamble = &preamble,
                         .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    return ok;
}
