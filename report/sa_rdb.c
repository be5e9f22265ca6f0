/*
 * sa_rdb.c - read-only access to the job archive (see sa_rdb.h).
 */
#include "sa_rdb.h"

#include <stdlib.h>
#include <string.h>

#include "sa_map.h"
#include "sa_runlog.h"
#include "sa_mongo.h"
#include "sa_rollup.h"
#include "sa_rutil.h"
#include "sa_vec.h"

/* A cluster's rollups as this report reads them: at one commit. */
typedef struct {
    char *cluster;
    int64_t seq, as_of;
    bool parts; /* the commit says every month's parts index is complete */
} pin_t;

/* A document of the read cache (sa_rdb_cache): what one read by _id returned. */
typedef struct {
    uint32_t q;  /* the read it was asked in: an index of sa_rdb.cq (collection and options) */
    char *id;
    bson_t *doc; /* NULL: the server had none */
} centry_t;

struct sa_rdb {
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *colls[6];
    char *hosts; /* host:port list for messages, never the URI (it may hold a password) */
    char *name;  /* the database */
    pin_t *pins; /* the commits taken, one per cluster */
    size_t npins, pincap;
    FILE *verbose; /* -v: the commits taken */
    int refs;    /* sa_rdb_ref: the last sa_rdb_close frees */
    /* the read cache: off while cache_max is 0 */
    centry_t *cache;
    size_t ncache, cachecap, cache_bytes, cache_max;
    sa_map_t cmap;
    sa_strv_t cq;         /* the reads the cache answers: "<collection>\037<options as JSON>" */
    uint64_t *cqhash;     /* their hashes (the hash of an entry goes on from its read's) */
    size_t fetched, hits; /* documents the cache got from the server; reads it answered */
    bson_t **cdocs;       /* with the cache: every clusters document, read once */
    size_t ncdocs;
    bool cdocs_read;
};

static const char *const coll_names[6] = {"jobs", "jobs_superseded", "clusters", "ingest_runs", "rollups",
                                          SA_RUNLOG_COLL};

void sa_rdb_set_verbose(sa_rdb_t *db, FILE *verbose)
{
    db->verbose = verbose;
}

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
    db->refs = 1;
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
    for (int i = 0; i < 6; i++)
        db->colls[i] = mongoc_database_get_collection(db->db, coll_names[i]);
    return db;
}

sa_rdb_t *sa_rdb_ref(sa_rdb_t *db)
{
    db->refs++;
    return db;
}

void sa_rdb_close(sa_rdb_t *db)
{
    if (!db || --db->refs > 0)
        return;
    for (size_t i = 0; i < db->ncache; i++) {
        free(db->cache[i].id);
        if (db->cache[i].doc)
            bson_destroy(db->cache[i].doc);
    }
    free(db->cache);
    sa_map_clear(&db->cmap);
    sa_strv_clear(&db->cq);
    free(db->cqhash);
    for (size_t i = 0; i < db->ncdocs; i++)
        bson_destroy(db->cdocs[i]);
    free(db->cdocs);
    for (int i = 0; i < 6; i++)
        mongoc_collection_destroy(db->colls[i]);
    mongoc_database_destroy(db->db);
    mongoc_client_destroy(db->client);
    for (size_t i = 0; i < db->npins; i++)
        free(db->pins[i].cluster);
    free(db->pins);
    free(db->hosts);
    free(db->name);
    free(db);
}

mongoc_collection_t *sa_rdb_collection(sa_rdb_t *db, const char *name)
{
    for (int i = 0; i < 6; i++) {
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
    if (c->roll_as_of != SA_UNSET && c->rollup_version >= SA_ROLLUP_VERSION)
        return c->roll_as_of;
    if (c->last_sacct_at != SA_UNSET && (t == SA_UNSET || c->last_sacct_at > t))
        t = c->last_sacct_at;
    return t == SA_UNSET ? fallback : t;
}

/* A cluster without a document: no times, nothing kept. */
static void cluster_unset(sa_rcluster_t *c)
{
    c->last_squeue_at = c->last_sacct_at = c->last_sinfo_at = SA_UNSET;
    c->first_run_at = c->last_run_at = c->first_submit = SA_UNSET;
    c->rollup_version = c->ingest_days_version = 0;
    c->roll_seq = 0;
    c->roll_as_of = SA_UNSET;
}

/* Reads one clusters document into c (name already set or taken from _id). */
static void read_cluster(const bson_t *doc, sa_rcluster_t *c)
{
    bson_iter_t it;
    cluster_unset(c);
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
        else if (strcmp(k, "ingest_days_version") == 0)
            c->ingest_days_version = sa_bson_iter_int(&it, 0);
        else if (strcmp(k, "first_run_at") == 0)
            c->first_run_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "last_run_at") == 0)
            c->last_run_at = sa_bson_iter_time(&it);
        else if (strcmp(k, "first_submit") == 0)
            c->first_submit = sa_bson_iter_time(&it);
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

