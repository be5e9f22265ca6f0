/*
 * test_report_html.c - slurm-report's HTML renders in a real browser and shows the
 * numbers: headless Chromium (JavaScript off) loads the golden pages that test_report
 * checks byte for byte against the tool's output, dumps the DOM it built, and takes a
 * screenshot. The DOM must hold the figures in table cells, the charts, and the
 * hostile names as text (no element injected).
 *
 * The site (`slurm-report site`, on the dataset of test_report, ingested here): every
 * page and table file is there; the plain pages have no script at all and nothing is
 * fetched from outside; in Chromium, the default pages do not overflow horizontally
 * at 1280 and 800 px (a probe script, added to a copy of the page, measures), the
 * enhanced page's tables sort and filter and its charts show values on hover, with no
 * error in the console; the usage and queue tables fit their box whole at both widths;
 * screenshots at both widths (kept in $SA_SITE_SHOTS or /tmp/sa-site-shots to look at).
 * The account page's subtitle names its table's months, award charts draw their status
 * band, the queue is pivoted (a column per state).
 *
 * Skipped (77, saying why) when Chromium is not installed: `apt-get install chromium`
 * or tools/install-deps. $CHROMIUM names another binary.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "report_dataset.h"
#include "sa_rutil.h"
#include "sa_time.h"

static const char *chromium;
static char profile[64];
static char site[96];        /* the site written by the test */
static bool have_site;       /* MongoDB was there to write it */
static char *site_err;       /* what slurm-report site -v said */
/* more sites of the dataset: written a month after its data; --months 1 at a month's start; before any data */
static char site_late[128], site_edge[128], site_empty[128];
static int late_rc = -1, edge_rc = -1, empty_rc = -1;
static char *empty_err;
static int64_t site_stored;  /* the documents the site may read by _id: rollups, ingest_days and job documents */

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
    expect(dom, "<td class=\"b b-down\">down</td>", "utilization.html");
    expect(dom, "<td class=\"b b-allocated-stranded\">allocated+stranded</td>", "utilization.html");
    free(dom);
    dom = render("health.html", NULL);
    expect(dom, "<td>vanished-job</td>", "health.html");
    expect(dom, "<td class=\"b b-error\">error</td>", "health.html");
    expect(dom, "squeue: timed out after 60 s &lt;killed&gt;", "health.html");
    free(dom);
}

/* ---- the site ---------------------------------------------------------------------------- */

/*
 * Runs headless Chromium on url at width x height: its DOM (JavaScript on when js) or,
 * with shot, a screenshot. Caller frees the DOM.
 */
static char *browse(const char *url, int width, int height, bool js, const char *shot)
{
    char size[48], prof[128], shotopt[600];
    char *out = NULL, *err = NULL;
    char *argv[16];
    int n = 0, rc;

    snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
    snprintf(prof, sizeof prof, "--user-data-dir=%s", profile);
    snprintf(shotopt, sizeof shotopt, "--screenshot=%s", shot ? shot : "");
    argv[n++] = (char *)"/usr/bin/timeout";
    argv[n++] = (char *)"120";
    argv[n++] = (char *)chromium;
    argv[n++] = (char *)"--headless";
    argv[n++] = (char *)"--no-sandbox";
    argv[n++] = (char *)"--disable-gpu";
    argv[n++] = (char *)"--no-first-run";
    argv[n++] = (char *)"--disable-background-networking";
    argv[n++] = (char *)"--hide-scrollbars";
    if (!js)
        argv[n++] = (char *)"--disable-javascript";
    argv[n++] = prof;
    argv[n++] = size;
    argv[n++] = shot ? shotopt : (char *)"--dump-dom";
    argv[n++] = (char *)url;
    argv[n] = NULL;
    rc = tu_run(argv, NULL, &out, &err);
    if (rc != 0)
        fail_msg("chromium exited %d on %s: %.2000s", rc, url, err);
    free(err);
    return out;
}

/* The text of site/rel (caller frees); fails when it is missing. */
static char *site_file(const char *rel)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", site, rel);
    if (stat(path, &st) != 0)
        fail_msg("the site lacks %s", rel);
    return tu_read_file(path, NULL);
}

/* The probes: early (before site.js: records errors), late (after it: measures and drives the page). */
static const char probe_early[] =
    "window.__errors = [];\n"
    "window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); });\n"
    "(function () { var ce = console.error; console.error = function () {\n"
    "  window.__errors.push(Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; }());\n";
