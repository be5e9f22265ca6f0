/*
 * sa_exec.c - run one command (a Slurm CLI) safely and capture its output
 * (see sa_exec.h).
 *
 * posix_spawn with a process group of its own, pipes read with poll() into
 * buffers whose cap is fixed at start, a deadline, and a SIGTERM/SIGKILL of the
 * whole group. The child is reaped only at the very end, so its pid (and thus its
 * process group id) cannot be reused while we may still signal the group.
 */
#define _GNU_SOURCE

#include "sa_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How often the loop looks at the child while its pipes stay open (ms). */
#define POLL_SLICE_MS 100
/* Size of one read(). */
#define READ_CHUNK (64 * 1024)

/* A byte buffer whose cap is fixed at creation (curl's dynbuf idea). */
typedef struct {
    char *data;     /* always NUL-terminated */
    size_t len;     /* bytes kept */
    size_t alloc;   /* bytes allocated (> len) */
    size_t cap;     /* most bytes ever kept */
    bool discard;   /* past the cap: drop bytes (true) or report overflow (false) */
    bool truncated; /* bytes were dropped */
    int sink;       /* >= 0: bytes go to this file descriptor, not to data (len counts them) */
} capbuf_t;

/* Milliseconds on the monotonic clock. */
static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Allocates an empty buffer of at most cap bytes. Returns false on OOM. */
static bool capbuf_init(capbuf_t *b, size_t cap, bool discard)
{
    memset(b, 0, sizeof *b);
    b->sink = -1;
    b->cap = cap;
    b->discard = discard;
    b->alloc = (cap < READ_CHUNK ? cap : READ_CHUNK) + 1;
    b->data = malloc(b->alloc);
    if (!b->data)
        return false;
    b->data[0] = '\0';
    return true;
}

/*
 * Appends n bytes. Past the cap, a discarding buffer keeps what fits and sets
 * ->truncated; otherwise nothing is appended and false is returned (overflow).
 * Returns false with errno = ENOMEM on allocation failure.
 */
