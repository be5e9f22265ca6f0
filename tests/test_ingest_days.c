/*
 * test_ingest_days.c - the run log, the ingest runs by hour (schema/rollup/sa_runlog.h,
 * ingest/rollup/sa_runlog_writer.c) and the clusters document's first_submit, against the
 * test server: an archive whose ingest_runs an older slurm-ingest wrote (no log) gets its
 * hours at the first run of this version, and one whose log is by day (version 1) loses its
 * days for hours; every run after that adds its entry; the hours equal what ingest_runs
 * says, `slurm-ingest rollup` agrees, finds (exit 9, named) a damaged, missing or extra
 * hour and a wrong first_submit, and --rebuild mends them; a duplicated entry is one run to
 * every reader; health's failed runs, the site's ingest table and the metrics of the last
 * runs are the same read from the log as from ingest_runs, and say what was recorded;
 * first_submit is the earliest submit of the job documents. 150 runs a minute apart are 3
 * documents of at most 60 entries: a run's write does not grow with the runs before it
 * (issue 31, item 6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <mongoc/mongoc.h>

#include "sa_archive.h"
#include "sa_runlog.h"
#include "testutil.h"
#include "tu_archive.h"

/* 2026-10-03T00:00:00Z */
#define D3 1790985600LL
#define H 3600LL

/* The runs an older slurm-ingest recorded (ObjectId _ids, no ingest_days). */
static const struct {
    int64_t started;
    bool ok;
    const char *error;
} old_runs[] = {
    {D3 - 13 * 86400 + 5 * H, false, "sacct: a failure before the window"}, /* 2026-09-20 */
    {D3 + 10 * H, true, NULL},                                             /* 2026-10-03 */
    {D3 + 86400 + 23 * H + 3599, false, "MongoDB at db1:27017: boom"},     /* 2026-10-04 23:59:59 */
    {D3 + 2 * 86400, true, NULL},                                          /* 2026-10-05 00:00:00 */
};

static int run_ingest(const char *uri, const char *db, const char *dir, const char *const *extra, char **err_out)
{
    return tu_run_ingest(SA_INGEST_BIN, uri, db, dir, "demo", extra, err_out);
}

/* Runs slurm-report args... --db db --sqlite sqlite; its stdout (caller frees). */
static char *run_report(const char *uri, const char *db, const char *sqlite, const char *const *args)
{
    char env_uri[600];
    char *argv[40], *out = NULL, *err = NULL;
    char *env[] = {env_uri, NULL};
    int n = 0, rc;

    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    argv[n++] = (char *)SA_REPORT_BIN;
    for (const char *const *a = args; *a; a++)
        argv[n++] = (char *)*a;
    argv[n++] = "--db";
    argv[n++] = (char *)db;
    argv[n++] = "--sqlite";
    argv[n++] = (char *)sqlite;
    argv[n] = NULL;
    rc = tu_run(argv, env, &out, &err);
    if (rc != 0 && rc != 9) /* 9: health found the archive unhealthy (the failed runs) */
        fail_msg("slurm-report %s exited %d: %s", args[0], rc, err ? err : "");
    free(err);
    return out;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    int ch;

    if (!f)
        fail_msg("cannot read %s", path);
    while ((ch = fgetc(f)) != EOF)
        fputc(ch, m);
    fclose(f);
    fclose(m);
    return s;
}

static void insert_old_runs(mongoc_client_t *client, const char *db)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "ingest_runs");
    bson_error_t berr;

    for (size_t i = 0; i < sizeof old_runs / sizeof old_runs[0]; i++) {
        bson_t *d = BCON_NEW("cluster", BCON_UTF8("demo"), "host", BCON_UTF8("old"), "version", BCON_UTF8("0.1.9"),
                             "started_at", BCON_DATE_TIME(old_runs[i].started * 1000), "finished_at",
                             BCON_DATE_TIME((old_runs[i].started + 42) * 1000), "ok", BCON_BOOL(old_runs[i].ok),
                             "phases_ms", "{", "exec", BCON_DOUBLE(100.5 + (double)i), "parse", BCON_DOUBLE(7.25),
                             "sqlite", BCON_DOUBLE(3), "mongo", BCON_DOUBLE(20), "}", "counts", "{",
                             "squeue_records", BCON_INT64(10 + (int64_t)i), "sacct_records", BCON_INT64(5),
                             "jobs_inserted", BCON_INT64(2), "jobs_changed", BCON_INT64(1), "write_statements",
                             BCON_INT64(3), "docs_read", BCON_INT64(4), "records_set_aside", BCON_INT64(0),
                             "inputs_rejected", BCON_INT64(0), "nodes", BCON_INT64(8), "}");
        if (old_runs[i].error)
            BSON_APPEND_UTF8(d, "error", old_runs[i].error);
        if (!mongoc_collection_insert_one(c, d, NULL, NULL, &berr)) /* an ObjectId _id, as libmongoc adds */
            fail_msg("insert: %s", berr.message);
        bson_destroy(d);
    }
    mongoc_collection_destroy(c);
}

