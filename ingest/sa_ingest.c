/*
 * sa_ingest.c - one snapshot: parse, set aside, time series, jobs (see sa_ingest.h).
 */
#define _GNU_SOURCE /* asprintf */
#include "sa_vec.h"
#include "sa_ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sa_bson.h"
#include "sa_docstore.h"
#include "sa_fsutil.h"
#include "sa_notes.h"
#include "sa_json_memo.h"
#include "sa_log.h"
#include "sa_sdiag.h"
#include "sa_flatspool.h"
#include "sa_tsdb.h"

#define JOB_BATCH 500          /* records per archive batch */
#define KEEP_DEFAULT 2000      /* changed records held at once; past that, where they are (spans_t) */
#define IDS_SPILL 4096         /* ids or spans held in memory before they go to the job cache's temporary table */
#define UNSURE_BATCH 1000      /* a backfill's skipped records whose documents are looked for at once */
#define SET_LISTED 0           /* the cache's id set: squeue's listing */
#define ASIDE_MAX (64u << 20)  /* raw bytes of set-aside records kept per input */
#define ASIDE_MEM (1u << 20)   /* of which held in memory; the rest in a temporary file */
#define ASIDE_LOG_MAX 10       /* set-aside records logged one by one per input */
#define SDIAG_MAX (64u << 20)

const char *sa_input_kind_name(sa_input_kind_t k)
{
    static const char *const names[] = {"sinfo", "squeue", "sacct", "sdiag"};
    return k < SA_IN_COUNT ? names[k] : "?";
}

void sa_ingest_stats_init(sa_ingest_stats_t *st)
{
    memset(st, 0, sizeof *st);
    sa_strv_init(&st->warnings);
}

void sa_ingest_stats_clear(sa_ingest_stats_t *st)
{
    if (!st)
        return;
    free(st->slurm_release);
    free(st->data_parser);
    sa_strv_clear(&st->warnings);
    memset(st, 0, sizeof *st);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- small growable vectors -------------------------------------------------------- */

typedef struct {
    sa_job_t **v;
    size_t n, cap;
} jobvec_t;

typedef struct {
    int64_t *v;
    size_t n, cap;
} idvec_t;


static bool ids_push(idvec_t *ids, int64_t id)
{
    if (!SA_VEC_GROW(ids->v, ids->cap, ids->n, 1, 256))
        return false;
    ids->v[ids->n++] = id;
    return true;
}

static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts and removes duplicates. */
static void ids_sort_unique(idvec_t *ids)
{
    size_t k = 0;
    if (ids->n > 1)
        qsort(ids->v, ids->n, sizeof *ids->v, id_cmp);
    for (size_t i = 0; i < ids->n; i++) {
        if (k == 0 || ids->v[k - 1] != ids->v[i])
            ids->v[k++] = ids->v[i];
    }
    ids->n = k;
}

/*
 * A set of job ids: in memory, or, past IDS_SPILL with a job cache, in the cache's
 * temporary table (sa_jobcache_idset_add), so that a run holds a bounded part of a queue
 * of any size.
 */
typedef struct {
    idvec_t mem;
    size_t spill;         /* ids held before they go to the cache */
    sa_jobcache_t *cache; /* NULL: all in memory */
    int set;              /* its number in the cache */
    bool spilled;         /* in the cache (and mem holds what is not yet there) */
} idset_t;

static bool idset_spill(idset_t *s, sa_error_t *error)
{
    if (s->mem.n && !sa_jobcache_idset_add(s->cache, s->set, s->mem.v, s->mem.n, NULL, error))
        return false;
    s->mem.n = 0;
    s->spilled = true;
    return true;
}

static bool idset_add(idset_t *s, int64_t id, sa_error_t *error)
{
    if (!ids_push(&s->mem, id))
        return sa_error_nomem(error);
    return !s->cache || s->mem.n < s->spill || idset_spill(s, error);
}

/* Ends the adding: sorted and unique in memory, or all of it in the cache. */
static bool idset_done(idset_t *s, sa_error_t *error)
{
    if (s->spilled)
        return idset_spill(s, error);
    ids_sort_unique(&s->mem);
    return true;
}

/*
 * Where a snapshot's changed job records are in its inputs (sa_span_t, with the digest of
 * the record read there): in memory, or, past `spill` with a job cache, in the cache's
 * temporary table. When an input changes more records than keep_records, they are read
 * again from there in job id order (write_spans): squeue's and sacct's records of a job
 * together, each job written once, and memory bounded by a batch at any size.
 */
typedef struct {
    sa_jobcache_span_t *v;
    size_t n, cap, spill;
    sa_jobcache_t *cache; /* NULL: all in memory */
    bool spilled;
} spans_t;

static bool spans_add(spans_t *s, const sa_jobcache_span_t *row, sa_error_t *error)
{
    if (!SA_VEC_GROW(s->v, s->cap, s->n, 1, 256))
        return sa_error_nomem(error);
    s->v[s->n++] = *row;
    if (s->cache && s->n >= s->spill) {
        if (!sa_jobcache_spans_add(s->cache, s->v, s->n, error))
            return false;
        s->n = 0;
        s->spilled = true;
    }
    return true;
}

/* Forgets the spans of an input that was refused whole. */
static bool spans_drop(spans_t *s, int input, sa_error_t *error)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].input != input)
            s->v[k++] = s->v[i];
    }
    s->n = k;
    return !s->spilled || sa_jobcache_spans_drop(s->cache, input, error);
}

static int span_cmp(const void *a, const void *b)
{
    const sa_jobcache_span_t *x = a, *y = b;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    if (x->input != y->input)
        return x->input < y->input ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Hands every span to fn in job id order (then input, then offset). */
static bool spans_each(spans_t *s, bool (*fn)(const sa_jobcache_span_t *, void *, sa_error_t *), void *ctx,
                       sa_error_t *error)
{
    if (s->spilled) {
        if (s->n && !sa_jobcache_spans_add(s->cache, s->v, s->n, error))
            return false;
        s->n = 0;
        return sa_jobcache_spans_each(s->cache, fn, ctx, error);
    }
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, span_cmp);
    for (size_t i = 0; i < s->n; i++) {
        if (!fn(&s->v[i], ctx, error))
            return false;
    }
    return true;
}

