/*
 * test_rollup_writer.c - the rollup writer (ingest/rollup/) without a server, over an
 * in-memory document store (tu_docstore.h), driven through the archive's hook as the
 * archive drives it (journal, job writes, stage, flush, as_of).
 *
 * - Every write of every poll of a scenario that starts, ends, requeues, re-types,
 *   supersedes (a job id reused) and vanishes runs is made to fail as a kill would; the
 *   next writer's recovery then leaves the rollups equal to their job documents (the real
 *   verify, sa_rollup_rebuild, says 0 differ), with and without the killed poll run again,
 *   and the next poll keeps them so.
 * - Before every write, a reader takes the last commit and reads every rollup document as
 *   it sees it: what it reads is exactly the rollups of the job documents at a commit (the
 *   last one, or the one being made), never half a flush.
 * - Job ids that sweep all 64 parts and wrap (MaxJobId): the verify stays at 0 after
 *   every poll, documents that hold nothing but tombstones included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sa_jobview.h"
#include "sa_rollup.h"
#include "sa_rollup_rebuild.h"
#include "sa_rollup_writer.h"
#include "sa_rollup_writer_private.h"
#include "testutil.h"
#include "tu_docstore.h"

#define CL "k"
/* 2026-10-04T00:00:00Z */
#define D0 1791072000LL
#define H 3600LL

/* ---- job documents --------------------------------------------------------------------------- */

/*
 * A job document of cluster k: job_id, state, submit (hours after D0), and its runs, each
 * "start,end,gpus,type" in hours (end -1: still running; type "" untyped, its source unknown).
 */
static bson_t *job(int64_t job_id, const char *state, double submit_h, const char *runs, const char *extra)
{
    char json[4096], rj[3000] = "";
    size_t n = 0;
    const char *p = runs;
    bson_error_t e;
    bson_t *b;

    while (p && *p) {
        double s, en;
        int g, used = 0;
        char type[32] = "";
        if (sscanf(p, "%lf,%lf,%d,%31[a-z0-9]%n", &s, &en, &g, type, &used) != 4) {
            type[0] = '\0';
            if (sscanf(p, "%lf,%lf,%d%n", &s, &en, &g, &used) != 3)
                fail_msg("bad run %s", p);
        }
        n += (size_t)snprintf(rj + n, sizeof rj - n, "%s{\"start\": {\"$date\": %lld}", n ? ", " : "",
                              (long long)((D0 + (int64_t)(s * H)) * 1000));
        if (en >= 0)
            n += (size_t)snprintf(rj + n, sizeof rj - n, ", \"end\": {\"$date\": %lld}",
                                  (long long)((D0 + (int64_t)(en * H)) * 1000));
        n += (size_t)snprintf(rj + n, sizeof rj - n,
                              ", \"state\": \"%s\", \"gpus\": %d, \"cpus\": 4, \"mem_mb\": 1000, \"nodes\": \"n01\", "
                              "\"node_count\": 1, \"submit\": {\"$date\": %lld}",
                              en < 0 ? "RUNNING" : "COMPLETED", g, (long long)((D0 + (int64_t)(submit_h * H)) * 1000));
        if (g && type[0])
            n += (size_t)snprintf(rj + n, sizeof rj - n,
                                  ", \"gpus_by_type\": [{\"type\": \"%s\", \"count\": %d}], \"gpu_type_source\": \"tres\"",
                                  type, g);
        else if (g)
            n += (size_t)snprintf(rj + n, sizeof rj - n, ", \"gpu_type_source\": \"unknown\"");
        n += (size_t)snprintf(rj + n, sizeof rj - n, "}");
        p += used;
        while (*p == ';' || *p == ' ')
            p++;
    }
    snprintf(json, sizeof json,
             "{\"_id\": \"k:%lld\", \"job_id\": %lld, \"cluster\": \"k\", \"account\": \"acct%lld\", \"user\": \"u%lld\", "
             "\"partition\": \"gpu\", \"qos\": \"normal\", \"state\": \"%s\", \"submit\": {\"$date\": %lld}, "
             "\"req\": {\"gpus\": 1, \"cpus\": 4, \"mem_mb\": 1000}%s%s, \"runs\": [%s]}",
             (long long)job_id, (long long)job_id, (long long)(job_id % 3), (long long)(job_id % 5), state,
             (long long)((D0 + (int64_t)(submit_h * H)) * 1000), extra ? ", " : "", extra ? extra : "", rj);
    if (!(b = bson_new_from_json((const uint8_t *)json, -1, &e)))
        fail_msg("bad job JSON (%s): %s", e.message, json);
    return b;
}

/* ---- the archive, as far as the writer sees it -------------------------------------------------- */

typedef struct {
    sa_docstore_t *store;
    tu_docstore_t *mem;
    sa_rollup_writer_t *w;
    /* the reader's check before every write */
    bool check_reads;
    size_t reads;
    sa_rollup_doc_t *last, *now; /* views: the last committed state seen, the state of the documents now */
    size_t nlast, nnow;
} world_t;

/* A change of one job: its new document (owned), and whether its open runs end (vanished). */
typedef struct {
    bson_t *doc;
    bool with_open;
    bool supersede; /* the stored document of its _id moves to jobs_superseded first */
} change_t;

