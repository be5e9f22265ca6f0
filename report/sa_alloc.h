/*
 * sa_alloc.h - the allocations file (--allocations FILE, or the same JSON from a URL:
 * sa_alloc_url.h): awards of GPU-years, RGU-years, core-years (CPUs) or billing-years
 * per cluster and account, each with its group's size when given. Format:
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
    int64_t members;      /* the group's size (students, people) for per-member figures; 0: not given */
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
/* The same, of the bytes data (an --allocations URL's answer); name (the URL, redacted) stands for the file. */
bool sa_awards_parse(const char *data, size_t len, const char *name, sa_awards_t *out, sa_error_t *error);
/*
 * The awards of --allocations SOURCE: the file source, or (json not NULL) the bytes read
 * from the URL source (sa_alloc_url.h), whose messages name it redacted.
 */
bool sa_awards_read(const char *source, const char *json, size_t len, sa_awards_t *out, sa_error_t *error);
void sa_awards_clear(sa_awards_t *a);

const char *sa_award_unit_name(sa_award_unit_t u); /* "gpu-years", "rgu-years", "core-years", "billing-years" */

#endif
