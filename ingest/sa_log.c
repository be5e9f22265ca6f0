/*
 * sa_log.c - leveled one-line messages on stderr, journald-aware (see sa_log.h).
 */
#define _GNU_SOURCE /* asprintf, vasprintf, explicit_bzero */
#include "sa_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define SA_LOG_DEFAULT_PROGRAM "slurm-ingest"
#define SA_LOG_NAME_MAX 128

static char log_program[SA_LOG_NAME_MAX] = SA_LOG_DEFAULT_PROGRAM;
static char log_cluster[SA_LOG_NAME_MAX];
static sa_log_level_t log_level = SA_LOG_INFO;

/* Copies src into dst (size n), cut to fit, control characters folded to '?'. */
static void copy_name(char *dst, size_t n, const char *src)
{
    size_t i;

    for (i = 0; src && src[i] && i + 1 < n; i++)
        dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i];
    dst[i] = '\0';
}

void sa_log_set_program(const char *name)
{
    copy_name(log_program, sizeof log_program, name && *name ? name : SA_LOG_DEFAULT_PROGRAM);
}

void sa_log_set_cluster(const char *cluster)
{
    copy_name(log_cluster, sizeof log_cluster, cluster);
}

/* Clamps an arbitrary value (a cast int, say) into the enum's range. */
static sa_log_level_t clamp_level(int level)
{
    if (level < (int)SA_LOG_ERROR)
        return SA_LOG_ERROR;
    if (level > (int)SA_LOG_DEBUG)
        return SA_LOG_DEBUG;
    return (sa_log_level_t)level;
}

void sa_log_set_level(sa_log_level_t level)
{
    log_level = clamp_level((int)level);
}

sa_log_level_t sa_log_get_level(void)
{
    return log_level;
}

bool sa_log_enabled(sa_log_level_t level)
{
    return (int)level <= (int)log_level;
}

bool sa_log_level_parse(const char *s, sa_log_level_t *level)
{
    static const struct {
        const char *name;
        sa_log_level_t level;
    } names[] = {
        {"error", SA_LOG_ERROR}, {"warn", SA_LOG_WARN},   {"warning", SA_LOG_WARN},
        {"info", SA_LOG_INFO},   {"debug", SA_LOG_DEBUG},
    };

    if (!s)
        return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            if (level)
                *level = names[i].level;
            return true;
        }
    }
    return false;
}

const char *sa_log_level_name(sa_log_level_t level)
{
    switch (clamp_level((int)level)) {
    case SA_LOG_ERROR:
        return "error";
    case SA_LOG_WARN:
        return "warning";
    case SA_LOG_INFO:
        return "info";
    case SA_LOG_DEBUG:
        break;
    }
    return "debug";
}

sa_log_level_t sa_log_level_adjust(sa_log_level_t base, int verbose, int quiet)
{
    /* bounded so that a silly count cannot overflow */
    if (verbose > 16)
        verbose = 16;
    if (quiet > 16)
        quiet = 16;
    if (verbose < 0)
        verbose = 0;
    if (quiet < 0)
        quiet = 0;
    return clamp_level((int)base + verbose - quiet);
}

bool sa_log_to_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    uintmax_t dev, ino;
    struct stat st;
    char tail;

    /* systemd sets JOURNAL_STREAM=<device>:<inode> of the stream it connected */
    if (!js || sscanf(js, "%ju:%ju%c", &dev, &ino, &tail) != 2)
        return false;
    if (fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

/* The syslog priority journald expects for a level (sd-daemon.h's SD_ERR, ...). */
static const char *journal_prefix(sa_log_level_t level)
{
    switch (level) {
    case SA_LOG_ERROR:
        return "<3>";
    case SA_LOG_WARN:
        return "<4>";
    case SA_LOG_INFO:
        return "<6>";
    case SA_LOG_DEBUG:
        break;
    }
    return "<7>";
}

/* Writes all of buf to stderr, retrying short writes and EINTR; errors are ignored. */
static void write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += w;
        len -= (size_t)w;
    }
}

void sa_logv(sa_log_level_t level, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char fallback[1024];
    char *msg = NULL, *line = NULL;
    const char *text;
    int len;

    level = clamp_level((int)level);
    if (!sa_log_enabled(level) || !fmt)
        goto done;
    if (vasprintf(&msg, fmt, ap) < 0) {
        msg = NULL;
        snprintf(fallback, sizeof fallback, "(out of memory formatting a message: %s)", fmt);
    }
    text = msg ? msg : fallback;
    if (log_cluster[0])
        len = asprintf(&line, "%s%s[%s]: %s: %s\n", sa_log_to_journal() ? journal_prefix(level) : "",
                       log_program, log_cluster, sa_log_level_name(level), text);
    else
        len = asprintf(&line, "%s%s: %s: %s\n", sa_log_to_journal() ? journal_prefix(level) : "",
                       log_program, sa_log_level_name(level), text);
    if (len < 0) {
        /* out of memory: still say something, unformatted */
        write_all(log_program, strlen(log_program));
        write_all(": (out of memory)\n", 18);
        line = NULL;
        goto done;
    }
    /* one line: every control character but the final newline becomes '?' */
    for (int i = 0; i < len - 1; i++) {
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    }
    write_all(line, (size_t)len);

done:
    free(msg);
    free(line);
    errno = saved_errno;
}

void sa_log(sa_log_level_t level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sa_logv(level, fmt, ap);
    va_end(ap);
}
