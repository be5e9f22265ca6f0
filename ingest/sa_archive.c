/*
 * sa_archive.c - the job archive in MongoDB (see sa_archive.h).
 *
 * Every query here is valid on MongoDB and on FerretDB 1.24 (the test server): plain
 * finds with filters and projections, unordered bulk insert/replace/update with
 * $set/$max, createIndexes. No aggregation expressions, no update pipelines, no
 * $push $slice: documents are merged in C (sa_jobdoc.c) and replaced whole.
 */
#include "sa_archive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mongoc/mongoc.h>

#include "sa_bson.h"
#include "sa_job_schema_json.h"
#include "sa_mongo.h"

#define FIND_BATCH 1000 /* job ids per $in query */

struct sa_archive {
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *jobs, *superseded, *clusters, *runs;
    char *hosts; /* for messages: host:port list, never the URI (it may hold a password) */
};

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

/* Builds {$jsonSchema: ...} from the embedded schema/job.schema.json. */
static bool job_validator(bson_t *out, sa_error_t *error)
{
    json_error_t jerr;
    json_t *schema = json_loads(sa_job_schema_json, 0, &jerr), *resolved, *wrap;
    char *text;
    bson_error_t berr;
    bool ok;

    if (!schema) {
        sa_error_set(error, SA_ERR_MONGO, 0, "schema/job.schema.json: %s", jerr.text);
        return false;
    }
    resolved = schema_resolve(schema, json_object_get(schema, "definitions"));
    wrap = json_pack("{s:o}", "$jsonSchema", resolved);
    text = json_dumps(wrap, JSON_COMPACT);
    /* the schema is JSON Schema text, not a document of ours: libbson reads it */
    ok = text && bson_init_from_json(out, text, -1, &berr);
    if (!ok)
        sa_error_set(error, SA_ERR_MONGO, 0, "schema/job.schema.json: %s", text ? berr.message : "out of memory");
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
            snprintf(buf, sizeof buf, "jobs: $jsonSchema validator from schema/job.schema.json applied");
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
static bool ensure_indexes(sa_archive_t *a, const char *coll, const char *const specs[][3], size_t n,
                           sa_error_t *error)
{
    bson_t cmd = BSON_INITIALIZER, arr;
    bson_error_t berr;
    mongoc_collection_t *c = mongoc_database_get_collection(a->db, coll);
    mongoc_cursor_t *cursor = mongoc_collection_find_indexes_with_opts(c, NULL);
    const bson_t *found;
    sa_strv_t have;
    size_t queued = 0;
    bool ok;

    sa_strv_init(&have);
    while (mongoc_cursor_next(cursor, &found)) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, found, "name") && BSON_ITER_HOLDS_UTF8(&it))
            sa_strv_push(&have, bson_iter_utf8(&it, NULL));
    }
    mongoc_cursor_destroy(cursor);
    mongoc_collection_destroy(c);

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
    };
    static const char *const superseded_indexes[][3] = {
        {"cluster_job_id_submit", "{\"cluster\": 1, \"job_id\": 1, \"submit\": 1}", NULL},
    };
    static const char *const run_indexes[][3] = {
        {"cluster_started", "{\"cluster\": 1, \"started_at\": -1}", NULL},
    };
    sa_archive_t *a;

    if (validator_note)
        *validator_note = NULL;
    a = calloc(1, sizeof *a);
    if (!a) {
        sa_error_set(error, SA_ERR_MONGO, 0, "out of memory");
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
    if (!ensure_jobs_collection(a, validator_note, error) ||
        !ensure_indexes(a, "jobs", job_indexes, sizeof job_indexes / sizeof job_indexes[0], error) ||
        !ensure_indexes(a, "jobs_superseded", superseded_indexes, 1, error) ||
        !ensure_indexes(a, "ingest_runs", run_indexes, 1, error))
        goto fail;
    return a;
fail:
    sa_archive_close(a);
    return NULL;
}

void sa_archive_close(sa_archive_t *a)
{
    if (!a)
        return;
    mongoc_collection_destroy(a->jobs);
    mongoc_collection_destroy(a->superseded);
    mongoc_collection_destroy(a->clusters);
    mongoc_collection_destroy(a->runs);
    mongoc_database_destroy(a->db);
    mongoc_client_destroy(a->client);
    free(a->hosts);
    free(a);
}

/* ---- batch ingest ------------------------------------------------------------------ */

/* One job id of a batch: its stored document and what the merges did to it. */
typedef struct {
    int64_t job_id;
    json_t *doc;        /* as stored (NULL: none), then merged */
    json_t *superseded; /* documents displaced by reuse (array), or NULL */
    bool existed, touched;
    sa_merge_kind_t kind;
} slot_t;

