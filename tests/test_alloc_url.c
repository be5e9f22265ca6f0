/*
 * test_alloc_url.c - report/sa_alloc_url.c: --allocations URL (issue 35, part 3). A
 * loopback HTTP server (tests/alloc_server.py, Python's http.server) serves the demo's
 * awards (fixtures/demo/allocations.json, with its groups' members) and the test dataset's
 * with an account's members (for slurm-report's cases); the cases:
 * - a good answer is the awards, kept as the last good copy (0600, the same bytes);
 * - an answer that is late, broken, not an allocations file, too large or refused (401,
 *   403), and a port that refuses the connection: one warning line naming the cause, and
 *   the last good copy is used; with no copy, one line, exit status 11, nothing written;
 * - credentials from a 0600 file (bearer, basic), the environment, the systemd credential;
 *   a file others may read is refused; neither they nor the URL's query reach a message;
 * - where the copy is kept (beside the site, the user's cache);
 * - through slurm-report (MongoDB test server): usage's per-member columns from the URL,
 *   exit 11 without a copy, and the site: its copy beside it, the account page's members,
 *   then the endpoint refusing and the site written again from the copy with one warning.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <mongoc/mongoc.h>

#include "report_dataset.h"
#include "sa_alloc.h"
#include "sa_alloc_url.h"
#include "sa_exit.h"
#include "sa_http.h"

static char dir[] = "/tmp/sa-test-allocurl.XXXXXX";
static char awards_path[128], base[64], sqlite_path[64];
static char *awards_text; /* the dataset's awards, served at /awards */
static char *demo_text;   /* the demo's, served at /demo */
static pid_t server = -1;
static int server_out = -1; /* the server's stdout, kept open while it runs */
static char *mongo_uri, *db_name;
static mongoc_client_t *client;

/* Sets the server's mode (alloc_server.py: good, late, broken, invalid, large, 401, 403, auth). */
static void set_mode(const char *mode)
{
    char url[128];
    sa_http_req_t req = {.url = url, .timeout_s = 5, .what = "mode"};
    sa_buf_t b;
    sa_error_t err;
    long status;

    snprintf(url, sizeof url, "%s/mode/%s", base, mode);
    if (!sa_http_request(&req, true, &b, &status, &err))
        fail_msg("%s", err.message);
    sa_buf_clear(&b);
}

/* The Authorization header of the server's last request of awards. */
static char *last_auth(void)
{
    char url[128], *s;
    sa_http_req_t req = {.url = url, .timeout_s = 5, .what = "last-auth"};
    sa_buf_t b;
    sa_error_t err;
    long status;

    snprintf(url, sizeof url, "%s/last-auth", base);
    if (!sa_http_request(&req, true, &b, &status, &err))
        fail_msg("%s", err.message);
    s = strndup(b.data ? b.data : "", b.len);
    sa_buf_clear(&b);
    return s;
}

static void need_server(void)
{
    if (server < 0) {
        printf("SKIP: python3 is not installed (the loopback server of the awards)\n");
        skip();
    }
}

/*
 * Fetches url (its path under the server, or a whole URL) with copy as the last good copy
 * and a 1 s timeout; *warn what was warned (caller frees). Returns what sa_alloc_fetch did.
 */
static bool fetch(const char *url, const char *copy, const char *auth_file, char **json, char **warn, sa_error_t *err)
{
    char full[256];
    sa_alloc_url_t src = {.url = full, .copy_path = copy, .auth_file = auth_file, .timeout_s = 1};
    tu_mem_t m;
    size_t len;
    bool ok;

    snprintf(full, sizeof full, "%s%s", strncmp(url, "http", 4) == 0 ? "" : base, url);
    ok = sa_alloc_fetch(&src, tu_mem_open(&m), json, &len, err);
    *warn = tu_mem_close(&m);
    if (ok)
        assert_int_equal(strlen(*json), len);
    return ok;
}

/* The occurrences of what in s. */
static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* The number of lines of s. */
static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The lines of s that name the awards (the site also says, in lines of its own, what it left out). */
static size_t award_lines(const char *s)
{
    size_t n = 0;
    while (*s) {
        size_t len = strcspn(s, "\n");
        char *line = strndup(s, len);
        assert_non_null(line);
        n += strstr(line, "allocations") != NULL;
        free(line);
        s += len + (s[len] == '\n');
    }
    return n;
}

