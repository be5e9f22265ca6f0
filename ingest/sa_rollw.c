/*
 * sa_rollw.c - slurm-ingest's rollup writer (sa_rollw.h).
 */
#include "sa_rollw.h"

#include <stdlib.h>
#include <string.h>

#include "sa_jobview.h"
#include "sa_mongo.h"
#include "sa_rollup.h"
#include "sa_vec.h"

#define MAX_ROUNDS 20   /* conflicting writes of one rollup document before giving up */
#define READ_BATCH 200  /* rollup _ids per $in query */

struct sa_rollw {
    mongoc_collection_t *coll;
    char *hosts, *cluster;
    sa_jobview_t view;
    sa_rcontrib_t oldc, newc;
    sa_rolldoc_t *mini; /* per rollup document touched: the staged members (tombstones for removals) */
    size_t nmini, minicap;
    sa_rollw_stats_t stats;
};

static bool oom(sa_error_t *error)
{
    sa_error_nomem(error);
    return false;
}

sa_rollw_t *sa_rollw_new(mongoc_collection_t *coll, const char *hosts, const char *cluster)
{
    sa_rollw_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->coll = coll;
    w->hosts = strdup(hosts ? hosts : "");
    w->cluster = strdup(cluster);
    sa_jobview_init(&w->view);
    sa_rcontrib_init(&w->oldc);
    sa_rcontrib_init(&w->newc);
    if (!w->hosts || !w->cluster) {
        sa_rollw_free(w);
        return NULL;
    }
    return w;
}

static void minis_clear(sa_rollw_t *w)
{
    for (size_t i = 0; i < w->nmini; i++)
        sa_rolldoc_clear(&w->mini[i]);
    w->nmini = 0;
}

void sa_rollw_free(sa_rollw_t *w)
{
    if (!w)
        return;
    minis_clear(w);
    free(w->mini);
    sa_jobview_clear(&w->view);
    sa_rcontrib_clear(&w->oldc);
    sa_rcontrib_clear(&w->newc);
    free(w->hosts);
    free(w->cluster);
    free(w);
}

const sa_rollw_stats_t *sa_rollw_stats(const sa_rollw_t *w)
{
    return &w->stats;
}

/* The staged document of a day (SA_UNSET: open), created empty. */
static sa_rolldoc_t *mini_of(sa_rollw_t *w, int64_t day, sa_error_t *error)
{
    for (size_t i = 0; i < w->nmini; i++) {
        if (w->mini[i].day == day)
            return &w->mini[i];
    }
    if (!SA_VEC_GROW(w->mini, w->minicap, w->nmini, 1, 8)) {
        oom(error);
        return NULL;
    }
    if (!sa_rolldoc_new(&w->mini[w->nmini], w->cluster, day, error))
        return NULL;
    w->mini[w->nmini].tombstones = true;
    return &w->mini[w->nmini++];
}

/* The contribution of a job document (none when doc is NULL or not of this cluster). */
static bool contrib(sa_rollw_t *w, const bson_t *doc, sa_rcontrib_t *c, sa_error_t *error)
{
    c->ndays = 0;
    if (!doc)
        return true;
    if (!sa_jobview_read(&w->view, doc, error))
        return false;
    if (!w->view.cluster || strcmp(w->view.cluster, w->cluster) != 0)
        return true;
    return sa_rcontrib_of(c, &w->view, error);
}

static bool has_day(const sa_rcontrib_t *c, int64_t day)
{
    for (size_t i = 0; i < c->ndays; i++) {
        if (c->days[i].day == day)
            return true;
    }
    return false;
}

bool sa_rollw_stage(sa_rollw_t *w, const char *id, int64_t v, const bson_t *old_doc, const bson_t *new_doc,
                    bool with_open, sa_error_t *error)
{
    if (!contrib(w, old_doc, &w->oldc, error) || !contrib(w, new_doc, &w->newc, error))
        return false;
    w->stats.staged++;
    /* the new records in every day they touch, and removals from days only the old one touched */
    for (size_t i = 0; i < w->newc.ndays; i++) {
        sa_rolldoc_t *m = mini_of(w, w->newc.days[i].day, error);
        if (!m || !sa_rolldoc_put(m, id, v, &w->newc, error))
            return false;
    }
    for (size_t i = 0; i < w->oldc.ndays; i++) {
        sa_rolldoc_t *m;
        if (has_day(&w->newc, w->oldc.days[i].day))
            continue;
        if (!(m = mini_of(w, w->oldc.days[i].day, error)) || !sa_rolldoc_put(m, id, v, NULL, error))
            return false;
    }
    if (with_open && !has_day(&w->newc, SA_UNSET) && !has_day(&w->oldc, SA_UNSET)) {
        sa_rolldoc_t *m = mini_of(w, SA_UNSET, error);
        if (!m || !sa_rolldoc_put(m, id, v, NULL, error))
            return false;
    }
    return true;
}

