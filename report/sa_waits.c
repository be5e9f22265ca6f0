/*
 * sa_waits.c - `slurm-report waits`: how long the runs that started in a window waited
 * in the queue, by cluster, partition, account, user, GPU type and job size (XDMoD's
 * wait-time charts; sacct's Submit, Eligible and Start).
 *
 * Rules (stated in every output's preamble):
 * - A run counts when it started in the window [start, end). Every run of a requeued
 *   job counts with its own incarnation's submit and eligible (each waited in the queue
 *   again; Slurm resets both when it requeues a job, and sacct --duplicates lists each
 *   incarnation with its own, as XDMoD, which reads sacct -D, counts them), and
 *   jobs_superseded too; a job still pending counts nowhere.
 * - Wait = start - eligible (the time Slurm could have started it: a --begin, a
 *   dependency or a hold does not count), and start - submit beside it; a run whose
 *   eligible (or submit) time is not known counts in the other figure only. A wait below
 *   0 (clocks) is 0. The submit and eligible of a run: sa_rollup_queue_times.
 * - Median and p90: nearest rank (the smallest wait w with at least p % of the waits <= w:
 *   rank ceil(p/100 x n) of the sorted waits), so each is one run's wait; mean = sum / n.
 * - Job size: XDMoD's bins (1, 2-4, 5-8, 9-16, ...), of GPUs (0 apart) and nodes.
 * The runs come from the started lists of the rollups (schema/jobdoc/sa_rollup.h), or with
 * --from-jobs from the job documents through the same contribution (sa_rollup_contrib_of), so
 * both give the same bytes.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_rcommon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rollup_reader.h"
#include "sa_rollup.h"
#include "sa_rutil.h"
#include "sa_vec.h"

/* ---- columns ------------------------------------------------------------------------------ */

enum { W_CLUSTER, W_PARTITION, W_ACCOUNT, W_USER, W_TYPE, W_GPUS, W_NODES, W_JOBS, W_MEAN, W_MEDIAN, W_P90, W_MAX,
       W_S_MEAN, W_S_MEDIAN, W_S_P90, W_S_MAX, W_NO_ELIG, W_NO_SUBMIT, W_N };

static const sa_col_t all_cols[W_N] = {
    [W_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, 0},
    [W_PARTITION] = {"partition", "Partition", SA_COL_STR, 0, 0},
    [W_ACCOUNT] = {"account", "Account", SA_COL_STR, 0, 0},
    [W_USER] = {"user", "User", SA_COL_STR, 0, 0},
    [W_TYPE] = {"gpu_type", "GPU type", SA_COL_STR, 0, 0},
    [W_GPUS] = {"gpus", "GPUs", SA_COL_STR, 0, 0},
    [W_NODES] = {"nodes", "Nodes", SA_COL_STR, 0, 0},
    [W_JOBS] = {"jobs", "Jobs", SA_COL_INT, 0, 0},
    [W_MEAN] = {"wait_mean_hours", "Wait mean h", SA_COL_NUM, 2, 0},
    [W_MEDIAN] = {"wait_median_hours", "Wait median h", SA_COL_NUM, 2, 0},
    [W_P90] = {"wait_p90_hours", "Wait p90 h", SA_COL_NUM, 2, 0},
    [W_MAX] = {"wait_max_hours", "Wait max h", SA_COL_NUM, 2, 0},
    [W_S_MEAN] = {"submit_wait_mean_hours", "Submit-start mean h", SA_COL_NUM, 2, SA_COL_LONG},
    [W_S_MEDIAN] = {"submit_wait_median_hours", "Submit-start median h", SA_COL_NUM, 2, SA_COL_LONG},
    [W_S_P90] = {"submit_wait_p90_hours", "Submit-start p90 h", SA_COL_NUM, 2, SA_COL_LONG},
    [W_S_MAX] = {"submit_wait_max_hours", "Submit-start max h", SA_COL_NUM, 2, SA_COL_LONG},
    [W_NO_ELIG] = {"no_eligible", "No eligible time", SA_COL_INT, 0, SA_COL_LONG},
    [W_NO_SUBMIT] = {"no_submit", "No submit time", SA_COL_INT, 0, SA_COL_LONG},
};

