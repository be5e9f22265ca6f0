/*
 * test_samples.c - every real Slurm capture in ../shared/slurm-samples parses, or is
 * rejected for a reason asserted here; and the streaming walker gives the same
 * records whether the input arrives whole or a few bytes at a time. The same for
 * every file of the repository's fixtures/gen/ (tools/gen-cluster, each data_parser
 * version) and fixtures/slurm-22.05/ (real 22.05 output), which run on a fresh clone
 * where ../shared is absent (those sample cases are then skipped, saying why).
 */
#include "testutil.h"
#include "tu_parse.h"

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

/*
 * Parses one file whole and a few bytes at a time: both must succeed with the same
 * records, of kind ka or kb. Fills *whole (the caller clears it).
 */
static void check_file(const char *path, const char *label, const sa_sacct_text_opts_t *topts, sa_kind_t ka,
                       sa_kind_t kb, tu_parsed_t *whole)
{
    tu_parsed_t trickled;
    sa_error_t err;
    size_t len;
    char *data, *a, *b;

    sa_error_clear(&err);
    if (!tu_parse_file(path, topts, whole, &err))
        fail_msg("%s: %s", label, err.message);
    if (whole->kind != ka && whole->kind != kb)
        fail_msg("%s: parsed as %s", label, sa_kind_name(whole->kind));
    if (whole->njobs + whole->nnodes == 0)
        fail_msg("%s: no records", label);
    data = tu_read_file(path, &len);
    if (!parse_trickle(data, len, topts, &trickled, &err))
        fail_msg("%s (7-byte reads): %s", label, err.message);
    a = tu_parsed_dump(whole);
    b = tu_parsed_dump(&trickled);
    if (strcmp(a, b) != 0)
        fail_msg("%s: records differ between whole and 7-byte reads", label);
    free(a);
    free(b);
    free(data);
    tu_parsed_clear(&trickled);
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
        tu_parsed_t whole;
        sa_error_t err;
        sa_kind_t ka, kb;

        if (names[i]->d_name[0] == '.') {
            free(names[i]);
            continue;
        }
        snprintf(rel, sizeof rel, "%s/%s", dir, names[i]->d_name);
        free(names[i]);
        (*files)++;
        topts.fields = tu_sample_fields(rel);
        want_error = expected_error(rel);
        if (want_error) {
            sa_error_clear(&err);
            if (tu_parse_file(tu_sample(rel), &topts, &whole, &err))
                fail_msg("%s: expected rejection (%s), but it parsed", rel, want_error);
            if (!strstr(err.message, want_error))
                fail_msg("%s: expected error containing '%s', got '%s'", rel, want_error, err.message);
            tu_parsed_clear(&whole);
            continue;
        }
        expected_kinds(dir, &ka, &kb);
        check_file(tu_sample(rel), rel, &topts, ka, kb, &whole);
        printf("  %-95s %4zu jobs %4zu nodes\n", rel, whole.njobs, whole.nnodes);
        tu_parsed_clear(&whole);
    }
    free(names);
}

