/*
 * sa_archive_write.c - writing job documents (sa_archive.h): a batch of records merged into
 * their documents and written, jobs squeue no longer lists marked vanished, documents
 * changed by _id; each batch told to the hook (the rollup writer) before and after.
 *
 * Every query here is valid on MongoDB and on FerretDB 1.24 (the test server): plain
 * finds by _id, unordered bulk inserts and replaces conditional on the version read,
 * updates with $set/$max/$inc. Documents are merged in C (sa_jobdoc.c) and replaced whole.
 */
#include "sa_archive_private.h"

#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_fault.h"
#include "sa_vec.h"

/* ---- batch ingest ------------------------------------------------------------------ */

/* One job id of a batch: its records, its stored document and what the merges did. */
typedef struct {
    int64_t job_id;
    size_t first, count; /* its records in the sorted array */
    char *id;            /* the document's _id */
    json_t *stored;      /* as read (NULL: none or not read) */
    int64_t v;           /* the stored version (_v), 0 when none */
    json_t *doc;         /* merged */
    json_t *superseded;  /* documents displaced by reuse (array), or NULL */
    bool read;           /* the stored document must be read before merging */
    bool touched, done, conflict;
    bool written;        /* this run wrote doc (and superseded) */
    bool restage;        /* read, and already as the records say: its rollups are staged again all the same */
    bool journaled;      /* restage told to the hook before (once: a later round does not tell it again) */
    json_t *before;      /* the stored document doc was merged from (NULL: none): what its rollups held */
} slot_t;

/* Order of records of one job: by submit time, squeue before sacct at equal submit. */
static int rec_cmp(const void *a, const void *b)
{
    const sa_job_t *x = *(sa_job_t *const *)a, *y = *(sa_job_t *const *)b;
    int64_t xs = x->submit == SA_UNSET ? 0 : x->submit, ys = y->submit == SA_UNSET ? 0 : y->submit;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    if (xs != ys)
        return xs < ys ? -1 : 1;
    return (int)x->source - (int)y->source;
}

static void slot_reset(slot_t *s)
{
    json_decref(s->stored);
    json_decref(s->doc);
    json_decref(s->superseded);
    json_decref(s->before);
    s->stored = s->doc = s->superseded = s->before = NULL;
    s->v = 0;
    s->touched = s->conflict = s->written = s->restage = s->journaled = false;
}

typedef struct {
    slot_t **want;
    size_t n;
    sa_archive_stats_t *stats;
} read_ctx_t;

/* One stored document found: into its slot, as JSON. */
static bool on_read(const bson_t *found, void *vctx, sa_error_t *error)
{
    read_ctx_t *r = vctx;
    json_t *doc = sa_bson_to_json(found, error);
    const char *id = doc ? sa_archive_doc_str(doc, "_id") : NULL;

    if (!doc)
        return false;
    r->stats->docs_read++;
    for (size_t i = 0; id && i < r->n; i++) {
        if (strcmp(r->want[i]->id, id) == 0) {
            json_decref(r->want[i]->stored);
            r->want[i]->stored = json_incref(doc);
            r->want[i]->v = sa_jobdoc_int(doc, "_v") == SA_UNSET ? 0 : sa_jobdoc_int(doc, "_v");
            break;
        }
    }
    json_decref(doc);
    return true;
}

/* Reads the stored documents of the slots that need one, FIND_BATCH _ids per query. */
static bool read_docs(sa_archive_t *a, slot_t **want, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    char **ids = malloc((n ? n : 1) * sizeof *ids);
    bool ok = true;

    if (!ids)
        return sa_error_nomem(error);
    for (size_t i = 0; i < n; i++)
        ids[i] = want[i]->id;
    for (size_t off = 0; ok && off < n; off += FIND_BATCH) {
        size_t end = off + FIND_BATCH < n ? off + FIND_BATCH : n;
        read_ctx_t r = {want + off, end - off, stats};
        stats->read_queries++;
        ok = sa_docstore_find(a->store, "jobs", ids + off, end - off, FIND_BATCH, NULL, on_read, &r, error);
    }
    free(ids);
    return ok;
}

