/*
 * sa_utilalloc.c - what the runs had allocated, hour by hour, for utilization
 * (sa_util_read_alloc of sa_util.h): usage's own sums (sa_usage.h: the rollups, or the job
 * documents with --from-jobs), keyed by cluster and GPU type alone, with a boundary at
 * every hour of the window and at every edge of the time the cluster's series knows, so
 * that each hour's known time is a sum of whole segments: the same runs, rates and
 * intervals as `usage` counts, to the second.
 */
#include "sa_util.h"

#include <stdlib.h>
#include <string.h>

#include "sa_usage.h"
#include "sa_vec.h"

#define HOUR 3600

void sa_ualloc_clear(sa_ualloc_t *a)
{
    if (!a)
        return;
    free(a->cluster);
    free(a->why);
    for (int r = 0; r < SA_UR_N; r++)
        free(a->res[r]);
    for (size_t t = 0; t < a->ntypes; t++) {
        free(a->types[t]);
        free(a->type_gpu[t]);
    }
    free(a->types);
    free(a->type_gpu);
    free(a->plan);
    memset(a, 0, sizeof *a);
}

/* Sets the cluster, the hours of the window and the reason (why: not exact) of an allocation. */
static bool ualloc_init(sa_ualloc_t *a, const char *cluster, int64_t from, int64_t to, const char *why)
{
    memset(a, 0, sizeof *a);
    a->as_of = SA_UNSET;
    a->h0 = from - ((from % HOUR) + HOUR) % HOUR;
    a->nh = to > a->h0 ? (size_t)((to - a->h0 + HOUR - 1) / HOUR) : 0;
    return (a->cluster = strdup(cluster)) && (!why || (a->why = strdup(why)));
}

/* The per-hour sums of GPU type type (created empty), or NULL on out of memory. */
static double *type_hours(sa_ualloc_t *a, const char *type)
{
    size_t cap = a->ntypes, cap2 = a->ntypes;
    for (size_t t = 0; t < a->ntypes; t++) {
        if (strcmp(a->types[t], type) == 0)
            return a->type_gpu[t];
    }
    if (!SA_VEC_GROW(a->types, cap, a->ntypes, 1, 1) || !SA_VEC_GROW(a->type_gpu, cap2, a->ntypes, 1, 1))
        return NULL;
    a->types[a->ntypes] = strdup(type);
    a->type_gpu[a->ntypes] = calloc(a->nh ? a->nh : 1, sizeof **a->type_gpu);
    if (!a->types[a->ntypes] || !a->type_gpu[a->ntypes]) {
        free(a->types[a->ntypes]);
        free(a->type_gpu[a->ntypes]);
        return NULL;
    }
    return a->type_gpu[a->ntypes++];
}

/*
 * Adds accumulator acc of the sums (one GPU type of the cluster) to a: each segment that
 * lies in a known span (spans[0..2 nsp): start, end) to its hour.
 */
static bool add_acc(const sa_usums_t *s, const sa_uacc_t *acc, const int64_t *spans, size_t nsp, sa_ualloc_t *a)
{
    size_t nseg = s->nb - 1, k = 0;
    double *gpu = type_hours(a, sa_rintern_str(&s->names, acc->k.t));

    if (!gpu)
        return false;
    for (size_t j = 0; j < nseg; j++) {
        int64_t x = s->b[j];
        size_t h;
        while (k < nsp && spans[2 * k + 1] <= x)
            k++;
        if (k >= nsp || spans[2 * k] > x || x < a->h0)
            continue; /* not known (a span's edges are boundaries: a segment is in one or none) */
        h = (size_t)((x - a->h0) / HOUR);
        if (h >= a->nh)
            continue;
        gpu[h] += (double)acc->secs[SA_TRES_GPU * nseg + j];
        a->res[SA_UR_GPU][h] += (double)acc->secs[SA_TRES_GPU * nseg + j];
        a->res[SA_UR_CPU][h] += (double)acc->secs[SA_TRES_CPU * nseg + j];
        a->res[SA_UR_MEM][h] += (double)acc->secs[SA_TRES_MEM * nseg + j];
    }
    return true;
}

/* Appends to v every hour of [from, to) and the edges of the known spans (clipped to it). */
static bool push_bounds(int64_t from, int64_t to, const int64_t *spans, size_t nsp, int64_t **v, size_t *n,
                        size_t *cap)
{
    for (int64_t t = from - ((from % HOUR) + HOUR) % HOUR + HOUR; t < to; t += HOUR) {
        if (!SA_VEC_GROW(*v, *cap, *n, 1, 256))
            return false;
        (*v)[(*n)++] = t;
    }
    for (size_t i = 0; i < 2 * nsp; i++) {
        if (spans[i] <= from || spans[i] >= to)
            continue;
        if (!SA_VEC_GROW(*v, *cap, *n, 1, 256))
            return false;
        (*v)[(*n)++] = spans[i];
    }
    return true;
}

/*
 * Which clusters the archive has: in[i] set for those with a clusters document. A named
 * cluster the archive lacks is not an error here (its series is what utilization reads):
 * *note gets the archive's message (caller frees), else NULL.
 */
