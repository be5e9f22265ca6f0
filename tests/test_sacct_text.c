/*
 * test_sacct_text.c - sacct -P / -p text (ingest/parse_sacct_text.c) and
 * scontrol show nodes -o text (ingest/parse_scontrol_text.c).
 *
 * Every file in slurm-samples/sacct-parsable/ is parsed (the -n captures with the
 * field lists of SOURCES.md, tu_sample_fields()); field values asserted below were
 * read from the samples themselves. Where ../shared is absent those cases are skipped
 * (saying why) and the same kinds of checks run over the repository's fixtures:
 * fixtures/gen/<version>/ (tools/gen-cluster) and fixtures/slurm-22.05/ (real output).
 */
#include "testutil.h"
#include "tu_parse.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobdoc.h"
#include "sa_slurmtext.h"
#include "sa_time.h"

/* ---- helpers ------------------------------------------------------------------ */

/* Parses sacct-parsable/<name> (with its field list when it has no header). */
static void parse_sacct(const char *name, tu_parsed_t *p)
{
    char rel[512];
    sa_sacct_text_opts_t opts = {0};
    sa_error_t err;

    tu_require_samples();
    snprintf(rel, sizeof rel, "sacct-parsable/%s", name);
    opts.fields = tu_sample_fields(rel);
    sa_error_clear(&err);
    if (!tu_parse_file(tu_sample(rel), &opts, p, &err))
        fail_msg("%s: %s", name, err.message);
    assert_int_equal(p->kind, SA_KIND_SACCT_TEXT);
}

/* Parses inline text; returns success, the error in *err. */
static bool parse_text(const char *text, const char *delim, const char *fields, tu_parsed_t *p, sa_error_t *err)
{
    sa_sacct_text_opts_t opts = {0};
    opts.delimiter = delim;
    opts.fields = fields;
    sa_error_clear(err);
    return tu_parse_mem(text, strlen(text), &opts, p, err);
}

/* Inline text that must parse. */
static void text_ok(const char *text, const char *delim, const char *fields, tu_parsed_t *p)
{
    sa_error_t err;
    if (!parse_text(text, delim, fields, p, &err))
        fail_msg("'%.60s...': %s", text, err.message);
}

/* Inline text that must fail with each of the wanted substrings in a one-line error. */
static void text_bad(const char *text, const char *fields, const char *want1, const char *want2)
{
    tu_parsed_t p;
    sa_error_t err;

    if (parse_text(text, NULL, fields, &p, &err))
        fail_msg("'%.60s...' parsed (%zu jobs)", text, p.njobs);
    if (!strstr(err.message, want1) || (want2 && !strstr(err.message, want2)))
        fail_msg("error '%s' lacks '%s' / '%s'", err.message, want1, want2 ? want2 : "");
    assert_null(strchr(err.message, '\n'));
    tu_parsed_clear(&p);
}

static sa_job_t *must_job(tu_parsed_t *p, int64_t id, size_t nth)
{
    sa_job_t *j = tu_find_job_n(p, id, nth);
    if (!j)
        fail_msg("job %lld (#%zu) not found", (long long)id, nth);
    return j;
}

/* The job whose display id is display. */
static sa_job_t *must_display(tu_parsed_t *p, const char *display)
{
    for (size_t i = 0; i < p->njobs; i++) {
        if (p->jobs[i]->job_id_display && strcmp(p->jobs[i]->job_id_display, display) == 0)
            return p->jobs[i];
    }
    fail_msg("job %s not found", display);
    return NULL;
}

static sa_step_t *must_step(sa_job_t *j, const char *id)
{
    for (size_t i = 0; i < j->nsteps; i++) {
        if (j->steps[i].id && strcmp(j->steps[i].id, id) == 0)
            return &j->steps[i];
    }
    fail_msg("job %lld: step %s not found", (long long)j->job_id, id);
    return NULL;
}

static int64_t when(const char *s)
{
    int64_t t;
    assert_true(sa_time_parse_text(s, &t, NULL));
    return t;
}

static size_t count_steps(const tu_parsed_t *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->njobs; i++)
        n += p->jobs[i]->nsteps;
    return n;
}

/* ---- every file -------------------------------------------------------------------- */

/* Jobs and steps of every capture; jobs + steps = data lines (no line is dropped). */
static void test_every_sacct_file(void **state)
{
    static const struct {
        const char *name;
        size_t jobs, steps;
    } want[] = {
        {"local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", 17, 18},
        {"local-sacct-P-X_22.05.8_allocations-only.txt", 16, 0},
        {"local-sacct-P-n_22.05.8_noheader.txt", 16, 17},
        {"local-sacct-p_22.05.8_usage-fields-trailing-pipe.txt", 16, 17},
        {"sacct-P-51fields_slurm2sql-aalto-2019_steps-cancelled-by-comment-json.txt", 2, 3},
        {"sacct-P-noheader-xdmod26fields_2020_running-pending-unknown-start.txt", 2, 0},
        {"sacct-P-noheader-xdmod26fields_ubhpc-2015-2016_cancelled-by-reqmem-Mn-Mc.txt", 4, 0},
        {"sacct-P-noheader-xdmod26fields_ubhpc-2015_array-bracket-ranges.txt", 6, 0},
        {"sacct-P_torchx-test_cancelled-by-uid-exitcode-0-15.txt", 1, 2},
        {"sacct-P_torchx-test_hetjob-1853+N-steps.txt", 3, 4},
        {"sacct-p-snowman-delim-37fields_habrok-2023-2024_gpu-tresusage-none-start.txt", 100, 142},
        {"sacct-p-snowman-delim_peregrine-2021_reqmem-n-c-suffix.txt", 37, 48},
        {"sacct-p-trailing-pipe_beluga-2021_steps-arrays.txt", 680, 1264},
        {"sacct-p-trailing-pipe_cedar-2021_steps-arrays-cancelled-by.txt", 382, 570},
    };
    char dir[4096];
    struct dirent **names;
    int n, seen = 0;
    (void)state;

    /* each file of the directory must be in the table (a new sample needs its counts) */
    tu_require_samples();
    snprintf(dir, sizeof dir, "%s/sacct-parsable", tu_samples_dir());
    n = scandir(dir, &names, NULL, alphasort);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        tu_parsed_t p;
        size_t k;

        if (name[0] == '.') {
            free(names[i]);
            continue;
        }
        for (k = 0; k < sizeof want / sizeof want[0]; k++) {
            if (strcmp(want[k].name, name) == 0)
                break;
        }
        if (k == sizeof want / sizeof want[0])
            fail_msg("%s: not in the table of this test", name);
        parse_sacct(name, &p);
        if (p.njobs != want[k].jobs || count_steps(&p) != want[k].steps)
            fail_msg("%s: %zu jobs %zu steps, want %zu %zu", name, p.njobs, count_steps(&p), want[k].jobs,
                     want[k].steps);
        for (size_t j = 0; j < p.njobs; j++) {
            assert_int_equal(p.jobs[j]->source, SA_SRC_SACCT_TEXT);
            assert_true(p.jobs[j]->exit_reliable);
            assert_true(p.jobs[j]->job_id > 0);
        }
        tu_parsed_clear(&p);
        free(names[i]);
        seen++;
    }
    free(names);
    assert_int_equal(seen, (int)(sizeof want / sizeof want[0]));
}

/* cedar / beluga (-p, trailing '|'): every line but the header is a job or a step. */
static void test_trailing_pipe_line_counts(void **state)
{
    static const char *const files[] = {"sacct-p-trailing-pipe_cedar-2021_steps-arrays-cancelled-by.txt",
                                        "sacct-p-trailing-pipe_beluga-2021_steps-arrays.txt"};
    (void)state;
    tu_require_samples();
    for (size_t i = 0; i < 2; i++) {
        char rel[512];
        size_t len, lines = 0;
        char *data;
        tu_parsed_t p;

        snprintf(rel, sizeof rel, "sacct-parsable/%s", files[i]);
        data = tu_read_file(tu_sample(rel), &len);
        for (size_t k = 0; k < len; k++)
            lines += data[k] == '\n';
        free(data);
        parse_sacct(files[i], &p);
        assert_int_equal(p.njobs + count_steps(&p), lines - 1);
        tu_parsed_clear(&p);
    }
}

static void test_cedar_values(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-p-trailing-pipe_cedar-2021_steps-arrays-cancelled-by.txt", &p);
    /* last line: rrg-bengioy-ad_gpu|3100560|4445622|run_job.sh|CANCELLED by 3100560|2021-06-08T11:40:58|... */
    j = must_job(&p, 4445622, 0);
    assert_string_equal(j->account, "rrg-bengioy-ad_gpu");
    assert_int_equal(j->user_id, 3100560);
    assert_string_equal(j->name, "run_job.sh");
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "3100560");
    assert_int_equal(j->start, when("2021-06-08T11:40:58"));
    /* an array task with its steps: 3114204_7, .batch, .extern */
    j = must_display(&p, "3114204_7");
    assert_int_equal(j->array_job_id, 3114204);
    assert_int_equal(j->array_task_id, 7);
    assert_int_equal(j->job_id, 3114204); /* no JobIDRaw column: the array's id */
    assert_int_equal(j->nsteps, 2);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(j->steps[1].id, "extern");
    assert_int_equal(j->steps[1].end, when("2021-06-08T00:02:15"));
    /* PENDING: Start/End Unknown */
    j = must_job(&p, 1395889, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(j->start, SA_UNSET);
    assert_int_equal(j->end, SA_UNSET);
    tu_parsed_clear(&p);
}

/* ---- local 22.05.8 captures ------------------------------------------------------------ */

