/*
 * test_mongo_basic.c - the test MongoDB server is real: libmongoc connects, writes
 * and reads documents, a unique compound index refuses duplicates, and a hostile
 * string survives the round trip byte for byte.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mongoc/mongoc.h>

static mongoc_client_t *client;
static char *db_name;

static void test_write_read(void **state)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(client, db_name, "jobs");
    const char *hostile = "a\"b$c.d\nnon-ASCII \xc3\xa9\xe2\x98\x83 {\"$gt\": 1} '; drop";
    bson_t *doc = BCON_NEW("cluster", BCON_UTF8("demo"), "job_id", BCON_INT64(42), "name", BCON_UTF8(hostile));
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8("demo"), "job_id", BCON_INT64(42));
    bson_error_t berr;
    mongoc_cursor_t *cursor;
    const bson_t *found;
    bson_iter_t it;
    int n = 0;
    (void)state;

    if (!mongoc_collection_insert_one(coll, doc, NULL, NULL, &berr))
        fail_msg("insert: %s", berr.message);
    cursor = mongoc_collection_find_with_opts(coll, filter, NULL, NULL);
    while (mongoc_cursor_next(cursor, &found)) {
        n++;
        assert_true(bson_iter_init_find(&it, found, "name"));
        assert_string_equal(bson_iter_utf8(&it, NULL), hostile);
        assert_true(bson_iter_init_find(&it, found, "job_id"));
        assert_int_equal(bson_iter_as_int64(&it), 42);
    }
    assert_false(mongoc_cursor_error(cursor, &berr));
    assert_int_equal(n, 1);
    mongoc_cursor_destroy(cursor);
    bson_destroy(doc);
    bson_destroy(filter);
    mongoc_collection_destroy(coll);
}

static void test_unique_index(void **state)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(client, db_name, "uniq");
    bson_t *cmd = BCON_NEW("createIndexes", BCON_UTF8("uniq"), "indexes", "[", "{", "key", "{", "cluster",
                           BCON_INT32(1), "job_id", BCON_INT32(1), "}", "name", BCON_UTF8("cluster_job_id"),
                           "unique", BCON_BOOL(true), "}", "]");
    bson_t *doc = BCON_NEW("cluster", BCON_UTF8("demo"), "job_id", BCON_INT64(7));
    bson_error_t berr;
    (void)state;

    if (!mongoc_collection_write_command_with_opts(coll, cmd, NULL, NULL, &berr))
        fail_msg("createIndexes: %s", berr.message);
    assert_true(mongoc_collection_insert_one(coll, doc, NULL, NULL, &berr));
    assert_false(mongoc_collection_insert_one(coll, doc, NULL, NULL, &berr));
    assert_int_equal(berr.code, 11000);
    bson_destroy(cmd);
    bson_destroy(doc);
    mongoc_collection_destroy(coll);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read),
        cmocka_unit_test(test_unique_index),
    };
    int rc;

    client = tu_mongo_client("mongo_basic", &db_name);
    if (!client)
        return 77;
    rc = tu_run_group_tests("mongo_basic", tests, NULL, NULL);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    mongoc_cleanup();
    return rc;
}
