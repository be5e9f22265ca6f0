/*
 * sa_jobdoc.c - a job's archive document and the merge rules (see sa_jobdoc.h and
 * schema/jobdoc/job.schema.json for the fields).
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_jobdoc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small jansson helpers: unset values are left out ------------------------- */

static void set_str(json_t *o, const char *key, const char *s)
{
    if (s && *s)
        json_object_set_new(o, key, json_string(s));
}

static void set_int(json_t *o, const char *key, int64_t v)
{
    if (v != SA_UNSET && v != SA_INFINITE)
        json_object_set_new(o, key, json_integer(v));
}

int64_t sa_jobdoc_int(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : SA_UNSET;
}

static const char *get_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *strv_json(const sa_strv_t *sv)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sv->n; i++)
        json_array_append_new(a, json_string(sv->v[i]));
    return a;
}

/* ---- states -------------------------------------------------------------------- */

/* A requeued instance: sacct's REQUEUED record, or a state carrying a requeue flag. */
static bool state_is_requeue(const sa_state_t *st)
{
    return (st->base && strcmp(st->base, "REQUEUED") == 0) || sa_state_has_flag(st, "REQUEUED") ||
           sa_state_has_flag(st, "REQUEUE_HOLD") || sa_state_has_flag(st, "REQUEUE_FED");
}

/*
 * Order of states that share a timestamp: the end of a run (REQUEUED) comes before
 * the next run's PENDING, PENDING before RUNNING, RUNNING before the final state.
 */
static int state_rank(const char *base)
{
    if (!base)
        return 3;
    if (strcmp(base, "REQUEUED") == 0)
        return 0;
    if (strcmp(base, "PENDING") == 0)
        return 1;
    if (strcmp(base, "RUNNING") == 0 || strcmp(base, "SUSPENDED") == 0)
        return 2;
    if (sa_job_state_is_final(base))
        return 4;
    return 3;
}

/* ---- TRES ----------------------------------------------------------------------- */

static json_t *gpus_json(const sa_gpus_t *g)
{
    json_t *a = json_array();
    for (size_t i = 0; i < g->n; i++) {
        if (g->v[i].count == 0)
            continue;
        json_array_append_new(a, json_pack("{s:s, s:I}", "type", g->v[i].type, "count", (json_int_t)g->v[i].count));
    }
    return a;
}

/* {cpus, mem_mb, nodes, billing, gpus, gpus_by_type, other}; fallback GPUs when the TRES lack them. */
static json_t *tres_json(const sa_tres_t *t, const sa_gpus_t *fallback)
{
    json_t *o = json_object();
    const sa_gpus_t *g = &t->gpus;
    int64_t total = t->gpu_total;

    set_int(o, "cpus", t->cpu);
    set_int(o, "mem_mb", t->mem_mb);
    set_int(o, "nodes", t->node);
    if (t->billing >= 0 && isfinite(t->billing))
        json_object_set_new(o, "billing", json_real(t->billing));
    if (total == 0 && fallback && sa_gpus_total(fallback) > 0) {
        g = fallback;
        total = sa_gpus_total(fallback);
    }
    json_object_set_new(o, "gpus", json_integer(total));
    if (total > 0)
        json_object_set_new(o, "gpus_by_type", gpus_json(g));
    if (t->other && json_object_size(t->other)) {
        json_t *other = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(t->other, k, v) {
            json_array_append_new(other, json_pack("{s:s, s:O}", "name", k, "value", v));
        }
        json_object_set_new(o, "other", other);
    }
    return o;
}

/* ---- the parts of a document built from one record ------------------------------ */

/*
 * When the record's job or run ended: its End, or, for a final record whose End Slurm
 * did not record (a NODE_FAIL's "Unknown") but whose start and elapsed time it did,
 * start + elapsed. SA_UNSET when neither is known.
 */
static int64_t record_end(const sa_job_t *rec)
{
    if (rec->end != SA_UNSET)
        return rec->end;
    if (sa_job_state_is_final(rec->state.base) && rec->start != SA_UNSET && rec->elapsed != SA_UNSET &&
        rec->elapsed >= 0 && rec->start <= INT64_MAX - rec->elapsed)
        return rec->start + rec->elapsed;
    return SA_UNSET;
}

/* The members of a document that the current observation sets. */
static const char *const current_keys[] = {
    "job_id_display", "array", "het", "user", "user_id", "group", "group_id", "account", "partition", "qos",
    "name", "reservation", "wckey", "state", "state_flags", "reason", "state_description", "submit",
    "eligible", "start", "end", "expected_start", "expected_end", "elapsed_s", "time_limit_min",
    "time_limit_unlimited", "nodes", "node_count", "cpus", "req", "alloc", "gpus", "gpu_types",
    "requeue_allowed", "slurm", "extra", NULL};

/*
 * The current-fields part of a document (everything but history, runs, seen, ids). A
 * pending job's start forecast is squeue's alone: a record that does not know it (sacct's
 * PENDING record of the same incarnation) keeps the stored one; it goes when the job
 * starts (a record that is not PENDING) or when squeue's own record says none.
 */
