/*
 * sa_health.c - `slurm-report health`: is the archive whole and fresh?
 *
 * health checks, per cluster (severity error makes the exit status
 * SA_EXIT_UNHEALTHY; warning and info do not):
 * - stale-ingest (error): a last_squeue_at / last_sinfo_at / last_sacct_at of the
 *   clusters document older than --stale (default 1 h) before "now"; a cluster
 *   named with -M that has no document; an archive without any cluster document. A source never ingested (no time) is
 *   not checked: a site may not capture sinfo or sacct.
 * - vanished-job: a job whose document is not final and carries vanished_at (squeue
 *   stopped listing it) - error once sacct had its chance to close it (an sacct
 *   ingest after vanished_at) or once it is older than --stale; warning before.
 * - reused-job-id: documents in jobs_superseded (a job id given to a new job):
 *   warning when some were last seen in the window, info otherwise. Normal after
 *   MaxJobId wraps; frequent reuse means slurmctld lost its state.
 * - failed-ingest (error): ingest runs with ok false that started in the window (read from
 *   the cluster's ingest_days of the window, by _id).
 * - time-series: the cluster has no time series (info: no DIR/CLUSTER.sqlite, as for a
 *   cluster ingested from sacct alone), or --sqlite does not exist or cannot be read
 *   (warning): the gpu-config-unknown check was not made; never a failure of health.
 * - gpu-config-unknown: in the time series (when the cluster has one), node-hours in the
 *   window on nodes whose GPUs no snapshot said (grouped sinfo --json, nothing carried):
 *   warning (utilization counts their GPU time nowhere); info for GPU-hours carried from
 *   an earlier per-node observation whose use is unknown.
 * - gpu-capacity (warning): a node whose runs in the window were allocated more GPU-time
 *   than the node had GPUs in the time series (its GPU-hours there, over the span the series
 *   covers; taken over its gaps at the rate of the known time), by more than 2 % and one
 *   GPU-hour: the runs' AllocTRES and the node's gres disagree (or a capture was wrong).
 *   Reads the runs with GPUs that overlap the window (their GPUs by type, interval and
 *   nodes) from the window's rollup members and open runs (a job one of whose records was
 *   written before 0.5.1, which kept no nodes: from its document; without the rollups: one
 *   query, on the indexes usage uses) and the series' hours by node; a run on several
 *   nodes gives each an equal share. Nodes the series does not know, or whose GPUs it
 *   does not know (grouped sinfo), are not checked.
 * - gpu-type-unknown (warning): GPU-hours in the window of runs whose GPUs neither the
 *   TRES nor their nodes type (usage --by gpu-type counts them as "unknown"): untyped
 *   AccountingStorageTRES on nodes whose GPU type the time series does not know.
 * The window defaults to the 24 hours before now.
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_jobview.h"
#include "sa_hostlist.h"
#include "sa_rollup_reader.h"
#include "sa_rutil.h"
#include "sa_usage.h"
#include "sa_vec.h"

/* ---- health ------------------------------------------------------------------------- */

enum { H_CLUSTER, H_CHECK, H_SEVERITY, H_SUBJECT, H_AT, H_DETAIL, H_N };

static const sa_col_t health_cols[H_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0, 0},   {"check", "Check", SA_COL_STR, 0, 0},
    {"severity", "Severity", SA_COL_STR, 0, SA_COL_BADGE}, {"subject", "Subject", SA_COL_STR, 0, 0},
    {"at", "At", SA_COL_STR, 0, 0},             {"detail", "Detail", SA_COL_STR, 0, 0},
};

const sa_col_t *sa_health_cols(size_t *n)
{
    *n = H_N;
    return health_cols;
}

typedef struct {
    sa_rtable_t *t;
    size_t errors, warnings;
    FILE *warn; /* what health leaves out, said in one line (may be NULL) */
} hctx_t;

static bool hrow(hctx_t *h, const char *cluster, const char *check, const char *sev, const char *subject, int64_t at,
                 const char *detail, sa_error_t *error)
{
    size_t r = sa_rtable_add_row(h->t);
    if (r == SIZE_MAX) {
        sa_error_nomem(error);
        return false;
    }
    sa_rtable_str(h->t, r, H_CLUSTER, cluster);
    sa_rtable_str(h->t, r, H_CHECK, check);
    sa_rtable_str(h->t, r, H_SEVERITY, sev);
    sa_rtable_str(h->t, r, H_SUBJECT, subject);
    if (at != SA_UNSET)
        sa_rtable_str(h->t, r, H_AT, sa_riso(at));
    sa_rtable_str(h->t, r, H_DETAIL, detail);
    if (strcmp(check, "summary") == 0)
        return true; /* counts the others */
    if (strcmp(sev, "error") == 0)
        h->errors++;
    else if (strcmp(sev, "warning") == 0)
        h->warnings++;
    return true;
}

