/*
 * bench-fill.c - helpers of tools/bench-scale (not run by the tests): fills an archive
 * with many realistic job documents quickly, and asks the server how it would run a
 * filter.
 *
 *   bench-fill fill --cluster NAME --total N [--spread-days D] [--mongo-uri URI] [--db NAME]
 *   bench-fill explain --filter JSON [--sort JSON] [--mongo-uri URI] [--db NAME]
 *   bench-fill lookup --ids ID,ID,... [--no-in] [--mongo-uri URI] [--db NAME]
 *
 * fill: the documents slurm-ingest wrote for cluster NAME (a few thousand, made from a
 * gen-cluster snapshot and sacct window: realistic in shape and size) are templates;
 * copies of them, each with its own job_id (shifted by a multiple of the templates' id
 * range) and _id "<NAME>:<job_id>", are inserted with unordered bulk inserts of 1,000
 * until the cluster has N documents. Prints documents per second. With --spread-days D,
 * every date of a copy is moved by a whole number of days, so the copies spread over D days as a
 * month of a real cluster does (the usage rollups hold a day per document): copy k moves by
 * (k mod D) - D/2 days, around the templates' own days.
 *
 * explain: runs {explain: {find: "jobs", filter: F, sort: S}} and prints the reply as
 * JSON (FerretDB shows its SQLite query plan and whether the filter was pushed down).
 *
 * lookup: reads each _id with its own find ({_id: ID}), then all of them with one
 * {_id: {$in: [...]}} find (unless --no-in), and prints the wall time of each kind (what one indexed, or
 * not indexed, lookup by _id costs on this server and archive).
 *
 * The URI comes from --mongo-uri or $SLURM_TEST_MONGO_URI.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mongoc/mongoc.h>

#define CHUNK 1000

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The templates: every document of the cluster, copied (caller destroys). */
static bson_t **read_templates(mongoc_collection_t *jobs, const char *cluster, size_t *n, int64_t *lo, int64_t *hi)
{
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t err;
    bson_t **v = NULL;
    size_t cap = 0;

    *n = 0;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cur = mongoc_collection_find_with_opts(jobs, &filter, NULL, NULL);
    while (mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it;
        int64_t id;
        if (!bson_iter_init_find(&it, doc, "job_id") || !BSON_ITER_HOLDS_NUMBER(&it))
            continue;
        id = bson_iter_as_int64(&it);
        *lo = id < *lo ? id : *lo;
        *hi = id > *hi ? id : *hi;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, cap * sizeof *v);
            if (!v) {
                fprintf(stderr, "bench-fill: out of memory\n");
                exit(1);
            }
        }
        v[(*n)++] = bson_copy(doc);
    }
    if (mongoc_cursor_error(cur, &err)) {
        fprintf(stderr, "bench-fill: reading templates: %s\n", err.message);
        exit(1);
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(&filter);
    return v;
}

/* Appends the members of iterator it to out, every date moved by shift_ms (documents and arrays followed). */
static void copy_shifted(bson_iter_t *it, bson_t *out, int64_t shift_ms)
{
    while (bson_iter_next(it)) {
        const char *k = bson_iter_key(it);
        bson_iter_t sub;
        bson_t child;
        if (BSON_ITER_HOLDS_DATE_TIME(it)) {
            BSON_APPEND_DATE_TIME(out, k, bson_iter_date_time(it) + shift_ms);
        } else if (BSON_ITER_HOLDS_DOCUMENT(it) && bson_iter_recurse(it, &sub)) {
            BSON_APPEND_DOCUMENT_BEGIN(out, k, &child);
            copy_shifted(&sub, &child, shift_ms);
            bson_append_document_end(out, &child);
        } else if (BSON_ITER_HOLDS_ARRAY(it) && bson_iter_recurse(it, &sub)) {
            BSON_APPEND_ARRAY_BEGIN(out, k, &child);
            copy_shifted(&sub, &child, shift_ms);
            bson_append_array_end(out, &child);
        } else {
            bson_append_iter(out, k, -1, it);
        }
    }
}

