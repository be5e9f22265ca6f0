/*
 * sa_config.c - the option table, the configuration file parser and the sources
 * of the MongoDB URI (see sa_config.h).
 */
#define _GNU_SOURCE /* asprintf, vasprintf, explicit_bzero */
#include "sa_fsutil.h"
#include "sa_config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sa_vec.h"
#include "sa_log.h"
#include "sa_promq.h"
#include "sa_time.h"

/* Largest URI file accepted (a URI is a line; this only stops a wrong file name). */
#define SA_URI_FILE_MAX 65536

const sa_option_t sa_ingest_options[] = {
    {"cluster", SA_OPT_STRING, "NAME", NULL,
     "Slurm cluster name (letters, digits, '.', '_', '-'); one archive, lock, spool and time series per "
     "cluster. Required."},
    {"mongo-uri", SA_OPT_STRING, "URI", NULL,
     "MongoDB connection string (default mongodb://127.0.0.1:27017). A command line is visible to every "
     "user: prefer mongo-uri-file, the systemd credential mongo-uri or SLURM_INGEST_MONGO_URI."},
    {"mongo-uri-file", SA_OPT_STRING, "FILE", NULL,
     "File (mode 0600) whose first line is the MongoDB connection string."},
    {"db", SA_OPT_STRING, "NAME", "slurm", "MongoDB database."},
    {"sqlite", SA_OPT_STRING, "PATH", NULL,
     "SQLite file of the node state time series (default LOCK-DIR/CLUSTER.sqlite: /var/lib/slurm-ingest/CLUSTER.sqlite)."},
    {"spool-dir", SA_OPT_STRING, "DIR", "/var/spool/slurm-ingest",
     "Where every capture is kept (durably) until it has landed; captures that could not land (MongoDB "
     "unreachable) are replayed, oldest first, by the next run. Must not be writable by other users."},
    {"archive-dir", SA_OPT_STRING, "DIR", NULL,
     "Keep every raw capture under DIR/CLUSTER/ (re-ingest with 'slurm-ingest replay DIR'). Off by "
     "default."},
    {"lock-dir", SA_OPT_STRING, "DIR", "/var/lib/slurm-ingest",
     "Directory of the lock file CLUSTER.lock that keeps to one ingest per cluster at a time, the sacct "
     "watermark and the job cache. Must not be writable by other users."},
    {"job-cache", SA_OPT_STRING, "PATH", NULL,
     "SQLite file of what the archive last merged per job, so that a poll reads and writes only the jobs "
     "that changed (default LOCK-DIR/CLUSTER.jobcache.sqlite). A cache: rebuilt from MongoDB when missing "
     "or stale."},
    {"cache-keep", SA_OPT_DURATION, "DURATION", "7d",
     "How long the job cache remembers a finished job (a later sacct record of it is then merged without "
     "reading it back)."},
    {"spool-max", SA_OPT_SIZE, "SIZE", "10G",
     "Most disk space the spool of a cluster may use; a capture that does not fit is refused (exit 10), "
     "the spool is never overwritten."},
    {"since", SA_OPT_STRING, "DATE", NULL,
     "Backfill sacct history from DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ) in windows of "
     "backfill-window; an interrupted backfill resumes where it stopped."},
    {"backfill-window", SA_OPT_DURATION, "DURATION", "1d", "Length of one sacct window while backfilling."},
    {"sacct-overlap", SA_OPT_DURATION, "DURATION", "1h",
     "Each sacct run starts this long before the previous run's end, to catch late records."},
    {"timeout", SA_OPT_DURATION, "DURATION", "60s",
     "Time limit of each Slurm command; past it the command's whole process group is killed."},
    {"max-output", SA_OPT_SIZE, "SIZE", "1G",
     "Largest output accepted from one Slurm command or input file (it is streamed to the spool, then "
     "parsed from there)."},
    {"tz", SA_OPT_STRING, "ZONE", "UTC",
     "Time zone of sacct text captures given as files (--sacct, --dump): a name of the zone database such as "
     "Europe/Helsinki, for output captured in local time. The sacct this program runs prints UTC (TZ=UTC)."},
    {"max-gap", SA_OPT_DURATION, "DURATION", "15m",
     "Time without a snapshot beyond which the time series records unknown time instead of extending "
     "the last state."},
    {"squeue-command", SA_OPT_STRING, "PROGRAM", "squeue",
     "The squeue program: a path, or a name looked up in PATH (never run through a shell)."},
    {"sinfo-command", SA_OPT_STRING, "PROGRAM", "sinfo", "The sinfo program."},
    {"sacct-command", SA_OPT_STRING, "PROGRAM", "sacct", "The sacct program."},
    {"sdiag-command", SA_OPT_STRING, "PROGRAM", "sdiag", "The sdiag program."},
    {"prometheus-url", SA_OPT_STRING, "URL", NULL,
     "Prometheus server whose per-job exporter series are summarised into each job run once it ended "
     "(none: no import); credentials in it are never logged."},
    {"prometheus-exporter", SA_OPT_STRING, "NAME", "slurm-job-exporter",
     "The exporter whose metrics the server holds: slurm-job-exporter or jobstats."},
    {"prometheus-budget", SA_OPT_DURATION, "DURATION", "60s",
     "Time one run spends on the import; what is left waits for the next run."},
    {"prometheus-timeout", SA_OPT_DURATION, "DURATION", "10s", "Timeout of one query to the server."},
    {"prometheus-step", SA_OPT_DURATION, "DURATION", "30s",
     "Resolution of the subqueries (median, idle share): the exporters' scrape interval."},
    {"prometheus-since", SA_OPT_STRING, "DATE", NULL,
     "Also summarise the runs that ended from DATE on (a backfill), not only those since the last import."},
    {"log-level", SA_OPT_STRING, "LEVEL", "info",
     "error, warning, info or debug; each -v is one step more verbose, each -q one step quieter."},
    {NULL, SA_OPT_STRING, NULL, NULL, NULL},
};

