/*
 * sa_config.h - slurm-ingest's options: one table shared by the command line and
 * the configuration file, the file parser, and where the MongoDB URI comes from.
 *
 * The configuration file (/etc/slurm-ingest/<cluster>.conf) holds `key = value`
 * lines. A key is the long option name without its leading dashes (`mongo-uri`
 * for --mongo-uri). Blank lines and lines whose first non-blank character is '#'
 * are ignored; there are no trailing comments (a '#' after a value is part of the
 * value: passwords and paths may hold one). Spaces around the key and the value
 * are dropped; the value is the rest of the line, never quoted. A key given twice
 * keeps its LAST value. An unknown key, a line without '=', an empty value or a
 * value of the wrong type (a duration that is not one, say) is an error naming the
 * file and line:
 *
 *   /etc/slurm-ingest/a.conf:7: unknown option 'mongo_uri' (did you mean 'mongo-uri'?)
 *
 * Value types:
 *   string    any text (paths, names, commands);
 *   int       a decimal integer >= 0;
 *   duration  seconds: `90`, `90s`, `15m`, `1h`, `2d` (a whole number, one suffix);
 *   size      bytes: `1048576`, `512k`, `256M`, `2G` (binary multiples, 1k = 1024);
 *   bool      yes/no, true/false, on/off, 1/0.
 *
 * Credentials: the MongoDB URI may carry a password. It is never printed: errors
 * name where a URI came from, never the URI, and logs use sa_redact_uri(). A
 * `mongo-uri` in a configuration file readable by group or others sets
 * cfg->mongo_uri_exposed, which the caller logs as a warning. Prefer
 * `mongo-uri-file` (a 0600 file) or the systemd credential `mongo-uri`
 * (LoadCredential=, read from $CREDENTIALS_DIRECTORY/mongo-uri).
 */
#ifndef SA_CONFIG_H
#define SA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"

/* Environment variable holding the MongoDB URI (wins over every other source). */
#define SA_MONGO_URI_ENV "SLURM_INGEST_MONGO_URI"
/* Name of the systemd credential holding the MongoDB URI. */
#define SA_MONGO_URI_CREDENTIAL "mongo-uri"
/* The URI used when no source gives one. */
#define SA_MONGO_URI_DEFAULT "mongodb://127.0.0.1:27017"

/* Type of an option's value (see above). */
typedef enum {
    SA_OPT_STRING = 0,
    SA_OPT_INT,
    SA_OPT_DURATION,
    SA_OPT_SIZE,
    SA_OPT_BOOL,
} sa_opt_type_t;

/* One option: a config file key and a long command-line option (--name). */
typedef struct {
    const char *name;    /* "mongo-uri": the key, and --mongo-uri on the command line */
    sa_opt_type_t type;
    const char *arg;     /* argument name for --help ("URI", "DURATION"); NULL for a bool */
    const char *def;     /* default as text (a valid value), or NULL when it has none or depends
                            on other options (the help text then says what happens) */
    const char *help;    /* one sentence for --help, the man page and example.conf */
} sa_option_t;

/*
 * Every option of slurm-ingest that a configuration file may set, in the order
 * --help shows them, ended by an entry whose name is NULL. The command line
 * accepts each as --name (a bool as a bare --name). Options that only make sense
 * on a command line (--config, --squeue FILE, --at, -v, -q, ...) are not here.
 */
extern const sa_option_t sa_ingest_options[];

/* Number of entries of sa_ingest_options before the NULL one. */
extern const size_t sa_ingest_noptions;

/* The option called name (no leading dashes), or NULL. */
const sa_option_t *sa_option_find(const char *name);

/*
 * The closest option name to an unknown one (a typo, '_' for '-', a leading
 * "--"), or NULL when none is close. For "did you mean" messages.
 */
const char *sa_option_suggest(const char *name);

/*
 * Checks value against opt's type. On success, *num (if not NULL) receives the
 * number: the integer, the duration in seconds, the size in bytes or 1/0 for a
 * bool (0 for a string). On failure *error says "<name>: <what is wrong>"
 * (SA_ERR_USAGE); the value is quoted in the message except for mongo-uri.
 */
bool sa_option_parse_value(const sa_option_t *opt, const char *value, int64_t *num, sa_error_t *error);

/*
 * Parses a duration: digits, optionally followed by one of s, m, h, d, w (seconds,
 * minutes, hours, days, weeks; sa_time_parse_duration). Spaces, signs and fractions are refused. *seconds
 * receives the value (not changed on failure). Fails (SA_ERR_USAGE) on bad syntax
 * or overflow.
 */
bool sa_parse_duration(const char *s, int64_t *seconds, sa_error_t *error);

/* Parses a size: digits, optionally followed by k, M, G or T (case-insensitive, x1024). */
bool sa_parse_size(const char *s, int64_t *bytes, sa_error_t *error);

/* Parses a bool: yes/no, true/false, on/off, 1/0 (case-insensitive). */
bool sa_parse_bool(const char *s, bool *value, sa_error_t *error);

/* One key = value of a configuration (owned strings). */
typedef struct {
    char *key;
    char *value;
    char *origin;  /* "path:line" it came from, or "command line" */
} sa_config_entry_t;

/*
 * A key -> value store. Zero-initialise it (or sa_config_init) before use and
 * release it with sa_config_clear. Values are kept as text, already checked
 * against their option's type; read them with sa_config_get* below.
 */
