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
#include <sys/stat.h>
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
    /* issue 22: a key twice leaves one value unsaid: the record is refused (set aside, the others kept), a
     * top-level key twice refuses the input */
    {"duplicate key in a record", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"name\":\"a\",\"name\":\"b\"}"), 0, NULL,
     SA_EXIT_OK, "duplicate object key near '\"name\"': record set aside", NULL},
    {"duplicate key deep in a record", J("{\"job_id\":7,\"job_state\":\"RUNNING\",\"x\":{\"a\":1,\"a\":2}}"), 0, NULL,
     SA_EXIT_OK, "duplicate object key", NULL},
    {"duplicate key at top level", "{\"jobs\":[],\"jobs\":[{\"job_id\":7,\"job_state\":\"RUNNING\"}]}", 0, NULL,
     SA_EXIT_INPUT, "duplicate key \"jobs\" at top level", NULL},
    {"duplicate key in a top-level value", "{\"statistics\":{\"jobs_pending\":1,\"jobs_pending\":2},\"jobs\":[]}", 0, NULL,
     SA_EXIT_INPUT, "duplicate object key", NULL},
    /* issue 22: a sacct -P capture cut inside its header is cut short, not an empty window */
    {"sacct header cut short", "JobID|JobIDRaw|JobName|User|Account|Part", 0, NULL, SA_EXIT_INPUT,
     "line 1: the input ends inside the header line", NULL},
    /* kept, not rejected */
    {"JSON with a UTF-8 byte order mark", "\xEF\xBB\xBF" J("{\"job_id\":7,\"job_state\":\"RUNNING\"}"), 0, NULL,
     SA_EXIT_OK, NULL, "\"job_id\":7"},
    {"sacct header alone: an empty window", SACCT_HDR, 0, NULL, SA_EXIT_OK, NULL, NULL},
    /* kept, and said once per file and kind, naming the first record (issue 31, item 5) */
    {"unknown job state kept", J("{\"job_id\":7,\"job_state\":[\"QUANTUM_LEAP\",\"NEW_FLAG\"]}"), 0, NULL,
     SA_EXIT_OK, "job 7's state QUANTUM_LEAP is none of Slurm's (1 such job in this input): kept as printed",
     "QUANTUM_LEAP+NEW_FLAG"},
    {"null job state kept", J("{\"job_id\":7,\"job_state\":null},{\"job_id\":8,\"job_state\":\"WARPED\"}"), 0, NULL,
     SA_EXIT_OK, "job 7 has no state (2 such jobs in this input): kept as printed", "\"job_id\":8"},
    {"sacct end before start kept",
     SACCT_HDR "5|5|COMPLETED|2026-01-01T00:00:00|2026-01-01T02:00:00|2026-01-01T01:00:00|cpu=1|n1|0\n"
     "6|6|COMPLETED|2026-01-01T00:00:00|2026-01-01T02:00:00|2026-01-01T01:30:00|cpu=1|n1|0\n", 0, NULL, SA_EXIT_OK,
     "job 5 ends (2026-01-01T01:00:00Z) before it starts (2026-01-01T02:00:00Z) (2 such jobs in this input): kept as "
     "printed", "\"job_id\":6"},
    {"node listed twice", N("{\"name\":\"n1\",\"state\":[\"IDLE\"]},{\"name\":\"n2\",\"state\":[\"IDLE\"]},"
                            "{\"name\":\"n1\",\"state\":[\"ALLOCATED\"]}"), 0, NULL, SA_EXIT_OK,
     "node n1 is listed twice (1 such node in this input): merged into one record, its first listing first",
     "\"state\":\"ALLOCATED\""},
    {"node twice in one partition of sinfo",
     "{\"sinfo\":[{\"nodes\":{\"nodes\":[\"n1\"]},\"node\":{\"state\":[\"IDLE\"]},\"partition\":{\"name\":\"p\"}},"
     "{\"nodes\":{\"nodes\":[\"n1\"]},\"node\":{\"state\":[\"MIXED\"]},\"partition\":{\"name\":\"p\"}}]}", 0, NULL,
     SA_EXIT_OK, "node n1 is listed twice (1 such node in this input)", "\"state\":\"IDLE\""},
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

/* run_case, expecting also (when not NULL) on a second stderr line. */
static void run_case_also(const bad_case_t *c, const char *data, size_t len, const char *also)
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
        if (count_lines(err) != (also ? 2 : 1))
            fail_msg("%s: expected %d stderr line(s), got: %s", c->name, also ? 2 : 1, err);
        if (also && !strstr(err, also))
            fail_msg("%s: stderr lacks '%s': %s", c->name, also, err);
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

