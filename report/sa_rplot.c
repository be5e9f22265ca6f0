/*
 * sa_rplot.c - plots over time (see sa_render.h): lines (a point per value) or stacked
 * bars (a bar per bucket or per run), each value carrying its time in a <title> (the
 * browser shows it on hover; the enhanced page's script too): the ingester's runs on the
 * site, utilization's classes by day, waits and the scheduler's figures over time; and a
 * bar chart of one value per group (waits).
 */
#include "sa_render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sa_rutil.h"

#define PLOT_W 1000


/* A round axis maximum >= v (1, 2, 5 times a power of ten). */
static double round_max(double v)
{
    double p;
    if (!(v > 0))
        return 1;
    p = pow(10, floor(log10(v)));
    return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

/* The colours of a plot's series (cycled). */
static const char *const series_colours[12] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                               "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f3f6e", "#8cd17d"};

/* The geometry of a plot: the area of its values and its legend's rows. */
typedef struct {
    const sa_rplot_t *p;
    double x0, x1, top, bot, ymax, h;
    int64_t t0, t1; /* the time axis (ordinal: unused) */
    size_t rows;    /* legend rows */
} pgeo_t;

/* The width a legend entry takes. */
static double legend_w(const char *name)
{
    return 34 + 6.4 * (double)strlen(name); /* 10 px sans-serif: capitals run wider than 5.6 px */
}

/* The legend's rows at the plot's width. */
static size_t legend_rows(const sa_rplot_t *p, double x0, double x1)
{
    size_t rows = p->ns ? 1 : 0;
    double x = x0;

    for (size_t k = 0; k < p->ns; k++) {
        if (x > x0 && x + legend_w(p->s[k].name) > x1) {
            rows++;
            x = x0;
        }
        x += legend_w(p->s[k].name);
    }
    return rows;
}

/* The largest value to show: a point, or a bar's stack (NAN counts nothing). */
static double plot_max(const sa_rplot_t *p)
{
    double m = 0;

    for (size_t i = 0; i < p->n; i++) {
        double sum = 0;
        for (size_t k = 0; k < p->ns; k++) {
            double v = p->s[k].v[i];
            if (isnan(v))
                continue;
            if (p->kind == SA_RPLOT_STACK)
                sum += v > 0 ? v : 0;
            else if (v > m)
                m = v;
        }
        if (sum > m)
            m = sum;
    }
    return m;
}

static void pgeo_init(pgeo_t *g, const sa_rplot_t *p)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->x0 = 80;
    g->x1 = PLOT_W - 30;
    g->top = 40;
    g->bot = 240;
    g->rows = legend_rows(p, g->x0, g->x1);
    g->h = g->bot + 30 + 16.0 * (double)g->rows;
    g->ymax = round_max(plot_max(p));
    if (p->n) {
        g->t0 = p->t[0];
        g->t1 = p->kind == SA_RPLOT_STACK && !p->ordinal ? p->t[p->n] : p->t[p->n - 1];
    }
}

double sa_rplot_height(const sa_rplot_t *p)
{
    pgeo_t g;
    pgeo_init(&g, p);
    return g.h;
}

/* x of time t (LINES, STACK), or of the left edge of bar i (ordinal). */
static double px_time(const pgeo_t *g, int64_t t)
{
    double span = g->t1 > g->t0 ? (double)(g->t1 - g->t0) : 1;
    return g->x0 + (double)(t - g->t0) / span * (g->x1 - g->x0);
}

/* The widest a run's bar is drawn (a few runs would fill the width). */
#define ORDINAL_MAX_W 40.0

static double px_bar(const pgeo_t *g, size_t i)
{
    double w = (g->x1 - g->x0) / (double)(g->p->n ? g->p->n : 1);
    return g->x0 + (double)i * (w < ORDINAL_MAX_W ? w : ORDINAL_MAX_W);
}

static double py(const pgeo_t *g, double v)
{
    return g->bot - v / g->ymax * (g->bot - g->top);
}

/* Whether the plot's times are said as dates: all at midnight, or lines over more than two days. */
static bool by_date(const sa_rplot_t *p)
{
    bool days = true;
    size_t nt = p->kind == SA_RPLOT_STACK && !p->ordinal ? p->n + 1 : p->n;

    for (size_t i = 0; days && i < nt; i++)
        days = p->t[i] % 86400 == 0;
    return days || (p->kind == SA_RPLOT_LINES && nt && p->t[nt - 1] - p->t[0] > 2 * 86400);
}

/* A time as the axis says it (the date alone by_date); its tooltip always to the minute. */
static const char *time_label(const sa_rplot_t *p, int64_t t, char *buf, size_t sz)
{
    snprintf(buf, sz, "%.*s", by_date(p) ? 10 : 16, sa_riso(t));
    return buf;
}

