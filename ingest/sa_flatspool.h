/*
 * sa_flatspool.h - a directory of captured Slurm outputs: the flat layout of 0.1 (one file
 * per capture), still read by replays of old --archive-dir trees and old spools. New
 * captures are whole snapshot directories (sa_snapshot.h); nothing writes this layout
 * any more.
 *
 * Layout: DIR/<cluster>/<YYYYMMDDTHHMMSSZ>-<kind>.<ext>
 *   - the time is the observation time `at`, UTC, to the second;
 *   - kind is one of "sinfo", "squeue", "sacct", "sdiag";
 *   - ext is "json" when the data starts (after white space) with '{' or '[',
 *     else "txt" (sacct -P, scontrol show nodes -o, sdiag text).
 * Captures of several kinds taken at the same `at` form one snapshot. 0.1 wrote each
 * file as ".<name>.tmp.XXXXXX" renamed into place: such leftovers are not captures.
 */
#ifndef SA_FLATSPOOL_H
#define SA_FLATSPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"

/* One capture found by sa_flatspool_list. */
typedef struct {
    char *path;       /* DIR/<cluster>/<name>, owned */
    int64_t at;       /* observation time, seconds since the epoch (UTC) */
    const char *kind; /* "sinfo", "squeue", "sacct" or "sdiag" (static string) */
    bool json;        /* the extension is .json (else .txt) */
} sa_flatspool_entry_t;

/*
 * Lists the captures of `cluster` in DIR, sorted by time, then by kind in the
 * order sinfo, squeue, sacct, sdiag (a replay sees each snapshot's files together
 * in a fixed order), then by name. Files that are not captures (temporary files,
 * anything else) are ignored and never touched. A missing DIR/<cluster> is an
 * empty list.
 *
 * On success *entries (caller frees with sa_flatspool_entries_free) and *n are set;
 * on failure they are NULL and 0.
 */
bool sa_flatspool_list(const char *dir, const char *cluster, sa_flatspool_entry_t **entries, size_t *n,
                   sa_error_t *error);

/* Checks a spool directory and a cluster name (a plain name: sa_cluster_name_ok). */
bool sa_flatspool_check_names(const char *dir, const char *cluster, sa_error_t *error);

/* Formats at as "YYYYMMDDTHHMMSSZ" (UTC; bufsz >= 17); false outside 1970..9999. */
bool sa_flatspool_format_at(int64_t at, char *buf, size_t bufsz);
/* Parses the first 16 bytes of s as "YYYYMMDDTHHMMSSZ" (strict). */
bool sa_flatspool_parse_at(const char *s, int64_t *at);

/* Frees what sa_flatspool_list returned. Accepts NULL. */
void sa_flatspool_entries_free(sa_flatspool_entry_t *entries, size_t n);

/*
 * Removes one capture (after a successful replay) and fsyncs its directory so it
 * does not come back after a crash. A path that no longer exists is success.
 */
bool sa_flatspool_remove(const char *path, sa_error_t *error);

#endif