/*
 * A limit above, or in slurm-ingest-faults only the environment variable `name` (so that
 * a test takes the paths of a large queue with a small one: SA_KEEP_RECORDS, SA_IDS_SPILL).
 */
static size_t limit(const char *name, size_t dflt)
{
#ifdef SA_FAULT_INJECTION
    const char *v = getenv(name);
    if (v && *v >= '1' && *v <= '9')
        return (size_t)strtoull(v, NULL, 10);
#else
    (void)name;
#endif
    return dflt;
}

static bool jobs_push(jobvec_t *jv, sa_job_t *job)
{
    if (!SA_VEC_GROW(jv->v, jv->cap, jv->n, 1, 256))
        return false;
    if (!(jv->v[jv->n] = sa_job_steal(job)))
        return false;
    jv->n++;
    return true;
}

static void jobs_clear(jobvec_t *jv)
{
    for (size_t i = 0; i < jv->n; i++)
        sa_job_destroy(jv->v[i]);
    free(jv->v);
    memset(jv, 0, sizeof *jv);
}

/* Moves every record of from to the end of to, leaving from empty; false when out of memory (nothing moved). */
static bool jobs_move(jobvec_t *to, jobvec_t *from)
{
    if (!from->n)
        return true;
    if (!SA_VEC_GROW(to->v, to->cap, to->n, from->n, 256))
        return false;
    memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
    to->n += from->n;
    from->n = 0;
    return true;
}

/* ---- records set aside ---------------------------------------------------------------- */

typedef struct {
    /* what is kept (only with a set-aside directory): a "### why" line, then the raw record
     * (up to ASIDE_MAX bytes of records in all); in memory up to ASIDE_MEM, the rest in spill */
    sa_buf_t text;
    const char *dir;   /* the set-aside directory; NULL: records are counted and logged only */
    size_t bytes;      /* raw record bytes kept */
    size_t mem;        /* bytes held in memory before they go to spill (ASIDE_MEM) */
    int spill;         /* when spilled: an unlinked temporary file in dir */
    bool spilled;
    size_t count, repaired, logged;
    const char *input; /* its file, for log lines */
} aside_t;

/* The temporary file's failure (errno). */
static bool aside_io_error(const aside_t *a, sa_error_t *error)
{
    sa_error_set(error, SA_ERR_IO, errno, "%s: a temporary file: %s", a->dir, strerror(errno));
    return false;
}

/* Writes n bytes to the temporary file. */
static bool aside_write(aside_t *a, const char *p, size_t n, sa_error_t *error)
{
    return sa_write_all(a->spill, p, n) || aside_io_error(a, error);
}

/* Moves what is in memory to the temporary file (made the first time: unlinked at once, so
 * that a killed run leaves nothing). */
static bool aside_spill(aside_t *a, sa_error_t *error)
{
    if (!a->spilled) {
        char *tmp = NULL;
        if (!sa_private_dir(a->dir, "set-aside directory", error))
            return false;
        if (asprintf(&tmp, "%s/.set-aside-XXXXXX", a->dir) < 0)
            return sa_error_nomem(error);
        a->spill = mkostemp(tmp, O_CLOEXEC);
        if (a->spill >= 0)
            unlink(tmp);
        free(tmp);
        if (a->spill < 0)
            return aside_io_error(a, error);
        a->spilled = true;
    }
    if (a->text.len && !aside_write(a, a->text.data, a->text.len, error))
        return false;
    a->text.len = 0;
    return true;
}

static bool aside_append(aside_t *a, const char *p, size_t n, sa_error_t *error)
{
    if (!a->dir)
        return true;
    if (!a->text.cap)
        sa_buf_init(&a->text, SIZE_MAX);
    if (a->text.len + n > a->mem && !aside_spill(a, error))
        return false;
    if (n > a->mem)
        return aside_write(a, p, n, error); /* one record larger than the memory share: straight to the file */
    return sa_buf_append(&a->text, p, n) || sa_error_nomem(error);
}

/* The parsers' set-aside callback: logs, counts and keeps the raw text. */
static bool aside_add(aside_t *a, const char *raw, size_t len, const char *why, bool kept, sa_error_t *error)
{
    char head[640];
    int hn;
    if (kept)
        a->repaired++;
    else
        a->count++;
    if (a->logged++ < ASIDE_LOG_MAX)
        sa_log(SA_LOG_WARN, "%s: %s: %s", a->input, why, kept ? "repaired and kept" : "record set aside");
    hn = snprintf(head, sizeof head, "### %s: %s (%zu bytes)\n", kept ? "repaired" : "set aside", why, len);
    if (a->bytes + len > ASIDE_MAX)
        len = 0;
    a->bytes += len;
    if (hn < 0)
        return sa_error_nomem(error);
    return aside_append(a, head, (size_t)hn, error) && aside_append(a, raw, len, error) &&
           aside_append(a, "\n", 1, error);
}

/* Keeps what was set aside in <dir>/<YYYYMMDDTHHMMSSZ>-<kind>.txt, durably. */
static bool aside_save(const aside_t *a, int64_t at, sa_input_kind_t k, sa_error_t *error)
{
    char ts[32], *path = NULL;
    bool ok;
    if (!a->dir || (a->text.len == 0 && !a->spilled))
        return true;
    sa_flatspool_format_at(at, ts, sizeof ts);
    if (!sa_private_dir(a->dir, "set-aside directory", error))
        return false;
    if (asprintf(&path, "%s/%s-%s.txt", a->dir, ts, sa_input_kind_name(k)) < 0) {
        sa_error_nomem(error);
        return false;
    }
    ok = sa_write_file_atomic(path, a->spilled ? a->spill : -1, a->text.data, a->text.len, 0640, error);
    free(path);
    return ok;
}

static void aside_clear(aside_t *a)
{
    sa_buf_clear(&a->text);
    if (a->spilled)
        close(a->spill);
    a->spilled = false;
}

/* ---- pass 1: parse, validate, find what changed ------------------------------------------------- */

