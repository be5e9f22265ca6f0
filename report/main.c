/*
 * main.c - slurm-report's command line. The only place that turns errors into exit
 * codes (schema/sa_exit.h); the reports are in sa_usage.c, sa_utilization.c,
 * sa_health.c and sa_current.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_exit.h"
#include "sa_mongo.h"
#include "sa_report.h"
#include "sa_rutil.h"
#include "sa_time.h"

#ifndef SA_VERSION
#define SA_VERSION "unknown"
#endif

static void usage(FILE *out)
{
    fputs("Usage: slurm-report [usage] [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--by KEYS]\n"
          "                    [-A ACCOUNTS] [-u USERS] [--allocations FILE] [--unit UNIT] [--year-days N]\n"
          "                    [--rgu-weights FILE] [--format FORMAT | -P] [-n] [-o FILE]\n"
          "                    [--mongo-uri URI] [--db NAME] [--sqlite PATH]\n"
          "       slurm-report utilization [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--sqlite PATH] ...\n"
          "       slurm-report health [-M CLUSTERS] [--stale DURATION] [-S START] [-E END] ...\n"
          "       slurm-report current [-M CLUSTERS] [--by KEYS] [--since TIME] [--format prometheus] ...\n"
          "\n"
          "Reports:\n"
          "  usage (default)      GPU time per cluster, account, user, GPU type; against awards with --allocations\n"
          "  utilization          GPU and CPU time by exact node state and GPU type (time series); stranded GPUs\n"
          "  health               vanished running jobs, reused job ids, stale ingest, failed ingest runs\n"
          "                       (exit status 9 when a check fails)\n"
          "  current              job counts of the latest snapshot, finished jobs since a time\n"
          "\n"
          "Options:\n"
          "  -M, --cluster LIST       clusters (comma-separated; default: all in the archive)\n"
          "  --month YYYY-MM          the calendar month (UTC)\n"
          "  -S, --starttime START    window start, UTC: YYYY-MM-DD[Thh:mm[:ss]], MM/DD[/YY], now-7days, ...\n"
          "  -E, --endtime END        window end (excluded; default: now)\n"
          "  --by KEYS                usage: account, user, gpu-type (default account);\n"
          "                           current: partition, account, user (default all three)\n"
          "  -A, --accounts LIST      only these accounts\n"
          "  -u, --users LIST         only these users\n"
          "  --allocations FILE       awards (schema/allocations.schema.json): one row per award\n"
          "  --unit UNIT              gpu-hours, gpu-years (default) or rgu-years\n"
          "  --year-days N            days in a GPU-year (default 365: 8760 GPU-hours)\n"
          "  --rgu-weights FILE       RGU weights instead of the built-in table (schema/rgu-weights.json)\n"
          "  --format FORMAT          table (default), parsable, csv, json, svg (usage), html,\n"
          "                           prometheus (current)\n"
          "  -P, --parsable           same as --format parsable\n"
          "  -n, --noheader           no header (and no '#' preamble lines)\n"
          "  -o, --output FILE        write FILE (atomically: a temporary file renamed) instead of stdout\n"
          "  --mongo-uri URI          the archive (default: $SLURM_REPORT_MONGO_URI, $SLURM_INGEST_MONGO_URI,\n"
          "                           mongodb://127.0.0.1:27017); prefer the environment: ps shows arguments\n"
          "  --db NAME                database (default slurm)\n"
          "  --sqlite PATH            node state time series (default /var/lib/slurm-ingest/CLUSTER.sqlite)\n"
          "  --sqlite-dir DIR         directory of the per-cluster default files (default /var/lib/slurm-ingest)\n"
          "  --stale DURATION         health: an ingest older than this is stale (default 1h; s, m, h, d, w)\n"
          "  --since TIME             current: count finished jobs since (default 24 hours before now)\n"
          "  --now TIME               take TIME as now (reproducible reports)\n"
          "  -h, --help               this help\n"
          "  --version                print the version\n",
          out);
}

/* Parses --by: a comma list of account, user, gpu-type, partition. */
static bool parse_by(const char *s, unsigned *by)
{
    sa_strv_t v;
    bool ok = true;
    sa_strv_init(&v);
    *by = 0;
    if (!sa_rlist_split(s, &v) || v.n == 0)
        ok = false;
    for (size_t i = 0; ok && i < v.n; i++) {
        if (strcmp(v.v[i], "account") == 0)
            *by |= SA_BY_ACCOUNT;
        else if (strcmp(v.v[i], "user") == 0)
            *by |= SA_BY_USER;
        else if (strcmp(v.v[i], "gpu-type") == 0 || strcmp(v.v[i], "gpu_type") == 0)
            *by |= SA_BY_GPU_TYPE;
        else if (strcmp(v.v[i], "partition") == 0)
            *by |= SA_BY_PARTITION;
        else
            ok = false;
    }
    sa_strv_clear(&v);
    return ok;
}

static int die_usage(const char *fmt, const char *arg)
{
    fputs("slurm-report: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see --help)\n", stderr);
    return SA_EXIT_USAGE;
}

