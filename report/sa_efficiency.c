/*
 * sa_efficiency.c - `slurm-report efficiency`: what the allocated GPUs and CPUs did, by
 * cluster, account, user and GPU type, over a window; and the per-run figures both it
 * and `slurm-report job` use (sa_efficiency.h).
 *
 * Rules (stated in every output's preamble):
 * - A run counts when it ended in the window [start, end), whole: usage is known only
 *   once a run ended, so the GPU-hours here are those of whole runs (the usage report
 *   clips runs to its window instead). Every run of a requeued job counts, and
 *   jobs_superseded too.
 * - GPU-hours = allocated GPUs x elapsed. A run's GPU utilisation is its
 *   runs[].usage.gpu_util_pct (per allocated GPU), else the Prometheus import's
 *   runs[].prom.gpu_util_mean (sa_eff_run; the Util source column says which). Idle GPU-hours: of runs whose
 *   utilisation is known and under --idle-threshold (default 5 %). Mean utilisation:
 *   weighted by GPU-hours over the runs that have one. No usage data: GPU-hours of
 *   runs without a utilisation (Slurm gathered none: no acct_gather_gpu), never
 *   counted as 0 %.
 * - CPU efficiency = sum TotalCPU / sum (elapsed x CPUs), memory efficiency = sum
 *   MaxRSS / sum requested memory, each over the runs that have both figures (seff's
 *   per-job figures, weighted by what was allocated).
 * - GPU type: the run's typed GPUs; untyped GPUs the type slurm-ingest found on the run's
 *   nodes (runs[].gpu_type), else "unknown"; CPU-only runs "none". A
 *   run of several types adds to each type its share (GPUs of the type / GPUs).
 * Sums are integers (GPU-seconds, CPU milliseconds, KiB, thousandths of a percent x
 * GPU-seconds), so results do not depend on the order documents arrive in.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_rcommon.h"
#include "sa_efficiency.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_rollup_reader.h"
#include "sa_rollup.h"
#include "sa_usage.h"
#include "sa_vec.h"

/* ---- columns ------------------------------------------------------------------------------ */

enum { E_CLUSTER, E_ACCOUNT, E_USER, E_TYPE, E_RUNS, E_GPU_RUNS, E_GPU_HOURS, E_IDLE_HOURS, E_IDLE_PCT, E_UTIL,
       E_NODATA_HOURS, E_NODATA_PCT, E_CPU_EFF, E_MEM_EFF, E_CPU_USED, E_CPU_ALLOC, E_MEM_RUNS, E_UTIL_SRC, E_N };

static const sa_col_t all_cols[E_N] = {
    [E_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, 0},
    [E_ACCOUNT] = {"account", "Account", SA_COL_STR, 0, 0},
    [E_USER] = {"user", "User", SA_COL_STR, 0, 0},
    [E_TYPE] = {"gpu_type", "GPU type", SA_COL_STR, 0, 0},
    [E_RUNS] = {"runs", "Runs", SA_COL_INT, 0, 0},
    [E_GPU_RUNS] = {"gpu_runs", "GPU runs", SA_COL_INT, 0, SA_COL_LONG},
    [E_GPU_HOURS] = {"gpu_hours", "GPU-hours", SA_COL_NUM, 2, 0},
    [E_IDLE_HOURS] = {"idle_gpu_hours", "Idle GPU-h", SA_COL_NUM, 2, 0},
    [E_IDLE_PCT] = {"idle_percent", "% idle", SA_COL_NUM, 1, SA_COL_LONG},
    [E_UTIL] = {"gpu_util_percent", "GPU util %", SA_COL_NUM, 1, 0},
    [E_NODATA_HOURS] = {"no_data_gpu_hours", "No-data GPU-h", SA_COL_NUM, 2, SA_COL_LONG},
    [E_NODATA_PCT] = {"no_data_percent", "% no data", SA_COL_NUM, 1, 0},
    [E_CPU_EFF] = {"cpu_efficiency_percent", "CPU eff %", SA_COL_NUM, 1, 0},
    [E_MEM_EFF] = {"mem_efficiency_percent", "Mem eff %", SA_COL_NUM, 1, 0},
    [E_CPU_USED] = {"cpu_hours_used", "CPU-h used", SA_COL_NUM, 2, SA_COL_LONG},
    [E_CPU_ALLOC] = {"cpu_hours_allocated", "CPU-h alloc", SA_COL_NUM, 2, SA_COL_LONG},
    [E_MEM_RUNS] = {"mem_runs", "Runs with memory", SA_COL_INT, 0, SA_COL_LONG},
    [E_UTIL_SRC] = {"gpu_util_source", "Util source", SA_COL_STR, 0, 0},
};

