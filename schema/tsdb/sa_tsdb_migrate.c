/*
 * sa_tsdb_migrate.c - opening the time series: checking that a file is ours and usable
 * (without changing it), WAL mode, creating the schema (schema/tsdb/timeseries.sql,
 * embedded) or migrating an older one, in one transaction.
 */
#include "sa_tsdb_private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sa_timeseries_sql.h" /* generated from schema/tsdb/timeseries.sql: sa_timeseries_sql[] */

/* The tables schema version 1 has; all must exist in a database marked as ours. */
static const char *const our_tables[] = {
    "cluster", "snapshot", "gap", "node", "state", "reason", "partition", "partset", "partset_member",
    "gpu_type", "attr", "attr_gpu", "node_interval", "total_key", "total", "gpu_total", "sched", NULL,
};

/* Reads one integer from a query with no parameters (e.g. a PRAGMA). */
static bool query_int(sa_tsdb_t *db, const char *sql, int64_t *out, const char *what, sa_error_t *error)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &s, NULL);

    *out = 0;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_OK) {
        tsdb_sql_err(db, rc, what, error);
        return false;
    }
    return true;
}

/* What the file holds, read without changing it. */
typedef struct {
    int64_t app_id, version, ntables;
    const char *missing; /* first of our_tables that is absent */
} probe_t;

static bool probe(sa_tsdb_t *db, probe_t *p, sa_error_t *error)
{
    char sql[160];

    memset(p, 0, sizeof *p);
    if (!query_int(db, "PRAGMA application_id", &p->app_id, "reading the database header", error) ||
        !query_int(db, "PRAGMA user_version", &p->version, "reading the database header", error) ||
        !query_int(db, "SELECT count(*) FROM sqlite_master", &p->ntables, "reading the schema", error))
        return false;
    for (int i = 0; our_tables[i]; i++) {
        int64_t n;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
                 our_tables[i]);
        if (!query_int(db, sql, &n, "reading the schema", error))
            return false;
        if (n == 0) {
            p->missing = our_tables[i];
            break;
        }
    }
    return true;
}

/*
 * Checks that the probed file is ours and usable. *fresh is set when it is an empty
 * database that needs the schema.
 */
static bool check_probe(sa_tsdb_t *db, const probe_t *p, bool *fresh, sa_error_t *error)
{
    *fresh = false;
    if (p->app_id == 0 && p->version == 0 && p->ntables == 0) {
        if (db->readonly) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "no time series here (empty database)");
            return false;
        }
        *fresh = true;
        return true;
    }
    if (p->app_id != SA_TSDB_APPLICATION_ID) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "not a slurm-archive time series (another application's SQLite database: application_id "
                 "0x%08" PRIx64 ", %" PRId64 " schema objects); nothing was changed",
                 (uint64_t)(uint32_t)p->app_id, p->ntables);
        return false;
    }
    if (p->version > SA_TSDB_SCHEMA_VERSION) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "schema version %" PRId64 " is newer than this program knows (%d); upgrade slurm-archive; "
                 "nothing was changed",
                 p->version, SA_TSDB_SCHEMA_VERSION);
        return false;
    }
    if (db->readonly && p->version < SA_TSDB_SCHEMA_VERSION && p->version >= 1) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0,
                 "schema version %" PRId64 " is older than this program's (%d); open it read-write once to migrate",
                 p->version, SA_TSDB_SCHEMA_VERSION);
        return false;
    }
    if (p->version < 1) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "schema version %" PRId64 " is not valid; nothing was changed",
                 p->version);
        return false;
    }
    if (p->missing) {
        tsdb_err(db, error, SA_ERR_SQLITE, 0, "table %s is missing (database damaged?); nothing was changed",
                 p->missing);
        return false;
    }
    return true;
}

/* Migrations from version v to v+1, in order; index v-1 (timeseries.sql is the latest). */
static const char *const migrations[] = {
    /* 1 -> 2: where a node's GPUs come from (grouped sinfo), configurations observed alone */
    "ALTER TABLE attr ADD COLUMN gpu_config INTEGER;"
    "CREATE TABLE node_config_gpu (node_id INTEGER NOT NULL REFERENCES node (id), at INTEGER NOT NULL,"
    " gpu_type_id INTEGER NOT NULL REFERENCES gpu_type (id), total INTEGER NOT NULL,"
    " PRIMARY KEY (node_id, at, gpu_type_id)) WITHOUT ROWID;",
    /* 2 -> 3: sdiag's RPC counts by message type and by user */
    "CREATE TABLE rpc_name (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE sched_rpc (cluster_id INTEGER NOT NULL REFERENCES cluster (id), at INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, name_id INTEGER NOT NULL REFERENCES rpc_name (id), count INTEGER NOT NULL,"
    " total_time INTEGER, PRIMARY KEY (cluster_id, at, kind, name_id)) WITHOUT ROWID;",
    /* 3 -> 4: CPU counts split from a grouped sinfo record's sums */
    "ALTER TABLE attr ADD COLUMN cpu_config INTEGER;",
    NULL,
};

