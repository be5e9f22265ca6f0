/*
 * sa_bson.c - archive documents between jansson and BSON (see sa_bson.h).
 */
#include "sa_bson.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobdoc.h"
#include "sa_model.h"

/* Escapes a key for MongoDB; returns a new string. The empty key becomes "%00". */
static char *escape_key(const char *k)
{
    size_t n = strlen(k), j = 0;
    char *out = malloc(3 * n + 4);
    if (!out)
        return NULL;
    if (n == 0) {
        memcpy(out, "%00", 4);
        return out;
    }
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '%' || k[i] == '.' || (i == 0 && k[i] == '$')) {
            static const char hex[] = "0123456789ABCDEF";
            out[j++] = '%';
            out[j++] = hex[(unsigned char)k[i] >> 4];
            out[j++] = hex[(unsigned char)k[i] & 15];
        } else {
            out[j++] = k[i];
        }
    }
    out[j] = '\0';
    return out;
}

static char *unescape_key(const char *k)
{
    size_t n = strlen(k), j = 0;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '%' && i + 2 < n && strchr("0123456789ABCDEF", k[i + 1]) &&
            strchr("0123456789ABCDEF", k[i + 2])) {
            char hex[3] = {k[i + 1], k[i + 2], 0};
            out[j++] = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            out[j++] = k[i];
        }
    }
    out[j] = '\0';
    return out;
}

static bool append_value(bson_t *out, const char *key, const json_t *v, bool in_extra, bool in_array, int depth,
                         sa_error_t *error);

/* Appends the members of an object under the given mode. */
static bool append_object_members(bson_t *out, const json_t *o, bool in_extra, int depth, sa_error_t *error)
{
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)o, k, v) {
        bool child_extra = in_extra || strcmp(k, "extra") == 0;
        bool ok;
        if (in_extra) {
            char *ek = escape_key(k);
            if (!ek) {
                sa_error_nomem(error);
                return false;
            }
            ok = append_value(out, ek, v, true, false, depth, error);
            free(ek);
        } else {
            ok = append_value(out, k, v, child_extra, false, depth, error);
        }
        if (!ok)
            return false;
    }
    return true;
}

/*
 * Under "extra", a value nested deeper than this is stored as {"_json": "<its JSON text>"}:
 * MongoDB refuses documents nested deeper than 100 levels, and Slurm never nests that deep.
 */
#define EXTRA_MAX_DEPTH 32

