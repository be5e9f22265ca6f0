/*
 * sa_lines.h - reading Slurm's text outputs (sacct -P / -p, scontrol show nodes -o)
 * one line at a time from an sa_reader_t.
 *
 * The reader reads in chunks of SA_LINES_CHUNK bytes; the line buffer grows to the
 * longest line and refuses lines over SA_LINES_CAP bytes ("line N: longer than ...
 * bytes"). A line is handed out without its "\n" / "\r\n", NUL-terminated; the last
 * line may lack its "\n". No I/O of its own: the bytes come from the reader.
 */
#ifndef SA_LINES_H
#define SA_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_parse.h"

#define SA_LINES_CAP (1024 * 1024) /* a longer line is an error */
#define SA_LINES_CHUNK (64 * 1024) /* bytes asked of the reader at a time */

typedef struct {
    sa_reader_t *r;
    char *buf; /* SA_LINES_CHUNK bytes, allocated by the first sa_lines_next() */
    size_t len, pos;
    bool eof;
    char *line; /* current line, NUL-terminated, without "\n" / "\r\n" */
    size_t line_len, line_cap;
    size_t lineno; /* number of the current line, from 1 */
    bool skip_long; /* set by the caller: a line over SA_LINES_CAP is cut, not an error */
    bool too_long;  /* the current line was cut */
    bool unterminated; /* the current line is the last and has no "\n" (the input may be cut) */
    uint64_t off;      /* offset in the input (sa_reader_t origin) of buf[pos] */
    uint64_t line_off, next_off; /* the current line's bytes in the input, its "\n" included */
} sa_lines_t;

/* Starts reading lines from r (borrowed). Allocates nothing; sa_lines_clear() frees. */
void sa_lines_init(sa_lines_t *L, sa_reader_t *r);

/*
 * Reads the next line into L->line (L->line_len bytes, L->lineno its number).
 * Returns 1, 0 at the end of input, -1 on error (*error set: the reader's error,
 * "line N: longer than SA_LINES_CAP bytes", or out of memory); with L->skip_long, 2
 * for a line longer than SA_LINES_CAP (its first SA_LINES_CAP bytes in L->line).
 */
int sa_lines_next(sa_lines_t *L, sa_error_t *error);

/* Frees the buffers of L (L may be NULL); L can be initialised again. */
void sa_lines_clear(sa_lines_t *L);

#endif
