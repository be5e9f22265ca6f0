/*
 * sa_jobview.c - a stored job document read into a typed view (see sa_jobview.h): the
 * one place outside the merge that knows the document's member names.
 *
 * The usage report reads every GPU job of a month with it (a million documents in well
 * under a second), so members are told apart by their first letter before any string
 * compare, and the view's arrays are kept from one document to the next.
 */
#include "sa_jobview.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_model.h"
#include "sa_vec.h"

void sa_jobview_init(sa_jobview_t *v)
{
    memset(v, 0, sizeof *v);
}

void sa_jobview_clear(sa_jobview_t *v)
{
    free(v->run_buf);
    free(v->hist_buf);
    free(v->gpu_buf);
    free(v->step_buf);
    free(v->other_buf);
    memset(v, 0, sizeof *v);
}

static bool key_is(const char *k, const char *name)
{
    return k[0] == name[0] && strcmp(k, name) == 0;
}

/* Reads {code, signal} of an exit document. */
static void read_exit(const bson_iter_t *it, int *code, int *sig)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &e))
        return;
    while (bson_iter_next(&e)) {
        const char *k = bson_iter_key(&e);
        if (key_is(k, "code"))
            *code = (int)sa_bson_iter_int(&e, -1);
        else if (key_is(k, "signal"))
            *sig = (int)sa_bson_iter_int(&e, -1);
    }
}

/*
 * Appends runs[].gpus_by_type to the view's GPU buffer (*ngpu entries so far), counting
 * them in *count. The run's pointer is set once every run is read (the buffer may move).
 */
static bool read_gpu_types(sa_jobview_t *v, const bson_iter_t *it, size_t *ngpu, size_t *count)
{
    bson_iter_t a, e;
    if (!BSON_ITER_HOLDS_ARRAY(it) || !bson_iter_recurse(it, &a))
        return true;
    while (bson_iter_next(&a)) {
        sa_jobview_gpu_t g = {NULL, 0};
        if (!BSON_ITER_HOLDS_DOCUMENT(&a) || !bson_iter_recurse(&a, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *k = bson_iter_key(&e);
            if (key_is(k, "type"))
                g.type = sa_bson_iter_str(&e, NULL);
            else if (key_is(k, "count"))
                g.count = sa_bson_iter_int(&e, 0);
        }
        if (!SA_VEC_GROW(v->gpu_buf, v->gpu_cap, *ngpu, 1, 8))
            return false;
        v->gpu_buf[(*ngpu)++] = g;
        (*count)++;
    }
    return true;
}

/*
 * Appends an array of {name, value} (alloc.other, runs[].other) to the view's buffer
 * (*n entries so far), counting them in *count; pointers are set once the document is
 * read (the buffer may move).
 */
static bool read_other(sa_jobview_t *v, const bson_iter_t *it, size_t *n, size_t *count)
{
    bson_iter_t a, e;
    if (!BSON_ITER_HOLDS_ARRAY(it) || !bson_iter_recurse(it, &a))
        return true;
    while (bson_iter_next(&a)) {
        sa_jobview_tres_t t = {NULL, NULL};
        if (!BSON_ITER_HOLDS_DOCUMENT(&a) || !bson_iter_recurse(&a, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *k = bson_iter_key(&e);
            if (key_is(k, "name"))
                t.name = sa_bson_iter_str(&e, NULL);
            else if (key_is(k, "value"))
                t.value = sa_bson_iter_str(&e, NULL);
        }
        if (!SA_VEC_GROW(v->other_buf, v->other_cap, *n, 1, 8))
            return false;
        v->other_buf[(*n)++] = t;
        (*count)++;
    }
    return true;
}

/* A number of any BSON numeric type, or def. */
static double iter_num(const bson_iter_t *it, double def)
{
    if (BSON_ITER_HOLDS_DOUBLE(it))
        return bson_iter_double(it);
    if (BSON_ITER_HOLDS_INT32(it) || BSON_ITER_HOLDS_INT64(it))
        return (double)sa_bson_iter_int(it, 0);
    return def;
}

/* Reads a usage document (runs[].usage, runs[].steps[].usage) into *u (sa_stats_init()ed first). */
static void read_usage(const bson_iter_t *it, sa_stats_t *u)
{
    bson_iter_t e;

    sa_stats_init(u);
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &e))
        return;
    while (bson_iter_next(&e)) {
        const char *k = bson_iter_key(&e);
        if (key_is(k, "cpu_s"))
            u->cpu_s = iter_num(&e, -1);
        else if (key_is(k, "user_cpu_s"))
            u->user_cpu_s = iter_num(&e, -1);
        else if (key_is(k, "system_cpu_s"))
            u->system_cpu_s = iter_num(&e, -1);
        else if (key_is(k, "max_rss_bytes"))
            u->max_rss_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "ave_rss_bytes"))
            u->ave_rss_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "mem_total_bytes"))
            u->mem_total_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "gpu_util_pct"))
            u->gpu_util_pct = iter_num(&e, -1);
        else if (key_is(k, "gpu_mem_bytes"))
            u->gpu_mem_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "disk_read_bytes"))
            u->disk_read_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "disk_write_bytes"))
            u->disk_write_bytes = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "energy_j"))
            u->energy_j = sa_bson_iter_int(&e, SA_UNSET);
    }
}

