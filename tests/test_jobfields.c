/*
 * test_jobfields.c - the field table of the job document (schema/jobdoc/sa_jobfields.c) against
 * schema/jobdoc/job.schema.json, both ways, and against the documents the merge really writes:
 * every record of the repository's fixtures (fixtures/gen/<every version>/ and
 * fixtures/slurm-22.05/) is merged with sa_jobdoc_merge (no server), each document is
 * turned into BSON as it would be stored, and every member of it must be in the table
 * with its BSON type.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bson/bson.h>

#include "sa_bson.h"
#include "sa_jobdoc.h"
#include "sa_jobfields.h"

#define SCHEMA_PATH SA_SOURCE_DIR "/schema/jobdoc/job.schema.json"

static const char *const TYPES[] = {"string", "long", "double", "bool", "date", "object", "array", NULL};

/* ---- the table itself ------------------------------------------------------------------ */

/* The path of the member that holds path ("runs[].start" -> "runs[]", "runs[]" -> "runs"), in buf. */
static bool parent_path(const char *path, char *buf, size_t sz)
{
    size_t n = strlen(path);
    if (n >= 2 && strcmp(path + n - 2, "[]") == 0) {
        snprintf(buf, sz, "%.*s", (int)(n - 2), path);
        return true;
    }
    const char *dot = strrchr(path, '.');
    if (!dot)
        return false;
    snprintf(buf, sz, "%.*s", (int)(dot - path), path);
    return true;
}

/* Every entry: a known type, a meaning, no duplicate, and its parent in the table as an object or array. */
static void test_table(void **state)
{
    size_t n = 0;
    (void)state;
    for (const sa_jobfield_t *f = sa_jobfields; f->path; f++, n++) {
        char parent[256];
        bool known = false;
        for (const char *const *t = TYPES; *t; t++)
            known = known || strcmp(*t, f->type) == 0;
        if (!known)
            fail_msg("%s: unknown type %s", f->path, f->type);
        if (!f->meaning || strlen(f->meaning) < 4)
            fail_msg("%s: no meaning", f->path);
        if (sa_jobfield_find(f->path) != f)
            fail_msg("%s: listed twice", f->path);
        if (parent_path(f->path, parent, sizeof parent)) {
            const sa_jobfield_t *p = sa_jobfield_find(parent);
            bool is_item = strcmp(f->path + strlen(f->path) - 2, "[]") == 0;
            if (!p || strcmp(p->type, is_item ? "array" : "object") != 0)
                fail_msg("%s: its parent %s is not in the table as %s", f->path, parent, is_item ? "array" : "object");
        }
    }
    assert_true(n > 100);
    assert_null(sa_jobfield_find("no_such_member"));
    assert_string_equal(sa_jobfield_find("runs[].gpus_by_type[].type")->type, "string");
}

/* ---- the table against job.schema.json --------------------------------------------------- */

/* Adds path -> bsonType of every node of the schema under node (with $ref resolved) to out. */
static void schema_paths(const json_t *node, const json_t *defs, const char *path, json_t *out)
{
    const json_t *ref = json_object_get(node, "$ref"), *type, *props, *items;
    char child[512];
    const char *k;
    json_t *v;

    if (json_is_string(ref)) {
        const char *r = json_string_value(ref);
        if (strncmp(r, "#/definitions/", 14) != 0 || !json_object_get(defs, r + 14))
            fail_msg("%s: schema: unresolved $ref %s at %s", SCHEMA_PATH, r, path);
        node = json_object_get(defs, r + 14);
    }
    type = json_object_get(node, "bsonType");
    if (*path) {
        if (!json_is_string(type))
            fail_msg("%s: schema: %s has no single bsonType (the table gives one type a member)", SCHEMA_PATH, path);
        json_object_set(out, path, (json_t *)type);
    }
    props = json_object_get(node, "properties");
    json_object_foreach((json_t *)props, k, v) {
        snprintf(child, sizeof child, "%s%s%s", path, *path ? "." : "", k);
        schema_paths(v, defs, child, out);
    }
    if ((items = json_object_get(node, "items"))) {
        snprintf(child, sizeof child, "%s[]", path);
        schema_paths(items, defs, child, out);
    }
}

