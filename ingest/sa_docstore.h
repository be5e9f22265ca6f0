/*
 * sa_docstore.h - documents by _id, the way slurm-ingest reads and writes them: many _ids
 * per query ({_id: {$in: [...]}}), and whole documents written conditional on the version
 * read (_v), singly or in bulk. The archive (sa_archive.c) and the rollup writer
 * (ingest/rollup/) both go through it. A store is a MongoDB database
 * (sa_docstore_mongo), or in the tests an in-memory one (tests/tu_docstore.c), so that
 * the rollup writer is tested without a server: every operation is one of the table
 * below.
 *
 * In the test-only binary slurm-ingest-faults, SA_FAULT=write:N kills the process just
 * before its Nth write command (a put, a delete, a bulk command; sa_docstore_write_point
 * for the archive's other writes), as kill -9 would (schema/core/sa_fault.h).
 */
#ifndef SA_DOCSTORE_H
#define SA_DOCSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>
#include <mongoc/mongoc.h>

#include "sa_error.h"

typedef struct sa_docstore sa_docstore_t;

/* Called with each document found (borrowed for the call). */
typedef bool (*sa_docstore_fn)(const bson_t *doc, void *ctx, sa_error_t *error);

/* What a write expects of the stored document. */
#define SA_DOCSTORE_ANY (-1)         /* whatever is there (an upsert) */
#define SA_DOCSTORE_ABSENT 0         /* none (an insert: a duplicate _id is a conflict) */
#define SA_DOCSTORE_UNVERSIONED (-2) /* one without _v (written by slurm-ingest 0.1) */
/* expect > 0: the document at that _v */

typedef struct {
    /* The documents of coll among ids[0..n) (at most a few hundred), each handed to fn; opts may be NULL. */
    bool (*find)(void *impl, const char *coll, char *const *ids, size_t n, const bson_t *opts, sa_docstore_fn fn,
                 void *ctx, sa_error_t *error);
    /* The documents of coll that filter selects (an in-memory store matches its top-level equalities only). */
    bool (*scan)(void *impl, const char *coll, const bson_t *filter, const bson_t *opts, sa_docstore_fn fn, void *ctx,
                 sa_error_t *error);
    /* Writes doc (its _id is id) as expect says; *conflict when the stored one is not as expected. */
    bool (*put)(void *impl, const char *coll, const char *id, int64_t expect, const bson_t *doc, bool *conflict,
                sa_error_t *error);
    /* Removes id as expect says (SA_DOCSTORE_ANY or a _v); *conflict when the stored one is not as expected. */
    bool (*del)(void *impl, const char *coll, const char *id, int64_t expect, bool *conflict, sa_error_t *error);
    /* Inserts docs[0..n) in one command; dup[i] when docs[i]'s _id was taken (dup NULL: that is no failure). */
    bool (*insert_many)(void *impl, const char *coll, const bson_t *const *docs, size_t n, bool *dup,
                        sa_error_t *error);
    /* Replaces ids[i] by docs[i] where its _v is expect[i] (> 0, or SA_DOCSTORE_UNVERSIONED) in one command; *matched. */
    bool (*replace_many)(void *impl, const char *coll, char *const *ids, const int64_t *expect,
                         const bson_t *const *docs, size_t n, size_t *matched, sa_error_t *error);
    /* Applies updates[i] (update operators) to the document filters[i] selects, in one command; *matched. */
    bool (*update_many)(void *impl, const char *coll, const bson_t *const *filters, const bson_t *const *updates,
                        size_t n, size_t *matched, sa_error_t *error);
    void (*destroy)(void *impl);
} sa_docstore_ops_t;

/* A store of ops over impl (destroyed with it). NULL on out of memory. */
sa_docstore_t *sa_docstore_new(const sa_docstore_ops_t *ops, void *impl);
/* The store of a MongoDB database (borrowed; hosts names the server in messages). */
sa_docstore_t *sa_docstore_mongo(mongoc_database_t *db, const char *hosts);
void sa_docstore_free(sa_docstore_t *s);

/* The documents of coll among ids[0..n), batch _ids per query (0: 400). */
bool sa_docstore_find(sa_docstore_t *s, const char *coll, char *const *ids, size_t n, size_t batch,
                      const bson_t *opts, sa_docstore_fn fn, void *ctx, sa_error_t *error);
/* A copy of the document id of coll (*doc NULL when there is none; caller destroys). */
bool sa_docstore_get(sa_docstore_t *s, const char *coll, const char *id, bson_t **doc, sa_error_t *error);
bool sa_docstore_scan(sa_docstore_t *s, const char *coll, const bson_t *filter, const bson_t *opts,
                      sa_docstore_fn fn, void *ctx, sa_error_t *error);
bool sa_docstore_put(sa_docstore_t *s, const char *coll, const char *id, int64_t expect, const bson_t *doc,
                     bool *conflict, sa_error_t *error);
bool sa_docstore_del(sa_docstore_t *s, const char *coll, const char *id, int64_t expect, bool *conflict,
                     sa_error_t *error);
/* Inserts docs[0..n), SA_DOCSTORE_INSERT_CHUNK per command. */
bool sa_docstore_insert_many(sa_docstore_t *s, const char *coll, const bson_t *const *docs, size_t n, bool *dup,
                             sa_error_t *error);
/* Replaces in one command (at most SA_DOCSTORE_UPDATE_CHUNK statements: FerretDB 1.24 deadlocks past ~100). */
bool sa_docstore_replace_many(sa_docstore_t *s, const char *coll, char *const *ids, const int64_t *expect,
                              const bson_t *const *docs, size_t n, size_t *matched, sa_error_t *error);
/* Updates in one command (at most SA_DOCSTORE_UPDATE_CHUNK statements). */
bool sa_docstore_update_many(sa_docstore_t *s, const char *coll, const bson_t *const *filters,
                             const bson_t *const *updates, size_t n, size_t *matched, sa_error_t *error);
#define SA_DOCSTORE_INSERT_CHUNK 1000
#define SA_DOCSTORE_UPDATE_CHUNK 50

/* Counts a write made outside the store (the fault point SA_FAULT=write:N). */
void sa_docstore_write_point(void);

#endif
