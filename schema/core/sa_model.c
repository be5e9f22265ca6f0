/*
 * sa_model.c - records shared by slurm-ingest and slurm-report (see sa_model.h).
 */
#include "sa_vec.h"
#include "sa_model.h"

#include <math.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- strings ---------------------------------------------------------------- */

void sa_strv_init(sa_strv_t *sv)
{
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

void sa_strv_clear(sa_strv_t *sv)
{
    if (!sv)
        return;
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sa_strv_init(sv);
}

/* Makes room for one more element at index pos (shifting the tail) and stores s. */
static bool strv_insert(sa_strv_t *sv, size_t pos, const char *s)
{
    char *copy;

    if (!SA_VEC_GROW(sv->v, sv->cap, sv->n, 1, 4))
        return false;
    copy = strdup(s);
    if (!copy)
        return false;
    memmove(sv->v + pos + 1, sv->v + pos, (sv->n - pos) * sizeof *sv->v);
    sv->v[pos] = copy;
    sv->n++;
    return true;
}

bool sa_strv_push(sa_strv_t *sv, const char *s)
{
    return strv_insert(sv, sv->n, s);
}

bool sa_strv_contains(const sa_strv_t *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++) {
        if (strcmp(sv->v[i], s) == 0)
            return true;
    }
    return false;
}

bool sa_strv_add_sorted_unique(sa_strv_t *sv, const char *s)
{
    size_t pos = 0;

    while (pos < sv->n) {
        int c = strcmp(sv->v[pos], s);
        if (c == 0)
            return true;
        if (c > 0)
            break;
        pos++;
    }
    return strv_insert(sv, pos, s);
}

/* ---- state -------------------------------------------------------------------- */

void sa_state_init(sa_state_t *st)
{
    st->base = NULL;
    sa_strv_init(&st->flags);
}

void sa_state_clear(sa_state_t *st)
{
    if (!st)
        return;
    free(st->base);
    sa_strv_clear(&st->flags);
    st->base = NULL;
}

char *sa_state_format(const sa_state_t *st)
{
    size_t len = (st->base ? strlen(st->base) : 0) + 1;
    char *out, *p;

    for (size_t i = 0; i < st->flags.n; i++)
        len += strlen(st->flags.v[i]) + 1;
    out = malloc(len);
    if (!out)
        return NULL;
    p = out;
    if (st->base) {
        strcpy(p, st->base);
        p += strlen(st->base);
    }
    for (size_t i = 0; i < st->flags.n; i++) {
        if (p != out)
            *p++ = '+';
        strcpy(p, st->flags.v[i]);
        p += strlen(st->flags.v[i]);
    }
    *p = '\0';
    return out;
}

bool sa_state_equal(const sa_state_t *a, const sa_state_t *b)
{
    if ((a->base == NULL) != (b->base == NULL))
        return false;
    if (a->base && strcmp(a->base, b->base) != 0)
        return false;
    if (a->flags.n != b->flags.n)
        return false;
    for (size_t i = 0; i < a->flags.n; i++) {
        if (strcmp(a->flags.v[i], b->flags.v[i]) != 0)
            return false;
    }
    return true;
}

bool sa_state_has_flag(const sa_state_t *st, const char *flag)
{
    return sa_strv_contains(&st->flags, flag);
}

static bool word_in(const char *word, const char *const *list)
{
    if (!word)
        return false;
    for (; *list; list++) {
        if (strcmp(word, *list) == 0)
            return true;
    }
    return false;
}

bool sa_node_base_is_known(const char *word)
{
    static const char *const bases[] = {"IDLE", "ALLOCATED", "MIXED", "DOWN", "ERROR",
                                        "FUTURE", "UNKNOWN", "INVALID", NULL};
    return word_in(word, bases);
}

bool sa_job_base_is_known(const char *word)
{
    static const char *const bases[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
                                        "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                                        "DEADLINE", "OUT_OF_MEMORY", "REVOKED", NULL};
    return word_in(word, bases);
}

bool sa_cluster_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 128 || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!(isascii(c) && (isalnum(c) || c == '.' || c == '_' || c == '-')))
            return false;
    }
    return true;
}

