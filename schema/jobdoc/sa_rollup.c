/*
 * sa_rollup.c - usage rollups (sa_rollup.h): a job document's contribution to the days
 * of its cluster, and the rollup documents that hold them.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_rollup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_model.h"
#include "sa_vec.h"

int64_t sa_rollup_day(int64_t t)
{
    int64_t d = t / SA_DAY;
    if (t % SA_DAY < 0)
        d--;
    return d * SA_DAY;
}

sa_rollup_kind_t sa_rollup_kind(int64_t day)
{
    if (day == SA_UNSET)
        return SA_ROLLUP_K_OPEN;
    if (day >= SA_ROLLUP_LIVE && day < SA_ROLLUP_LIVE + SA_ROLLUP_LIVE_SHARDS)
        return SA_ROLLUP_K_LIVE;
    switch (day - sa_rollup_day(day)) {
    case 0: return SA_ROLLUP_K_DAY;
    case SA_ROLLUP_STARTED: return SA_ROLLUP_K_STARTED;
    default: return SA_ROLLUP_K_ENDED;
    }
}

int64_t sa_rollup_live_of(const char *cluster, const char *id)
{
    size_t n = strlen(cluster);
    const char *p;
    uint64_t job = 0;

    if (strncmp(id, cluster, n) != 0 || id[n] != ':' || !id[n + 1])
        return SA_UNSET;
    for (p = id + n + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return SA_UNSET; /* jobs_superseded's ":<submit>", or not a job id */
        job = job * 10 + (uint64_t)(*p - '0');
    }
    /* the job's part: blocks of consecutive ids, so that a batch of jobs (written in job id order) touches one or two */
    return SA_ROLLUP_LIVE + (int64_t)(job / SA_ROLLUP_PART_BLOCK % SA_ROLLUP_LIVE_SHARDS);
}

/* The job id a job document _id names (0 when none). */
static int64_t id_job(const char *id)
{
    const char *p = strchr(id, ':');
    return p ? strtoll(p + 1, NULL, 10) : 0;
}

int sa_rollup_id_job_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int64_t jx = id_job(x), jy = id_job(y);
    return jx != jy ? (jx < jy ? -1 : 1) : strcmp(x, y);
}

int sa_rollup_part_of(const char *id)
{
    int64_t job = id_job(id);
    return job <= 0 ? 0 : (int)(job / SA_ROLLUP_PART_BLOCK % SA_ROLLUP_PARTS);
}

/* "<cluster>:<YYYY-MM-DD><suffix>" of a day's start; NULL on out of memory or a day no _id can name. */
static char *day_id(const char *cluster, int64_t day, const char *suffix)
{
    size_t n = strlen(cluster) + 24;
    char *s = malloc(n);
    time_t tt = (time_t)day;
    struct tm tm;
    if (!s)
        return NULL;
    if (!gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
        free(s);
        return NULL;
    }
    snprintf(s, n, "%s:%04d-%02d-%02d%s", cluster, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, suffix);
    return s;
}

char *sa_rollup_day_id(const char *cluster, int64_t day)
{
    return day_id(cluster, sa_rollup_day(day), "");
}

char *sa_rollup_id(const char *cluster, int64_t day, int part)
{
    char *s = NULL, suffix[16];
    const char *kind = "m";
    if (part < 0 || part >= SA_ROLLUP_PARTS)
        return NULL;
    switch (sa_rollup_kind(day)) {
    case SA_ROLLUP_K_OPEN:
        return asprintf(&s, "%s:open:%d", cluster, part) < 0 ? NULL : s;
    case SA_ROLLUP_K_LIVE:
        return asprintf(&s, "%s:live:%d", cluster, (int)(day - SA_ROLLUP_LIVE)) < 0 ? NULL : s;
    case SA_ROLLUP_K_ENDED: kind = "e"; break;
    case SA_ROLLUP_K_STARTED: kind = "s"; break;
    case SA_ROLLUP_K_DAY: break;
    }
    snprintf(suffix, sizeof suffix, ":%s%d", kind, part);
    return day_id(cluster, sa_rollup_day(day), suffix);
}

char *sa_rollup_rows_id(const char *cluster, int64_t day, int part)
{
    char suffix[16];
    if (sa_rollup_kind(day) != SA_ROLLUP_K_DAY || part < 0 || part >= SA_ROLLUP_PARTS)
        return NULL;
    snprintf(suffix, sizeof suffix, ":r%d", part);
    return day_id(cluster, day, suffix);
}

bool sa_rollup_part_ids(sa_strv_t *ids, const char *cluster, int64_t day, bool rows, sa_error_t *error)
{
    for (int part = 0; part < SA_ROLLUP_PARTS; part++) {
        char *id = rows ? sa_rollup_rows_id(cluster, day, part) : sa_rollup_id(cluster, day, part);
        bool ok = id && sa_strv_push(ids, id);
        free(id);
        if (!ok)
            return sa_error_nomem(error);
    }
    return true;
}

/* ---- a job document's contribution ----------------------------------------------------- */

void sa_rcontrib_init(sa_rcontrib_t *c)
{
    memset(c, 0, sizeof *c);
    c->idle_pct = SA_ROLLUP_IDLE_PCT;
    sa_runsrc_init(&c->rs);
}

void sa_rcontrib_clear(sa_rcontrib_t *c)
{
    sa_runsrc_clear(&c->rs);
    free(c->keys);
    free(c->states);
    for (size_t i = 0; i < c->dayinit; i++)
        free(c->days[i].rec);
    free(c->days);
    sa_rcontrib_init(c);
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* The index of the key of strings s among keys[0..n), or -1. */
static int64_t key_index(const sa_rkey_t *keys, size_t n, const char *const *s)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < SA_RK_N && strcmp(keys[i].s[k], s[k]) == 0)
            k++;
        if (k == SA_RK_N)
            return (int64_t)i;
    }
    return -1;
}

