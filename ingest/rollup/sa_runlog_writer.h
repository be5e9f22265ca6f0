/*
 * sa_runlog_writer.h - slurm-ingest's writer of the run log, the `ingest_days` collection
 * (schema/rollup/sa_runlog.h): the run's entry after its ingest_runs document, and the
 * rebuild and check of a cluster's log from ingest_runs (a scan, as rollup --rebuild).
 * Documents are read and written whole, conditional on their version (sa_docstore.h).
 */
#ifndef SA_RUNLOG_WRITER_H
#define SA_RUNLOG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bson/bson.h>

#include "sa_docstore.h"
#include "sa_error.h"

/*
 * Adds the entry of run (an ingest_runs document as inserted, with its _id) to its hour of
 * cluster; *started: its started_at. The hour's document is read and written whole: the
 * run's cost is that of an hour of runs, not of every run before it.
 */
bool sa_runlog_push(sa_docstore_t *store, const char *cluster, const bson_t *run, int64_t *started, sa_error_t *error);

typedef enum {
    SA_RUNLOG_VERIFY,  /* compare only */
    SA_RUNLOG_REBUILD, /* rewrite the hours that differ, delete the extra ones */
    SA_RUNLOG_ADD      /* add the entries an hour lacks, and remove version 1's days (safe beside a writer) */
} sa_runlog_mode_t;

/*
 * Recomputes every run log document of cluster from its ingest_runs documents and
 * compares (duplicate entries of one run count once, the order of entries not at all):
 * *docs hours, *differ of them missing, different or stored without a run (each named on
 * out when not NULL), then acts as mode says. *first and *last: the earliest and latest
 * started_at of the runs (SA_UNSET when none).
 */
bool sa_runlog_rebuild(sa_docstore_t *store, const char *cluster, sa_runlog_mode_t mode, size_t *docs,
                       size_t *differ, int64_t *first, int64_t *last, FILE *out, sa_error_t *error);

#endif
