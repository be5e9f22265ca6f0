/*
 * sa_jobs.c - `slurm-report jobs`: a listing of the archive's jobs as sacct gives it
 * (sacct -X: one line per job, its allocation), with sacct's options: -M, -A, -u,
 * -s STATES, -S/-E, --name, --partition (-r), -j JOBIDS, -D (--duplicates), -o with
 * sacct's field names.
 *
 * The window, as slurmdbd selects (sacct's man page; as_mysql_jobacct_process.c):
 *   without -s  jobs eligible before E and not ended before S (still unfinished ones
 *               included): eligible < E and (no end or end >= S);
 *   with -s     jobs whose state is one of STATES and that were in it during [S, E]:
 *               PENDING eligible <= E (and not started before S); RUNNING, SUSPENDED
 *               (any unfinished state) started <= E; a final state ended in [S, E].
 *               Unlike slurmdbd, whose PENDING and RUNNING clauses do not test the job's
 *               state, PD/R/S here are the job's state now (README "Job listings").
 * Defaults: -E now; -S midnight (UTC) of today, or now with -s (with both defaults,
 * the jobs in those states now); with -j and no -S, no window at all.
 * A final job without an end is in no window (the job lists cannot hold it either).
 * Without -D a reused id shows its newest job only (jobs); with -D, the earlier jobs
 * (jobs_superseded) too, and each run of a requeued job is a line (sacct -D).
 *
 * What it reads (README "What a report reads"): the job lists of the rollups by _id
 * (schema/jobdoc/sa_rollup.h: the live shards, the ended lists of the days from S to the
 * cluster's last observation; with -s only the lists those states can be in), whose
 * records decide account, user, partition, state and end; then only the documents of
 * the records that pass, by _id $in, with a projection of what the listing shows. The
 * name, and the window's exact test, are applied to the documents. --from-jobs reads
 * the documents with plain queries instead (cluster_state, cluster_end), the
 * reference; -j reads by _id and by cluster_array_het, as `slurm-report job` does.
 */
#include "sa_rcommon.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sa_jobview.h"
#include "sa_rollup_reader.h"
#include "sa_rutil.h"
#include "sa_vec.h"

enum { C_CLUSTER, C_JOBID, C_JOBNAME, C_USER, C_ACCOUNT, C_PARTITION, C_STATE, C_EXIT, C_SUBMIT, C_START, C_END,
       C_ELAPSED, C_ALLOCTRES, C_NNODES, C_NODELIST, C_REASON, C_N };

static const sa_col_t jobs_cols[C_N] = {
    [C_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, SA_COL_LONG},
    [C_JOBID] = {"jobid", "JobID", SA_COL_STR, 0, 0},
    [C_JOBNAME] = {"jobname", "JobName", SA_COL_STR, 0, 0},
    [C_USER] = {"user", "User", SA_COL_STR, 0, 0},
    [C_ACCOUNT] = {"account", "Account", SA_COL_STR, 0, 0},
    [C_PARTITION] = {"partition", "Partition", SA_COL_STR, 0, 0},
    [C_STATE] = {"state", "State", SA_COL_STR, 0, 0},
    [C_EXIT] = {"exitcode", "ExitCode", SA_COL_STR, 0, 0},
    [C_SUBMIT] = {"submit", "Submit", SA_COL_STR, 0, SA_COL_LONG},
    [C_START] = {"start", "Start", SA_COL_STR, 0, 0},
    [C_END] = {"end", "End", SA_COL_STR, 0, SA_COL_LONG},
    [C_ELAPSED] = {"elapsed", "Elapsed", SA_COL_STR, 0, 0},
    [C_ALLOCTRES] = {"alloctres", "AllocTRES", SA_COL_STR, 0, SA_COL_LONG},
    [C_NNODES] = {"nnodes", "NNodes", SA_COL_INT, 0, SA_COL_LONG},
    [C_NODELIST] = {"nodelist", "NodeList", SA_COL_STR, 0, SA_COL_LONG},
    [C_REASON] = {"reason", "Reason", SA_COL_STR, 0, SA_COL_LONG},
};

const sa_col_t *sa_jobs_cols(size_t *n)
{
    *n = C_N;
    return jobs_cols;
}

