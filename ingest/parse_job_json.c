/*
 * parse_job_json.c - one element of the "jobs" array of squeue --json (also
 * scontrol show job --json, restd /slurm/vX/jobs) or sacct --json (restd
 * /slurmdb/vX/jobs) -> one sa_job_t, for every format from openapi v0.0.37
 * (21.08) to data_parser v0.0.44 (25.11): the fields of each version are those of the REST API
 * reference of Slurm's documentation (slurm.schedmd.com/rest_api.html), the encodings of a
 * value those sa_json.h reads.
 *
 * The shape is decided per FIELD, never per file or per record: a hand-merged
 * array may mix v0.0.37 and v0.0.39 records, and within one v0.0.40 sacct record
 * the job's time.start is an int while a step's is a {set,infinite,number}.
 * The getters of sa_json.h accept every encoding of a scalar.
 *
 * Decisions taken here (a reader of the archive should know them):
 * - squeue, PENDING jobs: start_time / end_time are the scheduler's EXPECTED times,
 *   not facts. They are stored as SA_UNSET; the expected start (when Slurm gave one)
 *   is kept in extra "expected_start" (epoch seconds; the job document holds it as the
 *   date expected_start: sa_jobdoc.c). The raw end is dropped (it is
 *   start + time limit).
 * - squeue, string job_state (v0.0.37..39) prints ONE word and a flag wins over the
 *   base ("REQUEUED", "CONFIGURING", "COMPLETING"). When the word is a flag whose
 *   base is implied (REQUEUED/REQUEUE_HOLD/SPECIAL_EXIT/REQUEUE_FED/RESV_DEL_HOLD ->
 *   PENDING; CONFIGURING/RESIZING/SIGNALING/STOPPED/POWER_UP_NODE -> RUNNING) the
 *   word becomes a flag and the implied word the base. COMPLETING and STAGE_OUT
 *   (and other flags without an implied base) follow a job that ENDED, but which
 *   terminal state (COMPLETED, FAILED, CANCELLED, TIMEOUT...) is not printed: the
 *   word is then kept as the base, as Slurm printed it.
 *   sacct states are taken as printed (REQUEUED is sacct's base for a requeued
 *   instance).
 * - squeue GPUs: gres_detail (one GRES string per allocated node) is summed by type
 *   into gres_gpus. When tres_req_str has no GPUs (clusters that do not account
 *   GPUs), the request is derived into req.gpus from exactly ONE GPU-bearing
 *   tres_per_* field: tres_per_job as is, tres_per_node x node_count, tres_per_task
 *   x tasks. Several GPU-bearing fields, or an unknown multiplier, are ambiguous and
 *   nothing is derived. The raw tres_per_* strings stay in extra either way.
 * - sacct elapsed of a job (or step) that never started is SA_UNSET, not 0.
 * - sacct cpus / node_count: allocated (tres.allocated) when known, else requested
 *   (required.CPUs, tres.requested node).
 * - sacct array.task (pending meta-record): the raw database bitmap; a hex mask
 *   ("0x1FE") is turned into task ranges ("1-8") and the raw text kept in extra
 *   "array_task_raw"; anything else is kept as printed.
 * - Exit codes of sacct <= v0.0.39 ({status:"SUCCESS",return_code:0} for every job
 *   that exited) are decoded but flagged exit_reliable = false; steps share the
 *   job's reliability.
 * - Sub-objects we model in part (sacct time, array, required, reservation, wckey,
 *   step.step, step.time...) keep their unmodelled members in extra under the same
 *   key, so nothing Slurm printed is lost; squeue job_resources is the one key
 *   dropped on purpose (per-core detail, ~20 KB per job).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_json.h"
#include "sa_parse.h"
#include "sa_hostlist.h"
#include "sa_tres.h"

/* Largest integer a double (and so a Mongo/JS reader) holds exactly. */
#define SA_MAX_SAFE_INT (INT64_C(1) << 53)

/* Slurm's special step ids (slurm.h), printed as words. */
#define STEP_INTERACTIVE 0xfffffffaLL
#define STEP_BATCH 0xfffffffbLL
#define STEP_EXTERN 0xfffffffcLL
#define STEP_PENDING 0xfffffffdLL

/* Longest sacct array.task hex mask we decode (bits = 4 x digits). */
#define HEXMASK_MAX_DIGITS 16384

/* ---- small helpers --------------------------------------------------------- */

/* Prepends "what: " to the error message (the field path); returns false. */
static bool err_in(sa_error_t *error, const char *what)
{
    sa_error_prefix(error, "%s", what);
    return false;
}

/* Reads a string member into *dst, freeing what *dst held. NULL for absent / null / "". */
static bool get_str(const json_t *o, const char *key, char **dst, sa_error_t *error)
{
    char *s = NULL;

    if (!sa_json_get_str(o, key, &s, error))
        return false;
    free(*dst);
    *dst = s;
    return true;
}

/*
 * Reads a count or an id (any encoding). INFINITE has no meaning for these and reads
 * as SA_UNSET; with zero_unset, 0 ("none", e.g. array_job_id of a plain job) too.
 * Negative values and values beyond 2^53 are errors.
 */
static bool get_count(const json_t *o, const char *key, bool zero_unset, int64_t *out, sa_error_t *error)
{
    if (!sa_json_get_int(o, key, out, error))
        return false;
    if (*out == SA_INFINITE || (zero_unset && *out == 0))
        *out = SA_UNSET;
    if (*out != SA_UNSET && (*out < 0 || *out > SA_MAX_SAFE_INT)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: %" PRId64 " out of range", key, *out);
        return false;
    }
    return true;
}

/*
 * Reads a time limit in minutes: a number, {set,infinite,number}, "Infinity", or raw
 * sentinels. null_infinite: JSON null means UNLIMITED (squeue v0.0.37/38 print the
 * INFINITE limit as null).
 */
