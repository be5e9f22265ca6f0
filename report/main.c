/*
 * main.c - slurm-report's command line. The only place that turns errors into exit
 * codes (schema/core/sa_exit.h); the reports are in sa_usage.c, sa_utilization.c,
 * sa_health.c, sa_current.c and the site in sa_site.c.
 *
 * The options follow sacct and sreport where they have one: -M, -S/-E (dates as sacct
 * reads them, schema/core/sa_time.h), -A, -u, -o/--format col,col%N, -l, -e, -p/-P,
 * --delimiter, -n, -v, -t hours|minutes|percent; the output kind is --json, --csv, --svg,
 * --html (or --format KIND, kept from 0.2 since no column has such a name); the output
 * file is --output FILE (-o VALUE holding '.' or '/' is still read as a file, with a
 * note: no column list has those characters).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mongoc/mongoc.h>

#include "sa_alloc_url.h"
#include "sa_exit.h"
#include "sa_fsutil.h"
#include "sa_http.h"
#include "sa_mongo.h"
#include "sa_promq.h"
#include "sa_report.h"
#include "sa_rutil.h"
#include "sa_site.h"
#include "sa_sreport.h"
#include "sa_time.h"

#ifndef SA_VERSION
#define SA_VERSION "unknown"
#endif

static void usage_output(FILE *out);

/* The help: what slurm-report does and its options (usage_output: the output options). */
static void usage(FILE *out)
{
    fputs("Usage: slurm-report [usage] [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--by KEYS]\n"
          "                    [-A ACCOUNTS] [-u USERS] [--allocations FILE|URL] [-t UNIT] [OUTPUT OPTIONS]\n"
          "       slurm-report utilization [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [-t UNIT] ...\n"
          "       slurm-report health [-M CLUSTERS] [--stale DURATION] [-S START] [-E END] ...\n"
          "       slurm-report current [-M CLUSTERS] [--by KEYS] [--since TIME] [--prometheus] ...\n"
          "       slurm-report current (--cloudwatch [--cloudwatch-region R] [--cloudwatch-endpoint URL] |\n"
          "                    --cloudwatch-emf) [--cloudwatch-namespace NS] ...\n"
          "       slurm-report efficiency [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--by KEYS]\n"
          "                    [--idle-threshold PCT] ...\n"
          "       slurm-report job [-M CLUSTERS] JOBID [--json] ...\n"
          "       slurm-report jobs [-M CLUSTERS] [-A ACCOUNTS] [-u USERS] [-s STATES] [-S START] [-E END]\n"
          "                    [--name NAMES] [-r PARTITIONS] [-j JOBIDS] [-D] [-o FIELDS] ...\n"
          "       slurm-report top [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--top N] [-T TRES,...] ...\n"
          "       slurm-report waits [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--by KEYS] ...\n"
          "       slurm-report scheduler [-M CLUSTERS] (--month YYYY-MM | -S START [-E END]) [--by rpc-type|rpc-user]\n"
          "       slurm-report site DIR [-M CLUSTERS] [--months N] [--allocations FILE|URL] [--textfile FILE]\n"
          "       slurm-report sreport [-M CLUSTERS] [-a] [-n] [-p|-P] [-t FORMAT] [-T TRES] REPORT [CONDITION...]\n"
          "\n"
          "Reports:\n"
          "  usage (default)      GPU time per cluster, account, user, GPU type; against awards with --allocations\n"
          "  utilization          GPU and CPU time by exact node state and GPU type (time series; allocated: the runs)\n"
          "  health               vanished running jobs, reused job ids, stale ingest, failed ingest runs\n"
          "                       (exit status 9 when a check fails)\n"
          "  current              jobs of the latest snapshot, finished jobs since a time; nodes, CPUs, GPUs and\n"
          "                       the scheduler with --prometheus\n"
          "  efficiency           what the allocated GPUs and CPUs did: GPU-hours, idle GPU-hours, mean GPU\n"
          "                       utilisation, CPU and memory efficiency (seff), GPU-hours without usage data\n"
          "  job                  one job's whole story: identity, history, runs, steps, seff's efficiency lines\n"
          "  jobs                 a listing like sacct -X: one line per job, sacct's options and field names\n"
          "  waits                queue waits (start - eligible, start - submit) of the runs that started: count,\n"
          "                       mean, median, p90, max by partition, account, user, GPU type, job size\n"
          "  site                 a static web site of every report in DIR (replaced atomically)\n"
          "  top                  the top N users and accounts by a TRES in the window, with their share of\n"
          "                       the cluster's capacity (sreport user TopUsage)\n"
          "  scheduler            sdiag over time: queue, cycle times and depths, backfill, RPCs by message type\n"
          "                       and by user (the latest observation of each day; of each hour for 3 days or less)\n"
          "  sreport              sreport's own reports and text, in its grammar (first word): cluster\n"
          "                       AccountUtilizationByUser|UserUtilizationByAccount|Utilization, user TopUsage,\n"
          "                       job SizesByAccount; Start=, End=, Format=, Users=, Accounts=, ... (sreport's\n"
          "                       -t, -T, -p, -P, -n, -M, -a; and --mongo-uri, --db, --sqlite, --now, --output)\n"
          "\n"
          "What:\n"
          "  -M, --cluster LIST       clusters (comma-separated; default: all in the archive)\n"
          "  --month YYYY-MM          the calendar month (UTC)\n"
          "  -S, --starttime START    window start, UTC, as sacct reads it: YYYY-MM-DD[THH:MM[:SS]], MMDD[YY],\n"
          "                           MM/DD[/YY], now[-N{days,hours,minutes}], today, midnight, ...\n"
          "  -E, --endtime END        window end (excluded; default: now)\n"
          "  --by KEYS                usage, efficiency: account, user, gpu-type (default: the key columns -o\n"
          "                           names, else account; with --allocations, user and gpu-type break down the\n"
          "                           charts); current: partition, account, user; waits: partition (default),\n"
          "                           account, user, gpu-type, gpus, nodes (XDMoD's bins 1, 2-4, 5-8, ...);\n"
          "                           scheduler: rpc-type or rpc-user (a row per observation and name)\n"
          "  -A, --accounts LIST      only these accounts\n"
          "  -u, --users LIST         only these users\n"
          "  --allocations FILE|URL   awards (schema/allocations.schema.json): one row per award; an http(s)\n"
          "                           URL is fetched once a run, its last good copy used when it fails\n"
          "  --allocations-auth FILE  the URL's credentials, a 0600 file: bearer TOKEN, or basic USER:PASSWORD\n"
          "                           (else $SLURM_REPORT_ALLOCATIONS_AUTH, the systemd credential\n"
          "                           allocations-auth)\n"
          "  --allocations-timeout D  the URL's whole request (default 30s)\n"
          "  -t hours|minutes|percent|years   the unit of time figures, like sreport (usage: GPU-years by\n"
          "                           default; percent: of the cluster's capacity (time series), as sreport's;\n"
          "                           utilization: hours by default)\n"
          "  -T, --tres LIST          usage, top: cpu, mem, gres/gpu, billing (sreport's names; default gres/gpu):\n"
          "                           core-, GB- and billing-hours/years; runs without GPUs count for cpu, mem,\n"
          "                           billing; top ranks by the first\n"
          "  --top N                  top: N users and N accounts per cluster (default 10)\n"
          "  --summary                utilization: capacity by class (allocated, idle, planned, stranded, down,\n"
          "                           planned_down, reserved, unknown), 100 % a row: CPUs, memory, GPUs, GPU type\n"
          "  --unit UNIT              gpu-hours, gpu-years or rgu-years\n"
          "  --year-days N            days in a GPU-year (default 365: 8760 GPU-hours)\n"
          "  --rgu-weights FILE       RGU weights instead of the built-in table (schema/rgu-weights.json)\n"
          "  --stale DURATION         health: an ingest older than this is stale (default 1h; s, m, h, d, w)\n"
          "  --since TIME             current: count finished jobs since (default 24 hours before now)\n"
          "  --now TIME               take TIME as now (reproducible reports)\n"
          "  --months N               site: the last N months (default 12)\n"
          "  --idle-threshold PCT     efficiency: a run under this GPU utilisation is idle (default 5)\n"
          "  --cloudwatch             current: put the nodes, jobs, GPUs and scheduler figures to CloudWatch\n"
          "                           (PutMetricData, SigV4; credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,\n"
          "                           the systemd credential aws-credentials, or the instance's role)\n"
          "  --cloudwatch-emf         current: print them as CloudWatch embedded metric format lines\n"
          "  --cloudwatch-namespace NS  the namespace (default Slurm)\n"
          "  --cloudwatch-region R    the region (default $AWS_REGION, $AWS_DEFAULT_REGION)\n"
          "  --cloudwatch-endpoint URL  instead of https://monitoring.R.amazonaws.com/ (a VPC endpoint)\n"
          "  --per-node               current --prometheus: also a gauge per node (CPUs, memory, GPUs by type:\n"
          "                           configured and allocated; its exact state as a label)\n"
          "  --from-jobs              usage, efficiency, current, health, jobs, waits, top: read the job\n"
          "                           documents, not the rollups (the reference)\n"
          "  -s, --state LIST         jobs: states (PD, R, S, CD, F, CA, TO, OOM, NF, ... or their names);\n"
          "                           jobs in them during [-S, -E] (default -S and -E: now)\n"
          "  -j, --jobs LIST          jobs: these ids (123: an array's every task, a het job's every\n"
          "                           component; 123_4, 123+1); no window unless -S is given\n"
          "  -r, --partition LIST     jobs: only these partitions;  --name LIST  only these job names\n"
          "  -D, --duplicates         jobs: each run of a requeued job, and jobs whose id was reused\n"
          "                           (jobs: -S defaults to today's midnight, -E to now; -e lists the fields)\n"
          "  --sort idle              efficiency: the most idle allocated GPU-hours first\n"
          "  --prometheus-url URL     job --svg: fetch the runs' GPU utilisation series from this Prometheus\n"
          "                           (query_range; default: the figures slurm-ingest stored); one with a\n"
          "                           password: SLURM_REPORT_PROMETHEUS_URL in the environment instead\n"
          "  --prometheus-exporter X  with --prometheus-url: slurm-job-exporter (default) or jobstats\n"
          "\n",
          out);
    usage_output(out);
}

