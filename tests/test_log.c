/*
 * test_log.c - ingest/sa_log.c: one line per message ("<program>[<cluster>]: <level>:
 * <message>", control characters folded, errno kept), the levels (parsed, named, -v and
 * -q, the threshold) and journald's priorities when stderr is the journal's stream.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_log.h"

static void test_log_format(void **state)
{
    tu_capture_t cap;
    char *out;
    (void)state;

    unsetenv("JOURNAL_STREAM");
    sa_log_set_program(NULL);
    sa_log_set_level(SA_LOG_INFO);
    sa_log_set_cluster("narval");
    tu_stderr_capture(&cap);
    errno = EAGAIN;
    sa_log(SA_LOG_ERROR, "job %d: %s", 1234, "bad\nname\twith\x1b[31m controls");
    assert_int_equal(errno, EAGAIN); /* preserved */
    sa_log(SA_LOG_WARN, "a warning");
    sa_log(SA_LOG_INFO, "%s", "info line");
    sa_log(SA_LOG_DEBUG, "not shown at info");
    sa_log_set_cluster(NULL);
    sa_log(SA_LOG_INFO, "no cluster");
    sa_log_set_program("slurm-report");
    sa_log_set_cluster("a\nb");
    sa_log(SA_LOG_WARN, "%s", "");
    out = tu_stderr_end(&cap);
    assert_string_equal(out, "slurm-ingest[narval]: error: job 1234: bad?name?with?[31m controls\n"
                             "slurm-ingest[narval]: warning: a warning\n"
                             "slurm-ingest[narval]: info: info line\n"
                             "slurm-ingest: info: no cluster\n"
                             "slurm-report[a?b]: warning: \n");
    free(out);
    sa_log_set_program(NULL);
    sa_log_set_cluster(NULL);
}

static void test_log_levels(void **state)
{
    sa_log_level_t l = SA_LOG_ERROR;
    tu_capture_t cap;
    char *out;
    (void)state;

    assert_true(sa_log_level_parse("Warning", &l));
    assert_int_equal(l, SA_LOG_WARN);
    assert_true(sa_log_level_parse("warn", &l));
    assert_int_equal(l, SA_LOG_WARN);
    assert_true(sa_log_level_parse("DEBUG", &l));
    assert_int_equal(l, SA_LOG_DEBUG);
    assert_false(sa_log_level_parse("trace", &l));
    assert_false(sa_log_level_parse(NULL, &l));
    assert_int_equal(l, SA_LOG_DEBUG);
    assert_string_equal(sa_log_level_name(SA_LOG_WARN), "warning");
    /* -v / -q */
    assert_int_equal(sa_log_level_adjust(SA_LOG_INFO, 1, 0), SA_LOG_DEBUG);
    assert_int_equal(sa_log_level_adjust(SA_LOG_INFO, 5, 0), SA_LOG_DEBUG);
    assert_int_equal(sa_log_level_adjust(SA_LOG_INFO, 0, 1), SA_LOG_WARN);
    assert_int_equal(sa_log_level_adjust(SA_LOG_INFO, 0, 2), SA_LOG_ERROR);
    assert_int_equal(sa_log_level_adjust(SA_LOG_INFO, 0, 1000), SA_LOG_ERROR);
    assert_int_equal(sa_log_level_adjust(SA_LOG_WARN, 1, 1), SA_LOG_WARN);

    unsetenv("JOURNAL_STREAM");
    tu_stderr_capture(&cap);
    sa_log_set_level(SA_LOG_ERROR);
    assert_false(sa_log_enabled(SA_LOG_WARN));
    sa_log(SA_LOG_WARN, "hidden");
    sa_log(SA_LOG_ERROR, "shown");
    sa_log_set_level(SA_LOG_DEBUG);
    sa_log(SA_LOG_DEBUG, "debug shown");
    sa_log_set_level((sa_log_level_t)99);
    assert_int_equal(sa_log_get_level(), SA_LOG_DEBUG);
    out = tu_stderr_end(&cap);
    assert_string_equal(out, "slurm-ingest: error: shown\nslurm-ingest: debug: debug shown\n");
    free(out);
    sa_log_set_level(SA_LOG_INFO);
}

static void test_log_journal(void **state)
{
    tu_capture_t cap;
    struct stat st;
    char js[64], *out;
    (void)state;

    sa_log_set_level(SA_LOG_DEBUG);
    sa_log_set_cluster("c1");
    tu_stderr_capture(&cap);
    assert_int_equal(fstat(STDERR_FILENO, &st), 0);
    /* JOURNAL_STREAM naming another stream: plain lines */
    snprintf(js, sizeof js, "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino + 1);
    setenv("JOURNAL_STREAM", js, 1);
    assert_false(sa_log_to_journal());
    sa_log(SA_LOG_INFO, "plain");
    setenv("JOURNAL_STREAM", "garbage", 1);
    assert_false(sa_log_to_journal());
    /* naming stderr: priorities */
    snprintf(js, sizeof js, "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    setenv("JOURNAL_STREAM", js, 1);
    assert_true(sa_log_to_journal());
    sa_log(SA_LOG_ERROR, "e");
    sa_log(SA_LOG_WARN, "w");
    sa_log(SA_LOG_INFO, "i");
    sa_log(SA_LOG_DEBUG, "d");
    out = tu_stderr_end(&cap);
    unsetenv("JOURNAL_STREAM");
    assert_string_equal(out, "slurm-ingest[c1]: info: plain\n"
                             "<3>slurm-ingest[c1]: error: e\n"
                             "<4>slurm-ingest[c1]: warning: w\n"
                             "<6>slurm-ingest[c1]: info: i\n"
                             "<7>slurm-ingest[c1]: debug: d\n");
    free(out);
    sa_log_set_cluster(NULL);
    sa_log_set_level(SA_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_format),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_log_journal),
    };
    return tu_run_group_tests("log", tests, NULL, NULL);
}
