/*
 * test_jobs.c - `slurm-report jobs` (report/sa_jobs.c), sacct's listing from the archive, on
 * fixtures/gen/v0.0.40 (one generated cluster observed at 2026-10-15T12:00:00Z: failing,
 * cancelled, timed-out, OOM, node-fail, requeued jobs, arrays 1030 and 1045, het jobs 1049 and
 * 1051; the sacct lines quoted in the comments are that fixture's sacct-P.txt) plus a job id
 * reused (9001) and a job cancelled in the second it was submitted (9002): which jobs and records
 * each filter lists, with their states, exit codes, times and elapsed times worked out by hand from
 * the fixture, in sacct's text with -p/-P; the job lists' path byte-equal to --from-jobs; and the
 * number of documents the listing read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mongoc/mongoc.h>

#include "testutil.h"
#include "tu_archive.h"

typedef struct {
    mongoc_client_t *client;
    char *db;
    const char *uri;
    char dir[64];
} fx_t;

static fx_t fx;

/* Ingests the generated cluster as "synth" at its observation time, then a reused id (9001) and 9002. */
static int setup(void **state)
{
    char sq[400], si[400], sa[400], extra[300];
    (void)state;
    if (!(fx.client = tu_mongo_client("test_jobs", &fx.db)))
        return 0; /* each test skips */
    fx.uri = getenv("SLURM_TEST_MONGO_URI");
    snprintf(fx.dir, sizeof fx.dir, "/tmp/sa-jobs-XXXXXX");
    if (!mkdtemp(fx.dir))
        return -1;
    snprintf(sq, sizeof sq, "%s", tu_fixture("gen/v0.0.40/squeue.json"));
    snprintf(si, sizeof si, "%s", tu_fixture("gen/v0.0.40/sinfo-N.json"));
    snprintf(sa, sizeof sa, "%s", tu_fixture("gen/v0.0.40/sacct-P.txt"));
    snprintf(extra, sizeof extra, "%s/reused.txt", fx.dir);
    tu_write_text(extra,
                  "JobID|JobIDRaw|JobName|User|Account|Partition|State|ExitCode|Submit|Eligible|Start|End|ElapsedRaw|"
                  "AllocTRES|NodeList\n"
                  /* 9001 twice: the second, submitted after the first ended, is a new job (the id reused) */
                  "9001|9001|first|ann|physics|gpu|COMPLETED|0:0|2026-10-14T08:00:00|2026-10-14T08:00:00|"
                  "2026-10-14T09:00:00|2026-10-14T21:30:00|45000|cpu=8,gres/gpu:a100=2,node=1|ga001\n"
                  "9001|9001|second|bob|bio|gpu|FAILED|2:0|2026-10-15T08:00:00|2026-10-15T08:00:00|"
                  "2026-10-15T08:10:00|2026-10-15T10:10:00|7200|cpu=4,node=1|c0001\n"
                  /* cancelled in the second it was submitted: slurmdbd's record has a start, its end */
                  "9002|9002|gone|bob|bio|gpu|CANCELLED by 0|0:0|2026-10-15T09:00:00|2026-10-15T09:00:00|"
                  "2026-10-15T09:00:00|2026-10-15T09:00:00|0||None assigned\n");
    {
        const char *args[] = {"--squeue", sq, "--sinfo", si, "--sacct", sa, "--at", "2026-10-15T12:00:00Z", NULL};
        const char *args2[] = {"--sacct", extra, "--at", "2026-10-15T12:00:00Z", NULL};
        if (tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, fx.dir, "synth", args, NULL) != 0 ||
            tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, fx.dir, "synth", args2, NULL) != 0)
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (fx.client) {
        tu_mongo_drop(fx.client, fx.db);
        mongoc_client_destroy(fx.client);
        free(fx.db);
        tu_rm_rf(fx.dir);
    }
    return 0;
}