/* The help's output options and its last lines (usage's second half). */
static void usage_output(FILE *out)
{
    fputs("Output:\n"
          "  --json, --csv, --svg (usage, job, waits, utilization, scheduler), --html, --prometheus (current)\n"
          "                           the output kind (default: a table)\n"
          "  -o, --format COL,COL     the columns, like sacct: NAME, NAME%N (N wide, right-justified), NAME%-N\n"
          "  -l, --long               every column (the table shows the main ones; JSON, CSV, -p carry all)\n"
          "  -e, --helpformat         list the columns of the report and exit\n"
          "  -p, --parsable           '|'-separated with a '|' at the end; -P, --parsable2: without it\n"
          "  --delimiter STRING       the separator of -p and -P\n"
          "  -n, --noheader           no column header (and, in the table, no preamble: the period, clusters,\n"
          "                           unit, rules); -p, -P and CSV output is the header and the rows only\n"
          "  -v, --verbose            also write the preamble to stderr (parsable, CSV and JSON output;\n"
          "                           JSON has it as \"header\")\n"
          "  --output FILE            write FILE atomically (mode from the umask) instead of stdout\n"
          "  --textfile FILE          site: also write the Prometheus metrics to FILE\n"
          "\n"
          "Where:\n"
          "  --mongo-uri URI          the archive (default: $SLURM_REPORT_MONGO_URI, $SLURM_INGEST_MONGO_URI,\n"
          "                           the systemd credential mongo-uri, mongodb://127.0.0.1:27017); prefer the\n"
          "                           environment: ps shows arguments\n"
          "  --db NAME                database (default: $SLURM_REPORT_DB, else slurm)\n"
          "  --sqlite PATH            node state time series (default DIR/CLUSTER.sqlite of --sqlite-dir)\n"
          "  --sqlite-dir DIR         directory of the per-cluster time series (default: $SLURM_REPORT_SQLITE_DIR,\n"
          "                           else /var/lib/slurm-ingest)\n"
          "  -h, --help               this help;  -V, --version  the version\n",
          out);
}

