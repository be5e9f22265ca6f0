/*
 * sa_usage_scan.c - the usage report's scan of the job archive (sa_usage_scan() of
 * sa_usage.h): the only place where the usage report reads job documents.
 *
 * One find per collection (jobs, jobs_superseded) with a filter that keeps the
 * documents having a GPU run that may overlap the scanned range and a projection of
 * the few fields used; the documents are read with bson_iter (no JSON conversion),
 * and every run adds GPU-seconds to the sums of its (cluster, account, user, GPU
 * type).
 *
 * Filter (a superset of the documents needed; C decides exactly): cluster in the
 * clusters reported, account/user when filtered, runs.start < END, runs.gpus > 0,
 * and (runs.end >= START or the job is not final or the job's end >= START). The
 * last two catch runs without an end (still running, vanished, requeued).
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

#include "sa_nodegpu.h"

#define FIND_BATCH 10000 /* documents per reply batch (the server caps a batch at 16 MiB) */
#define DEFER_BATCH 1000 /* ids per $in query of the second pass */

static const char *const colls[2] = {"jobs", "jobs_superseded"};

/* A run of a job document. */
typedef struct {
    int64_t start, end;
    int64_t gpus;
    bson_iter_t gbt; /* gpus_by_type */
    bool has_gbt;
    const char *nodes;
} run_t;

/* The members of a job document the scan reads (strings borrowed from the document). */
typedef struct {
    bson_oid_t oid;
    bool has_oid, has_runs, has_hist;
    const char *cluster, *account, *user, *state;
    uint32_t clen, alen, ulen;
    int64_t end, vanished;
    bson_iter_t runs, hist;
} jobdoc_t;

typedef struct {
    sa_rdb_t *db;
    const sa_report_opts_t *o;
    const int64_t *as_of;     /* per cluster */
    sa_rtsdbs_t *tsdbs;
    sa_usums_t *s;
    sa_nodegpu_t **ng;        /* per cluster: GPU types of nodes; NULL until needed */
    bool *ng_tried;
    run_t *runs;              /* the runs of the current document */
    size_t runcap;
    bson_oid_t *def[2];       /* documents to read again with their history, per collection */
    size_t ndef[2], defcap[2];
} scan_t;

static bool oom(sa_error_t *error)
{
    sa_error_nomem(error);
    return false;
}

/* ---- GPU types ----------------------------------------------------------------------------- */

/* The type id of untyped GPUs of run r of cluster c: the single GPU type of its nodes, else "unknown". */
static bool untyped(scan_t *sc, uint32_t c, const run_t *r, uint32_t *t, sa_error_t *error)
{
    const char *nt = NULL;

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
    if (!sa_nodegpu_type(sc->ng[c], r->nodes, r->start, r->end, &nt, error))
        return false;
    *t = nt ? sa_rintern(&sc->s->names, nt) : sc->s->unknown_id;
    return *t != UINT32_MAX || oom(error);
}

