/*
 * test_e2e_slurm.c - end to end against a real Slurm cluster (issue 7).
 *
 * tools/slurm-test-cluster brings up a one-host Slurm 22.05 (real slurmctld, slurmd,
 * slurmdbd, MariaDB; node vm with 2 CPUs and 2 a100 GPUs; ghost[1-2] never
 * register). The test submits a scenario, drains and resumes the node, and runs
 * slurm-ingest in its default mode (calling squeue, sinfo, sacct, sdiag itself)
 * every few seconds while that happens. Then it checks the archive against sacct,
 * the oracle: for every job the archived state, exit code and runs (how many, and
 * each one's start, end and state) are what `sacct --duplicates` says, whatever
 * Slurm decided. Beyond that it checks that the scenario happened as planned where
 * the jobs themselves decide (exit 3, kill -9, a time limit, cancelled while
 * pending), that the requeued job ran twice with a REQUEUED first run and has its
 * whole history, the node's DRAIN interval with its reason, the GPU job's GPU-hours
 * = 2 GPUs x its real elapsed time, and that no unfinished job is left behind. A job that
 * burns CPU and holds memory (issue 13) has its TotalCPU and MaxRSS in the archive and in
 * `slurm-report job` as sacct prints them (jobacct_gather/linux gathers them here).
 * `slurm-report jobs -P` and `-p` print byte for byte what `sacct -X -P` and `-p` print, every
 * field it offers, for -j, -D and the scenario's window (issue 32); a job waiting behind one with a
 * time limit has squeue --start's forecast in `slurm-report job` after several polls.
 *
 * The requeue is timed around a Slurm 22.05 race: slurmd refuses to launch a batch
 * job whose credential is not newer, in whole seconds, than the kill of its previous
 * run ("Job N already killed, do not launch batch job"), and slurmctld then ends the
 * job FAILED 1:0 ("Killing non-startable batch JobId=N: Job credential revoked").
 * Made eligible again in the second of the requeue, the second run fails at once, so
 * the test waits 2 s after the requeue before `scontrol update starttime=now`.
 *
 * With SA_E2E_SREPORT_HOUR=1 (issue 32) the scenario runs inside one whole UTC hour that the
 * series covers (the test ingests every 30 s from before the hour to after it), and
 * `utilization --summary` is compared with `sreport cluster Utilization` of that hour once
 * slurmdbd has rolled it up: allocated CPU- and GPU-seconds exactly, the capacity
 * (sreport's Reported), and down, planned down, planned and idle within what the polls and
 * the rule's documented differences allow (up to two hours; off by default).
 *
 * Skipped (exit 77, saying why) when the cluster cannot be brought up here, and in
 * the sanitizer build unless SLURM_E2E_ASAN=1 (the scenario takes minutes; it runs
 * once per test run, in the release build).
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <math.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

#include "sa_slurmtext.h"
#include "sa_tres.h"

static mongoc_client_t *client;
static char *db_name;
static const char *uri;
static char tmp[256];
static const char *cluster = "demo";

/* Runs a command (argv[0] looked up in /usr/bin or /bin); returns exit code, stdout (caller frees). */
static int cmd(char **out, const char *prog, ...)
{
    char *argv[32], path[256], *o, *e;
    va_list ap;
    int argc = 0, rc;

    snprintf(path, sizeof path, "%s%s", prog[0] == '/' ? "" : "/usr/bin/", prog);
    if (prog[0] != '/' && access(path, X_OK) != 0)
        snprintf(path, sizeof path, "/bin/%s", prog);
    argv[argc++] = path;
    va_start(ap, prog);
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 31;)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    rc = tu_run(argv, NULL, &o, &e);
    if (rc != 0)
        printf("  (%s exited %d: %.300s)\n", prog, rc, e);
    free(e);
    if (out)
        *out = o;
    else
        free(o);
    return rc;
}

/* sbatch --parsable ... -> job id. */
static long submit(const char *what, const char *a1, const char *a2, const char *a3, const char *a4)
{
    char *out;
    long id;
    int rc = cmd(&out, "sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null", a1, a2, a3, a4, NULL);
    if (rc != 0)
        fail_msg("sbatch for '%s' failed", what);
    id = atol(out);
    printf("  submitted %-28s job %ld\n", what, id);
    free(out);
    return id;
}

/* One slurm-ingest run with the extra options (NULL-terminated; may be NULL): its exit status, *out and *err what
 * it printed (caller frees). */
static int ingest_rc(const char *const *extra, bool verbose, char **out, char **err)
{
    char *argv[24], db[128], lock[300], spool[300], sqlite[300], env_uri[600];
    char *env[] = {env_uri, NULL};

    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(lock, sizeof lock, "--lock-dir=%s", tmp);
    snprintf(spool, sizeof spool, "--spool-dir=%s/spool", tmp);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(env_uri, sizeof env_uri, "SLURM_INGEST_MONGO_URI=%s", uri);
    argv[0] = (char *)SA_INGEST_BIN;
    argv[1] = (char *)"--cluster=demo";
    argv[2] = db;
    argv[3] = lock;
    argv[4] = spool;
    argv[5] = sqlite;
    argv[6] = (char *)"--max-gap=10m";
    argv[7] = (char *)(verbose ? "-v" : "-q");
    argv[8] = NULL;
    for (int i = 0; extra && extra[i] && i < 14; i++) {
        argv[8 + i] = (char *)extra[i];
        argv[9 + i] = NULL;
    }
    return tu_run(argv, env, out, err);
}

/* One slurm-ingest run: its default mode, or with the extra options (NULL-terminated; may be NULL); *err_out
 * (may be NULL) gets its standard error. */
static void ingest_with(const char *const *extra, char **err_out)
{
    char *o, *e;
    int rc = ingest_rc(extra, err_out != NULL, &o, &e);

    if (rc != 0)
        fail_msg("slurm-ingest exited %d: %s", rc, e);
    free(o);
    if (err_out)
        *err_out = e;
    else
        free(e);
}

static void ingest(void)
{
    ingest_with(NULL, NULL);
}

/* squeue's state of a job ("" when squeue no longer lists it); static buffer. */
static const char *job_state(long id)
{
    static char state[64];
    char jid[32], *out;
    snprintf(jid, sizeof jid, "%ld", id);
    state[0] = '\0';
    if (cmd(&out, "squeue", "-h", "-j", jid, "-o", "%T", NULL) == 0)
        snprintf(state, sizeof state, "%s", out);
    state[strcspn(state, "\n")] = '\0';
    free(out);
    return state;
}

/* Ingests every 5 s until cond() or the deadline; returns whether cond() held. */
static bool ingest_until(bool (*cond)(void *), void *arg, int seconds)
{
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        ingest();
        if (cond(arg))
            return true;
        sleep(5);
    }
    return cond(arg);
}

static bool is_running(void *arg)
{
    return strcmp(job_state(*(long *)arg), "RUNNING") == 0;
}

static bool is_pending(void *arg)
{
    return strcmp(job_state(*(long *)arg), "PENDING") == 0;
}

static bool queue_empty(void *arg)
{
    char *out;
    bool empty;
    (void)arg;
    if (cmd(&out, "squeue", "-h", "-o", "%i", NULL) != 0)
        return false;
    empty = out[0] == '\0';
    free(out);
    return empty;
}

/* The archived document of a job (NULL if absent). */
static bson_t *get_doc(long id)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
    bson_t *filter = BCON_NEW("cluster", BCON_UTF8(cluster), "job_id", BCON_INT64(id));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, filter, NULL, NULL);
    const bson_t *doc;
    bson_t *copy = NULL;
    if (mongoc_cursor_next(cur, &doc))
        copy = bson_copy(doc);
    assert_false(mongoc_cursor_next(cur, &doc)); /* once */
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
    mongoc_collection_destroy(c);
    return copy;
}

static const char *doc_str(const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f) && BSON_ITER_HOLDS_UTF8(&f))
        return bson_iter_utf8(&f, NULL);
    return "";
}

static int64_t doc_int(const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f)) {
        if (BSON_ITER_HOLDS_NUMBER(&f))
            return bson_iter_as_int64(&f);
        if (BSON_ITER_HOLDS_DATE_TIME(&f))
            return bson_iter_date_time(&f) / 1000;
    }
    return -1;
}

static uint32_t doc_array_len(const bson_t *d, const char *path)
{
    bson_iter_t it, f, child;
    uint32_t n = 0;
    if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, path, &f) && BSON_ITER_HOLDS_ARRAY(&f) &&
        bson_iter_recurse(&f, &child))
        while (bson_iter_next(&child))
            n++;
    return n;
}

