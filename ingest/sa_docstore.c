/*
 * sa_docstore.c - documents by _id (sa_docstore.h), and its MongoDB store.
 */
#include "sa_docstore.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_fault.h"
#include "sa_mongo.h"

struct sa_docstore {
    const sa_docstore_ops_t *ops;
    void *impl;
};

sa_docstore_t *sa_docstore_new(const sa_docstore_ops_t *ops, void *impl)
{
    sa_docstore_t *s = calloc(1, sizeof *s);
    if (!s) {
        if (ops->destroy)
            ops->destroy(impl);
        return NULL;
    }
    s->ops = ops;
    s->impl = impl;
    return s;
}

void sa_docstore_free(sa_docstore_t *s)
{
    if (!s)
        return;
    if (s->ops->destroy)
        s->ops->destroy(s->impl);
    free(s);
}

void sa_docstore_write_point(void)
{
    SA_FAULT_POINT("write");
}

bool sa_docstore_find(sa_docstore_t *s, const char *coll, char *const *ids, size_t n, size_t batch,
                      const bson_t *opts, sa_docstore_fn fn, void *ctx, sa_error_t *error)
{
    if (!batch)
        batch = 400;
    for (size_t off = 0; off < n; off += batch) {
        if (!s->ops->find(s->impl, coll, ids + off, off + batch < n ? batch : n - off, opts, fn, ctx, error))
            return false;
    }
    return true;
}

static bool copy_one(const bson_t *doc, void *ctx, sa_error_t *error)
{
    bson_t **out = ctx;
    if (*out)
        bson_destroy(*out);
    return (*out = bson_copy(doc)) != NULL || sa_error_nomem(error);
}

bool sa_docstore_get(sa_docstore_t *s, const char *coll, const char *id, bson_t **doc, sa_error_t *error)
{
    char *ids[1] = {(char *)id};
    *doc = NULL;
    if (s->ops->find(s->impl, coll, ids, 1, NULL, copy_one, doc, error))
        return true;
    if (*doc)
        bson_destroy(*doc);
    *doc = NULL;
    return false;
}

bool sa_docstore_scan(sa_docstore_t *s, const char *coll, const bson_t *filter, const bson_t *opts,
                      sa_docstore_fn fn, void *ctx, sa_error_t *error)
{
    return s->ops->scan(s->impl, coll, filter, opts, fn, ctx, error);
}

bool sa_docstore_put(sa_docstore_t *s, const char *coll, const char *id, int64_t expect, const bson_t *doc,
                     bool *conflict, sa_error_t *error)
{
    sa_docstore_write_point();
    return s->ops->put(s->impl, coll, id, expect, doc, conflict, error);
}

bool sa_docstore_del(sa_docstore_t *s, const char *coll, const char *id, int64_t expect, bool *conflict,
                     sa_error_t *error)
{
    sa_docstore_write_point();
    return s->ops->del(s->impl, coll, id, expect, conflict, error);
}

bool sa_docstore_insert_many(sa_docstore_t *s, const char *coll, const bson_t *const *docs, size_t n, bool *dup,
                             sa_error_t *error)
{
    for (size_t off = 0; off < n; off += SA_DOCSTORE_INSERT_CHUNK) {
        size_t k = off + SA_DOCSTORE_INSERT_CHUNK < n ? SA_DOCSTORE_INSERT_CHUNK : n - off;
        sa_docstore_write_point();
        if (!s->ops->insert_many(s->impl, coll, docs + off, k, dup ? dup + off : NULL, error))
            return false;
    }
    return true;
}

bool sa_docstore_replace_many(sa_docstore_t *s, const char *coll, char *const *ids, const int64_t *expect,
                              const bson_t *const *docs, size_t n, size_t *matched, sa_error_t *error)
{
    *matched = 0;
    if (!n)
        return true;
    sa_docstore_write_point();
    return s->ops->replace_many(s->impl, coll, ids, expect, docs, n, matched, error);
}

bool sa_docstore_update_many(sa_docstore_t *s, const char *coll, const bson_t *const *filters,
                             const bson_t *const *updates, size_t n, size_t *matched, sa_error_t *error)
{
    *matched = 0;
    if (!n)
        return true;
    sa_docstore_write_point();
    if (!s->ops->update_many) {
        sa_error_set(error, SA_ERR_MONGO, 0, "this document store cannot update %s in place", coll);
        return false;
    }
    return s->ops->update_many(s->impl, coll, filters, updates, n, matched, error);
}

/* ---- MongoDB ------------------------------------------------------------------------------------ */

typedef struct {
    mongoc_database_t *db;
    char *hosts;
} mstore_t;

/* Sets *error from a driver error of verb ("reading", "writing") on coll. */
static void m_error(const mstore_t *m, const char *verb, const char *coll, const bson_error_t *berr, sa_error_t *error)
{
    char what[96];
    snprintf(what, sizeof what, "%s %s", verb, coll);
    sa_mongo_error(error, m->hosts, what, berr);
}