/* The pin of cluster (NULL: none yet). */
static pin_t *pin_of(sa_rdb_t *db, const char *cluster)
{
    for (size_t i = 0; i < db->npins; i++) {
        if (strcmp(db->pins[i].cluster, cluster) == 0)
            return &db->pins[i];
    }
    return NULL;
}

/* Takes the last commit of cluster's rollups (a cluster without one: 0, SA_UNSET) once per report. */
static pin_t *pin_take(sa_rdb_t *db, const char *cluster, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(cluster, SA_ROLLUP_K_COMMIT, 0, 0);
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t berr;
    sa_rollup_commit_t c;
    pin_t *p = pin_of(db, cluster);
    char *id;
    bool ok = true;

    if (p)
        return p;
    if (!(id = sa_rollup_key_id(&k)) || !SA_VEC_GROW(db->pins, db->pincap, db->npins, 1, 4)) {
        free(id);
        sa_error_nomem(error);
        return NULL;
    }
    sa_rollup_commit_init(&c);
    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj); /* not the intent's _ids */
    BSON_APPEND_INT32(&proj, "seq", 1);
    BSON_APPEND_INT32(&proj, "as_of", 1);
    BSON_APPEND_INT32(&proj, "parts", 1);
    bson_append_document_end(&opts, &proj);
    cur = mongoc_collection_find_with_opts(sa_rdb_collection(db, SA_ROLLUP_COLL), &filter, &opts, NULL);
    if (mongoc_cursor_next(cur, &doc))
        ok = sa_rollup_commit_read(&c, doc, error);
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_rdb_error(error, db, "reading rollups", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    bson_destroy(&opts);
    free(id);
    if (ok && !(db->pins[db->npins].cluster = strdup(cluster)))
        ok = sa_error_nomem(error);
    if (ok) {
        p = &db->pins[db->npins++];
        p->seq = c.seq;
        p->as_of = c.as_of;
        p->parts = c.parts;
        if (db->verbose) {
            fprintf(db->verbose, "# rollups of %s read at commit %lld (observed to %s)\n", cluster,
                    (long long)c.seq, c.as_of > 0 ? sa_riso(c.as_of) : "never");
        }
    }
    sa_rollup_commit_clear(&c);
    return ok ? p : NULL;
}

bool sa_rdb_rollup_pin(sa_rdb_t *db, const char *cluster, int64_t *seq, bool *parts, sa_error_t *error)
{
    pin_t *p = pin_take(db, cluster, error);
    *seq = p ? p->seq : 0;
    *parts = p && p->parts;
    return p != NULL;
}

static int cluster_cmp(const void *a, const void *b)
{
    return strcmp(((const sa_rcluster_t *)a)->name, ((const sa_rcluster_t *)b)->name);
}

/* The clusters documents found so far. */
typedef struct {
    sa_rcluster_t *v;
    size_t n;
    const sa_strv_t *names; /* only these (none: all) */
} cfound_t;

/* Adds a clusters document to what was found (when its name is asked for). */
static bool add_cluster(const bson_t *doc, void *ctx, sa_error_t *error)
{
    cfound_t *f = ctx;
    sa_rcluster_t c = {0}, *v;

    read_cluster(doc, &c);
    if (!c.name || (f->names->n && !sa_strv_contains(f->names, c.name))) {
        free(c.name);
        return true; /* an _id that is not a name is not ours */
    }
    if (!(v = realloc(f->v, (f->n + 1) * sizeof *v))) {
        free(c.name);
        return sa_error_nomem(error);
    }
    f->v = v;
    c.in_archive = true;
    f->v[f->n++] = c;
    return true;
}

/* Keeps a copy of a clusters document (the cache's). */
static bool keep_cluster(const bson_t *doc, void *ctx, sa_error_t *error)
{
    sa_rdb_t *db = ctx;
    bson_t **v = realloc(db->cdocs, (db->ncdocs + 1) * sizeof *v);

    if (!v)
        return sa_error_nomem(error);
    db->cdocs = v;
    if (!(db->cdocs[db->ncdocs] = bson_copy(doc)))
        return sa_error_nomem(error);
    db->ncdocs++;
    return true;
}

