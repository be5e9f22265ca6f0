/*
 * sa_site.c - the static web site (see sa_site.h).
 *
 * Every section of a page is a report run with doc_cb set: the report hands its
 * document here, and on_doc() writes it as HTML into the page and as CSV and JSON
 * beside it. A page is written once into memory; page_close() writes it twice: as is
 * (NAME.html, no script) and with the script tag and every link to a page of the site
 * pointing at the enhanced version (NAME.js.html).
 */
#define _GNU_SOURCE /* renameat2 */
#include "sa_site.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_alloc.h"
#include "sa_fsutil.h"
#include "sa_runlog.h"
#include "sa_jobview.h"
#include "sa_rcommon.h"
#include "sa_rutil.h"
#include "sa_site_js.h" /* sa_site_js[]: report/site.js, embedded at build time */
#include "sa_time.h"
#include "sa_vec.h"

/* The placeholder of the link to the page's other version (control characters never come from data). */
#define OTHER_VERSION "\001V\001"
/* The placeholder of an account page's months, known once its trend is written (page_t.range). */
#define RANGE_MARK "\001R\001"

/* ---- names --------------------------------------------------------------------------- */

/* A name as a file name: [A-Za-z0-9_-] kept, every other byte as %XX. Caller frees. */
static char *file_name(const char *s)
{
    char *out = malloc(3 * strlen(s) + 1), *o = out;

    if (!out)
        return NULL;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
            *o++ = (char)c;
        else
            o += sprintf(o, "%%%02X", c);
    }
    *o = '\0';
    return out;
}

/* Writes a relative file name as a URL path: '%' as %25 (the other characters of file_name are safe). */
static void put_href(FILE *out, const char *file)
{
    for (; *file; file++) {
        if (*file == '%')
            fputs("%25", out);
        else
            fputc(*file, out);
    }
}

/* ---- the site being built ------------------------------------------------------------------ */

typedef struct {
    char *name, *file;    /* the cluster, its directory name */
    sa_strv_t months;     /* "YYYY-MM", oldest first: the --months up to the last one observed (none: no data) */
    int64_t last;         /* its last observation (jobs or nodes), at most now; SA_UNSET: none */
    int64_t from, to;     /* its months' span: the first one's start to the last one's end (or now) */
    size_t land;          /* the month its page shows (an index of months) */
    sa_strv_t accounts;   /* accounts with use or an award in the site's range */
    const char *health;   /* "OK", "UNHEALTHY" (static) */
    bool has_series;      /* a time series exists */
} scluster_t;

typedef struct {
    const sa_report_opts_t *o;
    const sa_site_opts_t *so;
    FILE *warn;
    char *tmp;            /* the new site, beside so->dir */
    sa_rdb_t *db;
    sa_rclusters_t cl;
    scluster_t *c;        /* per cluster of cl */
    sa_awards_t awards;   /* --allocations (none: empty; the account pages name the groups' sizes) */
} site_t;

/* A page being written: its text in memory, its name relative to the site. */
typedef struct {
    site_t *s;
    char *rel;            /* "alpha/2026-10" (without .html) */
    const char *up;       /* "" or "../": from the page to the site's root */
    char *buf;
    size_t len;
    FILE *f;              /* writes buf */
    /* the section being written */
    const char *table;    /* file name part: rel.table.csv */
    const char *heading;
    const char *colspec;  /* the HTML table's columns (NULL: the brief ones, the rest behind a switch) */
    sa_strv_t *accounts;  /* when not NULL: collect the accounts of the document's rows */
    bool trend;           /* also the first chart's months as a table ("months") */
    bool pivot;           /* the current report's rows as a table of states (pivot_current) */
    bool charts_first;    /* the document's charts right under its heading, its preamble and table after them */
    bool plots_first;     /* its plots over time under its heading and preamble, its table folded (<details>) */
    char range[48];       /* the months of the trend's table, "YYYY-MM to YYYY-MM" (account pages) */
    bool healthy;
} page_t;

/* mkdir -p of the directory holding site-relative path rel. */
static bool make_parent(const site_t *s, const char *rel, sa_error_t *error)
{
    const char *slash = strrchr(rel, '/');
    char *dir;
    bool ok;

    if (!slash)
        return true;
    dir = sa_rprintf("%s/%.*s", s->tmp, (int)(slash - rel), rel);
    ok = dir && (mkdir(dir, 0777) == 0 || errno == EEXIST);
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "%s: cannot create the directory: %s", dir ? dir : rel, strerror(errno));
    free(dir);
    return ok;
}

/* Writes len bytes to the site-relative file rel (mode from the umask: readable by a web server). */
static bool write_file(const site_t *s, const char *rel, const char *data, size_t len, sa_error_t *error)
{
    char *path = sa_rprintf("%s/%s", s->tmp, rel);
    FILE *f;
    bool ok;

    if (!path) {
        sa_error_nomem(error);
        return false;
    }
    f = fopen(path, "w");
    ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "writing %s: %s", path, strerror(errno));
    free(path);
    return ok;
}

/* The navigation bar of a page: the index, the ingester, the other version. */
static void page_nav(FILE *f, const char *up, const char *crumb)
{
    fprintf(f, "<nav><a href=\"%sindex.html\">All clusters</a><a href=\"%singest.html\">Ingester</a>", up, up);
    if (crumb)
        fputs(crumb, f);
    fputs("<a class=\"version\" href=\"" OTHER_VERSION "\">" OTHER_VERSION "</a></nav>\n", f);
}

/* Starts a page rel (rel.html and rel.js.html) with its title and navigation. */
static bool page_open(site_t *s, page_t *pg, const char *rel, const char *title, const char *crumb, sa_error_t *error)
{
    memset(pg, 0, sizeof *pg);
    pg->s = s;
    pg->up = strchr(rel, '/') ? "../" : "";
    if (!(pg->rel = strdup(rel)) || !(pg->f = open_memstream(&pg->buf, &pg->len))) {
        free(pg->rel);
        sa_error_nomem(error);
        return false;
    }
    sa_rhtml_begin(pg->f, title, NULL, NULL);
    page_nav(pg->f, pg->up, crumb);
    fputs("<h1>", pg->f);
    sa_rxml_escape(pg->f, title);
    fputs("</h1>\n", pg->f);
    if (!make_parent(s, rel, error)) {
        fclose(pg->f);
        free(pg->buf);
        free(pg->rel);
        return false;
    }
    return true;
}

/*
 * The enhanced version of a page's text: the script, links to pages as NAME.js.html
 * (but the link to the other version, class "version"). Caller frees.
 */
static char *enhance(const char *html, const char *up)
{
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    const char *p = html, *q;

    if (!m)
        return NULL;
    while ((q = strstr(p, "href=\""))) {
        const char *v = q + 6, *e = strchr(v, '"');
        if (!e)
            break;
        bool version = q - html >= 16 && strncmp(q - 16, "class=\"version\" ", 16) == 0;
        fwrite(p, 1, (size_t)(v - p), m);
        if (!version && e - v > 5 && strncmp(e - 5, ".html", 5) == 0 && !memchr(v, ':', (size_t)(e - v)))
            fprintf(m, "%.*s.js.html", (int)(e - v - 5), v);
        else
            fwrite(v, 1, (size_t)(e - v), m);
        p = e;
    }
    fputs(p, m);
    fclose(m);
    /* the script, last in the head */
    if (out && (q = strstr(out, "</head>"))) {
        char *with = sa_rprintf("%.*s<script src=\"%ssite.js\" defer></script>\n%s", (int)(q - out), out, up, q);
        free(out);
        out = with;
    }
    return out;
}

/* Replaces the other-version placeholders of text (in place is not possible: a new string). */
static char *fill_version(const char *text, const char *href, const char *label)
{
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    const char *p = text, *q;
    int k = 0;

    if (!m)
        return NULL;
    while ((q = strstr(p, OTHER_VERSION))) {
        fwrite(p, 1, (size_t)(q - p), m);
        fputs(k++ % 2 == 0 ? href : label, m);
        p = q + strlen(OTHER_VERSION);
    }
    fputs(p, m);
    fclose(m);
    return out;
}

/* text with every mark replaced by with (caller frees; NULL on out of memory). */
static char *replace_mark(const char *text, const char *mark, const char *with)
{
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    const char *p = text, *q;

    if (!m)
        return NULL;
    while ((q = strstr(p, mark))) {
        fwrite(p, 1, (size_t)(q - p), m);
        fputs(with, m);
        p = q + strlen(mark);
    }
    fputs(p, m);
    fclose(m);
    return out;
}