static void run_case(const bad_case_t *c, const char *data, size_t len)
{
    run_case_also(c, data, len, NULL);
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
        const char *also; /* a second line, or NULL */
    } fcases[] = {
        {"squeue cut in the middle", "gen/v0.0.44/squeue.json", NULL, NULL, 2, SA_EXIT_INPUT, "truncated JSON", NULL},
        {"sacct json cut in the middle", "gen/v0.0.40/sacct.json", NULL, NULL, 3, SA_EXIT_INPUT, "truncated JSON", NULL},
        {"node list cut in the middle", "gen/v0.0.37/scontrol-nodes.json", NULL, NULL, 2, SA_EXIT_INPUT,
         "truncated JSON", NULL},
        /* one record broken: set aside, the rest printed */
        {"sacct -P with a delimiter inside a job name", "gen/v0.0.41/sacct-P.txt", "|", "\xe2\x98\x83", 0,
         SA_EXIT_OK, "job 1053: expected 30 fields, found 31 (a delimiter inside a free-text field?): record set aside",
         /* its step lines make a record without the allocation line's state: stored so, and said */
         "job 1053 has no state (1 such job in this input): kept as printed"},
        {"sacct -P with a field lost", "gen/v0.0.42/sacct-P.txt", "|ok|alice|", "|ok|", 0, SA_EXIT_OK,
         "job 1001: expected 30 fields", "job 1001 has no state (1 such job in this input): kept as printed"},
        {"node cpus a string", "gen/v0.0.43/scontrol-nodes.json", "\"cpus\": 16,", "\"cpus\": \"sixteen\",", 0,
         SA_EXIT_OK, "node c0001: cpus: expected a number, got string \"sixteen\": record set aside", NULL},
        {"squeue job_id a string", "gen/v0.0.39/squeue.json", "\"job_id\": 1002,", "\"job_id\": \"1002\",", 0,
         SA_EXIT_OK, "jobs[1]: job record without job_id (job_id is string): record set aside", NULL},
        {"invalid UTF-8 in a job name", "gen/v0.0.38/squeue.json", "\"name\": \"train\"",
         "\"name\": \"tr\xff\xfein\"", 0, SA_EXIT_OK, "not UTF-8: invalid bytes replaced by U+FFFD: repaired and kept", NULL},
        {"sinfo group not an object", "gen/v0.0.40/sinfo.json", "\"sinfo\": [", "\"sinfo\": [ 7,", 0, SA_EXIT_INPUT,
         "sinfo[0]: expected an object", NULL},
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
        run_case_also(&c, data, fcases[i].cut ? len : strlen(data), fcases[i].also);
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

/* ---- issue 22: runs (--no-mongo), as an admin starts them by hand ---------------------------------- */

static char box[64];

/* Writes box/name with text and mode; returns the path (static buffer of 4). */
static const char *box_file(const char *name, const char *text, mode_t mode)
{
    static char paths[4][160];
    static int next;
    char *p = paths[next++ % 4];
    FILE *f;
    snprintf(p, 160, "%s/%s", box, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(p, mode), 0);
    return p;
}

/*
 * Runs slurm-ingest --cluster=h with the box's private directories, --no-mongo unless
 * a MongoDB URI is given (env SLURM_INGEST_MONGO_URI), standard input from /dev/null,
 * and the options args; returns the exit code, *err what it printed on stderr.
 */
static int run_box(const char *const args[], const char *mongo_uri, char **err)
{
    char *argv[40], lock[128], spool[128], sqlite[128], env_uri[300], *out;
    char *env[] = {env_uri, NULL};
    int n = 0, rc;

    snprintf(lock, sizeof lock, "--lock-dir=%s/lock", box);
    snprintf(spool, sizeof spool, "--spool-dir=%s/spool", box);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.sqlite", box);
    snprintf(env_uri, sizeof env_uri, "SLURM_INGEST_MONGO_URI=%s", mongo_uri ? mongo_uri : "");
    argv[n++] = (char *)"/bin/sh";
    argv[n++] = (char *)"-c";
    argv[n++] = (char *)"exec \"$0\" \"$@\" < /dev/null";
    argv[n++] = (char *)SA_INGEST_BIN;
    argv[n++] = (char *)"--cluster=h";
    argv[n++] = lock;
    argv[n++] = spool;
    argv[n++] = sqlite;
    if (!mongo_uri)
        argv[n++] = (char *)"--no-mongo";
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    rc = tu_run(argv, mongo_uri ? env : NULL, &out, err);
    free(out);
    return rc;
}

/* Expects exit code want and stderr of exactly one line holding has. */
static void expect_run(const char *what, const char *const args[], const char *mongo_uri, int want, const char *has)
{
    char *err;
    int rc = run_box(args, mongo_uri, &err);
    if (rc != want)
        fail_msg("%s: exit %d, expected %d; stderr: %s", what, rc, want, err);
    if (count_lines(err) != 1 || !strstr(err, has))
        fail_msg("%s: expected one stderr line with '%s', got: %s", what, has, err);
    free(err);
}

/* Usage slips are exit 2, found before anything is captured or spooled. */
static void test_run_slips(void **state)
{
    const char *sq = tu_fixture("gen/v0.0.44/squeue.json");
    char arg[200], dir[160];
    (void)state;

    {
        const char *a[] = {"--max-output=0", "--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("--max-output 0", a, NULL, SA_EXIT_USAGE, "max-output: must be more than 0 bytes");
    }
    {
        const char *a[] = {"--spool-max=0", "--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("--spool-max 0", a, NULL, SA_EXIT_USAGE, "spool-max: must be more than 0 bytes");
    }
    {
        const char *a[] = {"--squeue", "-", "--sinfo", "-", "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("--squeue - --sinfo -", a, NULL, SA_EXIT_USAGE, "may be given for one input only");
    }
    {
        /* libmongoc takes "[bad" for a host name; nothing could ever connect: not "unreachable" (8) */
        const char *a[] = {"--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("a malformed URI", a, "mongodb://u:pw@[bad", SA_EXIT_USAGE, "the MongoDB URI is malformed");
    }
    {
        const char *conf = box_file("open.conf", "cluster = h\n", 0666);
        const char *a[] = {"--config", conf, "--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("a world-writable configuration file", a, NULL, SA_EXIT_USAGE,
                   "open.conf: writable by every user (mode 0666)");
    }
    {
        /* invalid UTF-8 in the file is not echoed to the terminal: '?' for each byte */
        const char *conf = box_file("latin1.conf", "cluster = h\ntime\xe9out = 60\n", 0600);
        const char *a[] = {"--config", conf, "--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        expect_run("a configuration file in Latin-1", a, NULL, SA_EXIT_USAGE, "latin1.conf:2: unknown option 'time?out'");
    }
    /* replay of what holds nothing to replay */
    {
        const char *a[] = {"replay", "/nonexistent/archive", NULL};
        expect_run("replay of a missing directory", a, NULL, SA_EXIT_USAGE,
                   "replay /nonexistent/archive: No such file or directory");
    }
    snprintf(dir, sizeof dir, "%s/archive", box);
    snprintf(arg, sizeof arg, "--archive-dir=%s", dir);
    {
        const char *a[] = {arg, "--squeue", sq, "--at=2026-10-15T12:00:00Z", NULL};
        char *err;
        int rc = run_box(a, NULL, &err);
        if (rc != SA_EXIT_OK)
            fail_msg("archiving run: exit %d: %s", rc, err);
        free(err);
    }
    {
        const char *a[] = {"replay", dir, NULL};
        char *err;
        int rc = run_box(a, NULL, &err);
        if (rc != SA_EXIT_OK || !strstr(err, "record(s) of squeue") || strstr(err, " 0 record(s) of squeue"))
            fail_msg("replay of the archive: exit %d: %s", rc, err);
        free(err);
    }
    snprintf(dir, sizeof dir, "%s/archive/h", box);
    {
        const char *a[] = {"replay", dir, NULL};
        expect_run("replay of the cluster's subdirectory", a, NULL, SA_EXIT_USAGE,
                   "no h/ in it: give the directory above it");
    }
}

/* Rejected inputs: logged once, naming the file the user gave; Slurm's errors[] in sdiag are 4. */
static void test_run_rejections(void **state)
{
    const char *sdiag = box_file("sdiag.json", "{\"meta\":{},\"errors\":[{\"error\":\"Unable to contact slurm "
                                               "controller\"}]}\n", 0600);
    const char *cut = box_file("cut.json", "{\"meta\":{},\"jobs\":[{\"job_id\":1,", 0600);
    const char *empty = box_file("empty.json", "", 0600);
    const char *sinfo0 = box_file("sinfo0.json", "{\"sinfo\": []}", 0600);
    char want[200];
    (void)state;

    {
        const char *a[] = {"--sdiag", sdiag, "--at=2026-10-15T12:01:00Z", NULL};
        snprintf(want, sizeof want, "%s: sdiag: no statistics; Slurm says: Unable to contact slurm controller", sdiag);
        expect_run("sdiag errors[]", a, NULL, SA_EXIT_SLURM, want);
    }
    {
        const char *a[] = {"--squeue", cut, "--at=2026-10-15T12:02:00Z", NULL};
        snprintf(want, sizeof want, "%s: truncated JSON", cut);
        expect_run("a truncated --squeue", a, NULL, SA_EXIT_INPUT, want);
        expect_run("a truncated --squeue", a, NULL, SA_EXIT_INPUT, "moved to ");
    }
    {
        char *err;
        const char *a[] = {"--squeue", empty, "--at=2026-10-15T12:04:00Z", NULL};
        snprintf(want, sizeof want, "%s: empty input", empty);
        expect_run("an empty --squeue", a, NULL, SA_EXIT_INPUT, want);
        assert_int_equal(run_box(a, NULL, &err), SA_EXIT_INPUT);
        if (strstr(err, "squeue.txt"))
            fail_msg("an empty --squeue is named after the spool copy: %s", err);
        free(err);
    }
    /* an empty record array is of its key's kind (it was taken for squeue's whatever the key) */
    {
        const char *a[] = {"--squeue", sinfo0, "--at=2026-10-15T12:05:00Z", NULL};
        snprintf(want, sizeof want, "%s: expected squeue output, found sinfo JSON", sinfo0);
        expect_run("{\"sinfo\": []} as --squeue", a, NULL, SA_EXIT_INPUT, want);
    }
    {
        const char *a[] = {"--sinfo", sinfo0, "--at=2026-10-15T12:06:00Z", NULL};
        snprintf(want, sizeof want, "%s: no nodes", sinfo0);
        expect_run("{\"sinfo\": []} as --sinfo", a, NULL, SA_EXIT_INPUT, want);
    }
}

/*
 * Odd records in a run: kept, and a warning once per input and kind naming the input and the
 * first record. A node listed twice was refused by the time series (exit 3), and the snapshot,
 * left in the spool, failed every run after it.
 */
static void test_run_notes(void **state)
{
    const char *twice = box_file("twice.json", "{\"nodes\": [{\"name\": \"n1\", \"state\": [\"IDLE\"], \"cpus\": 4}, "
                                               "{\"name\": \"n1\", \"state\": [\"ALLOCATED\"], \"cpus\": 8}]}", 0600);
    const char *nostate = box_file("nostate.json", "{\"jobs\": [{\"job_id\": 5, \"job_state\": null}]}", 0600);
    char want[300];
    (void)state;

    {
        const char *a[] = {"--sinfo", twice, "--at=2026-10-15T13:00:00Z", NULL};
        snprintf(want, sizeof want, "warning: %s: node n1 is listed twice (1 such node in this input): merged into one "
                 "record, its first listing first", twice);
        expect_run("a node listed twice", a, NULL, SA_EXIT_OK, want);
    }
    {
        /* the next run lands (nothing was left in the spool) */
        const char *a[] = {"--squeue", nostate, "--at=2026-10-15T13:01:00Z", NULL};
        snprintf(want, sizeof want, "warning: %s: job 5 has no state (1 such job in this input): kept as printed",
                 nostate);
        expect_run("a job without a state", a, NULL, SA_EXIT_OK, want);
    }
}

/* -q is one step quieter (warnings still shown), -qq errors only: as --help and the man page say. */
static void test_quiet(void **state)
{
    char *argv[] = {(char *)SA_INGEST_BIN, (char *)"--help", NULL}, *out, *err, *line;
    /* a group-readable configuration file that sets mongo-uri: a warning */
    const char *conf = box_file("exposed.conf", "cluster = h\nmongo-uri = mongodb://127.0.0.1:1/\n", 0640);
    const char *sq = tu_fixture("gen/v0.0.44/squeue.json");
    (void)state;

    assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
    line = strstr(out, "  -q, --quiet");
    assert_non_null(line);
    line[strcspn(line, "\n")] = '\0';
    if (!strstr(line, "once: warnings and errors; twice: errors only"))
        fail_msg("--help says of -q: %s", line);
    free(out);
    free(err);
    {
        const char *a[] = {"--config", conf, "-q", "--squeue", sq, "--at=2026-10-15T12:10:00Z", NULL};
        assert_int_equal(run_box(a, NULL, &err), SA_EXIT_OK);
        if (!strstr(err, "warning: ") || !strstr(err, "readable by others"))
            fail_msg("-q hid a warning: %s", err);
        free(err);
    }
    {
        const char *a[] = {"--config", conf, "-qq", "--squeue", sq, "--at=2026-10-15T12:11:00Z", NULL};
        assert_int_equal(run_box(a, NULL, &err), SA_EXIT_OK);
        if (err[0])
            fail_msg("-qq printed more than errors: %s", err);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_fixture_bad_inputs),
        cmocka_unit_test(test_run_slips),
        cmocka_unit_test(test_run_rejections),
        cmocka_unit_test(test_run_notes),
        cmocka_unit_test(test_quiet),
    };
    int rc;

    snprintf(box, sizeof box, "/tmp/sa-bad-run-XXXXXX");
    if (!mkdtemp(box)) {
        perror("mkdtemp");
        return 1;
    }
    rc = tu_run_group_tests("bad_input", tests, NULL, NULL);
    {
        char *argv[] = {(char *)"/bin/rm", (char *)"-rf", box, NULL}, *o, *e;
        tu_run(argv, NULL, &o, &e);
        free(o);
        free(e);
    }
    return rc;
}
