/*
 * test_notes.c - ingest/sa_notes.c: odd records said once per input and kind, naming the
 * input and the first such record, with how many there were: jobs with no state or a state
 * none of Slurm's, sacct records ending before they start, nodes listed twice (the index of
 * the first listing handed back, for the merge); records that are not odd say nothing.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_notes.h"

/* The lines said, joined by '\n'. */
typedef struct {
    char text[2048];
    size_t lines;
} said_t;

static void say(const char *line, void *ctx)
{
    said_t *s = ctx;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%s\n", line);
    s->lines++;
}

static sa_job_t *job(sa_source_t source, int64_t id, const char *state, int64_t start, int64_t end)
{
    sa_job_t *j = sa_job_new(source);
    assert_non_null(j);
    j->job_id = id;
    j->state.base = state ? strdup(state) : NULL;
    j->start = start;
    j->end = end;
    return j;
}

/* Jobs: each kind said once, the first record named, the count of all; the well-formed say nothing. */
static void test_jobs(void **state)
{
    sa_notes_t n;
    said_t s = {"", 0};
    sa_job_t *jobs[] = {
        job(SA_SRC_SACCT_TEXT, 5, "COMPLETED", 1791072000, 1791075600), /* fine */
        job(SA_SRC_SACCT_TEXT, 6, "FROBNICATED", SA_UNSET, SA_UNSET),
        job(SA_SRC_SQUEUE, 7, NULL, SA_UNSET, SA_UNSET),
        job(SA_SRC_SACCT_TEXT, 8, "COMPLETED", 1791075600, 1791072000),
        job(SA_SRC_SQUEUE, 9, "RUNNING", 1791075600, 1791072000), /* squeue's end is a forecast: not odd */
        job(SA_SRC_SACCT_JSON, 10, "REQUEUED", 1791075600, 1791072000),
    };
    (void)state;

    jobs[5]->job_id_display = strdup("10_3");
    sa_notes_init(&n);
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        sa_notes_job(&n, jobs[i]);
    assert_int_equal(n.count[SA_NOTE_JOB_STATE], 2);
    assert_int_equal(n.count[SA_NOTE_JOB_END], 2);
    assert_int_equal(n.count[SA_NOTE_NODE_TWICE], 0);
    sa_notes_say(&n, "sacct.txt", say, &s);
    assert_int_equal(s.lines, 2);
    assert_string_equal(s.text, "sacct.txt: job 6's state FROBNICATED is none of Slurm's (2 such jobs in this input): "
                                "kept as printed\n"
                                "sacct.txt: job 8 ends (2026-10-04T00:00:00Z) before it starts (2026-10-04T01:00:00Z) "
                                "(2 such jobs in this input): kept as printed\n");
    sa_notes_clear(&n);

    /* one of a kind: "1 such job"; the display id when there is one */
    sa_notes_init(&n);
    memset(&s, 0, sizeof s);
    sa_notes_job(&n, jobs[0]);
    sa_notes_job(&n, jobs[5]);
    sa_notes_say(&n, "x.json", say, &s);
    assert_string_equal(s.text, "x.json: job 10_3 ends (2026-10-04T00:00:00Z) before it starts (2026-10-04T01:00:00Z) "
                                "(1 such job in this input): kept as printed\n");
    sa_notes_clear(&n);
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        sa_job_destroy(jobs[i]);
}

/* Nodes: a name seen before gives the index of its first record; one the parser merged is said too. */
static void test_nodes(void **state)
{
    sa_notes_t n;
    said_t s = {"", 0};
    sa_node_t *a = sa_node_new(), *b = sa_node_new(), *again = sa_node_new(), *merged = sa_node_new(),
              *nameless = sa_node_new();
    bool nomem;
    (void)state;

    a->name = strdup("c1");
    b->name = strdup("c2");
    again->name = strdup("c1");
    merged->name = strdup("c9");
    merged->listed_twice = true;
    sa_notes_init(&n);
    assert_int_equal(sa_notes_node(&n, a, 0, &nomem), SIZE_MAX);
    assert_false(nomem);
    assert_int_equal(sa_notes_node(&n, b, 1, &nomem), SIZE_MAX);
    assert_int_equal(n.count[SA_NOTE_NODE_TWICE], 0);
    assert_int_equal(sa_notes_node(&n, again, 2, &nomem), 0); /* merge into record 0 */
    assert_int_equal(sa_notes_node(&n, merged, 3, &nomem), SIZE_MAX);
    assert_int_equal(sa_notes_node(&n, nameless, 4, &nomem), SIZE_MAX);
    assert_int_equal(n.count[SA_NOTE_NODE_TWICE], 2);
    sa_notes_say(&n, "sinfo.json", say, &s);
    assert_string_equal(s.text, "sinfo.json: node c1 is listed twice (2 such nodes in this input): merged into one "
                                "record, its first listing first\n");
    sa_notes_clear(&n);
    memset(&s, 0, sizeof s);
    sa_notes_init(&n);
    sa_notes_say(&n, "clean.json", say, &s); /* nothing odd: nothing said */
    assert_int_equal(s.lines, 0);
    sa_notes_clear(&n);
    sa_node_destroy(a);
    sa_node_destroy(b);
    sa_node_destroy(again);
    sa_node_destroy(merged);
    sa_node_destroy(nameless);
}

/* The input's name and a hostile job id are quoted: the line stays one line. */
static void test_quoted(void **state)
{
    sa_notes_t n;
    said_t s = {"", 0};
    sa_job_t *j = job(SA_SRC_SQUEUE, 11, "BAD\nSTATE", SA_UNSET, SA_UNSET);
    (void)state;

    sa_notes_init(&n);
    sa_notes_job(&n, j);
    sa_notes_say(&n, "in\tput", say, &s);
    assert_string_equal(s.text, "in?put: job 11's state BAD?STATE is none of Slurm's (1 such job in this input): "
                                "kept as printed\n");
    sa_notes_clear(&n);
    sa_job_destroy(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_quoted),
    };
    return tu_run_group_tests("notes", tests, NULL, NULL);
}
