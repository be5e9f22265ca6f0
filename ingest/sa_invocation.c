/*
 * sa_invocation.c - one slurm-ingest invocation for one cluster (see sa_invocation.h for the rule it keeps:
 * lock -> capture -> keep -> parse -> SQLite -> MongoDB -> watermark, drop).
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_invocation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_audit.h"
#include "sa_bson.h"
#include "sa_docstore.h"
#include "sa_exec.h"
#include "sa_fault.h"
#include "sa_fsutil.h"
#include "sa_jobcache.h"
#include "sa_lock.h"
#include "sa_promimp.h"
#include "sa_rollup.h"
#include "sa_rollup_rebuild.h"
#include "sa_rollup_retype.h"
#include "sa_rollup_writer.h"
#include "sa_log.h"
#include "sa_snapshot.h"
#include "sa_slurmtext.h"
#include "sa_time.h"
#include "sa_tsdb.h"
#include "sa_vec.h"

/*
 * The columns slurm-ingest asks sacct for; free text (JobName) last. The usage columns
 * (TotalCPU ... ConsumedEnergyRaw) are in every release since 17.11 (TRESUsage* came
 * then); 22.05 is the oldest the project runs against.
 */
#define SACCT_FIELDS                                                                                          \
    "JobID,JobIDRaw,Partition,QOS,Account,User,UID,Group,GID,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,"   \
    "Timelimit,State,ExitCode,DerivedExitCode,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,AllocTRES,NodeList,"       \
    "Reservation,WCKey,Reason,TotalCPU,UserCPU,SystemCPU,MaxRSS,AveRSS,TRESUsageInTot,TRESUsageInAve,"       \
    "TRESUsageInMax,TRESUsageOutTot,ConsumedEnergyRaw,JobName"
#define SACCT_DELIM "\x1f" /* ASCII unit separator: cannot occur in a job name typed in a shell */

#define MARK_TSDB "tsdb.done"

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * The phases of a run, as ingest_runs' phases_ms names them. Every millisecond from the
 * run's start to its record is in exactly one: a phase is the time since the previous
 * lap, less what the nested counters (exec: the Slurm commands; parse, sqlite, mongo:
 * landing a snapshot) took meanwhile, which are phases of their own.
 */
enum { PH_LOCK, PH_CONNECT, PH_VALIDATOR, PH_INDEXES, PH_MIGRATE, PH_ROLLUPS, PH_CACHE, PH_NODE_CONFIG, PH_CAPTURE,
       PH_LAND, PH_BACKFILL, PH_RETYPE, PH_PROM, PH_FINISH, PH_N };
static const char *const phase_names[PH_N] = {
    [PH_LOCK] = "lock",           /* directories checked, the cluster's lock, half-written snapshots swept */
    [PH_CONNECT] = "connect",     /* the client made and the server's first answer */
    [PH_VALIDATOR] = "validator", /* create / collMod of jobs with the $jsonSchema validator */
    [PH_INDEXES] = "indexes",     /* the indexes listed (and created when missing) */
    [PH_MIGRATE] = "migrate",     /* the check for (and move of) documents of 0.1 */
    [PH_ROLLUPS] = "rollups",     /* the rollups set up (built for a new cluster) and their journal recovered */
    [PH_CACHE] = "cache",         /* the job cache opened and checked against the archive (or rebuilt) */
    [PH_NODE_CONFIG] = "node_config",
    [PH_CAPTURE] = "capture",     /* the snapshot written, fsync'ed and renamed, less exec */
    [PH_LAND] = "land",           /* the spool listed, marks, watermark, snapshots dropped, less parse/sqlite/mongo */
    [PH_BACKFILL] = "backfill",   /* sacct windows after the first, less exec/parse/sqlite/mongo */
    [PH_RETYPE] = "retype",       /* runs whose untyped GPUs the node snapshots now type (sa_rollup_retype) */
    [PH_PROM] = "prometheus",     /* the Prometheus import (sa_promimp.h) */
    [PH_FINISH] = "finish",       /* from the last step to the run's record */
};

/* Everything one run holds. */
typedef struct {
    const sa_invocation_opts_t *o;
    const sa_ingest_config_t *c;
    sa_archive_t *archive;   /* NULL: unreachable, or --no-mongo */
    sa_rollup_writer_t *rollups; /* the archive's hook: its rollups (ingest/rollup/), with the archive */
    int settle_s;                /* its recovery's wait for a dead writer's writes in flight (the verify's) */
    sa_jobcache_t *cache;
    bool unreachable;        /* MongoDB could not be reached (now or during the run) */
    sa_error_t failure;      /* the first failure to report at the end (domain NONE: none) */
    sa_ingest_stats_t st;
    double exec_ms;
    double t_begin, t_last;  /* monotonic ms: the run's start, the last lap */
    double nested_last;      /* exec + parse + sqlite + mongo at the last lap */
    double ph[PH_N];         /* ms per phase */
    size_t landed, rejected, spooled_left;
    char *setaside_dir;
    char *rejected_dir_note;
    char *kept_path;         /* this run's snapshot of --squeue/--sinfo/... files, in the spool */
} run_t;

/* Ends the current phase ph: the time since the last lap, less the nested counters' share. */
static void lap(run_t *r, int ph)
{
    double now = mono_ms(), nested = r->exec_ms + r->st.ms_parse + r->st.ms_sqlite + r->st.ms_mongo;
    r->ph[ph] += (now - r->t_last) - (nested - r->nested_last);
    r->t_last = now;
    r->nested_last = nested;
}

/* Keeps the first failure of the run (later ones are logged only). */
static void note_failure(run_t *r, const sa_error_t *e)
{
    if (r->failure.domain == SA_ERR_NONE)
        r->failure = *e;
    else
        sa_log(SA_LOG_ERROR, "%s", e->message);
}

/* ---- the sacct watermark -------------------------------------------------------- */

static char *watermark_path(const sa_ingest_config_t *c)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s.sacct-watermark", c->lock_dir, c->cluster) < 0)
        return NULL;
    return p;
}

/*
 * The watermark file: the end of the last sacct window that landed, and, on a second
 * line "since T", the --since date of the backfill that set it (so that giving the same
 * --since again resumes that backfill instead of starting it over).
 */
static void watermark_read_with_since(const sa_ingest_config_t *c, int64_t *wm, int64_t *since)
{
    char *path = watermark_path(c), buf[128] = "";
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;

    *wm = *since = SA_UNSET;
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n > 0 && sa_file_is_ours(fd, path, NULL)) {
            char *nl;
            buf[n] = '\0';
            nl = strchr(buf, '\n');
            if (nl)
                *nl++ = '\0';
            if (!sa_parse_int64(buf, wm))
                *wm = SA_UNSET;
            if (nl && strncmp(nl, "since ", 6) == 0) {
                nl[strcspn(nl, "\n")] = '\0';
                if (!sa_parse_int64(nl + 6, since))
                    *since = SA_UNSET;
            }
        }
        close(fd);
    }
    free(path);
}

static int64_t watermark_read(const sa_ingest_config_t *c)
{
    int64_t wm, since;
    watermark_read_with_since(c, &wm, &since);
    return wm;
}

/*
 * Moves the watermark to t, durably: forward only, unless the window belongs to a new
 * backfill (since != SA_UNSET), which starts over from its --since date.
 */
static bool watermark_advance(run_t *r, int64_t t, int64_t since, sa_error_t *error)
{
    char *path, buf[96];
    bool ok;
    int64_t old, old_since;

    watermark_read_with_since(r->c, &old, &old_since);
    if (since == SA_UNSET)
        since = old_since;
    if (old != SA_UNSET && old >= t && since == old_since)
        return true;
    if (!(path = watermark_path(r->c))) {
        sa_error_nomem(error);
        return false;
    }
    if (since != SA_UNSET)
        snprintf(buf, sizeof buf, "%lld\nsince %lld\n", (long long)t, (long long)since);
    else
        snprintf(buf, sizeof buf, "%lld\n", (long long)t);
    ok = sa_write_file_atomic(path, -1, buf, strlen(buf), 0640, error);
    free(path);
    if (ok && r->archive) {
        /* for admins and `slurm-report health`; the file is the one the run trusts */
        json_t *mt = json_pack("{s:I}", "sacct_watermark", (json_int_t)t);
        sa_error_t e2;
        if (!sa_archive_cluster_update(r->archive, r->c->cluster, mt, NULL, &e2))
            sa_log(SA_LOG_DEBUG, "sacct watermark not recorded in clusters: %s", e2.message);
        json_decref(mt);
    }
    return ok;
}

/* ---- capture and keep ------------------------------------------------------------- */

/* Runs one Slurm command with its stdout streamed into the snapshot's file for kind. */
static bool capture_command(run_t *r, sa_snapshot_txn_t *t, int kind, const char *const argv[], uint64_t cap,
                            sa_error_t *error)
{
    sa_exec_opts_t eo = {0};
    sa_exec_result_t res;
    double t0 = mono_ms();
    int fd = sa_snapshot_open_input(t, kind, error);
    bool ok;

    if (fd < 0)
        return false;
    eo.timeout_ms = r->c->timeout * 1000;
    eo.max_output = (size_t)cap;
    eo.out_to_fd = true;
    eo.out_fd = fd;
    ok = sa_exec_run(argv, &eo, &res, error);
    r->exec_ms += mono_ms() - t0;
    if (!ok && error->domain == SA_ERR_IO)
        error->domain = SA_ERR_SLURM;
    if (ok && res.err && res.err[strspn(res.err, " \t\r\n")]) {
        /* Slurm prints its errors on stderr, sometimes with exit status 0 */
        char first[256];
        const char *line = res.err + strspn(res.err, " \t\r\n");
        snprintf(first, sizeof first, "%.*s", (int)strcspn(line, "\n"), line);
        sa_error_set(error, SA_ERR_SLURM, 0, "%s printed an error: %s", argv[0], first);
        ok = false;
    }
    sa_exec_result_clear(&res);
    return ok;
}

