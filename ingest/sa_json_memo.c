/*
 * sa_json_memo.c - decodes a record member by member, reusing the value decoded from
 * the same text under the same key in an earlier record (see sa_json_memo.h).
 *
 * The memo maps the text of a key (as printed, quotes included) to its decoded key
 * and to the last value text seen under it with that text's decoded value. Its entries
 * are a vector found through an sa_map (schema/core/sa_map.h); it stops taking keys at MEMO_MAX_KEYS (a document
 * whose records all have different keys then decodes without it); value texts
 * longer than MEMO_MAX_VALUE (a job_resources listing every core) are not kept.
 */
#include "sa_json_memo.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_map.h"
#include "sa_vec.h"

#define MEMO_MAX_KEYS 1024
#define MEMO_MAX_VALUE 4096

typedef struct {
    char *key_text;
    size_t key_len;
    uint64_t hash;
    json_t *key;    /* the decoded key, a string */
    char *val_text; /* the last value text kept under this key */
    size_t val_len, val_cap;
    json_t *val;    /* its value; NULL: none kept */
} memo_entry_t;

struct sa_json_memo {
    memo_entry_t *v; /* in the order the keys came */
    size_t n, cap;
    sa_map_t map;    /* key text -> index in v */
};

sa_json_memo_t *sa_json_memo_new(void)
{
    return calloc(1, sizeof(sa_json_memo_t));
}

void sa_json_memo_destroy(sa_json_memo_t *memo)
{
    if (!memo)
        return;
    for (size_t i = 0; i < memo->n; i++) {
        memo_entry_t *e = &memo->v[i];
        free(e->key_text);
        json_decref(e->key);
        free(e->val_text);
        json_decref(e->val);
    }
    free(memo->v);
    sa_map_clear(&memo->map);
    free(memo);
}

/* A key text looked up in the memo. */
typedef struct {
    const char *text;
    size_t len;
    uint64_t hash;
} textkey_t;

static uint64_t entry_hash_at(size_t i, void *ctx)
{
    const sa_json_memo_t *memo = ctx;
    return memo->v[i].hash;
}

static bool entry_eq_at(size_t i, const void *key, void *ctx)
{
    const sa_json_memo_t *memo = ctx;
    const memo_entry_t *e = &memo->v[i];
    const textkey_t *k = key;
    return e->hash == k->hash && e->key_len == k->len && memcmp(e->key_text, k->text, k->len) == 0;
}

/* Decodes one JSON text (any value, nothing after it); NULL when jansson refuses it. */
static json_t *decode(const char *text, size_t len)
{
    json_error_t jerr;
    return json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
}

/*
 * The entry of a key text, created (with the decoded key) when new. *bad is set when
 * the text is not a JSON string. NULL without *bad: no entry (the table is full or
 * out of memory); the caller decodes without the memo.
 */
static memo_entry_t *memo_entry(sa_json_memo_t *memo, const char *text, size_t len, bool *bad)
{
    textkey_t k = {text, len, sa_fnv1a(text, len)};
    size_t i = sa_map_find(&memo->map, k.hash, &k, entry_eq_at, memo);
    memo_entry_t *e;
    uint32_t *slot;
    json_t *key;
    char *copy;

    *bad = false;
    if (i != SIZE_MAX)
        return &memo->v[i];
    if (memo->n >= MEMO_MAX_KEYS)
        return NULL;
    key = decode(text, len);
    if (!key || !json_is_string(key)) {
        json_decref(key);
        *bad = true;
        return NULL;
    }
    if (!(slot = sa_map_slot(&memo->map, k.hash, &k, memo->n, entry_hash_at, entry_eq_at, memo)) ||
        !SA_VEC_GROW(memo->v, memo->cap, memo->n, 1, 64) || !(copy = malloc(len ? len : 1))) {
        json_decref(key);
        return NULL;
    }
    memcpy(copy, text, len);
    e = &memo->v[memo->n];
    memset(e, 0, sizeof *e);
    e->key_text = copy;
    e->key_len = len;
    e->hash = k.hash;
    e->key = key;
    *slot = (uint32_t)memo->n + 1;
    memo->n++;
    return e;
}

/* The value of text under entry e: the kept one when text is the same, else decoded (and kept). */
static json_t *entry_value(memo_entry_t *e, const char *text, size_t len)
{
    json_t *v;

    if (e->val && e->val_len == len && memcmp(e->val_text, text, len) == 0)
        return json_incref(e->val);
    if (!(v = decode(text, len)))
        return NULL;
    json_decref(e->val);
    e->val = NULL;
    if (len <= MEMO_MAX_VALUE) {
        if (e->val_cap < len) {
            char *b = realloc(e->val_text, len);
            if (!b)
                return v; /* not kept */
            e->val_text = b;
            e->val_cap = len;
        }
        memcpy(e->val_text, text, len);
        e->val_len = len;
        e->val = json_incref(v);
    }
    return v;
}

/* Decodes one member and adds it to o; false when it is not a valid member. */
static bool add_member(sa_json_memo_t *memo, json_t *o, const char *kt, size_t kl, const char *vt, size_t vl)
{
    bool bad;
    memo_entry_t *e = memo_entry(memo, kt, kl, &bad);
    json_t *key = NULL, *v;
    bool ok;

    if (bad)
        return false;
    if (e) {
        v = entry_value(e, vt, vl);
        key = json_incref(e->key);
    } else { /* no room in the memo */
        key = decode(kt, kl);
        v = json_is_string(key) ? decode(vt, vl) : NULL;
    }
    /* a key twice: not decoded here, so that the caller's decoding refuses it (JSON_REJECT_DUPLICATES) */
    if (v && json_is_string(key) && json_object_get(o, json_string_value(key))) {
        json_decref(v);
        v = NULL;
    }
    ok = v && json_object_set_new_nocheck(o, json_string_value(key), v) == 0; /* steals v */
    json_decref(key);
    return ok;
}

json_t *sa_json_memo_object(sa_json_memo_t *memo, const char *obj, size_t len, const size_t *seps, size_t nseps)
{
    json_t *o;
    size_t start = 1;

    /* '{' key ':' value (',' key ':' value)* '}' */
    if (len < 2 || obj[0] != '{' || obj[len - 1] != '}' || nseps % 2 == 0)
        return NULL;
    if (!(o = json_object()))
        return NULL;
    for (size_t k = 0; k < nseps; k += 2) {
        size_t colon = seps[k], end = k + 1 < nseps ? seps[k + 1] : len - 1;
        if (obj[colon] != ':' || (k + 1 < nseps && obj[end] != ',') || colon < start || end <= colon ||
            !add_member(memo, o, obj + start, colon - start, obj + colon + 1, end - colon - 1)) {
            json_decref(o);
            return NULL;
        }
        start = end + 1;
    }
    return o;
}
