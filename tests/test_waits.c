/*
 * test_waits.c - `slurm-report waits` (report/sa_waits.c) and the started lists of the
 * rollups, against the test server (the lists' records and their BSON round trip are
 * test_rollup_contrib's and test_rollup_codec's, without a server): the waits of
 * fixtures/waits/sacct.txt against hand-computed figures, the rollups path
 * byte for byte equal to --from-jobs, `slurm-ingest rollup` finding (exit 9) and
 * `--rebuild` mending a damaged started list, and an archive of rollup version 2
 * rebuilding its lists on its first run; the site's month page has the waits.
 *
 * The fixture (cluster w, October 2026; waits in seconds, start - eligible / start - submit):
 *   101 alice phys gpu  2 a100 1 node   eligible 08:00 start 10-04 09:00    3600 /  3600
 *   102 bob   phys gpu  4 a100 2 nodes  submit 08:00, eligible 10:00 (a --begin), start 12:00
 *                                                                          7200 / 14400
 *   103 alice bio  cpu  CPU-only 1 node eligible Unknown, start 11:30         - /  1800
 *   104 carol bio  gpu  1 a100 1 node   requeued (sacct -D: a line per incarnation, Slurm resets
 *                                       Submit and Eligible): run 1 eligible 06:00 start 06:10:
 *                                                                           600 /   600
 *                                       run 2 submit 07:00 eligible 07:02 start 07:32:
 *                                                                          1800 /  1920
 *   105 bob   phys gpu  PENDING: counts nowhere
 *   106 dave  phys gpu  8 a100 2 nodes  eligible 10-04 20:00 start 10-05 02:00
 *                                                                         21600 / 21600
 *   107 alice phys gpu  1 a100 1 node   eligible 10-05 13:00 start 14:00  3600 /  3600
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

#include "sa_jobview.h"
#include "sa_rollup.h"
#include "testutil.h"
#include "tu_archive.h"

/* ---- against the test server ---------------------------------------------------------------- */

typedef struct {
    const char *uri;
    char *db;
    char dir[64];
    mongoc_client_t *client;
} srv_t;

static int ingest(const srv_t *s, const char *const *extra, char **err_out)
{
    return tu_run_ingest(SA_INGEST_BIN, s->uri, s->db, s->dir, "w", extra, err_out);
}

/* Runs slurm-report with the test's database; returns its exit status, *out what it printed (caller frees). */
static int report(const srv_t *s, const char *const *args, char **out)
{
    char dbopt[200], *err = NULL;
    const char *last[] = {dbopt, NULL};
    int rc;

    snprintf(dbopt, sizeof dbopt, "--db=%s", s->db);
    rc = tu_run_report(SA_REPORT_BIN, s->uri, NULL, args, last, out, &err);
    if (rc != 0)
        fprintf(stderr, "slurm-report exited %d: %s\n", rc, err ? err : "");
    free(err);
    return rc;
}

/* The JSON rows of `waits` with args (and --json). New reference. */
static json_t *waits_rows(const srv_t *s, const char *const *args)
{
    const char *a[20];
    size_t n = 0;
    char *out = NULL;
    json_t *doc, *rows;
    json_error_t je;

    a[n++] = "waits";
    a[n++] = "--json";
    for (; *args; args++)
        a[n++] = *args;
    a[n] = NULL;
    assert_int_equal(report(s, a, &out), 0);
    if (!(doc = json_loads(out, 0, &je)))
        fail_msg("not JSON: %s\n%s", je.text, out);
    free(out);
    rows = json_incref(json_object_get(doc, "rows"));
    json_decref(doc);
    return rows;
}

/* The row of rows whose column key is val, or fails. */
static json_t *row_of(json_t *rows, const char *key, const char *val)
{
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *v = json_string_value(json_object_get(r, key));
        if (v && strcmp(v, val) == 0)
            return r;
    }
    fail_msg("no row with %s %s", key, val);
    return NULL;
}

static double num(const json_t *r, const char *k)
{
    return json_number_value(json_object_get(r, k));
}

static void assert_near(double got, double want)
{
    if (got < want - 1e-9 || got > want + 1e-9)
        fail_msg("got %.12g, want %.12g", got, want);
}