/* Runs a cursor to its end, each document to fn. */
static bool m_each(mstore_t *m, mongoc_cursor_t *cur, const char *coll, sa_docstore_fn fn, void *ctx,
                   sa_error_t *error)
{
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;
    while (ok && mongoc_cursor_next(cur, &doc))
        ok = fn(doc, ctx, error);
    if (ok && mongoc_cursor_error(cur, &berr)) {
        m_error(m, "reading", coll, &berr, error);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    return ok;
}

static bool m_find(void *impl, const char *coll, char *const *ids, size_t n, const bson_t *opts, sa_docstore_fn fn,
                   void *ctx, sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    bson_t filter = BSON_INITIALIZER;
    bool ok;
    if (n == 1)
        BSON_APPEND_UTF8(&filter, "_id", ids[0]);
    else
        sa_bson_append_in_strings(&filter, "_id", ids, n);
    ok = m_each(m, mongoc_collection_find_with_opts(c, &filter, opts, NULL), coll, fn, ctx, error);
    bson_destroy(&filter);
    mongoc_collection_destroy(c);
    return ok;
}

static bool m_scan(void *impl, const char *coll, const bson_t *filter, const bson_t *opts, sa_docstore_fn fn,
                   void *ctx, sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    bool ok = m_each(m, mongoc_collection_find_with_opts(c, filter, opts, NULL), coll, fn, ctx, error);
    mongoc_collection_destroy(c);
    return ok;
}

/* {_id: id} and what expect says of _v. */
static void m_filter(bson_t *filter, const char *id, int64_t expect)
{
    bson_t cond;
    BSON_APPEND_UTF8(filter, "_id", id);
    if (expect > 0) {
        BSON_APPEND_INT64(filter, "_v", expect);
    } else if (expect == SA_DOCSTORE_UNVERSIONED) {
        BSON_APPEND_DOCUMENT_BEGIN(filter, "_v", &cond);
        BSON_APPEND_BOOL(&cond, "$exists", false);
        bson_append_document_end(filter, &cond);
    }
}

static int64_t reply_count(const bson_t *reply, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, reply, key) ? bson_iter_as_int64(&it) : 0;
}

static bool m_put(void *impl, const char *coll, const char *id, int64_t expect, const bson_t *doc, bool *conflict,
                  sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, reply;
    bson_error_t berr;
    bool ok;

    *conflict = false;
    if (expect == SA_DOCSTORE_ABSENT) {
        ok = mongoc_collection_insert_one(c, doc, NULL, NULL, &berr);
        if (!ok && berr.code == 11000)
            ok = *conflict = true;
    } else {
        m_filter(&filter, id, expect);
        if (expect == SA_DOCSTORE_ANY)
            BSON_APPEND_BOOL(&opts, "upsert", true);
        ok = mongoc_collection_replace_one(c, &filter, doc, &opts, &reply, &berr);
        if (ok && expect != SA_DOCSTORE_ANY)
            *conflict = reply_count(&reply, "matchedCount") != 1;
        bson_destroy(&reply);
    }
    if (!ok) {
        m_error(m, "writing", coll, &berr, error);
    }
    bson_destroy(&filter);
    bson_destroy(&opts);
    mongoc_collection_destroy(c);
    return ok;
}

static bool m_del(void *impl, const char *coll, const char *id, int64_t expect, bool *conflict, sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    bson_t filter = BSON_INITIALIZER, reply;
    bson_error_t berr;
    bool ok;

    m_filter(&filter, id, expect);
    ok = mongoc_collection_delete_one(c, &filter, NULL, &reply, &berr);
    *conflict = ok && expect != SA_DOCSTORE_ANY && reply_count(&reply, "deletedCount") != 1;
    if (!ok) {
        m_error(m, "writing", coll, &berr, error);
    }
    bson_destroy(&reply);
    bson_destroy(&filter);
    mongoc_collection_destroy(c);
    return ok;
}

static mongoc_bulk_operation_t *m_bulk(mongoc_collection_t *c)
{
    bson_t opts = BSON_INITIALIZER;
    mongoc_bulk_operation_t *bulk;
    BSON_APPEND_BOOL(&opts, "ordered", false);
    bulk = mongoc_collection_create_bulk_operation_with_opts(c, &opts);
    bson_destroy(&opts);
    return bulk;
}

/*
 * Runs a bulk operation of n statements. On success *matched (may be NULL) is nMatched,
 * and the statements that failed with a duplicate key (E11000) are flagged in dup[] (may
 * be NULL: duplicates are then success, as for jobs_superseded). Any other write error
 * fails the call.
 */
