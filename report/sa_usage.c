/*
 * sa_usage.c - `slurm-report usage`: GPU time per cluster, account, user and GPU
 * type over a window, in GPU-hours, GPU-years or RGU-years, and against awards
 * (sa_alloc.h). The accounting rules are at the top of sa_report.h.
 *
 * The figures come from sa_usage_scan.c (the job archive) and sa_usage_calc.c (sums,
 * awards); this file makes the document: one row per group (or per award, then the
 * accounts without one), one chart per award (or per account) of the use per month,
 * the preamble that states the rules; sa_render.h writes it in the format asked for.
 */
#include "sa_usage.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- columns ------------------------------------------------------------------------------- */

/* C_CPU .. C_BILL + 3: per TRES cpu, mem, billing its hours, minutes, years and percent of capacity. */
enum { C_CLUSTER, C_ACCOUNT, C_USER, C_TYPE, C_HOURS, C_MINUTES, C_YEARS, C_PCTCL, C_RGU, C_UNW, C_CPU, C_MEM = C_CPU + 4,
       C_BILL = C_MEM + 4, C_AWARD = C_BILL + 4, C_MEMBERS, C_AWARDPM, C_AUNIT, C_ASTART, C_AEND, C_USEDW, C_USEDS,
       C_USEDPM, C_TARGET, C_PCT, C_PROJ, C_PROJPCT, C_ELAPSED, C_ASOF, C_STATUS, C_NOTE, C_N };
/* The first column of TRES r (C_HOURS for GPUs), and of its unit: + 0 hours, 1 minutes, 2 years, 3 percent. */
static const int tres_col[SA_TRES_N] = {C_HOURS, C_CPU, C_MEM, C_BILL};

