/*
 * test_rollup_doc.c - schema/rollup/sa_rollup_doc.c: a rollup document in memory. Members
 * are replaced, never added; an older job version does not overwrite a newer one;
 * tombstones remove, and stay through BSON; sums by row key and runs ended by state; two
 * documents equal whatever the order of their tables; rows that are, and are not, the
 * sums of their members; an empty document; the binary search of members by id.
 */
#include "tu_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D4 TU_D4
#define H TU_H

/*
 * Job id of account a, user u: one run [D4 + from_h, D4 + to_h) of gpus GPUs of type, in
 * state (the job's final state too); into buf.
 */
static const char *job(char *buf, size_t len, int id, const char *user, const char *state, int from_h, int to_h,
                       int gpus, const char *type)
{
    snprintf(buf, len,
             "{\"_id\": \"c:%d\", \"cluster\": \"c\", \"account\": \"a\", \"user\": \"%s\", \"state\": \"%s\", "
             "\"runs\": [{\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"state\": \"%s\", \"cpus\": 2, "
             "\"gpus_by_type\": [{\"type\": \"%s\", \"count\": %d}], \"gpus\": %d}]}",
             id, user, state, (D4 + from_h * H) * 1000, (D4 + to_h * H) * 1000, state, type, gpus, gpus);
    return buf;
}

