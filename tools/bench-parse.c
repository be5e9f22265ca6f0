/*
 * bench-parse - benchmark P1 (parse part): how fast the parsers read a large capture,
 * against jq and Python on the same file, how much memory one parsed record holds,
 * and whether one huge record costs the same from a pipe as from a file.
 *
 *   bench-parse [--jobs N] [--sample FILE] [--file FILE] [--keep] [--record-mib M]
 *               [--held K] [--no-tools] [--no-pipe] [--no-job-resources]
 *
 * 1. Writes a synthetic `squeue --json` of N jobs (default 100,000) to a temporary file
 *    (or uses --file): copies of the jobs of a real capture (default: the 24.05
 *    Slurm-web sample, with per-core job_resources), each with its own job id, in a
 *    realistic mix for a queue that long: 25% running (a third of them with typed GPUs in
 *    tres_alloc_str, gres_detail and tres_per_node), 65% pending (some array
 *    meta-records, a third asking for GPUs), 10% just ended; every fifth job an array
 *    task; owners, names, paths, times and priorities vary from job to job. About
 *    11 KB a job, as Slurm indents it; --no-job-resources leaves the per-core
 *    job_resources out (about 7 KB a job: a queue of jobs on few cores, or pending).
 * 2. Parses it in a child process from a file descriptor into a sink that drops the
 *    records (parse + normalize: exactly what the ingester's sink receives) and prints
 *    its CPU time (user + system, from wait4), MB/s of CPU time and peak RSS; then the
 *    CPU time of `jq '.jobs|length'` and of Python's json.load on the same file, and
 *    the two ratios (targets: <= 0.7 x jq, <= 1.0 x Python).
 * 3. Keeps the first K records (default 5,000) as the ingester does (sa_job_steal) and
 *    prints the malloc'd bytes one record holds (mallinfo2 before and after, so malloc's
 *    own chunk overhead is included) and how much of that is ->extra.
 * 4. Writes one job record of M MiB (default 40: a job on thousands of nodes, its
 *    job_resources listing every core) and parses it from the file and from a pipe fed
 *    64 KiB at a time, printing the CPU time of each.
 *
 * Not run by the tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "sa_parse.h"

extern char **environ;

/* What one measured child process cost. */
typedef struct {
    bool ran;       /* false: could not be started (not installed) */
    int status;     /* wait status */
    double cpu;     /* user + system seconds */
    double wall;    /* seconds */
    long maxrss_kb; /* peak resident set */
} cost_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits for pid and fills *c from its rusage. */
static void wait_cost(pid_t pid, double t0, cost_t *c)
{
    struct rusage ru;

    while (wait4(pid, &c->status, 0, &ru) < 0 && errno == EINTR)
        ;
    c->wall = now_s() - t0;
    c->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec / 1e6;
    c->maxrss_kb = ru.ru_maxrss;
    c->ran = true;
}

/* ---- the synthetic capture ------------------------------------------------------------ */

/* Sets a {set, infinite, number} member (the v0.0.40+ encoding of a NO_VAL number). */
static void set_noval(json_t *job, const char *key, long long v)
{
    json_object_set_new(job, key, json_pack("{s:b, s:b, s:I}", "set", 1, "infinite", 0, "number", (json_int_t)v));
}

/* Sets key to v in the template's encoding (plain number or {set, infinite, number}); absent keys stay absent. */
static void set_number_like(json_t *job, const char *key, long long v)
{
    json_t *old = json_object_get(job, key);

    if (json_is_object(old))
        set_noval(job, key, v);
    else if (old)
        json_object_set_new(job, key, json_integer(v));
}

/* Sets key to a string when the template has it. */
static void set_string_like(json_t *job, const char *key, const char *v)
{
    if (json_object_get(job, key))
        json_object_set_new(job, key, json_string(v));
}

