/*
 * sa_rollup_contrib.c - a job document's contribution to the rollups (sa_rollup_contrib.h).
 */
#include "sa_rollup_contrib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_model.h"
#include "sa_vec.h"

size_t sa_rollup_nf(sa_rollup_kind_t kind)
{
    return kind == SA_ROLLUP_K_STARTED ? SA_RS_NF : SA_RR_NF;
}

int sa_rollup_state_field(sa_rollup_kind_t kind)
{
    return kind == SA_ROLLUP_K_STARTED ? -1 : SA_RR_STATE;
}

int sa_rollup_hosts_field(sa_rollup_kind_t kind)
{
    return kind == SA_ROLLUP_K_STARTED ? -1 : SA_RR_HOSTS;
}

int sa_rollup_rowkey_cmp(const sa_rollup_rowkey_t *a, const sa_rollup_rowkey_t *b)
{
    for (int k = 0; k < SA_ROLLUP_ROWKEY_N; k++) {
        int r = strcmp(a->s[k], b->s[k]);
        if (r)
            return r;
    }
    return 0;
}

void sa_rollup_contrib_init(sa_rollup_contrib_t *c)
{
    memset(c, 0, sizeof *c);
    c->idle_pct = SA_ROLLUP_IDLE_PCT;
    sa_runsrc_init(&c->rs);
}

void sa_rollup_contrib_clear(sa_rollup_contrib_t *c)
{
    sa_runsrc_clear(&c->rs);
    free(c->keys);
    free(c->states);
    free(c->hosts);
    for (size_t i = 0; i < c->docinit; i++)
        free(c->docs[i].rec);
    free(c->docs);
    sa_rollup_contrib_init(c);
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* The index of a key in c (added when new); -1 on out of memory. */
static int64_t contrib_key(sa_rollup_contrib_t *c, const sa_jobview_t *j, const char *type)
{
    sa_rollup_rowkey_t k = {{(char *)nz(j->account), (char *)nz(j->user), (char *)nz(j->partition),
                             (char *)nz(j->qos), (char *)type}};
    for (size_t i = 0; i < c->nkeys; i++) {
        if (sa_rollup_rowkey_cmp(&c->keys[i], &k) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(c->keys, c->keycap, c->nkeys, 1, 4))
        return -1;
    c->keys[c->nkeys] = k;
    return (int64_t)c->nkeys++;
}

/* The index of string s in a table of c (added when new, borrowed); -1 on out of memory. */
static int64_t contrib_str(const char ***tab, size_t *n, size_t *cap, const char *s)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*tab)[i], s) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(*tab, *cap, *n, 1, 4))
        return -1;
    (*tab)[*n] = s;
    return (int64_t)(*n)++;
}

const sa_rollup_contrib_doc_t *sa_rollup_contrib_find(const sa_rollup_contrib_t *c, sa_rollup_kind_t kind,
                                                      int64_t day)
{
    for (size_t i = 0; i < c->ndocs; i++) {
        if (c->docs[i].kind == kind && c->docs[i].day == day)
            return &c->docs[i];
    }
    return NULL;
}

/* The records of the document of kind and day in c, created empty; NULL on out of memory. */
static sa_rollup_contrib_doc_t *contrib_doc(sa_rollup_contrib_t *c, sa_rollup_kind_t kind, int64_t day)
{
    sa_rollup_contrib_doc_t *d = (sa_rollup_contrib_doc_t *)sa_rollup_contrib_find(c, kind, day);
    if (d)
        return d;
    if (c->ndocs == c->docinit) { /* slots up to docinit keep their buffers from job to job */
        if (!SA_VEC_GROW(c->docs, c->doccap, c->ndocs, 1, 4))
            return NULL;
        memset(&c->docs[c->ndocs], 0, sizeof *c->docs);
        c->docinit++;
    }
    d = &c->docs[c->ndocs++];
    d->kind = kind;
    d->day = day;
    d->nrec = 0;
    return d;
}

/* Appends a record to d, zeroed (a member record's ended_at and state -1); NULL on out of memory. */
static int64_t *doc_rec(sa_rollup_contrib_doc_t *d)
{
    size_t nf = sa_rollup_nf(d->kind);
    int64_t *r;
    if (!SA_VEC_GROW(d->rec, d->cap, d->nrec * nf, nf, 4 * nf))
        return NULL;
    r = &d->rec[d->nrec++ * nf];
    memset(r, 0, nf * sizeof *r);
    if (nf == SA_RR_NF) {
        r[SA_RR_ENDED_AT] = -1;
        r[SA_RR_STATE] = -1;
        r[SA_RR_HOSTS] = -1;
    }
    return r;
}