const sa_col_t *sa_waits_cols(size_t *n)
{
    *n = W_N;
    return all_cols;
}

/* ---- the runs ------------------------------------------------------------------------------ */

/* One run that started in the window: its group (interned names, size bins) and waits (-1: not known). */
typedef struct {
    uint32_t c, p, a, u, t;
    int64_t gbin, nbin;
    int64_t start;
    int64_t wait, swait;
} wrun_t;

typedef struct {
    const sa_report_opts_t *o;
    unsigned by;
    sa_rintern_t names;
    uint32_t cluster, empty_id, none_id;
    wrun_t *v;
    size_t n, cap;
    sa_jobview_t view;
    sa_rollup_contrib_t contrib;
    size_t docs_read;
} waits_t;

/*
 * The bin of a size (XDMoD's job size bins): its upper bound, 1, 4 (2-4), 8 (5-8), 16, ...;
 * 0 for 0 (GPUs: a CPU-only run; nodes: not known).
 */
static int64_t size_bin(int64_t v)
{
    int64_t hi = 4;
    if (v <= 1)
        return v < 0 ? 0 : v;
    while (hi < v && hi < INT64_MAX / 2)
        hi *= 2;
    return hi;
}

/* The label of a bin: "1", "2-4", "5-8", ...; a 0 bin "0" (GPUs) or "unknown" (nodes). */
static void bin_label(int64_t bin, bool gpus, char *buf, size_t n)
{
    if (bin <= 1)
        snprintf(buf, n, "%s", bin == 1 ? "1" : gpus ? "0" : "unknown");
    else
        snprintf(buf, n, "%lld-%lld", (long long)(bin == 4 ? 2 : bin / 2 + 1), (long long)bin);
}

/* Adds record x (of key k) when its run started in the window and the key passes -A / -u. */
static bool add_run(waits_t *w, const sa_rollup_rowkey_t *k, const int64_t *x, sa_error_t *error)
{
    const sa_report_opts_t *o = w->o;
    int64_t start = x[SA_RS_START];
    wrun_t *r;

    if (start < o->start || start >= o->end || (o->accounts.n && !sa_strv_contains(&o->accounts, k->s[0])) ||
        (o->users.n && !sa_strv_contains(&o->users, k->s[1])))
        return true;
    if (!SA_VEC_GROW(w->v, w->cap, w->n, 1, 256))
        return sa_error_nomem(error);
    r = &w->v[w->n];
    r->c = w->cluster;
    r->p = w->by & SA_BY_PARTITION ? sa_rintern(&w->names, k->s[2]) : w->empty_id;
    r->a = w->by & SA_BY_ACCOUNT ? sa_rintern(&w->names, k->s[0]) : w->empty_id;
    r->u = w->by & SA_BY_USER ? sa_rintern(&w->names, k->s[1]) : w->empty_id;
    r->t = !(w->by & SA_BY_GPU_TYPE) ? w->empty_id : k->s[4][0] ? sa_rintern(&w->names, k->s[4]) : w->none_id;
    if (r->p == UINT32_MAX || r->a == UINT32_MAX || r->u == UINT32_MAX || r->t == UINT32_MAX)
        return sa_error_nomem(error);
    r->gbin = w->by & SA_BY_GPUS ? size_bin(x[SA_RS_GPUS]) : -1;
    r->nbin = w->by & SA_BY_NODES ? size_bin(x[SA_RS_NODES]) : -1;
    r->start = start;
    r->wait = x[SA_RS_ELIGIBLE] == SA_UNSET ? -1 : start > x[SA_RS_ELIGIBLE] ? start - x[SA_RS_ELIGIBLE] : 0;
    r->swait = x[SA_RS_SUBMIT] == SA_UNSET ? -1 : start > x[SA_RS_SUBMIT] ? start - x[SA_RS_SUBMIT] : 0;
    w->n++;
    return true;
}