static char *str_of(const bson_t *b, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, b, key) && BSON_ITER_HOLDS_UTF8(&it) ? strdup(bson_iter_utf8(&it, NULL)) : NULL;
}

static int64_t int_of(const bson_t *b, const char *key)
{
    bson_iter_t it;
    if (!bson_iter_init_find(&it, b, key))
        return 0;
    if (BSON_ITER_HOLDS_DATE_TIME(&it))
        return bson_iter_date_time(&it) / 1000;
    return BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it) : 0;
}

/*
 * One poll as the archive makes it, every write through the store: the changes journaled,
 * the displaced documents moved to jobs_superseded, the documents written at their next
 * version, the changes staged, flushed, and the observation time said. False when a write
 * failed (the "kill": nothing more is done).
 */
static bool run_poll(world_t *wd, change_t *ch, size_t n, int64_t at)
{
    sa_archive_change_t *c = calloc(2 * n + 1, sizeof *c);
    bson_t **befores = calloc(n + 1, sizeof *befores), **afters = calloc(n + 1, sizeof *afters);
    bson_t **sups = calloc(n + 1, sizeof *sups);
    char **ids = calloc(n + 1, sizeof *ids), **sids = calloc(n + 1, sizeof *sids);
    size_t nc = 0;
    sa_error_t err;
    bool ok = true;

    for (size_t i = 0; i < n; i++) {
        const bson_t *stored;
        ids[i] = str_of(ch[i].doc, "_id");
        stored = tu_docstore_get(wd->mem, "jobs", ids[i]);
        befores[i] = stored ? bson_copy(stored) : NULL;
        if (ch[i].supersede && stored) {
            char sid[128];
            snprintf(sid, sizeof sid, "%s:%lld", ids[i], (long long)int_of(stored, "submit"));
            sids[i] = strdup(sid);
            sups[i] = bson_new();
            bson_copy_to_excluding_noinit(stored, sups[i], "_id", "_v", NULL);
            BSON_APPEND_UTF8(sups[i], "_id", sid);
        }
    }
    /* the journal: each job with what its rollups hold now */
    for (size_t i = 0; i < n; i++) {
        c[nc++] = (sa_archive_change_t){ids[i], befores[i], NULL, 0, ch[i].with_open};
        if (sups[i])
            c[nc++] = (sa_archive_change_t){sids[i], NULL, NULL, 0, false};
    }
    ok = sa_rollup_writer_journal(wd->w, c, nc, &err);
    /* the documents displaced, then the jobs' */
    for (size_t i = 0; ok && i < n; i++) {
        bool conflict;
        if (sups[i]) {
            const bson_t *one[1] = {sups[i]};
            ok = sa_docstore_insert_many(wd->store, "jobs_superseded", one, 1, NULL, &err);
        }
        if (ok) {
            int64_t v = befores[i] ? int_of(befores[i], "_v") : 0; /* a reused id's document goes on from the old one's */
            afters[i] = bson_new();
            bson_copy_to_excluding_noinit(ch[i].doc, afters[i], "_v", NULL);
            BSON_APPEND_INT64(afters[i], "_v", v + 1);
            ok = sa_docstore_put(wd->store, "jobs", ids[i], befores[i] ? v : SA_DOCSTORE_ABSENT, afters[i], &conflict,
                                 &err);
            assert_false(ok && conflict);
        }
    }
    /* the rollups of what was written */
    nc = 0;
    for (size_t i = 0; ok && i < n; i++) {
        c[nc++] = (sa_archive_change_t){ids[i], befores[i], afters[i], int_of(afters[i], "_v"), ch[i].with_open};
        if (sups[i])
            c[nc++] = (sa_archive_change_t){sids[i], NULL, sups[i], 0, false};
    }
    ok = ok && sa_rollup_writer_stage(wd->w, c, nc, &err) && sa_rollup_writer_flush(wd->w, &err) &&
         sa_rollup_writer_as_of(wd->w, at, &err) && sa_rollup_writer_flush(wd->w, &err);
    if (!ok && !tu_docstore_killed(wd->mem))
        fail_msg("poll: %s", err.message);
    for (size_t i = 0; i < n; i++) {
        free(ids[i]);
        free(sids[i]);
        if (befores[i])
            bson_destroy(befores[i]);
        if (afters[i])
            bson_destroy(afters[i]);
        if (sups[i])
            bson_destroy(sups[i]);
    }
    free(c);
    free(befores);
    free(afters);
    free(sups);
    free(ids);
    free(sids);
    return ok;
}

/* ---- what the rollups should be, and what a reader sees ---------------------------------------- */

static void views_clear(sa_rollup_doc_t **v, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        sa_rollup_doc_clear(&(*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

/* The document of key k in v (created empty). */
static sa_rollup_doc_t *view_doc(sa_rollup_doc_t **v, size_t *n, const sa_rollup_key_t *k)
{
    sa_error_t err;
    char *id = sa_rollup_key_id(k);
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*v)[i].id, id) == 0) {
            free(id);
            return &(*v)[i];
        }
    }
    free(id);
    *v = realloc(*v, (*n + 1) * sizeof **v);
    assert_true(sa_rollup_doc_new(&(*v)[*n], k, &err));
    return &(*v)[(*n)++];
}

