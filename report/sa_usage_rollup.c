/*
 * sa_usage_roll.c - the usage report's sums from the rollups slurm-ingest keeps
 * (schema/jobdoc/sa_rollup.h; sa_usage_read() of sa_usage.h): every UTC day of the range that
 * lies whole in one segment of the sums is read as its rows; a day a boundary cuts (the
 * window's start or end, an award's, the recent rate's start) as its members, each a run's
 * exact interval of that day; open runs from the open runs' document, up to the cluster's
 * last observation. The same GPU-seconds as the documents' path (sa_usage_scan.c) gives,
 * to the second, from the window's days instead of its job documents.
 */
#include "sa_usage.h"

#include <stdio.h>
#include <string.h>

#include "sa_rollup_reader.h"

typedef struct {
    const sa_report_opts_t *o;
    sa_usums_t *s;
    uint32_t cid;
    int64_t as_of;
} rctx_t;

/* True when no boundary of the sums falls strictly inside the day and the day is within the range. */
static bool whole_day(int64_t day, void *vctx)
{
    const sa_usums_t *s = ((const rctx_t *)vctx)->s;
    if (day < s->b[0] || day + SA_DAY > s->b[s->nb - 1])
        return false;
    for (size_t i = 0; i < s->nb; i++) {
        if (s->b[i] > day && s->b[i] < day + SA_DAY)
            return false;
    }
    return true;
}

/* The key of a rollup key in the sums; false when the options leave it out (k->c UINT32_MAX: out of memory). */
static bool key_of(rctx_t *r, const sa_rollup_rowkey_t *rk, sa_ukey_t *k)
{
    const sa_report_opts_t *o = r->o;
    if ((o->accounts.n && !sa_strv_contains(&o->accounts, rk->s[0])) ||
        (o->users.n && !sa_strv_contains(&o->users, rk->s[1])) || (!rk->s[4][0] && r->s->ntres == 1))
        return false; /* another account or user; a CPU-only run when GPUs alone are counted */
    if (!sa_usums_key(r->s, r->cid, rk, k))
        k->c = UINT32_MAX;
    return true;
}

static bool on_doc(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    rctx_t *r = vctx;
    sa_ukey_t k;

    if (!d->has_members) { /* a whole day: its rows */
        for (size_t i = 0; i < d->nrows; i++) {
            const sa_rollup_row_t *row = &d->rows[i];
            const int64_t v[SA_TRES_N] = {row->s.gpu_s, row->s.cpu_s, row->s.mem_mb_s, row->s.bill_milli_s};
            if (!key_of(r, &d->keys[row->key], &k))
                continue;
            if (k.c == UINT32_MAX || !sa_usums_add_secs(r->s, &k, d->day, v))
                return sa_error_nomem(error);
        }
        return true;
    }
    for (size_t m = 0; m < d->nm; m++) {
        for (size_t i = 0; i < d->m[m].nrec; i++) {
            const int64_t *x = &d->m[m].rec[i * SA_RR_NF];
            int64_t end = d->kind == SA_ROLLUP_K_OPEN ? r->as_of : x[SA_RR_END], rate[SA_TRES_N];
            if (end <= x[SA_RR_START] || !key_of(r, &d->keys[x[SA_RR_KEY]], &k))
                continue;
            sa_usums_rates_of(x, rate);
            if (k.c == UINT32_MAX || !sa_usums_add_rates(r->s, &k, rate, x[SA_RR_START], end))
                return sa_error_nomem(error);
        }
    }
    return true;
}

bool sa_usage_from_rollups(sa_rdb_t *db, const sa_report_opts_t *o, const int64_t *as_of, sa_usums_t *s,
                           size_t *docs, sa_error_t *error)
{
    for (uint32_t c = 0; c < s->nclusters; c++) {
        rctx_t r = {o, s, c, as_of[c]};
        if (!sa_rollup_read(db, sa_rintern_str(&s->names, c), s->b[0], s->b[s->nb - 1], true, whole_day, on_doc, &r,
                         docs, error))
            return false;
    }
    return true;
}

bool sa_usage_rollups_usable(const sa_usage_t *u)
{
    if (u->o->from_jobs)
        return false;
    for (size_t i = 0; i < u->clusters.n; i++) {
        if (u->clusters.v[i].in_archive && u->clusters.v[i].rollup_version < SA_ROLLUP_VERSION)
            return false;
    }
    return true;
}

bool sa_usage_read(sa_rdb_t *db, sa_usage_t *u, sa_error_t *error)
{
    bool ok;
    if (sa_usage_rollups_usable(u)) {
        ok = sa_usage_from_rollups(db, u->o, u->as_of, &u->s, &u->docs_read, error);
        if (ok && u->o->verbose)
            fprintf(u->o->verbose, "# read: %zu rollup document(s) by _id\n", u->docs_read);
        return ok;
    }
    ok = sa_usage_scan(db, u->o, u->as_of, &u->s, error);
    if (ok && u->o->verbose)
        fprintf(u->o->verbose, "# read: the job documents (%s)\n",
                u->o->from_jobs ? "--from-jobs" : "a cluster has no rollups");
    return ok;
}
