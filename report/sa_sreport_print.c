/*
 * sa_sreport_print.c - Slurm's print_fields (src/common/print_fields.c) and sreport's time
 * cells (src/sreport/common.c), as Slurm 22.05 prints them: a table pads each cell to
 * its column's width ("%*.*s " right-justified, "%-*.*s " for a negative width, each
 * followed by a blank), cuts a longer string to the width with '+' as its last character
 * (a time cell is cut without it), and writes a line of dashes under the titles;
 * -p ends every cell with '|', -P every cell but the row's last.
 */
#include "sa_sreport.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sa_srprint_rule(const sa_srprint_t *p)
{
    fputs("----------------------------------------"
          "----------------------------------------\n",
          p->out);
}

/* A cell's text s in the table: padded to |len| (left-justified when len < 0), cut to it. */
static void table_cell(FILE *out, int len, const char *s)
{
    int w = abs(len);
    fprintf(out, len == w ? "%*.*s " : "%-*.*s ", w, w, s);
}

/* A cell in -p/-P: the text, then '|' unless it is the row's last under -P. */
static void parsable_cell(const sa_srprint_t *p, const char *s, bool last)
{
    fputs(s, p->out);
    if (!(p->parsable == SA_SRP_NO_ENDING && last))
        fputc('|', p->out);
}

void sa_srprint_titles(const sa_srprint_t *p, const sa_srfield_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->parsable)
            parsable_cell(p, f[i].name, i + 1 == n);
        else
            table_cell(p->out, f[i].len, f[i].name);
    }
    fputc('\n', p->out);
    if (p->parsable)
        return;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < abs(f[i].len); k++)
            fputc('-', p->out);
        fputc(' ', p->out);
    }
    fputc('\n', p->out);
}

void sa_srprint_str(const sa_srprint_t *p, const sa_srfield_t *f, const char *s, bool last)
{
    int w = abs(f->len);
    char *cut = NULL;

    if (p->parsable) {
        parsable_cell(p, s ? s : "", last);
        return;
    }
    if (!s) {
        table_cell(p->out, f->len, " ");
        return;
    }
    if ((int)strlen(s) > w && w > 0 && (cut = strdup(s))) {
        cut[w - 1] = '+';
        cut[w] = '\0';
        s = cut;
    }
    table_cell(p->out, f->len, s);
    free(cut);
}

void sa_srprint_uint(const sa_srprint_t *p, const sa_srfield_t *f, uint64_t v, bool last)
{
    char buf[32];

    snprintf(buf, sizeof buf, "%" PRIu64, v);
    if (p->parsable)
        parsable_cell(p, buf, last);
    else
        fprintf(p->out, f->len >= 0 ? "%*s " : "%-*s ", abs(f->len), buf);
}

const char *sa_srprint_time_text(sa_srtime_t t, uint64_t value, uint64_t total, char *buf, size_t n)
{
    /* the same double arithmetic as sreport's, so that "%.0lf" and "%.2lf" round alike */
    double percent = (double)value, d = (double)value;

    if (!total)
        total = 1;
    switch (t) {
    case SA_SRT_SECS: snprintf(buf, n, "%" PRIu64, value); break;
    case SA_SRT_HOURS: d /= 3600; snprintf(buf, n, "%.0lf", d); break;
    case SA_SRT_PERCENT:
        percent /= (double)total;
        percent *= 100;
        snprintf(buf, n, "%.2lf%%", percent);
        break;
    case SA_SRT_SECS_PER:
        percent /= (double)total;
        percent *= 100;
        snprintf(buf, n, "%" PRIu64 "(%.2lf%%)", value, percent);
        break;
    case SA_SRT_MINS_PER:
    case SA_SRT_HOURS_PER:
        percent /= (double)total;
        percent *= 100;
        d /= t == SA_SRT_MINS_PER ? 60 : 3600;
        snprintf(buf, n, "%.0lf(%.2lf%%)", d, percent);
        break;
    default: d /= 60; snprintf(buf, n, "%.0lf", d); break;
    }
    return buf;
}

void sa_srprint_time(const sa_srprint_t *p, const sa_srfield_t *f, uint64_t value, uint64_t total, bool last)
{
    char buf[96];

    sa_srprint_time_text(p->time, value, total, buf, sizeof buf);
    if (p->parsable)
        parsable_cell(p, buf, last);
    else
        table_cell(p->out, f->len, buf);
}

void sa_srprint_eol(const sa_srprint_t *p)
{
    fputc('\n', p->out);
}

int sa_srprint_usage_width(sa_srtime_t t, uint64_t number)
{
    /*
     * 8 characters up to 99,999,999 seconds, one more each power of ten; sreport's limit,
     * 1e8 x 1e17, wraps around 2^64 (unsigned arithmetic, as in sreport) to about 1.59e18
     */
    uint64_t order = 100000000, max_order = order * UINT64_C(100000000000000000);
    int len = 8;

    while (order < max_order && number >= order) {
        len++;
        order *= 10;
    }
    if (t == SA_SRT_SECS_PER || t == SA_SRT_MINS_PER || t == SA_SRT_HOURS_PER)
        len += 9;
    return len;
}

const char *sa_srprint_date(int64_t t, char *buf, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;

    if (!gmtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm))
        snprintf(buf, n, "Unknown");
    return buf;
}
