/*
 * test_config.c - sa_config (the option table, the configuration file, durations,
 * the sources of the MongoDB URI and their precedence, redaction, the permission
 * warning). sa_log is test_log's.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_config.h"
#include "sa_log.h"
#include "sa_promq.h"

/* A secret that must never show up in a message. */
#define SECRET "s3cr3t-Pa55"

/* A temporary directory for one test. */
typedef struct {
    char dir[64];
} tmpdir_t;

static void tmpdir_make(tmpdir_t *d)
{
    snprintf(d->dir, sizeof d->dir, "/tmp/sa-test-config.XXXXXX");
    assert_non_null(mkdtemp(d->dir));
}

/* Removes the directory and the files in it (and one level of subdirectories). */
static void remove_tree(const char *dir)
{
    char p[512];
    DIR *dh = opendir(dir);
    struct dirent *de;
    struct stat st;

    assert_non_null(dh);
    while ((de = readdir(dh))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            assert_int_equal(unlink(p), 0);
    }
    closedir(dh);
    assert_int_equal(rmdir(dir), 0);
}

/* Writes text to dir/name with mode; the path goes to a static buffer (one per slot 0..3). */
static const char *write_file(const tmpdir_t *d, const char *name, const char *text, size_t len, mode_t mode)
{
    static char paths[4][256];
    static int slot;
    char *path = paths[slot++ % 4];
    int fd;

    snprintf(path, 256, "%s/%s", d->dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(fchmod(fd, mode), 0);
    assert_int_equal(close(fd), 0);
    return path;
}

static const char *write_text(const tmpdir_t *d, const char *name, const char *text, mode_t mode)
{
    return write_file(d, name, text, strlen(text), mode);
}

/* ---- option table ---- */

static void test_table(void **state)
{
    static const char *const keys[] = {
        "cluster",        "mongo-uri",       "db",           "sqlite",        "spool-dir",     "archive-dir",
        "lock-dir",       "since",           "sacct-overlap", "timeout",      "max-output",    "max-gap",
        "squeue-command", "sinfo-command",   "sacct-command", "sdiag-command", "log-level",    "backfill-window",
        "mongo-uri-file", "job-cache",     "cache-keep",    "spool-max",     "tz",
        "prometheus-url", "prometheus-exporter", "prometheus-budget", "prometheus-timeout", "prometheus-step",
        "prometheus-since",
    };
    size_t n = 0;
    (void)state;

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const sa_option_t *o = sa_option_find(keys[i]);
        assert_non_null(o);
        assert_string_equal(o->name, keys[i]);
        assert_non_null(o->help);
        /* a default must itself be a valid value */
        if (o->def)
            assert_true(sa_option_parse_value(o, o->def, NULL, NULL));
    }
    for (const sa_option_t *o = sa_ingest_options; o->name; o++)
        n++;
    assert_int_equal(n, sa_ingest_noptions);
    assert_int_equal(n, sizeof keys / sizeof keys[0]);
    assert_null(sa_option_find("mongo_uri"));
    assert_null(sa_option_find("--cluster"));
    assert_int_equal(sa_option_find("timeout")->type, SA_OPT_DURATION);
    assert_int_equal(sa_option_find("max-output")->type, SA_OPT_SIZE);
    assert_string_equal(sa_option_find("db")->def, "slurm");
}

static void test_suggest(void **state)
{
    (void)state;
    assert_string_equal(sa_option_suggest("mongo_uri"), "mongo-uri");
    assert_string_equal(sa_option_suggest("--cluster"), "cluster");
    assert_string_equal(sa_option_suggest("Timeout"), "timeout");
    assert_string_equal(sa_option_suggest("spooldir"), "spool-dir");
    assert_string_equal(sa_option_suggest("sacct_overlap"), "sacct-overlap");
    assert_string_equal(sa_option_suggest("mongo-url"), "mongo-uri");
    assert_string_equal(sa_option_suggest("backfill"), "backfill-window");
    assert_null(sa_option_suggest("xyz"));
    assert_null(sa_option_suggest("completely-different"));
    assert_null(sa_option_suggest(""));
}

