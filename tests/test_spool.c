/*
 * test_spool.c - sa_spool, the flat spool of 0.1 that replays still read: listing order
 * (time, then sinfo/squeue/sacct/sdiag), foreign and temporary files ignored and kept,
 * removal, hostile cluster names refused, capture times; the snapshots' sweep of what a
 * killed run left. The 0.1 layout is written here, by the test, as 0.1 left it.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_fsutil.h"
#include "sa_snapshot.h"
#include "sa_spool.h"

#define T0 ((int64_t)1791158399) /* 2026-10-04T23:59:59Z */
#define T1 ((int64_t)1791201600) /* 2026-10-05T12:00:00Z */
#define T2 ((int64_t)1791201660) /* 2026-10-05T12:01:00Z */

static const char squeue_json[] = "{\"jobs\": [], \"meta\": {}}\n";
static const char sacct_text[] = "JobID|State\n1234|COMPLETED\n";

/* A fresh test directory; the spool is <it>/spool (not created yet). */
static char *make_tmpdir(void)
{
    char *d = strdup("/tmp/sa-test-spool.XXXXXX");
    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

/* rm -r path (files, directories and symbolic links only). */
static void remove_tree(const char *path)
{
    struct stat st;
    DIR *dh;
    struct dirent *de;
    char sub[1024];

    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    dh = opendir(path);
    assert_non_null(dh);
    while ((de = readdir(dh))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        remove_tree(sub);
    }
    closedir(dh);
    rmdir(path);
}

/* Creates path with content (test setup, not atomic). */
static void write_file(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    assert_int_equal(fclose(f), 0);
}

/* Number of entries in dir whose name starts with prefix ("" = all but . and ..). */
static int count_names(const char *dir, const char *prefix)
{
    DIR *dh = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(dh);
    while ((de = readdir(dh))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
            n++;
    }
    closedir(dh);
    return n;
}

/* Writes a capture of 0.1's layout, <spool>/<cluster>/<name> (directories made); its path (caller frees). */
static char *put01(const char *spool, const char *cluster, const char *name, const char *data)
{
    char cdir[300], *path = NULL;
    sa_error_t err;

    snprintf(cdir, sizeof cdir, "%s/%s", spool, cluster);
    assert_true(sa_mkdir_p(cdir, 0750, &err));
    assert_true(asprintf(&path, "%s/%s", cdir, name) > 0);
    write_file(path, data);
    return path;
}

/* Listing: time order, kinds in replay order within a snapshot; foreign files ignored and kept. */
static void test_list_order(void **state)
{
    char *tmp = make_tmpdir();
    char cdir[300], p[600];
    sa_spool_entry_t *e = NULL;
    size_t n = 0;
    sa_error_t err;
    static const struct {
        int64_t at;
        const char *kind;
        const char *name;
    } expect[] = {
        {T0, "sacct", "20261004T235959Z-sacct.txt"},   {T1, "sinfo", "20261005T120000Z-sinfo.json"},
        {T1, "squeue", "20261005T120000Z-squeue.json"}, {T1, "sacct", "20261005T120000Z-sacct.txt"},
        {T1, "sdiag", "20261005T120000Z-sdiag.txt"},   {T2, "sinfo", "20261005T120100Z-sinfo.json"},
        {T2, "squeue", "20261005T120100Z-squeue.json"}, {T2, "sdiag", "20261005T120100Z-sdiag.txt"},
    };
    static const char *const foreign[] = {
        "README",
        ".20261005T110000Z-squeue.json.tmp.AbC123", /* a write that never completed */
        "20261005T120000Z-squeue.json.bak",
        "20261301T000000Z-squeue.json", /* month 13 */
        "20260230T000000Z-squeue.json", /* 30 February */
        "20261005T120060Z-squeue.json", /* second 60 */
        "20261005T12000Z-squeue.json",
        "20261005T120000Z-unknown.json",
        "20261005T120000Z-squeue.xml",
        "20261005T120000Z-squeue.json.",
        "20261005 120000Z-squeue.json",
        "+0261005T120000Z-squeue.json",
    };
    (void)state;

    /* written last first: the order is the listing's, not the directory's */
    for (size_t i = sizeof expect / sizeof expect[0]; i-- > 0;)
        free(put01(tmp, "c1", expect[i].name, strstr(expect[i].name, ".json") ? squeue_json : sacct_text));
    /* another cluster's captures are not listed */
    free(put01(tmp, "c2", "20261005T120000Z-squeue.json", "{}"));

    snprintf(cdir, sizeof cdir, "%s/c1", tmp);
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", cdir, foreign[i]);
        write_file(p, "{}");
    }
    /* a directory and a symbolic link named like captures */
    snprintf(p, sizeof p, "%s/20261005T130000Z-sinfo.json", cdir);
    assert_int_equal(mkdir(p, 0750), 0);
    snprintf(p, sizeof p, "%s/20261005T130000Z-squeue.json", cdir);
    assert_int_equal(symlink("20261005T120000Z-squeue.json", p), 0);

    assert_true(sa_spool_list(tmp, "c1", &e, &n, &err));
    assert_int_equal(n, sizeof expect / sizeof expect[0]);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", cdir, expect[i].name);
        assert_string_equal(e[i].path, p);
        assert_int_equal(e[i].at, expect[i].at);
        assert_string_equal(e[i].kind, expect[i].kind);
        assert_int_equal(e[i].json, strstr(expect[i].name, ".json") != NULL);
    }
    sa_spool_entries_free(e, n);

    /* the foreign files are all still there */
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", cdir, foreign[i]);
        assert_int_equal(access(p, F_OK), 0);
    }

    /* a cluster with nothing spooled: an empty list */
    assert_true(sa_spool_list(tmp, "c3", &e, &n, &err));
    assert_null(e);
    assert_int_equal(n, 0);
    sa_spool_entries_free(NULL, 0);
    remove_tree(tmp);
    free(tmp);
}

