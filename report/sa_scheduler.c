/*
 * sa_scheduler.c - `slurm-report scheduler`: what slurmctld's scheduler said of itself over
 * a window (sdiag --json, kept by slurm-ingest in the time series: table sched, and the RPC
 * counts of the latest observation of each UTC hour in sched_rpc).
 *
 * Rules (stated in every output's preamble):
 * - A row is one sdiag observation as slurmctld printed it: the latest of each UTC day of
 *   the window (of each hour when the window is three days or less, sa_rbuckets), so the
 *   figures are sdiag's own, never averaged. Cycle times in microseconds, as sdiag prints
 *   them (the plots: milliseconds).
 * - Counters of jobs and cycles run from slurmctld's last reset (midnight, or a restart);
 *   the RPC counts from its start or `sdiag --reset`. RPCs per hour: the growth of a count
 *   from the row before, over the hours between them; not known for the first row and
 *   after a reset (a count that went down).
 * - --by rpc-type, rpc-user: a row per observation and message type (user) instead, with
 *   its count, total time and RPCs per hour.
 * The SVG (and the site's section) plots the queue, the cycle times, the depths and the RPCs
 * per hour by message type and by user (the eight largest apart) over the window.
 */
#include "sa_rcommon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_vec.h"

/* ---- columns ---------------------------------------------------------------------------- */

/* The figures of a row: a member of the time series' sched table (sa_sdiag_t), its column. */
static const struct {
    const char *key, *title;
    size_t off; /* offsetof(sa_sdiag_t, member) */
    bool lng;
} figures[] = {
#define F(m, title, lng) {#m, title, offsetof(sa_sdiag_t, m), lng}
    F(jobs_pending, "Pending", false),
    F(jobs_running, "Running", false),
    F(schedule_queue_length, "Queue length", true),
    F(schedule_cycle_last, "Cycle last us", true),
    F(schedule_cycle_mean, "Cycle mean us", false),
    F(schedule_cycle_max, "Cycle max us", false),
    F(schedule_cycle_per_minute, "Cycles/min", false),
    F(schedule_cycle_mean_depth, "Depth mean", true),
    F(bf_cycle_last, "Backfill last us", true),
    F(bf_cycle_mean, "Backfill mean us", false),
    F(bf_cycle_max, "Backfill max us", true),
    F(bf_depth_mean, "Backfill depth mean", false),
    F(bf_queue_len, "Backfill queue", true),
    F(bf_last_backfilled_jobs, "Backfilled jobs", true),
    F(server_thread_count, "Threads", true),
    F(agent_queue_size, "Agent queue", true),
    F(dbd_agent_queue_size, "DBD queue", true),
    F(jobs_submitted, "Submitted", true),
    F(jobs_started, "Started", true),
    F(jobs_completed, "Completed", true),
    F(jobs_canceled, "Canceled", true),
    F(jobs_failed, "Failed", true),
#undef F
};
#define NFIG (sizeof figures / sizeof figures[0])
enum { C_CLUSTER, C_AT, C_FIG, C_RPCS = C_FIG + NFIG, C_RPH, C_N };
/* --by rpc-type, rpc-user */
enum { R_CLUSTER, R_AT, R_KIND, R_NAME, R_COUNT, R_TIME, R_RPH, R_N };

static sa_col_t sched_cols[C_N];
static const sa_col_t rpc_cols[R_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0, 0},         {"at", "At", SA_COL_STR, 0, 0},
    {"by", "By", SA_COL_STR, 0, 0},                   {"name", "Name", SA_COL_STR, 0, 0},
    {"count", "RPCs", SA_COL_INT, 0, 0},              {"total_time_us", "Total time us", SA_COL_INT, 0, SA_COL_LONG},
    {"per_hour", "RPCs per hour", SA_COL_NUM, 1, 0},
};

const sa_col_t *sa_scheduler_cols(size_t *n)
{
    sched_cols[C_CLUSTER] = (sa_col_t){"cluster", "Cluster", SA_COL_STR, 0, 0};
    sched_cols[C_AT] = (sa_col_t){"at", "At", SA_COL_STR, 0, 0};
    for (size_t i = 0; i < NFIG; i++)
        sched_cols[C_FIG + i] = (sa_col_t){figures[i].key, figures[i].title, SA_COL_INT, 0,
                                           figures[i].lng ? SA_COL_LONG : 0};
    sched_cols[C_RPCS] = (sa_col_t){"rpcs", "RPCs", SA_COL_INT, 0, SA_COL_LONG};
    sched_cols[C_RPH] = (sa_col_t){"rpcs_per_hour", "RPCs per hour", SA_COL_NUM, 1, 0};
    *n = C_N;
    return sched_cols;
}

