/*
 * sa_lock.c - one slurm-ingest per cluster at a time (see sa_lock.h).
 */
#define _GNU_SOURCE

#include "sa_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct sa_lock {
    int fd;
};

/* The PID written in the lock file, or 0 if it holds none (yet). */
static long read_holder_pid(int fd)
{
    char buf[32];
    ssize_t n;
    char *end;
    long pid;

    do
        n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    errno = 0;
    pid = strtol(buf, &end, 10);
    if (errno != 0 || end == buf || pid <= 0 || pid > INT_MAX || (*end != '\n' && *end != '\0'))
        return 0;
    return pid;
}

/* Replaces the file's content by "<pid>\n". Returns false with errno set. */
static bool write_pid(int fd)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    ssize_t n;

    if (ftruncate(fd, 0) != 0)
        return false;
    do
        n = pwrite(fd, buf, (size_t)len, 0);
    while (n < 0 && errno == EINTR);
    if (n != len) {
        if (n >= 0)
            errno = EIO;
        return false;
    }
    return true;
}

sa_lock_t *sa_lock_acquire(const char *path, sa_error_t *error)
{
    sa_lock_t *lock = NULL;
    struct stat st;
    char q[300];
    int fd = -1, rc, saved;

    if (!path || !path[0]) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "no lock file path");
        return NULL;
    }
    sa_error_quote(path, 256, q, sizeof q);
    do
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0640);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        saved = errno;
        if (saved == ELOOP)
            sa_error_set(error, SA_ERR_USAGE, saved, "lock file %s is a symbolic link: refused", q);
        else
            sa_error_set(error, SA_ERR_IO, saved, "cannot open lock file %s: %s", q, strerror(saved));
        goto fail;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "lock file %s is not a regular file", q);
        goto fail;
    }
    if (st.st_uid != geteuid()) {
        /* made by someone else: they could hold it forever (or it is a planted file) */
        sa_error_set(error, SA_ERR_USAGE, EPERM, "lock file %s belongs to uid %u, not to this user (uid %u): remove it",
                     q, (unsigned)st.st_uid, (unsigned)geteuid());
        goto fail;
    }
    do
        rc = flock(fd, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        saved = errno;
        if (saved == EWOULDBLOCK) {
            long pid = read_holder_pid(fd);
            if (pid > 0)
                sa_error_set(error, SA_ERR_LOCKED, (int)pid, "another slurm-ingest (pid %ld) holds %s",
                             pid, q);
            else
                sa_error_set(error, SA_ERR_LOCKED, 0, "another slurm-ingest (pid unknown) holds %s", q);
        } else {
            sa_error_set(error, SA_ERR_IO, saved, "cannot lock %s: %s", q, strerror(saved));
        }
        goto fail;
    }
    if (!write_pid(fd)) {
        saved = errno;
        sa_error_set(error, SA_ERR_IO, saved, "cannot write the pid into lock file %s: %s", q,
                     strerror(saved));
        goto fail;
    }
    lock = malloc(sizeof *lock);
    if (!lock) {
        sa_error_nomem(error);
        goto fail;
    }
    lock->fd = fd;
    return lock;

fail:
    if (fd >= 0)
        close(fd); /* also drops the flock if we had it */
    return NULL;
}

void sa_lock_release(sa_lock_t *lock)
{
    if (!lock)
        return;
    /* empty the file first, so nobody reads our stale pid; never unlink it (a
     * waiter may already have it open, and would lock a deleted inode) */
    if (ftruncate(lock->fd, 0) != 0) {
        /* harmless: the next holder rewrites it */
    }
    close(lock->fd);
    free(lock);
}