/* ---- value parsers ---- */

static void test_durations(void **state)
{
    static const struct {
        const char *text;
        int64_t seconds;
    } good[] = {
        {"90", 90},     {"90s", 90},         {"15m", 900},         {"1h", 3600},
        {"2d", 172800}, {"0", 0},            {"007s", 7},          {"9223372036854775807", INT64_MAX},
        {"5w", 3024000},
        {"106751991167300d", INT64_C(106751991167300) * 86400},
    };
    static const char *const bad[] = {
        "",   "s",    "-5",  "+5",  " 5", "5 ", "5 m", "1.5h", "5mm", "5y", "5M", "5S", "0x10",
        "1e3", "9223372036854775808", "106751991167301d", "9223372036854775807s0", "h1",
    };
    sa_error_t error;
    int64_t v;
    (void)state;

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        v = -1;
        assert_true(sa_parse_duration(good[i].text, &v, &error));
        assert_int_equal(v, good[i].seconds);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        sa_error_clear(&error);
        assert_false(sa_parse_duration(bad[i], &v, &error));
        assert_int_equal(v, 42);
        assert_int_equal(error.domain, SA_ERR_USAGE);
    }
    assert_false(sa_parse_duration("5y", &v, &error));
    assert_string_equal(error.message, "invalid duration '5y' (use 90, 90s, 15m, 1h, 2d or 1w)");
    assert_false(sa_parse_duration(NULL, &v, &error));
}

static void test_sizes_bools(void **state)
{
    sa_error_t error;
    int64_t v;
    bool b;
    (void)state;

    assert_true(sa_parse_size("1048576", &v, &error));
    assert_int_equal(v, 1048576);
    assert_true(sa_parse_size("512k", &v, &error));
    assert_int_equal(v, 512 * 1024);
    assert_true(sa_parse_size("256M", &v, &error));
    assert_int_equal(v, INT64_C(256) << 20);
    assert_true(sa_parse_size("2g", &v, &error));
    assert_int_equal(v, INT64_C(2) << 30);
    assert_false(sa_parse_size("2GB", &v, &error));
    assert_string_equal(error.message, "invalid size '2GB' (use bytes, or 512k, 256M, 2G)");
    assert_false(sa_parse_size("-1", &v, &error));
    assert_false(sa_parse_size("99999999999T", &v, &error));

    assert_true(sa_parse_bool("Yes", &b, &error));
    assert_true(b);
    assert_true(sa_parse_bool("off", &b, &error));
    assert_false(b);
    assert_true(sa_parse_bool("1", &b, &error));
    assert_true(b);
    assert_false(sa_parse_bool("maybe", &b, &error));
    assert_string_equal(error.message, "invalid boolean 'maybe' (use yes or no)");

    /* through the table */
    assert_true(sa_option_parse_value(sa_option_find("timeout"), "2m", &v, &error));
    assert_int_equal(v, 120);
    assert_false(sa_option_parse_value(sa_option_find("timeout"), "2 min", &v, &error));
    assert_string_equal(error.message, "timeout: invalid duration '2 min' (use 90, 90s, 15m, 1h, 2d or 1w)");
    assert_false(sa_option_parse_value(sa_option_find("log-level"), "verbose", NULL, &error));
    assert_string_equal(error.message, "log-level: unknown level 'verbose' (use error, warning, info or debug)");
    assert_true(sa_option_parse_value(sa_option_find("log-level"), "WARN", NULL, &error));
    assert_false(sa_option_parse_value(sa_option_find("cluster"), "../etc", NULL, &error));
    assert_true(strstr(error.message, "cluster: invalid name '../etc'") == error.message);
    assert_true(sa_option_parse_value(sa_option_find("cluster"), "narval-2.x_y", NULL, &error));
    assert_false(sa_option_parse_value(sa_option_find("db"), "", NULL, &error));
    assert_string_equal(error.message, "db: empty value");
    /* a string with a control character is refused without echoing it */
    assert_false(sa_option_parse_value(sa_option_find("mongo-uri"), "mongodb://u:" SECRET "@h\n", NULL, &error));
    assert_string_equal(error.message, "mongo-uri: the value contains a control character");
}

