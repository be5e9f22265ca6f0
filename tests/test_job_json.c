/*
 * test_job_json.c - squeue --json and sacct --json job records, every version
 * (ingest/parse_job_json.c), through the full streaming parser (tu_parse_file).
 * Expected values are read from the samples in shared/slurm-samples/ (skipped, saying
 * why, where they are absent) and, for the same cases, from the repository's fixtures:
 * fixtures/gen/<version>/ (tools/gen-cluster, every version) and fixtures/slurm-22.05/
 * (real 22.05 output of the project's test cluster).
 */
#include "testutil.h"
#include "tu_parse.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_json.h"
#include "sa_slurmtext.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Parses a sample (relative to the samples dir), failing the test with the message. */
static void parse_sample(const char *rel, tu_parsed_t *p)
{
    sa_error_t err;
    bool ok;

    tu_require_samples();
    sa_error_clear(&err);
    ok = tu_parse_file(tu_sample(rel), NULL, p, &err);
    if (!ok)
        print_error("%s: %s\n", rel, err.message);
    assert_true(ok);
}

/* The job with raw id (nth record of that id), failing the test when absent. */
static sa_job_t *job_n(tu_parsed_t *p, int64_t id, size_t nth)
{
    sa_job_t *j = tu_find_job_n(p, id, nth);
    if (!j)
        print_error("job %lld (#%zu) not found\n", (long long)id, nth);
    assert_non_null(j);
    return j;
}

static sa_job_t *job(tu_parsed_t *p, int64_t id)
{
    return job_n(p, id, 0);
}

/* String member of job->extra, or NULL. */
static const char *extra_str(const sa_job_t *j, const char *key)
{
    json_t *v = j->extra ? json_object_get(j->extra, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Integer member of job->extra, or SA_UNSET. */
static int64_t extra_int(const sa_job_t *j, const char *key)
{
    json_t *v = j->extra ? json_object_get(j->extra, key) : NULL;
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : SA_UNSET;
}

/* Parses a document from a string; returns the parse result, error in *err. */
static bool parse_text(const char *text, tu_parsed_t *p, sa_error_t *err)
{
    sa_error_clear(err);
    return tu_parse_mem(text, strlen(text), NULL, p, err);
}

/* Expects a parse of text to fail with a message containing every needle. */
static void expect_fail(const char *text, const char *needle1, const char *needle2)
{
    tu_parsed_t p;
    sa_error_t err;
    bool ok = parse_text(text, &p, &err);

    tu_parsed_clear(&p);
    if (ok)
        print_error("unexpected success: %s\n", text);
    assert_false(ok);
    if (needle1 && !strstr(err.message, needle1))
        print_error("message \"%s\" lacks \"%s\"\n", err.message, needle1);
    assert_non_null(strstr(err.message, needle1));
    if (needle2) {
        if (!strstr(err.message, needle2))
            print_error("message \"%s\" lacks \"%s\"\n", err.message, needle2);
        assert_non_null(strstr(err.message, needle2));
    }
    assert_null(strchr(err.message, '\n'));
}

/* Converts one element directly (no streaming parser) for the state / kind cases. */
static sa_job_t *convert(const char *elem_text, sa_error_t *err)
{
    json_error_t jerr;
    json_t *elem = json_loads(elem_text, 0, &jerr);
    sa_kind_t k;
    sa_job_t *j;
    bool ok;

    assert_non_null(elem);
    k = sa_job_json_kind(elem);
    assert_true(k == SA_KIND_SQUEUE_JSON || k == SA_KIND_SACCT_JSON);
    j = sa_job_new(k == SA_KIND_SQUEUE_JSON ? SA_SRC_SQUEUE : SA_SRC_SACCT_JSON);
    assert_non_null(j);
    sa_error_clear(err);
    ok = k == SA_KIND_SQUEUE_JSON ? sa_job_from_squeue_json(elem, j, err) : sa_job_from_sacct_json(elem, j, err);
    json_decref(elem);
    if (!ok) {
        sa_job_destroy(j);
        return NULL;
    }
    return j;
}

/* What every job of a document of kind want must have. */
static void check_basics(tu_parsed_t *p, sa_kind_t want)
{
    assert_int_equal(p->kind, want);
    assert_true(p->njobs > 0);
    for (size_t i = 0; i < p->njobs; i++) {
        sa_job_t *j = p->jobs[i];
        json_t *dump;
        assert_true(j->job_id > 0);
        assert_non_null(j->job_id_display);
        assert_non_null(j->state.base);
        assert_true(j->submit != SA_UNSET);
        assert_true(j->time_limit != SA_UNSET);
        assert_int_equal(j->source, want == SA_KIND_SQUEUE_JSON ? SA_SRC_SQUEUE : SA_SRC_SACCT_JSON);
        if (want == SA_KIND_SQUEUE_JSON) {
            /* job_resources is dropped on purpose; nothing modelled leaks into extra */
            assert_null(json_object_get(j->extra, "job_resources"));
            assert_null(json_object_get(j->extra, "job_state"));
            if (strcmp(j->state.base, "PENDING") == 0)
                assert_true(j->start == SA_UNSET && j->end == SA_UNSET);
        }
        dump = sa_job_to_json(j);
        assert_non_null(dump);
        json_decref(dump);
    }
}

/* Parses every *.json file of a samples subdirectory; checks the basics of each job. */
static void parse_all_in(const char *sub, sa_kind_t want, size_t *nfiles)
{
    char dirpath[4096];
    DIR *d;
    struct dirent *de;

    tu_require_samples();
    snprintf(dirpath, sizeof dirpath, "%s/%s", tu_samples_dir(), sub);
    d = opendir(dirpath);
    assert_non_null(d);
    *nfiles = 0;
    while ((de = readdir(d))) {
        char rel[1024];
        tu_parsed_t p;
        size_t len = strlen(de->d_name);

        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        snprintf(rel, sizeof rel, "%s/%s", sub, de->d_name);
        parse_sample(rel, &p);
        if (p.kind != want)
            print_error("%s: kind %s\n", rel, sa_kind_name(p.kind));
        check_basics(&p, want);
        tu_parsed_clear(&p);
        (*nfiles)++;
    }
    closedir(d);
}

/* ---- every sample --------------------------------------------------------------- */

static void test_all_squeue_samples(void **state)
{
    size_t n;
    (void)state;
    parse_all_in("squeue", SA_KIND_SQUEUE_JSON, &n);
    assert_true(n >= 19);
}

static void test_all_sacct_samples(void **state)
{
    size_t n;
    (void)state;
    parse_all_in("sacct-json", SA_KIND_SACCT_JSON, &n);
    assert_true(n >= 17);
}

/* ---- squeue v0.0.37 (and the hand-merged v0.0.39 record) ---------------------------- */

static void test_squeue_v0037_handmerged(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/openapi-v0037_21.08.5_rivos_HANDMERGED-2nd-job-v0039-pending-array.json", &p);
    assert_int_equal(p.njobs, 2);

    /* genuine v0.0.37: plain ints, array_task_id null */
    j = job(&p, 26515966);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_string_equal(j->reason, "None");
    assert_string_equal(j->job_id_display, "26515966");
    assert_true(j->array_job_id == SA_UNSET && j->array_task_id == SA_UNSET);
    assert_true(j->het_job_id == SA_UNSET && j->het_job_offset == SA_UNSET);
    assert_int_equal(j->submit, 1684114900);
    assert_int_equal(j->eligible, 1684114900);
    assert_int_equal(j->start, 1684114921);
    assert_int_equal(j->end, 1686633833);
    assert_int_equal(j->time_limit, 30240);
    assert_string_equal(j->nodes, "cs75");
    assert_int_equal(j->node_count, 1);
    assert_int_equal(j->cpus, 1);
    assert_int_equal(j->alloc.mem_mb, 64000); /* 62.50G */
    assert_int_equal(j->alloc.cpu, 1);
    assert_string_equal(j->user, "bkd");
    assert_int_equal(j->user_id, 1977600017);
    assert_int_equal(j->group_id, 1977700000);
    assert_null(j->group); /* no group_name in 21.08 */
    assert_string_equal(j->cluster, "rivos");
    assert_string_equal(j->partition, "hw-l");
    assert_null(j->reservation);
    assert_null(j->wckey);
    assert_int_equal(j->exit_code, 0);
    assert_int_equal(j->exit_signal, 0);
    assert_true(j->exit_reliable);
    assert_true(j->requeue_allowed);
    assert_int_equal(j->restart_cnt, 0);
    assert_string_equal(extra_str(j, "command"), "sleep 100");
    assert_string_equal(extra_str(j, "features"), "a100-80gb&preemptible&gpu-1");

    /* v0.0.39-style record: pending array meta-record */
    j = job(&p, 58948420);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "Dependency");
    assert_int_equal(j->array_job_id, 58948420);
    assert_true(j->array_task_id == SA_UNSET);
    assert_string_equal(j->array_task_string, "1-10");
    assert_true(j->array_max_tasks == SA_UNSET); /* {set:true, number:0}: no throttle */
    assert_string_equal(j->job_id_display, "58948420_[1-10]");
    assert_true(j->het_job_id == SA_UNSET);
    assert_int_equal(j->submit, 1729715848);
    assert_true(j->eligible == SA_UNSET && j->start == SA_UNSET && j->end == SA_UNSET);
    assert_int_equal(extra_int(j, "expected_start"), SA_UNSET); /* start_time 0 */
    assert_int_equal(j->time_limit, 1439);
    assert_int_equal(j->cpus, 1);
    assert_null(j->nodes);
    assert_string_equal(j->group, "rvs");
    assert_string_equal(extra_str(j, "dependency"), "afterok:58948419(unfulfilled)");
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.38 (22.05 local) ----------------------------------------------------- */

static void test_squeue_v0038_exitcodes_array_het(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/local-cli-v0038_22.05.8_A-pending-reasons-array-het-exitcode-raw.json", &p);

    j = job(&p, 2); /* exit 3: raw 768 */
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_string_equal(j->reason, "NonZeroExitCode");
    assert_int_equal(j->exit_code, 3);
    assert_int_equal(j->exit_signal, 0);
    assert_true(j->exit_reliable);
    assert_int_equal(j->start, 1795642670);
    assert_int_equal(j->end, 1795642672);
    assert_string_equal(j->account, "physics");
    assert_string_equal(j->name, "fail");

    j = job(&p, 3); /* kill -9: raw 9 */
    assert_string_equal(j->reason, "JobLaunchFailure");
    assert_int_equal(j->exit_code, 0);
    assert_int_equal(j->exit_signal, 9);

    j = job(&p, 18); /* array task 4_3 exits 1: raw 256 */
    assert_int_equal(j->exit_code, 1);
    assert_int_equal(j->array_job_id, 4);
    assert_int_equal(j->array_task_id, 3);
    assert_int_equal(j->array_max_tasks, 2);
    assert_string_equal(j->job_id_display, "4_3");

    j = job(&p, 4); /* the last task 4_5 keeps the master's raw id 4 */
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->array_job_id, 4);
    assert_int_equal(j->array_task_id, 5);
    assert_string_equal(j->job_id_display, "4_5");
    assert_int_equal(j->end, 1795643285); /* running: expected end kept */

    j = job(&p, 5); /* het leader, pending */
    assert_int_equal(j->het_job_id, 5);
    assert_int_equal(j->het_job_offset, 0);
    assert_string_equal(j->job_id_display, "5+0");
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "Resources");
    assert_true(j->start == SA_UNSET && j->end == SA_UNSET);
    assert_int_equal(extra_int(j, "expected_start"), 1795643275);
    assert_string_equal(extra_str(j, "het_job_id_set"), "5-6");
    assert_null(j->nodes);
    assert_true(j->alloc.cpu == SA_UNSET);

    j = job(&p, 6); /* het component 1 with a GPU request */
    assert_int_equal(j->het_job_offset, 1);
    assert_string_equal(j->job_id_display, "5+1");
    assert_int_equal(j->req.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&j->req.gpus, "a100"), 1);
    assert_string_equal(extra_str(j, "tres_per_node"), "gres:gpu:a100:1");

    j = job(&p, 11);
    assert_string_equal(j->reason, "JobHeldUser");
    assert_true(j->eligible == SA_UNSET);
    assert_int_equal(extra_int(j, "expected_start"), SA_UNSET);

    j = job(&p, 15);
    assert_string_equal(j->reason, "ReqNodeNotAvail");
    assert_int_equal(j->node_count, 3);
    assert_int_equal(j->cpus, 3);
    tu_parsed_clear(&p);
}

