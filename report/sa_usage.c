/*
 * sa_usage.c - `slurm-report usage`: GPU time per cluster, account, user and GPU
 * type over a window, in GPU-hours, GPU-years or RGU-years, and against awards
 * (sa_alloc.h). The accounting rules are at the top of sa_report.h.
 *
 * How: one find per collection (jobs, jobs_superseded) with a filter that keeps the
 * documents having a GPU run that may overlap the scanned range and a projection of
 * the few fields used; the documents are read with bson_iter (no JSON conversion),
 * and every run adds GPU-seconds (integers) to an accumulator per (cluster, account,
 * user, GPU type). Each accumulator holds one sum per "segment": the time between two
 * consecutive boundaries (the window's start and end, each award's start, end, as-of
 * time and recent-rate start, month starts for the charts), so any of those
 * intervals is a sum of whole segments, and a run costs a binary search plus one
 * addition per segment it spans.
 *
 * Filter (a superset of the documents needed; C decides exactly): cluster in the
 * clusters reported, account/user when filtered, runs.start < END, runs.gpus > 0,
 * and (runs.end >= START or the job is not final or the job's end >= START). The
 * last two catch runs without an end (still running, vanished, requeued).
 * $elemMatch would be tighter but FerretDB 1.24 does not support field conditions
 * in it.
 */
#include "sa_rcommon.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_alloc.h"
#include "sa_nodegpu.h"
#include "sa_rgu.h"
#include "sa_rutil.h"

#define FIND_BATCH 10000 /* documents per reply batch (the server caps a batch at 16 MiB) */
#define DEFER_BATCH 1000 /* ids per $in query of the second pass */

typedef struct {
    uint32_t c, a, u, t; /* interned cluster, account, user, GPU type */
} ukey_t;

typedef struct {
    ukey_t k;
    int64_t *secs; /* GPU-seconds per segment */
} acc_t;

typedef struct {
    const sa_rcluster_t *rc;
    int64_t as_of;     /* runs still running count up to this */
    sa_nodegpu_t *ng;  /* GPU types of nodes; NULL until needed */
    bool ng_tried;
} cinfo_t;

typedef struct {
    int64_t start, end;
    int64_t gpus;
    bson_iter_t gbt; /* gpus_by_type */
    bool has_gbt;
    const char *nodes;
} run_t;

typedef struct {
    const sa_report_opts_t *o;
    double hpy;               /* hours per GPU-year */
    sa_rintern_t names;        /* clusters first: a cluster's id is its index */
    size_t nclusters;
    sa_rclusters_t clusters;
    cinfo_t *ci;
    uint32_t unknown_id, empty_id;
    int64_t *b;               /* boundaries, ascending, unique */
    size_t nb;
    acc_t *acc;
    size_t nacc, acccap;
    uint32_t *slots;          /* open addressing over acc: index + 1 */
    size_t nslots;
    run_t *runs;
    size_t runcap;
    bson_oid_t *def[2];       /* documents to read again with their history, per collection */
    size_t ndef[2], defcap[2];
    sa_rtsdbs_t tsdbs;
    sa_rgu_t *rgu;
    sa_awards_t awards;
    bool *award_in;           /* awards reported (overlap the window, cluster reported) */
    int64_t *wcache;          /* name id -> RGU weight in thousandths (-2: not looked up, -1: none) */
    size_t nwcache;
    uint64_t docs, runs_counted;
    FILE *warn;
} usage_t;

/* ---- accumulators -------------------------------------------------------------------- */

