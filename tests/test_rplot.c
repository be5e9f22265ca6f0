/*
 * test_rplot.c - report/sa_rplot.c: the line chart over time (the ingester's profile) and
 * the bar chart of one value per group (waits): well-formed SVG, names escaped, each point
 * and bar carrying its value in a <title>, a group without a value said in words, the
 * standalone bar chart with its declaration and preamble.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_render.h"

static void test_lines(void **state)
{
    const int64_t t[] = {1791072000, 1791075600, 1791079200};
    const double a[] = {1.5, 2.25, 0}, b[] = {10, 20, 30};
    const sa_rseries_t s[] = {{"parse <ms>", a}, {"mongo & co", b}};
    tu_mem_t m;
    char *svg, why[200];
    size_t points = 0;
    (void)state;

    sa_rplot_lines(tu_mem_open(&m), "Phases", "ms", t, 3, s, 2);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "<title>Phases</title>"));
    assert_non_null(strstr(svg, "parse &lt;ms&gt;"));
    assert_non_null(strstr(svg, "mongo &amp; co"));
    assert_non_null(strstr(svg, ": 2.25 "));
    assert_non_null(strstr(svg, ": 30 "));
    for (const char *p = svg; (p = strstr(p, "<circle class=\"point\"")); p++)
        points++;
    assert_int_equal(points, 6); /* a point per value */
    free(svg);
}

static void test_bars(void **state)
{
    const char *const labels[] = {"gpu", "cpu & <mem>", "empty"};
    const double v[] = {3600, 1800.5, -1};
    sa_rbars_t b = {"Mean wait", "s", labels, v, 3};
    sa_strv_t pre;
    tu_mem_t m;
    char *svg, why[200];
    (void)state;

    sa_strv_init(&pre);
    assert_true(sa_strv_push(&pre, "Runs started in October"));
    sa_rplot_bars(tu_mem_open(&m), &b, &pre, true);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "Runs started in October"));
    assert_non_null(strstr(svg, "cpu &amp; &lt;mem&gt;"));
    assert_non_null(strstr(svg, ": 3600 "));
    assert_non_null(strstr(svg, ": 1800.5 "));
    assert_non_null(strstr(svg, "no value")); /* the group without one */
    free(svg);

    b.n = 0;
    sa_rplot_bars(tu_mem_open(&m), &b, NULL, false);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_true(strncmp(svg, "<svg", 4) == 0);
    assert_non_null(strstr(svg, "No run started in the window."));
    free(svg);
    sa_strv_clear(&pre);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_bars),
    };
    return tu_run_group_tests("rplot", tests, NULL, NULL);
}
