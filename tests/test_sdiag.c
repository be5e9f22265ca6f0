/*
 * test_sdiag.c - sa_sdiag_parse_json() on constructed sdiag --json documents
 * (fixtures/sdiag-*.json: a 24.05 / data_parser v0.0.41 shape with
 * {set,infinite,number} times, and a 22.05 / v0.0.38 shape with plain integers).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_sdiag.h"

/* Parses a fixture file; asserts success. */
static void parse_fixture(const char *name, sa_sdiag_t *sd)
{
    char path[1024];
    char *data;
    size_t len;
    sa_error_t err;

    snprintf(path, sizeof path, "%s/%s", SA_FIXTURES_DIR, name);
    data = tu_read_file(path, &len);
    if (!sa_sdiag_parse_json(data, len, sd, &err))
        fail_msg("%s: %s", name, err.message);
    free(data);
}

static sa_error_t last_err;

/* Parses a string that must fail; returns the message in a static buffer. */
static const char *parse_error(const char *json)
{
    sa_sdiag_t sd;

    assert_false(sa_sdiag_parse_json(json, strlen(json), &sd, &last_err));
    sa_sdiag_clear(&sd);
    assert_null(strchr(last_err.message, '\n'));
    return last_err.message;
}

/* The domain of the last parse_error(). */
static sa_err_domain_t parse_error_domain(void)
{
    return last_err.domain;
}

static void test_v0041(void **state)
{
    sa_sdiag_t sd;
    (void)state;

    parse_fixture("sdiag-v0041_24.05.json", &sd);
    assert_int_equal(sd.req_time, 1760004000);
    assert_int_equal(sd.req_time_start, 1759968000);
    assert_int_equal(sd.server_thread_count, 3);
    assert_int_equal(sd.agent_queue_size, 0);
    assert_int_equal(sd.dbd_agent_queue_size, 12);
    assert_int_equal(sd.jobs_pending, 1534);
    assert_int_equal(sd.jobs_running, 611);
    assert_int_equal(sd.job_states_ts, 1760003990);
    assert_int_equal(sd.schedule_cycle_last, 20411);
    assert_int_equal(sd.schedule_cycle_mean, 22915);
    assert_int_equal(sd.schedule_cycle_max, 912345);
    assert_int_equal(sd.bf_cycle_last, 1622087);
    assert_int_equal(sd.bf_depth_mean, 1406);
    assert_int_equal(sd.bf_last_depth, 1498);
    assert_int_equal(sd.bf_queue_len, 1512);
    assert_int_equal(sd.bf_last_backfilled_jobs, 3321);
    assert_int_equal(sd.bf_when_last_cycle, 1760003971);
    assert_int_equal(sd.bf_active, 0);
    /* the RPC counts: by message type, then by user (kept in extra too) */
    assert_int_equal(sd.nrpcs, 2);
    assert_int_equal(sd.rpcs[0].kind, SA_SDIAG_RPC_TYPE);
    assert_string_equal(sd.rpcs[0].name, "REQUEST_PARTITION_INFO");
    assert_int_equal(sd.rpcs[0].count, 52011);
    assert_int_equal(sd.rpcs[0].total_time, 4120033);
    assert_int_equal(sd.rpcs[1].kind, SA_SDIAG_RPC_USER);
    assert_string_equal(sd.rpcs[1].name, "root");
    assert_int_equal(sd.rpcs[1].count, 181203);
    /* unmodelled keys are kept */
    assert_non_null(sd.extra);
    assert_true(json_is_array(json_object_get(sd.extra, "rpcs_by_user")));
    assert_true(json_is_object(json_object_get(sd.extra, "bf_exit")));
    assert_int_equal(json_integer_value(json_object_get(sd.extra, "gettimeofday_latency")), 21);
    assert_null(json_object_get(sd.extra, "bf_cycle_last"));
    sa_sdiag_clear(&sd);
}

