/*
 * sa_nodegpu.h - the GPU type of a run's nodes, from the time series, for runs whose
 * GPUs are untyped in the TRES ("gres/gpu=2"): the single GPU type of the node(s) the
 * run used, at the snapshot at or before the run's start (or, when the series starts
 * later, the first snapshot during the run). Also a minimal Slurm hostlist expander.
 */
#ifndef SA_NODEGPU_H
#define SA_NODEGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"
#include "sa_tsdb.h"

/*
 * Expands a Slurm hostlist expression ("gpu[01-03,07],cpu5", "r[1-2]n[1-2]") into
 * names (appended to out), keeping zero padding. Fails on a malformed expression or
 * more than max names.
 */
bool sa_rhostlist_expand(const char *expr, size_t max, sa_strv_t *out);

typedef struct sa_nodegpu sa_nodegpu_t;

/* A resolver for one cluster of db (borrowed; NULL: every lookup gives no type). */
sa_nodegpu_t *sa_nodegpu_new(sa_tsdb_t *db, const char *cluster);
void sa_nodegpu_free(sa_nodegpu_t *r);

/*
 * The single GPU type of every node of hostlist at the run's start (borrowed, valid
 * until the resolver is freed), or NULL when the nodes have no type, several types
 * (MIG partitions, mixed nodes), differ from one another, or are not in the series.
 * Fails only on a database error.
 */
bool sa_nodegpu_type(sa_nodegpu_t *r, const char *hostlist, int64_t run_start, int64_t run_end,
                     const char **type, sa_error_t *error);

#endif