static bool m_bulk_exec(mstore_t *m, mongoc_bulk_operation_t *bulk, const char *coll, size_t *matched, bool *dup,
                        size_t n, sa_error_t *error)
{
    bson_t reply;
    bson_error_t berr;
    bson_iter_t it, we;
    bool ok = mongoc_bulk_operation_execute(bulk, &reply, &berr) != 0;

    if (matched)
        *matched = (size_t)reply_count(&reply, "nMatched");
    /*
     * Write errors only: duplicates are expected, anything else is not. The reply has a
     * "writeErrors" array whatever went wrong (empty after a lost connection), and libmongoc
     * reports a network or server error ahead of write errors: only an error that is itself
     * a duplicate key, with at least one write error, all of them duplicates, is success
     * (taking the empty array for "only duplicates" marked a bulk cut short by a killed
     * server as written, and its jobs were never merged again: issue 10, test_faults).
     */
    if (!ok && berr.code == 11000 && berr.domain != MONGOC_ERROR_STREAM &&
        berr.domain != MONGOC_ERROR_SERVER_SELECTION && bson_iter_init_find(&it, &reply, "writeErrors") &&
        BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &we)) {
        size_t nerr = 0;
        ok = true;
        while (bson_iter_next(&we)) {
            bson_iter_t e;
            int64_t idx = -1, code = 0;
            nerr++;
            if (!bson_iter_recurse(&we, &e))
                continue;
            while (bson_iter_next(&e)) {
                if (strcmp(bson_iter_key(&e), "index") == 0)
                    idx = bson_iter_as_int64(&e);
                else if (strcmp(bson_iter_key(&e), "code") == 0)
                    code = bson_iter_as_int64(&e);
            }
            if (code == 11000 && idx >= 0 && (size_t)idx < n) {
                if (dup)
                    dup[idx] = true;
            } else {
                ok = false;
            }
        }
        if (nerr == 0)
            ok = false;
        if (!ok)
            m_error(m, "writing", coll, &berr, error);
    } else if (!ok) {
        m_error(m, "writing", coll, &berr, error);
    }
    bson_destroy(&reply);
    return ok;
}

static bool m_insert_many(void *impl, const char *coll, const bson_t *const *docs, size_t n, bool *dup,
                          sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    mongoc_bulk_operation_t *bulk = m_bulk(c);
    bool ok = bulk != NULL;

    for (size_t i = 0; ok && i < n; i++)
        ok = mongoc_bulk_operation_insert_with_opts(bulk, docs[i], NULL, NULL);
    if (!ok)
        sa_error_nomem(error);
    ok = ok && m_bulk_exec(m, bulk, coll, NULL, dup, n, error);
    mongoc_bulk_operation_destroy(bulk);
    mongoc_collection_destroy(c);
    return ok;
}

static bool m_replace_many(void *impl, const char *coll, char *const *ids, const int64_t *expect,
                           const bson_t *const *docs, size_t n, size_t *matched, sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    mongoc_bulk_operation_t *bulk = m_bulk(c);
    bool ok = bulk != NULL;

    for (size_t i = 0; ok && i < n; i++) {
        bson_t filter = BSON_INITIALIZER;
        m_filter(&filter, ids[i], expect[i]);
        ok = mongoc_bulk_operation_replace_one_with_opts(bulk, &filter, docs[i], NULL, NULL);
        bson_destroy(&filter);
    }
    if (!ok)
        sa_error_nomem(error);
    ok = ok && m_bulk_exec(m, bulk, coll, matched, NULL, n, error);
    mongoc_bulk_operation_destroy(bulk);
    mongoc_collection_destroy(c);
    return ok;
}

static bool m_update_many(void *impl, const char *coll, const bson_t *const *filters, const bson_t *const *updates,
                          size_t n, size_t *matched, sa_error_t *error)
{
    mstore_t *m = impl;
    mongoc_collection_t *c = mongoc_database_get_collection(m->db, coll);
    mongoc_bulk_operation_t *bulk = m_bulk(c);
    bool ok = bulk != NULL;

    for (size_t i = 0; ok && i < n; i++)
        ok = mongoc_bulk_operation_update_one_with_opts(bulk, filters[i], updates[i], NULL, NULL);
    if (!ok)
        sa_error_nomem(error);
    ok = ok && m_bulk_exec(m, bulk, coll, matched, NULL, n, error);
    mongoc_bulk_operation_destroy(bulk);
    mongoc_collection_destroy(c);
    return ok;
}

static void m_destroy(void *impl)
{
    mstore_t *m = impl;
    free(m->hosts);
    free(m);
}

static const sa_docstore_ops_t mongo_ops = {m_find,         m_scan,          m_put,    m_del, m_insert_many,
                                            m_replace_many, m_update_many, m_destroy};

sa_docstore_t *sa_docstore_mongo(mongoc_database_t *db, const char *hosts)
{
    mstore_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->db = db;
    if (!(m->hosts = strdup(hosts ? hosts : ""))) {
        free(m);
        return NULL;
    }
    return sa_docstore_new(&mongo_ops, m);
}
