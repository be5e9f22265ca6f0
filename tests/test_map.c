/*
 * test_map.c - schema/core/sa_map.c: the key -> index map over a caller's array and FNV-1a,
 * without a server.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_map.h"

/* The caller's array: strings, index = id. */
typedef struct {
    char **v;
    size_t n;
    size_t hashed; /* calls of the hash callback */
} strs_t;

static uint64_t strs_hash(size_t i, void *ctx)
{
    strs_t *s = ctx;
    s->hashed++;
    return sa_fnv1a(s->v[i], strlen(s->v[i]));
}

static bool strs_eq(size_t i, const void *key, void *ctx)
{
    const strs_t *s = ctx;
    return strcmp(s->v[i], key) == 0;
}

/* The id of k, added when new (as sa_rintern does). */
static size_t strs_id(sa_map_t *m, strs_t *s, const char *k)
{
    uint32_t *slot = sa_map_slot(m, sa_fnv1a(k, strlen(k)), k, s->n, strs_hash, strs_eq, s);
    assert_non_null(slot);
    if (*slot)
        return *slot - 1;
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    assert_non_null(s->v);
    s->v[s->n] = strdup(k);
    *slot = (uint32_t)s->n + 1;
    return s->n++;
}

/* FNV-1a's published test values; sa_fnv1a_more goes on where it stopped. */
static void test_fnv1a(void **state)
{
    (void)state;
    assert_true(sa_fnv1a("", 0) == SA_FNV1A_INIT);
    assert_true(sa_fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(sa_fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
    assert_true(sa_fnv1a_more(sa_fnv1a("foo", 3), "bar", 3) == sa_fnv1a("foobar", 6));
}

/* 5000 keys: each found again at its id after the slots were doubled many times. */
static void test_map_many(void **state)
{
    sa_map_t m = SA_MAP_INIT;
    strs_t s = {0};
    char k[32];
    (void)state;

    assert_true(sa_map_find(&m, 1, "x", strs_eq, &s) == SIZE_MAX); /* empty: nothing allocated */
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "key-%d", i);
        assert_int_equal(strs_id(&m, &s, k), i);
        assert_true(m.nslots >= 2 * s.n); /* the load stays at most 1/2 */
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "key-%d", i);
        assert_int_equal(strs_id(&m, &s, k), i); /* found, not added */
        assert_int_equal(sa_map_find(&m, sa_fnv1a(k, strlen(k)), k, strs_eq, &s), i);
    }
    assert_int_equal(s.n, 5000);
    assert_true(sa_map_find(&m, sa_fnv1a("nope", 4), "nope", strs_eq, &s) == SIZE_MAX);
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i]);
    free(s.v);
    sa_map_clear(&m);
    assert_null(m.slots);
    sa_map_clear(NULL);
}

/* Keys whose hashes collide all live (linear probing); the rehash puts every one back. */
static uint64_t same_hash(size_t i, void *ctx)
{
    (void)i;
    (void)ctx;
    return 7;
}

static void test_map_collisions(void **state)
{
    sa_map_t m = SA_MAP_INIT;
    strs_t s = {0};
    char k[32];
    (void)state;

    for (int i = 0; i < 100; i++) {
        uint32_t *slot;
        snprintf(k, sizeof k, "c%d", i);
        slot = sa_map_slot(&m, 7, k, s.n, same_hash, strs_eq, &s);
        assert_non_null(slot);
        assert_int_equal(*slot, 0);
        s.v = realloc(s.v, (s.n + 1) * sizeof *s.v);
        s.v[s.n] = strdup(k);
        *slot = (uint32_t)++s.n;
    }
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof k, "c%d", i);
        assert_int_equal(sa_map_find(&m, 7, k, strs_eq, &s), i);
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i]);
    free(s.v);
    sa_map_clear(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv1a),
        cmocka_unit_test(test_map_many),
        cmocka_unit_test(test_map_collisions),
    };
    return tu_run_group_tests("map", tests, NULL, NULL);
}