/* "2h 5m" for a duration in seconds. */
static const char *fmt_age(int64_t s, char *buf, size_t sz)
{
    if (s < 0)
        s = 0;
    if (s >= 86400)
        snprintf(buf, sz, "%" PRId64 "d %" PRId64 "h", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        snprintf(buf, sz, "%" PRId64 "h %" PRId64 "m", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, sz, "%" PRId64 "m %" PRId64 "s", s / 60, s % 60);
    return buf;
}

typedef struct {
    hctx_t *h;
    const sa_report_opts_t *o;
    const sa_rcluster_t *c;
    int64_t start, end;
    size_t n, in_window;
    sa_strv_t ids;
    sa_jobview_t view; /* the job document at hand */
} check_ctx_t;

static bool on_vanished(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    const sa_jobview_t *j = &c->view;
    char subject[48], detail[512], age[32];
    bool closed_chance;

    if (!sa_jobview_read(&c->view, doc, error))
        return false;
    if (j->vanished_at == SA_UNSET || j->final)
        return true;
    closed_chance = (c->c->last_sacct_at != SA_UNSET && c->c->last_sacct_at > j->vanished_at) ||
                    c->o->now - j->vanished_at > c->o->stale_s;
    snprintf(subject, sizeof subject, "job %" PRId64, j->job_id);
    snprintf(detail, sizeof detail, "%s in the archive (user %s, account %s), not listed by squeue since %s ago; %s",
             j->state ? j->state : "?", j->user ? j->user : "?", j->account ? j->account : "?",
             fmt_age(c->o->now - j->vanished_at, age, sizeof age),
             closed_chance ? "sacct did not close it" : "waiting for sacct");
    return hrow(c->h, c->c->name, "vanished-job", closed_chance ? "error" : "warning", subject, j->vanished_at, detail,
                error);
}

/* The _ids of a live shard's jobs marked vanished, into the sa_strv_t ctx. */
static bool on_live_vanished(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error)
{
    for (size_t i = 0; i < d->nm; i++) {
        if (d->m[i].nrec && d->m[i].rec[SA_RR_ENDED_AT] >= 0 && !sa_strv_push(ctx, d->m[i].id))
            return sa_error_nomem(error);
    }
    return true;
}

static bool on_superseded(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    const sa_jobview_t *j = &c->view;
    if (!sa_jobview_read(&c->view, doc, error))
        return false;
    c->n++;
    if (j->seen_last != SA_UNSET && j->seen_last >= c->start) {
        char id[32];
        c->in_window++;
        snprintf(id, sizeof id, "%" PRId64, j->job_id);
        if (c->ids.n < 20 && !sa_strv_contains(&c->ids, id))
            sa_strv_push(&c->ids, id);
    }
    return true;
}

static bool on_failed_run(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    sa_ringest_run_t f;
    char detail[600], q[400];

    sa_ringest_run_read(doc, &f);
    snprintf(detail, sizeof detail, "ingest run failed: %s",
             f.error_text ? sa_error_quote(f.error_text, 300, q, sizeof q) : "(no error text)");
    return hrow(c->h, c->c->name, "failed-ingest", "error", "ingest run", f.started_at, detail, error);
}

/* The checks of one cluster. */
/* Sums of the "*" rows: node-hours of unknown GPU configuration, GPU-hours carried and of unknown use. */
typedef struct {
    double unknown_node_h, carried_h, use_unknown_h;
} gpucfg_sum_t;

static bool sum_gpu_config(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error)
{
    gpucfg_sum_t *g = ctx;
    (void)error;
    g->unknown_node_h += row->node_hours_gpu_unknown;
    g->carried_h += row->gpu_hours_carried;
    g->use_unknown_h += row->gpu_hours_use_unknown;
    return true;
}

static bool check_gpu_capacity(sa_rdb_t *db, sa_tsdb_t *ts, const char *cluster, bool lists, int64_t start,
                               int64_t end, hctx_t *h, sa_error_t *error);

/* gpu-config-unknown: nodes whose GPUs the time series does not know, in the window; then gpu-capacity. */
static bool check_gpu_config(sa_rdb_t *db, sa_rtsdbs_t *tsdbs, const sa_report_opts_t *o, const char *cluster,
                             bool lists, int64_t start, int64_t end, hctx_t *h, sa_error_t *error)
{
    gpucfg_sum_t g = {0, 0, 0};
    sa_tsdb_t *ts = NULL;
    char detail[512];

    if (!tsdbs->none && !sa_rtsdbs_get(tsdbs, o, cluster, false, &ts, error)) {
        /* a time series that cannot be read is this check's problem, not the archive's */
        if (error->domain == SA_ERR_NOMEM)
            return false;
        snprintf(detail, sizeof detail, "%.400s: the time series checks were not made", error->message);
        if (o->sqlite_path)
            tsdbs->none = true; /* the shared file: every cluster goes on without it */
        sa_error_clear(error);
        return hrow(h, cluster, "time-series", "warning", "time series", SA_UNSET, detail, error);
    }
    if (!ts) {
        /* a cluster ingested from sacct alone (no sinfo) has none: said, not an error */
        char why[600];
        snprintf(detail, sizeof detail, "%s: the time series checks were not made%s",
                 sa_rtsdbs_missing(tsdbs, o, cluster, why, sizeof why),
                 tsdbs->none ? "" : " (a cluster ingested from sacct alone has none)");
        sa_rtsdbs_left_out(h->warn, tsdbs, o, cluster, "the time series checks were not made");
        return hrow(h, cluster, "time-series", tsdbs->none ? "warning" : "info", "time series", SA_UNSET, detail,
                    error);
    }
    if (!sa_tsdb_state_hours(ts, cluster, start, end, SA_TSDB_BY_STATE, sum_gpu_config, &g, error))
        return false;
    if (g.unknown_node_h > 0) {
        snprintf(detail, sizeof detail,
                 "%.2f node-hours on nodes whose GPUs no snapshot said (grouped sinfo --json): their GPU time is "
                 "counted nowhere; capture sinfo -N --json, or give slurm-ingest --node-config",
                 g.unknown_node_h);
        if (!hrow(h, cluster, "gpu-config-unknown", "warning", "time series", SA_UNSET, detail, error))
            return false;
    }
    if (g.carried_h > 0) {
        snprintf(detail, sizeof detail,
                 "%.2f GPU-hours of GPUs carried from the nodes' last per-node observation; %.2f of them of "
                 "unknown use", g.carried_h, g.use_unknown_h);
        if (!hrow(h, cluster, "gpu-config-unknown", "info", "time series", SA_UNSET, detail, error))
            return false;
    }
    return check_gpu_capacity(db, ts, cluster, lists, start, end, h, error);
}

/* gpu-capacity: per node (interned names), GPU-seconds allocated to runs and GPU-hours in the series. */
typedef struct {
    sa_rintern_t names;
    double *alloc_s, *cap_h; /* by name id */
    bool *in_series, *cfg_unknown;
    uint32_t cap;
    int64_t lo, hi;          /* the span compared: the window within the series' first and last snapshot */
    sa_jobview_t view;
    sa_strv_t hosts;
} gpucap_t;

/* The slot of a node name (arrays grown as needed); UINT32_MAX on out of memory. */
static uint32_t gpucap_node(gpucap_t *g, const char *name)
{
    uint32_t id = sa_rintern(&g->names, name);
    if (id == UINT32_MAX)
        return id;
    if (id >= g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 64;
        while (cap <= id)
            cap *= 2;
        double *a = realloc(g->alloc_s, cap * sizeof *a), *c = a ? realloc(g->cap_h, cap * sizeof *c) : NULL;
        if (a)
            g->alloc_s = a;
        if (c)
            g->cap_h = c;
        bool *s = c ? realloc(g->in_series, cap * sizeof *s) : NULL, *u = NULL;
        if (s)
            g->in_series = s;
        if (s)
            u = realloc(g->cfg_unknown, cap * sizeof *u);
        if (!u)
            return UINT32_MAX;
        g->cfg_unknown = u;
        for (uint32_t i = g->cap; i < cap; i++) {
            g->alloc_s[i] = g->cap_h[i] = 0;
            g->in_series[i] = g->cfg_unknown[i] = false;
        }
        g->cap = cap;
    }
    return id;
}

static bool gpucap_hours(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error)
{
    gpucap_t *g = ctx;
    uint32_t id;
    if (!row->group)
        return true;
    if ((id = gpucap_node(g, row->group)) == UINT32_MAX) {
        sa_error_nomem(error);
        return false;
    }
    g->in_series[id] = true;
    g->cap_h[id] += row->gpu_hours_total;
    if (row->node_hours_gpu_unknown > 0)
        g->cfg_unknown[id] = true;
    return true;
}

/* Adds gpus / (its nodes) x (e - s) to each node of the hostlist; false on out of memory. */
static bool gpucap_add(gpucap_t *g, const char *hostlist, int64_t gpus, int64_t s, int64_t e, sa_error_t *error)
{
    sa_strv_clear(&g->hosts);
    sa_strv_init(&g->hosts);
    if (e <= s || !sa_hostlist_expand(hostlist, 100000, &g->hosts, NULL) || !g->hosts.n)
        return true; /* a hostlist this reader cannot expand: not this check's to judge */
    for (size_t k = 0; k < g->hosts.n; k++) {
        uint32_t id = gpucap_node(g, g->hosts.v[k]);
        if (id == UINT32_MAX)
            return sa_error_nomem(error);
        g->alloc_s[id] += (double)gpus / (double)g->hosts.n * (double)(e - s);
    }
    return true;
}

/* What gpucap_job reads of a job document. */
static void gpucap_projection(bson_t *proj)
{
    BSON_APPEND_INT32(proj, "runs.start", 1);
    BSON_APPEND_INT32(proj, "runs.end", 1);
    BSON_APPEND_INT32(proj, "runs.nodes", 1);
    BSON_APPEND_INT32(proj, "runs.gpus", 1);
}

/* Adds the GPU-time of a job's runs within [lo, hi) to their nodes (a running run: to hi). */
static bool gpucap_job(const bson_t *doc, void *ctx, sa_error_t *error)
{
    gpucap_t *g = ctx;

    if (!sa_jobview_read(&g->view, doc, error))
        return false;
    for (size_t i = 0; i < g->view.nruns; i++) {
        const sa_jobview_run_t *r = &g->view.runs[i];
        int64_t s = r->start, e = r->end == SA_UNSET ? g->hi : r->end;
        if (r->gpus <= 0 || !r->nodes || s == SA_UNSET)
            continue;
        if (s < g->lo)
            s = g->lo;
        if (e > g->hi)
            e = g->hi;
        if (!gpucap_add(g, r->nodes, r->gpus, s, e, error))
            return false;
    }
    return true;
}

typedef struct {
    uint32_t id;
    double ratio;
} gpucap_over_t;

static int gpucap_over_cmp(const void *x, const void *y)
{
    const gpucap_over_t *a = x, *b = y;
    return a->ratio > b->ratio ? -1 : a->ratio < b->ratio ? 1 : (a->id > b->id) - (a->id < b->id);
}

/* A run's GPU-time on one day (or open) in [lo, hi), as the members keep it: its hostlist (interned) and share. */
typedef struct {
    uint32_t job, hosts; /* interned: the job document's _id, its run's hostlist */
    int64_t gpus, s, e;
} gpurec_t;

typedef struct {
    gpucap_t *g;
    const char *cluster;
    sa_rintern_t ids, hosts;
    gpurec_t *rec;
    size_t nrec, cap;
    bool *unkept;     /* by job (interned id, one each): a record of it kept no hosts (written before 0.5.1) */
    size_t ucap;
} gpu_members_t;

static bool on_gpu_members(const sa_rollup_doc_t *d, void *ctx, sa_error_t *error)
{
    gpu_members_t *gm = ctx;
    bool open = d->kind == SA_ROLLUP_K_OPEN;
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            int64_t s = x[SA_RR_START], e = open ? gm->g->hi : x[SA_RR_END];
            uint32_t job;
            if (x[SA_RR_GPUS] <= 0 || s >= gm->g->hi || e <= gm->g->lo || x[SA_RR_HOSTS] == -1)
                continue; /* no GPU, not in the window, or no nodes said (as the documents would say) */
            size_t known = gm->ids.n;
            if ((job = sa_rintern(&gm->ids, d->m[i].id)) == UINT32_MAX)
                return sa_error_nomem(error);
            if (gm->ids.n > known) { /* a job not seen before: interned ids are dense, a flag each */
                if (!SA_VEC_GROW(gm->unkept, gm->ucap, job, 1, 64))
                    return sa_error_nomem(error);
                gm->unkept[job] = false;
            }
            if (x[SA_RR_HOSTS] == SA_RR_HOSTS_UNKEPT) {
                gm->unkept[job] = true;
                continue;
            }
            if (!SA_VEC_GROW(gm->rec, gm->cap, gm->nrec, 1, 64))
                return sa_error_nomem(error);
            gm->rec[gm->nrec] = (gpurec_t){job, sa_rintern(&gm->hosts, d->hosts[x[SA_RR_HOSTS]]), x[SA_RR_GPUS],
                                           s > gm->g->lo ? s : gm->g->lo, e < gm->g->hi ? e : gm->g->hi};
            if (gm->rec[gm->nrec++].hosts == UINT32_MAX)
                return sa_error_nomem(error);
        }
    }
    return true;
}

