/*
 * tu_docstore.c - an in-memory document store for tests (tu_docstore.h).
 */
#include "tu_docstore.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *coll, *id;
    bson_t *doc;
} fdoc_t;

struct tu_docstore {
    fdoc_t *v; /* sorted by (coll, id) */
    size_t n, cap;
    size_t writes, fail_at;
    bool killed;
    void (*on_write)(void *ctx);
    void *ctx;
};

static int key_cmp(const char *coll, const char *id, const fdoc_t *d)
{
    int c = strcmp(coll, d->coll);
    return c ? c : strcmp(id, d->id);
}

/* The position of (coll, id), or where it goes. */
static size_t pos_of(const tu_docstore_t *m, const char *coll, const char *id, bool *found)
{
    size_t lo = 0, hi = m->n;
    *found = false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = key_cmp(coll, id, &m->v[mid]);
        if (!c) {
            *found = true;
            return mid;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void put_copy(tu_docstore_t *m, const char *coll, const char *id, const bson_t *doc)
{
    bool found;
    size_t i = pos_of(m, coll, id, &found);
    if (found) {
        bson_destroy(m->v[i].doc);
        m->v[i].doc = bson_copy(doc);
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
    }
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
    m->v[i].coll = strdup(coll);
    m->v[i].id = strdup(id);
    m->v[i].doc = bson_copy(doc);
    m->n++;
}

static void remove_at(tu_docstore_t *m, size_t i)
{
    free(m->v[i].coll);
    free(m->v[i].id);
    bson_destroy(m->v[i].doc);
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
}

/* A write about to be made: false (and an error) when the store is "killed" from this one on. */
static bool write_ok(tu_docstore_t *m, sa_error_t *error)
{
    if (m->killed || (m->fail_at && m->writes + 1 >= m->fail_at)) {
        m->killed = true;
        sa_error_set(error, SA_ERR_MONGO, 0, "killed (the test's write %zu)", m->writes + 1);
        return false;
    }
    if (m->on_write)
        m->on_write(m->ctx);
    m->writes++;
    return true;
}

static int64_t v_of(const bson_t *doc)
{
    bson_iter_t it;
    if (!doc)
        return SA_DOCSTORE_ABSENT;
    return bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it)
                                                                             : SA_DOCSTORE_UNVERSIONED;
}

/* Whether the stored document (NULL: none) is as expect says. */
static bool as_expected(const bson_t *stored, int64_t expect)
{
    if (expect == SA_DOCSTORE_ANY)
        return true;
    if (expect == SA_DOCSTORE_ABSENT)
        return !stored;
    return stored && v_of(stored) == expect;
}

static const char *id_of(const bson_t *doc)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) ? bson_iter_utf8(&it, NULL) : NULL;
}

const bson_t *tu_docstore_get(const tu_docstore_t *m, const char *coll, const char *id)
{
    bool found;
    size_t i = pos_of(m, coll, id, &found);
    return found ? m->v[i].doc : NULL;
}

static bool f_find(void *impl, const char *coll, char *const *ids, size_t n, const bson_t *opts, sa_docstore_fn fn,
                   void *ctx, sa_error_t *error)
{
    tu_docstore_t *m = impl;
    (void)opts;
    for (size_t i = 0; i < n; i++) {
        const bson_t *d = tu_docstore_get(m, coll, ids[i]);
        if (d && !fn(d, ctx, error))
            return false;
    }
    return true;
}

/* Whether doc has every top-level string equality of filter. */
static bool matches(const bson_t *doc, const bson_t *filter)
{
    bson_iter_t f, d;
    if (!filter || !bson_iter_init(&f, filter))
        return true;
    while (bson_iter_next(&f)) {
        if (!BSON_ITER_HOLDS_UTF8(&f))
            continue;
        if (!bson_iter_init_find(&d, doc, bson_iter_key(&f)) || !BSON_ITER_HOLDS_UTF8(&d) ||
            strcmp(bson_iter_utf8(&d, NULL), bson_iter_utf8(&f, NULL)) != 0)
            return false;
    }
    return true;
}