typedef struct {
    const sa_ingest_env_t *env;
    sa_obs_ctx_t ctx;
    sa_input_kind_t kind;
    jobvec_t kept;      /* changed records (while they fit) */
    jobvec_t hits;      /* --verify: records the cache says were merged */
    jobvec_t unsure;    /* a backfill's window: records the cache says were merged, until their documents are seen */
    jobvec_t held;      /* changed records that cannot be read alone (no span): always held */
    spans_t *spans;     /* where every changed record is (the snapshot's, shared by its inputs) */
    sa_span_t span;     /* the parser's: where the record at hand is */
    char *header, *delim; /* sacct text: what reading a record alone needs (sa_parse_record) */
    size_t header_len;
    int fd;             /* the input, open to read records again (write_spans), or -1 */
    idset_t listed;     /* squeue: every job id listed (when jobs are written) */
    bool overflow;      /* more changed records than keep_records: they are read again */
    size_t keep_max;
    size_t records;
    sa_node_t **nodes;  /* sinfo */
    size_t nnodes, nodes_cap;
    sa_notes_t notes;   /* odd records, said at the input's end */
    aside_t aside;
    sa_ingest_stats_t *stats;
} pass_t;

/*
 * True if the record makes a document MongoDB takes (keys, nesting, 16 MiB): its
 * document alone is built and converted. A record that cannot be stored is set aside
 * before anything is written, never a failure in the middle of the writes.
 */
static bool record_storable(const sa_job_t *job, const sa_obs_ctx_t *ctx, sa_error_t *why)
{
    json_t *doc = NULL, *sup = NULL;
    sa_merge_kind_t kind;
    bson_t b = BSON_INITIALIZER;
    bool ok = sa_jobdoc_merge(&doc, job, ctx, &kind, &sup, why) && sa_bson_from_json(doc, &b, why);
    if (ok && b.len > (uint32_t)15 << 20) {
        sa_error_set(why, SA_ERR_INPUT, 0, "job %lld: its document would be %u bytes, over MongoDB's 16 MiB limit",
                     (long long)job->job_id, b.len);
        ok = false;
    }
    bson_destroy(&b);
    json_decref(doc);
    json_decref(sup);
    return ok;
}

/* Notes where a changed record is (with its digest), and, the first time, what reading sacct text alone needs. */
static bool note_span(pass_t *p, const sa_job_t *job, uint64_t digest, sa_error_t *error)
{
    sa_jobcache_span_t row = {job->job_id, (int)p->kind, p->span.off, p->span.len, digest};
    if (p->span.delimiter && !p->delim) {
        p->delim = strdup(p->span.delimiter);
        p->header = malloc(p->span.header_len + 1);
        if (!p->delim || !p->header)
            return sa_error_nomem(error);
        memcpy(p->header, p->span.header, p->span.header_len);
        p->header_len = p->span.header_len;
    }
    return spans_add(p->spans, &row, error);
}

static bool p1_setaside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    return aside_add(&((pass_t *)ctx)->aside, raw, len, why, kept, error);
}

static bool p1_keep(pass_t *p, sa_job_t *job, bool hit, bool digested, uint64_t digest, sa_error_t *error);
static bool unsure_check(pass_t *p, sa_error_t *error);

static bool p1_job(sa_job_t *job, void *vctx, sa_error_t *error)
{
    pass_t *p = vctx;
    bool hit = false, digested = false;
    uint64_t digest = 0;

    p->records++;
    sa_notes_job(&p->notes, job);
    if (p->kind == SA_IN_SQUEUE && p->env->archive && !idset_add(&p->listed, job->job_id, error))
        return false;
    if (p->env->cache && p->env->archive) {
        int source;
        int64_t submit, start;
        uint64_t d;
        sa_jobcache_key(job, &source, &submit, &start);
        if (sa_jobcache_get_record(p->env->cache, job->job_id, source, submit, start, &d)) {
            digest = sa_job_digest(job, NULL);
            digested = true;
            hit = d == digest;
        }
    }
    if (hit && !p->env->verify && p->env->check_stored) {
        /* a backfill's window: skipped only once its document is seen to be there (unsure_check) */
        if (!jobs_push(&p->unsure, job))
            goto oom;
        return p->unsure.n < UNSURE_BATCH || unsure_check(p, error);
    }
    if (hit && !p->env->verify) {
        /* merged before as it is now (so it made a storable document then): nothing to build */
        p->stats->jobs.cache_skipped++;
        return true;
    }
    return p1_keep(p, job, hit, digested, digest, error);
oom:
    sa_error_nomem(error);
    return false;
}

/*
 * A record pass 1 keeps (changed, or --verify's hit): checked storable (else set aside),
 * then held, or noted where it is (its span).
 */
