/*
 * sa_rtable.c - report tables and their text, JSON and HTML renderings (see sa_rtable.h).
 */
#include "sa_rtable.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_vec.h"

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
    free(t->rflags);
    t->cells = NULL;
    t->rflags = NULL;
    t->nrows = t->cap = 0;
}

size_t sa_rtable_add_row(sa_rtable_t *t)
{
    if (t->nrows == t->cap) {
        /* cells hold ncols per row: grown in rows' worth of cells, then the flags to match */
        size_t w = t->ncols ? t->ncols : 1, ccap = t->cap * w, cap = t->cap;
        if (!SA_VEC_GROW(t->cells, ccap, t->nrows * w, w, 16 * w) ||
            !SA_VEC_GROW(t->rflags, cap, t->nrows, 1, 16))
            return SIZE_MAX;
        t->cap = cap;
    }
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof *t->cells);
    t->rflags[t->nrows] = 0;
    return t->nrows++;
}

void sa_rtable_mark_total(sa_rtable_t *t, size_t row)
{
    t->rflags[row] |= SA_ROW_TOTAL;
}

size_t sa_rtable_col(const sa_rtable_t *t, const char *key)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (strcmp(t->cols[c].key, key) == 0)
            return c;
    }
    return SIZE_MAX;
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

/* ---- views ------------------------------------------------------------------------------ */

void sa_colspecs_free(sa_colspec_t *specs, size_t n)
{
    for (size_t i = 0; specs && i < n; i++)
        free(specs[i].name);
    free(specs);
}

/* Parses one item "name[%[-]N]" of an -o list into *sp (name lower case, '-' as '_'). */
static bool colspec_one(const char *s, size_t len, sa_colspec_t *sp)
{
    size_t n = 0;
    long w = 0;
    bool neg = false;

    sp->name = NULL;
    sp->width = 0;
    while (n < len && (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '-'))
        n++;
    if (n == 0 || (n < len && s[n] != '%'))
        return false;
    if (n < len) {
        size_t k = n + 1;
        if (k < len && s[k] == '-') {
            neg = true;
            k++;
        }
        if (k == len)
            return false;
        for (; k < len; k++) {
            if (!isdigit((unsigned char)s[k]) || (w = w * 10 + (s[k] - '0')) > 1000)
                return false;
        }
        if (w == 0)
            return false;
    }
    if (!(sp->name = strndup(s, n)))
        return false;
    for (char *p = sp->name; *p; p++)
        *p = *p == '-' ? '_' : (char)tolower((unsigned char)*p);
    sp->width = (int)(neg ? -w : w);
    return true;
}

