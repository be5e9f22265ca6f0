/*
 * sa_json_stream.c - walks a Slurm JSON document one record at a time.
 *
 * Slurm prints one big object ({"meta": .., "jobs": [ ... ], "errors": [..]}); a
 * large cluster's squeue or sacct output runs to hundreds of megabytes. Instead of
 * decoding the whole document, this walker reads the input in chunks and hands the
 * top-level object's values - and each element of the "jobs", "nodes" and "sinfo"
 * arrays - to jansson one at a time (json_loadb with JSON_DISABLE_EOF_CHECK, which
 * decodes one value and reports where it ended). Only the punctuation between
 * those values ('{', ':', ',', '[', ']', '}') is looked at here; every value,
 * key and string is decoded by jansson. Memory is bounded by the largest single
 * record, not by the document.
 */
#include "sa_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_json.h"

#define STREAM_CHUNK (256 * 1024)
#define STREAM_MAX_RECORD (512u * 1024 * 1024) /* one record larger than this is refused */
#define STREAM_SLACK 16 /* a decoding error this close to the end of the buffer waits for more input */

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

/* ---- the chunk buffer ----------------------------------------------------------- */

typedef struct {
    sa_reader_t *r;
    char *buf;
    size_t cap, len, pos; /* valid bytes buf[pos..len) */
    size_t consumed;      /* bytes dropped from the front so far (for offsets) */
    bool eof;
} stream_t;

static size_t stream_offset(const stream_t *s)
{
    return s->consumed + s->pos;
}

/*
 * Reads more input: drops consumed bytes, grows the buffer when it is full.
 * Returns false on a read error or when a record outgrows STREAM_MAX_RECORD.
 */
static bool stream_fill(stream_t *s, sa_error_t *error)
{
    ssize_t n;

    if (s->eof)
        return true;
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->len -= s->pos;
        s->consumed += s->pos;
        s->pos = 0;
    }
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : STREAM_CHUNK;
        char *b;
        if (cap > STREAM_MAX_RECORD) {
            sa_error_set(error, SA_ERR_INPUT, 0, "a single JSON record at byte %zu is larger than %u MiB",
                         stream_offset(s), STREAM_MAX_RECORD >> 20);
            return false;
        }
        b = realloc(s->buf, cap);
        if (!b) {
            sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory reading input");
            return false;
        }
        s->buf = b;
        s->cap = cap;
    }
    n = s->r->read(s->r, s->buf + s->len, s->cap - s->len, error);
    if (n < 0)
        return false;
    if (n == 0)
        s->eof = true;
    s->len += (size_t)n;
    return true;
}

/* Returns the next non-blank byte without consuming it, or -1 at the end (or on error, with ok false). */
static int stream_peek(stream_t *s, bool *ok, sa_error_t *error)
{
    *ok = true;
    for (;;) {
        while (s->pos < s->len) {
            char c = s->buf[s->pos];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                s->pos++;
            else
                return (unsigned char)c;
        }
        if (s->eof)
            return -1;
        if (!stream_fill(s, error)) {
            *ok = false;
            return -1;
        }
    }
}

/* Consumes the expected punctuation byte or fails with a message. */
static bool stream_expect(stream_t *s, const char *allowed, int *got, sa_error_t *error)
{
    bool ok;
    int c = stream_peek(s, &ok, error);

    if (!ok)
        return false;
    if (c < 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "truncated JSON: input ends at byte %zu", stream_offset(s));
        return false;
    }
    if (!strchr(allowed, c)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON at byte %zu: unexpected '%c'", stream_offset(s),
                     c >= 0x20 && c < 0x7f ? c : '?');
        return false;
    }
    s->pos++;
    if (got)
        *got = c;
    return true;
}

/*
 * Decodes the next JSON value with jansson. Reads more input while the value is cut
 * off by the end of the buffer (and, for a value that ends exactly there, once more,
 * since "12" may continue as "123"). Integers beyond int64 (Slurm's unsigned NO_VAL64)
 * are decoded as reals. Returns a new reference or NULL with *error set.
 */