static bool p1_keep(pass_t *p, sa_job_t *job, bool hit, bool digested, uint64_t digest, sa_error_t *error)
{
    sa_error_t why;

    if (!record_storable(job, &p->ctx, &why)) {
        json_t *j;
        char *raw;
        bool ok;
        if (why.domain == SA_ERR_NOMEM) {
            *error = why;
            return false;
        }
        j = sa_job_to_json(job);
        raw = j ? json_dumps(j, JSON_COMPACT) : NULL;
        json_decref(j);
        if (!raw)
            goto oom;
        ok = aside_add(&p->aside, raw, strlen(raw), why.message, false, error);
        free(raw);
        return ok;
    }
    if (!p->env->archive)
        return true; /* --no-mongo: checked and counted, nothing to write */
    if (p->span.len == 0) {
        /* cannot be read alone: held whatever comes */
        if (!jobs_push(&p->held, job))
            goto oom;
        return true;
    }
    if (!note_span(p, job, digested ? digest : sa_job_digest(job, NULL), error))
        return false;
    if (p->overflow)
        return true;
    if (!jobs_push(hit ? &p->hits : &p->kept, job))
        goto oom;
    if (p->kept.n + p->hits.n > p->keep_max) {
        /* too many to hold: only where they are is kept (note_span), to read them again there */
        jobs_clear(&p->kept);
        jobs_clear(&p->hits);
        p->overflow = true;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

static bool p1_node(sa_node_t *node, void *vctx, sa_error_t *error)
{
    pass_t *p = vctx;
    bool nomem;
    size_t first = sa_notes_node(&p->notes, node, p->nnodes, &nomem);

    /* what the parser did not model: the time series does not keep it */
    json_decref(node->extra);
    node->extra = NULL;
    if (nomem)
        return sa_error_nomem(error);
    if (first != SIZE_MAX) {
        /* listed twice: one node, as sinfo's groups of several partitions are */
        bool ok = sa_node_merge(p->nodes[first], node);
        json_decref(p->nodes[first]->extra); /* a state conflict noted there: the time series does not keep it */
        p->nodes[first]->extra = NULL;
        return ok || sa_error_nomem(error);
    }
    if (!SA_VEC_GROW(p->nodes, p->nodes_cap, p->nnodes, 1, 256) ||
        !(p->nodes[p->nnodes] = sa_node_steal(node))) {
        sa_error_nomem(error);
        return false;
    }
    p->nnodes++;
    return true;
}

static void nodes_clear(pass_t *p)
{
    for (size_t i = 0; i < p->nnodes; i++)
        sa_node_destroy(p->nodes[i]);
    free(p->nodes);
    p->nodes = NULL;
    p->nnodes = p->nodes_cap = 0;
}

/* The _ids found by unsure_check's query. */
static bool unsure_found(const bson_t *doc, void *ctx, sa_error_t *error)
{
    bson_iter_t it;
    if (bson_iter_init_find(&it, doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) &&
        !sa_strv_push((sa_strv_t *)ctx, bson_iter_utf8(&it, NULL)))
        return sa_error_nomem(error);
    return true;
}

/*
 * A backfill's records the cache says were merged: their documents are looked for (one
 * query, _ids only). Those there are skipped as the cache says; a record whose document is
 * gone (deleted by hand, a restored database the cache did not see) has its job's digests
 * forgotten and is kept like a changed one, so that the backfill writes it again.
 */
static bool unsure_check(pass_t *p, sa_error_t *error)
{
    sa_strv_t ids, found;
    sa_span_t span = p->span;
    bson_t *opts = BCON_NEW("projection", "{", "_id", BCON_INT32(1), "}");
    bool ok = true;

    sa_strv_init(&ids);
    sa_strv_init(&found);
    for (size_t i = 0; ok && i < p->unsure.n; i++) {
        char *id = sa_jobdoc_id(p->ctx.cluster, p->unsure.v[i]->job_id);
        ok = id && sa_strv_add_sorted_unique(&ids, id);
        free(id);
    }
    if (!ok)
        sa_error_nomem(error);
    ok = ok && sa_docstore_find(sa_archive_store(p->env->archive), "jobs", ids.v, ids.n, 0, opts, unsure_found, &found,
                                error);
    memset(&p->span, 0, sizeof p->span); /* not where the parser is: held, not read again */
    for (size_t i = 0; ok && i < p->unsure.n; i++) {
        sa_job_t *job = p->unsure.v[i];
        char *id = sa_jobdoc_id(p->ctx.cluster, job->job_id);
        bool there = false;
        for (size_t k = 0; id && k < found.n && !there; k++)
            there = strcmp(found.v[k], id) == 0;
        if (!id) {
            ok = sa_error_nomem(error);
        } else if (there) {
            p->stats->jobs.cache_skipped++;
        } else {
            p->stats->cache_restored++;
            ok = sa_jobcache_forget_records(p->env->cache, job->job_id, error) &&
                 p1_keep(p, job, false, false, 0, error);
        }
        free(id);
    }
    p->span = span;
    jobs_clear(&p->unsure);
    sa_strv_clear(&ids);
    sa_strv_clear(&found);
    bson_destroy(opts);
    return ok;
}

static void pass_clear(pass_t *p)
{
    jobs_clear(&p->kept);
    jobs_clear(&p->unsure);
    jobs_clear(&p->hits);
    jobs_clear(&p->held);
    free(p->header);
    free(p->delim);
    if (p->fd >= 0)
        close(p->fd);
    free(p->listed.mem.v);
    nodes_clear(p);
    sa_notes_clear(&p->notes);
    aside_clear(&p->aside);
    memset(p, 0, sizeof *p);
}

/* Keeps the first release / data_parser seen, for ingest_runs; logs Slurm's warnings. */
static void note_meta(sa_ingest_stats_t *stats, const sa_meta_t *m)
{
    if (m->slurm_release && !stats->slurm_release)
        stats->slurm_release = strdup(m->slurm_release);
    if (m->data_parser && !stats->data_parser)
        stats->data_parser = strdup(m->data_parser);
    for (size_t i = 0; i < m->warnings.n; i++) {
        sa_log(SA_LOG_WARN, "Slurm warning: %s", m->warnings.v[i]);
        sa_strv_push(&stats->warnings, m->warnings.v[i]);
    }
}

/* True if what was parsed is the kind of output expected for input k. */
static bool kind_fits(sa_input_kind_t k, sa_kind_t kind, size_t records)
{
    switch (k) {
    case SA_IN_SQUEUE:
        return kind == SA_KIND_SQUEUE_JSON;
    case SA_IN_SACCT:
        /* an empty "jobs" list reads as squeue; it is fine as an empty sacct window too */
        return kind == SA_KIND_SACCT_JSON || kind == SA_KIND_SACCT_TEXT || (kind == SA_KIND_SQUEUE_JSON && !records);
    case SA_IN_SINFO:
        return kind == SA_KIND_NODES_JSON || kind == SA_KIND_SINFO_JSON || kind == SA_KIND_SCONTROL_NODES_TEXT;
    default:
        return false;
    }
}

/* What messages call input k of snap: the file the user gave, else the kept copy. */
static const char *input_name(const sa_snapshot_t *snap, int k)
{
    return snap->names[k] ? snap->names[k] : snap->files[k];
}

/* Parses a file with sink; for pass 1 also checks its kind and Slurm's errors[]. */
static bool parse_file(const char *path, const sa_sacct_text_opts_t *topts, const sa_sink_t *sink, sa_meta_t *meta,
                       sa_kind_t *kind, sa_error_t *error)
{
    sa_reader_t r;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    bool ok;

    if (fd < 0) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: %s", path, strerror(errno));
        return false;
    }
    sa_reader_init_fd(&r, fd);
    ok = sa_parse_any(&r, topts, sink, meta, kind, error);
    close(fd);
    return ok;
}

/* sa_notes_say's lines go to the log as warnings. */
static void log_note(const char *line, void *ctx)
{
    (void)ctx;
    sa_log(SA_LOG_WARN, "%s", line);
}

/* Pass 1 over one input; false with *why (the input is refused whole) or a hard error. */
static bool pass1(pass_t *p, const sa_snapshot_t *snap, sa_input_kind_t k, sa_meta_t *meta, sa_error_t *why)
{
    sa_sink_t sink = {p1_job, p1_node, p, p1_setaside, true, &p->span};
    sa_kind_t kind = SA_KIND_UNKNOWN;
    const char *path = snap->files[k];

    p->aside.input = input_name(snap, k);
    p->aside.dir = p->env->setaside_dir;
    p->aside.mem = limit("SA_ASIDE_MEM", ASIDE_MEM);
    if (!parse_file(path, k == SA_IN_SACCT ? &snap->topts : NULL, &sink, meta, &kind, why))
        goto refused;
    if (p->unsure.n && !unsure_check(p, why))
        return false; /* a store's failure, not the input's */
    if (!kind_fits(k, kind, p->records)) {
        sa_error_set(why, SA_ERR_INPUT, 0, "expected %s output, found %s", sa_input_kind_name(k), sa_kind_name(kind));
        goto refused;
    }
    if (meta->errors.n) {
        sa_error_set(why, SA_ERR_SLURM, 0, "Slurm reported an error: %s", meta->errors.v[0]);
        goto refused;
    }
    if (k == SA_IN_SINFO && p->nnodes == 0) {
        sa_error_set(why, SA_ERR_INPUT, 0, "no nodes");
        goto refused;
    }
    sa_notes_say(&p->notes, input_name(snap, k), log_note, NULL);
    return true;
refused:
    sa_error_prefix(why, "%s", input_name(snap, k));
    return false;
}

/* ---- the time series -------------------------------------------------------------- */

/* Reads an sdiag capture (small) and parses it. */
static bool parse_sdiag(const char *path, const char *name, sa_sdiag_t *sd, sa_error_t *error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    sa_buf_t buf;
    char chunk[65536];
    bool ok = false;

    if (fd < 0) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: %s", path, strerror(errno));
        return false;
    }
    sa_buf_init(&buf, SDIAG_MAX);
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!sa_buf_append(&buf, chunk, (size_t)n)) {
            if (errno == ENOMEM)
                sa_error_nomem(error);
            else
                sa_error_set(error, SA_ERR_INPUT, 0, "%s: sdiag output larger than 64 MiB", name);
            goto done;
        }
    }
    ok = sa_sdiag_parse_json(buf.data ? buf.data : "", buf.len, sd, error);
    if (!ok)
        sa_error_prefix(error, "%s", name);
