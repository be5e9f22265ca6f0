/*
 * sa_sreport_util.c - `slurm-report sreport cluster Utilization` (sa_sreport.h): per
 * cluster and TRES (cpu, mem, gres/gpu) its capacity over the window by sreport's columns
 * (cluster_reports.c cluster_utilization), from utilization --summary's classes
 * (sa_util_summary_classes of sa_util.h):
 *
 *   Allocated  allocated (the runs' exact time), and reserved: sreport counts a
 *              reservation's idle time as allocated
 *   Down       down (DOWN, FAIL, DRAIN)          PLND Down  planned_down
 *   Planned    planned (CPUs: slurmdbd's rule)   Over Comm  what the pending jobs waited past
 *                                                           each hour's idle CPU time
 *   Idle       the rest: idle, stranded and unknown (sreport's Idle is what the others leave)
 *   Reported   their sum: the capacity the time series knows
 *   TRES Count the capacity over the window's known seconds (sreport: the hours' mean count)
 *
 * Each class is rounded to whole TRES-seconds (memory in MiB, as Slurm counts it); Reported
 * is the sum of the rounded classes. billing has no capacity in the series: refused.
 */
#include "sa_sreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rcommon.h"
#include "sa_util.h"

/* One cluster's figures of one TRES, in TRES-seconds. */
typedef struct {
    const char *cluster;
    sa_rtres_t tres;
    uint64_t count, alloc, down, pdown, idle, planned, over, reported;
} urow_t;

/* The utilization resource of a TRES. */
static sa_ures_t ures_of(sa_rtres_t t)
{
    return t == SA_TRES_MEM ? SA_UR_MEM : t == SA_TRES_GPU ? SA_UR_GPU : SA_UR_CPU;
}

/* The rows of one cluster: a TRES it has capacity of is a row (sreport: its accounting record). */
static bool cluster_rows(const sa_sreport_req_t *r, const char *cluster, const sa_util_t *u, int64_t known_s,
                         urow_t *rows, size_t *n)
{
    double cls[SA_UR_N][SA_UC_N];

    sa_util_summary_classes(u, cls);
    for (size_t t = 0; t < r->ntres; t++) {
        const double *c = cls[ures_of(r->tres[t])];
        urow_t *w = &rows[*n];
        memset(w, 0, sizeof *w);
        w->cluster = cluster;
        w->tres = r->tres[t];
        w->alloc = (uint64_t)llround(c[SA_UC_ALLOCATED] + c[SA_UC_RESERVED]);
        w->down = (uint64_t)llround(c[SA_UC_DOWN]);
        w->pdown = (uint64_t)llround(c[SA_UC_PLANNED_DOWN]);
        w->planned = (uint64_t)llround(c[SA_UC_PLANNED]);
        w->idle = (uint64_t)llround(c[SA_UC_IDLE] + c[SA_UC_STRANDED] + c[SA_UC_UNKNOWN]);
        if (r->tres[t] == SA_TRES_CPU && u->has_planned && u->planned_raw > u->planned)
            w->over = (uint64_t)llround(u->planned_raw - u->planned);
        w->reported = w->alloc + w->down + w->pdown + w->idle + w->planned;
        if (!w->reported)
            continue;
        w->count = known_s > 0 ? w->reported / (uint64_t)known_s : 0;
        (*n)++;
    }
    return true;
}

/* The clusters: those named, else the archive's (or the --sqlite file's) that have a time series. */
static bool util_clusters(const sa_report_opts_t *q, sa_rtsdbs_t *tsdbs, sa_strv_t *out, sa_error_t *error)
{
    sa_rdb_t *db;
    sa_rclusters_t rc;
    bool ok;

    if (q->clusters.n || !sa_report_archive_given(q)) {
        for (size_t i = 0; i < q->clusters.n; i++) {
            if (!sa_strv_push(out, q->clusters.v[i]))
                return sa_error_nomem(error);
        }
        return true;
    }
    if (!(db = sa_report_connect(q, error)))
        return false;
    ok = sa_rdb_clusters(db, &q->clusters, &rc, error);
    for (size_t i = 0; ok && i < rc.n; i++) {
        sa_tsdb_t *ts = NULL;
        ok = sa_rtsdbs_get(tsdbs, q, rc.v[i].name, false, &ts, error);
        if (ok && ts && !sa_strv_push(out, rc.v[i].name))
            ok = sa_error_nomem(error);
    }
    if (ok || error->domain)
        sa_rclusters_clear(&rc);
    sa_rdb_close(db);
    return ok;
}