static void test_squeue_v0038_gpu_gres_detail(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/local-cli-v0038_22.05.8_B-gpu-running-gres-detail.json", &p);
    j = job(&p, 7);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->gres_gpus.n, 1);
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "a100"), 2);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->req.gpu_total, 2);
    assert_int_equal(j->alloc.mem_mb, 500);
    assert_int_equal(j->derived_exit_code, 2); /* raw 512: first srun exited 2 */
    assert_int_equal(j->derived_exit_signal, 0);
    assert_string_equal(j->partition, "gpu");
    assert_string_equal(extra_str(j, "command"), "/home/demo/scn/gpu.sh");
    tu_parsed_clear(&p);
}

static void test_squeue_v0038_requeued_timeout(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/local-cli-v0038_22.05.8_C-requeued-timeout-cancelled-depneversatisfied.json", &p);
    j = job(&p, 9); /* requeued, waiting for its requeue delay */
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(j->restart_cnt, 1);
    assert_int_equal(j->submit, 1795642814);
    assert_int_equal(j->eligible, 1795642935);
    assert_int_equal(extra_int(j, "expected_start"), 1795642935);
    assert_true(j->start == SA_UNSET);

    j = job(&p, 8);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_string_equal(j->reason, "TimeLimit");
    assert_int_equal(j->exit_signal, 15);
    assert_int_equal(j->time_limit, 1);

    j = job(&p, 12);
    assert_string_equal(j->reason, "DependencyNeverSatisfied");
    tu_parsed_clear(&p);
}

static void test_squeue_v0038_array_meta_record(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/local-cli-v0038_22.05.8_E-array-meta-record-1-10pct3-held_filter-j-ignored.json", &p);
    assert_int_equal(p.njobs, 20); /* -j 20 was ignored by 22.05 */
    j = job(&p, 20);
    assert_int_equal(j->array_job_id, 20);
    assert_true(j->array_task_id == SA_UNSET);
    assert_string_equal(j->array_task_string, "1-10%3");
    assert_int_equal(j->array_max_tasks, 3);
    assert_string_equal(j->job_id_display, "20_[1-10%3]");
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "JobHeldUser");
    assert_int_equal(j->submit, 1795643026);
    assert_string_equal(j->name, "arrheld");

    j = job(&p, 9);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_int_equal(j->restart_cnt, 1);
    assert_int_equal(j->start, 1795642945);
    assert_int_equal(j->end, 1795642990);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.39 --------------------------------------------------------------------- */

static void test_squeue_v0039_30jobs(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-jobs-v0039_23.02.8_slurmweb_30jobs-pending-priority.json", &p);
    assert_int_equal(p.njobs, 30);

    j = job(&p, 307);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_string_equal(j->nodes, "cn[001-050,052-065]");
    assert_int_equal(j->node_count, 64);
    assert_int_equal(j->cpus, 128);
    assert_int_equal(j->time_limit, 60);
    assert_int_equal(j->start, 1727358173);
    assert_int_equal(j->end, 1727358533);
    assert_string_equal(j->user, "dshaw");
    assert_true(j->array_job_id == SA_UNSET); /* {set:true, number:0} */
    assert_true(j->het_job_id == SA_UNSET);
    assert_int_equal(j->exit_code, 0);

    j = job(&p, 326);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "Resources");
    assert_int_equal(extra_int(j, "expected_start"), 1727362133);
    assert_true(j->start == SA_UNSET && j->end == SA_UNSET);
    assert_int_equal(j->node_count, 16);

    j = job(&p, 327);
    assert_string_equal(j->reason, "Priority");
    assert_int_equal(j->submit, 1727332586);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.40 ------------------------------------------------------------------------- */

static void test_squeue_v0040_hetjob(void **state)
{
    tu_parsed_t p;
    (void)state;

    parse_sample("squeue/cli-scontrol-show-job-json-v0040_23.11.6_torchx_hetjob-4-components.json", &p);
    assert_int_equal(p.njobs, 4);
    for (int64_t off = 0; off < 4; off++) {
        sa_job_t *j = job(&p, 204 + off);
        char disp[32];
        snprintf(disp, sizeof disp, "204+%lld", (long long)off);
        assert_int_equal(j->het_job_id, 204);
        assert_int_equal(j->het_job_offset, off);
        assert_string_equal(j->job_id_display, disp);
        assert_string_equal(tu_state(&j->state), "RUNNING");
        assert_true(j->time_limit == SA_INFINITE);
        assert_int_equal(j->start, 1749684541);
        assert_int_equal(j->end, 1781220541); /* start + 365 days */
        assert_true(j->array_job_id == SA_UNSET);
        assert_int_equal(j->cpus, 2);
        assert_int_equal(j->alloc.cpu, 2);
        assert_int_equal(j->req.cpu, 1);
        assert_int_equal(j->exit_code, 0);
        assert_int_equal(j->exit_signal, 0);
        assert_true(j->exit_reliable);
        assert_string_equal(extra_str(j, "het_job_id_set"), "204-207");
    }
    assert_int_equal(job(&p, 204)->submit, 1749684515);
    assert_string_equal(job(&p, 205)->nodes, "slurm-compute-node-231");
    tu_parsed_clear(&p);
}

static void test_squeue_v0040_gpu_multi_types(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-job-v0040_23.11.10_slurmweb_gpu-multi-types.json", &p);
    j = job(&p, 796);
    /* the cluster does not account GPUs: TRES strings have none ... */
    assert_int_equal(j->alloc.gpu_total, 0);
    assert_int_equal(j->alloc.gpus.n, 0);
    /* ... gres_detail has them */
    assert_int_equal(j->gres_gpus.n, 2);
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "h100"), 1);
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "h200"), 1);
    /* request derived from tres_per_node x node_count (1) */
    assert_int_equal(j->req.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&j->req.gpus, "h100"), 1);
    assert_int_equal(sa_gpus_get(&j->req.gpus, "h200"), 1);
    assert_string_equal(extra_str(j, "tres_per_node"), "gres/gpu:h100:1,gres/gpu:h200:1");
    tu_parsed_clear(&p);
}

static void test_squeue_v0040_array_and_14jobs(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-jobs-v0040_23.11.1_talapas_array-running-pending.json", &p);
    j = job(&p, 7745162);
    assert_int_equal(j->array_job_id, 7725337);
    assert_int_equal(j->array_task_id, 411);
    assert_string_equal(j->job_id_display, "7725337_411");
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->time_limit, 1440);
    j = job(&p, 7725337);
    assert_string_equal(j->array_task_string, "412-9999");
    assert_string_equal(j->job_id_display, "7725337_[412-9999]");
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "Resources");
    tu_parsed_clear(&p);

    parse_sample("squeue/restd-jobs-v0040_23.11.10_slurmweb_14jobs.json", &p);
    j = job(&p, 776);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_int_equal(j->exit_signal, 15);
    j = job(&p, 778);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 1);
    assert_int_equal(j->exit_signal, 0);
    assert_true(j->exit_reliable);
    j = job(&p, 789);
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(j->eligible, 1747049194);
    assert_int_equal(extra_int(j, "expected_start"), 1747049194);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.41 ------------------------------------------------------------------------- */