/* ---- the observations ------------------------------------------------------------------- */

/* One RPC count of an observation. */
typedef struct {
    int kind; /* sa_sdiag_rpc_kind_t */
    char *name;
    int64_t count, time;
} srpc_t;

/* The observation a row shows: the latest of its bucket. */
typedef struct {
    uint32_t cluster;
    int64_t at;
    sa_sdiag_t sd;  /* the figures (rpcs and extra not kept) */
    srpc_t *rpcs;   /* its RPC counts (none when sdiag had none) */
    size_t nrpcs;
    int64_t total;  /* the sum of its counts by message type; SA_UNSET: none */
} sobs_t;

typedef struct {
    const sa_report_opts_t *o;
    sa_rintern_t names;
    uint32_t cluster;
    int64_t *bounds;
    size_t nb;
    sobs_t *v;      /* by cluster, then time */
    size_t n, cap;
    size_t first;   /* the first observation of the cluster being read */
} sched_t;

/* sa_tsdb_sdiag_range callback: keeps the latest observation of each bucket. */
static bool on_sdiag(int64_t at, const sa_sdiag_t *sd, void *ctx, sa_error_t *error)
{
    sched_t *s = ctx;
    size_t b = sa_rbucket_of(s->bounds, s->nb, at);
    sobs_t *last = s->n > s->first ? &s->v[s->n - 1] : NULL;

    if (b == SIZE_MAX)
        return true;
    if (last && sa_rbucket_of(s->bounds, s->nb, last->at) == b) { /* a later one of the same bucket */
        last->at = at;
        last->sd = *sd;
        return true;
    }
    if (!SA_VEC_GROW(s->v, s->cap, s->n, 1, 64))
        return sa_error_nomem(error);
    memset(&s->v[s->n], 0, sizeof s->v[s->n]);
    s->v[s->n].cluster = s->cluster;
    s->v[s->n].at = at;
    s->v[s->n].sd = *sd;
    s->v[s->n].total = SA_UNSET;
    s->n++;
    return true;
}

static bool on_rpc(const sa_sdiag_rpc_t *r, void *ctx, sa_error_t *error)
{
    sobs_t *x = ctx;
    srpc_t *v = realloc(x->rpcs, (x->nrpcs + 1) * sizeof *v);

    if (!v)
        return sa_error_nomem(error);
    x->rpcs = v;
    v[x->nrpcs] = (srpc_t){(int)r->kind, strdup(r->name), r->count, r->total_time};
    if (!v[x->nrpcs].name)
        return sa_error_nomem(error);
    x->nrpcs++;
    if (r->kind == SA_SDIAG_RPC_TYPE)
        x->total = (x->total == SA_UNSET ? 0 : x->total) + r->count;
    return true;
}

static void sched_clear(sched_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < s->v[i].nrpcs; k++)
            free(s->v[i].rpcs[k].name);
        free(s->v[i].rpcs);
    }
    free(s->v);
    free(s->bounds);
    sa_rintern_clear(&s->names);
}

/* The observations of one cluster, and the RPC counts of each. */
static bool read_cluster(sched_t *s, sa_tsdb_t *db, const char *cluster, sa_error_t *error)
{
    bool ok;

    s->cluster = sa_rintern(&s->names, cluster);
    s->first = s->n;
    if (s->cluster == UINT32_MAX)
        return sa_error_nomem(error);
    ok = sa_tsdb_sdiag_range(db, cluster, s->o->start, s->o->end, on_sdiag, s, error);
    for (size_t i = s->first; ok && i < s->n; i++)
        ok = sa_tsdb_sdiag_rpcs(db, cluster, s->v[i].at, on_rpc, &s->v[i], error);
    return ok;
}

/* The growth of count now over the count before, per hour between them; NAN when not known (a reset, no before). */
static double per_hour(int64_t now, int64_t before, int64_t t_now, int64_t t_before)
{
    if (now == SA_UNSET || before == SA_UNSET || now < before || t_now <= t_before)
        return NAN;
    return (double)(now - before) * 3600.0 / (double)(t_now - t_before);
}

