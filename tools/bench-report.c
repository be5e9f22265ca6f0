/*
 * bench-report.c - the CPU time slurm-report's usage report spends over N job
 * documents (default 1,000,000) for one month.
 *
 *   bench-report [--mongo-uri URI] [--db NAME] [--jobs N] [--span-days D] [--skip-insert] [--repeat R]
 *                [--report usage|efficiency]
 *
 * 1. Unless --skip-insert: drops the database NAME (default bench_report) and inserts
 *    N documents in the shape of schema/jobdoc/job.schema.json (what slurm-ingest writes:
 *    runs with gpus_by_type, history, seen, alloc/req TRES, ...), with unordered bulk
 *    inserts of 5,000 documents, directly (not through the merge code: that would
 *    measure the ingester). The jobs start within D days (default 30: every document
 *    falls in the month reported - the worst case) before 2026-10-01; 70% use GPUs
 *    (a100, h100, MIG, 5% untyped), 5% were requeued (two runs), 3% still run, 2%
 *    pend, 1% have a reused id (a copy in jobs_superseded).
 *    Ended runs carry a usage object (TotalCPU, MaxRSS; 80% of GPU runs a GPU utilisation).
 * 2. Runs the usage report (or --report efficiency) for 2026-09 (JSON to /dev/null) R times (default 3) and
 *    prints the report's own CPU time (getrusage: user + system of this process,
 *    which includes libmongoc reading and decoding the replies but not the server),
 *    and the wall time (which includes the server's time); the best of R.
 * 3. Runs the same find with the same filter and projection, iterating the
 *    documents without looking at them: the driver's share of the CPU time.
 *
 * The URI comes from --mongo-uri, $SLURM_TEST_MONGO_URI or $SLURM_REPORT_MONGO_URI.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mongoc/mongoc.h>

#include "sa_mongo.h"
#include "sa_report.h"
#include "sa_rutil.h"

#define T_END 1790812800LL /* 2026-10-01T00:00:00Z */
#define BATCH 5000

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A small deterministic PRNG (xorshift64*). */
static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

static void append_tres(bson_t *doc, const char *key, int64_t cpus, int64_t gpus, const char *type)
{
    bson_t t, arr, g;
    BSON_APPEND_DOCUMENT_BEGIN(doc, key, &t);
    BSON_APPEND_INT64(&t, "cpus", cpus);
    BSON_APPEND_INT64(&t, "mem_mb", cpus * 4096);
    BSON_APPEND_INT64(&t, "nodes", 1);
    BSON_APPEND_DOUBLE(&t, "billing", (double)cpus);
    BSON_APPEND_INT64(&t, "gpus", gpus);
    if (gpus) {
        BSON_APPEND_ARRAY_BEGIN(&t, "gpus_by_type", &arr);
        BSON_APPEND_DOCUMENT_BEGIN(&arr, "0", &g);
        BSON_APPEND_UTF8(&g, "type", type);
        BSON_APPEND_INT64(&g, "count", gpus);
        bson_append_document_end(&arr, &g);
        bson_append_array_end(&t, &arr);
    }
    bson_append_document_end(doc, &t);
}

static void append_run(bson_t *runs, const char *key, int64_t start, int64_t end, int64_t cpus, int64_t gpus,
                       const char *type, const char *nodes, const char *state)
{
    bson_t r, arr, g;
    BSON_APPEND_DOCUMENT_BEGIN(runs, key, &r);
    BSON_APPEND_DATE_TIME(&r, "start", start * 1000);
    if (end)
        BSON_APPEND_DATE_TIME(&r, "end", end * 1000);
    BSON_APPEND_DATE_TIME(&r, "submit", (start - 600) * 1000);
    BSON_APPEND_UTF8(&r, "state", state);
    BSON_APPEND_UTF8(&r, "nodes", nodes);
    BSON_APPEND_INT64(&r, "node_count", 1);
    BSON_APPEND_INT64(&r, "cpus", cpus);
    BSON_APPEND_INT64(&r, "mem_mb", cpus * 4096);
    BSON_APPEND_INT64(&r, "gpus", gpus);
    if (gpus) {
        BSON_APPEND_ARRAY_BEGIN(&r, "gpus_by_type", &arr);
        BSON_APPEND_DOCUMENT_BEGIN(&arr, "0", &g);
        BSON_APPEND_UTF8(&g, "type", type);
        BSON_APPEND_INT64(&g, "count", gpus);
        bson_append_document_end(&arr, &g);
        bson_append_array_end(&r, &arr);
    }
    if (end) {
        bson_t u;
        uint64_t x = ((uint64_t)start * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)cpus << 17); /* not rnd(): the documents stay those of before */
        BSON_APPEND_INT64(&r, "elapsed_s", end - start);
        BSON_APPEND_DOCUMENT_BEGIN(&r, "usage", &u); /* what sacct's usage fields give (issue 13) */
        BSON_APPEND_DOUBLE(&u, "cpu_s", (double)((end - start) * cpus) * (double)(x % 1000) / 1000.0);
        BSON_APPEND_INT64(&u, "max_rss_bytes", (int64_t)((x >> 10) % 4096) * cpus * 1048576);
        if (gpus && (x >> 30) % 10 < 8)
            BSON_APPEND_DOUBLE(&u, "gpu_util_pct", (double)((x >> 34) % 101));
        bson_append_document_end(&r, &u);
    }
    BSON_APPEND_UTF8(&r, "source", "sacct-json");
    bson_append_document_end(runs, &r);
}

