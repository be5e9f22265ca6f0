/*
 * sa_usage_scan.c - the usage report's scan of the job archive (sa_usage_scan() of
 * sa_usage.h): the only place where the usage report reads job documents.
 *
 * One find per collection (jobs, jobs_superseded) with a filter that keeps the
 * documents having a GPU run that may overlap the scanned range and a projection of
 * the few fields used; the documents are read through the typed view of
 * schema/sa_jobview.h (no JSON conversion, no member names here), and every run adds
 * GPU-seconds to the sums of its (cluster, account, user, GPU type).
 *
 * Filter (a superset of the documents needed; C decides exactly): cluster in the
 * clusters reported, account/user when filtered, runs.start < END, runs.gpus > 0,
 * and (runs.end >= START or the job is not final or the job's end >= START). The
 * last two catch runs without an end (still running, vanished, requeued). The scope
 * is repeated in each clause of the $or so that each clause is an index range on
 * MongoDB (README, "What a report reads").
 * $elemMatch would be tighter but FerretDB 1.24 does not support field conditions
 * in it.
 *
 * A run without an end whose job is pending again needs the job's history, which
 * the first pass does not fetch: such documents are put aside and read again by _id
 * with their history (DEFER_BATCH ids per query).
 */
#include "sa_usage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobview.h"
#include "sa_nodegpu.h"
#include "sa_vec.h"

#define FIND_BATCH 10000 /* documents per reply batch (the server caps a batch at 16 MiB) */
#define DEFER_BATCH 1000 /* ids per $in query of the second pass */

static const char *const colls[2] = {"jobs", "jobs_superseded"};

/* A run of a job document being counted: the view's run, with the end the accounting rules give it. */
typedef struct {
    const sa_jobview_run_t *v;
    int64_t start, end;
} run_t;

typedef struct {
    sa_rdb_t *db;
    const sa_report_opts_t *o;
    const int64_t *as_of;     /* per cluster */
    sa_rtsdbs_t *tsdbs;
    sa_usums_t *s;
    sa_nodegpu_t **ng;        /* per cluster: GPU types of nodes; NULL until needed */
    bool *ng_tried;
    sa_jobview_t view;        /* the current document */
    run_t *runs;              /* its runs that have a start */
    size_t runcap;
    bson_value_t *def[2];     /* _ids of documents to read again with their history, per collection (copies) */
    size_t ndef[2], defcap[2];
} scan_t;

static bool oom(sa_error_t *error)
{
    sa_error_nomem(error);
    return false;
}

/* ---- GPU types ----------------------------------------------------------------------------- */

/*
 * The type id of untyped GPUs of run r of cluster c: the type slurm-ingest found on its
 * nodes (runs[].gpu_type, source node or carried), else the single GPU type of its nodes
 * in the time series now, else "unknown".
 */
static bool untyped(scan_t *sc, uint32_t c, const run_t *r, uint32_t *t, sa_error_t *error)
{
    const char *nt = NULL;

    if (r->v->gpu_type && *r->v->gpu_type &&
        (r->v->gpu_type_source == SA_RUN_GPU_TYPE_NODE || r->v->gpu_type_source == SA_RUN_GPU_TYPE_CARRIED)) {
        *t = sa_rintern(&sc->s->names, r->v->gpu_type);
        return *t != UINT32_MAX || oom(error);
    }

    if (!sc->ng_tried[c]) {
        sa_tsdb_t *db = NULL;
        const char *name = sa_rintern_str(&sc->s->names, c);
        sc->ng_tried[c] = true;
        if (!sa_rtsdbs_get(sc->tsdbs, sc->o, name, false, &db, error))
            return false;
        if (db && !(sc->ng[c] = sa_nodegpu_new(db, name))) {
            sa_error_nomem(error);
            return false;
        }
    }
    if (!sa_nodegpu_type(sc->ng[c], r->v->nodes, r->start, r->end, &nt, error))
        return false;
    *t = nt ? sa_rintern(&sc->s->names, nt) : sc->s->unknown_id;
    return *t != UINT32_MAX || oom(error);
}

/* Counts one run's GPUs by type for key k (k->t is set here). */
static bool count_run(scan_t *sc, sa_ukey_t k, const run_t *r, sa_error_t *error)
{
    int64_t typed = 0;

    if (r->end <= sc->s->b[0] || r->start >= sc->s->b[sc->s->nb - 1])
        return true;
    for (size_t i = 0; i < r->v->ngpu_types; i++) {
        const sa_jobview_gpu_t *g = &r->v->gpu_types[i];
        if (g->count <= 0)
            continue;
        typed += g->count;
        if (g->type && *g->type) {
            if ((k.t = sa_rintern(&sc->s->names, g->type)) == UINT32_MAX)
                return oom(error);
        } else if (!untyped(sc, k.c, r, &k.t, error)) {
            return false;
        }
        if (!sa_usums_add(sc->s, &k, g->count, r->start, r->end))
            return oom(error);
    }
    if (r->v->gpus > typed) {
        /* GPUs not split by type (no gpus_by_type): as untyped */
        if (!untyped(sc, k.c, r, &k.t, error))
            return false;
        if (!sa_usums_add(sc->s, &k, r->v->gpus - typed, r->start, r->end))
            return oom(error);
    }
    return true;
}

