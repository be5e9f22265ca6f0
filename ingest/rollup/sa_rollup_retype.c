/*
 * sa_rollup_retype.c - typing the runs whose untyped GPUs had no type when they were
 * ingested (sa_rollup_retype.h): the job documents the writer's untyped list names,
 * patched through the archive (which hands the changes to the writer: documents and
 * rollups move together).
 */
#include "sa_rollup_retype.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_bson.h"
#include "sa_jobview.h"
#include "sa_model.h"
#include "sa_tsdb.h"

typedef struct {
    sa_tsdb_t *db;
    const char *cluster;
    int64_t last;           /* the series' last snapshot (SA_UNSET: none) */
    size_t nfresh;          /* ids[0..nfresh) came from the untyped list, the others from the waiting list */
    const sa_strv_t *ids;
    bool *seen;             /* ids[i] has a document */
    sa_strv_t done, wait_add, wait_del;
    sa_jobview_t view;
} retype_t;

/* The index of id in ids. */
static size_t index_of(const sa_strv_t *ids, const char *id)
{
    for (size_t i = 0; i < ids->n; i++) {
        if (strcmp(ids->v[i], id) == 0)
            return i;
    }
    return ids->n;
}

/*
 * Types the runs of one job document whose untyped GPUs had no type (sa_tsdb_run_gpu_type
 * over the series as it is now): *changed the new document (NULL: nothing typed). A job
 * still in its first day stays in the untyped list; the others leave it, into the waiting
 * list while its nodes' GPUs are not known at all.
 */
static bool retype_doc(void *ctx, const char *id, const json_t *stored, json_t **changed, sa_error_t *error)
{
    retype_t *x = ctx;
    size_t at = index_of(x->ids, id);
    bool fresh = at < x->nfresh, pending = false, waiting = false, ok;
    bson_t b = BSON_INITIALIZER;

    *changed = NULL;
    if (at < x->ids->n)
        x->seen[at] = true;
    ok = sa_bson_from_json(stored, &b, error) && sa_jobview_read(&x->view, &b, error);
    for (size_t i = 0; ok && i < x->view.nruns; i++) {
        const sa_jobview_run_t *r = &x->view.runs[i];
        char *type = NULL;
        int source = 0;
        bool cfg_unknown = false;
        json_t *run;
        if (!sa_rollup_run_needs_type(r))
            continue;
        if (!(ok = sa_tsdb_run_gpu_type_later(x->db, x->cluster, r->nodes, r->start, r->end, &type, &source,
                                              &cfg_unknown, error)))
            break;
        if (!type) {
            pending = pending || x->last == SA_UNSET || x->last < r->start + 86400;
            waiting = waiting || cfg_unknown;
            continue;
        }
        if (!*changed && !(*changed = json_deep_copy(stored))) {
            free(type);
            ok = sa_error_nomem(error);
            break;
        }
        run = json_array_get(json_object_get(*changed, "runs"), i);
        json_object_set_new(run, "gpu_type", json_string(type));
        json_object_set_new(run, "gpu_type_source", json_string(sa_run_gpu_type_source_name(source)));
        free(type);
    }
    bson_destroy(&b);
    if (!ok || pending)
        return ok; /* still in its first day: stays in the untyped list (the flush keeps a re-typed one there) */
    ok = (!fresh || sa_strv_push(&x->done, id)) && sa_strv_push(waiting ? &x->wait_add : &x->wait_del, id);
    return ok || sa_error_nomem(error);
}

bool sa_rollup_retype(sa_archive_t *a, sa_rollup_writer_t *w, const char *sqlite_path, bool new_config,
                      size_t *retyped, sa_error_t *error)
{
    retype_t x;
    sa_strv_t ids, none;
    int64_t v;
    bool ok;

    *retyped = 0;
    memset(&x, 0, sizeof x);
    x.cluster = sa_rollup_writer_cluster(w);
    x.last = SA_UNSET;
    sa_strv_init(&ids);
    sa_strv_init(&none);
    sa_strv_init(&x.done);
    sa_strv_init(&x.wait_add);
    sa_strv_init(&x.wait_del);
    sa_jobview_init(&x.view);
    x.ids = &ids;
    /* the untyped list every run; the jobs waiting for their nodes' GPUs when this run brought some */
    ok = sa_rollup_untyped_list(w, false, &ids, &v, error);
    x.nfresh = ids.n;
    ok = ok && (!new_config || sa_rollup_untyped_list(w, true, &ids, &v, error));
    if (!ok || !ids.n || !sqlite_path || access(sqlite_path, F_OK) != 0)
        goto done; /* nothing to type, or nothing to type them with */
    /* read-write: an older schema is migrated (slurm-ingest writes the series), not refused */
    if (!(x.db = sa_tsdb_open(sqlite_path, false, 10000, error)) || !sa_tsdb_last_snapshot(x.db, x.cluster, &x.last, error)) {
        ok = false;
        goto done;
    }
    if (!(x.seen = calloc(ids.n, sizeof *x.seen))) {
        ok = sa_error_nomem(error);
        goto done;
    }
    ok = sa_archive_patch_jobs(a, x.cluster, ids.v, ids.n, retype_doc, &x, retyped, NULL, error);
    for (size_t i = 0; ok && i < ids.n; i++) { /* gone (or superseded): out of its list */
        if (!x.seen[i])
            ok = sa_strv_push(i < x.nfresh ? &x.done : &x.wait_del, ids.v[i]) || sa_error_nomem(error);
    }
    ok = ok && sa_rollup_untyped_update(w, false, &none, &x.done, error) &&
         ((!x.wait_add.n && !x.wait_del.n) || sa_rollup_untyped_update(w, true, &x.wait_add, &x.wait_del, error));
done:
    sa_tsdb_close(x.db);
    free(x.seen);
    sa_jobview_clear(&x.view);
    sa_strv_clear(&ids);
    sa_strv_clear(&none);
    sa_strv_clear(&x.done);
    sa_strv_clear(&x.wait_add);
    sa_strv_clear(&x.wait_del);
    return ok;
}
