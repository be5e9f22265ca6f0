/*
 * sa_jobs.c - `slurm-report jobs`: a listing of the archive's jobs as sacct gives it
 * (sacct -X: one line per job record, its allocation), with sacct's options: -M, -A, -u,
 * -s STATES, -S/-E, --name, --partition (-r), -j JOBIDS, -D (--duplicates), -o with
 * sacct's field names.
 *
 * Records: slurmdbd keeps one record per incarnation of a job (jrec_t): each run of a
 * requeued job (REQUEUED, NODE_FAIL, ...) with its own submit, eligible, Reason and TRES,
 * and the current incarnation; a reused id's earlier job (jobs_superseded) is another.
 * The window, as slurmdbd selects records (sacct's man page; as_mysql_jobacct_process.c),
 * each by its own times:
 *   without -s  eligible before E and not ended before S (still unfinished ones
 *               included): eligible < E and (no end or end >= S);
 *   with -s     whose state is one of STATES and that were in it during [S, E]:
 *               PENDING eligible <= E (and not started before S); RUNNING, SUSPENDED
 *               (any unfinished state) started <= E; a final state ended in [S, E].
 *               Unlike slurmdbd, whose PENDING and RUNNING clauses do not test the job's
 *               state, PD/R/S here are the job's state now (README "Job listings").
 * Defaults: -E now; -S midnight (UTC) of today, or now with -s (with both defaults,
 * the jobs in those states now); with -j and no -S, no window at all.
 * A final record without an end is in no window (the job lists cannot hold it either).
 * With -D every record the window selected is a line (sacct -D); without, the newest of
 * each job id among them (sacct drops duplicates so): a requeued job whose last
 * incarnation came after the window shows the run it had in it, a reused id's earlier
 * job shows in its windows.
 * -p/-P print sacct's text (sacct -X -P, SLURM_TIME_FORMAT=standard, UTC): the header the
 * field names, times without a zone, Unknown/None for times not known, "CANCELLED by
 * <uid>"; the table, CSV and JSON are ISO-8601 UTC with empty (null) unknown times.
 *
 * What it reads (report/README.md, "What a report reads"): the job lists of the rollups by _id
 * (schema/jobdoc/sa_rollup.h: the live shards, the ended lists of the days from S to the
 * cluster's last observation; with -s only the lists those states can be in), whose
 * records decide account, user, partition, state and end; then only the documents of
 * the records that pass, by _id $in (jobs_superseded's too), with a projection of what
 * the listing shows. The name, and the window's exact test, are applied to the documents.
 * A live job's list record holds its current incarnation's submit, which says nothing of
 * an earlier run's window: every live job the keys pass is read. --from-jobs reads
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

/*
 * The states Slurm ends an incarnation in when it requeues the job (the REQUEUED record of
 * sacct -D; a node failure's or a preemption's): a job in any state now may have an earlier
 * record in one of them.
 */
static const char *const requeue_states[] = {"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "NODE_FAIL", "PREEMPTED",
                                             "BOOT_FAIL", NULL};

/* A line of the listing, with what orders it (cluster, then job id as sacct shows it, then record). */
typedef struct {
    size_t ci;          /* the cluster's position */
    int64_t base, sub;  /* array or het job id (else the job id); task id or offset (pending tasks last) */
    int64_t job_id;
    int64_t doc_submit; /* the document's submit (a reused id's earlier job first), INT64_MIN when not known */
    int64_t submit;     /* the record's submit (else its start), INT64_MIN when not known: the newest is kept */
    size_t run;         /* the record's run, SIZE_MAX for the current incarnation */
    size_t row;         /* in the unsorted table */
    bool keep;          /* sorted_table: kept (without -D, the newest record of a job id) */
} line_t;

/*
 * One record of a job as slurmdbd keeps it: an incarnation, which sacct -D prints as a line
 * of its own. Each run is one (a requeued job's earlier runs, REQUEUED, NODE_FAIL, ...,
 * each with its own submit, eligible, Reason and TRES); so is the job's current
 * incarnation when it has no run (pending, or ended before it started).
 */
