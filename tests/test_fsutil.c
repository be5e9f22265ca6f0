/*
 * test_fsutil.c - schema/core/sa_fsutil.c, the file-system rules of both binaries: a
 * symbolic link another user planted on a path either writes is refused, one line, exit 2
 * (issue 31, item 4: `slurm-report site DIR` with DIR nobody's link to a directory of root's
 * replaced that directory with the site).
 *
 * The links are planted by the user nobody (runuser -u nobody -- ln -s) in a directory every
 * user may write (mode 0777, not sticky, as /tmp/x made by anyone); the target is a directory
 * of root's (mode 0700) holding one file. Those cases need root (only root becomes another
 * user) and runuser: otherwise they skip, saying why. The one writer of files replaced
 * atomically (sa_atomic_open, sa_write_file_atomic) is tested for any user.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mongoc/mongoc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_fsutil.h"
#include "tu_archive.h"

#define NOBODY 65534

static struct {
    char base[64];    /* /tmp/sa-fsutil-XXXXXX, mode 0777: where nobody plants links */
    char secret[64];  /* /tmp/sa-fsutil-secret-XXXXXX, root's, 0700, holding "precious" */
    char data[64];    /* /tmp/sa-fsutil-data-XXXXXX: an archive's lock, spool and time series */
    const char *runuser;
    bool planted;            /* nobody's link base/site -> secret is there (root, runuser) */
    mongoc_client_t *client; /* NULL: the cases that run a binary on an archive skip */
    char *db;
    const char *uri;
} fx;