static uint32_t key_hash(const ukey_t *k)
{
    uint64_t h = ((uint64_t)k->c * 0x9E3779B1u) ^ ((uint64_t)k->a * 0x85EBCA77u) ^ ((uint64_t)k->u * 0xC2B2AE3Du) ^
                 ((uint64_t)k->t * 0x27D4EB2Fu);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

static bool key_eq(const ukey_t *x, const ukey_t *y)
{
    return x->c == y->c && x->a == y->a && x->u == y->u && x->t == y->t;
}

static bool acc_rehash(usage_t *u)
{
    size_t nslots = u->nslots ? u->nslots * 2 : 1024;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < u->nacc; i++) {
        size_t h = key_hash(&u->acc[i].k) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(u->slots);
    u->slots = slots;
    u->nslots = nslots;
    return true;
}

/* The accumulator of key k, created (zero) when new; NULL on out of memory. */
static acc_t *acc_get(usage_t *u, const ukey_t *k)
{
    size_t h;
    acc_t *a;

    if ((u->nacc + 1) * 2 > u->nslots && !acc_rehash(u))
        return NULL;
    h = key_hash(k) & (u->nslots - 1);
    while (u->slots[h]) {
        a = &u->acc[u->slots[h] - 1];
        if (key_eq(&a->k, k))
            return a;
        h = (h + 1) & (u->nslots - 1);
    }
    if (u->nacc == u->acccap) {
        size_t cap = u->acccap ? u->acccap * 2 : 256;
        acc_t *v = realloc(u->acc, cap * sizeof *v);
        if (!v)
            return NULL;
        u->acc = v;
        u->acccap = cap;
    }
    a = &u->acc[u->nacc];
    a->k = *k;
    a->secs = calloc(u->nb - 1, sizeof *a->secs);
    if (!a->secs)
        return NULL;
    u->slots[h] = (uint32_t)++u->nacc;
    return a;
}

/* Adds count GPUs over [from, to) to the accumulator's segments. */
static void acc_add(usage_t *u, acc_t *a, int64_t count, int64_t from, int64_t to)
{
    size_t lo = 0, hi = u->nb - 1;

    if (from < u->b[0])
        from = u->b[0];
    if (to > u->b[u->nb - 1])
        to = u->b[u->nb - 1];
    if (to <= from || count <= 0)
        return;
    while (hi - lo > 1) { /* largest j with b[j] <= from */
        size_t mid = (lo + hi) / 2;
        if (u->b[mid] <= from)
            lo = mid;
        else
            hi = mid;
    }
    for (size_t j = lo; j + 1 < u->nb && u->b[j] < to; j++) {
        int64_t s = from > u->b[j] ? from : u->b[j], e = to < u->b[j + 1] ? to : u->b[j + 1];
        if (e > s)
            a->secs[j] += count * (e - s);
    }
}

/* Index of boundary t (which must be one). */
static size_t bound_index(const usage_t *u, int64_t t)
{
    size_t lo = 0, hi = u->nb;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->b[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* GPU-seconds of the accumulator over [x, y), both boundaries. */
static int64_t acc_sum(const usage_t *u, const acc_t *a, int64_t x, int64_t y)
{
    int64_t s = 0;
    if (y <= x)
        return 0;
    for (size_t j = bound_index(u, x), e = bound_index(u, y); j < e && j + 1 < u->nb; j++)
        s += a->secs[j];
    return s;
}

/* ---- reading documents ---------------------------------------------------------------- */

/* True for a job base state in which a run without an end is still going. */
static bool state_is_running(const char *s)
{
    return s && !sa_rstate_is_final(s) && strcmp(s, "PENDING") != 0;
}

/*
 * The end of a run left without one by a job that is not final, not listed as
 * running: the first later history entry that is not RUNNING/SUSPENDED.
 */
static int64_t history_end(bson_iter_t *hist, int64_t start, int64_t fallback)
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

/* The cluster's node GPU type resolver (created on first use; NULL without a series). */
static sa_nodegpu_t *cluster_ng(usage_t *u, cinfo_t *ci, sa_error_t *error, bool *ok)
{
    *ok = true;
    if (!ci->ng_tried) {
        sa_tsdb_t *db = NULL;
        ci->ng_tried = true;
        if (!sa_rtsdbs_get(&u->tsdbs, u->o, ci->rc->name, false, &db, error)) {
            *ok = false;
            return NULL;
        }
        if (db && !(ci->ng = sa_nodegpu_new(db, ci->rc->name))) {
            sa_error_set(error, SA_ERR_SQLITE, ENOMEM, "out of memory");
            *ok = false;
        }
    }
    return ci->ng;
}

static bool oom(sa_error_t *error)
{
    sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
    return false;
}

/* Adds count GPUs of type (interned) over [start, end) for (cluster, account, user). */
static bool add_gpus(usage_t *u, uint32_t c, uint32_t a, uint32_t us, uint32_t t, int64_t count, int64_t start,
                     int64_t end, sa_error_t *error)
{
    ukey_t k = {c, a, us, t};
    acc_t *acc;
    if (count <= 0 || end <= u->b[0] || start >= u->b[u->nb - 1])
        return true;
    if (!(acc = acc_get(u, &k)))
        return oom(error);
    acc_add(u, acc, count, start, end);
    return true;
}

/* Counts one run's GPUs by type. */
static bool count_run(usage_t *u, cinfo_t *ci, uint32_t c, uint32_t a, uint32_t us, const run_t *r,
                      sa_error_t *error)
{
    int64_t typed = 0;
    bson_iter_t g = r->gbt, e;

    if (r->end <= u->b[0] || r->start >= u->b[u->nb - 1])
        return true;
    u->runs_counted++;
    while (r->has_gbt && bson_iter_next(&g)) {
        const char *type = NULL;
        uint32_t tlen = 0;
        int64_t count = 0;
        uint32_t t;
        if (!BSON_ITER_HOLDS_DOCUMENT(&g) || !bson_iter_recurse(&g, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *k = bson_iter_key(&e);
            if (k[0] == 't' && strcmp(k, "type") == 0)
                type = sa_rbson_iter_str(&e, &tlen);
            else if (k[0] == 'c' && strcmp(k, "count") == 0)
                count = sa_rbson_iter_int(&e, 0);
        }
        if (count <= 0)
            continue;
        typed += count;
        if (type && tlen) {
            if ((t = sa_rintern_n(&u->names, type, tlen)) == UINT32_MAX)
                return oom(error);
        } else {
            t = UINT32_MAX; /* untyped: resolved below */
        }
        if (t == UINT32_MAX) {
            const char *nt = NULL;
            bool ok;
            sa_nodegpu_t *ng = cluster_ng(u, ci, error, &ok);
            if (!ok || !sa_nodegpu_type(ng, r->nodes, r->start, r->end, &nt, error))
                return false;
            t = nt ? sa_rintern(&u->names, nt) : u->unknown_id;
            if (t == UINT32_MAX)
                return oom(error);
        }
        if (!add_gpus(u, c, a, us, t, count, r->start, r->end, error))
            return false;
    }
    if (r->gpus > typed) {
        /* GPUs not split by type (no gpus_by_type): as untyped */
        const char *nt = NULL;
        bool ok;
        sa_nodegpu_t *ng = cluster_ng(u, ci, error, &ok);
        uint32_t t;
        if (!ok || !sa_nodegpu_type(ng, r->nodes, r->start, r->end, &nt, error))
            return false;
        t = nt ? sa_rintern(&u->names, nt) : u->unknown_id;
        if (t == UINT32_MAX)
            return oom(error);
        if (!add_gpus(u, c, a, us, t, r->gpus - typed, r->start, r->end, error))
            return false;
    }
    return true;
}

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

/*
 * Counts the GPU runs of one job document. A document whose open run needs its
 * history (a job pending again after a run squeue saw) is put aside when the
 * history was not fetched (have_history false), to be read again by _id.
 */
static bool process_doc(usage_t *u, const bson_t *doc, int coll, bool have_history, sa_error_t *error)
{
    bson_iter_t it, runs_it, hist_it;
    bool has_runs = false, has_hist = false;
    const char *cluster = NULL, *account = "", *user = "", *state = NULL;
    uint32_t clen = 0, alen = 0, ulen = 0, c, a, us;
    int64_t end = SA_UNSET, vanished = SA_UNSET;
    bson_oid_t oid;
    bool has_oid = false;
    size_t n = 0;
    cinfo_t *ci;

    if (!bson_iter_init(&it, doc))
        return true;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        switch (k[0]) {
        case '_':
            if (strcmp(k, "_id") == 0 && BSON_ITER_HOLDS_OID(&it)) {
                bson_oid_copy(bson_iter_oid(&it), &oid);
                has_oid = true;
            }
            break;
        case 'a':
            if (strcmp(k, "account") == 0 && !(account = sa_rbson_iter_str(&it, &alen)))
                account = "";
            break;
        case 'c':
            if (strcmp(k, "cluster") == 0)
                cluster = sa_rbson_iter_str(&it, &clen);
            break;
        case 'e':
            if (strcmp(k, "end") == 0)
                end = sa_rbson_iter_time(&it);
            break;
        case 'h':
            if (strcmp(k, "history") == 0 && BSON_ITER_HOLDS_ARRAY(&it))
                has_hist = bson_iter_recurse(&it, &hist_it);
            break;
        case 'r':
            if (strcmp(k, "runs") == 0 && BSON_ITER_HOLDS_ARRAY(&it))
                has_runs = bson_iter_recurse(&it, &runs_it);
            break;
        case 's':
            if (strcmp(k, "state") == 0)
                state = sa_rbson_iter_str(&it, NULL);
            break;
        case 'u':
            if (strcmp(k, "user") == 0 && !(user = sa_rbson_iter_str(&it, &ulen)))
                user = "";
            break;
        case 'v':
            if (strcmp(k, "vanished_at") == 0)
                vanished = sa_rbson_iter_time(&it);
            break;
        default:
            break;
        }
    }
    u->docs++;
    if (!cluster || !has_runs)
        return true;
    c = sa_rintern_n(&u->names, cluster, clen);
    if (c >= u->nclusters)
        return c == UINT32_MAX ? oom(error) : true;
    ci = &u->ci[c];

    /* the runs, with their ends resolved */
    while (bson_iter_next(&runs_it)) {
        bson_iter_t r;
        if (!BSON_ITER_HOLDS_DOCUMENT(&runs_it) || !bson_iter_recurse(&runs_it, &r))
            continue;
        if (n == u->runcap) {
            size_t cap = u->runcap ? u->runcap * 2 : 8;
            run_t *v = realloc(u->runs, cap * sizeof *v);
            if (!v)
                return oom(error);
            u->runs = v;
            u->runcap = cap;
        }
        read_run(&r, &u->runs[n]);
        if (u->runs[n].start != SA_UNSET)
            n++;
    }
    for (size_t i = 0; i < n; i++) {
        run_t *r = &u->runs[i];
        int64_t next = SA_UNSET;
        if (r->end != SA_UNSET)
            goto clamp;
        for (size_t j = 0; j < n; j++) { /* the next run's start */
            if (u->runs[j].start > r->start && (next == SA_UNSET || u->runs[j].start < next))
                next = u->runs[j].start;
        }
        if (next != SA_UNSET)
            r->end = next;
        else if (sa_rstate_is_final(state))
            r->end = end != SA_UNSET ? end : r->start; /* final without an end: nothing to count */
        else if (vanished != SA_UNSET)
            r->end = vanished;
        else if (state_is_running(state) || !state)
            r->end = ci->as_of;
        else if (have_history)
            r->end = has_hist ? history_end(&hist_it, r->start, ci->as_of) : ci->as_of;
        else if (has_oid) {
            /* read it again, with its history */
            if (u->ndef[coll] == u->defcap[coll]) {
                size_t cap = u->defcap[coll] ? u->defcap[coll] * 2 : 64;
                bson_oid_t *v = realloc(u->def[coll], cap * sizeof *v);
                if (!v)
                    return oom(error);
                u->def[coll] = v;
                u->defcap[coll] = cap;
            }
            u->def[coll][u->ndef[coll]++] = oid;
            return true;
        } else {
            r->end = ci->as_of;
        }
    clamp:
        if (r->end < r->start)
            r->end = r->start;
    }
    a = sa_rintern_n(&u->names, account, alen);
    us = sa_rintern_n(&u->names, user, ulen);
    if (a == UINT32_MAX || us == UINT32_MAX)
        return oom(error);
    for (size_t i = 0; i < n; i++) {
        if (!count_run(u, ci, c, a, us, &u->runs[i], error))
            return false;
    }
    return true;
}

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
static bool scan(usage_t *u, sa_rdb_t *db, int coll, const bson_t *filter, bool history, sa_error_t *error)
{
    static const char *const colls[2] = {"jobs", "jobs_superseded"};
    bson_t opts = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    append_projection(&opts, history);
    BSON_APPEND_INT32(&opts, "batchSize", FIND_BATCH);
    cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, colls[coll]), filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &doc))
        ok = process_doc(u, doc, coll, history, error);
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        char what[64];
        snprintf(what, sizeof what, "reading %s", colls[coll]);
        sa_rdb_error(error, db, what, &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&opts);
    return ok;
}

