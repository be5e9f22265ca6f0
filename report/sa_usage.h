/*
 * sa_usage.h - the parts of `slurm-report usage` (internal to report/). The
 * accounting rules are at the top of sa_report.h.
 *
 *   sa_usage_scan.c  the Mongo scan: every GPU run of the clusters' job documents
 *                    (jobs and jobs_superseded) adds its GPU-seconds to the sums; the
 *                    only file that reads job documents
 *   sa_usage_calc.c  the sums (GPU-seconds per key and per segment), RGU weights,
 *                    windows, groups and the awards arithmetic
 *   sa_usage.c       the report: options, rows, charts and preamble, written by the
 *                    shared renderers (sa_render.h)
 *
 * GPU time is held in integer GPU-seconds per (cluster, account, user, GPU type) and
 * per "segment": the time between two consecutive boundaries (the window's start and
 * end, each award's start, end, as-of time and recent-rate start, month starts for the
 * charts), so any of those intervals is a sum of whole segments, results do not depend
 * on the order documents arrive in, and a run costs a binary search plus one addition
 * per segment it spans.
 */
#ifndef SA_USAGE_H
#define SA_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_map.h"
#include "sa_alloc.h"
#include "sa_rcommon.h"
#include "sa_rgu.h"
#include "sa_rollup.h"
#include "sa_rutil.h"

/* ---- the sums ------------------------------------------------------------------------- */

/* A key: interned cluster, account, user and GPU type. */
typedef struct {
    uint32_t c, a, u, t;
} sa_ukey_t;

/*
 * Open-addressing slots over a caller's array of records that each begin with their
 * sa_ukey_t (the usage sums, the efficiency sums): load factor at most 1/2.
 */
typedef struct {
    sa_map_t map;
} sa_ukeyidx_t;

/*
 * The slot of key k among the n records of arr (each stride bytes, beginning with its
 * key): *slot is the record's index + 1, or 0 when k is new; the caller then makes it
 * record n and sets *slot = n + 1. Grows the slots first when one more record would fill
 * more than half; NULL on out of memory.
 */
uint32_t *sa_ukeyidx_slot(sa_ukeyidx_t *ix, const sa_ukey_t *k, const void *arr, size_t n, size_t stride);
void sa_ukeyidx_clear(sa_ukeyidx_t *ix);

/*
 * The use of one key, per segment and TRES (sa_rtres_t of sa_report.h): secs[r * (nb - 1)
 * + j] of TRES r in segment j, r < the sums' ntres; secs[j] are the GPU-seconds.
 */
typedef struct {
    sa_ukey_t k;
    int64_t *secs;
} sa_uacc_t;
_Static_assert(offsetof(sa_uacc_t, k) == 0, "sa_ukeyidx_t finds a record's key at its start");

typedef struct {
    sa_rintern_t names;  /* every name of a key; clusters first: a cluster's id is its index */
    size_t nclusters;
    uint32_t unknown_id; /* "unknown": the type of GPUs neither the TRES nor the time series type */
    int64_t *b;          /* boundaries, ascending, unique; [b[0], b[nb - 1]) is the range counted */
    size_t nb;
    sa_uacc_t *acc;
    size_t nacc, acccap;
    sa_ukeyidx_t idx;    /* acc by key */
    /*
     * The TRES held: 1 (GPU-seconds alone: runs without GPUs are not counted), or
     * SA_TRES_N (CPU, memory and billing too, and the runs without GPUs, under GPU type "").
     */
    size_t ntres;
    bool by_type; /* keys by cluster and GPU type alone (account and user ""): utilization's sums */
} sa_usums_t;

/*
 * The key of a rollup key rk (account, user, partition, qos, GPU type) of cluster cid in
 * the sums, its names interned (by_type: account and user ""); false on out of memory.
 */
bool sa_usums_key(sa_usums_t *s, uint32_t cid, const sa_rollup_rowkey_t *rk, sa_ukey_t *k);

/* Adds count GPUs over [start, end) (clipped to the range) to key k; false on out of memory. */
bool sa_usums_add(sa_usums_t *s, const sa_ukey_t *k, int64_t count, int64_t start, int64_t end);
/* Adds rate[r] of each TRES r < s->ntres over [start, end) (clipped to the range) to key k. */
bool sa_usums_add_rates(sa_usums_t *s, const sa_ukey_t *k, const int64_t rate[SA_TRES_N], int64_t start, int64_t end);
/* Adds v[r] TRES-seconds of each TRES r < s->ntres to key k in the segment holding t (within the range). */
bool sa_usums_add_secs(sa_usums_t *s, const sa_ukey_t *k, int64_t t, const int64_t v[SA_TRES_N]);
/* GPU-seconds of one key over [x, y), both boundaries. */
int64_t sa_usums_get(const sa_usums_t *s, const sa_uacc_t *a, int64_t x, int64_t y);
/* The TRES-seconds of TRES r of one key over [x, y) (0 for a TRES the sums do not hold). */
int64_t sa_usums_get_tres(const sa_usums_t *s, const sa_uacc_t *a, sa_rtres_t r, int64_t x, int64_t y);
/*
 * The rates of a rollup member record x (schema/jobdoc/sa_rollup.h) per TRES: GPUs, CPUs, MiB,
 * billing x 1000.
 */