/* -D: job 9 twice (REQUEUED, then COMPLETED), each with its own batch step. */
static void test_local_D_requeued(void **state)
{
    tu_parsed_t p;
    sa_job_t *a, *b;
    (void)state;
    parse_sacct("local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", &p);
    a = must_job(&p, 9, 0);
    b = must_job(&p, 9, 1);
    assert_null(tu_find_job_n(&p, 9, 2));
    assert_string_equal(tu_state(&a->state), "REQUEUED");
    assert_string_equal(tu_state(&b->state), "COMPLETED");
    assert_int_equal(a->submit, when("2026-11-25T21:37:49"));
    assert_int_equal(b->submit, when("2026-11-25T21:40:14"));
    assert_int_equal(b->eligible, when("2026-11-25T21:42:15"));
    assert_string_equal(b->reason, "BeginTime");
    assert_int_equal(a->nsteps, 1);
    assert_string_equal(tu_state(&a->steps[0].state), "CANCELLED");
    assert_int_equal(a->steps[0].exit_code, 0);
    assert_int_equal(a->steps[0].exit_signal, 15);
    assert_int_equal(b->nsteps, 1);
    assert_int_equal(b->steps[0].stats.max_rss_bytes, 3088 * 1024);
    assert_null(tu_json_str(b->steps[0].extra, "MaxRSS")); /* typed, not kept as text */
    assert_int_equal(a->elapsed, 8);
    assert_int_equal(b->elapsed, 45);
    assert_int_equal(b->time_limit, 5);
    tu_parsed_clear(&p);
}

/* -D: het job 5+0 / 5+1, cancelled while pending (Start=None, None assigned). */
static void test_local_D_het(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", &p);
    j = must_job(&p, 6, 0);
    assert_string_equal(j->job_id_display, "5+1");
    assert_int_equal(j->het_job_id, 5);
    assert_int_equal(j->het_job_offset, 1);
    assert_string_equal(j->partition, "gpu");
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "0");
    assert_int_equal(j->start, SA_UNSET); /* None */
    assert_int_equal(j->end, when("2026-11-25T21:39:11"));
    assert_null(j->nodes); /* None assigned */
    assert_int_equal(j->req.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&j->req.gpus, "a100"), 1);
    assert_int_equal(j->req.mem_mb, 300);
    assert_true(sa_tres_is_empty(&j->alloc));
    j = must_job(&p, 5, 0);
    assert_string_equal(j->job_id_display, "5+0");
    assert_int_equal(j->het_job_offset, 0);
    assert_int_equal(j->array_job_id, SA_UNSET);
    tu_parsed_clear(&p);
}

/* -D: GPU job 7, typed + untyped AllocTRES = 2 GPUs of type a100; DerivedExitCode 2:0. */
static void test_local_D_gpu(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    parse_sacct("local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", &p);
    j = must_job(&p, 7, 0);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(j->alloc.gpus.n, 1);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->alloc.cpu, 1);
    assert_int_equal(j->alloc.mem_mb, 500);
    assert_true(j->alloc.billing == 1.0);
    assert_int_equal(j->exit_code, 0);
    assert_int_equal(j->derived_exit_code, 2);
    assert_int_equal(j->derived_exit_signal, 0);
    assert_string_equal(j->account, "root");
    assert_int_equal(j->nsteps, 3);
    s = must_step(j, "0");
    assert_string_equal(s->name, "nvidia-smi");
    assert_string_equal(tu_state(&s->state), "FAILED");
    assert_int_equal(s->exit_code, 2);
    assert_int_equal(s->alloc.gpu_total, 2);
    assert_string_equal(s->nodes, "vm");
    s = must_step(j, "batch");
    assert_int_equal(s->stats.max_rss_bytes, 12248 * 1024);
    tu_parsed_clear(&p);
}

/* -D: array task 4_5 kept raw id 4; 4_1 has raw id 16; first job's plain values. */
static void test_local_D_array_and_plain(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("local-sacct-P-D_22.05.8_30fields-requeued-het-array-gpu.txt", &p);
    j = must_job(&p, 4, 0);
    assert_string_equal(j->job_id_display, "4_5");
    assert_int_equal(j->array_job_id, 4);
    assert_int_equal(j->array_task_id, 5);
    assert_int_equal(j->nsteps, 1);
    assert_string_equal(j->reason, "JobArrayTaskLimit");
    j = must_job(&p, 16, 0);
    assert_string_equal(j->job_id_display, "4_1");
    assert_int_equal(j->array_task_id, 1);
    j = must_job(&p, 18, 0);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_int_equal(j->exit_code, 1);

    j = must_job(&p, 1, 0);
    assert_string_equal(j->name, "ok");
    assert_string_equal(j->user, "root");
    assert_string_equal(j->qos, "normal");
    assert_int_equal(j->submit, 1795642669);
    assert_int_equal(j->start, 1795642670);
    assert_int_equal(j->end, 1795642673);
    assert_int_equal(j->elapsed, 3);
    assert_int_equal(j->time_limit, 10);
    assert_int_equal(j->node_count, 1);
    assert_int_equal(j->cpus, 1);
    assert_int_equal(j->req.mem_mb, 200);
    assert_string_equal(j->nodes, "vm");
    assert_string_equal(j->reason, "None");
    assert_null(j->reservation);
    assert_true(j->stats.cpu_s > 0.0315 && j->stats.cpu_s < 0.0325); /* TotalCPU 00:00.032 */
    assert_null(tu_json_str(j->extra, "TotalCPU"));
    assert_null(tu_json_str(j->extra, "ReqCPUS")); /* modelled: req.cpu (ReqTRES says the same) */
    assert_int_equal(j->req.cpu, 1);
    assert_int_equal(j->stats.max_rss_bytes, SA_UNSET); /* empty: not gathered, never 0 */
    assert_int_equal(j->stats.energy_j, SA_UNSET);      /* ConsumedEnergyRaw 0: no energy plugin */
    assert_int_equal(j->nsteps, 3);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(j->steps[1].id, "0");
    assert_string_equal(j->steps[2].id, "1");
    assert_string_equal(j->steps[2].name, "sleep");
    assert_int_equal(j->steps[2].elapsed, 3);
    /* pending job 15 */
    j = must_job(&p, 15, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(j->start, SA_UNSET);
    assert_int_equal(j->end, SA_UNSET);
    assert_int_equal(j->req.node, 3);
    tu_parsed_clear(&p);
}

/* -n with the field list: same jobs; delimiter detected after the job id. */
static void test_local_noheader(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("local-sacct-P-n_22.05.8_noheader.txt", &p);
    j = must_job(&p, 6, 0);
    assert_string_equal(j->job_id_display, "5+1");
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_int_equal(j->start, SA_UNSET);
    assert_int_equal(j->time_limit, 5);
    j = must_job(&p, 3, 0);
    assert_int_equal(j->exit_code, 0);
    assert_int_equal(j->exit_signal, 9);
    assert_string_equal(tu_state(&j->steps[0].state), "CANCELLED");
    tu_parsed_clear(&p);
}

/* -p with usage fields: TotalCPU, MaxRSS and the TRESUsage* entries typed. */
static void test_local_usage_trailing(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    parse_sacct("local-sacct-p_22.05.8_usage-fields-trailing-pipe.txt", &p);
    j = must_job(&p, 7, 0);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_string_equal(tu_json_str(j->extra, "CPUTimeRAW"), "40");
    assert_true(j->stats.cpu_s > 0.0415 && j->stats.cpu_s < 0.0425); /* 00:00.042 */
    assert_true(j->stats.user_cpu_s > 0.0055 && j->stats.user_cpu_s < 0.0065);
    s = must_step(j, "batch");
    /* the entries no usage member reads stay in extra as printed; fs/disk is read from InTot only */
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInMax"), "cpu=00:00:00,energy=0,fs/disk=53765,pages=2,vmem=221228K");
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInTot"), "cpu=00:00:00,energy=0,pages=2,vmem=221228K");
    assert_int_equal(s->stats.mem_total_bytes, 12248 * 1024);
    assert_int_equal(s->stats.max_rss_bytes, 12248 * 1024);
    assert_int_equal(s->stats.disk_read_bytes, 53765);
    assert_true(s->stats.gpu_util_pct < 0); /* no gres/gpuutil: not gathered */
    assert_int_equal(s->stats.gpu_mem_bytes, SA_UNSET);
    assert_int_equal(s->stats.energy_j, SA_UNSET); /* energy=0 */
    s = must_step(j, "0");
    assert_int_equal(s->stats.max_rss_bytes, SA_UNSET); /* TRESUsageInMax empty */
    j = must_job(&p, 5, 0);
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "0");
    tu_parsed_clear(&p);
}

/* ---- other captures --------------------------------------------------------------------- */

/* aalto 2019, 51 fields: CANCELLED by, JSON in Comment, End=Unknown, ReqMem without suffix. */
static void test_aalto_51_fields(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    parse_sacct("sacct-P-51fields_slurm2sql-aalto-2019_steps-cancelled-by-comment-json.txt", &p);
    j = must_job(&p, 43974388, 0);
    assert_string_equal(tu_state(&j->state), "CANCELLED");
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "1300204");
    assert_int_equal(j->time_limit, 7200); /* 5-00:00:00 */
    assert_int_equal(j->elapsed, 3 * 3600 + 33 * 60 + 25);
    assert_string_equal(j->group, "group1");
    assert_int_equal(j->req.mem_mb, 2200); /* 2252800K */
    assert_string_equal(tu_json_str(j->extra, "SubmitLine"), "srun test_submit_line");
    assert_string_equal(tu_json_str(j->extra, "Priority"), "14586720");
    s = must_step(j, "batch");
    assert_int_equal(s->exit_signal, 9);
    assert_int_equal(s->stats.max_rss_bytes, 231092 * 1024);
    assert_string_equal(tu_json_str(s->extra, "AveDiskWrite"), "0.31M");
    j = must_job(&p, 43977780, 0);
    assert_int_equal(j->end, SA_UNSET);
    s = must_step(j, "batch");
    assert_int_equal(s->start, SA_UNSET);
    assert_string_equal(tu_json_str(s->extra, "Comment"),
                        "{\"gpu_mem_max\": 12345, \"ncpu\": 2, \"ngpu\": 1, \"gpu_util\": 53.1}");
    tu_parsed_clear(&p);
}