/* Reads alloc {cpus, gpus} of a step. */
static void read_step_alloc(const bson_iter_t *it, sa_jobview_step_t *s)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &e))
        return;
    while (bson_iter_next(&e)) {
        const char *k = bson_iter_key(&e);
        if (key_is(k, "cpus"))
            s->cpus = sa_bson_iter_int(&e, SA_UNSET);
        else if (key_is(k, "gpus"))
            s->gpus = sa_bson_iter_int(&e, 0);
    }
}

/* Reads one runs[].steps[] document into s. */
static void read_step(bson_iter_t *e, sa_jobview_step_t *s)
{
    memset(s, 0, sizeof *s);
    s->start = s->end = s->elapsed_s = s->cpus = SA_UNSET;
    s->exit_code = s->exit_signal = -1;
    sa_stats_init(&s->usage);
    while (bson_iter_next(e)) {
        const char *k = bson_iter_key(e);
        if (key_is(k, "id"))
            s->id = sa_bson_iter_str(e, NULL);
        else if (key_is(k, "name"))
            s->name = sa_bson_iter_str(e, NULL);
        else if (key_is(k, "state"))
            s->state = sa_bson_iter_str(e, NULL);
        else if (key_is(k, "nodes"))
            s->nodes = sa_bson_iter_str(e, NULL);
        else if (key_is(k, "start"))
            s->start = sa_bson_iter_time(e);
        else if (key_is(k, "end"))
            s->end = sa_bson_iter_time(e);
        else if (key_is(k, "elapsed_s"))
            s->elapsed_s = sa_bson_iter_int(e, SA_UNSET);
        else if (key_is(k, "exit"))
            read_exit(e, &s->exit_code, &s->exit_signal);
        else if (key_is(k, "alloc"))
            read_step_alloc(e, s);
        else if (key_is(k, "usage"))
            read_usage(e, &s->usage);
    }
}

/*
 * Appends runs[].steps to the view's step buffer (*nstep entries so far), counting them
 * in *count; the run's pointer is set once every run is read (the buffer may move).
 */
static bool read_steps(sa_jobview_t *v, const bson_iter_t *it, size_t *nstep, size_t *count)
{
    bson_iter_t a, e;
    if (!BSON_ITER_HOLDS_ARRAY(it) || !bson_iter_recurse(it, &a))
        return true;
    while (bson_iter_next(&a)) {
        if (!BSON_ITER_HOLDS_DOCUMENT(&a) || !bson_iter_recurse(&a, &e))
            continue;
        if (!SA_VEC_GROW(v->step_buf, v->step_cap, *nstep, 1, 8))
            return false;
        read_step(&e, &v->step_buf[(*nstep)++]);
        (*count)++;
    }
    return true;
}

