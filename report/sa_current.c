/*
 * sa_current.c - `slurm-report current`: job counts of the latest snapshot and
 * finished jobs since a time, per partition, account and user; as a table (every
 * format of sa_render.h) or as a node_exporter textfile (--format prometheus).
 *
 * "The latest snapshot" of a cluster is what its last complete squeue listing
 * showed: the documents that are not final and carry no vanished_at (slurm-ingest
 * marks every unfinished job a listing omits). Their state is the one that listing
 * (or a later sacct) gave. Finished jobs: final documents (jobs and jobs_superseded)
 * whose end is at or after --since (default now - 24 h).
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_rcommon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sa_cw.h"
#include "sa_jobview.h"
#include "sa_prom.h"
#include "sa_rollup_reader.h"
#include "sa_rutil.h"
#include "sa_vec.h"

enum { K_CLUSTER, K_SECTION, K_BY, K_KEY, K_STATE, K_JOBS, K_GPUS, K_N };

static const sa_col_t current_cols[K_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0, 0}, {"section", "Jobs", SA_COL_STR, 0, 0},
    {"by", "By", SA_COL_STR, 0, 0},           {"key", "Name", SA_COL_STR, 0, 0},
    {"state", "State", SA_COL_STR, 0, 0},     {"jobs", "Count", SA_COL_INT, 0, 0},
    {"gpus", "GPUs", SA_COL_INT, 0, 0},
};

const sa_col_t *sa_current_cols(size_t *n)
{
    *n = K_N;
    return current_cols;
}

/* One counted observation: (section, by, key, state) as interned ids. */
typedef struct {
    uint32_t sect, by, key, state;
    int64_t count, gpus, cpus, mem_mb; /* cpus, mem_mb: the current jobs' (sa_rollup_list_cpus) */
} tally_t;

typedef struct {
    sa_rintern_t names;
    tally_t *v;
    size_t n, cap;
    unsigned by;
    uint32_t sect;
    sa_jobview_t view; /* the job document at hand */
} cur_ctx_t;

/* A job's GPUs, CPUs and memory (MiB), as its job list records them. */
typedef struct {
    int64_t gpus, cpus, mem_mb;
} res_t;

/* Records one job of the current section under (by, key, state): merged and counted later. */
static bool tally_add(cur_ctx_t *c, const char *by, const char *key, const char *state, const res_t *r,
                      sa_error_t *error)
{
    if (!SA_VEC_GROW(c->v, c->cap, c->n, 1, 256))
        return sa_error_nomem(error);
    c->v[c->n].sect = c->sect;
    c->v[c->n].by = sa_rintern(&c->names, by);
    c->v[c->n].key = sa_rintern(&c->names, key ? key : "");
    c->v[c->n].state = sa_rintern(&c->names, state ? state : "?");
    c->v[c->n].count = 1;
    c->v[c->n].gpus = r->gpus;
    c->v[c->n].cpus = r->cpus;
    c->v[c->n].mem_mb = r->mem_mb;
    c->n++;
    return true;
}

/* One job counted under its groupings, from a document or a job list. */
static bool tally_job(cur_ctx_t *c, const char *partition, const char *account, const char *user, const char *state,
                      const res_t *r, sa_error_t *error)
{
    return ((c->by & SA_BY_PARTITION) == 0 || tally_add(c, "partition", partition, state, r, error)) &&
           ((c->by & SA_BY_ACCOUNT) == 0 || tally_add(c, "account", account, state, r, error)) &&
           ((c->by & SA_BY_USER) == 0 || tally_add(c, "user", user, state, r, error)) &&
           tally_add(c, "all", "", state, r, error);
}

static bool on_job(const bson_t *doc, void *vctx, sa_error_t *error)
{
    cur_ctx_t *c = vctx;
    const sa_jobview_t *j = &c->view;
    res_t r;
    if (!sa_jobview_read(&c->view, doc, error))
        return false;
    /* a pending job's GPUs are those it asks for; the others' those of their (last) run */
    r.gpus = j->state && strcmp(j->state, "PENDING") == 0 ? j->req_gpus : j->gpus;
    r.cpus = sa_rollup_list_cpus(j);
    r.mem_mb = sa_rollup_list_mem_mb(j);
    return tally_job(c, j->partition, j->account, j->user, j->state, &r, error);
}

