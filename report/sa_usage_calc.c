/*
 * sa_usage_calc.c - the usage report's arithmetic (see sa_usage.h): GPU-seconds per
 * key and segment, the boundaries, RGU weights, grouping, and the awards: target to
 * date, projection and status.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_usage.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sa_rollup.h"
#include "sa_vec.h"

/* ---- the sums ------------------------------------------------------------------------ */

/* Hash of a key for the open-addressing slots (a multiply-xorshift mix of the four ids). */
static uint32_t key_hash(const sa_ukey_t *k)
{
    uint64_t h = ((uint64_t)k->c * 0x9E3779B1u) ^ ((uint64_t)k->a * 0x85EBCA77u) ^ ((uint64_t)k->u * 0xC2B2AE3Du) ^
                 ((uint64_t)k->t * 0x27D4EB2Fu);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

static bool key_eq(const sa_ukey_t *x, const sa_ukey_t *y)
{
    return x->c == y->c && x->a == y->a && x->u == y->u && x->t == y->t;
}

/* The record of arr (each stride bytes, beginning with its key) at index i. */
static const sa_ukey_t *key_at(const void *arr, size_t i, size_t stride)
{
    return (const sa_ukey_t *)(const void *)((const char *)arr + i * stride);
}

/* The caller's array, for sa_map_slot's callbacks. */
typedef struct {
    const void *arr;
    size_t stride;
} ukey_arr_t;

static uint64_t ukey_hash_at(size_t i, void *ctx)
{
    const ukey_arr_t *a = ctx;
    return key_hash(key_at(a->arr, i, a->stride));
}

static bool ukey_eq_at(size_t i, const void *key, void *ctx)
{
    const ukey_arr_t *a = ctx;
    return key_eq(key_at(a->arr, i, a->stride), key);
}

uint32_t *sa_ukeyidx_slot(sa_ukeyidx_t *ix, const sa_ukey_t *k, const void *arr, size_t n, size_t stride)
{
    ukey_arr_t a = {arr, stride};
    return sa_map_slot(&ix->map, key_hash(k), k, n, ukey_hash_at, ukey_eq_at, &a);
}

void sa_ukeyidx_clear(sa_ukeyidx_t *ix)
{
    sa_map_clear(&ix->map);
}

/* The TRES the sums hold (1: GPU-seconds alone). */
static size_t usums_ntres(const sa_usums_t *s)
{
    return s->ntres ? s->ntres : 1;
}

/* The accumulator of key k, created (zero) when new; NULL on out of memory. */
static sa_uacc_t *acc_get(sa_usums_t *s, const sa_ukey_t *k)
{
    uint32_t *slot = sa_ukeyidx_slot(&s->idx, k, s->acc, s->nacc, sizeof *s->acc);
    sa_uacc_t *a;

    if (!slot)
        return NULL;
    if (*slot)
        return &s->acc[*slot - 1];
    if (!SA_VEC_GROW(s->acc, s->acccap, s->nacc, 1, 256))
        return NULL;
    a = &s->acc[s->nacc];
    a->k = *k;
    a->secs = calloc((s->nb - 1) * usums_ntres(s), sizeof *a->secs);
    if (!a->secs)
        return NULL;
    *slot = (uint32_t)++s->nacc;
    return a;
}

bool sa_usums_add(sa_usums_t *s, const sa_ukey_t *k, int64_t count, int64_t from, int64_t to)
{
    int64_t rate[SA_TRES_N] = {count, 0, 0, 0};
    return count <= 0 || sa_usums_add_rates(s, k, rate, from, to);
}

/* True when no rate of a TRES the sums hold is positive. */
static bool no_rate(const sa_usums_t *s, const int64_t *rate)
{
    for (size_t r = 0; r < usums_ntres(s); r++) {
        if (rate[r] > 0)
            return false;
    }
    return true;
}

bool sa_usums_add_rates(sa_usums_t *s, const sa_ukey_t *k, const int64_t rate[SA_TRES_N], int64_t from, int64_t to)
{
    size_t lo = 0, hi = s->nb - 1, nseg = s->nb - 1;
    sa_uacc_t *a;

    if (no_rate(s, rate) || to <= s->b[0] || from >= s->b[s->nb - 1])
        return true;
    if (!(a = acc_get(s, k)))
        return false;
    if (from < s->b[0])
        from = s->b[0];
    if (to > s->b[s->nb - 1])
        to = s->b[s->nb - 1];
    if (to <= from)
        return true;
    while (hi - lo > 1) { /* largest j with b[j] <= from */
        size_t mid = (lo + hi) / 2;
        if (s->b[mid] <= from)
            lo = mid;
        else
            hi = mid;
    }
    for (size_t j = lo; j + 1 < s->nb && s->b[j] < to; j++) {
        int64_t x = from > s->b[j] ? from : s->b[j], y = to < s->b[j + 1] ? to : s->b[j + 1];
        for (size_t r = 0; y > x && r < usums_ntres(s); r++) {
            if (rate[r] > 0)
                a->secs[r * nseg + j] += rate[r] * (y - x);
        }
    }
    return true;
}

void sa_usums_rates_of(const int64_t *x, int64_t rate[SA_TRES_N])
{
    rate[SA_TRES_GPU] = x[SA_RR_GPUS];
    rate[SA_TRES_CPU] = x[SA_RR_CPUS];
    rate[SA_TRES_MEM] = x[SA_RR_MEM];
    rate[SA_TRES_BILLING] = x[SA_RR_BILL];
}

/* Index of boundary t (which must be one). */
static size_t bound_index(const sa_usums_t *s, int64_t t)
{
    size_t lo = 0, hi = s->nb;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->b[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool sa_usums_add_secs(sa_usums_t *s, const sa_ukey_t *k, int64_t t, const int64_t v[SA_TRES_N])
{
    sa_uacc_t *a;
    size_t lo = 0, hi = s->nb - 1;

    if (no_rate(s, v) || t < s->b[0] || t >= s->b[s->nb - 1])
        return true;
    if (!(a = acc_get(s, k)))
        return false;
    while (hi - lo > 1) { /* largest j with b[j] <= t */
        size_t mid = (lo + hi) / 2;
        if (s->b[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    for (size_t r = 0; r < usums_ntres(s); r++)
        a->secs[r * (s->nb - 1) + lo] += v[r];
    return true;
}

int64_t sa_usums_get_tres(const sa_usums_t *s, const sa_uacc_t *a, sa_rtres_t r, int64_t x, int64_t y)
{
    int64_t v = 0;
    const int64_t *secs = a->secs + (size_t)r * (s->nb - 1);
    if (y <= x || (size_t)r >= usums_ntres(s))
        return 0;
    for (size_t j = bound_index(s, x), e = bound_index(s, y); j < e && j + 1 < s->nb; j++)
        v += secs[j];
    return v;
}

int64_t sa_usums_get(const sa_usums_t *s, const sa_uacc_t *a, int64_t x, int64_t y)
{
    return sa_usums_get_tres(s, a, SA_TRES_GPU, x, y);
}

static void usums_clear(sa_usums_t *s)
{
    sa_rintern_clear(&s->names);
    for (size_t i = 0; i < s->nacc; i++)
        free(s->acc[i].secs);
    free(s->acc);
    sa_ukeyidx_clear(&s->idx);
    free(s->b);
}

/* ---- preparing ------------------------------------------------------------------------- */

void sa_usage_clear(sa_usage_t *u)
{
    usums_clear(&u->s);
    sa_rclusters_clear(&u->clusters);
    free(u->as_of);
    sa_rgu_free(u->rgu);
    sa_awards_clear(&u->awards);
    free(u->award_in);
    free(u->wcache);
    free(u->cap_s);
    free(u->cap_known_s);
    sa_strv_clear(&u->guessed);
    memset(u, 0, sizeof *u);
}

bool sa_usums_key(sa_usums_t *s, uint32_t cid, const sa_rollup_rowkey_t *rk, sa_ukey_t *k)
{
    k->c = cid;
    k->a = sa_rintern(&s->names, s->by_type ? "" : rk->s[0]);
    k->u = sa_rintern(&s->names, s->by_type ? "" : rk->s[1]);
    k->t = sa_rintern(&s->names, rk->s[4]);
    return k->a != UINT32_MAX && k->u != UINT32_MAX && k->t != UINT32_MAX;
}

size_t sa_usage_cluster(const sa_usage_t *u, const char *name)
{
    uint32_t id = sa_rintern_find(&u->s.names, name);
    return id < u->s.nclusters ? id : SIZE_MAX;
}

/* The as-of time of an award: min(window end, award end, cluster's last observation), >= award start. */
static int64_t award_to(const sa_usage_t *u, const sa_award_t *a)
{
    size_t c = sa_usage_cluster(u, a->cluster);
    int64_t to = u->o->end, as_of = c == SIZE_MAX ? u->o->end : u->as_of[c];
    if (a->end < to)
        to = a->end;
    if (as_of < to)
        to = as_of;
    return to < a->start ? a->start : to;
}

/* Start of the recent rate of an award as of `to`: recent_days before, not before the award's start. */
static int64_t recent_start(const sa_usage_t *u, const sa_award_t *a, int64_t to)
{
    int64_t r = to - (int64_t)llround(u->awards.recent_days * 86400);
    return r < a->start ? a->start : r;
}

static int i64_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

typedef struct {
    int64_t *v;
    size_t n, cap;
} i64v_t;

static bool i64v_push(i64v_t *v, int64_t t)
{
    if (!SA_VEC_GROW(v->v, v->cap, v->n, 1, 64))
        return false;
    v->v[v->n++] = t;
    return true;
}

/* The boundaries: window, the extra ones, awards (start, end, as-of, recent start) and, for charts, month starts. */
static bool build_bounds(sa_usage_t *u, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    i64v_t v = {0};
    int64_t lo = o->start;
    bool ok = i64v_push(&v, o->start) && i64v_push(&v, o->end);

    for (size_t i = 0; ok && i < u->nextra_b; i++)
        ok = i64v_push(&v, u->extra_b[i]);
    for (size_t i = 0; ok && i < u->awards.n; i++) {
        const sa_award_t *a = &u->awards.v[i];
        int64_t to;
        if (!u->award_in[i])
            continue;
        to = award_to(u, a);
        if (a->start < lo)
            lo = a->start;
        ok = i64v_push(&v, a->start) && i64v_push(&v, to) && i64v_push(&v, recent_start(u, a, to));
        if (ok && a->end < o->end)
            ok = i64v_push(&v, a->end);
    }
    if (ok && (o->format == SA_FMT_SVG || o->format == SA_FMT_HTML)) {
        for (int64_t m = sa_rmonth_floor(lo); ok && m < o->end; m = sa_rmonth_add(m, 1)) {
            if (m > lo)
                ok = i64v_push(&v, m);
        }
    }
    if (!ok) {
        free(v.v);
        return sa_error_nomem(error);
    }
    qsort(v.v, v.n, sizeof *v.v, i64_cmp);
    u->s.nb = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.v[i] < lo || v.v[i] > o->end)
            continue;
        if (u->s.nb == 0 || v.v[i] != v.v[u->s.nb - 1])
            v.v[u->s.nb++] = v.v[i];
    }
    u->s.b = v.v;
    return true;
}

/* Interns the clusters first (a cluster's id is its index) and sets their as-of times. */
static bool intern_clusters(sa_usage_t *u, FILE *warn, sa_error_t *error)
{
    u->s.nclusters = u->clusters.n;
    if (!(u->as_of = calloc(u->s.nclusters ? u->s.nclusters : 1, sizeof *u->as_of)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < u->s.nclusters; i++) {
        const sa_rcluster_t *c = &u->clusters.v[i];
        if (sa_rintern(&u->s.names, c->name) != i) {
            sa_error_set(error, SA_ERR_USAGE, 0, "cluster %s named twice", c->name);
            return false;
        }
        u->as_of[i] = sa_rcluster_as_of(c, u->o->now);
        if (!c->in_archive && warn)
            fprintf(warn, "slurm-report: cluster %s is not in the archive (no clusters document)\n", c->name);
    }
    u->s.unknown_id = sa_rintern(&u->s.names, "unknown");
    return u->s.unknown_id != UINT32_MAX || sa_error_nomem(error);
}

bool sa_usage_load(sa_usage_t *u, const sa_report_opts_t *o, sa_error_t *error)
{
    memset(u, 0, sizeof *u);
    sa_rintern_init(&u->s.names);
    u->o = o;
    u->hpy = o->year_days * 24;
    u->rgu_cols = o->unit == SA_UNIT_RGU_YEARS;
    if (!(u->rgu = sa_rgu_load(o->rgu_weights_path, error)))
        return false;
    if (o->allocations_path &&
        !sa_awards_read(o->allocations_path, o->allocations_json, o->allocations_len, &u->awards, error))
        return false;
    for (size_t i = 0; i < u->awards.n; i++) {
        if (u->awards.v[i].unit == SA_AWARD_RGU_YEARS)
            u->rgu_cols = true;
        if (u->awards.v[i].members > 0)
            u->member_cols = true;
        if (sa_award_tres(&u->awards.v[i]) != SA_TRES_GPU)
            u->s.ntres = SA_TRES_N;
        u->want[sa_award_tres(&u->awards.v[i])] = true; /* an award's TRES has its columns */
    }
    for (size_t i = 0; i < o->ntres; i++) {
        u->want[o->tres[i]] = true;
        if (o->tres[i] != SA_TRES_GPU)
            u->s.ntres = SA_TRES_N;
    }
    if (!o->ntres && !u->want[SA_TRES_CPU] && !u->want[SA_TRES_BILLING])
        u->want[SA_TRES_GPU] = true; /* gres/gpu unless -T or the awards say otherwise */
    if (!u->s.ntres)
        u->s.ntres = 1;
    return true;
}

bool sa_usage_has_use(const sa_usage_t *u, const sa_usum_t *s)
{
    for (int r = 0; r < SA_TRES_N; r++) {
        if (u->want[r] && s->tres[r] > 0)
            return true;
    }
    return false;
}

/* -A and -u name accounts and users the archive has (or, for accounts, the awards file). */
static bool check_names(sa_usage_t *u, sa_rdb_t *db, sa_error_t *error)
{
    sa_strv_t awarded;
    bool ok;

    if (u->o->names_known)
        return true;
    sa_strv_init(&awarded);
    for (size_t i = 0; i < u->awards.n; i++)
        sa_strv_push(&awarded, u->awards.v[i].account);
    ok = sa_rdb_check_names(db, &u->clusters, "account", &u->o->accounts, &awarded, error) &&
         sa_rdb_check_names(db, &u->clusters, "user", &u->o->users, NULL, error);
    sa_strv_clear(&awarded);
    return ok;
}

bool sa_usage_prepare(sa_usage_t *u, sa_rdb_t *db, FILE *warn, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;

    if (!sa_rdb_clusters(db, &o->clusters, &u->clusters, error) || !intern_clusters(u, warn, error) ||
        !check_names(u, db, error))
        return false;
    if (!(u->award_in = calloc(u->awards.n + 1, sizeof *u->award_in)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < u->awards.n; i++) {
        const sa_award_t *a = &u->awards.v[i];
        bool acc_ok = !o->accounts.n || sa_strv_contains(&o->accounts, a->account);
        u->award_in[i] =
            a->start < o->end && a->end > o->start && sa_usage_cluster(u, a->cluster) != SIZE_MAX && acc_ok;
    }
    return build_bounds(u, error);
}

/* ---- RGU weights and units ------------------------------------------------------------------ */

/*
 * The weights are applied to 0.001 RGU, so that RGU sums are integers and do not
 * depend on the order documents arrive in. Cached per type id.
 */
bool sa_usage_type_weight(sa_usage_t *u, uint32_t t, int64_t *milli)
{
    if (t >= u->nwcache) {
        size_t n = u->s.names.n > t ? u->s.names.n : (size_t)t + 1;
        int64_t *v = realloc(u->wcache, n * sizeof *v);
        if (!v) {
            double w;
            bool ok = sa_rgu_weight(u->rgu, sa_rintern_str(&u->s.names, t), &w, NULL);
            *milli = ok ? llround(w * 1000) : -1;
            return ok;
        }
        for (size_t i = u->nwcache; i < n; i++)
            v[i] = -2; /* not looked up */
        u->wcache = v;
        u->nwcache = n;
    }
    if (u->wcache[t] == -2) {
        double w;
        u->wcache[t] = sa_rgu_weight(u->rgu, sa_rintern_str(&u->s.names, t), &w, NULL) ? llround(w * 1000) : -1;
    }
    *milli = u->wcache[t];
    return *milli >= 0;
}

bool sa_usage_weight_on(sa_usage_t *u, uint32_t c, uint32_t t, int64_t *milli, bool *guess)
{
    const char *type = sa_rintern_str(&u->s.names, t);
    double w;
    bool ok;

    *guess = false;
    if (!sa_rgu_has_clusters(u->rgu)) {
        if (!sa_usage_type_weight(u, t, milli))
            return false;
        sa_rgu_weight_on(u->rgu, NULL, type, &w, NULL, guess);
    } else {
        ok = sa_rgu_weight_on(u->rgu, sa_rintern_str(&u->s.names, c), type, &w, NULL, guess);
        *milli = ok ? llround(w * 1000) : -1;
        if (!ok)
            return false;
    }
    if (*guess && !sa_strv_contains(&u->guessed, type))
        sa_strv_add_sorted_unique(&u->guessed, type);
    return true;
}

void sa_usage_sum_add(sa_usage_t *u, sa_usum_t *s, const sa_uacc_t *a, int64_t x, int64_t y)
{
    int64_t v = sa_usums_get(&u->s, a, x, y), w;
    bool guess;
    for (size_t r = 1; r < usums_ntres(&u->s); r++)
        s->tres[r] += sa_usums_get_tres(&u->s, a, (sa_rtres_t)r, x, y);
    if (!v)
        return;
    s->tres[SA_TRES_GPU] += v;
    s->secs += v;
    if (sa_usage_weight_on(u, a->k.c, a->k.t, &w, &guess)) {
        s->rgu_msecs += v * w;
        if (guess)
            s->guessed += v;
    } else {
        s->unweighted += v;
    }
}

double sa_usage_rgu_years(const sa_usage_t *u, const sa_usum_t *s)
{
    return (double)s->rgu_msecs / 1000.0 / 3600.0 / u->hpy;
}

double sa_usage_hours(int64_t s)
{
    return (double)s / 3600.0;
}

double sa_usage_in_unit(const sa_usage_t *u, sa_unit_t unit, const sa_usum_t *s)
{
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return sa_usage_hours(s->secs);
    case SA_UNIT_GPU_MINUTES: return (double)s->secs / 60.0;
    case SA_UNIT_RGU_YEARS: return sa_usage_rgu_years(u, s);
    default: return sa_usage_hours(s->secs) / u->hpy; /* GPU-years (percent needs a whole: the caller's) */
    }
}

/* Per TRES: the divisor of its TRES-seconds to its amount x seconds (MiB to GB, thousandths of billing). */
static const double tres_scale[SA_TRES_N] = {1, 1, 1024, 1000};
/* Per TRES: the names of its amount x time units (hours, minutes, years) and of the TRES. */
static const char *const tres_units[SA_TRES_N][3] = {
    {"GPU-hours", "GPU-minutes", "GPU-years"},
    {"core-hours", "core-minutes", "core-years"},
    {"GB-hours", "GB-minutes", "GB-years"},
    {"billing-hours", "billing-minutes", "billing-years"},
};
static const char *const tres_names[SA_TRES_N] = {"gres/gpu", "cpu", "mem", "billing"};

const char *sa_rtres_name(sa_rtres_t r)
{
    return tres_names[r];
}

bool sa_rtres_parse(const char *s, sa_rtres_t *r)
{
    for (int i = 0; i < SA_TRES_N; i++) {
        if (strcasecmp(s, tres_names[i]) == 0 || (i == SA_TRES_GPU && strcasecmp(s, "gpu") == 0)) {
            *r = (sa_rtres_t)i;
            return true;
        }
    }
    return false;
}

const char *sa_rtres_unit_title(sa_rtres_t r, sa_unit_t unit)
{
    if (r == SA_TRES_GPU)
        return sa_unit_title(unit);
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return tres_units[r][0];
    case SA_UNIT_GPU_MINUTES: return tres_units[r][1];
    case SA_UNIT_PERCENT: return r == SA_TRES_CPU ? "percent of the cluster's CPU capacity in the window" : "percent";
    default: return tres_units[r][2];
    }
}

double sa_usage_tres_in_unit(const sa_usage_t *u, sa_rtres_t r, sa_unit_t unit, const sa_usum_t *s)
{
    double v;
    if (r == SA_TRES_GPU)
        return sa_usage_in_unit(u, unit, s);
    v = (double)s->tres[r] / tres_scale[r];
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return v / 3600.0;
    case SA_UNIT_GPU_MINUTES: return v / 60.0;
    default: return v / 3600.0 / u->hpy; /* years (RGU-years weigh GPUs alone; percent: the caller's) */
    }
}

const char *sa_unit_title(sa_unit_t unit)
{
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return "GPU-hours";
    case SA_UNIT_GPU_MINUTES: return "GPU-minutes";
    case SA_UNIT_RGU_YEARS: return "RGU-years";
    case SA_UNIT_PERCENT: return "percent of the cluster's GPU capacity in the window";
    default: return "GPU-years";
    }
}

const char *sa_unit_key(sa_unit_t unit)
{
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return "gpu-hours";
    case SA_UNIT_GPU_MINUTES: return "gpu-minutes";
    case SA_UNIT_RGU_YEARS: return "rgu-years";
    case SA_UNIT_PERCENT: return "percent";
    default: return "gpu-years";
    }
}

void sa_usage_unweighted(sa_usage_t *u, sa_strv_t *out)
{
    for (size_t i = 0; i < u->s.nacc; i++) {
        int64_t w;
        const char *t = sa_rintern_str(&u->s.names, u->s.acc[i].k.t);
        if (!sa_usage_type_weight(u, u->s.acc[i].k.t, &w) &&
            sa_usums_get(&u->s, &u->s.acc[i], u->s.b[0], u->s.b[u->s.nb - 1]) > 0 && !sa_strv_contains(out, t))
            sa_strv_add_sorted_unique(out, t);
    }
}

void sa_usage_guesses(sa_usage_t *u)
{
    u->guessed_secs = 0;
    for (size_t i = 0; i < u->s.nacc; i++) {
        int64_t w, v = sa_usums_get(&u->s, &u->s.acc[i], u->s.b[0], u->s.b[u->s.nb - 1]);
        bool guess;
        if (v > 0 && sa_usage_weight_on(u, u->s.acc[i].k.c, u->s.acc[i].k.t, &w, &guess) && guess)
            u->guessed_secs += v;
    }
}

/* ---- groups ------------------------------------------------------------------------------ */

/* What the group orders sort by: the usage (accumulators, names) and the keys (SA_BY_* bits). */
typedef struct {
    const sa_usage_t *u;
    unsigned by;
} group_ctx_t;

/* Compares names a and b (interned ids of c's usage) bytewise. */
static int name_cmp(const group_ctx_t *c, uint32_t a, uint32_t b)
{
    return strcmp(sa_rintern_str(&c->u->s.names, a), sa_rintern_str(&c->u->s.names, b));
}

/* Orders accumulator indexes by cluster (as listed), then the keys of ctx's by: account, user, type (bytewise). */
static int acc_order(const void *x, const void *y, void *ctx)
{
    const group_ctx_t *c = ctx;
    const sa_uacc_t *a = &c->u->s.acc[*(const size_t *)x], *b = &c->u->s.acc[*(const size_t *)y];
    int r;
    if (a->k.c != b->k.c)
        return a->k.c < b->k.c ? -1 : 1;
    if ((c->by & SA_BY_ACCOUNT) && (r = name_cmp(c, a->k.a, b->k.a)))
        return r;
    if ((c->by & SA_BY_USER) && (r = name_cmp(c, a->k.u, b->k.u)))
        return r;
    if ((c->by & SA_BY_GPU_TYPE) && (r = name_cmp(c, a->k.t, b->k.t)))
        return r;
    return 0;
}

/* acc_order, then the other keys: a total order, independent of the order documents arrived in. */
static int acc_total_order(const void *x, const void *y, void *ctx)
{
    const group_ctx_t *c = ctx;
    const sa_uacc_t *a = &c->u->s.acc[*(const size_t *)x], *b = &c->u->s.acc[*(const size_t *)y];
    int r = acc_order(x, y, ctx);
    if (r || (r = name_cmp(c, a->k.a, b->k.a)) || (r = name_cmp(c, a->k.u, b->k.u)))
        return r;
    return name_cmp(c, a->k.t, b->k.t);
}

bool sa_usage_groups(sa_usage_t *u, unsigned by, size_t **order_out, sa_ugroup_t **groups, size_t *ngroups,
                     sa_error_t *error)
{
    size_t nacc = u->s.nacc, *order = malloc((nacc ? nacc : 1) * sizeof *order);
    sa_ugroup_t *g = calloc(nacc ? nacc : 1, sizeof *g);
    size_t ng = 0;
    group_ctx_t ctx = {u, by};

    if (!order || !g) {
        free(order);
        free(g);
        return sa_error_nomem(error);
    }
    for (size_t i = 0; i < nacc; i++)
        order[i] = i;
    qsort_r(order, nacc, sizeof *order, acc_total_order, &ctx);
    for (size_t i = 0; i < nacc;) {
        size_t j = i;
        sa_ugroup_t *cur = &g[ng];
        memset(cur, 0, sizeof *cur);
        cur->k = u->s.acc[order[i]].k;
        cur->first = i;
        while (j < nacc && acc_order(&order[i], &order[j], &ctx) == 0) {
            sa_usage_sum_add(u, &cur->window, &u->s.acc[order[j]], u->o->start, u->o->end);
            j++;
        }
        cur->count = j - i;
        if (sa_usage_has_use(u, &cur->window))
            ng++;
        i = j;
    }
    *order_out = order;
    *groups = g;
    *ngroups = ng;
    return true;
}

/* ---- awards -------------------------------------------------------------------------------- */

sa_rtres_t sa_award_tres(const sa_award_t *a)
{
    return a->unit == SA_AWARD_CORE_YEARS ? SA_TRES_CPU : a->unit == SA_AWARD_BILLING_YEARS ? SA_TRES_BILLING : SA_TRES_GPU;
}

bool sa_usage_award_matches(sa_usage_t *u, const sa_award_t *a, const sa_uacc_t *acc)
{
    char low[256], pat[256];
    const char *t;
    size_t i;
    if (strcmp(sa_rintern_str(&u->s.names, acc->k.c), a->cluster) != 0 ||
        strcmp(sa_rintern_str(&u->s.names, acc->k.a), a->account) != 0)
        return false;
    if (!a->gpu_type)
        return true;
    t = sa_rintern_str(&u->s.names, acc->k.t);
    for (i = 0; t[i] && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)t[i]);
    low[i] = '\0';
    for (i = 0; a->gpu_type[i] && i < sizeof pat - 1; i++)
        pat[i] = (char)tolower((unsigned char)a->gpu_type[i]);
    pat[i] = '\0';
    return fnmatch(pat, low, 0) == 0;
}

