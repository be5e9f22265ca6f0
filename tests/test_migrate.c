/*
 * test_migrate.c - an archive written by 0.1 (ObjectId _ids, no versions) moves to the
 * _id scheme of 0.2 in place: every document arrives once, equal but for _id and _v, and
 * a migration cut short at any step finishes on the next run.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_bson.h"
#include "sa_jobdoc.h"

static mongoc_client_t *client;
static char *db_name;
static char tmp[64];

/* Documents as 0.1 wrote them: merged from the real 22.05 captures, with no _id and no _v. */
static json_t *old_documents(const char *cluster)
{
    static const char *const files[] = {"slurm-22.05/squeue-A.json", "slurm-22.05/squeue-C.json",
                                        "slurm-22.05/sacct-P-D.txt", NULL};
    json_t *docs = json_object();
    for (int f = 0; files[f]; f++) {
        tu_parsed_t p;
        sa_obs_ctx_t ctx = {cluster, 1795600000 + f * 300, NULL, NULL};
        tu_parse_fixture(files[f], &p);
        for (size_t i = 0; i < p.njobs; i++) {
            char key[32];
            json_t *doc, *sup = NULL;
            sa_merge_kind_t kind;
            sa_error_t err;
            snprintf(key, sizeof key, "%lld", (long long)p.jobs[i]->job_id);
            doc = json_incref(json_object_get(docs, key));
            if (!sa_jobdoc_merge(&doc, p.jobs[i], &ctx, &kind, &sup, &err))
                fail_msg("merge: %s", err.message);
            json_decref(sup);
            json_object_set_new(docs, key, doc);
        }
        tu_parsed_clear(&p);
    }
    return docs;
}

/* Inserts the documents the way 0.1 did: the server gives each an ObjectId. */
static void insert_old(const char *coll_name, json_t *docs)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(client, db_name, coll_name);
    const char *k;
    json_t *d;
    json_object_foreach(docs, k, d) {
        json_t *c = json_copy(d);
        bson_t b = BSON_INITIALIZER;
        bson_error_t berr;
        sa_error_t err;
        json_object_del(c, "_id");
        json_object_del(c, "_v");
        assert_true(sa_bson_from_json(c, &b, &err));
        if (!mongoc_collection_insert_one(coll, &b, NULL, NULL, &berr))
            fail_msg("insert: %s", berr.message);
        bson_destroy(&b);
        json_decref(c);
    }
    mongoc_collection_destroy(coll);
}

static int run_migrate(const char *cluster, char **err)
{
    char uri_env[1024], cl[96], db[128], lock[128], spool[128], *out = NULL;
    char *argv[] = {(char *)SA_INGEST_BIN, (char *)"migrate", cl, db, lock, spool, NULL};
    char *env[] = {uri_env, NULL};
    int rc;
    snprintf(uri_env, sizeof uri_env, "SLURM_INGEST_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    snprintf(cl, sizeof cl, "--cluster=%s", cluster);
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(lock, sizeof lock, "--lock-dir=%s/lock", tmp);
    snprintf(spool, sizeof spool, "--spool-dir=%s/spool", tmp);
    rc = tu_run(argv, env, &out, err);
    free(out);
    return rc;
}

/* Every document of cluster in coll, by job id (times as epoch seconds). */
static json_t *read_all(const char *coll_name, const char *cluster, size_t *objectids)
{
    mongoc_collection_t *coll = mongoc_client_get_collection(client, db_name, coll_name);
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur;
    const bson_t *d;
    json_t *all = json_object();
    BSON_APPEND_UTF8(&filter, "cluster", cluster);
    cur = mongoc_collection_find_with_opts(coll, &filter, NULL, NULL);
    *objectids = 0;
    while (mongoc_cursor_next(cur, &d)) {
        bson_iter_t it;
        sa_error_t err;
        json_t *j = sa_bson_to_json(d, &err);
        char key[32];
        if (bson_iter_init_find(&it, d, "_id") && BSON_ITER_HOLDS_OID(&it))
            (*objectids)++;
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(j, "job_id")));
        assert_null(json_object_get(all, key)); /* never twice */
        json_object_set_new(all, key, j);
    }
    mongoc_cursor_destroy(cur);
    mongoc_collection_destroy(coll);
    bson_destroy(&filter);
    return all;
}

