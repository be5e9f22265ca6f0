/*
 * test_parse.c - ingest/sa_parse.c, the entry of the parsers: the byte sources (memory, a
 * file descriptor, an error of read), the kinds' names, sa_parse_any's dispatch on an
 * input's first bytes (JSON, scontrol text, sacct text, a byte order mark and blank lines
 * before them, HTML and empty input refused), each job's span, and sa_parse_record reading
 * one sacct record again from its lines and its header. (Every capture through it:
 * test_samples; every record read again: test_parse_record.)
 */
#include "testutil.h"
#include "tu_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SACCT "JobID|JobIDRaw|State|User|Start|End\n" \
              "5|5|COMPLETED|ann|2026-10-04T01:00:00|2026-10-04T02:00:00\n" \
              "5.batch|5.batch|COMPLETED||2026-10-04T01:00:00|2026-10-04T02:00:00\n" \
              "6|6|RUNNING|bob|2026-10-04T03:00:00|Unknown\n"

/* Parses text with sa_parse_any: the kind, and the parse in *p (caller clears). */
static bool parse(const char *text, size_t len, tu_parsed_t *p, sa_error_t *err)
{
    sa_error_clear(err);
    return tu_parse_mem(text, len, NULL, p, err);
}

/* Each input goes to its parser by its first non-blank bytes; a UTF-8 byte order mark is skipped. */
static void test_dispatch(void **state)
{
    static const struct {
        const char *text;
        sa_kind_t kind;
        size_t jobs, nodes;
    } cases[] = {
        {"{\"jobs\": [{\"job_id\": 1, \"job_state\": [\"RUNNING\"]}]}", SA_KIND_SQUEUE_JSON, 1, 0},
        {"\n\n   {\"nodes\": [{\"name\": \"c1\", \"state\": [\"IDLE\"]}]}", SA_KIND_NODES_JSON, 0, 1},
        {"NodeName=c1 Arch=x86_64 CPUTot=4 State=IDLE\nNodeName=c2 CPUTot=4 State=DOWN\n",
         SA_KIND_SCONTROL_NODES_TEXT, 0, 2},
        {SACCT, SA_KIND_SACCT_TEXT, 2, 0},
        {"\xEF\xBB\xBF" SACCT, SA_KIND_SACCT_TEXT, 2, 0},
        {"\xEF\xBB\xBF\r\n{\"jobs\": []}", SA_KIND_SQUEUE_JSON, 0, 0},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_parsed_t p;
        sa_error_t err;
        if (!parse(cases[i].text, strlen(cases[i].text), &p, &err))
            fail_msg("case %zu: %s", i, err.message);
        assert_int_equal(p.kind, cases[i].kind);
        assert_int_equal(p.njobs, cases[i].jobs);
        assert_int_equal(p.nnodes, cases[i].nodes);
        tu_parsed_clear(&p);
    }
}

/* Refused: empty or blank input, HTML, each with one line. */
static void test_refused(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "empty input"},
        {" \r\n\t\n", "empty input"},
        {"\xEF\xBB\xBF", "empty input"},
        {"<!DOCTYPE html><html>", "input is HTML or XML, not Slurm output"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_parsed_t p;
        sa_error_t err;
        assert_false(parse(cases[i].text, strlen(cases[i].text), &p, &err));
        assert_string_equal(err.message, cases[i].want);
        tu_parsed_clear(&p);
    }
}

/* A read that fails fails the parse with its error. */
static ssize_t failing_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    (void)r, (void)buf, (void)cap;
    sa_error_set(error, SA_ERR_IO, EIO, "read failed: the pipe broke");
    return -1;
}

