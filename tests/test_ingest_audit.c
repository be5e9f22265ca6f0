/*
 * test_ingest_audit.c - `slurm-ingest audit` run as a user runs it, on the test server:
 * an archive of fixtures/audit/archive.txt against slurmdbd's fixtures/audit/slurmdbd.txt
 * (the differences of test_audit, one line each, exit 9); --repair mends the missing and
 * changed jobs through the write path (the rollups agree with the documents after it:
 * `slurm-ingest rollup` exits 0), the extra job stays (exit 9), and the next audit finds
 * it alone; a job document deleted and a field changed by hand are exactly two lines; the
 * audit's sacct runs are the ingest's command over backfill-window pieces; bad input and an
 * unreachable server exit as the README says. And the job cache (issue 35): a document
 * deleted by hand is written again by a --since backfill, which no longer skips it.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mongoc/mongoc.h>

#include "sa_exit.h"
#include "tu_archive.h"

#define WINDOW "-S", "2026-10-01T00:00:00Z", "-E", "2026-10-02T00:00:00Z"

static mongoc_client_t *client;
static char *db_base;
static const char *uri;

static void box_new(tu_box_t *b, const char *name)
{
    char db[160];
    snprintf(db, sizeof db, "%s_%s", db_base, name);
    tu_box_init(b, name, uri, db);
}

static void box_done(tu_box_t *b)
{
    tu_mongo_drop(client, b->db);
    tu_box_destroy(b);
}

/* Runs slurm-ingest in the box; fails the case on another exit code than want (stderr said). */
static char *run(const tu_box_t *b, const char *const args[], const char *const env[], int want)
{
    char *out = NULL, *err = NULL;
    int rc = tu_box_run_out(b, args, env, &out, &err);
    if (rc != want)
        fail_msg("exit %d, not %d: %s%s", rc, want, out ? out : "", err ? err : "");
    free(err);
    return out;
}

/* A fixture of fixtures/audit with sacct -P's '|' made slurm-ingest's unit separator, in the box. */
static const char *unit_separated(const tu_box_t *b, const char *rel, const char *name)
{
    char *text = tu_read_file(tu_fixture(rel), NULL);
    for (char *p = text; *p; p++) {
        if (*p == '|')
            *p = '\x1f';
    }
    tu_write_text(tu_box_path(b, name), text);
    free(text);
    return tu_box_path(b, name);
}

static void delete_job(const char *db, const char *id)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "jobs");
    bson_t *f = BCON_NEW("_id", BCON_UTF8(id));
    bson_error_t e;
    assert_true(mongoc_collection_delete_one(c, f, NULL, NULL, &e));
    bson_destroy(f);
    mongoc_collection_destroy(c);
}

static void set_account(const char *db, const char *id, const char *account)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, "jobs");
    bson_t *f = BCON_NEW("_id", BCON_UTF8(id)), *u = BCON_NEW("$set", "{", "account", BCON_UTF8(account), "}");
    bson_error_t e;
    assert_true(mongoc_collection_update_one(c, f, u, NULL, NULL, &e));
    bson_destroy(f);
    bson_destroy(u);
    mongoc_collection_destroy(c);
}

