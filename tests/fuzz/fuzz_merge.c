/*
 * fuzz_merge.c - the merge of one job's records into its document (sa_jobdoc_merge).
 *
 * The input is a short sequence of captures separated by lines "%%". Each capture
 * may start with a line "@<epoch>", its observation time (else 2026-09-21T08:00Z
 * plus an hour per capture), and is squeue/sacct JSON (first non-blank byte '{',
 * sa_parse_json) or sacct -P/-p text with its header (sa_parse_sacct_text). A
 * capture that does not parse is dropped whole (slurm-ingest writes nothing of a
 * bad input). The records of the first job id, at most FZ_MAX_RECORDS, are merged
 * in input order into one document, and:
 *   1. each record merged a second time right after the first changes nothing (the
 *      merge says UNCHANGED or STALE and the document stays equal): slurm-ingest
 *      given the same capture twice writes nothing;
 *   2. every record merged again, after all of them, changes nothing;
 *   3. the records merged in reverse order give an equal document, but for the
 *      bookkeeping of arrival order (seen, _merge, runs[]._key, the exit codes' _key).
 * A failed merge, a crash, a leak or a broken property 1 is a finding. Properties 2
 * and 3 say that the arrival order does not matter, which the history of states
 * does not fully keep (see fixtures/fuzz/merge-order/README.md); what a broken one
 * does is chosen with the environment variable SA_FUZZ_MERGE_ORDER:
 *   check (default)   abort (a finding, with both documents printed);
 *   again             check property 2 only (abort), not 3;
 *   collect:DIR       write the input to DIR/again-<hash> or DIR/reverse-<hash>
 *                     (the first 300 a process meets) and go on;
 *   off               do not check them.
 */
#include "fuzz.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobdoc.h"
#include "sa_slurmtext.h" /* sa_parse_int64 */

#define FZ_MAX_RECORDS 12
#define FZ_BASE_AT INT64_C(1790064000) /* 2026-09-21T08:00:00Z */
#define FZ_SEP "\n%%\n"

typedef struct {
    sa_job_t *job;
    int64_t at;
    char *release, *data_parser;
} fz_rec_t;

typedef struct {
    fz_rec_t v[FZ_MAX_RECORDS];
    size_t n;
    int64_t at;     /* observation time of the capture being parsed */
    sa_meta_t meta; /* its meta (release, data_parser) */
    size_t first;   /* records of the capture being parsed start here */
} fz_recs_t;

/* on_job: steals records of the first job id while there is room. */
static bool keep_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    fz_recs_t *R = ctx;

    (void)error;
    if (R->n == FZ_MAX_RECORDS || job->job_id == SA_UNSET || (R->n > 0 && job->job_id != R->v[0].job->job_id))
        return true;
    R->v[R->n].job = sa_job_steal(job);
    if (!R->v[R->n].job)
        fz_fail("sa_job_steal: out of memory");
    R->v[R->n].at = R->at;
    R->n++;
    return true;
}

/* Frees records v[from..n) and sets n to from. */
static void drop_records(fz_recs_t *R, size_t from)
{
    while (R->n > from) {
        fz_rec_t *r = &R->v[--R->n];
        sa_job_destroy(r->job);
        free(r->release);
        free(r->data_parser);
        memset(r, 0, sizeof *r);
    }
}

/* Parses one capture s[0..n) (a NUL-terminated copy) and keeps its records. */
static void parse_capture(fz_recs_t *R, const char *s, size_t n, size_t index)
{
    sa_sink_t sink = {keep_job, NULL, R, NULL, false, NULL};
    sa_reader_t r;
    sa_error_t error;
    const char *body = s;
    size_t i;
    bool ok;

    R->at = FZ_BASE_AT + (int64_t)index * 3600;
    if (n > 1 && s[0] == '@') {
        const char *nl = memchr(s, '\n', n);
        char *num = fz_strndup((const uint8_t *)s + 1, nl ? (size_t)(nl - s) - 1 : n - 1);
        int64_t at;
        if (sa_parse_int64(num, &at) && at > 0 && at < INT64_C(253402300800))
            R->at = at;
        free(num);
        body = nl ? nl + 1 : s + n;
    }
    for (i = 0; body + i < s + n && strchr(" \t\r\n", body[i]); i++)
        ;
    R->first = R->n;
    sa_meta_init(&R->meta);
    sa_error_clear(&error);
    sa_reader_init_mem(&r, body, (size_t)(s + n - body));
    if (body + i < s + n && body[i] == '{')
        ok = sa_parse_json(&r, &sink, &R->meta, NULL, &error);
    else
        ok = sa_parse_sacct_text(&r, NULL, &sink, &error);
    fz_check_error(ok, &error, "parse");
    if (!ok)
        drop_records(R, R->first);
    for (i = R->first; i < R->n; i++) {
        R->v[i].release = R->meta.slurm_release ? strdup(R->meta.slurm_release) : NULL;
        R->v[i].data_parser = R->meta.data_parser ? strdup(R->meta.data_parser) : NULL;
    }
    sa_meta_clear(&R->meta);
}

/* Splits data at FZ_SEP lines and parses each capture. */
static void parse_input(fz_recs_t *R, const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    size_t pos = 0, index = 0;

    if (size >= 3 && memcmp(s, "%%\n", 3) == 0)
        pos = 3;
    while (pos <= size && R->n < FZ_MAX_RECORDS) {
        char *sep = strstr(s + pos, FZ_SEP); /* a NUL ends the input */
        size_t end = sep ? (size_t)(sep - s) : pos + strlen(s + pos);
        s[end] = '\0';
        parse_capture(R, s + pos, end - pos, index++);
        if (!sep)
            break;
        pos = end + strlen(FZ_SEP);
    }
    free(s);
}