static int slot_cmp(const void *a, const void *b)
{
    int64_t x = ((const slot_t *)a)->job_id, y = ((const slot_t *)b)->job_id;
    return x < y ? -1 : x > y;
}

static slot_t *slot_find(slot_t *slots, size_t n, int64_t id)
{
    slot_t key = {.job_id = id};
    return bsearch(&key, slots, n, sizeof *slots, slot_cmp);
}

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

/* Loads the stored documents of the slots' job ids, FIND_BATCH ids per query. */
static bool load_docs(sa_archive_t *a, const char *cluster, slot_t *slots, size_t n, sa_error_t *error)
{
    for (size_t off = 0; off < n; off += FIND_BATCH) {
        bson_t filter = BSON_INITIALIZER, in, ids;
        mongoc_cursor_t *cursor;
        const bson_t *found;
        bson_error_t berr;
        size_t end = off + FIND_BATCH < n ? off + FIND_BATCH : n;

        BSON_APPEND_UTF8(&filter, "cluster", cluster);
        BSON_APPEND_DOCUMENT_BEGIN(&filter, "job_id", &in);
        BSON_APPEND_ARRAY_BEGIN(&in, "$in", &ids);
        for (size_t i = off; i < end; i++) {
            char istr[16];
            const char *ikey;
            bson_uint32_to_string((uint32_t)(i - off), &ikey, istr, sizeof istr);
            BSON_APPEND_INT64(&ids, ikey, slots[i].job_id);
        }
        bson_append_array_end(&in, &ids);
        bson_append_document_end(&filter, &in);
        cursor = mongoc_collection_find_with_opts(a->jobs, &filter, NULL, NULL);
        while (mongoc_cursor_next(cursor, &found)) {
            json_t *doc = sa_bson_to_json(found, error);
            json_t *id;
            slot_t *s;
            if (!doc) {
                mongoc_cursor_destroy(cursor);
                bson_destroy(&filter);
                return false;
            }
            id = json_object_get(doc, "job_id");
            s = json_is_integer(id) ? slot_find(slots, n, (int64_t)json_integer_value(id)) : NULL;
            if (s) {
                json_decref(s->doc);
                s->doc = doc;
                s->existed = true;
            } else {
                json_decref(doc);
            }
        }
        if (mongoc_cursor_error(cursor, &berr)) {
            sa_mongo_error(error, a->hosts, "reading jobs", &berr);
            mongoc_cursor_destroy(cursor);
            bson_destroy(&filter);
            return false;
        }
        mongoc_cursor_destroy(cursor);
        bson_destroy(&filter);
    }
    return true;
}

/* Runs a bulk operation that has statements; *statements counts them. */
static bool bulk_run(sa_archive_t *a, mongoc_bulk_operation_t *bulk, size_t statements, const char *what,
                     sa_error_t *error)
{
    bson_t reply;
    bson_error_t berr;
    bool ok;

    if (statements == 0)
        return true;
    ok = mongoc_bulk_operation_execute(bulk, &reply, &berr) != 0;
    if (!ok)
        sa_mongo_error(error, a->hosts, what, &berr);
    bson_destroy(&reply);
    return ok;
}

/* Appends a jansson document as BSON to a bulk insert. */
static bool bulk_insert_json(mongoc_bulk_operation_t *bulk, const json_t *doc, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok = sa_bson_from_json(doc, &b, error);
    if (ok && !mongoc_bulk_operation_insert_with_opts(bulk, &b, NULL, &berr)) {
        sa_error_set(error, SA_ERR_MONGO, 0, "queueing an insert: %s", berr.message);
        ok = false;
    }
    bson_destroy(&b);
    return ok;
}

static bool bulk_replace_json(mongoc_bulk_operation_t *bulk, const char *cluster, int64_t job_id,
                              const json_t *doc, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER, filter = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok = sa_bson_from_json(doc, &b, error);

    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    BSON_APPEND_INT64(&filter, "job_id", job_id);
    if (ok && !mongoc_bulk_operation_replace_one_with_opts(bulk, &filter, &b, NULL, &berr)) {
        sa_error_set(error, SA_ERR_MONGO, 0, "queueing a replace: %s", berr.message);
        ok = false;
    }
    bson_destroy(&b);
    bson_destroy(&filter);
    return ok;
}

/*
 * Marks unfinished documents that a complete squeue snapshot no longer lists:
 * one $set per vanished job, with the time of the previous snapshot.
 */
static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

