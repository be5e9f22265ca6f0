/*
 * test_scheduler.c - `slurm-report scheduler` (report/sa_scheduler.c): sdiag over time, from
 * the time series slurm-ingest writes (no MongoDB: -M and --sqlite name everything).
 *
 * Four observations of cluster "sched", made from fixtures/sdiag-v0041_24.05.json (one
 * message type, REQUEST_PARTITION_INFO, count 52011; one user, root, 181203):
 *   2026-10-01T10:00  pending 1534, the fixture's counts
 *   2026-10-01T10:40  pending 1520, type 52311, root 181803 (the hour's latest: its RPCs kept)
 *   2026-10-01T11:30  pending 1500, type 52911, root 183003
 *   2026-10-02T09:00  pending 40,   type 100,   root 50 (a restart: the counts went down)
 * A month (days): two rows, the latest of each day: 10-01T11:30 (1500) and 10-02T09:00 (40);
 * RPCs per hour: none for the first, none after the restart. Three hours, 09:00 to 12:00
 * (hours): the 10:40 row (1520) and the 11:30 row (1500); from 10:40 to 11:30 (50 min) the
 * type grew 600: 720 per hour; root 1200: 1440 per hour.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

static char dir[] = "/tmp/sa-test-sched-XXXXXX";
static char sqlite[128];

/* Writes the fixture's sdiag with these figures to path. */
static void write_sdiag(const char *path, int64_t pending, int64_t type_count, int64_t root_count)
{
    json_error_t jerr;
    json_t *j = json_load_file(SA_FIXTURES_DIR "/sdiag-v0041_24.05.json", 0, &jerr), *st;
    if (!j)
        fail_msg("fixtures/sdiag-v0041_24.05.json: %s", jerr.text);
    st = json_object_get(j, "statistics");
    json_object_set_new(st, "jobs_pending", json_integer(pending));
    json_object_set_new(json_array_get(json_object_get(st, "rpcs_by_message_type"), 0), "count",
                        json_integer(type_count));
    json_object_set_new(json_array_get(json_object_get(st, "rpcs_by_user"), 0), "count", json_integer(root_count));
    assert_int_equal(json_dump_file(j, path, 0), 0);
    json_decref(j);
}

/* Ingests the four observations into the time series (slurm-ingest --no-mongo --sdiag). */
static int setup(void **state)
{
    static const struct {
        const char *at;
        int64_t pending, type, root;
    } obs[] = {{"2026-10-01T10:00:00Z", 1534, 52011, 181203},
               {"2026-10-01T10:40:00Z", 1520, 52311, 181803},
               {"2026-10-01T11:30:00Z", 1500, 52911, 183003},
               {"2026-10-02T09:00:00Z", 40, 100, 50}};
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(sqlite, sizeof sqlite, "%s/sched.sqlite", dir);
    for (size_t i = 0; i < sizeof obs / sizeof obs[0]; i++) {
        char path[200], at[64], sq[200], lock[200], spool[200], sd[240], *out = NULL, *err = NULL;
        char *argv[] = {(char *)SA_INGEST_BIN, (char *)"--cluster=sched", (char *)"--no-mongo", sq, lock, spool, sd,
                        at, (char *)"-q", NULL};
        snprintf(path, sizeof path, "%s/sdiag-%zu.json", dir, i);
        write_sdiag(path, obs[i].pending, obs[i].type, obs[i].root);
        snprintf(at, sizeof at, "--at=%s", obs[i].at);
        snprintf(sq, sizeof sq, "--sqlite=%s", sqlite);
        snprintf(lock, sizeof lock, "--lock-dir=%s", dir);
        snprintf(spool, sizeof spool, "--spool-dir=%s/spool", dir);
        snprintf(sd, sizeof sd, "--sdiag=%s", path);
        if (tu_run(argv, NULL, &out, &err) != 0) {
            fprintf(stderr, "slurm-ingest --sdiag %s: %s\n", path, err);
            return -1;
        }
        free(out);
        free(err);
    }
    return 0;
}

static int teardown(void **state)
{
    char *argv[] = {(char *)"/bin/rm", (char *)"-rf", dir, NULL}, *out = NULL, *err = NULL;
    (void)state;
    tu_run(argv, NULL, &out, &err);
    free(out);
    free(err);
    return 0;
}