static void append_hist(bson_t *h, const char *key, const char *state, int64_t at)
{
    bson_t e;
    BSON_APPEND_DOCUMENT_BEGIN(h, key, &e);
    BSON_APPEND_UTF8(&e, "state", state);
    BSON_APPEND_DATE_TIME(&e, "at", at * 1000);
    BSON_APPEND_UTF8(&e, "source", "sacct-json");
    bson_append_document_end(h, &e);
}

/* One job document in the archive's shape. */
static void make_job(bson_t *doc, int64_t id, int64_t span_s)
{
    static const char *const types[] = {"a100", "a100", "h100", "nvidia_h100_80gb_hbm3", "a100_3g.20gb", ""};
    static const int64_t counts[] = {1, 1, 2, 4, 8};
    char acct[16], user[16], nodes[32], name[32];
    uint64_t r = rnd();
    int kind = (int)(r % 100);
    bool gpu = kind < 70, requeued = kind >= 70 && kind < 75, running = kind >= 75 && kind < 78,
         pending = kind >= 78 && kind < 80;
    int64_t gpus = gpu || requeued || running ? counts[(r >> 8) % 5] : 0;
    const char *type = types[(r >> 16) % 6];
    int64_t dur = 600 + (int64_t)((r >> 24) % (2 * 86400));
    int64_t start = T_END - span_s + (int64_t)((r >> 40) % (uint64_t)span_s), end = start + dur;
    int64_t cpus = 4 + (int64_t)((r >> 32) % 28);
    const char *state = pending ? "PENDING" : running ? "RUNNING" : "COMPLETED";
    bson_t runs, hist, seen;

    if (running)
        end = 0;
    /* 1999 users, each in one of 211 accounts */
    snprintf(user, sizeof user, "user%04d", (int)(id % 1999));
    snprintf(acct, sizeof acct, "acct%03d", (int)(id % 1999 % 211));
    snprintf(nodes, sizeof nodes, gpus ? "gpu[%03d-%03d]" : "cpu%04d", (int)(r % 500), (int)(r % 500) + 1);
    if (!gpus)
        snprintf(nodes, sizeof nodes, "cpu%04d", (int)(r % 900));
    snprintf(name, sizeof name, "job-%lld", (long long)id);
    BSON_APPEND_UTF8(doc, "cluster", "bench");
    BSON_APPEND_INT64(doc, "job_id", id);
    BSON_APPEND_UTF8(doc, "job_id_display", name + 4);
    BSON_APPEND_UTF8(doc, "user", user);
    BSON_APPEND_INT64(doc, "user_id", 10000 + id % 1999);
    BSON_APPEND_UTF8(doc, "group", acct);
    BSON_APPEND_UTF8(doc, "account", acct);
    BSON_APPEND_UTF8(doc, "partition", gpus ? "gpu" : "cpu");
    BSON_APPEND_UTF8(doc, "qos", "normal");
    BSON_APPEND_UTF8(doc, "name", name);
    BSON_APPEND_UTF8(doc, "state", state);
    BSON_APPEND_DATE_TIME(doc, "submit", (start - 600) * 1000);
    if (!pending)
        BSON_APPEND_DATE_TIME(doc, "start", start * 1000);
    if (end && !pending)
        BSON_APPEND_DATE_TIME(doc, "end", end * 1000);
    BSON_APPEND_INT64(doc, "time_limit_min", 2880);
    if (!pending) {
        BSON_APPEND_UTF8(doc, "nodes", nodes);
        BSON_APPEND_INT64(doc, "node_count", 1);
    }
    BSON_APPEND_INT64(doc, "cpus", cpus);
    append_tres(doc, "req", cpus, gpus, type);
    append_tres(doc, "alloc", cpus, pending ? 0 : gpus, type);
    BSON_APPEND_INT64(doc, "gpus", pending ? 0 : gpus);
    BSON_APPEND_ARRAY_BEGIN(doc, "history", &hist);
    append_hist(&hist, "0", "PENDING", start - 600);
    if (!pending)
        append_hist(&hist, "1", "RUNNING", start);
    if (end && !pending)
        append_hist(&hist, "2", "COMPLETED", end);
    bson_append_array_end(doc, &hist);
    BSON_APPEND_ARRAY_BEGIN(doc, "runs", &runs);
    if (requeued) {
        append_run(&runs, "0", start - 7200, start - 3600, cpus, gpus, type, nodes, "REQUEUED");
        append_run(&runs, "1", start, end, cpus, gpus, type, nodes, "COMPLETED");
    } else if (!pending) {
        append_run(&runs, "0", start, end, cpus, gpus, type, nodes, state);
    }
    bson_append_array_end(doc, &runs);
    BSON_APPEND_DOCUMENT_BEGIN(doc, "seen", &seen);
    BSON_APPEND_DATE_TIME(&seen, "first", (start - 600) * 1000);
    BSON_APPEND_DATE_TIME(&seen, "last", (end ? end : T_END) * 1000);
    bson_append_document_end(doc, &seen);
}

