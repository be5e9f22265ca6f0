/*
 * test_json.c - ingest/sa_json.c, reading Slurm's JSON values whatever the release: every
 * form of a NO_VAL-tagged number (plain, null, "Infinity", numeric strings, {set, infinite,
 * number}, the raw sentinels of 16, 32 and 64 bits) and what is refused, naming the key;
 * the object getters (times, strings, booleans, objects, arrays); words and states (string
 * or list, trimmed, upper-cased, the base found); the keys not modelled kept as extra; exit
 * codes in every form (wait status, {status, return_code, signal}, reliable or not); meta.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_json.h"

/* json as a value (fails the test on bad JSON); caller decrefs. */
static json_t *J(const char *json)
{
    json_error_t e;
    json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!v)
        fail_msg("bad test JSON %s: %s", json, e.text);
    return v;
}

static void test_type_names(void **state)
{
    static const struct {
        const char *json, *name;
    } cases[] = {{"{}", "object"}, {"[]", "array"},    {"\"x\"", "string"}, {"3", "integer"},
                 {"2.5", "number"}, {"true", "boolean"}, {"null", "null"}};
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        assert_string_equal(sa_json_type_name(v), cases[i].name);
        json_decref(v);
    }
    assert_string_equal(sa_json_type_name(NULL), "nothing");
}

/* Every form of a NO_VAL-tagged number: set (value), infinite, or unset. */
static void test_noval_forms(void **state)
{
    static const struct {
        const char *json;
        bool sentinel16;
        int set, infinite;
        int64_t value;
    } cases[] = {
        {"42", false, 1, 0, 42},
        {"0", false, 1, 0, 0},
        {"null", false, 0, 0, 0},
        {"\"Infinity\"", false, 0, 1, 0},
        {"\"UNLIMITED\"", false, 0, 1, 0},
        {"\"N/A\"", false, 0, 0, 0},
        {"\"\"", false, 0, 0, 0},
        {"\"17\"", false, 1, 0, 17},
        {"{\"set\": true, \"infinite\": false, \"number\": 8}", false, 1, 0, 8},
        {"{\"set\": false, \"infinite\": false, \"number\": 0}", false, 0, 0, 0},
        {"{\"set\": true, \"infinite\": true, \"number\": 0}", false, 0, 1, 0},
        {"{\"set\": true, \"infinite\": false, \"number\": 4294967294}", false, 0, 0, 0}, /* a sentinel inside */
        {"4294967294", false, 0, 0, 0},             /* NO_VAL */
        {"4294967295", false, 0, 1, 0},             /* INFINITE */
        {"-2", false, 0, 0, 0},
        {"65534", false, 1, 0, 65534},              /* a number, for a 32-bit field */
        {"65534", true, 0, 0, 0},                   /* NO_VAL16 for a 16-bit one */
        {"65535", true, 0, 1, 0},
        {"18446744073709551614.0", false, 0, 0, 0}, /* NO_VAL64 decoded as a real */
        {"7.0", false, 1, 0, 7},
        {"2.75", false, 1, 0, 2},
    };
    sa_noval_t nv;
    sa_error_t err;
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        if (!sa_json_noval(v, cases[i].sentinel16, &nv, "k", &err))
            fail_msg("%s: %s", cases[i].json, err.message);
        if (nv.set != (bool)cases[i].set || nv.infinite != (bool)cases[i].infinite ||
            (nv.set && nv.value != cases[i].value))
            fail_msg("%s: set %d infinite %d value %lld", cases[i].json, nv.set, nv.infinite, (long long)nv.value);
        json_decref(v);
    }
    {
        json_t *v = J("2.75");
        assert_true(sa_json_noval(v, false, &nv, "k", &err));
        assert_true(nv.fvalue == 2.75);
        json_decref(v);
    }
}

/* What is not a number is refused with one line naming the key. */
static void test_noval_refused(void **state)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"\"abc\"", "time_limit: expected a number, got string \"abc\""},
        {"{}", "time_limit: expected a number or {set,infinite,number}, got object"},
        {"{\"set\": \"yes\", \"number\": 1}", "time_limit: malformed {set,infinite,number} object"},
        {"1e30", "time_limit: number 1e+30 out of range"},
        {"[1]", "time_limit"},
        {"true", "time_limit"},
    };
    sa_noval_t nv;
    sa_error_t err;
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        sa_error_clear(&err);
        if (sa_json_noval(v, false, &nv, "time_limit", &err))
            fail_msg("%s read as a number", cases[i].json);
        if (!strstr(err.message, cases[i].want))
            fail_msg("%s: '%s' lacks '%s'", cases[i].json, err.message, cases[i].want);
        assert_null(strchr(err.message, '\n'));
        json_decref(v);
    }
}