/* Whether members k of a and b are there alike (both absent, or equal values). */
static bool same_member(const bson_t *a, const bson_t *b, const char *k)
{
    bson_iter_t x, y;
    bool hx = bson_iter_init(&x, a) && bson_iter_find_descendant(&x, k, &x);
    bool hy = bson_iter_init(&y, b) && bson_iter_find_descendant(&y, k, &y);
    const bson_value_t *vx, *vy;

    if (!hx || !hy)
        return hx == hy;
    vx = bson_iter_value(&x);
    vy = bson_iter_value(&y);
    if (BSON_ITER_HOLDS_NUMBER(&x) && BSON_ITER_HOLDS_NUMBER(&y))
        return bson_iter_as_double(&x) == bson_iter_as_double(&y);
    if (vx->value_type != vy->value_type)
        return false;
    switch (vx->value_type) {
    case BSON_TYPE_UTF8: return strcmp(vx->value.v_utf8.str, vy->value.v_utf8.str) == 0;
    case BSON_TYPE_DATE_TIME: return vx->value.v_datetime == vy->value.v_datetime;
    case BSON_TYPE_BOOL: return vx->value.v_bool == vy->value.v_bool;
    default: return false;
    }
}

/*
 * Every ingest_runs document of demo has one entry, with its members, in the ingest_days
 * document of its day, and the days hold no other entry (dup: entries beyond one per run
 * allowed). Returns the number of runs.
 */
static size_t check_days_equal_runs(mongoc_client_t *client, const char *db, bool dup)
{
    static const char *const members[] = {"started_at", "finished_at", "ok", "error", "phases_ms.exec",
                                          "phases_ms.parse", "phases_ms.sqlite", "phases_ms.mongo",
                                          "counts.squeue_records", "counts.sacct_records", "counts.jobs_inserted",
                                          "counts.jobs_changed", "counts.write_statements", "counts.docs_read",
                                          "counts.records_set_aside", "counts.inputs_rejected"};
    mongoc_collection_t *runs = mongoc_client_get_collection(client, db, "ingest_runs");
    mongoc_collection_t *days = mongoc_client_get_collection(client, db, SA_RUNLOG_COLL);
    bson_t *f = BCON_NEW("cluster", BCON_UTF8("demo"));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(runs, f, NULL, NULL);
    const bson_t *run, *day;
    size_t n = 0, entries = 0;

    while (mongoc_cursor_next(cur, &run)) {
        bson_iter_t it, arr;
        char hex[25], *id;
        int64_t started = 0;
        bson_t *df;
        mongoc_cursor_t *dc;
        size_t found = 0;

        assert_true(bson_iter_init_find(&it, run, "_id") && BSON_ITER_HOLDS_OID(&it));
        bson_oid_to_string(bson_iter_oid(&it), hex);
        assert_true(bson_iter_init_find(&it, run, "started_at"));
        started = bson_iter_date_time(&it) / 1000;
        id = sa_runlog_id("demo", started);
        df = BCON_NEW("_id", BCON_UTF8(id));
        dc = mongoc_collection_find_with_opts(days, df, NULL, NULL);
        if (!mongoc_cursor_next(dc, &day))
            fail_msg("ingest_days %s: missing (run %s)", id, hex);
        assert_true(bson_iter_init_find(&it, day, "runs") && bson_iter_recurse(&it, &arr));
        while (bson_iter_next(&arr)) {
            const uint8_t *data;
            uint32_t len;
            bson_t e;
            int64_t t;
            bson_iter_document(&arr, &len, &data);
            assert_true(bson_init_static(&e, data, len));
            if (strcmp(sa_runlog_entry_key(&e, &t), hex) != 0)
                continue;
            found++;
            for (size_t k = 0; k < sizeof members / sizeof members[0]; k++) {
                if (!same_member(run, &e, members[k]))
                    fail_msg("ingest_days %s, run %s: %s differs from ingest_runs", id, hex, members[k]);
            }
        }
        if (found != 1 && !(dup && found > 1))
            fail_msg("ingest_days %s: run %s is there %zu times", id, hex, found);
        mongoc_cursor_destroy(dc);
        bson_destroy(df);
        free(id);
        n++;
    }
    mongoc_cursor_destroy(cur);
    /* and nothing else */
    cur = mongoc_collection_find_with_opts(days, f, NULL, NULL);
    while (mongoc_cursor_next(cur, &day)) {
        bson_iter_t it, arr;
        assert_true(bson_iter_init_find(&it, day, "runs") && bson_iter_recurse(&it, &arr));
        while (bson_iter_next(&arr))
            entries++;
    }
    mongoc_cursor_destroy(cur);
    if (dup ? entries < n : entries != n)
        fail_msg("ingest_days hold %zu entries for %zu ingest runs", entries, n);
    bson_destroy(f);
    mongoc_collection_destroy(runs);
    mongoc_collection_destroy(days);
    return n;
}

