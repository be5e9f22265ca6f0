/*
 * sa_json_stream.c - walks a Slurm JSON document one record at a time.
 *
 * Slurm prints one big object ({"meta": .., "jobs": [ ... ], "errors": [..]}); a
 * large cluster's squeue or sacct output runs to hundreds of megabytes. Instead of
 * decoding the whole document, this walker reads the input in chunks and hands the
 * top-level object's values - and each element of the "jobs", "nodes" and "sinfo"
 * arrays - to jansson one at a time. Only the punctuation between those values
 * ('{', ':', ',', '[', ']', '}') is looked at here; every value, key and string is
 * decoded by jansson. Memory is bounded by the largest single record, not by the
 * document.
 *
 * An object, array or string value is first cut out by a boundary scan (brackets
 * and string quotes only, resumed where it stopped when more input arrives, so a
 * record costs time linear in its size however the input trickles in), which also
 * copies it without the whitespace between tokens (Slurm indents its output: about
 * half the bytes); jansson then decodes that copy from memory. When jansson refuses
 * the copy, or the input ends first, the value is decoded again from the original
 * bytes (json_loadb with JSON_DISABLE_EOF_CHECK, which decodes one value and reports
 * where it ended), so every error names the byte of the input it is at.
 *
 * The scan also notes where a record's members start and end (its ':' and ',' at
 * depth 1): the elements of the record arrays are decoded member by member through
 * sa_json_memo.c, which decodes a member value only when its text differs from the
 * last one under the same key (most of a squeue job's ~130 members repeat from job
 * to job), so records of one document share those values.
 *
 * The readers, the kinds and sa_parse_any, which sends an input to this walker or to a
 * text parser, are sa_parse.c's.
 */
#include "sa_parse.h"

#include "sa_vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_json.h"
#include "sa_json_memo.h"
#include "sa_lines.h"
#include "sa_utf8.h"

#define STREAM_CHUNK (256 * 1024)
#define STREAM_MAX_RECORD (512u * 1024 * 1024) /* one record larger than this is refused */
/* A record nested deeper is decoded whole: jansson counts depth from the value it
 * starts at (and stops at 2048), so members are decoded one by one only well below. */
#define SPLIT_MAX_DEPTH 1024
#define STREAM_SLACK 16 /* a decoding error this close to the end of the buffer waits for more input */

/* ---- the chunk buffer ----------------------------------------------------------- */

typedef struct {
    sa_reader_t *r;
    char *buf;
    size_t cap, len, pos; /* valid bytes buf[pos..len) */
    size_t consumed;      /* bytes dropped from the front so far (for offsets) */
    bool eof;
    /* the boundary scan of the value that starts at pos (see scan_value) */
    char *out;            /* the value without whitespace between tokens */
    size_t out_len, out_cap;
    size_t scan;          /* bytes from pos scanned so far */
    size_t depth;         /* open objects and arrays */
    bool in_str, esc;     /* inside a string; after its backslash */
    bool gap;             /* whitespace skipped since the last byte kept */
    size_t *seps;         /* offsets in out of the ':' and ',' at depth 1 */
    size_t nseps, seps_cap;
    bool deep;            /* nested deeper than SPLIT_MAX_DEPTH */
    /* record elements (set by doc_array when the sink sets bad records aside): */
    bool elem_tolerant;   /* a complete element jansson refuses is skipped, not an error */
    const char *raw;      /* the last element's bytes as read (valid until the next read) */
    size_t raw_len;
    uint64_t raw_off;     /* their offset in the input */
    bool repaired;        /* it was decoded after invalid UTF-8 was replaced */
    bool undecodable;     /* it was skipped: undecodable_why says why */
    char undecodable_why[200];
} stream_t;

/* Frees what the stream allocated (not its reader). */
static void stream_free(stream_t *s)
{
    free(s->buf);
    free(s->out);
    free(s->seps);
}

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
        if ((s->cap ? s->cap * 2 : STREAM_CHUNK) > STREAM_MAX_RECORD) {
            sa_error_set(error, SA_ERR_INPUT, 0, "a single JSON record at byte %zu is larger than %u MiB",
                         stream_offset(s), STREAM_MAX_RECORD >> 20);
            return false;
        }
        if (!SA_VEC_GROW(s->buf, s->cap, s->len, 1, STREAM_CHUNK)) {
            sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "out of memory reading input");
            return false;
        }
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