static void test_schema_both_ways(void **state)
{
    json_error_t jerr;
    json_t *schema = json_load_file(SCHEMA_PATH, 0, &jerr), *paths = json_object(), *v;
    const char *k;
    size_t n = 0;
    (void)state;

    if (!schema)
        fail_msg("%s:%d: %s", SCHEMA_PATH, jerr.line, jerr.text);
    schema_paths(schema, json_object_get(schema, "definitions"), "", paths);
    json_object_foreach(paths, k, v) {
        const sa_jobfield_t *f = sa_jobfield_find(k);
        if (!f)
            fail_msg("job.schema.json has %s (%s), the table (schema/jobdoc/sa_jobfields.c) does not", k,
                     json_string_value(v));
        if (strcmp(f->type, json_string_value(v)) != 0)
            fail_msg("%s: the table says %s, job.schema.json %s", k, f->type, json_string_value(v));
    }
    for (const sa_jobfield_t *f = sa_jobfields; f->path; f++, n++) {
        if (!json_object_get(paths, f->path))
            fail_msg("the table has %s (%s), job.schema.json does not", f->path, f->type);
    }
    assert_int_equal(n, json_object_size(paths));
    printf("  %zu members, the same in the table and in job.schema.json\n", n);
    json_decref(paths);
    json_decref(schema);
}

/* ---- the table against merged documents -------------------------------------------------- */

static const char *bson_type_name(bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_UTF8:
        return "string";
    case BSON_TYPE_INT64:
        return "long";
    case BSON_TYPE_INT32:
        return "int";
    case BSON_TYPE_DOUBLE:
        return "double";
    case BSON_TYPE_BOOL:
        return "bool";
    case BSON_TYPE_DATE_TIME:
        return "date";
    case BSON_TYPE_DOCUMENT:
        return "object";
    case BSON_TYPE_ARRAY:
        return "array";
    case BSON_TYPE_NULL:
        return "null";
    default:
        return "other";
    }
}

typedef struct {
    json_t *seen;  /* path -> number of documents with it */
    size_t docs;
    const char *where;
    int64_t job_id;
} walk_t;

/* Checks every member under it (path prefix) against the table; "extra" is opaque. */
static void walk_bson(walk_t *w, bson_iter_t *it, const char *prefix, bool is_array)
{
    while (bson_iter_next(it)) {
        char path[512];
        const char *type = bson_type_name(bson_iter_type(it));
        const sa_jobfield_t *f;
        bson_iter_t child;

        if (is_array)
            snprintf(path, sizeof path, "%s[]", prefix);
        else
            snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", bson_iter_key(it));
        f = sa_jobfield_find(path);
        if (!f)
            fail_msg("%s: job %lld: member %s (%s) is not in the table (schema/jobdoc/sa_jobfields.c)", w->where,
                     (long long)w->job_id, path, type);
        if (strcmp(f->type, type) != 0)
            fail_msg("%s: job %lld: %s is %s, the table says %s", w->where, (long long)w->job_id, path, type,
                     f->type);
        json_object_set_new(w->seen, path, json_integer(json_integer_value(json_object_get(w->seen, path)) + 1));
        if (strcmp(path, "extra") == 0)
            continue;
        if ((BSON_ITER_HOLDS_DOCUMENT(it) || BSON_ITER_HOLDS_ARRAY(it)) && bson_iter_recurse(it, &child))
            walk_bson(w, &child, path, BSON_ITER_HOLDS_ARRAY(it));
    }
}

static void check_doc(walk_t *w, const json_t *doc)
{
    bson_t b = BSON_INITIALIZER;
    bson_iter_t it;
    sa_error_t err;

    if (!sa_bson_from_json(doc, &b, &err))
        fail_msg("%s: to BSON: %s", w->where, err.message);
    w->job_id = json_integer_value(json_object_get(doc, "job_id"));
    assert_true(bson_iter_init(&it, &b));
    walk_bson(w, &it, "", false);
    bson_destroy(&b);
    w->docs++;
}

/* Checks one merged document of the fixtures (tu_merge_fixtures). */
static void on_fixture_doc(const json_t *doc, const char *where, void *ctx)
{
    walk_t *w = ctx;
    w->where = where;
    check_doc(w, doc);
}

static void test_merged_fixtures(void **state)
{
    walk_t w = {json_object(), 0, NULL, 0};
    size_t unseen = 0;
    (void)state;

    size_t n = tu_merge_fixtures(on_fixture_doc, &w);
    assert_int_equal(n, w.docs);
    printf("  %zu documents, %zu distinct members, each in the table with its type\n", w.docs,
           json_object_size(w.seen));
    printf("  members of the table the fixtures' documents do not have:");
    for (const sa_jobfield_t *f = sa_jobfields; f->path; f++) {
        if (!json_object_get(w.seen, f->path)) {
            printf(" %s", f->path);
            unseen++;
        }
    }
    printf("%s\n", unseen ? "" : " none");
    assert_true(w.docs > 100);
    /* the members every report reads are there */
    assert_non_null(json_object_get(w.seen, "runs[].gpus_by_type[].type"));
    assert_non_null(json_object_get(w.seen, "history[].at"));
    assert_non_null(json_object_get(w.seen, "exit.source"));
    json_decref(w.seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_schema_both_ways),
        cmocka_unit_test(test_merged_fixtures),
    };
    return tu_run_group_tests("jobfields", tests, NULL, NULL);
}
