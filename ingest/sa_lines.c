/*
 * sa_lines.c - reading text one line at a time from an sa_reader_t (see sa_lines.h).
 */
#include "sa_lines.h"
#include "sa_vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sa_lines_init(sa_lines_t *L, sa_reader_t *r)
{
    memset(L, 0, sizeof *L);
    L->r = r;
    L->off = r ? r->origin : 0;
}

void sa_lines_clear(sa_lines_t *L)
{
    if (!L)
        return;
    free(L->buf);
    free(L->line);
    memset(L, 0, sizeof *L);
}

/* Appends n bytes to the current line, growing it up to SA_LINES_CAP. */
static bool lines_append(sa_lines_t *L, const char *p, size_t n, sa_error_t *error)
{
    if (L->line_len + n > SA_LINES_CAP) {
        if (L->skip_long) {
            /* keep the first SA_LINES_CAP bytes; the rest of the line is dropped */
            L->too_long = true;
            n = SA_LINES_CAP - L->line_len;
        } else {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: longer than %d bytes", L->lineno + 1, SA_LINES_CAP);
            return false;
        }
    }
    if (!SA_VEC_GROW(L->line, L->line_cap, L->line_len, n + 1, 256)) {
        sa_error_nomem(error);
        return false;
    }
    memcpy(L->line + L->line_len, p, n);
    L->line_len += n;
    return true;
}

/* Reads the next line; the read buffer is allocated on the first call (see sa_lines.h). */
int sa_lines_next(sa_lines_t *L, sa_error_t *error)
{
    if (!L->buf) {
        L->buf = malloc(SA_LINES_CHUNK);
        if (!L->buf) {
            sa_error_nomem(error);
            return -1;
        }
    }
    L->line_len = 0;
    L->line_off = L->off;
    L->too_long = false;
    L->unterminated = false;
    if (!lines_append(L, "", 0, error))
        return -1;
    for (;;) {
        if (L->pos < L->len) {
            char *start = L->buf + L->pos;
            char *nl = memchr(start, '\n', L->len - L->pos);
            size_t n = nl ? (size_t)(nl - start) : L->len - L->pos;

            if (!lines_append(L, start, n, error))
                return -1;
            L->pos += n + (nl ? 1 : 0);
            L->off += n + (nl ? 1 : 0);
            if (nl)
                break;
        }
        if (L->eof) {
            if (L->line_len == 0)
                return 0;
            L->unterminated = true;
            break; /* last line without "\n" */
        }
        {
            ssize_t n = L->r->read(L->r, L->buf, SA_LINES_CHUNK, error);
            if (n < 0)
                return -1;
            L->len = (size_t)n;
            L->pos = 0;
            if (n == 0)
                L->eof = true;
        }
    }
    L->lineno++;
    L->next_off = L->off;
    if (L->line_len > 0 && L->line[L->line_len - 1] == '\r')
        L->line_len--;
    L->line[L->line_len] = '\0';
    return L->too_long ? 2 : 1;
}