static bool append_value(bson_t *out, const char *key, const json_t *v, bool in_extra, bool in_array, int depth,
                         sa_error_t *error)
{
    bool ok = true;

    if (in_extra && depth >= EXTRA_MAX_DEPTH && (json_is_object(v) || json_is_array(v))) {
        char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        bson_t wrap;
        if (!text) {
            sa_error_nomem(error);
            return false;
        }
        ok = BSON_APPEND_DOCUMENT_BEGIN(out, key, &wrap) && BSON_APPEND_UTF8(&wrap, "_json", text) &&
             bson_append_document_end(out, &wrap);
        free(text);
        if (!ok)
            sa_error_set(error, SA_ERR_INPUT, 0, "document member '%s' does not fit in BSON", key);
        return ok;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        bson_t child;
        ok = BSON_APPEND_DOCUMENT_BEGIN(out, key, &child) &&
             append_object_members(&child, v, in_extra, depth + 1, error) && bson_append_document_end(out, &child);
        break;
    }
    case JSON_ARRAY: {
        bson_t child, wrap;
        bson_t *parent = out;
        size_t i;
        json_t *item;
        char idx[24];
        const char *ikey;
        if (in_array) { /* FerretDB refuses arrays directly inside arrays */
            ok = BSON_APPEND_DOCUMENT_BEGIN(out, key, &wrap);
            parent = &wrap;
            key = "_array";
        }
        ok = ok && BSON_APPEND_ARRAY_BEGIN(parent, key, &child);
        json_array_foreach(v, i, item) {
            if (!ok)
                break;
            bson_uint32_to_string((uint32_t)i, &ikey, idx, sizeof idx);
            ok = append_value(&child, ikey, item, in_extra, true, depth + 1, error);
        }
        ok = ok && bson_append_array_end(parent, &child);
        if (in_array)
            ok = ok && bson_append_document_end(out, &wrap);
        break;
    }
    case JSON_STRING:
        ok = bson_append_utf8(out, key, -1, json_string_value(v), (int)json_string_length(v));
        break;
    case JSON_INTEGER:
        /* a time past year ~292 million would overflow as milliseconds: kept as a number */
        if (!in_extra && !in_array && sa_jobdoc_is_time_key(key) && json_integer_value(v) < INT64_MAX / 1000 &&
            json_integer_value(v) > INT64_MIN / 1000)
            ok = BSON_APPEND_DATE_TIME(out, key, (int64_t)json_integer_value(v) * 1000);
        else
            ok = BSON_APPEND_INT64(out, key, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        ok = BSON_APPEND_DOUBLE(out, key, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        ok = BSON_APPEND_BOOL(out, key, json_is_true(v));
        break;
    case JSON_NULL:
        ok = BSON_APPEND_NULL(out, key);
        break;
    }
    if (!ok && error && error->domain == SA_ERR_NONE)
        sa_error_set(error, SA_ERR_MONGO, 0, "document member '%s' does not fit in BSON", key);
    return ok;
}

bool sa_bson_from_json(const json_t *o, bson_t *out, sa_error_t *error)
{
    if (!json_is_object(o)) {
        sa_error_set(error, SA_ERR_MONGO, 0, "a document must be an object");
        return false;
    }
    if (error)
        sa_error_clear(error);
    return append_object_members(out, o, false, 0, error);
}

static json_t *iter_to_json(bson_iter_t *it, bool in_extra, sa_error_t *error);

/* Reads the members of a document or array into a jansson object or array. */
static json_t *container_to_json(bson_iter_t *it, bool is_array, bool in_extra, sa_error_t *error)
{
    bson_iter_t child;
    json_t *out = is_array ? json_array() : json_object();

    if (!out || !bson_iter_recurse(it, &child)) {
        json_decref(out);
        sa_error_set(error, SA_ERR_MONGO, 0, "malformed BSON");
        return NULL;
    }
    while (bson_iter_next(&child)) {
        const char *k = bson_iter_key(&child);
        bool child_extra = in_extra || (!is_array && strcmp(k, "extra") == 0);
        json_t *v;
        if (!is_array && !in_extra && strcmp(k, "_id") == 0)
            continue;
        v = iter_to_json(&child, child_extra, error);
        if (!v) {
            json_decref(out);
            return NULL;
        }
        if (in_extra && json_is_object(v) && json_object_size(v) == 1 && json_is_string(json_object_get(v, "_json"))) {
            /* a subtree nested too deep, kept as its JSON text */
            json_t *inner = json_loads(json_string_value(json_object_get(v, "_json")), JSON_DECODE_ANY, NULL);
            if (inner) {
                json_decref(v);
                v = inner;
            }
        }
        if (is_array) {
            /* an {"_array": [...]} wrapper inside an array is a nested array */
            if (in_extra && json_is_object(v) && json_object_size(v) == 1 &&
                json_is_array(json_object_get(v, "_array"))) {
                json_t *inner = json_incref(json_object_get(v, "_array"));
                json_decref(v);
                v = inner;
            }
            json_array_append_new(out, v);
        } else if (in_extra) {
            char *uk = unescape_key(k);
            json_object_set_new(out, uk ? uk : k, v);
            free(uk);
        } else {
            json_object_set_new(out, k, v);
        }
    }
    return out;
}

static json_t *iter_to_json(bson_iter_t *it, bool in_extra, sa_error_t *error)
{
    switch (bson_iter_type(it)) {
    case BSON_TYPE_DOCUMENT:
        return container_to_json(it, false, in_extra, error);
    case BSON_TYPE_ARRAY:
        return container_to_json(it, true, in_extra, error);
    case BSON_TYPE_UTF8: {
        uint32_t len;
        const char *s = bson_iter_utf8(it, &len);
        return json_stringn(s, len);
    }
    case BSON_TYPE_INT32:
        return json_integer(bson_iter_int32(it));
    case BSON_TYPE_INT64:
        return json_integer(bson_iter_int64(it));
    case BSON_TYPE_DOUBLE:
        return json_real(bson_iter_double(it));
    case BSON_TYPE_BOOL:
        return json_boolean(bson_iter_bool(it));
    case BSON_TYPE_DATE_TIME: {
        int64_t ms = bson_iter_date_time(it);
        return json_integer(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
    }
    case BSON_TYPE_NULL:
        return json_null();
    case BSON_TYPE_OID: {
        char hex[25];
        bson_oid_to_string(bson_iter_oid(it), hex);
        return json_string(hex);
    }
    default:
        /* other BSON types are never written by slurm-ingest */
        return json_null();
    }
}

json_t *sa_bson_to_json(const bson_t *b, sa_error_t *error)
{
    bson_iter_t it;
    json_t *out = json_object();

    if (!out || !bson_iter_init(&it, b)) {
        json_decref(out);
        sa_error_set(error, SA_ERR_MONGO, 0, "malformed BSON document");
        return NULL;
    }
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        json_t *v;
        /* _id: kept when it is ours (a string: sa_jobdoc_id); an ObjectId of an archive written
         * before 0.2 is left out (sa_archive_migrate replaces such documents) */
        if (strcmp(k, "_id") == 0 && !BSON_ITER_HOLDS_UTF8(&it))
            continue;
        v = iter_to_json(&it, strcmp(k, "extra") == 0, error);
        if (!v) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, k, v);
    }
    return out;
}