/* Merges a slot's records into its stored document (or none). */
static bool merge_slot(slot_t *s, sa_job_t *const *sorted, const sa_obs_ctx_t *ctx, const sa_obs_ctx_t *sacct_ctx,
                       sa_archive_stats_t *stats, sa_error_t *error)
{
    json_decref(s->before);
    s->before = s->stored ? json_incref(s->stored) : NULL; /* kept for the rollups: a write's read-back replaces stored */
    s->doc = s->stored ? json_deep_copy(s->stored) : NULL;
    if (s->stored && !s->doc) {
        sa_error_nomem(error);
        return false;
    }
    for (size_t i = s->first; i < s->first + s->count; i++) {
        json_t *superseded = NULL;
        sa_merge_kind_t kind;
        const sa_obs_ctx_t *rc = sacct_ctx && sorted[i]->source != SA_SRC_SQUEUE ? sacct_ctx : ctx;
        if (!sa_jobdoc_merge(&s->doc, sorted[i], rc, &kind, &superseded, error)) {
            sa_error_prefix(error, "job %lld", (long long)s->job_id);
            return false;
        }
        if (superseded) {
            if (!s->superseded)
                s->superseded = json_array();
            json_array_append_new(s->superseded, superseded);
        }
        if (kind == SA_MERGE_STALE)
            stats->stale++;
        else if (kind != SA_MERGE_UNCHANGED)
            s->touched = true;
    }
    /* a document that moved to jobs_superseded is replaced by the new job's */
    if (s->superseded && s->stored)
        s->touched = true;
    return true;
}


/* Inserts the documents displaced by reuse (a duplicate _id means it is there already). */
static bool write_superseded(sa_archive_t *a, slot_t *slots, size_t nslots, sa_archive_stats_t *stats,
                             sa_error_t *error)
{
    bson_t **docs = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;

    for (size_t i = 0; ok && i < nslots; i++) {
        size_t k;
        json_t *old;
        if (slots[i].done || !slots[i].superseded)
            continue;
        json_array_foreach(slots[i].superseded, k, old) {
            if (!SA_VEC_GROW(docs, cap, n, 1, 16) || !(docs[n] = bson_new())) {
                ok = sa_error_nomem(error);
                break;
            }
            if (!(ok = sa_archive_doc_to_bson(old, docs[n++], error)))
                break;
        }
    }
    ok = ok && sa_docstore_insert_many(a->store, "jobs_superseded", (const bson_t *const *)docs, n, NULL, error);
    if (ok) {
        stats->reused += n;
        stats->write_statements += n;
    }
    sa_archive_docs_free(docs, n);
    return ok;
}

/*
 * Inserts the new documents (version 1); one whose _id exists is read, merged and
 * replaced in the next round. When the insert followed a read that found nothing,
 * another writer inserted it since: a conflict. When it was not read (a job the cache did
 * not know: a new or rebuilt cache, an id Slurm reused), it is an insert_reread.
 */
static bool write_inserts(sa_archive_t *a, slot_t **ins, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    bson_t **docs = calloc(n ? n : 1, sizeof *docs);
    bool *dup = calloc(n ? n : 1, sizeof *dup);
    bool ok = docs && dup;

    if (!ok)
        sa_error_nomem(error);
    for (size_t i = 0; ok && i < n; i++) {
        json_object_set_new(ins[i]->doc, "_v", json_integer(1));
        ok = (docs[i] = bson_new()) ? sa_archive_doc_to_bson(ins[i]->doc, docs[i], error) : sa_error_nomem(error);
    }
    ok = ok && sa_docstore_insert_many(a->store, "jobs", (const bson_t *const *)docs, n, dup, error);
    SA_FAULT_POINT("mongo-write");
    for (size_t i = 0; ok && i < n; i++) {
        if (dup[i]) {
            ins[i]->conflict = true;
            if (ins[i]->read)
                stats->conflicts++;
            else
                stats->insert_rereads++;
        } else {
            ins[i]->done = ins[i]->written = true;
            stats->inserted++;
            stats->write_statements++;
        }
    }
    sa_archive_docs_free(docs, n);
    free(dup);
    return ok;
}