/* Prints the lines of the test cluster's slurmctld and slurmd logs that name job id. */
static void print_slurm_log(long id)
{
    const char *dir = getenv("SLURM_TEST_CLUSTER_DIR");
    static const char *const logs[] = {"slurmctld.log", "slurmd.log"};
    char pat[3][48];

    if (!dir)
        return;
    snprintf(pat[0], sizeof pat[0], "JobId=%ld ", id);
    snprintf(pat[1], sizeof pat[1], "job %ld ", id);
    snprintf(pat[2], sizeof pat[2], "[%ld.", id);
    for (size_t k = 0; k < sizeof logs / sizeof logs[0]; k++) {
        char path[512], *text, *save = NULL;
        snprintf(path, sizeof path, "%s/log/%s", dir, logs[k]);
        if (access(path, R_OK) != 0 || !(text = tu_read_file(path, NULL)))
            continue;
        printf("  %s, job %ld:\n", logs[k], id);
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            if (strstr(line, pat[0]) || strstr(line, pat[1]) || strstr(line, pat[2]))
                printf("    %s\n", line);
        free(text);
    }
}

/* One record of `sacct -D -X` for a job: one per run; a job that never ran has one, without nodes. */
typedef struct {
    char state[32];       /* base state: "CANCELLED by 0" -> "CANCELLED" */
    long code, sig;       /* ExitCode code:signal */
    int64_t start, end;   /* epoch seconds, SA_UNSET */
    bool ran;             /* NodeList names nodes: Slurm allocated them, this is a run */
} sacct_rec_t;

#define MAX_RECS 8

/*
 * sacct's records of the job with raw id `id`, in order, into recs (at most MAX_RECS);
 * returns how many. *raw gets sacct's output (caller frees). TZ=UTC and
 * SLURM_TIME_FORMAT=standard are set for the whole test (main).
 */
static int sacct_records(long id, sacct_rec_t *recs, char **raw)
{
    char arg[32], *out, *save = NULL;
    int n = 0;

    snprintf(arg, sizeof arg, "%ld", id);
    if (cmd(&out, "sacct", "-n", "-D", "-X", "-P", "-j", arg, "-o", "JobIDRaw,State,ExitCode,Start,End,NodeList",
            NULL) != 0)
        fail_msg("sacct -j %ld failed", id);
    *raw = strdup(out);
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[6] = {NULL}, *p = line;
        int k = 0;
        sa_error_t error;
        sacct_rec_t *r = &recs[n];

        while (k < 6) {
            f[k++] = p;
            if (!(p = strchr(p, '|')))
                break;
            *p++ = '\0';
        }
        if (k != 6)
            fail_msg("sacct -j %ld: unexpected line '%s'", id, line);
        if (strcmp(f[0], arg) != 0) /* an array's other tasks, a het job's other components */
            continue;
        if (n == MAX_RECS)
            fail_msg("sacct -j %ld: more than %d records", id, MAX_RECS);
        snprintf(r->state, sizeof r->state, "%.*s", (int)strcspn(f[1], " "), f[1]);
        if (sscanf(f[2], "%ld:%ld", &r->code, &r->sig) != 2)
            fail_msg("sacct -j %ld: ExitCode '%s'", id, f[2]);
        if (!sa_time_parse_text(f[3], &r->start, &error) || !sa_time_parse_text(f[4], &r->end, &error))
            fail_msg("sacct -j %ld: %s", id, error.message);
        r->ran = f[5][0] && strcmp(f[5], "None assigned") != 0;
        n++;
    }
    free(out);
    return n;
}

/* Appends a mismatch between the archive and sacct to *why. */
static void mismatch(char *why, size_t size, const char *what, long long archived, long long oracle)
{
    size_t len = strlen(why);
    snprintf(why + len, size - len, "  %s: archive %lld, sacct %lld\n", what, archived, oracle);
}

/*
 * Compares an archived job document with sacct's records of the job (the oracle):
 * the document's state, exit code and signal are those of the last record, it has
 * one run per record that ran, and each run starts, ends (and, where recorded, ends
 * in the state) as sacct says. Appends every difference to why; returns how many
 * runs sacct has.
 */
static int compare_with_sacct(const bson_t *d, const sacct_rec_t *recs, int n, char *why, size_t size)
{
    const sacct_rec_t *last = &recs[n - 1];
    char path[48];
    int runs = 0;

    if (strcmp(doc_str(d, "state"), last->state) != 0) {
        size_t len = strlen(why);
        snprintf(why + len, size - len, "  state: archive %s, sacct %s\n", doc_str(d, "state"), last->state);
    }
    if (doc_int(d, "exit.code") != last->code)
        mismatch(why, size, "exit code", (long long)doc_int(d, "exit.code"), last->code);
    if (doc_int(d, "exit.signal") != last->sig)
        mismatch(why, size, "exit signal", (long long)doc_int(d, "exit.signal"), last->sig);
    for (int i = 0; i < n; i++) {
        if (!recs[i].ran)
            continue;
        snprintf(path, sizeof path, "runs.%d.start", runs);
        if (doc_int(d, path) != recs[i].start)
            mismatch(why, size, path, (long long)doc_int(d, path), (long long)recs[i].start);
        snprintf(path, sizeof path, "runs.%d.end", runs);
        if (doc_int(d, path) != (recs[i].end == SA_UNSET ? -1 : recs[i].end))
            mismatch(why, size, path, (long long)doc_int(d, path), (long long)recs[i].end);
        snprintf(path, sizeof path, "runs.%d.state", runs);
        if (doc_str(d, path)[0] && strcmp(doc_str(d, path), recs[i].state) != 0) {
            size_t len = strlen(why);
            snprintf(why + len, size - len, "  %s: archive %s, sacct %s\n", path, doc_str(d, path), recs[i].state);
        }
        runs++;
    }
    if (doc_array_len(d, "runs") != (uint32_t)runs)
        mismatch(why, size, "runs", doc_array_len(d, "runs"), runs);
    return runs;
}

/* The archived job `id` against sacct (compare_with_sacct); recs/n get sacct's records. */
static void check_against_sacct(long id, sacct_rec_t *recs, int *n)
{
    char why[2048] = "", *raw;
    bson_t *d = get_doc(id);
    int runs;

    *n = sacct_records(id, recs, &raw);
    if (!d)
        fail_msg("job %ld is not in the archive (sacct: %s)", id, raw);
    if (*n == 0)
        fail_msg("sacct does not know job %ld", id);
    runs = compare_with_sacct(d, recs, *n, why, sizeof why);
    printf("  job %-6ld %-10s exit %ld:%ld  runs %d  history %u  (= sacct)\n", id, recs[*n - 1].state,
           recs[*n - 1].code, recs[*n - 1].sig, runs, doc_array_len(d, "history"));
    if (why[0]) {
        char *j = bson_as_relaxed_extended_json(d, NULL);
        printf("  sacct -D -X of job %ld:\n%s  archive: %s\n", id, raw, j);
        bson_free(j);
        print_slurm_log(id);
        fail_msg("job %ld: the archive disagrees with sacct:\n%s", id, why);
    }
    free(raw);
    bson_destroy(d);
}

/* The comparison is not vacuous: a copy of a document with another state, one run less and a moved end differs. */
static void check_compare_catches(long id)
{
    sacct_rec_t recs[MAX_RECS];
    char why[2048] = "", *raw;
    bson_t *d = get_doc(id), copy, runs;
    bson_iter_t it, r;
    int n = sacct_records(id, recs, &raw);

    assert_non_null(d);
    bson_init(&copy);
    bson_copy_to_excluding_noinit(d, &copy, "state", "runs", NULL);
    BSON_APPEND_UTF8(&copy, "state", "RUNNING");
    BSON_APPEND_ARRAY_BEGIN(&copy, "runs", &runs);
    if (bson_iter_init_find(&it, d, "runs") && bson_iter_recurse(&it, &r) && bson_iter_next(&r)) {
        bson_t run;
        const uint8_t *data;
        uint32_t len;
        bson_t first;
        bson_iter_document(&r, &len, &data);
        assert_true(bson_init_static(&first, data, len));
        BSON_APPEND_DOCUMENT_BEGIN(&runs, "0", &run);
        bson_copy_to_excluding_noinit(&first, &run, "end", NULL);
        BSON_APPEND_DATE_TIME(&run, "end", (recs[0].end + 1) * 1000);
        bson_append_document_end(&runs, &run);
    }
    bson_append_array_end(&copy, &runs);
    compare_with_sacct(&copy, recs, n, why, sizeof why);
    printf("  a tampered copy of job %ld differs:\n%s", id, why);
    assert_non_null(strstr(why, "state: archive RUNNING"));
    assert_non_null(strstr(why, "runs.0.end"));
    assert_non_null(strstr(why, "runs: archive 1, sacct 2"));
    bson_destroy(&copy);
    bson_destroy(d);
    free(raw);
}

/*
 * Where the job itself decides its end (exit 3, kill -9, its time limit, a scancel
 * while pending), the scenario happened as planned: sacct's last record of job id.
 * code or sig < 0: not checked.
 */
