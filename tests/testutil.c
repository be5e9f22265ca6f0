/*
 * testutil.c - helpers shared by the cmocka test programs (see testutil.h).
 */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_jobdoc.h"
#include "sa_mongo.h"

/* Where the samples should be, whether or not they are there. */
static const char *samples_path(void)
{
    const char *env = getenv("SLURM_SAMPLES_DIR");
    return env && *env ? env : SA_SAMPLES_DIR;
}

bool tu_samples_present(void)
{
    struct stat st;
    return stat(samples_path(), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Says once per program why the sample cases do not run. */
static void samples_note(const char *what)
{
    static bool said;
    if (said) {
        printf("SKIP: needs the real Slurm captures (see above)\n");
        fflush(stdout);
        return;
    }
    said = true;
    printf("SKIP %s: the real Slurm captures are not here (%s: no such directory; they are kept outside the "
           "repository in ../shared/slurm-samples, or SLURM_SAMPLES_DIR); %s\n",
           program_invocation_short_name, samples_path(), what);
    fflush(stdout);
}

void tu_require_samples(void)
{
    if (tu_samples_present())
        return;
    samples_note("the cases that read them are skipped; the same checks over fixtures/ run");
    skip();
}

/* Without the samples, a program that did not check first is skipped as a whole (exit 77). */
static void samples_or_exit(void)
{
    if (tu_samples_present())
        return;
    samples_note("this program needs them and is skipped");
    exit(77);
}

const char *tu_samples_dir(void)
{
    samples_or_exit();
    return samples_path();
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f) {
        fprintf(stderr, "tu_read_file: cannot open %s\n", path);
        abort();
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        abort();
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

const char *tu_sample(const char *rel)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_samples_dir(), rel);
    return path;
}

const char *tu_sample_or_fixture(const char *rel, const char *fixture)
{
    return tu_samples_present() || !fixture ? tu_sample(rel) : tu_fixture(fixture);
}

const char *tu_fixture(const char *rel)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", SA_FIXTURES_DIR, rel);
    return path;
}

const char *const tu_gen_versions[] = {"v0.0.37", "v0.0.38", "v0.0.39", "v0.0.40", "v0.0.41",
                                       "v0.0.42", "v0.0.43", "v0.0.44", NULL};

int tu_gen_vn(const char *version)
{
    return atoi(version + strlen("v0.0."));
}

/* fixtures/gen/<version>/manifest.json's entry of one file (a new reference), or NULL. */
static json_t *gen_file_info(const char *version, const char *file)
{
    char rel[256];
    json_error_t jerr;
    json_t *m, *info;

    snprintf(rel, sizeof rel, "gen/%s/manifest.json", version);
    m = json_load_file(tu_fixture(rel), 0, &jerr);
    if (!m)
        fail_msg("%s: %s", tu_fixture(rel), jerr.text);
    info = json_object_get(json_object_get(m, "files"), file);
    json_incref(info);
    json_decref(m);
    return info;
}

int64_t tu_gen_count(const char *version, const char *file, const char *key)
{
    json_t *info = gen_file_info(version, file);
    json_t *v = json_object_get(info, key);
    int64_t n = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
    json_decref(info);
    return n;
}

char *tu_gen_fields(const char *version, const char *file)
{
    json_t *info = gen_file_info(version, file);
    char *fields = NULL;

    if (json_is_false(json_object_get(info, "header")))
        fields = strdup(json_string_value(json_object_get(info, "fields")));
    json_decref(info);
    return fields;
}

void tu_parse_gen(const char *version, const char *file, tu_parsed_t *out)
{
    char rel[256];
    sa_sacct_text_opts_t topts = {0};
    char *fields = tu_gen_fields(version, file);
    sa_error_t err;
    bool ok;

    snprintf(rel, sizeof rel, "gen/%s/%s", version, file);
    topts.fields = fields;
    sa_error_clear(&err);
    ok = tu_parse_file(tu_fixture(rel), &topts, out, &err);
    free(fields);
    if (!ok)
        fail_msg("%s: %s", rel, err.message);
}