static void test_every_sample(void **state)
{
    static const char *dirs[] = {"squeue", "sinfo", "sacct-json", "sacct-parsable", "other"};
    int files = 0;
    (void)state;
    tu_require_samples();
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
    tu_require_samples();
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

/* ---- the repository's own fixtures (they run on a fresh clone) --------------------------- */

/* The kind a file of fixtures/gen/<version>/ must parse as. */
static sa_kind_t gen_kind(const char *file, int vn)
{
    if (strcmp(file, "squeue.json") == 0)
        return SA_KIND_SQUEUE_JSON;
    if (strcmp(file, "sacct.json") == 0)
        return SA_KIND_SACCT_JSON;
    if (strcmp(file, "scontrol-nodes.json") == 0)
        return SA_KIND_NODES_JSON;
    if (strncmp(file, "sinfo", 5) == 0)
        return vn <= 38 ? SA_KIND_NODES_JSON : SA_KIND_SINFO_JSON;
    if (strcmp(file, "scontrol-nodes-o.txt") == 0)
        return SA_KIND_SCONTROL_NODES_TEXT;
    if (strncmp(file, "sacct-", 6) == 0)
        return SA_KIND_SACCT_TEXT;
    return SA_KIND_UNKNOWN;
}

/* The kind of a capture of fixtures/slurm-22.05/ (by its name), or UNKNOWN for the notes beside them. */
static sa_kind_t capture_kind(const char *file)
{
    size_t len = strlen(file);
    if (strncmp(file, "squeue-", 7) == 0)
        return SA_KIND_SQUEUE_JSON;
    if (strncmp(file, "sinfo-", 6) == 0 || strncmp(file, "scontrol-nodes-", 15) == 0) {
        if (len > 5 && strcmp(file + len - 5, ".json") == 0)
            return SA_KIND_NODES_JSON;
        return SA_KIND_SCONTROL_NODES_TEXT;
    }
    if (strncmp(file, "sacct-", 6) == 0)
        return len > 5 && strcmp(file + len - 5, ".json") == 0 ? SA_KIND_SACCT_JSON : SA_KIND_SACCT_TEXT;
    return SA_KIND_UNKNOWN;
}

/* Every file of fixtures/gen/ (each data_parser version) and fixtures/slurm-22.05/ (real 22.05 output)
 * parses whole and a few bytes at a time to the same records, with manifest.json's counts. */
static void test_every_fixture(void **state)
{
    int files = 0;
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        char dir[512];
        struct dirent **names;
        int n;

        snprintf(dir, sizeof dir, "gen/%s", *v);
        n = scandir(tu_fixture(dir), &names, NULL, alphasort);
        if (n < 0)
            fail_msg("cannot read %s", tu_fixture(dir));
        for (int i = 0; i < n; i++) {
            const char *file = names[i]->d_name;
            sa_kind_t k = gen_kind(file, tu_gen_vn(*v));
            sa_sacct_text_opts_t topts = {0};
            char rel[768], path[4096];
            int64_t want_jobs, want_nodes;
            tu_parsed_t whole;

            if (k == SA_KIND_UNKNOWN) {
                free(names[i]);
                continue;
            }
            snprintf(rel, sizeof rel, "%s/%s", dir, file);
            snprintf(path, sizeof path, "%s", tu_fixture(rel));
            topts.fields = tu_gen_fields(*v, file);
            check_file(path, rel, &topts, k, k, &whole);
            want_jobs = tu_gen_count(*v, file, "jobs");
            want_nodes = tu_gen_count(*v, file, "nodes");
            if ((want_jobs >= 0 && (int64_t)whole.njobs != want_jobs) ||
                (want_nodes >= 0 && (int64_t)whole.nnodes != want_nodes))
                fail_msg("%s: %zu jobs %zu nodes, manifest.json says %lld %lld", rel, whole.njobs, whole.nnodes,
                         (long long)want_jobs, (long long)want_nodes);
            printf("  %-40s %4zu jobs %4zu nodes\n", rel, whole.njobs, whole.nnodes);
            free((char *)topts.fields);
            tu_parsed_clear(&whole);
            free(names[i]);
            files++;
        }
        free(names);
    }
    {
        struct dirent **names;
        int n = scandir(tu_fixture("slurm-22.05"), &names, NULL, alphasort);
        if (n < 0)
            fail_msg("cannot read %s", tu_fixture("slurm-22.05"));
        for (int i = 0; i < n; i++) {
            const char *file = names[i]->d_name;
            sa_kind_t k = capture_kind(file);
            sa_sacct_text_opts_t topts = {0};
            char rel[768], path[4096];
            tu_parsed_t whole;

            if (k != SA_KIND_UNKNOWN) {
                snprintf(rel, sizeof rel, "slurm-22.05/%s", file);
                snprintf(path, sizeof path, "%s", tu_fixture(rel));
                if (strcmp(file, "sacct-P-n.txt") == 0)
                    topts.fields = "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason";
                check_file(path, rel, &topts, k, k, &whole);
                printf("  %-40s %4zu jobs %4zu nodes\n", rel, whole.njobs, whole.nnodes);
                tu_parsed_clear(&whole);
                files++;
            }
            free(names[i]);
        }
        free(names);
    }
    /* 8 versions x 9 files (sinfo.json from v0.0.39) + the 22.05 captures */
    assert_true(files >= 8 * 8 + 6 + 15);
}