/* The differences, the repair, the audit after it; the rollups follow the repair. */
static void test_audit_repair(void **state)
{
    tu_box_t b;
    char ref[1024], *out;
    const char *ingest[] = {"--sacct", NULL, "--at", "2026-10-02T00:00:00Z", NULL};
    const char *audit[] = {"audit", WINDOW, "--sacct", ref, NULL};
    const char *repair[] = {"audit", WINDOW, "--sacct", ref, "--repair", NULL};
    const char *rollup[] = {"rollup", NULL};
    (void)state;

    box_new(&b, "repair");
    snprintf(ref, sizeof ref, "%s", tu_fixture("audit/slurmdbd.txt"));
    ingest[1] = tu_fixture("audit/archive.txt");
    free(run(&b, ingest, NULL, SA_EXIT_OK));
    out = run(&b, audit, NULL, SA_EXIT_UNHEALTHY);
    assert_string_equal(out, "job 102: state: archive COMPLETED, slurmdbd FAILED\n"
                             "job 102: exit: archive 0:0, slurmdbd 1:0\n"
                             "job 102 run 2026-10-01T01:10:00Z: state: archive COMPLETED, slurmdbd FAILED\n"
                             "job 102 run 2026-10-01T01:10:00Z: exit: archive 0:0, slurmdbd 1:0\n"
                             "job 103 run 2026-10-01T02:00:00Z: missing\n"
                             "job 104: missing\n"
                             "job 106: extra\n"
                             "audit of demo 2026-10-01T00:00:00Z to 2026-10-02T00:00:00Z: 5 job(s) and 5 run(s) of "
                             "slurmdbd compared: 7 difference(s) (2 missing, 1 extra, 4 changed)\n");
    free(out);
    /* mended: what slurmdbd has; what it does not have (106) is kept, and still said */
    out = run(&b, repair, NULL, SA_EXIT_UNHEALTHY);
    assert_non_null(strstr(out, "repaired 3 job document(s)"));
    assert_non_null(strstr(out, "after the repair: 5 job(s) and 5 run(s) of slurmdbd compared: 1 difference(s) "
                                "(0 missing, 1 extra, 0 changed)\n"));
    free(out);
    out = run(&b, audit, NULL, SA_EXIT_UNHEALTHY);
    assert_string_equal(out, "job 106: extra\n"
                             "audit of demo 2026-10-01T00:00:00Z to 2026-10-02T00:00:00Z: 5 job(s) and 5 run(s) of "
                             "slurmdbd compared: 1 difference(s) (0 missing, 1 extra, 0 changed)\n");
    free(out);
    free(run(&b, rollup, NULL, SA_EXIT_OK)); /* the rollups agree with the repaired documents */
    assert_int_equal(tu_count(client, b.db, "jobs", "{\"_id\": \"demo:104\"}"), 1);
    box_done(&b);
}

/* Agreeing is exit 0; a deleted document and a changed field are exactly two lines; repaired, 0. */
static void test_audit_two(void **state)
{
    tu_box_t b;
    char ref[1024], *out;
    const char *ingest[] = {"--sacct", ref, "--at", "2026-10-02T00:00:00Z", NULL};
    const char *audit[] = {"audit", WINDOW, "--sacct", ref, NULL};
    const char *repair[] = {"audit", WINDOW, "--sacct", ref, "--repair", NULL};
    (void)state;

    box_new(&b, "two");
    snprintf(ref, sizeof ref, "%s", tu_fixture("audit/slurmdbd.txt"));
    free(run(&b, ingest, NULL, SA_EXIT_OK));
    out = run(&b, audit, NULL, SA_EXIT_OK);
    assert_non_null(strstr(out, "the archive agrees"));
    free(out);
    delete_job(b.db, "demo:101");
    set_account(b.db, "demo:103", "chem");
    out = run(&b, audit, NULL, SA_EXIT_UNHEALTHY);
    assert_string_equal(out, "job 101: missing\n"
                             "job 103: account: archive chem, slurmdbd physics\n"
                             "audit of demo 2026-10-01T00:00:00Z to 2026-10-02T00:00:00Z: 5 job(s) and 5 run(s) of "
                             "slurmdbd compared: 2 difference(s) (1 missing, 0 extra, 1 changed)\n");
    free(out);
    free(run(&b, repair, NULL, SA_EXIT_OK));
    out = run(&b, audit, NULL, SA_EXIT_OK);
    assert_non_null(strstr(out, "the archive agrees"));
    free(out);
    /* a calendar month, as the monthly unit asks for it */
    {
        const char *month[] = {"audit", "--month", "2026-10", "--sacct", ref, NULL};
        out = run(&b, month, NULL, SA_EXIT_OK);
        assert_non_null(strstr(out, "audit of demo 2026-10-01T00:00:00Z to 2026-11-01T00:00:00Z: 5 job(s)"));
        free(out);
    }
    box_done(&b);
}

/* Without --sacct: the ingest's sacct command, window by backfill-window piece. */
static void test_audit_runs_sacct(void **state)
{
    tu_box_t b;
    char env_sa[1200], *out, *argv;
    const char *ingest[] = {"--sacct", NULL, "--at", "2026-10-02T00:00:00Z", NULL};
    const char *audit[] = {"audit", WINDOW, "--backfill-window", "12h", NULL};
    const char *env[] = {env_sa, NULL};
    (void)state;

    box_new(&b, "sacct");
    ingest[1] = tu_fixture("audit/slurmdbd.txt");
    free(run(&b, ingest, NULL, SA_EXIT_OK));
    snprintf(env_sa, sizeof env_sa, "TU_SACCT=%s", unit_separated(&b, "audit/slurmdbd.txt", "sacct.txt"));
    out = run(&b, audit, env, SA_EXIT_OK);
    assert_non_null(strstr(out, "5 job(s) and 5 run(s) of slurmdbd compared: the archive agrees"));
    free(out);
    argv = tu_read_file(tu_box_path(&b, "sacct.argv"), NULL);
    assert_non_null(strstr(argv, "--allusers --duplicates --parsable2"));
    assert_non_null(strstr(argv, "--starttime=2026-10-01T00:00:00 --endtime=2026-10-01T12:00:00"));
    assert_non_null(strstr(argv, "--starttime=2026-10-01T12:00:00 --endtime=2026-10-02T00:00:00"));
    free(argv);
    box_done(&b);
}