/* The index of a key in c (added when new); -1 on out of memory. */
static int64_t contrib_key(sa_rcontrib_t *c, const sa_jobview_t *j, const char *type)
{
    const char *s[SA_RK_N] = {nz(j->account), nz(j->user), nz(j->partition), nz(j->qos), type};
    int64_t i = key_index(c->keys, c->nkeys, s);
    if (i >= 0)
        return i;
    if (!SA_VEC_GROW(c->keys, c->keycap, c->nkeys, 1, 4))
        return -1;
    for (size_t k = 0; k < SA_RK_N; k++)
        c->keys[c->nkeys].s[k] = (char *)s[k];
    return (int64_t)c->nkeys++;
}

static int64_t contrib_state(sa_rcontrib_t *c, const char *state)
{
    for (size_t i = 0; i < c->nstates; i++) {
        if (strcmp(c->states[i], state) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(c->states, c->statecap, c->nstates, 1, 4))
        return -1;
    c->states[c->nstates] = state;
    return (int64_t)c->nstates++;
}

/* The records of a day (SA_UNSET: open) in c, created empty; NULL on out of memory. */
static sa_rcday_t *contrib_day(sa_rcontrib_t *c, int64_t day)
{
    for (size_t i = 0; i < c->ndays; i++) {
        if (c->days[i].day == day)
            return &c->days[i];
    }
    if (c->ndays == c->dayinit) { /* slots up to dayinit keep their buffers from job to job */
        if (!SA_VEC_GROW(c->days, c->daycap, c->ndays, 1, 4))
            return NULL;
        memset(&c->days[c->ndays], 0, sizeof *c->days);
        c->dayinit++;
    }
    c->days[c->ndays].day = day;
    c->days[c->ndays].nrec = 0;
    return &c->days[c->ndays++];
}

/* Appends a zeroed record to day d; NULL on out of memory. */
static int64_t *day_rec(sa_rcday_t *d)
{
    int64_t *r;
    if (!SA_VEC_GROW(d->rec, d->cap, d->nrec * SA_RR_NF, SA_RR_NF, 4 * SA_RR_NF))
        return NULL;
    r = &d->rec[d->nrec++ * SA_RR_NF];
    memset(r, 0, SA_RR_NF * sizeof *r);
    r[SA_RR_ENDED_AT] = -1;
    r[SA_RR_STATE] = -1;
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

/* The records of typed run r for day (SA_UNSET: open), one per GPU type (one for a CPU-only run). */
static bool run_day(sa_rcontrib_t *c, const sa_jobview_t *j, const sa_typed_run_t *r, int64_t day)
{
    sa_rcday_t *d = contrib_day(c, day);
    size_t ntypes = r->ngpus ? r->ngpus : 1;
    int64_t own_end = r->v->end;
    bool ends_here = day != SA_UNSET && own_end != SA_UNSET && sa_rollup_day(own_end) == day;
    sa_eff_run_t f;
    bool split;

    if (!d)
        return false;
    sa_eff_run(j, r->v, &f);
    split = r->ngpus > 1 && f.elapsed_s != SA_UNSET;
    for (size_t k = 0; k < ntypes; k++) {
        int64_t *x = day_rec(d), key = contrib_key(c, j, r->ngpus ? r->gpus[k].type : "");
        if (!x || key < 0)
            return false;
        x[SA_RR_KEY] = key;
        x[SA_RR_GPUS] = r->ngpus ? r->gpus[k].count : 0;
        if (day == SA_UNSET) {
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
            x[SA_RR_STARTED] = day == SA_UNSET || sa_rollup_day(r->start) == day;
        }
        if (!ends_here)
            continue;
        x[SA_RR_ENDED_AT] = own_end;
        if (k == 0 && r->v->state && (x[SA_RR_STATE] = contrib_state(c, r->v->state)) < 0)
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

/*
 * The job's record in the lists: an unfinished document of `jobs` in its live shard, a
 * final one in the ended list of its end's day (sa_rollup.h).
 */
static bool job_lists(sa_rcontrib_t *c, const sa_jobview_t *j)
{
    const char *id = j->has_id && j->id.value_type == BSON_TYPE_UTF8 ? j->id.value.v_utf8.str : NULL;
    bool pending = j->state && strcmp(j->state, "PENDING") == 0;
    int64_t day, *x, key;
    sa_rcday_t *d;

    if (!id || !j->cluster)
        return true;
    if (!j->final) {
        if ((day = sa_rollup_live_of(j->cluster, id)) == SA_UNSET)
            return true; /* an unfinished document of jobs_superseded: in no listing of the queue */
    } else {
        if (j->end == SA_UNSET || j->end < 0 || j->end >= SA_ROLLUP_LAST_DAY + SA_DAY)
            return true; /* no end (or none of this world): in no day's list */
        day = sa_rollup_day(j->end) + SA_ROLLUP_ENDED;
    }
    if (!(d = contrib_day(c, day)) || !(x = day_rec(d)) || (key = contrib_key(c, j, "")) < 0)
        return false;
    x[SA_RR_KEY] = key;
    if (j->state && (x[SA_RR_STATE] = contrib_state(c, j->state)) < 0)
        return false;
    x[SA_RR_GPUS] = pending ? j->req_gpus : j->gpus;
    x[SA_RR_CPUS] = sa_rollup_list_cpus(j);
    x[SA_RR_MEM] = sa_rollup_list_mem_mb(j);
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
static bool started_list(sa_rcontrib_t *c, const sa_jobview_t *j, const sa_typed_run_t *r)
{
    sa_rcday_t *d;
    int64_t *x, key, submit, eligible;

    if (!(d = contrib_day(c, sa_rollup_day(r->start) + SA_ROLLUP_STARTED)) || !(x = day_rec(d)) ||
        (key = contrib_key(c, j, r->ngpus ? r->gpus[0].type : "")) < 0)
        return false;
    sa_rollup_queue_times(j, r->v, &submit, &eligible);
    x[SA_RR_KEY] = key;
    x[SA_RR_START] = r->start;
    x[SA_RS_SUBMIT] = submit;
    x[SA_RS_ELIGIBLE] = eligible;
    x[SA_RR_GPUS] = r->gpu_total;
    x[SA_RS_NODES] = or_zero(r->v->node_count);
    x[SA_RR_CPUS] = r->cpus;
    return true;
}

bool sa_rcontrib_of(sa_rcontrib_t *c, const sa_jobview_t *j, sa_error_t *error)
{
    c->nkeys = c->nstates = c->ndays = 0;
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
            if (!run_day(c, j, r, SA_UNSET))
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
            if (!run_day(c, j, r, d))
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
        "runs.gpu_type_source", "runs.cpus", "runs.submit", "runs.eligible", "runs.node_count", "eligible",
        "runs.mem_mb", "runs.elapsed_s", "runs.usage", "runs.prom",
        "history.state", "history.at", "job_id", "submit", "start", "gpus", "cpus", "req.gpus", "req.cpus", NULL};
    bson_t proj;
    BSON_APPEND_DOCUMENT_BEGIN(opts, "projection", &proj);
    for (const char *const *f = fields; *f; f++)
        BSON_APPEND_INT32(&proj, *f, 1);
    bson_append_document_end(opts, &proj);
}

/* ---- rollup documents -------------------------------------------------------------------- */

void sa_rolldoc_init(sa_rolldoc_t *d)
{
    memset(d, 0, sizeof *d);
    d->day = SA_UNSET;
}

static void key_free(sa_rkey_t *k)
{
    for (int i = 0; i < SA_RK_N; i++)
        free(k->s[i]);
}

void sa_rolldoc_clear(sa_rolldoc_t *d)
{
    free(d->id);
    free(d->cluster);
    for (size_t i = 0; i < d->nkeys; i++)
        key_free(&d->keys[i]);
    free(d->keys);
    for (size_t i = 0; i < d->nstates; i++)
        free(d->states[i]);
    free(d->states);
    for (size_t i = 0; i < d->nm; i++) {
        free(d->m[i].id);
        free(d->m[i].rec);
    }
    free(d->m);
    free(d->rows);
    free(d->rended);
    sa_rolldoc_init(d);
}

bool sa_rolldoc_new(sa_rolldoc_t *d, const char *cluster, int64_t day, int part, sa_error_t *error)
{
    sa_rolldoc_init(d);
    d->day = day;
    d->part = sa_rollup_kind(day) == SA_ROLLUP_K_LIVE ? 0 : part;
    if (!(d->cluster = strdup(cluster)) || !(d->id = sa_rollup_id(cluster, day, d->part))) {
        sa_rolldoc_clear(d);
        return sa_error_nomem(error);
    }
    return true;
}

/* The index of key s in d (added when new), or -1 on out of memory. */
static int64_t doc_key(sa_rolldoc_t *d, char *const *s)
{
    int64_t i = key_index(d->keys, d->nkeys, (const char *const *)s);
    if (i >= 0)
        return i;
    if (!SA_VEC_GROW(d->keys, d->keycap, d->nkeys, 1, 16))
        return -1;
    for (size_t k = 0; k < SA_RK_N; k++) {
        if (!(d->keys[d->nkeys].s[k] = strdup(s[k]))) {
            while (k-- > 0)
                free(d->keys[d->nkeys].s[k]);
            return -1;
        }
    }
    return (int64_t)d->nkeys++;
}

static int64_t doc_state(sa_rolldoc_t *d, const char *s)
{
    for (size_t i = 0; i < d->nstates; i++) {
        if (strcmp(d->states[i], s) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(d->states, d->statecap, d->nstates, 1, 8) || !(d->states[d->nstates] = strdup(s)))
        return -1;
    return (int64_t)d->nstates++;
}

size_t sa_rollup_find(const void *base, size_t n, size_t stride, const char *id, bool *found)
{
    size_t lo = 0, hi = n;
    *found = false;
    while (lo < hi) { /* each element begins with its char *id */
        size_t mid = (lo + hi) / 2;
        int r = strcmp(*(char *const *)((const char *)base + mid * stride), id);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The position of member id in d (or where it would go); *found says whether it is there. */
static size_t member_pos(const sa_rolldoc_t *d, const char *id, bool *found)
{
    return sa_rollup_find(d->m, d->nm, sizeof *d->m, id, found);
}

const sa_rmember_t *sa_rolldoc_member(const sa_rolldoc_t *d, const char *id)
{
    bool found;
    size_t i = member_pos(d, id, &found);
    return found ? &d->m[i] : NULL;
}

/* The records of c for day, translated to d's tables (*out malloc'ed, *n records). */
static bool translate(sa_rolldoc_t *d, const sa_rcontrib_t *c, int64_t day, int64_t **out, size_t *n)
{
    const sa_rcday_t *cd = NULL;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < c->ndays; i++) {
        if (c->days[i].day == day)
            cd = &c->days[i];
    }
    if (!cd || !cd->nrec)
        return true;
    if (!(*out = malloc(cd->nrec * SA_RR_NF * sizeof **out)))
        return false;
    memcpy(*out, cd->rec, cd->nrec * SA_RR_NF * sizeof **out);
    for (size_t r = 0; r < cd->nrec; r++) {
        int64_t *x = &(*out)[r * SA_RR_NF];
        if ((x[SA_RR_KEY] = doc_key(d, c->keys[x[SA_RR_KEY]].s)) < 0 ||
            (x[SA_RR_STATE] >= 0 && (x[SA_RR_STATE] = doc_state(d, c->states[x[SA_RR_STATE]])) < 0)) {
            free(*out);
            *out = NULL;
            return false;
        }
    }
    *n = cd->nrec;
    return true;
}

/*
 * Sets member id (version v) of d to rec[0..n) (owned by d from here), unless d holds the
 * member from a newer version. n == 0: the member leaves, and a tombstone of version v
 * stays (for SA_ROLLUP_TOMBSTONE_S), so that a put of an older version staged by
 * another writer before this removal cannot bring it back.
 */
static bool put_member(sa_rolldoc_t *d, const char *id, int64_t v, int64_t *rec, size_t n, sa_error_t *error)
{
    bool found;
    size_t pos = member_pos(d, id, &found);
    int64_t gone = n ? 0 : (int64_t)time(NULL);

    if (found && d->m[pos].v > v) {
        free(rec);
        return true; /* a newer version of the job is there */
    }
    if (found) {
        sa_rmember_t *m = &d->m[pos];
        if (m->nrec == n && m->v == v && (n == 0 || memcmp(m->rec, rec, n * SA_RR_NF * sizeof *rec) == 0)) {
            free(rec);
            return true;
        }
        free(m->rec);
        m->rec = rec;
        m->nrec = n;
        m->v = v;
        m->gone_at = gone;
        d->changed = true;
        return true;
    }
    if (!SA_VEC_GROW(d->m, d->mcap, d->nm, 1, 64)) {
        free(rec);
        return sa_error_nomem(error);
    }
    memmove(&d->m[pos + 1], &d->m[pos], (d->nm - pos) * sizeof *d->m);
    d->m[pos].rec = rec;
    d->m[pos].nrec = n;
    d->m[pos].v = v;
    d->m[pos].gone_at = gone;
    if (!(d->m[pos].id = strdup(id))) {
        memmove(&d->m[pos], &d->m[pos + 1], (d->nm - pos) * sizeof *d->m);
        free(rec);
        return sa_error_nomem(error);
    }
    d->nm++;
    d->changed = true;
    return true;
}

bool sa_rolldoc_put(sa_rolldoc_t *d, const char *id, int64_t v, const sa_rcontrib_t *c, sa_error_t *error)
{
    int64_t *rec = NULL;
    size_t n = 0;

    if (c && !translate(d, c, d->day, &rec, &n))
        return sa_error_nomem(error);
    return put_member(d, id, v, rec, n, error);
}

bool sa_rolldoc_merge(sa_rolldoc_t *dst, const sa_rolldoc_t *src, sa_error_t *error)
{
    for (size_t i = 0; i < src->nm; i++) {
        const sa_rmember_t *m = &src->m[i];
        int64_t *rec = NULL;
        if (m->nrec && !(rec = malloc(m->nrec * SA_RR_NF * sizeof *rec)))
            return sa_error_nomem(error);
        for (size_t r = 0; r < m->nrec; r++) {
            int64_t *x = &rec[r * SA_RR_NF];
            memcpy(x, &m->rec[r * SA_RR_NF], SA_RR_NF * sizeof *x);
            if ((x[SA_RR_KEY] = doc_key(dst, src->keys[x[SA_RR_KEY]].s)) < 0 ||
                (x[SA_RR_STATE] >= 0 && (x[SA_RR_STATE] = doc_state(dst, src->states[x[SA_RR_STATE]])) < 0)) {
                free(rec);
                return sa_error_nomem(error);
            }
        }
        if (!put_member(dst, m->id, m->v, rec, m->nrec, error))
            return false;
    }
    return true;
}

/* ---- sums ----------------------------------------------------------------------------------- */

bool sa_rolldoc_sums(const sa_rolldoc_t *d, sa_rsum_t **sums, int64_t **ended, sa_error_t *error)
{
    *sums = calloc(d->nkeys ? d->nkeys : 1, sizeof **sums);
    *ended = calloc(d->nkeys * d->nstates > 0 ? d->nkeys * d->nstates : 1, sizeof **ended);
    if (!*sums || !*ended) {
        free(*sums);
        free(*ended);
        *sums = NULL;
        *ended = NULL;
        return sa_error_nomem(error);
    }
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            sa_rsum_t *s = &(*sums)[x[SA_RR_KEY]];
            int64_t len = sa_rollup_kind(d->day) != SA_ROLLUP_K_DAY ? 0 : x[SA_RR_END] - x[SA_RR_START];
            s->gpu_s += x[SA_RR_GPUS] * len;
            s->cpu_s += x[SA_RR_CPUS] * len;
            s->mem_mb_s += x[SA_RR_MEM] * len;
            s->bill_milli_s += x[SA_RR_BILL] * len;
            s->started += x[SA_RR_STARTED];
            for (int e = SA_RR_E_RUNS; e < SA_RR_NF; e++)
                s->e[e - SA_RR_E_RUNS] += x[e];
            if (x[SA_RR_STATE] >= 0)
                (*ended)[x[SA_RR_KEY] * (int64_t)d->nstates + x[SA_RR_STATE]]++;
        }
    }
    return true;
}

/* ---- BSON ------------------------------------------------------------------------------------- */



static int key_cmp(const sa_rkey_t *a, const sa_rkey_t *b)
{
    for (int k = 0; k < SA_RK_N; k++) {
        int r = strcmp(a->s[k], b->s[k]);
        if (r)
            return r;
    }
    return 0;
}

static const sa_rolldoc_t *sort_doc;
static int keyidx_cmp(const void *x, const void *y)
{
    return key_cmp(&sort_doc->keys[*(const size_t *)x], &sort_doc->keys[*(const size_t *)y]);
}
static int stateidx_cmp(const void *x, const void *y)
{
    return strcmp(sort_doc->states[*(const size_t *)x], sort_doc->states[*(const size_t *)y]);
}

/* A zigzag varint (LEB128): small numbers, negative ones too, in a byte or two. */
static uint8_t *put_var(uint8_t *p, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    return p;
}

static bool get_var(const uint8_t *m, size_t len, size_t *pos, int64_t *v)
{
    uint64_t u = 0;
    for (int shift = 0; *pos < len && shift < 64; shift += 7) {
        uint8_t b = m[(*pos)++];
        u |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = (int64_t)(u >> 1) ^ (u & 1 ? -1 : 0);
            return true;
        }
    }
    return false;
}

/* Times of a day document's records are kept as seconds into the day (small varints). */
static int64_t rel_time(int f, int64_t val, int64_t day, bool encode)
{
    if (sa_rollup_kind(day) == SA_ROLLUP_K_STARTED) { /* a started list: start, submit, eligible */
        if ((f != SA_RR_START && f != SA_RS_SUBMIT && f != SA_RS_ELIGIBLE) || val == SA_UNSET)
            return val;
        day -= SA_ROLLUP_STARTED;
        return encode ? val - day : val + day;
    }
    if (sa_rollup_kind(day) != SA_ROLLUP_K_DAY || (f != SA_RR_START && f != SA_RR_END && f != SA_RR_ENDED_AT) ||
        (f == SA_RR_ENDED_AT && val < 0))
        return val;
    return encode ? val - day : val + day;
}

/*
 * The canonical order of the used keys and states (sorted; unused left out): kmap[old] =
 * new index or -1, korder[new] = old; likewise for states.
 */
typedef struct {
    size_t *korder, *sorder;
    int64_t *kmap, *smap;
    size_t nk, ns;
} canon_t;

static void canon_clear(canon_t *c)
{
    free(c->korder);
    free(c->sorder);
    free(c->kmap);
    free(c->smap);
}

static bool canon_make(const sa_rolldoc_t *d, canon_t *c)
{
    memset(c, 0, sizeof *c);
    c->korder = malloc((d->nkeys + 1) * sizeof *c->korder);
    c->sorder = malloc((d->nstates + 1) * sizeof *c->sorder);
    c->kmap = malloc((d->nkeys + 1) * sizeof *c->kmap);
    c->smap = malloc((d->nstates + 1) * sizeof *c->smap);
    if (!c->korder || !c->sorder || !c->kmap || !c->smap)
        return false;
    for (size_t i = 0; i < d->nkeys; i++)
        c->kmap[i] = -1;
    for (size_t i = 0; i < d->nstates; i++)
        c->smap[i] = -1;
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            c->kmap[x[SA_RR_KEY]] = 0;
            if (x[SA_RR_STATE] >= 0)
                c->smap[x[SA_RR_STATE]] = 0;
        }
    }
    for (size_t i = 0; i < d->nkeys; i++) {
        if (c->kmap[i] == 0)
            c->korder[c->nk++] = i;
    }
    for (size_t i = 0; i < d->nstates; i++) {
        if (c->smap[i] == 0)
            c->sorder[c->ns++] = i;
    }
    sort_doc = d;
    qsort(c->korder, c->nk, sizeof *c->korder, keyidx_cmp);
    qsort(c->sorder, c->ns, sizeof *c->sorder, stateidx_cmp);
    for (size_t i = 0; i < c->nk; i++)
        c->kmap[c->korder[i]] = (int64_t)i;
    for (size_t i = 0; i < c->ns; i++)
        c->smap[c->sorder[i]] = (int64_t)i;
    return true;
}

/*
 * A day's rows, packed (r): per row in the order of the keys table, its key index, gpu_s,
 * cpu_s, mem_mb_s, billing_milli_s, runs_started, the SA_RR_NF - SA_RR_E_RUNS efficiency
 * sums, the number of states it has runs ended in, then (state index, runs) for each;
 * zigzag varints. The server then stores and returns a day as a few values, however many
 * rows it has (FerretDB spends microseconds per value it decodes).
 */
static bool append_rows(const sa_rolldoc_t *d, const canon_t *c, const sa_rsum_t *sums, const int64_t *ended,
                        bson_t *out)
{
    size_t cap = c->nk * (6 + (SA_RR_NF - SA_RR_E_RUNS) + 1 + 2 * c->ns) * 10 + 1;
    uint8_t *r = malloc(cap), *p = r;

    if (!r || cap > UINT32_MAX) {
        free(r);
        return false;
    }
    for (size_t i = 0; i < c->nk; i++) {
        size_t k = c->korder[i], nend = 0;
        const sa_rsum_t *sm = &sums[k];
        p = put_var(p, (int64_t)i);
        p = put_var(p, sm->gpu_s);
        p = put_var(p, sm->cpu_s);
        p = put_var(p, sm->mem_mb_s);
        p = put_var(p, sm->bill_milli_s);
        p = put_var(p, sm->started);
        for (int e = 0; e < SA_RR_NF - SA_RR_E_RUNS; e++)
            p = put_var(p, sm->e[e]);
        for (size_t t = 0; t < c->ns; t++)
            nend += ended[k * d->nstates + c->sorder[t]] != 0;
        p = put_var(p, (int64_t)nend);
        for (size_t t = 0; t < c->ns; t++) {
            int64_t n = ended[k * d->nstates + c->sorder[t]];
            if (n) {
                p = put_var(p, (int64_t)t);
                p = put_var(p, n);
            }
        }
    }
    BSON_APPEND_INT32(out, "nf", SA_RR_NF); /* the sums' count follows it (older rows documents have none) */
    bson_append_binary(out, "r", -1, BSON_SUBTYPE_BINARY, r, (uint32_t)(p - r));
    free(r);
    return true;
}

/*
 * The keys (kt: per key its SA_RK_N strings, each NUL-terminated) and states (st: each
 * NUL-terminated) tables, in canonical order, packed for the reason of append_rows.
 */
static bool append_tables(const sa_rolldoc_t *d, const canon_t *c, bson_t *out)
{
    size_t kl = 0, sl = 0;
    char *kt, *st, *p;

    for (size_t i = 0; i < c->nk; i++) {
        for (int f = 0; f < SA_RK_N; f++)
            kl += strlen(d->keys[c->korder[i]].s[f]) + 1;
    }
    for (size_t i = 0; i < c->ns; i++)
        sl += strlen(d->states[c->sorder[i]]) + 1;
    kt = malloc(kl + 1);
    st = malloc(sl + 1);
    if (!kt || !st || kl > UINT32_MAX || sl > UINT32_MAX) {
        free(kt);
        free(st);
        return false;
    }
    p = kt;
    for (size_t i = 0; i < c->nk; i++) {
        for (int f = 0; f < SA_RK_N; f++) {
            size_t l = strlen(d->keys[c->korder[i]].s[f]) + 1;
            memcpy(p, d->keys[c->korder[i]].s[f], l);
            p += l;
        }
    }
    p = st;
    for (size_t i = 0; i < c->ns; i++) {
        size_t l = strlen(d->states[c->sorder[i]]) + 1;
        memcpy(p, d->states[c->sorder[i]], l);
        p += l;
    }
    BSON_APPEND_UTF8(out, "enc", SA_ROLLUP_ENC);
    bson_append_binary(out, "kt", -1, BSON_SUBTYPE_BINARY, (const uint8_t *)kt, (uint32_t)kl);
    bson_append_binary(out, "st", -1, BSON_SUBTYPE_BINARY, (const uint8_t *)st, (uint32_t)sl);
    free(kt);
    free(st);
    return true;
}

/*
 * ids: the members' _ids joined by NUL; m: per member its version, record count and
 * tombstone time, then its records, every value a zigzag varint (a day document's times
 * as seconds into the day).
 */
static bool append_members(const sa_rolldoc_t *d, const canon_t *c, bson_t *out)
{
    size_t idlen = 0, nval = 0;
    int64_t expired = (int64_t)time(NULL) - SA_ROLLUP_TOMBSTONE_S;
    char *ids;
    uint8_t *m, *p;

    for (size_t i = 0; i < d->nm; i++) {
        if (!d->m[i].nrec && d->m[i].gone_at < expired)
            continue;
        idlen += strlen(d->m[i].id) + 1;
        nval += 3 + d->m[i].nrec * SA_RR_NF;
    }
    ids = malloc(idlen + 1);
    m = malloc(nval * 10 + 1);
    if (!ids || !m || idlen > UINT32_MAX || nval * 10 > UINT32_MAX) {
        free(ids);
        free(m);
        return false;
    }
    p = m;
    idlen = 0;
    for (size_t i = 0; i < d->nm; i++) {
        size_t l = strlen(d->m[i].id) + 1;
        if (!d->m[i].nrec && d->m[i].gone_at < expired)
            continue; /* a tombstone past its time */
        memcpy(ids + idlen, d->m[i].id, l);
        idlen += l;
        p = put_var(p, d->m[i].v);
        p = put_var(p, (int64_t)d->m[i].nrec);
        p = put_var(p, d->m[i].gone_at);
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            for (int f = 0; f < SA_RR_NF; f++) {
                int64_t val = x[f];
                if (f == SA_RR_KEY)
                    val = c->kmap[val];
                else if (f == SA_RR_STATE && val >= 0)
                    val = c->smap[val];
                p = put_var(p, rel_time(f, val, d->day, true));
            }
        }
    }
    BSON_APPEND_INT32(out, "nf", SA_RR_NF);
    bson_append_binary(out, "ids", -1, BSON_SUBTYPE_BINARY, (const uint8_t *)ids, (uint32_t)idlen);
    bson_append_binary(out, "m", -1, BSON_SUBTYPE_BINARY, m, (uint32_t)(p - m));
    free(ids);
    free(m);
    return true;
}

