/*
 * sa_archive_migrate.c - moving an archive written by slurm-ingest 0.1 (ObjectId _ids) to
 * the _id scheme of 0.2 (sa_archive_migrate, sa_archive.h).
 */
#include "sa_archive_private.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_mongo.h"
#include "sa_vec.h"

/* Moves up to FIND_BATCH documents of coll with an ObjectId _id into jobs_migrating. */
static bool migrate_collect(sa_archive_t *a, mongoc_collection_t *coll, const char *cluster, bool superseded,
                            size_t *got, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, t, del = BSON_INITIALIZER, in, oids;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    bson_t **docs = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;

    *got = 0;
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "_id", &t);
    BSON_APPEND_UTF8(&t, "$type", "objectId");
    bson_append_document_end(&filter, &t);
    BSON_APPEND_INT64(&opts, "limit", FIND_BATCH);
    BSON_APPEND_DOCUMENT_BEGIN(&del, "_id", &in);
    BSON_APPEND_ARRAY_BEGIN(&in, "$in", &oids);
    cursor = mongoc_collection_find_with_opts(coll, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        json_t *doc = sa_bson_to_json(found, error);
        bson_iter_t it;
        char *id, key[16];
        const char *k;
        if (!doc || !SA_VEC_GROW(docs, cap, n, 1, 64) || !(docs[n] = bson_new())) {
            json_decref(doc);
            ok = doc ? sa_error_nomem(error) : false;
            break;
        }
        id = superseded ? sa_jobdoc_superseded_id(cluster, sa_jobdoc_int(doc, "job_id"), sa_jobdoc_int(doc, "submit"))
                        : sa_jobdoc_id(cluster, sa_jobdoc_int(doc, "job_id"));
        json_object_set_new(doc, "_id", json_string(id ? id : ""));
        json_object_set_new(doc, "_migrating_to", json_string(superseded ? "jobs_superseded" : "jobs"));
        if (!superseded)
            json_object_set_new(doc, "_v", json_integer(1));
        free(id);
        ok = sa_bson_from_json(doc, docs[n], error);
        if (ok && bson_iter_init_find(&it, found, "_id") && BSON_ITER_HOLDS_OID(&it)) {
            bson_uint32_to_string((uint32_t)n, &k, key, sizeof key);
            BSON_APPEND_OID(&oids, k, bson_iter_oid(&it));
        }
        json_decref(doc);
        n++;
    }
    bson_append_array_end(&in, &oids);
    bson_append_document_end(&del, &in);
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "reading documents to migrate", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    /* the copy first (a duplicate: an earlier attempt made it), then the old documents go */
    ok = ok && sa_docstore_insert_many(a->store, "jobs_migrating", (const bson_t *const *)docs, n, NULL, error);
    if (ok && n) {
        sa_docstore_write_point();
        if (!mongoc_collection_delete_many(coll, &del, NULL, NULL, &berr)) {
            sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
            ok = false;
        }
    }
    sa_archive_docs_free(docs, n);
    bson_destroy(&filter);
    bson_destroy(&opts);
    bson_destroy(&del);
    *got = n;
    return ok;
}

/* Moves what jobs_migrating holds for cluster to its final collection. */
static bool migrate_place(sa_archive_t *a, const char *cluster, size_t *moved, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    bool ok = true;

    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cursor = mongoc_collection_find_with_opts(a->migrating, &filter, NULL, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        json_t *doc = sa_bson_to_json(found, error);
        const char *to = doc ? sa_archive_doc_str(doc, "_migrating_to") : NULL;
        mongoc_collection_t *dest = to && strcmp(to, "jobs_superseded") == 0 ? a->superseded : a->jobs;
        bson_t b = BSON_INITIALIZER, sel = BSON_INITIALIZER;
        if (!doc) {
            ok = false;
            break;
        }
        json_object_del(doc, "_migrating_to");
        ok = sa_bson_from_json(doc, &b, error);
        if (ok && !mongoc_collection_insert_one(dest, &b, NULL, NULL, &berr) && berr.code != 11000) {
            sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
            ok = false;
        }
        BSON_APPEND_UTF8(&sel, "_id", sa_archive_doc_str(doc, "_id") ? sa_archive_doc_str(doc, "_id") : "");
        if (ok && !mongoc_collection_delete_one(a->migrating, &sel, NULL, NULL, &berr)) {
            sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
            ok = false;
        }
        if (ok && moved)
            (*moved)++;
        bson_destroy(&b);
        bson_destroy(&sel);
        json_decref(doc);
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    return ok;
}

bool sa_archive_migrate(sa_archive_t *a, const char *cluster, size_t *moved, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    bool done, ok = true;

    if (moved)
        *moved = 0;
    if (!cdoc)
        return false;
    done = sa_jobdoc_int(cdoc, "schema_version") >= 2;
    json_decref(cdoc);
    if (done)
        return true;
    /* a crash may have left documents on their way: place them first, then batch by batch */
    ok = migrate_place(a, cluster, moved, error);
    for (int coll = 0; ok && coll < 2; coll++) {
        size_t got;
        do {
            ok = migrate_collect(a, coll ? a->superseded : a->jobs, cluster, coll == 1, &got, error) &&
                 migrate_place(a, cluster, moved, error);
        } while (ok && got > 0);
    }
    if (!ok)
        return false;
    set = json_pack("{s:i}", "schema_version", 2);
    ok = sa_archive_cluster_update(a, cluster, NULL, set, error);
    json_decref(set);
    return ok;
}