/*
 * Room left in the cluster's spool under spool-max, and the capture cap that gives. What
 * a killed run left half written (".new-*") is not counted: the run removed it already
 * (sweep_spool), or it could not and says so.
 */
static uint64_t capture_cap(run_t *r)
{
    char *cdir = NULL;
    uint64_t used = 0, room, cap = (uint64_t)r->c->max_output;
    if (asprintf(&cdir, "%s/%s", r->c->spool_dir, r->c->cluster) >= 0) {
        used = sa_tree_size_skip(cdir, SA_SNAP_TMP_PREFIX);
        free(cdir);
    }
    room = (uint64_t)r->c->spool_max > used ? (uint64_t)r->c->spool_max - used : 0;
    return room < cap ? room : cap;
}

/*
 * A capture cut at cap because the spool is near spool-max (not at max-output) is a
 * capture that cannot be kept (exit 10), not bad input or a failed Slurm command.
 */
static void spool_refusal(const run_t *r, uint64_t cap, sa_error_t *error)
{
    char what[sizeof error->message];
    if (error->code != EFBIG || cap >= (uint64_t)r->c->max_output)
        return;
    snprintf(what, sizeof what, "%s", error->message);
    sa_error_set(error, SA_ERR_SPOOL, ENOSPC, "%s/%s: spool-max (%lld bytes) leaves room for %llu bytes only (%.400s): "
                 "this run's capture is refused, nothing else is lost", r->c->spool_dir, r->c->cluster,
                 (long long)r->c->spool_max, (unsigned long long)cap, what);
}

/*
 * The sacct window [start, end) this run reads next: from the watermark minus the
 * overlap, or from --since when that backfill has not started yet (*new_since then
 * receives the date, else SA_UNSET). At most backfill-window long.
 */
static bool sacct_window(run_t *r, int64_t *start, int64_t *end, int64_t *new_since, sa_error_t *error)
{
    const sa_ingest_config_t *c = r->c;
    int64_t wm, done_since;

    watermark_read_with_since(c, &wm, &done_since);
    *new_since = SA_UNSET;
    *start = wm == SA_UNSET ? r->o->at - 86400 : wm - c->sacct_overlap;
    if (c->since) {
        int64_t t;
        if (!sa_time_parse(c->since, r->o->at, &t, error)) {
            sa_error_prefix(error, "--since");
            return false;
        }
        if (t != done_since) {
            /* a new backfill: it starts exactly at --since (then resumes from the watermark) */
            *start = t;
            *new_since = t;
        }
    }
    *end = r->o->at;
    if (*end - *start > c->backfill_window)
        *end = *start + c->backfill_window;
    return true;
}

/*
 * The sacct command of the window [start, end): every user, every incarnation (-D), the
 * columns the archive keeps, unit-separated. argv[0..8] is filled; its two time arguments
 * are *s_arg and *e_arg (caller frees both, also on failure). The one command line of the
 * ingest's windows and of the audit's.
 */
static bool sacct_argv(const sa_ingest_config_t *c, int64_t start, int64_t end, const char *argv[9], char **s_arg,
                       char **e_arg, sa_error_t *error)
{
    char s_iso[32], e_iso[32];

    *s_arg = *e_arg = NULL;
    sa_time_format(start, s_iso, sizeof s_iso);
    sa_time_format(end, e_iso, sizeof e_iso);
    s_iso[19] = e_iso[19] = '\0'; /* sacct takes no zone suffix; it runs with TZ=UTC */
    if (asprintf(s_arg, "--starttime=%s", s_iso) < 0) {
        *s_arg = NULL;
        return sa_error_nomem(error);
    }
    if (asprintf(e_arg, "--endtime=%s", e_iso) < 0) {
        *e_arg = NULL;
        return sa_error_nomem(error);
    }
    argv[0] = c->sacct_command;
    argv[1] = "--allusers";
    argv[2] = "--duplicates";
    argv[3] = "--parsable2";
    argv[4] = "--delimiter=" SACCT_DELIM;
    argv[5] = "--format=" SACCT_FIELDS;
    argv[6] = *s_arg;
    argv[7] = *e_arg;
    argv[8] = NULL;
    return true;
}

/*
 * Captures one sacct window into the snapshot (with its header, so the capture describes
 * itself). A window of a --since backfill (since set: its first; backfill: the ones after)
 * is marked so: its landing looks for the documents the job cache says are there.
 */
static bool capture_sacct(run_t *r, sa_snapshot_txn_t *t, int64_t start, int64_t end, int64_t since, bool backfill,
                          uint64_t cap, json_t *meta, sa_error_t *error)
{
    const char *argv[9];
    char *s_arg = NULL, *e_arg = NULL;
    bool ok;

    ok = sacct_argv(r->c, start, end, argv, &s_arg, &e_arg, error) &&
         capture_command(r, t, SA_IN_SACCT, argv, cap, error);
    free(s_arg);
    free(e_arg);
    if (ok) {
        json_t *w = json_pack("{s:I, s:I}", "start", (json_int_t)start, "end", (json_int_t)end);
        if (since != SA_UNSET)
            json_object_set_new(w, "since", json_integer(since));
        /* a --since backfill's window re-reads what the job cache may claim merged: its documents are looked
           for (sa_ingest_env_t.check_stored), so that one deleted since is written again */
        if (since != SA_UNSET || backfill)
            json_object_set_new(w, "backfill", json_true());
        json_object_set_new(meta, "sacct", w);
        json_object_set_new(meta, "delimiter", json_string(SACCT_DELIM));
    }
    return ok;
}

/*
 * Commits a snapshot to the spool and copies it to --archive-dir. *kept_out (may be
 * NULL) receives its path in the spool (caller frees).
 */
static bool keep(run_t *r, sa_snapshot_txn_t *t, json_t *meta, char **kept_out, sa_error_t *error)
{
    char *path = NULL;
    bool ok;

    sa_snapshot_set_meta(t, meta);
    if (!sa_snapshot_commit(t, &path, error))
        return false;
    sa_log(SA_LOG_DEBUG, "kept %s", path);
    ok = true;
    if (r->c->archive_dir) {
        sa_snapdir_t *v = NULL;
        size_t n = 0;
        /* the copy comes from the durable spool snapshot: list it back */
        ok = sa_snapdir_list(r->c->spool_dir, r->c->cluster, &v, &n, error);
        for (size_t i = 0; ok && i < n; i++) {
            if (strcmp(v[i].path, path) == 0)
                ok = sa_snapdir_copy_to(&v[i], r->c->archive_dir, r->c->cluster, error);
        }
        sa_snapdir_list_free(v, n);
        if (!ok)
            sa_error_prefix(error, "archive-dir");
    }
    if (ok && kept_out) {
        *kept_out = path;
        path = NULL;
    }
    free(path);
    return ok;
}

/*
 * Takes this run's snapshot: the given files (each read once), or sinfo, squeue,
 * sdiag and (MongoDB reachable) the first sacct window. Kept in the spool.
 */
static bool take_snapshot(run_t *r, bool files_mode, int64_t *sacct_end, sa_error_t *error)
{
    const sa_ingest_config_t *c = r->c;
    uint64_t cap = capture_cap(r);
    sa_snapshot_txn_t *t;
    json_t *meta = json_pack("{s:s, s:I, s:s, s:s}", "cluster", c->cluster, "at", (json_int_t)r->o->at, "source",
                             files_mode ? "files" : "slurm", "version", SA_VERSION);
    bool ok = false;

    *sacct_end = SA_UNSET;
    if (cap == 0) {
        sa_error_set(error, SA_ERR_SPOOL, ENOSPC, "%s/%s: the spool holds spool-max (%lld bytes) already: "
                     "this run's capture is refused, nothing else is lost", c->spool_dir, c->cluster,
                     (long long)c->spool_max);
        json_decref(meta);
        return false;
    }
    if (!(t = sa_snapshot_begin(c->spool_dir, c->cluster, r->o->at, error))) {
        json_decref(meta);
        return false;
    }
    if (files_mode) {
        for (int k = 0; k < SA_IN_COUNT; k++) {
            if (r->o->files[k] && !sa_snapshot_copy_input(t, k, r->o->files[k], cap, error))
                goto done;
        }
        if (r->o->topts.delimiter)
            json_object_set_new(meta, "delimiter", json_string(r->o->topts.delimiter));
        if (r->o->topts.fields)
            json_object_set_new(meta, "fields", json_string(r->o->topts.fields));
        /* the zone of a capture in local time goes with it: a replay reads it the same way */
        if (c->tz && !sa_tz_is_utc(c->tz))
            json_object_set_new(meta, "tz", json_string(c->tz));
    } else {
        const char *sinfo[] = {c->sinfo_command, "-N", "--json", NULL};
        const char *squeue[] = {c->squeue_command, "--all", "--json", NULL};
        const char *sdiag[] = {c->sdiag_command, "--json", NULL};
        sa_error_t warn;
        if (!capture_command(r, t, SA_IN_SINFO, sinfo, cap, error) ||
            !capture_command(r, t, SA_IN_SQUEUE, squeue, cap, error))
            goto done;
        /* sdiag --json exists from Slurm 23.02 on: without it the run goes on */
        if (!capture_command(r, t, SA_IN_SDIAG, sdiag, cap, &warn)) {
            sa_log(SA_LOG_INFO, "no scheduler statistics: %s", warn.message);
            sa_snapshot_drop_input(t, SA_IN_SDIAG);
        }
        if (r->archive) {
            int64_t start, end, since;
            if (!sacct_window(r, &start, &end, &since, error) ||
                !capture_sacct(r, t, start, end, since, false, cap, meta, error))
                goto done;
            *sacct_end = end;
        } else {
            sa_log(SA_LOG_INFO, "MongoDB unreachable: sacct waits for the next run (Slurm keeps it)");
        }
    }
    ok = keep(r, t, meta, files_mode ? &r->kept_path : NULL, error);
    t = NULL;
    if (ok)
        SA_FAULT_POINT("kept");
done:
    if (!ok)
        spool_refusal(r, cap, error);
    sa_snapshot_abort(t);
    json_decref(meta);
    return ok;
}

