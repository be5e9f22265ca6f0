/*
 * test_json_stream.c - ingest/sa_json_stream.c, the JSON walker: a document's top level
 * read key by key and its "jobs", "nodes" and "sinfo" arrays element by element, whole or
 * one byte a read alike; meta, errors, warnings and last_update wherever they stand; each
 * job's span, whose bytes alone give the same record (sa_json_job_record); the kind of an
 * empty array; a record that cannot be converted set aside (or failing the parse without a
 * set-aside callback); and the documents refused, each with its one-line message. (Every
 * real capture through it: test_samples, test_parse_equiv, test_parse_record.)
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_json.h"

/* What a parse handed over: job ids (with their spans' bytes), node names, set-aside reasons. */
typedef struct {
    const char *doc;
    int64_t ids[8];
    char *span_bytes[8];
    size_t njobs, nnodes, nasides;
    char names[8][32];
    char why[200];
    sa_span_t span;
} got_t;

static bool on_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    got_t *g = ctx;
    (void)error;
    assert_true(g->njobs < 8);
    g->ids[g->njobs] = job->job_id;
    g->span_bytes[g->njobs] = strndup(g->doc + g->span.off, g->span.len);
    g->njobs++;
    return true;
}

static bool on_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    got_t *g = ctx;
    (void)error;
    assert_true(g->nnodes < 8);
    snprintf(g->names[g->nnodes++], sizeof g->names[0], "%s", node->name ? node->name : "");
    return true;
}

static bool on_setaside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    got_t *g = ctx;
    (void)raw;
    (void)len;
    (void)kept;
    (void)error;
    g->nasides++;
    snprintf(g->why, sizeof g->why, "%s", why);
    return true;
}

static void got_clear(got_t *g)
{
    for (size_t i = 0; i < g->njobs; i++)
        free(g->span_bytes[i]);
    memset(g, 0, sizeof *g);
}

/* Parses doc (one byte a read when slow) into g (and meta, initialised here); returns what sa_parse_json did. */
static bool parse(const char *doc, bool slow, bool aside, got_t *g, sa_meta_t *meta, sa_kind_t *kind,
                  sa_error_t *err)
{
    sa_reader_t r;
    sa_sink_t sink = {on_job, on_node, g, aside ? on_setaside : NULL, false, &g->span};

    memset(g, 0, sizeof *g);
    g->doc = doc;
    sa_meta_init(meta);
    if (slow)
        tu_reader_one_byte(&r, doc, strlen(doc));
    else
        sa_reader_init_mem(&r, doc, strlen(doc));
    sa_error_clear(err);
    return sa_parse_json(&r, &sink, meta, kind, err);
}

#define SQUEUE                                                                                                    \
    "{\"meta\": {\"plugin\": {\"data_parser\": \"data_parser/v0.0.40\"}, \"slurm\": {\"release\": \"23.11.4\"}}, " \
    "\"jobs\": [\n  {\"job_id\": 11, \"job_state\": [\"RUNNING\"], \"user_name\": \"ann\"},\n"                    \
    "  {\"job_id\": 12, \"job_state\": [\"PENDING\"], \"user_name\": \"bob\"}\n], "                               \
    "\"last_update\": {\"set\": true, \"infinite\": false, \"number\": 1791072000}, "                              \
    "\"warnings\": [{\"description\": \"slow\"}], \"errors\": []}"

/* A squeue document whole and one byte a read: the same jobs, meta read before and after "jobs". */
static void test_squeue_document(void **state)
{
    for (int slow = 0; slow < 2; slow++) {
        got_t g;
        sa_meta_t meta;
        sa_kind_t kind;
        sa_error_t err;
        (void)state;
        if (!parse(SQUEUE, slow, false, &g, &meta, &kind, &err))
            fail_msg("%s: %s", slow ? "one byte a read" : "whole", err.message);
        assert_int_equal(kind, SA_KIND_SQUEUE_JSON);
        assert_int_equal(g.njobs, 2);
        assert_int_equal(g.ids[0], 11);
        assert_int_equal(g.ids[1], 12);
        assert_string_equal(meta.data_parser, "v0.0.40");
        assert_string_equal(meta.slurm_release, "23.11.4");
        assert_int_equal(meta.last_update, 1791072000);
        assert_int_equal(meta.warnings.n, 1);
        assert_string_equal(meta.warnings.v[0], "slow");
        assert_int_equal(meta.errors.n, 0);
        /* each span's bytes, alone, are the record */
        for (size_t i = 0; i < g.njobs; i++) {
            sa_job_t *job = NULL;
            assert_true(g.span_bytes[i][0] == '{');
            assert_true(sa_json_job_record(g.span_bytes[i], strlen(g.span_bytes[i]), NULL, &job, &err));
            assert_int_equal(job->job_id, g.ids[i]);
            sa_job_destroy(job);
        }
        got_clear(&g);
        sa_meta_clear(&meta);
    }
}

