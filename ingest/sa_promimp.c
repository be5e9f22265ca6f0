/*
 * sa_promimp.c - the Prometheus import (sa_promimp.h): runs to summarise, the queries, the
 * answers into runs[].prom, written through the archive's path.
 */
#define _GNU_SOURCE /* asprintf, vasprintf */
#include "sa_promimp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_promq.h"
#include "sa_rollup_writer.h"
#include "sa_vec.h"

#define BATCH_RUNS 32
#define CHUNK 1000       /* documents read or written at once */
#define MAX_TASKS 20000  /* runs taken in one run of slurm-ingest (the budget ends it sooner) */
#define LATE_S 3600 /* a job whose end arrives this late is still found */

enum { ST_UTIL_MEAN, ST_UTIL_P50, ST_UTIL_MAX, ST_IDLE, ST_SERIES, ST_GMEM_MAX, ST_GMEM_MEAN, ST_POWER, ST_SM,
       ST_CPU, ST_MEM, ST_N };
enum { K_AVG, K_MAX, K_P50, K_IDLE, K_COUNT, K_RATE };

/* One statistic: its member of runs[].prom, how it is asked, and the metric of each exporter. */
static const struct {
    const char *key;
    bool gpu;        /* a per-GPU series (asked only of batches with GPUs) */
    int kind;
    const char *sje, *js; /* the metric of slurm-job-exporter, of jobstats (NULL: none) */
    double sje_scale, js_scale;
} stats[ST_N] = {
    [ST_UTIL_MEAN] = {"gpu_util_mean", true, K_AVG, "slurm_job_utilization_gpu", "nvidia_gpu_duty_cycle", 1, 1},
    [ST_UTIL_P50] = {"gpu_util_p50", true, K_P50, "slurm_job_utilization_gpu", "nvidia_gpu_duty_cycle", 1, 1},
    [ST_UTIL_MAX] = {"gpu_util_max", true, K_MAX, "slurm_job_utilization_gpu", "nvidia_gpu_duty_cycle", 1, 1},
    [ST_IDLE] = {"idle_gpu_s", true, K_IDLE, "slurm_job_utilization_gpu", "nvidia_gpu_duty_cycle", 1, 1},
    [ST_SERIES] = {"gpu_series", true, K_COUNT, "slurm_job_utilization_gpu", "nvidia_gpu_duty_cycle", 1, 1},
    [ST_GMEM_MAX] = {"gpu_mem_max_bytes", true, K_MAX, "slurm_job_memory_usage_gpu", "nvidia_gpu_memory_used_bytes",
                     1, 1},
    [ST_GMEM_MEAN] = {"gpu_mem_mean_bytes", true, K_AVG, "slurm_job_memory_usage_gpu",
                      "nvidia_gpu_memory_used_bytes", 1, 1},
    [ST_POWER] = {"gpu_power_mean_w", true, K_AVG, "slurm_job_power_gpu", "nvidia_gpu_power_usage_milliwatts", 1e-3,
                  1e-3},
    [ST_SM] = {"sm_occupancy_mean", true, K_AVG, "slurm_job_sm_occupancy_gpu", NULL, 1, 1},
    [ST_CPU] = {"cpu_cores_mean", false, K_RATE, "slurm_job_core_usage_total", "cgroup_cpu_total_seconds", 1e-9, 1},
    [ST_MEM] = {"mem_max_bytes", false, K_MAX, "slurm_job_memory_max", "cgroup_memory_rss_bytes", 1, 1},
};

/* One run to summarise. */
typedef struct {
    size_t doc;      /* index of its document */
    size_t run;      /* its index in runs[] */
    int64_t job_id, start, end, gpus;
    double v[ST_N];  /* answers, NAN: none */
    bool done;
    char *error;     /* the server refused the run's query (stored as runs[].prom.error), else NULL */
} task_t;

/* A document's _id and its index, or a task's document and index: sorted, to find one's tasks. */
typedef struct {
    const char *id;
    size_t doc, task;
} pair_t;

