/*
 * test_archive.c - the job archive against the real test server: idempotence,
 * monotonicity with shuffled snapshots, history order, requeue runs, job-id reuse,
 * change-only writes, vanished jobs, hostile strings.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mongoc/mongoc.h>

#include "sa_archive.h"
#include "sa_jobdoc.h"

static char *uri;
static char *db_name;
static mongoc_client_t *client;

#define T0 1790000000 /* 2026-09-21T... */

static sa_archive_t *open_archive(void)
{
    sa_error_t err;
    char *note = NULL;
    sa_archive_t *a = sa_archive_open(uri, db_name, &note, &err);
    if (!a)
        fail_msg("sa_archive_open: %s", err.message);
    assert_non_null(note);
    free(note);
    return a;
}

static int id_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Ingests a text of Slurm output (any format) as a batch at time `at`. */
static sa_archive_stats_t ingest_text(sa_archive_t *a, const char *cluster, int64_t at, const char *text,
                                      bool squeue_complete)
{
    tu_parsed_t p;
    sa_error_t err;
    sa_archive_stats_t st = {0};
    sa_obs_ctx_t ctx = {cluster, at, NULL, NULL};

    if (!tu_parse_mem(text, strlen(text), NULL, &p, &err))
        fail_msg("parse: %s", err.message);
    if (!sa_archive_write_jobs(a, NULL, &ctx, p.jobs, p.njobs, &st, &err))
        fail_msg("ingest: %s", err.message);
    if (squeue_complete) {
        int64_t *ids = calloc(p.njobs + 1, sizeof *ids);
        for (size_t i = 0; i < p.njobs; i++)
            ids[i] = p.jobs[i]->job_id;
        qsort(ids, p.njobs, sizeof *ids, id_cmp);
        if (!sa_archive_mark_vanished(a, NULL, &ctx, ids, p.njobs, -1, &st, &err))
            fail_msg("vanish: %s", err.message);
        free(ids);
        json_t *t = json_pack("{s:I}", "last_squeue_at", (json_int_t)at);
        assert_true(sa_archive_cluster_update(a, cluster, t, NULL, &err));
        json_decref(t);
    }
    tu_parsed_clear(&p);
    return st;
}

/* Ingests a capture: the shared sample rel, else our own capture of it (tu_sample_or_fixture). */
static sa_archive_stats_t ingest_file(sa_archive_t *a, const char *cluster, int64_t at, const char *rel,
                                      const char *fixture)
{
    char *text = tu_read_file(tu_sample_or_fixture(rel, fixture), NULL);
    sa_archive_stats_t st = ingest_text(a, cluster, at, text, false);
    free(text);
    return st;
}

/* A v0.0.40-style squeue document with one job. */
static char *squeue_doc(int64_t job_id, const char *state, const char *reason, int64_t submit, int64_t start,
                        int64_t end, int restarts, const char *name)
{
    char *buf = malloc(4096);
    snprintf(buf, 4096,
             "{\"jobs\":[{\"job_id\":%lld,\"job_state\":[%s],\"state_reason\":\"%s\",\"user_name\":\"alice\","
             "\"account\":\"physics\",\"partition\":\"gpu\",\"name\":\"%s\","
             "\"submit_time\":{\"set\":true,\"infinite\":false,\"number\":%lld},"
             "\"start_time\":{\"set\":true,\"infinite\":false,\"number\":%lld},"
             "\"end_time\":{\"set\":true,\"infinite\":false,\"number\":%lld},"
             "\"time_limit\":{\"set\":true,\"infinite\":false,\"number\":60},"
             "\"restart_cnt\":%d,\"nodes\":\"%s\",\"node_count\":{\"set\":true,\"infinite\":false,\"number\":1},"
             "\"tres_alloc_str\":\"%s\"}]}",
             (long long)job_id, state, reason, name, (long long)submit, (long long)start, (long long)end, restarts,
             start ? "gpu01" : "", start ? "cpu=8,mem=64G,node=1,billing=8,gres/gpu=2,gres/gpu:a100=2" : "");
    return buf;
}