static bool capbuf_append(capbuf_t *b, const char *src, size_t n)
{
    size_t room = b->cap - b->len;

    if (n > room) {
        if (!b->discard) {
            errno = EFBIG;
            return false;
        }
        b->truncated = true;
        n = room;
    }
    if (n == 0)
        return true;
    if (b->sink >= 0) {
        while (n > 0) {
            ssize_t w = write(b->sink, src, n);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return false; /* errno: ENOSPC, EDQUOT, EIO... */
            src += w;
            n -= (size_t)w;
            b->len += (size_t)w;
        }
        return true;
    }
    if (b->len + n + 1 > b->alloc) {
        size_t want = b->alloc;
        char *p;

        while (want < b->len + n + 1)
            want = want > SIZE_MAX / 2 ? SIZE_MAX : want * 2;
        if (want > b->cap + 1)
            want = b->cap + 1;
        p = realloc(b->data, want);
        if (!p) {
            errno = ENOMEM;
            return false;
        }
        b->data = p;
        b->alloc = want;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

/* "squeue --json": argv[0]'s base name and argv[1], control characters folded. */
static void command_label(const char *const argv[], char *out, size_t outsz)
{
    const char *base = strrchr(argv[0], '/');
    char q0[96], q1[96];

    base = (base && base[1]) ? base + 1 : argv[0];
    sa_error_quote(base, 64, q0, sizeof q0);
    if (argv[1]) {
        sa_error_quote(argv[1], 64, q1, sizeof q1);
        snprintf(out, outsz, "%s %s", q0, q1);
    } else {
        snprintf(out, outsz, "%s", q0);
    }
}

/* "60 s" or "500 ms". */
static void format_duration(int64_t ms, char *out, size_t outsz)
{
    if (ms % 1000 == 0)
        snprintf(out, outsz, "%" PRId64 " s", ms / 1000);
    else
        snprintf(out, outsz, "%" PRId64 " ms", ms);
}

/* "256 MiB", "64 KiB" or "1000 bytes". */
static void format_size(size_t n, char *out, size_t outsz)
{
    if (n >= 1024 * 1024 && n % (1024 * 1024) == 0)
        snprintf(out, outsz, "%zu MiB", n / (1024 * 1024));
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(out, outsz, "%zu KiB", n / 1024);
    else
        snprintf(out, outsz, "%zu bytes", n);
}

/* Length of the name part of "NAME=VALUE" (the whole string if it has no '='). */
static size_t env_name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* True if the entries a and b ("NAME=...") set the same NAME. */
static bool env_same_name(const char *a, const char *b)
{
    size_t na = env_name_len(a);
    return na == env_name_len(b) && memcmp(a, b, na) == 0;
}

/* True if entry's name is set by one of the entries in list[0..n). */
static bool env_in(const char *entry, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (env_same_name(entry, list[i]))
            return true;
    }
    return false;
}

/*
 * Builds the child's environment: environ minus every name set below (and minus the
 * variables that may carry a MongoDB URI), then
 * TZ=UTC and SLURM_TIME_FORMAT=standard (unless extra sets them), then extra
 * (the last of two entries with one name wins). Returns a NULL-terminated array of
 * BORROWED strings (free only the array), or NULL with *error set. Error messages
 * name the index of a bad entry, never its value.
 */
static char **build_env(const char *const *extra, sa_error_t *error)
{
    static const char *const fixed[] = {"TZ=UTC", "SLURM_TIME_FORMAT=standard"};
    /* never handed to a Slurm command: they may hold a MongoDB password */
    static const char *const secret[] = {"SLURM_INGEST_MONGO_URI=", "SLURM_REPORT_MONGO_URI=",
                                         "SLURM_TEST_MONGO_URI="};
    size_t nenv = 0, nextra = 0, k = 0;
    char **env;

    for (char **e = environ; e && *e; e++)
        nenv++;
    for (; extra && extra[nextra]; nextra++) {
        const char *eq = strchr(extra[nextra], '=');
        if (!eq || eq == extra[nextra]) {
            sa_error_set(error, SA_ERR_USAGE, EINVAL,
                         "extra environment entry %zu is not of the form NAME=VALUE", nextra);
            return NULL;
        }
    }
    env = calloc(nenv + 2 + nextra + 1, sizeof *env);
    if (!env) {
        sa_error_nomem(error);
        return NULL;
    }
    for (size_t i = 0; i < nenv; i++) {
        if (env_in(environ[i], fixed, 2) || env_in(environ[i], extra, nextra) || env_in(environ[i], secret, 3))
            continue;
        env[k++] = environ[i];
    }
    for (size_t i = 0; i < 2; i++) {
        if (!env_in(fixed[i], extra, nextra))
            env[k++] = (char *)fixed[i];
    }
    for (size_t i = 0; i < nextra; i++) {
        if (!env_in(extra[i], extra + i + 1, nextra - i - 1))
            env[k++] = (char *)extra[i];
    }
    env[k] = NULL;
    return env;
}

/* Moves fd to a number >= 3 (so it cannot collide with 0-2 in the child). */
static int fd_above_stdio(int fd)
{
    int nfd;

    if (fd < 0 || fd > 2)
        return fd;
    nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return nfd;
}

/* A close-on-exec pipe with both ends >= 3. Returns false with errno set. */
static bool make_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    p[0] = fd_above_stdio(p[0]);
    p[1] = fd_above_stdio(p[1]);
    if (p[0] < 0 || p[1] < 0) {
        int saved = errno;
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
        p[0] = p[1] = -1;
        errno = saved;
        return false;
    }
    return true;
}

/* Closes *fd if open and marks it closed. */
static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* True if the child has terminated; it is NOT reaped (WNOWAIT), so its pid stays ours. */
static bool child_has_exited(pid_t pid)
{
    siginfo_t si;

    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
            return si.si_pid == pid;
        if (errno != EINTR)
            return true; /* ECHILD: someone else reaped it; nothing left to wait for */
    }
}

/*
 * Reads what is available on *fd into b. At end of file (or a read error) closes
 * *fd. Returns false only when a non-discarding buffer overflowed (errno EFBIG)
 * or memory ran out (ENOMEM).
 */
