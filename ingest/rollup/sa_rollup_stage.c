/*
 * sa_rollup_stage.c - the rollup writer's state and its staging (sa_rollup_writer_private.h):
 * a job document's contribution before and after, put into the rollup documents they touch.
 * Nothing here reads or writes the store.
 */
#include "sa_rollup_writer_private.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sa_vec.h"

#define WRITER_STALE 3600 /* a flush or batch of another host's writer older than this is a dead writer's */

sa_rollup_writer_t *sa_rollup_writer_new(sa_docstore_t *store, const char *hosts, const char *cluster)
{
    sa_rollup_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->store = store;
    w->hosts = strdup(hosts ? hosts : "");
    w->cluster = strdup(cluster);
    w->as_of = SA_UNSET;
    w->pid = (int64_t)getpid();
    sa_rollup_proc(w->pid, w->proc, sizeof w->proc);
    sa_strv_init(&w->untyped_add);
    sa_strv_init(&w->untyped_del);
    sa_jobview_init(&w->view);
    sa_rollup_contrib_init(&w->oldc);
    sa_rollup_contrib_init(&w->newc);
    if (!w->hosts || !w->cluster) {
        sa_rollup_writer_free(w);
        return NULL;
    }
    return w;
}

bool sa_rollup_writer_note(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error)
{
    int64_t month;
    size_t i;

    if (!sa_rollup_kind_dated(k->kind))
        return true;
    month = sa_rollup_month(k->day);
    for (i = 0; i < w->nmarks && w->marks[i].month != month; i++)
        ;
    if (i == w->nmarks) {
        if (!SA_VEC_GROW(w->marks, w->markcap, w->nmarks, 1, 4))
            return sa_error_nomem(error);
        memset(&w->marks[i], 0, sizeof w->marks[i]);
        w->marks[i].month = month;
        w->nmarks++;
    }
    sa_rollup_parts_set(&w->marks[i].p, k->kind, k->day, k->part);
    return true;
}

void sa_rollup_staged_clear(sa_rollup_writer_t *w)
{
    for (size_t i = 0; i < w->nstaged; i++)
        sa_rollup_doc_clear(&w->staged[i].d);
    w->nstaged = 0;
    w->staged_jobs = 0;
    w->nmarks = 0;
}

void sa_rollup_writer_free(sa_rollup_writer_t *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->njn; i++) {
        free(w->jn[i].id);
        sa_strv_clear(&w->jn[i].docs);
    }
    free(w->jn);
    for (size_t i = 0; i < w->nnonces; i++)
        free(w->nonces[i]);
    free(w->nonces);
    sa_strv_clear(&w->untyped_add);
    sa_strv_clear(&w->untyped_del);
    sa_rollup_staged_clear(w);
    free(w->staged);
    free(w->marks);
    sa_jobview_clear(&w->view);
    sa_rollup_contrib_clear(&w->oldc);
    sa_rollup_contrib_clear(&w->newc);
    free(w->hosts);
    free(w->cluster);
    free(w);
}

const sa_rollup_writer_stats_t *sa_rollup_writer_stats(const sa_rollup_writer_t *w)
{
    return &w->stats;
}

const char *sa_rollup_writer_cluster(const sa_rollup_writer_t *w)
{
    return w->cluster;
}

void sa_rollup_host(char *host, size_t n)
{
    host[0] = '\0';
    gethostname(host, n - 1);
    host[n - 1] = '\0';
    for (char *p = host; *p; p++) { /* a field name: no dots, no $ */
        if (*p == '.' || *p == '$')
            *p = '_';
    }
}

bool sa_rollup_proc(int64_t pid, char *buf, size_t n)
{
    char path[64], stat[1024], boot[64] = "", *p;
    unsigned long long start = 0;
    FILE *f;
    size_t len;

    buf[0] = '\0';
    if ((f = fopen("/proc/sys/kernel/random/boot_id", "re"))) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        fclose(f);
    }
    boot[strcspn(boot, "\n")] = '\0';
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    if (!boot[0] || !(f = fopen(path, "re")))
        return false;
    len = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[len] = '\0';
    /* pid (comm) state ppid ...: field 22 is the start time; comm may hold spaces and ')' */
    if (!(p = strrchr(stat, ')')))
        return false;
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%llu", &start) != 1)
        return false;
    snprintf(buf, n, "%s/%llu", boot, start);
    return true;
}

