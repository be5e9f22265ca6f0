/*
 * sa_rollup_journal.c - the rollup writer's journal and recovery (sa_rollup_writer.h).
 *
 * The journal, document "<cluster>:pending" of the rollups collection: {_v, batches:
 * {NONCE: {host, pid, at, jobs: [{id, docs: [rollup _id, ...]}]}}}. Before the archive
 * writes a batch of jobs, each is journaled with the rollup documents its members are in
 * now; after the flush that commits them, the batch leaves. A run that finds a batch of a
 * dead writer reads those jobs again and stages them with the journaled documents, so
 * their members leave the documents they no longer touch. 0.4 journaled "days" (a
 * day's start, + 1 for its ended list, + 2 for its started list; -1 the open runs, -2 - k
 * live shard k): those are read too.
 */
#include "sa_rollup_writer_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sa_vec.h"

#define MAX_ROUNDS 20 /* conflicting writes of the journal before giving up */

/* ---- the journal document ------------------------------------------------------------------------- */

/* Reads the journal: a copy of it (NULL: none) and its version (0: none, SA_DOCSTORE_UNVERSIONED: 0.4's). */
static bool journal_get(sa_rollup_writer_t *w, bson_t **doc, int64_t *v, sa_error_t *error)
{
    char *id = sa_rollup_writer_doc_id(w, SA_ROLLUP_K_JOURNAL);
    bson_iter_t it;
    bool ok = id && sa_docstore_get(w->store, SA_ROLLUP_COLL, id, doc, error);
    free(id);
    if (!id)
        return sa_error_nomem(error);
    *v = SA_DOCSTORE_ABSENT;
    if (ok && *doc)
        *v = bson_iter_init_find(&it, *doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it)
                                                                                 : SA_DOCSTORE_UNVERSIONED;
    return ok;
}

/* Whether batch nonce is among drop[0..ndrop). */
static bool dropped(const char *nonce, char *const *drop, size_t ndrop)
{
    for (size_t i = 0; i < ndrop; i++) {
        if (strcmp(drop[i], nonce) == 0)
            return true;
    }
    return false;
}

/*
 * The journal as stored (doc, version v) minus the batches drop[0..ndrop), plus the batch
 * add (a document under key nonce, may be NULL), as the next version: out.
 */
static bool journal_make(sa_rollup_writer_t *w, const bson_t *doc, int64_t v, char *const *drop, size_t ndrop,
                         const char *nonce, const bson_t *add, bson_t *out, sa_error_t *error)
{
    char *id = sa_rollup_writer_doc_id(w, SA_ROLLUP_K_JOURNAL);
    bson_iter_t it, b;
    bson_t batches;

    if (!id)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(out, "_id", id);
    free(id);
    BSON_APPEND_INT64(out, "_v", (v > 0 ? v : 0) + 1);
    BSON_APPEND_DOCUMENT_BEGIN(out, "batches", &batches);
    if (doc && bson_iter_init_find(&it, doc, "batches") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
        bson_iter_recurse(&it, &b)) {
        while (bson_iter_next(&b)) {
            if (!dropped(bson_iter_key(&b), drop, ndrop) && !bson_append_iter(&batches, NULL, 0, &b))
                return sa_error_nomem(error);
        }
    }
    if (add && !BSON_APPEND_DOCUMENT(&batches, nonce, add))
        return sa_error_nomem(error);
    return bson_append_document_end(out, &batches) || sa_error_nomem(error);
}

/* journal := journal - drop + (nonce: add), conditional on the version read (retried). */
static bool journal_update(sa_rollup_writer_t *w, char *const *drop, size_t ndrop, const char *nonce,
                           const bson_t *add, sa_error_t *error)
{
    char *id = sa_rollup_writer_doc_id(w, SA_ROLLUP_K_JOURNAL);
    bool ok = id != NULL;

    if (!id)
        return sa_error_nomem(error);
    for (int round = 0; ok && round < MAX_ROUNDS; round++) {
        bson_t *doc = NULL, out = BSON_INITIALIZER;
        int64_t v;
        bool conflict = false;
        ok = journal_get(w, &doc, &v, error) && journal_make(w, doc, v, drop, ndrop, nonce, add, &out, error) &&
             sa_docstore_put(w->store, SA_ROLLUP_COLL, id, v, &out, &conflict, error);
        bson_destroy(&out);
        if (doc)
            bson_destroy(doc);
        if (ok && !conflict) {
            free(id);
            return true;
        }
    }
    free(id);
    if (ok)
        sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: the rollups' journal kept changing while being written",
                     w->hosts);
    return false;
}

/* ---- journaling ----------------------------------------------------------------------------------- */