/* A sacct -P text with a header and the given body lines. */
static const char *SACCT_HDR = "JobID|JobIDRaw|User|Account|Partition|State|ExitCode|Submit|Eligible|Start|End|"
                               "ElapsedRaw|AllocTRES|NodeList|JobName\n";

static void iso(int64_t t, char *buf)
{
    sa_time_format(t, buf, 32);
    buf[strlen(buf) - 1] = '\0'; /* sacct prints no Z */
}

static char *sacct_line(int64_t id, const char *state, const char *exitcode, int64_t submit, int64_t start,
                        int64_t end, const char *name)
{
    char s[32], st[32], e[32], *buf = malloc(1024);
    iso(submit, s);
    iso(start, st);
    iso(end, e);
    snprintf(buf, 1024, "%lld|%lld|alice|physics|gpu|%s|%s|%s|%s|%s|%s|%lld|"
                        "billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1|gpu01|%s\n",
             (long long)id, (long long)id, state, exitcode, s, s, st, e, (long long)(end - start), name);
    return buf;
}

static json_t *get_job(sa_archive_t *a, const char *cluster, int64_t id)
{
    sa_error_t err;
    json_t *doc = sa_archive_get_job(a, cluster, id, &err);
    if (!doc)
        fail_msg("job %lld not in the archive", (long long)id);
    return doc;
}

/* "PENDING@t,RUNNING@t,..." of a document's history (static buffer). */
static const char *history_str(const json_t *doc)
{
    static char buf[2048];
    size_t len = 0, i;
    json_t *e;
    buf[0] = '\0';
    json_array_foreach(json_object_get(doc, "history"), i, e) {
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s@%lld", i ? "," : "",
                                json_string_value(json_object_get(e, "state")),
                                (long long)(json_integer_value(json_object_get(e, "at")) - T0));
    }
    return buf;
}

/* squeue --json early in the 22.05 scenario: pending reasons, arrays, het (sample, fixture) */
#define SQUEUE_A                                                                                                      \
    "squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json", "slurm-22.05/squeue-A.json"

static void test_idempotent(void **state)
{
    sa_archive_t *a = open_archive();
    sa_archive_stats_t st;
    json_t *before, *after;
    (void)state;

    st = ingest_file(a, "idem", T0, SQUEUE_A);
    assert_int_equal(st.inserted, st.jobs);
    assert_true(st.jobs >= 15);
    assert_int_equal(st.write_statements, st.jobs);
    before = get_job(a, "idem", 2);
    st = ingest_file(a, "idem", T0, SQUEUE_A);
    assert_int_equal(st.inserted + st.changed, 0);
    assert_int_equal(st.write_statements, 0);
    after = get_job(a, "idem", 2);
    assert_true(json_equal(before, after));
    /* the same snapshot observed again later: a steady poll writes nothing */
    st = ingest_file(a, "idem", T0 + 300, SQUEUE_A);
    assert_int_equal(st.write_statements, 0);
    assert_int_equal(st.unchanged, st.jobs);
    json_decref(before);
    json_decref(after);
    sa_archive_close(a);
}

static void test_requeue_two_runs(void **state)
{
    sa_archive_t *a = open_archive();
    json_t *doc, *runs;
    (void)state;

    ingest_file(a, "rq", T0, "sacct-parsable/local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt",
                "slurm-22.05/sacct-P-D.txt");
    doc = get_job(a, "rq", 9);
    runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "state")), "REQUEUED");
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "state")), "COMPLETED");
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "COMPLETED");
    /* every transition once, in order; REQUEUED and the next PENDING share a second */
    {
        const char *h = history_str(doc);
        const char *want[] = {"PENDING", "RUNNING", "REQUEUED", "PENDING", "RUNNING", "COMPLETED"};
        json_t *hist = json_object_get(doc, "history");
        assert_int_equal(json_array_size(hist), 6);
        for (size_t i = 0; i < 6; i++)
            assert_string_equal(json_string_value(json_object_get(json_array_get(hist, i), "state")), want[i]);
        (void)h;
    }
    /* the GPU job: 2 a100 in its run */
    json_decref(doc);
    doc = get_job(a, "rq", 7);
    assert_int_equal(json_integer_value(json_object_get(doc, "gpus")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "gpu_types"), 0)), "a100");
    json_decref(doc);
    sa_archive_close(a);
}

