/*
 * sa_alloc_url.h - --allocations URL: the awards served by an endpoint (the JSON of the
 * allocations file, schema/allocations.schema.json), fetched once per run with libcurl
 * (sa_http.h: a timeout, a size cap, http and https only, no redirect), read by the one
 * parser of the file (sa_awards_parse), and kept as the last good copy, which a run uses,
 * with a warning, when the endpoint fails.
 *
 * Credentials never come from the command line: a file named by --allocations-auth, else
 * the environment's SLURM_REPORT_ALLOCATIONS_AUTH, else the systemd credential
 * allocations-auth ($CREDENTIALS_DIRECTORY/allocations-auth). Each holds one line,
 * "bearer TOKEN" or "basic USER:PASSWORD". Messages name the URL without its user
 * information and query (sa_http_redact), never the credentials.
 */
#ifndef SA_ALLOC_URL_H
#define SA_ALLOC_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"

typedef struct {
    const char *url;       /* http:// or https:// */
    const char *auth_file; /* --allocations-auth FILE; NULL: the environment, the systemd credential or none */
    const char *copy_path; /* the last good copy; NULL: none is kept */
    int64_t timeout_s;     /* the whole request (<= 0: 30 s) */
    size_t max_bytes;      /* the largest answer (0: 4 MiB) */
} sa_alloc_url_t;

/* True when s names an endpoint: it starts with http:// or https:// (any case). */
bool sa_alloc_is_url(const char *s);

/*
 * Where the last good copy of url is kept: beside the site when site_dir is given
 * ("DIR.allocations.json", outside the site that is replaced whole), else in the user's
 * cache, $XDG_CACHE_HOME/slurm-report/allocations-<16 hex digits of the URL's FNV-1a>.json
 * ($HOME/.cache when XDG_CACHE_HOME is unset). NULL when neither HOME nor XDG_CACHE_HOME
 * is set (no copy is kept) or out of memory. Caller frees.
 */
char *sa_alloc_copy_path(const char *url, const char *site_dir);

/*
 * Reads the awards of src->url into *json (caller frees; *len its length), as one of:
 * - the endpoint's answer, which parsed as an allocations file: the copy (when copy_path)
 *   is replaced by it, atomically, mode 0600, its directory made when it is the cache's
 *   (a copy that cannot be written: one warning line to warn, the run goes on);
 * - when the endpoint fails (unreachable, late, an HTTP error such as 401 or 403, an
 *   answer larger than the cap, one that is not an allocations file): the last good copy,
 *   with one warning line to warn naming the cause and the copy's time.
 * Else false: SA_ERR_ENDPOINT with one line naming the URL and the cause ("... and no last
 * good copy at PATH"); SA_ERR_USAGE for credentials that cannot be used (a file others may
 * read, another user's link or file, not "bearer ..." or "basic ..."), fetched or not.
 */
bool sa_alloc_fetch(const sa_alloc_url_t *src, FILE *warn, char **json, size_t *len, sa_error_t *error);

#endif