static void set_current_fields(json_t *doc, const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    bool live_squeue = rec->source == SA_SRC_SQUEUE && !sa_job_state_is_final(rec->state.base);
    bool pending = rec->state.base && strcmp(rec->state.base, "PENDING") == 0;
    json_t *alloc, *forecast = NULL;

    if (pending && !live_squeue && rec->submit != SA_UNSET && sa_jobdoc_int(doc, "submit") == rec->submit)
        forecast = json_incref(json_object_get(doc, "expected_start"));
    for (const char *const *k = current_keys; *k; k++)
        json_object_del(doc, *k);
    if (forecast)
        json_object_set_new(doc, "expected_start", forecast);

    set_str(doc, "job_id_display", rec->job_id_display);
    if (rec->array_job_id != SA_UNSET) {
        json_t *a = json_object();
        set_int(a, "job_id", rec->array_job_id);
        set_int(a, "task_id", rec->array_task_id);
        set_str(a, "task_string", rec->array_task_string);
        set_int(a, "max_tasks", rec->array_max_tasks);
        json_object_set_new(doc, "array", a);
    }
    if (rec->het_job_id != SA_UNSET) {
        json_t *h = json_object();
        set_int(h, "job_id", rec->het_job_id);
        set_int(h, "offset", rec->het_job_offset);
        json_object_set_new(doc, "het", h);
    }
    set_str(doc, "user", rec->user);
    set_int(doc, "user_id", rec->user_id);
    set_str(doc, "group", rec->group);
    set_int(doc, "group_id", rec->group_id);
    set_str(doc, "account", rec->account);
    set_str(doc, "partition", rec->partition);
    set_str(doc, "qos", rec->qos);
    set_str(doc, "name", rec->name);
    set_str(doc, "reservation", rec->reservation);
    set_str(doc, "wckey", rec->wckey);
    set_str(doc, "state", rec->state.base);
    if (rec->state.flags.n)
        json_object_set_new(doc, "state_flags", strv_json(&rec->state.flags));
    set_str(doc, "reason", rec->reason);
    set_str(doc, "state_description", rec->state_description);
    set_int(doc, "submit", rec->submit);
    set_int(doc, "eligible", rec->eligible);
    /* squeue's times of a job that has not ended are forecasts: a pending job's start
     * and an unfinished job's end (start + time limit) go to fields of their own */
    set_int(doc, live_squeue && pending ? "expected_start" : "start", rec->start);
    if (live_squeue)
        set_int(doc, "expected_end", rec->end);
    else
        set_int(doc, "end", record_end(rec));
    /* a running job's elapsed time grows with every poll: kept once it ended */
    if (sa_job_state_is_final(rec->state.base))
        set_int(doc, "elapsed_s", rec->elapsed);
    if (rec->time_limit == SA_INFINITE)
        json_object_set_new(doc, "time_limit_unlimited", json_true());
    else
        set_int(doc, "time_limit_min", rec->time_limit);
    set_str(doc, "nodes", rec->nodes);
    set_int(doc, "node_count", rec->node_count);
    set_int(doc, "cpus", rec->cpus);
    json_object_set_new(doc, "req", tres_json(&rec->req, NULL));
    alloc = tres_json(&rec->alloc, &rec->gres_gpus);
    json_object_set_new(doc, "gpus", json_integer(sa_jobdoc_int(alloc, "gpus")));
    {
        json_t *types = json_array(), *g;
        size_t i;
        json_array_foreach(json_object_get(alloc, "gpus_by_type"), i, g) {
            json_array_append(types, json_object_get(g, "type"));
        }
        json_object_set_new(doc, "gpu_types", types);
    }
    json_object_set_new(doc, "alloc", alloc);
    if (rec->requeue_allowed)
        json_object_set_new(doc, "requeue_allowed", json_true());
    {
        json_t *slurm = json_object();
        json_object_set_new(slurm, "source", json_string(sa_source_name(rec->source)));
        set_str(slurm, "release", ctx->slurm_release);
        set_str(slurm, "data_parser", ctx->data_parser);
        json_object_set_new(doc, "slurm", slurm);
    }
    if (rec->extra && json_object_size(rec->extra)) {
        /* values that say nothing ("", null) are not stored; nor, like the usage so far, the usage entries
           of a job still running (sa_usage_extra_columns) */
        json_t *extra = json_object();
        bool running = !sa_job_state_is_final(rec->state.base);
        const char *k;
        json_t *v;
        json_object_foreach(rec->extra, k, v) {
            if (json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0) ||
                (running && sa_usage_extra_column(k)))
                continue;
            /* squeue's start forecast of a pending job (epoch seconds in the record) is a time:
             * the document holds it as the date expected_start, like every other time */
            if (strcmp(k, "expected_start") == 0 && json_is_integer(v)) {
                if (!json_object_get(doc, "expected_start"))
                    json_object_set(doc, "expected_start", v);
                continue;
            }
            json_object_set(extra, k, v);
        }
        if (json_object_size(extra))
            json_object_set_new(doc, "extra", extra);
        else
            json_decref(extra);
    }
}

/* An exit code {code, signal, reliable} (new reference), or NULL when Slurm gave none. */
static json_t *exit_json(int rc, int sig, bool reliable)
{
    json_t *e;
    if (rc < 0 && sig < 0)
        return NULL;
    e = json_object();
    if (rc >= 0)
        json_object_set_new(e, "code", json_integer(rc));
    if (sig >= 0)
        json_object_set_new(e, "signal", json_integer(sig));
    json_object_set_new(e, "reliable", json_boolean(reliable));
    return e;
}

/* Sets o[key] to exit_json(...) when Slurm gave one. */
static void set_exit(json_t *o, const char *key, int rc, int sig, bool reliable)
{
    json_t *e = exit_json(rc, sig, reliable);
    if (e)
        json_object_set_new(o, key, e);
}

/* True if two exit codes say the same (code and signal). */
static bool same_code(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"code", "signal"};
    for (int i = 0; i < 2; i++) {
        const json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);
        if (!x != !y || (x && !json_equal((json_t *)x, (json_t *)y)))
            return false;
    }
    return true;
}

#define EXIT_RANK 7

/*
 * The rank of a job-level exit code: (reliable, from sacct, submit, at, start, code,
 * signal). start orders the runs of one sacct -D capture (same submit and at); code and
 * signal break what is left of a tie, so that no order of arrival decides.
 */
static void exit_rank(const json_t *e, int64_t r[EXIT_RANK])
{
    const json_t *k = json_object_get(e, "_key");
    const char *src = get_str(e, "source");
    r[0] = json_is_true(json_object_get(e, "reliable"));
    r[1] = src && strcmp(src, "squeue") != 0;
    r[2] = sa_jobdoc_int(k, "submit");
    r[3] = sa_jobdoc_int(k, "at");
    r[4] = sa_jobdoc_int(k, "start");
    r[5] = sa_jobdoc_int(e, "code");
    r[6] = sa_jobdoc_int(e, "signal");
}

/*
 * The job's exit code or derived exit code (key "exit" / "derived_exit"): how the job
 * ended, so from final records only (a running job's "0" says nothing), the one of the
 * greatest rank (exit_rank): a reliable code beats an unreliable one (sacct JSON <=
 * v0.0.39 reports SUCCESS/0 for every job), sacct's beats squeue's (a stale snapshot
 * never undoes it), a later incarnation's (a requeue) an earlier one's, a later
 * observation an earlier. "_key" {submit, at, start} keeps the rank; the same code of
 * the same incarnation seen again later keeps the stored one, so a steady poll changes
 * nothing.
 */
static void merge_job_exit(json_t *doc, const char *key, int rc, int sig, const sa_job_t *rec,
                           const sa_obs_ctx_t *ctx)
{
    json_t *e;

    if (!sa_job_state_is_final(rec->state.base) || !(e = exit_json(rc, sig, rec->exit_reliable)))
        return;
    json_object_set_new(e, "source", json_string(sa_source_name(rec->source)));
    json_object_set_new(e, "_key", json_pack("{s:I, s:I, s:I}", "submit",
                                             (json_int_t)(rec->submit == SA_UNSET ? 0 : rec->submit), "at",
                                             (json_int_t)ctx->at, "start",
                                             (json_int_t)(rec->start == SA_UNSET ? 0 : rec->start)));
    if (sa_jobdoc_exit_replaces(e, json_object_get(doc, key)))
        json_object_set_new(doc, key, e);
    else
        json_decref(e); /* a lower rank, or the same code seen again later */
}

bool sa_jobdoc_exit_replaces(const json_t *e, const json_t *old)
{
    int64_t a[EXIT_RANK], b[EXIT_RANK];
    int cmp = 0;

    if (!e)
        return false;
    if (!old)
        return true;
    exit_rank(e, a);
    exit_rank(old, b);
    for (int i = 0; i < EXIT_RANK && !cmp; i++)
        cmp = a[i] == b[i] ? 0 : a[i] < b[i] ? -1 : 1;
    return !(cmp <= 0 || (a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[4] == b[4] && same_code(e, old)));
}

