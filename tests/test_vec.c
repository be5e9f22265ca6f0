/*
 * test_vec.c - schema/core/sa_vec.c: the growable array (sa_vec_grow) and the capped byte
 * buffer (sa_buf_t), without a server.
 */
#include "testutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_vec.h"

/* Room is made by doubling from `first`; the elements already there are kept. */
static void test_grow_doubles_and_keeps(void **state)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    (void)state;

    assert_true(SA_VEC_GROW(v, cap, n, 1, 4));
    assert_non_null(v);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        v[n++] = i * 10;
    /* room for 1 more after 4: doubled to 8 */
    assert_true(SA_VEC_GROW(v, cap, n, 1, 4));
    assert_int_equal(cap, 8);
    /* room for 9 more after 4 (13): 8 -> 16 */
    assert_true(SA_VEC_GROW(v, cap, n, 9, 4));
    assert_int_equal(cap, 16);
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i * 10);
    /* enough room already: nothing changes */
    {
        int *before = v;
        assert_true(SA_VEC_GROW(v, cap, n, 12, 4));
        assert_int_equal(cap, 16);
        assert_ptr_equal(v, before);
    }
    free(v);
}

/* A size that would overflow is refused with ENOMEM and changes nothing. */
static void test_grow_overflow(void **state)
{
    int64_t *v = NULL;
    size_t cap = 0;
    (void)state;

    errno = 0;
    assert_false(SA_VEC_GROW(v, cap, 0, SIZE_MAX / 4, 8));
    assert_int_equal(errno, ENOMEM);
    assert_null(v);
    assert_int_equal(cap, 0);
    assert_true(SA_VEC_GROW(v, cap, 0, 1, 8));
    errno = 0;
    assert_false(SA_VEC_GROW(v, cap, 1, SIZE_MAX - 1, 8));
    assert_int_equal(errno, ENOMEM);
    assert_int_equal(cap, 8);
    free(v);
}

/* A buffer holds at most its cap: past it EFBIG, nothing appended; always NUL-terminated. */
static void test_buf_cap(void **state)
{
    sa_buf_t b;
    (void)state;

    sa_buf_init(&b, 10);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_true(sa_buf_append(&b, "hello", 5));
    assert_string_equal(b.data, "hello");
    assert_true(sa_buf_append(&b, "world", 5)); /* exactly the cap */
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "helloworld");
    errno = 0;
    assert_false(sa_buf_append(&b, "!", 1));
    assert_int_equal(errno, EFBIG);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "helloworld");
    /* reset keeps the cap and the memory */
    sa_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    assert_false(sa_buf_append(&b, "01234567890", 11));
    assert_int_equal(errno, EFBIG);
    assert_true(sa_buf_append(&b, "abc", 3));
    assert_string_equal(b.data, "abc");
    sa_buf_clear(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 10);
    sa_buf_clear(NULL);
}

/* Bytes are bytes: a NUL inside is held and counted. */
static void test_buf_binary(void **state)
{
    sa_buf_t b;
    (void)state;

    sa_buf_init(&b, 1 << 20);
    assert_true(sa_buf_append(&b, "a\0b", 3));
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b", 3);
    for (int i = 0; i < 1000; i++)
        assert_true(sa_buf_append(&b, "0123456789", 10));
    assert_int_equal(b.len, 10003);
    assert_true(b.alloc >= b.len + 1);
    assert_int_equal(b.data[b.len], '\0');
    assert_memory_equal(b.data + 9993, "0123456789", 10);
    sa_buf_clear(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles_and_keeps),
        cmocka_unit_test(test_grow_overflow),
        cmocka_unit_test(test_buf_cap),
        cmocka_unit_test(test_buf_binary),
    };
    return tu_run_group_tests("vec", tests, NULL, NULL);
}
