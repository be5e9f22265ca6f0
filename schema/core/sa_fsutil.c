/*
 * sa_fsutil.c - durable, safe file-system steps (see sa_fsutil.h).
 */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE */
#include "sa_fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool sa_fsync_dir(const char *path)
{
    int fd, rc, saved;

    do
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return false;
    rc = fsync(fd);
    saved = errno;
    close(fd);
    /* some file systems cannot fsync a directory; the data itself is synced */
    if (rc != 0 && (saved == EINVAL || saved == EROFS))
        return true;
    errno = saved;
    return rc == 0;
}

char *sa_parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

bool sa_mkdir_p(const char *path, unsigned mode, sa_error_t *error)
{
    char *p = strdup(path), *parent = NULL;
    char q[300];
    bool ok = false;
    size_t n;

    if (!p) {
        sa_error_nomem(error);
        return false;
    }
    n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        struct stat st;

        if (p[i] != '/' && p[i] != '\0')
            continue;
        if (p[i - 1] == '/')
            continue; /* "a//b" */
        p[i] = '\0';
        if (mkdir(p, (mode_t)mode) == 0) {
            parent = sa_parent_of(p);
            if (!parent) {
                sa_error_nomem(error);
                goto done;
            }
            if (!sa_fsync_dir(parent)) {
                int saved = errno;
                sa_error_set(error, SA_ERR_IO, saved, "cannot sync the directory above %s: %s",
                             sa_error_quote(p, 256, q, sizeof q), strerror(saved));
                goto done;
            }
            free(parent);
            parent = NULL;
        } else if (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
            int saved = errno == EEXIST ? ENOTDIR : errno;
            sa_error_set(error, SA_ERR_IO, saved, "cannot create directory %s: %s",
                         sa_error_quote(p, 256, q, sizeof q), strerror(saved));
            goto done;
        }
        if (i < n)
            p[i] = '/';
    }
    ok = true;
done:
    free(parent);
    free(p);
    return ok;
}

bool sa_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += n;
        len -= (size_t)n;
    }
    return true;
}