const size_t sa_ingest_noptions = sizeof sa_ingest_options / sizeof sa_ingest_options[0] - 1;

const sa_option_t *sa_option_find(const char *name)
{
    if (!name)
        return NULL;
    for (const sa_option_t *o = sa_ingest_options; o->name; o++) {
        if (strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

/* Levenshtein distance of a and b, or SIZE_MAX when either is too long to bother. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[65];

    if (la > 64 || lb > 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *sa_option_suggest(const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, n = 0;
    char norm[65];

    if (!name)
        return NULL;
    /* normalise the usual slips: "--key", "Key", "key_name", "key name" */
    while (*name == '-')
        name++;
    for (; *name && n < sizeof norm - 1; name++)
        norm[n++] = (*name == '_' || *name == ' ') ? '-' : (char)tolower((unsigned char)*name);
    norm[n] = '\0';
    if (n == 0)
        return NULL;
    for (const sa_option_t *o = sa_ingest_options; o->name; o++) {
        size_t d = edit_distance(norm, o->name);
        if (d < best_d) {
            best_d = d;
            best = o->name;
        }
    }
    /* close enough: two edits, or one for very short names */
    if (best && best_d <= (n <= 4 ? 1u : 2u))
        return best;
    /* a prefix of a longer name ("mongo" -> "mongo-uri") */
    for (const sa_option_t *o = sa_ingest_options; o->name; o++) {
        if (n >= 3 && strncmp(o->name, norm, n) == 0)
            return o->name;
    }
    return NULL;
}

/*
 * Parses digits followed by an optional one-letter suffix whose multiplier
 * mult_of() gives (0 = unknown suffix). Refuses signs, spaces and overflow.
 */
static bool parse_scaled(const char *s, int64_t (*mult_of)(char), int64_t *out)
{
    long long v;
    int64_t mult = 1;
    char *end;

    if (!s || !isdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return false;
    if (*end) {
        if (end[1] != '\0' || (mult = mult_of(*end)) == 0)
            return false;
    }
    if (v > INT64_MAX / mult)
        return false;
    *out = (int64_t)v * mult;
    return true;
}

/* Plain integers take no suffix. */
static int64_t no_suffix(char c)
{
    (void)c;
    return 0;
}

/* Bytes per size suffix. */
static int64_t size_mult(char c)
{
    switch (tolower((unsigned char)c)) {
    case 'b':
        return 1;
    case 'k':
        return INT64_C(1) << 10;
    case 'm':
        return INT64_C(1) << 20;
    case 'g':
        return INT64_C(1) << 30;
    case 't':
        return INT64_C(1) << 40;
    default:
        return 0;
    }
}

/*
 * The value quoted for a message: one line, cut at 64 bytes. A value holding a URI
 * (a MongoDB URI pasted as the value of another option) is quoted redacted
 * (sa_redact_uri), so that its password never reaches a message.
 */
static const char *quote(const char *s, char *buf, size_t n)
{
    if (s && strstr(s, "://")) {
        char *r = sa_redact_uri(s);
        sa_error_quote(r ? r : "***", 64, buf, n);
        free(r);
        return buf;
    }
    return sa_error_quote(s, 64, buf, n);
}

bool sa_parse_duration(const char *s, int64_t *seconds, sa_error_t *error)
{
    char q[160];
    /* schema/core/sa_time.h: the one duration parser; its message quotes the value, which
     * must not show a URI's password when one was pasted in the wrong place */
    if (sa_time_parse_duration(s, seconds, error))
        return true;
    if (s && strstr(s, "://"))
        sa_error_set(error, SA_ERR_USAGE, 0, "invalid duration '%s' (use 90, 90s, 15m, 1h, 2d or 1w)",
                     quote(s, q, sizeof q));
    return false;
}

bool sa_parse_size(const char *s, int64_t *bytes, sa_error_t *error)
{
    char q[80];
    int64_t v;

    if (!parse_scaled(s, size_mult, &v)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "invalid size '%s' (use bytes, or 512k, 256M, 2G)",
                     quote(s, q, sizeof q));
        return false;
    }
    if (bytes)
        *bytes = v;
    return true;
}

bool sa_parse_bool(const char *s, bool *value, sa_error_t *error)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    char q[80];

    for (size_t i = 0; s && i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            if (value)
                *value = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            if (value)
                *value = false;
            return true;
        }
    }
    sa_error_set(error, SA_ERR_USAGE, 0, "invalid boolean '%s' (use yes or no)", quote(s, q, sizeof q));
    return false;
}