/*
 * Gives job i what varies from job to job in a real queue: its owner (one of 40 users
 * in 8 accounts), name, paths, times and priority. Times step 7 s a job; a pending
 * job has no start yet (Slurm prints its expected start).
 */
static void vary_job(json_t *job, long i, long id)
{
    long long t = 1747000000LL + i * 7, user = (i / 3) % 40;
    char name[64], buf[160];

    snprintf(name, sizeof name, "user%02lld", user);
    set_string_like(job, "user_name", name);
    set_number_like(job, "user_id", 20000 + user);
    snprintf(buf, sizeof buf, "acct%lld", user % 8);
    set_string_like(job, "account", buf);
    snprintf(buf, sizeof buf, "%s-%ld", i % 4 ? "train" : "prep", i % 97);
    set_string_like(job, "name", buf);
    snprintf(buf, sizeof buf, "/home/%s/slurm-%ld.out", name, id);
    set_string_like(job, "standard_output", buf);
    set_string_like(job, "standard_error", buf);
    snprintf(buf, sizeof buf, "/home/%s/project%lld", name, user % 3);
    set_string_like(job, "current_working_directory", buf);
    set_number_like(job, "submit_time", t);
    set_number_like(job, "eligible_time", t + 1);
    set_number_like(job, "accrue_time", t + 1);
    set_number_like(job, "last_sched_evaluation", t + 30);
    set_number_like(job, "start_time", t + 60);
    set_number_like(job, "end_time", t + 60 + 3600);
    set_number_like(job, "priority", 1000 + (i * 7919) % 50000);
}

/* Makes job i of the mix from its template (a deep copy the caller frees). */
static json_t *mix_job(json_t *const *running, size_t nrun, json_t *const *pending, size_t npend,
                       json_t *const *ended, size_t nend, long i, bool no_resources)
{
    long slot = i % 20, id = 1000000 + i;
    bool is_running = slot < 5, is_pending = slot >= 5 && slot < 18;
    json_t *job = json_deep_copy(is_running   ? running[(size_t)i % nrun]
                                 : is_pending ? pending[(size_t)i % npend]
                                              : ended[(size_t)i % nend]);

    json_object_set_new(job, "job_id", json_integer(id));
    vary_job(job, i, id);
    if (no_resources)
        json_object_del(job, "job_resources");
    if (i % 5 == 1) { /* an array task */
        set_noval(job, "array_job_id", id - 1 - i % 7);
        set_noval(job, "array_task_id", i % 7 + 1);
    } else if (is_pending && i % 50 == 12) { /* a pending array meta-record */
        set_noval(job, "array_job_id", id);
        json_object_set_new(job, "array_task_string", json_string("1-100%10"));
        set_noval(job, "array_max_tasks", 10);
    }
    if (i % 3 == 0 && (is_running || is_pending)) { /* GPUs */
        const char *req = json_string_value(json_object_get(job, "tres_req_str"));
        char buf[256];
        snprintf(buf, sizeof buf, "%s,gres/gpu=4", req && *req ? req : "cpu=8,mem=64G,node=1,billing=8");
        json_object_set_new(job, "tres_req_str", json_string(buf));
        json_object_set_new(job, "tres_per_node", json_string(is_running ? "gres/gpu:a100:4" : "gres/gpu:4"));
        if (is_running) {
            const char *alloc = json_string_value(json_object_get(job, "tres_alloc_str"));
            json_t *detail = json_array();
            long long nodes = json_integer_value(json_object_get(json_object_get(job, "node_count"), "number"));
            snprintf(buf, sizeof buf, "%s,gres/gpu=%lld,gres/gpu:a100=%lld", alloc ? alloc : "", 4 * nodes,
                     4 * nodes);
            json_object_set_new(job, "tres_alloc_str", json_string(buf));
            for (long long n = 0; n < (nodes > 0 ? nodes : 1); n++)
                json_array_append_new(detail, json_string("gpu:a100:4(IDX:0-3)"));
            json_object_set_new(job, "gres_detail", detail);
        }
    }
    return job;
}

