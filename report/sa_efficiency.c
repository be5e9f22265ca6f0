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
 *   runs[].usage.gpu_util_pct (per allocated GPU). Idle GPU-hours: of runs whose
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
#include "sa_rcommon.h"
#include "sa_efficiency.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_usage.h"

/* ---- one run ------------------------------------------------------------------------------ */

void sa_eff_run(const sa_jobview_t *j, const sa_jobview_run_t *r, sa_eff_run_t *e)
{
    const sa_stats_t *u = &r->usage;
    int64_t req_mb = j->req_mem_mb > 0 ? j->req_mem_mb : r->mem_mb;

    memset(e, 0, sizeof *e);
    e->elapsed_s = r->elapsed_s;
    if (e->elapsed_s == SA_UNSET && r->start != SA_UNSET && r->end != SA_UNSET && r->end >= r->start)
        e->elapsed_s = r->end - r->start;
    if (e->elapsed_s != SA_UNSET && r->gpus > 0)
        e->gpu_s = r->gpus * e->elapsed_s;
    if (u->cpu_s >= 0 && r->cpus != SA_UNSET && r->cpus > 0 && e->elapsed_s != SA_UNSET && e->elapsed_s > 0) {
        e->has_cpu = true;
        e->cpu_used_s = u->cpu_s;
        e->cpu_alloc_s = (double)e->elapsed_s * (double)r->cpus;
    }
    if (u->max_rss_bytes != SA_UNSET && req_mb != SA_UNSET && req_mb > 0) {
        e->has_mem = true;
        e->mem_used_bytes = u->max_rss_bytes;
        e->mem_req_bytes = req_mb * 1048576;
    }
    if (r->gpus > 0 && u->gpu_util_pct >= 0) {
        e->has_util = true;
        e->gpu_util_pct = u->gpu_util_pct;
    }
}

/* ---- columns ------------------------------------------------------------------------------ */

enum { E_CLUSTER, E_ACCOUNT, E_USER, E_TYPE, E_RUNS, E_GPU_RUNS, E_GPU_HOURS, E_IDLE_HOURS, E_IDLE_PCT, E_UTIL,
       E_NODATA_HOURS, E_NODATA_PCT, E_CPU_EFF, E_MEM_EFF, E_CPU_USED, E_CPU_ALLOC, E_MEM_RUNS, E_N };

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
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        eacc_t *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return NULL;
        e->v = v;
        e->cap = cap;
    }
    x = &e->v[e->n];
    memset(x, 0, sizeof *x);
    x->k = k;
    *slot = (uint32_t)++e->n;
    return x;
}

/* part of v: v x num / den (den > 0), rounded to the nearest. */
static int64_t share(int64_t v, int64_t num, int64_t den)
{
    if (num == den)
        return v;
    return (int64_t)llround((double)v * (double)num / (double)den);
}

/*
 * Adds run figures f to x: GPU-seconds gpu_s (of the key's GPU type), the share num/den
 * of its CPU and memory figures; count: the run is counted here (a run of several GPU
 * types counts once, under its first type).
 */
static void acc_add(const eff_t *e, eacc_t *x, const sa_eff_run_t *f, int64_t gpu_s, int64_t num, int64_t den,
                    bool count)
{
    x->runs += count;
    if (gpu_s > 0) {
        x->gpu_runs += count;
        x->gpu_s += gpu_s;
        if (!f->has_util) {
            x->nodata_gpu_s += gpu_s;
        } else {
            x->util_gpu_s += gpu_s;
            x->util_mpct_s += llround(f->gpu_util_pct * 1000.0) * gpu_s;
            if (f->gpu_util_pct < e->threshold)
                x->idle_gpu_s += gpu_s;
        }
    }
    if (f->has_cpu) {
        x->cpu_used_ms += share(llround(f->cpu_used_s * 1000.0), num, den);
        x->cpu_alloc_s += share(llround(f->cpu_alloc_s), num, den);
    }
    if (f->has_mem) {
        x->mem_runs += count;
        x->mem_used_kib += share(f->mem_used_bytes / 1024, num, den);
        x->mem_req_kib += share(f->mem_req_bytes / 1024, num, den);
    }
}

/*
 * The GPU type key of run r's GPUs of type (NULL or "": untyped, which take the run's
 * gpu_type that slurm-ingest found on its nodes, else "unknown").
 */
static uint32_t type_id(eff_t *e, const sa_jobview_run_t *r, const char *type)
{
    if (type && type[0])
        return sa_rintern(&e->names, type);
    return r->gpu_type && r->gpu_type[0] ? sa_rintern(&e->names, r->gpu_type) : e->unknown_id;
}

