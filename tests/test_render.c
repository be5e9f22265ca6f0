/*
 * test_render.c - report/sa_render.c, the one writer of every report's document: the same
 * rows in every format (table with its preamble, parsable with -n, -p and titles, CSV, JSON
 * with its members, header and totals, an HTML page escaped with its long columns behind a
 * switch, SVG of charts or bars), -v's "# " preamble on the side, the formats a document
 * cannot be written in and an unknown -o column refused, a write that fails, the site's
 * callback taking the document instead; and the pieces (preamble lines, periods, lists).
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_render.h"

static const sa_col_t cols[] = {
    {"account", "Account", SA_COL_STR, 0, 0},
    {"gpu_hours", "GPU-hours", SA_COL_NUM, 1, 0},
    {"note", "Note", SA_COL_STR, 0, SA_COL_LONG},
};

/* A document: two rows and a total, a preamble of two lines, a JSON member. */
typedef struct {
    sa_rtable_t t;
    sa_strv_t pre;
    json_t *json;
    sa_rdoc_t d;
} doc_t;

static void doc_make(doc_t *x)
{
    size_t r;
    sa_rtable_init(&x->t, cols, 3);
    r = sa_rtable_add_row(&x->t);
    sa_rtable_str(&x->t, r, 0, "physics");
    sa_rtable_num(&x->t, r, 1, 12.25);
    sa_rtable_str(&x->t, r, 2, "a <long> note");
    r = sa_rtable_add_row(&x->t);
    sa_rtable_str(&x->t, r, 0, "bio");
    sa_rtable_num(&x->t, r, 1, 2);
    r = sa_rtable_add_row(&x->t);
    sa_rtable_str(&x->t, r, 0, "total");
    sa_rtable_num(&x->t, r, 1, 14.25);
    sa_rtable_mark_total(&x->t, r);
    sa_strv_init(&x->pre);
    sa_rpreamble_add(&x->pre, "Window: %s to %s", "2026-10-01", "2026-11-01");
    sa_rpreamble_add(&x->pre, "Rule: runs clipped to the window");
    x->json = json_pack("{s:o}", "period", sa_rjson_period(1790812800, 1793491200));
    memset(&x->d, 0, sizeof x->d);
    x->d.kind = "usage";
    x->d.title = "slurm-report: GPU usage & more";
    x->d.preamble = &x->pre;
    x->d.table = &x->t;
    x->d.caption = "By account";
    x->d.json = x->json;
}

static void doc_clear(doc_t *x)
{
    sa_rtable_clear(&x->t);
    sa_strv_clear(&x->pre);
    json_decref(x->json);
}

/* Writes x in format f (opts from o's fields); returns the text (caller frees), NULL with *err on failure. */
static char *write_as(doc_t *x, sa_report_opts_t *o, sa_format_t f, sa_error_t *err)
{
    tu_mem_t m;
    char *s;
    bool ok;
    o->format = f;
    ok = sa_rdoc_write(&x->d, o, tu_mem_open(&m), err);
    s = tu_mem_close(&m);
    if (!ok) {
        free(s);
        return NULL;
    }
    return s;
}

