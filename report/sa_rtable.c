/*
 * sa_rtable.c - report tables and their text, JSON and HTML renderings (see sa_rtable.h).
 */
#include "sa_rtable.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sa_rtable_init(sa_rtable_t *t, const sa_col_t *cols, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
    t->ncols = ncols;
}

void sa_rtable_clear(sa_rtable_t *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i].s);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

size_t sa_rtable_add_row(sa_rtable_t *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        sa_cell_t *c = realloc(t->cells, cap * t->ncols * sizeof *c);
        if (!c)
            return SIZE_MAX;
        t->cells = c;
        t->cap = cap;
    }
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof *t->cells);
    return t->nrows++;
}

static sa_cell_t *cell_at(sa_rtable_t *t, size_t row, size_t col)
{
    sa_cell_t *c = &t->cells[row * t->ncols + col];
    free(c->s);
    memset(c, 0, sizeof *c);
    return c;
}

void sa_rtable_str(sa_rtable_t *t, size_t row, size_t col, const char *s)
{
    sa_cell_t *c = cell_at(t, row, col);
    if (s && (c->s = strdup(s)))
        c->kind = SA_CELL_STR;
}

void sa_rtable_int(sa_rtable_t *t, size_t row, size_t col, int64_t v)
{
    sa_cell_t *c = cell_at(t, row, col);
    c->kind = SA_CELL_INT;
    c->i = v;
}

void sa_rtable_num(sa_rtable_t *t, size_t row, size_t col, double v)
{
    sa_cell_t *c = cell_at(t, row, col);
    if (!isfinite(v))
        return;
    c->kind = SA_CELL_NUM;
    c->d = v;
}

const sa_cell_t *sa_rtable_cell(const sa_rtable_t *t, size_t row, size_t col)
{
    return &t->cells[row * t->ncols + col];
}

const char *sa_rtable_cell_text(const sa_rtable_t *t, size_t row, size_t col, char *buf, size_t bufsz)
{
    const sa_cell_t *c = sa_rtable_cell(t, row, col);
    switch (c->kind) {
    case SA_CELL_STR:
        return c->s;
    case SA_CELL_INT:
        snprintf(buf, bufsz, "%" PRId64, c->i);
        return buf;
    case SA_CELL_NUM: {
        double v = c->d;
        /* no "-0.00" */
        if (fabs(v) < 0.5 * pow(10, -t->cols[col].decimals))
            v = 0;
        snprintf(buf, bufsz, "%.*f", t->cols[col].decimals, v);
        return buf;
    }
    default:
        buf[0] = '\0';
        return buf;
    }
}

