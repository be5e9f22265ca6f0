/*
 * parse_sacct_text.c - sacct -P / -p text (--parsable2 / --parsable of sacct(1), Slurm's
 * documentation: one line per job or step, fields joined by '|', -p with a trailing '|').
 *
 * The input is read one line at a time from the sa_reader_t (sa_lines.h: the line
 * buffer grows to the longest line and refuses lines over SA_LINES_CAP). The header
 * (or the caller's field list for -n output) names the columns, in any order and any
 * case; the delimiter is the caller's or is detected; -p's trailing delimiter is
 * accepted.
 *
 * Each allocation line becomes one sa_job_t, and the step lines that follow it
 * with the same job id prefix ("7.batch" after "7", "4_1.0" after "4_1", "1853+1.0"
 * after "1853+1") become its steps. A step line without its allocation line makes
 * a job record of its own, with only the ids and the step. Columns not modelled are
 * kept in ->extra (header name -> text; empty values are left out).
 *
 * Job ids when there is no JobIDRaw column: an array task "123_4" gets job_id 123
 * (the array's id: Slurm's raw id of the task is not printed), a heterogeneous
 * component "123+1" gets 123 + 1 (Slurm numbers components consecutively).
 */
#include "sa_lines.h"
#include "sa_parse.h"
#include "sa_slurmtext.h"
#include "sa_tres.h"
#include "sa_time.h"
#include "sa_vec.h"
#include "sa_utf8.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUOTE_MAX 64

#define Q(s, buf) sa_error_quote((s), QUOTE_MAX, (buf), sizeof(buf))

/* ---- UTF-8 ----------------------------------------------------------------------- */

/* Length of the UTF-8 sequence that starts with byte c (1 for anything odd). */
static size_t utf8_seq_len(unsigned char c)
{
    if (c >= 0xF0)
        return 4;
    if (c >= 0xE0)
        return 3;
    if (c >= 0xC0)
        return 2;
    return 1;
}

/* ---- fields ---------------------------------------------------------------------- */

typedef enum {
    F_EXTRA = 0,
    F_JOBID,
    F_JOBIDRAW,
    F_JOBNAME,
    F_USER,
    F_UID,
    F_GROUP,
    F_GID,
    F_ACCOUNT,
    F_PARTITION,
    F_QOS,
    F_CLUSTER,
    F_RESERVATION,
    F_WCKEY,
    F_STATE,
    F_EXITCODE,
    F_DERIVEDEXITCODE,
    F_SUBMIT,
    F_ELIGIBLE,
    F_START,
    F_END,
    F_ELAPSED,
    F_ELAPSEDRAW,
    F_TIMELIMIT,
    F_TIMELIMITRAW,
    F_NNODES,
    F_NCPUS,
    F_ALLOCCPUS,
    F_REQCPUS,
    F_REQTRES,
    F_ALLOCTRES,
    F_REQMEM,
    F_NODELIST,
    F_REASON,
    F_RESTARTS,
    F_TOTALCPU,
    F_USERCPU,
    F_SYSTEMCPU,
    F_MAXRSS,
    F_AVERSS,
    F_TRESUSAGEINTOT,
    F_TRESUSAGEINAVE,
    F_TRESUSAGEINMAX,
    F_TRESUSAGEOUTTOT,
    F_CONSUMEDENERGYRAW,
    F_COUNT
} field_t;

static const struct {
    const char *name;
    field_t f;
} known_fields[] = {
    {"JobID", F_JOBID},
    {"JobIDRaw", F_JOBIDRAW},
    {"JobName", F_JOBNAME},
    {"User", F_USER},
    {"UID", F_UID},
    {"Group", F_GROUP},
    {"GID", F_GID},
    {"Account", F_ACCOUNT},
    {"Partition", F_PARTITION},
    {"QOS", F_QOS},
    {"Cluster", F_CLUSTER},
    {"Reservation", F_RESERVATION},
    {"WCKey", F_WCKEY},
    {"State", F_STATE},
    {"ExitCode", F_EXITCODE},
    {"DerivedExitCode", F_DERIVEDEXITCODE},
    {"Submit", F_SUBMIT},
    {"Eligible", F_ELIGIBLE},
    {"Start", F_START},
    {"End", F_END},
    {"Elapsed", F_ELAPSED},
    {"ElapsedRaw", F_ELAPSEDRAW},
    {"Timelimit", F_TIMELIMIT},
    {"TimelimitRaw", F_TIMELIMITRAW},
    {"NNodes", F_NNODES},
    {"NCPUS", F_NCPUS},
    {"AllocCPUS", F_ALLOCCPUS},
    {"ReqCPUS", F_REQCPUS},
    {"ReqTRES", F_REQTRES},
    {"AllocTRES", F_ALLOCTRES},
    {"ReqMem", F_REQMEM},
    {"NodeList", F_NODELIST},
    {"Reason", F_REASON},
    {"Restarts", F_RESTARTS},
    {"TotalCPU", F_TOTALCPU},
    {"UserCPU", F_USERCPU},
    {"SystemCPU", F_SYSTEMCPU},
    {"MaxRSS", F_MAXRSS},
    {"AveRSS", F_AVERSS},
    {"TRESUsageInTot", F_TRESUSAGEINTOT},
    {"TRESUsageInAve", F_TRESUSAGEINAVE},
    {"TRESUsageInMax", F_TRESUSAGEINMAX},
    {"TRESUsageOutTot", F_TRESUSAGEOUTTOT},
    {"ConsumedEnergyRaw", F_CONSUMEDENERGYRAW},
    {NULL, F_EXTRA},
};

/* Columns a step line fills in its sa_step_t; every other non-empty one goes to step->extra. */
static bool step_models(field_t f)
{
    switch (f) {
    case F_JOBID:
    case F_JOBIDRAW:
    case F_JOBNAME:
    case F_STATE:
    case F_EXITCODE:
    case F_START:
    case F_END:
    case F_ELAPSED:
    case F_ELAPSEDRAW:
    case F_NODELIST:
    case F_ALLOCTRES:
    case F_TOTALCPU:
    case F_USERCPU:
    case F_SYSTEMCPU:
    case F_MAXRSS:
    case F_AVERSS:
    case F_TRESUSAGEINTOT:
    case F_TRESUSAGEINAVE:
    case F_TRESUSAGEINMAX:
    case F_TRESUSAGEOUTTOT:
    case F_CONSUMEDENERGYRAW:
        return true;
    default:
        return false;
    }
}

static field_t field_lookup(const char *name)
{
    for (size_t i = 0; known_fields[i].name; i++) {
        if (strcasecmp(name, known_fields[i].name) == 0)
            return known_fields[i].f;
    }
    return F_EXTRA;
}