static void test_table_and_parsable(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    char *s;
    (void)state;

    doc_make(&x);
    sa_report_opts_init(&o);
    assert_non_null(s = write_as(&x, &o, SA_FMT_TABLE, &err));
    assert_true(strncmp(s, "Window: 2026-10-01 to 2026-11-01\nRule: runs clipped to the window\n\n", 66) == 0);
    assert_non_null(strstr(s, "12.2")); /* 1 decimal */
    assert_non_null(strstr(s, "total"));
    assert_null(strstr(s, "Note")); /* a long column: only with -l */
    free(s);
    o.long_format = true;
    assert_non_null(s = write_as(&x, &o, SA_FMT_TABLE, &err));
    assert_non_null(strstr(s, "a <long> note"));
    free(s);
    o.long_format = false;

    /* parsable: every column, no preamble, no total; -n without the header; -p's trailing '|' */
    assert_non_null(s = write_as(&x, &o, SA_FMT_PARSABLE, &err));
    assert_string_equal(s, "account|gpu_hours|note\nphysics|12.2|a <long> note\nbio|2.0|\n");
    free(s);
    o.no_header = true;
    o.trailing_delimiter = true;
    x.d.parsable_titles = true;
    assert_non_null(s = write_as(&x, &o, SA_FMT_PARSABLE, &err));
    assert_string_equal(s, "physics|12.2|a <long> note|\nbio|2.0||\n");
    free(s);
    o.no_header = false;
    assert_non_null(s = write_as(&x, &o, SA_FMT_PARSABLE, &err));
    assert_true(strncmp(s, "Account|GPU-hours|Note|\n", 24) == 0); /* sacct's field names */
    free(s);
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* -v: the preamble of parsable, CSV and JSON on the side as "# " lines (a control character folded). */
static void test_verbose_preamble(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    tu_mem_t v;
    char *s, *side;
    (void)state;

    doc_make(&x);
    sa_rpreamble_add(&x.pre, "a\tb");
    sa_report_opts_init(&o);
    o.verbose = tu_mem_open(&v);
    assert_non_null(s = write_as(&x, &o, SA_FMT_CSV, &err));
    side = tu_mem_close(&v);
    assert_string_equal(side, "# Window: 2026-10-01 to 2026-11-01\n# Rule: runs clipped to the window\n# a?b\n");
    assert_non_null(strstr(s, "account,gpu_hours,note\r\n"));
    assert_null(strstr(s, "Window"));
    free(s);
    free(side);
    o.verbose = tu_mem_open(&v);
    assert_non_null(s = write_as(&x, &o, SA_FMT_TABLE, &err)); /* the table prints it itself */
    side = tu_mem_close(&v);
    assert_string_equal(side, "");
    free(s);
    free(side);
    o.verbose = NULL;
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* JSON: the document's members, the preamble as "header", the rows, the totals. */
static void test_json(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    json_error_t jerr;
    json_t *j;
    char *s;
    (void)state;

    doc_make(&x);
    sa_report_opts_init(&o);
    assert_non_null(s = write_as(&x, &o, SA_FMT_JSON, &err));
    assert_non_null(j = json_loads(s, 0, &jerr));
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "period"), "start")),
                        "2026-10-01T00:00:00Z");
    assert_int_equal(json_array_size(json_object_get(j, "header")), 2);
    assert_int_equal(json_array_size(json_object_get(j, "rows")), 2);
    assert_true(json_real_value(json_object_get(json_array_get(json_object_get(j, "rows"), 0), "gpu_hours")) == 12.25);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "rows"), 0), "note")),
                        "a <long> note"); /* every column */
    assert_int_equal(json_array_size(json_object_get(j, "totals")), 1);
    json_decref(j);
    free(s);
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* HTML: a whole page, escaped; the long column hidden behind the "all columns" switch. */
static void test_html(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    char *s;
    (void)state;

    doc_make(&x);
    sa_report_opts_init(&o);
    assert_non_null(s = write_as(&x, &o, SA_FMT_HTML, &err));
    assert_true(strncmp(s, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(s, "<title>slurm-report: GPU usage &amp; more</title>"));
    assert_non_null(strstr(s, "<h1>slurm-report: GPU usage &amp; more</h1>"));
    assert_non_null(strstr(s, "<p class=\"meta\">Rule: runs clipped to the window</p>"));
    assert_non_null(strstr(s, "all columns"));
    assert_non_null(strstr(s, "a &lt;long&gt; note"));
    assert_non_null(strstr(s, "By account"));
    assert_non_null(strstr(s, "</html>\n"));
    free(s);
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* SVG: the charts (or bars) with the preamble above; a document with neither, and prometheus, refused. */
static void test_svg_and_refusals(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    char *s, why[200];
    const char *const labels[] = {"gpu"};
    const double v[] = {60};
    sa_rbars_t bars = {"Mean wait", "s", labels, v, 1};
    sa_colspec_t *specs = NULL;
    size_t n = 0;
    (void)state;

    doc_make(&x);
    sa_report_opts_init(&o);
    assert_null(write_as(&x, &o, SA_FMT_SVG, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_string_equal(err.message, "--format svg is not available for this report");
    assert_null(write_as(&x, &o, SA_FMT_PROMETHEUS, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    x.d.bars = &bars;
    assert_non_null(s = write_as(&x, &o, SA_FMT_SVG, &err));
    if (!tu_xml_well_formed(s, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(s, "Window: 2026-10-01"));
    free(s);
    x.d.has_charts = true;
    x.d.charts_title = "GPU usage";
    x.d.no_charts = "no award";
    o.no_header = true;
    assert_non_null(s = write_as(&x, &o, SA_FMT_SVG, &err));
    if (!tu_xml_well_formed(s, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(s, "no award"));
    assert_null(strstr(s, "Window")); /* -n: no preamble */
    free(s);

    assert_true(sa_colspecs_parse("acount", &specs, &n, &err));
    o.columns = specs;
    o.ncolumns = n;
    assert_null(write_as(&x, &o, SA_FMT_JSON, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_non_null(strstr(err.message, "acount"));
    sa_report_opts_clear(&o); /* frees the column list */
    doc_clear(&x);
}

/* A write that fails (a full device) is an I/O error, not a success. */
static void test_write_fails(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    FILE *full = fopen("/dev/full", "w");
    (void)state;

    if (!full) {
        printf("SKIP test_render: no /dev/full here\n");
        skip();
    }
    setvbuf(full, NULL, _IONBF, 0);
    doc_make(&x);
    sa_report_opts_init(&o);
    o.format = SA_FMT_JSON;
    assert_false(sa_rdoc_write(&x.d, &o, full, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_non_null(strstr(err.message, "writing the report"));
    fclose(full);
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* The site's callback takes the document; nothing is written. */
static bool take(const sa_rdoc_t *d, void *ctx, sa_error_t *error)
{
    (void)error;
    *(const char **)ctx = d->kind;
    return true;
}

static void test_emit(void **state)
{
    doc_t x;
    sa_report_opts_t o;
    sa_error_t err;
    tu_mem_t m;
    const char *kind = NULL;
    char *s;
    (void)state;

    doc_make(&x);
    sa_report_opts_init(&o);
    o.doc_cb = take;
    o.doc_ctx = &kind;
    assert_true(sa_rdoc_emit(&x.d, &o, tu_mem_open(&m), &err));
    s = tu_mem_close(&m);
    assert_string_equal(kind, "usage");
    assert_string_equal(s, "");
    free(s);
    o.doc_cb = NULL;
    assert_true(sa_rdoc_emit(&x.d, &o, tu_mem_open(&m), &err));
    s = tu_mem_close(&m);
    assert_non_null(strstr(s, "physics"));
    free(s);
    sa_report_opts_clear(&o);
    doc_clear(&x);
}

/* The pieces: a list as a JSON array, a period in ISO-8601 UTC; a page's head and end with a script. */
static void test_pieces(void **state)
{
    sa_strv_t v;
    json_t *a, *p;
    tu_mem_t m;
    char *s;
    (void)state;

    sa_strv_init(&v);
    assert_true(sa_strv_push(&v, "a"));
    assert_true(sa_strv_push(&v, "b"));
    a = sa_rjson_strv(&v);
    assert_int_equal(json_array_size(a), 2);
    assert_string_equal(json_string_value(json_array_get(a, 1)), "b");
    json_decref(a);
    a = sa_rjson_strv(NULL);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    p = sa_rjson_period(1791072000, 1791158400);
    assert_string_equal(json_string_value(json_object_get(p, "end")), "2026-10-05T00:00:00Z");
    json_decref(p);
    sa_rhtml_begin(tu_mem_open(&m), "t<1>", "site.js?v=\"1\"", "<nav>n</nav>");
    sa_rhtml_end(m.f);
    s = tu_mem_close(&m);
    assert_non_null(strstr(s, "<title>t&lt;1&gt;</title>"));
    assert_non_null(strstr(s, "<script src=\"site.js?v=&quot;1&quot;\" defer></script>"));
    assert_non_null(strstr(s, "<body>\n<nav>n</nav>")); /* trusted: as given */
    assert_non_null(strstr(s, "</body>\n</html>\n"));
    free(s);
    sa_strv_clear(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_parsable), cmocka_unit_test(test_verbose_preamble),
        cmocka_unit_test(test_json),               cmocka_unit_test(test_html),
        cmocka_unit_test(test_svg_and_refusals),   cmocka_unit_test(test_write_fails),
        cmocka_unit_test(test_emit),               cmocka_unit_test(test_pieces),
    };
    return tu_run_group_tests("render", tests, NULL, NULL);
}