/* The first-pass filter (see the comment at the top). */
static void build_filter(const usage_t *u, bson_t *f)
{
    const sa_report_opts_t *o = u->o;
    sa_strv_t names;
    bson_t cond, or, alt;

    sa_strv_init(&names);
    for (size_t i = 0; i < u->nclusters; i++)
        sa_strv_push(&names, u->clusters.v[i].name);
    sa_rbson_append_in(f, "cluster", &names);
    sa_strv_clear(&names);
    if (o->accounts.n)
        sa_rbson_append_in(f, "account", &o->accounts);
    if (o->users.n)
        sa_rbson_append_in(f, "user", &o->users);
    BSON_APPEND_DOCUMENT_BEGIN(f, "runs.start", &cond);
    BSON_APPEND_DATE_TIME(&cond, "$lt", u->b[u->nb - 1] * 1000);
    bson_append_document_end(f, &cond);
    BSON_APPEND_DOCUMENT_BEGIN(f, "runs.gpus", &cond);
    BSON_APPEND_INT32(&cond, "$gt", 0);
    bson_append_document_end(f, &cond);
    BSON_APPEND_ARRAY_BEGIN(f, "$or", &or);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "0", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "runs.end", &cond);
    BSON_APPEND_DATE_TIME(&cond, "$gte", u->b[0] * 1000);
    bson_append_document_end(&alt, &cond);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "1", &alt);
    sa_rbson_append_final_states(&alt, "$nin");
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "2", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "end", &cond);
    BSON_APPEND_DATE_TIME(&cond, "$gte", u->b[0] * 1000);
    bson_append_document_end(&alt, &cond);
    bson_append_document_end(&or, &alt);
    bson_append_array_end(f, &or);
}

/* Second pass: the documents put aside, with their history, DEFER_BATCH ids per query. */
static bool scan_deferred(usage_t *u, sa_rdb_t *db, sa_error_t *error)
{
    for (int coll = 0; coll < 2; coll++) {
        for (size_t off = 0; off < u->ndef[coll]; off += DEFER_BATCH) {
            size_t end = off + DEFER_BATCH < u->ndef[coll] ? off + DEFER_BATCH : u->ndef[coll];
            bson_t f = BSON_INITIALIZER, in, arr;
            bool ok;
            BSON_APPEND_DOCUMENT_BEGIN(&f, "_id", &in);
            BSON_APPEND_ARRAY_BEGIN(&in, "$in", &arr);
            for (size_t i = off; i < end; i++) {
                char istr[16];
                const char *ikey;
                bson_uint32_to_string((uint32_t)(i - off), &ikey, istr, sizeof istr);
                BSON_APPEND_OID(&arr, ikey, &u->def[coll][i]);
            }
            bson_append_array_end(&in, &arr);
            bson_append_document_end(&f, &in);
            ok = scan(u, db, coll, &f, true, error);
            bson_destroy(&f);
            if (!ok)
                return false;
        }
    }
    return true;
}

/* ---- boundaries ----------------------------------------------------------------------- */

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
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        int64_t *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return false;
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = t;
    return true;
}

/* The as-of time of an award: min(window end, award end, cluster's last observation), >= award start. */
static int64_t award_to(const usage_t *u, const sa_award_t *a, const cinfo_t *ci)
{
    int64_t to = u->o->end;
    if (a->end < to)
        to = a->end;
    if (ci->as_of < to)
        to = ci->as_of;
    return to < a->start ? a->start : to;
}

static int64_t recent_start(const usage_t *u, const sa_award_t *a, int64_t to)
{
    int64_t r = to - (int64_t)llround(u->awards.recent_days * 86400);
    return r < a->start ? a->start : r;
}

/* Index of a cluster by name, or SIZE_MAX. */
static size_t cluster_index(const usage_t *u, const char *name)
{
    uint32_t id = sa_rintern_find(&u->names, name);
    return id < u->nclusters ? id : SIZE_MAX;
}

static bool want_charts(const sa_report_opts_t *o)
{
    return o->format == SA_FMT_SVG || o->format == SA_FMT_HTML;
}

/* The boundaries: window, awards (start, end, as-of, recent start) and, for charts, month starts. */
static bool build_bounds(usage_t *u, sa_error_t *error)
{
    const sa_report_opts_t *o = u->o;
    i64v_t v = {0};
    int64_t lo = o->start;
    bool ok = i64v_push(&v, o->start) && i64v_push(&v, o->end);

    for (size_t i = 0; ok && i < u->awards.n; i++) {
        const sa_award_t *a = &u->awards.v[i];
        size_t c;
        int64_t to;
        if (!u->award_in[i])
            continue;
        c = cluster_index(u, a->cluster);
        to = award_to(u, a, &u->ci[c]);
        if (a->start < lo)
            lo = a->start;
        ok = i64v_push(&v, a->start) && i64v_push(&v, to) && i64v_push(&v, recent_start(u, a, to));
        if (ok && a->end < o->end)
            ok = i64v_push(&v, a->end);
    }
    if (ok && want_charts(o)) {
        for (int64_t m = sa_rmonth_floor(lo); ok && m < o->end; m = sa_rmonth_add(m, 1)) {
            if (m > lo)
                ok = i64v_push(&v, m);
        }
    }
    if (!ok) {
        free(v.v);
        return oom(error);
    }
    qsort(v.v, v.n, sizeof *v.v, i64_cmp);
    u->nb = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.v[i] < lo || v.v[i] > o->end)
            continue;
        if (u->nb == 0 || v.v[i] != v.v[u->nb - 1])
            v.v[u->nb++] = v.v[i];
    }
    u->b = v.v;
    return true;
}

/* ---- results ---------------------------------------------------------------------------- */

/*
 * RGU weight of an interned type in thousandths (the weights are applied to 0.001
 * RGU, so that RGU sums are integers and do not depend on the order documents
 * arrive in); false when the type has none. Cached per type id.
 */