/* The four figures (hours) of a row's eligible waits. */
static void assert_waits(const json_t *r, double mean, double median, double p90, double max)
{
    assert_near(num(r, "wait_mean_hours"), mean);
    assert_near(num(r, "wait_median_hours"), median);
    assert_near(num(r, "wait_p90_hours"), p90);
    assert_near(num(r, "wait_max_hours"), max);
}

/* The figures of the fixture against the hand-computed ones (see the file's comment). */
static void check_figures(const srv_t *s)
{
    const char *month[] = {"--month", "2026-10", NULL};
    const char *cut[] = {"-S", "2026-10-04T09:00:00", "-E", "2026-10-05T12:00:00", NULL};
    const char *size[] = {"--month", "2026-10", "--by", "gpus,nodes", NULL};
    json_t *rows = waits_rows(s, month), *r;

    /* by partition (the default). gpu: 6 runs (101, 102, 104 twice, 106, 107; 105 pending);
     * eligible waits: 600 1800 3600 3600 7200 21600
     *   mean 38400 / 6 = 6400 s; median rank ceil(6 x 0.5) = 3: 3600 s = 1 h;
     *   p90 rank ceil(6 x 0.9) = 6: 21600 s = 6 h; max 6 h
     * submit waits of 6: 600 1920 3600 3600 14400 21600: mean 45720 / 6 = 7620 s;
     *   median rank 3: 3600 s; p90 rank ceil(5.4) = 6: 21600 s */
    assert_int_equal(json_array_size(rows), 2);
    r = row_of(rows, "partition", "gpu");
    assert_int_equal(json_integer_value(json_object_get(r, "jobs")), 6);
    assert_waits(r, 6400.0 / 3600, 1.0, 6.0, 6.0);
    assert_near(num(r, "submit_wait_mean_hours"), 7620.0 / 3600);
    assert_near(num(r, "submit_wait_median_hours"), 1.0);
    assert_near(num(r, "submit_wait_p90_hours"), 6.0);
    assert_int_equal(json_integer_value(json_object_get(r, "no_eligible")), 0);
    /* cpu: 103 alone, no eligible time: no eligible figures; submit 1800 s = 0.5 h */
    r = row_of(rows, "partition", "cpu");
    assert_int_equal(json_integer_value(json_object_get(r, "jobs")), 1);
    assert_true(json_is_null(json_object_get(r, "wait_mean_hours")));
    assert_near(num(r, "submit_wait_max_hours"), 0.5);
    json_decref(rows);

    /* a window cut mid-day, [10-04 09:00, 10-05 12:00): 101 (at its start), 102, 103, 106;
     * gpu's eligible waits 3600 7200 21600: mean 32400 / 3 = 10800 s = 3 h, median rank
     * ceil(1.5) = 2: 2 h, p90 rank ceil(2.7) = 3: 6 h */
    rows = waits_rows(s, cut);
    r = row_of(rows, "partition", "gpu");
    assert_int_equal(json_integer_value(json_object_get(r, "jobs")), 3);
    assert_waits(r, 3.0, 2.0, 6.0, 6.0);
    json_decref(rows);

    /* by GPUs and nodes (XDMoD's bins): GPUs 1 = 104 twice and 107; eligible waits 600 1800 3600:
     * mean 6000 / 3 = 2000 s, median rank ceil(1.5) = 2: 0.5 h, p90 rank ceil(2.7) = 3: 1 h;
     * 2-4 GPUs on 2-4 nodes: 102 (7200 s); 5-8 GPUs: 106 */
    rows = waits_rows(s, size);
    assert_int_equal(json_array_size(rows), 5);
    r = json_array_get(rows, 1);
    assert_string_equal(json_string_value(json_object_get(r, "gpus")), "1");
    assert_int_equal(json_integer_value(json_object_get(r, "jobs")), 3);
    assert_waits(r, 2000.0 / 3600, 0.5, 1.0, 1.0);
    r = json_array_get(rows, 3);
    assert_string_equal(json_string_value(json_object_get(r, "gpus")), "2-4");
    assert_string_equal(json_string_value(json_object_get(r, "nodes")), "2-4");
    assert_waits(r, 2.0, 2.0, 2.0, 2.0);
    r = json_array_get(rows, 4);
    assert_string_equal(json_string_value(json_object_get(r, "gpus")), "5-8");
    assert_waits(r, 6.0, 6.0, 6.0, 6.0);
    json_decref(rows);
}

