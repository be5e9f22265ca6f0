/*
 * test_jobdigest.c - schema/jobdoc/sa_jobdigest.c: sa_job_digest() changes with everything the
 * merge uses and stays put under what moves on its own (the scheduler's volatile extra
 * members, a running job's or step's elapsed time and usage so far, squeue's end
 * forecast, the value of a pending job's start forecast), so that the job cache skips exactly the records that change nothing.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_jobdoc.h"

/* A running squeue record of job 42 with a volatile priority and a step (sacct-like). */
static sa_job_t *running_job(sa_source_t src)
{
    sa_job_t *j = sa_job_new(src);
    sa_step_t *st;
    assert_non_null(j);
    j->job_id = 42;
    j->user = strdup("alice");
    j->account = strdup("physics");
    j->state.base = strdup("RUNNING");
    j->submit = 1000;
    j->start = 2000;
    j->end = 9000; /* squeue's forecast while it runs */
    j->elapsed = 60;
    j->stats.cpu_s = 30.0;
    j->extra = json_pack("{s:i, s:s}", "priority", 100, "comment", "x");
    st = sa_job_add_step(j);
    assert_non_null(st);
    st->id = strdup("42.0");
    st->state.base = strdup("RUNNING");
    st->start = 2001;
    st->end = SA_UNSET;
    st->elapsed = 59;
    st->stats.cpu_s = 29.0;
    return j;
}

static void test_same_record_same_digest(void **state)
{
    sa_job_t *a = running_job(SA_SRC_SQUEUE), *b = running_job(SA_SRC_SQUEUE);
    (void)state;
    assert_true(sa_job_digest(a, "22.05") == sa_job_digest(b, "22.05"));
    /* the salt (the snapshot's Slurm release) is part of it */
    assert_true(sa_job_digest(a, "22.05") != sa_job_digest(a, "23.02"));
    assert_true(sa_job_digest(a, NULL) != sa_job_digest(a, ""));
    sa_job_destroy(a);
    sa_job_destroy(b);
}

/* What grows or is rewritten while the job runs does not change the digest. */
static void test_volatile_ignored(void **state)
{
    sa_job_t *a = running_job(SA_SRC_SQUEUE);
    uint64_t d0 = sa_job_digest(a, "r");
    (void)state;

    a->elapsed = 3600;                   /* a running job's elapsed time */
    a->stats.cpu_s = 1800.0;             /* and its usage so far */
    a->end = 9600;                       /* squeue's end forecast of a live job */
    json_object_set_new(a->extra, "priority", json_integer(7)); /* the scheduler's */
    json_object_set_new(a->extra, "last_sched_evaluation", json_integer(12345));
    a->steps[0].elapsed = 3599;          /* a running step's elapsed time */
    a->steps[0].stats.cpu_s = 1700.0;    /* and its usage so far */
    assert_true(sa_job_digest(a, "r") == d0);
    sa_job_destroy(a);
}

