/*
 * sa_rchart.c - the SVG renderer of chart series (see sa_render.h): one panel per
 * chart with monthly bars, the cumulative use as a line, the target as a dashed
 * line, and the preamble wrapped above; standalone (--format svg) or inline in the
 * HTML page.
 */
#include "sa_render.h"

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

/* Draws one panel at vertical offset y0. */
static void svg_panel(FILE *out, const sa_rchart_t *p, double y0)
{
    const double x0 = 80, x1 = SVG_W - 30, top = y0 + 58, bot = y0 + PANEL_H - 40;
    double ymax = p->target > 0 ? p->target : 0, cum = 0, span = (double)(p->axis_to - p->from);
    char buf[96];
    size_t step;

#define TX(t) (x0 + (double)((t) - p->from) / span * (x1 - x0))
#define VY(v) (bot - (v) / ymax * (bot - top))
    for (size_t i = 0; i < p->nm; i++) {
        cum += p->val[i];
        if (p->val[i] > ymax)
            ymax = p->val[i];
    }
    if (cum > ymax)
        ymax = cum;
    ymax = nice_max(ymax * 1.05);
    fprintf(out, "<g class=\"panel\">\n");
    svg_text(out, x0, y0 + 20, NULL, " font-size=\"14\" font-weight=\"bold\"", p->title);
    svg_text(out, x0, y0 + 38, NULL, " font-size=\"11\" fill=\"#444\"", p->subtitle);
    /* axes and grid */
    for (int k = 0; k <= 4; k++) {
        double v = ymax * k / 4, y = VY(v);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x0, y, x1, y,
                k ? "#e4e4e4" : "#333");
        snprintf(buf, sizeof buf, "%g", v);
        svg_text(out, x0 - 6, y + 4, "end", " font-size=\"10\"", buf);
    }
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x0, top, x0, bot);
    fprintf(out, "<text x=\"0\" y=\"0\" transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#444\">",
            (top + bot) / 2);
    sa_rxml_escape(out, p->unit);
    fputs("</text>\n", out);
    /* monthly bars */
    step = p->nm > 24 ? 3 : p->nm > 12 ? 2 : 1;
    for (size_t i = 0; i < p->nm; i++) {
        double bx0 = TX(p->m[i]), bx1 = TX(p->m[i + 1]), y = VY(p->val[i]);
        if (p->val[i] > 0)
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#7aa6d8\"><title>%s: %.4g %s</title></rect>\n",
                    bx0 + 1, y, bx1 - bx0 - 2 > 1 ? bx1 - bx0 - 2 : 1, bot - y, sa_rmonth_label(p->m[i], buf, sizeof buf),
                    p->val[i], p->unit);
        if (i % step == 0) {
            sa_rmonth_label(p->m[i], buf, sizeof buf);
            svg_text(out, (bx0 + bx1) / 2, bot + 14, "middle", " font-size=\"10\"", buf);
        }
    }
    /* target line */
    if (p->target > 0)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                TX(p->from), VY(0), TX(p->axis_to), VY(p->target));
    /* cumulative use */
    cum = 0;
    fprintf(out, "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" points=\"%.1f,%.1f", TX(p->from), VY(0));
    for (size_t i = 0; i < p->nm && p->m[i] < p->data_to; i++) {
        int64_t e = p->m[i + 1] < p->data_to ? p->m[i + 1] : p->data_to;
        cum += p->val[i];
        fprintf(out, " %.1f,%.1f", TX(e), VY(cum));
    }
    fputs("\"/>\n", out);
    if (p->data_to < p->axis_to) {
        double x = TX(p->data_to);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\n",
                x, top, x, bot);
        snprintf(buf, sizeof buf, "as of %s", sa_riso(p->data_to));
        svg_text(out, x + 4, top + 10, NULL, " font-size=\"10\" fill=\"#666\"", buf);
    }
    /* legend */
    {
        double lx = x1 - 330, ly = y0 + 20;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#7aa6d8\"/>\n", lx, ly - 9);
        svg_text(out, lx + 16, ly, NULL, " font-size=\"10\"", "monthly use");
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n",
                lx + 95, ly - 4, lx + 115, ly - 4);
        svg_text(out, lx + 119, ly, NULL, " font-size=\"10\"", "cumulative use");
        if (p->target > 0) {
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n",
                    lx + 215, ly - 4, lx + 240, ly - 4);
            svg_text(out, lx + 244, ly, NULL, " font-size=\"10\"", "award target");
        }
    }
    fputs("</g>\n", out);
#undef TX
#undef VY
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
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"sans-serif\">\n<title>",
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