static bool drain_fd(int *fd, capbuf_t *b)
{
    char chunk[READ_CHUNK];

    for (int rounds = 0; *fd >= 0 && rounds < 16; rounds++) {
        ssize_t n = read(*fd, chunk, sizeof chunk);
        if (n > 0) {
            if (!capbuf_append(b, chunk, (size_t)n))
                return false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        close_fd(fd); /* 0 = end of file; another error: nothing more to read */
    }
    return true;
}

/* Sleeps ms milliseconds (EINTR just ends the nap early). */
static void nap_ms(int64_t ms)
{
    if (ms > 0)
        poll(NULL, 0, (int)ms);
}

/* Copies the first non-empty line of s (at most max bytes) into out, control chars folded. */
static void first_line(const char *s, char *out, size_t outsz, size_t max)
{
    char line[512];
    size_t n = 0;

    while (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')
        s++;
    while (s[n] && s[n] != '\n' && s[n] != '\r' && n < sizeof line - 1)
        n++;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    memcpy(line, s, n);
    line[n] = '\0';
    sa_error_quote(line, max, out, outsz);
}

/* Fills *error for a command that could not be started (err = posix_spawn's result). */
static void set_spawn_error(const char *cmd, int err, sa_error_t *error)
{
    char q[160];
    bool has_slash = strchr(cmd, '/') != NULL;

    sa_error_quote(cmd, 128, q, sizeof q);
    if (err == ENOENT && !has_slash)
        sa_error_set(error, SA_ERR_IO, err, "%s: not found on PATH", q);
    else if (err == ENOENT)
        sa_error_set(error, SA_ERR_IO, err, "%s: no such file", q);
    else if (err == EACCES)
        sa_error_set(error, SA_ERR_IO, err, "%s: permission denied (cannot execute)", q);
    else
        sa_error_set(error, SA_ERR_IO, err, "%s: cannot run: %s", q, strerror(err));
}

void sa_exec_result_clear(sa_exec_result_t *res)
{
    if (!res)
        return;
    free(res->out);
    free(res->err);
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
}

/*
 * Starts argv in its own process group with stdin from /dev/null and stdout and
 * stderr to out_w and err_w. Returns posix_spawn's result (0 or an errno value).
 */
static int spawn_child(const char *const argv[], char **env, int out_w, int err_w, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t mask, defaults;
    static const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGALRM,
                                SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU, SIGXFSZ, SIGXCPU};
    int rc;

    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        return rc;
    if ((rc = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigemptyset(&mask);
    sigemptyset(&defaults);
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
        sigaddset(&defaults, reset[i]);

    if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, out_w, 1)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, err_w, 2)) != 0)
        goto done;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* descriptors opened elsewhere without O_CLOEXEC (a library's socket) stay out */
    if ((rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0)
        goto done;
#endif
    if ((rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                  POSIX_SPAWN_SETSIGDEF)) != 0 ||
        (rc = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
        (rc = posix_spawnattr_setsigmask(&attr, &mask)) != 0 ||
        (rc = posix_spawnattr_setsigdefault(&attr, &defaults)) != 0)
        goto done;

    if (strchr(argv[0], '/'))
        rc = posix_spawn(pid, argv[0], &fa, &attr, (char *const *)argv, env);
    else
        rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, env);

done:
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* One running command: its pid and our read ends of its pipes (-1 once closed). */
typedef struct {
    pid_t pid;
    int out_fd, err_fd;
    capbuf_t *out, *err;
    const char *label;
    bool exited;
} child_t;

/*
 * Reads both pipes until the child is gone and they are at end of file (a leftover
 * process holding them gets grace_ms more), or the deadline passes (res->timed_out), or
 * the output is too large (res->output_exceeded). False with *error set when reading or
 * keeping the output fails.
 */
static bool pump(child_t *c, int64_t deadline, int64_t grace_ms, sa_exec_result_t *res, sa_error_t *error)
{
    int64_t drain_deadline = 0;
    int saved;

    for (;;) {
        struct pollfd pfd[2];
        nfds_t nfd = 0;
        int64_t now, wait;

        if (!c->exited)
            c->exited = child_has_exited(c->pid);
        if (c->exited && c->out_fd < 0 && c->err_fd < 0)
            return true;
        now = now_ms();
        if (c->exited) {
            /* a leftover process still holds the pipes: read a little longer, then stop */
            if (drain_deadline == 0)
                drain_deadline = now + grace_ms;
            else if (now >= drain_deadline)
                return true;
        } else if (now >= deadline) {
            res->timed_out = true;
            return true;
        }
        wait = (c->exited ? drain_deadline : deadline) - now;
        if (wait > POLL_SLICE_MS)
            wait = POLL_SLICE_MS;
        if (c->out_fd >= 0)
            pfd[nfd++] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
        if (c->err_fd >= 0)
            pfd[nfd++] = (struct pollfd){.fd = c->err_fd, .events = POLLIN};
        if (nfd == 0) {
            nap_ms(wait < 10 ? wait : 10); /* output closed, process still running */
            continue;
        }
        if (poll(pfd, nfd, (int)wait) < 0) {
            if (errno == EINTR)
                continue;
            saved = errno;
            sa_error_set(error, SA_ERR_IO, saved, "%s: poll: %s", c->label, strerror(saved));
            return false;
        }
        if (!drain_fd(&c->out_fd, c->out)) {
            if (errno == EFBIG) {
                res->output_exceeded = true;
                return true;
            }
            saved = errno;
            if (saved != ENOMEM)
                sa_error_set(error, saved == ENOSPC || saved == EDQUOT ? SA_ERR_SPOOL : SA_ERR_IO, saved,
                             "%s: cannot keep its output: %s", c->label, strerror(saved));
            else
                sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "%s: out of memory reading its output", c->label);
            return false;
        }
        if (!drain_fd(&c->err_fd, c->err)) {
            sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "%s: out of memory reading its output", c->label);
            return false;
        }
    }
}

