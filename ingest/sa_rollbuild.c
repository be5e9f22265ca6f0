/*
 * sa_rollbuild.c - rebuilding and verifying a cluster's rollups (sa_rollbuild.h).
 */
#include "sa_rollbuild.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "sa_bson.h"
#include "sa_fsutil.h"
#include "sa_jobview.h"
#include "sa_model.h"
#include "sa_mongo.h"
#include "sa_rollup.h"
#include "sa_rollw.h"

typedef struct {
    mongoc_collection_t *roll;
    const char *hosts, *cluster;
    bool rebuild;
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

/* Spills the members job document id (version v) adds to the rollup document of day and part. */
static bool spill_member(build_t *b, const char *id, int64_t v, int64_t day, int part, const sa_rcontrib_t *c,
                         sa_error_t *error)
{
    sa_rolldoc_t one;
    bson_t doc = BSON_INITIALIZER;
    bool ok = sa_rolldoc_new(&one, b->cluster, day, part, error) && sa_rolldoc_put(&one, id, v, c, error) &&
              sa_rolldoc_to_bson(&one, 0, &doc, error);
    if (ok) {
        sqlite3_reset(b->put);
        sqlite3_bind_text(b->put, 1, one.id, -1, SQLITE_STATIC);
        sqlite3_bind_text(b->put, 2, id, -1, SQLITE_STATIC);
        sqlite3_bind_blob(b->put, 3, bson_get_data(&doc), (int)doc.len, SQLITE_STATIC);
        ok = sqlite3_step(b->put) == SQLITE_DONE || spill_error(b, "insert", error);
        sqlite3_reset(b->put);
    }
    bson_destroy(&doc);
    sa_rolldoc_clear(&one);
    return ok;
}

/* True when the rollup document of day is one a rebuild since `since` covers. */
static bool in_since(int64_t day, int64_t since)
{
    switch (sa_rollup_kind(day)) {
    case SA_ROLLUP_K_DAY: return since == SA_UNSET || day + SA_DAY > since;
    case SA_ROLLUP_K_ENDED: return since == SA_UNSET || day - SA_ROLLUP_ENDED + SA_DAY > since;
    case SA_ROLLUP_K_STARTED: return since == SA_UNSET || day - SA_ROLLUP_STARTED + SA_DAY > since;
    default: return true;
    }
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

/* Spills the contribution of every job document of coll of the cluster. */
static bool compute_coll(build_t *b, mongoc_collection_t *coll, sa_strv_t *untyped, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t berr;
    sa_jobview_t view;
    sa_rcontrib_t c;
    bool ok = true;

    sa_jobview_init(&view);
    sa_rcontrib_init(&c);
    BSON_APPEND_UTF8(&filter, "cluster", b->cluster);
    if (b->since != SA_UNSET)
        append_since(&filter, b->since);
    sa_rollup_projection(&opts);
    BSON_APPEND_INT32(&opts, "batchSize", 1000);
    cur = mongoc_collection_find_with_opts(coll, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it;
        int64_t v = 0;
        const char *id;
        if (!(ok = sa_jobview_read(&view, doc, error) && sa_rcontrib_of(&c, &view, error)))
            break;
        if (!view.has_id || view.id.value_type != BSON_TYPE_UTF8)
            continue; /* an archive of 0.1 not migrated yet: slurm-ingest migrates it first */
        id = view.id.value.v_utf8.str;
        if (bson_iter_init_find(&it, doc, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
            v = bson_iter_as_int64(&it);
        if (sa_rollw_needs_type(&view) && !sa_strv_push(untyped, id))
            ok = sa_error_nomem(error);
        for (size_t d = 0; ok && d < c.ndays; d++) {
            if (in_since(c.days[d].day, b->since))
                ok = spill_member(b, id, v, c.days[d].day, sa_rollup_part_of(id), &c, error);
        }
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, b->hosts, "reading job documents", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    bson_destroy(&opts);
    sa_rcontrib_clear(&c);
    sa_jobview_clear(&view);
    return ok;
}

/* Reads the stored rollup document id into d; *found says whether there is one. */
static bool read_one(build_t *b, const char *id, sa_rolldoc_t *d, bool *found, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    *found = false;
    BSON_APPEND_UTF8(&filter, "_id", id);
    cur = mongoc_collection_find_with_opts(b->roll, &filter, NULL, NULL);
    if (mongoc_cursor_next(cur, &doc))
        ok = *found = sa_rolldoc_read(d, doc, error);
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, b->hosts, "reading rollups", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    return ok;
}

/* Upserts document doc under _id id. */
static bool upsert(build_t *b, const char *id, const bson_t *doc, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok;
    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_BOOL(&opts, "upsert", true);
    ok = mongoc_collection_replace_one(b->roll, &filter, doc, &opts, NULL, &berr);
    if (!ok)
        sa_mongo_error(error, b->hosts, "writing rollups", &berr);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

/* Names the job documents whose members differ between the recomputed (want) and the stored (have) rollup. */
static void print_diff(FILE *out, const sa_rolldoc_t *want, const sa_rolldoc_t *have)
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
            sa_rolldoc_t a = *want, bb = *have; /* the one member each, to compare */
            a.m = &want->m[i++];
            bb.m = &have->m[j++];
            a.nm = bb.nm = 1;
            if (!sa_rolldoc_equal(&a, &bb)) {
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
 * The day's rows of want (a day's members document) against the stored ones: counted as differing when the members
 * are as stored (members_same, at version have_v) and the rows are not their sums; rewritten (from the members of
 * version v) with a rebuild.
 */
static bool check_rows(build_t *b, const sa_rolldoc_t *want, bool members_same, int64_t have_v, int64_t v,
                       sa_error_t *error)
{
    sa_rolldoc_t rows;
    char *rid = sa_rollup_rows_id(b->cluster, want->day, want->part);
    bool rfound = false, ok, same;

    if (!rid)
        return sa_error_nomem(error);
    sa_rolldoc_init(&rows);
    ok = read_one(b, rid, &rows, &rfound, error);
    same = rfound && sa_rolldoc_rows_match(want, &rows);
    if (ok && members_same && (!same || rows.m_v != have_v)) {
        b->differ++;
        if (b->out)
            fprintf(b->out, "rollup %s: %s\n", rid, !rfound ? "missing" : "rows differ from the sums of the day's members");
    }
    if (ok && b->rebuild && (!same || rows.m_v != v)) {
        bson_t r = BSON_INITIALIZER;
        ok = sa_rolldoc_rows_bson(want, v, &r, error) && upsert(b, rid, &r, error);
        bson_destroy(&r);
    }
    sa_rolldoc_clear(&rows);
    free(rid);
    return ok;
}

/* One recomputed rollup document: compared with the stored one, written with a rebuild, and noted as wanted. */
static bool settle(build_t *b, const sa_rolldoc_t *want, sa_error_t *error)
{
    sa_rolldoc_t have;
    bool found = false, same, ok;
    int64_t v;

    b->docs++;
    sa_rolldoc_init(&have);
    ok = read_one(b, want->id, &have, &found, error) && step_text(b, b->want_put, want->id, NULL, error);
    same = found && sa_rolldoc_equal(want, &have);
    if (ok && !same) {
        b->differ++;
        if (b->out && found)
            print_diff(b->out, want, &have);
        else if (b->out)
            fprintf(b->out, "rollup %s: missing\n", want->id);
    }
    v = found ? have.v : 0;
    if (ok && b->rebuild && !same) {
        bson_t doc = BSON_INITIALIZER;
        v++;
        ok = sa_rolldoc_to_bson(want, v, &doc, error) && upsert(b, want->id, &doc, error);
        bson_destroy(&doc);
    }
    /* a day's rows: the sums of its members (checked when the members are as stored, rewritten with a rebuild) */
    if (ok && sa_rollup_kind(want->day) == SA_ROLLUP_K_DAY && (same || b->rebuild))
        ok = check_rows(b, want, same, have.v, v, error);
    sa_rolldoc_clear(&have);
    return ok;
}

/* Assembles the spilled members into rollup documents, one at a time in _id order, and settles each. */
static bool assemble(build_t *b, sa_error_t *error)
{
    sqlite3_stmt *st = NULL;
    sa_rolldoc_t cur, one;
    bool ok = true, have_cur = false;
    int rc;

    sa_rolldoc_init(&cur);
    sa_rolldoc_init(&one);
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
            ok = sa_rolldoc_read(&one, &doc, error) && sa_rolldoc_merge(&cur, &one, error);
            continue;
        }
        ok = (!have_cur || settle(b, &cur, error)) && sa_rolldoc_read(&cur, &doc, error);
        have_cur = true;
    }
    if (ok && rc != SQLITE_DONE)
        ok = spill_error(b, "select", error);
    ok = ok && (!have_cur || settle(b, &cur, error));
    sqlite3_finalize(st);
    sa_rolldoc_clear(&cur);
    sa_rolldoc_clear(&one);
    return ok;
}

/* True for a members document (a day's, open, live, ended, started); false for a day's rows document. */
static bool is_members_doc(const sa_rolldoc_t *d)
{
    char *rid = sa_rollup_rows_id(d->cluster, d->day, d->part);
    bool rows = rid && strcmp(rid, d->id) == 0;
    free(rid);
    return !rows;
}

/* Whether stored document d (read without its members) is one a recomputed document accounts for. */
static bool wanted(build_t *b, const sa_rolldoc_t *d, bool *yes, sa_error_t *error)
{
    char *mid;
    bool ok;
    if (is_members_doc(d))
        return step_text(b, b->want_has, d->id, yes, error);
    if (!(mid = sa_rollup_id(d->cluster, d->day, d->part)))
        return sa_error_nomem(error);
    ok = step_text(b, b->want_has, mid, yes, error);
    free(mid);
    return ok;
}

/* Names (and with a rebuild removes) the stored rollup documents of the cluster no job document contributes to. */
static bool others(build_t *b, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t berr;
    sa_rolldoc_t d;
    sa_strv_t gone;
    bool ok = true;

    sa_rolldoc_init(&d);
    sa_strv_init(&gone);
    BSON_APPEND_UTF8(&filter, "cluster", b->cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj);
    BSON_APPEND_INT32(&proj, "cluster", 1);
    BSON_APPEND_INT32(&proj, "day", 1);
    BSON_APPEND_INT32(&proj, "kind", 1);
    BSON_APPEND_INT32(&proj, "shard", 1);
    BSON_APPEND_INT32(&proj, "part", 1);
    bson_append_document_end(&opts, &proj);
    cur = mongoc_collection_find_with_opts(b->roll, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cur, &doc)) {
        bool yes = false;
        if (!(ok = sa_rolldoc_read(&d, doc, error) && wanted(b, &d, &yes, error)))
            break;
        if (yes || !in_since(d.day, b->since))
            continue; /* recomputed, or before the days asked for: left as it is */
        b->differ++;
        if (b->out)
            fprintf(b->out, "rollup %s: stored, but no job document contributes to it\n", d.id);
        if (b->rebuild && !sa_strv_push(&gone, d.id))
            ok = sa_error_nomem(error);
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, b->hosts, "reading rollups", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    for (size_t i = 0; ok && i < gone.n; i++) {
        bson_t f = BSON_INITIALIZER;
        BSON_APPEND_UTF8(&f, "_id", gone.v[i]);
        if (!mongoc_collection_delete_one(b->roll, &f, NULL, NULL, &berr)) {
            sa_mongo_error(error, b->hosts, "writing rollups", &berr);
            ok = false;
        }
        bson_destroy(&f);
    }
    sa_strv_clear(&gone);
    sa_rolldoc_clear(&d);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

/* With a rebuild the untyped list too: what the documents say, whatever it held (since: it only gains). */
static bool rebuild_untyped(build_t *b, const sa_strv_t *untyped, sa_error_t *error)
{
    sa_rollw_t *w = sa_rollw_new(b->roll, b->hosts, b->cluster);
    sa_strv_t all, none;
    int64_t v;
    bool ok;
    sa_strv_init(&all);
    sa_strv_init(&none);
    ok = w && sa_rollw_untyped_list(w, &all, &v, error) &&
         sa_rollw_untyped_update(w, untyped, b->since == SA_UNSET ? &all : &none, error);
    if (!w)
        sa_error_nomem(error);
    sa_strv_clear(&all);
    sa_rollw_free(w);
    return ok;
}

bool sa_rollw_rebuild(mongoc_database_t *db, const char *hosts, const char *cluster, bool rebuild, int64_t since,
                      size_t *docs, size_t *differ, FILE *out, sa_error_t *error)
{
    mongoc_collection_t *jobs = mongoc_database_get_collection(db, "jobs");
    mongoc_collection_t *sup = mongoc_database_get_collection(db, "jobs_superseded");
    build_t b = {mongoc_database_get_collection(db, SA_ROLLUP_COLL), hosts ? hosts : "", cluster, rebuild, since, out,
                 0, 0, NULL, NULL, NULL, NULL};
    sa_strv_t untyped;
    bool ok;

    sa_strv_init(&untyped);
    ok = spill_open(&b, error) && compute_coll(&b, jobs, &untyped, error) && compute_coll(&b, sup, &untyped, error) &&
         assemble(&b, error) && others(&b, error) && (!rebuild || rebuild_untyped(&b, &untyped, error));
    *docs = b.docs;
    *differ = b.differ;
    spill_close(&b);
    sa_strv_clear(&untyped);
    mongoc_collection_destroy(jobs);
    mongoc_collection_destroy(sup);
    mongoc_collection_destroy(b.roll);
    return ok;
}
