/*
 * sa_exit.c - from an error to the exit code (see sa_exit.h).
 */
#include "sa_exit.h"

int sa_exit_code_for(const sa_error_t *error, bool spools)
{
    if (!error)
        return SA_EXIT_FAILURE;
    switch (error->domain) {
    case SA_ERR_USAGE:
        return SA_EXIT_USAGE;
    case SA_ERR_INPUT:
        return SA_EXIT_INPUT;
    case SA_ERR_SLURM:
        return SA_EXIT_SLURM;
    case SA_ERR_MONGO:
        return SA_EXIT_MONGO;
    case SA_ERR_SQLITE:
        return SA_EXIT_SQLITE;
    case SA_ERR_LOCKED:
    case SA_ERR_CHANGED:
        return SA_EXIT_LOCKED;
    case SA_ERR_UNREACHABLE:
        return spools ? SA_EXIT_SPOOLED : SA_EXIT_MONGO;
    case SA_ERR_SPOOL:
        return SA_EXIT_SPOOL;
    case SA_ERR_EXPORT:
        return SA_EXIT_EXPORT;
    case SA_ERR_NOMEM:
    case SA_ERR_IO:
    case SA_ERR_NONE:
        break;
    }
    return SA_EXIT_FAILURE;
}
