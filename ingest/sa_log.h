/*
 * sa_log.h - messages to stderr, one line each, with a level.
 *
 *   slurm-ingest[cluster]: warning: sacct printed 2 warnings
 *   slurm-ingest: error: /etc/slurm-ingest/a.conf:7: unknown option 'mongo_uri'
 *
 * (the "[cluster]" part once sa_log_set_cluster was called). Control characters
 * in the message (a newline in a hostile job name, say) become '?', so a message
 * is always one line; the line is written with a single write(2), so lines of
 * concurrent processes do not interleave.
 *
 * When stderr is connected to the systemd journal (the environment variable
 * JOURNAL_STREAM names the device and inode of stderr, as systemd sets it for a
 * service), each line starts with its syslog priority, "<3>" error, "<4>" warning,
 * "<6>" info, "<7>" debug, which journald strips and records as the PRIORITY
 * (`journalctl -p warning` then works). Elsewhere the lines are plain.
 *
 * The state (program name, cluster, level) is process-global and not
 * thread-safe to change; set it once at startup.
 */
#ifndef SA_LOG_H
#define SA_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/* Levels, most severe first: a message is printed when its level <= the current one. */
typedef enum {
    SA_LOG_ERROR = 0,
    SA_LOG_WARN = 1,
    SA_LOG_INFO = 2,
    SA_LOG_DEBUG = 3,
} sa_log_level_t;

/* Program name shown before each line (default "slurm-ingest"); copied. NULL restores the default. */
void sa_log_set_program(const char *name);

/* Cluster shown as "program[cluster]"; copied. NULL or "" removes it. */
void sa_log_set_cluster(const char *cluster);

/* Current level (default SA_LOG_INFO); out-of-range values are clamped. */
void sa_log_set_level(sa_log_level_t level);
sa_log_level_t sa_log_get_level(void);

/* True when a message of this level would be printed (to skip costly formatting). */
bool sa_log_enabled(sa_log_level_t level);

/*
 * Parses a level name: "error", "warn" or "warning", "info", "debug"
 * (case-insensitive). Returns false for anything else, leaving *level unchanged.
 */
bool sa_log_level_parse(const char *s, sa_log_level_t *level);

/* "error", "warning", "info" or "debug". */
const char *sa_log_level_name(sa_log_level_t level);

/*
 * The level after `verbose` -v and `quiet` -q options: each -v one step more
 * verbose, each -q one step quieter, from base; clamped to error..debug.
 */
sa_log_level_t sa_log_level_adjust(sa_log_level_t base, int verbose, int quiet);

/* Prints one message (printf format) at level, if enabled. errno is preserved. */
void sa_log(sa_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sa_logv(sa_log_level_t level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * True when stderr is the systemd journal (JOURNAL_STREAM matches stderr's
 * device and inode). Checked on every call: cheap, and right after a dup2.
 */
bool sa_log_to_journal(void);

#endif
