/*
 * sa_runsrc.c - the one source of typed runs (sa_runsrc.h): the accounting rules of a
 * run's end and GPU type, and seff's figures, for every report and the rollups.
 */
#include "sa_runsrc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_model.h"
#include "sa_vec.h"

const char *sa_eff_src_name(int src)
{
    return src == SA_EFF_SRC_SACCT ? "sacct" : src == SA_EFF_SRC_PROM ? "prometheus" : "-";
}

/* The Prometheus import's figures where Slurm's are missing (sa_runsrc.h). */
static void eff_prom(const sa_jobview_run_t *r, int64_t req_mb, sa_eff_run_t *e)
{
    const sa_jobview_prom_t *p = &r->prom;

    if (!p->has)
        return;
    if (!e->has_util && r->gpus > 0 && p->gpu_util_mean >= 0) {
        e->has_util = true;
        e->gpu_util_pct = p->gpu_util_mean;
        e->util_src = SA_EFF_SRC_PROM;
        e->prom_idle_gpu_s = p->idle_gpu_s;
        e->prom_idle_pct = p->idle_pct;
    }
    if (!e->has_cpu && p->cpu_cores_mean >= 0 && r->cpus != SA_UNSET && r->cpus > 0 && e->elapsed_s != SA_UNSET &&
        e->elapsed_s > 0) {
        e->has_cpu = true;
        e->cpu_used_s = p->cpu_cores_mean * (double)e->elapsed_s;
        e->cpu_alloc_s = (double)e->elapsed_s * (double)r->cpus;
        e->cpu_src = SA_EFF_SRC_PROM;
    }
    if (!e->has_mem && p->mem_max_bytes >= 0 && req_mb != SA_UNSET && req_mb > 0) {
        e->has_mem = true;
        e->mem_used_bytes = (int64_t)llround(p->mem_max_bytes);
        e->mem_req_bytes = req_mb * 1048576;
        e->mem_src = SA_EFF_SRC_PROM;
    }
}

void sa_eff_run(const sa_jobview_t *j, const sa_jobview_run_t *r, sa_eff_run_t *e)
{
    const sa_stats_t *u = &r->usage;
    int64_t req_mb = j->req_mem_mb > 0 ? j->req_mem_mb : r->mem_mb;

    memset(e, 0, sizeof *e);
    e->elapsed_s = r->elapsed_s;
    if (e->elapsed_s == SA_UNSET && r->start != SA_UNSET && r->end != SA_UNSET && r->end >= r->start)
        e->elapsed_s = r->end - r->start;
    if (e->elapsed_s != SA_UNSET && r->gpus > 0)
        e->gpu_s = r->gpus * e->elapsed_s;
    if (u->cpu_s >= 0 && r->cpus != SA_UNSET && r->cpus > 0 && e->elapsed_s != SA_UNSET && e->elapsed_s > 0) {
        e->has_cpu = true;
        e->cpu_used_s = u->cpu_s;
        e->cpu_alloc_s = (double)e->elapsed_s * (double)r->cpus;
    }
    if (u->max_rss_bytes != SA_UNSET && req_mb != SA_UNSET && req_mb > 0) {
        e->has_mem = true;
        e->mem_used_bytes = u->max_rss_bytes;
        e->mem_req_bytes = req_mb * 1048576;
    }
    if (r->gpus > 0 && u->gpu_util_pct >= 0) {
        e->has_util = true;
        e->gpu_util_pct = u->gpu_util_pct;
    }
    e->prom_idle_gpu_s = e->prom_idle_pct = -1;
    e->util_src = e->has_util ? SA_EFF_SRC_SACCT : SA_EFF_SRC_NONE;
    e->cpu_src = e->has_cpu ? SA_EFF_SRC_SACCT : SA_EFF_SRC_NONE;
    e->mem_src = e->has_mem ? SA_EFF_SRC_SACCT : SA_EFF_SRC_NONE;
    eff_prom(r, req_mb, e);
}

int64_t sa_runsrc_share(int64_t a, int64_t num, int64_t den)
{
    if (num == den)
        return a;
    return (int64_t)llround((double)a * (double)num / (double)den);
}

void sa_runsrc_init(sa_runsrc_t *rs)
{
    memset(rs, 0, sizeof *rs);
}

void sa_runsrc_clear(sa_runsrc_t *rs)
{
    free(rs->runs);
    free(rs->gbuf);
    sa_runsrc_init(rs);
}

/* True for a job base state in which a run without an end is still going. */
static bool state_is_running(const char *s)
{
    return s && !sa_job_state_is_final(s) && strcmp(s, "PENDING") != 0;
}

/* The first history entry after start that is not RUNNING/SUSPENDED; SA_UNSET when none. */
static int64_t history_end(const sa_jobview_t *j, int64_t start)
{
    for (size_t i = 0; i < j->nhistory; i++) {
        const sa_jobview_hist_t *h = &j->history[i];
        if (h->at != SA_UNSET && h->at > start && h->state && strcmp(h->state, "RUNNING") != 0 &&
            strcmp(h->state, "SUSPENDED") != 0)
            return h->at;
    }
    return SA_UNSET;
}

/*
 * The end of run i (the accounting rules, sa_runsrc.h) when it has none: SA_UNSET when it
 * is open. False when the history is needed and was not read.
 */