/* slurm-report scheduler -M sched --sqlite FILE ARGS...; its exit status, *out and *err. */
static int run(const char *const *args, char **out, char **err)
{
    char sq[200];
    char *argv[32];
    int n = 0;

    snprintf(sq, sizeof sq, "--sqlite=%s", sqlite);
    argv[n++] = (char *)SA_REPORT_BIN;
    argv[n++] = (char *)"scheduler";
    argv[n++] = (char *)"-M";
    argv[n++] = (char *)"sched";
    argv[n++] = sq;
    for (; *args; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    return tu_run(argv, NULL, out, err);
}

static char *ok_run(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = run(args, &out, &err);
    if (rc != 0)
        fail_msg("slurm-report scheduler %s: exit %d: %s", args[0], rc, err);
    free(err);
    return out;
}

static void expect_in(const char *s, const char *want)
{
    if (!strstr(s, want))
        fail_msg("'%s' not in:\n%s", want, s);
}

/* A month: the latest observation of each day; RPCs per hour not known first, nor after the restart. */
static void test_days(void **state)
{
    static const char *const a[] = {"--month", "2026-10", "-P", "-o", "cluster,at,jobs_pending,rpcs,rpcs_per_hour",
                                    NULL};
    char *out = ok_run(a);
    (void)state;
    assert_string_equal(out, "cluster|at|jobs_pending|rpcs|rpcs_per_hour\n"
                             "sched|2026-10-01T11:30:00Z|1500|52911|\n"
                             "sched|2026-10-02T09:00:00Z|40|100|\n");
    free(out);
}

/* Three hours: the latest observation of each hour, and the RPCs per hour between them. */
static void test_hours(void **state)
{
    static const char *const a[] = {"-S", "2026-10-01T09:00:00", "-E", "2026-10-01T12:00:00", "-P", "-o",
                                    "at,jobs_pending,rpcs,rpcs_per_hour", NULL};
    static const char *const u[] = {"-S", "2026-10-01T09:00:00", "-E", "2026-10-01T12:00:00", "--by", "rpc-user",
                                    "-P", NULL};
    static const char *const j[] = {"-S", "2026-10-01T09:00:00", "-E", "2026-10-01T12:00:00", "--json", NULL};
    char *out = ok_run(a);
    json_t *doc;
    (void)state;
    assert_string_equal(out, "at|jobs_pending|rpcs|rpcs_per_hour\n"
                             "2026-10-01T10:40:00Z|1520|52311|\n"
                             "2026-10-01T11:30:00Z|1500|52911|720.0\n");
    free(out);
    out = ok_run(u);
    assert_string_equal(out, "cluster|at|by|name|count|total_time_us|per_hour\n"
                             "sched|2026-10-01T10:40:00Z|user|root|181803|20110234|\n"
                             "sched|2026-10-01T11:30:00Z|user|root|183003|20110234|1440.0\n");
    free(out);
    out = ok_run(j);
    doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "every")), "hour");
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(doc, "rows"), 1),
                                                        "schedule_cycle_mean")),
                     22915); /* the fixture's, as sdiag printed it (microseconds) */
    json_decref(doc);
    free(out);
}

/* The SVG: the preamble, then the plots over time (jobs, cycles, depths, RPCs by type and by user). */
static void test_svg(void **state)
{
    static const char *const a[] = {"--month", "2026-10", "--svg", NULL};
    static const char *const titles[] = {"sched: jobs (sdiag)", "sched: scheduling cycles",
                                         "sched: jobs looked at per cycle", "sched: RPCs per hour by message type",
                                         "sched: RPCs per hour by user"};
    char *out = ok_run(a);
    (void)state;
    assert_true(strncmp(out, "<?xml", 5) == 0);
    expect_in(out, "the latest observation of each UTC day");
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++) {
        char want[120];
        snprintf(want, sizeof want, "<title>%s</title>", titles[i]);
        expect_in(out, want);
    }
    expect_in(out, "<title>2026-10-01T11:30 pending: 1500 jobs</title>"); /* a point, its value on hover */
    free(out);
}

/*
 * A cluster without a time series: exit 2, one line naming the file looked for (as
 * utilization: the report is the series), nothing printed; a window is needed, and --by
 * takes rpc-type or rpc-user alone.
 */
static void test_slips(void **state)
{
    char *out = NULL, *err = NULL;
    char *argv[] = {(char *)SA_REPORT_BIN, (char *)"scheduler", (char *)"-M", (char *)"nowhere", (char *)"--sqlite-dir",
                    (char *)"/nonexistent", (char *)"--month", (char *)"2026-10", (char *)"-P", NULL};
    static const char *const nowin[] = {NULL};
    static const char *const both[] = {"--month", "2026-10", "--by", "rpc-type,rpc-user", NULL};
    (void)state;
    assert_int_equal(tu_run(argv, NULL, &out, &err), 2);
    expect_in(err, "cluster nowhere: no time series (/nonexistent/nowhere.sqlite does not exist");
    assert_true(strchr(err, '\n') == err + strlen(err) - 1);
    assert_string_equal(out, "");
    free(out);
    free(err);
    assert_int_equal(run(nowin, &out, &err), 2);
    expect_in(err, "scheduler needs a window");
    free(out);
    free(err);
    assert_int_equal(run(both, &out, &err), 2);
    expect_in(err, "--by rpc-type or --by rpc-user");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_days), cmocka_unit_test(test_hours),
                                       cmocka_unit_test(test_svg), cmocka_unit_test(test_slips)};
    return tu_run_group_tests("scheduler", tests, setup, teardown);
}