static const char probe_late[] =
    "(function () {\n"
    "  var r = {errors: window.__errors || [], enhanced: document.documentElement.classList.contains('enhanced')};\n"
    "  var de = document.documentElement;\n"
    "  r.scrollWidth = de.scrollWidth; r.clientWidth = de.clientWidth;\n"
    "  r.tables = {}; Array.prototype.forEach.call(document.querySelectorAll('div.wide table[id]'), function (t) {\n"
    "    r.tables[t.id] = {width: Math.ceil(t.getBoundingClientRect().width), box: t.parentElement.clientWidth}; });\n"
    "  var th = document.querySelector('table#t-accounts th[data-key=\"gpu_years\"]');\n"
    "  function col(t, key) { var ths = t.tHead.rows[0].cells, i;\n"
    "    for (i = 0; i < ths.length; i++) if (ths[i].getAttribute('data-key') === key) break;\n"
    "    return Array.prototype.filter.call(t.tBodies[0].rows, function (x) { return !x.classList.contains('total'); })\n"
    "      .map(function (x) { return x.cells[i].getAttribute('data-v') || x.cells[i].textContent; }); }\n"
    "  if (th) { var t = th.closest('table'); r.before = col(t, 'account');\n"
    "    th.click(); r.desc = col(t, 'gpu_years'); r.descSort = th.getAttribute('aria-sort');\n"
    "    th.click(); r.asc = col(t, 'gpu_years'); r.ascSort = th.getAttribute('aria-sort');\n"
    "    r.lastRowTotal = t.tBodies[0].rows[t.tBodies[0].rows.length - 1].classList.contains('total'); }\n"
    "  var f = document.querySelector('input.filter');\n"
    "  if (f) { var ft = f.nextElementSibling.querySelector('table'); f.value = 'RUNNING';\n"
    "    f.dispatchEvent(new Event('input'));\n"
    "    r.filterShown = Array.prototype.filter.call(ft.tBodies[0].rows, function (x) { return !x.hidden; }).length;\n"
    "    r.filterAll = ft.tBodies[0].rows.length; }\n"
    "  var bar = document.querySelector('svg.chart rect.bar');\n"
    "  if (bar) { bar.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));\n"
    "    var tip = document.getElementById('sa-tip');\n"
    "    r.tip = tip && tip.style.display === 'block' ? tip.textContent : null; }\n"
    "  r.svgTitles = Array.prototype.map.call(document.querySelectorAll('svg.chart > title'),\n"
    "    function (t) { return t.textContent; });\n"
    "  r.folded = Array.prototype.filter.call(document.querySelectorAll('details'), function (d) {\n"
    "    return !d.open && d.querySelector('table'); }).length;\n"
    "  var ut = Array.prototype.filter.call(document.querySelectorAll('svg.chart'), function (x) {\n"
    "    var t = x.querySelector(':scope > title'); return t && /GPU time by class/.test(t.textContent); })[0];\n"
    "  if (ut) { var b = ut.querySelector('rect.bar'); b.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));\n"
    "    var tp = document.getElementById('sa-tip'); r.utilTip = tp && tp.style.display === 'block' ? tp.textContent : null; }\n"
    "  var ch = document.querySelector('svg.chart'), tb = document.querySelector('table');\n"
    "  r.firstChart = ch ? Math.round(ch.getBoundingClientRect().top) : -1;\n"
    "  r.firstTable = tb ? Math.round(tb.getBoundingClientRect().top) : -1;\n"
    "  var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(r);\n"
    "  document.body.appendChild(pre);\n"
    "}());\n";

