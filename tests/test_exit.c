/*
 * test_exit.c - schema/core/sa_exit.c: the one mapping from an error's domain to the exit
 * code of both binaries (the README's table): every domain, and an unreachable server,
 * which slurm-ingest spools (8) and slurm-report cannot (5).
 */
#include "testutil.h"

#include "sa_exit.h"

static void test_every_domain(void **state)
{
    static const struct {
        sa_err_domain_t domain;
        int spooling, reporting; /* slurm-ingest's code, slurm-report's */
    } table[] = {
        {SA_ERR_NONE, SA_EXIT_FAILURE, SA_EXIT_FAILURE},
        {SA_ERR_INPUT, SA_EXIT_INPUT, SA_EXIT_INPUT},
        {SA_ERR_IO, SA_EXIT_FAILURE, SA_EXIT_FAILURE},
        {SA_ERR_MONGO, SA_EXIT_MONGO, SA_EXIT_MONGO},
        {SA_ERR_SQLITE, SA_EXIT_SQLITE, SA_EXIT_SQLITE},
        {SA_ERR_USAGE, SA_EXIT_USAGE, SA_EXIT_USAGE},
        {SA_ERR_LOCKED, SA_EXIT_LOCKED, SA_EXIT_LOCKED},
        {SA_ERR_SLURM, SA_EXIT_SLURM, SA_EXIT_SLURM},
        {SA_ERR_NOMEM, SA_EXIT_FAILURE, SA_EXIT_FAILURE},
        {SA_ERR_UNREACHABLE, SA_EXIT_SPOOLED, SA_EXIT_MONGO},
        {SA_ERR_SPOOL, SA_EXIT_SPOOL, SA_EXIT_SPOOL},
        {SA_ERR_CHANGED, SA_EXIT_LOCKED, SA_EXIT_LOCKED},
        {SA_ERR_EXPORT, SA_EXIT_EXPORT, SA_EXIT_EXPORT},
    };
    sa_error_t e;
    (void)state;

    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        sa_error_set(&e, table[i].domain, 0, "x");
        assert_int_equal(sa_exit_code_for(&e, true), table[i].spooling);
        assert_int_equal(sa_exit_code_for(&e, false), table[i].reporting);
    }
    assert_int_equal(sa_exit_code_for(NULL, true), SA_EXIT_FAILURE);
}

/* The numbers are the README's: scripts and systemd units read them. */
static void test_numbers(void **state)
{
    (void)state;
    assert_int_equal(SA_EXIT_OK, 0);
    assert_int_equal(SA_EXIT_FAILURE, 1);
    assert_int_equal(SA_EXIT_USAGE, 2);
    assert_int_equal(SA_EXIT_INPUT, 3);
    assert_int_equal(SA_EXIT_SLURM, 4);
    assert_int_equal(SA_EXIT_MONGO, 5);
    assert_int_equal(SA_EXIT_SQLITE, 6);
    assert_int_equal(SA_EXIT_LOCKED, 7);
    assert_int_equal(SA_EXIT_SPOOLED, 8);
    assert_int_equal(SA_EXIT_UNHEALTHY, 9);
    assert_int_equal(SA_EXIT_SPOOL, 10);
    assert_int_equal(SA_EXIT_EXPORT, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_domain),
        cmocka_unit_test(test_numbers),
    };
    return tu_run_group_tests("exit", tests, NULL, NULL);
}