/* A cluster name safe in file names: what sa_flatspool_check_names accepts. */
static bool valid_cluster(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
            return false;
    }
    return true;
}

bool sa_option_parse_value(const sa_option_t *opt, const char *value, int64_t *num, sa_error_t *error)
{
    int64_t v = 0;
    bool b;
    char q[80];

    if (!opt || !value) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s: missing value", opt && opt->name ? opt->name : "(null)");
        return false;
    }
    if (!*value) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s: empty value", opt->name);
        return false;
    }
    switch (opt->type) {
    case SA_OPT_STRING:
        for (const char *p = value; *p; p++) {
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                /* never echo the value: it may be a URI with a password */
                sa_error_set(error, SA_ERR_USAGE, 0, "%s: the value contains a control character", opt->name);
                return false;
            }
        }
        if (strcmp(opt->name, "cluster") == 0 && !valid_cluster(value)) {
            sa_error_set(error, SA_ERR_USAGE, 0,
                         "cluster: invalid name '%s' (letters, digits, '.', '_' and '-', not starting with "
                         "'.' or '-', at most 128)",
                         quote(value, q, sizeof q));
            return false;
        }
        if (strcmp(opt->name, "tz") == 0 && !sa_tz_valid(value, error)) {
            sa_error_prefix(error, "tz");
            return false;
        }
        if (strcmp(opt->name, "log-level") == 0 && !sa_log_level_parse(value, NULL)) {
            sa_error_set(error, SA_ERR_USAGE, 0, "log-level: unknown level '%s' (use error, warning, info or debug)",
                         quote(value, q, sizeof q));
            return false;
        }
        break;
    case SA_OPT_INT:
        if (!parse_scaled(value, no_suffix, &v)) {
            sa_error_set(error, SA_ERR_USAGE, 0, "%s: invalid number '%s'", opt->name, quote(value, q, sizeof q));
            return false;
        }
        break;
    case SA_OPT_DURATION:
        if (!sa_parse_duration(value, &v, error)) {
            sa_error_prefix(error, "%s", opt->name);
            return false;
        }
        break;
    case SA_OPT_SIZE:
        if (!sa_parse_size(value, &v, error)) {
            sa_error_prefix(error, "%s", opt->name);
            return false;
        }
        break;
    case SA_OPT_BOOL:
        if (!sa_parse_bool(value, &b, error)) {
            sa_error_prefix(error, "%s", opt->name);
            return false;
        }
        v = b;
        break;
    }
    if (num)
        *num = v;
    return true;
}

void sa_config_init(sa_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
}

/* Frees the strings of one entry. */
static void entry_free(sa_config_entry_t *e)
{
    free(e->key);
    free(e->value);
    free(e->origin);
}

