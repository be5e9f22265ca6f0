/*
 * sa_json.c - reading Slurm's JSON values with jansson, whatever the version
 * (see sa_json.h for the encodings of a scalar in each OpenAPI / data_parser version, as
 * the REST API reference of Slurm's documentation, slurm.schedmd.com/rest_api.html, gives them).
 */
#include "sa_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_slurmtext.h"

#define NO_VAL32 4294967294LL
#define INFINITE32 4294967295LL
#define NO_VAL16 65534LL
#define INFINITE16 65535LL

/* JSON type names as messages print them (a real is a "number"; NULL is "nothing"). */
const char *sa_json_type_name(const json_t *v)
{
    if (!v)
        return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    }
    return "value";
}

/* The parsers' out-of-memory error, as a return value. */
/* Interprets an integer that may be one of Slurm's raw sentinels. */
static void noval_from_int(int64_t n, bool sentinel16, sa_noval_t *out)
{
    if (n == NO_VAL32 || n == -2 || (sentinel16 && n == NO_VAL16))
        return; /* unset */
    if (n == INFINITE32 || (sentinel16 && n == INFINITE16)) {
        out->infinite = true;
        return;
    }
    out->set = true;
    out->value = n;
    out->fvalue = (double)n;
}

/* Interprets a real: integral values within int64 as numbers, NO_VAL64 as unset. */
static bool noval_from_real(double d, bool sentinel16, sa_noval_t *out, const char *key, sa_error_t *error)
{
    if (!isfinite(d)) {
        out->infinite = isinf(d) && d > 0;
        return true;
    }
    /* 18446744073709551614 / 18446744073709551615 decoded as reals (NO_VAL64 / INFINITE64) */
    if (d >= 18446744073709549568.0 && d <= 18446744073709551616.0)
        return true;
    if (d >= 9223372036854775807.0 || d < -9223372036854775807.0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: number %g out of range", key, d);
        return false;
    }
    if (d == floor(d)) {
        noval_from_int((int64_t)d, sentinel16, out);
        out->fvalue = d;
        return true;
    }
    out->set = true;
    out->value = (int64_t)d;
    out->fvalue = d;
    return true;
}

bool sa_json_noval(const json_t *v, bool sentinel16, sa_noval_t *out, const char *key, sa_error_t *error)
{
    memset(out, 0, sizeof *out);
    if (!v || json_is_null(v))
        return true;
    if (json_is_integer(v)) {
        noval_from_int((int64_t)json_integer_value(v), sentinel16, out);
        return true;
    }
    if (json_is_real(v))
        return noval_from_real(json_real_value(v), sentinel16, out, key, error);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        int64_t n;
        if (s[0] == '\0')
            return true;
        if (strcasecmp(s, "Infinity") == 0 || strcasecmp(s, "infinite") == 0 ||
            strcasecmp(s, "UNLIMITED") == 0) {
            out->infinite = true;
            return true;
        }
        if (strcasecmp(s, "NaN") == 0 || strcasecmp(s, "N/A") == 0)
            return true;
        if (sa_parse_int64(s, &n)) {
            noval_from_int(n, sentinel16, out);
            return true;
        }
        char q[64];
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a number, got string \"%s\"", key,
                     sa_error_quote(s, 40, q, sizeof q));
        return false;
    }
    if (json_is_object(v)) {
        json_t *set = json_object_get(v, "set");
        json_t *inf = json_object_get(v, "infinite");
        json_t *num = json_object_get(v, "number");
        if (!num && !set && !inf) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a number or {set,infinite,number}, got object",
                         key);
            return false;
        }
        if ((set && !json_is_boolean(set)) || (inf && !json_is_boolean(inf)) ||
            (num && !json_is_number(num) && !json_is_null(num))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: malformed {set,infinite,number} object", key);
            return false;
        }
        if (inf && json_is_true(inf)) {
            out->infinite = true;
            return true;
        }
        if (set && json_is_false(set))
            return true;
        if (!num || json_is_null(num))
            return true;
        if (json_is_integer(num)) {
            /* explicitly set: a raw sentinel here still means unset */
            noval_from_int((int64_t)json_integer_value(num), sentinel16, out);
            return true;
        }
        return noval_from_real(json_real_value(num), sentinel16, out, key, error);
    }
    sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a number or {set,infinite,number}, got %s", key,
                 sa_json_type_name(v));
    return false;
}

bool sa_json_get_int(const json_t *o, const char *key, int64_t *out, sa_error_t *error)
{
    sa_noval_t nv;

    *out = SA_UNSET;
    if (!o)
        return true;
    if (!sa_json_noval(json_object_get(o, key), false, &nv, key, error))
        return false;
    if (nv.infinite)
        *out = SA_INFINITE;
    else if (nv.set)
        *out = nv.value;
    return true;
}

bool sa_json_get_time(const json_t *o, const char *key, int64_t *out, sa_error_t *error)
{
    if (!sa_json_get_int(o, key, out, error))
        return false;
    if (*out == 0 || *out == SA_INFINITE)
        *out = SA_UNSET;
    else if (*out != SA_UNSET && (*out < 0 || *out > 253402300799LL)) { /* after 9999-12-31 */
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: time %lld out of range", key, (long long)*out);
        return false;
    }
    return true;
}