static bool get_limit(const json_t *o, const char *key, bool null_infinite, int64_t *out, sa_error_t *error)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;

    if (v && json_is_null(v) && null_infinite) {
        *out = SA_INFINITE;
        return true;
    }
    if (!sa_json_get_int(o, key, out, error))
        return false;
    if (*out != SA_UNSET && *out != SA_INFINITE && (*out < 0 || *out > SA_MAX_SAFE_INT)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: %" PRId64 " minutes out of range", key, *out);
        return false;
    }
    return true;
}

/* True when s is absent or one of Slurm's "no nodes" spellings. */
static bool no_nodes(const char *s)
{
    return !s || !*s || strcmp(s, "None assigned") == 0 || strcmp(s, "(null)") == 0;
}

/*
 * Reads a hostlist expression member into *dst ("None assigned" -> NULL) and checks
 * it expands; *count (may be NULL) gets the number of hosts, 0 when none.
 */
static bool get_nodes(const json_t *o, const char *key, char **dst, int64_t *count, sa_error_t *error)
{
    sa_strv_t names;
    bool ok;

    if (count)
        *count = 0;
    if (!get_str(o, key, dst, error))
        return false;
    if (no_nodes(*dst)) {
        free(*dst);
        *dst = NULL;
        return true;
    }
    sa_strv_init(&names);
    ok = sa_hostlist_expand(*dst, 0, &names, error);
    if (ok && count)
        *count = (int64_t)names.n;
    sa_strv_clear(&names);
    return ok ? true : err_in(error, key);
}

/* Reads an exit code member (any form) into rc/sig; absent -> -1/-1. */
static bool get_exit(const json_t *o, const char *key, int *rc, int *sig, bool *reliable, sa_error_t *error)
{
    return sa_json_exit_code(o ? json_object_get(o, key) : NULL, rc, sig, reliable, key, error);
}

/* Adds a member to *extra (created on demand); steals value. */
static bool extra_set(json_t **extra, const char *key, json_t *value, sa_error_t *error)
{
    if (!value)
        return sa_error_nomem(error);
    if (!*extra && !(*extra = json_object())) {
        json_decref(value);
        return sa_error_nomem(error);
    }
    if (json_object_set_new(*extra, key, value) != 0)
        return sa_error_nomem(error);
    return true;
}

/*
 * Keeps the members of sub-object o (found under key) that are not in known: they go
 * to extra[key]. Nothing happens when o is not an object or every member is known.
 */
static bool extra_sub(json_t **extra, const char *key, const json_t *o, const char *const *known,
                      sa_error_t *error)
{
    json_t *rest;

    if (!o || !json_is_object(o))
        return true;
    rest = sa_json_extra(o, known);
    if (!rest)
        return true;
    return extra_set(extra, key, rest, error);
}

/* Merges the unknown top-level members of elem into *extra. */
static bool extra_top(json_t **extra, const json_t *elem, const char *const *known, sa_error_t *error)
{
    json_t *rest = sa_json_extra(elem, known);

    if (!rest)
        return true;
    if (!*extra) {
        *extra = rest;
        return true;
    }
    if (json_object_update(*extra, rest) != 0) {
        json_decref(rest);
        return sa_error_nomem(error);
    }
    json_decref(rest);
    return true;
}

/* ---- job id and display id ------------------------------------------------------ */

/* Reads the mandatory raw job id: an integer in 1..2^53. */
static bool read_job_id(const json_t *elem, int64_t *out, sa_error_t *error)
{
    const json_t *v;

    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job record is %s, expected an object", sa_json_type_name(elem));
        return false;
    }
    v = json_object_get(elem, "job_id");
    if (!v) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job record without job_id");
        return false;
    }
    if (!json_is_integer(v)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job record without job_id (job_id is %s)", sa_json_type_name(v));
        return false;
    }
    *out = (int64_t)json_integer_value(v);
    if (*out <= 0 || *out > SA_JOB_ID_MAX) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job_id: %" PRId64 " out of range (1..2^53)", *out);
        return false;
    }
    return true;
}

/*
 * Builds the display id the way Slurm prints it: "123+1" (het component),
 * "123_4" (array task), "123_[1-10%3]" (pending array meta-record), "123".
 */
static bool set_display_id(sa_job_t *job, sa_error_t *error)
{
    char *s;
    size_t n;

    if (job->het_job_id != SA_UNSET && job->het_job_offset != SA_UNSET) {
        n = 48;
        if ((s = malloc(n)))
            snprintf(s, n, "%" PRId64 "+%" PRId64, job->het_job_id, job->het_job_offset);
    } else if (job->array_job_id != SA_UNSET && job->array_task_id != SA_UNSET) {
        n = 48;
        if ((s = malloc(n)))
            snprintf(s, n, "%" PRId64 "_%" PRId64, job->array_job_id, job->array_task_id);
    } else if (job->array_job_id != SA_UNSET && job->array_task_string) {
        bool add_max = job->array_max_tasks != SA_UNSET && !strchr(job->array_task_string, '%');
        n = strlen(job->array_task_string) + 64;
        if ((s = malloc(n))) {
            if (add_max)
                snprintf(s, n, "%" PRId64 "_[%s%%%" PRId64 "]", job->array_job_id, job->array_task_string,
                         job->array_max_tasks);
            else
                snprintf(s, n, "%" PRId64 "_[%s]", job->array_job_id, job->array_task_string);
        }
    } else {
        n = 24;
        if ((s = malloc(n)))
            snprintf(s, n, "%" PRId64, job->job_id);
    }
    if (!s)
        return sa_error_nomem(error);
    free(job->job_id_display);
    job->job_id_display = s;
    return true;
}

/* Makes array and het fields consistent: no task id without an array job, no
 * offset without a het leader. */
static void tidy_array_het(sa_job_t *job)
{
    if (job->array_job_id == SA_UNSET) {
        job->array_task_id = SA_UNSET;
        job->array_max_tasks = SA_UNSET;
        free(job->array_task_string);
        job->array_task_string = NULL;
    }
    if (job->het_job_id == SA_UNSET)
        job->het_job_offset = SA_UNSET;
}