/* A started list of the window: its runs. */
static bool on_list(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error)
{
    waits_t *w = ctx;
    for (size_t m = 0; m < d->nm; m++) { /* a tombstone has no records */
        for (size_t i = 0; i < d->m[m].nrec; i++) {
            const int64_t *x = &d->m[m].rec[i * SA_RS_NF];
            if (!add_run(w, &d->keys[x[SA_RS_KEY]], x, error))
                return false;
        }
    }
    return true;
}

/* --from-jobs: a job document's runs, from its contribution's started lists. */
static bool on_doc(const bson_t *doc, void *ctx, sa_error_t *error)
{
    waits_t *w = ctx;
    const sa_rollup_contrib_t *c = &w->contrib;

    if (!sa_jobview_read(&w->view, doc, error) || !sa_rollup_contrib_of(&w->contrib, &w->view, error))
        return false;
    for (size_t d = 0; d < c->ndocs; d++) {
        if (c->docs[d].kind != SA_ROLLUP_K_STARTED)
            continue;
        for (size_t i = 0; i < c->docs[d].nrec; i++) {
            const int64_t *x = &c->docs[d].rec[i * SA_RS_NF];
            if (!add_run(w, &c->keys[x[SA_RS_KEY]], x, error))
                return false;
        }
    }
    return true;
}

