/*
 * sa_rplot.c - a line chart over time (see sa_render.h): the site's profile of the
 * ingester, one line per series, a point per value carrying it in a <title> (the
 * browser shows it on hover; the enhanced page's script too); and a bar chart of one
 * value per group (waits).
 */
#include "sa_render.h"

#include <math.h>
#include <string.h>

#include "sa_rutil.h"

#define PLOT_W 1000
#define PLOT_H 300

static const char *const colours[6] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"};

/* A round axis maximum >= v (1, 2, 5 times a power of ten). */
static double round_max(double v)
{
    double p;
    if (!(v > 0))
        return 1;
    p = pow(10, floor(log10(v)));
    return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

/* The frame: title, unit, grid with value labels, time ticks. */
static void plot_frame(FILE *out, const char *title, const char *unit, const int64_t *t, size_t n, double ymax,
                       double x0, double x1, double top, double bot)
{
    char buf[64];

    fputs("<text x=\"80\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", out);
    sa_rxml_escape(out, title);
    fputs("</text>\n", out);
    for (int k = 0; k <= 4; k++) {
        double y = bot - (bot - top) * k / 4;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x0, y, x1, y,
                k ? "#e4e4e4" : "#333");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%g</text>\n", x0 - 6, y + 4,
                ymax * k / 4);
    }
    fprintf(out, "<text x=\"0\" y=\"0\" transform=\"translate(22,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#444\">",
            (top + bot) / 2);
    sa_rxml_escape(out, unit);
    fputs("</text>\n", out);
    for (int k = 0; n > 1 && k < 5; k++) {
        int64_t tt = t[0] + (t[n - 1] - t[0]) * k / 4;
        double x = x0 + (x1 - x0) * k / 4;
        snprintf(buf, sizeof buf, "%.16s", sa_riso(tt));
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"10\">%s</text>\n", x, bot + 14,
                k == 0 ? "start" : k == 4 ? "end" : "middle", buf);
    }
}

void sa_rplot_lines(FILE *out, const char *title, const char *unit, const int64_t *t, size_t n,
                    const sa_rseries_t *s, size_t ns)
{
    const double x0 = 80, x1 = PLOT_W - 30, top = 40, bot = PLOT_H - 50;
    double ymax = 0, span = n > 1 && t[n - 1] > t[0] ? (double)(t[n - 1] - t[0]) : 1, lx = x0;

    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < n; i++)
            ymax = s[k].v[i] > ymax ? s[k].v[i] : ymax;
    ymax = round_max(ymax);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>",
            PLOT_W, PLOT_H, PLOT_W, PLOT_H);
    sa_rxml_escape(out, title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", out);
    plot_frame(out, title, unit, t, n, ymax, x0, x1, top, bot);
    if (!n)
        fputs("<text x=\"80\" y=\"120\" font-size=\"14\">No run recorded.</text>\n", out);
    for (size_t k = 0; k < ns; k++) {
        const char *c = colours[k % 6];
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%.1f,%.1f", i ? " " : "", x0 + (double)(t[i] - t[0]) / span * (x1 - x0),
                    bot - s[k].v[i] / ymax * (bot - top));
        fputs("\"/>\n", out);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s ",
                    x0 + (double)(t[i] - t[0]) / span * (x1 - x0), bot - s[k].v[i] / ymax * (bot - top), c,
                    sa_riso(t[i]));
            sa_rxml_escape(out, s[k].name);
            fprintf(out, ": %.6g ", s[k].v[i]);
            sa_rxml_escape(out, unit);
            fputs("</title></circle>\n", out);
        }
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", lx,
                bot + 30, lx + 18, bot + 30, c);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", lx + 22, bot + 34);
        sa_rxml_escape(out, s[k].name);
        fputs("</text>\n", out);
        lx += 40 + 5.6 * (double)strlen(s[k].name);
    }
    fputs("</svg>\n", out);
}

void sa_rplot_bars(FILE *out, const sa_rbars_t *b, const sa_strv_t *preamble, bool standalone)
{
    const double x0 = 260, x1 = PLOT_W - 60, bar = 18, gap = 6;
    double top = 40 + 14.0 * (double)(preamble ? preamble->n : 0), vmax = 0, h;

    for (size_t i = 0; i < b->n; i++)
        vmax = b->v[i] > vmax ? b->v[i] : vmax;
    vmax = round_max(vmax);
    h = top + (double)(b->n ? b->n : 1) * (bar + gap) + 40;
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
                x0, y, (x1 - x0) * b->v[i] / vmax, bar, colours[0]);
        sa_rxml_escape(out, b->labels[i]);
        fprintf(out, ": %.6g ", b->v[i]);
        sa_rxml_escape(out, b->unit);
        fputs("</title></rect>\n", out);
    }
    fputs("</svg>\n", out);
}