/* The batch of w->jn as a journal batch document. */
static void batch_bson(const sa_rollup_writer_t *w, const char *host, bson_t *batch)
{
    bson_t jobs, job, docs;
    BSON_APPEND_UTF8(batch, "host", host);
    BSON_APPEND_INT64(batch, "pid", w->pid);
    if (w->proc[0])
        BSON_APPEND_UTF8(batch, "proc", w->proc);
    BSON_APPEND_DATE_TIME(batch, "at", (int64_t)time(NULL) * 1000);
    BSON_APPEND_ARRAY_BEGIN(batch, "jobs", &jobs);
    for (size_t i = 0; i < w->njn; i++) {
        char ib[16], db[16];
        const char *ik, *dk;
        bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
        BSON_APPEND_DOCUMENT_BEGIN(&jobs, ik, &job);
        BSON_APPEND_UTF8(&job, "id", w->jn[i].id);
        BSON_APPEND_ARRAY_BEGIN(&job, "docs", &docs);
        for (size_t d = 0; d < w->jn[i].docs.n; d++) {
            bson_uint32_to_string((uint32_t)d, &dk, db, sizeof db);
            BSON_APPEND_UTF8(&docs, dk, w->jn[i].docs.v[d]);
        }
        bson_append_array_end(&job, &docs);
        bson_append_document_end(&jobs, &job);
    }
    bson_append_array_end(batch, &jobs);
}

static void jn_clear(sa_rollup_writer_t *w)
{
    for (size_t i = 0; i < w->njn; i++) {
        free(w->jn[i].id);
        sa_strv_clear(&w->jn[i].docs);
    }
    w->njn = 0;
}

/* Writes the jobs of w->jn as one batch of the journal (nothing when none). */
static bool journal_write(sa_rollup_writer_t *w, sa_error_t *error)
{
    bson_t batch = BSON_INITIALIZER;
    char nonce[96], host[64];
    static unsigned seq;
    bool ok;

    if (!w->njn)
        return true;
    sa_rollup_host(host, sizeof host);
    snprintf(nonce, sizeof nonce, "%s_%lld_%ld_%u", host, (long long)w->pid, (long)time(NULL), seq++);
    batch_bson(w, host, &batch);
    ok = journal_update(w, NULL, 0, nonce, &batch, error);
    bson_destroy(&batch);
    if (ok) {
        jn_clear(w);
        if (!SA_VEC_GROW(w->nonces, w->noncecap, w->nnonces, 1, 4) || !(w->nonces[w->nnonces] = strdup(nonce)))
            return sa_error_nomem(error);
        w->nnonces++;
    }
    return ok;
}

bool sa_rollup_writer_journal(sa_rollup_writer_t *w, const sa_archive_change_t *changes, size_t n,
                              sa_error_t *error)
{
    for (size_t i = 0; i < n; i++) {
        sa_rollup_jentry_t *e;
        if (!SA_VEC_GROW(w->jn, w->jncap, w->njn, 1, 64))
            return sa_error_nomem(error);
        e = &w->jn[w->njn];
        sa_strv_init(&e->docs);
        if (!(e->id = strdup(changes[i].id)))
            return sa_error_nomem(error);
        w->njn++;
        if (!sa_rollup_change_ids(w, &changes[i], &e->docs, error))
            return false;
    }
    return journal_write(w, error);
}

bool sa_rollup_journal_done(sa_rollup_writer_t *w, sa_error_t *error)
{
    bool ok = !w->nnonces || journal_update(w, w->nonces, w->nnonces, NULL, NULL, error);
    if (ok) {
        for (size_t i = 0; i < w->nnonces; i++)
            free(w->nonces[i]);
        w->nnonces = 0;
    }
    return ok;
}

/* ---- recovery --------------------------------------------------------------------------------- */

/* The rollup _id a 0.4 journal's day value named, for job document id (NULL: none it can name). */
static char *doc_of_04(const sa_rollup_writer_t *w, const char *id, int64_t v)
{
    int part = sa_rollup_part_of(id);
    sa_rollup_key_t k;
    if (v == -1)
        k = sa_rollup_key(w->cluster, SA_ROLLUP_K_OPEN, 0, part);
    else if (v <= -2 && v > -2 - SA_ROLLUP_PARTS)
        k = sa_rollup_key(w->cluster, SA_ROLLUP_K_LIVE, 0, part);
    else if (v >= 0 && v - sa_rollup_day(v) == 1)
        k = sa_rollup_key(w->cluster, SA_ROLLUP_K_ENDED, v, part);
    else if (v >= 0 && v - sa_rollup_day(v) == 2)
        k = sa_rollup_key(w->cluster, SA_ROLLUP_K_STARTED, v, part);
    else if (v >= 0)
        k = sa_rollup_key(w->cluster, SA_ROLLUP_K_MEMBERS, v, part);
    else
        return NULL;
    return sa_rollup_key_id(&k);
}

/* Reads the job document id from jobs, else jobs_superseded (*doc NULL: in neither). */
static bool read_job(sa_rollup_writer_t *w, const char *id, bson_t **doc, sa_error_t *error)
{
    return sa_docstore_get(w->store, "jobs", id, doc, error) &&
           (*doc || sa_docstore_get(w->store, "jobs_superseded", id, doc, error));
}

