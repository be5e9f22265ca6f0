/*
 * sa_fsutil.h - durable, safe file-system steps of both binaries: slurm-ingest's spool,
 * snapshots, watermark and lock, slurm-report's --output and site.
 *
 * Durable: a file is written to a temporary name in its directory, fsync'ed, renamed
 * into place and the directory fsync'ed, so after a crash it is there whole or not at
 * all. Safe: slurm-ingest's directories must not be writable by other users (another
 * user could plant a symbolic link or a forged capture there), files are created with
 * O_EXCL | O_NOFOLLOW, and files it reads back must belong to it. In both binaries a
 * symbolic link on a path to write is followed only when it is this user's or root's
 * (sa_path_links_ours): one planted by another user is refused.
 */
#ifndef SA_FSUTIL_H
#define SA_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"

/* fsyncs a directory (file systems that cannot are accepted). Returns false with errno set. */
bool sa_fsync_dir(const char *path);

/* The directory part of path ("." if none). Caller frees; NULL on out of memory. */
char *sa_parent_of(const char *path);

/* Creates path and its missing parents with mode, fsyncing the parent of each one created. */
bool sa_mkdir_p(const char *path, unsigned mode, sa_error_t *error);

/* Writes all of data to fd. Returns false with errno set. */
bool sa_write_all(int fd, const char *data, size_t len);

/*
 * Reads fd to its end into buf (cap bytes; nothing is allocated, so a secret read leaves
 * no copy behind), *len the bytes read. Returns false with errno set: EFBIG when there is
 * more than cap, else a read's error.
 */
bool sa_read_upto(int fd, char *buf, size_t cap, size_t *len);

/*
 * The rule for a path written to (a directory, slurm-report's site DIR and --output, the
 * temporary directory): every symbolic link met while resolving path, at any component and
 * in what links point to, belongs to this user or to root. A link of another user (planted
 * in a directory others can write: it could point anywhere, /root included) is refused
 * with SA_ERR_USAGE, EPERM: "<what> <path> is a symbolic link that belongs to uid N, not to
 * this user (uid M): refused" (what may be NULL; a link inside path is named after it).
 * More than 40 links (the kernel's limit): SA_ERR_USAGE, ELOOP. A component that does not
 * exist ends the walk (nothing past it can be followed): true.
 */
bool sa_path_links_ours(const char *path, const char *what, sa_error_t *error);

/*
 * Checks that dir (which must exist) is a directory that no other user can write: owned
 * by this user or root, not writable by group or others, reached through no other user's
 * symbolic link (sa_path_links_ours). what names it in the message ("spool-dir").
 * SA_ERR_USAGE otherwise.
 */
bool sa_dir_is_private(const char *dir, const char *what, sa_error_t *error);

/*
 * Checks the directory SQLite puts a temporary database in (the rollup rebuild's spill):
 * the first of $SQLITE_TMPDIR, $TMPDIR, /var/tmp, /usr/tmp and /tmp that is a directory
 * this process may write and enter, else "." (SQLite's own order: unixTempFileDir in its
 * os_unix.c). The checks of sa_dir_is_private, except that a directory other users may
 * write is accepted when sticky (as /tmp: nobody else can remove or rename what is in it).
 * SA_ERR_USAGE otherwise, the message naming the variable it came from ("TMPDIR /x/y is
 * ..."). *dir (may be NULL) receives the directory (the environment's string or a static
 * one) either way.
 */
bool sa_sqlite_tmpdir_check(const char **dir, sa_error_t *error);

/* sa_mkdir_p (0750) then sa_dir_is_private. */
bool sa_private_dir(const char *dir, const char *what, sa_error_t *error);

/* ---- files replaced atomically: the one writer of both binaries ---------------------- */

/* A file being written: a temporary file beside it (path.tmp.XXXXXX), renamed over path when done. */
typedef struct {
    char *path, *tmp;
    FILE *f;
} sa_atomic_file_t;

/* The mode a new file gets: 0666 & ~umask (reads the umask without changing it for good). */
unsigned sa_umask_file_mode(void);

/*
 * Opens a temporary file beside path, made with O_EXCL (a planted link is never followed)
 * and mode (0640, or sa_umask_file_mode() for what a user asked for), once path has passed
 * sa_path_links_ours. Returns its stream (owned by af), or NULL with *error set:
 * SA_ERR_USAGE when path cannot hold a file (its directory does not exist or may not be
 * written, another user's link), else SA_ERR_IO; af then holds nothing.
 */
FILE *sa_atomic_open(sa_atomic_file_t *af, const char *path, unsigned mode, sa_error_t *error);

/*
 * Closes the file. When commit: flushes it to disk, renames it over path and fsyncs the
 * directory, so that after a crash path is the old file or the new one, whole. Else (or
 * when a step fails) removes it. Returns false with *error set (error may be NULL) when
 * committing failed. Frees what af holds.
 */
bool sa_atomic_close(sa_atomic_file_t *af, bool commit, sa_error_t *error);

/*
 * Replaces path's content, durably (sa_atomic_open, sa_atomic_close): the content of the
 * file open as src (read from its start; -1: none), then data. mode for the new file.
 */
bool sa_write_file_atomic(const char *path, int src, const char *data, size_t len, unsigned mode,
                          sa_error_t *error);

/*
 * True if the regular file open as fd belongs to this user (or root wrote it and this
 * user is root). Sets *error naming path otherwise.
 */
bool sa_file_is_ours(int fd, const char *path, sa_error_t *error);

/* Moves tmp to final unless final exists: 0, EEXIST (tmp left) or another errno. */
int sa_rename_noreplace(const char *tmp, const char *final);

/* Removes a directory tree (no symbolic link is followed). Best effort; true if gone. */
bool sa_rm_tree(const char *path);

/*
 * Bytes used by a directory tree (blocks allocated), not following symbolic links, without
 * the entries (at any depth) whose name starts with skip (and what they hold).
 */
uint64_t sa_tree_size_skip(const char *path, const char *skip);

#endif