const char *const sa_job_final_states[] = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                                           "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
                                           "REVOKED", "REQUEUED", NULL};

bool sa_job_state_is_final(const char *base)
{
    return word_in(base, sa_job_final_states);
}

/* ---- GPUs and TRES ------------------------------------------------------------- */

void sa_gpus_init(sa_gpus_t *g)
{
    g->v = NULL;
    g->n = g->cap = 0;
}

void sa_gpus_clear(sa_gpus_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].type);
    free(g->v);
    sa_gpus_init(g);
}

/* Returns the entry for type, creating it (count 0) in sorted position; NULL on OOM. */
static sa_gpu_t *gpus_slot(sa_gpus_t *g, const char *type)
{
    size_t pos = 0;

    if (!type)
        type = "";
    while (pos < g->n) {
        int c = strcmp(g->v[pos].type, type);
        if (c == 0)
            return &g->v[pos];
        if (c > 0)
            break;
        pos++;
    }
    if (!SA_VEC_GROW(g->v, g->cap, g->n, 1, 2))
        return NULL;
    char *copy = strdup(type);
    if (!copy)
        return NULL;
    memmove(g->v + pos + 1, g->v + pos, (g->n - pos) * sizeof *g->v);
    g->v[pos].type = copy;
    g->v[pos].count = 0;
    g->n++;
    return &g->v[pos];
}

bool sa_gpus_add(sa_gpus_t *g, const char *type, int64_t count)
{
    sa_gpu_t *slot = gpus_slot(g, type);
    if (!slot)
        return false;
    slot->count += count;
    return true;
}

bool sa_gpus_set(sa_gpus_t *g, const char *type, int64_t count)
{
    sa_gpu_t *slot = gpus_slot(g, type);
    if (!slot)
        return false;
    slot->count = count;
    return true;
}

int64_t sa_gpus_total(const sa_gpus_t *g)
{
    int64_t total = 0;
    for (size_t i = 0; i < g->n; i++)
        total += g->v[i].count;
    return total;
}

int64_t sa_gpus_get(const sa_gpus_t *g, const char *type)
{
    for (size_t i = 0; i < g->n; i++) {
        if (strcmp(g->v[i].type, type ? type : "") == 0)
            return g->v[i].count;
    }
    return 0;
}

void sa_tres_init(sa_tres_t *t)
{
    t->cpu = t->mem_mb = t->node = SA_UNSET;
    t->billing = -1;
    t->gpu_total = 0;
    sa_gpus_init(&t->gpus);
    t->other = NULL;
}

void sa_tres_clear(sa_tres_t *t)
{
    if (!t)
        return;
    sa_gpus_clear(&t->gpus);
    json_decref(t->other);
    sa_tres_init(t);
}

bool sa_tres_is_empty(const sa_tres_t *t)
{
    return t->cpu == SA_UNSET && t->mem_mb == SA_UNSET && t->node == SA_UNSET && t->billing < 0 &&
           t->gpu_total == 0 && t->gpus.n == 0 && (!t->other || json_object_size(t->other) == 0);
}

/* ---- jobs ------------------------------------------------------------------------ */

const char *sa_source_name(sa_source_t s)
{
    switch (s) {
    case SA_SRC_SQUEUE:
        return "squeue";
    case SA_SRC_SACCT_JSON:
        return "sacct-json";
    case SA_SRC_SACCT_TEXT:
        return "sacct-text";
    }
    return "unknown";
}

/* Sets every member of a job to its "unset" value. */
/* ---- usage ------------------------------------------------------------------------ */

void sa_stats_init(sa_stats_t *s)
{
    s->cpu_s = s->user_cpu_s = s->system_cpu_s = s->gpu_util_pct = -1;
    s->max_rss_bytes = s->ave_rss_bytes = s->mem_total_bytes = s->gpu_mem_bytes = SA_UNSET;
    s->disk_read_bytes = s->disk_write_bytes = s->energy_j = SA_UNSET;
}

