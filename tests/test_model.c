/*
 * test_model.c - schema/core/sa_model.c, the records both binaries share: cluster names,
 * string lists, states (a base and sorted unique flags; unknown words kept), the final job
 * states, GPUs by type, TRES and usage ("absent" is never 0), a job and a node record (new,
 * stolen, steps), their JSON form (unset members left out, times ISO-8601 UTC), and the
 * names of sources and GPU-type sources.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_model.h"

static void test_cluster_names(void **state)
{
    char long_name[130];
    (void)state;

    assert_true(sa_cluster_name_ok("alpha"));
    assert_true(sa_cluster_name_ok("my_cluster-2.prod"));
    assert_true(sa_cluster_name_ok("_x"));
    assert_false(sa_cluster_name_ok(NULL));
    assert_false(sa_cluster_name_ok(""));
    assert_false(sa_cluster_name_ok(".hidden"));
    assert_false(sa_cluster_name_ok("-n"));
    assert_false(sa_cluster_name_ok("a/b"));
    assert_false(sa_cluster_name_ok("a b"));
    assert_false(sa_cluster_name_ok("a:b")); /* it names documents: "<cluster>:<job_id>" */
    assert_false(sa_cluster_name_ok("caf\xc3\xa9"));
    memset(long_name, 'a', 128);
    long_name[128] = '\0';
    assert_true(sa_cluster_name_ok(long_name));
    long_name[128] = 'a';
    long_name[129] = '\0';
    assert_false(sa_cluster_name_ok(long_name));
}

static void test_string_lists(void **state)
{
    sa_strv_t sv;
    (void)state;

    sa_strv_init(&sv);
    assert_true(sa_strv_push(&sv, "b"));
    assert_true(sa_strv_push(&sv, "a"));
    assert_true(sa_strv_push(&sv, "b")); /* push keeps every one, in order */
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[1], "a");
    assert_true(sa_strv_contains(&sv, "a"));
    assert_false(sa_strv_contains(&sv, "c"));
    sa_strv_clear(&sv);
    assert_int_equal(sv.n, 0);
    assert_null(sv.v);

    /* sorted and unique */
    assert_true(sa_strv_add_sorted_unique(&sv, "NOT_RESPONDING"));
    assert_true(sa_strv_add_sorted_unique(&sv, "DRAIN"));
    assert_true(sa_strv_add_sorted_unique(&sv, "MAINTENANCE"));
    assert_true(sa_strv_add_sorted_unique(&sv, "DRAIN"));
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[0], "DRAIN");
    assert_string_equal(sv.v[1], "MAINTENANCE");
    assert_string_equal(sv.v[2], "NOT_RESPONDING");
    sa_strv_clear(&sv);
    sa_strv_clear(NULL); /* a no-op */
}

/* A state is its base and its flags, sorted and unique: two equal states format alike. */
static void test_states(void **state)
{
    sa_state_t a, b;
    char *s;
    (void)state;

    sa_state_init(&a);
    sa_state_init(&b);
    assert_non_null(s = sa_state_format(&a));
    assert_string_equal(s, "");
    free(s);
    assert_true(sa_state_equal(&a, &b));
    a.base = strdup("IDLE");
    assert_true(sa_strv_add_sorted_unique(&a.flags, "NOT_RESPONDING"));
    assert_true(sa_strv_add_sorted_unique(&a.flags, "DRAIN"));
    assert_non_null(s = sa_state_format(&a));
    assert_string_equal(s, "IDLE+DRAIN+NOT_RESPONDING");
    free(s);
    assert_true(sa_state_has_flag(&a, "DRAIN"));
    assert_false(sa_state_has_flag(&a, "MAINTENANCE"));
    assert_false(sa_state_equal(&a, &b)); /* a base against none */
    b.base = strdup("IDLE");
    assert_true(sa_strv_add_sorted_unique(&b.flags, "DRAIN"));
    assert_false(sa_state_equal(&a, &b)); /* a flag fewer */
    assert_true(sa_strv_add_sorted_unique(&b.flags, "NOT_RESPONDING"));
    assert_true(sa_state_equal(&a, &b));
    free(b.base);
    b.base = strdup("MIXED");
    assert_false(sa_state_equal(&a, &b));
    sa_state_clear(&a);
    sa_state_clear(&b);
    assert_null(a.base);

    /* flags without a base (Slurm gave none) */
    assert_true(sa_strv_add_sorted_unique(&a.flags, "COMPLETING"));
    assert_non_null(s = sa_state_format(&a));
    assert_string_equal(s, "COMPLETING");
    free(s);
    sa_state_clear(&a);
}