/* Merges record i into *doc; aborts when the merge fails. */
static sa_merge_kind_t merge(json_t **doc, const fz_rec_t *r)
{
    sa_obs_ctx_t ctx = {"fuzz", r->at, r->release, r->data_parser};
    sa_merge_kind_t kind;
    json_t *superseded = NULL;
    sa_error_t error;

    sa_error_clear(&error);
    if (!sa_jobdoc_merge(doc, r->job, &ctx, &kind, &superseded, &error))
        fz_fail("sa_jobdoc_merge failed: %s", error.message);
    if ((kind == SA_MERGE_REUSED) != (superseded != NULL))
        fz_fail("sa_jobdoc_merge: kind %d with%s a superseded document", (int)kind, superseded ? "" : "out");
    json_decref(superseded);
    if (!*doc)
        fz_fail("sa_jobdoc_merge left no document");
    return kind;
}

/* A copy of doc without the bookkeeping of arrival order. */
static json_t *without_bookkeeping(const json_t *doc)
{
    json_t *c = json_deep_copy(doc), *run;
    size_t i;

    json_object_del(c, "seen");
    json_object_del(c, "_merge");
    json_object_del(json_object_get(c, "exit"), "_key");
    json_object_del(json_object_get(c, "derived_exit"), "_key");
    json_array_foreach(json_object_get(c, "runs"), i, run) {
        json_object_del(run, "_key");
    }
    return c;
}

/* FNV-1a of the input, to name a collected counterexample. */
static uint64_t fnv1a(const uint8_t *data, size_t size)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * UINT64_C(1099511628211);
    return h;
}

/* Prints two documents (compact, sorted keys) to stderr. */
static void print_docs(const char *name_a, const json_t *a, const char *name_b, const json_t *b)
{
    char *sa = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS), *sb = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);

    fprintf(stderr, "%s: %s\n%s: %s\n", name_a, sa ? sa : "?", name_b, sb ? sb : "?");
    free(sa);
    free(sb);
}

/* Property 2 or 3 (named by what) broken: abort, or keep the input (SA_FUZZ_MERGE_ORDER). */
static void order_broken(const char *what, const char *name_a, const json_t *a, const char *name_b,
                         const json_t *b, const uint8_t *data, size_t size)
{
    const char *mode = getenv("SA_FUZZ_MERGE_ORDER");

    if (mode && strncmp(mode, "collect:", 8) == 0) {
        static unsigned saved; /* a few hundred are plenty to minimise from */
        char path[4096];
        FILE *f;
        if (saved >= 300)
            return;
        saved++;
        snprintf(path, sizeof path, "%s/%s-%016" PRIx64, mode + 8, what, fnv1a(data, size));
        f = fopen(path, "wbx");
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
        return;
    }
    print_docs(name_a, a, name_b, b);
    fz_fail("sa_jobdoc_merge: %s", strcmp(what, "again") == 0
                                       ? "the records merged again, after all of them, changed the document"
                                       : "the records merged in reverse order give another document");
}

/* Property 1: rec merged right after itself changes nothing. */
static void check_twice(const json_t *doc, const fz_rec_t *rec, size_t i)
{
    json_t *again = json_deep_copy(doc);
    sa_merge_kind_t kind = merge(&again, rec);

    if ((kind != SA_MERGE_UNCHANGED && kind != SA_MERGE_STALE) || !json_equal(doc, again)) {
        print_docs("once", doc, "twice", again);
        fz_fail("sa_jobdoc_merge: record %zu merged twice in a row gives kind %d", i, (int)kind);
    }
    json_decref(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_recs_t R;
    json_t *doc = NULL, *again = NULL, *rev = NULL;
    const char *mode = getenv("SA_FUZZ_MERGE_ORDER");
    bool order = !(mode && strcmp(mode, "off") == 0);
    bool reverse = order && !(mode && strcmp(mode, "again") == 0);
    size_t i;

    memset(&R, 0, sizeof R);
    parse_input(&R, data, size);
    for (i = 0; i < R.n; i++) {
        sa_merge_kind_t kind = merge(&doc, &R.v[i]);
        if (i == 0 && kind != SA_MERGE_NEW)
            fz_fail("sa_jobdoc_merge: the first record gives kind %d, not NEW", (int)kind);
        check_twice(doc, &R.v[i], i);
    }
    if (order && R.n > 1) {
        /* 2. every record again, after all of them */
        again = json_deep_copy(doc);
        for (i = 0; i < R.n; i++)
            merge(&again, &R.v[i]);
        if (!json_equal(doc, again))
            order_broken("again", "merged once", doc, "merged again", again, data, size);
    }
    if (reverse && R.n > 1) {
        json_t *a, *b;
        /* 3. the reverse order */
        for (i = R.n; i-- > 0;)
            merge(&rev, &R.v[i]);
        a = without_bookkeeping(doc);
        b = without_bookkeeping(rev);
        if (!json_equal(a, b))
            order_broken("reverse", "in input order", a, "in reverse order", b, data, size);
        json_decref(a);
        json_decref(b);
    }
    json_decref(doc);
    json_decref(again);
    json_decref(rev);
    drop_records(&R, 0);
    return 0;
}