/* ---- job state --------------------------------------------------------------------- */

/* Job state flags and the base they imply (NULL: the base is not implied). */
static const struct {
    const char *flag;
    const char *base;
} job_flags[] = {
    {"REQUEUED", "PENDING"},      {"REQUEUE_HOLD", "PENDING"}, {"SPECIAL_EXIT", "PENDING"},
    {"REQUEUE_FED", "PENDING"},   {"RESV_DEL_HOLD", "PENDING"}, {"CONFIGURING", "RUNNING"},
    {"RESIZING", "RUNNING"},      {"SIGNALING", "RUNNING"},     {"STOPPED", "RUNNING"},
    {"POWER_UP_NODE", "RUNNING"}, {"COMPLETING", NULL},         {"STAGE_OUT", NULL},
    {"LAUNCH_FAILED", NULL},      {"RECONFIG_FAIL", NULL},      {"REVOKED", NULL},
    {"UPDATE_DB", NULL},          {"EXPEDITING", NULL},
};

/* Finds a job flag word: true when word is one, with *implied its implied base (or NULL). */
static bool job_flag_lookup(const char *word, const char **implied)
{
    for (size_t i = 0; i < sizeof job_flags / sizeof job_flags[0]; i++) {
        if (strcmp(job_flags[i].flag, word) == 0) {
            *implied = job_flags[i].base;
            return true;
        }
    }
    return false;
}

bool sa_job_state_word_known(const char *word)
{
    const char *implied;
    return word && (sa_job_base_is_known(word) || job_flag_lookup(word, &implied));
}

/*
 * squeue only: when the base word is really a flag (string job_state prints the flag
 * instead of the base), takes the base from a base word among the flags, else from
 * the flag's implied base; without either the word stays the base (see top comment).
 */
static bool squeue_state_fixup(sa_state_t *st, sa_error_t *error)
{
    const char *implied = NULL;
    const char *newbase = NULL;
    sa_strv_t flags;
    char *base;

    if (!st->base || !job_flag_lookup(st->base, &implied))
        return true;
    for (size_t i = 0; i < st->flags.n && !newbase; i++) {
        const char *dummy;
        if (sa_job_base_is_known(st->flags.v[i]) && !job_flag_lookup(st->flags.v[i], &dummy))
            newbase = st->flags.v[i];
    }
    if (!newbase)
        newbase = implied;
    if (!newbase)
        return true;
    if (!(base = strdup(newbase)))
        return sa_error_nomem(error);
    /* rebuild the flags: the old base word in, the new base word out */
    sa_strv_init(&flags);
    for (size_t i = 0; i < st->flags.n; i++) {
        if (strcmp(st->flags.v[i], newbase) != 0 && !sa_strv_add_sorted_unique(&flags, st->flags.v[i]))
            goto fail;
    }
    if (!sa_strv_add_sorted_unique(&flags, st->base))
        goto fail;
    sa_strv_clear(&st->flags);
    st->flags = flags;
    free(st->base);
    st->base = base;
    return true;
fail:
    sa_strv_clear(&flags);
    free(base);
    return sa_error_nomem(error);
}

/* ---- GPUs -------------------------------------------------------------------------- */

/* Sums the per-node GRES strings of squeue's gres_detail into *out. */
static bool gres_detail_gpus(const json_t *elem, sa_gpus_t *out, sa_error_t *error)
{
    json_t *arr, *item;
    size_t i;
    char where[48];

    if (!sa_json_get_arr(elem, "gres_detail", &arr, error))
        return false;
    if (!arr)
        return true;
    json_array_foreach(arr, i, item) {
        snprintf(where, sizeof where, "gres_detail[%zu]", i);
        if (json_is_null(item))
            continue;
        if (!json_is_string(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a string, got %s", where, sa_json_type_name(item));
            return false;
        }
        if (!sa_gres_parse_gpus(json_string_value(item), false, out, error))
            return err_in(error, where);
    }
    return true;
}

/*
 * Derives the requested GPUs from tres_per_job / tres_per_node / tres_per_task into
 * job->req when tres_req_str gave none (see the top comment for the rule).
 * Needs job->node_count and the element's "tasks".
 */
static bool derive_gpu_request(const json_t *elem, sa_job_t *job, sa_error_t *error)
{
    static const char *const keys[] = {"tres_per_job", "tres_per_node", "tres_per_task"};
    sa_gpus_t found, scaled;
    int64_t mult = SA_UNSET, tasks;
    int nfound = 0;
    bool ok = false;

    sa_gpus_init(&found);
    sa_gpus_init(&scaled);
    if (job->req.gpu_total > 0 || job->req.gpus.n > 0)
        return true;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        sa_gpus_t g;
        char *s = NULL;

        if (!sa_json_get_str(elem, keys[k], &s, error))
            goto done;
        if (!s)
            continue;
        sa_gpus_init(&g);
        if (!sa_gres_parse_gpus(s, true, &g, error)) {
            free(s);
            sa_gpus_clear(&g);
            err_in(error, keys[k]);
            goto done;
        }
        free(s);
        if (sa_gpus_total(&g) <= 0) {
            sa_gpus_clear(&g);
            continue;
        }
        nfound++;
        sa_gpus_clear(&found);
        found = g;
        if (k == 0) {
            mult = 1;
        } else if (k == 1) {
            mult = job->node_count;
        } else {
            if (!get_count(elem, "tasks", false, &tasks, error))
                goto done;
            mult = tasks;
        }
    }
    if (nfound != 1 || mult == SA_UNSET || mult <= 0) {
        ok = true; /* nothing, or ambiguous */
        goto done;
    }
    for (size_t i = 0; i < found.n; i++) {
        int64_t c;
        if (__builtin_mul_overflow(found.v[i].count, mult, &c) || c > SA_MAX_SAFE_INT) {
            sa_error_set(error, SA_ERR_INPUT, 0, "GPU request %" PRId64 " x %" PRId64 " out of range",
                         found.v[i].count, mult);
            goto done;
        }
        if (!sa_gpus_add(&scaled, found.v[i].type, c)) {
            sa_error_nomem(error);
            goto done;
        }
    }
    sa_gpus_clear(&job->req.gpus);
    job->req.gpus = scaled;
    sa_gpus_init(&scaled);
    job->req.gpu_total = sa_gpus_total(&job->req.gpus);
    ok = true;
done:
    sa_gpus_clear(&found);
    sa_gpus_clear(&scaled);
    return ok;
}

