/*
 * sa_ingestdays.h - slurm-ingest's writer of the `ingest_days` collection
 * (schema/jobdoc/sa_ingestday.h): the run's entry after its ingest_runs document, and the
 * rebuild and check of a cluster's days from ingest_runs (a scan, as rollup --rebuild).
 */
#ifndef SA_INGESTDAYS_H
#define SA_INGESTDAYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mongoc/mongoc.h>

#include "sa_error.h"

/*
 * $pushes the entry of run (an ingest_runs document as inserted, with its _id) to its
 * day of cluster in days (upserted); *started: its started_at.
 */
bool sa_ingestdays_push(mongoc_collection_t *days, const char *hosts, const char *cluster, const bson_t *run,
                        int64_t *started, sa_error_t *error);

typedef enum {
    SA_INGESTDAYS_VERIFY,  /* compare only */
    SA_INGESTDAYS_REBUILD, /* rewrite the days that differ, delete the extra ones */
    SA_INGESTDAYS_ADD      /* add the entries a day lacks, nothing else (safe beside a writer) */
} sa_ingestdays_mode_t;

/*
 * Recomputes every ingest_days document of cluster from its ingest_runs documents and
 * compares (duplicate entries of one run count once, the order of entries not at all):
 * *docs days, *differ of them missing, different or stored without a run (each named on
 * out when not NULL), then acts as mode says. *first and *last: the earliest and latest
 * started_at of the runs (SA_UNSET when none).
 */
bool sa_ingestdays_rebuild(mongoc_database_t *db, const char *hosts, const char *cluster, sa_ingestdays_mode_t mode,
                           size_t *docs, size_t *differ, int64_t *first, int64_t *last, FILE *out, sa_error_t *error);

#endif