bool sa_stats_is_empty(const sa_stats_t *s)
{
    return s->cpu_s < 0 && s->user_cpu_s < 0 && s->system_cpu_s < 0 && s->gpu_util_pct < 0 &&
           s->max_rss_bytes == SA_UNSET && s->ave_rss_bytes == SA_UNSET && s->mem_total_bytes == SA_UNSET &&
           s->gpu_mem_bytes == SA_UNSET &&
           s->disk_read_bytes == SA_UNSET && s->disk_write_bytes == SA_UNSET && s->energy_j == SA_UNSET;
}

const char *const sa_usage_extra_columns[] = {"TRESUsageInTot", "TRESUsageInAve", "TRESUsageInMax",
                                               "TRESUsageOutTot", NULL};

bool sa_usage_extra_column(const char *key)
{
    for (const char *const *c = sa_usage_extra_columns; key && *c; c++) {
        if (strcasecmp(key, *c) == 0)
            return true;
    }
    return false;
}

/* Sets o[key] = v when v >= 0 (a real, so that the stored type never depends on the value). */
static void put_real(json_t *o, const char *key, double v)
{
    if (v >= 0 && isfinite(v))
        json_object_set_new(o, key, json_real(v));
}

static void put_count(json_t *o, const char *key, int64_t v)
{
    if (v != SA_UNSET)
        json_object_set_new(o, key, json_integer(v));
}

json_t *sa_stats_to_json(const sa_stats_t *s)
{
    json_t *o;

    if (sa_stats_is_empty(s) || !(o = json_object()))
        return NULL;
    put_real(o, "cpu_s", s->cpu_s);
    put_real(o, "user_cpu_s", s->user_cpu_s);
    put_real(o, "system_cpu_s", s->system_cpu_s);
    put_count(o, "max_rss_bytes", s->max_rss_bytes);
    put_count(o, "ave_rss_bytes", s->ave_rss_bytes);
    put_count(o, "mem_total_bytes", s->mem_total_bytes);
    put_real(o, "gpu_util_pct", s->gpu_util_pct);
    put_count(o, "gpu_mem_bytes", s->gpu_mem_bytes);
    put_count(o, "disk_read_bytes", s->disk_read_bytes);
    put_count(o, "disk_write_bytes", s->disk_write_bytes);
    put_count(o, "energy_j", s->energy_j);
    return o;
}

static void job_init(sa_job_t *job, sa_source_t source)
{
    memset(job, 0, sizeof *job);
    job->source = source;
    job->job_id = SA_UNSET;
    job->array_job_id = job->array_task_id = job->array_max_tasks = SA_UNSET;
    job->het_job_id = job->het_job_offset = SA_UNSET;
    job->user_id = job->group_id = SA_UNSET;
    sa_state_init(&job->state);
    job->submit = job->eligible = job->start = job->end = SA_UNSET;
    job->elapsed = job->time_limit = SA_UNSET;
    job->node_count = job->cpus = SA_UNSET;
    sa_tres_init(&job->req);
    sa_tres_init(&job->alloc);
    sa_gpus_init(&job->gres_gpus);
    job->exit_code = job->exit_signal = -1;
    job->derived_exit_code = job->derived_exit_signal = -1;
    job->exit_reliable = true;
    job->restart_cnt = SA_UNSET;
    sa_stats_init(&job->stats);
}

sa_job_t *sa_job_new(sa_source_t source)
{
    sa_job_t *job = malloc(sizeof *job);
    if (job)
        job_init(job, source);
    return job;
}

static void step_clear(sa_step_t *st)
{
    free(st->id);
    free(st->name);
    sa_state_clear(&st->state);
    free(st->nodes);
    sa_tres_clear(&st->alloc);
    json_decref(st->extra);
}

/* Frees what a job points to, leaving the struct itself. */
static void job_clear(sa_job_t *job)
{
    free(job->cluster);
    free(job->job_id_display);
    free(job->array_task_string);
    free(job->user);
    free(job->group);
    free(job->account);
    free(job->partition);
    free(job->qos);
    free(job->name);
    free(job->reservation);
    free(job->wckey);
    sa_state_clear(&job->state);
    free(job->reason);
    free(job->state_description);
    free(job->nodes);
    sa_tres_clear(&job->req);
    sa_tres_clear(&job->alloc);
    sa_gpus_clear(&job->gres_gpus);
    free(job->run_gpu_type);
    for (size_t i = 0; i < job->nsteps; i++)
        step_clear(&job->steps[i]);
    free(job->steps);
    json_decref(job->extra);
}

