/*
 * test_exec.c - sa_exec_run: capture, environment, timeouts that kill the whole
 * process group, output caps, exit statuses, signals.
 *
 * The commands are fake Slurm CLIs written by the tests as /bin/sh scripts into a
 * temporary directory and run by path (or through PATH); sa_exec itself never
 * uses a shell. The test process is a child subreaper, so grandchildren orphaned
 * by a killed fake command are reparented to it and can be checked for death.
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sa_exec.h"

/* A fresh temporary directory for one test's fake commands. */
static char *make_tmpdir(void)
{
    char *d = strdup("/tmp/sa-test-exec.XXXXXX");
    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

/* Removes the fake commands in dir and dir itself (no subdirectories are made). */
static void remove_tmpdir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[512];

    assert_non_null(d);
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    free(dir);
}

/* Writes an executable "#!/bin/sh" script dir/name with body; returns its path (static). */
static const char *fake_command(const char *dir, const char *name, const char *body)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
    return path;
}

/* Number of open descriptors of this process. */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    assert_non_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Milliseconds on the monotonic clock. */
static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * True if pid is dead within wait_ms: reaped by us (we are a subreaper), gone, or
 * a zombie waiting for another parent.
 */
static bool pid_dies(pid_t pid, int wait_ms)
{
    long long until = mono_ms() + wait_ms;
    char path[64], buf[512];

    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return true;
        if (r < 0 && errno == ECHILD) {
            FILE *f;
            snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
            f = fopen(path, "r");
            if (!f)
                return true;
            if (!fgets(buf, sizeof buf, f))
                buf[0] = '\0';
            fclose(f);
            char *rp = strrchr(buf, ')');
            if (rp && rp[1] == ' ' && rp[2] == 'Z')
                return true;
        }
        if (mono_ms() > until) {
            kill(pid, SIGKILL); /* the test fails; leave no stray process behind */
            return false;
        }
        usleep(20000);
    }
}

/* Reaps orphans reparented to us (we are a subreaper). */
static void reap_orphans(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* stdout, stderr and a zero status are captured exactly; stderr text is not a failure. */
static void test_capture(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "printf 'line one\\nline two\\n'\n"
                                   "printf 'squeue: warning: something odd\\n' >&2\n"
                                   "printf 'tail\\000with nul'\n"
                                   "exit 0");
    const char *argv[] = {cmd, "--json", NULL};
    sa_exec_result_t res;
    sa_error_t err;
    int fds_before = count_fds();
    static const char expect_out[] = "line one\nline two\ntail\0with nul";
    (void)state;

    sa_error_clear(&err);
    assert_true(sa_exec_run(argv, NULL, &res, &err));
    assert_int_equal(err.domain, SA_ERR_NONE);
    assert_int_equal(res.out_len, sizeof expect_out - 1);
    assert_memory_equal(res.out, expect_out, sizeof expect_out - 1);
    assert_int_equal(res.out[res.out_len], '\0');
    assert_string_equal(res.err, "squeue: warning: something odd\n");
    assert_int_equal(res.err_len, strlen("squeue: warning: something odd\n"));
    assert_false(res.err_truncated);
    assert_true(res.started);
    assert_true(res.exited);
    assert_int_equal(res.exit_status, 0);
    assert_int_equal(res.term_signal, 0);
    assert_false(res.timed_out);
    assert_false(res.output_exceeded);
    assert_true(res.elapsed_ms >= 0 && res.elapsed_ms < 5000);
    sa_exec_result_clear(&res);
    assert_null(res.out);
    sa_exec_result_clear(NULL);

    /* the child is reaped and no descriptor is left open */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    assert_int_equal(count_fds(), fds_before);
    remove_tmpdir(dir);
}