/* Parses a TRES string member into *t (which is cleared first). */
static bool get_tres_str(const json_t *elem, const char *key, sa_tres_t *t, sa_error_t *error)
{
    char *s = NULL;
    bool ok;

    if (!sa_json_get_str(elem, key, &s, error))
        return false;
    sa_tres_clear(t);
    sa_tres_init(t);
    ok = sa_tres_parse(s, false, t, error);
    free(s);
    return ok ? true : err_in(error, key);
}

/*
 * Builds a TRES set from sacct's list of {type, name, id, count} objects:
 * cpu, mem (MB), node, billing; gres "gpu" = untyped total, "gpu:<type>" = typed
 * (combined like sa_tres_parse: the untyped total wins, typed entries are the split,
 * a shortfall goes under type ""); everything else -> other["<type>[/<name>]"] as
 * text. A count of -2 / null / NO_VAL means "not recorded" and the entry is skipped.
 */
static bool tres_from_list(const json_t *arr, const char *key, sa_tres_t *t, sa_error_t *error)
{
    json_t *item;
    size_t i;
    sa_tres_gpus_t gpus;
    char where[64];

    if (!arr || json_is_null(arr))
        return true;
    if (!json_is_array(arr)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a list of TRES objects, got %s", key,
                     sa_json_type_name(arr));
        return false;
    }
    sa_tres_gpus_init(&gpus);
    json_array_foreach(arr, i, item) {
        const char *type, *name = NULL;
        const json_t *nv;
        int64_t count;

        snprintf(where, sizeof where, "%s[%zu]", key, i);
        if (!json_is_object(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected an object, got %s", where, sa_json_type_name(item));
            return false;
        }
        if (!json_is_string(json_object_get(item, "type"))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: type: expected a string, got %s", where,
                         sa_json_type_name(json_object_get(item, "type")));
            return false;
        }
        type = json_string_value(json_object_get(item, "type"));
        nv = json_object_get(item, "name");
        if (nv && json_is_string(nv) && json_string_length(nv) > 0)
            name = json_string_value(nv);
        else if (nv && !json_is_null(nv) && !json_is_string(nv)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: name: expected a string, got %s", where, sa_json_type_name(nv));
            return false;
        }
        if (!sa_json_get_int(item, "count", &count, error))
            return err_in(error, where);
        if (count == SA_UNSET || count == SA_INFINITE)
            continue;
        if (count < 0 || count > SA_MAX_SAFE_INT) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: count %" PRId64 " out of range", where, count);
            return false;
        }
        if (strcmp(type, "cpu") == 0 && !name) {
            t->cpu = count;
        } else if (strcmp(type, "mem") == 0 && !name) {
            t->mem_mb = count;
        } else if (strcmp(type, "node") == 0 && !name) {
            t->node = count;
        } else if (strcmp(type, "billing") == 0 && !name) {
            t->billing = (double)count;
        } else if (strcmp(type, "gres") == 0 && name && strcmp(name, "gpu") == 0) {
            sa_tres_gpus_untyped(&gpus, count);
        } else if (strcmp(type, "gres") == 0 && name && strncmp(name, "gpu:", 4) == 0 && name[4]) {
            if (count > 0 && !sa_tres_gpus_typed(&gpus, t, name + 4, count, where, error))
                return false;
        } else {
            /* "energy", "fs/disk", "gres/shard", "license/matlab" -> text */
            size_t klen = strlen(type) + (name ? strlen(name) + 1 : 0) + 1;
            char *okey = malloc(klen);
            char val[32];
            int rc;
            if (!okey)
                return sa_error_nomem(error);
            snprintf(okey, klen, "%s%s%s", type, name ? "/" : "", name ? name : "");
            snprintf(val, sizeof val, "%" PRId64, count);
            if (!t->other && !(t->other = json_object())) {
                free(okey);
                return sa_error_nomem(error);
            }
            rc = json_object_set_new(t->other, okey, json_string(val));
            free(okey);
            if (rc != 0)
                return sa_error_nomem(error);
        }
    }
    return sa_tres_gpus_finish(&gpus, t, error);
}

/* ---- squeue -------------------------------------------------------------------------- */

/* squeue keys modelled here (or ignored on purpose: job_resources). */
static const char *const squeue_known[] = {
    "job_id",         "array_job_id",    "array_task_id",  "array_task_string", "array_max_tasks",
    "het_job_id",     "het_job_offset",  "user_name",      "user_id",           "group_name",
    "group_id",       "account",         "partition",      "qos",               "name",
    "resv_name",      "wckey",           "cluster",        "job_state",         "state_reason",
    "state_description", "submit_time",  "eligible_time",  "start_time",        "end_time",
    "time_limit",     "nodes",           "node_count",     "cpus",              "tres_req_str",
    "tres_alloc_str", "gres_detail",     "exit_code",      "derived_exit_code", "restart_cnt",
    "requeue",        "job_resources",   NULL,
};

