/*
 * test_jobview.c - the typed read view of a stored job document (schema/jobdoc/sa_jobview.h):
 * every document the merge writes for the repository's fixtures, stored as BSON, reads
 * back into the view with the values of the document (no server); absent members, other
 * types and old ObjectId ids read as the header says.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bson/bson.h>

#include "sa_bson.h"
#include "sa_jobview.h"

static int64_t jint(const json_t *o, const char *key, int64_t def)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Two optional strings are equal (both absent, or the same text). */
static void str_eq(const char *what, const char *got, const char *want, int64_t job_id)
{
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0))
        fail_msg("job %lld: %s is %s, the document says %s", (long long)job_id, what, got ? got : "(absent)",
                 want ? want : "(absent)");
}

static void int_eq(const char *what, int64_t got, int64_t want, int64_t job_id)
{
    if (got != want)
        fail_msg("job %lld: %s is %lld, the document says %lld", (long long)job_id, what, (long long)got,
                 (long long)want);
}

static double jnum(const json_t *o, const char *key, double def)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

/* The other TRES of the view ({name, value} pairs) are those of the document's array. */
static void other_eq(const char *what, const sa_jobview_tres_t *got, size_t n, const json_t *want, int64_t id)
{
    int_eq(what, (int64_t)n, (int64_t)json_array_size(want), id);
    for (size_t k = 0; k < n; k++) {
        str_eq(what, got[k].name, jstr(json_array_get(want, k), "name"), id);
        str_eq(what, got[k].value, jstr(json_array_get(want, k), "value"), id);
    }
}

/* The runs of the view are those of the document, with their GPUs by type and exit codes. */
static void check_runs(const sa_jobview_t *v, const json_t *doc, int64_t id)
{
    const json_t *runs = json_object_get(doc, "runs");
    int_eq("runs", (int64_t)v->nruns, (int64_t)json_array_size(runs), id);
    for (size_t i = 0; i < v->nruns; i++) {
        const sa_jobview_run_t *r = &v->runs[i];
        const json_t *d = json_array_get(runs, i), *gbt = json_object_get(d, "gpus_by_type");
        const json_t *exit = json_object_get(d, "exit");
        int_eq("runs[].start", r->start, jint(d, "start", SA_UNSET), id);
        int_eq("runs[].end", r->end, jint(d, "end", SA_UNSET), id);
        str_eq("runs[].state", r->state, jstr(d, "state"), id);
        str_eq("runs[].nodes", r->nodes, jstr(d, "nodes"), id);
        int_eq("runs[].node_count", r->node_count, jint(d, "node_count", SA_UNSET), id);
        int_eq("runs[].cpus", r->cpus, jint(d, "cpus", SA_UNSET), id);
        int_eq("runs[].gpus", r->gpus, jint(d, "gpus", 0), id);
        int_eq("runs[].exit.code", r->exit_code, jint(exit, "code", -1), id);
        int_eq("runs[].exit.signal", r->exit_signal, jint(exit, "signal", -1), id);
        str_eq("runs[].reason", r->reason, jstr(d, "reason"), id);
        int_eq("runs[].billing (x1000)", (int64_t)(r->billing * 1000), (int64_t)(jnum(d, "billing", -1) * 1000), id);
        other_eq("runs[].other", r->other, r->nother, json_object_get(d, "other"), id);
        int_eq("runs[].gpus_by_type", (int64_t)r->ngpu_types, (int64_t)json_array_size(gbt), id);
        for (size_t k = 0; k < r->ngpu_types; k++) {
            str_eq("runs[].gpus_by_type[].type", r->gpu_types[k].type, jstr(json_array_get(gbt, k), "type"), id);
            int_eq("runs[].gpus_by_type[].count", r->gpu_types[k].count, jint(json_array_get(gbt, k), "count", 0), id);
        }
    }
}

typedef struct {
    sa_jobview_t view; /* one view for every document: its buffers are reused */
    size_t docs, runs, gpu_types, history, reasons, others, cancelled_by;
} ctx_t;

