/*
 * sa_render.c - writing a report's document in the format asked for (see
 * sa_render.h), and the small pieces the reports build documents from.
 */
#define _GNU_SOURCE /* vasprintf */
#include "sa_render.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "sa_rutil.h"

void sa_rpreamble_add(sa_strv_t *p, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) >= 0) {
        sa_strv_push(p, s);
        free(s);
    }
    va_end(ap);
}

json_t *sa_rjson_period(int64_t start, int64_t end)
{
    return json_pack("{s:s, s:s}", "start", sa_riso(start), "end", sa_riso(end));
}

json_t *sa_rjson_strv(const sa_strv_t *v)
{
    json_t *a = json_array();
    for (size_t i = 0; v && i < v->n; i++)
        json_array_append_new(a, json_string(v->v[i]));
    return a;
}

/* Dumps a JSON document (2-space indent, keys in insertion order, 12 significant digits) and a newline. */
static bool json_write(const json_t *doc, FILE *out)
{
    /* one string, one write: json_dumpf writes token by token */
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    bool ok = s && fputs(s, out) != EOF && fputc('\n', out) != EOF;
    free(s);
    return ok;
}

/*
 * The pages' style: readable at 800 px (narrower cells and headers that wrap under
 * 1000 px, so that the usage table fits whole), wider tables scroll in their own box,
 * charts scale down.
 */
static const char page_css[] =
    "body { font-family: sans-serif; margin: 1em; color: #222; max-width: 1240px; }\n"
    "h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }\n"
    "nav { margin-bottom: 0.8em; font-size: 0.95em; } nav a { margin-right: 0.8em; }\n"
    "table { border-collapse: collapse; margin: 0.4em 0; }\n"
    "th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; white-space: nowrap; }\n"
    "th { background: #eee; }\n"
    "td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "tr.total td { font-weight: bold; background: #f4f4f4; }\n"
    "caption { text-align: left; font-weight: bold; margin-bottom: 0.3em; }\n"
    "p.meta { margin: 0.1em 0; color: #444; font-size: 0.92em; }\n"
    "div.wide { overflow-x: auto; max-width: 100%; }\n"
    ".l { display: none; }\n"
    ".allcols:checked ~ div.wide .l { display: table-cell; }\n"
    "label.allcols-l, p.links { font-size: 0.85em; color: #444; }\n"
    "svg.chart { max-width: 100%; height: auto; display: block; }\n"
    "td.b-on-track, td.b-ok, td.b-allocated { background: #d8eed8; }\n"
    "td.b-under, td.b-idle, td.b-allocated-idle { background: #fdf3c8; }\n"
    "td.b-no-award, td.b-not-started, td.b-info, td.b-unknown { background: #ececec; }\n"
    /* utilization classes: free time nobody could use (a class joined with others: allocated-down...) */
    "td.b-over, td.b-error, td.b-unhealthy, td[class*=\"-stranded\"], td[class*=\"-down\"],\n"
    "td[class*=\"-reserved\"] { background: #f6d5d5; }\n"
    "td.b-over-pace, td.b-warning { background: #fbe3c6; }\n"
    "@media (max-width: 1000px) {\n"
    "  body { margin: 0.5em; }\n"
    "  table { font-size: 0.88em; }\n"
    "  th, td { padding: 0.15em 0.3em; }\n"
    "  th { white-space: normal; min-width: 3em; }\n"
    "}\n";

void sa_rhtml_begin(FILE *out, const char *title, const char *script, const char *nav)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    sa_rxml_escape(out, title);
    fprintf(out, "</title>\n<style>\n%s</style>\n", page_css);
    if (script) {
        fputs("<script src=\"", out);
        sa_rxml_escape(out, script);
        fputs("\" defer></script>\n", out);
    }
    fputs("</head>\n<body>\n", out);
    if (nav)
        fputs(nav, out);
}

void sa_rhtml_end(FILE *out)
{
    fputs("</body>\n</html>\n", out);
}

/* The view of a document's table for o: -o's columns, every column (-l), or NULL (all, long ones hidden). */
static bool doc_view(const sa_rdoc_t *d, const sa_report_opts_t *o, bool text, sa_rview_t *v, bool *have,
                     sa_error_t *error)
{
    *have = false;
    if (o->ncolumns || o->long_format || text) {
        if (!sa_rview_make(d->table, o->columns, o->ncolumns, o->long_format, v, error))
            return false;
        *have = true;
    }
    return true;
}

