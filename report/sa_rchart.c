/*
 * sa_rchart.c - the SVG renderer of chart series (see sa_render.h): one panel per
 * chart with monthly bars, the cumulative use as a line with a point a month, the
 * award as a dashed line to its amount, the projection to the award's end in the
 * colour of the status (with a badge), or the monthly bars stacked by user or GPU
 * type (a breakdown); every bar, point and line carries its value in a <title> (the
 * browser shows it on hover, without a script). The preamble is wrapped above;
 * standalone (--svg) or inline in the HTML page.
 */
#include "sa_rchart.h"

#include "sa_rtable.h" /* sa_rxml_escape */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"

#define SVG_W 1000
#define PANEL_H 270

/* A round axis maximum >= v. */
static double nice_max(double v)
{
    double p, f;
    if (!(v > 0))
        return 1;
    static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    p = pow(10, floor(log10(v)));
    f = v / p;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (f <= steps[i] * (1 + 1e-9))
            return steps[i] * p;
    }
    return 10 * p;
}

/* A <text> element at (x, y) with an optional text-anchor and extra attributes; s escaped. */
static void svg_text(FILE *out, double x, double y, const char *anchor, const char *style, const char *s)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s%s>", x, y, anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
            anchor ? "\"" : "", style ? style : "");
    sa_rxml_escape(out, s);
    fputs("</text>\n", out);
}

/* The colour of an award's status (the same as the HTML table's badges, darker for lines). */
static const char *status_colour(const char *status)
{
    if (!status)
        return "#555";
    if (strcmp(status, "over") == 0)
        return "#c0392b";
    if (strcmp(status, "over pace") == 0)
        return "#d35400";
    if (strcmp(status, "on track") == 0)
        return "#1e8449";
    if (strcmp(status, "under") == 0)
        return "#b7950b";
    return "#777";
}

/* The colours of a breakdown's series (cycled). */
static const char *const series_colours[10] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/* A panel's geometry: x from time, y from value. */
typedef struct {
    const sa_rchart_t *p;
    double x0, x1, top, bot, ymax, span;
} geo_t;

static double gx(const geo_t *g, int64_t t)
{
    return g->x0 + (double)(t - g->p->from) / g->span * (g->x1 - g->x0);
}

static double gy(const geo_t *g, double v)
{
    return g->bot - v / g->ymax * (g->bot - g->top);
}

/* The largest value the panel must show: a bar (a stack), the cumulative use, the target, the projection. */
static double panel_max(const sa_rchart_t *p)
{
    double ymax = p->target > 0 ? p->target * (p->band_hi > 100 ? p->band_hi / 100 : 1) : 0, cum = 0;
    size_t ns = p->nseries ? p->nseries : 1;

    for (size_t i = 0; i < p->nm; i++) {
        double bar = 0;
        for (size_t k = 0; k < ns; k++)
            bar += p->val[i * ns + k];
        cum += bar;
        if (bar > ymax)
            ymax = bar;
    }
    if (!p->nseries && cum > ymax)
        ymax = cum;
    if (p->projected > ymax)
        ymax = p->projected;
    return nice_max(ymax * 1.05);
}

/* Title, subtitle, the status badge, the grid with its labels, the unit. */
static void panel_frame(FILE *out, const geo_t *g, double y0)
{
    const sa_rchart_t *p = g->p;
    char buf[96];

    svg_text(out, g->x0, y0 + 20, NULL, " font-size=\"14\" font-weight=\"bold\"", p->title);
    svg_text(out, g->x0, y0 + 38, NULL, " font-size=\"11\" fill=\"#444\"", p->subtitle);
    if (p->status) {
        double w = 8.0 + 6.5 * (double)strlen(p->status);
        fprintf(out, "<rect class=\"status\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" rx=\"3\" fill=\"%s\"/>\n",
                g->x1 - w, y0 + 8, w, status_colour(p->status));
        svg_text(out, g->x1 - w / 2, y0 + 20, "middle", " font-size=\"11\" fill=\"#fff\"", p->status);
    }
    for (int k = 0; k <= 4; k++) {
        double v = g->ymax * k / 4, y = gy(g, v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", g->x0, y, g->x1, y,
                k ? "#e4e4e4" : "#333");
        snprintf(buf, sizeof buf, "%g", v);
        svg_text(out, g->x0 - 6, y + 4, "end", " font-size=\"10\"", buf);
    }
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", g->x0, g->top, g->x0,
            g->bot);
    fprintf(out, "<text x=\"0\" y=\"0\" transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#444\">",
            (g->top + g->bot) / 2);
    sa_rxml_escape(out, p->unit);
    fputs("</text>\n", out);
}

