/*
 * main.c - slurm-ingest's command line. The only place that turns errors into exit
 * codes (sa_exit.h); everything below returns bool and an sa_error_t.
 *
 *   slurm-ingest --cluster NAME [options]          one run (Slurm commands or --squeue/--sinfo/... files)
 *   slurm-ingest replay DIR --cluster NAME [...]   re-ingest an --archive-dir (or spool) in time order
 *   slurm-ingest migrate --cluster NAME [...]      move an archive of 0.1 to the _id scheme of 0.2
 *   slurm-ingest rollup [--rebuild] [--since DATE] --cluster NAME  check (rebuild) the usage rollups against the job documents,
 *                                                   and ingest_days against ingest_runs
 *   slurm-ingest audit {-S DATE [-E DATE] | --month M} [--sacct FILE] [--repair] --cluster NAME
 *                                                   compare the archive with slurmdbd (sacct), or mend it
 *   slurm-ingest --dump FILE...                    print the parsed records as JSON lines
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_config.h"
#include "sa_exit.h"
#include "sa_log.h"
#include "sa_mongo.h"
#include "sa_notes.h"
#include "sa_parse.h"
#include "sa_invocation.h"
#include "sa_time.h"

#ifndef SA_VERSION
#define SA_VERSION "unknown"
#endif

/* Options that exist only on the command line (the others come from sa_ingest_options). */
enum {
    OPT_CONFIG = 1000, OPT_SQUEUE, OPT_SINFO, OPT_SACCT, OPT_SDIAG, OPT_AT, OPT_STATS, OPT_NO_MONGO, OPT_DUMP,
    OPT_DELIM, OPT_FIELDS, OPT_VERSION, OPT_VERIFY, OPT_REBUILD, OPT_NODE_CONFIG, OPT_REPAIR, OPT_MONTH, OPT_TABLE = 2000 /* + index in sa_ingest_options */
};

static void usage(FILE *out)
{
    fputs("Usage: slurm-ingest --cluster NAME [OPTION]...\n"
          "       slurm-ingest replay DIR --cluster NAME [OPTION]...\n"
          "       slurm-ingest migrate --cluster NAME [OPTION]...\n"
          "       slurm-ingest rollup [--rebuild] [--since DATE] --cluster NAME [OPTION]...\n"
          "       slurm-ingest audit {-S DATE [-E DATE] | --month M} [--sacct FILE] [--repair] --cluster NAME\n"
          "       slurm-ingest --dump [--delimiter STR] [--sacct-fields LIST] [--tz ZONE] FILE...\n"
          "\n"
          "Archives one Slurm cluster: jobs into MongoDB (one document per job, with its state\n"
          "history and runs), node/CPU/GPU states into an SQLite time series. With no input\n"
          "files it runs squeue, sinfo, sacct and sdiag itself.\n"
          "\n"
          "Inputs (captured output instead of running Slurm; '-' = stdin):\n"
          "  --squeue FILE         squeue --json / scontrol show job --json\n"
          "  --sinfo FILE          sinfo --json, sinfo -N --json, scontrol show nodes --json or -o\n"
          "  --sacct FILE          sacct --json or sacct -P/-p text (detected)\n"
          "  --sdiag FILE          sdiag --json\n"
          "  --node-config FILE    scontrol show nodes --json: the nodes' configured GPUs as of\n"
          "                        --at, carried to the snapshots from --at on that do not say\n"
          "                        them (grouped sinfo --json); recorded first, alone when no\n"
          "                        other input\n"
          "  --at TIME             observation time of the files (ISO-8601 UTC; default: now)\n"
          "  --delimiter STR       delimiter of sacct text (default: detected)\n"
          "  --sacct-fields LIST   field list of sacct text captured with -n (no header)\n"
          "\n"
          "General:\n"
          "  --config FILE         read options from FILE (key = value; see slurm-ingest(8))\n"
          "  --stats               print the run's phases and counts as JSON\n"
          "  --no-mongo            write the time series only\n"
          "  --verify              merge every record and check the job cache against the archive\n"
          "\n"
          "audit (compares the archive's jobs with slurmdbd's; exit 9 when they differ):\n"
          "  -S, --starttime DATE  start of the window (sacct's -S)\n"
          "  -E, --endtime DATE    end of the window (sacct's -E; default: now)\n"
          "  --month YYYY-MM|last  the window of a calendar month (UTC); last: the one before --at's\n"
          "  --sacct FILE          slurmdbd's records from a capture of sacct -P -D (or --json)\n"
          "                        instead of running sacct\n"
          "  --repair              merge slurmdbd's records of the jobs that differ into the\n"
          "                        archive (rollups and job cache with them), then compare again\n"
          "  -v, --verbose         more log lines (twice: debug)\n"
          "  -q, --quiet           fewer log lines (once: warnings and errors; twice: errors only)\n"
          "  --dump FILE...        parse and print records as JSON lines; no database\n"
          "  -h, --help            this help\n"
          "  --version             print the version\n"
          "\n"
          "Options (also configuration file keys):\n",
          out);
    for (size_t i = 0; i < sa_ingest_noptions; i++) {
        const sa_option_t *opt = &sa_ingest_options[i];
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
        fprintf(out, "  %-28s %s%s%s%s\n", left, opt->help, opt->def ? " (default: " : "", opt->def ? opt->def : "",
                opt->def ? ")" : "");
    }
    fputs("\nThe MongoDB URI comes from SLURM_INGEST_MONGO_URI, mongo-uri-file, the systemd\n"
          "credential 'mongo-uri' or mongo-uri (the command line shows it to ps: avoid --mongo-uri).\n"
          "\nExit codes: 0 ok, 1 failure (out of memory), 2 usage, 3 bad input (set aside in\n"
          "the spool's rejected/), 4 Slurm command failed, 5 MongoDB refused (authentication,\n"
          "TLS, a write), 6 SQLite error, 7 another run holds the lock, 8 MongoDB unreachable:\n"
          "captures spooled, nothing lost, 9 audit: the archive differs from slurmdbd, 10 the\n"
          "spool is full: this capture was refused.\n",
          out);
}