/* A sacct field name: a letter, then letters, digits and '_'. */
static bool is_field_name(const char *s)
{
    if (!isalpha((unsigned char)s[0]))
        return false;
    for (s++; *s; s++) {
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    }
    return true;
}

/* ---- job ids ------------------------------------------------------------------------ */

/* A parsed JobID / JobIDRaw: 123, 123_4, 123_[1-3%2], 123+1, each with an optional .step */
typedef struct {
    int64_t base;
    char sep;               /* 0, '_' or '+' */
    int64_t task;           /* 123_4 -> 4, else SA_UNSET */
    const char *range;      /* 123_[1-3] -> "1-3]...", range_len bytes */
    size_t range_len;
    int64_t het_offset;     /* 123+1 -> 1, else SA_UNSET */
    const char *step;       /* after the first '.', NULL on allocation lines */
    size_t prefix_len;      /* bytes before the '.' */
} jobid_t;

/* Reads one or more digits at *p into *v (no overflow). */
static bool read_digits(const char **p, int64_t *v)
{
    int64_t x = 0;
    const char *s = *p;

    if (!isdigit((unsigned char)*s))
        return false;
    for (; isdigit((unsigned char)*s); s++) {
        if (x > (INT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (*s - '0');
    }
    *p = s;
    *v = x;
    return true;
}

/* Parses the job id grammar (see the top of this file). */
static bool parse_jobid(const char *s, jobid_t *id)
{
    const char *p = s;

    memset(id, 0, sizeof *id);
    id->task = id->het_offset = SA_UNSET;
    if (!read_digits(&p, &id->base))
        return false;
    if (*p == '_') {
        id->sep = '_';
        p++;
        if (*p == '[') {
            const char *close = strchr(p, ']');
            if (!close || close == p + 1)
                return false;
            for (const char *q = p + 1; q < close; q++) {
                if (!strchr("0123456789,-:%.", *q))
                    return false;
            }
            id->range = p + 1;
            id->range_len = (size_t)(close - p - 1);
            p = close + 1;
        } else if (!read_digits(&p, &id->task)) {
            return false;
        }
    } else if (*p == '+') {
        id->sep = '+';
        p++;
        if (!read_digits(&p, &id->het_offset))
            return false;
    }
    id->prefix_len = (size_t)(p - s);
    if (*p == '.') {
        p++;
        if (!*p)
            return false;
        for (const char *q = p; *q; q++) {
            if (!isalnum((unsigned char)*q) && *q != '_' && *q != '+')
                return false;
        }
        id->step = p;
        return true;
    }
    return *p == '\0';
}

/* ---- parser state ------------------------------------------------------------------- */

typedef struct {
    const sa_sink_t *sink;
    char *delim;
    size_t dlen;
    int trailing;       /* -1 not known yet, 0 no, 1 every line ends with the delimiter */
    size_t nfields;
    char **names;       /* column names as given */
    field_t *kinds;     /* what each column is */
    int col[F_COUNT];   /* column of each modelled field, -1 when absent */
    char **vals;        /* the current line's values (nfields + 1 slots) */
    size_t lineno;
    sa_job_t *job;      /* the allocation being built */
    char *job_prefix;   /* its id text, to match step lines */
    char *rejected_prefix; /* the id text of the last allocation line set aside */
    bool local;         /* times are local time of the zone set in TZ (opts->tz) */
    /* where things are in the input (sa_span_t): the header line, the line being taken,
     * the current job's first line and the end of its last */
    char *hdr_text;     /* the header line (with "\n"), or -n input's columns as one; NULL: none that reads back */
    size_t hdr_len;
    uint64_t line_off, job_off, job_end;
    uint64_t gap_off;   /* the first line set aside since the current job began (when gap) */
    bool gap;
} sacct_t;

static void sacct_clear(sacct_t *st)
{
    for (size_t i = 0; i < st->nfields; i++)
        free(st->names[i]);
    free(st->names);
    free(st->kinds);
    free(st->vals);
    free(st->delim);
    free(st->hdr_text);
    sa_job_destroy(st->job);
    free(st->job_prefix);
    free(st->rejected_prefix);
}

/* Splits line in place on the delimiter; stores up to cap pointers; returns the count. */
static size_t split(char *line, const char *d, size_t dlen, char **out, size_t cap)
{
    size_t n = 0;
    char *p = line;

    for (;;) {
        char *hit = dlen == 1 ? strchr(p, d[0]) : strstr(p, d);
        if (n < cap)
            out[n] = p;
        n++;
        if (!hit)
            break;
        *hit = '\0';
        p = hit + dlen;
    }
    return n;
}

/* Takes the column names (copied), checks them and maps them to fields. */
static bool set_fields(sacct_t *st, char **names, size_t n, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];

    st->names = calloc(n, sizeof *st->names);
    st->kinds = calloc(n, sizeof *st->kinds);
    st->vals = calloc(n + 1, sizeof *st->vals);
    if (!st->names || !st->kinds || !st->vals)
        goto oom;
    for (int f = 0; f < F_COUNT; f++)
        st->col[f] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!is_field_name(names[i])) {
            sa_error_set(error, SA_ERR_INPUT, 0,
                         "'%s' is not a sacct field name (for sacct -n output give the field list)",
                         Q(names[i], q));
            return false;
        }
        st->names[i] = strdup(names[i]);
        if (!st->names[i])
            goto oom;
        st->nfields = i + 1;
        st->kinds[i] = field_lookup(names[i]);
        if (st->kinds[i] != F_EXTRA)
            st->col[st->kinds[i]] = (int)i;
    }
    if (st->col[F_JOBID] < 0 && st->col[F_JOBIDRAW] < 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "sacct text has no JobID or JobIDRaw column");
        return false;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/*
 * The caller's field list "JobID,JobIDRaw,State" (blanks and "%20" width suffixes
 * allowed) -> column names.
 */
static bool fields_from_list(sacct_t *st, const char *list, sa_error_t *error)
{
    char *copy = strdup(list), *p, **names = NULL;
    size_t n = 0;
    bool ok = false;

    if (!copy)
        goto oom;
    for (p = copy; *p; p++)
        n += *p == ',';
    names = calloc(n + 1, sizeof *names);
    if (!names)
        goto oom;
    n = split(copy, ",", 1, names, n + 1);
    for (size_t i = 0; i < n; i++) {
        char *s = names[i], *e;
        while (isspace((unsigned char)*s))
            s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        *e = '\0';
        if ((e = strchr(s, '%')))
            *e = '\0';
        names[i] = s;
    }
    ok = set_fields(st, names, n, error);
    if (!ok)
        sa_error_prefix(error, "field list");
    goto done;
oom:
    sa_error_nomem(error);
done:
    free(names);
    free(copy);
    return ok;
}