static void test_squeue_v0041(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-job-v0041-on-25.11.0_slurmweb_timeout.json", &p);
    j = job(&p, 4);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_string_equal(j->reason, "TimeLimit");
    assert_int_equal(j->exit_signal, 15);
    assert_int_equal(j->time_limit, 1);
    assert_int_equal(j->start, 1762528137);
    assert_int_equal(j->end, 1762528209);
    tu_parsed_clear(&p);

    parse_sample("squeue/restd-jobs-v0041_24.05.3_slurmweb_14jobs.json", &p);
    j = job(&p, 649728);
    assert_string_equal(j->nodes, "cn[004-006]");
    assert_int_equal(j->node_count, 3);
    assert_int_equal(j->cpus, 128);
    j = job(&p, 649730);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(extra_int(j, "expected_start"), 1747758094);
    j = job(&p, 649719);
    assert_int_equal(j->exit_code, 1);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.42 ------------------------------------------------------------------------- */

static void test_squeue_v0042(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-job-v0042_24.11.5_slurmweb_gpu-multi-nodes.json", &p);
    j = job(&p, 6371);
    assert_string_equal(j->nodes, "ia[1-2]");
    assert_int_equal(j->node_count, 2);
    /* one gres_detail string per node, summed by type */
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "h100"), 4);
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "h200"), 8);
    /* tres_per_job gres/gpu:12 (untyped) */
    assert_int_equal(j->req.gpu_total, 12);
    assert_int_equal(sa_gpus_get(&j->req.gpus, ""), 12);
    tu_parsed_clear(&p);

    parse_sample("squeue/restd-jobs-v0042_24.11.5_slurmweb_16jobs-cancelled.json", &p);
    j = job(&p, 6355);
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_int_equal(j->exit_signal, 15);
    assert_int_equal(j->req.gpu_total, 1); /* tres_per_job gres/gpu:1 */
    j = job(&p, 6369);
    assert_string_equal(j->reason, "Resources");
    assert_true(j->start == SA_UNSET);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.43 ------------------------------------------------------------------------- */

static void test_squeue_v0043(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-jobs-v0043_25.05.4_slurmweb_19jobs-qoslimit-reasons.json", &p);
    assert_int_equal(p.njobs, 19);
    j = job(&p, 2195); /* cancelled while pending: stale reason kept */
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(j->reason, "QOSMaxCpuPerJobLimit");
    assert_null(j->nodes);
    assert_int_equal(j->time_limit, 120);
    j = job(&p, 4729);
    assert_int_equal(sa_gpus_get(&j->req.gpus, "h100"), 1); /* tres_per_job gres/gpu:h100:1 */
    j = job(&p, 4734);
    assert_string_equal(j->nodes, "cn[1-3]");
    assert_int_equal(j->node_count, 3);
    tu_parsed_clear(&p);
}

/* ---- squeue v0.0.44 ------------------------------------------------------------------------- */

static void test_squeue_v0044(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("squeue/restd-jobs-v0044_25.11.0_slurmweb_15jobs.json", &p);
    j = job(&p, 5739);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 1);
    assert_string_equal(extra_str(j, "submit_line"), "sbatch --time 1 --wrap sleep 1 && false --ntasks 1");
    j = job(&p, 5750);
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(extra_int(j, "expected_start"), 1762946075);
    tu_parsed_clear(&p);

    parse_sample("squeue/restd-job-v0044_25.11.0_slurmweb_gpu-pending-begintime.json", &p);
    j = job(&p, 4965);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(j->req.gpu_total, 4); /* tres_per_job gres/gpu:4 */
    assert_int_equal(j->alloc.cpu, SA_UNSET);
    assert_int_equal(extra_int(j, "expected_start"), 1762787291);
    tu_parsed_clear(&p);

    parse_sample("squeue/restd-job-v0044_25.11.0_slurmweb_gpu-per-task-equals.json", &p);
    j = job(&p, 5512);
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "h100"), 4);
    assert_int_equal(j->req.gpu_total, 4); /* gres/gpu=2 per task x 2 tasks */
    assert_string_equal(extra_str(j, "tres_per_task"), "gres/gpu=2");
    tu_parsed_clear(&p);
}

/* ---- sacct dbv0.0.37 ------------------------------------------------------------------------- */

static void test_sacct_v0037(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/cli-dbv0037_21.08.8_clockwork_nodefail-gres-anonymized.json", &p);
    j = job(&p, 10);
    assert_string_equal(tu_state(&j->state), "NODE_FAIL");
    assert_string_equal(j->reason, "Prolog");
    assert_int_equal(j->array_job_id, 1);
    assert_int_equal(j->array_task_id, 7);
    assert_string_equal(j->job_id_display, "1_7");
    assert_null(j->reservation); /* name: 0 (integer) */
    assert_string_equal(j->wckey, "submitit");
    assert_int_equal(j->submit, 1680193479);
    assert_int_equal(j->start, 1680193504);
    assert_true(j->end == SA_UNSET);
    assert_int_equal(j->elapsed, 20615);
    assert_int_equal(j->time_limit, 1440);
    assert_int_equal(j->alloc.cpu, 4);
    assert_int_equal(j->alloc.mem_mb, 40960);
    assert_int_equal(j->alloc.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, ""), 1);
    assert_int_equal(j->cpus, 4);
    assert_string_equal(j->nodes, "cdr1");
    assert_false(j->exit_reliable);
    assert_int_equal(j->nsteps, 0);
    assert_non_null(json_object_get(j->extra, "comment"));
    assert_string_equal(extra_str(j, "constraints"), "[p100|p100l|v100l]");
    tu_parsed_clear(&p);

    parse_sample("sacct-json/dbv0037_21.08.8_mila_requeued.json", &p);
    j = job(&p, 55978384);
    assert_string_equal(tu_state(&j->state), "REQUEUED");
    assert_string_equal(j->job_id_display, "55978384");
    assert_int_equal(j->end, 1673369386);
    assert_int_equal(j->elapsed, 86301);
    assert_string_equal(j->nodes, "cdr896");
    assert_string_equal(j->user, "purah");
    assert_true(j->restart_cnt == SA_UNSET);
    tu_parsed_clear(&p);
}

/* ---- sacct dbv0.0.38 ------------------------------------------------------------------------- */

static void test_sacct_v0038_requeued_steps(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/local-cli-dbv0038_22.05.8_D-final-requeued-het-steps-exitcode-bug.json", &p);

    /* job 9: the requeued instance, then the final one */
    j = job_n(&p, 9, 0);
    assert_string_equal(tu_state(&j->state), "REQUEUED");
    assert_int_equal(j->submit, 1795642669);
    assert_int_equal(j->start, 1795642806);
    assert_int_equal(j->end, 1795642814);
    assert_int_equal(j->nsteps, 1);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
    assert_int_equal(j->steps[0].exit_signal, 15);
    j = job_n(&p, 9, 1);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(j->submit, 1795642814);
    assert_int_equal(j->eligible, 1795642935);
    assert_int_equal(j->start, 1795642945);
    assert_int_equal(j->elapsed, 45);
    assert_null(tu_find_job_n(&p, 9, 2));

    /* job 1: steps batch (string id), 0 and 1 (integer ids) */
    j = job(&p, 1);
    assert_int_equal(j->nsteps, 3);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(j->steps[1].id, "0");
    assert_string_equal(j->steps[1].name, "hostname");
    assert_string_equal(j->steps[2].id, "1");
    assert_string_equal(j->steps[2].name, "sleep");
    assert_int_equal(j->steps[2].start, 1795642670);
    assert_int_equal(j->steps[2].end, 1795642673);
    assert_int_equal(j->steps[2].elapsed, 3);
    assert_string_equal(j->steps[2].nodes, "vm");
    assert_int_equal(j->steps[2].alloc.mem_mb, 200);
    assert_non_null(json_object_get(j->steps[0].extra, "statistics"));

    /* job 2 exited 3 but the JSON says SUCCESS/0: flagged unreliable */
    j = job(&p, 2);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 0);
    assert_false(j->exit_reliable);
    assert_true(j->alloc.other == NULL || !json_object_get(j->alloc.other, "energy")); /* count null */

    j = job(&p, 3); /* SIGNALED, signal_id 9 */
    assert_int_equal(j->exit_signal, 9);
    assert_false(j->exit_reliable);

    /* het components cancelled while pending */
    j = job(&p, 5);
    assert_string_equal(j->job_id_display, "5+0");
    assert_int_equal(j->het_job_offset, 0);
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_true(j->start == SA_UNSET); /* null */
    assert_true(j->elapsed == SA_UNSET);
    assert_int_equal(j->end, 1795642751);
    assert_null(j->nodes); /* None assigned */
    assert_int_equal(j->nsteps, 0);
    assert_string_equal(job(&p, 6)->job_id_display, "5+1");

    /* job 7: GPUs typed + untyped, failing first step */
    j = job(&p, 7);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(j->alloc.gpus.n, 1);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->nsteps, 3);
    assert_string_equal(j->steps[1].name, "nvidia-smi");
    assert_string_equal(tu_state(&j->steps[1].state), "FAILED");
    assert_int_equal(j->steps[1].alloc.gpu_total, 2);

    /* array task 4_5 with raw id 4 */
    j = job(&p, 4);
    assert_string_equal(j->job_id_display, "4_5");
    assert_int_equal(j->array_max_tasks, 2);
    assert_string_equal(j->reason, "JobArrayTaskLimit");
    j = job(&p, 16);
    assert_string_equal(j->job_id_display, "4_1");
    assert_true(j->array_max_tasks == SA_UNSET);
    tu_parsed_clear(&p);
}

