/*
 * sa_alloc_url.c - the awards from an endpoint, and their last good copy (sa_alloc_url.h).
 */
#include "sa_alloc_url.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_alloc.h"
#include "sa_fsutil.h"
#include "sa_http.h"
#include "sa_map.h"
#include "sa_rutil.h"

#define ALLOC_MAX_DEFAULT ((size_t)4 << 20)
#define AUTH_MAX 4096 /* a credentials file: one line */

bool sa_alloc_is_url(const char *s)
{
    return s && (strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0);
}

char *sa_alloc_copy_path(const char *url, const char *site_dir)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    unsigned long long h = (unsigned long long)sa_fnv1a(url, strlen(url));

    if (site_dir) {
        size_t n = strlen(site_dir);
        while (n > 1 && site_dir[n - 1] == '/') /* "site/" is beside as "site" is */
            n--;
        return sa_rprintf("%.*s.allocations.json", (int)n, site_dir);
    }
    if (xdg && *xdg == '/') /* the XDG rule: a relative path is ignored */
        return sa_rprintf("%s/slurm-report/allocations-%016llx.json", xdg, h);
    if (home && *home)
        return sa_rprintf("%s/.cache/slurm-report/allocations-%016llx.json", home, h);
    return NULL;
}

/*
 * Reads the regular file path whole (at most max bytes) into *data (caller frees, NUL
 * added; *len its length) and its modification time into *mtime. what names it in
 * messages. Another user's link on its path is refused; with CHECK_OWNER a file of
 * another user, with CHECK_MODE (a secret) one that group or others may read
 * (SA_ERR_USAGE). The file not being there: false with code ENOENT.
 */
enum { CHECK_OWNER = 1, CHECK_MODE = 2 };
static bool read_small(const char *path, size_t max, const char *what, unsigned checks, char **data, size_t *len,
                       int64_t *mtime, sa_error_t *error)
{
    struct stat st;
    size_t cap = 0;
    char *buf = NULL;
    int fd;
    bool ok = false;

    *data = NULL;
    *len = 0;
    if (!sa_path_links_ours(path, what, error))
        return false;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        sa_error_set(error, errno == ENOENT ? SA_ERR_USAGE : SA_ERR_IO, errno, "%s %s: %s", what, path,
                     strerror(errno));
        return false;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "%s %s: not a regular file", what, path);
        goto done;
    }
    if ((checks & CHECK_OWNER) && !sa_file_is_ours(fd, path, error)) {
        error->domain = SA_ERR_USAGE;
        goto done;
    }
    if ((checks & CHECK_MODE) && (st.st_mode & 077)) {
        sa_error_set(error, SA_ERR_USAGE, EPERM, "%s %s: its group or others may read it (mode %04o): chmod 600 it",
                     what, path, (unsigned)(st.st_mode & 07777));
        goto done;
    }
    cap = (size_t)st.st_size < max ? (size_t)st.st_size : max;
    if (!(buf = malloc(cap + 1))) {
        sa_error_nomem(error);
        goto done;
    }
    if ((size_t)st.st_size > max || !sa_read_upto(fd, buf, cap, len)) {
        if ((size_t)st.st_size > max || errno == EFBIG)
            sa_error_set(error, SA_ERR_USAGE, EFBIG, "%s %s: larger than %zu bytes", what, path, max);
        else
            sa_error_set(error, SA_ERR_IO, errno, "%s %s: %s", what, path, strerror(errno));
        goto done;
    }
    buf[*len] = '\0';
    *data = buf;
    *mtime = (int64_t)st.st_mtime;
    buf = NULL;
    ok = true;
done:
    if (buf) {
        memset(buf, 0, cap + 1);
        free(buf);
    }
    close(fd);
    return ok;
}

/*
 * Credentials: "bearer TOKEN" or "basic USER:PASSWORD" (line owns the text, size bytes,
 * zeroed when freed: parsing cuts it with NULs; the others point into it).
 */
typedef struct {
    char *line;
    size_t size;
    const char *bearer, *user, *password;
} auth_t;

static void auth_clear(auth_t *a)
{
    if (a->line) {
        memset(a->line, 0, a->size);
        free(a->line);
    }
    memset(a, 0, sizeof *a);
}

/* Reads a's first line (a->line, its text) as "bearer TOKEN" or "basic USER:PASSWORD"; where names it. */
static bool auth_parse(auth_t *a, const char *where, sa_error_t *error)
{
    char *s = a->line, *e;

    s[strcspn(s, "\r\n")] = '\0';
    for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t');)
        *--e = '\0';
    if (strncasecmp(s, "bearer ", 7) == 0 && s[7 + strspn(s + 7, " \t")]) {
        a->bearer = s + 7 + strspn(s + 7, " \t");
        return true;
    }
    if (strncasecmp(s, "basic ", 6) == 0 && strchr(s + 6, ':')) {
        char *u = s + 6 + strspn(s + 6, " \t"), *colon = strchr(u, ':');
        *colon = '\0';
        a->user = u;
        a->password = colon + 1;
        if (*u)
            return true;
    }
    /* never the text: it is a secret */
    sa_error_set(error, SA_ERR_USAGE, 0, "%s: expected one line \"bearer TOKEN\" or \"basic USER:PASSWORD\"", where);
    return false;
}