/* The earliest submit of demo's job documents (jobs and jobs_superseded), by reading them all. */
static int64_t earliest_submit(mongoc_client_t *client, const char *db)
{
    static const char *const colls[2] = {"jobs", "jobs_superseded"};
    int64_t min = INT64_MAX;

    for (int k = 0; k < 2; k++) {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db, colls[k]);
        bson_t *f = BCON_NEW("cluster", BCON_UTF8("demo"));
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, f, NULL, NULL);
        const bson_t *doc;
        while (mongoc_cursor_next(cur, &doc)) {
            bson_iter_t it;
            if (bson_iter_init_find(&it, doc, "submit") && BSON_ITER_HOLDS_DATE_TIME(&it) &&
                bson_iter_date_time(&it) / 1000 < min)
                min = bson_iter_date_time(&it) / 1000;
        }
        mongoc_cursor_destroy(cur);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    return min;
}

/* A time member of demo's clusters document (0 when absent). */
static int64_t cluster_time(mongoc_client_t *client, const char *db, const char *k)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "clusters");
    bson_t *f = BCON_NEW("_id", BCON_UTF8("demo"));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, f, NULL, NULL);
    const bson_t *doc;
    bson_iter_t it;
    int64_t t = 0;

    if (mongoc_cursor_next(cur, &doc) && bson_iter_init_find(&it, doc, k))
        t = BSON_ITER_HOLDS_DATE_TIME(&it) ? bson_iter_date_time(&it) / 1000 : bson_iter_as_int64(&it);
    mongoc_cursor_destroy(cur);
    bson_destroy(f);
    mongoc_collection_destroy(c);
    return t;
}

static void update(mongoc_client_t *client, const char *db, const char *coll, const char *id, bson_t *upd)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    bson_t *f = BCON_NEW("_id", BCON_UTF8(id));
    bson_error_t berr;
    bson_t opts = BSON_INITIALIZER;

    BSON_APPEND_BOOL(&opts, "upsert", true);
    if (!mongoc_collection_update_one(c, f, upd, &opts, NULL, &berr))
        fail_msg("update %s %s: %s", coll, id, berr.message);
    bson_destroy(&opts);
    bson_destroy(f);
    bson_destroy(upd);
    mongoc_collection_destroy(c);
}

/* What the reports say of the ingest runs: health's rows, the site's ingest table, the metrics. */
typedef struct {
    char *health, *table, *metrics;
} said_t;

