/*
 * tu_archive.c - sandbox, private server and archive comparison for the "nothing lost"
 * tests (see tu_archive.h).
 */
#define _GNU_SOURCE
#include "tu_archive.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mongoc/mongoc.h>
#include <sqlite3.h>

#include "testutil.h"

/* ---- the sandbox ----------------------------------------------------------------------------- */

void tu_box_init(tu_box_t *b, const char *name, const char *uri, const char *db)
{
    static const char *const cmds[] = {"sinfo", "squeue", "sacct", "sdiag"};
    static const char *const vars[] = {"TU_SINFO", "TU_SQUEUE", "TU_SACCT", "TU_SDIAG"};
    char path[400], body[1024];

    memset(b, 0, sizeof *b);
    snprintf(b->dir, sizeof b->dir, "/tmp/sa-%s-XXXXXX", name);
    if (!mkdtemp(b->dir))
        abort();
    chmod(b->dir, 0755); /* the sandbox itself; slurm-ingest makes and checks its own directories */
    snprintf(b->db, sizeof b->db, "%s", db);
    snprintf(b->uri, sizeof b->uri, "%s", uri ? uri : "");
    /* SA_TEST_INGEST_BIN runs the cases against another build (an older one, to see a case fail) */
    b->bin = SA_INGEST_BIN;
    if (getenv("SA_TEST_INGEST_BIN") && *getenv("SA_TEST_INGEST_BIN"))
        b->bin = getenv("SA_TEST_INGEST_BIN");
    b->cluster = "demo";
    snprintf(path, sizeof path, "%s/bin", b->dir);
    mkdir(path, 0755);
    for (int i = 0; i < 4; i++) {
        const char *fallback = i == 3   ? "echo 'sdiag: unrecognized option --json' >&2; exit 1"
                               : i == 2 ? "printf 'JobID\\037JobIDRaw\\037State\\n'"
                                        : "echo \"no $0 output given\" >&2; exit 1";
        snprintf(body, sizeof body,
                 "printf '%%s\\n' \"$*\" >> '%s/%s.argv'\nenv >> '%s/%s.env'\n"
                 "if [ -n \"$%s\" ]; then exec cat \"$%s\"; fi\n%s",
                 b->dir, cmds[i], b->dir, cmds[i], vars[i], vars[i], fallback);
        snprintf(path, sizeof path, "%s/bin/%s", b->dir, cmds[i]);
        tu_write_script(path, body);
    }
}

void tu_box_destroy(tu_box_t *b)
{
    tu_rm_rf(b->dir);
}

const char *tu_box_path(const tu_box_t *b, const char *rel)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", b->dir, rel);
    return path;
}

