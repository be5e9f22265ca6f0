/*
 * test_rollup_key.c - schema/rollup/sa_rollup_key.c: the names of the rollup documents.
 * One _id writer and one parser, every kind there and back; what is not a rollup
 * document's name (another cluster's, a job's, a day that does not exist, a part out of
 * range or spelled twice); the kinds' flags; the order of keys; the parts of job ids.
 */
#include "tu_rollup.h"

#include <stdlib.h>
#include <string.h>

#define D4 TU_D4
#define H TU_H

/* One _id writer, one parser: every kind there and back, and the names that are none of ours. */
static void test_ids_there_and_back(void **state)
{
    static const struct {
        sa_rollup_kind_t kind;
        int64_t day;
        int part;
        const char *id;
    } names[] = {
        {SA_ROLLUP_K_LIVE, 0, 5, "c:live:5"},          {SA_ROLLUP_K_ENDED, D4, 1, "c:2026-10-04:e1"},
        {SA_ROLLUP_K_MEMBERS, D4, 63, "c:2026-10-04:m63"}, {SA_ROLLUP_K_ROWS, D4, 5, "c:2026-10-04:r5"},
        {SA_ROLLUP_K_OPEN, 0, 7, "c:open:7"},          {SA_ROLLUP_K_STARTED, D4 + 5 * H, 0, "c:2026-10-04:s0"},
        {SA_ROLLUP_K_UNTYPED, 0, 0, "c:untyped"},      {SA_ROLLUP_K_WAITING, 0, 0, "c:untyped-config"},
        {SA_ROLLUP_K_JOURNAL, 0, 0, "c:pending"},      {SA_ROLLUP_K_COMMIT, 0, 0, "c:commit"},
        {SA_ROLLUP_K_ROWS, SA_ROLLUP_LAST_DAY, 0, "c:9999-12-31:r0"},
        {SA_ROLLUP_K_ROWS, 0, 0, "c:1970-01-01:r0"},
        {SA_ROLLUP_K_PARTS, D4, 0, "c:parts:2026-10"},
    };
    static const char *const not_ours[] = {"c:2026-10-04:m64", "c:2026-02-30:m0", "c:2026-10-04:x0", "c:open:",
                                           "c:open:07", "c:live:64", "c:21000", "c:2026-10-04", "d:open:0",
                                           "c:untyped:1", "c:2026-10-04:m", "c:open:-1", "c:2026-13-01:r0",
                                           "cc:commit", "c", "c:commit:", "c:parts:2026-13", "c:parts:"};
    (void)state;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sa_rollup_key_t k = sa_rollup_key("c", names[i].kind, names[i].day, names[i].part), kb;
        char *id = sa_rollup_key_id(&k);
        assert_non_null(id);
        assert_string_equal(id, names[i].id);
        free(id);
        assert_true(sa_rollup_key_parse("c", names[i].id, &kb));
        assert_true(sa_rollup_key_eq(&k, &kb));
        assert_string_equal(kb.cluster, "c");
    }
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++) {
        sa_rollup_key_t kb;
        if (sa_rollup_key_parse("c", not_ours[i], &kb))
            fail_msg("%s read as a rollup document's name", not_ours[i]);
    }
}

/* A key holds a day only for the dated kinds (the start of the UTC day), a part only for the parted ones. */
static void test_key_fields(void **state)
{
    sa_rollup_key_t k;
    (void)state;

    k = sa_rollup_key("c", SA_ROLLUP_K_MEMBERS, D4 + 23 * H + 3599, 9);
    assert_int_equal(k.day, D4);
    assert_int_equal(k.part, 9);
    k = sa_rollup_key("c", SA_ROLLUP_K_OPEN, D4 + 5 * H, 9);
    assert_int_equal(k.day, 0);
    assert_int_equal(k.part, 9);
    k = sa_rollup_key("c", SA_ROLLUP_K_COMMIT, D4, 9);
    assert_int_equal(k.day, 0);
    assert_int_equal(k.part, 0);
    assert_int_equal(k.kind, SA_ROLLUP_K_COMMIT);
}