/* xdmod ubhpc 2015-2016: ReqMem Mn/Mc kept as text, CANCELLED by uid, untyped GPUs. */
static void test_xdmod_reqmem_suffix(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-P-noheader-xdmod26fields_ubhpc-2015-2016_cancelled-by-reqmem-Mn-Mc.txt", &p);
    j = must_job(&p, 4103947, 0);
    assert_string_equal(j->cluster, "ub-hpc");
    assert_string_equal(j->partition, "general-compute");
    assert_string_equal(j->group, "anon");
    assert_int_equal(j->group_id, 918273);
    assert_string_equal(j->user, "unknown");
    assert_int_equal(j->user_id, 192837);
    assert_string_equal(tu_state(&j->state), "TIMEOUT");
    assert_int_equal(j->exit_code, 1);
    assert_string_equal(tu_json_str(j->extra, "reqmem"), "3000Mc");
    assert_int_equal(j->req.mem_mb, 3000 * 256); /* per CPU (c) x 256 CPUs: the total, for memory efficiency */
    assert_int_equal(j->alloc.cpu, 256);
    assert_int_equal(j->alloc.node, 32);
    assert_int_equal(j->node_count, 32);
    assert_int_equal(j->time_limit, 4320);
    /* ReqCPUS: the requested CPUs when ReqTRES (empty here) has no cpu (XDMoD's shredder expects 256, 36, 0) */
    assert_int_equal(j->req.cpu, 256);
    assert_null(tu_json_str(j->extra, "reqcpus"));
    j = must_job(&p, 4107166, 0);
    assert_int_equal(j->req.cpu, 36);
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "102216");
    assert_string_equal(tu_json_str(j->extra, "reqmem"), "48000Mn");
    assert_int_equal(j->elapsed, 2 * 86400 + 22 * 3600 + 3 * 60 + 4);
    j = must_job(&p, 5692623, 0);
    assert_null(j->partition);
    assert_int_equal(j->eligible, SA_UNSET);
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, ""), 2);
    assert_string_equal(j->nodes, "cpn-k16-35-01,cpn-k16-37-01");
    assert_string_equal(tu_json_str(j->extra, "reqmem"), "0n");
    assert_int_equal(j->req.cpu, 0);
    tu_parsed_clear(&p);
}

/* xdmod array ids: 4103947_100, pending meta records 4103947_[1-3], _[9-11,13,16-20]. */
static void test_xdmod_arrays(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-P-noheader-xdmod26fields_ubhpc-2015_array-bracket-ranges.txt", &p);
    j = must_display(&p, "4103947_100");
    assert_int_equal(j->job_id, 4103947);
    assert_int_equal(j->array_job_id, 4103947);
    assert_int_equal(j->array_task_id, 100);
    assert_null(j->array_task_string);
    j = must_display(&p, "4103947_[1-3]");
    assert_int_equal(j->array_task_id, SA_UNSET);
    assert_string_equal(j->array_task_string, "1-3");
    assert_int_equal(j->array_max_tasks, SA_UNSET);
    j = must_display(&p, "4103947_[9-11,13,16-20]");
    assert_string_equal(j->array_task_string, "9-11,13,16-20");
    j = must_display(&p, "4103947_[1,5]");
    assert_string_equal(j->array_task_string, "1,5");
    tu_parsed_clear(&p);
}

static void test_xdmod_running_pending(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-P-noheader-xdmod26fields_2020_running-pending-unknown-start.txt", &p);
    j = must_job(&p, 3483276, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(j->start, SA_UNSET);
    assert_int_equal(j->req.cpu, 40);
    assert_int_equal(j->req.mem_mb, 120000);
    assert_string_equal(j->name, "21PyNP4a4b");
    j = must_job(&p, 3451067, 0);
    assert_string_equal(tu_state(&j->state), "RUNNING");
    assert_int_equal(j->elapsed, 22 * 3600 + 32 * 60 + 22);
    assert_string_equal(tu_json_str(j->extra, "reqmem"), "48000Mn");
    assert_int_equal(j->req.mem_mb, 48000); /* from reqtres */
    tu_parsed_clear(&p);
}

/* torchx: het job 1853+N with steps; no JobIDRaw, so raw ids are 1853 + offset. */
static void test_torchx_het(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-P_torchx-test_hetjob-1853+N-steps.txt", &p);
    j = must_display(&p, "1853+0");
    assert_int_equal(j->job_id, 1853);
    assert_int_equal(j->het_job_id, 1853);
    assert_int_equal(j->nsteps, 2);
    assert_string_equal(j->steps[0].id, "batch");
    assert_string_equal(j->steps[1].id, "0");
    assert_null(j->account);
    assert_int_equal(j->cpus, 1); /* AllocCPUS */
    j = must_display(&p, "1853+2");
    assert_int_equal(j->job_id, 1855);
    assert_int_equal(j->het_job_offset, 2);
    assert_int_equal(j->nsteps, 1);
    assert_string_equal(j->steps[0].name, "echo");
    tu_parsed_clear(&p);
}

static void test_torchx_cancelled(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    parse_sacct("sacct-P_torchx-test_cancelled-by-uid-exitcode-0-15.txt", &p);
    j = must_job(&p, 89, 0);
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "2166");
    assert_int_equal(j->cpus, 8);
    assert_int_equal(j->steps[1].exit_signal, 15);
    assert_string_equal(j->steps[1].name, "process_allocator");
    tu_parsed_clear(&p);
}

/* habrok (-p -n, '☃'): Start=None, None assigned, typed + untyped GPUs, GPU usage typed. */
static void test_habrok_snowman(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    parse_sacct("sacct-p-snowman-delim-37fields_habrok-2023-2024_gpu-tresusage-none-start.txt", &p);
    j = must_job(&p, 4047445, 0);
    assert_int_equal(j->start, SA_UNSET);
    assert_null(j->nodes);
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "10290820");
    assert_int_equal(j->req.mem_mb, 32000);
    assert_int_equal(j->time_limit, 30);
    j = must_job(&p, 7965768, 0);
    assert_int_equal(j->alloc.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "v100"), 1);
    assert_int_equal(j->req.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&j->req.gpus, ""), 1);
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "10314909");
    assert_int_equal(j->time_limit, 23 * 60 + 59 + 24 * 60);
    s = must_step(j, "batch");
    /* TRESUsageInMax cpu=15:33:58,energy=0,fs/disk=934556828,gres/gpumem=20500736K,gres/gpuutil=90,
       mem=1294440K,...; TRESUsageOutTot energy=0,fs/disk=230856782740 */
    assert_true(s->stats.gpu_util_pct == 90.0);
    assert_int_equal(s->stats.gpu_mem_bytes, INT64_C(20500736) * 1024);
    assert_int_equal(s->stats.max_rss_bytes, INT64_C(1294440) * 1024);
    assert_int_equal(s->stats.disk_write_bytes, INT64_C(230856782740));
    assert_int_equal(s->stats.energy_j, SA_UNSET);
    assert_true(s->stats.system_cpu_s > 1388.3565 && s->stats.system_cpu_s < 1388.3575); /* 23:08.357 */
    assert_true(s->stats.cpu_s == 15 * 3600 + 33 * 60 + 59);                            /* 15:33:59 */
    s = must_step(j, "extern");
    assert_true(s->stats.gpu_util_pct == 0.0); /* gathered, and 0: kept */
    j = must_job(&p, 7818766, 0);
    assert_true(j->stats.cpu_s == 163.0 * 86400 + 18 * 60 + 41); /* TotalCPU 163-00:18:41 */
    assert_string_equal(tu_json_str(j->extra, "CPUTime"), "164-03:37:36");
    assert_string_equal(j->nodes, "omni[2-3]");
    assert_int_equal(j->node_count, 2);
    assert_int_equal(j->cpus, 128);
    j = must_job(&p, 7336818, 0);
    assert_string_equal(tu_state(&j->state), "NODE_FAIL");
    tu_parsed_clear(&p);
}