/* sacct's state names and their abbreviations (-s takes either, any case). */
static const struct {
    const char *abbr, *name;
} state_names[] = {
    {"BF", "BOOT_FAIL"}, {"CA", "CANCELLED"}, {"CD", "COMPLETED"}, {"CF", "CONFIGURING"}, {"CG", "COMPLETING"},
    {"DL", "DEADLINE"},  {"F", "FAILED"},     {"NF", "NODE_FAIL"}, {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"},
    {"PR", "PREEMPTED"}, {"R", "RUNNING"},    {"RQ", "REQUEUED"},  {"RS", "RESIZING"},    {"RV", "REVOKED"},
    {"S", "SUSPENDED"},  {"TO", "TIMEOUT"},
};

/* A line of the listing, with what orders it (cluster, then job id as sacct shows it, then run). */
typedef struct {
    size_t ci;         /* the cluster's position */
    int64_t base, sub; /* array or het job id (else the job id); task id or offset (pending tasks last) */
    int64_t job_id, submit;
    size_t run;        /* the run's position (-D), SIZE_MAX for the job's line */
    size_t row;        /* in the unsorted table */
} line_t;

typedef struct {
    const sa_report_opts_t *o;
    int64_t S, E;          /* the window; S SA_UNSET: none (-j without -S) */
    sa_strv_t states;      /* -s resolved to full names */
    bool want_final, want_live;
    size_t ci;             /* the cluster at hand */
    const char *cluster;
    int64_t as_of;         /* its last observation: a running job's Elapsed runs up to it */
    bool superseded;       /* the documents read are of jobs_superseded */
    sa_jobview_t view;
    sa_rtable_t t;         /* lines as they come */
    line_t *lines;
    size_t nlines, cap;
    sa_strv_t ids, sids;   /* documents to read (jobs, jobs_superseded) */
    sa_strv_t leaders;     /* -j: array or het leaders whose members are read */
    size_t list_docs, docs;
} jobs_t;

/* ---- selection ---------------------------------------------------------------------------- */

/* -s into full state names (sacct's abbreviations and names, any case); false: an unknown one. */
static bool resolve_states(const sa_strv_t *in, sa_strv_t *out, sa_error_t *error)
{
    for (size_t i = 0; i < in->n; i++) {
        const char *name = NULL;
        for (size_t k = 0; !name && k < sizeof state_names / sizeof state_names[0]; k++) {
            if (strcasecmp(in->v[i], state_names[k].abbr) == 0 || strcasecmp(in->v[i], state_names[k].name) == 0)
                name = state_names[k].name;
        }
        if (!name) {
            sa_error_set(error, SA_ERR_USAGE, 0,
                         "-s: unknown state '%s' (sacct's names or abbreviations: PD, R, S, CD, F, CA, TO, OOM, NF, "
                         "PR, BF, DL, RQ, ...)",
                         in->v[i]);
            return false;
        }
        if (!sa_strv_contains(out, name) && !sa_strv_push(out, name))
            return sa_error_nomem(error);
    }
    return true;
}

/* True when the partition (a pending job's may be "a,b") is one of those asked for. */
static bool partition_ok(const sa_strv_t *want, const char *p)
{
    size_t len;
    if (!want->n)
        return true;
    for (; p && *p; p += len + (p[len] == ',')) {
        len = strcspn(p, ",");
        for (size_t i = 0; i < want->n; i++) {
            if (strlen(want->v[i]) == len && strncmp(want->v[i], p, len) == 0)
                return true;
        }
    }
    return false;
}

/* The filters a job list record can decide too: account, user, partition, state. */
static bool keys_ok(const jobs_t *c, const char *account, const char *user, const char *partition, const char *state)
{
    const sa_report_opts_t *o = c->o;
    return (!o->accounts.n || (account && sa_strv_contains(&o->accounts, account))) &&
           (!o->users.n || (user && sa_strv_contains(&o->users, user))) && partition_ok(&o->partitions, partition) &&
           (!c->states.n || (state && sa_strv_contains(&c->states, state)));
}

/* The window test of a job document (the header comment's rules). */
static bool window_ok(const jobs_t *c, const sa_jobview_t *j)
{
    if (c->S == SA_UNSET)
        return true;
    if (!c->states.n)
        return j->eligible != SA_UNSET && j->eligible < c->E && (j->end == SA_UNSET ? !j->final : j->end >= c->S);
    if (j->final)
        return j->end != SA_UNSET && j->end >= c->S && j->end <= c->E;
    if (j->state && strcmp(j->state, "PENDING") == 0)
        return j->eligible != SA_UNSET && j->eligible <= c->E && (j->start == SA_UNSET || j->start >= c->S);
    return j->start != SA_UNSET && j->start <= c->E;
}

/* Every filter, on a job document. */
static bool job_ok(const jobs_t *c, const sa_jobview_t *j)
{
    if (c->superseded && !j->final)
        return false; /* an unfinished job displaced by a reused id: in no listing of the queue */
    return keys_ok(c, j->account, j->user, j->partition, j->state) &&
           (!c->o->names.n || (j->name && sa_strv_contains(&c->o->names, j->name))) && window_ok(c, j);
}

/* ---- lines -------------------------------------------------------------------------------- */

/* A time as ISO-8601, NULL when unknown (an empty cell, null in JSON). */
static const char *iso(int64_t t)
{
    return t == SA_UNSET ? NULL : sa_riso(t);
}

/* [D-]HH:MM:SS of the interval [from, to) (0 when either is unknown). */
static const char *elapsed_str(int64_t from, int64_t to, int64_t given, char *buf, size_t n)
{
    int64_t s = given != SA_UNSET ? given : (from != SA_UNSET && to != SA_UNSET && to > from ? to - from : 0);
    return sa_rhms(s, buf, n);
}

/* sacct's AllocTRES of a run: billing, cpu, gres/gpu (and per type), mem, node, those known. */
static const char *tres_str(const sa_jobview_t *j, const sa_jobview_run_t *r, bool job, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(buf + len, n - len, __VA_ARGS__);                                                            \
        len = w_ < 0 || (size_t)w_ >= n - len ? n - 1 : len + (size_t)w_;                                              \
    } while (0)
    if (job && j->alloc_billing >= 0)
        ADD("%sbilling=%.15g", len ? "," : "", j->alloc_billing);
    if (r->cpus != SA_UNSET)
        ADD("%scpu=%" PRId64, len ? "," : "", r->cpus);
    if (r->gpus > 0)
        ADD("%sgres/gpu=%" PRId64, len ? "," : "", r->gpus);
    for (size_t k = 0; k < r->ngpu_types; k++) {
        if (r->gpu_types[k].type && r->gpu_types[k].type[0])
            ADD("%sgres/gpu:%s=%" PRId64, len ? "," : "", r->gpu_types[k].type, r->gpu_types[k].count);
    }
    if (r->mem_mb != SA_UNSET)
        ADD("%smem=%" PRId64 "M", len ? "," : "", r->mem_mb);
    if (r->node_count != SA_UNSET)
        ADD("%snode=%" PRId64, len ? "," : "", r->node_count);
#undef ADD
    return buf;
}

