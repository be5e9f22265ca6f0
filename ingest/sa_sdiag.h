/*
 * sa_sdiag.h - parser of `sdiag --json` (and slurmrestd GET /slurm/vX/diag) output.
 *
 * The figures land in an sa_sdiag_t (schema/tsdb/sa_tsdb.h), which the time series stores
 * in its `sched` table. Pure: bytes in, struct out, no I/O.
 */
#ifndef SA_SDIAG_H
#define SA_SDIAG_H

#include <stdbool.h>
#include <stddef.h>

#include "sa_error.h"
#include "sa_tsdb.h"

/*
 * Parses data[0..len) - a JSON document with a "statistics" object - into *out, which
 * is initialised here (sa_sdiag_init) and must be cleared with sa_sdiag_clear() by the
 * caller, also on failure. Every figure is read whatever its form (plain number,
 * {set, infinite, number}, NO_VAL sentinels -> SA_UNSET); times (req_time,
 * req_time_start, job_states_ts, bf_when_last_cycle) as epoch seconds. Keys not
 * modelled (rpcs_by_message_type, rpcs_by_user, pending_rpcs, bf_exit, ...) go to
 * out->extra.
 * Errors: Slurm's errors[] (SA_ERR_SLURM, naming its first error, with or without
 * statistics: the run exits 4 as for squeue's), and SA_ERR_INPUT: invalid JSON (with
 * line and column), no "statistics" object, a figure of the wrong type or negative:
 * "sdiag: statistics: agent_queue_size: expected a number ..., got string".
 */
bool sa_sdiag_parse_json(const char *data, size_t len, sa_sdiag_t *out, sa_error_t *error);

#endif