typedef struct {
    sa_rollup_doc_t **v;
    size_t *n;
    sa_jobview_t view;
    sa_rollup_contrib_t c;
} expect_t;

static void expect_one(const bson_t *doc, void *ctx)
{
    expect_t *x = ctx;
    sa_error_t err;
    char *id = str_of(doc, "_id");
    assert_true(sa_jobview_read(&x->view, doc, &err));
    assert_true(sa_rollup_contrib_of(&x->c, &x->view, &err));
    for (size_t i = 0; i < x->c.ndocs; i++) {
        sa_rollup_key_t k = sa_rollup_key(CL, x->c.docs[i].kind, x->c.docs[i].day, sa_rollup_part_of(id));
        assert_true(sa_rollup_doc_put(view_doc(x->v, x->n, &k), id, int_of(doc, "_v"), &x->c, &err));
    }
    free(id);
}

/* What the rollups of the job documents are now (every content document, members and lists). */
static void expected(world_t *wd, sa_rollup_doc_t **v, size_t *n)
{
    expect_t x;
    views_clear(v, n);
    memset(&x, 0, sizeof x);
    x.v = v;
    x.n = n;
    sa_jobview_init(&x.view);
    sa_rollup_contrib_init(&x.c);
    tu_docstore_each(wd->mem, "jobs", expect_one, &x);
    tu_docstore_each(wd->mem, "jobs_superseded", expect_one, &x);
    sa_rollup_contrib_clear(&x.c);
    sa_jobview_clear(&x.view);
}

typedef struct {
    int64_t seq;
    sa_rollup_doc_t *v;
    size_t n;
    const tu_docstore_t *mem;
} read_t;

/* One stored rollup document as a reader at r->seq sees it; its rows must be its members' sums. */
static void read_one(const bson_t *doc, void *ctx)
{
    read_t *r = ctx;
    sa_rollup_key_t k;
    sa_rollup_doc_t d;
    bson_t prev;
    sa_error_t err;
    char *id = str_of(doc, "_id");
    const bson_t *b = doc;

    if (!sa_rollup_key_parse(CL, id, &k) || k.kind == SA_ROLLUP_K_ROWS || k.kind > SA_ROLLUP_K_LIVE) {
        free(id);
        return;
    }
    free(id);
    switch (sa_rollup_version(doc, r->seq, &prev)) {
    case SA_ROLLUP_VER_ABSENT: return;
    case SA_ROLLUP_VER_NEWER: fail_msg("a reader at commit %lld finds a document written twice since", (long long)r->seq);
    case SA_ROLLUP_VER_PREV: b = &prev; break;
    case SA_ROLLUP_VER_THIS: break;
    }
    sa_rollup_doc_init(&d);
    assert_true(sa_rollup_doc_read(&d, CL, b, &err));
    if (k.kind == SA_ROLLUP_K_MEMBERS) { /* the day's rows at the same commit */
        sa_rollup_key_t rk = sa_rollup_key(CL, SA_ROLLUP_K_ROWS, k.day, k.part);
        char *rid = sa_rollup_key_id(&rk);
        const bson_t *rdoc = tu_docstore_get(r->mem, SA_ROLLUP_COLL, rid), *rb = rdoc;
        sa_rollup_doc_t rows;
        sa_rollup_doc_init(&rows);
        if (!sa_rollup_doc_empty(&d)) {
            if (!rdoc)
                fail_msg("%s: no rows", rid);
            switch (sa_rollup_version(rdoc, r->seq, &prev)) {
            case SA_ROLLUP_VER_PREV: rb = &prev; break;
            case SA_ROLLUP_VER_THIS: break;
            default: fail_msg("%s: no rows at commit %lld", rid, (long long)r->seq);
            }
            assert_true(sa_rollup_doc_read(&rows, CL, rb, &err));
            if (!sa_rollup_doc_rows_match(&d, &rows))
                fail_msg("%s: rows are not its members' sums at commit %lld", rid, (long long)r->seq);
        }
        sa_rollup_doc_clear(&rows);
        free(rid);
    }
    if (sa_rollup_doc_empty(&d)) {
        sa_rollup_doc_clear(&d);
        return;
    }
    r->v = realloc(r->v, (r->n + 1) * sizeof *r->v);
    r->v[r->n++] = d;
}

/* True when the two views hold the same non-empty documents, equal. */
static bool same_view(const sa_rollup_doc_t *a, size_t na, const sa_rollup_doc_t *b, size_t nb, char *why, size_t n)
{
    size_t ca = 0, cb = 0;
    for (size_t i = 0; i < na; i++) {
        const sa_rollup_doc_t *o = NULL;
        if (sa_rollup_doc_empty(&a[i]))
            continue;
        ca++;
        for (size_t j = 0; j < nb && !o; j++)
            o = strcmp(b[j].id, a[i].id) == 0 ? &b[j] : NULL;
        if (!o || !sa_rollup_doc_equal(&a[i], o)) {
            snprintf(why, n, "%s: %s", a[i].id, o ? "differs" : "missing");
            return false;
        }
    }
    for (size_t j = 0; j < nb; j++)
        cb += !sa_rollup_doc_empty(&b[j]);
    if (ca != cb)
        snprintf(why, n, "%zu documents against %zu", ca, cb);
    return ca == cb;
}