/* ---- --dump ------------------------------------------------------------------------- */

static bool print_json(json_t *o, sa_error_t *error)
{
    char *s;
    if (!o) {
        sa_error_nomem(error);
        return false;
    }
    s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s || puts(s) < 0) {
        free(s);
        sa_error_set(error, SA_ERR_IO, errno, "cannot write to standard output");
        return false;
    }
    free(s);
    return true;
}

/* One --dump input: its name for messages, its odd records (said at its end, as a run says them). */
typedef struct {
    const char *name;
    sa_notes_t notes;
    size_t nodes;
} dump_t;

static bool dump_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    sa_notes_job(&((dump_t *)ctx)->notes, job);
    return print_json(sa_job_to_json(job), error);
}

static bool dump_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    dump_t *d = ctx;
    bool nomem;

    sa_notes_node(&d->notes, node, d->nodes++, &nomem);
    if (nomem)
        return sa_error_nomem(error);
    return print_json(sa_node_to_json(node), error);
}

/* A line of sa_notes_say on stderr. */
static void dump_note(const char *line, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "slurm-ingest: %s\n", line);
}

/* A record the parser could not take (or repaired): one line on stderr, as a run logs it; the rest goes on. */
static bool dump_setaside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    (void)raw;
    (void)len;
    (void)error;
    fprintf(stderr, "slurm-ingest: %s: %s: %s\n", ((const dump_t *)ctx)->name, why,
            kept ? "repaired and kept" : "record set aside");
    return true;
}

/*
 * Parses one file (or stdin) and prints its records. A record that cannot be taken is set
 * aside as a run sets it aside (one line on stderr each) and the others are printed.
 * Returns an exit code: 3 only when the input cannot be parsed at all.
 */
static int dump_file(const char *path, const sa_sacct_text_opts_t *topts)
{
    dump_t d = {.name = strcmp(path, "-") ? path : "(stdin)"};
    const char *name = d.name;
    sa_sink_t sink = {dump_job, dump_node, &d, dump_setaside, false, NULL};
    sa_error_t error;
    sa_meta_t meta;
    sa_reader_t r;
    sa_kind_t kind;
    int fd = 0, rc = SA_EXIT_OK;

    sa_error_clear(&error);
    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "slurm-ingest: %s: %s\n", path, strerror(errno));
            return SA_EXIT_INPUT;
        }
    }
    sa_meta_init(&meta);
    sa_reader_init_fd(&r, fd);
    if (!sa_parse_any(&r, topts, &sink, &meta, &kind, &error)) {
        fprintf(stderr, "slurm-ingest: %s: %s\n", name, error.message);
        rc = error.domain == SA_ERR_NOMEM ? SA_EXIT_FAILURE : SA_EXIT_INPUT;
    } else {
        sa_notes_say(&d.notes, name, dump_note, NULL);
        for (size_t i = 0; i < meta.warnings.n; i++)
            fprintf(stderr, "slurm-ingest: %s: Slurm warning: %s\n", path, meta.warnings.v[i]);
        for (size_t i = 0; i < meta.errors.n; i++)
            fprintf(stderr, "slurm-ingest: %s: Slurm error: %s\n", path, meta.errors.v[i]);
        if (meta.errors.n)
            rc = SA_EXIT_SLURM;
    }
    sa_meta_clear(&meta);
    sa_notes_clear(&d.notes);
    if (fd > 0)
        close(fd);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------- */

