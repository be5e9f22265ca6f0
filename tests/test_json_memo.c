/*
 * test_json_memo.c - ingest/sa_json_memo.c: a record decoded member by member gives
 * what jansson gives for the whole text, repeated member texts share one decoded
 * value, and what the memo cannot take (not an object, separators that do not fit, a
 * key twice) is left to the caller (NULL).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_json_memo.h"

/* The offsets of ':' and ',' at depth 1 outside strings of a compact object text. */
static size_t find_seps(const char *t, size_t *seps, size_t cap)
{
    size_t n = 0;
    int depth = 0;
    bool str = false;
    for (size_t i = 0; t[i]; i++) {
        char c = t[i];
        if (str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (depth == 1 && (c == ':' || c == ',') && n < cap) {
            seps[n++] = i;
        }
    }
    return n;
}

static json_t *decode(sa_json_memo_t *m, const char *text)
{
    size_t seps[64], n = find_seps(text, seps, 64);
    return sa_json_memo_object(m, text, strlen(text), seps, n);
}

static void test_same_as_jansson(void **state)
{
    static const char *const texts[] = {
        "{\"job_id\":7,\"name\":\"a\\\"b\\u00e9\",\"flags\":[\"X\",\"Y\"],\"t\":{\"set\":true,\"number\":5},"
        "\"x\":null,\"f\":1.5,\"b\":false}",
        "{\"a\":{}}",
        "{\"s\":\"a,b:c{}\"}", /* separators inside a string are not separators */
    };
    sa_json_memo_t *m = sa_json_memo_new();
    (void)state;

    assert_non_null(m);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_error_t jerr;
        json_t *want = json_loads(texts[i], 0, &jerr), *got = decode(m, texts[i]);
        assert_non_null(want);
        if (!got || !json_equal(want, got))
            fail_msg("text %zu decoded differently: %s", i, texts[i]);
        /* member order as printed */
        {
            const char *k1 = json_object_iter_key(json_object_iter(want)), *k2 = json_object_iter_key(json_object_iter(got));
            assert_string_equal(k1, k2);
        }
        json_decref(want);
        json_decref(got);
    }
    sa_json_memo_destroy(m);
    sa_json_memo_destroy(NULL);
}

/* The same member text in two records is decoded once: both records hold the same value. */
static void test_values_shared(void **state)
{
    sa_json_memo_t *m = sa_json_memo_new();
    json_t *a = decode(m, "{\"id\":1,\"t\":{\"set\":false,\"number\":0},\"u\":\"alice\"}");
    json_t *b = decode(m, "{\"id\":2,\"t\":{\"set\":false,\"number\":0},\"u\":\"bob\"}");
    (void)state;

    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(json_object_get(a, "t"), json_object_get(b, "t"));
    assert_ptr_not_equal(json_object_get(a, "u"), json_object_get(b, "u"));
    assert_int_equal(json_integer_value(json_object_get(b, "id")), 2);
    assert_string_equal(json_string_value(json_object_get(b, "u")), "bob");
    /* the records keep their values after the memo is gone */
    sa_json_memo_destroy(m);
    assert_true(json_is_false(json_object_get(json_object_get(a, "t"), "set")));
    json_decref(a);
    json_decref(b);
}

static void test_refused(void **state)
{
    sa_json_memo_t *m = sa_json_memo_new();
    size_t seps[3] = {4, 7, 10}; /* the ',' of {"a":1,"b":2} is at 6, not 7 */
    (void)state;

    assert_null(decode(m, "{\"a\":1,\"a\":2}"));  /* a key twice: the caller's decoding refuses it */
    assert_null(decode(m, "[1,2]"));               /* not an object */
    assert_null(decode(m, "{\"a\":tru}"));         /* not a value */
    assert_null(decode(m, "{\"a\" 1}"));           /* no separator */
    /* separators that are not where the text has them */
    assert_null(sa_json_memo_object(m, "{\"a\":1,\"b\":2}", 13, seps, 3));
    seps[1] = 6;
    {
        json_t *o = sa_json_memo_object(m, "{\"a\":1,\"b\":2}", 13, seps, 3);
        assert_non_null(o); /* the right ones */
        assert_int_equal(json_integer_value(json_object_get(o, "b")), 2);
        json_decref(o);
    }
    assert_null(sa_json_memo_object(m, "{\"a\":1,\"b\":2}", 13, seps, 2)); /* an even count */
    sa_json_memo_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_jansson),
        cmocka_unit_test(test_values_shared),
        cmocka_unit_test(test_refused),
    };
    return tu_run_group_tests("json_memo", tests, NULL, NULL);
}