/* Runs slurm-report jobs with args (NULL-terminated) and --now at the observation; its exit status, *out, *err. */
static int jobs(const char *const *args, bool from_jobs, char **out, char **err)
{
    char dbopt[200], *e = NULL;
    const char *first[] = {"jobs", "--now=2026-10-15T12:00:00Z", dbopt, from_jobs ? "--from-jobs" : NULL, NULL};
    int rc;

    snprintf(dbopt, sizeof dbopt, "--db=%s", fx.db);
    rc = tu_run_report(SA_REPORT_BIN, fx.uri, NULL, first, args, out, &e);
    if (err)
        *err = e;
    else
        free(e);
    return rc;
}

/* Lists with args (-P -n added) and checks the lines; the same from the documents (--from-jobs). */
static void expect(const char *const *args, const char *want)
{
    const char *a[40];
    char *out[2] = {NULL, NULL}, *err = NULL;
    size_t n = 0;

    if (!fx.client)
        skip();
    for (const char *const *p = args; *p && n < 36; p++)
        a[n++] = *p;
    a[n++] = "-P";
    a[n++] = "-n";
    a[n] = NULL;
    for (int from_jobs = 0; from_jobs < 2; from_jobs++) {
        int rc = jobs(a, from_jobs, &out[from_jobs], &err);
        if (rc != 0)
            fail_msg("slurm-report jobs exited %d: %s", rc, err ? err : "");
        free(err);
        err = NULL;
    }
    if (strcmp(out[0], want) != 0)
        fail_msg("slurm-report jobs %s ... gave\n%s\nwanted\n%s", args[0], out[0], want);
    if (strcmp(out[0], out[1]) != 0)
        fail_msg("the job lists give\n%s\nthe documents (--from-jobs)\n%s", out[0], out[1]);
    free(out[0]);
    free(out[1]);
}

/*
 * "Which of alice's jobs failed last week?" as sacct's users type it: -u, -s F,NF, -S/-E.
 * alice's jobs: 1001 R, 1013 NODE_FAIL, 1016 PD, 1057 FAILED, 1063 PD, 1069 PD, 1071 R.
 *   1013  start 11:48:40, end 11:55:20: 6 min 40 s; ExitCode 0:9 (killed by signal 9)
 *   1057  start 08:19:53, end 09:21:19: 1 h 1 min 26 s; 0:9
 * From 10:00 on only 1013 ended in the window (1057 ended at 09:21:19).
 */
static void test_user_state_window(void **state)
{
    const char *a[] = {"-u", "alice", "-s", "F,NF", "-S", "2026-10-15", "-E", "2026-10-16", "-o",
                       "JobID,State,ExitCode,Elapsed", NULL};
    const char *b[] = {"-u", "alice", "-s", "failed,node_fail", "-S", "2026-10-15T10:00", "-E", "now", "-o",
                       "jobid,state,exitcode,elapsed", NULL};
    (void)state;
    expect(a, "1013|NODE_FAIL|0:9|00:06:40\n"
              "1057|FAILED|0:9|01:01:26\n");
    expect(b, "1013|NODE_FAIL|0:9|00:06:40\n");
}

/*
 * Without -s, sacct's window: eligible before E and not ended before S. carol from 11:15 to 11:30:
 *   1003     R, eligible 11:25                          listed
 *   1015     CD, eligible 11:51:10 (after E)            not
 *   1024     pending again (requeued), eligible 12:00:21 not; but its REQUEUED run, 10:53:20 to
 *            11:58:20 (65 min), was running in the window: that record is listed (slurmdbd windows each
 *            record by its own times; the newest record the window selected, without -D)
 *   1045_1   CD, ended 11:10 (before S)                 not
 *   1045_2   CD, 11:01 to 11:20: 19 min                 listed
 *   1045_3   F 1:0, ended 11:58:20                      listed
 *   1045_4   R since 11:53:20 (6 min 40 s to 12:00)     listed
 *   1058     F, ended 09:39:16                          not
 *   1064     PD, eligible 2026-10-13                    listed: pending, Elapsed 00:00:00
 */