/* The object getters: absent, null and "" are unset; a wrong type fails naming the key. */
static void test_getters(void **state)
{
    json_t *o = J("{\"n\": 5, \"inf\": \"Infinity\", \"t\": 1791072000, \"t0\": 0, \"tbig\": 253402300800, "
                  "\"s\": \"x\", \"empty\": \"\", \"num\": 0, \"b\": true, \"obj\": {\"a\": 1}, \"arr\": [1], "
                  "\"nul\": null, \"nulstr\": \"a\\u0000b\"}");
    int64_t i;
    char *s;
    bool b;
    json_t *x;
    sa_error_t err;
    (void)state;

    assert_true(sa_json_get_int(o, "n", &i, &err) && i == 5);
    assert_true(sa_json_get_int(o, "inf", &i, &err) && i == SA_INFINITE);
    assert_true(sa_json_get_int(o, "absent", &i, &err) && i == SA_UNSET);
    assert_true(sa_json_get_int(NULL, "n", &i, &err) && i == SA_UNSET);
    assert_true(sa_json_get_time(o, "t", &i, &err) && i == 1791072000);
    assert_true(sa_json_get_time(o, "t0", &i, &err) && i == SA_UNSET); /* 0 is no time */
    assert_false(sa_json_get_time(o, "tbig", &i, &err));                  /* after 9999-12-31 */
    assert_non_null(strstr(err.message, "tbig: time 253402300800 out of range"));
    assert_true(sa_json_get_str(o, "s", &s, &err));
    assert_string_equal(s, "x");
    free(s);
    assert_true(sa_json_get_str(o, "empty", &s, &err) && !s);
    assert_true(sa_json_get_str(o, "nul", &s, &err) && !s);
    assert_true(sa_json_get_str(o, "num", &s, &err)); /* numbers are printed: v0.0.37's reservation 0 */
    assert_string_equal(s, "0");
    free(s);
    assert_false(sa_json_get_str(o, "nulstr", &s, &err));
    assert_non_null(strstr(err.message, "nulstr: string contains a NUL character"));
    assert_false(sa_json_get_str(o, "obj", &s, &err));
    assert_non_null(strstr(err.message, "obj"));
    assert_true(sa_json_get_bool(o, "b", &b, &err) && b);
    assert_true(sa_json_get_bool(o, "absent", &b, &err) && !b);
    assert_false(sa_json_get_bool(o, "s", &b, &err));
    assert_true(sa_json_get_obj(o, "obj", &x, &err) && json_is_object(x));
    assert_true(sa_json_get_obj(o, "nul", &x, &err) && !x);
    assert_false(sa_json_get_obj(o, "arr", &x, &err));
    assert_true(sa_json_get_arr(o, "arr", &x, &err) && json_is_array(x));
    assert_false(sa_json_get_arr(o, "obj", &x, &err));
    assert_non_null(strstr(err.message, "obj"));
    json_decref(o);
}

/* Words: a string (one word, "X by 123", joined by '+' or ','), or a list; trimmed, upper-cased, sorted unique. */
static void test_words(void **state)
{
    json_t *o = J("{\"one\": \"cancelled by 1000\", \"plus\": \"drain+idle\", \"list\": [\"JOB_CPUS_SET \", "
                  "\"requeued\", \"JOB_CPUS_SET\"], \"bad\": [1]}");
    sa_strv_t w;
    sa_error_t err;
    (void)state;

    sa_strv_init(&w);
    assert_true(sa_json_get_words(o, "one", &w, &err));
    assert_int_equal(w.n, 1);
    assert_string_equal(w.v[0], "CANCELLED");
    sa_strv_clear(&w);
    assert_true(sa_json_get_words(o, "plus", &w, &err));
    assert_int_equal(w.n, 2);
    assert_string_equal(w.v[0], "DRAIN");
    assert_string_equal(w.v[1], "IDLE");
    sa_strv_clear(&w);
    assert_true(sa_json_get_words(o, "list", &w, &err));
    assert_int_equal(w.n, 2);
    assert_string_equal(w.v[0], "JOB_CPUS_SET");
    assert_string_equal(w.v[1], "REQUEUED");
    sa_strv_clear(&w);
    assert_false(sa_json_get_words(o, "bad", &w, &err));
    assert_non_null(strstr(err.message, "bad: expected a list of strings, found integer"));
    sa_strv_clear(&w);
    json_decref(o);
}