/* Display width of UTF-8 text: code points (continuation bytes do not count). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Writes s with control characters as '?' (a job name cannot break a line of a table). */
static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* Writes one CSV field, quoted when it holds a comma, a quote, CR or LF (RFC 4180). */
static void put_csv(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

bool sa_rtable_write_text(const sa_rtable_t *t, sa_text_format_t fmt, const sa_strv_t *preamble, bool no_header,
                          FILE *out)
{
    const char *eol = fmt == SA_TEXT_CSV ? "\r\n" : "\n";
    char buf[64];

    if (!no_header && preamble) {
        for (size_t i = 0; i < preamble->n; i++) {
            if (fmt != SA_TEXT_TABLE)
                fputs("# ", out);
            put_clean(out, preamble->v[i]);
            fputs(eol, out);
        }
        if (fmt == SA_TEXT_TABLE && preamble->n)
            fputs("\n", out);
    }
    if (fmt == SA_TEXT_TABLE) {
        size_t *w = calloc(t->ncols, sizeof *w);
        if (!w) {
            errno = ENOMEM;
            return false;
        }
        for (size_t c = 0; c < t->ncols; c++) {
            w[c] = no_header ? 0 : text_width(t->cols[c].title);
            for (size_t r = 0; r < t->nrows; r++) {
                size_t cw = text_width(sa_rtable_cell_text(t, r, c, buf, sizeof buf));
                if (sa_rtable_cell(t, r, c)->kind == SA_CELL_NULL)
                    cw = 1; /* "-" */
                if (cw > w[c])
                    w[c] = cw;
            }
        }
        if (!no_header) {
            for (size_t c = 0; c < t->ncols; c++) {
                bool right = t->cols[c].type != SA_COL_STR;
                size_t pad = w[c] - text_width(t->cols[c].title);
                if (c)
                    fputs("  ", out);
                if (right)
                    fprintf(out, "%*s", (int)pad, "");
                fputs(t->cols[c].title, out);
                if (!right && c + 1 < t->ncols)
                    fprintf(out, "%*s", (int)pad, "");
            }
            fputs("\n", out);
            for (size_t c = 0; c < t->ncols; c++) {
                if (c)
                    fputs("  ", out);
                for (size_t k = 0; k < w[c]; k++)
                    fputc('-', out);
            }
            fputs("\n", out);
        }
        for (size_t r = 0; r < t->nrows; r++) {
            for (size_t c = 0; c < t->ncols; c++) {
                const char *s = sa_rtable_cell(t, r, c)->kind == SA_CELL_NULL ? "-"
                                                                               : sa_rtable_cell_text(t, r, c, buf,
                                                                                                     sizeof buf);
                bool right = t->cols[c].type != SA_COL_STR;
                size_t pad = w[c] - text_width(s);
                if (c)
                    fputs("  ", out);
                if (right)
                    fprintf(out, "%*s", (int)pad, "");
                put_clean(out, s);
                if (!right && c + 1 < t->ncols)
                    fprintf(out, "%*s", (int)pad, "");
            }
            fputs("\n", out);
        }
        free(w);
    } else {
        if (!no_header) {
            for (size_t c = 0; c < t->ncols; c++) {
                if (c)
                    fputc(fmt == SA_TEXT_CSV ? ',' : '|', out);
                fputs(t->cols[c].key, out);
            }
            fputs(eol, out);
        }
        for (size_t r = 0; r < t->nrows; r++) {
            for (size_t c = 0; c < t->ncols; c++) {
                const char *s = sa_rtable_cell_text(t, r, c, buf, sizeof buf);
                if (c)
                    fputc(fmt == SA_TEXT_CSV ? ',' : '|', out);
                if (fmt == SA_TEXT_CSV)
                    put_csv(out, s);
                else
                    put_clean(out, s);
            }
            fputs(eol, out);
        }
    }
    return !ferror(out);
}

json_t *sa_rtable_to_json(const sa_rtable_t *t)
{
    json_t *rows = json_array();

    for (size_t r = 0; r < t->nrows; r++) {
        json_t *o = json_object();
        for (size_t c = 0; c < t->ncols; c++) {
            const sa_cell_t *cell = sa_rtable_cell(t, r, c);
            json_t *v;
            switch (cell->kind) {
            case SA_CELL_STR: v = json_string(cell->s); break;
            case SA_CELL_INT: v = json_integer((json_int_t)cell->i); break;
            case SA_CELL_NUM: v = json_real(cell->d); break;
            default: v = json_null(); break;
            }
            json_object_set_new(o, t->cols[c].key, v ? v : json_null());
        }
        json_array_append_new(rows, o);
    }
    return rows;
}

void sa_rxml_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            /* control characters are not allowed in XML 1.0 */
            fputc((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' ? '?' : *s, out);
        }
    }
}

void sa_rtable_write_html(const sa_rtable_t *t, const char *caption, FILE *out)
{
    char buf[64];

    fputs("<div class=\"wide\">\n<table>\n", out);
    if (caption) {
        fputs("<caption>", out);
        sa_rxml_escape(out, caption);
        fputs("</caption>\n", out);
    }
    fputs("<thead><tr>", out);
    for (size_t c = 0; c < t->ncols; c++) {
        fprintf(out, "<th%s>", t->cols[c].type != SA_COL_STR ? " class=\"n\"" : "");
        sa_rxml_escape(out, t->cols[c].title);
        fputs("</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs("<tr>", out);
        for (size_t c = 0; c < t->ncols; c++) {
            fprintf(out, "<td%s>", t->cols[c].type != SA_COL_STR ? " class=\"n\"" : "");
            sa_rxml_escape(out, sa_rtable_cell(t, r, c)->kind == SA_CELL_NULL ? "-"
                                                                             : sa_rtable_cell_text(t, r, c, buf,
                                                                                                   sizeof buf));
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    if (t->nrows == 0)
        fprintf(out, "<tr><td colspan=\"%zu\">(no rows)</td></tr>\n", t->ncols);
    fputs("</tbody>\n</table>\n</div>\n", out);
}
