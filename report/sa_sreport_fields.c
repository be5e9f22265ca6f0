/*
 * sa_sreport_fields.c - the columns of slurm-report sreport's reports (sa_sreport.h): the
 * Format= words each report of Slurm 22.05's sreport knows, their titles and widths, and
 * what every report prints with them (the header lines, a column the report has nothing
 * for, the options a report's request gives the usage and utilization reports it reads).
 * sa_sreport.c (the usage reports), sa_sreport_util.c (cluster Utilization) and
 * sa_sreport_sizes.c (job SizesByAccount) print with these.
 */
#include "sa_sreport.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sa_rcommon.h"
#include "sa_usage.h"
#include "sa_util.h"
#include "sa_vec.h"

/* ---- the columns ----------------------------------------------------------------------- */

/* A column sreport knows for a report: the Format= word (and the least of it), its title and widths. */
typedef struct {
    const char *word;
    size_t min;
    int type;
    const char *title;
    int len, len_per; /* the width, and with -t SecPer, MinPer, HourPer */
} fdef_t;

/* cluster_reports.c _setup_print_fields_list (22.05), in its order of tests */
static const fdef_t cluster_fields[] = {
    {"Accounts", 2, SR_F_ACCOUNT, "Account", 15, 15},
    {"allocated", 2, SR_F_ALLOC, "Allocated", 12, 20},
    {"Cluster", 2, SR_F_CLUSTER, "Cluster", 9, 9},
    {"down", 1, SR_F_DOWN, "Down", 10, 18},
    {"idle", 1, SR_F_IDLE, "Idle", 12, 20},
    {"Login", 1, SR_F_LOGIN, "Login", 9, 9},
    {"overcommitted", 1, SR_F_OVER, "Over Comm", 9, 18},
    {"PlannedDown", 2, SR_F_PDOWN, "PLND Down", 10, 18}, /* 22.05: "planned" is read as PlannedDown too */
    {"reserved", 3, SR_F_PLANNED, "Planned", 9, 18},
    {"Proper", 2, SR_F_PROPER, "Proper Name", 15, 15},
    {"reported", 3, SR_F_REPORTED, "Reported", 12, 20},
    {"TresCount", 5, SR_F_TRES_COUNT, "TRES Count", 10, 10},
    {"cpucount", 2, SR_F_TRES_COUNT, "TRES Count", 10, 10},
    {"count", 2, SR_F_TRES_COUNT, "TRES Count", 10, 10},
    {"TresName", 5, SR_F_TRES_NAME, "TRES Name", 14, 14},
    {"Used", 1, SR_F_USED, "Used", 10, 18},
    {"WCKey", 2, SR_F_WCKEY, "WCKey", 15, 15},
    {"Energy", 1, SR_F_ENERGY, "Energy", 10, 18},
};

/* user_reports.c */
static const fdef_t user_fields[] = {
    {"Accounts", 1, SR_F_ACCOUNT, "Account", 15, 15},   {"Cluster", 1, SR_F_CLUSTER, "Cluster", 9, 9},
    {"Energy", 1, SR_F_ENERGY, "Energy", 10, 18},       {"Login", 1, SR_F_LOGIN, "Login", 9, 9},
    {"Proper", 1, SR_F_PROPER, "Proper Name", 15, 15},  {"TresName", 5, SR_F_TRES_NAME, "TRES Name", 14, 14},
    {"Used", 1, SR_F_USED, "Used", 10, 18},
};

/* job_reports.c */
static const fdef_t job_fields[] = {
    {"Account", 1, SR_F_ACCOUNT, "Account", 9, 9},      {"Acct", 4, SR_F_ACCOUNT, "Account", 9, 9},
    {"Cluster", 2, SR_F_CLUSTER, "Cluster", 9, 9},      {"Duration", 1, SR_F_DURATION, "Duration", 12, 12},
    {"JobCount", 2, SR_F_JOB_COUNT, "Job Count", 9, 9}, {"NodeCount", 2, SR_F_NODE_COUNT, "Node Count", 9, 9},
    {"TresCount", 5, SR_F_TRES_COUNT, "TRES Count", 10, 10}, {"CpuCount", 2, SR_F_TRES_COUNT, "TRES Count", 10, 10},
    {"count", 2, SR_F_TRES_COUNT, "TRES Count", 10, 10}, {"User", 1, SR_F_USER, "User", 9, 9},
    {"Wckey", 1, SR_F_WCKEY, "Wckey", 9, 9},
};

/* sreport's default Format= of each report (with -T: the TRES Name column, without: Energy). */
static const char *default_format(const sa_sreport_req_t *r)
{
    switch (r->kind) {
    case SA_SR_ACCOUNT_BY_USER:
        return r->tres_given ? "Cluster,Ac,Login,Proper,TresName,Used" : "Cluster,Ac,Login,Proper,Used,Energy";
    case SA_SR_USER_BY_ACCOUNT:
        return r->tres_given ? "Cluster,Login,Proper,Ac,TresName,Used" : "Cluster,Login,Proper,Ac,Used,Energy";
    case SA_SR_UTILIZATION: return r->tres_given ? "Cl,TresName,al,d,planned,i,res,rep" : "Cl,al,d,planned,i,res,rep";
    case SA_SR_TOP_USAGE: return r->tres_given ? "Cl,L,P,A,TresName,Used" : "Cl,L,P,A,U,Energy";
    default: return "Cl,a";
    }
}

/* Case-insensitive prefix of at least min characters (sreport's strncasecmp with MAX(len, min)). */
static bool field_word(const char *s, const char *w, size_t min)
{
    size_t n = strlen(s);
    return n <= strlen(w) && strncasecmp(s, w, n > min ? n : min) == 0;
}