static json_t *stream_value(stream_t *s, sa_error_t *error)
{
    bool ok;

    if (stream_peek(s, &ok, error) < 0) {
        if (ok)
            sa_error_set(error, SA_ERR_INPUT, 0, "truncated JSON: input ends at byte %zu", stream_offset(s));
        return NULL;
    }
    for (;;) {
        json_error_t jerr;
        size_t avail = s->len - s->pos;
        size_t flags = JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY;
        json_t *v = json_loadb(s->buf + s->pos, avail, flags, &jerr);

        if (!v && strstr(jerr.text, "too big integer"))
            v = json_loadb(s->buf + s->pos, avail, flags | JSON_DECODE_INT_AS_REAL, &jerr);
        if (v && ((size_t)jerr.position < avail || s->eof)) {
            s->pos += (size_t)jerr.position;
            return v;
        }
        /* an error near the end of what is buffered may be jansson meeting that end (a
         * NUL byte reads as one): decided only with more input, so that the message
         * does not depend on how the input was cut into reads */
        if (!v && ((size_t)jerr.position + STREAM_SLACK < avail || (s->eof && (size_t)jerr.position < avail)) &&
            !strstr(jerr.text, "premature end of input")) {
            sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON at byte %zu: %s",
                         stream_offset(s) + (size_t)jerr.position, jerr.text);
            return NULL;
        }
        json_decref(v);
        if (s->eof) {
            sa_error_set(error, SA_ERR_INPUT, 0, "truncated JSON: input ends at byte %zu inside a value",
                         s->consumed + s->len);
            return NULL;
        }
        /* read until the bytes at hand at least double before decoding again: a reader
         * that gives a few bytes a call (a slow pipe) would otherwise make the decoding
         * of one value quadratic in its size */
        for (size_t want = 2 * avail + 1; !s->eof && s->len - s->pos < want;) {
            if (!stream_fill(s, error))
                return NULL;
        }
    }
}

/* ---- the document ----------------------------------------------------------------- */

typedef struct {
    const sa_sink_t *sink;
    sa_meta_t *meta;
    sa_kind_t kind;
    sa_sinfo_acc_t *sinfo;
    size_t index; /* element index within the current array */
} doc_t;

/* Collects errors[] / warnings[] descriptions from Slurm. */
static void collect_messages(const json_t *arr, sa_strv_t *out)
{
    size_t i;
    json_t *item;

    if (!json_is_array(arr))
        return;
    json_array_foreach(arr, i, item) {
        const char *text = NULL;
        const json_t *d;
        if (json_is_string(item))
            text = json_string_value(item);
        else if ((d = json_object_get(item, "description")) && json_is_string(d) && json_string_length(d))
            text = json_string_value(d);
        else if ((d = json_object_get(item, "error")) && json_is_string(d))
            text = json_string_value(d);
        if (text)
            sa_strv_push(out, text);
    }
}

/* Notes the document kind; a document holding two kinds of records is refused. */
static bool doc_set_kind(doc_t *d, sa_kind_t k, sa_error_t *error)
{
    if (d->kind == SA_KIND_UNKNOWN || d->kind == k) {
        d->kind = k;
        return true;
    }
    sa_error_set(error, SA_ERR_INPUT, 0, "record %zu is %s, but earlier records were %s", d->index,
                 sa_kind_name(k), sa_kind_name(d->kind));
    return false;
}