/* Ends a page and writes both versions. */
static bool page_close(page_t *pg, bool ok, sa_error_t *error)
{
    const char *base = strrchr(pg->rel, '/') ? strrchr(pg->rel, '/') + 1 : pg->rel;
    char *plain = NULL, *enh = NULL, *e1 = NULL, *href = NULL, *name = NULL;

    sa_rhtml_end(pg->f);
    fclose(pg->f);
    if (ok && pg->range[0] && strstr(pg->buf, RANGE_MARK)) {
        char *r = replace_mark(pg->buf, RANGE_MARK, pg->range);
        if (r) {
            free(pg->buf);
            pg->buf = r;
        } else {
            ok = false;
            sa_error_nomem(error);
        }
    }
    if (ok) {
        href = sa_rprintf("%s.js.html", base);
        plain = href ? fill_version(pg->buf, href, "interactive version") : NULL;
        free(href);
        href = sa_rprintf("%s.html", base);
        e1 = href ? fill_version(pg->buf, href, "plain version (no script)") : NULL;
        enh = e1 ? enhance(e1, pg->up) : NULL; /* the version link (class version) keeps its .html */
        ok = plain && enh;
        if (!ok)
            sa_error_nomem(error);
        name = sa_rprintf("%s.html", pg->rel);
        ok = ok && name && write_file(pg->s, name, plain, strlen(plain), error);
        free(name);
        name = sa_rprintf("%s.js.html", pg->rel);
        ok = ok && name && write_file(pg->s, name, enh, strlen(enh), error);
        free(name);
    }
    free(plain);
    free(e1);
    free(enh);
    free(href);
    free(pg->buf);
    free(pg->rel);
    return ok;
}

/* A paragraph of text (escaped) in the page. */
static void para(page_t *pg, const char *cls, const char *text)
{
    fprintf(pg->f, "<p class=\"%s\">", cls);
    sa_rxml_escape(pg->f, text);
    fputs("</p>\n", pg->f);
}

/* ---- sections ----------------------------------------------------------------------------------- */

/* Collects the accounts of a document's rows (not totals) into pg->accounts. */
static void collect_accounts(page_t *pg, const sa_rtable_t *t)
{
    size_t c = sa_rtable_col(t, "account");

    for (size_t r = 0; c != SIZE_MAX && r < t->nrows; r++) {
        const sa_cell_t *cell = sa_rtable_cell(t, r, c);
        if (!sa_rtable_is_total(t, r) && cell->kind == SA_CELL_STR && !sa_strv_contains(pg->accounts, cell->s))
            sa_strv_add_sorted_unique(pg->accounts, cell->s);
    }
}

/* Writes the document d as rel.table.csv and rel.table.json (every column, as --csv and --json do). */
static bool write_data(page_t *pg, const sa_rdoc_t *d, sa_error_t *error)
{
    static const sa_format_t fmts[2] = {SA_FMT_CSV, SA_FMT_JSON};
    static const char *const ext[2] = {"csv", "json"};
    sa_report_opts_t o;
    bool ok = true;

    sa_report_opts_init(&o);
    for (int i = 0; ok && i < 2; i++) {
        char *buf = NULL, *name = sa_rprintf("%s.%s.%s", pg->rel, pg->table, ext[i]);
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        o.format = fmts[i];
        ok = name && m && sa_rdoc_write(d, &o, m, error);
        if (m)
            fclose(m);
        ok = ok && write_file(pg->s, name, buf, len, error);
        free(buf);
        free(name);
    }
    sa_report_opts_clear(&o);
    return ok;
}

static bool on_doc(const sa_rdoc_t *d, void *ctx, sa_error_t *error);

/* The months of a chart as a table (month, use, cumulative use), written like a section's. */
static bool trend_table(page_t *pg, const sa_rchart_t *c, sa_error_t *error)
{
    static const sa_col_t cols[4] = {
        {"month", "Month", SA_COL_STR, 0, 0},
        {"used", "Used", SA_COL_NUM, 4, 0},
        {"cumulative", "Cumulative", SA_COL_NUM, 4, 0},
        {"unit", "Unit", SA_COL_STR, 0, 0},
    };
    sa_rtable_t t;
    sa_rdoc_t d = {.kind = "trend", .title = "month by month", .table = &t};
    double cum = 0;
    char buf[16];
    bool ok = true;

    sa_rtable_init(&t, cols, 4);
    for (size_t i = 0; ok && i < c->nm && c->m[i] < c->data_to; i++) {
        size_t r = sa_rtable_add_row(&t);
        if ((ok = r != SIZE_MAX)) {
            cum += c->val[i];
            sa_rtable_str(&t, r, 0, sa_rmonth_label(c->m[i], buf, sizeof buf));
            sa_rtable_num(&t, r, 1, c->val[i]);
            sa_rtable_num(&t, r, 2, cum);
            sa_rtable_str(&t, r, 3, c->unit);
        }
    }
    if (t.nrows) /* the page's subtitle says these months */
        snprintf(pg->range, sizeof pg->range, "%s to %s", sa_rtable_cell(&t, 0, 0)->s,
                 sa_rtable_cell(&t, t.nrows - 1, 0)->s);
    pg->trend = false;
    pg->table = "months";
    pg->heading = "Month by month";
    ok = ok ? on_doc(&d, pg, error) : sa_error_nomem(error);
    sa_rtable_clear(&t);
    return ok;
}

/* A string's copy in v (kept for a table's columns); NULL on out of memory. */
static const char *keep(sa_strv_t *v, char *s)
{
    if (!s || !sa_strv_push(v, s)) {
        free(s);
        return NULL;
    }
    free(s);
    return v->v[v->n - 1];
}

/*
 * The rows of one section ("current" or "finished") of the current report's document
 * (a row per cluster, section, grouping, name and state) pivoted for a cluster's page:
 * a row per grouping and name, a column of jobs per state (and, for the current jobs,
 * of their GPUs), the "all" row a total. Written like any section's document (its
 * preamble only with the first).
 */
static bool pivot_current(page_t *pg, const sa_rdoc_t *d, const char *section, bool preamble, sa_error_t *error)
{
    const sa_rtable_t *t = d->table;
    size_t c_sect = sa_rtable_col(t, "section"), c_by = sa_rtable_col(t, "by"), c_key = sa_rtable_col(t, "key");
    size_t c_state = sa_rtable_col(t, "state"), c_jobs = sa_rtable_col(t, "jobs"), c_gpus = sa_rtable_col(t, "gpus");
    bool with_gpus = strcmp(section, "current") == 0;
    sa_strv_t states, names, rows;
    sa_col_t *cols = NULL;
    sa_rtable_t p;
    sa_rdoc_t pd = *d;
    size_t ncols, ns;
    bool ok = false;

    if (c_sect == SIZE_MAX || c_by == SIZE_MAX || c_key == SIZE_MAX || c_state == SIZE_MAX || c_jobs == SIZE_MAX ||
        c_gpus == SIZE_MAX) {
        sa_error_set(error, SA_ERR_INPUT, 0, "the current report lacks a column the site pivots");
        return false;
    }
    sa_strv_init(&states);
    sa_strv_init(&names);
    sa_strv_init(&rows);
    sa_rtable_init(&p, NULL, 0);
    /* the states (in the report's order) and the rows, "by\001key", in order of appearance */
    for (size_t r = 0; r < t->nrows; r++) {
        const char *st = sa_rtable_cell(t, r, c_state)->s, *by = sa_rtable_cell(t, r, c_by)->s;
        const char *key = sa_rtable_cell(t, r, c_key)->s, *sect = sa_rtable_cell(t, r, c_sect)->s;
        char *rk;
        if (!sect || strcmp(sect, section) != 0)
            continue;
        rk = sa_rprintf("%s\001%s", by ? by : "", key ? key : "");
        if (!rk || (st && !sa_strv_contains(&states, st) && !sa_strv_push(&states, st)) ||
            (!sa_strv_contains(&rows, rk) && !sa_strv_push(&rows, rk))) {
            free(rk);
            goto nomem;
        }
        free(rk);
    }
    ns = states.n;
    ncols = 2 + (with_gpus ? 2 : 1) * ns;
    if (!(cols = calloc(ncols, sizeof *cols)))
        goto nomem;
    cols[0] = (sa_col_t){"by", "By", SA_COL_STR, 0, 0};
    cols[1] = (sa_col_t){"key", "Name", SA_COL_STR, 0, 0};
    for (size_t i = 0; i < ncols - 2; i++) {
        const char *st = states.v[i % ns];
        bool gpus = i >= ns;
        char *k = sa_rprintf("%s%s", st, gpus ? "_gpus" : ""), *title = sa_rprintf("%s%s", st, gpus ? " GPUs" : "");
        /* a column key from data: [a-z0-9_] only (it is a JSON member, a CSV header, an attribute) */
        for (char *q = k; q && *q; q++)
            *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a'
                        : (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ? *q : '_');
        for (char *q = title; q && *q; q++)
            *q = *q == '_' ? ' ' : *q; /* OUT OF MEMORY: a header that can wrap */
        cols[2 + i].key = keep(&names, k);
        cols[2 + i].title = keep(&names, title);
        cols[2 + i].type = SA_COL_INT;
        if (!cols[2 + i].key || !cols[2 + i].title)
            goto nomem;
    }
    sa_rtable_init(&p, cols, ncols);
    for (size_t k = 0; k < rows.n; k++) {
        size_t r = sa_rtable_add_row(&p);
        const char *sep = strchr(rows.v[k], '\001');
        char *by;
        if (r == SIZE_MAX || !(by = strndup(rows.v[k], (size_t)(sep - rows.v[k]))))
            goto nomem;
        sa_rtable_str(&p, r, 0, by);
        sa_rtable_str(&p, r, 1, sep + 1);
        if (strcmp(by, "all") == 0)
            sa_rtable_mark_total(&p, r);
        free(by);
        for (size_t i = 2; i < ncols; i++)
            sa_rtable_int(&p, r, i, 0);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        const char *st = sa_rtable_cell(t, r, c_state)->s, *by = sa_rtable_cell(t, r, c_by)->s;
        const char *key = sa_rtable_cell(t, r, c_key)->s, *sect = sa_rtable_cell(t, r, c_sect)->s;
        size_t row = SIZE_MAX, col = SIZE_MAX;
        char *rk;
        if (!sect || strcmp(sect, section) != 0)
            continue;
        if (!(rk = sa_rprintf("%s\001%s", by ? by : "", key ? key : "")))
            goto nomem;
        for (size_t k = 0; k < rows.n && row == SIZE_MAX; k++)
            if (strcmp(rows.v[k], rk) == 0)
                row = k;
        free(rk);
        for (size_t i = 0; st && i < ns && col == SIZE_MAX; i++)
            if (strcmp(states.v[i], st) == 0)
                col = 2 + i;
        if (row == SIZE_MAX || col == SIZE_MAX)
            continue;
        sa_rtable_int(&p, row, col, sa_rtable_cell(&p, row, col)->i + sa_rtable_cell(t, r, c_jobs)->i);
        if (with_gpus)
            sa_rtable_int(&p, row, col + ns, sa_rtable_cell(&p, row, col + ns)->i + sa_rtable_cell(t, r, c_gpus)->i);
    }
    pd.table = &p;
    if (!preamble)
        pd.preamble = NULL;
    ok = on_doc(&pd, pg, error);
    goto done;
nomem:
    sa_error_nomem(error);
done:
    sa_rtable_clear(&p);
    free(cols);
    sa_strv_clear(&states);
    sa_strv_clear(&names);
    sa_strv_clear(&rows);
    return ok;
}