static void test_window_without_states(void **state)
{
    const char *a[] = {"-u", "carol", "-S", "2026-10-15T11:15", "-E", "2026-10-15T11:30", "-o",
                       "jobid,state,exitcode,elapsed", NULL};
    (void)state;
    expect(a, "1003|RUNNING|0:0|00:30:00\n"
              "1024|REQUEUED|0:0|01:05:00\n"
              "1045_2|COMPLETED|0:0|00:19:00\n"
              "1045_3|FAILED|1:0|00:13:20\n"
              "1045_4|RUNNING|0:0|00:06:40\n"
              "1064|PENDING|0:0|00:00:00\n");
}

/*
 * -j of an array: every task, the tasks not started yet collapsed as sacct shows them (1030_[15-100%10],
 * last); 1045's task 4 kept the array's own id. -j of a het job's leader: each component.
 * -j of one task and one component: those alone.
 */
static void test_named_arrays_and_het(void **state)
{
    const char *a[] = {"-j", "1045,1049", "-o", "jobid,state,exitcode,elapsed", NULL};
    const char *b[] = {"-j", "1030", "-o", "jobid,state", "-s", "PD,CD", NULL};
    const char *c[] = {"-j", "1030_3,1051+1", "-o", "jobid,state,partition", NULL};
    (void)state;
    /* 1045_1 11:01-11:10 9 min; _2 11:01-11:20 19 min; _3 11:45-11:58:20 13 min 20 s exit 1; _4 running since
     * 11:53:20; 1049+0 and +1 running since 11:43:20: 16 min 40 s to 12:00 */
    expect(a, "1045_1|COMPLETED|0:0|00:09:00\n"
              "1045_2|COMPLETED|0:0|00:19:00\n"
              "1045_3|FAILED|1:0|00:13:20\n"
              "1045_4|RUNNING|0:0|00:06:40\n"
              "1049+0|RUNNING|0:0|00:16:40\n"
              "1049+1|RUNNING|0:0|00:16:40\n");
    /* 1030: tasks 1-4 completed, 5-14 running (not asked for), 15-100 step 10 pending */
    expect(b, "1030_1|COMPLETED\n1030_2|COMPLETED\n1030_3|COMPLETED\n1030_4|COMPLETED\n1030_[15-100%10]|PENDING\n");
    expect(c, "1030_3|COMPLETED|cpu\n1051+1|PENDING|gpu\n");
}

/*
 * -D: 1026 ran three times (sacct: REQUEUED 4000 s, REQUEUED 5000 s, COMPLETED 7950 s), each run a line;
 * 1024 ran once (REQUEUED, 10:53:20-11:58:20, 65 min) and is pending again: its run, then the job.
 * A reused id: 9001's earlier job (ann, COMPLETED, 45,000 s = 12 h 30 min) shows only with -D.
 */