/* A formatted string kept in store[] (freed by the caller). */
static char *keep(char **store, size_t *nstore, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static char *keep(char **store, size_t *nstore, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    va_end(ap);
    store[(*nstore)++] = s;
    return s;
}

/* The argv and environment of a run (strings owned by store[], freed by the caller). */
static void box_argv(const tu_box_t *b, const char *const args[], const char *const env[], char **argv,
                     char **envv, char **store, size_t *nstore)
{
    static const char *const cmds[] = {"sinfo", "squeue", "sacct", "sdiag"};
    int argc = 0, envc = 0;

    argv[argc++] = (char *)b->bin;
    argv[argc++] = keep(store, nstore, "--cluster=%s", b->cluster);
    argv[argc++] = keep(store, nstore, "--db=%s", b->db);
    argv[argc++] = keep(store, nstore, "--lock-dir=%s/lock", b->dir);
    argv[argc++] = keep(store, nstore, "--spool-dir=%s/spool", b->dir);
    argv[argc++] = keep(store, nstore, "--sqlite=%s/ts.db", b->dir);
    for (int i = 0; i < 4; i++)
        argv[argc++] = keep(store, nstore, "--%s-command=%s/bin/%s", cmds[i], b->dir, cmds[i]);
    for (int i = 0; args && args[i]; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    envv[envc++] = keep(store, nstore, "PATH=%s/bin:/usr/bin:/bin", b->dir);
    if (b->uri[0])
        envv[envc++] = keep(store, nstore, "SLURM_INGEST_MONGO_URI=%s", b->uri);
    for (int i = 0; env && env[i]; i++)
        envv[envc++] = (char *)env[i];
    envv[envc] = NULL;
}

int tu_box_run_out(const tu_box_t *b, const char *const args[], const char *const env[], char **out, char **err)
{
    char *argv[96], *envv[64], *store[32], *o = NULL, *e = NULL;
    size_t nstore = 0;
    int rc;

    box_argv(b, args, env, argv, envv, store, &nstore);
    rc = tu_run(argv, envv, &o, &e);
    for (size_t i = 0; i < nstore; i++)
        free(store[i]);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return rc;
}

int tu_box_run(const tu_box_t *b, const char *const args[], const char *const env[], char **err)
{
    return tu_box_run_out(b, args, env, NULL, err);
}

/* In a forked child: the run's environment, then exec (never returns). */
static void exec_child(char **argv, char **envv)
{
    setenv("MONGOC_DISABLE_SHM", "1", 1);
    for (char **e = envv; *e; e++)
        putenv(*e);
    execv(argv[0], argv);
    _exit(127);
}

int tu_box_run_piped(const tu_box_t *b, const char *const args[], const char *const env[], const char *stdin_file,
                     char **err)
{
    char *argv[96], *envv[64], *store[32], errpath[] = "/tmp/sa-piped-err-XXXXXX";
    size_t nstore = 0;
    int p[2], efd = mkstemp(errpath), rc;
    pid_t writer, runner;

    if (efd < 0 || pipe(p) != 0)
        abort();
    box_argv(b, args, env, argv, envv, store, &nstore);
    writer = fork();
    if (writer == 0) {
        size_t len = 0;
        char *data = tu_read_file(stdin_file, &len);
        close(p[0]);
        for (size_t off = 0; off < len;) {
            ssize_t n = write(p[1], data + off, len - off < 65536 ? len - off : 65536);
            if (n <= 0)
                _exit(1);
            off += (size_t)n;
        }
        _exit(0);
    }
    runner = fork();
    if (runner == 0) {
        dup2(p[0], 0);
        close(p[0]);
        close(p[1]);
        dup2(efd, 2);
        exec_child(argv, envv);
    }
    close(p[0]);
    close(p[1]);
    close(efd);
    rc = tu_wait(runner);
    tu_wait(writer);
    for (size_t i = 0; i < nstore; i++)
        free(store[i]);
    if (err)
        *err = tu_read_file(errpath, NULL);
    unlink(errpath);
    return rc;
}

pid_t tu_box_start(const tu_box_t *b, const char *const args[], const char *const env[])
{
    char *argv[96], *envv[64], *store[32];
    size_t nstore = 0;
    pid_t pid;

    box_argv(b, args, env, argv, envv, store, &nstore);
    pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        char log[400];
        int fd;
        snprintf(log, sizeof log, "%s/bg-%ld.log", b->dir, (long)getpid());
        fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        exec_child(argv, envv);
    }
    for (size_t i = 0; i < nstore; i++)
        free(store[i]);
    return pid;
}

int tu_wait(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- a server of the test's own -------------------------------------------------------------- */

/* A loopback port nobody listens on now. */
static int free_port(void)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static bool port_open(int port)
{
    struct sockaddr_in a = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bool ok;
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* mongod on PATH, else the FerretDB tools/mongo-test-server builds (cached). */
static bool find_server(tu_server_t *s, char *why, size_t whylen)
{
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : ""), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(s->bin, sizeof s->bin, "%s/mongod", dir);
        if (access(s->bin, X_OK) == 0) {
            s->mongod = true;
            free(copy);
            return true;
        }
    }
    free(copy);
    {
        char tool[512], *out = NULL, *err = NULL, *nl;
        char *argv[] = {tool, (char *)"build", NULL};
        int rc;
        snprintf(tool, sizeof tool, "%s/../tools/mongo-test-server", SA_FIXTURES_DIR);
        rc = tu_run(argv, NULL, &out, &err);
        while ((nl = strrchr(out, '\n')) && nl[1] == '\0')
            *nl = '\0';
        nl = strrchr(out, '\n');
        snprintf(s->bin, sizeof s->bin, "%s", nl ? nl + 1 : out);
        if (rc != 0 || access(s->bin, X_OK) != 0) {
            snprintf(why, whylen, "no mongod on PATH and tools/mongo-test-server build failed (exit %d): %.200s", rc,
                     err);
            free(out);
            free(err);
            return false;
        }
        free(out);
        free(err);
    }
    return true;
}

/* Launches the server on s->port and s->datadir and waits until it accepts connections. */
static bool launch(tu_server_t *s, char *why, size_t whylen)
{
    char listen[64], dbpath[300], port[16];
    time_t deadline = time(NULL) + 60;

    snprintf(listen, sizeof listen, "--listen-addr=127.0.0.1:%d", s->port);
    snprintf(dbpath, sizeof dbpath, "--sqlite-url=file:%s/", s->datadir);
    snprintf(port, sizeof port, "%d", s->port);
    s->pid = fork();
    if (s->pid < 0)
        abort();
    if (s->pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (s->mongod)
            execl(s->bin, s->bin, "--dbpath", s->datadir, "--bind_ip", "127.0.0.1", "--port", port,
                  "--nounixsocket", (char *)NULL);
        else {
            setenv("GOGC", "400", 0); /* as tools/mongo-test-server starts FerretDB (why: there) */
            execl(s->bin, s->bin, "--handler=sqlite", dbpath, listen, "--debug-addr=-", "--state-dir=-",
                  "--telemetry=disable", "--log-level=warn", (char *)NULL);
        }
        _exit(127);
    }
    while (time(NULL) < deadline) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            snprintf(why, whylen, "%s exited at start (see %s)", s->bin, s->log);
            s->pid = 0;
            return false;
        }
        if (port_open(s->port))
            return true;
        usleep(50 * 1000);
    }
    snprintf(why, whylen, "%s did not listen on port %d within 60 s (see %s)", s->bin, s->port, s->log);
    tu_server_stop(s, SIGKILL);
    return false;
}