bool sa_rhtml_doc(FILE *out, const sa_rdoc_t *d, const sa_report_opts_t *o, const char *heading, bool sub,
                  const char *id, const char *links, sa_error_t *error)
{
    sa_rview_t v;
    bool have;

    if (!doc_view(d, o, false, &v, &have, error))
        return false;
    if (heading) {
        fprintf(out, "<%s>", sub ? "h2" : "h1");
        sa_rxml_escape(out, heading);
        fprintf(out, "</%s>\n", sub ? "h2" : "h1");
    }
    for (size_t i = 0; d->preamble && i < d->preamble->n; i++) {
        fputs("<p class=\"meta\">", out);
        sa_rxml_escape(out, d->preamble->v[i]);
        fputs("</p>\n", out);
    }
    fputs("<div class=\"tbl\">\n", out);
    if (!have) {
        bool any_long = false;
        for (size_t c = 0; c < d->table->ncols; c++)
            any_long = any_long || (d->table->cols[c].flags & SA_COL_LONG);
        if (any_long) {
            fprintf(out, "<input type=\"checkbox\" class=\"allcols\" id=\"%s-all\">", id ? id : "t");
            fprintf(out, "<label class=\"allcols-l\" for=\"%s-all\">all columns</label>\n", id ? id : "t");
        }
    }
    sa_rtable_write_html(d->table, have ? &v : NULL, d->caption, id, out);
    fputs("</div>\n", out);
    if (links)
        fprintf(out, "<p class=\"links\">%s</p>\n", links);
    if (d->has_charts)
        sa_rcharts_svg(out, d->charts_title, d->no_charts, NULL, d->charts, d->ncharts, false);
    if (d->bars)
        sa_rplot_bars(out, d->bars, NULL, false);
    for (size_t i = 0; i < d->nplots; i++)
        sa_rplot(out, &d->plots[i], false, 0);
    if (have)
        sa_rview_clear(&v);
    return true;
}

/*
 * The JSON document: the document's members, "header" (the preamble's lines, unless a
 * member has that name), then "rows" (and "totals" when the table has total rows).
 */
static bool write_json(const sa_rdoc_t *d, const sa_rview_t *v, FILE *out)
{
    json_t *doc = d->json ? json_deep_copy(d->json) : json_object(), *totals = sa_rtable_to_json(d->table, v, true);
    bool ok;

    if (d->preamble && d->preamble->n && !json_object_get(doc, "header"))
        json_object_set_new(doc, "header", sa_rjson_strv(d->preamble));
    json_object_set_new(doc, "rows", sa_rtable_to_json(d->table, v, false));
    if (json_array_size(totals))
        json_object_set_new(doc, "totals", totals);
    else
        json_decref(totals);
    ok = json_write(doc, out);
    json_decref(doc);
    return ok;
}

/* Writes the table of d as text in format fmt with o's view, header and delimiter. */
static bool write_text(const sa_rdoc_t *d, const sa_report_opts_t *o, sa_text_format_t fmt, FILE *out,
                       sa_error_t *error)
{
    sa_rview_t v;
    sa_rtext_opts_t t = {fmt, o->no_header, o->delimiter, o->trailing_delimiter, &v, d->parsable_titles};
    bool ok;

    /* the table shows the brief columns by default; parsable and CSV every column */
    if (!sa_rview_make(d->table, o->columns, o->ncolumns, o->long_format || fmt != SA_TEXT_TABLE, &v, error))
        return false;
    ok = sa_rtable_write(d->table, &t, d->preamble, out);
    sa_rview_clear(&v);
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
    return ok;
}

/*
 * The SVG of a document with plots over time: one picture, the preamble (unless -n)
 * above its bar chart (when it has one) and its plots, one under the other.
 */