void sa_config_clear(sa_config_t *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n; i++)
        entry_free(&cfg->v[i]);
    free(cfg->v);
    free(cfg->path);
    sa_config_init(cfg);
}

/* The entry of key, or NULL. */
static sa_config_entry_t *find_entry(const sa_config_t *cfg, const char *key)
{
    for (size_t i = 0; cfg && key && i < cfg->n; i++) {
        if (strcmp(cfg->v[i].key, key) == 0)
            return &cfg->v[i];
    }
    return NULL;
}

/* Makes room for `more` new entries. Returns false when out of memory. */
static bool reserve(sa_config_t *cfg, size_t more)
{
    if (!SA_VEC_GROW(cfg->v, cfg->cap, cfg->n, more, 16))
        return false;
    return true;
}

/*
 * Stores an entry, stealing its strings: replaces the value of an existing key
 * (last wins) or appends. Never fails when room was reserved (a new key needs one
 * free slot); otherwise returns false (out of memory) and frees e's strings.
 */
static bool put_entry(sa_config_t *cfg, sa_config_entry_t *e)
{
    sa_config_entry_t *old = find_entry(cfg, e->key);

    if (old) {
        free(e->key);
        free(old->value);
        free(old->origin);
        old->value = e->value;
        old->origin = e->origin;
        return true;
    }
    if (!reserve(cfg, 1)) {
        entry_free(e);
        return false;
    }
    cfg->v[cfg->n++] = *e;
    return true;
}

/* Checks key and value; on failure *error says what is wrong (no location). */
static bool check_pair(const char *key, const char *value, sa_error_t *error)
{
    const sa_option_t *opt = sa_option_find(key);
    const char *hint;
    char q[80];

    if (!opt && strstr(key, "://")) {
        /* a pasted URI ("mongodb://u:pw@h/?authSource=admin" has an '='): never echo it */
        sa_error_set(error, SA_ERR_USAGE, 0, "unknown option (a URI? write 'mongo-uri = URI')");
        return false;
    }
    if (!opt) {
        hint = sa_option_suggest(key);
        if (hint)
            sa_error_set(error, SA_ERR_USAGE, 0, "unknown option '%s' (did you mean '%s'?)", quote(key, q, sizeof q),
                         hint);
        else
            sa_error_set(error, SA_ERR_USAGE, 0, "unknown option '%s'", quote(key, q, sizeof q));
        return false;
    }
    return sa_option_parse_value(opt, value, NULL, error);
}

bool sa_config_set(sa_config_t *cfg, const char *key, const char *value, const char *origin, sa_error_t *error)
{
    sa_config_entry_t e = {0};

    if (!check_pair(key, value, error))
        return false;
    e.key = strdup(key);
    e.value = strdup(value);
    e.origin = origin ? strdup(origin) : NULL;
    if (!e.key || !e.value || (origin && !e.origin)) {
        entry_free(&e);
        sa_error_nomem(error);
        return false;
    }
    if (!put_entry(cfg, &e)) { /* it freed e's strings */
        sa_error_nomem(error);
        return false;
    }
    return true;
}