bool tu_server_start(tu_server_t *s, char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    if (!find_server(s, why, whylen))
        return false;
    snprintf(s->datadir, sizeof s->datadir, "/tmp/sa-server-XXXXXX");
    if (!mkdtemp(s->datadir))
        abort();
    snprintf(s->log, sizeof s->log, "%s.log", s->datadir);
    for (int attempt = 0; attempt < 3; attempt++) {
        s->port = free_port();
        snprintf(s->uri, sizeof s->uri, "mongodb://127.0.0.1:%d/?serverSelectionTimeoutMS=3000", s->port);
        if (launch(s, why, whylen))
            return true;
    }
    return false;
}

bool tu_server_restart(tu_server_t *s, char *why, size_t whylen)
{
    return launch(s, why, whylen);
}

void tu_server_stop(tu_server_t *s, int sig)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, sig);
    tu_wait(s->pid);
    s->pid = 0;
    /* the port must be free again before a restart binds it */
    for (int i = 0; i < 100 && port_open(s->port); i++)
        usleep(20 * 1000);
}

void tu_server_destroy(tu_server_t *s)
{
    tu_server_stop(s, SIGTERM);
    if (s->datadir[0])
        tu_rm_rf(s->datadir);
    if (s->log[0])
        unlink(s->log);
}

/* ---- the archive read back ------------------------------------------------------------------- */

/* Drops the run metadata named in tu_archive.h from one document. */
static void drop_metadata(json_t *doc)
{
    size_t i;
    json_t *run;
    json_object_del(doc, "_v");
    json_object_del(json_object_get(doc, "seen"), "last");
    json_object_del(json_object_get(doc, "_merge"), "at");
    json_object_del(json_object_get(json_object_get(doc, "exit"), "_key"), "at");
    json_object_del(json_object_get(json_object_get(doc, "derived_exit"), "_key"), "at");
    json_array_foreach(json_object_get(doc, "runs"), i, run) {
        json_object_del(json_object_get(run, "_key"), "at");
    }
}