/* Reads runs[].prom into *p. */
static void read_prom(const bson_iter_t *it, sa_jobview_prom_t *p)
{
    static const struct {
        const char *key;
        size_t off;
    } nums[] = {
        {"gpu_util_mean", offsetof(sa_jobview_prom_t, gpu_util_mean)},
        {"gpu_util_p50", offsetof(sa_jobview_prom_t, gpu_util_p50)},
        {"gpu_util_max", offsetof(sa_jobview_prom_t, gpu_util_max)},
        {"idle_gpu_s", offsetof(sa_jobview_prom_t, idle_gpu_s)},
        {"idle_pct", offsetof(sa_jobview_prom_t, idle_pct)},
        {"gpu_mem_max_bytes", offsetof(sa_jobview_prom_t, gpu_mem_max_bytes)},
        {"gpu_mem_mean_bytes", offsetof(sa_jobview_prom_t, gpu_mem_mean_bytes)},
        {"gpu_power_mean_w", offsetof(sa_jobview_prom_t, gpu_power_mean_w)},
        {"sm_occupancy_mean", offsetof(sa_jobview_prom_t, sm_occupancy_mean)},
        {"cpu_cores_mean", offsetof(sa_jobview_prom_t, cpu_cores_mean)},
        {"mem_max_bytes", offsetof(sa_jobview_prom_t, mem_max_bytes)},
    };
    bson_iter_t e;

    p->has = false;
    p->read_at = SA_UNSET;
    p->gpu_series = -1;
    p->exporter = NULL;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        *(double *)((char *)p + nums[i].off) = -1;
    if (!it || !BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &e))
        return;
    p->has = true;
    while (bson_iter_next(&e)) {
        const char *k = bson_iter_key(&e);
        if (key_is(k, "read_at"))
            p->read_at = sa_bson_iter_time(&e);
        else if (key_is(k, "gpu_series"))
            p->gpu_series = sa_bson_iter_int(&e, -1);
        else if (key_is(k, "exporter"))
            p->exporter = sa_bson_iter_str(&e, NULL);
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
            if (key_is(k, nums[i].key))
                *(double *)((char *)p + nums[i].off) = iter_num(&e, -1);
        }
    }
}

