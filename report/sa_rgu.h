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

/* The table's "source" text (borrowed), "" when none. */
const char *sa_rgu_source(const sa_rgu_t *r);

#endif
