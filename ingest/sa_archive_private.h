/*
 * sa_archive_private.h - the archive's state and the helpers its files share
 * (sa_archive.c: opening, the job cache's agreement, the clusters collection and the record
 * of a run; sa_archive_write.c: writing job documents, on top of it; sa_archive_migrate.c:
 * an archive of 0.1). Not for other modules: they use sa_archive.h.
 */
#ifndef SA_ARCHIVE_PRIVATE_H
#define SA_ARCHIVE_PRIVATE_H

#include <stdlib.h>

#include <mongoc/mongoc.h>

#include "sa_archive.h"
#include "sa_bson.h"
#include "sa_docstore.h"

#define FIND_BATCH 1000   /* _ids per $in query */
#define UPDATE_CHUNK SA_DOCSTORE_UPDATE_CHUNK
#define MAX_ROUNDS 5      /* conflict retries before giving up */
#define DOC_LIMIT ((uint32_t)16 * 1024 * 1024 - 64 * 1024) /* MongoDB's 16 MiB, with room for the command */

struct sa_archive {
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *jobs, *superseded, *clusters, *runs, *migrating;
    sa_docstore_t *store;    /* the same database, as sa_docstore.h reads and writes it */
    sa_archive_hook_t hook;  /* told of every job document written (the rollup writer), or none */
    /* the clusters document's first_submit as last read or written (SA_UNSET: not known):
     * only a batch with an earlier submit writes it */
    int64_t first_submit;
    char *hosts; /* for messages: host:port list, never the URI (it may hold a password) */
    char *uri;   /* kept only to ask again after a connection error (never printed) */
    sa_archive_open_ms_t open_ms; /* what sa_archive_open took, step by step */
};

/* A jansson document as BSON, refused when larger than MongoDB takes. */
static inline bool sa_archive_doc_to_bson(const json_t *doc, bson_t *b, sa_error_t *error)
{
    if (!sa_bson_from_json(doc, b, error))
        return false;
    if (b->len > DOC_LIMIT) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job %lld: its document would be %u bytes, over MongoDB's 16 MiB limit",
                     (long long)json_integer_value(json_object_get(doc, "job_id")), b->len);
        return false;
    }
    return true;
}

/* Frees the BSON documents docs[0..n) (NULL entries skipped) and the array. */
static inline void sa_archive_docs_free(bson_t **docs, size_t n)
{
    for (size_t i = 0; docs && i < n; i++) {
        if (docs[i])
            bson_destroy(docs[i]);
    }
    free(docs);
}

/* The string member k of o (borrowed; NULL when absent or not a string). */
/* ---- the job cache against the archive --------------------------------------------------- */

static inline const char *sa_archive_doc_str(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}
/* update_one of the clusters collection, upserted (a duplicate _id of two upserts at once is tried again). */
bool sa_archive_cluster_upsert(sa_archive_t *a, const bson_t *filter, const bson_t *upd, const bson_t *opts,
                               bson_error_t *berr);
/* Tells the hook (when there is one) of an event. */
static inline bool sa_archive_tell(sa_archive_t *a, sa_archive_event_t ev, const sa_archive_change_t *changes, size_t n, int64_t at,
                 sa_error_t *error)
{
    return !a->hook.fn || a->hook.fn(a->hook.ctx, ev, changes, n, at, error);
}

/* Appends {state: {$nin: final states}} to a filter. */
static inline void sa_archive_append_not_final(bson_t *f)
{
    sa_bson_append_final_states(f, "$nin");
}

/* The live (unfinished, not vanished) job ids of a cluster, from one query. Sorted. */
bool sa_archive_live_ids(sa_archive_t *a, const char *cluster, int64_t **ids, size_t *n, sa_error_t *error);

#endif