/* Reads one runs[] document into r (its GPU types into the view's GPU buffer). */
static bool read_run(sa_jobview_t *v, bson_iter_t *it, sa_jobview_run_t *r, size_t *ngpu, size_t *nstep)
{
    memset(r, 0, sizeof *r);
    r->start = r->end = r->node_count = r->cpus = r->submit = r->eligible = SA_UNSET;
    r->elapsed_s = r->mem_mb = SA_UNSET;
    r->billing = -1;
    r->exit_code = r->exit_signal = -1;
    sa_stats_init(&r->usage);
    read_prom(NULL, &r->prom); /* absent until read */
    while (bson_iter_next(it)) {
        const char *k = bson_iter_key(it);
        switch (k[0]) {
        case 's':
            if (key_is(k, "start"))
                r->start = sa_bson_iter_time(it);
            else if (key_is(k, "state"))
                r->state = sa_bson_iter_str(it, NULL);
            else if (key_is(k, "submit"))
                r->submit = sa_bson_iter_time(it);
            else if (key_is(k, "steps") && !read_steps(v, it, nstep, &r->nsteps))
                return false;
            break;
        case 'e':
            if (key_is(k, "end"))
                r->end = sa_bson_iter_time(it);
            else if (key_is(k, "eligible"))
                r->eligible = sa_bson_iter_time(it);
            else if (key_is(k, "exit"))
                read_exit(it, &r->exit_code, &r->exit_signal);
            else if (key_is(k, "elapsed_s"))
                r->elapsed_s = sa_bson_iter_int(it, SA_UNSET);
            break;
        case 'm':
            if (key_is(k, "mem_mb"))
                r->mem_mb = sa_bson_iter_int(it, SA_UNSET);
            break;
        case 'p':
            if (key_is(k, "prom"))
                read_prom(it, &r->prom);
            break;
        case 'u':
            if (key_is(k, "usage"))
                read_usage(it, &r->usage);
            break;
        case 'b':
            if (key_is(k, "billing"))
                r->billing = iter_num(it, -1);
            break;
        case 'o':
            if (key_is(k, "other") && !read_other(v, it, &v->other_used, &r->nother))
                return false;
            break;
        case 'r':
            if (key_is(k, "reason"))
                r->reason = sa_bson_iter_str(it, NULL);
            break;
        case 'g':
            if (key_is(k, "gpus"))
                r->gpus = sa_bson_iter_int(it, 0);
            else if (key_is(k, "gpus_by_type") && !read_gpu_types(v, it, ngpu, &r->ngpu_types))
                return false;
            else if (key_is(k, "gpu_type"))
                r->gpu_type = sa_bson_iter_str(it, NULL);
            else if (key_is(k, "gpu_type_source"))
                r->gpu_type_source = sa_run_gpu_type_source_parse(sa_bson_iter_str(it, NULL));
            break;
        case 'n':
            if (key_is(k, "nodes"))
                r->nodes = sa_bson_iter_str(it, NULL);
            else if (key_is(k, "node_count"))
                r->node_count = sa_bson_iter_int(it, SA_UNSET);
            break;
        case 'c':
            if (key_is(k, "cpus"))
                r->cpus = sa_bson_iter_int(it, SA_UNSET);
            break;
        default:
            break;
        }
    }
    return true;
}

/* Reads the runs array, then points each run at its GPU types (appended in run order). */
static bool read_runs(sa_jobview_t *v, const bson_iter_t *it)
{
    bson_iter_t a, r;
    size_t ngpu = 0, nstep = 0, n = 0, off = 0, soff = 0;

    v->run_other_off = v->other_used;
    v->has_runs = BSON_ITER_HOLDS_ARRAY(it) && bson_iter_recurse(it, &a);
    while (v->has_runs && bson_iter_next(&a)) {
        if (!BSON_ITER_HOLDS_DOCUMENT(&a) || !bson_iter_recurse(&a, &r))
            continue;
        if (!SA_VEC_GROW(v->run_buf, v->run_cap, n, 1, 8) ||
            !read_run(v, &r, &v->run_buf[n], &ngpu, &nstep))
            return false;
        n++;
    }
    for (size_t i = 0; i < n; off += v->run_buf[i].ngpu_types, i++)
        v->run_buf[i].gpu_types = v->run_buf[i].ngpu_types ? v->gpu_buf + off : NULL;
    for (size_t i = 0; i < n; soff += v->run_buf[i].nsteps, i++)
        v->run_buf[i].steps = v->run_buf[i].nsteps ? v->step_buf + soff : NULL;
    /* the other TRES' pointers: sa_jobview_read, once alloc's are read too */
    v->runs = v->run_buf;
    v->nruns = n;
    return true;
}