/* ---- merge keys -------------------------------------------------------------------- */

/*
 * The rank of an observation: (submit, final, sacct, at, start), compared
 * lexicographically. start (0 when unknown) ranks the runs that one sacct -D
 * capture gives of a requeued job (same submit, all final, same at): the last run
 * is the current one, whatever order the records arrive in.
 */
typedef struct {
    int64_t submit, final, sacct, at, start;
} merge_key_t;

static merge_key_t record_key(const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    merge_key_t k;
    k.submit = rec->submit == SA_UNSET ? 0 : rec->submit;
    k.final = sa_job_state_is_final(rec->state.base) && rec->source != SA_SRC_SQUEUE ? 1 : 0;
    /* a final state seen by squeue (MinJobAge) is final too, but sacct's word wins */
    if (sa_job_state_is_final(rec->state.base))
        k.final = 1;
    k.sacct = rec->source == SA_SRC_SQUEUE ? 0 : 1;
    k.at = ctx->at;
    k.start = rec->start == SA_UNSET ? 0 : rec->start;
    return k;
}

static int key_cmp(const merge_key_t *a, const merge_key_t *b)
{
    const int64_t av[5] = {a->submit, a->final, a->sacct, a->at, a->start};
    const int64_t bv[5] = {b->submit, b->final, b->sacct, b->at, b->start};
    for (int i = 0; i < 5; i++) {
        if (av[i] != bv[i])
            return av[i] < bv[i] ? -1 : 1;
    }
    return 0;
}

static json_t *key_json(const merge_key_t *k)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "submit", (json_int_t)k->submit, "final", (json_int_t)k->final,
                     "sacct", (json_int_t)k->sacct, "at", (json_int_t)k->at, "start", (json_int_t)k->start);
}

static merge_key_t key_from_json(const json_t *o)
{
    merge_key_t k = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
    if (json_is_object(o)) {
        k.submit = sa_jobdoc_int(o, "submit");
        k.final = sa_jobdoc_int(o, "final");
        k.sacct = sa_jobdoc_int(o, "sacct");
        k.at = sa_jobdoc_int(o, "at");
        k.start = sa_jobdoc_int(o, "start"); /* SA_UNSET (lowest) in documents of 0.1.0 */
    }
    return k;
}

/* ---- history -------------------------------------------------------------------------- */

/*
 * Flags that mark a passing phase of the state they decorate (a job COMPLETED is
 * COMPLETING for a while; RUNNING is CONFIGURING first; a requeued job is PENDING with
 * REQUEUED until its old run has finished completing). They do not make a new
 * history entry; the entry keeps the union of the flags seen with it.
 */
static bool flag_is_transient(const char *f)
{
    static const char *const transient[] = {"COMPLETING", "CONFIGURING", "SIGNALING", "STAGE_OUT", "RESIZING",
                                            "POWER_UP_NODE", "UPDATE_DB", "EXPEDITING", "REQUEUED", NULL};
    for (const char *const *t = transient; *t; t++) {
        if (strcmp(f, *t) == 0)
            return true;
    }
    return false;
}

/* The flags of a list that count for a state's identity, as a sorted '+' string. */
static void significant_flags(const json_t *flags, char *buf, size_t bufsz)
{
    size_t i, len = 0;
    json_t *f;
    buf[0] = '\0';
    json_array_foreach(flags, i, f) {
        if (json_is_string(f) && !flag_is_transient(json_string_value(f)) && len < bufsz)
            len += (size_t)snprintf(buf + len, bufsz - len, "+%s", json_string_value(f));
    }
}

/* True if a history entry holds this base and the same significant flags. */
static bool entry_is_state(const json_t *e, const char *base, const json_t *flags)
{
    char a[256], b[256];
    const char *eb = get_str(e, "state");
    if (!eb || !base || strcmp(eb, base) != 0)
        return false;
    significant_flags(json_object_get(e, "flags"), a, sizeof a);
    significant_flags(flags, b, sizeof b);
    return strcmp(a, b) == 0;
}

/* Adds the flags of an absorbed observation to the entry (sorted union). */
static void entry_union_flags(json_t *e, const json_t *flags)
{
    sa_strv_t u;
    size_t i;
    json_t *f;

    if (!flags || json_array_size(flags) == 0)
        return;
    sa_strv_init(&u);
    json_array_foreach(json_object_get(e, "flags"), i, f) {
        sa_strv_add_sorted_unique(&u, json_string_value(f));
    }
    json_array_foreach(flags, i, f) {
        sa_strv_add_sorted_unique(&u, json_string_value(f));
    }
    json_object_set_new(e, "flags", strv_json(&u));
    sa_strv_clear(&u);
}

/*
 * -1/0/1 ordering of observations by (at, rank, state name): states that share a
 * time and a rank (two final states from contradicting sources) are ordered by
 * name, so their order does not depend on which arrived first.
 */
static int obs_cmp(int64_t at_a, int rank_a, const char *base_a, int64_t at_b, int rank_b, const char *base_b)
{
    int c;

    if (at_a != at_b)
        return at_a < at_b ? -1 : 1;
    if (rank_a != rank_b)
        return rank_a < rank_b ? -1 : 1;
    c = strcmp(base_a ? base_a : "", base_b ? base_b : "");
    return c < 0 ? -1 : c > 0;
}

/*
 * Folds an observation into the entry it belongs to, so that the result does not
 * depend on arrival order: the reason is that of the earliest observation that had
 * one ("_reason_at" remembers when; the smaller text wins a tie), and at the entry's
 * own time the smaller source name wins.
 */
static void entry_absorb(json_t *e, const char *reason, int64_t at, const char *source)
{
    const char *old_src = get_str(e, "source");
    if (at == sa_jobdoc_int(e, "at") && old_src && strcmp(source, old_src) < 0)
        json_object_set_new(e, "source", json_string(source));
    if (reason && *reason) {
        int64_t rat = sa_jobdoc_int(e, "_reason_at");
        const char *old = get_str(e, "reason");
        if (!old || rat == SA_UNSET || at < rat || (at == rat && strcmp(reason, old) < 0)) {
            json_object_set_new(e, "reason", json_string(reason));
            json_object_set_new(e, "_reason_at", json_integer(at));
        }
    }
}

/* A final state the job does not leave in this incarnation (REQUEUED is followed by PENDING). */
static bool state_is_terminal(const char *base)
{
    return sa_job_state_is_final(base) && strcmp(base, "REQUEUED") != 0;
}

/* One observation for the history: "in state (base, flags) at time at". */
typedef struct {
    const char *base;
    json_t *flags; /* owned by the observation; may be NULL */
    const char *reason;
    int64_t at;
    bool exact; /* at is the transition's own time (submit, start, end), not when a snapshot saw it */
    const char *source;
} obs_t;

/* True if a history entry's time is exact (entries only seen in a state carry "_observed"). */
static bool entry_exact(const json_t *e)
{
    return !json_is_true(json_object_get(e, "_observed"));
}

static void entry_set_exact(json_t *e, bool exact)
{
    if (exact)
        json_object_del(e, "_observed");
    else
        json_object_set_new(e, "_observed", json_true());
}