/* ---- configuration files ---- */

static void test_load(void **state)
{
    static const char text[] = "\xEF\xBB\xBF# slurm-ingest configuration\n"
                               "\n"
                               "cluster = narval\n"
                               "   lock-dir=/srv/lock  \n"
                               "\t# an indented comment\n"
                               "timeout = 90s\r\n"
                               "max-output = 64M\n"
                               "archive-dir = /srv/slurm archive/#1\n" /* '#' inside a value, spaces kept */
                               "db = slurm2\n"
                               "sacct-command = /opt/slurm/bin/sacct\n"
                               "log-level = debug"; /* no final newline */
    sa_config_t cfg;
    sa_error_t error;
    const char *path;
    char origin[300];
    tmpdir_t d;
    (void)state;

    tmpdir_make(&d);
    path = write_text(&d, "narval.conf", text, 0600);
    sa_config_init(&cfg);
    assert_true(sa_config_load(path, &cfg, &error));
    assert_string_equal(cfg.path, path);
    assert_false(cfg.mongo_uri_exposed);
    assert_int_equal(cfg.n, 8);
    assert_string_equal(sa_config_get(&cfg, "cluster"), "narval");
    assert_string_equal(sa_config_get(&cfg, "lock-dir"), "/srv/lock");
    assert_string_equal(sa_config_get(&cfg, "db"), "slurm2");
    snprintf(origin, sizeof origin, "%s:9", path);
    assert_string_equal(sa_config_origin(&cfg, "db"), origin);
    assert_string_equal(sa_config_get(&cfg, "timeout"), "90s");
    assert_string_equal(sa_config_get(&cfg, "archive-dir"), "/srv/slurm archive/#1");
    assert_string_equal(sa_config_get(&cfg, "log-level"), "debug");
    assert_null(sa_config_get(&cfg, "sqlite"));
    assert_null(sa_config_get(&cfg, "no-such-key"));

    /* numbers: set values, table defaults, caller defaults */
    assert_int_equal(sa_config_get_num(&cfg, "timeout", -1), 90);
    assert_int_equal(sa_config_get_num(&cfg, "max-output", -1), INT64_C(64) << 20);
    assert_int_equal(sa_config_get_num(&cfg, "sacct-overlap", -1), 3600);
    assert_int_equal(sa_config_get_num(&cfg, "backfill-window", -1), 86400);
    assert_int_equal(sa_config_get_num(&cfg, "max-gap", -1), 900);
    assert_int_equal(sa_config_get_num(&cfg, "cluster", -1), -1);
    assert_int_equal(sa_config_get_num(&cfg, "nope", -7), -7);
    assert_string_equal(sa_config_get_or_default(&cfg, "squeue-command"), "squeue");
    assert_string_equal(sa_config_get_or_default(&cfg, "sacct-command"), "/opt/slurm/bin/sacct");
    assert_null(sa_config_get_or_default(&cfg, "sqlite"));

    /* the command line comes after the file and wins */
    assert_true(sa_config_set(&cfg, "timeout", "5m", "command line", &error));
    assert_int_equal(sa_config_get_num(&cfg, "timeout", -1), 300);
    assert_string_equal(sa_config_origin(&cfg, "timeout"), "command line");
    assert_false(sa_config_set(&cfg, "timeout", "soon", "command line", &error));
    assert_string_equal(error.message, "timeout: invalid duration 'soon' (use 90, 90s, 15m, 1h, 2d or 1w)");
    /* tz: a zone of the zone database (UTC by default) */
    assert_string_equal(sa_config_get_or_default(&cfg, "tz"), "UTC");
    assert_false(sa_config_set(&cfg, "tz", "Mars/Olympus_Mons", "command line", &error));
    assert_non_null(strstr(error.message, "not in the zone database"));
    assert_false(sa_config_set(&cfg, "tz", "../../etc/passwd", "command line", &error));
    assert_false(sa_config_set(&cfg, "time-out", "5m", NULL, &error));
    assert_string_equal(error.message, "unknown option 'time-out' (did you mean 'timeout'?)");
    assert_string_equal(sa_config_get(&cfg, "timeout"), "5m");

    sa_config_clear(&cfg);
    assert_int_equal(cfg.n, 0);
    assert_null(cfg.path);
    sa_config_clear(NULL);
    remove_tree(d.dir);
}