/*
 * waits --svg draws the median and p90 of each partition's runs day by day (a point per day
 * with runs whose eligible time is known): gpu on 10-04, 101 (3600 s), 102 (7200), 104's two
 * runs (600, 1800): sorted 600 1800 3600 7200, median rank ceil(2) = 2: 1800 s = 0.5 h, p90
 * rank ceil(3.6) = 4: 7200 s = 2 h; on 10-05, 106 (21600) and 107 (3600): median rank 1:
 * 1 h, p90 rank ceil(1.8) = 2: 6 h. cpu has no run with an eligible time: no point.
 */
static void check_plots(const srv_t *s)
{
    const char *month[] = {"waits", "--month", "2026-10", "--svg", NULL};
    static const char *const want[] = {
        "<title>Median queue wait (start - eligible) of the runs that started each day</title>",
        "<title>2026-10-04T00:00 w / gpu: 0.5 hours</title>", "<title>2026-10-05T00:00 w / gpu: 1 hours</title>",
        "<title>p90 queue wait (start - eligible) of the runs that started each day</title>",
        "<title>2026-10-04T00:00 w / gpu: 2 hours</title>", "<title>2026-10-05T00:00 w / gpu: 6 hours</title>"};
    char *out = NULL;

    assert_int_equal(report(s, month, &out), 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i]))
            fail_msg("waits --svg lacks %s", want[i]);
    assert_null(strstr(out, "w / cpu: ")); /* no point without an eligible time */
    free(out);
}

/* Every output of the rollups' path equals --from-jobs's, byte for byte. */
static void check_equal_to_documents(const srv_t *s)
{
    static const char *const cases[][8] = {
        {"--month", "2026-10", "-l", NULL},
        {"--month", "2026-10", "--by", "account,user,gpu-type", "-P", NULL},
        {"--month", "2026-10", "--by", "gpus,nodes,partition", "--json", NULL},
        {"-S", "2026-10-04T09:00:00", "-E", "2026-10-05T12:00:00", "--csv", NULL},
        {"-S", "2026-10-04T07:32:00", "-E", "2026-10-05T02:00:00", "--by", "user", "--svg", NULL},
        {"--month", "2026-10", "-A", "bio", "--html", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *a[12], *b[12];
        size_t n = 0;
        char *x = NULL, *y = NULL;
        a[n] = b[n] = "waits";
        n++;
        for (const char *const *c = cases[i]; *c; c++, n++)
            a[n] = b[n] = *c;
        a[n] = NULL;
        b[n] = "--from-jobs";
        b[n + 1] = NULL;
        assert_int_equal(report(s, a, &x), 0);
        assert_int_equal(report(s, b, &y), 0);
        if (strcmp(x, y) != 0)
            fail_msg("case %zu: the rollups give\n%s\n--from-jobs gives\n%s", i, x, y);
        free(x);
        free(y);
    }
}

/* The site's month page has the waits by partition (as the report has them), and the cluster page says so. */
static void check_site(const srv_t *s)
{
    char site[128], path[256], *page, *csv, *out = NULL;
    const char *args[] = {"site", site, "--months", "1", "--now", "2026-10-31T00:00:00Z", NULL};

    snprintf(site, sizeof site, "%s/site", s->dir);
    assert_int_equal(report(s, args, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/w/2026-10.html", site);
    assert_non_null(page = tu_read_file(path, NULL));
    assert_non_null(strstr(page, "Queue waits by partition (runs that started), 2026-10"));
    free(page);
    snprintf(path, sizeof path, "%s/w/2026-10.waits.csv", site);
    assert_non_null(csv = tu_read_file(path, NULL));
    assert_non_null(strstr(csv, "w,gpu,6,1.78,1.00,6.00,6.00,2.12,1.00,6.00,6.00,0,0"));
    free(csv);
    snprintf(path, sizeof path, "%s/w/index.html", site);
    assert_non_null(page = tu_read_file(path, NULL));
    assert_non_null(strstr(page, "queue waits"));
    free(page);
}

/* Sets the _id's document of the rollups to the members (ids, m, kt) of another (a list of the wrong jobs). */
static void swap_members(const srv_t *s, const char *id, const char *from)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(s->client, s->db, SA_ROLLUP_COLL);
    bson_t *q = BCON_NEW("_id", BCON_UTF8(from)), set = BSON_INITIALIZER, fields;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, q, NULL, NULL);
    const bson_t *doc;
    bson_iter_t it;
    bson_error_t berr;

    assert_true(mongoc_cursor_next(cur, &doc));
    BSON_APPEND_DOCUMENT_BEGIN(&set, "$set", &fields);
    assert_true(bson_iter_init(&it, doc));
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "ids") == 0 || strcmp(k, "m") == 0 || strcmp(k, "kt") == 0)
            assert_true(bson_append_value(&fields, k, -1, bson_iter_value(&it)));
    }
    bson_append_document_end(&set, &fields);
    bson_destroy(q);
    q = BCON_NEW("_id", BCON_UTF8(id));
    assert_true(mongoc_collection_update_one(coll, q, &set, NULL, NULL, &berr));
    mongoc_cursor_destroy(cur);
    bson_destroy(q);
    bson_destroy(&set);
    mongoc_collection_destroy(coll);
}