done:
    close(fd);
    sa_buf_clear(&buf);
    return ok;
}

static bool write_tsdb(const sa_ingest_env_t *env, const sa_snapshot_t *snap, pass_t *sinfo, const sa_sdiag_t *sd,
                       sa_ingest_stats_t *stats, sa_error_t *error)
{
    sa_tsdb_opts_t topts;
    sa_tsdb_t *db;
    double t0 = now_ms();
    bool ok;

    if (!env->sqlite_path || (!sinfo->nnodes && !sd))
        return true;
    if (!(db = sa_tsdb_open(env->sqlite_path, false, 10000, error))) {
        /* a path that cannot be opened (a directory, a missing parent) fails the time series: exit 6 */
        if (error->domain == SA_ERR_IO || error->domain == SA_ERR_USAGE)
            error->domain = SA_ERR_SQLITE;
        return false;
    }
    sa_tsdb_opts_init(&topts);
    if (env->max_gap_s > 0)
        topts.max_gap_s = env->max_gap_s;
    topts.sdiag = sd;
    if (sinfo->nnodes) {
        size_t unknown = 0, grouped = 0;
        for (size_t i = 0; i < sinfo->nnodes; i++)
            grouped += sinfo->nodes[i]->gpu_config == SA_NODE_GPUS_UNKNOWN;
        ok = sa_tsdb_carry_gpu_config(db, snap->cluster, snap->at, sinfo->nodes, sinfo->nnodes, &unknown, error) &&
             sa_tsdb_write_snapshot(db, snap->cluster, snap->at, sinfo->nodes, sinfo->nnodes, &topts, error);
        if (ok && grouped - unknown > stats->nodes_gpu_carried)
            stats->nodes_gpu_carried = grouped - unknown;
        if (ok && unknown > stats->nodes_gpu_unknown)
            stats->nodes_gpu_unknown = unknown;
    } else
        ok = sa_tsdb_write_sdiag(db, snap->cluster, snap->at, sd, error);
    sa_tsdb_close(db);
    stats->ms_sqlite += now_ms() - t0;
    return ok;
}

/* ---- jobs ---------------------------------------------------------------------------- */

/* Pass 2: collects the records of changed jobs and writes them a batch at a time. */
typedef struct {
    const sa_ingest_env_t *env;
    const sa_obs_ctx_t *ctx;
    jobvec_t batch;
    sa_ingest_stats_t *stats;
    const sa_obs_ctx_t *sacct_ctx; /* when the batch also holds sacct's records (join_kept) */
} writer_t;

/* GPUs of a record's run without a type (those of gres_detail when the TRES have none). */
static int64_t untyped_gpus(const sa_job_t *job)
{
    const sa_gpus_t *g = job->alloc.gpu_total == 0 && sa_gpus_total(&job->gres_gpus) > 0 ? &job->gres_gpus
                                                                                        : &job->alloc.gpus;
    return sa_gpus_get(g, "");
}

/*
 * The GPU type of each run whose GPUs are untyped ("gres/gpu=2" in AccountingStorageTRES
 * without the typed entry), from its nodes' snapshot at the run's start in the time
 * series (sa_tsdb_run_gpu_type), never a snapshot later than the records' observation
 * time `at` (a replay finds the later ones already there): stored in the run with where
 * it came from, so that ad hoc queries of the archive and the reports agree. No time
 * series: nothing looked up.
 */