static void test_duplicates(void **state)
{
    const char *a[] = {"-j", "1024,1026,9001", "-D", "-o", "jobid,user,state,exitcode,elapsed", NULL};
    const char *b[] = {"-j", "1024,1026,9001", "-o", "jobid,user,state,exitcode,elapsed", NULL};
    const char *c[] = {"-D", "-u", "ann,bob", "-s", "CD,F", "-S", "2026-10-14", "-E", "2026-10-16", "-A", "physics,bio",
                       "-o", "jobid,user,state,exitcode,elapsed", NULL};
    (void)state;
    expect(a, "1024|carol|REQUEUED|0:0|01:05:00\n"
              "1024|carol|PENDING|0:0|00:00:00\n"
              "1026|erin|REQUEUED|0:0|01:06:40\n"
              "1026|erin|REQUEUED|0:0|01:23:20\n"
              "1026|erin|COMPLETED|0:0|02:12:30\n"
              "9001|ann|COMPLETED|0:0|12:30:00\n"
              "9001|bob|FAILED|2:0|02:00:00\n");
    expect(b, "1024|carol|PENDING|0:0|00:00:00\n"
              "1026|erin|COMPLETED|0:0|02:12:30\n"
              "9001|bob|FAILED|2:0|02:00:00\n");
    /* bob's completed array tasks 1030_1-4 (bio) and 1014 too; the window is the 14th and 15th */
    expect(c, "1014|bob|COMPLETED|0:0|00:06:40\n"
              "1030_1|bob|COMPLETED|0:0|00:10:00\n"
              "1030_2|bob|COMPLETED|0:0|00:10:00\n"
              "1030_3|bob|COMPLETED|0:0|00:10:00\n"
              "1030_4|bob|COMPLETED|0:0|00:24:15\n"
              "9001|ann|COMPLETED|0:0|12:30:00\n"
              "9001|bob|FAILED|2:0|02:00:00\n");
}

/*
 * -D and the window, record by record (slurmdbd's): 1026 ran three times (sacct -D of the fixture):
 *   REQUEUED   submit 06:26:40, eligible 06:26:40, 06:43:20 to 07:50:00
 *   REQUEUED   submit 07:50:00, eligible 07:52:01, 08:06:40 to 09:30:00
 *   COMPLETED  submit 09:30:00, eligible 09:32:01, 09:46:40 to 11:59:10
 * From 09:00 to 09:20 only the second was in the window (the first had ended, the third was not yet
 * eligible): with or without -D that line, with its own submit time. From 09:31 to 09:40 only the
 * third (the REQUEUED runs ended before -S). -s RQ from 07:00 to 08:00: the first, whose job ended in
 * another state. A reused id: 9001's earlier job (ann, 2026-10-14 09:00 to 21:30) is the one a window
 * of the 14th selects, without -D too, and -j 9001 in it; without a window -j 9001 is the newer (bob).
 */
static void test_records_windowed(void **state)
{
    const char *a[] = {"-j", "1026", "-D", "-S", "2026-10-15T09:00", "-E", "2026-10-15T09:20", "-o",
                       "jobid,state,submit,start,end", NULL};
    const char *b[] = {"-u", "erin", "-S", "2026-10-15T09:00", "-E", "2026-10-15T09:20", "-o",
                       "jobid,state,submit,start,end", NULL};
    const char *c[] = {"-j", "1026", "-D", "-S", "2026-10-15T09:31", "-E", "2026-10-15T09:40", "-o",
                       "jobid,state,submit", NULL};
    const char *d[] = {"-s", "RQ", "-S", "2026-10-15T07:00", "-E", "2026-10-15T08:00", "-o", "jobid,state,end", NULL};
    const char *e[] = {"--name", "first,second", "-S", "2026-10-14T10:00", "-E", "2026-10-14T12:00", "-o", "jobid,user,state",
                       NULL};
    const char *f[] = {"-j", "9001", "-S", "2026-10-14T10:00", "-E", "2026-10-14T12:00", "-o", "jobid,user", NULL};
    const char *g[] = {"-j", "9001", "-o", "jobid,user", NULL};
    (void)state;
    expect(a, "1026|REQUEUED|2026-10-15T07:50:00|2026-10-15T08:06:40|2026-10-15T09:30:00\n");
    expect(b, "1026|REQUEUED|2026-10-15T07:50:00|2026-10-15T08:06:40|2026-10-15T09:30:00\n"
              "1061|COMPLETED|2026-10-15T06:47:08|2026-10-15T07:40:06|2026-10-15T11:10:10\n");
    expect(c, "1026|COMPLETED|2026-10-15T09:30:00\n");
    expect(d, "1026|REQUEUED|2026-10-15T07:50:00\n");
    expect(e, "9001|ann|COMPLETED\n");
    expect(f, "9001|ann\n");
    expect(g, "9001|bob\n");
}