/* Copies tpl with job_id and _id replaced, and every date moved by shift_days. */
static void make_copy(const bson_t *tpl, const char *cluster, int64_t job_id, int64_t shift_days, bson_t *out)
{
    char id[256];
    bson_iter_t it;
    snprintf(id, sizeof id, "%s:%lld", cluster, (long long)job_id);
    bson_init(out);
    BSON_APPEND_UTF8(out, "_id", id);
    BSON_APPEND_INT64(out, "job_id", job_id);
    if (!shift_days) {
        bson_copy_to_excluding_noinit(tpl, out, "_id", "job_id", NULL);
        return;
    }
    bson_iter_init(&it, tpl);
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        bson_iter_t one;
        bson_t single = BSON_INITIALIZER;
        if (strcmp(k, "_id") == 0 || strcmp(k, "job_id") == 0)
            continue;
        /* one member at a time through a one-member document, so the recursion is the same at every level */
        bson_append_iter(&single, k, -1, &it);
        bson_iter_init(&one, &single);
        copy_shifted(&one, out, shift_days * 86400000);
        bson_destroy(&single);
    }
}

static int cmd_fill(mongoc_collection_t *jobs, const char *cluster, long long total, int spread_days)
{
    size_t n;
    int64_t lo, hi, span;
    bson_t **tpl = read_templates(jobs, cluster, &n, &lo, &hi);
    long long have = (long long)n, added = 0;
    double t0 = wall_now();

    if (n == 0) {
        fprintf(stderr, "bench-fill: cluster %s has no documents to copy (ingest a snapshot for it first)\n",
                cluster);
        return 1;
    }
    span = ((hi - lo) / 100000 + 1) * 100000;
    for (long long k = 1; have < total; k++) {
        for (size_t off = 0; off < n && have < total; off += CHUNK) {
            bson_t opts = BSON_INITIALIZER, reply;
            bson_error_t err;
            mongoc_bulk_operation_t *bulk;
            BSON_APPEND_BOOL(&opts, "ordered", false);
            bulk = mongoc_collection_create_bulk_operation_with_opts(jobs, &opts);
            bson_destroy(&opts);
            for (size_t i = off; i < off + CHUNK && i < n && have < total; i++, have++, added++) {
                bson_t copy;
                bson_iter_t it;
                int64_t id = bson_iter_init_find(&it, tpl[i], "job_id") ? bson_iter_as_int64(&it) : 0;
                make_copy(tpl[i], cluster, id + k * span, spread_days > 1 ? k % spread_days - spread_days / 2 : 0,
                          &copy);
                mongoc_bulk_operation_insert_with_opts(bulk, &copy, NULL, NULL);
                bson_destroy(&copy);
            }
            if (!mongoc_bulk_operation_execute(bulk, &reply, &err)) {
                fprintf(stderr, "bench-fill: insert: %s\n", err.message);
                return 1;
            }
            bson_destroy(&reply);
            mongoc_bulk_operation_destroy(bulk);
        }
        fprintf(stderr, "\rbench-fill: %lld/%lld documents", have, total);
    }
    fprintf(stderr, "\n");
    {
        double s = wall_now() - t0;
        printf("fill: %zu templates of cluster %s, %lld copies inserted in %.1f s (%.0f documents/s)\n", n, cluster,
               added, s, s > 0 ? (double)added / s : 0.0);
    }
    for (size_t i = 0; i < n; i++)
        bson_destroy(tpl[i]);
    free(tpl);
    return 0;
}

static int cmd_explain(mongoc_database_t *db, const char *filter_json, const char *sort_json)
{
    bson_t cmd = BSON_INITIALIZER, inner, filter, sort, reply;
    bson_error_t err;
    char *text;
    int rc = 0;

    if (!bson_init_from_json(&filter, filter_json, -1, &err)) {
        fprintf(stderr, "bench-fill: --filter: %s\n", err.message);
        return 2;
    }
    BSON_APPEND_DOCUMENT_BEGIN(&cmd, "explain", &inner);
    BSON_APPEND_UTF8(&inner, "find", "jobs");
    BSON_APPEND_DOCUMENT(&inner, "filter", &filter);
    if (sort_json) {
        if (!bson_init_from_json(&sort, sort_json, -1, &err)) {
            fprintf(stderr, "bench-fill: --sort: %s\n", err.message);
            return 2;
        }
        BSON_APPEND_DOCUMENT(&inner, "sort", &sort);
        bson_destroy(&sort);
    }
    bson_append_document_end(&cmd, &inner);
    if (!mongoc_database_command_simple(db, &cmd, NULL, &reply, &err)) {
        fprintf(stderr, "bench-fill: explain: %s\n", err.message);
        rc = 1;
    } else {
        text = bson_as_relaxed_extended_json(&reply, NULL);
        printf("%s\n", text);
        bson_free(text);
    }
    bson_destroy(&reply);
    bson_destroy(&filter);
    bson_destroy(&cmd);
    return rc;
}

