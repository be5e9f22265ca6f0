/*
 * sa_utilsvg.c - utilization over time: `slurm-report utilization --svg`, and the site's
 * section of it. Where each cluster's GPU, CPU and memory time went over the window, by class,
 * stacked: a bar a day (an hour for windows of three days or less, sa_rbuckets), with the
 * table of the figures drawn (a row per cluster, resource and bucket) for the other formats.
 *
 * This file decides no class. It takes the classes of each bucket from utilization's own
 * document, `utilization --summary` of the bucket (bucket_classes(): the one place it plugs
 * into utilization's code): its rows of all GPUs and of the CPUs (GPU type *), and as
 * classes every column <class>_hours but capacity_hours, in their order. A class the
 * summary adds (planned, memory rows) is drawn without a change here.
 */
#include "sa_rcommon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rollup_reader.h"
#include "sa_rutil.h"
#include "sa_vec.h"

/* One resource of one cluster (a summary row of GPU type *): its hours by class, per bucket. */
typedef struct {
    char *cluster, *resource;
    double *h; /* [bucket * nclass + class] */
} ures_t;

typedef struct {
    int64_t *bounds;
    size_t nb, b;      /* the buckets; the one being read */
    int64_t step;
    sa_strv_t classes; /* the class column keys ("allocated_hours"), in the summary's order */
    sa_strv_t names;   /* the classes' names ("allocated"): the legends */
    sa_strv_t titles;  /* the table's titles ("allocated h") */
    ures_t *v;
    size_t n, cap;
} uover_t;

static void uover_clear(uover_t *u)
{
    for (size_t i = 0; i < u->n; i++) {
        free(u->v[i].cluster);
        free(u->v[i].resource);
        free(u->v[i].h);
    }
    free(u->v);
    free(u->bounds);
    sa_strv_clear(&u->classes);
    sa_strv_clear(&u->names);
    sa_strv_clear(&u->titles);
}

/* Whether column key is a class of the summary: <class>_hours, not the capacity. */
static bool is_class(const char *key)
{
    size_t n = strlen(key);
    return n > 6 && strcmp(key + n - 6, "_hours") == 0 && strcmp(key, "capacity_hours") != 0;
}

/* The series of cluster's resource (added, its hours 0, when new); NULL on out of memory. */
static ures_t *res_of(uover_t *u, const char *cluster, const char *resource)
{
    ures_t *r;

    for (size_t i = 0; i < u->n; i++)
        if (strcmp(u->v[i].cluster, cluster) == 0 && strcmp(u->v[i].resource, resource) == 0)
            return &u->v[i];
    if (!SA_VEC_GROW(u->v, u->cap, u->n, 1, 8))
        return NULL;
    r = &u->v[u->n];
    memset(r, 0, sizeof *r);
    if (!(r->cluster = strdup(cluster)) || !(r->resource = strdup(resource)) ||
        !(r->h = calloc(u->nb * u->classes.n + 1, sizeof *r->h))) {
        free(r->cluster);
        free(r->resource);
        return NULL;
    }
    u->n++;
    return r;
}

/* doc_cb of a bucket's summary: its rows of GPU type * into the bucket u->b. */
static bool on_summary(const sa_rdoc_t *d, void *ctx, sa_error_t *error)
{
    uover_t *u = ctx;
    const sa_rtable_t *t = d->table;
    size_t c_cl = sa_rtable_col(t, "cluster"), c_res = sa_rtable_col(t, "resource"), c_type = sa_rtable_col(t, "gpu_type");

    if (c_cl == SIZE_MAX || c_res == SIZE_MAX || c_type == SIZE_MAX) {
        sa_error_set(error, SA_ERR_INPUT, 0, "utilization --summary lacks a column utilization --svg reads");
        return false;
    }
    if (!u->classes.n) { /* the first bucket says the classes */
        for (size_t c = 0; c < t->ncols; c++) {
            const char *k = t->cols[c].key;
            char *name, *title;
            if (!is_class(k))
                continue;
            name = strndup(k, strlen(k) - 6);
            title = sa_rprintf("%.*s h", (int)(strlen(k) - 6), k);
            if (!name || !title || !sa_strv_push(&u->classes, k) || !sa_strv_push(&u->names, name) ||
                !sa_strv_push(&u->titles, title)) {
                free(name);
                free(title);
                return sa_error_nomem(error);
            }
            free(name);
            free(title);
        }
    }
    for (size_t r = 0; r < t->nrows; r++) {
        const sa_cell_t *cl = sa_rtable_cell(t, r, c_cl), *res = sa_rtable_cell(t, r, c_res);
        const sa_cell_t *ty = sa_rtable_cell(t, r, c_type);
        ures_t *x;
        if (ty->kind != SA_CELL_STR || strcmp(ty->s, "*") != 0 || cl->kind != SA_CELL_STR || res->kind != SA_CELL_STR)
            continue;
        if (!(x = res_of(u, cl->s, res->s)))
            return sa_error_nomem(error);
        for (size_t k = 0; k < u->classes.n; k++) {
            size_t c = sa_rtable_col(t, u->classes.v[k]);
            const sa_cell_t *v = c == SIZE_MAX ? NULL : sa_rtable_cell(t, r, c);
            if (v && v->kind == SA_CELL_NUM)
                x->h[u->b * u->classes.n + k] = v->d;
        }
    }
    return true;
}

