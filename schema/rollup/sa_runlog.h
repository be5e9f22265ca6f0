/*
 * sa_runlog.h - the run log: the ingest runs of a cluster by UTC hour, kept beside
 * ingest_runs so that a report reads the hours it needs by _id instead of scanning every
 * run ever made (FerretDB 1.24 reads a whole collection for any filter but an _id equality
 * or $in).
 *
 * Collection `ingest_days` (a stored name, kept from when the log was by day), one document
 * per cluster and UTC hour of started_at, _id "<cluster>:<YYYY-MM-DD>T<HH>": {_v, cluster,
 * hour: "YYYY-MM-DDTHH", runs: [entry...]}; slurm-ingest adds its entry after it inserts the
 * run's ingest_runs document (the record: the log is derived, `slurm-ingest rollup` checks
 * it and --rebuild rewrites it). An hour holds the runs of one hour whatever the runs before
 * it, so a run's cost does not grow with them (a one-minute timer writes 60 entries an
 * hour; version 1's day documents held 1,440, rewritten whole by every run). An entry is
 * the run's ingest_runs document cut to what the reports read, under the same names: run
 * (the ingest_runs _id as a string: the entry's key; readers keep one per key), started_at,
 * finished_at, ok, error, phases_ms {every phase the run recorded}, counts {the counts the
 * site shows}.
 *
 * The clusters document says where the hours are: first_run_at and last_run_at (the
 * earliest and latest started_at of its runs) and ingest_days_version (the log was built
 * for the runs before this version's first run; 1: days).
 */
#ifndef SA_RUNLOG_H
#define SA_RUNLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#define SA_RUNLOG_COLL "ingest_days"
#define SA_RUNLOG_VERSION 2
/* What one document covers (seconds): an hour. */
#define SA_RUNLOG_SPAN 3600
/* _ids per $in when a reader walks hours (four days) */
#define SA_RUNLOG_BATCH 96

/* The start of the log's hour holding t. */
int64_t sa_runlog_start(int64_t t);
/* "<cluster>:<YYYY-MM-DDTHH>" of the UTC hour holding t (seconds); NULL when out of memory or range. */
char *sa_runlog_id(const char *cluster, int64_t t);
/* True when id is a version 1 document of cluster's ("<cluster>:<YYYY-MM-DD>", a day). */
bool sa_runlog_id_is_day(const char *cluster, const char *id);

/*
 * The entry of an ingest_runs document (it must have its _id: an ObjectId or a string)
 * appended to *entry (initialised by the caller); false when the document has no _id
 * or no started_at.
 */
bool sa_runlog_entry(const bson_t *run, bson_t *entry);

/* An entry's key (borrowed; NULL when absent) and started_at (SA_UNSET when absent). */
const char *sa_runlog_entry_key(const bson_t *entry, int64_t *started_at);

#endif
