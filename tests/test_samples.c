/*
 * test_samples.c - every real Slurm capture in ../shared/slurm-samples parses, or is
 * rejected for a reason asserted here; and the streaming walker gives the same
 * records whether the input arrives whole or a few bytes at a time.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Files that are not Slurm's own formats, with the error they must get. */
static const struct {
    const char *rel;
    const char *error;
} rejected[] = {
    /* an exporter's own `squeue --Format` template printing JSON lines */
    {"other/squeue-custom-json-format_rivos.txt", "not Slurm JSON output"},
    /* the same exporter's `sinfo --Format` template */
    {"other/sinfo-custom-json-format_rivos.txt", "not Slurm JSON output"},
};

static const char *expected_error(const char *rel)
{
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
        if (strcmp(rejected[i].rel, rel) == 0)
            return rejected[i].error;
    }
    return NULL;
}

/* The kind a directory's files must parse as (either of two). */
static void expected_kinds(const char *dir, sa_kind_t *a, sa_kind_t *b)
{
    *a = *b = SA_KIND_UNKNOWN;
    if (strcmp(dir, "squeue") == 0)
        *a = *b = SA_KIND_SQUEUE_JSON;
    else if (strcmp(dir, "sacct-json") == 0)
        *a = *b = SA_KIND_SACCT_JSON;
    else if (strcmp(dir, "sinfo") == 0) {
        *a = SA_KIND_NODES_JSON;
        *b = SA_KIND_SINFO_JSON;
    } else if (strcmp(dir, "sacct-parsable") == 0)
        *a = *b = SA_KIND_SACCT_TEXT;
    else if (strcmp(dir, "other") == 0)
        *a = *b = SA_KIND_SCONTROL_NODES_TEXT;
}

/*
 * A reader that hands out a few bytes per call, to cut tokens everywhere: 7 bytes
 * for small files; 1021 for large ones (each cut makes the walker decode the current
 * record again, so 7-byte reads of a 300 KB file would take minutes under ASan).
 */
static ssize_t trickle_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    size_t n = r->mem_len - r->mem_pos, chunk = r->mem_len < 65536 ? 7 : 1021;
    (void)error;
    if (n > chunk)
        n = chunk;
    if (n > cap)
        n = cap;
    memcpy(buf, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return (ssize_t)n;
}

/* Parses data through the public API, handed over a few bytes at a time. */
static bool parse_trickle(const char *data, size_t len, const sa_sacct_text_opts_t *topts, tu_parsed_t *out,
                          sa_error_t *error)
{
    sa_reader_t r;
    sa_reader_init_mem(&r, data, len);
    r.read = trickle_read;
    return tu_parse_reader(&r, topts, out, error);
}

static void check_dir(const char *dir, int *files)
{
    char path[4096];
    struct dirent **names;
    int n;

    snprintf(path, sizeof path, "%s/%s", tu_samples_dir(), dir);
    n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        fail_msg("cannot read the samples directory %s (set SLURM_SAMPLES_DIR)", path);
        return;
    }
    for (int i = 0; i < n; i++) {
        char rel[1024];
        const char *want_error;
        sa_sacct_text_opts_t topts = {0};
        tu_parsed_t whole, trickled;
        sa_error_t err;
        sa_kind_t ka, kb;
        size_t len;
        char *data, *a, *b;
        bool ok;

        if (names[i]->d_name[0] == '.') {
            free(names[i]);
            continue;
        }
        snprintf(rel, sizeof rel, "%s/%s", dir, names[i]->d_name);
        free(names[i]);
        (*files)++;
        topts.fields = tu_sample_fields(rel);
        want_error = expected_error(rel);
        sa_error_clear(&err);
        ok = tu_parse_file(tu_sample(rel), &topts, &whole, &err);
        if (want_error) {
            if (ok)
                fail_msg("%s: expected rejection (%s), but it parsed", rel, want_error);
            if (!strstr(err.message, want_error))
                fail_msg("%s: expected error containing '%s', got '%s'", rel, want_error, err.message);
            tu_parsed_clear(&whole);
            continue;
        }
        if (!ok)
            fail_msg("%s: %s", rel, err.message);
        expected_kinds(dir, &ka, &kb);
        if (whole.kind != ka && whole.kind != kb)
            fail_msg("%s: parsed as %s", rel, sa_kind_name(whole.kind));
        if (whole.njobs + whole.nnodes == 0)
            fail_msg("%s: no records", rel);

        data = tu_read_file(tu_sample(rel), &len);
        ok = parse_trickle(data, len, &topts, &trickled, &err);
        if (!ok)
            fail_msg("%s (7-byte reads): %s", rel, err.message);
        a = tu_parsed_dump(&whole);
        b = tu_parsed_dump(&trickled);
        if (strcmp(a, b) != 0)
            fail_msg("%s: records differ between whole and 7-byte reads", rel);
        printf("  %-95s %4zu jobs %4zu nodes\n", rel, whole.njobs, whole.nnodes);
        free(a);
        free(b);
        free(data);
        tu_parsed_clear(&whole);
        tu_parsed_clear(&trickled);
    }
    free(names);
}

static void test_every_sample(void **state)
{
    static const char *dirs[] = {"squeue", "sinfo", "sacct-json", "sacct-parsable", "other"};
    int files = 0;
    (void)state;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        check_dir(dirs[i], &files);
    /* the samples tree had 67 captures when this was written; fewer means a path problem */
    assert_true(files >= 60);
}

/* meta is read wherever it stands: restd v0.0.40 puts it after "jobs". */
static void test_meta_versions(void **state)
{
    static const struct {
        const char *rel, *release, *parser;
    } cases[] = {
        {"squeue/local-cli-v0038_22.05.8_B-gpu-running-gres-detail.json", "22.05.8", "v0.0.38"},
        {"sinfo/dp-v0039_23.02.4_rivos_allocated-drain.json", "23.02.4", "v0.0.39"},
        {"squeue/restd-jobs-v0039_23.02.8_slurmweb_30jobs-pending-priority.json", "23.02.8", "v0.0.39"},
        {"sacct-json/local-cli-dbv0038_22.05.8_D-final-requeued-het-steps-exitcode-bug.json", "22.05.8",
         "v0.0.38"},
        {"sinfo/cli-scontrol-show-node-json-v0044_25.11.0_charmed-hpc_down-dynamic-norm.json", "25.11.0",
         "v0.0.44"},
        {"squeue/restd-job-v0041-on-25.11.0_slurmweb_timeout.json", "25.11.0", "v0.0.41"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_parsed_t p;
        sa_error_t err;
        assert_true(tu_parse_file(tu_sample(cases[i].rel), NULL, &p, &err));
        assert_non_null(p.meta.slurm_release);
        assert_string_equal(p.meta.slurm_release, cases[i].release);
        assert_non_null(p.meta.data_parser);
        assert_string_equal(p.meta.data_parser, cases[i].parser);
        tu_parsed_clear(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_sample),
        cmocka_unit_test(test_meta_versions),
    };
    return cmocka_run_group_tests_name("samples", tests, NULL, NULL);
}
