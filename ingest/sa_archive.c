/*
 * sa_archive.c - the job archive in MongoDB (see sa_archive.h).
 *
 * Every query here is valid on MongoDB and on FerretDB 1.24 (the test server): plain
 * finds with filters and projections, unordered bulk insert/replace/update with
 * $set/$max, createIndexes. No aggregation expressions, no update pipelines, no
 * $push $slice: documents are merged in C (sa_jobdoc.c) and replaced whole.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_archive_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <mongoc/mongoc.h>

#include "sa_vec.h"
#include "sa_bson.h"
#include "sa_docstore.h"
#include "sa_fault.h"
#include "sa_job_schema_json.h"
#include "sa_mongo.h"
#include "sa_runlog.h"
#include "sa_runlog_writer.h"


static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Resolves "$ref": "#/definitions/x" and drops "$comment" (MongoDB's $jsonSchema has neither). */
static json_t *schema_resolve(const json_t *node, const json_t *defs)
{
    if (json_is_object(node)) {
        const json_t *ref = json_object_get(node, "$ref");
        json_t *out;
        const char *k;
        json_t *v;
        if (json_is_string(ref) && strncmp(json_string_value(ref), "#/definitions/", 14) == 0)
            return schema_resolve(json_object_get(defs, json_string_value(ref) + 14), defs);
        out = json_object();
        json_object_foreach((json_t *)node, k, v) {
            if (strcmp(k, "$comment") == 0 || strcmp(k, "definitions") == 0)
                continue;
            json_object_set_new(out, k, schema_resolve(v, defs));
        }
        return out;
    }
    if (json_is_array(node)) {
        json_t *out = json_array(), *v;
        size_t i;
        json_array_foreach(node, i, v) {
            json_array_append_new(out, schema_resolve(v, defs));
        }
        return out;
    }
    return node ? json_deep_copy(node) : json_null();
}

/* Builds {$jsonSchema: ...} from the embedded schema/jobdoc/job.schema.json. */
static bool job_validator(bson_t *out, sa_error_t *error)
{
    json_error_t jerr;
    json_t *schema = json_loads(sa_job_schema_json, 0, &jerr), *resolved, *wrap;
    char *text;
    bson_error_t berr;
    bool ok;

    if (!schema) {
        sa_error_set(error, SA_ERR_MONGO, 0, "schema/jobdoc/job.schema.json: %s", jerr.text);
        return false;
    }
    resolved = schema_resolve(schema, json_object_get(schema, "definitions"));
    wrap = json_pack("{s:o}", "$jsonSchema", resolved);
    text = json_dumps(wrap, JSON_COMPACT);
    /* the schema is JSON Schema text, not a document of ours: libbson reads it */
    ok = text && bson_init_from_json(out, text, -1, &berr);
    if (!ok)
        sa_error_set(error, SA_ERR_MONGO, 0, "schema/jobdoc/job.schema.json: %s", text ? berr.message : "out of memory");
    free(text);
    json_decref(wrap);
    json_decref(schema);
    return ok;
}

/* Creates "jobs" with the validator; on a server without validators, says so in *note. */
static bool ensure_jobs_collection(sa_archive_t *a, char **note, sa_error_t *error)
{
    bson_t validator, cmd = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok;

    if (!job_validator(&validator, error))
        return false;
    BSON_APPEND_UTF8(&cmd, "create", "jobs");
    BSON_APPEND_DOCUMENT(&cmd, "validator", &validator);
    BSON_APPEND_UTF8(&cmd, "validationLevel", "moderate");
    ok = mongoc_database_command_simple(a->db, &cmd, NULL, NULL, &berr);
    if (!ok && berr.code == 48) { /* NamespaceExists: update the validator */
        bson_reinit(&cmd);
        BSON_APPEND_UTF8(&cmd, "collMod", "jobs");
        BSON_APPEND_DOCUMENT(&cmd, "validator", &validator);
        BSON_APPEND_UTF8(&cmd, "validationLevel", "moderate");
        ok = mongoc_database_command_simple(a->db, &cmd, NULL, NULL, &berr);
    }
    if (note) {
        char buf[1024];
        if (ok)
            snprintf(buf, sizeof buf, "jobs: $jsonSchema validator from schema/jobdoc/job.schema.json applied");
        else
            snprintf(buf, sizeof buf, "jobs: the server does not support $jsonSchema validators (%.400s); "
                                      "documents are not validated by the server", berr.message);
        *note = strdup(buf);
    }
    bson_destroy(&cmd);
    bson_destroy(&validator);
    return true;
}