bool sa_rolldoc_to_bson(const sa_rolldoc_t *d, int64_t v, bson_t *out, sa_error_t *error)
{
    canon_t c;
    bool ok = false;

    if (canon_make(d, &c)) {
        BSON_APPEND_UTF8(out, "_id", d->id);
        BSON_APPEND_UTF8(out, "cluster", d->cluster);
        switch (sa_rollup_kind(d->day)) {
        case SA_ROLLUP_K_DAY:
            BSON_APPEND_DATE_TIME(out, "day", d->day * 1000);
            break;
        case SA_ROLLUP_K_ENDED:
            BSON_APPEND_DATE_TIME(out, "day", (d->day - SA_ROLLUP_ENDED) * 1000);
            BSON_APPEND_UTF8(out, "kind", "ended");
            break;
        case SA_ROLLUP_K_STARTED:
            BSON_APPEND_DATE_TIME(out, "day", (d->day - SA_ROLLUP_STARTED) * 1000);
            BSON_APPEND_UTF8(out, "kind", "started");
            break;
        case SA_ROLLUP_K_LIVE:
            BSON_APPEND_UTF8(out, "kind", "live");
            BSON_APPEND_INT32(out, "shard", (int32_t)(d->day - SA_ROLLUP_LIVE));
            break;
        case SA_ROLLUP_K_OPEN:
            break;
        }
        if (sa_rollup_kind(d->day) != SA_ROLLUP_K_LIVE)
            BSON_APPEND_INT32(out, "part", d->part);
        BSON_APPEND_INT64(out, "_v", v);
        ok = append_tables(d, &c, out) && append_members(d, &c, out);
    }
    canon_clear(&c);
    return ok || sa_error_nomem(error);
}

