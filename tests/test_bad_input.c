/*
 * test_bad_input.c - slurm-ingest --dump on hostile and broken input: each case
 * asserts the exit code and that stderr is exactly one line naming the file and
 * what is wrong. An input that cannot be parsed at all exits 3; a record that cannot
 * be taken is set aside (exit 0, one line saying so) and the records around it are
 * printed, as a run sets it aside and lands the rest. Also the cases where odd input
 * must be KEPT (unknown states, hostile job names); and real-sized outputs of
 * fixtures/ broken the ways files break.
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
    {"job without job_id", J("{\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_OK, "jobs[0]: job record without job_id: record set aside", NULL},
    {"job_id a string", J("{\"job_id\":\"abc\",\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_OK, "job_id is string): record set aside",
     NULL},
    {"job_id negative", J("{\"job_id\":-5,\"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_OK, "jobs[0]: job_id: -5 out of range (1..2^53): record set aside", NULL},
    {"job_id beyond int64", J("{\"job_id\":99999999999999999999999,\"job_state\":\"RUNNING\"}"), 0, NULL,
     SA_EXIT_OK, "jobs[0]: job record without job_id (job_id is number): record set aside", NULL},
    {"time_limit an array", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"time_limit\":[1]}"), 0, NULL,
     SA_EXIT_OK, "job 7: time_limit: expected a number or {set,infinite,number}, got array: record set aside", NULL},
    {"submit_time 1e30", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"submit_time\":1e30}"), 0, NULL,
     SA_EXIT_OK, "job 7: submit_time: number 1e+30 out of range: record set aside", NULL},
    {"job_state a number", J("{\"job_id\":7,\"job_state\":5}"), 0, NULL, SA_EXIT_OK, "job 7: job_state: expected a state string or list, got integer: record set aside", NULL},
    {"invalid UTF-8", "{\"jobs\":[{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\xff\xfe\"}]}", 0, NULL,
     SA_EXIT_OK, "jobs[0]: not UTF-8: invalid bytes replaced by U+FFFD: repaired and kept", NULL},
    {"escaped NUL", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\\u0000b\"}"), 0, NULL, SA_EXIT_OK,
     "jobs[0]: invalid JSON record: \\u0000 is not allowed", NULL},
    {"trailing garbage", "{\"jobs\":[]} xyz", 0, NULL, SA_EXIT_INPUT, "unexpected data after the JSON document",
     NULL},
    {"no record array", "{\"meta\":{\"plugin\":{}}}", 0, NULL, SA_EXIT_INPUT, "not Slurm JSON output", NULL},
    {"Slurm error only", "{\"errors\":[{\"error\":\"Unable to contact slurm controller\"}]}", 0, NULL,
     SA_EXIT_INPUT, "Unable to contact slurm controller", NULL},
    {"mixed record kinds",
     J("{\"job_id\":7,\"job_state\":\"RUNNING\"},{\"job_id\":8,\"state\":{\"current\":\"RUNNING\"},\"time\":{}}"),
     0, NULL, SA_EXIT_INPUT, "earlier records were", NULL},
    {"deeply nested", NULL, 0, NULL, SA_EXIT_OK, "jobs[0]: invalid JSON record: maximum parsing depth reached", NULL}, /* built at run time */
    {"missing comma", J("{\"job_id\":7 \"job_state\":\"RUNNING\"}"), 0, NULL, SA_EXIT_OK, "jobs[0]: invalid JSON record: '}' expected", NULL},
    {"node without name", N("{\"state\":[\"IDLE\"]}"), 0, NULL, SA_EXIT_OK, "nodes[0]: node: name: missing or empty: record set aside", NULL},
    {"node state a number", N("{\"name\":\"n1\",\"state\":3}"), 0, NULL, SA_EXIT_OK, "node n1: state: expected a state string or list, got integer: record set aside", NULL},
    {"node cpus a string", N("{\"name\":\"n1\",\"state\":[\"IDLE\"],\"cpus\":\"many\"}"), 0, NULL, SA_EXIT_OK,
     "node n1: cpus: expected a number, got string \"many\": record set aside", NULL},
    {"node not an object", N("\"n1\""), 0, NULL, SA_EXIT_INPUT, "nodes[0]: expected an object", NULL},
    {"sinfo not an object", "{\"sinfo\":[[]]}", 0, NULL, SA_EXIT_INPUT, "sinfo[0]: expected an object", NULL},
    {"sacct wrong field count",
     SACCT_HDR "1|1|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:02|cpu=1|n1|1\n"
               "2|2|COMPLETED|2026-01-01T00:00:00\n",
     0, NULL, SA_EXIT_OK, "line 3: job 2: expected 9 fields, found 4", NULL},
    {"sacct bad date",
     SACCT_HDR "1|1|COMPLETED|yesterday|2026-01-01T00:00:01|2026-01-01T00:00:02|cpu=1|n1|1\n", 0, NULL,
     SA_EXIT_OK, "line 2: job 1: Submit: expected a date YYYY-MM-DDTHH:MM:SS, got 'yesterday': record set aside", NULL},
    {"sacct bad TRES", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=abc|n1|1\n", 0, NULL, SA_EXIT_OK,
     "line 2: job 1: AllocTRES: TRES 'cpu=abc'", NULL},
    {"sacct huge number", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|99999999999999999999999\n", 0,
     NULL, SA_EXIT_OK, "line 2: job 1: ElapsedRaw: expected a non-negative integer", NULL},
    {"sacct invalid UTF-8", SACCT_HDR "1|1|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n\xc3\x28|1\n", 0, NULL,
     SA_EXIT_OK, "line 2: not UTF-8 text: invalid bytes replaced by U+FFFD: repaired and kept", NULL},
    {"sacct noheader without fields", "123|COMPLETED|0:0\n", 0, NULL, SA_EXIT_INPUT, "header", NULL},
    /* issue 22: one bad record of a peer's file set aside, the others printed (the record after it too) */
    {"sacct job id 0", SACCT_HDR "5|5|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|1\n0|0|COMPLETED|Unknown|Unknown|Unknown|"
     "cpu=1|n1|1\n8|8|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|1\n", 0, NULL, SA_EXIT_OK,
     "line 3: job 0: JobIDRaw: job id 0 out of range (1..2^53): record set aside", "\"job_id\":8,"},
    {"sacct job id 0 without JobIDRaw", "JobID|State\n0|COMPLETED\n8|COMPLETED\n", 0, NULL, SA_EXIT_OK,
     "line 2: JobID: job id 0 out of range (1..2^53): record set aside", "\"job_id\":8,"},
    {"sacct array task of a het job", SACCT_HDR "1000_2+3|1000|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|1\n"
     "8|8|COMPLETED|Unknown|Unknown|Unknown|cpu=1|n1|1\n", 0, NULL, SA_EXIT_OK, "line 2: JobID: cannot read job id '1000_2+3': record set aside",
     "\"job_id\":8,"},
    {"sacct TotalCPU a bare number kept", "JobID|State|TotalCPU\n7|COMPLETED|1\n", 0, NULL, SA_EXIT_OK, NULL,
     "\"extra\":{\"TotalCPU\":\"1\"}"},
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