/* Sorts the jobs of a capture by state: running, pending, anything else (ended). */
static bool split_templates(json_t *jobs, json_t ***run, size_t *nrun, json_t ***pend, size_t *npend, json_t ***end,
                            size_t *nend)
{
    size_t i, n = json_array_size(jobs);
    json_t *job;

    *run = calloc(n + 1, sizeof **run);
    *pend = calloc(n + 1, sizeof **pend);
    *end = calloc(n + 1, sizeof **end);
    *nrun = *npend = *nend = 0;
    json_array_foreach(jobs, i, job) {
        json_t *st = json_object_get(job, "job_state");
        const char *s = json_is_array(st) ? json_string_value(json_array_get(st, 0)) : json_string_value(st);
        if (s && strcmp(s, "RUNNING") == 0)
            (*run)[(*nrun)++] = job;
        else if (s && strcmp(s, "PENDING") == 0)
            (*pend)[(*npend)++] = job;
        else
            (*end)[(*nend)++] = job;
    }
    /* a sample without one of the kinds uses the first job for it */
    if (!*nrun)
        (*run)[(*nrun)++] = json_array_get(jobs, 0);
    if (!*npend)
        (*pend)[(*npend)++] = json_array_get(jobs, 0);
    if (!*nend)
        (*end)[(*nend)++] = json_array_get(jobs, 0);
    return n > 0;
}