/* After a chunk of replaces matched fewer than it sent: which ones someone else wrote, read back. */
static bool replaces_settle(sa_archive_t *a, slot_t **rep, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    json_t **mine = calloc(n ? n : 1, sizeof *mine);
    bool ok;

    if (!mine)
        return sa_error_nomem(error);
    for (size_t i = 0; i < n; i++) {
        mine[i] = json_incref(rep[i]->doc);
        json_decref(rep[i]->stored);
        rep[i]->stored = NULL;
    }
    ok = read_docs(a, rep, n, stats, error);
    for (size_t i = 0; i < n; i++) {
        if (ok && rep[i]->stored && json_equal(rep[i]->stored, mine[i])) {
            rep[i]->done = rep[i]->written = true;
            stats->changed++;
        } else if (ok) {
            rep[i]->conflict = true;
            stats->conflicts++;
        }
        json_decref(mine[i]);
    }
    free(mine);
    return ok;
}

/* Replaces changed documents if still at the version read, UPDATE_CHUNK at a time. */
static bool write_replaces(sa_archive_t *a, slot_t **rep, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    bool ok = true;
    for (size_t off = 0; ok && off < n; off += UPDATE_CHUNK) {
        size_t end = off + UPDATE_CHUNK < n ? off + UPDATE_CHUNK : n, matched = 0;
        bson_t *docs[UPDATE_CHUNK] = {0};
        char *ids[UPDATE_CHUNK];
        int64_t expect[UPDATE_CHUNK];
        for (size_t i = off; ok && i < end; i++) {
            ids[i - off] = rep[i]->id;
            expect[i - off] = rep[i]->v > 0 ? rep[i]->v : SA_DOCSTORE_UNVERSIONED;
            json_object_set_new(rep[i]->doc, "_v", json_integer(rep[i]->v + 1));
            ok = (docs[i - off] = bson_new()) ? sa_archive_doc_to_bson(rep[i]->doc, docs[i - off], error) : sa_error_nomem(error);
        }
        ok = ok && sa_docstore_replace_many(a->store, "jobs", ids, expect, (const bson_t *const *)docs, end - off,
                                            &matched, error);
        SA_FAULT_POINT("mongo-write");
        for (size_t i = 0; i < end - off; i++) {
            if (docs[i])
                bson_destroy(docs[i]);
        }
        if (!ok)
            break;
        stats->write_statements += end - off;
        if (matched == end - off) {
            for (size_t i = off; i < end; i++)
                rep[i]->done = rep[i]->written = true;
            stats->changed += end - off;
            continue;
        }
        ok = replaces_settle(a, rep + off, end - off, stats, error); /* someone else wrote some of them */
    }
    return ok;
}

/* True if a document describes a job still to be watched by the vanish rule. */
static bool doc_live(const json_t *doc)
{
    return doc && !sa_job_state_is_final(sa_archive_doc_str(doc, "state")) && !json_object_get(doc, "vanished_at");
}

/* Tells the cache what the archive now holds for the finished slots. */
static bool update_cache(sa_jobcache_t *cache, slot_t *slots, size_t nslots, sa_job_t *const *sorted,
                         const sa_obs_ctx_t *ctx, sa_archive_stats_t *stats, sa_error_t *error)
{
    if (!cache)
        return true;
    if (!sa_jobcache_begin(cache, error))
        return false;
    for (size_t i = 0; i < nslots; i++) {
        slot_t *s = &slots[i];
        if (!s->done)
            continue;
        if (!sa_jobcache_put_job(cache, s->job_id, doc_live(s->doc ? s->doc : s->stored), ctx->at, error))
            goto fail;
        /* a document written again for the same snapshot (sa_ingest.c clears the set per snapshot) */
        if (s->written && !sa_jobcache_idset_add(cache, SA_JOBCACHE_SET_WRITTEN, &s->job_id, 1, &stats->rewritten,
                                                 error))
            goto fail;
        for (size_t r = s->first; r < s->first + s->count; r++) {
            int source;
            int64_t submit, start;
            sa_jobcache_key(sorted[r], &source, &submit, &start);
            if (!sa_jobcache_put_record(cache, s->job_id, source, submit, start,
                                        sa_job_digest(sorted[r], NULL), error))
                goto fail;
        }
    }
    return sa_jobcache_commit(cache, error);
fail:
    sa_jobcache_rollback(cache);
    return false;
}