/* Parses --by: a comma list of account, user, gpu-type, partition. */
static bool parse_by(const char *s, unsigned *by)
{
    sa_strv_t v;
    bool ok = true;
    sa_strv_init(&v);
    *by = 0;
    if (sa_rlist_has_empty(s) || !sa_rlist_split(s, &v))
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
        else if (strcmp(v.v[i], "gpus") == 0)
            *by |= SA_BY_GPUS;
        else if (strcmp(v.v[i], "nodes") == 0)
            *by |= SA_BY_NODES;
        else if (strcmp(v.v[i], "rpc-type") == 0 || strcmp(v.v[i], "rpc_type") == 0)
            *by |= SA_BY_RPC_TYPE;
        else if (strcmp(v.v[i], "rpc-user") == 0 || strcmp(v.v[i], "rpc_user") == 0)
            *by |= SA_BY_RPC_USER;
        else
            ok = false;
    }
    sa_strv_clear(&v);
    return ok;
}

/* -t: hours, minutes, percent or years, case-insensitive, any unambiguous prefix (sreport). */
static bool parse_time_unit(const char *s, sa_unit_t *unit)
{
    static const struct {
        const char *name;
        sa_unit_t unit;
    } units[] = {{"hours", SA_UNIT_GPU_HOURS}, {"minutes", SA_UNIT_GPU_MINUTES}, {"percent", SA_UNIT_PERCENT},
                 {"years", SA_UNIT_GPU_YEARS}};
    size_t n = strlen(s);
    int found = -1;

    for (size_t i = 0; n && i < sizeof units / sizeof units[0]; i++) {
        if (strncasecmp(s, units[i].name, n) == 0) {
            if (found >= 0)
                return false;
            found = (int)i;
        }
    }
    if (found < 0)
        return false;
    *unit = units[found].unit;
    return true;
}

/* Prints "slurm-report: <fmt with arg> (see --help)", arg quoted (sa_error_quote: one line, valid UTF-8); returns 2. */
static int die_usage(const char *fmt, const char *arg)
{
    char q[300];

    fputs("slurm-report: ", stderr);
    fprintf(stderr, fmt, sa_error_quote(arg, 256, q, sizeof q));
    fputs(" (see --help)\n", stderr);
    return SA_EXIT_USAGE;
}

/* What the command line says beside the options: read once every option is known (times depend on --now). */
typedef struct {
    const char *cmd, *output, *month, *start, *end, *since, *now, *site_dir, *textfile;
    const char *alloc_auth; /* --allocations-auth FILE */
    int64_t alloc_timeout_s; /* --allocations-timeout (0: 30 s) */
    bool helpformat;
    int months;
} cli_t;

enum { O_MONTH = 256, O_BY, O_ALLOC, O_UNIT, O_FORMAT, O_MONGO, O_DB, O_SQLITE, O_YEARDAYS, O_RGU, O_STALE,
       O_SINCE, O_NOW, O_SQLITE_DIR, O_OUTPUT, O_DELIM, O_JSON, O_CSV, O_SVG, O_HTML, O_PROM, O_MONTHS,
       O_TEXTFILE, O_IDLE, O_FROM_JOBS, O_PER_NODE, O_CW, O_CW_EMF, O_CW_NS, O_CW_REGION, O_CW_ENDPOINT, O_NAME,
       O_SORT, O_PROM_URL, O_PROM_EXPORTER, O_ALLOC_AUTH, O_ALLOC_TIMEOUT };
/* usage, top and utilization's TRES and capacity options (-T has its letter) */
enum { O_TOP = 400, O_SUMMARY };

/* -T, --tres: a comma list of sreport's TRES names (gres/gpu, cpu, mem, billing), each once. */
static int parse_tres(const char *arg, sa_report_opts_t *o)
{
    sa_strv_t v;
    int rc = -1;

    sa_strv_init(&v);
    o->ntres = 0;
    if (sa_rlist_has_empty(arg) || !sa_rlist_split(arg, &v))
        rc = die_usage("-T: expected a comma list of cpu, mem, gres/gpu, billing, got '%s'", arg);
    for (size_t i = 0; rc < 0 && i < v.n; i++) {
        sa_rtres_t r;
        bool dup = false;
        if (!sa_rtres_parse(v.v[i], &r)) {
            rc = die_usage("-T: unknown TRES '%s' (cpu, mem, gres/gpu, billing)", v.v[i]);
            break;
        }
        for (size_t j = 0; j < o->ntres; j++)
            dup = dup || o->tres[j] == r;
        if (!dup)
            o->tres[o->ntres++] = r;
    }
    sa_strv_clear(&v);
    return rc;
}

/* -o / --format: a column list; an output kind name (0.2's --format json) or a file name (0.2's -o FILE). */
static int columns_option(int c, const char *arg, sa_report_opts_t *o, cli_t *cli)
{
    sa_error_t error;

    if (sa_format_parse(arg, &o->format))
        return -1;
    if (c == 'o' && strpbrk(arg, "./")) {
        fprintf(stderr, "slurm-report: note: -o FILE is read as --output FILE ('.' and '/' are in no column "
                        "list); -o chooses columns, like sacct\n");
        cli->output = arg;
        return -1;
    }
    if (!sa_colspecs_parse(arg, &o->columns, &o->ncolumns, &error)) {
        fprintf(stderr, "slurm-report: %s\n", error.message);
        return SA_EXIT_USAGE;
    }
    return -1;
}

/*
 * A comma list option (-M, -A, -u, -s, -r, -j, --name): its items appended to out. An
 * empty list or item ("-j ''", "-r gpu,,cpu") is refused, never read as no filter. -1 to
 * go on, else the exit code.
 */
static int list_option(const char *name, const char *arg, sa_strv_t *out)
{
    char fmt[96];

    if (sa_rlist_has_empty(arg)) {
        snprintf(fmt, sizeof fmt, "%s: expected a comma list without empty items, got '%%s'", name);
        return die_usage(fmt, arg);
    }
    if (!sa_rlist_split(arg, out)) {
        fputs("slurm-report: out of memory\n", stderr);
        return SA_EXIT_FAILURE;
    }
    return -1;
}