/* Replaces the first occurrence of from by to in a heap string (reallocated); fails when absent. */
static char *replace_first(char *s, const char *from, const char *to)
{
    char *at = strstr(s, from), *out;
    size_t pre, len = strlen(s), fl = strlen(from), tl = strlen(to);

    if (!at)
        fail_msg("fixture lacks '%s'", from);
    pre = (size_t)(at - s);
    out = malloc(len - fl + tl + 1);
    assert_non_null(out);
    memcpy(out, s, pre);
    memcpy(out + pre, to, tl);
    memcpy(out + pre + tl, at + fl, len - pre - fl + 1);
    free(s);
    return out;
}

/* Replaces every '|' by the three bytes of U+2603 (a snowman). */
static char *pipes_to_snowmen(char *s)
{
    size_t n = 0, len = strlen(s);
    char *out, *o;
    for (const char *c = s; *c; c++)
        n += *c == '|';
    out = o = malloc(len + 2 * n + 1);
    assert_non_null(out);
    for (const char *c = s; *c; c++) {
        if (*c == '|') {
            memcpy(o, "\xe2\x98\x83", 3);
            o += 3;
        } else {
            *o++ = *c;
        }
    }
    *o = '\0';
    free(s);
    return out;
}

/* Bad input made from the repository's fixtures: real-sized outputs broken the ways files break
 * (cut short, a delimiter inside a name, a field lost, a wrong type deep in a document, invalid
 * UTF-8), and the JSON lines of an exporter's own --Format template; each one line: exit 3 when
 * the file cannot be parsed, else the broken record set aside (or repaired) and the others printed. */