/* The changes of a batch, as the hook is told of them, and the BSON documents they point at. */
typedef struct {
    sa_archive_change_t *v;
    size_t n, cap;
    bson_t **docs;
    size_t ndocs, doccap;
} changes_t;

static void changes_clear(changes_t *c)
{
    sa_archive_docs_free(c->docs, c->ndocs);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* A JSON document as BSON kept by c (NULL for NULL); false on failure. */
static bool changes_doc(changes_t *c, const json_t *doc, const bson_t **out, sa_error_t *error)
{
    *out = NULL;
    if (!doc)
        return true;
    if (!SA_VEC_GROW(c->docs, c->doccap, c->ndocs, 1, 16) || !(c->docs[c->ndocs] = bson_new()))
        return sa_error_nomem(error);
    c->ndocs++;
    if (!sa_archive_doc_to_bson(doc, c->docs[c->ndocs - 1], error))
        return false;
    *out = c->docs[c->ndocs - 1];
    return true;
}

/* Adds the change of job document id: from before to after (each may be NULL). */
static bool changes_add(changes_t *c, const char *id, const json_t *before, const json_t *after, bool with_open,
                        sa_error_t *error)
{
    sa_archive_change_t *ch;
    int64_t v = after ? sa_jobdoc_int(after, "_v") : SA_UNSET;
    if (!id)
        return true;
    if (!SA_VEC_GROW(c->v, c->cap, c->n, 1, 64))
        return sa_error_nomem(error);
    ch = &c->v[c->n++];
    memset(ch, 0, sizeof *ch);
    ch->id = id;
    ch->v = v == SA_UNSET ? 0 : v;
    ch->with_open = with_open;
    return changes_doc(c, before, &ch->before, error) && changes_doc(c, after, &ch->after, error);
}

/*
 * Tells the hook of a round's jobs: before (ev SA_ARCHIVE_BEFORE) the jobs it is about to
 * write, with the documents their rollups come from now (the rollup writer journals them: a
 * kill before its flush is made good by the next run); after (SA_ARCHIVE_AFTER) the
 * documents written, and those they displaced (jobs_superseded). The documents read and
 * found as the records say (restage) are told too, with the open runs' and live list's
 * documents.
 */
static bool tell_round(sa_archive_t *a, sa_archive_event_t ev, slot_t *slots, size_t nslots, sa_error_t *error)
{
    bool after = ev == SA_ARCHIVE_AFTER;
    changes_t c = {0};
    bool ok = true;

    if (!a->hook.fn)
        return true;
    for (size_t i = 0; ok && i < nslots; i++) {
        slot_t *s = &slots[i];
        size_t k;
        json_t *old;
        if (s->restage) { /* journaled before, staged after, like a write */
            if (!after && s->journaled)
                continue;
            ok = changes_add(&c, s->id, s->stored, after ? s->stored : NULL, true, error);
            s->journaled = true;
            continue;
        }
        if (after ? !s->written || !s->doc : s->done)
            continue;
        ok = changes_add(&c, s->id, after ? s->before : s->stored, after ? s->doc : NULL, false, error);
        json_array_foreach(s->superseded, k, old) {
            ok = ok && changes_add(&c, sa_archive_doc_str(old, "_id"), NULL, after ? old : NULL, false, error);
        }
    }
    if (after)
        SA_FAULT_POINT("rollup-write");
    ok = ok && sa_archive_tell(a, ev, c.v, c.n, 0, error);
    changes_clear(&c);
    return ok;
}


static void min_submit(const json_t *doc, int64_t *min)
{
    int64_t t = sa_jobdoc_int(doc, "submit");
    if (t != SA_UNSET && (*min == SA_UNSET || t < *min))
        *min = t;
}

/*
 * Lowers the clusters document's first_submit (where the site's months begin) to the
 * earliest submit of the documents a round is about to write, when that is earlier than
 * known. Before the writes: a run killed between the two leaves it no later than the
 * documents (and the next run writes them).
 */
static bool lower_first_submit(sa_archive_t *a, const char *cluster, const slot_t *slots, size_t nslots,
                               sa_error_t *error)
{
    int64_t min = SA_UNSET;
    json_t *t, *old;
    size_t k;
    bool ok;

    for (size_t i = 0; i < nslots; i++) {
        if (slots[i].done || !slots[i].doc)
            continue;
        min_submit(slots[i].doc, &min);
        json_array_foreach(slots[i].superseded, k, old) {
            min_submit(old, &min);
        }
    }
    if (min == SA_UNSET || (a->first_submit != SA_UNSET && a->first_submit <= min))
        return true;
    if (!(t = json_pack("{s:I}", "first_submit", (json_int_t)min)))
        return sa_error_nomem(error);
    ok = sa_archive_cluster_times(a, cluster, t, NULL, NULL, error);
    json_decref(t);
    if (ok)
        a->first_submit = min;
    return ok;
}

/* One round: read what must be read, merge, write; slots end done or in conflict. */
static bool write_round(sa_archive_t *a, slot_t *slots, size_t nslots, sa_job_t *const *sorted,
                        const sa_obs_ctx_t *ctx, const sa_obs_ctx_t *sacct_ctx, sa_archive_stats_t *stats,
                        sa_error_t *error)
{
    slot_t **want = malloc((nslots ? nslots : 1) * sizeof *want);
    size_t nwant = 0, nins = 0, nrep = 0;
    bool ok = false;

    if (!want) {
        sa_error_nomem(error);
        return false;
    }
    for (size_t i = 0; i < nslots; i++) {
        if (!slots[i].done && slots[i].read)
            want[nwant++] = &slots[i];
    }
    if (nwant && !read_docs(a, want, nwant, stats, error))
        goto done;
    for (size_t i = 0; i < nslots; i++) {
        if (slots[i].done)
            continue;
        if (!merge_slot(&slots[i], sorted, ctx, sacct_ctx, stats, error))
            goto done;
        if (!slots[i].touched) {
            slots[i].done = true;
            stats->unchanged++;
            /* read because the cache had not seen these records merged: a killed run's write may have made the
             * document so after the next run had restaged that run's journal from it (a request outlives its
             * client), so its rollups may be behind it. Staged again from the document as found, with the open
             * runs' and live list's documents: a no-op when they are not (a member keeps its version). */
            slots[i].restage = slots[i].stored != NULL;
        }
    }
    if (!lower_first_submit(a, ctx->cluster, slots, nslots, error) || !tell_round(a, SA_ARCHIVE_BEFORE, slots, nslots, error) ||
        !write_superseded(a, slots, nslots, stats, error))
        goto done;
    SA_FAULT_POINT("superseded-written");
    for (size_t i = 0; i < nslots; i++) { /* inserts first, then replaces (want[] reused) */
        if (!slots[i].done && !slots[i].stored)
            want[nins++] = &slots[i];
    }
    if (!write_inserts(a, want, nins, stats, error))
        goto done;
    for (size_t i = 0; i < nslots; i++) {
        if (!slots[i].done && !slots[i].conflict && slots[i].stored)
            want[nrep++] = &slots[i];
    }
    ok = write_replaces(a, want, nrep, stats, error);
done:
    free(want);
    return ok;
}


bool sa_archive_write_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx, sa_job_t *const *jobs,
                           size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    return sa_archive_write_snapshot_jobs(a, cache, ctx, NULL, jobs, n, stats, error) &&
           sa_archive_flush_rollups(a, error);
}