/* The clusters documents of names (none: all): read, or with the read cache from its copy of them all. */
static bool find_clusters(sa_rdb_t *db, const sa_strv_t *names, cfound_t *f, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    bool ok = true;

    f->names = names;
    if (db->cache_max) {
        if (!db->cdocs_read)
            ok = sa_rdb_each(db, "clusters", &filter, NULL, keep_cluster, db, error);
        db->cdocs_read = ok;
        for (size_t i = 0; ok && i < db->ncdocs; i++)
            ok = add_cluster(db->cdocs[i], f, error);
    } else {
        if (names->n)
            sa_rbson_append_in(&filter, "_id", names);
        ok = sa_rdb_each(db, "clusters", &filter, NULL, add_cluster, f, error);
    }
    bson_destroy(&filter);
    return ok;
}

bool sa_rdb_clusters(sa_rdb_t *db, const sa_strv_t *names, sa_rclusters_t *out, sa_error_t *error)
{
    cfound_t f = {NULL, 0, names};
    sa_rcluster_t *found;
    size_t nfound;
    bool ok;

    memset(out, 0, sizeof *out);
    ok = find_clusters(db, names, &f, error);
    found = f.v;
    nfound = f.n;
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
            cluster_unset(c);
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
    for (size_t i = 0; ok && i < out->n; i++) { /* each cluster's rollups as of their last commit */
        pin_t *p = out->v[i].in_archive ? pin_take(db, out->v[i].name, error) : NULL;
        ok = !out->v[i].in_archive || p != NULL;
        if (p) {
            out->v[i].roll_seq = p->seq;
            out->v[i].roll_as_of = p->as_of;
        }
    }
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

/* ---- reading by _id, and the read cache ---------------------------------------------- */

void sa_rdb_cache(sa_rdb_t *db, size_t max_bytes)
{
    db->cache_max = max_bytes;
}

void sa_rdb_cache_stats(const sa_rdb_t *db, size_t *fetched, size_t *kept, size_t *hits)
{
    *fetched = db->fetched;
    *hits = db->hits;
    *kept = 0;
    for (size_t i = 0; i < db->ncache; i++)
        *kept += db->cache[i].doc != NULL;
}

/* What a cache lookup asks for: an _id in a read. */
typedef struct {
    uint32_t q;
    const char *id;
} ckey_t;

static uint64_t ckey_hash(const sa_rdb_t *db, uint32_t q, const char *id)
{
    return sa_fnv1a_more(db->cqhash[q], id, strlen(id));
}

static uint64_t centry_hash(size_t i, void *ctx)
{
    const sa_rdb_t *db = ctx;
    return ckey_hash(db, db->cache[i].q, db->cache[i].id);
}

static bool centry_eq(size_t i, const void *key, void *ctx)
{
    const sa_rdb_t *db = ctx;
    const ckey_t *k = key;
    return db->cache[i].q == k->q && strcmp(db->cache[i].id, k->id) == 0;
}

/* The cached entry of id in read q (NULL: none). */
static const centry_t *cache_find(sa_rdb_t *db, uint32_t q, const char *id)
{
    ckey_t k = {q, id};
    size_t i = sa_map_find(&db->cmap, ckey_hash(db, q, id), &k, centry_eq, db);
    return i == SIZE_MAX ? NULL : &db->cache[i];
}

/*
 * Keeps doc (copied; NULL: known absent) as id of read q while the cache has room; true
 * when kept (false when full or out of memory: the caller keeps its own copy).
 */
static bool cache_put(sa_rdb_t *db, uint32_t q, const char *id, const bson_t *doc)
{
    size_t bytes = strlen(id) + 1 + sizeof(centry_t) + (doc ? doc->len : 0);
    ckey_t k = {q, id};
    uint32_t *slot;
    centry_t e = {q, NULL, NULL};

    if (db->cache_bytes + bytes > db->cache_max || !SA_VEC_GROW(db->cache, db->cachecap, db->ncache, 1, 64) ||
        !(slot = sa_map_slot(&db->cmap, ckey_hash(db, q, id), &k, db->ncache, centry_hash, centry_eq, db)))
        return false;
    if (*slot)
        return true; /* kept already (an _id named twice) */
    if (!(e.id = strdup(id)) || (doc && !(e.doc = bson_copy(doc)))) {
        free(e.id);
        return false;
    }
    db->cache[db->ncache] = e;
    *slot = (uint32_t)++db->ncache;
    db->cache_bytes += bytes;
    return true;
}

/* The index of the read of coll with opts among the cache's (added when new); false when out of memory. */
static bool cache_read_of(sa_rdb_t *db, const char *coll, const bson_t *opts, uint32_t *q)
{
    char *ojson = opts ? bson_as_canonical_extended_json(opts, NULL) : NULL;
    char *name = sa_rprintf("%s\037%s", coll, ojson ? ojson : "");
    uint64_t *h;
    bool ok = name && (!opts || ojson);

    bson_free(ojson);
    for (size_t i = 0; ok && i < db->cq.n; i++) {
        if (strcmp(db->cq.v[i], name) == 0) {
            *q = (uint32_t)i;
            free(name);
            return true;
        }
    }
    ok = ok && (h = realloc(db->cqhash, (db->cq.n + 1) * sizeof *h)) != NULL;
    if (ok) {
        db->cqhash = h;
        h[db->cq.n] = sa_fnv1a(name, strlen(name) + 1);
        ok = sa_strv_push(&db->cq, name);
    }
    *q = (uint32_t)(db->cq.n - 1);
    free(name);
    return ok;
}

/* Calls fn with each document of coll whose _id is in ids[0..n) (one $in query). */
static bool each_id_query(sa_rdb_t *db, const char *coll, char **ids, size_t n, const bson_t *opts, sa_rdb_doc_cb fn,
                          void *ctx, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    bool ok;

    if (!n)
        return true;
    sa_bson_append_in_strings(&filter, "_id", ids, n);
    ok = sa_rdb_each(db, coll, &filter, opts, fn, ctx, error);
    bson_destroy(&filter);
    return ok;
}

/* What a read of the cache's missing documents keeps: in the cache, or here when it is full. */
typedef struct {
    sa_rdb_t *db;
    uint32_t q;
    bson_t **spill;   /* the documents the cache had no room for */
    size_t nspill, spillcap;
} cfill_t;

static bool cache_fill(const bson_t *doc, void *vctx, sa_error_t *error)
{
    cfill_t *f = vctx;
    bson_iter_t it;

    f->db->fetched++;
    if (bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) &&
        cache_put(f->db, f->q, bson_iter_utf8(&it, NULL), doc))
        return true;
    if (!SA_VEC_GROW(f->spill, f->spillcap, f->nspill, 1, 16) || !(f->spill[f->nspill] = bson_copy(doc)))
        return sa_error_nomem(error);
    f->nspill++;
    return true;
}

