/*
 * test_rplot.c - report/sa_rplot.c: the plot over time, lines (broken where a value is
 * missing) or bars stacked by bucket, and the bar chart of one value per group (waits):
 * well-formed SVG, names escaped, each point, piece and bar carrying its value in a
 * <title>, a group without a value said in words, the standalone bar chart with its
 * declaration and preamble.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_render.h"

static void test_lines(void **state)
{
    const int64_t t[] = {1791072000, 1791075600, 1791079200};
    const double a[] = {1.5, NAN, 0}, b[] = {10, 20, 30};
    const sa_rseries_t s[] = {{"parse <ms>", a}, {"mongo & co", b}};
    const sa_rplot_t p = {SA_RPLOT_LINES, "Phases", "ms", t, 3, s, 2, false, NULL};
    tu_mem_t m;
    char *svg, why[200];
    size_t points = 0, lines = 0;
    (void)state;

    sa_rplot(tu_mem_open(&m), &p, false, 0);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "<title>Phases</title>"));
    assert_non_null(strstr(svg, "parse &lt;ms&gt;"));
    assert_non_null(strstr(svg, "mongo &amp; co"));
    assert_non_null(strstr(svg, "parse &lt;ms&gt;: 1.5 ms</title>"));
    assert_non_null(strstr(svg, "mongo &amp; co: 30 ms</title>"));
    for (const char *q = svg; (q = strstr(q, "<circle class=\"point\"")); q++)
        points++;
    assert_int_equal(points, 5); /* a point per value, none where there is none */
    for (const char *q = svg; (q = strstr(q, "<polyline")); q++)
        lines++;
    assert_int_equal(lines, 3); /* the first series broken where it has no value */
    free(svg);
}

/* Stacked bars by bucket: each series' piece on the one below, its bucket and value in a <title>. */
static void test_stack(void **state)
{
    const int64_t t[] = {1790812800, 1790899200, 1790985600}; /* 2026-10-01, 10-02, 10-03 */
    const double a[] = {5, 0}, b[] = {3, 2};
    const sa_rseries_t s[] = {{"allocated", a}, {"idle", b}};
    const sa_rplot_t p = {SA_RPLOT_STACK, "GPU time", "h", t, 2, s, 2, false, NULL};
    const sa_rplot_t none = {SA_RPLOT_STACK, "GPU time", "h", t, 0, s, 2, false, "Nothing here."};
    tu_mem_t m;
    char *svg, why[200];
    size_t bars = 0;
    (void)state;

    sa_rplot(tu_mem_open(&m), &p, false, 0);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "<title>2026-10-01 to 2026-10-02 allocated: 5 h</title>"));
    assert_non_null(strstr(svg, "<title>2026-10-02 to 2026-10-03 idle: 2 h</title>"));
    for (const char *q = svg; (q = strstr(q, "<rect class=\"bar\"")); q++)
        bars++;
    assert_int_equal(bars, 3); /* a piece per value above 0 */
    free(svg);

    sa_rplot(tu_mem_open(&m), &none, false, 0);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "Nothing here."));
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
        cmocka_unit_test(test_stack),
        cmocka_unit_test(test_bars),
    };
    return tu_run_group_tests("rplot", tests, NULL, NULL);
}
