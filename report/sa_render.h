/*
 * sa_render.h - the one set of renderers of slurm-report (internal to report/).
 *
 * A report computes its figures, then builds a neutral document: a title, preamble
 * lines, one table of typed cells (sa_rtable.h), the JSON members that come before
 * the rows, and optionally a series of monthly charts. sa_rdoc_write() writes that
 * document in the format asked for, the same way for every report:
 *
 *   table                  the preamble and the table (sa_rtable_write)
 *   parsable, csv          the column header and the rows, nothing else (as sacct's
 *                          and sreport's); the preamble goes to stderr under -v
 *   json                   {<json members>..., "header": [preamble], "rows": [...]}
 *   html                   a self-contained page: heading, preamble, the table, the
 *                          charts as inline SVG
 *   svg                    the preamble and the charts (documents with charts only)
 *
 * so every format of a report carries the same numbers. Prometheus (current only)
 * is not a rendering of the table and stays with its report.
 */
#ifndef SA_RENDER_H
#define SA_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_model.h"
#include "sa_report.h"
#include "sa_rchart.h"
#include "sa_rtable.h"

/* One series of a plot (sa_rplot_t): a name and n values (NAN: no value there). */
typedef struct {
    const char *name;
    const double *v;
} sa_rseries_t;

/* What a plot over time draws. */
typedef enum {
    SA_RPLOT_LINES = 0, /* a line per series, a point per value (NAN: a break in the line) */
    SA_RPLOT_STACK,     /* a bar per bucket, the series stacked in their order */
} sa_rplot_kind_t;

/*
 * A plot over time, drawn as an SVG of its own (sa_rplot) or in a report's document
 * (sa_rdoc_t.plots). Everything is borrowed.
 */
typedef struct {
    sa_rplot_kind_t kind;
    const char *title, *unit;
    const int64_t *t;       /* LINES: the n points' times (ascending); STACK: the n + 1 bounds of its buckets
                               (ordinal: the n bars' times, each bar as wide) */
    size_t n;
    const sa_rseries_t *s;  /* ns series of n values */
    size_t ns;
    bool ordinal;           /* STACK: a bar per value, equally wide, in order (the ingester's runs) */
    const char *empty;      /* drawn when there is nothing to plot (NULL: "No data in the window.") */
} sa_rplot_t;

/* The height of the SVG sa_rplot writes (its legend may take several rows). */
double sa_rplot_height(const sa_rplot_t *p);

/*
 * Writes one plot as an SVG element (at y within an enclosing SVG when nested, else
 * inline in HTML): its title, axes, the series with their legend; every point or bar
 * piece carries its time and value in a <title> (shown on hover).
 */
void sa_rplot(FILE *out, const sa_rplot_t *p, bool nested, double y);

/* A bar chart of one value per group (waits): n labels and values (< 0: none, said in words). */
typedef struct {
    const char *title, *unit;
    const char *const *labels;
    const double *v;
    size_t n;
} sa_rbars_t;
/*
 * Writes an SVG bar chart, a horizontal bar per label, its value in a <title>; standalone:
 * with the XML declaration and the preamble (may be NULL) above the bars.
 */
void sa_rplot_bars(FILE *out, const sa_rbars_t *b, const sa_strv_t *preamble, bool standalone);
/* The height of the SVG sa_rplot_bars writes. */
double sa_rplot_bars_height(const sa_rbars_t *b, const sa_strv_t *preamble);

/* A report's document. Everything is borrowed. */
typedef struct sa_rdoc {
    const char *kind;             /* "usage", "utilization", "health", "current" */
    const char *title;            /* HTML <title> and heading: "slurm-report: GPU usage" */
    const sa_strv_t *preamble;    /* lines before the table (may be NULL) */
    const sa_rtable_t *table;
    const char *caption;          /* HTML caption of the table; NULL: none */
    const json_t *json;           /* JSON members before "rows"; NULL: none */
    bool has_charts;              /* the document has a chart series (SVG, and HTML after the table) */
    const char *charts_title;     /* SVG <title> */
    const char *no_charts;        /* text drawn when the series is empty */
    const sa_rchart_t *charts;
    size_t ncharts;
    const sa_rbars_t *bars;       /* a bar chart (SVG, and HTML after the table); NULL: none */
    const sa_rplot_t *plots;      /* plots over time (SVG, and HTML after the table and the bars) */
    size_t nplots;
    bool parsable_titles;         /* -p/-P: the header names the columns by their titles, as sacct echoes its
                                     field names (JobID|JobName); else by their keys */
} sa_rdoc_t;

/*
 * Writes the document in o->format with o's columns (-o, -l), header (-n) and
 * delimiter (-p, -P, --delimiter): no_header means no column header in the text
 * formats and no preamble in the table and SVG. With o->verbose (-v), the preamble of
 * parsable, CSV and JSON output is written there as "# " lines. Fails with
 * SA_ERR_USAGE for a format the document cannot be written in (svg without charts,
 * prometheus) or a column it does not have, SA_ERR_IO when writing fails.
 */
bool sa_rdoc_write(const sa_rdoc_t *d, const sa_report_opts_t *o, FILE *out, sa_error_t *error);

/* What every report does with its document: o->doc_cb when set (the site), else sa_rdoc_write(). */
bool sa_rdoc_emit(const sa_rdoc_t *d, const sa_report_opts_t *o, FILE *out, sa_error_t *error);

/* ---- HTML pages (the --html page and the site's pages) ------------------------------- */

/*
 * Starts a page: the style (inline), the title escaped, and when script is not NULL a
 * <script src="SCRIPT" defer> (the site's enhanced page; the page reads the same
 * without it). nav (trusted HTML, may be NULL) is written first in the body.
 */
void sa_rhtml_begin(FILE *out, const char *title, const char *script, const char *nav);
/* Ends a page. */
void sa_rhtml_end(FILE *out);
/*
 * Writes a document as a part of a page: the heading (h2 when sub, else h1; none when NULL), the
 * preamble, the table (the columns of o's -o/-l, else every column with the long
 * ones hidden behind an "all columns" switch that needs no script), id for the table,
 * links (trusted HTML, may be NULL) under the table, then the charts.
 */
bool sa_rhtml_doc(FILE *out, const sa_rdoc_t *d, const sa_report_opts_t *o, const char *heading, bool sub,
                  const char *id, const char *links, sa_error_t *error);

/* ---- pieces the reports use to build their documents ---------------------------------- */

/* Adds a line (printf) to a preamble. */
void sa_rpreamble_add(sa_strv_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* {"start": ISO, "end": ISO}. New reference. */
json_t *sa_rjson_period(int64_t start, int64_t end);

/* A list of strings as a JSON array. New reference. */
json_t *sa_rjson_strv(const sa_strv_t *v);

#endif