/*
 * The GPU runs in [g->lo, g->hi) from the window's members and open runs, whose records
 * keep each GPU run's nodes: no job document read, but those of jobs one of whose records
 * was written before 0.5.1 (all of that job's runs then from its document).
 */
static bool gpucap_members(sa_rdb_t *db, const char *cluster, gpucap_t *g, sa_error_t *error)
{
    gpu_members_t gm;
    sa_strv_t docs[2];
    bson_t proj = BSON_INITIALIZER;
    bool ok;

    memset(&gm, 0, sizeof gm);
    gm.g = g;
    gm.cluster = cluster;
    sa_rintern_init(&gm.ids);
    sa_rintern_init(&gm.hosts);
    sa_strv_init(&docs[0]);
    sa_strv_init(&docs[1]);
    ok = sa_rollup_read(db, cluster, g->lo, g->hi, true, NULL, on_gpu_members, &gm, NULL, error);
    for (size_t i = 0; ok && i < gm.nrec; i++) {
        const gpurec_t *r = &gm.rec[i];
        if (!gm.unkept[r->job])
            ok = gpucap_add(g, sa_rintern_str(&gm.hosts, r->hosts), r->gpus, r->s, r->e, error);
    }
    for (uint32_t j = 0; ok && j < gm.ids.n; j++) {
        const char *id = sa_rintern_str(&gm.ids, j);
        if (gm.unkept[j] && !sa_strv_push(&docs[sa_rollup_is_jobs_id(cluster, id) ? 0 : 1], id))
            ok = sa_error_nomem(error);
    }
    gpucap_projection(&proj);
    ok = ok && (!docs[0].n || sa_rollup_read_jobs(db, "jobs", &docs[0], &proj, gpucap_job, g, error)) &&
         (!docs[1].n || sa_rollup_read_jobs(db, "jobs_superseded", &docs[1], &proj, gpucap_job, g, error));
    bson_destroy(&proj);
    sa_strv_clear(&docs[0]);
    sa_strv_clear(&docs[1]);
    sa_rintern_clear(&gm.ids);
    sa_rintern_clear(&gm.hosts);
    free(gm.rec);
    free(gm.unkept);
    return ok;
}