/* A file descriptor's bytes (a pipe) parse as memory's do; a source that fails fails the parse. */
static void test_sources(void **state)
{
    int fds[2];
    tu_parsed_t p;
    sa_reader_t r;
    sa_error_t err;
    (void)state;

    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], SACCT, strlen(SACCT)), (ssize_t)strlen(SACCT));
    close(fds[1]);
    sa_reader_init_fd(&r, fds[0]);
    assert_true(tu_parse_reader(&r, NULL, &p, &err));
    close(fds[0]);
    assert_int_equal(p.kind, SA_KIND_SACCT_TEXT);
    assert_int_equal(p.njobs, 2);
    assert_int_equal(tu_find_job(&p, 5)->nsteps, 1);
    tu_parsed_clear(&p);

    sa_reader_init_mem(&r, "x", 1);
    r.read = failing_read;
    assert_false(tu_parse_reader(&r, NULL, &p, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_string_equal(err.message, "read failed: the pipe broke");
    tu_parsed_clear(&p);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(sa_kind_name(SA_KIND_SQUEUE_JSON), "squeue JSON");
    assert_string_equal(sa_kind_name(SA_KIND_SACCT_JSON), "sacct JSON");
    assert_string_equal(sa_kind_name(SA_KIND_NODES_JSON), "node list JSON");
    assert_string_equal(sa_kind_name(SA_KIND_SINFO_JSON), "sinfo JSON");
    assert_string_equal(sa_kind_name(SA_KIND_SACCT_TEXT), "sacct text");
    assert_string_equal(sa_kind_name(SA_KIND_SCONTROL_NODES_TEXT), "scontrol nodes text");
    assert_string_equal(sa_kind_name(SA_KIND_UNKNOWN), "unknown");
}

/* Spans and records read again: job 5's lines with the header give job 5, with its step. */
typedef struct {
    const char *text;
    sa_span_t span;
    size_t n;
    uint64_t off[4], len[4];
    char header[256], delimiter[8];
} spans_t;

static bool on_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    spans_t *s = ctx;
    (void)job, (void)error;
    s->off[s->n] = s->span.off;
    s->len[s->n] = s->span.len;
    if (s->n == 0) {
        snprintf(s->header, sizeof s->header, "%.*s", (int)s->span.header_len, s->span.header);
        snprintf(s->delimiter, sizeof s->delimiter, "%s", s->span.delimiter);
    }
    s->n++;
    return true;
}

static void test_record_again(void **state)
{
    const char *text = "\xEF\xBB\xBF" SACCT;
    spans_t s = {text, {0}, 0, {0}, {0}, "", ""};
    sa_sink_t sink = {on_job, NULL, &s, NULL, false, &s.span};
    sa_reader_t r;
    sa_meta_t meta;
    sa_error_t err;
    sa_job_t *job = NULL;
    (void)state;

    sa_meta_init(&meta);
    sa_reader_init_mem(&r, text, strlen(text));
    assert_true(sa_parse_any(&r, NULL, &sink, &meta, NULL, &err));
    assert_int_equal(s.n, 2);
    assert_string_equal(s.delimiter, "|");
    assert_string_equal(s.header, "JobID|JobIDRaw|State|User|Start|End\n");
    assert_memory_equal(text + s.off[0], "5|5|COMPLETED", 13); /* the offset counts the byte order mark */
    assert_true(sa_parse_record(text + s.off[0], s.len[0], s.header, strlen(s.header), s.delimiter, NULL, NULL,
                                &job, &err));
    assert_int_equal(job->job_id, 5);
    assert_int_equal(job->nsteps, 1);
    assert_string_equal(job->user, "ann");
    sa_job_destroy(job);
    /* two records' lines are not one record */
    assert_false(sa_parse_record(text + s.off[0], s.off[1] + s.len[1] - s.off[0], s.header, strlen(s.header),
                                 s.delimiter, NULL, NULL, &job, &err));
    assert_null(job);
    assert_non_null(strstr(err.message, "2 records where one was"));
    /* JSON: no delimiter, the element itself */
    assert_true(sa_parse_record("{\"job_id\": 9, \"job_state\": [\"PENDING\"]}", 39, NULL, 0, NULL, NULL, NULL,
                                &job, &err));
    assert_int_equal(job->job_id, 9);
    sa_job_destroy(job);
    sa_meta_clear(&meta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch),   cmocka_unit_test(test_refused),      cmocka_unit_test(test_sources),
        cmocka_unit_test(test_kind_names), cmocka_unit_test(test_record_again),
    };
    return tu_run_group_tests("parse", tests, NULL, NULL);
}
