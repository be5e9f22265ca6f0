/*
 * sa_ingestday.h - the ingest runs of a cluster by UTC day, kept beside ingest_runs so
 * that a report reads the days it needs by _id instead of scanning every run ever made
 * (FerretDB 1.24 reads a whole collection for any filter but an _id equality or $in).
 *
 * Collection `ingest_days`, one document per cluster and UTC day of started_at,
 * _id "<cluster>:<YYYY-MM-DD>": {cluster, day: "YYYY-MM-DD", runs: [entry...]}; slurm-ingest
 * $pushes an entry after it inserts the run's ingest_runs document (the record: the
 * days are derived, `slurm-ingest rollup` checks them and --rebuild rewrites them).
 * An entry is the run's ingest_runs document cut to what the reports read, under the
 * same names: run (the ingest_runs _id as a string: the entry's key, a retried $push may
 * have written an entry twice, readers keep one per key), started_at, finished_at, ok,
 * error, phases_ms {exec, parse, sqlite, mongo}, counts {the counts the site shows}.
 *
 * The clusters document says where the days are: first_run_at and last_run_at (the
 * earliest and latest started_at of its runs) and ingest_days_version (the days were
 * built for the runs before this version's first run).
 */
#ifndef SA_INGESTDAY_H
#define SA_INGESTDAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#define SA_INGEST_DAYS_COLL "ingest_days"
#define SA_INGEST_DAYS_VERSION 1
/* _ids per $in when a reader walks days (a month) */
#define SA_INGEST_DAYS_BATCH 31

/* "<cluster>:<YYYY-MM-DD>" of the UTC day holding t (seconds); NULL when out of memory or range. */
char *sa_ingestday_id(const char *cluster, int64_t t);

/*
 * The entry of an ingest_runs document (it must have its _id: an ObjectId or a string)
 * appended to *entry (initialised by the caller); false when the document has no _id
 * or no started_at.
 */
bool sa_ingestday_entry(const bson_t *run, bson_t *entry);

/* An entry's key (borrowed; NULL when absent) and started_at (SA_UNSET when absent). */
const char *sa_ingestday_entry_key(const bson_t *entry, int64_t *started_at);

#endif
