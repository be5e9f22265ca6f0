/*
 * sa_site.h - `slurm-report site DIR`: a static web site of every report, built in a
 * temporary directory beside DIR and swapped in for DIR in one rename (a reader sees
 * the old site or the new one, never half of one).
 *
 *   index.html                    the clusters (health, last snapshot) and their months
 *   CLUSTER/index.html            the latest month: usage against awards, utilization by
 *                                 exact state, GPUs nobody could use, health, current queue
 *   CLUSTER/YYYY-MM.html          one month: usage, utilization, GPUs nobody could use
 *   CLUSTER/account-NAME.html     an account: its trend month by month, users, GPU types
 *   ingest.html                   the ingester's runs: phase times, records, writes
 *   *.csv, *.json                 every table of the page beside it (NAME.TABLE.csv)
 *   metrics.prom                  `current --prometheus` of every cluster
 *
 * Every page comes twice: NAME.html needs no script at all; NAME.js.html is the same
 * page with one small local script (site.js, written here: sortable and filterable
 * tables, chart values on hover) and degrades to the plain page without it. Names
 * that are not [A-Za-z0-9_-] are percent-encoded in file names.
 */
#ifndef SA_SITE_H
#define SA_SITE_H

#include <stdbool.h>
#include <stdio.h>

#include "sa_error.h"
#include "sa_report.h"

typedef struct {
    const char *dir;      /* the site directory (replaced whole; a symbolic link: where it points) */
    const char *textfile; /* also write the Prometheus metrics here (atomically); NULL: no */
    int months;           /* the last N months (1..120) */
} sa_site_opts_t;

/*
 * Writes the site for the clusters and options of o (its window options are ignored:
 * the site covers the last so->months months up to o->now). Warnings go to warn.
 * A so->dir that cannot hold a site (a link to nothing, not a directory, no parent)
 * is SA_ERR_USAGE.
 */
bool sa_site_write(const sa_report_opts_t *o, const sa_site_opts_t *so, FILE *warn, sa_error_t *error);

#endif
