/*
 * sa_jobcache.c - the per-cluster cache of merged record digests (see sa_jobcache.h).
 */
#include "sa_vec.h"
#include "sa_jobcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <limits.h>
#include <sqlite3.h>

static const char schema_sql[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS job (job_id INTEGER PRIMARY KEY, live INTEGER NOT NULL, touched INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS job_live ON job (live) WHERE live = 1;"
    "CREATE TABLE IF NOT EXISTS rec (job_id INTEGER NOT NULL, source INTEGER NOT NULL, submit INTEGER NOT NULL,"
    "  start INTEGER NOT NULL, digest INTEGER NOT NULL, PRIMARY KEY (job_id, source, submit, start)) WITHOUT ROWID;";

/*
 * The run's sets of job ids (listed by squeue, changed in an input) once they outgrow
 * memory: a TEMP table, in SQLite's temporary file (unlinked as soon as it is opened, so a
 * killed run leaves nothing behind), dropped when the cache is closed.
 */
static const char idset_sql[] =
    "PRAGMA temp_store=FILE;"
    "CREATE TEMP TABLE IF NOT EXISTS idset (s INTEGER NOT NULL, job_id INTEGER NOT NULL,"
    "  PRIMARY KEY (s, job_id)) WITHOUT ROWID;"
    "CREATE TEMP TABLE IF NOT EXISTS span (job_id INTEGER NOT NULL, input INTEGER NOT NULL, off INTEGER NOT NULL,"
    "  len INTEGER NOT NULL, digest INTEGER NOT NULL, PRIMARY KEY (job_id, input, off)) WITHOUT ROWID;";

enum { Q_GET_REC, Q_PUT_REC, Q_GET_JOB, Q_PUT_JOB, Q_FORGET, Q_LIVE, Q_IDSET_ADD, Q_IDSET_VANISHED,
       Q_SPAN_ADD, Q_SPAN_EACH, Q_SPAN_DROP, Q_COUNT };

static const char *const queries[Q_COUNT] = {
    "SELECT digest FROM rec WHERE job_id = ?1 AND source = ?2 AND submit = ?3 AND start = ?4",
    "INSERT INTO rec (job_id, source, submit, start, digest) VALUES (?1, ?2, ?3, ?4, ?5)"
    " ON CONFLICT (job_id, source, submit, start) DO UPDATE SET digest = excluded.digest",
    "SELECT live FROM job WHERE job_id = ?1",
    "INSERT INTO job (job_id, live, touched) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (job_id) DO UPDATE SET live = excluded.live, touched = max(touched, excluded.touched)",
    "DELETE FROM rec WHERE job_id = ?1",
    "SELECT job_id FROM job WHERE live = 1 ORDER BY job_id",
    "INSERT OR IGNORE INTO temp.idset (s, job_id) VALUES (?1, ?2)",
    "SELECT job_id FROM job WHERE live = 1 AND NOT EXISTS"
    " (SELECT 1 FROM temp.idset WHERE s = ?1 AND idset.job_id = job.job_id) ORDER BY job_id",
    "INSERT OR REPLACE INTO temp.span (job_id, input, off, len, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
    "SELECT job_id, input, off, len, digest FROM temp.span WHERE (job_id, input, off) > (?1, ?2, ?3)"
    " ORDER BY job_id, input, off LIMIT 1024",
    "DELETE FROM temp.span WHERE input = ?1",
};

struct sa_jobcache {
    sqlite3 *db;
    sqlite3_stmt *q[Q_COUNT];
    char *path;
    char token[33];
    int64_t seq;
};

static bool db_error(sa_jobcache_t *c, sa_error_t *error, const char *what)
{
    int rc = sqlite3_errcode(c->db);
    if (rc == SQLITE_NOMEM)
        sa_error_nomem(error);
    else
        sa_error_set(error, SA_ERR_SQLITE, rc, "%s: %s: %s", c->path, what, sqlite3_errmsg(c->db));
    return false;
}

/* Runs a statement without result rows. */
static bool exec(sa_jobcache_t *c, const char *sql, sa_error_t *error)
{
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(c, error, "job cache");
    return true;
}

static bool meta_get(sa_jobcache_t *c, const char *key, char *buf, size_t bufsz)
{
    sqlite3_stmt *st;
    bool found = false;
    if (sqlite3_prepare_v2(c->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        snprintf(buf, bufsz, "%s", (const char *)sqlite3_column_text(st, 0));
        found = true;
    }
    sqlite3_finalize(st);
    return found;
}

static bool meta_set(sa_jobcache_t *c, const char *key, const char *value, sa_error_t *error)
{
    sqlite3_stmt *st;
    bool ok;
    if (sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", -1, &st, NULL) !=
        SQLITE_OK)
        return db_error(c, error, "job cache");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    return ok || db_error(c, error, "job cache");
}

/* A new random token (32 hex digits). */
static void new_token(char out[33])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    for (size_t i = got; i < sizeof b; i++) /* no entropy source: time and pid, still unique enough */
        b[i] = (unsigned char)((size_t)time(NULL) >> (i % 8) ^ (size_t)getpid() >> (i % 4) ^ i);
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

sa_jobcache_t *sa_jobcache_open(const char *path, sa_error_t *error)
{
    sa_jobcache_t *c = calloc(1, sizeof *c);
    char buf[64];
    int fd;

    if (!c || !(c->path = strdup(path))) {
        free(c);
        sa_error_nomem(error);
        return NULL;
    }
    /* created 0600 before SQLite opens it: it names the cluster's jobs */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        sa_error_set(error, SA_ERR_SQLITE, errno, "%s: cannot open the job cache: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
        db_error(c, error, "cannot open the job cache");
        goto fail;
    }
    sqlite3_busy_timeout(c->db, 10000);
    if (!exec(c, schema_sql, error) || !exec(c, idset_sql, error))
        goto fail;
    for (int i = 0; i < Q_COUNT; i++) {
        if (sqlite3_prepare_v3(c->db, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &c->q[i], NULL) != SQLITE_OK) {
            db_error(c, error, "job cache");
            goto fail;
        }
    }
    if (!meta_get(c, "token", c->token, sizeof c->token)) {
        new_token(c->token);
        if (!meta_set(c, "token", c->token, error))
            goto fail;
    }
    c->seq = meta_get(c, "seq", buf, sizeof buf) ? strtoll(buf, NULL, 10) : -1;
    return c;
fail:
    sa_jobcache_close(c);
    return NULL;
}

void sa_jobcache_close(sa_jobcache_t *c)
{
    if (!c)
        return;
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(c->q[i]);
    sqlite3_close(c->db);
    free(c->path);
    free(c);
}

const char *sa_jobcache_token(const sa_jobcache_t *c)
{
    return c->token;
}

int64_t sa_jobcache_seq(const sa_jobcache_t *c)
{
    return c->seq;
}

bool sa_jobcache_reset(sa_jobcache_t *c, sa_error_t *error)
{
    if (!exec(c, "BEGIN IMMEDIATE; DELETE FROM rec; DELETE FROM job; DELETE FROM meta;", error))
        return false;
    new_token(c->token);
    c->seq = -1;
    if (!meta_set(c, "token", c->token, error)) {
        sa_jobcache_rollback(c);
        return false;
    }
    return exec(c, "COMMIT", error);
}

bool sa_jobcache_begin(sa_jobcache_t *c, sa_error_t *error)
{
    return exec(c, "BEGIN IMMEDIATE", error);
}

bool sa_jobcache_commit(sa_jobcache_t *c, sa_error_t *error)
{
    return exec(c, "COMMIT", error);
}

void sa_jobcache_rollback(sa_jobcache_t *c)
{
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Steps a statement that returns no row, then resets it. */
static bool step_done(sa_jobcache_t *c, sqlite3_stmt *st, sa_error_t *error)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || db_error(c, error, "job cache");
}

void sa_jobcache_key(const sa_job_t *rec, int *source, int64_t *submit, int64_t *start)
{
    bool pending = rec->state.base && strcmp(rec->state.base, "PENDING") == 0;
    *source = (int)rec->source;
    *submit = rec->submit == SA_UNSET ? 0 : rec->submit;
    *start = rec->start == SA_UNSET || (rec->source == SA_SRC_SQUEUE && pending) ? 0 : rec->start;
}

bool sa_jobcache_get_record(sa_jobcache_t *c, int64_t job_id, int source, int64_t submit, int64_t start,
                            uint64_t *digest)
{
    sqlite3_stmt *st = c->q[Q_GET_REC];
    bool found = false;
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int(st, 2, source);
    sqlite3_bind_int64(st, 3, submit);
    sqlite3_bind_int64(st, 4, start);
    if (sqlite3_step(st) == SQLITE_ROW) {
        *digest = (uint64_t)sqlite3_column_int64(st, 0);
        found = true;
    }
    sqlite3_reset(st);
    return found;
}

bool sa_jobcache_put_record(sa_jobcache_t *c, int64_t job_id, int source, int64_t submit, int64_t start,
                            uint64_t digest, sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_PUT_REC];
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int(st, 2, source);
    sqlite3_bind_int64(st, 3, submit);
    sqlite3_bind_int64(st, 4, start);
    sqlite3_bind_int64(st, 5, (int64_t)digest);
    return step_done(c, st, error);
}

int sa_jobcache_get_job(sa_jobcache_t *c, int64_t job_id, bool *live)
{
    sqlite3_stmt *st = c->q[Q_GET_JOB];
    int rc, found = 0;
    sqlite3_bind_int64(st, 1, job_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *live = sqlite3_column_int(st, 0) != 0;
        found = 1;
    } else if (rc != SQLITE_DONE) {
        found = -1;
    }
    sqlite3_reset(st);
    return found;
}

bool sa_jobcache_put_job(sa_jobcache_t *c, int64_t job_id, bool live, int64_t at, sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_PUT_JOB];
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int(st, 2, live ? 1 : 0);
    sqlite3_bind_int64(st, 3, at);
    return step_done(c, st, error);
}

bool sa_jobcache_forget_records(sa_jobcache_t *c, int64_t job_id, sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_FORGET];
    sqlite3_bind_int64(st, 1, job_id);
    return step_done(c, st, error);
}