static bool type_weight(usage_t *u, uint32_t t, int64_t *milli)
{
    if (t >= u->nwcache) {
        size_t n = u->names.n > t ? u->names.n : (size_t)t + 1;
        int64_t *v = realloc(u->wcache, n * sizeof *v);
        if (!v) {
            double w;
            bool ok = sa_rgu_weight(u->rgu, sa_rintern_str(&u->names, t), &w, NULL);
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
        u->wcache[t] = sa_rgu_weight(u->rgu, sa_rintern_str(&u->names, t), &w, NULL) ? llround(w * 1000) : -1;
    }
    *milli = u->wcache[t];
    return *milli >= 0;
}

typedef struct {
    int64_t secs;       /* GPU-seconds */
    int64_t rgu_msecs;  /* RGU-weighted GPU-seconds, in thousandths */
    int64_t unweighted; /* GPU-seconds of types without a weight */
} sums_t;

static void sums_add(usage_t *u, sums_t *s, const acc_t *a, int64_t x, int64_t y)
{
    int64_t v = acc_sum(u, a, x, y), w;
    if (!v)
        return;
    s->secs += v;
    if (type_weight(u, a->k.t, &w))
        s->rgu_msecs += v * w;
    else
        s->unweighted += v;
}

/* RGU-years of a sum. */
static double rgu_years(const usage_t *u, const sums_t *s)
{
    return (double)s->rgu_msecs / 1000.0 / 3600.0 / u->hpy;
}

static double secs_hours(int64_t s)
{
    return (double)s / 3600.0;
}

/* A value in the report unit. */
static double in_unit(const usage_t *u, sa_unit_t unit, const sums_t *s)
{
    switch (unit) {
    case SA_UNIT_GPU_HOURS: return secs_hours(s->secs);
    case SA_UNIT_RGU_YEARS: return rgu_years(u, s);
    default: return secs_hours(s->secs) / u->hpy;
    }
}

static const char *unit_title(sa_unit_t unit)
{
    return unit == SA_UNIT_GPU_HOURS ? "GPU-hours" : unit == SA_UNIT_RGU_YEARS ? "RGU-years" : "GPU-years";
}

static const char *unit_key(sa_unit_t unit)
{
    return unit == SA_UNIT_GPU_HOURS ? "gpu-hours" : unit == SA_UNIT_RGU_YEARS ? "rgu-years" : "gpu-years";
}

/* True if the accumulator falls in the award's scope (cluster, account, type glob). */
static bool award_matches(usage_t *u, const sa_award_t *a, const acc_t *acc)
{
    char low[256], pat[256];
    const char *t;
    size_t i;
    if (strcmp(sa_rintern_str(&u->names, acc->k.c), a->cluster) != 0 ||
        strcmp(sa_rintern_str(&u->names, acc->k.a), a->account) != 0)
        return false;
    if (!a->gpu_type)
        return true;
    t = sa_rintern_str(&u->names, acc->k.t);
    for (i = 0; t[i] && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)t[i]);
    low[i] = '\0';
    for (i = 0; a->gpu_type[i] && i < sizeof pat - 1; i++)
        pat[i] = (char)tolower((unsigned char)a->gpu_type[i]);
    pat[i] = '\0';
    return fnmatch(pat, low, 0) == 0;
}

static sums_t award_sums(usage_t *u, const sa_award_t *a, int64_t x, int64_t y)
{
    sums_t s = {0, 0, 0};
    for (size_t i = 0; i < u->nacc; i++) {
        if (award_matches(u, a, &u->acc[i]))
            sums_add(u, &s, &u->acc[i], x, y);
    }
    return s;
}

static double award_units(const usage_t *u, const sa_award_t *a, const sums_t *s)
{
    return in_unit(u, a->unit == SA_AWARD_RGU_YEARS ? SA_UNIT_RGU_YEARS : SA_UNIT_GPU_YEARS, s);
}

/* The computed figures of one award. */
typedef struct {
    const sa_award_t *a;
    size_t cluster;
    int64_t to, recent_from;
    sums_t window, since, recent;
    double used_window, used_since, target, pct, projected, projected_pct, elapsed_pct;
    bool has_pct;
    const char *status;
} award_fig_t;

static void award_figures(usage_t *u, const sa_award_t *a, award_fig_t *f)
{
    const sa_report_opts_t *o = u->o;
    int64_t wx = o->start > a->start ? o->start : a->start, wy = o->end < a->end ? o->end : a->end;
    double rate;

    memset(f, 0, sizeof *f);
    f->a = a;
    f->cluster = cluster_index(u, a->cluster);
    f->to = award_to(u, a, &u->ci[f->cluster]);
    f->recent_from = recent_start(u, a, f->to);
    f->window = award_sums(u, a, wx, wy);
    f->since = award_sums(u, a, a->start, f->to);
    f->recent = award_sums(u, a, f->recent_from, f->to);
    f->used_window = award_units(u, a, &f->window);
    f->used_since = award_units(u, a, &f->since);
    f->elapsed_pct = 100.0 * (double)(f->to - a->start) / (double)(a->end - a->start);
    f->target = a->amount * (double)(f->to - a->start) / (double)(a->end - a->start);
    rate = f->to > f->recent_from ? award_units(u, a, &f->recent) / (double)(f->to - f->recent_from) : 0;
    f->projected = f->used_since + rate * (double)(a->end - f->to);
    f->projected_pct = 100.0 * f->projected / a->amount;
    if (f->target > 0) {
        f->pct = 100.0 * f->used_since / f->target;
        f->has_pct = true;
    }
    if (f->to <= a->start)
        f->status = "not started";
    else if (f->pct < a->under_pct)
        f->status = "under";
    else if (f->pct > a->over_pct)
        f->status = "over";
    else
        f->status = "on track";
}

/* ---- rows ------------------------------------------------------------------------------ */

static usage_t *sort_ctx;
static unsigned sort_by;

/* Orders accumulators by cluster (as listed), then account, user, type (bytewise). */
static int acc_order(const void *x, const void *y)
{
    const acc_t *a = &sort_ctx->acc[*(const size_t *)x], *b = &sort_ctx->acc[*(const size_t *)y];
    int r;
    if (a->k.c != b->k.c)
        return a->k.c < b->k.c ? -1 : 1;
    if ((sort_by & SA_BY_ACCOUNT) &&
        (r = strcmp(sa_rintern_str(&sort_ctx->names, a->k.a), sa_rintern_str(&sort_ctx->names, b->k.a))))
        return r;
    if ((sort_by & SA_BY_USER) &&
        (r = strcmp(sa_rintern_str(&sort_ctx->names, a->k.u), sa_rintern_str(&sort_ctx->names, b->k.u))))
        return r;
    if ((sort_by & SA_BY_GPU_TYPE) &&
        (r = strcmp(sa_rintern_str(&sort_ctx->names, a->k.t), sa_rintern_str(&sort_ctx->names, b->k.t))))
        return r;
    return 0;
}

/* acc_order, then the other keys: a total order, independent of the order documents arrived in. */
static int acc_total_order(const void *x, const void *y)
{
    const acc_t *a = &sort_ctx->acc[*(const size_t *)x], *b = &sort_ctx->acc[*(const size_t *)y];
    int r = acc_order(x, y);
    if (r || (r = strcmp(sa_rintern_str(&sort_ctx->names, a->k.a), sa_rintern_str(&sort_ctx->names, b->k.a))) ||
        (r = strcmp(sa_rintern_str(&sort_ctx->names, a->k.u), sa_rintern_str(&sort_ctx->names, b->k.u))))
        return r;
    return strcmp(sa_rintern_str(&sort_ctx->names, a->k.t), sa_rintern_str(&sort_ctx->names, b->k.t));
}

/* A row of grouped usage (for the table and the charts). */
typedef struct {
    ukey_t k;            /* the grouping keys (others unused) */
    size_t first, count; /* in the sorted accumulator order */
    sums_t window;
} group_t;

/* Groups the accumulators by the keys in by; groups with no window use are dropped. */
static bool make_groups(usage_t *u, unsigned by, size_t **order_out, group_t **groups, size_t *ngroups,
                        sa_error_t *error)
{
    size_t *order = malloc((u->nacc ? u->nacc : 1) * sizeof *order);
    group_t *g = calloc(u->nacc ? u->nacc : 1, sizeof *g);
    size_t ng = 0;

    if (!order || !g) {
        free(order);
        free(g);
        return oom(error);
    }
    for (size_t i = 0; i < u->nacc; i++)
        order[i] = i;
    sort_ctx = u;
    sort_by = by;
    qsort(order, u->nacc, sizeof *order, acc_total_order);
    for (size_t i = 0; i < u->nacc;) {
        size_t j = i;
        group_t *cur = &g[ng];
        memset(cur, 0, sizeof *cur);
        cur->k = u->acc[order[i]].k;
        cur->first = i;
        while (j < u->nacc && acc_order(&order[i], &order[j]) == 0) {
            sums_add(u, &cur->window, &u->acc[order[j]], u->o->start, u->o->end);
            j++;
        }
        cur->count = j - i;
        if (cur->window.secs > 0)
            ng++;
        i = j;
    }
    *order_out = order;
    *groups = g;
    *ngroups = ng;
    return true;
}

