/*
 * test_torn_reads.c - a report never reads half a write (issue 31, item 1): slurm-report
 * usage read in a loop against the test server while slurm-ingest lands poll after poll
 * into the same archive, each poll ending two of 40 GPU jobs whose runs span a month and 40
 * parts (one flush writes about 150 rollup documents). Every answer the reader gets must be
 * one the archive had between two whole writes: the same polls landed one at a time into a
 * second database, the report run after each, give the set of answers that existed.
 *
 * The window ends before the polls' observation times, so an open run counts up to the
 * window's end whatever the commit's as_of: the answers differ only by the runs that ended.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "tu_archive.h"

#define NJOBS 40
#define NPOLLS 12

/* Writes the sacct capture of poll p: every job, those with index < 2p ended. */
static void write_poll(const char *path, int p)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("JobID|JobIDRaw|User|Account|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|AllocTRES|NodeList\n", f);
    for (int k = 0; k < NJOBS; k++) {
        long id = (long)k * 4096 + 7; /* part k */
        int start_h = k; /* 2026-10-01T00:00 + k hours */
        bool ended = k < 2 * p;
        int end_day = 8 + k / 2; /* 2026-10-08 .. 2026-10-27 */
        fprintf(f, "%ld|%ld|u%d|acct%d|gpu|%s|0:0|2026-09-30T23:00:00|2026-10-01T%02d:00:00|", id, id, k % 4, k % 3,
                ended ? "COMPLETED" : "RUNNING", start_h % 24);
        if (ended)
            fprintf(f, "2026-10-%02dT12:00:00|%d|", end_day, (end_day - 1) * 86400 + 12 * 3600 - (start_h % 24) * 3600);
        else
            fprintf(f, "Unknown|0|");
        fprintf(f, "cpu=8,gres/gpu:a100=2,node=1|ga%03d\n", k % 16 + 1);
    }
    fclose(f);
}

typedef struct {
    const char *uri;
    char *db;
    char dir[64];
} arch_t;

static int ingest_poll(arch_t *a, const char *file, int p)
{
    char at[32];
    snprintf(at, sizeof at, "2026-11-02T00:%02d:00Z", p);
    const char *args[] = {"--sacct", file, "--at", at, NULL};
    return tu_run_ingest(SA_INGEST_BIN, a->uri, a->db, a->dir, "tr", args, NULL);
}

/* The report, as text (caller frees); NULL when it failed. */
static char *usage(arch_t *a, int *rc)
{
    char dbopt[200], *out = NULL, *err = NULL;
    snprintf(dbopt, sizeof dbopt, "--db=%s", a->db);
    const char *args[] = {"usage", "-M", "tr", "-S", "2026-10-01", "-E", "2026-11-01", "--by", "account", "-P", "-n",
                          "-t", "minutes", dbopt, NULL};
    *rc = tu_run_report(SA_REPORT_BIN, a->uri, NULL, NULL, args, &out, &err);
    if (*rc != 0) {
        fprintf(stderr, "slurm-report exited %d: %s\n", *rc, err ? err : "");
        free(out);
        out = NULL;
    }
    free(err);
    return out;
}

static void test_reader_during_writer(void **state)
{
    mongoc_client_t *client;
    arch_t seq = {NULL, NULL, "/tmp/sa-torn-XXXXXX"}, live = {NULL, NULL, "/tmp/sa-torn-XXXXXX"};
    char files[NPOLLS + 1][300], *answers[NPOLLS + 1];
    size_t reads = 0, distinct = 0;
    bool seen[NPOLLS + 1] = {false};
    pid_t writer;
    int rc, status;
    (void)state;

    if (!(client = tu_mongo_client("test_torn_reads", &seq.db)))
        skip();
    seq.uri = live.uri = getenv("SLURM_TEST_MONGO_URI");
    live.db = malloc(strlen(seq.db) + 3);
    sprintf(live.db, "%s_b", seq.db);
    assert_non_null(mkdtemp(seq.dir));
    assert_non_null(mkdtemp(live.dir));
    for (int p = 0; p <= NPOLLS; p++) {
        snprintf(files[p], sizeof files[p], "%s/sacct-%02d.txt", seq.dir, p);
        write_poll(files[p], p);
    }
    /* the answers that exist: the polls one at a time, the report after each */
    for (int p = 0; p <= NPOLLS; p++) {
        assert_int_equal(ingest_poll(&seq, files[p], p), 0);
        assert_non_null(answers[p] = usage(&seq, &rc));
        assert_true(p == 0 || strcmp(answers[p], answers[p - 1]) != 0); /* each poll moves the figures */
    }
    /* the same polls, the reader running all along */
    assert_int_equal(ingest_poll(&live, files[0], 0), 0);
    writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        for (int p = 1; p <= NPOLLS; p++) {
            if (ingest_poll(&live, files[p], p) != 0)
                _exit(1);
        }
        _exit(0);
    }
    for (;;) {
        bool done = waitpid(writer, &status, WNOHANG) == writer;
        char *got = usage(&live, &rc);
        int which = -1;
        assert_non_null(got);
        for (int p = 0; p <= NPOLLS && which < 0; p++)
            which = strcmp(got, answers[p]) == 0 ? p : -1;
        if (which < 0)
            fail_msg("read %zu: an answer the archive never had between two whole writes:\n%s\n(before any poll:\n%s)",
                     reads + 1, got, answers[0]);
        distinct += !seen[which];
        seen[which] = true;
        reads++;
        free(got);
        if (done)
            break;
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("  %zu reads while %d polls landed: each one an answer that existed (%zu distinct)\n", reads, NPOLLS,
           distinct);
    assert_true(reads >= 5);
    {   /* and at the end, the rollups are their documents' */
        const char *verify[] = {"rollup", NULL};
        assert_int_equal(tu_run_ingest(SA_INGEST_BIN, live.uri, live.db, live.dir, "tr", verify, NULL), 0);
    }
    for (int p = 0; p <= NPOLLS; p++)
        free(answers[p]);
    tu_mongo_drop(client, seq.db);
    tu_mongo_drop(client, live.db);
    mongoc_client_destroy(client);
    free(seq.db);
    free(live.db);
    tu_rm_rf(seq.dir);
    tu_rm_rf(live.dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_during_writer),
    };
    return tu_run_group_tests("torn_reads", tests, NULL, NULL);
}
