/*
 * sa_run.c - one slurm-ingest run for one cluster (see sa_run.h).
 *
 * Order of work:
 *   1. take <lock-dir>/<cluster>.lock (a second run exits with SA_EXIT_LOCKED);
 *   2. open MongoDB; unreachable -> capture once, write the time series, spool the
 *      captures, exit "spooled";
 *   3. replay the spool, oldest snapshot first (removing each one that lands);
 *   4. capture sinfo, squeue and sdiag (or read the given files), keep them in
 *      --archive-dir, ingest them as one snapshot;
 *   5. sacct from the watermark (minus the overlap) to now in windows of
 *      backfill-window, each ingested and then recorded as the new watermark
 *      (<lock-dir>/<cluster>.sacct-watermark), so an interrupted backfill resumes;
 *   6. write the ingest_runs document.
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_exec.h"
#include "sa_time.h"
#include "sa_lock.h"
#include "sa_log.h"
#include "sa_spool.h"
#include "sa_strings.h"

/* The columns slurm-ingest asks sacct for; free text (JobName) last. */
#define SACCT_FIELDS                                                                                          \
    "JobID,JobIDRaw,Partition,QOS,Account,User,UID,Group,GID,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,"   \
    "Timelimit,State,ExitCode,DerivedExitCode,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,AllocTRES,NodeList,"       \
    "Reservation,WCKey,Reason,JobName"
#define SACCT_DELIM "\x1f" /* ASCII unit separator: cannot occur in a job name typed in a shell */

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *cfg_str(const sa_run_opts_t *o, const char *key)
{
    return sa_config_get_or_default(o->cfg, key);
}

/* Runs one Slurm command; its stdout becomes the input's bytes. */
static bool capture(const sa_run_opts_t *o, const char *const argv[], sa_input_t *in, double *exec_ms,
                    sa_error_t *error)
{
    sa_exec_opts_t eo = {0};
    sa_exec_result_t res;
    double t0 = mono_ms();
    bool ok;

    eo.timeout_ms = sa_config_get_num(o->cfg, "timeout", 60) * 1000;
    eo.max_output = (size_t)sa_config_get_num(o->cfg, "max-output", 1 << 30);
    ok = sa_exec_run(argv, &eo, &res, error);
    *exec_ms += mono_ms() - t0;
    if (!ok && error)
        error->domain = SA_ERR_SLURM;
    if (ok && res.err && res.err[strspn(res.err, " \t\r\n")]) {
        /* Slurm prints its errors on stderr, sometimes with exit status 0 */
        char first[256];
        const char *line = res.err + strspn(res.err, " \t\r\n");
        snprintf(first, sizeof first, "%.*s", (int)strcspn(line, "\n"), line);
        sa_error_set(error, SA_ERR_SLURM, 0, "%s printed an error: %s", argv[0], first);
        ok = false;
    }
    if (ok) {
        in->data = res.out;
        in->len = res.out_len;
        in->present = true;
        res.out = NULL;
    }
    sa_exec_result_clear(&res);
    return ok;
}

static void snapshot_clear(sa_snapshot_t *s)
{
    for (int k = 0; k < SA_IN_COUNT; k++)
        free(s->in[k].data);
    memset(s->in, 0, sizeof s->in);
}

/* Copies every present input of a snapshot into dir (spool or archive). */
static bool keep_snapshot(const sa_run_opts_t *o, const char *dir, const sa_snapshot_t *s, sa_error_t *error)
{
    for (int k = 0; k < SA_IN_COUNT; k++) {
        const sa_input_t *in = &s->in[k];
        char *data = in->data, *path = NULL;
        size_t len = in->len;
        bool ok;
        if (!in->present)
            continue;
        if (in->path) {
            size_t cap = (size_t)sa_config_get_num(o->cfg, "max-output", 1 << 30);
            char too_big[64];
            snprintf(too_big, sizeof too_big, "larger than max-output (%zu bytes)", cap);
            if (!sa_ingest_read_file(in->path, cap, too_big, &data, &len, error))
                return false;
        }
        ok = sa_spool_put(dir, s->cluster, sa_input_kind_name((sa_input_kind_t)k), s->at, data, len, &path, error);
        if (in->path)
            free(data);
        if (!ok)
            return false;
        sa_log(SA_LOG_DEBUG, "kept %s", path);
        free(path);
    }
    return true;
}