typedef struct {
    const sa_jobview_run_t *run; /* NULL: the current incarnation, without a run */
    bool current;                /* the job's current incarnation: state, exit code and Reason are the job's */
    int64_t submit;              /* of the incarnation, SA_UNSET when not known */
    int64_t eligible;            /* when it became eligible (a run's start when not recorded), SA_UNSET: never */
    int64_t start, end;          /* SA_UNSET: not started, not ended */
    const char *state;
} jrec_t;

typedef struct {
    const sa_report_opts_t *o;
    int64_t S, E;          /* the window; S SA_UNSET: none (-j without -S) */
    sa_strv_t states;      /* -s resolved to full names */
    bool want_final, want_live;
    bool requeue_states;   /* -s names a state an earlier incarnation ends in (requeue_states) */
    bool sacct_text;       /* -p/-P: the cells as sacct prints them */
    size_t ci;             /* the cluster at hand */
    const char *cluster;
    int64_t as_of;         /* its last observation: a running job's Elapsed runs up to it */
    bool superseded;       /* the documents read are of jobs_superseded */
    sa_jobview_t view;
    jrec_t *recs;          /* the records of the document at hand */
    size_t reccap;
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

/* True when state is one of -s (any state without -s). */
static bool state_ok(const jobs_t *c, const char *state)
{
    return !c->states.n || (state && sa_strv_contains(&c->states, state));
}

/* The filters of a job as a whole: account, user, partition. */
static bool owner_ok(const jobs_t *c, const char *account, const char *user, const char *partition)
{
    const sa_report_opts_t *o = c->o;
    return (!o->accounts.n || (account && sa_strv_contains(&o->accounts, account))) &&
           (!o->users.n || (user && sa_strv_contains(&o->users, user))) && partition_ok(&o->partitions, partition);
}

/*
 * The filters a job list record can decide too: owner_ok and the state (any state when -s
 * names a state an earlier incarnation ends in: the job's own state is not its earlier
 * records').
 */
static bool keys_ok(const jobs_t *c, const char *account, const char *user, const char *partition, const char *state)
{
    return owner_ok(c, account, user, partition) && (c->requeue_states || state_ok(c, state));
}

/* ---- records: a job's incarnations, as slurmdbd keeps them ---------------------------------- */

static bool is_pending(const char *state)
{
    return state && strcmp(state, "PENDING") == 0;
}

/*
 * True when the job's current incarnation has a run: its last one, unless the job is
 * pending again or that run was an earlier incarnation's (another submit time; without
 * runs[].submit, a REQUEUED run of a job that is not REQUEUED).
 */
static bool current_ran(const sa_jobview_t *j)
{
    const sa_jobview_run_t *last = j->nruns ? &j->runs[j->nruns - 1] : NULL;
    if (!last || is_pending(j->state))
        return false;
    if (last->submit != SA_UNSET && j->submit != SA_UNSET)
        return last->submit == j->submit;
    return !(last->state && strcmp(last->state, "REQUEUED") == 0 && (!j->state || strcmp(j->state, "REQUEUED") != 0));
}

/* The records of job j into r (room for j->nruns + 1), in time order; returns how many. */
static size_t job_records(const sa_jobview_t *j, jrec_t *r)
{
    bool ran = current_ran(j);
    size_t n = 0;

    for (size_t i = 0; i < j->nruns; i++) {
        const sa_jobview_run_t *run = &j->runs[i];
        bool cur = ran && i + 1 == j->nruns;
        r[n].run = run;
        r[n].current = cur;
        r[n].submit = run->submit != SA_UNSET ? run->submit : cur ? j->submit : SA_UNSET;
        r[n].eligible = run->eligible != SA_UNSET ? run->eligible
                        : cur && j->eligible != SA_UNSET ? j->eligible
                                                         : run->start; /* it was eligible by its start */
        r[n].start = run->start;
        r[n].end = run->end != SA_UNSET || !cur || !j->final ? run->end : j->end;
        r[n].state = cur ? j->state : run->state;
        n++;
    }
    if (!ran) {
        /* slurmdbd's record of a job that ended without a run may have a start (a job cancelled in the second it
         * was submitted has start = end): sacct's, when the current fields are sacct's; squeue gives such a job
         * its end as start */
        bool final = sa_job_state_is_final(j->state), sacct = j->source && strncmp(j->source, "sacct", 5) == 0;
        r[n++] = (jrec_t){NULL, true, j->submit, j->eligible, final && sacct ? j->start : SA_UNSET,
                          final ? j->end : SA_UNSET, j->state};
    }
    return n;
}

/*
 * The window test of a record (the header comment's rules), as slurmdbd windows each
 * record by its own times: a requeued job's earlier run is in the windows it was in.
 */
static bool window_ok(const jobs_t *c, const jrec_t *r)
{
    bool final = sa_job_state_is_final(r->state);
    if (c->S == SA_UNSET)
        return true;
    if (!c->states.n)
        return r->eligible != SA_UNSET && r->eligible < c->E && (r->end == SA_UNSET ? !final : r->end >= c->S);
    if (final)
        return r->end != SA_UNSET && r->end >= c->S && r->end <= c->E;
    if (is_pending(r->state))
        return r->eligible != SA_UNSET && r->eligible <= c->E && (r->start == SA_UNSET || r->start >= c->S);
    return r->start != SA_UNSET && r->start <= c->E;
}

/* The filters of a job document itself (its records are tested next). */
static bool job_ok(const jobs_t *c, const sa_jobview_t *j)
{
    if (c->superseded && !j->final)
        return false; /* an unfinished job displaced by a reused id: in no listing of the queue */
    return owner_ok(c, j->account, j->user, j->partition) &&
           (!c->o->names.n || (j->name && sa_strv_contains(&c->o->names, j->name)));
}

/* ---- lines -------------------------------------------------------------------------------- */

/* sacct's text of a time (SLURM_TIME_FORMAT=standard, UTC): ISO-8601 without a zone, or unset (Unknown, None). */
static const char *sacct_time(int64_t t, const char *unset, char *buf, size_t n)
{
    const char *iso;
    if (t == SA_UNSET)
        return unset;
    iso = sa_riso(t); /* YYYY-MM-DDTHH:MM:SSZ */
    snprintf(buf, n, "%.*s", (int)strcspn(iso, "Z"), iso);
    return buf;
}

/*
 * A time as the output shows it: the table, CSV and JSON ISO-8601 UTC (NULL when unset: an
 * empty cell, null); -p/-P sacct's text, with unset (sacct's Unknown or None) for an unset time.
 */
static const char *time_text(const jobs_t *c, int64_t t, const char *unset, char *buf, size_t n)
{
    if (c->sacct_text)
        return sacct_time(t, unset, buf, n);
    return t == SA_UNSET ? NULL : sa_riso(t);
}

/* [D-]HH:MM:SS of the interval [from, to) (0 when either is unknown). */
static const char *elapsed_str(int64_t from, int64_t to, int64_t given, char *buf, size_t n)
{
    int64_t s = given != SA_UNSET ? given : (from != SA_UNSET && to != SA_UNSET && to > from ? to - from : 0);
    return sa_rhms(s, buf, n);
}

/* Memory of a TRES string as Slurm prints MiB (convert_num_unit, exact): 500M, 4G, 1T; 0 as "0". */
static void mem_text(int64_t mb, char *buf, size_t n)
{
    static const char units[] = "MGTPE";
    size_t u = 0;
    while (mb >= 1024 && mb % 1024 == 0 && u + 1 < sizeof units - 1) {
        mb /= 1024;
        u++;
    }
    if (mb == 0)
        snprintf(buf, n, "0");
    else
        snprintf(buf, n, "%" PRId64 "%c", mb, units[u]);
}

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * sacct's AllocTRES of a record: billing, cpu, gres/gpu (and per type), mem, node and the
 * TRES the model does not name, as name=value sorted as text (slurmdb_make_tres_string_from_simple
 * sorts its entries so: gres/gpu:a100=1 before gres/gpu=1). billing < 0: none.
 */
static const char *tres_str(const sa_jobview_run_t *r, double billing, const sa_jobview_tres_t *other, size_t nother,
                            char *buf, size_t n)
{
    char ent[24][160], *v[24], mem[32];
    size_t ne = 0, len = 0;
#define ENT(...)                                                                                                       \
    do {                                                                                                               \
        if (ne < sizeof ent / sizeof ent[0]) {                                                                         \
            snprintf(ent[ne], sizeof ent[ne], __VA_ARGS__);                                                            \
            v[ne] = ent[ne];                                                                                           \
            ne++;                                                                                                      \
        }                                                                                                              \
    } while (0)
    if (billing >= 0)
        ENT("billing=%.15g", billing);
    if (r->cpus != SA_UNSET)
        ENT("cpu=%" PRId64, r->cpus);
    if (r->gpus > 0)
        ENT("gres/gpu=%" PRId64, r->gpus);
    for (size_t k = 0; k < r->ngpu_types; k++) {
        if (r->gpu_types[k].type && r->gpu_types[k].type[0])
            ENT("gres/gpu:%s=%" PRId64, r->gpu_types[k].type, r->gpu_types[k].count);
    }
    if (r->mem_mb != SA_UNSET) {
        mem_text(r->mem_mb, mem, sizeof mem);
        ENT("mem=%s", mem);
    }
    if (r->node_count != SA_UNSET)
        ENT("node=%" PRId64, r->node_count);
    for (size_t k = 0; k < nother; k++) {
        if (other[k].name && other[k].value)
            ENT("%s=%s", other[k].name, other[k].value);
    }
#undef ENT
    qsort(v, ne, sizeof v[0], str_ptr_cmp);
    buf[0] = '\0';
    for (size_t k = 0; k < ne && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? "," : "", v[k]);
    return buf;
}

/* A new line of the job at hand for record rec (run: its position, SIZE_MAX for the current incarnation). */
static size_t new_line(jobs_t *c, const jrec_t *rec, size_t run, sa_error_t *error)
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
    l->doc_submit = j->submit != SA_UNSET ? j->submit : INT64_MIN; /* earlier jobs of a reused id first */
    l->submit = rec->submit != SA_UNSET ? rec->submit : rec->start != SA_UNSET ? rec->start : INT64_MIN;
    l->run = run;
    l->row = r;
    l->keep = true;
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
    return r;
}