/*
 * createIndexes with a list of {name, key-json, unique}, for the indexes not there yet
 * (listIndexes first: FerretDB 1.24 drops the connection when asked to create an index
 * that exists).
 */
/* The names of the indexes coll has now, into *have. */
static void list_indexes(sa_archive_t *a, const char *coll, sa_strv_t *have)
{
    mongoc_collection_t *c = mongoc_database_get_collection(a->db, coll);
    mongoc_cursor_t *cursor = mongoc_collection_find_indexes_with_opts(c, NULL);
    const bson_t *found;

    while (mongoc_cursor_next(cursor, &found)) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, found, "name") && BSON_ITER_HOLDS_UTF8(&it))
            sa_strv_push(have, bson_iter_utf8(&it, NULL));
    }
    mongoc_cursor_destroy(cursor);
    mongoc_collection_destroy(c);
}

/* True if every index of specs is in have. */
static bool indexes_there(const sa_strv_t *have, const char *const specs[][3], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!sa_strv_contains(have, specs[i][0]))
            return false;
    }
    return true;
}

static bool ensure_indexes(sa_archive_t *a, const char *coll, const char *const specs[][3], size_t n,
                           sa_error_t *error)
{
    bson_t cmd = BSON_INITIALIZER, arr;
    bson_error_t berr;
    sa_strv_t have;
    size_t queued = 0;
    bool ok;

    sa_strv_init(&have);
    list_indexes(a, coll, &have);

    BSON_APPEND_UTF8(&cmd, "createIndexes", coll);
    BSON_APPEND_ARRAY_BEGIN(&cmd, "indexes", &arr);
    for (size_t i = 0; i < n; i++) {
        bson_t idx, key;
        char istr[16];
        const char *ikey;
        if (sa_strv_contains(&have, specs[i][0]))
            continue;
        bson_uint32_to_string((uint32_t)queued++, &ikey, istr, sizeof istr);
        BSON_APPEND_DOCUMENT_BEGIN(&arr, ikey, &idx);
        BSON_APPEND_UTF8(&idx, "name", specs[i][0]);
        if (!bson_init_from_json(&key, specs[i][1], -1, &berr)) {
            sa_error_set(error, SA_ERR_MONGO, 0, "index %s: %s", specs[i][0], berr.message);
            bson_destroy(&cmd);
            sa_strv_clear(&have);
            return false;
        }
        BSON_APPEND_DOCUMENT(&idx, "key", &key);
        bson_destroy(&key);
        if (specs[i][2])
            BSON_APPEND_BOOL(&idx, "unique", true);
        bson_append_document_end(&arr, &idx);
    }
    bson_append_array_end(&cmd, &arr);
    ok = queued == 0 || mongoc_database_command_simple(a->db, &cmd, NULL, NULL, &berr);
    if (!ok) {
        /* another slurm-ingest created them meanwhile (FerretDB then drops the connection) */
        sa_strv_clear(&have);
        sa_strv_init(&have);
        list_indexes(a, coll, &have);
        ok = indexes_there(&have, specs, n);
    }
    if (!ok)
        sa_mongo_error(error, a->hosts, "createIndexes", &berr);
    bson_destroy(&cmd);
    sa_strv_clear(&have);
    return ok;
}

