/*
 * testutil.c - helpers shared by the cmocka test programs (see testutil.h).
 */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "testutil.h"

#include <ctype.h>
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

#include "sa_mongo.h"

/* ---- running the cases ---------------------------------------------------------------------- */

static size_t skips;         /* skip() calls: each ends its case */
static size_t cases_ran;     /* cases of the groups run so far that did not skip */
static bool any_failed;      /* a case or a group's fixture failed */

void tu_skip_(const char *file, int line)
{
    skips++;
    _skip(file, line);
}

int tu_run_group_(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction group_setup,
                  CMFixtureFunction group_teardown)
{
    size_t skips_before = skips, cases = 0;
    int failed;

    for (size_t i = 0; i < n; i++) /* the cases cmocka counts */
        cases += tests[i].name && (tests[i].test_func || tests[i].setup_func || tests[i].teardown_func);
    failed = _cmocka_run_group_tests(name, tests, n, group_setup, group_teardown);
    if (failed != 0)
        any_failed = true;
    cases_ran += cases - (skips - skips_before < cases ? skips - skips_before : cases);
    if (any_failed)
        return 1;
    return cases_ran == 0 ? 77 : 0;
}

/* ---- the samples ------------------------------------------------------------------------------ */

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

const char *tu_json_str(const json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return v ? json_string_value(v) : NULL;
}

const char *tu_state(const sa_state_t *st)
{
    static char buf[512];
    char *s = sa_state_format(st);
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    free(s);
    return buf;
}

struct _mongoc_client_t *tu_mongo_client(const char *test_name, char **db_name)
{
    static char unreachable[600]; /* why the server promised did not answer, once it did not */
    const char *uri = getenv("SLURM_TEST_MONGO_URI");
    mongoc_client_t *client;
    bson_error_t berr;
    bson_t ping = BSON_INITIALIZER;
    bool ok;
    char name[64];

    if (!uri || !*uri) {
        printf("SKIP %s: SLURM_TEST_MONGO_URI is not set (tools/test sets it; or export "
               "SLURM_TEST_MONGO_URI=$(tools/mongo-test-server start | tail -n 1))\n", test_name);
        return NULL;
    }
    if (unreachable[0])
        fail_msg("%s", unreachable);
    sa_mongo_init(); /* quiet: no "endSessions" warning from FerretDB */
    client = mongoc_client_new(uri);
    if (!client)
        fail_msg("cannot parse SLURM_TEST_MONGO_URI");
    mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
    BSON_APPEND_INT32(&ping, "ping", 1);
    ok = mongoc_client_command_simple(client, "admin", &ping, NULL, NULL, &berr);
    bson_destroy(&ping);
    if (!ok) {
        /* no URI in the message: it may hold a password */
        snprintf(unreachable, sizeof unreachable,
                 "FAIL %s: the test MongoDB server of SLURM_TEST_MONGO_URI does not answer ping: %s", test_name,
                 berr.message);
        mongoc_client_destroy(client);
        fail_msg("%s", unreachable);
    }
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

/* ---- files ----------------------------------------------------------------------------------- */

void tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        fprintf(stderr, "tu_write_file: cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
}

void tu_write_text(const char *path, const char *text)
{
    tu_write_file(path, text, strlen(text));
}

void tu_write_script(const char *path, const char *body)
{
    char *text = NULL;
    if (asprintf(&text, "#!/bin/sh\n%s\n", body) < 0)
        abort();
    tu_write_file(path, text, strlen(text));
    free(text);
    chmod(path, 0755);
}

void tu_rm_rf(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;

    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    chmod(path, 0700); /* a test may have made it read-only */
    if ((d = opendir(path)) != NULL) {
        while ((de = readdir(d)) != NULL) {
            char *sub = NULL;
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            if (asprintf(&sub, "%s/%s", path, de->d_name) >= 0)
                tu_rm_rf(sub);
            free(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

/* Walks dir: calls fn on every regular file; stops when fn returns true (path in *where). */
static int walk(const char *dir, bool (*fn)(const char *path, const struct stat *st, const void *arg),
                const void *arg, char *where, size_t wherelen)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int hits = 0;

    if (!d)
        return 0;
    while ((de = readdir(d)) != NULL) {
        char *p = NULL;
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || asprintf(&p, "%s/%s", dir, de->d_name) < 0)
            continue;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            hits += walk(p, fn, arg, hits ? NULL : where, wherelen);
        } else if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && fn(p, &st, arg)) {
            if (hits++ == 0 && where)
                snprintf(where, wherelen, "%s", p);
        }
        free(p);
    }
    closedir(d);
    return hits;
}

static bool file_holds(const char *path, const struct stat *st, const void *needle)
{
    size_t len = 0;
    char *data;
    bool found;
    (void)st;
    data = tu_read_file(path, &len);
    found = memmem(data, len, needle, strlen(needle)) != NULL;
    free(data);
    return found;
}

int tu_grep_tree(const char *dir, const char *needle, char *where, size_t wherelen)
{
    return walk(dir, file_holds, needle, where, wherelen);
}

static bool others_read(const char *path, const struct stat *st, const void *arg)
{
    (void)path, (void)arg;
    return (st->st_mode & S_IROTH) != 0;
}

int tu_world_readable(const char *dir, char *where, size_t wherelen)
{
    return walk(dir, others_read, NULL, where, wherelen);
}

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ---- stderr ---------------------------------------------------------------------------------- */

void tu_stderr_capture(tu_capture_t *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/sa-test-stderr.XXXXXX");
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->saved >= 0);
    assert_int_equal(dup2(c->fd, STDERR_FILENO), STDERR_FILENO);
}

