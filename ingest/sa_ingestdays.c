/*
 * sa_ingestdays.c - the ingest_days writer (see sa_ingestdays.h). Plain finds,
 * update_one with $set/$push and upsert, replace_one, delete_one: valid on MongoDB
 * and on FerretDB 1.24 ($push without $slice).
 */
#include "sa_ingestdays.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_ingestday.h"
#include "sa_model.h"
#include "sa_mongo.h"
#include "sa_vec.h"

/*
 * {$set: {cluster, day}, $push: {runs: entry}} or, with each, {runs: {$each: [...]}} upserted
 * on day id. Two upserts of a new day at once: one fails with a duplicate key, and is
 * tried again (it then finds the document).
 */
static bool push_day(mongoc_collection_t *days, const char *hosts, const char *cluster, const char *id,
                     const bson_t *value, bool each, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, upd = BSON_INITIALIZER, opts = BSON_INITIALIZER, part, sub;
    bson_error_t berr;
    bool ok = false;

    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &part);
    BSON_APPEND_UTF8(&part, "cluster", cluster);
    BSON_APPEND_UTF8(&part, "day", id + strlen(cluster) + 1);
    bson_append_document_end(&upd, &part);
    BSON_APPEND_DOCUMENT_BEGIN(&upd, "$push", &part);
    if (each) {
        BSON_APPEND_DOCUMENT_BEGIN(&part, "runs", &sub);
        BSON_APPEND_ARRAY(&sub, "$each", value);
        bson_append_document_end(&part, &sub);
    } else {
        BSON_APPEND_DOCUMENT(&part, "runs", value);
    }
    bson_append_document_end(&upd, &part);
    BSON_APPEND_BOOL(&opts, "upsert", true);
    for (int attempt = 0; !ok && attempt < 2; attempt++) {
        ok = mongoc_collection_update_one(days, &filter, &upd, &opts, NULL, &berr);
        if (!ok && berr.code != 11000)
            break;
    }
    if (!ok)
        sa_mongo_error(error, hosts, "writing ingest_days", &berr);
    bson_destroy(&filter);
    bson_destroy(&upd);
    bson_destroy(&opts);
    return ok;
}

bool sa_ingestdays_push(mongoc_collection_t *days, const char *hosts, const char *cluster, const bson_t *run,
                        int64_t *started, sa_error_t *error)
{
    bson_t entry = BSON_INITIALIZER;
    char *id = NULL;
    bool ok = sa_ingestday_entry(run, &entry);

    *started = SA_UNSET;
    if (ok)
        sa_ingestday_entry_key(&entry, started);
    if (!ok || *started == SA_UNSET) {
        sa_error_set(error, SA_ERR_INPUT, 0, "an ingest run without _id or started_at has no day in ingest_days");
        ok = false;
    } else if (!(id = sa_ingestday_id(cluster, *started))) {
        ok = sa_error_nomem(error);
    }
    ok = ok && push_day(days, hosts, cluster, id, &entry, false, error);
    free(id);
    bson_destroy(&entry);
    return ok;
}

/* ---- rebuild and check ----------------------------------------------------------------- */

typedef struct {
    char *id;
    bson_t *doc; /* the whole day document */
} day_t;

typedef struct {
    day_t *v;
    size_t n, cap;
} days_t;

static void days_clear(days_t *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].id);
        bson_destroy(d->v[i].doc);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

static int day_cmp(const void *a, const void *b)
{
    return strcmp(((const day_t *)a)->id, ((const day_t *)b)->id);
}

/* The day of d with the id of key, or NULL (no bsearch of an empty, NULL array: undefined behaviour). */
static day_t *day_find(const days_t *d, const day_t *key)
{
    return d->n ? bsearch(key, d->v, d->n, sizeof *d->v, day_cmp) : NULL;
}