/* A bar piece with its value as a tooltip (<title>: the browser shows it on hover, no script needed). */
static void bar(FILE *out, const geo_t *g, size_t i, double base, double v, const char *fill, const char *series)
{
    const sa_rchart_t *p = g->p;
    double bx0 = gx(g, p->m[i]), bx1 = gx(g, p->m[i + 1]), y = gy(g, base + v);
    char month[16];

    fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
            bx0 + 1, y, bx1 - bx0 - 2 > 1 ? bx1 - bx0 - 2 : 1, gy(g, base) - y, fill);
    sa_rxml_escape(out, sa_rmonth_label(p->m[i], month, sizeof month));
    if (series) {
        fputs(" ", out);
        sa_rxml_escape(out, series);
    }
    fprintf(out, ": %.4g ", v);
    sa_rxml_escape(out, p->unit);
    fputs("</title></rect>\n", out);
}

/* The monthly bars (stacked by series in a breakdown) and the month labels. */
static void panel_bars(FILE *out, const geo_t *g)
{
    const sa_rchart_t *p = g->p;
    size_t ns = p->nseries ? p->nseries : 1, step = p->nm > 24 ? 3 : p->nm > 12 ? 2 : 1;
    char buf[16];

    for (size_t i = 0; i < p->nm; i++) {
        double base = 0;
        for (size_t k = 0; k < ns; k++) {
            double v = p->val[i * ns + k];
            if (v > 0)
                bar(out, g, i, base, v, p->nseries ? series_colours[k % 10] : "#7aa6d8",
                    p->nseries ? p->series[k] : NULL);
            base += v;
        }
        if (i % step == 0)
            svg_text(out, (gx(g, p->m[i]) + gx(g, p->m[i + 1])) / 2, g->bot + 14, "middle", " font-size=\"10\"",
                     sa_rmonth_label(p->m[i], buf, sizeof buf));
    }
}

/*
 * The award's status band: from under_pct to over_pct of the target to date, a wedge
 * from the award's start to its end (under it the status is "under", over it "over").
 */
static void panel_band(FILE *out, const geo_t *g)
{
    const sa_rchart_t *p = g->p;
    char buf[128];

    if (!(p->target > 0) || !(p->band_hi > 0))
        return;
    fprintf(out, "<polygon class=\"band\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#1e8449\" "
                 "fill-opacity=\"0.12\" stroke=\"#1e8449\" stroke-opacity=\"0.35\" stroke-width=\"0.8\"><title>",
            gx(g, p->from), gy(g, 0), gx(g, p->axis_to), gy(g, p->target * p->band_hi / 100), gx(g, p->axis_to),
            gy(g, p->target * p->band_lo / 100));
    snprintf(buf, sizeof buf, "on track: %g to %g %% of the target to date (at the end: %.4g to %.4g ", p->band_lo,
             p->band_hi, p->target * p->band_lo / 100, p->target * p->band_hi / 100);
    sa_rxml_escape(out, buf);
    sa_rxml_escape(out, p->unit);
    fputs(")</title></polygon>\n", out);
}

/* The target line, the cumulative use (a point a month, with its value) and the projection to the end. */
static void panel_lines(FILE *out, const geo_t *g)
{
    const sa_rchart_t *p = g->p;
    double cum = 0, lx = gx(g, p->from), ly = gy(g, 0);
    char buf[96];

    if (p->target > 0)
        fprintf(out, "<line class=\"target\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                     "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                gx(g, p->from), gy(g, 0), gx(g, p->axis_to), gy(g, p->target));
    fprintf(out, "<polyline class=\"cumulative\" fill=\"none\" stroke=\"#1f3f6e\" stroke-width=\"2\" points=\"%.1f,%.1f",
            lx, ly);
    for (size_t i = 0; i < p->nm && p->m[i] < p->data_to; i++) {
        int64_t e = p->m[i + 1] < p->data_to ? p->m[i + 1] : p->data_to;
        cum += p->val[i];
        fprintf(out, " %.1f,%.1f", gx(g, e), gy(g, cum));
    }
    fputs("\"/>\n", out);
    cum = 0;
    for (size_t i = 0; i < p->nm && p->m[i] < p->data_to; i++) {
        int64_t e = p->m[i + 1] < p->data_to ? p->m[i + 1] : p->data_to;
        cum += p->val[i];
        lx = gx(g, e);
        ly = gy(g, cum);
        fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f3f6e\"><title>to %s: %.4g ",
                lx, ly, sa_riso(e), cum);
        sa_rxml_escape(out, p->unit);
        fputs(" used</title></circle>\n", out);
    }
    if (p->projected >= 0 && p->data_to < p->axis_to) {
        snprintf(buf, sizeof buf, "projected at %s: %.4g ", sa_riso(p->axis_to), p->projected);
        fprintf(out, "<line class=\"projection\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                     "stroke-width=\"2\" stroke-dasharray=\"3 3\"><title>",
                lx, ly, gx(g, p->axis_to), gy(g, p->projected), status_colour(p->status));
        sa_rxml_escape(out, buf);
        sa_rxml_escape(out, p->unit);
        fputs("</title></line>\n", out);
    }
    if (p->data_to < p->axis_to) {
        double x = gx(g, p->data_to);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\n",
                x, g->top, x, g->bot);
        snprintf(buf, sizeof buf, "as of %s", sa_riso(p->data_to));
        svg_text(out, x + 4, g->top + 10, NULL, " font-size=\"10\" fill=\"#666\"", buf);
    }
}