/* ---- SVG charts --------------------------------------------------------------------------- */

typedef struct {
    char *title, *subtitle;
    int64_t from, axis_to, data_to; /* x axis [from, axis_to); values known until data_to */
    size_t nm;
    int64_t *m;                     /* nm + 1 bucket bounds within [from, axis_to] */
    double *val;                    /* per bucket, in unit */
    double target;                  /* award amount; < 0: none */
    const char *unit;
} panel_t;

#define SVG_W 1000
#define PANEL_H 270

/* A round axis maximum >= v. */
static double nice_max(double v)
{
    double p, f;
    if (!(v > 0))
        return 1;
    static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    p = pow(10, floor(log10(v)));
    f = v / p;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (f <= steps[i] * (1 + 1e-9))
            return steps[i] * p;
    }
    return 10 * p;
}

static void svg_text(FILE *out, double x, double y, const char *anchor, const char *style, const char *s)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s%s>", x, y, anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
            anchor ? "\"" : "", style ? style : "");
    sa_rxml_escape(out, s);
    fputs("</text>\n", out);
}

/* Draws one panel at vertical offset y0. */
static void svg_panel(FILE *out, const panel_t *p, double y0)
{
    const double x0 = 80, x1 = SVG_W - 30, top = y0 + 58, bot = y0 + PANEL_H - 40;
    double ymax = p->target > 0 ? p->target : 0, cum = 0, span = (double)(p->axis_to - p->from);
    char buf[96];
    size_t step;

#define TX(t) (x0 + (double)((t) - p->from) / span * (x1 - x0))
#define VY(v) (bot - (v) / ymax * (bot - top))
    for (size_t i = 0; i < p->nm; i++) {
        cum += p->val[i];
        if (p->val[i] > ymax)
            ymax = p->val[i];
    }
    if (cum > ymax)
        ymax = cum;
    ymax = nice_max(ymax * 1.05);
    fprintf(out, "<g class=\"panel\">\n");
    svg_text(out, x0, y0 + 20, NULL, " font-size=\"14\" font-weight=\"bold\"", p->title);
    svg_text(out, x0, y0 + 38, NULL, " font-size=\"11\" fill=\"#444\"", p->subtitle);
    /* axes and grid */
    for (int k = 0; k <= 4; k++) {
        double v = ymax * k / 4, y = VY(v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x0, y, x1, y,
                k ? "#e4e4e4" : "#333");
        snprintf(buf, sizeof buf, "%g", v);
        svg_text(out, x0 - 6, y + 4, "end", " font-size=\"10\"", buf);
    }
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x0, top, x0, bot);
    fprintf(out, "<text x=\"0\" y=\"0\" transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#444\">",
            (top + bot) / 2);
    sa_rxml_escape(out, p->unit);
    fputs("</text>\n", out);
    /* monthly bars */
    step = p->nm > 24 ? 3 : p->nm > 12 ? 2 : 1;
    for (size_t i = 0; i < p->nm; i++) {
        double bx0 = TX(p->m[i]), bx1 = TX(p->m[i + 1]), y = VY(p->val[i]);
        if (p->val[i] > 0)
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#7aa6d8\"><title>%s: %.4g %s</title></rect>\n",
                    bx0 + 1, y, bx1 - bx0 - 2 > 1 ? bx1 - bx0 - 2 : 1, bot - y, sa_rmonth_label(p->m[i], buf, sizeof buf),
                    p->val[i], p->unit);
        if (i % step == 0) {
            sa_rmonth_label(p->m[i], buf, sizeof buf);
            svg_text(out, (bx0 + bx1) / 2, bot + 14, "middle", " font-size=\"10\"", buf);
        }
    }
    /* target line */
    if (p->target > 0)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                TX(p->from), VY(0), TX(p->axis_to), VY(p->target));
    /* cumulative use */
    cum = 0;
    fprintf(out, "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" points=\"%.1f,%.1f", TX(p->from), VY(0));
    for (size_t i = 0; i < p->nm && p->m[i] < p->data_to; i++) {
        int64_t e = p->m[i + 1] < p->data_to ? p->m[i + 1] : p->data_to;
        cum += p->val[i];
        fprintf(out, " %.1f,%.1f", TX(e), VY(cum));
    }
    fputs("\"/>\n", out);
    if (p->data_to < p->axis_to) {
        double x = TX(p->data_to);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\n",
                x, top, x, bot);
        snprintf(buf, sizeof buf, "as of %s", sa_riso(p->data_to));
        svg_text(out, x + 4, top + 10, NULL, " font-size=\"10\" fill=\"#666\"", buf);
    }
    /* legend */
    {
        double lx = x1 - 330, ly = y0 + 20;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#7aa6d8\"/>\n", lx, ly - 9);
        svg_text(out, lx + 16, ly, NULL, " font-size=\"10\"", "monthly use");
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n",
                lx + 95, ly - 4, lx + 115, ly - 4);
        svg_text(out, lx + 119, ly, NULL, " font-size=\"10\"", "cumulative use");
        if (p->target > 0) {
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n",
                    lx + 215, ly - 4, lx + 240, ly - 4);
            svg_text(out, lx + 244, ly, NULL, " font-size=\"10\"", "award target");
        }
    }
    fputs("</g>\n", out);
#undef TX
#undef VY
}

/* Splits a long line at spaces into pieces of at most width characters (appended to out). */
static void wrap_line(const char *s, size_t width, sa_strv_t *out)
{
    while (strlen(s) > width) {
        size_t cut = width;
        char *piece;
        while (cut > 0 && s[cut] != ' ')
            cut--;
        if (cut == 0)
            cut = width;
        piece = strndup(s, cut);
        if (piece)
            sa_strv_push(out, piece);
        free(piece);
        s += cut;
        while (*s == ' ')
            s++;
    }
    if (*s)
        sa_strv_push(out, s);
}

/* The whole SVG document: the preamble (wrapped) and the panels. */
static void svg_write(FILE *out, const sa_strv_t *preamble, const panel_t *p, size_t np, bool standalone)
{
    sa_strv_t lines;
    double head, height;

    sa_strv_init(&lines);
    for (size_t i = 0; preamble && i < preamble->n; i++)
        wrap_line(preamble->v[i], 160, &lines);
    head = 16.0 * (double)lines.n + 16;
    height = head + (double)(np ? np : 1) * PANEL_H;
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"sans-serif\">\n<title>slurm-report: GPU use per month</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
            SVG_W, height, SVG_W, height);
    for (size_t i = 0; i < lines.n; i++)
        svg_text(out, 10, 18 + 16.0 * (double)i, NULL, " font-size=\"11\" fill=\"#333\"", lines.v[i]);
    for (size_t i = 0; i < np; i++)
        svg_panel(out, &p[i], head + (double)i * PANEL_H);
    if (!np)
        svg_text(out, 80, head + 40, NULL, " font-size=\"14\"", "No GPU use in the window.");
    fputs("</svg>\n", out);
    sa_strv_clear(&lines);
}

static void panels_free(panel_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].title);
        free(p[i].subtitle);
        free(p[i].m);
        free(p[i].val);
    }
    free(p);
}