/* Members are replaced, never added; an older job version does not overwrite a newer one; tombstones remove. */
static void test_rolldoc_members(void **state)
{
    char json[1024];
    sa_jobview_t v;
    sa_rollup_contrib_t c;
    sa_rollup_doc_t d, mini, back;
    sa_rollup_sum_t *sums;
    int64_t *ended;
    sa_error_t err;
    bson_t *b, out = BSON_INITIALIZER;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:9\", \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", \"state\": \"FAILED\", "
             "\"runs\": [{\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"state\": \"FAILED\", "
             "\"gpus_by_type\": [{\"type\": \"a100\", \"count\": 1}], \"gpus\": 1}]}",
             (D4 + H) * 1000, (D4 + 2 * H) * 1000);
    sa_jobview_init(&v);
    sa_rollup_contrib_init(&c);
    tu_contrib_of(&v, &c, &b, json);
    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 0);
    assert_true(sa_rollup_doc_put(&d, "c:9", 5, &c, &err));
    d.changed = false;
    assert_true(sa_rollup_doc_put(&d, "c:9", 5, &c, &err)); /* the same again: nothing changes */
    assert_false(d.changed);
    assert_true(sa_rollup_doc_put(&d, "c:9", 4, NULL, &err)); /* an older version's removal: refused */
    assert_int_equal(d.nm, 1);
    assert_true(sa_rollup_doc_sums(&d, &sums, &ended, &err));
    assert_int_equal(sums[0].gpu_s, H); /* once, not twice */
    free(sums);
    free(ended);

    /* BSON round trip */
    assert_true(sa_rollup_doc_to_bson(&d, 7, &out, &err));
    sa_rollup_doc_init(&back);
    assert_true(sa_rollup_doc_read(&back, "c", &out, &err));
    assert_int_equal(back.v, 7);
    assert_true(sa_rollup_doc_equal(&d, &back));
    { /* a part other than 0: kept by the members and the rows documents, and another part's is not equal */
        sa_rollup_doc_t p5, r5;
        bson_t pb = BSON_INITIALIZER, rb = BSON_INITIALIZER;
        tu_rollup_doc(&p5, SA_ROLLUP_K_MEMBERS, D4, 5);
        assert_string_equal(p5.id, "c:2026-10-04:m5");
        assert_true(sa_rollup_doc_put(&p5, "c:20489", 5, &c, &err));
        assert_false(sa_rollup_doc_equal(&p5, &d));
        assert_true(sa_rollup_doc_to_bson(&p5, 1, &pb, &err));
        assert_true(sa_rollup_doc_rows_bson(&p5, 1, 1, &rb, &err));
        sa_rollup_doc_clear(&p5);
        sa_rollup_doc_init(&p5);
        sa_rollup_doc_init(&r5);
        assert_true(sa_rollup_doc_read(&p5, "c", &pb, &err));
        assert_true(sa_rollup_doc_read(&r5, "c", &rb, &err));
        assert_int_equal(p5.part, 5);
        assert_int_equal(r5.part, 5);
        assert_string_equal(r5.id, "c:2026-10-04:r5");
        assert_true(sa_rollup_doc_rows_match(&p5, &r5));
        sa_rollup_doc_clear(&p5);
        sa_rollup_doc_clear(&r5);
        bson_destroy(&pb);
        bson_destroy(&rb);
    }

    /* a staged removal (tombstone) of version 6 removes the member */
    tu_rollup_doc(&mini, SA_ROLLUP_K_MEMBERS, D4, 0);

    assert_true(sa_rollup_doc_put(&mini, "c:9", 6, NULL, &err));
    assert_int_equal(mini.nm, 1);
    assert_true(sa_rollup_doc_merge(&back, &mini, &err));
    assert_int_equal(back.nm, 1);
    assert_int_equal(back.m[0].nrec, 0); /* a tombstone of version 6 */
    assert_false(sa_rollup_doc_equal(&d, &back));
    assert_true(sa_rollup_doc_sums(&back, &sums, &ended, &err));
    assert_int_equal(back.nkeys ? sums[0].gpu_s : 0, 0);
    free(sums);
    free(ended);
    /* ... which keeps version 5, staged by another writer before the removal, out */
    assert_true(sa_rollup_doc_put(&back, "c:9", 5, &c, &err));
    assert_int_equal(back.m[0].nrec, 0);
    /* ... and is kept when written, then read back */
    bson_reinit(&out);
    assert_true(sa_rollup_doc_to_bson(&back, 8, &out, &err));
    sa_rollup_doc_clear(&mini);
    sa_rollup_doc_init(&mini);
    assert_true(sa_rollup_doc_read(&mini, "c", &out, &err));
    assert_int_equal(mini.nm, 1);
    assert_int_equal(mini.m[0].v, 6);
    assert_true(mini.m[0].gone_at > 0);
    /* a version 7 brings it back */
    assert_true(sa_rollup_doc_put(&mini, "c:9", 7, &c, &err));
    assert_int_equal(mini.m[0].nrec, 1);

    bson_destroy(&out);
    bson_destroy(b);
    sa_rollup_doc_clear(&d);
    sa_rollup_doc_clear(&mini);
    sa_rollup_doc_clear(&back);
    sa_rollup_contrib_clear(&c);
    sa_jobview_clear(&v);
}

/* A new document is named by its key, has its kind's record width, and is empty. */
static void test_new_document(void **state)
{
    sa_rollup_doc_t d;
    sa_rollup_key_t k;
    char buf[1024];
    (void)state;

    tu_rollup_doc(&d, SA_ROLLUP_K_STARTED, D4 + 5 * H, 5);
    assert_string_equal(d.id, "c:2026-10-04:s5");
    assert_string_equal(d.cluster, "c");
    assert_int_equal(d.nf, SA_RS_NF);
    assert_int_equal(d.day, D4);
    k = sa_rollup_doc_key(&d);
    assert_string_equal(k.cluster, "c");
    assert_int_equal(k.kind, SA_ROLLUP_K_STARTED);
    assert_int_equal(k.day, D4);
    assert_int_equal(k.part, 5);
    assert_true(sa_rollup_doc_empty(&d));
    sa_rollup_doc_clear(&d);
    assert_null(d.id); /* cleared: initialised again */
    assert_int_equal(d.nm, 0);

    /* a live member makes it non-empty; its removal leaves a tombstone, and it is empty again */
    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&d, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    assert_false(sa_rollup_doc_empty(&d));
    {
        sa_error_t err;
        assert_true(sa_rollup_doc_put(&d, "c:1", 2, NULL, &err));
    }
    assert_int_equal(d.nm, 1);
    assert_int_equal(d.m[0].nrec, 0);
    assert_true(d.m[0].gone_at > 0);
    assert_true(sa_rollup_doc_empty(&d));
    sa_rollup_doc_clear(&d);
}