/* Writes text to site/name. */
static void put_site(const char *name, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", site, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/*
 * Loads a copy of page rel with the probes (early in the head, late after every other
 * script) at the width, JavaScript on, and returns what the late probe measured.
 */
static json_t *probe(const char *rel, int width)
{
    char *html = site_file(rel), *copy, *head, *dom, *p, *q, url[600], name[300];
    const char *dir_end = strrchr(rel, '/');
    json_error_t jerr;
    json_t *r;

    head = strstr(html, "</head>");
    assert_non_null(head);
    copy = sa_rprintf("%.*s<script src=\"%sprobe-early.js\"></script>\n</head>%s"
                      "<script src=\"%sprobe-late.js\" defer></script>\n",
                      (int)(head - html), html, dir_end ? "../" : "", head + 7, dir_end ? "../" : "");
    /* the late probe runs after the page's own deferred script: it is the last in the document */
    p = strstr(copy, "</body>");
    assert_non_null(p);
    snprintf(name, sizeof name, "%.*sprobe-%s", dir_end ? (int)(dir_end - rel + 1) : 0, rel,
             dir_end ? dir_end + 1 : rel);
    put_site(name, copy);
    snprintf(url, sizeof url, "file://%s/%s", site, name);
    dom = browse(url, width, 1200, true, NULL);
    p = strstr(dom, "<pre id=\"probe\">");
    if (!p)
        fail_msg("%s at %d px: the probe did not run: %.500s", rel, width, dom);
    p += strlen("<pre id=\"probe\">");
    q = strstr(p, "</pre>");
    *q = '\0';
    /* the DOM escapes &, < and > in text: undo for JSON */
    for (char *s = p, *d = p;; s++, d++) {
        if (strncmp(s, "&amp;", 5) == 0) { *d = '&'; s += 4; }
        else if (strncmp(s, "&lt;", 4) == 0) { *d = '<'; s += 3; }
        else if (strncmp(s, "&gt;", 4) == 0) { *d = '>'; s += 3; }
        else if (strncmp(s, "&quot;", 6) == 0) { *d = '"'; s += 5; }
        else *d = *s;
        if (!*s)
            break;
    }
    r = json_loads(p, 0, &jerr);
    if (!r)
        fail_msg("%s: probe output is not JSON (%s): %s", rel, jerr.text, p);
    snprintf(url, sizeof url, "%s/%s", site, name);
    unlink(url);
    free(dom);
    free(copy);
    free(html);
    return r;
}

/* Writes the site of the dataset with slurm-report (the command line a timer runs). */
static int site_setup(void **state)
{
    mongoc_client_t *client;
    char *db, sqlite[64] = "/tmp/sa-test-site-XXXXXX", *out = NULL, *err = NULL, *alloc, env_uri[600], side[96];
    char *envp[] = {env_uri, NULL};
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    int fd, rc;
    (void)state;

    client = tu_mongo_client("report_html", &db);
    if (!client || !uri)
        return 0; /* the site cases say why they skip */
    fd = mkstemp(sqlite);
    close(fd);
    unlink(sqlite);
    rd_load_dataset(uri, db, sqlite);
    snprintf(site, sizeof site, "%s/site", profile);
    alloc = rd_fixture("allocations-example.json");
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    {
        char *argv[] = {(char *)SA_REPORT_BIN, (char *)"site", site, (char *)"--db", db, (char *)"--sqlite", sqlite,
                        (char *)"--now", (char *)"2026-10-01T08:30:00Z", (char *)"--months", (char *)"2",
                        (char *)"--allocations", alloc, (char *)"-v", NULL};
        rc = tu_run(argv, envp, &out, &err);
    }
    if (rc != 0)
        fprintf(stderr, "slurm-report site exited %d: %s\n", rc, err);
    have_site = rc == 0;
    for (int k = 0; k < 4; k++) {
        static const char *const colls[4] = {"rollups", "ingest_days", "jobs", "jobs_superseded"};
        mongoc_collection_t *c = mongoc_client_get_collection(client, db, colls[k]);
        bson_t none = BSON_INITIALIZER;
        site_stored += mongoc_collection_count_documents(c, &none, NULL, NULL, NULL, NULL);
        mongoc_collection_destroy(c);
    }
    site_err = err;
    err = NULL;
    {
        /* a month after the data (the wall clock of a site read late), --months 1 exactly at a month's start, and a
         * --now before any data: into a directory that exists, which must stay as it was */
        static const char *const nows[3] = {"2026-11-28T12:00:00Z", "2026-11-01T00:00:00Z", "2026-08-01T00:00:00Z"};
        static const char *const months[3] = {"3", "1", "12"};
        char *dirs[3] = {site_late, site_edge, site_empty}, keep[200];
        int *rcs[3] = {&late_rc, &edge_rc, &empty_rc};
        snprintf(site_late, sizeof site_late, "%s/site-late", profile);
        snprintf(site_edge, sizeof site_edge, "%s/site-edge", profile);
        snprintf(site_empty, sizeof site_empty, "%s/site-empty", profile);
        snprintf(keep, sizeof keep, "%s/keep", site_empty);
        mkdir(site_empty, 0755);
        fclose(fopen(keep, "w"));
        for (int k = 0; k < 3; k++) {
            char *argv[] = {(char *)SA_REPORT_BIN, (char *)"site", dirs[k], (char *)"--db", db, (char *)"--sqlite",
                            sqlite, (char *)"--now", (char *)nows[k], (char *)"--months", (char *)months[k],
                            (char *)"--allocations", alloc, NULL};
            free(out);
            free(err);
            out = err = NULL;
            *rcs[k] = tu_run(argv, envp, &out, &err);
            printf("site --now %s --months %s: exit %d %s", nows[k], months[k], *rcs[k], err);
        }
        empty_err = err;
        err = NULL;
    }
    put_site("probe-early.js", probe_early);
    put_site("probe-late.js", probe_late);
    free(out);
    free(err);
    free(alloc);
    unlink(sqlite);
    snprintf(side, sizeof side, "%s-wal", sqlite);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", sqlite);
    unlink(side);
    tu_mongo_drop(client, db);
    mongoc_client_destroy(client);
    free(db);
    return have_site ? 0 : -1;
}

static void need_site(void)
{
    if (!have_site) {
        printf("SKIP: no MongoDB test server (SLURM_TEST_MONGO_URI): the site was not written\n");
        skip();
    }
}

/* Every page in two versions, every table as CSV and JSON; no script in the plain pages, nothing from outside. */
static void test_site_files(void **state)
{
    static const char *const pages[] = {"index", "ingest", "alpha/index", "alpha/2026-09", "alpha/2026-10",
                                        "alpha/account-physics", "beta/index", "beta/account-lab%2C%22q%22%3Cb%3E%26"};
    static const char *const data[] = {"index.clusters", "ingest.runs-alpha", "alpha/index.usage", "alpha/index.health",
                                       "alpha/index.queue", "alpha/index.finished", "alpha/index.utilization", "alpha/index.unusable",
                                       "alpha/2026-09.usage", "alpha/account-physics.trend",
                                       "alpha/account-physics.months", "alpha/account-physics.users"};
    char rel[256];
    (void)state;

    need_site();
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        char *plain, *enh;
        snprintf(rel, sizeof rel, "%s.html", pages[i]);
        plain = site_file(rel);
        snprintf(rel, sizeof rel, "%s.js.html", pages[i]);
        enh = site_file(rel);
        if (strstr(plain, "<script"))
            fail_msg("%s.html has a script", pages[i]);
        assert_non_null(strstr(enh, "site.js\" defer></script>"));
        assert_null(strstr(strstr(enh, "<script") + 1, "<script")); /* one script */
        /* nothing fetched from outside: no src or href with a scheme */
        assert_null(strstr(plain, "src=\"http"));
        assert_null(strstr(plain, "href=\"http"));
        assert_null(strstr(enh, "src=\"http"));
        assert_null(strstr(enh, "href=\"http"));
        free(plain);
        free(enh);
    }
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) {
        json_t *j;
        char *t;
        snprintf(rel, sizeof rel, "%s.csv", data[i]);
        free(site_file(rel));
        snprintf(rel, sizeof rel, "%s.json", data[i]);
        t = site_file(rel);
        j = json_loads(t, 0, NULL);
        if (!json_is_array(json_object_get(j, "rows")))
            fail_msg("%s has no rows", rel);
        json_decref(j);
        free(t);
    }
    {
        /* each document read once: no more from the server than the collections hold, every one kept */
        const char *line = strstr(site_err, "# the site read ");
        long long fetched = -1, kept = -1, hits = -1;
        assert_non_null(line);
        assert_int_equal(sscanf(line, "# the site read %lld documents by _id from MongoDB and kept %lld of them for "
                                      "the run; its reports read them %lld times more", &fetched, &kept, &hits), 3);
        printf("site: %lld documents read from MongoDB (%lld stored), %lld kept, %lld reads from memory\n", fetched,
               (long long)site_stored, kept, hits);
        assert_true(fetched > 0 && fetched <= site_stored);
        assert_int_equal(kept, fetched);
        assert_true(hits > fetched); /* the pages share them: months, awards, accounts */
    }
    {
        char *js = site_file("site.js"), *prom = site_file("metrics.prom");
        assert_null(strstr(js, "http"));
        assert_null(strstr(js, "fetch("));
        assert_null(strstr(js, "XMLHttpRequest"));
        assert_non_null(strstr(prom, "slurm_archive_nodes{cluster=\"alpha\""));
        free(js);
        free(prom);
    }
}