json_t *tu_archive_docs(struct _mongoc_client_t *client, const char *db, const char *coll)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW("sort", "{", "_id", BCON_INT32(1), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, &filter, opts, NULL);
    const bson_t *doc;
    bson_error_t berr;
    json_t *all = json_array();

    while (mongoc_cursor_next(cur, &doc)) {
        char *text = bson_as_canonical_extended_json(doc, NULL);
        json_error_t jerr;
        json_t *j = json_loads(text, 0, &jerr);
        if (!j)
            fail_msg("%s.%s: a document is not JSON: %s", db, coll, jerr.text);
        drop_metadata(j);
        json_array_append_new(all, j);
        bson_free(text);
    }
    if (mongoc_cursor_error(cur, &berr))
        fail_msg("reading %s.%s: %s", db, coll, berr.message);
    mongoc_cursor_destroy(cur);
    bson_destroy(opts);
    mongoc_collection_destroy(c);
    return all;
}

static int doc_id_cmp(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "_id"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "_id"));
    return strcmp(x ? x : "", y ? y : "");
}

json_t *tu_archive_docs_by_id(struct _mongoc_client_t *client, const char *db, const char *coll, char **ids,
                              size_t n)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    json_t **v = calloc(n ? n : 1, sizeof *v), *all = json_array();
    size_t got = 0;

    for (size_t off = 0; off < n; off += 1000) {
        bson_t filter = BSON_INITIALIZER, in, arr;
        mongoc_cursor_t *cur;
        const bson_t *doc;
        bson_error_t berr;
        BSON_APPEND_DOCUMENT_BEGIN(&filter, "_id", &in);
        BSON_APPEND_ARRAY_BEGIN(&in, "$in", &arr);
        for (size_t i = off; i < n && i < off + 1000; i++) {
            char key[16];
            const char *k;
            bson_uint32_to_string((uint32_t)(i - off), &k, key, sizeof key);
            BSON_APPEND_UTF8(&arr, k, ids[i]);
        }
        bson_append_array_end(&in, &arr);
        bson_append_document_end(&filter, &in);
        cur = mongoc_collection_find_with_opts(c, &filter, NULL, NULL);
        while (mongoc_cursor_next(cur, &doc)) {
            char *text = bson_as_canonical_extended_json(doc, NULL);
            json_t *j = json_loads(text, 0, NULL);
            bson_free(text);
            if (!j || got == n)
                fail_msg("%s.%s: a document is not JSON, or more documents than ids", db, coll);
            drop_metadata(j);
            v[got++] = j;
        }
        if (mongoc_cursor_error(cur, &berr))
            fail_msg("reading %s.%s: %s", db, coll, berr.message);
        mongoc_cursor_destroy(cur);
        bson_destroy(&filter);
    }
    qsort(v, got, sizeof *v, doc_id_cmp);
    for (size_t i = 0; i < got; i++)
        json_array_append_new(all, v[i]);
    free(v);
    mongoc_collection_destroy(c);
    return all;
}

long long tu_sum(struct _mongoc_client_t *client, const char *db, const char *coll, const char *dotted)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    bson_t filter = BSON_INITIALIZER;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, &filter, NULL, NULL);
    const bson_t *doc;
    long long sum = 0;

    while (mongoc_cursor_next(cur, &doc)) {
        bson_iter_t it, found;
        if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, dotted, &found) &&
            BSON_ITER_HOLDS_NUMBER(&found))
            sum += bson_iter_as_int64(&found);
    }
    mongoc_cursor_destroy(cur);
    mongoc_collection_destroy(c);
    return sum;
}

long long tu_count(struct _mongoc_client_t *client, const char *db, const char *coll, const char *filter_json)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    bson_error_t berr;
    bson_t *filter = filter_json ? bson_new_from_json((const uint8_t *)filter_json, -1, &berr) : bson_new();
    long long n;

    if (!filter)
        fail_msg("bad filter %s: %s", filter_json, berr.message);
    n = mongoc_collection_count_documents(c, filter, NULL, NULL, NULL, &berr);
    if (n < 0)
        fail_msg("counting %s.%s: %s", db, coll, berr.message);
    bson_destroy(filter);
    mongoc_collection_destroy(c);
    return n;
}

json_t *tu_find_one(struct _mongoc_client_t *client, const char *db, const char *coll, const bson_t *filter,
                    const bson_t *opts)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db, coll);
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(c, filter, opts, NULL);
    const bson_t *doc;
    json_t *j = NULL;

    if (mongoc_cursor_next(cur, &doc)) {
        char *text = bson_as_relaxed_extended_json(doc, NULL);
        j = json_loads(text, 0, NULL);
        bson_free(text);
    }
    mongoc_cursor_destroy(cur);
    mongoc_collection_destroy(c);
    return j;
}