/* Nodes and sinfo's groups (a group of two nodes in two partitions: each node once, both partitions). */
static void test_nodes_and_groups(void **state)
{
    const char *nodes = "{\"nodes\": [{\"name\": \"c1\", \"state\": [\"IDLE\"]}, {\"name\": \"c2\", \"state\": "
                        "[\"MIXED\"]}]}";
    const char *sinfo = "{\"sinfo\": [{\"nodes\": {\"nodes\": [\"g[1-2]\"]}, \"partition\": {\"name\": \"a\"}, "
                        "\"node\": {\"state\": [\"IDLE\"]}}, {\"nodes\": {\"nodes\": [\"g[1-2]\"]}, \"partition\": "
                        "{\"name\": \"b\"}, \"node\": {\"state\": [\"IDLE\"]}}]}";
    got_t g;
    sa_meta_t meta;
    sa_kind_t kind;
    sa_error_t err;
    (void)state;

    assert_true(parse(nodes, false, false, &g, &meta, &kind, &err));
    assert_int_equal(kind, SA_KIND_NODES_JSON);
    assert_int_equal(g.nnodes, 2);
    assert_string_equal(g.names[1], "c2");
    got_clear(&g);
    sa_meta_clear(&meta);
    if (!parse(sinfo, true, false, &g, &meta, &kind, &err))
        fail_msg("sinfo: %s", err.message);
    assert_int_equal(kind, SA_KIND_SINFO_JSON);
    assert_int_equal(g.nnodes, 2);
    got_clear(&g);
    sa_meta_clear(&meta);
}

/* An empty array has its key's kind ("jobs": squeue's: nothing tells it from sacct's). */
static void test_empty_arrays(void **state)
{
    got_t g;
    sa_meta_t meta;
    sa_kind_t kind;
    sa_error_t err;
    (void)state;

    assert_true(parse("{\"jobs\": []}", false, false, &g, &meta, &kind, &err));
    assert_int_equal(kind, SA_KIND_SQUEUE_JSON);
    assert_int_equal(g.njobs, 0);
    sa_meta_clear(&meta);
    assert_true(parse("{\"meta\": {}, \"nodes\": [ ]}", false, false, &g, &meta, &kind, &err));
    assert_int_equal(kind, SA_KIND_NODES_JSON);
    sa_meta_clear(&meta);
}

/*
 * A job that cannot be converted: with a set-aside callback it is set aside (saying why)
 * and the jobs around it land; without one the parse fails naming it.
 */
static void test_set_aside(void **state)
{
    const char *doc = "{\"jobs\": [{\"job_id\": 1, \"job_state\": [\"RUNNING\"]}, "
                      "{\"job_id\": 2, \"job_state\": [\"RUNNING\"], \"time_limit\": \"soon\"}, "
                      "{\"job_id\": 3, \"job_state\": [\"PENDING\"]}]}";
    got_t g;
    sa_meta_t meta;
    sa_kind_t kind;
    sa_error_t err;
    (void)state;

    assert_true(parse(doc, false, true, &g, &meta, &kind, &err));
    assert_int_equal(g.njobs, 2);
    assert_int_equal(g.ids[0], 1);
    assert_int_equal(g.ids[1], 3);
    assert_int_equal(g.nasides, 1);
    assert_non_null(strstr(g.why, "time_limit"));
    got_clear(&g);
    sa_meta_clear(&meta);
    assert_false(parse(doc, false, false, &g, &meta, &kind, &err));
    assert_non_null(strstr(err.message, "time_limit"));
    assert_null(strchr(err.message, '\n'));
    got_clear(&g);
    sa_meta_clear(&meta);
}

/* What is refused, whole and one byte a read alike, with one line saying why. */
static void test_refused(void **state)
{
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"", "empty input"},
        {"  \n", "empty input"},
        {"<html><body>502</body></html>", "expected a JSON object at top level, found '<' (an HTML page?)"},
        {"[1]", "expected a JSON object at top level, found '['"},
        {"{\"meta\": {}}", "not Slurm JSON output: the top-level object has no \"jobs\", \"nodes\" or \"sinfo\" array"},
        {"{\"errors\": [{\"error\": \"Unable to contact slurm controller\"}]}",
         "Slurm reported an error and no records: Unable to contact slurm controller"},
        {"{\"jobs\": [], \"jobs\": []}", "duplicate key \"jobs\" at top level"},
        {"{\"jobs\": []} {}", "unexpected data after the JSON document"},
        {"{\"jobs\": [{\"job_id\": 1, \"job_state\": [\"RUNNING\"]}", "truncated"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int slow = 0; slow < 2; slow++) {
            got_t g;
            sa_meta_t meta;
            sa_kind_t kind;
            sa_error_t err;
            if (parse(cases[i].doc, slow, true, &g, &meta, &kind, &err))
                fail_msg("'%s' parsed", cases[i].doc);
            if (!strstr(err.message, cases[i].want))
                fail_msg("'%s' (%s): '%s' lacks '%s'", cases[i].doc, slow ? "one byte a read" : "whole", err.message,
                         cases[i].want);
            assert_null(strchr(err.message, '\n'));
            got_clear(&g);
            sa_meta_clear(&meta);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squeue_document), cmocka_unit_test(test_nodes_and_groups),
        cmocka_unit_test(test_empty_arrays),    cmocka_unit_test(test_set_aside),
        cmocka_unit_test(test_refused),
    };
    return tu_run_group_tests("json_stream", tests, NULL, NULL);
}
