/*
 * test_prom.c - report/sa_prom.c: samples added (and merged) and written as the
 * Prometheus text exposition: HELP and TYPE once per metric, in the table's order,
 * label values escaped, integers without a fraction. No server.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_prom.h"

/* The text p writes (caller frees). */
static char *written(const sa_prom_t *p)
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    assert_non_null(m);
    assert_true(sa_prom_write(p, m));
    assert_int_equal(fclose(m), 0);
    return s;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (size_t i = 0; text[i]; i++)
        n += strncmp(text + i, needle, len) == 0;
    return n;
}

static void test_merge_and_write(void **state)
{
    sa_prom_t *p = sa_prom_new();
    char *text;
    (void)state;

    assert_non_null(p);
    /* merged: 3 + 4 RUNNING jobs of demo are one sample of 7 */
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 3, true, "cluster", "demo", "state", "RUNNING", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 4, true, "cluster", "demo", "state", "RUNNING", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 2, true, "cluster", "demo", "state", "PENDING", NULL));
    /* not merged: a second sample with the same labels */
    assert_true(sa_prom_add(p, "slurm_archive_job_gpus", 1.5, false, "cluster", "demo", "state", "RUNNING", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_job_gpus", 2, false, "cluster", "demo", "state", "RUNNING", NULL));
    /* an unknown metric is refused (a bug) */
    assert_false(sa_prom_add(p, "slurm_archive_nonsense", 1, true, "cluster", "demo", NULL));
    text = written(p);
    assert_non_null(strstr(text, "slurm_archive_jobs{cluster=\"demo\",state=\"RUNNING\"} 7\n"));
    assert_non_null(strstr(text, "slurm_archive_jobs{cluster=\"demo\",state=\"PENDING\"} 2\n"));
    assert_non_null(strstr(text, "slurm_archive_job_gpus{cluster=\"demo\",state=\"RUNNING\"} 1.5\n"));
    assert_non_null(strstr(text, "slurm_archive_job_gpus{cluster=\"demo\",state=\"RUNNING\"} 2\n"));
    assert_null(strstr(text, "nonsense"));
    /* HELP and TYPE once per metric with samples, the table's order (jobs before job_gpus) */
    assert_int_equal(count(text, "# HELP slurm_archive_jobs "), 1);
    assert_int_equal(count(text, "# TYPE slurm_archive_jobs gauge\n"), 1);
    assert_int_equal(count(text, "# TYPE slurm_archive_job_gpus gauge\n"), 1);
    assert_int_equal(count(text, "# HELP"), 2); /* metrics without samples are not written */
    assert_true(strstr(text, "# HELP slurm_archive_jobs ") < strstr(text, "# HELP slurm_archive_job_gpus "));
    /* samples follow their own TYPE line */
    assert_true(strstr(text, "# TYPE slurm_archive_jobs gauge") < strstr(text, "slurm_archive_jobs{"));
    free(text);
    sa_prom_free(p);
    sa_prom_free(NULL);
}

/* A label value with a quote, a backslash and a newline is escaped as the format says. */
static void test_label_escaping(void **state)
{
    sa_prom_t *p = sa_prom_new();
    char *text;
    (void)state;

    assert_true(sa_prom_add(p, "slurm_archive_jobs", 1, true, "cluster", "de\"mo\\x\ny", "state", NULL, NULL));
    text = written(p);
    assert_non_null(strstr(text, "slurm_archive_jobs{cluster=\"de\\\"mo\\\\x\\ny\",state=\"\"} 1\n"));
    free(text);
    sa_prom_free(p);
}

typedef struct {
    char *cluster[4], *state[4];
    double value[4];
    size_t n;
} seen_t;

static bool on_seen(const char *labels, double value, void *vctx)
{
    seen_t *s = vctx;
    assert_true(s->n < 4);
    assert_true(sa_prom_label(labels, "cluster", &s->cluster[s->n]));
    assert_true(sa_prom_label(labels, "state", &s->state[s->n]));
    s->value[s->n++] = value;
    return true;
}

/* Samples read back (sa_prom_each) with their labels unescaped (sa_prom_label), in the order added. */
static void test_each_and_label(void **state)
{
    sa_prom_t *p = sa_prom_new();
    seen_t s = {{0}, {0}, {0}, 0};
    char *v;
    (void)state;

    assert_true(sa_prom_add(p, "slurm_archive_jobs", 1, true, "cluster", "de\"mo\\x\ny,state=\"z\"", "state",
                            "RUNNING", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 2.5, true, "cluster", "b", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_nodes", 9, true, "cluster", "b", NULL));
    assert_true(sa_prom_each(p, "slurm_archive_jobs", on_seen, &s));
    assert_int_equal(s.n, 2);
    assert_string_equal(s.cluster[0], "de\"mo\\x\ny,state=\"z\"");
    assert_string_equal(s.state[0], "RUNNING");
    assert_true(s.value[0] == 1);
    assert_string_equal(s.cluster[1], "b");
    assert_null(s.state[1]); /* no such label */
    assert_true(s.value[1] == 2.5);
    for (size_t i = 0; i < s.n; i++) {
        free(s.cluster[i]);
        free(s.state[i]);
    }
    /* a metric without samples, an unknown one: no call */
    assert_true(sa_prom_each(p, "slurm_archive_cpus", on_seen, &s) && sa_prom_each(p, "nonsense", on_seen, &s));
    assert_int_equal(s.n, 2);
    assert_true(sa_prom_label("", "cluster", &v));
    assert_null(v);
    sa_prom_free(p);
}

/* Whole numbers without a fraction (even large ones), others with 9 significant digits. */
static void test_numbers(void **state)
{
    sa_prom_t *p = sa_prom_new();
    char *text;
    (void)state;

    assert_true(sa_prom_add(p, "slurm_archive_jobs", 1234567890123.0, false, "cluster", "a", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 1.0 / 3, false, "cluster", "b", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", -2, false, "cluster", "c", NULL));
    assert_true(sa_prom_add(p, "slurm_archive_jobs", 0, false, "cluster", "d", NULL));
    text = written(p);
    assert_non_null(strstr(text, "{cluster=\"a\"} 1234567890123\n"));
    assert_non_null(strstr(text, "{cluster=\"b\"} 0.333333333\n"));
    assert_non_null(strstr(text, "{cluster=\"c\"} -2\n"));
    assert_non_null(strstr(text, "{cluster=\"d\"} 0\n"));
    free(text);
    sa_prom_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_and_write),
        cmocka_unit_test(test_label_escaping),
        cmocka_unit_test(test_each_and_label),
        cmocka_unit_test(test_numbers),
    };
    return tu_run_group_tests("prom", tests, NULL, NULL);
}
