/*
 * test_rchart.c - report/sa_rchart.c, the usage charts: month buckets over a window that
 * starts and ends mid-month; the SVG of charts against an award (its target, band and
 * projection), of a breakdown, and of none (the text said instead): well-formed, titles
 * and names escaped, every bar carrying its value in a <title>.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_rchart.h"
#include "sa_rutil.h"
#include "sa_time.h"

static int64_t utc(const char *iso)
{
    int64_t t;
    assert_true(sa_time_parse_iso(iso, &t));
    return t;
}

/* [2026-09-15, 2026-12-10): buckets from the 15th, at each month's start, to the 10th. */
static void test_months(void **state)
{
    sa_rchart_t c = {0};
    (void)state;

    c.from = utc("2026-09-15T00:00:00Z");
    c.axis_to = utc("2026-12-10T00:00:00Z");
    assert_true(sa_rchart_months(&c));
    assert_int_equal(c.nm, 4);
    assert_int_equal(c.m[0], c.from);
    assert_int_equal(c.m[1], utc("2026-10-01T00:00:00Z"));
    assert_int_equal(c.m[2], utc("2026-11-01T00:00:00Z"));
    assert_int_equal(c.m[3], utc("2026-12-01T00:00:00Z"));
    assert_int_equal(c.m[4], c.axis_to);
    for (size_t i = 0; i < c.nm; i++)
        assert_true(c.val[i] == 0);
    free(c.m);
    free(c.val);
}

/* Two charts: an award with its band and projection, and a breakdown by user; then none. */
static void test_svg(void **state)
{
    sa_rchart_t *c = calloc(2, sizeof *c);
    sa_strv_t pre;
    tu_mem_t m;
    char *s, why[200];
    (void)state;

    assert_non_null(c);
    c[0].title = strdup("physics <award>");
    c[0].subtitle = strdup("100 GPU-years");
    c[0].from = utc("2026-10-01T00:00:00Z");
    c[0].axis_to = c[0].data_to = utc("2027-01-01T00:00:00Z");
    assert_true(sa_rchart_months(&c[0]));
    c[0].val[0] = 10.5;
    c[0].val[1] = 20.25;
    c[0].val[2] = 30;
    c[0].target = 100;
    c[0].band_lo = 80;
    c[0].band_hi = 120;
    c[0].projected = 60.75;
    c[0].status = "under pace";
    c[0].unit = "GPU-years";
    c[1].title = strdup("bio");
    c[1].from = c[0].from;
    c[1].axis_to = c[1].data_to = c[0].axis_to;
    assert_true(sa_rchart_months(&c[1]));
    c[1].nseries = 2;
    c[1].series = calloc(2, sizeof *c[1].series);
    c[1].series[0] = strdup("ann & co");
    c[1].series[1] = strdup("bob");
    free(c[1].val);
    c[1].val = calloc(c[1].nm * 2, sizeof *c[1].val);
    c[1].val[0] = 1.5;
    c[1].val[1] = 2.5;
    c[1].target = -1;
    c[1].projected = -1;
    c[1].unit = "GPU-hours";
    sa_strv_init(&pre);
    assert_true(sa_strv_push(&pre, "Usage of October to December 2026 & more"));

    sa_rcharts_svg(tu_mem_open(&m), "GPU usage", "no award", &pre, c, 2, true);
    s = tu_mem_close(&m);
    if (!tu_xml_well_formed(s, why, sizeof why))
        fail_msg("%s", why);
    assert_true(strncmp(s, "<?xml", 5) == 0);
    assert_non_null(strstr(s, "<title>GPU usage</title>"));
    assert_non_null(strstr(s, "physics &lt;award&gt;"));
    assert_non_null(strstr(s, "ann &amp; co"));
    assert_non_null(strstr(s, "&amp; more"));
    assert_non_null(strstr(s, "10.5"));  /* October's bar, its value */
    assert_non_null(strstr(s, "20.25")); /* November's */
    assert_non_null(strstr(s, "under pace"));
    free(s);

    sa_rcharts_svg(tu_mem_open(&m), "GPU usage", "no award <yet>", NULL, c, 0, false);
    s = tu_mem_close(&m);
    if (!tu_xml_well_formed(s, why, sizeof why))
        fail_msg("%s", why);
    assert_true(strncmp(s, "<svg", 4) == 0); /* inline: no declaration */
    assert_non_null(strstr(s, "no award &lt;yet&gt;"));
    free(s);
    sa_strv_clear(&pre);
    sa_rcharts_free(c, 2);
    sa_rcharts_free(NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_months),
        cmocka_unit_test(test_svg),
    };
    return tu_run_group_tests("rchart", tests, NULL, NULL);
}