bool sa_rolldoc_rows_bson(const sa_rolldoc_t *d, int64_t m_v, bson_t *out, sa_error_t *error)
{
    canon_t c;
    sa_rsum_t *sums = NULL;
    int64_t *ended = NULL;
    char *id = sa_rollup_rows_id(d->cluster, d->day, d->part);
    bool ok = false;

    if (id && canon_make(d, &c)) {
        if (sa_rolldoc_sums(d, &sums, &ended, error)) {
            BSON_APPEND_UTF8(out, "_id", id);
            BSON_APPEND_UTF8(out, "cluster", d->cluster);
            BSON_APPEND_DATE_TIME(out, "day", d->day * 1000);
            BSON_APPEND_INT32(out, "part", d->part);
            BSON_APPEND_INT64(out, "m_v", m_v);
            ok = append_tables(d, &c, out) && append_rows(d, &c, sums, ended, out);
            if (!ok)
                sa_error_nomem(error);
        }
        canon_clear(&c);
        free(sums);
        free(ended);
        free(id);
        return ok;
    }
    free(id);
    return sa_error_nomem(error);
}

/* ---- reading ----------------------------------------------------------------------------------- */

static bool bad(sa_error_t *error, const char *id, const char *what)
{
    sa_error_set(error, SA_ERR_INPUT, 0, "rollup document %s: %s", id ? id : "(no _id)", what);
    return false;
}

