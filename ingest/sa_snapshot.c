/*
 * sa_snapshot.c - snapshots kept on disk (see sa_snapshot.h).
 */
#define _GNU_SOURCE /* asprintf, mkdtemp */
#include "sa_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_vec.h"
#include "sa_fsutil.h"
#include "sa_log.h"
#include "sa_spool.h"

static const char *const kind_names[SA_SNAP_KINDS] = {"sinfo", "squeue", "sacct", "sdiag"};

struct sa_snapshot_txn {
    char *parent;             /* DIR/<cluster> (or a rejected/ folder) */
    char *tmp;                /* parent/.new-<time>-XXXXXX (SA_SNAP_TMP_PREFIX) */
    int64_t at;
    int fd[SA_SNAP_KINDS];    /* -1 when closed or absent */
    bool present[SA_SNAP_KINDS];
    uint64_t size[SA_SNAP_KINDS];
    json_t *meta;
    char *reason;             /* reason.txt, for rejected snapshots */
};

/* An error while writing into the spool: a full disk or quota is "cannot keep". */
static void write_error(sa_error_t *error, const char *path, int err)
{
    char q[300];
    sa_error_set(error, err == ENOSPC || err == EDQUOT ? SA_ERR_SPOOL : SA_ERR_IO, err, "%s: cannot write: %s",
                 sa_error_quote(path, 256, q, sizeof q), strerror(err));
}

/* Begins a snapshot directory under parent (made 0750 if missing). */
static sa_snapshot_txn_t *begin_in(const char *parent, int64_t at, sa_error_t *error)
{
    sa_snapshot_txn_t *t = calloc(1, sizeof *t);
    char ts[32];

    if (!t) {
        sa_error_nomem(error);
        return NULL;
    }
    for (int k = 0; k < SA_SNAP_KINDS; k++)
        t->fd[k] = -1;
    t->at = at;
    if (!sa_spool_format_at(at, ts, sizeof ts)) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "capture time %lld is outside 1970..9999", (long long)at);
        goto fail;
    }
    if (!(t->parent = strdup(parent)) || asprintf(&t->tmp, "%s/" SA_SNAP_TMP_PREFIX "%s-XXXXXX", parent, ts) < 0) {
        t->tmp = NULL;
        sa_error_nomem(error);
        goto fail;
    }
    if (!sa_mkdir_p(parent, 0750, error))
        goto fail;
    if (!mkdtemp(t->tmp)) {
        write_error(error, parent, errno);
        free(t->tmp);
        t->tmp = NULL;
        goto fail;
    }
    chmod(t->tmp, 0750);
    return t;
fail:
    sa_snapshot_abort(t);
    return NULL;
}

sa_snapshot_txn_t *sa_snapshot_begin(const char *dir, const char *cluster, int64_t at, sa_error_t *error)
{
    char *parent = NULL;
    sa_snapshot_txn_t *t;

    if (!sa_spool_check_names(dir, cluster, error))
        return NULL;
    if (asprintf(&parent, "%s/%s", dir, cluster) < 0) {
        sa_error_nomem(error);
        return NULL;
    }
    t = begin_in(parent, at, error);
    free(parent);
    return t;
}

/* The temporary name of an input's file (before its extension is known). */
static char *part_path(const sa_snapshot_txn_t *t, int kind)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s.part", t->tmp, kind_names[kind]) < 0)
        return NULL;
    return p;
}

int sa_snapshot_open_input(sa_snapshot_txn_t *t, int kind, sa_error_t *error)
{
    char *p;
    if (kind < 0 || kind >= SA_SNAP_KINDS || t->present[kind]) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "input %d given twice", kind);
        return -1;
    }
    if (!(p = part_path(t, kind))) {
        sa_error_nomem(error);
        return -1;
    }
    t->fd[kind] = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (t->fd[kind] < 0)
        write_error(error, p, errno);
    else
        t->present[kind] = true;
    free(p);
    return t->fd[kind];
}