/* The plain pages, JavaScript off: the figures, the hostile name as text, the awards and the GPUs nobody could use. */
static void test_site_plain(void **state)
{
    char url[600], *dom;
    (void)state;

    need_site();
    snprintf(url, sizeof url, "file://%s/alpha/2026-09.html", site);
    dom = browse(url, 1280, 2000, false, NULL);
    expect(dom, "<td class=\"b b-over\">over</td>", "alpha/2026-09.html");
    expect(dom, ">0.0441</td>", "alpha/2026-09.html");
    expect(dom, "<td>node drained</td>", "alpha/2026-09.html"); /* the GPUs nobody could use, and why */
    expect(dom, "<td class=\"b b-allocated-stranded\">allocated+stranded</td>", "alpha/2026-09.html");
    free(dom);
    snprintf(url, sizeof url, "file://%s/beta/index.html", site);
    dom = browse(url, 1280, 2000, false, NULL);
    expect(dom, "lab,\"q\"&lt;b&gt;&amp;", "beta/index.html");
    assert_null(strstr(dom, "<b>&amp;"));
    free(dom);
}

/* No horizontal overflow at 1280 and 800 px on the default (plain) pages; screenshots to look at. */
static void test_site_fits(void **state)
{
    static const char *const pages[] = {"index.html", "alpha/index.html", "alpha/2026-09.html", "ingest.html",
                                        "alpha/account-physics.html"};
    static const int widths[2] = {1280, 800};
    const char *shots = getenv("SA_SITE_SHOTS") ? getenv("SA_SITE_SHOTS") : "/tmp/sa-site-shots";
    (void)state;

    need_site();
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        for (int w = 0; w < 2; w++) {
            json_t *r = probe(pages[i], widths[w]);
            json_int_t sw = json_integer_value(json_object_get(r, "scrollWidth"));
            json_int_t cw = json_integer_value(json_object_get(r, "clientWidth"));
            printf("%s at %d px: page %lld px wide in a %lld px window\n", pages[i], widths[w], (long long)sw,
                   (long long)cw);
            if (sw > cw)
                fail_msg("%s overflows at %d px: %lld > %lld", pages[i], widths[w], (long long)sw, (long long)cw);
            /* the tables a reader needs whole: none wider than its box (it would scroll, its last columns hidden) */
            {
                static const char *const whole[] = {"t-usage", "t-queue", "t-finished"};
                json_t *tables = json_object_get(r, "tables");
                for (size_t k = 0; k < sizeof whole / sizeof whole[0]; k++) {
                    json_t *tb = json_object_get(tables, whole[k]);
                    json_int_t tw, bw;
                    if (!tb)
                        continue;
                    tw = json_integer_value(json_object_get(tb, "width"));
                    bw = json_integer_value(json_object_get(tb, "box"));
                    printf("  %s: %lld px in a %lld px box\n", whole[k], (long long)tw, (long long)bw);
                    if (tw > bw)
                        fail_msg("%s at %d px: table %s is %lld px wide in a %lld px box (its last columns hidden)",
                                 pages[i], widths[w], whole[k], (long long)tw, (long long)bw);
                }
                if (strcmp(pages[i], "alpha/index.html") == 0)
                    assert_non_null(json_object_get(tables, "t-usage")); /* the check above means something */
            }
            if (strcmp(pages[i], "alpha/index.html") == 0) {
                /* the plots over time: utilization by day, the queue waits, the scheduler, their tables folded */
                static const char *const plots[] = {"alpha: GPU time by class, stacked by day",
                                                    "alpha: CPU time by class, stacked by day",
                                                    "alpha: memory time by class, stacked by day",
                                                    "Median queue wait (start - eligible) of the runs that started each day",
                                                    "p90 queue wait (start - eligible) of the runs that started each day",
                                                    "alpha: jobs (sdiag)", "alpha: scheduling cycles",
                                                    "alpha: RPCs per hour by message type",
                                                    "alpha: RPCs per hour by user"};
                json_t *titles = json_object_get(r, "svgTitles");
                for (size_t k = 0; k < sizeof plots / sizeof plots[0]; k++) {
                    bool found = false;
                    for (size_t q = 0; q < json_array_size(titles); q++)
                        found = found || strcmp(json_string_value(json_array_get(titles, q)), plots[k]) == 0;
                    if (!found)
                        fail_msg("%s at %d px does not draw the plot %s", pages[i], widths[w], plots[k]);
                }
                assert_int_equal(json_integer_value(json_object_get(r, "folded")), 2);
            }
            if (strcmp(pages[i], "alpha/index.html") == 0) {
                /* the cluster page opens on the award charts: the first thing under its heading, above any table */
                json_int_t ch = json_integer_value(json_object_get(r, "firstChart"));
                json_int_t tb = json_integer_value(json_object_get(r, "firstTable"));
                printf("  first chart at %lld px, first table at %lld px\n", (long long)ch, (long long)tb);
                if (ch < 0 || ch > 300 || ch > tb)
                    fail_msg("%s at %d px: the award charts begin at %lld px (the first table at %lld px)", pages[i],
                             widths[w], (long long)ch, (long long)tb);
            }
            assert_int_equal(json_array_size(json_object_get(r, "errors")), 0);
            json_decref(r);
        }
    }
    if (mkdir(shots, 0755) != 0 && errno != EEXIST)
        fail_msg("%s: %s", shots, strerror(errno));
    for (int w = 0; w < 2; w++) {
        char url[600], shot[600];
        struct stat st;
        snprintf(url, sizeof url, "file://%s/alpha/account-physics.html", site);
        snprintf(shot, sizeof shot, "%s/alpha-account-physics-%d.png", shots, widths[w]);
        free(browse(url, widths[w], 2400, false, shot));
        assert_int_equal(stat(shot, &st), 0);
        assert_true(st.st_size > 20000);
        printf("screenshot %s: %lld bytes\n", shot, (long long)st.st_size);
    }
    for (int w = 0; w < 2; w++) {
        for (int js = 0; js < 2; js++) {
            char url[600], shot[600];
            struct stat st;
            snprintf(url, sizeof url, "file://%s/alpha/index%s.html", site, js ? ".js" : "");
            snprintf(shot, sizeof shot, "%s/alpha-index%s-%d.png", shots, js ? "-js" : "", widths[w]);
            free(browse(url, widths[w], 2400, js, shot));
            assert_int_equal(stat(shot, &st), 0);
            assert_true(st.st_size > 20000);
            printf("screenshot %s: %lld bytes\n", shot, (long long)st.st_size);
        }
    }
}

