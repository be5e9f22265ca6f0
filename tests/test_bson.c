/*
 * test_bson.c - schema/jobdoc/sa_bson.c: a job document between jansson and BSON survives
 * the round trip exactly: integers and reals, times as BSON dates (outside "extra" only,
 * before 1970 too), keys MongoDB refuses escaped under "extra", arrays in arrays wrapped
 * (FerretDB), the empty key, a subtree nested too deep kept as its text, a string _id
 * carried and an ObjectId _id left out; the filters built here ($in of strings, the final
 * states); and the readers of one value (a time, an integer, a string).
 */
#include "tu_rollup.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_bson.h"

/* The document of json through BSON and back; b receives the BSON (initialised here). */
static json_t *round_trip(const char *json, bson_t *b)
{
    json_error_t jerr;
    json_t *in = json_loads(json, 0, &jerr), *out;
    sa_error_t err;

    if (!in)
        fail_msg("bad test JSON: %s", jerr.text);
    bson_init(b);
    assert_true(sa_bson_from_json(in, b, &err));
    out = sa_bson_to_json(b, &err);
    assert_non_null(out);
    if (!json_equal(in, out)) {
        char *x = json_dumps(in, JSON_COMPACT | JSON_SORT_KEYS), *y = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("round trip changed the document:\n  %s\n  %s", x, y);
    }
    json_decref(in);
    return out;
}

/* The BSON type of the member at dotted path of b (BSON_TYPE_EOD when absent). */
static bson_type_t type_at(const bson_t *b, const char *path)
{
    bson_iter_t it, d;
    return bson_iter_init(&it, b) && bson_iter_find_descendant(&it, path, &d) ? bson_iter_type(&d) : BSON_TYPE_EOD;
}

/* Times are dates, outside extra; integers int64, reals double; the rest as it is. */
static void test_types(void **state)
{
    bson_t b;
    json_t *out;
    bson_iter_t it;
    (void)state;

    out = round_trip("{\"_id\": \"c:1\", \"job_id\": 1, \"submit\": 1791072000, \"end\": -1, \"gpus\": 2, "
                     "\"billing\": 2.5, \"ok\": true, \"gone\": false, \"reason\": null, \"name\": \"caf\\u00e9\", "
                     "\"runs\": [{\"start\": 1791075600, \"usage\": {\"cpu_s\": 3600.0}}], "
                     "\"history\": [{\"at\": 1791072000, \"state\": \"PENDING\"}], "
                     "\"extra\": {\"start\": 1791072000, \"priority\": 4294901760}}",
                     &b);
    assert_int_equal(type_at(&b, "_id"), BSON_TYPE_UTF8);
    assert_int_equal(type_at(&b, "job_id"), BSON_TYPE_INT64);
    assert_int_equal(type_at(&b, "submit"), BSON_TYPE_DATE_TIME);
    assert_int_equal(type_at(&b, "end"), BSON_TYPE_DATE_TIME); /* before 1970: a date, floored back */
    assert_int_equal(type_at(&b, "billing"), BSON_TYPE_DOUBLE);
    assert_int_equal(type_at(&b, "ok"), BSON_TYPE_BOOL);
    assert_int_equal(type_at(&b, "reason"), BSON_TYPE_NULL);
    assert_int_equal(type_at(&b, "runs.0.start"), BSON_TYPE_DATE_TIME);
    assert_int_equal(type_at(&b, "history.0.at"), BSON_TYPE_DATE_TIME);
    assert_int_equal(type_at(&b, "extra.start"), BSON_TYPE_INT64); /* extra holds anything: no time there */
    assert_true(bson_iter_init_find(&it, &b, "submit"));
    assert_int_equal(bson_iter_date_time(&it), 1791072000000LL);
    assert_int_equal(sa_bson_iter_time(&it), 1791072000);
    assert_true(bson_iter_init_find(&it, &b, "end"));
    assert_int_equal(sa_bson_iter_time(&it), -1);
    json_decref(out);
    bson_destroy(&b);
}

/*
 * Under extra, what MongoDB or FerretDB refuse: keys with '.', '%' and a leading '$', the
 * empty key, arrays directly in arrays, a subtree 40 levels deep; all come back as they were.
 */
static void test_extra_escapes(void **state)
{
    char deep[1024] = "", *p = deep;
    char json[2048];
    bson_t b;
    json_t *out;
    (void)state;

    for (int i = 0; i < 40; i++)
        p += sprintf(p, "{\"d\": ");
    p += sprintf(p, "1");
    for (int i = 0; i < 40; i++)
        p += sprintf(p, "}");
    snprintf(json, sizeof json,
             "{\"_id\": \"c:2\", \"extra\": {\"a.b\": 1, \"50%%\": 2, \"$where\": 3, \"x$y\": 4, \"\": 5, "
             "\"matrix\": [[1, 2], [3, [4, 5]]], \"deep\": %s}}",
             deep);
    out = round_trip(json, &b);
    {
        bson_iter_t it, ex;
        bool dot = false, pct = false, dollar = false, empty = false, mid_dollar = false;
        assert_true(bson_iter_init_find(&it, &b, "extra") && bson_iter_recurse(&it, &ex));
        while (bson_iter_next(&ex)) {
            const char *k = bson_iter_key(&ex);
            dot = dot || strcmp(k, "a%2Eb") == 0;
            pct = pct || strcmp(k, "50%25") == 0;
            dollar = dollar || strcmp(k, "%24where") == 0;
            mid_dollar = mid_dollar || strcmp(k, "x$y") == 0; /* only a leading '$' is refused */
            empty = empty || strcmp(k, "%00") == 0;
        }
        assert_true(dot && pct && dollar && mid_dollar && empty);
    }
    assert_int_equal(type_at(&b, "extra.matrix.0"), BSON_TYPE_DOCUMENT); /* {"_array": [1, 2]} */
    assert_int_equal(type_at(&b, "extra.matrix.0._array"), BSON_TYPE_ARRAY);
    assert_int_equal(type_at(&b, "extra.matrix.1._array.1._array"), BSON_TYPE_ARRAY);
    {
        /* 32 levels of documents, then the rest as its JSON text */
        char path[512] = "extra.deep";
        for (int i = 0; i < 31; i++)
            strcat(path, ".d");
        assert_int_equal(type_at(&b, path), BSON_TYPE_DOCUMENT);
        strcat(path, "._json");
        assert_int_equal(type_at(&b, path), BSON_TYPE_UTF8);
    }
    json_decref(out);
    bson_destroy(&b);
}