/* The job documents with GPU runs in [lo, hi) through fn, by the usage query's shape (no rollups). */
static bool each_gpu_job(sa_rdb_t *db, const char *cluster, int64_t lo, int64_t hi, sa_rdb_doc_cb fn, void *ctx,
                         sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj = BSON_INITIALIZER, sub, or, alt;
    bool ok;

    gpucap_projection(&proj);
    /* the runs with GPUs overlapping [lo, hi): the shape of the usage scan's filter (its indexes) */
    BSON_APPEND_UTF8(&f, "cluster", cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&f, "runs.start", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$lt", hi * 1000);
    bson_append_document_end(&f, &sub);
    BSON_APPEND_DOCUMENT_BEGIN(&f, "runs.gpus", &sub);
    BSON_APPEND_INT32(&sub, "$gt", 0);
    bson_append_document_end(&f, &sub);
    BSON_APPEND_ARRAY_BEGIN(&f, "$or", &or);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "0", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "runs.end", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", lo * 1000);
    bson_append_document_end(&alt, &sub);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "1", &alt);
    sa_rbson_append_final_states(&alt, "$nin");
    bson_append_document_end(&or, &alt);
    bson_append_array_end(&f, &or);
    BSON_APPEND_DOCUMENT(&opts, "projection", &proj);
    ok = sa_rdb_each(db, "jobs", &f, &opts, fn, ctx, error) &&
         sa_rdb_each(db, "jobs_superseded", &f, &opts, fn, ctx, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    bson_destroy(&proj);
    return ok;
}

/*
 * gpu-capacity: per node, the GPU-time allocated to runs against the node's GPUs in the
 * time series, over the part of the window the series covers.
 */
static bool check_gpu_capacity(sa_rdb_t *db, sa_tsdb_t *ts, const char *cluster, bool lists, int64_t start,
                               int64_t end, hctx_t *h, sa_error_t *error)
{
    gpucap_t g;
    sa_tsdb_coverage_t cov;
    gpucap_over_t *over = NULL;
    size_t nover = 0;
    double scale = 1;
    bool ok = false;
    char detail[512];

    memset(&g, 0, sizeof g);
    sa_rintern_init(&g.names);
    sa_jobview_init(&g.view);
    sa_strv_init(&g.hosts);
    if (!sa_tsdb_coverage(ts, cluster, start, end, &cov, error))
        goto done;
    if (cov.first == SA_UNSET || cov.known_s <= 0) {
        ok = true; /* nothing to compare with */
        goto done;
    }
    g.lo = cov.first > start ? cov.first : start;
    g.hi = cov.last < end ? cov.last : end;
    if (g.hi <= g.lo) {
        ok = true;
        goto done;
    }
    /* the series counts no GPU in its gaps: the node's GPUs there taken at the rate of the known time */
    if (cov.gap_s > 0 && (g.hi - g.lo) > cov.gap_s)
        scale = (double)(g.hi - g.lo) / (double)(g.hi - g.lo - cov.gap_s);
    if (!sa_tsdb_state_hours(ts, cluster, g.lo, g.hi, SA_TSDB_BY_NODE, gpucap_hours, &g, error))
        goto done;
    if (!(lists ? gpucap_members(db, cluster, &g, error)
                : each_gpu_job(db, cluster, g.lo, g.hi, gpucap_job, &g, error)))
        goto done;
    over = calloc(g.names.n + 1, sizeof *over);
    if (!over) {
        sa_error_nomem(error);
        goto done;
    }
    for (uint32_t i = 0; i < g.names.n; i++) {
        double alloc_h = g.alloc_s[i] / 3600.0, cap_h = g.cap_h[i] * scale;
        if (!g.in_series[i] || g.cfg_unknown[i] || alloc_h <= cap_h * 1.02 + 1.0)
            continue;
        over[nover].id = i;
        over[nover++].ratio = cap_h > 0 ? alloc_h / cap_h : 1e300;
    }
    qsort(over, nover, sizeof *over, gpucap_over_cmp);
    ok = true;
    for (size_t k = 0; ok && k < nover; k++) {
        uint32_t i = over[k].id;
        double alloc_h = g.alloc_s[i] / 3600.0, cap_h = g.cap_h[i] * scale;
        char pct[32];
        if (cap_h > 0)
            snprintf(pct, sizeof pct, "%.0f %%", 100.0 * alloc_h / cap_h);
        else
            snprintf(pct, sizeof pct, "no GPU in the series");
        snprintf(detail, sizeof detail,
                 "runs were allocated %.2f GPU-hours on this node from %s to %s, the time series has %.2f GPU-hours "
                 "of its GPUs (%s): the jobs' AllocTRES and the node's gres disagree; usage counts the allocations, "
                 "utilization the node's GPUs",
                 alloc_h, sa_riso(g.lo), sa_riso(g.hi), cap_h, pct);
        ok = hrow(h, cluster, "gpu-capacity", "warning", sa_rintern_str(&g.names, i), SA_UNSET, detail, error);
    }
done:
    free(over);
    free(g.alloc_s);
    free(g.cap_h);
    free(g.in_series);
    free(g.cfg_unknown);
    sa_rintern_clear(&g.names);
    sa_jobview_clear(&g.view);
    sa_strv_clear(&g.hosts);
    return ok;
}

/*
 * gpu-type-unknown: the usage computation over the window for this cluster alone, and
 * the GPU-hours it could not give a type ("unknown").
 */
static bool check_gpu_type(sa_rdb_t *db, const sa_report_opts_t *o, const char *cluster,
                           int64_t start, int64_t end, hctx_t *h, sa_error_t *error)
{
    sa_report_opts_t uo = *o; /* shallow: the strings stay o's; clusters, window and awards are this check's */
    sa_usage_t u;
    int64_t secs = 0, all = 0;
    char detail[512];
    bool ok;

    memset(&u, 0, sizeof u);
    sa_strv_init(&uo.clusters);
    sa_strv_init(&uo.accounts);
    sa_strv_init(&uo.users);
    uo.start = start;
    uo.end = end;
    uo.allocations_path = NULL;
    ok = sa_strv_push(&uo.clusters, cluster) && sa_usage_load(&u, &uo, error) &&
         sa_usage_prepare(&u, db, NULL, error) && sa_usage_read(db, &u, error);
    for (size_t i = 0; ok && i < u.s.nacc; i++) {
        int64_t v = sa_usums_get(&u.s, &u.s.acc[i], start, end);
        all += v;
        if (u.s.acc[i].k.t == u.s.unknown_id)
            secs += v;
    }
    sa_usage_clear(&u);
    sa_strv_clear(&uo.clusters);
    if (!ok || secs == 0)
        return ok;
    snprintf(detail, sizeof detail,
             "%.2f of %.2f GPU-hours in the window are of runs whose GPU type neither the TRES nor their nodes "
             "say (usage counts them as unknown): type the GPUs in AccountingStorageTRES, or capture the "
             "nodes per node (sinfo -N --json, slurm-ingest --node-config)",
             sa_usage_hours(secs), sa_usage_hours(all));
    return hrow(h, cluster, "gpu-type-unknown", "warning", "jobs", SA_UNSET, detail, error);
}

static bool check_cluster(sa_rdb_t *db, sa_rtsdbs_t *tsdbs, const sa_report_opts_t *o, const sa_rcluster_t *cl,
                          int64_t start, int64_t end, hctx_t *h, sa_error_t *error)
{
    static const char *const sources[3] = {"squeue", "sinfo", "sacct"};
    int64_t times[3] = {cl->last_squeue_at, cl->last_sinfo_at, cl->last_sacct_at};
    size_t e0 = h->errors, w0 = h->warnings;
    check_ctx_t c = {.h = h, .o = o, .c = cl, .start = start, .end = end};
    bool lists = !o->from_jobs && cl->rollup_version >= SA_ROLLUP_VERSION;
    const sa_rdb_runs_query_t failed = {.from = start, .to = end, .ok = 0, .newest_first = false, .limit = 0};
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    char detail[512], age[32], lim[32];
    bool ok = false;

    sa_strv_init(&c.ids);
    sa_jobview_init(&c.view);
    /* freshness */
    if (!cl->in_archive) {
        if (!hrow(h, cl->name, "stale-ingest", "error", "cluster", SA_UNSET,
                  "no clusters document: slurm-ingest never ran for this cluster (or another --db)", error))
            goto done;
    }
    for (int i = 0; i < 3; i++) {
        if (times[i] == SA_UNSET || o->now - times[i] <= o->stale_s)
            continue;
        snprintf(detail, sizeof detail, "last %s ingest %s ago (limit %s)", sources[i],
                 fmt_age(o->now - times[i], age, sizeof age), fmt_age(o->stale_s, lim, sizeof lim));
        if (!hrow(h, cl->name, "stale-ingest", "error", sources[i], times[i], detail, error))
            goto done;
    }
    /* vanished unfinished jobs: the live shards' jobs marked vanished, read by _id; else a query */
    if (lists) {
        sa_strv_t ids;
        sa_strv_init(&ids);
        ok = sa_rollup_read_lists(db, cl->name, true, 0, 0, on_live_vanished, &ids, NULL, error) &&
             sa_rollup_read_jobs(db, "jobs", &ids, NULL, on_vanished, &c, error);
        sa_strv_clear(&ids);
        if (!ok)
            goto done;
        ok = false;
    } else {
        BSON_APPEND_UTF8(&f, "cluster", cl->name);
        BSON_APPEND_DOCUMENT_BEGIN(&f, "vanished_at", &sub);
        BSON_APPEND_BOOL(&sub, "$exists", true);
        bson_append_document_end(&f, &sub);
        sa_rbson_append_final_states(&f, "$nin");
        BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
        BSON_APPEND_INT32(&sub, "job_id", 1);
        bson_append_document_end(&opts, &sub);
        if (!sa_rdb_each(db, "jobs", &f, &opts, on_vanished, &c, error))
            goto done;
    }
    /* reused job ids */
    bson_reinit(&f);
    bson_reinit(&opts);
    BSON_APPEND_UTF8(&f, "cluster", cl->name);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &sub);
    BSON_APPEND_INT32(&sub, "job_id", 1);
    BSON_APPEND_INT32(&sub, "seen", 1);
    bson_append_document_end(&opts, &sub);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "job_id", 1);
    bson_append_document_end(&opts, &sub);
    if (!sa_rdb_each(db, "jobs_superseded", &f, &opts, on_superseded, &c, error))
        goto done;
    if (c.n) {
        char *ids = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&ids, &len);
        for (size_t i = 0; m && i < c.ids.n; i++)
            fprintf(m, "%s%s", i ? "," : "", c.ids.v[i]);
        if (m)
            fclose(m);
        snprintf(detail, sizeof detail, "%zu document(s) of jobs whose id was given to a later job; %zu last seen in "
                                        "the window%s%s%s",
                 c.n, c.in_window, c.in_window ? " (ids " : "", c.in_window ? (ids ? ids : "") : "",
                 c.in_window ? (c.in_window > c.ids.n ? ", ...)" : ")") : "");
        free(ids);
        if (!hrow(h, cl->name, "reused-job-id", c.in_window ? "warning" : "info", "jobs_superseded", SA_UNSET, detail,
                  error))
            goto done;
    }
    /* failed ingest runs */
    if (!sa_rdb_ingest_runs(db, cl, &failed, on_failed_run, &c, error))
        goto done;
    if (!check_gpu_config(db, tsdbs, o, cl->name, lists, start, end, h, error) ||
        (cl->in_archive && !check_gpu_type(db, o, cl->name, start, end, h, error)))
        goto done;
    /* the cluster's summary */
    snprintf(detail, sizeof detail, "%zu error(s), %zu warning(s)", h->errors - e0, h->warnings - w0);
    ok = hrow(h, cl->name, "summary", h->errors > e0 ? "error" : h->warnings > w0 ? "warning" : "ok", "cluster",
              SA_UNSET, detail, error);