/* doc_cb of every section: the document as HTML in the page, and as CSV and JSON beside it. */
static bool on_doc(const sa_rdoc_t *d, void *ctx, sa_error_t *error)
{
    page_t *pg = ctx;
    const char *base = strrchr(pg->rel, '/') ? strrchr(pg->rel, '/') + 1 : pg->rel;
    sa_report_opts_t vo;
    char *links = NULL, *id = NULL;
    size_t len = 0;
    FILE *m;
    bool ok;

    if (pg->pivot) {
        /* the queue, then the jobs finished: two narrow tables instead of a row per state */
        pg->pivot = false;
        if (!pivot_current(pg, d, "current", true, error))
            return false;
        pg->table = "finished";
        pg->heading = "Jobs finished in the last 24 hours";
        return pivot_current(pg, d, "finished", false, error);
    }
    if (pg->accounts)
        collect_accounts(pg, d->table);
    if (!write_data(pg, d, error))
        return false;
    sa_report_opts_init(&vo);
    if ((m = open_memstream(&links, &len))) {
        fputs("this table as <a href=\"", m);
        put_href(m, base);
        fprintf(m, ".%s.csv\">CSV</a> and <a href=\"", pg->table);
        put_href(m, base);
        fprintf(m, ".%s.json\">JSON</a> (every column)", pg->table);
        fclose(m);
    }
    id = sa_rprintf("t-%s", pg->table);
    if (pg->plots_first && d->nplots) {
        /* the plots under the heading and the preamble, then the table folded: a day of rows each */
        sa_rdoc_t rest = *d;
        fputs("<h2>", pg->f);
        sa_rxml_escape(pg->f, pg->heading);
        fputs("</h2>\n", pg->f);
        for (size_t i = 0; d->preamble && i < d->preamble->n; i++)
            para(pg, "meta", d->preamble->v[i]);
        for (size_t i = 0; i < d->nplots; i++)
            sa_rplot(pg->f, &d->plots[i], false, 0);
        rest.nplots = 0;
        rest.preamble = NULL;
        fprintf(pg->f, "<details><summary>The figures drawn, as a table (%zu rows)</summary>\n", d->table->nrows);
        ok = links && id && sa_rhtml_doc(pg->f, &rest, &vo, NULL, true, id, links, error);
        fputs("</details>\n", pg->f);
        pg->plots_first = false;
    } else if (pg->charts_first && d->has_charts && d->ncharts) {
        /* the charts under the heading, then the rest of the document (its preamble, its table) */
        sa_rdoc_t rest = *d;
        fputs("<h2>", pg->f);
        sa_rxml_escape(pg->f, pg->heading);
        fputs("</h2>\n", pg->f);
        sa_rcharts_svg(pg->f, d->charts_title, d->no_charts, NULL, d->charts, d->ncharts, false);
        rest.has_charts = false;
        ok = links && id && (!pg->colspec || sa_colspecs_parse(pg->colspec, &vo.columns, &vo.ncolumns, error)) &&
             sa_rhtml_doc(pg->f, &rest, &vo, NULL, true, id, links, error);
        pg->charts_first = false;
    } else {
        ok = links && id && (!pg->colspec || sa_colspecs_parse(pg->colspec, &vo.columns, &vo.ncolumns, error)) &&
             sa_rhtml_doc(pg->f, d, &vo, pg->heading, true, id, links, error);
    }
    sa_report_opts_clear(&vo);
    free(links);
    free(id);
    if (ok && pg->trend && d->has_charts && d->ncharts)
        ok = trend_table(pg, &d->charts[0], error);
    return ok;
}

enum { S_USAGE, S_UTIL, S_HEALTH, S_CURRENT, S_EFF, S_WAITS, S_UTILTIME, S_SCHED };

/* What one section runs. */
typedef struct {
    int kind;
    const char *table, *heading, *colspec;
    int64_t start, end;
    unsigned by;
    const char *account;  /* -A; NULL: every account */
    bool awards;          /* with the site's --allocations */
    bool unusable;        /* utilization: the GPUs nobody could use alone */
    bool tres;            /* usage: CPU and memory next to the GPUs (-T gres/gpu,cpu,mem) */
} section_t;

/* Runs a section's report for cluster into the page. */
static bool section(page_t *pg, const char *cluster, const section_t *sec, sa_error_t *error)
{
    sa_report_opts_t o = *pg->s->o; /* a shallow copy: its lists are replaced below, never cleared */
    sa_strv_t one, acc, none;
    bool ok;

    sa_strv_init(&one);
    sa_strv_init(&acc);
    sa_strv_init(&none);
    sa_strv_push(&one, cluster);
    if (sec->account)
        sa_strv_push(&acc, sec->account);
    o.clusters = one;
    o.accounts = acc;
    o.users = none;
    o.start = sec->start;
    o.end = sec->end;
    o.by = sec->by;
    o.allocations_path = sec->awards ? pg->s->o->allocations_path : NULL;
    o.format = SA_FMT_HTML;
    o.no_header = o.long_format = false;
    o.columns = NULL;
    o.ncolumns = 0;
    o.doc_cb = on_doc;
    o.doc_ctx = pg;
    o.unusable_only = sec->unusable;
    o.names_known = sec->account != NULL; /* an account of the site's own rows */
    o.ntres = 0;
    if (sec->tres) {
        o.tres[o.ntres++] = SA_TRES_GPU;
        o.tres[o.ntres++] = SA_TRES_CPU;
        o.tres[o.ntres++] = SA_TRES_MEM;
    }
    pg->table = sec->table;
    pg->heading = sec->heading;
    pg->colspec = sec->colspec;
    pg->pivot = sec->kind == S_CURRENT;
    pg->plots_first = sec->kind == S_UTILTIME || sec->kind == S_SCHED;
    pg->healthy = true;
    /* warnings (a GPU type without an RGU weight) are in the pages' preambles: not repeated per section */
    switch (sec->kind) {
    case S_USAGE: ok = sa_report_usage(&o, NULL, NULL, error); break;
    case S_UTIL: ok = sa_report_utilization(&o, NULL, NULL, error); break;
    case S_HEALTH: ok = sa_report_health(&o, NULL, NULL, &pg->healthy, error); break;
    case S_EFF: ok = sa_report_efficiency(&o, NULL, NULL, error); break;
    case S_WAITS: ok = sa_report_waits(&o, NULL, NULL, error); break;
    case S_UTILTIME: ok = sa_report_utilization_over_time(&o, NULL, NULL, error); break;
    case S_SCHED: ok = sa_report_scheduler(&o, NULL, NULL, error); break;
    default: ok = sa_report_current(&o, NULL, NULL, error); break;
    }
    sa_strv_clear(&one);
    sa_strv_clear(&acc);
    pg->colspec = NULL;
    return ok;
}