static bool run_end(const sa_runsrc_t *rs, const sa_jobview_t *j, size_t i, bool have_history, int64_t *end)
{
    const sa_typed_run_t *r = &rs->runs[i];
    int64_t next = SA_UNSET;

    for (size_t k = 0; k < rs->n; k++) { /* the next run's start */
        if (rs->runs[k].start > r->start && (next == SA_UNSET || rs->runs[k].start < next))
            next = rs->runs[k].start;
    }
    *end = SA_UNSET;
    if (next != SA_UNSET)
        *end = next;
    else if (j->final)
        *end = j->end != SA_UNSET ? j->end : r->start; /* final without an end: nothing to count */
    else if (j->vanished_at != SA_UNSET)
        *end = j->vanished_at;
    else if (state_is_running(j->state) || !j->state)
        *end = SA_UNSET;
    else if (have_history)
        *end = j->has_history ? history_end(j, r->start) : SA_UNSET;
    else if (j->has_id)
        return false;
    return true;
}

/* Adds count GPUs of type to the run being built (types kept unique). */
static bool add_gpus(sa_runsrc_t *rs, size_t first, const char *type, int64_t count)
{
    for (size_t i = first; i < rs->ng; i++) {
        if (strcmp(rs->gbuf[i].type, type) == 0) {
            rs->gbuf[i].count += count;
            return true;
        }
    }
    if (!SA_VEC_GROW(rs->gbuf, rs->gcap, rs->ng, 1, 16))
        return false;
    rs->gbuf[rs->ng].type = type;
    rs->gbuf[rs->ng++].count = count;
    return true;
}

/* The type of untyped GPUs of run v: the one found on its nodes at ingest, else unknown. */
static const char *untyped_type(const sa_jobview_run_t *v)
{
    if (v->gpu_type && *v->gpu_type &&
        (v->gpu_type_source == SA_RUN_GPU_TYPE_NODE || v->gpu_type_source == SA_RUN_GPU_TYPE_CARRIED))
        return v->gpu_type;
    return SA_GPU_TYPE_UNKNOWN;
}

/* GPUs by type of every run (rs->gbuf; the runs' gpus pointers are set at the end: gbuf moves). */
static bool type_runs(sa_runsrc_t *rs, size_t *firsts)
{
    for (size_t i = 0; i < rs->n; i++) {
        const sa_jobview_run_t *v = rs->runs[i].v;
        int64_t typed = 0;
        firsts[i] = rs->ng;
        for (size_t k = 0; k < v->ngpu_types; k++) {
            const sa_jobview_gpu_t *g = &v->gpu_types[k];
            if (g->count <= 0)
                continue;
            typed += g->count;
            if (!add_gpus(rs, firsts[i], g->type && *g->type ? g->type : untyped_type(v), g->count))
                return false;
        }
        if (v->gpus > typed && !add_gpus(rs, firsts[i], untyped_type(v), v->gpus - typed))
            return false; /* GPUs not split by type: as untyped */
        rs->runs[i].ngpus = rs->ng - firsts[i];
    }
    return true;
}

bool sa_runsrc_read(sa_runsrc_t *rs, const sa_jobview_t *j, bool have_history, bool *need_history,
                    sa_error_t *error)
{
    size_t *firsts = NULL;
    int64_t billing = j->alloc_billing >= 0 && isfinite(j->alloc_billing) && j->alloc_billing < 9e15
                          ? (int64_t)llround(j->alloc_billing * 1000.0)
                          : 0;

    rs->n = rs->ng = 0;
    if (need_history)
        *need_history = false;
    for (size_t i = 0; i < j->nruns; i++) {
        const sa_jobview_run_t *v = &j->runs[i];
        sa_typed_run_t *r;
        if (v->start == SA_UNSET)
            continue;
        if (!SA_VEC_GROW(rs->runs, rs->cap, rs->n, 1, 8))
            goto oom;
        r = &rs->runs[rs->n++];
        memset(r, 0, sizeof *r);
        r->v = v;
        r->start = v->start;
        r->end = v->end;
        r->cpus = v->cpus > 0 ? v->cpus : 0;
        r->mem_mb = v->mem_mb > 0 ? v->mem_mb : 0;
        r->billing_milli = billing;
    }
    for (size_t i = 0; i < rs->n; i++) {
        sa_typed_run_t *r = &rs->runs[i];
        if (r->v->end != SA_UNSET)
            continue;
        if (!run_end(rs, j, i, have_history, &r->end)) {
            if (need_history)
                *need_history = true;
            rs->n = 0;
            return true;
        }
    }
    for (size_t i = 0; i < rs->n; i++) {
        if (rs->runs[i].end != SA_UNSET && rs->runs[i].end < rs->runs[i].start)
            rs->runs[i].end = rs->runs[i].start;
    }
    if (!(firsts = malloc((rs->n ? rs->n : 1) * sizeof *firsts)) || !type_runs(rs, firsts))
        goto oom;
    for (size_t i = 0; i < rs->n; i++) {
        sa_typed_run_t *r = &rs->runs[i];
        r->gpus = rs->gbuf + firsts[i];
        r->gpu_total = 0;
        for (size_t k = 0; k < r->ngpus; k++)
            r->gpu_total += r->gpus[k].count;
    }
    free(firsts);
    return true;
oom:
    free(firsts);
    rs->n = 0;
    sa_error_nomem(error);
    return false;
}
