/*
 * sa_audit.c - the archive's job documents against slurmdbd's records, as field lists
 * (see sa_audit.h).
 */
#include "sa_audit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[SA_AUDIT_NF] = {
    "state", "submit", "eligible", "start", "end", "exit", "tres", "nodes", "user", "account", "partition"};

const char *sa_audit_field_name(int f)
{
    return f >= 0 && f < SA_AUDIT_NF ? field_names[f] : "?";
}

enum { ROW_JOB = 0, ROW_RUN = 1 };

/* One row: a job's current fields, or one of its runs. */
typedef struct {
    int64_t job_id;
    int kind;              /* ROW_JOB, ROW_RUN */
    int64_t start;         /* ROW_RUN: the run's start, its key */
    int64_t rank_submit;   /* ROW_JOB of a record: which record's is the job's (greatest wins) */
    int64_t rank_start;
    int rank_final;
    size_t seq;            /* the order given: the last of equal keys wins */
    char *v[SA_AUDIT_NF];  /* the field texts, NULL when absent */
    json_t *exit;          /* ROW_JOB of a record: its document's exit (with its rank), or NULL */
} row_t;

typedef struct {
    row_t *v;
    size_t n, cap;
} rows_t;

struct sa_audit {
    int64_t from, to;
    rows_t ref, arc;       /* slurmdbd's, the archive's */
    int64_t *ids;          /* slurmdbd's job ids, sorted unique (after seal) */
    size_t nids;
    size_t seq;
    bool sealed;
};

static void row_clear(row_t *r)
{
    for (int f = 0; f < SA_AUDIT_NF; f++)
        free(r->v[f]);
    json_decref(r->exit);
}

static void rows_clear(rows_t *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        row_clear(&rs->v[i]);
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

/* A new empty row at the end of rs (NULL on out of memory). */
static row_t *rows_push(rows_t *rs)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        row_t *v = realloc(rs->v, cap * sizeof *v);
        if (!v)
            return NULL;
        rs->v = v;
        rs->cap = cap;
    }
    memset(&rs->v[rs->n], 0, sizeof rs->v[rs->n]);
    return &rs->v[rs->n++];
}

sa_audit_t *sa_audit_new(int64_t from, int64_t to)
{
    sa_audit_t *a = calloc(1, sizeof *a);
    if (a) {
        a->from = from;
        a->to = to;
    }
    return a;
}

void sa_audit_free(sa_audit_t *a)
{
    if (!a)
        return;
    rows_clear(&a->ref);
    rows_clear(&a->arc);
    free(a->ids);
    free(a);
}

/* ---- a document as fields: the one function both sides go through ---------------------- */

/* A copy of text, or of NULL. False on out of memory (text not NULL). */
static bool set_text(char **dst, const char *text)
{
    *dst = text ? strdup(text) : NULL;
    return !text || *dst;
}

static bool set_time(char **dst, const json_t *o, const char *key)
{
    char buf[32];
    int64_t t = sa_jobdoc_int(o, key);
    return set_text(dst, t == SA_UNSET ? NULL : sa_time_format(t, buf, sizeof buf));
}

/* "STATE" or "STATE+FLAG+FLAG" of o's state and its flags (a list). */
static bool set_state(char **dst, const json_t *o, const char *state_key, const char *flags_key)
{
    const json_t *st = json_object_get(o, state_key), *flags = json_object_get(o, flags_key), *f;
    char buf[512];
    size_t len, i;

    if (!json_is_string(st))
        return set_text(dst, NULL);
    len = (size_t)snprintf(buf, sizeof buf, "%s", json_string_value(st));
    json_array_foreach(flags, i, f) {
        if (json_is_string(f) && len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "+%s", json_string_value(f));
    }
    return set_text(dst, buf);
}