sa_archive_t *sa_archive_open(const char *uri_str, const char *db_name, char **validator_note, sa_error_t *error)
{
    static const char *const job_indexes[][3] = {
        {"cluster_job_id", "{\"cluster\": 1, \"job_id\": 1}", "unique"},
        {"cluster_state", "{\"cluster\": 1, \"state\": 1}", NULL},
        {"cluster_user_submit", "{\"cluster\": 1, \"user\": 1, \"submit\": -1}", NULL},
        {"cluster_account_start", "{\"cluster\": 1, \"account\": 1, \"start\": -1}", NULL},
        {"cluster_start", "{\"cluster\": 1, \"start\": 1}", NULL},
        {"cluster_end", "{\"cluster\": 1, \"end\": 1}", NULL},
        {"cluster_runs_start", "{\"cluster\": 1, \"runs.start\": 1}", NULL},
        {"cluster_runs_end", "{\"cluster\": 1, \"runs.end\": 1}", NULL},
        /* slurm-report job: an array's tasks (array.job_id) and a het job's components
         * (het.job_id, with array.job_id absent: a het job is never an array) */
        {"cluster_array_het", "{\"cluster\": 1, \"array.job_id\": 1, \"het.job_id\": 1}", NULL},
    };
    static const char *const superseded_indexes[][3] = {
        {"cluster_job_id_submit", "{\"cluster\": 1, \"job_id\": 1, \"submit\": 1}", NULL},
    };
    static const char *const run_indexes[][3] = {
        {"cluster_started", "{\"cluster\": 1, \"started_at\": -1}", NULL},
    };
    sa_archive_t *a;
    double t0 = mono_ms(), t1;

    if (validator_note)
        *validator_note = NULL;
    a = calloc(1, sizeof *a);
    if (!a) {
        sa_error_nomem(error);
        return NULL;
    }
    a->client = sa_mongo_connect(uri_str, "slurm-ingest", &a->hosts, error);
    if (!a->client)
        goto fail;
    a->db = mongoc_client_get_database(a->client, db_name);
    a->jobs = mongoc_database_get_collection(a->db, "jobs");
    a->superseded = mongoc_database_get_collection(a->db, "jobs_superseded");
    a->clusters = mongoc_database_get_collection(a->db, "clusters");
    a->runs = mongoc_database_get_collection(a->db, "ingest_runs");
    a->migrating = mongoc_database_get_collection(a->db, "jobs_migrating");
    a->store = sa_docstore_mongo(a->db, a->hosts);
    a->first_submit = SA_UNSET;
    a->uri = strdup(uri_str);
    if (!a->uri || !a->store) {
        sa_error_nomem(error);
        goto fail;
    }
    t1 = mono_ms();
    a->open_ms.connect = t1 - t0;
    if (!ensure_jobs_collection(a, validator_note, error))
        goto fail;
    t0 = mono_ms();
    a->open_ms.validator = t0 - t1;
    if (!ensure_indexes(a, "jobs", job_indexes, sizeof job_indexes / sizeof job_indexes[0], error) ||
        !ensure_indexes(a, "jobs_superseded", superseded_indexes, 1, error) ||
        !ensure_indexes(a, "ingest_runs", run_indexes, 1, error))
        goto fail;
    a->open_ms.indexes = mono_ms() - t0;
    return a;
fail:
    sa_archive_close(a);
    return NULL;
}

sa_archive_open_ms_t sa_archive_open_ms(const sa_archive_t *a)
{
    return a->open_ms;
}

void sa_archive_set_hook(sa_archive_t *a, sa_archive_hook_t hook)
{
    a->hook = hook;
}

sa_docstore_t *sa_archive_store(sa_archive_t *a)
{
    return a->store;
}

const char *sa_archive_hosts(const sa_archive_t *a)
{
    return a->hosts;
}


void sa_archive_close(sa_archive_t *a)
{
    if (!a)
        return;
    sa_docstore_free(a->store);
    mongoc_collection_destroy(a->jobs);
    mongoc_collection_destroy(a->superseded);
    mongoc_collection_destroy(a->clusters);
    mongoc_collection_destroy(a->runs);
    mongoc_collection_destroy(a->migrating);
    mongoc_database_destroy(a->db);
    mongoc_client_destroy(a->client);
    free(a->hosts);
    free(a->uri);
    free(a);
}

/* ---- small BSON helpers ------------------------------------------------------------- */

#define FIND_BATCH 1000   /* _ids per $in query */
#define UPDATE_CHUNK SA_DOCSTORE_UPDATE_CHUNK
#define MAX_ROUNDS 5      /* conflict retries before giving up */
#define DOC_LIMIT ((uint32_t)16 * 1024 * 1024 - 64 * 1024) /* MongoDB's 16 MiB, with room for the command */