/* Adds one ended run of the job at hand to its keys. */
static bool add_run(eff_t *e, const sa_jobview_run_t *r)
{
    const sa_jobview_t *j = &e->view;
    uint32_t a = (e->by & SA_BY_ACCOUNT) ? sa_rintern(&e->names, j->account ? j->account : "") : e->empty_id;
    uint32_t u = (e->by & SA_BY_USER) ? sa_rintern(&e->names, j->user ? j->user : "") : e->empty_id;
    bool first = true;
    sa_eff_run_t f;
    eacc_t *x;

    sa_eff_run(j, r, &f);
    if ((e->by & SA_BY_GPU_TYPE) && r->gpus > 0 && r->ngpu_types > 1 && f.elapsed_s != SA_UNSET) {
        for (size_t k = 0; k < r->ngpu_types; k++) {
            const sa_jobview_gpu_t *g = &r->gpu_types[k];
            if (g->count <= 0)
                continue;
            if (!(x = acc_get(e, a, u, type_id(e, r, g->type))))
                return false;
            acc_add(e, x, &f, g->count * f.elapsed_s, g->count, r->gpus, first);
            first = false;
        }
        if (!first)
            return true;
    }
    {
        uint32_t t = e->empty_id;
        if (e->by & SA_BY_GPU_TYPE)
            t = r->gpus <= 0 ? e->none_id : type_id(e, r, r->ngpu_types ? r->gpu_types[0].type : NULL);
        if (!(x = acc_get(e, a, u, t)))
            return false;
        acc_add(e, x, &f, f.gpu_s, 1, 1, true);
    }
    return true;
}

/* Every run of a document that ended in the window. */
static bool on_doc(const bson_t *doc, void *ctx, sa_error_t *error)
{
    eff_t *e = ctx;

    if (!sa_jobview_read(&e->view, doc, error))
        return false;
    for (size_t i = 0; i < e->view.nruns; i++) {
        const sa_jobview_run_t *r = &e->view.runs[i];
        if (r->end == SA_UNSET || r->end < e->o->start || r->end >= e->o->end)
            continue;
        if (!add_run(e, r)) {
            sa_error_nomem(error);
            return false;
        }
    }
    return true;
}

/* Scans jobs and jobs_superseded of one cluster: documents with a run that ended in the window. */
static bool scan_cluster(sa_rdb_t *db, eff_t *e, const char *cluster, sa_error_t *error)
{
    static const char *const fields[] = {"account",  "user",         "req.mem_mb",        "runs.start", "runs.end",
                                         "runs.gpus", "runs.gpus_by_type", "runs.cpus", "runs.mem_mb",
                                         "runs.elapsed_s", "runs.usage", "runs.gpu_type", NULL};
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
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &sub);
    for (const char *const *k = fields; *k; k++)
        BSON_APPEND_INT32(&sub, *k, 1);
    bson_append_document_end(&opts, &sub);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    e->cluster = sa_rintern(&e->names, cluster);
    ok = sa_rdb_each(db, "jobs", &f, &opts, on_doc, e, error) &&
         sa_rdb_each(db, "jobs_superseded", &f, &opts, on_doc, e, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

/* ---- rows ----------------------------------------------------------------------------------- */

static eff_t *sort_ctx;

/* Orders accumulators by cluster (as listed: interned first), then account, user, type names. */
static int acc_cmp(const void *x, const void *y)
{
    const eacc_t *a = x, *b = y;
    const sa_rintern_t *n = &sort_ctx->names;
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
}

/* One row per key (sorted), and per cluster a total row when it has more than one key. */
static bool build_rows(eff_t *e, etable_t *et, sa_error_t *error)
{
    size_t i = 0;

    sort_ctx = e;
    if (e->n)
        qsort(e->v, e->n, sizeof *e->v, acc_cmp);
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
                        "GPU (acct_gather_gpu); idle: under %g %%; mean weighted by GPU-hours; no data: runs Slurm "
                        "gathered no GPU utilisation for (not counted as 0 %%).",
                     e->threshold);
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
    sa_strv_init(&pre);
    etable_init(&et, e.by);
    if (o->start == SA_UNSET || o->end == SA_UNSET) {
        sa_error_set(error, SA_ERR_USAGE, 0, "efficiency needs a window: --month YYYY-MM or -S START [-E END]");
        goto done;
    }
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
        if (!scan_cluster(db, &e, cl.v[i].name, error))
            goto done;
    }
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
    sa_rintern_clear(&e.names);
    free(e.v);
    sa_ukeyidx_clear(&e.idx);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
