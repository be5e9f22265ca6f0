/*
 * sa_exec.h - run one command (a Slurm CLI) safely and capture its output.
 *
 * The command is run from an argv array, never through a shell, with a PATH lookup
 * when argv[0] has no '/'. The child gets:
 *   - the parent's environment with TZ=UTC and SLURM_TIME_FORMAT=standard
 *     (replacing any inherited value, never duplicated), then opts->env on top
 *     (an entry there replaces an inherited one of the same name, TZ included);
 *   - stdin from /dev/null, stdout and stderr to pipes, no other descriptor
 *     (every other fd is closed in the child, whatever its close-on-exec flag);
 *   - its own process group, default signal dispositions and an empty signal mask.
 *
 * stdout and stderr are read concurrently with poll(). stdout is kept up to
 * opts->max_output bytes (fixed when the call starts); one byte more kills the
 * command and fails the call. stderr keeps its first SA_EXEC_STDERR_CAP bytes and
 * the rest is read and discarded (res->err_truncated), so a chatty command is
 * never blocked on a full pipe and never grows memory.
 *
 * On a timeout or an output overflow the whole process group gets SIGTERM, then
 * SIGKILL after opts->kill_grace_ms; the group also gets SIGKILL after a normal
 * exit, so a Slurm command never leaves a background process behind. The child is
 * reaped in every path (no zombies). The parent never writes to the child, so it
 * never sees SIGPIPE from it.
 *
 * Because the command has its own process group, a terminal's Ctrl-C does not
 * reach it; if the caller itself is killed, the command runs on until it ends
 * (a systemd stop still kills the whole cgroup).
 *
 * Limitation: the caller must not set SIGCHLD to SIG_IGN (the kernel would then
 * reap the child itself and its status would be lost; sa_exec_run reports that as
 * an error) and must not reap children with waitpid(-1) in another thread.
 */
#ifndef SA_EXEC_H
#define SA_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"

#define SA_EXEC_DEFAULT_TIMEOUT_MS 60000
#define SA_EXEC_DEFAULT_KILL_GRACE_MS 2000
#define SA_EXEC_DEFAULT_MAX_OUTPUT ((size_t)256 * 1024 * 1024)
#define SA_EXEC_STDERR_CAP ((size_t)64 * 1024)

/* Options; a NULL pointer or a zero member means the default. */
typedef struct {
    int64_t timeout_ms;      /* wall-clock limit; 0 = SA_EXEC_DEFAULT_TIMEOUT_MS        */
    int64_t kill_grace_ms;   /* SIGTERM -> SIGKILL delay; 0 = SA_EXEC_DEFAULT_KILL_GRACE_MS */
    size_t max_output;       /* stdout cap in bytes; 0 = SA_EXEC_DEFAULT_MAX_OUTPUT     */
    const char *const *env;  /* extra "NAME=VALUE" entries, NULL-terminated, or NULL   */
    bool out_to_fd;          /* stdout goes to out_fd (capped the same), not to res->out  */
    int out_fd;              /* with out_to_fd: an open file; a write error (full disk) fails
                                the call: SA_ERR_SPOOL for ENOSPC/EDQUOT, else SA_ERR_IO */
} sa_exec_opts_t;

/*
 * What happened. An output parameter: sa_exec_run initialises it (even when it
 * fails) without freeing what it held, so clear a reused one first; the caller
 * releases it with sa_exec_result_clear(). Output read before a failure is kept
 * (a failing `squeue --json` prints its errors[] on stdout).
 */
typedef struct {
    char *out;            /* stdout bytes, NUL-terminated (may hold NULs); NULL only on OOM;
                             "" with out_to_fd */
    size_t out_len;       /* bytes of stdout (written to out_fd with out_to_fd) */
    char *err;            /* stderr (first SA_EXEC_STDERR_CAP bytes), NUL-terminated; NULL only on OOM */
    size_t err_len;
    bool err_truncated;   /* stderr was longer than SA_EXEC_STDERR_CAP                  */
    bool started;         /* the command was started (a process existed)                */
    bool exited;          /* it exited normally: exit_status is valid                   */
    int exit_status;      /* 0..255 when exited, else -1                                */
    int term_signal;      /* the signal that ended it, or 0                             */
    bool timed_out;       /* the timeout fired and the group was killed                 */
    bool output_exceeded; /* stdout went past max_output and the group was killed       */
    int64_t elapsed_ms;   /* from start to reaping, monotonic clock                     */
} sa_exec_result_t;

/*
 * Runs argv (argv[0] = command, NULL-terminated) and waits for it, filling *res.
 * A command without '/' is looked up in the PATH of the calling process.
 *
 * Returns true only if the command exited with status 0 within the timeout and
 * within the output cap. A zero exit with text on stderr is success: the caller
 * sees res->err and decides (Slurm prints warnings there).
 *
 * Returns false with a one-line SA_ERR_IO error naming the command (argv[0]'s base
 * name and argv[1]; never an environment value) when:
 *   - it cannot start: "squeue: not found on PATH" (code = errno);
 *   - it timed out: "squeue --json timed out after 60 s and was killed" (ETIMEDOUT);
 *   - stdout exceeded the cap: "output of squeue --json exceeded 256 MiB" (EFBIG);
 *   - it exited non-zero: "squeue --json exited with status 1: \"<stderr line>\""
 *     (code = the status; the first non-empty stderr line, quoted);
 *   - a signal ended it: "squeue --json was killed by signal 9 (Killed)" (code = signal).
 * A bad argument (empty argv, an env entry without '=') is SA_ERR_USAGE.
 */
bool sa_exec_run(const char *const argv[], const sa_exec_opts_t *opts, sa_exec_result_t *res,
                 sa_error_t *error);

/* Frees what *res holds and re-initialises it. Accepts NULL. */
void sa_exec_result_clear(sa_exec_result_t *res);

#endif