void sa_archive_confirm_unreachable(sa_archive_t *a, sa_error_t *error)
{
    mongoc_uri_t *uri;
    mongoc_client_t *c;
    bson_t ping = BSON_INITIALIZER;
    bson_error_t berr;

    if (!a || !error || error->domain != SA_ERR_UNREACHABLE)
        return;
    uri = mongoc_uri_new_with_error(a->uri, &berr);
    if (!uri)
        return;
    mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 3000);
    mongoc_uri_set_option_as_int32(uri, MONGOC_URI_CONNECTTIMEOUTMS, 3000);
    c = mongoc_client_new_from_uri(uri);
    BSON_APPEND_INT32(&ping, "ping", 1);
    if (c && mongoc_client_command_simple(c, "admin", &ping, NULL, NULL, &berr)) {
        char msg[sizeof error->message];
        snprintf(msg, sizeof msg, "%s", error->message);
        sa_error_set(error, SA_ERR_MONGO, error->code, "%s (the server answers: the command timed out or its "
                                                       "connection was cut)", msg);
    }
    bson_destroy(&ping);
    mongoc_client_destroy(c);
    mongoc_uri_destroy(uri);
}



bool sa_archive_live_ids(sa_archive_t *a, const char *cluster, int64_t **ids, size_t *n, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, proj, exists;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    size_t cap = 256;
    bool ok = true;

    *n = 0;
    *ids = malloc(cap * sizeof **ids);
    if (!*ids) {
        sa_error_nomem(error);
        return false;
    }
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    sa_archive_append_not_final(&filter);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "vanished_at", &exists);
    BSON_APPEND_BOOL(&exists, "$exists", false);
    bson_append_document_end(&filter, &exists);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj);
    BSON_APPEND_INT32(&proj, "job_id", 1);
    bson_append_document_end(&opts, &proj);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &proj);
    BSON_APPEND_INT32(&proj, "job_id", 1);
    bson_append_document_end(&opts, &proj);
    cursor = mongoc_collection_find_with_opts(a->jobs, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        bson_iter_t it;
        if (!bson_iter_init_find(&it, found, "job_id") || !BSON_ITER_HOLDS_NUMBER(&it))
            continue;
        if (!SA_VEC_GROW(*ids, cap, *n, 1, 256)) {
            sa_error_nomem(error);
            ok = false;
            break;
        }
        (*ids)[(*n)++] = bson_iter_as_int64(&it);
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "finding unfinished jobs", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

bool sa_archive_sync_cache(sa_archive_t *a, const char *cluster, sa_jobcache_t *cache, bool *rebuilt,
                           sa_error_t *error)
{
    json_t *cdoc;
    const char *writer;
    int64_t seq, *ids = NULL;
    size_t n = 0;
    bool ok;

    if (rebuilt)
        *rebuilt = false;
    if (!cache)
        return true;
    cdoc = sa_archive_cluster_get(a, cluster, error);
    if (!cdoc)
        return false;
    writer = sa_archive_doc_str(cdoc, "cache_writer");
    seq = sa_jobdoc_int(cdoc, "write_seq");
    if (seq == SA_UNSET)
        seq = 0;
    ok = writer && strcmp(writer, sa_jobcache_token(cache)) == 0 && seq == sa_jobcache_seq(cache);
    json_decref(cdoc);
    if (ok)
        return true;
    /* another writer, a restored archive or a new cache: start over from the archive */
    if (rebuilt)
        *rebuilt = true;
    if (!sa_jobcache_reset(cache, error) || !sa_archive_live_ids(a, cluster, &ids, &n, error))
        goto fail;
    if (!sa_jobcache_begin(cache, error))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (!sa_jobcache_put_job(cache, ids[i], true, 0, error)) {
            sa_jobcache_rollback(cache);
            goto fail;
        }
    }
    ok = sa_jobcache_set_seq(cache, seq, error) && sa_jobcache_commit(cache, error);
    if (!ok)
        sa_jobcache_rollback(cache);
    free(ids);
    /* the token is new: name this cache as the writer now, so the next run trusts it */
    return ok && sa_archive_bump_seq(a, cluster, cache, error);
fail:
    free(ids);
    return false;
}