/* Every column; which are brief (shown by default in the table and HTML) depends on the unit: usage_columns(). */
static const sa_col_t all_cols[C_N] = {
    [C_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, 0},
    [C_ACCOUNT] = {"account", "Account", SA_COL_STR, 0, 0},
    [C_USER] = {"user", "User", SA_COL_STR, 0, 0},
    [C_TYPE] = {"gpu_type", "GPU type", SA_COL_STR, 0, 0},
    [C_HOURS] = {"gpu_hours", "GPU-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [C_MINUTES] = {"gpu_minutes", "GPU-minutes", SA_COL_NUM, 1, 0},
    [C_YEARS] = {"gpu_years", "GPU-years", SA_COL_NUM, 4, SA_COL_LONG},
    [C_PCTCL] = {"percent_of_cluster", "% of cluster", SA_COL_NUM, 1, 0},
    [C_RGU] = {"rgu_years", "RGU-years", SA_COL_NUM, 4, SA_COL_LONG},
    [C_UNW] = {"gpu_hours_unweighted", "Unweighted GPU-h", SA_COL_NUM, 2, SA_COL_LONG},
    [C_CPU] = {"core_hours", "Core-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [C_CPU + 1] = {"core_minutes", "Core-minutes", SA_COL_NUM, 1, 0},
    [C_CPU + 2] = {"core_years", "Core-years", SA_COL_NUM, 4, SA_COL_LONG},
    [C_CPU + 3] = {"cpu_percent_of_cluster", "% CPU", SA_COL_NUM, 1, 0},
    [C_MEM] = {"mem_gb_hours", "GB-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [C_MEM + 1] = {"mem_gb_minutes", "GB-minutes", SA_COL_NUM, 1, 0},
    [C_MEM + 2] = {"mem_gb_years", "GB-years", SA_COL_NUM, 4, SA_COL_LONG},
    [C_MEM + 3] = {"mem_percent_of_cluster", "% mem", SA_COL_NUM, 1, 0},
    [C_BILL] = {"billing_hours", "Billing-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [C_BILL + 1] = {"billing_minutes", "Billing-minutes", SA_COL_NUM, 1, 0},
    [C_BILL + 2] = {"billing_years", "Billing-years", SA_COL_NUM, 4, SA_COL_LONG},
    [C_BILL + 3] = {"billing_percent_of_cluster", "% billing", SA_COL_NUM, 1, 0},
    [C_AWARD] = {"award", "Award", SA_COL_NUM, 4, 0},
    [C_MEMBERS] = {"members", "Members", SA_COL_INT, 0, 0},
    [C_AWARDPM] = {"award_per_member", "Award/member", SA_COL_NUM, 4, SA_COL_LONG},
    [C_AUNIT] = {"award_unit", "Unit", SA_COL_STR, 0, 0},
    [C_ASTART] = {"award_start", "Award start", SA_COL_STR, 0, SA_COL_LONG},
    [C_AEND] = {"award_end", "Award end", SA_COL_STR, 0, SA_COL_LONG},
    [C_USEDW] = {"used_window", "Used (window)", SA_COL_NUM, 4, SA_COL_LONG},
    [C_USEDS] = {"used_since_start", "Used (award)", SA_COL_NUM, 4, SA_COL_LONG},
    [C_USEDPM] = {"used_per_member", "Used/member", SA_COL_NUM, 4, 0},
    [C_TARGET] = {"target_to_date", "Target", SA_COL_NUM, 4, SA_COL_LONG},
    [C_PCT] = {"percent_of_target", "% target", SA_COL_NUM, 1, 0},
    [C_PROJ] = {"projected_at_end", "Projected", SA_COL_NUM, 4, SA_COL_LONG},
    [C_PROJPCT] = {"projected_percent_of_award", "% award (proj.)", SA_COL_NUM, 1, 0},
    [C_ELAPSED] = {"elapsed_percent", "% elapsed", SA_COL_NUM, 1, SA_COL_LONG},
    [C_ASOF] = {"as_of", "As of", SA_COL_STR, 0, SA_COL_LONG},
    [C_STATUS] = {"status", "Status", SA_COL_STR, 0, SA_COL_BADGE},
    [C_NOTE] = {"note", "Note", SA_COL_STR, 0, SA_COL_LONG},
};

const sa_col_t *sa_usage_cols(size_t *n)
{
    *n = C_N;
    return all_cols;
}

/* The table of the report: the columns shown, and where each of all_cols is (-1: not shown). */
typedef struct {
    sa_col_t cols[C_N];
    int col_of[C_N];
    sa_rtable_t t;
} utable_t;

/*
 * The columns: the grouping keys (--by, a type with awards), the use (GPU-hours and
 * GPU-years always, GPU-minutes or % of cluster with -t), RGU columns, award columns.
 * The brief ones: the keys, the use in the report's unit, award, unit, % target,
 * projection (% of the award) and status; when an award gives its group's size, its
 * members and the use per member (the per-member columns are not shown otherwise).
 * -p/-P with -t minutes print the minutes alone, whole, as sreport -t minutes does (sprintf "%.0f" of the seconds / 60); unless -o chose.
 */
static void usage_columns(const sa_usage_t *u, unsigned by, utable_t *ut)
{
    bool alloc = u->o->allocations_path != NULL;
    sa_unit_t unit = u->o->unit;
    bool sreport_minutes = unit == SA_UNIT_GPU_MINUTES && u->o->format == SA_FMT_PARSABLE;
    bool want[C_N] = {
        /* with awards the rows are the awards: --by user,gpu-type only breaks down the charts */
        [C_CLUSTER] = true, [C_ACCOUNT] = alloc || (by & SA_BY_ACCOUNT), [C_USER] = !alloc && (by & SA_BY_USER),
        [C_TYPE] = (by & SA_BY_GPU_TYPE) || alloc, [C_RGU] = u->rgu_cols && u->want[SA_TRES_GPU],
        [C_UNW] = u->rgu_cols && u->want[SA_TRES_GPU],
    };
    size_t n = 0;

    for (int r = 0; r < SA_TRES_N; r++) { /* per TRES: hours and years always, minutes or percent with -t */
        want[tres_col[r]] = want[tres_col[r] + 2] = u->want[r] && (!sreport_minutes || u->o->ncolumns);
        want[tres_col[r] + 1] = u->want[r] && unit == SA_UNIT_GPU_MINUTES;
        want[tres_col[r] + 3] = u->want[r] && unit == SA_UNIT_PERCENT;
    }
    for (int i = 0; i < C_N; i++) {
        ut->col_of[i] = -1;
        bool per_member = i == C_MEMBERS || i == C_AWARDPM || i == C_USEDPM;
        if (want[i] || (alloc && i >= C_AWARD && (!per_member || u->member_cols))) {
            bool years = unit == SA_UNIT_GPU_YEARS || (unit == SA_UNIT_RGU_YEARS && i > C_UNW);
            ut->col_of[i] = (int)n;
            ut->cols[n] = all_cols[i];
            if (sreport_minutes && i >= C_HOURS && i < C_AWARD && (i == C_MINUTES || (i >= C_CPU && (i - C_CPU) % 4 == 1)))
                ut->cols[n].decimals = 0;
            if ((i == C_HOURS && unit == SA_UNIT_GPU_HOURS) || (i == C_YEARS && unit == SA_UNIT_GPU_YEARS) ||
                ((i == C_RGU || i == C_UNW) && unit == SA_UNIT_RGU_YEARS) ||
                (i >= C_CPU && i < C_AWARD && ((i - C_CPU) % 4 == 0 ? unit == SA_UNIT_GPU_HOURS : years)))
                ut->cols[n].flags &= ~(unsigned)SA_COL_LONG;
            n++;
        }
    }
    sa_rtable_init(&ut->t, ut->cols, n);
}

static void set_str(utable_t *ut, size_t r, int id, const char *v)
{
    if (ut->col_of[id] >= 0)
        sa_rtable_str(&ut->t, r, (size_t)ut->col_of[id], v);
}

static void set_num(utable_t *ut, size_t r, int id, double v)
{
    if (ut->col_of[id] >= 0)
        sa_rtable_num(&ut->t, r, (size_t)ut->col_of[id], v);
}

/* The use of every key of cluster c over [x, y). */
static sa_usum_t cluster_sum(sa_usage_t *u, uint32_t c, int64_t x, int64_t y)
{
    sa_usum_t s = {0};
    for (size_t i = 0; i < u->s.nacc; i++) {
        if (u->s.acc[i].k.c == c)
            sa_usage_sum_add(u, &s, &u->s.acc[i], x, y);
    }
    return s;
}

/*
 * The use columns of a row of cluster c: GPU-hours, GPU-minutes, GPU-years, percent of
 * the cluster's GPU capacity in the window, RGU-years, unweighted GPU-hours; the same
 * (but RGU) of the other TRES asked for.
 */
static void set_use(sa_usage_t *u, utable_t *ut, size_t r, uint32_t c, const sa_usum_t *s)
{
    set_num(ut, r, C_HOURS, sa_usage_hours(s->secs));
    set_num(ut, r, C_MINUTES, (double)s->secs / 60.0);
    set_num(ut, r, C_YEARS, sa_usage_hours(s->secs) / u->hpy);
    set_num(ut, r, C_RGU, sa_usage_rgu_years(u, s));
    set_num(ut, r, C_UNW, sa_usage_hours(s->unweighted));
    for (int t = 0; t < SA_TRES_N; t++) {
        if (t != SA_TRES_GPU) {
            set_num(ut, r, tres_col[t], sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_HOURS, s));
            set_num(ut, r, tres_col[t] + 1, sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_MINUTES, s));
            set_num(ut, r, tres_col[t] + 2, sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_YEARS, s));
        }
        if (ut->col_of[tres_col[t] + 3] >= 0)
            set_num(ut, r, tres_col[t] + 3, sa_usage_percent(u, c, (sa_rtres_t)t, s));
    }
}

/*
 * The total row of cluster c: its use in the window (every account and user the
 * report covers), "(total)" in the first key column after the cluster's.
 */
static bool total_row(sa_usage_t *u, utable_t *ut, uint32_t c)
{
    sa_usum_t s = cluster_sum(u, c, u->o->start, u->o->end);
    size_t r = sa_rtable_add_row(&ut->t);
    int key = ut->col_of[C_ACCOUNT] >= 0 ? C_ACCOUNT : ut->col_of[C_USER] >= 0 ? C_USER : C_TYPE;

    if (r == SIZE_MAX)
        return false;
    sa_rtable_mark_total(&ut->t, r);
    set_str(ut, r, C_CLUSTER, sa_rintern_str(&u->s.names, c));
    set_str(ut, r, key, "(total)");
    set_use(u, ut, r, c, &s);
    return true;
}

/* ---- charts -------------------------------------------------------------------------------- */

static bool want_charts(const sa_report_opts_t *o)
{
    return o->format == SA_FMT_SVG || o->format == SA_FMT_HTML;
}

/* The unit of the charts: the report's, GPU-years for percent (a share per month would not add up). */
static sa_unit_t chart_unit(const sa_report_opts_t *o)
{
    return o->unit == SA_UNIT_PERCENT ? SA_UNIT_GPU_YEARS : o->unit;
}

/* The accumulators a chart adds up: an award's scope, or a cluster and account. */
typedef struct {
    const sa_award_t *award; /* NULL: cluster c, account a */
    uint32_t c, a;
} scope_t;

static bool in_scope(sa_usage_t *u, const scope_t *sc, const sa_uacc_t *acc)
{
    if (sc->award)
        return sa_usage_award_matches(u, sc->award, acc);
    return acc->k.c == sc->c && acc->k.a == sc->a;
}

/* The TRES of the charts without an award: the first of -T. */
static sa_rtres_t chart_tres(const sa_report_opts_t *o)
{
    return o->ntres ? o->tres[0] : SA_TRES_GPU;
}

/* The TRES a chart counts: its award's, else the first of -T. */
static sa_rtres_t scope_tres(const sa_usage_t *u, const scope_t *sc)
{
    return sc->award ? sa_award_tres(sc->award) : chart_tres(u->o);
}

/* A sum in the chart's unit: the award's (GPU-, RGU-, core- or billing-years), else the report's. */
static double scope_units(sa_usage_t *u, const scope_t *sc, const sa_usum_t *s)
{
    return sc->award ? sa_usage_award_units(u, sc->award, s)
                     : sa_usage_tres_in_unit(u, chart_tres(u->o), chart_unit(u->o), s);
}

/* The GPU type as shown: "(none)" for the runs without GPUs (counted with -T cpu, mem, billing). */
static const char *type_shown(const char *t)
{
    return t[0] ? t : "(none)";
}

/* The name of acc's series in a breakdown by key (user, or GPU type as shown: a legend label is never empty). */
static const char *series_of(sa_usage_t *u, const sa_uacc_t *acc, unsigned key)
{
    return key == SA_BY_USER ? sa_rintern_str(&u->s.names, acc->k.u)
                             : type_shown(sa_rintern_str(&u->s.names, acc->k.t));
}

/* The values of a chart whose months are set: the use of the scope, per month (and per series). */
static bool chart_fill(sa_usage_t *u, sa_rchart_t *c, const scope_t *sc, unsigned series_key)
{
    for (size_t i = 0; i < c->nm; i++) {
        int64_t x = c->m[i], y = c->m[i + 1] < c->data_to ? c->m[i + 1] : c->data_to;
        if (y <= x)
            continue;
        for (size_t k = 0; k < u->s.nacc; k++) {
            const sa_uacc_t *acc = &u->s.acc[k];
            sa_usum_t s = {0};
            size_t j = 0;
            if (!in_scope(u, sc, acc))
                continue;
            sa_usage_sum_add(u, &s, acc, x, y);
            if (!s.tres[scope_tres(u, sc)])
                continue;
            if (series_key) {
                const char *name = series_of(u, acc, series_key);
                while (j < c->nseries && strcmp(c->series[j], name) != 0)
                    j++;
                if (j == c->nseries)
                    continue; /* not a series of this chart: cannot happen (series_names) */
                c->val[i * c->nseries + j] += scope_units(u, sc, &s);
            } else {
                c->val[i] += scope_units(u, sc, &s);
            }
        }
    }
    return true;
}

/* The series of a breakdown chart: the users (or GPU types) with use in the scope over [x, y), sorted. */
static bool series_names(sa_usage_t *u, const scope_t *sc, unsigned key, int64_t x, int64_t y, sa_rchart_t *c)
{
    sa_strv_t names;

    sa_strv_init(&names);
    for (size_t k = 0; k < u->s.nacc; k++) {
        const sa_uacc_t *acc = &u->s.acc[k];
        if (in_scope(u, sc, acc) && sa_usums_get_tres(&u->s, acc, scope_tres(u, sc), x, y) > 0 &&
            !sa_strv_add_sorted_unique(&names, series_of(u, acc, key))) {
            sa_strv_clear(&names);
            return false;
        }
    }
    c->nseries = names.n;
    c->series = names.v; /* steals the strings */
    return true;
}

/*
 * A breakdown of the chart main (same scope, period and unit): the monthly bars stacked
 * by user or by GPU type.
 */
static bool breakdown_chart(sa_usage_t *u, const sa_rchart_t *main, const scope_t *sc, unsigned key, sa_rchart_t *c)
{
    const char *what = key == SA_BY_USER ? "user" : "GPU type";

    c->title = sa_rprintf("%s, by %s", main->title, what);
    c->subtitle = sa_rprintf("monthly use by %s (%s)", what, main->unit);
    c->from = main->from;
    c->axis_to = main->axis_to;
    c->data_to = main->data_to;
    c->target = c->projected = -1;
    c->unit = main->unit;
    if (!c->title || !c->subtitle || !series_names(u, sc, key, c->from, c->data_to, c) || !sa_rchart_months(c))
        return false;
    if (c->nseries > 1) {
        double *v = calloc(c->nm * c->nseries + 1, sizeof *v);
        if (!v)
            return false;
        free(c->val);
        c->val = v;
    }
    return chart_fill(u, c, sc, key);
}

/* The breakdowns --by asks for (user, GPU type), after the chart just made (charts[*n - 1]). */
static bool breakdowns(sa_usage_t *u, unsigned by, const scope_t *sc, sa_rchart_t *charts, size_t *n)
{
    static const unsigned keys[2] = {SA_BY_USER, SA_BY_GPU_TYPE};
    size_t main = *n - 1;

    for (int i = 0; i < 2; i++) {
        if ((by & keys[i]) && !breakdown_chart(u, &charts[main], sc, keys[i], &charts[(*n)++]))
            return false;
    }
    return true;
}

/* The chart of an award: its period, the use to its as-of time, its amount as the target, the projection. */
static bool award_chart(sa_usage_t *u, const sa_award_t *a, const sa_uaward_t *f, sa_rchart_t *c)
{
    char buf[128];
    scope_t sc = {a, 0, 0};

    c->title = sa_rprintf("%s / %s%s%s", a->cluster, a->account, a->gpu_type ? " / " : "",
                          a->gpu_type ? a->gpu_type : "");
    snprintf(buf, sizeof buf, "%.10s", sa_riso(a->start));
    c->subtitle = sa_rprintf("award %g %s, %s to %.10s; used %.4g (%.1f%% of the target to date); projected %.4g "
                             "(%.1f%% of the award)",
                             a->amount, sa_award_unit_name(a->unit), buf, sa_riso(a->end), f->used_since,
                             f->has_pct ? f->pct : 0.0, f->projected, f->projected_pct);
    c->from = a->start;
    c->axis_to = a->end;
    c->data_to = f->to;
    c->target = a->amount;
    c->band_lo = a->under_pct;
    c->band_hi = a->over_pct;
    c->projected = f->to > a->start ? f->projected : -1;
    c->status = f->status;
    c->unit = a->unit == SA_AWARD_RGU_YEARS ? "RGU-years" : sa_rtres_unit_title(sa_award_tres(a), SA_UNIT_GPU_YEARS);
    return c->title && c->subtitle && sa_rchart_months(c) && chart_fill(u, c, &sc, 0);
}

/* Without awards: one chart per cluster and account over the window (and its breakdowns). */
static bool account_charts(sa_usage_t *u, unsigned by, sa_rchart_t *charts, size_t *ncharts, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    size_t *order = NULL, ng = 0;
    sa_ugroup_t *g = NULL;
    bool ok = true;

    if (!sa_usage_groups(u, SA_BY_ACCOUNT, &order, &g, &ng, error))
        return false;
    for (size_t i = 0; ok && i < ng; i++) {
        sa_rchart_t *c = &charts[(*ncharts)++];
        scope_t sc = {NULL, g[i].k.c, g[i].k.a};
        c->title = sa_rprintf("%s / %s", sa_rintern_str(&u->s.names, g[i].k.c), sa_rintern_str(&u->s.names, g[i].k.a));
        c->subtitle = sa_rprintf("%.4g %s in the window (no award given)",
                                 sa_usage_tres_in_unit(u, chart_tres(o), chart_unit(o), &g[i].window),
                                 sa_rtres_unit_title(chart_tres(o), chart_unit(o)));
        c->from = o->start;
        c->axis_to = o->end;
        c->data_to = o->end;
        c->target = c->projected = -1;
        c->unit = sa_rtres_unit_title(chart_tres(o), chart_unit(o));
        ok = c->title && c->subtitle && sa_rchart_months(c) && chart_fill(u, c, &sc, 0) &&
             breakdowns(u, by, &sc, charts, ncharts);
    }
    free(order);
    free(g);
    return ok || sa_error_nomem(error);
}

/* ---- rows ---------------------------------------------------------------------------------- */

/* Orders two awards by cluster (as listed), account, GPU type, start. */
static int award_cmp(const sa_usage_t *u, const sa_award_t *x, const sa_award_t *y)
{
    size_t cx = sa_usage_cluster(u, x->cluster), cy = sa_usage_cluster(u, y->cluster);
    int c = cx != cy ? (cx < cy ? -1 : 1) : strcmp(x->account, y->account);
    if (!c)
        c = strcmp(x->gpu_type ? x->gpu_type : "", y->gpu_type ? y->gpu_type : "");
    if (!c)
        c = x->start < y->start ? -1 : x->start > y->start;
    return c;
}

/* The awards reported, in row order, into *aord (caller frees). */
static bool award_order(const sa_usage_t *u, size_t **aord, size_t *na)
{
    size_t *v = malloc((u->awards.n + 1) * sizeof *v), n = 0;

    if (!v)
        return false;
    for (size_t i = 0; i < u->awards.n; i++) {
        if (u->award_in[i])
            v[n++] = i;
    }
    for (size_t i = 1; i < n; i++) { /* insertion sort: few awards */
        for (size_t j = i; j > 0 && award_cmp(u, &u->awards.v[v[j - 1]], &u->awards.v[v[j]]) > 0; j--) {
            size_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    *aord = v;
    *na = n;
    return true;
}

/* The row of award a (and its charts: the award's, then the breakdowns --by asks for). */
static bool award_row(sa_usage_t *u, utable_t *ut, unsigned by, const sa_award_t *a, sa_rchart_t *charts,
                      size_t *ncharts)
{
    const sa_report_opts_t *o = u->o;
    sa_uaward_t f;
    sa_usum_t w;
    size_t r = sa_rtable_add_row(&ut->t);
    scope_t sc = {a, 0, 0};

    if (r == SIZE_MAX)
        return false;
    sa_usage_award(u, a, &f);
    w = sa_usage_award_sum(u, a, o->start, o->end);
    set_str(ut, r, C_CLUSTER, a->cluster);
    set_str(ut, r, C_ACCOUNT, a->account);
    set_str(ut, r, C_TYPE, a->gpu_type ? a->gpu_type : "*");
    set_use(u, ut, r, (uint32_t)sa_usage_cluster(u, a->cluster), &w);
    set_num(ut, r, C_AWARD, a->amount);
    set_str(ut, r, C_AUNIT, sa_award_unit_name(a->unit));
    set_str(ut, r, C_ASTART, sa_riso(a->start));
    set_str(ut, r, C_AEND, sa_riso(a->end));
    set_num(ut, r, C_USEDW, f.used_window);
    set_num(ut, r, C_USEDS, f.used_since);
    if (a->members > 0) {
        if (ut->col_of[C_MEMBERS] >= 0)
            sa_rtable_int(&ut->t, r, (size_t)ut->col_of[C_MEMBERS], a->members);
        set_num(ut, r, C_AWARDPM, a->amount / (double)a->members);
        set_num(ut, r, C_USEDPM, f.used_since / (double)a->members);
    }
    set_num(ut, r, C_TARGET, f.target);
    if (f.has_pct)
        set_num(ut, r, C_PCT, f.pct);
    set_num(ut, r, C_PROJ, f.projected);
    set_num(ut, r, C_PROJPCT, f.projected_pct);
    set_num(ut, r, C_ELAPSED, f.elapsed_pct);
    set_str(ut, r, C_ASOF, sa_riso(f.to));
    set_str(ut, r, C_STATUS, f.status);
    set_str(ut, r, C_NOTE, a->note);
    if (!want_charts(o))
        return true;
    return award_chart(u, a, &f, &charts[(*ncharts)++]) && breakdowns(u, by, &sc, charts, ncharts);
}

/*
 * Per cluster: one row per award reported (and its charts), then one per account with
 * use in the window and no award, then the cluster's total.
 */
static bool award_rows(sa_usage_t *u, utable_t *ut, unsigned by, const sa_ugroup_t *groups, size_t ngroups,
                       sa_rchart_t *charts, size_t *ncharts, sa_error_t *error)
{
    size_t *aord, na;

    if (!award_order(u, &aord, &na))
        return sa_error_nomem(error);
    for (uint32_t c = 0; c < u->s.nclusters; c++) {
        const char *cl = sa_rintern_str(&u->s.names, c);
        for (size_t i = 0; i < na; i++) {
            if (strcmp(u->awards.v[aord[i]].cluster, cl) == 0 &&
                !award_row(u, ut, by, &u->awards.v[aord[i]], charts, ncharts))
                goto nomem;
        }
        for (size_t g = 0; g < ngroups; g++) {
            const char *ac = sa_rintern_str(&u->s.names, groups[g].k.a);
            bool has = false;
            size_t r;
            if (groups[g].k.c != c)
                continue;
            for (size_t i = 0; i < na && !has; i++)
                has = strcmp(u->awards.v[aord[i]].cluster, cl) == 0 && strcmp(u->awards.v[aord[i]].account, ac) == 0;
            if (has)
                continue;
            if ((r = sa_rtable_add_row(&ut->t)) == SIZE_MAX)
                goto nomem;
            set_str(ut, r, C_CLUSTER, cl);
            set_str(ut, r, C_ACCOUNT, ac);
            set_str(ut, r, C_TYPE, "*");
            set_use(u, ut, r, c, &groups[g].window);
            set_str(ut, r, C_STATUS, "no award");
        }
        if (!total_row(u, ut, c))
            goto nomem;
    }
    free(aord);
    return true;
nomem:
    free(aord);
    return sa_error_nomem(error);
}

/* Without awards: one row per group of the --by keys, and a total per cluster. */
static bool group_rows(sa_usage_t *u, utable_t *ut, const sa_ugroup_t *groups, size_t ngroups, sa_error_t *error)
{
    for (uint32_t c = 0; c < u->s.nclusters; c++) {
        for (size_t g = 0; g < ngroups; g++) {
            size_t r;
            if (groups[g].k.c != c)
                continue;
            if ((r = sa_rtable_add_row(&ut->t)) == SIZE_MAX)
                return sa_error_nomem(error);
            set_str(ut, r, C_CLUSTER, sa_rintern_str(&u->s.names, groups[g].k.c));
            set_str(ut, r, C_ACCOUNT, sa_rintern_str(&u->s.names, groups[g].k.a));
            set_str(ut, r, C_USER, sa_rintern_str(&u->s.names, groups[g].k.u));
            set_str(ut, r, C_TYPE, type_shown(sa_rintern_str(&u->s.names, groups[g].k.t)));
            set_use(u, ut, r, c, &groups[g].window);
        }
        if (!total_row(u, ut, c))
            return sa_error_nomem(error);
    }
    return true;
}

/* ---- the document ---------------------------------------------------------------------------- */

/* Checks the options that make no sense for usage. */
static bool check_opts(const sa_report_opts_t *o, unsigned by, sa_error_t *error)
{
    if (!sa_report_window("usage", o->start, o->end, true, error))
        return false;
    if (by & SA_BY_PARTITION) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--by partition is for `current`; usage groups by account, user, gpu-type");
        return false;
    }
    if (o->allocations_path && (by & ~(unsigned)(SA_BY_USER | SA_BY_GPU_TYPE)) != SA_BY_ACCOUNT &&
        (by & ~(unsigned)(SA_BY_USER | SA_BY_GPU_TYPE)) != 0) {
        sa_error_set(error, SA_ERR_USAGE, 0, "with --allocations the rows are the awards: use --by account (the default)");
        return false;
    }
    if (o->allocations_path && (by & (SA_BY_USER | SA_BY_GPU_TYPE)) && o->format != SA_FMT_SVG &&
        o->format != SA_FMT_HTML) {
        sa_error_set(error, SA_ERR_USAGE, 0, "with --allocations the rows are the awards: --by user,gpu-type breaks "
                                             "down their charts (--svg, --html); use --by account (the default)");
        return false;
    }
    if (o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format prometheus is for `current`");
        return false;
    }
    if (!(o->year_days > 0)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--year-days must be > 0");
        return false;
    }
    return true;
}

/* The preamble lines of -T (other TRES than GPUs) and of -t percent. */
static void tres_preamble(const sa_usage_t *u, sa_strv_t *p)
{
    const sa_report_opts_t *o = u->o;
    bool other = false;

    for (size_t i = 0; i < o->ntres; i++) {
        sa_rtres_t r = o->tres[i];
        if (r == SA_TRES_GPU)
            continue;
        other = true;
        sa_rpreamble_add(p, "TRES %s: %s", sa_rtres_name(r),
                         sa_rtres_unit_title(r, o->unit == SA_UNIT_RGU_YEARS ? SA_UNIT_GPU_YEARS : o->unit));
    }
    if (other)
        sa_rpreamble_add(p, "CPU, memory and billing: per run, its allocated CPUs, memory (1 GB = 1024 MB, as Slurm "
                           "counts) and billing weight x the overlap with the window; runs without GPUs count too "
                           "(GPU type (none)).");
    if (o->unit == SA_UNIT_PERCENT)
        sa_rpreamble_add(p, "Percent: of the cluster's capacity over the window, as sreport's: the GPUs (and CPUs) "
                           "of all its nodes in every state (allocated, idle, down, drained, reserved) x the time, "
                           "from the node state time series; time between snapshots the series does not know "
                           "counts nowhere.");
    if (o->unit == SA_UNIT_PERCENT)
        sa_usage_capacity_lines(u, p);
}

/* The preamble: period, clusters, unit and constant, rules. */
static void usage_preamble(const sa_usage_t *u, sa_strv_t *p, const sa_strv_t *unweighted)
{
    const sa_report_opts_t *o = u->o;
    char *clusters = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&clusters, &len);

    if (o->ntres) {
        char list[64] = "";
        for (size_t i = 0; i < o->ntres; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", sa_rtres_name(o->tres[i]));
        sa_rpreamble_add(p, "Usage of TRES %s from %s to %s (UTC, end excluded)", list, sa_riso(o->start),
                         sa_riso(o->end));
    } else {
        sa_rpreamble_add(p, "GPU usage from %s to %s (UTC, end excluded)", sa_riso(o->start), sa_riso(o->end));
    }
    if (m) {
        for (size_t i = 0; i < u->clusters.n; i++) {
            const sa_rcluster_t *c = &u->clusters.v[i];
            fprintf(m, "%s%s", i ? ", " : "", c->name);
            if (!c->in_archive)
                fputs(" (not in the archive)", m);
            else if (sa_rcluster_as_of(c, SA_UNSET) == SA_UNSET)
                fprintf(m, " (no observation time: running jobs counted to %s)", sa_riso(o->now));
            else
                fprintf(m, " (jobs observed to %s)", sa_riso(u->as_of[i]));
        }
        if (!u->clusters.n)
            fputs("none", m);
        fclose(m);
    }
    sa_rpreamble_add(p, "Clusters: %s", clusters ? clusters : "?");
    free(clusters);
    sa_rpreamble_add(p, "Unit: %s; 1 GPU-year = %g GPU-hours (%g days)", sa_unit_title(o->unit), u->hpy, o->year_days);
    tres_preamble(u, p);
    if (o->accounts.n || o->users.n) {
        char *only = NULL;
        size_t l = 0;
        FILE *mm = open_memstream(&only, &l);
        if (mm) {
            for (size_t i = 0; i < o->accounts.n; i++)
                fprintf(mm, "%s%s", i ? "," : "accounts ", o->accounts.v[i]);
            for (size_t i = 0; i < o->users.n; i++)
                fprintf(mm, "%s%s", i ? "," : o->accounts.n ? "; users " : "users ", o->users.v[i]);
            fclose(mm);
        }
        sa_rpreamble_add(p, "Only: %s", only ? only : "?");
        free(only);
    }
    sa_rpreamble_add(p, "Rules: per run, allocated GPUs x the overlap of [run start, run end) with the window; every "
                       "run of a requeued job and of a reused job id counts; a running run counts up to its cluster's "
                       "last observation; pending time counts nothing.");
    sa_rpreamble_add(p, "GPU type: typed TRES (gres/gpu:TYPE), else the single GPU type of the run's nodes in the "
                       "time series at its start, else unknown.");
    if (o->unit == SA_UNIT_RGU_YEARS || o->allocations_path) {
        sa_rpreamble_add(p, "RGU weights: %s", o->rgu_weights_path ? "from --rgu-weights" : "built-in (schema/rgu-weights.json)");
        if (unweighted->n) {
            char *list = NULL;
            size_t l = 0;
            FILE *mm = open_memstream(&list, &l);
            for (size_t i = 0; mm && i < unweighted->n; i++)
                fprintf(mm, "%s%s", i ? ", " : "", unweighted->v[i]);
            if (mm)
                fclose(mm);
            sa_rpreamble_add(p, "No RGU weight for GPU type(s) %s: their GPU-hours are not in RGU-years "
                               "(column gpu_hours_unweighted).", list ? list : "?");
            free(list);
        }
        if (u->guessed_secs > 0) {
            char *list = NULL;
            size_t l = 0;
            FILE *mm = open_memstream(&list, &l);
            for (size_t i = 0; mm && i < u->guessed.n; i++)
                fprintf(mm, "%s%s", i ? ", " : "", u->guessed.v[i]);
            if (mm)
                fclose(mm);
            sa_rpreamble_add(p, "RGU weights guessed for %.2f GPU-hours of GPU type(s) %s: a bare MIG profile does "
                               "not say its parent GPU (1g.10gb is an H100-80gb slice, 1.74 RGU, or an A100-80gb "
                               "slice, 0.69) and is weighted as H100; give the cluster's table in --rgu-weights "
                               "(\"clusters\": {CLUSTER: [{gpu_type, parent, rgu}]}).",
                            sa_usage_hours(u->guessed_secs), list ? list : "?");
            free(list);
        }
    }
    if (o->allocations_path)
        sa_rpreamble_add(p, "Awards: target to date = award x elapsed fraction of the award period (to the as-of "
                           "time: the earliest of the window end, the award end, the cluster's last observation); "
                           "projection = use since the award start + the rate of the last %g days x the time left; "
                           "status: over above the award's over_pct of the target, else over pace when the projection "
                           "passes the award, else under below its under_pct, else on track.",
                        u->awards.recent_days);
}

/* The JSON members before the rows. New reference. */
static json_t *usage_json(const sa_usage_t *u, const sa_strv_t *preamble, const sa_strv_t *unweighted)
{
    const sa_report_opts_t *o = u->o;
    json_t *extra = json_object(), *cl = json_array();

    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    if (u->hpy == floor(u->hpy))
        json_object_set_new(extra, "hours_per_gpu_year", json_integer((json_int_t)u->hpy));
    else
        json_object_set_new(extra, "hours_per_gpu_year", json_real(u->hpy));
    json_object_set_new(extra, "unit", json_string(sa_unit_key(o->unit)));
    if (o->ntres) { /* -T: each TRES and the unit of its figures */
        json_t *tres = json_array();
        for (size_t i = 0; i < o->ntres; i++)
            json_array_append_new(tres, json_pack("{s:s, s:s}", "name", sa_rtres_name(o->tres[i]), "unit",
                                                  sa_rtres_unit_title(o->tres[i], o->unit)));
        json_object_set_new(extra, "tres", tres);
    }
    for (size_t i = 0; i < u->clusters.n; i++) {
        json_t *c = json_pack("{s:s}", "name", u->clusters.v[i].name);
        json_object_set_new(c, "as_of", json_string(sa_riso(u->as_of[i])));
        json_object_set_new(c, "in_archive", json_boolean(u->clusters.v[i].in_archive));
        json_array_append_new(cl, c);
    }
    json_object_set_new(extra, "clusters", cl);
    json_object_set_new(extra, "header", sa_rjson_strv(preamble));
    if (o->allocations_path)
        json_object_set_new(extra, "recent_days", json_real(u->awards.recent_days));
    if (u->rgu_cols)
        json_object_set_new(extra, "unweighted_gpu_types", sa_rjson_strv(unweighted));
    if (u->rgu_cols && u->guessed_secs > 0) {
        json_object_set_new(extra, "rgu_guessed_gpu_types", sa_rjson_strv(&u->guessed));
        json_object_set_new(extra, "rgu_guessed_gpu_hours", json_real(sa_usage_hours(u->guessed_secs)));
    }
    return extra;
}

/* The rows and charts of the report into ut and charts. */
static bool usage_rows(sa_usage_t *u, unsigned by, utable_t *ut, sa_rchart_t *charts, size_t *ncharts,
                       sa_error_t *error)
{
    bool alloc = u->o->allocations_path != NULL, ok;
    size_t *order = NULL, ngroups = 0;
    sa_ugroup_t *groups = NULL;

    if (!sa_usage_groups(u, alloc ? SA_BY_ACCOUNT : by, &order, &groups, &ngroups, error))
        return false;
    if (alloc)
        ok = award_rows(u, ut, by, groups, ngroups, charts, ncharts, error);
    else
        ok = group_rows(u, ut, groups, ngroups, error) &&
             (!want_charts(u->o) || account_charts(u, by, charts, ncharts, error));
    free(order);
    free(groups);
    return ok;
}

bool sa_report_usage(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_usage_t u;
    sa_rdb_t *db = NULL;
    utable_t ut;
    sa_rchart_t *charts = NULL;
    size_t ncharts = 0;
    sa_strv_t preamble, unweighted;
    /* with awards the rows are the awards (--by user,gpu-type breaks down their charts) */
    unsigned by = o->allocations_path ? (o->by ? o->by : SA_BY_ACCOUNT) : sa_report_by(o, SA_BY_ACCOUNT);
    json_t *extra = NULL;
    bool ok = false;

    memset(&u, 0, sizeof u);
    sa_strv_init(&preamble);
    sa_strv_init(&unweighted);
    sa_rtable_init(&ut.t, ut.cols, 0);
    if (!check_opts(o, by, error) || !sa_usage_load(&u, o, error) || !(db = sa_report_connect(o, error)) ||
        !sa_usage_prepare(&u, db, warn, error) || (o->unit == SA_UNIT_PERCENT && !sa_usage_capacity(&u, true, warn, error)) ||
        !sa_usage_read(db, &u, error))
        goto done;
    if (u.rgu_cols) {
        sa_usage_unweighted(&u, &unweighted);
        sa_usage_guesses(&u);
        for (size_t i = 0; warn && i < unweighted.n; i++)
            fprintf(warn, "slurm-report: GPU type %s has no RGU weight: its GPU-hours are not in RGU-years "
                          "(add it with --rgu-weights)\n", unweighted.v[i]);
    }
    usage_columns(&u, by, &ut);
    /* a chart per award or account, and up to two breakdowns of each */
    if (!(charts = calloc(3 * (u.awards.n + u.s.nacc) + 1, sizeof *charts))) {
        sa_error_nomem(error);
        goto done;
    }
    if (!usage_rows(&u, by, &ut, charts, &ncharts, error))
        goto done;
    usage_preamble(&u, &preamble, &unweighted);
    extra = usage_json(&u, &preamble, &unweighted);
    {
        sa_rdoc_t doc = {
            .kind = "usage",
            .title = "slurm-report: GPU usage",
            .preamble = &preamble,
            .table = &ut.t,
            .caption = o->allocations_path ? "Use against the awards" : "GPU use in the window",
            .json = extra,
            .has_charts = true,
            .charts_title = "slurm-report: GPU use per month",
            .no_charts = "No GPU use in the window.",
            .charts = charts,
            .ncharts = ncharts,
        };
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_rcharts_free(charts, ncharts);
    sa_rtable_clear(&ut.t);
    sa_strv_clear(&preamble);
    sa_strv_clear(&unweighted);
    sa_usage_clear(&u);
    sa_rdb_close(db);
    return ok;
}