/* Converts one element of "jobs" and hands it to the sink. */
static bool doc_job(doc_t *d, const json_t *elem, sa_error_t *error)
{
    sa_kind_t k;
    sa_job_t *job;
    bool ok;

    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "jobs[%zu]: expected an object", d->index);
        return false;
    }
    k = sa_job_json_kind(elem);
    if (k == SA_KIND_UNKNOWN) {
        sa_error_set(error, SA_ERR_INPUT, 0,
                     "jobs[%zu]: neither a squeue record (job_state) nor a sacct record (state, time)", d->index);
        return false;
    }
    if (!doc_set_kind(d, k, error))
        return false;
    job = sa_job_new(k == SA_KIND_SQUEUE_JSON ? SA_SRC_SQUEUE : SA_SRC_SACCT_JSON);
    if (!job) {
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    ok = k == SA_KIND_SQUEUE_JSON ? sa_job_from_squeue_json(elem, job, error)
                                  : sa_job_from_sacct_json(elem, job, error);
    if (ok && d->sink->on_job)
        ok = d->sink->on_job(job, d->sink->ctx, error);
    sa_job_destroy(job);
    return ok;
}

/* Converts one element of "nodes" and hands it to the sink. */
static bool doc_node(doc_t *d, const json_t *elem, sa_error_t *error)
{
    sa_node_t *node;
    bool ok;

    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "nodes[%zu]: expected an object", d->index);
        return false;
    }
    if (!doc_set_kind(d, SA_KIND_NODES_JSON, error))
        return false;
    node = sa_node_new();
    if (!node) {
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    ok = sa_node_from_json(elem, node, error);
    if (ok && d->sink->on_node)
        ok = d->sink->on_node(node, d->sink->ctx, error);
    sa_node_destroy(node);
    return ok;
}

static bool doc_sinfo(doc_t *d, const json_t *elem, sa_error_t *error)
{
    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "sinfo[%zu]: expected an object", d->index);
        return false;
    }
    if (!doc_set_kind(d, SA_KIND_SINFO_JSON, error))
        return false;
    if (!d->sinfo && !(d->sinfo = sa_sinfo_acc_new())) {
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    return sa_sinfo_acc_add(d->sinfo, elem, error);
}

/* Walks a record array ("jobs", "nodes", "sinfo") element by element. */
static bool doc_array(doc_t *d, stream_t *s, const char *key, bool (*each)(doc_t *, const json_t *, sa_error_t *),
                      sa_error_t *error)
{
    bool ok;
    int c = stream_peek(s, &ok, error);

    if (!ok)
        return false;
    if (c != '[') {
        /* null is an empty list; anything else is the wrong type */
        size_t at = stream_offset(s);
        json_t *v = stream_value(s, error);
        if (!v)
            return false;
        ok = json_is_null(v);
        if (!ok)
            sa_error_set(error, SA_ERR_INPUT, 0, "\"%s\" at byte %zu: expected an array, got %s", key,
                         at, json_is_object(v) ? "an object" : json_is_string(v) ? "a string" : "a scalar");
        json_decref(v);
        return ok;
    }
    s->pos++;
    d->index = 0;
    c = stream_peek(s, &ok, error);
    if (!ok)
        return false;
    if (c == ']') {
        s->pos++;
        return true;
    }
    for (;;) {
        json_t *elem = stream_value(s, error);
        if (!elem)
            return false;
        ok = each(d, elem, error);
        json_decref(elem);
        if (!ok)
            return false;
        d->index++;
        if (!stream_expect(s, ",]", &c, error))
            return false;
        if (c == ']')
            return true;
    }
}