/* Snapshots of one job's life, as squeue and sacct texts. */
static char *life[6];

static void make_life(void)
{
    char *sacct = sacct_line(4242, "COMPLETED", "0:0", T0, T0 + 100, T0 + 1000, "train");
    life[0] = squeue_doc(4242, "\"PENDING\"", "Priority", T0, 0, 0, 0, "train");
    life[1] = squeue_doc(4242, "\"PENDING\"", "Resources", T0, 0, 0, 0, "train");
    life[2] = squeue_doc(4242, "\"RUNNING\"", "None", T0, T0 + 100, T0 + 3700, 0, "train");
    life[3] = squeue_doc(4242, "\"RUNNING\"", "None", T0, T0 + 100, T0 + 3700, 0, "train");
    life[4] = squeue_doc(4242, "\"COMPLETED\",\"COMPLETING\"", "None", T0, T0 + 100, T0 + 1000, 0, "train");
    life[5] = malloc(strlen(SACCT_HDR) + strlen(sacct) + 1);
    strcpy(life[5], SACCT_HDR);
    strcat(life[5], sacct);
    free(sacct);
}

static const int64_t life_at[6] = {T0 + 10, T0 + 60, T0 + 300, T0 + 600, T0 + 1005, T0 + 2000};

static void test_shuffled_snapshots(void **state)
{
    static const int orders[][6] = {{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {3, 0, 5, 1, 4, 2}, {2, 5, 0, 4, 3, 1}};
    sa_archive_t *a = open_archive();
    json_t *reference = NULL;
    (void)state;

    make_life();
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        char cluster[16];
        json_t *doc, *seen;
        snprintf(cluster, sizeof cluster, "shuf%zu", o);
        for (int i = 0; i < 6; i++) {
            int k = orders[o][i];
            ingest_text(a, cluster, life_at[k], life[k], false);
        }
        doc = get_job(a, cluster, 4242);
        json_object_del(doc, "cluster");
        json_object_del(doc, "_id"); /* "<cluster>:4242" */
        /* seen.last and the version (_v) move with writes, so they depend on arrival order by design */
        json_object_del(doc, "_v");
        seen = json_object_get(doc, "seen");
        json_object_del(seen, "last");
        if (!reference) {
            reference = doc;
            assert_string_equal(history_str(doc), "PENDING@0,RUNNING@100,COMPLETED@1000");
            assert_string_equal(json_string_value(json_object_get(doc, "state")), "COMPLETED");
            assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
            assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "runs"), 0),
                                                                  "source")),
                                "sacct-text");
            assert_int_equal(json_integer_value(json_object_get(seen, "first")), T0 + 10);
            continue;
        }
        if (!json_equal(doc, reference)) {
            const char *k;
            json_t *v;
            json_object_foreach(reference, k, v) {
                if (!json_equal(v, json_object_get(doc, k))) {
                    char *x = json_dumps(json_object_get(doc, k), JSON_SORT_KEYS | JSON_COMPACT);
                    char *y = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);
                    printf("order %zu: %s is\n  %s\nin order 0:\n  %s\n", o, k, x ? x : "(absent)", y);
                    free(x);
                    free(y);
                }
            }
            fail_msg("order %zu gives another document", o);
        }
        json_decref(doc);
    }
    /* monotonic: an old snapshot after the end changes nothing */
    {
        sa_archive_stats_t st = ingest_text(a, "shuf0", life_at[0], life[0], false);
        assert_int_equal(st.write_statements, 0);
    }
    json_decref(reference);
    for (int i = 0; i < 6; i++)
        free(life[i]);
    sa_archive_close(a);
}