static void test_sacct_v0038_array_failed(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/dbv0038_22.05.9_mila_array-failed.json", &p);
    j = job(&p, 20247445);
    assert_string_equal(j->job_id_display, "20247445_100");
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_false(j->exit_reliable);
    assert_int_equal(j->alloc.gpu_total, 16);
    assert_int_equal(j->alloc.node, 4);
    assert_int_equal(j->node_count, 4);
    assert_int_equal(j->cpus, 96);
    assert_string_equal(j->nodes, "ng[30103,30203,30706-30707]");
    assert_int_equal(j->time_limit, 2880);
    assert_string_equal(j->cluster, "narval");
    tu_parsed_clear(&p);

    parse_sample("sacct-json/local-cli-dbv0038_22.05.8_A-running-pending-arrays.json", &p);
    j = job(&p, 4);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_true(j->end == SA_UNSET);
    assert_string_equal(j->steps[0].id, "batch");
    assert_true(j->steps[0].end == SA_UNSET);
    j = job(&p, 7);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_true(j->start == SA_UNSET && j->elapsed == SA_UNSET);
    assert_int_equal(j->req.gpu_total, 2);
    assert_int_equal(j->alloc.gpu_total, 0);
    tu_parsed_clear(&p);
}

/* ---- sacct v0.0.39 ------------------------------------------------------------------------- */

static void test_sacct_v0039(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    json_t *req;
    (void)state;

    parse_sample("sacct-json/dp-v0039_23.02.6_mila_running.json", &p);
    j = job(&p, 4);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->time_limit, 7200);
    assert_true(j->end == SA_UNSET);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_false(j->exit_reliable);
    req = json_object_get(j->extra, "required");
    assert_non_null(json_object_get(req, "memory_per_node"));
    assert_true(j->array_job_id == SA_UNSET && j->het_job_id == SA_UNSET);
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0039_23.02.8_slurmweb_completed-stepid-object.json", &p);
    j = job(&p, 307);
    assert_int_equal(j->nsteps, 1);
    assert_string_equal(j->steps[0].id, "batch"); /* {job_id, step_id:"batch"} */
    assert_int_equal(j->steps[0].start, 1727358173);
    assert_int_equal(j->steps[0].end, 1727358533);
    assert_string_equal(j->steps[0].nodes, "admin.emulator");
    assert_string_equal(j->nodes, "cn[001-050,052-065]");
    assert_int_equal(j->node_count, 64);
    assert_int_equal(j->alloc.cpu, 128);
    assert_true(j->alloc.other == NULL || !json_object_get(j->alloc.other, "energy")); /* -2 */
    assert_string_equal(extra_str(j, "submit_line"),
                        "sbatch --qos normal --partition batch --time 1:0:0 --wrap /usr/bin/sleep 360 --nodes 64");
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0039_23.02.8_slurmweb_pending.json", &p);
    j = job(&p, 326);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_true(j->start == SA_UNSET);
    assert_null(j->nodes);
    assert_int_equal(j->nsteps, 0);
    assert_int_equal(j->req.cpu, 16);
    assert_int_equal(j->cpus, 16);
    assert_int_equal(j->time_limit, 60);
    tu_parsed_clear(&p);
}

/* ---- sacct v0.0.40 ------------------------------------------------------------------------- */

static void test_sacct_v0040(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/restd-dbjob-v0040_23.11.10_slurmweb_failed.json", &p);
    j = job(&p, 510);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 1);
    assert_int_equal(j->exit_signal, 0);
    assert_true(j->exit_reliable);
    assert_int_equal(j->start, 1746621142);
    assert_string_equal(j->steps[0].id, "batch"); /* "510.batch" */
    assert_int_equal(j->steps[0].start, 1746621142); /* struct form */
    assert_int_equal(j->steps[0].end, 1746621143);
    assert_int_equal(j->steps[0].exit_code, 1);
    tu_parsed_clear(&p);

    parse_sample("sacct-json/dp-v0040_23.11.5_mila_running.json", &p);
    j = job(&p, 4);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_true(j->exit_reliable);
    assert_int_equal(j->elapsed, 102228976);
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0040_23.11.10_slurmweb_gpu-multi-types-running.json", &p);
    j = job(&p, 503);
    assert_int_equal(j->alloc.gpu_total, 0); /* GPUs not accounted */
    assert_int_equal(j->alloc.mem_mb, 512);
    assert_true(j->steps[0].end == SA_UNSET); /* {set:true, number:0} */
    tu_parsed_clear(&p);
}

/* ---- sacct v0.0.41 .. v0.0.44 ----------------------------------------------------------------- */

static void test_sacct_v0041(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/restd-dbjob-v0041_24.05.3_slurmweb_timeout-step-cancelled.json", &p);
    j = job(&p, 649717);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_int_equal(j->exit_code, 0);
    assert_true(j->exit_reliable);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
    assert_int_equal(j->steps[0].exit_signal, 15);
    assert_int_equal(j->elapsed, 83);
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0041_24.05.3_slurmweb_pending-begintime.json", &p);
    j = job(&p, 649730);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(j->eligible, 1747758094);
    assert_int_equal(j->cpus, 64);
    assert_int_equal(j->req.mem_mb, 32768);
    tu_parsed_clear(&p);
}

static void test_sacct_v0042_v0043(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    json_t *resv, *st;
    (void)state;

    parse_sample("sacct-json/restd-dbjob-v0042_24.11.5_slurmweb_running.json", &p);
    j = job(&p, 6368);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->restart_cnt, 0);
    assert_int_equal(j->time_limit, 2);
    assert_int_equal(j->steps[0].start, 1762788801);
    assert_true(j->steps[0].end == SA_UNSET);
    assert_non_null(json_object_get(j->extra, "qosreq"));
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0043_25.05.4_slurmweb_completed-2nodes.json", &p);
    j = job(&p, 2194);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_string_equal(j->nodes, "gpu[1-2]");
    assert_int_equal(j->node_count, 2);
    assert_int_equal(j->alloc.cpu, 2);
    assert_int_equal(j->req.cpu, 1);
    assert_int_equal(j->time_limit, 120);
    resv = json_object_get(j->extra, "reservation"); /* 25.05 adds reservation.requested */
    assert_non_null(json_object_get(resv, "requested"));
    st = json_object_get(j->steps[0].extra, "time");
    assert_non_null(json_object_get(st, "limit")); /* step time.limit (v0.0.43) kept */
    assert_non_null(json_object_get(json_object_get(j->steps[0].extra, "step"), "stdout"));
    tu_parsed_clear(&p);
}

static void test_sacct_v0044(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    parse_sample("sacct-json/restd-dbjob-v0044_25.11.0_slurmweb_failed.json", &p);
    j = job(&p, 5739);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 1);
    assert_true(j->exit_reliable);
    assert_string_equal(extra_str(j, "submit_line"), "sbatch --time 1 --wrap sleep 1 && false --ntasks 1");
    assert_int_equal(j->steps[0].exit_code, 1);
    assert_string_equal(j->steps[0].nodes, "cn1");
    tu_parsed_clear(&p);

    parse_sample("sacct-json/restd-dbjob-v0044_25.11.0_slurmweb_cancelled.json", &p);
    j = job(&p, 5735);
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
    assert_int_equal(j->steps[0].exit_signal, 15);
    assert_int_equal(j->steps[0].end, 1762858443);
    assert_int_equal(j->end, 1762858442);
    tu_parsed_clear(&p);
}

/* ---- states and kinds (direct conversion) ------------------------------------------------------ */

static void test_state_forms(void **state)
{
    sa_error_t err;
    sa_job_t *j;
    (void)state;

    j = convert("{\"job_id\":1,\"job_state\":[\"PENDING\",\"REQUEUED\"],\"start_time\":{\"set\":true,"
                "\"infinite\":false,\"number\":1700000000}}",
                &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "PENDING+REQUEUED");
    assert_true(sa_state_has_flag(&j->state, "REQUEUED"));
    assert_true(j->start == SA_UNSET);
    assert_int_equal(extra_int(j, "expected_start"), 1700000000);
    sa_job_destroy(j);

    /* string form: the flag word alone, base implied */
    j = convert("{\"job_id\":2,\"job_state\":\"REQUEUED\"}", &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "PENDING+REQUEUED");
    sa_job_destroy(j);
    j = convert("{\"job_id\":3,\"job_state\":\"CONFIGURING\"}", &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "RUNNING+CONFIGURING");
    sa_job_destroy(j);
    /* COMPLETING: the terminal base is not printed; the word stays the base */
    j = convert("{\"job_id\":4,\"job_state\":\"COMPLETING\"}", &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "COMPLETING");
    sa_job_destroy(j);
    /* unknown words are kept */
    j = convert("{\"job_id\":5,\"job_state\":[\"RUNNING\",\"NEW_FLAG\"]}", &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "RUNNING+NEW_FLAG");
    sa_job_destroy(j);
    /* squeue v0.0.38 time_limit null = UNLIMITED */
    j = convert("{\"job_id\":6,\"job_state\":\"RUNNING\",\"time_limit\":null}", &err);
    assert_non_null(j);
    assert_true(j->time_limit == SA_INFINITE);
    sa_job_destroy(j);

    /* sacct: "CANCELLED by 0", pending array meta-record with a hex task mask */
    j = convert("{\"job_id\":30,\"state\":{\"current\":\"CANCELLED by 0\",\"reason\":\"None\"},"
                "\"array\":{\"job_id\":30,\"task_id\":null,\"task\":\"0x1FE\","
                "\"limits\":{\"max\":{\"running\":{\"tasks\":2}}}},"
                "\"time\":{\"submission\":1700000000,\"limit\":{\"set\":false,\"infinite\":true,\"number\":0}}}",
                &err);
    assert_non_null(j);
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(j->array_task_string, "1-8");
    assert_string_equal(j->job_id_display, "30_[1-8%2]");
    assert_string_equal(extra_str(j, "array_task_raw"), "0x1FE");
    assert_true(j->time_limit == SA_INFINITE);
    sa_job_destroy(j);

    /* sacct het step id with a component, v0.0.38 form */
    j = convert("{\"job_id\":40,\"state\":{\"current\":\"COMPLETED\"},\"steps\":[{\"step\":{\"job_id\":40,"
                "\"het\":{\"component\":1},\"id\":0,\"name\":\"a\"},\"state\":\"COMPLETED\"},"
                "{\"step\":{\"id\":4294967292,\"name\":\"extern\"},\"state\":\"COMPLETED\"}]}",
                &err);
    assert_non_null(j);
    assert_int_equal(j->nsteps, 2);
    assert_string_equal(j->steps[0].id, "0+1");
    assert_string_equal(j->steps[1].id, "extern");
    sa_job_destroy(j);
}