/* The next NUL-terminated string of a packed table at *pos, or NULL at its end or when it is cut. */
static const char *next_str(const uint8_t *t, size_t len, size_t *pos)
{
    const char *s = (const char *)t + *pos;
    const uint8_t *nul = *pos < len ? memchr(t + *pos, 0, len - *pos) : NULL;
    if (!nul)
        return NULL;
    *pos = (size_t)(nul - t) + 1;
    return s;
}

static bool read_keys(sa_rolldoc_t *d, const uint8_t *t, uint32_t len, sa_error_t *error)
{
    size_t pos = 0;
    while (pos < len) {
        const char *s[SA_RK_N];
        for (int k = 0; k < SA_RK_N; k++) {
            if (!(s[k] = next_str(t, len, &pos)))
                return bad(error, d->id, "the keys table is cut");
        }
        if (!SA_VEC_GROW(d->keys, d->keycap, d->nkeys, 1, 16))
            return sa_error_nomem(error);
        for (int k = 0; k < SA_RK_N; k++) { /* appended as is: a stored table has no duplicates */
            if (!(d->keys[d->nkeys].s[k] = strdup(s[k]))) {
                while (k-- > 0)
                    free(d->keys[d->nkeys].s[k]);
                return sa_error_nomem(error);
            }
        }
        d->nkeys++;
    }
    return true;
}