/* The observation before x of the same cluster, or NULL. */
static const sobs_t *before(const sched_t *s, const sobs_t *x)
{
    return x > s->v && x[-1].cluster == x->cluster ? &x[-1] : NULL;
}

/* The count of (kind, name) in observation x; SA_UNSET when it has none. */
static int64_t rpc_count(const sobs_t *x, int kind, const char *name)
{
    for (size_t k = 0; x && k < x->nrpcs; k++) {
        if (x->rpcs[k].kind == kind && strcmp(x->rpcs[k].name, name) == 0)
            return x->rpcs[k].count;
    }
    return SA_UNSET;
}

/* ---- the tables ---------------------------------------------------------------------------- */

static bool sched_rows(const sched_t *s, sa_rtable_t *t, sa_error_t *error)
{
    for (size_t i = 0; i < s->n; i++) {
        const sobs_t *x = &s->v[i], *b = before(s, x);
        size_t r = sa_rtable_add_row(t);
        double rph;
        if (r == SIZE_MAX)
            return sa_error_nomem(error);
        sa_rtable_str(t, r, C_CLUSTER, sa_rintern_str(&s->names, x->cluster));
        sa_rtable_str(t, r, C_AT, sa_riso(x->at));
        for (size_t k = 0; k < NFIG; k++) {
            int64_t v = *(const int64_t *)((const char *)&x->sd + figures[k].off);
            if (v != SA_UNSET)
                sa_rtable_int(t, r, C_FIG + k, v);
        }
        if (x->total != SA_UNSET)
            sa_rtable_int(t, r, C_RPCS, x->total);
        rph = b ? per_hour(x->total, b->total, x->at, b->at) : NAN;
        if (!isnan(rph))
            sa_rtable_num(t, r, C_RPH, rph);
    }
    return true;
}

static bool rpc_rows(const sched_t *s, int kind, sa_rtable_t *t, sa_error_t *error)
{
    for (size_t i = 0; i < s->n; i++) {
        const sobs_t *x = &s->v[i], *b = before(s, x);
        for (size_t k = 0; k < x->nrpcs; k++) {
            const srpc_t *c = &x->rpcs[k];
            size_t r;
            double rph;
            if (c->kind != kind)
                continue;
            if ((r = sa_rtable_add_row(t)) == SIZE_MAX)
                return sa_error_nomem(error);
            sa_rtable_str(t, r, R_CLUSTER, sa_rintern_str(&s->names, x->cluster));
            sa_rtable_str(t, r, R_AT, sa_riso(x->at));
            sa_rtable_str(t, r, R_KIND, kind == SA_SDIAG_RPC_TYPE ? "message type" : "user");
            sa_rtable_str(t, r, R_NAME, c->name);
            sa_rtable_int(t, r, R_COUNT, c->count);
            if (c->time != SA_UNSET)
                sa_rtable_int(t, r, R_TIME, c->time);
            rph = b ? per_hour(c->count, rpc_count(b, kind, c->name), x->at, b->at) : NAN;
            if (!isnan(rph))
                sa_rtable_num(t, r, R_RPH, rph);
        }
    }
    return true;
}

/* ---- the plots ------------------------------------------------------------------------------ */

/* The most RPC names a plot shows apart; the others are summed as one. */
#define PLOT_NAMES 8

/* The values the plots point into (owned), and the plots. */
typedef struct {
    sa_rplot_t *p;
    size_t n, cap;
    sa_rseries_t *s;  /* every plot's series, in one array */
    size_t ns, scap;
    size_t *first;    /* per plot: where its series begin in s (pointers once every plot is added) */
    double **vals;    /* every series' values */
    size_t nv;
    int64_t **times;
    size_t nt;
    sa_strv_t strs;   /* titles and names */
} splots_t;

static void splots_clear(splots_t *p)
{
    for (size_t i = 0; i < p->nv; i++)
        free(p->vals[i]);
    for (size_t i = 0; i < p->nt; i++)
        free(p->times[i]);
    free(p->vals);
    free(p->times);
    free(p->p);
    free(p->s);
    free(p->first);
    sa_strv_clear(&p->strs);
}