void tu_parse_fixture(const char *rel, tu_parsed_t *out)
{
    sa_error_t err;
    sa_error_clear(&err);
    if (!tu_parse_file(tu_fixture(rel), NULL, out, &err))
        fail_msg("%s: %s", rel, err.message);
}

static bool collect_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    tu_parsed_t *p = ctx;
    sa_job_t **v = realloc(p->jobs, (p->njobs + 1) * sizeof *v);
    (void)error;
    if (!v)
        return false;
    p->jobs = v;
    p->jobs[p->njobs++] = sa_job_steal(job);
    return true;
}

static bool collect_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    tu_parsed_t *p = ctx;
    sa_node_t **v = realloc(p->nodes, (p->nnodes + 1) * sizeof *v);
    (void)error;
    if (!v)
        return false;
    p->nodes = v;
    p->nodes[p->nnodes++] = sa_node_steal(node);
    return true;
}

bool tu_parse_reader(sa_reader_t *r, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error)
{
    sa_sink_t sink = {collect_job, collect_node, out, NULL, false, NULL};
    memset(out, 0, sizeof *out);
    sa_meta_init(&out->meta);
    return sa_parse_any(r, topts, &sink, &out->meta, &out->kind, error);
}

bool tu_parse_file(const char *path, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error)
{
    sa_reader_t r;
    bool ok;
    int fd = open(path, O_RDONLY);

    if (fd < 0) {
        fprintf(stderr, "tu_parse_file: cannot open %s\n", path);
        abort();
    }
    sa_reader_init_fd(&r, fd);
    ok = tu_parse_reader(&r, topts, out, error);
    close(fd);
    return ok;
}

bool tu_parse_mem(const char *data, size_t len, const sa_sacct_text_opts_t *topts, tu_parsed_t *out,
                  sa_error_t *error)
{
    sa_reader_t r;
    sa_reader_init_mem(&r, data, len);
    return tu_parse_reader(&r, topts, out, error);
}

void tu_parsed_clear(tu_parsed_t *p)
{
    for (size_t i = 0; i < p->njobs; i++)
        sa_job_destroy(p->jobs[i]);
    for (size_t i = 0; i < p->nnodes; i++)
        sa_node_destroy(p->nodes[i]);
    free(p->jobs);
    free(p->nodes);
    sa_meta_clear(&p->meta);
    memset(p, 0, sizeof *p);
}

sa_job_t *tu_find_job_n(tu_parsed_t *p, int64_t job_id, size_t nth)
{
    for (size_t i = 0; i < p->njobs; i++) {
        if (p->jobs[i]->job_id == job_id && nth-- == 0)
            return p->jobs[i];
    }
    return NULL;
}

sa_job_t *tu_find_job(tu_parsed_t *p, int64_t job_id)
{
    return tu_find_job_n(p, job_id, 0);
}

sa_node_t *tu_find_node(tu_parsed_t *p, const char *name)
{
    for (size_t i = 0; i < p->nnodes; i++) {
        if (p->nodes[i]->name && strcmp(p->nodes[i]->name, name) == 0)
            return p->nodes[i];
    }
    return NULL;
}

const char *tu_state(const sa_state_t *st)
{
    static char buf[512];
    char *s = sa_state_format(st);
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    free(s);
    return buf;
}

