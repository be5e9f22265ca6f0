/*
 * test_lock.c - sa_lock: one slurm-ingest per cluster; contention names the
 * holder's pid; a killed holder leaves no stale lock.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sa_exit.h"
#include "sa_lock.h"

/* A test directory and the lock path inside it. */
typedef struct {
    char dir[64];
    char path[128];
} lockdir_t;

static void lockdir_make(lockdir_t *d)
{
    snprintf(d->dir, sizeof d->dir, "/tmp/sa-test-lock.XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    snprintf(d->path, sizeof d->path, "%s/clusterA.lock", d->dir);
}

static void lockdir_remove(lockdir_t *d)
{
    char p[512];
    DIR *dh = opendir(d->dir);
    struct dirent *de;

    assert_non_null(dh);
    while ((de = readdir(dh))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", d->dir, de->d_name);
        unlink(p);
    }
    closedir(dh);
    assert_int_equal(rmdir(d->dir), 0);
}

/* The lock file's content (static buffer). */
static const char *file_content(const char *path)
{
    static char buf[64];
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The message a contender gets while pid holds path. */
static const char *contention_message(long pid, const char *path)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "another slurm-ingest (pid %ld) holds %s", pid, path);
    return buf;
}

/* Two acquisitions in one process: the second (another open file) is refused. */
static void test_contention_same_process(void **state)
{
    lockdir_t d;
    sa_lock_t *a, *b;
    sa_error_t err;
    struct stat st;
    char pidline[32];
    (void)state;

    lockdir_make(&d);
    umask(022);
    a = sa_lock_acquire(d.path, &err);
    assert_non_null(a);
    assert_int_equal(stat(d.path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    snprintf(pidline, sizeof pidline, "%ld\n", (long)getpid());
    assert_string_equal(file_content(d.path), pidline);

    b = sa_lock_acquire(d.path, &err);
    assert_null(b);
    assert_int_equal(err.domain, SA_ERR_LOCKED);
    assert_int_equal(err.code, (int)getpid());
    assert_string_equal(err.message, contention_message((long)getpid(), d.path));

    /* release, then acquire works; the file stays, emptied on release */
    sa_lock_release(a);
    assert_string_equal(file_content(d.path), "");
    b = sa_lock_acquire(d.path, &err);
    assert_non_null(b);
    assert_string_equal(file_content(d.path), pidline);
    sa_lock_release(b);
    sa_lock_release(NULL);
    assert_int_equal(stat(d.path, &st), 0);
    lockdir_remove(&d);
}

/* Forks a child that takes the lock and waits; returns its pid once it holds it. */
static pid_t fork_holder(const char *path)
{
    int p[2];
    char c = 0;
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sa_error_t err;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
        sa_lock_t *l = sa_lock_acquire(path, &err);
        c = l ? 'y' : 'n';
        if (write(p[1], &c, 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(p[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    assert_int_equal(c, 'y');
    return pid;
}

/* Another process holds the lock: refused with its pid; once it is SIGKILLed, acquisition works. */
static void test_holder_killed(void **state)
{
    lockdir_t d;
    sa_lock_t *l;
    sa_error_t err;
    char pidline[32];
    pid_t child;
    int st;
    (void)state;

    lockdir_make(&d);
    child = fork_holder(d.path);
    snprintf(pidline, sizeof pidline, "%ld\n", (long)child);
    assert_string_equal(file_content(d.path), pidline);

    l = sa_lock_acquire(d.path, &err);
    assert_null(l);
    assert_int_equal(err.domain, SA_ERR_LOCKED);
    assert_int_equal(err.code, (int)child);
    assert_string_equal(err.message, contention_message((long)child, d.path));

    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &st, 0), child);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    /* the dead holder's pid is still in the file: no matter */
    assert_string_equal(file_content(d.path), pidline);

    l = sa_lock_acquire(d.path, &err);
    assert_non_null(l);
    snprintf(pidline, sizeof pidline, "%ld\n", (long)getpid());
    assert_string_equal(file_content(d.path), pidline);
    sa_lock_release(l);
    lockdir_remove(&d);
}

/* A holder that has not written its pid yet (or a foreign flock): "pid unknown". */
static void test_pid_unknown(void **state)
{
    lockdir_t d;
    sa_error_t err;
    int fd;
    (void)state;

    lockdir_make(&d);
    fd = open(d.path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "garbage\n", 8), 8);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    assert_null(sa_lock_acquire(d.path, &err));
    assert_int_equal(err.domain, SA_ERR_LOCKED);
    assert_int_equal(err.code, 0);
    char want[256];
    snprintf(want, sizeof want, "another slurm-ingest (pid unknown) holds %s", d.path);
    assert_string_equal(err.message, want);
    close(fd);
    lockdir_remove(&d);
}

/* The lock descriptor is close-on-exec: commands we run do not inherit the lock. */
static void test_cloexec(void **state)
{
    lockdir_t d;
    sa_lock_t *l;
    sa_error_t err;
    DIR *dh;
    struct dirent *de;
    char link[PATH_MAX], p[320];
    int found = 0;
    (void)state;

    lockdir_make(&d);
    l = sa_lock_acquire(d.path, &err);
    assert_non_null(l);
    dh = opendir("/proc/self/fd");
    assert_non_null(dh);
    while ((de = readdir(dh))) {
        ssize_t n;
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "/proc/self/fd/%s", de->d_name);
        n = readlink(p, link, sizeof link - 1);
        if (n < 0)
            continue;
        link[n] = '\0';
        if (strcmp(link, d.path) == 0) {
            int fd = atoi(de->d_name);
            assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
            found++;
        }
    }
    closedir(dh);
    assert_int_equal(found, 1);
    sa_lock_release(l);
    lockdir_remove(&d);
}

/* Unusable paths. */
static void test_errors(void **state)
{
    lockdir_t d;
    sa_error_t err;
    char path[256], want[512];
    (void)state;

    lockdir_make(&d);
    snprintf(path, sizeof path, "%s/missing/clusterA.lock", d.dir);
    assert_null(sa_lock_acquire(path, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_int_equal(err.code, ENOENT);
    snprintf(want, sizeof want, "cannot open lock file %s: %s", path, strerror(ENOENT));
    assert_string_equal(err.message, want);

    /* a symbolic link is refused (someone could point it at a file we would truncate) */
    char target[256];
    snprintf(target, sizeof target, "%s/precious", d.dir);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("keep me\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/link.lock", d.dir);
    assert_int_equal(symlink(target, path), 0);
    assert_null(sa_lock_acquire(path, &err));
    assert_int_equal(sa_exit_code_for(&err, true), SA_EXIT_USAGE); /* as the other refused links: not 1, a bug */
    snprintf(want, sizeof want, "lock file %s is a symbolic link: refused", path);
    assert_string_equal(err.message, want);
    assert_string_equal(file_content(target), "keep me\n");

    /* a FIFO is not a regular file */
    snprintf(path, sizeof path, "%s/fifo.lock", d.dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* so that open(O_RDWR) cannot block either way */
    assert_null(sa_lock_acquire(path, &err));
    snprintf(want, sizeof want, "lock file %s is not a regular file", path);
    assert_string_equal(err.message, want);
    assert_int_equal(sa_exit_code_for(&err, true), SA_EXIT_USAGE);
    close(fd);

    assert_null(sa_lock_acquire("", &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_null(sa_lock_acquire(NULL, NULL));
    lockdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contention_same_process),
        cmocka_unit_test(test_holder_killed),
        cmocka_unit_test(test_pid_unknown),
        cmocka_unit_test(test_cloexec),
        cmocka_unit_test(test_errors),
    };
    return tu_run_group_tests("lock", tests, NULL, NULL);
}