bool sa_archive_bump_seq(sa_archive_t *a, const char *cluster, sa_jobcache_t *cache, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, upd = BSON_INITIALIZER, opts = BSON_INITIALIZER, part;
    bson_error_t berr;
    json_t *cdoc;
    int64_t seq;
    bool ok;

    BSON_APPEND_UTF8(&filter, "_id", cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&upd, "$inc", &part);
    BSON_APPEND_INT64(&part, "write_seq", 1);
    bson_append_document_end(&upd, &part);
    if (cache) {
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &part);
        BSON_APPEND_UTF8(&part, "cache_writer", sa_jobcache_token(cache));
        bson_append_document_end(&upd, &part);
    }
    BSON_APPEND_BOOL(&opts, "upsert", true);
    ok = sa_archive_cluster_upsert(a, &filter, &upd, &opts, &berr);
    if (!ok)
        sa_mongo_error(error, a->hosts, "updating clusters", &berr);
    bson_destroy(&filter);
    bson_destroy(&upd);
    bson_destroy(&opts);
    if (!ok || !cache)
        return ok;
    /* read back: the run holds the cluster's lock, so no one else bumps in between
     * (another host that does makes the sequence differ next time: a rebuild) */
    if (!(cdoc = sa_archive_cluster_get(a, cluster, error)))
        return false;
    seq = sa_jobdoc_int(cdoc, "write_seq");
    json_decref(cdoc);
    return sa_jobcache_set_seq(cache, seq == SA_UNSET ? 0 : seq, error);
}

json_t *sa_archive_get_job(sa_archive_t *a, const char *cluster, int64_t job_id, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    json_t *doc = NULL;
    char *id = sa_jobdoc_id(cluster, job_id);

    sa_error_clear(error);
    if (!id) {
        sa_error_nomem(error);
        return NULL;
    }
    BSON_APPEND_UTF8(&filter, "_id", id);
    free(id);
    cursor = mongoc_collection_find_with_opts(a->jobs, &filter, NULL, NULL);
    if (mongoc_cursor_next(cursor, &found))
        doc = sa_bson_to_json(found, error);
    else if (mongoc_cursor_error(cursor, &berr))
        sa_mongo_error(error, a->hosts, "reading jobs", &berr);
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    return doc;
}

/* ---- the clusters collection and the record of a run ------------------------------------ */

/*
 * Upserts the cluster's document. Two writers creating it at once: one insert wins, the
 * other fails with a duplicate key (MongoDB before 4.2 and FerretDB do not retry it
 * themselves); the document exists then, and the update applies on a second try.
 */
bool sa_archive_cluster_upsert(sa_archive_t *a, const bson_t *filter, const bson_t *upd, const bson_t *opts,
                           bson_error_t *berr)
{
    sa_docstore_write_point();
    for (int attempt = 0;; attempt++) {
        if (mongoc_collection_update_one(a->clusters, filter, upd, opts, NULL, berr))
            return true;
        if (berr->code != 11000 || attempt == 2)
            return false;
    }
}

/* The earliest submit of the cluster's job documents (jobs and jobs_superseded; a scan), SA_UNSET when none. */
static bool earliest_submit(sa_archive_t *a, const char *cluster, int64_t *min, sa_error_t *error)
{
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bson_t *opts = BCON_NEW("projection", "{", "submit", BCON_INT32(1), "_id", BCON_INT32(0), "}");
    bool ok = true;

    *min = SA_UNSET;
    for (int k = 0; ok && k < 2; k++) {
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts(k ? a->superseded : a->jobs, filter, opts, NULL);
        const bson_t *doc;
        bson_error_t berr;
        while (mongoc_cursor_next(cur, &doc)) {
            bson_iter_t it;
            int64_t t = bson_iter_init_find(&it, doc, "submit") ? sa_bson_iter_time(&it) : SA_UNSET;
            if (t != SA_UNSET && (*min == SA_UNSET || t < *min))
                *min = t;
        }
        if (mongoc_cursor_error(cur, &berr)) {
            sa_mongo_error(error, a->hosts, "reading job documents", &berr);
            ok = false;
        }
        mongoc_cursor_destroy(cur);
    }
    bson_destroy(filter);
    bson_destroy(opts);
    return ok;
}