/* Adds the efficiency figures f of an ended run's share num/den with gpu_s GPU-seconds (count: the run counts here). */
static void add_eff(int64_t *r, double idle_pct, const sa_eff_run_t *f, int64_t gpu_s, int64_t num, int64_t den, bool count)
{
    r[SA_RR_E_RUNS] += count;
    if (gpu_s > 0) {
        r[SA_RR_E_GPU_RUNS] += count;
        r[SA_RR_E_GPU_S] += gpu_s;
        if (!f->has_util) {
            r[SA_RR_E_NODATA_S] += gpu_s;
        } else {
            r[SA_RR_E_UTIL_S] += gpu_s;
            r[SA_RR_E_UTIL_MPCT_S] += llround(f->gpu_util_pct * 1000.0) * gpu_s;
            if (f->util_src == SA_EFF_SRC_PROM)
                r[SA_RR_E_PROM_S] += gpu_s;
            if (f->util_src == SA_EFF_SRC_PROM && f->prom_idle_gpu_s >= 0 && f->prom_idle_pct == idle_pct) {
                /* the GPU-seconds Prometheus saw under the threshold (jobstats' "GPU-hours at 0 %") */
                int64_t idle = sa_runsrc_share(llround(f->prom_idle_gpu_s), num, den);
                r[SA_RR_E_IDLE_S] += idle < gpu_s ? idle : gpu_s;
            } else if (f->gpu_util_pct < idle_pct) {
                r[SA_RR_E_IDLE_S] += gpu_s;
            }
        }
    }
    if (f->has_cpu) {
        r[SA_RR_E_CPU_USED_MS] += sa_runsrc_share(llround(f->cpu_used_s * 1000.0), num, den);
        r[SA_RR_E_CPU_ALLOC_S] += sa_runsrc_share(llround(f->cpu_alloc_s), num, den);
    }
    if (f->has_mem) {
        r[SA_RR_E_MEM_RUNS] += count;
        r[SA_RR_E_MEM_USED_KIB] += sa_runsrc_share(f->mem_used_bytes / 1024, num, den);
        r[SA_RR_E_MEM_REQ_KIB] += sa_runsrc_share(f->mem_req_bytes / 1024, num, den);
    }
}

/*
 * The records of typed run r in the members document of day (open: the open runs'), one
 * per GPU type (one for a CPU-only run).
 */
static bool run_day(sa_rollup_contrib_t *c, const sa_jobview_t *j, const sa_typed_run_t *r, bool open, int64_t day)
{
    sa_rollup_contrib_doc_t *d = contrib_doc(c, open ? SA_ROLLUP_K_OPEN : SA_ROLLUP_K_MEMBERS, open ? 0 : day);
    size_t ntypes = r->ngpus ? r->ngpus : 1;
    int64_t own_end = r->v->end;
    bool ends_here = !open && own_end != SA_UNSET && sa_rollup_day(own_end) == day;
    sa_eff_run_t f;
    bool split;

    if (!d)
        return false;
    sa_eff_run(j, r->v, &f);
    split = r->ngpus > 1 && f.elapsed_s != SA_UNSET;
    for (size_t k = 0; k < ntypes; k++) {
        int64_t *x = doc_rec(d), key = contrib_key(c, j, r->ngpus ? r->gpus[k].type : "");
        if (!x || key < 0)
            return false;
        x[SA_RR_KEY] = key;
        x[SA_RR_GPUS] = r->ngpus ? r->gpus[k].count : 0;
        if (x[SA_RR_GPUS] > 0 && r->v->nodes && r->v->nodes[0] &&
            (x[SA_RR_HOSTS] = contrib_str(&c->hosts, &c->nhosts, &c->hostcap, r->v->nodes)) < 0)
            return false; /* the nodes of a run with GPUs: health's gpu-capacity reads them here */
        if (open) {
            x[SA_RR_START] = r->start;
            x[SA_RR_END] = 0;
        } else {
            x[SA_RR_START] = r->start > day ? r->start : day;
            x[SA_RR_END] = r->end < day + SA_DAY ? r->end : day + SA_DAY;
            if (x[SA_RR_END] < x[SA_RR_START])
                x[SA_RR_END] = x[SA_RR_START];
        }
        if (k == 0) {
            x[SA_RR_CPUS] = r->cpus;
            x[SA_RR_MEM] = r->mem_mb;
            x[SA_RR_BILL] = r->billing_milli;
            x[SA_RR_STARTED] = open || sa_rollup_day(r->start) == day;
        }
        if (!ends_here)
            continue;
        x[SA_RR_ENDED_AT] = own_end;
        if (k == 0 && r->v->state &&
            (x[SA_RR_STATE] = contrib_str(&c->states, &c->nstates, &c->statecap, r->v->state)) < 0)
            return false;
        if (split)
            add_eff(x, c->idle_pct, &f, r->gpus[k].count * f.elapsed_s, r->gpus[k].count, r->gpu_total, k == 0);
        else if (k == 0)
            add_eff(x, c->idle_pct, &f, f.gpu_s, 1, 1, true);
    }
    return true;
}

