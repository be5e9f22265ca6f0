/*
 * sa_utilplan.c - slurmdbd's planned time for utilization --summary (sa_util_read_planned
 * of sa_util.h): the CPU time eligible pending jobs waited for, hour by hour, by the rule of
 * slurmdbd's hourly rollup (as_mysql_rollup.c, _add_planned_time; sa_util_pending_secs).
 *
 * Where the job records come from (what the rollups keep; no job document, but for lists
 * written before 0.5.1):
 * - every run that started from the window's start to the cluster's last observation: the
 *   started lists ("<cluster>:<day>:s<part>"): its incarnation's eligible time, its start
 *   and its CPUs (the allocated ones: the lists do not keep ReqCPUS, nor the reservation);
 * - every job that never started and was pending in the window: the live shards (PENDING,
 *   submitted before the window's end) and the ended lists (ended without a start, from the
 *   window's start on), whose records keep (SA_RL_*) its eligible time, req.cpus, whether it
 *   is a job of a reservation (which has no planned time, as in slurmdbd) and the pending
 *   tasks of an array meta-record (array.task_string: each counts). A record written before
 *   0.5.1 does not: that job's document is read by _id for them.
 */
#include "sa_util.h"

#include <stdlib.h>
#include <string.h>

#include "sa_jobview.h"
#include "sa_rollup_reader.h"
#include "sa_rollup.h"
#include "sa_vec.h"

#define HOUR 3600

/* A job that never started: what planned needs of it (SA_RL_*), from its list or its document. */
typedef struct {
    char *id;
    int coll; /* 0: jobs, 1: jobs_superseded */
    int64_t eligible, end, cpus, tasks;
    bool resv;
    bool doc; /* read from its document (its list written before 0.5.1) */
} listed_t;

/* The documents' order (jobs, then jobs_superseded; by job id), as their reads go. */
static int listed_cmp(const void *x, const void *y)
{
    const listed_t *a = x, *b = y;
    if (a->coll != b->coll)
        return a->coll - b->coll;
    return sa_rollup_id_job_cmp(&a->id, &b->id);
}

typedef struct {
    const sa_report_opts_t *o;
    sa_ualloc_t *a;
    const int64_t *spans;
    size_t nsp;
    sa_strv_t ids[2];   /* documents to read: of jobs, of jobs_superseded */
    listed_t *listed;   /* the jobs that never started, from their lists or documents */
    size_t nlisted, caplisted;
    sa_jobview_t view;
} plan_t;

/*
 * Adds one pending record's planned CPU-seconds (sa_util_pending_secs) to the hours of
 * the known time it overlaps.
 */
static void add_pending(plan_t *p, int64_t eligible, int64_t start, int64_t end, int64_t cpus, int64_t tasks)
{
    sa_ualloc_t *a = p->a;
    int64_t stop = start != SA_UNSET ? start : end != SA_UNSET ? end : INT64_MAX;

    if (eligible == SA_UNSET || eligible <= 0 || cpus <= 0) {
        a->plan_unknown += eligible == SA_UNSET;
        return;
    }
    for (size_t k = 0; k < p->nsp; k++) {
        int64_t b = p->spans[2 * k] > eligible ? p->spans[2 * k] : eligible;
        int64_t e = p->spans[2 * k + 1] < stop ? p->spans[2 * k + 1] : stop;
        while (b < e) {
            size_t h = (size_t)((b - a->h0) / HOUR);
            int64_t he = a->h0 + (int64_t)(h + 1) * HOUR;
            if (he > e)
                he = e;
            if (h < a->nh)
                a->plan[h] += sa_util_pending_secs(eligible, start, end, b, he, cpus, tasks);
            b = he;
        }
    }
}

/* A started list: each run's time between its eligible time and its start. */
static bool on_started(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    plan_t *p = vctx;
    (void)error;
    for (size_t m = 0; m < d->nm; m++) {
        for (size_t i = 0; i < d->m[m].nrec; i++) {
            const int64_t *x = &d->m[m].rec[i * SA_RS_NF];
            if (x[SA_RS_START] > p->o->start)
                add_pending(p, x[SA_RS_ELIGIBLE], x[SA_RS_START], SA_UNSET, x[SA_RS_CPUS], 0);
        }
    }
    return true;
}

/* Adds job document id's planned fields (x: SA_RL_*) with its end; false on out of memory. */
static bool listed_add(plan_t *p, const char *id, const int64_t *x, int64_t end, bool doc)
{
    char *copy = strdup(id);
    if (!copy || !SA_VEC_GROW(p->listed, p->caplisted, p->nlisted, 1, 64)) {
        free(copy);
        return false;
    }
    p->listed[p->nlisted++] = (listed_t){.id = copy,
                                         .coll = sa_rollup_is_jobs_id(p->a->cluster, id) ? 0 : 1,
                                         .eligible = x[SA_RL_ELIGIBLE],
                                         .end = end,
                                         .cpus = x[SA_RL_PLAN_CPUS],
                                         .tasks = x[SA_RL_TASKS],
                                         .resv = (x[SA_RL_PLAN] & SA_RL_PLAN_RESV) != 0,
                                         .doc = doc};
    return true;
}