/*
 * True if the observation continues entry e (same state, e before it): always for an
 * observation that only saw the state; for an exact time, only at e's own time or for a
 * terminal state (two exact PENDING or RUNNING times are two transitions: a requeue; a
 * terminal state is entered once, at the earlier of the times given).
 */
static bool obs_continues(const json_t *e, const obs_t *o)
{
    return !o->exact || state_is_terminal(o->base) || sa_jobdoc_int(e, "at") == o->at;
}

/* After a terminal entry at pos, a snapshot's sighting of another state is stale: removes them. */
static void drop_stale_after(json_t *history, size_t pos)
{
    while (pos + 1 < json_array_size(history)) {
        const json_t *e = json_array_get(history, pos + 1);
        if (entry_exact(e) || state_is_terminal(get_str(e, "state")))
            break;
        json_array_remove(history, pos + 1);
    }
}

/*
 * Adds an observation to the sorted history, so that the history does not depend on the
 * order observations arrive in (the same rules folded over them sorted by time):
 * - the entry before it, in the same state, absorbs it when it continues it (obs_continues);
 * - a sighting of a non-terminal state after a terminal entry is stale: dropped;
 * - the entry after it, in the same state, moves earlier to it ("seen in that state
 *   earlier than we knew") unless that entry's time is exact and the state not terminal;
 * - else it is a new entry; a new terminal entry drops the stale sightings after it.
 * Takes o->flags.
 */
static void history_add(json_t *history, obs_t *o)
{
    size_t n = json_array_size(history), pos = 0;
    int rank = state_rank(o->base);
    json_t *e;

    if (o->flags && json_array_size(o->flags) == 0) {
        json_decref(o->flags);
        o->flags = NULL;
    }
    if (!o->base || o->at == SA_UNSET)
        goto done;
    /* pos = first entry ordered after the observation */
    while (pos < n) {
        const json_t *h = json_array_get(history, pos);
        if (obs_cmp(sa_jobdoc_int(h, "at"), state_rank(get_str(h, "state")), get_str(h, "state"), o->at, rank,
                    o->base) > 0)
            break;
        pos++;
    }
    /* already in this state then: the entry just before, or one at the same time and
     * state (with other transient flags) */
    for (size_t i = pos; i > 0; i--) {
        json_t *prev = json_array_get(history, i - 1);
        if (entry_is_state(prev, o->base, o->flags) && obs_continues(prev, o)) {
            entry_union_flags(prev, o->flags);
            if (o->exact && sa_jobdoc_int(prev, "at") == o->at)
                entry_set_exact(prev, true);
            entry_absorb(prev, o->reason, o->at, o->source);
            goto done;
        }
        if (obs_cmp(sa_jobdoc_int(prev, "at"), state_rank(get_str(prev, "state")), get_str(prev, "state"), o->at, rank,
                    o->base) != 0)
            break;
    }
    if (pos > 0 && !o->exact && !state_is_terminal(o->base) &&
        state_is_terminal(get_str(json_array_get(history, pos - 1), "state")))
        goto done;
    if (pos < n) {
        json_t *next = json_array_get(history, pos);
        if (entry_is_state(next, o->base, o->flags) && (!entry_exact(next) || state_is_terminal(o->base))) {
            /* seen in the following state earlier than we knew */
            entry_union_flags(next, o->flags);
            json_object_set_new(next, "at", json_integer(o->at));
            json_object_set_new(next, "source", json_string(o->source));
            entry_set_exact(next, o->exact);
            entry_absorb(next, o->reason, o->at, o->source);
            goto done;
        }
    }
    e = json_object();
    json_object_set_new(e, "state", json_string(o->base));
    if (o->flags)
        json_object_set(e, "flags", o->flags);
    json_object_set_new(e, "at", json_integer(o->at));
    json_object_set_new(e, "source", json_string(o->source));
    entry_set_exact(e, o->exact);
    entry_absorb(e, o->reason, o->at, o->source);
    json_array_insert_new(history, pos, e);
    if (state_is_terminal(o->base))
        drop_stale_after(history, pos);
done:
    json_decref(o->flags);
    o->flags = NULL;
}

/*
 * True if the record describes a run: it has a start time and was given nodes, or
 * is running. A job cancelled while pending has no nodes ("None assigned"), though
 * squeue and sacct may give it a start time equal to its end.
 */
static bool record_ran(const sa_job_t *rec)
{
    const char *base = rec->state.base;
    if (rec->start == SA_UNSET || !base || strcmp(base, "PENDING") == 0)
        return false;
    /* a flag printed alone (22.05 prints COMPLETING for a job being requeued, with its
     * start time reset to the requeue) says nothing about a run */
    if (!sa_job_base_is_known(base) && strcmp(base, "REQUEUED") != 0)
        return false;
    return rec->nodes != NULL || strcmp(base, "RUNNING") == 0 || rec->alloc.node > 0;
}

/*
 * Adds a record's observations to the history in time order (then lifecycle rank):
 * added in another order (a submit or start time after the snapshot, from clock
 * skew or a damaged record), one could be absorbed by an entry that a later one
 * replaces, and the record merged again would add it anew.
 */
static void history_add_sorted(json_t *history, obs_t *o, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && obs_cmp(o[j].at, state_rank(o[j].base), o[j].base, o[j - 1].at,
                                            state_rank(o[j - 1].base), o[j - 1].base) < 0; j--) {
            obs_t t = o[j];
            o[j] = o[j - 1];
            o[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++)
        history_add(history, &o[i]);
}

/* The observations one record makes: submit, start, end (exact), and the state at `at` (seen). */
/*
 * When a record saw its job in its state: the snapshot's time, or the record's own exact
 * time of entering that state (submit for PENDING, start for RUNNING) when that is later.
 * A snapshot's time is when the capture began, and its clock may be behind slurmctld's: a
 * job requeued during the capture is PENDING with a submit time a second after the
 * snapshot's. Seen earlier than it entered the state, the sighting would be a stay of its
 * own after the REQUEUED entry, and the exact PENDING a second one.
 */
static int64_t seen_at(const sa_job_t *rec, int64_t at)
{
    const char *base = rec->state.base;
    int64_t entered = SA_UNSET;

    if (base && strcmp(base, "PENDING") == 0)
        entered = rec->submit;
    else if (base && strcmp(base, "RUNNING") == 0 && record_ran(rec))
        entered = rec->start;
    return entered != SA_UNSET && entered > at ? entered : at;
}

