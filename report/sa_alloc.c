/*
 * sa_alloc.c - the allocations file (see sa_alloc.h, schema/allocations.schema.json).
 */
#include "sa_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_http.h"
#include "sa_rutil.h"

const char *sa_award_unit_name(sa_award_unit_t u)
{
    return u == SA_AWARD_RGU_YEARS ? "rgu-years" : u == SA_AWARD_CORE_YEARS ? "core-years"
                                     : u == SA_AWARD_BILLING_YEARS ? "billing-years" : "gpu-years";
}

void sa_awards_clear(sa_awards_t *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->v[i].cluster);
        free(a->v[i].account);
        free(a->v[i].gpu_type);
        free(a->v[i].note);
    }
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* True if every key of o is among known (NULL-terminated); else names the first other in *bad. */
static bool keys_known(const json_t *o, const char *const *known, const char **bad)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        const char *const *p;
        (void)v;
        for (p = known; *p && strcmp(*p, k) != 0; p++)
            ;
        if (!*p) {
            *bad = k;
            return false;
        }
    }
    return true;
}

/* Reads a bands object into *under / *over (left alone when absent). what prefixes messages. */
static bool read_bands(const json_t *b, double *under, double *over, const char *what, sa_error_t *error)
{
    static const char *const known[] = {"under_pct", "over_pct", NULL};
    const char *bad;
    const json_t *u, *o;

    if (!b)
        return true;
    if (!json_is_object(b)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sbands: expected an object {under_pct, over_pct}", what);
        return false;
    }
    if (!keys_known(b, known, &bad)) {
        char q[80];
        sa_error_set(error, SA_ERR_INPUT, 0, "%sbands: unknown key '%s'", what, sa_error_quote(bad, 40, q, sizeof q));
        return false;
    }
    u = json_object_get(b, "under_pct");
    o = json_object_get(b, "over_pct");
    if ((u && (!json_is_number(u) || json_number_value(u) < 0)) ||
        (o && (!json_is_number(o) || json_number_value(o) < 0))) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sbands: under_pct and over_pct must be numbers >= 0", what);
        return false;
    }
    if (u)
        *under = json_number_value(u);
    if (o)
        *over = json_number_value(o);
    if (*under > *over) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sbands: under_pct (%g) is above over_pct (%g)", what, *under, *over);
        return false;
    }
    return true;
}

/* A required (or optional, when !required) non-empty string member. */
static bool get_string(const json_t *o, const char *key, bool required, char **out, const char *what,
                       sa_error_t *error)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v && !required)
        return true;
    if (!json_is_string(v) || json_string_length(v) == 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s%s: expected a non-empty string", what, key);
        return false;
    }
    if (!(*out = strdup(json_string_value(v)))) {
        sa_error_nomem(error);
        return false;
    }
    return true;
}

/* Parses one award object into *a; what = "FILE: awards[i]: ". */
static bool read_award(const json_t *o, sa_award_t *a, char *what, size_t whatsz, sa_error_t *error)
{
    static const char *const known[] = {"cluster", "account", "gpu_type", "amount", "unit", "start",
                                        "end",     "bands",   "note",     "members", NULL};
    const json_t *amount = json_object_get(o, "amount"), *unit = json_object_get(o, "unit");
    const json_t *members = json_object_get(o, "members");
    const char *bad;
    char *start = NULL, *end = NULL, q[80];
    bool ok = false;

    if (!json_is_object(o)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sexpected an object", what);
        return false;
    }
    if (!get_string(o, "cluster", true, &a->cluster, what, error) ||
        !get_string(o, "account", true, &a->account, what, error))
        return false;
    /* from here on, messages name the award */
    {
        size_t len = strlen(what);
        char c[60], ac[60];
        if (len >= 2)
            len -= 2; /* drop ": " */
        snprintf(what + len, whatsz - len, " (%s/%s): ", sa_error_quote(a->cluster, 40, c, sizeof c),
                 sa_error_quote(a->account, 40, ac, sizeof ac));
    }
    if (!keys_known(o, known, &bad)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sunknown key '%s'", what, sa_error_quote(bad, 40, q, sizeof q));
        return false;
    }
    if (!get_string(o, "gpu_type", false, &a->gpu_type, what, error) ||
        !get_string(o, "note", false, &a->note, what, error) || !get_string(o, "start", true, &start, what, error) ||
        !get_string(o, "end", true, &end, what, error))
        goto done;
    if (!json_is_number(amount) || !(json_number_value(amount) > 0) || !isfinite(json_number_value(amount))) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%samount: expected a number > 0", what);
        goto done;
    }
    a->amount = json_number_value(amount);
    /* a count of people: a whole number (1 and 1.0 alike, as JSON has one kind of number), at least 1 */
    if (members && (!json_is_number(members) || !(json_number_value(members) >= 1) || json_number_value(members) > 1e9 ||
                    floor(json_number_value(members)) != json_number_value(members))) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%smembers: expected a whole number >= 1 (the group's size)", what);
        goto done;
    }
    a->members = members ? (int64_t)json_number_value(members) : 0;
    if (json_is_string(unit) && strcmp(json_string_value(unit), "gpu-years") == 0) {
        a->unit = SA_AWARD_GPU_YEARS;
    } else if (json_is_string(unit) && strcmp(json_string_value(unit), "rgu-years") == 0) {
        a->unit = SA_AWARD_RGU_YEARS;
    } else if (json_is_string(unit) && strcmp(json_string_value(unit), "core-years") == 0) {
        a->unit = SA_AWARD_CORE_YEARS;
    } else if (json_is_string(unit) && strcmp(json_string_value(unit), "billing-years") == 0) {
        a->unit = SA_AWARD_BILLING_YEARS;
    } else {
        sa_error_set(error, SA_ERR_INPUT, 0,
                     "%sunit: expected \"gpu-years\", \"rgu-years\", \"core-years\" or \"billing-years\"", what);
        goto done;
    }
    if (!sa_rtime_parse(start, &a->start)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%sstart: expected YYYY-MM-DD[Thh:mm[:ss]] (UTC), got '%s'", what,
                     sa_error_quote(start, 40, q, sizeof q));
        goto done;
    }
    if (!sa_rtime_parse(end, &a->end)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%send: expected YYYY-MM-DD[Thh:mm[:ss]] (UTC), got '%s'", what,
                     sa_error_quote(end, 40, q, sizeof q));
        goto done;
    }
    if (a->end <= a->start) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%send: must be after start", what);
        goto done;
    }
    ok = read_bands(json_object_get(o, "bands"), &a->under_pct, &a->over_pct, what, error);
