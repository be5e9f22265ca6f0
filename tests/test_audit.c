/*
 * test_audit.c - ingest/sa_audit.c, `slurm-ingest audit`'s comparison, without a server:
 * slurmdbd's records (fixtures/audit/slurmdbd.txt) against the documents the archive
 * made of its own records (fixtures/audit/archive.txt, merged job by job as the archive
 * merges them): a job missing, a run missing, a job extra, fields changed on the job and
 * on its run, each one line, nothing else; the same capture on both sides agrees; a
 * document outside sacct's window is not extra; a record given twice (two windows) counts
 * once and the job's fields are its latest incarnation's (its exit code the merge's, a requeued
 * job running again keeping its earlier run's); the lines' words.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_audit.h"
#include "tu_parse.h"

#define FROM INT64_C(1790812800) /* 2026-10-01T00:00:00Z */
#define TO (FROM + 86400)

/* What a comparison printed, a line each. */
typedef struct {
    char text[4096];
    size_t len;
} lines_t;

static bool collect(const sa_audit_diff_t *d, void *ctx, sa_error_t *error)
{
    lines_t *l = ctx;
    char line[600];
    (void)error;
    sa_audit_diff_line(d, line, sizeof line);
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s\n", line);
    return true;
}

/* The documents the archive makes of a capture's records: each job's records merged in turn. */
static json_t *archive_of(const char *rel)
{
    tu_parsed_t p = {0};
    json_t *docs = json_object();
    sa_obs_ctx_t ctx = {"demo", TO, NULL, NULL};
    sa_error_t err;

    tu_parse_fixture(rel, &p);
    for (size_t i = 0; i < p.njobs; i++) {
        char key[32];
        json_t *doc, *sup = NULL;
        sa_merge_kind_t kind;
        snprintf(key, sizeof key, "%lld", (long long)p.jobs[i]->job_id);
        doc = json_incref(json_object_get(docs, key));
        if (!sa_jobdoc_merge(&doc, p.jobs[i], &ctx, &kind, &sup, &err))
            fail_msg("merge: %s", err.message);
        json_object_set_new(docs, key, doc);
        json_decref(sup);
    }
    tu_parsed_clear(&p);
    return docs;
}

/* Compares slurmdbd's capture with the archive's documents; the lines into *l. */
static void audit(const char *ref_rel, json_t *docs, lines_t *l, sa_audit_counts_t *c)
{
    tu_parsed_t p = {0};
    sa_audit_t *a = sa_audit_new(FROM, TO);
    sa_obs_ctx_t ctx = {"demo", TO + 60, NULL, NULL};
    sa_error_t err;
    const char *k;
    json_t *doc;

    assert_non_null(a);
    tu_parse_fixture(ref_rel, &p);
    for (size_t i = 0; i < p.njobs; i++)
        assert_true(sa_audit_add_record(a, p.jobs[i], &ctx, &err));
    assert_true(sa_audit_seal(a, &err));
    json_object_foreach(docs, k, doc) {
        assert_true(sa_audit_add_doc(a, doc, &err));
    }
    memset(l, 0, sizeof *l);
    assert_true(sa_audit_compare(a, collect, l, c, &err));
    sa_audit_free(a);
    tu_parsed_clear(&p);
}

/* Missing, extra and changed, each said once, nothing else. */
static void test_differences(void **state)
{
    json_t *docs = archive_of("audit/archive.txt");
    sa_audit_counts_t c;
    lines_t l;
    (void)state;

    audit("audit/slurmdbd.txt", docs, &l, &c);
    assert_string_equal(l.text, "job 102: state: archive COMPLETED, slurmdbd FAILED\n"
                                "job 102: exit: archive 0:0, slurmdbd 1:0\n"
                                "job 102 run 2026-10-01T01:10:00Z: state: archive COMPLETED, slurmdbd FAILED\n"
                                "job 102 run 2026-10-01T01:10:00Z: exit: archive 0:0, slurmdbd 1:0\n"
                                "job 103 run 2026-10-01T02:00:00Z: missing\n"
                                "job 104: missing\n"
                                "job 106: extra\n");
    assert_int_equal(c.jobs, 5);
    assert_int_equal(c.runs, 5);
    assert_int_equal(c.missing, 2);
    assert_int_equal(c.extra, 1);
    assert_int_equal(c.changed, 4);
    json_decref(docs);
}

