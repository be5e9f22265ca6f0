/*
 * sa_rollup_rebuild.c - rebuilding and verifying a cluster's rollups (sa_rollup_rebuild.h).
 */
#include "sa_rollup_rebuild.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_fsutil.h"
#include "sa_jobdoc.h"
#include "sa_jobview.h"
#include "sa_model.h"
#include "sa_rollup.h"
#include "sa_rollup_writer.h"
#include "sa_vec.h"

typedef struct {
    sa_docstore_t *store;
    sa_rollup_writer_t *w;       /* the rebuild's writes (NULL: a verify) */
    const char *hosts, *cluster;
    int64_t seq;                 /* the commit read: stored documents are read as it sees them */
    bool parts;                  /* ... says every month's parts index is complete */
    sa_rollup_parts_t *mparts;   /* the parts index the recomputed documents make, by month */
    int64_t *months;
    size_t nmonths, monthcap;
    int64_t since;
    FILE *out;
    size_t docs, differ;
    sqlite3 *db;                 /* the spill: a temporary database, gone when closed */
    sqlite3_stmt *put, *want_put, *want_has;
} build_t;

static const char *const SPILL_SQL =
    "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
    "CREATE TABLE m (rid TEXT NOT NULL, mid TEXT NOT NULL, doc BLOB NOT NULL);"
    "CREATE TABLE w (rid TEXT PRIMARY KEY) WITHOUT ROWID;";

static bool spill_error(const build_t *b, const char *what, sa_error_t *error)
{
    sa_error_set(error, SA_ERR_IO, 0, "rollups of %s: the temporary database of the rebuild: %s: %s", b->cluster,
                 what, b->db ? sqlite3_errmsg(b->db) : "cannot open");
    return false;
}

static bool spill_open(build_t *b, sa_error_t *error)
{
    /* "": a private temporary database on disk, deleted when closed, in SQLite's temporary directory */
    if (!sa_sqlite_tmpdir_check(NULL, error))
        return false;
    if (sqlite3_open_v2("", &b->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_exec(b->db, SPILL_SQL, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b->db, "INSERT INTO m (rid, mid, doc) VALUES (?, ?, ?)", -1, &b->put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b->db, "INSERT OR IGNORE INTO w (rid) VALUES (?)", -1, &b->want_put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b->db, "SELECT 1 FROM w WHERE rid = ?", -1, &b->want_has, NULL) != SQLITE_OK)
        return spill_error(b, "open", error);
    return true;
}

static void spill_close(build_t *b)
{
    sqlite3_finalize(b->put);
    sqlite3_finalize(b->want_put);
    sqlite3_finalize(b->want_has);
    sqlite3_close(b->db);
}

/* Runs st (one text parameter bound to s); *row: whether it returned a row. */
static bool step_text(build_t *b, sqlite3_stmt *st, const char *s, bool *row, sa_error_t *error)
{
    int rc;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (row)
        *row = rc == SQLITE_ROW;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE || spill_error(b, "step", error);
}

/* Spills the members job document id (version v) adds to the rollup document of k. */
static bool spill_member(build_t *b, const char *id, int64_t v, const sa_rollup_key_t *k, const sa_rollup_contrib_t *c,
                         sa_error_t *error)
{
    sa_rollup_doc_t one;
    bson_t doc = BSON_INITIALIZER;
    bool ok = sa_rollup_doc_new(&one, k, error) && sa_rollup_doc_put(&one, id, v, c, error) &&
              sa_rollup_doc_to_bson(&one, 0, &doc, error);
    if (ok) {
        sqlite3_reset(b->put);
        sqlite3_bind_text(b->put, 1, one.id, -1, SQLITE_STATIC);
        sqlite3_bind_text(b->put, 2, id, -1, SQLITE_STATIC);
        sqlite3_bind_blob(b->put, 3, bson_get_data(&doc), (int)doc.len, SQLITE_STATIC);
        ok = sqlite3_step(b->put) == SQLITE_DONE || spill_error(b, "insert", error);
        sqlite3_reset(b->put);
    }
    bson_destroy(&doc);
    sa_rollup_doc_clear(&one);
    return ok;
}

/* True when the rollup document of kind and day is one a rebuild since `since` covers. */
static bool in_since(sa_rollup_kind_t kind, int64_t day, int64_t since)
{
    return since == SA_UNSET || !sa_rollup_kind_dated(kind) || day + SA_DAY > since;
}

/*
 * Appends to filter what selects the job documents that can touch a day from since's on:
 * ended (or a run ended) that day or later, unfinished, or without an end.
 */
static void append_since(bson_t *filter, int64_t since)
{
    bson_t or, alt, sub;
    int64_t from = sa_rollup_day(since) * 1000;
    BSON_APPEND_ARRAY_BEGIN(filter, "$or", &or);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "0", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "end", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", from);
    bson_append_document_end(&alt, &sub);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "1", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "runs.end", &sub);
    BSON_APPEND_DATE_TIME(&sub, "$gte", from);
    bson_append_document_end(&alt, &sub);
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "2", &alt);
    sa_bson_append_final_states(&alt, "$nin");
    bson_append_document_end(&or, &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&or, "3", &alt);
    BSON_APPEND_DOCUMENT_BEGIN(&alt, "end", &sub);
    BSON_APPEND_BOOL(&sub, "$exists", false);
    bson_append_document_end(&alt, &sub);
    bson_append_document_end(&or, &alt);
    bson_append_array_end(filter, &or);
}