void sa_usums_rates_of(const int64_t *x, int64_t rate[SA_TRES_N]);

/* ---- the scan (sa_usage_scan.c) ---------------------------------------------------------- */

/*
 * Adds the GPU runs of the job documents of the s->nclusters clusters (names interned
 * first in s->names) that overlap [s->b[0], s->b[nb - 1]) to s, keeping to the
 * accounts and users of o when given. as_of[i]: how far a still running run of
 * cluster i counts. GPU types by the one rule of schema/jobdoc/sa_runsrc.h.
 */
bool sa_usage_scan(sa_rdb_t *db, const sa_report_opts_t *o, const int64_t *as_of, sa_usums_t *s, sa_error_t *error);

/* ---- the rollups (sa_usage_roll.c) --------------------------------------------------------- */

/*
 * The same sums from the usage rollups slurm-ingest keeps (schema/jobdoc/sa_rollup.h): the
 * range's days by _id. *docs counts the rollup documents read.
 */
bool sa_usage_from_rollups(sa_rdb_t *db, const sa_report_opts_t *o, const int64_t *as_of, sa_usums_t *s,
                           size_t *docs, sa_error_t *error);

/* ---- the computation (sa_usage_calc.c) --------------------------------------------------- */

typedef struct {
    const sa_report_opts_t *o;
    double hpy;               /* hours per GPU-year */
    sa_rclusters_t clusters;  /* the clusters reported, in order */
    int64_t *as_of;           /* per cluster: its last observation of its jobs */
    sa_usums_t s;
    sa_rgu_t *rgu;
    sa_awards_t awards;
    bool *award_in;           /* per award: reported (overlaps the window, cluster and account reported) */
    bool rgu_cols;            /* RGU-years are shown (--unit rgu-years or an award in RGU-years) */
    bool member_cols;         /* an award gives its group's size: the per-member columns are shown */
    int64_t *wcache;          /* name id -> RGU weight in thousandths (-2: not looked up, -1: none) */
    size_t nwcache;
    sa_strv_t guessed;        /* GPU types weighted by a guess (sa_rgu_weight_on), sorted */
    int64_t guessed_secs;     /* their GPU-seconds in the range (sa_usage_guesses) */
    size_t docs_read;         /* rollup documents read (0: the job documents were) */
    bool want[SA_TRES_N];     /* the TRES -T asks for (gres/gpu when none) */
    double *cap_s;            /* -t percent: per cluster c and TRES r, cap_s[c * SA_TRES_N + r], the capacity
                                 in TRES-seconds over the window (the time series); < 0: not known */
    int64_t *cap_known_s;     /* per cluster: the seconds of the window its time series knows */
    const int64_t *extra_b;   /* more boundaries of the sums (utilization: hours, the series' known spans) */
    size_t nextra_b;
} sa_usage_t;


/* True when every cluster reported has rollups and --from-jobs was not given. */
bool sa_usage_rollups_usable(const sa_usage_t *u);
/* The sums of u: from the rollups when usable, else from the job documents. */
bool sa_usage_read(sa_rdb_t *db, sa_usage_t *u, sa_error_t *error);

/*
 * Starts a computation for the options o: loads the RGU weights and the awards. u is
 * cleared first; free it with sa_usage_clear() (also after a failure).
 */
bool sa_usage_load(sa_usage_t *u, const sa_report_opts_t *o, sa_error_t *error);
/*
 * Reads the clusters, interns them and sets the boundaries: everything
 * sa_usage_scan() needs. Warns (warn may be NULL) about clusters not in the archive.
 */
bool sa_usage_prepare(sa_usage_t *u, sa_rdb_t *db, FILE *warn, sa_error_t *error);
/* Frees what u holds (u may be all zero). */
void sa_usage_clear(sa_usage_t *u);

/* Index of a cluster by name, or SIZE_MAX. */
size_t sa_usage_cluster(const sa_usage_t *u, const char *name);

/* GPU-seconds, RGU-weighted GPU-seconds in thousandths, and GPU-seconds of types without a weight. */
typedef struct {
    int64_t secs, rgu_msecs, unweighted;
    int64_t guessed;          /* of secs: weighted by a guess (a bare MIG profile: the parent GPU not said) */
    int64_t tres[SA_TRES_N];  /* TRES-seconds of each TRES (tres[SA_TRES_GPU] = secs) */
} sa_usum_t;