static char *path_in(const char *name)
{
    return sa_rprintf("%s/%s", dir, name);
}

/* A good answer: the awards, kept as the last good copy, mode 0600. */
static void test_good(void **state)
{
    char *copy, *json, *warn, *kept;
    struct stat st;
    sa_error_t err;
    (void)state;

    need_server();
    copy = path_in("good.copy");
    set_mode("good");
    assert_true(fetch("/demo", copy, NULL, &json, &warn, &err));
    assert_string_equal(json, demo_text);
    assert_string_equal(warn, "");
    {
        /* the demo's groups: physics has 12 members */
        sa_awards_t a;
        assert_true(sa_awards_parse(json, strlen(json), "demo", &a, &err));
        assert_string_equal(a.v[0].account, "physics");
        assert_int_equal(a.v[0].members, 12);
        sa_awards_clear(&a);
    }
    kept = tu_read_file(copy, NULL);
    assert_string_equal(kept, demo_text);
    assert_int_equal(stat(copy, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(kept);
    free(json);
    free(warn);
    free(copy);
}

static const struct {
    const char *mode, *url, *cause;
} failures[] = {
    {"late", "/demo", "timed out"},
    {"broken", "/demo", ":1: '[' or '{' expected near '<'"},
    {"invalid", "/demo", "awards[0] (demo/bio): amount: expected a number > 0"},
    {"large", "/demo", "the answer is larger than 4194304 bytes"},
    {"401", "/demo", "HTTP 401 (refused: check the credentials)"},
    {"403", "/demo", "HTTP 403 (refused: check the credentials)"},
    {"good", "http://127.0.0.1:1/awards", "127.0.0.1 port 1"}, /* nothing listens on port 1 */
};

/* Each failure: one warning line naming the cause, the last good copy used and left as it was. */
static void test_failures_use_copy(void **state)
{
    char *copy;
    sa_error_t err;
    (void)state;

    need_server();
    copy = path_in("kept.copy");
    tu_write_text(copy, demo_text);
    chmod(copy, 0600);
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++) {
        char *json, *warn, *kept;
        set_mode(failures[i].mode);
        if (!fetch(failures[i].url, copy, NULL, &json, &warn, &err))
            fail_msg("%s: %s", failures[i].mode, err.message);
        assert_string_equal(json, demo_text);
        if (lines(warn) != 1 || !strstr(warn, failures[i].cause) || !strstr(warn, "using the last good copy") ||
            !strstr(warn, copy))
            fail_msg("%s: warned '%s'", failures[i].mode, warn);
        kept = tu_read_file(copy, NULL);
        assert_string_equal(kept, demo_text);
        free(kept);
        free(json);
        free(warn);
    }
    set_mode("good");
    free(copy);
}

/* Each failure with no copy: false, one line naming the URL and the cause, exit status 11, no copy made. */
static void test_failures_no_copy(void **state)
{
    char *copy;
    sa_error_t err;
    (void)state;

    need_server();
    copy = path_in("never.copy");
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++) {
        char *json, *warn;
        set_mode(failures[i].mode);
        if (fetch(failures[i].url, copy, NULL, &json, &warn, &err))
            fail_msg("%s: accepted", failures[i].mode);
        assert_null(json);
        if (!strstr(err.message, failures[i].cause) || !strstr(err.message, "no last good copy") ||
            !strstr(err.message, "allocations http://127.0.0.1:") || strchr(err.message, '\n'))
            fail_msg("%s: '%s'", failures[i].mode, err.message);
        assert_int_equal(sa_exit_code_for(&err, false), SA_EXIT_ENDPOINT);
        assert_string_equal(warn, "");
        assert_int_equal(access(copy, F_OK), -1);
        free(warn);
    }
    /* no place for a copy at all (no HOME): said */
    set_mode("403");
    {
        char *json, *warn;
        assert_false(fetch("/demo", NULL, NULL, &json, &warn, &err));
        assert_non_null(strstr(err.message, "HTTP 403 (refused: check the credentials), and no last good copy is "
                                            "kept"));
        assert_int_equal(sa_exit_code_for(&err, false), SA_EXIT_ENDPOINT);
        free(warn);
    }
    set_mode("good");
    free(copy);
}