/* Fills a panel's month buckets over [from, axis_to) with the use of the matching accumulators. */
static bool panel_fill(usage_t *u, panel_t *p, const sa_award_t *a, const group_t *g, const size_t *order,
                       sa_unit_t unit)
{
    size_t nm = 0;
    for (int64_t m = sa_rmonth_floor(p->from); m < p->axis_to; m = sa_rmonth_add(m, 1))
        nm++;
    p->m = calloc(nm + 1, sizeof *p->m);
    p->val = calloc(nm ? nm : 1, sizeof *p->val);
    if (!p->m || !p->val)
        return false;
    p->nm = nm;
    {
        int64_t m = sa_rmonth_floor(p->from);
        for (size_t i = 0; i <= nm; i++, m = sa_rmonth_add(m, 1))
            p->m[i] = i == 0 ? p->from : m > p->axis_to ? p->axis_to : m;
    }
    for (size_t i = 0; i < nm; i++) {
        int64_t x = p->m[i], y = p->m[i + 1] < p->data_to ? p->m[i + 1] : p->data_to;
        sums_t s = {0, 0, 0};
        if (y <= x)
            continue;
        if (a) {
            s = award_sums(u, a, x, y);
            p->val[i] = award_units(u, a, &s);
        } else {
            for (size_t k = 0; k < g->count; k++)
                sums_add(u, &s, &u->acc[order[g->first + k]], x, y);
            p->val[i] = in_unit(u, unit, &s);
        }
    }
    return true;
}

/* ---- the report ----------------------------------------------------------------------------- */

static void usage_clear(usage_t *u)
{
    for (size_t i = 0; i < u->nclusters; i++)
        sa_nodegpu_free(u->ci[i].ng);
    free(u->ci);
    sa_rclusters_clear(&u->clusters);
    sa_rintern_clear(&u->names);
    for (size_t i = 0; i < u->nacc; i++)
        free(u->acc[i].secs);
    free(u->acc);
    free(u->slots);
    free(u->b);
    free(u->runs);
    free(u->def[0]);
    free(u->def[1]);
    sa_rtsdbs_clear(&u->tsdbs);
    sa_rgu_free(u->rgu);
    sa_awards_clear(&u->awards);
    free(u->award_in);
    free(u->wcache);
}

/* Checks the options that make no sense for usage. */
static bool check_opts(const sa_report_opts_t *o, unsigned by, sa_error_t *error)
{
    if (o->start == SA_UNSET || o->end == SA_UNSET) {
        sa_error_set(error, SA_ERR_USAGE, 0, "usage needs a window: --month YYYY-MM, or -S START [-E END]");
        return false;
    }
    if (o->end <= o->start) {
        sa_error_set(error, SA_ERR_USAGE, 0, "the window is empty: END (%s) is not after START (%s)", sa_riso(o->end),
                     sa_riso(o->start));
        return false;
    }
    if (by & SA_BY_PARTITION) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--by partition is for `current`; usage groups by account, user, gpu-type");
        return false;
    }
    if (o->allocations_path && by != SA_BY_ACCOUNT) {
        sa_error_set(error, SA_ERR_USAGE, 0, "with --allocations the rows are the awards: use --by account (the default)");
        return false;
    }
    if (o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format prometheus is for `current`");
        return false;
    }
    if (!(o->year_days > 0)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--year-days must be > 0");
        return false;
    }
    return true;
}

/* The preamble: period, clusters, unit and constant, rules. */
static void usage_preamble(usage_t *u, sa_strv_t *p, const sa_strv_t *unweighted)
{
    const sa_report_opts_t *o = u->o;
    char *clusters = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&clusters, &len);

    sa_rpreamble_add(p, "GPU usage from %s to %s (UTC, end excluded)", sa_riso(o->start), sa_riso(o->end));
    if (m) {
        for (size_t i = 0; i < u->nclusters; i++) {
            const sa_rcluster_t *c = &u->clusters.v[i];
            fprintf(m, "%s%s", i ? ", " : "", c->name);
            if (!c->in_archive)
                fputs(" (not in the archive)", m);
            else if (sa_rcluster_as_of(c, SA_UNSET) == SA_UNSET)
                fprintf(m, " (no observation time: running jobs counted to %s)", sa_riso(o->now));
            else
                fprintf(m, " (jobs observed to %s)", sa_riso(u->ci[i].as_of));
        }
        if (!u->nclusters)
            fputs("none", m);
        fclose(m);
    }
    sa_rpreamble_add(p, "Clusters: %s", clusters ? clusters : "?");
    free(clusters);
    sa_rpreamble_add(p, "Unit: %s; 1 GPU-year = %g GPU-hours (%g days)", unit_title(o->unit), u->hpy, o->year_days);
    if (o->accounts.n || o->users.n) {
        char *only = NULL;
        size_t l = 0;
        FILE *mm = open_memstream(&only, &l);
        if (mm) {
            for (size_t i = 0; i < o->accounts.n; i++)
                fprintf(mm, "%s%s", i ? "," : "accounts ", o->accounts.v[i]);
            for (size_t i = 0; i < o->users.n; i++)
                fprintf(mm, "%s%s", i ? "," : o->accounts.n ? "; users " : "users ", o->users.v[i]);
            fclose(mm);
        }
        sa_rpreamble_add(p, "Only: %s", only ? only : "?");
        free(only);
    }
    sa_rpreamble_add(p, "Rules: per run, allocated GPUs x the overlap of [run start, run end) with the window; every "
                       "run of a requeued job and of a reused job id counts; a running run counts up to its cluster's "
                       "last observation; pending time counts nothing.");
    sa_rpreamble_add(p, "GPU type: typed TRES (gres/gpu:TYPE), else the single GPU type of the run's nodes in the "
                       "time series at its start, else unknown.");
    if (o->unit == SA_UNIT_RGU_YEARS || o->allocations_path) {
        sa_rpreamble_add(p, "RGU weights: %s", o->rgu_weights_path ? "from --rgu-weights" : "built-in (schema/rgu-weights.json)");
        if (unweighted->n) {
            char *list = NULL;
            size_t l = 0;
            FILE *mm = open_memstream(&list, &l);
            for (size_t i = 0; mm && i < unweighted->n; i++)
                fprintf(mm, "%s%s", i ? ", " : "", unweighted->v[i]);
            if (mm)
                fclose(mm);
            sa_rpreamble_add(p, "No RGU weight for GPU type(s) %s: their GPU-hours are not in RGU-years "
                               "(column gpu_hours_unweighted).", list ? list : "?");
            free(list);
        }
    }
    if (o->allocations_path)
        sa_rpreamble_add(p, "Awards: target to date = award x elapsed fraction of the award period (to the as-of "
                           "time: the earliest of the window end, the award end, the cluster's last observation); "
                           "projection = use since the award start + the rate of the last %g days x the time left; "
                           "status: under below the award's under_pct of the target, over above its over_pct, else "
                           "on track.",
                        u->awards.recent_days);
}