static void history_add_record(json_t *history, const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    const char *src = sa_source_name(rec->source);
    const char *base = rec->state.base;
    bool final = sa_job_state_is_final(base);
    bool pending = base && strcmp(base, "PENDING") == 0;
    /* sacct's Reason is why the job last waited (slurmdbd keeps the reason it had before it
     * started, "None" when there was none): it belongs to the PENDING entry, never to the
     * state that followed (a COMPLETED job "reason BeginTime" would be stale). squeue's is
     * the job's reason now. */
    bool sacct = rec->source != SA_SRC_SQUEUE;
    const char *waited = sacct && rec->reason && strcmp(rec->reason, "None") != 0 ? rec->reason : NULL;
    const char *now_reason = sacct && !pending ? NULL : rec->reason;
    obs_t o[3];
    size_t n = 0;

    if (rec->submit != SA_UNSET)
        o[n++] = (obs_t){"PENDING", NULL, waited, rec->submit, true, src};
    if (record_ran(rec)) {
        /* a start after the end (clock skew, a damaged record) is taken as the end */
        int64_t start = final && rec->end != SA_UNSET && rec->start > rec->end ? rec->end : rec->start;
        o[n++] = (obs_t){"RUNNING", NULL, NULL, start, true, src};
    }
    if (base && !sa_job_base_is_known(base) && strcmp(base, "REQUEUED") != 0) {
        /* a flag printed alone (22.05's "COMPLETING" as a job ends or is requeued) says which
         * phase, not which state: the entry it would decorate (RUNNING, or the end that
         * follows) depends on which records came first, so it adds nothing more */
    } else if (final && record_end(rec) != SA_UNSET) {
        o[n++] = (obs_t){base, strv_json(&rec->state.flags), now_reason, record_end(rec), true, src};
    } else if (!final || rec->source == SA_SRC_SQUEUE) {
        o[n++] = (obs_t){base, strv_json(&rec->state.flags), now_reason, seen_at(rec, ctx->at), false, src};
    }
    history_add_sorted(history, o, n);
}

/* ---- runs -------------------------------------------------------------------------------- */

/* a = the larger of a and b (absent: SA_UNSET / < 0). */
static void max_int(int64_t *a, int64_t b)
{
    if (b != SA_UNSET && (*a == SA_UNSET || b > *a))
        *a = b;
}

/* a += b when b is present (a absent becomes b). */
static void add_int(int64_t *a, int64_t b)
{
    if (b != SA_UNSET)
        *a = *a == SA_UNSET ? b : *a + b;
}

static void add_real(double *a, double b)
{
    if (b >= 0)
        *a = *a < 0 ? b : *a + b;
}

/*
 * The usage of a run from its record: the allocation line's CPU times and energy when
 * it has them, else the sums over the steps; MaxRSS, AveRSS and GPU memory the largest
 * of any step (seff's memory figure); disk the sums. GPU utilisation per allocated GPU:
 * of every step that has one, its gres/gpuutil (summed over its tasks) divided by the
 * step's GPUs (the run's when the step's TRES lack them), capped at 100; the highest of
 * those, so a run is idle only when no step used its GPUs. Absent stays absent.
 */
static void run_stats(const sa_job_t *rec, sa_stats_t *u)
{
    sa_stats_t sum;
    int64_t run_gpus = rec->alloc.gpu_total > 0 ? rec->alloc.gpu_total : sa_gpus_total(&rec->gres_gpus);

    *u = rec->stats;
    sa_stats_init(&sum);
    for (size_t i = 0; i < rec->nsteps; i++) {
        const sa_stats_t *st = &rec->steps[i].stats;
        int64_t g = rec->steps[i].alloc.gpu_total > 0 ? rec->steps[i].alloc.gpu_total : run_gpus;
        add_real(&sum.cpu_s, st->cpu_s);
        add_real(&sum.user_cpu_s, st->user_cpu_s);
        add_real(&sum.system_cpu_s, st->system_cpu_s);
        add_int(&sum.energy_j, st->energy_j);
        max_int(&u->max_rss_bytes, st->max_rss_bytes);
        max_int(&u->ave_rss_bytes, st->ave_rss_bytes);
        max_int(&u->mem_total_bytes, st->mem_total_bytes);
        max_int(&u->gpu_mem_bytes, st->gpu_mem_bytes);
        add_int(&sum.disk_read_bytes, st->disk_read_bytes);
        add_int(&sum.disk_write_bytes, st->disk_write_bytes);
        if (st->gpu_util_pct >= 0) {
            double per = st->gpu_util_pct / (double)(g > 0 ? g : 1);
            if (per > 100)
                per = 100;
            if (per > u->gpu_util_pct)
                u->gpu_util_pct = per;
        }
    }
    if (u->cpu_s < 0)
        u->cpu_s = sum.cpu_s;
    if (u->user_cpu_s < 0)
        u->user_cpu_s = sum.user_cpu_s;
    if (u->system_cpu_s < 0)
        u->system_cpu_s = sum.system_cpu_s;
    if (u->energy_j == SA_UNSET)
        u->energy_j = sum.energy_j;
    if (u->disk_read_bytes == SA_UNSET)
        u->disk_read_bytes = sum.disk_read_bytes;
    if (u->disk_write_bytes == SA_UNSET)
        u->disk_write_bytes = sum.disk_write_bytes;
}

/*
 * Sets a run's gpu_type and gpu_type_source from its GPUs by type (the run's alloc JSON)
 * and what slurm-ingest found on its nodes: untyped GPUs take the nodes' type ("node",
 * "carried") or none ("unknown"); else a single typed type is the run's ("tres"), and
 * several leave gpu_type out ("tres": see gpus_by_type).
 */
static void set_run_gpu_type(json_t *r, const json_t *alloc, const sa_job_t *rec)
{
    const json_t *byt = json_object_get(alloc, "gpus_by_type"), *e;
    const char *single = NULL;
    int64_t untyped = 0;
    size_t i, ntyped = 0;
    int src;

    if (sa_jobdoc_int(alloc, "gpus") <= 0)
        return;
    json_array_foreach(byt, i, e) {
        const char *t = get_str(e, "type");
        if (!t || !*t)
            untyped += sa_jobdoc_int(e, "count") > 0 ? sa_jobdoc_int(e, "count") : 0;
        else if (sa_jobdoc_int(e, "count") > 0 && ++ntyped == 1)
            single = t;
    }
    if (untyped > 0 || ntyped == 0) {
        src = rec->run_gpu_type && (rec->run_gpu_type_source == SA_RUN_GPU_TYPE_NODE ||
                                    rec->run_gpu_type_source == SA_RUN_GPU_TYPE_CARRIED)
                  ? rec->run_gpu_type_source
                  : SA_RUN_GPU_TYPE_UNKNOWN;
        if (src != SA_RUN_GPU_TYPE_UNKNOWN)
            set_str(r, "gpu_type", rec->run_gpu_type);
    } else {
        src = SA_RUN_GPU_TYPE_TRES;
        if (ntyped == 1)
            set_str(r, "gpu_type", single);
    }
    json_object_set_new(r, "gpu_type_source", json_string(sa_run_gpu_type_source_name(src)));
}