done:
    sa_strv_clear(&c.ids);
    sa_jobview_clear(&c.view);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

bool sa_report_health(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    sa_rtsdbs_t tsdbs;
    sa_rtable_t t;
    hctx_t h;
    sa_strv_t preamble;
    int64_t start = o->start, end = o->end;
    json_t *extra = NULL;
    bool ok = false;
    char lim[32];

    (void)warn;
    *healthy = false;
    sa_rtsdbs_init(&tsdbs);
    sa_rtable_init(&t, health_cols, H_N);
    sa_strv_init(&preamble);
    h.t = &t;
    h.errors = h.warnings = 0;
    h.warn = warn;
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for health", sa_format_name(o->format));
        goto done;
    }
    if (end == SA_UNSET)
        end = o->now;
    if (start == SA_UNSET)
        start = end - 86400;
    /* --sqlite naming a file that is not there (a cluster ingested from sacct alone has no
     * time series): health goes on and says so per cluster */
    if (o->sqlite_path && access(o->sqlite_path, F_OK) != 0)
        tsdbs.none = true;
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    for (size_t i = 0; i < cl.n; i++) {
        if (!check_cluster(db, &tsdbs, o, &cl.v[i], start, end, &h, error))
            goto done;
    }
    if (!cl.n && !hrow(&h, "-", "stale-ingest", "error", "archive", SA_UNSET,
                       "no clusters document at all: nothing was ever ingested here (wrong --db or URI?)", error))
        goto done;
    *healthy = h.errors == 0;
    sa_rpreamble_add(&preamble, "Archive health at %s: %s (%zu error(s), %zu warning(s) over %zu cluster(s))",
                    sa_riso(o->now), *healthy ? "OK" : "UNHEALTHY", h.errors, h.warnings, cl.n);
    sa_rpreamble_add(&preamble, "Failed ingest runs counted from %s to %s; ingest older than %s is stale; "
                               "errors make the exit status %d.",
                    sa_riso(start), sa_riso(end), fmt_age(o->stale_s, lim, sizeof lim), SA_EXIT_UNHEALTHY);
    extra = json_object();
    json_object_set_new(extra, "now", json_string(sa_riso(o->now)));
    json_object_set_new(extra, "healthy", json_boolean(*healthy));
    json_object_set_new(extra, "errors", json_integer((json_int_t)h.errors));
    json_object_set_new(extra, "warnings", json_integer((json_int_t)h.warnings));
    json_object_set_new(extra, "period", sa_rjson_period(start, end));
    json_object_set_new(extra, "stale_seconds", json_integer((json_int_t)o->stale_s));
    {
        sa_rdoc_t doc = {.kind = "health", .title = "slurm-report: archive health", .preamble = &preamble, .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    sa_rclusters_clear(&cl);
    sa_rtsdbs_clear(&tsdbs);
    sa_rdb_close(db);
    return ok;
}