/* Restages the jobs of one journaled batch. */
static bool recover_batch(sa_rollup_writer_t *w, bson_iter_t *batch, size_t *njobs, sa_error_t *error)
{
    bson_iter_t arr, job, d;
    if (!bson_iter_find(batch, "jobs") || !BSON_ITER_HOLDS_ARRAY(batch) || !bson_iter_recurse(batch, &arr))
        return true;
    while (bson_iter_next(&arr)) {
        const char *id = NULL;
        sa_strv_t docs;
        bson_t *doc = NULL;
        bool ok = true;
        if (!BSON_ITER_HOLDS_DOCUMENT(&arr) || !bson_iter_recurse(&arr, &job))
            continue;
        sa_strv_init(&docs);
        while (ok && bson_iter_next(&job)) {
            const char *k = bson_iter_key(&job);
            if (strcmp(k, "id") == 0 && BSON_ITER_HOLDS_UTF8(&job)) {
                id = bson_iter_utf8(&job, NULL);
            } else if ((strcmp(k, "docs") == 0 || strcmp(k, "days") == 0) && BSON_ITER_HOLDS_ARRAY(&job) &&
                       bson_iter_recurse(&job, &d)) {
                bool days = k[1] == 'a';
                while (ok && bson_iter_next(&d)) {
                    if (!days && BSON_ITER_HOLDS_UTF8(&d)) {
                        ok = sa_strv_push(&docs, bson_iter_utf8(&d, NULL));
                    } else if (days && BSON_ITER_HOLDS_NUMBER(&d) && id) { /* 0.4's: id comes first */
                        char *did = doc_of_04(w, id, bson_iter_as_int64(&d));
                        ok = !did || sa_strv_push(&docs, did);
                        free(did);
                    }
                }
            }
        }
        if (ok && id) {
            bson_iter_t it;
            int64_t v;
            ok = read_job(w, id, &doc, error);
            /* its version as the archive staged it: _v, 0 for one without (jobs_superseded's); gone: whatever */
            v = !doc ? INT64_MAX
                     : bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it) : 0;
            ok = ok && sa_rollup_writer_stage_one(w, id, v, &docs, doc, error);
            if (ok)
                (*njobs)++;
        } else if (!ok) {
            sa_error_nomem(error);
        }
        if (doc)
            bson_destroy(doc);
        sa_strv_clear(&docs);
        if (!ok)
            return false;
    }
    return true;
}


/* The batches of dead writers: their nonces appended to dead; restaged (njobs counts the jobs) when restage. */
static bool walk_dead(sa_rollup_writer_t *w, bool restage, sa_strv_t *dead, size_t *njobs, sa_error_t *error)
{
    bson_t *doc = NULL;
    int64_t v;
    bool ok = journal_get(w, &doc, &v, error);

    if (ok && doc) {
        bson_iter_t it, batches, batch;
        if (bson_iter_init_find(&it, doc, "batches") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
            bson_iter_recurse(&it, &batches)) {
            while (ok && bson_iter_next(&batches)) {
                const char *host = NULL, *proc = NULL;
                int64_t bpid = 0, at = SA_UNSET;
                bson_iter_t x;
                if (!BSON_ITER_HOLDS_DOCUMENT(&batches) || !bson_iter_recurse(&batches, &x))
                    continue;
                while (bson_iter_next(&x)) {
                    if (strcmp(bson_iter_key(&x), "host") == 0 && BSON_ITER_HOLDS_UTF8(&x))
                        host = bson_iter_utf8(&x, NULL);
                    else if (strcmp(bson_iter_key(&x), "proc") == 0 && BSON_ITER_HOLDS_UTF8(&x))
                        proc = bson_iter_utf8(&x, NULL);
                    else if (strcmp(bson_iter_key(&x), "pid") == 0 && BSON_ITER_HOLDS_NUMBER(&x))
                        bpid = bson_iter_as_int64(&x);
                    else if (strcmp(bson_iter_key(&x), "at") == 0 && BSON_ITER_HOLDS_DATE_TIME(&x))
                        at = bson_iter_date_time(&x) / 1000;
                }
                if (!sa_rollup_writer_dead(w, host, bpid, proc, at))
                    continue;
                ok = (!restage || (bson_iter_recurse(&batches, &batch) && recover_batch(w, &batch, njobs, error))) &&
                     (sa_strv_push(dead, bson_iter_key(&batches)) || sa_error_nomem(error));
            }
        }
    }
    if (doc)
        bson_destroy(doc);
    return ok;
}

bool sa_rollup_journal_restage(sa_rollup_writer_t *w, sa_strv_t *dead, size_t *njobs, sa_error_t *error)
{
    return walk_dead(w, true, dead, njobs, error);
}

bool sa_rollup_journal_dead(sa_rollup_writer_t *w, sa_strv_t *dead, sa_error_t *error)
{
    return walk_dead(w, false, dead, NULL, error);
}

bool sa_rollup_journal_drop(sa_rollup_writer_t *w, const sa_strv_t *dead, sa_error_t *error)
{
    return !dead->n || journal_update(w, dead->v, dead->n, NULL, NULL, error);
}