void sa_bson_append_final_states(bson_t *filter, const char *op)
{
    bson_t st, arr;
    BSON_APPEND_DOCUMENT_BEGIN(filter, "state", &st);
    BSON_APPEND_ARRAY_BEGIN(&st, op, &arr);
    for (uint32_t i = 0; sa_job_final_states[i]; i++) {
        char istr[16];
        const char *ikey;
        bson_uint32_to_string(i, &ikey, istr, sizeof istr);
        BSON_APPEND_UTF8(&arr, ikey, sa_job_final_states[i]);
    }
    bson_append_array_end(&st, &arr);
    bson_append_document_end(filter, &st);
}

int64_t sa_bson_iter_time(const bson_iter_t *it)
{
    if (BSON_ITER_HOLDS_DATE_TIME(it)) {
        int64_t ms = bson_iter_date_time(it);
        /* floor division: dates before 1970 stay correct */
        return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    }
    if (BSON_ITER_HOLDS_INT64(it) || BSON_ITER_HOLDS_INT32(it))
        return bson_iter_as_int64(it);
    return SA_UNSET;
}

int64_t sa_bson_iter_int(const bson_iter_t *it, int64_t def)
{
    if (BSON_ITER_HOLDS_INT64(it) || BSON_ITER_HOLDS_INT32(it) || BSON_ITER_HOLDS_DOUBLE(it))
        return bson_iter_as_int64(it);
    return def;
}

const char *sa_bson_iter_str(const bson_iter_t *it, uint32_t *len)
{
    if (!BSON_ITER_HOLDS_UTF8(it))
        return NULL;
    return bson_iter_utf8(it, len);
}

void sa_bson_append_in_strings(bson_t *b, const char *key, char *const *v, size_t n)
{
    bson_t in, arr;
    BSON_APPEND_DOCUMENT_BEGIN(b, key, &in);
    BSON_APPEND_ARRAY_BEGIN(&in, "$in", &arr);
    for (size_t i = 0; i < n; i++) {
        char istr[16];
        const char *ikey;
        bson_uint32_to_string((uint32_t)i, &ikey, istr, sizeof istr);
        BSON_APPEND_UTF8(&arr, ikey, v[i]);
    }
    bson_append_array_end(&in, &arr);
    bson_append_document_end(b, &in);
}