/* The exit code for a refused command line or configuration: 2, or 1 when memory ran out. */
static int usage_exit(const sa_error_t *error)
{
    return error->domain == SA_ERR_NOMEM ? SA_EXIT_FAILURE : SA_EXIT_USAGE;
}

/*
 * The run's configuration: the file, the command line on top of it, the log level, the
 * typed configuration, --at and the MongoDB URI (then removed from the environment, so the
 * Slurm commands the run starts never see it). SA_EXIT_OK, or the exit code of what is wrong
 * (said on stderr).
 */
static int configure(const char *config_path, const char *const table_values[], int nv, int nq, const char *at_text,
                     sa_config_t *cfg, sa_ingest_config_t *ic, sa_invocation_opts_t *ro)
{
    sa_error_t error;

    sa_error_clear(&error);
    /* the configuration file first, then the command line on top of it */
    if (config_path && !sa_config_load(config_path, cfg, &error)) {
        fprintf(stderr, "slurm-ingest: %s\n", error.message);
        return usage_exit(&error);
    }
    for (size_t i = 0; i < sa_ingest_noptions; i++) {
        if (table_values[i] && !sa_config_set(cfg, sa_ingest_options[i].name, table_values[i], "command line", &error)) {
            fprintf(stderr, "slurm-ingest: %s\n", error.message);
            return usage_exit(&error);
        }
    }
    {
        sa_log_level_t level = SA_LOG_INFO;
        const char *lv = sa_config_get_or_default(cfg, "log-level");
        if (lv)
            sa_log_level_parse(lv, &level);
        sa_log_set_level(sa_log_level_adjust(level, nv, nq));
    }
    if (!sa_ingest_config_fill(cfg, ic, &error)) {
        fprintf(stderr, "slurm-ingest: %s\n", error.message);
        return usage_exit(&error);
    }
    sa_log_set_cluster(ic->cluster);
    if (cfg->mongo_uri_exposed)
        sa_log(SA_LOG_WARN, "%s sets mongo-uri and is readable by others: use mongo-uri-file or a systemd credential",
               cfg->path);
    if (cfg->prometheus_url_exposed)
        sa_log(SA_LOG_WARN, "%s sets a prometheus-url with a password and is readable by others: make it 0600",
               cfg->path);
    ro->cfg = ic;
    ro->at = time(NULL);
    if (at_text && !sa_time_parse(at_text, ro->at, &ro->at, &error)) {
        fprintf(stderr, "slurm-ingest: --at: %s\n", error.message);
        return usage_exit(&error);
    }
    {
        int64_t t; /* the Prometheus import's backfill start, checked before anything runs */
        if (ic->prometheus_since && !sa_time_parse(ic->prometheus_since, ro->at, &t, &error)) {
            fprintf(stderr, "slurm-ingest: prometheus-since: %s\n", error.message);
            return usage_exit(&error);
        }
    }
    if (!ro->no_mongo) {
        /* --mongo-uri on the command line (shown by ps) wins when given; else env, file, credential, config */
        const char *cli_uri = NULL;
        for (size_t i = 0; i < sa_ingest_noptions; i++) {
            if (strcmp(sa_ingest_options[i].name, "mongo-uri") == 0)
                cli_uri = table_values[i];
        }
        if (cli_uri) {
            if (!(ro->mongo_uri = strdup(cli_uri))) {
                fputs("slurm-ingest: out of memory\n", stderr);
                return SA_EXIT_FAILURE;
            }
        } else if (!sa_config_resolve_mongo_uri(cfg, &ro->mongo_uri, &error)) {
            fprintf(stderr, "slurm-ingest: %s\n", error.message);
            return usage_exit(&error);
        }
    }
    /* a URI that cannot name a server is a configuration error, found before anything is captured */
    if (ro->mongo_uri && !sa_mongo_uri_check(ro->mongo_uri, &error)) {
        fprintf(stderr, "slurm-ingest: %s\n", error.message);
        return usage_exit(&error);
    }
    /* the URI is ours now: the Slurm commands this run starts never see it */
    unsetenv(SA_MONGO_URI_ENV);
    return SA_EXIT_OK;
}

