/*
 * test_utf8.c - schema/core/sa_utf8.c, the one UTF-8 check: the length of each well-formed
 * sequence (1 to 4 bytes), and none for overlong forms, surrogates, code points past
 * U+10FFFF, NUL, stray continuation bytes and sequences cut short; a repair that replaces
 * each bad byte with U+FFFD and leaves good text alone.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_utf8.h"

#define U(s) ((const unsigned char *)(s))

static void test_sequence_lengths(void **state)
{
    (void)state;
    assert_int_equal(sa_utf8_seq_len(U("a"), 0, 1), 1);
    assert_int_equal(sa_utf8_seq_len(U("\xc3\xa9"), 0, 2), 2);             /* U+00E9 */
    assert_int_equal(sa_utf8_seq_len(U("\xe2\x98\x83"), 0, 3), 3);         /* U+2603 */
    assert_int_equal(sa_utf8_seq_len(U("\xf0\x9f\x98\x80"), 0, 4), 4);     /* U+1F600 */
    assert_int_equal(sa_utf8_seq_len(U("\xf4\x8f\xbf\xbf"), 0, 4), 4);     /* U+10FFFF, the last */
    assert_int_equal(sa_utf8_seq_len(U("x\xc3\xa9"), 1, 3), 2);            /* from an index */
    assert_int_equal(sa_utf8_seq_len(U("\xf4\x90\x80\x80"), 0, 4), 0);     /* past U+10FFFF */
    assert_int_equal(sa_utf8_seq_len(U("\xe0\x80\xaf"), 0, 3), 0);         /* overlong '/' */
    assert_int_equal(sa_utf8_seq_len(U("\xc1\xbf"), 0, 2), 0);             /* overlong */
    assert_int_equal(sa_utf8_seq_len(U("\xed\xa0\x80"), 0, 3), 0);         /* a surrogate */
    assert_int_equal(sa_utf8_seq_len(U("\x80"), 0, 1), 0);                 /* a stray continuation */
    assert_int_equal(sa_utf8_seq_len(U("\xe2\x98\x83"), 0, 2), 0);         /* cut short by n */
    assert_int_equal(sa_utf8_seq_len(U("\xe2\x41\x83"), 0, 3), 0);         /* not a continuation */
    assert_int_equal(sa_utf8_seq_len(U("\0"), 0, 1), 0);                   /* NUL */
    assert_int_equal(sa_utf8_seq_len(U("\xff"), 0, 1), 0);
}

/* Valid: well-formed and without NUL; repaired: each bad byte is U+FFFD (3 bytes). */
static void test_valid_and_repair(void **state)
{
    size_t n;
    char *s;
    (void)state;

    assert_true(sa_utf8_valid((const unsigned char *)"caf\xc3\xa9", 5));
    assert_false(sa_utf8_valid((const unsigned char *)"caf\xe9", 4));    /* Latin-1 */
    assert_false(sa_utf8_valid((const unsigned char *)"a\0b", 3));       /* a NUL */
    assert_false(sa_utf8_valid((const unsigned char *)"\xc0\xaf", 2));   /* overlong '/' */
    assert_false(sa_utf8_valid((const unsigned char *)"\xed\xa0\x80", 3)); /* a surrogate */
    s = sa_utf8_repair((const unsigned char *)"caf\xe9!", 5, &n);
    assert_non_null(s);
    assert_int_equal(n, 3 + 3 + 1); /* U+FFFD is 3 bytes */
    assert_memory_equal(s, "caf\xef\xbf\xbd!", n);
    free(s);
    s = sa_utf8_repair((const unsigned char *)"ok", 2, &n);
    assert_string_equal(s, "ok");
    assert_int_equal(n, 2);
    free(s);
}

/* A sequence cut at the end and stray bytes each become one U+FFFD per byte; NUL too. */
static void test_repair_each_byte(void **state)
{
    size_t n;
    char *s;
    (void)state;

    s = sa_utf8_repair(U("a\xe2\x98"), 3, &n);
    assert_non_null(s);
    assert_int_equal(n, 1 + 2 * 3);
    assert_memory_equal(s, "a\xef\xbf\xbd\xef\xbf\xbd", n);
    assert_true(sa_utf8_valid(U(s), n));
    free(s);
    s = sa_utf8_repair(U("a\0b"), 3, NULL);
    assert_non_null(s);
    assert_string_equal(s, "a\xef\xbf\xbd" "b");
    free(s);
    s = sa_utf8_repair(U(""), 0, &n);
    assert_non_null(s);
    assert_int_equal(n, 0);
    assert_string_equal(s, "");
    free(s);
    assert_true(sa_utf8_valid(U(""), 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequence_lengths),
        cmocka_unit_test(test_valid_and_repair),
        cmocka_unit_test(test_repair_each_byte),
    };
    return tu_run_group_tests("utf8", tests, NULL, NULL);
}