/* Loads text (len bytes, 0 = strlen) as a file into a config holding cluster=keep and expects failure with message. */
static void expect_load_error(const tmpdir_t *d, const char *text, size_t len, const char *expected_suffix)
{
    sa_config_t cfg;
    sa_error_t error;
    const char *path = write_file(d, "bad.conf", text, len ? len : strlen(text), 0600);
    char expected[512];

    sa_config_init(&cfg);
    assert_true(sa_config_set(&cfg, "cluster", "keep", NULL, &error));
    sa_error_clear(&error);
    assert_false(sa_config_load(path, &cfg, &error));
    snprintf(expected, sizeof expected, "%s:%s", path, expected_suffix);
    assert_string_equal(error.message, expected);
    assert_int_equal(error.domain, SA_ERR_USAGE);
    assert_null(strstr(error.message, SECRET));
    /* the store is as it was: nothing from the bad file */
    assert_int_equal(cfg.n, 1);
    assert_string_equal(sa_config_get(&cfg, "cluster"), "keep");
    assert_null(cfg.path);
    sa_config_clear(&cfg);
}

static void test_load_errors(void **state)
{
    static const char unknown[] = "# a.conf\n"
                                  "cluster = a\n"
                                  "\n"
                                  "db = slurm\n"
                                  "timeout = 60\n"
                                  "# next: a typo\n"
                                  "mongo_uri = mongodb://u:" SECRET "@db1/\n";
    static const char nul[] = "cluster = a\ndb = sl\0urm\n";
    sa_config_t cfg;
    sa_error_t error;
    char expected[300];
    tmpdir_t d;
    (void)state;

    tmpdir_make(&d);
    expect_load_error(&d, unknown, 0, "7: unknown option 'mongo_uri' (did you mean 'mongo-uri'?)");
    expect_load_error(&d, "cluster = a\nfrobnicate = 3\n", 0, "2: unknown option 'frobnicate'");
    expect_load_error(&d, "cluster = a\ntimeout = 1.5h\n", 0,
                      "2: timeout: invalid duration '1.5h' (use 90, 90s, 15m, 1h, 2d or 1w)");
    /* a key twice: refused, naming both lines (the last value silently won) */
    snprintf(expected, sizeof expected, "4: timeout given twice (first at %s/bad.conf:2): keep one", d.dir);
    expect_load_error(&d, "cluster = a\ntimeout = 60\n# later\ntimeout = 90\n", 0, expected);
    expect_load_error(&d, "db\n", 0, "1: expected 'key = value', got 'db'");
    /* a pasted URI line is not echoed */
    expect_load_error(&d, "mongodb://u:" SECRET "@db1/\n", 0, "1: expected 'key = value'");
    expect_load_error(&d, "mongodb://u:" SECRET "@db1/?authSource=admin\n", 0,
                      "1: unknown option (a URI? write 'mongo-uri = URI')");
    /* what the file says is shown as one line of valid UTF-8: invalid bytes become '?', valid ones stay */
    expect_load_error(&d, "cluster = a\nbogus\xff\xfe = 1\n", 0, "2: unknown option 'bogus?" "?'");
    expect_load_error(&d, "cluster = a\nspool-max = 1\xe9\n", 0,
                      "2: spool-max: invalid size '1?' (use bytes, or 512k, 256M, 2G)");
    expect_load_error(&d, "cluster = a\ncaf\xc3\xa9 = 1\n", 0, "2: unknown option 'caf\xc3\xa9'");
    expect_load_error(&d, "db =\n", 0, "1: db: empty value");
    expect_load_error(&d, " = slurm\n", 0, "1: missing option name before '='");
    expect_load_error(&d, nul, sizeof nul - 1, "2: the line contains a NUL byte");
    expect_load_error(&d, "cluster = a/b\n", 0,
                      "1: cluster: invalid name 'a/b' (letters, digits, '.', '_' and '-', not starting with '.' or "
                      "'-', at most 128)");

    /* a missing file and a directory: I/O errors with errno */
    sa_config_init(&cfg);
    snprintf(expected, sizeof expected, "%s/none.conf", d.dir);
    assert_false(sa_config_load(expected, &cfg, &error));
    assert_int_equal(error.domain, SA_ERR_IO);
    assert_int_equal(error.code, ENOENT);
    snprintf(expected, sizeof expected, "%s/none.conf: No such file or directory", d.dir);
    assert_string_equal(error.message, expected);
    assert_false(sa_config_load(d.dir, &cfg, &error));
    snprintf(expected, sizeof expected, "%s: not a regular file", d.dir);
    assert_string_equal(error.message, expected);
    assert_int_equal(cfg.n, 0);
    sa_config_clear(&cfg);
    remove_tree(d.dir);
}

