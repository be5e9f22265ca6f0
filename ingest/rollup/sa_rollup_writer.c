/*
 * sa_rollup_writer.c - the rollup writer (sa_rollup_writer.h): what the archive's hook
 * does, the flush, the recovery. Built on sa_rollup_stage.c (the state and staging),
 * sa_rollup_commit.c (a flush's commit: sa_rollup.h's "Commits"), sa_rollup_journal.c and
 * sa_rollup_untyped.c.
 */
#include "sa_rollup_writer_private.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#define WHOLE_FLUSH_DOCS 64 /* whole documents (the rebuild) staged before a flush */


bool sa_rollup_writer_stage(sa_rollup_writer_t *w, const sa_archive_change_t *changes, size_t n, sa_error_t *error)
{
    sa_strv_t ids;
    bool ok = true;

    sa_strv_init(&ids);
    for (size_t i = 0; ok && i < n; i++) {
        sa_strv_clear(&ids);
        ok = sa_rollup_change_ids(w, &changes[i], &ids, error) &&
             sa_rollup_writer_stage_one(w, changes[i].id, changes[i].v, &ids, changes[i].after, error);
    }
    sa_strv_clear(&ids);
    return ok && (w->staged_jobs < SA_ROLLUP_FLUSH_JOBS || sa_rollup_writer_flush(w, error));
}

bool sa_rollup_writer_replace(sa_rollup_writer_t *w, const sa_rollup_doc_t *d, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_doc_key(d);
    sa_rollup_staged_t *s = sa_rollup_writer_staged(w, &k, error);
    if (!s)
        return false;
    sa_rollup_doc_clear(&s->d);
    if (!sa_rollup_doc_new(&s->d, &k, error) || !sa_rollup_doc_merge(&s->d, d, error))
        return false;
    s->whole = true;
    s->remove = false;
    return w->nstaged < WHOLE_FLUSH_DOCS || sa_rollup_writer_flush(w, error);
}

bool sa_rollup_writer_remove(sa_rollup_writer_t *w, const sa_rollup_key_t *k, sa_error_t *error)
{
    sa_rollup_staged_t *s = sa_rollup_writer_staged(w, k, error);
    if (!s)
        return false;
    s->whole = s->remove = true;
    return w->nstaged < WHOLE_FLUSH_DOCS || sa_rollup_writer_flush(w, error);
}


/* ---- flushing ----------------------------------------------------------------------------------- */

bool sa_rollup_writer_flush(sa_rollup_writer_t *w, sa_error_t *error)
{
    if (w->nstaged || w->nmarks || w->untyped_add.n || w->untyped_del.n || w->as_of_new) {
        if (!sa_rollup_commit_staged(w, error))
            return false;
    }
    return sa_rollup_journal_done(w, error);
}

void sa_rollup_writer_settle(sa_rollup_writer_t *w, int seconds)
{
    w->settle_s = seconds > 0 ? seconds : 0;
}

bool sa_rollup_writer_recover(sa_rollup_writer_t *w, size_t *jobs, sa_error_t *error)
{
    sa_rollup_commit_t c;
    sa_strv_t dead;
    size_t n = 0;
    bool ok;

    sa_rollup_commit_init(&c);
    sa_strv_init(&dead);
    if (w->settle_s && !sa_rollup_journal_dead(w, &dead, error)) {
        sa_strv_clear(&dead);
        return false;
    }
    if (dead.n) { /* its last writes may still be in flight on the server: they land first */
        struct timespec t = {w->settle_s, 0};
        while (nanosleep(&t, &t) != 0 && errno == EINTR)
            ;
        sa_strv_clear(&dead); /* empty again, for the restage below */
    }
    /* a flush that died before its commit: its documents back to the versions before it */
    ok = sa_rollup_writer_commit_read(w, &c, error);
    if (ok && c.intent_seq > c.seq &&
        sa_rollup_writer_dead(w, c.intent_host, c.intent_pid, c.intent_proc, c.intent_at))
        ok = sa_rollup_revert(w, &c, error);
    /* the jobs of batches never flushed: staged again, committed, then the batches go */
    ok = ok && sa_rollup_journal_restage(w, &dead, &n, error) &&
         (!dead.n || (sa_rollup_writer_flush(w, error) && sa_rollup_journal_drop(w, &dead, error)));
    sa_rollup_commit_clear(&c);
    sa_strv_clear(&dead);
    if (jobs)
        *jobs = n;
    return ok;
}

bool sa_rollup_writer_parts_ready(sa_rollup_writer_t *w, sa_error_t *error)
{
    w->parts_ready = true;
    w->as_of_new = true; /* a commit, even with nothing else to say */
    return sa_rollup_writer_flush(w, error);
}

bool sa_rollup_writer_as_of(sa_rollup_writer_t *w, int64_t t, sa_error_t *error)
{
    if (t == SA_UNSET || (w->as_of != SA_UNSET && t <= w->as_of))
        return true;
    w->as_of = t;
    w->as_of_new = true;
    return w->nstaged || sa_rollup_writer_flush(w, error);
}

/* ---- the archive's hook --------------------------------------------------------------------------- */

static bool on_archive(void *ctx, sa_archive_event_t ev, const sa_archive_change_t *changes, size_t n, int64_t at,
                       sa_error_t *error)
{
    sa_rollup_writer_t *w = ctx;
    switch (ev) {
    case SA_ARCHIVE_BEFORE: return sa_rollup_writer_journal(w, changes, n, error);
    case SA_ARCHIVE_AFTER: return sa_rollup_writer_stage(w, changes, n, error);
    case SA_ARCHIVE_FLUSH: return sa_rollup_writer_flush(w, error);
    case SA_ARCHIVE_AS_OF: return sa_rollup_writer_as_of(w, at, error) && sa_rollup_writer_flush(w, error);
    }
    return true;
}

sa_archive_hook_t sa_rollup_writer_hook(sa_rollup_writer_t *w)
{
    return (sa_archive_hook_t){on_archive, w};
}

sa_rollup_writer_t *sa_rollup_attach(sa_archive_t *a, const char *cluster, sa_error_t *error)
{
    sa_rollup_writer_t *w = sa_rollup_writer_new(sa_archive_store(a), sa_archive_hosts(a), cluster);
    if (!w) {
        sa_error_nomem(error);
        return NULL;
    }
    sa_archive_set_hook(a, sa_rollup_writer_hook(w));
    return w;
}

void sa_rollup_detach(sa_archive_t *a, sa_rollup_writer_t *w)
{
    if (a)
        sa_archive_set_hook(a, (sa_archive_hook_t){NULL, NULL});
    sa_rollup_writer_free(w);
}
