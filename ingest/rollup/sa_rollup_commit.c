/*
 * sa_rollup_commit.c - one flush of the rollup writer as a commit (sa_rollup.h, "Commits"):
 * the intent in the commit document, each staged document written whole beside the version
 * it replaces, the commit; and taking back a dead writer's flush.
 */
#include "sa_rollup_writer_private.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 20       /* conflicting writes of one rollup document before giving up */
#define WAIT_MS 250         /* between two looks at a live writer's flush */
#define WAIT_MAX_MS 120000  /* how long a live writer's flush is waited for */

/* The stored members (or whole) document and a members document's rows, as read. */
typedef struct {
    const char *mid, *rid;
    bson_t *m, *r;
} stored_t;

/* ---- the commit document ------------------------------------------------------------------------ */

bool sa_rollup_writer_commit_read(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error)
{
    char *id = sa_rollup_writer_doc_id(w, SA_ROLLUP_K_COMMIT);
    bson_t *b = NULL;
    bool ok = id && sa_docstore_get(w->store, SA_ROLLUP_COLL, id, &b, error) && sa_rollup_commit_read(c, b, error);
    if (!id)
        sa_error_nomem(error);
    free(id);
    if (b)
        bson_destroy(b);
    return ok;
}

bool sa_rollup_commit_put(sa_rollup_writer_t *w, sa_rollup_commit_t *c, bool *conflict, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    char *id = sa_rollup_writer_doc_id(w, SA_ROLLUP_K_COMMIT);
    bool ok = id && sa_rollup_commit_bson(c, w->cluster, &b, error) &&
              sa_docstore_put(w->store, SA_ROLLUP_COLL, id, c->v ? c->v : SA_DOCSTORE_ABSENT, &b, conflict, error);
    if (!id)
        sa_error_nomem(error);
    if (ok && !*conflict)
        c->v++;
    free(id);
    bson_destroy(&b);
    return ok;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The _ids a flush may write: the staged documents and a members document's rows. */
static bool flush_ids(sa_rollup_writer_t *w, sa_strv_t *ids, sa_error_t *error)
{
    for (size_t i = 0; i < w->nstaged; i++) {
        const sa_rollup_doc_t *d = &w->staged[i].d;
        if (!sa_strv_push(ids, d->id))
            return sa_error_nomem(error);
        if (d->kind == SA_ROLLUP_K_MEMBERS) {
            sa_rollup_key_t k = sa_rollup_key(w->cluster, SA_ROLLUP_K_ROWS, d->day, d->part);
            char *rid = sa_rollup_key_id(&k);
            bool ok = rid && sa_strv_push(ids, rid);
            free(rid);
            if (!ok)
                return sa_error_nomem(error);
        }
    }
    for (size_t i = 0; i < w->nmarks; i++) { /* the parts index of the months touched */
        sa_rollup_key_t k = sa_rollup_key(w->cluster, SA_ROLLUP_K_PARTS, w->marks[i].month, 0);
        char *pid = sa_rollup_key_id(&k);
        bool ok = pid && sa_strv_push(ids, pid);
        free(pid);
        if (!ok)
            return sa_error_nomem(error);
    }
    return true;
}

/*
 * Starts a flush: reads the commit document (a dead writer's flush is taken back first; a
 * live one's is waited for), then writes this flush's intent. *c: the commit document
 * as written, c->intent_seq the flush's number.
 */
static bool commit_begin(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error)
{
    char host[64];
    long waited = 0;

    sa_rollup_host(host, sizeof host);
    for (int round = 0;; round++) {
        bool conflict = false;
        if (!sa_rollup_writer_commit_read(w, c, error))
            return false;
        if (c->intent_seq > c->seq) { /* another flush under way, or one that died */
            if (sa_rollup_writer_dead(w, c->intent_host, c->intent_pid, c->intent_proc, c->intent_at)) {
                if (!sa_rollup_revert(w, c, error))
                    return false;
                continue;
            }
            if (waited >= WAIT_MAX_MS) {
                sa_error_set(error, SA_ERR_LOCKED, 0,
                             "the rollups of %s are being written by another slurm-ingest (host %s, pid %lld) "
                             "for %ld s: is another slurm-ingest writing this cluster?",
                             w->cluster, c->intent_host ? c->intent_host : "?", (long long)c->intent_pid,
                             waited / 1000);
                return false;
            }
            if (!waited)
                w->stats.waits++;
            sleep_ms(WAIT_MS);
            waited += WAIT_MS;
            continue;
        }
        if (round >= MAX_ROUNDS) {
            sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: the rollups' commit document of %s kept changing",
                         w->hosts, w->cluster);
            return false;
        }
        c->intent_seq = (c->intent_seq > c->seq ? c->intent_seq : c->seq) + 1;
        free(c->intent_host);
        c->intent_host = strdup(host);
        c->intent_pid = w->pid;
        free(c->intent_proc);
        c->intent_proc = w->proc[0] ? strdup(w->proc) : NULL;
        c->intent_at = (int64_t)time(NULL);
        sa_strv_clear(&c->intent_ids);
        if (!c->intent_host || !flush_ids(w, &c->intent_ids, error))
            return sa_error_nomem(error);
        if (!sa_rollup_commit_put(w, c, &conflict, error))
            return false;
        if (!conflict)
            return true;
    }
}

