/*
 * sa_report.c - options, formats and what the reports share (see sa_report.h and
 * sa_rcommon.h).
 */
#include "sa_rcommon.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_bson.h"
#include "sa_rutil.h"

bool sa_rstate_is_final(const char *s)
{
    return sa_job_state_is_final(s); /* one list for ingest and report (REVOKED included) */
}

void sa_rbson_append_final_states(bson_t *b, const char *op)
{
    sa_bson_append_final_states(b, op);
}

bool sa_report_window(const char *report, int64_t start, int64_t end, bool needed, sa_error_t *error)
{
    if (needed && (start == SA_UNSET || end == SA_UNSET)) {
        sa_error_set(error, SA_ERR_USAGE, 0, "%s needs a window: --month YYYY-MM, or -S START [-E END]", report);
        return false;
    }
    if (start != SA_UNSET && end != SA_UNSET && (end < start || (needed && end == start))) {
        sa_error_set(error, SA_ERR_USAGE, 0, "the window is empty: END (%s) is not after START (%s)", sa_riso(end),
                     sa_riso(start));
        return false;
    }
    return true;
}

void sa_report_opts_init(sa_report_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->db_name = "slurm";
    sa_strv_init(&o->clusters);
    sa_strv_init(&o->accounts);
    sa_strv_init(&o->users);
    sa_strv_init(&o->states);
    sa_strv_init(&o->names);
    sa_strv_init(&o->partitions);
    sa_strv_init(&o->job_ids);
    o->start = o->end = SA_UNSET;
    o->now = (int64_t)time(NULL);
    o->unit = SA_UNIT_GPU_YEARS;
    o->year_days = 365;
    o->stale_s = 3600;
    o->since = SA_UNSET;
    o->format = SA_FMT_TABLE;
    o->idle_threshold = 5;
    o->top_n = 10;
}

unsigned sa_report_by(const sa_report_opts_t *o, unsigned dflt)
{
    unsigned by = 0;

    if (o->by)
        return o->by;
    for (size_t i = 0; i < o->ncolumns; i++) {
        if (strcmp(o->columns[i].name, "account") == 0)
            by |= SA_BY_ACCOUNT;
        else if (strcmp(o->columns[i].name, "user") == 0)
            by |= SA_BY_USER;
        else if (strcmp(o->columns[i].name, "gpu_type") == 0)
            by |= SA_BY_GPU_TYPE;
    }
    return by ? by : dflt;
}

void sa_report_opts_clear(sa_report_opts_t *o)
{
    sa_strv_clear(&o->clusters);
    sa_strv_clear(&o->accounts);
    sa_strv_clear(&o->users);
    sa_strv_clear(&o->states);
    sa_strv_clear(&o->names);
    sa_strv_clear(&o->partitions);
    sa_strv_clear(&o->job_ids);
    sa_colspecs_free(o->columns, o->ncolumns);
    o->columns = NULL;
    o->ncolumns = 0;
}

static const char *const format_names[] = {"table", "parsable", "csv", "json", "svg", "html", "prometheus"};

bool sa_format_parse(const char *s, sa_format_t *f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
        if (strcmp(s, format_names[i]) == 0) {
            *f = (sa_format_t)i;
            return true;
        }
    }
    return false;
}

const char *sa_format_name(sa_format_t f)
{
    return (size_t)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

/* ---- time series files ------------------------------------------------------------ */

void sa_rtsdbs_init(sa_rtsdbs_t *t)
{
    memset(t, 0, sizeof *t);
}

void sa_rtsdbs_clear(sa_rtsdbs_t *t)
{
    sa_tsdb_close(t->shared);
    for (size_t i = 0; i < t->n; i++) {
        free(t->names[i]);
        sa_tsdb_close(t->dbs[i]);
    }
    free(t->names);
    free(t->dbs);
    memset(t, 0, sizeof *t);
}

/* The directory of the per-cluster time series: --sqlite-dir, $SLURM_REPORT_SQLITE_DIR, else the ingester's. */
static const char *sqlite_dir(const sa_report_opts_t *o)
{
    return o->sqlite_dir ? o->sqlite_dir : "/var/lib/slurm-ingest";
}

const char *sa_rtsdbs_missing(const sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, char *buf,
                              size_t sz)
{
    if (t->none || o->sqlite_path)
        snprintf(buf, sz, "cluster %s: no time series (--sqlite %s %s)", cluster, o->sqlite_path ? o->sqlite_path : "",
                 t->none ? "cannot be read" : "does not hold it");
    else
        snprintf(buf, sz, "cluster %s: no time series (%s/%s.sqlite does not exist; give --sqlite PATH, or "
                          "--sqlite-dir DIR or SLURM_REPORT_SQLITE_DIR)", cluster, sqlite_dir(o), cluster);
    return buf;
}

void sa_rtsdbs_left_out(FILE *warn, const sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster,
                        const char *what)
{
    char why[600];

    if (warn)
        fprintf(warn, "slurm-report: %s: %s\n", sa_rtsdbs_missing(t, o, cluster, why, sizeof why), what);
}

bool sa_rtsdbs_get(sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, bool required, sa_tsdb_t **db,
                   sa_error_t *error)
{
    char why[600];

    char *path;
    struct stat st;
    char **names;
    sa_tsdb_t **dbs;

    *db = NULL;
    if (o->shared_tsdbs && o->shared_tsdbs != t && !t->none) /* the files the run opened once for its reports */
        return sa_rtsdbs_get(o->shared_tsdbs, o, cluster, required, db, error);
    if (t->none) {
        if (required) /* a file named that is not there: a slip on the command line (exit 2) */
            sa_error_set(error, SA_ERR_USAGE, ENOENT, "%s", sa_rtsdbs_missing(t, o, cluster, why, sizeof why));
        return !required;
    }
    if (o->sqlite_path) {
        if (!t->shared && !(t->shared = sa_tsdb_open(o->sqlite_path, true, 10000, error)))
            return false;
        *db = t->shared;
        return true;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->names[i], cluster) == 0) {
            *db = t->dbs[i];
            goto check;
        }
    }
    path = sa_rprintf("%s/%s.sqlite", sqlite_dir(o), cluster);
    names = realloc(t->names, (t->n + 1) * sizeof *names);
    if (names)
        t->names = names;
    dbs = realloc(t->dbs, (t->n + 1) * sizeof *dbs);
    if (dbs)
        t->dbs = dbs;
    if (!path || !names || !dbs) {
        free(path);
        sa_error_nomem(error);
        return false;
    }
    t->names[t->n] = strdup(cluster);
    t->dbs[t->n] = NULL;
    t->n++;
    if (strchr(cluster, '/') == NULL && stat(path, &st) == 0) {
        *db = t->dbs[t->n - 1] = sa_tsdb_open(path, true, 10000, error);
        if (!*db) {
            free(path);
            return false;
        }
    }
    free(path);
