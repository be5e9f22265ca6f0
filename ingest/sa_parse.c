/*
 * sa_parse.c - the entry of sa_parse.h: byte sources (memory, a file descriptor), the
 * names of the kinds of input, and sa_parse_any, which looks at an input's first bytes
 * and hands it to the JSON walker (sa_json_stream.c) or to a text parser
 * (parse_sacct_text.c, parse_scontrol_text.c). The per-record converters are
 * parse_job_json.c's and parse_node_json.c's.
 */
#include "sa_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_json.h"
#include "sa_vec.h"

/* ---- readers ------------------------------------------------------------------ */

static ssize_t mem_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    size_t n = r->mem_len - r->mem_pos;
    (void)error;
    if (n > cap)
        n = cap;
    memcpy(buf, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return (ssize_t)n;
}

void sa_reader_init_mem(sa_reader_t *r, const char *data, size_t len)
{
    memset(r, 0, sizeof *r);
    r->read = mem_read;
    r->mem = data;
    r->mem_len = len;
    r->fd = -1;
}

static ssize_t fd_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    for (;;) {
        ssize_t n = read(r->fd, buf, cap);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        sa_error_set(error, SA_ERR_IO, errno, "read failed: %s", strerror(errno));
        return -1;
    }
}

void sa_reader_init_fd(sa_reader_t *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->read = fd_read;
    r->fd = fd;
}

const char *sa_kind_name(sa_kind_t k)
{
    switch (k) {
    case SA_KIND_SQUEUE_JSON:
        return "squeue JSON";
    case SA_KIND_SACCT_JSON:
        return "sacct JSON";
    case SA_KIND_NODES_JSON:
        return "node list JSON";
    case SA_KIND_SINFO_JSON:
        return "sinfo JSON";
    case SA_KIND_SACCT_TEXT:
        return "sacct text";
    case SA_KIND_SCONTROL_NODES_TEXT:
        return "scontrol nodes text";
    case SA_KIND_UNKNOWN:
        break;
    }
    return "unknown";
}

/* ---- dispatch on the first byte ------------------------------------------------------ */

/* A reader that first returns bytes already read, then delegates. */
typedef struct {
    sa_reader_t base; /* must be first */
    sa_reader_t *inner;
    char *pre;
    size_t pre_len, pre_pos;
} prefix_reader_t;

static ssize_t prefix_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    prefix_reader_t *p = (prefix_reader_t *)r;
    if (p->pre_pos < p->pre_len) {
        size_t n = p->pre_len - p->pre_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, p->pre + p->pre_pos, n);
        p->pre_pos += n;
        return (ssize_t)n;
    }
    return p->inner->read(p->inner, buf, cap, error);
}

bool sa_parse_any(sa_reader_t *r, const sa_sacct_text_opts_t *topts, const sa_sink_t *sink, sa_meta_t *meta,
                  sa_kind_t *kind_out, sa_error_t *error)
{
    prefix_reader_t p = {.inner = r};
    size_t cap = 4096, i;
    bool ok = false, eof = false;

    p.base.read = prefix_read;
    p.base.fd = -1;
    if (kind_out)
        *kind_out = SA_KIND_UNKNOWN;
    p.pre = malloc(cap);
    if (!p.pre) {
        sa_error_nomem(error);
        return false;
    }
    /* read until a non-blank byte and 16 more bytes are in, or the input ends */
    for (;;) {
        ssize_t n;
        /* a UTF-8 byte order mark (an editor's, a Windows tool's) is not part of the text */
        p.pre_pos = p.pre_len >= 3 && memcmp(p.pre, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        for (i = p.pre_pos; i < p.pre_len && strchr(" \t\r\n", p.pre[i]); i++)
            ;
        if (eof || (i < p.pre_len && p.pre_len - i >= 16))
            break;
        if (p.pre_len == cap && (cap >= (1u << 24) || !SA_VEC_GROW(p.pre, cap, p.pre_len, 1, cap))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "input starts with more than 16 MiB of blank space");
            goto done;
        }
        n = r->read(r, p.pre + p.pre_len, cap - p.pre_len, error);
        if (n < 0)
            goto done;
        if (n == 0)
            eof = true;
        p.pre_len += (size_t)n;
    }
    if (i == p.pre_len) {
        sa_error_set(error, SA_ERR_INPUT, 0, "empty input");
        goto done;
    }
    p.base.origin = r->origin + p.pre_pos;
    if (p.pre[i] == '{' || p.pre[i] == '[') {
        ok = sa_parse_json(&p.base, sink, meta, kind_out, error);
    } else if (p.pre_len - i >= 9 && memcmp(p.pre + i, "NodeName=", 9) == 0) {
        if (kind_out)
            *kind_out = SA_KIND_SCONTROL_NODES_TEXT;
        ok = sa_parse_scontrol_nodes_text(&p.base, sink, error);
    } else if (p.pre[i] == '<') {
        sa_error_set(error, SA_ERR_INPUT, 0, "input is HTML or XML, not Slurm output");
    } else {
        if (kind_out)
            *kind_out = SA_KIND_SACCT_TEXT;
        ok = sa_parse_sacct_text(&p.base, topts, sink, error);
    }
done:
    free(p.pre);
    return ok;
}

/* ---- one record again from its bytes ------------------------------------------------- */

typedef struct {
    sa_job_t *job;
    size_t n;
} one_record_t;

static bool one_record_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    one_record_t *o = ctx;
    if (o->n++ == 0 && !(o->job = sa_job_steal(job)))
        return sa_error_nomem(error);
    return true;
}

static bool one_record_aside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    (void)raw, (void)len, (void)why, (void)kept, (void)ctx, (void)error;
    return true; /* as in the whole input, where it was set aside once already */
}

bool sa_parse_record(const char *rec, size_t len, const char *header, size_t header_len, const char *delimiter,
                     const sa_sacct_text_opts_t *topts, struct sa_json_memo *memo, sa_job_t **out,
                     sa_error_t *error)
{
    sa_sacct_text_opts_t opts = {delimiter, topts ? topts->fields : NULL, topts ? topts->tz : NULL};
    one_record_t o = {NULL, 0};
    sa_sink_t sink = {one_record_job, NULL, &o, one_record_aside, false, NULL};
    sa_reader_t r;
    char *text;
    bool ok;

    *out = NULL;
    if (!delimiter)
        return sa_json_job_record(rec, len, memo, out, error);
    /* sacct text: the header line, then the record's lines, parsed as a whole input is
     * (set-aside lines among them are set aside again) */
    if (!(text = malloc(header_len + len + 1)))
        return sa_error_nomem(error);
    if (header_len)
        memcpy(text, header, header_len);
    memcpy(text + header_len, rec, len);
    sa_reader_init_mem(&r, text, header_len + len);
    ok = sa_parse_sacct_text(&r, &opts, &sink, error);
    free(text);
    if (ok && o.n != 1) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%zu records where one was (%zu bytes of sacct text)", o.n, len);
        ok = false;
    }
    if (!ok) {
        sa_job_destroy(o.job);
        return false;
    }
    *out = o.job;
    return true;
}