static void check_planned(long id, const char *what, const char *state, long code, long sig)
{
    sacct_rec_t recs[MAX_RECS];
    char *raw;
    int n = sacct_records(id, recs, &raw);

    if (n == 0 || strcmp(recs[n - 1].state, state) != 0 || (code >= 0 && recs[n - 1].code != code) ||
        (sig >= 0 && recs[n - 1].sig != sig)) {
        printf("  sacct -D -X of job %ld:\n%s", id, raw);
        print_slurm_log(id);
        fail_msg("the scenario went otherwise: job %ld (%s) was meant to end %s %ld:%ld", id, what, state, code, sig);
    }
    free(raw);
}

/* The jobs of the scenario (raw ids). */
typedef struct {
    long ok, fail, killed, timeout, array, het, gpu, requeue, held, cancelled, burn;
    long blocker, waiter; /* the forecast's (check_forecast) */
} scenario_t;

/* Runs `scontrol|scancel ... <verb> <id-arg>` for job id; fails the test if it fails. */
static void job_cmd(const char *prog, const char *verb, const char *fmt, long id)
{
    char arg[64];
    snprintf(arg, sizeof arg, fmt, id);
    if (verb ? cmd(NULL, prog, verb, arg, NULL) != 0 : cmd(NULL, prog, arg, NULL) != 0)
        fail_msg("%s %s %s failed", prog, verb ? verb : "", arg);
}

/* Submits every job of the scenario. */
static void submit_all(scenario_t *sc)
{
    char *out;

    sc->timeout = submit("timeout (-t 1)", "-t", "1", "--wrap", "sleep 300");
    sc->gpu = submit("GPU job (2 x a100)", "-p", "gpu", "--gres=gpu:a100:2", "--wrap=sleep 20");
    sc->ok = submit("normal", "--wrap", "sleep 2", NULL, NULL);
    /* ~12 s of CPU and ~160 MiB written (resident), sampled every 5 s (JobAcctGatherFrequency) */
    sc->burn = submit("burns CPU, holds memory", "--mem=400M", "--wrap",
                      "python3 -c 'import time; b = b\"x\" * (160 << 20); t = time.time()\n"
                      "while time.time() - t < 12: pass'", NULL);
    sc->fail = submit("fails with exit 3", "--wrap", "exit 3", NULL, NULL);
    sc->killed = submit("killed by signal 9", "--wrap", "kill -9 $$", NULL, NULL);
    sc->array = submit("array 1-4%2", "--array=1-4%2", "--wrap", "sleep 3", NULL);
    /* long enough to be requeued while it runs: is_running is polled every 5 s, + 3 s */
    sc->requeue = submit("requeued while running", "--requeue", "--wrap", "sleep 20", NULL);
    sc->held = submit("held, then released", "-H", "--wrap", "sleep 1", NULL);
    /* eligible 30 s after its submission (sacct's windows, eligible before their end, list it from then on) */
    sc->cancelled = submit("cancelled while pending", "--begin=now+30", "--wrap", "sleep 1", NULL);
    /* a heterogeneous job: it cannot be placed on one node here, so it is cancelled pending */
    if (cmd(&out, "sbatch", "--parsable", "-o", "/dev/null", "-n1", ":", "-n1", "--wrap", "sleep 1", NULL) != 0)
        fail_msg("sbatch of the het job failed");
    sc->het = atol(out);
    free(out);
    printf("  submitted %-28s job %ld\n", "het job (2 components)", sc->het);
}

/* squeue lists the job as running, or no longer lists it (it ran again and ended). */
static bool ran_again(void *arg)
{
    const char *st = job_state(*(long *)arg);
    return strcmp(st, "PENDING") != 0;
}

/*
 * Requeues the job 3 s into its run, waits for it to be PENDING again, and makes it
 * eligible (a requeued job waits ~2 minutes, BeginTime) no sooner than 2 s after the
 * requeue: a launch in the second of the requeue fails (credential revoked, see the
 * top of the file). Then waits until it runs again.
 */
static void requeue_once(long id)
{
    time_t requeued;

    if (!ingest_until(is_running, &id, 150))
        fail_msg("job %ld never ran", id);
    sleep(3); /* well into its batch script, past CONFIGURING */
    job_cmd("scontrol", "requeue", "%ld", id);
    requeued = time(NULL);
    /* it completes its first run (COMPLETING) and waits as PENDING (BeginTime) */
    if (!ingest_until(is_pending, &id, 60))
        fail_msg("job %ld did not go back to PENDING after the requeue", id);
    while (time(NULL) < requeued + 2)
        sleep(1);
    {
        char arg[64];
        snprintf(arg, sizeof arg, "jobid=%ld", id);
        assert_int_equal(cmd(NULL, "scontrol", "update", arg, "starttime=now", NULL), 0);
    }
    if (!ingest_until(ran_again, &id, 120)) {
        print_slurm_log(id);
        fail_msg("job %ld did not run again after the requeue", id);
    }
}

static void check_forecast(scenario_t *sc);

/*
 * The scenario: submissions, a requeue, releases, cancellations, a drain; until the queue is
 * empty; then a pending job's forecast (check_forecast), cancelled, until the queue is empty.
 */
static void run_scenario(scenario_t *sc)
{
    ingest(); /* the cluster before anything happens */
    submit_all(sc);
    /* cancel the pending ones once an ingest saw them (the het job, pending, has the
       backfill scheduler hold vm for it: the requeued job could not run again) */
    ingest();
    job_cmd("scancel", NULL, "%ld", sc->cancelled);
    job_cmd("scancel", NULL, "%ld", sc->het);
    requeue_once(sc->requeue);
    /* release the held one */
    job_cmd("scontrol", "release", "%ld", sc->held);

    /* drain the node for a while, then resume it */
    assert_int_equal(cmd(NULL, "scontrol", "update", "nodename=vm", "state=drain", "reason=e2e maintenance", NULL),
                     0);
    for (int i = 0; i < 3; i++) {
        sleep(4);
        ingest();
    }
    assert_int_equal(cmd(NULL, "scontrol", "update", "nodename=vm", "state=resume", NULL), 0);

    /* everything finishes (the timeout job takes 60-90 s) */
    if (!ingest_until(queue_empty, NULL, 300))
        fail_msg("the queue did not empty");
    check_forecast(sc);
    if (!ingest_until(queue_empty, NULL, 60))
        fail_msg("the queue did not empty");
    sleep(2);
    ingest(); /* sacct has the last records */
    ingest(); /* and the same input again changes nothing */
}

/* The raw ids of an array's tasks (sacct), into ids (at most max); returns how many. */
static int array_tasks(long array, long *ids, int max)
{
    char arg[32], *out, *save = NULL;
    int n = 0;

    snprintf(arg, sizeof arg, "%ld", array);
    assert_int_equal(cmd(&out, "sacct", "-n", "-X", "-P", "-j", arg, "-o", "JobIDRaw", NULL), 0);
    for (char *line = strtok_r(out, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save))
        ids[n++] = atol(line);
    free(out);
    return n;
}

/* Every job against sacct, and the scenario where the jobs decide their own end. */
static void check_jobs(const scenario_t *sc)
{
    sacct_rec_t recs[MAX_RECS];
    long tasks[8];
    int n, ntasks;
    mongoc_collection_t *c;
    bson_t *f;
    bson_error_t berr;

    printf("  checking the archive against sacct\n");
    const long all[] = {sc->ok, sc->fail, sc->killed, sc->timeout, sc->gpu, sc->held, sc->cancelled, sc->het,
                        sc->het + 1 /* the second component */, sc->requeue, sc->burn};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        check_against_sacct(all[i], recs, &n);
    /* the array: four tasks, each its own job */
    ntasks = array_tasks(sc->array, tasks, 8);
    assert_int_equal(ntasks, 4);
    for (int i = 0; i < ntasks; i++) {
        check_against_sacct(tasks[i], recs, &n);
        check_planned(tasks[i], "array task, sleep 3", "COMPLETED", 0, 0);
    }
    c = mongoc_client_get_collection(client, db_name, "jobs");
    f = BCON_NEW("cluster", BCON_UTF8(cluster), "array.job_id", BCON_INT64(sc->array));
    assert_int_equal(mongoc_collection_count_documents(c, f, NULL, NULL, NULL, &berr), 4);
    bson_destroy(f);
    mongoc_collection_destroy(c);

    printf("  checking that the scenario went as planned (sacct)\n");
    check_planned(sc->ok, "sleep 2", "COMPLETED", 0, 0);
    check_planned(sc->fail, "exit 3", "FAILED", 3, 0);
    check_planned(sc->killed, "kill -9 $$", "FAILED", 0, 9);
    check_planned(sc->timeout, "-t 1, sleep 300", "TIMEOUT", -1, -1);
    check_planned(sc->gpu, "sleep 20", "COMPLETED", 0, 0);
    check_planned(sc->held, "sleep 1", "COMPLETED", 0, 0);
    check_planned(sc->burn, "burns CPU, holds memory", "COMPLETED", 0, 0);
    check_planned(sc->cancelled, "scancel while pending", "CANCELLED", -1, -1);
    check_planned(sc->het, "scancel while pending", "CANCELLED", -1, -1);
    check_planned(sc->het + 1, "scancel while pending", "CANCELLED", -1, -1);
}