/*
 * slurm-ingest --dump FILE...: prints the records of argv[first..argc) as JSON lines.
 * --tz (the only option of the table --dump reads) is table_values' "tz". Returns the
 * exit code.
 */
static int run_dump(int argc, char **argv, int first, const char *const *table_values,
                    sa_sacct_text_opts_t *topts)
{
    sa_error_t error;
    int rc = SA_EXIT_OK;

    sa_error_clear(&error);
    if (first >= argc) {
        fputs("slurm-ingest: --dump needs at least one FILE\n", stderr);
        return SA_EXIT_USAGE;
    }
    /* the zone of sacct text captured in local time */
    for (size_t i = 0; i < sa_ingest_noptions; i++) {
        if (strcmp(sa_ingest_options[i].name, "tz") == 0 && table_values[i]) {
            if (!sa_tz_valid(table_values[i], &error)) {
                fprintf(stderr, "slurm-ingest: --tz: %s\n", error.message);
                return SA_EXIT_USAGE;
            }
            topts->tz = table_values[i];
        }
    }
    for (int i = first; i < argc; i++) {
        int frc = dump_file(argv[i], topts);
        if (frc != SA_EXIT_OK && rc == SA_EXIT_OK)
            rc = frc;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "slurm-ingest: cannot write to standard output: %s\n", strerror(errno));
        return SA_EXIT_FAILURE;
    }
    return rc;
}

/*
 * Runs what argv[first..argc) names once configured: replay DIR, migrate, rollup, or
 * (nothing) an ingest run. Returns the exit code.
 */
/*
 * slurm-ingest audit: the window from -S/-E (relative forms from --at), the comparison,
 * and its exit code: 0 when the archive agrees with slurmdbd (after --repair: once it does),
 * 9 when differences remain.
 */
static int run_audit(const char *s_text, const char *e_text, const char *m_text, bool repair,
                     sa_invocation_opts_t *ro)
{
    int64_t from, to = ro->at;
    size_t left = 0;
    sa_error_t error;

    sa_error_clear(&error);
    if (ro->no_mongo) {
        fputs("slurm-ingest: audit compares with the archive: not with --no-mongo\n", stderr);
        return SA_EXIT_USAGE;
    }
    if (m_text && (s_text || e_text)) {
        fputs("slurm-ingest: audit: --month or -S/-E, not both\n", stderr);
        return SA_EXIT_USAGE;
    }
    if (m_text) {
        /* a calendar month (UTC): YYYY-MM, or "last", the month before --at's */
        char first[32];
        int y, m;
        struct tm tm;
        time_t at = (time_t)ro->at;
        gmtime_r(&at, &tm);
        y = tm.tm_year + 1900;
        m = tm.tm_mon + 1;
        if (strcmp(m_text, "last") == 0) {
            if (--m == 0) {
                m = 12;
                y--;
            }
        } else if (strlen(m_text) != 7 || sscanf(m_text, "%4d-%2d", &y, &m) != 2 || m < 1 || m > 12) {
            fprintf(stderr, "slurm-ingest: audit: --month '%s': give YYYY-MM or last\n", m_text);
            return SA_EXIT_USAGE;
        }
        snprintf(first, sizeof first, "%04d-%02d-01T00:00:00Z", y, m);
        if (!sa_time_parse_iso(first, &from))
            return SA_EXIT_USAGE;
        snprintf(first, sizeof first, "%04d-%02d-01T00:00:00Z", m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1);
        if (!sa_time_parse_iso(first, &to))
            return SA_EXIT_USAGE;
    } else if (!s_text) {
        fputs("slurm-ingest: audit needs -S DATE (the window's start) or --month\n", stderr);
        return SA_EXIT_USAGE;
    } else if (!sa_time_parse(s_text, ro->at, &from, &error) ||
               (e_text && !sa_time_parse(e_text, ro->at, &to, &error))) {
        fprintf(stderr, "slurm-ingest: audit: %s\n", error.message);
        return SA_EXIT_USAGE;
    }
    if (from >= to) {
        fputs("slurm-ingest: audit: -S must be before -E\n", stderr);
        return SA_EXIT_USAGE;
    }
    if (sa_invocation_audit(ro, from, to, repair, stdout, &left, &error) != SA_INVOCATION_OK) {
        sa_log(SA_LOG_ERROR, "%s", error.message);
        return sa_exit_code_for(&error, true);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "slurm-ingest: cannot write to standard output: %s\n", strerror(errno));
        return SA_EXIT_FAILURE;
    }
    return left ? SA_EXIT_UNHEALTHY : SA_EXIT_OK;
}