/* No _id for a part out of range, a day no _id can name or a kind that is none. */
static void test_no_id(void **state)
{
    sa_rollup_key_t k;
    (void)state;

    k = sa_rollup_key("c", SA_ROLLUP_K_MEMBERS, D4, SA_ROLLUP_PARTS);
    assert_null(sa_rollup_key_id(&k));
    k = sa_rollup_key("c", SA_ROLLUP_K_ROWS, D4, -1);
    assert_null(sa_rollup_key_id(&k));
    k = sa_rollup_key("c", SA_ROLLUP_K_ROWS, -1, 0); /* 1969-12-31 */
    assert_null(sa_rollup_key_id(&k));
    k = sa_rollup_key("c", SA_ROLLUP_K_ROWS, SA_ROLLUP_LAST_DAY + SA_DAY, 0);
    assert_null(sa_rollup_key_id(&k));
    k = sa_rollup_key("c", SA_ROLLUP_K_COUNT, 0, 0);
    assert_null(sa_rollup_key_id(&k));
    k = sa_rollup_key(NULL, SA_ROLLUP_K_COMMIT, 0, 0);
    assert_null(sa_rollup_key_id(&k));
}

static void test_kinds(void **state)
{
    static const char *const names[SA_ROLLUP_K_COUNT] = {"rows",    "members", "ended",   "started", "open",
                                                         "live",    "untyped", "waiting", "journal", "commit", "parts"};
    (void)state;

    for (int kind = 0; kind < SA_ROLLUP_K_COUNT; kind++) {
        assert_string_equal(sa_rollup_kind_name((sa_rollup_kind_t)kind), names[kind]);
        assert_int_equal(sa_rollup_kind_dated((sa_rollup_kind_t)kind), kind <= SA_ROLLUP_K_STARTED);
        assert_int_equal(sa_rollup_kind_parted((sa_rollup_kind_t)kind), kind <= SA_ROLLUP_K_LIVE);
    }
    assert_string_equal(sa_rollup_kind_name(SA_ROLLUP_K_COUNT), "?");
    assert_false(sa_rollup_kind_dated(SA_ROLLUP_K_COUNT));
    assert_false(sa_rollup_kind_parted(SA_ROLLUP_K_COUNT));
}

/* Keys order by kind, then day, then part; sa_rollup_key_eq is that order's equality. */
static void test_key_order(void **state)
{
    sa_rollup_key_t rows4p9 = sa_rollup_key("c", SA_ROLLUP_K_ROWS, D4, 9);
    sa_rollup_key_t rows5p0 = sa_rollup_key("c", SA_ROLLUP_K_ROWS, D4 + SA_DAY, 0);
    sa_rollup_key_t rows4p10 = sa_rollup_key("c", SA_ROLLUP_K_ROWS, D4, 10);
    sa_rollup_key_t members3 = sa_rollup_key("c", SA_ROLLUP_K_MEMBERS, D4 - SA_DAY, 0);
    sa_rollup_key_t again = sa_rollup_key("c", SA_ROLLUP_K_ROWS, D4 + 7 * H, 9);
    (void)state;

    assert_true(sa_rollup_key_cmp(&rows4p9, &rows4p10) < 0);
    assert_true(sa_rollup_key_cmp(&rows4p10, &rows5p0) < 0);
    assert_true(sa_rollup_key_cmp(&rows5p0, &members3) < 0); /* the kind first */
    assert_true(sa_rollup_key_cmp(&members3, &rows4p9) > 0);
    assert_int_equal(sa_rollup_key_cmp(&rows4p9, &again), 0);
    assert_true(sa_rollup_key_eq(&rows4p9, &again));
    assert_false(sa_rollup_key_eq(&rows4p9, &rows4p10));
}