/* Orders tallies by section (current first), by (partition, account, user, all), key, state (names: ctx's). */
static int tally_cmp(const void *x, const void *y, void *ctx)
{
    const tally_t *a = x, *b = y;
    const cur_ctx_t *cur = ctx;
    static const char *const by_order[] = {"partition", "account", "user", "all"};
    int r;
    if (a->sect != b->sect)
        return a->sect < b->sect ? -1 : 1;
    if (a->by != b->by) {
        const char *ab = sa_rintern_str(&cur->names, a->by), *bb = sa_rintern_str(&cur->names, b->by);
        int ia = 0, ib = 0;
        for (int i = 0; i < 4; i++) {
            if (strcmp(ab, by_order[i]) == 0)
                ia = i;
            if (strcmp(bb, by_order[i]) == 0)
                ib = i;
        }
        return ia < ib ? -1 : 1;
    }
    if ((r = strcmp(sa_rintern_str(&cur->names, a->key), sa_rintern_str(&cur->names, b->key))))
        return r;
    return strcmp(sa_rintern_str(&cur->names, a->state), sa_rintern_str(&cur->names, b->state));
}

/* Merges equal tallies (after sorting) in place. */
static void tally_merge(cur_ctx_t *c)
{
    size_t n = 0;
    if (!c->n)
        return;
    qsort_r(c->v, c->n, sizeof *c->v, tally_cmp, c);
    for (size_t i = 0; i < c->n; i++) {
        if (n && tally_cmp(&c->v[n - 1], &c->v[i], c) == 0) {
            c->v[n - 1].count += c->v[i].count;
            c->v[n - 1].gpus += c->v[i].gpus;
            c->v[n - 1].cpus += c->v[i].cpus;
            c->v[n - 1].mem_mb += c->v[i].mem_mb;
        }
        else
            c->v[n++] = c->v[i];
    }
    c->n = n;
}

/* One job metric of a tally: slurm_archive_[BY_]NAME{cluster[,BY=key],state}. */
static bool prom_job_metric(sa_prom_t *p, const char *cluster, const char *by, const char *key, const char *state,
                            const char *name, double v)
{
    bool all = strcmp(by, "all") == 0;
    char metric[64];
    snprintf(metric, sizeof metric, "slurm_archive_%s%s%s", all ? "" : by, all ? "" : "_", name);
    return all ? sa_prom_add(p, metric, v, false, "cluster", cluster, "state", state, NULL)
               : sa_prom_add(p, metric, v, false, "cluster", cluster, by, key, "state", state, NULL);
}

/*
 * The job metrics of one cluster's tallies: counts per grouping; of the current jobs also
 * their GPUs, CPUs and memory (asked for while pending: a partition's pending resources).
 */
static bool prom_jobs(sa_prom_t *p, const char *cluster, const cur_ctx_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const tally_t *t = &c->v[i];
        const char *by = sa_rintern_str(&c->names, t->by), *key = sa_rintern_str(&c->names, t->key);
        const char *state = sa_rintern_str(&c->names, t->state);
        if (!prom_job_metric(p, cluster, by, key, state, t->sect ? "finished_jobs" : "jobs", (double)t->count))
            return false;
        if (!t->sect && (!prom_job_metric(p, cluster, by, key, state, "job_gpus", (double)t->gpus) ||
                         !prom_job_metric(p, cluster, by, key, state, "job_cpus", (double)t->cpus) ||
                         !prom_job_metric(p, cluster, by, key, state, "job_memory_bytes",
                                          (double)t->mem_mb * 1048576.0)))
            return false;
    }
    return true;
}

