/*
 * sa_jobsvg.c - a job's runs' GPU utilisation as a small SVG (sa_jobsvg.h).
 */
#include "sa_jobsvg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sa_promq.h"
#include "sa_rtable.h"
#include "sa_rutil.h"
#include "sa_vec.h"

#define W 640
#define H 170
#define X0 48
#define X1 (W - 16)
#define Y0 36
#define Y1 (H - 28)

static bool keep_point(void *ctx, const char *label, int64_t t, double v, sa_error_t *error)
{
    sa_jsvg_run_t *r = ctx;
    (void)label;
    if (!SA_VEC_GROW(r->pts, r->cap, r->n, 1, 256))
        return sa_error_nomem(error);
    r->pts[r->n++] = (sa_jsvg_pt_t){t, v};
    return true;
}

bool sa_jsvg_fetch(sa_jsvg_run_t *run, const char *url, const char *exporter, int64_t job_id, sa_error_t *error)
{
    sa_promq_t q = {url, 10, 0, 0};
    int64_t d = run->end - run->start, step = d / 240 > 15 ? d / 240 : 15;
    char *expr, s[24], e[24], st[24];
    json_t *data = NULL;
    bool ok;

    if (exporter && strcmp(exporter, "jobstats") == 0)
        expr = sa_rprintf("avg(nvidia_gpu_duty_cycle and on(instance, minor_number) (nvidia_gpu_jobId == %" PRId64
                          "))", job_id);
    else
        expr = sa_rprintf("avg(slurm_job_utilization_gpu{slurmjobid=\"%" PRId64 "\"})", job_id);
    if (!expr)
        return sa_error_nomem(error);
    snprintf(s, sizeof s, "%" PRId64, run->start);
    snprintf(e, sizeof e, "%" PRId64, run->end);
    snprintf(st, sizeof st, "%" PRId64, step);
    {
        const char *form[] = {"query", expr, "start", s, "end", e, "step", st, NULL};
        ok = sa_promq_post(&q, "/api/v1/query_range", form, &data, error) &&
             sa_promq_samples(data, NULL, keep_point, run, error);
    }
    json_decref(data);
    free(expr);
    if (ok)
        run->source = "Prometheus query_range: the mean of the run's GPUs";
    return ok;
}

static double px(const sa_jsvg_run_t *r, int64_t t)
{
    double d = r->end > r->start ? (double)(r->end - r->start) : 1.0;
    return X0 + (X1 - X0) * (double)(t - r->start) / d;
}

static double py(double v)
{
    v = v < 0 ? 0 : v > 100 ? 100 : v;
    return Y1 - (Y1 - Y0) * v / 100.0;
}

/* One panel at vertical offset y. */
static void panel(FILE *out, const sa_jsvg_run_t *r, int y)
{
    static const struct {
        const char *name, *dash;
    } lines[] = {{"mean", ""}, {"median", " stroke-dasharray=\"6 3\""}, {"max", " stroke-dasharray=\"2 3\""}};
    double v[3] = {r->mean, r->p50, r->max};

    fprintf(out, "<g transform=\"translate(0,%d)\">\n<text x=\"%d\" y=\"16\" font-weight=\"bold\">", y, X0);
    sa_rxml_escape(out, r->label);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"30\" font-size=\"10\" fill=\"#555\">", X0);
    sa_rxml_escape(out, r->source);
    fputs("</text>\n", out);
    for (int g = 0; g <= 100; g += 50)
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                     "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%d%%</text>\n",
                X0, X1, py(g), py(g), X0 - 4, py(g) + 3, g);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%s</text>", X0, H - 12, sa_riso(r->start));
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%s</text>\n", X1, H - 12,
            sa_riso(r->end));
    if (r->n) {
        fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"", out);
        for (size_t i = 0; i < r->n; i++)
            fprintf(out, "%s%.1f,%.1f", i ? " " : "", px(r, r->pts[i].t), py(r->pts[i].v));
        fputs("\"/>\n", out);
    } else if (r->has_summary) {
        for (int k = 0; k < 3; k++) {
            if (v[k] < 0) /* not stored (the import had too few samples for it) */
                continue;
            fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\"%s/>"
                         "<text x=\"%d\" y=\"%.1f\" font-size=\"10\">%s %.1f%%</text>\n",
                    X0, X1 - 90, py(v[k]), py(v[k]), lines[k].dash, X1 - 86, py(v[k]) + 3, lines[k].name, v[k]);
        }
    } else {
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#a00\">no GPU utilisation known</text>\n", X0 + 8, (Y0 + Y1) / 2);
    }
    fputs("</g>\n", out);
}

void sa_jsvg_write(FILE *out, const char *title, const sa_jsvg_run_t *runs, size_t n)
{
    int h = 28 + (int)(n ? n : 1) * H;

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, h, W, h);
    fputs("<title>", out);
    sa_rxml_escape(out, title);
    fputs("</title>\n<text x=\"8\" y=\"18\" font-size=\"14\">", out);
    sa_rxml_escape(out, title);
    fputs("</text>\n", out);
    if (!n)
        fprintf(out, "<text x=\"%d\" y=\"60\">no run with GPUs</text>\n", X0);
    for (size_t i = 0; i < n; i++)
        panel(out, &runs[i], 28 + (int)i * H);
    fputs("</svg>\n", out);
}

void sa_jsvg_free(sa_jsvg_run_t *runs, size_t n)
{
    for (size_t i = 0; runs && i < n; i++) {
        free(runs[i].label);
        free(runs[i].pts);
    }
    free(runs);
}
