/*
 * tu_docstore.h - an in-memory document store (ingest/sa_docstore.h) for the tests of the
 * rollup writer without a server: documents by collection and _id, the conditional writes
 * of the real one (a version that differs is a conflict), a count of writes, a write that
 * fails as a kill would stop a process there (and every write after it), and a hook run
 * before each write (a reader in the middle of a flush).
 *
 * A scan matches the filter's top-level string equalities (cluster) and nothing else; it
 * returns documents in _id order; projections are ignored (whole documents come back).
 */
#ifndef TU_DOCSTORE_H
#define TU_DOCSTORE_H

#include <stdbool.h>
#include <stddef.h>

#include <bson/bson.h>

#include "sa_docstore.h"

typedef struct tu_docstore tu_docstore_t;

/* A new empty store: *mem its state, the store the code under test is given. */
sa_docstore_t *tu_docstore_new(tu_docstore_t **mem);

/* Writes made so far; from the fail_at-th on (1-based; 0: never), every write fails ("killed"). */
size_t tu_docstore_writes(const tu_docstore_t *m);
void tu_docstore_fail_at(tu_docstore_t *m, size_t fail_at);
/* True once a write has failed. */
bool tu_docstore_killed(const tu_docstore_t *m);
/* fn(ctx) before every write that will be made (not one that fails). */
void tu_docstore_on_write(tu_docstore_t *m, void (*fn)(void *ctx), void *ctx);

/* A copy of the state (documents only), and putting one back. */
tu_docstore_t *tu_docstore_save(const tu_docstore_t *m);
void tu_docstore_restore(tu_docstore_t *m, const tu_docstore_t *saved);
void tu_docstore_free_saved(tu_docstore_t *saved);

/* Puts doc (with its _id) into coll whatever is there, without counting a write. */
void tu_docstore_set(tu_docstore_t *m, const char *coll, const bson_t *doc);
/* The document id of coll (borrowed; NULL: none). */
const bson_t *tu_docstore_get(const tu_docstore_t *m, const char *coll, const char *id);
/* Calls fn with each document of coll, in _id order. */
void tu_docstore_each(const tu_docstore_t *m, const char *coll, void (*fn)(const bson_t *doc, void *ctx), void *ctx);

#endif