static int run_command(int argc, char **argv, int first, bool rebuild, const sa_ingest_config_t *ic,
                       sa_invocation_opts_t *ro)
{
    sa_invocation_result_t result;
    sa_error_t error;

    sa_error_clear(&error);
    if (first < argc && strcmp(argv[first], "replay") == 0) {
        if (first + 2 != argc) {
            fputs("slurm-ingest: usage: slurm-ingest replay DIR --cluster NAME\n", stderr);
            return SA_EXIT_USAGE;
        }
        result = sa_invocation_replay(ro, argv[first + 1], &error);
    } else if (first < argc && strcmp(argv[first], "migrate") == 0 && first + 1 == argc) {
        result = sa_invocation_migrate(ro, &error);
    } else if (first < argc && strcmp(argv[first], "rollup") == 0 && first + 1 == argc) {
        size_t differ = 0;
        result = sa_invocation_rollup(ro, rebuild, &differ, &error);
        if (result == SA_INVOCATION_OK && differ && !rebuild) {
            sa_log(SA_LOG_ERROR, "%zu rollup or ingest_days document(s) or clusters field(s) differ from the job "
                                 "documents and ingest_runs (slurm-ingest rollup --rebuild rewrites them)", differ);
            return SA_EXIT_UNHEALTHY;
        }
    } else if (first < argc) {
        fprintf(stderr, "slurm-ingest: unexpected argument '%s' (see --help)\n", argv[first]);
        return SA_EXIT_USAGE;
    } else {
        result = sa_invocation_ingest(ro, &error);
    }

    switch (result) {
    case SA_INVOCATION_OK: return SA_EXIT_OK;
    case SA_INVOCATION_SPOOLED:
        sa_log(SA_LOG_WARN, "MongoDB unreachable: captures spooled in %s/%s, nothing lost", ic->spool_dir,
               ic->cluster);
        return SA_EXIT_SPOOLED;
    case SA_INVOCATION_FAILED:
    default:
        sa_log(SA_LOG_ERROR, "%s", error.message);
        return sa_exit_code_for(&error, true);
    }
}

/* MONGOC_DISABLE_SHM before libmongoc's own initialisation: see sa_mongo_preinit */
SA_MONGO_PREINIT;

