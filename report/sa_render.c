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

const char *sa_riso(int64_t t)
{
    static char bufs[8][32];
    static unsigned next;
    char *b = bufs[next++ % 8];
    if (t == SA_UNSET)
        b[0] = '\0';
    else
        sa_time_format(t, b, 32);
    return b;
}

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

/* Starts a self-contained HTML page (no script; inline CSS); title and lines escaped. */
static void html_begin(FILE *out, const char *title, const sa_strv_t *preamble)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    sa_rxml_escape(out, title);
    fputs("</title>\n<style>\n"
          "body { font-family: sans-serif; margin: 1.5em; color: #222; }\n"
          "table { border-collapse: collapse; margin: 1em 0; }\n"
          "th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: left; white-space: nowrap; }\n"
          "th { background: #eee; }\n"
          "td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
          "caption { text-align: left; font-weight: bold; margin-bottom: 0.3em; }\n"
          "p.meta { margin: 0.1em 0; color: #444; }\n"
          "div.wide { overflow-x: auto; }\n"
          "</style>\n</head>\n<body>\n<h1>",
          out);
    sa_rxml_escape(out, title);
    fputs("</h1>\n", out);
    for (size_t i = 0; preamble && i < preamble->n; i++) {
        fputs("<p class=\"meta\">", out);
        sa_rxml_escape(out, preamble->v[i]);
        fputs("</p>\n", out);
    }
}

/* The JSON document: the document's members, then "rows". */
static bool write_json(const sa_rdoc_t *d, FILE *out)
{
    json_t *doc = d->json ? json_deep_copy(d->json) : json_object();
    bool ok;

    json_object_set_new(doc, "rows", sa_rtable_to_json(d->table));
    ok = json_write(doc, out);
    json_decref(doc);
    return ok;
}

bool sa_rdoc_write(const sa_rdoc_t *d, sa_format_t fmt, bool no_header, FILE *out, sa_error_t *error)
{
    bool ok = true;

    switch (fmt) {
    case SA_FMT_TABLE:
        ok = sa_rtable_write_text(d->table, SA_TEXT_TABLE, d->preamble, no_header, out);
        break;
    case SA_FMT_PARSABLE:
        ok = sa_rtable_write_text(d->table, SA_TEXT_PARSABLE, d->preamble, no_header, out);
        break;
    case SA_FMT_CSV:
        ok = sa_rtable_write_text(d->table, SA_TEXT_CSV, d->preamble, no_header, out);
        break;
    case SA_FMT_JSON:
        ok = write_json(d, out);
        break;
    case SA_FMT_HTML:
        html_begin(out, d->title, d->preamble);
        sa_rtable_write_html(d->table, d->caption, out);
        if (d->has_charts)
            sa_rcharts_svg(out, d->charts_title, d->no_charts, NULL, d->charts, d->ncharts, false);
        fputs("</body>\n</html>\n", out);
        ok = !ferror(out);
        break;
    case SA_FMT_SVG:
        if (d->has_charts) {
            sa_rcharts_svg(out, d->charts_title, d->no_charts, no_header ? NULL : d->preamble, d->charts, d->ncharts,
                           true);
            ok = !ferror(out);
            break;
        }
        /* fall through */
    default:
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for this report", sa_format_name(fmt));
        return false;
    }
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
    return ok;
}