/* Stores a copy of rollup document from as version 3 named it (_id as_id, no part), beside the current one. */
static void copy_as_v3(const srv_t *s, const char *from, const char *as_id)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(s->client, s->db, SA_ROLLUP_COLL);
    bson_t *q = BCON_NEW("_id", BCON_UTF8(from)), copy = BSON_INITIALIZER;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, q, NULL, NULL);
    const bson_t *doc;
    bson_iter_t it;
    bson_error_t berr;

    assert_true(mongoc_cursor_next(cur, &doc));
    BSON_APPEND_UTF8(&copy, "_id", as_id);
    assert_true(bson_iter_init(&it, doc));
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "_id") != 0 && strcmp(k, "part") != 0)
            assert_true(bson_append_value(&copy, k, -1, bson_iter_value(&it)));
    }
    assert_true(mongoc_collection_insert_one(coll, &copy, NULL, NULL, &berr));
    mongoc_cursor_destroy(cur);
    bson_destroy(q);
    bson_destroy(&copy);
    mongoc_collection_destroy(coll);
}

static void test_waits_of_the_fixture(void **state)
{
    srv_t s = {getenv("SLURM_TEST_MONGO_URI"), NULL, "/tmp/sa-waits-XXXXXX", NULL};
    char sacct[512], *out = NULL, *before = NULL, *after = NULL;
    const char *in[] = {"--sacct", sacct, "--at", "2026-10-06T00:00:00Z", NULL};
    const char *verify[] = {"rollup", NULL}, *rebuild[] = {"rollup", "--rebuild", NULL};
    const char *month[] = {"waits", "--month", "2026-10", "--by", "partition,user,gpus", "-P", NULL};
    mongoc_collection_t *coll;
    bson_t *q, *upd;
    bson_error_t berr;
    (void)state;

    if (!(s.client = tu_mongo_client("test_waits", &s.db)))
        skip();
    assert_non_null(mkdtemp(s.dir));
    snprintf(sacct, sizeof sacct, "%s", tu_fixture("waits/sacct.txt"));
    assert_int_equal(ingest(&s, in, NULL), 0);
    /* the started lists of 10-04 and 10-05 */
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"kind\": \"started\"}"), 2);
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"r\": {\"$exists\": true}, \"nf\": {\"$exists\": false}}"), 0);
    assert_int_equal(ingest(&s, verify, NULL), 0);
    check_figures(&s);
    check_plots(&s);
    check_equal_to_documents(&s);
    check_site(&s);
    assert_int_equal(report(&s, month, &before), 0);

    /* a started list lost, another holding the wrong jobs: found (exit 9, named), then mended */
    coll = mongoc_client_get_collection(s.client, s.db, SA_ROLLUP_COLL);
    q = BCON_NEW("_id", BCON_UTF8("w:2026-10-05:s0"));
    swap_members(&s, "w:2026-10-05:s0", "w:2026-10-04:s0");
    assert_int_equal(ingest(&s, verify, &out), 9);
    assert_non_null(strstr(out, "rollup w:2026-10-05:s0: "));
    free(out);
    assert_true(mongoc_collection_delete_one(coll, q, NULL, NULL, &berr));
    assert_int_equal(ingest(&s, verify, &out), 9);
    assert_non_null(strstr(out, "w:2026-10-05:s0: missing"));
    free(out);
    assert_int_equal(ingest(&s, rebuild, NULL), 0);
    assert_int_equal(ingest(&s, verify, NULL), 0);
    assert_int_equal(report(&s, month, &after), 0);
    assert_string_equal(after, before);
    free(after);
    bson_destroy(q);

    /*
     * an archive of rollup version 2 (no started lists; members of SA_RR_NF_05 - 1 fields, as version 2's
     * were, rows documents without nf): its first run rebuilds them, once, and nothing of version 2's
     * documents is read as this version's
     */
    /* ... and version 3's documents, a day's in one document and the open runs' (named as 3 named them), are
     * removed by that rebuild */
    copy_as_v3(&s, "w:2026-10-04:r0", "w:2026-10-04");
    copy_as_v3(&s, "w:2026-10-04:m0", "w:2026-10-04:m");
    copy_as_v3(&s, "w:2026-10-04:e0", "w:2026-10-04:e");
    copy_as_v3(&s, "w:2026-10-04:m0", "w:open");
    assert_int_equal(ingest(&s, verify, &out), 9);
    assert_non_null(strstr(out, "rollup w:2026-10-04:m: stored, but no job document contributes to it"));
    assert_non_null(strstr(out, "rollup w:open: stored, but no job document contributes to it"));
    free(out);
    q = BCON_NEW("kind", BCON_UTF8("started"));
    assert_true(mongoc_collection_delete_many(coll, q, NULL, NULL, &berr));
    bson_destroy(q);
    q = BCON_NEW("nf", "{", "$exists", BCON_BOOL(true), "}");
    upd = BCON_NEW("$set", "{", "nf", BCON_INT32(SA_RR_NF_05 - 1), "}");
    assert_true(mongoc_collection_update_many(coll, q, upd, NULL, NULL, &berr));
    bson_destroy(q);
    bson_destroy(upd);
    q = BCON_NEW("r", "{", "$exists", BCON_BOOL(true), "}");
    upd = BCON_NEW("$unset", "{", "nf", BCON_UTF8(""), "}");
    assert_true(mongoc_collection_update_many(coll, q, upd, NULL, NULL, &berr));
    bson_destroy(q);
    bson_destroy(upd);
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"r\": {\"$exists\": true}, \"nf\": {\"$exists\": true}}"), 0);
    mongoc_collection_destroy(coll);
    coll = mongoc_client_get_collection(s.client, s.db, "clusters");
    q = BCON_NEW("_id", BCON_UTF8("w"));
    upd = BCON_NEW("$set", "{", "rollup_version", BCON_INT32(2), "}");
    assert_true(mongoc_collection_update_one(coll, q, upd, NULL, NULL, &berr));
    assert_int_equal(tu_count(s.client, s.db, "clusters", "{\"_id\": \"w\", \"rollup_version\": 2}"), 1);
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"kind\": \"started\"}"), 0);
    assert_int_equal(ingest(&s, in, NULL), 0);
    {
        char cur[64];
        snprintf(cur, sizeof cur, "{\"_id\": \"w\", \"rollup_version\": %d}", SA_ROLLUP_VERSION);
        assert_int_equal(tu_count(s.client, s.db, "clusters", cur), 1);
    }
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"kind\": \"started\"}"), 2);
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"r\": {\"$exists\": true}, \"nf\": {\"$exists\": false}}"), 0);
    assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, "{\"_id\": {\"$in\": [\"w:2026-10-04\", \"w:2026-10-04:m\", "
                                                             "\"w:2026-10-04:e\", \"w:open\"]}}"), 0);
    {
        char older[64];
        snprintf(older, sizeof older, "{\"nf\": %d}", (int)SA_RR_NF_05 - 1);
        assert_int_equal(tu_count(s.client, s.db, SA_ROLLUP_COLL, older), 0);
    }
    assert_int_equal(ingest(&s, verify, NULL), 0);
    assert_int_equal(report(&s, month, &after), 0);
    assert_string_equal(after, before);
    free(after);
    free(before);
    bson_destroy(q);
    bson_destroy(upd);
    mongoc_collection_destroy(coll);
    tu_mongo_drop(s.client, s.db);
    mongoc_client_destroy(s.client);
    free(s.db);
    tu_rm_rf(s.dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_of_the_fixture),
    };
    return tu_run_group_tests("waits", tests, NULL, NULL);
}