static bool read_states(sa_rolldoc_t *d, const uint8_t *t, uint32_t len, sa_error_t *error)
{
    size_t pos = 0;
    while (pos < len) {
        const char *s = next_str(t, len, &pos);
        if (!s)
            return bad(error, d->id, "the states table is cut");
        if (!SA_VEC_GROW(d->states, d->statecap, d->nstates, 1, 8) || !(d->states[d->nstates] = strdup(s)))
            return sa_error_nomem(error);
        d->nstates++;
    }
    return true;
}

/* The packed rows (append_rows), against the tables read before. */
static bool read_rows(sa_rolldoc_t *d, const uint8_t *r, uint32_t len, sa_error_t *error)
{
    size_t pos = 0;
    d->has_rows = true;
    while (pos < len) {
        sa_rrow_t row;
        int64_t *f[] = {&row.key, &row.s.gpu_s, &row.s.cpu_s, &row.s.mem_mb_s, &row.s.bill_milli_s, &row.s.started};
        int64_t nend;
        memset(&row, 0, sizeof row);
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            if (!get_var(r, len, &pos, f[i]))
                return bad(error, d->id, "the rows are cut");
        }
        for (int e = 0; e < SA_RR_NF - SA_RR_E_RUNS; e++) {
            if (!get_var(r, len, &pos, &row.s.e[e]))
                return bad(error, d->id, "the rows are cut");
        }
        if (row.key < 0 || (size_t)row.key >= d->nkeys || !get_var(r, len, &pos, &nend) || nend < 0 ||
            (size_t)nend > d->nstates)
            return bad(error, d->id, "a row's key or states are out of range");
        row.ended_first = d->nrended;
        for (int64_t k = 0; k < nend; k++) {
            int64_t st, n;
            if (!get_var(r, len, &pos, &st) || !get_var(r, len, &pos, &n) || st < 0 || (size_t)st >= d->nstates)
                return bad(error, d->id, "a row's runs ended are cut or out of range");
            if (!SA_VEC_GROW(d->rended, d->rendedcap, d->nrended, 1, 16))
                return sa_error_nomem(error);
            d->rended[d->nrended].state = st;
            d->rended[d->nrended++].n = n;
            row.nended++;
        }
        if (!SA_VEC_GROW(d->rows, d->rowcap, d->nrows, 1, 16))
            return sa_error_nomem(error);
        d->rows[d->nrows++] = row;
    }
    return true;
}