/* Reads the documents of ids one find at a time, then with one $in find; prints the times. */
static int cmd_lookup(mongoc_collection_t *jobs, const char *ids_csv, bool with_in)
{
    char *list = strdup(ids_csv), *save = NULL;
    bson_t in_filter = BSON_INITIALIZER, doc_in, arr;
    size_t n = 0, found = 0, found_in = 0;
    double t0, single = 0, worst = 0;
    bson_error_t err;

    BSON_APPEND_DOCUMENT_BEGIN(&in_filter, "_id", &doc_in);
    BSON_APPEND_ARRAY_BEGIN(&doc_in, "$in", &arr);
    for (char *id = strtok_r(list, ",", &save); id; id = strtok_r(NULL, ",", &save), n++) {
        bson_t filter = BSON_INITIALIZER;
        mongoc_cursor_t *cur;
        const bson_t *doc;
        char key[16];
        const char *k;
        double t;
        bson_uint32_to_string((uint32_t)n, &k, key, sizeof key);
        BSON_APPEND_UTF8(&arr, k, id);
        BSON_APPEND_UTF8(&filter, "_id", id);
        t0 = wall_now();
        cur = mongoc_collection_find_with_opts(jobs, &filter, NULL, NULL);
        while (mongoc_cursor_next(cur, &doc))
            found++;
        if (mongoc_cursor_error(cur, &err)) {
            fprintf(stderr, "bench-fill: find: %s\n", err.message);
            return 1;
        }
        mongoc_cursor_destroy(cur);
        t = wall_now() - t0;
        single += t;
        worst = t > worst ? t : worst;
        bson_destroy(&filter);
    }
    bson_append_array_end(&doc_in, &arr);
    bson_append_document_end(&in_filter, &doc_in);
    if (!with_in) {
        printf("lookup: %zu finds {_id: ID}: %.1f ms each on average (worst %.1f ms), %zu found\n", n,
               n ? 1e3 * single / (double)n : 0.0, 1e3 * worst, found);
    } else {
        mongoc_cursor_t *cur;
        const bson_t *doc;
        double t;
        t0 = wall_now();
        cur = mongoc_collection_find_with_opts(jobs, &in_filter, NULL, NULL);
        while (mongoc_cursor_next(cur, &doc))
            found_in++;
        t = wall_now() - t0;
        mongoc_cursor_destroy(cur);
        printf("lookup: %zu finds {_id: ID}: %.1f ms each on average (worst %.1f ms), %zu found; "
               "one {_id: {$in: [%zu ids]}}: %.1f ms, %zu found\n",
               n, n ? 1e3 * single / (double)n : 0.0, 1e3 * worst, found, n, 1e3 * t, found_in);
    }
    bson_destroy(&in_filter);
    free(list);
    return 0;
}

/*
 * drop-every: deletes every Nth job document of cluster (in the order the server returns), as a hand that
 * deletes documents would (slurm-ingest audit's benchmark). Prints how many; 0 or 1.
 */