static json_t *run_json(const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    json_t *r = json_object(), *alloc = tres_json(&rec->alloc, &rec->gres_gpus);
    merge_key_t k = record_key(rec, ctx);

    set_int(r, "start", rec->start);
    if (sa_job_state_is_final(rec->state.base))
        set_int(r, "end", record_end(rec));
    set_int(r, "submit", rec->submit);
    set_int(r, "eligible", rec->eligible);
    set_str(r, "state", rec->state.base);
    if (rec->state.flags.n)
        json_object_set_new(r, "flags", strv_json(&rec->state.flags));
    set_str(r, "nodes", rec->nodes);
    set_int(r, "node_count", rec->node_count);
    set_int(r, "cpus", sa_jobdoc_int(alloc, "cpus") != SA_UNSET ? sa_jobdoc_int(alloc, "cpus") : rec->cpus);
    set_int(r, "mem_mb", sa_jobdoc_int(alloc, "mem_mb"));
    json_object_set(r, "gpus", json_object_get(alloc, "gpus"));
    if (json_object_get(alloc, "gpus_by_type"))
        json_object_set(r, "gpus_by_type", json_object_get(alloc, "gpus_by_type"));
    /* the rest of the incarnation's AllocTRES and why it waited (sacct's Reason), as its own
     * record of sacct -D prints them: an earlier run's are not the job's current ones */
    if (json_object_get(alloc, "billing"))
        json_object_set(r, "billing", json_object_get(alloc, "billing"));
    if (json_object_get(alloc, "other"))
        json_object_set(r, "other", json_object_get(alloc, "other"));
    if (rec->source != SA_SRC_SQUEUE)
        set_str(r, "reason", rec->reason);
    set_run_gpu_type(r, alloc, rec);
    if (sa_job_state_is_final(rec->state.base)) {
        set_exit(r, "exit", rec->exit_code, rec->exit_signal, rec->exit_reliable);
        set_int(r, "elapsed_s", rec->elapsed);
    }
    /* like the elapsed time, the usage so far of a run or step that has not ended grows
     * with every poll (the job cache does not count it as a change): kept once it ended,
     * so the document does not depend on which poll's record was merged last */
    if (sa_job_state_is_final(rec->state.base)) {
        sa_stats_t u;
        json_t *uj;
        run_stats(rec, &u);
        if ((uj = sa_stats_to_json(&u)))
            json_object_set_new(r, "usage", uj);
    }
    json_object_set_new(r, "source", json_string(sa_source_name(rec->source)));
    json_object_set_new(r, "_key", json_pack("{s:I, s:I, s:I}", "final", (json_int_t)k.final, "sacct",
                                             (json_int_t)k.sacct, "at", (json_int_t)k.at));
    if (rec->nsteps) {
        json_t *steps = json_array();
        for (size_t i = 0; i < rec->nsteps; i++) {
            const sa_step_t *st = &rec->steps[i];
            json_t *s = json_object();
            set_str(s, "id", st->id);
            set_str(s, "name", st->name);
            set_str(s, "state", st->state.base);
            if (st->state.flags.n)
                json_object_set_new(s, "flags", strv_json(&st->state.flags));
            set_int(s, "start", st->start);
            set_int(s, "end", st->end);
            bool ended = st->end != SA_UNSET || sa_job_state_is_final(st->state.base);
            if (ended)
                set_int(s, "elapsed_s", st->elapsed);
            set_exit(s, "exit", st->exit_code, st->exit_signal, rec->exit_reliable);
            set_str(s, "nodes", st->nodes);
            if (!sa_tres_is_empty(&st->alloc))
                json_object_set_new(s, "alloc", tres_json(&st->alloc, NULL));
            if (ended && !sa_stats_is_empty(&st->stats))
                json_object_set_new(s, "usage", sa_stats_to_json(&st->stats));
            json_array_append_new(steps, s);
        }
        json_object_set_new(r, "steps", steps);
    }
    json_decref(alloc);
    return r;
}