static bool set_delim(sacct_t *st, const char *d, size_t n, sa_error_t *error)
{
    st->delim = strndup(d, n);
    st->dlen = n;
    if (!st->delim) {
        sa_error_nomem(error);
        return false;
    }
    return true;
}

/*
 * Delimiter of a header line: the text between the first field name and the next
 * one. A header of one field without a delimiter leaves "|".
 */
static bool detect_delim_header(sacct_t *st, const char *line, sa_error_t *error)
{
    const char *p = line, *d;

    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    d = p;
    while (*p && !isalpha((unsigned char)*p))
        p++;
    if (p == d)
        return set_delim(st, "|", 1, error);
    return set_delim(st, d, (size_t)(p - d), error);
}

/*
 * Delimiter of a line without header: the first character after the leading job id
 * (and any letters, for "123.batch") that cannot be part of one, taken as a whole
 * UTF-8 sequence.
 */
static bool detect_delim_data(sacct_t *st, const char *line, sa_error_t *error)
{
    const char *p = line;
    size_t n;

    while (*p && (isalnum((unsigned char)*p) || strchr("_+.[]%,-:", *p)))
        p++;
    if (!*p)
        return set_delim(st, "|", 1, error);
    n = utf8_seq_len((unsigned char)*p);
    if (strnlen(p, n) < n)
        n = strnlen(p, n);
    return set_delim(st, p, n, error);
}

/* ---- values ------------------------------------------------------------------------ */

/* The value of field f on the current line, NULL when the column is absent or empty. */
static const char *val(const sacct_t *st, field_t f)
{
    int c = st->col[f];
    if (c < 0 || !st->vals[c] || !st->vals[c][0])
        return NULL;
    return st->vals[c];
}

static bool set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = NULL;
    if (!v)
        return true;
    *dst = strdup(v);
    return *dst != NULL;
}

/* Sets (*extra)[key] = value, creating the object. */
static bool extra_set(json_t **extra, const char *key, const char *value)
{
    json_t *s;

    if (!*extra && !(*extra = json_object()))
        return false;
    s = json_string(value);
    return s && json_object_set_new(*extra, key, s) == 0;
}

/* Sets the error "line N: job X: Column: <message so far>". */
static void err_field(const sacct_t *st, const char *who, field_t f, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    sa_error_prefix(error, "line %zu: job %s: %s", st->lineno, Q(who, q), st->names[st->col[f]]);
}