typedef struct {
    const sa_promimp_opts_t *o;
    sa_strv_t ids;    /* the documents looked at: prom_todo first, then the ended lists' */
    int64_t *ends;    /* their jobs' ends (0: a to-do entry), parallel to ids */
    size_t ends_cap, unread; /* ids from unread on were not read (the cap) */
    bool *written;    /* per document: replaced with its runs done */
    pair_t *by_id, *by_doc; /* the documents by _id; the tasks by document */
    bool js;          /* jobstats */
    const char *label;
    sa_promq_t q;
    task_t *t;
    size_t n, cap;
    size_t first, count; /* the batch being asked */
    int stat;
    int64_t read_at;
    sa_buf_t qb;
} imp_t;

/* ---- the queries ---------------------------------------------------------------------------- */

/* Appends to the query being built. */
static bool qput(imp_t *m, const char *fmt, ...)
{
    char *p = NULL;
    va_list ap;
    int n;
    bool ok;

    va_start(ap, fmt);
    n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    ok = sa_buf_append(&m->qb, p, (size_t)n);
    free(p);
    return ok;
}

/* The series of statistic st of the tasks t[a..b) (one start and end): an instant vector; *plain: a selector. */
static bool put_selector(imp_t *m, int st, size_t a, size_t b, bool *plain)
{
    const char *metric = m->js ? stats[st].js : stats[st].sje;
    bool ok = true;

    *plain = !m->js || !stats[st].gpu;
    if (*plain) {
        ok = qput(m, "%s{%s=~\"", metric, m->label);
        for (size_t i = a; ok && i < b; i++)
            ok = qput(m, "%s%lld", i > a ? "|" : "", (long long)m->t[i].job_id);
        return ok && qput(m, "\"}");
    }
    ok = qput(m, "(");
    for (size_t i = a; ok && i < b; i++)
        ok = qput(m, "%slabel_replace(%s and on(instance, minor_number) (nvidia_gpu_jobId == %lld), "
                               "\"jobid\", \"%lld\", \"\", \"\")", i > a ? " or " : "", metric,
                               (long long)m->t[i].job_id, (long long)m->t[i].job_id);
    return ok && qput(m, ")");
}

/* The term of statistic st for the tasks t[a..b). */
static bool put_term(imp_t *m, int st, size_t a, size_t b)
{
    static const char *const agg[] = {[K_AVG] = "avg", [K_MAX] = "max", [K_COUNT] = "count", [K_RATE] = "sum"};
    static const char *const fn[] = {[K_AVG] = "avg_over_time", [K_MAX] = "max_over_time",
                                     [K_COUNT] = "max_over_time", [K_RATE] = "rate"};
    long long d = (long long)(m->t[a].end - m->t[a].start), e = (long long)m->t[a].end, s = (long long)m->o->step_s;
    int k = stats[st].kind;
    bool plain, ok;

    switch (k) {
    case K_P50:
        ok = qput(m, "quantile_over_time(0.5, (avg by (%s) (", m->label) &&
             put_selector(m, st, a, b, &plain) && qput(m, "))[%llds:%llds] @ %lld)", d, s, e);
        break;
    case K_IDLE:
        ok = qput(m, "sum by (%s) (avg_over_time((", m->label) && put_selector(m, st, a, b, &plain) &&
             qput(m, " < bool %g)[%llds:%llds] @ %lld))", m->o->idle_pct, d, s, e);
        break;
    default:
        ok = qput(m, "%s by (%s) (%s(", agg[k], m->label, fn[k]) && put_selector(m, st, a, b, &plain);
        if (ok && plain)
            ok = qput(m, "[%llds] @ %lld))", d, e);
        else if (ok)
            ok = qput(m, "[%llds:%llds] @ %lld))", d, s, e);
        break;
    }
    return ok;
}

/* One answer's sample: the value of the batch's run of that job id. */
static bool take_sample(void *ctx, const char *label, int64_t t, double value, sa_error_t *error)
{
    imp_t *m = ctx;
    char *end;
    long long id = label ? strtoll(label, &end, 10) : -1;

    (void)t;
    (void)error;
    if (!label || *end)
        return true;
    for (size_t i = m->first; i < m->first + m->count; i++) {
        task_t *k = &m->t[i];
        if (k->job_id != id)
            continue;
        k->v[m->stat] = value * (m->js ? stats[m->stat].js_scale : stats[m->stat].sje_scale);
        if (m->stat == ST_IDLE)
            k->v[m->stat] *= (double)(k->end - k->start);
        break;
    }
    return true;
}