/* A new array of n values (NAN) kept by p; NULL on out of memory. */
static double *svals(splots_t *p, size_t n)
{
    double *v = malloc((n ? n : 1) * sizeof *v), **vv = realloc(p->vals, (p->nv + 1) * sizeof *vv);

    if (vv)
        p->vals = vv;
    if (!v || !vv) {
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    p->vals[p->nv++] = v;
    return v;
}

/* A string kept by p (the last of its strs). */
static const char *sstr(splots_t *p, char *s)
{
    if (!s || !sa_strv_push(&p->strs, s)) {
        free(s);
        return NULL;
    }
    free(s);
    return p->strs.v[p->strs.n - 1];
}

/* Figure k's values over observations v[0..n), scaled (NAN where sdiag did not say it). */
static double *fig_series(splots_t *p, const sobs_t *v, size_t n, size_t off, double scale)
{
    double *out = svals(p, n);

    for (size_t i = 0; out && i < n; i++) {
        int64_t x = *(const int64_t *)((const char *)&v[i].sd + off);
        if (x != SA_UNSET)
            out[i] = (double)x * scale;
    }
    return out;
}

/* Adds a plot of series s[0..ns) (copied into p) over the times t. */
static bool add_plot(splots_t *p, sa_rplot_kind_t kind, const char *title, const char *unit, const int64_t *t,
                     size_t n, const sa_rseries_t *s, size_t ns)
{
    size_t *first;

    if (!title || !(first = realloc(p->first, (p->n + 1) * sizeof *first)))
        return false;
    p->first = first;
    if (!SA_VEC_GROW(p->p, p->cap, p->n, 1, 8) || !SA_VEC_GROW(p->s, p->scap, p->ns, ns, 32))
        return false;
    if (ns)
        memcpy(p->s + p->ns, s, ns * sizeof *s);
    p->first[p->n] = p->ns;
    p->p[p->n++] = (sa_rplot_t){kind, title, unit, t, n, NULL, ns, false, "No sdiag observation in the window."};
    p->ns += ns;
    return true;
}

/*
 * RPCs per hour of kind (message type, user) over v[0..n): the PLOT_NAMES largest over the
 * window apart, the rest as one series, stacked. The growth from each observation to the
 * next is drawn in the bucket of the next (not known: none).
 */
static bool rpc_plot(splots_t *p, const sobs_t *v, size_t n, int kind, const char *title, const int64_t *t)
{
    sa_strv_t names;
    double *tot = NULL;
    size_t *order = NULL, shown;
    sa_rseries_t s[PLOT_NAMES + 1];
    bool ok = true;

    sa_strv_init(&names);
    for (size_t i = 0; ok && i < n; i++)
        for (size_t k = 0; ok && k < v[i].nrpcs; k++)
            if (v[i].rpcs[k].kind == kind && !sa_strv_contains(&names, v[i].rpcs[k].name))
                ok = sa_strv_push(&names, v[i].rpcs[k].name);
    ok = ok && (tot = calloc(names.n + 1, sizeof *tot)) && (order = calloc(names.n + 1, sizeof *order));
    for (size_t j = 0; ok && j < names.n; j++) {
        order[j] = j;
        for (size_t i = 1; i < n; i++) {
            double r = per_hour(rpc_count(&v[i], kind, names.v[j]), rpc_count(&v[i - 1], kind, names.v[j]), v[i].at,
                                v[i - 1].at);
            tot[j] += isnan(r) ? 0 : r;
        }
    }
    for (size_t a = 0; ok && a < names.n; a++) /* the most RPCs first */
        for (size_t b = a + 1; b < names.n; b++)
            if (tot[order[b]] > tot[order[a]]) {
                size_t x = order[a];
                order[a] = order[b];
                order[b] = x;
            }
    shown = names.n > PLOT_NAMES ? PLOT_NAMES : names.n;
    for (size_t j = 0; ok && j <= shown && j < names.n; j++) {
        double *val = svals(p, n);
        const char *nm = j < shown ? sstr(p, strdup(names.v[order[j]])) : "others";
        ok = val && nm;
        for (size_t i = 1; ok && i < n; i++) {
            double sum = 0;
            bool known = false;
            for (size_t q = j; q < (j < shown ? j + 1 : names.n); q++) {
                double r = per_hour(rpc_count(&v[i], kind, names.v[order[q]]),
                                    rpc_count(&v[i - 1], kind, names.v[order[q]]), v[i].at, v[i - 1].at);
                if (!isnan(r)) {
                    sum += r;
                    known = true;
                }
            }
            val[i] = known ? sum : NAN;
        }
        if (ok)
            s[j] = (sa_rseries_t){nm, val};
    }
    ok = ok && add_plot(p, SA_RPLOT_STACK, title, "RPCs per hour", t, n, s, shown + (names.n > shown));
    free(tot);
    free(order);
    sa_strv_clear(&names);
    return ok;
}

/* The bucket bounds of observations v[0..n): each one's bucket (stacked bars of the RPCs). */
static int64_t *obs_bounds(splots_t *p, const sched_t *s, const sobs_t *v, size_t n)
{
    int64_t *t = malloc((n + 1) * sizeof *t), **tt = realloc(p->times, (p->nt + 1) * sizeof *tt);

    if (tt)
        p->times = tt;
    if (!t || !tt) {
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = s->bounds[sa_rbucket_of(s->bounds, s->nb, v[i].at)];
    t[n] = n ? s->bounds[sa_rbucket_of(s->bounds, s->nb, v[n - 1].at) + 1] : 0;
    p->times[p->nt++] = t;
    return t;
}

/* The plots of one cluster's observations v[0..n). */
static bool cluster_plots(splots_t *p, const sched_t *s, const sobs_t *v, size_t n, const char *cluster)
{
    int64_t *at = malloc((n + 1) * sizeof *at), **tt = realloc(p->times, (p->nt + 1) * sizeof *tt), *bounds;
    sa_rseries_t q[3];
    bool ok = at && tt;

    if (tt)
        p->times = tt;
    if (!ok) {
        free(at);
        return false;
    }
    p->times[p->nt++] = at;
    for (size_t i = 0; i < n; i++)
        at[i] = v[i].at;
    q[0] = (sa_rseries_t){"pending", fig_series(p, v, n, offsetof(sa_sdiag_t, jobs_pending), 1)};
    q[1] = (sa_rseries_t){"running", fig_series(p, v, n, offsetof(sa_sdiag_t, jobs_running), 1)};
    q[2] = (sa_rseries_t){"in the main scheduler's queue", fig_series(p, v, n, offsetof(sa_sdiag_t, schedule_queue_length), 1)};
    ok = q[0].v && q[1].v && q[2].v &&
         add_plot(p, SA_RPLOT_LINES, sstr(p, sa_rprintf("%s: jobs (sdiag)", cluster)), "jobs", at, n, q, 3);
    q[0] = (sa_rseries_t){"main cycle, mean", fig_series(p, v, n, offsetof(sa_sdiag_t, schedule_cycle_mean), 1e-3)};
    q[1] = (sa_rseries_t){"main cycle, max", fig_series(p, v, n, offsetof(sa_sdiag_t, schedule_cycle_max), 1e-3)};
    q[2] = (sa_rseries_t){"backfill cycle, mean", fig_series(p, v, n, offsetof(sa_sdiag_t, bf_cycle_mean), 1e-3)};
    ok = ok && q[0].v && q[1].v && q[2].v &&
         add_plot(p, SA_RPLOT_LINES, sstr(p, sa_rprintf("%s: scheduling cycles", cluster)), "milliseconds", at, n,
                  q, 3);
    q[0] = (sa_rseries_t){"main, mean depth", fig_series(p, v, n, offsetof(sa_sdiag_t, schedule_cycle_mean_depth), 1)};
    q[1] = (sa_rseries_t){"backfill, mean depth", fig_series(p, v, n, offsetof(sa_sdiag_t, bf_depth_mean), 1)};
    ok = ok && q[0].v && q[1].v &&
         add_plot(p, SA_RPLOT_LINES, sstr(p, sa_rprintf("%s: jobs looked at per cycle", cluster)), "jobs", at, n, q,
                  2);
    bounds = ok ? obs_bounds(p, s, v, n) : NULL;
    ok = ok && bounds &&
         rpc_plot(p, v, n, SA_SDIAG_RPC_TYPE, sstr(p, sa_rprintf("%s: RPCs per hour by message type", cluster)),
                  bounds) &&
         rpc_plot(p, v, n, SA_SDIAG_RPC_USER, sstr(p, sa_rprintf("%s: RPCs per hour by user", cluster)), bounds);
    return ok;
}

/* Every cluster's plots; then the series indexes become pointers (the array no longer moves). */
static bool all_plots(splots_t *p, const sched_t *s, sa_error_t *error)
{
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        while (j < s->n && s->v[j].cluster == s->v[i].cluster)
            j++;
        if (!cluster_plots(p, s, &s->v[i], j - i, sa_rintern_str(&s->names, s->v[i].cluster)))
            return sa_error_nomem(error);
        i = j;
    }
    for (size_t i = 0; i < p->n; i++)
        p->p[i].s = p->s + p->first[i];
    return true;
}

/* ---- the report ------------------------------------------------------------------------------- */

static void preamble(const sched_t *s, int64_t step, sa_strv_t *p)
{
    sa_rpreamble_add(p, "The scheduler's statistics (sdiag) from %s to %s (UTC, end excluded): the latest observation "
                        "of each UTC %s, as slurmctld printed it.",
                     sa_riso(s->o->start), sa_riso(s->o->end), step == 3600 ? "hour" : "day");
    sa_rpreamble_add(p, "Cycle times in microseconds; counters of jobs and cycles since slurmctld's last reset "
                        "(midnight, or a restart); RPC counts since its start or sdiag --reset.");
    sa_rpreamble_add(p, "RPCs per hour: the growth of the count from the row before, over the hours between them "
                        "(empty for the first row and after a reset).");
}

/* Checks the options: a window, the keys and formats scheduler has. */
static bool check_opts(const sa_report_opts_t *o, sa_error_t *error)
{
    if (!sa_report_window("scheduler", o->start, o->end, true, error))
        return false;
    if (o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format prometheus is for `current` (its scheduler families)");
        return false;
    }
    if (o->by & ~(unsigned)(SA_BY_RPC_TYPE | SA_BY_RPC_USER) ||
        (o->by & SA_BY_RPC_TYPE && o->by & SA_BY_RPC_USER)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "scheduler: --by rpc-type or --by rpc-user (one of them)");
        return false;
    }
    return true;
}