bool sa_report_usage(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    usage_t u;
    sa_rdb_t *db = NULL;
    bson_t filter = BSON_INITIALIZER;
    sa_rtable_t table;
    sa_col_t cols[32];
    size_t ncols = 0, *order = NULL, ngroups = 0, npanels = 0;
    group_t *groups = NULL;
    panel_t *panels = NULL;
    sa_strv_t preamble, unweighted;
    unsigned by = o->by ? o->by : SA_BY_ACCOUNT;
    bool alloc = o->allocations_path != NULL, rgu_cols = o->unit == SA_UNIT_RGU_YEARS, ok = false;
    json_t *extra = NULL;
    enum { C_CLUSTER, C_ACCOUNT, C_USER, C_TYPE, C_HOURS, C_YEARS, C_RGU, C_UNW, C_AWARD, C_AUNIT, C_ASTART, C_AEND,
           C_USEDW, C_USEDS, C_TARGET, C_PCT, C_PROJ, C_PROJPCT, C_ELAPSED, C_ASOF, C_STATUS, C_NOTE, C_N };
    int col_of[C_N];

    memset(&u, 0, sizeof u);
    sa_rintern_init(&u.names);
    sa_rtsdbs_init(&u.tsdbs);
    sa_strv_init(&preamble);
    sa_strv_init(&unweighted);
    sa_rtable_init(&table, cols, 0);
    u.o = o;
    u.warn = warn;
    u.hpy = o->year_days * 24;
    if (!check_opts(o, by, error))
        goto done;
    if (!(u.rgu = sa_rgu_load(o->rgu_weights_path, error)))
        goto done;
    if (alloc && !sa_awards_load(o->allocations_path, &u.awards, error))
        goto done;
    for (size_t i = 0; i < u.awards.n; i++) {
        if (u.awards.v[i].unit == SA_AWARD_RGU_YEARS)
            rgu_cols = true;
    }
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &u.clusters, error))
        goto done;

    /* clusters: interned first, so that a cluster's id is its index */
    u.nclusters = u.clusters.n;
    u.ci = calloc(u.nclusters ? u.nclusters : 1, sizeof *u.ci);
    if (!u.ci) {
        oom(error);
        goto done;
    }
    for (size_t i = 0; i < u.nclusters; i++) {
        if (sa_rintern(&u.names, u.clusters.v[i].name) != i) {
            sa_error_set(error, SA_ERR_USAGE, 0, "cluster %s named twice", u.clusters.v[i].name);
            goto done;
        }
        u.ci[i].rc = &u.clusters.v[i];
        u.ci[i].as_of = sa_rcluster_as_of(&u.clusters.v[i], o->now);
        if (!u.clusters.v[i].in_archive && warn)
            fprintf(warn, "slurm-report: cluster %s is not in the archive (no clusters document)\n",
                    u.clusters.v[i].name);
    }
    u.unknown_id = sa_rintern(&u.names, "unknown");
    u.empty_id = sa_rintern(&u.names, "");
    u.award_in = calloc(u.awards.n + 1, sizeof *u.award_in);
    if (!u.award_in || u.unknown_id == UINT32_MAX || u.empty_id == UINT32_MAX) {
        oom(error);
        goto done;
    }
    for (size_t i = 0; i < u.awards.n; i++) {
        const sa_award_t *a = &u.awards.v[i];
        bool acc_ok = !o->accounts.n || sa_strv_contains(&o->accounts, a->account);
        u.award_in[i] = a->start < o->end && a->end > o->start && cluster_index(&u, a->cluster) != SIZE_MAX && acc_ok;
    }
    if (!build_bounds(&u, error))
        goto done;

    /* the scan */
    if (u.nclusters) {
        build_filter(&u, &filter);
        if (!scan(&u, db, 0, &filter, false, error) || !scan(&u, db, 1, &filter, false, error) ||
            !scan_deferred(&u, db, error))
            goto done;
    }

    /* types without an RGU weight that have use in the window */
    if (rgu_cols) {
        for (size_t i = 0; i < u.nacc; i++) {
            int64_t w;
            const char *t = sa_rintern_str(&u.names, u.acc[i].k.t);
            if (!type_weight(&u, u.acc[i].k.t, &w) && acc_sum(&u, &u.acc[i], u.b[0], u.b[u.nb - 1]) > 0 &&
                !sa_strv_contains(&unweighted, t))
                sa_strv_add_sorted_unique(&unweighted, t);
        }
        for (size_t i = 0; warn && i < unweighted.n; i++)
            fprintf(warn, "slurm-report: GPU type %s has no RGU weight: its GPU-hours are not in RGU-years "
                          "(add it with --rgu-weights)\n", unweighted.v[i]);
    }

    /* columns */
#define COL(id, k, t, ty, d) (col_of[id] = (int)ncols, cols[ncols++] = (sa_col_t){k, t, ty, d})
    for (int i = 0; i < C_N; i++)
        col_of[i] = -1;
    COL(C_CLUSTER, "cluster", "Cluster", SA_COL_STR, 0);
    if (by & SA_BY_ACCOUNT)
        COL(C_ACCOUNT, "account", "Account", SA_COL_STR, 0);
    if (by & SA_BY_USER)
        COL(C_USER, "user", "User", SA_COL_STR, 0);
    if ((by & SA_BY_GPU_TYPE) || alloc)
        COL(C_TYPE, "gpu_type", "GPU type", SA_COL_STR, 0);
    COL(C_HOURS, "gpu_hours", "GPU-hours", SA_COL_NUM, 2);
    COL(C_YEARS, "gpu_years", "GPU-years", SA_COL_NUM, 4);
    if (rgu_cols) {
        COL(C_RGU, "rgu_years", "RGU-years", SA_COL_NUM, 4);
        COL(C_UNW, "gpu_hours_unweighted", "Unweighted GPU-h", SA_COL_NUM, 2);
    }
    if (alloc) {
        COL(C_AWARD, "award", "Award", SA_COL_NUM, 4);
        COL(C_AUNIT, "award_unit", "Unit", SA_COL_STR, 0);
        COL(C_ASTART, "award_start", "Award start", SA_COL_STR, 0);
        COL(C_AEND, "award_end", "Award end", SA_COL_STR, 0);
        COL(C_USEDW, "used_window", "Used (window)", SA_COL_NUM, 4);
        COL(C_USEDS, "used_since_start", "Used (award)", SA_COL_NUM, 4);
        COL(C_TARGET, "target_to_date", "Target", SA_COL_NUM, 4);
        COL(C_PCT, "percent_of_target", "% target", SA_COL_NUM, 1);
        COL(C_PROJ, "projected_at_end", "Projected", SA_COL_NUM, 4);
        COL(C_PROJPCT, "projected_percent_of_award", "% award (proj.)", SA_COL_NUM, 1);
        COL(C_ELAPSED, "elapsed_percent", "% elapsed", SA_COL_NUM, 1);
        COL(C_ASOF, "as_of", "As of", SA_COL_STR, 0);
        COL(C_STATUS, "status", "Status", SA_COL_STR, 0);
        COL(C_NOTE, "note", "Note", SA_COL_STR, 0);
    }
#undef COL
    sa_rtable_init(&table, cols, ncols);

    if (!make_groups(&u, alloc ? SA_BY_ACCOUNT : by, &order, &groups, &ngroups, error))
        goto done;
    panels = calloc(u.awards.n + u.nacc + 1, sizeof *panels);
    if (!panels) {
        oom(error);
        goto done;
    }