/* Writes the synthetic squeue --json of n jobs to path (indented as Slurm prints it). */
static bool write_mix(const char *sample, long n, bool no_resources, const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(sample, 0, &jerr), **run = NULL, **pend = NULL, **end = NULL;
    size_t nrun, npend, nend;
    FILE *f;

    if (!doc || !split_templates(json_object_get(doc, "jobs"), &run, &nrun, &pend, &npend, &end, &nend)) {
        fprintf(stderr, "bench-parse: %s: no jobs (%s)\n", sample, doc ? "empty jobs[]" : jerr.text);
        json_decref(doc);
        return false;
    }
    if (!(f = fopen(path, "w"))) {
        perror(path);
        return false;
    }
    fputs("{\n  \"meta\": {\"plugin\": {\"type\": \"openapi/slurmctld\", \"data_parser\": \"data_parser/v0.0.41\"},"
          " \"slurm\": {\"version\": {\"major\": \"24\", \"micro\": \"3\", \"minor\": \"05\"},"
          " \"release\": \"24.05.3\", \"cluster\": \"bench\"}},\n  \"jobs\": [\n", f);
    for (long i = 0; i < n; i++) {
        json_t *job = mix_job(run, nrun, pend, npend, end, nend, i, no_resources);
        char *s = json_dumps(job, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputs(i ? ",\n" : "", f);
        fputs(s, f);
        free(s);
        json_decref(job);
    }
    fputs("\n  ],\n  \"last_backfill\": {\"set\": true, \"infinite\": false, \"number\": 1747754400},\n"
          "  \"last_update\": {\"set\": true, \"infinite\": false, \"number\": 1747754500},\n"
          "  \"warnings\": [],\n  \"errors\": []\n}\n", f);
    free(run);
    free(pend);
    free(end);
    json_decref(doc);
    return fclose(f) == 0;
}

/*
 * Writes a document of one job of about mib MiB: the sample's largest job, its
 * job_resources listing as many nodes (each with every core) as it takes.
 */
static bool write_big_record(const char *sample, long mib, const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(sample, 0, &jerr), *jobs = json_object_get(doc, "jobs"), *job = NULL, *j;
    json_t *alloc, *node0, *many;
    size_t i, best = 0, node_bytes;
    char *s;
    FILE *f;
    long nnodes;

    json_array_foreach(jobs, i, j) {
        s = json_dumps(j, JSON_COMPACT);
        if (s && strlen(s) > best) {
            best = strlen(s);
            job = j;
        }
        free(s);
    }
    alloc = json_object_get(json_object_get(json_object_get(job, "job_resources"), "nodes"), "allocation");
    node0 = json_array_get(alloc, 0);
    if (!node0) {
        fprintf(stderr, "bench-parse: %s: no job with job_resources.nodes.allocation[]\n", sample);
        json_decref(doc);
        return false;
    }
    /* what one more node adds to the record, at its depth in the document */
    s = json_dumps(job, JSON_INDENT(2));
    node_bytes = strlen(s);
    free(s);
    json_array_append(alloc, node0);
    s = json_dumps(job, JSON_INDENT(2));
    node_bytes = strlen(s) - node_bytes;
    free(s);
    nnodes = (long)((size_t)mib * 1024 * 1024 / node_bytes);
    many = json_array();
    for (long n = 0; n < nnodes; n++) {
        json_t *node = json_deep_copy(node0);
        char name[32];
        snprintf(name, sizeof name, "cn%05ld", n);
        json_object_set_new(node, "index", json_integer(n));
        json_object_set_new(node, "name", json_string(name));
        json_array_append_new(many, node);
    }
    json_object_set_new(json_object_get(json_object_get(job, "job_resources"), "nodes"), "allocation", many);
    f = fopen(path, "w");
    s = json_dumps(job, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fprintf(f, "{\"jobs\": [\n%s\n]}\n", s);
    free(s);
    json_decref(doc);
    return fclose(f) == 0;
}

/* ---- measurements --------------------------------------------------------------------------- */

static size_t jobs_seen;

static bool count_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    (void)job;
    (void)ctx;
    (void)error;
    jobs_seen++;
    return true;
}

/* Child: parses fd into the counting sink; exits 0 when every record parsed. */
static void parse_child(int fd, int report_fd)
{
    sa_reader_t r;
    sa_sink_t sink = {count_job, NULL, NULL, NULL, false, NULL};
    sa_meta_t meta;
    sa_error_t err;
    sa_kind_t kind;
    char line[64];
    int n;

    sa_reader_init_fd(&r, fd);
    sa_meta_init(&meta);
    if (!sa_parse_any(&r, NULL, &sink, &meta, &kind, &err)) {
        fprintf(stderr, "bench-parse: %s\n", err.message);
        _exit(1);
    }
    n = snprintf(line, sizeof line, "%zu\n", jobs_seen);
    if (report_fd >= 0 && write(report_fd, line, (size_t)n) != n)
        _exit(1);
    _exit(0);
}

/* Parses path in a child process; *jobs gets the number of records. */
static bool measure_ours(const char *path, cost_t *c, size_t *jobs)
{
    int p[2], fd = open(path, O_RDONLY);
    char line[64] = "";
    double t0 = now_s();
    pid_t pid;
    ssize_t n;

    if (fd < 0 || pipe(p) != 0)
        return false;
    if ((pid = fork()) == 0) {
        close(p[0]);
        parse_child(fd, p[1]);
    }
    close(p[1]);
    close(fd);
    n = read(p[0], line, sizeof line - 1);
    close(p[0]);
    wait_cost(pid, t0, c);
    *jobs = n > 0 ? (size_t)strtoul(line, NULL, 10) : 0;
    return WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0;
}

/* Runs argv (searched on PATH) with stdout to /dev/null; c->ran false when it could not start. */
static void measure_tool(char *const argv[], cost_t *c)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    double t0 = now_s();

    memset(c, 0, sizeof *c);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return;
    }
    posix_spawn_file_actions_destroy(&fa);
    wait_cost(pid, t0, c);
    /* posix_spawnp reports a missing program as exit 127 of the child */
    if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 127)
        c->ran = false;
}

/* Keeps every record it is handed (as the ingester does), up to held_max. */
typedef struct {
    sa_job_t **v;
    size_t n, max;
} held_t;