/* sacct TRES lists: untyped total wins, typed split, shortfall under "", others as text */
static void test_sacct_tres_list(void **state)
{
    sa_error_t err;
    sa_job_t *j;
    (void)state;

    j = convert("{\"job_id\":50,\"state\":{\"current\":\"RUNNING\"},\"tres\":{\"allocated\":["
                "{\"type\":\"cpu\",\"name\":\"\",\"id\":1,\"count\":8},"
                "{\"type\":\"energy\",\"name\":\"\",\"id\":3,\"count\":-2},"
                "{\"type\":\"fs\",\"name\":\"disk\",\"id\":6,\"count\":5},"
                "{\"type\":\"gres\",\"name\":\"gpu\",\"id\":1001,\"count\":3},"
                "{\"type\":\"gres\",\"name\":\"gpu:a100\",\"id\":1002,\"count\":2}],"
                "\"requested\":[{\"type\":\"gres\",\"name\":\"gpu:h100\",\"id\":1003,\"count\":4}]}}",
                &err);
    assert_non_null(j);
    assert_int_equal(j->alloc.cpu, 8);
    assert_int_equal(j->cpus, 8);
    assert_int_equal(j->alloc.gpu_total, 3);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, ""), 1);
    assert_string_equal(json_string_value(json_object_get(j->alloc.other, "fs/disk")), "5");
    assert_null(json_object_get(j->alloc.other, "energy"));
    assert_int_equal(j->req.gpu_total, 4); /* typed only: the sum */
    assert_int_equal(sa_gpus_get(&j->req.gpus, "h100"), 4);
    assert_int_equal(j->req.gpus.n, 1);
    sa_job_destroy(j);
}

static void test_kind(void **state)
{
    const char *cases[][2] = {
        {"{\"job_id\":1,\"job_state\":\"RUNNING\"}", "squeue"},
        {"{\"job_id\":1,\"state\":{\"current\":\"RUNNING\"}}", "sacct"},
        {"{\"job_id\":1,\"time\":{\"start\":1}}", "sacct"},
        {"{\"job_id\":1,\"steps\":[]}", "sacct"},
        {"{\"job_id\":1,\"state\":\"RUNNING\"}", "unknown"},
        {"{\"job_id\":1}", "unknown"},
        {"[1]", "unknown"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *e = json_loads(cases[i][0], JSON_DECODE_ANY, NULL);
        sa_kind_t k = sa_job_json_kind(e);
        const char *want = cases[i][1];
        assert_int_equal(k, strcmp(want, "squeue") == 0  ? SA_KIND_SQUEUE_JSON
                            : strcmp(want, "sacct") == 0 ? SA_KIND_SACCT_JSON
                                                         : SA_KIND_UNKNOWN);
        json_decref(e);
    }
}

/* ---- bad elements -------------------------------------------------------------------------------- */

static void test_bad_elements(void **state)
{
    (void)state;
    expect_fail("{\"jobs\":[{\"job_id\":\"12\",\"job_state\":\"RUNNING\"}]}", "job record without job_id", "string");
    expect_fail("{\"jobs\":[{\"job_state\":\"RUNNING\"}]}", "job record without job_id", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12.5,\"job_state\":\"RUNNING\"}]}", "job record without job_id", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":-3,\"job_state\":\"RUNNING\"}]}", "job_id", "-3");
    expect_fail("{\"jobs\":[{\"job_id\":9007199254740993,\"job_state\":\"RUNNING\"}]}", "job_id", "out of range");
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"time_limit\":[1]}]}", "job 12: time_limit",
                "array");
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"submit_time\":1e30}]}",
                "job 12: submit_time", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"start_time\":"
                "{\"set\":true,\"infinite\":false,\"number\":1e30}}]}",
                "job 12: start_time", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":7}]}", "job 12: job_state", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"cpus\":-4}]}", "job 12: cpus", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"gres_detail\":[\"gpu:a100:x\"]}]}",
                "job 12: gres_detail[0]", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"tres_req_str\":\"cpu\"}]}",
                "job 12: tres_req_str", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"nodes\":\"n[1-\"}]}", "job 12: nodes", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":12,\"job_state\":\"RUNNING\",\"name\":{\"a\":1}}]}", "job 12: name", NULL);
    /* sacct */
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"FAILED\"},\"time\":{\"start\":1e30}}]}",
                "job 13: time: start", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"FAILED\"},\"time\":{\"limit\":[5]}}]}",
                "job 13: time: limit", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"FAILED\"},\"tres\":{\"allocated\":"
                "[{\"type\":\"cpu\",\"count\":-5}]}}]}",
                "job 13: tres: allocated[0]", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"FAILED\"},\"steps\":[{\"step\":{\"id\":\"1\"},"
                "\"time\":{\"end\":\"soon\"}}]}]}",
                "job 13: steps[0]: time: end", NULL);
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"FAILED\"},\"steps\":[5]}]}", "job 13: steps[0]",
                NULL);
    expect_fail("{\"jobs\":[{\"job_id\":13,\"state\":{\"current\":\"x\"},\"time\":5}]}", "job 13: time", NULL);
}

/* ---- the repository's fixtures: fixtures/gen/<version>/ (every version) ----------------------- */

#define AT TU_GEN_AT

/* The job with raw id (nth record of that id) of a fixture, naming the file when absent. */
static sa_job_t *fjob(tu_parsed_t *p, const char *what, int64_t id, size_t nth)
{
    sa_job_t *j = tu_find_job_n(p, id, nth);
    if (!j)
        fail_msg("%s: job %lld (#%zu) not found", what, (long long)id, nth);
    return j;
}

/* A string member of extra, or "" (so a missing value fails assert_string_equal, not crashes). */
static const char *xs(const sa_job_t *j, const char *key)
{
    const char *v = extra_str(j, key);
    return v ? v : "";
}

/* The request forms of tres_per_*: "gres:" up to v0.0.39, "gres/" after; per task "=" from v0.0.41. */
static const char *gres_form(int vn, const char *typed_count)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s%s", vn <= 39 ? "gres:" : "gres/", typed_count);
    return buf;
}