/* Writes text into dir/name with mode; returns the path (caller frees). */
static char *secret(const char *name, const char *text, unsigned mode)
{
    char *p = path_in(name);
    tu_write_text(p, text);
    assert_int_equal(chmod(p, mode), 0);
    return p;
}

/* Credentials from a file, the environment, the systemd credential; never in a message, nor the query. */
static void test_credentials(void **state)
{
    char *bearer, *basic, *open_, *bad, *copy, *creds, *json = NULL, *warn = NULL, *auth;
    sa_error_t err;
    (void)state;

    need_server();
    bearer = secret("bearer", "Bearer s3cret-token\n", 0600);
    basic = secret("basic", "basic alice:pa:ss@word", 0600);
    open_ = secret("open", "bearer s3cret-token\n", 0644);
    bad = secret("bad", "s3cret-token\n", 0600);
    copy = path_in("auth.copy");
    creds = path_in("creds");
    unsetenv("SLURM_REPORT_ALLOCATIONS_AUTH");
    unsetenv("CREDENTIALS_DIRECTORY");
    set_mode("auth");
    /* none: refused by the server */
    assert_false(fetch("/demo", copy, NULL, &json, &warn, &err));
    assert_non_null(strstr(err.message, "HTTP 401"));
    free(warn);
    /* a bearer token from a 0600 file */
    assert_true(fetch("/demo", copy, bearer, &json, &warn, &err));
    assert_string_equal(json, demo_text);
    auth = last_auth();
    assert_string_equal(auth, "Bearer s3cret-token");
    free(auth);
    free(json);
    free(warn);
    /* basic: the password holds ':' and '@' */
    assert_true(fetch("/demo", copy, basic, &json, &warn, &err));
    free(json);
    free(warn);
    /* the environment, then the systemd credential */
    setenv("SLURM_REPORT_ALLOCATIONS_AUTH", "bearer s3cret-token", 1);
    assert_true(fetch("/demo", copy, NULL, &json, &warn, &err));
    free(json);
    free(warn);
    unsetenv("SLURM_REPORT_ALLOCATIONS_AUTH");
    assert_int_equal(mkdir(creds, 0700), 0);
    {
        char *c = sa_rprintf("%s/allocations-auth", creds);
        tu_write_text(c, "bearer s3cret-token\n");
        setenv("CREDENTIALS_DIRECTORY", creds, 1);
        assert_true(fetch("/demo", copy, NULL, &json, &warn, &err));
        free(json);
        free(warn);
        unsetenv("CREDENTIALS_DIRECTORY");
        free(c);
    }
    /* a file its group or others may read: refused (exit 2), fetched or not; its content never shown */
    assert_false(fetch("/demo", copy, open_, &json, &warn, &err));
    assert_int_equal(sa_exit_code_for(&err, false), SA_EXIT_USAGE);
    assert_non_null(strstr(err.message, "mode 0644): chmod 600 it"));
    assert_null(strstr(err.message, "s3cret"));
    free(warn);
    assert_false(fetch("/demo", copy, bad, &json, &warn, &err));
    assert_int_equal(sa_exit_code_for(&err, false), SA_EXIT_USAGE);
    assert_non_null(strstr(err.message, "expected one line \"bearer TOKEN\" or \"basic USER:PASSWORD\""));
    assert_null(strstr(err.message, "s3cret"));
    free(warn);
    /* a token in the query: hidden in the warning */
    set_mode("403");
    assert_true(fetch("/demo?key=s3cret-token", copy, bearer, &json, &warn, &err));
    assert_non_null(strstr(warn, "/demo?***: HTTP 403"));
    assert_null(strstr(warn, "s3cret"));
    free(json);
    free(warn);
    set_mode("good");
    free(bearer);
    free(basic);
    free(open_);
    free(bad);
    free(copy);
    free(creds);
}