bool sa_colspecs_parse(const char *s, sa_colspec_t **specs, size_t *n, sa_error_t *error)
{
    const char *p = s;
    char q[80];

    for (;;) {
        size_t len = strcspn(p, ",");
        sa_colspec_t *v;
        while (len && isblank((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len && isblank((unsigned char)p[len - 1]))
            len--;
        if (len) {
            if (!(v = realloc(*specs, (*n + 1) * sizeof *v))) {
                sa_error_nomem(error);
                return false;
            }
            *specs = v;
            if (!colspec_one(p, len, &v[*n])) {
                sa_error_set(error, SA_ERR_USAGE, 0,
                             "-o: expected a comma list of columns, each NAME or NAME%%N or NAME%%-N (like sacct "
                             "--format), got '%s'%s",
                             sa_error_quote(s, 64, q, sizeof q),
                             strpbrk(s, "./") ? "; to write a file use --output FILE" : "");
                return false;
            }
            (*n)++;
        }
        p += strcspn(p, ",");
        if (!*p)
            break;
        p++;
    }
    if (*n == 0) {
        sa_error_set(error, SA_ERR_USAGE, 0, "-o: no column named");
        return false;
    }
    return true;
}

void sa_rview_clear(sa_rview_t *v)
{
    free(v->col);
    free(v->width);
    memset(v, 0, sizeof *v);
}

/* Sets *error to "no column X in this report; its columns: a, b, ...". */
static void unknown_column(const sa_rtable_t *t, const char *name, sa_error_t *error)
{
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);

    for (size_t c = 0; m && c < t->ncols; c++)
        fprintf(m, "%s%s", c ? "," : "", t->cols[c].key);
    if (m)
        fclose(m);
    sa_error_set(error, SA_ERR_USAGE, 0, "-o: no column '%s' in this report; its columns: %s", name,
                 list ? list : "?");
    free(list);
}

bool sa_rview_make(const sa_rtable_t *t, const sa_colspec_t *specs, size_t n, bool all, sa_rview_t *v,
                   sa_error_t *error)
{
    size_t cap = n > t->ncols ? n : t->ncols;

    memset(v, 0, sizeof *v);
    v->col = calloc(cap + 1, sizeof *v->col);
    v->width = calloc(cap + 1, sizeof *v->width);
    if (!v->col || !v->width) {
        sa_rview_clear(v);
        sa_error_nomem(error);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = sa_rtable_col(t, specs[i].name);
        if (c == SIZE_MAX) {
            unknown_column(t, specs[i].name, error);
            sa_rview_clear(v);
            return false;
        }
        v->col[v->n] = c;
        v->width[v->n++] = specs[i].width;
    }
    for (size_t c = 0; !n && c < t->ncols; c++) {
        if (all || !(t->cols[c].flags & SA_COL_LONG))
            v->col[v->n++] = c;
    }
    return true;
}

/* ---- text ------------------------------------------------------------------------------- */

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

/*
 * Writes one CSV field, quoted when it holds a comma, a quote, CR or LF (RFC 4180).
 * A text cell a spreadsheet would take for a formula - one starting with = + - @ TAB
 * or CR (a job or account name "=HYPERLINK(...)") - is written as OWASP recommends
 * for CSV injection: a ' first, and quoted. Numbers (text false) are written as they
 * are, so a negative number stays a number.
 */
static void put_csv(FILE *out, const char *s, bool text)
{
    bool formula = text && s[0] && strchr("=+-@\t\r", s[0]) != NULL;

    if (!formula && strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (formula)
        fputc('\'', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* The text of a cell in a table ("-" for NULL). */
static const char *table_text(const sa_rtable_t *t, size_t r, size_t c, char *buf, size_t bufsz)
{
    return sa_rtable_cell(t, r, c)->kind == SA_CELL_NULL ? "-" : sa_rtable_cell_text(t, r, c, buf, bufsz);
}

/*
 * Writes s in a field of w characters: right-justified when right, cut to w - 1
 * characters and a '+' when longer (sacct); no padding after the last column.
 */
static void put_field(FILE *out, const char *s, size_t w, bool right, bool last)
{
    size_t sw = text_width(s);

    if (sw > w) {
        size_t k = 0;
        for (const char *p = s; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if ((ch & 0xC0) != 0x80 && ++k > w - 1)
                break;
            fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, out);
        }
        fputc('+', out);
        return;
    }
    if (right)
        fprintf(out, "%*s", (int)(w - sw), "");
    put_clean(out, s);
    if (!right && !last)
        fprintf(out, "%*s", (int)(w - sw), "");
}

/* The aligned table: a header, a rule, the rows (totals included). */
static bool write_table(const sa_rtable_t *t, const sa_rview_t *v, bool no_header, FILE *out)
{
    size_t *w = calloc(v->n + 1, sizeof *w);
    char buf[64];

    if (!w) {
        errno = ENOMEM;
        return false;
    }
    for (size_t i = 0; i < v->n; i++) {
        size_t c = v->col[i];
        if (v->width[i]) {
            w[i] = (size_t)abs(v->width[i]);
            continue;
        }
        w[i] = no_header ? 1 : text_width(t->cols[c].title);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = text_width(table_text(t, r, c, buf, sizeof buf));
            if (cw > w[i])
                w[i] = cw;
        }
    }
    for (int pass = no_header ? 2 : 0; pass < 2; pass++) {
        for (size_t i = 0; i < v->n; i++) {
            const sa_col_t *col = &t->cols[v->col[i]];
            bool right = v->width[i] ? v->width[i] > 0 : col->type != SA_COL_STR;
            if (i)
                fputs("  ", out);
            if (pass == 0)
                put_field(out, col->title, w[i], right, i + 1 == v->n);
            else
                for (size_t k = 0; k < w[i]; k++)
                    fputc('-', out);
        }
        fputs("\n", out);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t i = 0; i < v->n; i++) {
            bool right = v->width[i] ? v->width[i] > 0 : t->cols[v->col[i]].type != SA_COL_STR;
            if (i)
                fputs("  ", out);
            put_field(out, table_text(t, r, v->col[i], buf, sizeof buf), w[i], right, i + 1 == v->n);
        }
        fputs("\n", out);
    }
    free(w);
    return true;
}

/* Parsable and CSV: a header of keys (or titles), then one line per row (totals left out). */
static bool write_delimited(const sa_rtable_t *t, const sa_rview_t *v, const sa_rtext_opts_t *o, FILE *out)
{
    bool csv = o->fmt == SA_TEXT_CSV;
    const char *eol = csv ? "\r\n" : "\n", *delim = csv ? "," : o->delimiter ? o->delimiter : "|";
    bool trailing = !csv && o->trailing;
    char buf[64];

    if (!o->no_header) {
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                fputs(delim, out);
            fputs(o->titles && !csv ? t->cols[v->col[i]].title : t->cols[v->col[i]].key, out);
        }
        fprintf(out, "%s%s", trailing ? delim : "", eol);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        if (sa_rtable_is_total(t, r))
            continue;
        for (size_t i = 0; i < v->n; i++) {
            const char *s = sa_rtable_cell_text(t, r, v->col[i], buf, sizeof buf);
            if (i)
                fputs(delim, out);
            if (csv)
                put_csv(out, s, sa_rtable_cell(t, r, v->col[i])->kind == SA_CELL_STR);
            else
                put_clean(out, s);
        }
        fprintf(out, "%s%s", trailing ? delim : "", eol);
    }
    return true;
}