/* An ObjectId _id (an archive before 0.2) is not carried into the working form; a string is. */
static void test_ids(void **state)
{
    bson_t *b = tu_bson("{\"_id\": {\"$oid\": \"65f0c0ffee0000000000abcd\"}, \"job_id\": 3}");
    sa_error_t err;
    json_t *o = sa_bson_to_json(b, &err);
    json_t *bad = json_array();
    bson_t out = BSON_INITIALIZER;
    (void)state;

    assert_non_null(o);
    assert_null(json_object_get(o, "_id"));
    assert_int_equal(json_integer_value(json_object_get(o, "job_id")), 3);
    json_decref(o);
    bson_destroy(b);
    assert_false(sa_bson_from_json(bad, &out, &err)); /* a document is an object */
    assert_non_null(strstr(err.message, "object"));
    json_decref(bad);
    bson_destroy(&out);
}

/* {key: {$in: [...]}} of strings, and {state: {$in|$nin: [every final state]}}. */
static void test_filters(void **state)
{
    char *ids[] = {"c:1", "c:2", "c:3"};
    bson_t f = BSON_INITIALIZER;
    char *s;
    size_t n = 0;
    (void)state;

    sa_bson_append_in_strings(&f, "_id", ids, 3);
    assert_non_null(s = bson_as_relaxed_extended_json(&f, NULL));
    assert_string_equal(s, "{ \"_id\" : { \"$in\" : [ \"c:1\", \"c:2\", \"c:3\" ] } }");
    bson_free(s);
    bson_reinit(&f);
    sa_bson_append_final_states(&f, "$nin");
    {
        bson_iter_t it, arr;
        assert_true(bson_iter_init(&it, &f) && bson_iter_find_descendant(&it, "state.$nin", &arr));
        assert_true(BSON_ITER_HOLDS_ARRAY(&arr));
        assert_true(bson_iter_recurse(&arr, &it));
        while (bson_iter_next(&it)) {
            assert_string_equal(bson_iter_utf8(&it, NULL), sa_job_final_states[n]);
            n++;
        }
    }
    assert_true(n > 0);
    assert_null(sa_job_final_states[n]); /* every one, in order */
    bson_destroy(&f);
}

/* The readers of one value: a time (a date floored, or seconds), an integer (or def), a string (or NULL). */
static void test_value_readers(void **state)
{
    bson_t *b = tu_bson("{\"d\": {\"$date\": 1791072000999}, \"neg\": {\"$date\": -1}, \"s\": 42, "
                        "\"i32\": {\"$numberInt\": \"7\"}, \"dbl\": 2.9, \"str\": \"abc\", \"no\": true}");
    bson_iter_t it;
    uint32_t len = 0;
    (void)state;

    assert_true(bson_iter_init_find(&it, b, "d"));
    assert_int_equal(sa_bson_iter_time(&it), 1791072000);
    assert_true(bson_iter_init_find(&it, b, "neg"));
    assert_int_equal(sa_bson_iter_time(&it), -1);
    assert_true(bson_iter_init_find(&it, b, "s"));
    assert_int_equal(sa_bson_iter_time(&it), 42);
    assert_int_equal(sa_bson_iter_int(&it, -5), 42);
    assert_true(bson_iter_init_find(&it, b, "i32"));
    assert_int_equal(sa_bson_iter_int(&it, -5), 7);
    assert_true(bson_iter_init_find(&it, b, "dbl"));
    assert_int_equal(sa_bson_iter_int(&it, -5), 2);
    assert_int_equal(sa_bson_iter_time(&it), SA_UNSET);
    assert_true(bson_iter_init_find(&it, b, "str"));
    assert_string_equal(sa_bson_iter_str(&it, &len), "abc");
    assert_int_equal(len, 3);
    assert_int_equal(sa_bson_iter_int(&it, -5), -5);
    assert_int_equal(sa_bson_iter_time(&it), SA_UNSET);
    assert_true(bson_iter_init_find(&it, b, "no"));
    assert_null(sa_bson_iter_str(&it, NULL));
    bson_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),   cmocka_unit_test(test_extra_escapes), cmocka_unit_test(test_ids),
        cmocka_unit_test(test_filters), cmocka_unit_test(test_value_readers),
    };
    return tu_run_group_tests("bson", tests, NULL, NULL);
}