/* Counts one run's GPUs by type for key k (k->t is set here). */
static bool count_run(scan_t *sc, sa_ukey_t k, const run_t *r, sa_error_t *error)
{
    int64_t typed = 0;
    bson_iter_t g = r->gbt, e;

    if (r->end <= sc->s->b[0] || r->start >= sc->s->b[sc->s->nb - 1])
        return true;
    while (r->has_gbt && bson_iter_next(&g)) {
        const char *type = NULL;
        uint32_t tlen = 0;
        int64_t count = 0;
        if (!BSON_ITER_HOLDS_DOCUMENT(&g) || !bson_iter_recurse(&g, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *key = bson_iter_key(&e);
            if (key[0] == 't' && strcmp(key, "type") == 0)
                type = sa_rbson_iter_str(&e, &tlen);
            else if (key[0] == 'c' && strcmp(key, "count") == 0)
                count = sa_rbson_iter_int(&e, 0);
        }
        if (count <= 0)
            continue;
        typed += count;
        if (type && tlen) {
            if ((k.t = sa_rintern_n(&sc->s->names, type, tlen)) == UINT32_MAX)
                return oom(error);
        } else if (!untyped(sc, k.c, r, &k.t, error)) {
            return false;
        }
        if (!sa_usums_add(sc->s, &k, count, r->start, r->end))
            return oom(error);
    }
    if (r->gpus > typed) {
        /* GPUs not split by type (no gpus_by_type): as untyped */
        if (!untyped(sc, k.c, r, &k.t, error))
            return false;
        if (!sa_usums_add(sc->s, &k, r->gpus - typed, r->start, r->end))
            return oom(error);
    }
    return true;
}

/* ---- reading a job document ------------------------------------------------------------------ */

/* Reads one run document into r. */
static void read_run(bson_iter_t *it, run_t *r)
{
    memset(r, 0, sizeof *r);
    r->start = r->end = SA_UNSET;
    while (bson_iter_next(it)) {
        const char *k = bson_iter_key(it);
        switch (k[0]) {
        case 's':
            if (strcmp(k, "start") == 0)
                r->start = sa_rbson_iter_time(it);
            break;
        case 'e':
            if (strcmp(k, "end") == 0)
                r->end = sa_rbson_iter_time(it);
            break;
        case 'g':
            if (strcmp(k, "gpus") == 0)
                r->gpus = sa_rbson_iter_int(it, 0);
            else if (strcmp(k, "gpus_by_type") == 0 && BSON_ITER_HOLDS_ARRAY(it))
                r->has_gbt = bson_iter_recurse(it, &r->gbt);
            break;
        case 'n':
            if (strcmp(k, "nodes") == 0)
                r->nodes = sa_rbson_iter_str(it, NULL);
            break;
        default:
            break;
        }
    }
}

/* Reads the top-level members of a job document; false when it is not a document. */
static bool read_doc(const bson_t *doc, jobdoc_t *j)
{
    bson_iter_t it;

    memset(j, 0, sizeof *j);
    j->account = j->user = "";
    j->end = j->vanished = SA_UNSET;
    if (!bson_iter_init(&it, doc))
        return false;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        switch (k[0]) { /* the first letter first: most keys are not wanted */
        case '_':
            if (strcmp(k, "_id") == 0 && BSON_ITER_HOLDS_OID(&it)) {
                bson_oid_copy(bson_iter_oid(&it), &j->oid);
                j->has_oid = true;
            }
            break;
        case 'a':
            if (strcmp(k, "account") == 0 && !(j->account = sa_rbson_iter_str(&it, &j->alen)))
                j->account = "";
            break;
        case 'c':
            if (strcmp(k, "cluster") == 0)
                j->cluster = sa_rbson_iter_str(&it, &j->clen);
            break;
        case 'e':
            if (strcmp(k, "end") == 0)
                j->end = sa_rbson_iter_time(&it);
            break;
        case 'h':
            if (strcmp(k, "history") == 0 && BSON_ITER_HOLDS_ARRAY(&it))
                j->has_hist = bson_iter_recurse(&it, &j->hist);
            break;
        case 'r':
            if (strcmp(k, "runs") == 0 && BSON_ITER_HOLDS_ARRAY(&it))
                j->has_runs = bson_iter_recurse(&it, &j->runs);
            break;
        case 's':
            if (strcmp(k, "state") == 0)
                j->state = sa_rbson_iter_str(&it, NULL);
            break;
        case 'u':
            if (strcmp(k, "user") == 0 && !(j->user = sa_rbson_iter_str(&it, &j->ulen)))
                j->user = "";
            break;
        case 'v':
            if (strcmp(k, "vanished_at") == 0)
                j->vanished = sa_rbson_iter_time(&it);
            break;
        default:
            break;
        }
    }
    return true;
}

