/*
 * sa_health.c - `slurm-report health` (is the archive whole and fresh?) and
 * `slurm-report current` (job counts of the latest snapshot, finished jobs since a
 * time; also as a node_exporter textfile).
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
 * - failed-ingest (error): ingest_runs with ok false that started in the window.
 * The window defaults to the 24 hours before now.
 *
 * current: "the latest snapshot" of a cluster is what its last complete squeue
 * listing showed: the documents that are not final and carry no vanished_at
 * (slurm-ingest marks every unfinished job a listing omits). Their state is the one
 * that listing (or a later sacct) gave. Finished jobs: final documents (jobs and
 * jobs_superseded) whose end is at or after --since (default now - 24 h).
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"

/* ---- health ------------------------------------------------------------------------- */

enum { H_CLUSTER, H_CHECK, H_SEVERITY, H_SUBJECT, H_AT, H_DETAIL, H_N };

static const sa_col_t health_cols[H_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0},   {"check", "Check", SA_COL_STR, 0},
    {"severity", "Severity", SA_COL_STR, 0}, {"subject", "Subject", SA_COL_STR, 0},
    {"at", "At", SA_COL_STR, 0},             {"detail", "Detail", SA_COL_STR, 0},
};

typedef struct {
    sa_rtable_t *t;
    size_t errors, warnings;
} hctx_t;

static bool hrow(hctx_t *h, const char *cluster, const char *check, const char *sev, const char *subject, int64_t at,
                 const char *detail, sa_error_t *error)
{
    size_t r = sa_rtable_add_row(h->t);
    if (r == SIZE_MAX) {
        sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
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

/* Runs a find over coll and calls fn for each document. */
static bool each_doc(sa_rdb_t *db, const char *coll, const bson_t *filter, const bson_t *opts,
                     bool (*fn)(const bson_t *doc, void *ctx, sa_error_t *error), void *ctx, sa_error_t *error)
{
    mongoc_cursor_t *cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, coll), filter, opts, NULL);
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    while (ok && mongoc_cursor_next(cursor, &doc))
        ok = fn(doc, ctx, error);
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        char what[64];
        snprintf(what, sizeof what, "reading %s", coll);
        sa_rdb_error(error, db, what, &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    return ok;
}

/* A few top-level members of a job document. */
typedef struct {
    int64_t job_id, vanished_at, end, seen_last;
    const char *state, *user, *account, *partition, *error_text;
    bool ok_flag, has_ok;
    int64_t started_at;
} jfields_t;

static void read_fields(const bson_t *doc, jfields_t *f)
{
    bson_iter_t it;
    memset(f, 0, sizeof *f);
    f->job_id = f->vanished_at = f->end = f->seen_last = f->started_at = SA_UNSET;
    if (!bson_iter_init(&it, doc))
        return;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "job_id") == 0)
            f->job_id = sa_rbson_iter_int(&it, SA_UNSET);
        else if (strcmp(k, "vanished_at") == 0)
            f->vanished_at = sa_rbson_iter_time(&it);
        else if (strcmp(k, "end") == 0)
            f->end = sa_rbson_iter_time(&it);
        else if (strcmp(k, "state") == 0)
            f->state = sa_rbson_iter_str(&it, NULL);
        else if (strcmp(k, "user") == 0)
            f->user = sa_rbson_iter_str(&it, NULL);
        else if (strcmp(k, "account") == 0)
            f->account = sa_rbson_iter_str(&it, NULL);
        else if (strcmp(k, "partition") == 0)
            f->partition = sa_rbson_iter_str(&it, NULL);
        else if (strcmp(k, "error") == 0)
            f->error_text = sa_rbson_iter_str(&it, NULL);
        else if (strcmp(k, "started_at") == 0)
            f->started_at = sa_rbson_iter_time(&it);
        else if (strcmp(k, "ok") == 0 && BSON_ITER_HOLDS_BOOL(&it)) {
            f->ok_flag = bson_iter_bool(&it);
            f->has_ok = true;
        } else if (strcmp(k, "seen") == 0 && BSON_ITER_HOLDS_DOCUMENT(&it)) {
            bson_iter_t s;
            if (bson_iter_recurse(&it, &s) && bson_iter_find(&s, "last"))
                f->seen_last = sa_rbson_iter_time(&s);
        }
    }
}