/* ---- the pages ------------------------------------------------------------------------------------ */

/* The end of the month starting at m, or now when the month is the current one. */
static int64_t month_end(int64_t m, int64_t now)
{
    int64_t e = sa_rmonth_add(m, 1);
    return now > m && now < e ? now : e;
}

/*
 * [start, end) as the headings name it: "2026-10" (a whole month), "2026-09 to 2026-10"
 * (whole months), else with the times that are not a month's bounds:
 * "2026-11, to 2026-11-28T16:30:49Z", "2026-07-15T00:00:00Z to 2026-10".
 */
static const char *period_label(int64_t start, int64_t end, char *buf, size_t sz)
{
    int64_t m0 = sa_rmonth_floor(start), m1 = sa_rmonth_floor(end - 1);
    char a[32], b[32];

    if (m0 == start)
        sa_rmonth_label(start, a, sizeof a);
    else
        snprintf(a, sizeof a, "%s", sa_riso(start));
    if (sa_rmonth_add(m1, 1) == end)
        sa_rmonth_label(m1, b, sizeof b);
    else
        snprintf(b, sizeof b, "%s", sa_riso(end));
    if (m0 == start && m0 == m1 && sa_rmonth_add(m1, 1) == end)
        snprintf(buf, sz, "%s", a);
    else if (m0 == start && m0 == m1)
        snprintf(buf, sz, "%s, to %s", a, b);
    else
        snprintf(buf, sz, "%s to %s", a, b);
    return buf;
}

/* The columns of the GPUs nobody could use on the pages. */
#define UNUSABLE_COLS "cluster,gpu_type,state,reason,gpu_unusable_hours,gpu_hours,class"

/* The usage section of [start, end): against the awards (their charts first when charts_first), else by account. */
static bool usage_section(page_t *pg, const scluster_t *c, int64_t start, int64_t end, bool charts_first,
                          sa_error_t *error)
{
    char h[160], when[80];
    section_t use = {S_USAGE, "usage", h, NULL, start, end, 0, NULL, true, false, false};

    snprintf(h, sizeof h, "GPU usage%s, %s%s", pg->s->o->allocations_path ? " against the awards" : " by account",
             period_label(start, end, when, sizeof when),
             pg->s->o->allocations_path ? " (the charts: each award over its period)" : "");
    pg->charts_first = charts_first;
    return section(pg, c->name, &use, error);
}

/*
 * Efficiency, queue waits by partition, utilization by exact state and the idle GPUs
 * nobody could use of [start, end) for cluster c (usage first when with_usage).
 */
static bool month_sections(page_t *pg, const scluster_t *c, int64_t start, int64_t end, bool with_usage,
                           sa_error_t *error)
{
    char h2[160], h3[160], h4[160], h5[160], when[80];
    section_t eff = {S_EFF, "efficiency", h4, NULL, start, end, 0, NULL, false, false, false};
    section_t util = {S_UTIL, "utilization", h2, NULL, start, end, 0, NULL, false, false, false};
    section_t str = {S_UTIL, "unusable", h3, UNUSABLE_COLS, start, end, 0, NULL, false, true, false};
    section_t waits = {S_WAITS, "waits", h5, NULL, start, end, SA_BY_PARTITION, NULL, false, false, false};

    period_label(start, end, when, sizeof when);
    snprintf(h2, sizeof h2, "Utilization by exact node state, %s", when);
    snprintf(h3, sizeof h3, "Idle GPUs nobody could use, and why, %s", when);
    snprintf(h4, sizeof h4, "What the allocated GPUs and CPUs did (runs that ended), %s", when);
    snprintf(h5, sizeof h5, "Queue waits by partition (runs that started), %s", when);
    if ((with_usage && !usage_section(pg, c, start, end, false, error)) || !section(pg, c->name, &eff, error) ||
        !section(pg, c->name, &waits, error))
        return false;
    if (!c->has_series) {
        para(pg, "meta", "No time series for this cluster: no utilization and no idle GPUs nobody could use.");
        return true;
    }
    return section(pg, c->name, &util, error) && section(pg, c->name, &str, error);
}

/* CLUSTER/YYYY-MM: the month's usage, efficiency, queue waits, utilization and the GPUs nobody could use. */
static bool month_page(site_t *s, const scluster_t *c, const char *month, sa_error_t *error)
{
    page_t pg;
    char *rel = sa_rprintf("%s/%s", c->file, month), *title = sa_rprintf("%s, %s", c->name, month);
    int64_t start, end;
    bool ok;

    if (!rel || !title || !sa_rmonth_parse(month, &start, &end)) {
        free(rel);
        free(title);
        sa_error_nomem(error);
        return false;
    }
    ok = page_open(s, &pg, rel, title, "<a href=\"index.html\">This cluster</a>", error);
    if (ok)
        ok = month_sections(&pg, c, start, month_end(start, s->o->now), true, error);
    ok = page_close(&pg, ok, error) && ok;
    free(rel);
    free(title);
    return ok;
}

/* The links of a cluster page: its months and its accounts. */
static void cluster_links(page_t *pg, const scluster_t *c)
{
    fputs("<h2 id=\"pages\">Months and accounts</h2>\n<p class=\"links\">Months (usage, efficiency, queue waits, "
          "utilization):",
          pg->f);
    for (size_t i = c->months.n; i-- > 0;)
        fprintf(pg->f, " <a href=\"%s.html\">%s</a>", c->months.v[i], c->months.v[i]);
    fputs(c->months.n ? "" : " none observed yet", pg->f);
    fputs("</p>\n<p class=\"links\">Accounts:", pg->f);
    for (size_t i = 0; i < c->accounts.n; i++) {
        char *f = file_name(c->accounts.v[i]);
        fputs(" <a href=\"account-", pg->f);
        if (f)
            put_href(pg->f, f);
        fputs(".html\">", pg->f);
        sa_rxml_escape(pg->f, c->accounts.v[i]);
        fputs("</a>", pg->f);
        free(f);
    }
    fputs(c->accounts.n ? "</p>\n" : " none with use in these months</p>\n", pg->f);
    if (c->months.n) { /* a month's jobs can be many: not a page, the command that lists them */
        int64_t ms, me;
        const char *m = c->months.v[c->land];
        if (sa_rmonth_parse(m, &ms, &me)) {
            char from[16], to[16];
            snprintf(from, sizeof from, "%.10s", sa_riso(ms));
            snprintf(to, sizeof to, "%.10s", sa_riso(me));
            fputs("<p class=\"links\">Jobs of a month are not a page (a month can hold very many); list them with "
                  "<code>slurm-report jobs -M ", pg->f);
            sa_rxml_escape(pg->f, c->name);
            fprintf(pg->f, " -S %s -E %s</code> (add <code>-A ACCOUNT</code>, <code>-u USER</code>, "
                           "<code>-s FAILED</code>, ...).</p>\n", from, to);
        }
    }
}

/* The sections over time of [start, end) on the cluster page: utilization by day, the scheduler (sdiag). */
static bool time_sections(page_t *pg, const scluster_t *c, int64_t start, int64_t end, sa_error_t *error)
{
    char h1[160], h2[160], when[80];
    section_t days = {S_UTILTIME, "utilization-days", h1, NULL, start, end, 0, NULL, false, false, false};
    section_t sched = {S_SCHED, "scheduler", h2, NULL, start, end, 0, NULL, false, false, false};

    if (!c->has_series)
        return true; /* said with the utilization */
    period_label(start, end, when, sizeof when);
    snprintf(h1, sizeof h1, "Where the GPU, CPU and memory time went, day by day, %s", when);
    snprintf(h2, sizeof h2, "The scheduler (sdiag), %s", when);
    return section(pg, c->name, &days, error) && section(pg, c->name, &sched, error);
}

/*
 * CLUSTER/index: the month it lands on (the last one observed, or the one before it during
 * that one's first week): its usage against the awards, charts first; the archive's
 * health, the current queue; the rest of that month; the use over the site's months.
 */