typedef struct {
    build_t *b;
    sa_strv_t *untyped;
    sa_jobview_t view;
    sa_rollup_contrib_t c;
} compute_t;

/* Spills the members of one job document. */
static bool on_job(const bson_t *doc, void *ctx, sa_error_t *error)
{
    compute_t *x = ctx;
    build_t *b = x->b;
    bson_iter_t it;
    int64_t v = 0;
    const char *id;
    int part;

    if (!sa_jobview_read(&x->view, doc, error) || !sa_rollup_contrib_of(&x->c, &x->view, error))
        return false;
    if (!x->view.has_id || x->view.id.value_type != BSON_TYPE_UTF8)
        return true; /* an archive of 0.1 not migrated yet: slurm-ingest migrates it first */
    id = x->view.id.value.v_utf8.str;
    part = sa_rollup_part_of(id);
    if (bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
        v = bson_iter_as_int64(&it);
    if (sa_rollup_needs_type(&x->view) && !sa_strv_push(x->untyped, id))
        return sa_error_nomem(error);
    for (size_t d = 0; d < x->c.ndocs; d++) {
        sa_rollup_key_t k = sa_rollup_key(b->cluster, x->c.docs[d].kind, x->c.docs[d].day, part);
        if (in_since(k.kind, k.day, b->since) && !spill_member(b, id, v, &k, &x->c, error))
            return false;
    }
    return true;
}

/* Spills the contribution of every job document of coll of the cluster. */
static bool compute_coll(build_t *b, const char *coll, sa_strv_t *untyped, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    compute_t x;

    memset(&x, 0, sizeof x);
    x.b = b;
    x.untyped = untyped;
    bool ok;

    sa_jobview_init(&x.view);
    sa_rollup_contrib_init(&x.c);
    BSON_APPEND_UTF8(&filter, "cluster", b->cluster);
    if (b->since != SA_UNSET)
        append_since(&filter, b->since);
    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    ok = sa_docstore_scan(b->store, coll, &filter, &opts, on_job, &x, error);
    bson_destroy(&filter);
    bson_destroy(&opts);
    sa_rollup_contrib_clear(&x.c);
    sa_jobview_clear(&x.view);
    return ok;
}

/*
 * Reads the stored rollup document id as the commit read sees it into d; *found says
 * whether there is one (a document said absent at that commit is none).
 */
static bool read_one(build_t *b, const char *id, sa_rollup_doc_t *d, bool *found, sa_error_t *error)
{
    bson_t *doc = NULL, prev;
    bool ok = sa_docstore_get(b->store, SA_ROLLUP_COLL, id, &doc, error);

    *found = false;
    if (ok && doc) {
        switch (sa_rollup_version(doc, b->seq, &prev)) {
        case SA_ROLLUP_VER_THIS: ok = *found = sa_rollup_doc_read(d, b->cluster, doc, error); break;
        case SA_ROLLUP_VER_PREV: ok = *found = sa_rollup_doc_read(d, b->cluster, &prev, error); break;
        case SA_ROLLUP_VER_ABSENT: break;
        case SA_ROLLUP_VER_NEWER:
            sa_error_set(error, SA_ERR_LOCKED, 0, "rollup document %s changed twice while the rollups were read: "
                                                  "is a slurm-ingest writing this cluster?", id);
            ok = false;
            break;
        }
    }
    if (doc)
        bson_destroy(doc);
    return ok;
}

/* Names the job documents whose members differ between the recomputed (want) and the stored (have) rollup. */
static void print_diff(FILE *out, const sa_rollup_doc_t *want, const sa_rollup_doc_t *have)
{
    size_t i = 0, j = 0, shown = 0, n = 0;
    char list[512] = "", vbuf[64];

    while (i < want->nm || j < have->nm) {
        int c = i == want->nm ? 1 : j == have->nm ? -1 : strcmp(want->m[i].id, have->m[j].id);
        const char *id = NULL, *how = NULL;
        if (c < 0) {
            if (!want->m[i].nrec) {
                i++;
                continue;
            }
            id = want->m[i++].id;
            how = "missing";
        } else if (c > 0) {
            if (!have->m[j].nrec) { /* a tombstone */
                j++;
                continue;
            }
            snprintf(vbuf, sizeof vbuf, "(version %lld) not in its job documents", (long long)have->m[j].v);
            id = have->m[j++].id;
            how = vbuf;
        } else {
            sa_rollup_doc_t a = *want, bb = *have; /* the one member each, to compare */
            a.m = &want->m[i++];
            bb.m = &have->m[j++];
            a.nm = bb.nm = 1;
            if (!sa_rollup_doc_equal(&a, &bb)) {
                id = a.m->id;
                how = a.m->v != bb.m->v ? "of another version" : "differs";
            }
        }
        if (!id)
            continue;
        n++;
        if (shown++ < 3) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s %s", l ? ", " : "", id, how);
        }
    }
    fprintf(out, "rollup %s: %zu job document(s) differ from their members: %s%s\n", want->id, n, list,
            n > 3 ? ", ..." : "");
}