bool sa_snapshot_copy_input(sa_snapshot_txn_t *t, int kind, const char *path, uint64_t cap, sa_error_t *error)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int in = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    int out;
    char buf[1 << 16], q[300];
    const char *name = is_stdin ? "(stdin)" : path;

    if (in < 0) {
        sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", sa_error_quote(path, 256, q, sizeof q), strerror(errno));
        return false;
    }
    out = sa_snapshot_open_input(t, kind, error);
    if (out < 0)
        goto fail;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sa_error_set(error, SA_ERR_INPUT, errno, "%s: %s", sa_error_quote(name, 256, q, sizeof q),
                         strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        if (t->size[kind] + (uint64_t)n > cap) {
            sa_error_set(error, SA_ERR_INPUT, EFBIG, "%s: larger than max-output (%llu bytes)",
                         sa_error_quote(name, 256, q, sizeof q), (unsigned long long)cap);
            goto fail;
        }
        if (!sa_write_all(out, buf, (size_t)n)) {
            write_error(error, t->tmp, errno);
            goto fail;
        }
        t->size[kind] += (uint64_t)n;
    }
    if (!is_stdin)
        close(in);
    return true;
fail:
    if (!is_stdin)
        close(in);
    return false;
}

void sa_snapshot_drop_input(sa_snapshot_txn_t *t, int kind)
{
    char *p;
    if (kind < 0 || kind >= SA_SNAP_KINDS || !t->present[kind])
        return;
    if (t->fd[kind] >= 0)
        close(t->fd[kind]);
    t->fd[kind] = -1;
    t->present[kind] = false;
    t->size[kind] = 0;
    if ((p = part_path(t, kind)) != NULL)
        unlink(p);
    free(p);
}

void sa_snapshot_set_meta(sa_snapshot_txn_t *t, const json_t *meta)
{
    json_decref(t->meta);
    t->meta = meta ? json_deep_copy(meta) : NULL;
}

/* ".json" when the file starts (after blanks) with '{' or '[', else ".txt". */
static const char *ext_of(const char *path)
{
    char buf[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (fd >= 0)
        close(fd);
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')
            continue;
        return buf[i] == '{' || buf[i] == '[' ? "json" : "txt";
    }
    return "txt";
}

/* Writes a small file into the temporary directory and syncs it. */
static bool put_small(sa_snapshot_txn_t *t, const char *name, const char *data, sa_error_t *error)
{
    char *p = NULL;
    int fd;
    bool ok;
    if (asprintf(&p, "%s/%s", t->tmp, name) < 0) {
        sa_error_nomem(error);
        return false;
    }
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    ok = fd >= 0 && sa_write_all(fd, data, strlen(data)) && fsync(fd) == 0;
    if (!ok)
        write_error(error, p, errno);
    if (fd >= 0 && close(fd) != 0 && ok) {
        write_error(error, p, errno);
        ok = false;
    }
    free(p);
    return ok;
}

/* Syncs and names every input, writes meta.json and reason.txt, syncs the directory. */
static bool seal(sa_snapshot_txn_t *t, sa_error_t *error)
{
    for (int k = 0; k < SA_SNAP_KINDS; k++) {
        char *part, *final = NULL;
        bool ok;
        if (!t->present[k])
            continue;
        if (t->fd[k] >= 0) {
            int rc = fsync(t->fd[k]);
            int saved = errno;
            if (close(t->fd[k]) != 0 && rc == 0) {
                rc = -1;
                saved = errno;
            }
            t->fd[k] = -1;
            if (rc != 0) {
                write_error(error, t->tmp, saved);
                return false;
            }
        }
        if (!(part = part_path(t, k)) || asprintf(&final, "%s/%s.%s", t->tmp, kind_names[k], ext_of(part)) < 0) {
            free(part);
            sa_error_nomem(error);
            return false;
        }
        ok = rename(part, final) == 0;
        if (!ok)
            write_error(error, final, errno);
        free(part);
        free(final);
        if (!ok)
            return false;
    }
    if (t->meta) {
        char *text = json_dumps(t->meta, JSON_INDENT(2) | JSON_SORT_KEYS);
        bool ok = text && put_small(t, "meta.json", text, error);
        free(text);
        if (!ok)
            return false;
    }
    if (t->reason && !put_small(t, "reason.txt", t->reason, error))
        return false;
    if (!sa_fsync_dir(t->tmp)) {
        write_error(error, t->tmp, errno);
        return false;
    }
    return true;
}