static bool insert_all(mongoc_database_t *db, int64_t n, int64_t span_s)
{
    mongoc_collection_t *jobs = mongoc_database_get_collection(db, "jobs"),
                        *sup = mongoc_database_get_collection(db, "jobs_superseded"),
                        *cl = mongoc_database_get_collection(db, "clusters");
    bson_error_t berr;
    bson_t *cdoc;
    double t0 = wall_now();
    bool ok = true;

    mongoc_database_drop(db, NULL);
    cdoc = BCON_NEW("_id", BCON_UTF8("bench"), "last_squeue_at", BCON_DATE_TIME(T_END * 1000 - 300000),
                    "last_sacct_at", BCON_DATE_TIME(T_END * 1000 - 300000));
    ok = mongoc_collection_insert_one(cl, cdoc, NULL, NULL, &berr);
    bson_destroy(cdoc);
    for (int64_t off = 0; ok && off < n; off += BATCH) {
        bson_t *opts = BCON_NEW("ordered", BCON_BOOL(false));
        mongoc_bulk_operation_t *b = mongoc_collection_create_bulk_operation_with_opts(jobs, opts),
                                *bs = mongoc_collection_create_bulk_operation_with_opts(sup, opts);
        size_t nsup = 0;
        for (int64_t i = off; i < off + BATCH && i < n; i++) {
            bson_t doc = BSON_INITIALIZER;
            make_job(&doc, i + 1, span_s);
            mongoc_bulk_operation_insert(b, &doc);
            if (i % 100 == 7) { /* a reused id: the earlier job's copy */
                mongoc_bulk_operation_insert(bs, &doc);
                nsup++;
            }
            bson_destroy(&doc);
        }
        ok = mongoc_bulk_operation_execute(b, NULL, &berr) != 0 &&
             (nsup == 0 || mongoc_bulk_operation_execute(bs, NULL, &berr) != 0);
        mongoc_bulk_operation_destroy(b);
        mongoc_bulk_operation_destroy(bs);
        bson_destroy(opts);
        if ((off / BATCH) % 20 == 19) {
            fprintf(stderr, "bench-report: %lld documents inserted (%.0f/s)\n", (long long)(off + BATCH),
                    (double)(off + BATCH) / (wall_now() - t0));
        }
    }
    if (!ok)
        fprintf(stderr, "bench-report: insert: %s\n", berr.message);
    else
        fprintf(stderr, "bench-report: inserted %lld documents in %.1f s\n", (long long)n, wall_now() - t0);
    mongoc_collection_destroy(jobs);
    mongoc_collection_destroy(sup);
    mongoc_collection_destroy(cl);
    return ok;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mongo-uri", required_argument, NULL, 'U'}, {"db", required_argument, NULL, 'd'},
        {"jobs", required_argument, NULL, 'j'},      {"span-days", required_argument, NULL, 's'},
        {"skip-insert", no_argument, NULL, 'k'},     {"repeat", required_argument, NULL, 'r'},
        {"report", required_argument, NULL, 'R'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *uri = getenv("SLURM_TEST_MONGO_URI"), *dbname = "bench_report";
    int64_t n = 1000000, span_days = 30;
    int repeat = 3, c;
    bool skip = false, eff = false;
    mongoc_client_t *client;
    mongoc_database_t *db;
    double best_cpu = 1e9, best_wall = 1e9;

    if (!uri || !*uri)
        uri = getenv("SLURM_REPORT_MONGO_URI");
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'U': uri = optarg; break;
        case 'd': dbname = optarg; break;
        case 'j': n = strtoll(optarg, NULL, 10); break;
        case 's': span_days = strtoll(optarg, NULL, 10); break;
        case 'k': skip = true; break;
        case 'r': repeat = atoi(optarg); break;
        case 'R': eff = strcmp(optarg, "efficiency") == 0; break;
        default:
            fputs("usage: bench-report [--mongo-uri URI] [--db NAME] [--jobs N] [--span-days D] [--skip-insert] "
                  "[--repeat R] [--report usage|efficiency]\n",
                  c == 'h' ? stdout : stderr);
            return c == 'h' ? 0 : 2;
        }
    }
    if (!uri || n <= 0 || span_days <= 0 || repeat <= 0) {
        fputs("bench-report: give --mongo-uri (or set SLURM_TEST_MONGO_URI), --jobs > 0, --span-days > 0\n", stderr);
        return 2;
    }
    sa_mongo_init();
    client = mongoc_client_new(uri);
    if (!client) {
        fputs("bench-report: bad MongoDB URI\n", stderr);
        return 2;
    }
    db = mongoc_client_get_database(client, dbname);
    if (!skip && !insert_all(db, n, span_days * 86400)) {
        mongoc_database_destroy(db);
        mongoc_client_destroy(client);
        return 1;
    }

    for (int i = 0; i < repeat; i++) {
        sa_report_opts_t o;
        sa_error_t err;
        FILE *devnull = fopen("/dev/null", "w");
        double c0, w0, cpu, wall;
        bool ok;
        sa_report_opts_init(&o);
        o.mongo_uri = uri;
        o.db_name = dbname;
        o.sqlite_path = NULL;
        o.sqlite_dir = "/nonexistent"; /* untyped GPUs: no series, type unknown */
        o.now = T_END;
        o.format = SA_FMT_JSON;
        o.by = SA_BY_ACCOUNT | SA_BY_USER | SA_BY_GPU_TYPE;
        sa_rmonth_parse("2026-09", &o.start, &o.end);
        c0 = cpu_now();
        w0 = wall_now();
        ok = eff ? sa_report_efficiency(&o, devnull, stderr, &err) : sa_report_usage(&o, devnull, stderr, &err);
        cpu = cpu_now() - c0;
        wall = wall_now() - w0;
        fclose(devnull);
        sa_report_opts_clear(&o);
        if (!ok) {
            fprintf(stderr, "bench-report: report failed: %s\n", err.message);
            return 1;
        }
        printf("run %d: %s report for 2026-09 over %lld job documents: CPU %.3f s, wall %.3f s\n", i + 1,
               eff ? "efficiency" : "usage", (long long)n, cpu, wall);
        if (cpu < best_cpu)
            best_cpu = cpu;
        if (wall < best_wall)
            best_wall = wall;
    }
    /* the driver's share: the same find, documents not looked at */
    {
        mongoc_collection_t *jobs = mongoc_database_get_collection(db, "jobs");
        bson_t *filter = BCON_NEW("cluster", BCON_UTF8("bench"), "runs.start", "{", "$lt",
                                  BCON_DATE_TIME(T_END * 1000), "}", "runs.gpus", "{", "$gt", BCON_INT32(0), "}");
        bson_t *opts = BCON_NEW("projection", "{", "cluster", BCON_INT32(1), "account", BCON_INT32(1), "user",
                                BCON_INT32(1), "state", BCON_INT32(1), "end", BCON_INT32(1), "vanished_at",
                                BCON_INT32(1), "runs.start", BCON_INT32(1), "runs.end", BCON_INT32(1), "runs.gpus",
                                BCON_INT32(1), "runs.gpus_by_type", BCON_INT32(1), "runs.nodes", BCON_INT32(1), "}",
                                "batchSize", BCON_INT32(10000));
        mongoc_cursor_t *cur;
        const bson_t *d;
        size_t docs = 0;
        double c0 = cpu_now(), w0 = wall_now();
        cur = mongoc_collection_find_with_opts(jobs, filter, opts, NULL);
        while (mongoc_cursor_next(cur, &d))
            docs++;
        printf("driver only (same find on jobs, documents not read): %zu documents, CPU %.3f s, wall %.3f s\n", docs,
               cpu_now() - c0, wall_now() - w0);
        mongoc_cursor_destroy(cur);
        bson_destroy(filter);
        bson_destroy(opts);
        mongoc_collection_destroy(jobs);
    }
    printf("best of %d: report CPU %.3f s (%.3f us per document), wall %.3f s\n", repeat, best_cpu,
           best_cpu * 1e6 / (double)n, best_wall);
    mongoc_database_destroy(db);
    mongoc_client_destroy(client);
    mongoc_cleanup();
    return 0;
}