/* Byte classes of the boundary scan; every byte not listed is part of a token. */
enum { B_TOKEN = 0, B_SPACE, B_QUOTE, B_OPEN, B_CLOSE, B_PUNCT };
static const unsigned char byte_class[256] = {
    [' '] = B_SPACE, ['\t'] = B_SPACE, ['\n'] = B_SPACE, ['\r'] = B_SPACE, ['"'] = B_QUOTE,
    ['{'] = B_OPEN,  ['['] = B_OPEN,    ['}'] = B_CLOSE,   [']'] = B_CLOSE,   [','] = B_PUNCT, [':'] = B_PUNCT,
};

/*
 * Eight bytes at a time where that is simple (little-endian): a word with a zero byte
 * has that byte's high bit set in zero_bytes(word), and the lowest bit set there is
 * exactly the first zero byte.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SCAN_WORDS 1
#define BYTES(c) (0x0101010101010101ULL * (unsigned char)(c))
static inline uint64_t zero_bytes(uint64_t w)
{
    return (w - BYTES(1)) & ~w & BYTES(0x80);
}
#else
#define SCAN_WORDS 0
#endif
#define SCAN_SLACK 8 /* bytes out may be written past the copy */

/* Copies p[i..n) to *o up to the first '"' or backslash; returns that byte's index (or n). */
static size_t copy_string_run(const unsigned char *p, size_t i, size_t n, char **o)
{
    char *q = *o;
#if SCAN_WORDS
    while (i + 8 <= n) {
        uint64_t w, m;
        memcpy(&w, p + i, 8);
        memcpy(q, &w, 8); /* whole words: out has SCAN_SLACK spare bytes */
        m = zero_bytes(w ^ BYTES('"')) | zero_bytes(w ^ BYTES('\\'));
        if (m) {
            size_t k = (size_t)__builtin_ctzll(m) / 8;
            *o = q + k;
            return i + k;
        }
        i += 8;
        q += 8;
    }
#endif
    while (i < n && p[i] != '"' && p[i] != '\\')
        *q++ = (char)p[i++];
    *o = q;
    return i;
}

/* Returns the index of the first byte of p[i..n) that is not JSON whitespace (or n). */
static size_t skip_blanks(const unsigned char *p, size_t i, size_t n)
{
    while (i < n) {
#if SCAN_WORDS
        if (i + 8 <= n) { /* indentation: runs of spaces */
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w ^= BYTES(' '))) {
                i += 8;
                continue;
            }
            i += (size_t)__builtin_ctzll(w) / 8;
        }
#endif
        if (byte_class[p[i]] != B_SPACE)
            break;
        i++;
    }
    return i;
}

/* Notes a member separator of the value being scanned; false on OOM. */
static bool push_sep(stream_t *s, size_t at)
{
    if (!SA_VEC_GROW(s->seps, s->seps_cap, s->nseps, 1, 256))
        return false;
    s->seps[s->nseps++] = at;
    return true;
}

/*
 * Scans the buffered bytes of the value that starts at pos ('{', '[' or '"'), from
 * where the last call stopped, appending them to s->out without the whitespace
 * outside strings (one space is kept between two token bytes, so "1 2" stays two
 * tokens and invalid). Only brackets, quotes and backslashes inside strings are
 * looked at: the copy has the same tokens as the input, and jansson judges them.
 * The ':' and ',' at depth 1 are noted in s->seps (for sa_json_memo_object).
 * Returns 1 with *vlen (bytes of input) when the value is complete, 0 when it needs
 * more input, -1 when out of memory.
 */
static int scan_value(stream_t *s, size_t *vlen)
{
    const unsigned char *p = (const unsigned char *)s->buf + s->pos;
    size_t n = s->len - s->pos, i = s->scan, depth = s->depth;
    bool in_str = s->in_str, esc = s->esc, gap = s->gap, done = false;
    char *o;

    /* the copy is never longer than the input (and a space kept from the last call) */
    if (!SA_VEC_GROW(s->out, s->out_cap, s->out_len, n - i + 1 + SCAN_SLACK, 4096))
        return -1;
    o = s->out + s->out_len;
    while (i < n && !done) {
        unsigned char c;
        if (in_str) {
            if (esc) { /* the byte after a backslash */
                *o++ = (char)p[i++];
                esc = false;
                continue;
            }
            if ((i = copy_string_run(p, i, n, &o)) == n)
                break;
            c = p[i++];
            *o++ = (char)c;
            if (c == '\\') {
                esc = true;
            } else {
                in_str = false;
                done = depth == 0;
            }
            continue;
        }
        c = p[i++];
        switch (byte_class[c]) {
        case B_SPACE:
            i = skip_blanks(p, i, n);
            gap = true;
            continue;
        case B_TOKEN: /* a number or a literal: copied to its end */
            if (gap && o > s->out && byte_class[(unsigned char)o[-1]] == B_TOKEN)
                *o++ = ' ';
            *o++ = (char)c;
            while (i < n && byte_class[p[i]] == B_TOKEN)
                *o++ = (char)p[i++];
            gap = false;
            continue;
        case B_QUOTE:
            in_str = true;
            break;
        case B_OPEN:
            if (++depth > SPLIT_MAX_DEPTH)
                s->deep = true;
            break;
        case B_PUNCT:
            if (depth == 1 && !push_sep(s, (size_t)(o - s->out)))
                return -1;
            break;
        case B_CLOSE:
            if (depth > 0)
                depth--;
            done = depth == 0;
            break;
        }
        gap = false;
        *o++ = (char)c;
    }
    s->out_len = (size_t)(o - s->out);
    s->scan = i;
    s->depth = depth;
    s->in_str = in_str;
    s->esc = esc;
    s->gap = gap;
    *vlen = i;
    return done;
}

