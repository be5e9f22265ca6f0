/*
 * test_testutil.c - tests/testutil.c's runner of the cases (tu_run_group_tests) and its
 * test server (tu_mongo_client): a program whose cases all skipped exits 77 (ctest:
 * skipped), never 0; one that ran some passes; a failure wins over skips, across groups;
 * a server promised by SLURM_TEST_MONGO_URI that does not answer fails the program; and
 * the check of the SVG the reports write (tu_xml_well_formed).
 *
 * The programs checked are this one run again as a child: `test_testutil --child MODE`.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

/* ---- the children ----------------------------------------------------------------------------- */

static void case_skips(void **state)
{
    (void)state;
    printf("SKIP child: this case cannot run here\n");
    skip();
}

static void case_passes(void **state)
{
    (void)state;
    assert_int_equal(1 + 1, 2);
}

static void case_fails(void **state)
{
    (void)state;
    assert_int_equal(1 + 1, 3);
}

/* A case that needs the server: skips without one, as the server tests do. */
static void case_server(void **state)
{
    char *db = NULL;
    mongoc_client_t *client = tu_mongo_client("child", &db);
    (void)state;
    if (!client)
        skip();
    mongoc_client_destroy(client);
    free(db);
}

/* Runs the groups mode names; returns what main returns. */
static int child(const char *mode)
{
    const struct CMUnitTest skipping[] = {cmocka_unit_test(case_skips), cmocka_unit_test(case_skips)};
    const struct CMUnitTest some[] = {cmocka_unit_test(case_skips), cmocka_unit_test(case_passes)};
    const struct CMUnitTest failing[] = {cmocka_unit_test(case_skips), cmocka_unit_test(case_fails)};
    const struct CMUnitTest server[] = {cmocka_unit_test(case_server), cmocka_unit_test(case_server)};
    const struct CMUnitTest none[] = {{NULL, NULL, NULL, NULL, NULL}};

    if (strcmp(mode, "skip-all") == 0)
        return tu_run_group_tests("skip-all", skipping, NULL, NULL);
    if (strcmp(mode, "skip-some") == 0)
        return tu_run_group_tests("skip-some", some, NULL, NULL);
    if (strcmp(mode, "fail") == 0)
        return tu_run_group_tests("fail", failing, NULL, NULL);
    if (strcmp(mode, "skip-then-pass") == 0) { /* a group that skipped, then one that ran */
        tu_run_group_tests("skip", skipping, NULL, NULL);
        return tu_run_group_tests("pass", some, NULL, NULL);
    }
    if (strcmp(mode, "fail-then-skip") == 0) { /* a failure stays, whatever the groups after */
        tu_run_group_tests("fail", failing, NULL, NULL);
        return tu_run_group_tests("skip", skipping, NULL, NULL);
    }
    if (strcmp(mode, "no-cases") == 0)
        return tu_run_group_tests("no-cases", none, NULL, NULL);
    if (strcmp(mode, "server-cases") == 0)
        return tu_run_group_tests("server-cases", server, NULL, NULL);
    if (strcmp(mode, "server-main") == 0) { /* as most server programs begin */
        char *db = NULL;
        mongoc_client_t *client = tu_mongo_client("child", &db);
        if (!client)
            return 77;
        mongoc_client_destroy(client);
        free(db);
        return tu_run_group_tests("pass", some, NULL, NULL);
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}

/* ---- the checks ------------------------------------------------------------------------------- */

/*
 * Runs `test_testutil --child mode` with env (may be NULL); returns its exit status, *out
 * what it printed, stdout then stderr (caller frees).
 */
static int run_child(const char *mode, char *const env[], char **out)
{
    char *argv[] = {"/proc/self/exe", "--child", (char *)mode, NULL};
    char *o = NULL, *e = NULL;
    int rc = tu_run(argv, env, &o, &e);
    size_t no = strlen(o), ne = strlen(e);

    assert_non_null(*out = malloc(no + ne + 1));
    memcpy(*out, o, no);
    memcpy(*out + no, e, ne + 1);
    free(o);
    free(e);
    return rc;
}

/* The child of mode exits want, without SLURM_TEST_MONGO_URI. */
static void expect_exit(const char *mode, int want)
{
    char *env[] = {"SLURM_TEST_MONGO_URI=", NULL}, *out = NULL;
    int rc = run_child(mode, env, &out);
    if (rc != want)
        fail_msg("--child %s exited %d, not %d:\n%s", mode, rc, want, out);
    free(out);
}

static void test_all_skipped_is_skipped(void **state)
{
    (void)state;
    expect_exit("skip-all", 77);
    expect_exit("no-cases", 77);
}

static void test_some_ran_passes(void **state)
{
    (void)state;
    expect_exit("skip-some", 0);
    expect_exit("skip-then-pass", 0);
}

static void test_failure_wins(void **state)
{
    (void)state;
    expect_exit("fail", 1);
    expect_exit("fail-then-skip", 1);
}

/* Without a server the cases that need one say so and skip, and the program is skipped. */
static void test_no_server_skips(void **state)
{
    char *env[] = {"SLURM_TEST_MONGO_URI=", NULL}, *out = NULL;
    (void)state;
    assert_int_equal(run_child("server-cases", env, &out), 77);
    assert_non_null(strstr(out, "SKIP child: SLURM_TEST_MONGO_URI is not set"));
    free(out);
    assert_int_equal(run_child("server-main", env, &out), 77);
    free(out);
}

/*
 * A server promised that does not answer (a port bound here and not listening: the
 * connection is refused) fails, never skips: each case, and a program that asks in main.
 */
static void test_promised_server_fails(void **state)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char env_uri[128], *env[] = {env_uri, NULL}, *out = NULL;
    int rc;
    (void)state;

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    snprintf(env_uri, sizeof env_uri, "SLURM_TEST_MONGO_URI=mongodb://127.0.0.1:%d/", ntohs(a.sin_port));
    rc = run_child("server-cases", env, &out);
    if (rc != 1)
        fail_msg("a server that does not answer: the cases' program exited %d, not 1:\n%s", rc, out);
    assert_non_null(strstr(out, "does not answer ping"));
    assert_null(strstr(out, "SKIP"));
    free(out);
    rc = run_child("server-main", env, &out);
    if (rc == 0 || rc == 77)
        fail_msg("a server that does not answer: the program exited %d:\n%s", rc, out);
    free(out);
    close(fd);
}