/* The runs of one cluster: its started lists by _id, else (--from-jobs, older rollups) its documents. */
static bool scan_cluster(sa_rdb_t *db, waits_t *w, const sa_rcluster_t *cl, sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    bool ok;

    w->cluster = sa_rintern(&w->names, cl->name);
    if (!w->o->from_jobs && cl->rollup_version >= SA_ROLLUP_VERSION)
        return sa_rollup_read_started(db, cl->name, w->o->start, w->o->end, on_list, w, &w->docs_read, error);
    BSON_APPEND_UTF8(&f, "cluster", cl->name); /* the cluster_runs_start index */
    BSON_APPEND_DOCUMENT_BEGIN(&f, "runs.start", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", w->o->start * 1000);
    BSON_APPEND_DATE_TIME(&sub, "$lt", w->o->end * 1000);
    bson_append_document_end(&f, &sub);
    if (w->o->accounts.n)
        sa_rbson_append_in(&f, "account", &w->o->accounts);
    if (w->o->users.n)
        sa_rbson_append_in(&f, "user", &w->o->users);
    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    ok = sa_rdb_each(db, "jobs", &f, &opts, on_doc, w, error) &&
         sa_rdb_each(db, "jobs_superseded", &f, &opts, on_doc, w, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

/* ---- the figures ----------------------------------------------------------------------------- */

/* Orders runs by group: cluster (as listed), partition, account, user, GPU type, GPU and node bins (ctx: the waits_t). */
static int run_cmp(const void *x, const void *y, void *ctx)
{
    const wrun_t *a = x, *b = y;
    const sa_rintern_t *n = &((const waits_t *)ctx)->names;
    const uint32_t ka[] = {a->p, a->a, a->u, a->t}, kb[] = {b->p, b->a, b->u, b->t};
    int r;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++) {
        if (ka[i] != kb[i] && (r = strcmp(sa_rintern_str(n, ka[i]), sa_rintern_str(n, kb[i]))))
            return r;
    }
    if (a->gbin != b->gbin)
        return a->gbin < b->gbin ? -1 : 1;
    return a->nbin != b->nbin ? (a->nbin < b->nbin ? -1 : 1) : 0;
}

static bool same_group(const wrun_t *a, const wrun_t *b)
{
    return a->c == b->c && a->p == b->p && a->a == b->a && a->u == b->u && a->t == b->t && a->gbin == b->gbin &&
           a->nbin == b->nbin;
}

static int i64_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The statistics of n waits (sorted here): n, sum, nearest-rank median and p90, max. */
typedef struct {
    int64_t n, sum, median, p90, max;
} wstat_t;

static void wstat_of(int64_t *v, size_t n, wstat_t *s)
{
    memset(s, 0, sizeof *s);
    s->n = (int64_t)n;
    if (!n)
        return;
    qsort(v, n, sizeof *v, i64_cmp);
    for (size_t i = 0; i < n; i++)
        s->sum += v[i];
    s->median = v[(50 * n + 99) / 100 - 1]; /* rank ceil(n x 50 / 100) */
    s->p90 = v[(90 * n + 99) / 100 - 1];
    s->max = v[n - 1];
}

/* The table: the columns shown and where each is. */
typedef struct {
    sa_col_t cols[W_N];
    int col_of[W_N];
    sa_rtable_t t;
} wtable_t;

static void wtable_init(wtable_t *wt, unsigned by)
{
    static const struct {
        int col;
        unsigned bit;
    } keys[] = {{W_PARTITION, SA_BY_PARTITION}, {W_ACCOUNT, SA_BY_ACCOUNT}, {W_USER, SA_BY_USER},
                {W_TYPE, SA_BY_GPU_TYPE},       {W_GPUS, SA_BY_GPUS},       {W_NODES, SA_BY_NODES}};
    bool want[W_N];
    size_t n = 0;
    for (int i = 0; i < W_N; i++)
        want[i] = i >= W_JOBS || i == W_CLUSTER;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        want[keys[i].col] = (by & keys[i].bit) != 0;
    for (int i = 0; i < W_N; i++) {
        wt->col_of[i] = want[i] ? (int)n : -1;
        if (want[i])
            wt->cols[n++] = all_cols[i];
    }
    sa_rtable_init(&wt->t, wt->cols, n);
}

static void cell_str(wtable_t *wt, size_t r, int id, const char *v)
{
    if (wt->col_of[id] >= 0)
        sa_rtable_str(&wt->t, r, (size_t)wt->col_of[id], v);
}

static void cell_int(wtable_t *wt, size_t r, int id, int64_t v)
{
    if (wt->col_of[id] >= 0)
        sa_rtable_int(&wt->t, r, (size_t)wt->col_of[id], v);
}

/* The four figures of s from column id on (in hours); NULL cells when s has no waits. */
static void cell_stats(wtable_t *wt, size_t r, int id, const wstat_t *s)
{
    const double v[4] = {s->n ? (double)s->sum / (double)s->n / 3600.0 : 0, (double)s->median / 3600.0,
                         (double)s->p90 / 3600.0, (double)s->max / 3600.0};
    for (int i = 0; s->n && i < 4; i++) {
        if (wt->col_of[id + i] >= 0)
            sa_rtable_num(&wt->t, r, (size_t)wt->col_of[id + i], v[i]);
    }
}

/* The figures of runs v[0..n) into row r; *median gets the median wait in hours (the chart's bar), -1 when none. */
static bool set_figures(wtable_t *wt, size_t r, const wrun_t *v, size_t n, double *median, sa_error_t *error)
{
    int64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    size_t na = 0, nb = 0;
    wstat_t sa, sb;

    if (!a || !b) {
        free(a);
        free(b);
        return sa_error_nomem(error);
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].wait >= 0)
            a[na++] = v[i].wait;
        if (v[i].swait >= 0)
            b[nb++] = v[i].swait;
    }
    wstat_of(a, na, &sa);
    wstat_of(b, nb, &sb);
    cell_int(wt, r, W_JOBS, (int64_t)n);
    cell_stats(wt, r, W_MEAN, &sa);
    cell_stats(wt, r, W_S_MEAN, &sb);
    cell_int(wt, r, W_NO_ELIG, (int64_t)(n - na));
    cell_int(wt, r, W_NO_SUBMIT, (int64_t)(n - nb));
    *median = sa.n ? (double)sa.median / 3600.0 : -1; /* -1: no bar (no eligible time known) */
    free(a);
    free(b);
    return true;
}

/* The bar chart: a bar of the median wait per row (TOTAL rows left out). */
typedef struct {
    char **labels;
    double *v;
    size_t n;
} wbars_t;

static void wbars_clear(wbars_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->labels[i]);
    free(b->labels);
    free(b->v);
}