/* A new line of the job at hand (run: its position, SIZE_MAX for the job's own line). */
static size_t new_line(jobs_t *c, size_t run, sa_error_t *error)
{
    const sa_jobview_t *j = &c->view;
    size_t r = sa_rtable_add_row(&c->t);
    line_t *l;
    char id[32];

    if (r == SIZE_MAX || !SA_VEC_GROW(c->lines, c->cap, c->nlines, 1, 64)) {
        sa_error_nomem(error);
        return SIZE_MAX;
    }
    l = &c->lines[c->nlines++];
    l->ci = c->ci;
    l->job_id = j->job_id;
    l->submit = c->superseded ? j->submit : INT64_MAX; /* earlier jobs of a reused id first */
    l->run = run;
    l->row = r;
    if (j->array_job_id != SA_UNSET) {
        l->base = j->array_job_id;
        l->sub = j->array_task_id != SA_UNSET ? j->array_task_id : INT64_MAX;
    } else if (j->het_job_id != SA_UNSET) {
        l->base = j->het_job_id;
        l->sub = j->het_offset;
    } else {
        l->base = j->job_id;
        l->sub = 0;
    }
    snprintf(id, sizeof id, "%" PRId64, j->job_id);
    sa_rtable_str(&c->t, r, C_CLUSTER, j->cluster);
    sa_rtable_str(&c->t, r, C_JOBID, j->job_id_display ? j->job_id_display : id);
    sa_rtable_str(&c->t, r, C_JOBNAME, j->name);
    sa_rtable_str(&c->t, r, C_USER, j->user);
    sa_rtable_str(&c->t, r, C_ACCOUNT, j->account);
    sa_rtable_str(&c->t, r, C_PARTITION, j->partition);
    sa_rtable_str(&c->t, r, C_SUBMIT, iso(j->submit));
    sa_rtable_str(&c->t, r, C_REASON, j->reason);
    return r;
}