/*
 * The cells of a record: the current incarnation's state, exit code and Reason are the
 * job's (-p/-P: sacct's "CANCELLED by <uid>" when sacct said who), an earlier run's its
 * own; times, elapsed, TRES and nodes are the run's, or for an incarnation without a run
 * none: Start Unknown while it waits, None once it ended (slurmdbd's NO_VAL), Elapsed
 * 00:00:00, NodeList "None assigned", NNodes the nodes asked for.
 */
static void record_cells(jobs_t *c, size_t r, const jrec_t *rec)
{
    const sa_jobview_t *j = &c->view;
    const sa_jobview_run_t *run = rec->run;
    bool final = sa_job_state_is_final(rec->state);
    int code = rec->current ? j->exit_code : run->exit_code, sig = rec->current ? j->exit_signal : run->exit_signal;
    char buf[512];

    if (c->sacct_text && rec->current && rec->state && strcmp(rec->state, "CANCELLED") == 0 && j->cancelled_by) {
        snprintf(buf, sizeof buf, "CANCELLED by %s", j->cancelled_by);
        sa_rtable_str(&c->t, r, C_STATE, buf);
    } else {
        sa_rtable_str(&c->t, r, C_STATE, rec->state);
    }
    snprintf(buf, sizeof buf, "%d:%d", code < 0 ? 0 : code, sig < 0 ? 0 : sig);
    sa_rtable_str(&c->t, r, C_EXIT, buf);
    sa_rtable_str(&c->t, r, C_SUBMIT, time_text(c, rec->submit, "Unknown", buf, sizeof buf));
    sa_rtable_str(&c->t, r, C_START, time_text(c, rec->start, final && !run ? "None" : "Unknown", buf, sizeof buf));
    sa_rtable_str(&c->t, r, C_END, time_text(c, rec->end, "Unknown", buf, sizeof buf));
    sa_rtable_str(&c->t, r, C_REASON, rec->current ? j->reason : run->reason);
    if (!run) {
        sa_rtable_str(&c->t, r, C_ELAPSED, sa_rhms(0, buf, sizeof buf));
        sa_rtable_str(&c->t, r, C_NODELIST, "None assigned");
        if (j->req_nodes != SA_UNSET)
            sa_rtable_int(&c->t, r, C_NNODES, j->req_nodes);
        return;
    }
    {
        int64_t end = rec->end;
        if (end == SA_UNSET && run->start != SA_UNSET)
            end = c->as_of > run->start ? c->as_of : run->start; /* running: up to the last observation */
        sa_rtable_str(&c->t, r, C_ELAPSED,
                      elapsed_str(run->start, end, rec->end != SA_UNSET ? run->elapsed_s : SA_UNSET, buf, sizeof buf));
    }
    {
        /* the run's own billing and other TRES; the current run of an archive written before runs kept them: the job's */
        double billing = run->billing >= 0 ? run->billing : rec->current ? j->alloc_billing : -1;
        bool own_other = run->nother || run->billing >= 0 || !rec->current;
        sa_rtable_str(&c->t, r, C_ALLOCTRES,
                      tres_str(run, billing, own_other ? run->other : j->alloc_other,
                               own_other ? run->nother : j->nalloc_other, buf, sizeof buf));
    }
    if (run->node_count != SA_UNSET)
        sa_rtable_int(&c->t, r, C_NNODES, run->node_count);
    sa_rtable_str(&c->t, r, C_NODELIST, run->nodes);
}