/* with_site: also the site (its ingest table and metrics; the slow part on FerretDB), else only health. */
static void reports(const char *uri, const char *db, const char *dir, bool with_site, said_t *s)
{
    static const char *const health[] = {"health", "-M", "demo", "-S", "2026-10-01", "-E", "2026-10-06", "--now",
                                         "2026-10-06T00:00:00Z", "--json", NULL};
    char sqlite[300], site[300], path[400];
    const char *site_args[] = {"site", site, "--now", "2026-10-31T23:58:00Z", "--months", "1", NULL};
    json_t *h, *rows, *r, *failed = json_array();
    json_error_t jerr;
    size_t i;
    char *out, *metrics, *line, *save = NULL;
    FILE *m;
    size_t len = 0;

    snprintf(sqlite, sizeof sqlite, "%s/ts.sqlite", dir);
    snprintf(site, sizeof site, "%s/site", dir);
    out = run_report(uri, db, sqlite, health);
    if (!(h = json_loads(out, 0, &jerr)))
        fail_msg("health --json: %s", jerr.text);
    rows = json_object_get(h, "rows");
    assert_non_null(rows);
    json_array_foreach(rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "check")) ?: "", "failed-ingest") == 0)
            json_array_append(failed, r);
    }
    s->health = json_dumps(failed, JSON_SORT_KEYS);
    json_decref(failed);
    json_decref(h);
    free(out);
    s->table = s->metrics = NULL;
    if (!with_site)
        return;
    free(run_report(uri, db, sqlite, site_args));
    snprintf(path, sizeof path, "%s/ingest.runs-demo.json", site);
    s->table = read_text(path);
    snprintf(path, sizeof path, "%s/metrics.prom", site);
    metrics = read_text(path);
    m = open_memstream(&s->metrics, &len);
    for (line = strtok_r(metrics, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "slurm_archive_ingest_last_"))
            fprintf(m, "%s\n", line);
    }
    fclose(m);
    free(metrics);
}

static void said_clear(said_t *s)
{
    free(s->health);
    free(s->table);
    free(s->metrics);
}