int main(int argc, char **argv)
{
    static const struct option fixed[] = {
        {"config", required_argument, NULL, OPT_CONFIG}, {"squeue", required_argument, NULL, OPT_SQUEUE},
        {"sinfo", required_argument, NULL, OPT_SINFO},   {"sacct", required_argument, NULL, OPT_SACCT},
        {"sdiag", required_argument, NULL, OPT_SDIAG},   {"at", required_argument, NULL, OPT_AT},
        {"stats", no_argument, NULL, OPT_STATS},         {"no-mongo", no_argument, NULL, OPT_NO_MONGO},
        {"dump", no_argument, NULL, OPT_DUMP},           {"delimiter", required_argument, NULL, OPT_DELIM},
        {"sacct-fields", required_argument, NULL, OPT_FIELDS},
        {"verbose", no_argument, NULL, 'v'},             {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, OPT_VERSION},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"rebuild", no_argument, NULL, OPT_REBUILD},
        {"node-config", required_argument, NULL, OPT_NODE_CONFIG},
        {"starttime", required_argument, NULL, 'S'},     {"endtime", required_argument, NULL, 'E'},
        {"repair", no_argument, NULL, OPT_REPAIR},       {"month", required_argument, NULL, OPT_MONTH},
    };
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    static struct option longopts[96];
    static const char *table_values[64];
    sa_invocation_opts_t ro;
    sa_config_t cfg;
    static sa_ingest_config_t ic;
    sa_error_t error;
    const char *config_path = NULL, *at_text = NULL, *s_text = NULL, *e_text = NULL, *m_text = NULL;
    bool dump = false, rebuild = false, repair = false;
    int c, nv = 0, nq = 0, rc = SA_EXIT_OK;

    memset(&ro, 0, sizeof ro);
    sa_config_init(&cfg);
    sa_error_clear(&error);
    signal(SIGPIPE, SIG_IGN);
    /* captures, spool, cache and time series are never readable by every user, whatever the caller's umask */
    umask(umask(0) | S_IRWXO);
    sa_error_install_allocators("slurm-ingest");
    sa_mongo_init(); /* even for --dump: libmongoc is initialised whatever the run does */
    sa_log_set_program("slurm-ingest");
    if (nfixed + sa_ingest_noptions + 1 > sizeof longopts / sizeof longopts[0] ||
        sa_ingest_noptions > sizeof table_values / sizeof table_values[0])
        return SA_EXIT_FAILURE; /* a bug: the option table outgrew these arrays */
    memcpy(longopts, fixed, sizeof fixed);
    for (size_t i = 0; i < sa_ingest_noptions; i++) {
        longopts[nfixed + i].name = sa_ingest_options[i].name;
        longopts[nfixed + i].has_arg = sa_ingest_options[i].type == SA_OPT_BOOL ? optional_argument : required_argument;
        longopts[nfixed + i].val = OPT_TABLE + (int)i;
    }

    while ((c = getopt_long(argc, argv, "hvqS:E:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG: config_path = optarg; break;
        case OPT_SQUEUE: ro.files[SA_IN_SQUEUE] = optarg; break;
        case OPT_SINFO: ro.files[SA_IN_SINFO] = optarg; break;
        case OPT_SACCT: ro.files[SA_IN_SACCT] = optarg; break;
        case OPT_SDIAG: ro.files[SA_IN_SDIAG] = optarg; break;
        case OPT_AT: at_text = optarg; break;
        case OPT_STATS: ro.print_stats = true; break;
        case OPT_NO_MONGO: ro.no_mongo = true; break;
        case OPT_VERIFY: ro.verify = true; break;
        case OPT_REBUILD: rebuild = true; break;
        case OPT_NODE_CONFIG: ro.node_config = optarg; break;
        case 'S': s_text = optarg; break;
        case 'E': e_text = optarg; break;
        case OPT_REPAIR: repair = true; break;
        case OPT_MONTH: m_text = optarg; break;
        case OPT_DUMP: dump = true; break;
        case OPT_DELIM: ro.topts.delimiter = optarg; break;
        case OPT_FIELDS: ro.topts.fields = optarg; break;
        case 'v': nv++; break;
        case 'q': nq++; break;
        case 'h': usage(stdout); return SA_EXIT_OK;
        case OPT_VERSION: printf("slurm-ingest %s\n", SA_VERSION); return SA_EXIT_OK;
        default:
            if (c >= OPT_TABLE && c < OPT_TABLE + (int)sa_ingest_noptions) {
                table_values[c - OPT_TABLE] = optarg ? optarg : "yes";
                break;
            }
            fputs("slurm-ingest: see --help\n", stderr);
            return SA_EXIT_USAGE;
        }
    }

    if (dump)
        return run_dump(argc, argv, optind, table_values, &ro.topts);

    {
        /* standard input can be read once: one input at most */
        int nstdin = 0;
        for (int k = 0; k < SA_IN_COUNT; k++)
            nstdin += ro.files[k] && strcmp(ro.files[k], "-") == 0;
        if (nstdin > 1) {
            fputs("slurm-ingest: '-' (standard input) may be given for one input only\n", stderr);
            return SA_EXIT_USAGE;
        }
    }
    rc = configure(config_path, table_values, nv, nq, at_text, &cfg, &ic, &ro);
    if (rc != SA_EXIT_OK)
        goto done;

    if (optind < argc && strcmp(argv[optind], "audit") == 0) {
        if (optind + 1 != argc) {
            fprintf(stderr, "slurm-ingest: unexpected argument '%s' (see --help)\n", argv[optind + 1]);
            rc = SA_EXIT_USAGE;
        } else {
            rc = run_audit(s_text, e_text, m_text, repair, &ro);
        }
    } else if (s_text || e_text || m_text || repair) {
        fputs("slurm-ingest: -S, -E, --month and --repair are audit's (slurm-ingest audit ...)\n", stderr);
        rc = SA_EXIT_USAGE;
    } else {
        rc = run_command(argc, argv, optind, rebuild, &ic, &ro);
    }
done:
    free(ro.mongo_uri);
    sa_config_clear(&cfg);
    return rc;
}