const sa_col_t *sa_efficiency_cols(size_t *n)
{
    *n = E_N;
    return all_cols;
}

/* ---- the sums ------------------------------------------------------------------------------ */

/* The sums of one key (cluster, account, user, GPU type as interned ids). */
typedef struct {
    sa_ukey_t k; /* first: sa_ukeyidx_t finds it there */
    int64_t runs, gpu_runs, mem_runs;
    int64_t gpu_s, idle_gpu_s, nodata_gpu_s, util_gpu_s;
    int64_t util_mpct_s;              /* sum of round(util x 1000) x GPU-seconds */
    int64_t cpu_used_ms, cpu_alloc_s; /* runs with has_cpu */
    int64_t mem_used_kib, mem_req_kib; /* runs with has_mem */
    int64_t prom_s;                    /* of util_gpu_s, Prometheus's (runs[].prom) */
} eacc_t;
_Static_assert(offsetof(eacc_t, k) == 0, "sa_ukeyidx_t finds a record's key at its start");

typedef struct {
    const sa_report_opts_t *o;
    unsigned by;
    double threshold;
    sa_rintern_t names;
    eacc_t *v;
    size_t n, cap;
    sa_ukeyidx_t idx; /* v by key */
    uint32_t cluster, none_id, unknown_id, empty_id;
    sa_jobview_t view;
    sa_rollup_contrib_t contrib; /* the current document's runs, by day */
    size_t docs_read;      /* rollup documents read */
} eff_t;

/* The accumulator of a key (created zero), or NULL on out of memory. */
static eacc_t *acc_get(eff_t *e, uint32_t a, uint32_t u, uint32_t t)
{
    sa_ukey_t k = {e->cluster, a, u, t};
    uint32_t *slot = sa_ukeyidx_slot(&e->idx, &k, e->v, e->n, sizeof *e->v);
    eacc_t *x;

    if (!slot)
        return NULL;
    if (*slot)
        return &e->v[*slot - 1];
    if (!SA_VEC_GROW(e->v, e->cap, e->n, 1, 64))
        return NULL;
    x = &e->v[e->n];
    memset(x, 0, sizeof *x);
    x->k = k;
    *slot = (uint32_t)++e->n;
    return x;
}

/* Adds an ended run's efficiency figures of one record (sa_rollup.h) to x. */
static void acc_add(eacc_t *x, const int64_t *r)
{
    x->runs += r[SA_RR_E_RUNS];
    x->gpu_runs += r[SA_RR_E_GPU_RUNS];
    x->mem_runs += r[SA_RR_E_MEM_RUNS];
    x->gpu_s += r[SA_RR_E_GPU_S];
    x->idle_gpu_s += r[SA_RR_E_IDLE_S];
    x->nodata_gpu_s += r[SA_RR_E_NODATA_S];
    x->util_gpu_s += r[SA_RR_E_UTIL_S];
    x->util_mpct_s += r[SA_RR_E_UTIL_MPCT_S];
    x->cpu_used_ms += r[SA_RR_E_CPU_USED_MS];
    x->cpu_alloc_s += r[SA_RR_E_CPU_ALLOC_S];
    x->mem_used_kib += r[SA_RR_E_MEM_USED_KIB];
    x->mem_req_kib += r[SA_RR_E_MEM_REQ_KIB];
    x->prom_s += r[SA_RR_E_PROM_S];
}

/* True when a record or row carries efficiency figures (its run ended there). */
static bool has_eff(const int64_t *e)
{
    for (int i = 0; i < SA_RR_E_END - SA_RR_E_RUNS; i++) {
        if (e[i])
            return true;
    }
    return false;
}

