/*
 * test_parse_equiv.c - the JSON walker's shortcuts give exactly the records of a
 * plain decode:
 * - layout: each JSON sample re-encoded compact, indented by 4, and with CRLF and
 *   tabs between tokens gives the records of the capture as Slurm printed it, whole
 *   and one byte a read (the walker copies values without their whitespace);
 * - repeats: records whose members repeat the text of the record before (decoded
 *   once and shared, sa_json_memo.c), mixed with records that change some of them,
 *   give the records each of them gives alone in a document of its own;
 * - errors: a broken capture gets the same message whole and one byte a read (the
 *   walker falls back to the original bytes for the message).
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The JSON samples (record arrays "jobs" and "nodes"; sinfo >= 23.02 groups too). */
static const char *const json_samples[] = {
    "squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json",
    "squeue/openapi-v0037_21.08.5_rivos_HANDMERGED-2nd-job-v0039-pending-array.json",
    "squeue/restd-jobs-v0039_23.02.8_slurmweb_30jobs-pending-priority.json",
    "squeue/restd-jobs-v0041_24.05.3_slurmweb_14jobs.json",
    "squeue/restd-jobs-v0043_25.05.4_slurmweb_19jobs-qoslimit-reasons.json",
    "squeue/restd-jobs-v0044_25.11.0_slurmweb_15jobs.json",
    "squeue/cli-scontrol-show-job-json-v0040_23.11.6_torchx_hetjob-4-components.json",
    "sacct-json/dbv0037_21.08.8_mila_requeued.json",
    "sacct-json/local-cli-dbv0038_22.05.8_D-final-requeued-het-steps-exitcode-bug.json",
    "sacct-json/restd-dbjob-v0041_24.05.3_slurmweb_timeout-step-cancelled.json",
    "sacct-json/restd-dbjob-v0044_25.11.0_slurmweb_failed.json",
    "sinfo/restd-nodes-v0039_23.02.8_slurmweb_100nodes-alloc-drain-down.json",
    "sinfo/restd-nodes-v0044_25.11.0_slurmweb_8nodes.json",
    "sinfo/dp-v0039_23.02.5_rivos_sinfo-N-escaped-slashes.json",
};

/*
 * Parses data (whole, or one byte a read) and returns its records as one JSON text,
 * or NULL with the error message in err.
 */
static char *records(const char *data, size_t len, bool one_byte, sa_error_t *err)
{
    tu_parsed_t p;
    sa_reader_t r;
    char *dump = NULL;

    sa_error_clear(err);
    if (one_byte)
        tu_reader_one_byte(&r, data, len);
    else
        sa_reader_init_mem(&r, data, len);
    if (tu_parse_reader(&r, NULL, &p, err))
        dump = tu_parsed_dump(&p);
    tu_parsed_clear(&p);
    return dump;
}

/* Same as records() but fails the test on a parse error. */
static char *records_ok(const char *what, const char *data, size_t len, bool one_byte)
{
    sa_error_t err;
    char *dump = records(data, len, one_byte, &err);
    if (!dump)
        fail_msg("%s: %s", what, err.message);
    return dump;
}

/* Loads a sample as a jansson document (integers beyond int64 are not in the samples). */
static json_t *load_sample(const char *rel)
{
    json_error_t jerr;
    json_t *doc = json_load_file(tu_sample(rel), 0, &jerr);
    if (!doc)
        fail_msg("%s: %s", rel, jerr.text);
    return doc;
}