/* What the command line says beside the options: read once every option is known (times depend on --now). */
typedef struct {
    const char *cmd, *output, *month, *start, *end, *since, *now;
} cli_t;

enum { O_MONTH = 256, O_BY, O_ALLOC, O_UNIT, O_FORMAT, O_MONGO, O_DB, O_SQLITE, O_YEARDAYS, O_RGU, O_STALE,
       O_SINCE, O_NOW, O_VERSION, O_SQLITE_DIR };

/* Applies an option that sets a value or a flag; -1 to go on, else the exit code. */
static int value_option(int c, const char *arg, sa_report_opts_t *o, cli_t *cli)
{
    char *e;

    switch (c) {
    case 'M': sa_rlist_split(arg, &o->clusters); break;
    case 'A': sa_rlist_split(arg, &o->accounts); break;
    case 'u': sa_rlist_split(arg, &o->users); break;
    case O_MONTH: cli->month = arg; break;
    case 'S': cli->start = arg; break;
    case 'E': cli->end = arg; break;
    case O_SINCE: cli->since = arg; break;
    case O_NOW: cli->now = arg; break;
    case 'o': cli->output = arg; break;
    case O_ALLOC: o->allocations_path = arg; break;
    case O_RGU: o->rgu_weights_path = arg; break;
    case O_MONGO: o->mongo_uri = arg; break;
    case O_DB: o->db_name = arg; break;
    case O_SQLITE: o->sqlite_path = arg; break;
    case O_SQLITE_DIR: o->sqlite_dir = arg; break;
    case 'P': o->format = SA_FMT_PARSABLE; break;
    case 'n': o->no_header = true; break;
    case O_YEARDAYS:
        o->year_days = strtod(arg, &e);
        if (*e || !(o->year_days > 0 && o->year_days <= 366))
            return die_usage("--year-days: expected a number of days in (0, 366], got '%s'", arg);
        break;
    default:
        usage(stderr);
        return SA_EXIT_USAGE;
    }
    return -1;
}

/* Applies one option; -1 to go on, else the exit code (help, version, a bad value). */
static int apply_option(int c, const char *arg, sa_report_opts_t *o, cli_t *cli)
{
    sa_error_t error;

    switch (c) {
    case O_BY:
        if (!parse_by(arg, &o->by))
            return die_usage("--by: expected a comma list of account, user, gpu-type, partition, got '%s'", arg);
        return -1;
    case O_UNIT:
        if (strcmp(arg, "gpu-hours") == 0)
            o->unit = SA_UNIT_GPU_HOURS;
        else if (strcmp(arg, "gpu-years") == 0)
            o->unit = SA_UNIT_GPU_YEARS;
        else if (strcmp(arg, "rgu-years") == 0)
            o->unit = SA_UNIT_RGU_YEARS;
        else
            return die_usage("--unit: expected gpu-hours, gpu-years or rgu-years, got '%s'", arg);
        return -1;
    case O_FORMAT:
        if (!sa_format_parse(arg, &o->format))
            return die_usage("--format: expected table, parsable, csv, json, svg, html or prometheus, got '%s'", arg);
        return -1;
    case O_STALE:
        if (!sa_time_parse_duration(arg, &o->stale_s, &error))
            return die_usage("--stale: %s", error.message);
        if (o->stale_s <= 0)
            return die_usage("--stale: must be more than 0, got '%s'", arg);
        return -1;
    case 'h':
        usage(stdout);
        return SA_EXIT_OK;
    case O_VERSION:
        printf("slurm-report %s\n", SA_VERSION);
        return SA_EXIT_OK;
    default:
        return value_option(c, arg, o, cli);
    }
}

/* Parses the command line into *o and *cli; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, sa_report_opts_t *o, cli_t *cli)
{
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, 'M'},   {"clusters", required_argument, NULL, 'M'},
        {"month", required_argument, NULL, O_MONTH}, {"starttime", required_argument, NULL, 'S'},
        {"endtime", required_argument, NULL, 'E'},   {"by", required_argument, NULL, O_BY},
        {"accounts", required_argument, NULL, 'A'},  {"account", required_argument, NULL, 'A'},
        {"users", required_argument, NULL, 'u'},     {"user", required_argument, NULL, 'u'},
        {"allocations", required_argument, NULL, O_ALLOC},
        {"unit", required_argument, NULL, O_UNIT},   {"format", required_argument, NULL, O_FORMAT},
        {"parsable", no_argument, NULL, 'P'},        {"noheader", no_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},    {"mongo-uri", required_argument, NULL, O_MONGO},
        {"db", required_argument, NULL, O_DB},       {"sqlite", required_argument, NULL, O_SQLITE},
        {"sqlite-dir", required_argument, NULL, O_SQLITE_DIR},
        {"year-days", required_argument, NULL, O_YEARDAYS},
        {"rgu-weights", required_argument, NULL, O_RGU},
        {"stale", required_argument, NULL, O_STALE}, {"since", required_argument, NULL, O_SINCE},
        {"now", required_argument, NULL, O_NOW},     {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},   {NULL, 0, NULL, 0},
    };
    int c, rc;

    while ((c = getopt_long(argc, argv, "M:S:E:A:u:Pno:h", longopts, NULL)) != -1) {
        if ((rc = apply_option(c, optarg, o, cli)) >= 0)
            return rc;
    }
    if (optind < argc)
        cli->cmd = argv[optind++];
    if (optind < argc)
        return die_usage("unexpected argument '%s'", argv[optind]);
    if (strcmp(cli->cmd, "usage") != 0 && strcmp(cli->cmd, "utilization") != 0 && strcmp(cli->cmd, "health") != 0 &&
        strcmp(cli->cmd, "current") != 0)
        return die_usage("unknown report '%s' (usage, utilization, health, current)", cli->cmd);
    return -1;
}

/*
 * Reads the times (--now first, relative to the clock; the others relative to it) and
 * checks what depends on the report. -1 to go on, else the exit code.
 */