/*
 * The requeued job: sacct has two runs, the first REQUEUED (the archive has the same,
 * check_jobs), and the archive has its whole history in order, ending in the state
 * sacct gives its second run.
 */
static void check_requeued(long id)
{
    sacct_rec_t recs[MAX_RECS];
    char seq[256] = "", want[256];
    int n, runs = 0;
    bson_t *d;
    bson_iter_t it, h, e;

    check_against_sacct(id, recs, &n);
    for (int i = 0; i < n; i++)
        runs += recs[i].ran;
    printf("  requeued job: sacct has %d runs: %s then %s %ld:%ld\n", runs, recs[0].state, recs[n - 1].state,
           recs[n - 1].code, recs[n - 1].sig);
    if (runs != 2 || strcmp(recs[0].state, "REQUEUED") != 0) {
        print_slurm_log(id);
        fail_msg("job %ld: expected two runs, the first REQUEUED", id);
    }
    check_compare_catches(id);
    if (strcmp(recs[1].state, "COMPLETED") != 0) {
        printf("  note: Slurm ended the second run %s %ld:%ld (sleep 20 completes):\n", recs[1].state,
               recs[1].code, recs[1].sig);
        print_slurm_log(id);
    }
    d = get_doc(id);
    assert_non_null(d);
    assert_string_equal(doc_str(d, "runs.0.state"), "REQUEUED");
    assert_true(bson_iter_init_find(&it, d, "history") && bson_iter_recurse(&it, &h));
    while (bson_iter_next(&h)) {
        if (bson_iter_recurse(&h, &e) && bson_iter_find(&e, "state") && strlen(seq) + 32 < sizeof seq) {
            strcat(seq, bson_iter_utf8(&e, NULL));
            strcat(seq, " ");
        }
    }
    snprintf(want, sizeof want, "PENDING RUNNING REQUEUED PENDING RUNNING %s ", recs[1].state);
    printf("  requeued job history: %s\n", seq);
    if (strcmp(seq, want) != 0) {
        char *j = bson_as_relaxed_extended_json(d, NULL);
        printf("  archive: %s\n", j);
        bson_free(j);
        print_slurm_log(id);
    }
    assert_string_equal(seq, want);
    bson_destroy(d);
}

/* ElapsedRaw of a job (sacct). */
static long elapsed_of(long id)
{
    char *out, arg[32];
    long elapsed;
    snprintf(arg, sizeof arg, "%ld", id);
    assert_int_equal(cmd(&out, "sacct", "-n", "-X", "-P", "-j", arg, "-o", "ElapsedRaw", NULL), 0);
    elapsed = atol(out);
    free(out);
    return elapsed;
}

/* GPU-hours of the GPU job: 2 x its real elapsed time (from sacct). */
static void check_gpu_job(long gpu)
{
    bson_t *d = get_doc(gpu);
    long elapsed = elapsed_of(gpu);

    assert_true(elapsed >= 15);
    assert_int_equal(doc_int(d, "runs.0.gpus"), 2);
    assert_string_equal(doc_str(d, "runs.0.gpus_by_type.0.type"), "a100");
    assert_int_equal(doc_int(d, "runs.0.end") - doc_int(d, "runs.0.start"), elapsed);
    printf("  GPU job: 2 GPUs x %ld s = %.4f GPU-hours\n", elapsed, 2.0 * (double)elapsed / 3600);
    bson_destroy(d);
}

/*
 * Runs slurm-report REPORT over the test's window (-M, -S an hour before t_begin, -E an hour from now, the
 * test's time series and database); with by, also --by=BY --json --unit=gpu-hours. Returns the exit code;
 * *out and *err (caller frees) get its output.
 */
static int run_report(const char *report, const char *by, time_t t_begin, char **out, char **err)
{
    char *argv[16], start[64], end[64], sqlite[300], db[128], env_uri[600], byopt[64];
    char *env[] = {env_uri, NULL};
    int argc = 0;

    sa_time_format(t_begin - 3600, start, sizeof start);
    sa_time_format(time(NULL) + 3600, end, sizeof end);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    argv[argc++] = (char *)SA_REPORT_BIN;
    argv[argc++] = (char *)report;
    argv[argc++] = (char *)"-M";
    argv[argc++] = (char *)cluster;
    argv[argc++] = (char *)"-S";
    argv[argc++] = start;
    argv[argc++] = (char *)"-E";
    argv[argc++] = end;
    if (by) {
        snprintf(byopt, sizeof byopt, "--by=%s", by);
        argv[argc++] = byopt;
        argv[argc++] = (char *)"--json";
        argv[argc++] = (char *)"--unit=gpu-hours";
    }
    argv[argc++] = sqlite;
    argv[argc++] = db;
    argv[argc] = NULL;
    return tu_run(argv, env, out, err);
}

/* usage --by BY over the test's window: returns the GPU-hours of all rows; their types, comma-joined, into types. */
static double report_gpu_hours(const char *by, time_t t_begin, char *types, size_t size)
{
    char *o, *e;
    json_t *j, *row;
    size_t i;
    double hours = 0;

    if (run_report("usage", by, t_begin, &o, &e) != 0)
        fail_msg("slurm-report usage failed: %s", e);
    j = json_loads(o, 0, NULL);
    assert_non_null(j);
    types[0] = '\0';
    json_array_foreach(json_object_get(j, "rows"), i, row) {
        const char *t = json_string_value(json_object_get(row, "gpu_type"));
        hours += json_real_value(json_object_get(row, "gpu_hours"));
        if (!strstr(types, t ? t : "?"))
            snprintf(types + strlen(types), size - strlen(types), "%s%s", types[0] ? "," : "", t ? t : "?");
    }
    json_decref(j);
    free(o);
    free(e);
    return hours;
}

/* slurm-report: the window's GPU-hours are the GPU job's 2 GPUs x its elapsed time; health is quiet. */
static void check_report(long gpu, time_t t_begin)
{
    char *o, *e, types[256];
    long elapsed = elapsed_of(gpu);
    double gpu_hours = report_gpu_hours("account,gpu-type", t_begin, types, sizeof types);

    printf("  slurm-report: %.6f GPU-hours; sacct: 2 x %ld s = %.6f\n", gpu_hours, elapsed,
           2.0 * (double)elapsed / 3600);
    assert_string_equal(types, "a100");
    assert_true(fabs(gpu_hours - 2.0 * (double)elapsed / 3600) < 1e-6);
    /* and the archive is healthy: nothing left running, ingest fresh, no failed run */
    if (run_report("health", NULL, t_begin, &o, &e) != 0)
        fail_msg("slurm-report health is not quiet:\n%s%s", o, e);
    free(o);
    free(e);
}

/*
 * sacct's usage of a job (the oracle): the allocation line's TotalCPU, the largest
 * MaxRSS of its steps.
 */
static void sacct_usage(long id, double *cpu_s, int64_t *max_rss)
{
    char arg[32], *out, *save = NULL;
    sa_error_t error;

    snprintf(arg, sizeof arg, "%ld", id);
    if (cmd(&out, "sacct", "-n", "-P", "-j", arg, "-o", "JobIDRaw,TotalCPU,MaxRSS", NULL) != 0)
        fail_msg("sacct -j %ld failed", id);
    *cpu_s = -1;
    *max_rss = SA_UNSET;
    printf("  sacct -o JobIDRaw,TotalCPU,MaxRSS -j %ld:\n", id);
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *cpu = strchr(line, '|'), *rss = NULL;
        int64_t v;
        printf("    %s\n", line);
        if (!cpu || !(rss = strchr(cpu + 1, '|')))
            fail_msg("sacct -j %ld: unexpected line '%s'", id, line);
        *cpu++ = '\0';
        *rss++ = '\0';
        if (strcmp(line, arg) == 0 && !sa_cputime_parse(cpu, cpu_s, &error))
            fail_msg("sacct TotalCPU: %s", error.message);
        if (!sa_size_bytes_parse(rss, &v, &error))
            fail_msg("sacct MaxRSS: %s", error.message);
        if (v != SA_UNSET && (*max_rss == SA_UNSET || v > *max_rss))
            *max_rss = v;
    }
    free(out);
}

/*
 * The burning job: its TotalCPU and MaxRSS from the real cluster, in the archive
 * (runs[].usage) and in `slurm-report job` (text and --json), equal to sacct's.
 */