static bool f_scan(void *impl, const char *coll, const bson_t *filter, const bson_t *opts, sa_docstore_fn fn,
                   void *ctx, sa_error_t *error)
{
    tu_docstore_t *m = impl;
    char **ids = calloc(m->n + 1, sizeof *ids);
    size_t n = 0;
    bool ok = true;
    (void)opts;
    for (size_t i = 0; i < m->n; i++) { /* the matches first: fn may read the store */
        if (strcmp(m->v[i].coll, coll) == 0 && matches(m->v[i].doc, filter))
            ids[n++] = strdup(m->v[i].id);
    }
    for (size_t i = 0; ok && i < n; i++) {
        const bson_t *d = tu_docstore_get(m, coll, ids[i]);
        if (d) {
            bson_t *copy = bson_copy(d);
            ok = fn(copy, ctx, error);
            bson_destroy(copy);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    return ok;
}

static bool f_put(void *impl, const char *coll, const char *id, int64_t expect, const bson_t *doc, bool *conflict,
                  sa_error_t *error)
{
    tu_docstore_t *m = impl;
    *conflict = false;
    if (!write_ok(m, error))
        return false;
    if (!as_expected(tu_docstore_get(m, coll, id), expect)) {
        *conflict = true;
        return true;
    }
    put_copy(m, coll, id, doc);
    return true;
}

static bool f_del(void *impl, const char *coll, const char *id, int64_t expect, bool *conflict, sa_error_t *error)
{
    tu_docstore_t *m = impl;
    bool found;
    size_t i;
    *conflict = false;
    if (!write_ok(m, error))
        return false;
    i = pos_of(m, coll, id, &found);
    if (!found || !as_expected(m->v[i].doc, expect)) {
        *conflict = expect != SA_DOCSTORE_ANY;
        return true;
    }
    remove_at(m, i);
    return true;
}

static bool f_insert_many(void *impl, const char *coll, const bson_t *const *docs, size_t n, bool *dup,
                          sa_error_t *error)
{
    tu_docstore_t *m = impl;
    if (!write_ok(m, error))
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *id = id_of(docs[i]);
        if (!id)
            continue;
        if (tu_docstore_get(m, coll, id)) {
            if (dup)
                dup[i] = true;
            continue;
        }
        put_copy(m, coll, id, docs[i]);
    }
    return true;
}

static bool f_replace_many(void *impl, const char *coll, char *const *ids, const int64_t *expect,
                           const bson_t *const *docs, size_t n, size_t *matched, sa_error_t *error)
{
    tu_docstore_t *m = impl;
    *matched = 0;
    if (!write_ok(m, error))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!as_expected(tu_docstore_get(m, coll, ids[i]), expect[i]) || !tu_docstore_get(m, coll, ids[i]))
            continue;
        put_copy(m, coll, ids[i], docs[i]);
        (*matched)++;
    }
    return true;
}

static void f_destroy(void *impl)
{
    tu_docstore_t *m = impl;
    while (m->n)
        remove_at(m, m->n - 1);
    free(m->v);
    free(m);
}

static const sa_docstore_ops_t fake_ops = {f_find, f_scan, f_put, f_del, f_insert_many, f_replace_many, NULL,
                                           f_destroy};

sa_docstore_t *tu_docstore_new(tu_docstore_t **mem)
{
    tu_docstore_t *m = calloc(1, sizeof *m);
    *mem = m;
    return sa_docstore_new(&fake_ops, m);
}

size_t tu_docstore_writes(const tu_docstore_t *m)
{
    return m->writes;
}

void tu_docstore_fail_at(tu_docstore_t *m, size_t fail_at)
{
    m->fail_at = fail_at;
    m->killed = false;
}

bool tu_docstore_killed(const tu_docstore_t *m)
{
    return m->killed;
}

void tu_docstore_on_write(tu_docstore_t *m, void (*fn)(void *ctx), void *ctx)
{
    m->on_write = fn;
    m->ctx = ctx;
}

tu_docstore_t *tu_docstore_save(const tu_docstore_t *m)
{
    tu_docstore_t *s = calloc(1, sizeof *s);
    s->cap = s->n = m->n;
    s->v = calloc(m->n + 1, sizeof *s->v);
    for (size_t i = 0; i < m->n; i++) {
        s->v[i].coll = strdup(m->v[i].coll);
        s->v[i].id = strdup(m->v[i].id);
        s->v[i].doc = bson_copy(m->v[i].doc);
    }
    return s;
}

void tu_docstore_restore(tu_docstore_t *m, const tu_docstore_t *saved)
{
    while (m->n)
        remove_at(m, m->n - 1);
    for (size_t i = 0; i < saved->n; i++)
        put_copy(m, saved->v[i].coll, saved->v[i].id, saved->v[i].doc);
}

void tu_docstore_free_saved(tu_docstore_t *saved)
{
    if (saved)
        f_destroy(saved);
}

void tu_docstore_set(tu_docstore_t *m, const char *coll, const bson_t *doc)
{
    const char *id = id_of(doc);
    if (id)
        put_copy(m, coll, id, doc);
}

void tu_docstore_each(const tu_docstore_t *m, const char *coll, void (*fn)(const bson_t *doc, void *ctx), void *ctx)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].coll, coll) == 0)
            fn(m->v[i].doc, ctx);
    }
}