/* A state: a string is the base ("+" flags after it); in a list the first known base word, the rest flags. */
static void test_states(void **state)
{
    static const struct {
        const char *json;
        bool node;
        const char *want;
    } cases[] = {
        {"\"idle\"", true, "IDLE"},
        {"\"IDLE+DRAIN\"", true, "IDLE+DRAIN"},
        {"[\"DRAIN\", \"IDLE\"]", true, "IDLE+DRAIN"},
        {"[\"PENDING\", \"REQUEUED\"]", false, "PENDING+REQUEUED"},
        {"[\"REQUEUED\", \"PENDING\"]", false, "PENDING+REQUEUED"},
        {"[\"FUTURE_WORD\", \"OTHER\"]", true, "FUTURE_WORD+OTHER"}, /* unknown words kept */
    };
    sa_error_t err;
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        sa_state_t st;
        sa_state_init(&st);
        assert_true(sa_json_state(v, cases[i].node ? sa_node_base_is_known : sa_job_base_is_known, &st, "state",
                                  &err));
        if (strcmp(tu_state(&st), cases[i].want) != 0)
            fail_msg("%s: %s, want %s", cases[i].json, tu_state(&st), cases[i].want);
        sa_state_clear(&st);
        json_decref(v);
    }
    {
        json_t *v = J("3");
        sa_state_t st;
        sa_state_init(&st);
        assert_false(sa_json_state(v, sa_job_base_is_known, &st, "job_state", &err));
        assert_non_null(strstr(err.message, "job_state: expected a state string or list, got integer"));
        sa_state_clear(&st);
        json_decref(v);
    }
}

/* The keys a parser does not model, in the object's order, sharing its values. */
static void test_extra(void **state)
{
    static const char *const known[] = {"job_id", "name", NULL};
    json_t *o = J("{\"job_id\": 1, \"zeta\": [1, 2], \"name\": \"x\", \"alpha\": {\"a\": 1}}");
    json_t *x = sa_json_extra(o, known), *none;
    const char *keys[2];
    size_t n = 0;
    const char *k;
    json_t *v;
    (void)state;

    assert_non_null(x);
    json_object_foreach(x, k, v) {
        assert_true(n < 2);
        keys[n++] = k;
    }
    assert_int_equal(n, 2);
    assert_string_equal(keys[0], "zeta");
    assert_string_equal(keys[1], "alpha");
    assert_ptr_equal(json_object_get(x, "alpha"), json_object_get(o, "alpha")); /* shared, not copied */
    json_decref(x);
    json_decref(o);
    o = J("{\"job_id\": 1}");
    none = sa_json_extra(o, known);
    assert_null(none);
    json_decref(o);
}

/*
 * Exit codes: a raw wait status (exit 2: 512; killed by 9: 9); the object forms, v0.0.40's
 * (status a list: reliable) and the older (status a string: SUCCESS/0 cannot be trusted);
 * a signal without a return code; absent: -1, -1.
 */
static void test_exit_codes(void **state)
{
    static const struct {
        const char *json;
        int rc, sig;
        bool reliable;
    } cases[] = {
        {"512", 2, 0, true},
        {"9", 0, 9, true},
        {"{\"set\": true, \"infinite\": false, \"number\": 256}", 1, 0, true},
        {"{\"status\": [\"EXIT\"], \"return_code\": {\"set\": true, \"infinite\": false, \"number\": 3}, "
         "\"signal\": {\"id\": {\"set\": false, \"infinite\": false, \"number\": 0}, \"name\": \"\"}}",
         3, 0, true},
        {"{\"status\": [\"SIGNALED\"], \"return_code\": {\"set\": false, \"infinite\": false, \"number\": 0}, "
         "\"signal\": {\"id\": {\"set\": true, \"infinite\": false, \"number\": 15}, \"name\": \"TERM\"}}",
         0, 15, true},
        {"{\"status\": \"SUCCESS\", \"return_code\": 0, \"signal\": {\"signal_id\": 0}}", 0, 0, false},
        {"null", -1, -1, true},
        {"70000", -1, -1, true}, /* not a wait status */
    };
    sa_error_t err;
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        int rc, sig;
        bool reliable;
        if (!sa_json_exit_code(v, &rc, &sig, &reliable, "exit_code", &err))
            fail_msg("%s: %s", cases[i].json, err.message);
        if (rc != cases[i].rc || sig != cases[i].sig || reliable != cases[i].reliable)
            fail_msg("%s: %d:%d reliable %d", cases[i].json, rc, sig, reliable);
        json_decref(v);
    }
    {
        json_t *v = J("\"x\"");
        int rc, sig;
        bool reliable;
        assert_false(sa_json_exit_code(v, &rc, &sig, &reliable, "exit_code", &err));
        assert_non_null(strstr(err.message, "exit_code"));
        json_decref(v);
    }
}

