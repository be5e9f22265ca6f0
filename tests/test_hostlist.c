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

/* ---- the expressions of the samples --------------------------------------------------- */

/* expr expands to the names want (joined by spaces). */
static void hosts_eq(const char *expr, const char *want)
{
    sa_error_t err;
    const char *got = expand(expr, 0, &err);
    if (!got)
        fail_msg("hostlist '%s': %s", expr, err.message);
    if (strcmp(got, want) != 0)
        fail_msg("hostlist '%s': got '%s', want '%s'", expr, got, want);
}

/* The number of names expr expands to (valid). */
static size_t hosts_n(const char *expr)
{
    sa_error_t err;
    const char *got = expand(expr, 0, &err);
    size_t n = 0;
    if (!got)
        fail_msg("hostlist '%s': %s", expr, err.message);
    for (const char *p = got; *p; p++)
        n += *p == ' ';
    return *got ? n + 1 : 0;
}

/*
 * A hostlist that must fail (at most max names) with an error containing want. (Names of
 * the items before the bad one may be left appended: sa_hostlist.h does not say otherwise,
 * and its callers drop the list on failure.)
 */
static void hosts_bad(const char *expr, size_t max, const char *want)
{
    sa_strv_t sv;
    sa_error_t err;

    sa_strv_init(&sv);
    sa_error_clear(&err);
    if (sa_hostlist_expand(expr, max, &sv, &err))
        fail_msg("hostlist '%s' expanded to %zu names", expr, sv.n);
    if (!strstr(err.message, want))
        fail_msg("hostlist '%s': error '%s' lacks '%s'", expr, err.message, want);
    sa_strv_clear(&sv);
}

static void test_hostlist_basic(void **state)
{
    (void)state;
    hosts_eq("cn-a[001-004,010]", "cn-a001 cn-a002 cn-a003 cn-a004 cn-a010");
    hosts_eq("node1,node2", "node1 node2");
    hosts_eq("vm", "vm");
    hosts_eq("omni[2-3]", "omni2 omni3");
    hosts_eq("n[8-11]", "n8 n9 n10 n11");
    hosts_eq("n[08-11]", "n08 n09 n10 n11");
    hosts_eq("rack[1-2]x", "rack1x rack2x");
}

/* The low end's width is the zero padding (Slurm's rule). */
static void test_hostlist_padding(void **state)
{
    (void)state;
    hosts_eq("n[9-10]", "n9 n10");
    hosts_eq("n[09-10]", "n09 n10");
    hosts_eq("n[0010-0011]", "n0010 n0011");
    hosts_eq("n[007]", "n007");
    hosts_eq("cn[004-006]", "cn004 cn005 cn006");
}

static void test_hostlist_product(void **state)
{
    (void)state;
    hosts_eq("gpu[1-2]-ib[0-1]", "gpu1-ib0 gpu1-ib1 gpu2-ib0 gpu2-ib1");
    hosts_eq("r[1,3]n[01-02]", "r1n01 r1n02 r3n01 r3n02");
}

/* xdmod ubhpc NodeList: brackets and plain names mixed. */
static void test_hostlist_xdmod(void **state)
{
    (void)state;
    hosts_eq("d09n04s[01-02],d13n[03,05,07-08,16]", "d09n04s01 d09n04s02 d13n03 d13n05 d13n07 d13n08 d13n16");
    assert_int_equal(hosts_n("d07n07s02,d07n19s02,d07n25s01,d07n28s01,d07n29s01,d07n31s02,d07n38s02,d09n04s[01-02],"
                "d09n05s02,d09n06s01,d09n07s01,d09n08s[01-02],d09n09s01,d09n11s[01-02],d09n13s01,d09n14s01,"
                "d09n15s01,d09n16s01,d09n17s01,d09n24s01,d09n25s02,d09n28s01,d09n35s01,d09n38s02,"
                "d13n[03,05,07-08,16]"),
                     32); /* NNodes of that row */
}

static void test_hostlist_none(void **state)
{
    (void)state;
    assert_int_equal(hosts_n("None assigned"), 0);
    assert_int_equal(hosts_n(""), 0);
    assert_int_equal(hosts_n("(null)"), 0);
}

static void test_hostlist_error_brackets(void **state)
{
    (void)state;
    hosts_bad("n[1-3", 0, "unbalanced");
    hosts_bad("n1-3]", 0, "unbalanced");
    hosts_bad("n[[1-3]]", 0, "nested");
    hosts_bad("a[1-2],b[3", 0, "unbalanced");
}

static void test_hostlist_error_ranges(void **state)
{
    (void)state;
    hosts_bad("n[5-2]", 0, "reversed");
    hosts_bad("n[]", 0, "bad range");
    hosts_bad("n[a-b]", 0, "bad range");
    hosts_bad("n[1,,2]", 0, "bad range");
    hosts_bad("n[1-]", 0, "bad range");
    hosts_bad("n[1-2-3]", 0, "bad range");
}

static void test_hostlist_error_huge(void **state)
{
    (void)state;
    hosts_bad("n[0-999999999]", 0, "more than 1000000 names");
    hosts_bad("n[0-999999999999999999]", 0, "more than 1000000 names");
    hosts_bad("n[0-99]x[0-99]", 1000, "more than 1000 names");
    hosts_bad("a[1-600],b[1-600]", 1000, "more than 1000 names");
}

/* Exactly max_hosts names is allowed; blanks separate hosts like commas. */
static void test_hostlist_limit_and_blanks(void **state)
{
    sa_strv_t sv;
    sa_error_t err;
    (void)state;
    sa_strv_init(&sv);
    assert_true(sa_hostlist_expand("n[1-10]x[1-100]", 1000, &sv, &err));
    assert_int_equal(sv.n, 1000);
    assert_string_equal(sv.v[999], "n10x100");
    sa_strv_clear(&sv);
    hosts_eq("a b\tc,d", "a b c d");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_lists),
        cmocka_unit_test(test_ranges_keep_padding),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_max_hosts),
        cmocka_unit_test(test_hostlist_basic),
        cmocka_unit_test(test_hostlist_padding),
        cmocka_unit_test(test_hostlist_product),
        cmocka_unit_test(test_hostlist_xdmod),
        cmocka_unit_test(test_hostlist_none),
        cmocka_unit_test(test_hostlist_error_brackets),
        cmocka_unit_test(test_hostlist_error_ranges),
        cmocka_unit_test(test_hostlist_error_huge),
        cmocka_unit_test(test_hostlist_limit_and_blanks),
    };
    return tu_run_group_tests("hostlist", tests, NULL, NULL);
}