static void test_permissions(void **state)
{
    static const char with_uri[] = "cluster = a\nmongo-uri = mongodb://ingest:" SECRET "@db1:27017/?authSource=admin\n";
    sa_config_t cfg;
    sa_error_t error;
    tmpdir_t d;
    (void)state;

    tmpdir_make(&d);
    /* 0600 with a URI: fine */
    sa_config_init(&cfg);
    assert_true(sa_config_load(write_text(&d, "a.conf", with_uri, 0600), &cfg, &error));
    assert_false(cfg.mongo_uri_exposed);
    sa_config_clear(&cfg);
    /* group-readable with a URI: flagged */
    assert_true(sa_config_load(write_text(&d, "a.conf", with_uri, 0640), &cfg, &error));
    assert_true(cfg.mongo_uri_exposed);
    sa_config_clear(&cfg);
    /* world-readable with a URI: flagged */
    assert_true(sa_config_load(write_text(&d, "a.conf", with_uri, 0644), &cfg, &error));
    assert_true(cfg.mongo_uri_exposed);
    sa_config_clear(&cfg);
    /* world-readable without a URI: nothing secret in it */
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\nmongo-uri-file = /etc/x\n", 0644), &cfg,
                               &error));
    assert_false(cfg.mongo_uri_exposed);
    /* ... even if the URI was set before from elsewhere */
    assert_true(sa_config_set(&cfg, "mongo-uri", "mongodb://h/", "command line", &error));
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\n", 0644), &cfg, &error));
    assert_false(cfg.mongo_uri_exposed);
    sa_config_clear(&cfg);
    /* a prometheus-url with user:password@ is a secret in a readable file too; one without is not */
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\nprometheus-url = https://m:" SECRET
                                                        "@prom.example.org:9090/\n", 0644), &cfg, &error));
    assert_true(cfg.prometheus_url_exposed);
    assert_false(cfg.mongo_uri_exposed);
    sa_config_clear(&cfg);
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\nprometheus-url = https://m:" SECRET
                                                        "@prom.example.org:9090/\n", 0600), &cfg, &error));
    assert_false(cfg.prometheus_url_exposed);
    sa_config_clear(&cfg);
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\nprometheus-url = http://prom:9090/a\n", 0644),
                               &cfg, &error));
    assert_false(cfg.prometheus_url_exposed);
    sa_config_clear(&cfg);
    /* a password holding a raw '/' (not percent-encoded): user information all the same */
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\nprometheus-url = http://m:x/" SECRET
                                                        "@prom.example.org:9090/\n", 0644), &cfg, &error));
    assert_true(cfg.prometheus_url_exposed);
    sa_config_clear(&cfg);
    /* writable by every user: refused (anyone could name other commands or directories), cfg untouched */
    assert_false(sa_config_load(write_text(&d, "a.conf", "cluster = a\n", 0666), &cfg, &error));
    assert_int_equal(error.domain, SA_ERR_USAGE);
    assert_non_null(strstr(error.message, "/a.conf: writable by every user (mode 0666): chmod o-w it"));
    assert_int_equal(cfg.n, 0);
    /* group-writable is the admin's choice (the package installs 0640 root:slurm-ingest) */
    assert_true(sa_config_load(write_text(&d, "a.conf", "cluster = a\n", 0660), &cfg, &error));
    sa_config_clear(&cfg);
    remove_tree(d.dir);
}