#define SETS(id, v) (col_of[id] >= 0 ? sa_rtable_str(&table, r, (size_t)col_of[id], v) : (void)0)
#define SETN(id, v) (col_of[id] >= 0 ? sa_rtable_num(&table, r, (size_t)col_of[id], v) : (void)0)
    if (alloc) {
        /* one row per award (in cluster order, then account, type, start), then accounts without an award */
        size_t *aord = malloc((u.awards.n + 1) * sizeof *aord), na = 0;
        if (!aord) {
            oom(error);
            goto done;
        }
        for (size_t i = 0; i < u.awards.n; i++) {
            if (u.award_in[i])
                aord[na++] = i;
        }
        for (size_t i = 1; i < na; i++) { /* insertion sort: few awards */
            for (size_t j = i; j > 0; j--) {
                const sa_award_t *x = &u.awards.v[aord[j - 1]], *y = &u.awards.v[aord[j]];
                size_t cx = cluster_index(&u, x->cluster), cy = cluster_index(&u, y->cluster);
                int c = cx != cy ? (cx < cy ? -1 : 1) : strcmp(x->account, y->account);
                if (!c)
                    c = strcmp(x->gpu_type ? x->gpu_type : "", y->gpu_type ? y->gpu_type : "");
                if (!c)
                    c = x->start < y->start ? -1 : x->start > y->start;
                if (c <= 0)
                    break;
                size_t t = aord[j];
                aord[j] = aord[j - 1];
                aord[j - 1] = t;
            }
        }
        for (size_t i = 0; i < na; i++) {
            const sa_award_t *a = &u.awards.v[aord[i]];
            award_fig_t f;
            sums_t w;
            size_t r = sa_rtable_add_row(&table);
            char buf[128];
            panel_t *p = &panels[npanels];
            if (r == SIZE_MAX) {
                free(aord);
                oom(error);
                goto done;
            }
            award_figures(&u, a, &f);
            w = award_sums(&u, a, o->start, o->end);
            SETS(C_CLUSTER, a->cluster);
            SETS(C_ACCOUNT, a->account);
            SETS(C_TYPE, a->gpu_type ? a->gpu_type : "*");
            SETN(C_HOURS, secs_hours(w.secs));
            SETN(C_YEARS, secs_hours(w.secs) / u.hpy);
            SETN(C_RGU, rgu_years(&u, &w));
            SETN(C_UNW, secs_hours(w.unweighted));
            SETN(C_AWARD, a->amount);
            SETS(C_AUNIT, sa_award_unit_name(a->unit));
            SETS(C_ASTART, sa_riso(a->start));
            SETS(C_AEND, sa_riso(a->end));
            SETN(C_USEDW, f.used_window);
            SETN(C_USEDS, f.used_since);
            SETN(C_TARGET, f.target);
            if (f.has_pct)
                SETN(C_PCT, f.pct);
            SETN(C_PROJ, f.projected);
            SETN(C_PROJPCT, f.projected_pct);
            SETN(C_ELAPSED, f.elapsed_pct);
            SETS(C_ASOF, sa_riso(f.to));
            SETS(C_STATUS, f.status);
            SETS(C_NOTE, a->note);
            /* its chart */
            p->title = sa_rprintf("%s / %s%s%s", a->cluster, a->account, a->gpu_type ? " / " : "",
                                        a->gpu_type ? a->gpu_type : "");
            snprintf(buf, sizeof buf, "%s", sa_riso(a->start));
            p->subtitle = sa_rprintf("award %g %s from %s to %s; used %.4g (%.1f%% of the target to date); status %s",
                                           a->amount, sa_award_unit_name(a->unit), buf, sa_riso(a->end), f.used_since,
                                           f.has_pct ? f.pct : 0.0, f.status);
            p->from = a->start;
            p->axis_to = a->end;
            p->data_to = f.to;
            p->target = a->amount;
            p->unit = a->unit == SA_AWARD_RGU_YEARS ? "RGU-years" : "GPU-years";
            npanels++;
            if (want_charts(o) && !panel_fill(&u, p, a, NULL, NULL, o->unit)) {
                free(aord);
                oom(error);
                goto done;
            }
        }
        /* accounts with use in the window and no award in it */
        for (size_t g = 0; g < ngroups; g++) {
            const char *cl = sa_rintern_str(&u.names, groups[g].k.c), *ac = sa_rintern_str(&u.names, groups[g].k.a);
            bool has = false;
            size_t r;
            for (size_t i = 0; i < na && !has; i++)
                has = strcmp(u.awards.v[aord[i]].cluster, cl) == 0 && strcmp(u.awards.v[aord[i]].account, ac) == 0;
            if (has)
                continue;
            if ((r = sa_rtable_add_row(&table)) == SIZE_MAX) {
                free(aord);
                oom(error);
                goto done;
            }
            SETS(C_CLUSTER, cl);
            SETS(C_ACCOUNT, ac);
            SETS(C_TYPE, "*");
            SETN(C_HOURS, secs_hours(groups[g].window.secs));
            SETN(C_YEARS, secs_hours(groups[g].window.secs) / u.hpy);
            SETN(C_RGU, rgu_years(&u, &groups[g].window));
            SETN(C_UNW, secs_hours(groups[g].window.unweighted));
            SETS(C_STATUS, "no award");
        }
        free(aord);
    } else {
        for (size_t g = 0; g < ngroups; g++) {
            size_t r = sa_rtable_add_row(&table);
            if (r == SIZE_MAX) {
                oom(error);
                goto done;
            }
            SETS(C_CLUSTER, sa_rintern_str(&u.names, groups[g].k.c));
            SETS(C_ACCOUNT, sa_rintern_str(&u.names, groups[g].k.a));
            SETS(C_USER, sa_rintern_str(&u.names, groups[g].k.u));
            SETS(C_TYPE, sa_rintern_str(&u.names, groups[g].k.t));
            SETN(C_HOURS, secs_hours(groups[g].window.secs));
            SETN(C_YEARS, secs_hours(groups[g].window.secs) / u.hpy);
            SETN(C_RGU, rgu_years(&u, &groups[g].window));
            SETN(C_UNW, secs_hours(groups[g].window.unweighted));
        }
    }
#undef SETS
#undef SETN

    /* charts without awards: one per cluster and account */
    if (!alloc && want_charts(o)) {
        size_t *ord2 = NULL, ng2 = 0;
        group_t *g2 = NULL;
        if (!make_groups(&u, SA_BY_ACCOUNT, &ord2, &g2, &ng2, error))
            goto done;
        for (size_t g = 0; g < ng2; g++) {
            panel_t *p = &panels[npanels++];
            p->title = sa_rprintf("%s / %s", sa_rintern_str(&u.names, g2[g].k.c), sa_rintern_str(&u.names, g2[g].k.a));
            p->subtitle = sa_rprintf("%.4g %s in the window (no award given)", in_unit(&u, o->unit, &g2[g].window),
                                           unit_title(o->unit));
            p->from = o->start;
            p->axis_to = o->end;
            p->data_to = o->end;
            p->target = -1;
            p->unit = unit_title(o->unit);
            if (!panel_fill(&u, p, NULL, &g2[g], ord2, o->unit)) {
                free(ord2);
                free(g2);
                oom(error);
                goto done;
            }
        }
        free(ord2);
        free(g2);
    }

    usage_preamble(&u, &preamble, &unweighted);
    switch (o->format) {
    case SA_FMT_SVG:
        svg_write(out, o->no_header ? NULL : &preamble, panels, npanels, true);
        ok = !ferror(out);
        if (!ok)
            sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
        break;
    case SA_FMT_HTML:
        sa_rhtml_begin(out, "slurm-report: GPU usage", &preamble);
        sa_rtable_write_html(&table, alloc ? "Use against the awards" : "GPU use in the window", out);
        svg_write(out, NULL, panels, npanels, false);
        sa_rhtml_end(out);
        ok = !ferror(out);
        if (!ok)
            sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
        break;
    default:
        extra = json_object();
        json_object_set_new(extra, "period", sa_rjson_period(o->start, o->end));
        if (u.hpy == floor(u.hpy))
            json_object_set_new(extra, "hours_per_gpu_year", json_integer((json_int_t)u.hpy));
        else
            json_object_set_new(extra, "hours_per_gpu_year", json_real(u.hpy));
        json_object_set_new(extra, "unit", json_string(unit_key(o->unit)));
        {
            json_t *cl = json_array();
            for (size_t i = 0; i < u.nclusters; i++) {
                json_t *c = json_pack("{s:s}", "name", u.clusters.v[i].name);
                json_object_set_new(c, "as_of", json_string(sa_riso(u.ci[i].as_of)));
                json_object_set_new(c, "in_archive", json_boolean(u.clusters.v[i].in_archive));
                json_array_append_new(cl, c);
            }
            json_object_set_new(extra, "clusters", cl);
        }
        json_object_set_new(extra, "header", sa_rjson_strv(&preamble));
        if (alloc)
            json_object_set_new(extra, "recent_days", json_real(u.awards.recent_days));
        if (rgu_cols)
            json_object_set_new(extra, "unweighted_gpu_types", sa_rjson_strv(&unweighted));
        ok = sa_rwrite_table_doc(o, "slurm-report: GPU usage", &preamble, &table, extra, out, error);
        break;
    }
done:
    json_decref(extra);
    panels_free(panels, npanels);
    free(order);
    free(groups);
    sa_rtable_clear(&table);
    sa_strv_clear(&preamble);
    sa_strv_clear(&unweighted);
    bson_destroy(&filter);
    usage_clear(&u);
    sa_rdb_close(db);
    return ok;
}