/* "code:signal" of an exit {code, signal}. */
static bool set_exit(char **dst, const json_t *e)
{
    char buf[48];
    int64_t code = sa_jobdoc_int(e, "code"), sig = sa_jobdoc_int(e, "signal");
    if (!json_is_object(e) || code == SA_UNSET)
        return set_text(dst, NULL);
    snprintf(buf, sizeof buf, "%" PRId64 ":%" PRId64, code, sig == SA_UNSET ? 0 : sig);
    return set_text(dst, buf);
}

/* Appends ",name=value" (or "name=value" first) to buf. */
static void tres_add(char *buf, size_t size, size_t *len, const char *name, const char *value)
{
    if (*len < size)
        *len += (size_t)snprintf(buf + *len, size - *len, "%s%s=%s", *len ? "," : "", name, value);
}

/*
 * The allocated TRES of o (a document's alloc, or a run, whose node count is node_key) in
 * sacct's words: "cpu=4,mem=4096M,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2" and the
 * entries the model does not name as Slurm printed them. NULL when o names none.
 */
static bool set_tres(char **dst, const json_t *o, const char *node_key)
{
    char buf[2048], v[64];
    size_t len = 0, i;
    const json_t *g, *billing = json_object_get(o, "billing");
    int64_t x;

    if ((x = sa_jobdoc_int(o, "cpus")) != SA_UNSET && (snprintf(v, sizeof v, "%" PRId64, x), 1))
        tres_add(buf, sizeof buf, &len, "cpu", v);
    if ((x = sa_jobdoc_int(o, "mem_mb")) != SA_UNSET && (snprintf(v, sizeof v, "%" PRId64 "M", x), 1))
        tres_add(buf, sizeof buf, &len, "mem", v);
    if ((x = sa_jobdoc_int(o, node_key)) != SA_UNSET && (snprintf(v, sizeof v, "%" PRId64, x), 1))
        tres_add(buf, sizeof buf, &len, "node", v);
    if (json_is_number(billing) && (snprintf(v, sizeof v, "%.15g", json_number_value(billing)), 1))
        tres_add(buf, sizeof buf, &len, "billing", v);
    if ((x = sa_jobdoc_int(o, "gpus")) != SA_UNSET && x > 0 && (snprintf(v, sizeof v, "%" PRId64, x), 1))
        tres_add(buf, sizeof buf, &len, "gres/gpu", v);
    json_array_foreach(json_object_get(o, "gpus_by_type"), i, g) {
        const char *type = json_string_value(json_object_get(g, "type"));
        char name[160];
        if (!type || !*type)
            continue;
        snprintf(name, sizeof name, "gres/gpu:%s", type);
        snprintf(v, sizeof v, "%" PRId64, sa_jobdoc_int(g, "count"));
        tres_add(buf, sizeof buf, &len, name, v);
    }
    json_array_foreach(json_object_get(o, "other"), i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        const char *value = json_string_value(json_object_get(g, "value"));
        if (name)
            tres_add(buf, sizeof buf, &len, name, value ? value : "");
    }
    return set_text(dst, len ? buf : NULL);
}

static bool set_str(char **dst, const json_t *o, const char *key)
{
    return set_text(dst, json_string_value(json_object_get(o, key)));
}

/* The fields of a job row (the document's current fields); false on out of memory. */
static bool job_fields(row_t *r, const json_t *doc)
{
    return set_state(&r->v[SA_AUDIT_F_STATE], doc, "state", "state_flags") &&
           set_time(&r->v[SA_AUDIT_F_SUBMIT], doc, "submit") && set_time(&r->v[SA_AUDIT_F_ELIGIBLE], doc, "eligible") &&
           set_time(&r->v[SA_AUDIT_F_START], doc, "start") && set_time(&r->v[SA_AUDIT_F_END], doc, "end") &&
           set_exit(&r->v[SA_AUDIT_F_EXIT], json_object_get(doc, "exit")) &&
           set_tres(&r->v[SA_AUDIT_F_TRES], json_object_get(doc, "alloc"), "nodes") &&
           set_str(&r->v[SA_AUDIT_F_NODES], doc, "nodes") && set_str(&r->v[SA_AUDIT_F_USER], doc, "user") &&
           set_str(&r->v[SA_AUDIT_F_ACCOUNT], doc, "account") && set_str(&r->v[SA_AUDIT_F_PARTITION], doc, "partition");
}