/* ---- reading and writing rollup documents ---------------------------------------------------- */

static void append_ids(bson_t *filter, char *const *ids, size_t n)
{
    bson_t in, arr;
    char ib[16];
    const char *ik;
    BSON_APPEND_DOCUMENT_BEGIN(filter, "_id", &in);
    BSON_APPEND_ARRAY_BEGIN(&in, "$in", &arr);
    for (size_t i = 0; i < n; i++) {
        bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
        BSON_APPEND_UTF8(&arr, ik, ids[i]);
    }
    bson_append_array_end(&in, &arr);
    bson_append_document_end(filter, &in);
}

/* Reads the stored documents of the ids (docs[i] stays new, _v 0, when not stored). */
static bool read_docs(sa_rollw_t *w, char *const *ids, sa_rolldoc_t *docs, size_t n, sa_error_t *error)
{
    sa_rolldoc_t got;
    bool ok = true;

    sa_rolldoc_init(&got);
    for (size_t off = 0; ok && off < n; off += READ_BATCH) {
        size_t end = off + READ_BATCH < n ? off + READ_BATCH : n;
        bson_t filter = BSON_INITIALIZER;
        mongoc_cursor_t *cur;
        const bson_t *b;
        bson_error_t berr;

        append_ids(&filter, ids + off, end - off);
        cur = mongoc_collection_find_with_opts(w->coll, &filter, NULL, NULL);
        while (ok && mongoc_cursor_next(cur, &b)) {
            if (!(ok = sa_rolldoc_read(&got, b, error)))
                break;
            w->stats.docs_read++;
            for (size_t i = off; i < end; i++) {
                if (strcmp(ids[i], got.id) == 0) {
                    sa_rolldoc_clear(&docs[i]);
                    docs[i] = got;
                    sa_rolldoc_init(&got);
                    break;
                }
            }
        }
        if (ok && mongoc_cursor_error(cur, &berr)) {
            sa_mongo_error(error, w->hosts, "reading rollups", &berr);
            ok = false;
        }
        mongoc_cursor_destroy(cur);
        bson_destroy(&filter);
    }
    sa_rolldoc_clear(&got);
    return ok;
}

/* Writes d (stored at d->v; 0: new) as version d->v + 1; *conflict when someone wrote it since. */
static bool write_doc(sa_rollw_t *w, const sa_rolldoc_t *d, bool *conflict, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER, reply;
    bson_error_t berr;
    bool ok;

    *conflict = false;
    if (!sa_rolldoc_to_bson(d, d->v + 1, &b, error)) {
        bson_destroy(&b);
        return false;
    }
    if (d->v == 0) {
        ok = mongoc_collection_insert_one(w->coll, &b, NULL, NULL, &berr);
        if (!ok && berr.code == 11000) {
            *conflict = true;
            ok = true;
        }
    } else {
        BSON_APPEND_UTF8(&filter, "_id", d->id);
        BSON_APPEND_INT64(&filter, "_v", d->v);
        ok = mongoc_collection_replace_one(w->coll, &filter, &b, NULL, &reply, &berr);
        if (ok) {
            bson_iter_t it;
            *conflict = !(bson_iter_init_find(&it, &reply, "matchedCount") && bson_iter_as_int64(&it) == 1);
        }
        bson_destroy(&reply);
    }
    if (!ok)
        sa_mongo_error(error, w->hosts, "writing rollups", &berr);
    else if (*conflict)
        w->stats.conflicts++;
    else
        w->stats.docs_written++;
    bson_destroy(&b);
    bson_destroy(&filter);
    return ok;
}

