/*
 * sa_rollup_reader.c - reading the usage rollups (sa_rollup_reader.h), each document as the
 * report's commit sees it (schema/rollup/sa_rollup.h, "Commits").
 */
#include "sa_rollup_reader.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_bson.h"
#include "sa_model.h"

#define ID_BATCH 400 /* _ids per $in query */

typedef struct {
    sa_rdb_t *db;
    const char *cluster;
    int64_t seq;            /* the commit read at */
    bool parts;             /* ... says every month's parts index is complete */
    sa_rollup_read_fn fn;
    void *ctx;
    sa_rollup_doc_t doc;
    size_t *docs;
    sa_strv_t older;        /* documents written since the commit: their version before is read next */
    bool with_prev;         /* this query returned whole documents */
} rctx_t;

/* Hands one version of a document to the report. */
static bool give(rctx_t *r, const bson_t *b, sa_error_t *error)
{
    if (!sa_rollup_doc_read(&r->doc, r->cluster, b, error))
        return false;
    if (r->doc.foreign) {
        sa_error_set(error, SA_ERR_INPUT, 0,
                     "rollup document %s: written by another version of slurm-ingest (record size differs): "
                     "run `slurm-ingest rollup --rebuild`", r->doc.id);
        return false;
    }
    if (r->docs)
        (*r->docs)++;
    return r->fn(&r->doc, r->ctx, error);
}

static bool on_doc(const bson_t *b, void *vctx, sa_error_t *error)
{
    rctx_t *r = vctx;
    bson_t prev;
    const char *id;

    switch (sa_rollup_version(b, r->seq, &prev)) {
    case SA_ROLLUP_VER_THIS: return give(r, b, error);
    case SA_ROLLUP_VER_PREV: return give(r, &prev, error);
    case SA_ROLLUP_VER_ABSENT: return true;
    case SA_ROLLUP_VER_NEWER: break;
    }
    if (r->with_prev) { /* written twice since the commit this report reads at */
        sa_error_set(error, SA_ERR_CHANGED, 0,
                     "the rollups of %s changed twice while being read (an ingest is writing): read again", r->cluster);
        return false;
    }
    if (!(id = sa_rollup_id_of(b)))
        return true;
    return sa_strv_push(&r->older, id) || sa_error_nomem(error);
}

/* Reads the documents ids[0..n), ID_BATCH per query; those written since the commit again, whole. */
static bool read_ids(rctx_t *r, char **ids, size_t n, sa_error_t *error)
{
    bson_t opts = BSON_INITIALIZER, proj;
    bool ok = true;

    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj); /* the version before only when it is needed */
    BSON_APPEND_INT32(&proj, SA_ROLLUP_PREV, 0);
    bson_append_document_end(&opts, &proj);
    for (size_t off = 0; ok && off < n; off += ID_BATCH) {
        size_t end = off + ID_BATCH < n ? off + ID_BATCH : n;
        ok = sa_rdb_each_id(r->db, SA_ROLLUP_COLL, ids + off, end - off, &opts, on_doc, r, error);
    }
    bson_destroy(&opts);
    if (ok && r->older.n) {
        r->with_prev = true;
        ok = sa_rdb_each_id(r->db, SA_ROLLUP_COLL, r->older.v, r->older.n, NULL, on_doc, r, error);
        r->with_prev = false;
        sa_strv_clear(&r->older);
    }
    return ok;
}

/* Reads the documents ids[0..n) of cluster at the report's commit. */
static bool read_cluster_ids(sa_rdb_t *db, const char *cluster, char **ids, size_t n, sa_rollup_read_fn fn, void *ctx,
                             size_t *docs, sa_error_t *error)
{
    rctx_t r;
    bool ok;

    memset(&r, 0, sizeof r);
    r.db = db;
    r.cluster = cluster;
    r.fn = fn;
    r.ctx = ctx;
    r.docs = docs;
    sa_rollup_doc_init(&r.doc);
    sa_strv_init(&r.older);
    ok = sa_rdb_rollup_pin(db, cluster, &r.seq, &r.parts, error);
    for (size_t off = 0; ok && off < n; off += ID_BATCH * 4) /* a few batches, then the older versions they need */
        ok = read_ids(&r, ids + off, off + ID_BATCH * 4 < n ? ID_BATCH * 4 : n - off, error);
    sa_rollup_doc_clear(&r.doc);
    sa_strv_clear(&r.older);
    return ok;
}

/* The parts index of a window's months, as the report's commit left it. */
typedef struct {
    bool all;               /* no index (an archive of 0.4 not indexed yet): every part */
    int64_t *months;
    sa_rollup_parts_t *p;   /* p[i]: months[i]'s (all zero when it has none: no document that month) */
    size_t n;
} masks_t;

