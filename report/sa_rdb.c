/*
 * sa_rdb.c - read-only access to the job archive (see sa_rdb.h).
 */
#include "sa_rdb.h"

#include <stdlib.h>
#include <string.h>

#include "sa_mongo.h"

struct sa_rdb {
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *colls[5];
    char *hosts; /* host:port list for messages, never the URI (it may hold a password) */
    char *name;  /* the database */
};

static const char *const coll_names[5] = {"jobs", "jobs_superseded", "clusters", "ingest_runs", "rollups"};

void sa_rdb_error(sa_error_t *error, const sa_rdb_t *db, const char *what, const bson_error_t *berr)
{
    sa_mongo_error(error, db->hosts, what, berr);
}

sa_rdb_t *sa_rdb_open(const char *uri_str, const char *db_name, sa_error_t *error)
{
    sa_rdb_t *db = calloc(1, sizeof *db);

    if (!db) {
        sa_error_nomem(error);
        return NULL;
    }
    db->client = sa_mongo_connect(uri_str, "slurm-report", &db->hosts, error);
    if (!db->client) {
        sa_rdb_close(db);
        return NULL;
    }
    db->db = mongoc_client_get_database(db->client, db_name);
    if (!(db->name = strdup(db_name))) {
        sa_rdb_close(db);
        sa_error_nomem(error);
        return NULL;
    }
    for (int i = 0; i < 5; i++)
        db->colls[i] = mongoc_database_get_collection(db->db, coll_names[i]);
    return db;
}

void sa_rdb_close(sa_rdb_t *db)
{
    if (!db)
        return;
    for (int i = 0; i < 5; i++)
        mongoc_collection_destroy(db->colls[i]);
    mongoc_database_destroy(db->db);
    mongoc_client_destroy(db->client);
    free(db->hosts);
    free(db->name);
    free(db);
}

mongoc_collection_t *sa_rdb_collection(sa_rdb_t *db, const char *name)
{
    for (int i = 0; i < 5; i++) {
        if (strcmp(name, coll_names[i]) == 0)
            return db->colls[i];
    }
    return NULL;
}

void sa_rbson_append_in(bson_t *b, const char *key, const sa_strv_t *names)
{
    sa_bson_append_in_strings(b, key, names->v, names->n);
}

void sa_rclusters_clear(sa_rclusters_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].name);
    free(c->v);
    memset(c, 0, sizeof *c);
}

int64_t sa_rcluster_as_of(const sa_rcluster_t *c, int64_t fallback)
{
    int64_t t = c->last_squeue_at;
    if (c->last_sacct_at != SA_UNSET && (t == SA_UNSET || c->last_sacct_at > t))
        t = c->last_sacct_at;
    return t == SA_UNSET ? fallback : t;
}

/* Reads one clusters document into c (name already set or taken from _id). */
static void read_cluster(const bson_t *doc, sa_rcluster_t *c)
{
    bson_iter_t it;
    c->last_squeue_at = c->last_sacct_at = c->last_sinfo_at = SA_UNSET;
    c->rollup_version = 0;
    if (!bson_iter_init(&it, doc))
        return;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "_id") == 0 && !c->name && BSON_ITER_HOLDS_UTF8(&it))
            c->name = strdup(bson_iter_utf8(&it, NULL));
        else if (strcmp(k, "last_squeue_at") == 0)
            c->last_squeue_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "last_sacct_at") == 0)
            c->last_sacct_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "last_sinfo_at") == 0)
            c->last_sinfo_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "rollup_version") == 0)
            c->rollup_version = sa_bson_iter_int(&it, 0);
    }
}

/*
 * Refuses (SA_ERR_USAGE, one line) a cluster named with -M that has no clusters
 * document, and a database without any (a misspelt --db): a report of nothing must
 * not look like a report of no use.
 */
static bool check_clusters(sa_rdb_t *db, const sa_rclusters_t *cl, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *doc;
    bson_error_t berr;
    char *known = NULL;
    size_t len = 0, nknown = 0;
    FILE *m;
    bool ok = true;

    if (cl->n) {
        for (size_t i = 0; i < cl->n && ok; i++)
            ok = cl->v[i].in_archive;
        if (ok)
            return true;
    }
    /* the names the archive has, for the message */
    if (!(m = open_memstream(&known, &len))) {
        sa_error_nomem(error);
        return false;
    }
    cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, "clusters"), &filter, NULL, NULL);
    while (mongoc_cursor_next(cursor, &doc)) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it))
            fprintf(m, "%s%s", nknown++ ? ", " : "", bson_iter_utf8(&it, NULL));
    }
    (void)mongoc_cursor_error(cursor, &berr);
    mongoc_cursor_destroy(cursor);
    fclose(m);
    if (!cl->n)
        sa_error_set(error, SA_ERR_USAGE, 0,
                     "database '%s' at %s holds no slurm-archive data (no clusters documents): a misspelt --db, "
                     "or nothing ingested yet", db->name, db->hosts);
    for (size_t i = 0; i < cl->n; i++) {
        if (!cl->v[i].in_archive) {
            sa_error_set(error, SA_ERR_USAGE, 0, "cluster '%s' is not in database '%s' at %s (its clusters: %s)",
                         cl->v[i].name, db->name, db->hosts, nknown ? known : "none");
            break;
        }
    }
    free(known);
    return false;
}

static int cluster_cmp(const void *a, const void *b)
{
    return strcmp(((const sa_rcluster_t *)a)->name, ((const sa_rcluster_t *)b)->name);
}