/* $set of the named times (dates), $unset of those SA_UNSET, on the cluster's document. */
static bool cluster_set_times(sa_archive_t *a, const char *cluster, const char *const *names, const int64_t *v,
                              size_t n, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, upd = BSON_INITIALIZER, opts = BSON_INITIALIZER, set, unset;
    bson_error_t berr;
    bool ok = true;
    size_t nset = 0;

    BSON_APPEND_UTF8(&filter, "_id", cluster);
    for (size_t i = 0; i < n; i++)
        nset += v[i] != SA_UNSET;
    if (nset) { /* an empty operator is an error before MongoDB 5.0 */
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &set);
        for (size_t i = 0; i < n; i++) {
            if (v[i] != SA_UNSET)
                BSON_APPEND_DATE_TIME(&set, names[i], v[i] * 1000);
        }
        bson_append_document_end(&upd, &set);
    }
    if (nset < n) {
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$unset", &unset);
        for (size_t i = 0; i < n; i++) {
            if (v[i] == SA_UNSET)
                BSON_APPEND_UTF8(&unset, names[i], "");
        }
        bson_append_document_end(&upd, &unset);
    }
    BSON_APPEND_BOOL(&opts, "upsert", true);
    if (!sa_archive_cluster_upsert(a, &filter, &upd, &opts, &berr)) {
        sa_mongo_error(error, a->hosts, "updating clusters", &berr);
        ok = false;
    }
    bson_destroy(&filter);
    bson_destroy(&upd);
    bson_destroy(&opts);
    return ok;
}

/* $min of first_run_at and first_submit, $max of last_run_at (want: in the order of cluster_derived's names). */
static bool cluster_widen(sa_archive_t *a, const char *cluster, const int64_t want[3], sa_error_t *error)
{
    json_t *tmin = json_object(), *tmax = json_object();
    bool ok = tmin && tmax;

    if (ok && want[0] != SA_UNSET)
        json_object_set_new(tmin, "first_run_at", json_integer((json_int_t)want[0]));
    if (ok && want[1] != SA_UNSET)
        json_object_set_new(tmax, "last_run_at", json_integer((json_int_t)want[1]));
    if (ok && want[2] != SA_UNSET)
        json_object_set_new(tmin, "first_submit", json_integer((json_int_t)want[2]));
    ok = ok ? sa_archive_cluster_times(a, cluster, tmin, tmax, NULL, error) : sa_error_nomem(error);
    json_decref(tmin);
    json_decref(tmax);
    return ok;
}

/*
 * What the cluster's document derives from ingest_runs and the job documents: the span
 * of its runs (first_run_at, last_run_at: where a report finds its ingest_days) and
 * first_submit. Compared with the document; rebuild: set; add: widened ($min, $max:
 * what a writer running meanwhile wrote stays).
 */
static bool cluster_derived(sa_archive_t *a, const char *cluster, sa_runlog_mode_t mode, int64_t first_run,
                            int64_t last_run, size_t *differ, FILE *out, sa_error_t *error)
{
    static const char *const names[3] = {"first_run_at", "last_run_at", "first_submit"};
    int64_t want[3] = {first_run, last_run, SA_UNSET};
    json_t *cdoc = NULL;
    size_t n0 = *differ;
    bool ok = earliest_submit(a, cluster, &want[2], error) && (cdoc = sa_archive_cluster_get(a, cluster, error));

    for (int i = 0; ok && i < 3; i++) {
        int64_t have = sa_jobdoc_int(cdoc, names[i]);
        if (have == want[i])
            continue;
        (*differ)++;
        if (out) {
            char h[32] = "none", w[32] = "none";
            if (have != SA_UNSET)
                sa_time_format(have, h, sizeof h);
            if (want[i] != SA_UNSET)
                sa_time_format(want[i], w, sizeof w);
            fprintf(out, "clusters %s: %s is %s, the %s say %s\n", cluster, names[i], h,
                    i < 2 ? "ingest runs" : "job documents", w);
        }
    }
    if (ok && mode == SA_RUNLOG_REBUILD && *differ > n0)
        ok = cluster_set_times(a, cluster, names, want, 3, error);
    if (ok && mode == SA_RUNLOG_ADD && *differ > n0)
        ok = cluster_widen(a, cluster, want, error);
    if (ok)
        a->first_submit = want[2];
    json_decref(cdoc);
    return ok;
}