const char *tu_sample_fields(const char *rel)
{
    static const struct {
        const char *prefix, *fields;
    } table[] = {
        {"sacct-parsable/sacct-P-noheader-xdmod26fields",
         "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,start,end,elapsed,"
         "exitcode,state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname"},
        {"sacct-parsable/sacct-p-snowman-delim_peregrine",
         "JobID,JobName,User,Partition,NodeList,NNodes,NCPUS,NTasks,State,Submit,Start,End,Timelimit,Elapsed,"
         "TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,MaxDiskWrite,MaxDiskRead,"
         "MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment"},
        {"sacct-parsable/sacct-p-snowman-delim-37fields_habrok",
         "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,Elapsed,"
         "TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,TRESUsageInMax,"
         "TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,MaxRSSTask,MaxVMSizeNode,"
         "MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,MaxDiskWriteTask,Comment"},
        {"sacct-parsable/local-sacct-P-n_", "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strncmp(rel, table[i].prefix, strlen(table[i].prefix)) == 0)
            return table[i].fields;
    }
    return NULL;
}

char *tu_parsed_dump(const tu_parsed_t *p)
{
    json_t *all = json_array();
    char *s;
    for (size_t i = 0; i < p->njobs; i++)
        json_array_append_new(all, sa_job_to_json(p->jobs[i]));
    for (size_t i = 0; i < p->nnodes; i++)
        json_array_append_new(all, sa_node_to_json(p->nodes[i]));
    s = json_dumps(all, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(all);
    return s;
}

struct _mongoc_client_t *tu_mongo_client(const char *test_name, char **db_name)
{
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    mongoc_client_t *client;
    bson_error_t berr;
    bson_t ping = BSON_INITIALIZER;
    char name[64];

    if (!uri || !*uri) {
        printf("SKIP %s: SLURM_TEST_MONGO_URI is not set; run the suite with tools/test, which starts a "
               "MongoDB wire-protocol server\n", test_name);
        return NULL;
    }
    sa_mongo_init(); /* quiet: no "endSessions" warning from FerretDB */
    client = mongoc_client_new(uri);
    if (!client)
        fail_msg("cannot parse SLURM_TEST_MONGO_URI");
    mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
    BSON_APPEND_INT32(&ping, "ping", 1);
    if (!mongoc_client_command_simple(client, "admin", &ping, NULL, NULL, &berr))
        fail_msg("test MongoDB server does not answer ping: %s", berr.message);
    bson_destroy(&ping);
    snprintf(name, sizeof name, "sa_test_%s_%ld", test_name, (long)getpid());
    *db_name = strdup(name);
    return client;
}

void tu_mongo_drop(struct _mongoc_client_t *client, const char *db_name)
{
    mongoc_database_t *db = mongoc_client_get_database(client, db_name);
    bson_error_t berr;
    if (!mongoc_database_drop(db, &berr))
        printf("note: dropping %s failed: %s\n", db_name, berr.message);
    mongoc_database_destroy(db);
}

int tu_run(char *const argv[], char *const env_extra[], char **out, char **err)
{
    char outpath[] = "/tmp/sa-run-out-XXXXXX", errpath[] = "/tmp/sa-run-err-XXXXXX";
    int ofd = mkstemp(outpath), efd = mkstemp(errpath), status;
    pid_t pid;

    if (ofd < 0 || efd < 0)
        abort();
    pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        dup2(ofd, 1);
        dup2(efd, 2);
        /* libmongoc keeps counters in /dev/shm/mongoc-<pid>; a file left by a killed process whose pid
         * comes round again makes it warn on stderr, which the tests read: no shared memory */
        setenv("MONGOC_DISABLE_SHM", "1", 1);
        for (char *const *e = env_extra; e && *e; e++)
            putenv(*e);
        execv(argv[0], argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        ;
    close(ofd);
    close(efd);
    *out = tu_read_file(outpath, NULL);
    *err = tu_read_file(errpath, NULL);
    unlink(outpath);
    unlink(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int tu_run_ingest(const char *bin, const char *uri, const char *db, const char *dir, const char *cluster,
                  const char *const *extra, char **err_out)
{
    char env_uri[600], sqlite[300], spool[300];
    char *argv[40], *err = NULL, *o = NULL;
    char *env[] = {env_uri, NULL};
    int n = 0, rc;

    snprintf(env_uri, sizeof env_uri, "SLURM_INGEST_MONGO_URI=%s", uri);
    snprintf(sqlite, sizeof sqlite, "%s/ts.sqlite", dir);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    argv[n++] = (char *)bin;
    for (const char *const *e = extra; *e; e++) {
        if (n == 29)
            abort(); /* 40 slots: the program, 28 arguments, the 10 this adds and NULL */
        argv[n++] = (char *)*e;
    }
    argv[n++] = "--cluster";
    argv[n++] = (char *)cluster;
    argv[n++] = "--db";
    argv[n++] = (char *)db;
    argv[n++] = "--sqlite";
    argv[n++] = sqlite;
    argv[n++] = "--lock-dir";
    argv[n++] = (char *)dir;
    argv[n++] = "--spool-dir";
    argv[n++] = spool;
    argv[n] = NULL;
    rc = tu_run(argv, env, &o, &err);
    if (rc != 0 && rc != 9)
        fprintf(stderr, "slurm-ingest exited %d: %s\n", rc, err ? err : "");
    free(o);
    if (err_out)
        *err_out = err;
    else
        free(err);
    return rc;
}

int tu_run_report(const char *bin, const char *uri, const char *env_extra, const char *const *first,
                  const char *const *args, char **out, char **err)
{
    char env_uri[600], *argv[64];
    char *env[] = {env_uri, (char *)env_extra, NULL};
    int n = 0;

    snprintf(env_uri, sizeof env_uri, "SLURM_REPORT_MONGO_URI=%s", uri);
    argv[n++] = (char *)bin;
    for (int k = 0; k < 2; k++) {
        for (const char *const *a = k ? args : first; a && *a; a++) {
            if (n == 63)
                abort(); /* 64 slots: the program, 62 arguments and NULL */
            argv[n++] = (char *)*a;
        }
    }
    argv[n] = NULL;
    return tu_run(argv, env, out, err);
}

double tu_summary_seconds(const json_t *summary, const char *res, const char *cls)
{
    char key[64];
    const json_t *row;
    size_t i;

    snprintf(key, sizeof key, "%s_hours", cls);
    json_array_foreach(json_object_get(summary, "rows"), i, row) {
        if (strcmp(json_string_value(json_object_get(row, "resource")), res) == 0 &&
            strcmp(json_string_value(json_object_get(row, "gpu_type")), "*") == 0)
            return json_number_value(json_object_get(row, key)) * 3600;
    }
    return 0;
}

/* ---- libmongoc's shared memory (issue 22) ------------------------------------------------------- */

bool tu_mongoc_shm_exists(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/mongoc-%ld", pid);
    return access(path, F_OK) == 0;
}

/* In a child: the environment without MONGOC_DISABLE_SHM, plus env_extra. */
static void child_env(char *const env_extra[])
{
    unsetenv("MONGOC_DISABLE_SHM");
    for (char *const *e = env_extra; e && *e; e++)
        putenv(*e);
}

int tu_run_stale_shm(char *const argv[], char *const env_extra[], char **err)
{
    char errpath[] = "/tmp/sa-run-err-XXXXXX", shm[64];
    int efd = mkstemp(errpath), status;
    pid_t pid;

    if (efd < 0)
        abort();
    pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY), fd;
        snprintf(shm, sizeof shm, "/dev/shm/mongoc-%ld", (long)getpid());
        fd = open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST)
            _exit(126);
        dup2(null, 1);
        dup2(efd, 2);
        child_env(env_extra);
        execv(argv[0], argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        ;
    snprintf(shm, sizeof shm, "/dev/shm/mongoc-%ld", (long)pid);
    unlink(shm);
    close(efd);
    *err = tu_read_file(errpath, NULL);
    unlink(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The state letter of process pid (R, S, D, Z, ...), or 0 when it is gone. */
static char proc_state(long pid)
{
    char path[64], buf[512], *close_paren;
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

long tu_start_sleeping(char *const argv[], char *const env_extra[], int *in_fd)
{
    int p[2];
    pid_t pid;
    int slept = 0;

    if (pipe(p) != 0)
        abort();
    pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(p[0], 0);
        close(p[0]);
        close(p[1]);
        dup2(null, 1);
        dup2(null, 2);
        child_env(env_extra);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[0]);
    *in_fd = p[1];
    for (int i = 0; i < 50 && slept < 2; i++) {
        char st;
        usleep(200 * 1000);
        st = proc_state(pid);
        if (st == 0 || st == 'Z')
            break;
        slept = st == 'S' ? slept + 1 : 0;
    }
    if (slept == 2)
        return (long)pid;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    close(p[1]);
    return -1;
}

/* ---- merged documents of the fixtures ------------------------------------------------------------ */

/* The observation time of a parse: meta's last update, else just after the latest time its records print. */
static int64_t parse_time(const tu_parsed_t *p)
{
    int64_t at = p->meta.last_update;
    if (at != SA_UNSET)
        return at;
    at = 0;
    for (size_t i = 0; i < p->njobs; i++) {
        const sa_job_t *j = p->jobs[i];
        const int64_t t[4] = {j->submit, j->eligible, j->start, j->end};
        for (int k = 0; k < 4; k++)
            if (t[k] != SA_UNSET && t[k] > at)
                at = t[k];
    }
    return at + 1;
}

/* Merges every job record of a parse into docs (job id -> document); displaced ones go to old. */
static void merge_parse(const tu_parsed_t *p, int64_t at, const char *where, json_t *docs, json_t *old)
{
    sa_obs_ctx_t ctx = {"fx", at, p->meta.slurm_release, p->meta.data_parser};
    for (size_t i = 0; i < p->njobs; i++) {
        char key[32];
        json_t *doc, *sup = NULL;
        sa_merge_kind_t kind;
        sa_error_t err;
        snprintf(key, sizeof key, "%lld", (long long)p->jobs[i]->job_id);
        doc = json_incref(json_object_get(docs, key));
        if (!sa_jobdoc_merge(&doc, p->jobs[i], &ctx, &kind, &sup, &err))
            fail_msg("%s: job %s: merge: %s", where, key, err.message);
        json_object_set_new(docs, key, doc);
        if (sup)
            json_array_append_new(old, sup);
    }
}

/* Merges every job file of fixtures/<dir> (squeue*, sacct*, in name order) and hands each document to fn. */
static size_t merge_fixture_dir(const char *dir, const char *gen_version, tu_doc_fn fn, void *ctx)
{
    struct dirent **names;
    int n = scandir(tu_fixture(dir), &names, NULL, alphasort);
    json_t *docs = json_object(), *old = json_array(), *doc;
    const char *k;
    size_t i, files = 0, count = 0;

    if (n < 0)
        fail_msg("cannot read %s", tu_fixture(dir));
    for (int f = 0; f < n; f++) {
        const char *file = names[f]->d_name;
        if (strncmp(file, "squeue", 6) == 0 || strncmp(file, "sacct", 5) == 0) {
            char rel[512];
            tu_parsed_t p;
            snprintf(rel, sizeof rel, "%s/%s", dir, file);
            if (gen_version) {
                tu_parse_gen(gen_version, file, &p);
            } else {
                sa_sacct_text_opts_t topts = {0};
                sa_error_t err;
                if (strcmp(file, "sacct-P-n.txt") == 0) /* fixtures/slurm-22.05/README.md */
                    topts.fields = "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason";
                if (!tu_parse_file(tu_fixture(rel), &topts, &p, &err))
                    fail_msg("%s: %s", rel, err.message);
            }
            merge_parse(&p, gen_version ? TU_GEN_AT : parse_time(&p), rel, docs, old);
            tu_parsed_clear(&p);
            files++;
        }
        free(names[f]);
    }
    free(names);
    if (files < 4)
        fail_msg("%s: only %zu files of jobs", dir, files);
    json_object_foreach(docs, k, doc) {
        fn(doc, dir, ctx);
        count++;
    }
    json_array_foreach(old, i, doc) {
        fn(doc, dir, ctx);
        count++;
    }
    json_decref(docs);
    json_decref(old);
    return count;
}

size_t tu_merge_fixtures(tu_doc_fn fn, void *ctx)
{
    size_t count = 0;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        char dir[64];
        snprintf(dir, sizeof dir, "gen/%s", *v);
        count += merge_fixture_dir(dir, *v, fn, ctx);
    }
    return count + merge_fixture_dir("slurm-22.05", NULL, fn, ctx);
}