/* Asks the statistics of the batch t[first .. first+count). */
static bool ask_batch(imp_t *m, sa_error_t *error)
{
    bool gpus = false, ok = true;
    char at[32];

    for (size_t i = m->first; i < m->first + m->count; i++)
        gpus = gpus || m->t[i].gpus > 0;
    snprintf(at, sizeof at, "%lld", (long long)m->t[m->first + m->count - 1].end);
    for (int st = 0; ok && st < ST_N; st++) {
        const char *form[] = {"query", NULL, "time", at, NULL};
        json_t *data = NULL;
        if ((stats[st].gpu && !gpus) || !(m->js ? stats[st].js : stats[st].sje))
            continue;
        sa_buf_reset(&m->qb);
        for (size_t a = m->first, b; ok && a < m->first + m->count; a = b) {
            for (b = a + 1; b < m->first + m->count && m->t[b].start == m->t[a].start && m->t[b].end == m->t[a].end;)
                b++;
            if (m->t[a].end > m->t[a].start) /* a run of no time has no series to ask for */
                ok = (m->qb.len == 0 || qput(m, " or ")) && put_term(m, st, a, b);
        }
        if (!ok)
            return sa_error_nomem(error);
        if (m->qb.len == 0)
            continue;
        form[1] = m->qb.data;
        m->stat = st;
        ok = sa_promq_post(&m->q, "/api/v1/query", form, &data, error) &&
             sa_promq_samples(data, m->label, take_sample, m, error);
        json_decref(data);
    }
    return ok;
}

/* ---- the runs ------------------------------------------------------------------------------ */

/* The runs of document doc (number di) that ran, ended and have no runs[].prom, into m->t. */
static bool add_tasks(imp_t *m, const json_t *doc, size_t di)
{
    const json_t *runs = json_object_get(doc, "runs");
    size_t nr = json_array_size(runs);

    for (size_t i = 0; i < nr; i++) {
        const json_t *r = json_array_get(runs, i);
        int64_t start = sa_jobdoc_int(r, "start"), end = sa_jobdoc_int(r, "end"), gpus = sa_jobdoc_int(r, "gpus");
        if (end == SA_UNSET && i + 1 == nr)
            end = sa_jobdoc_int(doc, "end");
        if (json_object_get(r, "prom") || start == SA_UNSET || end == SA_UNSET || end < start)
            continue;
        if (!SA_VEC_GROW(m->t, m->cap, m->n, 1, 64))
            return false;
        m->t[m->n] = (task_t){di, i, sa_jobdoc_int(doc, "job_id"), start, end, gpus == SA_UNSET ? 0 : gpus,
                              {0}, false, NULL};
        for (int k = 0; k < ST_N; k++)
            m->t[m->n].v[k] = NAN;
        m->n++;
    }
    return true;
}

static int task_cmp(const void *a, const void *b)
{
    const task_t *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/* The next batch from m->t[from]: up to BATCH_RUNS runs (1 when single), a job id once. */
static size_t batch_end(const imp_t *m, size_t from, bool single)
{
    size_t to = from;
    while (to < m->n && to - from < (single ? 1 : BATCH_RUNS)) {
        for (size_t k = from; k < to; k++) {
            if (m->t[k].job_id == m->t[to].job_id)
                return to;
        }
        to++;
    }
    return to;
}

/*
 * Asks every batch, in end order, within the budget; *warning says why it stopped early.
 * A query the server refuses (SA_PROMQ_REFUSED: a run too large, say) is asked again run by
 * run, and a run refused alone is done with the server's error: it never blocks the others.
 */
static void ask_all(imp_t *m, char **warning)
{
    struct timespec t0, t;
    sa_error_t err;
    bool single = false;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < m->n;) {
        size_t to = batch_end(m, i, single);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (m->o->budget_s > 0 && t.tv_sec - t0.tv_sec >= m->o->budget_s) {
            if (asprintf(warning, "Prometheus import: the budget of %llds is spent; %zu run(s) wait for the next run",
                         (long long)m->o->budget_s, m->n - i) < 0)
                *warning = NULL;
            return;
        }
        m->first = i;
        m->count = to - i;
        sa_error_clear(&err);
        if (!ask_batch(m, &err)) {
            if (err.code == SA_PROMQ_REFUSED && m->count > 1) {
                single = true; /* the same runs again, one by one */
                continue;
            }
            if (err.code == SA_PROMQ_REFUSED) {
                m->t[i].error = strdup(err.message);
                for (int k = 0; k < ST_N; k++)
                    m->t[i].v[k] = NAN;
            } else {
                if (asprintf(warning, "Prometheus import stopped, %zu run(s) wait for the next run: %s", m->n - i,
                             err.message) < 0)
                    *warning = NULL;
                return;
            }
        }
        for (size_t k = i; k < to; k++)
            m->t[k].done = true;
        i = to;
    }
}