static bool cluster_page(site_t *s, scluster_t *c, sa_error_t *error)
{
    page_t pg;
    char *rel = sa_rprintf("%s/index", c->file), *title = sa_rprintf("Cluster %s", c->name), range[160], when[80];
    section_t health = {S_HEALTH, "health", "Health of the archive (the last 24 hours)", NULL,
                        SA_UNSET, SA_UNSET, 0, NULL, false, false, false};
    section_t queue = {S_CURRENT, "queue", "Current queue (the latest squeue snapshot)", NULL, SA_UNSET, SA_UNSET,
                       SA_BY_PARTITION | SA_BY_ACCOUNT, NULL, false, false, false};
    section_t all = {S_USAGE, "accounts", range, NULL, c->from, c->to, SA_BY_ACCOUNT, NULL, true, false, true};
    int64_t ms = SA_UNSET, me = SA_UNSET;
    bool ok;

    if (c->months.n && sa_rmonth_parse(c->months.v[c->land], &ms, &me))
        me = month_end(ms, s->o->now);
    snprintf(range, sizeof range, "GPU, CPU and memory usage per account, %s",
             c->months.n ? period_label(c->from, c->to, when, sizeof when) : "-");
    ok = rel && title && page_open(s, &pg, rel, title, NULL, error);
    if (!rel || !title)
        sa_error_nomem(error);
    if (ok) {
        fputs("<p class=\"links\"><a href=\"#pages\">Months and accounts</a></p>\n", pg.f);
        if (ms == SA_UNSET) {
            char line[160];
            snprintf(line, sizeof line, "Nothing observed of this cluster up to %s: no month to show.",
                     sa_riso(s->o->now));
            para(&pg, "meta", line);
        }
        ok = ms == SA_UNSET || usage_section(&pg, c, ms, me, true, error);
    }
    if (ok) {
        ok = section(&pg, c->name, &health, error);
        c->health = pg.healthy ? "OK" : "UNHEALTHY";
    }
    ok = ok && section(&pg, c->name, &queue, error);
    if (ok && ms != SA_UNSET)
        ok = month_sections(&pg, c, ms, me, false, error) && time_sections(&pg, c, ms, me, error);
    pg.accounts = &c->accounts;
    ok = ok && (!c->months.n || section(&pg, c->name, &all, error));
    pg.accounts = NULL;
    if (ok)
        cluster_links(&pg, c);
    if (rel && title)
        ok = page_close(&pg, ok, error) && ok;
    free(rel);
    free(title);
    return ok;
}

/* The start of the trend of account on cluster c: its earliest award's start there, else c's first month. */
static int64_t trend_start(const site_t *s, const scluster_t *c, const char *account)
{
    int64_t from = c->from;

    for (size_t i = 0; i < s->awards.n; i++) {
        const sa_award_t *a = &s->awards.v[i];
        if (strcmp(a->cluster, c->name) == 0 && strcmp(a->account, account) == 0 && a->start < from)
            from = a->start;
    }
    return from;
}

/*
 * One line per award of the account that gives its group's size: the award and its
 * share per member (the trend's table has the use per member beside them).
 */
static void members_lines(page_t *pg, const char *cluster, const char *account)
{
    const sa_awards_t *aw = &pg->s->awards;
    for (size_t i = 0; i < aw->n; i++) {
        const sa_award_t *a = &aw->v[i];
        char *line;
        if (a->members <= 0 || strcmp(a->cluster, cluster) != 0 || strcmp(a->account, account) != 0)
            continue;
        line = sa_rprintf("Award of %g %s%s%s, %s to %s, members: %lld (%.4g %s a member)", a->amount,
                          sa_award_unit_name(a->unit), a->gpu_type ? " on GPU type " : "",
                          a->gpu_type ? a->gpu_type : "", sa_riso(a->start), sa_riso(a->end),
                          (long long)a->members, a->amount / (double)a->members, sa_award_unit_name(a->unit));
        if (line)
            para(pg, "meta", line);
        free(line);
    }
}

/*
 * CLUSTER/account-NAME: the account's trend (against its award, from the award's start,
 * month by month, by user and by GPU type), and its use per user and GPU type over the
 * site's months.
 */
static bool account_page(site_t *s, const scluster_t *c, const char *account, sa_error_t *error)
{
    page_t pg;
    char *f = file_name(account), *rel = f ? sa_rprintf("%s/account-%s", c->file, f) : NULL;
    char *title = sa_rprintf("%s, account %s", c->name, account), range[160], theading[160], when[80];
    int64_t tfrom = trend_start(s, c, account);
    /* the trend against the award, its charts broken down by user and GPU type; then one table of both */
    section_t trend = {S_USAGE, "trend", theading, NULL, tfrom, c->to,
                       SA_BY_ACCOUNT | SA_BY_USER | SA_BY_GPU_TYPE, account, true, false, false};
    section_t users = {S_USAGE, "users", range, NULL, c->from, c->to, SA_BY_USER | SA_BY_GPU_TYPE,
                       account, false, false, true};
    bool ok = rel && title;

    snprintf(theading, sizeof theading, "Trend%s, %s", tfrom < c->from ? " from the award's start" : "",
             period_label(tfrom, c->to, when, sizeof when));
    snprintf(range, sizeof range, "Users and GPU types (GPUs, CPUs, memory), %s",
             period_label(c->from, c->to, when, sizeof when));
    if (!ok)
        sa_error_nomem(error);
    ok = ok && page_open(s, &pg, rel, title, "<a href=\"index.html\">This cluster</a>", error);
    if (ok) {
        /* the months of the trend's table (from the award's start when there is one): known once it is written */
        snprintf(pg.range, sizeof pg.range, "%s", period_label(tfrom, c->to, when, sizeof when));
        fputs("<p class=\"meta\">" RANGE_MARK "</p>\n", pg.f);
        members_lines(&pg, c->name, account);
        pg.trend = true;
        ok = section(&pg, c->name, &trend, error) && section(&pg, c->name, &users, error);
        ok = page_close(&pg, ok, error) && ok;
    }
    free(f);
    free(rel);
    free(title);
    return ok;
}

/* ---- the ingester's profile ----------------------------------------------------------------------- */

/* The runs of a cluster on the ingester's page, newest first, and the phases they record. */
typedef struct {
    bson_t **v;         /* the run log's entries (owned copies) */
    size_t n, cap;
    sa_strv_t phases;   /* every phase any of them records, in the order the newest says them */
} runs_t;

static void runs_clear(runs_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        bson_destroy(r->v[i]);
    free(r->v);
    sa_strv_clear(&r->phases);
}

/* Keeps one ingest run (newest first: the query sorts) and the names of its phases. */
static bool keep_run(const bson_t *doc, void *ctx, sa_error_t *error)
{
    runs_t *r = ctx;

    if (!SA_VEC_GROW(r->v, r->cap, r->n, 1, 64) || !(r->v[r->n] = bson_copy(doc)))
        return sa_error_nomem(error);
    r->n++;
    return sa_ringest_run_phases(doc, &r->phases) || sa_error_nomem(error);
}

/* The counts of a run the page shows: key, title, member of counts (NULL: inserted + changed), long. */
static const struct {
    const char *key, *title, *member;
    bool lng;
} run_counts[] = {
    {"squeue_records", "squeue records", "counts.squeue_records", false},
    {"sacct_records", "sacct records", "counts.sacct_records", true},
    {"jobs_written", "Jobs written", NULL, false},
    {"write_statements", "Writes", "counts.write_statements", true},
    {"docs_read", "Docs read", "counts.docs_read", true},
    {"records_set_aside", "Set aside", "counts.records_set_aside", true},
    {"inputs_rejected", "Rejected", "counts.inputs_rejected", true},
};
#define NCOUNTS (sizeof run_counts / sizeof run_counts[0])
enum { RUN_START, RUN_TOTAL, RUN_OK, RUN_PHASES };

/*
 * The runs as a table: when each started, its total (every phase it recorded: they sum to
 * its wall time), OK, a column per phase, its counts, its seconds (finished - started) and
 * its error. cols and names are filled (the columns' keys and titles live in names).
 */
