/*
 * test_runlog.c - schema/rollup/sa_runlog.c: the run log's hours and names (a version 1
 * day's name told apart), and an ingest run's entry: cut to what the reports read, under
 * the same names, keyed by the run's _id (an ObjectId or a string), refused without an
 * _id or a start.
 */
#include "tu_rollup.h"

#include <stdlib.h>
#include <string.h>

#include "sa_runlog.h"

#define D4 TU_D4
#define H TU_H

static void test_hours_and_names(void **state)
{
    char *id;
    (void)state;

    assert_int_equal(sa_runlog_start(D4 + 5 * H + 59 * 60 + 59), D4 + 5 * H);
    assert_int_equal(sa_runlog_start(D4 + 5 * H), D4 + 5 * H);
    assert_int_equal(sa_runlog_start(-1), -H); /* before 1970: the hour holding it */
    assert_non_null(id = sa_runlog_id("c", D4 + 23 * H + 1800));
    assert_string_equal(id, "c:2026-10-04T23");
    free(id);
    assert_non_null(id = sa_runlog_id("my-cluster", 0));
    assert_string_equal(id, "my-cluster:1970-01-01T00");
    free(id);
    assert_null(sa_runlog_id("c", 253402300800LL)); /* year 10000: no name */

    assert_true(sa_runlog_id_is_day("c", "c:2026-10-04"));
    assert_false(sa_runlog_id_is_day("c", "c:2026-10-04T23"));
    assert_false(sa_runlog_id_is_day("c", "d:2026-10-04"));
    assert_false(sa_runlog_id_is_day("c", "cc:2026-10-04"));
    assert_false(sa_runlog_id_is_day("c", "c:2026/10/04"));
    assert_false(sa_runlog_id_is_day("c", "c:2026-1x-04"));
}

/*
 * An ingest_runs document's entry: run (its _id), started_at, finished_at, ok, error, the
 * phases and counts the reports read; nothing else (hosts, arguments, other phases).
 */
static void test_entry_of_a_run(void **state)
{
    bson_t *run, entry = BSON_INITIALIZER;
    bson_iter_t it;
    int64_t at;
    const char *key;
    (void)state;

    run = tu_bson("{\"_id\": {\"$oid\": \"65f0c0ffee0000000000abcd\"}, \"cluster\": \"c\", \"host\": \"admin1\", "
                  "\"started_at\": {\"$date\": 1791090000000}, \"finished_at\": {\"$date\": 1791090003000}, "
                  "\"ok\": false, \"error\": \"sacct timed out\", \"argv\": [\"slurm-ingest\"], "
                  "\"phases_ms\": {\"capture\": 1200, \"parse\": 30, \"unheard_of\": 5}, "
                  "\"counts\": {\"jobs_changed\": 7, \"squeue_records\": 40, \"bytes\": 9}}");
    assert_true(sa_runlog_entry(run, &entry));
    assert_true(bson_iter_init_find(&it, &entry, "run"));
    assert_string_equal(bson_iter_utf8(&it, NULL), "65f0c0ffee0000000000abcd");
    assert_true(bson_has_field(&entry, "finished_at"));
    assert_true(bson_has_field(&entry, "ok"));
    assert_true(bson_has_field(&entry, "error"));
    assert_true(bson_has_field(&entry, "phases_ms.capture"));
    assert_true(bson_has_field(&entry, "phases_ms.parse"));
    assert_false(bson_has_field(&entry, "phases_ms.unheard_of"));
    assert_true(bson_has_field(&entry, "counts.jobs_changed"));
    assert_true(bson_has_field(&entry, "counts.squeue_records"));
    assert_false(bson_has_field(&entry, "counts.bytes"));
    assert_false(bson_has_field(&entry, "host"));
    assert_false(bson_has_field(&entry, "argv"));
    assert_false(bson_has_field(&entry, "cluster"));
    key = sa_runlog_entry_key(&entry, &at);
    assert_non_null(key);
    assert_string_equal(key, "65f0c0ffee0000000000abcd");
    assert_int_equal(at, 1791090000);
    bson_destroy(run);
    bson_destroy(&entry);

    /* a string _id is the key as it is */
    bson_init(&entry);
    run = tu_bson("{\"_id\": \"r-1\", \"started_at\": {\"$date\": 1791090000000}}");
    assert_true(sa_runlog_entry(run, &entry));
    assert_string_equal(sa_runlog_entry_key(&entry, &at), "r-1");
    bson_destroy(run);
    bson_destroy(&entry);
}

/* No _id (or one of another type, or too long for a key), or no started_at: no entry. */
static void test_entry_refused(void **state)
{
    static const char *const runs[] = {
        "{\"started_at\": {\"$date\": 1791090000000}}",
        "{\"_id\": 7, \"started_at\": {\"$date\": 1791090000000}}",
        "{\"_id\": \"a-string-of-twenty-five-b\", \"started_at\": {\"$date\": 1791090000000}}",
        "{\"_id\": \"r-2\", \"ok\": true}",
    };
    bson_t entry = BSON_INITIALIZER;
    int64_t at;
    (void)state;

    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        bson_t *run = tu_bson(runs[i]);
        bson_reinit(&entry);
        if (sa_runlog_entry(run, &entry))
            fail_msg("an entry of %s", runs[i]);
        bson_destroy(run);
    }
    /* an entry without its members: no key, no time */
    bson_reinit(&entry);
    assert_null(sa_runlog_entry_key(&entry, &at));
    assert_int_equal(at, SA_UNSET);
    bson_destroy(&entry);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hours_and_names),
        cmocka_unit_test(test_entry_of_a_run),
        cmocka_unit_test(test_entry_refused),
    };
    return tu_run_group_tests("runlog", tests, NULL, NULL);
}