bool sa_rdb_clusters(sa_rdb_t *db, const sa_strv_t *names, sa_rclusters_t *out, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *doc;
    bson_error_t berr;
    sa_rcluster_t *found = NULL;
    size_t nfound = 0;
    bool ok = true;

    memset(out, 0, sizeof *out);
    if (names->n)
        sa_rbson_append_in(&filter, "_id", names);
    cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, "clusters"), &filter, NULL, NULL);
    while (mongoc_cursor_next(cursor, &doc)) {
        sa_rcluster_t c = {0}, *v = realloc(found, (nfound + 1) * sizeof *v);
        if (!v) {
            sa_error_nomem(error);
            ok = false;
            break;
        }
        found = v;
        read_cluster(doc, &c);
        if (!c.name)
            continue; /* an _id that is not a name: not ours */
        c.in_archive = true;
        found[nfound++] = c;
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_rdb_error(error, db, "reading clusters", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    if (!ok)
        goto done;
    if (names->n) {
        /* in the order named; a name without a document is kept (no data) */
        out->v = calloc(names->n, sizeof *out->v);
        if (!out->v) {
            sa_error_nomem(error);
            ok = false;
            goto done;
        }
        for (size_t i = 0; i < names->n; i++) {
            sa_rcluster_t *c = &out->v[out->n++];
            c->last_squeue_at = c->last_sacct_at = c->last_sinfo_at = SA_UNSET;
            c->rollup_version = 0;
            for (size_t k = 0; k < nfound; k++) {
                if (found[k].name && strcmp(found[k].name, names->v[i]) == 0) {
                    *c = found[k];
                    found[k].name = NULL;
                    break;
                }
            }
            if (!c->name)
                c->name = strdup(names->v[i]);
        }
    } else {
        if (nfound)
            qsort(found, nfound, sizeof *found, cluster_cmp);
        out->v = found;
        out->n = nfound;
        found = NULL;
        nfound = 0;
    }
    ok = check_clusters(db, out, error);
done:
    for (size_t k = 0; k < nfound; k++)
        free(found[k].name);
    free(found);
    return ok;
}

/* ---- reading documents ---------------------------------------------------------- */

bool sa_rdb_each(sa_rdb_t *db, const char *coll, const bson_t *filter, const bson_t *opts, sa_rdb_doc_cb fn, void *ctx,
                 sa_error_t *error)
{
    mongoc_cursor_t *cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, coll), filter, opts, NULL);
    const bson_t *doc;
    bson_error_t berr;
    bool ok = true;

    while (ok && mongoc_cursor_next(cursor, &doc))
        ok = fn(doc, ctx, error);
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        char what[64];
        snprintf(what, sizeof what, "reading %s", coll);
        sa_rdb_error(error, db, what, &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    return ok;
}

void sa_ringest_run_read(const bson_t *doc, sa_ringest_run_t *f)
{
    bson_iter_t it;
    memset(f, 0, sizeof *f);
    f->started_at = f->finished_at = SA_UNSET;
    if (!bson_iter_init(&it, doc))
        return;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "error") == 0)
            f->error_text = sa_bson_iter_str(&it, NULL);
        else if (strcmp(k, "finished_at") == 0)
            f->finished_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "started_at") == 0)
            f->started_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "ok") == 0 && BSON_ITER_HOLDS_BOOL(&it)) {
            f->ok_flag = bson_iter_bool(&it);
            f->has_ok = true;
        }
    }
}

bool sa_rdb_check_names(sa_rdb_t *db, const sa_rclusters_t *cl, const char *field, const sa_strv_t *names,
                        const sa_strv_t *also, sa_error_t *error)
{
    static const char *const colls[2] = {"jobs", "jobs_superseded"};
    sa_strv_t cn;
    bool ok = true;

    sa_strv_init(&cn);
    for (size_t i = 0; i < cl->n; i++)
        sa_strv_push(&cn, cl->v[i].name);
    for (size_t i = 0; ok && i < names->n; i++) {
        bool found = also && sa_strv_contains(also, names->v[i]);
        for (int k = 0; !found && k < 2; k++) {
            bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj;
            mongoc_cursor_t *cursor;
            const bson_t *doc;
            bson_error_t berr;
            sa_rbson_append_in(&filter, "cluster", &cn);
            BSON_APPEND_UTF8(&filter, field, names->v[i]);
            BSON_APPEND_INT64(&opts, "limit", 1);
            BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj);
            BSON_APPEND_INT32(&proj, "_id", 1);
            bson_append_document_end(&opts, &proj);
            cursor = mongoc_collection_find_with_opts(sa_rdb_collection(db, colls[k]), &filter, &opts, NULL);
            found = mongoc_cursor_next(cursor, &doc);
            if (!found && mongoc_cursor_error(cursor, &berr)) {
                sa_rdb_error(error, db, "looking up a name", &berr);
                ok = false;
            }
            mongoc_cursor_destroy(cursor);
            bson_destroy(&filter);
            bson_destroy(&opts);
            if (!ok)
                break;
        }
        if (ok && !found) {
            sa_error_set(error, SA_ERR_USAGE, 0, "%s '%s' has no job in database '%s' at %s (clusters: %s%s)", field,
                         names->v[i], db->name, db->hosts, cn.n ? cn.v[0] : "none", cn.n > 1 ? ", ..." : "");
            ok = false;
        }
    }
    sa_strv_clear(&cn);
    return ok;
}

double sa_ringest_run_number(const bson_t *doc, const char *path)
{
    bson_iter_t it, v;
    if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path, &v) &&
        (BSON_ITER_HOLDS_NUMBER(&v) || BSON_ITER_HOLDS_DOUBLE(&v)))
        return bson_iter_as_double(&v);
    return 0;
}