/* Skips a complete element that cannot be decoded (tolerant mode): 2, with why kept. */
static int skip_element(stream_t *s, size_t vlen, const char *why)
{
    s->undecodable = true;
    snprintf(s->undecodable_why, sizeof s->undecodable_why, "%s", why);
    s->pos += vlen;
    return 2;
}

/*
 * Decodes text[0..len) with jansson as every record is: integers beyond int64 (Slurm's
 * unsigned NO_VAL64) as reals; with tolerant, a value with bytes that are not UTF-8 (a
 * name) again with U+FFFD in their place (*repaired). *out NULL with *jerr when it cannot
 * be decoded; false only when out of memory.
 */
static bool decode_value(const char *text, size_t len, bool tolerant, json_t **out, bool *repaired,
                         json_error_t *jerr)
{
    *out = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, jerr);
    if (!*out && strstr(jerr->text, "too big integer"))
        *out = json_loadb(text, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, jerr);
    if (!*out && tolerant && !sa_utf8_valid((const unsigned char *)text, len)) {
        size_t n;
        char *fixed = sa_utf8_repair((const unsigned char *)text, len, &n);
        if (!fixed)
            return false;
        *out = json_loadb(fixed, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, jerr);
        free(fixed);
        *repaired = *out != NULL;
    }
    return true;
}

/*
 * Decodes the object, array or string at pos through the boundary scan (reading
 * more input as needed); an object member by member through memo when there is one.
 * Returns 1 with *out (a new reference) and pos moved past the value; 0 when the
 * original bytes must be decoded instead (the input ended inside the value, or
 * jansson refused the copy: the caller then reports the error where it is in the
 * input); -1 with *error set on a read error or out of memory.
 */
static int stream_scanned_value(stream_t *s, sa_json_memo_t *memo, json_t **out, sa_error_t *error)
{
    json_error_t jerr;
    size_t vlen;
    int r;

    *out = NULL;
    s->out_len = s->scan = s->depth = s->nseps = 0;
    s->in_str = s->esc = s->gap = s->deep = false;
    while ((r = scan_value(s, &vlen)) == 0) {
        if (s->eof)
            return 0;
        if (!stream_fill(s, error))
            return -1;
    }
    if (r < 0) {
        sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "out of memory reading input");
        return -1;
    }
    s->raw = s->buf + s->pos;
    s->raw_len = vlen;
    s->raw_off = s->r->origin + stream_offset(s);
    /* jansson skips a NUL byte between tokens without counting it in the position it
     * reports: a value with one is left to the original bytes (and refused there) */
    if (memchr(s->out, '\0', s->out_len))
        return s->elem_tolerant ? skip_element(s, vlen, "a NUL byte") : 0;
    if (memo && !s->deep)
        *out = sa_json_memo_object(memo, s->out, s->out_len, s->seps, s->nseps);
    if (!*out && !decode_value(s->out, s->out_len, s->elem_tolerant, out, &s->repaired, &jerr)) {
        sa_error_nomem(error);
        return -1;
    }
    if (!*out)
        return s->elem_tolerant ? skip_element(s, vlen, jerr.text) : 0;
    s->pos += vlen;
    return 1;
}

/*
 * Decodes the next JSON value with jansson: objects, arrays and strings through the
 * boundary scan; anything else (and any value the scan hands back) from the input
 * bytes, reading more while the value is cut off by the end of the buffer (and, for
 * a value that ends exactly there, once more, since "12" may continue as "123").
 * Integers beyond int64 (Slurm's unsigned NO_VAL64) are decoded as reals. Returns a
 * new reference or NULL with *error set.
 */
