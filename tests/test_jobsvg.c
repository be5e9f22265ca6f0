/*
 * test_jobsvg.c - report/sa_jobsvg.c, `slurm-report job --svg`: panels drawn from a series,
 * from the stored summary (mean, median, maximum; a figure not stored is not drawn), and for
 * a run with neither, each well-formed and escaped; no run at all said; a Prometheus that
 * refuses the connection fails the fetch with one line naming the URL without its password.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sa_jobsvg.h"

static void test_panels(void **state)
{
    sa_jsvg_run_t *runs = calloc(3, sizeof *runs);
    tu_mem_t m;
    char *svg, why[200];
    (void)state;

    assert_non_null(runs);
    runs[0].label = strdup("c 1084 run 1 (2 x a100) <x>");
    runs[0].start = 1791072000;
    runs[0].end = 1791075600;
    runs[0].pts = calloc(3, sizeof *runs[0].pts);
    runs[0].n = runs[0].cap = 3;
    runs[0].pts[0] = (sa_jsvg_pt_t){1791072000, 10};
    runs[0].pts[1] = (sa_jsvg_pt_t){1791073800, 55.5};
    runs[0].pts[2] = (sa_jsvg_pt_t){1791075600, 90};
    runs[0].source = "Prometheus query_range";
    runs[1].label = strdup("c 1084 run 2");
    runs[1].start = 1791075600;
    runs[1].end = 1791079200;
    runs[1].has_summary = true;
    runs[1].mean = 42.5;
    runs[1].p50 = -1; /* not stored */
    runs[1].max = 97;
    runs[1].source = "stored summary";
    runs[2].label = strdup("c 1084 run 3");
    runs[2].start = 1791079200;
    runs[2].end = 1791082800;
    runs[2].source = "none";

    sa_jsvg_write(tu_mem_open(&m), "job 1084 & co", runs, 3);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "<title>job 1084 &amp; co</title>"));
    assert_non_null(strstr(svg, "(2 x a100) &lt;x&gt;"));
    assert_non_null(strstr(svg, "42.5%"));  /* the mean's line */
    assert_non_null(strstr(svg, "97.0%"));  /* the maximum's */
    assert_non_null(strstr(svg, "no GPU utilisation known")); /* run 3 */
    free(svg);
    sa_jsvg_write(tu_mem_open(&m), "job 9", NULL, 0);
    svg = tu_mem_close(&m);
    if (!tu_xml_well_formed(svg, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(svg, "no run with GPUs"));
    free(svg);
    sa_jsvg_free(runs, 3);
    sa_jsvg_free(NULL, 0);
}

/* A server that refuses the connection: false, SA_ERR_IO, the URL named without its password. */
static void test_fetch_refused(void **state)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char url[128];
    sa_jsvg_run_t run = {0};
    sa_error_t err;
    (void)state;

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0); /* bound, never listening: refused */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    snprintf(url, sizeof url, "http://u:s3cr3t@127.0.0.1:%d/", ntohs(a.sin_port));
    run.start = 1791072000;
    run.end = 1791075600;
    sa_error_clear(&err);
    assert_false(sa_jsvg_fetch(&run, url, NULL, 1084, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_non_null(strstr(err.message, "127.0.0.1"));
    assert_null(strstr(err.message, "s3cr3t"));
    assert_null(strchr(err.message, '\n'));
    assert_int_equal(run.n, 0);
    free(run.pts);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panels),
        cmocka_unit_test(test_fetch_refused),
    };
    return tu_run_group_tests("jobsvg", tests, NULL, NULL);
}
