/*
 * sa_tsdb_verify.c - sa_tsdb_verify(): replays a cluster's interval rows snapshot by
 * snapshot and checks every stored total and the nodes' current attributes against
 * them.
 */
#include "sa_tsdb_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        if (rows->n > cap) {
            int64_t *na = realloc(*ats, (cap = rows->cap) * sizeof *na);
            if (!na)
                t = NULL;
            else
                *ats = na;
        }
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

bool sa_tsdb_verify(sa_tsdb_t *db, const char *cluster, size_t *nsnapshots, sa_error_t *error)
{
    int64_t cid;
    bool ok = false;
    wnode_t *wn = NULL;
    char **names = NULL;
    size_t nn = 0, nsnap = 0, ng = 0, scap = 0;
    int64_t *snaps = NULL, *cur = NULL, *tat = NULL, *gat = NULL;
    span_t *gaps = NULL;
    totv_t trows = {0}, grows = {0}, trun = {0}, grun = {0}, tcalc = {0}, gcalc = {0};
    sqlite3_stmt *s;
    int rc;
    size_t ti = 0, gi = 0, gp = 0;
    char tbuf[32];

    if (nsnapshots)
        *nsnapshots = 0;
    if (!tsdb_begin_read(db, cluster, &cid, error))
        return false;
    if (!cid) {
        ok = true;
        goto done;
    }
    if (!tsdb_load_nodes(db, cid, &wn, &nn, 0, &names, error) || !tsdb_load_gaps(db, cid, false, 0, 0, &gaps, &ng, error))
        goto done;
    if (!(cur = calloc(nn ? nn : 1, sizeof *cur)))
        goto nomem;
    if (!(s = tsdb_stmt(db, S_SNAPS_ALL, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (nsnap == scap) {
            int64_t *nv = realloc(snaps, (scap = scap ? scap * 2 : 256) * sizeof *nv);
            if (!nv) {
                sqlite3_reset(s);
                goto nomem;
            }
            snaps = nv;
        }
        snaps[nsnap++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        tsdb_sql_err(db, rc, "reading snapshots", error);
        goto done;
    }
    if (!load_total_rows(db, S_TOT_ALL, cid, &trows, &tat, error) ||
        !load_total_rows(db, S_GTOT_ALL, cid, &grows, &gat, error))
        goto done;

    /* sweep the snapshots in time order, applying interval rows as they start */
    if (!(s = tsdb_stmt(db, S_IV_ALL, error)))
        goto done;
    sqlite3_bind_int64(s, 1, cid);
    rc = sqlite3_step(s);
    for (size_t k = 0; k < nsnap; k++) {
        int64_t at = snaps[k];
        size_t t0;
        sa_time_format(at, tbuf, sizeof tbuf);
        while (gp < ng && gaps[gp].end < at)
            gp++;
        if (gp < ng && gaps[gp].end == at) {
            if (k == 0 || gaps[gp].start != snaps[k - 1]) {
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "gap ending at %s does not start at the snapshot before",
                         tbuf);
                goto reset;
            }
            memset(cur, 0, nn * sizeof *cur);
            trun.n = grun.n = 0;
        }
        while (rc == SQLITE_ROW && sqlite3_column_int64(s, 1) <= at) {
            int64_t nid = sqlite3_column_int64(s, 0), st = sqlite3_column_int64(s, 1);
            size_t lo = 0, hi = nn;
            if (st != at) {
                char b2[32];
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row at %s is not at a snapshot time",
                         sa_time_format(st, b2, sizeof b2));
                goto reset;
            }
            /* nodes are sorted by name, not id: linear search is fine for a check */
            for (lo = 0; lo < nn && wn[lo].id != nid; lo++)
                ;
            (void)hi;
            if (lo == nn) {
                tsdb_err(db, error, SA_ERR_SQLITE, 0, "interval row of unknown node %" PRId64, nid);
                goto reset;
            }
            cur[lo] = sqlite3_column_int64(s, 2);
            rc = sqlite3_step(s);
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            tsdb_sql_err(db, rc, "reading intervals", error);
            goto reset;
        }
        for (t0 = ti; ti < trows.n && tat[ti] == at; ti++)
            ;
        if (!apply_rows(&trun, trows.v + t0, ti - t0))
            goto nomem_reset;
        for (t0 = gi; gi < grows.n && gat[gi] == at; gi++)
            ;
        if (!apply_rows(&grun, grows.v + t0, gi - t0))
            goto nomem_reset;
        if ((ti < trows.n && tat[ti] < at) || (gi < grows.n && gat[gi] < at)) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows before %s are not at a snapshot time", tbuf);
            goto reset;
        }
        if (!tsdb_compute_totals(db, cur, nn, &tcalc, &gcalc, error))
            goto reset;
        if (!totv_equal(&tcalc, &trun) || !totv_equal(&gcalc, &grun)) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0,
                     "snapshot at %s is not whole: its stored totals differ from its intervals", tbuf);
            goto reset;
        }
    }
    sqlite3_reset(s);
    if (ti != trows.n || gi != grows.n) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "total rows after the latest snapshot");
        goto done;
    }
    for (size_t i = 0; nsnap && i < nn; i++) {
        if (wn[i].cur != cur[i]) {
            char q[80];
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "node %s: current attributes differ from its intervals",
                     sa_error_quote(wn[i].name, 64, q, sizeof q));
            goto done;
        }
    }
    if (nsnapshots)
        *nsnapshots = nsnap;
    ok = true;
    goto done;
nomem_reset:
    tsdb_oom(db, error);
reset:
    sqlite3_reset(s);
    goto done;
nomem:
    tsdb_oom(db, error);
done:
    tsdb_end_read(db);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    free(wn);
    free(snaps);
    free(cur);
    free(tat);
    free(gat);
    free(gaps);
    tsdb_totv_free(&trows);
    tsdb_totv_free(&grows);
    tsdb_totv_free(&trun);
    tsdb_totv_free(&grun);
    tsdb_totv_free(&tcalc);
    tsdb_totv_free(&gcalc);
    return ok;
}
