/*
 * sa_rollup_untyped.c - the writer's lists of job documents whose GPUs have no type yet
 * (sa_rollup_writer.h): "<cluster>:untyped" and "<cluster>:untyped-config", {_v, ids: [...]},
 * each written whole, conditional on the version read.
 */
#include "sa_rollup_writer_private.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 20 /* conflicting writes of a list before giving up */

static char *list_id(const sa_rollup_writer_t *w, bool waiting)
{
    return sa_rollup_writer_doc_id(w, waiting ? SA_ROLLUP_K_WAITING : SA_ROLLUP_K_UNTYPED);
}

bool sa_rollup_untyped_list(sa_rollup_writer_t *w, bool waiting, sa_strv_t *ids, int64_t *v, sa_error_t *error)
{
    char *id = list_id(w, waiting);
    bson_t *doc = NULL;
    bool ok = id && sa_docstore_get(w->store, SA_ROLLUP_COLL, id, &doc, error);

    *v = 0;
    if (!id)
        ok = sa_error_nomem(error);
    if (ok && doc) {
        bson_iter_t it, arr;
        if (bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
            *v = bson_iter_as_int64(&it);
        if (bson_iter_init_find(&it, doc, "ids") && BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &arr)) {
            while (ok && bson_iter_next(&arr)) {
                if (BSON_ITER_HOLDS_UTF8(&arr) && !sa_strv_push(ids, bson_iter_utf8(&arr, NULL)))
                    ok = sa_error_nomem(error);
            }
        }
        if (*v == 0)
            *v = SA_DOCSTORE_UNVERSIONED;
    }
    if (doc)
        bson_destroy(doc);
    free(id);
    return ok;
}

/* Writes the list (stored at version v, 0: none) as the next version; *conflict when it changed since. */
static bool list_write(sa_rollup_writer_t *w, bool waiting, const sa_strv_t *ids, int64_t v, bool *conflict,
                       sa_error_t *error)
{
    bson_t doc = BSON_INITIALIZER, arr;
    char *id = list_id(w, waiting);
    bool ok;

    *conflict = false;
    if (!id)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(&doc, "_id", id);
    BSON_APPEND_INT64(&doc, "_v", (v > 0 ? v : 0) + 1);
    BSON_APPEND_ARRAY_BEGIN(&doc, "ids", &arr);
    for (size_t i = 0; i < ids->n; i++) {
        char ib[16];
        const char *ik;
        bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
        BSON_APPEND_UTF8(&arr, ik, ids->v[i]);
    }
    bson_append_array_end(&doc, &arr);
    ok = sa_docstore_put(w->store, SA_ROLLUP_COLL, id, v, &doc, conflict, error);
    if (ok && *conflict)
        w->stats.conflicts++;
    free(id);
    bson_destroy(&doc);
    return ok;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* list := (list - del) + add, sorted and unique. */
static bool list_apply(sa_strv_t *list, const sa_strv_t *add, const sa_strv_t *del)
{
    size_t out = 0;
    for (size_t i = 0; i < list->n; i++) {
        if (sa_strv_contains(del, list->v[i]))
            free(list->v[i]);
        else
            list->v[out++] = list->v[i];
    }
    list->n = out;
    for (size_t i = 0; i < add->n; i++) {
        if (!sa_strv_push(list, add->v[i]))
            return false;
    }
    if (list->n > 1)
        qsort(list->v, list->n, sizeof *list->v, str_cmp);
    out = 0;
    for (size_t i = 0; i < list->n; i++) {
        if (out > 0 && strcmp(list->v[out - 1], list->v[i]) == 0)
            free(list->v[i]);
        else
            list->v[out++] = list->v[i];
    }
    list->n = out;
    return true;
}

/* The waiting list keeps its SA_ROLLUP_WAITING_MAX newest jobs (by job id): the oldest leave first. */
static void cap_waiting(sa_strv_t *list)
{
    size_t drop;
    if (list->n <= SA_ROLLUP_WAITING_MAX)
        return;
    qsort(list->v, list->n, sizeof *list->v, sa_rollup_id_job_cmp);
    drop = list->n - SA_ROLLUP_WAITING_MAX;
    for (size_t i = 0; i < drop; i++)
        free(list->v[i]);
    memmove(list->v, list->v + drop, SA_ROLLUP_WAITING_MAX * sizeof *list->v);
    list->n = SA_ROLLUP_WAITING_MAX;
    qsort(list->v, list->n, sizeof *list->v, str_cmp);
}

/* True when a and b hold the same ids. */
static bool same_set(const sa_strv_t *a, const sa_strv_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (!sa_strv_contains(b, a->v[i]))
            return false;
    }
    return true;
}

bool sa_rollup_untyped_update(sa_rollup_writer_t *w, bool waiting, const sa_strv_t *add, const sa_strv_t *del,
                              sa_error_t *error)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        sa_strv_t list, old;
        int64_t v;
        bool conflict = false, ok;
        sa_strv_init(&list);
        sa_strv_init(&old);
        ok = sa_rollup_untyped_list(w, waiting, &list, &v, error);
        for (size_t i = 0; ok && i < list.n; i++)
            ok = sa_strv_push(&old, list.v[i]) || sa_error_nomem(error);
        ok = ok && (list_apply(&list, add, del) || sa_error_nomem(error));
        if (ok && waiting)
            cap_waiting(&list);
        if (ok && !same_set(&list, &old)) /* the same set again: nothing to write */
            ok = list_write(w, waiting, &list, v, &conflict, error);
        sa_strv_clear(&list);
        sa_strv_clear(&old);
        if (!ok)
            return false;
        if (!conflict)
            return true;
    }
    sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: the rollups' untyped list kept changing while being written",
                 w->hosts);
    return false;
}