void sa_job_destroy(sa_job_t *job)
{
    if (!job)
        return;
    job_clear(job);
    free(job);
}

sa_job_t *sa_job_steal(sa_job_t *job)
{
    sa_job_t *out = malloc(sizeof *out);
    if (!out)
        return NULL;
    *out = *job;
    job_init(job, out->source);
    return out;
}

void sa_job_drop_last_step(sa_job_t *job)
{
    if (job && job->nsteps > 0) {
        step_clear(&job->steps[job->nsteps - 1]);
        job->nsteps--;
    }
}

sa_step_t *sa_job_add_step(sa_job_t *job)
{
    sa_step_t *st;

    if (!SA_VEC_GROW(job->steps, job->steps_cap, job->nsteps, 1, 4))
        return NULL;
    st = &job->steps[job->nsteps++];
    memset(st, 0, sizeof *st);
    sa_state_init(&st->state);
    st->start = st->end = st->elapsed = SA_UNSET;
    st->exit_code = st->exit_signal = -1;
    sa_tres_init(&st->alloc);
    sa_stats_init(&st->stats);
    return st;
}

/* ---- nodes ------------------------------------------------------------------------ */

static void node_init(sa_node_t *node)
{
    memset(node, 0, sizeof *node);
    sa_state_init(&node->state);
    node->reason_time = SA_UNSET;
    node->cpus_total = node->cpus_alloc = node->cpus_idle = node->cpus_other = SA_UNSET;
    node->mem_total_mb = node->mem_alloc_mb = node->mem_free_mb = SA_UNSET;
    sa_gpus_init(&node->gpus_total);
    sa_gpus_init(&node->gpus_used);
    sa_strv_init(&node->partitions);
    node->gpu_config = SA_NODE_GPUS_OBSERVED;
    node->gpu_config_at = SA_UNSET;
}

const char *sa_run_gpu_type_source_name(int source)
{
    static const char *const names[] = {NULL, "tres", "node", "carried", "unknown"};
    return source > 0 && source <= SA_RUN_GPU_TYPE_UNKNOWN ? names[source] : NULL;
}

int sa_run_gpu_type_source_parse(const char *name)
{
    for (int s = SA_RUN_GPU_TYPE_TRES; name && s <= SA_RUN_GPU_TYPE_UNKNOWN; s++) {
        if (strcmp(name, sa_run_gpu_type_source_name(s)) == 0)
            return s;
    }
    return SA_RUN_GPU_TYPE_NONE;
}

const char *sa_node_gpu_config_name(int c)
{
    return c == SA_NODE_GPUS_CARRIED ? "carried" : c == SA_NODE_GPUS_UNKNOWN ? "unknown" : "observed";
}

sa_node_t *sa_node_new(void)
{
    sa_node_t *node = malloc(sizeof *node);
    if (node)
        node_init(node);
    return node;
}

void sa_node_destroy(sa_node_t *node)
{
    if (!node)
        return;
    free(node->name);
    sa_state_clear(&node->state);
    free(node->reason);
    free(node->reason_user);
    sa_gpus_clear(&node->gpus_total);
    sa_gpus_clear(&node->gpus_used);
    sa_strv_clear(&node->partitions);
    free(node->gres);
    free(node->gres_used);
    json_decref(node->extra);
    free(node);
}

sa_node_t *sa_node_steal(sa_node_t *node)
{
    sa_node_t *out = malloc(sizeof *out);
    if (!out)
        return NULL;
    *out = *node;
    node_init(node);
    return out;
}

/* ---- meta ---------------------------------------------------------------------- */

void sa_meta_init(sa_meta_t *m)
{
    m->slurm_release = m->data_parser = m->cluster = NULL;
    sa_strv_init(&m->warnings);
    sa_strv_init(&m->errors);
    m->last_update = SA_UNSET;
}

void sa_meta_clear(sa_meta_t *m)
{
    if (!m)
        return;
    free(m->slurm_release);
    free(m->data_parser);
    free(m->cluster);
    sa_strv_clear(&m->warnings);
    sa_strv_clear(&m->errors);
    sa_meta_init(m);
}