/* ---- landing kept snapshots ---------------------------------------------------------- */

/* The ingest view of a kept snapshot. */
static void snapshot_of(const sa_snapdir_t *sd, const char *cluster, sa_snapshot_t *snap)
{
    const json_t *meta = sd->meta;
    memset(snap, 0, sizeof *snap);
    snap->cluster = cluster;
    snap->at = sd->at;
    for (int k = 0; k < SA_IN_COUNT; k++)
        snap->files[k] = sd->files[k];
    if (json_is_string(json_object_get(meta, "delimiter")))
        snap->topts.delimiter = json_string_value(json_object_get(meta, "delimiter"));
    if (json_is_string(json_object_get(meta, "fields")))
        snap->topts.fields = json_string_value(json_object_get(meta, "fields"));
    if (json_is_string(json_object_get(meta, "tz")))
        snap->topts.tz = json_string_value(json_object_get(meta, "tz"));
    snap->tsdb_done = sa_snapdir_has_mark(sd, MARK_TSDB);
}

/* MongoDB went away (or cannot be used): the rest of the run keeps its snapshots spooled. */
static void lose_archive(run_t *r)
{
    if (r->rollups) /* what it staged and did not commit is in its journal: the next run restages it */
        r->st.jobs.conflicts += sa_rollup_writer_stats(r->rollups)->conflicts;
    sa_rollup_detach(r->archive, r->rollups);
    r->rollups = NULL;
    sa_archive_close(r->archive);
    r->archive = NULL;
}

/*
 * Lands one snapshot. From the spool: inputs that cannot be parsed move to rejected/,
 * the time series mark is set, and once the jobs landed the watermark moves and the
 * snapshot goes. From a replayed directory nothing there changes. False only for a
 * failure that must stop the run (the snapshot stays).
 */
static bool land(run_t *r, const sa_snapdir_t *sd, bool from_spool, sa_error_t *error)
{
    sa_ingest_env_t env = {0};
    sa_ingest_outcome_t out;
    sa_snapshot_t snap;
    sa_error_t err;

    snapshot_of(sd, r->c->cluster, &snap);
    if (from_spool && r->kept_path && strcmp(sd->path, r->kept_path) == 0) {
        /* this run's own snapshot of the files given: messages name those files */
        for (int k = 0; k < SA_IN_COUNT; k++) {
            const char *f = r->o->files[k];
            if (snap.files[k] && f)
                snap.names[k] = strcmp(f, "-") == 0 ? "(stdin)" : f;
        }
    }
    env.archive = r->archive;
    env.cache = r->archive ? r->cache : NULL;
    env.sqlite_path = r->c->sqlite;
    env.max_gap_s = r->c->max_gap;
    env.setaside_dir = r->setaside_dir;
    env.verify = r->o->verify;
    env.check_stored = json_is_true(json_object_get(json_object_get(sd->meta, "sacct"), "backfill"));
    if (!sa_ingest_snapshot(&env, &snap, &r->st, &out, &err)) {
        sa_archive_confirm_unreachable(r->archive, &err);
        if (err.domain != SA_ERR_UNREACHABLE) {
            sa_error_prefix(&err, "snapshot %s", sd->name);
            *error = err;
            return false;
        }
        sa_log(SA_LOG_WARN, "%s; the snapshot %s stays in the spool", err.message, sd->name);
        r->unreachable = true;
        lose_archive(r);
        r->spooled_left++;
        return true;
    }
    if (out.rejected) {
        char reason[sizeof out.why.message + 8];
        snprintf(reason, sizeof reason, "%s", out.why.message);
        r->rejected++;
        if (from_spool && !sa_snapdir_reject(sd, r->c->spool_dir, r->c->cluster, out.rejected, reason, &err)) {
            *error = err;
            return false;
        }
        /* logged once: now when an earlier failure is the run's, else at the end of the run */
        if (from_spool) {
            char msg[sizeof out.why.message];
            snprintf(msg, sizeof msg, "%.500s: moved to %.100s/%.100s/rejected/", reason, r->c->spool_dir,
                     r->c->cluster);
            snprintf(out.why.message, sizeof out.why.message, "%s", msg);
        }
        note_failure(r, &out.why);
    }
    if (!from_spool)
        return true;
    {
        unsigned present = 0;
        for (int k = 0; k < SA_IN_COUNT; k++)
            present |= sd->files[k] ? 1u << k : 0;
        if (out.rejected && (present & ~out.rejected) == 0)
            return true; /* every input moved to rejected/: the snapshot is gone, the next one lands */
    }
    if (out.tsdb_done && !snap.tsdb_done && !sa_snapdir_set_mark(sd, MARK_TSDB, error))
        return false;
    if (!out.jobs_done && !r->o->no_mongo) {
        r->spooled_left++;
        return true;
    }
    /* landed: the sacct window it held is done, then the snapshot goes */
    SA_FAULT_POINT("before-watermark");
    {
        const json_t *w = json_object_get(sd->meta, "sacct");
        const json_t *since = json_object_get(w, "since");
        if (r->archive && sd->files[SA_IN_SACCT] && !(out.rejected & (1u << SA_IN_SACCT)) &&
            json_is_integer(json_object_get(w, "end")) &&
            !watermark_advance(r, (int64_t)json_integer_value(json_object_get(w, "end")),
                               json_is_integer(since) ? (int64_t)json_integer_value(since) : SA_UNSET, error))
            return false;
    }
    SA_FAULT_POINT("before-drop");
    if (!sa_snapdir_drop(sd, error))
        return false;
    r->landed++;
    return true;
}

/* Lands every snapshot of dir (the spool, or a replayed directory), oldest first. */
static bool land_all(run_t *r, const char *dir, bool from_spool, sa_error_t *error)
{
    sa_snapdir_t *v = NULL;
    size_t n = 0;
    bool ok;

    if (!sa_snapdir_list(dir, r->c->cluster, &v, &n, error))
        return false;
    ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = land(r, &v[i], from_spool, error);
    sa_snapdir_list_free(v, n);
    return ok;
}

/* Backfill: sacct windows one at a time (each kept, landed, watermark moved) up to now. */
static bool backfill(run_t *r, int64_t last_end, sa_error_t *error)
{
    int64_t total_start = last_end;
    bool tty = isatty(2);

    while (r->archive && last_end != SA_UNSET && last_end < r->o->at) {
        int64_t start, end, since;
        uint64_t cap;
        sa_snapshot_txn_t *t;
        json_t *meta;
        bool ok;

        /* windows of one backfill follow each other without the overlap */
        start = last_end;
        end = start + r->c->backfill_window < r->o->at ? start + r->c->backfill_window : r->o->at;
        since = SA_UNSET;
        meta = json_pack("{s:s, s:I, s:s, s:s}", "cluster", r->c->cluster, "at", (json_int_t)r->o->at, "source",
                         "slurm", "version", SA_VERSION);
        cap = capture_cap(r);
        t = sa_snapshot_begin(r->c->spool_dir, r->c->cluster, r->o->at, error);
        ok = t && capture_sacct(r, t, start, end, since, r->c->since != NULL, cap, meta, error);
        if (ok)
            ok = keep(r, t, meta, NULL, error); /* frees t, whatever happens */
        else
            sa_snapshot_abort(t);
        if (!ok)
            spool_refusal(r, cap, error);
        json_decref(meta);
        if (!ok || !land_all(r, r->c->spool_dir, true, error))
            return false;
        if (watermark_read(r->c) < end)
            break; /* the window did not land (MongoDB went away): the next run goes on */
        last_end = end;
        {
            char e_iso[32];
            int pct = (int)(100 * (end - total_start) / (r->o->at - total_start > 0 ? r->o->at - total_start : 1));
            sa_time_format(end, e_iso, sizeof e_iso);
            if (tty)
                fprintf(stderr, "\rslurm-ingest: sacct backfill up to %s  %3d%%", e_iso, pct);
            else
                sa_log(SA_LOG_INFO, "sacct backfill: up to %s (%d%%)", e_iso, pct);
        }
    }
    if (tty && total_start != last_end)
        fputc('\n', stderr);
    return true;
}

/* ---- the run record --------------------------------------------------------------------- */

