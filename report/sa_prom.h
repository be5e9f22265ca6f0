/*
 * sa_prom.h - the Prometheus text exposition of `slurm-report current --prometheus`
 * (internal to report/): a set of samples of the metrics defined in sa_prom.c (stable
 * names, every one with a cluster label), written grouped by metric with HELP and
 * TYPE lines, as node_exporter's textfile collector and promtool read them.
 *
 * What it carries, per cluster, after what the common Slurm exporters publish:
 * - jobs and their GPUs, CPUs and memory by state (all, by partition, account, user),
 *   finished jobs;
 * - nodes by exact state (and partition), CPUs and memory allocated / idle / stranded
 *   (/ other) by node state (and partition), GPUs allocated / idle / stranded by GPU type
 *   and node state, from the latest snapshot of the time series; with --per-node, each
 *   node's CPUs, memory and GPUs, configured and allocated;
 * - the scheduler's figures of the latest sdiag, its RPC counts by message type and user;
 * - the ingester: last ingest per source and its lag, the last run and the last
 *   successful run.
 */
#ifndef SA_PROM_H
#define SA_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"
#include "sa_rdb.h"
#include "sa_tsdb.h"

typedef struct sa_prom sa_prom_t;

sa_prom_t *sa_prom_new(void);
void sa_prom_free(sa_prom_t *p); /* accepts NULL */

/*
 * Adds value to the sample of metric (a name of sa_prom.c's table) with the labels
 * given as name, value pairs ending in NULL; merge: add to a sample with the same
 * labels when there is one (else a new sample is appended). False on out of memory or
 * an unknown metric (a bug).
 */
bool sa_prom_add(sa_prom_t *p, const char *metric, double value, bool merge, ...) __attribute__((sentinel));

/*
 * The nodes, CPUs, memory and GPUs of cluster's latest snapshot (per_node: also a gauge per
 * node) and its latest sdiag with its RPC counts (nothing when none).
 */
bool sa_prom_nodes(sa_prom_t *p, sa_tsdb_t *db, const char *cluster, bool per_node, sa_error_t *error);

/* The ingester's figures of cluster c at now: lag per source, its last run and last successful run. */
bool sa_prom_ingest(sa_prom_t *p, sa_rdb_t *db, const sa_rcluster_t *c, int64_t now, sa_error_t *error);

/*
 * Calls fn(labels, value, ctx) for each sample of metric, in the order added: labels is the
 * sample's label text ('name="value",...', escaped as written); sa_prom_label reads one. Stops
 * and returns false when fn does.
 */
typedef bool (*sa_prom_sample_fn)(const char *labels, double value, void *ctx);
bool sa_prom_each(const sa_prom_t *p, const char *metric, sa_prom_sample_fn fn, void *ctx);

/*
 * The value of label name in labels (a sample's label text), unescaped, into *out (a new
 * string the caller frees; NULL when the sample has no such label). False on out of memory.
 */
bool sa_prom_label(const char *labels, const char *name, char **out);

/*
 * A sample's value as the exposition writes it (an integer when it is one, else %.9g), into
 * buf: the one text of a figure, which the CloudWatch export sends too (sa_cw.h).
 */
void sa_prom_value_text(double v, char buf[32]);

/* Writes every metric with samples, in the table's order. False when writing fails. */
bool sa_prom_write(const sa_prom_t *p, FILE *out);

#endif