bool sa_json_get_str(const json_t *o, const char *key, char **out, sa_error_t *error)
{
    const json_t *v;

    *out = NULL;
    if (!o)
        return true;
    v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v)) {
        if (json_string_length(v) == 0)
            return true;
        if (strlen(json_string_value(v)) != json_string_length(v)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: string contains a NUL character", key);
            return false;
        }
        *out = strdup(json_string_value(v));
    } else if (json_is_integer(v)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        *out = strdup(buf);
    } else {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a string, got %s", key, sa_json_type_name(v));
        return false;
    }
    if (!*out) {
        sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "%s: out of memory", key);
        return false;
    }
    return true;
}

bool sa_json_get_bool(const json_t *o, const char *key, bool *out, sa_error_t *error)
{
    const json_t *v;

    *out = false;
    if (!o)
        return true;
    v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v) != 0;
        return true;
    }
    sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a boolean, got %s", key, sa_json_type_name(v));
    return false;
}

/* Shared by get_obj and get_arr. */
static bool get_typed(const json_t *o, const char *key, json_type want, json_t **out, sa_error_t *error)
{
    json_t *v;

    *out = NULL;
    if (!o)
        return true;
    v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (json_typeof(v) != want) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected an %s, got %s", key,
                     want == JSON_OBJECT ? "object" : "array", sa_json_type_name(v));
        return false;
    }
    *out = v;
    return true;
}

bool sa_json_get_obj(const json_t *o, const char *key, json_t **out, sa_error_t *error)
{
    return get_typed(o, key, JSON_OBJECT, out, error);
}

bool sa_json_get_arr(const json_t *o, const char *key, json_t **out, sa_error_t *error)
{
    return get_typed(o, key, JSON_ARRAY, out, error);
}

/*
 * Normalises one word: trims spaces, drops " by <uid>" ("CANCELLED by 0"), upper-cases.
 * Returns a new string or NULL for an empty word.
 */
static char *normalise_word(const char *s, size_t len)
{
    char *w;
    const char *by;

    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len == 0)
        return NULL;
    w = strndup(s, len);
    if (!w)
        return NULL;
    by = strstr(w, " by ");
    if (by)
        w[by - w] = '\0';
    for (char *p = w; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return w;
}

/* Appends the words of one string (split at '+' and ','), unique and sorted. */
static bool add_words_from_string(const char *s, sa_strv_t *out)
{
    while (*s) {
        size_t len = strcspn(s, "+,");
        char *w = normalise_word(s, len);
        if (w) {
            bool ok = sa_strv_add_sorted_unique(out, w);
            free(w);
            if (!ok)
                return false;
        }
        s += len;
        if (*s)
            s++;
    }
    return true;
}

bool sa_json_get_words(const json_t *o, const char *key, sa_strv_t *out, sa_error_t *error)
{
    const json_t *v;
    size_t i;
    json_t *item;

    if (!o)
        return true;
    v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v))
        return add_words_from_string(json_string_value(v), out);
    if (!json_is_array(v)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a string or a list of strings, got %s", key,
                     sa_json_type_name(v));
        return false;
    }
    json_array_foreach(v, i, item) {
        if (!json_is_string(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a list of strings, found %s", key,
                         sa_json_type_name(item));
            return false;
        }
        if (!add_words_from_string(json_string_value(item), out))
            return false;
    }
    return true;
}

bool sa_json_state(const json_t *v, bool (*is_base)(const char *), sa_state_t *st, const char *key,
                   sa_error_t *error)
{
    size_t i;
    json_t *item;
    char *first = NULL;

    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v)) {
        /* one word, or "IDLE+DRAIN" in text-like producers */
        const char *s = json_string_value(v);
        size_t len = strcspn(s, "+");
        char *w = normalise_word(s, len);
        if (w) {
            free(st->base);
            st->base = w;
        }
        if (s[len] && !add_words_from_string(s + len + 1, &st->flags))
            goto oom;
        return true;
    }
    if (!json_is_array(v)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a state string or list, got %s", key, sa_json_type_name(v));
        return false;
    }
    json_array_foreach(v, i, item) {
        char *w;
        if (!json_is_string(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a list of state words, found %s", key,
                         sa_json_type_name(item));
            free(first);
            return false;
        }
        w = normalise_word(json_string_value(item), json_string_length(item));
        if (!w)
            continue;
        if (!st->base && is_base && is_base(w)) {
            st->base = w;
            continue;
        }
        if (!first) {
            first = w; /* candidate base if no known base word appears */
            continue;
        }
        bool ok = sa_strv_add_sorted_unique(&st->flags, w);
        free(w);
        if (!ok)
            goto oom;
    }
    if (first) {
        if (!st->base) {
            st->base = first;
        } else {
            bool ok = sa_strv_add_sorted_unique(&st->flags, first);
            free(first);
            if (!ok)
                goto oom;
        }
    }
    return true;
oom:
    sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "%s: out of memory", key);
    return false;
}

