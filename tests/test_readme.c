/*
 * test_readme.c - every MongoDB query the README shows runs against the test server, on
 * the demo month ingested by the real slurm-ingest, and gives what the same question
 * computed in C from the documents gives.
 *
 * The README's "Queries" block is read as written: each line "db.<coll>.<method>(args)"
 * (find, findOne, aggregate, countDocuments, with .sort() and .limit()) is run through
 * libmongoc, its arguments read as JSON with ISODate("...") as a date. The n-th query
 * is checked by the n-th checker below: a query added to the README without a checker
 * (or one removed) fails this test, so the README stays true.
 *
 * Every command of the README's "Reports" block runs too, through /bin/sh as written,
 * after the quickstart's own ingest (tools/quickstart-demo) and the line it tells its
 * user to paste (report.env): no flag added. Each must exit 0, write something and
 * leave nothing out for want of a time series.
 */
#define _GNU_SOURCE /* asprintf */
#include "testutil.h"
#include "tu_rollup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_bson.h"
#include "sa_model.h"
#include "sa_slurmtext.h"

#ifndef SA_SOURCE_DIR
#error SA_SOURCE_DIR
#endif

static mongoc_client_t *client;
static char *db_name;
static json_t *all_docs; /* every job document of cluster demo, read once */
static char demo_dir[] = "/tmp/sa-readme-XXXXXX"; /* the quickstart's directory: time series, lock, report.env */
static bool demo_ingested;

/* ---- the README's queries ----------------------------------------------------------- */

typedef struct {
    char coll[64], method[32];
    json_t *args;      /* the arguments as a JSON array */
    json_t *sort;      /* .sort(...) or NULL */
    int64_t limit;     /* .limit(n) or 0 */
    char text[2048];   /* the line, for messages */
} query_t;