/* Drops leading and trailing white space in place; returns the new start. */
static char *trim(char *s)
{
    char *end;

    while (*s == ' ' || *s == '\t')
        s++;
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/*
 * Parses one line (already without NULs) into *e (strings owned), or leaves
 * e->key NULL for a blank or comment line. *error has no location.
 */
static bool parse_line(char *line, const char *path, unsigned long lineno, sa_config_entry_t *e,
                       sa_error_t *error)
{
    char *key, *value, *eq;

    key = trim(line);
    if (!*key || *key == '#')
        return true;
    eq = strchr(key, '=');
    if (!eq) {
        char q[80];
        /* the line may be a bare URI pasted by mistake: never echo what looks like one */
        if (strstr(key, "://"))
            sa_error_set(error, SA_ERR_USAGE, 0, "expected 'key = value'");
        else
            sa_error_set(error, SA_ERR_USAGE, 0, "expected 'key = value', got '%s'", quote(key, q, sizeof q));
        return false;
    }
    *eq = '\0';
    key = trim(key);
    value = trim(eq + 1);
    if (!*key) {
        sa_error_set(error, SA_ERR_USAGE, 0, "missing option name before '='");
        return false;
    }
    if (!check_pair(key, value, error))
        return false;
    e->key = strdup(key);
    e->value = strdup(value);
    if (asprintf(&e->origin, "%s:%lu", path, lineno) < 0)
        e->origin = NULL;
    if (!e->key || !e->value || !e->origin) {
        entry_free(e);
        memset(e, 0, sizeof *e);
        sa_error_nomem(error);
        return false;
    }
    return true;
}

bool sa_config_load(const char *path, sa_config_t *cfg, sa_error_t *error)
{
    sa_config_t tmp;
    unsigned long lineno = 0;
    char *line = NULL, *path_copy = NULL;
    size_t linecap = 0;
    struct stat st;
    FILE *f = NULL;
    ssize_t len;
    bool ok = false, sets_uri, sets_prom_secret = false;
    const sa_config_entry_t *prom;
    int fd;

    sa_config_init(&tmp);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (fstat(fd, &st) != 0) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: %s", path, strerror(errno));
        close(fd);
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        sa_error_set(error, SA_ERR_IO, EINVAL, "%s: not a regular file", path);
        close(fd);
        goto done;
    }
    if (st.st_mode & S_IWOTH) {
        /* anyone could point the run at other commands or directories: refused, like a
         * spool or lock directory others can write */
        sa_error_set(error, SA_ERR_USAGE, EPERM, "%s: writable by every user (mode %04o): chmod o-w it",
                     path, (unsigned)(st.st_mode & 07777));
        close(fd);
        goto done;
    }
    f = fdopen(fd, "r");
    if (!f) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: %s", path, strerror(errno));
        close(fd);
        goto done;
    }
    errno = 0;
    while ((len = getline(&line, &linecap, f)) >= 0) {
        sa_config_entry_t e = {0};
        char *text = line;

        lineno++;
        if (strlen(line) != (size_t)len) {
            sa_error_set(error, SA_ERR_USAGE, 0, "%s:%lu: the line contains a NUL byte", path, lineno);
            goto done;
        }
        if (lineno == 1 && strncmp(text, "\xEF\xBB\xBF", 3) == 0)
            text += 3; /* a UTF-8 byte order mark left by an editor */
        if (!parse_line(text, path, lineno, &e, error)) {
            sa_error_prefix(error, "%s:%lu", path, lineno);
            goto done;
        }
        if (e.key && find_entry(&tmp, e.key)) {
            /* which value counts would go unsaid (a pasted block, a forgotten line): one per key */
            sa_error_set(error, SA_ERR_USAGE, 0, "%s:%lu: %s given twice (first at %s): keep one", path, lineno, e.key,
                         find_entry(&tmp, e.key)->origin);
            entry_free(&e);
            goto done;
        }
        if (e.key && !put_entry(&tmp, &e)) {
            sa_error_nomem(error);
            goto done;
        }
        errno = 0;
    }
    if (ferror(f)) {
        int err = errno ? errno : EIO;
        sa_error_set(error, SA_ERR_IO, err, "%s: %s", path, strerror(err));
        goto done;
    }
    /* commit: nothing below can fail once the room and the path copy exist */
    sets_uri = find_entry(&tmp, "mongo-uri") != NULL;
    prom = find_entry(&tmp, "prometheus-url");
    /* a Prometheus URL with user information (user:password@) is a secret too; one without is not */
    if (prom && prom->value) {
        char *red = sa_promq_redact(prom->value);
        sets_prom_secret = !red || strcmp(red, prom->value) != 0;
        free(red);
    }
    path_copy = strdup(path);
    if (!path_copy || !reserve(cfg, tmp.n)) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < tmp.n; i++)
        put_entry(cfg, &tmp.v[i]);
    tmp.n = 0;
    free(cfg->path);
    cfg->path = path_copy;
    path_copy = NULL;
    if (sets_uri && (st.st_mode & (S_IRGRP | S_IROTH)))
        cfg->mongo_uri_exposed = true;
    if (sets_prom_secret && (st.st_mode & (S_IRGRP | S_IROTH)))
        cfg->prometheus_url_exposed = true;
    ok = true;

done:
    if (f)
        fclose(f);
    free(line);
    free(path_copy);
    sa_config_clear(&tmp);
    return ok;
}

const char *sa_config_get(const sa_config_t *cfg, const char *key)
{
    sa_config_entry_t *e = find_entry(cfg, key);
    return e ? e->value : NULL;
}

const char *sa_config_origin(const sa_config_t *cfg, const char *key)
{
    sa_config_entry_t *e = find_entry(cfg, key);
    return e ? e->origin : NULL;
}

