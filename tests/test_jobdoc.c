/*
 * test_jobdoc.c - schema/jobdoc/sa_jobdoc.c's interface, on records built here (no parser):
 * what each merge says it did (NEW, UNCHANGED for the same record again, CHANGED, REUSED
 * with the old document kept aside under its own _id, STALE), the document's _ids, its
 * time members, the start forecast of a pending job. The merge's rules in every arrival
 * order are test_merge_table's (tests/merge.test).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_jobdoc.h"

#define T0 1791072000LL /* 2026-10-04T00:00:00Z */
#define H 3600LL

/* A record of job id from source, in state, submitted at submit; start and end SA_UNSET unless given. */
static sa_job_t *record(sa_source_t source, int64_t id, const char *state, int64_t submit, int64_t start,
                        int64_t end)
{
    sa_job_t *j = sa_job_new(source);
    assert_non_null(j);
    j->job_id = id;
    j->state.base = strdup(state);
    j->submit = submit;
    j->start = start;
    j->end = end;
    j->user = strdup("ann");
    j->account = strdup("phys");
    return j;
}

/* Merges rec into *doc at time at; returns what the merge said. */
static sa_merge_kind_t merge(json_t **doc, const sa_job_t *rec, int64_t at, json_t **superseded)
{
    sa_obs_ctx_t ctx = {"c", at, "22.05.8", "v0.0.38"};
    sa_merge_kind_t kind;
    sa_error_t err;
    json_t *sup = NULL;

    if (!sa_jobdoc_merge(doc, rec, &ctx, &kind, &sup, &err))
        fail_msg("merge: %s", err.message);
    if (superseded)
        *superseded = sup;
    else
        json_decref(sup);
    return kind;
}

/*
 * A job's life: NEW when first seen pending, UNCHANGED for the same record again (later
 * too: a steady poll writes nothing), CHANGED when it starts and when it ends; the
 * document holds the current state, its run and its history.
 */
static void test_merge_kinds(void **state)
{
    json_t *doc = NULL;
    sa_job_t *pending = record(SA_SRC_SQUEUE, 7, "PENDING", T0, SA_UNSET, SA_UNSET);
    sa_job_t *running = record(SA_SRC_SQUEUE, 7, "RUNNING", T0, T0 + H, SA_UNSET);
    sa_job_t *done = record(SA_SRC_SACCT_TEXT, 7, "COMPLETED", T0, T0 + H, T0 + 3 * H);
    (void)state;

    assert_int_equal(merge(&doc, pending, T0 + 60, NULL), SA_MERGE_NEW);
    assert_string_equal(json_string_value(json_object_get(doc, "_id")), "c:7");
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "PENDING");
    assert_int_equal(merge(&doc, pending, T0 + 60, NULL), SA_MERGE_UNCHANGED);
    assert_int_equal(merge(&doc, pending, T0 + 120, NULL), SA_MERGE_UNCHANGED);
    assert_int_equal(merge(&doc, running, T0 + H + 60, NULL), SA_MERGE_CHANGED);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "RUNNING");
    assert_int_equal(merge(&doc, done, T0 + 4 * H, NULL), SA_MERGE_CHANGED);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "COMPLETED");
    assert_int_equal(sa_jobdoc_int(doc, "end"), T0 + 3 * H);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
    assert_true(json_array_size(json_object_get(doc, "history")) >= 3); /* PENDING, RUNNING, COMPLETED */
    /* an older snapshot never rolls it back */
    assert_int_equal(merge(&doc, running, T0 + 5 * H, NULL), SA_MERGE_UNCHANGED);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "COMPLETED");
    json_decref(doc);
    sa_job_destroy(pending);
    sa_job_destroy(running);
    sa_job_destroy(done);
}

/*
 * The id reused: a record submitted after the stored job ended is another job (REUSED):
 * the old document is handed back under "<cluster>:<id>:<its submit>"; a record of the
 * old job arriving after that is STALE.
 */
static void test_reuse_and_stale(void **state)
{
    json_t *doc = NULL, *old = NULL;
    sa_job_t *first = record(SA_SRC_SACCT_TEXT, 9, "COMPLETED", T0, T0 + H, T0 + 2 * H);
    sa_job_t *second = record(SA_SRC_SQUEUE, 9, "PENDING", T0 + 5 * H, SA_UNSET, SA_UNSET);
    (void)state;

    assert_int_equal(merge(&doc, first, T0 + 3 * H, NULL), SA_MERGE_NEW);
    assert_int_equal(merge(&doc, second, T0 + 6 * H, &old), SA_MERGE_REUSED);
    assert_non_null(old);
    assert_string_equal(json_string_value(json_object_get(old, "_id")), "c:9:1791072000");
    assert_string_equal(json_string_value(json_object_get(old, "state")), "COMPLETED");
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "PENDING");
    assert_int_equal(sa_jobdoc_int(doc, "submit"), T0 + 5 * H);
    assert_int_equal(merge(&doc, first, T0 + 7 * H, NULL), SA_MERGE_STALE);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "PENDING");
    json_decref(old);
    json_decref(doc);
    sa_job_destroy(first);
    sa_job_destroy(second);
}