/* peregrine (-p -n, '☃'): ReqMem 100Gn kept, cpu=7-17:04:32 in usage, no final newline. */
static void test_peregrine_snowman(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    parse_sacct("sacct-p-snowman-delim_peregrine-2021_reqmem-n-c-suffix.txt", &p);
    j = must_job(&p, 20872560, 0);
    assert_string_equal(tu_json_str(j->extra, "ReqMem"), "100Gn");
    assert_int_equal(j->req.mem_mb, 100 * 1024 * j->node_count); /* per node (n) x NNodes */
    assert_true(j->node_count >= 1);
    assert_int_equal(j->time_limit, 8 * 24 * 60);
    assert_true(j->stats.cpu_s == 7.0 * 86400 + 17 * 3600 + 10 * 60 + 15); /* TotalCPU 7-17:10:15 */
    s = must_step(j, "0");
    assert_string_equal(s->name, "RC6A5");
    /* TRESUsageInTot cpu=7-17:04:32,energy=0,fs/disk=651343,mem=12653376K,pages=2432,vmem=432568K */
    assert_int_equal(s->stats.disk_read_bytes, 651343);
    assert_int_equal(s->stats.mem_total_bytes, INT64_C(12653376) * 1024); /* summed over the step's tasks */
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInTot"), "cpu=7-17:04:32,energy=0,pages=2432,vmem=432568K");
    assert_null(tu_json_str(s->extra, "TRESUsageOutTot")); /* energy=0,fs/disk=533698: both modelled */
    assert_string_equal(tu_json_str(s->extra, "NTasks"), "1");
    j = must_job(&p, 20940996, 0);
    assert_string_equal(tu_state(&j->state), "FAILED");
    assert_string_equal(tu_json_str(j->extra, "ReqMem"), "2Gn");
    /* the last line of the file has no "\n" */
    j = p.jobs[p.njobs - 1];
    assert_int_equal(j->job_id, 18120717);
    assert_string_equal(tu_json_str(j->extra, "ReqMem"), "430Gn");
    tu_parsed_clear(&p);
}

/* ---- framing and grammar on small inputs ---------------------------------------------- */

static void test_header_any_order_and_case(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    text_ok("state|JOBIDRAW|jobid|timelimit\nCOMPLETED|42|41_1|UNLIMITED\nCOMPLETED|42.batch|41_1.batch|\n", NULL,
            NULL, &p);
    assert_int_equal(p.njobs, 1);
    j = p.jobs[0];
    assert_int_equal(j->job_id, 42);
    assert_int_equal(j->array_job_id, 41);
    assert_int_equal(j->time_limit, SA_INFINITE);
    assert_int_equal(j->nsteps, 1);
    tu_parsed_clear(&p);
}

static void test_multibyte_delimiter_detected(void **state)
{
    tu_parsed_t p;
    (void)state;
    /* header with trailing ☃ (-p) */
    text_ok("JobID\xe2\x98\x83State\xe2\x98\x83\n1\xe2\x98\x83RUNNING\xe2\x98\x83\n", NULL, NULL, &p);
    assert_int_equal(p.njobs, 1);
    assert_string_equal(tu_state(&p.jobs[0]->state), "RUNNING");
    tu_parsed_clear(&p);
    /* no header: detected after the job id */
    text_ok("123_[1-10%3]\xe2\x98\x83PENDING\n", NULL, "JobID,State", &p);
    assert_int_equal(p.njobs, 1);
    assert_string_equal(p.jobs[0]->array_task_string, "1-10%3");
    assert_int_equal(p.jobs[0]->array_max_tasks, 3);
    assert_int_equal(p.jobs[0]->job_id, 123);
    tu_parsed_clear(&p);
    /* given by the caller */
    text_ok("JobID;;State\n7;;FAILED\n", ";;", NULL, &p);
    assert_string_equal(tu_state(&p.jobs[0]->state), "FAILED");
    tu_parsed_clear(&p);
}

static void test_framing_blank_crlf_no_final_newline(void **state)
{
    tu_parsed_t p;
    (void)state;
    text_ok("JobID|State\r\n\r\n1|RUNNING\r\n\n2|PENDING", NULL, NULL, &p);
    assert_int_equal(p.njobs, 2);
    assert_string_equal(tu_state(&p.jobs[1]->state), "PENDING");
    tu_parsed_clear(&p);
    /* -n with a field list, but the header came along anyway: it is skipped */
    text_ok("JobID|State\n1|RUNNING\n", NULL, "jobid,state", &p);
    assert_int_equal(p.njobs, 1);
    tu_parsed_clear(&p);
    /* header only: no jobs, no error */
    text_ok("JobID|State\n", NULL, NULL, &p);
    assert_int_equal(p.njobs, 0);
    tu_parsed_clear(&p);
}

static void test_step_grammar(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    text_ok("JobID|State\n123|RUNNING\n123.0+1|RUNNING\n123.TDB|PENDING\n123.interactive|RUNNING\n"
            "124+1|RUNNING\n124+1.0|RUNNING\n",
            NULL, NULL, &p);
    assert_int_equal(p.njobs, 2);
    j = p.jobs[0];
    assert_int_equal(j->nsteps, 3);
    assert_string_equal(j->steps[0].id, "0+1");
    assert_string_equal(j->steps[1].id, "TDB");
    assert_string_equal(j->steps[2].id, "interactive");
    j = p.jobs[1];
    assert_int_equal(j->job_id, 125);
    assert_string_equal(j->steps[0].id, "0");
    tu_parsed_clear(&p);
}

/* A step line whose allocation line is missing makes a job of its own. */
static void test_orphan_step_kept(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    text_ok("JobID|JobIDRaw|State|Cluster\n7|7|RUNNING|c1\n8_2.batch|20.batch|COMPLETED|c1\n8_2.0|20.0|FAILED|c1\n"
            "9|9|PENDING|c1\n",
            NULL, NULL, &p);
    assert_int_equal(p.njobs, 3);
    j = must_job(&p, 20, 0);
    assert_string_equal(j->job_id_display, "8_2");
    assert_int_equal(j->array_job_id, 8);
    assert_int_equal(j->array_task_id, 2);
    assert_null(j->state.base);
    assert_string_equal(j->cluster, "c1");
    assert_int_equal(j->nsteps, 2);
    assert_string_equal(tu_state(&j->steps[1].state), "FAILED");
    tu_parsed_clear(&p);
}

/*
 * TRESUsageInTot / InAve / InMax / OutTot: the entries the model reads become usage members (InTot's mem is
 * the step's memory summed over its tasks, mem_total_bytes); every other entry stays in extra as printed.
 */
static void test_tres_usage_extra(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    sa_step_t *s;
    (void)state;
    text_ok("JobID|State|MaxRSS|TRESUsageInTot|TRESUsageInAve|TRESUsageInMax|TRESUsageOutTot\n"
            "7|COMPLETED||cpu=00:01:00,mem=2048K,pages=3|||\n"
            "7.0|COMPLETED|1024K|cpu=00:10:00,energy=0,fs/disk=100,gres/gpuutil=90,mem=4096K,pages=7,vmem=9M|"
            "cpu=00:05:00,mem=2048K,vmem=4M|cpu=00:05:00,gres/gpumem=1M,mem=1024K,pages=4|energy=5,fs/disk=200,"
            "gres/shard=1\n"
            "7.1|COMPLETED||mem=1M|mem=1M|mem=1M|fs/disk=1\n",
            NULL, NULL, &p);
    assert_int_equal(p.njobs, 1);
    j = p.jobs[0];
    assert_int_equal(j->stats.mem_total_bytes, 2048 * 1024);
    assert_string_equal(tu_json_str(j->extra, "TRESUsageInTot"), "cpu=00:01:00,pages=3");
    s = must_step(j, "0");
    assert_int_equal(s->stats.mem_total_bytes, 4096 * 1024);
    assert_int_equal(s->stats.max_rss_bytes, 1024 * 1024);
    assert_int_equal(s->stats.ave_rss_bytes, 2048 * 1024);
    assert_int_equal(s->stats.disk_read_bytes, 100);
    assert_int_equal(s->stats.disk_write_bytes, 200);
    assert_int_equal(s->stats.gpu_mem_bytes, 1024 * 1024);
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInTot"), "cpu=00:10:00,energy=0,pages=7,vmem=9M");
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInAve"), "cpu=00:05:00,vmem=4M");
    assert_string_equal(tu_json_str(s->extra, "TRESUsageInMax"), "cpu=00:05:00,pages=4");
    assert_string_equal(tu_json_str(s->extra, "TRESUsageOutTot"), "gres/shard=1");
    s = must_step(j, "1");
    assert_int_equal(s->stats.mem_total_bytes, 1024 * 1024);
    assert_null(s->extra); /* every entry modelled */
    tu_parsed_clear(&p);
    text_bad("JobID|TRESUsageInTot\n7|mem=lots\n", NULL, "TRESUsageInTot", "lots");
}

/*
 * A capture's times in the zone it was made in (opts.tz): slurm2sql's Aalto capture (Europe/Helsinki; its
 * test expects Start 1564601354); without a zone the text is UTC, as the live call (TZ=UTC) prints it.
 */
static void test_local_time_zone(void **state)
{
    static const char text[] = "JobID|State|Submit|Start|End\n43974388|COMPLETED|2019-07-31T22:29:13|"
                               "2019-07-31T22:29:14|2019-08-01T02:02:39\n43974388.0|COMPLETED|2019-07-31T22:30:15|"
                               "2019-07-31T22:30:15|Unknown\n";
    sa_sacct_text_opts_t opts = {0};
    tu_parsed_t p;
    sa_error_t err;
    const char *tz = getenv("TZ") ? getenv("TZ") : "(unset)";
    char tz_before[64];
    (void)state;

    snprintf(tz_before, sizeof tz_before, "%s", tz);
    if (!sa_tz_valid("Europe/Helsinki", NULL)) {
        printf("  skipped: Europe/Helsinki is not in the zone database (install tzdata)\n");
        skip();
    }
    text_ok(text, NULL, NULL, &p);
    assert_int_equal(p.jobs[0]->start, 1564601354 + 3 * 3600); /* read as UTC */
    tu_parsed_clear(&p);
    opts.tz = "Europe/Helsinki";
    sa_error_clear(&err);
    if (!tu_parse_mem(text, strlen(text), &opts, &p, &err))
        fail_msg("%s", err.message);
    assert_int_equal(p.jobs[0]->start, 1564601354);
    assert_int_equal(p.jobs[0]->submit, 1564601353);
    assert_int_equal(p.jobs[0]->end, 1564614159);
    assert_int_equal(p.jobs[0]->steps[0].start, 1564601415);
    assert_int_equal(p.jobs[0]->steps[0].end, SA_UNSET);
    tu_parsed_clear(&p);
    assert_string_equal(getenv("TZ") ? getenv("TZ") : "(unset)", tz_before); /* put back */
    /* a zone the database does not have: the parse is refused, saying so */
    opts.tz = "Mars/Olympus_Mons";
    assert_false(tu_parse_mem(text, strlen(text), &opts, &p, &err));
    assert_non_null(strstr(err.message, "Mars/Olympus_Mons"));
    tu_parsed_clear(&p);
    /* slurm2sql's own capture, where ../shared is present */
    if (tu_samples_present()) {
        opts.tz = "Europe/Helsinki";
        if (!tu_parse_file(tu_sample("sacct-parsable/sacct-P-51fields_slurm2sql-aalto-2019_steps-cancelled-by-comment-"
                                     "json.txt"), &opts, &p, &err))
            fail_msg("%s", err.message);
        assert_int_equal(must_job(&p, 43974388, 0)->start, 1564601354);
        tu_parsed_clear(&p);
    }
}