const char *sa_config_get_or_default(const sa_config_t *cfg, const char *key)
{
    const sa_option_t *opt = sa_option_find(key);
    const char *v;

    if (!opt)
        return NULL;
    v = sa_config_get(cfg, key);
    return v ? v : opt->def;
}

int64_t sa_config_get_num(const sa_config_t *cfg, const char *key, int64_t dflt)
{
    const sa_option_t *opt = sa_option_find(key);
    const char *v = sa_config_get_or_default(cfg, key);
    int64_t num;

    if (!opt || opt->type == SA_OPT_STRING || !v || !sa_option_parse_value(opt, v, &num, NULL))
        return dflt;
    return num;
}

/* True when s starts with a MongoDB URI scheme. */
static bool has_mongo_scheme(const char *s)
{
    return strncmp(s, "mongodb://", 10) == 0 || strncmp(s, "mongodb+srv://", 14) == 0;
}

/*
 * Checks a URI from `source` (a description for messages, never the URI) and
 * returns a copy without surrounding white space, or NULL with *error set.
 */
static char *checked_uri(const char *uri, const char *source, sa_error_t *error)
{
    const char *start = uri, *end;
    char *copy;

    while (isspace((unsigned char)*start))
        start++;
    end = start + strlen(start);
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    if (end == start) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s: empty MongoDB URI", source);
        return NULL;
    }
    for (const char *p = start; p < end; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            sa_error_set(error, SA_ERR_USAGE, 0,
                         "%s: the MongoDB URI contains a control character (or more than one line)", source);
            return NULL;
        }
    }
    copy = strndup(start, (size_t)(end - start));
    if (!copy) {
        sa_error_nomem(error);
        return NULL;
    }
    if (!has_mongo_scheme(copy)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s: the MongoDB URI does not start with mongodb:// or mongodb+srv://",
                     source);
        explicit_bzero(copy, strlen(copy));
        free(copy);
        return NULL;
    }
    return copy;
}

/*
 * Reads the URI file at path. Sets *missing (when not NULL) and returns NULL
 * without an error when the file does not exist and missing is given; otherwise
 * a missing or unreadable file is an error. warn_mode: log a warning when group
 * or others may read the file.
 */
static char *read_uri_file(const char *path, const char *what, bool warn_mode, bool *missing, sa_error_t *error)
{
    char *buf = NULL, *uri = NULL;
    size_t len = 0;
    struct stat st;
    int fd;

    if (missing)
        *missing = false;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT && missing) {
            *missing = true;
            return NULL;
        }
        sa_error_set(error, SA_ERR_IO, errno, "%s %s: %s", what, path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sa_error_set(error, SA_ERR_IO, EINVAL, "%s %s: not a regular file", what, path);
        goto done;
    }
    if (warn_mode && (st.st_mode & (S_IRGRP | S_IROTH)))
        sa_log(SA_LOG_WARN, "%s %s is readable by %s: it holds a password; chmod 600 it", what, path,
               (st.st_mode & S_IROTH) ? "everyone" : "its group");
    buf = malloc(SA_URI_FILE_MAX + 1);
    if (!buf) {
        sa_error_nomem(error);
        goto done;
    }
    if (!sa_read_upto(fd, buf, SA_URI_FILE_MAX, &len)) {
        if (errno == EFBIG)
            sa_error_set(error, SA_ERR_USAGE, EFBIG, "%s %s: larger than %d bytes: not a URI file", what, path,
                         SA_URI_FILE_MAX);
        else
            sa_error_set(error, SA_ERR_IO, errno, "%s %s: %s", what, path, strerror(errno));
        goto done;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s %s: contains a NUL byte", what, path);
        goto done;
    }
    {
        char source[600];
        snprintf(source, sizeof source, "%s %s", what, path);
        uri = checked_uri(buf, source, error);
    }

done:
    if (buf) {
        explicit_bzero(buf, len);
        free(buf);
    }
    close(fd);
    return uri;
}