/*
 * The day's rows of want (a day's members document) against the stored ones: *same when
 * they are the sums of its members and were made from the stored members' version have_v.
 * Counted as differing when the members are as stored (members_same).
 */
static bool check_rows(build_t *b, const sa_rollup_doc_t *want, bool members_same, int64_t have_v, bool *same,
                       sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(b->cluster, SA_ROLLUP_K_ROWS, want->day, want->part);
    sa_rollup_doc_t rows;
    char *rid = sa_rollup_key_id(&k);
    bool rfound = false, ok;

    *same = true;
    if (!rid)
        return sa_error_nomem(error);
    sa_rollup_doc_init(&rows);
    ok = read_one(b, rid, &rows, &rfound, error);
    *same = rfound && !rows.foreign && sa_rollup_doc_rows_match(want, &rows) && rows.m_v == have_v;
    if (ok && members_same && !*same) {
        b->differ++;
        if (b->out)
            fprintf(b->out, "rollup %s: %s\n", rid, !rfound ? "missing" : "rows differ from the sums of the day's members");
    }
    sa_rollup_doc_clear(&rows);
    free(rid);
    return ok;
}

/* Notes a recomputed document of a dated kind in the parts index it makes (and, rebuilding, in the writer's). */
static bool note_parts(build_t *b, const sa_rollup_doc_t *d, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_doc_key(d);
    int64_t month = sa_rollup_month(d->day);
    size_t i;

    if (!sa_rollup_kind_dated(d->kind) || sa_rollup_doc_empty(d))
        return true;
    for (i = 0; i < b->nmonths && b->months[i] != month; i++)
        ;
    if (i == b->nmonths) {
        size_t cap = b->monthcap;
        if (!SA_VEC_GROW(b->months, b->monthcap, b->nmonths, 1, 16) ||
            !SA_VEC_GROW(b->mparts, cap, b->nmonths, 1, 16))
            return sa_error_nomem(error);
        memset(&b->mparts[i], 0, sizeof b->mparts[i]);
        b->months[i] = month;
        b->nmonths++;
    }
    sa_rollup_parts_set(&b->mparts[i], k.kind, k.day, k.part);
    return !b->w || sa_rollup_writer_note(b->w, &k, error);
}

