/*
 * sa_rchart.h - the usage charts (sa_rchart.c): their data and their SVG. Below the
 * renderer (sa_render.h), which draws them into a report's document.
 */
#ifndef SA_RCHART_H
#define SA_RCHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_model.h"

/*
 * One chart: monthly bars and their cumulative sum over [from, axis_to), against a
 * target, with the projection to the end; or, with series, the monthly bars stacked
 * by series (a breakdown by user or GPU type).
 */
typedef struct {
    char *title, *subtitle;         /* owned */
    int64_t from, axis_to, data_to; /* x axis [from, axis_to); values known until data_to */
    size_t nm;
    int64_t *m;                     /* nm + 1 bucket bounds within [from, axis_to] (owned) */
    double *val;                    /* per bucket, in unit (owned) */
    double target;                  /* the award; < 0: none */
    double band_lo, band_hi;        /* the award's status band, % of the target to date (under_pct, over_pct):
                                       drawn around the target line when band_hi > 0 */
    double projected;               /* projected cumulative use at axis_to; < 0: none */
    const char *status;             /* static: the award's status ("over pace"); NULL: none */
    const char *unit;               /* static: "GPU-years" */
    size_t nseries;                 /* > 0: a breakdown; val is then nm x nseries, bucket-major */
    char **series;                  /* series names (owned) */
} sa_rchart_t;

/*
 * Sets the chart's month buckets over [from, axis_to): the first starts at from, the
 * others at month starts, the last ends at axis_to; values zero. False on out of memory.
 */
bool sa_rchart_months(sa_rchart_t *c);
/* Frees n charts and the array. Accepts NULL. */
void sa_rcharts_free(sa_rchart_t *c, size_t n);

/*
 * Writes n charts as one SVG document titled title, the preamble (may be NULL) wrapped
 * above them, no_charts drawn when n is 0; standalone: with the XML declaration (else
 * to be inlined in HTML). sa_rdoc_write() calls it.
 */
void sa_rcharts_svg(FILE *out, const char *title, const char *no_charts, const sa_strv_t *preamble,
                    const sa_rchart_t *c, size_t n, bool standalone);

#endif