/*
 * What the pages say agrees with what they show: the account page's subtitle names the
 * months of its month-by-month table; the charts of awards draw the status band (80 to
 * 120 % of the target); the queue is a row per partition and account with a column per
 * state, not a row per state repeating the cluster.
 */
static void test_site_says_what_it_shows(void **state)
{
    char url[600], *dom, *p, first[16] = "", last[16] = "", *html;
    json_t *months, *rows, *row, *queue;
    size_t i;
    (void)state;

    need_site();
    snprintf(url, sizeof url, "file://%s/alpha/account-physics.html", site);
    dom = browse(url, 800, 2000, false, NULL);
    months = json_loads(html = site_file("alpha/account-physics.months.json"), 0, NULL);
    free(html);
    rows = json_object_get(months, "rows");
    assert_true(json_array_size(rows) >= 2);
    snprintf(first, sizeof first, "%s", json_string_value(json_object_get(json_array_get(rows, 0), "month")));
    snprintf(last, sizeof last, "%s",
             json_string_value(json_object_get(json_array_get(rows, json_array_size(rows) - 1), "month")));
    p = strstr(dom, "<p class=\"meta\">");
    assert_non_null(p);
    {
        char want[64];
        snprintf(want, sizeof want, "<p class=\"meta\">%s to %s</p>", first, last);
        printf("account page: %.40s; its table: %s to %s\n", p, first, last);
        if (strncmp(p, want, strlen(want)) != 0)
            fail_msg("the account page's subtitle is not its table's months (%s): %.60s", want, p);
    }
    /* the award's chart: its band, between 80 and 120 % of the target to date */
    expect(dom, "<polygon class=\"band\"", "alpha/account-physics.html");
    expect(dom, "on track: 80 to 120 % of the target to date", "alpha/account-physics.html");
    free(dom);
    json_decref(months);

    queue = json_loads(html = site_file("alpha/index.queue.json"), 0, NULL);
    free(html);
    rows = json_object_get(queue, "rows");
    assert_true(json_array_size(rows) >= 2);
    json_array_foreach(rows, i, row) {
        assert_null(json_object_get(row, "cluster"));
        assert_null(json_object_get(row, "state"));
        for (size_t k = 0; k < i; k++) {
            json_t *o = json_array_get(rows, k);
            if (strcmp(json_string_value(json_object_get(o, "by")), json_string_value(json_object_get(row, "by"))) == 0 &&
                strcmp(json_string_value(json_object_get(o, "key")), json_string_value(json_object_get(row, "key"))) == 0)
                fail_msg("the queue has two rows for %s %s", json_string_value(json_object_get(row, "by")),
                         json_string_value(json_object_get(row, "key")));
        }
    }
    assert_non_null(json_object_get(json_array_get(rows, 0), "running"));
    assert_non_null(json_object_get(json_array_get(rows, 0), "running_gpus"));
    json_decref(queue);
}