/* The cluster's ingest_days and derived clusters fields against ingest_runs and the job documents. */
static bool derived_rebuild(sa_archive_t *a, const char *cluster, sa_runlog_mode_t mode, size_t *docs,
                            size_t *differ, FILE *out, sa_error_t *error)
{
    int64_t first = SA_UNSET, last = SA_UNSET;
    return sa_runlog_rebuild(a->store, cluster, mode, docs, differ, &first, &last, out, error) &&
           cluster_derived(a, cluster, mode, first, last, differ, out, error);
}

bool sa_archive_derived(sa_archive_t *a, const char *cluster, bool rebuild, size_t *docs, size_t *differ, FILE *out,
                        sa_error_t *error)
{
    return derived_rebuild(a, cluster, rebuild ? SA_RUNLOG_REBUILD : SA_RUNLOG_VERIFY, docs, differ, out, error);
}

static bool finish_pending_run(sa_archive_t *a, const char *cluster, const char *hex, sa_error_t *error);

bool sa_archive_ingest_days_init(sa_archive_t *a, const char *cluster, size_t *built, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    size_t differ = 0;
    bool ok;

    *built = 0;
    if (!cdoc)
        return false;
    if (json_is_string(json_object_get(cdoc, "pending_run")) &&
        !finish_pending_run(a, cluster, json_string_value(json_object_get(cdoc, "pending_run")), error)) {
        json_decref(cdoc);
        return false;
    }
    if (sa_jobdoc_int(cdoc, "ingest_days_version") >= SA_RUNLOG_VERSION) {
        a->first_submit = sa_jobdoc_int(cdoc, "first_submit");
        json_decref(cdoc);
        return true;
    }
    json_decref(cdoc);
    set = json_pack("{s:I}", "ingest_days_version", (json_int_t)SA_RUNLOG_VERSION);
    ok = set && derived_rebuild(a, cluster, SA_RUNLOG_ADD, built, &differ, NULL, error) &&
         sa_archive_cluster_times(a, cluster, NULL, NULL, set, error);
    if (!set)
        sa_error_nomem(error);
    json_decref(set);
    return ok;
}

json_t *sa_archive_cluster_get(sa_archive_t *a, const char *cluster, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    json_t *doc = NULL;

    BSON_APPEND_UTF8(&filter, "_id", cluster);
    cursor = mongoc_collection_find_with_opts(a->clusters, &filter, NULL, NULL);
    if (mongoc_cursor_next(cursor, &found))
        doc = sa_bson_to_json(found, error);
    else if (mongoc_cursor_error(cursor, &berr))
        sa_mongo_error(error, a->hosts, "reading clusters", &berr);
    else
        doc = json_object();
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    return doc;
}

/* Appends {op: {name: date, ...}} of the times (epoch seconds) of the object times, when it has any. */
static void append_times(bson_t *upd, const char *op, const json_t *times)
{
    const char *k;
    json_t *v;
    bson_t part;

    if (!times || !json_object_size(times))
        return;
    BSON_APPEND_DOCUMENT_BEGIN(upd, op, &part);
    json_object_foreach((json_t *)times, k, v) {
        BSON_APPEND_DATE_TIME(&part, k, (int64_t)json_integer_value(v) * 1000);
    }
    bson_append_document_end(upd, &part);
}

bool sa_archive_cluster_times(sa_archive_t *a, const char *cluster, const json_t *min_times, const json_t *max_times,
                           const json_t *set, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, upd = BSON_INITIALIZER, opts = BSON_INITIALIZER, part;
    bson_error_t berr;
    bool ok = true;

    BSON_APPEND_UTF8(&filter, "_id", cluster);
    append_times(&upd, "$min", min_times);
    append_times(&upd, "$max", max_times);
    if (set && json_object_size(set)) {
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &part);
        ok = sa_bson_from_json(set, &part, error);
        bson_append_document_end(&upd, &part);
    }
    BSON_APPEND_BOOL(&opts, "upsert", true);
    if (ok && !bson_empty(&upd) && !sa_archive_cluster_upsert(a, &filter, &upd, &opts, &berr)) {
        sa_mongo_error(error, a->hosts, "updating clusters", &berr);
        ok = false;
    }
    bson_destroy(&filter);
    bson_destroy(&upd);
    bson_destroy(&opts);
    return ok;
}