bool sa_rollup_writer_dead(const sa_rollup_writer_t *w, const char *host, int64_t pid, const char *proc,
                           int64_t at)
{
    char me[64], now[96];
    sa_rollup_host(me, sizeof me);
    if (host && strcmp(host, me) == 0 && pid > 0) {
        if (proc && proc[0] && w->proc[0]) /* this host says which process a pid is: compare */
            return !sa_rollup_proc(pid, now, sizeof now) || strcmp(now, proc) != 0;
        return pid == w->pid ? false : kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    }
    return at != SA_UNSET && at < (int64_t)time(NULL) - WRITER_STALE;
}

void sa_rollup_writer_claim_pid(sa_rollup_writer_t *w, int64_t pid)
{
    w->pid = pid;
    sa_rollup_proc(pid, w->proc, sizeof w->proc);
}

char *sa_rollup_writer_doc_id(const sa_rollup_writer_t *w, sa_rollup_kind_t kind)
{
    sa_rollup_key_t k = sa_rollup_key(w->cluster, kind, 0, 0);
    return sa_rollup_key_id(&k);
}

sa_rollup_staged_t *sa_rollup_writer_staged(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error)
{
    char *id = sa_rollup_key_id(k);
    bool found;
    size_t pos;

    if (!id) {
        sa_error_nomem(error);
        return NULL;
    }
    pos = sa_rollup_find(w->staged, w->nstaged, sizeof *w->staged, id, &found);
    free(id);
    if (found)
        return &w->staged[pos];
    if (!SA_VEC_GROW(w->staged, w->stagedcap, w->nstaged, 1, 8)) {
        sa_error_nomem(error);
        return NULL;
    }
    memmove(&w->staged[pos + 1], &w->staged[pos], (w->nstaged - pos) * sizeof *w->staged);
    memset(&w->staged[pos], 0, sizeof *w->staged);
    if (!sa_rollup_doc_new(&w->staged[pos].d, k, error)) {
        memmove(&w->staged[pos], &w->staged[pos + 1], (w->nstaged - pos) * sizeof *w->staged);
        return NULL;
    }
    if (!sa_rollup_writer_note(w, k, error)) {
        sa_rollup_doc_clear(&w->staged[pos].d);
        memmove(&w->staged[pos], &w->staged[pos + 1], (w->nstaged - pos) * sizeof *w->staged);
        return NULL;
    }
    w->nstaged++;
    return &w->staged[pos];
}

/* The contribution of a job document (none when doc is NULL or not of this cluster). */
static bool contrib(sa_rollup_writer_t *w, const bson_t *doc, sa_rollup_contrib_t *c, sa_error_t *error)
{
    c->ndocs = 0;
    if (!doc)
        return true;
    if (!sa_jobview_read(&w->view, doc, error))
        return false;
    if (!w->view.cluster || strcmp(w->view.cluster, w->cluster) != 0)
        return true;
    return sa_rollup_contrib_of(c, &w->view, error);
}

/* ---- staging ------------------------------------------------------------------------------------ */


bool sa_rollup_run_needs_type(const sa_jobview_run_t *r)
{
    int64_t typed = 0, untyped = 0;
    if (r->start == SA_UNSET || r->gpus <= 0 || !r->nodes || r->gpu_type_source == SA_RUN_GPU_TYPE_NODE ||
        r->gpu_type_source == SA_RUN_GPU_TYPE_CARRIED)
        return false;
    for (size_t k = 0; k < r->ngpu_types; k++) {
        if (r->gpu_types[k].type && r->gpu_types[k].type[0])
            typed += r->gpu_types[k].count;
        else
            untyped += r->gpu_types[k].count;
    }
    return untyped > 0 || r->gpus > typed + untyped;
}

