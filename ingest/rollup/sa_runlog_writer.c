/*
 * sa_runlog_writer.c - the run log writer (sa_runlog_writer.h). Whole documents read and
 * written through the document store, conditional on their version (_v): valid on MongoDB
 * and on FerretDB 1.24, and testable without a server.
 */
#include "sa_runlog_writer.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_model.h"
#include "sa_runlog.h"
#include "sa_vec.h"

#define MAX_ROUNDS 20 /* conflicting writes of one hour before giving up */

/* The version of a stored hour (SA_DOCSTORE_ABSENT: none; SA_DOCSTORE_UNVERSIONED: one without _v). */
static int64_t hour_v(const bson_t *doc)
{
    bson_iter_t it;
    if (!doc)
        return SA_DOCSTORE_ABSENT;
    return bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it) && bson_iter_as_int64(&it) > 0
               ? bson_iter_as_int64(&it)
               : SA_DOCSTORE_UNVERSIONED;
}

/* Whether the entries of stored (its runs array) hold an entry of key. */
static bool has_entry(const bson_t *stored, const char *key)
{
    bson_iter_t it, child;
    if (!stored || !key || !bson_iter_init_find(&it, stored, "runs") || !BSON_ITER_HOLDS_ARRAY(&it) ||
        !bson_iter_recurse(&it, &child))
        return false;
    while (bson_iter_next(&child)) {
        const uint8_t *data;
        uint32_t len;
        bson_t e;
        int64_t started;
        const char *k;
        if (!BSON_ITER_HOLDS_DOCUMENT(&child))
            continue;
        bson_iter_document(&child, &len, &data);
        if (bson_init_static(&e, data, len) && (k = sa_runlog_entry_key(&e, &started)) && strcmp(k, key) == 0)
            return true;
    }
    return false;
}

/*
 * The hour document id of cluster: stored's entries (may be NULL), then those of add (an
 * array) it does not hold yet (one entry per run), version v + 1. *added: how many.
 */
static bool hour_make(const char *cluster, const char *id, const bson_t *stored, const bson_t *add, int64_t v,
                      bson_t *out, size_t *added, sa_error_t *error)
{
    bson_iter_t it, child;
    bson_t arr;
    uint32_t n = 0;

    *added = 0;
    BSON_APPEND_UTF8(out, "_id", id);
    BSON_APPEND_INT64(out, "_v", (v > 0 ? v : 0) + 1);
    BSON_APPEND_UTF8(out, "cluster", cluster);
    BSON_APPEND_UTF8(out, "hour", id + strlen(cluster) + 1);
    BSON_APPEND_ARRAY_BEGIN(out, "runs", &arr);
    if (stored && bson_iter_init_find(&it, stored, "runs") && BSON_ITER_HOLDS_ARRAY(&it) &&
        bson_iter_recurse(&it, &child)) {
        while (bson_iter_next(&child)) {
            char key[16];
            const char *kk;
            bson_uint32_to_string(n++, &kk, key, sizeof key);
            if (!bson_append_iter(&arr, kk, -1, &child))
                return sa_error_nomem(error);
        }
    }
    if (bson_iter_init(&child, add)) {
        while (bson_iter_next(&child)) {
            const uint8_t *data;
            uint32_t len;
            bson_t e;
            int64_t started;
            char key[16];
            const char *kk;
            if (!BSON_ITER_HOLDS_DOCUMENT(&child))
                continue;
            bson_iter_document(&child, &len, &data);
            if (!bson_init_static(&e, data, len) || has_entry(stored, sa_runlog_entry_key(&e, &started)))
                continue;
            bson_uint32_to_string(n++, &kk, key, sizeof key);
            if (!bson_append_document(&arr, kk, -1, &e))
                return sa_error_nomem(error);
            (*added)++;
        }
    }
    return bson_append_array_end(out, &arr) || sa_error_nomem(error);
}