/* ISODate("X") -> {"$date": "X"}, so the arguments read as (extended) JSON. */
static char *dejs(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(2 * n + 1), *o = out;
    while (*s) {
        if (strncmp(s, "ISODate(", 8) == 0) {
            const char *q = strchr(s + 8, ')');
            o += sprintf(o, "{\"$date\": %.*s}", (int)(q - s - 8), s + 8);
            s = q + 1;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

/* The text between the parenthesis at *p and its match; *p moves past it. */
static char *paren_args(const char **p)
{
    const char *s = *p;
    int depth = 0;
    bool str = false;
    assert_true(*s == '(');
    for (const char *q = s; *q; q++) {
        if (str) {
            if (*q == '\\')
                q++;
            else if (*q == '"')
                str = false;
            continue;
        }
        if (*q == '"')
            str = true;
        else if (*q == '(')
            depth++;
        else if (*q == ')' && --depth == 0) {
            *p = q + 1;
            return strndup(s + 1, (size_t)(q - s - 1));
        }
    }
    fail_msg("unbalanced parentheses in a README query: %s", s);
    return NULL;
}

static json_t *json_of(const char *text)
{
    json_error_t jerr;
    char *t = dejs(text);
    json_t *v = json_loads(t, JSON_DECODE_ANY, &jerr);
    if (!v)
        fail_msg("README query arguments are not JSON (%s): %s", jerr.text, t);
    free(t);
    return v;
}

static bool parse_query(const char *line, query_t *q)
{
    const char *p = line;
    char *args, *wrapped;
    memset(q, 0, sizeof *q);
    snprintf(q->text, sizeof q->text, "%s", line);
    if (sscanf(p, "db.%63[a-z_].%31[a-zA-Z]", q->coll, q->method) != 2)
        return false;
    p = strchr(strchr(p + 3, '.') + 1, '(');
    args = paren_args(&p);
    if (asprintf(&wrapped, "[%s]", args) < 0)
        abort();
    q->args = json_of(wrapped);
    free(args);
    free(wrapped);
    while (*p == '.') {
        char name[16];
        assert_int_equal(sscanf(p, ".%15[a-z]", name), 1);
        p = strchr(p, '(');
        args = paren_args(&p);
        if (strcmp(name, "sort") == 0)
            q->sort = json_of(args);
        else if (strcmp(name, "limit") == 0)
            q->limit = atoll(args);
        else
            fail_msg("README query: .%s() is not understood by this test: %s", name, line);
        free(args);
    }
    return true;
}

/* JSON -> BSON (extended JSON: {"$date": ...} becomes a date). */
static bson_t *bson_of(const json_t *v)
{
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    bson_error_t berr;
    bson_t *b = bson_new_from_json((const uint8_t *)t, -1, &berr);
    if (!b)
        fail_msg("cannot make BSON of %s: %s", t, berr.message);
    free(t);
    return b;
}

/* Runs a query; returns its result documents as a JSON array (times as epoch seconds). */
static json_t *run_query(const query_t *q)
{
    mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, q->coll);
    mongoc_cursor_t *cur;
    const bson_t *d;
    bson_error_t berr;
    json_t *out = json_array();
    bson_t *filter = NULL, *opts = bson_new();

    if (strcmp(q->method, "aggregate") == 0) {
        bson_t *pipe;
        json_t *wrap = json_pack("{s:O}", "pipeline", json_array_get(q->args, 0));
        pipe = bson_of(wrap);
        json_decref(wrap);
        cur = mongoc_collection_aggregate(c, MONGOC_QUERY_NONE, pipe, NULL, NULL);
        bson_destroy(pipe);
    } else {
        assert_true(strcmp(q->method, "find") == 0 || strcmp(q->method, "findOne") == 0);
        filter = bson_of(json_array_get(q->args, 0));
        if (json_array_size(q->args) > 1) {
            bson_t *proj = bson_of(json_array_get(q->args, 1));
            BSON_APPEND_DOCUMENT(opts, "projection", proj);
            bson_destroy(proj);
        }
        if (q->sort) {
            bson_t *s = bson_of(q->sort);
            BSON_APPEND_DOCUMENT(opts, "sort", s);
            bson_destroy(s);
        }
        if (q->limit || strcmp(q->method, "findOne") == 0)
            BSON_APPEND_INT64(opts, "limit", q->limit ? q->limit : 1);
        cur = mongoc_collection_find_with_opts(c, filter, opts, NULL);
    }
    while (mongoc_cursor_next(cur, &d)) {
        sa_error_t err;
        json_t *j = sa_bson_to_json(d, &err);
        if (!j)
            fail_msg("%s", err.message);
        json_array_append_new(out, j);
    }
    if (mongoc_cursor_error(cur, &berr))
        fail_msg("README query failed on the test server: %s\n  %s", berr.message, q->text);
    mongoc_cursor_destroy(cur);
    mongoc_collection_destroy(c);
    if (filter)
        bson_destroy(filter);
    bson_destroy(opts);
    return out;
}

/* ---- the same questions, answered in C --------------------------------------------- */

static int64_t iso(const char *s)
{
    int64_t t;
    assert_true(sa_time_parse_text(s, &t, NULL));
    return t;
}

static const char *str(const json_t *d, const char *k)
{
    const json_t *v = json_object_get(d, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

static int64_t num(const json_t *d, const char *k)
{
    const json_t *v = json_object_get(d, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : SA_UNSET;
}

/* Per account of the RUNNING GPU jobs: what (gpus or 1) sums to. */
static void check_running_gpus(json_t *res, bool count)
{
    json_t *want = json_object(), *d;
    size_t i;
    json_array_foreach(all_docs, i, d) {
        if (strcmp(str(d, "state"), "RUNNING") != 0 || num(d, "gpus") <= 0)
            continue;
        json_t *old = json_object_get(want, str(d, "account"));
        json_object_set_new(want, str(d, "account"),
                            json_integer((old ? json_integer_value(old) : 0) + (count ? 1 : num(d, "gpus"))));
    }
    assert_int_equal(json_array_size(res), json_object_size(want));
    assert_true(json_object_size(want) > 0); /* the demo has running GPU jobs: the check means something */
    json_array_foreach(res, i, d) {
        int64_t got = num(d, count ? "jobs" : "gpus");
        json_t *w = json_object_get(want, str(d, "_id"));
        assert_non_null(w);
        if (got != json_integer_value(w))
            fail_msg("account %s: the README query gives %lld, the documents %lld", str(d, "_id"), (long long)got,
                     (long long)json_integer_value(w));
        if (i > 0)
            assert_true(strcmp(str(json_array_get(res, i - 1), "_id"), str(d, "_id")) < 0);
    }
    json_decref(want);
}

static void check_gpus(json_t *res) { check_running_gpus(res, false); }
static void check_jobs(json_t *res) { check_running_gpus(res, true); }

static void check_user_week(json_t *res)
{
    int64_t from = iso("2026-10-24T00:00:00Z"), to = iso("2026-10-31T00:00:00Z");
    size_t want = 0, i;
    json_t *d;
    json_array_foreach(all_docs, i, d) {
        want += strcmp(str(d, "user"), "alice") == 0 && num(d, "submit") >= from && num(d, "submit") < to;
    }
    assert_true(want > 0);
    assert_int_equal(json_array_size(res), want);
    json_array_foreach(res, i, d) {
        assert_string_equal(str(d, "user"), "alice");
        if (i > 0)
            assert_true(num(json_array_get(res, i - 1), "submit") >= num(d, "submit"));
    }
}

static void check_one_job(json_t *res)
{
    json_t *d = json_array_get(res, 0);
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(str(d, "_id"), "demo:100123");
    assert_true(json_array_size(json_object_get(d, "history")) >= 2);
    assert_non_null(json_object_get(d, "runs"));
    assert_non_null(json_object_get(d, "state"));
    assert_null(json_object_get(d, "user")); /* the projection holds */
}

static void check_ended_october(json_t *res)
{
    int64_t from = iso("2026-10-01T00:00:00Z"), to = iso("2026-11-01T00:00:00Z");
    size_t want = 0, i;
    json_t *d;
    json_array_foreach(all_docs, i, d) {
        want += num(d, "gpus") > 0 && num(d, "end") >= from && num(d, "end") < to && num(d, "end") != SA_UNSET;
    }
    assert_true(want > 0);
    assert_int_equal(json_array_size(res), want);
    /* what the query means: every job it finds has ended */
    json_array_foreach(res, i, d) {
        if (!sa_job_state_is_final(str(d, "state")))
            fail_msg("job %lld in state %s has an end: \"ended in October\" would count it", (long long)num(d, "job_id"),
                     str(d, "state"));
    }
}

static void check_requeued(json_t *res)
{
    size_t want = 0, i;
    json_t *d;
    json_array_foreach(all_docs, i, d) {
        want += json_array_size(json_object_get(d, "runs")) > 1;
    }
    assert_true(want > 0);
    assert_int_equal(json_array_size(res), want);
}

static void check_vanished(json_t *res)
{
    size_t want = 0, i;
    json_t *d;
    json_array_foreach(all_docs, i, d) {
        const char *s = str(d, "state");
        want += json_object_get(d, "vanished_at") &&
                (!strcmp(s, "RUNNING") || !strcmp(s, "PENDING") || !strcmp(s, "SUSPENDED"));
    }
    assert_int_equal(json_array_size(res), want);
}

static void check_runs(json_t *res)
{
    size_t i;
    json_t *d;
    assert_true(json_array_size(res) >= 1 && json_array_size(res) <= 5);
    json_array_foreach(res, i, d) {
        assert_string_equal(str(d, "cluster"), "demo");
        if (i > 0)
            assert_true(num(json_array_get(res, i - 1), "started_at") >= num(d, "started_at"));
    }
}

/* The n-th query of the README's block is checked by checkers[n]. */
static void (*const checkers[])(json_t *) = {check_gpus,     check_jobs,          check_user_week, check_one_job,
                                             check_ended_october, check_requeued, check_vanished,  check_runs};

/* ---- the test ---------------------------------------------------------------------- */

/* Removes a directory tree (rm -rf). */
static void remove_tree(const char *dir)
{
    char *argv[] = {(char *)"/bin/rm", (char *)"-rf", (char *)dir, NULL}, *out = NULL, *err = NULL;
    tu_run(argv, NULL, &out, &err);
    free(out);
    free(err);
}

/*
 * Ingests the demo month with the quickstart's own ingest (tools/quickstart-demo: the
 * built slurm-ingest, a node snapshot a day, then the month), once, into the test's
 * database and demo_dir, which then holds the time series, the demo's awards and
 * report.env (what the quickstart tells its user to paste).
 */
static void ingest_demo(void)
{
    char uri_env[1024], build[600], *err = NULL, *out = NULL, *slash;
    int rc;

    if (demo_ingested)
        return;
    assert_non_null(mkdtemp(demo_dir));
    demo_ingested = true;
    snprintf(uri_env, sizeof uri_env, "SLURM_INGEST_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    snprintf(build, sizeof build, "%s", SA_REPORT_BIN);
    slash = strrchr(build, '/');
    assert_non_null(slash);
    *slash = '\0';
    {
        char *argv[] = {(char *)SA_SOURCE_DIR "/tools/quickstart-demo", (char *)"--build", build, (char *)"--db",
                        db_name, (char *)"--dir", demo_dir, (char *)"--", (char *)"-q", NULL};
        char *env[] = {uri_env, NULL};
        rc = tu_run(argv, env, &out, &err);
    }
    if (rc != 0)
        fail_msg("tools/quickstart-demo: exit %d: %s", rc, err);
    free(out);
    free(err);
}

static void read_all_docs(void)
{
    query_t q;
    if (all_docs)
        return;
    assert_true(parse_query("db.jobs.find({\"cluster\": \"demo\"})", &q));
    all_docs = run_query(&q);
    json_decref(q.args);
    assert_true(json_array_size(all_docs) > 1000);
}

static void test_readme_queries(void **state)
{
    char *readme = tu_read_file(SA_SOURCE_DIR "/README.md", NULL), *block, *end, *line;
    size_t n = 0;
    (void)state;

    ingest_demo();
    read_all_docs();
    block = strstr(readme, "### Queries");
    assert_non_null(block);
    block = strstr(block, "```js\n");
    assert_non_null(block);
    end = strstr(block + 6, "```");
    assert_non_null(end);
    *end = '\0';
    for (line = strtok(block + 6, "\n"); line; line = strtok(NULL, "\n")) {
        query_t q;
        json_t *res;
        if (strncmp(line, "db.", 3) != 0)
            continue;
        assert_true(parse_query(line, &q));
        if (n >= sizeof checkers / sizeof checkers[0])
            fail_msg("the README has a query this test does not check: %s", line);
        res = run_query(&q);
        printf("  query %zu: %zu result(s): %.100s\n", n + 1, json_array_size(res), line);
        checkers[n](res);
        json_decref(res);
        json_decref(q.args);
        json_decref(q.sort);
        n++;
    }
    assert_int_equal(n, sizeof checkers / sizeof checkers[0]);
    free(readme);
}

/* ---- the README's slurm-report commands --------------------------------------------- */

/*
 * What a README command wrote: the file of --output, the site's index page, else
 * stdout (all in the quickstart's directory, demo_dir). Fails when it is empty; the
 * line with -o and -P must give one "account|user|gpu_hours" line per group (the
 * grouping -o names).
 */
static void check_wrote(const char *line, const char *out)
{
    const char *o = strstr(line, "--output "), *site = strstr(line, "slurm-report site ");
    char *path = NULL, *text;
    size_t len = 0;

    if (o || site) {
        const char *arg = o ? o + strlen("--output ") : site + strlen("slurm-report site ");
        int n = (int)strcspn(arg, " ");
        if (asprintf(&path, "%s/%.*s%s", demo_dir, n, arg, site ? "/index.html" : "") < 0)
            abort();
        if (access(path, R_OK) != 0)
            fail_msg("`%s` wrote no %s", line, path);
        text = tu_read_file(path, &len);
        if (!len)
            fail_msg("`%s` wrote nothing to %s", line, path);
        free(text);
        free(path);
        return;
    }
    if (!out[0])
        fail_msg("`%s` printed nothing", line);
    if (strstr(line, " -o account,user") && strstr(line, " -P")) {
        size_t rows = 0;
        for (const char *p = out; *p; p += strcspn(p, "\n") + 1) {
            const char *bar = strchr(p, '|');
            size_t n = strcspn(p, "\n");
            if (!bar || bar >= p + n || bar[1] == '|' || !memchr(bar + 1, '|', n - (size_t)(bar + 1 - p)))
                fail_msg("`%s`: a line is not account|user|gpu_hours: %.*s", line, (int)n, p);
            rows++;
            if (!p[n])
                break;
        }
        assert_true(rows >= 7); /* the demo's 7 users */
    }
}

/*
 * Every command of the README's Reports block, as written, after the quickstart's own
 * ingest and its report.env (sourced as its user pastes it: slurm-report on PATH, the
 * archive, database and time series found without a flag, the awards in the directory),
 * through /bin/sh, with nothing of this test's environment that names an archive. Each
 * must exit 0, write something, and leave nothing out for want of a time series.
 */
static void test_readme_reports(void **state)
{
    char *readme = tu_read_file(SA_SOURCE_DIR "/README.md", NULL), *block, *end, *line, *save = NULL;
    size_t n = 0;
    (void)state;

    ingest_demo();
    block = strstr(readme, "\n## Reports\n");
    assert_non_null(block);
    block = strstr(block, "```sh\n");
    assert_non_null(block);
    end = strstr(block + 6, "```");
    assert_non_null(end);
    *end = '\0';
    for (line = strtok_r(block + 6, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *cmd, *out = NULL, *err = NULL;
        int rc;
        if (strncmp(line, "slurm-report ", 13) != 0)
            fail_msg("a line of the README's Reports block this test does not run: %s", line);
        if (asprintf(&cmd, "unset SLURM_REPORT_MONGO_URI SLURM_INGEST_MONGO_URI SLURM_REPORT_DB SLURM_REPORT_SQLITE_DIR "
                           "CREDENTIALS_DIRECTORY; . '%s/report.env' && %s", demo_dir, line) < 0)
            abort();
        {
            char *argv[] = {(char *)"/bin/sh", (char *)"-c", cmd, NULL};
            rc = tu_run(argv, NULL, &out, &err);
        }
        printf("  command %zu: exit %d: %s\n", n + 1, rc, line);
        if (rc != 0)
            fail_msg("`%s` exits %d:\n%s", line, rc, err);
        if (strstr(err, "no time series"))
            fail_msg("`%s` leaves something out:\n%s", line, err);
        check_wrote(line, out);
        free(cmd);
        free(out);
        free(err);
        n++;
    }
    assert_true(n >= 9);
    free(readme);
}

/* ---- GPU-hours by account over a window: the README's aggregation and Python -------------- */

/* The text of the first ```lang block after marker in the README (caller frees). */
static char *readme_block(const char *marker, const char *lang)
{
    char *readme = tu_read_file(SA_SOURCE_DIR "/README.md", NULL), *p, *end, *out, fence[32];

    snprintf(fence, sizeof fence, "```%s\n", lang);
    p = strstr(readme, marker);
    if (!p || !(p = strstr(p, fence)) || !(end = strstr(p + strlen(fence), "```")))
        fail_msg("the README has no ```%s block after '%s'", lang, marker);
    out = strndup(p + strlen(fence), (size_t)(end - p - strlen(fence)));
    free(readme);
    return out;
}

/* What the examples must print: slurm-report usage of the demo month, "account|gpu_hours" lines. */
static char *usage_by_account(void)
{
    char uri_env[1024], dbopt[160], sq[160], *out = NULL, *err = NULL;
    char *env[] = {uri_env, NULL};
    char *argv[] = {(char *)SA_REPORT_BIN, (char *)"usage", (char *)"-M", (char *)"demo", (char *)"--month",
                    (char *)"2026-10", (char *)"-t", (char *)"hours", (char *)"--by", (char *)"account", (char *)"-P",
                    (char *)"-n", (char *)"-o", (char *)"account,gpu_hours", dbopt, sq, NULL};
    snprintf(uri_env, sizeof uri_env, "SLURM_REPORT_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    snprintf(dbopt, sizeof dbopt, "--db=%s", db_name);
    snprintf(sq, sizeof sq, "--sqlite=%s/demo.sqlite", demo_dir);
    if (tu_run(argv, env, &out, &err) != 0)
        fail_msg("slurm-report usage: %s", err);
    free(err);
    assert_true(strlen(out) > 20);
    return out;
}

/* Runs argv; its exit status, and the last line it wrote on stderr into why (when not 0). */
static int run_step(char *const argv[], char *why, size_t whysz)
{
    char *out = NULL, *err = NULL;
    int rc = tu_run(argv, NULL, &out, &err);

    if (rc != 0) {
        const char *last = err ? err + strlen(err) : "";
        while (err && last > err && (last[-1] == '\n' || last[-1] == ' '))
            last--;
        while (err && last > err && last[-1] != '\n')
            last--;
        snprintf(why, whysz, "%s exits %d: %.*s", argv[0], rc, (int)strcspn(last, "\n"), last);
    }
    free(out);
    free(err);
    return rc;
}

/*
 * A virtualenv with pymongo from PyPI, made once under the user's cache
 * ($XDG_CACHE_HOME or ~/.cache, slurm-archive/venv-pymongo); its python (caller frees),
 * or NULL with *why when it cannot be made (PyPI not reached: pip waits 20 s, retries once;
 * the install is cut at 5 minutes).
 */
static char *pymongo_venv(char *why, size_t whysz)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *parent, *dir, *py, *pip, *tail;
    int rc;

    if ((cache && *cache ? asprintf(&parent, "%s/slurm-archive", cache)
                         : asprintf(&parent, "%s/.cache/slurm-archive", home && *home ? home : "/tmp")) < 0 ||
        asprintf(&dir, "%s/venv-pymongo", parent) < 0 || asprintf(&py, "%s/bin/python", dir) < 0 ||
        asprintf(&pip, "%s/bin/pip", dir) < 0)
        abort();
    char *probe[] = {py, (char *)"-c", (char *)"import pymongo", NULL};
    char *mk[] = {(char *)"/bin/mkdir", (char *)"-p", parent, NULL};
    char *venv[] = {(char *)"/usr/bin/env", (char *)"python3", (char *)"-m", (char *)"venv", (char *)"--clear", dir,
                    NULL};
    char *install[] = {(char *)"/usr/bin/timeout", (char *)"300", pip, (char *)"install", (char *)"--quiet",
                       (char *)"--disable-pip-version-check", (char *)"--timeout", (char *)"20", (char *)"--retries",
                       (char *)"1", (char *)"pymongo", NULL};
    if (access(py, X_OK) == 0 && run_step(probe, why, whysz) == 0)
        rc = 0;
    else if ((rc = run_step(mk, why, whysz)) == 0 && (rc = run_step(venv, why, whysz)) == 0 &&
             (rc = run_step(install, why, whysz)) == 0)
        rc = run_step(probe, why, whysz);
    if (rc != 0) {
        tail = strdup(why);
        snprintf(why, whysz, "pymongo could not be installed from PyPI into %s (%s)", dir, tail ? tail : "");
        free(tail);
        free(py);
        py = NULL;
    }
    free(pip);
    free(dir);
    free(parent);
    return py;
}

/* The README's Python, run against the bundled server on the demo month: usage's figures, line for line. */
static void test_readme_python(void **state)
{
    char *code = readme_block("**GPU-hours by account over a window**", "python"), *want, *py, why[512];
    char path[] = "/tmp/sa-readme-py-XXXXXX", uri_env[1024], db_env[200], *out = NULL, *err = NULL;
    int fd, rc;
    (void)state;

    ingest_demo();
    if (!(py = pymongo_venv(why, sizeof why))) {
        printf("SKIP readme python: %s\n", why);
        free(code);
        skip();
    }
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, code, strlen(code)) == (ssize_t)strlen(code));
    close(fd);
    snprintf(uri_env, sizeof uri_env, "SLURM_REPORT_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    snprintf(db_env, sizeof db_env, "SLURM_REPORT_DB=%s", db_name);
    {
        char *argv[] = {py, path, NULL}, *env[] = {uri_env, db_env, NULL};
        rc = tu_run(argv, env, &out, &err);
    }
    unlink(path);
    if (rc != 0)
        fail_msg("the README's Python exits %d: %s", rc, err);
    want = usage_by_account();
    printf("  Python:\n%s  slurm-report usage:\n%s", out, want);
    assert_string_equal(out, want);
    free(want);
    free(out);
    free(err);
    free(py);
    free(code);
}

/* Whether the test server is FerretDB (its buildInfo says ferretdbVersion), not a mongod. */
static bool server_is_ferretdb(void)
{
    bson_t cmd = BSON_INITIALIZER, reply;
    bson_iter_t it;
    bool ferret;

    BSON_APPEND_INT32(&cmd, "buildInfo", 1);
    assert_true(mongoc_client_command_simple(client, "admin", &cmd, NULL, &reply, NULL));
    ferret = bson_iter_init_find(&it, &reply, "ferretdbVersion");
    bson_destroy(&reply);
    bson_destroy(&cmd);
    return ferret;
}

/* The README's aggregation, where the test server is a mongod: usage's figures, line for line. */
static void test_readme_aggregation(void **state)
{
    char *code, *p, *q, *want, *got = NULL;
    size_t len = 0;
    query_t qy;
    json_t *res, *d;
    FILE *m;
    size_t i;
    (void)state;

    ingest_demo();
    if (server_is_ferretdb()) {
        printf("SKIP readme aggregation: the test server is FerretDB, which has no $multiply, $subtract or $unionWith "
               "(tools/mongo-test-server uses a mongod when one is on PATH); the Python runs here instead\n");
        skip();
    }
    code = readme_block("**GPU-hours by account over a window**", "js");
    /* one statement over several lines: joined, as parse_query reads one line */
    for (p = q = code; *p; p++)
        *q++ = *p == '\n' ? ' ' : *p;
    *q = '\0';
    assert_true(parse_query(code, &qy));
    res = run_query(&qy);
    m = open_memstream(&got, &len);
    json_array_foreach(res, i, d)
        fprintf(m, "%s|%.2f\n", str(d, "_id"), json_number_value(json_object_get(d, "gpu_hours")));
    fclose(m);
    want = usage_by_account();
    printf("  aggregation:\n%s  slurm-report usage:\n%s", got, want);
    assert_string_equal(got, want);
    free(want);
    free(got);
    json_decref(res);
    json_decref(qy.args);
    free(code);
}

/* ---- the demo agrees with itself ------------------------------------------------------ */

/* slurm-report ARGS --json on the demo's database and time series; its output, parsed. */
static json_t *report_json(const char *const *args)
{
    char uri_env[1024], dbopt[160], sq[160], *out = NULL, *err = NULL, *argv[32];
    char *env[] = {uri_env, NULL};
    json_error_t jerr;
    json_t *j;
    int n = 0, rc;

    snprintf(uri_env, sizeof uri_env, "SLURM_REPORT_MONGO_URI=%s", getenv("SLURM_TEST_MONGO_URI"));
    snprintf(dbopt, sizeof dbopt, "--db=%s", db_name);
    snprintf(sq, sizeof sq, "--sqlite=%s/demo.sqlite", demo_dir);
    argv[n++] = (char *)SA_REPORT_BIN;
    for (; *args; args++)
        argv[n++] = (char *)*args;
    argv[n++] = dbopt;
    argv[n++] = sq;
    argv[n++] = (char *)"--json";
    argv[n] = NULL;
    rc = tu_run(argv, env, &out, &err);
    if (rc != 0)
        fail_msg("slurm-report %s exits %d: %s", argv[1], rc, err);
    j = json_loads(out, 0, &jerr);
    if (!j)
        fail_msg("slurm-report %s: not JSON (%s)", argv[1], jerr.text);
    free(out);
    free(err);
    return j;
}

/* slurm-ingest rollup --rebuild of the demo: its rollups derived again from its documents. */
static void rebuild_rollups(void)
{
    static const char *const args[] = {"rollup", "--rebuild", NULL};
    char *err = NULL;
    int rc = tu_run_ingest(SA_INGEST_BIN, getenv("SLURM_TEST_MONGO_URI"), db_name, demo_dir, "demo", args, &err);
    if (rc != 0)
        fail_msg("slurm-ingest rollup --rebuild exited %d: %s", rc, err ? err : "");
    free(err);
}

/* The subjects of health's gpu-capacity rows over October, ','-joined (caller frees; "" when none). */
static char *capacity_warnings(void)
{
    static const char *const args[] = {"health", "-M", "demo", "-S", "2026-10-01", "-E", "2026-11-01",
                                       "--now", "2026-11-01T00:00:00Z", "--stale", "30d", NULL};
    json_t *h = report_json(args), *row;
    char *out = NULL;
    size_t len = 0, i;
    FILE *m = open_memstream(&out, &len);

    json_array_foreach(json_object_get(h, "rows"), i, row) {
        if (strcmp(str(row, "check"), "gpu-capacity") == 0) {
            fprintf(m, "%s%s", len ? "," : "", str(row, "subject"));
            fflush(m);
            printf("  health: %s %s: %s\n", str(row, "check"), str(row, "subject"), str(row, "detail"));
        }
    }
    fclose(m);
    json_decref(h);
    return out;
}

/*
 * The quickstart's reports agree: no node is allocated more GPUs than it has (health's
 * gpu-capacity), and utilization's allocated GPU-hours are usage's (the runs' exact start
 * and end) over the time the series knows (a node snapshot a day, from 2026-10-01T12:00
 * to the last at 2026-10-31T23:55), to the hundredth; efficiency has usage figures. Then
 * the check is shown to find a node given more GPUs than it has.
 */
static void test_demo_consistent(void **state)
{
    static const char *const usage[] = {"usage", "-M", "demo", "-S", "2026-10-01T12:00", "-E", "2026-10-31T23:55",
                                        "-t", "hours", NULL};
    static const char *const util[] = {"utilization", "-M", "demo", "--month", "2026-10", NULL};
    static const char *const eff[] = {"efficiency", "-M", "demo", "--month", "2026-10", NULL};
    json_t *u, *t, *row, *e;
    double alloc_h = 0, used_h = 0;
    char *warn;
    const char *victim = NULL, *node = NULL;
    size_t i;
    (void)state;

    ingest_demo();
    read_all_docs();
    warn = capacity_warnings();
    if (warn[0])
        fail_msg("the demo gives nodes more GPUs than they have: %s", warn);
    free(warn);
    u = report_json(usage);
    json_array_foreach(json_object_get(u, "totals"), i, row)
        alloc_h += json_number_value(json_object_get(row, "gpu_hours"));
    json_decref(u);
    t = report_json(util);
    json_array_foreach(json_object_get(t, "rows"), i, row) {
        if (strcmp(str(row, "gpu_type"), "*") == 0)
            used_h += json_number_value(json_object_get(row, "gpu_alloc_hours"));
    }
    json_decref(t);
    printf("  October (the series' known time): usage %.2f GPU-hours allocated, utilization %.2f\n", alloc_h, used_h);
    assert_true(alloc_h > 10000);
    if (fabs(used_h - alloc_h) > 0.005)
        fail_msg("usage says %.2f GPU-hours, utilization %.2f allocated", alloc_h, used_h);
    e = report_json(eff);
    row = json_array_get(json_object_get(e, "totals"), 0);
    assert_non_null(row);
    /* sacct's usage columns are there: utilisation for some runs (not all), CPU and memory efficiency */
    assert_true(json_is_number(json_object_get(row, "gpu_util_percent")));
    assert_true(json_number_value(json_object_get(row, "no_data_percent")) > 0);
    assert_true(json_number_value(json_object_get(row, "no_data_percent")) < 100);
    assert_true(json_is_number(json_object_get(row, "cpu_efficiency_percent")));
    assert_true(json_is_number(json_object_get(row, "mem_efficiency_percent")));
    json_decref(e);

    /* a job whose TRES says 4000 GPUs on one node (its document changed, then the rollups rebuilt from the
       documents, as slurm-ingest would derive them): gpu-capacity names the node */
    json_array_foreach(all_docs, i, row) {
        json_t *r0 = json_array_get(json_object_get(row, "runs"), 0);
        /* a job of mid-October (ids follow submission: about 75 a day from 2026-09-29) */
        if (strcmp(str(row, "state"), "COMPLETED") == 0 && num(row, "job_id") > 101000 && num(r0, "gpus") > 0 &&
            strcmp(str(r0, "nodes"), "gpu03") == 0) {
            victim = str(row, "_id");
            node = str(r0, "nodes");
            break;
        }
    }
    assert_non_null(victim);
    {
        mongoc_collection_t *c = mongoc_client_get_collection(client, db_name, "jobs");
        bson_t *sel = BCON_NEW("_id", BCON_UTF8(victim)), *set = BCON_NEW("$set", "{", "runs.0.gpus", BCON_INT64(4000), "}");
        bson_t *back = BCON_NEW("$set", "{", "runs.0.gpus", BCON_INT64(num(json_array_get(json_object_get(row, "runs"), 0), "gpus")), "}");
        bson_error_t berr;
        assert_true(mongoc_collection_update_one(c, sel, set, NULL, NULL, &berr));
        rebuild_rollups();
        warn = capacity_warnings();
        assert_string_equal(warn, node);
        free(warn);
        /* the rollups as 0.5.0 stored them (no run's nodes): the same from the GPU jobs' documents; they verify */
        assert_true(tu_rollup_store_as_05(client, db_name, "demo") > 0);
        warn = capacity_warnings();
        assert_string_equal(warn, node);
        free(warn);
        {
            static const char *const verify[] = {"rollup", NULL};
            char *err = NULL;
            int rc = tu_run_ingest(SA_INGEST_BIN, getenv("SLURM_TEST_MONGO_URI"), db_name, demo_dir, "demo", verify,
                                   &err);
            if (rc != 0)
                fail_msg("slurm-ingest rollup on the rollups as 0.5.0 stored them exited %d: %s", rc, err ? err : "");
            free(err);
        }
        assert_true(mongoc_collection_update_one(c, sel, back, NULL, NULL, &berr));
        rebuild_rollups();
        bson_destroy(sel);
        bson_destroy(set);
        bson_destroy(back);
        mongoc_collection_destroy(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_readme_queries), cmocka_unit_test(test_readme_reports),
                                       cmocka_unit_test(test_readme_python), cmocka_unit_test(test_readme_aggregation),
                                       cmocka_unit_test(test_demo_consistent)};
    int rc;
#if defined(__SANITIZE_ADDRESS__)
    /* the README's commands as a user types them: the Release build runs them; under the sanitizers the same
     * code runs in the reports' and the ingest's own tests, and half a minute more would take the suite past its
     * 20 minutes */
    printf("SKIP readme: the README's commands run in the Release build only (AddressSanitizer: test_report, "
           "test_ingest_cli and test_rollup run their code)\n");
    return 77;
#endif
    client = tu_mongo_client("readme", &db_name);
    if (!client)
        return 77;
    rc = tu_run_group_tests("readme", tests, NULL, NULL);
    if (demo_ingested)
        remove_tree(demo_dir);
    json_decref(all_docs);
    tu_mongo_drop(client, db_name);
    mongoc_client_destroy(client);
    free(db_name);
    return rc;
}
