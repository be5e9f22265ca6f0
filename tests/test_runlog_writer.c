/*
 * test_runlog_writer.c - ingest/rollup/sa_runlog_writer.c over the in-memory document store
 * (tests/tu_docstore.h), without a server: each run's entry pushed to its hour (twice: once),
 * the check of the log against ingest_runs (an hour missing its entry, a stray hour, version
 * 1's day), and what each mode does with them (verify nothing, add what is missing and drop
 * the days, rebuild everything); a run without a start refused.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_runlog.h"
#include "sa_runlog_writer.h"
#include "tu_docstore.h"

#define D0 1791072000LL /* 2026-10-04T00:00:00Z */
#define H 3600LL

/* An ingest_runs document of cluster c: _id "r<n>", started at D0 + minutes, ok. */
static bson_t *run(int n, int64_t minutes)
{
    char json[512];
    bson_error_t e;
    bson_t *b;
    snprintf(json, sizeof json,
             "{\"_id\": \"r%d\", \"cluster\": \"c\", \"started_at\": {\"$date\": %lld}, \"finished_at\": "
             "{\"$date\": %lld}, \"ok\": true, \"phases_ms\": {\"parse\": 12}, \"counts\": {\"jobs_changed\": %d}}",
             n, (long long)((D0 + minutes * 60) * 1000), (long long)((D0 + minutes * 60 + 5) * 1000), n);
    assert_non_null(b = bson_new_from_json((const uint8_t *)json, -1, &e));
    return b;
}

/* The number of entries of hour id ("c:2026-10-04T00"), -1 when there is no such document. */
static int entries(tu_docstore_t *mem, const char *id)
{
    const bson_t *h = tu_docstore_get(mem, SA_RUNLOG_COLL, id);
    bson_iter_t it, a;
    int n = 0;
    if (!h)
        return -1;
    assert_true(bson_iter_init_find(&it, h, "runs") && bson_iter_recurse(&it, &a));
    while (bson_iter_next(&a))
        n++;
    return n;
}

/* Inserts runs into ingest_runs (and, push, their entries into the log). */
static void add_runs(sa_docstore_t *store, bson_t **runs, size_t n, bool push)
{
    sa_error_t err;
    for (size_t i = 0; i < n; i++) {
        const bson_t *one[1] = {runs[i]};
        int64_t started;
        assert_true(sa_docstore_insert_many(store, "ingest_runs", one, 1, NULL, &err));
        if (push && !sa_runlog_push(store, "c", runs[i], &started, &err))
            fail_msg("push: %s", err.message);
    }
}

/* Runs at 00:10 and 00:50 share hour 00; 02:05 has its own; the same run pushed twice is one entry. */
static void test_push(void **state)
{
    tu_docstore_t *mem;
    sa_docstore_t *store = tu_docstore_new(&mem);
    bson_t *runs[3] = {run(1, 10), run(2, 50), run(3, 125)};
    int64_t started;
    sa_error_t err;
    size_t docs, differ;
    int64_t first, last;
    (void)state;

    add_runs(store, runs, 3, true);
    assert_true(sa_runlog_push(store, "c", runs[0], &started, &err)); /* again */
    assert_int_equal(started, D0 + 600);
    assert_int_equal(entries(mem, "c:2026-10-04T00"), 2);
    assert_int_equal(entries(mem, "c:2026-10-04T02"), 1);
    assert_int_equal(entries(mem, "c:2026-10-04T01"), -1);
    assert_true(sa_runlog_rebuild(store, "c", SA_RUNLOG_VERIFY, &docs, &differ, &first, &last, NULL, &err));
    assert_int_equal(docs, 2);
    assert_int_equal(differ, 0);
    assert_int_equal(first, D0 + 600);
    assert_int_equal(last, D0 + 125 * 60);
    {
        bson_t *bad = bson_new();
        BSON_APPEND_UTF8(bad, "_id", "r9");
        assert_false(sa_runlog_push(store, "c", bad, &started, &err));
        assert_non_null(strstr(err.message, "without _id or started_at"));
        bson_destroy(bad);
    }
    for (int i = 0; i < 3; i++)
        bson_destroy(runs[i]);
    sa_docstore_free(store);
}

/*
 * A run recorded without its entry (killed between the two), a stray hour and a version 1
 * day: the verify names all three and changes nothing; add makes the entry and drops the
 * day, keeping the stray hour; rebuild drops it too; then the verify finds nothing.
 */
static void test_modes(void **state)
{
    tu_docstore_t *mem;
    sa_docstore_t *store = tu_docstore_new(&mem);
    bson_t *runs[3] = {run(1, 10), run(2, 50), run(3, 125)};
    bson_t *stray, *day;
    sa_error_t err;
    size_t docs, differ;
    int64_t first, last;
    tu_mem_t m;
    char *said;
    bson_error_t be;
    (void)state;

    add_runs(store, runs, 2, true);
    add_runs(store, runs + 2, 1, false); /* killed before its entry */
    assert_non_null(stray = bson_new_from_json((const uint8_t *)"{\"_id\": \"c:2026-10-03T05\", \"_v\": 1, \"cluster\": "
                                               "\"c\", \"hour\": \"2026-10-03T05\", \"runs\": []}", -1, &be));
    assert_non_null(day = bson_new_from_json((const uint8_t *)"{\"_id\": \"c:2026-10-01\", \"_v\": 1, \"cluster\": "
                                             "\"c\", \"runs\": []}", -1, &be));
    tu_docstore_set(mem, SA_RUNLOG_COLL, stray);
    tu_docstore_set(mem, SA_RUNLOG_COLL, day);

    assert_true(sa_runlog_rebuild(store, "c", SA_RUNLOG_VERIFY, &docs, &differ, &first, &last, tu_mem_open(&m), &err));
    said = tu_mem_close(&m);
    assert_int_equal(docs, 2);
    assert_int_equal(differ, 3);
    assert_non_null(strstr(said, "ingest_days c:2026-10-04T02: missing\n"));
    assert_non_null(strstr(said, "ingest_days c:2026-10-03T05: stored, but no ingest run of ingest_runs started that hour"));
    assert_non_null(strstr(said, "ingest_days c:2026-10-01: a day of version 1"));
    free(said);
    assert_int_equal(entries(mem, "c:2026-10-04T02"), -1); /* verify writes nothing */

    assert_true(sa_runlog_rebuild(store, "c", SA_RUNLOG_ADD, &docs, &differ, &first, &last, NULL, &err));
    assert_int_equal(entries(mem, "c:2026-10-04T02"), 1);
    assert_null(tu_docstore_get(mem, SA_RUNLOG_COLL, "c:2026-10-01"));
    assert_non_null(tu_docstore_get(mem, SA_RUNLOG_COLL, "c:2026-10-03T05")); /* add never removes an hour */
    assert_true(sa_runlog_rebuild(store, "c", SA_RUNLOG_REBUILD, &docs, &differ, &first, &last, NULL, &err));
    assert_int_equal(differ, 1);
    assert_null(tu_docstore_get(mem, SA_RUNLOG_COLL, "c:2026-10-03T05"));
    assert_true(sa_runlog_rebuild(store, "c", SA_RUNLOG_VERIFY, &docs, &differ, &first, &last, NULL, &err));
    assert_int_equal(differ, 0);
    for (int i = 0; i < 3; i++)
        bson_destroy(runs[i]);
    bson_destroy(stray);
    bson_destroy(day);
    sa_docstore_free(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push),
        cmocka_unit_test(test_modes),
    };
    return tu_run_group_tests("runlog_writer", tests, NULL, NULL);
}