/* The job ids a statement returns (its parameters bound), in order. */
static bool ids_of(sa_jobcache_t *c, sqlite3_stmt *st, int64_t **ids, size_t *n, sa_error_t *error)
{
    size_t cap = 1024;
    int rc;

    *n = 0;
    *ids = malloc(cap * sizeof **ids);
    if (!*ids) {
        sa_error_nomem(error);
        return false;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!SA_VEC_GROW(*ids, cap, *n, 1, 1024)) {
            sqlite3_reset(st);
            sa_error_nomem(error);
            return false;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE || db_error(c, error, "job cache");
}

bool sa_jobcache_live_ids(sa_jobcache_t *c, int64_t **ids, size_t *n, sa_error_t *error)
{
    return ids_of(c, c->q[Q_LIVE], ids, n, error);
}

bool sa_jobcache_idset_add(sa_jobcache_t *c, int set, const int64_t *ids, size_t n, size_t *present,
                           sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_IDSET_ADD];
    bool ok = true;

    if (!exec(c, "SAVEPOINT idset", error))
        return false;
    for (size_t i = 0; ok && i < n; i++) {
        sqlite3_bind_int(st, 1, set);
        sqlite3_bind_int64(st, 2, ids[i]);
        ok = sqlite3_step(st) == SQLITE_DONE || db_error(c, error, "job cache: a temporary table");
        if (ok && present && sqlite3_changes(c->db) == 0)
            (*present)++;
        sqlite3_reset(st);
    }
    if (!ok) {
        sqlite3_exec(c->db, "ROLLBACK TO idset; RELEASE idset", NULL, NULL, NULL);
        return false;
    }
    return exec(c, "RELEASE idset", error);
}