char *tu_stderr_end(tu_capture_t *c)
{
    char *text;

    fflush(stderr);
    assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
    close(c->saved);
    close(c->fd);
    text = tu_read_file(c->path, NULL);
    unlink(c->path);
    return text;
}

/* ---- documents ------------------------------------------------------------------------------- */

FILE *tu_mem_open(tu_mem_t *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
    return m->f;
}

char *tu_mem_close(tu_mem_t *m)
{
    fclose(m->f);
    return m->buf;
}

/* The length of an entity at s ("&amp;", "&#39;", "&#x2014;"), 0 when s starts none. */
static size_t entity_len(const char *s)
{
    size_t n = 1;
    if (s[n] == '#') {
        n++;
        if (s[n] == 'x')
            n++;
        while (isxdigit((unsigned char)s[n]))
            n++;
    } else {
        while (isalpha((unsigned char)s[n]))
            n++;
    }
    return n > 1 && s[n] == ';' ? n + 1 : 0;
}

bool tu_xml_well_formed(const char *s, char *why, size_t whylen)
{
    char stack[64][64];
    size_t depth = 0, roots = 0;
    const char *p = s;

    if (strncmp(p, "<?xml", 5) == 0 && (p = strstr(p, "?>")))
        p += 2;
    for (; p && *p; p++) {
        if (*p == '&' && !entity_len(p)) {
            snprintf(why, whylen, "a bare '&' at byte %zu", (size_t)(p - s));
            return false;
        }
        if (*p != '<')
            continue;
        {
            const char *end = strchr(p, '>');
            bool closing = p[1] == '/', empty;
            size_t n;
            char name[64];
            n = strcspn(p + 1 + closing, " \t\n/>");
            if (!n || !isalpha((unsigned char)p[1 + closing])) {
                snprintf(why, whylen, "a '<' in text at byte %zu", (size_t)(p - s));
                return false;
            }
            if (!end) {
                snprintf(why, whylen, "a tag not closed at byte %zu", (size_t)(p - s));
                return false;
            }
            for (const char *q = p + 1; q < end; q++) {
                if (*q == '<') {
                    snprintf(why, whylen, "a '<' inside a tag at byte %zu", (size_t)(q - s));
                    return false;
                }
            }
            empty = end[-1] == '/';
            snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p + 1 + closing);
            if (closing) {
                if (!depth || strcmp(stack[depth - 1], name) != 0) {
                    snprintf(why, whylen, "</%s> at byte %zu closes %s", name, (size_t)(p - s),
                             depth ? stack[depth - 1] : "nothing");
                    return false;
                }
                depth--;
            } else if (!empty) {
                if (depth == 0)
                    roots++;
                if (depth == sizeof stack / sizeof stack[0]) {
                    snprintf(why, whylen, "nested too deep at byte %zu", (size_t)(p - s));
                    return false;
                }
                snprintf(stack[depth++], sizeof stack[0], "%s", name);
            } else if (depth == 0) {
                roots++;
            }
            p = end;
        }
    }
    if (depth) {
        snprintf(why, whylen, "<%s> never closed", stack[depth - 1]);
        return false;
    }
    if (roots != 1) {
        snprintf(why, whylen, "%zu root elements", roots);
        return false;
    }
    return true;
}
