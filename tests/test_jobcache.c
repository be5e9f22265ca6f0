/*
 * test_jobcache.c - ingest/sa_jobcache.c, the per-cluster cache of merged records (SQLite,
 * no server): the file made 0600, a link refused; the token and sequence kept across opens
 * and a reset giving a new token and nothing else; record keys (a pending squeue record's
 * forecast start counts as 0); digests put, replaced, forgotten; jobs live or not, their
 * touch time never moving back, pruned; a transaction rolled back; the temporary id sets
 * (what was present already, the live jobs missing from a set) and the spans handed out in
 * job id order across pages, dropped by input, gone after a close.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_jobcache.h"

/* A directory of this test's own: dir (a mkdtemp template) and the cache's path under it. */
typedef struct {
    char dir[64], path[128];
} box_t;

static void box_make(box_t *b)
{
    snprintf(b->dir, sizeof b->dir, "/tmp/sa-jobcache-XXXXXX");
    assert_non_null(mkdtemp(b->dir));
    snprintf(b->path, sizeof b->path, "%s/c.jobcache.sqlite", b->dir);
}

static sa_jobcache_t *open_ok(const char *path)
{
    sa_error_t err;
    sa_jobcache_t *c = sa_jobcache_open(path, &err);
    if (!c)
        fail_msg("open %s: %s", path, err.message);
    return c;
}