/* ---- the sacct watermark -------------------------------------------------------- */

static char *watermark_path(const sa_run_opts_t *o)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s.sacct-watermark", cfg_str(o, "lock-dir"), cfg_str(o, "cluster")) < 0)
        return NULL;
    return p;
}

static int64_t watermark_read(const sa_run_opts_t *o)
{
    char *path = watermark_path(o), buf[64] = "";
    FILE *f = path ? fopen(path, "r") : NULL;
    int64_t t = SA_UNSET;

    if (f) {
        if (fgets(buf, sizeof buf, f)) {
            buf[strcspn(buf, "\n")] = '\0';
            if (!sa_parse_int64(buf, &t))
                t = SA_UNSET;
        }
        fclose(f);
    }
    free(path);
    return t;
}

/* Writes the watermark atomically (temp file + rename). */
static bool watermark_write(const sa_run_opts_t *o, int64_t t, sa_error_t *error)
{
    char *path = watermark_path(o), *tmp = NULL;
    FILE *f;
    bool ok = false;

    if (!path || asprintf(&tmp, "%s.tmp", path) < 0)
        goto done;
    f = fopen(tmp, "w");
    if (!f)
        goto done;
    ok = fprintf(f, "%lld\n", (long long)t) > 0;
    ok = (fflush(f) == 0 && fsync(fileno(f)) == 0) && ok;
    ok = fclose(f) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
done:
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "%s: cannot write the sacct watermark: %s", path ? path : "?",
                     strerror(errno));
    free(path);
    free(tmp);
    return ok;
}

/* ---- spool and replay ------------------------------------------------------------- */

/*
 * Ingests the captures under dir in time order, one snapshot per time. remove:
 * delete each snapshot's files once it landed (the spool); stop at the first failure.
 */
static bool replay_dir(const sa_run_opts_t *o, sa_archive_t *a, const char *dir, bool remove, size_t *snapshots,
                       sa_ingest_stats_t *stats, sa_error_t *error)
{
    sa_spool_entry_t *e = NULL;
    size_t n = 0, i = 0;
    bool ok = true;

    *snapshots = 0;
    if (!sa_spool_list(dir, cfg_str(o, "cluster"), &e, &n, error))
        return false;
    while (ok && i < n) {
        sa_snapshot_t s = {0};
        size_t first = i;
        s.cluster = cfg_str(o, "cluster");
        s.at = e[i].at;
        s.sqlite_path = sa_config_get(o->cfg, "sqlite");
        s.max_gap_s = sa_config_get_num(o->cfg, "max-gap", 900);
        s.topts.delimiter = NULL;
        for (; i < n && e[i].at == s.at; i++) {
            for (int k = 0; k < SA_IN_COUNT; k++) {
                if (strcmp(e[i].kind, sa_input_kind_name((sa_input_kind_t)k)) == 0) {
                    s.in[k].path = e[i].path;
                    s.in[k].present = true;
                }
            }
        }
        ok = sa_ingest_snapshot(a, &s, stats, NULL, error);
        if (!ok) {
            char when[32];
            sa_error_prefix(error, "replaying the capture of %s", sa_time_format(s.at, when, sizeof when));
            break;
        }
        (*snapshots)++;
        for (size_t j = first; remove && j < i; j++) {
            if (!sa_spool_remove(e[j].path, error)) {
                ok = false;
                break;
            }
        }
    }
    sa_spool_entries_free(e, n);
    return ok;
}

/* ---- the run -------------------------------------------------------------------------- */

