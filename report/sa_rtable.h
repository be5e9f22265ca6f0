/*
 * sa_rtable.h - a report's rows as a table of typed cells, and its renderings:
 * aligned text under a header, '|'-separated (sacct -P), CSV (RFC 4180), JSON rows
 * and an HTML <table>. Every report builds one (or a few) of these and the output
 * format decides how it is written, so all formats always carry the same numbers.
 */
#ifndef SA_RTABLE_H
#define SA_RTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sa_model.h"

typedef enum { SA_COL_STR = 0, SA_COL_INT, SA_COL_NUM } sa_col_type_t;

typedef struct {
    const char *key;   /* JSON member, parsable/CSV header: "gpu_hours" */
    const char *title; /* table and HTML header: "GPU-hours" */
    sa_col_type_t type;
    int decimals;      /* SA_COL_NUM: digits after the point in text formats */
} sa_col_t;

typedef struct {
    enum { SA_CELL_NULL = 0, SA_CELL_STR, SA_CELL_INT, SA_CELL_NUM } kind;
    char *s;
    int64_t i;
    double d;
} sa_cell_t;

typedef struct {
    const sa_col_t *cols; /* borrowed, usually static */
    size_t ncols;
    sa_cell_t *cells;     /* row-major, nrows x ncols */
    size_t nrows, cap;
} sa_rtable_t;

void sa_rtable_init(sa_rtable_t *t, const sa_col_t *cols, size_t ncols);
void sa_rtable_clear(sa_rtable_t *t);
/* Appends a row of NULL cells; returns its index, or SIZE_MAX on out of memory. */
size_t sa_rtable_add_row(sa_rtable_t *t);
/* Set a cell (s is copied; NULL leaves the cell NULL). */
void sa_rtable_str(sa_rtable_t *t, size_t row, size_t col, const char *s);
void sa_rtable_int(sa_rtable_t *t, size_t row, size_t col, int64_t v);
void sa_rtable_num(sa_rtable_t *t, size_t row, size_t col, double v);
const sa_cell_t *sa_rtable_cell(const sa_rtable_t *t, size_t row, size_t col);

typedef enum { SA_TEXT_TABLE = 0, SA_TEXT_PARSABLE, SA_TEXT_CSV } sa_text_format_t;

/*
 * Writes the table as text. preamble (may be NULL): lines printed first - as they are
 * for TABLE (then a blank line), as "# line" comments for PARSABLE and CSV. no_header
 * drops the preamble and the column header line. CSV lines end in CRLF (RFC 4180).
 * Returns false when writing fails (errno set).
 */
bool sa_rtable_write_text(const sa_rtable_t *t, sa_text_format_t fmt, const sa_strv_t *preamble, bool no_header,
                          FILE *out);

/* The rows as a JSON array of objects keyed by sa_col_t.key (NULL cells as null). New reference. */
json_t *sa_rtable_to_json(const sa_rtable_t *t);

/* Writes an HTML <table> (with an optional <caption>); every string is escaped. */
void sa_rtable_write_html(const sa_rtable_t *t, const char *caption, FILE *out);

/* Writes s with & < > " ' escaped as HTML/XML character references. */
void sa_rxml_escape(FILE *out, const char *s);

/* Formats a cell as text (numbers with the column's decimals; "" for NULL) into buf. */
const char *sa_rtable_cell_text(const sa_rtable_t *t, size_t row, size_t col, char *buf, size_t bufsz);

#endif