/* The ingest_runs document. */
static json_t *run_doc(const run_t *r, time_t started, bool ok, const char *err, bool cache_rebuilt)
{
    const sa_ingest_stats_t *st = &r->st;
    json_t *d = json_object(), *counts, *more;
    char host[256] = "";

    gethostname(host, sizeof host - 1);
    json_object_set_new(d, "cluster", json_string(r->c->cluster));
    json_object_set_new(d, "host", json_string(host));
    json_object_set_new(d, "version", json_string(SA_VERSION));
    json_object_set_new(d, "started_at", json_integer((json_int_t)started));
    json_object_set_new(d, "finished_at", json_integer((json_int_t)time(NULL)));
    json_object_set_new(d, "at", json_integer(r->o->at));
    json_object_set_new(d, "ok", json_boolean(ok));
    if (err)
        json_object_set_new(d, "error", json_string(err));
    json_object_set_new(d, "spooled", json_boolean(r->unreachable));
    json_object_set_new(d, "cache_rebuilt", json_boolean(cache_rebuilt));
    {
        json_t *ph = json_pack("{s:f, s:f, s:f, s:f}", "exec", r->exec_ms, "parse", st->ms_parse, "mongo", st->ms_mongo,
                               "sqlite", st->ms_sqlite);
        for (int k = 0; k < PH_N; k++)
            json_object_set_new(ph, phase_names[k], json_real(r->ph[k]));
        json_object_set_new(d, "phases_ms", ph);
        /* the phases sum to this (the monotonic clock, from the run's start to this record) */
        json_object_set_new(d, "wall_ms", json_real(r->t_last - r->t_begin));
    }
    counts = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "squeue_records",
                       (json_int_t)st->squeue_records, "sacct_records", (json_int_t)st->sacct_records, "jobs_seen",
                       (json_int_t)st->jobs.jobs, "jobs_inserted", (json_int_t)st->jobs.inserted, "jobs_changed",
                       (json_int_t)st->jobs.changed, "jobs_unchanged", (json_int_t)st->jobs.unchanged,
                       "jobs_reused", (json_int_t)st->jobs.reused, "jobs_vanished", (json_int_t)st->jobs.vanished,
                       "write_statements", (json_int_t)st->jobs.write_statements, "nodes", (json_int_t)st->nodes);
    more = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "docs_read",
                     (json_int_t)st->jobs.docs_read, "read_queries", (json_int_t)st->jobs.read_queries, "conflicts",
                     (json_int_t)st->jobs.conflicts, "cache_skipped", (json_int_t)st->jobs.cache_skipped, "stale",
                     (json_int_t)st->jobs.stale, "records_set_aside", (json_int_t)st->setaside, "records_repaired",
                     (json_int_t)st->repaired, "inputs_rejected", (json_int_t)r->rejected, "snapshots_landed",
                     (json_int_t)r->landed, "snapshots_spooled", (json_int_t)r->spooled_left, "second_passes",
                     (json_int_t)st->second_passes, "cache_mismatches", (json_int_t)st->cache_mismatches);
    json_object_set_new(counts, "cache_restored", json_integer((json_int_t)st->cache_restored));
    json_object_update(counts, more); /* copies: more is still ours */
    json_decref(more);
    json_object_set_new(counts, "insert_rereads", json_integer((json_int_t)st->jobs.insert_rereads));
    json_object_set_new(counts, "docs_rewritten", json_integer((json_int_t)st->jobs.rewritten));
    json_object_set_new(counts, "nodes_gpu_carried", json_integer((json_int_t)st->nodes_gpu_carried));
    json_object_set_new(counts, "nodes_gpu_unknown", json_integer((json_int_t)st->nodes_gpu_unknown));
    if (r->c->prometheus_url)
        json_object_set_new(counts, "prometheus", json_pack("{s:I, s:I, s:I, s:I}", "queries",
                                                            (json_int_t)st->prom_queries, "runs",
                                                            (json_int_t)st->prom_runs, "left",
                                                            (json_int_t)st->prom_left, "todo",
                                                            (json_int_t)st->prom_todo));
    json_object_set_new(d, "counts", counts);
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

/* ---- the pieces every entry point shares ---------------------------------------------------- */

/*
 * The time series' directory must not be writable by other users either: there, another
 * user could plant a link (or the -wal and -shm files) where the time series goes. A
 * missing directory is left to the open, which then fails the time series (exit 6).
 */
static bool check_sqlite_dir(const sa_ingest_config_t *c, sa_error_t *error)
{
    struct stat st;
    char *parent;
    bool ok = true;

    if (!c->sqlite)
        return true;
    if (!(parent = sa_parent_of(c->sqlite))) {
        sa_error_nomem(error);
        return false;
    }
    if (lstat(parent, &st) == 0)
        ok = sa_dir_is_private(parent, "the directory of sqlite", error);
    free(parent);
    return ok;
}

/* The directories slurm-ingest writes must be its own: made if missing, refused if others can write them. */
static bool check_dirs(const sa_ingest_config_t *c, bool spool, sa_error_t *error)
{
    return sa_private_dir(c->lock_dir, "lock-dir", error) &&
           (!spool || sa_private_dir(c->spool_dir, "spool-dir", error)) &&
           (!spool || !c->archive_dir || sa_private_dir(c->archive_dir, "archive-dir", error)) &&
           check_sqlite_dir(c, error);
}

static sa_lock_t *take_lock(const sa_ingest_config_t *c, sa_error_t *error)
{
    char *path = NULL;
    sa_lock_t *lock;
    if (asprintf(&path, "%s/%s.lock", c->lock_dir, c->cluster) < 0) {
        sa_error_nomem(error);
        return NULL;
    }
    lock = sa_lock_acquire(path, error);
    free(path);
    return lock;
}

/*
 * A step of opening the archive failed: a connection lost there is exit 8 like anywhere
 * else (the captures stay in the spool), anything else is the run's failure; the archive
 * is not used further.
 */
static void set_up_failed(run_t *r, sa_error_t *err)
{
    sa_archive_confirm_unreachable(r->archive, err);
    if (err->domain == SA_ERR_UNREACHABLE) {
        sa_log(SA_LOG_WARN, "%s; this run's captures stay in the spool", err->message);
        r->unreachable = true;
    } else {
        note_failure(r, err);
    }
    lose_archive(r);
}

/*
 * Opens the archive (migrating an archive of 0.1 first) and the job cache, and makes
 * the cache agree with the archive. Failures are kept for the end of the run, which
 * then goes on without MongoDB (or without the cache).
 */
static void open_stores(run_t *r, bool *cache_rebuilt)
{
    char *note = NULL;
    size_t moved = 0;
    sa_error_t err;
    bool ok;

    *cache_rebuilt = false;
    if (r->o->no_mongo)
        return;
    r->archive = sa_archive_open(r->o->mongo_uri, r->c->db, &note, &err);
    lap(r, PH_CONNECT);
    if (r->archive) { /* the open's own steps */
        sa_archive_open_ms_t om = sa_archive_open_ms(r->archive);
        r->ph[PH_CONNECT] -= om.validator + om.indexes;
        r->ph[PH_VALIDATOR] += om.validator;
        r->ph[PH_INDEXES] += om.indexes;
    }
    if (note)
        sa_log(SA_LOG_DEBUG, "%s", note);
    free(note);
    if (!r->archive) {
        if (err.domain == SA_ERR_UNREACHABLE) {
            sa_log(SA_LOG_WARN, "%s; this run's captures stay in the spool", err.message);
            r->unreachable = true;
        } else {
            note_failure(r, &err);
        }
        return;
    }
    if (!(r->rollups = sa_rollup_attach(r->archive, r->c->cluster, &err))) {
        set_up_failed(r, &err);
        return;
    }
    sa_rollup_writer_settle(r->rollups, r->settle_s);
    ok = sa_archive_migrate(r->archive, r->c->cluster, &moved, &err);
    lap(r, PH_MIGRATE);
    if (!ok) {
        set_up_failed(r, &err);
        return;
    }
    if (moved)
        sa_log(SA_LOG_INFO, "moved %zu job document(s) of 0.1 to the _id scheme of 0.2", moved);
    ok = sa_rollup_init(r->archive, r->rollups, &moved, &err);
    lap(r, PH_ROLLUPS);
    if (!ok) {
        set_up_failed(r, &err);
        return;
    }
    if (moved)
        sa_log(SA_LOG_INFO, "built the usage rollups of %s from its job documents: %zu day(s)", r->c->cluster, moved);
    ok = sa_archive_ingest_days_init(r->archive, r->c->cluster, &moved, &err);
    lap(r, PH_ROLLUPS);
    if (!ok) {
        set_up_failed(r, &err);
        return;
    }
    if (moved)
        sa_log(SA_LOG_INFO, "built the ingest days of %s from ingest_runs: %zu day(s)", r->c->cluster, moved);
    ok = sa_rollup_writer_recover(r->rollups, &moved, &err);
    lap(r, PH_ROLLUPS);
    if (!ok) {
        set_up_failed(r, &err);
        return;
    }
    if (moved)
        sa_log(SA_LOG_INFO, "rollups: %zu job(s) of an interrupted run restaged", moved);
    r->cache = sa_jobcache_open(r->c->job_cache, &err);
    lap(r, PH_CACHE);
    if (!r->cache) {
        sa_log(SA_LOG_WARN, "%s; going on without the job cache (every changed job is read back)", err.message);
        return;
    }
    ok = sa_archive_sync_cache(r->archive, r->c->cluster, r->cache, cache_rebuilt, &err);
    lap(r, PH_CACHE);
    if (!ok) {
        sa_archive_confirm_unreachable(r->archive, &err);
        if (err.domain == SA_ERR_UNREACHABLE)
            r->unreachable = true;
        else
            note_failure(r, &err);
        lose_archive(r);
        return;
    }
    if (*cache_rebuilt)
        sa_log(SA_LOG_INFO, "job cache %s rebuilt from the archive (new, or another writer since)", r->c->job_cache);
}