static int64_t or_zero(int64_t v)
{
    return v == SA_UNSET ? 0 : v;
}

int64_t sa_rollup_list_cpus(const sa_jobview_t *j)
{
    bool pending = j->state && strcmp(j->state, "PENDING") == 0;
    return or_zero(pending || j->cpus == SA_UNSET ? j->req_cpus : j->cpus);
}

int64_t sa_rollup_list_mem_mb(const sa_jobview_t *j)
{
    return or_zero(j->req_mem_mb);
}

int64_t sa_rollup_array_tasks(const char *s)
{
    int64_t n = 0;
    while (s && *s && *s != '%') {
        char *end;
        long long a = strtoll(s, &end, 10), b = a, step = 1;
        if (end == s)
            return 0;
        s = end;
        if (*s == '-') {
            b = strtoll(s + 1, &end, 10);
            if (end == s + 1)
                return 0;
            s = end;
        }
        if (*s == ':') {
            step = strtoll(s + 1, &end, 10);
            if (end == s + 1 || step <= 0)
                return 0;
            s = end;
        }
        if (b >= a)
            n += (b - a) / step + 1;
        if (*s == ',')
            s++;
        else if (*s && *s != '%')
            return 0;
    }
    return n;
}

void sa_rollup_plan_fields(const sa_jobview_t *j, int64_t *x)
{
    x[SA_RL_PLAN] = SA_RL_PLAN_KEPT | (j->reservation && j->reservation[0] ? SA_RL_PLAN_RESV : 0);
    x[SA_RL_ELIGIBLE] = j->eligible;
    x[SA_RL_PLAN_CPUS] = j->req_cpus != SA_UNSET ? j->req_cpus : j->cpus;
    x[SA_RL_TASKS] = sa_rollup_array_tasks(j->array_tasks);
}

/*
 * The job's record in the lists: an unfinished document of `jobs` in the live list of its
 * part, a final one in the ended list of its end's day (sa_rollup.h).
 */
static bool job_lists(sa_rollup_contrib_t *c, const sa_jobview_t *j)
{
    const char *id = j->has_id && j->id.value_type == BSON_TYPE_UTF8 ? j->id.value.v_utf8.str : NULL;
    bool pending = j->state && strcmp(j->state, "PENDING") == 0;
    sa_rollup_contrib_doc_t *d;
    int64_t *x, key;

    if (!id || !j->cluster)
        return true;
    if (!j->final) {
        if (!sa_rollup_is_jobs_id(j->cluster, id))
            return true; /* an unfinished document of jobs_superseded: in no listing of the queue */
        d = contrib_doc(c, SA_ROLLUP_K_LIVE, 0);
    } else {
        if (j->end == SA_UNSET || j->end < 0 || j->end >= SA_ROLLUP_LAST_DAY + SA_DAY)
            return true; /* no end (or none of this world): in no day's list */
        d = contrib_doc(c, SA_ROLLUP_K_ENDED, sa_rollup_day(j->end));
    }
    if (!d || !(x = doc_rec(d)) || (key = contrib_key(c, j, "")) < 0)
        return false;
    x[SA_RR_KEY] = key;
    if (j->state && (x[SA_RR_STATE] = contrib_str(&c->states, &c->nstates, &c->statecap, j->state)) < 0)
        return false;
    x[SA_RR_GPUS] = pending ? j->req_gpus : j->gpus;
    x[SA_RR_CPUS] = sa_rollup_list_cpus(j);
    x[SA_RR_MEM] = sa_rollup_list_mem_mb(j);
    if (pending || j->start == SA_UNSET) /* what utilization's planned time reads of a job that never started */
        sa_rollup_plan_fields(j, x);
    if (!j->final) {
        x[SA_RR_START] = j->submit == SA_UNSET ? -1 : j->submit;
        x[SA_RR_ENDED_AT] = j->vanished_at == SA_UNSET ? -1 : j->vanished_at;
    } else {
        x[SA_RR_START] = j->start == SA_UNSET ? -1 : j->start;
        x[SA_RR_END] = j->end;
    }
    return true;
}