/* The accumulator of a rollup key, by the --by keys; NULL on out of memory. */
static eacc_t *acc_of_key(eff_t *e, const sa_rollup_rowkey_t *k)
{
    uint32_t a = e->empty_id, u = e->empty_id, t = e->empty_id;
    if (e->by & SA_BY_ACCOUNT)
        a = sa_rintern(&e->names, k->s[0]);
    if (e->by & SA_BY_USER)
        u = sa_rintern(&e->names, k->s[1]);
    if (e->by & SA_BY_GPU_TYPE)
        t = k->s[4][0] ? sa_rintern(&e->names, k->s[4]) : e->none_id;
    if (a == UINT32_MAX || u == UINT32_MAX || t == UINT32_MAX)
        return NULL;
    return acc_get(e, a, u, t);
}

/*
 * Every run of a document that ended in the window, from its contribution (the one run
 * source, schema/jobdoc/sa_rollup.h): the records that carry a run's end.
 */
static bool on_doc(const bson_t *doc, void *ctx, sa_error_t *error)
{
    eff_t *e = ctx;
    const sa_rollup_contrib_t *c = &e->contrib;

    if (!sa_jobview_read(&e->view, doc, error) || !sa_rollup_contrib_of(&e->contrib, &e->view, error))
        return false;
    for (size_t d = 0; d < c->ndocs; d++) {
        if (c->docs[d].kind != SA_ROLLUP_K_MEMBERS)
            continue; /* runs end on days; the job lists hold no efficiency */
        for (size_t i = 0; i < c->docs[d].nrec; i++) {
            const int64_t *r = &c->docs[d].rec[i * SA_RR_NF];
            eacc_t *x;
            if (r[SA_RR_ENDED_AT] < 0 || r[SA_RR_ENDED_AT] < e->o->start || r[SA_RR_ENDED_AT] >= e->o->end ||
                !has_eff(r + SA_RR_E_RUNS))
                continue;
            if (!(x = acc_of_key(e, &c->keys[r[SA_RR_KEY]]))) {
                sa_error_nomem(error);
                return false;
            }
            acc_add(x, r);
        }
    }
    return true;
}

/* A day wholly in the window: its rows say which runs ended there. */
static bool whole_day(int64_t day, void *ctx)
{
    const eff_t *e = ctx;
    return day >= e->o->start && day + SA_DAY <= e->o->end;
}

/* A rollup document of the window: rows of a whole day, else the records of runs that ended in the window. */
static bool on_rollup_doc(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error)
{
    eff_t *e = ctx;
    eacc_t *x;

    if (!d->has_members) {
        for (size_t i = 0; i < d->nrows; i++) {
            const sa_rollup_row_t *row = &d->rows[i];
            int64_t r[SA_RR_NF] = {0};
            if (!has_eff(row->s.e) || (e->o->accounts.n && !sa_strv_contains(&e->o->accounts, d->keys[row->key].s[0])) ||
                (e->o->users.n && !sa_strv_contains(&e->o->users, d->keys[row->key].s[1])))
                continue;
            if (!(x = acc_of_key(e, &d->keys[row->key]))) {
                sa_error_nomem(error);
                return false;
            }
            memcpy(r + SA_RR_E_RUNS, row->s.e, sizeof row->s.e);
            acc_add(x, r);
        }
        return true;
    }
    for (size_t m = 0; m < d->nm; m++) {
        for (size_t i = 0; i < d->m[m].nrec; i++) {
            const int64_t *r = &d->m[m].rec[i * SA_RR_NF];
            const sa_rollup_rowkey_t *k = &d->keys[r[SA_RR_KEY]];
            if (r[SA_RR_ENDED_AT] < e->o->start || r[SA_RR_ENDED_AT] >= e->o->end || !has_eff(r + SA_RR_E_RUNS) ||
                (e->o->accounts.n && !sa_strv_contains(&e->o->accounts, k->s[0])) ||
                (e->o->users.n && !sa_strv_contains(&e->o->users, k->s[1])))
                continue;
            if (!(x = acc_of_key(e, k))) {
                sa_error_nomem(error);
                return false;
            }
            acc_add(x, r);
        }
    }
    return true;
}