sa_usum_t sa_usage_award_sum(sa_usage_t *u, const sa_award_t *a, int64_t x, int64_t y)
{
    sa_usum_t s = {0};
    for (size_t i = 0; i < u->s.nacc; i++) {
        if (sa_usage_award_matches(u, a, &u->s.acc[i]))
            sa_usage_sum_add(u, &s, &u->s.acc[i], x, y);
    }
    return s;
}

double sa_usage_award_units(const sa_usage_t *u, const sa_award_t *a, const sa_usum_t *s)
{
    return sa_usage_tres_in_unit(u, sa_award_tres(a), a->unit == SA_AWARD_RGU_YEARS ? SA_UNIT_RGU_YEARS : SA_UNIT_GPU_YEARS,
                                 s);
}

void sa_usage_award(sa_usage_t *u, const sa_award_t *a, sa_uaward_t *f)
{
    const sa_report_opts_t *o = u->o;
    int64_t wx = o->start > a->start ? o->start : a->start, wy = o->end < a->end ? o->end : a->end;
    sa_usum_t since, recent;
    double rate;

    memset(f, 0, sizeof *f);
    f->to = award_to(u, a);
    f->recent_from = recent_start(u, a, f->to);
    f->window = sa_usage_award_sum(u, a, wx, wy);
    since = sa_usage_award_sum(u, a, a->start, f->to);
    recent = sa_usage_award_sum(u, a, f->recent_from, f->to);
    f->used_window = sa_usage_award_units(u, a, &f->window);
    f->used_since = sa_usage_award_units(u, a, &since);
    f->elapsed_pct = 100.0 * (double)(f->to - a->start) / (double)(a->end - a->start);
    f->target = a->amount * (double)(f->to - a->start) / (double)(a->end - a->start);
    rate = f->to > f->recent_from ? sa_usage_award_units(u, a, &recent) / (double)(f->to - f->recent_from) : 0;
    f->projected = f->used_since + rate * (double)(a->end - f->to);
    f->projected_pct = 100.0 * f->projected / a->amount;
    if (f->target > 0) {
        f->pct = 100.0 * f->used_since / f->target;
        f->has_pct = true;
    }
    /* ahead of the band; else bound to pass the award at the recent rate; else behind the band */
    if (f->to <= a->start)
        f->status = "not started";
    else if (f->pct > a->over_pct)
        f->status = "over";
    else if (f->projected_pct > 100)
        f->status = "over pace";
    else if (f->pct < a->under_pct)
        f->status = "under";
    else
        f->status = "on track";
}
