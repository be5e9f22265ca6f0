/*
 * fuzz.c - helpers shared by the fuzz targets (see fuzz.h).
 */
#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void fz_fail(const char *fmt, ...)
{
    va_list ap;

    fputs("fuzz invariant broken: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

char *fz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        fz_fail("out of memory copying %zu bytes", size);
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void fz_check_error(bool ok, const sa_error_t *error, const char *what)
{
    if (ok)
        return;
    if (!error->message[0])
        fz_fail("%s failed without a message", what);
    for (const unsigned char *p = (const unsigned char *)error->message; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fz_fail("%s: error message holds control character 0x%02x: %s", what, *p, error->message);
    }
}

/* sa_reader_t.read of fz_reader_t: at most r->chunk bytes a call. */
static ssize_t chunk_read(sa_reader_t *base, char *buf, size_t cap, sa_error_t *error)
{
    fz_reader_t *r = (fz_reader_t *)base;
    size_t n = r->len - r->pos;

    (void)error;
    if (n > cap)
        n = cap;
    if (n > r->chunk)
        n = r->chunk;
    if (n)
        memcpy(buf, r->data + r->pos, n);
    r->pos += n;
    return (ssize_t)n;
}

void fz_reader_init(fz_reader_t *r, const char *data, size_t len, size_t chunk)
{
    memset(r, 0, sizeof *r);
    r->base.read = chunk_read;
    r->base.fd = -1;
    r->data = data;
    r->len = len;
    r->chunk = chunk ? chunk : 1;
}

/* on_job of fz_sink: renders the borrowed record into the array. */
static bool on_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    json_t *j = sa_job_to_json(job);

    (void)error;
    if (!j)
        fz_fail("sa_job_to_json returned NULL");
    json_array_append_new(ctx, j);
    return true;
}

/* on_node of fz_sink: renders the borrowed record into the array. */
static bool on_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    json_t *j = sa_node_to_json(node);

    (void)error;
    if (!j)
        fz_fail("sa_node_to_json returned NULL");
    json_array_append_new(ctx, j);
    return true;
}

sa_sink_t fz_sink(json_t *records)
{
    sa_sink_t s = {on_job, on_node, records, NULL, false, NULL};
    return s;
}

bool fz_parse_twice(fz_parse_fn parse, void *arg, const uint8_t *data, size_t size, const char *what)
{
    json_t *a = json_array(), *b = json_array();
    sa_sink_t sa = fz_sink(a), sb = fz_sink(b);
    sa_error_t ea, eb;
    fz_reader_t ra, rb;
    bool oka, okb;

    if (!a || !b)
        fz_fail("out of memory");
    sa_error_clear(&ea);
    sa_error_clear(&eb);
    fz_reader_init(&ra, (const char *)data, size, 1 + size % 29);
    fz_reader_init(&rb, (const char *)data, size, size);
    oka = parse(&ra.base, &sa, arg, &ea);
    okb = parse(&rb.base, &sb, arg, &eb);
    fz_check_error(oka, &ea, what);
    fz_check_error(okb, &eb, what);
    if (oka != okb)
        fz_fail("%s: read in chunks of %zu bytes %s, read whole %s (%s)", what, ra.chunk,
                oka ? "succeeds" : "fails", okb ? "succeeds" : "fails", oka ? eb.message : ea.message);
    if (!oka && strcmp(ea.message, eb.message) != 0)
        fz_fail("%s: read in chunks of %zu bytes fails with '%s', read whole with '%s'", what, ra.chunk,
                ea.message, eb.message);
    if (oka && !json_equal(a, b))
        fz_fail("%s: read in chunks of %zu bytes gives other records than read whole", what, ra.chunk);
    json_decref(a);
    json_decref(b);
    return oka;
}

bool fz_text_opts(const uint8_t **data, size_t *size, sa_sacct_text_opts_t *opts, char **line)
{
    const uint8_t *nl;
    size_t n;

    if (*size < 5 || memcmp(*data, "#opts", 5) != 0 || !(nl = memchr(*data, '\n', *size)))
        return false;
    n = (size_t)(nl - *data);
    *line = fz_strndup(*data, n);
    for (char *tok = strtok(*line + 5, "\t"); tok; tok = strtok(NULL, "\t")) {
        if (strncmp(tok, "d=", 2) == 0)
            opts->delimiter = tok + 2;
        else if (strncmp(tok, "f=", 2) == 0)
            opts->fields = tok + 2;
    }
    *data += n + 1;
    *size -= n + 1;
    return true;
}