/* s with every newline replaced by CRLF, a tab and a space (caller frees). */
static char *odd_layout(const char *s)
{
    size_t n = 0;
    char *out, *o;

    for (const char *p = s; *p; p++)
        n += *p == '\n' ? 4 : 1;
    o = out = malloc(n + 1);
    assert_non_null(out);
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            memcpy(o, "\r\n\t ", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static void test_layouts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof json_samples / sizeof json_samples[0]; i++) {
        const char *rel = json_samples[i];
        size_t len;
        char *orig = tu_read_file(tu_sample(rel), &len);
        char *want = records_ok(rel, orig, len, false);
        json_t *doc = load_sample(rel);
        char *layouts[3];

        layouts[0] = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
        layouts[1] = json_dumps(doc, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
        {
            char *one = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
            layouts[2] = odd_layout(one);
            free(one);
        }
        for (int l = 0; l < 3; l++) {
            for (int one_byte = 0; one_byte < 2; one_byte++) {
                char *got = records_ok(rel, layouts[l], strlen(layouts[l]), one_byte);
                if (strcmp(want, got) != 0)
                    fail_msg("%s: layout %d%s gives other records", rel, l, one_byte ? ", one byte a read" : "");
                free(got);
            }
            free(layouts[l]);
        }
        {
            char *got = records_ok(rel, orig, len, true);
            if (strcmp(want, got) != 0)
                fail_msg("%s: one byte a read gives other records", rel);
            free(got);
        }
        json_decref(doc);
        free(want);
        free(orig);
    }
}

/*
 * Strings that hold what the walker looks at (quotes, backslashes, brackets, ',', ':'
 * and blanks) keep every byte, also where a record repeats another's member text.
 */
static void test_tricky_strings(void **state)
{
    static const char doc[] =
        "{ \"jobs\" : [\n"
        "  { \"job_id\" : 7 , \"job_state\" : \"RUNNING\" ,\n"
        "    \"name\" : \"a\\\" b  {[ ,: ]}  c\\\\\" , \"comment\" : \"\\\\\\\"  x \\t\" ,\n"
        "    \"user_\\u006eame\" : \"u  1\" } ,\n"
        "  { \"job_id\" : 8 , \"job_state\" : \"RUNNING\" , \"name\" : \"a\\\" b  {[ ,: ]}  c\\\\\" ,\n"
        "    \"comment\" : \"\\\\\\\"  x \\t\" , \"user_name\" : \"u  2\" }\n"
        "] }\n";
    (void)state;
    for (int one_byte = 0; one_byte < 2; one_byte++) {
        tu_parsed_t p;
        sa_reader_t r;
        sa_error_t err;

        if (one_byte)
            tu_reader_one_byte(&r, doc, sizeof doc - 1);
        else
            sa_reader_init_mem(&r, doc, sizeof doc - 1);
        assert_true(tu_parse_reader(&r, NULL, &p, &err));
        assert_int_equal(p.njobs, 2);
        for (size_t j = 0; j < 2; j++) {
            assert_string_equal(p.jobs[j]->name, "a\" b  {[ ,: ]}  c\\");
            assert_string_equal(json_string_value(json_object_get(p.jobs[j]->extra, "comment")), "\\\"  x \t");
            assert_string_equal(p.jobs[j]->user, j ? "u  2" : "u  1");
        }
        tu_parsed_clear(&p);
    }
}

/* a with the value of every other member that b also has taken from b (a new object). */
static json_t *half_of(const json_t *a, const json_t *b)
{
    json_t *m = json_deep_copy(a);
    const char *key;
    json_t *v;
    int k = 0;

    json_object_foreach(m, key, v) {
        json_t *bv = json_object_get(b, key);
        if (bv && k++ % 2 == 1 && strcmp(key, "job_id") != 0 && strcmp(key, "name") != 0 &&
            strcmp(key, "hostname") != 0)
            json_object_set(m, key, bv);
    }
    return m;
}

/* The records of one element alone in a document like doc; NULL when it does not parse. */
static json_t *alone(const json_t *doc, const char *key, json_t *elem)
{
    json_t *one = json_pack("{s:O?, s:[O]}", "meta", json_object_get(doc, "meta"), key, elem);
    char *text = json_dumps(one, JSON_INDENT(2) | JSON_PRESERVE_ORDER), *dump;
    sa_error_t err;
    json_t *recs = NULL;

    dump = records(text, strlen(text), false, &err);
    if (dump)
        recs = json_loads(dump, 0, NULL);
    free(dump);
    free(text);
    json_decref(one);
    return recs;
}

static void test_repeated_records(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof json_samples / sizeof json_samples[0]; i++) {
        const char *rel = json_samples[i];
        json_t *doc = load_sample(rel), *arr, *seq = json_array(), *want = json_array(), *got;
        const char *key = json_object_get(doc, "jobs") ? "jobs" : "nodes";
        char *text, *dump, *want_text;
        size_t n;

        arr = json_object_get(doc, key);
        if (!json_is_array(arr) || json_array_size(arr) == 0) { /* sinfo >= 23.02: groups merge */
            json_decref(doc);
            json_decref(seq);
            json_decref(want);
            continue;
        }
        n = json_array_size(arr);
        /* each element twice, then half changed to the next one's values, then again */
        for (size_t e = 0; e < n; e++) {
            json_t *a = json_array_get(arr, e), *mixed = half_of(a, json_array_get(arr, (e + 1) % n));
            json_t *const seq_e[] = {a, a, mixed, a};
            for (size_t s = 0; s < 4; s++) {
                json_t *recs = alone(doc, key, seq_e[s]);
                if (!recs)
                    continue; /* a mixed record that is not valid alone is left out */
                json_array_append(seq, seq_e[s]);
                json_array_extend(want, recs);
                json_decref(recs);
            }
            json_decref(mixed);
        }
        json_object_set(doc, key, seq);
        text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        dump = records_ok(rel, text, strlen(text), false);
        got = json_loads(dump, 0, NULL);
        want_text = json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER);
        free(dump);
        dump = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER);
        assert_true(json_array_size(want) >= 3 * n);
        if (strcmp(want_text, dump) != 0)
            fail_msg("%s: repeated records differ from the same records parsed alone", rel);
        free(want_text);
        free(dump);
        free(text);
        json_decref(got);
        json_decref(seq);
        json_decref(want);
        json_decref(doc);
    }
}