typedef struct {
    sa_config_entry_t *v;   /* one entry per key (a later value replaced an earlier one) */
    size_t n, cap;
    char *path;             /* the last file loaded, or NULL */
    bool mongo_uri_exposed; /* a loaded file sets mongo-uri and is readable by group or others */
    bool prometheus_url_exposed; /* ... sets a prometheus-url holding user:password@ and is readable so */
} sa_config_t;

void sa_config_init(sa_config_t *cfg);

/* Frees everything cfg holds and leaves it empty (as after sa_config_init). Accepts NULL. */
void sa_config_clear(sa_config_t *cfg);

/*
 * Reads the configuration file at path into cfg (initialised, possibly holding
 * values already): each key replaces an earlier value of the same key that cfg held.
 * So load the file first, then sa_config_set the command line's options: the command
 * line wins. Within the file a key comes once.
 *
 * Fails (SA_ERR_IO with errno: the file cannot be opened or read, or is not a
 * regular file; SA_ERR_USAGE: a bad line or a key given twice, "path:line: ...", or a file every user may
 * write, "path: writable by every user ...") and then leaves cfg as
 * it was before the call. On success cfg->path is path and, if the file sets
 * mongo-uri and its mode allows group or others to read it, cfg->mongo_uri_exposed
 * is set (the caller logs a warning; the URI is never printed).
 */
bool sa_config_load(const char *path, sa_config_t *cfg, sa_error_t *error);

/*
 * Sets key to value after checking both (as a line of a file would be), with
 * origin (e.g. "command line", may be NULL) used in later messages. Fails
 * (SA_ERR_USAGE) on an unknown key or a bad value, leaving cfg unchanged.
 */
bool sa_config_set(sa_config_t *cfg, const char *key, const char *value, const char *origin,
                   sa_error_t *error);

/* The value of key, or NULL when it was not set. The string belongs to cfg. */
const char *sa_config_get(const sa_config_t *cfg, const char *key);

/* Where key's value came from ("path:line", "command line"), or NULL when it was not set. */
const char *sa_config_origin(const sa_config_t *cfg, const char *key);

/*
 * The value of key, else its option's default (sa_option_t.def), else NULL. For
 * an unknown key, NULL.
 */
const char *sa_config_get_or_default(const sa_config_t *cfg, const char *key);

/*
 * The number of an int, duration (seconds), size (bytes) or bool (1/0) option:
 * the set value, else the option's default, else dflt. Values in cfg were checked
 * when they were set, so this cannot fail; a string option or an unknown key gives
 * dflt.
 */
int64_t sa_config_get_num(const sa_config_t *cfg, const char *key, int64_t dflt);

/*
 * Finds the MongoDB URI, first found wins:
 *   1. the environment variable SLURM_INGEST_MONGO_URI (when not empty);
 *   2. the file named by the `mongo-uri-file` option;
 *   3. the systemd credential: $CREDENTIALS_DIRECTORY/mongo-uri, when
 *      CREDENTIALS_DIRECTORY is set and that file exists;
 *   4. the `mongo-uri` option;
 *   5. SA_MONGO_URI_DEFAULT.
 * A command-line --mongo-uri is the caller's to put first (or to sa_config_set as
 * mongo-uri, then ranking 4th; the command line is shown by ps, which is why the
 * environment and files are preferred).
 *
 * A URI file holds the URI on its first line; trailing white space and a final
 * newline are dropped; an empty file, a second non-blank line or a control
 * character is an error. A named file that cannot be read is an error (never a
 * silent fall-through). A `mongo-uri-file` readable by group or others is logged
 * as a warning (sa_log). Which source was used is logged at debug level.
 *
 * On success *uri is a new string (caller frees); on failure *uri is NULL and
 * *error (SA_ERR_USAGE or SA_ERR_IO) names the source, never the URI.
 */
bool sa_config_resolve_mongo_uri(const sa_config_t *cfg, char **uri, sa_error_t *error);

/*
 * A copy of uri safe to log: the password of the user info ("user:pass@") and the
 * value of every query option that can hold a secret (names containing
 * "password", "secret" or "token", and authMechanismProperties) become "***". A
 * string without "://" is not recognised and becomes "***" as a whole. Returns a
 * new string (caller frees), or NULL for a NULL uri or when out of memory.
 */
char *sa_redact_uri(const char *uri);

/*
 * The configuration of one run, typed: filled once from the option table (values
 * already checked, defaults from the table), so the run never looks an option up by
 * name. Strings belong to the sa_config_t it came from (or to the buffers below).
 */
typedef struct {
    const char *cluster, *db, *sqlite, *spool_dir, *archive_dir, *lock_dir, *job_cache, *since;
    const char *squeue_command, *sinfo_command, *sacct_command, *sdiag_command, *log_level;
    const char *tz; /* the zone of sacct text captures given as files */
    int64_t backfill_window, sacct_overlap, timeout, max_gap, cache_keep; /* seconds */
    int64_t max_output, spool_max;                                        /* bytes */
    const char *prometheus_url, *prometheus_exporter, *prometheus_since;  /* the Prometheus import */
    int64_t prometheus_budget, prometheus_timeout, prometheus_step;       /* seconds */
    char sqlite_buf[4096], job_cache_buf[4096];
} sa_ingest_config_t;

/*
 * Fills *c from cfg. Fails (SA_ERR_USAGE) without a cluster or with a cluster name
 * that cannot name a file (sa_cluster_name_ok).
 */
bool sa_ingest_config_fill(const sa_config_t *cfg, sa_ingest_config_t *c, sa_error_t *error);

#endif