/*
 * The lines of a job document that passed the document's filters: one per record in the
 * window (and in -s's states); without -D only the newest of a job id is kept in the end
 * (sorted_table), as sacct drops duplicates among the records the window selected.
 */
static bool job_lines(jobs_t *c, sa_error_t *error)
{
    const sa_jobview_t *j = &c->view;
    size_t n;

    if (!SA_VEC_GROW(c->recs, c->reccap, 0, j->nruns + 1, 8))
        return sa_error_nomem(error);
    n = job_records(j, c->recs);
    for (size_t i = 0; i < n; i++) {
        const jrec_t *rec = &c->recs[i];
        size_t r;
        if (!state_ok(c, rec->state) || !window_ok(c, rec))
            continue;
        if ((r = new_line(c, rec, rec->current ? SIZE_MAX : (size_t)(rec->run - j->runs), error)) == SIZE_MAX)
            return false;
        record_cells(c, r, rec);
    }
    return true;
}

/* Each job document read: the lines of its records every filter passes. */
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
        "cluster",       "job_id",          "job_id_display",    "array",        "het",
        "name",          "user",            "account",           "partition",    "state",
        "exit",          "submit",          "eligible",          "start",        "end",
        "reason",        "alloc.billing",   "alloc.other",       "req.nodes",    "extra.cancelled_by", "slurm.source",
        "runs.start",    "runs.end",        "runs.submit",       "runs.eligible", "runs.state",
        "runs.exit",     "runs.nodes",      "runs.node_count",   "runs.cpus",    "runs.mem_mb",
        "runs.gpus",     "runs.gpus_by_type", "runs.billing",    "runs.other",   "runs.reason",
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
 * listed: their documents are read next, jobs_superseded's too (a job whose id was reused
 * after the window is the window's). A live record (an unfinished job) holds its current
 * incarnation's submit time, which says nothing of an earlier run's window; an ended
 * one its start and end.
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
            if (!keys_ok(c, k[0], k[1], k[2], state))
                continue;
            /* a live job submitted after E may have run in the window before it was requeued: read too; an
             * ended one has no record ending after its own end, and with -s none ending after E unless an
             * earlier incarnation's state is asked for */
            if (!live && (x[SA_RR_END] < c->S || (c->states.n && !c->requeue_states && x[SA_RR_END] > c->E)))
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
    /* ended lists from S's day: to E's with -s (final states end in [S, E]; not an earlier incarnation's
     * whose job ended later), else to the last observation */
    int64_t to = ((c->states.n && !c->requeue_states) || c->as_of < c->E ? c->E : c->as_of) + 1;
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
    for (size_t i = 0; i < c->states.n && !c->requeue_states; i++) {
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
        if (c->states.n && !c->requeue_states)
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
           (!c->want_final || find_jobs(db, c, "jobs_superseded", true, error));
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
            /* an earlier job of the id: with -D, or when a window may select it rather than the newer one */
            if (ok && (c->o->duplicates || c->S != SA_UNSET))
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

/* The order of the listing: cluster, job id as sacct shows it, the job's documents, then records by submit. */
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
    CMP(doc_submit)
    CMP(submit)
    CMP(run)
    CMP(row)
#undef CMP
    return 0;
}