static bool hold_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    held_t *h = ctx;
    if (h->n == h->max) {
        sa_error_set(error, SA_ERR_INPUT, 0, "enough");
        return false;
    }
    h->v[h->n++] = sa_job_steal(job);
    return true;
}

/* Prints the malloc'd bytes one held record takes (first `max` records of path). */
static bool measure_record_size(const char *path, size_t max)
{
    held_t h = {calloc(max, sizeof(sa_job_t *)), 0, max};
    sa_sink_t sink = {hold_job, NULL, &h, NULL, false, NULL};
    sa_reader_t r;
    sa_meta_t meta;
    sa_error_t err;
    size_t before, after, no_extra;
    int fd = open(path, O_RDONLY);

    if (fd < 0 || !h.v)
        return false;
    malloc_trim(0);
    before = mallinfo2().uordblks;
    sa_reader_init_fd(&r, fd);
    sa_meta_init(&meta);
    if (!sa_parse_any(&r, NULL, &sink, &meta, NULL, &err) && strcmp(err.message, "enough") != 0) {
        fprintf(stderr, "bench-parse: %s\n", err.message);
        return false;
    }
    sa_meta_clear(&meta);
    close(fd);
    after = mallinfo2().uordblks;
    for (size_t i = 0; i < h.n; i++) {
        json_decref(h.v[i]->extra);
        h.v[i]->extra = NULL;
    }
    no_extra = mallinfo2().uordblks;
    printf("record size: %zu squeue records held: %.0f bytes each (malloc'd, with malloc's chunk overhead; "
           "sa_job_t itself %zu), of which ->extra %.0f\n",
           h.n, (double)(after - before) / (double)h.n, sizeof(sa_job_t),
           (double)(after - no_extra) / (double)h.n);
    for (size_t i = 0; i < h.n; i++)
        sa_job_destroy(h.v[i]);
    free(h.v);
    return true;
}

/* Parses path from the file, then from a pipe fed 64 KiB at a time by a child. */
static bool measure_pipe_vs_file(const char *path, double mib)
{
    cost_t cf, cp, cw;
    size_t jobs;
    int p[2];
    pid_t reader, writer;
    double t0;

    if (!measure_ours(path, &cf, &jobs) || jobs != 1)
        return false;
    if (pipe(p) != 0)
        return false;
    t0 = now_s();
    if ((writer = fork()) == 0) {
        int fd = open(path, O_RDONLY);
        static char buf[65536];
        ssize_t n;
        close(p[0]);
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
            if (write(p[1], buf, (size_t)n) != n)
                _exit(1);
        }
        _exit(0);
    }
    if ((reader = fork()) == 0) {
        close(p[1]);
        parse_child(p[0], -1);
    }
    close(p[0]);
    close(p[1]);
    wait_cost(reader, t0, &cp);
    wait_cost(writer, t0, &cw);
    if (!WIFEXITED(cp.status) || WEXITSTATUS(cp.status) != 0)
        return false;
    printf("one %.1f MiB record: from a file %.2f s CPU (%.2f s wall), from a pipe %.2f s CPU (%.2f s wall)\n", mib,
           cf.cpu, cf.wall, cp.cpu, cp.wall);
    return true;
}