/* Applies an option that sets a value or a flag; -1 to go on, else the exit code. */
static int value_option(int c, const char *arg, sa_report_opts_t *o, cli_t *cli)
{
    char *e;

    switch (c) {
    case 'M': return list_option("-M", arg, &o->clusters);
    case 'A': return list_option("-A", arg, &o->accounts);
    case 'u': return list_option("-u", arg, &o->users);
    case 's': return list_option("-s", arg, &o->states);
    case 'r': return list_option("-r", arg, &o->partitions);
    case 'j': return list_option("-j", arg, &o->job_ids);
    case O_NAME: return list_option("--name", arg, &o->names);
    case 'D': o->duplicates = true; break;
    case O_MONTH: cli->month = arg; break;
    case 'S': cli->start = arg; break;
    case 'E': cli->end = arg; break;
    case O_SINCE: cli->since = arg; break;
    case O_NOW: cli->now = arg; break;
    case O_OUTPUT: cli->output = arg; break;
    case O_TEXTFILE: cli->textfile = arg; break;
    case O_ALLOC: o->allocations_path = arg; break;
    case O_ALLOC_AUTH: cli->alloc_auth = arg; break;
    case O_RGU: o->rgu_weights_path = arg; break;
    case O_MONGO: o->mongo_uri = arg; break;
    case O_DB: o->db_name = arg; o->db_given = true; break;
    case O_SQLITE: o->sqlite_path = arg; break;
    case O_SQLITE_DIR: o->sqlite_dir = arg; break;
    case O_DELIM: o->delimiter = arg; break;
    case 'p': o->format = SA_FMT_PARSABLE; o->trailing_delimiter = true; break;
    case 'P': o->format = SA_FMT_PARSABLE; o->trailing_delimiter = false; break;
    case O_JSON: o->format = SA_FMT_JSON; break;
    case O_CSV: o->format = SA_FMT_CSV; break;
    case O_SVG: o->format = SA_FMT_SVG; break;
    case O_HTML: o->format = SA_FMT_HTML; break;
    case O_PROM: o->format = SA_FMT_PROMETHEUS; break;
    case 'n': o->no_header = true; break;
    case O_FROM_JOBS: o->from_jobs = true; break;
    case O_PER_NODE: o->per_node = true; break;
    case O_CW: o->cloudwatch = SA_CW_PUT; break;
    case O_CW_EMF: o->cloudwatch = SA_CW_EMF; break;
    case O_CW_NS: o->cw_namespace = arg; break;
    case O_CW_REGION: o->cw_region = arg; break;
    case O_CW_ENDPOINT: o->cw_endpoint = arg; break;
    case 'v': o->verbose = stderr; break;
    case 'l': o->long_format = true; break;
    case 'e': cli->helpformat = true; break;
    case O_YEARDAYS:
        o->year_days = strtod(arg, &e);
        if (*e || !(o->year_days > 0 && o->year_days <= 366))
            return die_usage("--year-days: expected a number of days in (0, 366], got '%s'", arg);
        break;
    case O_SORT:
        if (strcmp(arg, "idle") != 0)
            return die_usage("--sort: expected idle, got '%s'", arg);
        o->sort_idle = true;
        break;
    case O_PROM_URL: {
        char *red = sa_promq_redact(arg);
        if (red && strcmp(red, arg) != 0)
            fprintf(stderr, "slurm-report: warning: --prometheus-url holds a user and password, which every user "
                            "can read in the process list: set SLURM_REPORT_PROMETHEUS_URL instead\n");
        free(red);
        o->prometheus_url = arg;
        break;
    }
    case O_PROM_EXPORTER:
        if (strcmp(arg, "slurm-job-exporter") != 0 && strcmp(arg, "jobstats") != 0)
            return die_usage("--prometheus-exporter: expected slurm-job-exporter or jobstats, got '%s'", arg);
        o->prometheus_exporter = arg;
        break;
    case O_IDLE:
        o->idle_threshold = strtod(arg, &e);
        if (*e || !(o->idle_threshold >= 0 && o->idle_threshold <= 100))
            return die_usage("--idle-threshold: expected a percentage from 0 to 100, got '%s'", arg);
        break;
    case 'T': return parse_tres(arg, o);
    case O_SUMMARY: o->summary = true; break;
    case O_TOP: {
        long n = strtol(arg, &e, 10);
        if (*e || n < 1 || n > 100000)
            return die_usage("--top: expected a count from 1 to 100000, got '%s'", arg);
        o->top_n = (size_t)n;
        break;
    }
    case O_MONTHS:
        cli->months = (int)strtol(arg, &e, 10);
        if (*e || cli->months < 1 || cli->months > 120)
            return die_usage("--months: expected a number of months from 1 to 120, got '%s'", arg);
        break;
    default:
        return die_usage("unexpected option%s", ""); /* cannot happen: every option is handled */
    }
    return -1;
}

/* A duration option (--stale, --allocations-timeout: 90, 15m, 1h...) of more than 0 into *out; -1 to go on, else 2. */
static int duration_option(const char *name, const char *arg, int64_t *out)
{
    sa_error_t error;
    char fmt[96];

    if (!sa_time_parse_duration(arg, out, &error)) {
        snprintf(fmt, sizeof fmt, "%s: %%s", name);
        return die_usage(fmt, error.message);
    }
    if (*out <= 0) {
        snprintf(fmt, sizeof fmt, "%s: must be more than 0, got '%%s'", name);
        return die_usage(fmt, arg);
    }
    return -1;
}

/* Applies one option; -1 to go on, else the exit code (help, version, a bad value). */
static int apply_option(int c, const char *arg, sa_report_opts_t *o, cli_t *cli)
{
    switch (c) {
    case O_BY:
        if (!parse_by(arg, &o->by))
            return die_usage("--by: expected a comma list of account, user, gpu-type, partition, gpus, nodes, "
                             "rpc-type, rpc-user, got '%s'", arg);
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
        o->unit_given = true;
        return -1;
    case 't':
        if (!parse_time_unit(arg, &o->unit))
            return die_usage("-t: expected hours, minutes, percent or years, got '%s'", arg);
        o->unit_given = true;
        return -1;
    case 'o':
    case O_FORMAT:
        return columns_option(c, arg, o, cli);
    case O_ALLOC_TIMEOUT:
        return duration_option("--allocations-timeout", arg, &cli->alloc_timeout_s);
    case O_STALE:
        return duration_option("--stale", arg, &o->stale_s);
    case 'h':
        usage(stdout);
        return SA_EXIT_OK;
    case 'V':
        printf("slurm-report %s\n", SA_VERSION);
        return SA_EXIT_OK;
    default:
        return value_option(c, arg, o, cli);
    }
}