/* A record without a job id (or a context without a cluster) is refused, the document untouched. */
static void test_merge_refused(void **state)
{
    json_t *doc = NULL;
    sa_job_t *rec = record(SA_SRC_SQUEUE, SA_UNSET, "PENDING", T0, SA_UNSET, SA_UNSET);
    sa_obs_ctx_t ctx = {NULL, T0, NULL, NULL};
    sa_merge_kind_t kind;
    sa_error_t err;
    json_t *sup;
    (void)state;

    assert_false(sa_jobdoc_merge(&doc, rec, &ctx, &kind, &sup, &err));
    assert_non_null(strstr(err.message, "job id"));
    assert_null(doc);
    sa_job_destroy(rec);
}

static void test_ids(void **state)
{
    char *id;
    (void)state;
    assert_non_null(id = sa_jobdoc_id("demo", 1234));
    assert_string_equal(id, "demo:1234");
    free(id);
    assert_non_null(id = sa_jobdoc_superseded_id("demo", 1234, 1791072000));
    assert_string_equal(id, "demo:1234:1791072000");
    free(id);
    assert_non_null(id = sa_jobdoc_superseded_id("demo", 1234, SA_UNSET));
    assert_string_equal(id, "demo:1234:0");
    free(id);
}

/* The time members (epoch seconds here, BSON dates stored), and sa_jobdoc_int's reading. */
static void test_time_members(void **state)
{
    static const char *const times[] = {"submit", "eligible", "start", "end", "at", "vanished_at", "expected_start",
                                        "last_sacct_at", "read_at", "prom_watermark"};
    static const char *const not_times[] = {"job_id", "elapsed_s", "time_limit_min", "Submit", "cpus", ""};
    json_t *o = json_pack("{s:I, s:s, s:f}", "submit", (json_int_t)T0, "name", "x", "billing", 2.5);
    (void)state;

    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        assert_true(sa_jobdoc_is_time_key(times[i]));
    for (size_t i = 0; i < sizeof not_times / sizeof not_times[0]; i++)
        assert_false(sa_jobdoc_is_time_key(not_times[i]));
    assert_int_equal(sa_jobdoc_int(o, "submit"), T0);
    assert_int_equal(sa_jobdoc_int(o, "name"), SA_UNSET);
    assert_int_equal(sa_jobdoc_int(o, "billing"), SA_UNSET);
    assert_int_equal(sa_jobdoc_int(o, "absent"), SA_UNSET);
    json_decref(o);
}

/*
 * squeue's start forecast of a pending job (its extra's expected_start): only squeue's,
 * only while pending. The forecast and the scheduler's churn (priority...) are volatile:
 * a poll that changes only them changes nothing.
 */
static void test_forecast(void **state)
{
    sa_job_t *rec = record(SA_SRC_SQUEUE, 5, "PENDING", T0, SA_UNSET, SA_UNSET);
    json_t *doc = NULL;
    bool priority = false, forecast = false;
    (void)state;

    assert_int_equal(sa_job_forecast(rec), SA_UNSET);
    rec->extra = json_pack("{s:I, s:i}", "expected_start", (json_int_t)(T0 + 2 * H), "priority", 100);
    assert_int_equal(sa_job_forecast(rec), T0 + 2 * H);
    assert_int_equal(merge(&doc, rec, T0 + 60, NULL), SA_MERGE_NEW);
    json_object_set_new(rec->extra, "expected_start", json_integer(T0 + 3 * H));
    json_object_set_new(rec->extra, "priority", json_integer(90));
    assert_int_equal(merge(&doc, rec, T0 + 120, NULL), SA_MERGE_UNCHANGED);
    rec->source = SA_SRC_SACCT_JSON;
    assert_int_equal(sa_job_forecast(rec), SA_UNSET);
    rec->source = SA_SRC_SQUEUE;
    free(rec->state.base);
    rec->state.base = strdup("RUNNING");
    assert_int_equal(sa_job_forecast(rec), SA_UNSET);
    for (const char *const *v = sa_jobdoc_volatile_extra; *v; v++) {
        priority = priority || strcmp(*v, "priority") == 0;
        forecast = forecast || strcmp(*v, "expected_start") == 0;
    }
    assert_true(priority && forecast);
    json_decref(doc);
    sa_job_destroy(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_kinds), cmocka_unit_test(test_reuse_and_stale),
        cmocka_unit_test(test_merge_refused), cmocka_unit_test(test_ids),
        cmocka_unit_test(test_time_members), cmocka_unit_test(test_forecast),
    };
    return tu_run_group_tests("jobdoc", tests, NULL, NULL);
}