bool sa_sreport_fields(const sa_sreport_req_t *r, sa_srfield_t **out, size_t *n, sa_error_t *error)
{
    const fdef_t *defs = r->kind == SA_SR_TOP_USAGE ? user_fields
                         : r->kind == SA_SR_SIZES_BY_ACCOUNT ? job_fields : cluster_fields;
    size_t ndefs = r->kind == SA_SR_TOP_USAGE ? sizeof user_fields / sizeof *user_fields
                   : r->kind == SA_SR_SIZES_BY_ACCOUNT ? sizeof job_fields / sizeof *job_fields
                                                       : sizeof cluster_fields / sizeof *cluster_fields;
    bool per = r->time == SA_SRT_SECS_PER || r->time == SA_SRT_MINS_PER || r->time == SA_SRT_HOURS_PER;
    sa_sreport_req_t dflt;
    const sa_srformat_t *fmt = r->format;
    size_t nfmt = r->nformat;
    bool ok = true;

    *out = NULL;
    *n = 0;
    sa_sreport_req_init(&dflt);
    if (!nfmt) {
        if (!sa_sreport_format(&dflt, default_format(r), error)) {
            sa_sreport_req_clear(&dflt);
            return false;
        }
        fmt = dflt.format;
        nfmt = dflt.nformat;
    }
    if (!(*out = calloc(nfmt + 1, sizeof **out)))
        ok = sa_error_nomem(error);
    for (size_t i = 0; ok && i < nfmt; i++) {
        const fdef_t *d = NULL;
        for (size_t k = 0; !d && k < ndefs; k++) {
            if (fmt[i].name && field_word(fmt[i].name, defs[k].word, defs[k].min))
                d = &defs[k];
        }
        if (!d) {
            sa_error_set(error, SA_ERR_USAGE, 0, "sreport Format=: unknown field '%.80s' for this report",
                         fmt[i].name ? fmt[i].name : "");
            ok = false;
            break;
        }
        (*out)[*n] = (sa_srfield_t){d->type, d->title, per ? d->len_per : d->len};
        if (d->type == SR_F_ACCOUNT && r->tree && r->kind == SA_SR_ACCOUNT_BY_USER)
            (*out)[*n].len = -20;
        if (fmt[i].width)
            (*out)[*n].len = fmt[i].width;
        (*n)++;
    }
    sa_sreport_req_clear(&dflt);
    if (!ok) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return ok;
}

void sa_sreport_none(const sa_srprint_t *p, const sa_srfield_t *f, bool last)
{
    switch (f->type) {
    case SR_F_USED: case SR_F_ENERGY: case SR_F_ALLOC: case SR_F_DOWN: case SR_F_PDOWN: case SR_F_IDLE:
    case SR_F_PLANNED: case SR_F_OVER: case SR_F_REPORTED:
        sa_srprint_time(p, f, 0, 0, last);
        break;
    case SR_F_TRES_COUNT: case SR_F_JOB_COUNT: case SR_F_NODE_COUNT: sa_srprint_uint(p, f, 0, last); break;
    case SR_F_DURATION: sa_srprint_str(p, f, "00:00:00", last); break;
    default: sa_srprint_str(p, f, NULL, last); break;
    }
}

/* ---- the header lines --------------------------------------------------------------------- */

void sa_sreport_head(const sa_sreport_req_t *r, const sa_srprint_t *p, const char *title, bool secs)
{
    char a[32], b[32];

    if (r->no_header)
        return;
    sa_srprint_rule(p);
    fprintf(p->out, "%s %s - %s", title, sa_srprint_date(r->start, a, sizeof a),
            sa_srprint_date(r->end - 1, b, sizeof b));
    if (secs)
        fprintf(p->out, " (%d secs)", (int)(r->end - r->start));
    fputc('\n', p->out);
}

void sa_sreport_usage_line(const sa_sreport_req_t *r, const sa_srprint_t *p)
{
    if (r->no_header)
        return;
    if (r->time == SA_SRT_PERCENT)
        fprintf(p->out, "Usage reported in %s\n", sa_sreport_time_name(r->time));
    else
        fprintf(p->out, "Usage reported in %s %s\n", r->tres_given ? "TRES" : "CPU", sa_sreport_time_name(r->time));
}

/* ---- the archive's options for a request -------------------------------------------------- */

void sa_sreport_opts(const sa_report_opts_t *o, const sa_sreport_req_t *r, sa_report_opts_t *q)
{
    *q = *o; /* borrowed: the lists are o's and r's, never cleared through q */
    q->clusters = r->clusters;
    sa_strv_init(&q->accounts);
    sa_strv_init(&q->users);
    q->start = r->start;
    q->end = r->end;
    q->unit = SA_UNIT_GPU_HOURS;
    q->unit_given = true;
    q->format = SA_FMT_TABLE;
    q->allocations_path = NULL;
    q->columns = NULL;
    q->ncolumns = 0;
    q->by = 0;
    /* every TRES: an association with use of any is a line, as in sreport (its use of the others 0) */
    q->tres[0] = SA_TRES_GPU;
    q->tres[1] = SA_TRES_CPU;
    q->tres[2] = SA_TRES_MEM;
    q->tres[3] = SA_TRES_BILLING;
    q->ntres = SA_TRES_N;
}

bool sa_sreport_percent(sa_srtime_t t)
{
    return t == SA_SRT_PERCENT || t == SA_SRT_SECS_PER || t == SA_SRT_MINS_PER || t == SA_SRT_HOURS_PER;
}