bool sa_archive_flush_rollups(sa_archive_t *a, sa_error_t *error)
{
    return sa_archive_tell(a, SA_ARCHIVE_FLUSH, NULL, 0, 0, error);
}

bool sa_archive_landed(sa_archive_t *a, int64_t at, sa_error_t *error)
{
    return sa_archive_tell(a, SA_ARCHIVE_AS_OF, NULL, 0, at, error);
}

bool sa_archive_write_snapshot_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx,
                            const sa_obs_ctx_t *sacct_ctx, sa_job_t *const *jobs, size_t n, sa_archive_stats_t *stats,
                            sa_error_t *error)
{
    sa_job_t **sorted = malloc((n ? n : 1) * sizeof *sorted);
    slot_t *slots = calloc(n ? n : 1, sizeof *slots);
    size_t nslots = 0;
    bool ok = false;

    if (!sorted || !slots) {
        sa_error_nomem(error);
        goto done;
    }
    stats->records += n;
    memcpy(sorted, jobs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, rec_cmp);
    for (size_t i = 0; i < n; i++) {
        if (nslots == 0 || slots[nslots - 1].job_id != sorted[i]->job_id) {
            slot_t *s = &slots[nslots++];
            bool live;
            s->job_id = sorted[i]->job_id;
            s->first = i;
            s->id = sa_jobdoc_id(ctx->cluster, s->job_id);
            if (!s->id) {
                sa_error_nomem(error);
                goto done;
            }
            /* without a cache every document is read; with one, only those it knows */
            s->read = !cache || sa_jobcache_get_job(cache, s->job_id, &live) != 0;
        }
        slots[nslots - 1].count++;
    }
    stats->jobs += nslots;
    for (int round = 0;; round++) {
        bool pending = false;
        if (!write_round(a, slots, nslots, sorted, ctx, sacct_ctx, stats, error))
            goto done;
        for (size_t i = 0; i < nslots; i++) {
            if (slots[i].conflict) {
                /* written by someone else since it was read: read it again, merge again */
                slot_reset(&slots[i]);
                slots[i].read = true;
                pending = true;
            }
        }
        if (!pending)
            break;
        if (round + 1 == MAX_ROUNDS) {
            sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: job documents kept changing while being written "
                                                 "(%d attempts): is another slurm-ingest writing this cluster?",
                         a->hosts, MAX_ROUNDS);
            goto done;
        }
    }
    ok = tell_round(a, SA_ARCHIVE_AFTER, slots, nslots, error) && update_cache(cache, slots, nslots, sorted, ctx, stats, error);