/* After the run: old finished jobs leave the cache; --verify compares the live sets. */
static void close_stores(run_t *r)
{
    sa_error_t err;
    size_t pruned = 0;

    if (r->cache && r->archive &&
        !sa_jobcache_prune(r->cache, r->o->at - r->c->cache_keep, &pruned, &err))
        sa_log(SA_LOG_WARN, "%s", err.message);
    if (r->o->verify && r->cache && r->archive) {
        if (r->st.cache_mismatches) {
            sa_log(SA_LOG_WARN, "--verify: the job cache claimed %zu document(s) current that were not: it is reset",
                   r->st.cache_mismatches);
            if (!sa_jobcache_reset(r->cache, &err))
                sa_log(SA_LOG_WARN, "%s", err.message);
        } else {
            sa_log(SA_LOG_INFO, "--verify: the job cache agrees with the archive");
        }
    }
    sa_jobcache_close(r->cache);
    r->cache = NULL;
}

/* The run's result from what happened. */
static sa_invocation_result_t finish(run_t *r, time_t started, bool cache_rebuilt, sa_error_t *error)
{
    bool ok = r->failure.domain == SA_ERR_NONE;
    json_t *doc;
    sa_error_t err;

    lap(r, PH_FINISH);
    doc = run_doc(r, started, ok && !r->unreachable, ok ? NULL : r->failure.message, cache_rebuilt);
    if (r->st.nodes_gpu_unknown)
        sa_log(SA_LOG_WARN,
               "the GPUs of %zu node(s) are unknown: sinfo --json without -N groups nodes and does not say "
               "each node's GPUs; capture `sinfo -N --json` (as the live mode does), or give --node-config "
               "with `scontrol show nodes --json` once, with an --at no later than the snapshots it is for; "
               "slurm-report utilization shows their time apart",
               r->st.nodes_gpu_unknown);

    if (r->st.cache_restored)
        sa_log(SA_LOG_INFO, "backfill: %zu record(s) the job cache said were merged had no document: written again",
               r->st.cache_restored);
    if (r->archive && !sa_archive_record_run(r->archive, doc, &err))
        sa_log(SA_LOG_WARN, "could not record the run: %s", err.message);
    if (r->o->print_stats) {
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s)
            printf("%s\n", s);
        free(s);
    }
    json_decref(doc);
    close_stores(r);
    lose_archive(r);
    free(r->setaside_dir);
    free(r->kept_path);
    r->kept_path = NULL;
    sa_ingest_stats_clear(&r->st);
    if (!ok) {
        *error = r->failure;
        return SA_INVOCATION_FAILED;
    }
    return r->unreachable ? SA_INVOCATION_SPOOLED : SA_INVOCATION_OK;
}

static bool run_init(run_t *r, const sa_invocation_opts_t *o, sa_error_t *error)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->c = o->cfg;
    sa_ingest_stats_init(&r->st);
    if (asprintf(&r->setaside_dir, "%s/%s/setaside", o->cfg->spool_dir, o->cfg->cluster) < 0) {
        r->setaside_dir = NULL;
        sa_error_nomem(error);
        return false;
    }
    return true;
}

/*
 * Removes the half-written snapshots (".new-*") a killed run left in the spool. Called
 * with the cluster's lock held: every writer of the spool holds it, so their writers are
 * gone. A failure is logged and the run goes on (spool-max does not count them).
 */
static void sweep_spool(const sa_ingest_config_t *c)
{
    sa_error_t err;
    size_t removed = 0;

    if (!sa_snapshot_sweep(c->spool_dir, c->cluster, &removed, &err))
        sa_log(SA_LOG_WARN, "%s", err.message);
    if (removed)
        sa_log(SA_LOG_INFO, "removed %zu half-written snapshot(s) that a killed run left in %s/%s", removed,
               c->spool_dir, c->cluster);
}

/*
 * What every entry point does first: the run's state, its directories (private),
 * the cluster's lock, and (spool) what a killed run left half written in the spool.
 * NULL (nothing held) on failure.
 */
static sa_lock_t *run_begin(run_t *r, const sa_invocation_opts_t *o, bool spool, sa_error_t *error)
{
    sa_lock_t *lock = NULL;
    int64_t s0, s1, s2;
    double t0 = mono_ms();

    if (!run_init(r, o, error))
        return NULL;
    r->t_begin = r->t_last = t0;
    /* what can be refused is refused before any Slurm command runs */
    if ((!spool || sacct_window(r, &s0, &s1, &s2, error)) && check_dirs(r->c, spool, error))
        lock = take_lock(r->c, error);
    if (!lock) {
        free(r->setaside_dir);
        sa_ingest_stats_clear(&r->st);
    } else if (spool) {
        sweep_spool(r->c);
    }
    if (lock)
        lap(r, PH_LOCK);
    return lock;
}

/* ---- entry points ---------------------------------------------------------------------------- */

/*
 * After the snapshots landed: runs whose untyped GPUs had no type when they were ingested
 * get the one the node snapshots now say (sa_rollup_retype), documents and rollups.
 */
static void retype(run_t *r)
{
    size_t n = 0;
    sa_error_t err;
    /* per-node observations this run: --node-config, or a snapshot that said a node's own GPUs */
    bool new_config = r->o->node_config || r->st.nodes > r->st.nodes_gpu_carried + r->st.nodes_gpu_unknown;

    if (!r->archive || r->failure.domain != SA_ERR_NONE || !r->c->sqlite)
        return;
    if (!sa_rollup_retype(r->archive, r->rollups, r->c->sqlite, new_config, &n, &err)) {
        if (err.domain == SA_ERR_MONGO || err.domain == SA_ERR_UNREACHABLE)
            sa_archive_confirm_unreachable(r->archive, &err);
        note_failure(r, &err);
    } else if (n) {
        sa_log(SA_LOG_INFO, "typed the GPUs of %zu job(s) ingested before the node snapshots around their runs' start", n);
    }
}

/*
 * After the snapshots landed, with prometheus-url: the runs that ended since the last import
 * summarised from the server's series (sa_promimp.h). The server's failures are one warning:
 * the run's outcome stays the archive's.
 */
static void prom_import(run_t *r)
{
    const sa_ingest_config_t *c = r->c;
    sa_promimp_opts_t po = {c->prometheus_url, c->prometheus_exporter, c->prometheus_budget, c->prometheus_timeout,
                            c->prometheus_step, SA_UNSET, r->o->at, SA_ROLLUP_IDLE_PCT};
    sa_promimp_stats_t ps;
    char *warning = NULL;
    sa_error_t err;

    if (!c->prometheus_url || !r->archive || r->failure.domain != SA_ERR_NONE)
        return;
    sa_error_clear(&err);
    if (c->prometheus_since && !sa_time_parse(c->prometheus_since, r->o->at, &po.since, &err)) {
        sa_log(SA_LOG_WARN, "prometheus-since: %s", err.message);
        return;
    }
    if (!sa_promimp_run(r->archive, c->cluster, &po, &ps, &warning, &err)) {
        if (err.domain == SA_ERR_MONGO || err.domain == SA_ERR_UNREACHABLE)
            sa_archive_confirm_unreachable(r->archive, &err);
        note_failure(r, &err);
    }
    if (warning)
        sa_log(SA_LOG_WARN, "%s", warning);
    else if (ps.runs)
        sa_log(SA_LOG_INFO, "summarised %zu run(s) of %zu job(s) from Prometheus (%zu queries)", ps.runs, ps.jobs,
               ps.queries);
    free(warning);
    r->st.prom_queries += ps.queries;
    r->st.prom_runs += ps.runs;
    r->st.prom_left = ps.left;
    r->st.prom_todo = ps.todo;
}

/* ---- --node-config ------------------------------------------------------------------------ */

typedef struct {
    sa_node_t **v;
    size_t n, cap;
} nodevec_t;

/* Sink: keeps every node record. */
static bool keep_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    nodevec_t *nv = ctx;
    sa_node_t *kept;

    if (!SA_VEC_GROW(nv->v, nv->cap, nv->n, 1, 64) || !(kept = sa_node_steal(node))) {
        sa_error_nomem(error);
        return false;
    }
    nv->v[nv->n++] = kept;
    return true;
}

/*
 * Records the configured GPUs of the nodes of --node-config (scontrol show nodes --json,
 * sinfo -N --json, scontrol show nodes -o) in the time series, as of --at: the source of
 * the GPUs of nodes that a grouped `sinfo --json` does not say.
 */