/* Prints the P1 lines: ours, jq, python, ratios. */
static bool run_p1(const char *path, double mb)
{
    char *jq_argv[] = {"jq", ".jobs|length", (char *)path, NULL};
    char *py_argv[] = {"python3", "-c", "import json, sys\nwith open(sys.argv[1]) as f: json.load(f)", (char *)path,
                       NULL};
    cost_t ours, jq, py;
    size_t jobs;

    if (!measure_ours(path, &ours, &jobs)) {
        fprintf(stderr, "bench-parse: parsing %s failed\n", path);
        return false;
    }
    printf("ours (parse + normalize, %zu jobs): %.2f s CPU, %.1f MB/s, %.0f jobs/s, peak RSS %.1f MB (%.2f s wall)\n",
           jobs, ours.cpu, mb / ours.cpu, (double)jobs / ours.cpu, ours.maxrss_kb / 1024.0, ours.wall);
    measure_tool(jq_argv, &jq);
    if (jq.ran)
        printf("jq '.jobs|length': %.2f s CPU, peak RSS %.1f MB\n", jq.cpu, jq.maxrss_kb / 1024.0);
    else
        printf("jq '.jobs|length': jq is not installed (tools/install-deps installs it): no comparison\n");
    measure_tool(py_argv, &py);
    if (py.ran)
        printf("python3 json.load: %.2f s CPU, peak RSS %.1f MB\n", py.cpu, py.maxrss_kb / 1024.0);
    else
        printf("python3 json.load: python3 is not installed: no comparison\n");
    printf("P1 ratios: ours/jq %s%.2f (target <= 0.70), ours/python %s%.2f (target <= 1.00)\n", jq.ran ? "" : "n/a ",
           jq.ran && jq.cpu > 0 ? ours.cpu / jq.cpu : 0.0, py.ran ? "" : "n/a ",
           py.ran && py.cpu > 0 ? ours.cpu / py.cpu : 0.0);
    return true;
}

int main(int argc, char **argv)
{
    const char *sample = SA_SAMPLES_DIR "/squeue/restd-jobs-v0041_24.05.3_slurmweb_14jobs.json", *file = NULL;
    long n = 100000, record_mib = 40, held = 5000;
    bool keep = false, tools = true, pipe_test = true, no_resources = false;
    char path[] = "/tmp/bench-parse-XXXXXX", big[] = "/tmp/bench-parse-big-XXXXXX";
    struct stat stt;
    int fd;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc)
            sample = argv[++i];
        else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
            file = argv[++i];
        else if (strcmp(argv[i], "--record-mib") == 0 && i + 1 < argc)
            record_mib = atol(argv[++i]);
        else if (strcmp(argv[i], "--held") == 0 && i + 1 < argc)
            held = atol(argv[++i]);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else if (strcmp(argv[i], "--no-tools") == 0)
            tools = false;
        else if (strcmp(argv[i], "--no-pipe") == 0)
            pipe_test = false;
        else if (strcmp(argv[i], "--no-job-resources") == 0)
            no_resources = true;
        else {
            fprintf(stderr, "usage: bench-parse [--jobs N] [--sample FILE] [--file FILE] [--keep] [--record-mib M]"
                            " [--held K] [--no-tools] [--no-pipe] [--no-job-resources]\n");
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!file) {
        if ((fd = mkstemp(path)) < 0 || close(fd) != 0 || !write_mix(sample, n, no_resources, path))
            return 1;
        file = path;
    }
    if (stat(file, &stt) != 0) {
        perror(file);
        return 1;
    }
    printf("P1 parse: squeue --json %s: %.1f MB\n",
           file != path     ? file
           : no_resources ? "(synthetic, 25% running, 65% pending, 10% ended; without job_resources)"
                          : "(synthetic, 25% running, 65% pending, 10% ended)",
           (double)stt.st_size / 1e6);
    if (tools && !run_p1(file, (double)stt.st_size / 1e6))
        return 1;
    if (held > 0 && !measure_record_size(file, (size_t)held))
        return 1;
    if (pipe_test && record_mib > 0) {
        if ((fd = mkstemp(big)) < 0 || close(fd) != 0 || !write_big_record(sample, record_mib, big) ||
            !measure_pipe_vs_file(big, (double)record_mib)) {
            fprintf(stderr, "bench-parse: the %ld MiB record test failed\n", record_mib);
            unlink(big);
            return 1;
        }
        unlink(big);
    }
    if (keep || file != path)
        printf("kept %s\n", file);
    else
        unlink(path);
    return 0;
}