typedef struct {
    hctx_t *h;
    const sa_report_opts_t *o;
    const sa_rcluster_t *c;
    int64_t start, end;
    size_t n, in_window;
    sa_strv_t ids;
} check_ctx_t;

static bool on_vanished(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    jfields_t f;
    char subject[48], detail[512], age[32];
    bool closed_chance;

    read_fields(doc, &f);
    if (f.vanished_at == SA_UNSET)
        return true;
    closed_chance = (c->c->last_sacct_at != SA_UNSET && c->c->last_sacct_at > f.vanished_at) ||
                    c->o->now - f.vanished_at > c->o->stale_s;
    snprintf(subject, sizeof subject, "job %" PRId64, f.job_id);
    snprintf(detail, sizeof detail, "%s in the archive (user %s, account %s), not listed by squeue since %s ago; %s",
             f.state ? f.state : "?", f.user ? f.user : "?", f.account ? f.account : "?",
             fmt_age(c->o->now - f.vanished_at, age, sizeof age),
             closed_chance ? "sacct did not close it" : "waiting for sacct");
    return hrow(c->h, c->c->name, "vanished-job", closed_chance ? "error" : "warning", subject, f.vanished_at, detail,
                error);
}

static bool on_superseded(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    jfields_t f;
    (void)error;
    read_fields(doc, &f);
    c->n++;
    if (f.seen_last != SA_UNSET && f.seen_last >= c->start) {
        char id[32];
        c->in_window++;
        snprintf(id, sizeof id, "%" PRId64, f.job_id);
        if (c->ids.n < 20 && !sa_strv_contains(&c->ids, id))
            sa_strv_push(&c->ids, id);
    }
    return true;
}

static bool on_failed_run(const bson_t *doc, void *vctx, sa_error_t *error)
{
    check_ctx_t *c = vctx;
    jfields_t f;
    char detail[600], q[400];

    read_fields(doc, &f);
    snprintf(detail, sizeof detail, "ingest run failed: %s",
             f.error_text ? sa_error_quote(f.error_text, 300, q, sizeof q) : "(no error text)");
    return hrow(c->h, c->c->name, "failed-ingest", "error", "ingest run", f.started_at, detail, error);
}

/* The checks of one cluster. */
static bool check_cluster(sa_rdb_t *db, const sa_report_opts_t *o, const sa_rcluster_t *cl, int64_t start,
                          int64_t end, hctx_t *h, sa_error_t *error)
{
    static const char *const sources[3] = {"squeue", "sinfo", "sacct"};
    int64_t times[3] = {cl->last_squeue_at, cl->last_sinfo_at, cl->last_sacct_at};
    size_t e0 = h->errors, w0 = h->warnings;
    check_ctx_t c = {h, o, cl, start, end, 0, 0, {0}};
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    char detail[512], age[32], lim[32];
    bool ok = false;

    sa_strv_init(&c.ids);
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
    /* vanished unfinished jobs */
    BSON_APPEND_UTF8(&f, "cluster", cl->name);
    BSON_APPEND_DOCUMENT_BEGIN(&f, "vanished_at", &sub);
    BSON_APPEND_BOOL(&sub, "$exists", true);
    bson_append_document_end(&f, &sub);
    sa_rbson_append_final_states(&f, "$nin");
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "job_id", 1);
    bson_append_document_end(&opts, &sub);
    if (!each_doc(db, "jobs", &f, &opts, on_vanished, &c, error))
        goto done;
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
    if (!each_doc(db, "jobs_superseded", &f, &opts, on_superseded, &c, error))
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
    bson_reinit(&f);
    bson_reinit(&opts);
    BSON_APPEND_UTF8(&f, "cluster", cl->name);
    BSON_APPEND_BOOL(&f, "ok", false);
    BSON_APPEND_DOCUMENT_BEGIN(&f, "started_at", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", start * 1000);
    BSON_APPEND_DATE_TIME(&sub, "$lt", end * 1000);
    bson_append_document_end(&f, &sub);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "started_at", 1);
    bson_append_document_end(&opts, &sub);
    if (!each_doc(db, "ingest_runs", &f, &opts, on_failed_run, &c, error))
        goto done;
    /* the cluster's summary */
    snprintf(detail, sizeof detail, "%zu error(s), %zu warning(s)", h->errors - e0, h->warnings - w0);
    ok = hrow(h, cl->name, "summary", h->errors > e0 ? "error" : h->warnings > w0 ? "warning" : "ok", "cluster",
              SA_UNSET, detail, error);
