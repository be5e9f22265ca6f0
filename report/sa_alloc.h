/*
 * sa_alloc.h - the allocations file (--allocations FILE): awards of GPU-years,
 * RGU-years, core-years (CPUs) or billing-years per cluster and account. Format:
 * schema/allocations.schema.json.
 */
#ifndef SA_ALLOC_H
#define SA_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"

/* The unit of an award: its TRES is GPUs for the first two, CPUs for core-years, billing for billing-years. */
typedef enum { SA_AWARD_GPU_YEARS = 0, SA_AWARD_RGU_YEARS, SA_AWARD_CORE_YEARS, SA_AWARD_BILLING_YEARS } sa_award_unit_t;

typedef struct {
    char *cluster, *account;
    char *gpu_type;       /* glob, NULL = every type */
    char *note;           /* NULL when none */
    double amount;        /* > 0, in unit */
    sa_award_unit_t unit;
    int64_t start, end;   /* [start, end), UTC */
    double under_pct, over_pct;
    size_t index;         /* position in the file, for messages */
} sa_award_t;

typedef struct {
    sa_award_t *v;
    size_t n;
    double recent_days;   /* default 30 */
} sa_awards_t;

/*
 * Reads and checks the file. Errors name the file, the award and the field:
 * "awards.json: awards[2] (narval/def-smith): end: must be after start".
 */
bool sa_awards_load(const char *path, sa_awards_t *out, sa_error_t *error);
void sa_awards_clear(sa_awards_t *a);

const char *sa_award_unit_name(sa_award_unit_t u); /* "gpu-years", "rgu-years", "core-years", "billing-years" */

#endif