/* ReqCPUS fills req.cpu when ReqTRES has no cpu; one that disagrees with ReqTRES stays in extra as printed. */
static void test_reqcpus(void **state)
{
    tu_parsed_t p;
    (void)state;
    text_ok("JobID|ReqCPUS|ReqTRES|State\n1|256||TIMEOUT\n2|0||COMPLETED\n3|4|cpu=4,mem=1G|COMPLETED\n"
            "4|8|cpu=2,node=1|COMPLETED\n5|3|mem=1G|PENDING\n5.batch|3||COMPLETED\n",
            NULL, NULL, &p);
    assert_int_equal(p.njobs, 5);
    assert_int_equal(must_job(&p, 1, 0)->req.cpu, 256);
    assert_null(must_job(&p, 1, 0)->extra);
    assert_int_equal(must_job(&p, 2, 0)->req.cpu, 0);
    assert_int_equal(must_job(&p, 3, 0)->req.cpu, 4);
    assert_null(must_job(&p, 3, 0)->extra);
    assert_int_equal(must_job(&p, 4, 0)->req.cpu, 2); /* ReqTRES wins; ReqCPUS is kept */
    assert_string_equal(tu_json_str(must_job(&p, 4, 0)->extra, "ReqCPUS"), "8");
    assert_int_equal(must_job(&p, 5, 0)->req.cpu, 3);
    assert_int_equal(must_job(&p, 5, 0)->req.mem_mb, 1024);
    assert_string_equal(tu_json_str(must_job(&p, 5, 0)->steps[0].extra, "ReqCPUS"), "3"); /* a step's stays in its extra */
    tu_parsed_clear(&p);
    text_bad("JobID|ReqCPUS\n5|many\n", NULL, "ReqCPUS", "many");
}

static void test_timelimit_forms(void **state)
{
    tu_parsed_t p;
    (void)state;
    text_ok("JobID|Timelimit|TimelimitRaw\n1|Partition_Limit|\n2|1-00:00:00|\n3||90\n4|00:01:00|UNLIMITED\n", NULL,
            NULL, &p);
    assert_int_equal(must_job(&p, 1, 0)->time_limit, SA_UNSET);
    assert_int_equal(must_job(&p, 2, 0)->time_limit, 1440);
    assert_int_equal(must_job(&p, 3, 0)->time_limit, 90);
    assert_int_equal(must_job(&p, 4, 0)->time_limit, SA_INFINITE);
    tu_parsed_clear(&p);
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_error_field_count(void **state)
{
    (void)state;
    /* a '|' inside JobName: Slurm does not escape it */
    text_bad("JobID|JobName|State\n1|ok|COMPLETED\n2|a|b|COMPLETED\n", NULL, "line 3", "job 2");
    text_bad("JobID|JobName|State\n1|ok\n", NULL, "line 2", "expected 3 fields, found 2");
    /* -p: the trailing delimiter plus one more field */
    text_bad("JobID|State|\n1|RUNNING|x|\n", NULL, "line 2", "job 1");
}

static void test_error_bad_values(void **state)
{
    (void)state;
    text_bad("JobID|Submit\n5|2026-13-45T00:00:00\n", NULL, "line 2: job 5: Submit", "2026-13-45");
    text_bad("JobID|AllocTRES\n5|cpu=abc\n", NULL, "AllocTRES", "cpu=abc");
    text_bad("JobID|ExitCode\n5|x\n", NULL, "ExitCode", "rc:signal");
    text_bad("JobID|NNodes\n5|many\n", NULL, "NNodes", "many");
    text_bad("JobID|ElapsedRaw\n5|99999999999999999999999\n", NULL, "ElapsedRaw", NULL);
    text_bad("JobID|ReqMem\n5|lots\n", NULL, "ReqMem", "lots");
    text_bad("JobID|State\nabc|RUNNING\n", NULL, "line 2", "cannot read job id");
    text_bad("JobID|State\n12_[3-4|RUNNING\n", NULL, "cannot read job id", NULL);
    text_bad("JobID|State\n|RUNNING\n", NULL, "line 2", "empty JobID");
    /* job ids as the JSON parsers take them: 1..2^53 (0 is no job) */
    text_bad("JobID|State\n0|RUNNING\n", NULL, "line 2", "job id 0 out of range");
    text_bad("JobID|JobIDRaw|State\n5|0|RUNNING\n", NULL, "JobIDRaw", "out of range");
    text_bad("JobID|State\n9007199254740993|RUNNING\n", NULL, "line 2", "out of range");
    text_bad("JobID|State\n1000_2+3|RUNNING\n", NULL, "line 2", "cannot read job id '1000_2+3'");
}

/*
 * TotalCPU, UserCPU, SystemCPU as a bare number ("1"): not a form sacct prints ([DD-[HH:]]MM:SS[.mmm]); seconds
 * or minutes (Slurm's own input rule) would be a guess. The record is kept, the member left absent, and the
 * value kept as printed in extra.
 */
static void test_cputime_bare_number(void **state)
{
    tu_parsed_t p;
    sa_job_t *j;
    (void)state;
    text_ok("JobID|State|TotalCPU|UserCPU|SystemCPU\n7|COMPLETED|1|00:00.500|0\n7.batch|COMPLETED|12|01:00|00:01\n",
            NULL, NULL, &p);
    assert_int_equal(p.njobs, 1);
    j = p.jobs[0];
    assert_true(j->stats.cpu_s < 0);
    assert_string_equal(tu_json_str(j->extra, "TotalCPU"), "1");
    assert_true(j->stats.user_cpu_s > 0.49 && j->stats.user_cpu_s < 0.51);
    assert_null(tu_json_str(j->extra, "UserCPU"));
    assert_true(j->stats.system_cpu_s < 0);
    assert_string_equal(tu_json_str(j->extra, "SystemCPU"), "0");
    assert_true(j->steps[0].stats.cpu_s < 0);
    assert_string_equal(tu_json_str(j->steps[0].extra, "TotalCPU"), "12");
    assert_true(j->steps[0].stats.user_cpu_s > 59.9 && j->steps[0].stats.user_cpu_s < 60.1);
    tu_parsed_clear(&p);
    /* anything else that is not a CPU time is still bad */
    text_bad("JobID|TotalCPU\n7|1x\n", NULL, "TotalCPU", "1x");
    text_bad("JobID|TotalCPU\n7|-1\n", NULL, "TotalCPU", "-1");
}

static void test_error_framing(void **state)
{
    char *big;
    (void)state;
    text_bad("JobID|State\n1|RUNNING\n2|\xc3\x28\n", NULL, "line 3", "UTF-8");
    text_bad("123|COMPLETED|0:0\n", NULL, "header", NULL);
    text_bad("State|Start\nRUNNING|Unknown\n", NULL, "no JobID or JobIDRaw column", NULL);
    text_bad("JobID|State||Account\n", NULL, "not a sacct header", NULL);
    text_bad("1|RUNNING\n", "JobID,Sta te", "field list", NULL);
    text_bad("", NULL, "empty", NULL);
    /* one line beyond 1 MiB */
    big = malloc(1200 * 1024);
    memcpy(big, "JobID|Comment\n1|", 16);
    memset(big + 16, 'x', 1200 * 1024 - 18);
    big[1200 * 1024 - 2] = '\n';
    big[1200 * 1024 - 1] = '\0';
    text_bad(big, NULL, "line 2", "longer than");
    free(big);
}

/* The sink can stop the parse; its error comes back. */
static bool stop_at_second(sa_job_t *job, void *ctx, sa_error_t *error)
{
    int *n = ctx;
    if (++*n == 2) {
        sa_error_set(error, SA_ERR_IO, 0, "sink full at job %lld", (long long)job->job_id);
        return false;
    }
    return true;
}

static void test_sink_stops(void **state)
{
    static const char text[] = "JobID|State\n1|RUNNING\n2|RUNNING\n3|RUNNING\n";
    sa_reader_t r;
    sa_error_t err;
    int n = 0;
    sa_sink_t sink = {stop_at_second, NULL, &n, NULL, false, NULL};
    (void)state;
    sa_reader_init_mem(&r, text, strlen(text));
    assert_false(sa_parse_sacct_text(&r, NULL, &sink, &err));
    assert_string_equal(err.message, "sink full at job 2");
    assert_int_equal(n, 2);
}

/* Counts the jobs (n[0]) and their steps (n[1]). */
static bool count_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    size_t *n = ctx;
    (void)error;
    n[0]++;
    n[1] += job->nsteps;
    return true;
}