/*
 * Ends the command: if it has not exited (timeout, overflow, poll or memory failure), asks
 * its whole group to stop, closing our ends so a writer gets EPIPE rather than blocking,
 * and gives it the grace period. The group always gets SIGKILL at the end: nothing the
 * command started outlives it. The leader is still unreaped here, so its pid and group id
 * cannot have been reused. Then collects its status; false with *error set if it cannot.
 */
static bool stop_and_reap(child_t *c, int64_t grace_ms, int *status, sa_error_t *error)
{
    int saved;

    if (!c->exited) {
        int64_t until;
        close_fd(&c->out_fd);
        close_fd(&c->err_fd);
        kill(-c->pid, SIGTERM);
        until = now_ms() + grace_ms;
        while (!(c->exited = child_has_exited(c->pid)) && now_ms() < until)
            nap_ms(10);
    }
    kill(-c->pid, SIGKILL);
    while (waitpid(c->pid, status, 0) < 0) {
        if (errno == EINTR)
            continue;
        saved = errno;
        sa_error_set(error, SA_ERR_IO, saved, "%s: cannot collect its exit status: %s", c->label, strerror(saved));
        return false;
    }
    return true;
}

/* What the command's end means: true for exit status 0, else *error says why not. */
static bool judge(const sa_exec_result_t *res, int status, const capbuf_t *err, const char *label,
                  int64_t timeout_ms, size_t max_output, sa_error_t *error)
{
    char what[64], line[256];

    if (res->timed_out) {
        format_duration(timeout_ms, what, sizeof what);
        sa_error_set(error, SA_ERR_IO, ETIMEDOUT, "%s timed out after %s and was killed", label, what);
    } else if (res->output_exceeded) {
        format_size(max_output, what, sizeof what);
        sa_error_set(error, SA_ERR_IO, EFBIG, "output of %s exceeded %s", label, what);
    } else if (res->term_signal) {
        sa_error_set(error, SA_ERR_IO, res->term_signal, "%s was killed by signal %d (%s)", label,
                     res->term_signal, strsignal(res->term_signal));
    } else if (!res->exited) {
        sa_error_set(error, SA_ERR_IO, 0, "%s ended with an unknown status %d", label, status);
    } else if (res->exit_status != 0) {
        first_line(err->data, line, sizeof line, 200);
        if (line[0])
            sa_error_set(error, SA_ERR_IO, res->exit_status, "%s exited with status %d: \"%s\"", label,
                         res->exit_status, line);
        else
            sa_error_set(error, SA_ERR_IO, res->exit_status, "%s exited with status %d (nothing on stderr)",
                         label, res->exit_status);
    } else {
        return true;
    }
    return false;
}