/* Sets the widths of the time columns from the largest figure of each (sreport_set_usage_col_width). */
static void widths(const sa_sreport_req_t *r, const urow_t *rows, size_t n, sa_srfield_t *f, size_t nf)
{
    for (size_t i = 0; i < nf; i++) {
        uint64_t max = 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t v = 0;
            switch (f[i].type) {
            case SR_F_ALLOC: case SR_F_ENERGY: v = rows[k].alloc; break;
            case SR_F_DOWN: v = rows[k].down; break;
            case SR_F_IDLE: v = rows[k].idle; break;
            case SR_F_PLANNED: v = rows[k].planned; break;
            case SR_F_OVER: v = rows[k].over; break;
            case SR_F_PDOWN: v = rows[k].pdown; break;
            case SR_F_REPORTED: v = rows[k].reported; break;
            default: break;
            }
            if (v > max)
                max = v;
        }
        switch (f[i].type) {
        case SR_F_ALLOC: case SR_F_ENERGY: case SR_F_DOWN: case SR_F_IDLE: case SR_F_PLANNED: case SR_F_OVER:
        case SR_F_PDOWN: case SR_F_REPORTED:
            f[i].len = sa_srprint_usage_width(r->time, max);
            break;
        default: break;
        }
    }
}

/* One row (cluster_reports.c _cluster_util_tres_report): the classes in percent of Reported. */
static void print_row(const sa_srprint_t *p, const sa_sreport_req_t *r, const urow_t *w, const sa_srfield_t *f,
                      size_t nf)
{
    uint64_t window = (uint64_t)(r->end - r->start);

    for (size_t i = 0; i < nf; i++) {
        bool last = i + 1 == nf;
        switch (f[i].type) {
        case SR_F_CLUSTER: sa_srprint_str(p, &f[i], w->cluster, last); break;
        case SR_F_TRES_NAME: sa_srprint_str(p, &f[i], sa_rtres_name(w->tres), last); break;
        case SR_F_TRES_COUNT: sa_srprint_uint(p, &f[i], w->count, last); break;
        case SR_F_ALLOC: sa_srprint_time(p, &f[i], w->alloc, w->reported, last); break;
        case SR_F_DOWN: sa_srprint_time(p, &f[i], w->down, w->reported, last); break;
        case SR_F_IDLE: sa_srprint_time(p, &f[i], w->idle, w->reported, last); break;
        case SR_F_PLANNED: sa_srprint_time(p, &f[i], w->planned, w->reported, last); break;
        case SR_F_OVER: sa_srprint_time(p, &f[i], w->over, w->reported, last); break;
        case SR_F_PDOWN: sa_srprint_time(p, &f[i], w->pdown, w->reported, last); break;
        case SR_F_REPORTED: sa_srprint_time(p, &f[i], w->reported, window * w->count, last); break;
        default: sa_sreport_none(p, &f[i], last); break;
        }
    }
    sa_srprint_eol(p);
}

bool sa_sreport_utilization(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                            sa_error_t *error)
{
    sa_report_opts_t q;
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, named;
    sa_ualloc_t *alloc = NULL;
    sa_srfield_t *f = NULL;
    urow_t *rows = NULL;
    size_t nf = 0, nrows = 0;
    sa_srprint_t p = {out, r->parsable, r->time};
    bool ok = false;

    (void)warn;
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&clusters);
    sa_strv_init(&named);
    sa_sreport_opts(o, r, &q);
    for (size_t t = 0; t < r->ntres; t++) {
        if (r->tres[t] == SA_TRES_BILLING) {
            sa_error_set(error, SA_ERR_USAGE, 0, "sreport cluster Utilization -T billing: the node state time series "
                                                 "holds no billing capacity (cpu, mem and gres/gpu it has)");
            goto done;
        }
    }
    if (!sa_sreport_fields(r, &f, &nf, error) || !util_clusters(&q, &tsdbs, &named, error))
        goto done;
    q.clusters = named;
    if (!sa_util_prepare(&q, &tsdbs, &clusters, true, &alloc, error))
        goto done;
    if (!(rows = calloc(clusters.n * SA_TRES_N + 1, sizeof *rows))) {
        ok = sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < clusters.n; i++) {
        sa_tsdb_t *db;
        sa_tsdb_coverage_t cov;
        sa_util_t u;
        bool cok = sa_rtsdbs_get(&tsdbs, &q, clusters.v[i], true, &db, error) &&
                   sa_util_compute(db, clusters.v[i], q.start, q.end, &alloc[i], &u, error) &&
                   sa_tsdb_coverage(db, clusters.v[i], q.start, q.end, &cov, error);
        if (cok) {
            int64_t known = (q.end - q.start) - cov.before_s - cov.gap_s - cov.after_s;
            cluster_rows(r, clusters.v[i], &u, known, rows, &nrows);
            if (o->verbose && !alloc[i].exact)
                fprintf(o->verbose, "# %s: allocated from the node snapshots: %s\n", clusters.v[i],
                        alloc[i].why ? alloc[i].why : "the runs are not known");
        }
        sa_util_clear(&u);
        if (!cok)
            goto done;
    }
    sa_sreport_head(r, &p, "Cluster Utilization", false);
    sa_sreport_usage_line(r, &p);
    if (!r->no_header)
        sa_srprint_rule(&p);
    widths(r, rows, nrows, f, nf);
    if (!r->no_header)
        sa_srprint_titles(&p, f, nf);
    for (size_t i = 0; i < nrows; i++)
        print_row(&p, r, &rows[i], f, nf);
    ok = true;
done:
    sa_util_free_alloc(alloc, clusters.n);
    free(rows);
    free(f);
    sa_strv_clear(&clusters);
    sa_strv_clear(&named);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