/* Appends the entries add (an array) to hour id of cluster, read and written whole (retried on a conflict). */
static bool push_hour(sa_docstore_t *store, const char *cluster, const char *id, const bson_t *add, sa_error_t *error)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        bson_t *stored = NULL, out = BSON_INITIALIZER;
        bool conflict = false, ok;
        size_t added = 0;
        ok = sa_docstore_get(store, SA_RUNLOG_COLL, id, &stored, error) &&
             hour_make(cluster, id, stored, add, hour_v(stored), &out, &added, error) &&
             (!added || sa_docstore_put(store, SA_RUNLOG_COLL, id, hour_v(stored), &out, &conflict, error));
        bson_destroy(&out);
        if (stored)
            bson_destroy(stored);
        if (!ok)
            return false;
        if (!conflict)
            return true;
    }
    sa_error_set(error, SA_ERR_MONGO, 0, "the run log of %s (%s) kept changing while being written", cluster, id);
    return false;
}

bool sa_runlog_push(sa_docstore_t *store, const char *cluster, const bson_t *run, int64_t *started, sa_error_t *error)
{
    bson_t entry = BSON_INITIALIZER, add = BSON_INITIALIZER;
    char *id = NULL;
    bool ok = sa_runlog_entry(run, &entry);

    *started = SA_UNSET;
    if (ok)
        sa_runlog_entry_key(&entry, started);
    if (!ok || *started == SA_UNSET) {
        sa_error_set(error, SA_ERR_INPUT, 0, "an ingest run without _id or started_at has no hour in the run log");
        ok = false;
    } else if (!(id = sa_runlog_id(cluster, *started))) {
        ok = sa_error_nomem(error);
    }
    ok = ok && (BSON_APPEND_DOCUMENT(&add, "0", &entry) || sa_error_nomem(error)) &&
         push_hour(store, cluster, id, &add, error);
    free(id);
    bson_destroy(&entry);
    bson_destroy(&add);
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

/* The hour of d with the id of key, or NULL (no bsearch of an empty, NULL array: undefined behaviour). */
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
    BSON_APPEND_UTF8(d->doc, "hour", id + strlen(cluster) + 1);
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

    if (sa_runlog_entry(run, &entry))
        sa_runlog_entry_key(&entry, &started);
    if (started != SA_UNSET && !(id = sa_runlog_id(cluster, started)))
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

typedef struct {
    days_t *want;
    const char *cluster;
    bson_t arr;
    uint32_t idx;
    int64_t *first, *last;
} compute_t;

static bool on_run(const bson_t *doc, void *ctx, sa_error_t *error)
{
    compute_t *x = ctx;
    return add_run(x->want, x->cluster, doc, &x->arr, &x->idx, x->first, x->last, error);
}

/* The hours the cluster's ingest_runs documents make, sorted by _id (= by hour). */
static bool compute_days(sa_docstore_t *store, const char *cluster, days_t *want, int64_t *first, int64_t *last,
                         sa_error_t *error)
{
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bson_t *opts = BCON_NEW("sort", "{", "started_at", BCON_INT32(1), "_id", BCON_INT32(1), "}", "projection", "{",
                            "started_at", BCON_INT32(1), "finished_at", BCON_INT32(1), "ok", BCON_INT32(1), "error",
                            BCON_INT32(1), "phases_ms", BCON_INT32(1), "counts", BCON_INT32(1), "}");
    compute_t x = {want, cluster, BSON_INITIALIZER, 0, first, last};
    bool ok;

    *first = *last = SA_UNSET;
    ok = sa_docstore_scan(store, "ingest_runs", filter, opts, on_run, &x, error);
    if (ok && want->n)
        bson_append_array_end(want->v[want->n - 1].doc, &x.arr);
    bson_destroy(filter);
    bson_destroy(opts);
    return ok;
}

static bool on_stored_day(const bson_t *doc, void *ctx, sa_error_t *error)
{
    days_t *have = ctx;
    bson_iter_t it;
    if (!bson_iter_init_find(&it, doc, "_id") || !BSON_ITER_HOLDS_UTF8(&it))
        return true;
    if (!SA_VEC_GROW(have->v, have->cap, have->n, 1, 64) || !(have->v[have->n].id = strdup(bson_iter_utf8(&it, NULL))))
        return sa_error_nomem(error);
    if (!(have->v[have->n].doc = bson_copy(doc))) {
        free(have->v[have->n].id);
        return sa_error_nomem(error);
    }
    have->n++;
    return true;
}

/* The cluster's stored hours (and days of version 1), sorted by _id. */
static bool read_days(sa_docstore_t *store, const char *cluster, days_t *have, sa_error_t *error)
{
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bool ok = sa_docstore_scan(store, SA_RUNLOG_COLL, filter, NULL, on_stored_day, have, error);
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
            v[n].key = sa_runlog_entry_key(&e, &v[n].started);
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

/* Writes (or removes) the document id whole, whatever is stored. */
static bool write_day(sa_docstore_t *store, const char *id, const bson_t *doc, bool del, sa_error_t *error)
{
    bool conflict = false;
    return del ? sa_docstore_del(store, SA_RUNLOG_COLL, id, SA_DOCSTORE_ANY, &conflict, error)
               : sa_docstore_put(store, SA_RUNLOG_COLL, id, SA_DOCSTORE_ANY, doc, &conflict, error);
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
            if (bson_init_static(&e, data, len) && (key = sa_runlog_entry_key(&e, &started)))
                ok = sa_strv_push(keys, key) || sa_error_nomem(error);
        }
    }
    return ok;
}