/* One byte per read (tu_reader_one_byte): the line reader joins everything back. */
static void test_one_byte_reads(void **state)
{
    size_t len, counts[2] = {0, 0};
    char *data;
    sa_sacct_text_opts_t opts = {0};
    sa_reader_t r;
    sa_sink_t sink = {count_job, NULL, counts, NULL, false, NULL};
    sa_error_t err;
    (void)state;
    tu_require_samples();
    data = tu_read_file(tu_sample("sacct-parsable/sacct-p-snowman-delim_peregrine-2021_reqmem-n-c-suffix.txt"),
                        &len);
    opts.fields = tu_sample_fields("sacct-parsable/sacct-p-snowman-delim_peregrine");
    tu_reader_one_byte(&r, data, len);
    if (!sa_parse_sacct_text(&r, &opts, &sink, &err))
        fail_msg("%s", err.message);
    assert_int_equal(counts[0], 37);
    assert_int_equal(counts[1], 48);
    free(data);
}

/* ---- the repository's fixtures: fixtures/gen/<version>/ and fixtures/slurm-22.05/ ------------------ */

#define AT TU_GEN_AT

/* Data lines of a file: every line, less the header when it has one. */
static size_t data_lines(const char *path, bool header)
{
    size_t len, lines = 0;
    char *data = tu_read_file(path, &len);
    for (size_t k = 0; k < len; k++)
        lines += data[k] == '\n';
    free(data);
    return lines - (header ? 1 : 0);
}

/* The three sacct text files of every version: manifest.json's counts, no line dropped, every
 * job and step read; the multi-byte delimiter of v0.0.38's sacct-ingest.txt detected. */
static void test_fixture_every_sacct_text(void **state)
{
    static const char *const files[] = {"sacct-P.txt", "sacct-ingest.txt", "sacct-p-n.txt"};
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
            char rel[256];
            tu_parsed_t p;

            snprintf(rel, sizeof rel, "gen/%s/%s", *v, files[f]);
            tu_parse_gen(*v, files[f], &p);
            assert_int_equal(p.kind, SA_KIND_SACCT_TEXT);
            if ((int64_t)p.njobs != tu_gen_count(*v, files[f], "jobs") ||
                (int64_t)count_steps(&p) != tu_gen_count(*v, files[f], "step_lines"))
                fail_msg("%s: %zu jobs %zu steps, manifest.json says %lld %lld", rel, p.njobs, count_steps(&p),
                         (long long)tu_gen_count(*v, files[f], "jobs"),
                         (long long)tu_gen_count(*v, files[f], "step_lines"));
            assert_int_equal(p.njobs + count_steps(&p), data_lines(tu_fixture(rel), f < 2));
            for (size_t j = 0; j < p.njobs; j++) {
                assert_int_equal(p.jobs[j]->source, SA_SRC_SACCT_TEXT);
                assert_true(p.jobs[j]->exit_reliable);
                assert_true(p.jobs[j]->job_id > 0);
            }
            /* the name with quotes, a backslash, a slash and a snowman: one field, intact */
            assert_string_equal(must_job(&p, TU_J_HOSTILE, 0)->name, TU_HOSTILE_NAME);
            tu_parsed_clear(&p);
        }
    }
}

/* -D: every run of a requeued job with its own steps; CANCELLED by uid; cancelled while pending. */
static void test_fixture_requeued_and_cancelled(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parsed_t p;
        sa_job_t *a, *b, *c, *j;

        tu_parse_gen(*v, "sacct-P.txt", &p);
        a = must_job(&p, TU_J_REQUEUED_DONE, 0);
        b = must_job(&p, TU_J_REQUEUED_DONE, 1);
        c = must_job(&p, TU_J_REQUEUED_DONE, 2);
        assert_null(tu_find_job_n(&p, TU_J_REQUEUED_DONE, 3));
        assert_string_equal(tu_state(&a->state), "REQUEUED");
        assert_string_equal(tu_state(&b->state), "REQUEUED");
        assert_string_equal(tu_state(&c->state), "COMPLETED");
        assert_int_equal(a->submit, AT - 20000);
        assert_int_equal(b->submit, AT - 15000);
        assert_int_equal(b->eligible, AT - 15000 + 121);
        assert_int_equal(c->submit, AT - 9000);
        assert_int_equal(a->elapsed, 4000);
        assert_int_equal(c->end, AT - 50);
        assert_string_equal(tu_state(&must_step(a, "batch")->state), "CANCELLED");
        assert_int_equal(must_step(a, "batch")->exit_signal, 15);
        assert_string_equal(tu_state(&must_step(c, "batch")->state), "COMPLETED");
        assert_int_equal(c->time_limit, 240);
        j = must_job(&p, TU_J_CANCELLED, 0); /* cancelled by its owner while running */
        assert_string_equal(tu_state(&j->state), "CANCELLED");
        assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "10010");
        assert_int_equal(j->exit_signal, 15);
        j = must_job(&p, TU_J_CANCEL_PENDING, 0); /* Start=None (Unknown in 21.08), None assigned */
        assert_string_equal(tu_state(&j->state), "CANCELLED");
        assert_int_equal(j->start, SA_UNSET);
        assert_int_equal(j->end, AT - 200);
        assert_null(j->nodes);
        assert_true(sa_tres_is_empty(&j->alloc));
        assert_int_equal(j->req.mem_mb, 8192);
        assert_int_equal(j->nsteps, 0);
        j = must_display(&p, "1051+1"); /* pending het component */
        assert_int_equal(j->job_id, TU_J_HET_WAIT + 1);
        assert_int_equal(j->het_job_id, TU_J_HET_WAIT);
        assert_int_equal(j->het_job_offset, 1);
        assert_string_equal(tu_state(&j->state), "PENDING");
        assert_int_equal(j->start, SA_UNSET);
        assert_int_equal(j->end, SA_UNSET);
        assert_int_equal(sa_gpus_get(&j->req.gpus, "a100"), 1);
        j = must_job(&p, TU_J_QUEUED, 0);
        assert_string_equal(j->reason, "Priority");
        assert_null(tu_find_job(&p, TU_J_HELD)); /* never eligible: not in a time window */
        tu_parsed_clear(&p);
    }
}

/* GPUs typed and untyped in AllocTRES; DerivedExitCode; arrays; a plain job's values; steps. */
static void test_fixture_gpu_array_plain(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parsed_t p;
        sa_job_t *j;
        sa_step_t *s;

        tu_parse_gen(*v, "sacct-ingest.txt", &p);
        j = must_job(&p, TU_J_TRAIN, 0);
        assert_int_equal(j->alloc.gpu_total, 4);
        assert_int_equal(j->alloc.gpus.n, 1);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 4);
        assert_int_equal(j->alloc.cpu, 64);
        assert_int_equal(j->alloc.mem_mb, 524288); /* mem=512G */
        assert_true(j->alloc.billing == 96.0);
        s = must_step(j, "batch");
        assert_int_equal(s->alloc.gpu_total, 4);
        assert_int_equal(must_step(j, "extern")->alloc.gpu_total, 0);
        j = must_job(&p, TU_J_MIG, 0);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "nvidia_a100_80gb_pcie_1g.10gb"), 2);
        j = must_job(&p, TU_J_TWO_TYPES, 0);
        assert_int_equal(j->alloc.gpu_total, 2);
        assert_int_equal(sa_gpus_get(&j->alloc.gpus, "h200"), 1);
        assert_int_equal(sa_gpus_get(&must_job(&p, TU_J_LEGACY_GPU, 0)->alloc.gpus, ""), 2);
        j = must_job(&p, TU_J_FAIL3, 0); /* the failing srun step is the derived exit code */
        assert_int_equal(j->exit_code, 3);
        assert_int_equal(j->derived_exit_code, 3);
        s = must_step(j, "1");
        assert_string_equal(tu_state(&s->state), "FAILED");
        assert_int_equal(s->exit_code, 3);
        j = must_job(&p, TU_J_SIGKILL, 0);
        assert_int_equal(j->exit_code, 0);
        assert_int_equal(j->exit_signal, 9);
        j = must_job(&p, TU_J_SMALL_ARRAY, 0); /* task 4 kept the master's raw id */
        assert_string_equal(j->job_id_display, "1045_4");
        assert_int_equal(j->array_job_id, TU_J_SMALL_ARRAY);
        assert_int_equal(j->array_task_id, 4);
        j = must_job(&p, TU_J_SMALL_ARRAY + 1, 0);
        assert_string_equal(j->job_id_display, "1045_1");
        assert_int_equal(j->array_task_id, 1);
        j = must_display(&p, "1030_[15-100%10]");
        assert_int_equal(j->job_id, TU_J_SWEEP);
        assert_string_equal(j->array_task_string, "15-100%10");
        assert_int_equal(j->array_task_id, SA_UNSET);
        j = must_job(&p, TU_J_OK, 0); /* a plain job, field by field */
        assert_string_equal(j->name, "ok");
        assert_string_equal(j->user, "alice");
        assert_int_equal(j->user_id, 10001);
        assert_string_equal(j->group, "physics");
        assert_string_equal(j->account, "physics");
        assert_string_equal(j->partition, "cpu");
        assert_string_equal(j->qos, "normal");
        assert_int_equal(j->start, AT - 3600);
        assert_int_equal(j->end, SA_UNSET); /* running */
        assert_int_equal(j->elapsed, 3600);
        assert_int_equal(j->time_limit, 120);
        assert_int_equal(j->node_count, 2);
        assert_int_equal(j->cpus, 16);
        assert_int_equal(j->req.mem_mb, 131072);
        assert_string_equal(j->nodes, "c[0010-0011]");
        assert_string_equal(j->reason, "None");
        assert_null(j->reservation);
        assert_int_equal(j->nsteps, 4);
        assert_string_equal(j->steps[0].id, "batch");
        assert_string_equal(j->steps[1].id, "extern");
        assert_string_equal(j->steps[3].id, "1");
        assert_string_equal(tu_state(&j->steps[3].state), "RUNNING");
        assert_int_equal(must_job(&p, TU_J_FOREVER, 0)->time_limit, SA_INFINITE);
        assert_string_equal(must_job(&p, TU_J_MULTI_PART, 0)->partition, "cpu,long");
        tu_parsed_clear(&p);
    }
}

