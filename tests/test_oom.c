/*
 * test_oom.c - out of memory anywhere in a run (issue 10, defect 6): slurm-ingest runs
 * as the timer runs it (fake Slurm commands printing fixtures/gen/v0.0.40, the test
 * server) with the Nth allocation of its main() failing (tests/oom_shim.c, preloaded),
 * for N spread over the whole run. Every run must exit 0 (the failure was absorbed) or
 * 1 with "out of memory" on stderr, never another code (2 usage, 3 bad input, 6 SQLite,
 * 8 spooled...), and a normal run after it must give the same archive (job documents
 * and time series) as a run that never failed.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "tu_archive.h"

#define SPREAD 32 /* values of N */

static mongoc_client_t *client;
static char *db_base;

/*
 * The inputs: fixtures/gen/v0.0.40 (one consistent moment of a synthetic cluster); a run
 * after a failed one merges a snapshot again, which is idempotent (test_durable).
 */
static char env_sq[400], env_sa[400];
static const char *run_env[] = {"TU_SINFO=" SA_FIXTURES_DIR "/gen/v0.0.40/sinfo-N.json", env_sq, env_sa};
static const char *const run_args[] = {"--at=2026-10-15T12:00:00Z", NULL};

/* One run in box with the shim set to fail allocation n (0: count only, into report). */
static int run_oom(const tu_box_t *box, long n, const char *report, char **err)
{
    char fail[64], rep[700];
    const char *env[8];
    int k = 0;
    for (size_t i = 0; i < sizeof run_env / sizeof run_env[0]; i++)
        env[k++] = run_env[i];
    env[k++] = "LD_PRELOAD=" SA_OOM_SHIM;
    snprintf(fail, sizeof fail, "SA_OOM_FAIL_AT=%ld", n);
    if (n > 0)
        env[k++] = fail;
    snprintf(rep, sizeof rep, "SA_OOM_REPORT=%s", report ? report : "/dev/null");
    env[k++] = rep;
    env[k] = NULL;
    return tu_box_run(box, run_args, env, err);
}

/* A normal run (no shim). */
static int run_normal(const tu_box_t *box, char **err)
{
    const char *env[] = {run_env[0], run_env[1], run_env[2], NULL};
    return tu_box_run(box, run_args, env, err);
}

/* N values: small ones (start-up), a geometric series and an even spread up to total. */
static size_t spread(long total, long *v)
{
    size_t n = 0;
    for (long x = 1; x <= 8 && x <= total; x++)
        v[n++] = x;
    for (double x = 12; x < total && n < SPREAD / 2; x *= 1.8)
        v[n++] = (long)x;
    for (size_t i = 1; n < SPREAD; i++)
        v[n++] = (long)((double)total * (double)i / (double)(SPREAD / 2 + 1));
    return n;
}

static void test_every_exit_is_0_or_1(void **state)
{
    tu_box_t ref, box;
    char db[160], report[600], *err = NULL;
    json_t *want;
    char *want_ts;
    long total, v[SPREAD];
    size_t nv;
    int exits[2] = {0, 0};
    tu_cmp_t cmp;
    (void)state;

    /* the run that never fails, and how many allocations it makes */
    snprintf(db, sizeof db, "%s_ref", db_base);
    tu_box_init(&ref, "oom-ref", getenv("SLURM_TEST_MONGO_URI"), db);
    snprintf(report, sizeof report, "%s/count", ref.dir);
    if (run_oom(&ref, 0, report, &err) != 0)
        fail_msg("the reference run failed: %s", err);
    free(err);
    {
        char *text = tu_read_file(report, NULL);
        total = atol(text);
        free(text);
    }
    assert_true(total > 1000);
    want = tu_archive_docs(client, db, "jobs");
    assert_true(json_array_size(want) >= 60);
    want_ts = tu_tsdb_dump(tu_box_path(&ref, "ts.db"));
    assert_non_null(want_ts);

    nv = spread(total, v);
    memset(&cmp, 0, sizeof cmp);
    for (size_t i = 0; i < nv; i++) {
        char *ts;
        int rc;
        json_t *got;
        snprintf(db, sizeof db, "%s_n%zu", db_base, i);
        tu_box_init(&box, "oom", getenv("SLURM_TEST_MONGO_URI"), db);
        rc = run_oom(&box, v[i], NULL, &err);
        if (rc != 0 && rc != 1)
            fail_msg("allocation %ld of %ld failed: exit %d, not 0 or 1: %s", v[i], total, rc, err);
        if (rc == 1 && !strstr(err, "out of memory"))
            fail_msg("allocation %ld of %ld failed: exit 1 without \"out of memory\": %s", v[i], total, err);
        exits[rc]++;
        free(err);
        /* the next run converges to what a run that never failed gives */
        if (run_normal(&box, &err) != 0)
            fail_msg("after allocation %ld failed, the next run failed: %s", v[i], err);
        free(err);
        got = tu_archive_docs(client, db, "jobs");
        if (!tu_archive_compare(want, got, &cmp))
            fail_msg("after allocation %ld of %ld failed (exit %d), the next run gives another archive: %s", v[i],
                     total, rc, cmp.first);
        ts = tu_tsdb_dump(tu_box_path(&box, "ts.db"));
        if (!ts || strcmp(ts, want_ts) != 0)
            fail_msg("after allocation %ld of %ld failed (exit %d), the time series differs from the reference",
                     v[i], total, rc);
        free(ts);
        json_decref(got);
        tu_mongo_drop(client, db);
        tu_box_destroy(&box);
    }
    printf("test_oom: %zu runs with allocation N of %ld failing (N from %ld to %ld): %d exited 0, %d exited 1 "
           "(out of memory); after each, the next run gave the reference archive (%zu documents compared, lost %zu, "
           "duplicated %zu, differ %zu)\n",
           nv, total, v[0], v[nv - 1], exits[0], exits[1], cmp.compared, cmp.lost, cmp.duplicated, cmp.differ);
    json_decref(want);
    free(want_ts);
    snprintf(db, sizeof db, "%s_ref", db_base);
    tu_mongo_drop(client, db);
    tu_box_destroy(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_exit_is_0_or_1),
    };
    int rc;

    if (!SA_OOM_SHIM[0]) {
        printf("SKIP test_oom: this is the AddressSanitizer build; ASan replaces malloc with its own allocator and "
               "must be the first library loaded, so an LD_PRELOAD allocator cannot fail allocations under it (the "
               "release build runs this test)\n");
        return 77;
    }
    client = tu_mongo_client("oom", &db_base);
    if (!client)
        return 77;
    snprintf(env_sq, sizeof env_sq, "TU_SQUEUE=%s", SA_FIXTURES_DIR "/gen/v0.0.40/squeue.json");
    snprintf(env_sa, sizeof env_sa, "TU_SACCT=%s", SA_FIXTURES_DIR "/gen/v0.0.40/sacct-ingest.txt");
    rc = tu_run_group_tests("oom", tests, NULL, NULL);
    mongoc_client_destroy(client);
    free(db_base);
    return rc;
}