done:
    for (size_t i = 0; i < nslots; i++) {
        slot_reset(&slots[i]);
        free(slots[i].id);
    }
    free(sorted);
    free(slots);
    return ok;
}

/* ---- vanished jobs ------------------------------------------------------------------- */

/*
 * The rollups of jobs just marked vanished: their open runs now end at vanished_at. The
 * documents are read back by _id (a vanished job is rare) and handed to the hook with the
 * open runs' document and the live list, where their runs were.
 */
static bool restage_vanished(sa_archive_t *a, char **ids, size_t nvan, sa_archive_stats_t *stats, sa_error_t *error)
{
    slot_t *slots = calloc(nvan, sizeof *slots);
    slot_t **want = calloc(nvan, sizeof *want);
    changes_t c = {0};
    bool ok = slots && want;

    if (!ok)
        sa_error_nomem(error);
    for (size_t i = 0; ok && i < nvan; i++) {
        want[i] = &slots[i];
        slots[i].id = ids[i];
    }
    ok = ok && read_docs(a, want, nvan, stats, error);
    for (size_t i = 0; ok && i < nvan; i++) {
        if (slots[i].stored)
            ok = changes_add(&c, slots[i].id, NULL, slots[i].stored, true, error);
    }
    ok = ok && sa_archive_tell(a, SA_ARCHIVE_AFTER, c.v, c.n, 0, error) && sa_archive_tell(a, SA_ARCHIVE_FLUSH, NULL, 0, 0, error);
    changes_clear(&c);
    for (size_t i = 0; slots && i < nvan; i++) {
        slots[i].id = NULL;
        slot_reset(&slots[i]);
    }
    free(slots);
    free(want);
    return ok;
}