static bool read_members(sa_rolldoc_t *d, const uint8_t *ids, uint32_t idlen, const uint8_t *m, uint32_t mlen,
                         sa_error_t *error)
{
    size_t ip = 0, mp = 0;
    while (ip < idlen) {
        const char *id = (const char *)ids + ip;
        size_t l = strnlen(id, idlen - ip);
        int64_t v, n, gone;
        sa_rmember_t *x;
        if (l == idlen - ip || !get_var(m, mlen, &mp, &v) || !get_var(m, mlen, &mp, &n) ||
            !get_var(m, mlen, &mp, &gone))
            return bad(error, d->id, "members cut short");
        if (n < 0 || (uint64_t)n > (mlen - mp) / SA_RR_NF || (n == 0) != (gone > 0))
            return bad(error, d->id, "a member's record count is out of range");
        if (!SA_VEC_GROW(d->m, d->mcap, d->nm, 1, 64))
            return sa_error_nomem(error);
        x = &d->m[d->nm];
        x->v = v;
        x->gone_at = gone;
        x->nrec = (size_t)n;
        x->id = strdup(id);
        x->rec = malloc(((size_t)n ? (size_t)n : 1) * SA_RR_NF * sizeof *x->rec);
        if (!x->id || !x->rec) {
            free(x->id);
            free(x->rec);
            return sa_error_nomem(error);
        }
        d->nm++;
        for (size_t r = 0; r < x->nrec * SA_RR_NF; r++) {
            if (!get_var(m, mlen, &mp, &x->rec[r]))
                return bad(error, d->id, "members cut short");
            x->rec[r] = rel_time((int)(r % SA_RR_NF), x->rec[r], d->day, false);
        }
        for (size_t r = 0; r < x->nrec; r++) {
            const int64_t *y = &x->rec[r * SA_RR_NF];
            if (y[SA_RR_KEY] < 0 || (size_t)y[SA_RR_KEY] >= d->nkeys || y[SA_RR_STATE] < -1 ||
                (y[SA_RR_STATE] >= 0 && (size_t)y[SA_RR_STATE] >= d->nstates))
                return bad(error, d->id, "a record indexes no key or state");
        }
        if (d->nm > 1 && strcmp(d->m[d->nm - 2].id, id) >= 0)
            return bad(error, d->id, "members are not sorted");
        ip += l + 1;
    }
    if (mp != mlen)
        return bad(error, d->id, "members and their ids differ in number");
    return true;
}

