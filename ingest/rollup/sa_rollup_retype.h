/*
 * sa_rollup_retype.h - typing runs late: the runs whose untyped GPUs had no type when
 * they were ingested (the rollup writer's untyped list) take the one the time series says
 * now, in their documents and their rollups.
 */
#ifndef SA_ROLLUP_RETYPE_H
#define SA_ROLLUP_RETYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "sa_archive.h"
#include "sa_error.h"
#include "sa_rollup_writer.h"

/*
 * Re-types the runs of the untyped list of w's cluster from the time series at
 * sqlite_path as it is now: the rule of ingest, and a node whose GPUs the run's snapshot
 * did not say (grouped sinfo) takes the type of its nearest later per-node observation
 * (sa_tsdb_run_gpu_type_later), so a run ingested before the node snapshots around its
 * start, or on nodes seen per node only later (a per-node capture, --node-config), moves
 * from "unknown" to its type, in its document and its rollups (through the archive, whose
 * hook is w's). A job leaves the untyped list once typed, or once the series reaches a day
 * past its run's start; then, while a node of its run has never been seen per node, it
 * waits in a second list that is read only by a run that brought per-node observations
 * (new_config). *retyped: documents written.
 */
bool sa_rollup_retype(sa_archive_t *a, sa_rollup_writer_t *w, const char *sqlite_path, bool new_config,
                      size_t *retyped, sa_error_t *error);

#endif