bool sa_read_upto(int fd, char *buf, size_t cap, size_t *len)
{
    char extra;

    *len = 0;
    for (;;) {
        /* at the cap, one byte more says whether the file ends there */
        ssize_t n = *len < cap ? read(fd, buf + *len, cap - *len) : read(fd, &extra, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        if (*len == cap) {
            errno = EFBIG;
            return false;
        }
        *len += (size_t)n;
    }
}

/* The links one path may pass through, as the kernel counts them (MAXSYMLINKS). */
#define LINKS_MAX 40

/* Sets *error for the link at link (of uid) met while resolving given (the path named). */
static bool link_refused(const char *given, const char *link, unsigned uid, const char *what, sa_error_t *error)
{
    char q[300], ql[300];

    sa_error_quote(given, 256, q, sizeof q);
    sa_error_quote(link, 256, ql, sizeof ql);
    if (strcmp(given, link) == 0)
        sa_error_set(error, SA_ERR_USAGE, EPERM,
                     "%s%s%s is a symbolic link that belongs to uid %u, not to this user (uid %u): refused",
                     what ? what : "", what ? " " : "", q, uid, (unsigned)geteuid());
    else
        sa_error_set(error, SA_ERR_USAGE, EPERM,
                     "%s%s%s: %s is a symbolic link that belongs to uid %u, not to this user (uid %u): refused",
                     what ? what : "", what ? " " : "", q, ql, uid, (unsigned)geteuid());
    return false;
}

/*
 * Walks path a component at a time as the kernel resolves it; a symbolic link must be
 * this user's or root's, and the walk goes on in where it points followed by the rest of
 * path. depth: the links passed so far; given: the path named (for the message).
 */
static bool links_ours_at(const char *path, int depth, const char *given, const char *what, sa_error_t *error)
{
    char *p = strdup(path), *target = NULL, *parent = NULL, *next = NULL, q[300];
    size_t n = p ? strlen(p) : 0;
    bool ok = false;

    if (!p)
        return sa_error_nomem(error);
    for (size_t i = 1; i <= n; i++) {
        struct stat st;
        char save = p[i];
        ssize_t len;

        if ((p[i] != '/' && p[i] != '\0') || p[i - 1] == '/')
            continue;
        p[i] = '\0';
        if (lstat(p, &st) != 0)
            break; /* not there: nothing past it is followed */
        if (!S_ISLNK(st.st_mode)) {
            p[i] = save;
            continue;
        }
        if (st.st_uid != geteuid() && st.st_uid != 0) {
            link_refused(given, p, (unsigned)st.st_uid, what, error);
            goto done;
        }
        if (depth >= LINKS_MAX) {
            sa_error_set(error, SA_ERR_USAGE, ELOOP, "%s%s%s: too many symbolic links", what ? what : "",
                         what ? " " : "", sa_error_quote(given, 256, q, sizeof q));
            goto done;
        }
        /* PATH_MAX, not st_size: some file systems (/proc) say 0 for a link's size */
        if (!(target = malloc(PATH_MAX)) || !(parent = sa_parent_of(p))) {
            sa_error_nomem(error);
            goto done;
        }
        if ((len = readlink(p, target, PATH_MAX - 1)) < 0)
            break; /* gone since lstat: nothing to follow */
        target[len] = '\0';
        p[i] = save;
        if (target[0] == '/' ? asprintf(&next, "%s%s", target, p + i) < 0
                             : asprintf(&next, "%s/%s%s", parent, target, p + i) < 0) {
            next = NULL;
            sa_error_nomem(error);
            goto done;
        }
        ok = links_ours_at(next, depth + 1, given, what, error);
        goto done;
    }
    ok = true;
done:
    free(next);
    free(parent);
    free(target);
    free(p);
    return ok;
}

bool sa_path_links_ours(const char *path, const char *what, sa_error_t *error)
{
    return links_ours_at(path, 0, path, what, error);
}

/*
 * The checks of a directory slurm-ingest writes: reached through no other user's symbolic
 * link (sa_path_links_ours), a directory, this user's or root's, and not writable by other
 * users (sticky_ok: unless it has the sticky bit, as /tmp). SA_ERR_USAGE otherwise.
 */
static bool dir_is_safe(const char *dir, const char *what, bool sticky_ok, sa_error_t *error)
{
    struct stat st;
    char q[300];

    sa_error_quote(dir, 256, q, sizeof q);
    if (!sa_path_links_ours(dir, what, error))
        return false;
    if (stat(dir, &st) != 0) {
        sa_error_set(error, SA_ERR_USAGE, errno, "%s %s: %s", what, q, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        sa_error_set(error, SA_ERR_USAGE, ENOTDIR, "%s %s is not a directory", what, q);
        return false;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        sa_error_set(error, SA_ERR_USAGE, EPERM, "%s %s belongs to uid %u, not to this user (uid %u)", what, q,
                     (unsigned)st.st_uid, (unsigned)geteuid());
        return false;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(sticky_ok && (st.st_mode & S_ISVTX))) {
        sa_error_set(error, SA_ERR_USAGE, EPERM,
                     "%s %s is writable by other users (mode %04o): use a directory only slurm-ingest can "
                     "write (chmod go-w)%s",
                     what, q, (unsigned)(st.st_mode & 07777), sticky_ok ? " or a sticky one (chmod +t)" : "");
        return false;
    }
    return true;
}

bool sa_dir_is_private(const char *dir, const char *what, sa_error_t *error)
{
    return dir_is_safe(dir, what, false, error);
}

bool sa_sqlite_tmpdir_check(const char **dir, sa_error_t *error)
{
    static const char *const names[] = {"SQLITE_TMPDIR", "TMPDIR", "temporary directory", "temporary directory",
                                        "temporary directory", "temporary directory"};
    const char *dirs[] = {getenv("SQLITE_TMPDIR"), getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "."};
    struct stat st;
    size_t i = 0;

    /* SQLite's choice: the first that is a directory this process may write and enter */
    while (i < 5 && !(dirs[i] && stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode) && access(dirs[i], W_OK | X_OK) == 0))
        i++;
    if (dir)
        *dir = dirs[i];
    return dir_is_safe(dirs[i], names[i], true, error);
}

bool sa_private_dir(const char *dir, const char *what, sa_error_t *error)
{
    return sa_mkdir_p(dir, 0750, error) && sa_dir_is_private(dir, what, error);
}

int sa_rename_noreplace(const char *tmp, const char *final)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return errno;
    /* a file system without RENAME_NOREPLACE: link() also refuses to replace */
    if (link(tmp, final) == 0) {
        unlink(tmp);
        return 0;
    }
    return errno;
}