/* Scans jobs and jobs_superseded of one cluster: documents with a run that ended in the window. */
static bool scan_cluster(sa_rdb_t *db, eff_t *e, const sa_rcluster_t *cl, sa_error_t *error)
{
    const char *cluster = cl->name;
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    bool ok;

    BSON_APPEND_UTF8(&f, "cluster", cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&f, "runs.end", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", e->o->start * 1000);
    BSON_APPEND_DATE_TIME(&sub, "$lt", e->o->end * 1000);
    bson_append_document_end(&f, &sub);
    if (e->o->accounts.n)
        sa_rbson_append_in(&f, "account", &e->o->accounts);
    if (e->o->users.n)
        sa_rbson_append_in(&f, "user", &e->o->users);
    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    e->cluster = sa_rintern(&e->names, cluster);
    if (!e->o->from_jobs && cl->rollup_version >= SA_ROLLUP_VERSION && e->threshold == SA_ROLLUP_IDLE_PCT) {
        bson_destroy(&f);
        bson_destroy(&opts);
        return sa_rollup_read(db, cluster, e->o->start, e->o->end, false, whole_day, on_rollup_doc, e, &e->docs_read,
                           error);
    }
    ok = sa_rdb_each(db, "jobs", &f, &opts, on_doc, e, error) &&
         sa_rdb_each(db, "jobs_superseded", &f, &opts, on_doc, e, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

/* ---- rows ----------------------------------------------------------------------------------- */

/* Orders accumulators by cluster (as listed: interned first), then account, user, type names (ctx: the eff_t). */
static int acc_cmp(const void *x, const void *y, void *ctx)
{
    const eacc_t *a = x, *b = y;
    const sa_rintern_t *n = &((const eff_t *)ctx)->names;
    int r;
    if (a->k.c != b->k.c)
        return a->k.c < b->k.c ? -1 : 1;
    if ((r = strcmp(sa_rintern_str(n, a->k.a), sa_rintern_str(n, b->k.a))))
        return r;
    if ((r = strcmp(sa_rintern_str(n, a->k.u), sa_rintern_str(n, b->k.u))))
        return r;
    return strcmp(sa_rintern_str(n, a->k.t), sa_rintern_str(n, b->k.t));
}

static void acc_sum(eacc_t *s, const eacc_t *x)
{
    s->runs += x->runs;
    s->gpu_runs += x->gpu_runs;
    s->mem_runs += x->mem_runs;
    s->gpu_s += x->gpu_s;
    s->idle_gpu_s += x->idle_gpu_s;
    s->nodata_gpu_s += x->nodata_gpu_s;
    s->util_gpu_s += x->util_gpu_s;
    s->util_mpct_s += x->util_mpct_s;
    s->cpu_used_ms += x->cpu_used_ms;
    s->cpu_alloc_s += x->cpu_alloc_s;
    s->mem_used_kib += x->mem_used_kib;
    s->mem_req_kib += x->mem_req_kib;
    s->prom_s += x->prom_s;
}

/* The table: the columns shown (the grouping keys and the figures) and where each is. */
typedef struct {
    sa_col_t cols[E_N];
    int col_of[E_N];
    sa_rtable_t t;
} etable_t;

static void etable_init(etable_t *et, unsigned by)
{
    bool want[E_N];
    size_t n = 0;
    for (int i = 0; i < E_N; i++)
        want[i] = i > E_TYPE;
    want[E_CLUSTER] = true;
    want[E_ACCOUNT] = (by & SA_BY_ACCOUNT) != 0;
    want[E_USER] = (by & SA_BY_USER) != 0;
    want[E_TYPE] = (by & SA_BY_GPU_TYPE) != 0;
    for (int i = 0; i < E_N; i++) {
        et->col_of[i] = want[i] ? (int)n : -1;
        if (want[i])
            et->cols[n++] = all_cols[i];
    }
    sa_rtable_init(&et->t, et->cols, n);
}

static void cell_str(etable_t *et, size_t r, int id, const char *v)
{
    if (et->col_of[id] >= 0)
        sa_rtable_str(&et->t, r, (size_t)et->col_of[id], v);
}

static void cell_num(etable_t *et, size_t r, int id, double v)
{
    if (et->col_of[id] >= 0)
        sa_rtable_num(&et->t, r, (size_t)et->col_of[id], v);
}

static void cell_int(etable_t *et, size_t r, int id, int64_t v)
{
    if (et->col_of[id] >= 0)
        sa_rtable_int(&et->t, r, (size_t)et->col_of[id], v);
}

/* A percentage num/den, or a NULL cell when den is 0. */
static void cell_pct(etable_t *et, size_t r, int id, double num, double den)
{
    if (den > 0)
        cell_num(et, r, id, 100.0 * num / den);
}

/* Writes the figures of x into row r. */
static void set_figures(etable_t *et, size_t r, const eacc_t *x)
{
    cell_int(et, r, E_RUNS, x->runs);
    cell_int(et, r, E_GPU_RUNS, x->gpu_runs);
    cell_num(et, r, E_GPU_HOURS, (double)x->gpu_s / 3600.0);
    cell_num(et, r, E_IDLE_HOURS, (double)x->idle_gpu_s / 3600.0);
    cell_pct(et, r, E_IDLE_PCT, (double)x->idle_gpu_s, (double)x->gpu_s);
    if (x->util_gpu_s > 0)
        cell_num(et, r, E_UTIL, (double)x->util_mpct_s / 1000.0 / (double)x->util_gpu_s);
    cell_num(et, r, E_NODATA_HOURS, (double)x->nodata_gpu_s / 3600.0);
    cell_pct(et, r, E_NODATA_PCT, (double)x->nodata_gpu_s, (double)x->gpu_s);
    cell_pct(et, r, E_CPU_EFF, (double)x->cpu_used_ms / 1000.0, (double)x->cpu_alloc_s);
    cell_pct(et, r, E_MEM_EFF, (double)x->mem_used_kib, (double)x->mem_req_kib);
    cell_num(et, r, E_CPU_USED, (double)x->cpu_used_ms / 3.6e6);
    cell_num(et, r, E_CPU_ALLOC, (double)x->cpu_alloc_s / 3600.0);
    cell_int(et, r, E_MEM_RUNS, x->mem_runs);
    /* where the GPU utilisation came from: Slurm's gres/gpuutil, the Prometheus import, or both */
    if (x->util_gpu_s > 0)
        cell_str(et, r, E_UTIL_SRC, x->prom_s == 0 ? "sacct" : x->prom_s == x->util_gpu_s ? "prometheus"
                                                                                           : "sacct+prometheus");
}

/* --sort idle: the most idle allocated GPU-hours first (then the keys' order). */
static int acc_idle_cmp(const void *x, const void *y, void *ctx)
{
    const eacc_t *a = x, *b = y;
    if (a->k.c != b->k.c)
        return a->k.c < b->k.c ? -1 : 1;
    if (a->idle_gpu_s != b->idle_gpu_s)
        return a->idle_gpu_s > b->idle_gpu_s ? -1 : 1;
    return acc_cmp(x, y, ctx);
}

/* One row per key (sorted), and per cluster a total row when it has more than one key. */
static bool build_rows(eff_t *e, etable_t *et, sa_error_t *error)
{
    size_t i = 0;

    if (e->n)
        qsort_r(e->v, e->n, sizeof *e->v, e->o->sort_idle ? acc_idle_cmp : acc_cmp, e);
    while (i < e->n) {
        size_t first = i, r;
        eacc_t tot;
        memset(&tot, 0, sizeof tot);
        for (; i < e->n && e->v[i].k.c == e->v[first].k.c; i++) {
            if ((r = sa_rtable_add_row(&et->t)) == SIZE_MAX)
                goto oom;
            cell_str(et, r, E_CLUSTER, sa_rintern_str(&e->names, e->v[i].k.c));
            cell_str(et, r, E_ACCOUNT, sa_rintern_str(&e->names, e->v[i].k.a));
            cell_str(et, r, E_USER, sa_rintern_str(&e->names, e->v[i].k.u));
            cell_str(et, r, E_TYPE, sa_rintern_str(&e->names, e->v[i].k.t));
            set_figures(et, r, &e->v[i]);
            acc_sum(&tot, &e->v[i]);
        }
        if (i - first > 1 && e->by) {
            if ((r = sa_rtable_add_row(&et->t)) == SIZE_MAX)
                goto oom;
            cell_str(et, r, E_CLUSTER, sa_rintern_str(&e->names, e->v[first].k.c));
            cell_str(et, r, (e->by & SA_BY_ACCOUNT) ? E_ACCOUNT : (e->by & SA_BY_USER) ? E_USER : E_TYPE, "TOTAL");
            set_figures(et, r, &tot);
            sa_rtable_mark_total(&et->t, r);
        }
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/* The preamble: the window and the rules. */
static void preamble(const eff_t *e, sa_strv_t *p)
{
    sa_rpreamble_add(p, "Efficiency of the runs that ended from %s to %s (whole runs; every run of a requeued job).",
                     sa_riso(e->o->start), sa_riso(e->o->end));
    sa_rpreamble_add(p, "GPU-hours: allocated GPUs x elapsed. GPU utilisation: Slurm's gres/gpuutil per allocated "
                        "GPU (acct_gather_gpu), else the Prometheus import's mean (runs[].prom; Util source says "
                        "which); idle: under %g %% (of a run Prometheus saw, the GPU-seconds it saw under it); mean "
                        "weighted by GPU-hours; no data: runs with no GPU utilisation from either (not counted as "
                        "0 %%).",
                     e->threshold);
    if (e->o->sort_idle)
        sa_rpreamble_add(p, "Sorted by idle GPU-hours, the most first.");
    sa_rpreamble_add(p, "CPU efficiency: TotalCPU / (elapsed x CPUs); memory efficiency: MaxRSS (largest step) / "
                        "requested memory; summed over the runs that have both (seff).");
}

bool sa_report_efficiency(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    eff_t e;
    etable_t et;
    sa_strv_t pre;
    json_t *extra = NULL;
    bool ok = false;

    (void)warn;
    memset(&e, 0, sizeof e);
    e.o = o;
    e.by = sa_report_by(o, SA_BY_ACCOUNT);
    e.threshold = o->idle_threshold;
    sa_rintern_init(&e.names);
    sa_jobview_init(&e.view);
    sa_rollup_contrib_init(&e.contrib);
    e.contrib.idle_pct = o->idle_threshold;
    sa_strv_init(&pre);
    etable_init(&et, e.by);
    if (!sa_report_window("efficiency", o->start, o->end, true, error))
        goto done;
    if (e.by & SA_BY_PARTITION) {
        sa_error_set(error, SA_ERR_USAGE, 0, "efficiency groups by account, user and gpu-type");
        goto done;
    }
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for efficiency", sa_format_name(o->format));
        goto done;
    }
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    for (size_t i = 0; i < cl.n; i++)
        sa_rintern(&e.names, cl.v[i].name); /* clusters first: their ids keep the listed order */
    e.empty_id = sa_rintern(&e.names, "");
    e.none_id = sa_rintern(&e.names, "none");
    e.unknown_id = sa_rintern(&e.names, "unknown");
    for (size_t i = 0; i < cl.n; i++) {
        if (!scan_cluster(db, &e, &cl.v[i], error))
            goto done;
    }
    if (o->verbose && e.docs_read)
        fprintf(o->verbose, "# read: %zu rollup document(s) by _id\n", e.docs_read);
    if (!build_rows(&e, &et, error))
        goto done;
    preamble(&e, &pre);
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "idle_threshold_percent", json_real(e.threshold));
    {
        sa_rdoc_t doc = {.kind = "efficiency", .title = "slurm-report: GPU and CPU efficiency", .preamble = &pre,
                         .table = &et.t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_rtable_clear(&et.t);
    sa_strv_clear(&pre);
    sa_jobview_clear(&e.view);
    sa_rollup_contrib_clear(&e.contrib);
    sa_rintern_clear(&e.names);
    free(e.v);
    sa_ukeyidx_clear(&e.idx);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