bool sa_parse_json(sa_reader_t *r, const sa_sink_t *sink, sa_meta_t *meta, sa_kind_t *kind_out, sa_error_t *error)
{
    stream_t s = {.r = r};
    doc_t d = {.sink = sink, .meta = meta, .kind = SA_KIND_UNKNOWN};
    bool ok = false, saw_records = false;
    int c;

    c = stream_peek(&s, &ok, error);
    if (!ok)
        goto done;
    ok = false;
    if (c < 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "empty input");
        goto done;
    }
    if (c != '{') {
        sa_error_set(error, SA_ERR_INPUT, 0, "expected a JSON object at top level, found '%c'%s",
                     c >= 0x20 && c < 0x7f ? c : '?', c == '<' ? " (an HTML page?)" : "");
        goto done;
    }
    s.pos++;
    if (stream_peek(&s, &ok, error) == '}') {
        s.pos++;
    } else {
        if (!ok)
            goto done;
        for (;;) {
            json_t *key = stream_value(&s, error);
            const char *k;
            if (!key)
                goto fail;
            if (!json_is_string(key)) {
                json_decref(key);
                sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON at byte %zu: expected a key", stream_offset(&s));
                goto fail;
            }
            k = json_string_value(key);
            if (!stream_expect(&s, ":", NULL, error)) {
                json_decref(key);
                goto fail;
            }
            if (strcmp(k, "jobs") == 0 || strcmp(k, "nodes") == 0 || strcmp(k, "sinfo") == 0) {
                bool (*each)(doc_t *, const json_t *, sa_error_t *) =
                    k[0] == 'j' ? doc_job : k[0] == 'n' ? doc_node : doc_sinfo;
                saw_records = true;
                if (!doc_array(&d, &s, k, each, error)) {
                    json_decref(key);
                    goto fail;
                }
            } else {
                json_t *v = stream_value(&s, error);
                if (!v) {
                    json_decref(key);
                    goto fail;
                }
                if (meta) {
                    if (strcmp(k, "meta") == 0)
                        sa_json_meta(v, meta);
                    else if (strcmp(k, "errors") == 0)
                        collect_messages(v, &meta->errors);
                    else if (strcmp(k, "warnings") == 0)
                        collect_messages(v, &meta->warnings);
                    else if (strcmp(k, "last_update") == 0) {
                        int64_t t;
                        json_t *wrap = json_pack("{sO}", "t", v);
                        if (wrap && sa_json_get_time(wrap, "t", &t, NULL))
                            meta->last_update = t;
                        json_decref(wrap);
                    }
                }
                json_decref(v);
            }
            json_decref(key);
            if (!stream_expect(&s, ",}", &c, error))
                goto fail;
            if (c == '}')
                break;
        }
    }
    if (!saw_records) {
        if (meta && meta->errors.n)
            sa_error_set(error, SA_ERR_INPUT, 0, "Slurm reported an error and no records: %s", meta->errors.v[0]);
        else
            sa_error_set(error, SA_ERR_INPUT, 0,
                         "not Slurm JSON output: the top-level object has no \"jobs\", \"nodes\" or \"sinfo\" array");
        goto fail;
    }
    if (stream_peek(&s, &ok, error) >= 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "unexpected data after the JSON document at byte %zu",
                     stream_offset(&s));
        goto fail;
    }
    if (!ok)
        goto fail;
    if (d.sinfo && !sa_sinfo_acc_emit(d.sinfo, sink, error))
        goto fail;
    if (d.kind == SA_KIND_UNKNOWN)
        d.kind = SA_KIND_SQUEUE_JSON; /* an empty "jobs" array: nothing to tell them apart */
    ok = true;
    goto done;
fail:
    ok = false;
done:
    if (kind_out)
        *kind_out = d.kind;
    sa_sinfo_acc_destroy(d.sinfo);
    free(s.buf);
    return ok;
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
        sa_error_set(error, SA_ERR_INPUT, ENOMEM, "out of memory");
        return false;
    }
    /* read until a non-blank byte and 16 more bytes are in, or the input ends */
    for (;;) {
        ssize_t n;
        for (i = 0; i < p.pre_len && strchr(" \t\r\n", p.pre[i]); i++)
            ;
        if (eof || (i < p.pre_len && p.pre_len - i >= 16))
            break;
        if (p.pre_len == cap) {
            char *b = cap < (1u << 24) ? realloc(p.pre, cap * 2) : NULL;
            if (!b) {
                sa_error_set(error, SA_ERR_INPUT, 0, "input starts with more than 16 MiB of blank space");
                goto done;
            }
            p.pre = b;
            cap *= 2;
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
