/*
 * test_report_html.c - slurm-report's HTML page renders in a real browser and shows
 * the numbers: headless Chromium (JavaScript off) loads the golden pages that
 * test_report checks byte for byte against the tool's output, dumps the DOM it
 * built, and takes a screenshot, JavaScript off. The DOM must hold the figures in table cells, the
 * charts, and the hostile names as text (no element injected).
 *
 * Skipped (77, saying why) when Chromium is not installed: `apt-get install chromium`
 * or tools/install-deps. $CHROMIUM names another binary.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *chromium;
static char profile[64];

/* Runs headless Chromium on a page; returns the DOM it dumped (caller frees). */
static char *render(const char *page, const char *screenshot)
{
    char url[512], shot[600], prof[128];
    char *out = NULL, *err = NULL;
    int rc;
    /* JavaScript off (--disable-javascript: the page must read without it) */
    char *argv[] = {(char *)"/usr/bin/timeout", (char *)"120", (char *)chromium, (char *)"--headless",
                    (char *)"--no-sandbox", (char *)"--disable-gpu", (char *)"--no-first-run",
                    (char *)"--disable-javascript", prof, (char *)"--window-size=1280,2000",
                    screenshot ? shot : (char *)"--dump-dom", url, NULL};

    snprintf(url, sizeof url, "file://%s/golden/%s", SA_FIXTURES_DIR, page);
    snprintf(shot, sizeof shot, "--screenshot=%s", screenshot ? screenshot : "");
    snprintf(prof, sizeof prof, "--user-data-dir=%s", profile);
    rc = tu_run(argv, NULL, &out, &err);
    if (rc != 0)
        fail_msg("chromium exited %d on %s: %.2000s", rc, page, err);
    free(err);
    return out;
}

static void expect(const char *dom, const char *what, const char *page)
{
    if (!strstr(dom, what))
        fail_msg("%s as rendered does not show '%s'", page, what);
}

static void test_usage_page(void **state)
{
    char *dom = render("usage-month.html", NULL);
    (void)state;
    /* the figures of the accounting rules (see test_report.c), in numeric cells */
    expect(dom, " data-v=\"386\">386.00</td>", "usage-month.html");
    expect(dom, " data-v=\"95\">95.00</td>", "usage-month.html");
    expect(dom, ">0.0441</td>", "usage-month.html");
    expect(dom, "1 GPU-year = 8760 GPU-hours", "usage-month.html");
    /* the hostile account name is text, not markup */
    expect(dom, "<td>lab,\"q\"&lt;b&gt;&amp;</td>", "usage-month.html");
    assert_null(strstr(dom, "<b>&amp;"));
    /* one chart per account, drawn */
    expect(dom, "<svg", "usage-month.html");
    expect(dom, "beta / lab,\"q\"&lt;b&gt;&amp;", "usage-month.html");
    assert_null(strstr(dom, "<script"));
    free(dom);
}

static void test_allocations_page(void **state)
{
    char shot[96];
    struct stat st;
    char *dom = render("usage-allocations.html", NULL);
    (void)state;
    expect(dom, "<td class=\"b b-over\">over</td>", "usage-allocations.html");
    expect(dom, ">1072.2</td>", "usage-allocations.html");
    expect(dom, "<td class=\"b b-no-award\">no award</td>", "usage-allocations.html");
    expect(dom, "RAC 2026 &lt;b&gt;\"physics\" &amp; co&lt;/b&gt;", "usage-allocations.html");
    expect(dom, "stroke-dasharray=\"6 4\"", "usage-allocations.html"); /* the target lines */
    free(dom);
    /* and it paints: a screenshot of a page with tables and charts is not a blank image */
    snprintf(shot, sizeof shot, "%s/page.png", profile);
    free(render("usage-allocations.html", shot));
    assert_int_equal(stat(shot, &st), 0);
    assert_true(st.st_size > 20000);
    printf("screenshot: %lld bytes\n", (long long)st.st_size);
}

static void test_other_pages(void **state)
{
    char *dom;
    (void)state;
    dom = render("utilization.html", NULL);
    expect(dom, "<td>IDLE+DRAIN</td>", "utilization.html");
    expect(dom, "<td class=\"b b-stranded\">stranded</td>", "utilization.html");
    free(dom);
    dom = render("health.html", NULL);
    expect(dom, "<td>vanished-job</td>", "health.html");
    expect(dom, "<td class=\"b b-error\">error</td>", "health.html");
    expect(dom, "squeue: timed out after 60 s &lt;killed&gt;", "health.html");
    free(dom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_page),
        cmocka_unit_test(test_allocations_page),
        cmocka_unit_test(test_other_pages),
    };
    char cmd[128];
    int rc;

    chromium = getenv("CHROMIUM");
    if (!chromium || !*chromium)
        chromium = "/usr/bin/chromium";
    if (access(chromium, X_OK) != 0) {
        printf("SKIP report_html: %s is not installed (apt-get install chromium, or tools/install-deps); "
               "the HTML pages were not rendered\n", chromium);
        return 77;
    }
    if (access("/usr/bin/timeout", X_OK) != 0) {
        printf("SKIP report_html: /usr/bin/timeout is missing\n");
        return 77;
    }
    strcpy(profile, "/tmp/sa-test-chromium-XXXXXX");
    if (!mkdtemp(profile))
        return 1;
    rc = cmocka_run_group_tests_name("report_html", tests, NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", profile);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", profile);
    return rc;
}
