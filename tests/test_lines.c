/*
 * test_lines.c - ingest/sa_lines.c: lines of Slurm's text outputs read from a reader
 * (line ends "\n" and "\r\n", a last line without one, lines across reads, the 1 MiB
 * cap). The UTF-8 check and repair: test_utf8.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sa_lines.h"

static void test_line_ends(void **state)
{
    static const char text[] = "a|b\r\nsecond\n\nlast";
    sa_reader_t r;
    sa_lines_t L;
    sa_error_t err;
    (void)state;

    sa_reader_init_mem(&r, text, sizeof text - 1);
    sa_lines_init(&L, &r);
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_string_equal(L.line, "a|b"); /* "\r\n" dropped */
    assert_int_equal(L.line_len, 3);
    assert_int_equal(L.lineno, 1);
    assert_false(L.unterminated);
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_string_equal(L.line, "second");
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_string_equal(L.line, ""); /* an empty line is a line */
    assert_int_equal(L.lineno, 3);
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_string_equal(L.line, "last");
    assert_true(L.unterminated); /* the input may be cut */
    assert_int_equal(sa_lines_next(&L, &err), 0);
    sa_lines_clear(&L);
    sa_lines_clear(NULL);
}

/* Lines longer than a read, and a line over the cap: an error, or cut when asked. */
static void test_long_lines(void **state)
{
    size_t big = SA_LINES_CAP + 10, mid = 3 * SA_LINES_CHUNK + 7;
    char *text = malloc(mid + 1 + big + 1 + 3);
    sa_reader_t r;
    sa_lines_t L;
    sa_error_t err;
    (void)state;

    memset(text, 'm', mid);
    text[mid] = '\n';
    memset(text + mid + 1, 'x', big);
    memcpy(text + mid + 1 + big, "\nok", 3);
    sa_reader_init_mem(&r, text, mid + 1 + big + 3);
    sa_lines_init(&L, &r);
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_int_equal(L.line_len, mid);
    assert_int_equal(sa_lines_next(&L, &err), -1);
    assert_non_null(strstr(err.message, "line 2"));
    sa_lines_clear(&L);

    sa_reader_init_mem(&r, text, mid + 1 + big + 3);
    sa_lines_init(&L, &r);
    L.skip_long = true;
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_int_equal(sa_lines_next(&L, &err), 2);
    assert_true(L.too_long);
    assert_int_equal(L.line_len, SA_LINES_CAP);
    assert_int_equal(sa_lines_next(&L, &err), 1);
    assert_string_equal(L.line, "ok");
    assert_int_equal(L.lineno, 3);
    assert_false(L.too_long);
    sa_lines_clear(&L);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_ends),
        cmocka_unit_test(test_long_lines),
    };
    return tu_run_group_tests("lines", tests, NULL, NULL);
}