static bool in_archive(sa_rdb_t *db, const sa_strv_t *clusters, bool *in, char **note, sa_error_t *error)
{
    sa_rclusters_t rc;
    sa_error_t e;

    *note = NULL;
    if (sa_rdb_clusters(db, clusters, &rc, &e)) {
        for (size_t i = 0; i < rc.n && i < clusters->n; i++)
            in[i] = rc.v[i].in_archive;
        sa_rclusters_clear(&rc);
        return true;
    }
    if (e.domain != SA_ERR_USAGE) {
        *error = e;
        return false;
    }
    if (!(*note = strdup(e.message)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < clusters->n; i++) { /* one at a time: which ones it has */
        sa_strv_t one = {&clusters->v[i], 1, 1};
        in[i] = sa_rdb_clusters(db, &one, &rc, &e);
        if (in[i])
            sa_rclusters_clear(&rc);
        else if (e.domain != SA_ERR_USAGE) {
            *error = e;
            return false;
        }
    }
    return true;
}

/* usage's options for utilization's sums: CPUs, memory and GPUs of every run of the clusters, no awards. */
static void sums_opts(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_report_opts_t *o2)
{
    *o2 = *o; /* borrowed: never cleared */
    memset(&o2->accounts, 0, sizeof o2->accounts);
    memset(&o2->users, 0, sizeof o2->users);
    o2->clusters = *clusters;
    o2->allocations_path = NULL;
    o2->columns = NULL;
    o2->ncolumns = 0;
    o2->format = SA_FMT_TABLE;
    o2->by = SA_BY_GPU_TYPE;
    o2->tres[0] = SA_TRES_GPU;
    o2->tres[1] = SA_TRES_CPU;
    o2->tres[2] = SA_TRES_MEM;
    o2->ntres = 3;
}

/* Reads the sums of the clusters the archive has (named[i]) into out[i]. */
static bool read_sums(const sa_report_opts_t *o, sa_rdb_t *db, const sa_strv_t *clusters, const bool *named,
                      int64_t **spans, const size_t *nsp, const int64_t *b, size_t nb, sa_ualloc_t *out,
                      size_t *docs, sa_error_t *error)
{
    sa_report_opts_t o2;
    sa_strv_t have;
    sa_usage_t u;
    bool ok;

    sa_strv_init(&have);
    for (size_t i = 0; i < clusters->n; i++) {
        if (named[i] && !sa_strv_push(&have, clusters->v[i])) {
            sa_strv_clear(&have);
            return sa_error_nomem(error);
        }
    }
    if (!have.n) {
        sa_strv_clear(&have);
        return true;
    }
    sums_opts(o, &have, &o2);
    ok = sa_usage_load(&u, &o2, error);
    u.s.by_type = true;
    u.extra_b = b;
    u.nextra_b = nb;
    ok = ok && sa_usage_prepare(&u, db, NULL, error) && sa_usage_read(db, &u, error);
    for (size_t i = 0; ok && i < clusters->n; i++) {
        size_t c = named[i] ? sa_usage_cluster(&u, clusters->v[i]) : SIZE_MAX;
        if (c == SIZE_MAX)
            continue;
        out[i].exact = true;
        out[i].as_of = u.as_of[c];
        out[i].lists = !o->from_jobs && u.clusters.v[c].rollup_version >= SA_ROLLUP_VERSION;
        for (int r = 0; ok && r < SA_UR_N; r++)
            ok = (out[i].res[r] = calloc(out[i].nh ? out[i].nh : 1, sizeof *out[i].res[r])) != NULL;
        for (size_t k = 0; ok && k < u.s.nacc; k++) {
            if (u.s.acc[k].k.c == c)
                ok = add_acc(&u.s, &u.s.acc[k], spans[i], nsp[i], &out[i]);
        }
        if (!ok)
            sa_error_nomem(error);
    }
    if (ok && docs)
        *docs += u.docs_read;
    sa_usage_clear(&u);
    sa_strv_clear(&have);
    return ok;
}

bool sa_util_read_alloc(const sa_report_opts_t *o, const sa_strv_t *clusters, sa_rtsdbs_t *tsdbs, bool planned,
                        sa_ualloc_t *out, size_t *docs, sa_error_t *error)
{
    int64_t **spans = calloc(clusters->n + 1, sizeof *spans), *b = NULL;
    size_t *nsp = calloc(clusters->n + 1, sizeof *nsp), nb = 0, bcap = 0;
    bool *named = calloc(clusters->n + 1, sizeof *named), given = sa_report_archive_given(o), ok = false;
    char *note = NULL;
    sa_rdb_t *db = NULL;

    if (!spans || !nsp || !named) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < clusters->n; i++) {
        if (!ualloc_init(&out[i], clusters->v[i], o->start, o->end,
                         given ? NULL : "no archive was given (a MongoDB URI or --db)")) {
            sa_error_nomem(error);
            goto done;
        }
    }
    if (!given) {
        ok = true;
        goto done;
    }
    for (size_t i = 0; i < clusters->n; i++) {
        sa_tsdb_t *ts;
        if (!sa_rtsdbs_get(tsdbs, o, clusters->v[i], true, &ts, error) ||
            !sa_tsdb_known_spans(ts, clusters->v[i], o->start, o->end, &spans[i], &nsp[i], error))
            goto done;
        if (!push_bounds(o->start, o->end, spans[i], nsp[i], &b, &nb, &bcap)) {
            sa_error_nomem(error);
            goto done;
        }
    }
    if (!(db = sa_report_connect(o, error)) || !in_archive(db, clusters, named, &note, error))
        goto done;
    for (size_t i = 0; i < clusters->n; i++) {
        if (!named[i] && !(out[i].why = strdup(note ? note : "the archive has no such cluster"))) {
            sa_error_nomem(error);
            goto done;
        }
    }
    ok = read_sums(o, db, clusters, named, spans, nsp, b, nb, out, docs, error);
    for (size_t i = 0; ok && planned && i < clusters->n; i++)
        ok = !out[i].lists || sa_util_read_planned(o, db, spans[i], nsp[i], &out[i], docs, error);
done:
    for (size_t i = 0; spans && i < clusters->n; i++)
        free(spans[i]);
    free(spans);
    free(nsp);
    free(named);
    free(b);
    free(note);
    sa_rdb_close(db);
    return ok;
}