/*
 * -p/-P are sacct's text (sacct -X -P with SLURM_TIME_FORMAT=standard, UTC): the header names the fields
 * as sacct does, whatever case -o gave; times without a zone; a time not yet known "Unknown", the start of
 * a job that ended without starting "None" (1011, cancelled while pending); "CANCELLED by <uid>" (1010,
 * 1011); a pending job's NNodes the nodes it asked for (1017: 4); AllocTRES sorted as text
 * (gres/gpu:h100=1 before gres/gpu=2), memory in Slurm's units (2097152 MiB: 2T); each run of a requeued
 * job with its own submit, Reason and billing (1024: the REQUEUED run, then the pending incarnation).
 * The table, CSV and JSON keep ISO-8601 UTC, null for an unknown time and the base state.
 */
static void test_sacct_text(void **state)
{
    const char *a[] = {"-j", "1004,1010,1011,1017,1024,1055", "-D", "-P", "-o",
                       "jobid,State,SUBMIT,start,End,nnodes,alloctres,NodeList,reason", NULL};
    const char *b[] = {"-j", "1011", "-p", "-o", "JobID,Start,Elapsed", NULL};
    const char *c[] = {"-j", "1011", "--json", "-o", "jobid,state,start", NULL};
    char *out = NULL;
    (void)state;
    if (!fx.client)
        skip();
    assert_int_equal(jobs(a, false, &out, NULL), 0);
    assert_string_equal(out,
                        "JobID|State|Submit|Start|End|NNodes|AllocTRES|NodeList|Reason\n"
                        "1004|RUNNING|2026-10-15T10:25:00|2026-10-15T10:30:00|Unknown|2|"
                        "billing=224,cpu=96,gres/gpu:h100=16,gres/gpu=16,mem=2T,node=2|gh[001-002]|None\n"
                        "1010|CANCELLED by 10010|2026-10-15T11:48:50|2026-10-15T11:50:50|2026-10-15T11:57:30|1|"
                        "billing=4,cpu=4,mem=8G,node=1|c0013|None\n"
                        "1011|CANCELLED by 10011|2026-10-15T11:26:40|None|2026-10-15T11:56:40|1||None assigned|"
                        "Resources\n"
                        "1017|PENDING|2026-10-15T11:40:00|Unknown|Unknown|4||None assigned|Resources\n"
                        "1024|REQUEUED|2026-10-15T10:36:40|2026-10-15T10:53:20|2026-10-15T11:58:20|1|"
                        "billing=2,cpu=2,mem=4G,node=1|c0013|None\n"
                        "1024|PENDING|2026-10-15T11:58:20|Unknown|Unknown|1||None assigned|BeginTime\n"
                        "1055|RUNNING|2026-10-15T11:33:20|2026-10-15T11:38:20|Unknown|1|"
                        "billing=24,cpu=8,gres/gpu:h100=1,gres/gpu:h200=1,gres/gpu=2,mem=64G,node=1|gz01|None\n");
    free(out);
    assert_int_equal(jobs(b, false, &out, NULL), 0);
    assert_string_equal(out, "JobID|Start|Elapsed|\n1011|None|00:00:00|\n");
    free(out);
    assert_int_equal(jobs(c, false, &out, NULL), 0);
    assert_non_null(strstr(out, "\"state\": \"CANCELLED\""));
    assert_non_null(strstr(out, "\"start\": null"));
    free(out);
    {
        const char *d[] = {"-j", "1010", "-o", "jobid,submit,state", NULL};
        expect(d, "1010|2026-10-15T11:48:50|CANCELLED by 10010\n"); /* -P -n, and --from-jobs the same */
    }
    {
        /* a job that never ran but whose sacct record has a start (cancelled in the second it was submitted) */
        const char *e[] = {"-j", "9002", "-o", "jobid,state,start,end,elapsed,nodelist", NULL};
        expect(e, "9002|CANCELLED by 0|2026-10-15T09:00:00|2026-10-15T09:00:00|00:00:00|None assigned\n");
    }
}