static json_t *stream_value(stream_t *s, sa_json_memo_t *memo, sa_error_t *error)
{
    bool ok;
    int c = stream_peek(s, &ok, error);

    if (c < 0) {
        if (ok)
            sa_error_set(error, SA_ERR_INPUT, 0, "truncated JSON: input ends at byte %zu", stream_offset(s));
        return NULL;
    }
    if (c == '{' || c == '[' || c == '"') {
        json_t *v;
        int r = stream_scanned_value(s, memo, &v, error);
        if (r == 2)
            sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON record: %s", s->undecodable_why);
        if (r != 0)
            return v;
    }
    for (;;) {
        json_error_t jerr;
        size_t avail = s->len - s->pos;
        size_t flags = JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES;
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
    sa_json_memo_t *memo; /* member values of the records decoded so far */
    bool convert_failed;  /* the last element could not be converted to a record */
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

/* The kind of an element of "jobs" (squeue's or sacct's); else an error naming it jobs[index]. */
static bool job_elem_kind(const json_t *elem, size_t index, sa_kind_t *k, sa_error_t *error)
{
    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "jobs[%zu]: expected an object", index);
        return false;
    }
    *k = sa_job_json_kind(elem);
    if (*k == SA_KIND_UNKNOWN) {
        sa_error_set(error, SA_ERR_INPUT, 0,
                     "jobs[%zu]: neither a squeue record (job_state) nor a sacct record (state, time)", index);
        return false;
    }
    return true;
}

/* A new record from an element of kind k; NULL with *error (*convert_failed: its content was refused). */
static sa_job_t *job_from_elem(const json_t *elem, sa_kind_t k, bool *convert_failed, sa_error_t *error)
{
    sa_job_t *job = sa_job_new(k == SA_KIND_SQUEUE_JSON ? SA_SRC_SQUEUE : SA_SRC_SACCT_JSON);
    bool ok;

    *convert_failed = false;
    if (!job) {
        sa_error_nomem(error);
        return NULL;
    }
    ok = k == SA_KIND_SQUEUE_JSON ? sa_job_from_squeue_json(elem, job, error)
                                  : sa_job_from_sacct_json(elem, job, error);
    if (!ok) {
        *convert_failed = true;
        sa_job_destroy(job);
        return NULL;
    }
    return job;
}

/* Converts one element of "jobs" and hands it to the sink. */
static bool doc_job(doc_t *d, const json_t *elem, sa_error_t *error)
{
    sa_kind_t k;
    sa_job_t *job;
    bool ok;

    if (!job_elem_kind(elem, d->index, &k, error) || !doc_set_kind(d, k, error))
        return false;
    if (!(job = job_from_elem(elem, k, &d->convert_failed, error)))
        return false;
    ok = !d->sink->on_job || d->sink->on_job(job, d->sink->ctx, error);
    sa_job_destroy(job);
    return ok;
}

bool sa_json_job_record(const char *rec, size_t len, sa_json_memo_t *memo, sa_job_t **out, sa_error_t *error)
{
    /* the element walked as doc_array walks one: the same scan, memo and repairs */
    sa_reader_t r;
    stream_t s = {.r = &r, .elem_tolerant = true};
    json_t *elem;
    sa_kind_t k;
    bool failed;

    *out = NULL;
    sa_reader_init_mem(&r, rec, len);
    elem = stream_value(&s, memo, error);
    if (!elem && s.undecodable)
        sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON record: %s", s.undecodable_why);
    if (elem && job_elem_kind(elem, 0, &k, error))
        *out = job_from_elem(elem, k, &failed, error);
    json_decref(elem);
    stream_free(&s);
    return *out != NULL;
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
        sa_error_nomem(error);
        return false;
    }
    ok = sa_node_from_json(elem, node, error);
    d->convert_failed = !ok;
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
        sa_error_nomem(error);
        return false;
    }
    if (d->sink && d->sink->no_node_extra)
        sa_sinfo_acc_no_extra(d->sinfo);
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
        /* anything but an array is the wrong type; null too: it is not a complete
         * listing (an empty queue is []), and taking it for one would mark every
         * unfinished job vanished */
        size_t at = stream_offset(s);
        json_t *v = stream_value(s, NULL, error);
        if (!v)
            return false;
        sa_error_set(error, SA_ERR_INPUT, 0, "\"%s\" at byte %zu: expected an array, got %s", key, at,
                     json_is_null(v)     ? "null"
                     : json_is_object(v) ? "an object"
                     : json_is_string(v) ? "a string"
                                         : "a scalar");
        json_decref(v);
        return false;
    }
    s->pos++;
    d->index = 0;
    if (!d->memo && !(d->memo = sa_json_memo_new())) {
        sa_error_nomem(error);
        return false;
    }
    c = stream_peek(s, &ok, error);
    if (!ok)
        return false;
    if (c == ']') {
        s->pos++;
        return true;
    }
    s->elem_tolerant = d->sink && d->sink->on_setaside && each != doc_sinfo;
    for (;;) {
        json_t *elem;
        sa_error_t why;
        s->repaired = s->undecodable = false;
        d->convert_failed = false;
        elem = stream_value(s, d->memo, error);
        if (!elem && !s->undecodable)
            return false;
        if (d->sink && d->sink->span)
            *d->sink->span = (sa_span_t){s->raw_off, s->raw_len, NULL, 0, NULL};
        ok = elem && each(d, elem, s->elem_tolerant ? &why : error);
        json_decref(elem);
        if (s->elem_tolerant && (s->undecodable || (!ok && d->convert_failed && why.domain == SA_ERR_INPUT))) {
            char msg[400];
            snprintf(msg, sizeof msg, "%.20s[%zu]: %.360s", key, d->index, s->undecodable ? error->message : why.message);
            if (!d->sink->on_setaside(s->raw, s->raw_len, msg, false, d->sink->ctx, error))
                return false;
        } else if (!ok) {
            if (s->elem_tolerant && error)
                *error = why;
            return false;
        } else if (s->repaired) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s[%zu]: not UTF-8: invalid bytes replaced by U+FFFD", key, d->index);
            if (!d->sink->on_setaside(s->raw, s->raw_len, msg, true, d->sink->ctx, error))
                return false;
        }
        d->index++;
        if (!stream_expect(s, ",]", &c, error))
            return false;
        if (c == ']')
            return true;
    }
}