/* The fields of a run row (runs[i]); user, account and partition are the job's alone. */
static bool run_fields(row_t *r, const json_t *run)
{
    return set_state(&r->v[SA_AUDIT_F_STATE], run, "state", "flags") &&
           set_time(&r->v[SA_AUDIT_F_SUBMIT], run, "submit") && set_time(&r->v[SA_AUDIT_F_ELIGIBLE], run, "eligible") &&
           set_time(&r->v[SA_AUDIT_F_START], run, "start") && set_time(&r->v[SA_AUDIT_F_END], run, "end") &&
           set_exit(&r->v[SA_AUDIT_F_EXIT], json_object_get(run, "exit")) &&
           set_tres(&r->v[SA_AUDIT_F_TRES], run, "node_count") && set_str(&r->v[SA_AUDIT_F_NODES], run, "nodes");
}

/*
 * The rows of a job document into rs: its job row (ranked by rank[0..2]: submit, final,
 * start) and a row per run. The one mapping of both sides. False on out of memory (the
 * rows made stay in rs, cleared with it).
 */
static bool rows_of_doc(sa_audit_t *a, rows_t *rs, const json_t *doc, const int64_t rank[3])
{
    int64_t job_id = sa_jobdoc_int(doc, "job_id");
    const json_t *run;
    size_t i;
    row_t *r = rows_push(rs);

    if (!r)
        return false;
    r->job_id = job_id;
    r->kind = ROW_JOB;
    r->rank_submit = rank[0];
    r->rank_final = (int)rank[1];
    r->rank_start = rank[2];
    r->seq = a->seq++;
    if (rs == &a->ref)
        r->exit = json_incref(json_object_get(doc, "exit"));
    if (!job_fields(r, doc))
        return false;
    json_array_foreach(json_object_get(doc, "runs"), i, run) {
        if (!(r = rows_push(rs)))
            return false;
        r->job_id = job_id;
        r->kind = ROW_RUN;
        r->start = sa_jobdoc_int(run, "start");
        r->seq = a->seq++;
        if (!run_fields(r, run))
            return false;
    }
    return true;
}

bool sa_audit_add_record(sa_audit_t *a, const sa_job_t *rec, const sa_obs_ctx_t *ctx, sa_error_t *error)
{
    json_t *doc = NULL, *sup = NULL;
    sa_merge_kind_t kind;
    int64_t rank[3] = {rec->submit, sa_job_state_is_final(rec->state.base), rec->start};
    bool ok;

    /* the document the archive would make of this record alone */
    if (!sa_jobdoc_merge(&doc, rec, ctx, &kind, &sup, error))
        return false;
    ok = rows_of_doc(a, &a->ref, doc, rank);
    json_decref(doc);
    json_decref(sup);
    return ok || sa_error_nomem(error);
}