static bool record_node_config(run_t *r, sa_error_t *error)
{
    const char *path = r->o->node_config;
    nodevec_t nv = {NULL, 0, 0};
    sa_sink_t sink = {NULL, keep_node, &nv, NULL, false, NULL};
    sa_meta_t meta;
    sa_reader_t rd;
    sa_kind_t kind;
    sa_tsdb_t *db = NULL;
    size_t own = 0;
    char tbuf[32];
    int fd;
    bool ok = false;

    sa_meta_init(&meta);
    if (!r->c->sqlite) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--node-config %s: no time series to record it in (sqlite)", path);
        goto done;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        sa_error_set(error, SA_ERR_IO, errno, "--node-config %s: %s", path, strerror(errno));
        goto done;
    }
    sa_reader_init_fd(&rd, fd);
    ok = sa_parse_any(&rd, NULL, &sink, &meta, &kind, error);
    close(fd);
    if (!ok) {
        sa_error_prefix(error, "--node-config %s", path);
        goto done;
    }
    ok = false;
    for (size_t i = 0; i < nv.n; i++)
        own += nv.v[i]->gpu_config == SA_NODE_GPUS_OBSERVED;
    if (!own) {
        sa_error_set(error, SA_ERR_INPUT, 0, "--node-config %s: no node record says its own GPUs (%zu node(s); "
                     "a grouped sinfo --json? use scontrol show nodes --json)", path, nv.n);
        goto done;
    }
    if (!(db = sa_tsdb_open(r->c->sqlite, false, 10000, error)) ||
        !sa_tsdb_write_node_config(db, r->c->cluster, r->o->at, nv.v, nv.n, error))
        goto done;
    sa_log(SA_LOG_INFO, "recorded the GPU configuration of %zu node(s) from %s as of %s", own, path,
           sa_time_format(r->o->at, tbuf, sizeof tbuf));
    ok = true;
done:
    sa_tsdb_close(db);
    for (size_t i = 0; i < nv.n; i++)
        sa_node_destroy(nv.v[i]);
    free(nv.v);
    sa_meta_clear(&meta);
    return ok;
}

sa_invocation_result_t sa_invocation_ingest(const sa_invocation_opts_t *o, sa_error_t *error)
{
    run_t r;
    sa_lock_t *lock;
    bool files_mode = false, cache_rebuilt, ok;
    int64_t sacct_end = SA_UNSET;
    time_t started = time(NULL);
    sa_error_t err;
    sa_invocation_result_t result;

    for (int k = 0; k < SA_IN_COUNT; k++)
        files_mode = files_mode || o->files[k];
    if (!(lock = run_begin(&r, o, true, error)))
        return SA_INVOCATION_FAILED;
    open_stores(&r, &cache_rebuilt);
    /* the nodes' configuration first: the snapshots below carry it */
    ok = !o->node_config || record_node_config(&r, &err);
    if (!ok)
        note_failure(&r, &err);
    lap(&r, PH_NODE_CONFIG);
    /* capture and keep; a failure here still lands what the spool holds */
    if (ok && (files_mode || !o->node_config) && !take_snapshot(&r, files_mode, &sacct_end, &err))
        note_failure(&r, &err);
    lap(&r, PH_CAPTURE);
    ok = land_all(&r, r.c->spool_dir, true, &err);
    lap(&r, PH_LAND);
    if (!ok)
        note_failure(&r, &err);
    else if (!files_mode && r.failure.domain == SA_ERR_NONE && sacct_end != SA_UNSET &&
             watermark_read(r.c) >= sacct_end && !backfill(&r, sacct_end, &err))
        note_failure(&r, &err);
    lap(&r, PH_BACKFILL);
    retype(&r);
    lap(&r, PH_RETYPE);
    prom_import(&r);
    lap(&r, PH_PROM);
    result = finish(&r, started, cache_rebuilt, error);
    sa_lock_release(lock);
    return result;
}

/*
 * What a replay reads must be there: DIR, and DIR/<cluster> (an --archive-dir or a spool
 * holds one directory per cluster; DIR/<cluster> itself given is the usual slip).
 */
