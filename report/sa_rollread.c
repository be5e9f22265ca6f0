/*
 * sa_rollread.c - reading the usage rollups (sa_rollread.h).
 */
#include "sa_rollread.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_model.h"

#define ID_BATCH 400 /* _ids per $in query */

typedef struct {
    sa_rollread_fn fn;
    void *ctx;
    sa_rolldoc_t doc;
    size_t *docs;
} rctx_t;

static bool on_doc(const bson_t *b, void *vctx, sa_error_t *error)
{
    rctx_t *r = vctx;
    if (!sa_rolldoc_read(&r->doc, b, error))
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

/* Reads the documents ids[0..n), ID_BATCH per query. */
static bool read_ids(sa_rdb_t *db, char **ids, size_t n, rctx_t *r, sa_error_t *error)
{
    bool ok = true;
    for (size_t off = 0; ok && off < n; off += ID_BATCH) {
        size_t end = off + ID_BATCH < n ? off + ID_BATCH : n;
        bson_t filter = BSON_INITIALIZER;
        sa_bson_append_in_strings(&filter, "_id", ids + off, end - off);
        ok = sa_rdb_each(db, SA_ROLLUP_COLL, &filter, NULL, on_doc, r, error);
        bson_destroy(&filter);
    }
    return ok;
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

bool sa_rollread(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, bool open, sa_rollread_whole_fn whole,
                 sa_rollread_fn fn, void *ctx, size_t *docs, sa_error_t *error)
{
    rctx_t r = {fn, ctx, {0}, docs};
    sa_strv_t whole_ids, part_ids;
    size_t ndays;
    int64_t d0;
    bool ok = true;

    sa_rolldoc_init(&r.doc);
    sa_strv_init(&whole_ids);
    sa_strv_init(&part_ids);
    ndays = day_range(from, to, &d0);
    for (size_t i = 0; ok && i < ndays; i++) {
        int64_t day = d0 + (int64_t)i * SA_DAY;
        bool rows = whole && whole(day, ctx); /* the day's rows documents, else its members */
        ok = sa_rollup_part_ids(rows ? &whole_ids : &part_ids, cluster, day, rows, error);
    }
    ok = ok && (!open || sa_rollup_part_ids(&part_ids, cluster, SA_UNSET, false, error));
    ok = ok && read_ids(db, whole_ids.v, whole_ids.n, &r, error) && read_ids(db, part_ids.v, part_ids.n, &r, error);
    sa_strv_clear(&whole_ids);
    sa_strv_clear(&part_ids);
    sa_rolldoc_clear(&r.doc);
    return ok;
}

bool sa_rollread_ids(sa_rdb_t *db, char **ids, size_t n, sa_rollread_fn fn, void *ctx, size_t *docs,
                     sa_error_t *error)
{
    rctx_t r = {fn, ctx, {0}, docs};
    bool ok;
    sa_rolldoc_init(&r.doc);
    ok = read_ids(db, ids, n, &r, error);
    sa_rolldoc_clear(&r.doc);
    return ok;
}

/* Reads the live shards (live) and the lists of kind (a day's start + kind) of the days [from, to) touches. */
static bool read_lists(sa_rdb_t *db, const char *cluster, bool live, int64_t kind, int64_t from, int64_t to,
                       sa_rollread_fn fn, void *ctx, size_t *docs, sa_error_t *error)
{
    size_t ndays;
    int64_t d0;
    sa_strv_t ids;
    bool ok = true;

    sa_strv_init(&ids);
    ndays = day_range(from, to, &d0);
    for (int k = 0; ok && live && k < SA_ROLLUP_LIVE_SHARDS; k++) {
        char *id = sa_rollup_id(cluster, SA_ROLLUP_LIVE + k, 0);
        ok = (id && sa_strv_push(&ids, id)) || sa_error_nomem(error);
        free(id);
    }
    for (size_t i = 0; ok && i < ndays; i++)
        ok = sa_rollup_part_ids(&ids, cluster, d0 + (int64_t)i * SA_DAY + kind, false, error);
    ok = ok && sa_rollread_ids(db, ids.v, ids.n, fn, ctx, docs, error);
    sa_strv_clear(&ids);
    return ok;
}

bool sa_rollread_jobs(sa_rdb_t *db, const char *coll, sa_strv_t *ids, const bson_t *projection, sa_rdb_doc_cb fn,
                      void *ctx, sa_error_t *error)
{
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
    for (size_t off = 0; ok && off < n; off += ID_BATCH) {
        size_t end = off + ID_BATCH < n ? off + ID_BATCH : n;
        bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
        sa_bson_append_in_strings(&filter, "_id", ids->v + off, end - off);
        BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
        BSON_APPEND_INT32(&sub, "job_id", 1);
        bson_append_document_end(&opts, &sub);
        if (projection)
            BSON_APPEND_DOCUMENT(&opts, "projection", projection);
        ok = sa_rdb_each(db, coll, &filter, &opts, fn, ctx, error);
        bson_destroy(&filter);
        bson_destroy(&opts);
    }
    return ok;
}

bool sa_rollread_lists(sa_rdb_t *db, const char *cluster, bool live, int64_t from, int64_t to, sa_rollread_fn fn,
                       void *ctx, size_t *docs, sa_error_t *error)
{
    return read_lists(db, cluster, live, SA_ROLLUP_ENDED, from, to, fn, ctx, docs, error);
}

bool sa_rollread_started(sa_rdb_t *db, const char *cluster, int64_t from, int64_t to, sa_rollread_fn fn, void *ctx,
                         size_t *docs, sa_error_t *error)
{
    return read_lists(db, cluster, false, SA_ROLLUP_STARTED, from, to, fn, ctx, docs, error);
}