/* Fills job from a squeue element; errors carry the field, not yet the job id. */
static bool squeue_fields(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    int64_t hosts = 0;
    bool reliable;

    if (!get_count(e, "array_job_id", true, &job->array_job_id, error) ||
        !get_count(e, "array_task_id", false, &job->array_task_id, error) ||
        !get_str(e, "array_task_string", &job->array_task_string, error) ||
        !get_count(e, "array_max_tasks", true, &job->array_max_tasks, error) ||
        !get_count(e, "het_job_id", true, &job->het_job_id, error) ||
        !get_count(e, "het_job_offset", false, &job->het_job_offset, error))
        return false;
    tidy_array_het(job);

    if (!get_str(e, "user_name", &job->user, error) || !get_count(e, "user_id", false, &job->user_id, error) ||
        !get_str(e, "group_name", &job->group, error) ||
        !get_count(e, "group_id", false, &job->group_id, error) ||
        !get_str(e, "account", &job->account, error) || !get_str(e, "partition", &job->partition, error) ||
        !get_str(e, "qos", &job->qos, error) || !get_str(e, "name", &job->name, error) ||
        !get_str(e, "resv_name", &job->reservation, error) || !get_str(e, "wckey", &job->wckey, error) ||
        !get_str(e, "cluster", &job->cluster, error))
        return false;

    if (!sa_json_state(json_object_get(e, "job_state"), sa_job_base_is_known, &job->state, "job_state",
                       error) ||
        !squeue_state_fixup(&job->state, error))
        return false;
    if (!get_str(e, "state_reason", &job->reason, error) ||
        !get_str(e, "state_description", &job->state_description, error))
        return false;

    if (!sa_json_get_time(e, "submit_time", &job->submit, error) ||
        !sa_json_get_time(e, "eligible_time", &job->eligible, error) ||
        !sa_json_get_time(e, "start_time", &job->start, error) ||
        !sa_json_get_time(e, "end_time", &job->end, error) ||
        !get_limit(e, "time_limit", true, &job->time_limit, error))
        return false;

    if (!get_nodes(e, "nodes", &job->nodes, &hosts, error) ||
        !get_count(e, "node_count", false, &job->node_count, error) ||
        !get_count(e, "cpus", false, &job->cpus, error))
        return false;
    if (job->node_count == SA_UNSET && hosts > 0)
        job->node_count = hosts;

    if (!get_tres_str(e, "tres_req_str", &job->req, error) ||
        !get_tres_str(e, "tres_alloc_str", &job->alloc, error) ||
        !gres_detail_gpus(e, &job->gres_gpus, error) || !derive_gpu_request(e, job, error))
        return false;

    if (!get_exit(e, "exit_code", &job->exit_code, &job->exit_signal, &job->exit_reliable, error) ||
        !get_exit(e, "derived_exit_code", &job->derived_exit_code, &job->derived_exit_signal, &reliable,
                  error))
        return false;
    if (!get_count(e, "restart_cnt", false, &job->restart_cnt, error) ||
        !sa_json_get_bool(e, "requeue", &job->requeue_allowed, error))
        return false;

    if (!extra_top(&job->extra, e, squeue_known, error))
        return false;
    /* PENDING: start/end are the scheduler's expectations, not facts */
    if (job->state.base && strcmp(job->state.base, "PENDING") == 0) {
        if (job->start != SA_UNSET && !extra_set(&job->extra, "expected_start", json_integer(job->start), error))
            return false;
        job->start = job->end = SA_UNSET;
    }
    return set_display_id(job, error);
}

bool sa_job_from_squeue_json(const json_t *elem, sa_job_t *job, sa_error_t *error)
{
    int64_t id;

    if (!read_job_id(elem, &id, error))
        return false;
    job->source = SA_SRC_SQUEUE;
    job->job_id = id;
    if (!squeue_fields(elem, job, error)) {
        sa_error_prefix(error, "job %" PRId64, id);
        return false;
    }
    return true;
}

/* ---- sacct ----------------------------------------------------------------------------- */

static const char *const sacct_known[] = {
    "job_id", "array", "het",  "user",     "group",     "account",    "partition", "qos",
    "name",   "cluster", "reservation", "wckey", "state", "time", "nodes", "required",
    "tres",   "exit_code", "derived_exit_code", "restart_cnt", "steps", NULL,
};
static const char *const sacct_array_known[] = {"job_id", "task_id", "task", "limits", NULL};
static const char *const sacct_het_known[] = {"job_id", "job_offset", NULL};
static const char *const sacct_resv_known[] = {"name", NULL};
static const char *const sacct_wckey_known[] = {"wckey", NULL};
static const char *const sacct_state_known[] = {"current", "reason", NULL};
static const char *const sacct_time_known[] = {"submission", "eligible", "start", "end", "elapsed", "limit", NULL};
static const char *const sacct_required_known[] = {"CPUs", NULL};
static const char *const no_known[] = {NULL};
static const char *const sacct_tres_known[] = {"allocated", "requested", NULL};
static const char *const step_known[] = {"step", "state", "time", "nodes", "tres", "exit_code", NULL};
static const char *const step_step_known[] = {"id", "name", "job_id", "het", NULL};
static const char *const step_time_known[] = {"start", "end", "elapsed", "total", "user", "system", NULL};
static const char *const step_nodes_known[] = {"range", NULL};
static const char *const step_tres_known[] = {"allocated", "requested", "consumed", NULL};

/* Value of a hex digit, -1 when c is not one. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Turns Slurm's hex task mask ("0x1FE": bit i = task i, least significant digit
 * last) into ranges ("1-8"). Returns a new string, or NULL when s is not a hex mask
 * (or too long, or empty of bits) - the caller then keeps s as printed.
 */
