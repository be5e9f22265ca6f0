/*
 * bench-tsdb - benchmark of the SQLite time series (schema/tsdb/sa_tsdb.c).
 *
 * Simulates a cluster of --nodes nodes (default 2,000) snapshotted every --interval
 * seconds (300) for --snapshots snapshots (105,120 = one year), with churn:
 *   - every snapshot ~1% of the nodes see a job start or end (see job_event(): CPUs,
 *     memory - 60% DefMemPerCPU-style, 40% an explicit --mem - and GPUs), and the
 *     state follows (IDLE / MIXED / ALLOCATED);
 *   - drains: now and then a node is drained with a new reason (MIXED+DRAIN, then
 *     IDLE+DRAIN when its jobs end), some go DOWN+DRAIN+NOT_RESPONDING, and they come
 *     back hours later;
 *   - a quarter of the nodes have 4 or 8 GPUs of one of three types (a100, h100, and
 *     the MIG profile 3g.40gb), partitions cpu / debug / gpu / preempt.
 * Prints the database size and the time per snapshot (mean, p50, p99, max), then the
 * time of a one-month and a whole-range state_hours query.
 *
 * --reopen closes and reopens the database before every snapshot, as slurm-ingest run
 * from cron does (cold caches); the time per snapshot then includes the open.
 *
 * Usage: bench-tsdb [--snapshots N] [--nodes N] [--interval S] [--db PATH] [--seed N] [--reopen]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_tsdb.h"

/* xorshift64*: a fixed, fast generator so runs are repeatable. */
static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Uniform in [0, n). */
static int64_t rnd_below(int64_t n)
{
    return (int64_t)(rnd() % (uint64_t)n);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A job on a node. */
typedef struct {
    int64_t cpus, mem_mb, gpus;
} job_t;

#define MAX_JOBS 24

/* Simulation state of a node beyond its record. */
typedef struct {
    int ngpus;             /* 0, 4 or 8 */
    const char *gpu_type;
    int64_t drain_until;   /* 0 when not drained */
    bool down;
    job_t jobs[MAX_JOBS];
    int njobs;
} sim_t;

static void die(const char *what, const sa_error_t *e)
{
    fprintf(stderr, "bench-tsdb: %s: %s\n", what, e ? e->message : strerror(errno));
    exit(1);
}

/* Sets the node's allocation from its jobs and its state from that and the drain status. */
static void set_state(sa_node_t *n, const sim_t *s)
{
    const char *base;
    int64_t cpus = 0, mem = 0, gpus = 0;

    for (int j = 0; j < s->njobs; j++) {
        cpus += s->jobs[j].cpus;
        mem += s->jobs[j].mem_mb;
        gpus += s->jobs[j].gpus;
    }
    n->cpus_alloc = cpus;
    n->mem_alloc_mb = mem;
    if (s->ngpus)
        sa_gpus_set(&n->gpus_used, s->gpu_type, gpus);
    sa_state_clear(&n->state);
    sa_state_init(&n->state);
    if (s->down)
        base = "DOWN";
    else if (cpus == 0)
        base = "IDLE";
    else if (cpus == n->cpus_total || (s->ngpus && gpus == s->ngpus))
        base = "ALLOCATED";
    else
        base = "MIXED";
    n->state.base = strdup(base);
    if (s->drain_until && !sa_strv_add_sorted_unique(&n->state.flags, "DRAIN"))
        die("out of memory", NULL);
    if (s->down && !sa_strv_add_sorted_unique(&n->state.flags, "NOT_RESPONDING"))
        die("out of memory", NULL);
    if (s->down) {
        n->cpus_idle = 0;
        n->cpus_other = n->cpus_total - cpus;
    } else {
        n->cpus_idle = n->cpus_total - cpus;
        n->cpus_other = 0;
    }
}

/*
 * One job event on a node: a job ends, or (when not draining) a job starts if it fits.
 * Job sizes: CPUs 1..128 in powers of two; memory DefMemPerCPU-style (4,000 MB per
 * CPU) for 60% of the jobs, an explicit --mem (1..256 GiB) for the rest; GPU jobs
 * take 1..n GPUs with 8 CPUs and 64,000 MB each, or an explicit --mem.
 */
static void job_event(sa_node_t *n, sim_t *s)
{
    if (s->down)
        return;
    if (s->njobs && (s->drain_until || s->njobs == MAX_JOBS || rnd_below(2) == 0)) {
        s->jobs[rnd_below(s->njobs)] = s->jobs[s->njobs - 1];
        s->njobs--;
    } else {
        job_t j = {0, 0, 0};
        int64_t fcpus = n->cpus_total - n->cpus_alloc, fmem = n->mem_total_mb - n->mem_alloc_mb;
        int64_t fgpus = s->ngpus - sa_gpus_get(&n->gpus_used, s->gpu_type ? s->gpu_type : "");
        if (s->ngpus) {
            if (fgpus <= 0)
                return;
            j.gpus = 1 + rnd_below(fgpus);
            j.cpus = 8 * j.gpus;
            j.mem_mb = rnd_below(10) < 6 ? 64000 * j.gpus : 1024 * (1 + rnd_below(256));
        } else {
            j.cpus = (int64_t)1 << rnd_below(8);
            j.mem_mb = rnd_below(10) < 6 ? 4000 * j.cpus : 1024 * (1 + rnd_below(256));
        }
        if (j.cpus > fcpus || j.mem_mb > fmem)
            return; /* does not fit: nothing changes */
        s->jobs[s->njobs++] = j;
    }
    set_state(n, s);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool sum_cb(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error)
{
    double *sum = ctx;
    (void)error;
    sum[0] += row->node_hours;
    sum[1] += row->gpu_hours_total;
    return true;
}

int main(int argc, char **argv)
{
    size_t nsnap = 105120, nnodes = 2000;
    int64_t interval = 300, t0 = 1735689600; /* 2025-01-01T00:00:00Z */
    const char *path = "/tmp/bench-tsdb.db";
    sa_node_t **nodes;
    sim_t *sim;
    double *ms;
    sa_error_t err;
    sa_tsdb_t *db;
    sa_tsdb_opts_t opts;
    int64_t reason_no = 0;
    char buf[256];
    double total = 0, start;
    struct stat st;
    bool reopen = false;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--snapshots") == 0 && i + 1 < argc)
            nsnap = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nnodes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc)
            interval = strtoll(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strcmp(argv[i], "--reopen") == 0)
            reopen = true;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 10) | 1;
        else {
            fprintf(stderr, "usage: bench-tsdb [--snapshots N] [--nodes N] [--interval S] [--db PATH] [--seed N]"
                            " [--reopen]\n");
            return 2;
        }
    }
    if (nsnap == 0 || nnodes == 0 || interval <= 0) {
        fprintf(stderr, "bench-tsdb: --snapshots, --nodes and --interval must be > 0\n");
        return 2;
    }
    for (const char *suffix = ""; suffix; suffix = *suffix ? NULL : "-wal") {
        snprintf(buf, sizeof buf, "%s%s", path, suffix);
        unlink(buf);
    }
    snprintf(buf, sizeof buf, "%s-shm", path);
    unlink(buf);

    nodes = calloc(nnodes, sizeof *nodes);
    sim = calloc(nnodes, sizeof *sim);
    ms = calloc(nsnap, sizeof *ms);
    if (!nodes || !sim || !ms)
        die("out of memory", NULL);
    for (size_t i = 0; i < nnodes; i++) {
        sa_node_t *n = nodes[i] = sa_node_new();
        bool gpu = i % 4 == 3; /* a quarter of the nodes */
        if (!n)
            die("out of memory", NULL);
        snprintf(buf, sizeof buf, "%s%04zu", gpu ? "gpu" : "cn", i);
        n->name = strdup(buf);
        n->cpus_total = gpu ? 64 : 128;
        n->mem_total_mb = gpu ? 1024000 : 512000;
        if (gpu) {
            static const char *const types[] = {"a100", "h100", "3g.40gb"};
            sim[i].gpu_type = types[(i / 4) % 3];
            sim[i].ngpus = (i / 12) % 2 ? 8 : 4;
            sa_gpus_set(&n->gpus_total, sim[i].gpu_type, sim[i].ngpus);
            sa_strv_add_sorted_unique(&n->partitions, "gpu");
            sa_strv_add_sorted_unique(&n->partitions, "preempt");
        } else {
            sa_strv_add_sorted_unique(&n->partitions, "cpu");
            if (i < 100)
                sa_strv_add_sorted_unique(&n->partitions, "debug");
        }
        set_state(n, &sim[i]);
        for (int e = 0; e < 12; e++)
            job_event(n, &sim[i]);
    }

    if (!(db = sa_tsdb_open(path, false, 5000, &err)))
        die("open", &err);
    sa_tsdb_opts_init(&opts);

    start = now_ms();
    for (size_t k = 0; k < nsnap; k++) {
        int64_t at = t0 + (int64_t)k * interval;
        double t;
        size_t changes = nnodes / 100;

        /* ~1% of the nodes change allocation (Poisson-ish: 0.5x to 1.5x) */
        changes = changes / 2 + (size_t)rnd_below((int64_t)changes + 1);
        for (size_t c = 0; c < changes; c++) {
            size_t i = (size_t)rnd_below((int64_t)nnodes);
            job_event(nodes[i], &sim[i]);
        }
        for (size_t i = 0; k && i < nnodes; i++) {
            /* drains end: the node comes back idle */
            if (sim[i].drain_until && sim[i].drain_until <= at) {
                sim[i].drain_until = 0;
                sim[i].down = false;
                free(nodes[i]->reason);
                nodes[i]->reason = NULL;
                set_state(nodes[i], &sim[i]);
            }
        }
        /* about 4 drains a day; one in four goes down */
        if (rnd_below(72) == 0) {
            size_t i = (size_t)rnd_below((int64_t)nnodes);
            if (!sim[i].drain_until) {
                sim[i].drain_until = at + 3600 * (2 + rnd_below(46));
                sim[i].down = rnd_below(4) == 0;
                free(nodes[i]->reason);
                snprintf(buf, sizeof buf, "hw check, ticket %" PRId64, ++reason_no);
                nodes[i]->reason = strdup(buf);
                if (sim[i].down)
                    sim[i].njobs = 0; /* its jobs died with it */
                set_state(nodes[i], &sim[i]);
            }
        }

        t = now_ms();
        if (reopen) {
            sa_tsdb_close(db);
            if (!(db = sa_tsdb_open(path, false, 5000, &err)))
                die("open", &err);
        }
        if (!sa_tsdb_write_snapshot(db, "bench", at, nodes, nnodes, &opts, &err))
            die("write", &err);
        ms[k] = now_ms() - t;
        total += ms[k];
        if ((k + 1) % 10000 == 0) {
            fprintf(stderr, "  %zu snapshots, %.1f s, mean %.2f ms\n", k + 1, (now_ms() - start) / 1e3,
                    total / (double)(k + 1));
        }
    }
    {
        double elapsed = (now_ms() - start) / 1e3;
        double sum[2] = {0, 0}, q;
        int64_t last = t0 + (int64_t)(nsnap - 1) * interval;

        q = now_ms();
        if (!sa_tsdb_state_hours(db, "bench", last - 30 * 86400, last, SA_TSDB_BY_GPU_TYPE, sum_cb, sum, &err))
            die("state_hours", &err);
        q = now_ms() - q;
        printf("state_hours (last 30 days, by GPU type): %.0f ms (%.0f node-hours, %.0f GPU-hours)\n", q, sum[0],
               sum[1]);
        sum[0] = sum[1] = 0;
        q = now_ms();
        if (!sa_tsdb_state_hours(db, "bench", t0, last + 1, SA_TSDB_BY_STATE, sum_cb, sum, &err))
            die("state_hours", &err);
        q = now_ms() - q;
        printf("state_hours (whole range, by state): %.0f ms (%.0f node-hours)\n", q, sum[0]);

        sa_tsdb_close(db); /* checkpoints the WAL into the database file */
        if (stat(path, &st) != 0)
            die("stat", NULL);
        qsort(ms, nsnap, sizeof *ms, dbl_cmp);
        printf("nodes %zu, snapshots %zu (every %" PRId64 " s, %.1f days), %" PRId64 " drains\n", nnodes, nsnap,
               interval, (double)nsnap * (double)interval / 86400.0, reason_no);
        printf("database size: %.1f MB (%lld bytes)\n", st.st_size / 1e6, (long long)st.st_size);
        printf("time per snapshot: mean %.2f ms, p50 %.2f ms, p99 %.2f ms, max %.2f ms (total %.1f s)\n",
               total / (double)nsnap, ms[nsnap / 2], ms[(size_t)((double)nsnap * 0.99)], ms[nsnap - 1], elapsed);
    }
    for (size_t i = 0; i < nnodes; i++)
        sa_node_destroy(nodes[i]);
    free(nodes);
    free(sim);
    free(ms);
    return 0;
}