static void test_fixture_bad_inputs(void **state)
{
    static const struct {
        const char *name, *fixture, *from, *to;
        int cut; /* keep only the first 1/cut of the file (0: all) */
        int exit_code;
        const char *stderr_has;
    } fcases[] = {
        {"squeue cut in the middle", "gen/v0.0.44/squeue.json", NULL, NULL, 2, SA_EXIT_INPUT, "truncated JSON"},
        {"sacct json cut in the middle", "gen/v0.0.40/sacct.json", NULL, NULL, 3, SA_EXIT_INPUT, "truncated JSON"},
        {"node list cut in the middle", "gen/v0.0.37/scontrol-nodes.json", NULL, NULL, 2, SA_EXIT_INPUT,
         "truncated JSON"},
        /* one record broken: set aside, the rest printed */
        {"sacct -P with a delimiter inside a job name", "gen/v0.0.41/sacct-P.txt", "|", "\xe2\x98\x83", 0,
         SA_EXIT_OK, "job 1053: expected 30 fields, found 31 (a delimiter inside a free-text field?): record set aside"},
        {"sacct -P with a field lost", "gen/v0.0.42/sacct-P.txt", "|ok|alice|", "|ok|", 0, SA_EXIT_OK,
         "job 1001: expected 30 fields"},
        {"node cpus a string", "gen/v0.0.43/scontrol-nodes.json", "\"cpus\": 16,", "\"cpus\": \"sixteen\",", 0,
         SA_EXIT_OK, "node c0001: cpus: expected a number, got string \"sixteen\": record set aside"},
        {"squeue job_id a string", "gen/v0.0.39/squeue.json", "\"job_id\": 1002,", "\"job_id\": \"1002\",", 0,
         SA_EXIT_OK, "jobs[1]: job record without job_id (job_id is string): record set aside"},
        {"invalid UTF-8 in a job name", "gen/v0.0.38/squeue.json", "\"name\": \"train\"",
         "\"name\": \"tr\xff\xfein\"", 0, SA_EXIT_OK, "not UTF-8: invalid bytes replaced by U+FFFD: repaired and kept"},
        {"sinfo group not an object", "gen/v0.0.40/sinfo.json", "\"sinfo\": [", "\"sinfo\": [ 7,", 0, SA_EXIT_INPUT,
         "sinfo[0]: expected an object"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof fcases / sizeof fcases[0]; i++) {
        bad_case_t c = {fcases[i].name, NULL, 0, NULL, fcases[i].exit_code, fcases[i].stderr_has,
                        fcases[i].exit_code == SA_EXIT_OK ? "\"record\":" : NULL};
        size_t len;
        char *data = tu_read_file(tu_fixture(fcases[i].fixture), &len);

        if (fcases[i].cut)
            len /= (size_t)fcases[i].cut;
        else if (strcmp(fcases[i].from, "|") == 0)
            data = pipes_to_snowmen(data);
        else
            data = replace_first(data, fcases[i].from, fcases[i].to);
        run_case(&c, data, fcases[i].cut ? len : strlen(data));
        free(data);
    }
    {
        /* an exporter's squeue/sinfo --Format template that prints one JSON object a line */
        static const char lines[] = "{\"acct\": \"physics\", \"jobid\": 7, \"st\": \"RUNNING\", \"ncpu\": 4}\n"
                                    "{\"acct\": \"bio\", \"jobid\": 8, \"st\": \"PENDING\", \"ncpu\": 1}\n";
        bad_case_t c = {"JSON lines", lines, 0, NULL, SA_EXIT_INPUT, "not Slurm JSON output", NULL};
        run_case(&c, lines, strlen(lines));
    }
    printf("  %zu cases made from fixtures checked\n", sizeof fcases / sizeof fcases[0] + 1);
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
        cmocka_unit_test(test_fixture_bad_inputs),
    };
    return cmocka_run_group_tests_name("bad_input", tests, NULL, NULL);
}