static char *hexmask_to_ranges(const char *s)
{
    size_t ndig, cap, len = 0;
    char *out;
    int64_t run_start = -1;

    if (!s || (strncmp(s, "0x", 2) != 0 && strncmp(s, "0X", 2) != 0))
        return NULL;
    ndig = strlen(s + 2);
    if (ndig == 0 || ndig > HEXMASK_MAX_DIGITS)
        return NULL;
    for (size_t i = 0; i < ndig; i++) {
        if (hexval(s[2 + i]) < 0)
            return NULL;
    }
    /* worst case "0,2,4,..." : bits/2 entries of up to 6 digits + comma */
    cap = ndig * 2 * 8 + 16;
    if (!(out = malloc(cap)))
        return NULL;
    out[0] = '\0';
    for (int64_t bit = 0; bit <= (int64_t)ndig * 4; bit++) {
        bool set = false;
        if (bit < (int64_t)ndig * 4) {
            int d = hexval(s[2 + ndig - 1 - (size_t)(bit / 4)]);
            set = (d >> (bit % 4)) & 1;
        }
        if (set && run_start < 0) {
            run_start = bit;
        } else if (!set && run_start >= 0) {
            int w;
            if (run_start == bit - 1)
                w = snprintf(out + len, cap - len, "%s%" PRId64, len ? "," : "", run_start);
            else
                w = snprintf(out + len, cap - len, "%s%" PRId64 "-%" PRId64, len ? "," : "", run_start, bit - 1);
            if (w < 0 || (size_t)w >= cap - len) {
                free(out);
                return NULL;
            }
            len += (size_t)w;
            run_start = -1;
        }
    }
    if (len == 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* sacct array{job_id, task_id, task, limits.max.running.tasks}. */
static bool sacct_array(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    json_t *arr, *limits = NULL, *max = NULL, *running = NULL;
    char *decoded;

    if (!sa_json_get_obj(e, "array", &arr, error))
        return false;
    if (!arr)
        return true;
    if (!get_count(arr, "job_id", true, &job->array_job_id, error) ||
        !get_count(arr, "task_id", false, &job->array_task_id, error) ||
        !get_str(arr, "task", &job->array_task_string, error))
        return err_in(error, "array");
    if (!sa_json_get_obj(arr, "limits", &limits, error) || !sa_json_get_obj(limits, "max", &max, error) ||
        !sa_json_get_obj(max, "running", &running, error) ||
        !get_count(running, "tasks", true, &job->array_max_tasks, error))
        return err_in(error, "array: limits: max: running");
    if (job->array_task_string && (decoded = hexmask_to_ranges(job->array_task_string))) {
        if (!extra_set(&job->extra, "array_task_raw", json_string(job->array_task_string), error)) {
            free(decoded);
            return false;
        }
        free(job->array_task_string);
        job->array_task_string = decoded;
    }
    return extra_sub(&job->extra, "array", arr, sacct_array_known, error);
}

/* sacct scalar fields: ids, names, reservation, wckey, state. */
static bool sacct_names_state(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    json_t *het, *state, *v;

    if (!sa_json_get_obj(e, "het", &het, error))
        return false;
    if (!get_count(het, "job_id", true, &job->het_job_id, error) ||
        !get_count(het, "job_offset", false, &job->het_job_offset, error))
        return err_in(error, "het");
    if (!extra_sub(&job->extra, "het", het, sacct_het_known, error))
        return false;
    tidy_array_het(job);

    if (!get_str(e, "user", &job->user, error) || !get_str(e, "group", &job->group, error) ||
        !get_str(e, "account", &job->account, error) || !get_str(e, "partition", &job->partition, error) ||
        !get_str(e, "qos", &job->qos, error) || !get_str(e, "name", &job->name, error) ||
        !get_str(e, "cluster", &job->cluster, error))
        return false;

    /* reservation: {id, name}; dbv0.0.37 prints name as the integer 0 for "none" */
    v = json_object_get(e, "reservation");
    if (v && json_is_string(v)) {
        if (!get_str(e, "reservation", &job->reservation, error))
            return false;
    } else if (v && !json_is_null(v)) {
        json_t *rn;
        if (!json_is_object(v)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "reservation: expected an object, got %s", sa_json_type_name(v));
            return false;
        }
        rn = json_object_get(v, "name");
        if (rn && json_is_integer(rn) && json_integer_value(rn) == 0) {
            free(job->reservation);
            job->reservation = NULL;
        } else if (!get_str(v, "name", &job->reservation, error)) {
            return err_in(error, "reservation");
        }
        if (!extra_sub(&job->extra, "reservation", v, sacct_resv_known, error))
            return false;
    }

    /* wckey: a string, or {wckey, flags} */
    v = json_object_get(e, "wckey");
    if (v && json_is_object(v)) {
        if (!get_str(v, "wckey", &job->wckey, error))
            return err_in(error, "wckey");
        if (!extra_sub(&job->extra, "wckey", v, sacct_wckey_known, error))
            return false;
    } else if (!get_str(e, "wckey", &job->wckey, error)) {
        return false;
    }

    if (!sa_json_get_obj(e, "state", &state, error))
        return false;
    if (!sa_json_state(json_object_get(state, "current"), sa_job_base_is_known, &job->state, "current",
                       error) ||
        !get_str(state, "reason", &job->reason, error))
        return err_in(error, "state");
    return extra_sub(&job->extra, "state", state, sacct_state_known, error);
}

/*
 * A CPU time {seconds, microseconds} (time.total, .user, .system of a job or step) ->
 * seconds; left absent when the member is.
 */
static bool get_cputime(const json_t *t, const char *key, double *out, sa_error_t *error)
{
    const json_t *o = json_object_get(t, key);
    int64_t sec, usec;

    if (!o || json_is_null(o))
        return true;
    if (!get_count(o, "seconds", false, &sec, error) || !get_count(o, "microseconds", false, &usec, error))
        return err_in(error, key);
    if (sec != SA_UNSET)
        *out = (double)sec + (usec != SA_UNSET ? (double)usec / 1e6 : 0);
    return true;
}

static bool get_cputimes(const json_t *t, sa_stats_t *u, sa_error_t *error)
{
    return get_cputime(t, "total", &u->cpu_s, error) && get_cputime(t, "user", &u->user_cpu_s, error) &&
           get_cputime(t, "system", &u->system_cpu_s, error);
}

/*
 * The count of the TRES {type, name} in a usage list (a step's tres.requested.max ...),
 * into *out when *out is not known yet. Slurm's unset counts (-2, NO_VAL64) stay absent.
 */
static void usage_get(const json_t *parent, const char *list, const char *type, const char *name, int64_t *out)
{
    const json_t *arr = json_object_get(parent, list), *item;
    size_t i;

    if (*out != SA_UNSET || !json_is_array(arr))
        return;
    json_array_foreach(arr, i, item) {
        const json_t *c = json_object_get(item, "count");
        const char *ty = json_string_value(json_object_get(item, "type"));
        const char *nm = json_string_value(json_object_get(item, "name"));
        if (ty && strcmp(ty, type) == 0 && (name ? nm && strcmp(nm, name) == 0 : !nm || !*nm) && json_is_integer(c) &&
            json_integer_value(c) >= 0 && json_integer_value(c) <= SA_MAX_SAFE_INT) {
            *out = json_integer_value(c);
            return;
        }
    }
}

/* A step's usage from tres.requested (usage in) and tres.consumed (usage out), as sa_model.h says. */
static void step_usage(const json_t *tres, sa_stats_t *u)
{
    const json_t *in = json_object_get(tres, "requested"), *out = json_object_get(tres, "consumed");
    int64_t util = SA_UNSET, energy = SA_UNSET;

    usage_get(in, "max", "mem", NULL, &u->max_rss_bytes);
    usage_get(in, "average", "mem", NULL, &u->ave_rss_bytes);
    usage_get(in, "total", "mem", NULL, &u->mem_total_bytes);
    usage_get(in, "total", "gres", "gpuutil", &util);
    usage_get(in, "average", "gres", "gpuutil", &util);
    usage_get(in, "max", "gres", "gpumem", &u->gpu_mem_bytes);
    usage_get(in, "total", "fs", "disk", &u->disk_read_bytes);
    usage_get(out, "total", "fs", "disk", &u->disk_write_bytes);
    usage_get(out, "total", "energy", NULL, &energy);
    if (util != SA_UNSET)
        u->gpu_util_pct = (double)util;
    if (energy > 0)
        u->energy_j = energy;
}

/* sacct time{submission, eligible, start, end, elapsed, limit}. */
static bool sacct_time(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    json_t *t;

    if (!sa_json_get_obj(e, "time", &t, error))
        return false;
    if (!sa_json_get_time(t, "submission", &job->submit, error) ||
        !sa_json_get_time(t, "eligible", &job->eligible, error) ||
        !sa_json_get_time(t, "start", &job->start, error) || !sa_json_get_time(t, "end", &job->end, error) ||
        !get_count(t, "elapsed", false, &job->elapsed, error) ||
        !get_limit(t, "limit", false, &job->time_limit, error))
        return err_in(error, "time");
    if (job->start == SA_UNSET)
        job->elapsed = SA_UNSET;
    /* time.total/user/system of the job are 0 in 22.05's JSON even when its steps used CPU: the job
       document sums the steps' instead (sa_jobdoc.c), and these stay in extra as Slurm printed them */
    return extra_sub(&job->extra, "time", t, sacct_time_known, error);
}

/* sacct tres{requested[], allocated[]}, required{CPUs}, nodes -> req, alloc, cpus, node_count. */
static bool sacct_resources(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    json_t *tres, *req;
    int64_t req_cpus, hosts = 0;

    if (!sa_json_get_obj(e, "tres", &tres, error))
        return false;
    if (tres) {
        if (!tres_from_list(json_object_get(tres, "requested"), "requested", &job->req, error) ||
            !tres_from_list(json_object_get(tres, "allocated"), "allocated", &job->alloc, error))
            return err_in(error, "tres");
        if (!extra_sub(&job->extra, "tres", tres, sacct_tres_known, error))
            return false;
    }
    if (!sa_json_get_obj(e, "required", &req, error))
        return false;
    if (!get_count(req, "CPUs", false, &req_cpus, error))
        return err_in(error, "required");
    /* required.CPUs (sacct text's ReqCPUS): the requested CPUs when tres.requested has no cpu; one that
       disagrees with it stays in extra.required as printed */
    if (job->req.cpu == SA_UNSET)
        job->req.cpu = req_cpus;
    if (!extra_sub(&job->extra, "required", req,
                   req_cpus == SA_UNSET || req_cpus == job->req.cpu ? sacct_required_known : no_known, error))
        return false;
    if (!get_nodes(e, "nodes", &job->nodes, &hosts, error))
        return false;

    job->cpus = job->alloc.cpu != SA_UNSET ? job->alloc.cpu : req_cpus;
    if (job->alloc.node != SA_UNSET)
        job->node_count = job->alloc.node;
    else if (hosts > 0)
        job->node_count = hosts;
    else
        job->node_count = job->req.node;
    return true;
}

/*
 * Step id from the "step" member, any version:
 *   dbv0.0.37/38 {job_id, het:{component}, id: "batch" | 0, name}
 *   v0.0.39      {id: {job_id, step_id: "batch"}, name}
 *   v0.0.40+     {id: "510.batch", name}
 * -> "batch", "0", "0+1" (the step part only).
 */
static bool step_id_from_json(const json_t *so, char **out, sa_error_t *error)
{
    const json_t *idv, *het, *comp;
    char buf[64];
    const char *s = NULL;
    int64_t component = SA_UNSET;
    size_t n;

    *out = NULL;
    idv = json_object_get(so, "id");
    if (idv && json_is_object(idv))
        idv = json_object_get(idv, "step_id");
    if (!idv || json_is_null(idv))
        return true;
    if (json_is_string(idv)) {
        const char *dot;
        s = json_string_value(idv);
        /* "510.batch", "510_4.0", "510+1.0": drop the job part */
        dot = strchr(s, '.');
        if (dot)
            s = dot + 1;
    } else if (json_is_integer(idv)) {
        json_int_t v = json_integer_value(idv);
        if (v < 0) {
            sa_error_set(error, SA_ERR_INPUT, 0, "id: step id %lld out of range", (long long)v);
            return false;
        }
        s = v == STEP_BATCH       ? "batch"
            : v == STEP_EXTERN    ? "extern"
            : v == STEP_INTERACTIVE ? "interactive"
            : v == STEP_PENDING   ? "TDB"
                                  : NULL;
        if (!s) {
            snprintf(buf, sizeof buf, "%lld", (long long)v);
            s = buf;
        }
    } else {
        sa_error_set(error, SA_ERR_INPUT, 0, "id: expected a string or an integer, got %s", sa_json_type_name(idv));
        return false;
    }
    het = json_object_get(so, "het");
    comp = het && json_is_object(het) ? json_object_get(het, "component") : NULL;
    if (comp && !json_is_null(comp) && !get_count(het, "component", false, &component, error))
        return err_in(error, "het");
    if (!*s)
        return true;
    n = strlen(s) + 32;
    if (!(*out = malloc(n)))
        return sa_error_nomem(error);
    if (component != SA_UNSET && !strchr(s, '+'))
        snprintf(*out, n, "%s+%" PRId64, s, component);
    else
        snprintf(*out, n, "%s", s);
    return true;
}

/* One element of sacct's steps[] -> a new step of job. */
static bool sacct_step(const json_t *so, sa_job_t *job, sa_error_t *error)
{
    sa_step_t *st;
    json_t *step, *t, *nodes, *tres;
    bool reliable;

    if (!json_is_object(so)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "expected an object, got %s", sa_json_type_name(so));
        return false;
    }
    if (!(st = sa_job_add_step(job)))
        return sa_error_nomem(error);

    if (!sa_json_get_obj(so, "step", &step, error))
        return false;
    if (step) {
        if (!step_id_from_json(step, &st->id, error) || !get_str(step, "name", &st->name, error))
            return err_in(error, "step");
        if (!extra_sub(&st->extra, "step", step, step_step_known, error))
            return false;
    }

    if (!sa_json_state(json_object_get(so, "state"), sa_job_base_is_known, &st->state, "state", error))
        return false;

    if (!sa_json_get_obj(so, "time", &t, error))
        return false;
    if (!sa_json_get_time(t, "start", &st->start, error) || !sa_json_get_time(t, "end", &st->end, error) ||
        !get_count(t, "elapsed", false, &st->elapsed, error))
        return err_in(error, "time");
    if (st->start == SA_UNSET)
        st->elapsed = SA_UNSET;
    if (t && !get_cputimes(t, &st->stats, error))
        return err_in(error, "time");
    if (!extra_sub(&st->extra, "time", t, step_time_known, error))
        return false;

    nodes = json_object_get(so, "nodes");
    if (nodes && json_is_string(nodes)) {
        if (!get_nodes(so, "nodes", &st->nodes, NULL, error))
            return false;
    } else {
        if (!sa_json_get_obj(so, "nodes", &nodes, error))
            return false;
        if (!get_nodes(nodes, "range", &st->nodes, NULL, error))
            return err_in(error, "nodes");
        if (!extra_sub(&st->extra, "nodes", nodes, step_nodes_known, error))
            return false;
    }

    if (!sa_json_get_obj(so, "tres", &tres, error))
        return false;
    if (tres) {
        if (!tres_from_list(json_object_get(tres, "allocated"), "allocated", &st->alloc, error))
            return err_in(error, "tres");
        step_usage(tres, &st->stats);
        if (!extra_sub(&st->extra, "tres", tres, step_tres_known, error))
            return false;
    }

    if (!get_exit(so, "exit_code", &st->exit_code, &st->exit_signal, &reliable, error))
        return false;
    return extra_top(&st->extra, so, step_known, error);
}