/* A capture that exists only as 0.1's temporary file (a crash between write and rename) is invisible. */
static void test_temporary_invisible(void **state)
{
    char *tmp = make_tmpdir();
    char cdir[300], p[600], *path;
    sa_spool_entry_t *e = NULL;
    size_t n = 0;
    sa_error_t err;
    (void)state;

    snprintf(cdir, sizeof cdir, "%s/c1", tmp);
    assert_int_equal(mkdir(cdir, 0750), 0);
    snprintf(p, sizeof p, "%s/.20261005T120000Z-squeue.json.tmp.Xy12Zq", cdir);
    write_file(p, "{\"jobs\": [");
    assert_true(sa_spool_list(tmp, "c1", &e, &n, &err));
    assert_int_equal(n, 0);
    sa_spool_entries_free(e, n);
    path = put01(tmp, "c1", "20261005T120000Z-squeue.json", squeue_json);
    assert_true(sa_spool_list(tmp, "c1", &e, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(e[0].path, path);
    assert_int_equal(e[0].at, T1);
    assert_true(e[0].json);
    sa_spool_entries_free(e, n);
    assert_int_equal(count_names(cdir, "."), 1); /* the leftover is kept */
    free(path);
    remove_tree(tmp);
    free(tmp);
}

/* Removal after a replay; removing twice is fine. */
static void test_remove(void **state)
{
    char *tmp = make_tmpdir();
    char *a, *b;
    sa_spool_entry_t *e = NULL;
    size_t n = 0;
    sa_error_t err;
    (void)state;

    a = put01(tmp, "c1", "20261005T120000Z-squeue.json", squeue_json);
    b = put01(tmp, "c1", "20261005T120000Z-sinfo.json", squeue_json);
    assert_true(sa_spool_remove(a, &err));
    assert_int_equal(access(a, F_OK), -1);
    assert_true(sa_spool_list(tmp, "c1", &e, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(e[0].path, b);
    assert_string_equal(e[0].kind, "sinfo");
    sa_spool_entries_free(e, n);
    assert_true(sa_spool_remove(a, &err)); /* already gone */

    /* a directory cannot be removed as a capture */
    char d[600];
    snprintf(d, sizeof d, "%s/c1", tmp);
    assert_false(sa_spool_remove(d, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_false(sa_spool_remove("", &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    free(a);
    free(b);
    remove_tree(tmp);
    free(tmp);
}

/* Cluster names that are not one plain path component are refused, and nothing is read outside. */
static void test_hostile_names(void **state)
{
    char *tmp = make_tmpdir();
    sa_spool_entry_t *e = (sa_spool_entry_t *)1;
    size_t n = 99;
    sa_error_t err;
    static const char *const bad[] = {"../etc", "a/b", "..", ".", "", "-rf", ".hidden", "a b",
                                      "caf\xc3\xa9", "x\ny", "/abs"};
    (void)state;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(sa_spool_list(tmp, bad[i], &e, &n, &err));
        assert_null(e);
        assert_int_equal(n, 0);
        assert_int_equal(err.domain, SA_ERR_USAGE);
        assert_non_null(strstr(err.message, "cannot name a spool directory"));
        e = (sa_spool_entry_t *)1;
    }
    assert_false(sa_spool_check_names(tmp, "../etc", &err));
    assert_string_equal(err.message, "cluster name \"../etc\" cannot name a spool directory: use 1 to 128 "
                                     "letters, digits, '.', '_' or '-', not starting with '.' or '-'");
    assert_false(sa_spool_check_names(tmp, "x\ny", &err));
    assert_non_null(strstr(err.message, "\"x?y\""));
    assert_false(sa_spool_check_names(tmp, NULL, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_false(sa_spool_check_names("", "c1", &err));
    assert_string_equal(err.message, "no spool directory given");
    /* good names with dots, dashes and underscores */
    assert_true(sa_spool_check_names(tmp, "my-cluster_2.eu", &err));
    assert_int_equal(count_names(tmp, ""), 0);
    remove_tree(tmp);
    free(tmp);
}

/* Capture times: 1970..9999 to the second, written and read back strictly. */
static void test_capture_times(void **state)
{
    char ts[32];
    int64_t at;
    (void)state;

    assert_true(sa_spool_format_at(0, ts, sizeof ts));
    assert_string_equal(ts, "19700101T000000Z");
    assert_true(sa_spool_format_at(253402300799, ts, sizeof ts));
    assert_string_equal(ts, "99991231T235959Z");
    assert_true(sa_spool_parse_at(ts, &at));
    assert_int_equal(at, 253402300799);
    assert_false(sa_spool_format_at(-1, ts, sizeof ts));
    assert_false(sa_spool_format_at(253402300800, ts, sizeof ts));
    assert_true(sa_spool_format_at(T0, ts, sizeof ts));
    assert_string_equal(ts, "20261004T235959Z");
}

/* The cluster's directory is a file: a clear I/O error. */
static void test_not_a_directory(void **state)
{
    char *tmp = make_tmpdir();
    char cdir[300], want[700];
    sa_spool_entry_t *e = NULL;
    size_t n = 0;
    sa_error_t err;
    (void)state;

    snprintf(cdir, sizeof cdir, "%s/c1", tmp);
    write_file(cdir, "not a directory");
    assert_false(sa_spool_list(tmp, "c1", &e, &n, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_int_equal(err.code, ENOTDIR);
    snprintf(want, sizeof want, "cannot read directory %s: %s", cdir, strerror(ENOTDIR));
    assert_string_equal(err.message, want);
    remove_tree(tmp);
    free(tmp);
}

/*
 * What a killed run left half written (".new-*" directories, in the cluster's folder and
 * its rejected/ folder) goes; snapshots, other names, links and files stay (issue 22).
 */
static void test_sweep_leftovers(void **state)
{
    char *tmp = make_tmpdir();
    char spool[300], p[700], outside[400];
    static const char *const gone[] = {"c1/.new-20261005T120000Z-AbC123", "c1/rejected/.new-20261005T120000Z-x1y2z3"};
    static const char *const kept[] = {"c1/20261005T120000Z", "c1/.new-file", "c1/.keep", "c1/rejected/20261005T120000Z",
                                       "c2/.new-20261005T120000Z-q1w2e3"};
    sa_snapshot_txn_t *t;
    sa_error_t err;
    size_t removed = 99;
    struct stat st;
    (void)state;

    snprintf(spool, sizeof spool, "%s/spool", tmp);
    /* nothing spooled yet: nothing to do */
    assert_true(sa_snapshot_sweep(spool, "c1", &removed, &err));
    assert_int_equal(removed, 0);
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", spool, kept[i]);
        if (strstr(kept[i], "file") || strstr(kept[i], "keep")) {
            write_file(p, "x");
        } else {
            assert_true(sa_mkdir_p(p, 0750, &err));
        }
    }
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        snprintf(p, sizeof p, "%s/%s/sub", spool, gone[i]);
        assert_true(sa_mkdir_p(p, 0750, &err));
        snprintf(p, sizeof p, "%s/%s/squeue.part", spool, gone[i]);
        write_file(p, squeue_json);
    }
    /* a link named like a leftover is not followed, and stays */
    snprintf(outside, sizeof outside, "%s/outside", tmp);
    assert_int_equal(mkdir(outside, 0750), 0);
    snprintf(p, sizeof p, "%s/outside/precious", tmp);
    write_file(p, "precious");
    snprintf(p, sizeof p, "%s/c1/.new-20261005T120000Z-link00", spool);
    assert_int_equal(symlink(outside, p), 0);
    /* a snapshot being written for another cluster is not touched */
    assert_non_null(t = sa_snapshot_begin(spool, "c3", T1, &err));

    assert_true(sa_snapshot_sweep(spool, "c1", &removed, &err));
    assert_int_equal(removed, 2);
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", spool, gone[i]);
        assert_int_not_equal(lstat(p, &st), 0);
    }
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", spool, kept[i]);
        assert_int_equal(lstat(p, &st), 0);
    }
    snprintf(p, sizeof p, "%s/c1/.new-20261005T120000Z-link00", spool);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    snprintf(p, sizeof p, "%s/outside/precious", tmp);
    assert_int_equal(access(p, F_OK), 0);
    /* the other cluster's snapshot in progress commits as if nothing happened */
    assert_true(sa_snapshot_commit(t, NULL, &err));
    snprintf(p, sizeof p, "%s/c3/20261005T120000Z", spool);
    assert_int_equal(stat(p, &st), 0);
    /* a bad cluster name is refused */
    assert_false(sa_snapshot_sweep(spool, "../c1", &removed, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    remove_tree(tmp);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_order),
        cmocka_unit_test(test_temporary_invisible),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_capture_times),
        cmocka_unit_test(test_not_a_directory),
        cmocka_unit_test(test_sweep_leftovers),
    };
    return tu_run_group_tests("spool", tests, NULL, NULL);
}