/* Commits the flush begun with c. */
static bool commit_end(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error)
{
    bool conflict = false;
    c->seq = c->intent_seq;
    c->intent_seq = 0;
    sa_strv_clear(&c->intent_ids);
    if (w->as_of_new && (c->as_of == SA_UNSET || w->as_of > c->as_of))
        c->as_of = w->as_of;
    c->parts = c->parts || w->parts_ready;
    if (!sa_rollup_commit_put(w, c, &conflict, error))
        return false;
    if (conflict) {
        sa_error_set(error, SA_ERR_MONGO, 0,
                     "MongoDB at %s: the rollups' commit document of %s changed during this run's flush: is "
                     "another slurm-ingest writing this cluster?",
                     w->hosts, w->cluster);
        return false;
    }
    w->stats.commits++;
    w->as_of_new = false;
    return true;
}

static bool on_stored(const bson_t *doc, void *ctx, sa_error_t *error)
{
    stored_t *s = ctx;
    bson_iter_t it;
    const char *id = bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) ? bson_iter_utf8(&it, NULL)
                                                                                       : NULL;
    bson_t **into = !id ? NULL : strcmp(id, s->mid) == 0 ? &s->m : s->rid && strcmp(id, s->rid) == 0 ? &s->r : NULL;
    if (!into)
        return true;
    if (*into)
        bson_destroy(*into);
    return (*into = bson_copy(doc)) != NULL || sa_error_nomem(error);
}

static int64_t stored_v(const bson_t *b)
{
    bson_iter_t it;
    if (!b)
        return SA_DOCSTORE_ABSENT;
    if (bson_iter_init_find(&it, b, "_v") && BSON_ITER_HOLDS_NUMBER(&it) && bson_iter_as_int64(&it) > 0)
        return bson_iter_as_int64(&it);
    return SA_DOCSTORE_UNVERSIONED;
}

/* Writes content (a document's new version) over stored as part of flush seq; *conflict when stored changed. */
static bool put_versioned(sa_rollup_writer_t *w, const char *id, const bson_t *content, const bson_t *stored,
                          int64_t seq, bool *conflict, sa_error_t *error)
{
    bson_t out = BSON_INITIALIZER;
    bool ok = sa_rollup_versioned(content, seq, stored, &out, error) &&
              sa_docstore_put(w->store, SA_ROLLUP_COLL, id, stored_v(stored), &out, conflict, error);
    bson_destroy(&out);
    if (ok && *conflict)
        w->stats.conflicts++;
    else if (ok)
        w->stats.docs_written++;
    return ok;
}

/* True when the stored rows are not what the members say: none, made from another version of them, or foreign. */
static bool rows_stale(const bson_t *rows, int64_t members_v)
{
    bson_iter_t it;
    int64_t m_v = -1;
    if (!rows)
        return true;
    if (bson_iter_init_find(&it, rows, "m_v") && BSON_ITER_HOLDS_NUMBER(&it))
        m_v = bson_iter_as_int64(&it);
    return m_v != members_v || !bson_iter_init_find(&it, rows, "nf");
}

/*
 * Writes one staged document as part of flush seq: merged into the stored one (or, whole,
 * in its place), and a members document's rows after it. *conflict when a document changed
 * between the read and the write (then all is read and done again).
 */
