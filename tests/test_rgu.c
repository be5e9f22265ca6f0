/*
 * test_rgu.c - report/sa_rgu.c: the RGU weights table (built in, or a --rgu-weights
 * file that replaces it or is tried before it), per-cluster tables, guesses, and the
 * messages of a malformed file.
 */
#include "testutil.h"
#include "tu_archive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_rgu.h"

static char dir[] = "/tmp/sa-test-rgu.XXXXXX";

/* Writes text to DIR/name and loads it; NULL (err filled) when the load fails. */
static sa_rgu_t *load_text(const char *name, const char *text, sa_error_t *err)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write_text(path, text);
    return sa_rgu_load(path, err);
}

/* The built-in table: first matching entry wins, case-insensitive, MIG before the GPU. */
static void test_builtin(void **state)
{
    sa_error_t err;
    sa_rgu_t *r = sa_rgu_load(NULL, &err);
    const char *name = NULL;
    double w = 0;
    bool guess = true;
    (void)state;

    assert_non_null(r);
    assert_true(sa_rgu_weight(r, "A100", &w, &name));
    assert_true(w == 4.0);
    assert_non_null(name);
    /* a MIG slice of an H100 is weighted as the slice, not as the H100 */
    assert_true(sa_rgu_weight_on(r, NULL, "nvidia_h100_80gb_hbm3_1g.10gb", &w, NULL, &guess));
    assert_true(w == 1.74);
    assert_false(guess);
    /* a bare 1g.10gb does not say its parent: H100's weight, marked as a guess */
    assert_true(sa_rgu_weight_on(r, "anycluster", "1g.10gb", &w, NULL, &guess));
    assert_true(w == 1.74);
    assert_true(guess);
    /* a type no entry matches has no weight; so has no type */
    assert_false(sa_rgu_weight(r, "voodoo5", &w, NULL));
    assert_false(sa_rgu_weight(r, "", &w, NULL));
    assert_false(sa_rgu_weight(r, NULL, &w, NULL));
    assert_false(sa_rgu_has_clusters(r));
    assert_true(strlen(sa_rgu_source(r)) > 0);
    sa_rgu_free(r);
    sa_rgu_free(NULL);
}

/* A file replaces the table, unless it says include_defaults (then it is tried first). */
static void test_file_replaces_or_extends(void **state)
{
    sa_error_t err;
    double w = 0;
    sa_rgu_t *r;
    (void)state;

    r = load_text("only.json", "{\"weights\": [{\"name\": \"Mine\", \"rgu\": 2.5, \"match\": [\"a100*\"]}]}", &err);
    assert_non_null(r);
    assert_true(sa_rgu_weight(r, "A100_80GB", &w, NULL));
    assert_true(w == 2.5);
    assert_false(sa_rgu_weight(r, "h100", &w, NULL)); /* the built-in table is gone */
    sa_rgu_free(r);

    r = load_text("more.json",
                  "{\"include_defaults\": true, \"weights\": [{\"name\": \"Mine\", \"rgu\": 2.5, \"match\": [\"a100\"]}]}",
                  &err);
    assert_non_null(r);
    assert_true(sa_rgu_weight(r, "a100", &w, NULL));
    assert_true(w == 2.5); /* the file first */
    assert_true(sa_rgu_weight(r, "tesla_t4", &w, NULL));
    assert_true(w == 1.3); /* then the built-in table */
    sa_rgu_free(r);
}

/* A cluster's own table is tried first for that cluster only, and is never a guess. */
static void test_cluster_tables(void **state)
{
    sa_error_t err;
    double w = 0;
    bool guess = true;
    const char *name = NULL;
    sa_rgu_t *r = load_text(
        "clusters.json",
        "{\"include_defaults\": true, \"clusters\": {\"narval\": [{\"gpu_type\": \"1g.10gb\", \"parent\": "
        "\"A100-80gb\", \"rgu\": 0.69}]}}",
        &err);
    (void)state;

    assert_non_null(r);
    assert_true(sa_rgu_has_clusters(r));
    assert_true(sa_rgu_weight_on(r, "narval", "1g.10gb", &w, &name, &guess));
    assert_true(w == 0.69);
    assert_false(guess);
    assert_non_null(strstr(name, "A100-80gb"));
    /* another cluster: the general (guessed) entry */
    assert_true(sa_rgu_weight_on(r, "fir", "1g.10gb", &w, NULL, &guess));
    assert_true(w == 1.74);
    assert_true(guess);
    sa_rgu_free(r);
}

/* A malformed file is refused with a message that names the file and the entry. */
static void test_errors(void **state)
{
    sa_error_t err;
    (void)state;

    assert_null(load_text("neg.json", "{\"weights\": [{\"name\": \"x\", \"rgu\": -1, \"match\": [\"a\"]}]}", &err));
    assert_non_null(strstr(err.message, "neg.json"));
    assert_non_null(strstr(err.message, "weights[0]: rgu"));
    assert_null(load_text("nomatch.json", "{\"weights\": [{\"name\": \"x\", \"rgu\": 1, \"match\": []}]}", &err));
    assert_non_null(strstr(err.message, "weights[0]: match"));
    assert_null(load_text("guess.json",
                          "{\"weights\": [{\"name\": \"x\", \"rgu\": 1, \"match\": [\"a\"], \"guess\": \"yes\"}]}",
                          &err));
    assert_non_null(strstr(err.message, "guess"));
    assert_null(load_text("bad.json", "{\"weights\": [", &err));
    assert_non_null(strstr(err.message, "bad.json:"));
    assert_null(load_text("cl.json", "{\"clusters\": {\"narval\": {}}}", &err));
    assert_non_null(strstr(err.message, "clusters: narval"));
    {
        char path[256];
        snprintf(path, sizeof path, "%s/missing.json", dir);
        assert_null(sa_rgu_load(path, &err));
        assert_non_null(strstr(err.message, "missing.json"));
    }
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin),
        cmocka_unit_test(test_file_replaces_or_extends),
        cmocka_unit_test(test_cluster_tables),
        cmocka_unit_test(test_errors),
    };
    return tu_run_group_tests("rgu", tests, setup, teardown);
}