bool sa_archive_mark_vanished(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx, const int64_t *listed,
                              size_t n, int listed_set, sa_archive_stats_t *stats, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, ctx->cluster, error);
    int64_t prev_at, *live = NULL;
    size_t nlive = 0, nvan = 0;
    int64_t *van = NULL;
    char **ids = NULL;
    changes_t c = {0};
    bool ok = true;

    if (!cdoc)
        return false;
    prev_at = sa_jobdoc_int(cdoc, "last_squeue_at");
    json_decref(cdoc);
    if (prev_at == SA_UNSET)
        prev_at = ctx->at;
    if (prev_at > ctx->at)
        return true; /* replaying an older snapshot: a newer one already decided */
    if (listed_set >= 0) {
        /* the listing is in the cache's id set: only the answer comes back */
        if (!sa_jobcache_vanished_ids(cache, listed_set, &van, &nvan, error))
            return false;
    } else {
        if (cache ? !sa_jobcache_live_ids(cache, &live, &nlive, error)
                  : !sa_archive_live_ids(a, ctx->cluster, &live, &nlive, error))
            return false;
        van = malloc((nlive ? nlive : 1) * sizeof *van);
        if (!van) {
            free(live);
            sa_error_nomem(error);
            return false;
        }
        for (size_t i = 0, j = 0; i < nlive; i++) {
            while (j < n && listed[j] < live[i])
                j++;
            if (j == n || listed[j] != live[i])
                van[nvan++] = live[i];
        }
    }
    /* their open runs will end: told first (the rollup writer journals them) */
    ids = calloc(nvan ? nvan : 1, sizeof *ids);
    ok = ids != NULL || sa_error_nomem(error);
    for (size_t i = 0; ok && i < nvan; i++) {
        if (!(ids[i] = sa_jobdoc_id(ctx->cluster, van[i])) || !changes_add(&c, ids[i], NULL, NULL, true, error))
            ok = ids[i] ? false : sa_error_nomem(error);
    }
    ok = ok && (!nvan || sa_archive_tell(a, SA_ARCHIVE_BEFORE, c.v, c.n, 0, error));
    changes_clear(&c);
    /* conditional on the document still being live: a finished or already marked job stays as it is */
    for (size_t off = 0; ok && off < nvan; off += UPDATE_CHUNK) {
        size_t end = off + UPDATE_CHUNK < nvan ? off + UPDATE_CHUNK : nvan, matched = 0;
        bson_t sel[UPDATE_CHUNK], upd[UPDATE_CHUNK];
        const bson_t *selp[UPDATE_CHUNK], *updp[UPDATE_CHUNK];
        for (size_t i = off; i < end; i++) {
            bson_t *f = &sel[i - off], *u = &upd[i - off], part;
            bson_init(f);
            bson_init(u);
            BSON_APPEND_UTF8(f, "_id", ids[i]);
            sa_archive_append_not_final(f);
            BSON_APPEND_DOCUMENT_BEGIN(f, "vanished_at", &part);
            BSON_APPEND_BOOL(&part, "$exists", false);
            bson_append_document_end(f, &part);
            BSON_APPEND_DOCUMENT_BEGIN(u, "$set", &part);
            BSON_APPEND_DATE_TIME(&part, "vanished_at", prev_at * 1000);
            bson_append_document_end(u, &part);
            BSON_APPEND_DOCUMENT_BEGIN(u, "$max", &part);
            BSON_APPEND_DATE_TIME(&part, "seen.last", prev_at * 1000);
            bson_append_document_end(u, &part);
            BSON_APPEND_DOCUMENT_BEGIN(u, "$inc", &part);
            BSON_APPEND_INT64(&part, "_v", 1);
            bson_append_document_end(u, &part);
            selp[i - off] = f;
            updp[i - off] = u;
        }
        ok = sa_docstore_update_many(a->store, "jobs", selp, updp, end - off, &matched, error);
        for (size_t i = 0; i < end - off; i++) {
            bson_destroy(&sel[i]);
            bson_destroy(&upd[i]);
        }
        if (ok) {
            stats->vanished += matched;
            stats->write_statements += end - off;
        }
    }
    if (ok && nvan)
        ok = restage_vanished(a, ids, nvan, stats, error);
    for (size_t i = 0; ids && i < nvan; i++)
        free(ids[i]);
    free(ids);
    if (ok && cache && nvan) {
        /* no longer live; its digests go, so a job squeue lists again is merged again */
        ok = sa_jobcache_begin(cache, error);
        for (size_t i = 0; ok && i < nvan; i++)
            ok = sa_jobcache_put_job(cache, van[i], false, ctx->at, error) &&
                 sa_jobcache_forget_records(cache, van[i], error);
        ok = ok ? sa_jobcache_commit(cache, error) : (sa_jobcache_rollback(cache), false);
    }
    free(live);
    free(van);
    return ok;
}