/* Captures sinfo, squeue and sdiag (Slurm mode) or points at the given files. */
static bool take_snapshot(const sa_run_opts_t *o, sa_snapshot_t *s, bool files_mode, double *exec_ms,
                          sa_error_t *error)
{
    s->cluster = cfg_str(o, "cluster");
    s->at = o->at;
    s->topts = o->topts;
    s->sqlite_path = sa_config_get(o->cfg, "sqlite");
    s->max_gap_s = sa_config_get_num(o->cfg, "max-gap", 900);
    if (files_mode) {
        for (int k = 0; k < SA_IN_COUNT; k++) {
            if (o->files[k] && k != SA_IN_SACCT) {
                s->in[k].path = o->files[k];
                s->in[k].present = true;
            }
        }
        return true;
    }
    {
        const char *sinfo[] = {cfg_str(o, "sinfo-command"), "-N", "--json", NULL};
        const char *squeue[] = {cfg_str(o, "squeue-command"), "--all", "--json", NULL};
        const char *sdiag[] = {cfg_str(o, "sdiag-command"), "--json", NULL};
        sa_error_t warn;
        if (!capture(o, sinfo, &s->in[SA_IN_SINFO], exec_ms, error) ||
            !capture(o, squeue, &s->in[SA_IN_SQUEUE], exec_ms, error))
            return false;
        /* sdiag --json exists from Slurm 23.02 on: without it the run goes on */
        if (!capture(o, sdiag, &s->in[SA_IN_SDIAG], exec_ms, &warn))
            sa_log(SA_LOG_INFO, "no scheduler statistics: %s", warn.message);
    }
    return true;
}

/* Puts run details into the ingest_runs document. */
static json_t *run_doc(const sa_run_opts_t *o, time_t started, const sa_ingest_stats_t *st, double exec_ms,
                       bool ok, const char *err, bool spooled, size_t replayed)
{
    json_t *d = json_object();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    json_object_set_new(d, "cluster", json_string(cfg_str(o, "cluster")));
    json_object_set_new(d, "host", json_string(host));
    json_object_set_new(d, "version", json_string(SA_VERSION));
    json_object_set_new(d, "started_at", json_integer((json_int_t)started));
    json_object_set_new(d, "finished_at", json_integer((json_int_t)time(NULL)));
    json_object_set_new(d, "at", json_integer(o->at));
    json_object_set_new(d, "ok", json_boolean(ok));
    if (err)
        json_object_set_new(d, "error", json_string(err));
    json_object_set_new(d, "spooled", json_boolean(spooled));
    json_object_set_new(d, "replayed_snapshots", json_integer((json_int_t)replayed));
    json_object_set_new(d, "phases_ms", json_pack("{s:f, s:f, s:f, s:f}", "exec", exec_ms, "parse", st->ms_parse,
                                                  "mongo", st->ms_mongo, "sqlite", st->ms_sqlite));
    json_object_set_new(d, "counts",
                        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "squeue_records",
                                  (json_int_t)st->squeue_records, "sacct_records", (json_int_t)st->sacct_records,
                                  "jobs_seen", (json_int_t)st->jobs.jobs, "jobs_inserted",
                                  (json_int_t)st->jobs.inserted, "jobs_changed", (json_int_t)st->jobs.changed,
                                  "jobs_unchanged", (json_int_t)st->jobs.unchanged, "jobs_reused",
                                  (json_int_t)st->jobs.reused, "jobs_vanished", (json_int_t)st->jobs.vanished,
                                  "write_statements", (json_int_t)st->jobs.write_statements, "nodes",
                                  (json_int_t)st->nodes));
    if (st->slurm_release)
        json_object_set_new(d, "slurm_release", json_string(st->slurm_release));
    if (st->data_parser)
        json_object_set_new(d, "data_parser", json_string(st->data_parser));
    if (st->warnings.n) {
        json_t *w = json_array();
        for (size_t i = 0; i < st->warnings.n && i < 20; i++)
            json_array_append_new(w, json_string(st->warnings.v[i]));
        json_object_set_new(d, "slurm_warnings", w);
    }
    return d;
}