/* ---- MongoDB URI sources ---- */

/* Resolves and returns the URI (caller frees), failing the test on error. */
static char *resolve(const sa_config_t *cfg)
{
    sa_error_t error;
    char *uri = (char *)"x";

    sa_error_clear(&error);
    if (!sa_config_resolve_mongo_uri(cfg, &uri, &error))
        fail_msg("resolve: %s", error.message);
    assert_non_null(uri);
    return uri;
}

static void test_uri_precedence(void **state)
{
    sa_config_t cfg;
    sa_error_t error;
    char creds[128], *uri;
    const char *file;
    tmpdir_t d;
    (void)state;

    tmpdir_make(&d);
    snprintf(creds, sizeof creds, "%s/creds", d.dir);
    assert_int_equal(mkdir(creds, 0700), 0);
    write_text(&d, "creds/mongo-uri", "mongodb://cred:" SECRET "@credhost/\n", 0400);
    file = write_text(&d, "uri", "  mongodb+srv://file:" SECRET "@filehost/?tls=true  \n\n", 0600);

    unsetenv(SA_MONGO_URI_ENV);
    unsetenv("CREDENTIALS_DIRECTORY");
    sa_config_init(&cfg);

    /* 5. nothing: the default */
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb://127.0.0.1:27017");
    free(uri);
    /* 4. the mongo-uri key */
    assert_true(sa_config_set(&cfg, "mongo-uri", "mongodb://key@keyhost/", NULL, &error));
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb://key@keyhost/");
    free(uri);
    /* a credentials directory without mongo-uri in it: still the key */
    setenv("CREDENTIALS_DIRECTORY", d.dir, 1);
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb://key@keyhost/");
    free(uri);
    /* 3. the systemd credential beats the key */
    setenv("CREDENTIALS_DIRECTORY", creds, 1);
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb://cred:" SECRET "@credhost/");
    free(uri);
    /* 2. mongo-uri-file beats the credential (surrounding white space dropped) */
    assert_true(sa_config_set(&cfg, "mongo-uri-file", file, NULL, &error));
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb+srv://file:" SECRET "@filehost/?tls=true");
    free(uri);
    /* 1. the environment beats everything; an empty one does not count */
    setenv(SA_MONGO_URI_ENV, "", 1);
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb+srv://file:" SECRET "@filehost/?tls=true");
    free(uri);
    setenv(SA_MONGO_URI_ENV, "mongodb://env@envhost:27018/", 1);
    uri = resolve(&cfg);
    assert_string_equal(uri, "mongodb://env@envhost:27018/");
    free(uri);

    unsetenv(SA_MONGO_URI_ENV);
    unsetenv("CREDENTIALS_DIRECTORY");
    sa_config_clear(&cfg);
    remove_tree(d.dir);
}

/* Expects resolve to fail with a message equal to expected, never holding the secret. */
static void expect_resolve_error(const sa_config_t *cfg, const char *expected)
{
    sa_error_t error;
    char *uri = (char *)"x";

    assert_false(sa_config_resolve_mongo_uri(cfg, &uri, &error));
    assert_null(uri);
    assert_string_equal(error.message, expected);
    assert_null(strstr(error.message, SECRET));
}