/* One line for an option getopt refused: unknown, or missing its argument. */
static int bad_option(int c, char **argv)
{
    const char *arg = argv[optind - 1];
    char shortopt[3] = {'-', (char)optopt, '\0'};

    if (optopt && (strncmp(arg, "--", 2) == 0 || !arg[0]))
        arg = shortopt;
    else if (optopt && arg[0] == '-' && arg[1] != '-')
        arg = shortopt;
    return die_usage(c == ':' ? "option '%s' needs a value" : "unknown option '%s'", arg);
}

static const struct option longopts[] = {
    {"cluster", required_argument, NULL, 'M'},   {"clusters", required_argument, NULL, 'M'},
    {"month", required_argument, NULL, O_MONTH}, {"starttime", required_argument, NULL, 'S'},
    {"endtime", required_argument, NULL, 'E'},   {"by", required_argument, NULL, O_BY},
    {"accounts", required_argument, NULL, 'A'},  {"account", required_argument, NULL, 'A'},
    {"users", required_argument, NULL, 'u'},     {"user", required_argument, NULL, 'u'},
    {"allocations", required_argument, NULL, O_ALLOC},
    {"allocations-auth", required_argument, NULL, O_ALLOC_AUTH},
    {"allocations-timeout", required_argument, NULL, O_ALLOC_TIMEOUT},
    {"unit", required_argument, NULL, O_UNIT},   {"format", required_argument, NULL, O_FORMAT},
    {"parsable", no_argument, NULL, 'p'},        {"parsable2", no_argument, NULL, 'P'},
    {"delimiter", required_argument, NULL, O_DELIM},
    {"noheader", no_argument, NULL, 'n'},        {"long", no_argument, NULL, 'l'},
    {"verbose", no_argument, NULL, 'v'},
    {"helpformat", no_argument, NULL, 'e'},      {"json", no_argument, NULL, O_JSON},
    {"csv", no_argument, NULL, O_CSV},           {"svg", no_argument, NULL, O_SVG},
    {"html", no_argument, NULL, O_HTML},         {"prometheus", no_argument, NULL, O_PROM},
    {"output", required_argument, NULL, O_OUTPUT}, {"textfile", required_argument, NULL, O_TEXTFILE},
    {"mongo-uri", required_argument, NULL, O_MONGO},
    {"db", required_argument, NULL, O_DB},       {"sqlite", required_argument, NULL, O_SQLITE},
    {"sqlite-dir", required_argument, NULL, O_SQLITE_DIR},
    {"year-days", required_argument, NULL, O_YEARDAYS},
    {"rgu-weights", required_argument, NULL, O_RGU},
    {"stale", required_argument, NULL, O_STALE}, {"since", required_argument, NULL, O_SINCE},
    {"now", required_argument, NULL, O_NOW},     {"months", required_argument, NULL, O_MONTHS},
    {"idle-threshold", required_argument, NULL, O_IDLE},
    {"from-jobs", no_argument, NULL, O_FROM_JOBS},
    {"per-node", no_argument, NULL, O_PER_NODE},
    {"cloudwatch", no_argument, NULL, O_CW},     {"cloudwatch-emf", no_argument, NULL, O_CW_EMF},
    {"cloudwatch-namespace", required_argument, NULL, O_CW_NS},
    {"cloudwatch-region", required_argument, NULL, O_CW_REGION},
    {"cloudwatch-endpoint", required_argument, NULL, O_CW_ENDPOINT},
    {"state", required_argument, NULL, 's'},     {"partition", required_argument, NULL, 'r'},
    {"jobs", required_argument, NULL, 'j'},      {"name", required_argument, NULL, O_NAME},
    {"duplicates", no_argument, NULL, 'D'},
    {"tres", required_argument, NULL, 'T'},      {"top", required_argument, NULL, O_TOP},
    {"summary", no_argument, NULL, O_SUMMARY},
    {"sort", required_argument, NULL, O_SORT},   {"prometheus-url", required_argument, NULL, O_PROM_URL},
    {"prometheus-exporter", required_argument, NULL, O_PROM_EXPORTER},
    {"help", no_argument, NULL, 'h'},            {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/*
 * Checks --cloudwatch and --cloudwatch-emf and their options (current only, without another
 * output kind or --per-node; a namespace CloudWatch takes; a region for --cloudwatch, from
 * the environment when not given); -1 to go on, else the exit code.
 */
static int cloudwatch_args(const cli_t *cli, sa_report_opts_t *o)
{
    const char *ns = o->cw_namespace;

    if (!o->cloudwatch) {
        if (ns || o->cw_region || o->cw_endpoint)
            return die_usage("--cloudwatch-namespace, -region and -endpoint go with --cloudwatch%s", "");
        return -1;
    }
    if (strcmp(cli->cmd, "current") != 0)
        return die_usage("--cloudwatch and --cloudwatch-emf are for `current`%s", "");
    if (o->format != SA_FMT_TABLE || o->per_node)
        return die_usage("--cloudwatch and --cloudwatch-emf go without another output kind and --per-node%s", "");
    /* CloudWatch's rule for a namespace: 1 to 255 of [0-9A-Za-z.-_/#:], not starting with "AWS/" */
    if (ns && (!*ns || strlen(ns) > 255 || strspn(ns, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                                                      "WXYZ.-_/#:") != strlen(ns) || strncmp(ns, "AWS/", 4) == 0))
        return die_usage("--cloudwatch-namespace: '%s' is not a namespace CloudWatch takes (1 to 255 of "
                         "A-Z a-z 0-9 . - _ / # :, not AWS/...)", ns);
    if (o->cloudwatch == SA_CW_PUT && cli->output)
        return die_usage("--cloudwatch sends the metrics and writes no file: --output is for --cloudwatch-emf%s", "");
    if (o->cloudwatch == SA_CW_EMF && (o->cw_region || o->cw_endpoint))
        return die_usage("--cloudwatch-emf prints the metrics: --cloudwatch-region and -endpoint are for "
                         "--cloudwatch%s", "");
    if (o->cloudwatch == SA_CW_PUT && !o->cw_region)
        o->cw_region = getenv("AWS_REGION") && *getenv("AWS_REGION") ? getenv("AWS_REGION")
                       : getenv("AWS_DEFAULT_REGION") && *getenv("AWS_DEFAULT_REGION") ? getenv("AWS_DEFAULT_REGION")
                                                                                      : NULL;
    if (o->cloudwatch == SA_CW_PUT && !o->cw_region)
        return die_usage("--cloudwatch needs a region: --cloudwatch-region, or AWS_REGION in the environment%s", "");
    if (o->cw_region && (!*o->cw_region || strspn(o->cw_region, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
                                               strlen(o->cw_region)))
        return die_usage("--cloudwatch-region: '%s' is not a region (us-east-1, eu-west-2, ...)", o->cw_region);
    if (o->cw_endpoint && strncmp(o->cw_endpoint, "https://", 8) != 0 && strncmp(o->cw_endpoint, "http://", 7) != 0)
        return die_usage("--cloudwatch-endpoint: expected an http:// or https:// URL, got '%s'", o->cw_endpoint);
    return -1;
}

/* Parses the command line into *o and *cli; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, sa_report_opts_t *o, cli_t *cli)
{
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":M:S:E:A:u:pPno:lt:T:ehVvs:r:j:D", longopts, NULL)) != -1) {
        if (c == '?' || c == ':')
            return bad_option(c, argv);
        if ((rc = apply_option(c, optarg, o, cli)) >= 0)
            return rc;
    }
    if (optind < argc)
        cli->cmd = argv[optind++];
    if (!sa_report_find(cli->cmd)) {
        size_t n;
        const sa_report_def_t *all = sa_report_all(&n);
        char msg[512];
        snprintf(msg, sizeof msg, "unknown report '%%s' (");
        for (size_t i = 0; i < n; i++)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%s", i ? ", " : "", all[i].name);
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ")");
        return die_usage(msg, cli->cmd);
    }
    if (strcmp(cli->cmd, "site") == 0 && optind < argc)
        cli->site_dir = argv[optind++];
    if (strcmp(cli->cmd, "job") == 0 && optind < argc)
        o->job_arg = argv[optind++];
    if (optind < argc)
        return die_usage("unexpected argument '%s'", argv[optind]);
    if (strcmp(cli->cmd, "site") == 0 && !cli->site_dir)
        return die_usage("site needs the directory to write: slurm-report site DIR%s", "");
    if (strcmp(cli->cmd, "job") == 0 && !o->job_arg && !cli->helpformat)
        return die_usage("job needs a job id: slurm-report job [-M CLUSTER] JOBID%s", "");
    return -1;
}

/* slurm-report sreport's long options: sreport's, then ours of where and how. */
enum { O_SR_LOCAL = 500, O_SR_FEDERATION };
static const struct option sreport_longopts[] = {
    {"all_clusters", no_argument, NULL, 'a'},   {"cluster", required_argument, NULL, 'M'},
    {"clusters", required_argument, NULL, 'M'}, {"help", no_argument, NULL, 'h'},
    {"noheader", no_argument, NULL, 'n'},       {"parsable", no_argument, NULL, 'p'},
    {"parsable2", no_argument, NULL, 'P'},      {"quiet", no_argument, NULL, 'Q'},
    {"tres", required_argument, NULL, 'T'},     {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},        {"local", no_argument, NULL, O_SR_LOCAL},
    {"federation", no_argument, NULL, O_SR_FEDERATION},
    {"mongo-uri", required_argument, NULL, O_MONGO}, {"db", required_argument, NULL, O_DB},
    {"sqlite", required_argument, NULL, O_SQLITE}, {"sqlite-dir", required_argument, NULL, O_SQLITE_DIR},
    {"now", required_argument, NULL, O_NOW},    {"output", required_argument, NULL, O_OUTPUT},
    {"from-jobs", no_argument, NULL, O_FROM_JOBS},
    {NULL, 0, NULL, 0},
};

/*
 * True when the report word (the first argument that is not an option or an option's
 * value, as parse_args reads them) is "sreport": the rest is then read in sreport's grammar.
 */
static bool is_sreport(int argc, char **argv)
{
    static const char shortopts[] = "M:S:E:A:u:pPno:lt:T:ehVvs:r:j:D";

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1 < argc && strcmp(argv[i + 1], "sreport") == 0;
        if (a[0] != '-' || !a[1])
            return strcmp(a, "sreport") == 0;
        if (a[1] == '-') { /* --name VALUE, unless --name=VALUE or --name takes none */
            size_t n = strcspn(a + 2, "=");
            const struct option *hit = NULL;
            for (const struct option *lo = longopts; lo->name && a[2 + n] != '='; lo++) {
                if (strncmp(lo->name, a + 2, n) == 0 && (!hit || strlen(lo->name) == n))
                    hit = lo;
            }
            i += hit && hit->has_arg == required_argument;
            continue;
        }
        for (const char *c = a + 1; *c; c++) { /* -xVALUE, -x VALUE, -abc */
            const char *o = strchr(shortopts, *c);
            if (o && o[1] == ':') {
                i += !c[1];
                break;
            }
        }
    }
    return false;
}

/*
 * `slurm-report [OPTION...] sreport ...`: sreport's options (-a, -M, -n, -p, -P,
 * -Q, -t, -T, -v and their long forms; SREPORT_CLUSTER and SREPORT_TRES as sreport reads
 * them) and ours of where and how (--mongo-uri, --db, --sqlite, --sqlite-dir, --now,
 * --output, --from-jobs), anywhere, into *o, *cli and *req; *words gets the index of the
 * report type's word (getopt permutes the options before "sreport" and it). -1 to go on,
 * else the exit code.
 */
static int parse_sreport_args(int argc, char **argv, sa_report_opts_t *o, cli_t *cli, sa_sreport_req_t *req,
                              int *words)
{
    sa_error_t error;
    const char *env;
    bool clusters = false, tres = false;
    int c, rc;

    cli->cmd = "sreport";
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":aM:hnpPQt:T:vV", sreport_longopts, NULL)) != -1) {
        switch (c) {
        case '?':
        case ':': return bad_option(c, argv);
        case 'a': req->all_clusters = true; break;
        case 'M':
            clusters = true;
            if ((rc = list_option("-M", optarg, &req->clusters)) >= 0)
                return rc;
            break;
        case 'n': req->no_header = true; break;
        case 'p': req->parsable = SA_SRP_ENDING; break;
        case 'P': req->parsable = SA_SRP_NO_ENDING; break;
        case 'Q': break; /* sreport's warnings are slurm-report's one-line errors */
        case 't':
            if (!sa_sreport_time_format(optarg, &req->time))
                return die_usage("-t: expected Seconds, Minutes, Hours, Percent, SecPer, MinPer or HourPer "
                                 "(sreport's time formats), got '%s'", optarg);
            break;
        case 'T':
            tres = true;
            if (!sa_sreport_set_tres(req, optarg, &error))
                return die_usage("%s", error.message);
            break;
        case 'v': o->verbose = stderr; break;
        case O_SR_LOCAL: break; /* one cluster's archive is the local cluster's */
        case O_SR_FEDERATION: return die_usage("--federation: the archive reports clusters, not federations (give "
                                               "-M with the federation's clusters)%s", "");
        default:
            if ((rc = apply_option(c, optarg, o, cli)) >= 0)
                return rc;
        }
    }
    /* as sreport: SREPORT_CLUSTER and SREPORT_TRES stand for -M and -T when those are not given */
    if (!clusters && (env = getenv("SREPORT_CLUSTER")) && *env &&
        (rc = list_option("SREPORT_CLUSTER", env, &req->clusters)) >= 0)
        return rc;
    if (!tres && (env = getenv("SREPORT_TRES")) && *env && !sa_sreport_set_tres(req, env, &error))
        return die_usage("SREPORT_TRES: %s", error.message);
    if (optind >= argc || strcmp(argv[optind], "sreport") != 0)
        return die_usage("expected the word sreport, got '%s'", optind < argc ? argv[optind] : "");
    *words = optind + 1;
    return -1;
}