static void masks_clear(masks_t *m)
{
    free(m->months);
    free(m->p);
    memset(m, 0, sizeof *m);
}

typedef struct {
    masks_t *m;
    int64_t seq;
    bool newer;
} mread_t;

static bool on_parts(const bson_t *b, void *vctx, sa_error_t *error)
{
    mread_t *x = vctx;
    bson_t prev;
    const char *id = sa_rollup_id_of(b);
    const char *month = id ? strrchr(id, ':') : NULL;
    (void)error;
    for (size_t i = 0; month && i < x->m->n; i++) {
        char want[32];
        time_t t = (time_t)x->m->months[i];
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(want, sizeof want, ":%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
        if (strcmp(month, want) != 0)
            continue;
        switch (sa_rollup_version(b, x->seq, &prev)) {
        case SA_ROLLUP_VER_THIS: sa_rollup_parts_read(&x->m->p[i], b); break;
        case SA_ROLLUP_VER_PREV: sa_rollup_parts_read(&x->m->p[i], &prev); break;
        case SA_ROLLUP_VER_ABSENT: break;
        case SA_ROLLUP_VER_NEWER: x->newer = true; break;
        }
    }
    return true;
}

/*
 * The parts index of the months [from, to) touches, at the report's commit (m->all when the
 * cluster has none yet). An index written twice since the commit makes the report read
 * again, as any document does.
 */
static bool masks_read(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, masks_t *m, sa_error_t *error)
{
    sa_strv_t ids;
    mread_t x = {m, 0, false};
    bool parts = false, ok;

    memset(m, 0, sizeof *m);
    sa_strv_init(&ids);
    ok = sa_rdb_rollup_pin(db, cluster, &x.seq, &parts, error);
    m->all = !parts;
    if (!ok || m->all || to <= from)
        return ok;
    for (int64_t mo = sa_rollup_month(from < 0 ? 0 : from); ok && mo < to && mo <= SA_ROLLUP_LAST_DAY;
         mo = sa_rollup_month(mo + 32 * SA_DAY)) {
        sa_rollup_key_t k = sa_rollup_key(cluster, SA_ROLLUP_K_PARTS, mo, 0);
        char *id = sa_rollup_key_id(&k);
        int64_t *mv = realloc(m->months, (m->n + 1) * sizeof *mv);
        sa_rollup_parts_t *pv = mv ? realloc(m->p, (m->n + 1) * sizeof *pv) : NULL;
        if (mv)
            m->months = mv;
        if (pv)
            m->p = pv;
        if (!id || !mv || !pv || !sa_strv_push(&ids, id)) {
            free(id);
            ok = sa_error_nomem(error);
            break;
        }
        free(id);
        memset(&m->p[m->n], 0, sizeof m->p[m->n]);
        m->months[m->n++] = mo;
    }
    if (ok && ids.n)
        ok = sa_rdb_each_id(db, SA_ROLLUP_COLL, ids.v, ids.n, NULL, on_parts, &x, error);
    if (ok && x.newer) {
        sa_error_set(error, SA_ERR_CHANGED, 0,
                     "the rollups of %s changed twice while being read (an ingest is writing): read again", cluster);
        ok = false;
    }
    sa_strv_clear(&ids);
    return ok;
}

/* The parts of cluster's documents of kind on day that may hold a document. */
static uint64_t mask_of(const masks_t *m, sa_rollup_kind_t kind, int64_t day)
{
    if (m->all)
        return UINT64_MAX;
    for (size_t i = 0; i < m->n; i++) {
        if (m->months[i] == sa_rollup_month(day))
            return sa_rollup_parts_of(&m->p[i], kind, day);
    }
    return 0;
}

/* The UTC days [from, to) touches, clamped to the days an _id can name: *d0 the first, the count returned. */
static size_t day_range(int64_t from, int64_t to, int64_t *d0)
{
    *d0 = 0;
    if (from < 0)
        from = 0;
    if (to > SA_ROLLUP_LAST_DAY + SA_DAY)
        to = SA_ROLLUP_LAST_DAY + SA_DAY;
    if (to <= from)
        return 0;
    *d0 = sa_rollup_day(from);
    return (size_t)((sa_rollup_day(to - 1) - *d0) / SA_DAY + 1);
}

bool sa_rollup_read(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, bool open,
                    sa_rollup_read_whole_fn whole, sa_rollup_read_fn fn, void *ctx, size_t *docs, sa_error_t *error)
{
    sa_strv_t whole_ids, part_ids;
    size_t ndays;
    int64_t d0;
    masks_t m;
    bool ok;

    sa_strv_init(&whole_ids);
    sa_strv_init(&part_ids);
    ndays = day_range(from, to, &d0);
    ok = masks_read(db, cluster, d0, d0 + (int64_t)ndays * SA_DAY, &m, error);
    for (size_t i = 0; ok && i < ndays; i++) {
        int64_t day = d0 + (int64_t)i * SA_DAY;
        bool rows = whole && whole(day, ctx); /* the day's rows documents, else its members */
        ok = sa_rollup_key_part_ids(rows ? &whole_ids : &part_ids, cluster,
                                    rows ? SA_ROLLUP_K_ROWS : SA_ROLLUP_K_MEMBERS, day,
                                    mask_of(&m, SA_ROLLUP_K_MEMBERS, day), error);
    }
    masks_clear(&m);
    ok = ok && (!open || sa_rollup_key_part_ids(&part_ids, cluster, SA_ROLLUP_K_OPEN, 0, UINT64_MAX, error));
    ok = ok && read_cluster_ids(db, cluster, whole_ids.v, whole_ids.n, fn, ctx, docs, error) &&
         read_cluster_ids(db, cluster, part_ids.v, part_ids.n, fn, ctx, docs, error);
    sa_strv_clear(&whole_ids);
    sa_strv_clear(&part_ids);
    return ok;
}

bool sa_rollup_read_ids(sa_rdb_t *db, const char *cluster, char **ids, size_t n, sa_rollup_read_fn fn, void *ctx,
                        size_t *docs, sa_error_t *error)
{
    return read_cluster_ids(db, cluster, ids, n, fn, ctx, docs, error);
}

/* Reads the live lists (live) and the lists of kind of the days [from, to) touches. */
static bool read_lists(sa_rdb_t *db, const char *cluster, bool live, sa_rollup_kind_t kind, int64_t from, int64_t to,
                       sa_rollup_read_fn fn, void *ctx, size_t *docs, sa_error_t *error)
{
    size_t ndays;
    int64_t d0;
    sa_strv_t ids;
    masks_t m;
    bool ok;

    sa_strv_init(&ids);
    ndays = day_range(from, to, &d0);
    ok = masks_read(db, cluster, d0, d0 + (int64_t)ndays * SA_DAY, &m, error) &&
         (!live || sa_rollup_key_part_ids(&ids, cluster, SA_ROLLUP_K_LIVE, 0, UINT64_MAX, error));
    for (size_t i = 0; ok && i < ndays; i++) {
        int64_t day = d0 + (int64_t)i * SA_DAY;
        ok = sa_rollup_key_part_ids(&ids, cluster, kind, day, mask_of(&m, kind, day), error);
    }
    masks_clear(&m);
    ok = ok && read_cluster_ids(db, cluster, ids.v, ids.n, fn, ctx, docs, error);
    sa_strv_clear(&ids);
    return ok;
}

bool sa_rollup_read_jobs(sa_rdb_t *db, const char *coll, sa_strv_t *ids, const bson_t *projection, sa_rdb_doc_cb fn,
                         void *ctx, sa_error_t *error)
{
    bson_t opts = BSON_INITIALIZER, sub;
    size_t n = 0;
    bool ok = true;

    if (ids->n > 1)
        qsort(ids->v, ids->n, sizeof *ids->v, sa_rollup_id_job_cmp);
    for (size_t i = 0; i < ids->n; i++) {
        if (n && strcmp(ids->v[n - 1], ids->v[i]) == 0)
            free(ids->v[i]);
        else
            ids->v[n++] = ids->v[i];
    }
    ids->n = n;
    /* job id order: the server's sort, or (the read cache on) the order named, which is the same */
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "job_id", 1);
    BSON_APPEND_INT32(&sub, "_id", 1);
    bson_append_document_end(&opts, &sub);
    if (projection)
        BSON_APPEND_DOCUMENT(&opts, "projection", projection);
    for (size_t off = 0; ok && off < n; off += ID_BATCH)
        ok = sa_rdb_each_id(db, coll, ids->v + off, (off + ID_BATCH < n ? off + ID_BATCH : n) - off, &opts, fn, ctx,
                            error);
    bson_destroy(&opts);
    return ok;
}

bool sa_rollup_read_lists(sa_rdb_t *db, const char *cluster, bool live, int64_t from, int64_t to, sa_rollup_read_fn fn,
                          void *ctx, size_t *docs, sa_error_t *error)
{
    return read_lists(db, cluster, live, SA_ROLLUP_K_ENDED, from, to, fn, ctx, docs, error);
}

bool sa_rollup_read_started(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, sa_rollup_read_fn fn,
                            void *ctx, size_t *docs, sa_error_t *error)
{
    return read_lists(db, cluster, false, SA_ROLLUP_K_STARTED, from, to, fn, ctx, docs, error);
}