/* Reads one merged document through BSON into the view and compares. */
static void check_doc(const json_t *doc, const char *where, void *vctx)
{
    ctx_t *c = vctx;
    sa_jobview_t *v = &c->view;
    bson_t b = BSON_INITIALIZER;
    sa_error_t err;
    const json_t *hist = json_object_get(doc, "history"), *seen = json_object_get(doc, "seen");
    int64_t id = jint(doc, "job_id", SA_UNSET);

    if (!sa_bson_from_json(doc, &b, &err) || !sa_jobview_read(v, &b, &err))
        fail_msg("%s: job %lld: %s", where, (long long)id, err.message);
    assert_true(v->has_id && v->id.value_type == BSON_TYPE_UTF8);
    str_eq("_id", v->id.value.v_utf8.str, jstr(doc, "_id"), id);
    str_eq("cluster", v->cluster, jstr(doc, "cluster"), id);
    str_eq("user", v->user, jstr(doc, "user"), id);
    str_eq("account", v->account, jstr(doc, "account"), id);
    str_eq("partition", v->partition, jstr(doc, "partition"), id);
    str_eq("qos", v->qos, jstr(doc, "qos"), id);
    str_eq("state", v->state, jstr(doc, "state"), id);
    int_eq("job_id", v->job_id, id, id);
    int_eq("gpus", v->gpus, jint(doc, "gpus", 0), id);
    int_eq("req.gpus", v->req_gpus, jint(json_object_get(doc, "req"), "gpus", 0), id);
    int_eq("req.nodes", v->req_nodes, jint(json_object_get(doc, "req"), "nodes", SA_UNSET), id);
    other_eq("alloc.other", v->alloc_other, v->nalloc_other, json_object_get(json_object_get(doc, "alloc"), "other"),
             id);
    str_eq("extra.cancelled_by", v->cancelled_by, jstr(json_object_get(doc, "extra"), "cancelled_by"), id);
    str_eq("slurm.source", v->source, jstr(json_object_get(doc, "slurm"), "source"), id);
    int_eq("final", v->final, sa_job_state_is_final(jstr(doc, "state")), id);
    int_eq("submit", v->submit, jint(doc, "submit", SA_UNSET), id);
    int_eq("start", v->start, jint(doc, "start", SA_UNSET), id);
    int_eq("end", v->end, jint(doc, "end", SA_UNSET), id);
    int_eq("expected_end", v->expected_end, jint(doc, "expected_end", SA_UNSET), id);
    int_eq("vanished_at", v->vanished_at, jint(doc, "vanished_at", SA_UNSET), id);
    int_eq("seen.first", v->seen_first, jint(seen, "first", SA_UNSET), id);
    int_eq("seen.last", v->seen_last, jint(seen, "last", SA_UNSET), id);
    str_eq("reservation", v->reservation, jstr(doc, "reservation"), id);
    str_eq("array.task_string", v->array_tasks, jstr(json_object_get(doc, "array"), "task_string"), id);
    assert_true(v->has_runs && v->has_history);
    check_runs(v, doc, id);
    int_eq("history", (int64_t)v->nhistory, (int64_t)json_array_size(hist), id);
    for (size_t i = 0; i < v->nhistory; i++) {
        str_eq("history[].state", v->history[i].state, jstr(json_array_get(hist, i), "state"), id);
        int_eq("history[].at", v->history[i].at, jint(json_array_get(hist, i), "at", SA_UNSET), id);
    }
    c->docs++;
    c->runs += v->nruns;
    c->history += v->nhistory;
    for (size_t i = 0; i < v->nruns; i++) {
        c->gpu_types += v->runs[i].ngpu_types;
        c->reasons += v->runs[i].reason != NULL;
        c->others += v->runs[i].nother;
    }
    c->others += v->nalloc_other;
    c->cancelled_by += v->cancelled_by != NULL;
    bson_destroy(&b);
}

static void test_merged_fixtures(void **state)
{
    ctx_t c = {0};
    size_t n;
    (void)state;
    sa_jobview_init(&c.view);
    n = tu_merge_fixtures(check_doc, &c);
    assert_int_equal(n, c.docs);
    printf("  %zu documents (%zu runs, %zu GPU types of runs, %zu history entries, %zu runs' reasons, %zu other TRES, "
           "%zu cancelled_by) read back exactly\n",
           c.docs, c.runs, c.gpu_types, c.history, c.reasons, c.others, c.cancelled_by);
    assert_true(c.docs > 100 && c.gpu_types > 50 && c.reasons > 50 && c.cancelled_by > 0);
    sa_jobview_clear(&c.view);
}