/* Every modelled member that the merge uses moves the digest. */
static void test_changes_seen(void **state)
{
    sa_job_t *base = running_job(SA_SRC_SACCT_TEXT);
    uint64_t d0 = sa_job_digest(base, "r"), d;
    (void)state;

#define CHANGED(stmt)                                                                                                 \
    do {                                                                                                              \
        sa_job_t *j = running_job(SA_SRC_SACCT_TEXT);                                                                      \
        stmt;                                                                                                         \
        d = sa_job_digest(j, "r");                                                                                    \
        if (d == d0)                                                                                                  \
            fail_msg("digest unchanged by: %s", #stmt);                                                              \
        sa_job_destroy(j);                                                                                            \
    } while (0)

    CHANGED(j->job_id = 43);
    CHANGED(free(j->state.base); j->state.base = strdup("SUSPENDED"));
    CHANGED(j->submit = 1001);
    CHANGED(j->start = 2002);
    CHANGED(j->time_limit = 60);
    CHANGED(j->restart_cnt = 1);
    CHANGED(j->exit_code = 1);
    CHANGED(j->nodes = strdup("gpu01"));
    CHANGED(j->alloc.cpu = 8);
    CHANGED(json_object_set_new(j->extra, "comment", json_string("y")));
    CHANGED(free(j->steps[0].state.base); j->steps[0].state.base = strdup("COMPLETED"); j->steps[0].end = 2100);
    CHANGED(sa_job_drop_last_step(j));
    CHANGED(j->source = SA_SRC_SQUEUE);
#undef CHANGED
    sa_job_destroy(base);
}

/*
 * A pending job's start forecast in squeue: a forecast that moves is the scheduler's churn, but
 * one that appears (or goes) is a change, so that the job cache lets the record through and the
 * merge keeps it (issue 32: sacct's record of the same poll outranks squeue's).
 */
static void test_forecast_presence(void **state)
{
    sa_job_t *a = running_job(SA_SRC_SQUEUE);
    uint64_t none, f1;
    (void)state;

    free(a->state.base);
    a->state.base = strdup("PENDING");
    a->start = SA_UNSET;
    a->end = SA_UNSET;
    none = sa_job_digest(a, "r");
    /* squeue's start_time of a pending job, a forecast, as the parser keeps it */
    json_object_set_new(a->extra, "expected_start", json_integer(5000));
    f1 = sa_job_digest(a, "r");
    assert_true(f1 != none);
    assert_int_equal(sa_job_forecast(a), 5000);
    json_object_set_new(a->extra, "expected_start", json_integer(5600));
    assert_true(sa_job_digest(a, "r") == f1);
    json_object_del(a->extra, "expected_start");
    assert_true(sa_job_digest(a, "r") == none);
    assert_true(sa_job_forecast(a) == SA_UNSET);
    sa_job_destroy(a);
}

/* Once the job ended, its elapsed time and usage are final values: a change is a change. */
static void test_final_values_count(void **state)
{
    sa_job_t *a = running_job(SA_SRC_SACCT_TEXT), *b = running_job(SA_SRC_SACCT_TEXT);
    (void)state;

    free(a->state.base);
    free(b->state.base);
    a->state.base = strdup("COMPLETED");
    b->state.base = strdup("COMPLETED");
    assert_true(sa_job_digest(a, "r") == sa_job_digest(b, "r"));
    b->elapsed = 61;
    assert_true(sa_job_digest(a, "r") != sa_job_digest(b, "r"));
    b->elapsed = a->elapsed;
    b->stats.cpu_s = 31.0;
    assert_true(sa_job_digest(a, "r") != sa_job_digest(b, "r"));
    b->stats.cpu_s = a->stats.cpu_s;
    assert_true(sa_job_digest(a, "r") == sa_job_digest(b, "r"));
    /* ...but the scheduler's volatile members are still ignored */
    json_object_set_new(b->extra, "priority", json_integer(1));
    assert_true(sa_job_digest(a, "r") == sa_job_digest(b, "r"));
    sa_job_destroy(a);
    sa_job_destroy(b);
}

/* Adjacent strings cannot run into each other: ("ab", "c") is not ("a", "bc"). */
static void test_members_delimited(void **state)
{
    sa_job_t *a = running_job(SA_SRC_SACCT_TEXT), *b = running_job(SA_SRC_SACCT_TEXT);
    (void)state;
    a->reason = strdup("ab");
    a->state_description = strdup("c");
    b->reason = strdup("a");
    b->state_description = strdup("bc");
    assert_true(sa_job_digest(a, "r") != sa_job_digest(b, "r"));
    /* an absent string is not an empty one */
    free(a->reason);
    free(b->reason);
    free(a->state_description);
    free(b->state_description);
    a->reason = NULL;
    b->reason = strdup("");
    a->state_description = b->state_description = NULL;
    assert_true(sa_job_digest(a, "r") != sa_job_digest(b, "r"));
    sa_job_destroy(a);
    sa_job_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_record_same_digest),
        cmocka_unit_test(test_volatile_ignored),
        cmocka_unit_test(test_changes_seen),
        cmocka_unit_test(test_forecast_presence),
        cmocka_unit_test(test_final_values_count),
        cmocka_unit_test(test_members_delimited),
    };
    return tu_run_group_tests("jobdigest", tests, NULL, NULL);
}