bool sa_rollup_needs_type(const sa_jobview_t *j)
{
    for (size_t i = 0; i < j->nruns; i++) {
        if (sa_rollup_run_needs_type(&j->runs[i]))
            return true;
    }
    return false;
}

/* The _ids of the documents c adds to, for job document id (appended to ids). */
static bool contrib_ids(const sa_rollup_writer_t *w, const sa_rollup_contrib_t *c, const char *id, sa_strv_t *ids,
                        sa_error_t *error)
{
    int part = sa_rollup_part_of(id);
    for (size_t i = 0; i < c->ndocs; i++) {
        sa_rollup_key_t k = sa_rollup_key(w->cluster, c->docs[i].kind, c->docs[i].day, part);
        char *did = sa_rollup_key_id(&k);
        bool ok = did && (sa_strv_contains(ids, did) || sa_strv_push(ids, did));
        free(did);
        if (!ok)
            return sa_error_nomem(error);
    }
    return true;
}

bool sa_rollup_change_ids(sa_rollup_writer_t *w, const sa_archive_change_t *ch, sa_strv_t *ids, sa_error_t *error)
{
    if (!contrib(w, ch->before, &w->oldc, error) || !contrib_ids(w, &w->oldc, ch->id, ids, error))
        return false;
    if (ch->with_open) {
        static const sa_rollup_kind_t kinds[2] = {SA_ROLLUP_K_OPEN, SA_ROLLUP_K_LIVE};
        for (int i = 0; i < 2; i++) {
            sa_rollup_key_t k = sa_rollup_key(w->cluster, kinds[i], 0, sa_rollup_part_of(ch->id));
            char *did;
            bool ok;
            if (kinds[i] == SA_ROLLUP_K_LIVE && !sa_rollup_is_jobs_id(w->cluster, ch->id))
                continue; /* a superseded document is in no live list */
            did = sa_rollup_key_id(&k);
            ok = did && (sa_strv_contains(ids, did) || sa_strv_push(ids, did));
            free(did);
            if (!ok)
                return sa_error_nomem(error);
        }
    }
    return true;
}

bool sa_rollup_writer_stage_one(sa_rollup_writer_t *w, const char *id, int64_t v, const sa_strv_t *old_ids,
                                const bson_t *new_doc, sa_error_t *error)
{
    int part = sa_rollup_part_of(id);
    bool needs;

    if (!contrib(w, new_doc, &w->newc, error))
        return false;
    needs = new_doc && w->view.cluster && strcmp(w->view.cluster, w->cluster) == 0 && sa_rollup_needs_type(&w->view);
    if (!sa_strv_push(needs ? &w->untyped_add : &w->untyped_del, id))
        return sa_error_nomem(error);
    w->stats.staged++;
    w->staged_jobs++;
    for (size_t i = 0; i < w->newc.ndocs; i++) {
        sa_rollup_key_t k = sa_rollup_key(w->cluster, w->newc.docs[i].kind, w->newc.docs[i].day, part);
        sa_rollup_staged_t *s = sa_rollup_writer_staged(w, &k, error);
        if (!s || !sa_rollup_doc_put(&s->d, id, v, &w->newc, error))
            return false;
    }
    for (size_t i = 0; old_ids && i < old_ids->n; i++) {
        sa_rollup_key_t k;
        sa_rollup_staged_t *s;
        if (!sa_rollup_key_parse(w->cluster, old_ids->v[i], &k) || k.kind > SA_ROLLUP_K_LIVE ||
            k.kind == SA_ROLLUP_K_ROWS)
            continue; /* not a document members are in */
        k.part = part;
        if (sa_rollup_contrib_find(&w->newc, k.kind, k.day))
            continue; /* put above */
        if (!(s = sa_rollup_writer_staged(w, &k, error)) || !sa_rollup_doc_put(&s->d, id, v, NULL, error))
            return false;
    }
    return true;
}