/* The label of row r's group: its key cells joined by " / ". */
static char *group_label(const waits_t *w, const wrun_t *x)
{
    char g[48], nb[48], *s = NULL;
    const char *parts[7];
    size_t np = 0, len = 1;
    parts[np++] = sa_rintern_str(&w->names, x->c);
    if (w->by & SA_BY_PARTITION)
        parts[np++] = sa_rintern_str(&w->names, x->p);
    if (w->by & SA_BY_ACCOUNT)
        parts[np++] = sa_rintern_str(&w->names, x->a);
    if (w->by & SA_BY_USER)
        parts[np++] = sa_rintern_str(&w->names, x->u);
    if (w->by & SA_BY_GPU_TYPE)
        parts[np++] = sa_rintern_str(&w->names, x->t);
    bin_label(x->gbin, true, g, sizeof g);
    bin_label(x->nbin, false, nb, sizeof nb);
    if (w->by & SA_BY_GPUS)
        parts[np++] = g;
    if (w->by & SA_BY_NODES)
        parts[np++] = nb;
    for (size_t i = 0; i < np; i++)
        len += strlen(parts[i]) + 3;
    if (!(s = malloc(len + 8)))
        return NULL;
    s[0] = 0;
    for (size_t i = 0; i < np; i++) {
        if (i)
            strcat(s, " / ");
        strcat(s, parts[i]);
    }
    return s;
}

/* Writes the key cells of run x's group into row r. */
static void key_cells(const waits_t *w, wtable_t *wt, size_t r, const wrun_t *x)
{
    char buf[48];
    cell_str(wt, r, W_CLUSTER, sa_rintern_str(&w->names, x->c));
    cell_str(wt, r, W_PARTITION, sa_rintern_str(&w->names, x->p));
    cell_str(wt, r, W_ACCOUNT, sa_rintern_str(&w->names, x->a));
    cell_str(wt, r, W_USER, sa_rintern_str(&w->names, x->u));
    cell_str(wt, r, W_TYPE, sa_rintern_str(&w->names, x->t));
    bin_label(x->gbin, true, buf, sizeof buf);
    cell_str(wt, r, W_GPUS, buf);
    bin_label(x->nbin, false, buf, sizeof buf);
    cell_str(wt, r, W_NODES, buf);
}

/* The first key column the grouping shows (where a TOTAL row says TOTAL). */
static int first_key(unsigned by)
{
    return by & SA_BY_PARTITION ? W_PARTITION
           : by & SA_BY_ACCOUNT ? W_ACCOUNT
           : by & SA_BY_USER    ? W_USER
           : by & SA_BY_GPU_TYPE ? W_TYPE
           : by & SA_BY_GPUS    ? W_GPUS
                                : W_NODES;
}

/* One row per group (sorted), a chart bar each, and per cluster a TOTAL row when it has more than one group. */
static bool build_rows(waits_t *w, wtable_t *wt, wbars_t *bars, sa_error_t *error)
{
    size_t i = 0, r;
    double med;

    if (w->n)
        qsort_r(w->v, w->n, sizeof *w->v, run_cmp, w);
    if (!(bars->labels = calloc(w->n + 1, sizeof *bars->labels)) || !(bars->v = calloc(w->n + 1, sizeof *bars->v)))
        return sa_error_nomem(error);
    while (i < w->n) {
        size_t first = i, groups = 0;
        for (; i < w->n && w->v[i].c == w->v[first].c;) {
            size_t g = i;
            while (i < w->n && same_group(&w->v[g], &w->v[i]))
                i++;
            if ((r = sa_rtable_add_row(&wt->t)) == SIZE_MAX || !(bars->labels[bars->n] = group_label(w, &w->v[g])))
                return sa_error_nomem(error);
            key_cells(w, wt, r, &w->v[g]);
            if (!set_figures(wt, r, &w->v[g], i - g, &bars->v[bars->n++], error))
                return false;
            groups++;
        }
        if (groups > 1) {
            if ((r = sa_rtable_add_row(&wt->t)) == SIZE_MAX)
                return sa_error_nomem(error);
            cell_str(wt, r, W_CLUSTER, sa_rintern_str(&w->names, w->v[first].c));
            cell_str(wt, r, first_key(w->by), "TOTAL");
            if (!set_figures(wt, r, &w->v[first], i - first, &med, error))
                return false;
            sa_rtable_mark_total(&wt->t, r);
        }
    }
    return true;
}