/* The _ids of every part of a kind (and day): SA_ROLLUP_PARTS of them, in part order, appended. */
static void test_part_ids(void **state)
{
    sa_strv_t ids;
    sa_error_t err;
    (void)state;

    sa_strv_init(&ids);
    assert_true(sa_strv_push(&ids, "before"));
    assert_true(sa_rollup_key_part_ids(&ids, "c", SA_ROLLUP_K_MEMBERS, D4 + 5 * H, UINT64_MAX, &err));
    assert_true(sa_rollup_key_part_ids(&ids, "c", SA_ROLLUP_K_OPEN, 0, UINT64_MAX, &err));
    assert_true(sa_rollup_key_part_ids(&ids, "c", SA_ROLLUP_K_ENDED, D4, (UINT64_C(1) << 3) | (UINT64_C(1) << 40), &err)); /* a mask names its parts */
    assert_int_equal(ids.n, 1 + 2 * SA_ROLLUP_PARTS + 2);
    assert_string_equal(ids.v[0], "before");
    assert_string_equal(ids.v[1], "c:2026-10-04:m0");
    assert_string_equal(ids.v[SA_ROLLUP_PARTS], "c:2026-10-04:m63");
    assert_string_equal(ids.v[SA_ROLLUP_PARTS + 1], "c:open:0");
    assert_string_equal(ids.v[2 * SA_ROLLUP_PARTS], "c:open:63");
    assert_string_equal(ids.v[2 * SA_ROLLUP_PARTS + 1], "c:2026-10-04:e3");
    assert_string_equal(ids.v[2 * SA_ROLLUP_PARTS + 2], "c:2026-10-04:e40");
    sa_strv_clear(&ids);
}

static void test_day(void **state)
{
    (void)state;
    assert_int_equal(sa_rollup_day(D4), D4);
    assert_int_equal(sa_rollup_day(D4 + SA_DAY - 1), D4);
    assert_int_equal(sa_rollup_day(D4 + SA_DAY), D4 + SA_DAY);
    assert_int_equal(sa_rollup_day(0), 0);
    assert_int_equal(sa_rollup_day(-1), -SA_DAY); /* before 1970: the day that holds it, not 0 */
}

/* The parts: blocks of 4,096 job ids mod 64; a superseded document goes with its job. */
static void test_parts_of_jobs(void **state)
{
    (void)state;
    assert_int_equal(sa_rollup_part_of("c:21000"), 5); /* 21000 / 4096 = 5 */
    assert_int_equal(sa_rollup_part_of("c:266240"), 1); /* 65 blocks of 4,096: 65 mod 64 */
    assert_int_equal(sa_rollup_part_of("c:4095"), 0);
    assert_int_equal(sa_rollup_part_of("c:4096"), 1);
    assert_int_equal(sa_rollup_part_of("c:4096:1700000000"), 1);
    assert_int_equal(sa_rollup_part_of("c:262143"), 63);
    assert_int_equal(sa_rollup_part_of("c:262144"), 0);
    assert_int_equal(sa_rollup_part_of("c:x"), 0);
    assert_int_equal(sa_rollup_part_of("nocolon"), 0);
    assert_true(sa_rollup_is_jobs_id("c", "c:21000"));
    assert_false(sa_rollup_is_jobs_id("c", "c:21000:1700000000")); /* jobs_superseded's */
    assert_false(sa_rollup_is_jobs_id("c", "cc:21000"));
    assert_false(sa_rollup_is_jobs_id("c", "c:"));
    assert_false(sa_rollup_is_jobs_id("c", "c:open:1"));
}

/* Job document _ids sort by the job id they name, then as strings (a reused id's documents together). */
static void test_id_job_order(void **state)
{
    const char *ids[] = {"c:100", "c:9:1700000000", "c:10", "c:9", "c:99"};
    const char *want[] = {"c:9", "c:9:1700000000", "c:10", "c:99", "c:100"};
    (void)state;

    qsort(ids, sizeof ids / sizeof ids[0], sizeof ids[0], sa_rollup_id_job_cmp);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_string_equal(ids[i], want[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_there_and_back), cmocka_unit_test(test_key_fields),
        cmocka_unit_test(test_no_id),              cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_key_order),          cmocka_unit_test(test_part_ids),
        cmocka_unit_test(test_day),                cmocka_unit_test(test_parts_of_jobs),
        cmocka_unit_test(test_id_job_order),
    };
    return tu_run_group_tests("rollup_key", tests, NULL, NULL);
}
