/*
 * sa_tsdb_verify.c - sa_tsdb_verify(): replays a cluster's interval rows snapshot by
 * snapshot and checks every stored total and the nodes' current attributes against
 * them.
 */
#include "sa_tsdb_private.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_vec.h"

/* Reads every total row of a table (S_TOT_ALL / S_GTOT_ALL) with its `at` into rows/ats. */
static bool load_total_rows(sa_tsdb_t *db, int k, int64_t cid, totv_t *rows, int64_t **ats, sa_error_t *error)
{
    sqlite3_stmt *s = tsdb_stmt(db, k, error);
    size_t cap = 0;
    int rc;

    *ats = NULL;
    if (!s)
        return false;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        tot_t *t = tsdb_totv_push(rows);
        if (t && !SA_VEC_GROW(*ats, cap, rows->n - 1, 1, 32))
            t = NULL;
        if (!t) {
            sqlite3_reset(s);
            tsdb_oom(db, error);
            return false;
        }
        (*ats)[rows->n - 1] = sqlite3_column_int64(s, 0);
        t->state_id = sqlite3_column_int64(s, 1);
        t->part_id = sqlite3_column_int64(s, 2);
        t->gpu_id = sqlite3_column_int64(s, 3);
        t->nodes = sqlite3_column_int64(s, 4);
        for (int j = 0; j < 4; j++)
            t->v[j] = sqlite3_column_int64(s, 5 + j);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading totals", error);
        return false;
    }
    return true;
}

/* Applies the stored rows at one snapshot to the running totals *run (sorted by key). */
static bool apply_rows(totv_t *run, const tot_t *rows, size_t n)
{
    totv_t out = {0};
    size_t i = 0, j = 0;

    while (i < run->n || j < n) {
        int c = i >= run->n ? 1 : j >= n ? -1 : tsdb_tot_key_cmp(&run->v[i], &rows[j]);
        const tot_t *src = c < 0 ? &run->v[i] : &rows[j];
        if (c >= 0)
            j++;
        if (c <= 0)
            i++;
        if (src->nodes == 0)
            continue;
        tot_t *t = tsdb_totv_push(&out);
        if (!t) {
            tsdb_totv_free(&out);
            return false;
        }
        *t = *src;
    }
    tsdb_totv_free(run);
    *run = out;
    return true;
}

static bool totv_equal(const totv_t *a, const totv_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (tsdb_tot_key_cmp(&a->v[i], &b->v[i]) != 0 || !tsdb_tot_same(&a->v[i], &b->v[i]))
            return false;
    }
    return true;
}

/* What sa_tsdb_verify() works on: everything stored for the cluster, and the sweep's state. */
typedef struct {
    wnode_t *wn;          /* the nodes, by name */
    char **names;
    size_t nn;
    int64_t *snaps;       /* snapshot times, ascending */
    size_t nsnap;
    span_t *gaps;         /* by start */
    size_t ng, gp;        /* gp: the first gap that may end at or after the current snapshot */
    int64_t *cur;         /* per node: its attribute set after the rows applied so far */
    totv_t trows, grows;  /* every stored total row (CPU, GPU) with its time in tat / gat */
    int64_t *tat, *gat;
    size_t ti, gi;        /* the first rows not applied yet */
    totv_t trun, grun;    /* the totals the stored rows say, so far */
    totv_t tcalc, gcalc;  /* the totals the intervals give */
    sqlite3_stmt *iv;     /* every interval row, by start */
    int rc;               /* iv's last step */
} verify_t;

static void verify_clear(verify_t *v)
{
    tsdb_free_names(v->names, v->nn);
    free(v->wn);
    free(v->snaps);
    free(v->cur);
    free(v->tat);
    free(v->gat);
    free(v->gaps);
    tsdb_totv_free(&v->trows);
    tsdb_totv_free(&v->grows);
    tsdb_totv_free(&v->trun);
    tsdb_totv_free(&v->grun);
    tsdb_totv_free(&v->tcalc);
    tsdb_totv_free(&v->gcalc);
}

/* Loads what is stored for cluster cid and positions the interval cursor on its first row. */
static bool verify_load(sa_tsdb_t *db, verify_t *v, int64_t cid, sa_error_t *error)
{
    if (!tsdb_load_nodes(db, cid, &v->wn, &v->nn, 0, &v->names, error) ||
        !tsdb_load_gaps(db, cid, false, 0, 0, &v->gaps, &v->ng, error) ||
        !tsdb_load_snapshots(db, cid, INT64_MIN, INT64_MAX, &v->snaps, &v->nsnap, error) ||
        !load_total_rows(db, S_TOT_ALL, cid, &v->trows, &v->tat, error) ||
        !load_total_rows(db, S_GTOT_ALL, cid, &v->grows, &v->gat, error))
        return false;
    if (!(v->cur = calloc(v->nn ? v->nn : 1, sizeof *v->cur))) {
        tsdb_oom(db, error);
        return false;
    }
    if (!(v->iv = tsdb_stmt(db, S_IV_ALL, error)))
        return false;
    sqlite3_bind_int64(v->iv, 1, cid);
    v->rc = sqlite3_step(v->iv);
    return true;
}