bool sa_snapshot_commit(sa_snapshot_txn_t *t, char **path_out, sa_error_t *error)
{
    char ts[32], *final = NULL;
    bool ok = false;

    if (path_out)
        *path_out = NULL;
    if (!seal(t, error))
        goto done;
    sa_spool_format_at(t->at, ts, sizeof ts);
    /* a second snapshot of the same second (a replay, a file run) gets a suffix */
    for (int i = 0; i < 1000; i++) {
        int rc;
        free(final);
        final = NULL;
        if ((i == 0 ? asprintf(&final, "%s/%s", t->parent, ts) : asprintf(&final, "%s/%s-%d", t->parent, ts, i)) < 0) {
            final = NULL;
            sa_error_nomem(error);
            goto done;
        }
        rc = sa_rename_noreplace(t->tmp, final);
        if (rc == 0) {
            ok = true;
            break;
        }
        if (rc != EEXIST && rc != ENOTEMPTY) {
            write_error(error, final, rc);
            goto done;
        }
    }
    if (!ok) {
        sa_error_set(error, SA_ERR_IO, EEXIST, "%s: too many snapshots of one second", t->parent);
        goto done;
    }
    free(t->tmp);
    t->tmp = NULL; /* renamed away */
    if (!sa_fsync_dir(t->parent)) {
        write_error(error, t->parent, errno);
        sa_rm_tree(final); /* "whole or not at all": not durable, so not there */
        ok = false;
        goto done;
    }
    if (path_out) {
        *path_out = final;
        final = NULL;
    }
done:
    free(final);
    sa_snapshot_abort(t);
    return ok;
}

void sa_snapshot_abort(sa_snapshot_txn_t *t)
{
    if (!t)
        return;
    for (int k = 0; k < SA_SNAP_KINDS; k++) {
        if (t->fd[k] >= 0)
            close(t->fd[k]);
    }
    if (t->tmp)
        sa_rm_tree(t->tmp);
    free(t->tmp);
    free(t->parent);
    free(t->reason);
    json_decref(t->meta);
    free(t);
}

