/*
 * main.c - slurm-ingest's command line. The only place that turns errors into exit
 * codes (sa_exit.h); everything below returns bool and an sa_error_t.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_exit.h"
#include "sa_parse.h"

#ifndef SA_VERSION
#define SA_VERSION "unknown"
#endif

static void usage(FILE *out)
{
    fputs("Usage: slurm-ingest --dump [--delimiter STR] [--sacct-fields LIST] FILE...\n"
          "\n"
          "  --dump FILE...        parse captured Slurm output (squeue/sinfo/sacct --json, sacct -P/-p,\n"
          "                        scontrol show nodes -o; '-' = stdin) and print the normalized\n"
          "                        records as JSON lines, without touching any database\n"
          "  --delimiter STR       sacct text delimiter (default: detected)\n"
          "  --sacct-fields LIST   field list of sacct text captured with -n (no header)\n"
          "  -h, --help            this help\n"
          "  --version             print the version\n",
          out);
}

/* Prints one record as a compact JSON line. */
static bool print_json(json_t *o, sa_error_t *error)
{
    char *s;
    if (!o) {
        sa_error_set(error, SA_ERR_IO, ENOMEM, "out of memory");
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

static bool dump_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    (void)ctx;
    return print_json(sa_job_to_json(job), error);
}

static bool dump_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    (void)ctx;
    return print_json(sa_node_to_json(node), error);
}

/* Parses one file (or stdin) and prints its records. Returns an exit code. */
static int dump_file(const char *path, const sa_sacct_text_opts_t *topts)
{
    sa_sink_t sink = {dump_job, dump_node, NULL};
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
        fprintf(stderr, "slurm-ingest: %s: %s\n", strcmp(path, "-") ? path : "(stdin)", error.message);
        rc = SA_EXIT_INPUT;
    } else {
        for (size_t i = 0; i < meta.warnings.n; i++)
            fprintf(stderr, "slurm-ingest: %s: Slurm warning: %s\n", path, meta.warnings.v[i]);
        for (size_t i = 0; i < meta.errors.n; i++)
            fprintf(stderr, "slurm-ingest: %s: Slurm error: %s\n", path, meta.errors.v[i]);
        if (meta.errors.n)
            rc = SA_EXIT_SLURM;
    }
    sa_meta_clear(&meta);
    if (fd > 0)
        close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    enum { OPT_DUMP = 256, OPT_DELIM, OPT_FIELDS, OPT_VERSION };
    static const struct option longopts[] = {
        {"dump", no_argument, NULL, OPT_DUMP},
        {"delimiter", required_argument, NULL, OPT_DELIM},
        {"sacct-fields", required_argument, NULL, OPT_FIELDS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    sa_sacct_text_opts_t topts = {0};
    bool dump = false;
    int c, rc = SA_EXIT_OK;

    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DUMP:
            dump = true;
            break;
        case OPT_DELIM:
            topts.delimiter = optarg;
            break;
        case OPT_FIELDS:
            topts.fields = optarg;
            break;
        case 'h':
            usage(stdout);
            return SA_EXIT_OK;
        case OPT_VERSION:
            printf("slurm-ingest %s\n", SA_VERSION);
            return SA_EXIT_OK;
        default:
            usage(stderr);
            return SA_EXIT_USAGE;
        }
    }
    if (!dump || optind >= argc) {
        fputs("slurm-ingest: give --dump and at least one FILE (see --help)\n", stderr);
        return SA_EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++) {
        int frc = dump_file(argv[i], &topts);
        if (frc != SA_EXIT_OK && rc == SA_EXIT_OK)
            rc = frc;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "slurm-ingest: cannot write to standard output: %s\n", strerror(errno));
        return SA_EXIT_FAILURE;
    }
    return rc;
}