/*
 * The classes of the clusters' time in [from, to): utilization --summary of the bucket, in
 * hours, its document handed to on_summary. (With utilization's time split by hour, a
 * single preparation of the window's allocation could serve every bucket instead.)
 */
static bool bucket_classes(const sa_report_opts_t *o, const sa_strv_t *clusters, int64_t from, int64_t to,
                           uover_t *u, sa_error_t *error)
{
    sa_report_opts_t b = *o; /* a shallow copy: its lists are borrowed, never cleared */

    b.clusters = *clusters;
    b.start = from;
    b.end = to;
    b.summary = true;
    b.unit = SA_UNIT_GPU_HOURS;
    b.unit_given = true;
    b.format = SA_FMT_JSON;
    b.columns = NULL;
    b.ncolumns = 0;
    b.verbose = NULL;
    b.doc_cb = on_summary;
    b.doc_ctx = u;
    return sa_report_utilization(&b, NULL, NULL, error);
}

static bool no_doc(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error)
{
    (void)d;
    (void)ctx;
    (void)error;
    return true;
}

/*
 * Reads the window's members documents and open runs into the connection's read cache in
 * a few queries, as the buckets will ask for them (utilization's sums are cut by the hour,
 * so each bucket reads its days' members): one query a day otherwise. An error here is
 * left to the buckets' own reads to meet and say.
 */
static void prefetch(sa_rdb_t *db, const sa_strv_t *clusters, int64_t from, int64_t to)
{
    sa_error_t ignored;

    for (size_t i = 0; db && i < clusters->n; i++) {
        sa_error_clear(&ignored);
        (void)sa_rollup_read(db, clusters->v[i], from, to, true, NULL, no_doc, NULL, NULL, &ignored);
    }
}

/* ---- the document ---------------------------------------------------------------------------- */

enum { T_CLUSTER, T_RES, T_FROM, T_CAP, T_CLASS };

/* The table: a row per cluster, resource and bucket: its capacity and classes in hours. cols (owned) is filled. */
static bool over_table(const uover_t *u, sa_rtable_t *t, sa_col_t **cols, sa_error_t *error)
{
    size_t nc = T_CLASS + u->classes.n;

    if (!(*cols = calloc(nc, sizeof **cols)))
        return sa_error_nomem(error);
    (*cols)[T_CLUSTER] = (sa_col_t){"cluster", "Cluster", SA_COL_STR, 0, 0};
    (*cols)[T_RES] = (sa_col_t){"resource", "Resource", SA_COL_STR, 0, 0};
    (*cols)[T_FROM] = (sa_col_t){"from", u->step == 3600 ? "Hour" : "Day", SA_COL_STR, 0, 0};
    (*cols)[T_CAP] = (sa_col_t){"capacity_hours", "Capacity-h", SA_COL_NUM, 2, 0};
    for (size_t k = 0; k < u->classes.n; k++) /* the summary's keys; titles from them ("planned_down h") */
        (*cols)[T_CLASS + k] = (sa_col_t){u->classes.v[k], u->titles.v[k], SA_COL_NUM, 2, 0};
    sa_rtable_init(t, *cols, nc);
    for (size_t i = 0; i < u->n; i++) {
        for (size_t b = 0; b < u->nb; b++) {
            size_t r = sa_rtable_add_row(t);
            double cap = 0;
            if (r == SIZE_MAX)
                return sa_error_nomem(error);
            sa_rtable_str(t, r, T_CLUSTER, u->v[i].cluster);
            sa_rtable_str(t, r, T_RES, u->v[i].resource);
            sa_rtable_str(t, r, T_FROM, sa_riso(u->bounds[b]));
            for (size_t k = 0; k < u->classes.n; k++) {
                cap += u->v[i].h[b * u->classes.n + k];
                sa_rtable_num(t, r, T_CLASS + k, u->v[i].h[b * u->classes.n + k]);
            }
            sa_rtable_num(t, r, T_CAP, cap);
        }
    }
    return true;
}

/* The plots: per cluster and resource, its classes stacked by bucket; what they point into (owned). */
typedef struct {
    sa_rplot_t *p;
    sa_rseries_t *s;
    double *v;
    sa_strv_t strs;
    size_t n;
} uplots_t;

static void uplots_clear(uplots_t *p)
{
    free(p->p);
    free(p->s);
    free(p->v);
    sa_strv_clear(&p->strs);
}

