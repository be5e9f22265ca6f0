/*
 * sa_hostlist.h - Slurm hostlist expressions, expanded (slurm-ingest counts a job's
 * nodes and lists a node line's names; slurm-report finds a run's nodes in the time
 * series).
 *
 * Pure: no I/O. Errors fill an optional sa_error_t (passed last) with a one-line
 * message that quotes the expression (sa_error_quote()).
 */
#ifndef SA_HOSTLIST_H
#define SA_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "sa_error.h"
#include "sa_model.h"

/*
 * Expands a Slurm hostlist expression ("cn-a[001-004,010]", "d09n04s[01-02],d13n[03,05]",
 * "gpu[1-2]-ib[0-1]", "node1,node2") into names appended to *out in order, with
 * leading zeros kept. "None assigned", "(null)", "" give nothing. Fails on an
 * unbalanced bracket, a reversed range, or more than max_hosts names (a guard
 * against "n[0-999999999]"; pass 0 for the default of 1,000,000).
 */
bool sa_hostlist_expand(const char *expr, size_t max_hosts, sa_strv_t *out, sa_error_t *error);

#endif