static bool runs_table(const runs_t *r, sa_rtable_t *t, sa_col_t **cols, sa_strv_t *names, sa_error_t *error)
{
    size_t np = r->phases.n, ncols = RUN_PHASES + np + NCOUNTS + 2, c_secs = ncols - 2, c_err = ncols - 1;
    sa_col_t *cv = calloc(ncols, sizeof *cv);

    if (!(*cols = cv))
        return sa_error_nomem(error);
    cv[RUN_START] = (sa_col_t){"started_at", "Started", SA_COL_STR, 0, 0};
    cv[RUN_TOTAL] = (sa_col_t){"total_ms", "Total ms", SA_COL_NUM, 0, 0};
    cv[RUN_OK] = (sa_col_t){"ok", "OK", SA_COL_STR, 0, SA_COL_BADGE};
    for (size_t k = 0; k < np; k++) {
        char *key = sa_rprintf("%s_ms", r->phases.v[k]), *title = sa_rprintf("%s ms", r->phases.v[k]);
        for (char *q = key; q && *q; q++) /* a column key: [a-z0-9_] (a JSON member, a CSV header, an attribute) */
            *q = (char)((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ? *q : '_');
        cv[RUN_PHASES + k] = (sa_col_t){keep(names, key), keep(names, title), SA_COL_NUM, 0, 0};
        if (!cv[RUN_PHASES + k].key || !cv[RUN_PHASES + k].title)
            return sa_error_nomem(error);
    }
    for (size_t k = 0; k < NCOUNTS; k++)
        cv[RUN_PHASES + np + k] = (sa_col_t){run_counts[k].key, run_counts[k].title, SA_COL_INT, 0,
                                              run_counts[k].lng ? SA_COL_LONG : 0};
    cv[c_secs] = (sa_col_t){"seconds", "Seconds", SA_COL_NUM, 1, SA_COL_LONG};
    cv[c_err] = (sa_col_t){"error", "Error", SA_COL_STR, 0, SA_COL_LONG};
    sa_rtable_init(t, cv, ncols);
    for (size_t i = 0; i < r->n; i++) {
        const bson_t *doc = r->v[i];
        sa_ringest_run_t f;
        double total = 0;
        size_t row = sa_rtable_add_row(t);
        if (row == SIZE_MAX)
            return sa_error_nomem(error);
        sa_ringest_run_read(doc, &f);
        sa_rtable_str(t, row, RUN_START, sa_riso(f.started_at));
        sa_rtable_str(t, row, RUN_OK, f.has_ok && f.ok_flag ? "ok" : "error");
        for (size_t k = 0; k < np; k++) {
            char *path = sa_rprintf("phases_ms.%s", r->phases.v[k]);
            double ms = path ? sa_ringest_run_number(doc, path) : 0;
            free(path);
            sa_rtable_num(t, row, RUN_PHASES + k, ms);
            total += ms;
        }
        sa_rtable_num(t, row, RUN_TOTAL, total);
        for (size_t k = 0; k < NCOUNTS; k++)
            sa_rtable_int(t, row, RUN_PHASES + np + k,
                          (int64_t)(run_counts[k].member ? sa_ringest_run_number(doc, run_counts[k].member)
                                                         : sa_ringest_run_number(doc, "counts.jobs_inserted") +
                                                               sa_ringest_run_number(doc, "counts.jobs_changed")));
        if (f.started_at != SA_UNSET && f.finished_at != SA_UNSET)
            sa_rtable_num(t, row, c_secs, (double)(f.finished_at - f.started_at));
        if (f.error_text)
            sa_rtable_str(t, row, c_err, f.error_text);
    }
    return true;
}

/* The number of a row's cell (0 when empty). */
static double cell_num(const sa_rtable_t *t, size_t r, size_t c)
{
    const sa_cell_t *x = sa_rtable_cell(t, r, c);
    return x->kind == SA_CELL_NUM ? x->d : x->kind == SA_CELL_INT ? (double)x->i : 0;
}

/* The most phases the chart shows apart; the others are summed as one. */
#define PLOT_PHASES 9

/*
 * The runs over time, oldest first: each run a bar of its phases stacked (the largest
 * PLOT_PHASES over these runs apart, the others together: the bar is the run's total),
 * then records read and job documents written, as lines.
 */
static bool run_plots(page_t *pg, const runs_t *r, const sa_rtable_t *t, sa_error_t *error)
{
    size_t n = t->nrows, np = r->phases.n, shown = np > PLOT_PHASES ? PLOT_PHASES : np;
    size_t *order = calloc(np + 1, sizeof *order);
    int64_t *at = calloc(n + 1, sizeof *at);
    double *v = calloc((PLOT_PHASES + 4) * (n + 1), sizeof *v), *sum = calloc(np + 1, sizeof *sum);
    sa_rseries_t s[PLOT_PHASES + 4];
    bool ok = order && at && v && sum;

    for (size_t k = 0; ok && k < np; k++) {
        order[k] = k;
        for (size_t i = 0; i < n; i++)
            sum[k] += cell_num(t, i, RUN_PHASES + k);
    }
    for (size_t a = 0; ok && a < np; a++) /* the phases by their time over the runs, the most first */
        for (size_t b = a + 1; b < np; b++)
            if (sum[order[b]] > sum[order[a]]) {
                size_t x = order[a];
                order[a] = order[b];
                order[b] = x;
            }
    for (size_t i = 0; ok && i < n; i++) {
        size_t row = n - 1 - i; /* the table is newest first */
        const sa_cell_t *st = sa_rtable_cell(t, row, RUN_START);
        if (st->kind != SA_CELL_STR || !sa_time_parse_iso(st->s, &at[i]))
            at[i] = i ? at[i - 1] : 0;
        for (size_t k = 0; k < np; k++) {
            size_t slot = k < shown ? k : shown; /* the rest summed */
            v[slot * (n + 1) + i] += cell_num(t, row, RUN_PHASES + order[k]);
        }
        for (size_t k = 0; k < 3; k++) /* squeue, sacct records; jobs written */
            v[(PLOT_PHASES + 1 + k) * (n + 1) + i] = cell_num(t, row, RUN_PHASES + np + k);
    }
    if (ok) {
        size_t ns = 0;
        for (size_t k = 0; k < shown; k++)
            s[ns++] = (sa_rseries_t){r->phases.v[order[k]], &v[k * (n + 1)]};
        if (np > shown)
            s[ns++] = (sa_rseries_t){"other phases", &v[shown * (n + 1)]};
        for (size_t k = 0; k < 3; k++)
            s[PLOT_PHASES + 1 + k] = (sa_rseries_t){run_counts[k].title, &v[(PLOT_PHASES + 1 + k) * (n + 1)]};
        sa_rplot_t phases = {SA_RPLOT_STACK, "Each run's phases (a bar: the run's total)", "milliseconds", at, n, s, ns,
                             true, "No run recorded."};
        sa_rplot_t counts = {SA_RPLOT_LINES, "Records read and job documents written per run", "records", at, n,
                             s + PLOT_PHASES + 1, 3, false, "No run recorded."};
        sa_rplot(pg->f, &phases, false, 0);
        sa_rplot(pg->f, &counts, false, 0);
    } else {
        sa_error_nomem(error);
    }
    free(order);
    free(at);
    free(v);
    free(sum);
    return ok;
}

/* ingest.html: per cluster, its last 300 runs (from its ingest_days), as a table and over time. */
static bool ingest_page(site_t *s, sa_error_t *error)
{
    page_t pg;
    bool ok = true;

    if (!page_open(s, &pg, "ingest", "The ingester: runs, phase times, records and writes", NULL, error))
        return false;
    for (size_t i = 0; ok && i < s->cl.n; i++) {
        sa_rtable_t t;
        sa_col_t *cols = NULL;
        sa_strv_t names;
        runs_t r;
        char heading[160], table[160];
        const sa_rdb_runs_query_t q = {.from = SA_UNSET, .to = SA_UNSET, .ok = -1, .newest_first = true, .limit = 300};
        sa_rdoc_t d = {.kind = "ingest", .title = "ingest runs", .table = &t};

        memset(&r, 0, sizeof r);
        sa_strv_init(&r.phases);
        sa_strv_init(&names);
        sa_rtable_init(&t, NULL, 0);
        ok = sa_rdb_ingest_runs(s->db, &s->cl.v[i], &q, keep_run, &r, error) && runs_table(&r, &t, &cols, &names, error);
        snprintf(heading, sizeof heading, "%s: the last %zu runs, newest first", s->c[i].name, t.nrows);
        snprintf(table, sizeof table, "runs-%s", s->c[i].file);
        pg.table = table;
        pg.heading = heading;
        ok = ok && on_doc(&d, &pg, error) && run_plots(&pg, &r, &t, error);
        sa_rtable_clear(&t);
        free(cols);
        sa_strv_clear(&names);
        runs_clear(&r);
    }
    if (ok)
        para(&pg, "meta", "Every phase a run records, in milliseconds (they add up to its total, the time from its start "
                          "to its record): lock; connect, validator, indexes; migrate; rollups; cache; node_config; "
                          "capture and exec (the Slurm commands); parse, sqlite, mongo and land (each snapshot); "
                          "backfill; retype; prometheus (the Prometheus import); finish. Jobs written: inserted and "
                          "changed documents (an unchanged poll writes none).");
    return page_close(&pg, ok, error) && ok;
}

/* ---- the index ------------------------------------------------------------------------------------- */

enum { I_CLUSTER, I_HEALTH, I_SQUEUE, I_SINFO, I_SACCT, I_FIRST, I_LAST, I_ACCOUNTS, I_N };

static const sa_col_t index_cols[I_N] = {
    {"cluster", "Cluster", SA_COL_STR, 0, 0},
    {"health", "Health", SA_COL_STR, 0, SA_COL_BADGE},
    {"last_squeue_at", "Last squeue", SA_COL_STR, 0, 0},
    {"last_sinfo_at", "Last sinfo", SA_COL_STR, 0, SA_COL_LONG},
    {"last_sacct_at", "Last sacct", SA_COL_STR, 0, SA_COL_LONG},
    {"first_month", "From", SA_COL_STR, 0, 0},
    {"last_month", "To", SA_COL_STR, 0, 0},
    {"accounts", "Accounts", SA_COL_INT, 0, 0},
};

/* index.html: the clusters, their health and ingest times, links to their pages and months. */
static bool index_page(site_t *s, sa_error_t *error)
{
    page_t pg;
    sa_rtable_t t;
    sa_rdoc_t d = {.kind = "index", .title = "clusters", .table = &t};
    char line[200];
    bool ok = true;

    if (!page_open(s, &pg, "index", "slurm-report: GPU use, utilization and health", NULL, error))
        return false;
    snprintf(line, sizeof line, "Written %s; months %s (UTC). Every table is also a CSV and a JSON file.",
             sa_riso(s->o->now), s->c && s->cl.n && s->c[0].months.n ? "shown per cluster" : "none");
    para(&pg, "meta", line);
    sa_rtable_init(&t, index_cols, I_N);
    for (size_t i = 0; ok && i < s->cl.n; i++) {
        const scluster_t *c = &s->c[i];
        const sa_rcluster_t *rc = &s->cl.v[i];
        size_t r = sa_rtable_add_row(&t);
        if (!(ok = r != SIZE_MAX))
            break;
        sa_rtable_str(&t, r, I_CLUSTER, c->name);
        sa_rtable_str(&t, r, I_HEALTH, c->health);
        sa_rtable_str(&t, r, I_SQUEUE, rc->last_squeue_at == SA_UNSET ? NULL : sa_riso(rc->last_squeue_at));
        sa_rtable_str(&t, r, I_SINFO, rc->last_sinfo_at == SA_UNSET ? NULL : sa_riso(rc->last_sinfo_at));
        sa_rtable_str(&t, r, I_SACCT, rc->last_sacct_at == SA_UNSET ? NULL : sa_riso(rc->last_sacct_at));
        sa_rtable_str(&t, r, I_FIRST, c->months.n ? c->months.v[0] : NULL);
        sa_rtable_str(&t, r, I_LAST, c->months.n ? c->months.v[c->months.n - 1] : NULL);
        sa_rtable_int(&t, r, I_ACCOUNTS, (int64_t)c->accounts.n);
    }
    pg.table = "clusters";
    pg.heading = "Clusters";
    if (!ok)
        sa_error_nomem(error);
    ok = ok && on_doc(&d, &pg, error);
    for (size_t i = 0; ok && i < s->cl.n; i++) {
        const scluster_t *c = &s->c[i];
        fputs("<h2>", pg.f);
        sa_rxml_escape(pg.f, c->name);
        fputs("</h2>\n<p class=\"links\"><a href=\"", pg.f);
        put_href(pg.f, c->file);
        fputs("/index.html\">overview</a> (health, queue, the latest month, accounts); months:", pg.f);
        for (size_t k = c->months.n; k-- > 0;) {
            fputs(" <a href=\"", pg.f);
            put_href(pg.f, c->file);
            fprintf(pg.f, "/%s.html\">%s</a>", c->months.v[k], c->months.v[k]);
        }
        fputs("</p>\n", pg.f);
    }
    fputs("<p class=\"links\"><a href=\"ingest.html\">The ingester's runs</a>: phase times, records and writes "
          "over time. <a href=\"metrics.prom\">metrics.prom</a>: the Prometheus metrics.</p>\n", pg.f);
    sa_rtable_clear(&t);
    return page_close(&pg, ok, error) && ok;
}

/* ---- the whole site ---------------------------------------------------------------------------------- */

/*
 * The earliest submit of the cluster's jobs: first_submit of its clusters document (the
 * earliest of every job document, jobs and jobs_superseded); an archive whose ingest_days
 * slurm-ingest has not built yet (an older version) has none, and is asked as before for
 * its lowest job id's submit (a scan on FerretDB).
 */
static bool first_submit(site_t *s, const sa_rcluster_t *rc, int64_t *first, sa_error_t *error)
{
    bson_t *f, *opts;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bool ok = true;

    *first = rc->first_submit;
    if (rc->ingest_days_version >= SA_RUNLOG_VERSION)
        return true;
    f = BCON_NEW("cluster", BCON_UTF8(rc->name));
    opts = BCON_NEW("sort", "{", "job_id", BCON_INT32(1), "}", "limit", BCON_INT64(1), "projection", "{", "submit",
                    BCON_INT32(1), "}");
    cur = mongoc_collection_find_with_opts(sa_rdb_collection(s->db, "jobs"), f, opts, NULL);
    if (mongoc_cursor_next(cur, &doc)) {
        sa_jobview_t v;
        sa_jobview_init(&v);
        ok = sa_jobview_read(&v, doc, error);
        *first = v.submit;
        sa_jobview_clear(&v);
    }
    mongoc_cursor_destroy(cur);
    bson_destroy(f);
    bson_destroy(opts);
    return ok;
}

/* The time of the cluster's first data: its first node snapshot, or its earliest job submit. */
static bool first_data(site_t *s, const sa_rcluster_t *rc, sa_tsdb_t *ts, int64_t *first, sa_error_t *error)
{
    sa_tsdb_coverage_t cov;
    bool ok = first_submit(s, rc, first, error);

    if (!ok)
        return false;
    if (ts && (ok = sa_tsdb_coverage(ts, rc->name, s->o->now - 1, s->o->now, &cov, error)) && cov.first != SA_UNSET &&
        (*first == SA_UNSET || cov.first < *first))
        *first = cov.first;
    return ok;
}

/* The cluster's last observation: of its jobs (sa_rcluster_as_of) or its nodes, at most now; SA_UNSET: none. */
static int64_t last_observed(const site_t *s, const sa_rcluster_t *rc, int64_t last_snapshot)
{
    int64_t t = sa_rcluster_as_of(rc, SA_UNSET);

    if (rc->last_sinfo_at != SA_UNSET && (t == SA_UNSET || rc->last_sinfo_at > t))
        t = rc->last_sinfo_at;
    if (last_snapshot != SA_UNSET && (t == SA_UNSET || last_snapshot > t))
        t = last_snapshot;
    return t != SA_UNSET && t > s->o->now ? s->o->now : t;
}

/*
 * A cluster's months: the last so->months up to the last one it was observed in (the
 * month holding its last observed second, so a month gets its page once it has data),
 * from its first data on; none when nothing was observed before now. The month its page
 * lands on: the last, or the one before it while the last has less than a week of data.
 */
static bool cluster_months(site_t *s, scluster_t *c, sa_rtsdbs_t *tsdbs, sa_error_t *error)
{
    sa_tsdb_t *ts = NULL;
    int64_t first, snap = SA_UNSET, lastm, m;
    char buf[16];

    if (!sa_rtsdbs_get(tsdbs, s->o, c->name, false, &ts, error) || (ts && !sa_tsdb_last_snapshot(ts, c->name, &snap, error)))
        return false;
    if (snap == SA_UNSET)
        ts = NULL; /* a --sqlite file without this cluster */
    if (!first_data(s, &s->cl.v[c - s->c], ts, &first, error))
        return false;
    c->has_series = ts != NULL;
    c->last = last_observed(s, &s->cl.v[c - s->c], snap);
    c->from = c->to = SA_UNSET;
    if (c->last == SA_UNSET || (first != SA_UNSET && first >= c->last))
        return true;
    lastm = sa_rmonth_floor(c->last - 1);
    m = sa_rmonth_add(lastm, 1 - s->so->months);
    if (first != SA_UNSET && sa_rmonth_floor(first) > m)
        m = sa_rmonth_floor(first);
    c->from = m;
    for (; m <= lastm; m = sa_rmonth_add(m, 1)) {
        if (!sa_strv_push(&c->months, sa_rmonth_label(m, buf, sizeof buf)))
            return sa_error_nomem(error);
    }
    c->to = month_end(lastm, s->o->now);
    c->land = c->months.n - 1;
    if (c->months.n >= 2 && c->last - lastm < 7 * 86400)
        c->land--;
    return true;
}

/*
 * What the site will show, before any of it is written: each cluster's months (the
 * awards are read before, once: sa_site_write). Fails (SA_ERR_USAGE) when no cluster was
 * observed before now: every window of the site would be empty.
 */
static bool plan(site_t *s, sa_error_t *error)
{
    sa_rtsdbs_t tsdbs;
    bool ok = true, any = false;

    sa_rtsdbs_init(&tsdbs);
    for (size_t i = 0; ok && i < s->cl.n; i++) {
        ok = cluster_months(s, &s->c[i], &tsdbs, error);
        any = any || s->c[i].months.n;
    }
    sa_rtsdbs_clear(&tsdbs);
    if (ok && !any) {
        sa_error_set(error, SA_ERR_USAGE, 0, "the window is empty: no cluster was observed before %s",
                     sa_riso(s->o->now));
        ok = false;
    }
    return ok;
}

/* Removes a tree (nftw callback). */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Replaces dir by the new site tmp: one rename (an exchange when dir exists), then the old site is removed. */
static bool swap_in(const char *tmp, const char *dir, sa_error_t *error)
{
    struct stat st;

    if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) != 0) {
            sa_error_set(error, SA_ERR_IO, errno, "%s: cannot swap the new site in: %s", dir, strerror(errno));
            return false;
        }
        nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS); /* the old site, now at tmp */
        return true;
    }
    if (rename(tmp, dir) != 0) {
        sa_error_set(error, SA_ERR_IO, errno, "%s: cannot move the new site in: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

/* ---- what killed runs left beside the site ------------------------------------------- */

/* A DIR.new-XXXXXX of a version before the pid was in the name, untouched this long, is a leftover. */
#define OLD_LEFTOVER_AGE (24 * 3600)

/*
 * True if the temporary site name's part after "DIR.new-" (rest) is a leftover: a
 * "<pid>-XXXXXX" whose pid no longer runs (kill says ESRCH; a process of another user
 * is alive), or an older version's "XXXXXX" (no pid) not modified for OLD_LEFTOVER_AGE.
 */
static bool is_leftover(const char *rest, const struct stat *st)
{
    char *end;
    long pid;

    errno = 0;
    pid = strtol(rest, &end, 10);
    if (end != rest && *end == '-' && strlen(end + 1) == 6 && errno == 0 && pid > 0 && pid <= INT32_MAX)
        return (pid_t)pid != getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    return strlen(rest) == 6 && !strchr(rest, '-') && time(NULL) - st->st_mtime > OLD_LEFTOVER_AGE;
}

/*
 * Removes what killed runs left beside the site directory dir: the new site is built in
 * DIR.new-<pid>-XXXXXX (and after the swap the old one is removed from there), so one
 * whose pid is gone is a leftover (is_leftover). Only directories of this user go; links
 * and anything else stay. Best effort: what cannot be removed is said on warn.
 */
static void sweep_leftovers(const char *dir, FILE *warn)
{
    char *copy = strdup(dir), *slash, *base, *prefix = NULL;
    const char *parent;
    struct dirent *de;
    DIR *d = NULL;

    if (!copy)
        return;
    for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
        copy[n - 1] = '\0';
    slash = strrchr(copy, '/');
    parent = !slash ? "." : slash == copy ? "/" : copy;
    base = slash ? slash + 1 : copy;
    if (slash && slash != copy)
        *slash = '\0';
    if (!*base || !(prefix = sa_rprintf("%s.new-", base)) || !(d = opendir(parent)))
        goto done;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        char *path;
        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid() || !is_leftover(de->d_name + strlen(prefix), &st))
            continue;
        if (!(path = sa_rprintf("%s/%s", parent, de->d_name)))
            break;
        if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && warn)
            fprintf(warn, "slurm-report: %s: cannot remove what a killed run left: %s\n", path, strerror(errno));
        free(path);
    }