json_t *tu_find_id(struct _mongoc_client_t *client, const char *db, const char *coll, const char *id)
{
    bson_t *filter = BCON_NEW("_id", BCON_UTF8(id));
    json_t *j = tu_find_one(client, db, coll, filter, NULL);
    bson_destroy(filter);
    return j;
}

static const char *doc_id(const json_t *d)
{
    const char *s = json_string_value(json_object_get(d, "_id"));
    return s ? s : "";
}

/* Classifies one difference between documents of the same _id. */
static void classify(const json_t *want, const json_t *got, tu_cmp_t *c)
{
    static const char *const lists[] = {"history", "runs"};
    const char *key, *which = "?";
    json_t *v;
    bool fewer = false, more = false;

    for (size_t i = 0; i < 2; i++) {
        size_t a = json_array_size(json_object_get(want, lists[i]));
        size_t b = json_array_size(json_object_get(got, lists[i]));
        fewer = fewer || b < a;
        more = more || b > a;
    }
    json_object_foreach((json_t *)want, key, v) {
        if (!json_equal(v, json_object_get(got, key))) {
            which = key;
            break;
        }
    }
    if (strcmp(which, "?") == 0) {
        json_object_foreach((json_t *)got, key, v) {
            if (!json_object_get(want, key)) {
                which = key;
                break;
            }
        }
    }
    if (fewer)
        c->lost++;
    else if (more)
        c->duplicated++;
    else
        c->differ++;
    if (!c->first[0])
        snprintf(c->first, sizeof c->first, "%s: field %s differs (%s)", doc_id(want), which,
                 fewer ? "entries lost" : more ? "entries duplicated" : "value");
}

bool tu_archive_compare(const json_t *want, const json_t *got, tu_cmp_t *c)
{
    size_t i = 0, j = 0, nw = json_array_size(want), ng = json_array_size(got);
    size_t before = c->lost + c->duplicated + c->differ;

    c->compared += nw;
    while (i < nw || j < ng) {
        const json_t *a = i < nw ? json_array_get(want, i) : NULL, *b = j < ng ? json_array_get(got, j) : NULL;
        int cmp = !a ? 1 : !b ? -1 : strcmp(doc_id(a), doc_id(b));
        if (cmp < 0) {
            c->lost++;
            if (!c->first[0])
                snprintf(c->first, sizeof c->first, "%s: missing", doc_id(a));
            i++;
        } else if (cmp > 0) {
            c->duplicated++;
            if (!c->first[0])
                snprintf(c->first, sizeof c->first, "%s: not in the reference", doc_id(b));
            j++;
        } else {
            if (!json_equal(a, b))
                classify(a, b, c);
            i++;
            j++;
        }
    }
    return c->lost + c->duplicated + c->differ == before;
}

void tu_json_to_file(const json_t *v, const char *path)
{
    json_dump_file(v, path, JSON_INDENT(1) | JSON_SORT_KEYS);
}

/* Appends a formatted piece to a growing string. */
static void append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char *piece = NULL;
    int n;
    va_start(ap, fmt);
    n = vasprintf(&piece, fmt, ap);
    va_end(ap);
    if (n < 0 || !(*buf = realloc(*buf, *len + (size_t)n + 1)))
        abort();
    memcpy(*buf + *len, piece, (size_t)n + 1);
    *len += (size_t)n;
    free(piece);
}

char *tu_tsdb_dump(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *tables = NULL;
    char *out = NULL;
    size_t len = 0;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    append(&out, &len, "%s", "");
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                               "ORDER BY name", -1, &tables, NULL) != SQLITE_OK)
        fail_msg("%s: %s", path, sqlite3_errmsg(db));
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY rowid", name);
        sqlite3_stmt *rows = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK) {
            /* a WITHOUT ROWID table: its primary key orders it */
            sqlite3_free(sql);
            sql = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
            if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK)
                fail_msg("%s: %s: %s", path, name, sqlite3_errmsg(db));
        }
        append(&out, &len, "[%s]\n", name);
        while (sqlite3_step(rows) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(rows); i++) {
                const unsigned char *v = sqlite3_column_text(rows, i);
                append(&out, &len, "%s%s", i ? "|" : "", v ? (const char *)v : "NULL");
            }
            append(&out, &len, "\n");
        }
        sqlite3_finalize(rows);
        sqlite3_free(sql);
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    return out;
}