/* Starts the document of day id in want, its runs array open in *arr. */
static bool day_open(days_t *want, const char *cluster, const char *id, bson_t *arr, sa_error_t *error)
{
    day_t *d;

    if (!SA_VEC_GROW(want->v, want->cap, want->n, 1, 64))
        return sa_error_nomem(error);
    d = &want->v[want->n];
    d->id = strdup(id);
    d->doc = bson_new();
    if (!d->id) {
        bson_destroy(d->doc);
        free(d->id);
        return sa_error_nomem(error);
    }
    want->n++;
    BSON_APPEND_UTF8(d->doc, "_id", id);
    BSON_APPEND_UTF8(d->doc, "cluster", cluster);
    BSON_APPEND_UTF8(d->doc, "day", id + strlen(cluster) + 1);
    BSON_APPEND_ARRAY_BEGIN(d->doc, "runs", arr);
    return true;
}

/* Appends the entry of one ingest_runs document to the days being built (runs come by started_at). */
static bool add_run(days_t *want, const char *cluster, const bson_t *run, bson_t *arr, uint32_t *idx, int64_t *first,
                    int64_t *last, sa_error_t *error)
{
    bson_t entry = BSON_INITIALIZER;
    int64_t started = SA_UNSET;
    char *id = NULL, key[16];
    const char *k;
    bool ok = true;

    if (sa_ingestday_entry(run, &entry))
        sa_ingestday_entry_key(&entry, &started);
    if (started != SA_UNSET && !(id = sa_ingestday_id(cluster, started)))
        ok = sa_error_nomem(error);
    if (ok && id) { /* a run without _id or started_at has no day */
        if (!want->n || strcmp(want->v[want->n - 1].id, id) != 0) {
            if (want->n)
                bson_append_array_end(want->v[want->n - 1].doc, arr);
            ok = day_open(want, cluster, id, arr, error);
            *idx = 0;
        }
        bson_uint32_to_string((*idx)++, &k, key, sizeof key);
        ok = ok && bson_append_document(arr, k, -1, &entry);
        if (*first == SA_UNSET || started < *first)
            *first = started;
        if (*last == SA_UNSET || started > *last)
            *last = started;
    }
    free(id);
    bson_destroy(&entry);
    return ok;
}