/* Creates the schema in an empty database, or migrates an older one, in one transaction. */
static bool init_schema(sa_tsdb_t *db, bool fresh, int64_t version, sa_error_t *error)
{
    char sql[96];
    probe_t p;

    if (!tsdb_exec(db, "BEGIN IMMEDIATE", "starting the schema transaction", error))
        return false;
    /* another process may have created it meanwhile */
    if (!probe(db, &p, error))
        goto fail;
    if (fresh && p.app_id == SA_TSDB_APPLICATION_ID) {
        bool f;
        if (!check_probe(db, &p, &f, error))
            goto fail;
        fresh = false;
        version = p.version;
    }
    if (fresh) {
        if (!tsdb_exec(db, sa_timeseries_sql, "creating the schema", error))
            goto fail;
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", SA_TSDB_APPLICATION_ID);
        if (!tsdb_exec(db, sql, "creating the schema", error))
            goto fail;
        version = SA_TSDB_SCHEMA_VERSION;
    }
    for (int64_t v = version; v < SA_TSDB_SCHEMA_VERSION; v++) {
        if (!migrations[v - 1] || !tsdb_exec(db, migrations[v - 1], "migrating the schema", error))
            goto fail;
    }
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SA_TSDB_SCHEMA_VERSION);
    if (!tsdb_exec(db, sql, "creating the schema", error) || !tsdb_exec(db, "COMMIT", "creating the schema", error))
        goto fail;
    return true;
fail:
    tsdb_rollback(db);
    return false;
}

#define SYMLINK_REFUSED "is a symbolic link: refused (give the time series' own path)"

sa_tsdb_t *sa_tsdb_open(const char *path, bool readonly, int busy_timeout_ms, sa_error_t *error)
{
    sa_tsdb_t *db = calloc(1, sizeof *db);
    probe_t p;
    bool fresh;
    int rc;

    if (!db || !(db->path = strdup(path ? path : ""))) {
        sa_error_set(error, SA_ERR_NOMEM, SQLITE_NOMEM, "%s: out of memory", path ? path : "");
        free(db);
        return NULL;
    }
    db->readonly = readonly;
    db->busy_ms = busy_timeout_ms < 0 ? 0 : busy_timeout_ms;
    if (!path || !*path) {
        tsdb_err(db, error, SA_ERR_USAGE, 0, "no database path given");
        goto fail;
    }
    {
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
            tsdb_err(db, error, SA_ERR_SQLITE, ELOOP, "%s", SYMLINK_REFUSED);
            goto fail;
        }
        if (readonly && stat(path, &sb) != 0) {
            tsdb_err(db, error, SA_ERR_IO, 0, "no such database");
            goto fail;
        }
    }
    /* NOFOLLOW: a link planted between the check above and the open is refused too */
    rc = sqlite3_open_v2(path, &db->conn,
                         SQLITE_OPEN_NOFOLLOW |
                             (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE),
                         NULL);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_CANTOPEN_SYMLINK || (db->conn && sqlite3_extended_errcode(db->conn) == SQLITE_CANTOPEN_SYMLINK))
            tsdb_err(db, error, SA_ERR_SQLITE, ELOOP, "%s", SYMLINK_REFUSED);
        else if ((rc & 0xff) == SQLITE_CANTOPEN)
            tsdb_err(db, error, SA_ERR_IO, rc, "cannot open the database file");
        else
            tsdb_sql_err(db, rc, "opening", error);
        goto fail;
    }
    sqlite3_extended_result_codes(db->conn, 1);
    sqlite3_busy_timeout(db->conn, db->busy_ms);

    /* look before touching anything */
    if (!probe(db, &p, error) || !check_probe(db, &p, &fresh, error))
        goto fail;
    if (!readonly) {
        sqlite3_stmt *s = NULL;
        const unsigned char *mode = NULL;
        char modebuf[16] = "";

        rc = sqlite3_prepare_v2(db->conn, "PRAGMA journal_mode = WAL", -1, &s, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            mode = sqlite3_column_text(s, 0);
            snprintf(modebuf, sizeof modebuf, "%s", mode ? (const char *)mode : "");
            rc = SQLITE_OK;
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_OK) {
            tsdb_sql_err(db, rc, "switching to WAL mode", error);
            goto fail;
        }
        if (strcmp(modebuf, "wal") != 0) {
            tsdb_err(db, error, SA_ERR_SQLITE, 0, "cannot switch to WAL mode (journal mode stays %s)",
                     modebuf);
            goto fail;
        }
        if (!tsdb_exec(db, "PRAGMA synchronous = NORMAL", "setting up", error))
            goto fail;
        if ((fresh || p.version < SA_TSDB_SCHEMA_VERSION) && !init_schema(db, fresh, p.version, error))
            goto fail;
    }
    return db;
fail:
    sa_tsdb_close(db);
    return NULL;
}

