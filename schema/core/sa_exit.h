/*
 * sa_exit.h - exit codes of slurm-ingest and slurm-report (the one table the README
 * and the man pages show).
 */
#ifndef SA_EXIT_H
#define SA_EXIT_H

enum {
    SA_EXIT_OK = 0,        /* done */
    SA_EXIT_FAILURE = 1,   /* an unexpected failure (out of memory, a bug) */
    SA_EXIT_USAGE = 2,     /* bad command line or configuration */
    SA_EXIT_INPUT = 3,     /* bad input: a file or Slurm's output could not be parsed */
    SA_EXIT_SLURM = 4,     /* a Slurm command failed, timed out or reported errors */
    SA_EXIT_MONGO = 5,     /* MongoDB refused a write (nothing spooled) */
    SA_EXIT_SQLITE = 6,    /* the SQLite time series could not be written */
    SA_EXIT_LOCKED = 7,    /* another slurm-ingest for this cluster is running (or, slurm-report, kept writing
                              the rollups through every read of a report) */
    SA_EXIT_SPOOLED = 8,   /* MongoDB unreachable: input spooled, nothing lost */
    SA_EXIT_UNHEALTHY = 9, /* slurm-report health found a problem */
    SA_EXIT_SPOOL = 10,    /* a capture could not be kept (spool full or unwritable): that
                              capture is dropped, nothing else; no watermark moved */
    SA_EXIT_ENDPOINT = 11, /* slurm-report: the --allocations URL failed (unreachable, late, refused, too large,
                              not an allocations file) and no last good copy was kept, or current
                              --cloudwatch: CloudWatch refused the metrics or could not be reached */
};

#include <stdbool.h>

#include "sa_error.h"

/*
 * The exit code for a failure, the one mapping both binaries use: SA_ERR_NOMEM -> 1,
 * SA_ERR_USAGE -> 2, SA_ERR_INPUT -> 3, SA_ERR_SLURM -> 4, SA_ERR_MONGO -> 5,
 * SA_ERR_SQLITE -> 6, SA_ERR_LOCKED and SA_ERR_CHANGED -> 7, SA_ERR_UNREACHABLE -> 8 when the program
 * spools its input (slurm-ingest; 5 for slurm-report, which has nothing to spool),
 * SA_ERR_SPOOL -> 10, SA_ERR_ENDPOINT -> 11, anything else (SA_ERR_IO, a bug) -> 1.
 */
int sa_exit_code_for(const sa_error_t *error, bool spools);

#endif