/* Reads the history array ({state, at} of each entry). */
static bool read_history(sa_jobview_t *v, const bson_iter_t *it)
{
    bson_iter_t a, e;
    size_t n = 0;

    v->has_history = BSON_ITER_HOLDS_ARRAY(it) && bson_iter_recurse(it, &a);
    while (v->has_history && bson_iter_next(&a)) {
        sa_jobview_hist_t h = {NULL, SA_UNSET, NULL, false};
        if (!BSON_ITER_HOLDS_DOCUMENT(&a) || !bson_iter_recurse(&a, &e))
            continue;
        while (bson_iter_next(&e)) {
            const char *k = bson_iter_key(&e);
            if (key_is(k, "state"))
                h.state = sa_bson_iter_str(&e, NULL);
            else if (key_is(k, "at"))
                h.at = sa_bson_iter_time(&e);
            else if (key_is(k, "reason"))
                h.reason = sa_bson_iter_str(&e, NULL);
            else if (key_is(k, "_observed"))
                h.observed = BSON_ITER_HOLDS_BOOL(&e) && bson_iter_bool(&e);
        }
        if (!SA_VEC_GROW(v->hist_buf, v->hist_cap, n, 1, 8))
            return false;
        v->hist_buf[n++] = h;
    }
    v->history = v->hist_buf;
    v->nhistory = n;
    return true;
}

/* Reads seen {first, last}. */
static void read_seen(sa_jobview_t *v, const bson_iter_t *it)
{
    bson_iter_t s;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &s))
        return;
    while (bson_iter_next(&s)) {
        const char *k = bson_iter_key(&s);
        if (key_is(k, "first"))
            v->seen_first = sa_bson_iter_time(&s);
        else if (key_is(k, "last"))
            v->seen_last = sa_bson_iter_time(&s);
    }
}

/* Reads req {gpus, mem_mb, cpus, nodes}. */
static void read_req(sa_jobview_t *v, const bson_iter_t *it)
{
    bson_iter_t r;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &r))
        return;
    while (bson_iter_next(&r)) {
        const char *k = bson_iter_key(&r);
        if (key_is(k, "gpus"))
            v->req_gpus = sa_bson_iter_int(&r, 0);
        else if (key_is(k, "mem_mb"))
            v->req_mem_mb = sa_bson_iter_int(&r, SA_UNSET);
        else if (key_is(k, "cpus"))
            v->req_cpus = sa_bson_iter_int(&r, SA_UNSET);
        else if (key_is(k, "nodes"))
            v->req_nodes = sa_bson_iter_int(&r, SA_UNSET);
    }
}

/* Reads alloc {billing, other}. */
static bool read_alloc(sa_jobview_t *v, const bson_iter_t *it)
{
    bson_iter_t r;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &r))
        return true;
    v->alloc_other_off = v->other_used;
    while (bson_iter_next(&r)) {
        if (key_is(bson_iter_key(&r), "billing") && (BSON_ITER_HOLDS_DOUBLE(&r) || BSON_ITER_HOLDS_INT(&r)))
            v->alloc_billing = BSON_ITER_HOLDS_DOUBLE(&r) ? bson_iter_double(&r) : (double)sa_bson_iter_int(&r, 0);
        else if (key_is(bson_iter_key(&r), "other") && !read_other(v, &r, &v->other_used, &v->nalloc_other))
            return false;
    }
    return true;
}

/* Resets everything a read sets (the buffers stay). */
static void reset(sa_jobview_t *v)
{
    memset(&v->id, 0, sizeof v->id);
    v->has_id = v->has_runs = v->has_history = v->final = false;
    v->cluster = v->user = v->account = v->partition = v->qos = v->state = NULL;
    v->job_id = SA_UNSET;
    v->gpus = v->req_gpus = 0;
    v->alloc_billing = -1;
    v->alloc_other = NULL;
    v->nalloc_other = v->other_used = v->run_other_off = v->alloc_other_off = 0;
    v->req_nodes = SA_UNSET;
    v->cancelled_by = NULL;
    v->source = NULL;
    v->req_mem_mb = v->req_cpus = v->cpus = v->restart_cnt = v->time_limit_min = v->elapsed_s = SA_UNSET;
    v->name = v->job_id_display = v->nodes = NULL;
    v->exit_code = v->exit_signal = -1;
    v->time_limit_unlimited = false;
    v->submit = v->start = v->end = v->expected_end = v->vanished_at = v->seen_first = v->seen_last = SA_UNSET;
    v->eligible = SA_UNSET;
    v->reason = NULL;
    v->expected_start = v->array_job_id = v->array_task_id = v->het_job_id = v->het_offset = SA_UNSET;
    v->array_tasks = v->reservation = NULL;
    v->runs = NULL;
    v->history = NULL;
    v->nruns = v->nhistory = 0;
}

