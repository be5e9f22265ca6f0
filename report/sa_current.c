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
#include "sa_rcommon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"

enum { K_CLUSTER, K_SECTION, K_BY, K_KEY, K_STATE, K_JOBS, K_N };

static const sa_col_t current_cols[K_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0, 0}, {"section", "Jobs", SA_COL_STR, 0, 0},
    {"by", "By", SA_COL_STR, 0, 0},           {"key", "Name", SA_COL_STR, 0, 0},
    {"state", "State", SA_COL_STR, 0, 0},     {"jobs", "Count", SA_COL_INT, 0, 0},
};

const sa_col_t *sa_current_cols(size_t *n)
{
    *n = K_N;
    return current_cols;
}

/* One counted observation: (section, by, key, state) as interned ids. */
typedef struct {
    uint32_t sect, by, key, state;
    int64_t count;
} tally_t;

typedef struct {
    sa_rintern_t names;
    tally_t *v;
    size_t n, cap;
    unsigned by;
    uint32_t sect;
} cur_ctx_t;

/* Records one job of the current section under (by, key, state): merged and counted later. */
static bool tally_add(cur_ctx_t *c, const char *by, const char *key, const char *state, sa_error_t *error)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        tally_t *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            sa_error_nomem(error);
            return false;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n].sect = c->sect;
    c->v[c->n].by = sa_rintern(&c->names, by);
    c->v[c->n].key = sa_rintern(&c->names, key ? key : "");
    c->v[c->n].state = sa_rintern(&c->names, state ? state : "?");
    c->v[c->n].count = 1;
    c->n++;
    return true;
}

static bool on_job(const bson_t *doc, void *vctx, sa_error_t *error)
{
    cur_ctx_t *c = vctx;
    sa_rfields_t f;
    sa_rfields_read(doc, &f);
    return ((c->by & SA_BY_PARTITION) == 0 || tally_add(c, "partition", f.partition, f.state, error)) &&
           ((c->by & SA_BY_ACCOUNT) == 0 || tally_add(c, "account", f.account, f.state, error)) &&
           ((c->by & SA_BY_USER) == 0 || tally_add(c, "user", f.user, f.state, error)) &&
           tally_add(c, "all", "", f.state, error);
}

static cur_ctx_t *cur_sort;

/* Orders tallies by section (current first), by (partition, account, user, all), key, state. */
static int tally_cmp(const void *x, const void *y)
{
    const tally_t *a = x, *b = y;
    static const char *const by_order[] = {"partition", "account", "user", "all"};
    int r;
    if (a->sect != b->sect)
        return a->sect < b->sect ? -1 : 1;
    if (a->by != b->by) {
        const char *ab = sa_rintern_str(&cur_sort->names, a->by), *bb = sa_rintern_str(&cur_sort->names, b->by);
        int ia = 0, ib = 0;
        for (int i = 0; i < 4; i++) {
            if (strcmp(ab, by_order[i]) == 0)
                ia = i;
            if (strcmp(bb, by_order[i]) == 0)
                ib = i;
        }
        return ia < ib ? -1 : 1;
    }
    if ((r = strcmp(sa_rintern_str(&cur_sort->names, a->key), sa_rintern_str(&cur_sort->names, b->key))))
        return r;
    return strcmp(sa_rintern_str(&cur_sort->names, a->state), sa_rintern_str(&cur_sort->names, b->state));
}

/* Merges equal tallies (after sorting) in place. */
static void tally_merge(cur_ctx_t *c)
{
    size_t n = 0;
    if (!c->n)
        return;
    cur_sort = c;
    qsort(c->v, c->n, sizeof *c->v, tally_cmp);
    for (size_t i = 0; i < c->n; i++) {
        if (n && tally_cmp(&c->v[n - 1], &c->v[i]) == 0)
            c->v[n - 1].count += c->v[i].count;
        else
            c->v[n++] = c->v[i];
    }
    c->n = n;
}

/* Writes a Prometheus label value (backslash, quote and newline escaped). */
static void prom_label(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', out);
        if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
}