/* Removes the ".new-*" directories of this user directly under parent; counts them in *removed. */
static bool sweep_in(const char *parent, size_t *removed, sa_error_t *error)
{
    DIR *d = opendir(parent);
    struct dirent *de;
    bool ok = true;
    size_t before = *removed;

    if (!d) {
        if (errno == ENOENT)
            return true;
        sa_error_set(error, SA_ERR_IO, errno, "cannot read directory %s: %s", parent, strerror(errno));
        return false;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        char *p = NULL;
        if (strncmp(de->d_name, SA_SNAP_TMP_PREFIX, strlen(SA_SNAP_TMP_PREFIX)) != 0 ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        if (asprintf(&p, "%s/%s", parent, de->d_name) < 0) {
            sa_error_nomem(error);
            ok = false;
            break;
        }
        if (sa_rm_tree(p)) {
            (*removed)++;
        } else if (ok) {
            sa_error_set(error, SA_ERR_IO, errno, "cannot remove %s: %s", p, strerror(errno));
            ok = false;
        }
        free(p);
    }
    closedir(d);
    if (*removed > before && !sa_fsync_dir(parent) && ok) {
        sa_error_set(error, SA_ERR_IO, errno, "cannot sync directory %s: %s", parent, strerror(errno));
        ok = false;
    }
    return ok;
}

bool sa_snapshot_sweep(const char *dir, const char *cluster, size_t *removed, sa_error_t *error)
{
    char *cdir = NULL, *rejected = NULL;
    sa_error_t later;
    size_t n = 0;
    bool ok;

    if (removed)
        *removed = 0;
    if (!sa_spool_check_names(dir, cluster, error))
        return false;
    if (asprintf(&cdir, "%s/%s", dir, cluster) < 0 || asprintf(&rejected, "%s/%s/rejected", dir, cluster) < 0) {
        free(cdir);
        sa_error_nomem(error);
        return false;
    }
    ok = sweep_in(cdir, &n, error);
    if (!sweep_in(rejected, &n, &later) && ok) {
        if (error)
            *error = later;
        ok = false;
    }
    free(cdir);
    free(rejected);
    if (removed)
        *removed = n;
    return ok;
}

/* ---- reading ------------------------------------------------------------------------ */

void sa_snapdir_list_free(sa_snapdir_t *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].path);
        free(v[i].name);
        for (int k = 0; k < SA_SNAP_KINDS; k++)
            free(v[i].files[k]);
        json_decref(v[i].meta);
    }
    free(v);
}

/* True if the entry name at dirfd is a regular file of this user (warns otherwise). */
static bool usable_file(int dfd, const char *dir, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        sa_log(SA_LOG_WARN, "%s/%s: %s: skipped, never read", dir, name,
               !S_ISREG(st.st_mode) ? "not a regular file" : "belongs to another user");
        return false;
    }
    return true;
}

/* Reads a snapshot directory's inputs and meta.json. */
static bool load_dir(const char *cdir, const char *name, int64_t at, sa_snapdir_t *s, sa_error_t *error)
{
    DIR *d;
    struct dirent *de;
    char *meta = NULL;

    memset(s, 0, sizeof *s);
    s->at = at;
    if (asprintf(&s->path, "%s/%s", cdir, name) < 0 || !(s->name = strdup(name))) {
        s->path = NULL;
        sa_error_nomem(error);
        return false;
    }
    d = opendir(s->path);
    if (!d)
        return true; /* went away: an empty snapshot, dropped by the caller */
    while ((de = readdir(d)) != NULL) {
        for (int k = 0; k < SA_SNAP_KINDS; k++) {
            size_t kl = strlen(kind_names[k]);
            if (strncmp(de->d_name, kind_names[k], kl) == 0 &&
                (strcmp(de->d_name + kl, ".json") == 0 || strcmp(de->d_name + kl, ".txt") == 0) &&
                usable_file(dirfd(d), s->path, de->d_name) && !s->files[k] &&
                asprintf(&s->files[k], "%s/%s", s->path, de->d_name) < 0)
                s->files[k] = NULL;
        }
    }
    closedir(d);
    if (asprintf(&meta, "%s/meta.json", s->path) >= 0) {
        int fd = open(meta, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
            if (sa_file_is_ours(fd, meta, NULL))
                s->meta = json_loadfd(fd, 0, NULL);
            close(fd);
        }
        free(meta);
    }
    return true;
}

static int snap_cmp(const void *a, const void *b)
{
    const sa_snapdir_t *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->legacy != y->legacy)
        return x->legacy ? -1 : 1;
    /* "T...Z" sorts before "T...Z-1", "-1" before "-10" only by length then text */
    if (strlen(x->name) != strlen(y->name))
        return strlen(x->name) < strlen(y->name) ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Adds the flat (0.1) captures of the cluster directory as legacy snapshots. */