/*
 * Adds to the stored hour h (NULL: none) the entries of want it lacks, as the writer adds
 * one: what a writer running meanwhile added stays (the one-time build of an archive that
 * two writers may share).
 */
static bool add_missing(sa_docstore_t *store, const char *cluster, const day_t *want, const day_t *h,
                        sa_error_t *error)
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
            if (!bson_init_static(&e, data, len) || !(key = sa_runlog_entry_key(&e, &started)) ||
                sa_strv_contains(&keys, key))
                continue;
            bson_uint32_to_string(n++, &k, idx, sizeof idx);
            ok = bson_append_document(&add, k, -1, &e) || sa_error_nomem(error);
        }
    }
    ok = ok && (!n || push_hour(store, cluster, want->id, &add, error));
    bson_destroy(&add);
    sa_strv_clear(&keys);
    return ok;
}

/*
 * Compares want with have: rebuild rewrites the days that differ and deletes the extra
 * ones; add only adds the entries a stored day lacks.
 */
static bool compare_days(sa_docstore_t *store, const char *cluster, const days_t *want, const days_t *have,
                         sa_runlog_mode_t mode, size_t *differ, FILE *out, sa_error_t *error)
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
        if (mode == SA_RUNLOG_REBUILD)
            ok = write_day(store, want->v[i].id, want->v[i].doc, false, error);
        else if (mode == SA_RUNLOG_ADD)
            ok = add_missing(store, cluster, &want->v[i], h, error);
    }
    for (size_t i = 0; ok && i < have->n; i++) {
        bool v1 = sa_runlog_id_is_day(cluster, have->v[i].id);
        if (day_find(want, &have->v[i]))
            continue;
        if (!v1 || mode != SA_RUNLOG_ADD) { /* version 1's days go quietly when the hours are built */
            (*differ)++;
            if (out)
                fprintf(out, "ingest_days %s: %s\n", have->v[i].id,
                        v1 ? "a day of version 1 (the log is by hour now)"
                           : "stored, but no ingest run of ingest_runs started that hour");
        }
        if (mode == SA_RUNLOG_REBUILD || (mode == SA_RUNLOG_ADD && v1))
            ok = write_day(store, have->v[i].id, NULL, true, error);
    }
    return ok;
}

bool sa_runlog_rebuild(sa_docstore_t *store, const char *cluster, sa_runlog_mode_t mode, size_t *docs,
                       size_t *differ, int64_t *first, int64_t *last, FILE *out, sa_error_t *error)
{
    days_t want = {0}, have = {0};
    bool ok;

    *docs = *differ = 0;
    /* the hours first: an entry is added after its run is inserted, so every entry read has its run read */
    ok = read_days(store, cluster, &have, error) && compute_days(store, cluster, &want, first, last, error) &&
         compare_days(store, cluster, &want, &have, mode, differ, out, error);
    *docs = want.n;
    days_clear(&want);
    days_clear(&have);
    return ok;
}