/* squeue --json of every version: the scenario's jobs read the same, the version's own forms aside. */
static void test_fixture_squeue_versions(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        int vn = tu_gen_vn(*v);
        tu_parsed_t p;
        sa_job_t *j;

        tu_parse_gen(*v, "squeue.json", &p);
        check_basics(&p, SA_KIND_SQUEUE_JSON);
        assert_int_equal((int64_t)p.njobs, tu_gen_count(*v, "squeue.json", "jobs"));

        j = fjob(&p, *v, TU_J_OK, 0); /* two nodes, half of each */
        assert_string_equal(tu_state(&j->state), "RUNNING");
        assert_string_equal(j->job_id_display, "1001");
        assert_string_equal(j->nodes, "c[0010-0011]");
        assert_int_equal(j->node_count, 2);
        assert_int_equal(j->cpus, 16);
        assert_int_equal(j->alloc.cpu, 16);
        assert_int_equal(j->alloc.mem_mb, 131072);
        assert_int_equal(j->start, AT - 3600);
        assert_int_equal(j->end, AT - 3600 + 120 * 60);
        assert_int_equal(j->time_limit, 120);
        assert_string_equal(j->user, "alice");
        assert_int_equal(j->user_id, 10001);
        assert_string_equal(j->account, "physics");
        assert_string_equal(j->partition, "cpu");
        assert_string_equal(j->qos, "normal");
        assert_string_equal(j->cluster, "synth");
        assert_true(j->array_job_id == SA_UNSET && j->het_job_id == SA_UNSET);
        assert_true(j->exit_reliable);
        if (vn == 37)
            assert_null(j->group); /* no group_name before 22.05 */
        else
            assert_string_equal(j->group, "physics");

        j = fjob(&p, *v, TU_J_TRAIN, 0); /* 4 A100s: TRES, gres_detail and the request agree */
        assert_int_equal(j->alloc.gpu_total, 4);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 4);
        assert_int_equal(sa_gpus_get(&j->gres_gpus, "a100"), 4);
        assert_int_equal(j->req.gpu_total, 4);
        assert_string_equal(j->nodes, "ga002");
        assert_string_equal(xs(j, "tres_per_node"), gres_form(vn, "gpu:a100:4"));
        j = fjob(&p, *v, TU_J_MIG, 0); /* MIG profiles are types */
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "nvidia_a100_80gb_pcie_1g.10gb"), 2);
        assert_int_equal(j->alloc.gpus.n, 1);
        assert_string_equal(xs(j, "tres_per_job"), gres_form(vn, "gpu:nvidia_a100_80gb_pcie_1g.10gb:2"));
        assert_string_equal(j->qos, "gpu");
        j = fjob(&p, *v, TU_J_LLM, 0); /* one gres_detail string per node, summed */
        assert_string_equal(j->nodes, "gh[001-002]");
        assert_int_equal(j->node_count, 2);
        assert_int_equal(sa_gpus_get(&j->gres_gpus, "h100"), 16);
        assert_int_equal(j->alloc.gpu_total, 16);
        j = fjob(&p, *v, TU_J_PERTASK, 0);
        assert_string_equal(xs(j, "tres_per_task"), vn >= 41 ? "gres/gpu:a100=1" : gres_form(vn, "gpu:a100:1"));
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);

        j = fjob(&p, *v, TU_J_FAIL3, 0); /* raw wait status 768 up to v0.0.38, verbose from v0.0.40 */
        assert_string_equal(tu_state(&j->state), "FAILED");
        assert_string_equal(j->reason, "NonZeroExitCode");
        assert_int_equal(j->exit_code, 3);
        assert_int_equal(j->exit_signal, 0);
        assert_int_equal(j->end, AT - 60);
        assert_int_equal(j->derived_exit_code, 3);
        j = fjob(&p, *v, TU_J_SIGKILL, 0);
        assert_string_equal(j->reason, "JobLaunchFailure");
        assert_int_equal(j->exit_code, 0);
        assert_int_equal(j->exit_signal, 9);
        j = fjob(&p, *v, TU_J_TIMEOUT, 0);
        assert_string_equal(tu_state(&j->state), "TIMEOUT");
        assert_string_equal(j->reason, "TimeLimit");
        assert_int_equal(j->exit_signal, 15);
        assert_int_equal(j->time_limit, 10);
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_CANCELLED, 0)->state), "CANCELLED");
        assert_int_equal(fjob(&p, *v, TU_J_CANCELLED, 0)->exit_signal, 15);
        j = fjob(&p, *v, TU_J_CANCEL_PENDING, 0); /* cancelled while pending: stale reason, start = end */
        assert_string_equal(tu_state(&j->state), "CANCELLED");
        assert_string_equal(j->reason, "Resources");
        assert_null(j->nodes);
        assert_int_equal(j->start, AT - 200);
        assert_int_equal(j->end, AT - 200);
        assert_true(sa_tres_is_empty(&j->alloc));
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_OOM, 0)->state), "OUT_OF_MEMORY");
        assert_string_equal(fjob(&p, *v, TU_J_NODEFAIL, 0)->nodes, "c0003");
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_NODEFAIL, 0)->state), "NODE_FAIL");
        /* the one-word form prints the flag: the terminal base is lost up to v0.0.39 */
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_EPILOG, 0)->state),
                            vn <= 39 ? "COMPLETING" : "COMPLETED+COMPLETING");

        j = fjob(&p, *v, TU_J_QUEUED, 0);
        assert_string_equal(tu_state(&j->state), "PENDING");
        assert_string_equal(j->reason, "Priority");
        assert_true(j->start == SA_UNSET && j->end == SA_UNSET);
        assert_int_equal(extra_int(j, "expected_start"), AT + 3600);
        assert_null(j->nodes);
        j = fjob(&p, *v, TU_J_BIG, 0);
        assert_string_equal(j->reason, "Resources");
        assert_int_equal(extra_int(j, "expected_start"), AT + 7200);
        assert_int_equal(j->node_count, 4);
        assert_int_equal(j->req.gpu_total, 32);
        assert_int_equal(sa_gpus_get(&j->req.gpus, "h100"), 32);
        assert_true(j->alloc.cpu == SA_UNSET);
        j = fjob(&p, *v, TU_J_DEP, 0);
        assert_string_equal(j->reason, "Dependency");
        assert_string_equal(xs(j, "dependency"), "afterok:1017(unfulfilled)");
        assert_true(j->eligible == SA_UNSET);
        j = fjob(&p, *v, TU_J_HELD, 0);
        assert_string_equal(j->reason, "JobHeldUser");
        assert_true(j->eligible == SA_UNSET);
        assert_int_equal(extra_int(j, "expected_start"), SA_UNSET);
        j = fjob(&p, *v, TU_J_LATER, 0);
        assert_string_equal(j->reason, "BeginTime");
        assert_int_equal(j->eligible, AT + 1800);
        assert_int_equal(extra_int(j, "expected_start"), AT + 1800);
        assert_string_equal(fjob(&p, *v, TU_J_QOS_LIMIT, 0)->reason, "QOSMaxGRESPerUser");
        assert_string_equal(fjob(&p, *v, TU_J_MULTI_PART, 0)->partition, "cpu,long");
        j = fjob(&p, *v, TU_J_UNAVAIL, 0);
        assert_string_equal(j->reason, "ReqNodeNotAvail");
        assert_string_equal(j->state_description, "ReqNodeNotAvail, UnavailableNodes:c0003");

        j = fjob(&p, *v, TU_J_REQUEUED, 0); /* "REQUEUED" (one word) or [PENDING, REQUEUED] */
        assert_string_equal(tu_state(&j->state), "PENDING+REQUEUED");
        assert_string_equal(j->reason, "BeginTime");
        assert_int_equal(j->restart_cnt, 1);
        assert_int_equal(j->submit, AT - 100);
        assert_int_equal(j->eligible, AT + 21);
        j = fjob(&p, *v, TU_J_REQUEUED_RUN, 0);
        assert_string_equal(tu_state(&j->state), "RUNNING");
        assert_int_equal(j->restart_cnt, 1);
        assert_int_equal(j->start, AT - 2700);
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_BOOTING, 0)->state), "RUNNING+CONFIGURING");
        j = fjob(&p, *v, TU_J_FOREVER, 0); /* UNLIMITED: null up to v0.0.38, infinite after */
        assert_true(j->time_limit == SA_INFINITE);
        assert_int_equal(j->end - j->start, 365 * 86400);
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_PAUSED, 0)->state), "SUSPENDED");

        j = fjob(&p, *v, TU_J_SWEEP, 0); /* the pending array meta-record */
        assert_string_equal(j->job_id_display, "1030_[15-100%10]");
        assert_int_equal(j->array_job_id, TU_J_SWEEP);
        assert_true(j->array_task_id == SA_UNSET);
        assert_string_equal(j->array_task_string, "15-100%10");
        assert_int_equal(j->array_max_tasks, 10);
        assert_string_equal(j->reason, "JobArrayTaskLimit");
        j = fjob(&p, *v, TU_J_SWEEP + 5, 0);
        assert_string_equal(j->job_id_display, "1030_5");
        assert_int_equal(j->array_task_id, 5);
        assert_string_equal(tu_state(&j->state), "RUNNING");
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_SWEEP + 4, 0)->state), "COMPLETED");
        assert_null(tu_find_job(&p, TU_J_SWEEP + 1)); /* ended long ago: sacct only */
        j = fjob(&p, *v, TU_J_SMALL_ARRAY, 0); /* the last task keeps the master's id */
        assert_string_equal(j->job_id_display, "1045_4");
        assert_int_equal(j->array_task_id, 4);
        j = fjob(&p, *v, TU_J_SMALL_ARRAY + 3, 0);
        assert_string_equal(j->job_id_display, "1045_3");
        assert_int_equal(j->exit_code, 1);

        j = fjob(&p, *v, TU_J_HET_RUN, 0);
        assert_string_equal(j->job_id_display, "1049+0");
        assert_int_equal(j->het_job_id, TU_J_HET_RUN);
        assert_int_equal(j->het_job_offset, 0);
        assert_string_equal(xs(j, "het_job_id_set"), "1049-1050");
        j = fjob(&p, *v, TU_J_HET_RUN + 1, 0);
        assert_string_equal(j->job_id_display, "1049+1");
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 1);
        assert_string_equal(fjob(&p, *v, TU_J_HET_WAIT + 1, 0)->job_id_display, "1051+1");
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_HET_WAIT, 0)->state), "PENDING");

        assert_string_equal(fjob(&p, *v, TU_J_HOSTILE, 0)->name, TU_HOSTILE_NAME);
        j = fjob(&p, *v, TU_J_LEGACY_GPU, 0); /* untyped GPUs */
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, ""), 2);
        assert_int_equal(sa_gpus_get(&j->gres_gpus, ""), 2);
        j = fjob(&p, *v, TU_J_TWO_TYPES, 0); /* two types on one node */
        assert_int_equal(j->alloc.gpu_total, 2);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "h100"), 1);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "h200"), 1);
        assert_int_equal(sa_gpus_get(&j->gres_gpus, "h200"), 1);
        assert_string_equal(xs(j, "tres_per_node"), vn <= 39 ? "gres:gpu:h100:1,gres:gpu:h200:1"
                                                              : "gres/gpu:h100:1,gres/gpu:h200:1");
        if (vn >= 44)
            assert_non_null(strstr(xs(fjob(&p, *v, TU_J_OK, 0), "submit_line"), "sbatch"));
        tu_parsed_clear(&p);
    }
}

/* The step ids of a job joined by ',' (static buffer). */
static const char *step_ids(const sa_job_t *j)
{
    static char buf[256];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < j->nsteps; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? "," : "", j->steps[i].id);
    return buf;
}