static bool flush_one(sa_rollup_writer_t *w, const sa_rollup_staged_t *st, int64_t seq, bool *conflict,
                      sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_doc_key(&st->d), rk = sa_rollup_key(w->cluster, SA_ROLLUP_K_ROWS, k.day, k.part);
    char *rid = k.kind == SA_ROLLUP_K_MEMBERS ? sa_rollup_key_id(&rk) : NULL;
    char *ids[2] = {st->d.id, rid};
    stored_t s = {st->d.id, rid, NULL, NULL};
    sa_rollup_doc_t pd, have;
    bool ok, changed = false;
    int64_t v = 0;

    *conflict = false;
    sa_rollup_doc_init(&pd);
    sa_rollup_doc_init(&have);
    if (k.kind == SA_ROLLUP_K_MEMBERS && !rid)
        return sa_error_nomem(error);
    ok = sa_docstore_find(w->store, SA_ROLLUP_COLL, ids, rid ? 2 : 1, 0, NULL, on_stored, &s, error);
    if (ok)
        w->stats.docs_read += (s.m != NULL) + (s.r != NULL);
    /* the stored members (a foreign one, of an older version, reads as empty: it is replaced whole; a
     * document said absent reads as empty) */
    ok = ok && (s.m ? sa_rollup_doc_read(&have, w->cluster, s.m, error) : sa_rollup_doc_new(&have, &k, error));
    if (ok && have.foreign) {
        sa_rollup_doc_clear(&have);
        ok = sa_rollup_doc_new(&have, &k, error);
        changed = true;
    }
    v = stored_v(s.m) > 0 ? stored_v(s.m) : 0;
    if (ok && st->whole) { /* the rebuild: st replaces it, unless it holds the same already */
        ok = sa_rollup_doc_new(&pd, &k, error) && (st->remove || sa_rollup_doc_merge(&pd, &st->d, error));
        changed = changed || !sa_rollup_doc_equal(&pd, &have);
    } else if (ok) { /* the staged members merged into the stored ones */
        pd = have;
        sa_rollup_doc_init(&have);
        pd.changed = false;
        ok = sa_rollup_doc_merge(&pd, &st->d, error);
        changed = changed || pd.changed;
    }
    if (ok && changed) {
        bson_t content = BSON_INITIALIZER;
        v++;
        ok = sa_rollup_doc_to_bson(&pd, v, &content, error) &&
             put_versioned(w, st->d.id, &content, s.m, seq, conflict, error);
        bson_destroy(&content);
    }
    /* a day's rows from its members as now written (or found: also when a 0.4 run left them behind; the
     * rebuild's always) */
    if (ok && !*conflict && rid && (changed || st->whole || rows_stale(s.r, v))) {
        bson_t content = BSON_INITIALIZER;
        int64_t rv = stored_v(s.r) > 0 ? stored_v(s.r) : 0;
        ok = sa_rollup_doc_rows_bson(&pd, v, rv + 1, &content, error) &&
             put_versioned(w, rid, &content, s.r, seq, conflict, error);
        bson_destroy(&content);
    }
    sa_rollup_doc_clear(&pd);
    sa_rollup_doc_clear(&have);
    if (s.m)
        bson_destroy(s.m);
    if (s.r)
        bson_destroy(s.r);
    free(rid);
    return ok;
}

