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

static bool oom(sa_error_t *error)
{
    sa_error_nomem(error);
    return false;
}

/* ---- columns ------------------------------------------------------------------------------- */

enum { C_CLUSTER, C_ACCOUNT, C_USER, C_TYPE, C_HOURS, C_YEARS, C_RGU, C_UNW, C_AWARD, C_AUNIT, C_ASTART, C_AEND,
       C_USEDW, C_USEDS, C_TARGET, C_PCT, C_PROJ, C_PROJPCT, C_ELAPSED, C_ASOF, C_STATUS, C_NOTE, C_N };

static const sa_col_t all_cols[C_N] = {
    [C_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0},
    [C_ACCOUNT] = {"account", "Account", SA_COL_STR, 0},
    [C_USER] = {"user", "User", SA_COL_STR, 0},
    [C_TYPE] = {"gpu_type", "GPU type", SA_COL_STR, 0},
    [C_HOURS] = {"gpu_hours", "GPU-hours", SA_COL_NUM, 2},
    [C_YEARS] = {"gpu_years", "GPU-years", SA_COL_NUM, 4},
    [C_RGU] = {"rgu_years", "RGU-years", SA_COL_NUM, 4},
    [C_UNW] = {"gpu_hours_unweighted", "Unweighted GPU-h", SA_COL_NUM, 2},
    [C_AWARD] = {"award", "Award", SA_COL_NUM, 4},
    [C_AUNIT] = {"award_unit", "Unit", SA_COL_STR, 0},
    [C_ASTART] = {"award_start", "Award start", SA_COL_STR, 0},
    [C_AEND] = {"award_end", "Award end", SA_COL_STR, 0},
    [C_USEDW] = {"used_window", "Used (window)", SA_COL_NUM, 4},
    [C_USEDS] = {"used_since_start", "Used (award)", SA_COL_NUM, 4},
    [C_TARGET] = {"target_to_date", "Target", SA_COL_NUM, 4},
    [C_PCT] = {"percent_of_target", "% target", SA_COL_NUM, 1},
    [C_PROJ] = {"projected_at_end", "Projected", SA_COL_NUM, 4},
    [C_PROJPCT] = {"projected_percent_of_award", "% award (proj.)", SA_COL_NUM, 1},
    [C_ELAPSED] = {"elapsed_percent", "% elapsed", SA_COL_NUM, 1},
    [C_ASOF] = {"as_of", "As of", SA_COL_STR, 0},
    [C_STATUS] = {"status", "Status", SA_COL_STR, 0},
    [C_NOTE] = {"note", "Note", SA_COL_STR, 0},
};

/* The table of the report: the columns shown, and where each of all_cols is (-1: not shown). */
typedef struct {
    sa_col_t cols[C_N];
    int col_of[C_N];
    sa_rtable_t t;
} utable_t;

