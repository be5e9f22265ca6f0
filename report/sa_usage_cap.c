/*
 * sa_usage_cap.c - the capacity of the clusters over a report's window, from the node
 * state time series (sa_tsdb_state_hours of schema/tsdb/sa_tsdb.h): what `-t percent` of
 * usage and top divides by, as sreport's percent is of the cluster's capacity. GPUs and
 * CPUs of every node in every state (allocated, idle, down, drained, reserved) count;
 * time the series does not know (gaps, before its first snapshot) counts nowhere.
 * Memory and billing have no capacity in the series: percent of them is refused.
 */
#include "sa_usage.h"

#include <stdlib.h>

#include "sa_rcommon.h"

typedef struct {
    double gpu_h, cpu_h, node_h;
} cap_t;

static bool add_state(const sa_tsdb_hours_t *h, void *vctx, sa_error_t *error)
{
    cap_t *c = vctx;
    (void)error;
    c->gpu_h += h->gpu_hours_total;
    c->cpu_h += h->cpu_hours_total;
    c->node_h += h->node_hours;
    return true;
}

double sa_usage_percent(const sa_usage_t *u, uint32_t c, sa_rtres_t r, const sa_usum_t *s)
{
    double cap = u->cap_s && c < u->s.nclusters ? u->cap_s[c * SA_TRES_N + r] : -1;
    return cap > 0 ? 100.0 * (double)s->tres[r] / cap : 0;
}

bool sa_usage_capacity(sa_usage_t *u, bool required, FILE *warn, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    sa_rtsdbs_t tsdbs;
    bool ok = true;

    for (int r = SA_TRES_MEM; required && r < SA_TRES_N; r++) {
        if (u->want[r]) {
            sa_error_set(error, SA_ERR_USAGE, 0, "-t percent cannot be computed for %s: the time series has no %s "
                         "capacity (percent is of capacity, as in sreport)", sa_rtres_name((sa_rtres_t)r),
                         sa_rtres_name((sa_rtres_t)r));
            return false;
        }
    }
    if (!(u->cap_s = calloc(u->s.nclusters * SA_TRES_N + 1, sizeof *u->cap_s)) ||
        !(u->cap_known_s = calloc(u->s.nclusters + 1, sizeof *u->cap_known_s)))
        return sa_error_nomem(error);
    sa_rtsdbs_init(&tsdbs);
    for (uint32_t c = 0; c < u->s.nclusters; c++) {
        for (int r = 0; r < SA_TRES_N; r++)
            u->cap_s[c * SA_TRES_N + r] = -1;
    }
    for (uint32_t c = 0; ok && c < u->s.nclusters; c++) {
        const char *name = sa_rintern_str(&u->s.names, c);
        cap_t cap = {0, 0, 0};
        sa_tsdb_coverage_t cov;
        sa_tsdb_t *db = NULL;
        ok = sa_rtsdbs_get(&tsdbs, o, name, false, &db, error);
        if (ok && !db && !required) {
            sa_rtsdbs_left_out(warn, &tsdbs, o, name, "its share of capacity is left out");
            continue;
        }
        if (ok && !db) {
            char why[600];
            sa_error_set(error, SA_ERR_USAGE, 0, "-t percent cannot be computed: %s, so its capacity is not known",
                         sa_rtsdbs_missing(&tsdbs, o, name, why, sizeof why));
            ok = false;
        }
        ok = ok && sa_tsdb_state_hours(db, name, o->start, o->end, SA_TSDB_BY_STATE, add_state, &cap, error);
        if (ok && !(cap.node_h > 0) && !required)
            continue;
        if (ok && !(cap.node_h > 0)) {
            sa_error_set(error, SA_ERR_USAGE, 0, "-t percent cannot be computed: the time series has no snapshot of "
                         "cluster %s in the window, so its capacity is not known", name);
            ok = false;
        }
        ok = ok && sa_tsdb_coverage(db, name, o->start, o->end, &cov, error);
        if (ok) {
            u->cap_s[c * SA_TRES_N + SA_TRES_GPU] = cap.gpu_h * 3600.0;
            u->cap_s[c * SA_TRES_N + SA_TRES_CPU] = cap.cpu_h * 3600.0;
            u->cap_known_s[c] = (o->end - o->start) - cov.before_s - cov.gap_s - cov.after_s;
        }
    }
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}

void sa_usage_capacity_lines(const sa_usage_t *u, sa_strv_t *p)
{
    for (uint32_t c = 0; c < u->s.nclusters; c++) {
        const double *cap = u->cap_s ? &u->cap_s[c * SA_TRES_N] : NULL;
        const char *name = sa_rintern_str(&u->s.names, c);
        if (cap && cap[SA_TRES_GPU] >= 0)
            sa_rpreamble_add(p, "%s: capacity %.2f GPU-hours, %.2f core-hours over the %.2f h of the window's %.2f "
                                "the time series knows (use outside them can take percent past 100)",
                             name, cap[SA_TRES_GPU] / 3600.0, cap[SA_TRES_CPU] / 3600.0,
                             (double)u->cap_known_s[c] / 3600.0, (double)(u->o->end - u->o->start) / 3600.0);
        else
            sa_rpreamble_add(p, "%s: capacity not known (no node state time series in the window): no percent", name);
    }
}