static bool resolve_run_gpu_types(const sa_ingest_env_t *env, const char *cluster, int64_t at, jobvec_t *jobs,
                                  sa_error_t *error)
{
    sa_tsdb_t *db = NULL;
    bool ok = true;

    for (size_t i = 0; ok && i < jobs->n; i++) {
        sa_job_t *j = jobs->v[i];
        if (j->run_gpu_type_source || j->start == SA_UNSET || !j->nodes || untyped_gpus(j) <= 0)
            continue;
        /* read-write: slurm-ingest is the series' writer (under the cluster's lock), so an older
         * schema is migrated here as by a snapshot's write, not refused as a reader refuses it */
        if (!db && (!env->sqlite_path || access(env->sqlite_path, F_OK) != 0 ||
                    !(db = sa_tsdb_open(env->sqlite_path, false, 10000, error))))
            return !env->sqlite_path || access(env->sqlite_path, F_OK) != 0;
        ok = sa_tsdb_run_gpu_type(db, cluster, j->nodes, j->start,
                                  sa_job_state_is_final(j->state.base) ? j->end : SA_UNSET, at, &j->run_gpu_type,
                                  &j->run_gpu_type_source, error);
    }
    sa_tsdb_close(db);
    return ok;
}

static bool writer_flush(writer_t *w, sa_error_t *error)
{
    bool ok = true;
    if (w->batch.n && !resolve_run_gpu_types(w->env, w->ctx->cluster, w->ctx->at, &w->batch, error))
        ok = false;
    else if (w->batch.n)
        ok = sa_archive_write_snapshot_jobs(w->env->archive, w->env->cache, w->ctx, w->sacct_ctx, w->batch.v, w->batch.n,
                                    &w->stats->jobs, error);
    jobs_clear(&w->batch);
    return ok;
}

/* Adds a record (owned) to the batch; a full batch is written first when the job changes
 * (records come in job id order, and one job's stay in one batch: sacct -D runs, and
 * squeue's and sacct's records of a job, so that it is written once). */
static bool batch_add(writer_t *w, sa_job_t *job, sa_error_t *error)
{
    if (w->batch.n >= JOB_BATCH && w->batch.v[w->batch.n - 1]->job_id != job->job_id && !writer_flush(w, error)) {
        sa_job_destroy(job);
        return false;
    }
    if (!SA_VEC_GROW(w->batch.v, w->batch.cap, w->batch.n, 1, 256)) {
        sa_job_destroy(job);
        return sa_error_nomem(error);
    }
    w->batch.v[w->batch.n++] = job;
    return true;
}

/* Writes the kept records in batches (records of one job stay in one batch). */
static bool write_kept(writer_t *w, jobvec_t *kept, sa_error_t *error)
{
    bool ok = true;
    for (size_t i = 0; ok && i < kept->n; i++) {
        ok = batch_add(w, kept->v[i], error);
        kept->v[i] = NULL;
    }
    jobs_clear(kept);
    return ok && writer_flush(w, error);
}

static int job_id_cmp(const void *a, const void *b)
{
    const sa_job_t *x = *(sa_job_t *const *)a, *y = *(sa_job_t *const *)b;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/* --verify: writes the records the cache claimed were merged; any write is a wrong claim. */
static bool verify_hits(writer_t *w, jobvec_t *hits, sa_error_t *error)
{
    sa_ingest_stats_t *stats = w->stats;
    size_t before = stats->jobs.inserted + stats->jobs.changed;
    bool ok;
    if (hits->n > 1)
        qsort(hits->v, hits->n, sizeof *hits->v, job_id_cmp);
    ok = write_kept(w, hits, error);
    stats->cache_mismatches += stats->jobs.inserted + stats->jobs.changed - before;
    return ok;
}

/*
 * Writes one input's changed jobs, all held in memory; with sacct_ctx, p's kept records
 * include sacct's (join_kept), merged with that context.
 */
static bool write_input(const sa_ingest_env_t *env, pass_t *p, const sa_obs_ctx_t *sacct_ctx,
                        sa_ingest_stats_t *stats, sa_error_t *error)
{
    writer_t w = {env, &p->ctx, {0}, stats, sacct_ctx};
    bool ok = true;

    if (env->verify)
        ok = verify_hits(&w, &p->hits, error);
    if (ok && p->kept.n > 1)
        qsort(p->kept.v, p->kept.n, sizeof *p->kept.v, job_id_cmp);
    ok = ok && write_kept(&w, &p->kept, error);
    return ok && sa_archive_flush_rollups(env->archive, error);
}

/* ---- more changed records than memory holds: read again where they are ----------------- */

typedef struct {
    writer_t w;
    pass_t *p;               /* the snapshot's passes, by input */
    const sa_snapshot_t *snap;
    jobvec_t held;           /* the records without a span, in job id order */
    size_t next_held;
    char *buf;
    size_t cap;
    sa_json_memo_t *memo;    /* JSON member values shared by the records read (as pass 1 shares them) */
} respan_t;

/* Adds the held records of jobs before job_id (all of them for INT64_MAX) to the batch. */
static bool held_before(respan_t *r, int64_t job_id, sa_error_t *error)
{
    while (r->next_held < r->held.n && r->held.v[r->next_held]->job_id < job_id) {
        sa_job_t *j = r->held.v[r->next_held];
        r->held.v[r->next_held++] = NULL;
        if (!batch_add(&r->w, j, error))
            return false;
    }
    return true;
}

/* Reads len bytes at off of fd into r->buf. */
static bool read_at(respan_t *r, int fd, uint64_t off, uint64_t len, const char *name, sa_error_t *error)
{
    size_t got = 0;
    if (len > SIZE_MAX / 2 || !SA_VEC_GROW(r->buf, r->cap, 0, (size_t)len + 1, 65536))
        return sa_error_nomem(error);
    while (got < len) {
        ssize_t n = pread(fd, r->buf + got, (size_t)len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            sa_error_set(error, SA_ERR_IO, n < 0 ? errno : 0, "%s: reading %llu bytes at byte %llu again: %s", name,
                         (unsigned long long)len, (unsigned long long)off, n < 0 ? strerror(errno) : "the file is shorter");
            return false;
        }
        got += (size_t)n;
    }
    return true;
}

/* One changed record, read again where it is: checked to be the record pass 1 read there. */
static bool respan_row(const sa_jobcache_span_t *s, void *ctx, sa_error_t *error)
{
    respan_t *r = ctx;
    pass_t *p = &r->p[s->input];
    const char *name = input_name(r->snap, s->input);
    sa_job_t *job = NULL;
    sa_error_t why;

    if (!held_before(r, s->job_id, error) || !read_at(r, p->fd, s->off, s->len, name, error))
        return false;
    if (!sa_parse_record(r->buf, (size_t)s->len, p->header, p->header_len, p->delim,
                         s->input == SA_IN_SACCT ? &r->snap->topts : NULL, r->memo, &job, &why) ||
        sa_job_digest(job, NULL) != s->digest) {
        if (job == NULL && why.domain == SA_ERR_NOMEM) {
            *error = why;
            return false;
        }
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: job %lld at byte %llu: read again alone, not the record read in "
                     "the whole input (%s); a bug: please report it with this input",
                     name, (long long)s->job_id, (unsigned long long)s->off, job ? "another record" : why.message);
        sa_job_destroy(job);
        return false;
    }
    return batch_add(&r->w, job, error);
}

