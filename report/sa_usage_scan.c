/*
 * sa_usage_scan.c - the usage report's scan of the job archive (sa_usage_scan() of
 * sa_usage.h), the `--from-jobs` path: the only place where the usage report reads job
 * documents.
 *
 * One find per collection (jobs, jobs_superseded) with a filter that keeps the
 * documents having a (GPU) run that may overlap the scanned range and a projection of
 * the fields the one run source reads (sa_rollup_projection); every document's
 * contribution (schema/jobdoc/sa_rollup.h: its runs by the accounting rules of
 * schema/jobdoc/sa_runsrc.h, split by UTC day) adds the GPU-seconds of each record to the
 * sums of its (cluster, account, user, GPU type), so this path and the rollups count
 * the same runs the same way.
 *
 * Filter (a superset of the documents needed; C decides exactly): cluster in the
 * clusters reported, account/user when filtered, runs.start < END, runs.gpus > 0
 * (unless CPU, memory or billing are counted too: then every run),
 * and (runs.end >= START or the job is not final or the job's end >= START). The
 * last two catch runs without an end (still running, vanished, requeued). The scope
 * is repeated in each clause of the $or so that each clause is an index range on
 * MongoDB (report/README.md, "What a report reads").
 * $elemMatch would be tighter but FerretDB 1.24 does not support field conditions
 * in it.
 */
#include "sa_usage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobview.h"
#include "sa_rollup.h"
#include "sa_vec.h"

#define FIND_BATCH 10000 /* documents per reply batch (the server caps a batch at 16 MiB) */

static const char *const colls[2] = {"jobs", "jobs_superseded"};

typedef struct {
    sa_rdb_t *db;
    const sa_report_opts_t *o;
    const int64_t *as_of;     /* per cluster */
    sa_usums_t *s;
    sa_jobview_t view;        /* the current document */
    sa_rollup_contrib_t contrib;    /* what it contributes */
} scan_t;

/* Adds the GPU-seconds (and CPU, memory, billing) of one job document's contribution to the sums. */
static bool process_doc(scan_t *sc, const bson_t *doc, sa_error_t *error)
{
    const sa_jobview_t *j = &sc->view;
    const sa_rollup_contrib_t *c = &sc->contrib;
    uint32_t cid;

    if (!sa_jobview_read(&sc->view, doc, error))
        return false;
    if (!j->cluster || !j->has_runs)
        return true;
    cid = sa_rintern(&sc->s->names, j->cluster);
    if (cid >= sc->s->nclusters)
        return cid == UINT32_MAX ? sa_error_nomem(error) : true;
    if (!sa_rollup_contrib_of(&sc->contrib, j, error))
        return false;
    for (size_t d = 0; d < c->ndocs; d++) {
        const sa_rollup_contrib_doc_t *day = &c->docs[d];
        if (day->kind != SA_ROLLUP_K_MEMBERS && day->kind != SA_ROLLUP_K_OPEN)
            continue; /* the job lists (live, ended, started): no usage */
        for (size_t r = 0; r < day->nrec; r++) {
            const int64_t *x = &day->rec[r * SA_RR_NF];
            const sa_rollup_rowkey_t *key = &c->keys[x[SA_RR_KEY]];
            int64_t end = day->kind == SA_ROLLUP_K_OPEN ? sc->as_of[cid] : x[SA_RR_END], rate[SA_TRES_N];
            sa_ukey_t k;
            if (!key->s[4][0] && sc->s->ntres == 1)
                continue; /* a run without GPUs when GPUs alone are counted */
            if (!sa_usums_key(sc->s, cid, key, &k))
                return sa_error_nomem(error);
            sa_usums_rates_of(x, rate);
            if (end > x[SA_RR_START] && !sa_usums_add_rates(sc->s, &k, rate, x[SA_RR_START], end))
                return sa_error_nomem(error);
        }
    }
    return true;
}

/* ---- the queries ---------------------------------------------------------------------------- */