bool sa_archive_cluster_update(sa_archive_t *a, const char *cluster, const json_t *max_times, const json_t *set,
                               sa_error_t *error)
{
    return sa_archive_cluster_times(a, cluster, NULL, max_times, set, error);
}

/*
 * The run's _id is made here: it is the key of the run's entry in ingest_days, written
 * next (a run recorded there but not in its day is found by `slurm-ingest rollup`).
 */
/*
 * The run log entry and the span of the cluster's runs (first_run_at, last_run_at) of the
 * ingest_runs document b (with its _id), and the clusters document's pending_run cleared (null).
 */
static bool record_derived(sa_archive_t *a, const char *cluster, const bson_t *b, sa_error_t *error)
{
    json_t *tmin = NULL, *tmax = NULL, *unset = NULL;
    int64_t started = SA_UNSET;
    bool ok = sa_runlog_push(a->store, cluster, b, &started, error);
    if (ok) { /* where a reader finds the cluster's hours */
        tmin = json_pack("{s:I}", "first_run_at", (json_int_t)started);
        tmax = json_pack("{s:I}", "last_run_at", (json_int_t)started);
        unset = json_pack("{s:n}", "pending_run");
        ok = tmin && tmax && unset ? sa_archive_cluster_times(a, cluster, tmin, tmax, unset, error) : sa_error_nomem(error);
    }
    json_decref(tmin);
    json_decref(tmax);
    json_decref(unset);
    return ok;
}

/*
 * The run's _id is made here: it is the key of the run's entry in the run log, written next.
 * The clusters document names the run first (pending_run), so that a run killed between
 * the ingest_runs insert and its log entry has the entry made by the next run
 * (sa_archive_ingest_days_init).
 */
bool sa_archive_record_run(sa_archive_t *a, const json_t *run, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    const bson_t *one[1] = {&b};
    bson_oid_t oid;
    char hex[25];
    const char *cluster = sa_archive_doc_str(run, "cluster");
    json_t *pending = NULL;
    bool ok;

    bson_oid_init(&oid, NULL);
    bson_oid_to_string(&oid, hex);
    ok = BSON_APPEND_OID(&b, "_id", &oid) && sa_bson_from_json(run, &b, error);
    if (ok && cluster) {
        ok = (pending = json_pack("{s:s}", "pending_run", hex)) ? sa_archive_cluster_times(a, cluster, NULL, NULL, pending, error)
                                                                 : sa_error_nomem(error);
        json_decref(pending);
    }
    ok = ok && sa_docstore_insert_many(a->store, "ingest_runs", one, 1, NULL, error);
    ok = ok && (!cluster || record_derived(a, cluster, &b, error));
    bson_destroy(&b);
    return ok;
}

/* A run killed between its ingest_runs insert and its run log entry: the entry is made now. */
static bool finish_pending_run(sa_archive_t *a, const char *cluster, const char *hex, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, *doc = NULL;
    bson_oid_t oid;
    mongoc_cursor_t *cur;
    const bson_t *found;
    bson_error_t berr;
    json_t *unset;
    bool ok = true;

    if (bson_oid_is_valid(hex, strlen(hex))) {
        bson_oid_init_from_string(&oid, hex);
        BSON_APPEND_OID(&filter, "_id", &oid);
        cur = mongoc_collection_find_with_opts(a->runs, &filter, NULL, NULL);
        if (mongoc_cursor_next(cur, &found))
            doc = bson_copy(found);
        else if (mongoc_cursor_error(cur, &berr)) {
            sa_mongo_error(error, a->hosts, "reading ingest_runs", &berr);
            ok = false;
        }
        mongoc_cursor_destroy(cur);
    }
    bson_destroy(&filter);
    if (ok && doc) /* its entry (written once: the log keeps one per run) and the span */
        ok = record_derived(a, cluster, doc, error);
    else if (ok) { /* killed before its insert: nothing was recorded */
        ok = (unset = json_pack("{s:n}", "pending_run")) ? sa_archive_cluster_times(a, cluster, NULL, NULL, unset, error)
                                                         : sa_error_nomem(error);
        json_decref(unset);
    }
    if (doc)
        bson_destroy(doc);
    return ok;
}