/*
 * The ingester's page shows every phase a run records and its total: beta's run of 9 s
 * spent 7.9 s in the Prometheus import (the dataset), which the page's table and its
 * chart of each run's phases show, with the run's total, 9,000 ms.
 */
static void test_site_ingest(void **state)
{
    static const char *const phases[] = {"lock_ms", "connect_ms", "capture_ms", "exec_ms", "parse_ms", "sqlite_ms",
                                         "mongo_ms", "land_ms", "prometheus_ms", "finish_ms"};
    char *text = NULL;
    json_t *j, *row;
    (void)state;

    need_site();
    text = site_file("ingest.runs-beta.json");
    j = json_loads(text, 0, NULL);
    row = json_array_get(json_object_get(j, "rows"), 0);
    assert_non_null(row);
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        if (!json_is_number(json_object_get(row, phases[i])))
            fail_msg("ingest.runs-beta.json lacks the phase %s", phases[i]);
    assert_true(json_number_value(json_object_get(row, "prometheus_ms")) == 7900);
    assert_true(json_number_value(json_object_get(row, "total_ms")) == 9000);
    json_decref(j);
    free(text);
    text = site_file("ingest.html");
    expect(text, "data-key=\"prometheus_ms\">prometheus ms</th>", "ingest.html");
    expect(text, " prometheus: 7900 milliseconds</title></rect>", "ingest.html"); /* its bar in the chart */
    expect(text, ">prometheus</text>", "ingest.html");                        /* and in its legend */
    free(text);
}