/*
 * The job lists' path equals the documents' for every filter here and for the whole day, every field;
 * and it reads what the answer needs: alice's failures (-s F,OOM) read 1 job document (after the lists);
 * with NF, which is also how Slurm ends an incarnation it requeues, every one of her 7 jobs (ended since
 * -S, or live) may hold such a record and is read; the whole day's listing 73: the 70 jobs it lists (9001, 9002
 * included), and 1018, 1019 and 1065, which wait on a dependency or are held: never eligible (squeue's
 * eligible_time 0), so not listed, as in sacct.
 */
static void test_lists_equal_documents(void **state)
{
    static const char *const cases[][12] = {
        {"-S", "2026-10-15", "-E", "2026-10-16", NULL},
        {"-S", "2026-10-15T11:50", "-E", "2026-10-15T11:55", "-D", NULL},
        {"-s", "R,PD,S", NULL},
        {"-s", "CA,TO,OOM", "-S", "2026-10-15", NULL},
        {"-r", "gpu,long", "-S", "2026-10-12", "--name", "train,forever,relax", NULL},
        {"-A", "chem", "-S", "2026-10-01", "-D", NULL},
        {"-s", "RQ,NF", "-S", "2026-10-15T07:00", "-E", "2026-10-15T11:00", "-D", NULL},
        {"-S", "2026-10-15T09:00", "-E", "2026-10-15T09:20", NULL},
    };
    char *out = NULL, *err = NULL;
    (void)state;
    if (!fx.client)
        skip();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *a[16];
        char *o[2] = {NULL, NULL};
        size_t n = 0;
        for (size_t k = 0; cases[i][k]; k++)
            a[n++] = cases[i][k];
        a[n++] = "-P";
        a[n++] = "-l";
        a[n] = NULL;
        assert_int_equal(jobs(a, false, &o[0], NULL), 0);
        assert_int_equal(jobs(a, true, &o[1], NULL), 0);
        if (strcmp(o[0], o[1]) != 0)
            fail_msg("case %zu: the job lists give\n%s\nthe documents\n%s", i, o[0], o[1]);
        assert_non_null(strchr(strchr(o[0], '\n') + 1, '\n')); /* a header and rows */
        free(o[0]);
        free(o[1]);
    }
    {
        const char *a[] = {"-u", "alice", "-s", "F,OOM", "-S", "2026-10-15", "-E", "2026-10-16", "-v", "-P", NULL};
        const char *b[] = {"-u", "alice", "-s", "F,NF", "-S", "2026-10-15", "-E", "2026-10-16", "-v", "-P", NULL};
        assert_int_equal(jobs(a, false, &out, &err), 0);
        assert_non_null(strstr(err, "job list document(s) by _id, then 1 job document(s) by _id"));
        free(out);
        free(err);
        assert_int_equal(jobs(b, false, &out, &err), 0);
        assert_non_null(strstr(err, "job list document(s) by _id, then 7 job document(s) by _id"));
        free(out);
        free(err);
    }
    {
        const char *a[] = {"-S", "2026-10-15", "-E", "2026-10-16", "--json", NULL};
        assert_int_equal(jobs(a, false, &out, NULL), 0);
        assert_non_null(strstr(out, "\"job_documents\": 73"));
        assert_non_null(strstr(out, "\"jobid\": \"1030_[15-100%10]\""));
        assert_null(strstr(out, "\"jobid\": \"1018\""));
        assert_null(strstr(out, "\"jobid\": \"1065\""));
        free(out);
    }
}