/*
 * Before every write: a reader takes the last commit and reads every rollup document as it
 * sees it. That must be the rollups at the last commit seen, or (the commit being made) of
 * the documents as they are now.
 */
static void reader(void *ctx)
{
    world_t *wd = ctx;
    read_t r = {0, NULL, 0, wd->mem};
    sa_rollup_commit_t c;
    sa_error_t err;
    sa_rollup_key_t ck = sa_rollup_key(CL, SA_ROLLUP_K_COMMIT, 0, 0);
    char *cid, why[200], why2[200];

    if (!wd->check_reads)
        return;
    cid = sa_rollup_key_id(&ck);
    wd->reads++;
    sa_rollup_commit_init(&c);
    assert_true(sa_rollup_commit_read(&c, tu_docstore_get(wd->mem, SA_ROLLUP_COLL, cid), &err));
    r.seq = c.seq;
    tu_docstore_each(wd->mem, SA_ROLLUP_COLL, read_one, &r);
    if (!same_view(r.v, r.n, wd->last, wd->nlast, why, sizeof why)) {
        expected(wd, &wd->now, &wd->nnow);
        if (!same_view(r.v, r.n, wd->now, wd->nnow, why2, sizeof why2))
            fail_msg("a reader at commit %lld (write %zu) sees neither the last commit (%s) nor the documents (%s)",
                     (long long)c.seq, tu_docstore_writes(wd->mem) + 1, why, why2);
        /* the commit was made: it is the last one now */
        views_clear(&wd->last, &wd->nlast);
        wd->last = wd->now;
        wd->nlast = wd->nnow;
        wd->now = NULL;
        wd->nnow = 0;
    }
    views_clear(&r.v, &r.n);
    sa_rollup_commit_clear(&c);
    free(cid);
}

/* The rollups equal their job documents: the verify (the real one) finds no difference, and the reader's view agrees. */
static void check_equal(world_t *wd, const char *when)
{
    size_t docs = 0, differ = 0;
    sa_error_t err;
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    bool ok = sa_rollup_rebuild(wd->store, "", CL, false, SA_UNSET, &docs, &differ, m, &err);
    fclose(m);
    if (!ok)
        fail_msg("%s: the verify failed: %s", when, err.message);
    if (differ)
        fail_msg("%s: %zu rollup document(s) differ from the job documents:\n%s", when, differ, out);
    free(out);
    expected(wd, &wd->last, &wd->nlast); /* committed: the reader's reference from here on */
}

/* A pid no process has now (a child that exited): each writer of the test is a "process" of its own. */
static int64_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return (int64_t)pid;
}

static sa_rollup_writer_t *writer_new(world_t *wd)
{
    sa_rollup_writer_t *w = sa_rollup_writer_new(wd->store, "", CL);
    sa_rollup_writer_claim_pid(w, dead_pid());
    return w;
}

static void world_init(world_t *wd)
{
    memset(wd, 0, sizeof *wd);
    wd->store = tu_docstore_new(&wd->mem);
    wd->w = writer_new(wd);
    { /* as sa_rollup_init leaves a new archive: its (empty) parts index complete */
        sa_error_t err;
        assert_true(sa_rollup_writer_parts_ready(wd->w, &err));
    }
    tu_docstore_on_write(wd->mem, reader, wd);
}

static void world_clear(world_t *wd)
{
    sa_rollup_writer_free(wd->w);
    sa_docstore_free(wd->store);
    views_clear(&wd->last, &wd->nlast);
    views_clear(&wd->now, &wd->nnow);
}

/* A new writer (the next run), which first makes good what the last one left. */
static void next_run(world_t *wd, const char *when)
{
    sa_error_t err;
    size_t jobs = 0;
    sa_rollup_writer_free(wd->w);
    wd->w = writer_new(wd);
    if (!sa_rollup_writer_recover(wd->w, &jobs, &err))
        fail_msg("%s: recovery: %s", when, err.message);
}

/* ---- the scenario ------------------------------------------------------------------------------- */

#define NPOLLS 5
typedef struct {
    change_t ch[8];
    size_t n;
    int64_t at;
} poll_t;

static void changes_free(poll_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        bson_destroy(p->ch[i].doc);
    p->n = 0;
}

static void add(poll_t *p, bson_t *doc, bool with_open, bool supersede)
{
    p->ch[p->n++] = (change_t){doc, with_open, supersede};
}

/*
 * Five polls of a small cluster whose jobs are in parts 0, 1, 2 and 63:
 *  1. jobs start (GPU runs, one untyped), one pends, one ends across midnight;
 *  2. runs end, one job is requeued (its first run ends REQUEUED, the second starts), a pending one starts;
 *  3. the untyped run is typed (re-typing), a job ends;
 *  4. job id 1 is reused: its ended document moves to jobs_superseded and a new job takes the id;
 *  5. a running job vanishes from squeue (its open run ends at vanished_at), the new job 1 ends.
 */
