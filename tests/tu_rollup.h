/*
 * tu_rollup.h - helpers of the rollup format's unit tests (test_rollup_*.c): a job
 * document from JSON, its contribution, an empty rollup document. On schema/ only.
 */
#ifndef SA_TU_ROLLUP_H
#define SA_TU_ROLLUP_H

#include "testutil.h"

#include <bson/bson.h>

#include "sa_jobview.h"
#include "sa_rollup.h"

/* 2026-10-04T00:00:00Z, the day the cases' runs are on, and an hour. */
#define TU_D4 1791072000LL
#define TU_H 3600LL

/* A document from MongoDB extended JSON (times as {"$date": ms}); fails the test on bad JSON. Caller destroys. */
bson_t *tu_bson(const char *json);

/*
 * Reads job document json into v (initialised) and its contribution into c (initialised);
 * *b receives the document, which v points into (caller destroys it after v's last use).
 */
void tu_contrib_of(sa_jobview_t *v, sa_rollup_contrib_t *c, bson_t **b, const char *json);

/* An empty rollup document of cluster "c" of kind, day and part (fails the test on error). */
void tu_rollup_doc(sa_rollup_doc_t *d, sa_rollup_kind_t kind, int64_t day, int part);

/*
 * Puts job document json, version v, into d as member id (NULL: the document's _id): the
 * records its contribution has for d's kind and day (none: a tombstone).
 */
void tu_rollup_put(sa_rollup_doc_t *d, const char *id, int64_t v, const char *json);

/*
 * A members, open-runs or job-list document of this version (in) as 0.5.0 stored it (out,
 * initialised): records of SA_RR_NF_05 fields (no SA_RR_HOSTS), no hosts table, and in a
 * job list no planned fields (SA_RL_*). Other documents are copied as they are.
 */
void tu_rollup_as_05(const bson_t *in, bson_t *out);

/*
 * Rewrites in place every members, open-runs and job-list document of cluster in db's
 * rollups as 0.5.0 stored it (tu_rollup_as_05), each keeping its commit (_s). Returns how
 * many documents it rewrote.
 */
struct _mongoc_client_t;
size_t tu_rollup_store_as_05(struct _mongoc_client_t *client, const char *db, const char *cluster);

#endif