/* The plot's frame: title, unit, the value grid, five time ticks. */
static void pframe(FILE *out, const pgeo_t *g)
{
    const sa_rplot_t *p = g->p;
    char buf[32];

    fputs("<text x=\"80\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", out);
    sa_rxml_escape(out, p->title);
    fputs("</text>\n", out);
    for (int k = 0; k <= 4; k++) {
        double y = g->bot - (g->bot - g->top) * k / 4;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", g->x0, y, g->x1, y,
                k ? "#e4e4e4" : "#333");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%g</text>\n", g->x0 - 6, y + 4,
                g->ymax * k / 4);
    }
    fprintf(out, "<text x=\"0\" y=\"0\" transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#444\">",
            (g->top + g->bot) / 2);
    sa_rxml_escape(out, p->unit);
    fputs("</text>\n", out);
    for (int k = 0, last = -1; p->n && k < 5; k++) {
        double x = g->x0 + (g->x1 - g->x0) * k / 4;
        int64_t t;
        int at = k; /* the tick's place: a run's index (ordinal), else k */
        if (p->ordinal) {
            at = (int)((p->n - 1) * (size_t)k / 4);
            t = p->t[at];
            x = px_bar(g, (size_t)at) + (px_bar(g, (size_t)at + 1) - px_bar(g, (size_t)at)) / 2;
        } else {
            t = g->t0 + (g->t1 - g->t0) * k / 4;
        }
        if (at == last || (k && g->t1 == g->t0 && !p->ordinal))
            continue; /* one run, one time: one label */
        last = at;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"10\">%s</text>\n", x, g->bot + 14,
                k == 0 ? "start" : k == 4 ? "end" : "middle", time_label(p, t, buf, sizeof buf));
    }
}

/* A value's tooltip: "<time> <series>: <value> <unit>". */
static void ptip(FILE *out, const pgeo_t *g, size_t i, size_t k, double v)
{
    const sa_rplot_t *p = g->p;

    fputs("<title>", out);
    bool days = by_date(p) && p->kind == SA_RPLOT_STACK; /* a bucket of days: its dates; else to the minute */

    fprintf(out, "%.*s", days ? 10 : 16, sa_riso(p->t[i]));
    if (p->kind == SA_RPLOT_STACK && !p->ordinal)
        fprintf(out, " to %.*s", days ? 10 : 16, sa_riso(p->t[i + 1]));
    fputs(" ", out);
    sa_rxml_escape(out, p->s[k].name);
    fprintf(out, ": %.6g ", v);
    sa_rxml_escape(out, p->unit);
    fputs("</title>", out);
}

/* Each series as a line broken where it has no value, a point per value. */
static void plines(FILE *out, const pgeo_t *g)
{
    const sa_rplot_t *p = g->p;

    for (size_t k = 0; k < p->ns; k++) {
        const char *c = series_colours[k % 12];
        bool open = false;
        for (size_t i = 0; i < p->n; i++) {
            double v = p->s[k].v[i];
            if (isnan(v)) { /* a break in the line */
                if (open)
                    fputs("\"/>\n", out);
                open = false;
                continue;
            }
            if (!open)
                fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
            fprintf(out, "%s%.1f,%.1f", open ? " " : "", px_time(g, p->t[i]), py(g, v));
            open = true;
        }
        if (open)
            fputs("\"/>\n", out);
        for (size_t i = 0; i < p->n; i++) {
            double v = p->s[k].v[i];
            if (isnan(v))
                continue;
            fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">", px_time(g, p->t[i]),
                    py(g, v), c);
            ptip(out, g, i, k, v);
            fputs("</circle>\n", out);
        }
    }
}

/* A bar per bucket, the series stacked. */
static void pstack(FILE *out, const pgeo_t *g)
{
    const sa_rplot_t *p = g->p;

    for (size_t i = 0; i < p->n; i++) {
        double x0 = p->ordinal ? px_bar(g, i) : px_time(g, p->t[i]);
        double x1 = p->ordinal ? px_bar(g, i + 1) : px_time(g, p->t[i + 1]), base = 0;
        double w = x1 - x0 > 3 ? x1 - x0 - 1 : x1 - x0 > 0.5 ? x1 - x0 : 0.5;
        for (size_t k = 0; k < p->ns; k++) {
            double v = p->s[k].v[i];
            if (isnan(v) || !(v > 0))
                continue;
            fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x0,
                    py(g, base + v), w, py(g, base) - py(g, base + v), series_colours[k % 12]);
            ptip(out, g, i, k, v);
            fputs("</rect>\n", out);
            base += v;
        }
    }
}