/* ---- JSON form ------------------------------------------------------------------ */

const char *sa_time_format(int64_t t, char *buf, size_t bufsz)
{
    struct tm tm;
    time_t tt = (time_t)t;

    if (t == SA_UNSET || !gmtime_r(&tt, &tm) || strftime(buf, bufsz, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        if (bufsz)
            buf[0] = '\0';
    }
    return buf;
}

/* The JSON members below all follow one rule: unset values are left out. */
static void put_str(json_t *o, const char *key, const char *s)
{
    if (s)
        json_object_set_new(o, key, json_string(s));
}

static void put_int(json_t *o, const char *key, int64_t v)
{
    if (v == SA_INFINITE)
        json_object_set_new(o, key, json_string("UNLIMITED"));
    else if (v != SA_UNSET)
        json_object_set_new(o, key, json_integer(v));
}

static void put_time(json_t *o, const char *key, int64_t t)
{
    char buf[32];
    if (t != SA_UNSET && t != SA_INFINITE)
        json_object_set_new(o, key, json_string(sa_time_format(t, buf, sizeof buf)));
}

static void put_state(json_t *o, const char *key, const sa_state_t *st)
{
    char *s;
    if (!st->base && st->flags.n == 0)
        return;
    s = sa_state_format(st);
    if (s)
        json_object_set_new(o, key, json_string(s));
    free(s);
}

static void put_strv(json_t *o, const char *key, const sa_strv_t *sv)
{
    json_t *a;
    if (sv->n == 0)
        return;
    a = json_array();
    for (size_t i = 0; i < sv->n; i++)
        json_array_append_new(a, json_string(sv->v[i]));
    json_object_set_new(o, key, a);
}

static void put_exit(json_t *o, const char *key, int rc, int sig)
{
    if (rc < 0 && sig < 0)
        return;
    json_t *e = json_object();
    if (rc >= 0)
        json_object_set_new(e, "code", json_integer(rc));
    if (sig >= 0)
        json_object_set_new(e, "signal", json_integer(sig));
    json_object_set_new(o, key, e);
}

json_t *sa_gpus_to_json(const sa_gpus_t *g)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < g->n; i++)
        json_object_set_new(o, g->v[i].type, json_integer(g->v[i].count));
    return o;
}

json_t *sa_tres_to_json(const sa_tres_t *t)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put_int(o, "cpu", t->cpu);
    put_int(o, "mem_mb", t->mem_mb);
    put_int(o, "node", t->node);
    if (t->billing >= 0 && isfinite(t->billing))
        json_object_set_new(o, "billing", json_real(t->billing));
    if (t->gpu_total || t->gpus.n) {
        json_object_set_new(o, "gpus", json_integer(t->gpu_total));
        json_object_set_new(o, "gpus_by_type", sa_gpus_to_json(&t->gpus));
    }
    if (t->other && json_object_size(t->other))
        json_object_set(o, "other", t->other);
    return o;
}

static void put_tres(json_t *o, const char *key, const sa_tres_t *t)
{
    if (!sa_tres_is_empty(t))
        json_object_set_new(o, key, sa_tres_to_json(t));
}