/* The cells of a run: state, exit code, times, elapsed, TRES, nodes. */
static void run_cells(jobs_t *c, size_t r, const sa_jobview_run_t *run, bool job)
{
    char buf[512];
    int64_t end = run->end;
    snprintf(buf, sizeof buf, "%d:%d", run->exit_code < 0 ? 0 : run->exit_code,
             run->exit_signal < 0 ? 0 : run->exit_signal);
    sa_rtable_str(&c->t, r, C_STATE, run->state);
    sa_rtable_str(&c->t, r, C_EXIT, buf);
    sa_rtable_str(&c->t, r, C_START, iso(run->start));
    sa_rtable_str(&c->t, r, C_END, iso(run->end));
    if (end == SA_UNSET && run->start != SA_UNSET)
        end = c->as_of > run->start ? c->as_of : run->start; /* running: up to the last observation */
    sa_rtable_str(&c->t, r, C_ELAPSED, elapsed_str(run->start, end, run->end != SA_UNSET ? run->elapsed_s : SA_UNSET,
                                                   buf, sizeof buf));
    sa_rtable_str(&c->t, r, C_ALLOCTRES, tres_str(&c->view, run, job, buf, sizeof buf));
    if (run->node_count != SA_UNSET)
        sa_rtable_int(&c->t, r, C_NNODES, run->node_count);
    sa_rtable_str(&c->t, r, C_NODELIST, run->nodes);
}

/*
 * The job's own line: its state and exit code; its last run's times, TRES and nodes
 * (none while it is pending: Elapsed 00:00:00, NodeList "None assigned", as sacct).
 */
static bool job_line(jobs_t *c, sa_error_t *error)
{
    const sa_jobview_t *j = &c->view;
    bool pending = j->state && strcmp(j->state, "PENDING") == 0;
    size_t r = new_line(c, SIZE_MAX, error);
    char buf[64];

    if (r == SIZE_MAX)
        return false;
    if (!pending && j->nruns) {
        run_cells(c, r, &j->runs[j->nruns - 1], true);
    } else {
        sa_rtable_str(&c->t, r, C_ELAPSED, sa_rhms(0, buf, sizeof buf));
        sa_rtable_str(&c->t, r, C_NODELIST, "None assigned");
    }
    if (!pending && !j->nruns) { /* a job without runs (cancelled before it started): its own times */
        sa_rtable_str(&c->t, r, C_START, iso(j->start));
        sa_rtable_str(&c->t, r, C_END, iso(j->end));
    }
    snprintf(buf, sizeof buf, "%d:%d", j->exit_code < 0 ? 0 : j->exit_code, j->exit_signal < 0 ? 0 : j->exit_signal);
    sa_rtable_str(&c->t, r, C_STATE, j->state);
    sa_rtable_str(&c->t, r, C_EXIT, buf);
    return true;
}

/* The lines of a job document that passed: one, or with -D one per run (the last is the job's own). */
static bool job_lines(jobs_t *c, sa_error_t *error)
{
    const sa_jobview_t *j = &c->view;
    bool pending = j->state && strcmp(j->state, "PENDING") == 0;
    size_t own = c->o->duplicates ? (pending ? j->nruns : (j->nruns ? j->nruns - 1 : 0)) : 0;

    for (size_t i = 0; i < own; i++) {
        size_t r = new_line(c, i, error);
        if (r == SIZE_MAX)
            return false;
        run_cells(c, r, &j->runs[i], false);
    }
    return job_line(c, error);
}

/* Each job document read: the lines of those every filter passes. */
static bool on_job(const bson_t *doc, void *vctx, sa_error_t *error)
{
    jobs_t *c = vctx;
    if (!sa_jobview_read(&c->view, doc, error))
        return false;
    c->docs++;
    return !job_ok(c, &c->view) || job_lines(c, error);
}

