/*
 * sa_rgu.h - RGU weights: Reference GPU Units per GPU type and MIG profile
 * (schema/rgu-weights.json, embedded in the binary; --rgu-weights FILE overrides).
 */
#ifndef SA_RGU_H
#define SA_RGU_H

#include <stdbool.h>

#include "sa_error.h"

typedef struct sa_rgu sa_rgu_t;

/*
 * Loads the weights: the built-in table when path is NULL, else the file (which
 * replaces the built-in table, or is tried before it when it says
 * "include_defaults": true). Errors name the file and the entry ("weights[3]: rgu:
 * expected a number > 0").
 */
sa_rgu_t *sa_rgu_load(const char *path, sa_error_t *error);
void sa_rgu_free(sa_rgu_t *r);

/*
 * The weight of a Slurm GPU type: true and *w (and *name, the entry's name, borrowed;
 * may be NULL) when an entry matches; false when none does (no weight).
 */
bool sa_rgu_weight(const sa_rgu_t *r, const char *gpu_type, double *w, const char **name);

/*
 * The weight of a GPU type on a cluster (NULL: no cluster): the cluster's own table
 * first ("clusters": {"NAME": [{"gpu_type", "parent", "rgu"}]} in the weights file: a
 * type mapped to its parent model and weight, never a guess), then the general entries.
 * *guess (may be NULL) is true when the entry matched is marked "guess": the type alone
 * does not say its parent GPU (a bare MIG profile such as 1g.10gb exists on H100 and
 * A100-80GB). *name gets the entry's name, or "PARENT TYPE" from a cluster table.
 */
bool sa_rgu_weight_on(const sa_rgu_t *r, const char *cluster, const char *gpu_type, double *w, const char **name,
                      bool *guess);

/* True when the table has per-cluster entries (weights then depend on the cluster). */
bool sa_rgu_has_clusters(const sa_rgu_t *r);

/* The table's "source" text (borrowed), "" when none. */
const char *sa_rgu_source(const sa_rgu_t *r);

#endif