done:
    if (d)
        closedir(d);
    free(prefix);
    free(copy);
}

/* metrics.prom in the site, and the --textfile (atomically). */
static bool write_metrics(site_t *s, sa_error_t *error)
{
    sa_report_opts_t o = *s->o;
    sa_atomic_file_t af;
    char *path = sa_rprintf("%s/metrics.prom", s->tmp);
    FILE *f;
    bool ok;

    o.format = SA_FMT_PROMETHEUS;
    o.doc_cb = NULL;
    if (!path || !(f = fopen(path, "w"))) {
        sa_error_set(error, SA_ERR_IO, errno, "writing %s: %s", path ? path : "metrics.prom", strerror(errno));
        free(path);
        return false;
    }
    ok = sa_report_current(&o, f, s->warn, error);
    ok = fclose(f) == 0 && ok;
    free(path);
    if (ok && s->so->textfile) {
        if (!(f = sa_atomic_open(&af, s->so->textfile, sa_umask_file_mode(), error)))
            return false;
        ok = sa_report_current(&o, f, s->warn, error);
        ok = sa_atomic_close(&af, ok, ok ? error : NULL) && ok;
    }
    return ok;
}

/* Every page of every cluster, the profile, the index, the metrics, into s->tmp (plan() made first). */
static bool build(site_t *s, sa_error_t *error)
{
    bool ok = write_file(s, "site.js", sa_site_js, strlen(sa_site_js), error);
    sa_rtsdbs_t none;

    sa_rtsdbs_init(&none);
    for (size_t i = 0; ok && i < s->cl.n; i++) {
        scluster_t *c = &s->c[i];
        if (!c->has_series) /* said once the site is known to be written */
            sa_rtsdbs_left_out(s->warn, &none, s->o, c->name,
                               "its pages have no utilization, idle GPUs nobody could use or scheduler statistics");
        ok = cluster_page(s, c, error);
        for (size_t k = 0; ok && k < c->months.n; k++)
            ok = month_page(s, c, c->months.v[k], error);
        for (size_t k = 0; ok && k < c->accounts.n; k++)
            ok = account_page(s, c, c->accounts.v[k], error);
    }
    return ok && ingest_page(s, error) && index_page(s, error) && write_metrics(s, error);
}