/* Where the copy is kept: beside the site, else in the user's cache; nowhere without HOME. */
static void test_copy_path(void **state)
{
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL, *p;
    (void)state;

    p = sa_alloc_copy_path("https://x/awards", "/var/lib/slurm-report/site/");
    assert_string_equal(p, "/var/lib/slurm-report/site.allocations.json");
    free(p);
    setenv("XDG_CACHE_HOME", "/home/u/.cache2", 1);
    p = sa_alloc_copy_path("https://x/awards", NULL);
    assert_non_null(strstr(p, "/home/u/.cache2/slurm-report/allocations-"));
    free(p);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    p = sa_alloc_copy_path("https://x/awards", NULL);
    assert_non_null(strstr(p, "/home/u/.cache/slurm-report/allocations-"));
    /* one copy per URL */
    {
        char *q = sa_alloc_copy_path("https://x/other", NULL);
        assert_string_not_equal(p, q);
        free(q);
    }
    free(p);
    unsetenv("HOME");
    assert_null(sa_alloc_copy_path("https://x/awards", NULL));
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);
    assert_true(sa_alloc_is_url("HTTPS://x") && sa_alloc_is_url("http://x") && !sa_alloc_is_url("awards.json"));
}

static void need_archive(void)
{
    need_server();
    if (!client) {
        printf("SKIP: SLURM_TEST_MONGO_URI is not set: slurm-report's cases need the dataset\n");
        skip();
    }
}

/* Runs slurm-report on the dataset with args, XDG_CACHE_HOME under dir. */
static int report(const char *const *args, char **out, char **err)
{
    const char *first[] = {"--db", db_name, "--sqlite", sqlite_path, "--now", "2026-10-01T08:30:00Z", NULL};
    char *env = sa_rprintf("XDG_CACHE_HOME=%s/cache", dir);
    int rc = tu_run_report(SA_REPORT_BIN, mongo_uri, env, first, args, out, err);
    free(env);
    return rc;
}

/* usage --allocations URL: the members' columns; exit 11 and nothing printed when the URL fails with no copy. */
static void test_report_usage(void **state)
{
    char url[128], *out, *err;
    (void)state;

    need_archive();
    set_mode("good");
    snprintf(url, sizeof url, "%s/awards", base);
    {
        const char *a[] = {"usage", "--month", "2026-09", "-M", "alpha", "-A", "physics", "--allocations", url, "-P",
                           "-n", "-o", "account,award,members,award_per_member,used_per_member", NULL};
        assert_int_equal(report(a, &out, &err), 0);
        /* 1 GPU-year for 4 members; 143 GPU-hours since 04-01 */
        if (!strstr(out, "physics|1.0000|4|0.2500|0.0041\n"))
            fail_msg("usage: '%s' (stderr '%s')", out, err);
        assert_int_equal(count(err, "allocations"), 0); /* (the dataset's GPU type without an RGU weight is said) */
        free(out);
        free(err);
    }
    set_mode("403");
    {
        /* the copy the run above kept: one warning, the same rows */
        const char *a[] = {"usage", "--month", "2026-09", "-M", "alpha", "-A", "physics", "--allocations", url, "-P",
                           "-n", "-o", "account,members", NULL};
        assert_int_equal(report(a, &out, &err), 0);
        assert_non_null(strstr(out, "physics|4\n")); /* (and the core-year award, without members) */
        assert_int_equal(count(err, "slurm-report: warning: allocations "), 1);
        assert_int_equal(count(err, "allocations"), 2); /* the URL, the copy's name */
        assert_non_null(strstr(err, "HTTP 403"));
        free(out);
        free(err);
    }
    {
        /* another URL, no copy: 11, one line, nothing on stdout */
        const char *a[] = {"usage", "--month", "2026-09", "--allocations", "http://127.0.0.1:1/awards", NULL};
        assert_int_equal(report(a, &out, &err), SA_EXIT_ENDPOINT);
        assert_string_equal(out, "");
        assert_int_equal(lines(err), 1);
        assert_non_null(strstr(err, "no last good copy"));
        free(out);
        free(err);
    }
    {
        /* a user and password in the URL: on the command line, refused (2) before anything is asked */
        const char *a[] = {"usage", "--month", "2026-09", "--allocations", "http://alice:pw@127.0.0.1:1/awards", NULL};
        assert_int_equal(report(a, &out, &err), SA_EXIT_USAGE);
        assert_null(strstr(err, "pw@"));
        free(out);
        free(err);
    }
    set_mode("good");
}