/* Created 0600; the token and the sequence survive a reopen; a reset empties it and takes a new token. */
static void test_token_seq_reset(void **state)
{
    box_t b;
    sa_jobcache_t *c;
    struct stat st;
    char token[64];
    sa_error_t err;
    uint64_t d;
    bool live;
    (void)state;

    box_make(&b);
    c = open_ok(b.path);
    assert_int_equal(stat(b.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(strlen(sa_jobcache_token(c)), 32);
    assert_int_equal(sa_jobcache_seq(c), -1);
    assert_true(sa_jobcache_set_seq(c, 41, &err));
    assert_true(sa_jobcache_put_record(c, 7, SA_SRC_SACCT_TEXT, 100, 200, 0xfeedULL, &err));
    assert_true(sa_jobcache_put_job(c, 7, true, 1000, &err));
    snprintf(token, sizeof token, "%s", sa_jobcache_token(c));
    sa_jobcache_close(c);

    c = open_ok(b.path);
    assert_string_equal(sa_jobcache_token(c), token);
    assert_int_equal(sa_jobcache_seq(c), 41);
    assert_true(sa_jobcache_get_record(c, 7, SA_SRC_SACCT_TEXT, 100, 200, &d));
    assert_int_equal(d, 0xfeedULL);
    assert_true(sa_jobcache_reset(c, &err));
    assert_string_not_equal(sa_jobcache_token(c), token);
    assert_int_equal(sa_jobcache_seq(c), -1);
    assert_false(sa_jobcache_get_record(c, 7, SA_SRC_SACCT_TEXT, 100, 200, &d));
    assert_int_equal(sa_jobcache_get_job(c, 7, &live), 0);
    sa_jobcache_close(c);
    sa_jobcache_close(NULL);
    tu_rm_rf(b.dir);
}

/* A link at the cache's path (another user's, say) is not followed; a directory that is not there fails. */
static void test_open_refused(void **state)
{
    box_t b;
    char target[160], missing[160];
    sa_error_t err;
    (void)state;

    box_make(&b);
    snprintf(target, sizeof target, "%s/elsewhere", b.dir);
    assert_int_equal(symlink(target, b.path), 0);
    assert_null(sa_jobcache_open(b.path, &err));
    assert_int_equal(err.domain, SA_ERR_SQLITE);
    assert_non_null(strstr(err.message, b.path));
    assert_int_equal(access(target, F_OK), -1); /* nothing made where it points */
    snprintf(missing, sizeof missing, "%s/no/such/dir/c.sqlite", b.dir);
    assert_null(sa_jobcache_open(missing, &err));
    assert_non_null(strstr(err.message, "cannot open the job cache"));
    tu_rm_rf(b.dir);
}

/* The key: (job id, source, submit, start); unset times 0; a pending squeue record's start (a forecast) 0. */
static void test_record_keys(void **state)
{
    sa_job_t *j = sa_job_new(SA_SRC_SQUEUE);
    int source;
    int64_t submit, start;
    (void)state;

    j->job_id = 7;
    j->state.base = strdup("PENDING");
    j->submit = 100;
    j->start = 900;
    sa_jobcache_key(j, &source, &submit, &start);
    assert_int_equal(source, SA_SRC_SQUEUE);
    assert_int_equal(submit, 100);
    assert_int_equal(start, 0);
    free(j->state.base);
    j->state.base = strdup("RUNNING");
    sa_jobcache_key(j, &source, &submit, &start);
    assert_int_equal(start, 900);
    j->source = SA_SRC_SACCT_TEXT;
    free(j->state.base);
    j->state.base = strdup("PENDING"); /* sacct's start of a pending job is no forecast of squeue's */
    j->submit = SA_UNSET;
    sa_jobcache_key(j, &source, &submit, &start);
    assert_int_equal(source, SA_SRC_SACCT_TEXT);
    assert_int_equal(submit, 0);
    assert_int_equal(start, 900);
    sa_job_destroy(j);
}

/* Digests put, replaced, per key; forgotten for a job; jobs live or not; a rolled back batch leaves nothing. */
static void test_records_and_jobs(void **state)
{
    box_t b;
    sa_jobcache_t *c;
    sa_error_t err;
    uint64_t d;
    bool live;
    int64_t *ids;
    size_t n;
    (void)state;

    box_make(&b);
    c = open_ok(b.path);
    assert_true(sa_jobcache_put_record(c, 7, 1, 100, 0, 11, &err));
    assert_true(sa_jobcache_put_record(c, 7, 1, 100, 0, 12, &err)); /* replaced */
    assert_true(sa_jobcache_put_record(c, 7, 3, 100, 200, 13, &err));
    assert_true(sa_jobcache_put_record(c, 8, 1, 100, 0, UINT64_MAX, &err));
    assert_true(sa_jobcache_get_record(c, 7, 1, 100, 0, &d) && d == 12);
    assert_true(sa_jobcache_get_record(c, 7, 3, 100, 200, &d) && d == 13);
    assert_true(sa_jobcache_get_record(c, 8, 1, 100, 0, &d) && d == UINT64_MAX); /* all 64 bits kept */
    assert_false(sa_jobcache_get_record(c, 7, 1, 101, 0, &d));
    assert_true(sa_jobcache_forget_records(c, 7, &err));
    assert_false(sa_jobcache_get_record(c, 7, 1, 100, 0, &d));
    assert_false(sa_jobcache_get_record(c, 7, 3, 100, 200, &d));
    assert_true(sa_jobcache_get_record(c, 8, 1, 100, 0, &d));

    assert_true(sa_jobcache_put_job(c, 9, true, 1000, &err));
    assert_true(sa_jobcache_put_job(c, 3, true, 1000, &err));
    assert_true(sa_jobcache_put_job(c, 5, false, 1000, &err));
    assert_int_equal(sa_jobcache_get_job(c, 9, &live), 1);
    assert_true(live);
    assert_int_equal(sa_jobcache_get_job(c, 5, &live), 1);
    assert_false(live);
    assert_int_equal(sa_jobcache_get_job(c, 4, &live), 0);
    assert_true(sa_jobcache_live_ids(c, &ids, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 3); /* sorted */
    assert_int_equal(ids[1], 9);
    free(ids);

    assert_true(sa_jobcache_begin(c, &err));
    assert_true(sa_jobcache_put_job(c, 10, true, 1000, &err));
    assert_true(sa_jobcache_put_record(c, 10, 1, 1, 0, 1, &err));
    sa_jobcache_rollback(c);
    assert_int_equal(sa_jobcache_get_job(c, 10, &live), 0);
    assert_false(sa_jobcache_get_record(c, 10, 1, 1, 0, &d));
    assert_true(sa_jobcache_begin(c, &err));
    assert_true(sa_jobcache_put_job(c, 10, true, 1000, &err));
    assert_true(sa_jobcache_commit(c, &err));
    assert_int_equal(sa_jobcache_get_job(c, 10, &live), 1);
    sa_jobcache_close(c);
    tu_rm_rf(b.dir);
}

/*
 * Pruning drops the jobs that are not live and were last touched before the time given,
 * with their records; a touch never moves back (an older write after a newer one).
 */
static void test_prune(void **state)
{
    box_t b;
    sa_jobcache_t *c;
    sa_error_t err;
    size_t pruned = 99;
    uint64_t d;
    bool live;
    (void)state;

    box_make(&b);
    c = open_ok(b.path);
    assert_true(sa_jobcache_put_job(c, 1, false, 100, &err));  /* old, ended: pruned */
    assert_true(sa_jobcache_put_record(c, 1, 1, 0, 0, 5, &err));
    assert_true(sa_jobcache_put_job(c, 2, true, 100, &err));   /* old but live: kept */
    assert_true(sa_jobcache_put_job(c, 3, false, 500, &err));  /* touched since: kept */
    assert_true(sa_jobcache_put_job(c, 3, false, 50, &err));   /* an older touch does not move it back */
    assert_true(sa_jobcache_prune(c, 200, &pruned, &err));
    assert_int_equal(pruned, 1);
    assert_int_equal(sa_jobcache_get_job(c, 1, &live), 0);
    assert_false(sa_jobcache_get_record(c, 1, 1, 0, 0, &d));
    assert_int_equal(sa_jobcache_get_job(c, 2, &live), 1);
    assert_int_equal(sa_jobcache_get_job(c, 3, &live), 1);
    sa_jobcache_close(c);
    tu_rm_rf(b.dir);
}

/* Id sets: the ids present already are counted; the live jobs a set lacks are the vanished ones. */
static void test_id_sets(void **state)
{
    box_t b;
    sa_jobcache_t *c;
    sa_error_t err;
    const int64_t listed[] = {2, 4, 6}, again[] = {4, 6, 8};
    int64_t *ids;
    size_t n, present = 0;
    (void)state;

    box_make(&b);
    c = open_ok(b.path);
    for (int64_t j = 1; j <= 6; j++)
        assert_true(sa_jobcache_put_job(c, j, j != 5, 10, &err)); /* 5 ended */
    assert_true(sa_jobcache_idset_add(c, 1, listed, 3, &present, &err));
    assert_int_equal(present, 0);
    assert_true(sa_jobcache_idset_add(c, 1, again, 3, &present, &err));
    assert_int_equal(present, 2);
    assert_true(sa_jobcache_idset_add(c, 2, listed, 1, NULL, &err));
    assert_true(sa_jobcache_vanished_ids(c, 1, &ids, &n, &err));
    assert_int_equal(n, 2); /* live 1, 2, 3, 4, 6; listed 2, 4, 6, 8 */
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 3);
    free(ids);
    assert_true(sa_jobcache_vanished_ids(c, 2, &ids, &n, &err));
    assert_int_equal(n, 4);
    free(ids);
    assert_true(sa_jobcache_idset_clear(c, &err));
    assert_true(sa_jobcache_vanished_ids(c, 1, &ids, &n, &err));
    assert_int_equal(n, 5);
    free(ids);
    sa_jobcache_close(c);
    tu_rm_rf(b.dir);
}

/* Spans handed out in job id, input, offset order, 2,500 of them (across pages). */
typedef struct {
    size_t n;
    int64_t last_job;
    int last_input;
    uint64_t last_off, digests;
    bool ordered;
} walk_t;

static bool on_span(const sa_jobcache_span_t *s, void *ctx, sa_error_t *error)
{
    walk_t *w = ctx;
    (void)error;
    if (w->n && (s->job_id < w->last_job ||
                 (s->job_id == w->last_job &&
                  (s->input < w->last_input || (s->input == w->last_input && s->off <= w->last_off)))))
        w->ordered = false;
    w->last_job = s->job_id;
    w->last_input = s->input;
    w->last_off = s->off;
    w->digests += s->digest;
    w->n++;
    return true;
}

static bool stop_at_three(const sa_jobcache_span_t *s, void *ctx, sa_error_t *error)
{
    size_t *n = ctx;
    (void)s;
    if (++*n < 3)
        return true;
    sa_error_set(error, SA_ERR_INPUT, 0, "stopped");
    return false;
}

static void test_spans(void **state)
{
    box_t b;
    sa_jobcache_t *c;
    sa_error_t err;
    sa_jobcache_span_t *v = calloc(2500, sizeof *v);
    walk_t w = {0, 0, 0, 0, 0, true};
    uint64_t want = 0;
    size_t stopped = 0;
    (void)state;

    assert_non_null(v);
    for (size_t i = 0; i < 2500; i++) { /* job ids descending, two inputs */
        v[i] = (sa_jobcache_span_t){(int64_t)(5000 - i / 2), (int)(i % 2), (uint64_t)(i * 10), 10, i + 1};
        want += i + 1;
    }
    box_make(&b);
    c = open_ok(b.path);
    assert_true(sa_jobcache_spans_add(c, v, 2500, &err));
    assert_true(sa_jobcache_spans_each(c, on_span, &w, &err));
    assert_int_equal(w.n, 2500);
    assert_true(w.ordered);
    assert_int_equal(w.digests, want);
    assert_false(sa_jobcache_spans_each(c, stop_at_three, &stopped, &err));
    assert_string_equal(err.message, "stopped");
    assert_true(sa_jobcache_spans_drop(c, 1, &err));
    memset(&w, 0, sizeof w);
    w.ordered = true;
    assert_true(sa_jobcache_spans_each(c, on_span, &w, &err));
    assert_int_equal(w.n, 1250);
    sa_jobcache_close(c);

    /* a new connection: the temporary table is gone */
    c = open_ok(b.path);
    memset(&w, 0, sizeof w);
    assert_true(sa_jobcache_spans_each(c, on_span, &w, &err));
    assert_int_equal(w.n, 0);
    sa_jobcache_close(c);
    free(v);
    tu_rm_rf(b.dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_seq_reset), cmocka_unit_test(test_open_refused),
        cmocka_unit_test(test_record_keys),     cmocka_unit_test(test_records_and_jobs),
        cmocka_unit_test(test_prune),           cmocka_unit_test(test_id_sets),
        cmocka_unit_test(test_spans),
    };
    return tu_run_group_tests("jobcache", tests, NULL, NULL);
}