/* An unknown state or job id is a usage error (exit 2), and -e lists sacct's field names. */
static void test_usage_errors(void **state)
{
    const char *a[] = {"-s", "XX", NULL};
    const char *b[] = {"-j", "12x", NULL};
    const char *e[] = {"-e", NULL};
    char *out = NULL, *err = NULL;
    (void)state;
    if (!fx.client)
        skip();
    assert_int_equal(jobs(a, false, &out, &err), 2);
    assert_non_null(strstr(err, "unknown state 'XX'"));
    free(out);
    free(err);
    assert_int_equal(jobs(b, false, &out, &err), 2);
    free(out);
    free(err);
    /* what no job or list can be is refused, never read as no filter (issue 31, item 5) */
    {
        static const struct {
            const char *opt, *arg, *want;
        } bad[] = {
            {"-j", "0", "-j: expected job ids (123, 123_4, 123+1), got '0'"},
            {"-j", "1001,0_1", "-j: expected job ids (123, 123_4, 123+1), got '0_1'"},
            {"-j", "9007199254740993", "got '9007199254740993'"}, /* past 2^53 */
            {"-j", "", "-j: expected a comma list without empty items, got ''"},
            {"-j", "1001,", "-j: expected a comma list without empty items, got '1001,'"},
            {"--name", "", "--name: expected a comma list without empty items, got ''"},
            {"-u", "alice,,bob", "-u: expected a comma list without empty items, got 'alice,,bob'"},
            {"-T", "cpu,,mem", "-T: expected a comma list of cpu, mem, gres/gpu, billing, got 'cpu,,mem'"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const char *args[] = {bad[i].opt, bad[i].arg, "-S", "2026-10-01", NULL};
            int rc = jobs(args, false, &out, &err);
            if (rc != 2 || !strstr(err, bad[i].want) || strchr(err, '\n') != err + strlen(err) - 1)
                fail_msg("jobs %s '%s': exit %d, stderr '%s' (want 2 and one line with '%s')", bad[i].opt, bad[i].arg,
                         rc, err, bad[i].want);
            free(out);
            free(err);
        }
    }
    assert_int_equal(jobs(e, false, &out, NULL), 0);
    assert_non_null(strstr(out, "exitcode"));
    assert_non_null(strstr(out, "AllocTRES"));
    free(out);
}

/*
 * A listing with no line is the header alone (-n: nothing), exit 0: alice's jobs of
 * 2026-10-10 00:00-01:00 (none ended then, none was running or pending before 10-15).
 */
static void test_empty_listing(void **state)
{
    const char *none[] = {"-u", "alice", "-S", "2026-10-10", "-E", "2026-10-10T01:00:00", NULL};
    (void)state;
    expect(none, "");
}

/*
 * A user or account the archive does not have is one line and exit 2 (README: as in every
 * report), not an empty listing; a known user with no line stays exit 0 (test_empty_listing).
 */
static void test_unknown_names(void **state)
{
    const char *u[] = {"-u", "alcie", "-S", "2026-10-01", NULL};
    const char *a[] = {"-A", "physcs", "-s", "F", "-S", "2026-10-01", NULL};
    char *out = NULL, *err = NULL;
    (void)state;
    if (!fx.client)
        skip();
    for (int from_jobs = 0; from_jobs < 2; from_jobs++) {
        assert_int_equal(jobs(u, from_jobs, &out, &err), 2);
        assert_non_null(strstr(err, "user 'alcie' has no job"));
        assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1); /* one line */
        free(out);
        free(err);
    }
    assert_int_equal(jobs(a, false, &out, &err), 2);
    assert_non_null(strstr(err, "account 'physcs' has no job"));
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_state_window),    cmocka_unit_test(test_window_without_states),
        cmocka_unit_test(test_named_arrays_and_het), cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_records_windowed),     cmocka_unit_test(test_sacct_text),
        cmocka_unit_test(test_lists_equal_documents), cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_empty_listing),        cmocka_unit_test(test_unknown_names),
    };
    return tu_run_group_tests("jobs", tests, setup, teardown);
}