/* TZ=UTC and SLURM_TIME_FORMAT=standard replace inherited values; extra env is added. */
static void test_environment(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "echo \"$TZ|$SLURM_TIME_FORMAT|$SA_TEST_EXTRA|$SA_TEST_KEEP\"\n"
                                   "env | grep -c '^TZ='\n"
                                   "env | grep -c '^SLURM_TIME_FORMAT='");
    const char *argv[] = {cmd, NULL};
    const char *extra[] = {"SA_TEST_EXTRA=x=1", NULL};
    sa_exec_opts_t opts = {.env = extra};
    sa_exec_result_t res;
    sa_error_t err;
    char *old_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
    (void)state;

    setenv("TZ", "Europe/Berlin", 1);
    setenv("SLURM_TIME_FORMAT", "relative", 1);
    setenv("SA_TEST_KEEP", "kept", 1);
    assert_true(sa_exec_run(argv, &opts, &res, &err));
    assert_string_equal(res.out, "UTC|standard|x=1|kept\n1\n1\n");
    sa_exec_result_clear(&res);

    /* an extra entry overrides the defaults too, still without duplicates */
    const char *extra2[] = {"TZ=America/Chicago", NULL};
    opts.env = extra2;
    assert_true(sa_exec_run(argv, &opts, &res, &err));
    assert_string_equal(res.out, "America/Chicago|standard||kept\n1\n1\n");
    sa_exec_result_clear(&res);

    /* the parent's own environment is untouched */
    assert_string_equal(getenv("TZ"), "Europe/Berlin");
    if (old_tz)
        setenv("TZ", old_tz, 1);
    else
        unsetenv("TZ");
    free(old_tz);
    unsetenv("SLURM_TIME_FORMAT");
    unsetenv("SA_TEST_KEEP");
    remove_tmpdir(dir);
}