bool sa_jobcache_idset_clear(sa_jobcache_t *c, sa_error_t *error)
{
    return exec(c, "DELETE FROM temp.idset; DELETE FROM temp.span", error);
}

bool sa_jobcache_spans_add(sa_jobcache_t *c, const sa_jobcache_span_t *v, size_t n, sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_SPAN_ADD];
    bool ok = true;

    if (!exec(c, "SAVEPOINT span", error))
        return false;
    for (size_t i = 0; ok && i < n; i++) {
        sqlite3_bind_int64(st, 1, v[i].job_id);
        sqlite3_bind_int(st, 2, v[i].input);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)v[i].off);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)v[i].len);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)v[i].digest);
        ok = sqlite3_step(st) == SQLITE_DONE || db_error(c, error, "job cache: a temporary table");
        sqlite3_reset(st);
    }
    if (!ok) {
        sqlite3_exec(c->db, "ROLLBACK TO span; RELEASE span", NULL, NULL, NULL);
        return false;
    }
    return exec(c, "RELEASE span", error);
}

bool sa_jobcache_spans_drop(sa_jobcache_t *c, int input, sa_error_t *error)
{
    sqlite3_stmt *st = c->q[Q_SPAN_DROP];
    bool ok;
    sqlite3_bind_int(st, 1, input);
    ok = sqlite3_step(st) == SQLITE_DONE || db_error(c, error, "job cache: a temporary table");
    sqlite3_reset(st);
    return ok;
}