bool sa_config_resolve_mongo_uri(const sa_config_t *cfg, char **uri, sa_error_t *error)
{
    const char *env = getenv(SA_MONGO_URI_ENV);
    const char *file = sa_config_get(cfg, "mongo-uri-file");
    const char *creds = getenv("CREDENTIALS_DIRECTORY");
    const char *key = sa_config_get(cfg, "mongo-uri");
    bool missing = false;
    char *path = NULL;

    *uri = NULL;
    if (env && *env) {
        *uri = checked_uri(env, "environment variable " SA_MONGO_URI_ENV, error);
        if (*uri)
            sa_log(SA_LOG_DEBUG, "MongoDB URI from the environment variable %s", SA_MONGO_URI_ENV);
        return *uri != NULL;
    }
    if (file) {
        *uri = read_uri_file(file, "mongo-uri-file", true, NULL, error);
        if (*uri)
            sa_log(SA_LOG_DEBUG, "MongoDB URI from mongo-uri-file %s", file);
        return *uri != NULL;
    }
    if (creds && *creds) {
        if (asprintf(&path, "%s/%s", creds, SA_MONGO_URI_CREDENTIAL) < 0) {
            sa_error_nomem(error);
            return false;
        }
        *uri = read_uri_file(path, "systemd credential", false, &missing, error);
        if (*uri)
            sa_log(SA_LOG_DEBUG, "MongoDB URI from the systemd credential %s", path);
        free(path);
        if (*uri)
            return true;
        if (!missing)
            return false;
    }
    if (key) {
        char source[600];
        const char *origin = sa_config_origin(cfg, "mongo-uri");
        snprintf(source, sizeof source, "%s: mongo-uri", origin ? origin : "configuration");
        *uri = checked_uri(key, source, error);
        if (*uri)
            sa_log(SA_LOG_DEBUG, "MongoDB URI from %s", source);
        return *uri != NULL;
    }
    *uri = strdup(SA_MONGO_URI_DEFAULT);
    if (!*uri) {
        sa_error_nomem(error);
        return false;
    }
    sa_log(SA_LOG_DEBUG, "MongoDB URI: the default %s", SA_MONGO_URI_DEFAULT);
    return true;
}

/* True when a query option of this name can hold a secret. */
static bool secret_option(const char *name, size_t n)
{
    static const char *const words[] = {"password", "secret", "token", "authmechanismproperties"};
    char low[128];

    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strstr(low, words[i]))
            return true;
    }
    return false;
}

char *sa_redact_uri(const char *uri)
{
    const char *scheme_end, *auth, *at;
    size_t len, o = 0;
    bool *mask = NULL;
    char *out = NULL;

    if (!uri)
        return NULL;
    scheme_end = strstr(uri, "://");
    if (!scheme_end)
        return strdup("***");
    len = strlen(uri);
    mask = calloc(len + 1, sizeof *mask);
    out = malloc(len * 4 + 8);
    if (!mask || !out) {
        free(mask);
        free(out);
        return NULL;
    }
    auth = scheme_end + 3;
    /*
     * User info: up to the LAST '@', so that a password holding a raw '@', '/' or
     * '?' is hidden whole (a stray '@' later in the URI only hides more).
     */
    at = strrchr(auth, '@');
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        if (colon) {
            for (const char *p = colon + 1; p < at; p++)
                mask[p - uri] = true;
        }
    }
    /*
     * Query options: every "name=value" after a '?', '&' or ';' anywhere past the
     * scheme, whatever the user info looked like, so none escapes.
     */
    for (const char *p = auth; *p; p++) {
        const char *name, *eq, *end;
        if (*p != '?' && *p != '&' && *p != ';')
            continue;
        name = p + 1;
        eq = name + strcspn(name, "=&;?");
        if (*eq != '=')
            continue;
        end = eq + 1 + strcspn(eq + 1, "&;");
        if (secret_option(name, (size_t)(eq - name))) {
            for (const char *q = eq + 1; q < end; q++)
                mask[q - uri] = true;
        }
    }
    for (size_t i = 0; i < len; i++) {
        if (!mask[i]) {
            out[o++] = uri[i];
        } else if (i == 0 || !mask[i - 1]) {
            memcpy(out + o, "***", 3);
            o += 3;
        }
    }
    out[o] = '\0';
    free(mask);
    return out;
}

/* ---- the typed configuration ---------------------------------------------------------- */

