/*
 * test_top.c - slurm-report's TRES, capacity and top figures (issue 23) on the report
 * dataset (fixtures/report-dataset.json, tests/report_dataset.h), checked against
 * figures computed by hand (the arithmetic in the comments) and, for each sum, against
 * the --from-jobs path byte for byte: usage -T cpu,mem,gres/gpu,billing (runs without
 * GPUs count), usage -t percent of capacity, core-years awards, utilization --summary,
 * top.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "report_dataset.h"

static char *uri;
static char *db_name;
static mongoc_client_t *client;
static char sqlite_path[64] = "";

static int group_setup(void **state)
{
    (void)state;
    rd_setup(uri, db_name, sqlite_path, "/tmp/sa-test-top-XXXXXX");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    rd_remove_sqlite(sqlite_path);
    return 0;
}

/* Runs slurm-report on the dataset (--db, --sqlite, --now added) with args; returns the exit code. */
static int run(const char *const *args, char **out, char **err)
{
    const char *first[] = {"--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z", NULL};
    int rc = tu_run_report(SA_REPORT_BIN, uri, NULL, first, args, out, err);
    if (getenv("SA_TOP_SHOW"))
        fprintf(stderr, "---- exit %d\n%s%s", rc, *out, *err);
    return rc;
}

/* The output of a run that must succeed (caller frees). */
static char *ok_run(const char *const *args)
{
    char *out, *err;
    int rc = run(args, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(err);
    return out;
}

/* Fails unless s holds want, showing s. */
static void expect_in(const char *s, const char *want)
{
    if (!strstr(s, want))
        fail_msg("'%s' not in:\n%s", want, s);
}

/* args, then the same with --from-jobs: the same bytes. Returns the first output (caller frees). */
static char *same_from_jobs(const char *const *args)
{
    const char *a[40];
    size_t n = 0;
    char *x, *y;
    for (; args[n] && n < 38; n++)
        a[n] = args[n];
    a[n++] = "--from-jobs";
    a[n] = NULL;
    x = ok_run(args);
    y = ok_run(a);
    if (strcmp(x, y) != 0)
        fail_msg("rollups and --from-jobs differ:\n%s\n----\n%s", x, y);
    free(y);
    return x;
}

/* Runs args (which must fail) and checks the exit code and the one line on stderr. */
static void expect_refused(const char *const *args, int code, const char *want)
{
    char *out, *err;
    int rc = run(args, &out, &err);
    if (rc != code || !strstr(err, want) || strchr(err, '\n') != err + strlen(err) - 1 || *out)
        fail_msg("exit %d (want %d), stdout '%s', stderr '%s' (want one line with '%s')", rc, code, out, err, want);
    free(out);
    free(err);
}

/*
 * usage -T: beta's two jobs of 2026-09 (fixtures/report-sacct-beta.txt), each 1 GPU,
 * 8 CPUs, 32 GB, billing 8:
 *   201 physics, 24 h: 24 GPU-h, 8 x 24 = 192 core-h, 32 x 24 = 768 GB-h, 8 x 24 = 192 billing-h;
 *   202 lab,...,  3 h:  3 GPU-h, 8 x 3 = 24 core-h, 32 x 3 = 96 GB-h, 24 billing-h.
 * Years: / 8760 (192 / 8760 = 0.0219; 768 / 8760 = 0.0877).
 */
static void test_usage_tres(void **state)
{
    const char *a[] = {"usage", "-M", "beta", "--month", "2026-09", "-T", "cpu,mem,gres/gpu,billing", "-P", NULL};
    const char *h[] = {"usage", "-M", "beta", "--month", "2026-09", "-T", "cpu", "-t", "hours", "-n", NULL};
    char *out;
    (void)state;

    out = same_from_jobs(a);
    expect_in(out, "cluster|account|gpu_hours|gpu_years|core_hours|core_years|mem_gb_hours|mem_gb_years|"
                   "billing_hours|billing_years\n");
    expect_in(out, "beta|physics|24.00|0.0027|192.00|0.0219|768.00|0.0877|192.00|0.0219\n");
    expect_in(out, "beta|lab,\"q\"<b>&|3.00|0.0003|24.00|0.0027|96.00|0.0110|24.00|0.0027\n");
    free(out);
    /* -T cpu alone: no GPU column; the header says the unit */
    out = same_from_jobs(h);
    expect_in(out, "beta  physics      192.00\n");
    expect_in(out, "beta  (total)      216.00\n"); /* 192 + 24 */
    if (strstr(out, "GPU-hours"))
        fail_msg("a GPU column with -T cpu:\n%s", out);
    free(out);
    {
        const char *v[] = {"usage", "-M", "beta", "--month", "2026-09", "-T", "cpu", "-t", "hours", NULL};
        out = ok_run(v);
        expect_in(out, "TRES cpu: core-hours");
        free(out);
    }
    /* JSON: each TRES and its unit, the rows' keys */
    {
        const char *j[] = {"usage", "-M", "beta", "--month", "2026-09", "-T", "cpu,mem", "--json", NULL};
        out = same_from_jobs(j);
        expect_in(out, "\"name\": \"cpu\",\n      \"unit\": \"core-years\"");
        expect_in(out, "\"name\": \"mem\",\n      \"unit\": \"GB-years\"");
        expect_in(out, "\"core_hours\": 192.0");
        free(out);
    }
    /* a TRES sreport does not name: exit 2 */
    {
        const char *bad[] = {"usage", "--month", "2026-09", "-T", "cpu,licenses", NULL};
        expect_refused(bad, 2, "-T: unknown TRES 'licenses'");
    }
}

/*
 * A run without GPUs counts for CPU, memory and billing: alpha's 105 (alice, physics,
 * 32 CPUs, 64 GB, billing 32 on cpu01) on 2026-09-02 alone: 32 x 24 = 768 core-hours,
 * 64 x 24 = 1536 GB-hours, 32 x 24 = 768 billing-hours, no GPU-hour; GPU type (none).
 */
static void test_usage_cpu_only(void **state)
{
    const char *a[] = {"usage", "-M", "alpha", "-S", "2026-09-02", "-E", "2026-09-03", "-T", "cpu,mem,billing,gres/gpu",
                       "-t", "hours", "--by", "account,user,gpu-type", "-P", NULL};
    const char *g[] = {"usage", "-M", "alpha", "-S", "2026-09-02", "-E", "2026-09-03", "-t", "hours", "-P", NULL};
    char *out;
    (void)state;

    out = same_from_jobs(a);
    expect_in(out, "alpha|physics|alice|(none)|0.00|0.0000|768.00|0.0877|1536.00|0.1753|768.00|0.0877\n");
    free(out);
    /* GPUs alone (no -T): the run counts nowhere, as before */
    out = same_from_jobs(g);
    if (strstr(out, "physics"))
        fail_msg("a run without GPUs in GPU usage:\n%s", out);
    free(out);
}

/*
 * -t percent is of the cluster's capacity (the time series), as sreport's. alpha from
 * 2026-09-09T22:00 to 2026-09-10T02:00 (4 h of snapshots of report-nodes-alpha-a.txt):
 * GPUs 4 + 4 + 4 + 4 (mig01) + 2 (gpux1) = 18 x 4 h = 72 GPU-hours; CPUs 64 x 3 + 32 + 16
 * + 128 = 368 x 4 h = 1472 core-hours. bob's runs in it: 102 (2 h100 GPUs, 8 CPUs) from
 * 00:00 to 02:00 = 4 GPU-h, 16 core-h; 110 (1 unknown GPU, 4 CPUs) from 01:00 = 1 GPU-h,
 * 4 core-h. Percent: 4 / 72 = 5.6 %, 1 / 72 = 1.4 %; 16 / 1472 = 1.1 %, 4 / 1472 = 0.3 %;
 * the total 5 / 72 = 6.9 %, 20 / 1472 = 1.4 %.
 */
static void test_usage_percent_of_capacity(void **state)
{
    const char *a[] = {"usage", "-M", "alpha", "-S", "2026-09-09T22:00", "-E", "2026-09-10T02:00", "-T", "gres/gpu,cpu",
                       "-t", "percent", "--by", "user,gpu-type", "-P", NULL};
    const char *v[] = {"usage", "-M", "alpha", "-S", "2026-09-09T22:00", "-E", "2026-09-10T02:00", "-t", "percent",
                       "-A", "chem", NULL};
    char *out;
    (void)state;

    out = same_from_jobs(a);
    expect_in(out, "alpha|bob|h100|4.00|0.0005|5.6|16.00|0.0018|1.1\n");
    expect_in(out, "alpha|bob|unknown|1.00|0.0001|1.4|4.00|0.0005|0.3\n");
    free(out);
    out = ok_run(v);
    expect_in(out, "alpha    (total)           6.9\n");
    expect_in(out, "Unit: percent of the cluster's GPU capacity in the window");
    expect_in(out, "Percent: of the cluster's capacity over the window, as sreport's");
    free(out);
    /* no time series in the window (beta), or memory (the series has no memory capacity): one line, exit 2 */
    {
        const char *b[] = {"usage", "-M", "beta", "--month", "2026-09", "-t", "percent", NULL};
        const char *m[] = {"usage", "-M", "alpha", "--month", "2026-09", "-T", "mem", "-t", "percent", NULL};
        expect_refused(b, 2, "-t percent cannot be computed: the time series has no snapshot of cluster beta");
        expect_refused(m, 2, "-t percent cannot be computed for mem");
    }
}

/*
 * A core-years award next to a GPU-years one (beta physics, 2026-09): 192 core-hours =
 * 192 / 8760 = 0.0219 core-years; as of beta's last observation 2026-09-30T00:00 the
 * target is 0.1 x 29 / 30 = 0.0967 core-years, 0.0219 / 0.0967 = 22.7 %; the GPU award
 * 0.01 GPU-years: 24 / 8760 = 0.0027, target 0.0097, 28.3 %.
 */
static void test_award_core_years(void **state)
{
    const char *path = "/tmp/sa-test-top-awards.json";
    FILE *f = fopen(path, "w");
    char *out;
    (void)state;

    assert_non_null(f);
    fputs("{\"awards\": [{\"cluster\": \"beta\", \"account\": \"physics\", \"amount\": 0.1, \"unit\": \"core-years\", "
          "\"start\": \"2026-09-01\", \"end\": \"2026-10-01\"}, {\"cluster\": \"beta\", \"account\": \"physics\", "
          "\"amount\": 0.01, \"unit\": \"gpu-years\", \"start\": \"2026-09-01\", \"end\": \"2026-10-01\"}]}\n", f);
    fclose(f);
    {
        const char *a[] = {"usage", "-M", "beta", "--month", "2026-09", "--allocations", path, "-P", "-o",
                           "account,core_years,award,award_unit,used_since_start,target_to_date,percent_of_target,"
                           "status", NULL};
        const char *svg[] = {"usage", "-M", "beta", "--month", "2026-09", "--allocations", path, "--svg", NULL};
        out = same_from_jobs(a);
        expect_in(out, "physics|0.0219|0.1000|core-years|0.0219|0.0967|22.7|under\n");
        expect_in(out, "physics|0.0219|0.0100|gpu-years|0.0027|0.0097|28.3|under\n");
        free(out);
        char *example = rd_fixture("allocations-example.json");
        const char *by_type[] = {"usage", "-M", "alpha", "-A", "physics", "--month", "2026-09", "--allocations",
                                 example, "--svg", "--by", "account,gpu-type", NULL};
        out = ok_run(svg); /* a chart per award, in its own unit */
        expect_in(out, "award 0.1 core-years, 2026-09-01 to 2026-10-01; used 0.02192 (22.7% of the target to date)");
        expect_in(out, ">core-years</text>");
        free(out);
        /* alpha physics' core-years award broken down by GPU type: its runs without GPUs are a series with a label */
        out = ok_run(by_type);
        expect_in(out, "alpha / physics, by GPU type</text>");
        expect_in(out, " font-size=\"10\">(none)</text>");
        assert_null(strstr(out, " font-size=\"10\"></text>")); /* no legend entry without its label */
        free(out);
        free(example);
    }
    unlink(path);
}

/*
 * utilization --summary: alpha from 2026-09-20T00:00 to 02:00 (2 h of
 * report-nodes-alpha-b.txt, every 5 min: the series knows the whole window). The one run in
 * it: 108 (bob, the second job of that id) on gpu01 from 00:10 to 02:10, 2 a100, 16 CPUs,
 * 128 GiB, eligible at 00:00.
 * CPUs: 368 x 2 = 736 core-hours of capacity; allocated 16 x 1 h 50 min = 29.33 (3.99 %);
 * planned (slurmdbd's rule: eligible 00:00, started 00:10) 16 x 10 min = 2.67 (0.36 %);
 * down: gpu03 (IDLE+DRAIN) 64 + gpux1 (DOWN) 16 = 80 x 2 = 160 (21.74 %); idle the rest,
 * 736 - 29.33 - 2.67 - 160 = 544 (73.91 %).
 * Memory: 3375 GB x 2 = 6750 GB-hours; allocated 128 x 1.8333 = 234.67 (3.48 %).
 * GPUs: 18 x 2 = 36 GPU-hours; allocated 2 x 1.8333 = 3.67 (10.19 %): usage's (below).
 * The snapshots saw 7 GPUs in use (gpu01's 2 a100, gpu02's 4 h100, mig01's 1): 14
 * GPU-hours, more than the runs had, so each state keeps 3.67 / 14 of what it was seen
 * with: ALLOCATED (gpu01) 4 x 0.262 = 1.05, its other 6.95 stranded (19.31 %: no free CPU);
 * MIXED (gpu02, mig01) 10 x 0.262 = 2.62, 16 - 2.62 = 13.38 idle (37.17 %); down gpu03's 4
 * h100 and gpux1's 2: 12 (33.33 %). Each row adds to 100.
 * By type: a100 8 GPU-hours, 3.67 allocated (45.83 %), 4.33 stranded (54.17 %); h100 16,
 * none allocated: gpu02's 8 idle, gpu03's 8 down.
 */
static void test_utilization_summary(void **state)
{
    const char *a[] = {"utilization", "-M", "alpha", "-S", "2026-09-20T00:00", "-E", "2026-09-20T02:00", "--summary",
                       "-P", NULL};
    const char *h[] = {"utilization", "-M", "alpha", "-S", "2026-09-20T00:00", "-E", "2026-09-20T02:00", "--summary",
                       "-t", "hours", "-P", "-n", NULL};
    const char *u[] = {"usage", "-M", "alpha", "-S", "2026-09-20T00:00", "-E", "2026-09-20T02:00", "-T",
                       "gres/gpu,cpu", "-t", "hours", "-P", "-n", NULL};
    const char *up[] = {"usage", "-M", "alpha", "-S", "2026-09-20T00:00", "-E", "2026-09-20T02:00", "-T",
                        "gres/gpu,cpu", "-t", "percent", "-P", "-n", NULL};
    char *out;
    (void)state;

    out = ok_run(a);
    expect_in(out, "cluster|resource|gpu_type|capacity_hours|allocated_percent|idle_percent|planned_percent|"
                   "stranded_percent|down_percent|planned_down_percent|reserved_percent|unknown_percent\n");
    expect_in(out, "alpha|cpu|*|736.00|3.99|73.91|0.36|0.00|21.74|0.00|0.00|0.00\n");
    expect_in(out, "alpha|mem|*|6750.00|3.48|");
    expect_in(out, "alpha|gpu|*|36.00|10.19|37.17|0.00|19.31|33.33|0.00|0.00|0.00\n");
    expect_in(out, "alpha|gpu|a100|8.00|45.83|0.00|0.00|54.17|0.00|0.00|0.00|0.00\n");
    expect_in(out, "alpha|gpu|h100|16.00|0.00|50.00|0.00|0.00|50.00|0.00|0.00|0.00\n");
    free(out);
    out = ok_run(h);
    expect_in(out, "alpha|cpu|*|736.00|29.33|544.00|2.67|0.00|160.00|0.00|0.00|0.00\n");
    expect_in(out, "alpha|gpu|*|36.00|3.67|13.38|0.00|6.95|12.00|0.00|0.00|0.00\n");
    free(out);
    /* usage's allocated hours and percent of the same window: the same figures */
    out = ok_run(u);
    expect_in(out, "alpha|chem|3.67|0.0004|29.33|0.0033\n");
    free(out);
    out = ok_run(up);
    expect_in(out, "alpha|chem|3.67|0.0004|10.2|29.33|0.0033|4.0\n"); /* 10.19 and 3.99 to one decimal */
    free(out);
    {
        /* --svg: the same classes hour by hour (the window is 2 h: a bar an hour), by the rule above each hour.
         * 00:00-01:00: the run's 50 min: CPUs allocated 16 x 5/6 = 13.33, planned 2.67, down 80, idle 368 - 13.33
         * - 2.67 - 80 = 272; GPUs allocated 2 x 5/6 = 1.67 of the 7 seen (1.67 / 7 = 0.238 of each state's):
         * gpu01 (ALLOCATED, 2 of its 4 seen in use) keeps 0.476, the other 3.52 stranded; MIXED (5 of 8 seen) keep
         * 1.19, 6.81 idle; down 6.
         * 01:00-02:00: CPUs allocated 16, idle 368 - 16 - 80 = 272, down 80; GPUs allocated 2 (2 / 7 = 0.286):
         * stranded 4 - 0.571 = 3.43, idle 8 - 1.43 = 6.57, down 6. Each class's two hours add to the above. */
        const char *svg[] = {"utilization", "-M", "alpha", "-S", "2026-09-20T00:00", "-E", "2026-09-20T02:00", "--svg",
                             NULL};
        static const char *const want[] = {
            "<title>alpha: GPU time by class, stacked by hour</title>",
            "<title>alpha: memory time by class, stacked by hour</title>", /* in GB: "... GB-hours" */
            " GB-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 allocated: 13.3333 CPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 planned: 2.66667 CPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 idle: 272 CPU-hours</title>",
            "<title>2026-09-20T01:00 to 2026-09-20T02:00 allocated: 16 CPU-hours</title>",
            "<title>2026-09-20T01:00 to 2026-09-20T02:00 down: 80 CPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 allocated: 1.66667 GPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 stranded: 3.52381 GPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 idle: 6.80952 GPU-hours</title>",
            "<title>2026-09-20T01:00 to 2026-09-20T02:00 allocated: 2 GPU-hours</title>",
            "<title>2026-09-20T01:00 to 2026-09-20T02:00 idle: 6.57143 GPU-hours</title>",
            "<title>2026-09-20T01:00 to 2026-09-20T02:00 stranded: 3.42857 GPU-hours</title>",
            "<title>2026-09-20T00:00 to 2026-09-20T01:00 down: 6 GPU-hours</title>"};
        out = ok_run(svg);
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            expect_in(out, want[i]);
        assert_null(strstr(out, " unknown: ")); /* a class none had: not drawn */
        free(out);
    }
}

/*
 * top: alpha's users by CPU in 2026-09 (usage -T cpu --by user gives dave 3088, alice
 * 1320, carol 168, bob 120, erin 96 core-hours; bob by hand: 102 8 CPUs x 10 h + 108 16 x
 * 2 h + 110 4 x 2 h = 80 + 32 + 8 = 120), so --top 4 ends at bob and leaves erin out;
 * accounts by GPU-hours (the dataset's bio 386, physics 95, chem 50) with --top 2.
 * Capacity over the window (the 6 h of snapshots: 18 GPUs x 6 = 108 GPU-hours) makes
 * bio's share 386 / 108 = 357.41 %: use outside the series' time.
 */
static void test_top(void **state)
{
    const char *a[] = {"top", "-M", "alpha", "--month", "2026-09", "-T", "cpu", "-t", "hours", "--top", "4", "-P",
                       NULL};
    const char *g[] = {"top", "-M", "alpha", "--month", "2026-09", "-t", "hours", "--top", "2", "-P", NULL};
    char *out;
    (void)state;

    out = same_from_jobs(a);
    expect_in(out, "cluster|kind|rank|name|core_hours|core_years|cpu_percent_of_cluster\n");
    expect_in(out, "alpha|user|1|dave|3088.00|");
    expect_in(out, "alpha|user|2|alice|1320.00|");
    expect_in(out, "alpha|user|4|bob|120.00|0.0137|");
    if (strstr(out, "erin"))
        fail_msg("erin (5th) in a top 4:\n%s", out);
    free(out);
    out = same_from_jobs(g);
    expect_in(out, "alpha|account|1|bio|386.00|0.0441|357.41\n");
    expect_in(out, "alpha|account|2|physics|95.00|0.0108|87.96\n"); /* 95 / 108 */
    if (strstr(out, "chem"))
        fail_msg("chem (3rd) in a top 2:\n%s", out);
    free(out);
    /* beta has no time series: no share, said in the header */
    {
        const char *b[] = {"top", "-M", "beta", "--month", "2026-09", "-t", "hours", NULL};
        out = ok_run(b);
        expect_in(out, "beta: capacity not known");
        free(out);
    }
}

/*
 * The site: CPU and memory next to the GPUs on the cluster page (per account) and on an
 * account page (per user and GPU type); the cluster page names the command that lists
 * its latest month's jobs instead of a page of them (the dataset's months end with
 * 2026-10, the month of its "now").
 */
static void test_site_tres(void **state)
{
    char dir[] = "/tmp/sa-test-top-site-XXXXXX", *site, *page, *cmd;
    (void)state;

    assert_non_null(mkdtemp(dir));
    site = sa_rprintf("%s/site", dir);
    {
        const char *a[] = {"site", site, NULL};
        free(ok_run(a));
    }
    page = sa_rprintf("%s/alpha/index.html", site);
    {
        size_t len;
        char *html = tu_read_file(page, &len);
        assert_non_null(html);
        expect_in(html, "data-key=\"core_years\">Core-years</th>");
        expect_in(html, "data-key=\"mem_gb_years\">GB-years</th>");
        /* the jobs of the month the page shows (the last complete one: 2026-10 has less than a week observed) */
        expect_in(html, "<code>slurm-report jobs -M alpha -S 2026-09-01 -E 2026-10-01</code>");
        free(html);
        free(page);
        page = sa_rprintf("%s/alpha/account-physics.html", site);
        html = tu_read_file(page, &len);
        assert_non_null(html);
        expect_in(html, "data-key=\"core_years\">Core-years</th>");
        free(html);
    }
    cmd = sa_rprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(page);
    free(site);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_tres),
        cmocka_unit_test(test_usage_cpu_only),
        cmocka_unit_test(test_usage_percent_of_capacity),
        cmocka_unit_test(test_award_core_years),
        cmocka_unit_test(test_utilization_summary),
        cmocka_unit_test(test_top),
        cmocka_unit_test(test_site_tres),
    };
    int rc;

    client = tu_mongo_client("top", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = tu_run_group_tests("top", tests, group_setup, group_teardown);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