/*
 * The parts index the commit read claims complete against the one the documents make:
 * a stored month that does not name a part holding a document differs (a report would miss
 * it). Rebuilding, the writer has noted every part already.
 */
static bool check_parts(build_t *b, sa_error_t *error)
{
    bool ok = true;
    for (size_t i = 0; ok && b->parts && i < b->nmonths; i++) {
        sa_rollup_key_t k = sa_rollup_key(b->cluster, SA_ROLLUP_K_PARTS, b->months[i], 0);
        char *id = sa_rollup_key_id(&k);
        bson_t *doc = NULL, prev;
        const bson_t *v = NULL;
        sa_rollup_parts_t have;
        if (!id)
            return sa_error_nomem(error);
        ok = sa_docstore_get(b->store, SA_ROLLUP_COLL, id, &doc, error);
        if (ok && doc) {
            switch (sa_rollup_version(doc, b->seq, &prev)) {
            case SA_ROLLUP_VER_THIS: v = doc; break;
            case SA_ROLLUP_VER_PREV: v = &prev; break;
            default: break;
            }
        }
        sa_rollup_parts_read(&have, v);
        if (ok && !sa_rollup_parts_covers(&have, &b->mparts[i])) {
            b->differ++;
            if (b->out)
                fprintf(b->out, "rollup %s: does not name every part that holds a document\n", id);
        }
        if (doc)
            bson_destroy(doc);
        free(id);
    }
    return ok;
}

/* One recomputed rollup document: compared with the stored one, written with a rebuild, and noted as wanted. */
static bool settle(build_t *b, const sa_rollup_doc_t *want, sa_error_t *error)
{
    sa_rollup_doc_t have;
    bool found = false, same, rows_same = true, ok;

    b->docs++;
    sa_rollup_doc_init(&have);
    ok = read_one(b, want->id, &have, &found, error) && step_text(b, b->want_put, want->id, NULL, error);
    same = found ? !have.foreign && sa_rollup_doc_equal(want, &have) : sa_rollup_doc_empty(want);
    if (ok && !same) {
        b->differ++;
        if (b->out && found)
            print_diff(b->out, want, &have);
        else if (b->out)
            fprintf(b->out, "rollup %s: missing\n", want->id);
    }
    /* a day's rows: the sums of its members (checked when the members are as stored) */
    if (ok && want->kind == SA_ROLLUP_K_MEMBERS)
        ok = check_rows(b, want, same, found ? have.v : 0, &rows_same, error);
    ok = ok && note_parts(b, want, error);
    if (ok && b->w && (!same || !rows_same))
        ok = sa_rollup_writer_replace(b->w, want, error);
    sa_rollup_doc_clear(&have);
    return ok;
}

/* Assembles the spilled members into rollup documents, one at a time in _id order, and settles each. */
static bool assemble(build_t *b, sa_error_t *error)
{
    sqlite3_stmt *st = NULL;
    sa_rollup_doc_t cur, one;
    bool ok = true, have_cur = false;
    int rc;

    sa_rollup_doc_init(&cur);
    sa_rollup_doc_init(&one);
    if (sqlite3_prepare_v2(b->db, "SELECT rid, doc FROM m ORDER BY rid, mid", -1, &st, NULL) != SQLITE_OK)
        return spill_error(b, "select", error);
    while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        bson_t doc;
        const char *rid = (const char *)sqlite3_column_text(st, 0);
        const uint8_t *data = sqlite3_column_blob(st, 1);
        int len = sqlite3_column_bytes(st, 1);
        if (!rid || !data || !bson_init_static(&doc, data, (size_t)len)) {
            ok = spill_error(b, "a spilled member is not BSON", error);
            break;
        }
        if (have_cur && strcmp(cur.id, rid) == 0) {
            ok = sa_rollup_doc_read(&one, b->cluster, &doc, error) && sa_rollup_doc_merge(&cur, &one, error);
            continue;
        }
        ok = (!have_cur || settle(b, &cur, error)) && sa_rollup_doc_read(&cur, b->cluster, &doc, error);
        have_cur = true;
    }
    if (ok && rc != SQLITE_DONE)
        ok = spill_error(b, "select", error);
    ok = ok && (!have_cur || settle(b, &cur, error));
    sqlite3_finalize(st);
    sa_rollup_doc_clear(&cur);
    sa_rollup_doc_clear(&one);
    return ok;
}