/* -p -n: a trailing delimiter and no header (the field list from manifest.json); -P's wide columns. */
static void test_fixture_noheader_and_wide(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parsed_t p;
        sa_job_t *j;

        tu_parse_gen(*v, "sacct-p-n.txt", &p);
        j = must_job(&p, TU_J_CANCEL_PENDING, 0);
        assert_string_equal(tu_state(&j->state), "CANCELLED");
        assert_int_equal(j->start, SA_UNSET);
        assert_int_equal(j->time_limit, 60);
        j = must_job(&p, TU_J_SIGKILL, 0);
        assert_int_equal(j->exit_signal, 9);
        assert_string_equal(tu_state(&must_step(j, "batch")->state), "CANCELLED");
        assert_string_equal(must_display(&p, "1049+1")->partition, "gpu");
        tu_parsed_clear(&p);

        tu_parse_gen(*v, "sacct-P.txt", &p);
        j = must_job(&p, TU_J_COMPLETED, 0);
        assert_true(j->stats.cpu_s >= 0); /* TotalCPU, typed */
        assert_null(tu_json_str(j->extra, "ReqCPUS")); /* modelled: req.cpu */
        assert_int_equal(j->req.cpu, 4);
        assert_int_equal(j->stats.energy_j, SA_UNSET);      /* ConsumedEnergyRaw 0: not gathered */
        assert_int_equal(j->stats.max_rss_bytes, SA_UNSET); /* empty on the allocation line */
        assert_true(must_step(j, "batch")->stats.max_rss_bytes > 0);
        tu_parsed_clear(&p);
    }
}

/* The walker gives the same jobs and steps when the text comes one byte at a time. */
static void test_fixture_one_byte_reads(void **state)
{
    static const char *const files[] = {"sacct-P.txt", "sacct-p-n.txt", "sacct-ingest.txt"};
    (void)state;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        const char *v = f == 2 ? "v0.0.38" : "v0.0.41"; /* v0.0.38's: the multi-byte delimiter */
        char rel[256];
        size_t len, counts[2] = {0, 0};
        char *data, *fields = tu_gen_fields(v, files[f]);
        sa_sacct_text_opts_t opts = {0};
        sa_reader_t r;
        sa_sink_t sink = {count_job, NULL, counts, NULL, false, NULL};
        sa_error_t err;

        snprintf(rel, sizeof rel, "gen/%s/%s", v, files[f]);
        data = tu_read_file(tu_fixture(rel), &len);
        opts.fields = fields;
        tu_reader_one_byte(&r, data, len);
        if (!sa_parse_sacct_text(&r, &opts, &sink, &err))
            fail_msg("%s: %s", rel, err.message);
        assert_int_equal((int64_t)counts[0], tu_gen_count(v, files[f], "jobs"));
        assert_int_equal((int64_t)counts[1], tu_gen_count(v, files[f], "step_lines"));
        free(data);
        free(fields);
    }
}

/* Real 22.05.8 sacct text: -D, -X, -n, -p and slurm-ingest's own command. */
static void test_fixture_2205_sacct_text(void **state)
{
    static const struct {
        const char *file, *fields;
        size_t jobs, steps;
    } want[] = {
        {"sacct-P-D.txt", NULL, 17, 18},
        {"sacct-P-X.txt", NULL, 16, 0},
        {"sacct-P-n.txt", "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason", 16, 17},
        {"sacct-p-usage.txt", NULL, 16, 17},
        {"sacct-ingest.txt", NULL, 17, 18},
    };
    tu_parsed_t p;
    sa_job_t *a, *b, *j;
    sa_step_t *s;
    (void)state;

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char rel[128];
        sa_sacct_text_opts_t opts = {0};
        sa_error_t err;
        snprintf(rel, sizeof rel, "slurm-22.05/%s", want[i].file);
        opts.fields = want[i].fields;
        if (!tu_parse_file(tu_fixture(rel), &opts, &p, &err))
            fail_msg("%s: %s", rel, err.message);
        if (p.njobs != want[i].jobs || count_steps(&p) != want[i].steps)
            fail_msg("%s: %zu jobs %zu steps, want %zu %zu", rel, p.njobs, count_steps(&p), want[i].jobs,
                     want[i].steps);
        assert_int_equal(p.njobs + count_steps(&p), data_lines(tu_fixture(rel), !want[i].fields));
        tu_parsed_clear(&p);
    }

    tu_parse_fixture("slurm-22.05/sacct-P-D.txt", &p);
    a = must_job(&p, 9, 0); /* -D: the requeued run, then the final one */
    b = must_job(&p, 9, 1);
    assert_string_equal(tu_state(&a->state), "REQUEUED");
    assert_string_equal(tu_state(&b->state), "COMPLETED");
    assert_int_equal(b->submit, when("2026-11-26T06:29:04"));
    assert_int_equal(b->eligible, when("2026-11-26T06:29:06"));
    assert_int_equal(a->elapsed, 5);
    assert_int_equal(b->elapsed, 45);
    assert_int_equal(b->time_limit, 5);
    assert_int_equal(must_step(a, "batch")->exit_signal, 15);
    j = must_job(&p, 6, 0); /* het component cancelled while pending */
    assert_string_equal(j->job_id_display, "5+1");
    assert_string_equal(j->partition, "gpu");
    assert_string_equal(tu_json_str(j->extra, "cancelled_by"), "0");
    assert_int_equal(j->start, SA_UNSET); /* None */
    assert_null(j->nodes);                /* None assigned */
    assert_int_equal(sa_gpus_get(&j->req.gpus, "a100"), 1);
    assert_int_equal(j->req.mem_mb, 300);
    assert_true(sa_tres_is_empty(&j->alloc));
    j = must_job(&p, 7, 0); /* typed + untyped GPUs, the failing first step */
    assert_int_equal(j->alloc.gpu_total, 2);
    assert_int_equal(j->alloc.gpus.n, 1);
    assert_int_equal(sa_gpus_get(&j->alloc.gpus, "a100"), 2);
    assert_int_equal(j->derived_exit_code, 2);
    s = must_step(j, "0");
    assert_string_equal(s->name, "sh");
    assert_string_equal(tu_state(&s->state), "FAILED");
    assert_int_equal(s->exit_code, 2);
    assert_int_equal(s->alloc.gpu_total, 2);
    assert_int_equal(must_step(j, "batch")->stats.max_rss_bytes, 10772 * 1024); /* MaxRSS 10772K */
    j = must_job(&p, 4, 0);
    assert_string_equal(j->job_id_display, "4_5");
    assert_string_equal(must_job(&p, 17, 0)->job_id_display, "4_1");
    assert_int_equal(must_job(&p, 19, 0)->exit_code, 1);
    j = must_job(&p, 1, 0);
    assert_string_equal(j->name, "ok");
    assert_int_equal(j->start, when("2026-11-26T06:27:56"));
    assert_int_equal(j->elapsed, 3);
    assert_true(j->stats.cpu_s > 0.0285 && j->stats.cpu_s < 0.0295); /* TotalCPU 00:00.029 */
    assert_null(tu_json_str(j->extra, "ReqCPUS"));
    assert_int_equal(j->req.cpu, 1);
    assert_string_equal(j->steps[2].name, "sleep");
    j = must_job(&p, 15, 0);
    assert_string_equal(tu_state(&j->state), "PENDING");
    assert_int_equal(j->start, SA_UNSET);
    assert_int_equal(j->req.node, 3);
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/sacct-p-usage.txt", &p); /* -p: TRESUsage entries typed */
    j = must_job(&p, 7, 0);
    assert_string_equal(tu_json_str(j->extra, "CPUTimeRAW"), "41");
    /* TRESUsageInMax cpu=00:00:00,energy=0,fs/disk=54235,mem=10772K,pages=0,vmem=219600K */
    assert_int_equal(must_step(j, "batch")->stats.max_rss_bytes, 10772 * 1024);
    assert_int_equal(must_step(j, "batch")->stats.disk_read_bytes, 54235);
    assert_string_equal(tu_json_str(must_step(j, "batch")->extra, "TRESUsageInMax"),
                        "cpu=00:00:00,energy=0,fs/disk=54235,pages=0,vmem=219600K");
    assert_int_equal(must_step(j, "batch")->stats.mem_total_bytes, 10772 * 1024);
    tu_parsed_clear(&p);
}

/*
 * Usage from the real 22.05 cluster (fixtures/efficiency, jobacct_gather/linux): the
 * ingest's sacct text and sacct --json of the same jobs give the same TotalCPU (text
 * in milliseconds, JSON in microseconds) and MaxRSS (text in KiB, JSON in bytes).
 */