/* -1/0/1 comparing two run keys {final, sacct, at}. */
static int run_key_cmp(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"final", "sacct", "at"};
    for (int i = 0; i < 3; i++) {
        int64_t x = sa_jobdoc_int(a, keys[i]), y = sa_jobdoc_int(b, keys[i]);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

/*
 * Fills in what the better observation of a run lacks from the other one: steps, usage, and a
 * reliable exit code (either may be the stored one, so that the result does not depend
 * on which arrived first).
 */
static void run_fill(json_t *better, const json_t *other)
{
    const char *bs = get_str(better, "gpu_type_source"), *os = get_str(other, "gpu_type_source");

    /* the nodes' type of untyped GPUs, when one observation found it and the other not */
    if (bs && os && strcmp(bs, "unknown") == 0 && (strcmp(os, "node") == 0 || strcmp(os, "carried") == 0) &&
        json_object_get(other, "gpu_type")) {
        json_object_set(better, "gpu_type", json_object_get(other, "gpu_type"));
        json_object_set(better, "gpu_type_source", json_object_get(other, "gpu_type_source"));
    }
    /* sacct's Reason, billing and other TRES of the run when the better one (squeue's) lacks them */
    for (const char *const *k = (const char *const[]){"reason", "billing", "other", NULL}; *k; k++) {
        if (!json_object_get(better, *k) && json_object_get(other, *k))
            json_object_set(better, *k, json_object_get(other, *k));
    }
    if (!json_object_get(better, "steps") && json_object_get(other, "steps"))
        json_object_set(better, "steps", json_object_get(other, "steps"));
    if (!json_object_get(better, "usage") && json_object_get(other, "usage"))
        json_object_set(better, "usage", json_object_get(other, "usage"));
    /* what slurm-ingest's Prometheus import added: no Slurm record carries it */
    if (!json_object_get(better, "prom") && json_object_get(other, "prom"))
        json_object_set(better, "prom", json_object_get(other, "prom"));
    if (json_is_true(json_object_get(json_object_get(other, "exit"), "reliable")) &&
        !json_is_true(json_object_get(json_object_get(better, "exit"), "reliable")))
        json_object_set(better, "exit", json_object_get(other, "exit"));
}

/* True if two runs are equal but for their rank (_key). */
static bool run_same(const json_t *x, const json_t *y)
{
    json_t *a = json_copy((json_t *)x), *b = json_copy((json_t *)y);
    bool eq;
    json_object_del(a, "_key");
    json_object_del(b, "_key");
    eq = json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return eq;
}

/*
 * Adds or improves the run that started at rec->start: the observation of the greater
 * rank (final, sacct, at) wins, filled in from the other (run_fill); the same run seen
 * again later keeps the stored one (and its rank), so a steady poll changes nothing.
 */
static void runs_add(json_t *runs, const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    size_t n = json_array_size(runs), pos = 0;
    json_t *run, *old;

    if (!record_ran(rec))
        return;
    while (pos < n && sa_jobdoc_int(json_array_get(runs, pos), "start") < rec->start)
        pos++;
    run = run_json(rec, ctx);
    if (pos == n || sa_jobdoc_int(json_array_get(runs, pos), "start") != rec->start) {
        json_array_insert_new(runs, pos, run);
        return;
    }
    old = json_array_get(runs, pos);
    if (run_key_cmp(json_object_get(run, "_key"), json_object_get(old, "_key")) > 0) {
        run_fill(run, old);
        if (!run_same(run, old))
            json_array_set(runs, pos, run);
    } else {
        json_t *filled = json_deep_copy(old);
        run_fill(filled, run);
        if (!run_same(filled, old))
            json_array_set(runs, pos, filled);
        json_decref(filled);
    }
    json_decref(run);
}

/* ---- reuse -------------------------------------------------------------------------------- */

/*
 * True if rec is a different job than the one doc describes: submitted after it, not
 * in a requeue state, and either with a restart count of 0 (Slurm counts every
 * requeue, so a fresh job submitted later is another job, whether or not the stored
 * one was seen to end) or after the stored job ended in a final state that is not a
 * requeue, without a higher restart count that would make it a requeue of it.
 */
static bool is_reuse(const json_t *doc, const sa_job_t *rec)
{
    const char *state = get_str(doc, "state");
    int64_t end = sa_jobdoc_int(doc, "end"), submit = sa_jobdoc_int(doc, "submit");
    int64_t restarts = sa_jobdoc_int(doc, "restart_cnt");
    const json_t *flags = json_object_get(doc, "state_flags");
    size_t i;
    json_t *f;

    if (rec->submit == SA_UNSET || submit == SA_UNSET || rec->submit <= submit || state_is_requeue(&rec->state))
        return false;
    if (rec->restart_cnt == 0)
        return true;
    if (!sa_job_state_is_final(state) || strcmp(state, "REQUEUED") == 0)
        return false;
    json_array_foreach(flags, i, f) {
        if (json_is_string(f) && strncmp(json_string_value(f), "REQUEUE", 7) == 0)
            return false;
    }
    if (end != SA_UNSET && rec->submit < end)
        return false;
    if (rec->restart_cnt != SA_UNSET && restarts != SA_UNSET && rec->restart_cnt > restarts)
        return false;
    return true;
}

/*
 * True if rec describes an earlier job that had this id: submitted before doc's job and
 * not in a requeue state, and either doc's job was never requeued (its restart count is
 * 0 and it was seen with one submit time only, so nothing submitted earlier is part of
 * it) or rec ended before doc's job was
 * submitted and doc's history does not reach back to rec's submission.
 */
static bool is_stale_incarnation(const json_t *doc, const sa_job_t *rec)
{
    int64_t submit = sa_jobdoc_int(doc, "submit");
    if (rec->submit == SA_UNSET || submit == SA_UNSET || rec->submit >= submit || state_is_requeue(&rec->state))
        return false;
    if (sa_jobdoc_int(doc, "restart_cnt") == 0 && sa_jobdoc_int(doc, "submit_first") == submit)
        return true;
    if (!sa_job_state_is_final(rec->state.base))
        return false;
    /* an older run of the same (requeued) job is not stale: it ended where a later run began */
    if (json_array_size(json_object_get(doc, "history")) > 0) {
        const json_t *first = json_array_get(json_object_get(doc, "history"), 0);
        if (sa_jobdoc_int(first, "at") <= rec->submit)
            return false;
    }
    return record_end(rec) != SA_UNSET && record_end(rec) <= submit;
}

/* ---- the merge ------------------------------------------------------------------------------- */

/*
 * Members of "extra" that Slurm's scheduler rewrites on every cycle without the job
 * changing (priority, last evaluation, planned nodes). With expected_start and
 * expected_end they are "volatile": kept in the document, refreshed only when the job
 * changes otherwise, and left out of the change test (sa_job_digest), so that a poll
 * writes state changes, not scheduler churn.
 */
const char *const sa_jobdoc_volatile_extra[] = {"priority", "priority_by_partition", "last_sched_evaluation",
                                                "last_backfill_evaluation", "scheduled_nodes", "preemptable_time",
                                                "expected_start",
                                                NULL};
static const char *const volatile_fields[] = {"expected_start", "expected_end", NULL};

/*
 * A shallow copy of doc without the values of its volatile members (new reference):
 * whether a pending job has a start forecast at all stays (a forecast that appears or
 * goes is a change, as in sa_job_digest; a forecast that moves is not).
 */
static json_t *without_volatile(const json_t *doc)
{
    json_t *c = json_copy((json_t *)doc), *extra = json_object_get(c, "extra");
    bool forecast = json_object_get(c, "expected_start") != NULL;
    for (const char *const *v = volatile_fields; *v; v++)
        json_object_del(c, *v);
    if (forecast)
        json_object_set_new(c, "expected_start", json_true());
    if (json_is_object(extra)) {
        json_t *e = json_copy(extra);
        for (const char *const *v = sa_jobdoc_volatile_extra; *v; v++)
            json_object_del(e, *v);
        json_object_set_new(c, "extra", e);
    }
    return c;
}

/* True if a and b differ at most in volatile members. */
static bool equal_but_volatile(const json_t *a, const json_t *b)
{
    json_t *x, *y;
    bool eq;
    if (json_equal((json_t *)a, (json_t *)b))
        return true;
    x = without_volatile(a);
    y = without_volatile(b);
    eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/*
 * Fields taken over all records rather than from the newest: restart_cnt is the largest
 * restart count any record gave (sacct text has none), and at least the number of runs
 * minus one; submit_first is the earliest submit time seen (a requeue resets Slurm's).
 */
static void merge_counts(json_t *doc, const sa_job_t *rec)
{
    int64_t restarts = sa_jobdoc_int(doc, "restart_cnt"), first = sa_jobdoc_int(doc, "submit_first");
    int64_t runs = (int64_t)json_array_size(json_object_get(doc, "runs"));

    if (rec->restart_cnt != SA_UNSET && (restarts == SA_UNSET || rec->restart_cnt > restarts))
        restarts = rec->restart_cnt;
    if (runs > 1 && (restarts == SA_UNSET || runs - 1 > restarts))
        restarts = runs - 1;
    if (restarts != SA_UNSET)
        json_object_set_new(doc, "restart_cnt", json_integer(restarts));
    if (rec->submit != SA_UNSET && (first == SA_UNSET || rec->submit < first))
        json_object_set_new(doc, "submit_first", json_integer(rec->submit));
}

char *sa_jobdoc_id(const char *cluster, int64_t job_id)
{
    char *id = NULL;
    if (asprintf(&id, "%s:%lld", cluster, (long long)job_id) < 0)
        return NULL;
    return id;
}

char *sa_jobdoc_superseded_id(const char *cluster, int64_t job_id, int64_t submit)
{
    char *id = NULL;
    if (asprintf(&id, "%s:%lld:%lld", cluster, (long long)job_id, (long long)(submit == SA_UNSET ? 0 : submit)) < 0)
        return NULL;
    return id;
}

/*
 * squeue's record of a pending job that ranks below the stored observation (sacct's record
 * of the same poll outranks squeue's, and sacct lists a pending job every poll) still gives
 * the job's start forecast, which only squeue knows, when the document has none: a record
 * of the document's incarnation (same submit) while the document says PENDING. A forecast
 * the document has is refreshed with the job's next real change (volatile, above).
 */
static void merge_forecast(json_t *doc, const sa_job_t *rec)
{
    const char *state = get_str(doc, "state");
    int64_t forecast = sa_job_forecast(rec);
    if (forecast == SA_UNSET || rec->submit == SA_UNSET || !state || strcmp(state, "PENDING") != 0 ||
        sa_jobdoc_int(doc, "submit") != rec->submit || json_object_get(doc, "expected_start"))
        return;
    set_int(doc, "expected_start", forecast);
}

int64_t sa_job_forecast(const sa_job_t *rec)
{
    const json_t *v = rec->extra ? json_object_get(rec->extra, "expected_start") : NULL;
    if (rec->source != SA_SRC_SQUEUE || !rec->state.base || strcmp(rec->state.base, "PENDING") != 0 ||
        !json_is_integer(v))
        return SA_UNSET;
    return (int64_t)json_integer_value(v);
}

static json_t *new_doc(const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    json_t *doc = json_object();
    char *id = sa_jobdoc_id(ctx->cluster, rec->job_id);
    json_object_set_new(doc, "_id", json_string(id));
    free(id);
    json_object_set_new(doc, "cluster", json_string(ctx->cluster));
    json_object_set_new(doc, "job_id", json_integer(rec->job_id));
    json_object_set_new(doc, "history", json_array());
    json_object_set_new(doc, "runs", json_array());
    json_object_set_new(doc, "seen", json_pack("{s:I, s:I}", "first", (json_int_t)ctx->at, "last", (json_int_t)ctx->at));
    return doc;
}

/* The current fields of doc as canonical text (sorted keys); caller frees. */
static char *current_text(const json_t *doc)
{
    json_t *o = json_object();
    char *s;

    for (const char *const *k = current_keys; *k; k++) {
        json_t *v = json_object_get(doc, *k);
        if (v)
            json_object_set(o, *k, v);
    }
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return s;
}

/*
 * Two observations of equal rank (two records of one capture with the same submit
 * and start): the one whose current fields, as canonical text, sort last wins, so
 * that the result does not depend on which arrived first (only those fields are
 * compared: the rest of the document changes as records arrive). Replaces *merged
 * and returns true when rec wins.
 */
static bool tie_wins(json_t **merged, const sa_job_t *rec, const sa_obs_ctx_t *ctx)
{
    json_t *cand = json_deep_copy(*merged);
    char *a, *b;
    bool wins;

    set_current_fields(cand, rec, ctx);
    a = current_text(cand);
    b = current_text(*merged);
    wins = a && b && strcmp(a, b) > 0;
    free(a);
    free(b);
    if (wins) {
        json_decref(*merged);
        *merged = cand;
    } else {
        json_decref(cand);
    }
    return wins;
}

bool sa_jobdoc_merge(json_t **doc, const sa_job_t *rec, const sa_obs_ctx_t *ctx, sa_merge_kind_t *kind,
                     json_t **superseded, sa_error_t *error)
{
    json_t *merged;
    merge_key_t key = record_key(rec, ctx), old_key;

    *superseded = NULL;
    *kind = SA_MERGE_UNCHANGED;
    if (rec->job_id == SA_UNSET || !ctx->cluster) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job record without job id or cluster");
        return false;
    }
    if (*doc && is_reuse(*doc, rec)) {
        char *sid = sa_jobdoc_superseded_id(ctx->cluster, rec->job_id, sa_jobdoc_int(*doc, "submit"));
        *superseded = *doc;
        json_object_del(*superseded, "_v");
        json_object_set_new(*superseded, "_id", json_string(sid));
        free(sid);
        *doc = NULL;
        *kind = SA_MERGE_REUSED;
    } else if (*doc && is_stale_incarnation(*doc, rec)) {
        *kind = SA_MERGE_STALE;
        return true;
    }
    merged = *doc ? json_deep_copy(*doc) : new_doc(rec, ctx);
    if (!merged) {
        sa_error_nomem(error);
        return false;
    }
    if (!json_is_array(json_object_get(merged, "history")))
        json_object_set_new(merged, "history", json_array());
    if (!json_is_array(json_object_get(merged, "runs")))
        json_object_set_new(merged, "runs", json_array());

    old_key = key_from_json(json_object_get(merged, "_merge"));
    if (!*doc) {
        set_current_fields(merged, rec, ctx);
        json_object_set_new(merged, "_merge", key_json(&key));
    } else if (key_cmp(&key, &old_key) > 0) {
        /* a newer observation; its rank is stored only if it changes something, so a
         * steady poll (same fields, later time) writes nothing */
        json_t *before = json_deep_copy(merged);
        set_current_fields(merged, rec, ctx);
        if (equal_but_volatile(before, merged)) {
            /* only forecasts and scheduler churn moved: keep the document as it was */
            json_decref(merged);
            merged = before;
        } else {
            json_object_set_new(merged, "_merge", key_json(&key));
            json_decref(before);
        }
    } else if (key_cmp(&key, &old_key) < 0 || !tie_wins(&merged, rec, ctx)) {
        merge_forecast(merged, rec);
    }
    merge_job_exit(merged, "exit", rec->exit_code, rec->exit_signal, rec, ctx);
    merge_job_exit(merged, "derived_exit", rec->derived_exit_code, rec->derived_exit_signal, rec, ctx);
    history_add_record(json_object_get(merged, "history"), rec, ctx);
    if (rec->source == SA_SRC_SQUEUE)
        json_object_del(merged, "vanished_at"); /* listed again */
    runs_add(json_object_get(merged, "runs"), rec, ctx);
    merge_counts(merged, rec);
    {
        json_t *seen = json_object_get(merged, "seen");
        int64_t first = sa_jobdoc_int(seen, "first");
        if (first == SA_UNSET || ctx->at < first)
            json_object_set_new(seen, "first", json_integer(ctx->at));
    }
    if (!*doc) {
        if (*kind != SA_MERGE_REUSED)
            *kind = SA_MERGE_NEW;
    } else if (!json_equal(merged, *doc)) {
        *kind = SA_MERGE_CHANGED;
    }
    if (*kind != SA_MERGE_UNCHANGED) {
        /* seen.last moves with every write, not on a steady poll (that would rewrite every job) */
        json_t *seen = json_object_get(merged, "seen");
        if (sa_jobdoc_int(seen, "last") == SA_UNSET || ctx->at > sa_jobdoc_int(seen, "last"))
            json_object_set_new(seen, "last", json_integer(ctx->at));
        /* a job squeue no longer lists stays marked until squeue lists it again or it
         * ends (sacct's final record); sacct calling it RUNNING does not clear it */
        if (sa_job_state_is_final(get_str(merged, "state")))
            json_object_del(merged, "vanished_at");
    }
    json_decref(*doc);
    *doc = merged;
    return true;
}

bool sa_jobdoc_is_time_key(const char *key)
{
    static const char *const keys[] = {"submit", "eligible", "start", "end", "at", "first", "last",
                                       "vanished_at", "_reason_at", "started_at", "expected_start", "expected_end",
                                       "submit_first", "finished_at", "last_squeue_at",
                                       "last_sinfo_at", "last_sacct_at", "sacct_watermark", "last_success_at",
                                       "read_at", "prom_watermark", NULL};
    for (const char *const *k = keys; *k; k++) {
        if (strcmp(key, *k) == 0)
            return true;
    }
    return false;
}
