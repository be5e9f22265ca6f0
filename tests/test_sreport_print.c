/*
 * test_sreport_print.c - report/sa_sreport_print.c without a server: Slurm's print_fields
 * as sreport prints with it (widths, cuts with '+', -p/-P), sreport's time cells and their
 * rounding, the usage columns' widths.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_sreport.h"

/* 2026-10-15T13:45:00Z: the "now" of the grammar's cases */
#define NOW INT64_C(1792071900)

static int64_t iso(const char *s)
{
    int64_t t;
    if (!sa_rtime_parse(s, &t))
        fail_msg("bad time %s", s);
    return t;
}

static char *printed(FILE *f, char **buf)
{
    fclose(f);
    return *buf;
}

/* print_fields: titles, the dashes, padding and cutting, -p and -P. */
static void test_print_fields(void **state)
{
    const sa_srfield_t f[] = {{0, "Cluster", 9}, {0, "Account", -20}, {0, "Used", 8}};
    char *buf = NULL, *s;
    size_t len;
    FILE *m;
    sa_srprint_t p;
    (void)state;

    m = open_memstream(&buf, &len);
    p = (sa_srprint_t){m, SA_SRP_TABLE, SA_SRT_MINS};
    sa_srprint_titles(&p, f, 3);
    sa_srprint_str(&p, &f[0], "averylongname", false); /* cut: its last character shown as '+' */
    sa_srprint_str(&p, &f[1], NULL, false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    s = printed(m, &buf);
    assert_string_equal(s, "  Cluster Account                  Used \n"
                           "--------- -------------------- -------- \n"
                           "averylon+                             2 \n");
    free(s);
    buf = NULL;
    m = open_memstream(&buf, &len);
    p = (sa_srprint_t){m, SA_SRP_ENDING, SA_SRT_SECS};
    sa_srprint_titles(&p, f, 3);
    sa_srprint_str(&p, &f[0], "averylongname", false); /* never cut in -p */
    sa_srprint_str(&p, &f[1], NULL, false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    p.parsable = SA_SRP_NO_ENDING;
    sa_srprint_titles(&p, f, 3);
    sa_srprint_uint(&p, &f[0], 7, false);
    sa_srprint_str(&p, &f[1], "x", false);
    sa_srprint_time(&p, &f[2], 90, 0, true);
    sa_srprint_eol(&p);
    s = printed(m, &buf);
    assert_string_equal(s, "Cluster|Account|Used|\naverylongname||90|\nCluster|Account|Used\n7|x|90\n");
    free(s);
}

/* sreport's time cells: the same double arithmetic, so that halves round to even. */
static void test_time_text(void **state)
{
    static const struct {
        sa_srtime_t t;
        uint64_t v, total;
        const char *want;
    } c[] = {
        {SA_SRT_MINS, 90, 0, "2"},     {SA_SRT_MINS, 30, 0, "0"},       {SA_SRT_MINS, 150, 0, "2"},
        {SA_SRT_MINS, 29, 0, "0"},     {SA_SRT_MINS, 31, 0, "1"},       {SA_SRT_HOURS, 5400, 0, "2"},
        {SA_SRT_HOURS, 1800, 0, "0"},  {SA_SRT_SECS, 777600, 0, "777600"}, {SA_SRT_PERCENT, 1, 3, "33.33%"},
        {SA_SRT_PERCENT, 2, 3, "66.67%"}, {SA_SRT_PERCENT, 5, 0, "500.00%"}, /* a total of 0 divides by 1 */
        {SA_SRT_SECS_PER, 3600, 7200, "3600(50.00%)"}, {SA_SRT_MINS_PER, 3600, 7200, "60(50.00%)"},
        {SA_SRT_HOURS_PER, 36000, 36000, "10(100.00%)"},
    };
    char buf[64];
    (void)state;

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *got = sa_srprint_time_text(c[i].t, c[i].v, c[i].total, buf, sizeof buf);
        if (strcmp(got, c[i].want) != 0)
            fail_msg("case %zu: '%s', want '%s'", i, got, c[i].want);
    }
    /* the usage columns: 8 up to 99,999,999 s, one more each power of ten up to sreport's wrapped limit */
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 0), 8);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 99999999), 8);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS, 100000000), 9);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_HOURS, UINT64_C(1000000000)), 10);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_MINS_PER, 100000000), 18);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_SECS, UINT64_C(1000000000000000000)), 19);
    assert_int_equal(sa_srprint_usage_width(SA_SRT_SECS, UINT64_MAX), 19); /* 1e8 x 1e17 wraps to ~1.59e18 */
    assert_string_equal(sa_srprint_date(iso("2026-10-31T23:59:59"), buf, sizeof buf), "2026-10-31T23:59:59");
}

/* ---- the reports on the dataset ------------------------------------------------------------- */


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_fields),
        cmocka_unit_test(test_time_text),
    };
    return tu_run_group_tests("sreport_print", tests, NULL, NULL);
}