/* The node_exporter textfile: one metric per grouping, HELP/TYPE once each. */
static bool write_prometheus(FILE *out, const sa_rclusters_t *cl, cur_ctx_t *per, size_t n, const sa_report_opts_t *o,
                             int64_t since)
{
    static const struct {
        const char *sect, *by, *metric, *help;
    } m[] = {
        {"current", "all", "slurm_archive_jobs", "Jobs in the cluster's latest squeue snapshot, by state."},
        {"current", "partition", "slurm_archive_partition_jobs", "Jobs in the latest squeue snapshot, by partition and state."},
        {"current", "account", "slurm_archive_account_jobs", "Jobs in the latest squeue snapshot, by account and state."},
        {"current", "user", "slurm_archive_user_jobs", "Jobs in the latest squeue snapshot, by user and state."},
        {"finished", "all", "slurm_archive_finished_jobs", "Jobs that ended since the --since time, by final state."},
        {"finished", "partition", "slurm_archive_partition_finished_jobs", "Jobs that ended since the --since time, by partition and final state."},
        {"finished", "account", "slurm_archive_account_finished_jobs", "Jobs that ended since the --since time, by account and final state."},
        {"finished", "user", "slurm_archive_user_finished_jobs", "Jobs that ended since the --since time, by user and final state."},
    };
    static const char *const src[3] = {"squeue", "sinfo", "sacct"};

    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        bool header = false;
        for (size_t ci = 0; ci < n; ci++) {
            cur_ctx_t *c = &per[ci];
            for (size_t i = 0; i < c->n; i++) {
                const tally_t *t = &c->v[i];
                if (strcmp(sa_rintern_str(&c->names, t->by), m[k].by) != 0 ||
                    (t->sect == 0) != (strcmp(m[k].sect, "current") == 0))
                    continue;
                if (!header) {
                    fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", m[k].metric, m[k].help, m[k].metric);
                    header = true;
                }
                fprintf(out, "%s{cluster=\"", m[k].metric);
                prom_label(out, cl->v[ci].name);
                if (strcmp(m[k].by, "all") != 0) {
                    fprintf(out, "\",%s=\"", m[k].by);
                    prom_label(out, sa_rintern_str(&c->names, t->key));
                }
                fputs("\",state=\"", out);
                prom_label(out, sa_rintern_str(&c->names, t->state));
                fprintf(out, "\"} %" PRId64 "\n", t->count);
            }
        }
    }
    fputs("# HELP slurm_archive_finished_since_timestamp_seconds Start of the window of the finished-jobs metrics.\n"
          "# TYPE slurm_archive_finished_since_timestamp_seconds gauge\n",
          out);
    fprintf(out, "slurm_archive_finished_since_timestamp_seconds %" PRId64 "\n", since);
    fputs("# HELP slurm_archive_last_ingest_timestamp_seconds Time of the last successful ingest of each source.\n"
          "# TYPE slurm_archive_last_ingest_timestamp_seconds gauge\n",
          out);
    for (size_t ci = 0; ci < cl->n; ci++) {
        int64_t times[3] = {cl->v[ci].last_squeue_at, cl->v[ci].last_sinfo_at, cl->v[ci].last_sacct_at};
        for (int i = 0; i < 3; i++) {
            if (times[i] == SA_UNSET)
                continue;
            fputs("slurm_archive_last_ingest_timestamp_seconds{cluster=\"", out);
            prom_label(out, cl->v[ci].name);
            fprintf(out, "\",source=\"%s\"} %" PRId64 "\n", src[i], times[i]);
        }
    }
    fputs("# HELP slurm_archive_report_timestamp_seconds When slurm-report wrote this file.\n"
          "# TYPE slurm_archive_report_timestamp_seconds gauge\n",
          out);
    fprintf(out, "slurm_archive_report_timestamp_seconds %" PRId64 "\n", o->now);
    return !ferror(out);
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
    bool ok = false;

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
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    per = calloc(cl.n + 1, sizeof *per);
    if (!per) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t ci = 0; ci < cl.n; ci++) {
        cur_ctx_t *c = &per[ci];
        sa_rintern_init(&c->names);
        c->by = by;
        if (!count_cluster(db, cl.v[ci].name, since, o->now, c, error) || !tally_rows(&t, cl.v[ci].name, c, error))
            goto done;
        sa_rpreamble_add(&preamble, "%s: latest squeue snapshot %s", cl.v[ci].name,
                        cl.v[ci].last_squeue_at == SA_UNSET ? "none" : sa_riso(cl.v[ci].last_squeue_at));
    }
    sa_rpreamble_add(&preamble, "Jobs (current): unfinished jobs the latest squeue listing showed (not marked vanished), "
                               "by their last known state. Jobs (finished): jobs that ended from %s to %s, by final "
                               "state (reused job ids included).",
                    sa_riso(since), sa_riso(o->now));
    if (o->format == SA_FMT_PROMETHEUS) {
        ok = write_prometheus(out, &cl, per, cl.n, o, since);
        if (!ok)
            sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
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
        free(per[ci].v);
    }
    free(per);
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