static bool replay_dir_ok(const char *dir, const char *cluster, sa_error_t *error)
{
    struct stat st;
    char *sub = NULL;
    const char *base = strrchr(dir, '/');
    size_t blen;
    bool ok;

    if (stat(dir, &st) != 0) {
        sa_error_set(error, SA_ERR_USAGE, errno, "replay %s: %s", dir, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        sa_error_set(error, SA_ERR_USAGE, ENOTDIR, "replay %s: not a directory", dir);
        return false;
    }
    if (asprintf(&sub, "%s/%s", dir, cluster) < 0) {
        sa_error_nomem(error);
        return false;
    }
    ok = stat(sub, &st) == 0 && S_ISDIR(st.st_mode);
    free(sub);
    if (ok)
        return true;
    base = base ? base + 1 : dir;
    blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    if (blen == strlen(cluster) && strncmp(base, cluster, blen) == 0)
        sa_error_set(error, SA_ERR_USAGE, ENOENT, "replay %s: no %s/ in it: give the directory above it (the "
                     "--archive-dir or spool-dir, which holds a directory per cluster)", dir, cluster);
    else
        sa_error_set(error, SA_ERR_USAGE, ENOENT, "replay %s: no %s/ in it: nothing of cluster %s to replay (give "
                     "an --archive-dir or spool-dir)", dir, cluster, cluster);
    return false;
}

sa_invocation_result_t sa_invocation_replay(const sa_invocation_opts_t *o, const char *dir, sa_error_t *error)
{
    run_t r;
    sa_lock_t *lock;
    bool cache_rebuilt, ok;
    time_t started = time(NULL);
    sa_error_t err;
    sa_invocation_result_t result;

    if (!replay_dir_ok(dir, o->cfg->cluster, error))
        return SA_INVOCATION_FAILED;
    if (!(lock = run_begin(&r, o, false, error)))
        return SA_INVOCATION_FAILED;
    free(r.setaside_dir);
    r.setaside_dir = NULL; /* a replay keeps nothing new: what it would set aside, the archive has */
    open_stores(&r, &cache_rebuilt);
    ok = !o->node_config || record_node_config(&r, &err);
    if (!ok)
        note_failure(&r, &err);
    lap(&r, PH_NODE_CONFIG);
    if (ok && !o->no_mongo && !r.archive && r.failure.domain == SA_ERR_NONE)
        sa_error_set(&r.failure, SA_ERR_UNREACHABLE, 0, "MongoDB unreachable: nothing replayed");
    else if (ok && !land_all(&r, dir, false, &err))
        note_failure(&r, &err);
    lap(&r, PH_LAND);
    retype(&r);
    lap(&r, PH_RETYPE);
    prom_import(&r);
    lap(&r, PH_PROM);
    sa_log(SA_LOG_INFO, "replayed %s: %zu record(s) of squeue, %zu of sacct", dir, r.st.squeue_records,
           r.st.sacct_records);
    result = finish(&r, started, cache_rebuilt, error);
    sa_lock_release(lock);
    return result;
}

sa_invocation_result_t sa_invocation_rollup(const sa_invocation_opts_t *o, bool rebuild, size_t *differ, sa_error_t *error)
{
    run_t r;
    sa_lock_t *lock;
    bool cache_rebuilt;
    size_t docs = 0;
    int64_t since = SA_UNSET;
    sa_invocation_result_t result = SA_INVOCATION_FAILED;

    *differ = 0;
    if (!(lock = run_begin(&r, o, false, error)))
        return SA_INVOCATION_FAILED;
    /* no inputs of the killed run to land again, as a poll would: what was in flight lands first */
    r.settle_s = SA_ROLLUP_SETTLE_S;
    open_stores(&r, &cache_rebuilt);
    if (r.archive && r.c->since && !sa_time_parse(r.c->since, o->at, &since, error)) {
        error->domain = SA_ERR_USAGE;
    } else if (r.archive) {
        size_t ddocs = 0, ddiffer = 0;
        if (sa_rollup_rebuild(sa_archive_store(r.archive), sa_archive_hosts(r.archive), r.c->cluster, rebuild,
                              since, &docs, differ, stderr, error) &&
            sa_archive_derived(r.archive, r.c->cluster, rebuild, &ddocs, &ddiffer, stderr, error)) {
            docs += ddocs;
            *differ += ddiffer;
            result = SA_INVOCATION_OK;
            sa_log(SA_LOG_INFO, "rollups of %s: %zu document(s), %zu %s", r.c->cluster, docs, *differ,
                   rebuild ? "rewritten" : "differ from the job documents and ingest_runs");
        }
    } else if (r.unreachable) {
        sa_error_set(error, SA_ERR_UNREACHABLE, 0, "MongoDB unreachable: rollups not checked");
    } else {
        *error = r.failure;
    }
    lose_archive(&r);
    if (r.cache)
        sa_jobcache_close(r.cache);
    r.cache = NULL;
    free(r.setaside_dir);
    sa_ingest_stats_clear(&r.st);
    sa_lock_release(lock);
    return result;
}

sa_invocation_result_t sa_invocation_migrate(const sa_invocation_opts_t *o, sa_error_t *error)
{
    run_t r;
    sa_lock_t *lock;
    bool cache_rebuilt;
    time_t started = time(NULL);
    sa_invocation_result_t result;

    if (!(lock = run_begin(&r, o, false, error)))
        return SA_INVOCATION_FAILED;
    open_stores(&r, &cache_rebuilt); /* migrates, then checks the cache */
    if (!r.archive && r.failure.domain == SA_ERR_NONE)
        sa_error_set(&r.failure, SA_ERR_UNREACHABLE, 0, "MongoDB unreachable: nothing migrated");
    result = finish(&r, started, cache_rebuilt, error);
    sa_lock_release(lock);
    return result;
}

/* ---- audit ------------------------------------------------------------------------------- */

#define AUDIT_READ_BATCH 400 /* _ids per read of job documents */

/* What an audit reads its reference into: the audit's records, or (repair) the records of some jobs. */
typedef struct {
    sa_audit_t *audit;
    sa_obs_ctx_t ctx;
    const char *name;       /* the input, for messages */
    const int64_t *want;    /* repair: the jobs whose records are kept (sorted), else NULL */
    size_t nwant;
    sa_job_t **keep;        /* repair: their records (owned) */
    size_t nkeep, keep_cap;
    size_t records, setaside;
} audit_ref_t;

static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool audit_job(sa_job_t *job, void *vctx, sa_error_t *error)
{
    audit_ref_t *x = vctx;

    x->records++;
    if (!x->want)
        return sa_audit_add_record(x->audit, job, &x->ctx, error);
    if (!bsearch(&job->job_id, x->want, x->nwant, sizeof *x->want, id_cmp))
        return true;
    if (x->nkeep == x->keep_cap) {
        size_t cap = x->keep_cap ? 2 * x->keep_cap : 64;
        sa_job_t **v = realloc(x->keep, cap * sizeof *v);
        if (!v)
            return sa_error_nomem(error);
        x->keep = v;
        x->keep_cap = cap;
    }
    if (!(x->keep[x->nkeep] = sa_job_steal(job)))
        return sa_error_nomem(error);
    x->nkeep++;
    return true;
}

/* A record of the reference that cannot be parsed: said, counted; the audit goes on without it. */
static bool audit_setaside(const char *raw, size_t len, const char *why, bool kept, void *vctx, sa_error_t *error)
{
    audit_ref_t *x = vctx;
    (void)raw;
    (void)len;
    (void)error;
    if (!kept)
        x->setaside++;
    sa_log(SA_LOG_WARN, "%s: %s: %s", x->name, why, kept ? "repaired and kept" : "record set aside, not audited");
    return true;
}

/* Parses one reference input; errors name it. Slurm's errors[] fail it (SA_ERR_SLURM). */
static bool audit_parse(audit_ref_t *x, sa_reader_t *rd, const sa_sacct_text_opts_t *topts, sa_error_t *error)
{
    sa_sink_t sink = {audit_job, NULL, x, audit_setaside, true, NULL};
    sa_meta_t meta;
    sa_kind_t kind;
    bool ok;

    sa_meta_init(&meta);
    ok = sa_parse_any(rd, topts, &sink, &meta, &kind, error);
    if (ok && meta.errors.n) {
        sa_error_set(error, SA_ERR_SLURM, 0, "Slurm error: %s", meta.errors.v[0]);
        ok = false;
    }
    if (ok && kind != SA_KIND_SACCT_TEXT && kind != SA_KIND_SACCT_JSON) {
        sa_error_set(error, SA_ERR_INPUT, 0, "not sacct output (%s)", sa_kind_name(kind));
        ok = false;
    }
    if (!ok && error->domain != SA_ERR_NOMEM)
        sa_error_prefix(error, "%s", x->name);
    sa_meta_clear(&meta);
    return ok;
}

/*
 * Reads the reference of [from, to) into x: the --sacct file, or sacct run over the
 * window in backfill-window pieces (argv, timeout and cap of the ingest's own windows), a
 * progress line on a terminal.
 */
static bool audit_reference(const sa_invocation_opts_t *o, int64_t from, int64_t to, audit_ref_t *x, sa_error_t *error)
{
    const sa_ingest_config_t *c = o->cfg;
    bool tty = isatty(2), ok = true;

    if (o->files[SA_IN_SACCT]) {
        const char *path = o->files[SA_IN_SACCT];
        int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        sa_reader_t rd;
        x->name = fd == 0 ? "(stdin)" : path;
        if (fd < 0) {
            sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", path, strerror(errno));
            return false;
        }
        sa_reader_init_fd(&rd, fd);
        ok = audit_parse(x, &rd, &o->topts, error);
        if (fd > 0)
            close(fd);
        return ok;
    }
    x->name = c->sacct_command;
    for (int64_t start = from; ok && start < to; start += c->backfill_window) {
        int64_t end = to - start > c->backfill_window ? start + c->backfill_window : to;
        sa_sacct_text_opts_t topts = {0};
        sa_exec_opts_t eo = {0};
        sa_exec_result_t res;
        const char *argv[9];
        char *s_arg = NULL, *e_arg = NULL;
        sa_reader_t rd;

        memset(&res, 0, sizeof res);
        eo.timeout_ms = c->timeout * 1000;
        eo.max_output = (size_t)c->max_output;
        topts.delimiter = SACCT_DELIM;
        ok = sacct_argv(c, start, end, argv, &s_arg, &e_arg, error) && sa_exec_run(argv, &eo, &res, error);
        if (!ok && error->domain == SA_ERR_IO)
            error->domain = SA_ERR_SLURM;
        if (ok && res.err && res.err[strspn(res.err, " \t\r\n")]) {
            const char *line = res.err + strspn(res.err, " \t\r\n");
            sa_error_set(error, SA_ERR_SLURM, 0, "%s printed an error: %.*s", argv[0], (int)strcspn(line, "\n"), line);
            ok = false;
        }
        if (ok) {
            sa_reader_init_mem(&rd, res.out, res.out_len);
            ok = res.out_len == 0 || audit_parse(x, &rd, &topts, error);
        }
        sa_exec_result_clear(&res);
        free(s_arg);
        free(e_arg);
        if (ok && tty && to - from > c->backfill_window) {
            char e_iso[32];
            fprintf(stderr, "\rslurm-ingest: audit: sacct up to %s  %3d%%", sa_time_format(end, e_iso, sizeof e_iso),
                    (int)(100 * (end - from) / (to - from)));
            if (end == to)
                fputc('\n', stderr);
        }
    }
    return ok;
}

/* The projection of the members the audit compares (the server sends a few dozen values a document, not the
 * steps, usage and history). New; the caller destroys it. */
static bson_t *audit_projection(void)
{
    return BCON_NEW("projection", "{", "job_id", BCON_INT32(1), "state", BCON_INT32(1), "state_flags", BCON_INT32(1),
                    "submit", BCON_INT32(1), "eligible", BCON_INT32(1), "start", BCON_INT32(1), "end", BCON_INT32(1),
                    "exit", BCON_INT32(1), "alloc", BCON_INT32(1), "nodes", BCON_INT32(1), "user", BCON_INT32(1),
                    "account", BCON_INT32(1), "partition", BCON_INT32(1), "runs.start", BCON_INT32(1), "runs.end",
                    BCON_INT32(1), "runs.submit", BCON_INT32(1), "runs.eligible", BCON_INT32(1), "runs.state",
                    BCON_INT32(1), "runs.flags", BCON_INT32(1), "runs.nodes", BCON_INT32(1), "runs.node_count",
                    BCON_INT32(1), "runs.cpus", BCON_INT32(1), "runs.mem_mb", BCON_INT32(1), "runs.gpus",
                    BCON_INT32(1), "runs.gpus_by_type", BCON_INT32(1), "runs.billing", BCON_INT32(1), "runs.other",
                    BCON_INT32(1), "runs.exit", BCON_INT32(1), "}");
}

/* What the archive's side has read: the audit, and which of slurmdbd's jobs have their document (found[i]: ids[i]). */
typedef struct {
    sa_audit_t *audit;
    const int64_t *ids;
    size_t n;
    bool *found;
    size_t docs;
} audit_read_t;

/* One document read: added to the audit (sa_audit_add_doc leaves out a job outside the window that sacct did not list). */
static bool audit_doc(const bson_t *doc, void *ctx, sa_error_t *error)
{
    audit_read_t *rd = ctx;
    json_t *j = sa_bson_to_json(doc, error);
    int64_t id;
    const int64_t *at;
    bool ok;

    if (!j)
        return false;
    id = sa_jobdoc_int(j, "job_id");
    at = bsearch(&id, rd->ids, rd->n, sizeof *rd->ids, id_cmp);
    if (at && rd->found[at - rd->ids]) {
        json_decref(j); /* read already */
        return true;
    }
    if (at)
        rd->found[at - rd->ids] = true;
    rd->docs++;
    ok = sa_audit_add_doc(rd->audit, j, error);
    json_decref(j);
    return ok;
}

/*
 * The archive's side of the audit, in one query and what it missed: the cluster's
 * documents by the times sacct selects on ({cluster, submit < to, end >= from or none}: the
 * index cluster_end on MongoDB; FerretDB reads the collection), the rule itself deciding
 * (sa_audit_in_window); then, by _id, the jobs slurmdbd listed that the query did not return
 * (their documents' times differ, or there is none).
 */
static bool audit_archive(sa_archive_t *ar, const char *cluster, sa_audit_t *au, int64_t from, int64_t to,
                          sa_error_t *error)
{
    audit_read_t rd = {au, NULL, 0, NULL, 0};
    bson_t *filter, *opts = audit_projection();
    sa_strv_t rest;
    double t0 = mono_ms(), t1;
    size_t scanned;
    bool ok;

    rd.ids = sa_audit_ref_ids(au, &rd.n);
    sa_strv_init(&rest);
    if (!(rd.found = calloc(rd.n ? rd.n : 1, sizeof *rd.found))) {
        bson_destroy(opts);
        return sa_error_nomem(error);
    }
    filter = BCON_NEW("cluster", BCON_UTF8(cluster), "submit", "{", "$lt", BCON_DATE_TIME(to * 1000), "}", "$or", "[",
                      "{", "end", "{", "$gte", BCON_DATE_TIME(from * 1000), "}", "}", "{", "end", BCON_NULL, "}", "]");
    ok = sa_docstore_scan(sa_archive_store(ar), "jobs", filter, opts, audit_doc, &rd, error);
    bson_destroy(filter);
    t1 = mono_ms();
    scanned = rd.docs;
    for (size_t i = 0; ok && i < rd.n; i++) {
        char *name;
        if (rd.found[i])
            continue;
        ok = (name = sa_jobdoc_id(cluster, rd.ids[i])) && sa_strv_push(&rest, name);
        free(name);
        if (!ok)
            sa_error_nomem(error);
    }
    ok = ok && sa_docstore_find(sa_archive_store(ar), "jobs", rest.v, rest.n, AUDIT_READ_BATCH, opts, audit_doc, &rd,
                                error);
    if (ok)
        sa_log(SA_LOG_INFO, "audit: %zu job document(s) of the window in %.0f ms; %zu more by _id in %.0f ms", scanned,
               t1 - t0, rest.n, mono_ms() - t1);
    sa_strv_clear(&rest);
    free(rd.found);
    bson_destroy(opts);
    return ok;
}

/* Where the differences go: a line each on out, and the jobs a repair can mend. */
typedef struct {
    FILE *out;
    int64_t *ids;  /* missing or changed jobs (repeats, in job id order) */
    size_t n, cap;
} audit_out_t;

static bool audit_line(const sa_audit_diff_t *d, void *ctx, sa_error_t *error)
{
    audit_out_t *o = ctx;
    char line[1200];

    if (fprintf(o->out, "%s\n", sa_audit_diff_line(d, line, sizeof line)) < 0) {
        sa_error_set(error, SA_ERR_IO, errno, "cannot write the audit's lines");
        return false;
    }
    if (d->kind == SA_AUDIT_EXTRA || (o->n && o->ids[o->n - 1] == d->job_id))
        return true; /* what slurmdbd does not have is not taken from the archive */
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        int64_t *v = realloc(o->ids, cap * sizeof *v);
        if (!v)
            return sa_error_nomem(error);
        o->ids = v;
        o->cap = cap;
    }
    o->ids[o->n++] = d->job_id;
    return true;
}