static int parse_times(const cli_t *cli, sa_report_opts_t *o)
{
    sa_error_t error;

    if (cli->now && !sa_time_parse(cli->now, o->now, &o->now, &error))
        return die_usage("--now: %s", error.message);
    if (cli->month && (cli->start || cli->end))
        return die_usage("give --month or -S/-E, not both%s", "");
    if (cli->month && !sa_rmonth_parse(cli->month, &o->start, &o->end))
        return die_usage("--month: expected YYYY-MM, got '%s'", cli->month);
    if (cli->start && !sa_time_parse(cli->start, o->now, &o->start, &error))
        return die_usage("-S: %s", error.message);
    if (cli->end && !sa_time_parse(cli->end, o->now, &o->end, &error))
        return die_usage("-E: %s", error.message);
    if (cli->end && !cli->start && !cli->month && strcmp(cli->cmd, "health") != 0)
        return die_usage("-E needs -S%s", "");
    if (cli->start && !cli->end)
        o->end = o->now;
    if (cli->since && !sa_time_parse(cli->since, o->now, &o->since, &error))
        return die_usage("--since: %s", error.message);
    if (o->format == SA_FMT_PROMETHEUS && strcmp(cli->cmd, "current") != 0)
        return die_usage("--format prometheus is for `current`%s", "");
    return -1;
}

/* Runs the report cli->cmd into out; *healthy false when health found a problem. */
static bool run_report(const cli_t *cli, const sa_report_opts_t *o, FILE *out, bool *healthy, sa_error_t *error)
{
    bool ok;

    *healthy = true;
    if (strcmp(cli->cmd, "usage") == 0)
        ok = sa_report_usage(o, out, stderr, error);
    else if (strcmp(cli->cmd, "utilization") == 0)
        ok = sa_report_utilization(o, out, stderr, error);
    else if (strcmp(cli->cmd, "health") == 0)
        ok = sa_report_health(o, out, stderr, healthy, error);
    else
        ok = sa_report_current(o, out, stderr, error);
    if (ok && fflush(out) != 0) {
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
        ok = false;
    }
    return ok;
}

/* Runs the report into stdout, or into -o FILE atomically (a temporary file renamed); returns the exit code. */
static int run(const cli_t *cli, const sa_report_opts_t *o)
{
    sa_error_t error;
    char *tmp = NULL;
    FILE *out = stdout;
    bool healthy = true, ok;
    int fd;

    sa_error_clear(&error);
    if (cli->output) {
        tmp = sa_rprintf("%s.tmp.XXXXXX", cli->output);
        if (!tmp || (fd = mkstemp(tmp)) < 0 || !(out = fdopen(fd, "w"))) {
            fprintf(stderr, "slurm-report: %s: cannot create a temporary file beside it: %s\n", cli->output,
                    strerror(errno));
            free(tmp);
            return SA_EXIT_FAILURE;
        }
    }
    ok = run_report(cli, o, out, &healthy, &error);
    if (cli->output) {
        if (fclose(out) != 0 && ok) {
            sa_error_set(&error, SA_ERR_IO, errno, "writing %s: %s", cli->output, strerror(errno));
            ok = false;
        }
        if (ok && rename(tmp, cli->output) != 0) {
            sa_error_set(&error, SA_ERR_IO, errno, "renaming the report to %s: %s", cli->output, strerror(errno));
            ok = false;
        }
        if (!ok)
            unlink(tmp);
        free(tmp);
    }
    if (!ok) {
        fprintf(stderr, "slurm-report: %s\n", error.message);
        return sa_exit_code_for(&error, false);
    }
    return healthy ? SA_EXIT_OK : SA_EXIT_UNHEALTHY;
}

int main(int argc, char **argv)
{
    sa_report_opts_t o;
    cli_t cli = {.cmd = "usage"};
    int rc;

    sa_report_opts_init(&o);
    sa_error_install_allocators("slurm-report");
    sa_mongo_init();
    if ((rc = parse_args(argc, argv, &o, &cli)) < 0 && (rc = parse_times(&cli, &o)) < 0)
        rc = run(&cli, &o);
    sa_report_opts_clear(&o);
    return rc;
}