/* ---- reading a job document ------------------------------------------------------------------ */

/* The runs of the current document that have a start, into sc->runs; *n gets their number. */
static bool collect_runs(scan_t *sc, size_t *n, sa_error_t *error)
{
    const sa_jobview_t *j = &sc->view;
    *n = 0;
    for (size_t i = 0; i < j->nruns; i++) {
        if (j->runs[i].start == SA_UNSET)
            continue;
        if (!SA_VEC_GROW(sc->runs, sc->runcap, *n, 1, 8))
            return oom(error);
        sc->runs[*n].v = &j->runs[i];
        sc->runs[*n].start = j->runs[i].start;
        sc->runs[(*n)++].end = j->runs[i].end;
    }
    return true;
}

/* True for a job base state in which a run without an end is still going. */
static bool state_is_running(const char *s)
{
    return s && !sa_rstate_is_final(s) && strcmp(s, "PENDING") != 0;
}

/*
 * The end of a run left without one by a job that is not final, not listed as
 * running: the first later history entry that is not RUNNING/SUSPENDED.
 */
static int64_t history_end(const sa_jobview_t *j, int64_t start, int64_t fallback)
{
    for (size_t i = 0; i < j->nhistory; i++) {
        const sa_jobview_hist_t *h = &j->history[i];
        if (h->at != SA_UNSET && h->at > start && h->state && strcmp(h->state, "RUNNING") != 0 &&
            strcmp(h->state, "SUSPENDED") != 0)
            return h->at;
    }
    return fallback;
}

/*
 * The end of run i of n, when it has none (accounting rules: sa_report.h). Returns
 * false (*end unset) when the job's history is needed and was not fetched.
 */
static bool run_end(const scan_t *sc, size_t i, size_t n, int64_t as_of, bool have_history, int64_t *end)
{
    const sa_jobview_t *j = &sc->view;
    const run_t *r = &sc->runs[i];
    int64_t next = SA_UNSET;

    for (size_t k = 0; k < n; k++) { /* the next run's start */
        if (sc->runs[k].start > r->start && (next == SA_UNSET || sc->runs[k].start < next))
            next = sc->runs[k].start;
    }
    if (next != SA_UNSET)
        *end = next;
    else if (j->final)
        *end = j->end != SA_UNSET ? j->end : r->start; /* final without an end: nothing to count */
    else if (j->vanished_at != SA_UNSET)
        *end = j->vanished_at;
    else if (state_is_running(j->state) || !j->state)
        *end = as_of;
    else if (have_history)
        *end = j->has_history ? history_end(j, r->start, as_of) : as_of;
    else if (j->has_id)
        return false;
    else
        *end = as_of;
    return true;
}

/* Puts a document aside, to be read again with its history (keeps a copy of its _id). */
static bool defer(scan_t *sc, int coll, const bson_value_t *id, sa_error_t *error)
{
    if (!SA_VEC_GROW(sc->def[coll], sc->defcap[coll], sc->ndef[coll], 1, 64))
        return oom(error);
    bson_value_copy(id, &sc->def[coll][sc->ndef[coll]++]);
    return true;
}

/*
 * Counts the GPU runs of one job document of collection coll. A document whose open
 * run needs its history is put aside when the history was not fetched.
 */
static bool process_doc(scan_t *sc, const bson_t *doc, int coll, bool have_history, sa_error_t *error)
{
    const sa_jobview_t *j = &sc->view;
    sa_ukey_t k;
    size_t n;

    if (!sa_jobview_read(&sc->view, doc, error))
        return false;
    if (!j->cluster || !j->has_runs)
        return true;
    k.c = sa_rintern(&sc->s->names, j->cluster);
    if (k.c >= sc->s->nclusters)
        return k.c == UINT32_MAX ? oom(error) : true;
    if (!collect_runs(sc, &n, error))
        return false;
    for (size_t i = 0; i < n; i++) {
        run_t *r = &sc->runs[i];
        if (r->end == SA_UNSET && !run_end(sc, i, n, sc->as_of[k.c], have_history, &r->end))
            return defer(sc, coll, &j->id, error);
        if (r->end < r->start)
            r->end = r->start;
    }
    k.a = sa_rintern(&sc->s->names, j->account ? j->account : "");
    k.u = sa_rintern(&sc->s->names, j->user ? j->user : "");
    if (k.a == UINT32_MAX || k.u == UINT32_MAX)
        return oom(error);
    for (size_t i = 0; i < n; i++) {
        if (!count_run(sc, k, &sc->runs[i], error))
            return false;
    }
    return true;
}