/* The SVG check: well-formed documents pass, each kind of fault is named. */
static void test_xml_check(void **state)
{
    static const char *const good[] = {
        "<?xml version=\"1.0\"?>\n<svg a=\"1\"><title>a &amp; b &#39;c&#39;</title><rect/></svg>\n",
        "<svg><g><text>x</text></g></svg>",
    };
    static const struct {
        const char *doc, *why;
    } bad[] = {
        {"<svg><g></svg>", "</svg> at byte 8 closes g"},
        {"<svg><title>a < b</title></svg>", "a '<' in text"},
        {"<svg><title>a & b</title></svg>", "a bare '&'"},
        {"<svg>", "<svg> never closed"},
        {"<svg/><svg/>", "2 root elements"},
        {"<svg", "a tag not closed"},
    };
    char why[200];
    (void)state;

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (!tu_xml_well_formed(good[i], why, sizeof why))
            fail_msg("%s: %s", good[i], why);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (tu_xml_well_formed(bad[i].doc, why, sizeof why))
            fail_msg("%s passed", bad[i].doc);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: '%s' lacks '%s'", bad[i].doc, why, bad[i].why);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_skipped_is_skipped), cmocka_unit_test(test_some_ran_passes),
        cmocka_unit_test(test_failure_wins),           cmocka_unit_test(test_no_server_skips),
        cmocka_unit_test(test_promised_server_fails), cmocka_unit_test(test_xml_check),
    };

    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    return tu_run_group_tests("testutil", tests, NULL, NULL);
}