/* Two integer members (ka, kb) of a subdocument (array, het) into *a, *b. */
static void read_pair(bson_iter_t *it, const char *ka, int64_t *a, const char *kb, int64_t *b)
{
    bson_iter_t child;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &child))
        return;
    while (bson_iter_next(&child)) {
        if (key_is(bson_iter_key(&child), ka))
            *a = sa_bson_iter_int(&child, SA_UNSET);
        else if (key_is(bson_iter_key(&child), kb))
            *b = sa_bson_iter_int(&child, SA_UNSET);
    }
}

/* array: job_id, task_id and task_string. */
static void read_array(sa_jobview_t *v, bson_iter_t *it)
{
    bson_iter_t child;
    read_pair(it, "job_id", &v->array_job_id, "task_id", &v->array_task_id);
    if (BSON_ITER_HOLDS_DOCUMENT(it) && bson_iter_recurse(it, &child) && bson_iter_find(&child, "task_string"))
        v->array_tasks = sa_bson_iter_str(&child, NULL);
}

/*
 * extra.expected_start (epoch seconds), which archives written before expected_start was
 * a date hold; extra.cancelled_by (sacct's "CANCELLED by <uid>").
 */
static void read_extra(sa_jobview_t *v, bson_iter_t *it)
{
    bson_iter_t child;
    if (!BSON_ITER_HOLDS_DOCUMENT(it) || !bson_iter_recurse(it, &child))
        return;
    while (bson_iter_next(&child)) {
        const char *k = bson_iter_key(&child);
        if (key_is(k, "expected_start") && v->expected_start == SA_UNSET)
            v->expected_start = sa_bson_iter_time(&child);
        else if (key_is(k, "cancelled_by"))
            v->cancelled_by = sa_bson_iter_str(&child, NULL);
    }
}

/* One top-level member whose name starts with a-p (the rest: read_member_q_z). */
static bool read_member_a_p(sa_jobview_t *v, const char *k, bson_iter_t *it)
{
    switch (k[0]) {
    case 'a':
        if (key_is(k, "account"))
            v->account = sa_bson_iter_str(it, NULL);
        else if (key_is(k, "alloc"))
            return read_alloc(v, it);
        else if (key_is(k, "array"))
            read_array(v, it);
        break;
    case 'c':
        if (key_is(k, "cluster"))
            v->cluster = sa_bson_iter_str(it, NULL);
        else if (key_is(k, "cpus"))
            v->cpus = sa_bson_iter_int(it, SA_UNSET);
        break;
    case 'e':
        if (key_is(k, "end"))
            v->end = sa_bson_iter_time(it);
        else if (key_is(k, "expected_end"))
            v->expected_end = sa_bson_iter_time(it);
        else if (key_is(k, "expected_start"))
            v->expected_start = sa_bson_iter_time(it);
        else if (key_is(k, "extra"))
            read_extra(v, it);
        else if (key_is(k, "exit"))
            read_exit(it, &v->exit_code, &v->exit_signal);
        else if (key_is(k, "elapsed_s"))
            v->elapsed_s = sa_bson_iter_int(it, SA_UNSET);
        else if (key_is(k, "eligible"))
            v->eligible = sa_bson_iter_time(it);
        break;
    case 'g':
        if (key_is(k, "gpus"))
            v->gpus = sa_bson_iter_int(it, 0);
        break;
    case 'h':
        if (key_is(k, "history"))
            return read_history(v, it);
        if (key_is(k, "het"))
            read_pair(it, "job_id", &v->het_job_id, "offset", &v->het_offset);
        break;
    case 'j':
        if (key_is(k, "job_id"))
            v->job_id = sa_bson_iter_int(it, SA_UNSET);
        else if (key_is(k, "job_id_display"))
            v->job_id_display = sa_bson_iter_str(it, NULL);
        break;
    case 'n':
        if (key_is(k, "name"))
            v->name = sa_bson_iter_str(it, NULL);
        else if (key_is(k, "nodes"))
            v->nodes = sa_bson_iter_str(it, NULL);
        break;
    case 'p':
        if (key_is(k, "partition"))
            v->partition = sa_bson_iter_str(it, NULL);
        break;
    default:
        break;
    }
    return true;
}

