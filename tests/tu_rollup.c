/*
 * tu_rollup.c - helpers of the rollup format's unit tests (see tu_rollup.h).
 */
#include "tu_rollup.h"

#include <stdlib.h>
#include <string.h>

#include <mongoc/mongoc.h>

bson_t *tu_bson(const char *json)
{
    bson_error_t e;
    bson_t *b = bson_new_from_json((const uint8_t *)json, -1, &e);
    if (!b)
        fail_msg("bad test JSON: %s: %s", e.message, json);
    return b;
}

void tu_contrib_of(sa_jobview_t *v, sa_rollup_contrib_t *c, bson_t **b, const char *json)
{
    sa_error_t err;
    *b = tu_bson(json);
    if (!sa_jobview_read(v, *b, &err))
        fail_msg("job view: %s", err.message);
    if (!sa_rollup_contrib_of(c, v, &err))
        fail_msg("contribution: %s", err.message);
}

void tu_rollup_doc(sa_rollup_doc_t *d, sa_rollup_kind_t kind, int64_t day, int part)
{
    sa_rollup_key_t k = sa_rollup_key("c", kind, day, part);
    sa_error_t err;
    if (!sa_rollup_doc_new(d, &k, &err))
        fail_msg("sa_rollup_doc_new: %s", err.message);
}

void tu_rollup_put(sa_rollup_doc_t *d, const char *id, int64_t v, const char *json)
{
    sa_jobview_t view;
    sa_rollup_contrib_t c;
    sa_error_t err;
    bson_t *b;
    bson_iter_t it;

    sa_jobview_init(&view);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&view, &c, &b, json);
    if (!id && bson_iter_init_find(&it, b, "_id") && BSON_ITER_HOLDS_UTF8(&it))
        id = bson_iter_utf8(&it, NULL);
    if (!id || !sa_rollup_doc_put(d, id, v, &c, &err))
        fail_msg("put into %s: %s", d->id, id ? err.message : "no _id");
    bson_destroy(b);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&view);
}

static uint8_t *tvar_put(uint8_t *p, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    return p;
}

static int64_t tvar_get(const uint8_t *m, size_t len, size_t *pos)
{
    uint64_t u = 0;
    for (int shift = 0; *pos < len && shift < 64; shift += 7) {
        uint8_t b = m[(*pos)++];
        u |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return (int64_t)(u >> 1) ^ (u & 1 ? -1 : 0);
    }
    fail_msg("a rollup document's members are cut");
    return 0;
}

void tu_rollup_as_05(const bson_t *in, bson_t *out)
{
    bson_iter_t it;
    const uint8_t *m = NULL;
    uint32_t mlen = 0;
    bson_subtype_t st;
    uint8_t *o, *p;
    size_t pos = 0;
    bool list = false, wide;

    wide = bson_iter_init_find(&it, in, "nf") && BSON_ITER_HOLDS_INT32(&it) && bson_iter_int32(&it) == SA_RR_NF;
    if (bson_iter_init_find(&it, in, "kind") && BSON_ITER_HOLDS_UTF8(&it))
        list = strcmp(bson_iter_utf8(&it, NULL), sa_rollup_kind_name(SA_ROLLUP_K_LIVE)) == 0 ||
               strcmp(bson_iter_utf8(&it, NULL), sa_rollup_kind_name(SA_ROLLUP_K_ENDED)) == 0;
    if (!wide || !bson_iter_init_find(&it, in, "m") || !BSON_ITER_HOLDS_BINARY(&it)) {
        bson_copy_to_excluding_noinit(in, out, "", NULL);
        return;
    }
    bson_iter_binary(&it, &st, &mlen, &m);
    o = p = malloc(mlen + 1);
    assert_non_null(o);
    while (pos < mlen) {
        int64_t v = tvar_get(m, mlen, &pos), n = tvar_get(m, mlen, &pos), gone = tvar_get(m, mlen, &pos);
        p = tvar_put(tvar_put(tvar_put(p, v), n), gone);
        for (int64_t r = 0; r < n; r++) {
            for (int f = 0; f < SA_RR_NF; f++) {
                int64_t x = tvar_get(m, mlen, &pos);
                if (list && f >= SA_RL_PLAN && f <= SA_RL_TASKS)
                    x = 0;
                if (f < SA_RR_NF_05)
                    p = tvar_put(p, x);
            }
        }
    }
    assert_true(bson_iter_init(&it, in));
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "ht") == 0)
            continue;
        if (strcmp(k, "nf") == 0)
            BSON_APPEND_INT32(out, "nf", SA_RR_NF_05);
        else if (strcmp(k, "m") == 0)
            bson_append_binary(out, "m", -1, BSON_SUBTYPE_BINARY, o, (uint32_t)(p - o));
        else
            assert_true(bson_append_iter(out, k, -1, &it));
    }
    free(o);
}

size_t tu_rollup_store_as_05(struct _mongoc_client_t *client, const char *db, const char *cluster)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(client, db, SA_ROLLUP_COLL);
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_t **docs = NULL;
    size_t n = 0, cap = 0, changed = 0;
    bson_error_t berr;

    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cur = mongoc_collection_find_with_opts(coll, &filter, NULL, NULL);
    while (mongoc_cursor_next(cur, &doc)) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            docs = realloc(docs, cap * sizeof *docs);
            assert_non_null(docs);
        }
        docs[n++] = bson_copy(doc);
    }
    if (mongoc_cursor_error(cur, &berr))
        fail_msg("reading %s's rollups: %s", cluster, berr.message);
    mongoc_cursor_destroy(cur);
    for (size_t i = 0; i < n; i++) {
        bson_t out = BSON_INITIALIZER, q = BSON_INITIALIZER;
        bson_iter_t it;
        tu_rollup_as_05(docs[i], &out);
        if (!bson_equal(&out, docs[i])) {
            assert_true(bson_iter_init_find(&it, docs[i], "_id"));
            assert_true(bson_append_iter(&q, "_id", -1, &it));
            if (!mongoc_collection_replace_one(coll, &q, &out, NULL, NULL, &berr))
                fail_msg("rewriting %s's rollups: %s", cluster, berr.message);
            changed++;
        }
        bson_destroy(&q);
        bson_destroy(&out);
        bson_destroy(docs[i]);
    }
    free(docs);
    bson_destroy(&filter);
    mongoc_collection_destroy(coll);
    return changed;
}