static void check_usage(long burn)
{
    char *argv[12], *o, *e, db[128], id[32], env_uri[600];
    char *env[] = {env_uri, NULL};
    double cpu_s;
    int64_t rss;
    json_t *j, *u;

    sacct_usage(burn, &cpu_s, &rss);
    assert_true(cpu_s >= 5);             /* it burnt ~12 s */
    assert_true(rss >= INT64_C(100) << 20); /* and held ~160 MiB */
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(id, sizeof id, "%ld", burn);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    argv[0] = (char *)SA_REPORT_BIN;
    argv[1] = (char *)"job";
    argv[2] = (char *)"-M";
    argv[3] = (char *)cluster;
    argv[4] = id;
    argv[5] = db;
    argv[6] = (char *)"--json";
    argv[7] = NULL;
    if (tu_run(argv, env, &o, &e) != 0)
        fail_msg("slurm-report job %ld failed: %s", burn, e);
    j = json_loads(o, 0, NULL);
    assert_non_null(j);
    u = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "runs"), 0),
                        "usage");
    printf("  slurm-report job %ld: TotalCPU %.3f s, MaxRSS %lld bytes; sacct: %.3f s, %lld bytes\n", burn,
           json_number_value(json_object_get(u, "cpu_s")), (long long)json_integer_value(json_object_get(u, "max_rss_bytes")),
           cpu_s, (long long)rss);
    assert_true(fabs(json_number_value(json_object_get(u, "cpu_s")) - cpu_s) < 0.0005);
    assert_int_equal(json_integer_value(json_object_get(u, "max_rss_bytes")), rss);
    json_decref(j);
    free(o);
    free(e);
    argv[6] = NULL; /* the text: seff's lines */
    if (tu_run(argv, env, &o, &e) != 0)
        fail_msg("slurm-report job %ld failed: %s", burn, e);
    if (!strstr(o, "CPU Utilized: ") || !strstr(o, "CPU Efficiency: ") || !strstr(o, "Memory Utilized: ") ||
        !strstr(o, "Memory Efficiency: "))
        fail_msg("slurm-report job %ld lacks seff's lines:\n%s", burn, o);
    printf("%s", o);
    free(o);
    free(e);
}

/* No unfinished job left: nothing RUNNING or PENDING in the archive. */
static void check_nothing_unfinished(void)
{
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
        bson_t *f = BCON_NEW("cluster", BCON_UTF8(cluster), "state", "{", "$in", "[", BCON_UTF8("RUNNING"),
                             BCON_UTF8("PENDING"), "]", "}");
        bson_error_t berr;
        assert_int_equal(mongoc_collection_count_documents(c, f, NULL, NULL, NULL, &berr), 0);
        bson_destroy(f);
        mongoc_collection_destroy(c);
    }
}

/* The node's DRAIN interval, with its reason, in the time series. */
static void check_drain(void)
{
    {
        char path[300];
        sqlite3 *db;
        sqlite3_stmt *st;
        int n = 0;
        snprintf(path, sizeof path, "%s/ts.db", tmp);
        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT state, reason, end - start FROM node_interval_span "
                                            "WHERE node = 'vm' AND '+' || flags || '+' LIKE '%+DRAIN+%'",
                                            -1, &st, NULL),
                         SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            printf("  vm: %s '%s' for %d s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                   sqlite3_column_int(st, 2));
            assert_string_equal((const char *)sqlite3_column_text(st, 1), "e2e maintenance");
            n++;
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        assert_true(n >= 1);
    }
}

/* ---- slurm-report jobs against sacct (issues 23 and 32) ---------------------------------------- */

/* Every field `slurm-report jobs` offers, in sacct's names. */
#define JOBS_FIELDS "JobID,JobName,User,Account,Partition,State,ExitCode,Submit,Start,End,Elapsed,AllocTRES,NNodes," \
                    "NodeList,Reason,Cluster"

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The header line as it is, then the other lines sorted (sacct and the listing may order ties apart). */
static char *header_then_sorted(const char *text)
{
    char *copy = strdup(text), *save = NULL, **v = NULL, *out;
    size_t n = 0, len = 0;

    assert_non_null(copy);
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        v = realloc(v, (n + 1) * sizeof *v);
        assert_non_null(v);
        v[n++] = l;
        len += strlen(l) + 1;
    }
    if (n > 1)
        qsort(v + 1, n - 1, sizeof *v, line_cmp);
    out = calloc(1, len + 1);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        strcat(out, v[i]);
        strcat(out, "\n");
    }
    free(v);
    free(copy);
    return out;
}

/*
 * Runs PREFIX (NULL-terminated argv, the program first) ARGS FMT -o JOBS_FIELDS with env (may be NULL):
 * its output, the header then the lines sorted (caller frees).
 */
static char *listing(const char *const *prefix, const char *const *args, const char *fmt, char **env)
{
    char *argv[32], *out = NULL, *err = NULL, *sorted;
    int argc = 0;

    for (const char *const *a = prefix; *a && argc < 12; a++)
        argv[argc++] = (char *)*a;
    for (const char *const *a = args; *a && argc < 26; a++)
        argv[argc++] = (char *)*a;
    argv[argc++] = (char *)fmt;
    argv[argc++] = (char *)"-o";
    argv[argc++] = (char *)JOBS_FIELDS;
    argv[argc] = NULL;
    if (tu_run(argv, env, &out, &err) != 0)
        fail_msg("%s failed: %s", prefix[0], err);
    sorted = header_then_sorted(out);
    free(out);
    free(err);
    return sorted;
}

/* slurm-report jobs -M CLUSTER ARGS FMT -o JOBS_FIELDS on the test's archive (FMT -P or -p). */
static char *report_jobs(const char *const *args, const char *fmt)
{
    char db[128], env_uri[600];
    char *env[] = {env_uri, NULL};
    const char *prefix[] = {SA_REPORT_BIN, "jobs", "-M", cluster, db, NULL};

    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    return listing(prefix, args, fmt, env);
}

/* sacct -X ARGS FMT -o JOBS_FIELDS (FMT -P or -p); TZ=UTC, SLURM_TIME_FORMAT=standard (main). */
static char *sacct_jobs(const char *const *args, const char *fmt)
{
    const char *prefix[] = {"/usr/bin/sacct", "-X", NULL};
    return listing(prefix, args, fmt, NULL);
}

/*
 * slurm-report jobs ARGS gives byte for byte what sacct -X ARGS gives, every field, with -P and
 * with -p (the lines sorted: the order of ties is not part of the comparison). Returns how many
 * lines the listing has (the header included).
 */
static size_t same_listing(const char *what, const char *const *args)
{
    static const char *const fmts[] = {"-P", "-p"};
    size_t lines = 0;

    for (size_t f = 0; f < 2; f++) {
        char *want = sacct_jobs(args, fmts[f]), *got = report_jobs(args, fmts[f]);
        if (strcmp(want, got) != 0) {
            printf("  sacct -X %s:\n%s  slurm-report jobs %s %s:\n%s", fmts[f], want, what, fmts[f], got);
            fail_msg("slurm-report jobs %s %s differs from sacct (above)", what, fmts[f]);
        }
        if (f == 0) {
            for (const char *p = got; (p = strchr(p, '\n')); p++)
                lines++;
            printf("  slurm-report jobs %s -P: %zu lines, as sacct -X -P, byte for byte\n", what, lines);
            if (strstr(what, "-D") && strstr(what, "-j"))
                printf("%s", got);
        }
        free(want);
        free(got);
    }
    return lines;
}

/*
 * slurm-report jobs gives the scenario's jobs as sacct does, every field it offers, -P and -p: the
 * same JobIDs (the array's tasks 4_1 ..., the het job's components 5+0, 5+1), states (CANCELLED by
 * 0), exit codes, times (Unknown, None), TRES, nodes and reasons; for -j of them, with -D (the
 * requeued job's two runs, each with its own submit, Reason and billing), and for the scenario's
 * window with and without -D and with -s (sacct's window semantics, record by record).
 */
static void check_jobs_listing(const scenario_t *sc, time_t t_begin)
{
    const long all[] = {sc->ok, sc->fail, sc->killed, sc->timeout, sc->array, sc->het, sc->requeue,
                        sc->held, sc->cancelled, sc->gpu, sc->burn, sc->blocker, sc->waiter};
    char ids[512] = "", start[32], end[32];
    time_t began = time(NULL), now = began + 60;

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%ld", i ? "," : "", all[i]);
    strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%S", gmtime(&t_begin));
    strftime(end, sizeof end, "%Y-%m-%dT%H:%M:%S", gmtime(&now));
    {
        const char *a[] = {"-j", ids, NULL};
        assert_true(same_listing("-j (every job of the scenario)", a) >= 15);
    }
    {
        const char *a[] = {"-j", ids, "-D", NULL};
        same_listing("-j -D", a);
    }
    {
        const char *a[] = {"-S", start, "-E", end, NULL};
        same_listing("-S START -E END", a);
    }
    {
        const char *a[] = {"-S", start, "-E", end, "-D", NULL};
        same_listing("-S START -E END -D", a);
    }
    {
        const char *a[] = {"-s", "F,CA,TO,RQ", "-S", start, "-E", end, NULL};
        same_listing("-s F,CA,TO,RQ -S START -E END", a);
    }
    printf("  the listings' comparison took %ld s\n", (long)(time(NULL) - began));
}