/* A gap ending at snapshot k must start at the snapshot before; after it nothing carries over. */
static bool verify_gap(sa_tsdb_t *db, verify_t *v, size_t k, const char *tbuf, sa_error_t *error)
{
    int64_t at = v->snaps[k];

    while (v->gp < v->ng && v->gaps[v->gp].end < at)
        v->gp++;
    if (v->gp < v->ng && v->gaps[v->gp].end == at) {
        if (k == 0 || v->gaps[v->gp].start != v->snaps[k - 1]) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "gap ending at %s does not start at the snapshot before", tbuf);
            return false;
        }
        memset(v->cur, 0, v->nn * sizeof *v->cur);
        v->trun.n = v->grun.n = 0;
    }
    return true;
}

/* Applies the interval rows starting at `at` (each must start at a snapshot and name a known node). */
static bool verify_rows(sa_tsdb_t *db, verify_t *v, int64_t at, sa_error_t *error)
{
    while (v->rc == SQLITE_ROW && sqlite3_column_int64(v->iv, 1) <= at) {
        int64_t nid = sqlite3_column_int64(v->iv, 0), st = sqlite3_column_int64(v->iv, 1);
        size_t i;
        if (st != at) {
            char b2[32];
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row at %s is not at a snapshot time",
                     sa_time_format(st, b2, sizeof b2));
            return false;
        }
        /* nodes are sorted by name, not id: linear search is fine for a check */
        for (i = 0; i < v->nn && v->wn[i].id != nid; i++)
            ;
        if (i == v->nn) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row of unknown node %" PRId64, nid);
            return false;
        }
        v->cur[i] = sqlite3_column_int64(v->iv, 2);
        v->rc = sqlite3_step(v->iv);
    }
    if (v->rc != SQLITE_ROW && v->rc != SQLITE_DONE) {
        tsdb_sql_err(db, v->rc, "reading intervals", error);
        return false;
    }
    return true;
}

/* Applies the total rows at `at` and compares the totals with those of the intervals. */
static bool verify_totals(sa_tsdb_t *db, verify_t *v, int64_t at, const char *tbuf, sa_error_t *error)
{
    size_t t0;

    for (t0 = v->ti; v->ti < v->trows.n && v->tat[v->ti] == at; v->ti++)
        ;
    if (!apply_rows(&v->trun, v->trows.v + t0, v->ti - t0)) {
        tsdb_oom(db, error);
        return false;
    }
    for (t0 = v->gi; v->gi < v->grows.n && v->gat[v->gi] == at; v->gi++)
        ;
    if (!apply_rows(&v->grun, v->grows.v + t0, v->gi - t0)) {
        tsdb_oom(db, error);
        return false;
    }
    if ((v->ti < v->trows.n && v->tat[v->ti] < at) || (v->gi < v->grows.n && v->gat[v->gi] < at)) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows before %s are not at a snapshot time", tbuf);
        return false;
    }
    if (!tsdb_compute_totals(db, v->cur, v->nn, &v->tcalc, &v->gcalc, error))
        return false;
    if (!totv_equal(&v->tcalc, &v->trun) || !totv_equal(&v->gcalc, &v->grun)) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "snapshot at %s is not whole: its stored totals differ from its intervals", tbuf);
        return false;
    }
    return true;
}

bool sa_tsdb_verify(sa_tsdb_t *db, const char *cluster, size_t *nsnapshots, sa_error_t *error)
{
    verify_t v;
    int64_t cid;
    bool ok = false;
    char tbuf[32], q[80];

    memset(&v, 0, sizeof v);
    if (nsnapshots)
        *nsnapshots = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!verify_load(db, &v, cid, error))
        goto done;
    /* sweep the snapshots in time order, applying interval rows as they start */
    for (size_t k = 0; k < v.nsnap; k++) {
        sa_time_format(v.snaps[k], tbuf, sizeof tbuf);
        if (!verify_gap(db, &v, k, tbuf, error) || !verify_rows(db, &v, v.snaps[k], error) ||
            !verify_totals(db, &v, v.snaps[k], tbuf, error))
            goto done;
    }
    if (v.ti != v.trows.n || v.gi != v.grows.n) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows after the latest snapshot");
        goto done;
    }
    for (size_t i = 0; v.nsnap && i < v.nn; i++) {
        if (v.wn[i].cur != v.cur[i]) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "node %s: current attributes differ from its intervals",
                     sa_error_quote(v.wn[i].name, 64, q, sizeof q));
            goto done;
        }
    }
    if (nsnapshots)
        *nsnapshots = v.nsnap;
    ok = true;
done:
    tsdb_end_read(db); /* also resets the interval cursor */
    verify_clear(&v);
    return ok;
}