static void print_stats(const json_t *run)
{
    char *s = json_dumps(run, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        printf("%s\n", s);
    free(s);
}

/* Ingests sacct from the watermark to now in windows; each window moves the watermark. */
static bool sacct_windows(const sa_run_opts_t *o, sa_archive_t *a, bool one_window, sa_ingest_stats_t *st,
                          double *exec_ms, sa_snapshot_t *spool_into, sa_error_t *error)
{
    int64_t wm = watermark_read(o), overlap = sa_config_get_num(o->cfg, "sacct-overlap", 3600);
    int64_t window = sa_config_get_num(o->cfg, "backfill-window", 86400), start, total, done = 0;
    const char *since = sa_config_get(o->cfg, "since");
    bool tty = isatty(2);

    if (since) {
        int64_t t;
        if (!sa_time_parse(since, o->at, &t, error)) {
            sa_error_prefix(error, "--since");
            return false;
        }
        if (wm == SA_UNSET || t < wm - overlap)
            wm = t + overlap; /* a requested backfill starts exactly at --since */
    }
    start = wm == SA_UNSET ? o->at - 86400 : wm - overlap;
    if (window <= 0)
        window = 86400;
    total = o->at - start;
    while (start < o->at) {
        int64_t end = start + window < o->at ? start + window : o->at;
        char s_iso[32], e_iso[32], *s_arg = NULL, *e_arg = NULL;
        sa_snapshot_t snap = {0};
        bool ok;

        if (one_window)
            end = o->at;
        sa_time_format(start, s_iso, sizeof s_iso);
        sa_time_format(end, e_iso, sizeof e_iso);
        s_iso[19] = e_iso[19] = '\0'; /* sacct takes no zone suffix; it runs with TZ=UTC */
        if (asprintf(&s_arg, "--starttime=%s", s_iso) < 0 || asprintf(&e_arg, "--endtime=%s", e_iso) < 0) {
            sa_error_set(error, SA_ERR_IO, ENOMEM, "out of memory");
            return false;
        }
        {
            /* with its header line, so a spooled or archived capture describes itself */
            const char *argv[] = {cfg_str(o, "sacct-command"), "--allusers", "--duplicates", "--parsable2",
                                  "--delimiter=" SACCT_DELIM, "--format=" SACCT_FIELDS, s_arg, e_arg, NULL};
            ok = capture(o, argv, &snap.in[SA_IN_SACCT], exec_ms, error);
        }
        free(s_arg);
        free(e_arg);
        if (!ok)
            return false;
        snap.cluster = cfg_str(o, "cluster");
        snap.at = o->at;
        snap.topts.delimiter = SACCT_DELIM;
        if (spool_into) {
            /* MongoDB is away: keep the window for the replay */
            spool_into->in[SA_IN_SACCT] = snap.in[SA_IN_SACCT];
            spool_into->topts = snap.topts;
            return watermark_write(o, end, error);
        }
        ok = sa_ingest_snapshot(a, &snap, st, NULL, error);
        snapshot_clear(&snap);
        if (!ok || !watermark_write(o, end, error))
            return false;
        done = end - (o->at - total);
        if (total > window) {
            if (tty)
                fprintf(stderr, "\rslurm-ingest: sacct backfill %s .. %s  %3d%%", s_iso, e_iso,
                        (int)(100 * done / (total ? total : 1)));
            else
                sa_log(SA_LOG_INFO, "sacct backfill: up to %s (%d%%)", e_iso, (int)(100 * done / total));
        }
        start = end;
    }
    if (tty && total > window)
        fputc('\n', stderr);
    return true;
}

/* Makes dir (and its parents) if missing. */
static bool mkdirs(const char *dir, sa_error_t *error)
{
    char *p = strdup(dir);
    bool ok = true;
    for (char *s = p + 1; ok && *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            ok = false;
        *s = '/';
    }
    if (ok && mkdir(p, 0755) < 0 && errno != EEXIST)
        ok = false;
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "%s: cannot create: %s", dir, strerror(errno));
    free(p);
    return ok;
}