/* Breaks the text in one way; returns a new string or NULL when that does not apply. */
static char *broken(const char *s, int how)
{
    size_t n = strlen(s), at;
    char *out = malloc(n + 8);
    const char *p;

    assert_non_null(out);
    switch (how) {
    case 0: /* a member's ':' dropped in the middle of the records */
        p = strchr(s + n / 2, ':');
        break;
    case 1: /* a closing brace dropped */
        p = strchr(s + n / 2, '}');
        break;
    case 2: /* two numbers where one was */
        p = strstr(s + n / 3, ": 0");
        break;
    default: /* cut off two thirds in */
        p = s + 2 * n / 3;
        break;
    }
    if (!p) {
        free(out);
        return NULL;
    }
    at = (size_t)(p - s);
    memcpy(out, s, at);
    if (how == 2) {
        memcpy(out + at, ": 0 1", 5);
        strcpy(out + at + 5, s + at + 3);
    } else if (how == 3) {
        out[at] = '\0';
    } else {
        strcpy(out + at, s + at + 1);
    }
    return out;
}

static void test_errors_whole_and_trickled(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof json_samples / sizeof json_samples[0]; i++) {
        char *orig = tu_read_file(tu_sample(json_samples[i]), NULL);
        for (int how = 0; how < 4; how++) {
            char *bad = broken(orig, how), *a, *b;
            sa_error_t ea, eb;
            if (!bad)
                continue;
            a = records(bad, strlen(bad), false, &ea);
            b = records(bad, strlen(bad), true, &eb);
            if (a || b)
                fail_msg("%s: broken (%d) but parsed", json_samples[i], how);
            if (strcmp(ea.message, eb.message) != 0)
                fail_msg("%s: broken (%d): '%s' whole, '%s' one byte a read", json_samples[i], how, ea.message,
                         eb.message);
            free(bad);
        }
        free(orig);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_tricky_strings),
        cmocka_unit_test(test_repeated_records),
        cmocka_unit_test(test_errors_whole_and_trickled),
    };
    return tu_run_group_tests("parse_equiv", tests, NULL, NULL);
}