bool sa_archive_mark_vanished(sa_archive_t *a, const sa_obs_ctx_t *ctx, int64_t *ids, size_t n,
                              sa_archive_stats_t *stats, sa_error_t *error)
{
    mongoc_bulk_operation_t *bulk;
    bson_t bopts = BSON_INITIALIZER;
    json_t *cluster_doc;
    size_t statements = 0;
    int64_t prev_at;

    bson_t filter = BSON_INITIALIZER, nin, arr, exists, opts = BSON_INITIALIZER, proj;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_error_t berr;
    bool ok = true;

    cluster_doc = sa_archive_cluster_get(a, ctx->cluster, error);
    if (!cluster_doc)
        return false;
    prev_at = json_is_integer(json_object_get(cluster_doc, "last_squeue_at"))
                  ? (int64_t)json_integer_value(json_object_get(cluster_doc, "last_squeue_at"))
                  : ctx->at;
    json_decref(cluster_doc);
    if (prev_at > ctx->at)
        return true; /* replaying an older snapshot: a newer one already decided */
    qsort(ids, n, sizeof *ids, id_cmp);
    BSON_APPEND_BOOL(&bopts, "ordered", false);
    bulk = mongoc_collection_create_bulk_operation_with_opts(a->jobs, &bopts);
    bson_destroy(&bopts);

    BSON_APPEND_UTF8(&filter, "cluster", ctx->cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "state", &nin);
    BSON_APPEND_ARRAY_BEGIN(&nin, "$nin", &arr);
    for (size_t i = 0; sa_job_final_states[i]; i++) {
        char istr[16];
        const char *ikey;
        bson_uint32_to_string((uint32_t)i, &ikey, istr, sizeof istr);
        BSON_APPEND_UTF8(&arr, ikey, sa_job_final_states[i]);
    }
    bson_append_array_end(&nin, &arr);
    bson_append_document_end(&filter, &nin);
    BSON_APPEND_DOCUMENT_BEGIN(&filter, "vanished_at", &exists);
    BSON_APPEND_BOOL(&exists, "$exists", false);
    bson_append_document_end(&filter, &exists);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "projection", &proj);
    BSON_APPEND_INT32(&proj, "job_id", 1);
    bson_append_document_end(&opts, &proj);

    cursor = mongoc_collection_find_with_opts(a->jobs, &filter, &opts, NULL);
    while (ok && mongoc_cursor_next(cursor, &found)) {
        bson_iter_t it;
        int64_t id;
        bson_t sel = BSON_INITIALIZER, upd = BSON_INITIALIZER, set, max;
        if (!bson_iter_init_find(&it, found, "job_id") || !BSON_ITER_HOLDS_NUMBER(&it))
            continue;
        id = bson_iter_as_int64(&it);
        if (n && bsearch(&id, ids, n, sizeof *ids, id_cmp))
            continue; /* listed in this snapshot */
        BSON_APPEND_UTF8(&sel, "cluster", ctx->cluster);
        BSON_APPEND_INT64(&sel, "job_id", id);
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &set);
        BSON_APPEND_DATE_TIME(&set, "vanished_at", prev_at * 1000);
        bson_append_document_end(&upd, &set);
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$max", &max);
        BSON_APPEND_DATE_TIME(&max, "seen.last", prev_at * 1000);
        bson_append_document_end(&upd, &max);
        if (!mongoc_bulk_operation_update_one_with_opts(bulk, &sel, &upd, NULL, &berr)) {
            sa_error_set(error, SA_ERR_MONGO, 0, "queueing an update: %s", berr.message);
            ok = false;
        }
        statements++;
        stats->vanished++;
        bson_destroy(&sel);
        bson_destroy(&upd);
    }
    if (ok && mongoc_cursor_error(cursor, &berr)) {
        sa_mongo_error(error, a->hosts, "finding unfinished jobs", &berr);
        ok = false;
    }
    mongoc_cursor_destroy(cursor);
    ok = ok && bulk_run(a, bulk, statements, "marking vanished jobs", error);
    if (ok)
        stats->write_statements += statements;
    mongoc_bulk_operation_destroy(bulk);
    bson_destroy(&filter);
    bson_destroy(&opts);
    return ok;
}