static void test_uri_errors(void **state)
{
    sa_config_t cfg;
    sa_error_t error;
    char path[256], expected[512], *uri, *out;
    const char *file;
    tu_capture_t cap;
    tmpdir_t d;
    (void)state;

    tmpdir_make(&d);
    unsetenv(SA_MONGO_URI_ENV);
    unsetenv("CREDENTIALS_DIRECTORY");
    sa_config_init(&cfg);

    /* a named file that does not exist: an error, never a fall-through to the key */
    snprintf(path, sizeof path, "%s/missing", d.dir);
    assert_true(sa_config_set(&cfg, "mongo-uri", "mongodb://key/", NULL, &error));
    assert_true(sa_config_set(&cfg, "mongo-uri-file", path, NULL, &error));
    snprintf(expected, sizeof expected, "mongo-uri-file %s: No such file or directory", path);
    expect_resolve_error(&cfg, expected);

    /* two lines */
    file = write_text(&d, "two", "mongodb://a:" SECRET "@h/\nmongodb://b@h/\n", 0600);
    assert_true(sa_config_set(&cfg, "mongo-uri-file", file, NULL, &error));
    snprintf(expected, sizeof expected,
             "mongo-uri-file %s: the MongoDB URI contains a control character (or more than one line)", file);
    expect_resolve_error(&cfg, expected);

    /* empty */
    file = write_text(&d, "empty", " \n", 0600);
    assert_true(sa_config_set(&cfg, "mongo-uri-file", file, NULL, &error));
    snprintf(expected, sizeof expected, "mongo-uri-file %s: empty MongoDB URI", file);
    expect_resolve_error(&cfg, expected);

    /* not a MongoDB URI (a password pasted alone, say) */
    file = write_text(&d, "notauri", SECRET "\n", 0600);
    assert_true(sa_config_set(&cfg, "mongo-uri-file", file, NULL, &error));
    snprintf(expected, sizeof expected,
             "mongo-uri-file %s: the MongoDB URI does not start with mongodb:// or mongodb+srv://", file);
    expect_resolve_error(&cfg, expected);

    /* a group-readable URI file works, with a warning that does not show the URI */
    file = write_text(&d, "open", "mongodb://u:" SECRET "@h/\n", 0640);
    assert_true(sa_config_set(&cfg, "mongo-uri-file", file, NULL, &error));
    sa_log_set_cluster(NULL);
    tu_stderr_capture(&cap);
    uri = resolve(&cfg);
    out = tu_stderr_end(&cap);
    assert_string_equal(uri, "mongodb://u:" SECRET "@h/");
    free(uri);
    snprintf(expected, sizeof expected,
             "slurm-ingest: warning: mongo-uri-file %s is readable by its group: it holds a password; chmod 600 it\n",
             file);
    assert_string_equal(out, expected);
    free(out);

    /* an unreadable credential (a directory in its place) is an error too */
    sa_config_clear(&cfg);
    snprintf(path, sizeof path, "%s/mongo-uri", d.dir);
    assert_int_equal(mkdir(path, 0700), 0);
    setenv("CREDENTIALS_DIRECTORY", d.dir, 1);
    snprintf(expected, sizeof expected, "systemd credential %s: not a regular file", path);
    expect_resolve_error(&cfg, expected);
    unsetenv("CREDENTIALS_DIRECTORY");

    /* a bad environment value names the variable */
    setenv(SA_MONGO_URI_ENV, "http://u:" SECRET "@h/", 1);
    expect_resolve_error(&cfg, "environment variable SLURM_INGEST_MONGO_URI: the MongoDB URI does not start with "
                               "mongodb:// or mongodb+srv://");
    unsetenv(SA_MONGO_URI_ENV);

    /* a bad key names its origin */
    file = write_text(&d, "k.conf", "mongo-uri = mongo://u:" SECRET "@h\n", 0600);
    assert_true(sa_config_load(file, &cfg, &error));
    snprintf(expected, sizeof expected,
             "%s:1: mongo-uri: the MongoDB URI does not start with mongodb:// or mongodb+srv://", file);
    expect_resolve_error(&cfg, expected);

    sa_config_clear(&cfg);
    remove_tree(d.dir);
}