/* ---- the waits over time ------------------------------------------------------------------------- */

/* The most groups the plots over time draw (those with the most runs). */
#define PLOT_GROUPS 8

/* The plots over time: the median and p90 wait of each of the largest groups, a point a day (hour). */
typedef struct {
    int64_t *bounds;
    size_t nb;
    int64_t step;
    char **names;     /* the groups' labels (owned) */
    double *v;        /* median then p90 of each group: [2 * g + k][bucket] */
    size_t ng;
    sa_rseries_t s[2 * PLOT_GROUPS];
    sa_rplot_t p[2];
    char titles[2][96];
} wplots_t;

static void wplots_clear(wplots_t *wp)
{
    for (size_t i = 0; i < wp->ng; i++)
        free(wp->names[i]);
    free(wp->names);
    free(wp->v);
    free(wp->bounds);
}

static int bucket_cmp(const void *x, const void *y)
{
    const int64_t *a = x, *b = y; /* (bucket, wait) pairs */
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The median and p90 of group runs v[0..n) in each bucket, into med[] and p90[] (hours; NAN: no run there). */
static bool group_series(const wplots_t *wp, const wrun_t *v, size_t n, double *med, double *p90, sa_error_t *error)
{
    int64_t *pairs = malloc((2 * n + 2) * sizeof *pairs), *w = malloc((n + 1) * sizeof *w);
    size_t np = 0;

    if (!pairs || !w) {
        free(pairs);
        free(w);
        return sa_error_nomem(error);
    }
    for (size_t i = 0; i < n; i++) {
        size_t b = sa_rbucket_of(wp->bounds, wp->nb, v[i].start);
        if (b != SIZE_MAX && v[i].wait >= 0) {
            pairs[2 * np] = (int64_t)b;
            pairs[2 * np + 1] = v[i].wait;
            np++;
        }
    }
    if (np)
        qsort(pairs, np, 2 * sizeof *pairs, bucket_cmp);
    for (size_t i = 0; i < np;) {
        size_t j = i, k = 0;
        wstat_t st;
        while (j < np && pairs[2 * j] == pairs[2 * i])
            w[k++] = pairs[2 * j++ + 1];
        wstat_of(w, k, &st);
        med[pairs[2 * i]] = (double)st.median / 3600.0;
        p90[pairs[2 * i]] = (double)st.p90 / 3600.0;
        i = j;
    }
    free(pairs);
    free(w);
    return true;
}

/*
 * The plots over time (w->v sorted by group): of the PLOT_GROUPS groups with the most runs
 * (in their order), the median and the p90 wait of the runs that started each day (hour).
 */
static bool waits_plots(const waits_t *w, wplots_t *wp, sa_error_t *error)
{
    size_t first[PLOT_GROUPS + 1], count[PLOT_GROUPS + 1], ng = 0;

    if ((wp->nb = sa_rbuckets(w->o->start, w->o->end, &wp->bounds, &wp->step)) == SIZE_MAX)
        return sa_error_nomem(error);
    for (size_t i = 0; i < w->n;) { /* the largest groups, the most runs first (ties: in their order) */
        size_t j = i, k;
        while (j < w->n && same_group(&w->v[i], &w->v[j]))
            j++;
        for (k = ng; k > 0 && count[k - 1] < j - i; k--)
            ;
        if (k < PLOT_GROUPS) {
            memmove(first + k + 1, first + k, (ng - k) * sizeof *first);
            memmove(count + k + 1, count + k, (ng - k) * sizeof *count);
            first[k] = i;
            count[k] = j - i;
            ng += ng < PLOT_GROUPS;
        }
        i = j;
    }
    if (!(wp->names = calloc(ng + 1, sizeof *wp->names)) || !(wp->v = malloc((2 * ng * wp->nb + 1) * sizeof *wp->v)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < 2 * ng * wp->nb; i++)
        wp->v[i] = NAN;
    for (size_t g = 0; g < ng; g++) {
        double *med = wp->v + 2 * g * wp->nb, *p90 = med + wp->nb;
        if (!(wp->names[g] = group_label(w, &w->v[first[g]])))
            return sa_error_nomem(error);
        wp->ng++;
        if (!group_series(wp, &w->v[first[g]], count[g], med, p90, error))
            return false;
        wp->s[g] = (sa_rseries_t){wp->names[g], med};
        wp->s[PLOT_GROUPS + g] = (sa_rseries_t){wp->names[g], p90};
    }
    for (int k = 0; k < 2; k++) {
        snprintf(wp->titles[k], sizeof wp->titles[k], "%s queue wait (start - eligible) of the runs that started each "
                 "%s", k ? "p90" : "Median", wp->step == 3600 ? "hour" : "day");
        wp->p[k] = (sa_rplot_t){SA_RPLOT_LINES, wp->titles[k], "hours", wp->bounds, wp->nb, wp->s + k * PLOT_GROUPS,
                                ng, false, "No run started in the window."};
    }
    return true;
}

/* The preamble: the window and the rules. */
static void preamble(const waits_t *w, sa_strv_t *p)
{
    sa_rpreamble_add(p, "Queue waits of the runs that started from %s to %s (every run of a requeued job; pending "
                        "jobs count nowhere).",
                     sa_riso(w->o->start), sa_riso(w->o->end));
    sa_rpreamble_add(p, "Wait: start - eligible, each run's own (a requeue resets both); submit-start: start - submit "
                        "(-l); a run whose eligible time is not known counts in submit-start only.");
    sa_rpreamble_add(p, "Hours. Median and p90: nearest rank (one run's wait: rank ceil(p/100 x n)); mean: sum / n. "
                        "Job size: XDMoD's bins (1, 2-4, 5-8, ...) of GPUs and nodes.");
}

/* Checks the options: a window, keys and formats waits has. */
static bool check_opts(const sa_report_opts_t *o, sa_error_t *error)
{
    if (!sa_report_window("waits", o->start, o->end, true, error))
        return false;
    if (o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format prometheus is not available for waits");
        return false;
    }
    return true;
}

bool sa_report_waits(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    waits_t w;
    wtable_t wt;
    wbars_t bars = {0};
    wplots_t plots;
    sa_strv_t pre;
    json_t *extra = NULL;
    bool ok = false;

    (void)warn;
    memset(&w, 0, sizeof w);
    memset(&plots, 0, sizeof plots);
    w.o = o;
    w.by = sa_report_by(o, SA_BY_PARTITION);
    sa_rintern_init(&w.names);
    sa_jobview_init(&w.view);
    sa_rollup_contrib_init(&w.contrib);
    sa_strv_init(&pre);
    wtable_init(&wt, w.by);
    if (!check_opts(o, error) || !(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    for (size_t i = 0; i < cl.n; i++)
        sa_rintern(&w.names, cl.v[i].name); /* clusters first: their ids keep the listed order */
    w.empty_id = sa_rintern(&w.names, "");
    w.none_id = sa_rintern(&w.names, "none");
    for (size_t i = 0; i < cl.n; i++) {
        if (!scan_cluster(db, &w, &cl.v[i], error))
            goto done;
    }
    if (o->verbose && w.docs_read)
        fprintf(o->verbose, "# read: %zu started list(s) by _id\n", w.docs_read);
    if (!build_rows(&w, &wt, &bars, error) || !waits_plots(&w, &plots, error))
        goto done;
    preamble(&w, &pre);
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "percentiles", json_string("nearest rank"));
    {
        sa_rbars_t b = {"Median queue wait (start - eligible)", "hours", (const char *const *)bars.labels, bars.v,
                        bars.n};
        sa_rdoc_t doc = {.kind = "waits", .title = "slurm-report: queue waits", .preamble = &pre, .table = &wt.t,
                         .json = extra, .bars = &b, .charts_title = "slurm-report: queue waits",
                         .plots = plots.p, .nplots = 2};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    wbars_clear(&bars);
    wplots_clear(&plots);
    sa_rtable_clear(&wt.t);
    sa_strv_clear(&pre);
    sa_jobview_clear(&w.view);
    sa_rollup_contrib_clear(&w.contrib);
    sa_rintern_clear(&w.names);
    free(w.v);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
