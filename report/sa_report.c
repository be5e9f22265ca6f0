/*
 * sa_report.c - options, formats and what the reports share (see sa_report.h and
 * sa_rcommon.h).
 */
#define _GNU_SOURCE /* vasprintf */
#include "sa_rcommon.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sa_rutil.h"

bool sa_rstate_is_final(const char *s)
{
    return sa_job_state_is_final(s) || (s && strcmp(s, "REVOKED") == 0);
}

void sa_rbson_append_final_states(bson_t *b, const char *op)
{
    bson_t st, arr;
    char istr[16];
    const char *ikey;
    uint32_t i;

    BSON_APPEND_DOCUMENT_BEGIN(b, "state", &st);
    BSON_APPEND_ARRAY_BEGIN(&st, op, &arr);
    for (i = 0; sa_job_final_states[i]; i++) {
        bson_uint32_to_string(i, &ikey, istr, sizeof istr);
        BSON_APPEND_UTF8(&arr, ikey, sa_job_final_states[i]);
    }
    bson_uint32_to_string(i, &ikey, istr, sizeof istr);
    BSON_APPEND_UTF8(&arr, ikey, "REVOKED");
    bson_append_array_end(&st, &arr);
    bson_append_document_end(b, &st);
}

void sa_report_opts_init(sa_report_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->db_name = "slurm";
    sa_strv_init(&o->clusters);
    sa_strv_init(&o->accounts);
    sa_strv_init(&o->users);
    o->start = o->end = SA_UNSET;
    o->now = (int64_t)time(NULL);
    o->unit = SA_UNIT_GPU_YEARS;
    o->year_days = 365;
    o->stale_s = 3600;
    o->since = SA_UNSET;
    o->format = SA_FMT_TABLE;
}

void sa_report_opts_clear(sa_report_opts_t *o)
{
    sa_strv_clear(&o->clusters);
    sa_strv_clear(&o->accounts);
    sa_strv_clear(&o->users);
}

static const char *const format_names[] = {"table", "parsable", "csv", "json", "svg", "html", "prometheus"};

bool sa_format_parse(const char *s, sa_format_t *f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
        if (strcmp(s, format_names[i]) == 0) {
            *f = (sa_format_t)i;
            return true;
        }
    }
    return false;
}

const char *sa_format_name(sa_format_t f)
{
    return (size_t)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

sa_text_format_t sa_rtext_format(sa_format_t f)
{
    return f == SA_FMT_PARSABLE ? SA_TEXT_PARSABLE : f == SA_FMT_CSV ? SA_TEXT_CSV : SA_TEXT_TABLE;
}

/* ---- time series files ------------------------------------------------------------ */

void sa_rtsdbs_init(sa_rtsdbs_t *t)
{
    memset(t, 0, sizeof *t);
}

void sa_rtsdbs_clear(sa_rtsdbs_t *t)
{
    sa_tsdb_close(t->shared);
    for (size_t i = 0; i < t->n; i++) {
        free(t->names[i]);
        sa_tsdb_close(t->dbs[i]);
    }
    free(t->names);
    free(t->dbs);
    memset(t, 0, sizeof *t);
}

bool sa_rtsdbs_get(sa_rtsdbs_t *t, const sa_report_opts_t *o, const char *cluster, bool required, sa_tsdb_t **db,
                   sa_error_t *error)
{
    char *path;
    struct stat st;
    char **names;
    sa_tsdb_t **dbs;

    *db = NULL;
    if (o->sqlite_path) {
        if (!t->shared && !(t->shared = sa_tsdb_open(o->sqlite_path, true, 10000, error)))
            return false;
        *db = t->shared;
        return true;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->names[i], cluster) == 0) {
            *db = t->dbs[i];
            goto check;
        }
    }
    path = sa_rprintf("%s/%s.sqlite", o->sqlite_dir ? o->sqlite_dir : "/var/lib/slurm-ingest", cluster);
    names = realloc(t->names, (t->n + 1) * sizeof *names);
    if (names)
        t->names = names;
    dbs = realloc(t->dbs, (t->n + 1) * sizeof *dbs);
    if (dbs)
        t->dbs = dbs;
    if (!path || !names || !dbs) {
        free(path);
        sa_error_set(error, SA_ERR_SQLITE, ENOMEM, "out of memory");
        return false;
    }
    t->names[t->n] = strdup(cluster);
    t->dbs[t->n] = NULL;
    t->n++;
    if (strchr(cluster, '/') == NULL && stat(path, &st) == 0) {
        *db = t->dbs[t->n - 1] = sa_tsdb_open(path, true, 10000, error);
        if (!*db) {
            free(path);
            return false;
        }
    }
    free(path);
check:
    if (!*db && required) {
        sa_error_set(error, SA_ERR_SQLITE, ENOENT,
                     "cluster %s: no time series (%s/%s.sqlite does not exist; give --sqlite PATH)", cluster,
                     o->sqlite_dir ? o->sqlite_dir : "/var/lib/slurm-ingest", cluster);
        return false;
    }
    return true;
}

sa_rdb_t *sa_report_connect(const sa_report_opts_t *o, sa_error_t *error)
{
    const char *uri = o->mongo_uri;
    if (!uri || !*uri)
        uri = getenv("SLURM_REPORT_MONGO_URI");
    if (!uri || !*uri)
        uri = getenv("SLURM_INGEST_MONGO_URI");
    if (!uri || !*uri)
        uri = "mongodb://127.0.0.1:27017";
    return sa_rdb_open(uri, o->db_name ? o->db_name : "slurm", error);
}

/* ---- small output helpers ------------------------------------------------------------ */

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

bool sa_rjson_write(const json_t *doc, FILE *out)
{
    /* one string, one write: json_dumpf writes token by token */
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    bool ok = s && fputs(s, out) != EOF && fputc('\n', out) != EOF;
    free(s);
    return ok;
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

void sa_rhtml_begin(FILE *out, const char *title, const sa_strv_t *preamble)
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

void sa_rhtml_end(FILE *out)
{
    fputs("</body>\n</html>\n", out);
}

bool sa_rwrite_table_doc(const sa_report_opts_t *o, const char *title, const sa_strv_t *preamble,
                        const sa_rtable_t *t, const json_t *extra, FILE *out, sa_error_t *error)
{
    bool ok = true;

    switch (o->format) {
    case SA_FMT_TABLE:
    case SA_FMT_PARSABLE:
    case SA_FMT_CSV:
        ok = sa_rtable_write_text(t, sa_rtext_format(o->format), preamble, o->no_header, out);
        break;
    case SA_FMT_JSON: {
        json_t *doc = extra ? json_deep_copy(extra) : json_object();
        json_object_set_new(doc, "rows", sa_rtable_to_json(t));
        ok = sa_rjson_write(doc, out);
        json_decref(doc);
        break;
    }
    case SA_FMT_HTML:
        sa_rhtml_begin(out, title, preamble);
        sa_rtable_write_html(t, NULL, out);
        sa_rhtml_end(out);
        ok = !ferror(out);
        break;
    default:
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for this report", sa_format_name(o->format));
        return false;
    }
    if (!ok)
        sa_error_set(error, SA_ERR_IO, errno, "writing the report: %s", strerror(errno));
    return ok;
}