/*
 * The snapshot's figures, the one function both exports format (sa_prom.h): the jobs of
 * every cluster, its nodes, CPUs, GPUs and scheduler from its time series (when it has
 * one), its ingester. *out: a new sa_prom_t (NULL on failure).
 */
static bool figures(const sa_report_opts_t *o, sa_rdb_t *db, const sa_rclusters_t *cl, cur_ctx_t *per,
                    int64_t since, sa_prom_t **out, sa_error_t *error)
{
    sa_prom_t *p = sa_prom_new();
    sa_rtsdbs_t tsdbs;
    bool ok = p != NULL || sa_error_nomem(error);

    sa_rtsdbs_init(&tsdbs);
    for (size_t ci = 0; ok && ci < cl->n; ci++) {
        sa_tsdb_t *ts;
        ok = prom_jobs(p, cl->v[ci].name, &per[ci]) &&
             sa_prom_add(p, "slurm_archive_finished_since_timestamp_seconds", (double)since, false, "cluster",
                         cl->v[ci].name, NULL);
        if (!ok) {
            sa_error_nomem(error);
            break;
        }
        ok = sa_rtsdbs_get(&tsdbs, o, cl->v[ci].name, false, &ts, error) && (!ts || sa_prom_nodes(p, ts, cl->v[ci].name, o->per_node, error)) &&
             sa_prom_ingest(p, db, &cl->v[ci], o->now, error);
    }
    if (ok && !sa_prom_add(p, "slurm_archive_report_timestamp_seconds", (double)o->now, false, NULL)) {
        sa_error_nomem(error);
        ok = false;
    }
    sa_rtsdbs_clear(&tsdbs);
    if (!ok) {
        sa_prom_free(p);
        p = NULL;
    }
    *out = p;
    return ok;
}

/*
 * The figures (figures()) formatted: the node_exporter textfile (--prometheus), the
 * embedded metric format (--cloudwatch-emf), or sent to CloudWatch (--cloudwatch, nothing
 * written to out; the credentials were loaded before the archive was read).
 */
static bool export_figures(const sa_report_opts_t *o, sa_rdb_t *db, const sa_rclusters_t *cl, cur_ctx_t *per,
                           int64_t since, const sa_aws_creds_t *creds, FILE *out, sa_error_t *error)
{
    sa_prom_t *p = NULL;
    sa_cw_set_t set;
    bool ok;

    sa_cw_set_init(&set);
    ok = figures(o, db, cl, per, since, &p, error);
    if (ok && !o->cloudwatch && !sa_prom_write(p, out)) {
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
        ok = false;
    }
    if (ok && o->cloudwatch) {
        const char *ns = o->cw_namespace ? o->cw_namespace : "Slurm";
        ok = sa_cw_from_prom(p, o->now, &set, error);
        if (ok && o->cloudwatch == SA_CW_EMF)
            ok = sa_cw_write_emf(&set, ns, out, error);
        else if (ok) {
            sa_cw_target_t t = {o->cw_region, o->cw_endpoint, ns, 0, 0, 0, 0};
            ok = sa_cw_put(&t, creds, &set, error);
            if (ok && o->verbose)
                fprintf(o->verbose, "# CloudWatch: %zu metric data in %zu request(s), namespace %s\n", set.n,
                        t.requests, ns);
        }
    }
    sa_cw_set_clear(&set);
    sa_prom_free(p);
    return ok;
}

typedef struct {
    cur_ctx_t *c;
    int64_t since, now;
} list_ctx_t;

/*
 * The records of a job list document: a live shard's jobs not marked vanished (section 0),
 * an ended day's jobs that ended in [since, now) (section 1).
 */
static bool on_list(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    list_ctx_t *l = vctx;
    bool live = d->kind == SA_ROLLUP_K_LIVE;

    l->c->sect = live ? 0 : 1;
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            char *const *k = d->keys[x[SA_RR_KEY]].s;
            const char *state = x[SA_RR_STATE] >= 0 ? d->states[x[SA_RR_STATE]] : NULL;
            const res_t res = {x[SA_RR_GPUS], x[SA_RR_CPUS], x[SA_RR_MEM]};
            if (live ? x[SA_RR_ENDED_AT] >= 0 : (x[SA_RR_END] < l->since || x[SA_RR_END] >= l->now))
                continue;
            if (!tally_job(l->c, k[2][0] ? k[2] : NULL, k[0][0] ? k[0] : NULL, k[1][0] ? k[1] : NULL, state,
                           &res, error))
                return false;
        }
    }
    return true;
}