/*
 * The credentials of the request: src->auth_file (checked as a secret), else
 * SLURM_REPORT_ALLOCATIONS_AUTH, else $CREDENTIALS_DIRECTORY/allocations-auth (made by
 * systemd: not checked), else none (a->line NULL).
 */
static bool auth_read(const sa_alloc_url_t *src, auth_t *a, sa_error_t *error)
{
    const char *env = getenv("SLURM_REPORT_ALLOCATIONS_AUTH"), *creds = getenv("CREDENTIALS_DIRECTORY");
    size_t len;
    int64_t mtime;
    char *path = NULL, where[600];
    bool ok;

    memset(a, 0, sizeof *a);
    if (src->auth_file) {
        snprintf(where, sizeof where, "--allocations-auth %s", src->auth_file);
        if (!read_small(src->auth_file, AUTH_MAX, "--allocations-auth", CHECK_OWNER | CHECK_MODE, &a->line, &len,
                        &mtime, error))
            return false;
        a->size = len + 1;
        return auth_parse(a, where, error);
    }
    if (env && *env) {
        if (!(a->line = strdup(env)))
            return sa_error_nomem(error);
        a->size = strlen(env) + 1;
        return auth_parse(a, "SLURM_REPORT_ALLOCATIONS_AUTH", error);
    }
    if (!creds || !*creds)
        return true;
    if (!(path = sa_rprintf("%s/allocations-auth", creds)))
        return sa_error_nomem(error);
    if (access(path, F_OK) != 0) {
        free(path);
        return true;
    }
    snprintf(where, sizeof where, "systemd credential %s", path);
    ok = read_small(path, AUTH_MAX, "systemd credential", 0, &a->line, &len, &mtime, error);
    free(path);
    if (!ok)
        return false;
    a->size = len + 1;
    return auth_parse(a, where, error);
}

/*
 * Keeps data as the last good copy at src->copy_path (its directory made, private, when
 * missing: the cache's); a failure is a warning.
 */
static void keep_copy(const sa_alloc_url_t *src, const char *data, size_t len, FILE *warn)
{
    sa_error_t err;
    char *dir = sa_parent_of(src->copy_path);
    bool ok = dir && (access(dir, F_OK) == 0 || sa_private_dir(dir, "the allocations' cache directory", &err));

    if (!dir)
        sa_error_nomem(&err);
    if (ok)
        ok = sa_write_file_atomic(src->copy_path, -1, data, len, 0600, &err);
    if (!ok && warn)
        fprintf(warn, "slurm-report: warning: the last good copy of the awards was not kept: %s\n", err.message);
    free(dir);
}

bool sa_alloc_fetch(const sa_alloc_url_t *src, FILE *warn, char **json, size_t *len, sa_error_t *error)
{
    sa_http_req_t req = {.url = src->url, .timeout_s = src->timeout_s,
                         .max_bytes = src->max_bytes ? src->max_bytes : ALLOC_MAX_DEFAULT};
    char *red = sa_http_redact(src->url, true), *what = NULL, *copy = NULL;
    size_t copy_len = 0;
    sa_awards_t aw;
    sa_buf_t b;
    sa_error_t cause, cerr;
    auth_t auth;
    int64_t mtime = 0;
    long status;
    bool ok = false;

    *json = NULL;
    *len = 0;
    sa_buf_init(&b, 0);
    if (!red || !(what = sa_rprintf("allocations %s", red))) {
        free(red);
        return sa_error_nomem(error);
    }
    if (!auth_read(src, &auth, error))
        goto done;
    req.bearer = auth.bearer;
    req.user = auth.user;
    req.password = auth.password;
    req.what = what;
    /* the answer is kept only when it reads as an allocations file */
    if (sa_http_request(&req, true, &b, &status, &cause) && sa_awards_parse(b.data, b.len, what, &aw, &cause)) {
        sa_awards_clear(&aw);
        if (!(*json = malloc(b.len + 1))) {
            sa_error_nomem(error);
            goto done;
        }
        memcpy(*json, b.data ? b.data : "", b.len);
        (*json)[b.len] = '\0';
        *len = b.len;
        if (src->copy_path)
            keep_copy(src, *json, *len, warn);
        ok = true;
        goto done;
    }
    if (cause.domain == SA_ERR_NOMEM) {
        *error = cause;
        goto done;
    }
    if (!src->copy_path) {
        sa_error_set(error, SA_ERR_ENDPOINT, 0, "%s, and no last good copy is kept (neither HOME nor "
                     "XDG_CACHE_HOME is set)", cause.message);
        goto done;
    }
    if (!read_small(src->copy_path, req.max_bytes, "the last good copy", CHECK_OWNER, &copy, &copy_len, &mtime,
                    &cerr) ||
        !sa_awards_parse(copy, copy_len, src->copy_path, &aw, &cerr)) {
        sa_error_set(error, SA_ERR_ENDPOINT, 0, "%s, and no last good copy (%s)", cause.message,
                     cerr.code == ENOENT ? "none kept yet" : cerr.message);
        free(copy);
        goto done;
    }
    sa_awards_clear(&aw);
    if (warn)
        fprintf(warn, "slurm-report: warning: %s: using the last good copy, of %s (%s)\n", cause.message,
                sa_riso(mtime), src->copy_path);
    *json = copy;
    *len = copy_len;
    ok = true;
done:
    auth_clear(&auth);
    sa_buf_clear(&b);
    free(red);
    free(what);
    return ok;
}