static void scenario(poll_t *p)
{
    memset(p, 0, NPOLLS * sizeof *p);
    p[0].at = D0 + 2 * H;
    add(&p[0], job(1, "RUNNING", 0, "1,-1,2,a100", NULL), false, false);
    add(&p[0], job(4097, "RUNNING", 0, "1.5,-1,1", NULL), false, false);
    add(&p[0], job(8200, "PENDING", 1, "", "\"eligible\": {\"$date\": 1791075600000}"), false, false);
    add(&p[0], job(262100, "COMPLETED", -3, "-2,1.75,4,h100", "\"end\": {\"$date\": 1791078300000}"), false, false);
    p[1].at = D0 + 5 * H;
    add(&p[1], job(1, "COMPLETED", 0, "1,4,2,a100", "\"end\": {\"$date\": 1791086400000}"), false, false);
    add(&p[1], job(8200, "RUNNING", 1, "3,4,1,a100; 4.5,-1,1,a100", NULL), false, false);
    add(&p[1], job(8201, "RUNNING", 2, "2.5,-1,1,h100", NULL), false, false);
    p[2].at = D0 + 8 * H;
    add(&p[2], job(4097, "RUNNING", 0, "1.5,-1,1,a100", NULL), false, false);
    add(&p[2], job(8201, "COMPLETED", 2, "2.5,7,1,h100", "\"end\": {\"$date\": 1791097200000}"), false, false);
    p[3].at = D0 + 30 * H;
    add(&p[3], job(1, "RUNNING", 26, "27,-1,8,a100", NULL), false, true);
    add(&p[3], job(8200, "COMPLETED", 1, "3,4,1,a100; 4.5,28,1,a100", "\"end\": {\"$date\": 1791172800000}"), false,
        false);
    p[4].at = D0 + 33 * H;
    add(&p[4], job(4097, "RUNNING", 0, "1.5,-1,1,a100", "\"vanished_at\": {\"$date\": 1791180000000}"), true, false);
    add(&p[4], job(1, "COMPLETED", 26, "27,32,8,a100", "\"end\": {\"$date\": 1791187200000}"), false, false);
}