bool sa_rtable_write(const sa_rtable_t *t, const sa_rtext_opts_t *o, const sa_strv_t *preamble, FILE *out)
{
    sa_rview_t all;
    bool ok;

    /* parsable and CSV output is the header and the rows, as sacct's and sreport's */
    if (!o->no_header && preamble && o->fmt == SA_TEXT_TABLE) {
        for (size_t i = 0; i < preamble->n; i++) {
            sa_strv_t lines;
            sa_strv_init(&lines);
            /* the table's lines fit 120 columns: a long line goes on, indented, on the next */
            sa_rwrap(preamble->v[i], 118, &lines);
            for (size_t k = 0; k < lines.n; k++) {
                fputs(k ? "  " : "", out);
                put_clean(out, lines.v[k]);
                fputs("\n", out);
            }
            sa_strv_clear(&lines);
        }
        if (preamble->n)
            fputs("\n", out);
    }
    if (!o->view && !sa_rview_make(t, NULL, 0, true, &all, NULL)) {
        errno = ENOMEM;
        return false;
    }
    if (o->fmt == SA_TEXT_TABLE)
        ok = write_table(t, o->view ? o->view : &all, o->no_header, out);
    else
        ok = write_delimited(t, o->view ? o->view : &all, o, out);
    if (!o->view)
        sa_rview_clear(&all);
    return ok && !ferror(out);
}