/* The job id of a "jobs" entry (a number, or {"number": N} in newer data_parsers). */
static long long entry_job_id(const json_t *job)
{
    const json_t *id = json_object_get(job, "job_id");
    if (json_is_object(id))
        id = json_object_get(id, "number");
    return json_is_integer(id) ? (long long)json_integer_value(id) : -1;
}

void tu_copy_without_job(const char *src, const char *dst, long long job_id)
{
    size_t len = 0;
    char *data = tu_read_file(src, &len), *p = data + strspn(data, " \t\r\n");

    if (*p == '{') {
        json_error_t jerr;
        json_t *doc = json_loadb(data, len, 0, &jerr), *jobs, *keep = json_array(), *job;
        size_t i;
        if (!doc)
            fail_msg("%s: %s", src, jerr.text);
        jobs = json_object_get(doc, "jobs");
        json_array_foreach(jobs, i, job) {
            if (entry_job_id(job) != job_id)
                json_array_append(keep, job);
        }
        json_object_set_new(doc, "jobs", keep);
        if (json_dump_file(doc, dst, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0)
            fail_msg("cannot write %s", dst);
        json_decref(doc);
    } else {
        FILE *out = fopen(dst, "wb");
        char id[32], *line = data;
        int idlen = snprintf(id, sizeof id, "%lld", job_id);
        if (!out)
            fail_msg("cannot write %s", dst);
        while (line < data + len) {
            char *nl = memchr(line, '\n', (size_t)(data + len - line)), *end = nl ? nl + 1 : data + len;
            const char *f2 = line + strcspn(line, "|\x1f\n");
            bool drop = (*f2 == '|' || *f2 == '\x1f') && strncmp(f2 + 1, id, (size_t)idlen) == 0 &&
                        (f2[1 + idlen] == '.' || f2[1 + idlen] == '|' || f2[1 + idlen] == '\x1f');
            if (!drop)
                fwrite(line, 1, (size_t)(end - line), out);
            line = end;
        }
        fclose(out);
    }
    free(data);
}

void tu_ingest_prom_export(const char *db, const char *dir, const char *sdiag)
{
    char sinfo[300], squeue[300], sd[300];
    const char *f;

    /* sdiag may be tu_fixture's buffer, which the next call reuses */
    if (sdiag)
        snprintf(sd, sizeof sd, "%s", sdiag);
    f = tu_fixture("prom-export");
    snprintf(sinfo, sizeof sinfo, "%s/sinfo-N.json", f);
    snprintf(squeue, sizeof squeue, "%s/squeue.json", f);
    if (!sdiag)
        snprintf(sd, sizeof sd, "%s/sdiag.json", f);
    {
        const char *extra[] = {"--sinfo", sinfo, "--squeue", squeue, "--sdiag", sd,
                               "--at", "2026-10-15T12:00:00Z", NULL};
        assert_int_equal(tu_run_ingest(SA_INGEST_BIN, getenv("SLURM_TEST_MONGO_URI"), db, dir, "promx", extra, NULL),
                         0);
    }
}

char *tu_tool_start(const char *prog, const char *tool, const char *const *args)
{
    char *argv[16], *out = NULL, *err = NULL;
    size_t n = 0;
    int rc;

    argv[n++] = (char *)tool;
    argv[n++] = "start";
    for (; *args && n < 15; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    rc = tu_run(argv, NULL, &out, &err);
    if (rc == 77) {
        printf("SKIP %s: %s", prog, err && *err ? err : "the test server was skipped\n");
        exit(77);
    }
    if (rc != 0)
        fail_msg("%s start: exit %d: %s", tool, rc, err ? err : "");
    free(err);
    return out;
}

void tu_tool_stop(const char *tool, const char *dir)
{
    char *argv[] = {(char *)tool, "stop", (char *)dir, NULL};
    char *out = NULL, *err = NULL;
    tu_run(argv, NULL, &out, &err);
    free(out);
    free(err);
}