/* An integer column (SA_UNSET when empty); fails on junk. */
static bool get_int(const sacct_t *st, const char *who, field_t f, int64_t *out, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    const char *v = val(st, f);

    if (!v)
        return true;
    if (!sa_parse_int64(v, out) || *out < 0) {
        sa_error_set(error, SA_ERR_INPUT, 0, "expected a non-negative integer, got '%s'", Q(v, q));
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

static bool get_time(const sacct_t *st, const char *who, field_t f, int64_t *out, sa_error_t *error)
{
    const char *v = val(st, f);
    if (v && !(st->local ? sa_time_parse_text_local(v, out, error) : sa_time_parse_text(v, out, error))) {
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

static bool get_exit(const sacct_t *st, const char *who, field_t f, int *rc, int *sig, sa_error_t *error)
{
    const char *v = val(st, f);
    if (v && !sa_exitcode_parse_text(v, rc, sig, error)) {
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

static bool get_tres(const sacct_t *st, const char *who, field_t f, sa_tres_t *out, sa_error_t *error)
{
    const char *v = val(st, f);
    if (v && !sa_tres_parse(v, false, out, error)) {
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

/*
 * TotalCPU, UserCPU, SystemCPU. A bare number ("1") is not a form sacct prints
 * ([DD-[HH:]]MM:SS[.mmm]), and its unit would be a guess (seconds? Slurm's own input
 * rule reads minutes): the member stays absent and the value is kept in *extra as printed.
 */
static bool get_cputime(const sacct_t *st, const char *who, field_t f, double *out, json_t **extra,
                        sa_error_t *error)
{
    const char *v = val(st, f);
    if (v && strspn(v, "0123456789") == strlen(v)) {
        *out = -1;
        if (!extra_set(extra, st->names[st->col[f]], v)) {
            sa_error_nomem(error);
            return false;
        }
        return true;
    }
    if (!sa_cputime_parse(v, out, error)) {
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

static bool get_size(const sacct_t *st, const char *who, field_t f, int64_t *out, sa_error_t *error)
{
    if (!sa_size_bytes_parse(val(st, f), out, error)) {
        err_field(st, who, f, error);
        return false;
    }
    return true;
}

/* The entry name of a TRESUsage* column into *out, when *out is not known yet. */
static bool get_usage(const sacct_t *st, const char *who, field_t f, const char *name, int64_t *out,
                      sa_error_t *error)
{
    int64_t v;
    if (*out != SA_UNSET || !val(st, f))
        return true;
    if (!sa_tres_usage_get(val(st, f), name, &v, error)) {
        err_field(st, who, f, error);
        return false;
    }
    *out = v;
    return true;
}

/*
 * The entries of TRESUsage column f that no usage member reads (names: the ones read,
 * NULL-terminated) -> (*extra)[column name], as printed and in their order ("cpu=00:10:00,
 * pages=7,vmem=9M"); nothing when every entry is read.
 */
static bool usage_extra(const sacct_t *st, field_t f, const char *const *names, json_t **extra)
{
    const char *v = val(st, f), *p;
    char *kept;
    size_t n = 0;
    bool ok = true;

    if (!v)
        return true;
    if (!(kept = malloc(strlen(v) + 1)))
        return false;
    for (p = v; *p;) {
        const char *comma = strchr(p, ','), *eq;
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool read = false;
        eq = memchr(p, '=', len);
        for (const char *const *nm = names; eq && *nm; nm++)
            read = read || ((size_t)(eq - p) == strlen(*nm) && strncmp(p, *nm, (size_t)(eq - p)) == 0);
        if (!read) {
            if (n)
                kept[n++] = ',';
            memcpy(kept + n, p, len);
            n += len;
        }
        p += len + (comma ? 1 : 0);
    }
    kept[n] = '\0';
    if (n)
        ok = extra_set(extra, st->names[st->col[f]], kept);
    free(kept);
    return ok;
}

/*
 * The usage columns of a line -> *u (sa_model.h says which column gives which member);
 * the TRESUsage entries no member reads -> *extra. ConsumedEnergyRaw 0 (no energy plugin)
 * and NO_VAL64 stay absent.
 */
static bool get_stats(const sacct_t *st, const char *who, sa_stats_t *u, json_t **extra, sa_error_t *error)
{
    int64_t util = SA_UNSET, energy = SA_UNSET;
    const char *v;

    if (!get_cputime(st, who, F_TOTALCPU, &u->cpu_s, extra, error) ||
        !get_cputime(st, who, F_USERCPU, &u->user_cpu_s, extra, error) ||
        !get_cputime(st, who, F_SYSTEMCPU, &u->system_cpu_s, extra, error) ||
        !get_size(st, who, F_MAXRSS, &u->max_rss_bytes, error) ||
        !get_size(st, who, F_AVERSS, &u->ave_rss_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEINMAX, "mem", &u->max_rss_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEINAVE, "mem", &u->ave_rss_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEINTOT, "mem", &u->mem_total_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEINTOT, "gres/gpuutil", &util, error) ||
        !get_usage(st, who, F_TRESUSAGEINAVE, "gres/gpuutil", &util, error) ||
        !get_usage(st, who, F_TRESUSAGEINMAX, "gres/gpumem", &u->gpu_mem_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEINTOT, "fs/disk", &u->disk_read_bytes, error) ||
        !get_usage(st, who, F_TRESUSAGEOUTTOT, "fs/disk", &u->disk_write_bytes, error))
        return false;
    {
        static const char *const in_tot[] = {"mem", "gres/gpuutil", "fs/disk", NULL};
        static const char *const in_ave[] = {"mem", "gres/gpuutil", NULL};
        static const char *const in_max[] = {"mem", "gres/gpumem", NULL};
        static const char *const out_tot[] = {"fs/disk", "energy", NULL};
        if (!usage_extra(st, F_TRESUSAGEINTOT, in_tot, extra) || !usage_extra(st, F_TRESUSAGEINAVE, in_ave, extra) ||
            !usage_extra(st, F_TRESUSAGEINMAX, in_max, extra) || !usage_extra(st, F_TRESUSAGEOUTTOT, out_tot, extra)) {
            sa_error_nomem(error);
            return false;
        }
    }
    if (util != SA_UNSET)
        u->gpu_util_pct = (double)util;
    if ((v = val(st, F_CONSUMEDENERGYRAW)) && sa_parse_int64(v, &energy) && energy > 0 && energy < (INT64_C(1) << 53))
        u->energy_j = energy;
    else if (!get_usage(st, who, F_TRESUSAGEOUTTOT, "energy", &energy, error))
        return false;
    else if (u->energy_j == SA_UNSET && energy > 0)
        u->energy_j = energy;
    return true;
}

/* Elapsed seconds: ElapsedRaw, else Elapsed. */
static bool get_elapsed(const sacct_t *st, const char *who, int64_t *out, sa_error_t *error)
{
    const char *v;

    if (val(st, F_ELAPSEDRAW))
        return get_int(st, who, F_ELAPSEDRAW, out, error);
    if ((v = val(st, F_ELAPSED)) && !sa_duration_parse(v, out, error)) {
        err_field(st, who, F_ELAPSED, error);
        return false;
    }
    return true;
}

/*
 * State: one word, or "CANCELLED by <uid>" (the uid goes to extra "cancelled_by").
 * Anything else after the word is kept whole in extra under the column name.
 */
static bool get_state(const sacct_t *st, sa_state_t *state, json_t **extra)
{
    const char *v = val(st, F_STATE), *sp;
    size_t n;

    if (!v)
        return true;
    sp = strchr(v, ' ');
    n = sp ? (size_t)(sp - v) : strlen(v);
    free(state->base);
    state->base = strndup(v, n);
    if (!state->base)
        return false;
    for (char *p = state->base; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    if (!sp)
        return true;
    if (strncmp(sp, " by ", 4) == 0 && sp[4])
        return extra_set(extra, "cancelled_by", sp + 4);
    return extra_set(extra, st->names[st->col[F_STATE]], v);
}

/* NodeList: "None assigned" and "(null)" are no nodes. */
static const char *nodes_val(const sacct_t *st)
{
    const char *v = val(st, F_NODELIST);
    if (v && (strcmp(v, "None assigned") == 0 || strcmp(v, "(null)") == 0))
        return NULL;
    return v;
}

/* ---- records ------------------------------------------------------------------------- */

/*
 * Sets the id members of job from the id column (text, parsed as *id; for a step
 * line only the part before the '.' describes the job) and the JobIDRaw column.
 */
static bool job_ids(const sacct_t *st, sa_job_t *job, const char *text, const jobid_t *id, sa_error_t *error)
{
    char q[QUOTE_MAX + 8], q2[QUOTE_MAX + 8];
    const char *raw = val(st, F_JOBIDRAW);
    jobid_t rid;

    if (st->col[F_JOBID] >= 0) {
        job->job_id_display = strndup(text, id->prefix_len);
        if (!job->job_id_display)
            goto oom;
        if (id->sep == '_') {
            job->array_job_id = id->base;
            job->array_task_id = id->task;
            if (id->range) {
                const char *pct = memchr(id->range, '%', id->range_len);
                job->array_task_string = strndup(id->range, id->range_len);
                if (!job->array_task_string)
                    goto oom;
                if (pct) {
                    const char *p = pct + 1;
                    int64_t v;
                    if (read_digits(&p, &v) && p == id->range + id->range_len)
                        job->array_max_tasks = v;
                }
            }
        } else if (id->sep == '+') {
            job->het_job_id = id->base;
            job->het_job_offset = id->het_offset;
        }
    }
    if (raw && st->col[F_JOBIDRAW] != st->col[F_JOBID]) {
        if (!parse_jobid(raw, &rid) || rid.sep) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: job %s: %s: expected a raw job id, got '%s'",
                         st->lineno, Q(text, q), st->names[st->col[F_JOBIDRAW]], Q(raw, q2));
            return false;
        }
        job->job_id = rid.base;
        if (job->job_id < 1 || job->job_id > SA_JOB_ID_MAX) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: job %s: %s: job id %" PRId64 " out of range (1..2^53)",
                         st->lineno, Q(text, q), st->names[st->col[F_JOBIDRAW]], job->job_id);
            return false;
        }
        return true;
    }
    if (id->sep == '+')
        job->job_id = id->base > SA_JOB_ID_MAX || id->het_offset > SA_JOB_ID_MAX ? SA_JOB_ID_MAX + 1
                                                                              : id->base + id->het_offset;
    else
        job->job_id = id->base;
    if (job->job_id < 1 || job->job_id > SA_JOB_ID_MAX) {
        sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: %s: job id %s out of range (1..2^53)", st->lineno,
                     st->names[st->col[st->col[F_JOBID] >= 0 ? F_JOBID : F_JOBIDRAW]], Q(text, q));
        return false;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/*
 * ReqMem of Slurm <= 20.11, "100Gn" (per node) / "512Mc" (per CPU): the job's total
 * (x NNodes, x CPUs) into job->req.mem_mb; unknown while either count is. False on a
 * size that cannot be read.
 */
static bool reqmem_total(const char *v, size_t len, sa_job_t *job)
{
    char buf[80];
    int64_t mib, times = v[len - 1] == 'n' ? job->node_count : job->cpus;
    sa_tres_t t;
    bool ok;

    if (len >= 60)
        return false;
    snprintf(buf, sizeof buf, "mem=%.*s", (int)(len - 1), v);
    sa_tres_init(&t);
    ok = sa_tres_parse(buf, false, &t, NULL) && t.mem_mb != SA_UNSET && !t.other;
    mib = t.mem_mb;
    sa_tres_clear(&t);
    if (ok && mib > 0 && times != SA_UNSET && times >= 0 && (times == 0 || mib <= INT64_MAX / times))
        job->req.mem_mb = mib * times;
    return ok;
}

/* Fills the job-level members of an allocation line. */
static bool fill_job(const sacct_t *st, sa_job_t *job, const char *who, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    const char *v;
    int64_t n;

    if (!set_str(&job->name, val(st, F_JOBNAME)) || !set_str(&job->user, val(st, F_USER)) ||
        !set_str(&job->group, val(st, F_GROUP)) || !set_str(&job->account, val(st, F_ACCOUNT)) ||
        !set_str(&job->partition, val(st, F_PARTITION)) || !set_str(&job->qos, val(st, F_QOS)) ||
        !set_str(&job->cluster, val(st, F_CLUSTER)) || !set_str(&job->reservation, val(st, F_RESERVATION)) ||
        !set_str(&job->wckey, val(st, F_WCKEY)) || !set_str(&job->reason, val(st, F_REASON)) ||
        !set_str(&job->nodes, nodes_val(st)) || !get_state(st, &job->state, &job->extra))
        goto oom;
    if (!get_int(st, who, F_UID, &job->user_id, error) || !get_int(st, who, F_GID, &job->group_id, error) ||
        !get_exit(st, who, F_EXITCODE, &job->exit_code, &job->exit_signal, error) ||
        !get_exit(st, who, F_DERIVEDEXITCODE, &job->derived_exit_code, &job->derived_exit_signal, error) ||
        !get_time(st, who, F_SUBMIT, &job->submit, error) || !get_time(st, who, F_ELIGIBLE, &job->eligible, error) ||
        !get_time(st, who, F_START, &job->start, error) || !get_time(st, who, F_END, &job->end, error) ||
        !get_elapsed(st, who, &job->elapsed, error) || !get_int(st, who, F_NNODES, &job->node_count, error) ||
        !get_int(st, who, F_RESTARTS, &job->restart_cnt, error) ||
        !get_tres(st, who, F_REQTRES, &job->req, error) || !get_tres(st, who, F_ALLOCTRES, &job->alloc, error) ||
        !get_stats(st, who, &job->stats, &job->extra, error))
        return false;
    job->exit_reliable = true;

    /* CPUs: NCPUS, else AllocCPUS */
    if (val(st, F_NCPUS)) {
        if (!get_int(st, who, F_NCPUS, &job->cpus, error))
            return false;
    } else if (!get_int(st, who, F_ALLOCCPUS, &job->cpus, error)) {
        return false;
    }

    /* ReqCPUS: the requested CPUs when ReqTRES has no cpu entry (Slurm <= 17.11 prints no ReqTRES, and some
       records leave it empty); one that disagrees with ReqTRES's cpu is kept in extra as printed */
    if (val(st, F_REQCPUS)) {
        if (!get_int(st, who, F_REQCPUS, &n, error))
            return false;
        if (job->req.cpu == SA_UNSET)
            job->req.cpu = n;
        else if (n != job->req.cpu && !extra_set(&job->extra, st->names[st->col[F_REQCPUS]], val(st, F_REQCPUS)))
            goto oom;
    }

    /* time limit in minutes: TimelimitRaw, else Timelimit */
    if ((v = val(st, F_TIMELIMITRAW))) {
        if (!sa_parse_int64(v, &job->time_limit) || job->time_limit < 0) {
            if (!sa_duration_parse(v, &n, error) || (n != SA_UNSET && n != SA_INFINITE)) {
                sa_error_set(error, SA_ERR_INPUT, 0, "expected minutes or UNLIMITED, got '%s'", Q(v, q));
                err_field(st, who, F_TIMELIMITRAW, error);
                return false;
            }
            job->time_limit = n;
        }
    } else if ((v = val(st, F_TIMELIMIT))) {
        if (!sa_duration_parse(v, &n, error)) {
            err_field(st, who, F_TIMELIMIT, error);
            return false;
        }
        job->time_limit = (n == SA_UNSET || n == SA_INFINITE) ? n : n / 60;
    }

    /* ReqMem: "100Gn" / "512Mc" (<= 20.11, per node / per CPU) stay text; a total counts if ReqTRES had no mem */
    if ((v = val(st, F_REQMEM))) {
        size_t len = strlen(v);
        if (len >= 2 && (v[len - 1] == 'n' || v[len - 1] == 'c') && isalnum((unsigned char)v[len - 2])) {
            if (!extra_set(&job->extra, st->names[st->col[F_REQMEM]], v))
                goto oom;
            if (job->req.mem_mb == SA_UNSET && !reqmem_total(v, len, job)) {
                sa_error_set(error, SA_ERR_INPUT, 0, "expected a size like 100Gn or 512Mc, got '%s'", Q(v, q));
                err_field(st, who, F_REQMEM, error);
                return false;
            }
        } else {
            char buf[80];
            bool parsed = false;
            sa_tres_t t;

            sa_tres_init(&t);
            if (len < 60 && !strchr(v, ',')) {
                snprintf(buf, sizeof buf, "mem=%s", v);
                parsed = sa_tres_parse(buf, false, &t, NULL) && t.mem_mb != SA_UNSET && !t.other;
            }
            if (!parsed) {
                sa_tres_clear(&t);
                sa_error_set(error, SA_ERR_INPUT, 0, "expected a size like 16G, got '%s'", Q(v, q));
                err_field(st, who, F_REQMEM, error);
                return false;
            }
            if (job->req.mem_mb == SA_UNSET)
                job->req.mem_mb = t.mem_mb;
            sa_tres_clear(&t);
        }
    }

    for (size_t c = 0; c < st->nfields; c++) {
        if (st->kinds[c] == F_EXTRA && st->vals[c][0] && !extra_set(&job->extra, st->names[c], st->vals[c]))
            goto oom;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/* Fills a step from a step line. */
static bool fill_step(const sacct_t *st, sa_step_t *step, const char *step_id, const char *who, sa_error_t *error)
{
    if (!set_str(&step->id, step_id) || !set_str(&step->name, val(st, F_JOBNAME)) ||
        !set_str(&step->nodes, nodes_val(st)) || !get_state(st, &step->state, &step->extra))
        goto oom;
    if (!get_exit(st, who, F_EXITCODE, &step->exit_code, &step->exit_signal, error) ||
        !get_time(st, who, F_START, &step->start, error) || !get_time(st, who, F_END, &step->end, error) ||
        !get_elapsed(st, who, &step->elapsed, error) || !get_tres(st, who, F_ALLOCTRES, &step->alloc, error) ||
        !get_stats(st, who, &step->stats, &step->extra, error))
        return false;
    for (size_t c = 0; c < st->nfields; c++) {
        if (!step_models(st->kinds[c]) && st->vals[c][0] && !extra_set(&step->extra, st->names[c], st->vals[c]))
            goto oom;
    }
    return true;
oom:
    sa_error_nomem(error);
    return false;
}

/* Hands the current job to the sink and frees it. */
static bool flush_job(sacct_t *st, sa_error_t *error)
{
    bool ok = true;

    if (!st->job)
        return true;
    if (st->sink && st->sink->span) {
        /* a line set aside among the job's lines (a step line of another job whose
         * allocation line was set aside) would read otherwise alone: no span (length 0) */
        bool gap = st->gap && st->gap_off < st->job_end;
        bool alone = st->hdr_text && !gap;
        *st->sink->span = (sa_span_t){st->job_off, alone ? st->job_end - st->job_off : 0, st->hdr_text, st->hdr_len,
                                      st->delim};
    }
    if (st->sink && st->sink->on_job)
        ok = st->sink->on_job(st->job, st->sink->ctx, error);
    sa_job_destroy(st->job);
    st->job = NULL;
    free(st->job_prefix);
    st->job_prefix = NULL;
    return ok;
}

/* Starts a new current job for the id text (allocation line, or orphan step line). */
static bool start_job(sacct_t *st, const char *text, const jobid_t *id, sa_error_t *error)
{
    if (!flush_job(st, error))
        return false;
    st->job = sa_job_new(SA_SRC_SACCT_TEXT);
    st->job_prefix = strndup(text, id->prefix_len);
    if (!st->job || !st->job_prefix) {
        sa_error_nomem(error);
        return false;
    }
    st->job->exit_reliable = true;
    st->job_off = st->job_end = st->line_off; /* no line taken yet: no span */
    st->gap = false;
    return job_ids(st, st->job, text, id, error);
}

/* One data line, already split into st->vals. */
static bool data_line(sacct_t *st, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    field_t idf = st->col[F_JOBID] >= 0 ? F_JOBID : F_JOBIDRAW;
    const char *text = val(st, idf);
    sa_step_t *step;
    jobid_t id;

    if (!text) {
        sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: empty %s", st->lineno, st->names[st->col[idf]]);
        return false;
    }
    if (!parse_jobid(text, &id)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: %s: cannot read job id '%s'", st->lineno,
                     st->names[st->col[idf]], Q(text, q));
        return false;
    }
    if (!id.step) {
        if (!start_job(st, text, &id, error))
            return false;
        return fill_job(st, st->job, text, error);
    }
    if (!st->job || strlen(st->job_prefix) != id.prefix_len || strncmp(st->job_prefix, text, id.prefix_len) != 0) {
        /* a step without its allocation line: a job of its own */
        if (!start_job(st, text, &id, error))
            return false;
        if (!set_str(&st->job->cluster, val(st, F_CLUSTER)))
            goto oom;
    }
    step = sa_job_add_step(st->job);
    if (!step)
        goto oom;
    return fill_step(st, step, id.step, text, error);
oom:
    sa_error_nomem(error);
    return false;
}

/* The job id text of the current line for an error message ("?" when unknown). */
static const char *line_job(const sacct_t *st, size_t n)
{
    int c = st->col[F_JOBID] >= 0 ? st->col[F_JOBID] : st->col[F_JOBIDRAW];
    if (c >= 0 && (size_t)c < n && (size_t)c <= st->nfields && st->vals[c][0])
        return st->vals[c];
    return "?";
}

/* True if every value equals the column name (a header line in -n mode). */
static bool is_header_again(const sacct_t *st, char **v, size_t n)
{
    if (n != st->nfields)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(v[i], st->names[i]) != 0)
            return false;
    }
    return true;
}

/* ---- lines, joined and repaired ----------------------------------------------------- */

/* One logical line: owned text (several input lines when a value held a newline). */
typedef struct {
    char *s;
    size_t len, cap;
    size_t lineno;  /* number of its first input line */
    uint64_t off, end; /* its bytes in the input (from its first line to the "\n" of its last) */
    bool repaired;  /* invalid UTF-8 was replaced */
    bool cut;       /* longer than SA_LINES_CAP: its first bytes only */
} tline_t;

/* The line source: the reader's lines, with one line of push-back. */
typedef struct {
    sa_lines_t L;
    tline_t back;
    bool have_back;
    bool tolerant; /* the sink sets bad records aside (and repairs what it can) */
} src_t;

static bool tline_append(tline_t *t, const char *p, size_t n)
{
    if (!SA_VEC_GROW(t->s, t->cap, t->len, n + 1, 256))
        return false;
    memcpy(t->s + t->len, p, n);
    t->len += n;
    t->s[t->len] = '\0';
    return true;
}

static void tline_swap(tline_t *a, tline_t *b)
{
    tline_t t = *a;
    *a = *b;
    *b = t;
}

/*
 * The next input line into *out (replacing its text). Not UTF-8: an error, or, when
 * tolerant, repaired (U+FFFD) and flagged. Returns 1, 0 at the end, -1 on error.
 */
static int src_next(src_t *src, tline_t *out, sa_error_t *error)
{
    int rc;
    if (src->have_back) {
        tline_swap(out, &src->back);
        src->have_back = false;
        return 1;
    }
    rc = sa_lines_next(&src->L, error);
    if (rc <= 0)
        return rc;
    out->len = 0;
    out->lineno = src->L.lineno;
    out->off = src->L.line_off;
    out->end = src->L.next_off;
    out->cut = rc == 2;
    out->repaired = false;
    if (!sa_utf8_valid((const unsigned char *)src->L.line, src->L.line_len)) {
        size_t n;
        char *fixed;
        if (!src->tolerant) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: not UTF-8 text", src->L.lineno);
            return -1;
        }
        fixed = sa_utf8_repair((const unsigned char *)src->L.line, src->L.line_len, &n);
        if (!fixed || !tline_append(out, fixed, n)) {
            free(fixed);
            sa_error_nomem(error);
            return -1;
        }
        free(fixed);
        out->repaired = true;
        return 1;
    }
    if (!tline_append(out, src->L.line, src->L.line_len)) {
        sa_error_nomem(error);
        return -1;
    }
    return 1;
}

static void src_push_back(src_t *src, tline_t *t)
{
    tline_swap(&src->back, t);
    src->have_back = true;
}

/* Number of fields of a line (delimiters + 1). */
static size_t count_fields(const sacct_t *st, const char *s)
{
    size_t n = 1;
    for (const char *h = s; (h = strstr(h, st->delim)); h += st->dlen)
        n++;
    return n;
}

static bool is_blank(const char *s)
{
    for (; *s; s++) {
        if (!isspace((unsigned char)*s))
            return false;
    }
    return true;
}

/* Hands a record that cannot be taken to the sink's set-aside callback. */
__attribute__((format(printf, 5, 6))) static bool set_aside(sacct_t *st, const tline_t *t, bool kept,
                                                           sa_error_t *error, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    if (!kept && st->job && !st->gap) {
        st->gap_off = t->off;
        st->gap = true;
    }
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return st->sink->on_setaside(t->s, t->len, why, kept, st->sink->ctx, error);
}

/*
 * Completes a data line whose values hold newlines: a line with too few fields takes
 * the following lines until it has enough; a complete line takes the following lines
 * that hold no delimiter at all (a newline inside its last value, the free-text
 * JobName). *n receives the field count.
 */
static bool join_lines(sacct_t *st, src_t *src, tline_t *cur, size_t want, size_t *n, sa_error_t *error)
{
    tline_t nxt = {0};
    bool ok = true;
    int rc;

    *n = count_fields(st, cur->s);
    while (*n < want && (rc = src_next(src, &nxt, error)) > 0) {
        ok = tline_append(cur, "\n", 1) && tline_append(cur, nxt.s, nxt.len);
        cur->repaired = cur->repaired || nxt.repaired;
        cur->end = nxt.end;
        if (!ok)
            break;
        *n = count_fields(st, cur->s);
    }
    while (ok && *n == want && (rc = src_next(src, &nxt, error)) > 0) {
        if (is_blank(nxt.s) || strstr(nxt.s, st->delim)) {
            src_push_back(src, &nxt);
            break;
        }
        ok = tline_append(cur, "\n", 1) && tline_append(cur, nxt.s, nxt.len);
        cur->repaired = cur->repaired || nxt.repaired;
        cur->end = nxt.end;
    }
    free(nxt.s);
    if (!ok)
        sa_error_nomem(error);
    return ok;
}

/*
 * -n input, once its first data line set the delimiter and whether lines end with one:
 * the columns as a line (hdr_text), which a record's lines read alone (sa_parse_record)
 * take for the header repeated, so that they are read with the same trailing delimiter;
 * a blank line ends it (a first line without a delimiter would continue it otherwise).
 * None when a column name holds the delimiter, or for one column (a line without a
 * delimiter continues the line before it): its records are then not read alone. False
 * when out of memory.
 */
static bool columns_line(sacct_t *st)
{
    size_t len = 0;
    char *p;

    if (st->nfields < 2)
        return true;
    for (size_t i = 0; i < st->nfields; i++) {
        if (strstr(st->names[i], st->delim))
            return true;
        len += strlen(st->names[i]) + st->dlen;
    }
    if (!(p = st->hdr_text = malloc(len + st->dlen + 3)))
        return false;
    for (size_t i = 0; i < st->nfields; i++) {
        memcpy(p, st->names[i], strlen(st->names[i]));
        p += strlen(st->names[i]);
        if (i + 1 < st->nfields || st->trailing == 1) {
            memcpy(p, st->delim, st->dlen);
            p += st->dlen;
        }
    }
    *p++ = '\n';
    *p++ = '\n';
    *p = '\0';
    st->hdr_len = (size_t)(p - st->hdr_text);
    return true;
}

/* Takes the header line: delimiter, trailing delimiter, columns. */
static bool header_line(sacct_t *st, char *line, size_t len, sa_error_t *error)
{
    char **v;
    size_t cap;

    if (!st->delim && !detect_delim_header(st, line, error))
        return false;
    if (len >= st->dlen && memcmp(line + len - st->dlen, st->delim, st->dlen) == 0) {
        st->trailing = 1;
        line[len - st->dlen] = '\0';
    } else {
        st->trailing = 0;
    }
    cap = count_fields(st, line);
    v = calloc(cap, sizeof *v);
    if (!v) {
        sa_error_nomem(error);
        return false;
    }
    split(line, st->delim, st->dlen, v, cap);
    if (!set_fields(st, v, cap, error)) {
        free(v);
        sa_error_prefix(error, "line %zu: not a sacct header", st->lineno);
        return false;
    }
    free(v);
    return true;
}

/*
 * A data line that data_line() refused (tolerant mode): the record it began (or the
 * step it added) is dropped, and its job's later step lines go with it.
 */
static void drop_bad_record(sacct_t *st, bool step, size_t nsteps_before)
{
    if (step && st->job && st->job->nsteps > nsteps_before) {
        sa_job_drop_last_step(st->job);
        return;
    }
    free(st->rejected_prefix);
    st->rejected_prefix = st->job_prefix;
    st->job_prefix = NULL;
    sa_job_destroy(st->job);
    st->job = NULL;
}

/* True if a step line belongs to a job whose allocation line was set aside. */
static bool of_rejected_job(const sacct_t *st, const char *text)
{
    jobid_t id;
    size_t n = st->rejected_prefix ? strlen(st->rejected_prefix) : 0;
    return n && parse_jobid(text, &id) && id.step && id.prefix_len == n &&
           strncmp(text, st->rejected_prefix, n) == 0;
}

/* One complete data line: counted, split and handed to data_line() (or set aside). */
static bool take_data_line(sacct_t *st, tline_t *cur, size_t n, bool *header_done, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    size_t want = st->nfields + (st->trailing == 1 ? 1 : 0);
    tline_t raw = {0};
    bool tolerant = st->sink && st->sink->on_setaside, step, ok;
    size_t nsteps;
    sa_error_t why;

    if (n != want) {
        if (tolerant) {
            /* the job id for the message comes from a split copy: the record is kept as it came */
            char *copy = strdup(cur->s);
            if (!copy) {
                sa_error_nomem(error);
                return false;
            }
            split(copy, st->delim, st->dlen, st->vals, st->nfields + 1);
            ok = set_aside(st, cur, false, error, "line %zu: job %s: expected %zu fields, found %zu (a delimiter "
                           "inside a free-text field?)", cur->lineno, Q(line_job(st, n), q), st->nfields,
                           n - (st->trailing == 1 ? 1 : 0));
            free(copy);
            return ok;
        }
        split(cur->s, st->delim, st->dlen, st->vals, st->nfields + 1);
        sa_error_set(error, SA_ERR_INPUT, 0,
                     "line %zu: job %s: expected %zu fields, found %zu (a delimiter inside a free-text field?)",
                     cur->lineno, Q(line_job(st, n), q), st->nfields, n - (st->trailing == 1 ? 1 : 0));
        return false;
    }
    if (tolerant && !tline_append(&raw, cur->s, cur->len)) { /* split() cuts cur apart */
        sa_error_nomem(error);
        return false;
    }
    raw.lineno = cur->lineno;
    raw.off = cur->off;
    raw.end = cur->end;
    split(cur->s, st->delim, st->dlen, st->vals, st->nfields + 1);
    if (!*header_done) {
        *header_done = true;
        if (is_header_again(st, st->vals, st->nfields)) {
            free(raw.s);
            return true;
        }
    }
    step = strchr(st->vals[st->col[st->col[F_JOBID] >= 0 ? F_JOBID : F_JOBIDRAW]], '.') != NULL;
    if (tolerant && step && of_rejected_job(st, st->vals[st->col[st->col[F_JOBID] >= 0 ? F_JOBID : F_JOBIDRAW]])) {
        ok = set_aside(st, &raw, false, error, "line %zu: a step of a job set aside", raw.lineno);
        free(raw.s);
        return ok;
    }
    nsteps = st->job ? st->job->nsteps : 0;
    st->line_off = cur->off;
    ok = data_line(st, tolerant ? &why : error);
    if (ok)
        st->job_end = cur->end;
    if (!ok && tolerant && why.domain == SA_ERR_INPUT) {
        drop_bad_record(st, step, nsteps);
        ok = set_aside(st, &raw, false, error, "%s", why.message);
    } else if (!ok && tolerant && error) {
        *error = why;
    } else if (ok && raw.s && cur->repaired) {
        ok = set_aside(st, &raw, true, error, "line %zu: not UTF-8 text: invalid bytes replaced by U+FFFD",
                       raw.lineno);
    }
    free(raw.s);
    return ok;
}

/*
 * Reads lines: the first non-blank one is the header unless opts->fields is given
 * (then a header that came along anyway is skipped); every other non-blank line is
 * completed (join_lines), counted against the columns and handed to data_line(). With
 * a set-aside callback, a line that cannot be taken is set aside and the parse goes
 * on. The last job is flushed at the end of input.
 */
bool sa_parse_sacct_text(sa_reader_t *r, const sa_sacct_text_opts_t *opts, const sa_sink_t *sink,
                         sa_error_t *error)
{
    src_t src;
    tline_t cur = {0};
    sacct_t st;
    sa_tz_scope_t tz = {0};
    bool ok = false, header_done = false;
    int rc;

    memset(&src, 0, sizeof src);
    sa_lines_init(&src.L, r);
    src.tolerant = sink && sink->on_setaside;
    src.L.skip_long = src.tolerant;
    memset(&st, 0, sizeof st);
    st.sink = sink;
    st.trailing = -1;
    for (int f = 0; f < F_COUNT; f++)
        st.col[f] = -1;
    if (opts && opts->delimiter) {
        if (!*opts->delimiter) {
            sa_error_set(error, SA_ERR_USAGE, 0, "empty sacct delimiter");
            goto done;
        }
        if (!set_delim(&st, opts->delimiter, strlen(opts->delimiter), error))
            goto done;
    }
    if (opts && opts->fields) {
        if (!fields_from_list(&st, opts->fields, error))
            goto done;
    }
    if (opts && !sa_tz_is_utc(opts->tz)) {
        if (!sa_tz_enter(opts->tz, &tz, error))
            goto done;
        st.local = true;
    }
    while ((rc = src_next(&src, &cur, error)) > 0) {
        size_t n;

        st.lineno = cur.lineno;
        if (is_blank(cur.s))
            continue;
        if (cur.cut) {
            if (!set_aside(&st, &cur, false, error, "line %zu: longer than %d bytes (its first %d bytes kept)",
                           cur.lineno, SA_LINES_CAP, SA_LINES_CAP))
                goto done;
            continue;
        }
        if (!st.names) {
            if (src.L.unterminated && !src.have_back) {
                /* sacct ends every line: a header that the input ends in was cut short */
                sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: the input ends inside the header line (cut short?)",
                             cur.lineno);
                goto done;
            }
            if (!(st.hdr_text = malloc(cur.len + 2))) {
                sa_error_nomem(error);
                goto done;
            }
            memcpy(st.hdr_text, cur.s, cur.len);
            memcpy(st.hdr_text + cur.len, "\n", 2);
            st.hdr_len = cur.len + 1;
            if (!header_line(&st, cur.s, cur.len, error))
                goto done;
            header_done = true;
            continue;
        }
        if (!st.delim && !detect_delim_data(&st, cur.s, error))
            goto done;
        if (st.trailing < 0) {
            n = count_fields(&st, cur.s);
            st.trailing = n == st.nfields + 1 && cur.len >= st.dlen &&
                          memcmp(cur.s + cur.len - st.dlen, st.delim, st.dlen) == 0;
            if (!columns_line(&st)) {
                sa_error_nomem(error);
                goto done;
            }
        }
        if (src.tolerant && !join_lines(&st, &src, &cur, st.nfields + (st.trailing == 1 ? 1 : 0), &n, error))
            goto done;
        n = count_fields(&st, cur.s);
        if (!take_data_line(&st, &cur, n, &header_done, error))
            goto done;
    }
    if (rc < 0)
        goto done;
    if (!st.names) {
        sa_error_set(error, SA_ERR_INPUT, 0, "empty sacct output (no header line)");
        goto done;
    }
    ok = flush_job(&st, error);
done:
    sa_tz_leave(&tz);
    sacct_clear(&st);
    sa_lines_clear(&src.L);
    free(cur.s);
    free(src.back.s);
    return ok;
}
