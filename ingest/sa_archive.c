/*
 * sa_archive.c - the job archive in MongoDB (see sa_archive.h).
 *
 * Every query here is valid on MongoDB and on FerretDB 1.24 (the test server): plain
 * finds with filters and projections, unordered bulk insert/replace/update with
 * $set/$max, createIndexes. No aggregation expressions, no update pipelines, no
 * $push $slice: documents are merged in C (sa_jobdoc.c) and replaced whole.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_archive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <mongoc/mongoc.h>

#include "sa_vec.h"
#include "sa_bson.h"
#include "sa_fault.h"
#include "sa_ingestday.h"
#include "sa_ingestdays.h"
#include "sa_job_schema_json.h"
#include "sa_mongo.h"
#include "sa_rollbuild.h"
#include "sa_rollup.h"
#include "sa_rollw.h"
#include "sa_tsdb.h"


struct sa_archive {
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *jobs, *superseded, *clusters, *runs, *migrating, *rollups, *days;
    /* the rollups staged by sa_archive_write_snapshot_jobs, flushed every ROLLUP_FLUSH_JOBS
     * jobs and by sa_archive_flush_rollups (the journal covers what is staged) */
    sa_rollw_t *rw;
    char *rw_cluster;
    size_t rw_jobs;
    /* the clusters document's first_submit as last read or written (SA_UNSET: not known):
     * only a batch with an earlier submit writes it */
    int64_t first_submit;
    char *hosts; /* for messages: host:port list, never the URI (it may hold a password) */
    char *uri;   /* kept only to ask again after a connection error (never printed) */
    sa_archive_open_ms_t open_ms; /* what sa_archive_open took, step by step */
};

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
    a->rollups = mongoc_database_get_collection(a->db, SA_ROLLUP_COLL);
    a->days = mongoc_database_get_collection(a->db, SA_INGEST_DAYS_COLL);
    a->first_submit = SA_UNSET;
    a->uri = strdup(uri_str);
    if (!a->uri) {
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

void sa_archive_close(sa_archive_t *a)
{
    if (!a)
        return;
    sa_rollw_free(a->rw); /* not flushed: the next run restages it from the journal */
    free(a->rw_cluster);
    mongoc_collection_destroy(a->jobs);
    mongoc_collection_destroy(a->superseded);
    mongoc_collection_destroy(a->clusters);
    mongoc_collection_destroy(a->runs);
    mongoc_collection_destroy(a->migrating);
    mongoc_collection_destroy(a->rollups);
    mongoc_collection_destroy(a->days);
    mongoc_database_destroy(a->db);
    mongoc_client_destroy(a->client);
    free(a->hosts);
    free(a->uri);
    free(a);
}

/* ---- small BSON helpers ------------------------------------------------------------- */

#define FIND_BATCH 1000   /* _ids per $in query */
#define UPDATE_CHUNK 50   /* statements per update command (FerretDB 1.24 deadlocks past ~100) */
#define INSERT_CHUNK 1000 /* documents per insert command */
#define MAX_ROUNDS 5      /* conflict retries before giving up */
#define DOC_LIMIT ((uint32_t)16 * 1024 * 1024 - 64 * 1024) /* MongoDB's 16 MiB, with room for the command */

/* A jansson document as BSON, refused when larger than MongoDB takes. */
static bool doc_to_bson(const json_t *doc, bson_t *b, sa_error_t *error)
{
    if (!sa_bson_from_json(doc, b, error))
        return false;
    if (b->len > DOC_LIMIT) {
        sa_error_set(error, SA_ERR_INPUT, 0, "job %lld: its document would be %u bytes, over MongoDB's 16 MiB limit",
                     (long long)json_integer_value(json_object_get(doc, "job_id")), b->len);
        return false;
    }
    return true;
}

static bool bulk_new(sa_archive_t *a, mongoc_collection_t *c, mongoc_bulk_operation_t **bulk)
{
    bson_t opts = BSON_INITIALIZER;
    (void)a;
    BSON_APPEND_BOOL(&opts, "ordered", false);
    *bulk = mongoc_collection_create_bulk_operation_with_opts(c, &opts);
    bson_destroy(&opts);
    return *bulk != NULL;
}

/*
 * Runs a bulk operation. On success *matched (may be NULL) is nMatched, and the indexes
 * of statements that failed with a duplicate key (E11000) are flagged in dup[] (may be
 * NULL: duplicates are then success, as for jobs_superseded). Any other write error
 * fails the call.
 */
static bool bulk_exec(sa_archive_t *a, mongoc_bulk_operation_t *bulk, const char *what, int64_t *matched, bool *dup,
                      size_t nstatements, sa_error_t *error)
{
    bson_t reply;
    bson_error_t berr;
    bson_iter_t it, we;
    bool ok = mongoc_bulk_operation_execute(bulk, &reply, &berr) != 0;

    if (matched)
        *matched = bson_iter_init_find(&it, &reply, "nMatched") ? bson_iter_as_int64(&it) : 0;
    /*
     * Write errors only: duplicates are expected, anything else is not. The reply has a
     * "writeErrors" array whatever went wrong (empty after a lost connection), and libmongoc
     * reports a network or server error ahead of write errors: only an error that is itself
     * a duplicate key, with at least one write error, all of them duplicates, is success
     * (taking the empty array for "only duplicates" marked a bulk cut short by a killed
     * server as written, and its jobs were never merged again: issue 10, test_faults).
     */
    if (!ok && berr.code == 11000 && berr.domain != MONGOC_ERROR_STREAM &&
        berr.domain != MONGOC_ERROR_SERVER_SELECTION && bson_iter_init_find(&it, &reply, "writeErrors") &&
        BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &we)) {
        size_t nerr = 0;
        ok = true;
        while (bson_iter_next(&we)) {
            bson_iter_t e;
            int64_t idx = -1, code = 0;
            nerr++;
            if (!bson_iter_recurse(&we, &e))
                continue;
            while (bson_iter_next(&e)) {
                if (strcmp(bson_iter_key(&e), "index") == 0)
                    idx = bson_iter_as_int64(&e);
                else if (strcmp(bson_iter_key(&e), "code") == 0)
                    code = bson_iter_as_int64(&e);
            }
            if (code == 11000 && idx >= 0 && (size_t)idx < nstatements) {
                if (dup)
                    dup[idx] = true;
            } else {
                ok = false;
            }
        }
        if (nerr == 0)
            ok = false;
        if (!ok)
            sa_mongo_error(error, a->hosts, what, &berr);
    } else if (!ok) {
        sa_mongo_error(error, a->hosts, what, &berr);
    }
    bson_destroy(&reply);
    return ok;
}

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