bool sa_rtable_write_text(const sa_rtable_t *t, sa_text_format_t fmt, const sa_strv_t *preamble, bool no_header,
                          FILE *out)
{
    sa_rtext_opts_t o = {fmt, no_header, NULL, false, NULL, false};
    return sa_rtable_write(t, &o, preamble, out);
}
json_t *sa_rtable_to_json(const sa_rtable_t *t, const sa_rview_t *view, bool totals)
{
    json_t *rows = json_array();
    size_t n = view ? view->n : t->ncols;

    for (size_t r = 0; r < t->nrows; r++) {
        json_t *o;
        if (sa_rtable_is_total(t, r) != totals)
            continue;
        o = json_object();
        for (size_t i = 0; i < n; i++) {
            size_t c = view ? view->col[i] : i;
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

/*
 * Opens a <td> or <th> with its classes: n (a number), l (a long column, hidden unless
 * asked for), "b b-<value>" (a badge: the value's letters and digits, others as '-').
 */
static void open_cell(FILE *out, const char *tag, bool num, bool hidden, const char *badge)
{
    bool any = false;

    fprintf(out, "<%s", tag);
    if (num || hidden || badge)
        fputs(" class=\"", out);
    if (num) {
        fputs("n", out);
        any = true;
    }
    if (hidden) {
        fputs(any ? " l" : "l", out);
        any = true;
    }
    if (badge) {
        fputs(any ? " b b-" : "b b-", out);
        for (; *badge; badge++)
            fputc(isalnum((unsigned char)*badge) ? tolower((unsigned char)*badge) : '-', out);
    }
    if (num || hidden || badge)
        fputc('"', out);
}

/* One cell of an HTML table; numbers carry their exact value in data-v. */
static void html_cell(const sa_rtable_t *t, size_t r, size_t c, bool hidden, FILE *out)
{
    const sa_col_t *col = &t->cols[c];
    const sa_cell_t *cell = sa_rtable_cell(t, r, c);
    char buf[64];

    open_cell(out, "td", col->type != SA_COL_STR, hidden,
              (col->flags & SA_COL_BADGE) && cell->kind == SA_CELL_STR ? cell->s : NULL);
    if (cell->kind == SA_CELL_NUM)
        fprintf(out, " data-v=\"%.17g\"", cell->d);
    else if (cell->kind == SA_CELL_INT)
        fprintf(out, " data-v=\"%" PRId64 "\"", cell->i);
    fputc('>', out);
    sa_rxml_escape(out, table_text(t, r, c, buf, sizeof buf));
    fputs("</td>", out);
}

void sa_rtable_write_html(const sa_rtable_t *t, const sa_rview_t *view, const char *caption, const char *id,
                          FILE *out)
{
    size_t n = view ? view->n : t->ncols;

    fputs("<div class=\"wide\">\n<table", out);
    if (id) {
        fputs(" id=\"", out);
        sa_rxml_escape(out, id);
        fputc('"', out);
    }
    fputs(">\n", out);
    if (caption) {
        fputs("<caption>", out);
        sa_rxml_escape(out, caption);
        fputs("</caption>\n", out);
    }
    fputs("<thead><tr>", out);
    for (size_t i = 0; i < n; i++) {
        size_t c = view ? view->col[i] : i;
        bool num = t->cols[c].type != SA_COL_STR, hidden = !view && (t->cols[c].flags & SA_COL_LONG);
        open_cell(out, "th", num, hidden, NULL);
        fputs(" scope=\"col\" data-key=\"", out);
        sa_rxml_escape(out, t->cols[c].key); /* a pivoted table's keys come from data */
        fputs("\">", out);
        sa_rxml_escape(out, t->cols[c].title);
        fputs("</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(sa_rtable_is_total(t, r) ? "<tr class=\"total\">" : "<tr>", out);
        for (size_t i = 0; i < n; i++) {
            size_t c = view ? view->col[i] : i;
            html_cell(t, r, c, !view && (t->cols[c].flags & SA_COL_LONG), out);
        }
        fputs("</tr>\n", out);
    }
    if (t->nrows == 0)
        fprintf(out, "<tr><td colspan=\"%zu\">(no rows)</td></tr>\n", n);
    fputs("</tbody>\n</table>\n</div>\n", out);
}