/* The polls of the scenario, cleanly: the rollups equal their documents after each, every read consistent. */
static void test_clean_polls(void **state)
{
    world_t wd;
    poll_t p[NPOLLS];
    (void)state;

    world_init(&wd);
    scenario(p);
    wd.check_reads = true;
    for (int i = 0; i < NPOLLS; i++) {
        char when[64];
        snprintf(when, sizeof when, "after poll %d", i + 1);
        assert_true(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
        check_equal(&wd, when);
        changes_free(&p[i]);
    }
    assert_int_equal(sa_rollup_writer_stats(wd.w)->reverted, 0);
    assert_true(sa_rollup_writer_stats(wd.w)->commits >= NPOLLS);
    assert_true(wd.reads > 100);
    printf("  %zu writes, a reader before each: every read at a commit\n", tu_docstore_writes(wd.mem));
    world_clear(&wd);
}

/*
 * Poll i of the scenario killed at each of its writes in turn: the next run (recovery,
 * then the killed poll again when rerun) leaves the rollups equal to their documents, and
 * so does the poll after it; a reader before every write sees a commit, never half of one.
 */
static void kill_every_write(bool rerun, size_t *kills)
{
    poll_t p[NPOLLS];

    for (int i = 0; i < NPOLLS; i++) {
        size_t writes;
        world_t wd;
        tu_docstore_t *before;
        /* the polls before i, cleanly, and poll i once to count its writes */
        world_init(&wd);
        scenario(p);
        for (int j = 0; j < i; j++)
            assert_true(run_poll(&wd, p[j].ch, p[j].n, p[j].at));
        check_equal(&wd, "before the kill");
        before = tu_docstore_save(wd.mem);
        writes = tu_docstore_writes(wd.mem);
        assert_true(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
        writes = tu_docstore_writes(wd.mem) - writes;
        for (size_t k = 1; k <= writes; k++) {
            char when[128];
            tu_docstore_restore(wd.mem, before);
            check_equal(&wd, "restored");
            next_run(&wd, "a fresh writer");
            wd.check_reads = true;
            tu_docstore_fail_at(wd.mem, tu_docstore_writes(wd.mem) + k);
            assert_false(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
            assert_true(tu_docstore_killed(wd.mem));
            tu_docstore_fail_at(wd.mem, 0);
            snprintf(when, sizeof when, "poll %d killed at its write %zu of %zu, then the next run%s", i + 1, k, writes,
                     rerun ? " with the poll again" : "");
            next_run(&wd, when);
            if (rerun)
                assert_true(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
            check_equal(&wd, when);
            if (i + 1 < NPOLLS) {
                assert_true(run_poll(&wd, p[i + 1].ch, p[i + 1].n, p[i + 1].at));
                snprintf(when + strlen(when), sizeof when - strlen(when), ", then poll %d", i + 2);
                check_equal(&wd, when);
            }
            wd.check_reads = false;
            (*kills)++;
        }
        tu_docstore_free_saved(before);
        for (int j = 0; j < NPOLLS; j++)
            changes_free(&p[j]);
        world_clear(&wd);
    }
}

static void test_kill_every_write(void **state)
{
    size_t kills = 0;
    (void)state;
    kill_every_write(false, &kills);
    kill_every_write(true, &kills);
    printf("  %zu kills, one at every write of every poll (supersede, start, end, requeue, re-type, vanish), with "
           "and without the poll again: 0 differing documents\n", kills);
    assert_true(kills > 100);
}

/*
 * A cluster whose job ids sweep every part and wrap (MaxJobId): 160 jobs, ids 4,096 apart
 * (parts 0..63, 0..63, 0..31), each runs an hour and ends; then the first 20 ids come back
 * for new jobs (their documents move to jobs_superseded). The open runs' and live lists'
 * parts are left holding tombstones only: the verify counts them as nothing, at every poll.
 */
static void test_parts_wrap(void **state)
{
    world_t wd;
    (void)state;

    world_init(&wd);
    for (int round = 0; round < 4; round++) {
        poll_t starts = {{{0}}, 0, 0}, ends = {{{0}}, 0, 0};
        for (int b = 0; b < 5; b++) { /* 5 batches of 8 jobs each round */
            starts.n = ends.n = 0;
            for (int i = 0; i < 8; i++) {
                int idx = round * 40 + b * 8 + i;
                int64_t id = (int64_t)(idx % 140) * SA_ROLLUP_PART_BLOCK + 1; /* 140 ids: the last 20 wrap */
                double t0 = idx * 0.25;
                char runs[64], end[64];
                bool reuse = idx >= 140;
                snprintf(runs, sizeof runs, "%.2f,-1,1,a100", t0 + 0.1);
                add(&starts, job(id, "RUNNING", t0, runs, NULL), false, reuse);
                snprintf(runs, sizeof runs, "%.2f,%.2f,1,a100", t0 + 0.1, t0 + 1.1);
                snprintf(end, sizeof end, "\"end\": {\"$date\": %lld}", (long long)((D0 + (int64_t)((t0 + 1.1) * H)) * 1000));
                add(&ends, job(id, "COMPLETED", t0, runs, end), false, false);
            }
            assert_true(run_poll(&wd, starts.ch, starts.n, D0 + (int64_t)((round * 40 + b * 8) * 0.25 * H) + 1));
            check_equal(&wd, "jobs started");
            assert_true(run_poll(&wd, ends.ch, ends.n, D0 + (int64_t)((round * 40 + b * 8 + 8) * 0.25 * H) + 7200));
            check_equal(&wd, "jobs ended");
            changes_free(&starts);
            changes_free(&ends);
        }
    }
    {   /* every part's open runs and live list was touched, and holds nothing now */
        char id[32];
        size_t tombstoned = 0;
        for (int part = 0; part < SA_ROLLUP_PARTS; part++) {
            snprintf(id, sizeof id, "k:open:%d", part);
            tombstoned += tu_docstore_get(wd.mem, SA_ROLLUP_COLL, id) != NULL;
        }
        assert_int_equal(tombstoned, SA_ROLLUP_PARTS);
        assert_true(tu_docstore_get(wd.mem, "jobs_superseded", "k:1:1791072000") != NULL);
    }
    world_clear(&wd);
}

typedef struct {
    int64_t seq;
    const tu_docstore_t *mem;
    size_t dated, missing, named, months;
} parts_t;

/* A stored dated document (members, ended, started) not empty at r->seq: its bit must be in its month's index. */
static void parts_one(const bson_t *doc, void *ctx)
{
    parts_t *r = ctx;
    sa_rollup_key_t k, pk;
    sa_rollup_doc_t d;
    sa_rollup_parts_t idx;
    bson_t prev;
    sa_error_t err;
    char *id = str_of(doc, "_id"), *pid;
    const bson_t *b = doc, *pdoc;

    if (!sa_rollup_key_parse(CL, id, &k) || !sa_rollup_kind_dated(k.kind) || k.kind == SA_ROLLUP_K_ROWS) {
        free(id);
        return;
    }
    free(id);
    switch (sa_rollup_version(doc, r->seq, &prev)) {
    case SA_ROLLUP_VER_ABSENT: return;
    case SA_ROLLUP_VER_NEWER: fail_msg("a document newer than the last commit");
    case SA_ROLLUP_VER_PREV: b = &prev; break;
    case SA_ROLLUP_VER_THIS: break;
    }
    sa_rollup_doc_init(&d);
    assert_true(sa_rollup_doc_read(&d, CL, b, &err));
    if (!sa_rollup_doc_empty(&d)) {
        r->dated++;
        pk = sa_rollup_key(CL, SA_ROLLUP_K_PARTS, sa_rollup_month(k.day), 0);
        pid = sa_rollup_key_id(&pk);
        pdoc = tu_docstore_get(r->mem, SA_ROLLUP_COLL, pid);
        idx = (sa_rollup_parts_t){{{0}}};
        if (pdoc) {
            switch (sa_rollup_version(pdoc, r->seq, &prev)) {
            case SA_ROLLUP_VER_THIS: sa_rollup_parts_read(&idx, pdoc); break;
            case SA_ROLLUP_VER_PREV: sa_rollup_parts_read(&idx, &prev); break;
            default: break;
            }
        }
        r->missing += !(sa_rollup_parts_of(&idx, k.kind, k.day) >> k.part & 1);
        free(pid);
    }
    sa_rollup_doc_clear(&d);
}

/* Counts the bits of a stored parts index at its current version. */
static void parts_bits(const bson_t *doc, void *ctx)
{
    parts_t *r = ctx;
    sa_rollup_key_t k;
    sa_rollup_parts_t idx;
    char *id = str_of(doc, "_id");

    if (sa_rollup_key_parse(CL, id, &k) && k.kind == SA_ROLLUP_K_PARTS) {
        sa_rollup_parts_read(&idx, doc);
        r->months++;
        for (int kind = 0; kind < SA_ROLLUP_PARTS_KINDS; kind++)
            for (int day = 0; day < 31; day++)
                r->named += (size_t)__builtin_popcountll(idx.mask[kind][day]);
    }
    free(id);
}

/*
 * The parts index: after the scenario's polls every non-empty dated document is named by
 * its month's index at the last commit, and the index names a few parts, not 64 a day; the
 * verify finds an index that lost a bit, and the rebuild restores it.
 */
static void test_parts_index(void **state)
{
    world_t wd;
    poll_t p[NPOLLS];
    parts_t r;
    sa_rollup_commit_t c;
    sa_error_t err;
    sa_rollup_key_t ck = sa_rollup_key(CL, SA_ROLLUP_K_COMMIT, 0, 0);
    char *cid = sa_rollup_key_id(&ck);
    size_t docs = 0, differ = 0;
    (void)state;

    world_init(&wd);
    scenario(p);
    for (int i = 0; i < NPOLLS; i++) {
        assert_true(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
        changes_free(&p[i]);
    }
    sa_rollup_commit_init(&c);
    assert_true(sa_rollup_commit_read(&c, tu_docstore_get(wd.mem, SA_ROLLUP_COLL, cid), &err));
    assert_true(c.parts);
    memset(&r, 0, sizeof r);
    r.seq = c.seq;
    r.mem = wd.mem;
    tu_docstore_each(wd.mem, SA_ROLLUP_COLL, parts_one, &r);
    tu_docstore_each(wd.mem, SA_ROLLUP_COLL, parts_bits, &r);
    printf("  %zu dated documents, %zu parts named by %zu month index(es)\n", r.dated, r.named, r.months);
    assert_true(r.dated >= 4);
    assert_int_equal(r.missing, 0);
    assert_int_equal(r.months, 1);
    assert_true(r.named >= r.dated && r.named <= 2 * r.dated);

    {   /* the month's index loses its bits: the verify says so, the rebuild makes it good */
        sa_rollup_key_t pk = sa_rollup_key(CL, SA_ROLLUP_K_PARTS, sa_rollup_month(D0), 0);
        char *pid = sa_rollup_key_id(&pk);
        const bson_t *pdoc = tu_docstore_get(wd.mem, SA_ROLLUP_COLL, pid);
        bson_t copy;
        uint8_t zero[SA_ROLLUP_PARTS_KINDS * 31 * 8] = {0};
        assert_non_null(pdoc);
        bson_init(&copy);
        bson_copy_to_excluding_noinit(pdoc, &copy, "masks", NULL);
        BSON_APPEND_BINARY(&copy, "masks", BSON_SUBTYPE_BINARY, zero, sizeof zero);
        tu_docstore_set(wd.mem, SA_ROLLUP_COLL, &copy);
        bson_destroy(&copy);
        free(pid);
    }
    assert_true(sa_rollup_rebuild(wd.store, "", CL, false, SA_UNSET, &docs, &differ, NULL, &err));
    assert_true(differ >= 1);
    assert_true(sa_rollup_rebuild(wd.store, "", CL, true, SA_UNSET, &docs, &differ, NULL, &err));
    check_equal(&wd, "after the rebuild");
    sa_rollup_commit_clear(&c);
    free(cid);
    world_clear(&wd);
}

/*
 * What the writer's store holds for its other readers, after the scenario's polls: the
 * commit document (sa_rollup_writer_commit_read: the last commit, the last observation,
 * no flush under way); the final jobs that ended in a span, from the ended lists
 * (sa_rollup_ended_ids, the Prometheus import's reader), jobs_superseded's included; the
 * untyped list (sa_rollup_untyped_list) holding job 4097 while its run has no type, and
 * its update.
 */
static void test_writer_reads(void **state)
{
    world_t wd;
    poll_t p[NPOLLS];
    sa_rollup_commit_t c;
    sa_strv_t ids, add, del;
    int64_t *ends = NULL, v;
    size_t cap = 0;
    sa_error_t err;
    (void)state;

    world_init(&wd);
    scenario(p);
    sa_strv_init(&ids);
    assert_true(run_poll(&wd, p[0].ch, p[0].n, p[0].at));
    assert_true(sa_rollup_untyped_list(wd.w, false, &ids, &v, &err));
    assert_int_equal(ids.n, 1);
    assert_string_equal(ids.v[0], "k:4097"); /* its run's GPUs have no type yet */
    assert_true(v > 0);
    sa_strv_clear(&ids);
    for (int i = 1; i < NPOLLS; i++)
        assert_true(run_poll(&wd, p[i].ch, p[i].n, p[i].at));
    assert_true(sa_rollup_untyped_list(wd.w, false, &ids, &v, &err));
    assert_int_equal(ids.n, 0); /* typed in poll 3 */
    sa_strv_clear(&ids);

    sa_rollup_commit_init(&c);
    assert_true(sa_rollup_writer_commit_read(wd.w, &c, &err));
    assert_int_equal(c.seq, (int64_t)sa_rollup_writer_stats(wd.w)->commits);
    assert_int_equal(c.as_of, p[NPOLLS - 1].at);
    assert_int_equal(c.intent_seq, 0);
    sa_rollup_commit_clear(&c);

    /* ended in (D0, D0 + 40 h]: 262100 (1:45), job 1's first incarnation (4:00, superseded), 8201 (7:00), 8200 (28:00), 1 (32:00) */
    assert_true(sa_rollup_ended_ids(wd.store, CL, D0, D0 + 40 * H, &ids, &ends, &cap, &err));
    assert_int_equal(ids.n, 5);
    for (size_t i = 0; i < ids.n; i++) {
        static const struct {
            const char *id;
            int64_t end;
        } want[] = {{"k:262100", D0 + 6300}, {"k:1:1791072000", D0 + 4 * H}, {"k:8201", D0 + 7 * H},
                    {"k:8200", D0 + 28 * H}, {"k:1", D0 + 32 * H}};
        bool found = false;
        for (size_t k = 0; k < 5; k++) {
            if (strcmp(ids.v[i], want[k].id) == 0) {
                assert_int_equal(ends[i], want[k].end);
                found = true;
            }
        }
        if (!found)
            fail_msg("%s in the ended list", ids.v[i]);
    }
    sa_strv_clear(&ids);
    assert_true(sa_rollup_ended_ids(wd.store, CL, D0 + 5 * H, D0 + 30 * H, &ids, &ends, &cap, &err));
    assert_int_equal(ids.n, 2);
    assert_string_equal(ids.v[0], "k:8201"); /* by day */
    assert_string_equal(ids.v[1], "k:8200");
    sa_strv_clear(&ids);
    free(ends);

    /* the list's update: (list - del) + add */
    sa_strv_init(&add);
    sa_strv_init(&del);
    assert_true(sa_strv_push(&add, "k:7"));
    assert_true(sa_strv_push(&add, "k:9"));
    assert_true(sa_rollup_untyped_update(wd.w, true, &add, &del, &err));
    assert_true(sa_strv_push(&del, "k:7"));
    sa_strv_clear(&add);
    assert_true(sa_rollup_untyped_update(wd.w, true, &add, &del, &err));
    assert_true(sa_rollup_untyped_list(wd.w, true, &ids, &v, &err));
    assert_int_equal(ids.n, 1);
    assert_string_equal(ids.v[0], "k:9");
    sa_strv_clear(&ids);
    sa_strv_clear(&del);
    for (int i = 0; i < NPOLLS; i++)
        changes_free(&p[i]);
    world_clear(&wd);
}

/*
 * A writer is dead when no process has its pid, or when the process that has it now is another
 * one (its pid reused: pid_max is 32,768 on many hosts, and a reboot starts again): a killed
 * writer's pid taken by any later process must not keep its journal batch and its intent from
 * recovery (tools/kill-loop met it: a batch never restaged, 19 jobs' members stale for good).
 */
static void test_dead_writer_pid_reused(void **state)
{
    world_t wd;
    char host[64], me[96], init[96];
    pid_t gone;
    int status;
    (void)state;

    world_init(&wd);
    sa_rollup_host(host, sizeof host);
    if (!sa_rollup_proc(getpid(), me, sizeof me) || !sa_rollup_proc(1, init, sizeof init)) {
        printf("SKIP test_dead_writer_pid_reused: /proc does not say which process a pid is here\n");
        world_clear(&wd);
        skip();
    }
    assert_string_not_equal(me, init); /* pid 1 began before this test (its parent may begin in the same clock tick) */
    sa_rollup_writer_claim_pid(wd.w, getpid());
    /* pid 1 lives: recorded as it is, alive; recorded as another process (its pid reused), dead */
    assert_false(sa_rollup_writer_dead(wd.w, host, 1, init, SA_UNSET));
    assert_true(sa_rollup_writer_dead(wd.w, host, 1, "another-boot/1", SA_UNSET));
    /* written before the process was recorded: the pid alone says */
    assert_false(sa_rollup_writer_dead(wd.w, host, 1, NULL, SA_UNSET));
    /* no process has the pid */
    gone = fork();
    assert_true(gone >= 0);
    if (gone == 0)
        _exit(0);
    assert_int_equal(waitpid(gone, &status, 0), gone);
    assert_true(sa_rollup_writer_dead(wd.w, host, gone, init, SA_UNSET));
    assert_true(sa_rollup_writer_dead(wd.w, host, gone, NULL, SA_UNSET));
    /* the writer itself */
    assert_false(sa_rollup_writer_dead(wd.w, host, getpid(), me, SA_UNSET));
    world_clear(&wd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_polls),
        cmocka_unit_test(test_kill_every_write),
        cmocka_unit_test(test_parts_wrap),
        cmocka_unit_test(test_parts_index),
        cmocka_unit_test(test_writer_reads),
        cmocka_unit_test(test_dead_writer_pid_reused),
    };
    return tu_run_group_tests("rollup_writer", tests, NULL, NULL);
}