static void test_ingest_days(void **state)
{
    char *db = NULL, *err = NULL, dir[] = "/tmp/sa-idays-XXXXXX", si[512], sq[512], sa[512];
    mongoc_client_t *client = tu_mongo_client("test_ingest_days", &db);
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    const char *ingest[] = {"--max-gap", "25h", "--sinfo", si, "--squeue", sq, "--sacct", sa,
                            "--at", "2026-10-31T23:55:00Z", NULL};
    const char *verify[] = {"rollup", NULL}, *rebuild[] = {"rollup", "--rebuild", NULL};
    sa_archive_t *a;
    sa_error_t e;
    json_t *run, *before, *after;
    said_t days, scan;
    int64_t first;
    (void)state;

    if (!client)
        skip();
    assert_non_null(mkdtemp(dir));
    snprintf(si, sizeof si, "%s", tu_fixture("demo/sinfo-end.json"));
    snprintf(sq, sizeof sq, "%s", tu_fixture("demo/squeue-end.json"));
    snprintf(sa, sizeof sa, "%s", tu_fixture("demo/sacct-2026-10.txt"));

    /* an archive of an older version: runs, no days; the first run of this one builds them */
    insert_old_runs(client, db);
    assert_int_equal(run_ingest(uri, db, dir, ingest, NULL), 0);
    assert_int_equal(cluster_time(client, db, "ingest_days_version"), SA_RUNLOG_VERSION);
    /* a log of version 1 (by day): the next run builds its hours and removes the days */
    update(client, db, "clusters", "demo", BCON_NEW("$set", "{", "ingest_days_version", BCON_INT64(1), "}"));
    update(client, db, SA_RUNLOG_COLL, "demo:2026-10-03",
           BCON_NEW("$set", "{", "cluster", BCON_UTF8("demo"), "day", BCON_UTF8("2026-10-03"), "runs", "[", "]", "}"));
    assert_int_equal(run_ingest(uri, db, dir, ingest, NULL), 0);
    assert_int_equal(cluster_time(client, db, "ingest_days_version"), SA_RUNLOG_VERSION);
    assert_int_equal(tu_count(client, db, SA_RUNLOG_COLL, "{\"_id\": \"demo:2026-10-03\"}"), 0);
    /* a later run through the archive's own recorder (what slurm-ingest's finish calls) */
    a = sa_archive_open(uri, db, NULL, &e);
    assert_non_null(a);
    run = json_pack("{s:s, s:I, s:I, s:b, s:s, s:{s:f}, s:{s:I}}", "cluster", "demo", "started_at",
                    (json_int_t)(D3 + 2 * 86400 + 6 * H), "finished_at", (json_int_t)(D3 + 2 * 86400 + 6 * H + 5),
                    "ok", 0, "error", "squeue: timed out", "phases_ms", "exec", 60000.0, "counts", "squeue_records",
                    (json_int_t)0);
    assert_true(sa_archive_record_run(a, run, &e));
    json_decref(run);
    sa_archive_close(a);

    /* the hours say what ingest_runs says: 4 old runs, the two runs of this version, the one recorded */
    assert_int_equal(check_days_equal_runs(client, db, false), 7);
    assert_int_equal(tu_count(client, db, SA_RUNLOG_COLL, "{\"_id\": {\"$in\": [\"demo:2026-09-20T05\", "
                                                            "\"demo:2026-10-03T10\", \"demo:2026-10-04T23\", "
                                                            "\"demo:2026-10-05T00\"]}}"), 4);
    assert_int_equal(cluster_time(client, db, "first_run_at"), old_runs[0].started);
    assert_true(cluster_time(client, db, "last_run_at") >= cluster_time(client, db, "last_squeue_at") - 86400);
    /* first_submit: the earliest submit of the job documents */
    first = earliest_submit(client, db);
    assert_true(first != INT64_MAX);
    assert_int_equal(cluster_time(client, db, "first_submit"), first);
    assert_int_equal(run_ingest(uri, db, dir, verify, NULL), 0);

    /* the reports from the days, then from ingest_runs (as for an archive not built yet): the same */
    reports(uri, db, dir, true, &days);
    update(client, db, "clusters", "demo", BCON_NEW("$unset", "{", "ingest_days_version", BCON_UTF8(""), "}"));
    reports(uri, db, dir, true, &scan);
    update(client, db, "clusters", "demo",
           BCON_NEW("$set", "{", "ingest_days_version", BCON_INT64(SA_RUNLOG_VERSION), "}"));
    assert_string_equal(days.health, scan.health);
    assert_string_equal(days.table, scan.table);
    assert_string_equal(days.metrics, scan.metrics);
    /* and what was recorded: the window's two failed runs, in order; the table's rows, newest first */
    {
        const char *x = strstr(days.health, "MongoDB at db1:27017: boom");
        const char *y = strstr(days.health, "squeue: timed out");
        assert_non_null(x);
        assert_non_null(y);
        assert_true(x < y);
        assert_null(strstr(days.health, "a failure before the window"));
        assert_non_null(strstr(days.table, "2026-10-05T06:00:00Z"));
        assert_true(strstr(days.table, "2026-10-05T00:00:00Z") < strstr(days.table, "2026-10-04T23:59:59Z"));
        assert_non_null(strstr(days.metrics, "slurm_archive_ingest_last_run_success{cluster=\"demo\"} 1"));
    }

    /* a $push retried: two entries of one run are one run to the readers and to rollup */
    before = tu_find_id(client, db, SA_RUNLOG_COLL, "demo:2026-10-04T23");
    assert_non_null(before);
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db, SA_RUNLOG_COLL);
        bson_t *f = BCON_NEW("_id", BCON_UTF8("demo:2026-10-04T23"));
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, f, NULL, NULL);
        const bson_t *d;
        bson_iter_t it, arr;
        const uint8_t *data;
        uint32_t len;
        bson_t entry;
        assert_true(mongoc_cursor_next(cur, &d));
        assert_true(bson_iter_init_find(&it, d, "runs") && bson_iter_recurse(&it, &arr) && bson_iter_next(&arr));
        bson_iter_document(&arr, &len, &data);
        assert_true(bson_init_static(&entry, data, len));
        update(client, db, SA_RUNLOG_COLL, "demo:2026-10-04T23",
               BCON_NEW("$push", "{", "runs", BCON_DOCUMENT(&entry), "}"));
        mongoc_cursor_destroy(cur);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    check_days_equal_runs(client, db, true);
    assert_int_equal(run_ingest(uri, db, dir, verify, NULL), 0);
    {
        said_t again;
        reports(uri, db, dir, false, &again);
        assert_string_equal(again.health, days.health);
        said_clear(&again);
    }

    /* damaged, missing and extra days, a wrong first_submit: found (exit 9, each named), then rebuilt */
    update(client, db, SA_RUNLOG_COLL, "demo:2026-10-04T23", BCON_NEW("$set", "{", "runs.0.ok", BCON_BOOL(true), "}"));
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db, SA_RUNLOG_COLL);
        bson_t *f = BCON_NEW("_id", BCON_UTF8("demo:2026-10-03T10"));
        bson_error_t berr;
        assert_true(mongoc_collection_delete_one(c, f, NULL, NULL, &berr));
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
    update(client, db, SA_RUNLOG_COLL, "demo:2020-01-01T00",
           BCON_NEW("$set", "{", "cluster", BCON_UTF8("demo"), "runs", "[", "]", "}"));
    update(client, db, "clusters", "demo", BCON_NEW("$set", "{", "first_submit", BCON_DATE_TIME(1000), "}"));
    assert_int_equal(run_ingest(uri, db, dir, verify, &err), 9);
    assert_non_null(strstr(err, "ingest_days demo:2026-10-04T23: differs from ingest_runs"));
    assert_non_null(strstr(err, "ingest_days demo:2026-10-03T10: missing"));
    assert_non_null(strstr(err, "ingest_days demo:2020-01-01T00: stored, but no ingest run"));
    assert_non_null(strstr(err, "clusters demo: first_submit is 1970-01-01T00:00:01Z"));
    free(err);
    assert_int_equal(run_ingest(uri, db, dir, rebuild, NULL), 0);
    assert_int_equal(run_ingest(uri, db, dir, verify, NULL), 0);
    assert_int_equal(check_days_equal_runs(client, db, false), 7);
    assert_int_equal(tu_count(client, db, SA_RUNLOG_COLL, "{\"_id\": \"demo:2020-01-01T00\"}"), 0);
    assert_int_equal(cluster_time(client, db, "first_submit"), first);
    after = tu_find_id(client, db, SA_RUNLOG_COLL, "demo:2026-10-04T23");
    assert_true(json_equal(json_object_get(before, "runs"), json_object_get(after, "runs")));
    {
        said_t again;
        reports(uri, db, dir, true, &again);
        assert_string_equal(again.health, days.health);
        assert_string_equal(again.table, days.table);
        assert_string_equal(again.metrics, days.metrics);
        said_clear(&again);
    }

    json_decref(before);
    json_decref(after);
    said_clear(&days);
    said_clear(&scan);
    tu_mongo_drop(client, db);
    mongoc_client_destroy(client);
    free(db);
    tu_rm_rf(dir);
}