/* ---- a pending job's start forecast (issue 32) ------------------------------------------------- */

/* squeue --start's forecast of a pending job ("" when it has none): %S, sacct's time format. */
static void squeue_start(long id, char *buf, size_t n)
{
    char jid[32], *out = NULL;
    snprintf(jid, sizeof jid, "%ld", id);
    buf[0] = '\0';
    if (cmd(&out, "squeue", "--start", "-h", "-j", jid, "-o", "%T %S", NULL) == 0 && strncmp(out, "PENDING ", 8) == 0 &&
        out[8] >= '0' && out[8] <= '9')
        snprintf(buf, n, "%.*s", (int)strcspn(out + 8, "\n"), out + 8);
    free(out);
}

/*
 * A job waits behind one with a time limit that holds both CPUs, so the scheduler forecasts its
 * start (squeue --start). After a few polls (sacct lists the pending job every poll, its record
 * outranking squeue's), `slurm-report job` gives squeue's forecast, in text and JSON, and `jobs -P`
 * prints the pending job as sacct does. Then both are cancelled (blocker while it runs).
 */
static void check_forecast(scenario_t *sc)
{
    char want[64] = "", iso[128], *argv[12], *o = NULL, *e = NULL, db[128], id[32], env_uri[600];
    char *env[] = {env_uri, NULL};
    time_t began = time(NULL), until = began + 60;

    sc->blocker = submit("holds both CPUs (-t 1)", "-c2", "-t1", "--wrap", "sleep 90");
    sc->waiter = submit("waits for it (forecast)", "-t", "1", "--wrap", "sleep 1");
    while (!want[0] && time(NULL) < until) {
        sleep(2);
        squeue_start(sc->waiter, want, sizeof want);
    }
    if (!want[0])
        fail_msg("squeue --start gave no forecast for job %ld", sc->waiter);
    ingest();
    ingest(); /* a second poll: sacct's PENDING record again */
    squeue_start(sc->waiter, want, sizeof want); /* the forecast the last poll saw (the backfill may move it) */
    snprintf(iso, sizeof iso, "not yet, expected %sZ (forecast)", want);
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(id, sizeof id, "%ld", sc->waiter);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    argv[0] = (char *)SA_REPORT_BIN;
    argv[1] = (char *)"job";
    argv[2] = (char *)"-M";
    argv[3] = (char *)cluster;
    argv[4] = id;
    argv[5] = db;
    argv[6] = NULL;
    if (tu_run(argv, env, &o, &e) != 0)
        fail_msg("slurm-report job %ld failed: %s", sc->waiter, e);
    {
        const char *line = strstr(o, "Start:") ? strstr(o, "Start:") : o;
        printf("  squeue --start: %s; slurm-report job: %.*s\n", want, (int)strcspn(line, "\n"), line);
    }
    if (!strstr(o, iso))
        fail_msg("slurm-report job %ld does not say '%s':\n%s", sc->waiter, iso, o);
    free(o);
    free(e);
    argv[6] = (char *)"--json";
    argv[7] = NULL;
    if (tu_run(argv, env, &o, &e) != 0)
        fail_msg("slurm-report job %ld --json failed: %s", sc->waiter, e);
    snprintf(iso, sizeof iso, "\"expected_start\": \"%sZ\"", want);
    if (!strstr(o, iso))
        fail_msg("slurm-report job %ld --json lacks %s:\n%s", sc->waiter, iso, o);
    free(o);
    free(e);
    {
        const char *a[] = {"-j", id, NULL};
        same_listing("-j (a pending job)", a);
    }
    job_cmd("scancel", NULL, "%ld", sc->waiter);
    job_cmd("scancel", NULL, "%ld", sc->blocker);
    printf("  the forecast's check took %ld s\n", (long)(time(NULL) - began));
}

/* ---- slurm-report sreport against sreport (issue 32, item 5) ------------------------------------- */

/*
 * `sreport ARGS` and `slurm-report sreport ARGS` (the test's archive and time series), the
 * real one's output into *want and ours into *got (caller frees both); fails when either fails.
 */
static void both_sreports(const char *const *args, char **want, char **got)
{
    char *argv[48], sqlite[300], db[128], env_uri[600], *e = NULL;
    char *env[] = {env_uri, NULL};
    int n = 0, rc;

    argv[n++] = (char *)"/usr/bin/sreport";
    for (const char *const *a = args; *a && n < 40; a++)
        argv[n++] = (char *)*a;
    argv[n] = NULL;
    if ((rc = tu_run(argv, NULL, want, &e)) != 0)
        fail_msg("sreport exited %d: %s", rc, e);
    free(e);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    n = 0;
    argv[n++] = (char *)SA_REPORT_BIN;
    argv[n++] = (char *)"sreport";
    argv[n++] = sqlite;
    argv[n++] = db;
    for (const char *const *a = args; *a && n < 44; a++)
        argv[n++] = (char *)*a;
    argv[n] = NULL;
    if ((rc = tu_run(argv, env, got, &e)) != 0)
        fail_msg("slurm-report sreport exited %d: %s", rc, e);
    free(e);
}

/* The two print the same bytes for args (a NULL-terminated list). */
static void same_sreport(const char *const *args)
{
    char *want, *got, line[256] = "";
    both_sreports(args, &want, &got);
    for (const char *const *a = args; *a; a++)
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", a == args ? "" : " ", *a);
    if (strcmp(want, got) != 0)
        fail_msg("sreport %s:\n%s\nslurm-report sreport %s:\n%s", line, want, line, got);
    printf("  sreport %s: the same %zu bytes\n", line, strlen(want));
    free(want);
    free(got);
}

/*
 * slurm-report sreport prints sreport's text: the header lines (the window as sreport
 * rounds it, its seconds, the unit line), the column titles, widths and dashes, -p/-P/-n,
 * each -t, -T and Format=, of every report it answers. slurmdbd answers only the hours its
 * rollup has closed, and the scenario's hour closes after the test: these windows hold no
 * use in either (2020, before the cluster; an hour of 2030, sreport keeping times in an int);
 * SA_E2E_SREPORT_HOUR compares the scenario's hour, figures included (check_sreport_hour).
 */
static void check_sreport_text(void)
{
    /* 2020: before the cluster; 2030 for Utilization (its planned time reads the runs from the window's start on) */
    static const char *const w[] = {"start=2020-01-01", "end=2020-01-02T00:29:59", "start=2030-01-01T00:29:29"};
    const char *const cases[][12] = {
        {"cluster", "AccountUtilizationByUser", w[0], w[1], NULL},
        {"-P", "cluster", "AccountUtilizationByUser", w[0], w[1], NULL},
        {"-p", "-t", "hours", "-T", "gres/gpu,cpu", "cluster", "UserUtilizationByAccount", w[0], w[1], NULL},
        {"-t", "percent", "user", "TopUsage", "TopCount=5", w[0], w[1], NULL},
        {"-t", "s", "user", "t", "group", w[0], w[1], NULL},
        {"cluster", "AccountUtilizationByUser", "tree", "format=account%-25,login,used%20", w[0], w[1], NULL},
        {"-t", "secper", "-T", "mem,billing", "cluster", "a", w[0], w[1], NULL},
        {"cluster", "ua", "start=2020-01-01T05:29:30", "end=2020-01-01T06:40", NULL},
        {"-t", "minper", "cluster", "Utilization", w[2], NULL},
        {"-T", "gres/gpu", "cluster", "Utilization",
         "format=Allocated,Down,PlannedDown,Idle,Reserved,Reported,TresName,Count", w[2], NULL},
        {"job", "SizesByAccount", "grouping=2,4", w[0], w[1], NULL},
        {"-T", "gres/gpu", "job", "SizesByAccount", "PrintJobCount", "FlatView", w[0], w[1], NULL},
        {"-t", "hourper", "job", "sizes", w[0], w[1], NULL},
    };
    time_t began = time(NULL);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        same_sreport(cases[i]);
    printf("  sreport's text: %zu reports in %ld s\n", sizeof cases / sizeof cases[0], (long)(time(NULL) - began));
}

/* ---- utilization against sreport (issue 32; SA_E2E_SREPORT_HOUR=1) ------------------------------ */

/* Ingests every 30 s until `until`. */
static void ingest_till(time_t until)
{
    while (time(NULL) < until) {
        ingest();
        sleep(30);
    }
    ingest();
}

/* One TRES line of `sreport cluster Utilization` in seconds. */
typedef struct {
    double alloc, down, pdown, idle, planned, reported;
} sreport_t;

/*
 * sreport -t seconds cluster Utilization of [h0, h1) for tres ("cpu", "gres/gpu"); false until
 * slurmdbd has rolled the hour up (Reported 0 or no line).
 */