/* meta: the release, the data parser normalised (any of its spellings), the cluster; a first value stays. */
static void test_meta(void **state)
{
    static const struct {
        const char *json, *parser;
    } cases[] = {
        {"{\"plugin\": {\"data_parser\": \"data_parser/v0.0.40\"}, \"slurm\": {\"release\": \"23.11.4\", "
         "\"cluster\": \"narval\"}}",
         "v0.0.40"},
        {"{\"plugins\": {\"data_parser\": \"v0.0.39\"}, \"Slurm\": {\"release\": \"23.02.1\"}}", "v0.0.39"},
        {"{\"plugin\": {\"type\": \"openapi/dbv0.0.38\"}}", "v0.0.38"},
        {"{\"plugin\": {\"type\": \"openapi/other\"}}", NULL},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = J(cases[i].json);
        sa_meta_t m;
        sa_meta_init(&m);
        sa_json_meta(v, &m);
        if (cases[i].parser)
            assert_string_equal(m.data_parser, cases[i].parser);
        else
            assert_null(m.data_parser);
        if (i == 0) {
            assert_string_equal(m.slurm_release, "23.11.4");
            assert_string_equal(m.cluster, "narval");
            json_t *later = J("{\"slurm\": {\"release\": \"99\", \"cluster\": \"other\"}}");
            sa_json_meta(later, &m); /* already said: kept */
            assert_string_equal(m.slurm_release, "23.11.4");
            assert_string_equal(m.cluster, "narval");
            json_decref(later);
        }
        sa_meta_clear(&m);
        json_decref(v);
    }
}

/* One element of "jobs" from its bytes: squeue's and sacct's told apart and converted. */
static void test_job_record(void **state)
{
    const char *sq = "{\"job_id\": 77, \"job_state\": [\"RUNNING\"], \"user_name\": \"ann\", \"account\": \"phys\"}";
    const char *sa = "{\"job_id\": 78, \"state\": {\"current\": [\"COMPLETED\"], \"reason\": \"None\"}, "
                     "\"user\": \"bob\", \"steps\": []}";
    sa_job_t *job = NULL;
    sa_error_t err;
    (void)state;

    assert_true(sa_json_job_record(sq, strlen(sq), NULL, &job, &err));
    assert_int_equal(job->source, SA_SRC_SQUEUE);
    assert_int_equal(job->job_id, 77);
    assert_string_equal(job->state.base, "RUNNING");
    assert_string_equal(job->user, "ann");
    sa_job_destroy(job);
    assert_true(sa_json_job_record(sa, strlen(sa), NULL, &job, &err));
    assert_int_equal(job->source, SA_SRC_SACCT_JSON);
    assert_int_equal(job->job_id, 78);
    assert_string_equal(job->state.base, "COMPLETED");
    sa_job_destroy(job);
    assert_false(sa_json_job_record("{\"job_id\": 1", 12, NULL, &job, &err));
    assert_null(job);
    assert_false(sa_json_job_record("[1, 2]", 6, NULL, &job, &err));
    assert_null(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_names), cmocka_unit_test(test_noval_forms), cmocka_unit_test(test_noval_refused),
        cmocka_unit_test(test_getters),    cmocka_unit_test(test_words),       cmocka_unit_test(test_states),
        cmocka_unit_test(test_extra),      cmocka_unit_test(test_exit_codes),  cmocka_unit_test(test_meta),
        cmocka_unit_test(test_job_record),
    };
    return tu_run_group_tests("json", tests, NULL, NULL);
}
