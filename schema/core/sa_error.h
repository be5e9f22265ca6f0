/*
 * sa_error.h - the one error type of slurm-archive.
 *
 * Every fallible function returns bool (true = success) and takes an optional
 * sa_error_t *error as its LAST argument, in the manner of libbson's bson_error_t.
 * Messages are a single line of well-formed UTF-8: sa_error_set() folds control
 * characters (newlines from hostile job names, say) and invalid UTF-8 (a Latin-1
 * configuration file) into '?', so a message can always be logged or shown as is.
 * Library code never exits; only the main() of each binary turns an error into an
 * exit code.
 */
#ifndef SA_ERROR_H
#define SA_ERROR_H

#include <stdbool.h>
#include <stddef.h>

/* Error domains: which layer failed. */
typedef enum {
    SA_ERR_NONE = 0,
    SA_ERR_INPUT,   /* malformed or unexpected input data (parsers)          */
    SA_ERR_IO,      /* reading or writing a file, running a command          */
    SA_ERR_MONGO,   /* the MongoDB server or driver                          */
    SA_ERR_SQLITE,  /* the SQLite time series                                */
    SA_ERR_USAGE,   /* command line or configuration                         */
    SA_ERR_LOCKED,  /* another process holds a lock                          */
    SA_ERR_SLURM,   /* a Slurm command failed, timed out, or reported errors[] */
    SA_ERR_NOMEM,   /* out of memory, wherever it happened                   */
    SA_ERR_UNREACHABLE, /* MongoDB: no connection could be made (the run spools) */
    SA_ERR_SPOOL,   /* a capture could not be kept (spool full or unwritable) */
    SA_ERR_CHANGED, /* the rollups changed under a report's read (an ingest was writing): read again */
    SA_ERR_ENDPOINT, /* a service slurm-report uses over HTTP failed: the --allocations URL (and no last good
                        copy was kept), or CloudWatch refused the metrics or could not be reached */
} sa_err_domain_t;

typedef struct {
    sa_err_domain_t domain;
    int code;          /* domain specific (errno, server code, ...) or 0 */
    char message[768];
} sa_error_t;

/* Sets *error (if not NULL) from a printf format. The result is one line. */
void sa_error_set(sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prepends "prefix: " to an existing message (e.g. the file name). */
void sa_error_prefix(sa_error_t *error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets *error to "out of memory" (SA_ERR_NOMEM, code ENOMEM). Returns false, so that
 * `return sa_error_nomem(error);` fails a function. */
bool sa_error_nomem(sa_error_t *error);

/*
 * Allocation that cannot fail: on out of memory it prints "<program>: out of memory"
 * on stderr and exits with status 1 (SA_EXIT_FAILURE). Used where a failure cannot be
 * handed back (jansson's and libbson's allocators, see sa_error_install_allocators).
 * A run killed this way has written nothing half: the spool keeps its captures, SQLite
 * rolls back, MongoDB writes are idempotent.
 */
void *sa_xmalloc(size_t n);
/* Installs sa_xmalloc-like allocators into jansson and libbson (once per process). */
void sa_error_install_allocators(const char *program);

/* Clears *error to "no error". */
void sa_error_clear(sa_error_t *error);

/*
 * Copies at most max bytes of s into out (size outsz) for use inside a message:
 * control characters and invalid UTF-8 become '?', the result is cut with "..." if
 * longer.
 * Returns out.
 */
const char *sa_error_quote(const char *s, size_t max, char *out, size_t outsz);

#endif