/* The legend under the time axis, in rows. */
static void plegend(FILE *out, const pgeo_t *g)
{
    const sa_rplot_t *p = g->p;
    double x = g->x0, y = g->bot + 34;

    for (size_t k = 0; k < p->ns; k++) {
        const char *c = series_colours[k % 12];
        if (x > g->x0 && x + legend_w(p->s[k].name) > g->x1) {
            x = g->x0;
            y += 16;
        }
        if (p->kind == SA_RPLOT_STACK)
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n", x, y - 9, c);
        else
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", x,
                    y - 4, x + 18, y - 4, c);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", x + 22, y);
        sa_rxml_escape(out, p->s[k].name);
        fputs("</text>\n", out);
        x += legend_w(p->s[k].name);
    }
}

void sa_rplot(FILE *out, const sa_rplot_t *p, bool nested, double y)
{
    pgeo_t g;

    pgeo_init(&g, p);
    if (nested)
        fprintf(out, "<svg x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n", y, PLOT_W, g.h,
                PLOT_W, g.h);
    else
        fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"%d\" "
                     "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n",
                PLOT_W, g.h, PLOT_W, g.h);
    fputs("<title>", out);
    sa_rxml_escape(out, p->title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", out);
    pframe(out, &g);
    if (!(plot_max(p) > 0) && !(p->kind == SA_RPLOT_LINES && p->n)) {
        fputs("<text x=\"100\" y=\"120\" font-size=\"14\">", out);
        sa_rxml_escape(out, p->empty ? p->empty : "No data in the window.");
        fputs("</text>\n", out);
    }
    if (p->kind == SA_RPLOT_STACK)
        pstack(out, &g);
    else
        plines(out, &g);
    plegend(out, &g);
    fputs("</svg>\n", out);
}

#define BAR_H 18
#define BAR_GAP 6

double sa_rplot_bars_height(const sa_rbars_t *b, const sa_strv_t *preamble)
{
    double top = 40 + 14.0 * (double)(preamble ? preamble->n : 0);
    return top + (double)(b->n ? b->n : 1) * (BAR_H + BAR_GAP) + 40;
}

void sa_rplot_bars(FILE *out, const sa_rbars_t *b, const sa_strv_t *preamble, bool standalone)
{
    const double x0 = 260, x1 = PLOT_W - 60, bar = BAR_H, gap = BAR_GAP;
    double top = 40 + 14.0 * (double)(preamble ? preamble->n : 0), vmax = 0, h;

    for (size_t i = 0; i < b->n; i++)
        vmax = b->v[i] > vmax ? b->v[i] : vmax;
    vmax = round_max(vmax);
    h = sa_rplot_bars_height(b, preamble);
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"%d\" height=\"%.0f\" "
                 "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n<title>",
            PLOT_W, h, PLOT_W, h);
    sa_rxml_escape(out, b->title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" "
          "font-weight=\"bold\">",
          out);
    sa_rxml_escape(out, b->title);
    fputs("</text>\n", out);
    for (size_t i = 0; preamble && i < preamble->n; i++) {
        fprintf(out, "<text x=\"10\" y=\"%.1f\" font-size=\"10\" fill=\"#444\">", 38 + 14.0 * (double)i);
        sa_rxml_escape(out, preamble->v[i]);
        fputs("</text>\n", out);
    }
    if (!b->n)
        fprintf(out, "<text x=\"10\" y=\"%.1f\" font-size=\"14\">No run started in the window.</text>\n", top + 20);
    for (int k = 0; k <= 4; k++) { /* the value axis */
        double x = x0 + (x1 - x0) * k / 4, y = top + (double)b->n * (bar + gap);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x, top, x, y,
                k ? "#e4e4e4" : "#333");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%g</text>\n", x, y + 14,
                vmax * k / 4);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"#444\">", (x0 + x1) / 2,
            h - 8);
    sa_rxml_escape(out, b->unit);
    fputs("</text>\n", out);
    for (size_t i = 0; i < b->n; i++) {
        double y = top + (double)i * (bar + gap);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">", x0 - 6, y + bar - 5);
        sa_rxml_escape(out, b->labels[i]);
        if (b->v[i] < 0) { /* no value */
            fprintf(out, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#777\">no value</text>\n", x0 + 4,
                    y + bar - 5);
            continue;
        }
        fprintf(out, "</text>\n<rect class=\"point\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\">"
                     "<title>",
                x0, y, (x1 - x0) * b->v[i] / vmax, bar, series_colours[0]);
        sa_rxml_escape(out, b->labels[i]);
        fprintf(out, ": %.6g ", b->v[i]);
        sa_rxml_escape(out, b->unit);
        fputs("</title></rect>\n", out);
    }
    fputs("</svg>\n", out);
}
