/*
 * sa_jobdigest.c - a 64-bit digest of a job record, for change detection (see
 * sa_jobdoc.h, sa_job_digest).
 *
 * Every member of the record is fed to FNV-1a in a fixed order, each prefixed by a tag
 * and its length so that adjacent members cannot run into each other. Left out: what
 * Slurm rewrites without the job changing (sa_jobdoc_volatile_extra, an unfinished
 * job's end forecast in squeue, the value of a pending job's start forecast (whether it
 * has one counts: a forecast that appears is merged), the elapsed time and the usage so far (CPU time, memory,
 * I/O, energy, and the TRESUsage entries kept in its extra) of a job or step still
 * running: they grow every poll, and the final values come with the record that ends
 * it); the observation time is not part of a
 * record at all. A record whose only change is one of these is skipped by the job cache;
 * the document takes the new values with the next real change.
 */
#include "sa_jobdoc.h"

#include <string.h>

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

typedef struct {
    uint64_t h;
} hasher_t;

static void feed(hasher_t *hs, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = hs->h;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    hs->h = h;
}

static void feed_u64(hasher_t *hs, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    feed(hs, b, sizeof b);
}

static void feed_tag(hasher_t *hs, char tag)
{
    feed(hs, &tag, 1);
}

static void feed_int(hasher_t *hs, char tag, int64_t v)
{
    feed_tag(hs, tag);
    feed_u64(hs, (uint64_t)v);
}

static void feed_str(hasher_t *hs, char tag, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    feed_tag(hs, tag);
    feed_u64(hs, s ? (uint64_t)n : UINT64_MAX);
    feed(hs, s, n);
}

static void feed_json(hasher_t *hs, const json_t *v);

/*
 * Object members in their order (Slurm prints them in a fixed order). A record's extra
 * leaves out the scheduler's volatile members (top_extra) and, while the job or step
 * runs, the usage entries kept there (sa_usage_extra_columns: they grow every poll).
 */
static void feed_object(hasher_t *hs, const json_t *o, bool top_extra, bool running)
{
    const char *k;
    json_t *v;
    feed_tag(hs, '{');
    json_object_foreach((json_t *)o, k, v) {
        bool skip = running && sa_usage_extra_column(k);
        for (const char *const *x = sa_jobdoc_volatile_extra; top_extra && *x; x++)
            skip = skip || strcmp(k, *x) == 0;
        if (skip)
            continue;
        feed_str(hs, 'k', k);
        feed_json(hs, v);
    }
    feed_tag(hs, '}');
}