bool sa_jobcache_spans_each(sa_jobcache_t *c, bool (*fn)(const sa_jobcache_span_t *span, void *ctx, sa_error_t *error),
                            void *ctx, sa_error_t *error)
{
    /* read a page at a time, the statement reset before fn runs: fn writes to this cache */
    sqlite3_stmt *st = c->q[Q_SPAN_EACH];
    sa_jobcache_span_t page[1024], last = {INT64_MIN, INT_MIN, 0, 0, 0};
    size_t n;

    do {
        int rc = SQLITE_DONE;
        n = 0;
        sqlite3_bind_int64(st, 1, last.job_id);
        sqlite3_bind_int(st, 2, last.input);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)last.off);
        while (n < 1024 && (rc = sqlite3_step(st)) == SQLITE_ROW)
            page[n++] = (sa_jobcache_span_t){sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
                                             (uint64_t)sqlite3_column_int64(st, 2),
                                             (uint64_t)sqlite3_column_int64(st, 3),
                                             (uint64_t)sqlite3_column_int64(st, 4)};
        if (n < 1024 && rc != SQLITE_DONE) {
            db_error(c, error, "job cache: reading a temporary table");
            sqlite3_reset(st);
            return false;
        }
        sqlite3_reset(st);
        for (size_t i = 0; i < n; i++) {
            if (!fn(&page[i], ctx, error))
                return false;
        }
        if (n)
            last = page[n - 1];
    } while (n == 1024);
    return true;
}

bool sa_jobcache_vanished_ids(sa_jobcache_t *c, int set, int64_t **ids, size_t *n, sa_error_t *error)
{
    sqlite3_bind_int(c->q[Q_IDSET_VANISHED], 1, set);
    return ids_of(c, c->q[Q_IDSET_VANISHED], ids, n, error);
}

bool sa_jobcache_set_seq(sa_jobcache_t *c, int64_t seq, sa_error_t *error)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)seq);
    if (!meta_set(c, "seq", buf, error))
        return false;
    c->seq = seq;
    return true;
}

bool sa_jobcache_prune(sa_jobcache_t *c, int64_t before, size_t *pruned, sa_error_t *error)
{
    sqlite3_stmt *st;
    bool ok;

    if (sqlite3_prepare_v2(c->db,
                           "DELETE FROM rec WHERE job_id IN (SELECT job_id FROM job WHERE live = 0 AND touched < ?1)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(c, error, "job cache");
    sqlite3_bind_int64(st, 1, before);
    ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok)
        return db_error(c, error, "job cache");
    if (sqlite3_prepare_v2(c->db, "DELETE FROM job WHERE live = 0 AND touched < ?1", -1, &st, NULL) != SQLITE_OK)
        return db_error(c, error, "job cache");
    sqlite3_bind_int64(st, 1, before);
    ok = sqlite3_step(st) == SQLITE_DONE;
    if (pruned)
        *pruned = ok ? (size_t)sqlite3_changes(c->db) : 0;
    sqlite3_finalize(st);
    return ok || db_error(c, error, "job cache");
}