done:
    free(start);
    free(end);
    return ok;
}

/*
 * Reads the document doc (stolen: released here; NULL: jansson could not parse it, as
 * jerr says) into *out; name (the file, or the URL redacted) prefixes the messages.
 */
static bool awards_from_json(json_t *doc, const json_error_t *jerr, const char *name, sa_awards_t *out,
                             sa_error_t *error)
{
    static const char *const known[] = {"$comment", "recent_days", "bands", "awards", NULL};
    const json_t *awards, *rd, *a;
    double under = 80, over = 120;
    const char *bad;
    char what[512], q[80];
    size_t i;

    memset(out, 0, sizeof *out);
    out->recent_days = 30;
    if (!doc) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s:%d: %s", name, jerr->line, jerr->text);
        return false;
    }
    if (!json_is_object(doc)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a JSON object {\"awards\": [...]}", name);
        goto fail;
    }
    if (!keys_known(doc, known, &bad)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: unknown key '%s'", name, sa_error_quote(bad, 40, q, sizeof q));
        goto fail;
    }
    rd = json_object_get(doc, "recent_days");
    if (rd) {
        if (!json_is_number(rd) || !(json_number_value(rd) > 0) || json_number_value(rd) > 3660) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: recent_days: expected a number of days > 0", name);
            goto fail;
        }
        out->recent_days = json_number_value(rd);
    }
    snprintf(what, sizeof what, "%s: ", name);
    if (!read_bands(json_object_get(doc, "bands"), &under, &over, what, error))
        goto fail;
    awards = json_object_get(doc, "awards");
    if (!json_is_array(awards)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: awards: expected an array", name);
        goto fail;
    }
    out->v = calloc(json_array_size(awards) + 1, sizeof *out->v);
    if (!out->v) {
        sa_error_nomem(error);
        goto fail;
    }
    json_array_foreach(awards, i, a) {
        sa_award_t *aw = &out->v[out->n++];
        aw->under_pct = under;
        aw->over_pct = over;
        aw->index = i;
        snprintf(what, sizeof what, "%s: awards[%zu]: ", name, i);
        if (!read_award(a, aw, what, sizeof what, error))
            goto fail;
    }
    json_decref(doc);
    return true;
fail:
    json_decref(doc);
    sa_awards_clear(out);
    return false;
}

bool sa_awards_load(const char *path, sa_awards_t *out, sa_error_t *error)
{
    json_error_t jerr;
    return awards_from_json(json_load_file(path, 0, &jerr), &jerr, path, out, error);
}

bool sa_awards_parse(const char *data, size_t len, const char *name, sa_awards_t *out, sa_error_t *error)
{
    json_error_t jerr;
    return awards_from_json(json_loadb(data, len, 0, &jerr), &jerr, name, out, error);
}

bool sa_awards_read(const char *source, const char *json, size_t len, sa_awards_t *out, sa_error_t *error)
{
    char *name;
    bool ok;

    if (!json)
        return sa_awards_load(source, out, error);
    memset(out, 0, sizeof *out);
    if (!(name = sa_http_redact(source, true)))
        return sa_error_nomem(error);
    ok = sa_awards_parse(json, len, name, out, error);
    free(name);
    return ok;
}
