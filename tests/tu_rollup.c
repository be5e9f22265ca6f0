/*
 * tu_rollup.c - helpers of the rollup format's unit tests (see tu_rollup.h).
 */
#include "tu_rollup.h"

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