bool sa_rdb_each_id(sa_rdb_t *db, const char *coll, char **ids, size_t n, const bson_t *opts, sa_rdb_doc_cb fn,
                    void *ctx, sa_error_t *error)
{
    cfill_t fill = {db, 0, NULL, 0, 0};
    sa_strv_t missing;
    bool ok;

    if (!db->cache_max)
        return each_id_query(db, coll, ids, n, opts, fn, ctx, error);
    sa_strv_init(&missing);
    ok = cache_read_of(db, coll, opts, &fill.q) || sa_error_nomem(error);
    for (size_t i = 0; ok && i < n; i++) {
        const centry_t *e = cache_find(db, fill.q, ids[i]);
        db->hits += e && e->doc;
        ok = e || sa_strv_push(&missing, ids[i]) || sa_error_nomem(error);
    }
    ok = ok && each_id_query(db, coll, missing.v, missing.n, opts, cache_fill, &fill, error);
    /* the ones the server did not have: known absent (unless the cache is full: a document not kept is not absent) */
    for (size_t i = 0; ok && !fill.nspill && i < missing.n; i++) {
        if (!cache_find(db, fill.q, missing.v[i]))
            cache_put(db, fill.q, missing.v[i], NULL);
    }
    /* in the order named, whatever the server's order: a report reads the same from the cache as without it */
    for (size_t i = 0; ok && i < n; i++) {
        const centry_t *e = cache_find(db, fill.q, ids[i]);
        if (e && e->doc)
            ok = fn(e->doc, ctx, error);
    }
    for (size_t i = 0; i < fill.nspill; i++) {
        ok = ok && fn(fill.spill[i], ctx, error);
        bson_destroy(fill.spill[i]);
    }
    free(fill.spill);
    sa_strv_clear(&missing);
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

bool sa_ringest_run_phases(const bson_t *doc, sa_strv_t *names)
{
    bson_iter_t it, ph;

    if (!bson_iter_init_find(&it, doc, "phases_ms") || !BSON_ITER_HOLDS_DOCUMENT(&it) || !bson_iter_recurse(&it, &ph))
        return true;
    while (bson_iter_next(&ph))
        if (!sa_strv_contains(names, bson_iter_key(&ph)) && !sa_strv_push(names, bson_iter_key(&ph)))
            return false;
    return true;
}

/* ---- ingest runs, by day ---------------------------------------------------------- */

#define EMPTY_DAYS_MAX 731 /* a walk ends after two years of days without a run */

typedef struct {
    int64_t started;
    const char *key; /* in doc */
    bson_t *doc;
} rrun_t;

typedef struct {
    rrun_t *v;
    size_t n, cap;
} rruns_t;

static void rruns_clear(rruns_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        bson_destroy(r->v[i].doc);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static int rrun_cmp(const void *a, const void *b)
{
    const rrun_t *x = a, *y = b;
    if (x->started != y->started)
        return x->started < y->started ? -1 : 1;
    return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

/* Whether an entry is one q asks for. */
static bool run_wanted(const bson_t *e, int64_t started, const sa_rdb_runs_query_t *q)
{
    sa_ringest_run_t f;

    if (started == SA_UNSET || (q->from != SA_UNSET && started < q->from) || (q->to != SA_UNSET && started >= q->to))
        return false;
    sa_ringest_run_read(e, &f);
    return q->ok < 0 || (f.has_ok && f.ok_flag == (q->ok == 1));
}

/* Adds the entries of one run log document (an hour) that q asks for to r (copies). */
static bool day_entries(const bson_t *day, const sa_rdb_runs_query_t *q, rruns_t *r, sa_error_t *error)
{
    bson_iter_t it, child;

    if (!bson_iter_init_find(&it, day, "runs") || !BSON_ITER_HOLDS_ARRAY(&it) || !bson_iter_recurse(&it, &child))
        return true;
    while (bson_iter_next(&child)) {
        const uint8_t *data;
        uint32_t len;
        int64_t started;
        bson_t e;
        if (!BSON_ITER_HOLDS_DOCUMENT(&child))
            continue;
        bson_iter_document(&child, &len, &data);
        if (!bson_init_static(&e, data, len))
            continue;
        sa_runlog_entry_key(&e, &started);
        if (!run_wanted(&e, started, q))
            continue;
        if (!SA_VEC_GROW(r->v, r->cap, r->n, 1, 64) || !(r->v[r->n].doc = bson_new_from_data(data, len)))
            return sa_error_nomem(error);
        r->v[r->n].key = sa_runlog_entry_key(r->v[r->n].doc, &r->v[r->n].started);
        r->n++;
    }
    return true;
}

typedef struct {
    const sa_rdb_runs_query_t *q;
    rruns_t *r;
    size_t *found;
} hours_ctx_t;

/* sa_rdb_each_id callback: one run log document (an hour) read. */
static bool hour_entries(const bson_t *doc, void *vctx, sa_error_t *error)
{
    hours_ctx_t *h = vctx;
    (*h->found)++;
    return day_entries(doc, h->q, h->r, error);
}

/* Reads the hours of c from hour down to stop (at most SA_RUNLOG_BATCH) into r; *found: documents read. */
static bool read_hour_batch(sa_rdb_t *db, const sa_rcluster_t *c, int64_t hour, int64_t stop,
                           const sa_rdb_runs_query_t *q, rruns_t *r, size_t *found, sa_error_t *error)
{
    hours_ctx_t hc = {q, r, found};
    sa_strv_t ids;
    bool ok = true;

    *found = 0;
    sa_strv_init(&ids);
    for (int k = 0; ok && k < SA_RUNLOG_BATCH && hour - k * SA_RUNLOG_SPAN >= stop; k++) {
        char *id = sa_runlog_id(c->name, hour - k * SA_RUNLOG_SPAN);
        ok = (id && sa_strv_push(&ids, id)) || sa_error_nomem(error);
        free(id);
    }
    if (!ok) {
        sa_strv_clear(&ids);
        return false;
    }
    ok = sa_rdb_each_id(db, SA_RUNLOG_COLL, ids.v, ids.n, NULL, hour_entries, &hc, error);
    sa_strv_clear(&ids);
    return ok;
}

/* Calls fn with the runs of r by started_at (one per key), newest first or oldest first; *given counts them. */
static bool give_runs(rruns_t *r, const sa_rdb_runs_query_t *q, sa_rdb_doc_cb fn, void *ctx, size_t *given,
                      sa_error_t *error)
{
    bool ok = true;

    if (r->n)
        qsort(r->v, r->n, sizeof *r->v, rrun_cmp);
    for (size_t k = 0; ok && k < r->n && (!q->limit || *given < q->limit); k++) {
        size_t i = q->newest_first ? r->n - 1 - k : k;
        size_t prev = q->newest_first ? i + 1 : i - 1;
        if (k && r->v[i].key && r->v[prev].key && strcmp(r->v[i].key, r->v[prev].key) == 0)
            continue; /* a $push retried */
        ok = fn(r->v[i].doc, ctx, error);
        (*given)++;
    }
    return ok;
}

/* The old way, for a cluster without ingest_days: one find over ingest_runs. */
static bool runs_scan(sa_rdb_t *db, const sa_rcluster_t *c, const sa_rdb_runs_query_t *q, sa_rdb_doc_cb fn, void *ctx,
                      sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    bool ok;

    BSON_APPEND_UTF8(&filter, "cluster", c->name);
    if (q->ok >= 0)
        BSON_APPEND_BOOL(&filter, "ok", q->ok == 1);
    if (q->from != SA_UNSET || q->to != SA_UNSET) {
        BSON_APPEND_DOCUMENT_BEGIN(&filter, "started_at", &sub);
        if (q->from != SA_UNSET)
            BSON_APPEND_DATE_TIME(&sub, "$gte", q->from * 1000);
        if (q->to != SA_UNSET)
            BSON_APPEND_DATE_TIME(&sub, "$lt", q->to * 1000);
        bson_append_document_end(&filter, &sub);
    }
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "started_at", q->newest_first ? -1 : 1);
    bson_append_document_end(&opts, &sub);
    if (q->limit)
        BSON_APPEND_INT64(&opts, "limit", (int64_t)q->limit);
    ok = sa_rdb_each(db, "ingest_runs", &filter, &opts, fn, ctx, error);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

bool sa_rdb_ingest_runs(sa_rdb_t *db, const sa_rcluster_t *c, const sa_rdb_runs_query_t *q, sa_rdb_doc_cb fn,
                        void *ctx, sa_error_t *error)
{
    int64_t hi = c->last_run_at, lo = c->first_run_at, hour, empty = 0;
    rruns_t r = {0};
    size_t given = 0;
    bool ok = true;

    if (c->ingest_days_version < SA_RUNLOG_VERSION)
        return runs_scan(db, c, q, fn, ctx, error);
    if (hi == SA_UNSET || lo == SA_UNSET)
        return true; /* no run yet */
    if (q->to != SA_UNSET && q->to - 1 < hi)
        hi = q->to - 1;
    if (q->from != SA_UNSET && q->from > lo)
        lo = q->from;
    lo = sa_runlog_start(lo);
    for (hour = sa_runlog_start(hi); ok && hour >= lo && empty < EMPTY_DAYS_MAX * SA_DAY;
         hour -= SA_RUNLOG_BATCH * SA_RUNLOG_SPAN) {
        size_t found = 0, before = r.n;
        ok = read_hour_batch(db, c, hour, lo, q, &r, &found, error);
        empty = found ? 0 : empty + SA_RUNLOG_BATCH * SA_RUNLOG_SPAN;
        if (ok && q->newest_first && r.n > before) { /* a batch's runs are all newer than the next batch's */
            ok = give_runs(&r, q, fn, ctx, &given, error);
            rruns_clear(&r);
            if (q->limit && given >= q->limit)
                break;
        }
    }
    if (ok && !q->newest_first)
        ok = give_runs(&r, q, fn, ctx, &given, error);
    rruns_clear(&r);
    return ok;
}

void sa_rbson_append_members(bson_t *b, bool array, int64_t id, int64_t sub)
{
    if (array) {
        BSON_APPEND_INT64(b, "array.job_id", id);
        if (sub != SA_UNSET)
            BSON_APPEND_INT64(b, "array.task_id", sub);
    } else {
        BSON_APPEND_NULL(b, "array.job_id"); /* a het job is never an array: the index's next key */
        BSON_APPEND_INT64(b, "het.job_id", id);
        if (sub != SA_UNSET)
            BSON_APPEND_INT64(b, "het.offset", sub);
    }
}