/*
 * The capacity (sa_usage_cap.c): sets u->cap_s from the time series of each cluster.
 * required (-t percent): SA_ERR_USAGE (exit 2) when a cluster has none, no snapshot in
 * the window, or -T asks for mem or billing (the series holds no capacity of them);
 * else such a cluster's capacity is left unknown (< 0), and a cluster without a time
 * series is said on warn (may be NULL), one line.
 */
bool sa_usage_capacity(sa_usage_t *u, bool required, FILE *warn, sa_error_t *error);
/* A preamble line per cluster: its capacity and the time the series knows, or that it is not known. */
void sa_usage_capacity_lines(const sa_usage_t *u, sa_strv_t *p);
/* s's TRES r in percent of cluster c's capacity over the window (0 when it has none). */
double sa_usage_percent(const sa_usage_t *u, uint32_t c, sa_rtres_t r, const sa_usum_t *s);

/* True when s has use of a TRES the report asks for. */
bool sa_usage_has_use(const sa_usage_t *u, const sa_usum_t *s);

/* Adds the use of accumulator a over [x, y) to *s. */
void sa_usage_sum_add(sa_usage_t *u, sa_usum_t *s, const sa_uacc_t *a, int64_t x, int64_t y);
/* RGU weight of an interned type in thousandths; false when the type has none. */
bool sa_usage_type_weight(sa_usage_t *u, uint32_t t, int64_t *milli);
/*
 * The RGU weight of type t on cluster c (interned ids) in thousandths: the cluster's
 * table of the weights file first; *guess when the weight is a guess. False: no weight.
 */
bool sa_usage_weight_on(sa_usage_t *u, uint32_t c, uint32_t t, int64_t *milli, bool *guess);

double sa_usage_hours(int64_t secs);
double sa_usage_rgu_years(const sa_usage_t *u, const sa_usum_t *s);
/* A sum in a report unit. */
double sa_usage_in_unit(const sa_usage_t *u, sa_unit_t unit, const sa_usum_t *s);
const char *sa_unit_title(sa_unit_t unit); /* "GPU-years" */
/* A TRES's sum in a unit: GPUs as sa_usage_in_unit; cpu in core-, mem in GB- (1024 MiB), billing in billing-hours, minutes or years. */
double sa_usage_tres_in_unit(const sa_usage_t *u, sa_rtres_t r, sa_unit_t unit, const sa_usum_t *s);
/* "core-years" (the unit of TRES r's figures in unit). */
const char *sa_rtres_unit_title(sa_rtres_t r, sa_unit_t unit);

const char *sa_unit_key(sa_unit_t unit);   /* "gpu-years" */

/* The types without an RGU weight that have use in the range, sorted (appended to out). */
void sa_usage_unweighted(sa_usage_t *u, sa_strv_t *out);
/* Sets u->guessed and u->guessed_secs: the GPU types over the whole range weighted by a guess. */
void sa_usage_guesses(sa_usage_t *u);

/* A row of grouped use: the accumulators order[first .. first + count) share the grouping keys. */
typedef struct {
    sa_ukey_t k;         /* the grouping keys (the others unused) */
    size_t first, count;
    sa_usum_t window;    /* their use in the window */
} sa_ugroup_t;

/*
 * Groups the accumulators by the keys in by (SA_BY_*; clusters always): *order the
 * accumulators sorted (cluster as listed, then account, user, type), *groups those
 * with use in the window. The caller frees both.
 */
bool sa_usage_groups(sa_usage_t *u, unsigned by, size_t **order, sa_ugroup_t **groups, size_t *ngroups,
                     sa_error_t *error);

/* ---- awards ---- */

/* The TRES of an award's unit: gres/gpu (GPU- and RGU-years), cpu (core-years), billing (billing-years). */
sa_rtres_t sa_award_tres(const sa_award_t *a);

/* True if the accumulator falls in the award's scope (cluster, account, type glob, case-insensitive). */
bool sa_usage_award_matches(sa_usage_t *u, const sa_award_t *a, const sa_uacc_t *acc);
/* The use of the accumulators an award covers (cluster, account, type glob) over [x, y). */
sa_usum_t sa_usage_award_sum(sa_usage_t *u, const sa_award_t *a, int64_t x, int64_t y);
/* A sum in the award's unit (GPU-years or RGU-years). */
double sa_usage_award_units(const sa_usage_t *u, const sa_award_t *a, const sa_usum_t *s);

/* The computed figures of one award. */
typedef struct {
    int64_t to, recent_from;  /* as-of time; start of the recent rate */
    sa_usum_t window;         /* use in the window (within the award) */
    double used_window, used_since, target, pct, projected, projected_pct, elapsed_pct;
    bool has_pct;
    const char *status;       /* "not started"; "over" above over_pct of the target; "over pace" when the
                                 projection passes the award; "under" below under_pct; "on track" */
} sa_uaward_t;

void sa_usage_award(sa_usage_t *u, const sa_award_t *a, sa_uaward_t *f);

#endif