static void write_plots_svg(const sa_rdoc_t *d, const sa_report_opts_t *o, FILE *out)
{
    sa_strv_t lines;
    double y, h;

    sa_strv_init(&lines);
    for (size_t i = 0; !o->no_header && d->preamble && i < d->preamble->n; i++)
        sa_rwrap(d->preamble->v[i], 160, &lines);
    y = 16.0 * (double)lines.n + 16;
    h = y + (d->bars ? sa_rplot_bars_height(d->bars, NULL) : 0);
    for (size_t i = 0; i < d->nplots; i++)
        h += sa_rplot_height(&d->plots[i]);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                 "class=\"chart\" role=\"img\" width=\"1000\" height=\"%.0f\" viewBox=\"0 0 1000 %.0f\" "
                 "font-family=\"sans-serif\">\n<title>",
            h, h);
    sa_rxml_escape(out, d->charts_title ? d->charts_title : d->title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", out);
    for (size_t i = 0; i < lines.n; i++) {
        fprintf(out, "<text x=\"10\" y=\"%.1f\" font-size=\"11\" fill=\"#333\">", 18 + 16.0 * (double)i);
        sa_rxml_escape(out, lines.v[i]);
        fputs("</text>\n", out);
    }
    if (d->bars) {
        fprintf(out, "<g transform=\"translate(0,%.1f)\">\n", y);
        sa_rplot_bars(out, d->bars, NULL, false);
        fputs("</g>\n", out);
        y += sa_rplot_bars_height(d->bars, NULL);
    }
    for (size_t i = 0; i < d->nplots; i++) {
        sa_rplot(out, &d->plots[i], true, y);
        y += sa_rplot_height(&d->plots[i]);
    }
    fputs("</svg>\n", out);
    sa_strv_clear(&lines);
}

/* -v: the preamble of the formats that do not print it (parsable, CSV, JSON) on o->verbose, as "# " lines. */
static void verbose_preamble(const sa_rdoc_t *d, const sa_report_opts_t *o)
{
    if (!o->verbose || !d->preamble ||
        (o->format != SA_FMT_PARSABLE && o->format != SA_FMT_CSV && o->format != SA_FMT_JSON))
        return;
    for (size_t i = 0; i < d->preamble->n; i++) {
        fputs("# ", o->verbose);
        for (const char *s = d->preamble->v[i]; *s; s++)
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, o->verbose);
        fputc('\n', o->verbose);
    }
}

bool sa_rdoc_write(const sa_rdoc_t *d, const sa_report_opts_t *o, FILE *out, sa_error_t *error)
{
    sa_rview_t v;
    bool ok = true;

    verbose_preamble(d, o);
    switch (o->format) {
    case SA_FMT_TABLE: return write_text(d, o, SA_TEXT_TABLE, out, error);
    case SA_FMT_PARSABLE: return write_text(d, o, SA_TEXT_PARSABLE, out, error);
    case SA_FMT_CSV: return write_text(d, o, SA_TEXT_CSV, out, error);
    case SA_FMT_JSON:
        /* every column unless -o chooses */
        if (!sa_rview_make(d->table, o->columns, o->ncolumns, true, &v, error))
            return false;
        ok = write_json(d, &v, out);
        sa_rview_clear(&v);
        break;
    case SA_FMT_HTML:
        sa_rhtml_begin(out, d->title, NULL, NULL);
        if (!sa_rhtml_doc(out, d, o, d->title, false, "report", NULL, error))
            return false;
        sa_rhtml_end(out);
        ok = !ferror(out);
        break;
    case SA_FMT_SVG:
        if (d->has_charts) {
            sa_rcharts_svg(out, d->charts_title, d->no_charts, o->no_header ? NULL : d->preamble, d->charts,
                           d->ncharts, true);
            ok = !ferror(out);
            break;
        }
        if (d->nplots) {
            write_plots_svg(d, o, out);
            ok = !ferror(out);
            break;
        }
        if (d->bars) {
            sa_rplot_bars(out, d->bars, o->no_header ? NULL : d->preamble, true);
            ok = !ferror(out);
            break;
        }
        /* fall through */
    default:
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for this report",
                     sa_format_name(o->format));
        return false;
    }
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
    return ok;
}

bool sa_rdoc_emit(const sa_rdoc_t *d, const sa_report_opts_t *o, FILE *out, sa_error_t *error)
{
    return o->doc_cb ? o->doc_cb(d, o->doc_ctx, error) : sa_rdoc_write(d, o, out, error);
}