bool sa_rollup_revert(sa_rollup_writer_t *w, sa_rollup_commit_t *c, sa_error_t *error)
{
    bool ok = true, conflict = false;
    for (size_t i = 0; ok && i < c->intent_ids.n; i++) {
        const char *id = c->intent_ids.v[i];
        bson_t *doc = NULL, back = BSON_INITIALIZER;
        bool absent = false;
        bson_iter_t it;
        int64_t v;
        ok = sa_docstore_get(w->store, SA_ROLLUP_COLL, id, &doc, error);
        if (ok && doc && sa_rollup_seq_of(doc) == c->intent_seq) { /* written by the flush that died */
            v = bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it) : 0;
            ok = sa_rollup_unversioned(doc, &back, &absent, error) &&
                 (absent ? sa_docstore_del(w->store, SA_ROLLUP_COLL, id, v > 0 ? v : SA_DOCSTORE_ANY, &conflict, error)
                         : sa_docstore_put(w->store, SA_ROLLUP_COLL, id, v > 0 ? v : SA_DOCSTORE_ANY, &back,
                                           &conflict, error));
            if (ok && conflict) {
                sa_error_set(error, SA_ERR_MONGO, 0,
                             "MongoDB at %s: rollup document %s changed while an interrupted flush was taken back",
                             w->hosts, id);
                ok = false;
            }
            w->stats.reverted += ok;
        }
        if (doc)
            bson_destroy(doc);
        bson_destroy(&back);
    }
    if (ok) { /* the intent goes: its documents are as they were */
        int64_t dead = c->intent_seq;
        c->intent_seq = 0;
        ok = sa_rollup_commit_put(w, c, &conflict, error);
        if (ok && conflict) {
            sa_error_set(error, SA_ERR_MONGO, 0,
                         "MongoDB at %s: the rollups' commit document of %s changed while an interrupted flush was "
                         "taken back",
                         w->hosts, w->cluster);
            ok = false;
        }
        if (ok)
            sa_strv_clear(&c->intent_ids);
        else
            c->intent_seq = dead;
    }
    return ok;
}

/* Adds the bits staged for month m to its parts index, as part of flush seq (retried on a conflict). */
static bool flush_parts(sa_rollup_writer_t *w, const sa_rollup_month_parts_t *m, int64_t seq, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(w->cluster, SA_ROLLUP_K_PARTS, m->month, 0);
    char *id = sa_rollup_key_id(&k);
    bool ok = id != NULL, conflict = true;

    if (!id)
        return sa_error_nomem(error);
    for (int round = 0; ok && conflict && round < MAX_ROUNDS; round++) {
        bson_t *stored = NULL, content = BSON_INITIALIZER;
        sa_rollup_parts_t p, want;
        int64_t v;
        conflict = false;
        ok = sa_docstore_get(w->store, SA_ROLLUP_COLL, id, &stored, error);
        if (ok) {
            sa_rollup_parts_read(&p, stored);
            want = p;
            for (int kind = 0; kind < SA_ROLLUP_PARTS_KINDS; kind++) {
                for (int d = 0; d < 31; d++)
                    want.mask[kind][d] |= m->p.mask[kind][d];
            }
            v = stored_v(stored) > 0 ? stored_v(stored) : 0;
            if (stored && sa_rollup_parts_covers(&p, &want))
                ; /* says so already */
            else
                ok = sa_rollup_parts_bson(&want, w->cluster, m->month, v + 1, &content, error) &&
                     put_versioned(w, id, &content, stored, seq, &conflict, error);
        }
        bson_destroy(&content);
        if (stored)
            bson_destroy(stored);
    }
    free(id);
    if (ok && conflict) {
        sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: the parts index of %s kept changing while being written",
                     w->hosts, w->cluster);
        ok = false;
    }
    return ok;
}

bool sa_rollup_commit_staged(sa_rollup_writer_t *w, sa_error_t *error)
{
    sa_rollup_commit_t c;
    bool ok;

    sa_rollup_commit_init(&c);
    ok = commit_begin(w, &c, error);
    for (size_t i = 0; ok && i < w->nstaged; i++) {
        bool conflict = true;
        for (int round = 0; ok && conflict; round++) {
            if (round == MAX_ROUNDS) {
                sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: rollup documents kept changing while being "
                                                     "written (%d attempts): is another slurm-ingest writing this "
                                                     "cluster?",
                             w->hosts, MAX_ROUNDS);
                ok = false;
                break;
            }
            ok = flush_one(w, &w->staged[i], c.intent_seq, &conflict, error);
        }
    }
    for (size_t i = 0; ok && i < w->nmarks; i++)
        ok = flush_parts(w, &w->marks[i], c.intent_seq, error);
    if (ok && (w->untyped_add.n || w->untyped_del.n)) {
        ok = sa_rollup_untyped_update(w, false, &w->untyped_add, &w->untyped_del, error);
        sa_strv_clear(&w->untyped_add);
        sa_strv_clear(&w->untyped_del);
    }
    ok = ok && commit_end(w, &c, error);
    sa_rollup_commit_clear(&c);
    if (ok)
        sa_rollup_staged_clear(w);
    return ok;
}
