/*
 * sa_runlog.c - the ingest runs of a cluster by UTC hour (sa_runlog.h).
 */
#include "sa_runlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_bson.h"
#include "sa_model.h"

int64_t sa_runlog_start(int64_t t)
{
    int64_t h = t / SA_RUNLOG_SPAN;
    if (t % SA_RUNLOG_SPAN < 0)
        h--;
    return h * SA_RUNLOG_SPAN;
}

char *sa_runlog_id(const char *cluster, int64_t t)
{
    size_t n = strlen(cluster) + 24;
    char *s;
    time_t tt = (time_t)sa_runlog_start(t);
    struct tm tm;

    if (!(s = malloc(n)))
        return NULL;
    if (!gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
        free(s);
        return NULL;
    }
    snprintf(s, n, "%s:%04d-%02d-%02dT%02d", cluster, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
    return s;
}

bool sa_runlog_id_is_day(const char *cluster, const char *id)
{
    size_t n = strlen(cluster);
    const char *d = id + n + 1;
    if (strncmp(id, cluster, n) != 0 || id[n] != ':' || strlen(d) != 10)
        return false;
    for (int i = 0; i < 10; i++) {
        if (i == 4 || i == 7 ? d[i] != '-' : d[i] < '0' || d[i] > '9')
            return false;
    }
    return true;
}

static bool in_list(const char *k, const char *const *names)
{
    for (; *names; names++) {
        if (strcmp(k, *names) == 0)
            return true;
    }
    return false;
}

/* Copies the members of the subdocument at it that names lists into {key: {...}}. */
static bool copy_sub(bson_t *entry, const char *key, const bson_iter_t *it, const char *const *names)
{
    bson_iter_t child;
    bson_t sub;
    bool ok = BSON_APPEND_DOCUMENT_BEGIN(entry, key, &sub);

    if (ok && BSON_ITER_HOLDS_DOCUMENT(it) && bson_iter_recurse(it, &child)) {
        while (ok && bson_iter_next(&child)) {
            if (in_list(bson_iter_key(&child), names))
                ok = bson_append_iter(&sub, NULL, 0, &child);
        }
    }
    return bson_append_document_end(entry, &sub) && ok;
}

bool sa_runlog_entry(const bson_t *run, bson_t *entry)
{
    /* what health (failed runs), the site (ingest.html) and the metrics read */
    static const char *const top[] = {"started_at", "finished_at", "ok", "error", NULL};
    static const char *const phases[] = {"lock",  "connect", "validator", "indexes",  "migrate", "rollups",
                                         "cache", "node_config", "capture", "exec", "parse",   "sqlite",
                                         "mongo", "land",    "backfill", "retype",   "prometheus", "finish",
                                         NULL};
    static const char *const counts[] = {"squeue_records", "sacct_records", "jobs_inserted", "jobs_changed",
                                         "write_statements", "docs_read", "records_set_aside", "inputs_rejected",
                                         NULL};
    bson_iter_t it;
    char key[25];
    bool ok, started = false;

    if (!bson_iter_init_find(&it, run, "_id"))
        return false;
    if (BSON_ITER_HOLDS_OID(&it))
        bson_oid_to_string(bson_iter_oid(&it), key);
    else if (!BSON_ITER_HOLDS_UTF8(&it) || strlen(bson_iter_utf8(&it, NULL)) >= sizeof key)
        return false;
    else
        snprintf(key, sizeof key, "%s", bson_iter_utf8(&it, NULL));
    ok = BSON_APPEND_UTF8(entry, "run", key) && bson_iter_init(&it, run);
    while (ok && bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (in_list(k, top)) {
            started = started || strcmp(k, "started_at") == 0;
            ok = bson_append_iter(entry, NULL, 0, &it);
        } else if (strcmp(k, "phases_ms") == 0) {
            ok = copy_sub(entry, k, &it, phases);
        } else if (strcmp(k, "counts") == 0) {
            ok = copy_sub(entry, k, &it, counts);
        }
    }
    return ok && started;
}

const char *sa_runlog_entry_key(const bson_t *entry, int64_t *started_at)
{
    bson_iter_t it;
    const char *key = NULL;

    *started_at = SA_UNSET;
    if (!bson_iter_init(&it, entry))
        return NULL;
    while (bson_iter_next(&it)) {
        if (strcmp(bson_iter_key(&it), "run") == 0)
            key = sa_bson_iter_str(&it, NULL);
        else if (strcmp(bson_iter_key(&it), "started_at") == 0)
            *started_at = sa_bson_iter_time(&it);
    }
    return key;
}