/* ---- the documents ----------------------------------------------------------------------- */

/* runs[].prom of a task done. */
static json_t *prom_json(const imp_t *m, const task_t *k)
{
    json_t *p = json_pack("{s:s, s:I, s:s}", "source", "prometheus", "read_at", (json_int_t)m->read_at, "exporter",
                          m->js ? "jobstats" : "slurm-job-exporter");
    if (!p)
        return NULL;
    json_object_set_new(p, "gpu_series", json_integer(isnan(k->v[ST_SERIES]) ? 0 : (json_int_t)k->v[ST_SERIES]));
    for (int s = 0; s < ST_N; s++) {
        if (s != ST_SERIES && !isnan(k->v[s]))
            json_object_set_new(p, stats[s].key, json_real(k->v[s] < 0 ? 0 : k->v[s]));
    }
    if (!isnan(k->v[ST_IDLE]))
        json_object_set_new(p, "idle_pct", json_real(m->o->idle_pct));
    if (k->error)
        json_object_set_new(p, "error", json_string(k->error));
    return p;
}

static int pair_id_cmp(const void *a, const void *b)
{
    return strcmp(((const pair_t *)a)->id, ((const pair_t *)b)->id);
}

static int pair_doc_cmp(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->doc != y->doc)
        return x->doc < y->doc ? -1 : 1;
    return x->task < y->task ? -1 : x->task > y->task;
}

/* The indexes patch_doc finds a document's tasks by. */
static bool index_tasks(imp_t *m)
{
    if (!(m->by_id = malloc((m->ids.n ? m->ids.n : 1) * sizeof *m->by_id)) ||
        !(m->by_doc = malloc((m->n ? m->n : 1) * sizeof *m->by_doc)))
        return false;
    for (size_t i = 0; i < m->ids.n; i++)
        m->by_id[i] = (pair_t){m->ids.v[i], i, 0};
    for (size_t i = 0; i < m->n; i++)
        m->by_doc[i] = (pair_t){NULL, m->t[i].doc, i};
    qsort(m->by_id, m->ids.n, sizeof *m->by_id, pair_id_cmp);
    qsort(m->by_doc, m->n, sizeof *m->by_doc, pair_doc_cmp);
    return true;
}