static void test_base_words(void **state)
{
    (void)state;
    assert_true(sa_node_base_is_known("MIXED"));
    assert_true(sa_node_base_is_known("INVALID"));
    assert_false(sa_node_base_is_known("mixed")); /* words are upper case */
    assert_false(sa_node_base_is_known("DRAIN")); /* a flag */
    assert_false(sa_node_base_is_known(NULL));
    assert_true(sa_job_base_is_known("OUT_OF_MEMORY"));
    assert_true(sa_job_base_is_known("REVOKED"));
    assert_false(sa_job_base_is_known("REQUEUED")); /* a flag of the job; sacct's requeued record is final */
    assert_false(sa_job_base_is_known("IDLE"));
    for (const char *const *f = sa_job_final_states; *f; f++)
        assert_true(sa_job_state_is_final(*f));
    assert_true(sa_job_state_is_final("REQUEUED"));
    assert_false(sa_job_state_is_final("RUNNING"));
    assert_false(sa_job_state_is_final("PENDING"));
    assert_false(sa_job_state_is_final("SUSPENDED"));
    assert_false(sa_job_state_is_final(NULL));
}

/* GPUs by type, sorted by type ("" untyped first): add adds, set sets, get of none is 0. */
static void test_gpus(void **state)
{
    sa_gpus_t g;
    json_t *j;
    char *s;
    (void)state;

    sa_gpus_init(&g);
    assert_int_equal(sa_gpus_total(&g), 0);
    assert_true(sa_gpus_add(&g, "h100", 2));
    assert_true(sa_gpus_add(&g, "a100", 1));
    assert_true(sa_gpus_add(&g, NULL, 3)); /* untyped */
    assert_true(sa_gpus_add(&g, "a100", 4));
    assert_true(sa_gpus_set(&g, "h100", 1));
    assert_true(sa_gpus_set(&g, "3g.40gb", 7));
    assert_int_equal(g.n, 4);
    assert_string_equal(g.v[0].type, "");
    assert_string_equal(g.v[1].type, "3g.40gb");
    assert_string_equal(g.v[2].type, "a100");
    assert_int_equal(sa_gpus_get(&g, "a100"), 5);
    assert_int_equal(sa_gpus_get(&g, "h100"), 1);
    assert_int_equal(sa_gpus_get(&g, NULL), 3);
    assert_int_equal(sa_gpus_get(&g, "l40s"), 0);
    assert_int_equal(sa_gpus_total(&g), 16);
    assert_non_null(j = sa_gpus_to_json(&g));
    assert_non_null(s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
    assert_string_equal(s, "{\"\":3,\"3g.40gb\":7,\"a100\":5,\"h100\":1}");
    free(s);
    json_decref(j);
    sa_gpus_clear(&g);
    assert_int_equal(g.n, 0);
}

/* Absent is never 0: TRES and usage start absent, and what is said makes them not empty. */
static void test_tres_and_stats(void **state)
{
    sa_tres_t t;
    sa_stats_t s;
    json_t *j;
    char *text;
    (void)state;

    sa_tres_init(&t);
    assert_true(sa_tres_is_empty(&t));
    assert_int_equal(t.cpu, SA_UNSET);
    t.cpu = 0; /* zero CPUs said */
    assert_false(sa_tres_is_empty(&t));
    t.cpu = 8;
    t.mem_mb = 1024;
    t.billing = 2.5;
    t.gpu_total = 2;
    assert_true(sa_gpus_add(&t.gpus, "a100", 2));
    assert_non_null(j = sa_tres_to_json(&t));
    assert_non_null(text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
    assert_string_equal(text, "{\"cpu\":8,\"mem_mb\":1024,\"billing\":2.5,\"gpus\":2,\"gpus_by_type\":{\"a100\":2}}");
    free(text);
    json_decref(j);
    sa_tres_clear(&t);
    assert_true(sa_tres_is_empty(&t));
    t.other = json_pack("{s:s}", "license/x", "1");
    assert_false(sa_tres_is_empty(&t));
    sa_tres_clear(&t);

    sa_stats_init(&s);
    assert_true(sa_stats_is_empty(&s));
    assert_null(sa_stats_to_json(&s));
    s.cpu_s = 0.0; /* 0 s of CPU measured */
    s.energy_j = 12;
    assert_false(sa_stats_is_empty(&s));
    assert_non_null(j = sa_stats_to_json(&s));
    assert_non_null(text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
    assert_string_equal(text, "{\"cpu_s\":0.0,\"energy_j\":12}");
    free(text);
    json_decref(j);

    assert_true(sa_usage_extra_column("TRESUsageInTot"));
    assert_true(sa_usage_extra_column("tresusageoutTOT")); /* any case, as sacct headers */
    assert_false(sa_usage_extra_column("TRESUsageIn"));
    assert_false(sa_usage_extra_column(NULL));
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(sa_source_name(SA_SRC_SQUEUE), "squeue");
    assert_string_equal(sa_source_name(SA_SRC_SACCT_JSON), "sacct-json");
    assert_string_equal(sa_source_name(SA_SRC_SACCT_TEXT), "sacct-text");
    assert_string_equal(sa_source_name((sa_source_t)99), "unknown");
    for (int s = SA_RUN_GPU_TYPE_TRES; s <= SA_RUN_GPU_TYPE_UNKNOWN; s++)
        assert_int_equal(sa_run_gpu_type_source_parse(sa_run_gpu_type_source_name(s)), s);
    assert_string_equal(sa_run_gpu_type_source_name(SA_RUN_GPU_TYPE_CARRIED), "carried");
    assert_null(sa_run_gpu_type_source_name(SA_RUN_GPU_TYPE_NONE));
    assert_null(sa_run_gpu_type_source_name(99));
    assert_int_equal(sa_run_gpu_type_source_parse("nodes"), SA_RUN_GPU_TYPE_NONE);
    assert_int_equal(sa_run_gpu_type_source_parse(NULL), SA_RUN_GPU_TYPE_NONE);
    assert_string_equal(sa_node_gpu_config_name(SA_NODE_GPUS_OBSERVED), "observed");
    assert_string_equal(sa_node_gpu_config_name(SA_NODE_GPUS_CARRIED), "carried");
    assert_string_equal(sa_node_gpu_config_name(SA_NODE_GPUS_UNKNOWN), "unknown");
}

static void test_time_format(void **state)
{
    char buf[32];
    (void)state;
    assert_string_equal(sa_time_format(1791072000, buf, sizeof buf), "2026-10-04T00:00:00Z");
    assert_string_equal(sa_time_format(0, buf, sizeof buf), "1970-01-01T00:00:00Z");
    assert_string_equal(sa_time_format(SA_UNSET, buf, sizeof buf), "");
    assert_string_equal(sa_time_format(1791072000, buf, 10), ""); /* too small: nothing, not half */
}

/*
 * A job record: new (everything unset), its JSON form leaving out what is unset; stolen
 * (the new record has it all, the old one is empty again); steps added and the last dropped.
 */
static void test_job_record(void **state)
{
    sa_job_t *job = sa_job_new(SA_SRC_SACCT_TEXT), *moved;
    sa_step_t *st;
    json_t *j;
    char *text;
    (void)state;

    assert_non_null(job);
    assert_int_equal(job->job_id, SA_UNSET);
    assert_int_equal(job->exit_code, -1);
    assert_true(job->exit_reliable);
    assert_non_null(j = sa_job_to_json(job));
    assert_non_null(text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
    assert_string_equal(text, "{\"record\":\"job\",\"source\":\"sacct-text\"}");
    free(text);
    json_decref(j);

    job->job_id = 42;
    job->user = strdup("ann");
    job->state.base = strdup("COMPLETED");
    job->submit = 1791072000;
    job->time_limit = SA_INFINITE;
    job->exit_code = 0;
    job->exit_signal = 9;
    assert_non_null(st = sa_job_add_step(job));
    assert_int_equal(st->start, SA_UNSET);
    st->id = strdup("batch");
    assert_non_null(st = sa_job_add_step(job));
    st->id = strdup("0");
    assert_int_equal(job->nsteps, 2);
    sa_job_drop_last_step(job);
    assert_int_equal(job->nsteps, 1);
    assert_non_null(j = sa_job_to_json(job));
    assert_non_null(text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
    assert_string_equal(text, "{\"record\":\"job\",\"source\":\"sacct-text\",\"job_id\":42,\"user\":\"ann\","
                              "\"state\":\"COMPLETED\",\"submit\":\"2026-10-04T00:00:00Z\",\"time_limit_min\":"
                              "\"UNLIMITED\",\"exit\":{\"code\":0,\"signal\":9},\"steps\":[{\"id\":\"batch\"}]}");
    free(text);
    json_decref(j);

    assert_non_null(moved = sa_job_steal(job));
    assert_int_equal(moved->job_id, 42);
    assert_string_equal(moved->user, "ann");
    assert_int_equal(moved->nsteps, 1);
    assert_int_equal(job->job_id, SA_UNSET);
    assert_null(job->user);
    assert_int_equal(job->nsteps, 0);
    assert_int_equal(job->source, SA_SRC_SACCT_TEXT);
    sa_job_destroy(moved);
    sa_job_destroy(job);
    sa_job_destroy(NULL);
}

static void test_node_record(void **state)
{
    sa_node_t *node = sa_node_new(), *moved;
    json_t *j;
    (void)state;

    assert_non_null(node);
    assert_int_equal(node->cpus_total, SA_UNSET);
    assert_int_equal(node->gpu_config, SA_NODE_GPUS_OBSERVED);
    node->name = strdup("ga001");
    node->state.base = strdup("MIXED");
    node->cpus_total = 64;
    assert_true(sa_gpus_add(&node->gpus_total, "a100", 4));
    assert_true(sa_strv_add_sorted_unique(&node->partitions, "gpu"));
    assert_non_null(j = sa_node_to_json(node));
    assert_string_equal(json_string_value(json_object_get(j, "record")), "node");
    assert_string_equal(json_string_value(json_object_get(j, "name")), "ga001");
    assert_string_equal(json_string_value(json_object_get(j, "state")), "MIXED");
    assert_int_equal(json_integer_value(json_object_get(j, "cpus_total")), 64);
    assert_null(json_object_get(j, "cpus_alloc")); /* unset: left out */
    json_decref(j);
    assert_non_null(moved = sa_node_steal(node));
    assert_string_equal(moved->name, "ga001");
    assert_int_equal(sa_gpus_get(&moved->gpus_total, "a100"), 4);
    assert_null(node->name);
    assert_int_equal(node->gpus_total.n, 0);
    sa_node_destroy(moved);
    sa_node_destroy(node);
}

static void test_meta(void **state)
{
    sa_meta_t m;
    (void)state;
    sa_meta_init(&m);
    assert_int_equal(m.last_update, SA_UNSET);
    m.slurm_release = strdup("22.05.8");
    assert_true(sa_strv_push(&m.warnings, "w"));
    sa_meta_clear(&m);
    assert_null(m.slurm_release);
    assert_int_equal(m.warnings.n, 0);
    assert_int_equal(m.last_update, SA_UNSET);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_names), cmocka_unit_test(test_string_lists), cmocka_unit_test(test_states),
        cmocka_unit_test(test_base_words),    cmocka_unit_test(test_gpus),         cmocka_unit_test(test_tres_and_stats),
        cmocka_unit_test(test_names),         cmocka_unit_test(test_time_format),  cmocka_unit_test(test_job_record),
        cmocka_unit_test(test_node_record),   cmocka_unit_test(test_meta),
    };
    return tu_run_group_tests("model", tests, NULL, NULL);
}