/* count_cluster from the cluster's job lists (schema/jobdoc/sa_rollup.h): its live shards and the days since. */
static bool count_cluster_lists(sa_rdb_t *db, const char *cluster, int64_t since, int64_t now, cur_ctx_t *c,
                                size_t *docs, sa_error_t *error)
{
    list_ctx_t l = {c, since, now};
    if (!sa_rollup_read_lists(db, cluster, true, since, now, on_list, &l, docs, error))
        return false;
    tally_merge(c);
    return true;
}

/* Counts the jobs of cluster: those of its latest snapshot (section 0), those finished in [since, now) (1). */
static bool count_cluster(sa_rdb_t *db, const char *cluster, int64_t since, int64_t now, cur_ctx_t *c,
                          sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    bool ok;

    /* the latest snapshot */
    BSON_APPEND_UTF8(&f, "cluster", cluster);
    sa_rbson_append_final_states(&f, "$nin");
    BSON_APPEND_DOCUMENT_BEGIN(&f, "vanished_at", &sub);
    BSON_APPEND_BOOL(&sub, "$exists", false);
    bson_append_document_end(&f, &sub);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &sub);
    BSON_APPEND_INT32(&sub, "state", 1);
    BSON_APPEND_INT32(&sub, "partition", 1);
    BSON_APPEND_INT32(&sub, "account", 1);
    BSON_APPEND_INT32(&sub, "user", 1);
    BSON_APPEND_INT32(&sub, "gpus", 1);
    BSON_APPEND_INT32(&sub, "req.gpus", 1);
    BSON_APPEND_INT32(&sub, "cpus", 1);
    BSON_APPEND_INT32(&sub, "req.cpus", 1);
    BSON_APPEND_INT32(&sub, "req.mem_mb", 1);
    bson_append_document_end(&opts, &sub);
    c->sect = 0;
    ok = sa_rdb_each(db, "jobs", &f, &opts, on_job, c, error);
    /* finished since */
    bson_reinit(&f);
    BSON_APPEND_UTF8(&f, "cluster", cluster);
    sa_rbson_append_final_states(&f, "$in");
    BSON_APPEND_DOCUMENT_BEGIN(&f, "end", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", since * 1000);
    BSON_APPEND_DATE_TIME(&sub, "$lt", now * 1000);
    bson_append_document_end(&f, &sub);
    c->sect = 1;
    ok = ok && sa_rdb_each(db, "jobs", &f, &opts, on_job, c, error) &&
         sa_rdb_each(db, "jobs_superseded", &f, &opts, on_job, c, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    if (ok)
        tally_merge(c);
    return ok;
}

/* One table row per (merged) tally of a cluster. */
static bool tally_rows(sa_rtable_t *t, const char *cluster, const cur_ctx_t *c, sa_error_t *error)
{
    for (size_t i = 0; i < c->n; i++) {
        size_t r = sa_rtable_add_row(t);
        if (r == SIZE_MAX) {
            sa_error_nomem(error);
            return false;
        }
        sa_rtable_str(t, r, K_CLUSTER, cluster);
        sa_rtable_str(t, r, K_SECTION, c->v[i].sect ? "finished" : "current");
        sa_rtable_str(t, r, K_BY, sa_rintern_str(&c->names, c->v[i].by));
        sa_rtable_str(t, r, K_KEY, sa_rintern_str(&c->names, c->v[i].key));
        sa_rtable_str(t, r, K_STATE, sa_rintern_str(&c->names, c->v[i].state));
        sa_rtable_int(t, r, K_JOBS, c->v[i].count);
        if (!c->v[i].sect)
            sa_rtable_int(t, r, K_GPUS, c->v[i].gpus);
    }
    return true;
}

bool sa_report_current(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    cur_ctx_t *per = NULL;
    sa_rtable_t t;
    sa_strv_t preamble;
    int64_t since = o->since != SA_UNSET ? o->since : o->now - 86400;
    unsigned by = o->by ? o->by : (SA_BY_PARTITION | SA_BY_ACCOUNT | SA_BY_USER);
    json_t *extra = NULL;
    sa_aws_creds_t creds = {0};
    size_t docs = 0;
    bool ok = false, all_lists = true;

    (void)warn;
    sa_rtable_init(&t, current_cols, K_N);
    sa_strv_init(&preamble);
    if (o->format == SA_FMT_SVG) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format svg is not available for current");
        goto done;
    }
    if (by & SA_BY_GPU_TYPE) {
        sa_error_set(error, SA_ERR_USAGE, 0, "current groups by partition, account and user");
        goto done;
    }
    /* CloudWatch's credentials first: a run without them reads nothing */
    if (o->cloudwatch == SA_CW_PUT && !sa_aws_creds_load(&creds, error))
        goto done;
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    per = calloc(cl.n + 1, sizeof *per);
    if (!per) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t ci = 0; ci < cl.n; ci++) {
        cur_ctx_t *c = &per[ci];
        bool lists = !o->from_jobs && cl.v[ci].rollup_version >= SA_ROLLUP_VERSION;
        all_lists = all_lists && lists;
        sa_rintern_init(&c->names);
        sa_jobview_init(&c->view);
        c->by = by;
        if (!(lists ? count_cluster_lists(db, cl.v[ci].name, since, o->now, c, &docs, error)
                    : count_cluster(db, cl.v[ci].name, since, o->now, c, error)) ||
            !tally_rows(&t, cl.v[ci].name, c, error))
            goto done;
        sa_rpreamble_add(&preamble, "%s: latest squeue snapshot %s", cl.v[ci].name,
                        cl.v[ci].last_squeue_at == SA_UNSET ? "none" : sa_riso(cl.v[ci].last_squeue_at));
    }
    sa_rpreamble_add(&preamble, "Jobs (current): unfinished jobs the latest squeue listing showed (not marked vanished), "
                               "by their last known state. Jobs (finished): jobs that ended from %s to %s, by final "
                               "state (reused job ids included).",
                    sa_riso(since), sa_riso(o->now));
    if (o->verbose && all_lists)
        fprintf(o->verbose, "# read: %zu rollup document(s) by _id\n", docs);
    else if (o->verbose)
        fprintf(o->verbose, "# read: the job documents (%s)\n", o->from_jobs ? "--from-jobs" : "a cluster has no rollups");
    if (o->format == SA_FMT_PROMETHEUS || o->cloudwatch) {
        ok = export_figures(o, db, &cl, per, since, &creds, out, error);
        goto done;
    }
    extra = json_object();
    json_object_set_new(extra, "now", json_string(sa_riso(o->now)));
    json_object_set_new(extra, "finished_since", json_string(sa_riso(since)));
    {
        json_t *a = json_array();
        for (size_t ci = 0; ci < cl.n; ci++) {
            json_t *c = json_pack("{s:s}", "name", cl.v[ci].name);
            json_object_set_new(c, "last_squeue_at", cl.v[ci].last_squeue_at == SA_UNSET
                                                         ? json_null()
                                                         : json_string(sa_riso(cl.v[ci].last_squeue_at)));
            json_array_append_new(a, c);
        }
        json_object_set_new(extra, "clusters", a);
    }
    {
        sa_rdoc_t doc = {.kind = "current", .title = "slurm-report: current jobs", .preamble = &preamble, .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    for (size_t ci = 0; per && ci < cl.n; ci++) {
        sa_rintern_clear(&per[ci].names);
        sa_jobview_clear(&per[ci].view);
        free(per[ci].v);
    }
    free(per);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    sa_aws_creds_clear(&creds);
    return ok;
}