/*
 * Reads the times (--now first, relative to the clock; the others relative to it) and
 * checks what depends on the report. -1 to go on, else the exit code.
 */
static int parse_times(const cli_t *cli, sa_report_opts_t *o)
{
    int rc;
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
    if (cli->end && !cli->start && !cli->month && strcmp(cli->cmd, "health") != 0 && strcmp(cli->cmd, "jobs") != 0)
        return die_usage("-E needs -S%s", "");
    if (cli->start && !cli->end)
        o->end = o->now;
    if (cli->since && !sa_time_parse(cli->since, o->now, &o->since, &error))
        return die_usage("--since: %s", error.message);
    if ((o->states.n || o->partitions.n || o->job_ids.n || o->names.n || o->duplicates) &&
        strcmp(cli->cmd, "jobs") != 0)
        return die_usage("-s, -r, -j, --name and -D are options of `jobs`, not of %s", cli->cmd);
    if ((o->by & (SA_BY_GPUS | SA_BY_NODES)) && strcmp(cli->cmd, "waits") != 0)
        return die_usage("--by gpus, nodes: for `waits`%s", "");
    if ((o->by & (SA_BY_RPC_TYPE | SA_BY_RPC_USER)) && strcmp(cli->cmd, "scheduler") != 0)
        return die_usage("--by rpc-type, rpc-user: for `scheduler`%s", "");
    if (o->format == SA_FMT_PROMETHEUS && strcmp(cli->cmd, "current") != 0)
        return die_usage("--format prometheus is for `current`%s", "");
    if (o->per_node && (o->format != SA_FMT_PROMETHEUS || strcmp(cli->cmd, "current") != 0))
        return die_usage("--per-node is for `current --prometheus`%s", "");
    if (o->delimiter && !*o->delimiter)
        return die_usage("--delimiter: must not be empty%s", "");
    if ((rc = cloudwatch_args(cli, o)) >= 0)
        return rc;
    /* the Prometheus URL may carry a password: from the environment, out of ps's sight */
    if (!o->prometheus_url && getenv("SLURM_REPORT_PROMETHEUS_URL") && *getenv("SLURM_REPORT_PROMETHEUS_URL"))
        o->prometheus_url = getenv("SLURM_REPORT_PROMETHEUS_URL");
    /* a --sqlite that is not there is a slip on the command line; health says it in a row instead */
    if (o->sqlite_path && strcmp(cli->cmd, "health") != 0 && access(o->sqlite_path, F_OK) != 0)
        return die_usage("--sqlite %s: no such file (a cluster ingested from sacct alone has no time series: "
                         "leave --sqlite out)", o->sqlite_path);
    return -1;
}