/* The document with runs[].prom of its tasks done (matched by the run's start). */
static bool patch_doc(void *ctx, const char *id, const json_t *stored, json_t **changed, sa_error_t *error)
{
    imp_t *m = ctx;
    pair_t key = {id, 0, 0}, *d = bsearch(&key, m->by_id, m->ids.n, sizeof *m->by_id, pair_id_cmp);
    size_t lo = 0, hi = m->n;

    *changed = NULL;
    if (!d)
        return true;
    while (lo < hi) { /* the first task of the document */
        size_t mid = lo + (hi - lo) / 2;
        if (m->by_doc[mid].doc < d->doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < m->n && m->by_doc[lo].doc == d->doc; lo++) {
        const task_t *k = &m->t[m->by_doc[lo].task];
        json_t *runs, *r = NULL;
        if (!k->done)
            continue;
        if (!*changed && !(*changed = json_deep_copy(stored)))
            return sa_error_nomem(error);
        runs = json_object_get(*changed, "runs");
        for (size_t ri = 0; ri < json_array_size(runs); ri++) {
            if (sa_jobdoc_int(json_array_get(runs, ri), "start") == k->start)
                r = json_array_get(runs, ri);
        }
        if (r && !json_object_get(r, "prom") && json_object_set_new(r, "prom", prom_json(m, k)) != 0)
            return sa_error_nomem(error);
    }
    return true;
}

/*
 * The documents to look at, into m: prom_todo (end 0: before anything), then the ended lists
 * from the watermark (or since) on, with their ends.
 */
static bool candidates(sa_archive_t *a, const char *cluster, imp_t *m, const json_t *cdoc, int64_t *wm,
                       sa_error_t *error)
{
    const json_t *todo = json_object_get(cdoc, "prom_todo"), *v;
    const sa_promimp_opts_t *o = m->o;
    int64_t after;
    size_t i;

    *wm = sa_jobdoc_int(cdoc, "prom_watermark");
    json_array_foreach(todo, i, v) {
        if (!json_is_string(v) || sa_strv_contains(&m->ids, json_string_value(v)))
            continue;
        if (!SA_VEC_GROW(m->ends, m->ends_cap, m->ids.n, 1, 256) || !sa_strv_push(&m->ids, json_string_value(v)))
            return sa_error_nomem(error);
        m->ends[m->ids.n - 1] = 0;
    }
    after = *wm == SA_UNSET ? o->at - 86400 : *wm - LATE_S;
    if (o->since != SA_UNSET && o->since < after)
        after = o->since;
    return sa_rollup_ended_ids(sa_archive_store(a), cluster, after, o->at, &m->ids, &m->ends, &m->ends_cap, error);
}

/* Adds id to the to-do unless there. */
static void todo_add(json_t *todo, const char *id)
{
    size_t i;
    json_t *v;
    json_array_foreach(todo, i, v) {
        if (strcmp(json_string_value(v), id) == 0)
            return;
    }
    json_array_append_new(todo, json_string(id));
}

/*
 * The new watermark and to-do: the watermark goes to the end of the first run not done
 * (less a second; documents not read for the cap: the first of their ends), else to the
 * run's time, never back (but for a backfill); the to-do holds the documents of runs
 * before it not done, and those done whose write lost a race.
 */
static bool keep_state(sa_archive_t *a, const char *cluster, const imp_t *m, int64_t wm, sa_promimp_stats_t *st,
                       sa_error_t *error)
{
    int64_t new_wm = m->o->at;
    json_t *todo = json_array(), *set;
    bool ok;

    for (size_t i = 0; i < m->n; i++) {
        if (!m->t[i].done && m->t[i].end - 1 < new_wm)
            new_wm = m->t[i].end - 1;
    }
    for (size_t i = m->unread; i < m->ids.n; i++) {
        if (m->ends[i] > 0 && m->ends[i] - 1 < new_wm)
            new_wm = m->ends[i] - 1;
    }
    if (wm != SA_UNSET && new_wm < wm && m->o->since == SA_UNSET)
        new_wm = wm;
    for (size_t i = 0; todo && i < m->n; i++) {
        const task_t *k = &m->t[i];
        if (k->done ? !m->written[k->doc] : k->end <= new_wm)
            todo_add(todo, m->ids.v[k->doc]);
        st->left += !k->done;
    }
    for (size_t i = m->unread; todo && i < m->ids.n; i++) {
        if (m->ends[i] <= new_wm) /* prom_todo entries left unread */
            todo_add(todo, m->ids.v[i]);
    }
    st->todo = json_array_size(todo);
    set = todo ? json_pack("{s:I, s:o}", "prom_watermark", (json_int_t)new_wm, "prom_todo", todo) : NULL;
    ok = set && sa_archive_cluster_update(a, cluster, NULL, set, error);
    if (!set)
        sa_error_nomem(error);
    json_decref(set);
    return ok;
}

/* The runs to summarise, from the documents read CHUNK at a time (each freed once its tasks are taken), up to MAX_TASKS. */
static bool read_tasks(sa_archive_t *a, imp_t *m, sa_error_t *error)
{
    json_t *docs[CHUNK];
    bool ok = true;
    size_t i;

    for (i = 0; ok && i < m->ids.n && m->n < MAX_TASKS; i += CHUNK) {
        size_t n = m->ids.n - i < CHUNK ? m->ids.n - i : CHUNK;
        ok = sa_archive_read_jobs(a, m->ids.v + i, n, docs, error);
        for (size_t k = 0; ok && k < n; k++) {
            ok = !docs[k] || add_tasks(m, docs[k], i + k) || sa_error_nomem(error);
            json_decref(docs[k]);
        }
    }
    m->unread = i < m->ids.n ? i : m->ids.n;
    return ok;
}

/* The documents with a run done, written CHUNK at a time through the archive's path. */
static bool write_done(sa_archive_t *a, const char *cluster, imp_t *m, sa_promimp_stats_t *st, sa_error_t *error)
{
    char **ids = malloc(CHUNK * sizeof *ids);
    size_t *di = malloc(CHUNK * sizeof *di), n = 0, written;
    bool replaced[CHUNK], ok = ids && di;
    bool *queued = calloc(m->ids.n ? m->ids.n : 1, sizeof *queued);

    if (!ok || !queued) {
        free(ids);
        free(di);
        free(queued);
        return sa_error_nomem(error);
    }
    for (size_t i = 0; ok && i <= m->n; i++) {
        if (i < m->n && m->t[i].done && !queued[m->t[i].doc]) {
            queued[m->t[i].doc] = true;
            di[n] = m->t[i].doc;
            ids[n++] = m->ids.v[m->t[i].doc];
        }
        if (n == CHUNK || (i == m->n && n)) {
            ok = sa_archive_patch_jobs(a, cluster, ids, n, patch_doc, m, &written, replaced, error);
            for (size_t k = 0; ok && k < n; k++)
                m->written[di[k]] = replaced[k];
            st->jobs += written;
            n = 0;
        }
    }
    free(ids);
    free(di);
    free(queued);
    return ok;
}

bool sa_promimp_run(sa_archive_t *a, const char *cluster, const sa_promimp_opts_t *o, sa_promimp_stats_t *st,
                    char **warning, sa_error_t *error)
{
    imp_t m;
    json_t *cdoc = NULL;
    bool ok;
    int64_t wm = SA_UNSET;

    memset(st, 0, sizeof *st);
    memset(&m, 0, sizeof m);
    *warning = NULL;
    m.o = o;
    m.js = o->exporter && strcmp(o->exporter, "jobstats") == 0;
    m.label = m.js ? "jobid" : "slurmjobid";
    m.q.url = o->url;
    m.q.timeout_s = o->timeout_s;
    m.read_at = (int64_t)time(NULL);
    sa_strv_init(&m.ids);
    sa_buf_init(&m.qb, (size_t)1 << 24);
    ok = (cdoc = sa_archive_cluster_get(a, cluster, error)) != NULL && candidates(a, cluster, &m, cdoc, &wm, error) &&
         ((m.written = calloc(m.ids.n ? m.ids.n : 1, sizeof *m.written)) != NULL || sa_error_nomem(error)) &&
         read_tasks(a, &m, error);
    if (ok && m.n) {
        qsort(m.t, m.n, sizeof *m.t, task_cmp);
        ok = index_tasks(&m) || sa_error_nomem(error);
        if (ok)
            ask_all(&m, warning);
        ok = ok && write_done(a, cluster, &m, st, error);
        for (size_t i = 0; i < m.n; i++)
            st->runs += m.t[i].done && m.written[m.t[i].doc];
    }
    ok = ok && keep_state(a, cluster, &m, wm, st, error);
    st->queries = m.q.requests;
    for (size_t i = 0; i < m.n; i++)
        free(m.t[i].error);
    free(m.t);
    free(m.ends);
    free(m.written);
    free(m.by_id);
    free(m.by_doc);
    sa_buf_clear(&m.qb);
    sa_strv_clear(&m.ids);
    json_decref(cdoc);
    return ok;
}