static bool add_legacy(const char *dir, const char *cluster, const char *cdir, sa_snapdir_t **v, size_t *n,
                       size_t *cap, sa_error_t *error)
{
    sa_spool_entry_t *e = NULL;
    size_t ne = 0;

    if (!sa_spool_list(dir, cluster, &e, &ne, error))
        return false;
    for (size_t i = 0; i < ne; i++) {
        sa_snapdir_t *s;
        int k;
        if (*n == 0 || !(*v)[*n - 1].legacy || (*v)[*n - 1].at != e[i].at) {
            char ts[32];
            if (!SA_VEC_GROW(*v, *cap, *n, 1, 16)) {
                sa_spool_entries_free(e, ne);
                sa_error_nomem(error);
                return false;
            }
            s = &(*v)[(*n)++];
            memset(s, 0, sizeof *s);
            s->legacy = true;
            s->at = e[i].at;
            sa_spool_format_at(e[i].at, ts, sizeof ts);
            s->path = strdup(cdir);
            s->name = strdup(ts);
        }
        s = &(*v)[*n - 1];
        for (k = 0; k < SA_SNAP_KINDS && strcmp(kind_names[k], e[i].kind) != 0; k++)
            ;
        if (k < SA_SNAP_KINDS && !s->files[k]) {
            int fd = open(e[i].path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            sa_error_t why;
            if (fd >= 0 && sa_file_is_ours(fd, e[i].path, &why))
                s->files[k] = strdup(e[i].path);
            else if (fd >= 0)
                sa_log(SA_LOG_WARN, "%s: skipped, never read", why.message);
            if (fd >= 0)
                close(fd);
        }
    }
    sa_spool_entries_free(e, ne);
    return true;
}

bool sa_snapdir_list(const char *dir, const char *cluster, sa_snapdir_t **out, size_t *nout, sa_error_t *error)
{
    sa_snapdir_t *v = NULL;
    size_t n = 0, cap = 0;
    char *cdir = NULL;
    DIR *d = NULL;
    struct dirent *de;
    bool ok = false;

    *out = NULL;
    *nout = 0;
    if (!sa_spool_check_names(dir, cluster, error))
        return false;
    if (asprintf(&cdir, "%s/%s", dir, cluster) < 0) {
        sa_error_nomem(error);
        return false;
    }
    d = opendir(cdir);
    if (!d && errno != ENOENT) {
        sa_error_set(error, SA_ERR_IO, errno, "cannot read directory %s: %s", cdir, strerror(errno));
        goto done;
    }
    while (d && (de = readdir(d)) != NULL) {
        struct stat st;
        int64_t at;
        size_t len = strlen(de->d_name);
        /* <ts> or <ts>-N directories */
        if (len < 16 || !sa_spool_parse_at(de->d_name, &at) || (len > 16 && de->d_name[16] != '-'))
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (st.st_uid != geteuid()) {
            sa_log(SA_LOG_WARN, "%s/%s: belongs to another user: skipped, never read", cdir, de->d_name);
            continue;
        }
        if (!SA_VEC_GROW(v, cap, n, 1, 16)) {
            sa_error_nomem(error);
            goto done;
        }
        if (!load_dir(cdir, de->d_name, at, &v[n], error))
            goto done;
        n++;
    }
    if (d && !add_legacy(dir, cluster, cdir, &v, &n, &cap, error))
        goto done;
    if (n > 1)
        qsort(v, n, sizeof *v, snap_cmp);
    ok = true;
done:
    if (d)
        closedir(d);
    free(cdir);
    if (ok) {
        *out = v;
        *nout = n;
    } else {
        sa_snapdir_list_free(v, n);
    }
    return ok;
}

bool sa_snapdir_has_mark(const sa_snapdir_t *s, const char *mark)
{
    char *p = NULL;
    bool has;
    if (s->legacy || asprintf(&p, "%s/%s", s->path, mark) < 0)
        return false;
    has = access(p, F_OK) == 0;
    free(p);
    return has;
}

bool sa_snapdir_set_mark(const sa_snapdir_t *s, const char *mark, sa_error_t *error)
{
    char *p = NULL;
    int fd;
    bool ok;
    if (s->legacy)
        return true;
    if (asprintf(&p, "%s/%s", s->path, mark) < 0) {
        sa_error_nomem(error);
        return false;
    }
    fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    ok = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && sa_fsync_dir(s->path);
    if (!ok)
        write_error(error, p, errno);
    free(p);
    return ok;
}

bool sa_snapdir_drop(const sa_snapdir_t *s, sa_error_t *error)
{
    char *parent;
    bool ok = true;

    if (s->legacy) {
        for (int k = 0; ok && k < SA_SNAP_KINDS; k++) {
            if (s->files[k])
                ok = sa_spool_remove(s->files[k], error);
        }
        return ok;
    }
    if (!sa_rm_tree(s->path)) {
        sa_error_set(error, SA_ERR_IO, errno, "cannot remove %s: %s", s->path, strerror(errno));
        return false;
    }
    parent = sa_parent_of(s->path);
    if (!parent)
        return sa_error_nomem(error);
    ok = sa_fsync_dir(parent) || errno == ENOENT;
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "cannot sync the directory above %s: %s", s->path, strerror(errno));
    free(parent);
    return ok;
}