static void test_reuse(void **state)
{
    sa_archive_t *a = open_archive();
    char *old = sacct_line(777, "COMPLETED", "0:0", T0, T0 + 10, T0 + 100, "first-life");
    char *text = malloc(4096), *newer;
    sa_archive_stats_t st;
    json_t *doc;
    mongoc_collection_t *sup;
    bson_t *filter;
    int64_t count;
    bson_error_t berr;
    (void)state;

    snprintf(text, 4096, "%s%s", SACCT_HDR, old);
    ingest_text(a, "reuse", T0 + 200, text, false);
    /* the controller was reset: id 777 again, submitted long after the first ended */
    newer = squeue_doc(777, "\"PENDING\"", "Priority", T0 + 86400, 0, 0, 0, "second-life");
    st = ingest_text(a, "reuse", T0 + 86500, newer, false);
    assert_int_equal(st.reused, 1);
    doc = get_job(a, "reuse", 777);
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "second-life");
    assert_string_equal(history_str(doc), "PENDING@86400");
    json_decref(doc);
    sup = mongoc_client_get_collection(client, db_name, "jobs_superseded");
    filter = BCON_NEW("cluster", BCON_UTF8("reuse"), "job_id", BCON_INT64(777), "name", BCON_UTF8("first-life"));
    count = mongoc_collection_count_documents(sup, filter, NULL, NULL, NULL, &berr);
    assert_int_equal(count, 1);
    /* a replay of the old record later is recognised as the old job, not merged */
    st = ingest_text(a, "reuse", T0 + 90000, text, false);
    assert_int_equal(st.stale, 1);
    assert_int_equal(st.write_statements, 0);
    doc = get_job(a, "reuse", 777);
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "second-life");
    json_decref(doc);
    /* a requeue (new submit time, higher restart count) is the same job */
    free(newer);
    newer = squeue_doc(777, "\"RUNNING\"", "None", T0 + 86400, T0 + 86450, T0 + 90050, 0, "second-life");
    ingest_text(a, "reuse", T0 + 86600, newer, false);
    free(newer);
    newer = squeue_doc(777, "\"PENDING\",\"REQUEUED\"", "BeginTime", T0 + 87000, 0, 0, 1, "second-life");
    st = ingest_text(a, "reuse", T0 + 87010, newer, false);
    assert_int_equal(st.reused, 0);
    assert_int_equal(mongoc_collection_count_documents(sup, filter, NULL, NULL, NULL, &berr), 1);
    bson_destroy(filter);
    mongoc_collection_destroy(sup);
    free(old);
    free(text);
    free(newer);
    sa_archive_close(a);
}