static int job_ptr_cmp(const void *a, const void *b)
{
    const sa_job_t *x = *(sa_job_t *const *)a, *y = *(sa_job_t *const *)b;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/*
 * --repair: slurmdbd's records of the jobs ids[0..n) (read again as the audit read them)
 * merged through the archive's write path, with the job cache (which learns them, its
 * earlier digests of these jobs forgotten) and the rollup writer (which follows); then the
 * archive's write sequence names this cache. *written: documents inserted or changed.
 */
static bool audit_repair(run_t *r, int64_t from, int64_t to, const int64_t *ids, size_t n, size_t *written,
                         sa_error_t *error)
{
    audit_ref_t x;
    sa_archive_stats_t st;
    bool ok;

    memset(&x, 0, sizeof x);
    memset(&st, 0, sizeof st);
    x.ctx.cluster = r->c->cluster;
    x.ctx.at = r->o->at;
    x.want = ids;
    x.nwant = n;
    ok = audit_reference(r->o, from, to, &x, error);
    for (size_t i = 0; ok && r->cache && i < n; i++)
        ok = sa_jobcache_forget_records(r->cache, ids[i], error);
    if (ok && x.nkeep > 1)
        qsort(x.keep, x.nkeep, sizeof *x.keep, job_ptr_cmp);
    for (size_t i = 0; ok && i < x.nkeep;) {
        size_t k = i + 500 < x.nkeep ? i + 500 : x.nkeep;
        while (k < x.nkeep && x.keep[k]->job_id == x.keep[k - 1]->job_id)
            k++; /* a job's records in one batch */
        ok = sa_archive_write_jobs(r->archive, r->cache, &x.ctx, x.keep + i, k - i, &st, error);
        i = k;
    }
    ok = ok && sa_archive_bump_seq(r->archive, r->c->cluster, r->cache, error);
    *written = st.inserted + st.changed + st.reused;
    for (size_t i = 0; i < x.nkeep; i++)
        sa_job_destroy(x.keep[i]);
    free(x.keep);
    return ok;
}

/* The summary line of a comparison. */
static void audit_summary(FILE *out, const char *cluster, int64_t from, int64_t to, const sa_audit_counts_t *c,
                          const char *when)
{
    char f[32], t[32];
    size_t differ = c->missing + c->extra + c->changed;

    fprintf(out, "audit of %s %s to %s%s: %zu job(s) and %zu run(s) of slurmdbd compared: ", cluster,
            sa_time_format(from, f, sizeof f), sa_time_format(to, t, sizeof t), when, c->jobs, c->runs);
    if (differ)
        fprintf(out, "%zu difference(s) (%zu missing, %zu extra, %zu changed)\n", differ, c->missing, c->extra,
                c->changed);
    else
        fputs("the archive agrees\n", out);
}

/* Reads the archive's side, compares, prints; *counts what was found, out->ids what a repair mends. */
static bool audit_compare(run_t *r, sa_audit_t *au, int64_t from, int64_t to, audit_out_t *ao, sa_audit_counts_t *counts,
                          const char *when, sa_error_t *error)
{
    bool ok;

    sa_audit_clear_archive(au);
    ao->n = 0;
    ok = audit_archive(r->archive, r->c->cluster, au, from, to, error) &&
         sa_audit_compare(au, audit_line, ao, counts, error);
    if (ok)
        audit_summary(ao->out, r->c->cluster, from, to, counts, when);
    return ok;
}

/*
 * Opens what an audit needs: the archive alone, or (repair) the run's stores under the
 * cluster's lock (*lock, else NULL). False (nothing held) when the run cannot begin;
 * r->archive NULL: MongoDB is not there (r->failure, or r->unreachable, says why).
 */
static bool audit_open(run_t *r, const sa_invocation_opts_t *o, bool repair, sa_lock_t **lock, sa_error_t *error)
{
    bool cache_rebuilt;
    sa_error_t err;

    *lock = NULL;
    if (repair) {
        if (!(*lock = run_begin(r, o, false, error)))
            return false;
        open_stores(r, &cache_rebuilt);
        return true;
    }
    if (!run_init(r, o, error))
        return false;
    r->archive = sa_archive_open(o->mongo_uri, o->cfg->db, NULL, &err);
    if (!r->archive && err.domain == SA_ERR_UNREACHABLE)
        r->unreachable = true;
    else if (!r->archive)
        note_failure(r, &err);
    return true;
}

sa_invocation_result_t sa_invocation_audit(const sa_invocation_opts_t *o, int64_t from, int64_t to, bool repair,
                                           FILE *out, size_t *left, sa_error_t *error)
{
    run_t r;
    sa_lock_t *lock;
    audit_ref_t x;
    audit_out_t ao = {out, NULL, 0, 0};
    sa_audit_counts_t counts;
    bool ok = false;

    *left = 0;
    memset(&x, 0, sizeof x);
    if (repair && o->files[SA_IN_SACCT] && strcmp(o->files[SA_IN_SACCT], "-") == 0) {
        sa_error_set(error, SA_ERR_USAGE, 0, "audit --repair reads its reference twice: give a file, not '-'");
        return SA_INVOCATION_FAILED;
    }
    if (!audit_open(&r, o, repair, &lock, error))
        return SA_INVOCATION_FAILED;
    if (!r.archive) {
        if (r.failure.domain != SA_ERR_NONE)
            *error = r.failure;
        else
            sa_error_set(error, SA_ERR_UNREACHABLE, 0, "MongoDB unreachable: nothing audited");
        goto done;
    }
    x.ctx.cluster = o->cfg->cluster;
    x.ctx.at = o->at;
    if (!(x.audit = sa_audit_new(from, to))) {
        sa_error_nomem(error);
        goto done;
    }
    ok = audit_reference(o, from, to, &x, error) && sa_audit_seal(x.audit, error) &&
         audit_compare(&r, x.audit, from, to, &ao, &counts, "", error);
    if (ok && x.setaside)
        sa_log(SA_LOG_WARN, "%zu record(s) of %s could not be read and were not audited", x.setaside, x.name);
    if (ok && repair && ao.n) {
        size_t written = 0;
        int64_t *ids = ao.ids;
        size_t n = ao.n;
        ao.ids = NULL;
        ao.n = ao.cap = 0;
        ok = audit_repair(&r, from, to, ids, n, &written, error);
        free(ids);
        if (ok)
            fprintf(out, "repaired %zu job document(s) from slurmdbd's records (the rollups follow)\n", written);
        ok = ok && audit_compare(&r, x.audit, from, to, &ao, &counts, " after the repair", error);
    }
    if (ok)
        *left = counts.missing + counts.extra + counts.changed;
    if (!ok && r.archive)
        sa_archive_confirm_unreachable(r.archive, error);
done:
    sa_audit_free(x.audit);
    free(ao.ids);
    if (r.cache)
        sa_jobcache_close(r.cache);
    r.cache = NULL;
    lose_archive(&r);
    free(r.setaside_dir);
    sa_ingest_stats_clear(&r.st);
    if (lock)
        sa_lock_release(lock);
    return ok ? SA_INVOCATION_OK : SA_INVOCATION_FAILED;
}