/* ---- the queries ---------------------------------------------------------------------------- */

/* The projection of the fields process_doc reads. */
static void append_projection(bson_t *opts, bool history)
{
    bson_t proj;
    static const char *const fields[] = {"cluster",   "account",  "user",      "state",           "end",
                                         "vanished_at", "runs.start", "runs.end", "runs.gpus",
                                         "runs.gpus_by_type", "runs.nodes", "runs.gpu_type",
                                         "runs.gpu_type_source", NULL};
    BSON_APPEND_DOCUMENT_BEGIN(opts, "projection", &proj);
    for (const char *const *f = fields; *f; f++)
        BSON_APPEND_INT32(&proj, *f, 1);
    if (history) {
        BSON_APPEND_INT32(&proj, "history.state", 1);
        BSON_APPEND_INT32(&proj, "history.at", 1);
    }
    bson_append_document_end(opts, &proj);
}

/* Runs a find and feeds every document to process_doc. */
static bool scan(scan_t *sc, int coll, const bson_t *filter, bool history, sa_error_t *error)
{
    bson_t opts = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    append_projection(&opts, history);
    BSON_APPEND_INT32(&opts, "batchSize", FIND_BATCH);
    cursor = mongoc_collection_find_with_opts(sa_rdb_collection(sc->db, colls[coll]), filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &doc))
        ok = process_doc(sc, doc, coll, history, error);
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
    BSON_APPEND_DOCUMENT_BEGIN(f, "runs.gpus", &cond);
    BSON_APPEND_INT32(&cond, "$gt", 0);
    bson_append_document_end(f, &cond);
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

/* Second pass: the documents put aside, with their history, DEFER_BATCH ids per query. */
static bool scan_deferred(scan_t *sc, sa_error_t *error)
{
    for (int coll = 0; coll < 2; coll++) {
        for (size_t off = 0; off < sc->ndef[coll]; off += DEFER_BATCH) {
            size_t end = off + DEFER_BATCH < sc->ndef[coll] ? off + DEFER_BATCH : sc->ndef[coll];
            bson_t f = BSON_INITIALIZER, in, arr;
            bool ok;
            BSON_APPEND_DOCUMENT_BEGIN(&f, "_id", &in);
            BSON_APPEND_ARRAY_BEGIN(&in, "$in", &arr);
            for (size_t i = off; i < end; i++) {
                char istr[16];
                const char *ikey;
                bson_uint32_to_string((uint32_t)(i - off), &ikey, istr, sizeof istr);
                BSON_APPEND_VALUE(&arr, ikey, &sc->def[coll][i]);
            }
            bson_append_array_end(&in, &arr);
            bson_append_document_end(&f, &in);
            ok = scan(sc, coll, &f, true, error);
            bson_destroy(&f);
            if (!ok)
                return false;
        }
    }
    return true;
}

bool sa_usage_scan(sa_rdb_t *db, const sa_report_opts_t *o, const int64_t *as_of, sa_rtsdbs_t *tsdbs, sa_usums_t *s,
                   sa_error_t *error)
{
    scan_t sc;
    bson_t filter = BSON_INITIALIZER;
    bool ok = false;

    memset(&sc, 0, sizeof sc);
    sa_jobview_init(&sc.view);
    sc.db = db;
    sc.o = o;
    sc.as_of = as_of;
    sc.tsdbs = tsdbs;
    sc.s = s;
    if (!s->nclusters)
        return true;
    sc.ng = calloc(s->nclusters, sizeof *sc.ng);
    sc.ng_tried = calloc(s->nclusters, sizeof *sc.ng_tried);
    if (!sc.ng || !sc.ng_tried) {
        oom(error);
        goto done;
    }
    build_filter(&sc, &filter);
    ok = scan(&sc, 0, &filter, false, error) && scan(&sc, 1, &filter, false, error) && scan_deferred(&sc, error);
done:
    for (size_t i = 0; sc.ng && i < s->nclusters; i++)
        sa_nodegpu_free(sc.ng[i]);
    free(sc.ng);
    free(sc.ng_tried);
    free(sc.runs);
    sa_jobview_clear(&sc.view);
    for (int c = 0; c < 2; c++) {
        for (size_t i = 0; i < sc.ndef[c]; i++)
            bson_value_destroy(&sc.def[c][i]);
        free(sc.def[c]);
    }
    bson_destroy(&filter);
    return ok;
}