static void test_change_only_writes(void **state)
{
    sa_archive_t *a = open_archive();
    char *docs = malloc(1 << 20), *p = docs;
    sa_archive_stats_t st;
    (void)state;

    /* 200 running jobs */
    p += sprintf(p, "{\"jobs\":[");
    for (int i = 0; i < 200; i++) {
        char *one = squeue_doc(10000 + i, "\"RUNNING\"", "None", T0, T0 + 5, T0 + 3605, 0, "w");
        /* strip the {"jobs":[ ... ]} wrapper */
        one[strlen(one) - 2] = '\0';
        p += sprintf(p, "%s%s", i ? "," : "", one + 9);
        free(one);
    }
    sprintf(p, "]}");
    st = ingest_text(a, "steady", T0 + 60, docs, true);
    assert_int_equal(st.inserted, 200);
    st = ingest_text(a, "steady", T0 + 360, docs, true);
    assert_int_equal(st.write_statements, 0);
    /* one job finished and left squeue: one write (vanished), nothing else */
    {
        char *cut = strstr(docs, "{\"job_id\":10199");
        strcpy(cut - 1, "]}");
    }
    st = ingest_text(a, "steady", T0 + 660, docs, true);
    assert_int_equal(st.vanished, 1);
    assert_int_equal(st.write_statements, 1);
    {
        json_t *doc = get_job(a, "steady", 10199);
        assert_int_equal(json_integer_value(json_object_get(doc, "vanished_at")), T0 + 360);
        json_decref(doc);
    }
    st = ingest_text(a, "steady", T0 + 960, docs, true);
    assert_int_equal(st.write_statements, 0);
    /* sacct still calls it running: it stays marked; sacct's final record closes it */
    {
        char *line = sacct_line(10199, "RUNNING", "0:0", T0, T0 + 5, T0 + 1000, "w"), *text = malloc(4096);
        json_t *doc;
        snprintf(text, 4096, "%s%s", SACCT_HDR, line);
        ingest_text(a, "steady", T0 + 1000, text, false);
        doc = get_job(a, "steady", 10199);
        assert_non_null(json_object_get(doc, "vanished_at"));
        json_decref(doc);
        free(line);
        line = sacct_line(10199, "COMPLETED", "0:0", T0, T0 + 5, T0 + 1100, "w");
        snprintf(text, 4096, "%s%s", SACCT_HDR, line);
        ingest_text(a, "steady", T0 + 1200, text, false);
        doc = get_job(a, "steady", 10199);
        assert_null(json_object_get(doc, "vanished_at"));
        assert_string_equal(json_string_value(json_object_get(doc, "state")), "COMPLETED");
        json_decref(doc);
        free(line);
        free(text);
    }
    free(docs);
    sa_archive_close(a);
}

static void test_hostile_name(void **state)
{
    const char *name = "a\\\"b$c.d\\n\\u00e9\\u2603 {\\\"$gt\\\": 1}";
    char *doc_text = squeue_doc(31337, "\"RUNNING\"", "None", T0, T0 + 1, T0 + 100, 0, name);
    sa_archive_t *a = open_archive();
    json_t *doc;
    (void)state;

    ingest_text(a, "hostile", T0 + 5, doc_text, false);
    doc = get_job(a, "hostile", 31337);
    assert_string_equal(json_string_value(json_object_get(doc, "name")),
                        "a\"b$c.d\n\xc3\xa9\xe2\x98\x83 {\"$gt\": 1}");
    json_decref(doc);
    free(doc_text);
    sa_archive_close(a);
}

static void test_every_job_sample(void **state)
{
    static const char *files[] = {
        "squeue/restd-jobs-v0041_24.05.3_slurmweb_14jobs.json",
        "squeue/cli-scontrol-show-job-json-v0040_23.11.6_torchx_hetjob-4-components.json",
        "squeue/openapi-v0037_21.08.5_rivos_HANDMERGED-2nd-job-v0039-pending-array.json",
        "sacct-json/local-cli-dbv0038_22.05.8_D-final-requeued-het-steps-exitcode-bug.json",
        "sacct-json/restd-dbjob-v0044_25.11.0_slurmweb_failed.json",
        "sacct-parsable/sacct-p-trailing-pipe_beluga-2021_steps-arrays.txt",
    };
    sa_archive_t *a;
    (void)state;
    tu_require_samples(); /* skips this case, saying why, without ../shared */
    a = open_archive();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        sa_archive_stats_t st = ingest_file(a, "samples", T0 + (int64_t)i, files[i], NULL);
        assert_true(st.records > 0);
    }
    sa_archive_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idempotent),
        cmocka_unit_test(test_requeue_two_runs),
        cmocka_unit_test(test_shuffled_snapshots),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_change_only_writes),
        cmocka_unit_test(test_hostile_name),
        cmocka_unit_test(test_every_job_sample),
    };
    int rc;

    client = tu_mongo_client("archive", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = tu_run_group_tests("archive", tests, NULL, NULL);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