/* One legend entry at (x, y): a swatch (a box, or a line, dashed when dash) and its label; returns the next x. */
static double legend_item(FILE *out, double x, double y, const char *colour, bool line, const char *dash,
                          const char *label)
{
    if (line)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n",
                x, y - 4, x + 18, y - 4, colour, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    else
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n", x, y - 9, colour);
    svg_text(out, x + 22, y, NULL, " font-size=\"10\"", label);
    return x + 30 + 5.6 * (double)strlen(label);
}

/* The legend under the month labels. */
static void panel_legend(FILE *out, const geo_t *g)
{
    const sa_rchart_t *p = g->p;
    double x = g->x0, y = g->bot + 30;

    if (p->nseries) {
        for (size_t k = 0; k < p->nseries && x < g->x1 - 80; k++)
            x = legend_item(out, x, y, series_colours[k % 10], false, NULL, p->series[k]);
        return;
    }
    x = legend_item(out, x, y, "#7aa6d8", false, NULL, "monthly use");
    x = legend_item(out, x, y, "#1f3f6e", true, NULL, "cumulative use");
    if (p->target > 0)
        x = legend_item(out, x, y, "#555", true, "6 4", "award (target to date)");
    if (p->target > 0 && p->band_hi > 0) {
        char label[64];
        snprintf(label, sizeof label, "%g-%g %% of the target", p->band_lo, p->band_hi);
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"#1e8449\" fill-opacity=\"0.12\" "
                     "stroke=\"#1e8449\" stroke-opacity=\"0.35\"/>\n", x, y - 9);
        svg_text(out, x + 22, y, NULL, " font-size=\"10\"", label);
        x += 30 + 5.6 * (double)strlen(label);
    }
    if (p->projected >= 0 && p->data_to < p->axis_to)
        legend_item(out, x, y, status_colour(p->status), true, "3 3", "projection at the recent rate");
}

/* Draws one panel at vertical offset y0. */
static void svg_panel(FILE *out, const sa_rchart_t *p, double y0)
{
    geo_t g = {p, 80, SVG_W - 30, y0 + 58, y0 + PANEL_H - 52, 1, (double)(p->axis_to - p->from)};

    g.ymax = panel_max(p);
    if (!(g.span > 0))
        g.span = 1;
    fprintf(out, "<g class=\"panel\">\n");
    panel_frame(out, &g, y0);
    if (!p->nseries)
        panel_band(out, &g);
    panel_bars(out, &g);
    if (!p->nseries)
        panel_lines(out, &g);
    panel_legend(out, &g);
    fputs("</g>\n", out);
}

void sa_rcharts_svg(FILE *out, const char *title, const char *no_charts, const sa_strv_t *preamble,
                    const sa_rchart_t *p, size_t np, bool standalone)
{
    sa_strv_t lines;
    double head, height;

    sa_strv_init(&lines);
    for (size_t i = 0; preamble && i < preamble->n; i++)
        sa_rwrap(preamble->v[i], 160, &lines);
    head = 16.0 * (double)lines.n + 16;
    height = head + (double)(np ? np : 1) * PANEL_H;
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n<title>",
            SVG_W, height, SVG_W, height);
    sa_rxml_escape(out, title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", out);
    for (size_t i = 0; i < lines.n; i++)
        svg_text(out, 10, 18 + 16.0 * (double)i, NULL, " font-size=\"11\" fill=\"#333\"", lines.v[i]);
    for (size_t i = 0; i < np; i++)
        svg_panel(out, &p[i], head + (double)i * PANEL_H);
    if (!np)
        svg_text(out, 80, head + 40, NULL, " font-size=\"14\"", no_charts);
    fputs("</svg>\n", out);
    sa_strv_clear(&lines);
}

void sa_rcharts_free(sa_rchart_t *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].title);
        free(c[i].subtitle);
        free(c[i].m);
        free(c[i].val);
        for (size_t k = 0; k < c[i].nseries; k++)
            free(c[i].series[k]);
        free(c[i].series);
    }
    free(c);
}

bool sa_rchart_months(sa_rchart_t *c)
{
    size_t nm = 0;
    int64_t m;

    for (m = sa_rmonth_floor(c->from); m < c->axis_to; m = sa_rmonth_add(m, 1))
        nm++;
    c->m = calloc(nm + 1, sizeof *c->m);
    c->val = calloc(nm ? nm : 1, sizeof *c->val);
    if (!c->m || !c->val)
        return false;
    c->nm = nm;
    m = sa_rmonth_floor(c->from);
    for (size_t i = 0; i <= nm; i++, m = sa_rmonth_add(m, 1))
        c->m[i] = i == 0 ? c->from : m > c->axis_to ? c->axis_to : m;
    return true;
}