/* Replaces a changed job document if still at the version read; *written says whether it was. */
static bool replace_at_version(sa_archive_t *a, const char *id, int64_t v, json_t *doc, bool *written, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    bool conflict = false, ok;

    json_object_set_new(doc, "_v", json_integer(v + 1));
    ok = sa_archive_doc_to_bson(doc, &b, error) &&
         sa_docstore_put(a->store, "jobs", id, v > 0 ? v : SA_DOCSTORE_UNVERSIONED, &b, &conflict, error);
    *written = ok && !conflict;
    bson_destroy(&b);
    return ok;
}


/* ---- changes by _id (the Prometheus import) ------------------------------------------------ */

/* Slots for the documents of ids, read; NULL on failure. */
static slot_t *slots_read(sa_archive_t *a, char *const *ids, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    slot_t *slots = calloc(n ? n : 1, sizeof *slots);
    slot_t **want = calloc(n ? n : 1, sizeof *want);
    bool ok = slots && want;

    for (size_t i = 0; ok && i < n; i++) {
        want[i] = &slots[i];
        ok = (slots[i].id = strdup(ids[i])) != NULL;
    }
    if (!ok)
        sa_error_nomem(error);
    ok = ok && read_docs(a, want, n, stats, error);
    free(want);
    if (!ok && slots) {
        for (size_t i = 0; i < n; i++) {
            slot_reset(&slots[i]);
            free(slots[i].id);
        }
        free(slots);
        slots = NULL;
    }
    return slots;
}

static void slots_free(slot_t *slots, size_t n)
{
    for (size_t i = 0; slots && i < n; i++) {
        slot_reset(&slots[i]);
        free(slots[i].id);
    }
    free(slots);
}

bool sa_archive_read_jobs(sa_archive_t *a, char *const *ids, size_t n, json_t **docs, sa_error_t *error)
{
    sa_archive_stats_t stats;
    slot_t *slots;

    memset(&stats, 0, sizeof stats);
    if (!(slots = slots_read(a, ids, n, &stats, error)))
        return false;
    for (size_t i = 0; i < n; i++)
        docs[i] = slots[i].stored ? json_incref(slots[i].stored) : NULL;
    slots_free(slots, n);
    return true;
}

bool sa_archive_patch_jobs(sa_archive_t *a, const char *cluster, char *const *ids, size_t n, sa_archive_patch_fn fn,
                           void *ctx, size_t *written, bool *replaced, sa_error_t *error)
{
    sa_archive_stats_t stats;
    slot_t *slots = NULL;
    changes_t c = {0};
    bool ok;

    (void)cluster;
    *written = 0;
    memset(&stats, 0, sizeof stats);
    for (size_t i = 0; replaced && i < n; i++)
        replaced[i] = false;
    ok = (slots = slots_read(a, ids, n, &stats, error)) != NULL;
    for (size_t i = 0; ok && i < n; i++) { /* the changes, told before any write */
        if (slots[i].stored && (ok = fn(ctx, slots[i].id, slots[i].stored, &slots[i].doc, error)) && slots[i].doc)
            ok = changes_add(&c, slots[i].id, slots[i].stored, NULL, false, error);
    }
    ok = ok && (!c.n || sa_archive_tell(a, SA_ARCHIVE_BEFORE, c.v, c.n, 0, error));
    changes_clear(&c);
    for (size_t i = 0; ok && i < n; i++) {
        bool done = false;
        if (!slots[i].doc)
            continue;
        ok = replace_at_version(a, slots[i].id, slots[i].v, slots[i].doc, &done, error) &&
             (!done || changes_add(&c, slots[i].id, slots[i].stored, slots[i].doc, false, error));
        *written += done;
        if (replaced)
            replaced[i] = done;
    }
    ok = ok && (!c.n || sa_archive_tell(a, SA_ARCHIVE_AFTER, c.v, c.n, 0, error)) && sa_archive_tell(a, SA_ARCHIVE_FLUSH, NULL, 0, 0, error);
    changes_clear(&c);
    slots_free(slots, n);
    return ok;
}