void sa_rollup_queue_times(const sa_jobview_t *j, const sa_jobview_run_t *r, int64_t *submit, int64_t *eligible)
{
    *submit = r->submit;
    if (*submit == SA_UNSET && r->start != SA_UNSET && r->start == j->start)
        *submit = j->submit; /* an archive written before runs[].submit: the document's run */
    *eligible = r->eligible;
    if (*eligible == SA_UNSET && *submit != SA_UNSET && *submit == j->submit)
        *eligible = j->eligible; /* a run written before runs[].eligible: the document's incarnation's */
}

/* The run's record in the started list of its start's day (sa_rollup.h). */
static bool started_list(sa_rollup_contrib_t *c, const sa_jobview_t *j, const sa_typed_run_t *r)
{
    sa_rollup_contrib_doc_t *d;
    int64_t *x, key, submit, eligible;

    if (!(d = contrib_doc(c, SA_ROLLUP_K_STARTED, sa_rollup_day(r->start))) || !(x = doc_rec(d)) ||
        (key = contrib_key(c, j, r->ngpus ? r->gpus[0].type : "")) < 0)
        return false;
    sa_rollup_queue_times(j, r->v, &submit, &eligible);
    x[SA_RS_KEY] = key;
    x[SA_RS_START] = r->start;
    x[SA_RS_SUBMIT] = submit;
    x[SA_RS_ELIGIBLE] = eligible;
    x[SA_RS_GPUS] = r->gpu_total;
    x[SA_RS_NODES] = or_zero(r->v->node_count);
    x[SA_RS_CPUS] = r->cpus;
    return true;
}

bool sa_rollup_contrib_of(sa_rollup_contrib_t *c, const sa_jobview_t *j, sa_error_t *error)
{
    c->nkeys = c->nstates = c->nhosts = c->ndocs = 0;
    if (!sa_runsrc_read(&c->rs, j, true, NULL, error))
        return false;
    for (size_t i = 0; i < c->rs.n; i++) {
        const sa_typed_run_t *r = &c->rs.runs[i];
        int64_t first, last;
        if (r->start < 0 || r->start > SA_ROLLUP_LAST_DAY)
            continue; /* not a time of this world: counted nowhere (and no rollup _id can name its day) */
        if (!started_list(c, j, r))
            return sa_error_nomem(error);
        if (r->end == SA_UNSET) {
            if (!run_day(c, j, r, true, 0))
                return sa_error_nomem(error);
            continue;
        }
        first = sa_rollup_day(r->start);
        last = sa_rollup_day(r->end > r->start ? r->end - 1 : r->start);
        if (r->v->end != SA_UNSET && sa_rollup_day(r->v->end) > last)
            last = sa_rollup_day(r->v->end); /* ended at midnight: its end counts the next day */
        if (last - first > SA_ROLLUP_MAX_DAYS * (int64_t)SA_DAY)
            last = first + SA_ROLLUP_MAX_DAYS * (int64_t)SA_DAY; /* an end years away: counted for that long */
        for (int64_t d = first; d <= last; d += SA_DAY) {
            if (!run_day(c, j, r, false, d))
                return sa_error_nomem(error);
        }
    }
    return job_lists(c, j) || sa_error_nomem(error);
}

void sa_rollup_projection(bson_t *opts)
{
    static const char *const fields[] = {
        "_v",        "cluster",       "account",        "user",       "partition",    "qos",
        "state",     "end",           "vanished_at",    "alloc.billing", "req.mem_mb", "runs.start",
        "runs.end",  "runs.state",    "runs.gpus",      "runs.gpus_by_type", "runs.gpu_type",
        "runs.gpu_type_source", "runs.cpus", "runs.submit", "runs.eligible", "runs.node_count", "runs.nodes",
        "eligible",
        "runs.mem_mb", "runs.elapsed_s", "runs.usage", "runs.prom",
        "history.state", "history.at", "job_id", "submit", "start", "gpus", "cpus", "req.gpus", "req.cpus",
        "reservation", "array.task_string", NULL};
    bson_t proj;
    BSON_APPEND_DOCUMENT_BEGIN(opts, "projection", &proj);
    for (const char *const *f = fields; *f; f++)
        BSON_APPEND_INT32(&proj, *f, 1);
    bson_append_document_end(opts, &proj);
}
