/*
 * parse_sdiag.c - `sdiag --json` -> sa_sdiag_t (see sa_sdiag.h).
 *
 * Shape (Slurm 23.02+ data_parser, and slurmrestd /slurm/vX/diag since v0.0.37):
 *   {"statistics": {"parts_packed": 1, "req_time": {"set": true, "infinite": false,
 *     "number": 1760000000}, "server_thread_count": 3, ..., "rpcs_by_user": [...]},
 *    "meta": {...}, "errors": [], "warnings": []}
 * v0.0.37-v0.0.39 print times as plain integers; v0.0.40+ as {set,infinite,number};
 * sa_json_get_int/time accept both.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_sdiag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_json.h"
#include "sa_vec.h"

/* The keys of "statistics" that sa_sdiag_t models, NULL-terminated. */
static const char *const sdiag_known_keys[] = {
#define SDIAG_KEY_(name, kind) #name,
    SA_SDIAG_FIELDS(SDIAG_KEY_)
#undef SDIAG_KEY_
    NULL,
};

/* Reads one figure of kind INT / TIME / BOOL from the statistics object. */
static bool get_figure(const json_t *stats, const char *key, const char *kind, int64_t *out, sa_error_t *error)
{
    if (strcmp(kind, "TIME") == 0)
        return sa_json_get_time(stats, key, out, error);
    if (strcmp(kind, "BOOL") == 0) {
        bool b;
        const json_t *v = json_object_get(stats, key);
        *out = SA_UNSET;
        if (!v || json_is_null(v))
            return true;
        if (!sa_json_get_bool(stats, key, &b, error))
            return false;
        *out = b ? 1 : 0;
        return true;
    }
    if (!sa_json_get_int(stats, key, out, error))
        return false;
    if (*out == SA_INFINITE)
        *out = SA_UNSET;
    if (*out != SA_UNSET && *out < 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: negative value %lld", key, (long long)*out);
        return false;
    }
    return true;
}

/*
 * Appends the entries of statistics' array key (rpcs_by_message_type: name_key
 * "message_type", id_key "type_id"; rpcs_by_user: "user", "user_id") to out->rpcs. An
 * entry without a name is named by its id; one with neither, or without a count, is
 * skipped. Fails on an array or entry of the wrong type, or a negative figure.
 */
static bool get_rpcs(const json_t *stats, const char *key, sa_sdiag_rpc_kind_t kind, const char *name_key,
                     const char *id_key, sa_sdiag_t *out, sa_error_t *error)
{
    json_t *arr, *e;
    size_t i, cap = out->nrpcs;

    if (!sa_json_get_arr(stats, key, &arr, error))
        return false;
    json_array_foreach(arr, i, e) {
        sa_sdiag_rpc_t r = {kind, NULL, SA_UNSET, SA_UNSET};
        int64_t id = SA_UNSET;
        if (!json_is_object(e)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s[%zu]: expected an object, got %s", key, i, sa_json_type_name(e));
            return false;
        }
        if (!sa_json_get_int(e, id_key, &id, error) || !get_figure(e, "count", "INT", &r.count, error) ||
            !get_figure(e, "total_time", "INT", &r.total_time, error) ||
            !sa_json_get_str(e, name_key, &r.name, error)) {
            sa_error_prefix(error, "%s", key);
            return false;
        }
        if (!r.name && id >= 0 && id != SA_INFINITE && asprintf(&r.name, "%lld", (long long)id) < 0)
            return sa_error_nomem(error);
        if (!r.name || r.count == SA_UNSET) {
            free(r.name);
            continue;
        }
        if (!SA_VEC_GROW(out->rpcs, cap, out->nrpcs, 1, 64)) {
            free(r.name);
            return sa_error_nomem(error);
        }
        out->rpcs[out->nrpcs++] = r;
    }
    return true;
}

/* The first of Slurm's errors[] descriptions in doc, or NULL. */
static const char *first_error(const json_t *doc)
{
    const json_t *errs = json_object_get(doc, "errors"), *e;
    const char *d;

    if (!json_is_array(errs) || json_array_size(errs) == 0)
        return NULL;
    e = json_array_get(errs, 0);
    if (json_is_string(e))
        return json_string_value(e);
    d = json_string_value(json_object_get(e, "description"));
    return d ? d : json_string_value(json_object_get(e, "error"));
}

bool sa_sdiag_parse_json(const char *data, size_t len, sa_sdiag_t *out, sa_error_t *error)
{
    json_error_t jerr;
    json_t *doc = NULL, *stats;
    bool ok = false;

    sa_sdiag_init(out);
    if (!data || len == 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "sdiag: empty input");
        return false;
    }
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        data += 3;
        len -= 3;
    }
    doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        sa_error_set(error, SA_ERR_INPUT, 0, "sdiag: invalid JSON at line %d column %d: %s", jerr.line,
                     jerr.column, jerr.text);
        goto done;
    }
    if (!json_is_object(doc)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "sdiag: expected a JSON object at top level, got %s",
                     json_is_array(doc) ? "an array" : "a scalar");
        goto done;
    }
    stats = json_object_get(doc, "statistics");
    if (!json_is_object(stats)) {
        const char *e = first_error(doc);
        char q[200];
        if (stats && !json_is_null(stats))
            sa_error_set(error, SA_ERR_INPUT, 0, "sdiag: statistics: expected an object");
        else if (e) /* Slurm's own failure, like squeue's or sacct's errors[] */
            sa_error_set(error, SA_ERR_SLURM, 0, "sdiag: no statistics; Slurm says: %s",
                         sa_error_quote(e, 160, q, sizeof q));
        else
            sa_error_set(error, SA_ERR_INPUT, 0, "sdiag: no \"statistics\" object (not sdiag --json output?)");
        goto done;
    }
    if (first_error(doc)) {
        char q[200];
        sa_error_set(error, SA_ERR_SLURM, 0, "sdiag: Slurm reported an error: %s",
                     sa_error_quote(first_error(doc), 160, q, sizeof q));
        goto done;
    }
#define SDIAG_GET_(name, kind)                                                                              \
    if (!get_figure(stats, #name, #kind, &out->name, error))                                                \
        goto bad;
    SA_SDIAG_FIELDS(SDIAG_GET_)
#undef SDIAG_GET_
    if (!get_rpcs(stats, "rpcs_by_message_type", SA_SDIAG_RPC_TYPE, "message_type", "type_id", out, error) ||
        !get_rpcs(stats, "rpcs_by_user", SA_SDIAG_RPC_USER, "user", "user_id", out, error))
        goto bad;
    out->extra = sa_json_extra(stats, sdiag_known_keys);
    ok = true;
    goto done;
bad:
    sa_error_prefix(error, "sdiag: statistics");
done:
    json_decref(doc);
    return ok;
}
