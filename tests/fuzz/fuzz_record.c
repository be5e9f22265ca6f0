/*
 * fuzz_record.c - every job record sa_parse_any hands out, read again alone from the
 * bytes its span names (sa_parse_record), is the same record: what slurm-ingest relies on
 * when it notes where a snapshot's changed records are instead of holding them.
 *
 * Parsed as slurm-ingest parses (bad records set aside, the rest kept). An input may start
 * with fuzz_sacct_text's options line ("#opts" and TAB-separated "d=<delimiter>",
 * "f=<fields>"). A record without a span (length 0: a line set aside among its lines) is
 * not read again.
 */
#include "fuzz.h"

#include "sa_json_memo.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    sa_span_t span;
    const char *data;
    size_t len;
    const sa_sacct_text_opts_t *opts;
    sa_json_memo_t *memo;
} rec_ctx_t;

static bool on_job(sa_job_t *job, void *vctx, sa_error_t *error)
{
    rec_ctx_t *c = vctx;
    sa_job_t *again = NULL;
    sa_error_t err;
    json_t *a, *b;
    (void)error;

    if (c->span.len == 0)
        return true;
    if (c->span.off + c->span.len > c->len)
        fz_fail("span [%llu, +%llu) beyond the %zu bytes of the input", (unsigned long long)c->span.off,
                (unsigned long long)c->span.len, c->len);
    if (!sa_parse_record(c->data + c->span.off, (size_t)c->span.len, c->span.header,
                         c->span.header_len, c->span.delimiter, c->opts, c->memo, &again, &err)) {
        if (err.domain == SA_ERR_NOMEM)
            return true;
        fz_fail("job %lld at byte %llu: alone: %s", (long long)job->job_id, (unsigned long long)c->span.off,
                err.message);
    }
    a = sa_job_to_json(job);
    b = sa_job_to_json(again);
    if (!json_equal(a, b)) {
        char *ta = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT), *tb = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
        fz_fail("job %lld at byte %llu reads otherwise alone:\n  whole: %s\n  alone: %s", (long long)job->job_id,
                (unsigned long long)c->span.off, ta, tb);
    }
    json_decref(a);
    json_decref(b);
    sa_job_destroy(again);
    return true;
}

static bool on_aside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    (void)raw, (void)len, (void)why, (void)kept, (void)ctx, (void)error;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sa_sacct_text_opts_t opts = {NULL, NULL, NULL};
    rec_ctx_t c;
    sa_sink_t sink = {on_job, NULL, &c, on_aside, true, &c.span};
    sa_reader_t r;
    sa_meta_t meta;
    sa_kind_t kind;
    sa_error_t err;
    char *line = NULL;
    bool have_opts;

    have_opts = fz_text_opts(&data, &size, &opts, &line);
    c = (rec_ctx_t){{0, 0, NULL, 0, NULL}, (const char *)data, size, have_opts ? &opts : NULL, sa_json_memo_new()};
    sa_meta_init(&meta);
    sa_reader_init_mem(&r, (const char *)data, size);
    (void)sa_parse_any(&r, c.opts, &sink, &meta, &kind, &err);
    sa_meta_clear(&meta);
    sa_json_memo_destroy(c.memo);
    free(line);
    return 0;
}
