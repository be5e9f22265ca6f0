/*
 * sa_top.c - `slurm-report top`: the N users and the N accounts with the most use of a
 * TRES in the window, per cluster, with their share of the cluster's capacity (sreport's
 * `user TopUsage` and, by account, `cluster AccountUtilizationByUser`'s top lines).
 *
 * The sums are usage's (sa_usage.h: the rollups, or the job documents with --from-jobs),
 * grouped by user and by account over the window; the rank is by the first TRES of -T
 * (gres/gpu when none), ties by name. The share of capacity is the use over the
 * cluster's GPUs (or CPUs) of every node in every state over the window from the time
 * series (sa_usage_capacity); without a time series it is left empty and the preamble
 * says so (-t percent then refuses, as usage does).
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_usage.h"

#include <stdlib.h>
#include <string.h>

enum { T_CLUSTER, T_KIND, T_RANK, T_NAME, T_TRES, T_N = T_TRES + 4 * SA_TRES_N };

/* Per TRES, its columns: amount x hours, x minutes, x years, percent of capacity. */
static const sa_col_t all_cols[T_N] = {
    [T_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, 0},
    [T_KIND] = {"kind", "Top", SA_COL_STR, 0, 0},
    [T_RANK] = {"rank", "Rank", SA_COL_INT, 0, 0},
    [T_NAME] = {"name", "Name", SA_COL_STR, 0, 0},
    [T_TRES + 0] = {"gpu_hours", "GPU-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [T_TRES + 1] = {"gpu_minutes", "GPU-minutes", SA_COL_NUM, 1, 0},
    [T_TRES + 2] = {"gpu_years", "GPU-years", SA_COL_NUM, 4, SA_COL_LONG},
    [T_TRES + 3] = {"percent_of_cluster", "% of GPUs", SA_COL_NUM, 2, 0},
    [T_TRES + 4] = {"core_hours", "Core-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [T_TRES + 5] = {"core_minutes", "Core-minutes", SA_COL_NUM, 1, 0},
    [T_TRES + 6] = {"core_years", "Core-years", SA_COL_NUM, 4, SA_COL_LONG},
    [T_TRES + 7] = {"cpu_percent_of_cluster", "% of CPUs", SA_COL_NUM, 2, 0},
    [T_TRES + 8] = {"mem_gb_hours", "GB-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [T_TRES + 9] = {"mem_gb_minutes", "GB-minutes", SA_COL_NUM, 1, 0},
    [T_TRES + 10] = {"mem_gb_years", "GB-years", SA_COL_NUM, 4, SA_COL_LONG},
    [T_TRES + 11] = {"mem_percent_of_cluster", "% of mem", SA_COL_NUM, 2, SA_COL_LONG},
    [T_TRES + 12] = {"billing_hours", "Billing-hours", SA_COL_NUM, 2, SA_COL_LONG},
    [T_TRES + 13] = {"billing_minutes", "Billing-minutes", SA_COL_NUM, 1, 0},
    [T_TRES + 14] = {"billing_years", "Billing-years", SA_COL_NUM, 4, SA_COL_LONG},
    [T_TRES + 15] = {"billing_percent_of_cluster", "% of billing", SA_COL_NUM, 2, SA_COL_LONG},
};

const sa_col_t *sa_top_cols(size_t *n)
{
    *n = T_N;
    return all_cols;
}

typedef struct {
    sa_col_t cols[T_N];
    int col_of[T_N];
    sa_rtable_t t;
} ttable_t;

/* The columns: the keys, then per TRES of -T its amount in the unit (both hours and years), and percent. */
static void top_columns(const sa_usage_t *u, ttable_t *tt)
{
    const sa_report_opts_t *o = u->o;
    size_t n = 0;

    for (int i = 0; i < T_N; i++) {
        int r = (i - T_TRES) / 4, k = (i - T_TRES) % 4;
        bool want = i < T_TRES || (u->want[r] && (k != 1 || o->unit == SA_UNIT_GPU_MINUTES) &&
                                   (k != 3 || r <= SA_TRES_CPU));
        tt->col_of[i] = -1;
        if (!want)
            continue;
        tt->col_of[i] = (int)n;
        tt->cols[n] = all_cols[i];
        if (i >= T_TRES && ((k == 0 && o->unit == SA_UNIT_GPU_HOURS) ||
                            (k == 2 && (o->unit == SA_UNIT_GPU_YEARS || o->unit == SA_UNIT_RGU_YEARS))))
            tt->cols[n].flags &= ~(unsigned)SA_COL_LONG;
        n++;
    }
    sa_rtable_init(&tt->t, tt->cols, n);
}

/* The first TRES of -T: what ranks. */
static sa_rtres_t rank_tres(const sa_report_opts_t *o)
{
    return o->ntres ? o->tres[0] : SA_TRES_GPU;
}

/* What rank_cmp sorts by: the usage (names, options), its groups, the key (SA_BY_USER or SA_BY_ACCOUNT). */
typedef struct {
    const sa_usage_t *u;
    const sa_ugroup_t *g;
    unsigned key;
} rank_ctx_t;

/* Orders group indexes by cluster, then the ranking TRES's use, most first, then name (ctx: a rank_ctx_t). */
static int rank_cmp(const void *x, const void *y, void *ctx)
{
    const rank_ctx_t *c = ctx;
    const sa_ugroup_t *a = &c->g[*(const size_t *)x], *b = &c->g[*(const size_t *)y];
    sa_rtres_t r = rank_tres(c->u->o);
    uint32_t na = c->key == SA_BY_USER ? a->k.u : a->k.a, nb = c->key == SA_BY_USER ? b->k.u : b->k.a;
    if (a->k.c != b->k.c)
        return a->k.c < b->k.c ? -1 : 1;
    if (a->window.tres[r] != b->window.tres[r])
        return a->window.tres[r] > b->window.tres[r] ? -1 : 1;
    return strcmp(sa_rintern_str(&c->u->s.names, na), sa_rintern_str(&c->u->s.names, nb));
}

static void set_num(ttable_t *tt, size_t r, int id, double v)
{
    if (tt->col_of[id] >= 0)
        sa_rtable_num(&tt->t, r, (size_t)tt->col_of[id], v);
}

/* One row: the group's use of each TRES in hours, minutes, years and percent of capacity. */
static bool top_row(sa_usage_t *u, ttable_t *tt, const sa_ugroup_t *g, unsigned key, size_t rank)
{
    size_t r = sa_rtable_add_row(&tt->t);

    if (r == SIZE_MAX)
        return false;
    sa_rtable_str(&tt->t, r, (size_t)tt->col_of[T_CLUSTER], sa_rintern_str(&u->s.names, g->k.c));
    sa_rtable_str(&tt->t, r, (size_t)tt->col_of[T_KIND], key == SA_BY_USER ? "user" : "account");
    sa_rtable_int(&tt->t, r, (size_t)tt->col_of[T_RANK], (int64_t)rank);
    sa_rtable_str(&tt->t, r, (size_t)tt->col_of[T_NAME], sa_rintern_str(&u->s.names, key == SA_BY_USER ? g->k.u : g->k.a));
    for (int t = 0; t < SA_TRES_N; t++) {
        const double *cap = u->cap_s ? &u->cap_s[g->k.c * SA_TRES_N + (size_t)t] : NULL;
        set_num(tt, r, T_TRES + 4 * t, sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_HOURS, &g->window));
        set_num(tt, r, T_TRES + 4 * t + 1, sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_MINUTES, &g->window));
        set_num(tt, r, T_TRES + 4 * t + 2, sa_usage_tres_in_unit(u, (sa_rtres_t)t, SA_UNIT_GPU_YEARS, &g->window));
        if (cap && *cap > 0)
            set_num(tt, r, T_TRES + 4 * t + 3, sa_usage_percent(u, g->k.c, (sa_rtres_t)t, &g->window));
    }
    return true;
}

/* The top --top N groups of key (SA_BY_USER or SA_BY_ACCOUNT) of each cluster. */
static bool top_rows(sa_usage_t *u, ttable_t *tt, unsigned key, sa_error_t *error)
{
    size_t *order = NULL, ng = 0, *rank = NULL;
    sa_ugroup_t *g = NULL;
    bool ok = true;

    if (!sa_usage_groups(u, key, &order, &g, &ng, error))
        return false;
    if (!(rank = malloc((ng + 1) * sizeof *rank))) {
        ok = sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < ng; i++)
        rank[i] = i;
    qsort_r(rank, ng, sizeof *rank, rank_cmp, &(rank_ctx_t){u, g, key});
    for (size_t i = 0, n = 0; ok && i < ng; i++) {
        n = i && g[rank[i]].k.c == g[rank[i - 1]].k.c ? n + 1 : 1;
        if (n <= u->o->top_n && g[rank[i]].window.tres[rank_tres(u->o)] > 0)
            ok = top_row(u, tt, &g[rank[i]], key, n) || sa_error_nomem(error);
    }
done:
    free(rank);
    free(order);
    free(g);
    return ok;
}

/* The preamble: what, when, the ranking, units, capacity. */
static void top_preamble(const sa_usage_t *u, sa_strv_t *p)
{
    const sa_report_opts_t *o = u->o;
    char list[64] = "";

    for (size_t i = 0; i < (o->ntres ? o->ntres : 1); i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "",
                 sa_rtres_name(o->ntres ? o->tres[i] : SA_TRES_GPU));
    sa_rpreamble_add(p, "Top %zu users and accounts by %s from %s to %s (UTC, end excluded); TRES %s", o->top_n,
                     sa_rtres_name(rank_tres(o)), sa_riso(o->start), sa_riso(o->end), list);
    sa_rpreamble_add(p, "Units: GPU-, core- (CPU), GB- (memory, 1 GB = 1024 MB) and billing-hours or -years "
                        "(1 year = %g hours); a user's row sums all their accounts.", u->hpy);
    sa_usage_capacity_lines(u, p);
}

bool sa_report_top(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_usage_t u;
    sa_rdb_t *db = NULL;
    ttable_t tt;
    sa_strv_t preamble;
    json_t *extra = NULL;
    bool ok = false;

    memset(&u, 0, sizeof u);
    sa_strv_init(&preamble);
    sa_rtable_init(&tt.t, tt.cols, 0);
    if (!sa_report_window("top", o->start, o->end, true, error))
        return false;
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS || o->allocations_path) {
        sa_error_set(error, SA_ERR_USAGE, 0, "top has no %s", o->allocations_path ? "--allocations" : "charts or metrics");
        return false;
    }
    if (!sa_usage_load(&u, o, error) || !(db = sa_report_connect(o, error)) || !sa_usage_prepare(&u, db, warn, error) ||
        !sa_usage_capacity(&u, o->unit == SA_UNIT_PERCENT, warn, error) || !sa_usage_read(db, &u, error))
        goto done;
    top_columns(&u, &tt);
    if (!top_rows(&u, &tt, SA_BY_USER, error) || !top_rows(&u, &tt, SA_BY_ACCOUNT, error))
        goto done;
    top_preamble(&u, &preamble);
    extra = json_object();
    json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
    json_object_set_new(extra, "top", json_integer((json_int_t)o->top_n));
    json_object_set_new(extra, "ranked_by", json_string(sa_rtres_name(rank_tres(o))));
    json_object_set_new(extra, "header", sa_rjson_strv(&preamble));
    {
        sa_rdoc_t doc = {.kind = "top", .title = "slurm-report: top users and accounts", .preamble = &preamble,
                         .table = &tt.t, .caption = "Top users and accounts in the window", .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_rtable_clear(&tt.t);
    sa_strv_clear(&preamble);
    sa_usage_clear(&u);
    sa_rdb_close(db);
    return ok;
}