static void test_fixture_2205_usage_text_json(void **state)
{
    sa_sacct_text_opts_t topts = {.delimiter = "\x1f"};
    tu_parsed_t t, js;
    sa_error_t err;
    (void)state;

    if (!tu_parse_file(tu_fixture("efficiency/sacct-ingest-22.05.txt"), &topts, &t, &err))
        fail_msg("%s", err.message);
    tu_parse_fixture("efficiency/sacct-22.05.json", &js);
    assert_int_equal(t.njobs, 3);
    assert_int_equal(js.njobs, 3);
    for (size_t i = 0; i < t.njobs; i++) {
        sa_job_t *a = t.jobs[i], *b = must_job(&js, a->job_id, 0);
        double steps = 0;
        assert_true(a->stats.cpu_s >= 0);
        assert_true(b->stats.cpu_s < 0); /* the job's own time.total is 0 in 22.05's JSON: not read */
        for (size_t k = 0; k < b->nsteps; k++)
            steps += b->steps[k].stats.cpu_s;
        if (fabs(a->stats.cpu_s - steps) > 0.0015 * (double)b->nsteps)
            fail_msg("job %lld: TotalCPU text %.6f, JSON steps %.6f", (long long)a->job_id, a->stats.cpu_s, steps);
        assert_int_equal(a->nsteps, b->nsteps);
        for (size_t k = 0; k < a->nsteps; k++) {
            sa_step_t *x = &a->steps[k], *y = must_step(b, x->id);
            if (fabs(x->stats.cpu_s - y->stats.cpu_s) > 0.0015)
                fail_msg("step %lld.%s: TotalCPU text %.6f, JSON %.6f", (long long)a->job_id, x->id, x->stats.cpu_s,
                         y->stats.cpu_s);
            if (llabs(x->stats.max_rss_bytes - y->stats.max_rss_bytes) >= 1024)
                fail_msg("step %lld.%s: MaxRSS text %lld, JSON %lld", (long long)a->job_id, x->id,
                         (long long)x->stats.max_rss_bytes, (long long)y->stats.max_rss_bytes);
            assert_true(x->stats.gpu_util_pct < 0 && y->stats.gpu_util_pct < 0); /* no acct_gather_gpu here */
            /* TRESUsageInTot mem / tres.requested.total mem: the same figure both ways */
            if (llabs(x->stats.mem_total_bytes - y->stats.mem_total_bytes) >= 1024)
                fail_msg("step %lld.%s: TRESUsageInTot mem text %lld, JSON %lld", (long long)a->job_id, x->id,
                         (long long)x->stats.mem_total_bytes, (long long)y->stats.mem_total_bytes);
        }
    }
    /* the burning job: 178596K resident, 7.790 s of CPU */
    assert_int_equal(must_step(must_job(&t, 1, 0), "batch")->stats.max_rss_bytes, INT64_C(178596) * 1024);
    assert_true(must_step(must_job(&t, 1, 0), "batch")->stats.mem_total_bytes > 0);
    assert_true(fabs(must_job(&t, 1, 0)->stats.cpu_s - 7.790) < 1e-9);
    tu_parsed_clear(&t);
    tu_parsed_clear(&js);
}

/*
 * The change test (sa_job_digest) ignores what grows while a job or step runs (elapsed
 * time, CPU time, memory, I/O), so a poll does not rewrite every running job; a new
 * step, a step's end and any usage of an ended job or step are changes.
 */
static uint64_t digest_of(const char *text)
{
    tu_parsed_t p;
    uint64_t d;
    text_ok(text, NULL, NULL, &p);
    assert_int_equal(p.njobs, 1);
    d = sa_job_digest(p.jobs[0], NULL);
    tu_parsed_clear(&p);
    return d;
}

static void test_digest_running_usage(void **state)
{
#define H "JobID|JobIDRaw|State|Submit|Start|End|ElapsedRaw|TotalCPU|MaxRSS|ExitCode|AllocTRES\n"
#define JOB(state, end, el, cpu) "7|7|" state "|2026-10-01T10:00:00|2026-10-01T10:01:00|" end "|" el "|" cpu "||0:0|cpu=4,node=1\n"
#define STEP(id, state, end, el, cpu, rss) "7." id "|7." id "|" state "|2026-10-01T10:01:00|2026-10-01T10:01:00|" end "|" el "|" cpu "|" rss "|0:0|cpu=4,node=1\n"
    (void)state;
    uint64_t run1 = digest_of(H JOB("RUNNING", "Unknown", "60", "00:01:00") STEP("batch", "RUNNING", "Unknown", "60", "00:01:00", "100K"));
    uint64_t run2 = digest_of(H JOB("RUNNING", "Unknown", "360", "00:09:00") STEP("batch", "RUNNING", "Unknown", "360", "00:09:00", "900K"));
    uint64_t step = digest_of(H JOB("RUNNING", "Unknown", "360", "00:09:00") STEP("batch", "RUNNING", "Unknown", "360", "00:09:00", "900K")
                                  STEP("0", "COMPLETED", "2026-10-01T10:03:00", "120", "00:08:00", "800K"));
    uint64_t step2 = digest_of(H JOB("RUNNING", "Unknown", "420", "00:09:00") STEP("batch", "RUNNING", "Unknown", "420", "00:09:00", "900K")
                                   STEP("0", "COMPLETED", "2026-10-01T10:03:00", "120", "00:08:30", "800K"));
    uint64_t done1 = digest_of(H JOB("COMPLETED", "2026-10-01T10:10:00", "540", "00:20:00") STEP("batch", "COMPLETED", "2026-10-01T10:10:00", "540", "00:20:00", "900K"));
    uint64_t done2 = digest_of(H JOB("COMPLETED", "2026-10-01T10:10:00", "540", "00:21:00") STEP("batch", "COMPLETED", "2026-10-01T10:10:00", "540", "00:21:00", "900K"));
    assert_true(run1 == run2);   /* only elapsed and usage so far moved */
    {
        /* the usage entries kept in extra grow too while the step runs; once it ended they are a change */
        const char *h = "JobID|JobIDRaw|State|End|TRESUsageInTot|TRESUsageOutTot\n";
        char a[512], b[512], c[512], d[512];
        snprintf(a, sizeof a, "%s7|7|RUNNING|Unknown|pages=1|\n7.0|7.0|RUNNING|Unknown|cpu=00:01:00,pages=3|x=1\n", h);
        snprintf(b, sizeof b, "%s7|7|RUNNING|Unknown|pages=9|\n7.0|7.0|RUNNING|Unknown|cpu=00:09:00,pages=5|x=2\n", h);
        snprintf(c, sizeof c, "%s7|7|COMPLETED|2026-10-01T10:10:00|pages=9|\n7.0|7.0|COMPLETED|2026-10-01T10:10:00|"
                 "cpu=00:09:00,pages=5|x=2\n", h);
        snprintf(d, sizeof d, "%s7|7|COMPLETED|2026-10-01T10:10:00|pages=9|\n7.0|7.0|COMPLETED|2026-10-01T10:10:00|"
                 "cpu=00:09:30,pages=5|x=2\n", h);
        assert_true(digest_of(a) == digest_of(b));
        assert_true(digest_of(c) != digest_of(d));
    }
    assert_true(step != run2);   /* a step that ran and ended is a change */
    assert_true(step2 != step);  /* an ended step's usage is a change */
    assert_true(done1 != run2);
    assert_true(done1 != done2); /* an ended job's usage is a change */
#undef H
#undef JOB
#undef STEP
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_sacct_file),
        cmocka_unit_test(test_trailing_pipe_line_counts),
        cmocka_unit_test(test_cedar_values),
        cmocka_unit_test(test_local_D_requeued),
        cmocka_unit_test(test_local_D_het),
        cmocka_unit_test(test_local_D_gpu),
        cmocka_unit_test(test_local_D_array_and_plain),
        cmocka_unit_test(test_local_noheader),
        cmocka_unit_test(test_local_usage_trailing),
        cmocka_unit_test(test_aalto_51_fields),
        cmocka_unit_test(test_xdmod_reqmem_suffix),
        cmocka_unit_test(test_xdmod_arrays),
        cmocka_unit_test(test_xdmod_running_pending),
        cmocka_unit_test(test_torchx_het),
        cmocka_unit_test(test_torchx_cancelled),
        cmocka_unit_test(test_habrok_snowman),
        cmocka_unit_test(test_peregrine_snowman),
        cmocka_unit_test(test_header_any_order_and_case),
        cmocka_unit_test(test_multibyte_delimiter_detected),
        cmocka_unit_test(test_framing_blank_crlf_no_final_newline),
        cmocka_unit_test(test_step_grammar),
        cmocka_unit_test(test_orphan_step_kept),
        cmocka_unit_test(test_tres_usage_extra),
        cmocka_unit_test(test_local_time_zone),
        cmocka_unit_test(test_reqcpus),
        cmocka_unit_test(test_timelimit_forms),
        cmocka_unit_test(test_error_field_count),
        cmocka_unit_test(test_error_bad_values),
        cmocka_unit_test(test_error_framing),
        cmocka_unit_test(test_cputime_bare_number),
        cmocka_unit_test(test_sink_stops),
        cmocka_unit_test(test_one_byte_reads),
        cmocka_unit_test(test_fixture_every_sacct_text),
        cmocka_unit_test(test_fixture_requeued_and_cancelled),
        cmocka_unit_test(test_fixture_gpu_array_plain),
        cmocka_unit_test(test_fixture_noheader_and_wide),
        cmocka_unit_test(test_fixture_one_byte_reads),
        cmocka_unit_test(test_fixture_2205_sacct_text),
        cmocka_unit_test(test_fixture_2205_usage_text_json),
        cmocka_unit_test(test_digest_running_usage),
    };
    return tu_run_group_tests("sacct_text", tests, NULL, NULL);
}