/* Sort order: job id, job row before runs, a run's start; then which record wins (last). */
static int row_cmp(const void *x, const void *y)
{
    const row_t *p = x, *q = y;
    if (p->job_id != q->job_id)
        return p->job_id < q->job_id ? -1 : 1;
    if (p->kind != q->kind)
        return p->kind < q->kind ? -1 : 1;
    if (p->kind == ROW_RUN && p->start != q->start)
        return p->start < q->start ? -1 : 1;
    if (p->kind == ROW_JOB) {
        if (p->rank_submit != q->rank_submit)
            return p->rank_submit < q->rank_submit ? -1 : 1;
        if (p->rank_final != q->rank_final)
            return p->rank_final < q->rank_final ? -1 : 1;
        if (p->rank_start != q->rank_start)
            return p->rank_start < q->rank_start ? -1 : 1;
    }
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* True if two rows have one key (a job's job row, or the same run). */
static bool same_key(const row_t *p, const row_t *q)
{
    return p->job_id == q->job_id && p->kind == q->kind && (p->kind == ROW_JOB || p->start == q->start);
}

/*
 * Sorts rs and keeps the last row of each key. Of slurmdbd's job rows the kept one (the
 * latest incarnation's) takes the exit code the merge keeps of all the job's records
 * (sa_jobdoc_exit_replaces: the latest final record's; a requeued job running again keeps
 * its earlier run's). False on out of memory.
 */
static bool rows_settle(rows_t *rs)
{
    size_t out = 0;
    bool ok = true;
    if (rs->n > 1)
        qsort(rs->v, rs->n, sizeof *rs->v, row_cmp);
    for (size_t i = 0; i < rs->n; i++) {
        row_t *r = &rs->v[i], *next = i + 1 < rs->n ? &rs->v[i + 1] : NULL;
        if (next && same_key(r, next)) {
            if (r->kind == ROW_JOB && sa_jobdoc_exit_replaces(r->exit, next->exit)) {
                json_decref(next->exit);
                next->exit = json_incref(r->exit);
                free(next->v[SA_AUDIT_F_EXIT]);
                ok = set_exit(&next->v[SA_AUDIT_F_EXIT], next->exit) && ok; /* the rows stay whole either way */
            }
            row_clear(r);
            continue;
        }
        rs->v[out++] = *r;
    }
    rs->n = out;
    return ok;
}

bool sa_audit_seal(sa_audit_t *a, sa_error_t *error)
{
    if (!rows_settle(&a->ref))
        return sa_error_nomem(error);
    free(a->ids);
    a->nids = 0;
    if (!(a->ids = malloc((a->ref.n ? a->ref.n : 1) * sizeof *a->ids)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < a->ref.n; i++) {
        if (!a->nids || a->ids[a->nids - 1] != a->ref.v[i].job_id)
            a->ids[a->nids++] = a->ref.v[i].job_id;
    }
    a->sealed = true;
    return true;
}

const int64_t *sa_audit_ref_ids(const sa_audit_t *a, size_t *n)
{
    *n = a->nids;
    return a->ids;
}

bool sa_audit_listed(const sa_audit_t *a, int64_t job_id)
{
    size_t lo = 0, hi = a->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->ids[mid] == job_id)
            return true;
        if (a->ids[mid] < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool sa_audit_in_window(const json_t *doc, int64_t from, int64_t to)
{
    int64_t eligible = sa_jobdoc_int(doc, "eligible"), end = sa_jobdoc_int(doc, "end");
    return eligible != SA_UNSET && eligible > 0 && eligible < to && (end == SA_UNSET || end >= from);
}

bool sa_audit_add_doc(sa_audit_t *a, const json_t *doc, sa_error_t *error)
{
    static const int64_t rank[3] = {0, 0, 0};
    int64_t job_id = sa_jobdoc_int(doc, "job_id");

    if (job_id == SA_UNSET || (!sa_audit_listed(a, job_id) && !sa_audit_in_window(doc, a->from, a->to)))
        return true;
    return rows_of_doc(a, &a->arc, doc, rank) || sa_error_nomem(error);
}

void sa_audit_clear_archive(sa_audit_t *a)
{
    rows_clear(&a->arc);
}

/* ---- the comparison ---------------------------------------------------------------------- */

static bool same_text(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

typedef struct {
    sa_audit_diff_fn fn;
    void *ctx;
    sa_audit_counts_t *c;
} emit_t;

static bool emit(emit_t *e, sa_audit_kind_t kind, const row_t *r, int field, const char *arc, const char *ref,
                 sa_error_t *error)
{
    sa_audit_diff_t d = {kind, r->job_id, r->kind == ROW_RUN, r->start, field, arc, ref};
    if (kind == SA_AUDIT_MISSING)
        e->c->missing++;
    else if (kind == SA_AUDIT_EXTRA)
        e->c->extra++;
    else
        e->c->changed++;
    return e->fn(&d, e->ctx, error);
}

/* The field differences of two rows of one key. */
static bool compare_rows(emit_t *e, const row_t *arc, const row_t *ref, sa_error_t *error)
{
    int nf = ref->kind == ROW_JOB ? SA_AUDIT_NF : SA_AUDIT_F_USER;
    for (int f = 0; f < nf; f++) {
        if (!same_text(arc->v[f], ref->v[f]) && !emit(e, SA_AUDIT_CHANGED, ref, f, arc->v[f], ref->v[f], error))
            return false;
    }
    return true;
}

/* One job's rows on both sides: ref[0..nr), arc[0..na) (each sorted: job row first, then runs). */
static bool compare_job(emit_t *e, const row_t *ref, size_t nr, const row_t *arc, size_t na, sa_error_t *error)
{
    size_t i = 0, j = 0;

    if (nr) {
        e->c->jobs++;
        for (size_t k = 0; k < nr; k++)
            e->c->runs += ref[k].kind == ROW_RUN;
    }
    if (!na)
        return emit(e, SA_AUDIT_MISSING, &ref[0], 0, NULL, NULL, error);
    if (!nr)
        return emit(e, SA_AUDIT_EXTRA, &arc[0], 0, NULL, NULL, error);
    while (i < nr || j < na) {
        int c = i == nr ? 1 : j == na ? -1 : row_cmp(&ref[i], &arc[j]);
        bool ok;
        if (i < nr && j < na && same_key(&ref[i], &arc[j])) {
            ok = compare_rows(e, &arc[j++], &ref[i++], error);
        } else if (c < 0) {
            ok = emit(e, SA_AUDIT_MISSING, &ref[i++], 0, NULL, NULL, error);
        } else {
            ok = emit(e, SA_AUDIT_EXTRA, &arc[j++], 0, NULL, NULL, error);
        }
        if (!ok)
            return false;
    }
    return true;
}

bool sa_audit_compare(sa_audit_t *a, sa_audit_diff_fn fn, void *ctx, sa_audit_counts_t *counts, sa_error_t *error)
{
    sa_audit_counts_t local;
    emit_t e = {fn, ctx, counts ? counts : &local};
    size_t i = 0, j = 0;

    memset(e.c, 0, sizeof *e.c);
    if (!a->sealed && !sa_audit_seal(a, error))
        return false;
    if (!rows_settle(&a->arc))
        return sa_error_nomem(error);
    while (i < a->ref.n || j < a->arc.n) {
        int64_t id = i == a->ref.n ? a->arc.v[j].job_id
                     : j == a->arc.n ? a->ref.v[i].job_id
                     : a->ref.v[i].job_id < a->arc.v[j].job_id ? a->ref.v[i].job_id : a->arc.v[j].job_id;
        size_t i0 = i, j0 = j;
        while (i < a->ref.n && a->ref.v[i].job_id == id)
            i++;
        while (j < a->arc.n && a->arc.v[j].job_id == id)
            j++;
        if (!compare_job(&e, &a->ref.v[i0], i - i0, &a->arc.v[j0], j - j0, error))
            return false;
    }
    return true;
}

const char *sa_audit_diff_line(const sa_audit_diff_t *d, char *buf, size_t size)
{
    char who[96], t[32];

    if (d->run)
        snprintf(who, sizeof who, "job %" PRId64 " run %s", d->job_id,
                 d->run_start == SA_UNSET ? "(no start)" : sa_time_format(d->run_start, t, sizeof t));
    else
        snprintf(who, sizeof who, "job %" PRId64, d->job_id);
    if (d->kind == SA_AUDIT_MISSING)
        snprintf(buf, size, "%s: missing", who);
    else if (d->kind == SA_AUDIT_EXTRA)
        snprintf(buf, size, "%s: extra", who);
    else
        snprintf(buf, size, "%s: %s: archive %s, slurmdbd %s", who, sa_audit_field_name(d->field),
                 d->archive ? d->archive : "(none)", d->slurmdbd ? d->slurmdbd : "(none)");
    return buf;
}