/* The columns: the grouping keys (--by, a type with awards), the use, RGU columns, award columns. */
static void usage_columns(const sa_usage_t *u, unsigned by, utable_t *ut)
{
    bool alloc = u->o->allocations_path != NULL;
    bool want[C_N] = {
        [C_CLUSTER] = true, [C_ACCOUNT] = (by & SA_BY_ACCOUNT) != 0, [C_USER] = (by & SA_BY_USER) != 0,
        [C_TYPE] = (by & SA_BY_GPU_TYPE) || alloc, [C_HOURS] = true, [C_YEARS] = true,
        [C_RGU] = u->rgu_cols, [C_UNW] = u->rgu_cols,
    };
    size_t n = 0;

    for (int i = 0; i < C_N; i++) {
        ut->col_of[i] = -1;
        if (want[i] || (alloc && i >= C_AWARD)) {
            ut->col_of[i] = (int)n;
            ut->cols[n++] = all_cols[i];
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

/* The use columns of a row: GPU-hours, GPU-years, RGU-years, unweighted GPU-hours. */
static void set_use(const sa_usage_t *u, utable_t *ut, size_t r, const sa_usum_t *s)
{
    set_num(ut, r, C_HOURS, sa_usage_hours(s->secs));
    set_num(ut, r, C_YEARS, sa_usage_hours(s->secs) / u->hpy);
    set_num(ut, r, C_RGU, sa_usage_rgu_years(u, s));
    set_num(ut, r, C_UNW, sa_usage_hours(s->unweighted));
}

/* ---- charts -------------------------------------------------------------------------------- */

static bool want_charts(const sa_report_opts_t *o)
{
    return o->format == SA_FMT_SVG || o->format == SA_FMT_HTML;
}

/* The month buckets and values of a chart: the use of award a, or of group g (accumulators in order). */
static bool chart_fill(sa_usage_t *u, sa_rchart_t *c, const sa_award_t *a, const sa_ugroup_t *g,
                       const size_t *order)
{
    if (!sa_rchart_months(c))
        return false;
    for (size_t i = 0; i < c->nm; i++) {
        int64_t x = c->m[i], y = c->m[i + 1] < c->data_to ? c->m[i + 1] : c->data_to;
        sa_usum_t s = {0, 0, 0};
        if (y <= x)
            continue;
        if (a) {
            s = sa_usage_award_sum(u, a, x, y);
            c->val[i] = sa_usage_award_units(u, a, &s);
        } else {
            for (size_t k = 0; k < g->count; k++)
                sa_usage_sum_add(u, &s, &u->s.acc[order[g->first + k]], x, y);
            c->val[i] = sa_usage_in_unit(u, u->o->unit, &s);
        }
    }
    return true;
}

/* The chart of an award: its period, the use to its as-of time, its amount as the target. */
static bool award_chart(sa_usage_t *u, const sa_award_t *a, const sa_uaward_t *f, sa_rchart_t *c)
{
    char buf[128];

    c->title = sa_rprintf("%s / %s%s%s", a->cluster, a->account, a->gpu_type ? " / " : "",
                          a->gpu_type ? a->gpu_type : "");
    snprintf(buf, sizeof buf, "%s", sa_riso(a->start));
    c->subtitle = sa_rprintf("award %g %s from %s to %s; used %.4g (%.1f%% of the target to date); status %s",
                             a->amount, sa_award_unit_name(a->unit), buf, sa_riso(a->end), f->used_since,
                             f->has_pct ? f->pct : 0.0, f->status);
    c->from = a->start;
    c->axis_to = a->end;
    c->data_to = f->to;
    c->target = a->amount;
    c->unit = a->unit == SA_AWARD_RGU_YEARS ? "RGU-years" : "GPU-years";
    return c->title && c->subtitle && chart_fill(u, c, a, NULL, NULL);
}

/* Without awards: one chart per cluster and account over the window. */
static bool account_charts(sa_usage_t *u, sa_rchart_t *charts, size_t *ncharts, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    size_t *order = NULL, ng = 0;
    sa_ugroup_t *g = NULL;
    bool ok = true;

    if (!sa_usage_groups(u, SA_BY_ACCOUNT, &order, &g, &ng, error))
        return false;
    for (size_t i = 0; ok && i < ng; i++) {
        sa_rchart_t *c = &charts[(*ncharts)++];
        c->title = sa_rprintf("%s / %s", sa_rintern_str(&u->s.names, g[i].k.c), sa_rintern_str(&u->s.names, g[i].k.a));
        c->subtitle = sa_rprintf("%.4g %s in the window (no award given)", sa_usage_in_unit(u, o->unit, &g[i].window),
                                 sa_unit_title(o->unit));
        c->from = o->start;
        c->axis_to = o->end;
        c->data_to = o->end;
        c->target = -1;
        c->unit = sa_unit_title(o->unit);
        ok = c->title && c->subtitle && chart_fill(u, c, NULL, &g[i], order);
    }
    free(order);
    free(g);
    return ok || oom(error);
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

/* One row per award reported (and its chart), then one per account with use in the window and no award. */
static bool award_rows(sa_usage_t *u, utable_t *ut, const sa_ugroup_t *groups, size_t ngroups, sa_rchart_t *charts,
                       size_t *ncharts, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    size_t *aord, na;

    if (!award_order(u, &aord, &na))
        return oom(error);
    for (size_t i = 0; i < na; i++) {
        const sa_award_t *a = &u->awards.v[aord[i]];
        sa_uaward_t f;
        sa_usum_t w;
        size_t r = sa_rtable_add_row(&ut->t);
        if (r == SIZE_MAX)
            goto nomem;
        sa_usage_award(u, a, &f);
        w = sa_usage_award_sum(u, a, o->start, o->end);
        set_str(ut, r, C_CLUSTER, a->cluster);
        set_str(ut, r, C_ACCOUNT, a->account);
        set_str(ut, r, C_TYPE, a->gpu_type ? a->gpu_type : "*");
        set_use(u, ut, r, &w);
        set_num(ut, r, C_AWARD, a->amount);
        set_str(ut, r, C_AUNIT, sa_award_unit_name(a->unit));
        set_str(ut, r, C_ASTART, sa_riso(a->start));
        set_str(ut, r, C_AEND, sa_riso(a->end));
        set_num(ut, r, C_USEDW, f.used_window);
        set_num(ut, r, C_USEDS, f.used_since);
        set_num(ut, r, C_TARGET, f.target);
        if (f.has_pct)
            set_num(ut, r, C_PCT, f.pct);
        set_num(ut, r, C_PROJ, f.projected);
        set_num(ut, r, C_PROJPCT, f.projected_pct);
        set_num(ut, r, C_ELAPSED, f.elapsed_pct);
        set_str(ut, r, C_ASOF, sa_riso(f.to));
        set_str(ut, r, C_STATUS, f.status);
        set_str(ut, r, C_NOTE, a->note);
        if (want_charts(o) && !award_chart(u, a, &f, &charts[(*ncharts)++]))
            goto nomem;
    }
    for (size_t g = 0; g < ngroups; g++) {
        const char *cl = sa_rintern_str(&u->s.names, groups[g].k.c), *ac = sa_rintern_str(&u->s.names, groups[g].k.a);
        bool has = false;
        size_t r;
        for (size_t i = 0; i < na && !has; i++)
            has = strcmp(u->awards.v[aord[i]].cluster, cl) == 0 && strcmp(u->awards.v[aord[i]].account, ac) == 0;
        if (has)
            continue;
        if ((r = sa_rtable_add_row(&ut->t)) == SIZE_MAX)
            goto nomem;
        set_str(ut, r, C_CLUSTER, cl);
        set_str(ut, r, C_ACCOUNT, ac);
        set_str(ut, r, C_TYPE, "*");
        set_use(u, ut, r, &groups[g].window);
        set_str(ut, r, C_STATUS, "no award");
    }
    free(aord);
    return true;
nomem:
    free(aord);
    return oom(error);
}

/* Without awards: one row per group of the --by keys. */
static bool group_rows(sa_usage_t *u, utable_t *ut, const sa_ugroup_t *groups, size_t ngroups, sa_error_t *error)
{
    for (size_t g = 0; g < ngroups; g++) {
        size_t r = sa_rtable_add_row(&ut->t);
        if (r == SIZE_MAX)
            return oom(error);
        set_str(ut, r, C_CLUSTER, sa_rintern_str(&u->s.names, groups[g].k.c));
        set_str(ut, r, C_ACCOUNT, sa_rintern_str(&u->s.names, groups[g].k.a));
        set_str(ut, r, C_USER, sa_rintern_str(&u->s.names, groups[g].k.u));
        set_str(ut, r, C_TYPE, sa_rintern_str(&u->s.names, groups[g].k.t));
        set_use(u, ut, r, &groups[g].window);
    }
    return true;
}

/* ---- the document ---------------------------------------------------------------------------- */

/* Checks the options that make no sense for usage. */
static bool check_opts(const sa_report_opts_t *o, unsigned by, sa_error_t *error)
{
    if (o->start == SA_UNSET || o->end == SA_UNSET) {
        sa_error_set(error, SA_ERR_USAGE, 0, "usage needs a window: --month YYYY-MM, or -S START [-E END]");
        return false;
    }
    if (o->end <= o->start) {
        sa_error_set(error, SA_ERR_USAGE, 0, "the window is empty: END (%s) is not after START (%s)", sa_riso(o->end),
                     sa_riso(o->start));
        return false;
    }
    if (by & SA_BY_PARTITION) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--by partition is for `current`; usage groups by account, user, gpu-type");
        return false;
    }
    if (o->allocations_path && by != SA_BY_ACCOUNT) {
        sa_error_set(error, SA_ERR_USAGE, 0, "with --allocations the rows are the awards: use --by account (the default)");
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

/* The preamble: period, clusters, unit and constant, rules. */
static void usage_preamble(const sa_usage_t *u, sa_strv_t *p, const sa_strv_t *unweighted)
{
    const sa_report_opts_t *o = u->o;
    char *clusters = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&clusters, &len);

    sa_rpreamble_add(p, "GPU usage from %s to %s (UTC, end excluded)", sa_riso(o->start), sa_riso(o->end));
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
    }
    if (o->allocations_path)
        sa_rpreamble_add(p, "Awards: target to date = award x elapsed fraction of the award period (to the as-of "
                           "time: the earliest of the window end, the award end, the cluster's last observation); "
                           "projection = use since the award start + the rate of the last %g days x the time left; "
                           "status: under below the award's under_pct of the target, over above its over_pct, else "
                           "on track.",
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
        ok = award_rows(u, ut, groups, ngroups, charts, ncharts, error);
    else
        ok = group_rows(u, ut, groups, ngroups, error) &&
             (!want_charts(u->o) || account_charts(u, charts, ncharts, error));
    free(order);
    free(groups);
    return ok;
}

bool sa_report_usage(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_usage_t u;
    sa_rdb_t *db = NULL;
    sa_rtsdbs_t tsdbs;
    utable_t ut;
    sa_rchart_t *charts = NULL;
    size_t ncharts = 0;
    sa_strv_t preamble, unweighted;
    unsigned by = o->by ? o->by : SA_BY_ACCOUNT;
    json_t *extra = NULL;
    bool ok = false;

    memset(&u, 0, sizeof u);
    sa_rtsdbs_init(&tsdbs);
    sa_strv_init(&preamble);
    sa_strv_init(&unweighted);
    sa_rtable_init(&ut.t, ut.cols, 0);
    if (!check_opts(o, by, error) || !sa_usage_load(&u, o, error) || !(db = sa_report_connect(o, error)) ||
        !sa_usage_prepare(&u, db, warn, error) || !sa_usage_scan(db, o, u.as_of, &tsdbs, &u.s, error))
        goto done;
    if (u.rgu_cols) {
        sa_usage_unweighted(&u, &unweighted);
        for (size_t i = 0; warn && i < unweighted.n; i++)
            fprintf(warn, "slurm-report: GPU type %s has no RGU weight: its GPU-hours are not in RGU-years "
                          "(add it with --rgu-weights)\n", unweighted.v[i]);
    }
    usage_columns(&u, by, &ut);
    if (!(charts = calloc(u.awards.n + u.s.nacc + 1, sizeof *charts))) {
        oom(error);
        goto done;
    }
    if (!usage_rows(&u, by, &ut, charts, &ncharts, error))
        goto done;
    usage_preamble(&u, &preamble, &unweighted);
    extra = usage_json(&u, &preamble, &unweighted);
    {
        sa_rdoc_t doc = {
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
        ok = sa_rdoc_write(&doc, o->format, o->no_header, out, error);
    }
done:
    json_decref(extra);
    sa_rcharts_free(charts, ncharts);
    sa_rtable_clear(&ut.t);
    sa_strv_clear(&preamble);
    sa_strv_clear(&unweighted);
    sa_rtsdbs_clear(&tsdbs);
    sa_usage_clear(&u);
    sa_rdb_close(db);
    return ok;
}