/* base/name, secret/name, data/name (static rotating buffers). */
static const char *at(const char *dir, const char *name)
{
    static char bufs[8][512];
    static unsigned next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

/* nobody makes the symbolic link base/name -> target; false with *why (caller frees) when that fails. */
static bool plant(const char *name, const char *target, char **why)
{
    char link[256], *out = NULL;
    char *argv[] = {(char *)fx.runuser, "-u", "nobody", "--", "ln", "-s", (char *)target, link, NULL};
    struct stat st;
    bool ok;

    snprintf(link, sizeof link, "%s/%s", fx.base, name);
    ok = tu_run(argv, NULL, &out, why) == 0 && lstat(link, &st) == 0 && st.st_uid == NOBODY;
    free(out);
    if (ok) {
        free(*why);
        *why = NULL;
    }
    return ok;
}

/* The secret directory still holds precious (its content unchanged) and nothing else. */
static void secret_untouched(void)
{
    char *text = tu_read_file(at(fx.secret, "precious"), NULL);
    assert_string_equal(text, "root's own file\n");
    free(text);
    assert_int_equal(tu_count_entries(fx.secret), 1);
}

/* Skips a case that needs nobody's links when they could not be planted (main said why). */
static void need_planted(void)
{
    if (!fx.planted)
        skip();
}

/* Fails unless err is exactly one line, want. */
static void one_line(const char *err, const char *want)
{
    if (strcmp(err, want) != 0)
        fail_msg("stderr:\n%swanted:\n%s", err, want);
}

/* ---- the rule ------------------------------------------------------------------------------- */

/* A link of nobody's is refused wherever it stands on the path; this user's links are followed. */
static void test_links_rule(void **state)
{
    sa_error_t err;
    char want[600], mine[256];
    const char *dir;
    (void)state;

    need_planted();
    /* the path itself */
    assert_false(sa_path_links_ours(at(fx.base, "site"), "site directory", &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    snprintf(want, sizeof want,
             "site directory %s/site is a symbolic link that belongs to uid 65534, not to this user (uid 0): refused",
             fx.base);
    assert_string_equal(err.message, want);
    /* a directory on the way (the link named after the path) */
    assert_false(sa_path_links_ours(at(fx.base, "site/out.csv"), NULL, &err));
    snprintf(want, sizeof want,
             "%s/site/out.csv: %s/site is a symbolic link that belongs to uid 65534, not to this user (uid 0): refused",
             fx.base, fx.base);
    assert_string_equal(err.message, want);
    /* through a link of ours to nobody's (relative): the walk goes on where a link points */
    snprintf(mine, sizeof mine, "%s/mine", fx.base);
    assert_int_equal(symlink("site", mine), 0);
    assert_false(sa_path_links_ours(at(fx.base, "mine/x"), NULL, &err));
    assert_non_null(strstr(err.message, "/site is a symbolic link that belongs to uid 65534"));
    unlink(mine);
    /* this user's link to the same directory, and paths that are not there yet */
    assert_int_equal(symlink(fx.secret, mine), 0);
    assert_true(sa_path_links_ours(mine, "site directory", &err));
    assert_true(sa_path_links_ours(at(fx.base, "mine/new/deeper"), NULL, &err));
    assert_true(sa_path_links_ours(at(fx.base, "none/x"), NULL, &err));
    assert_true(sa_path_links_ours("/", NULL, &err));
    unlink(mine);
    /* a loop of our own links: too many */
    assert_int_equal(symlink("loop2", at(fx.base, "loop1")), 0);
    assert_int_equal(symlink("loop1", at(fx.base, "loop2")), 0);
    assert_false(sa_path_links_ours(at(fx.base, "loop1/x"), NULL, &err));
    assert_int_equal(err.code, ELOOP);
    unlink(at(fx.base, "loop1"));
    unlink(at(fx.base, "loop2"));
    /* SQLite's temporary directory: SQLITE_TMPDIR nobody's link */
    setenv("SQLITE_TMPDIR", at(fx.base, "site"), 1);
    assert_false(sa_sqlite_tmpdir_check(&dir, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    snprintf(want, sizeof want,
             "SQLITE_TMPDIR %s/site is a symbolic link that belongs to uid 65534, not to this user (uid 0): refused",
             fx.base);
    assert_string_equal(err.message, want);
    unsetenv("SQLITE_TMPDIR");
}

/* slurm-ingest's directories by the same rule: nobody's link to a private directory of root's was accepted. */
static void test_private_dir(void **state)
{
    sa_error_t err;
    char want[600], mine[256];
    (void)state;

    need_planted();
    assert_false(sa_dir_is_private(at(fx.base, "site"), "spool-dir", &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    snprintf(want, sizeof want,
             "spool-dir %s/site is a symbolic link that belongs to uid 65534, not to this user (uid 0): refused",
             fx.base);
    assert_string_equal(err.message, want);
    snprintf(mine, sizeof mine, "%s/mine", fx.base);
    assert_int_equal(symlink(fx.secret, mine), 0);
    assert_true(sa_dir_is_private(mine, "spool-dir", &err));
    unlink(mine);
}

/*
 * The directory SQLite puts a temporary database in: SQLite's own order, and the rule. Runs
 * first: SQLite reads SQLITE_TMPDIR and TMPDIR once, and main set SQLITE_TMPDIR to secret
 * before any SQLite call; the temporary database's file (unlinked at once) is then an open
 * descriptor of this process in that directory.
 */
static void test_sqlite_tmpdir(void **state)
{
    sqlite3 *db = NULL;
    const char *dir = NULL;
    char want[600], fdpath[300], target[PATH_MAX];
    bool found = false;
    sa_error_t err;
    DIR *d;
    struct dirent *de;
    (void)state;

    assert_true(sa_sqlite_tmpdir_check(&dir, &err));
    assert_string_equal(dir, fx.secret);
    assert_int_equal(sqlite3_open_v2("", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    /* a page cache of 2 pages: 200 rows of 1 KiB go to the file */
    assert_int_equal(sqlite3_exec(db,
                                  "PRAGMA cache_size = 2; CREATE TABLE t (x BLOB);"
                                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
                                  "INSERT INTO t SELECT zeroblob(1024) FROM n;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_non_null(d = opendir("/proc/self/fd"));
    while (!found && (de = readdir(d)) != NULL) {
        ssize_t n;
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%s", de->d_name);
        if ((n = readlink(fdpath, target, sizeof target - 1)) > 0) {
            target[n] = '\0';
            found = strncmp(target, fx.secret, strlen(fx.secret)) == 0 && target[strlen(fx.secret)] == '/';
        }
    }
    closedir(d);
    sqlite3_close(db);
    if (!found)
        fail_msg("SQLite's temporary database is not in %s, the directory sa_sqlite_tmpdir_check named", fx.secret);

    /* a directory everyone may write, not sticky; SQLITE_TMPDIR naming nothing is passed over, as SQLite does */
    setenv("SQLITE_TMPDIR", at(fx.base, "none"), 1);
    setenv("TMPDIR", fx.base, 1);
    assert_false(sa_sqlite_tmpdir_check(&dir, &err));
    snprintf(want, sizeof want,
             "TMPDIR %s is writable by other users (mode 0777): use a directory only slurm-ingest can write "
             "(chmod go-w) or a sticky one (chmod +t)",
             fx.base);
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_string_equal(err.message, want);
    /* neither: /var/tmp (sticky, root's) */
    unsetenv("SQLITE_TMPDIR");
    unsetenv("TMPDIR");
    assert_true(sa_sqlite_tmpdir_check(&dir, &err));
    assert_string_equal(dir, access("/var/tmp", W_OK | X_OK) == 0 ? "/var/tmp" : "/tmp");
}

/* ---- the one writer of files replaced atomically ---------------------------------------------- */

/* Fails unless dir holds one entry, path, with text and mode. */
static void only_file(const char *dir, const char *path, const char *text, unsigned mode)
{
    struct stat st;
    char *got = tu_read_file(path, NULL);
    assert_string_equal(got, text);
    free(got);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, mode);
    assert_int_equal(tu_count_entries(dir), 1);
}

/* A file replaced whole or not at all, with the mode asked; nothing but it left in its directory. */
static void test_atomic_file(void **state)
{
    sa_atomic_file_t af;
    sa_error_t err;
    char dir[128], path[256], src_path[256];
    FILE *f;
    int src;
    (void)state;

    snprintf(dir, sizeof dir, "%s/atomic", fx.data);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    assert_non_null(f = sa_atomic_open(&af, path, 0604, &err));
    fputs("first\n", f);
    assert_int_equal(tu_count_entries(dir), 1); /* the temporary file */
    assert_int_equal(access(path, F_OK), -1);
    assert_true(sa_atomic_close(&af, true, &err));
    only_file(dir, path, "first\n", 0604);
    /* not committed: the old content stays, the temporary file goes */
    assert_non_null(f = sa_atomic_open(&af, path, 0640, &err));
    fputs("second\n", f);
    assert_true(sa_atomic_close(&af, false, &err));
    only_file(dir, path, "first\n", 0604);
    /* a file's content, then bytes (the set-aside records: held in a temporary file, then in memory) */
    snprintf(src_path, sizeof src_path, "%s/src", fx.data);
    tu_write_text(src_path, "from the file; ");
    assert_true((src = open(src_path, O_RDONLY)) >= 0);
    assert_int_equal(lseek(src, 0, SEEK_END), 15); /* read from its start whatever the offset */
    assert_true(sa_write_file_atomic(path, src, "from memory\n", 12, 0640, &err));
    close(src);
    unlink(src_path);
    only_file(dir, path, "from the file; from memory\n", 0640);
    unlink(path);
    /* a directory that does not exist: the command line's fault, nothing made */
    snprintf(path, sizeof path, "%s/nodir/out.txt", dir);
    assert_null(sa_atomic_open(&af, path, 0640, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_non_null(strstr(err.message, "nodir/out.txt: cannot create a temporary file beside it"));
    assert_false(sa_write_file_atomic(path, -1, "x", 1, 0640, &err));
    assert_int_equal(tu_count_entries(dir), 0);
    rmdir(dir);
}

/* ---- the binaries ------------------------------------------------------------------------------ */

/* Runs slurm-report on the archive with args; its exit status, *err (caller frees). */
static int report(const char *const *args, char **err)
{
    char dbopt[200], *out = NULL;
    const char *first[] = {dbopt, "--now=2026-10-01T12:00:00Z", NULL};
    int rc;

    snprintf(dbopt, sizeof dbopt, "--db=%s", fx.db);
    rc = tu_run_report(SA_REPORT_BIN, fx.uri, NULL, first, args, &out, err);
    free(out);
    return rc;
}

/* `slurm-report site DIR`, DIR nobody's link to root's directory: refused, the directory untouched. */
/* sa_read_upto: a file read whole into a fixed buffer; one byte past the cap is EFBIG, nothing past it read. */
static void test_read_upto(void **state)
{
    char path[] = "/tmp/sa-test-readupto-XXXXXX", buf[16];
    size_t len;
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    assert_true(sa_write_all(fd, "0123456789", 10));
    for (size_t cap = 9; cap <= 16; cap++) {
        bool ok;
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        errno = 0;
        ok = sa_read_upto(fd, buf, cap, &len);
        if (cap < 10) {
            assert_false(ok);
            assert_int_equal(errno, EFBIG);
            assert_int_equal(len, cap);
        } else {
            assert_true(ok);
            assert_int_equal(len, 10);
            assert_memory_equal(buf, "0123456789", 10);
        }
    }
    close(fd);
    unlink(path);
}

static void test_report_site(void **state)
{
    const char *planted[] = {"site", at(fx.base, "site"), NULL};
    char *err = NULL, want[600], good[256], mine[256];
    (void)state;

    need_planted();
    if (!fx.client)
        skip();
    assert_int_equal(report(planted, &err), 2);
    snprintf(want, sizeof want,
             "slurm-report: site directory %s/site is a symbolic link that belongs to uid 65534, not to this user "
             "(uid 0): refused\n",
             fx.base);
    one_line(err, want);
    free(err);
    secret_untouched();
    /* a link of this user's is followed (README: the site is written where it points, the link stays) */
    snprintf(good, sizeof good, "%s/good", fx.data);
    snprintf(mine, sizeof mine, "%s/mine", fx.data);
    assert_int_equal(mkdir(good, 0750), 0);
    assert_int_equal(symlink(good, mine), 0);
    {
        const char *ours[] = {"site", mine, NULL};
        assert_int_equal(report(ours, &err), 0);
        free(err);
    }
    assert_int_equal(access(at(good, "index.html"), F_OK), 0);
    unlink(mine);
}

/* --output FILE through nobody's link (a directory on its path, or FILE itself): refused, nothing written. */
static void test_report_output(void **state)
{
    const char *through[] = {"usage", "--month", "2026-10", "--output", at(fx.base, "site/usage.txt"), NULL};
    const char *itself[] = {"usage", "--month", "2026-10", "--output", at(fx.base, "plant"), NULL};
    char *err = NULL, want[600];
    (void)state;

    need_planted();
    if (!fx.client)
        skip();
    assert_int_equal(report(through, &err), 2);
    snprintf(want, sizeof want,
             "slurm-report: %s/site/usage.txt: %s/site is a symbolic link that belongs to uid 65534, not to this "
             "user (uid 0): refused\n",
             fx.base, fx.base);
    one_line(err, want);
    free(err);
    if (!plant("plant", at(fx.secret, "precious"), &err))
        fail_msg("runuser -u nobody -- ln -s: %s", err);
    assert_int_equal(report(itself, &err), 2);
    assert_non_null(strstr(err, "/plant is a symbolic link that belongs to uid 65534"));
    free(err);
    secret_untouched();
    assert_int_equal(unlink(at(fx.base, "plant")), 0);
}

/* slurm-ingest with its lock, spool and time series in nobody's link to root's directory: exit 2, nothing written. */
static void test_ingest_dirs(void **state)
{
    const char *args[] = {"--squeue", tu_fixture("report-squeue-alpha-1001.json"), "--at", "2026-10-01T12:00:00Z",
                          NULL};
    char *err = NULL;
    (void)state;

    need_planted();
    if (!fx.client)
        skip();
    assert_int_equal(tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, at(fx.base, "site"), "alpha", args, &err), 2);
    assert_non_null(strstr(err, "lock-dir "));
    assert_non_null(strstr(err, "/site is a symbolic link that belongs to uid 65534, not to this user (uid 0)"));
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
    free(err);
    secret_untouched();
}

/* The rollup rebuild's temporary database in nobody's link (SQLITE_TMPDIR): exit 2 before anything is written. */
static void test_rollup_tmpdir(void **state)
{
    const char *verify[] = {"rollup", NULL}, *rebuild[] = {"rollup", "--rebuild", NULL};
    char *err = NULL;
    (void)state;

    need_planted();
    if (!fx.client)
        skip();
    setenv("SQLITE_TMPDIR", at(fx.base, "site"), 1); /* for the child: this process's SQLite read it long ago */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, fx.data, "alpha", i ? rebuild : verify, &err), 2);
        assert_non_null(strstr(err, "SQLITE_TMPDIR "));
        assert_non_null(strstr(err, "/site is a symbolic link that belongs to uid 65534, not to this user (uid 0)"));
        assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
        free(err);
    }
    unsetenv("SQLITE_TMPDIR");
    assert_int_equal(tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, fx.data, "alpha", verify, &err), 0);
    free(err);
    secret_untouched();
}

/* The archive the binaries read: the squeue fixture of cluster alpha at 2026-10-01T12:00:00Z. */
static int setup(void **state)
{
    const char *args[] = {"--squeue", tu_fixture("report-squeue-alpha-1001.json"), "--at", "2026-10-01T12:00:00Z",
                          NULL};
    (void)state;
    if (!(fx.client = tu_mongo_client("test_fsutil", &fx.db)))
        return 0; /* the cases that need it skip */
    fx.uri = getenv("SLURM_TEST_MONGO_URI");
    return tu_run_ingest(SA_INGEST_BIN, fx.uri, fx.db, fx.data, "alpha", args, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (fx.client) {
        tu_mongo_drop(fx.client, fx.db);
        mongoc_client_destroy(fx.client);
        free(fx.db);
    }
    return 0;
}

int main(void)
{
    static const char *const runusers[] = {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", NULL};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sqlite_tmpdir), cmocka_unit_test(test_links_rule),
        cmocka_unit_test(test_private_dir),   cmocka_unit_test(test_report_site),
        cmocka_unit_test(test_report_output), cmocka_unit_test(test_ingest_dirs),
        cmocka_unit_test(test_rollup_tmpdir), cmocka_unit_test(test_atomic_file),
        cmocka_unit_test(test_read_upto),
    };
    char *why = NULL;
    int rc;

    for (const char *const *r = runusers; *r && !fx.runuser; r++)
        fx.runuser = access(*r, X_OK) == 0 ? *r : NULL;
    snprintf(fx.base, sizeof fx.base, "/tmp/sa-fsutil-XXXXXX");
    snprintf(fx.secret, sizeof fx.secret, "/tmp/sa-fsutil-secret-XXXXXX");
    snprintf(fx.data, sizeof fx.data, "/tmp/sa-fsutil-data-XXXXXX");
    if (!mkdtemp(fx.base) || !mkdtemp(fx.secret) || !mkdtemp(fx.data) || chmod(fx.base, 0777) != 0) {
        perror("test_fsutil: mkdtemp");
        return 1;
    }
    tu_write_text(at(fx.secret, "precious"), "root's own file\n");
    setenv("SQLITE_TMPDIR", fx.secret, 1); /* before SQLite reads it (test_sqlite_tmpdir) */
    /* before any case: the link is shared by them */
    if (geteuid() != 0)
        printf("SKIP (the cases with another user's links): planting them needs root (runuser -u nobody); CI "
               "runs as root\n");
    else if (!fx.runuser)
        printf("SKIP (the cases with another user's links): runuser (util-linux) is not installed\n");
    else if (!(fx.planted = plant("site", fx.secret, &why)))
        printf("SKIP (the cases with another user's links): runuser -u nobody cannot plant a link: %s\n", why);
    free(why);
    rc = tu_run_group_tests("fsutil", tests, setup, teardown);
    tu_rm_rf(fx.base);
    tu_rm_rf(fx.secret);
    tu_rm_rf(fx.data);
    return rc;
}