/* sacct --json of every version: runs of requeued jobs, steps, exit codes (reliable from v0.0.40). */
static void test_fixture_sacct_json_versions(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        int vn = tu_gen_vn(*v);
        bool reliable = vn >= 40;
        tu_parsed_t p;
        sa_job_t *j;

        tu_parse_gen(*v, "sacct.json", &p);
        check_basics(&p, SA_KIND_SACCT_JSON);
        assert_int_equal((int64_t)p.njobs, tu_gen_count(*v, "sacct.json", "jobs"));
        for (size_t i = 0; i < p.njobs; i++)
            assert_true(p.jobs[i]->exit_reliable == reliable);

        j = fjob(&p, *v, TU_J_OK, 0); /* running: no end, steps batch extern 0 1 */
        assert_string_equal(tu_state(&j->state), "RUNNING");
        assert_true(j->end == SA_UNSET);
        assert_string_equal(step_ids(j), "batch,extern,0,1");
        assert_int_equal(j->alloc.cpu, 16);
        assert_int_equal(j->alloc.node, 2);
        assert_string_equal(j->nodes, "c[0010-0011]");
        assert_int_equal(j->steps[1].start, AT - 3600);
        j = fjob(&p, *v, TU_J_FAIL3, 0);
        assert_string_equal(tu_state(&j->state), "FAILED");
        assert_string_equal(step_ids(j), "batch,extern,0,1");
        assert_string_equal(tu_state(&j->steps[3].state), "FAILED");
        assert_int_equal(j->exit_code, reliable ? 3 : 0); /* <= v0.0.39: SUCCESS / 0 for every exit */
        assert_int_equal(j->steps[3].exit_code, reliable ? 3 : 0);
        assert_int_equal(j->end, AT - 60);
        assert_int_equal(j->elapsed, 400);
        j = fjob(&p, *v, TU_J_SIGKILL, 0); /* a signal is reported in every version */
        assert_int_equal(j->exit_signal, 9);
        assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
        j = fjob(&p, *v, TU_J_TIMEOUT, 0);
        assert_string_equal(tu_state(&j->state), "TIMEOUT");
        assert_int_equal(j->steps[0].exit_signal, 15);
        j = fjob(&p, *v, TU_J_CANCEL_PENDING, 0); /* never started: no start (null in 22.05), no nodes */
        assert_string_equal(tu_state(&j->state), "CANCELLED");
        assert_true(j->start == SA_UNSET && j->elapsed == SA_UNSET);
        assert_null(j->nodes);
        assert_int_equal(j->nsteps, 0);
        assert_int_equal(j->end, AT - 200);

        j = fjob(&p, *v, TU_J_REQUEUED_DONE, 0); /* -D: every run of a requeued job */
        assert_string_equal(tu_state(&j->state), "REQUEUED");
        assert_int_equal(j->submit, AT - 20000);
        assert_int_equal(j->end, AT - 15000);
        assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_REQUEUED_DONE, 1)->state), "REQUEUED");
        j = fjob(&p, *v, TU_J_REQUEUED_DONE, 2);
        assert_string_equal(tu_state(&j->state), "COMPLETED");
        assert_int_equal(j->submit, AT - 9000);
        assert_int_equal(j->eligible, AT - 9000 + 121);
        assert_int_equal(j->restart_cnt, vn >= 42 ? 2 : SA_UNSET);
        assert_int_equal(fjob(&p, *v, TU_J_REQUEUED_DONE, 1)->restart_cnt, vn >= 42 ? 1 : SA_UNSET);
        assert_null(tu_find_job_n(&p, TU_J_REQUEUED_DONE, 3));
        /* waiting for its requeue delay: not eligible yet, so only the first run is in sacct */
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_REQUEUED, 0)->state), "REQUEUED");
        assert_null(tu_find_job_n(&p, TU_J_REQUEUED, 1));
        assert_string_equal(tu_state(&fjob(&p, *v, TU_J_REQUEUED_RUN, 1)->state), "RUNNING");
        /* never eligible: absent, as Slurm leaves them out of a time window */
        assert_null(tu_find_job(&p, TU_J_HELD));
        assert_null(tu_find_job(&p, TU_J_DEP));
        assert_null(tu_find_job(&p, TU_J_LATER));

        j = fjob(&p, *v, TU_J_SWEEP, 0); /* the raw database bitmap becomes ranges */
        assert_string_equal(j->job_id_display, "1030_[15-100%10]");
        assert_string_equal(j->array_task_string, "15-100");
        assert_int_equal(strncmp(xs(j, "array_task_raw"), "0x", 2), 0);
        assert_string_equal(fjob(&p, *v, TU_J_SWEEP + 1, 0)->job_id_display, "1030_1");
        assert_string_equal(fjob(&p, *v, TU_J_SMALL_ARRAY, 0)->job_id_display, "1045_4");
        j = fjob(&p, *v, TU_J_HET_RUN + 1, 0); /* a het component without a batch step */
        assert_string_equal(j->job_id_display, "1049+1");
        assert_string_equal(step_ids(j), "extern,0");
        j = fjob(&p, *v, TU_J_TRAIN, 0);
        assert_int_equal(j->alloc.gpu_total, 4);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 4);
        assert_int_equal(j->steps[0].alloc.gpu_total, 4);
        assert_int_equal(j->steps[1].alloc.gpu_total, 0); /* extern */
        assert_int_equal(sa_gpus_get(&fjob(&p, *v, TU_J_TWO_TYPES, 0)->alloc.gpus, "h200"), 1);
        assert_int_equal(fjob(&p, *v, TU_J_FOREVER, 0)->time_limit, SA_INFINITE);
        assert_string_equal(fjob(&p, *v, TU_J_HOSTILE, 0)->name, TU_HOSTILE_NAME);
        if (vn >= 43) /* step time.limit kept */
            assert_non_null(json_object_get(json_object_get(fjob(&p, *v, TU_J_OK, 0)->steps[0].extra, "time"),
                                            "limit"));
        tu_parsed_clear(&p);
    }
}

/* One array holding records of different versions (as a hand-merged fixture does): the shape is
 * decided per field, so each reads as it would alone. */
static void test_fixture_mixed_versions(void **state)
{
    json_t *doc = json_object(), *jobs = json_array();
    json_error_t jerr;
    tu_parsed_t p;
    sa_error_t err;
    char *text;
    (void)state;

    for (const char *const *v = tu_gen_versions; *v; v++) {
        char rel[128];
        json_t *d;
        size_t i;
        json_t *e;

        snprintf(rel, sizeof rel, "gen/%s/squeue.json", *v);
        d = json_load_file(tu_fixture(rel), 0, &jerr);
        if (!d)
            fail_msg("%s: %s", rel, jerr.text);
        json_array_foreach(json_object_get(d, "jobs"), i, e) {
            /* one job of each version, a different one each time */
            if (json_integer_value(json_object_get(e, "job_id")) == TU_J_OK + (v - tu_gen_versions) * 3)
                json_array_append(jobs, e);
        }
        json_decref(d);
    }
    json_object_set_new(doc, "jobs", jobs);
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_true(tu_parse_mem(text, strlen(text), NULL, &p, &err));
    free(text);
    assert_int_equal(p.njobs, 8);
    assert_string_equal(fjob(&p, "mixed", TU_J_OK, 0)->nodes, "c[0010-0011]");              /* v0.0.37 */
    assert_int_equal(sa_gpus_get(&fjob(&p, "mixed", TU_J_LLM, 0)->gres_gpus, "h100"), 16); /* v0.0.38 */
    assert_int_equal(fjob(&p, "mixed", TU_J_FAIL3, 0)->exit_code, 3);                       /* v0.0.39 */
    assert_int_equal(fjob(&p, "mixed", TU_J_CANCELLED, 0)->exit_signal, 15);                /* v0.0.40 */
    assert_string_equal(fjob(&p, "mixed", TU_J_NODEFAIL, 0)->nodes, "c0003");               /* v0.0.41 */
    assert_int_equal(extra_int(fjob(&p, "mixed", TU_J_QUEUED, 0), "expected_start"), AT + 3600); /* .42 */
    assert_true(fjob(&p, "mixed", TU_J_HELD, 0)->eligible == SA_UNSET);                     /* v0.0.43 */
    assert_string_equal(fjob(&p, "mixed", TU_J_MULTI_PART, 0)->partition, "cpu,long");      /* v0.0.44 */
    tu_parsed_clear(&p);
}

/* ---- fixtures/slurm-22.05/: real 22.05.8 output (openapi v0.0.38) -------------------------------- */

static int64_t iso(const char *s)
{
    int64_t t;
    assert_true(sa_time_parse_text(s, &t, NULL));
    return t;
}