/* slurmdbd's own records made documents agree with themselves. */
static void test_agree(void **state)
{
    json_t *docs = archive_of("audit/slurmdbd.txt");
    sa_audit_counts_t c;
    lines_t l;
    (void)state;

    audit("audit/slurmdbd.txt", docs, &l, &c);
    assert_string_equal(l.text, "");
    assert_int_equal(c.jobs, 5);
    assert_int_equal(c.missing + c.extra + c.changed, 0);
    json_decref(docs);
}

/* A changed account, user, partition, TRES or nodes is a line of the job (and the run's fields). */
static void test_fields(void **state)
{
    json_t *docs = archive_of("audit/slurmdbd.txt"), *d101 = json_object_get(docs, "101");
    json_t *run = json_array_get(json_object_get(d101, "runs"), 0);
    sa_audit_counts_t c;
    lines_t l;
    (void)state;

    json_object_set_new(d101, "account", json_string("chem"));
    json_object_set_new(d101, "partition", json_string("cpu"));
    json_object_set_new(run, "nodes", json_string("g09"));
    json_object_set_new(run, "cpus", json_integer(16));
    json_object_del(run, "end");
    audit("audit/slurmdbd.txt", docs, &l, &c);
    assert_string_equal(l.text,
                        "job 101: account: archive chem, slurmdbd physics\n"
                        "job 101: partition: archive cpu, slurmdbd gpu\n"
                        "job 101 run 2026-10-01T01:00:00Z: end: archive (none), slurmdbd 2026-10-01T03:00:00Z\n"
                        "job 101 run 2026-10-01T01:00:00Z: tres: archive "
                        "cpu=16,mem=32768M,billing=8,gres/gpu=2,gres/gpu:a100=2, slurmdbd "
                        "cpu=8,mem=32768M,billing=8,gres/gpu=2,gres/gpu:a100=2\n"
                        "job 101 run 2026-10-01T01:00:00Z: nodes: archive g09, slurmdbd g01\n");
    assert_int_equal(c.changed, 5);
    json_decref(docs);
}

/* sacct's window: eligible before its end, not ended before its start. */
static void test_window(void **state)
{
    json_t *d = json_pack("{s:I, s:I}", "job_id", (json_int_t)1, "eligible", (json_int_t)(FROM - 10));
    (void)state;

    assert_true(sa_audit_in_window(d, FROM, TO)); /* running since before the window */
    json_object_set_new(d, "end", json_integer(FROM - 1));
    assert_false(sa_audit_in_window(d, FROM, TO)); /* ended before it */
    json_object_set_new(d, "end", json_integer(FROM));
    assert_true(sa_audit_in_window(d, FROM, TO));
    json_object_set_new(d, "eligible", json_integer(TO));
    assert_false(sa_audit_in_window(d, FROM, TO)); /* eligible at its end: not in it */
    json_object_del(d, "eligible");
    assert_false(sa_audit_in_window(d, FROM, TO)); /* never eligible: sacct does not list it */
    json_decref(d);
}

/* Two windows print a running job twice; a requeued job's fields are its latest incarnation's. */
static void test_twice(void **state)
{
    tu_parsed_t p = {0};
    sa_audit_t *a = sa_audit_new(FROM, TO);
    sa_obs_ctx_t ctx = {"demo", TO, NULL, NULL};
    json_t *docs = archive_of("audit/slurmdbd.txt");
    sa_audit_counts_t c;
    sa_error_t err;
    const char *k;
    json_t *doc;
    lines_t l = {{0}, 0};
    size_t n;
    (void)state;

    tu_parse_fixture("audit/slurmdbd.txt", &p);
    /* the second window's records first, then the first's: the order does not matter */
    for (size_t i = p.njobs; i-- > 0;)
        assert_true(sa_audit_add_record(a, p.jobs[i], &ctx, &err));
    for (size_t i = 0; i < p.njobs; i++)
        assert_true(sa_audit_add_record(a, p.jobs[i], &ctx, &err));
    assert_true(sa_audit_seal(a, &err));
    (void)sa_audit_ref_ids(a, &n);
    assert_int_equal(n, 5);
    assert_true(sa_audit_listed(a, 103));
    assert_false(sa_audit_listed(a, 106));
    json_object_foreach(docs, k, doc) {
        assert_true(sa_audit_add_doc(a, doc, &err));
        assert_true(sa_audit_add_doc(a, doc, &err)); /* twice: once */
    }
    assert_true(sa_audit_compare(a, collect, &l, &c, &err));
    assert_string_equal(l.text, "");
    assert_int_equal(c.runs, 5);
    sa_audit_free(a);
    tu_parsed_clear(&p);
    json_decref(docs);
}

