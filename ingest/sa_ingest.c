/*
 * sa_ingest.c - one snapshot: parse every input, then write (see sa_ingest.h).
 */
#include "sa_ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sa_log.h"
#include "sa_sdiag.h"
#include "sa_tsdb.h"

#define JOB_BATCH 5000 /* records per archive batch */

const char *sa_input_kind_name(sa_input_kind_t k)
{
    static const char *const names[] = {"sinfo", "squeue", "sacct", "sdiag"};
    return k < SA_IN_COUNT ? names[k] : "?";
}

void sa_ingest_stats_init(sa_ingest_stats_t *st)
{
    memset(st, 0, sizeof *st);
    sa_strv_init(&st->warnings);
}

void sa_ingest_stats_clear(sa_ingest_stats_t *st)
{
    if (!st)
        return;
    free(st->slurm_release);
    free(st->data_parser);
    sa_strv_clear(&st->warnings);
    memset(st, 0, sizeof *st);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Records collected from one input. */
typedef struct {
    sa_job_t **jobs;
    size_t njobs, jobs_cap;
    sa_node_t **nodes;
    size_t nnodes, nodes_cap;
} collected_t;

static bool collect_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    collected_t *c = ctx;
    if (c->njobs == c->jobs_cap) {
        size_t cap = c->jobs_cap ? c->jobs_cap * 2 : 256;
        sa_job_t **v = realloc(c->jobs, cap * sizeof *v);
        if (!v) {
            sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
            return false;
        }
        c->jobs = v;
        c->jobs_cap = cap;
    }
    if (!(c->jobs[c->njobs] = sa_job_steal(job))) {
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    c->njobs++;
    return true;
}

static bool collect_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    collected_t *c = ctx;
    if (c->nnodes == c->nodes_cap) {
        size_t cap = c->nodes_cap ? c->nodes_cap * 2 : 256;
        sa_node_t **v = realloc(c->nodes, cap * sizeof *v);
        if (!v) {
            sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
            return false;
        }
        c->nodes = v;
        c->nodes_cap = cap;
    }
    if (!(c->nodes[c->nnodes] = sa_node_steal(node))) {
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    c->nnodes++;
    return true;
}

static void collected_clear(collected_t *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        sa_job_destroy(c->jobs[i]);
    for (size_t i = 0; i < c->nnodes; i++)
        sa_node_destroy(c->nodes[i]);
    free(c->jobs);
    free(c->nodes);
    memset(c, 0, sizeof *c);
}

/* A name for messages: the file path, or the kind for captured output. */
static const char *input_name(const sa_input_t *in, sa_input_kind_t k)
{
    if (in->path)
        return strcmp(in->path, "-") == 0 ? "(stdin)" : in->path;
    return sa_input_kind_name(k);
}

/* Parses one input into c (and meta); checks it holds the expected kind of records. */
static bool parse_input(const sa_input_t *in, sa_input_kind_t k, const sa_sacct_text_opts_t *topts,
                        collected_t *c, sa_meta_t *meta, sa_error_t *error)
{
    sa_sink_t sink = {collect_job, collect_node, c};
    sa_reader_t r;
    sa_kind_t kind;
    int fd = -1;
    bool ok;

    if (in->path) {
        fd = strcmp(in->path, "-") == 0 ? 0 : open(in->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", in->path, strerror(errno));
            return false;
        }
        sa_reader_init_fd(&r, fd);
    } else {
        sa_reader_init_mem(&r, in->data, in->len);
    }
    ok = sa_parse_any(&r, topts, &sink, meta, &kind, error);
    if (fd > 0)
        close(fd);
    if (ok) {
        bool fits = (k == SA_IN_SQUEUE && kind == SA_KIND_SQUEUE_JSON) ||
                    (k == SA_IN_SACCT && (kind == SA_KIND_SACCT_JSON || kind == SA_KIND_SACCT_TEXT)) ||
                    (k == SA_IN_SINFO && (kind == SA_KIND_NODES_JSON || kind == SA_KIND_SINFO_JSON ||
                                          kind == SA_KIND_SCONTROL_NODES_TEXT));
        /* an empty "jobs" list reads as squeue; it is fine as an empty sacct window too */
        if (!fits && k == SA_IN_SACCT && kind == SA_KIND_SQUEUE_JSON && c->njobs == 0)
            fits = true;
        if (!fits) {
            sa_error_set(error, SA_ERR_INPUT, 0, "expected %s output, found %s", sa_input_kind_name(k),
                         sa_kind_name(kind));
            ok = false;
        }
    }
    if (ok && meta->errors.n) {
        sa_error_set(error, SA_ERR_SLURM, 0, "Slurm reported an error: %s", meta->errors.v[0]);
        ok = false;
    }
    if (!ok)
        sa_error_prefix(error, "%s", input_name(in, k));
    return ok;
}

bool sa_ingest_read_file(const char *path, size_t cap, const char *too_big, char **data, size_t *len,
                         sa_error_t *error)
{
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    size_t size = 0, alloc = 0;
    char *buf = NULL;

    if (fd < 0) {
        sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", path, strerror(errno));
        return false;
    }
    for (;;) {
        ssize_t n;
        if (size == alloc) {
            char *b;
            alloc = alloc ? alloc * 2 : 1 << 16;
            if (alloc > cap + 1)
                alloc = cap + 1;
            if (size == alloc || !(b = realloc(buf, alloc))) {
                sa_error_set(error, SA_ERR_INPUT, 0, "%s: %s", path, too_big);
                goto fail;
            }
            buf = b;
        }
        n = read(fd, buf + size, alloc - size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        size += (size_t)n;
    }
    if (fd > 0)
        close(fd);
    *data = buf;
    *len = size;
    return true;
fail:
    if (fd > 0)
        close(fd);
    free(buf);
    return false;
}

/* Reads an sdiag input's bytes (file or memory). */
static bool parse_sdiag_input(const sa_input_t *in, sa_sdiag_t *sd, sa_error_t *error)
{
    char *buf = NULL;
    size_t len = 0;
    bool ok;

    if (in->path && !sa_ingest_read_file(in->path, 64u << 20, "sdiag output larger than 64 MiB", &buf, &len, error))
        return false;
    ok = sa_sdiag_parse_json(in->path ? buf : in->data, in->path ? len : in->len, sd, error);
    if (!ok)
        sa_error_prefix(error, "%s", in->path ? in->path : "sdiag");
    free(buf);
    return ok;
}

/* Writes jobs in batches; collects their ids for the vanish check when squeue. */
static bool write_jobs(sa_archive_t *a, const sa_obs_ctx_t *ctx, collected_t *c, bool squeue,
                       sa_ingest_stats_t *stats, sa_error_t *error)
{
    int64_t *ids = NULL;
    bool ok = true;

    for (size_t off = 0; ok && off < c->njobs; off += JOB_BATCH) {
        size_t n = c->njobs - off < JOB_BATCH ? c->njobs - off : JOB_BATCH;
        ok = sa_archive_ingest_jobs(a, ctx, c->jobs + off, n, &stats->jobs, error);
    }
    if (ok && squeue) {
        ids = malloc((c->njobs ? c->njobs : 1) * sizeof *ids);
        if (!ids) {
            sa_error_set(error, SA_ERR_MONGO, ENOMEM, "out of memory");
            return false;
        }
        for (size_t i = 0; i < c->njobs; i++)
            ids[i] = c->jobs[i]->job_id;
        ok = sa_archive_mark_vanished(a, ctx, ids, c->njobs, &stats->jobs, error);
    }
    free(ids);
    return ok;
}

/* Keeps the first release / data_parser seen, for ingest_runs. */
static void note_meta(sa_ingest_stats_t *stats, const sa_meta_t *m)
{
    if (m->slurm_release && !stats->slurm_release)
        stats->slurm_release = strdup(m->slurm_release);
    if (m->data_parser && !stats->data_parser)
        stats->data_parser = strdup(m->data_parser);
    for (size_t i = 0; i < m->warnings.n; i++) {
        sa_log(SA_LOG_WARN, "Slurm warning: %s", m->warnings.v[i]);
        sa_strv_push(&stats->warnings, m->warnings.v[i]);
    }
}

bool sa_ingest_snapshot(sa_archive_t *a, const sa_snapshot_t *snap, sa_ingest_stats_t *stats, bool *parsed_ok,
                        sa_error_t *error)
{
    collected_t c[SA_IN_COUNT];
    sa_meta_t meta[SA_IN_COUNT];
    sa_sdiag_t sd;
    sa_tsdb_t *db = NULL;
    bool have_sdiag = false, ok = false;
    double t0;

    memset(c, 0, sizeof c);
    for (int k = 0; k < SA_IN_COUNT; k++)
        sa_meta_init(&meta[k]);
    sa_sdiag_init(&sd);
    if (parsed_ok)
        *parsed_ok = false;

    /* 1. parse everything: a bad input writes nothing */
    t0 = now_ms();
    for (int k = 0; k < SA_IN_COUNT; k++) {
        const sa_input_t *in = &snap->in[k];
        if (!in->present)
            continue;
        if (k == SA_IN_SDIAG) {
            if (!parse_sdiag_input(in, &sd, error))
                goto done;
            have_sdiag = true;
            continue;
        }
        if (!parse_input(in, (sa_input_kind_t)k, &snap->topts, &c[k], &meta[k], error))
            goto done;
        note_meta(stats, &meta[k]);
    }
    if (snap->in[SA_IN_SINFO].present && c[SA_IN_SINFO].nnodes == 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: no nodes", input_name(&snap->in[SA_IN_SINFO], SA_IN_SINFO));
        goto done;
    }
    stats->ms_parse += now_ms() - t0;
    stats->squeue_records += c[SA_IN_SQUEUE].njobs;
    stats->sacct_records += c[SA_IN_SACCT].njobs;
    stats->nodes += c[SA_IN_SINFO].nnodes;
    if (parsed_ok)
        *parsed_ok = true;

    /* 2. the time series first: it is local, and a snapshot lands there whole */
    if (snap->sqlite_path && (c[SA_IN_SINFO].nnodes || have_sdiag)) {
        sa_tsdb_opts_t topts;
        t0 = now_ms();
        db = sa_tsdb_open(snap->sqlite_path, false, 10000, error);
        if (!db)
            goto done;
        sa_tsdb_opts_init(&topts);
        if (snap->max_gap_s > 0)
            topts.max_gap_s = snap->max_gap_s;
        topts.sdiag = have_sdiag ? &sd : NULL;
        if (c[SA_IN_SINFO].nnodes) {
            if (!sa_tsdb_write_snapshot(db, snap->cluster, snap->at, c[SA_IN_SINFO].nodes, c[SA_IN_SINFO].nnodes,
                                        &topts, error))
                goto done;
        } else if (!sa_tsdb_write_sdiag(db, snap->cluster, snap->at, &sd, error)) {
            goto done;
        }
        stats->ms_sqlite += now_ms() - t0;
    }

    /* 3. jobs: squeue (a complete listing), then sacct */
    if (a) {
        json_t *max_times = json_object();
        sa_obs_ctx_t ctx = {snap->cluster, snap->at, NULL, NULL};
        t0 = now_ms();
        for (int k = SA_IN_SQUEUE; k <= SA_IN_SACCT; k++) {
            if (!snap->in[k].present)
                continue;
            ctx.slurm_release = meta[k].slurm_release;
            ctx.data_parser = meta[k].data_parser;
            if (!write_jobs(a, &ctx, &c[k], k == SA_IN_SQUEUE, stats, error)) {
                json_decref(max_times);
                goto done;
            }
            json_object_set_new(max_times, k == SA_IN_SQUEUE ? "last_squeue_at" : "last_sacct_at",
                                json_integer(snap->at));
        }
        if (snap->in[SA_IN_SINFO].present)
            json_object_set_new(max_times, "last_sinfo_at", json_integer(snap->at));
        if (!sa_archive_cluster_update(a, snap->cluster, max_times, NULL, error)) {
            json_decref(max_times);
            goto done;
        }
        json_decref(max_times);
        stats->ms_mongo += now_ms() - t0;
    }
    ok = true;
done:
    sa_tsdb_close(db);
    sa_sdiag_clear(&sd);
    for (int k = 0; k < SA_IN_COUNT; k++) {
        collected_clear(&c[k]);
        sa_meta_clear(&meta[k]);
    }
    return ok;
}