static void test_redact(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"mongodb://127.0.0.1:27017", "mongodb://127.0.0.1:27017"},
        {"mongodb://user:pa55@db1:27017,db2:27017/slurm?replicaSet=rs0",
         "mongodb://user:***@db1:27017,db2:27017/slurm?replicaSet=rs0"},
        {"mongodb+srv://ingest:x%40y@cluster0.example.org/?retryWrites=true",
         "mongodb+srv://ingest:***@cluster0.example.org/?retryWrites=true"},
        /* a raw '@' and '/' in the password: hidden whole */
        {"mongodb://u:p@ss/w?rd@db1/", "mongodb://u:***@db1/"},
        /* no password (X.509 or a bare user) */
        {"mongodb://CN=client@db1/?authMechanism=MONGODB-X509", "mongodb://CN=client@db1/?authMechanism=MONGODB-X509"},
        /* empty password */
        {"mongodb://u:@db1/", "mongodb://u:@db1/"},
        /* secrets in query options */
        {"mongodb://db1/?tls=true&tlsCertificateKeyFilePassword=hunter2&appname=x",
         "mongodb://db1/?tls=true&tlsCertificateKeyFilePassword=***&appname=x"},
        {"mongodb://u:p@db1/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:abc",
         "mongodb://u:***@db1/?authMechanism=MONGODB-AWS&authMechanismProperties=***"},
        /* an '@' in the query must not let a query secret escape */
        {"mongodb://db1/?appname=a@b&tlsCertificateKeyFilePassword=hunter2",
         "mongodb://db1/?appname=a@b&tlsCertificateKeyFilePassword=***"},
        {"not a uri with " SECRET, "***"},
        {"", "***"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = sa_redact_uri(cases[i].in);
        assert_non_null(r);
        assert_string_equal(r, cases[i].out);
        free(r);
    }
    assert_null(sa_redact_uri(NULL));
}

/*
 * The Prometheus URL as messages name it (sa_promq_redact): the user information hidden up
 * to the last '@', so that a password holding a raw '@', '/' or '?' (which curl refuses,
 * naming the URL in its error) is hidden whole; an '@' later only hides more.
 */
static void promq_case(const char *in, const char *want)
{
    char *r = sa_promq_redact(in);
    assert_non_null(r);
    assert_string_equal(r, want);
    free(r);
}

static void test_promq_redact(void **state)
{
    (void)state;
    promq_case("http://prom:9090", "http://prom:9090");
    promq_case("http://prom:9090/api?x=1", "http://prom:9090/api?x=1");
    promq_case("https://m:" SECRET "@prom.example.org:9090/", "https://***@prom.example.org:9090/");
    promq_case("http://m:x@" SECRET "@prom:9090/", "http://***@prom:9090/");
    promq_case("http://m:x/" SECRET "@prom:9090/", "http://***@prom:9090/");
    promq_case("http://m:x?" SECRET "@prom:9090/", "http://***@prom:9090/");
    promq_case("m:" SECRET "@prom:9090", "***@prom:9090");
    assert_null(sa_promq_redact(NULL));
}

/* The URL asked and named: a base URL ending in '/' gives one slash before the path (job --svg said "1//api"). */
static void test_promq_url(void **state)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char url[128], want[160];
    const char *form[] = {"query", "up", NULL};
    static const char *const tails[] = {"", "/", "//"};
    json_t *data = NULL;
    sa_error_t err;
    (void)state;

    /* a port nobody listens on: refused at once */
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        sa_promq_t q = {url, 5, 0, 0};
        snprintf(url, sizeof url, "http://m:" SECRET "@127.0.0.1:%d%s", ntohs(sa.sin_port), tails[i]);
        assert_false(sa_promq_post(&q, "/api/v1/query_range", form, &data, &err));
        assert_null(data);
        snprintf(want, sizeof want, "Prometheus http://***@127.0.0.1:%d/api/v1/query_range: ", ntohs(sa.sin_port));
        if (strncmp(err.message, want, strlen(want)) != 0)
            fail_msg("base URL %s: the message is\n%s\nnot\n%s...", url, err.message, want);
    }
}

int main(void)
{
    const struct CMUnitTest config_tests[] = {
        cmocka_unit_test(test_table),          cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_durations),      cmocka_unit_test(test_sizes_bools),
        cmocka_unit_test(test_load),           cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_permissions),    cmocka_unit_test(test_uri_precedence),
        cmocka_unit_test(test_uri_errors),     cmocka_unit_test(test_redact),
        cmocka_unit_test(test_promq_redact),     cmocka_unit_test(test_promq_url),
    };

    return tu_run_group_tests("config", config_tests, NULL, NULL);
}
