/*
 * sa_json_memo.c - decodes a record member by member, reusing the value decoded from
 * the same text under the same key in an earlier record (see sa_json_memo.h).
 *
 * The memo maps the text of a key (as printed, quotes included) to its decoded key
 * and to the last value text seen under it with that text's decoded value. It is an
 * open-addressing hash table that stops taking keys at MEMO_MAX_KEYS (a document
 * whose records all have different keys then decodes without it); value texts
 * longer than MEMO_MAX_VALUE (a job_resources listing every core) are not kept.
 */
#include "sa_json_memo.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX_KEYS 1024
#define MEMO_MAX_VALUE 4096

typedef struct {
    char *key_text; /* NULL: a free slot */
    size_t key_len;
    uint64_t hash;
    json_t *key;    /* the decoded key, a string */
    char *val_text; /* the last value text kept under this key */
    size_t val_len, val_cap;
    json_t *val;    /* its value; NULL: none kept */
} memo_entry_t;

struct sa_json_memo {
    memo_entry_t *slots;
    size_t cap, n; /* cap is a power of two; n <= cap / 2 */
};

sa_json_memo_t *sa_json_memo_new(void)
{
    return calloc(1, sizeof(sa_json_memo_t));
}

void sa_json_memo_destroy(sa_json_memo_t *memo)
{
    if (!memo)
        return;
    for (size_t i = 0; i < memo->cap; i++) {
        memo_entry_t *e = &memo->slots[i];
        if (!e->key_text)
            continue;
        free(e->key_text);
        json_decref(e->key);
        free(e->val_text);
        json_decref(e->val);
    }
    free(memo->slots);
    free(memo);
}

/* FNV-1a over the key text. */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* Decodes one JSON text (any value, nothing after it); NULL when jansson refuses it. */
static json_t *decode(const char *text, size_t len)
{
    json_error_t jerr;
    return json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
}

/* Doubles the table (or makes the first one); false on OOM. */
static bool memo_grow(sa_json_memo_t *memo)
{
    size_t cap = memo->cap ? memo->cap * 2 : 256;
    memo_entry_t *slots = calloc(cap, sizeof *slots);

    if (!slots)
        return false;
    for (size_t i = 0; i < memo->cap; i++) {
        memo_entry_t *e = &memo->slots[i];
        size_t j;
        if (!e->key_text)
            continue;
        for (j = (size_t)e->hash & (cap - 1); slots[j].key_text; j = (j + 1) & (cap - 1))
            ;
        slots[j] = *e;
    }
    free(memo->slots);
    memo->slots = slots;
    memo->cap = cap;
    return true;
}

/*
 * The entry of a key text, created (with the decoded key) when new. *bad is set when
 * the text is not a JSON string. NULL without *bad: no entry (the table is full or
 * out of memory); the caller decodes without the memo.
 */
static memo_entry_t *memo_entry(sa_json_memo_t *memo, const char *text, size_t len, bool *bad)
{
    uint64_t h = text_hash(text, len);
    memo_entry_t *e = NULL;
    size_t j;
    json_t *key;
    char *copy;

    *bad = false;
    for (j = memo->cap ? (size_t)h & (memo->cap - 1) : 0; memo->cap && memo->slots[j].key_text;
         j = (j + 1) & (memo->cap - 1)) {
        e = &memo->slots[j];
        if (e->hash == h && e->key_len == len && memcmp(e->key_text, text, len) == 0)
            return e;
    }
    if (memo->n >= MEMO_MAX_KEYS)
        return NULL;
    key = decode(text, len);
    if (!key || !json_is_string(key)) {
        json_decref(key);
        *bad = true;
        return NULL;
    }
    if ((memo->n + 1 > memo->cap / 2 && !memo_grow(memo)) || !(copy = malloc(len ? len : 1))) {
        json_decref(key);
        return NULL;
    }
    memcpy(copy, text, len);
    for (j = (size_t)h & (memo->cap - 1); memo->slots[j].key_text; j = (j + 1) & (memo->cap - 1))
        ;
    e = &memo->slots[j];
    memset(e, 0, sizeof *e);
    e->key_text = copy;
    e->key_len = len;
    e->hash = h;
    e->key = key;
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