static void feed_json(hasher_t *hs, const json_t *v)
{
    size_t i;
    json_t *item;
    double d;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        feed_object(hs, v, false, false);
        break;
    case JSON_ARRAY:
        feed_tag(hs, '[');
        json_array_foreach(v, i, item) {
            feed_json(hs, item);
        }
        feed_tag(hs, ']');
        break;
    case JSON_STRING:
        feed_tag(hs, 's');
        feed_u64(hs, (uint64_t)json_string_length(v));
        feed(hs, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        feed_int(hs, 'i', (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        d = json_real_value(v);
        feed_tag(hs, 'r');
        feed(hs, &d, sizeof d);
        break;
    case JSON_TRUE:
        feed_tag(hs, 't');
        break;
    case JSON_FALSE:
        feed_tag(hs, 'f');
        break;
    case JSON_NULL:
        feed_tag(hs, 'n');
        break;
    }
}

static void feed_state(hasher_t *hs, const sa_state_t *st)
{
    feed_str(hs, 'B', st->base);
    feed_int(hs, 'F', (int64_t)st->flags.n);
    for (size_t i = 0; i < st->flags.n; i++)
        feed_str(hs, 'f', st->flags.v[i]);
}

static void feed_gpus(hasher_t *hs, const sa_gpus_t *g)
{
    feed_int(hs, 'G', (int64_t)g->n);
    for (size_t i = 0; i < g->n; i++) {
        feed_str(hs, 'g', g->v[i].type);
        feed_int(hs, 'c', g->v[i].count);
    }
}

static void feed_tres(hasher_t *hs, const sa_tres_t *t)
{
    feed_int(hs, 'C', t->cpu);
    feed_int(hs, 'M', t->mem_mb);
    feed_int(hs, 'N', t->node);
    feed_tag(hs, 'b');
    feed(hs, &t->billing, sizeof t->billing);
    feed_int(hs, 'T', t->gpu_total);
    feed_gpus(hs, &t->gpus);
    if (t->other)
        feed_json(hs, t->other);
    else
        feed_tag(hs, '-');
}

/* A record's or step's extra (see feed_object), '-' when it has none. */
static void feed_extra(hasher_t *hs, const json_t *extra, bool top, bool running)
{
    if (extra)
        feed_object(hs, extra, top, running);
    else
        feed_tag(hs, '-');
}

/* The usage fields (sa_stats_t): a record whose usage changed is a change (TotalCPU of a finished step). */
static void feed_stats(hasher_t *hs, const sa_stats_t *u)
{
    const double d[4] = {u->cpu_s, u->user_cpu_s, u->system_cpu_s, u->gpu_util_pct};
    feed_tag(hs, 'u');
    feed(hs, d, sizeof d);
    feed_int(hs, 'r', u->max_rss_bytes);
    feed_int(hs, 'v', u->ave_rss_bytes);
    if (u->mem_total_bytes != SA_UNSET) /* only when present: digests of records without it stay as they were */
        feed_int(hs, 'M', u->mem_total_bytes);
    feed_int(hs, 'm', u->gpu_mem_bytes);
    feed_int(hs, 'i', u->disk_read_bytes);
    feed_int(hs, 'o', u->disk_write_bytes);
    feed_int(hs, 'E', u->energy_j);
}

static void feed_step(hasher_t *hs, const sa_step_t *st)
{
    feed_str(hs, 'I', st->id);
    feed_str(hs, 'n', st->name);
    feed_state(hs, &st->state);
    feed_int(hs, 's', st->start);
    feed_int(hs, 'e', st->end);
    bool ended = st->end != SA_UNSET || sa_job_state_is_final(st->state.base);
    feed_int(hs, 'l', ended ? st->elapsed : SA_UNSET);
    feed_int(hs, 'x', st->exit_code);
    feed_int(hs, 'y', st->exit_signal);
    feed_str(hs, 'N', st->nodes);
    feed_tres(hs, &st->alloc);
    if (ended)
        feed_stats(hs, &st->stats); /* grows while the step runs */
    else
        feed_tag(hs, '-');
    feed_extra(hs, st->extra, false, !ended);
}

uint64_t sa_job_digest(const sa_job_t *rec, const char *salt)
{
    hasher_t hs = {FNV_OFFSET};
    bool live_squeue = rec->source == SA_SRC_SQUEUE && !sa_job_state_is_final(rec->state.base);
    bool pending = rec->state.base && strcmp(rec->state.base, "PENDING") == 0;

    feed_str(&hs, 'S', salt);
    feed_int(&hs, 'o', rec->source);
    feed_int(&hs, 'j', rec->job_id);
    feed_str(&hs, 'd', rec->job_id_display);
    feed_int(&hs, 'a', rec->array_job_id);
    feed_int(&hs, 'A', rec->array_task_id);
    feed_str(&hs, 'a', rec->array_task_string);
    feed_int(&hs, 'm', rec->array_max_tasks);
    feed_int(&hs, 'h', rec->het_job_id);
    feed_int(&hs, 'H', rec->het_job_offset);
    feed_str(&hs, 'u', rec->user);
    feed_str(&hs, 'g', rec->group);
    feed_int(&hs, 'U', rec->user_id);
    feed_int(&hs, 'G', rec->group_id);
    feed_str(&hs, 'c', rec->account);
    feed_str(&hs, 'p', rec->partition);
    feed_str(&hs, 'q', rec->qos);
    feed_str(&hs, 'n', rec->name);
    feed_str(&hs, 'r', rec->reservation);
    feed_str(&hs, 'w', rec->wckey);
    feed_state(&hs, &rec->state);
    feed_str(&hs, 'R', rec->reason);
    feed_str(&hs, 'D', rec->state_description);
    feed_int(&hs, '1', rec->submit);
    feed_int(&hs, '2', rec->eligible);
    feed_int(&hs, '3', live_squeue && pending ? SA_UNSET : rec->start);
    if (sa_job_forecast(rec) != SA_UNSET)
        feed_tag(&hs, 'f'); /* a pending job's start forecast: that it has one counts, not its value */
    feed_int(&hs, '4', live_squeue ? SA_UNSET : rec->end);
    feed_int(&hs, '5', sa_job_state_is_final(rec->state.base) ? rec->elapsed : SA_UNSET); /* grows while running */
    feed_int(&hs, '6', rec->time_limit);
    feed_str(&hs, 'N', rec->nodes);
    feed_int(&hs, 'k', rec->node_count);
    feed_int(&hs, 'P', rec->cpus);
    feed_tres(&hs, &rec->req);
    feed_tres(&hs, &rec->alloc);
    feed_gpus(&hs, &rec->gres_gpus);
    feed_int(&hs, 'x', rec->exit_code);
    feed_int(&hs, 'y', rec->exit_signal);
    feed_int(&hs, 'z', rec->exit_reliable);
    feed_int(&hs, 'X', rec->derived_exit_code);
    feed_int(&hs, 'Y', rec->derived_exit_signal);
    feed_int(&hs, 'Q', rec->restart_cnt);
    feed_int(&hs, 'q', rec->requeue_allowed);
    if (sa_job_state_is_final(rec->state.base))
        feed_stats(&hs, &rec->stats); /* grows while the job runs */
    else
        feed_tag(&hs, '-');
    feed_int(&hs, 'T', (int64_t)rec->nsteps);
    for (size_t i = 0; i < rec->nsteps; i++)
        feed_step(&hs, &rec->steps[i]);
    feed_extra(&hs, rec->extra, true, !sa_job_state_is_final(rec->state.base));
    return hs.h;
}