/* The members the listing shows and tests, into a projection. */
static void jobs_fields(bson_t *proj)
{
    static const char *const fields[] = {
        "cluster",   "job_id",       "job_id_display", "array",      "het",        "name",       "user",
        "account",   "partition",    "state",          "exit",       "submit",     "eligible",   "start",
        "end",       "reason",       "alloc.billing",  "runs.start", "runs.end",   "runs.state", "runs.exit",
        "runs.nodes", "runs.node_count", "runs.cpus",  "runs.mem_mb", "runs.gpus", "runs.gpus_by_type",
        "runs.elapsed_s", NULL};
    for (const char *const *f = fields; *f; f++)
        BSON_APPEND_INT32(proj, *f, 1);
}

/* Find options with that projection. */
static void jobs_projection(bson_t *opts)
{
    bson_t proj;
    BSON_APPEND_DOCUMENT_BEGIN(opts, "projection", &proj);
    jobs_fields(&proj);
    bson_append_document_end(opts, &proj);
}

/* ---- the job lists (rollups) ----------------------------------------------------------------- */

/*
 * The records of a job list document whose keys, state and end can be those of a job
 * listed: their documents are read next. A live record (an unfinished job) holds its
 * submit time (eligible and start come after it); an ended one its start and end.
 */
static bool on_list(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    jobs_t *c = vctx;
    bool live = d->kind == SA_ROLLUP_K_LIVE;

    c->list_docs++;
    for (size_t i = 0; i < d->nm; i++) {
        bool superseded = !sa_rollup_is_jobs_id(c->cluster, d->m[i].id);
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            char *const *k = d->keys[x[SA_RR_KEY]].s;
            const char *state = x[SA_RR_STATE] >= 0 ? d->states[x[SA_RR_STATE]] : NULL;
            if ((superseded && !c->o->duplicates) || !keys_ok(c, k[0], k[1], k[2], state))
                continue;
            if (live ? (x[SA_RR_START] >= 0 && x[SA_RR_START] > c->E)
                     : (x[SA_RR_END] < c->S || (c->states.n && x[SA_RR_END] > c->E)))
                continue;
            if (!sa_strv_push(superseded ? &c->sids : &c->ids, d->m[i].id))
                return sa_error_nomem(error);
        }
    }
    return true;
}

/* The cluster's jobs from its job lists: the lists by _id, then the documents they name by _id. */
static bool cluster_from_lists(sa_rdb_t *db, jobs_t *c, sa_error_t *error)
{
    bson_t proj = BSON_INITIALIZER;
    /* ended lists from S's day: to E's with -s (final states end in [S, E]), else to the last observation */
    int64_t to = (c->states.n || c->as_of < c->E ? c->E : c->as_of) + 1;
    bool ok;

    ok = sa_rollup_read_lists(db, c->cluster, c->want_live, c->want_final ? c->S : 0, c->want_final ? to : 0, on_list,
                           c, NULL, error);
    jobs_fields(&proj);
    c->superseded = false;
    ok = ok && sa_rollup_read_jobs(db, "jobs", &c->ids, &proj, on_job, c, error);
    c->superseded = true;
    ok = ok && sa_rollup_read_jobs(db, "jobs_superseded", &c->sids, &proj, on_job, c, error);
    c->superseded = false;
    bson_destroy(&proj);
    return ok;
}

/* ---- the job documents (--from-jobs, the reference) ------------------------------------------ */