static bool sreport_hour(time_t h0, time_t h1, const char *tres, sreport_t *r)
{
    char start[64], end[64], topt[64], *out = NULL;
    struct tm tm;
    bool ok;

    strftime(start, sizeof start, "start=%Y-%m-%dT%H:%M:%S", gmtime_r(&h0, &tm));
    strftime(end, sizeof end, "end=%Y-%m-%dT%H:%M:%S", gmtime_r(&h1, &tm));
    snprintf(topt, sizeof topt, "-T%s", tres);
    /* Reserved: sreport's Planned column (22.05 reads "Planned" as PlannedDown) */
    if (cmd(&out, "sreport", "-n", "-P", "-t", "seconds", topt, "cluster", "Utilization", start, end,
            "format=Allocated,Down,PlannedDown,Idle,Reserved,Reported", NULL) != 0) {
        free(out);
        return false;
    }
    ok = sscanf(out, "%lf|%lf|%lf|%lf|%lf|%lf", &r->alloc, &r->down, &r->pdown, &r->idle, &r->planned,
                &r->reported) == 6 && r->reported > 0;
    free(out);
    return ok;
}

/* utilization --summary -t hours of [h0, h1) as JSON (caller frees). */
static json_t *summary_hour(time_t h0, time_t h1)
{
    char start[64], end[64], sqlite[300], db[128], env_uri[600], *o = NULL, *e = NULL;
    char *env[] = {env_uri, NULL};
    char *argv[] = {(char *)SA_REPORT_BIN, (char *)"utilization", (char *)"--summary", (char *)"-t", (char *)"hours",
                    (char *)"--json", (char *)"-M", (char *)cluster, (char *)"-S", start, (char *)"-E", end, sqlite,
                    db, NULL};
    json_t *j;

    sa_time_format(h0, start, sizeof start);
    sa_time_format(h1, end, sizeof end);
    snprintf(sqlite, sizeof sqlite, "--sqlite=%s/ts.db", tmp);
    snprintf(db, sizeof db, "--db=%s", db_name);
    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    if (tu_run(argv, env, &o, &e) != 0)
        fail_msg("slurm-report utilization --summary failed: %s", e);
    j = json_loads(o, 0, NULL);
    assert_non_null(j);
    free(o);
    free(e);
    return j;
}

/*
 * slurm-report sreport's figures of the hour [h0, h1) the scenario ran in, once slurmdbd has
 * rolled it up: the cluster and user reports and the job sizes, byte for byte, in seconds
 * (the association and job records are the runs' exact times, both sides).
 */
static void same_sreport_hour(time_t h0, time_t h1)
{
    char start[64], end[64];
    struct tm tm;

    strftime(start, sizeof start, "start=%Y-%m-%dT%H:%M:%S", gmtime_r(&h0, &tm));
    strftime(end, sizeof end, "end=%Y-%m-%dT%H:%M:%S", gmtime_r(&h1, &tm));
    {
        const char *const cases[][12] = {
            {"-t", "seconds", "cluster", "AccountUtilizationByUser", start, end, NULL},
            {"-P", "-t", "seconds", "-T", "cpu,gres/gpu,mem,billing", "cluster", "AccountUtilizationByUser", start, end,
             NULL},
            {"-p", "-t", "seconds", "-T", "gres/gpu,cpu", "cluster", "UserUtilizationByAccount", start, end, NULL},
            {"-t", "seconds", "user", "TopUsage", start, end, NULL},
            {"-t", "seconds", "job", "SizesByAccount", "grouping=2", start, end, NULL},
            {"-P", "-t", "seconds", "job", "SizesByAccount", "FlatView", "PrintJobCount", start, end, NULL},
            {"-t", "seconds", "-T", "gres/gpu", "job", "SizesByAccount", "FlatView", "grouping=individual", start, end,
             NULL},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            same_sreport(cases[i]);
    }
}

/*
 * The hour [h0, h0 + 3600) of utilization against sreport's, once slurmdbd has it: allocated
 * exactly (the runs' TRES x their seconds, both sides; a second of rounding), the capacity
 * (Reported) to 1 %, down and planned down within the polls (30 s of every CPU or GPU, each
 * state change), planned within 10 % (the rollups keep the allocated CPUs of a run that
 * started, slurmdbd counts ReqCPUS), idle what is left.
 */
static void check_sreport_hour(time_t h0)
{
    static const char *const tres[2][2] = {{"cpu", "cpu"}, {"gres/gpu", "gpu"}};
    time_t h1 = h0 + 3600, deadline = h1 + 1800;
    json_t *j;

    ingest_till(h1 + 30);
    j = summary_hour(h0, h1);
    for (int t = 0; t < 2; t++) {
        sreport_t r;
        const char *res = tres[t][1];
        double cap = 0, alloc = tu_summary_seconds(j, res, "allocated"), slack;
        double down = tu_summary_seconds(j, res, "down"), pdown = tu_summary_seconds(j, res, "planned_down");
        double planned = tu_summary_seconds(j, res, "planned");
        while (!sreport_hour(h0, h1, tres[t][0], &r)) {
            if (time(NULL) > deadline)
                fail_msg("sreport has no rolled-up hour %ld for %s after 30 minutes", (long)h0, tres[t][0]);
            sleep(30);
        }
        for (const char *const *c = (const char *const[]){"allocated", "idle", "planned", "stranded", "down",
                                                           "planned_down", "reserved", "unknown", NULL};
             *c; c++)
            cap += tu_summary_seconds(j, res, *c);
        slack = 4 * 30 * cap / 3600; /* four state changes of every CPU or GPU, 30 s apart */
        printf("  hour %ld %s: sreport allocated %.0f down %.0f plnd down %.0f idle %.0f planned %.0f reported %.0f;"
               " utilization allocated %.0f down %.0f planned down %.0f idle %.0f planned %.0f capacity %.0f\n",
               (long)h0, tres[t][0], r.alloc, r.down, r.pdown, r.idle, r.planned, r.reported, alloc, down, pdown,
               tu_summary_seconds(j, res, "idle"), planned, cap);
        if (fabs(alloc - r.alloc) > 1.5)
            fail_msg("%s allocated: utilization %.0f s, sreport %.0f s", tres[t][0], alloc, r.alloc);
        if (fabs(cap - r.reported) > 0.01 * r.reported)
            fail_msg("%s capacity: utilization %.0f s, sreport %.0f s", tres[t][0], cap, r.reported);
        if (fabs(down + pdown - r.down - r.pdown) > slack)
            fail_msg("%s down: utilization %.0f s, sreport %.0f s", tres[t][0], down + pdown, r.down + r.pdown);
        if (fabs(planned - r.planned) > 0.1 * r.planned + 1.5)
            fail_msg("%s planned: utilization %.0f s, sreport %.0f s", tres[t][0], planned, r.planned);
    }
    json_decref(j);
    same_sreport_hour(h0, h1);
}

/* ---- slurm-ingest audit (issue 35) --------------------------------------------------------------- */

/* Runs slurm-ingest audit with args; fails the test unless it exits want; *out what it printed (caller frees). */
static void audit_run(const char *const *args, int want, char **out)
{
    char *err = NULL;
    int rc = ingest_rc(args, false, out, &err);
    if (rc != want)
        fail_msg("slurm-ingest audit exited %d, not %d:\n%s%s", rc, want, *out, err);
    free(err);
}

static void set_doc_str(long id, const char *key, const char *value)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
    char idbuf[64];
    bson_t *f, *u;
    bson_error_t e;
    snprintf(idbuf, sizeof idbuf, "%s:%ld", cluster, id);
    f = BCON_NEW("_id", BCON_UTF8(idbuf));
    u = BCON_NEW("$set", "{", key, BCON_UTF8(value), "}");
    assert_true(mongoc_collection_update_one(c, f, u, NULL, NULL, &e));
    bson_destroy(f);
    bson_destroy(u);
    mongoc_collection_destroy(c);
}

static void delete_doc(long id)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
    char idbuf[64];
    bson_t *f;
    bson_error_t e;
    snprintf(idbuf, sizeof idbuf, "%s:%ld", cluster, id);
    f = BCON_NEW("_id", BCON_UTF8(idbuf));
    assert_true(mongoc_collection_delete_one(c, f, NULL, NULL, &e));
    bson_destroy(f);
    mongoc_collection_destroy(c);
}

/*
 * After the scenario the archive agrees with slurmdbd over its window (every job and
 * incarnation, field by field: exit 0); a deleted document and a changed field are
 * exactly two differences (exit 9); --repair mends them (exit 0), and the audit agrees.
 */