check:
    if (!*db && required) { /* the README's exit code of a file that is not there: 2, as for --sqlite */
        sa_error_set(error, SA_ERR_USAGE, ENOENT, "%s", sa_rtsdbs_missing(t, o, cluster, why, sizeof why));
        return false;
    }
    return true;
}

bool sa_report_series_clusters(const sa_report_opts_t *o, sa_rtsdbs_t *tsdbs, sa_strv_t *out, sa_error_t *error)
{
    sa_rdb_t *db;
    sa_rclusters_t rc;
    bool ok = true;

    for (size_t i = 0; i < o->clusters.n; i++)
        ok = ok && sa_strv_push(out, o->clusters.v[i]);
    if (o->clusters.n)
        return ok || sa_error_nomem(error);
    if (o->sqlite_path) {
        sa_tsdb_t *ts;
        return sa_rtsdbs_get(tsdbs, o, "", true, &ts, error) && sa_tsdb_clusters(ts, out, error);
    }
    if (!(db = sa_report_connect(o, error)))
        return false;
    if ((ok = sa_rdb_clusters(db, &o->clusters, &rc, error))) {
        for (size_t i = 0; i < rc.n; i++)
            ok = ok && sa_strv_push(out, rc.v[i].name);
        sa_rclusters_clear(&rc);
    }
    sa_rdb_close(db);
    return ok || sa_error_nomem(error);
}

/*
 * The systemd credential mongo-uri ($CREDENTIALS_DIRECTORY/mongo-uri: LoadCredential=
 * of the site's unit), its first line; NULL when there is none. Caller frees.
 */
static char *credential_uri(void)
{
    const char *dir = getenv("CREDENTIALS_DIRECTORY");
    char *path, *line = NULL;
    size_t cap = 0;
    FILE *f;

    if (!dir || !*dir || !(path = sa_rprintf("%s/mongo-uri", dir)))
        return NULL;
    f = fopen(path, "r");
    free(path);
    if (!f)
        return NULL;
    if (getline(&line, &cap, f) < 0) {
        free(line);
        line = NULL;
    } else {
        line[strcspn(line, "\r\n")] = '\0';
    }
    fclose(f);
    return line;
}

bool sa_report_archive_given(const sa_report_opts_t *o)
{
    const char *env[2] = {getenv("SLURM_REPORT_MONGO_URI"), getenv("SLURM_INGEST_MONGO_URI")};
    char *cred;

    if ((o->mongo_uri && *o->mongo_uri) || o->db_given || (env[0] && *env[0]) || (env[1] && *env[1]))
        return true;
    cred = credential_uri();
    if (cred) {
        memset(cred, 0, strlen(cred));
        free(cred);
        return true;
    }
    return false;
}

sa_rdb_t *sa_report_connect(const sa_report_opts_t *o, sa_error_t *error)
{
    char *cred = NULL;
    sa_rdb_t *db;
    const char *uri = o->mongo_uri;
    if (o->shared_db)
        return sa_rdb_ref(o->shared_db);
    if (!uri || !*uri)
        uri = getenv("SLURM_REPORT_MONGO_URI");
    if (!uri || !*uri)
        uri = getenv("SLURM_INGEST_MONGO_URI");
    if (!uri || !*uri)
        uri = cred = credential_uri();
    if (!uri || !*uri)
        uri = "mongodb://127.0.0.1:27017";
    db = sa_rdb_open(uri, o->db_name ? o->db_name : "slurm", error);
    if (db)
        sa_rdb_set_verbose(db, o->verbose);
    if (cred) {
        memset(cred, 0, strlen(cred));
        free(cred);
    }
    return db;
}