/* Runs a find and feeds every document to process_doc. */
static bool scan(scan_t *sc, int coll, const bson_t *filter, sa_error_t *error)
{
    bson_t opts = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", FIND_BATCH);
    cursor = mongoc_collection_find_with_opts(sa_rdb_collection(sc->db, colls[coll]), filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &doc))
        ok = process_doc(sc, doc, error);
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        char what[64];
        snprintf(what, sizeof what, "reading %s", colls[coll]);
        sa_rdb_error(error, sc->db, what, &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&opts);
    return ok;
}

/* Appends {key: {op: t}} (t in seconds, as a BSON date). */
static void append_date_cond(bson_t *b, const char *key, const char *op, int64_t t)
{
    bson_t cond;
    BSON_APPEND_DOCUMENT_BEGIN(b, key, &cond);
    BSON_APPEND_DATE_TIME(&cond, op, t * 1000);
    bson_append_document_end(b, &cond);
}

/* The clusters, accounts and users reported, as conditions of f. */
static void append_scope(const scan_t *sc, bson_t *f)
{
    const sa_usums_t *s = sc->s;
    sa_strv_t names;

    sa_strv_init(&names);
    for (uint32_t i = 0; i < s->nclusters; i++)
        sa_strv_push(&names, sa_rintern_str(&s->names, i));
    sa_rbson_append_in(f, "cluster", &names);
    sa_strv_clear(&names);
    if (sc->o->accounts.n)
        sa_rbson_append_in(f, "account", &sc->o->accounts);
    if (sc->o->users.n)
        sa_rbson_append_in(f, "user", &sc->o->users);
}

/*
 * The first-pass filter (see the comment at the top): an $or of three clauses, each
 * with the scope and one condition an index of schema/ answers on MongoDB, bounded by
 * the window's start whatever the archive's age: runs.end >= START (cluster_runs_end),
 * state not final (cluster_state: the few live states) and end >= START (cluster_end);
 * runs.start < END and runs.gpus > 0 are checked on the documents those return.
 */
static void build_filter(const scan_t *sc, bson_t *f)
{
    const sa_usums_t *s = sc->s;
    bson_t cond, or, alt;

    append_date_cond(f, "runs.start", "$lt", s->b[s->nb - 1]);
    if (s->ntres == 1) { /* GPUs alone: the documents with a GPU run */
        BSON_APPEND_DOCUMENT_BEGIN(f, "runs.gpus", &cond);
        BSON_APPEND_INT32(&cond, "$gt", 0);
        bson_append_document_end(f, &cond);
    }
    BSON_APPEND_ARRAY_BEGIN(f, "$or", &or);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "0", &alt);
    append_scope(sc, &alt);
    append_date_cond(&alt, "runs.end", "$gte", s->b[0]);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "1", &alt);
    append_scope(sc, &alt);
    sa_rbson_append_final_states(&alt, "$nin");
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "2", &alt);
    append_scope(sc, &alt);
    append_date_cond(&alt, "end", "$gte", s->b[0]);
    bson_append_document_end(&or, &alt);
    bson_append_array_end(f, &or);
}

bool sa_usage_scan(sa_rdb_t *db, const sa_report_opts_t *o, const int64_t *as_of, sa_usums_t *s, sa_error_t *error)
{
    scan_t sc;
    bson_t filter = BSON_INITIALIZER;
    bool ok;

    if (!s->nclusters)
        return true;
    memset(&sc, 0, sizeof sc);
    sa_jobview_init(&sc.view);
    sa_rollup_contrib_init(&sc.contrib);
    sc.db = db;
    sc.o = o;
    sc.as_of = as_of;
    sc.s = s;
    build_filter(&sc, &filter);
    ok = scan(&sc, 0, &filter, error) && scan(&sc, 1, &filter, error);
    sa_rollup_contrib_clear(&sc.contrib);
    sa_jobview_clear(&sc.view);
    bson_destroy(&filter);
    return ok;
}