json_t *sa_job_to_json(const sa_job_t *job)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "record", json_string("job"));
    json_object_set_new(o, "source", json_string(sa_source_name(job->source)));
    put_str(o, "cluster", job->cluster);
    put_int(o, "job_id", job->job_id);
    put_str(o, "job_id_display", job->job_id_display);
    put_int(o, "array_job_id", job->array_job_id);
    put_int(o, "array_task_id", job->array_task_id);
    put_str(o, "array_task_string", job->array_task_string);
    put_int(o, "array_max_tasks", job->array_max_tasks);
    put_int(o, "het_job_id", job->het_job_id);
    put_int(o, "het_job_offset", job->het_job_offset);
    put_str(o, "user", job->user);
    put_int(o, "user_id", job->user_id);
    put_str(o, "group", job->group);
    put_int(o, "group_id", job->group_id);
    put_str(o, "account", job->account);
    put_str(o, "partition", job->partition);
    put_str(o, "qos", job->qos);
    put_str(o, "name", job->name);
    put_str(o, "reservation", job->reservation);
    put_str(o, "wckey", job->wckey);
    put_state(o, "state", &job->state);
    put_str(o, "reason", job->reason);
    put_str(o, "state_description", job->state_description);
    put_time(o, "submit", job->submit);
    put_time(o, "eligible", job->eligible);
    put_time(o, "start", job->start);
    put_time(o, "end", job->end);
    put_int(o, "elapsed_s", job->elapsed);
    put_int(o, "time_limit_min", job->time_limit);
    put_str(o, "nodes", job->nodes);
    put_int(o, "node_count", job->node_count);
    put_int(o, "cpus", job->cpus);
    put_tres(o, "req", &job->req);
    put_tres(o, "alloc", &job->alloc);
    if (job->gres_gpus.n)
        json_object_set_new(o, "gres_gpus", sa_gpus_to_json(&job->gres_gpus));
    put_exit(o, "exit", job->exit_code, job->exit_signal);
    if (!job->exit_reliable)
        json_object_set_new(o, "exit_reliable", json_false());
    put_exit(o, "derived_exit", job->derived_exit_code, job->derived_exit_signal);
    put_int(o, "restart_cnt", job->restart_cnt);
    if (job->requeue_allowed)
        json_object_set_new(o, "requeue_allowed", json_true());
    if (!sa_stats_is_empty(&job->stats))
        json_object_set_new(o, "stats", sa_stats_to_json(&job->stats));
    if (job->nsteps) {
        json_t *steps = json_array();
        for (size_t i = 0; i < job->nsteps; i++) {
            const sa_step_t *st = &job->steps[i];
            json_t *s = json_object();
            put_str(s, "id", st->id);
            put_str(s, "name", st->name);
            put_state(s, "state", &st->state);
            put_time(s, "start", st->start);
            put_time(s, "end", st->end);
            put_int(s, "elapsed_s", st->elapsed);
            put_exit(s, "exit", st->exit_code, st->exit_signal);
            put_str(s, "nodes", st->nodes);
            put_tres(s, "alloc", &st->alloc);
            if (!sa_stats_is_empty(&st->stats))
                json_object_set_new(s, "stats", sa_stats_to_json(&st->stats));
            if (st->extra && json_object_size(st->extra))
                json_object_set(s, "extra", st->extra);
            json_array_append_new(steps, s);
        }
        json_object_set_new(o, "steps", steps);
    }
    if (job->extra && json_object_size(job->extra))
        json_object_set(o, "extra", job->extra);
    return o;
}

json_t *sa_node_to_json(const sa_node_t *node)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "record", json_string("node"));
    put_str(o, "name", node->name);
    put_state(o, "state", &node->state);
    put_str(o, "reason", node->reason);
    put_time(o, "reason_time", node->reason_time);
    put_str(o, "reason_user", node->reason_user);
    put_int(o, "cpus_total", node->cpus_total);
    put_int(o, "cpus_alloc", node->cpus_alloc);
    put_int(o, "cpus_idle", node->cpus_idle);
    put_int(o, "cpus_other", node->cpus_other);
    put_int(o, "mem_total_mb", node->mem_total_mb);
    put_int(o, "mem_alloc_mb", node->mem_alloc_mb);
    put_int(o, "mem_free_mb", node->mem_free_mb);
    if (node->gpus_total.n)
        json_object_set_new(o, "gpus_total", sa_gpus_to_json(&node->gpus_total));
    if (node->gpus_used.n)
        json_object_set_new(o, "gpus_used", sa_gpus_to_json(&node->gpus_used));
    put_strv(o, "partitions", &node->partitions);
    put_str(o, "gres", node->gres);
    put_str(o, "gres_used", node->gres_used);
    if (node->gpu_config != SA_NODE_GPUS_OBSERVED)
        json_object_set_new(o, "gpu_config", json_string(sa_node_gpu_config_name(node->gpu_config)));
    if (node->cpu_config == SA_NODE_CPUS_SPLIT)
        json_object_set_new(o, "cpu_config", json_string("split"));
    put_time(o, "gpu_config_at", node->gpu_config_at);
    if (node->extra && json_object_size(node->extra))
        json_object_set(o, "extra", node->extra);
    return o;
}