bool sa_archive_ingest_jobs(sa_archive_t *a, const sa_obs_ctx_t *ctx, sa_job_t *const *jobs, size_t n,
                            sa_archive_stats_t *stats, sa_error_t *error)
{
    sa_job_t **sorted = NULL;
    slot_t *slots = NULL;
    size_t nslots = 0, job_statements = 0, sup_statements = 0;
    mongoc_bulk_operation_t *bulk = NULL, *sup_bulk = NULL;
    bson_t opts = BSON_INITIALIZER;
    bool ok = false;

    stats->records += n;
    sorted = malloc((n ? n : 1) * sizeof *sorted);
    slots = calloc(n ? n : 1, sizeof *slots);
    if (!sorted || !slots) {
        sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
        goto done;
    }
    memcpy(sorted, jobs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, rec_cmp);
    for (size_t i = 0; i < n; i++) {
        if (nslots == 0 || slots[nslots - 1].job_id != sorted[i]->job_id)
            slots[nslots++].job_id = sorted[i]->job_id;
    }
    stats->jobs += nslots;
    if (!load_docs(a, ctx->cluster, slots, nslots, error))
        goto done;

    /* merge, in submit order per job */
    for (size_t i = 0; i < n; i++) {
        slot_t *s = slot_find(slots, nslots, sorted[i]->job_id);
        json_t *superseded = NULL;
        sa_merge_kind_t kind;
        if (!sa_jobdoc_merge(&s->doc, sorted[i], ctx, &kind, &superseded, error)) {
            sa_error_prefix(error, "job %lld", (long long)sorted[i]->job_id);
            goto done;
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

    BSON_APPEND_BOOL(&opts, "ordered", false);
    bulk = mongoc_collection_create_bulk_operation_with_opts(a->jobs, &opts);
    sup_bulk = mongoc_collection_create_bulk_operation_with_opts(a->superseded, &opts);
    for (size_t i = 0; i < nslots; i++) {
        slot_t *s = &slots[i];
        size_t k;
        json_t *old;
        json_array_foreach(s->superseded, k, old) {
            if (!bulk_insert_json(sup_bulk, old, error))
                goto done;
            sup_statements++;
            stats->reused++;
        }
        if (!s->touched) {
            stats->unchanged++;
            continue;
        }
        if (s->existed) {
            if (!bulk_replace_json(bulk, ctx->cluster, s->job_id, s->doc, error))
                goto done;
            stats->changed++;
        } else {
            if (!bulk_insert_json(bulk, s->doc, error))
                goto done;
            stats->inserted++;
        }
        job_statements++;
    }
    /* the superseded copies land before the documents that replace them */
    if (!bulk_run(a, sup_bulk, sup_statements, "writing jobs_superseded", error) ||
        !bulk_run(a, bulk, job_statements, "writing jobs", error))
        goto done;
    stats->write_statements += job_statements + sup_statements;
    ok = true;
done:
    for (size_t i = 0; i < nslots; i++) {
        json_decref(slots[i].doc);
        json_decref(slots[i].superseded);
    }
    mongoc_bulk_operation_destroy(bulk);
    mongoc_bulk_operation_destroy(sup_bulk);
    bson_destroy(&opts);
    free(sorted);
    free(slots);
    return ok;
}

/* ---- the clusters collection and ingest_runs ------------------------------------------- */

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

bool sa_archive_cluster_update(sa_archive_t *a, const char *cluster, const json_t *max_times, const json_t *set,
                               sa_error_t *error)
{
    bson_t filter = BSON_INITIALIZER, upd = BSON_INITIALIZER, opts = BSON_INITIALIZER, part;
    bson_error_t berr;
    bool ok = true;

    BSON_APPEND_UTF8(&filter, "_id", cluster);
    if (max_times && json_object_size(max_times)) {
        const char *k;
        json_t *v;
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$max", &part);
        json_object_foreach((json_t *)max_times, k, v) {
            BSON_APPEND_DATE_TIME(&part, k, (int64_t)json_integer_value(v) * 1000);
        }
        bson_append_document_end(&upd, &part);
    }
    if (set && json_object_size(set)) {
        BSON_APPEND_DOCUMENT_BEGIN(&upd, "$set", &part);
        ok = sa_bson_from_json(set, &part, error);
        bson_append_document_end(&upd, &part);
    }
    BSON_APPEND_BOOL(&opts, "upsert", true);
    if (ok && !bson_empty(&upd) && !mongoc_collection_update_one(a->clusters, &filter, &upd, &opts, NULL, &berr)) {
        sa_mongo_error(error, a->hosts, "updating clusters", &berr);
        ok = false;
    }
    bson_destroy(&filter);
    bson_destroy(&upd);
    bson_destroy(&opts);
    return ok;
}

bool sa_archive_record_run(sa_archive_t *a, const json_t *run, sa_error_t *error)
{
    bson_t b = BSON_INITIALIZER;
    bson_error_t berr;
    bool ok = sa_bson_from_json(run, &b, error);
    if (ok && !mongoc_collection_insert_one(a->runs, &b, NULL, NULL, &berr)) {
        sa_mongo_error(error, a->hosts, "writing ingest_runs", &berr);
        ok = false;
    }
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

    sa_error_clear(error);
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    BSON_APPEND_INT64(&filter, "job_id", job_id);
    cursor = mongoc_collection_find_with_opts(a->jobs, &filter, NULL, NULL);
    if (mongoc_cursor_next(cursor, &found))
        doc = sa_bson_to_json(found, error);
    else if (mongoc_cursor_error(cursor, &berr))
        sa_mongo_error(error, a->hosts, "reading jobs", &berr);
    mongoc_cursor_destroy(cursor);
    bson_destroy(&filter);
    return doc;
}