/* stdin is /dev/null, the child leads its own group, a descriptor without CLOEXEC does not leak. */
static void test_stdin_group_fds(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "sinfo",
                                   "readlink /proc/$$/fd/0\n"
                                   "if [ -e /proc/$$/fd/57 ]; then echo leaked; else echo clean; fi\n"
                                   "echo \"$$ $(cut -d' ' -f5 /proc/$$/stat)\"\n"
                                   "cat");
    const char *argv[] = {cmd, NULL};
    sa_exec_result_t res;
    sa_error_t err;
    int pid = 0, pgid = 0, fd;
    char word[32];
    (void)state;

    fd = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
    assert_true(fd >= 0);
    assert_int_equal(dup2(fd, 57), 57);
    close(fd);
    assert_true(sa_exec_run(argv, NULL, &res, &err));
    close(57);
    assert_int_equal(sscanf(res.out, "/dev/null\nclean\n%d %d", &pid, &pgid), 2);
    assert_true(pid > 0);
    assert_int_equal(pgid, pid);
    assert_int_not_equal(pgid, getpgrp());
    snprintf(word, sizeof word, "%d %d\n", pid, pgid);
    assert_non_null(strstr(res.out, word));
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/* A name without '/' is looked up in PATH; arguments arrive as given, no shell in between. */
static void test_path_lookup(void **state)
{
    char *dir = make_tmpdir();
    const char *argv[] = {"squeue", "--json", "a b;$(echo no)", "'q'", NULL};
    char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char newpath[4096];
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    fake_command(dir, "squeue", "for a in \"$@\"; do printf '[%s]' \"$a\"; done");
    snprintf(newpath, sizeof newpath, "%s:%s", dir, old_path);
    setenv("PATH", newpath, 1);
    bool ok = sa_exec_run(argv, NULL, &res, &err);
    setenv("PATH", old_path, 1);
    free(old_path);
    assert_true(ok);
    assert_string_equal(res.out, "[--json][a b;$(echo no)]['q']");
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/* Commands that cannot start. */
static void test_not_found(void **state)
{
    char *dir = make_tmpdir();
    const char *argv[] = {"sa-no-such-command-4711", "--json", NULL};
    char path[512];
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    assert_false(sa_exec_run(argv, NULL, &res, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_int_equal(err.code, ENOENT);
    assert_string_equal(err.message, "sa-no-such-command-4711: not found on PATH");
    assert_false(res.started);
    assert_non_null(res.out);
    assert_int_equal(res.out_len, 0);
    assert_string_equal(res.err, "");
    assert_int_equal(res.exit_status, -1);
    sa_exec_result_clear(&res);

    snprintf(path, sizeof path, "%s/squeue", dir);
    const char *argv2[] = {path, NULL};
    assert_false(sa_exec_run(argv2, NULL, &res, &err));
    char want[600];
    snprintf(want, sizeof want, "%s: no such file", path);
    assert_string_equal(err.message, want);
    sa_exec_result_clear(&res);

    /* present but not executable */
    fake_command(dir, "squeue", "echo hi");
    assert_int_equal(chmod(path, 0644), 0);
    assert_false(sa_exec_run(argv2, NULL, &res, &err));
    assert_int_equal(err.code, EACCES);
    snprintf(want, sizeof want, "%s: permission denied (cannot execute)", path);
    assert_string_equal(err.message, want);
    sa_exec_result_clear(&res);

    /* bad arguments */
    const char *argv3[] = {NULL};
    assert_false(sa_exec_run(argv3, NULL, &res, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    sa_exec_result_clear(&res);
    const char *bad_env[] = {"GOOD=1", "SECRETPASSWORDNOEQUALS", NULL};
    sa_exec_opts_t opts = {.env = bad_env};
    const char *argv4[] = {"true", NULL};
    assert_false(sa_exec_run(argv4, &opts, &res, &err));
    assert_int_equal(err.domain, SA_ERR_USAGE);
    assert_string_equal(err.message, "true: extra environment entry 1 is not of the form NAME=VALUE");
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/* A non-zero exit fails with the first stderr line; stdout is kept; no env value leaks. */
static void test_nonzero_exit(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "echo '{\"errors\": [{\"error\": \"Invalid user\"}]}'\n"
                                   "printf '\\n  squeue: error: Invalid user: \"bob\"\\tx  \\n' >&2\n"
                                   "printf 'second line\\n' >&2\n"
                                   "exit 1");
    const char *argv[] = {cmd, "--json", NULL};
    const char *secret_env[] = {"SLURM_INGEST_MONGO_URI=mongodb://u:hunter2@h/", NULL};
    sa_exec_opts_t opts = {.env = secret_env};
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    assert_false(sa_exec_run(argv, &opts, &res, &err));
    assert_int_equal(err.domain, SA_ERR_IO);
    assert_int_equal(err.code, 1);
    assert_string_equal(err.message,
                        "squeue --json exited with status 1: \"squeue: error: Invalid user: \"bob\"?x\"");
    assert_null(strstr(err.message, "hunter2"));
    assert_true(res.exited);
    assert_int_equal(res.exit_status, 1);
    assert_string_equal(res.out, "{\"errors\": [{\"error\": \"Invalid user\"}]}\n");
    sa_exec_result_clear(&res);

    cmd = fake_command(dir, "sacct", "exit 3");
    const char *argv2[] = {cmd, NULL};
    assert_false(sa_exec_run(argv2, NULL, &res, &err));
    assert_string_equal(err.message, "sacct exited with status 3 (nothing on stderr)");
    assert_int_equal(res.exit_status, 3);
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/*
 * A hung fake squeue that sleeps and has a background grandchild is killed at a
 * 500 ms timeout together with the grandchild, and the call returns promptly.
 */
static void test_timeout_kills_group(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "sleep 600 &\n"
                                   "echo $!\n"
                                   "sleep 600");
    const char *argv[] = {cmd, "--json", NULL};
    sa_exec_opts_t opts = {.timeout_ms = 500};
    sa_exec_result_t res;
    sa_error_t err;
    int fds_before = count_fds();
    long long t0 = mono_ms(), took;
    int gpid = 0;
    (void)state;

    assert_false(sa_exec_run(argv, &opts, &res, &err));
    took = mono_ms() - t0;
    assert_true(res.timed_out);
    assert_int_equal(err.code, ETIMEDOUT);
    assert_string_equal(err.message, "squeue --json timed out after 500 ms and was killed");
    assert_true(res.elapsed_ms >= 500);
    assert_true(took < 3000);
    assert_int_equal(res.term_signal, SIGTERM);
    assert_int_equal(sscanf(res.out, "%d", &gpid), 1);
    assert_true(gpid > 1);
    assert_true(pid_dies(gpid, 2000));
    assert_int_equal(count_fds(), fds_before);
    sa_exec_result_clear(&res);

    /* "60 s" style for whole seconds */
    opts.timeout_ms = 1000;
    const char *argv2[] = {cmd, NULL};
    assert_false(sa_exec_run(argv2, &opts, &res, &err));
    assert_int_equal(sscanf(res.out, "%d", &gpid), 1);
    assert_string_equal(err.message, "squeue timed out after 1 s and was killed");
    assert_true(pid_dies(gpid, 2000));
    sa_exec_result_clear(&res);
    reap_orphans();
    remove_tmpdir(dir);
}

/* A command that ignores SIGTERM gets SIGKILL after the grace period. */
static void test_timeout_sigterm_ignored(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "sdiag",
                                   "trap '' TERM\n"
                                   "sleep 600 &\n"
                                   "echo $!\n"
                                   "while :; do sleep 1; done");
    const char *argv[] = {cmd, NULL};
    sa_exec_opts_t opts = {.timeout_ms = 300, .kill_grace_ms = 300};
    sa_exec_result_t res;
    sa_error_t err;
    int gpid = 0;
    (void)state;

    assert_false(sa_exec_run(argv, &opts, &res, &err));
    assert_true(res.timed_out);
    assert_int_equal(res.term_signal, SIGKILL);
    assert_true(res.elapsed_ms >= 600);
    assert_true(res.elapsed_ms < 3000);
    assert_string_equal(err.message, "sdiag timed out after 300 ms and was killed");
    assert_int_equal(sscanf(res.out, "%d", &gpid), 1);
    assert_true(pid_dies(gpid, 2000));
    sa_exec_result_clear(&res);
    reap_orphans();
    remove_tmpdir(dir);
}

/* A command that prints forever is stopped at the cap. */
static void test_output_cap(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue", "exec yes 0123456789abcdefghijklmnopqrstuvwxyz");
    const char *argv[] = {cmd, "--json", NULL};
    sa_exec_opts_t opts = {.max_output = 1024 * 1024};
    sa_exec_result_t res;
    sa_error_t err;
    long long t0 = mono_ms();
    (void)state;

    assert_false(sa_exec_run(argv, &opts, &res, &err));
    assert_true(mono_ms() - t0 < 3000);
    assert_true(res.output_exceeded);
    assert_false(res.timed_out);
    assert_int_equal(err.code, EFBIG);
    assert_string_equal(err.message, "output of squeue --json exceeded 1 MiB");
    assert_true(res.out_len <= 1024 * 1024);
    assert_true(res.out_len > 0);
    assert_memory_equal(res.out, "0123456789abcdefghijklmnopqrstuvwxyz\n", 37);
    assert_false(res.exited); /* killed: SIGTERM, or SIGPIPE once we stopped reading */
    assert_true(res.term_signal == SIGTERM || res.term_signal == SIGPIPE);
    sa_exec_result_clear(&res);

    opts.max_output = 1000;
    assert_false(sa_exec_run(argv, &opts, &res, &err));
    assert_string_equal(err.message, "output of squeue --json exceeded 1000 bytes");
    assert_true(res.out_len <= 1000);
    sa_exec_result_clear(&res);

    /* exactly at the cap is fine */
    cmd = fake_command(dir, "sinfo", "head -c 1000 /dev/zero");
    const char *argv2[] = {cmd, NULL};
    assert_true(sa_exec_run(argv2, &opts, &res, &err));
    assert_int_equal(res.out_len, 1000);
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/* Large stdout and stderr at once do not deadlock; stderr keeps its first 64 KiB. */
static void test_large_output(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "sacct",
                                   "head -c 200000 /dev/zero | tr '\\000' e >&2\n"
                                   "head -c 5000000 /dev/zero | tr '\\000' o\n"
                                   "head -c 1000 /dev/zero | tr '\\000' E >&2");
    const char *argv[] = {cmd, NULL};
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    assert_true(sa_exec_run(argv, NULL, &res, &err));
    assert_int_equal(res.out_len, 5000000);
    assert_int_equal(res.out[0], 'o');
    assert_int_equal(res.out[4999999], 'o');
    assert_int_equal(res.err_len, SA_EXEC_STDERR_CAP);
    assert_true(res.err_truncated);
    assert_int_equal(strlen(res.err), SA_EXEC_STDERR_CAP);
    assert_int_equal(res.err[SA_EXEC_STDERR_CAP - 1], 'e');
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/* Closing stdout and stderr early does not end the wait: the timeout still applies. */
static void test_closes_output_early(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "echo partial\n"
                                   "exec >&- 2>&-\n"
                                   "sleep 600");
    const char *argv[] = {cmd, NULL};
    sa_exec_opts_t opts = {.timeout_ms = 500};
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    assert_false(sa_exec_run(argv, &opts, &res, &err));
    assert_true(res.timed_out);
    assert_string_equal(res.out, "partial\n");
    assert_true(res.elapsed_ms >= 500 && res.elapsed_ms < 3000);
    assert_string_equal(err.message, "squeue timed out after 500 ms and was killed");
    sa_exec_result_clear(&res);

    /* closes them early and then exits normally: success with what it printed */
    cmd = fake_command(dir, "sinfo", "echo early\nexec >&- 2>&-\nsleep 0.2\nexit 0");
    const char *argv2[] = {cmd, NULL};
    assert_true(sa_exec_run(argv2, &opts, &res, &err));
    assert_string_equal(res.out, "early\n");
    assert_true(res.elapsed_ms >= 200);
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

/*
 * A command that exits while a background grandchild holds its pipes: done after
 * the grace period, and the grandchild is killed.
 */
static void test_exit_with_background_child(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "sinfo", "sleep 600 &\necho $!\nexit 0");
    const char *argv[] = {cmd, NULL};
    sa_exec_opts_t opts = {.timeout_ms = 10000, .kill_grace_ms = 300};
    sa_exec_result_t res;
    sa_error_t err;
    int gpid = 0;
    (void)state;

    assert_true(sa_exec_run(argv, &opts, &res, &err));
    assert_true(res.exited);
    assert_int_equal(res.exit_status, 0);
    assert_false(res.timed_out);
    assert_true(res.elapsed_ms < 3000);
    assert_int_equal(sscanf(res.out, "%d", &gpid), 1);
    assert_true(pid_dies(gpid, 2000));
    sa_exec_result_clear(&res);
    reap_orphans();
    remove_tmpdir(dir);
}

/* Death by a signal; SIGPIPE ignored in the parent is back to default in the child. */
static void test_signals(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue", "kill -USR1 $$\necho survived");
    const char *argv[] = {cmd, "--json", NULL};
    sa_exec_result_t res;
    sa_error_t err;
    char want[200];
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    (void)state;

    assert_false(sa_exec_run(argv, NULL, &res, &err));
    assert_false(res.exited);
    assert_int_equal(res.term_signal, SIGUSR1);
    assert_int_equal(err.code, SIGUSR1);
    snprintf(want, sizeof want, "squeue --json was killed by signal %d (%s)", SIGUSR1, strsignal(SIGUSR1));
    assert_string_equal(err.message, want);
    assert_string_equal(res.out, "");
    sa_exec_result_clear(&res);

    sigemptyset(&ign.sa_mask);
    assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
    cmd = fake_command(dir, "sinfo", "kill -PIPE $$\necho survived");
    const char *argv2[] = {cmd, NULL};
    bool ok = sa_exec_run(argv2, NULL, &res, &err);
    sigaction(SIGPIPE, &old, NULL);
    assert_false(ok);
    assert_int_equal(res.term_signal, SIGPIPE);
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* A signal handler without SA_RESTART interrupting every few ms changes nothing. */
static void test_eintr(void **state)
{
    char *dir = make_tmpdir();
    const char *cmd = fake_command(dir, "squeue",
                                   "echo start\nsleep 0.3\necho middle >&2\nsleep 0.3\necho end");
    const char *argv[] = {cmd, NULL};
    struct sigaction sa = {.sa_handler = on_alarm}, old;
    struct itimerval it = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
    sa_exec_result_t res;
    sa_error_t err;
    (void)state;

    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART */
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    alarms = 0;
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    bool ok = sa_exec_run(argv, NULL, &res, &err);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    if (!ok)
        fail_msg("%s", err.message);
    assert_true(alarms > 10);
    assert_string_equal(res.out, "start\nend\n");
    assert_string_equal(res.err, "middle\n");
    assert_int_equal(res.exit_status, 0);
    sa_exec_result_clear(&res);
    remove_tmpdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_stdin_group_fds),
        cmocka_unit_test(test_path_lookup),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_nonzero_exit),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_timeout_sigterm_ignored),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_large_output),
        cmocka_unit_test(test_closes_output_early),
        cmocka_unit_test(test_exit_with_background_child),
        cmocka_unit_test(test_signals),
        cmocka_unit_test(test_eintr),
    };

    /* orphaned grandchildren of killed fake commands come to us, so we can check them */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        perror("prctl(PR_SET_CHILD_SUBREAPER)");
    return tu_run_group_tests("exec", tests, NULL, NULL);
}