/* Absent members, other types, int32 and integer times, an ObjectId _id, a projection. */
static void test_edges(void **state)
{
    sa_jobview_t v;
    sa_error_t err;
    bson_t *b;
    bson_oid_t oid;
    (void)state;

    sa_jobview_init(&v);
    b = bson_new();
    assert_true(sa_jobview_read(&v, b, &err));
    assert_false(v.has_id || v.has_runs || v.has_history || v.final);
    assert_null(v.cluster);
    assert_null(v.state);
    assert_true(v.job_id == SA_UNSET && v.end == SA_UNSET && v.seen_last == SA_UNSET);
    assert_int_equal(v.nruns, 0);
    bson_destroy(b);

    /* what the usage report projects; start as an integer of seconds, gpus as int32, a bad end */
    bson_oid_init_from_string(&oid, "0123456789abcdef01234567");
    b = BCON_NEW("_id", BCON_OID(&oid), "cluster", "c", "state", "TIMEOUT", "end", BCON_UTF8("not a time"),
                 "runs", "[", "{", "start", BCON_INT64(1000), "end", BCON_DATE_TIME(-1500), "gpus", BCON_INT32(3),
                 "gpus_by_type", "[", "{", "type", "", "count", BCON_DOUBLE(2.0), "}", "{", "count", BCON_INT32(1),
                 "}", "]", "}", "7", "{", "start", BCON_DATE_TIME(5000), "}", "]", "history", "[", "]");
    assert_true(sa_jobview_read(&v, b, &err));
    assert_true(v.has_id && v.id.value_type == BSON_TYPE_OID);
    assert_true(v.final);
    assert_string_equal(v.cluster, "c");
    assert_true(v.end == SA_UNSET);
    assert_int_equal(v.nruns, 2);
    assert_int_equal(v.runs[0].start, 1000);
    assert_int_equal(v.runs[0].end, -2); /* dates before 1970 floor */
    assert_int_equal(v.runs[0].gpus, 3);
    assert_int_equal(v.runs[0].ngpu_types, 2);
    assert_string_equal(v.runs[0].gpu_types[0].type, "");
    assert_int_equal(v.runs[0].gpu_types[0].count, 2);
    assert_null(v.runs[0].gpu_types[1].type);
    assert_int_equal(v.runs[0].gpu_types[1].count, 1);
    assert_int_equal(v.runs[1].start, 5);
    assert_int_equal(v.runs[1].ngpu_types, 0);
    assert_null(v.runs[1].gpu_types);
    assert_true(v.has_history);
    assert_int_equal(v.nhistory, 0);
    bson_destroy(b);

    /* the other TRES of alloc and of the runs, alloc first (a document written in another order) */
    b = BCON_NEW("alloc", "{", "billing", BCON_INT32(2), "other", "[", "{", "name", "energy", "value", "12", "}", "]",
                 "}", "runs", "[", "{", "start", BCON_INT64(1000), "billing", BCON_DOUBLE(1.5), "reason", "BeginTime",
                 "other", "[", "{", "name", "license/a", "value", "1", "}", "{", "name", "fs/disk", "value", "3",
                 "}", "]", "}", "{", "start", BCON_INT64(2000), "}", "{", "start", BCON_INT64(3000), "other", "[",
                 "{", "name", "energy", "value", "7", "}", "]", "}", "]", "req", "{", "nodes", BCON_INT32(3), "}",
                 "extra", "{", "expected_start", BCON_INT64(4000), "cancelled_by", "1000", "}");
    assert_true(sa_jobview_read(&v, b, &err));
    assert_true(v.alloc_billing == 2.0);
    assert_int_equal(v.nalloc_other, 1);
    assert_string_equal(v.alloc_other[0].name, "energy");
    assert_string_equal(v.alloc_other[0].value, "12");
    assert_int_equal(v.nruns, 3);
    assert_true(v.runs[0].billing == 1.5 && v.runs[1].billing == -1);
    assert_string_equal(v.runs[0].reason, "BeginTime");
    assert_null(v.runs[1].reason);
    assert_int_equal(v.runs[0].nother, 2);
    assert_string_equal(v.runs[0].other[1].name, "fs/disk");
    assert_string_equal(v.runs[0].other[1].value, "3");
    assert_int_equal(v.runs[1].nother, 0);
    assert_null(v.runs[1].other);
    assert_int_equal(v.runs[2].nother, 1);
    assert_string_equal(v.runs[2].other[0].value, "7");
    assert_int_equal(v.req_nodes, 3);
    assert_int_equal(v.expected_start, 4000);
    assert_string_equal(v.cancelled_by, "1000");
    bson_destroy(b);

    /* a read replaces everything of the one before */
    b = BCON_NEW("cluster", BCON_INT32(5), "runs", BCON_UTF8("not an array"));
    assert_true(sa_jobview_read(&v, b, &err));
    assert_false(v.has_id || v.has_runs || v.final);
    assert_null(v.cluster);
    assert_int_equal(v.nruns, 0);
    assert_int_equal(v.nalloc_other, 0);
    assert_null(v.alloc_other);
    assert_null(v.cancelled_by);
    assert_true(v.req_nodes == SA_UNSET);
    bson_destroy(b);
    sa_jobview_clear(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merged_fixtures),
        cmocka_unit_test(test_edges),
    };
    return tu_run_group_tests("jobview", tests, NULL, NULL);
}