/*
 * Sums by row key: u's two runs of 1 a100 for 1 h and 2 a100 for 2 h: gpu_s 3600 + 14400 =
 * 18000, cpu_s 2 x 3600 + 2 x 7200 = 21600, 2 runs started; one COMPLETED, one FAILED; v's
 * run of 1 h100 for 3 h: gpu_s 10800. A started list has no sums.
 */
static void test_sums(void **state)
{
    sa_rollup_doc_t d;
    sa_rollup_sum_t *sums;
    int64_t *ended;
    sa_error_t err;
    char buf[1024];
    (void)state;

    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&d, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    tu_rollup_put(&d, NULL, 1, job(buf, sizeof buf, 2, "u", "FAILED", 3, 5, 2, "a100"));
    tu_rollup_put(&d, NULL, 1, job(buf, sizeof buf, 3, "v", "COMPLETED", 0, 3, 1, "h100"));
    assert_int_equal(d.nm, 3);
    assert_int_equal(d.nkeys, 2);
    assert_true(sa_rollup_doc_sums(&d, &sums, &ended, &err));
    for (size_t k = 0; k < d.nkeys; k++) {
        bool u = strcmp(d.keys[k].s[1], "u") == 0;
        size_t completed = strcmp(d.states[0], "COMPLETED") == 0 ? 0 : 1;
        assert_int_equal(sums[k].gpu_s, u ? 18000 : 10800);
        assert_int_equal(sums[k].cpu_s, u ? 21600 : 21600);
        assert_int_equal(sums[k].started, u ? 2 : 1);
        assert_int_equal(sums[k].e[SA_RR_E_RUNS - SA_RR_E_RUNS], u ? 2 : 1);
        assert_int_equal(ended[k * d.nstates + completed], 1);
        assert_int_equal(ended[k * d.nstates + (1 - completed)], u ? 1 : 0);
    }
    free(sums);
    free(ended);
    sa_rollup_doc_clear(&d);

    tu_rollup_doc(&d, SA_ROLLUP_K_STARTED, D4, 0);
    tu_rollup_put(&d, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    assert_int_equal(d.nm, 1);
    assert_true(sa_rollup_doc_sums(&d, &sums, &ended, &err));
    assert_int_equal(sums[0].gpu_s, 0);
    assert_int_equal(sums[0].started, 0);
    free(sums);
    free(ended);
    sa_rollup_doc_clear(&d);
}

/*
 * Two documents holding the same members are equal whatever order their keys and states
 * tables took; a member of another version, another record or a document of another day
 * is not; tombstones do not count.
 */
static void test_equal(void **state)
{
    sa_rollup_doc_t a, b;
    sa_error_t err;
    char buf[1024];
    (void)state;

    tu_rollup_doc(&a, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_doc(&b, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&a, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    tu_rollup_put(&a, NULL, 1, job(buf, sizeof buf, 2, "v", "FAILED", 1, 2, 1, "h100"));
    tu_rollup_put(&b, NULL, 1, job(buf, sizeof buf, 2, "v", "FAILED", 1, 2, 1, "h100"));
    tu_rollup_put(&b, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    assert_string_equal(a.keys[0].s[1], "u");
    assert_string_equal(b.keys[0].s[1], "v"); /* the tables differ in order */
    assert_true(sa_rollup_doc_equal(&a, &b));
    assert_true(sa_rollup_doc_put(&b, "c:3", 1, NULL, &err)); /* a tombstone */
    assert_true(sa_rollup_doc_equal(&a, &b));
    tu_rollup_put(&b, NULL, 2, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 3, 1, "a100")); /* a newer version, longer */
    assert_false(sa_rollup_doc_equal(&a, &b));
    tu_rollup_put(&a, NULL, 2, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 3, 1, "a100"));
    assert_true(sa_rollup_doc_equal(&a, &b));
    tu_rollup_put(&b, NULL, 2, job(buf, sizeof buf, 2, "v", "COMPLETED", 1, 2, 1, "h100")); /* another state */
    tu_rollup_put(&a, NULL, 2, job(buf, sizeof buf, 2, "v", "FAILED", 1, 2, 1, "h100"));
    assert_false(sa_rollup_doc_equal(&a, &b));
    sa_rollup_doc_clear(&b);
    tu_rollup_doc(&b, SA_ROLLUP_K_MEMBERS, D4, 1); /* another part, the same members */
    assert_true(sa_rollup_doc_merge(&b, &a, &err));
    assert_false(sa_rollup_doc_equal(&a, &b));
    sa_rollup_doc_clear(&a);
    sa_rollup_doc_clear(&b);
}

/* Rows are the sums of the members (a day's two documents agree), or they are not. */
static void test_rows_match(void **state)
{
    sa_rollup_doc_t m, other, rows;
    bson_t rb = BSON_INITIALIZER;
    sa_error_t err;
    char buf[1024];
    (void)state;

    tu_rollup_doc(&m, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&m, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 2, 1, "a100"));
    tu_rollup_put(&m, NULL, 1, job(buf, sizeof buf, 2, "v", "FAILED", 1, 4, 2, "h100"));
    assert_true(sa_rollup_doc_rows_bson(&m, 1, 1, &rb, &err));
    sa_rollup_doc_init(&rows);
    assert_true(sa_rollup_doc_read(&rows, "c", &rb, &err));
    assert_int_equal(rows.nrows, 2);
    assert_true(sa_rollup_doc_rows_match(&m, &rows));
    /* the same members but one run longer: the rows are not their sums */
    tu_rollup_doc(&other, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&other, NULL, 1, job(buf, sizeof buf, 1, "u", "COMPLETED", 1, 3, 1, "a100"));
    tu_rollup_put(&other, NULL, 1, job(buf, sizeof buf, 2, "v", "FAILED", 1, 4, 2, "h100"));
    assert_false(sa_rollup_doc_rows_match(&other, &rows));
    /* a member more (a row more): not either */
    tu_rollup_put(&m, NULL, 1, job(buf, sizeof buf, 3, "w", "FAILED", 1, 4, 2, "h100"));
    assert_false(sa_rollup_doc_rows_match(&m, &rows));
    sa_rollup_doc_clear(&m);
    sa_rollup_doc_clear(&other);
    sa_rollup_doc_clear(&rows);
    bson_destroy(&rb);
}

/* The binary search of elements that begin with their id: the position, or where it would go. */
static void test_find(void **state)
{
    struct elem {
        char *id;
        int payload;
    } v[] = {{"c:1", 0}, {"c:10", 1}, {"c:3", 2}, {"c:7", 3}};
    bool found;
    (void)state;

    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:3", &found), 2);
    assert_true(found);
    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:1", &found), 0);
    assert_true(found);
    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:7", &found), 3);
    assert_true(found);
    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:0", &found), 0);
    assert_false(found);
    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:2", &found), 2); /* strcmp's order: after "c:10" */
    assert_false(found);
    assert_int_equal(sa_rollup_find(v, 4, sizeof v[0], "c:9", &found), 4);
    assert_false(found);
    assert_int_equal(sa_rollup_find(v, 0, sizeof v[0], "c:1", &found), 0);
    assert_false(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rolldoc_members), cmocka_unit_test(test_new_document), cmocka_unit_test(test_sums),
        cmocka_unit_test(test_equal),           cmocka_unit_test(test_rows_match),   cmocka_unit_test(test_find),
    };
    return tu_run_group_tests("rollup_doc", tests, NULL, NULL);
}