/* The days the cluster's ingest_runs documents make, sorted by _id (= by day). */
static bool compute_days(mongoc_database_t *db, const char *hosts, const char *cluster, days_t *want, int64_t *first,
                         int64_t *last, sa_error_t *error)
{
    mongoc_collection_t *runs = mongoc_database_get_collection(db, "ingest_runs");
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bson_t *opts = BCON_NEW("sort", "{", "started_at", BCON_INT32(1), "_id", BCON_INT32(1), "}", "projection", "{",
                            "started_at", BCON_INT32(1), "finished_at", BCON_INT32(1), "ok", BCON_INT32(1), "error",
                            BCON_INT32(1), "phases_ms", BCON_INT32(1), "counts", BCON_INT32(1), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(runs, filter, opts, NULL);
    const bson_t *doc;
    bson_error_t berr;
    bson_t arr;
    uint32_t idx = 0;
    bool ok = true;

    *first = *last = SA_UNSET;
    while (ok && mongoc_cursor_next(cur, &doc))
        ok = add_run(want, cluster, doc, &arr, &idx, first, last, error);
    if (ok && want->n)
        bson_append_array_end(want->v[want->n - 1].doc, &arr);
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, hosts, "reading ingest_runs", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    bson_destroy(opts);
    mongoc_collection_destroy(runs);
    return ok;
}

/* The cluster's stored days, sorted by _id. */
static bool read_days(mongoc_collection_t *days, const char *hosts, const char *cluster, days_t *have,
                      sa_error_t *error)
{
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(days, filter, NULL, NULL);
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    while (ok && mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it;
        if (!bson_iter_init_find(&it, doc, "_id") || !BSON_ITER_HOLDS_UTF8(&it))
            continue;
        if (!SA_VEC_GROW(have->v, have->cap, have->n, 1, 64) || !(have->v[have->n].id = strdup(bson_iter_utf8(&it, NULL)))) {
            ok = sa_error_nomem(error);
            break;
        }
        have->v[have->n++].doc = bson_copy(doc);
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, hosts, "reading ingest_days", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    if (have->n)
        qsort(have->v, have->n, sizeof *have->v, day_cmp);
    return ok;
}

typedef struct {
    int64_t started;
    const char *key;
    json_t *j;
} ent_t;

static int ent_cmp(const void *a, const void *b)
{
    const ent_t *x = a, *y = b;
    if (x->started != y->started)
        return x->started < y->started ? -1 : 1;
    return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

/* A day's entries as JSON, by started_at and key, one per key: what a reader makes of them. */
static json_t *day_runs(const bson_t *day, sa_error_t *error)
{
    bson_iter_t it, child;
    ent_t *v = NULL;
    size_t n = 0, cap = 0;
    json_t *out = json_array();
    bool ok = out != NULL;

    if (ok && bson_iter_init_find(&it, day, "runs") && BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &child)) {
        while (ok && bson_iter_next(&child)) {
            const uint8_t *data;
            uint32_t len;
            bson_t e;
            if (!BSON_ITER_HOLDS_DOCUMENT(&child))
                continue;
            bson_iter_document(&child, &len, &data);
            if (!bson_init_static(&e, data, len) || !SA_VEC_GROW(v, cap, n, 1, 16)) {
                ok = sa_error_nomem(error);
                break;
            }
            v[n].key = sa_ingestday_entry_key(&e, &v[n].started);
            ok = (v[n].j = sa_bson_to_json(&e, error)) != NULL;
            n += ok;
        }
    }
    if (n)
        qsort(v, n, sizeof *v, ent_cmp);
    for (size_t i = 0; ok && i < n; i++) {
        if (i && v[i].key && v[i - 1].key && strcmp(v[i].key, v[i - 1].key) == 0)
            continue; /* a $push retried */
        ok = json_array_append(out, v[i].j) == 0 || sa_error_nomem(error);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(v[i].j);
    free(v);
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Whether two day documents hold the same runs (NULL with *error on a failure). */
static bool days_equal(const bson_t *a, const bson_t *b, bool *equal, sa_error_t *error)
{
    json_t *x = day_runs(a, error), *y = x ? day_runs(b, error) : NULL;
    bool ok = x && y;

    *equal = ok && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return ok;
}

static bool write_day(mongoc_collection_t *days, const char *hosts, const char *id, const bson_t *doc, bool del,
                      sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok;

    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_BOOL(&opts, "upsert", true);
    ok = del ? mongoc_collection_delete_one(days, &filter, NULL, NULL, &berr)
             : mongoc_collection_replace_one(days, &filter, doc, &opts, NULL, &berr);
    if (!ok)
        sa_mongo_error(error, hosts, "writing ingest_days", &berr);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

/* The keys of a day's entries. */
static bool day_keys(const bson_t *day, sa_strv_t *keys, sa_error_t *error)
{
    bson_iter_t it, child;
    bool ok = true;

    if (day && bson_iter_init_find(&it, day, "runs") && BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &child)) {
        while (ok && bson_iter_next(&child)) {
            const uint8_t *data;
            uint32_t len;
            int64_t started;
            const char *key;
            bson_t e;
            if (!BSON_ITER_HOLDS_DOCUMENT(&child))
                continue;
            bson_iter_document(&child, &len, &data);
            if (bson_init_static(&e, data, len) && (key = sa_ingestday_entry_key(&e, &started)))
                ok = sa_strv_push(keys, key) || sa_error_nomem(error);
        }
    }
    return ok;
}

/*
 * Adds to the stored day h (NULL: none) the entries of want it lacks, in one $push $each:
 * what a writer running meanwhile pushed stays (the one-time build of an archive that
 * two writers may share).
 */
static bool add_missing(mongoc_collection_t *days, const char *hosts, const char *cluster, const day_t *want,
                        const day_t *h, sa_error_t *error)
{
    bson_iter_t it, child;
    bson_t add = BSON_INITIALIZER;
    sa_strv_t keys;
    uint32_t n = 0;
    bool ok;

    sa_strv_init(&keys);
    ok = day_keys(h ? h->doc : NULL, &keys, error);
    if (ok && bson_iter_init_find(&it, want->doc, "runs") && bson_iter_recurse(&it, &child)) {
        while (ok && bson_iter_next(&child)) {
            const uint8_t *data;
            uint32_t len;
            int64_t started;
            const char *key, *k;
            char idx[16];
            bson_t e;
            bson_iter_document(&child, &len, &data);
            if (!bson_init_static(&e, data, len) || !(key = sa_ingestday_entry_key(&e, &started)) ||
                sa_strv_contains(&keys, key))
                continue;
            bson_uint32_to_string(n++, &k, idx, sizeof idx);
            ok = bson_append_document(&add, k, -1, &e) || sa_error_nomem(error);
        }
    }
    ok = ok && (!n || push_day(days, hosts, cluster, want->id, &add, true, error));
    bson_destroy(&add);
    sa_strv_clear(&keys);
    return ok;
}

/*
 * Compares want with have: rebuild rewrites the days that differ and deletes the extra
 * ones; add only adds the entries a stored day lacks.
 */
static bool compare_days(mongoc_collection_t *days, const char *hosts, const char *cluster, const days_t *want,
                         const days_t *have, sa_ingestdays_mode_t mode, size_t *differ, FILE *out, sa_error_t *error)
{
    bool ok = true;

    for (size_t i = 0; ok && i < want->n; i++) {
        day_t *h = day_find(have, &want->v[i]);
        bool equal = false;
        ok = !h || days_equal(want->v[i].doc, h->doc, &equal, error);
        if (!ok || equal)
            continue;
        (*differ)++;
        if (out)
            fprintf(out, "ingest_days %s: %s\n", want->v[i].id, h ? "differs from ingest_runs" : "missing");
        if (mode == SA_INGESTDAYS_REBUILD)
            ok = write_day(days, hosts, want->v[i].id, want->v[i].doc, false, error);
        else if (mode == SA_INGESTDAYS_ADD)
            ok = add_missing(days, hosts, cluster, &want->v[i], h, error);
    }
    for (size_t i = 0; ok && i < have->n; i++) {
        if (day_find(want, &have->v[i]))
            continue;
        (*differ)++;
        if (out)
            fprintf(out, "ingest_days %s: stored, but no ingest run of ingest_runs started that day\n", have->v[i].id);
        if (mode == SA_INGESTDAYS_REBUILD)
            ok = write_day(days, hosts, have->v[i].id, NULL, true, error);
    }
    return ok;
}

bool sa_ingestdays_rebuild(mongoc_database_t *db, const char *hosts, const char *cluster, sa_ingestdays_mode_t mode,
                           size_t *docs, size_t *differ, int64_t *first, int64_t *last, FILE *out, sa_error_t *error)
{
    mongoc_collection_t *days = mongoc_database_get_collection(db, SA_INGEST_DAYS_COLL);
    days_t want = {0}, have = {0};
    bool ok;

    *docs = *differ = 0;
    /* the days first: an entry is pushed after its run is inserted, so every entry read has its run read */
    ok = read_days(days, hosts, cluster, &have, error) && compute_days(db, hosts, cluster, &want, first, last, error) &&
         compare_days(days, hosts, cluster, &want, &have, mode, differ, out, error);
    *docs = want.n;
    days_clear(&want);
    days_clear(&have);
    mongoc_collection_destroy(days);
    return ok;
}