/* Copies all of src (from its start) to fd. */
static bool copy_fd(int src, int fd)
{
    char buf[65536];
    off_t off = 0;
    for (;;) {
        ssize_t n = pread(src, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        if (!sa_write_all(fd, buf, (size_t)n))
            return false;
        off += n;
    }
}

unsigned sa_umask_file_mode(void)
{
    mode_t m = umask(022);
    umask(m);
    return 0666u & ~(unsigned)m;
}

FILE *sa_atomic_open(sa_atomic_file_t *af, const char *path, unsigned mode, sa_error_t *error)
{
    char q[300];
    int fd = -1, e;
    bool bad_path;

    memset(af, 0, sizeof *af);
    if (!(af->path = strdup(path)) || asprintf(&af->tmp, "%s.tmp.XXXXXX", path) < 0) {
        af->tmp = NULL;
        sa_atomic_close(af, false, NULL);
        sa_error_nomem(error);
        return NULL;
    }
    if (!sa_path_links_ours(path, NULL, error))
        goto fail;
    /* mkostemp opens with O_CREAT | O_EXCL: never through a planted link */
    if ((fd = mkostemp(af->tmp, O_CLOEXEC)) >= 0 && fchmod(fd, (mode_t)mode) == 0 && (af->f = fdopen(fd, "w")))
        return af->f;
    e = errno;
    /* a path that cannot hold a file (no such directory, no permission) is the command line's fault */
    bad_path = e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM || e == EROFS || e == ELOOP ||
               e == ENAMETOOLONG || e == EISDIR;
    sa_error_set(error, bad_path ? SA_ERR_USAGE : SA_ERR_IO, e, "%s: cannot create a temporary file beside it: %s",
                 sa_error_quote(path, 256, q, sizeof q), strerror(e));
    if (fd >= 0) {
        close(fd);
        unlink(af->tmp);
    }
fail:
    free(af->tmp); /* removed, or only a template */
    af->tmp = NULL;
    sa_atomic_close(af, false, NULL);
    return NULL;
}

bool sa_atomic_close(sa_atomic_file_t *af, bool commit, sa_error_t *error)
{
    char *parent = NULL, q[300];
    bool ok = true;

    sa_error_quote(af->path ? af->path : "", 256, q, sizeof q);
    if (af->f) {
        if (commit && (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)) {
            sa_error_set(error, SA_ERR_IO, errno, "writing %s: %s", q, strerror(errno));
            ok = commit = false;
        }
        if (fclose(af->f) != 0 && commit) {
            sa_error_set(error, SA_ERR_IO, errno, "writing %s: %s", q, strerror(errno));
            ok = commit = false;
        }
        af->f = NULL;
    }
    if (af->tmp && commit && rename(af->tmp, af->path) != 0) {
        sa_error_set(error, SA_ERR_IO, errno, "renaming into %s: %s", q, strerror(errno));
        ok = commit = false;
    }
    if (af->tmp && !commit)
        unlink(af->tmp);
    /* the rename itself durable: after a crash, path is the old file or the new one whole */
    if (af->tmp && commit && (!(parent = sa_parent_of(af->path)) || !sa_fsync_dir(parent))) {
        int e = parent ? errno : ENOMEM;
        sa_error_set(error, SA_ERR_IO, e, "%s: cannot sync its directory: %s", q, strerror(e));
        ok = false;
    }
    free(parent);
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
    return ok;
}

bool sa_write_file_atomic(const char *path, int src, const char *data, size_t len, unsigned mode,
                          sa_error_t *error)
{
    sa_atomic_file_t af;
    char q[300];
    bool ok;

    if (!sa_atomic_open(&af, path, mode, error))
        return false;
    /* straight to the descriptor: nothing was written through the stream */
    ok = (src < 0 || copy_fd(src, fileno(af.f))) && sa_write_all(fileno(af.f), data, len);
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "%s: cannot write: %s", sa_error_quote(path, 256, q, sizeof q),
                     strerror(errno));
    return sa_atomic_close(&af, ok, error) && ok;
}

bool sa_file_is_ours(int fd, const char *path, sa_error_t *error)
{
    struct stat st;
    char q[300];

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sa_error_set(error, SA_ERR_IO, EINVAL, "%s is not a regular file", sa_error_quote(path, 256, q, sizeof q));
        return false;
    }
    if (st.st_uid != geteuid()) {
        sa_error_set(error, SA_ERR_IO, EPERM, "%s belongs to uid %u, not to this user (uid %u): not read",
                     sa_error_quote(path, 256, q, sizeof q), (unsigned)st.st_uid, (unsigned)geteuid());
        return false;
    }
    return true;
}

/* Removes what a directory holds, then the directory (at dirfd-relative name). */
static bool rm_at(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d;
    struct dirent *de;

    if (fd < 0)
        return unlinkat(parent, name, 0) == 0 || errno == ENOENT;
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (de->d_type == DT_DIR)
            rm_at(dirfd(d), de->d_name);
        else
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
    return unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

bool sa_rm_tree(const char *path)
{
    return rm_at(AT_FDCWD, path);
}

/* Sum of the blocks under a directory (dirfd-relative), without entries named skip* (NULL: none). */
static uint64_t size_at(int parent, const char *name, const char *skip)
{
    struct stat st;
    uint64_t total = 0;
    int fd;
    DIR *d;
    struct dirent *de;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    total = (uint64_t)st.st_blocks * 512;
    if (!S_ISDIR(st.st_mode))
        return total;
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return total;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            (skip && strncmp(de->d_name, skip, strlen(skip)) == 0))
            continue;
        total += size_at(dirfd(d), de->d_name, skip);
    }
    closedir(d);
    return total;
}

uint64_t sa_tree_size_skip(const char *path, const char *skip)
{
    return size_at(AT_FDCWD, path, skip);
}