/* Whether the site at dir has the page rel. */
static bool has_page(const char *dir, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return access(path, F_OK) == 0;
}

/* The text of dir/rel (caller frees); fails when it is missing. */
static char *read_in(const char *dir, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (access(path, R_OK) != 0)
        fail_msg("%s is missing", path);
    return tu_read_file(path, NULL);
}

/*
 * The months a site shows: written a month after its data (2026-11-28), alpha (observed
 * to 2026-10-01T08:00) has pages for 2026-09 and 2026-10 (observed: it has data), none for
 * November (nothing observed), and its page lands on September (October has less than a
 * week); beta (observed to 2026-09-30) lands on September, with its use. --months 1
 * exactly at a month's start writes the month before it; a --now before any data is
 * refused (exit 2, one line) before anything is written: the directory stays as it was.
 */
static void test_site_months(void **state)
{
    char *html, *json;
    json_t *j;
    (void)state;

    need_site();
    assert_int_equal(late_rc, 0);
    assert_true(has_page(site_late, "alpha/2026-09.html"));
    assert_true(has_page(site_late, "alpha/2026-10.html"));
    assert_false(has_page(site_late, "alpha/2026-11.html"));
    assert_true(has_page(site_late, "beta/2026-09.html"));
    assert_false(has_page(site_late, "beta/2026-10.html"));
    html = read_in(site_late, "alpha/index.html");
    expect(html, "<h2>GPU usage against the awards, 2026-09 (the charts: each award over its period)</h2>",
           "alpha/index.html");
    free(html);
    html = read_in(site_late, "beta/index.html");
    expect(html, "<h2>GPU usage against the awards, 2026-09 (the charts: each award over its period)</h2>",
           "beta/index.html");
    free(html);
    json = read_in(site_late, "beta/index.usage.json");
    j = json_loads(json, 0, NULL);
    /* beta's September: physics 24 GPU-hours (the dataset's comment) */
    assert_true(json_number_value(json_object_get(json_array_get(json_object_get(j, "totals"), 0), "gpu_years")) >
                0.002);
    json_decref(j);
    free(json);

    assert_int_equal(edge_rc, 0);
    assert_true(has_page(site_edge, "alpha/2026-10.html"));
    assert_false(has_page(site_edge, "alpha/2026-11.html"));

    assert_int_equal(empty_rc, 2);
    expect(empty_err, "the window is empty: no cluster was observed before 2026-08-01T00:00:00Z", "site --now");
    assert_true(strchr(empty_err, '\n') == strrchr(empty_err, '\n')); /* one line */
    assert_true(has_page(site_empty, "keep"));
    assert_false(has_page(site_empty, "index.html"));
    {
        char cmd[300], *out = NULL, *err = NULL;
        char *argv[] = {(char *)"/bin/sh", (char *)"-c", cmd, NULL};
        snprintf(cmd, sizeof cmd, "ls -d '%s'.new-* 2>/dev/null | wc -l", site_empty);
        assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
        assert_int_equal(atoi(out), 0); /* nothing begun */
        free(out);
        free(err);
    }
}