static void test_v0038(void **state)
{
    sa_sdiag_t sd;
    (void)state;

    parse_fixture("sdiag-v0038_22.05.json", &sd);
    assert_int_equal(sd.req_time, 1690000000);
    assert_int_equal(sd.agent_queue_size, 4);
    assert_int_equal(sd.schedule_cycle_last, 811);
    assert_int_equal(sd.bf_cycle_last, 655);
    assert_int_equal(sd.bf_when_last_cycle, 1689999950);
    /* absent in this release */
    assert_int_equal(sd.nrpcs, 0);
    assert_int_equal(sd.agent_thread_count, SA_UNSET);
    sa_sdiag_clear(&sd);
}

static void test_errors(void **state)
{
    char path[1024];
    char *data;
    size_t len;
    sa_sdiag_t sd;
    sa_error_t err;
    (void)state;

    snprintf(path, sizeof path, "%s/%s", SA_FIXTURES_DIR, "sdiag-error-no-controller.json");
    data = tu_read_file(path, &len);
    assert_false(sa_sdiag_parse_json(data, len, &sd, &err));
    sa_sdiag_clear(&sd);
    free(data);
    assert_string_equal(err.message, "sdiag: no statistics; Slurm says: slurm_get_statistics() failed");
    /* Slurm's own failure: exit 4 as for squeue's and sacct's errors[], not bad input (issue 22) */
    assert_int_equal(err.domain, SA_ERR_SLURM);
    assert_string_equal(parse_error("{\"statistics\": {\"jobs_pending\": 1}, \"errors\": [{\"error\": \"partial\"}]}"),
                        "sdiag: Slurm reported an error: partial");
    assert_int_equal(parse_error_domain(), SA_ERR_SLURM);
    /* a key twice: which value counts would go unsaid */
    assert_non_null(strstr(parse_error("{\"statistics\": {\"jobs_pending\": 1, \"jobs_pending\": 2}}"),
                           "duplicate object key"));

    assert_string_equal(parse_error("{\"statistics\": {\"agent_queue_size\": \"many\"}}"),
                        "sdiag: statistics: agent_queue_size: expected a number, got string \"many\"");
    assert_string_equal(parse_error("{\"statistics\": {\"jobs_pending\": -3}}"),
                        "sdiag: statistics: jobs_pending: negative value -3");
    assert_string_equal(parse_error("{\"statistics\": [1]}"), "sdiag: statistics: expected an object");
    assert_string_equal(parse_error("{\"statistics\": {\"rpcs_by_user\": [3]}}"),
                        "sdiag: statistics: rpcs_by_user[0]: expected an object, got integer");
    assert_string_equal(parse_error("{\"statistics\": {\"rpcs_by_user\": [{\"user\": \"a\", \"count\": -1}]}}"),
                        "sdiag: statistics: rpcs_by_user: count: negative value -1");
    /* an unnamed user is named by its uid; an entry without a count is left out */
    {
        const char *j = "{\"statistics\": {\"rpcs_by_user\": [{\"user_id\": 1001, \"count\": 4},"
                        " {\"user\": \"b\"}]}}";
        assert_true(sa_sdiag_parse_json(j, strlen(j), &sd, &err));
        assert_int_equal(sd.nrpcs, 1);
        assert_string_equal(sd.rpcs[0].name, "1001");
        sa_sdiag_clear(&sd);
    }
    assert_string_equal(parse_error("{\"jobs\": []}"),
                        "sdiag: no \"statistics\" object (not sdiag --json output?)");
    assert_string_equal(parse_error("[]"), "sdiag: expected a JSON object at top level, got an array");
    assert_non_null(strstr(parse_error("{\"statistics\": {"), "sdiag: invalid JSON at line 1"));
    assert_string_equal(parse_error(""), "sdiag: empty input");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v0041),
        cmocka_unit_test(test_v0038),
        cmocka_unit_test(test_errors),
    };
    return tu_run_group_tests("sdiag", tests, NULL, NULL);
}