/*
 * Times a report is run when the rollups it reads change under it: an ingest that commits
 * twice while a report reads a document (schema/rollup/sa_rollup.h, "Commits"). Each run
 * reads from the commit that is the newest when it begins; the wait between them grows.
 */
#define READ_ATTEMPTS 6

/* Before reading again: says so under -v, and waits a little longer each time. */
static void read_again(const sa_report_opts_t *o, int attempt, const sa_error_t *why)
{
    struct timespec ts = {0, 100000000L * attempt};
    if (o->verbose)
        fprintf(o->verbose, "# %s (attempt %d of %d)\n", why->message, attempt + 1, READ_ATTEMPTS);
    nanosleep(&ts, NULL);
}

/*
 * Runs the report cli->cmd into out; *healthy false when health found a problem. The
 * report is written into memory first and copied to out when it is whole, so that a run
 * that must read again has printed nothing.
 */
static bool run_report(const cli_t *cli, const sa_report_opts_t *o, FILE *out, bool *healthy, sa_error_t *error)
{
    bool ok = false;

    for (int attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem)
            return sa_error_nomem(error);
        *healthy = true;
        sa_error_clear(error);
        ok = sa_report_find(cli->cmd)->run(o, mem, stderr, healthy, error);
        if (fclose(mem) != 0 && ok)
            ok = sa_error_nomem(error);
        if (ok && len && fwrite(buf, 1, len, out) != len) {
            sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
            ok = false;
        }
        free(buf);
        if (ok || error->domain != SA_ERR_CHANGED || attempt == READ_ATTEMPTS)
            break;
        read_again(o, attempt, error);
    }
    if (ok && fflush(out) != 0) {
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
        ok = false;
    }
    return ok;
}