bool sa_rolldoc_read(sa_rolldoc_t *d, const bson_t *b, sa_error_t *error)
{
    bson_iter_t it;
    const uint8_t *ids = NULL, *m = NULL, *kt = NULL, *stt = NULL, *rows = NULL;
    uint32_t idlen = 0, mlen = 0, ktlen = 0, stlen = 0, rlen = 0;
    int64_t nf = SA_RR_NF;
    const char *kind = NULL;
    int32_t shard = -1, part = 0;
    bool enc_ok = false, has_nf = false;

    sa_rolldoc_clear(d);
    if (!bson_iter_init(&it, b))
        return bad(error, NULL, "not BSON");
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        bson_subtype_t st;
        if (strcmp(k, "_id") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            if (!(d->id = strdup(bson_iter_utf8(&it, NULL))))
                return sa_error_nomem(error);
        } else if (strcmp(k, "cluster") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            if (!(d->cluster = strdup(bson_iter_utf8(&it, NULL))))
                return sa_error_nomem(error);
        } else if (strcmp(k, "day") == 0 && BSON_ITER_HOLDS_DATE_TIME(&it)) {
            d->day = bson_iter_date_time(&it) / 1000;
        } else if (strcmp(k, "_v") == 0 && (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it))) {
            d->v = bson_iter_as_int64(&it);
        } else if (strcmp(k, "m_v") == 0 && (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it))) {
            d->m_v = bson_iter_as_int64(&it);
        } else if (strcmp(k, "kind") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            kind = bson_iter_utf8(&it, NULL);
        } else if (strcmp(k, "shard") == 0 && BSON_ITER_HOLDS_INT32(&it)) {
            shard = bson_iter_int32(&it);
        } else if (strcmp(k, "part") == 0 && BSON_ITER_HOLDS_INT32(&it)) {
            part = bson_iter_int32(&it);
        } else if (strcmp(k, "nf") == 0 && BSON_ITER_HOLDS_INT32(&it)) {
            nf = bson_iter_int32(&it);
            has_nf = true;
        } else if (strcmp(k, "enc") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            enc_ok = strcmp(bson_iter_utf8(&it, NULL), SA_ROLLUP_ENC) == 0;
        } else if (strcmp(k, "kt") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &ktlen, &kt);
        } else if (strcmp(k, "st") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &stlen, &stt);
        } else if (strcmp(k, "r") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &rlen, &rows);
        } else if (strcmp(k, "ids") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &idlen, &ids);
        } else if (strcmp(k, "m") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &mlen, &m);
        }
    }
    if (!d->id || !d->cluster)
        return bad(error, d->id, "no _id or cluster");
    if (kind && strcmp(kind, "ended") == 0 && d->day != SA_UNSET)
        d->day += SA_ROLLUP_ENDED;
    else if (kind && strcmp(kind, "started") == 0 && d->day != SA_UNSET)
        d->day += SA_ROLLUP_STARTED;
    else if (kind && strcmp(kind, "live") == 0) {
        if (shard < 0 || shard >= SA_ROLLUP_LIVE_SHARDS)
            return bad(error, d->id, "a live shard out of range");
        d->day = SA_ROLLUP_LIVE + shard;
    }
    if (part < 0 || part >= SA_ROLLUP_PARTS)
        return bad(error, d->id, "a part out of range");
    d->part = part;
    if ((ids || m || rows) && (nf != SA_RR_NF || !enc_ok || !has_nf)) {
        /* an older version's (the first run of this version rebuilds them all): nothing of it is read */
        d->foreign = true;
        return true;
    }
    /* the tables first (records and rows index them as stored) */
    if ((kt && !read_keys(d, kt, ktlen, error)) || (stt && !read_states(d, stt, stlen, error)) ||
        (rows && !read_rows(d, rows, rlen, error)))
        return false;
    d->has_members = ids && m;
    return (!ids && !m) || read_members(d, ids, idlen, m, mlen, error);
}

/* ---- comparing ------------------------------------------------------------------------------- */

bool sa_rolldoc_rows_match(const sa_rolldoc_t *members, const sa_rolldoc_t *rows)
{
    sa_rsum_t *sums = NULL;
    int64_t *ended = NULL;
    size_t used = 0, matched = 0;
    sa_error_t err;
    bool ok = true;

    if (!sa_rolldoc_sums(members, &sums, &ended, &err))
        return false;
    for (size_t k = 0; k < members->nkeys; k++) { /* the keys the members use have a row each */
        bool any = false;
        for (size_t i = 0; !any && i < members->nm; i++) {
            for (size_t r = 0; !any && r < members->m[i].nrec; r++)
                any = members->m[i].rec[r * SA_RR_NF + SA_RR_KEY] == (int64_t)k;
        }
        used += any;
    }
    for (size_t i = 0; ok && i < rows->nrows; i++) {
        const sa_rrow_t *row = &rows->rows[i];
        size_t k = 0;
        while (k < members->nkeys && key_cmp(&members->keys[k], &rows->keys[row->key]) != 0)
            k++;
        if (k == members->nkeys || memcmp(&sums[k], &row->s, sizeof row->s) != 0) {
            ok = false;
            break;
        }
        for (size_t e = 0; ok && e < row->nended; e++) {
            const sa_rended_t *x = &rows->rended[row->ended_first + e];
            size_t st = 0;
            while (st < members->nstates && strcmp(members->states[st], rows->states[x->state]) != 0)
                st++;
            ok = st < members->nstates && ended[k * members->nstates + st] == x->n;
        }
        matched++;
    }
    free(sums);
    free(ended);
    return ok && matched == used;
}

/* The next live member of d from *i (tombstones skipped), or NULL. */
static const sa_rmember_t *next_live(const sa_rolldoc_t *d, size_t *i)
{
    while (*i < d->nm && d->m[*i].nrec == 0)
        (*i)++;
    return *i < d->nm ? &d->m[(*i)++] : NULL;
}

bool sa_rolldoc_equal(const sa_rolldoc_t *a, const sa_rolldoc_t *b)
{
    size_t i = 0, j = 0;
    if (a->day != b->day || a->part != b->part)
        return false;
    for (;;) {
        const sa_rmember_t *x = next_live(a, &i), *y = next_live(b, &j);
        if (!x || !y)
            return !x && !y;
        if (strcmp(x->id, y->id) != 0 || x->v != y->v || x->nrec != y->nrec)
            return false;
        for (size_t r = 0; r < x->nrec; r++) {
            const int64_t *p = &x->rec[r * SA_RR_NF], *q = &y->rec[r * SA_RR_NF];
            for (int f = 0; f < SA_RR_NF; f++) {
                if (f == SA_RR_KEY) {
                    if (key_cmp(&a->keys[p[f]], &b->keys[q[f]]) != 0)
                        return false;
                } else if (f == SA_RR_STATE) {
                    if ((p[f] < 0) != (q[f] < 0) || (p[f] >= 0 && strcmp(a->states[p[f]], b->states[q[f]]) != 0))
                        return false;
                } else if (p[f] != q[f]) {
                    return false;
                }
            }
        }
    }
}
