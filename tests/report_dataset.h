/*
 * report_dataset.h - the dataset of slurm-report's tests (test_report, test_report_html):
 * fixtures/report-dataset.json ingested through the real ingest code into a fresh
 * MongoDB database and SQLite file. Static functions: included by each test program.
 */
#ifndef REPORT_DATASET_H
#define REPORT_DATASET_H

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_archive.h"
#include "sa_ingest.h"
#include "sa_rollup_rebuild.h"
#include "sa_rollup_writer.h"
#include "sa_rutil.h"
#include "testutil.h"


static __attribute__((unused)) int64_t rd_iso(const char *s)
{
    int64_t t;
    if (!sa_rtime_parse(s, &t))
        fail_msg("bad time %s", s);
    return t;
}

static __attribute__((unused)) char *rd_fixture(const char *rel)
{
    return sa_rprintf("%s/%s", SA_FIXTURES_DIR, rel);
}

/* Ingests fixtures/report-dataset.json into database db and sqlite_file; returns the dataset's "now". */
static int64_t rd_load_dataset(const char *mongo_uri, const char *db, const char *sqlite_file)
{
    char *path = rd_fixture("report-dataset.json");
    json_error_t jerr;
    json_t *ds = json_load_file(path, 0, &jerr), *s, *r;
    sa_error_t err;
    char *note = NULL;
    sa_archive_t *a;
    size_t i;

    if (!ds)
        fail_msg("%s: %s", path, jerr.text);
    a = sa_archive_open(mongo_uri, db, &note, &err);
    if (!a)
        fail_msg("sa_archive_open: %s", err.message);
    free(note);
    int64_t now = rd_iso(json_string_value(json_object_get(ds, "now")));
    json_array_foreach(json_object_get(ds, "snapshots"), i, s) {
        static const char *const keys[SA_IN_COUNT] = {"sinfo", "squeue", "sacct", "sdiag"};
        int64_t at = rd_iso(json_string_value(json_object_get(s, "at")));
        json_int_t count = json_is_integer(json_object_get(s, "count")) ? json_integer_value(json_object_get(s, "count")) : 1;
        json_int_t every = json_integer_value(json_object_get(s, "every"));
        char *files[SA_IN_COUNT] = {NULL};
        for (int k = 0; k < SA_IN_COUNT; k++) {
            const char *f = json_string_value(json_object_get(s, keys[k]));
            if (f)
                files[k] = rd_fixture(f);
        }
        for (json_int_t n = 0; n < count; n++) {
            sa_snapshot_t snap;
            sa_ingest_env_t env;
            sa_ingest_outcome_t out;
            sa_ingest_stats_t st;
            size_t built = 0;
            sa_rollup_writer_t *w;
            memset(&snap, 0, sizeof snap);
            memset(&env, 0, sizeof env);
            env.archive = a;
            env.sqlite_path = sqlite_file;
            snap.cluster = json_string_value(json_object_get(s, "cluster"));
            /* as every slurm-ingest run does first: the cluster's rollups are kept from here on */
            if (!(w = sa_rollup_attach(a, snap.cluster, &err)) || !sa_rollup_init(a, w, &built, &err))
                fail_msg("rollups of %s: %s", snap.cluster, err.message);
            if (!sa_archive_ingest_days_init(a, snap.cluster, &built, &err))
                fail_msg("ingest days of %s: %s", snap.cluster, err.message);
            snap.at = at + (int64_t)(n * every);
            for (int k = 0; k < SA_IN_COUNT; k++)
                snap.files[k] = files[k];
            sa_ingest_stats_init(&st);
            if (!sa_ingest_snapshot(&env, &snap, &st, &out, &err))
                fail_msg("ingest %s at %lld: %s", snap.cluster, (long long)snap.at, err.message);
            if (out.rejected)
                fail_msg("ingest %s at %lld: %s", snap.cluster, (long long)snap.at, out.why.message);
            sa_ingest_stats_clear(&st);
            sa_rollup_detach(a, w);
        }
        for (int k = 0; k < SA_IN_COUNT; k++)
            free(files[k]);
    }
    json_array_foreach(json_object_get(ds, "ingest_runs"), i, r) {
        json_t *run = json_deep_copy(r);
        json_object_set_new(run, "started_at", json_integer(rd_iso(json_string_value(json_object_get(r, "started_at")))));
        json_object_set_new(run, "finished_at", json_integer(rd_iso(json_string_value(json_object_get(r, "finished_at")))));
        if (!sa_archive_record_run(a, run, &err))
            fail_msg("record_run: %s", err.message);
        json_decref(run);
    }
    sa_archive_close(a);
    json_decref(ds);
    free(path);
    return now;
}

/*
 * A fresh SQLite path from tmpl ("/tmp/NAME-XXXXXX", at most 63 bytes) with the dataset
 * ingested into it and db: the group setup of a test program. Returns the dataset's "now".
 */
static __attribute__((unused)) int64_t rd_setup(const char *mongo_uri, const char *db, char path[64], const char *tmpl)
{
    int fd;
    snprintf(path, 64, "%s", tmpl);
    fd = mkstemp(path);
    if (fd < 0)
        fail_msg("mkstemp %s failed", tmpl);
    close(fd);
    unlink(path); /* sa_tsdb_open creates it */
    return rd_load_dataset(mongo_uri, db, path);
}

/* Removes the SQLite file path and its -wal and -shm sides. */
static __attribute__((unused)) void rd_remove_sqlite(const char *path)
{
    char side[96];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

#endif