/*
 * The period a heading names is the one its section covers: the account page's trend
 * (from the award's start) and its users' table, whose preambles say their windows.
 */
static void test_site_headings(void **state)
{
    static const char *const headings[2] = {"<h2>Trend from the award&#39;s start, ", "<h2>Users and GPU types (GPUs, "
                                                                                     "CPUs, memory), "};
    char *html;
    (void)state;

    need_site();
    html = read_in(site_late, "alpha/account-physics.html");
    for (int k = 0; k < 2; k++) {
        const char *h = strstr(html, headings[k]), *p;
        char start[32], end[32], want[64];
        int64_t e;
        if (!h)
            fail_msg("alpha/account-physics.html has no heading %s", headings[k]);
        p = strstr(h, " from 20"); /* the preamble's window (the heading may say "from" too) */
        assert_non_null(p);
        assert_int_equal(sscanf(p, " from %31s to %31s", start, end), 2);
        assert_true(sa_time_parse_iso(end, &e));
        /* whole months: "YYYY-MM to YYYY-MM", the last the month of the window's last second */
        snprintf(want, sizeof want, "%s%.7s to %.7s</h2>", headings[k], start, sa_riso(e - 1));
        printf("  %.60s | window %s to %s\n", h, start, end);
        if (strncmp(h, want, strlen(want)) != 0)
            fail_msg("the heading does not name its section's window %s to %s: %.120s", start, end, h);
    }
    free(html);
}

/* The enhanced page: its script runs without an error, sorts, filters and shows chart values on hover. */
static void test_site_enhanced(void **state)
{
    json_t *r, *desc, *asc;
    double prev;
    size_t i;
    (void)state;

    need_site();
    r = probe("alpha/index.js.html", 1280);
    {
        char *text = json_dumps(r, JSON_COMPACT);
        printf("probe: %s\n", text);
        free(text);
    }
    assert_int_equal(json_array_size(json_object_get(r, "errors")), 0);
    assert_true(json_is_true(json_object_get(r, "enhanced")));
    assert_true(json_integer_value(json_object_get(r, "scrollWidth")) <=
                json_integer_value(json_object_get(r, "clientWidth")));
    desc = json_object_get(r, "desc");
    asc = json_object_get(r, "asc");
    assert_true(json_array_size(desc) >= 3);
    assert_string_equal(json_string_value(json_object_get(r, "descSort")), "descending");
    assert_string_equal(json_string_value(json_object_get(r, "ascSort")), "ascending");
    prev = 1e300;
    for (i = 0; i < json_array_size(desc); i++) {
        double v = strtod(json_string_value(json_array_get(desc, i)), NULL);
        assert_true(v <= prev);
        prev = v;
    }
    for (i = 0; i < json_array_size(asc); i++)
        assert_string_equal(json_string_value(json_array_get(asc, i)),
                            json_string_value(json_array_get(desc, json_array_size(desc) - 1 - i)));
    assert_true(json_is_true(json_object_get(r, "lastRowTotal")));
    assert_true(json_integer_value(json_object_get(r, "filterShown")) <
                json_integer_value(json_object_get(r, "filterAll")));
    assert_non_null(json_string_value(json_object_get(r, "tip")));
    assert_non_null(strstr(json_string_value(json_object_get(r, "tip")), "GPU-years"));
    /* a bar of utilization by day, on hover: its day, its class and its hours */
    assert_non_null(json_string_value(json_object_get(r, "utilTip")));
    assert_non_null(strstr(json_string_value(json_object_get(r, "utilTip")), " GPU-hours"));
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_page),
        cmocka_unit_test(test_allocations_page),
        cmocka_unit_test(test_other_pages),
        cmocka_unit_test(test_site_files),
        cmocka_unit_test(test_site_plain),
        cmocka_unit_test(test_site_fits),
        cmocka_unit_test(test_site_says_what_it_shows),
        cmocka_unit_test(test_site_months),
        cmocka_unit_test(test_site_ingest),
        cmocka_unit_test(test_site_headings),
        cmocka_unit_test(test_site_enhanced),
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
    rc = tu_run_group_tests("report_html", tests, site_setup, NULL);
    free(site_err);
    free(empty_err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", profile);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", profile);
    return rc;
}