/* Where each option lands in sa_ingest_config_t. */
static const struct {
    const char *name;
    size_t offset;
} config_fields[] = {
    {"cluster", offsetof(sa_ingest_config_t, cluster)},
    {"db", offsetof(sa_ingest_config_t, db)},
    {"sqlite", offsetof(sa_ingest_config_t, sqlite)},
    {"spool-dir", offsetof(sa_ingest_config_t, spool_dir)},
    {"archive-dir", offsetof(sa_ingest_config_t, archive_dir)},
    {"lock-dir", offsetof(sa_ingest_config_t, lock_dir)},
    {"job-cache", offsetof(sa_ingest_config_t, job_cache)},
    {"since", offsetof(sa_ingest_config_t, since)},
    {"squeue-command", offsetof(sa_ingest_config_t, squeue_command)},
    {"sinfo-command", offsetof(sa_ingest_config_t, sinfo_command)},
    {"sacct-command", offsetof(sa_ingest_config_t, sacct_command)},
    {"sdiag-command", offsetof(sa_ingest_config_t, sdiag_command)},
    {"log-level", offsetof(sa_ingest_config_t, log_level)},
    {"tz", offsetof(sa_ingest_config_t, tz)},
    {"backfill-window", offsetof(sa_ingest_config_t, backfill_window)},
    {"sacct-overlap", offsetof(sa_ingest_config_t, sacct_overlap)},
    {"timeout", offsetof(sa_ingest_config_t, timeout)},
    {"max-output", offsetof(sa_ingest_config_t, max_output)},
    {"max-gap", offsetof(sa_ingest_config_t, max_gap)},
    {"spool-max", offsetof(sa_ingest_config_t, spool_max)},
    {"cache-keep", offsetof(sa_ingest_config_t, cache_keep)},
    {"prometheus-url", offsetof(sa_ingest_config_t, prometheus_url)},
    {"prometheus-exporter", offsetof(sa_ingest_config_t, prometheus_exporter)},
    {"prometheus-budget", offsetof(sa_ingest_config_t, prometheus_budget)},
    {"prometheus-timeout", offsetof(sa_ingest_config_t, prometheus_timeout)},
    {"prometheus-step", offsetof(sa_ingest_config_t, prometheus_step)},
    {"prometheus-since", offsetof(sa_ingest_config_t, prometheus_since)},
};

bool sa_ingest_config_fill(const sa_config_t *cfg, sa_ingest_config_t *c, sa_error_t *error)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof config_fields / sizeof config_fields[0]; i++) {
        const sa_option_t *opt = sa_option_find(config_fields[i].name);
        char *slot = (char *)c + config_fields[i].offset;
        if (opt->type == SA_OPT_STRING)
            *(const char **)slot = sa_config_get_or_default(cfg, opt->name);
        else
            *(int64_t *)slot = sa_config_get_num(cfg, opt->name, 0);
    }
    if (!c->cluster) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--cluster NAME is required (or cluster = NAME in the configuration file)");
        return false;
    }
    if (!sa_cluster_name_ok(c->cluster)) {
        char q[160];
        sa_error_set(error, SA_ERR_USAGE, 0, "cluster name \"%s\" is not usable: %s",
                     sa_error_quote(c->cluster, 64, q, sizeof q), SA_CLUSTER_NAME_RULE);
        return false;
    }
    /* paths that default to the lock directory */
    if (!c->sqlite) {
        snprintf(c->sqlite_buf, sizeof c->sqlite_buf, "%s/%s.sqlite", c->lock_dir, c->cluster);
        c->sqlite = c->sqlite_buf;
    }
    if (!c->job_cache) {
        snprintf(c->job_cache_buf, sizeof c->job_cache_buf, "%s/%s.jobcache.sqlite", c->lock_dir, c->cluster);
        c->job_cache = c->job_cache_buf;
    }
    if (c->backfill_window <= 0)
        c->backfill_window = 86400;
    if (c->prometheus_exporter && strcmp(c->prometheus_exporter, "slurm-job-exporter") != 0 &&
        strcmp(c->prometheus_exporter, "jobstats") != 0) {
        char q[160];
        sa_error_set(error, SA_ERR_USAGE, 0, "prometheus-exporter: \"%s\" is neither slurm-job-exporter nor jobstats",
                     sa_error_quote(c->prometheus_exporter, 64, q, sizeof q));
        return false;
    }
    if (c->prometheus_step <= 0)
        c->prometheus_step = 30;
    /* a cap of 0 would refuse every capture (exit 10) on an empty spool: say it here */
    if (c->max_output <= 0 || c->spool_max <= 0) {
        const char *key = c->max_output <= 0 ? "max-output" : "spool-max";
        const char *origin = sa_config_origin(cfg, key);
        sa_error_set(error, SA_ERR_USAGE, 0, "%s%s%s: must be more than 0 bytes", origin ? origin : "",
                     origin ? ": " : "", key);
        return false;
    }
    return true;
}