/* The records of one job id together, oldest first (the newest of a job id is its last). */
static int record_cmp(const void *x, const void *y)
{
    const line_t *a = x, *b = y;
#define CMP(f)                                                                                                         \
    if (a->f != b->f)                                                                                                  \
        return a->f < b->f ? -1 : 1;
    CMP(ci)
    CMP(job_id)
    CMP(submit)
    CMP(doc_submit)
    CMP(run)
    CMP(row)
#undef CMP
    return 0;
}

/* The same record (a document read twice, by two -j ids). */
static bool same_record(const line_t *a, const line_t *b)
{
    return a->ci == b->ci && a->job_id == b->job_id && a->doc_submit == b->doc_submit && a->submit == b->submit &&
           a->run == b->run;
}

/*
 * The lines in order into out: a record read twice once; without -D only the newest record
 * of each job id (sacct's duplicates dropped among the records the window selected).
 */
static bool sorted_table(jobs_t *c, sa_rtable_t *out, sa_error_t *error)
{
    if (!c->nlines) /* an empty listing has no lines array (qsort's NULL is undefined) */
        return true;
    qsort(c->lines, c->nlines, sizeof *c->lines, record_cmp);
    for (size_t i = 0; i < c->nlines; i++) {
        line_t *l = &c->lines[i];
        bool last = i + 1 == c->nlines || l[1].ci != l->ci || l[1].job_id != l->job_id;
        l->keep = !(i + 1 < c->nlines && same_record(l, l + 1)) && (c->o->duplicates || last);
    }
    qsort(c->lines, c->nlines, sizeof *c->lines, line_cmp);
    for (size_t i = 0; i < c->nlines; i++) {
        const line_t *l = &c->lines[i];
        size_t r;
        if (!l->keep)
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
        for (size_t k = 0; requeue_states[k]; k++)
            c->requeue_states = c->requeue_states || strcmp(c->states.v[i], requeue_states[k]) == 0;
    }
    /* a live job may hold an earlier incarnation in such a state */
    c->want_live = c->want_live || c->requeue_states;
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
    sa_rpreamble_add(pre, "%s", "One line per job record (sacct -X), without -D the newest of each job id the window "
                                "selected; times UTC; Elapsed [D-]HH:MM:SS, a running job's up to "
                                "its cluster's last observation; ExitCode code:signal");
    if (o->duplicates)
        sa_rpreamble_add(pre, "%s", "-D: every record the window selected is a line: each run of a requeued job, and "
                                    "the earlier jobs of a reused id");
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
    c.sacct_text = o->format == SA_FMT_PARSABLE;
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
        sa_rdoc_t doc = {.kind = "jobs", .title = "slurm-report: jobs", .preamble = &pre, .table = &t, .json = extra,
                         .parsable_titles = true};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    json_decref(extra);
    sa_strv_clear(&c.states);
    sa_strv_clear(&c.ids);
    sa_strv_clear(&c.sids);
    sa_strv_clear(&c.leaders);
    sa_jobview_clear(&c.view);
    free(c.recs);
    sa_rtable_clear(&c.t);
    free(c.lines);
    sa_rtable_clear(&t);
    sa_strv_clear(&pre);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