static int cmd_drop_every(mongoc_collection_t *jobs, const char *cluster, long long every)
{
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster));
    bson_t *opts = BCON_NEW("projection", "{", "_id", BCON_INT32(1), "}"); /* unsorted: FerretDB streams it */
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(jobs, filter, opts, NULL);
    const bson_t *doc;
    bson_t ids = BSON_INITIALIZER;
    bson_error_t err;
    long long n = 0, dropped = 0;
    char key[24];
    int rc = 0;

    while (mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it;
        if (n++ % every == 0 && bson_iter_init_find(&it, doc, "_id")) {
            snprintf(key, sizeof key, "%lld", dropped++);
            bson_append_value(&ids, key, -1, bson_iter_value(&it));
        }
    }
    if (mongoc_cursor_error(cur, &err)) {
        fprintf(stderr, "bench-fill: %s\n", err.message);
        rc = 1;
    } else if (dropped) {
        bson_t *del = bson_new();
        bson_t in;
        BSON_APPEND_DOCUMENT_BEGIN(del, "_id", &in);
        bson_append_array(&in, "$in", -1, &ids);
        bson_append_document_end(del, &in);
        if (!mongoc_collection_delete_many(jobs, del, NULL, NULL, &err)) {
            fprintf(stderr, "bench-fill: %s\n", err.message);
            rc = 1;
        }
        bson_destroy(del);
    }
    if (!rc)
        printf("deleted %lld of %lld job documents of %s\n", dropped, n, cluster);
    bson_destroy(&ids);
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    bson_destroy(opts);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mongo-uri", required_argument, NULL, 'u'}, {"db", required_argument, NULL, 'd'},
        {"cluster", required_argument, NULL, 'c'},   {"total", required_argument, NULL, 'n'},
        {"filter", required_argument, NULL, 'f'},    {"sort", required_argument, NULL, 's'},
        {"ids", required_argument, NULL, 'i'},        {"no-in", no_argument, NULL, 'I'},
        {"spread-days", required_argument, NULL, 'D'},  {"every", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
    };
    const char *uri = getenv("SLURM_TEST_MONGO_URI"), *dbname = "slurm", *cluster = "filler", *filter = NULL,
               *sort = NULL, *ids = NULL, *cmd;
    long long total = 0;
    int spread_days = 0;
    long long every = 0;
    mongoc_client_t *client;
    mongoc_database_t *db;
    mongoc_collection_t *jobs;
    int c, rc;
    bool with_in = true;

    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'u': uri = optarg; break;
        case 'd': dbname = optarg; break;
        case 'c': cluster = optarg; break;
        case 'n': total = atoll(optarg); break;
        case 'f': filter = optarg; break;
        case 's': sort = optarg; break;
        case 'i': ids = optarg; break;
        case 'I': with_in = false; break;
        case 'D': spread_days = atoi(optarg); break;
        case 'e': every = atoll(optarg); break;
        default:
            fputs("usage: bench-fill fill --cluster NAME --total N [--spread-days D] [--mongo-uri URI] [--db NAME]\n"
                  "       bench-fill explain --filter JSON [--sort JSON] [--mongo-uri URI] [--db NAME]\n"
                  "       bench-fill lookup --ids ID,ID,... [--no-in] [--mongo-uri URI] [--db NAME]\n"
                  "       bench-fill drop-every --cluster NAME --every N [--mongo-uri URI] [--db NAME]\n",
                  c == 'h' ? stdout : stderr);
            return c == 'h' ? 0 : 2;
        }
    }
    cmd = optind < argc ? argv[optind] : "";
    if (!uri ||
        (strcmp(cmd, "fill") != 0 && strcmp(cmd, "explain") != 0 && strcmp(cmd, "lookup") != 0 &&
         strcmp(cmd, "drop-every") != 0) ||
        (strcmp(cmd, "explain") == 0 && !filter) || (strcmp(cmd, "lookup") == 0 && !ids) ||
        (strcmp(cmd, "drop-every") == 0 && every < 1)) {
        fprintf(stderr, "bench-fill: need fill, explain --filter or lookup --ids, and --mongo-uri or "
                        "SLURM_TEST_MONGO_URI\n");
        return 2;
    }
    mongoc_init();
    mongoc_log_set_handler(NULL, NULL); /* FerretDB lacks endSessions: the driver's warning is noise here */
    client = mongoc_client_new(uri);
    if (!client) {
        fprintf(stderr, "bench-fill: invalid MongoDB URI\n");
        return 2;
    }
    mongoc_client_set_appname(client, "bench-fill");
    db = mongoc_client_get_database(client, dbname);
    jobs = mongoc_database_get_collection(db, "jobs");
    if (strcmp(cmd, "fill") == 0)
        rc = cmd_fill(jobs, cluster, total, spread_days);
    else if (strcmp(cmd, "lookup") == 0)
        rc = cmd_lookup(jobs, ids, with_in);
    else if (strcmp(cmd, "drop-every") == 0)
        rc = cmd_drop_every(jobs, cluster, every);
    else
        rc = cmd_explain(db, filter, sort);
    mongoc_collection_destroy(jobs);
    mongoc_database_destroy(db);
    mongoc_client_destroy(client);
    mongoc_cleanup();
    return rc;
}