/* meta says the version and release each fixture was made for. */
static void test_fixture_meta(void **state)
{
    static const char *const release[] = {"21.08.8", "22.05.8", "23.02.7", "23.11.10",
                                          "24.05.8", "24.11.6", "25.05.4", "25.11.0"};
    static const char *const files[] = {"squeue.json", "sacct.json", "sinfo-N.json", "scontrol-nodes.json"};
    (void)state;
    for (size_t i = 0; tu_gen_versions[i]; i++) {
        for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
            tu_parsed_t p;
            tu_parse_gen(tu_gen_versions[i], files[f], &p);
            if (!p.meta.data_parser || strcmp(p.meta.data_parser, tu_gen_versions[i]) != 0 || !p.meta.slurm_release ||
                strcmp(p.meta.slurm_release, release[i]) != 0)
                fail_msg("%s/%s: meta says %s %s", tu_gen_versions[i], files[f], p.meta.data_parser,
                         p.meta.slurm_release);
            if (tu_gen_vn(tu_gen_versions[i]) >= 40)
                assert_string_equal(p.meta.cluster, "synth");
            tu_parsed_clear(&p);
        }
    }
    {
        tu_parsed_t p;
        tu_parse_fixture("slurm-22.05/squeue-A.json", &p);
        assert_string_equal(p.meta.slurm_release, "22.05.8");
        assert_string_equal(p.meta.data_parser, "v0.0.38");
        tu_parsed_clear(&p);
        tu_parse_fixture("slurm-22.05/sacct-D.json", &p);
        assert_string_equal(p.meta.data_parser, "v0.0.38"); /* openapi/dbv0.0.38 */
        tu_parsed_clear(&p);
    }
}

/* The scenario's ids in testutil.h are those every manifest.json names. */
static void test_fixture_scenario_ids(void **state)
{
    static const struct {
        const char *name;
        int id;
    } ids[] = {
        {"ok", TU_J_OK}, {"train", TU_J_TRAIN}, {"mig-small", TU_J_MIG}, {"llm", TU_J_LLM},
        {"pertask", TU_J_PERTASK}, {"drainee", TU_J_DRAINEE}, {"fail3", TU_J_FAIL3}, {"sigkill", TU_J_SIGKILL},
        {"timeout", TU_J_TIMEOUT}, {"cancelled", TU_J_CANCELLED}, {"cancel-pending", TU_J_CANCEL_PENDING},
        {"oom", TU_J_OOM}, {"nodefail", TU_J_NODEFAIL}, {"completed", TU_J_COMPLETED}, {"epilog", TU_J_EPILOG},
        {"queued", TU_J_QUEUED}, {"big", TU_J_BIG}, {"dep", TU_J_DEP}, {"held", TU_J_HELD}, {"later", TU_J_LATER},
        {"qos-limit", TU_J_QOS_LIMIT}, {"multi-part", TU_J_MULTI_PART}, {"unavail", TU_J_UNAVAIL},
        {"requeued", TU_J_REQUEUED}, {"requeued-run", TU_J_REQUEUED_RUN}, {"requeued-done", TU_J_REQUEUED_DONE},
        {"booting", TU_J_BOOTING}, {"forever", TU_J_FOREVER}, {"paused", TU_J_PAUSED}, {"sweep", TU_J_SWEEP},
        {"small-array", TU_J_SMALL_ARRAY}, {"het-run", TU_J_HET_RUN}, {"het-wait", TU_J_HET_WAIT},
        {"hostile-name", TU_J_HOSTILE}, {"legacy-gpu", TU_J_LEGACY_GPU}, {"two-types", TU_J_TWO_TYPES},
    };
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        char rel[256];
        json_error_t jerr;
        json_t *m, *sc;

        snprintf(rel, sizeof rel, "gen/%s/manifest.json", *v);
        m = json_load_file(tu_fixture(rel), 0, &jerr);
        if (!m)
            fail_msg("%s: %s", rel, jerr.text);
        sc = json_object_get(m, "scenario_jobs");
        assert_int_equal(json_object_size(sc), sizeof ids / sizeof ids[0]);
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            json_t *id = json_object_get(sc, ids[i].name);
            if (!json_is_integer(id) || json_integer_value(id) != ids[i].id)
                fail_msg("%s: scenario job %s is not %d", rel, ids[i].name, ids[i].id);
        }
        assert_true(json_integer_value(json_object_get(m, "nodes")) == 24);
        json_decref(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_sample),
        cmocka_unit_test(test_meta_versions),
        cmocka_unit_test(test_every_fixture),
        cmocka_unit_test(test_fixture_meta),
        cmocka_unit_test(test_fixture_scenario_ids),
    };
    return tu_run_group_tests("samples", tests, NULL, NULL);
}