/* One of 64 bits for a key, from its first two bytes (a filter before strcmp). */
static uint64_t key_bit(const char *key)
{
    return (uint64_t)1 << (((unsigned char)key[0] * 5u + (key[0] ? (unsigned char)key[1] : 0u)) & 63u);
}

/* True when key is one of the NULL-terminated known_keys (NULL: none); bits: their key_bit()s. */
static bool key_is_known(const char *key, const char *const *known_keys, uint64_t bits)
{
    if (!(bits & key_bit(key)))
        return false;
    for (const char *const *k = known_keys; k && *k; k++) {
        if ((*k)[0] == key[0] && strcmp(*k, key) == 0)
            return true;
    }
    return false;
}

json_t *sa_json_extra(const json_t *o, const char *const *known_keys)
{
    json_t *extra = NULL;
    const char *key;
    json_t *value;
    uint64_t bits = 0;

    if (!o || !json_is_object(o))
        return NULL;
    for (const char *const *k = known_keys; k && *k; k++)
        bits |= key_bit(*k);
    json_object_foreach((json_t *)o, key, value) {
        if (key_is_known(key, known_keys, bits))
            continue;
        if (!extra && !(extra = json_object()))
            return NULL;
        /* a new reference, not a copy; the key comes from a jansson object (valid UTF-8) */
        json_object_set_new_nocheck(extra, key, json_incref(value));
    }
    return extra;
}

/* Decodes a raw POSIX wait status (exit << 8 | signal). */
static void decode_wait_status(int64_t raw, int *rc, int *sig)
{
    if (raw < 0 || raw > 0xffff) {
        *rc = *sig = -1;
        return;
    }
    *sig = (int)(raw & 0x7f);
    *rc = *sig ? 0 : (int)((raw >> 8) & 0xff);
}

bool sa_json_exit_code(const json_t *v, int *rc, int *sig, bool *reliable, const char *key, sa_error_t *error)
{
    *rc = *sig = -1;
    *reliable = true;
    if (!v || json_is_null(v))
        return true;
    if (json_is_object(v) && (json_object_get(v, "status") || json_object_get(v, "return_code"))) {
        /* {status, return_code, signal}: v0.0.40+ verbose form is exact; older sacct
         * forms (status a plain string) report SUCCESS/0 for every exited job. */
        const json_t *status = json_object_get(v, "status");
        const json_t *signal = json_object_get(v, "signal");
        sa_noval_t nv;
        *reliable = !status || json_is_array(status);
        if (!sa_json_noval(json_object_get(v, "return_code"), false, &nv, key, error))
            return false;
        if (nv.set && nv.value >= 0 && nv.value <= 255)
            *rc = (int)nv.value;
        *sig = 0;
        if (signal && json_is_object(signal)) {
            const json_t *id = json_object_get(signal, "id");
            if (!id)
                id = json_object_get(signal, "signal_id");
            if (!sa_json_noval(id, false, &nv, key, error))
                return false;
            if (nv.set && nv.value > 0 && nv.value < 128) {
                *sig = (int)nv.value;
                if (*rc < 0)
                    *rc = 0;
            }
        }
        return true;
    }
    {
        sa_noval_t nv;
        if (!sa_json_noval(v, false, &nv, key, error))
            return false;
        if (nv.set)
            decode_wait_status(nv.value, rc, sig);
    }
    return true;
}

/* Strips "data_parser/", "openapi/", a leading "db" -> "v0.0.38". */
static char *normalise_parser(const char *s)
{
    const char *p = s;
    if (!s || !*s)
        return NULL;
    if (strncmp(p, "data_parser/", 12) == 0)
        p += 12;
    else if (strncmp(p, "openapi/", 8) == 0)
        p += 8;
    if (strncmp(p, "db", 2) == 0)
        p += 2;
    if (p[0] != 'v')
        return NULL;
    return strdup(p);
}

void sa_json_meta(const json_t *meta, sa_meta_t *m)
{
    const json_t *plugin, *plugins, *slurm, *v;

    if (!json_is_object(meta))
        return;
    plugin = json_object_get(meta, "plugin");
    plugins = json_object_get(meta, "plugins");
    slurm = json_object_get(meta, "slurm");
    if (!slurm)
        slurm = json_object_get(meta, "Slurm");
    if (!m->data_parser) {
        const char *dp = NULL;
        if ((v = json_object_get(plugin, "data_parser")) && json_is_string(v) && json_string_length(v))
            dp = json_string_value(v);
        else if ((v = json_object_get(plugins, "data_parser")) && json_is_string(v))
            dp = json_string_value(v);
        else if ((v = json_object_get(plugin, "type")) && json_is_string(v))
            dp = json_string_value(v);
        m->data_parser = normalise_parser(dp);
    }
    if (!m->slurm_release && (v = json_object_get(slurm, "release")) && json_is_string(v) &&
        json_string_length(v))
        m->slurm_release = strdup(json_string_value(v));
    if (!m->cluster && (v = json_object_get(slurm, "cluster")) && json_is_string(v) && json_string_length(v))
        m->cluster = strdup(json_string_value(v));
}