/* The migrated documents equal the old ones but for their new _id and _v = 1. */
static void expect_migrated(const char *cluster, json_t *old)
{
    size_t oids;
    json_t *now = read_all("jobs", cluster, &oids);
    const char *k;
    json_t *d;
    assert_int_equal(oids, 0);
    assert_int_equal(json_object_size(now), json_object_size(old));
    json_object_foreach(old, k, d) {
        json_t *m = json_copy(json_object_get(now, k)), *o = json_copy(d);
        char want[64];
        assert_non_null(m);
        snprintf(want, sizeof want, "%s:%s", cluster, k);
        assert_string_equal(json_string_value(json_object_get(m, "_id")), want);
        assert_int_equal(json_integer_value(json_object_get(m, "_v")), 1);
        json_object_del(m, "_id");
        json_object_del(m, "_v");
        json_object_del(o, "_id");
        json_object_del(o, "_v");
        if (!json_equal(m, o))
            fail_msg("job %s changed in the migration", k);
        json_decref(m);
        json_decref(o);
    }
    json_decref(now);
}

static void test_migrate_whole(void **state)
{
    json_t *old = old_documents("mig1");
    char *err = NULL;
    (void)state;
    insert_old("jobs", old);
    assert_int_equal(run_migrate("mig1", &err), 0);
    free(err);
    expect_migrated("mig1", old);
    /* a second run finds it done */
    assert_int_equal(run_migrate("mig1", &err), 0);
    free(err);
    expect_migrated("mig1", old);
    printf("  migrated %zu documents of 0.1\n", json_object_size(old));
    json_decref(old);
}

/* A migration cut short between the copy to jobs_migrating and its placement. */
static void test_migrate_resumes(void **state)
{
    json_t *old = old_documents("mig2"), *half = json_object();
    mongoc_collection_t *mig = mongoc_client_get_collection(client, db_name, "jobs_migrating");
    const char *k;
    json_t *d;
    size_t i = 0;
    char *err = NULL;
    (void)state;
    /* half the documents are still in jobs (ObjectIds); the other half sit in jobs_migrating */
    json_object_foreach(old, k, d) {
        if (i++ % 2 == 0) {
            json_t *c = json_copy(d);
            char id[64];
            bson_t b = BSON_INITIALIZER;
            sa_error_t e;
            snprintf(id, sizeof id, "mig2:%s", k);
            json_object_set_new(c, "_id", json_string(id));
            json_object_set_new(c, "_v", json_integer(1));
            json_object_set_new(c, "_migrating_to", json_string("jobs"));
            assert_true(sa_bson_from_json(c, &b, &e));
            assert_true(mongoc_collection_insert_one(mig, &b, NULL, NULL, NULL));
            bson_destroy(&b);
            json_decref(c);
        } else {
            json_object_set(half, k, d);
        }
    }
    insert_old("jobs", half);
    assert_int_equal(run_migrate("mig2", &err), 0);
    free(err);
    expect_migrated("mig2", old);
    {
        bson_t all = BSON_INITIALIZER;
        assert_int_equal(mongoc_collection_count_documents(mig, &all, NULL, NULL, NULL, NULL), 0);
        bson_destroy(&all);
    }
    mongoc_collection_destroy(mig);
    json_decref(half);
    json_decref(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_migrate_whole), cmocka_unit_test(test_migrate_resumes)};
    int rc;
    client = tu_mongo_client("migrate", &db_name);
    if (!client)
        return 77;
    snprintf(tmp, sizeof tmp, "/tmp/sa-migrate-XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    rc = tu_run_group_tests("migrate", tests, NULL, NULL);
    {
        char *argv[] = {(char *)"/bin/rm", (char *)"-rf", tmp, NULL}, *o, *e;
        tu_run(argv, NULL, &o, &e);
        free(o);
        free(e);
    }
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
