/*
 * test_bad_input.c - slurm-ingest --dump on hostile and broken input: each case
 * asserts the exit code and that stderr is exactly one line naming the file and
 * what is wrong. Also the cases where odd input must be KEPT (unknown states,
 * hostile job names).
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_exit.h"

typedef struct {
    const char *name;
    const char *data;   /* file content */
    size_t len;         /* 0: strlen(data) */
    const char *extra;  /* one extra argument before the file, or NULL */
    int exit_code;
    const char *stderr_has; /* substring of the one stderr line; NULL = stderr empty */
    const char *stdout_has; /* substring of stdout, or NULL */
} bad_case_t;

#define J(x) "{\"meta\":{},\"jobs\":[" x "]}"
#define N(x) "{\"nodes\":[" x "]}"
#define SACCT_HDR "JobID|JobIDRaw|State|Submit|Start|End|AllocTRES|NodeList|ElapsedRaw\n"

static const bad_case_t cases[] = {
    {"empty file", "", 0, NULL, SA_EXIT_INPUT, "empty input", NULL},
    {"blank file", " \n\t\n", 0, NULL, SA_EXIT_INPUT, "empty input", NULL},
    {"html error page", "<html><body><h1>502 Bad Gateway</h1></body></html>\n", 0, NULL, SA_EXIT_INPUT, "HTML",
     NULL},
    {"truncated in array", "{\"meta\":{},\"jobs\":[{\"job_id\":1,\"job_state\":\"RUNNING\"", 0, NULL,
     SA_EXIT_INPUT, "truncated JSON", NULL},
    {"truncated in string", "{\"jobs\":[{\"name\":\"abc", 0, NULL, SA_EXIT_INPUT, "truncated JSON", NULL},
    {"truncated after key", "{\"jobs\"", 0, NULL, SA_EXIT_INPUT, "truncated JSON", NULL},
    {"top-level array", "[1,2,3]", 0, NULL, SA_EXIT_INPUT, "expected a JSON object at top level", NULL},
    {"jobs not an array", "{\"jobs\": 5}", 0, NULL, SA_EXIT_INPUT, "\"jobs\" at byte 9: expected an array", NULL},
    {"job not an object", J("1"), 0, NULL, SA_EXIT_INPUT, "jobs[0]: expected an object", NULL},
    {"neither squeue nor sacct", J("{\"job_id\":1}"), 0, NULL, SA_EXIT_INPUT, "neither a squeue record", NULL},
    {"job without job_id", J("{\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_INPUT, "job_id", NULL},
    {"job_id a string", J("{\"job_id\":\"abc\",\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_INPUT, "job_id",
     NULL},
    {"job_id negative", J("{\"job_id\":-5,\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_INPUT, "job_id", NULL},
    {"job_id beyond int64", J("{\"job_id\":99999999999999999999999,\"job_state\":\"RUNNING\"}"), 0, NULL,
     SA_EXIT_INPUT, "job_id", NULL},
    {"time_limit an array", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"time_limit\":[1]}"), 0, NULL,
     SA_EXIT_INPUT, "time_limit", NULL},
    {"submit_time 1e30", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"submit_time\":1e30}"), 0, NULL,
     SA_EXIT_INPUT, "submit_time", NULL},
    {"job_state a number", J("{\"job_id\":7,\"job_state\":5}"), 0, NULL, SA_EXIT_INPUT, "job_state", NULL},
    {"invalid UTF-8", "{\"jobs\":[{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\xff\xfe\"}]}", 0, NULL,
     SA_EXIT_INPUT, "invalid JSON", NULL},
    {"escaped NUL", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\\u0000b\"}"), 0, NULL, SA_EXIT_INPUT,
     "invalid JSON", NULL},
    {"trailing garbage", "{\"jobs\":[]} xyz", 0, NULL, SA_EXIT_INPUT, "unexpected data after the JSON document",
     NULL},
    {"no record array", "{\"meta\":{\"plugin\":{}}}", 0, NULL, SA_EXIT_INPUT, "not Slurm JSON output", NULL},
    {"Slurm error only", "{\"errors\":[{\"error\":\"Unable to contact slurm controller\"}]}", 0, NULL,
     SA_EXIT_INPUT, "Unable to contact slurm controller", NULL},
    {"mixed record kinds",
     J("{\"job_id\":7,\"job_state\":\"RUNNING\"},{\"job_id\":8,\"state\":{\"current\":\"RUNNING\"},\"time\":{}}"),
     0, NULL, SA_EXIT_INPUT, "earlier records were", NULL},
    {"deeply nested", NULL, 0, NULL, SA_EXIT_INPUT, "invalid JSON", NULL}, /* built at run time */
    {"missing comma", J("{\"job_id\":7 \"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_INPUT, "invalid JSON", NULL},
    {"node without name", N("{\"state\":[\"IDLE\"]}"), 0, NULL, SA_EXIT_INPUT, "name", NULL},
    {"node state a number", N("{\"name\":\"n1\",\"state\":3}"), 0, NULL, SA_EXIT_INPUT, "state", NULL},
    {"node cpus a string", N("{\"name\":\"n1\",\"state\":[\"IDLE\"],\"cpus\":\"many\"}"), 0, NULL, SA_EXIT_INPUT,
     "cpus", NULL},
    {"node not an object", N("\"n1\""), 0, NULL, SA_EXIT_INPUT, "nodes[0]: expected an object", NULL},
    {"sinfo not an object", "{\"sinfo\":[[]]}", 0, NULL, SA_EXIT_INPUT, "sinfo[0]: expected an object", NULL},
    {"sacct wrong field count",
     SACCT_HDR "1|1|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:02|cpu=1|n1|1\n"
               "2|2|COMPLETED|2026-01-01T00:00:00\n",
     0, NULL, SA_EXIT_INPUT, "line 3", NULL},
    {"sacct bad date",
     SACCT_HDR "1|1|COMPLETED|yesterday|2026-01-01T00:00:01|2026-01-01T00:00:02|cpu=1|n1|1\n", 0, NULL,
     SA_EXIT_INPUT, "yesterday", NULL},
    {"sacct bad TRES", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=abc|n1|1\n", 0, NULL, SA_EXIT_INPUT,
     "cpu=abc", NULL},
    {"sacct huge number", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|99999999999999999999999\n", 0,
     NULL, SA_EXIT_INPUT, "ElapsedRaw", NULL},
    {"sacct invalid UTF-8", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n\xc3\x28|1\n", 0, NULL,
     SA_EXIT_INPUT, "UTF-8", NULL},
    {"sacct noheader without fields", "123|COMPLETED|0:0\n", 0, NULL, SA_EXIT_INPUT, "header", NULL},
    {"scontrol text garbage line", "NodeName=n1 State=IDLE\nGarbage here\n", 0, NULL, SA_EXIT_INPUT,
     "line 2: expected Key=value", NULL},
    {"scontrol text bad CPUTot", "NodeName=n1 State=IDLE CPUTot=abc\n", 0, NULL, SA_EXIT_INPUT, "CPUTot", NULL},
    /* kept, not rejected */
    {"unknown job state kept", J("{\"job_id\":7,\"job_state\":[\"QUANTUM_LEAP\",\"NEW_FLAG\"]}"), 0, NULL,
     SA_EXIT_OK, NULL, "QUANTUM_LEAP+NEW_FLAG"},
    {"unknown node flag kept", N("{\"name\":\"n1\",\"state\":[\"IDLE\",\"DRAIN\",\"SPACE_WEATHER\"]}"), 0, NULL,
     SA_EXIT_OK, NULL, "IDLE+DRAIN+SPACE_WEATHER"},
    {"unknown field kept", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"future_field\":{\"x\":1}}"), 0, NULL,
     SA_EXIT_OK, NULL, "\"future_field\":{\"x\":1}"},
    {"hostile job name kept",
     J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\\\"b$c.d\\n\\u00e9\\u2603 ; rm -rf /\"}"), 0, NULL,
     SA_EXIT_OK, NULL, "\"name\":\"a\\\"b$c.d\\n\\u00E9\\u2603 ; rm -rf /\""},
    {"sacct Slurm error with records", "{\"jobs\":[],\"errors\":[{\"description\":\"partial data\"}]}", 0, NULL,
     SA_EXIT_SLURM, "Slurm error: partial data", NULL},
};

static int run_ingest(char *const argv[], char **out, char **err)
{
    char *args[8];
    int i = 0;
    args[0] = (char *)SA_INGEST_BIN;
    for (i = 1; i < 7 && argv[i]; i++)
        args[i] = argv[i];
    args[i] = NULL;
    return tu_run(args, NULL, out, err);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void run_case(const bad_case_t *c, const char *data, size_t len)
{
    char path[] = "/tmp/sa-bad-in-XXXXXX";
    int fd = mkstemp(path);
    char *argv[6] = {NULL}, *out, *err;
    int argc = 0, rc;

    assert_true(fd >= 0);
    assert_true(write(fd, data, len) == (ssize_t)len);
    close(fd);
    argv[argc++] = (char *)"slurm-ingest";
    argv[argc++] = (char *)"--dump";
    if (c->extra)
        argv[argc++] = (char *)c->extra;
    argv[argc++] = path;
    argv[argc] = NULL;
    rc = run_ingest(argv, &out, &err);
    unlink(path);
    if (rc != c->exit_code)
        fail_msg("%s: exit %d, expected %d; stderr: %s", c->name, rc, c->exit_code, err);
    if (c->stderr_has) {
        if (count_lines(err) != 1)
            fail_msg("%s: expected one stderr line, got: %s", c->name, err);
        if (!strstr(err, path))
            fail_msg("%s: stderr does not name the file: %s", c->name, err);
        if (!strstr(err, c->stderr_has))
            fail_msg("%s: stderr lacks '%s': %s", c->name, c->stderr_has, err);
    } else if (err[0]) {
        fail_msg("%s: unexpected stderr: %s", c->name, err);
    }
    if (c->stdout_has && !strstr(out, c->stdout_has))
        fail_msg("%s: stdout lacks '%s': %s", c->name, c->stdout_has, out);
    free(out);
    free(err);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case_t *c = &cases[i];
        if (!c->data) {
            /* 100,000 nested arrays inside a job: jansson's depth limit must stop it */
            size_t depth = 100000, len = 0;
            char *buf = malloc(2 * depth + 64);
            len += (size_t)sprintf(buf, "{\"jobs\":[");
            memset(buf + len, '[', depth);
            len += depth;
            memset(buf + len, ']', depth);
            len += depth;
            len += (size_t)sprintf(buf + len, "]}");
            run_case(c, buf, len);
            free(buf);
            continue;
        }
        run_case(c, c->data, c->len ? c->len : strlen(c->data));
    }
    printf("  %zu input cases checked\n", sizeof cases / sizeof cases[0]);
}

static void test_usage_errors(void **state)
{
    char *argv_none[] = {(char *)"slurm-ingest", NULL};
    char *argv_bad[] = {(char *)"slurm-ingest", (char *)"--no-such-option", NULL};
    char *argv_missing[] = {(char *)"slurm-ingest", (char *)"--dump", (char *)"/nonexistent/squeue.json", NULL};
    char *out, *err;
    (void)state;

    assert_int_equal(run_ingest(argv_none, &out, &err), SA_EXIT_USAGE);
    assert_non_null(strstr(err, "--cluster NAME is required"));
    free(out);
    free(err);
    assert_int_equal(run_ingest(argv_bad, &out, &err), SA_EXIT_USAGE);
    free(out);
    free(err);
    assert_int_equal(run_ingest(argv_missing, &out, &err), SA_EXIT_INPUT);
    assert_non_null(strstr(err, "/nonexistent/squeue.json: No such file or directory"));
    assert_int_equal(count_lines(err), 1);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests_name("bad_input", tests, NULL, NULL);
}