/* A --since backfill writes again a document deleted by hand (the job cache said it was merged). */
static void test_since_restores(void **state)
{
    tu_box_t b;
    char env_sa[1200], *out;
    const char *first[] = {"--since", "2026-10-01T00:00:00Z", "--at", "2026-10-02T00:00:00Z", NULL};
    const char *again[] = {"--since", "2026-09-30T00:00:00Z", "--at", "2026-10-02T00:10:00Z", "--stats", NULL};
    const char *env[] = {"TU_SINFO=" SA_FIXTURES_DIR "/slurm-22.05/sinfo-A.json",
                         "TU_SQUEUE=" SA_FIXTURES_DIR "/slurm-22.05/squeue-A.json", env_sa, NULL};
    (void)state;

    box_new(&b, "since");
    snprintf(env_sa, sizeof env_sa, "TU_SACCT=%s", unit_separated(&b, "audit/slurmdbd.txt", "sacct.txt"));
    free(run(&b, first, env, SA_EXIT_OK));
    assert_int_equal(tu_count(client, b.db, "jobs", "{\"_id\": \"demo:101\"}"), 1);
    delete_job(b.db, "demo:101");
    out = run(&b, again, env, SA_EXIT_OK);
    assert_int_equal(tu_count(client, b.db, "jobs", "{\"_id\": \"demo:101\"}"), 1);
    assert_non_null(strstr(out, "\"cache_restored\": 1"));
    free(out);
    box_done(&b);
}

/* What is refused, and a server that is not there. */
static void test_audit_refused(void **state)
{
    tu_box_t b;
    char *err = NULL;
    const char *no_start[] = {"audit", NULL};
    const char *backwards[] = {"audit", "-S", "2026-10-02", "-E", "2026-10-01", NULL};
    const char *stray[] = {"-S", "2026-10-01", NULL};
    const char *bad_month[] = {"audit", "--month", "2026-13", NULL};
    const char *both[] = {"audit", "--month", "last", "-S", "2026-10-01", NULL};
    const char *no_mongo[] = {"audit", "--month", "last", "--no-mongo", NULL};
    const char *stdin_repair[] = {"audit", WINDOW, "--sacct", "-", "--repair", NULL};
    const char *missing[] = {"audit", WINDOW, "--sacct", "/nonexistent/sacct.txt", NULL};
    const char *not_sacct[] = {"audit", WINDOW, "--sacct", NULL, NULL};
    (void)state;

    box_new(&b, "refused");
    assert_int_equal(tu_box_run(&b, no_start, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, backwards, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, stray, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, bad_month, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, both, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, no_mongo, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, stdin_repair, NULL, NULL), SA_EXIT_USAGE);
    assert_int_equal(tu_box_run(&b, missing, NULL, &err), SA_EXIT_INPUT);
    assert_non_null(strstr(err, "/nonexistent/sacct.txt"));
    free(err);
    not_sacct[6] = tu_fixture("slurm-22.05/squeue-A.json");
    assert_int_equal(tu_box_run(&b, not_sacct, NULL, &err), SA_EXIT_INPUT);
    assert_non_null(strstr(err, "not sacct output"));
    free(err);
    snprintf(b.uri, sizeof b.uri, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300");
    not_sacct[6] = tu_fixture("audit/slurmdbd.txt");
    assert_int_equal(tu_box_run(&b, not_sacct, NULL, &err), SA_EXIT_SPOOLED);
    assert_non_null(strstr(err, "unreachable"));
    free(err);
    snprintf(b.uri, sizeof b.uri, "%s", uri);
    box_done(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_repair),   cmocka_unit_test(test_audit_two),
        cmocka_unit_test(test_audit_runs_sacct), cmocka_unit_test(test_since_restores),
        cmocka_unit_test(test_audit_refused),
    };
    int rc;

    client = tu_mongo_client("ingest_audit", &db_base);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    rc = tu_run_group_tests("ingest_audit", tests, NULL, NULL);
    mongoc_client_destroy(client);
    free(db_base);
    return rc;
}