/* The job lists: the jobs that never started and may have waited in the window. */
static bool on_list(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    plan_t *p = vctx;
    sa_rollup_kind_t kind = d->kind;

    for (size_t m = 0; m < d->nm; m++) {
        for (size_t i = 0; i < d->m[m].nrec; i++) {
            const int64_t *x = &d->m[m].rec[i * SA_RR_NF];
            const char *st = x[SA_RR_STATE] >= 0 && (size_t)x[SA_RR_STATE] < d->nstates ? d->states[x[SA_RR_STATE]]
                                                                                        : NULL;
            bool want = kind == SA_ROLLUP_K_LIVE
                            ? st && strcmp(st, "PENDING") == 0 && (x[SA_RR_START] < 0 || x[SA_RR_START] < p->o->end)
                            : x[SA_RR_START] < 0 && x[SA_RR_END] >= p->o->start;
            int coll = sa_rollup_is_jobs_id(d->cluster, d->m[m].id) ? 0 : 1; /* jobs, else jobs_superseded */
            bool ok;
            if (!want)
                continue;
            if (!(x[SA_RL_PLAN] & SA_RL_PLAN_KEPT)) /* a list written before 0.5.1: the document */
                ok = sa_strv_push(&p->ids[coll], d->m[m].id);
            else
                ok = listed_add(p, d->m[m].id, x,
                                kind == SA_ROLLUP_K_LIVE ? (x[SA_RR_ENDED_AT] < 0 ? SA_UNSET : x[SA_RR_ENDED_AT])
                                                         : x[SA_RR_END],
                                false);
            if (!ok)
                return sa_error_nomem(error);
        }
    }
    return true;
}

/* A job that never started, from its document: the planned fields its list would keep (sa_rollup_plan_fields). */
static bool on_job(const bson_t *doc, void *vctx, sa_error_t *error)
{
    plan_t *p = vctx;
    const sa_jobview_t *v = &p->view;
    int64_t x[SA_RR_NF] = {0};

    if (!sa_jobview_read(&p->view, doc, error))
        return false;
    if (!v->has_id || v->id.value_type != BSON_TYPE_UTF8)
        return true; /* read by its string _id: always one */
    sa_rollup_plan_fields(v, x);
    return listed_add(p, v->id.value.v_utf8.str, x, v->final ? v->end : v->vanished_at, true) ||
           sa_error_nomem(error);
}

bool sa_util_read_planned(const sa_report_opts_t *o, sa_rdb_t *db, const int64_t *spans, size_t nsp,
                          sa_ualloc_t *a, size_t *docs, sa_error_t *error)
{
    static const char *const colls[2] = {"jobs", "jobs_superseded"};
    static const char *const fields[] = {"eligible", "req", "cpus", "reservation", "array", "end", "vanished_at",
                                         "state", "start", "submit"};
    plan_t p;
    bson_t proj = BSON_INITIALIZER;
    int64_t to = a->as_of != SA_UNSET && a->as_of > o->start ? a->as_of + 1 : o->end;
    bool ok;

    if (!(a->plan = calloc(a->nh ? a->nh : 1, sizeof *a->plan)))
        return sa_error_nomem(error);
    memset(&p, 0, sizeof p);
    p.o = o;
    p.a = a;
    p.spans = spans;
    p.nsp = nsp;
    sa_strv_init(&p.ids[0]);
    sa_strv_init(&p.ids[1]);
    sa_jobview_init(&p.view);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        BSON_APPEND_INT32(&proj, fields[i], 1);
    ok = sa_rollup_read_started(db, a->cluster, o->start, to, on_started, &p, docs, error) &&
         sa_rollup_read_lists(db, a->cluster, true, o->start, to, on_list, &p, docs, error);
    for (int c = 0; ok && c < 2; c++)
        ok = !p.ids[c].n || sa_rollup_read_jobs(db, colls[c], &p.ids[c], &proj, on_job, &p, error);
    /* in the documents' order (jobs, then jobs_superseded; by job id), each job once */
    if (ok && p.nlisted > 1)
        qsort(p.listed, p.nlisted, sizeof *p.listed, listed_cmp);
    for (size_t i = 0; ok && i < p.nlisted; i++) {
        const listed_t *l = &p.listed[i];
        if (i && listed_cmp(l, l - 1) == 0)
            continue;
        if (l->doc)
            a->plan_docs++;
        else
            a->plan_listed++;
        if (!l->resv) /* a job of a reservation: slurmdbd counts the reservation, not its jobs' waits */
            add_pending(&p, l->eligible, SA_UNSET, l->end, l->cpus, l->tasks);
    }
    for (size_t i = 0; i < p.nlisted; i++)
        free(p.listed[i].id);
    free(p.listed);
    bson_destroy(&proj);
    sa_jobview_clear(&p.view);
    sa_strv_clear(&p.ids[0]);
    sa_strv_clear(&p.ids[1]);
    return ok;
}