/* The site: the copy beside it, the account page's members; then the endpoint refusing: the site from the copy. */
static void test_report_site(void **state)
{
    char url[128], *site, *copy, *out, *err, *page, *page_path;
    (void)state;

    need_archive();
    site = path_in("site");
    copy = path_in("site.allocations.json");
    page_path = path_in("site/alpha/account-physics.html");
    const char *a[] = {"site", site, "--months", "2", "--allocations", url, NULL};
    snprintf(url, sizeof url, "%s/awards", base);
    set_mode("good");
    assert_int_equal(mkdir(site, 0755), 0);
    if (report(a, &out, &err) != 0)
        fail_msg("site: %s", err);
    free(out);
    free(err);
    page = tu_read_file(copy, NULL);
    assert_string_equal(page, awards_text);
    free(page);
    page = tu_read_file(page_path, NULL);
    assert_non_null(strstr(page, ">Members</th>"));
    assert_non_null(strstr(page, ">Used/member</th>"));
    assert_non_null(strstr(page, "members: 4"));
    free(page);
    set_mode("401");
    assert_int_equal(report(a, &out, &err), 0);
    if (award_lines(err) != 1) /* beta has no time series: the site says so on a line of its own */
        fail_msg("the site with the endpoint refusing: not one line on the awards:\n%s", err);
    assert_non_null(strstr(err, "HTTP 401"));
    assert_non_null(strstr(err, copy));
    free(out);
    free(err);
    page = tu_read_file(page_path, NULL);
    assert_non_null(strstr(page, ">Members</th>"));
    free(page);
    set_mode("good");
    free(site);
    free(copy);
    free(page_path);
}

/* Starts alloc_server.py on awards_path; base gets its URL. */
static bool start_server(void)
{
    int pipefd[2];
    char buf[32] = "";
    ssize_t n;

    if (access("/usr/bin/python3", X_OK) != 0 || pipe(pipefd) != 0)
        return false;
    server = fork();
    if (server == 0) {
        char *argv[] = {(char *)"/usr/bin/python3", (char *)SA_FIXTURES_DIR "/../tests/alloc_server.py", awards_path,
                        (char *)SA_FIXTURES_DIR "/demo/allocations.json", NULL};
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(pipefd[1]);
    n = server > 0 ? read(pipefd[0], buf, sizeof buf - 1) : -1;
    server_out = pipefd[0];
    if (n <= 0 || atoi(buf) <= 0) {
        if (server > 0) {
            kill(server, SIGTERM);
            waitpid(server, NULL, 0);
        }
        server = -1;
        return false;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%d", atoi(buf));
    return true;
}

static int setup(void **state)
{
    char *example = rd_fixture("allocations-example.json");
    json_t *doc = json_load_file(example, 0, NULL);
    (void)state;

    free(example);
    if (!mkdtemp(dir) || !doc)
        return -1;
    /* the dataset's awards, alpha/physics (the first) with its 4 members */
    json_object_set_new(json_array_get(json_object_get(doc, "awards"), 0), "members", json_integer(4));
    awards_text = json_dumps(doc, JSON_INDENT(1));
    json_decref(doc);
    snprintf(awards_path, sizeof awards_path, "%s/awards.json", dir);
    demo_text = tu_read_file(SA_FIXTURES_DIR "/demo/allocations.json", NULL);
    tu_write_text(awards_path, awards_text);
    if (!start_server())
        return 0; /* the cases say why they skip */
    mongo_uri = getenv("SLURM_TEST_MONGO_URI");
    if ((client = tu_mongo_client("alloc_url", &db_name)))
        rd_setup(mongo_uri, db_name, sqlite_path, "/tmp/sa-test-allocurl-XXXXXX");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
    if (server_out >= 0)
        close(server_out);
    if (client) {
        tu_mongo_drop(client, db_name);
        mongoc_client_destroy(client);
        rd_remove_sqlite(sqlite_path);
    }
    free(db_name);
    free(awards_text);
    free(demo_text);
    tu_rm_rf(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_path),        cmocka_unit_test(test_good),
        cmocka_unit_test(test_failures_use_copy), cmocka_unit_test(test_failures_no_copy),
        cmocka_unit_test(test_credentials),      cmocka_unit_test(test_report_usage),
        cmocka_unit_test(test_report_site),
    };
    return tu_run_group_tests("alloc_url", tests, setup, teardown);
}
