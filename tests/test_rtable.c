/*
 * test_rtable.c - report/sa_rtable.c, a report's table and its renderings: typed cells,
 * totals, the -o column lists (widths, names in any case, '-' for '_', unknown names
 * refused listing the columns), views (long columns), aligned text with a preamble,
 * parsable lines (sacct -P and -p, another delimiter, titles as the header), CSV with CRLF
 * and the guard against formula injection, JSON rows and totals, HTML escaped with sort
 * values, and a cell's text.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_rtable.h"

static const sa_col_t cols[] = {
    {"account", "Account", SA_COL_STR, 0, 0},
    {"gpu_hours", "GPU-hours", SA_COL_NUM, 2, 0},
    {"jobs", "Jobs", SA_COL_INT, 0, 0},
    {"status", "Status", SA_COL_STR, 0, SA_COL_LONG | SA_COL_BADGE},
};

/* physics 12.5 GPU-hours in 3 jobs (ok), =cmd() 0.126 in 1, a NULL row, then the total. */
static void table(sa_rtable_t *t)
{
    size_t r;
    sa_rtable_init(t, cols, 4);
    r = sa_rtable_add_row(t);
    sa_rtable_str(t, r, 0, "physics");
    sa_rtable_num(t, r, 1, 12.5);
    sa_rtable_int(t, r, 2, 3);
    sa_rtable_str(t, r, 3, "ok");
    r = sa_rtable_add_row(t);
    sa_rtable_str(t, r, 0, "=cmd()");
    sa_rtable_num(t, r, 1, 0.126);
    sa_rtable_int(t, r, 2, 1);
    sa_rtable_str(t, r, 3, "<over>");
    r = sa_rtable_add_row(t);
    sa_rtable_str(t, r, 0, "b,\"q\"");
    r = sa_rtable_add_row(t);
    sa_rtable_str(t, r, 0, "total");
    sa_rtable_num(t, r, 1, 12.626);
    sa_rtable_int(t, r, 2, 4);
    sa_rtable_mark_total(t, r);
}

static void test_cells(void **state)
{
    sa_rtable_t t;
    char buf[64];
    (void)state;

    table(&t);
    assert_int_equal(t.nrows, 4);
    assert_int_equal(sa_rtable_cell(&t, 0, 1)->kind, SA_CELL_NUM);
    assert_true(sa_rtable_cell(&t, 0, 1)->d == 12.5);
    assert_int_equal(sa_rtable_cell(&t, 0, 2)->i, 3);
    assert_int_equal(sa_rtable_cell(&t, 2, 1)->kind, SA_CELL_NULL);
    assert_false(sa_rtable_is_total(&t, 0));
    assert_true(sa_rtable_is_total(&t, 3));
    assert_int_equal(sa_rtable_col(&t, "jobs"), 2);
    assert_int_equal(sa_rtable_col(&t, "nope"), SIZE_MAX);
    assert_string_equal(sa_rtable_cell_text(&t, 1, 1, buf, sizeof buf), "0.13"); /* 2 decimals */
    assert_string_equal(sa_rtable_cell_text(&t, 0, 2, buf, sizeof buf), "3");
    assert_string_equal(sa_rtable_cell_text(&t, 2, 2, buf, sizeof buf), "");
    sa_rtable_str(&t, 2, 0, NULL); /* NULL leaves the cell NULL */
    assert_int_equal(sa_rtable_cell(&t, 2, 0)->kind, SA_CELL_NULL);
    sa_rtable_clear(&t);
    assert_int_equal(t.nrows, 0);
}