/*
 * The directory the site replaces: DIR, or where DIR points when it is a symbolic link
 * (the site is built beside that directory and swapped in there; the link stays).
 * Caller frees. NULL with *error set: a link to nothing or to something that is not a
 * directory, DIR not a directory, a link on DIR's path that another user made
 * (sa_path_links_ours) (SA_ERR_USAGE).
 */
static char *site_target(const char *dir, sa_error_t *error)
{
    struct stat st;
    char *real;

    if (!sa_path_links_ours(dir, "site directory", error))
        return NULL;
    if (lstat(dir, &st) != 0 || !S_ISLNK(st.st_mode)) {
        if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
            sa_error_set(error, SA_ERR_USAGE, ENOTDIR, "%s: not a directory", dir);
            return NULL;
        }
        if (!(real = strdup(dir)))
            sa_error_nomem(error);
        return real;
    }
    real = realpath(dir, NULL);
    if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        sa_error_set(error, SA_ERR_USAGE, real ? ENOTDIR : errno, "%s: a symbolic link to %s", dir,
                     real ? "something that is not a directory" : "nothing (make its directory first)");
        free(real);
        return NULL;
    }
    return real;
}

/* At most this much of the documents the site reads is kept for the run (the rest is read again when needed). */
bool sa_site_write(const sa_report_opts_t *o, const sa_site_opts_t *so_in, FILE *warn, sa_error_t *error)
{
    site_t s;
    sa_report_opts_t shared;
    sa_rtsdbs_t tsdbs; /* the time series, each opened once for every section */
    sa_site_opts_t so_real = *so_in, *so = &so_real;
    char *target = site_target(so_in->dir, error);
    /* the pid in the name says whether its writer still runs (sweep_leftovers) */
    char *tmpl = target ? sa_rprintf("%s.new-%ld-XXXXXX", target, (long)getpid()) : NULL;
    bool ok = false;

    memset(&s, 0, sizeof s);
    sa_rtsdbs_init(&tsdbs);
    if (!target)
        return false;
    so->dir = target;
    s.o = o;
    s.so = so;
    s.warn = warn;
    if (!tmpl) {
        free(target);
        sa_error_nomem(error);
        return false;
    }
    sweep_leftovers(so->dir, warn);
    if (o->allocations_path &&
        !sa_awards_read(o->allocations_path, o->allocations_json, o->allocations_len, &s.awards, error))
        goto done;
    if (!(s.db = sa_report_connect(o, error)) || !sa_rdb_clusters(s.db, &o->clusters, &s.cl, error))
        goto done;
    /* every section reads through this connection: each rollup document once (at the commit it pinned) */
    sa_rdb_cache(s.db, SA_RDB_RUN_CACHE_BYTES);
    shared = *o;
    shared.shared_db = s.db;
    shared.shared_tsdbs = &tsdbs;
    s.o = &shared;
    if (!(s.c = calloc(s.cl.n + 1, sizeof *s.c))) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < s.cl.n; i++) {
        s.c[i].name = s.cl.v[i].name;
        s.c[i].file = file_name(s.cl.v[i].name);
        s.c[i].health = "?";
        sa_strv_init(&s.c[i].months);
        sa_strv_init(&s.c[i].accounts);
    }
    if (!plan(&s, error))
        goto done;
    if (!mkdtemp(tmpl) || chmod(tmpl, (mode_t)(sa_umask_file_mode() | 0111)) != 0) {
        int e = errno;
        /* no parent directory, no permission: the DIR given cannot hold a site */
        sa_error_set(error, e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS ? SA_ERR_USAGE : SA_ERR_IO, e,
                     "%s: cannot create the new site beside it: %s", so->dir, strerror(e));
        goto done;
    }
    s.tmp = tmpl;
    ok = build(&s, error) && swap_in(s.tmp, so->dir, error);
    if (ok && o->verbose) {
        size_t fetched, kept, hits;
        sa_rdb_cache_stats(s.db, &fetched, &kept, &hits);
        fprintf(o->verbose, "# the site read %zu documents by _id from MongoDB and kept %zu of them for the run; "
                            "its reports read them %zu times more from there\n", fetched, kept, hits);
    }
    if (!ok)
        nftw(s.tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
done:
    for (size_t i = 0; s.c && i < s.cl.n; i++) {
        free(s.c[i].file);
        sa_strv_clear(&s.c[i].months);
        sa_strv_clear(&s.c[i].accounts);
    }
    free(s.c);
    sa_awards_clear(&s.awards);
    free(tmpl);
    free(target);
    sa_rclusters_clear(&s.cl);
    sa_rdb_close(s.db);
    sa_rtsdbs_clear(&tsdbs);
    return ok;
}