/* The stored rollup _ids of the cluster (those of its content documents), appended to ids. */
static bool on_stored_id(const bson_t *doc, void *ctx, sa_error_t *error)
{
    bson_iter_t it;
    if (bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) &&
        !sa_strv_push((sa_strv_t *)ctx, bson_iter_utf8(&it, NULL)))
        return sa_error_nomem(error);
    return true;
}

/*
 * Names (and with a rebuild empties) the stored rollup documents of the cluster no job
 * document contributes to. One that holds nothing at the commit read (tombstones only, or
 * said absent) is the same as none.
 */
static bool others(build_t *b, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj;
    sa_strv_t ids;
    sa_rollup_doc_t d;
    bool ok;

    sa_strv_init(&ids);
    sa_rollup_doc_init(&d);
    BSON_APPEND_UTF8(&filter, "cluster", b->cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj);
    BSON_APPEND_INT32(&proj, "_id", 1);
    bson_append_document_end(&opts, &proj);
    ok = sa_docstore_scan(b->store, SA_ROLLUP_COLL, &filter, &opts, on_stored_id, &ids, error);
    for (size_t i = 0; ok && i < ids.n; i++) {
        sa_rollup_key_t k, mk;
        char *mid;
        bool yes = false, found = false;
        if (!sa_rollup_key_parse(b->cluster, ids.v[i], &k)) { /* a name of an older version's (0.3's days) */
            bool conflict;
            b->differ++;
            if (b->out)
                fprintf(b->out, "rollup %s: stored, but no job document contributes to it\n", ids.v[i]);
            if (b->w) /* no reader names it: removed at once */
                ok = sa_docstore_del(b->store, SA_ROLLUP_COLL, ids.v[i], SA_DOCSTORE_ANY, &conflict, error);
            continue;
        }
        if (k.kind > SA_ROLLUP_K_LIVE || !in_since(k.kind, k.day, b->since))
            continue; /* not a content document, or before the days asked for: left as it is */
        mk = k;
        if (mk.kind == SA_ROLLUP_K_ROWS)
            mk.kind = SA_ROLLUP_K_MEMBERS; /* a rows document is wanted when its members are */
        if (!(mid = sa_rollup_key_id(&mk))) {
            ok = sa_error_nomem(error);
            break;
        }
        ok = step_text(b, b->want_has, mid, &yes, error);
        free(mid);
        if (!ok || yes)
            continue;
        ok = read_one(b, ids.v[i], &d, &found, error);
        if (!ok || !found || (!d.foreign && sa_rollup_doc_empty(&d)))
            continue;
        b->differ++;
        if (b->out)
            fprintf(b->out, "rollup %s: stored, but no job document contributes to it\n", ids.v[i]);
        if (b->w && k.kind != SA_ROLLUP_K_ROWS)
            ok = sa_rollup_writer_remove(b->w, &k, error);
        else if (b->w) /* rows whose members are not stored: emptied with them */
            ok = sa_rollup_writer_remove(b->w, &mk, error);
    }
    sa_rollup_doc_clear(&d);
    sa_strv_clear(&ids);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

/* With a rebuild the untyped list too: what the documents say, whatever it held (since: it only gains). */
static bool rebuild_untyped(build_t *b, const sa_strv_t *untyped, sa_error_t *error)
{
    sa_strv_t all, none;
    int64_t v;
    bool ok;
    sa_strv_init(&all);
    sa_strv_init(&none);
    ok = sa_rollup_untyped_list(b->w, false, &all, &v, error) &&
         sa_rollup_untyped_update(b->w, false, untyped, b->since == SA_UNSET ? &all : &none, error);
    sa_strv_clear(&all);
    return ok;
}

bool sa_rollup_rebuild(sa_docstore_t *store, const char *hosts, const char *cluster, bool rebuild, int64_t since,
                       size_t *docs, size_t *differ, FILE *out, sa_error_t *error)
{
    build_t b;
    sa_rollup_writer_t *w = sa_rollup_writer_new(store, hosts, cluster);
    sa_rollup_commit_t c;
    sa_strv_t untyped;
    bool ok;

    *docs = *differ = 0;
    memset(&b, 0, sizeof b);
    b.store = store;
    b.hosts = hosts ? hosts : "";
    b.cluster = cluster;
    b.since = since;
    b.out = out;
    if (!w)
        return sa_error_nomem(error);
    sa_strv_init(&untyped);
    sa_rollup_commit_init(&c);
    if (rebuild)
        b.w = w;
    ok = sa_rollup_writer_commit_read(w, &c, error);
    b.seq = c.seq;
    b.parts = c.parts;
    ok = ok && spill_open(&b, error) && compute_coll(&b, "jobs", &untyped, error) &&
         compute_coll(&b, "jobs_superseded", &untyped, error) && assemble(&b, error) && others(&b, error) &&
         check_parts(&b, error) &&
         (!rebuild || (sa_rollup_writer_flush(w, error) && rebuild_untyped(&b, &untyped, error) &&
                       (since != SA_UNSET || c.parts || sa_rollup_writer_parts_ready(w, error))));
    *docs = b.docs;
    *differ = b.differ;
    spill_close(&b);
    free(b.months);
    free(b.mparts);
    sa_strv_clear(&untyped);
    sa_rollup_commit_clear(&c);
    sa_rollup_writer_free(w);
    return ok;
}

typedef struct {
    sa_rollup_writer_t *w;
    const char *cluster;
    size_t n;
} index_t;

static bool on_index_id(const bson_t *doc, void *ctx, sa_error_t *error)
{
    index_t *x = ctx;
    const char *id = sa_rollup_id_of(doc);
    sa_rollup_key_t k;
    if (!id || !sa_rollup_key_parse(x->cluster, id, &k) || !sa_rollup_kind_dated(k.kind))
        return true;
    x->n++;
    return sa_rollup_writer_note(x->w, &k, error);
}

/*
 * The parts index of an archive of 0.4, once (its commit document does not say `parts`): a
 * bit for every dated document stored, from a projection of the rollups' _ids, committed.
 */
static bool parts_index(sa_archive_t *a, sa_rollup_writer_t *w, size_t *built, sa_error_t *error)
{
    sa_rollup_commit_t c;
    index_t x = {w, sa_rollup_writer_cluster(w), 0};
    bson_t *filter, *opts;
    bool ok;

    sa_rollup_commit_init(&c);
    ok = sa_rollup_writer_commit_read(w, &c, error);
    if (!ok || c.parts) {
        sa_rollup_commit_clear(&c);
        return ok;
    }
    sa_rollup_commit_clear(&c);
    filter = BCON_NEW("cluster", BCON_UTF8(x.cluster));
    opts = BCON_NEW("projection", "{", "_id", BCON_INT32(1), "}");
    ok = sa_docstore_scan(sa_archive_store(a), SA_ROLLUP_COLL, filter, opts, on_index_id, &x, error) &&
         sa_rollup_writer_parts_ready(w, error);
    bson_destroy(filter);
    bson_destroy(opts);
    *built = x.n;
    return ok;
}

bool sa_rollup_init(sa_archive_t *a, sa_rollup_writer_t *w, size_t *built, sa_error_t *error)
{
    const char *cluster = sa_rollup_writer_cluster(w);
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    size_t differ = 0;
    bool ok;

    *built = 0;
    if (!cdoc)
        return false;
    if (sa_jobdoc_int(cdoc, "rollup_version") >= SA_ROLLUP_VERSION) {
        json_decref(cdoc);
        return parts_index(a, w, built, error);
    }
    json_decref(cdoc);
    set = json_pack("{s:I}", "rollup_version", (json_int_t)SA_ROLLUP_VERSION);
    ok = set && sa_rollup_rebuild(sa_archive_store(a), sa_archive_hosts(a), cluster, true, SA_UNSET, built, &differ,
                                  NULL, error) &&
         sa_archive_cluster_update(a, cluster, NULL, set, error);
    if (!set)
        sa_error_nomem(error);
    json_decref(set);
    return ok;
}
