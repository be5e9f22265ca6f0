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

#include "sa_error.h"
#include "sa_model.h"

typedef enum { SA_COL_STR = 0, SA_COL_INT, SA_COL_NUM } sa_col_type_t;

/* Column flags. */
enum {
    SA_COL_LONG = 1 << 0,  /* shown in the table and HTML only with -l/--long or -o (the JSON, CSV and
                              parsable formats carry every column unless -o chooses) */
    SA_COL_BADGE = 1 << 1, /* HTML: the cell gets the class "b b-<value>" (a status, a class) */
};

typedef struct {
    const char *key;   /* JSON member, parsable/CSV header, -o name: "gpu_hours" */
    const char *title; /* table and HTML header: "GPU-hours" */
    sa_col_type_t type;
    int decimals;      /* SA_COL_NUM: digits after the point in text formats */
    unsigned flags;    /* SA_COL_* */
} sa_col_t;

typedef struct {
    enum { SA_CELL_NULL = 0, SA_CELL_STR, SA_CELL_INT, SA_CELL_NUM } kind;
    char *s;
    int64_t i;
    double d;
} sa_cell_t;

/* Row flags. */
enum {
    SA_ROW_TOTAL = 1 << 0, /* a total of the rows before it: in the table and HTML, and in JSON under
                              "totals"; not in parsable and CSV output (one row per key there) */
};

typedef struct {
    const sa_col_t *cols; /* borrowed, usually static */
    size_t ncols;
    sa_cell_t *cells;     /* row-major, nrows x ncols */
    unsigned char *rflags; /* per row: SA_ROW_* */
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
/* Marks a row as a total (SA_ROW_TOTAL). */
void sa_rtable_mark_total(sa_rtable_t *t, size_t row);
static inline bool sa_rtable_is_total(const sa_rtable_t *t, size_t row)
{
    return (t->rflags[row] & SA_ROW_TOTAL) != 0;
}
/* Index of the column with key, or SIZE_MAX. */
size_t sa_rtable_col(const sa_rtable_t *t, const char *key);

/* ---- views: which columns are shown, in which order, how wide ----------------------------- */

/* A column asked for with -o: name[%[-]N] (sacct's --format). */
typedef struct {
    char *name;
    int width; /* 0: natural; N > 0: N characters right-justified; N < 0: -N left-justified */
} sa_colspec_t;

typedef struct {
    size_t *col;  /* table columns, in the order shown */
    int *width;   /* per shown column, as sa_colspec_t.width */
    size_t n;
} sa_rview_t;

/*
 * Parses an -o list "account,gpu_hours%12,status%-9" (names case-insensitive, '-' read
 * as '_'; each name [A-Za-z0-9_-]+). Appends to *specs (*n of them; free with
 * sa_colspecs_free). Fails (SA_ERR_USAGE) on anything else.
 */
bool sa_colspecs_parse(const char *s, sa_colspec_t **specs, size_t *n, sa_error_t *error);
void sa_colspecs_free(sa_colspec_t *specs, size_t n);

/*
 * The view of a table: the columns of specs when n > 0 (an unknown name fails with
 * SA_ERR_USAGE, listing the table's columns), else every column when all, else the
 * columns without SA_COL_LONG. Free with sa_rview_clear().
 */
bool sa_rview_make(const sa_rtable_t *t, const sa_colspec_t *specs, size_t n, bool all, sa_rview_t *v,
                   sa_error_t *error);
void sa_rview_clear(sa_rview_t *v);

typedef enum { SA_TEXT_TABLE = 0, SA_TEXT_PARSABLE, SA_TEXT_CSV } sa_text_format_t;

/* How a table is written as text. */
typedef struct {
    sa_text_format_t fmt;
    bool no_header;        /* no preamble (TABLE), no column header line */
    const char *delimiter; /* PARSABLE: between fields (NULL: "|") */
    bool trailing;         /* PARSABLE: after the last field too (sacct -p) */
    const sa_rview_t *view; /* NULL: every column, natural widths */
    bool titles;           /* PARSABLE: the header names the columns by their titles (sacct's field names) */
} sa_rtext_opts_t;

/*
 * Writes the table as text. preamble (may be NULL): lines printed first in TABLE (then
 * a blank line); PARSABLE and CSV are the column header and the rows only (as sacct's
 * and sreport's parsable output), the caller puts the preamble elsewhere. CSV lines
 * end in CRLF (RFC 4180); a text cell starting with = + - @ TAB or CR is written with a
 * ' first and quoted (OWASP's guard against CSV injection), numbers as they are. A column of the view with a width is padded to it and a longer
 * value cut, its last character shown as '+' (sacct); widths are for TABLE only. Total
 * rows (SA_ROW_TOTAL) are written in TABLE only. Returns false when writing fails (errno
 * set).
 */
bool sa_rtable_write(const sa_rtable_t *t, const sa_rtext_opts_t *o, const sa_strv_t *preamble, FILE *out);
/* sa_rtable_write() of every column with the default delimiter. */
bool sa_rtable_write_text(const sa_rtable_t *t, sa_text_format_t fmt, const sa_strv_t *preamble, bool no_header,
                          FILE *out);

/*
 * The rows (totals: the total rows instead) of the view's columns (NULL: all) as a JSON
 * array of objects keyed by sa_col_t.key (NULL cells as null). New reference.
 */
json_t *sa_rtable_to_json(const sa_rtable_t *t, const sa_rview_t *view, bool totals);

/*
 * Writes an HTML <table> (with an optional <caption>, id attribute when id is not NULL);
 * every string is escaped. The view's columns are shown; with view NULL every column
 * is written and those with SA_COL_LONG get class "l" (hidden unless the reader asks
 * for every column: see the page's style). Total rows get class "total"; numeric cells
 * carry their exact value in data-v (for sorting).
 */
void sa_rtable_write_html(const sa_rtable_t *t, const sa_rview_t *view, const char *caption, const char *id,
                          FILE *out);

/* Writes s with & < > " ' escaped as HTML/XML character references. */
void sa_rxml_escape(FILE *out, const char *s);

/* Formats a cell as text (numbers with the column's decimals; "" for NULL) into buf. */
const char *sa_rtable_cell_text(const sa_rtable_t *t, size_t row, size_t col, char *buf, size_t bufsz);

#endif