/* -o lists: widths, case and '-' folded; refused with one line listing what there is. */
static void test_column_lists(void **state)
{
    sa_colspec_t *specs = NULL;
    size_t n = 0;
    sa_rtable_t t;
    sa_rview_t v;
    sa_error_t err;
    (void)state;

    assert_true(sa_colspecs_parse("Account,GPU-Hours%12,status%-9", &specs, &n, &err));
    assert_int_equal(n, 3);
    assert_string_equal(specs[1].name, "gpu_hours");
    assert_int_equal(specs[1].width, 12);
    assert_int_equal(specs[2].width, -9);
    table(&t);
    assert_true(sa_rview_make(&t, specs, n, false, &v, &err));
    assert_int_equal(v.n, 3);
    assert_int_equal(v.col[0], 0);
    assert_int_equal(v.col[1], 1);
    assert_int_equal(v.col[2], 3); /* a long column, asked for */
    assert_int_equal(v.width[1], 12);
    sa_rview_clear(&v);
    assert_true(sa_rview_make(&t, NULL, 0, false, &v, &err)); /* the default: no long columns */
    assert_int_equal(v.n, 3);
    sa_rview_clear(&v);
    assert_true(sa_rview_make(&t, NULL, 0, true, &v, &err)); /* -l */
    assert_int_equal(v.n, 4);
    sa_rview_clear(&v);
    sa_colspecs_free(specs, n);
    specs = NULL;
    n = 0;
    assert_true(sa_colspecs_parse("acount", &specs, &n, &err));
    assert_false(sa_rview_make(&t, specs, n, false, &v, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_non_null(strstr(err.message, "acount"));
    assert_non_null(strstr(err.message, "gpu_hours"));
    assert_null(strchr(err.message, '\n'));
    sa_colspecs_free(specs, n);
    specs = NULL;
    n = 0;
    assert_false(sa_colspecs_parse(" , ,", &specs, &n, &err));
    assert_string_equal(err.message, "-o: no column named");
    assert_false(sa_colspecs_parse("jobs%x", &specs, &n, &err));
    assert_false(sa_colspecs_parse("a b", &specs, &n, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    sa_colspecs_free(specs, n);
    sa_rtable_clear(&t);
}

/* The table: preamble, a blank line, the header, the rows aligned, the total; a view's widths cut with '+'. */
static void test_text_table(void **state)
{
    sa_rtable_t t;
    sa_strv_t pre;
    sa_colspec_t *specs = NULL;
    size_t n = 0;
    sa_rview_t v;
    sa_rtext_opts_t o = {SA_TEXT_TABLE, false, NULL, false, NULL, false};
    sa_error_t err;
    tu_mem_t m;
    char *s;
    (void)state;

    table(&t);
    sa_strv_init(&pre);
    assert_true(sa_strv_push(&pre, "GPU usage, October 2026"));
    assert_true(sa_rtable_write_text(&t, SA_TEXT_TABLE, &pre, false, tu_mem_open(&m)));
    s = tu_mem_close(&m);
    assert_non_null(strstr(s, "GPU usage, October 2026\n\n"));
    assert_non_null(strstr(s, "Account"));
    assert_non_null(strstr(s, "GPU-hours"));
    assert_non_null(strstr(s, "12.50"));
    assert_non_null(strstr(s, "12.63")); /* the total, 12.626 to 2 decimals */
    assert_non_null(strstr(s, "total"));
    free(s);

    assert_true(sa_colspecs_parse("account%5,jobs", &specs, &n, &err));
    assert_true(sa_rview_make(&t, specs, n, false, &v, &err));
    o.view = &v;
    o.no_header = true;
    assert_true(sa_rtable_write(&t, &o, &pre, tu_mem_open(&m)));
    s = tu_mem_close(&m);
    assert_null(strstr(s, "GPU usage")); /* -n: no preamble, no header */
    assert_null(strstr(s, "Account"));
    assert_non_null(strstr(s, "phys+")); /* cut to 5, its last character '+' (sacct) */
    assert_null(strstr(s, "physics"));
    free(s);
    sa_rview_clear(&v);
    sa_colspecs_free(specs, n);
    sa_strv_clear(&pre);
    sa_rtable_clear(&t);
}

/* Parsable: keys (or titles) as the header, no totals, no preamble; -p's trailing delimiter; another delimiter. */
static void test_parsable(void **state)
{
    sa_rtable_t t;
    sa_rtext_opts_t o = {SA_TEXT_PARSABLE, false, NULL, false, NULL, false};
    tu_mem_t m;
    char *s;
    (void)state;

    table(&t);
    assert_true(sa_rtable_write(&t, &o, NULL, tu_mem_open(&m)));
    s = tu_mem_close(&m);
    assert_string_equal(s, "account|gpu_hours|jobs|status\n"
                           "physics|12.50|3|ok\n"
                           "=cmd()|0.13|1|<over>\n"
                           "b,\"q\"|||\n");
    free(s);
    o.trailing = true;
    o.titles = true;
    o.delimiter = ";";
    assert_true(sa_rtable_write(&t, &o, NULL, tu_mem_open(&m)));
    s = tu_mem_close(&m);
    assert_string_equal(s, "Account;GPU-hours;Jobs;Status;\n"
                           "physics;12.50;3;ok;\n"
                           "=cmd();0.13;1;<over>;\n"
                           "b,\"q\";;;;\n");
    free(s);
    sa_rtable_clear(&t);
}

/* CSV (RFC 4180): CRLF, quotes doubled, a text starting with '=' guarded with a quote; numbers as they are. */
static void test_csv(void **state)
{
    sa_rtable_t t;
    tu_mem_t m;
    char *s;
    (void)state;

    table(&t);
    assert_true(sa_rtable_write_text(&t, SA_TEXT_CSV, NULL, false, tu_mem_open(&m)));
    s = tu_mem_close(&m);
    assert_non_null(strstr(s, "account,gpu_hours,jobs,status\r\n"));
    assert_non_null(strstr(s, "physics,12.50,3,ok\r\n"));
    assert_non_null(strstr(s, "\"'=cmd()\""));
    assert_non_null(strstr(s, "\"b,\"\"q\"\"\""));
    assert_null(strstr(s, "total"));
    free(s);
    sa_rtable_clear(&t);
}

/* JSON: rows keyed by column, numbers exact, NULL as null; the totals apart. */
static void test_json(void **state)
{
    sa_rtable_t t;
    json_t *rows, *totals;
    (void)state;

    table(&t);
    rows = sa_rtable_to_json(&t, NULL, false);
    totals = sa_rtable_to_json(&t, NULL, true);
    assert_int_equal(json_array_size(rows), 3);
    assert_int_equal(json_array_size(totals), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "account")), "physics");
    assert_true(json_real_value(json_object_get(json_array_get(rows, 1), "gpu_hours")) == 0.126); /* not rounded */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "jobs")), 3);
    assert_true(json_is_null(json_object_get(json_array_get(rows, 2), "jobs")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(totals, 0), "jobs")), 4);
    json_decref(rows);
    json_decref(totals);
    sa_rtable_clear(&t);
}