/* Copies the selected inputs (and meta) of s into a new snapshot under parent. */
static bool copy_into(const sa_snapdir_t *s, const char *parent, unsigned kinds, const char *reason,
                      sa_error_t *error)
{
    sa_snapshot_txn_t *t = begin_in(parent, s->at, error);
    if (!t)
        return false;
    for (int k = 0; k < SA_SNAP_KINDS; k++) {
        if (s->files[k] && (kinds == 0 || (kinds & (1u << k))) &&
            !sa_snapshot_copy_input(t, k, s->files[k], UINT64_MAX, error)) {
            sa_snapshot_abort(t);
            return false;
        }
    }
    sa_snapshot_set_meta(t, s->meta);
    if (reason && !(t->reason = strdup(reason))) {
        sa_snapshot_abort(t);
        sa_error_nomem(error);
        return false;
    }
    return sa_snapshot_commit(t, NULL, error);
}

bool sa_snapdir_copy_to(const sa_snapdir_t *s, const char *dir, const char *cluster, sa_error_t *error)
{
    char *parent = NULL;
    bool ok;
    if (!sa_spool_check_names(dir, cluster, error))
        return false;
    if (asprintf(&parent, "%s/%s", dir, cluster) < 0) {
        sa_error_nomem(error);
        return false;
    }
    ok = copy_into(s, parent, 0, NULL, error);
    free(parent);
    return ok;
}

bool sa_snapdir_reject(const sa_snapdir_t *s, const char *dir, const char *cluster, unsigned kinds,
                       const char *reason, sa_error_t *error)
{
    char *parent = NULL, *line = NULL;
    bool ok, rest = false;

    if (asprintf(&parent, "%s/%s/rejected", dir, cluster) < 0 || asprintf(&line, "%s\n", reason) < 0) {
        free(parent);
        sa_error_nomem(error);
        return false;
    }
    ok = copy_into(s, parent, kinds, line, error);
    free(parent);
    free(line);
    if (!ok)
        return false;
    /* the copy is durable: now the originals go */
    for (int k = 0; k < SA_SNAP_KINDS; k++) {
        if (!s->files[k])
            continue;
        if (kinds == 0 || (kinds & (1u << k))) {
            if (unlink(s->files[k]) != 0 && errno != ENOENT) {
                sa_error_set(error, SA_ERR_IO, errno, "cannot remove %s: %s", s->files[k], strerror(errno));
                return false;
            }
        } else {
            rest = true;
        }
    }
    if (!rest)
        return sa_snapdir_drop(s, error);
    return s->legacy || sa_fsync_dir(s->path);
}