/* What a top-level member other than the records (k: v) tells meta: "meta", "errors", "warnings", "last_update". */
static void top_value_meta(const char *k, const json_t *v, sa_meta_t *meta)
{
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

bool sa_parse_json(sa_reader_t *r, const sa_sink_t *sink, sa_meta_t *meta, sa_kind_t *kind_out, sa_error_t *error)
{
    stream_t s = {.r = r};
    doc_t d = {.sink = sink, .meta = meta, .kind = SA_KIND_UNKNOWN};
    json_t *seen = json_object(); /* the top-level keys so far */
    bool ok = false, saw_records = false;
    sa_kind_t empty_kind = SA_KIND_UNKNOWN;
    int c;

    if (!seen) {
        sa_error_nomem(error);
        goto done;
    }
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
            json_t *key = stream_value(&s, NULL, error);
            const char *k;
            if (!key)
                goto fail;
            if (!json_is_string(key)) {
                json_decref(key);
                sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON at byte %zu: expected a key", stream_offset(&s));
                goto fail;
            }
            k = json_string_value(key);
            /* a key twice would leave one of two values unsaid: Slurm never prints one twice */
            if (json_object_get(seen, k) || json_object_set_new(seen, k, json_true()) != 0) {
                sa_error_set(error, SA_ERR_INPUT, 0, "invalid JSON at byte %zu: duplicate key \"%.64s\" at top level",
                             stream_offset(&s), k);
                json_decref(key);
                goto fail;
            }
            if (!stream_expect(&s, ":", NULL, error)) {
                json_decref(key);
                goto fail;
            }
            if (strcmp(k, "jobs") == 0 || strcmp(k, "nodes") == 0 || strcmp(k, "sinfo") == 0) {
                bool (*each)(doc_t *, const json_t *, sa_error_t *) =
                    k[0] == 'j' ? doc_job : k[0] == 'n' ? doc_node : doc_sinfo;
                if (!saw_records) /* the kind of an empty array: its key's */
                    empty_kind = k[0] == 'j' ? SA_KIND_SQUEUE_JSON : k[0] == 'n' ? SA_KIND_NODES_JSON : SA_KIND_SINFO_JSON;
                saw_records = true;
                if (!doc_array(&d, &s, k, each, error)) {
                    json_decref(key);
                    goto fail;
                }
            } else {
                json_t *v = stream_value(&s, NULL, error);
                if (!v) {
                    json_decref(key);
                    goto fail;
                }
                if (meta)
                    top_value_meta(k, v, meta);
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
        d.kind = empty_kind; /* an empty "jobs" array is squeue's: nothing tells it from sacct's */
    ok = true;
    goto done;
fail:
    ok = false;
done:
    if (kind_out)
        *kind_out = d.kind;
    sa_sinfo_acc_destroy(d.sinfo);
    sa_json_memo_destroy(d.memo);
    json_decref(seen);
    stream_free(&s);
    return ok;
}