/* One find on coll: cluster (and account, user), and the state or end clause; fn checks the rest. */
static bool find_jobs(sa_rdb_t *db, jobs_t *c, const char *coll, bool final, sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    sa_strv_t st;
    bool ok;

    sa_strv_init(&st);
    BSON_APPEND_UTF8(&f, "cluster", c->cluster);
    if (c->o->accounts.n)
        sa_rbson_append_in(&f, "account", &c->o->accounts);
    if (c->o->users.n)
        sa_rbson_append_in(&f, "user", &c->o->users);
    for (size_t i = 0; i < c->states.n; i++) {
        if (sa_rstate_is_final(c->states.v[i]) == final && !sa_strv_push(&st, c->states.v[i])) {
            sa_strv_clear(&st);
            return sa_error_nomem(error);
        }
    }
    if (st.n)
        sa_rbson_append_in(&f, "state", &st); /* cluster_state */
    else
        sa_rbson_append_final_states(&f, final ? "$in" : "$nin");
    if (final) { /* cluster_end */
        BSON_APPEND_DOCUMENT_BEGIN(&f, "end", &sub);
        BSON_APPEND_DATE_TIME(&sub, "$gte", c->S * 1000);
        if (c->states.n)
            BSON_APPEND_DATE_TIME(&sub, "$lte", c->E * 1000);
        bson_append_document_end(&f, &sub);
    }
    jobs_projection(&opts);
    c->superseded = strcmp(coll, "jobs_superseded") == 0;
    ok = sa_rdb_each(db, coll, &f, &opts, on_job, c, error);
    c->superseded = false;
    sa_strv_clear(&st);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

static bool cluster_from_jobs(sa_rdb_t *db, jobs_t *c, sa_error_t *error)
{
    return (!c->want_live || find_jobs(db, c, "jobs", false, error)) &&
           (!c->want_final || find_jobs(db, c, "jobs", true, error)) &&
           (!c->want_final || !c->o->duplicates || find_jobs(db, c, "jobs_superseded", true, error));
}

/* ---- -j: the jobs named -------------------------------------------------------------------- */

/* A document read by its raw id: an array's or a het job's leader stands for its members (read next). */
static bool on_named(const bson_t *doc, void *vctx, sa_error_t *error)
{
    jobs_t *c = vctx;
    const sa_jobview_t *j = &c->view;
    char id[32];
    if (!sa_jobview_read(&c->view, doc, error))
        return false;
    if ((j->array_job_id != SA_UNSET && j->array_job_id == j->job_id) ||
        (j->het_job_id != SA_UNSET && j->het_job_id == j->job_id)) {
        c->docs++;
        snprintf(id, sizeof id, "%s%" PRId64, j->array_job_id != SA_UNSET ? "a" : "h", j->job_id);
        return sa_strv_push(&c->leaders, id) || sa_error_nomem(error);
    }
    return on_job(doc, c, error);
}

/* One find on the cluster's documents by the index {cluster, array.job_id, het.job_id} (or {cluster, job_id}). */
static bool find_named(sa_rdb_t *db, jobs_t *c, const char *coll, const char *form, int64_t a, int64_t b,
                       sa_rdb_doc_cb fn, sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    bool ok;
    BSON_APPEND_UTF8(&f, "cluster", c->cluster);
    if (*form == 'j')
        BSON_APPEND_INT64(&f, "job_id", a);
    else
        sa_rbson_append_members(&f, *form == 'a' || *form == '_', a, *form == '_' || *form == '+' ? b : SA_UNSET);
    jobs_projection(&opts);
    c->superseded = strcmp(coll, "jobs_superseded") == 0;
    ok = sa_rdb_each(db, coll, &f, &opts, fn, c, error);
    c->superseded = false;
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

/* The jobs -j names on the cluster at hand: 123 (an array's or het job's every member), 123_4, 123+1. */
static bool cluster_named(sa_rdb_t *db, jobs_t *c, sa_error_t *error)
{
    const sa_strv_t *ids = &c->o->job_ids;
    sa_strv_t byid;
    bool ok = true;

    sa_strv_init(&byid);
    sa_strv_clear(&c->leaders);
    sa_strv_init(&c->leaders);
    for (size_t i = 0; ok && i < ids->n; i++) {
        const char *s = ids->v[i], *sep = strpbrk(s, "_+");
        int64_t a, b;
        char buf[300];
        if (!sep && sa_rjob_id_digits(s, strlen(s), &a)) {
            snprintf(buf, sizeof buf, "%s:%" PRId64, c->cluster, a);
            ok = sa_strv_push(&byid, buf) || sa_error_nomem(error);
            if (ok && c->o->duplicates)
                ok = find_named(db, c, "jobs_superseded", "j", a, 0, on_job, error);
        } else if (sep && sa_rjob_id_digits(s, (size_t)(sep - s), &a) && sa_rjob_id_digits(sep + 1, strlen(sep + 1), &b)) {
            ok = find_named(db, c, "jobs", *sep == '_' ? "_" : "+", a, b, on_job, error);
        } else {
            sa_error_set(error, SA_ERR_USAGE, 0, "-j: expected job ids (123, 123_4, 123+1), got '%s'", s);
            ok = false;
        }
    }
    ok = ok && sa_rollup_read_jobs(db, "jobs", &byid, NULL, on_named, c, error);
    for (size_t i = 0; ok && i < c->leaders.n; i++) {
        int64_t a = strtoll(c->leaders.v[i] + 1, NULL, 10);
        ok = find_named(db, c, "jobs", c->leaders.v[i][0] == 'a' ? "a" : "h", a, 0, on_job, error);
    }
    sa_strv_clear(&byid);
    return ok;
}

/* ---- the listing ------------------------------------------------------------------------------ */

static int line_cmp(const void *x, const void *y)
{
    const line_t *a = x, *b = y;
#define CMP(f)                                                                                                         \
    if (a->f != b->f)                                                                                                  \
        return a->f < b->f ? -1 : 1;
    CMP(ci)
    CMP(base)
    CMP(sub)
    CMP(job_id)
    CMP(submit)
    CMP(run)
    CMP(row)
#undef CMP
    return 0;
}

/* The lines in order into out (a line read twice, by two -j ids, once). */
static bool sorted_table(jobs_t *c, sa_rtable_t *out, sa_error_t *error)
{
    if (c->nlines) /* an empty listing has no lines array (qsort's NULL is undefined) */
        qsort(c->lines, c->nlines, sizeof *c->lines, line_cmp);
    for (size_t i = 0; i < c->nlines; i++) {
        const line_t *l = &c->lines[i];
        size_t r;
        if (i && l->ci == l[-1].ci && l->job_id == l[-1].job_id && l->submit == l[-1].submit && l->run == l[-1].run)
            continue;
        if ((r = sa_rtable_add_row(out)) == SIZE_MAX)
            return sa_error_nomem(error);
        for (size_t k = 0; k < C_N; k++) {
            const sa_cell_t *cell = sa_rtable_cell(&c->t, l->row, k);
            if (cell->kind == SA_CELL_STR)
                sa_rtable_str(out, r, k, cell->s);
            else if (cell->kind == SA_CELL_INT)
                sa_rtable_int(out, r, k, cell->i);
        }
    }
    return true;
}

/* The window from the options and sacct's defaults (the header comment). */
static void set_window(jobs_t *c)
{
    const sa_report_opts_t *o = c->o;
    c->E = o->end != SA_UNSET ? o->end : o->now;
    if (o->start != SA_UNSET)
        c->S = o->start;
    else if (o->job_ids.n)
        c->S = SA_UNSET;
    else
        c->S = c->states.n ? o->now : sa_rollup_day(o->now);
    c->want_final = !c->states.n;
    c->want_live = !c->states.n;
    for (size_t i = 0; i < c->states.n; i++) {
        if (sa_rstate_is_final(c->states.v[i]))
            c->want_final = true;
        else
            c->want_live = true;
    }
}

/* The preamble: what was selected, what was read. */
static void jobs_preamble(const jobs_t *c, const sa_rclusters_t *cl, bool lists, sa_strv_t *pre)
{
    const sa_report_opts_t *o = c->o;
    char st[512] = "";
    for (size_t i = 0, len = 0; i < c->states.n && len < sizeof st; i++)
        len += (size_t)snprintf(st + len, sizeof st - len, "%s%s", i ? "," : "", c->states.v[i]);
    if (c->S == SA_UNSET)
        sa_rpreamble_add(pre, "Jobs: those named by -j, in any window");
    else if (c->states.n)
        sa_rpreamble_add(pre, "Jobs in state %s at some time from %s to %s", st, sa_riso(c->S), sa_riso(c->E));
    else
        sa_rpreamble_add(pre, "Jobs eligible before %s and not ended before %s (sacct's window)", sa_riso(c->E),
                         sa_riso(c->S));
    for (size_t ci = 0; ci < cl->n; ci++)
        sa_rpreamble_add(pre, "%s: last observed %s", cl->v[ci].name,
                         sa_riso(sa_rcluster_as_of(&cl->v[ci], o->now)));
    if (o->job_ids.n)
        sa_rpreamble_add(pre, "Read: %zu job document(s), by _id and by cluster_array_het", c->docs);
    else if (lists)
        sa_rpreamble_add(pre, "Read: %zu job list document(s) by _id, then %zu job document(s) by _id", c->list_docs,
                         c->docs);
    else
        sa_rpreamble_add(pre, "Read: %zu job document(s) by query (%s)", c->docs,
                         o->from_jobs ? "--from-jobs" : "a cluster has no job lists");
    sa_rpreamble_add(pre, "%s", "One line per job (sacct -X); times UTC; Elapsed [D-]HH:MM:SS, a running job's up to "
                                "its cluster's last observation; ExitCode code:signal");
    if (o->duplicates)
        sa_rpreamble_add(pre, "%s", "-D: each run of a requeued job, and the earlier jobs of a reused id, are lines");
}

/* Every cluster's lines into c (the job lists where the cluster has them, else the documents). */
static bool read_clusters(sa_rdb_t *db, jobs_t *c, const sa_rclusters_t *cl, bool *all_lists, sa_error_t *error)
{
    *all_lists = true;
    for (size_t ci = 0; ci < cl->n; ci++) {
        bool lists = !c->o->from_jobs && cl->v[ci].rollup_version >= SA_ROLLUP_VERSION;
        bool ok;
        c->ci = ci;
        c->cluster = cl->v[ci].name;
        c->as_of = sa_rcluster_as_of(&cl->v[ci], c->o->now);
        sa_strv_clear(&c->ids);
        sa_strv_clear(&c->sids);
        sa_strv_init(&c->ids);
        sa_strv_init(&c->sids);
        if (c->o->job_ids.n)
            ok = cluster_named(db, c, error);
        else if (lists)
            ok = cluster_from_lists(db, c, error);
        else
            ok = cluster_from_jobs(db, c, error);
        *all_lists = *all_lists && lists;
        if (!ok)
            return false;
    }
    return true;
}

/*
 * An empty listing with -A or -u: each name must be one the archive has (an unknown one is
 * exit 2, as in the other reports: a misspelt user is not "no jobs"). Only an empty answer
 * pays for the lookup (a query on cluster_account_start / cluster_user_submit, limit 1).
 */
static bool names_known(sa_rdb_t *db, const jobs_t *c, const sa_rclusters_t *cl, sa_error_t *error)
{
    return c->nlines || (sa_rdb_check_names(db, cl, "account", &c->o->accounts, NULL, error) &&
                         sa_rdb_check_names(db, cl, "user", &c->o->users, NULL, error));
}

bool sa_report_jobs(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    sa_rtable_t t;
    sa_strv_t pre;
    jobs_t c;
    json_t *extra = NULL;
    bool ok = false, lists = false;

    (void)warn;
    memset(&c, 0, sizeof c);
    c.o = o;
    sa_strv_init(&c.states);
    sa_strv_init(&c.ids);
    sa_strv_init(&c.sids);
    sa_strv_init(&c.leaders);
    sa_jobview_init(&c.view);
    sa_rtable_init(&c.t, jobs_cols, C_N);
    sa_rtable_init(&t, jobs_cols, C_N);
    sa_strv_init(&pre);
    if (o->format == SA_FMT_SVG || o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for jobs", sa_format_name(o->format));
        goto done;
    }
    if (!resolve_states(&o->states, &c.states, error))
        goto done;
    set_window(&c);
    if (!sa_report_window("jobs", c.S, c.E, false, error))
        goto done;
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error) ||
        !read_clusters(db, &c, &cl, &lists, error) || !names_known(db, &c, &cl, error) || !sorted_table(&c, &t, error))
        goto done;
    jobs_preamble(&c, &cl, lists, &pre);
    extra = json_pack("{s:s?, s:s, s:{s:I, s:I}}", "start", c.S == SA_UNSET ? NULL : sa_riso(c.S), "end",
                      sa_riso(c.E), "read", "job_documents", (json_int_t)c.docs, "job_list_documents",
                      (json_int_t)c.list_docs);
    {
        sa_rdoc_t doc = {.kind = "jobs", .title = "slurm-report: jobs", .preamble = &pre, .table = &t, .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_strv_clear(&c.states);
    sa_strv_clear(&c.ids);
    sa_strv_clear(&c.sids);
    sa_strv_clear(&c.leaders);
    sa_jobview_clear(&c.view);
    sa_rtable_clear(&c.t);
    free(c.lines);
    sa_rtable_clear(&t);
    sa_strv_clear(&pre);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
