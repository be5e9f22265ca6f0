/*
 * sa_rollw.c - slurm-ingest's rollup writer (sa_rollw.h).
 */
#include "sa_rollw.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sa_bson.h"
#include "sa_jobview.h"
#include "sa_mongo.h"
#include "sa_rollup.h"
#include "sa_vec.h"

#define MAX_ROUNDS 20   /* conflicting writes of one rollup document before giving up */
#define READ_BATCH 200  /* rollup _ids per $in query */
#define JOURNAL_STALE 3600 /* a batch of another host's writer older than this is a dead writer's */

/* A job of the batch being journaled: its _id and the days its members are in. */
typedef struct {
    char *id;
    int64_t *days;
    size_t ndays;
} jentry_t;

struct sa_rollw {
    mongoc_collection_t *coll;
    char *hosts, *cluster;
    sa_jobview_t view;
    sa_rcontrib_t oldc, newc;
    sa_rolldoc_t *mini; /* per rollup document touched: the staged members (tombstones for removals) */
    size_t nmini, minicap;
    jentry_t *jn;       /* the batch to journal */
    size_t njn, jncap;
    char **nonces;      /* this writer's batches in the journal */
    size_t nnonces, noncecap;
    sa_strv_t untyped_add, untyped_del; /* job documents with (without) a run whose GPUs have no type yet */
    sa_rollw_stats_t stats;
};