/*
 * A requeued job running again: its job row's exit code is the merge's (the requeued run's
 * 0:0), not the running record's none (found by bench-scale audit on a generated month).
 */
static void test_requeued_running(void **state)
{
    static const char text[] =
        "JobID|JobIDRaw|User|Account|Partition|State|ExitCode|Submit|Eligible|Start|End|AllocTRES|NodeList\n"
        "201|201|ann|physics|cpu|REQUEUED|0:0|2026-10-01T01:00:00|2026-10-01T01:00:00|2026-10-01T02:00:00|"
        "2026-10-01T03:00:00|cpu=8,node=1|c01\n"
        "201|201|ann|physics|cpu|RUNNING|0:0|2026-10-01T03:00:00|2026-10-01T03:00:00|2026-10-01T03:05:00|Unknown|"
        "cpu=8,node=1|c02\n";
    tu_parsed_t p = {0};
    sa_audit_t *a = sa_audit_new(FROM, TO);
    sa_obs_ctx_t ctx = {"demo", TO, NULL, NULL};
    json_t *doc = NULL, *sup = NULL;
    sa_merge_kind_t kind;
    sa_audit_counts_t c;
    sa_error_t err;
    lines_t l = {{0}, 0};
    (void)state;

    assert_true(tu_parse_mem(text, sizeof text - 1, NULL, &p, &err));
    assert_int_equal(p.njobs, 2);
    /* slurmdbd's records in the order sacct prints them; the archive merged them the other way round */
    for (size_t i = 0; i < p.njobs; i++) {
        assert_true(sa_audit_add_record(a, p.jobs[i], &ctx, &err));
        assert_true(sa_jobdoc_merge(&doc, p.jobs[p.njobs - 1 - i], &ctx, &kind, &sup, &err));
        json_decref(sup);
    }
    assert_true(sa_audit_seal(a, &err));
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "RUNNING");
    assert_non_null(json_object_get(doc, "exit"));
    assert_true(sa_audit_add_doc(a, doc, &err));
    assert_true(sa_audit_compare(a, collect, &l, &c, &err));
    assert_string_equal(l.text, "");
    assert_int_equal(c.runs, 2);
    json_decref(doc);
    sa_audit_free(a);
    tu_parsed_clear(&p);
}

static void test_lines(void **state)
{
    char buf[200];
    sa_audit_diff_t d = {SA_AUDIT_EXTRA, 7, true, FROM, 0, NULL, NULL};
    (void)state;

    assert_string_equal(sa_audit_diff_line(&d, buf, sizeof buf), "job 7 run 2026-10-01T00:00:00Z: extra");
    d.kind = SA_AUDIT_CHANGED;
    d.run = false;
    d.field = SA_AUDIT_F_USER;
    d.slurmdbd = "alice";
    assert_string_equal(sa_audit_diff_line(&d, buf, sizeof buf), "job 7: user: archive (none), slurmdbd alice");
    assert_string_equal(sa_audit_field_name(SA_AUDIT_F_TRES), "tres");
    assert_string_equal(sa_audit_field_name(SA_AUDIT_NF), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differences), cmocka_unit_test(test_agree), cmocka_unit_test(test_fields),
        cmocka_unit_test(test_window),      cmocka_unit_test(test_twice), cmocka_unit_test(test_lines), cmocka_unit_test(test_requeued_running),
    };
    return tu_run_group_tests("audit", tests, NULL, NULL);
}