/* ---- the job cache against the archive --------------------------------------------------- */

static const char *doc_str(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Appends {state: {$nin: final states}} to a filter. */
static void append_not_final(bson_t *f)
{
    sa_bson_append_final_states(f, "$nin");
}

/* The live (unfinished, not vanished) job ids of a cluster, from one query. Sorted. */
static bool query_live_ids(sa_archive_t *a, const char *cluster, int64_t **ids, size_t *n, sa_error_t *error)
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
    append_not_final(&filter);
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
    writer = doc_str(cdoc, "cache_writer");
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
    if (!sa_jobcache_reset(cache, error) || !query_live_ids(a, cluster, &ids, &n, error))
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

/*
 * Upserts the cluster's document. Two writers creating it at once: one insert wins, the
 * other fails with a duplicate key (MongoDB before 4.2 and FerretDB do not retry it
 * themselves); the document exists then, and the update applies on a second try.
 */
static bool cluster_upsert(sa_archive_t *a, const bson_t *filter, const bson_t *upd, const bson_t *opts,
                           bson_error_t *berr)
{
    for (int attempt = 0;; attempt++) {
        if (mongoc_collection_update_one(a->clusters, filter, upd, opts, NULL, berr))
            return true;
        if (berr->code != 11000 || attempt == 2)
            return false;
    }
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
    ok = cluster_upsert(a, &filter, &upd, &opts, &berr);
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
    s->touched = s->conflict = s->written = false;
}

/* Reads the stored documents of the slots that need one, FIND_BATCH _ids per query. */
static bool read_docs(sa_archive_t *a, slot_t **want, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    char **ids = malloc((n ? n : 1) * sizeof *ids);
    bool ok = true;

    if (!ids) {
        sa_error_nomem(error);
        return false;
    }
    for (size_t off = 0; ok && off < n; off += FIND_BATCH) {
        size_t end = off + FIND_BATCH < n ? off + FIND_BATCH : n;
        bson_t filter = BSON_INITIALIZER;
        mongoc_cursor_t *cursor;
        const bson_t *found;
        bson_error_t berr;

        for (size_t i = off; i < end; i++)
            ids[i - off] = want[i]->id;
        sa_bson_append_in_strings(&filter, "_id", ids, end - off);
        cursor = mongoc_collection_find_with_opts(a->jobs, &filter, NULL, NULL);
        stats->read_queries++;
        while (ok && mongoc_cursor_next(cursor, &found)) {
            json_t *doc = sa_bson_to_json(found, error);
            const char *id = doc ? doc_str(doc, "_id") : NULL;
            if (!doc) {
                ok = false;
                break;
            }
            stats->docs_read++;
            for (size_t i = off; id && i < end; i++) {
                if (strcmp(want[i]->id, id) == 0) {
                    json_decref(want[i]->stored);
                    want[i]->stored = json_incref(doc);
                    want[i]->v = sa_jobdoc_int(doc, "_v") == SA_UNSET ? 0 : sa_jobdoc_int(doc, "_v");
                    break;
                }
            }
            json_decref(doc);
        }
        if (ok && mongoc_cursor_error(cursor, &berr)) {
            sa_mongo_error(error, a->hosts, "reading jobs", &berr);
            ok = false;
        }
        mongoc_cursor_destroy(cursor);
        bson_destroy(&filter);
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
    mongoc_bulk_operation_t *bulk = NULL;
    size_t queued = 0;
    bool ok = true;

    for (size_t i = 0; ok && i < nslots; i++) {
        size_t k;
        json_t *old;
        if (slots[i].done || !slots[i].superseded)
            continue;
        json_array_foreach(slots[i].superseded, k, old) {
            bson_t b = BSON_INITIALIZER;
            if (!bulk && !bulk_new(a, a->superseded, &bulk)) {
                sa_error_nomem(error);
                ok = false;
            }
            ok = ok && doc_to_bson(old, &b, error) && mongoc_bulk_operation_insert_with_opts(bulk, &b, NULL, NULL);
            bson_destroy(&b);
            if (!ok)
                break;
            queued++;
            stats->reused++;
        }
    }
    if (ok && queued)
        ok = bulk_exec(a, bulk, "writing jobs_superseded", NULL, NULL, queued, error);
    if (ok)
        stats->write_statements += queued;
    mongoc_bulk_operation_destroy(bulk);
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
    bool ok = true;
    for (size_t off = 0; ok && off < n; off += INSERT_CHUNK) {
        size_t end = off + INSERT_CHUNK < n ? off + INSERT_CHUNK : n;
        mongoc_bulk_operation_t *bulk = NULL;
        bool *dup = calloc(end - off, sizeof *dup);
        if (!dup || !bulk_new(a, a->jobs, &bulk)) {
            free(dup);
            sa_error_nomem(error);
            return false;
        }
        for (size_t i = off; ok && i < end; i++) {
            bson_t b = BSON_INITIALIZER;
            json_object_set_new(ins[i]->doc, "_v", json_integer(1));
            ok = doc_to_bson(ins[i]->doc, &b, error) && mongoc_bulk_operation_insert_with_opts(bulk, &b, NULL, NULL);
            bson_destroy(&b);
        }
        ok = ok && bulk_exec(a, bulk, "writing jobs", NULL, dup, end - off, error);
        SA_FAULT_POINT("mongo-write");
        for (size_t i = off; ok && i < end; i++) {
            if (dup[i - off]) {
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
        mongoc_bulk_operation_destroy(bulk);
        free(dup);
    }
    return ok;
}

/* Replaces changed documents if still at the version read, UPDATE_CHUNK at a time. */
static bool write_replaces(sa_archive_t *a, slot_t **rep, size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    bool ok = true;
    for (size_t off = 0; ok && off < n; off += UPDATE_CHUNK) {
        size_t end = off + UPDATE_CHUNK < n ? off + UPDATE_CHUNK : n;
        mongoc_bulk_operation_t *bulk = NULL;
        int64_t matched = 0;
        if (!bulk_new(a, a->jobs, &bulk)) {
            sa_error_nomem(error);
            return false;
        }
        for (size_t i = off; ok && i < end; i++) {
            bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER, cond;
            BSON_APPEND_UTF8(&filter, "_id", rep[i]->id);
            if (rep[i]->v > 0) {
                BSON_APPEND_INT64(&filter, "_v", rep[i]->v);
            } else {
                BSON_APPEND_DOCUMENT_BEGIN(&filter, "_v", &cond);
                BSON_APPEND_BOOL(&cond, "$exists", false);
                bson_append_document_end(&filter, &cond);
            }
            json_object_set_new(rep[i]->doc, "_v", json_integer(rep[i]->v + 1));
            ok = doc_to_bson(rep[i]->doc, &b, error) &&
                 mongoc_bulk_operation_replace_one_with_opts(bulk, &filter, &b, NULL, NULL);
            bson_destroy(&b);
            bson_destroy(&filter);
        }
        ok = ok && bulk_exec(a, bulk, "writing jobs", &matched, NULL, end - off, error);
        SA_FAULT_POINT("mongo-write");
        mongoc_bulk_operation_destroy(bulk);
        if (!ok)
            break;
        stats->write_statements += end - off;
        if ((size_t)matched == end - off) {
            for (size_t i = off; i < end; i++)
                rep[i]->done = rep[i]->written = true;
            stats->changed += end - off;
            continue;
        }
        /* someone else wrote some of them: find which by reading the chunk back */
        for (size_t i = off; i < end; i++) {
            json_decref(rep[i]->stored);
            rep[i]->stored = NULL;
        }
        {
            json_t **mine = calloc(end - off, sizeof *mine);
            if (!mine) {
                sa_error_nomem(error);
                return false;
            }
            for (size_t i = off; i < end; i++)
                mine[i - off] = json_incref(rep[i]->doc);
            ok = read_docs(a, rep + off, end - off, stats, error);
            for (size_t i = off; i < end; i++) {
                if (ok && rep[i]->stored && json_equal(rep[i]->stored, mine[i - off])) {
                    rep[i]->done = rep[i]->written = true;
                    stats->changed++;
                } else if (ok) {
                    rep[i]->conflict = true;
                    stats->conflicts++;
                }
                json_decref(mine[i - off]);
            }
            free(mine);
        }
    }
    return ok;
}

/* True if a document describes a job still to be watched by the vanish rule. */
static bool doc_live(const json_t *doc)
{
    return doc && !sa_job_state_is_final(doc_str(doc, "state")) && !json_object_get(doc, "vanished_at");
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

/*
 * Journals the jobs this round is about to write with the days their rollup members are
 * in now (sa_rollw.h: a kill before the rollup flush is made good by the next run).
 */
static bool journal_round(sa_rollw_t *rw, slot_t *slots, size_t nslots, sa_error_t *error)
{
    for (size_t i = 0; i < nslots; i++) {
        const slot_t *s = &slots[i];
        size_t k;
        json_t *old;
        bson_t b = BSON_INITIALIZER;
        bool ok;
        if (s->done)
            continue;
        ok = (!s->stored || doc_to_bson(s->stored, &b, error)) &&
             sa_rollw_journal_add(rw, s->id, s->stored ? &b : NULL, error);
        bson_destroy(&b);
        if (!ok)
            return false;
        json_array_foreach(s->superseded, k, old) {
            if (doc_str(old, "_id") && !sa_rollw_journal_add(rw, doc_str(old, "_id"), NULL, error))
                return false;
        }
    }
    return sa_rollw_journal_write(rw, error);
}

static bool cluster_update(sa_archive_t *a, const char *cluster, const json_t *min_times, const json_t *max_times,
                           const json_t *set, sa_error_t *error);

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
    ok = cluster_update(a, cluster, t, NULL, NULL, error);
    json_decref(t);
    if (ok)
        a->first_submit = min;
    return ok;
}

/* One round: read what must be read, merge, write; slots end done or in conflict. */
static bool write_round(sa_archive_t *a, sa_rollw_t *rw, slot_t *slots, size_t nslots, sa_job_t *const *sorted,
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
        }
    }
    if (!lower_first_submit(a, ctx->cluster, slots, nslots, error) || !journal_round(rw, slots, nslots, error) ||
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

/*
 * The jobs whose rollups a run stages before it writes them: a steady poll writes a few
 * thousand jobs in batches of 500, each touching most live shards, which are then read
 * and written once, not once a batch.
 */
#define ROLLUP_FLUSH_JOBS 4000

/* Stages a job document (JSON) and what it replaced in the rollup writer. */
static bool stage_doc(sa_rollw_t *w, const char *id, const json_t *old, const json_t *now, bool with_open,
                      sa_error_t *error)
{
    bson_t ob = BSON_INITIALIZER, nb = BSON_INITIALIZER;
    int64_t v = sa_jobdoc_int(now, "_v");
    bool ok = (!old || doc_to_bson(old, &ob, error)) && doc_to_bson(now, &nb, error) &&
              sa_rollw_stage(w, id, v == SA_UNSET ? 0 : v, old ? &ob : NULL, &nb, with_open, error);
    bson_destroy(&ob);
    bson_destroy(&nb);
    return ok;
}

/*
 * The rollups of the jobs of a batch (schema/jobdoc/sa_rollup.h), after their documents are
 * written: every document written, and those it displaced (jobs_superseded); then the
 * batch leaves the journal.
 */
static bool write_rollups(sa_rollw_t *w, slot_t *slots, size_t nslots, bool flush, sa_archive_stats_t *stats,
                          sa_error_t *error)
{
    bool ok = true;
    size_t before = sa_rollw_stats(w)->docs_written, cbefore = sa_rollw_stats(w)->conflicts;

    for (size_t i = 0; ok && i < nslots; i++) {
        const slot_t *s = &slots[i];
        size_t k;
        json_t *old;
        if (!s->written || !s->doc)
            continue;
        ok = stage_doc(w, s->id, s->before, s->doc, false, error);
        json_array_foreach(s->superseded, k, old) {
            if (ok && doc_str(old, "_id"))
                ok = stage_doc(w, doc_str(old, "_id"), NULL, old, false, error);
        }
    }
    SA_FAULT_POINT("rollup-write");
    ok = ok && (!flush || (sa_rollw_flush(w, error) && sa_rollw_journal_done(w, error)));
    stats->rollups_written += sa_rollw_stats(w)->docs_written - before;
    stats->conflicts += sa_rollw_stats(w)->conflicts - cbefore;
    return ok;
}

bool sa_archive_write_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx, sa_job_t *const *jobs,
                           size_t n, sa_archive_stats_t *stats, sa_error_t *error)
{
    return sa_archive_write_snapshot_jobs(a, cache, ctx, NULL, jobs, n, stats, error) &&
           sa_archive_flush_rollups(a, stats, error);
}

bool sa_archive_flush_rollups(sa_archive_t *a, sa_archive_stats_t *stats, sa_error_t *error)
{
    bool ok = true;
    if (a->rw) {
        size_t before = sa_rollw_stats(a->rw)->docs_written, cbefore = sa_rollw_stats(a->rw)->conflicts;
        ok = sa_rollw_flush(a->rw, error) && sa_rollw_journal_done(a->rw, error);
        stats->rollups_written += sa_rollw_stats(a->rw)->docs_written - before;
        stats->conflicts += sa_rollw_stats(a->rw)->conflicts - cbefore;
    }
    sa_rollw_free(a->rw);
    free(a->rw_cluster);
    a->rw = NULL;
    a->rw_cluster = NULL;
    a->rw_jobs = 0;
    return ok;
}

/* The rollup writer of the cluster's batches (another cluster's is flushed first); NULL with *error set. */
static sa_rollw_t *batch_rollw(sa_archive_t *a, const char *cluster, sa_archive_stats_t *stats, sa_error_t *error)
{
    if (a->rw && strcmp(a->rw_cluster, cluster) != 0 && !sa_archive_flush_rollups(a, stats, error))
        return NULL;
    if (!a->rw) {
        a->rw = sa_rollw_new(a->rollups, a->hosts, cluster);
        a->rw_cluster = strdup(cluster);
        if (!a->rw || !a->rw_cluster) {
            sa_rollw_free(a->rw);
            free(a->rw_cluster);
            a->rw = NULL;
            a->rw_cluster = NULL;
            sa_error_nomem(error);
        }
    }
    return a->rw;
}

bool sa_archive_write_snapshot_jobs(sa_archive_t *a, sa_jobcache_t *cache, const sa_obs_ctx_t *ctx,
                            const sa_obs_ctx_t *sacct_ctx, sa_job_t *const *jobs, size_t n, sa_archive_stats_t *stats,
                            sa_error_t *error)
{
    sa_job_t **sorted = malloc((n ? n : 1) * sizeof *sorted);
    slot_t *slots = calloc(n ? n : 1, sizeof *slots);
    sa_rollw_t *rw = batch_rollw(a, ctx->cluster, stats, error);
    size_t nslots = 0;
    bool ok = false;

    if (!rw)
        goto done;
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
        if (!write_round(a, rw, slots, nslots, sorted, ctx, sacct_ctx, stats, error))
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
    a->rw_jobs += nslots;
    ok = write_rollups(rw, slots, nslots, a->rw_jobs >= ROLLUP_FLUSH_JOBS, stats, error) &&
         update_cache(cache, slots, nslots, sorted, ctx, stats, error);
    if (ok && a->rw_jobs >= ROLLUP_FLUSH_JOBS)
        a->rw_jobs = 0;
done:
    if (!ok && rw) { /* what it staged stays in the journal for the next run */
        sa_rollw_free(a->rw);
        free(a->rw_cluster);
        a->rw = NULL;
        a->rw_cluster = NULL;
        a->rw_jobs = 0;
    }
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
 * documents are read back by _id (a vanished job is rare) and staged with the open-runs
 * document, where their runs were.
 */
static bool restage_vanished(sa_archive_t *a, sa_rollw_t *w, const char *cluster, const int64_t *van, size_t nvan,
                             sa_archive_stats_t *stats, sa_error_t *error)
{
    slot_t *slots = calloc(nvan, sizeof *slots);
    slot_t **want = calloc(nvan, sizeof *want);
    bool ok = slots && want;

    if (!ok)
        sa_error_nomem(error);
    for (size_t i = 0; ok && i < nvan; i++) {
        want[i] = &slots[i];
        if (!(slots[i].id = sa_jobdoc_id(cluster, van[i])))
            ok = sa_error_nomem(error);
    }
    ok = ok && read_docs(a, want, nvan, stats, error);
    for (size_t i = 0; ok && i < nvan; i++) {
        if (slots[i].stored)
            ok = stage_doc(w, slots[i].id, NULL, slots[i].stored, true, error);
    }
    ok = ok && sa_rollw_flush(w, error) && sa_rollw_journal_done(w, error);
    if (ok)
        stats->rollups_written += sa_rollw_stats(w)->docs_written;
    for (size_t i = 0; slots && i < nvan; i++) {
        slot_reset(&slots[i]);
        free(slots[i].id);
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
    sa_rollw_t *rw = NULL;
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
                  : !query_live_ids(a, ctx->cluster, &live, &nlive, error))
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
    /* their open runs will end: journaled first (sa_rollw.h) */
    if (nvan && !(rw = sa_rollw_new(a->rollups, a->hosts, ctx->cluster)))
        ok = sa_error_nomem(error);
    for (size_t i = 0; ok && i < nvan; i++) {
        char *id = sa_jobdoc_id(ctx->cluster, van[i]);
        ok = id ? sa_rollw_journal_add_open(rw, id, error) : sa_error_nomem(error);
        free(id);
    }
    ok = ok && (!nvan || sa_rollw_journal_write(rw, error));
    /* conditional on the document still being live: a finished or already marked job stays as it is */
    for (size_t off = 0; ok && off < nvan; off += UPDATE_CHUNK) {
        size_t end = off + UPDATE_CHUNK < nvan ? off + UPDATE_CHUNK : nvan;
        mongoc_bulk_operation_t *bulk = NULL;
        int64_t matched = 0;
        if (!bulk_new(a, a->jobs, &bulk)) {
            sa_error_nomem(error);
            ok = false;
            break;
        }
        for (size_t i = off; ok && i < end; i++) {
            bson_t sel = BSON_INITIALIZER, upd = BSON_INITIALIZER, part;
            char *id = sa_jobdoc_id(ctx->cluster, van[i]);
            if (!id) {
                sa_error_nomem(error);
                ok = false;
                break;
            }
            BSON_APPEND_UTF8(&sel, "_id", id);
            free(id);
            append_not_final(&sel);
            BSON_APPEND_DOCUMENT_BEGIN(&sel, "vanished_at", &part);
            BSON_APPEND_BOOL(&part, "$exists", false);
            bson_append_document_end(&sel, &part);
            BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &part);
            BSON_APPEND_DATE_TIME(&part, "vanished_at", prev_at * 1000);
            bson_append_document_end(&upd, &part);
            BSON_APPEND_DOCUMENT_BEGIN(&upd, "$max", &part);
            BSON_APPEND_DATE_TIME(&part, "seen.last", prev_at * 1000);
            bson_append_document_end(&upd, &part);
            BSON_APPEND_DOCUMENT_BEGIN(&upd, "$inc", &part);
            BSON_APPEND_INT64(&part, "_v", 1);
            bson_append_document_end(&upd, &part);
            ok = mongoc_bulk_operation_update_one_with_opts(bulk, &sel, &upd, NULL, NULL);
            bson_destroy(&sel);
            bson_destroy(&upd);
        }
        ok = ok && bulk_exec(a, bulk, "marking vanished jobs", &matched, NULL, end - off, error);
        mongoc_bulk_operation_destroy(bulk);
        if (ok) {
            stats->vanished += (size_t)matched;
            stats->write_statements += end - off;
        }
    }
    if (ok && nvan)
        ok = restage_vanished(a, rw, ctx->cluster, van, nvan, stats, error);
    sa_rollw_free(rw);
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

/* ---- migration from 0.1 (ObjectId _ids) ------------------------------------------------- */

/* Moves up to FIND_BATCH documents of coll with an ObjectId _id into jobs_migrating. */
static bool migrate_collect(sa_archive_t *a, mongoc_collection_t *coll, const char *cluster, bool superseded,
                            size_t *got, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, opts = BSON_INITIALIZER, t;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    mongoc_bulk_operation_t *bulk = NULL, *del = NULL;
    size_t n = 0;
    bool ok = bulk_new(a, a->migrating, &bulk) && bulk_new(a, coll, &del);

    *got = 0;
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "_id", &t);
    BSON_APPEND_UTF8(&t, "$type", "objectId");
    bson_append_document_end(&filter, &t);
    BSON_APPEND_INT64(&opts, "limit", FIND_BATCH);
    cursor = mongoc_collection_find_with_opts(coll, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        json_t *doc = sa_bson_to_json(found, error);
        bson_t b = BSON_INITIALIZER, sel = BSON_INITIALIZER;
        bson_iter_t it;
        char *id;
        if (!doc) {
            ok = false;
            break;
        }
        id = superseded ? sa_jobdoc_superseded_id(cluster, sa_jobdoc_int(doc, "job_id"), sa_jobdoc_int(doc, "submit"))
                        : sa_jobdoc_id(cluster, sa_jobdoc_int(doc, "job_id"));
        json_object_set_new(doc, "_id", json_string(id ? id : ""));
        json_object_set_new(doc, "_migrating_to", json_string(superseded ? "jobs_superseded" : "jobs"));
        if (!superseded)
            json_object_set_new(doc, "_v", json_integer(1));
        free(id);
        ok = sa_bson_from_json(doc, &b, error) && mongoc_bulk_operation_insert_with_opts(bulk, &b, NULL, NULL);
        if (ok && bson_iter_init_find(&it, found, "_id") && BSON_ITER_HOLDS_OID(&it)) {
            BSON_APPEND_OID(&sel, "_id", bson_iter_oid(&it));
            ok = mongoc_bulk_operation_remove_one_with_opts(del, &sel, NULL, NULL);
        }
        bson_destroy(&b);
        bson_destroy(&sel);
        json_decref(doc);
        n++;
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "reading documents to migrate", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    /* the copy first (a duplicate: an earlier attempt made it), then the old document goes */
    ok = ok && (n == 0 || bulk_exec(a, bulk, "migrating jobs", NULL, NULL, n, error));
    ok = ok && (n == 0 || bulk_exec(a, del, "migrating jobs", NULL, NULL, n, error));
    mongoc_bulk_operation_destroy(bulk);
    mongoc_bulk_operation_destroy(del);
    bson_destroy(&filter);
    bson_destroy(&opts);
    *got = n;
    return ok;
}

/* Moves what jobs_migrating holds for cluster to its final collection. */
static bool migrate_place(sa_archive_t *a, const char *cluster, size_t *moved, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    bool ok = true;

    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cursor = mongoc_collection_find_with_opts(a->migrating, &filter, NULL, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        json_t *doc = sa_bson_to_json(found, error);
        const char *to = doc ? doc_str(doc, "_migrating_to") : NULL;
        mongoc_collection_t *dest = to && strcmp(to, "jobs_superseded") == 0 ? a->superseded : a->jobs;
        bson_t b = BSON_INITIALIZER, sel = BSON_INITIALIZER;
        if (!doc) {
            ok = false;
            break;
        }
        json_object_del(doc, "_migrating_to");
        ok = sa_bson_from_json(doc, &b, error);
        if (ok && !mongoc_collection_insert_one(dest, &b, NULL, NULL, &berr) && berr.code != 11000) {
            sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
            ok = false;
        }
        BSON_APPEND_UTF8(&sel, "_id", doc_str(doc, "_id") ? doc_str(doc, "_id") : "");
        if (ok && !mongoc_collection_delete_one(a->migrating, &sel, NULL, NULL, &berr)) {
            sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
            ok = false;
        }
        if (ok && moved)
            (*moved)++;
        bson_destroy(&b);
        bson_destroy(&sel);
        json_decref(doc);
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "migrating jobs", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    return ok;
}

bool sa_archive_migrate(sa_archive_t *a, const char *cluster, size_t *moved, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    bool done, ok = true;

    if (moved)
        *moved = 0;
    if (!cdoc)
        return false;
    done = sa_jobdoc_int(cdoc, "schema_version") >= 2;
    json_decref(cdoc);
    if (done)
        return true;
    /* a crash may have left documents on their way: place them first, then batch by batch */
    ok = migrate_place(a, cluster, moved, error);
    for (int coll = 0; ok && coll < 2; coll++) {
        size_t got;
        do {
            ok = migrate_collect(a, coll ? a->superseded : a->jobs, cluster, coll == 1, &got, error) &&
                 migrate_place(a, cluster, moved, error);
        } while (ok && got > 0);
    }
    if (!ok)
        return false;
    set = json_pack("{s:i}", "schema_version", 2);
    ok = sa_archive_cluster_update(a, cluster, NULL, set, error);
    json_decref(set);
    return ok;
}

/* ---- the clusters collection and ingest_runs ------------------------------------------- */

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
    if (!cluster_upsert(a, &filter, &upd, &opts, &berr)) {
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
    ok = ok ? cluster_update(a, cluster, tmin, tmax, NULL, error) : sa_error_nomem(error);
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
static bool cluster_derived(sa_archive_t *a, const char *cluster, sa_ingestdays_mode_t mode, int64_t first_run,
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
    if (ok && mode == SA_INGESTDAYS_REBUILD && *differ > n0)
        ok = cluster_set_times(a, cluster, names, want, 3, error);
    if (ok && mode == SA_INGESTDAYS_ADD && *differ > n0)
        ok = cluster_widen(a, cluster, want, error);
    if (ok)
        a->first_submit = want[2];
    json_decref(cdoc);
    return ok;
}

/* The cluster's ingest_days and derived clusters fields against ingest_runs and the job documents. */
static bool derived_rebuild(sa_archive_t *a, const char *cluster, sa_ingestdays_mode_t mode, size_t *docs,
                            size_t *differ, FILE *out, sa_error_t *error)
{
    int64_t first = SA_UNSET, last = SA_UNSET;
    return sa_ingestdays_rebuild(a->db, a->hosts, cluster, mode, docs, differ, &first, &last, out, error) &&
           cluster_derived(a, cluster, mode, first, last, differ, out, error);
}

bool sa_archive_rollups(sa_archive_t *a, const char *cluster, bool rebuild, int64_t since, size_t *docs,
                        size_t *differ, FILE *out, sa_error_t *error)
{
    size_t ddocs = 0, ddiffer = 0;
    bool ok = sa_rollw_rebuild(a->db, a->hosts, cluster, rebuild, since, docs, differ, out, error) &&
              derived_rebuild(a, cluster, rebuild ? SA_INGESTDAYS_REBUILD : SA_INGESTDAYS_VERIFY, &ddocs, &ddiffer, out,
                              error);
    *docs += ddocs;
    *differ += ddiffer;
    return ok;
}

bool sa_archive_ingest_days_init(sa_archive_t *a, const char *cluster, size_t *built, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    size_t differ = 0;
    bool ok;

    *built = 0;
    if (!cdoc)
        return false;
    if (sa_jobdoc_int(cdoc, "ingest_days_version") >= SA_INGEST_DAYS_VERSION) {
        a->first_submit = sa_jobdoc_int(cdoc, "first_submit");
        json_decref(cdoc);
        return true;
    }
    json_decref(cdoc);
    set = json_pack("{s:I}", "ingest_days_version", (json_int_t)SA_INGEST_DAYS_VERSION);
    ok = set && derived_rebuild(a, cluster, SA_INGESTDAYS_ADD, built, &differ, NULL, error) &&
         cluster_update(a, cluster, NULL, NULL, set, error);
    if (!set)
        sa_error_nomem(error);
    json_decref(set);
    return ok;
}

/*
 * Types the runs of one job document whose untyped GPUs had no type (sa_tsdb_run_gpu_type
 * over the series as it is now): *doc gets the new document (NULL: nothing typed);
 * *pending: a run is still untyped and observations around its start may still come
 * (the series does not reach a day past it).
 */
static bool retype_doc(sa_tsdb_t *db, const char *cluster, int64_t last, const json_t *stored, const bson_t *b,
                       sa_jobview_t *view, json_t **doc, bool *pending, bool *waiting, sa_error_t *error)
{
    json_t *runs;

    *doc = NULL;
    *pending = *waiting = false;
    if (!sa_jobview_read(view, b, error))
        return false;
    for (size_t i = 0; i < view->nruns; i++) {
        const sa_jobview_run_t *r = &view->runs[i];
        char *type = NULL;
        int source = 0;
        bool cfg_unknown = false;
        if (!sa_rollw_run_needs_type(r))
            continue;
        if (!sa_tsdb_run_gpu_type_later(db, cluster, r->nodes, r->start, r->end, &type, &source, &cfg_unknown, error))
            return false;
        if (!type) {
            *pending = *pending || last == SA_UNSET || last < r->start + 86400;
            *waiting = *waiting || cfg_unknown;
            continue;
        }
        if (!*doc && !(*doc = json_deep_copy(stored))) {
            free(type);
            sa_error_nomem(error);
            return false;
        }
        runs = json_object_get(*doc, "runs");
        json_object_set_new(json_array_get(runs, i), "gpu_type", json_string(type));
        json_object_set_new(json_array_get(runs, i), "gpu_type_source",
                            json_string(sa_run_gpu_type_source_name(source)));
        free(type);
    }
    return true;
}

/* Replaces a changed job document if still at the version read; *written says whether it was. */
static bool replace_at_version(sa_archive_t *a, const char *id, int64_t v, json_t *doc, bool *written, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER, reply;
    bson_error_t berr;
    bool ok;

    *written = false;
    json_object_set_new(doc, "_v", json_integer(v + 1));
    BSON_APPEND_UTF8(&filter, "_id", id);
    BSON_APPEND_INT64(&filter, "_v", v);
    ok = doc_to_bson(doc, &b, error);
    if (ok && !(ok = mongoc_collection_replace_one(a->jobs, &filter, &b, NULL, &reply, &berr))) {
        sa_mongo_error(error, a->hosts, "writing jobs", &berr);
    } else if (ok) {
        bson_iter_t it;
        *written = bson_iter_init_find(&it, &reply, "matchedCount") && bson_iter_as_int64(&it) == 1;
        bson_destroy(&reply);
    }
    bson_destroy(&b);
    bson_destroy(&filter);
    return ok;
}

bool sa_archive_retype(sa_archive_t *a, const char *cluster, const char *sqlite_path, bool new_config,
                       size_t *retyped, sa_error_t *error)
{
    sa_rollw_t *w = sa_rollw_new(a->rollups, a->hosts, cluster);
    sa_strv_t ids, done, wait_add, wait_del, none;
    sa_tsdb_t *db = NULL;
    slot_t *slots = NULL;
    slot_t **want = NULL;
    json_t **docs = NULL;
    sa_jobview_t view;
    sa_archive_stats_t stats;
    int64_t v, last = SA_UNSET;
    size_t nfresh;
    bool ok;

    *retyped = 0;
    memset(&stats, 0, sizeof stats);
    sa_strv_init(&ids);
    sa_strv_init(&done);
    sa_strv_init(&wait_add);
    sa_strv_init(&wait_del);
    sa_strv_init(&none);
    sa_jobview_init(&view);
    if (!w) {
        sa_error_nomem(error);
        return false;
    }
    /* the untyped list every run; the jobs waiting for their nodes' GPUs when this run brought some */
    ok = sa_rollw_untyped_list(w, &ids, &v, error);
    nfresh = ids.n;
    ok = ok && (!new_config || sa_rollw_waiting_list(w, &ids, &v, error));
    if (!ok || !ids.n || !sqlite_path || access(sqlite_path, F_OK) != 0)
        goto done; /* nothing to type, or nothing to type them with */
    /* read-write: an older schema is migrated (slurm-ingest writes the series), not refused */
    if (!(db = sa_tsdb_open(sqlite_path, false, 10000, error)) || !sa_tsdb_last_snapshot(db, cluster, &last, error)) {
        ok = false;
        goto done;
    }
    slots = calloc(ids.n, sizeof *slots);
    want = calloc(ids.n, sizeof *want);
    docs = calloc(ids.n, sizeof *docs);
    if (!slots || !want || !docs) {
        sa_error_nomem(error);
        ok = false;
        goto done;
    }
    for (size_t i = 0; ok && i < ids.n; i++) {
        want[i] = &slots[i];
        if (!(slots[i].id = strdup(ids.v[i])))
            ok = sa_error_nomem(error);
    }
    ok = ok && read_docs(a, want, ids.n, &stats, error);
    for (size_t i = 0; ok && i < ids.n; i++) { /* type what can be, journaled before any write */
        bson_t b = BSON_INITIALIZER;
        bool pending = false, waiting = false, fresh = i < nfresh;
        if (!slots[i].stored) { /* gone (or superseded) */
            ok = sa_strv_push(fresh ? &done : &wait_del, ids.v[i]) || sa_error_nomem(error);
            continue;
        }
        ok = doc_to_bson(slots[i].stored, &b, error) &&
             retype_doc(db, cluster, last, slots[i].stored, &b, &view, &docs[i], &pending, &waiting, error) &&
             (!docs[i] || sa_rollw_journal_add(w, slots[i].id, &b, error));
        bson_destroy(&b);
        if (!ok || pending)
            continue; /* still in its first day: stays in the untyped list (the flush keeps a re-typed one there) */
        /* out of the untyped list; into the waiting list while its nodes' GPUs are not known at all */
        ok = (!fresh || sa_strv_push(&done, ids.v[i])) &&
             sa_strv_push(waiting ? &wait_add : &wait_del, ids.v[i]);
        if (!ok)
            sa_error_nomem(error);
    }
    ok = ok && sa_rollw_journal_write(w, error);
    for (size_t i = 0; ok && i < ids.n; i++) {
        bool written = false;
        if (!docs[i])
            continue;
        ok = replace_at_version(a, slots[i].id, slots[i].v, docs[i], &written, error) &&
             (!written || stage_doc(w, slots[i].id, slots[i].stored, docs[i], false, error));
        *retyped += written;
    }
    ok = ok && sa_rollw_flush(w, error) && sa_rollw_journal_done(w, error) &&
         sa_rollw_untyped_update(w, &none, &done, error) &&
         ((!wait_add.n && !wait_del.n) || sa_rollw_waiting_update(w, &wait_add, &wait_del, error));
done:
    for (size_t i = 0; slots && i < ids.n; i++) {
        slot_reset(&slots[i]);
        free(slots[i].id);
        json_decref(docs[i]);
    }
    free(slots);
    free(want);
    free(docs);
    sa_tsdb_close(db);
    sa_jobview_clear(&view);
    sa_strv_clear(&ids);
    sa_strv_clear(&done);
    sa_strv_clear(&wait_add);
    sa_strv_clear(&wait_del);
    sa_strv_clear(&none);
    sa_rollw_free(w);
    return ok;
}

bool sa_archive_rollups_recover(sa_archive_t *a, const char *cluster, size_t *jobs, sa_error_t *error)
{
    sa_rollw_t *w = sa_rollw_new(a->rollups, a->hosts, cluster);
    bool ok = w && sa_rollw_recover(w, a->jobs, a->superseded, jobs, error);
    if (!w)
        sa_error_nomem(error);
    sa_rollw_free(w);
    return ok;
}

bool sa_archive_rollups_init(sa_archive_t *a, const char *cluster, size_t *built, sa_error_t *error)
{
    json_t *cdoc = sa_archive_cluster_get(a, cluster, error), *set;
    size_t differ = 0;
    bool ok;

    *built = 0;
    if (!cdoc)
        return false;
    if (sa_jobdoc_int(cdoc, "rollup_version") >= SA_ROLLUP_VERSION) {
        json_decref(cdoc);
        return true;
    }
    json_decref(cdoc);
    set = json_pack("{s:I}", "rollup_version", (json_int_t)SA_ROLLUP_VERSION);
    ok = set && sa_rollw_rebuild(a->db, a->hosts, cluster, true, SA_UNSET, built, &differ, NULL, error) &&
         sa_archive_cluster_update(a, cluster, NULL, set, error);
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

/* $min of min_times, $max of max_times, $set of set (each may be NULL) on the cluster's document. */
static bool cluster_update(sa_archive_t *a, const char *cluster, const json_t *min_times, const json_t *max_times,
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
    if (ok && !bson_empty(&upd) && !cluster_upsert(a, &filter, &upd, &opts, &berr)) {
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
    return cluster_update(a, cluster, NULL, max_times, set, error);
}

/*
 * The run's _id is made here: it is the key of the run's entry in ingest_days, written
 * next (a run recorded there but not in its day is found by `slurm-ingest rollup`).
 */
bool sa_archive_record_run(sa_archive_t *a, const json_t *run, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    bson_error_t berr;
    bson_oid_t oid;
    const char *cluster = doc_str(run, "cluster");
    json_t *tmin = NULL, *tmax = NULL;
    int64_t started = SA_UNSET;
    bool ok;

    bson_oid_init(&oid, NULL);
    ok = BSON_APPEND_OID(&b, "_id", &oid) && sa_bson_from_json(run, &b, error);
    if (ok && !mongoc_collection_insert_one(a->runs, &b, NULL, NULL, &berr)) {
        sa_mongo_error(error, a->hosts, "writing ingest_runs", &berr);
        ok = false;
    }
    ok = ok && (!cluster || sa_ingestdays_push(a->days, a->hosts, cluster, &b, &started, error));
    if (ok && cluster) { /* where a reader finds the cluster's days */
        tmin = json_pack("{s:I}", "first_run_at", (json_int_t)started);
        tmax = json_pack("{s:I}", "last_run_at", (json_int_t)started);
        ok = tmin && tmax ? cluster_update(a, cluster, tmin, tmax, NULL, error) : sa_error_nomem(error);
    }
    json_decref(tmin);
    json_decref(tmax);
    bson_destroy(&b);
    return ok;
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

/* ---- changes by _id (the Prometheus import) ------------------------------------------------ */

/* Appends to ids (and *ends) the final job documents of the ended lists of one day (parts[0..n)) whose end is in (after, to]. */
static bool ended_of_day(sa_archive_t *a, char *const *parts, size_t n, int64_t after, int64_t to, sa_strv_t *ids,
                         int64_t **ends, size_t *ends_cap, sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *b;
    bson_error_t berr;
    sa_rolldoc_t d;
    bool ok = true;

    sa_bson_append_in_strings(&filter, "_id", parts, n);
    cur = mongoc_collection_find_with_opts(a->rollups, &filter, NULL, NULL);
    while (ok && mongoc_cursor_next(cur, &b)) {
        sa_rolldoc_init(&d);
        ok = sa_rolldoc_read(&d, b, error);
        for (size_t i = 0; ok && i < d.nm; i++) {
            const sa_rmember_t *m = &d.m[i];
            if (!m->nrec || m->rec[SA_RR_END] <= after || m->rec[SA_RR_END] > to)
                continue;
            if (!SA_VEC_GROW(*ends, *ends_cap, ids->n, 1, 256) || !sa_strv_push(ids, m->id))
                ok = sa_error_nomem(error);
            else
                (*ends)[ids->n - 1] = m->rec[SA_RR_END];
        }
        sa_rolldoc_clear(&d);
    }
    if (ok && mongoc_cursor_error(cur, &berr)) {
        sa_mongo_error(error, a->hosts, "reading rollups", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    return ok;
}

bool sa_archive_ended_ids(sa_archive_t *a, const char *cluster, int64_t after, int64_t to, sa_strv_t *ids,
                          int64_t **ends, size_t *ends_cap, sa_error_t *error)
{
    sa_strv_t parts;
    bool ok = true;

    if (to < after || to < 0)
        return true;
    sa_strv_init(&parts);
    for (int64_t day = sa_rollup_day(after < 0 ? 0 : after); ok && day <= sa_rollup_day(to); day += SA_DAY) {
        ok = sa_rollup_part_ids(&parts, cluster, day + SA_ROLLUP_ENDED, false, error) &&
             ended_of_day(a, parts.v, parts.n, after, to, ids, ends, ends_cap, error);
        sa_strv_clear(&parts);
    }
    return ok;
}

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
    sa_rollw_t *w = sa_rollw_new(a->rollups, a->hosts, cluster);
    sa_archive_stats_t stats;
    slot_t *slots = NULL;
    bool ok = w != NULL;

    *written = 0;
    memset(&stats, 0, sizeof stats);
    for (size_t i = 0; replaced && i < n; i++)
        replaced[i] = false;
    if (!ok)
        sa_error_nomem(error);
    ok = ok && (slots = slots_read(a, ids, n, &stats, error)) != NULL;
    for (size_t i = 0; ok && i < n; i++) { /* the changes, journaled before any write */
        bson_t b = BSON_INITIALIZER;
        if (!slots[i].stored)
            continue;
        ok = fn(ctx, slots[i].id, slots[i].stored, &slots[i].doc, error) &&
             (!slots[i].doc || (doc_to_bson(slots[i].stored, &b, error) &&
                                sa_rollw_journal_add(w, slots[i].id, &b, error)));
        bson_destroy(&b);
    }
    ok = ok && sa_rollw_journal_write(w, error);
    for (size_t i = 0; ok && i < n; i++) {
        bool done = false;
        if (!slots[i].doc)
            continue;
        ok = replace_at_version(a, slots[i].id, slots[i].v, slots[i].doc, &done, error) &&
             (!done || stage_doc(w, slots[i].id, slots[i].stored, slots[i].doc, false, error));
        *written += done;
        if (replaced)
            replaced[i] = done;
    }
    ok = ok && sa_rollw_flush(w, error) && sa_rollw_journal_done(w, error);
    slots_free(slots, n);
    sa_rollw_free(w);
    return ok;
}