/*
 * A one-minute timer: 150 runs a minute apart recorded through the archive's recorder. The
 * log holds them in 3 hours of at most 60 entries, every run once: a run reads and writes
 * one hour, whatever the runs before it (version 1 rewrote a day of all of them with every
 * run: 1,440 entries at the end of such a day).
 */
static void test_busy_day(void **state)
{
    char *db = NULL;
    mongoc_client_t *client = tu_mongo_client("test_ingest_days", &db);
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    mongoc_collection_t *c;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_t *f;
    sa_archive_t *a;
    sa_error_t e;
    size_t docs = 0, entries = 0, most = 0;
    (void)state;

    if (!client)
        skip();
    assert_non_null(a = sa_archive_open(uri, db, NULL, &e));
    for (int i = 0; i < 150; i++) {
        json_t *run = json_pack("{s:s, s:I, s:I, s:b, s:{s:f}, s:{s:I}}", "cluster", "busy", "started_at",
                                (json_int_t)(D3 + 60 * i), "finished_at", (json_int_t)(D3 + 60 * i + 20), "ok", 1,
                                "phases_ms", "mongo", 12.5, "counts", "squeue_records", (json_int_t)i);
        if (!sa_archive_record_run(a, run, &e))
            fail_msg("record_run %d: %s", i, e.message);
        json_decref(run);
    }
    sa_archive_close(a);
    c = mongoc_client_get_collection(client, db, SA_RUNLOG_COLL);
    f = BCON_NEW("cluster", BCON_UTF8("busy"));
    cur = mongoc_collection_find_with_opts(c, f, NULL, NULL);
    while (mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it, arr;
        size_t n = 0;
        assert_true(bson_iter_init_find(&it, doc, "runs") && bson_iter_recurse(&it, &arr));
        while (bson_iter_next(&arr))
            n++;
        docs++;
        entries += n;
        most = n > most ? n : most;
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(f);
    mongoc_collection_destroy(c);
    printf("  150 runs a minute apart: %zu documents, %zu entries, at most %zu in one\n", docs, entries, most);
    assert_int_equal(docs, 3);
    assert_int_equal(entries, 150);
    assert_int_equal(most, 60);
    tu_mongo_drop(client, db);
    mongoc_client_destroy(client);
    free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ingest_days),
        cmocka_unit_test(test_busy_day),
    };
    return tu_run_group_tests("ingest_days", tests, NULL, NULL);
}