sa_run_result_t sa_run_ingest(const sa_run_opts_t *o, sa_error_t *error)
{
    const char *cluster = cfg_str(o, "cluster"), *archive_dir = sa_config_get(o->cfg, "archive-dir");
    bool files_mode = false, spooled = false, ok = false;
    sa_run_result_t result = SA_RUN_FAILED;
    sa_ingest_stats_t st;
    sa_snapshot_t snap = {0};
    sa_archive_t *a = NULL;
    sa_lock_t *lock = NULL;
    char *lock_path = NULL, *note = NULL;
    time_t started = time(NULL);
    double exec_ms = 0;
    size_t replayed = 0;
    sa_error_t err2;

    sa_ingest_stats_init(&st);
    for (int k = 0; k < SA_IN_COUNT; k++)
        files_mode = files_mode || o->files[k];
    if (!mkdirs(cfg_str(o, "lock-dir"), error) || asprintf(&lock_path, "%s/%s.lock", cfg_str(o, "lock-dir"), cluster) < 0)
        goto done;
    lock = sa_lock_acquire(lock_path, error);
    if (!lock)
        goto done;

    if (!o->no_mongo) {
        a = sa_archive_open(o->mongo_uri, cfg_str(o, "db"), &note, error);
        if (note)
            sa_log(SA_LOG_DEBUG, "%s", note);
        if (!a && !(error->domain == SA_ERR_MONGO && error->code == 1))
            goto done;
        if (!a) {
            /* unreachable: capture once, keep the time series going, spool for later */
            sa_log(SA_LOG_WARN, "%s; spooling this run's captures", error->message);
            spooled = true;
        }
    }
    if (a) {
        size_t n = 0;
        if (!replay_dir(o, a, cfg_str(o, "spool-dir"), true, &n, &st, error)) {
            if (error->domain == SA_ERR_MONGO && error->code == 1)
                spooled = true;
            else
                goto done;
        }
        replayed = n;
        if (n)
            sa_log(SA_LOG_INFO, "replayed %zu spooled snapshot(s)", n);
    }

    if (!take_snapshot(o, &snap, files_mode, &exec_ms, error))
        goto done;
    if (files_mode && o->files[SA_IN_SACCT]) {
        snap.in[SA_IN_SACCT].path = o->files[SA_IN_SACCT];
        snap.in[SA_IN_SACCT].present = true;
    } else if (!files_mode && spooled) {
        if (!sacct_windows(o, NULL, true, &st, &exec_ms, &snap, error))
            goto done;
    }
    if (archive_dir && !keep_snapshot(o, archive_dir, &snap, error))
        goto done;
    if (spooled) {
        bool parsed;
        /* the time series is local: write it now; jobs wait in the spool */
        if (!sa_ingest_snapshot(NULL, &snap, &st, &parsed, error))
            goto done;
        if (!keep_snapshot(o, cfg_str(o, "spool-dir"), &snap, error))
            goto done;
        result = SA_RUN_SPOOLED;
        ok = true;
        goto done;
    }
    {
        bool parsed = false;
        if (!sa_ingest_snapshot(a, &snap, &st, &parsed, error)) {
            if (parsed && error->domain == SA_ERR_MONGO && error->code == 1) {
                sa_log(SA_LOG_WARN, "%s; spooling this run's captures", error->message);
                if (!keep_snapshot(o, cfg_str(o, "spool-dir"), &snap, error))
                    goto done;
                spooled = true;
                result = SA_RUN_SPOOLED;
                ok = true;
            }
            goto done;
        }
    }
    if (!files_mode && a && !sacct_windows(o, a, false, &st, &exec_ms, NULL, error))
        goto done;
    result = SA_RUN_OK;
    ok = true;
done:
    if (a || o->print_stats) {
        json_t *run = run_doc(o, started, &st, exec_ms, ok, ok ? NULL : error->message, spooled, replayed);
        if (a && !spooled && !sa_archive_record_run(a, run, &err2))
            sa_log(SA_LOG_WARN, "could not record the run: %s", err2.message);
        if (o->print_stats)
            print_stats(run);
        json_decref(run);
    }
    snapshot_clear(&snap);
    sa_archive_close(a);
    sa_lock_release(lock);
    sa_ingest_stats_clear(&st);
    free(lock_path);
    free(note);
    return result;
}

sa_run_result_t sa_run_replay(const sa_run_opts_t *o, const char *dir, sa_error_t *error)
{
    sa_ingest_stats_t st;
    sa_archive_t *a = NULL;
    size_t n = 0;
    bool ok;

    sa_ingest_stats_init(&st);
    if (!o->no_mongo && !(a = sa_archive_open(o->mongo_uri, cfg_str(o, "db"), NULL, error)))
        return SA_RUN_FAILED;
    ok = replay_dir(o, a, dir, false, &n, &st, error);
    sa_log(SA_LOG_INFO, "replayed %zu snapshot(s) from %s", n, dir);
    if (o->print_stats) {
        json_t *run = run_doc(o, time(NULL), &st, 0, ok, ok ? NULL : error->message, false, n);
        print_stats(run);
        json_decref(run);
    }
    sa_archive_close(a);
    sa_ingest_stats_clear(&st);
    return ok ? SA_RUN_OK : SA_RUN_FAILED;
}
