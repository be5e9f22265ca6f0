/*
 * test_hostlist.c - schema/core/sa_hostlist.c: Slurm hostlist expressions expanded, in
 * order, zero padding kept; malformed and oversized ones refused with a message.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_hostlist.h"

/* The names of expr joined by spaces (static buffer); NULL when the expansion fails. */
static const char *expand(const char *expr, size_t max, sa_error_t *err)
{
    static char buf[4096];
    sa_strv_t v;
    size_t len = 0;

    sa_strv_init(&v);
    buf[0] = '\0';
    if (!sa_hostlist_expand(expr, max, &v, err)) {
        assert_int_equal(v.n, 0); /* nothing half-appended */
        sa_strv_clear(&v);
        return NULL;
    }
    for (size_t i = 0; i < v.n; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", v.v[i]);
    sa_strv_clear(&v);
    return buf;
}

static void test_plain_and_lists(void **state)
{
    sa_error_t err;
    (void)state;
    assert_string_equal(expand("node1", 0, &err), "node1");
    assert_string_equal(expand("node1,node2", 0, &err), "node1 node2");
    assert_string_equal(expand("a,b c", 0, &err), "a b c");
    /* nothing assigned */
    assert_string_equal(expand("", 0, &err), "");
    assert_string_equal(expand("None assigned", 0, &err), "");
    assert_string_equal(expand("(null)", 0, &err), "");
}

static void test_ranges_keep_padding(void **state)
{
    sa_error_t err;
    (void)state;
    assert_string_equal(expand("cn-a[001-004,010]", 0, &err), "cn-a001 cn-a002 cn-a003 cn-a004 cn-a010");
    assert_string_equal(expand("gpu[8-11]", 0, &err), "gpu8 gpu9 gpu10 gpu11");
    assert_string_equal(expand("n[098-101]", 0, &err), "n098 n099 n100 n101");
    assert_string_equal(expand("d09n04s[01-02],d13n[03,05]", 0, &err), "d09n04s01 d09n04s02 d13n03 d13n05");
    /* several groups: the cartesian product, leftmost group varying slowest */
    assert_string_equal(expand("gpu[1-2]-ib[0-1]", 0, &err), "gpu1-ib0 gpu1-ib1 gpu2-ib0 gpu2-ib1");
}

static void test_malformed(void **state)
{
    sa_error_t err;
    (void)state;
    assert_null(expand("gpu[01-", 0, &err));
    assert_non_null(strstr(err.message, "gpu[01-"));
    assert_null(expand("gpu01]", 0, &err));
    assert_null(expand("gpu[5-3]", 0, &err)); /* reversed range */
    assert_non_null(strstr(err.message, "gpu[5-3]"));
    assert_null(expand("gpu[a-b]", 0, &err));
}

/* max_hosts guards against "n[0-999999999]": exactly max is fine, one more is refused. */
static void test_max_hosts(void **state)
{
    sa_error_t err;
    (void)state;
    assert_non_null(expand("n[1-4]", 4, &err));
    assert_null(expand("n[1-5]", 4, &err));
    assert_null(expand("a[1-3]b[1-2]", 5, &err)); /* 6 names */
    assert_non_null(expand("a[1-3]b[1-2]", 6, &err));
    /* the default, 1,000,000 */
    assert_null(expand("n[0-999999999]", 0, &err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_lists),
        cmocka_unit_test(test_ranges_keep_padding),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_max_hosts),
    };
    return tu_run_group_tests("hostlist", tests, NULL, NULL);
}