bool sa_rollw_flush(sa_rollw_t *w, sa_error_t *error)
{
    size_t n = w->nmini;
    char **ids = calloc(n ? n : 1, sizeof *ids);
    bool *pending = calloc(n ? n : 1, sizeof *pending);
    bool ok = ids && pending;

    if (!ok)
        oom(error);
    for (size_t i = 0; ok && i < n; i++) {
        ids[i] = w->mini[i].id;
        pending[i] = true;
    }
    for (int round = 0; ok; round++) {
        size_t np = 0;
        char **pids = NULL;
        sa_rolldoc_t *pdocs = NULL;
        for (size_t i = 0; i < n; i++)
            np += pending[i];
        if (!np)
            break;
        if (round == MAX_ROUNDS) {
            sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: rollup documents kept changing while being written "
                                                 "(%d attempts): is another slurm-ingest writing this cluster?",
                         w->hosts, MAX_ROUNDS);
            ok = false;
            break;
        }
        pids = calloc(np, sizeof *pids);
        pdocs = calloc(np, sizeof *pdocs);
        if (!pids || !pdocs) {
            free(pids);
            free(pdocs);
            ok = oom(error);
            break;
        }
        for (size_t i = 0, k = 0; i < n; i++) {
            if (pending[i])
                pids[k++] = ids[i];
        }
        for (size_t k = 0; ok && k < np; k++) {
            size_t i = 0;
            while (ids[i] != pids[k])
                i++;
            ok = sa_rolldoc_new(&pdocs[k], w->cluster, w->mini[i].day, error);
        }
        ok = ok && read_docs(w, pids, pdocs, np, error);
        for (size_t k = 0, i = 0; ok && k < np; k++, i++) {
            bool conflict = false;
            while (ids[i] != pids[k])
                i++;
            pdocs[k].changed = false;
            if (!sa_rolldoc_merge(&pdocs[k], &w->mini[i], error)) {
                ok = false;
                break;
            }
            if (pdocs[k].changed && !write_doc(w, &pdocs[k], &conflict, error)) {
                ok = false;
                break;
            }
            pending[i] = conflict;
        }
        for (size_t k = 0; k < np; k++)
            sa_rolldoc_clear(&pdocs[k]);
        free(pdocs);
        free(pids);
    }
    free(ids);
    free(pending);
    if (ok)
        minis_clear(w);
    return ok;
}

/* ---- rebuild and verify ------------------------------------------------------------------------ */

/* Every rollup document of a cluster, by _id (sorted). */
typedef struct {
    sa_rolldoc_t *v;
    size_t n, cap;
} docset_t;