/* Fills job from a sacct element; errors carry the field, not yet the job id. */
static bool sacct_fields(const json_t *e, sa_job_t *job, sa_error_t *error)
{
    json_t *steps, *item;
    size_t i;
    bool reliable;
    char where[48];

    if (!sacct_array(e, job, error) || !sacct_names_state(e, job, error) || !sacct_time(e, job, error) ||
        !sacct_resources(e, job, error))
        return false;

    if (!get_exit(e, "exit_code", &job->exit_code, &job->exit_signal, &job->exit_reliable, error) ||
        !get_exit(e, "derived_exit_code", &job->derived_exit_code, &job->derived_exit_signal, &reliable,
                  error) ||
        !get_count(e, "restart_cnt", false, &job->restart_cnt, error))
        return false;

    if (!sa_json_get_arr(e, "steps", &steps, error))
        return false;
    json_array_foreach(steps, i, item) {
        if (!sacct_step(item, job, error)) {
            snprintf(where, sizeof where, "steps[%zu]", i);
            return err_in(error, where);
        }
    }

    if (!extra_top(&job->extra, e, sacct_known, error))
        return false;
    return set_display_id(job, error);
}

bool sa_job_from_sacct_json(const json_t *elem, sa_job_t *job, sa_error_t *error)
{
    int64_t id;

    if (!read_job_id(elem, &id, error))
        return false;
    job->source = SA_SRC_SACCT_JSON;
    job->job_id = id;
    job->requeue_allowed = false; /* sacct does not say */
    if (!sacct_fields(elem, job, error)) {
        sa_error_prefix(error, "job %" PRId64, id);
        return false;
    }
    return true;
}

sa_kind_t sa_job_json_kind(const json_t *elem)
{
    if (!json_is_object(elem))
        return SA_KIND_UNKNOWN;
    if (json_object_get(elem, "job_state"))
        return SA_KIND_SQUEUE_JSON;
    if (json_is_object(json_object_get(elem, "state")) || json_is_object(json_object_get(elem, "time")) ||
        json_object_get(elem, "steps"))
        return SA_KIND_SACCT_JSON;
    return SA_KIND_UNKNOWN;
}