bool sa_exec_run(const char *const argv[], const sa_exec_opts_t *opts, sa_exec_result_t *res,
                 sa_error_t *error)
{
    int64_t timeout_ms = SA_EXEC_DEFAULT_TIMEOUT_MS, grace_ms = SA_EXEC_DEFAULT_KILL_GRACE_MS;
    size_t max_output = SA_EXEC_DEFAULT_MAX_OUTPUT;
    capbuf_t out = {0}, err = {0};
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    char **env = NULL;
    char label[200];
    child_t c;
    int64_t start = now_ms();
    bool ok = false, failed;
    int status = 0, rc, saved;

    memset(res, 0, sizeof *res); /* an output parameter: its old contents are not freed */
    res->exit_status = -1;
    memset(&c, 0, sizeof c);
    c.pid = -1;
    c.out_fd = c.err_fd = -1;
    if (opts && opts->timeout_ms > 0)
        timeout_ms = opts->timeout_ms;
    if (opts && opts->kill_grace_ms > 0)
        grace_ms = opts->kill_grace_ms;
    if (opts && opts->max_output > 0)
        max_output = opts->max_output;

    if (!capbuf_init(&out, max_output, false) || !capbuf_init(&err, SA_EXEC_STDERR_CAP, true)) {
        sa_error_nomem(error);
        goto done;
    }
    if (opts && opts->out_to_fd)
        out.sink = opts->out_fd;
    if (!argv || !argv[0] || !argv[0][0]) {
        sa_error_set(error, SA_ERR_USAGE, EINVAL, "no command to run");
        goto done;
    }
    command_label(argv, label, sizeof label);
    if (!(env = build_env(opts ? opts->env : NULL, error))) {
        sa_error_prefix(error, "%s", label);
        goto done;
    }
    if (!make_pipe(out_p) || !make_pipe(err_p)) {
        saved = errno;
        sa_error_set(error, SA_ERR_IO, saved, "%s: cannot create a pipe: %s", label, strerror(saved));
        goto done;
    }
    if (fcntl(out_p[0], F_SETFL, O_NONBLOCK) != 0 || fcntl(err_p[0], F_SETFL, O_NONBLOCK) != 0) {
        saved = errno;
        sa_error_set(error, SA_ERR_IO, saved, "%s: fcntl: %s", label, strerror(saved));
        goto done;
    }

    start = now_ms();
    rc = spawn_child(argv, env, out_p[1], err_p[1], &c.pid);
    close_fd(&out_p[1]);
    close_fd(&err_p[1]);
    if (rc != 0) {
        c.pid = -1;
        set_spawn_error(argv[0], rc, error);
        goto done;
    }
    res->started = true;
    c.out_fd = out_p[0];
    c.err_fd = err_p[0];
    out_p[0] = err_p[0] = -1; /* c owns them now */
    c.out = &out;
    c.err = &err;
    c.label = label;

    failed = !pump(&c, start + timeout_ms, grace_ms, res, error);
    if (!stop_and_reap(&c, grace_ms, &status, failed ? NULL : error)) {
        c.pid = -1;
        res->elapsed_ms = now_ms() - start;
        goto done;
    }
    c.pid = -1;
    res->elapsed_ms = now_ms() - start;
    if (WIFEXITED(status)) {
        res->exited = true;
        res->exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->term_signal = WTERMSIG(status);
    }
    if (!failed) /* else a poll or memory error, set above */
        ok = judge(res, status, &err, label, timeout_ms, max_output, error);

done:
    if (c.pid > 0) { /* only reached on an internal error after the start */
        kill(-c.pid, SIGKILL);
        while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    close_fd(&c.out_fd);
    close_fd(&c.err_fd);
    close_fd(&out_p[0]);
    close_fd(&out_p[1]);
    close_fd(&err_p[0]);
    close_fd(&err_p[1]);
    free(env);
    res->out = out.data;
    res->out_len = out.len;
    res->err = err.data;
    res->err_len = err.len;
    res->err_truncated = err.truncated;
    if (!res->started)
        res->elapsed_ms = now_ms() - start;
    return ok;
}
