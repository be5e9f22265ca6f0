/*
 * test_error.c - schema/core/sa_error.c, the one error type: a message is one line of
 * well-formed UTF-8 whatever went into it (newlines, control characters, Latin-1, a
 * sequence cut short), prefixes stay one line, a NULL error is allowed everywhere, text
 * quoted into a message is cut with "..."; out of memory where it cannot be handed back
 * ends the program with one line and exit 1 (run as a child: `test_error --child oom`).
 */
#include "testutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_utf8.h"

/* The message is one line of well-formed UTF-8. */
static void assert_one_line(const sa_error_t *e)
{
    size_t n = strlen(e->message);
    assert_true(sa_utf8_valid((const unsigned char *)e->message, n));
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)e->message[i] < 0x20 || e->message[i] == 0x7f)
            fail_msg("control character at %zu of \"%s\"", i, e->message);
    }
}

static void test_set_and_clear(void **state)
{
    sa_error_t e;
    (void)state;

    sa_error_set(&e, SA_ERR_INPUT, 22, "%s:%d: bad %s", "x.json", 3, "value");
    assert_int_equal(e.domain, SA_ERR_INPUT);
    assert_int_equal(e.code, 22);
    assert_string_equal(e.message, "x.json:3: bad value");
    sa_error_clear(&e);
    assert_int_equal(e.domain, SA_ERR_NONE);
    assert_int_equal(e.code, 0);
    assert_string_equal(e.message, "");
    /* a NULL error is allowed: nothing to fill */
    sa_error_set(NULL, SA_ERR_IO, 0, "ignored");
    sa_error_prefix(NULL, "ignored");
    sa_error_clear(NULL);
    assert_false(sa_error_nomem(NULL));
    assert_false(sa_error_nomem(&e));
    assert_int_equal(e.domain, SA_ERR_NOMEM);
    assert_int_equal(e.code, ENOMEM);
    assert_string_equal(e.message, "out of memory");
}

/* Newlines, tabs, escape, DEL, Latin-1 and a cut sequence become '?'; valid UTF-8 stays. */
static void test_one_line(void **state)
{
    sa_error_t e;
    (void)state;

    sa_error_set(&e, SA_ERR_INPUT, 0, "job '%s'", "evil\nname\t\x1b[31m\x7f");
    assert_string_equal(e.message, "job 'evil?name??[31m?'");
    assert_one_line(&e);
    sa_error_set(&e, SA_ERR_USAGE, 0, "%s", "caf\xe9 na\xc3\xafve \xe2\x98");
    assert_string_equal(e.message, "caf? na\xc3\xafve ??");
    assert_one_line(&e);
    sa_error_prefix(&e, "file\n%s", "a.conf");
    assert_string_equal(e.message, "file?a.conf: caf? na\xc3\xafve ??");
    assert_one_line(&e);
}

/* A long message is cut to the buffer; a long prefix and message stay within it, one line. */
static void test_long_messages(void **state)
{
    sa_error_t e;
    char big[2000];
    (void)state;

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sa_error_set(&e, SA_ERR_INPUT, 0, "%s", big);
    assert_int_equal(strlen(e.message), sizeof e.message - 1);
    sa_error_prefix(&e, "%s", big);
    assert_true(strlen(e.message) < sizeof e.message);
    assert_non_null(strstr(e.message, "x: x"));
    assert_one_line(&e);
    /* a UTF-8 sequence cut by the buffer's end is folded, not left half */
    memset(big, 'y', sizeof e.message - 2);
    memcpy(big + sizeof e.message - 2, "\xe2\x98\x83", 4);
    sa_error_set(&e, SA_ERR_INPUT, 0, "%s", big);
    assert_one_line(&e);
}

/* Text quoted into a message: at most max bytes, cut with "...", folded, never past the buffer. */
static void test_quote(void **state)
{
    char out[16];
    (void)state;

    assert_string_equal(sa_error_quote("short", 10, out, sizeof out), "short");
    assert_string_equal(sa_error_quote("a longer text", 5, out, sizeof out), "a lon...");
    assert_string_equal(sa_error_quote("line\nbreak", 20, out, sizeof out), "line?break");
    assert_string_equal(sa_error_quote("0123456789abcdefghij", 100, out, sizeof out), "0123456789ab...");
    assert_string_equal(sa_error_quote(NULL, 10, out, sizeof out), "(null)");
    assert_string_equal(sa_error_quote("caf\xc3\xa9", 4, out, sizeof out), "caf?..."); /* é cut in half */
    assert_string_equal(sa_error_quote("x", 1, out, 0), "");
}

/* The child: allocators installed, jansson allocates through them; then an allocation that cannot be made. */
static int child_oom(void)
{
    json_t *s;
    sa_error_install_allocators("test_error");
    s = json_string("still fine");
    if (!s || strcmp(json_string_value(s), "still fine") != 0)
        return 3;
    json_decref(s);
    free(sa_xmalloc(16));
    sa_xmalloc(SIZE_MAX / 2); /* exits */
    return 4;
}

/* Out of memory where nothing can be handed back: "<program>: out of memory", exit 1. */
static void test_out_of_memory_exits(void **state)
{
    char *argv[] = {"/proc/self/exe", "--child", "oom", NULL};
    char *env[] = {"ASAN_OPTIONS=allocator_may_return_null=1", NULL};
    char *out = NULL, *err = NULL;
    (void)state;

    assert_int_equal(tu_run(argv, env, &out, &err), 1);
    if (strncmp(err, "==", 2) == 0 && strchr(err, '\n')) /* AddressSanitizer's own warning of the size */
        memmove(err, strchr(err, '\n') + 1, strlen(strchr(err, '\n') + 1) + 1);
    assert_string_equal(err, "test_error: out of memory\n");
    assert_string_equal(out, "");
    free(out);
    free(err);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_and_clear), cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_long_messages), cmocka_unit_test(test_quote),
        cmocka_unit_test(test_out_of_memory_exits),
    };

    if (argc == 3 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "oom") == 0)
        return child_oom();
    return tu_run_group_tests("error", tests, NULL, NULL);
}