/* One top-level member whose name starts with q-z or '_'. */
static bool read_member_q_z(sa_jobview_t *v, const char *k, bson_iter_t *it)
{
    switch (k[0]) {
    case '_':
        if (key_is(k, "_id") && (BSON_ITER_HOLDS_UTF8(it) || BSON_ITER_HOLDS_OID(it))) {
            v->id = *bson_iter_value(it);
            v->has_id = true;
        }
        break;
    case 'q':
        if (key_is(k, "qos"))
            v->qos = sa_bson_iter_str(it, NULL);
        break;
    case 'r':
        if (key_is(k, "runs"))
            return read_runs(v, it);
        if (key_is(k, "req"))
            read_req(v, it);
        else if (key_is(k, "restart_cnt"))
            v->restart_cnt = sa_bson_iter_int(it, SA_UNSET);
        else if (key_is(k, "reason"))
            v->reason = sa_bson_iter_str(it, NULL);
        else if (key_is(k, "reservation"))
            v->reservation = sa_bson_iter_str(it, NULL);
        break;
    case 't':
        if (key_is(k, "time_limit_min"))
            v->time_limit_min = sa_bson_iter_int(it, SA_UNSET);
        else if (key_is(k, "time_limit_unlimited"))
            v->time_limit_unlimited = BSON_ITER_HOLDS_BOOL(it) && bson_iter_bool(it);
        break;
    case 's':
        if (key_is(k, "state"))
            v->state = sa_bson_iter_str(it, NULL);
        else if (key_is(k, "start"))
            v->start = sa_bson_iter_time(it);
        else if (key_is(k, "submit"))
            v->submit = sa_bson_iter_time(it);
        else if (key_is(k, "seen"))
            read_seen(v, it);
        else if (key_is(k, "slurm") && BSON_ITER_HOLDS_DOCUMENT(it)) {
            bson_iter_t child;
            if (bson_iter_recurse(it, &child) && bson_iter_find(&child, "source"))
                v->source = sa_bson_iter_str(&child, NULL);
        }
        break;
    case 'u':
        if (key_is(k, "user"))
            v->user = sa_bson_iter_str(it, NULL);
        break;
    case 'v':
        if (key_is(k, "vanished_at"))
            v->vanished_at = sa_bson_iter_time(it);
        break;
    default:
        break;
    }
    return true;
}

bool sa_jobview_read(sa_jobview_t *v, const bson_t *doc, sa_error_t *error)
{
    bson_iter_t it;

    reset(v);
    if (!bson_iter_init(&it, doc)) {
        sa_error_set(error, SA_ERR_MONGO, 0, "a job document that is not BSON");
        return false;
    }
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        bool ok = k[0] <= 'p' && k[0] != '_' ? read_member_a_p(v, k, &it) : read_member_q_z(v, k, &it);
        if (!ok) {
            sa_error_nomem(error);
            return false;
        }
    }
    v->final = sa_job_state_is_final(v->state);
    /* the other TRES' pointers, now that the buffer no longer moves: the runs' are consecutive */
    for (size_t i = 0, off = v->run_other_off; i < v->nruns; off += v->run_buf[i].nother, i++)
        v->run_buf[i].other = v->run_buf[i].nother ? v->other_buf + off : NULL;
    v->alloc_other = v->nalloc_other ? v->other_buf + v->alloc_other_off : NULL;
    return true;
}