/* HTML: escaped, total rows and long columns marked, badges, exact values for sorting. */
static void test_html(void **state)
{
    sa_rtable_t t;
    tu_mem_t m;
    char *s;
    (void)state;

    table(&t);
    sa_rtable_write_html(&t, NULL, "Usage <Oct>", "usage", tu_mem_open(&m));
    s = tu_mem_close(&m);
    assert_non_null(strstr(s, "<table"));
    assert_non_null(strstr(s, "id=\"usage\""));
    assert_non_null(strstr(s, "Usage &lt;Oct&gt;"));
    assert_non_null(strstr(s, "&lt;over&gt;"));
    assert_null(strstr(s, "<over>"));
    assert_non_null(strstr(s, "b,&quot;q&quot;"));
    assert_non_null(strstr(s, "class=\"total\""));
    assert_non_null(strstr(s, "data-v=\"0.126\""));
    assert_non_null(strstr(s, "b-ok"));
    assert_non_null(strstr(s, "</table>"));
    free(s);
    sa_rxml_escape(tu_mem_open(&m), "a&b<c>d\"e'f");
    s = tu_mem_close(&m);
    assert_string_equal(s, "a&amp;b&lt;c&gt;d&quot;e&#39;f");
    free(s);
    sa_rtable_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells),    cmocka_unit_test(test_column_lists), cmocka_unit_test(test_text_table),
        cmocka_unit_test(test_parsable), cmocka_unit_test(test_csv),          cmocka_unit_test(test_json),
        cmocka_unit_test(test_html),
    };
    return tu_run_group_tests("rtable", tests, NULL, NULL);
}
