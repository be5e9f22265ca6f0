/*
 * sa_rollup_ended.c - the final job documents that ended in a span, from the rollups'
 * ended lists (sa_rollup_ended_ids, sa_rollup_writer.h): what the Prometheus import asks
 * about, read by _id at the last commit.
 */
#include "sa_rollup_writer.h"

#include <stdlib.h>
#include <string.h>

#include "sa_vec.h"

typedef struct {
    const char *cluster;
    int64_t seq, after, to;
    sa_strv_t *ids;
    int64_t **ends;
    size_t *ends_cap;
    bool newer; /* a document was written twice since the commit was read */
} ended_t;

static bool on_ended(const bson_t *b, void *ctx, sa_error_t *error)
{
    ended_t *e = ctx;
    sa_rollup_doc_t d;
    bson_t prev;
    bool ok;

    switch (sa_rollup_version(b, e->seq, &prev)) {
    case SA_ROLLUP_VER_ABSENT: return true;
    case SA_ROLLUP_VER_NEWER: e->newer = true; return true;
    case SA_ROLLUP_VER_PREV: b = &prev; break;
    case SA_ROLLUP_VER_THIS: break;
    }
    sa_rollup_doc_init(&d);
    ok = sa_rollup_doc_read(&d, e->cluster, b, error);
    for (size_t i = 0; ok && i < d.nm; i++) {
        const sa_rollup_member_t *m = &d.m[i];
        if (!m->nrec || m->rec[SA_RR_END] <= e->after || m->rec[SA_RR_END] > e->to)
            continue;
        if (!SA_VEC_GROW(*e->ends, *e->ends_cap, e->ids->n, 1, 256) || !sa_strv_push(e->ids, m->id))
            ok = sa_error_nomem(error);
        else
            (*e->ends)[e->ids->n - 1] = m->rec[SA_RR_END];
    }
    sa_rollup_doc_clear(&d);
    return ok;
}

/*
 * The parts of cluster's ended lists of day at commit c: the month's parts index when the
 * commit says there is one (a month without its document holds none), else every part.
 */
static bool ended_mask(sa_docstore_t *store, const char *cluster, const sa_rollup_commit_t *c, int64_t day,
                       int64_t *month, sa_rollup_parts_t *p, uint64_t *mask, bool *newer, sa_error_t *error)
{
    if (!c->parts) {
        *mask = UINT64_MAX;
        return true;
    }
    if (*month != sa_rollup_month(day)) {
        sa_rollup_key_t k = sa_rollup_key(cluster, SA_ROLLUP_K_PARTS, sa_rollup_month(day), 0);
        char *id = sa_rollup_key_id(&k);
        bson_t *doc = NULL, prev;

        if (!id)
            return sa_error_nomem(error);
        memset(p, 0, sizeof *p);
        if (!sa_docstore_get(store, SA_ROLLUP_COLL, id, &doc, error)) {
            free(id);
            return false;
        }
        free(id);
        if (doc) {
            switch (sa_rollup_version(doc, c->seq, &prev)) {
            case SA_ROLLUP_VER_THIS: sa_rollup_parts_read(p, doc); break;
            case SA_ROLLUP_VER_PREV: sa_rollup_parts_read(p, &prev); break;
            case SA_ROLLUP_VER_ABSENT: break;
            case SA_ROLLUP_VER_NEWER: *newer = true; break;
            }
            bson_destroy(doc);
        }
        *month = sa_rollup_month(day);
    }
    *mask = sa_rollup_parts_of(p, SA_ROLLUP_K_ENDED, day);
    return true;
}

bool sa_rollup_ended_ids(sa_docstore_t *store, const char *cluster, int64_t after, int64_t to, sa_strv_t *ids,
                         int64_t **ends, size_t *ends_cap, sa_error_t *error)
{
    sa_rollup_key_t ck = sa_rollup_key(cluster, SA_ROLLUP_K_COMMIT, 0, 0);
    char *cid = sa_rollup_key_id(&ck);
    sa_rollup_commit_t c;
    bson_t *cdoc = NULL;
    size_t n0 = ids->n;
    bool ok;

    if (!cid)
        return sa_error_nomem(error);
    sa_rollup_commit_init(&c);
    for (int attempt = 0;; attempt++) {
        ended_t e = {cluster, 0, after, to, ids, ends, ends_cap, false};
        sa_rollup_parts_t pidx;
        int64_t month = INT64_MIN;
        uint64_t mask = 0;
        sa_strv_t parts;
        sa_strv_init(&parts);
        ok = sa_docstore_get(store, SA_ROLLUP_COLL, cid, &cdoc, error) && sa_rollup_commit_read(&c, cdoc, error);
        if (cdoc)
            bson_destroy(cdoc);
        cdoc = NULL;
        e.seq = c.seq;
        for (int64_t day = sa_rollup_day(after < 0 ? 0 : after); ok && to >= after && to >= 0 && day <= sa_rollup_day(to);
             day += SA_DAY) {
            ok = ended_mask(store, cluster, &c, day, &month, &pidx, &mask, &e.newer, error) &&
                 sa_rollup_key_part_ids(&parts, cluster, SA_ROLLUP_K_ENDED, day, mask, error) &&
                 (!parts.n || sa_docstore_find(store, SA_ROLLUP_COLL, parts.v, parts.n, 0, NULL, on_ended, &e, error));
            sa_strv_clear(&parts);
        }
        if (!ok || !e.newer)
            break;
        while (ids->n > n0) /* read again from the newer commit */
            free(ids->v[--ids->n]);
        if (attempt == 5) {
            sa_error_set(error, SA_ERR_LOCKED, 0, "the ended lists of %s kept changing while being read", cluster);
            ok = false;
            break;
        }
    }
    sa_rollup_commit_clear(&c);
    free(cid);
    return ok;
}