/*
 * Writes the changed jobs of squeue and sacct when one of them changed more records than
 * keep_records: every changed record read again from where pass 1 found it, in job id
 * order, the held ones merged in, so that each job is written once (issue 22, item 21).
 */
static bool write_spans(const sa_ingest_env_t *env, const sa_snapshot_t *snap, pass_t *p, unsigned parsed,
                        spans_t *spans, sa_ingest_stats_t *stats, sa_error_t *error)
{
    bool sq = parsed & (1u << SA_IN_SQUEUE), sa = parsed & (1u << SA_IN_SACCT);
    respan_t r = {{env, sq ? &p[SA_IN_SQUEUE].ctx : &p[SA_IN_SACCT].ctx, {0}, stats,
                   sq && sa ? &p[SA_IN_SACCT].ctx : NULL},
                  p, snap, {0}, 0, NULL, 0, sa_json_memo_new()};
    bool ok = r.memo != NULL || sa_error_nomem(error);

    for (int k = SA_IN_SQUEUE; ok && k <= SA_IN_SACCT; k++) {
        if (!(parsed & (1u << k)))
            continue;
        stats->second_passes++;
        if ((p[k].fd = open(snap->files[k], O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
            sa_error_set(error, SA_ERR_IO, errno, "%s: %s", input_name(snap, k), strerror(errno));
            ok = false;
        }
        /* the held records of both inputs, in job id order */
        if (ok && !jobs_move(&r.held, &p[k].held))
            ok = sa_error_nomem(error);
        jobs_clear(&p[k].kept);
        jobs_clear(&p[k].hits);
    }
    if (ok && r.held.n > 1)
        qsort(r.held.v, r.held.n, sizeof *r.held.v, job_id_cmp);
    ok = ok && spans_each(spans, respan_row, &r, error) && held_before(&r, INT64_MAX, error) &&
         writer_flush(&r.w, error);
    jobs_clear(&r.w.batch);
    jobs_clear(&r.held);
    free(r.buf);
    sa_json_memo_destroy(r.memo);
    return ok && sa_archive_flush_rollups(env->archive, error);
}

/*
 * When squeue's and sacct's changed records are both held in memory (no second pass,
 * not --verify), moves sacct's into squeue's, so that a job both changed (a state change
 * squeue and the sacct window both show) is merged and written once, not twice. False
 * (nothing moved) otherwise.
 */
static bool join_kept(const sa_ingest_env_t *env, pass_t *sq, pass_t *sa)
{
    if (env->verify || sq->overflow || sa->overflow || sa->kept.n == 0)
        return false;
    return jobs_move(&sq->kept, &sa->kept); /* out of memory here: written one input at a time */
}

/*
 * Writes the changed jobs of squeue and sacct, all held in memory: squeue's and sacct's
 * records joined when they can be (join_kept), so that a job both changed is written once.
 */
static bool write_held(const sa_ingest_env_t *env, pass_t *p, unsigned parsed, sa_ingest_stats_t *stats,
                       sa_error_t *error)
{
    bool joined;

    /* the records that have no span are changed records like the kept ones */
    for (int k = SA_IN_SQUEUE; k <= SA_IN_SACCT; k++) {
        if (!jobs_move(&p[k].kept, &p[k].held))
            return sa_error_nomem(error);
    }
    joined = (parsed & (1u << SA_IN_SQUEUE)) && (parsed & (1u << SA_IN_SACCT)) &&
             join_kept(env, &p[SA_IN_SQUEUE], &p[SA_IN_SACCT]);
    for (int k = SA_IN_SQUEUE; k <= SA_IN_SACCT; k++) {
        if (joined && k == SA_IN_SACCT)
            break; /* written with squeue's */
        if ((parsed & (1u << k)) && !write_input(env, &p[k], joined ? &p[SA_IN_SACCT].ctx : NULL, stats, error))
            return false;
    }
    return true;
}

/*
 * The jobs squeue stopped listing that are still live once the snapshot's sacct records
 * are merged (a job that ended between two polls is final by then: no vanished_at written
 * and taken back). Not when a squeue record was set aside: the listing cannot vouch for
 * that job.
 */
static bool mark_vanished(const sa_ingest_env_t *env, const sa_snapshot_t *snap, pass_t *p, sa_ingest_stats_t *stats,
                          sa_error_t *error)
{
    if (p->aside.count > 0) {
        sa_log(SA_LOG_WARN, "%s: %zu record(s) set aside: jobs squeue stopped listing are not marked this time",
               input_name(snap, SA_IN_SQUEUE), p->aside.count);
        return true;
    }
    if (!idset_done(&p->listed, error))
        return false;
    return sa_archive_mark_vanished(env->archive, env->cache, &p->ctx, p->listed.mem.v, p->listed.mem.n,
                                    p->listed.spilled ? SET_LISTED : -1, &stats->jobs, error);
}

/* Records the snapshot's times in the cluster's document; names this cache as the writer. */
static bool finish_cluster(const sa_ingest_env_t *env, const sa_snapshot_t *snap, unsigned landed,
                           size_t statements_before, sa_ingest_stats_t *stats, sa_error_t *error)
{
    json_t *t = json_object();
    bool ok;
    if (landed & (1u << SA_IN_SQUEUE))
        json_object_set_new(t, "last_squeue_at", json_integer(snap->at));
    if (landed & (1u << SA_IN_SACCT))
        json_object_set_new(t, "last_sacct_at", json_integer(snap->at));
    if (landed & (1u << SA_IN_SINFO))
        json_object_set_new(t, "last_sinfo_at", json_integer(snap->at));
    ok = sa_archive_cluster_update(env->archive, snap->cluster, t, NULL, error);
    json_decref(t);
    /* the rollups' open runs count up to this snapshot from the commit that says so */
    if (ok && (landed & ((1u << SA_IN_SQUEUE) | (1u << SA_IN_SACCT))))
        ok = sa_archive_landed(env->archive, snap->at, error);
    if (ok && stats->jobs.write_statements > statements_before)
        ok = sa_archive_bump_seq(env->archive, snap->cluster, env->cache, error);
    return ok;
}

bool sa_ingest_snapshot(const sa_ingest_env_t *env, const sa_snapshot_t *snap, sa_ingest_stats_t *stats,
                        sa_ingest_outcome_t *out, sa_error_t *error)
{
    pass_t p[SA_IN_COUNT];
    sa_meta_t meta[SA_IN_COUNT];
    spans_t spans = {NULL, 0, 0, limit("SA_IDS_SPILL", IDS_SPILL), env->archive ? env->cache : NULL, false};
    sa_sdiag_t sd;
    bool have_sdiag = false, ok = false;
    unsigned parsed = 0;
    size_t statements_before = stats->jobs.write_statements;
    double t0 = now_ms();

    memset(p, 0, sizeof p);
    for (int k = 0; k < SA_IN_COUNT; k++)
        p[k].fd = -1;
    memset(out, 0, sizeof *out);
    if (env->archive && env->cache && !sa_jobcache_idset_clear(env->cache, error))
        return false;
    sa_sdiag_init(&sd);
    for (int k = 0; k < SA_IN_COUNT; k++)
        sa_meta_init(&meta[k]);

    /* 1. parse and validate everything: an input that cannot be parsed is refused whole */
    for (int k = 0; k < SA_IN_COUNT; k++) {
        sa_error_t why;
        bool good;
        if (!snap->files[k])
            continue;
        p[k].env = env;
        p[k].kind = (sa_input_kind_t)k;
        p[k].stats = stats;
        p[k].keep_max = env->keep_records ? env->keep_records : limit("SA_KEEP_RECORDS", KEEP_DEFAULT);
        p[k].ctx = (sa_obs_ctx_t){snap->cluster, snap->at, NULL, NULL};
        p[k].listed = (idset_t){{0}, limit("SA_IDS_SPILL", IDS_SPILL), env->archive ? env->cache : NULL, SET_LISTED,
                                false};
        p[k].spans = &spans;
        good = k == SA_IN_SDIAG ? (have_sdiag = parse_sdiag(snap->files[k], input_name(snap, k), &sd, &why))
                                : pass1(&p[k], snap, (sa_input_kind_t)k, &meta[k], &why);
        if (!good && (why.domain == SA_ERR_NOMEM || why.domain == SA_ERR_MONGO || why.domain == SA_ERR_UNREACHABLE ||
                      why.domain == SA_ERR_SQLITE)) {
            /* a store failed (a backfill's look for documents, the job cache): the input is not at fault */
            *error = why;
            goto done;
        }
        if (!good) {
            if (!out->rejected)
                out->why = why;
            out->rejected |= 1u << k;
            if (!spans_drop(&spans, k, error))
                goto done;
            continue;
        }
        parsed |= 1u << k;
        note_meta(stats, &meta[k]);
        p[k].ctx.slurm_release = meta[k].slurm_release;
        p[k].ctx.data_parser = meta[k].data_parser;
        stats->setaside += p[k].aside.count;
        stats->repaired += p[k].aside.repaired;
        if (!aside_save(&p[k].aside, snap->at, (sa_input_kind_t)k, error))
            goto done;
    }
    stats->ms_parse += now_ms() - t0;
    stats->squeue_records += p[SA_IN_SQUEUE].records;
    stats->sacct_records += p[SA_IN_SACCT].records;
    stats->nodes += p[SA_IN_SINFO].nnodes;

    /* 2. the time series: local, one transaction */
    if (!snap->tsdb_done &&
        !write_tsdb(env, snap, &p[SA_IN_SINFO], have_sdiag ? &sd : NULL, stats, error))
        goto done;
    out->tsdb_done = true;
    nodes_clear(&p[SA_IN_SINFO]); /* not held while the jobs are written */

    /* 3. jobs: squeue, sacct, then the jobs the (complete) squeue listing no longer has */
    if (env->archive) {
        t0 = now_ms();
        if (((parsed & (1u << SA_IN_SQUEUE)) && p[SA_IN_SQUEUE].overflow) ||
            ((parsed & (1u << SA_IN_SACCT)) && p[SA_IN_SACCT].overflow)) {
            if (!write_spans(env, snap, p, parsed, &spans, stats, error))
                goto done;
        } else if (!write_held(env, p, parsed, stats, error)) {
            goto done;
        }
        if ((parsed & (1u << SA_IN_SQUEUE)) && !mark_vanished(env, snap, &p[SA_IN_SQUEUE], stats, error))
            goto done;
        if (!finish_cluster(env, snap, parsed, statements_before, stats, error))
            goto done;
        stats->ms_mongo += now_ms() - t0;
        out->jobs_done = true;
    }
    ok = true;
done:
    if (env->archive && env->cache) {
        sa_error_t ignored;
        sa_jobcache_idset_clear(env->cache, &ignored); /* its temporary pages are reused */
    }
    sa_sdiag_clear(&sd);
    free(spans.v);
    for (int k = 0; k < SA_IN_COUNT; k++) {
        pass_clear(&p[k]);
        sa_meta_clear(&meta[k]);
    }
    return ok;
}