/* The site (replaced atomically: a run that must read again leaves nothing), read again as run_report reads. */
static bool run_site(const cli_t *cli, const sa_report_opts_t *o, sa_error_t *error)
{
    sa_site_opts_t so = {cli->site_dir, cli->textfile, cli->months ? cli->months : 12};
    bool ok = false;
    for (int attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
        sa_error_clear(error);
        ok = sa_site_write(o, &so, stderr, error);
        if (ok || error->domain != SA_ERR_CHANGED || attempt == READ_ATTEMPTS)
            break;
        read_again(o, attempt, error);
    }
    return ok;
}

/* Prints the columns of the report (-e): "key  Title" and "(long)" for those -l or -o shows. */
static int helpformat(const cli_t *cli)
{
    size_t n = 0;
    const sa_col_t *cols = sa_report_columns(cli->cmd, &n);

    if (!cols)
        return die_usage("%s has no columns to choose", cli->cmd);
    for (size_t i = 0; i < n; i++)
        printf("%-28s %s%s\n", cols[i].key, cols[i].title, cols[i].flags & SA_COL_LONG ? "  (-l)" : "");
    return SA_EXIT_OK;
}

/*
 * --allocations URL (usage and site, the reports that read awards): fetched once for the
 * run, its last good copy kept beside the site or in the user's cache (sa_alloc_url.h),
 * into o->allocations_json (*json owns it: the caller frees). -1 to go on, else the exit
 * code, the message printed (nothing else has been).
 */
static int fetch_allocations(const cli_t *cli, sa_report_opts_t *o, char **json)
{
    bool site = strcmp(cli->cmd, "site") == 0;
    sa_alloc_url_t src = {.url = o->allocations_path, .auth_file = cli->alloc_auth, .timeout_s = cli->alloc_timeout_s};
    sa_error_t error;
    char *copy = NULL, *red;
    int rc = -1;

    *json = NULL;
    if (!sa_alloc_is_url(o->allocations_path)) {
        if (cli->alloc_auth || cli->alloc_timeout_s)
            return die_usage("--allocations-auth and --allocations-timeout are for --allocations URL%s", "");
        return -1;
    }
    if (cli->helpformat || (!site && strcmp(cli->cmd, "usage") != 0))
        return -1; /* the report refuses --allocations or ignores it: nothing to fetch */
    /* user:password@ on the command line: every user reads it in the process list */
    if ((red = sa_http_redact(o->allocations_path, false)) && strcmp(red, o->allocations_path) != 0)
        rc = die_usage("--allocations: %s holds a user and password, which every user can read in the process "
                       "list: give them in --allocations-auth FILE or SLURM_REPORT_ALLOCATIONS_AUTH", red);
    free(red);
    if (rc >= 0)
        return rc;
    src.copy_path = copy = sa_alloc_copy_path(o->allocations_path, site ? cli->site_dir : NULL);
    if (!sa_alloc_fetch(&src, stderr, json, &o->allocations_len, &error)) {
        fprintf(stderr, "slurm-report: %s\n", error.message);
        rc = sa_exit_code_for(&error, false);
    }
    o->allocations_json = *json;
    free(copy);
    return rc;
}

/* Runs the report into stdout, or into --output FILE atomically (sa_atomic_file); returns the exit code. */
static int run(const cli_t *cli, const sa_report_opts_t *o)
{
    sa_error_t error;
    sa_atomic_file_t af;
    FILE *out = stdout;
    bool healthy = true, ok;

    sa_error_clear(&error);
    if (cli->helpformat)
        return helpformat(cli);
    if (strcmp(cli->cmd, "site") == 0) {
        ok = run_site(cli, o, &error);
    } else {
        if (cli->output && !(out = sa_atomic_open(&af, cli->output, sa_umask_file_mode(), &error))) {
            fprintf(stderr, "slurm-report: %s\n", error.message);
            return sa_exit_code_for(&error, false);
        }
        ok = run_report(cli, o, out, &healthy, &error);
        if (cli->output)
            ok = sa_atomic_close(&af, ok, ok ? &error : NULL) && ok;
    }
    if (!ok) {
        fprintf(stderr, "slurm-report: %s\n", error.message);
        return sa_exit_code_for(&error, false);
    }
    return healthy ? SA_EXIT_OK : SA_EXIT_UNHEALTHY;
}

/* MONGOC_DISABLE_SHM before libmongoc's own initialisation: see sa_mongo_preinit */
SA_MONGO_PREINIT;

int main(int argc, char **argv)
{
    sa_report_opts_t o;
    sa_sreport_req_t req;
    cli_t cli = {.cmd = "usage"};
    char *alloc_json = NULL;
    int rc;

    sa_report_opts_init(&o);
    /* where the archive is, from the environment (tools/quickstart's report.env sets them); the options win */
    if (getenv("SLURM_REPORT_DB") && *getenv("SLURM_REPORT_DB")) {
        o.db_name = getenv("SLURM_REPORT_DB");
        o.db_given = true;
    }
    if (getenv("SLURM_REPORT_SQLITE_DIR") && *getenv("SLURM_REPORT_SQLITE_DIR"))
        o.sqlite_dir = getenv("SLURM_REPORT_SQLITE_DIR");
    sa_sreport_req_init(&req);
    sa_error_install_allocators("slurm-report");
    sa_mongo_init();
    if (is_sreport(argc, argv)) {
        /* sreport's grammar: its options, then the report and its conditions */
        int words = 0;
        if ((rc = parse_sreport_args(argc, argv, &o, &cli, &req, &words)) < 0 &&
            (rc = parse_times(&cli, &o)) < 0) {
            sa_error_t error;
            if (!sa_sreport_command(&req, argc - words, argv + words, o.now, &error))
                rc = die_usage("%s", error.message);
            o.sreport = &req;
        }
    } else if ((rc = parse_args(argc, argv, &o, &cli)) < 0 && (rc = parse_times(&cli, &o)) < 0) {
        rc = fetch_allocations(&cli, &o, &alloc_json);
    }
    if (rc < 0)
        rc = run(&cli, &o);
    free(alloc_json);
    sa_sreport_req_clear(&req);
    sa_report_opts_clear(&o);
    return rc;
}