sa_rollw_t *sa_rollw_new(mongoc_collection_t *coll, const char *hosts, const char *cluster)
{
    sa_rollw_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->coll = coll;
    w->hosts = strdup(hosts ? hosts : "");
    w->cluster = strdup(cluster);
    sa_strv_init(&w->untyped_add);
    sa_strv_init(&w->untyped_del);
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

static void jn_clear(sa_rollw_t *w)
{
    for (size_t i = 0; i < w->njn; i++) {
        free(w->jn[i].id);
        free(w->jn[i].days);
    }
    w->njn = 0;
}

void sa_rollw_free(sa_rollw_t *w)
{
    if (!w)
        return;
    jn_clear(w);
    free(w->jn);
    for (size_t i = 0; i < w->nnonces; i++)
        free(w->nonces[i]);
    free(w->nonces);
    sa_strv_clear(&w->untyped_add);
    sa_strv_clear(&w->untyped_del);
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

/* The staged document of a day (SA_UNSET: open) and part, created empty. */
static sa_rolldoc_t *mini_of(sa_rollw_t *w, int64_t day, int part, sa_error_t *error)
{
    if (sa_rollup_kind(day) == SA_ROLLUP_K_LIVE)
        part = 0;
    for (size_t i = 0; i < w->nmini; i++) {
        if (w->mini[i].day == day && w->mini[i].part == part)
            return &w->mini[i];
    }
    if (!SA_VEC_GROW(w->mini, w->minicap, w->nmini, 1, 8)) {
        sa_error_nomem(error);
        return NULL;
    }
    if (!sa_rolldoc_new(&w->mini[w->nmini], w->cluster, day, part, error))
        return NULL;
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

bool sa_rollw_run_needs_type(const sa_jobview_run_t *r)
{
    int64_t typed = 0, untyped = 0;
    if (r->start == SA_UNSET || r->gpus <= 0 || !r->nodes || r->gpu_type_source == SA_RUN_GPU_TYPE_NODE ||
        r->gpu_type_source == SA_RUN_GPU_TYPE_CARRIED)
        return false;
    for (size_t k = 0; k < r->ngpu_types; k++) {
        if (r->gpu_types[k].type && r->gpu_types[k].type[0])
            typed += r->gpu_types[k].count;
        else
            untyped += r->gpu_types[k].count;
    }
    return untyped > 0 || r->gpus > typed + untyped;
}

bool sa_rollw_needs_type(const sa_jobview_t *j)
{
    for (size_t i = 0; i < j->nruns; i++) {
        if (sa_rollw_run_needs_type(&j->runs[i]))
            return true;
    }
    return false;
}

/* Notes whether the job document just read (w->view) still has GPUs whose type is not known. */
static bool note_untyped(sa_rollw_t *w, const char *id, bool gone, sa_error_t *error)
{
    bool needs = !gone && w->view.cluster && sa_rollw_needs_type(&w->view);
    if (!sa_strv_push(needs ? &w->untyped_add : &w->untyped_del, id))
        return sa_error_nomem(error);
    return true;
}

/*
 * Stages the contribution of new_doc (already in w->newc) for job document id at version
 * v, and its removal from every day of days[0..n) it no longer touches.
 */
static bool stage_new(sa_rollw_t *w, const char *id, int64_t v, const int64_t *days, size_t n, sa_error_t *error)
{
    int part = sa_rollup_part_of(id);
    w->stats.staged++;
    for (size_t i = 0; i < w->newc.ndays; i++) {
        sa_rolldoc_t *m = mini_of(w, w->newc.days[i].day, part, error);
        if (!m || !sa_rolldoc_put(m, id, v, &w->newc, error))
            return false;
    }
    for (size_t i = 0; i < n; i++) {
        sa_rolldoc_t *m;
        if (has_day(&w->newc, days[i]))
            continue;
        if (!(m = mini_of(w, days[i], part, error)) || !sa_rolldoc_put(m, id, v, NULL, error))
            return false;
    }
    return true;
}

bool sa_rollw_stage(sa_rollw_t *w, const char *id, int64_t v, const bson_t *old_doc, const bson_t *new_doc,
                    bool with_open, sa_error_t *error)
{
    int64_t *days, live;
    size_t n = 0;
    bool ok;

    if (!contrib(w, old_doc, &w->oldc, error) || !contrib(w, new_doc, &w->newc, error) ||
        !note_untyped(w, id, new_doc == NULL, error))
        return false;
    /* the days the old contribution touched, and the open runs' document when asked */
    if (!(days = malloc((w->oldc.ndays + 2) * sizeof *days)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < w->oldc.ndays; i++)
        days[n++] = w->oldc.days[i].day;
    if (with_open && !has_day(&w->oldc, SA_UNSET))
        days[n++] = SA_UNSET;
    if (with_open && (live = sa_rollup_live_of(w->cluster, id)) != SA_UNSET && !has_day(&w->oldc, live))
        days[n++] = live;
    ok = stage_new(w, id, v, days, n, error);
    free(days);
    return ok;
}

bool sa_rollw_stage_days(sa_rollw_t *w, const char *id, int64_t v, const int64_t *days, size_t ndays,
                         const bson_t *new_doc, sa_error_t *error)
{
    return contrib(w, new_doc, &w->newc, error) && note_untyped(w, id, new_doc == NULL, error) &&
           stage_new(w, id, v, days, ndays, error);
}

/* ---- the journal ------------------------------------------------------------------------------- */

static bool jn_push(sa_rollw_t *w, const char *id, const int64_t *days, size_t ndays, sa_error_t *error)
{
    jentry_t *e;
    if (!SA_VEC_GROW(w->jn, w->jncap, w->njn, 1, 64))
        return sa_error_nomem(error);
    e = &w->jn[w->njn];
    e->id = strdup(id);
    e->days = malloc((ndays ? ndays : 1) * sizeof *e->days);
    if (!e->id || !e->days) {
        free(e->id);
        free(e->days);
        return sa_error_nomem(error);
    }
    memcpy(e->days, days, ndays * sizeof *days);
    e->ndays = ndays;
    w->njn++;
    return true;
}

bool sa_rollw_journal_add(sa_rollw_t *w, const char *id, const bson_t *old_doc, sa_error_t *error)
{
    int64_t *days;
    bool ok;
    if (!contrib(w, old_doc, &w->oldc, error))
        return false;
    if (!(days = malloc((w->oldc.ndays ? w->oldc.ndays : 1) * sizeof *days)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < w->oldc.ndays; i++)
        days[i] = w->oldc.days[i].day;
    ok = jn_push(w, id, days, w->oldc.ndays, error);
    free(days);
    return ok;
}

bool sa_rollw_journal_add_open(sa_rollw_t *w, const char *id, sa_error_t *error)
{
    int64_t days[2] = {SA_UNSET, sa_rollup_live_of(w->cluster, id)};
    return jn_push(w, id, days, days[1] == SA_UNSET ? 1 : 2, error);
}

/* A day value as the journal stores it: the open document -1, live shard k -2 - k. */
static int64_t jn_day_encode(int64_t day)
{
    if (day == SA_UNSET)
        return -1;
    if (sa_rollup_kind(day) == SA_ROLLUP_K_LIVE)
        return -2 - (day - SA_ROLLUP_LIVE);
    return day;
}

static int64_t jn_day_decode(int64_t v)
{
    if (v >= 0)
        return v;
    if (v <= -2 && v > -2 - SA_ROLLUP_LIVE_SHARDS)
        return SA_ROLLUP_LIVE + (-2 - v);
    return SA_UNSET;
}

/* The _id of one of the cluster's bookkeeping documents in the rollups collection: "<cluster>:<what>". */
static char *cluster_doc_id(const sa_rollw_t *w, const char *what)
{
    size_t n = strlen(w->cluster) + strlen(what) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s:%s", w->cluster, what);
    return s;
}

static char *pending_id(const sa_rollw_t *w)
{
    return cluster_doc_id(w, "pending");
}

/* Runs {$set|$unset: {batches.NONCE: ...}} on the journal (upserted). */
static bool journal_update(sa_rollw_t *w, const bson_t *upd, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    bson_error_t berr;
    char *pid = pending_id(w);
    bool ok;
    if (!pid)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(&filter, "_id", pid);
    BSON_APPEND_BOOL(&opts, "upsert", true);
    ok = mongoc_collection_update_one(w->coll, &filter, upd, &opts, NULL, &berr);
    if (!ok)
        sa_mongo_error(error, w->hosts, "writing the rollups' journal", &berr);
    free(pid);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

bool sa_rollw_journal_write(sa_rollw_t *w, sa_error_t *error)
{
    bson_t upd = BSON_INITIALIZER, set, batch, jobs, job, days;
    char nonce[96], host[64] = "", key[128];
    static unsigned seq;
    bool ok;

    if (!w->njn)
        return true;
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++) { /* a field name: no dots, no $ */
        if (*p == '.' || *p == '$')
            *p = '_';
    }
    snprintf(nonce, sizeof nonce, "%s_%ld_%ld_%u", host, (long)getpid(), (long)time(NULL), seq++);
    snprintf(key, sizeof key, "batches.%s", nonce);
    BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &set);
    BSON_APPEND_DOCUMENT_BEGIN(&set, key, &batch);
    BSON_APPEND_UTF8(&batch, "host", host);
    BSON_APPEND_INT64(&batch, "pid", (int64_t)getpid());
    BSON_APPEND_DATE_TIME(&batch, "at", (int64_t)time(NULL) * 1000);
    BSON_APPEND_ARRAY_BEGIN(&batch, "jobs", &jobs);
    for (size_t i = 0; i < w->njn; i++) {
        char ib[16], db[16];
        const char *ik, *dk;
        bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
        BSON_APPEND_DOCUMENT_BEGIN(&jobs, ik, &job);
        BSON_APPEND_UTF8(&job, "id", w->jn[i].id);
        BSON_APPEND_ARRAY_BEGIN(&job, "days", &days);
        for (size_t d = 0; d < w->jn[i].ndays; d++) {
            bson_uint32_to_string((uint32_t)d, &dk, db, sizeof db);
            BSON_APPEND_INT64(&days, dk, jn_day_encode(w->jn[i].days[d]));
        }
        bson_append_array_end(&job, &days);
        bson_append_document_end(&jobs, &job);
    }
    bson_append_array_end(&batch, &jobs);
    bson_append_document_end(&set, &batch);
    bson_append_document_end(&upd, &set);
    ok = journal_update(w, &upd, error);
    bson_destroy(&upd);
    if (ok) {
        jn_clear(w);
        if (!SA_VEC_GROW(w->nonces, w->noncecap, w->nnonces, 1, 4) || !(w->nonces[w->nnonces] = strdup(nonce)))
            return sa_error_nomem(error);
        w->nnonces++;
    }
    return ok;
}

/* Removes batches nonces[0..n) from the journal. */
static bool journal_remove(sa_rollw_t *w, char *const *nonces, size_t n, sa_error_t *error)
{
    bson_t upd = BSON_INITIALIZER, unset;
    bool ok;
    if (!n)
        return true;
    BSON_APPEND_DOCUMENT_BEGIN(&upd, "$unset", &unset);
    for (size_t i = 0; i < n; i++) {
        char key[128];
        snprintf(key, sizeof key, "batches.%s", nonces[i]);
        BSON_APPEND_UTF8(&unset, key, "");
    }
    bson_append_document_end(&upd, &unset);
    ok = journal_update(w, &upd, error);
    bson_destroy(&upd);
    return ok;
}

bool sa_rollw_journal_done(sa_rollw_t *w, sa_error_t *error)
{
    bool ok = journal_remove(w, w->nonces, w->nnonces, error);
    if (ok) {
        for (size_t i = 0; i < w->nnonces; i++)
            free(w->nonces[i]);
        w->nnonces = 0;
    }
    return ok;
}

/* True when a batch was left by a writer that is gone. */
static bool batch_dead(const char *host, int64_t pid, int64_t at)
{
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    for (char *p = me; *p; p++) {
        if (*p == '.' || *p == '$')
            *p = '_';
    }
    if (host && strcmp(host, me) == 0 && pid > 0)
        return pid == (int64_t)getpid() ? false : kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    return at != SA_UNSET && at < (int64_t)time(NULL) - JOURNAL_STALE;
}

/* Reads a job document by _id from jobs, else superseded (NULL: none). Caller destroys. */
static bson_t *read_job(mongoc_collection_t *jobs, mongoc_collection_t *sup, const char *id, const char *hosts,
                        sa_error_t *error, bool *failed)
{
    mongoc_collection_t *colls[2] = {jobs, sup};
    *failed = false;
    for (int c = 0; c < 2; c++) {
        bson_t filter = BSON_INITIALIZER;
        mongoc_cursor_t *cur;
        const bson_t *b;
        bson_error_t berr;
        bson_t *copy = NULL;
        BSON_APPEND_UTF8(&filter, "_id", id);
        cur = mongoc_collection_find_with_opts(colls[c], &filter, NULL, NULL);
        if (mongoc_cursor_next(cur, &b))
            copy = bson_copy(b);
        else if (mongoc_cursor_error(cur, &berr)) {
            sa_mongo_error(error, hosts, "reading jobs", &berr);
            *failed = true;
        }
        mongoc_cursor_destroy(cur);
        bson_destroy(&filter);
        if (copy || *failed)
            return copy;
    }
    return NULL;
}

/* Restages the jobs of one journaled batch. */
static bool recover_batch(sa_rollw_t *w, bson_iter_t *batch, mongoc_collection_t *jobs, mongoc_collection_t *sup,
                          size_t *njobs, sa_error_t *error)
{
    bson_iter_t arr, job, f, d;
    if (!bson_iter_find(batch, "jobs") || !BSON_ITER_HOLDS_ARRAY(batch) || !bson_iter_recurse(batch, &arr))
        return true;
    while (bson_iter_next(&arr)) {
        const char *id = NULL;
        int64_t days[SA_ROLLUP_MAX_DAYS + 4];
        size_t nd = 0;
        bson_t *doc;
        bool failed, ok = true;
        if (!BSON_ITER_HOLDS_DOCUMENT(&arr) || !bson_iter_recurse(&arr, &job))
            continue;
        while (bson_iter_next(&job)) {
            if (strcmp(bson_iter_key(&job), "id") == 0 && BSON_ITER_HOLDS_UTF8(&job))
                id = bson_iter_utf8(&job, NULL);
            else if (strcmp(bson_iter_key(&job), "days") == 0 && BSON_ITER_HOLDS_ARRAY(&job) &&
                     bson_iter_recurse(&job, &d)) {
                while (bson_iter_next(&d) && nd < sizeof days / sizeof days[0]) {
                    int64_t v = bson_iter_as_int64(&d);
                    days[nd++] = jn_day_decode(v);
                }
            }
        }
        if (!id)
            continue;
        (void)f;
        doc = read_job(jobs, sup, id, w->hosts, error, &failed);
        if (failed)
            return false;
        {
            bson_iter_t it;
            int64_t v = doc && bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it)
                            ? bson_iter_as_int64(&it)
                            : INT64_MAX; /* gone: its members go whatever their version */
            ok = sa_rollw_stage_days(w, id, v, days, nd, doc, error);
        }
        if (doc)
            bson_destroy(doc);
        if (!ok)
            return false;
        (*njobs)++;
    }
    return true;
}

bool sa_rollw_recover(sa_rollw_t *w, mongoc_collection_t *jobs, mongoc_collection_t *superseded, size_t *njobs,
                      sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *b;
    bson_error_t berr;
    char *pid = pending_id(w), **dead = NULL;
    size_t ndead = 0, deadcap = 0, n = 0;
    bool ok = true;

    if (njobs)
        *njobs = 0;
    if (!pid)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(&filter, "_id", pid);
    cur = mongoc_collection_find_with_opts(w->coll, &filter, NULL, NULL);
    if (mongoc_cursor_next(cur, &b)) {
        bson_iter_t it, batches, batch;
        if (bson_iter_init_find(&it, b, "batches") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
            bson_iter_recurse(&it, &batches)) {
            while (ok && bson_iter_next(&batches)) {
                const char *host = NULL;
                int64_t bpid = 0, at = SA_UNSET;
                bson_iter_t x;
                if (!BSON_ITER_HOLDS_DOCUMENT(&batches) || !bson_iter_recurse(&batches, &x))
                    continue;
                while (bson_iter_next(&x)) {
                    if (strcmp(bson_iter_key(&x), "host") == 0 && BSON_ITER_HOLDS_UTF8(&x))
                        host = bson_iter_utf8(&x, NULL);
                    else if (strcmp(bson_iter_key(&x), "pid") == 0 && BSON_ITER_HOLDS_NUMBER(&x))
                        bpid = bson_iter_as_int64(&x);
                    else if (strcmp(bson_iter_key(&x), "at") == 0 && BSON_ITER_HOLDS_DATE_TIME(&x))
                        at = bson_iter_date_time(&x) / 1000;
                }
                if (!batch_dead(host, bpid, at))
                    continue;
                ok = bson_iter_recurse(&batches, &batch) && recover_batch(w, &batch, jobs, superseded, &n, error);
                if (ok && (!SA_VEC_GROW(dead, deadcap, ndead, 1, 4) ||
                           !(dead[ndead] = strdup(bson_iter_key(&batches)))))
                    ok = sa_error_nomem(error);
                else if (ok)
                    ndead++;
            }
        }
    } else if (mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, w->hosts, "reading the rollups' journal", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    free(pid);
    ok = ok && (!ndead || (sa_rollw_flush(w, error) && journal_remove(w, dead, ndead, error)));
    for (size_t i = 0; i < ndead; i++)
        free(dead[i]);
    free(dead);
    if (njobs)
        *njobs = n;
    return ok;
}

/* ---- reading and writing rollup documents ---------------------------------------------------- */

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

        sa_bson_append_in_strings(&filter, "_id", ids + off, end - off);
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

/*
 * Writes doc (its _v already the next version) over the document id stored at version v
 * (0: not stored: an insert); *conflict when someone wrote it since (a duplicate _id, or
 * no document at that version).
 */
static bool cond_write(sa_rollw_t *w, const char *id, int64_t v, const bson_t *doc, bool *conflict, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, reply;
    bson_error_t berr;
    bool ok;

    *conflict = false;
    if (v == 0) {
        ok = mongoc_collection_insert_one(w->coll, doc, NULL, NULL, &berr);
        if (!ok && berr.code == 11000)
            ok = *conflict = true;
    } else {
        BSON_APPEND_UTF8(&filter, "_id", id);
        BSON_APPEND_INT64(&filter, "_v", v);
        ok = mongoc_collection_replace_one(w->coll, &filter, doc, NULL, &reply, &berr);
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
    bson_destroy(&filter);
    return ok;
}

/* Writes d (stored at d->v; 0: new) as version d->v + 1; *conflict when someone wrote it since. */
static bool write_doc(sa_rollw_t *w, const sa_rolldoc_t *d, bool *conflict, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    bool ok = sa_rolldoc_to_bson(d, d->v + 1, &b, error) && cond_write(w, d->id, d->v, &b, conflict, error);
    if (ok && !*conflict)
        w->stats.docs_written++;
    bson_destroy(&b);
    return ok;
}

/*
 * Writes the rows document of day document d, computed from its members of version m_v,
 * unless one computed from members as new or newer is there ({_id, m_v < mine} upserted:
 * a newer one makes the upsert's insert a duplicate _id, which is left alone).
 */
static bool write_rows(sa_rollw_t *w, const sa_rolldoc_t *d, int64_t m_v, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, cond;
    bson_error_t berr;
    char *id = sa_rollup_rows_id(d->cluster, d->day, d->part);
    bool ok;

    if (!id)
        return sa_error_nomem(error);
    ok = sa_rolldoc_rows_bson(d, m_v, &b, error);
    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "m_v", &cond);
    BSON_APPEND_INT64(&cond, "$lt", m_v);
    bson_append_document_end(&filter, &cond);
    BSON_APPEND_BOOL(&opts, "upsert", true);
    if (ok && !mongoc_collection_replace_one(w->coll, &filter, &b, &opts, NULL, &berr) && berr.code != 11000) {
        sa_mongo_error(error, w->hosts, "writing rollups", &berr);
        ok = false;
    }
    free(id);
    bson_destroy(&b);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

/* ---- the job documents whose GPUs have no type yet ---------------------------------------------- */

static char *untyped_id(const sa_rollw_t *w, bool waiting)
{
    return cluster_doc_id(w, waiting ? "untyped-config" : "untyped");
}

static bool list_read(sa_rollw_t *w, bool waiting, sa_strv_t *ids, int64_t *v, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *b;
    bson_error_t berr;
    char *id = untyped_id(w, waiting);
    bool ok = true;

    *v = 0;
    if (!id)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(&filter, "_id", id);
    cur = mongoc_collection_find_with_opts(w->coll, &filter, NULL, NULL);
    if (mongoc_cursor_next(cur, &b)) {
        bson_iter_t it, arr;
        if (bson_iter_init_find(&it, b, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
            *v = bson_iter_as_int64(&it);
        if (bson_iter_init_find(&it, b, "ids") && BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &arr)) {
            while (ok && bson_iter_next(&arr)) {
                if (BSON_ITER_HOLDS_UTF8(&arr) && !sa_strv_push(ids, bson_iter_utf8(&arr, NULL)))
                    ok = sa_error_nomem(error);
            }
        }
        if (*v == 0)
            *v = 1;
    } else if (mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, w->hosts, "reading rollups", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    free(id);
    return ok;
}

bool sa_rollw_untyped_list(sa_rollw_t *w, sa_strv_t *ids, int64_t *v, sa_error_t *error)
{
    return list_read(w, false, ids, v, error);
}

bool sa_rollw_waiting_list(sa_rollw_t *w, sa_strv_t *ids, int64_t *v, sa_error_t *error)
{
    return list_read(w, true, ids, v, error);
}

/* Writes the list (stored at version v, 0: none) as version v + 1; *conflict when it changed since. */
static bool untyped_write(sa_rollw_t *w, bool waiting, const sa_strv_t *ids, int64_t v, bool *conflict,
                          sa_error_t *error)
{
    bson_t doc = BSON_INITIALIZER, arr;
    char *id = untyped_id(w, waiting);
    bool ok;

    *conflict = false;
    if (!id)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(&doc, "_id", id);
    BSON_APPEND_INT64(&doc, "_v", v + 1);
    BSON_APPEND_ARRAY_BEGIN(&doc, "ids", &arr);
    for (size_t i = 0; i < ids->n; i++) {
        char ib[16];
        const char *ik;
        bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
        BSON_APPEND_UTF8(&arr, ik, ids->v[i]);
    }
    bson_append_array_end(&doc, &arr);
    ok = cond_write(w, id, v, &doc, conflict, error);
    free(id);
    bson_destroy(&doc);
    return ok;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* list := (list - del) + add, sorted and unique. */
static bool untyped_apply(sa_strv_t *list, const sa_strv_t *add, const sa_strv_t *del)
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

/* The waiting list keeps its SA_ROLLW_WAITING_MAX newest jobs (by job id): the oldest leave first. */
static void cap_waiting(sa_strv_t *list)
{
    size_t drop;
    if (list->n <= SA_ROLLW_WAITING_MAX)
        return;
    qsort(list->v, list->n, sizeof *list->v, sa_rollup_id_job_cmp);
    drop = list->n - SA_ROLLW_WAITING_MAX;
    for (size_t i = 0; i < drop; i++)
        free(list->v[i]);
    memmove(list->v, list->v + drop, SA_ROLLW_WAITING_MAX * sizeof *list->v);
    list->n = SA_ROLLW_WAITING_MAX;
    qsort(list->v, list->n, sizeof *list->v, str_cmp);
}

static bool list_update(sa_rollw_t *w, bool waiting, const sa_strv_t *add, const sa_strv_t *del, sa_error_t *error)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        sa_strv_t list;
        int64_t v;
        bool changed, conflict = false, ok;
        sa_strv_init(&list);
        ok = list_read(w, waiting, &list, &v, error);
        if (ok) {
            size_t before = list.n;
            sa_strv_t old;
            sa_strv_init(&old);
            for (size_t i = 0; ok && i < list.n; i++)
                ok = sa_strv_push(&old, list.v[i]);
            ok = ok && untyped_apply(&list, add, del);
            if (ok && waiting)
                cap_waiting(&list);
            if (ok) { /* the same set again: nothing to write */
                changed = list.n != before;
                for (size_t i = 0; !changed && i < list.n; i++)
                    changed = !sa_strv_contains(&old, list.v[i]);
            }
            sa_strv_clear(&old);
            if (!ok)
                sa_error_nomem(error);
            else if (changed)
                ok = untyped_write(w, waiting, &list, v, &conflict, error);
        }
        sa_strv_clear(&list);
        if (!ok)
            return false;
        if (!conflict)
            return true;
    }
    sa_error_set(error, SA_ERR_MONGO, 0, "MongoDB at %s: the rollups' untyped list kept changing while being written",
                 w->hosts);
    return false;
}

bool sa_rollw_untyped_update(sa_rollw_t *w, const sa_strv_t *add, const sa_strv_t *del, sa_error_t *error)
{
    return list_update(w, false, add, del, error);
}

bool sa_rollw_waiting_update(sa_rollw_t *w, const sa_strv_t *add, const sa_strv_t *del, sa_error_t *error)
{
    return list_update(w, true, add, del, error);
}

/*
 * Merges the staged mini into its stored document and writes it: *conflict when the
 * document changed between the read and the write (then read and merged again). One
 * document at a time, so that what a flush holds is one stored document (a live shard, a
 * busy day), not all of them.
 */
static bool flush_one(sa_rollw_t *w, const sa_rolldoc_t *mini, bool *conflict, sa_error_t *error)
{
    sa_rolldoc_t pd;
    char *id = mini->id;
    bool ok;

    *conflict = false;
    ok = sa_rolldoc_new(&pd, w->cluster, mini->day, mini->part, error) && read_docs(w, &id, &pd, 1, error);
    if (ok) {
        pd.changed = false;
        ok = sa_rolldoc_merge(&pd, mini, error);
    }
    ok = ok && (!pd.changed || write_doc(w, &pd, conflict, error));
    /* the day's rows from the members just written (or found): also when a run killed
     * between the two writes left them behind */
    ok = ok && (*conflict || sa_rollup_kind(pd.day) != SA_ROLLUP_K_DAY ||
                write_rows(w, &pd, pd.v + (pd.changed ? 1 : 0), error));
    sa_rolldoc_clear(&pd);
    return ok;
}

bool sa_rollw_flush(sa_rollw_t *w, sa_error_t *error)
{
    bool ok = true;

    for (size_t i = 0; ok && i < w->nmini; i++) {
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
            ok = flush_one(w, &w->mini[i], &conflict, error);
        }
    }
    if (ok && (w->untyped_add.n || w->untyped_del.n)) {
        ok = sa_rollw_untyped_update(w, &w->untyped_add, &w->untyped_del, error);
        sa_strv_clear(&w->untyped_add);
        sa_strv_clear(&w->untyped_del);
    }
    if (ok)
        minis_clear(w);
    return ok;
}