bool sa_report_scheduler(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    sa_strv_t clusters, pre;
    sched_t s;
    splots_t plots;
    sa_rtable_t t;
    size_t ncols;
    const sa_col_t *cols = o->by ? rpc_cols : sa_scheduler_cols(&ncols);
    int64_t step = 0;
    json_t *extra = NULL;
    bool ok = false;

    (void)warn; /* nothing is left out: a cluster without its series is exit 2 */
    memset(&s, 0, sizeof s);
    memset(&plots, 0, sizeof plots);
    s.o = o;
    sa_rintern_init(&s.names);
    sa_strv_init(&plots.strs);
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&clusters);
    sa_strv_init(&pre);
    sa_rtable_init(&t, cols, o->by ? R_N : C_N);
    if (!check_opts(o, error) || !sa_report_series_clusters(o, &tsdbs, &clusters, error))
        goto done;
    if ((s.nb = sa_rbuckets(o->start, o->end, &s.bounds, &step)) == SIZE_MAX) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < clusters.n; i++) {
        sa_tsdb_t *db; /* the report is the series: a cluster without one is exit 2, as for utilization */
        if (!sa_rtsdbs_get(&tsdbs, o, clusters.v[i], true, &db, error) || !read_cluster(&s, db, clusters.v[i], error))
            goto done;
    }
    if (!(o->by ? rpc_rows(&s, o->by & SA_BY_RPC_USER ? SA_SDIAG_RPC_USER : SA_SDIAG_RPC_TYPE, &t, error)
                : sched_rows(&s, &t, error)) ||
        ((o->format == SA_FMT_SVG || o->format == SA_FMT_HTML) && !all_plots(&plots, &s, error)))
        goto done;
    preamble(&s, step, &pre);
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "every", json_string(step == 3600 ? "hour" : "day"));
    {
        sa_rdoc_t doc = {.kind = "scheduler", .title = "slurm-report: the scheduler (sdiag)", .preamble = &pre,
                         .table = &t, .json = extra, .charts_title = "slurm-report: the scheduler over time",
                         .plots = plots.p, .nplots = plots.n};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_rtable_clear(&t);
    splots_clear(&plots);
    sched_clear(&s);
    sa_strv_clear(&clusters);
    sa_strv_clear(&pre);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