static void test_fixture_2205_squeue(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    tu_parse_fixture("slurm-22.05/squeue-A.json", &p); /* early: pending reasons, arrays, het */
    check_basics(&p, SA_KIND_SQUEUE_JSON);
    j = fjob(&p, "A", 2, 0); /* exit 3: raw 768 */
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_string_equal(j->reason, "NonZeroExitCode");
    assert_int_equal(j->exit_code, 3);
    assert_int_equal(j->exit_signal, 0);
    assert_string_equal(j->name, "fail");
    assert_string_equal(j->account, "physics");
    j = fjob(&p, "A", 4, 0);
    assert_string_equal(j->job_id_display, "4_[1-5%2]");
    assert_string_equal(j->array_task_string, "1-5%2");
    assert_int_equal(j->array_max_tasks, 2);
    j = fjob(&p, "A", 6, 0); /* het component 1 asks for a GPU in the old gres: form */
    assert_string_equal(j->job_id_display, "5+1");
    assert_int_equal(j->het_job_offset, 1);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "Resources");
    assert_int_equal(sa_gpus_get(&j->req.gpus, "a100"), 1);
    assert_string_equal(xs(j, "tres_per_node"), "gres:gpu:a100:1");
    assert_true(j->start == SA_UNSET && j->alloc.cpu == SA_UNSET);
    j = fjob(&p, "A", 11, 0);
    assert_string_equal(j->reason, "JobHeldUser");
    assert_true(j->eligible == SA_UNSET);
    assert_string_equal(fjob(&p, "A", 12, 0)->reason, "Dependency");
    j = fjob(&p, "A", 15, 0);
    assert_string_equal(j->reason, "ReqNodeNotAvail");
    assert_string_equal(j->state_description, "ReqNodeNotAvail, UnavailableNodes:ghost[1-2]");
    assert_int_equal(j->node_count, 3);
    assert_int_equal(j->cpus, 3);
    assert_string_equal(fjob(&p, "A", 16, 0)->job_id_display, "16_[1-10%3]");
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/squeue-B.json", &p); /* the GPU job running */
    j = fjob(&p, "B", 7, 0);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(sa_gpus_get(&j->gres_gpus, "a100"), 2);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->req.gpu_total, 2);
    assert_int_equal(j->alloc.mem_mb, 500);
    assert_int_equal(j->derived_exit_code, 2); /* its first srun exited 2 */
    assert_string_equal(xs(j, "tres_per_node"), "gres:gpu:a100:2");
    j = fjob(&p, "B", 3, 0); /* kill -9 of the batch shell: raw 9 */
    assert_string_equal(j->reason, "JobLaunchFailure");
    assert_int_equal(j->exit_signal, 9);
    j = fjob(&p, "B", 14, 0); /* alice's job, cancelled by root */
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(j->user, "alice");
    assert_string_equal(j->qos, "high");
    assert_int_equal(j->exit_signal, 15);
    j = fjob(&p, "B", 4, 0); /* the last task 4_5 kept the master's raw id 4 */
    assert_string_equal(j->job_id_display, "4_5");
    assert_int_equal(j->array_task_id, 5);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    j = fjob(&p, "B", 19, 0);
    assert_string_equal(j->job_id_display, "4_3");
    assert_int_equal(j->exit_code, 1);
    assert_int_equal(j->array_max_tasks, 2);
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/squeue-requeued.json", &p); /* requeued, waiting for its delay */
    j = fjob(&p, "requeued", 9, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_string_equal(j->reason, "BeginTime");
    assert_int_equal(j->restart_cnt, 1);
    assert_int_equal(j->submit, iso("2026-11-26T06:29:04"));
    assert_int_equal(j->eligible, iso("2026-11-26T06:31:05"));
    assert_true(j->start == SA_UNSET);
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/squeue-C.json", &p);
    j = fjob(&p, "C", 8, 0);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_string_equal(j->reason, "TimeLimit");
    assert_int_equal(j->time_limit, 1);
    assert_int_equal(j->exit_code, 143); /* the batch shell's own exit after SIGTERM */
    assert_string_equal(fjob(&p, "C", 12, 0)->reason, "DependencyNeverSatisfied");
    assert_int_equal(fjob(&p, "C", 7, 0)->derived_exit_code, 2);
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/squeue-E.json", &p); /* -j 16 ignored: every job */
    assert_int_equal(p.njobs, 20);
    j = fjob(&p, "E", 16, 0);
    assert_int_equal(j->array_job_id, 16);
    assert_true(j->array_task_id == SA_UNSET);
    assert_string_equal(j->array_task_string, "1-10%3");
    assert_int_equal(j->array_max_tasks, 3);
    assert_string_equal(j->reason, "JobHeldUser");
    j = fjob(&p, "E", 10, 0); /* cancelled while pending: start = end */
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_int_equal(j->start, iso("2026-11-26T06:30:15"));
    assert_int_equal(j->end, j->start);
    j = fjob(&p, "E", 9, 0);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_int_equal(j->restart_cnt, 1);
    assert_int_equal(j->start, iso("2026-11-26T06:29:28"));
    assert_int_equal(j->end, iso("2026-11-26T06:30:13"));
    tu_parsed_clear(&p);
}

static void test_fixture_2205_sacct(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;

    tu_parse_fixture("slurm-22.05/sacct-D.json", &p);
    check_basics(&p, SA_KIND_SACCT_JSON);
    j = fjob(&p, "D", 9, 0); /* the requeued run, then the final one */
    assert_string_equal(tu_state(&j->state), "REQUEUED");
    assert_int_equal(j->start, iso("2026-11-26T06:28:58"));
    assert_int_equal(j->end, iso("2026-11-26T06:29:03"));
    assert_string_equal(step_ids(j), "batch");
    assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
    assert_int_equal(j->steps[0].exit_signal, 15);
    j = fjob(&p, "D", 9, 1);
    assert_string_equal(tu_state(&j->state), "COMPLETED");
    assert_int_equal(j->submit, iso("2026-11-26T06:29:04"));
    assert_int_equal(j->elapsed, 45);
    assert_null(tu_find_job_n(&p, 9, 2));
    j = fjob(&p, "D", 1, 0); /* step ids: "batch" (string), 0 and 1 (integers) */
    assert_string_equal(step_ids(j), "batch,0,1");
    assert_string_equal(j->steps[1].name, "hostname");
    assert_string_equal(j->steps[2].name, "sleep");
    assert_int_equal(j->steps[2].elapsed, 3);
    assert_string_equal(j->steps[2].nodes, "vm");
    j = fjob(&p, "D", 2, 0); /* exit 3 reported as SUCCESS / 0 by dbv0.0.38: unreliable */
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 0);
    assert_false(j->exit_reliable);
    assert_int_equal(fjob(&p, "D", 3, 0)->exit_signal, 9);
    j = fjob(&p, "D", 5, 0); /* het component cancelled while pending: start null */
    assert_string_equal(j->job_id_display, "5+0");
    assert_true(j->start == SA_UNSET && j->elapsed == SA_UNSET);
    assert_null(j->nodes);
    assert_int_equal(j->nsteps, 0);
    assert_string_equal(fjob(&p, "D", 6, 0)->job_id_display, "5+1");
    j = fjob(&p, "D", 7, 0); /* GPUs typed and untyped; the failing first step */
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->alloc.gpus.n, 1);
    assert_string_equal(step_ids(j), "batch,0,1");
    assert_string_equal(tu_state(&j->steps[1].state), "FAILED");
    assert_int_equal(j->steps[1].alloc.gpu_total, 2);
    j = fjob(&p, "D", 4, 0); /* task 4_5 with raw id 4 */
    assert_string_equal(j->job_id_display, "4_5");
    assert_int_equal(j->array_max_tasks, 2);
    assert_string_equal(j->reason, "JobArrayTaskLimit");
    assert_string_equal(fjob(&p, "D", 17, 0)->job_id_display, "4_1");
    assert_string_equal(tu_state(&fjob(&p, "D", 8, 0)->state), "TIMEOUT");
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/sacct-A.json", &p); /* mid-run */
    j = fjob(&p, "A", 3, 0);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_true(j->end == SA_UNSET);
    assert_true(j->steps[0].end == SA_UNSET);
    j = fjob(&p, "A", 4, 0); /* the pending array, its tasks in the raw bitmap */
    assert_string_equal(j->job_id_display, "4_[1-5%2]");
    j = fjob(&p, "A", 7, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_true(j->start == SA_UNSET && j->elapsed == SA_UNSET);
    assert_int_equal(j->req.gpu_total, 2);
    assert_int_equal(j->alloc.gpu_total, 0);
    tu_parsed_clear(&p);
}

/* sacct JSON required.CPUs (sacct text's ReqCPUS) is the requested CPUs when tres.requested has no cpu. */
static void test_sacct_required_cpus(void **state)
{
    tu_parsed_t p;
    sa_error_t err;
    (void)state;
    assert_true(parse_text("{\"jobs\":[{\"job_id\":9,\"state\":{\"current\":\"PENDING\"},\"time\":{},"
                           "\"required\":{\"CPUs\":36},\"tres\":{\"requested\":[{\"type\":\"mem\",\"count\":1024}]}},"
                           "{\"job_id\":10,\"state\":{\"current\":\"PENDING\"},\"time\":{},\"required\":{\"CPUs\":8},"
                           "\"tres\":{\"requested\":[{\"type\":\"cpu\",\"count\":2}]}}]}",
                           &p, &err));
    assert_int_equal(p.njobs, 2);
    assert_int_equal(p.jobs[0]->req.cpu, 36);
    assert_int_equal(p.jobs[0]->req.mem_mb, 1024);
    assert_int_equal(p.jobs[1]->req.cpu, 2); /* tres.requested wins; required.CPUs is kept */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p.jobs[1]->extra, "required"), "CPUs")), 8);
    assert_null(p.jobs[0]->extra ? json_object_get(p.jobs[0]->extra, "required") : NULL);
    tu_parsed_clear(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sacct_required_cpus),
        cmocka_unit_test(test_all_squeue_samples),
        cmocka_unit_test(test_all_sacct_samples),
        cmocka_unit_test(test_squeue_v0037_handmerged),
        cmocka_unit_test(test_squeue_v0038_exitcodes_array_het),
        cmocka_unit_test(test_squeue_v0038_gpu_gres_detail),
        cmocka_unit_test(test_squeue_v0038_requeued_timeout),
        cmocka_unit_test(test_squeue_v0038_array_meta_record),
        cmocka_unit_test(test_squeue_v0039_30jobs),
        cmocka_unit_test(test_squeue_v0040_hetjob),
        cmocka_unit_test(test_squeue_v0040_gpu_multi_types),
        cmocka_unit_test(test_squeue_v0040_array_and_14jobs),
        cmocka_unit_test(test_squeue_v0041),
        cmocka_unit_test(test_squeue_v0042),
        cmocka_unit_test(test_squeue_v0043),
        cmocka_unit_test(test_squeue_v0044),
        cmocka_unit_test(test_sacct_v0037),
        cmocka_unit_test(test_sacct_v0038_requeued_steps),
        cmocka_unit_test(test_sacct_v0038_array_failed),
        cmocka_unit_test(test_sacct_v0039),
        cmocka_unit_test(test_sacct_v0040),
        cmocka_unit_test(test_sacct_v0041),
        cmocka_unit_test(test_sacct_v0042_v0043),
        cmocka_unit_test(test_sacct_v0044),
        cmocka_unit_test(test_state_forms),
        cmocka_unit_test(test_sacct_tres_list),
        cmocka_unit_test(test_kind),
        cmocka_unit_test(test_bad_elements),
        cmocka_unit_test(test_fixture_squeue_versions),
        cmocka_unit_test(test_fixture_sacct_json_versions),
        cmocka_unit_test(test_fixture_mixed_versions),
        cmocka_unit_test(test_fixture_2205_squeue),
        cmocka_unit_test(test_fixture_2205_sacct),
    };
    return tu_run_group_tests("job_json", tests, NULL, NULL);
}