static void docset_clear(docset_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        sa_rolldoc_clear(&s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static size_t docset_pos(const docset_t *s, const char *id, bool *found)
{
    size_t lo = 0, hi = s->n;
    *found = false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strcmp(s->v[mid].id, id);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The document of a day in s, created empty (NULL on out of memory). */
static sa_rolldoc_t *docset_get(docset_t *s, const char *cluster, int64_t day, sa_error_t *error)
{
    char *id = sa_rollup_id(cluster, day);
    bool found;
    size_t pos;
    if (!id) {
        oom(error);
        return NULL;
    }
    pos = docset_pos(s, id, &found);
    free(id);
    if (found)
        return &s->v[pos];
    if (!SA_VEC_GROW(s->v, s->cap, s->n, 1, 64)) {
        oom(error);
        return NULL;
    }
    memmove(&s->v[pos + 1], &s->v[pos], (s->n - pos) * sizeof *s->v);
    s->n++;
    if (!sa_rolldoc_new(&s->v[pos], cluster, day, error)) {
        memmove(&s->v[pos], &s->v[pos + 1], (--s->n - pos) * sizeof *s->v);
        return NULL;
    }
    return &s->v[pos];
}

/* Adds the contribution of every job document of coll of the cluster to s. */
static bool compute_coll(mongoc_collection_t *coll, const char *hosts, const char *cluster, docset_t *s,
                         sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *b;
    bson_error_t berr;
    sa_jobview_t view;
    sa_rcontrib_t c;
    bool ok = true;

    sa_jobview_init(&view);
    sa_rcontrib_init(&c);
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    cur = mongoc_collection_find_with_opts(coll, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cur, &b)) {
        bson_iter_t it;
        int64_t v = 0;
        if (!(ok = sa_jobview_read(&view, b, error) && sa_rcontrib_of(&c, &view, error)))
            break;
        if (!view.has_id || view.id.value_type != BSON_TYPE_UTF8)
            continue; /* an archive of 0.1 not migrated yet: slurm-ingest migrates it first */
        if (bson_iter_init_find(&it, b, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
            v = bson_iter_as_int64(&it);
        for (size_t d = 0; ok && d < c.ndays; d++) {
            sa_rolldoc_t *doc = docset_get(s, cluster, c.days[d].day, error);
            ok = doc && sa_rolldoc_put(doc, view.id.value.v_utf8.str, v, &c, error);
        }
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, hosts, "reading job documents", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    bson_destroy(&opts);
    sa_rcontrib_clear(&c);
    sa_jobview_clear(&view);
    return ok;
}

/* Reads the stored rollup documents of the cluster into s. */
static bool read_stored(mongoc_collection_t *coll, const char *hosts, const char *cluster, docset_t *s,
                        sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *b;
    bson_error_t berr;
    sa_rolldoc_t d;
    bool ok = true;

    sa_rolldoc_init(&d);
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cur = mongoc_collection_find_with_opts(coll, &filter, NULL, NULL);
    while (ok && mongoc_cursor_next(cur, &b)) {
        bool found;
        size_t pos;
        if (!(ok = sa_rolldoc_read(&d, b, error)))
            break;
        pos = docset_pos(s, d.id, &found);
        if (found || !SA_VEC_GROW(s->v, s->cap, s->n, 1, 64)) {
            ok = found ? (sa_error_set(error, SA_ERR_MONGO, 0, "rollup %s stored twice", d.id), false) : oom(error);
            break;
        }
        memmove(&s->v[pos + 1], &s->v[pos], (s->n - pos) * sizeof *s->v);
        s->v[pos] = d;
        s->n++;
        sa_rolldoc_init(&d);
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, hosts, "reading rollups", &berr);
        ok = false;
    }
    sa_rolldoc_clear(&d);
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    return ok;
}

/* Replaces the stored rollups of the cluster by the computed ones (and removes the others). */
static bool replace_all(mongoc_collection_t *coll, const char *hosts, const docset_t *want, const docset_t *have,
                        sa_error_t *error)
{
    bson_error_t berr;
    bool ok = true;

    for (size_t i = 0; ok && i < want->n; i++) {
        const sa_rolldoc_t *d = &want->v[i];
        bool found;
        size_t pos = docset_pos(have, d->id, &found);
        int64_t v = found ? have->v[pos].v : 0;
        bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
        if (found && sa_rolldoc_equal(d, &have->v[pos]))
            continue;
        if (!sa_rolldoc_to_bson(d, v + 1, &b, error)) {
            bson_destroy(&b);
            return false;
        }
        BSON_APPEND_UTF8(&filter, "_id", d->id);
        BSON_APPEND_BOOL(&opts, "upsert", true);
        ok = mongoc_collection_replace_one(coll, &filter, &b, &opts, NULL, &berr);
        bson_destroy(&b);
        bson_destroy(&filter);
        bson_destroy(&opts);
    }
    for (size_t i = 0; ok && i < have->n; i++) {
        bool found;
        bson_t filter = BSON_INITIALIZER;
        docset_pos(want, have->v[i].id, &found);
        if (found)
            continue;
        BSON_APPEND_UTF8(&filter, "_id", have->v[i].id);
        ok = mongoc_collection_delete_one(coll, &filter, NULL, NULL, &berr);
        bson_destroy(&filter);
    }
    if (!ok)
        sa_mongo_error(error, hosts, "writing rollups", &berr);
    return ok;
}

bool sa_rollw_rebuild(mongoc_database_t *db, const char *hosts, const char *cluster, bool rebuild, size_t *docs,
                      size_t *differ, FILE *out, sa_error_t *error)
{
    mongoc_collection_t *jobs = mongoc_database_get_collection(db, "jobs");
    mongoc_collection_t *sup = mongoc_database_get_collection(db, "jobs_superseded");
    mongoc_collection_t *roll = mongoc_database_get_collection(db, SA_ROLLUP_COLL);
    docset_t want = {0}, have = {0};
    bool ok;

    *docs = *differ = 0;
    ok = compute_coll(jobs, hosts, cluster, &want, error) && compute_coll(sup, hosts, cluster, &want, error) &&
         read_stored(roll, hosts, cluster, &have, error);
    if (ok) {
        *docs = want.n;
        for (size_t i = 0; i < want.n; i++) {
            bool found;
            size_t pos = docset_pos(&have, want.v[i].id, &found);
            if (found && sa_rolldoc_equal(&want.v[i], &have.v[pos]))
                continue;
            (*differ)++;
            if (out)
                fprintf(out, "rollup %s: %s\n", want.v[i].id, found ? "differs from its job documents" : "missing");
        }
        for (size_t i = 0; i < have.n; i++) {
            bool found;
            docset_pos(&want, have.v[i].id, &found);
            if (found)
                continue;
            (*differ)++;
            if (out)
                fprintf(out, "rollup %s: stored, but no job document contributes to it\n", have.v[i].id);
        }
    }
    if (ok && rebuild)
        ok = replace_all(roll, hosts, &want, &have, error);
    docset_clear(&want);
    docset_clear(&have);
    mongoc_collection_destroy(jobs);
    mongoc_collection_destroy(sup);
    mongoc_collection_destroy(roll);
    return ok;
}
