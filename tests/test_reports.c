/*
 * test_reports.c - report/sa_reports.c, the one table of slurm-report's reports: every
 * report named once, found by its name (and nothing else), with a run function when it is
 * a report of one document; each table's columns with unique keys that -o can ask for
 * (sa_colspecs_parse and a view find every one, by key and in upper case) and a title.
 */
#include "testutil.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sa_report.h"

static void test_every_report(void **state)
{
    static const char *const names[] = {"usage", "utilization", "health", "current", "site",
                                        "efficiency", "job", "jobs", "top", "waits", "scheduler", "sreport"};
    size_t n;
    const sa_report_def_t *all = sa_report_all(&n);
    (void)state;

    assert_int_equal(n, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(all[i].name, names[i]);
        assert_ptr_equal(sa_report_find(names[i]), &all[i]);
        for (size_t k = i + 1; k < n; k++)
            assert_string_not_equal(all[i].name, all[k].name);
        if (strcmp(names[i], "site") == 0) {
            assert_null(all[i].run); /* the site is many documents */
            assert_null(all[i].cols);
        } else if (strcmp(names[i], "sreport") == 0) {
            assert_non_null(all[i].run); /* one document, in sreport's own columns (Format=), not -o's */
            assert_null(all[i].cols);
        } else {
            assert_non_null(all[i].run);
            assert_non_null(all[i].cols);
        }
    }
    assert_null(sa_report_find("Usage"));
    assert_null(sa_report_find("usage "));
    assert_null(sa_report_find(""));
    assert_null(sa_report_find(NULL));
}

/* Every column of every table: a key -o can name (found by key and in upper case), unique, and a title. */
static void test_columns_askable(void **state)
{
    size_t n;
    const sa_report_def_t *all = sa_report_all(&n);
    (void)state;

    for (size_t i = 0; i < n; i++) {
        size_t nc;
        const sa_col_t *c = sa_report_columns(all[i].name, &nc);
        sa_rtable_t t;
        if (!all[i].cols) {
            assert_null(c);
            assert_int_equal(nc, 0);
            continue;
        }
        assert_non_null(c);
        assert_true(nc > 0);
        sa_rtable_init(&t, c, nc);
        for (size_t k = 0; k < nc; k++) {
            char upper[128];
            sa_colspec_t *specs = NULL;
            size_t ns = 0;
            sa_rview_t v;
            sa_error_t err;
            assert_true(c[k].key && *c[k].key && c[k].title && *c[k].title);
            for (size_t j = k + 1; j < nc; j++)
                if (strcmp(c[k].key, c[j].key) == 0)
                    fail_msg("%s: column %s twice", all[i].name, c[k].key);
            for (size_t j = 0; j <= strlen(c[k].key); j++)
                upper[j] = (char)toupper((unsigned char)c[k].key[j]);
            if (!sa_colspecs_parse(upper, &specs, &ns, &err))
                fail_msg("%s: -o %s: %s", all[i].name, upper, err.message);
            if (!sa_rview_make(&t, specs, ns, false, &v, &err))
                fail_msg("%s: -o %s: %s", all[i].name, upper, err.message);
            assert_int_equal(v.n, 1);
            assert_int_equal(v.col[0], k);
            sa_rview_clear(&v);
            sa_colspecs_free(specs, ns);
        }
        sa_rtable_clear(&t);
    }
    {
        size_t nc = 99;
        assert_null(sa_report_columns("nope", &nc));
        assert_int_equal(nc, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_report),
        cmocka_unit_test(test_columns_askable),
    };
    return tu_run_group_tests("reports", tests, NULL, NULL);
}