/* A resource of the summary as text says it: "GPU", "CPU", "memory" (the summary counts memory in GB). */
static const char *res_name(const char *resource)
{
    return strcmp(resource, "gpu") == 0 ? "GPU" : strcmp(resource, "cpu") == 0 ? "CPU"
                                               : strcmp(resource, "mem") == 0 ? "memory"
                                                                              : resource;
}

static bool over_plots(const uover_t *u, uplots_t *p, sa_error_t *error)
{
    size_t nk = u->classes.n;

    sa_strv_init(&p->strs);
    if (!(p->p = calloc(u->n + 1, sizeof *p->p)) || !(p->s = calloc(u->n * nk + 1, sizeof *p->s)) ||
        !(p->v = calloc(u->n * nk * u->nb + 1, sizeof *p->v)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < u->n; i++) {
        const ures_t *x = &u->v[i];
        size_t ns = 0;
        const char *what = res_name(x->resource);
        char *title = sa_rprintf("%s: %s time by class, stacked by %s", x->cluster, what,
                                 u->step == 3600 ? "hour" : "day");
        char *unit = sa_rprintf("%s-hours", strcmp(x->resource, "mem") == 0 ? "GB" : what);
        if (!title || !unit || !sa_strv_push(&p->strs, title) || !sa_strv_push(&p->strs, unit)) {
            free(title);
            free(unit);
            return sa_error_nomem(error);
        }
        free(title);
        free(unit);
        for (size_t k = 0; k < nk; k++) {
            double *v = p->v + (i * nk + k) * u->nb, sum = 0;
            for (size_t b = 0; b < u->nb; b++)
                sum += v[b] = x->h[b * nk + k];
            if (sum > 0) /* a class this resource never had: not in its legend */
                p->s[i * nk + ns++] = (sa_rseries_t){u->names.v[k], v};
        }
        p->p[p->n++] = (sa_rplot_t){SA_RPLOT_STACK, p->strs.v[p->strs.n - 2], p->strs.v[p->strs.n - 1], u->bounds,
                                    u->nb, p->s + i * nk, ns, false, "No time the series knows in the window."};
    }
    return true;
}

bool sa_report_utilization_over_time(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, pre;
    uover_t u;
    uplots_t plots;
    sa_rtable_t t;
    sa_col_t *cols = NULL;
    json_t *extra = NULL;
    sa_report_opts_t shared;
    sa_rdb_t *db = NULL; /* the buckets' connection (owned; NULL: o's, or none) */
    bool ok = false;

    (void)warn;
    memset(&u, 0, sizeof u);
    memset(&plots, 0, sizeof plots);
    sa_strv_init(&u.classes);
    sa_strv_init(&u.names);
    sa_strv_init(&u.titles);
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&clusters);
    sa_strv_init(&pre);
    sa_rtable_init(&t, NULL, 0);
    if (!sa_report_window("utilization", o->start, o->end, true, error) ||
        !sa_report_series_clusters(o, &tsdbs, &clusters, error))
        goto done;
    if ((u.nb = sa_rbuckets(o->start, o->end, &u.bounds, &u.step)) == SIZE_MAX) {
        sa_error_nomem(error);
        goto done;
    }
    /* the buckets' summaries share one connection with its read cache (each rollup document read once, at
     * one commit) and the series opened here, as the site's sections do; no archive named: the series alone */
    shared = *o;
    if (!o->shared_db && sa_report_archive_given(o)) {
        if (!(db = sa_report_connect(o, error)))
            goto done;
        sa_rdb_cache(db, SA_RDB_RUN_CACHE_BYTES);
        shared.shared_db = db;
    }
    if (!o->shared_tsdbs)
        shared.shared_tsdbs = &tsdbs;
    prefetch(shared.shared_db, &clusters, o->start, o->end);
    for (u.b = 0; u.b < u.nb; u.b++) {
        if (!bucket_classes(&shared, &clusters, u.bounds[u.b], u.bounds[u.b + 1], &u, error))
            goto done;
    }
    if (!over_table(&u, &t, &cols, error) || !over_plots(&u, &plots, error))
        goto done;
    sa_rpreamble_add(&pre, "Where the GPU, CPU and memory time went from %s to %s (UTC, end excluded), by %s: "
                           "utilization --summary's classes of each %s, in hours (GPU-hours, CPU-hours, GB-hours of "
                           "memory; its capacity: the time the series knows).",
                     sa_riso(o->start), sa_riso(o->end), u.step == 3600 ? "hour" : "day",
                     u.step == 3600 ? "hour" : "day");
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "every", json_string(u.step == 3600 ? "hour" : "day"));
    {
        sa_rdoc_t doc = {.kind = "utilization", .title = "slurm-report: utilization over time", .preamble = &pre,
                         .table = &t, .json = extra, .charts_title = "slurm-report: utilization over time",
                         .plots = plots.p, .nplots = plots.n};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    sa_rdb_close(db);
    json_decref(extra);
    sa_rtable_clear(&t);
    free(cols);
    uplots_clear(&plots);
    uover_clear(&u);
    sa_strv_clear(&clusters);
    sa_strv_clear(&pre);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