static void check_audit(const scenario_t *sc, time_t t_begin)
{
    char from[32], want[512], *out = NULL;
    time_t t = t_begin;
    const char *audit[] = {"audit", "-S", from, NULL};
    const char *repair[] = {"audit", "-S", from, "--repair", NULL};
    bson_t *d = get_doc(sc->gpu);
    char account[128];

    strftime(from, sizeof from, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    snprintf(account, sizeof account, "%s", doc_str(d, "account"));
    bson_destroy(d);
    audit_run(audit, 0, &out);
    printf("  audit after the scenario: %s", strstr(out, "audit of ") ? strstr(out, "audit of ") : out);
    assert_non_null(strstr(out, "the archive agrees"));
    free(out);
    delete_doc(sc->burn);
    set_doc_str(sc->gpu, "account", "e2e-changed");
    audit_run(audit, 9, &out);
    {
        char l1[128], l2[256];
        snprintf(l1, sizeof l1, "job %ld: missing\n", sc->burn);
        snprintf(l2, sizeof l2, "job %ld: account: archive e2e-changed, slurmdbd %s\n", sc->gpu, account);
        snprintf(want, sizeof want, "%s%s", sc->burn < sc->gpu ? l1 : l2, sc->burn < sc->gpu ? l2 : l1);
    }
    if (strncmp(out, want, strlen(want)) != 0 || !strstr(out, "2 difference(s) (1 missing, 0 extra, 1 changed)"))
        fail_msg("audit after a deleted document and a changed field:\n%swanted first:\n%s", out, want);
    free(out);
    audit_run(repair, 0, &out);
    assert_non_null(strstr(out, "after the repair"));
    free(out);
    audit_run(audit, 0, &out);
    assert_non_null(strstr(out, "the archive agrees"));
    free(out);
    d = get_doc(sc->burn);
    assert_non_null(d);
    bson_destroy(d);
}

static void test_scenario(void **state)
{
    scenario_t sc;
    time_t t_begin = time(NULL), h0 = 0;
    (void)state;

    if (getenv("SA_E2E_SREPORT_HOUR")) {
        /* the scenario inside one whole UTC hour the series covers: from the next hour, ingested from before it */
        h0 = t_begin - t_begin % 3600 + 3600;
        printf("  SA_E2E_SREPORT_HOUR: waiting for %ld (%ld s), ingesting every 30 s\n", (long)h0, (long)(h0 - t_begin));
        ingest_till(h0 + 5);
        t_begin = time(NULL);
    }
    run_scenario(&sc);
    check_jobs(&sc);
    check_requeued(sc.requeue);
    check_gpu_job(sc.gpu);
    check_report(sc.gpu, t_begin);
    check_sreport_text();
    check_jobs_listing(&sc, t_begin);
    check_usage(sc.burn);
    check_nothing_unfinished();
    check_drain();
    check_audit(&sc, t_begin);
    if (h0)
        check_sreport_hour(h0);
    else
        printf("  utilization against sreport cluster Utilization: not run (SA_E2E_SREPORT_HOUR=1 runs it: up to 2 h)\n");
}

/* ---- the untyped variant (issue 15) ---------------------------------------------------------- */

/*
 * AccountingStorageTRES=gres/gpu (no gres/gpu:a100): the jobs' TRES say gres/gpu=1 only,
 * whatever they asked. slurm-ingest types each run from its node's gres at its start
 * (runs[].gpu_type a100, source node), and usage --by gpu-type names a100 with the
 * GPU-hours a typed configuration gives (GPUs x elapsed, from sacct; test_scenario
 * checks the typed figure the same way). Then `sinfo --json` (22.05: a node list, not
 * sinfo groups) is ingested as a snapshot: every node says its own GPUs, no warning.
 */
static void test_untyped(void **state)
{
    long ids[2];
    double want = 0, got;
    char types[256], *err = NULL, *out = NULL, path[320], at[64], sinfo[340];
    time_t t_begin = time(NULL);
    FILE *f;
    (void)state;

    ids[0] = submit("untyped GPU request", "--gres=gpu:1", "--wrap=sleep 20", NULL, NULL);
    ids[1] = submit("typed GPU request", "--gres=gpu:a100:1", "--wrap=sleep 25", NULL, NULL);
    assert_true(ingest_until(is_running, &ids[1], 90));
    assert_true(ingest_until(queue_empty, NULL, 180));
    ingest();
    for (int i = 0; i < 2; i++) {
        bson_t *d = get_doc(ids[i]);
        long elapsed = elapsed_of(ids[i]);
        assert_non_null(d);
        printf("  job %ld: TRES type '%s', run gpu_type '%s' from %s, %ld s\n", ids[i],
               doc_str(d, "runs.0.gpus_by_type.0.type"), doc_str(d, "runs.0.gpu_type"),
               doc_str(d, "runs.0.gpu_type_source"), elapsed);
        assert_int_equal(doc_int(d, "runs.0.gpus"), 1);
        assert_string_equal(doc_str(d, "runs.0.gpus_by_type.0.type"), ""); /* untyped in the TRES */
        assert_string_equal(doc_str(d, "runs.0.gpu_type"), "a100");
        assert_string_equal(doc_str(d, "runs.0.gpu_type_source"), "node");
        want += (double)elapsed / 3600;
        bson_destroy(d);
    }
    got = report_gpu_hours("gpu-type", t_begin, types, sizeof types);
    printf("  usage --by gpu-type: %s %.6f GPU-hours; GPUs x elapsed (the typed figure): %.6f\n", types, got, want);
    assert_string_equal(types, "a100");
    assert_true(fabs(got - want) < 1e-6);

    /* sinfo --json of 22.05, ingested as a snapshot */
    assert_int_equal(cmd(&out, "sinfo", "--json", NULL), 0);
    snprintf(path, sizeof path, "%s/sinfo.json", tmp);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
    printf("  sinfo --json of 22.05: %s\n", strstr(out, "\"sinfo\"") ? "sinfo groups" : "a node list (no groups)");
    free(out);
    sa_time_format(time(NULL), at, sizeof at);
    snprintf(sinfo, sizeof sinfo, "--sinfo=%s", path);
    {
        char atopt[80];
        const char *extra[] = {sinfo, atopt, "--no-mongo", NULL};
        snprintf(atopt, sizeof atopt, "--at=%s", at);
        ingest_with(extra, &err);
    }
    assert_null(strstr(err, "are unknown"));
    free(err);
}

int main(int argc, char **argv)
{
    bool untyped = argc > 1 && strcmp(argv[1], "untyped") == 0;
    const struct CMUnitTest scenario[] = {cmocka_unit_test(test_scenario)};
    const struct CMUnitTest variant[] = {cmocka_unit_test(test_untyped)};
    char *out = NULL, *err = NULL, tool[512];
    char *check[] = {tool, (char *)"check", NULL}, *up[] = {tool, (char *)"up", NULL}, *down[] = {tool, (char *)"down", NULL};
    int rc;

#if defined(__SANITIZE_ADDRESS__)
    if (!getenv("SLURM_E2E_ASAN")) {
        printf("SKIP e2e_slurm: the real-Slurm scenario takes minutes and runs once, in the release build "
               "(set SLURM_E2E_ASAN=1 to run it here too)\n");
        return 77;
    }
#endif
    if (untyped) {
        /* its own cluster (never the typed one another test may have up), untyped GPU TRES */
        setenv("SLURM_TEST_CLUSTER_TRES", "gres/gpu", 1);
        setenv("SLURM_TEST_CLUSTER_POINTER", "/tmp/slurm-test-cluster.untyped.current", 1);
    }
    /* sacct's times in UTC, ISO-8601, as slurm-ingest runs it */
    setenv("TZ", "UTC", 1);
    setenv("SLURM_TIME_FORMAT", "standard", 1);
    snprintf(tool, sizeof tool, "%s/tools/slurm-test-cluster", SA_SOURCE_DIR);
    if (tu_run(check, NULL, &out, &err) != 0) {
        printf("SKIP e2e_slurm: no Slurm cluster can run here: %s%s\n", out, err);
        return 77;
    }
    free(out);
    free(err);
    client = tu_mongo_client("e2e_slurm", &db_name);
    if (!client)
        return 77;
    uri = getenv("SLURM_TEST_MONGO_URI");
    if (tu_run(up, NULL, &out, &err) != 0) {
        printf("FAIL e2e_slurm: tools/slurm-test-cluster up failed:\n%s\n", err);
        return 1;
    }
    /* the export lines: SLURM_CONF=..., SLURM_TEST_CLUSTER_DIR=..., SLURM_TEST_CLUSTER_NAME=... */
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq;
        if (strncmp(line, "export ", 7) == 0)
            line += 7;
        eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        {
            char *v = eq + 1;
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            setenv(line, v, 1);
        }
    }
    free(out);
    free(err);
    if (getenv("SLURM_TEST_CLUSTER_NAME"))
        cluster = getenv("SLURM_TEST_CLUSTER_NAME");
    snprintf(tmp, sizeof tmp, "/tmp/sa-e2e-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    rc = untyped ? tu_run_group_tests("e2e_slurm_untyped", variant, NULL, NULL)
                 : tu_run_group_tests("e2e_slurm", scenario, NULL, NULL);
    tu_run(down, NULL, &out, &err);
    free(out);
    free(err);
    {
        char *rm[] = {(char *)"/bin/rm", (char *)"-rf", tmp, NULL};
        tu_run(rm, NULL, &out, &err);
        free(out);
        free(err);
    }
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