done:
    sa_strv_clear(&c.ids);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

bool sa_report_health(const sa_report_opts_t *o, FILE *out, FILE *warn, bool *healthy, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    sa_rtable_t t;
    hctx_t h;
    sa_strv_t preamble;
    int64_t start = o->start, end = o->end;
    json_t *extra = NULL;
    bool ok = false;
    char lim[32];

    (void)warn;
    *healthy = false;
    sa_rtable_init(&t, health_cols, H_N);
    sa_strv_init(&preamble);
    h.t = &t;
    h.errors = h.warnings = 0;
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for health", sa_format_name(o->format));
        goto done;
    }
    if (end == SA_UNSET)
        end = o->now;
    if (start == SA_UNSET)
        start = end - 86400;
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    for (size_t i = 0; i < cl.n; i++) {
        if (!check_cluster(db, o, &cl.v[i], start, end, &h, error))
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
    ok = sa_rwrite_table_doc(o, "slurm-report: archive health", &preamble, &t, extra, out, error);
done:
    json_decref(extra);
    sa_rtable_clear(&t);
    sa_strv_clear(&preamble);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}

/* ---- current ------------------------------------------------------------------------------ */

enum { K_CLUSTER, K_SECTION, K_BY, K_KEY, K_STATE, K_JOBS, K_N };

static const sa_col_t current_cols[K_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0}, {"section", "Jobs", SA_COL_STR, 0},
    {"by", "By", SA_COL_STR, 0},           {"key", "Name", SA_COL_STR, 0},
    {"state", "State", SA_COL_STR, 0},     {"jobs", "Count", SA_COL_INT, 0},
};

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

static bool tally_add(cur_ctx_t *c, const char *by, const char *key, const char *state, sa_error_t *error)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        tally_t *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
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
    jfields_t f;
    read_fields(doc, &f);
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
        sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
        goto done;
    }
    for (size_t ci = 0; ci < cl.n; ci++) {
        cur_ctx_t *c = &per[ci];
        bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
        bool qok;
        sa_rintern_init(&c->names);
        c->by = by;
        /* the latest snapshot */
        BSON_APPEND_UTF8(&f, "cluster", cl.v[ci].name);
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
        qok = each_doc(db, "jobs", &f, &opts, on_job, c, error);
        /* finished since */
        bson_reinit(&f);
        BSON_APPEND_UTF8(&f, "cluster", cl.v[ci].name);
        sa_rbson_append_final_states(&f, "$in");
        BSON_APPEND_DOCUMENT_BEGIN(&f, "end", &sub);
        BSON_APPEND_DATE_TIME(&sub, "$gte", since * 1000);
        BSON_APPEND_DATE_TIME(&sub, "$lt", o->now * 1000);
        bson_append_document_end(&f, &sub);
        c->sect = 1;
        qok = qok && each_doc(db, "jobs", &f, &opts, on_job, c, error) &&
              each_doc(db, "jobs_superseded", &f, &opts, on_job, c, error);
        bson_destroy(&f);
        bson_destroy(&opts);
        if (!qok)
            goto done;
        tally_merge(c);
        for (size_t i = 0; i < c->n; i++) {
            size_t r = sa_rtable_add_row(&t);
            if (r == SIZE_MAX) {
                sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
                goto done;
            }
            sa_rtable_str(&t, r, K_CLUSTER, cl.v[ci].name);
            sa_rtable_str(&t, r, K_SECTION, c->v[i].sect ? "finished" : "current");
            sa_rtable_str(&t, r, K_BY, sa_rintern_str(&c->names, c->v[i].by));
            sa_rtable_str(&t, r, K_KEY, sa_rintern_str(&c->names, c->v[i].key));
            sa_rtable_str(&t, r, K_STATE, sa_rintern_str(&c->names, c->v[i].state));
            sa_rtable_int(&t, r, K_JOBS, c->v[i].count);
        }
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
    ok = sa_rwrite_table_doc(o, "slurm-report: current jobs", &preamble, &t, extra, out, error);
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