/* Reads the runs that have a start into sc->runs; *n gets their number. */
static bool read_runs(scan_t *sc, jobdoc_t *j, size_t *n, sa_error_t *error)
{
    *n = 0;
    while (bson_iter_next(&j->runs)) {
        bson_iter_t r;
        if (!BSON_ITER_HOLDS_DOCUMENT(&j->runs) || !bson_iter_recurse(&j->runs, &r))
            continue;
        if (*n == sc->runcap) {
            size_t cap = sc->runcap ? sc->runcap * 2 : 8;
            run_t *v = realloc(sc->runs, cap * sizeof *v);
            if (!v)
                return oom(error);
            sc->runs = v;
            sc->runcap = cap;
        }
        read_run(&r, &sc->runs[*n]);
        if (sc->runs[*n].start != SA_UNSET)
            (*n)++;
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
static int64_t history_end(const bson_iter_t *hist, int64_t start, int64_t fallback)
{
    bson_iter_t h = *hist, e;
    while (bson_iter_next(&h)) {
        const char *st = NULL;
        int64_t at = SA_UNSET;
        if (!BSON_ITER_HOLDS_DOCUMENT(&h) || !bson_iter_recurse(&h, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *k = bson_iter_key(&e);
            if (strcmp(k, "state") == 0)
                st = sa_rbson_iter_str(&e, NULL);
            else if (strcmp(k, "at") == 0)
                at = sa_rbson_iter_time(&e);
        }
        if (at != SA_UNSET && at > start && st && strcmp(st, "RUNNING") != 0 && strcmp(st, "SUSPENDED") != 0)
            return at;
    }
    return fallback;
}

/*
 * The end of run i of n, when it has none (accounting rules: sa_report.h). Returns
 * false (*end unset) when the job's history is needed and was not fetched.
 */
static bool run_end(const scan_t *sc, const jobdoc_t *j, size_t i, size_t n, int64_t as_of, bool have_history,
                    int64_t *end)
{
    const run_t *r = &sc->runs[i];
    int64_t next = SA_UNSET;

    for (size_t k = 0; k < n; k++) { /* the next run's start */
        if (sc->runs[k].start > r->start && (next == SA_UNSET || sc->runs[k].start < next))
            next = sc->runs[k].start;
    }
    if (next != SA_UNSET)
        *end = next;
    else if (sa_rstate_is_final(j->state))
        *end = j->end != SA_UNSET ? j->end : r->start; /* final without an end: nothing to count */
    else if (j->vanished != SA_UNSET)
        *end = j->vanished;
    else if (state_is_running(j->state) || !j->state)
        *end = as_of;
    else if (have_history)
        *end = j->has_hist ? history_end(&j->hist, r->start, as_of) : as_of;
    else if (j->has_oid)
        return false;
    else
        *end = as_of;
    return true;
}

/* Puts a document aside, to be read again with its history. */
static bool defer(scan_t *sc, int coll, const bson_oid_t *oid, sa_error_t *error)
{
    if (sc->ndef[coll] == sc->defcap[coll]) {
        size_t cap = sc->defcap[coll] ? sc->defcap[coll] * 2 : 64;
        bson_oid_t *v = realloc(sc->def[coll], cap * sizeof *v);
        if (!v)
            return oom(error);
        sc->def[coll] = v;
        sc->defcap[coll] = cap;
    }
    sc->def[coll][sc->ndef[coll]++] = *oid;
    return true;
}

/*
 * Counts the GPU runs of one job document of collection coll. A document whose open
 * run needs its history is put aside when the history was not fetched.
 */
static bool process_doc(scan_t *sc, const bson_t *doc, int coll, bool have_history, sa_error_t *error)
{
    jobdoc_t j;
    sa_ukey_t k;
    size_t n;

    if (!read_doc(doc, &j) || !j.cluster || !j.has_runs)
        return true;
    k.c = sa_rintern_n(&sc->s->names, j.cluster, j.clen);
    if (k.c >= sc->s->nclusters)
        return k.c == UINT32_MAX ? oom(error) : true;
    if (!read_runs(sc, &j, &n, error))
        return false;
    for (size_t i = 0; i < n; i++) {
        run_t *r = &sc->runs[i];
        if (r->end == SA_UNSET && !run_end(sc, &j, i, n, sc->as_of[k.c], have_history, &r->end))
            return defer(sc, coll, &j.oid, error);
        if (r->end < r->start)
            r->end = r->start;
    }
    k.a = sa_rintern_n(&sc->s->names, j.account, j.alen);
    k.u = sa_rintern_n(&sc->s->names, j.user, j.ulen);
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
                                         "runs.gpus_by_type", "runs.nodes", NULL};
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

/* The first-pass filter (see the comment at the top). */
static void build_filter(const scan_t *sc, bson_t *f)
{
    const sa_report_opts_t *o = sc->o;
    const sa_usums_t *s = sc->s;
    sa_strv_t names;
    bson_t cond, or, alt;

    sa_strv_init(&names);
    for (uint32_t i = 0; i < s->nclusters; i++)
        sa_strv_push(&names, sa_rintern_str(&s->names, i));
    sa_rbson_append_in(f, "cluster", &names);
    sa_strv_clear(&names);
    if (o->accounts.n)
        sa_rbson_append_in(f, "account", &o->accounts);
    if (o->users.n)
        sa_rbson_append_in(f, "user", &o->users);
    append_date_cond(f, "runs.start", "$lt", s->b[s->nb - 1]);
    BSON_APPEND_DOCUMENT_BEGIN(f, "runs.gpus", &cond);
    BSON_APPEND_INT32(&cond, "$gt", 0);
    bson_append_document_end(f, &cond);
    BSON_APPEND_ARRAY_BEGIN(f, "$or", &or);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "0", &alt);
    append_date_cond(&alt, "runs.end", "$gte", s->b[0]);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "1", &alt);
    sa_rbson_append_final_states(&alt, "$nin");
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "2", &alt);
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
                BSON_APPEND_OID(&arr, ikey, &sc->def[coll][i]);
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
    free(sc.def[0]);
    free(sc.def[1]);
    bson_destroy(&filter);
    return ok;
}
