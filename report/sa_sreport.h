/*
 * sa_sreport.h - `slurm-report sreport`: sreport's own reports, in sreport's grammar and
 * with sreport's text (header lines, column titles and widths, -p/-P, -n, -t), answered
 * from the archive instead of slurmdbd (issue 32, item 5). Internal to report/.
 *
 *   sa_sreport_parse.c   the grammar: sreport's -t and -T values, the report words
 *                        (`cluster AccountUtilizationByUser`, ...) and their conditions
 *                        (Start=, End=, Format=, Users=, ...), and the window as sreport
 *                        rounds it; pure, no I/O
 *   sa_sreport_print.c   Slurm's print_fields: the header lines, the titles and dashes,
 *                        padded, cut and '|'-separated cells, sreport's time strings
 *   sa_sreport.c         the reports: the cluster and user reports from usage's sums
 *                        (sa_usage.h), cluster Utilization from utilization's classes
 *                        (sa_util.h), job SizesByAccount from the rollups' members
 *
 * The text is Slurm 22.05's sreport (src/sreport/, src/common/print_fields.c), with two
 * differences said in slurm-report(1): times are UTC (sreport's are local), and every
 * number is the archive's (runs counted to the cluster's last observation, where sreport
 * counts the hours slurmdbd has rolled up).
 */
#ifndef SA_SREPORT_H
#define SA_SREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"
#include "sa_model.h"
#include "sa_report.h"

/* The reports answered. */
typedef enum {
    SA_SR_ACCOUNT_BY_USER = 0, /* cluster AccountUtilizationByUser */
    SA_SR_USER_BY_ACCOUNT,     /* cluster UserUtilizationByAccount */
    SA_SR_UTILIZATION,         /* cluster Utilization */
    SA_SR_TOP_USAGE,           /* user TopUsage */
    SA_SR_SIZES_BY_ACCOUNT,    /* job SizesByAccount */
} sa_sreport_kind_t;

/* sreport's -t: how a time is printed (slurmdb_report_time_format_t). */
typedef enum {
    SA_SRT_SECS = 0,
    SA_SRT_MINS,
    SA_SRT_HOURS,
    SA_SRT_PERCENT,
    SA_SRT_SECS_PER,
    SA_SRT_MINS_PER,
    SA_SRT_HOURS_PER,
} sa_srtime_t;

/* Output: sreport's print_fields_parsable_print. */
typedef enum { SA_SRP_TABLE = 0, SA_SRP_ENDING, SA_SRP_NO_ENDING } sa_srparsable_t;

/* One Format= item: its name as given (without %N) and the width after it (0: none). */
typedef struct {
    char *name;
    int width;
} sa_srformat_t;

/* A parsed sreport command line: what `slurm-report sreport` answers. */
typedef struct sa_sreport_req {
    sa_sreport_kind_t kind;
    sa_srtime_t time;            /* -t (default Minutes) */
    sa_srparsable_t parsable;    /* -p, -P */
    bool no_header;              /* -n */
    bool tres_given;             /* -T (or SREPORT_TRES): the TRES Name column, "TRES" in the unit line */
    char *tres_str;              /* -T as given (job reports print it) */
    sa_rtres_t tres[SA_TRES_N];  /* the TRES reported, in the order -T names them (cpu) */
    size_t ntres;
    bool all_clusters;           /* -a, All_Clusters */
    sa_strv_t clusters;          /* -M, Clusters=, a bare word of Utilization and the job reports */
    sa_strv_t accounts, users, partitions;
    sa_srformat_t *format;       /* Format= items, in order (nformat 0: the report's default) */
    size_t nformat, formatcap;
    bool start_given, end_given;
    int64_t start, end;          /* the window as sreport reports it: rounded to hours ([start, end)) */
    /* user TopUsage */
    uint32_t top_count;          /* TopCount= (10; UINT32_MAX for a negative one, as sreport) */
    bool group;                  /* Group: a user's accounts on one line */
    /* cluster AccountUtilizationByUser */
    bool tree;                   /* Tree */
    /* job SizesByAccount */
    int64_t *grouping;           /* Grouping= sizes (default 50,250,500,1000) */
    size_t ngrouping, groupingcap;
    bool individual;             /* Grouping=individual: a column per job size found */
    bool print_job_count;        /* PrintJobCount */
    bool flat_view;              /* FlatView: a line per account the jobs ran under */
    bool acct_as_parent;         /* AcctAsParent: a line per account under root (the default: one line, root) */
} sa_sreport_req_t;

void sa_sreport_req_init(sa_sreport_req_t *r);
void sa_sreport_req_clear(sa_sreport_req_t *r);

/*
 * -t: sreport's time formats, case-insensitive, abbreviated as sreport accepts them
 * (SecPer, MinPer, HourPer: 6 characters at least; Seconds, Minutes, Hours, Percent: any
 * prefix). False when s is none of them.
 */
bool sa_sreport_time_format(const char *s, sa_srtime_t *t);
/* The unit line's words of t: "Minutes", "Hours/Percentage of Total", ... */
const char *sa_sreport_time_name(sa_srtime_t t);

/*
 * -T: a comma list of sreport's TRES names (cpu, mem, billing, gres/gpu; case-insensitive)
 * into r (tres_given, tres_str, tres[] in the order given, each once). SA_ERR_USAGE on a TRES the
 * archive does not keep (energy, node, gres/gpu:TYPE, ALL, ...) or an empty list.
 */
bool sa_sreport_set_tres(sa_sreport_req_t *r, const char *s, sa_error_t *error);

/* Format=: each item "name[%N]" appended to r->format (sreport: atoi of what follows the '%'; 0: the default width). */
bool sa_sreport_format(sa_sreport_req_t *r, const char *s, sa_error_t *error);

/*
 * The command after the options: a report type and report (`cluster Utilization`, as
 * sreport abbreviates them) and its conditions (KEY=VALUE and flag words, as sreport
 * reads them for that report), then the window: Start= and End= read as sreport reads
 * them (sa_time_parse, relative to now; End= at most now), rounded to whole hours as
 * slurmdb_report_set_start_end_time rounds them (in UTC), by default the day before
 * now's. SA_ERR_USAGE, one line, on a report or condition sreport does not know, or one
 * the archive cannot answer (AccountUtilizationByQOS, Nodes=, Wckeys=, ...).
 */
bool sa_sreport_command(sa_sreport_req_t *r, int argc, char *const *argv, int64_t now, sa_error_t *error);

/*
 * sreport's window: *start and *end (given or not) rounded to the nearest hour (30
 * seconds round a minute up, 30 minutes an hour), the defaults the day before now's
 * (00:00 to 00:00), and at least an hour long. UTC.
 */
void sa_sreport_window(bool start_given, int64_t *start, bool end_given, int64_t *end, int64_t now);

/* ---- printing (sa_sreport_print.c): Slurm's print_fields, as sreport uses it ------------ */

/* A column: its title and width (negative: left-justified), as print_field_t has them. */
typedef struct {
    int type;          /* the report's own column id */
    const char *name;  /* the title */
    int len;
} sa_srfield_t;

/* Where and how a report prints. */
typedef struct {
    FILE *out;
    sa_srparsable_t parsable;
    sa_srtime_t time;
} sa_srprint_t;

/* sreport's rule of 80 dashes, and a header line between two of them (caller's text). */
void sa_srprint_rule(const sa_srprint_t *p);
/* The column titles (padded and cut to each width) and, in a table, a line of dashes under each. */
void sa_srprint_titles(const sa_srprint_t *p, const sa_srfield_t *f, size_t n);
/* A string cell (NULL: blank): padded to the width, cut with '+' as its last character when longer. */
void sa_srprint_str(const sa_srprint_t *p, const sa_srfield_t *f, const char *s, bool last);
/* An unsigned cell (print_fields_uint): right- or left-justified to the width. */
void sa_srprint_uint(const sa_srprint_t *p, const sa_srfield_t *f, uint64_t v, bool last);
/*
 * A time cell (slurmdb_report_print_time): value seconds in the -t format, percent of
 * total (1 when 0) where the format has one; padded and cut to the width without '+'.
 */
void sa_srprint_time(const sa_srprint_t *p, const sa_srfield_t *f, uint64_t value, uint64_t total, bool last);
/* The end of a row. */
void sa_srprint_eol(const sa_srprint_t *p);
/* A time cell's text (as sa_srprint_time prints it) into buf. */
const char *sa_srprint_time_text(sa_srtime_t t, uint64_t value, uint64_t total, char *buf, size_t n);
/* The width of a usage column whose largest value is number seconds (sreport_set_usage_col_width). */
int sa_srprint_usage_width(sa_srtime_t t, uint64_t number);
/* A time as slurm_make_time_str prints it with its default format: YYYY-MM-DDTHH:MM:SS (UTC here). */
const char *sa_srprint_date(int64_t t, char *buf, size_t n);

/* ---- the reports (sa_sreport.c, sa_sreport_util.c, sa_sreport_sizes.c) ----------------- */

/* The columns sreport prints (print_field_t types). */
enum {
    SR_F_CLUSTER, SR_F_ACCOUNT, SR_F_LOGIN, SR_F_PROPER, SR_F_USED, SR_F_ENERGY, SR_F_TRES_NAME, SR_F_TRES_COUNT,
    SR_F_ALLOC, SR_F_DOWN, SR_F_PDOWN, SR_F_IDLE, SR_F_PLANNED, SR_F_OVER, SR_F_REPORTED, SR_F_WCKEY, SR_F_USER,
    SR_F_DURATION, SR_F_JOB_COUNT, SR_F_NODE_COUNT, SR_F_SIZE,
};

/*
 * The columns of r's report: its Format= (each word read as sreport reads that report's,
 * with its %N width), else sreport's default for the report. *out (caller frees) gets *n
 * columns. SA_ERR_USAGE on a word sreport does not know for the report.
 */
bool sa_sreport_fields(const sa_sreport_req_t *r, sa_srfield_t **out, size_t *n, sa_error_t *error);
/*
 * A column the report has nothing for (Format= may name any of the report type's): what
 * sreport prints for it, a time or count of 0, a Duration of 00:00:00, else a blank.
 */
void sa_sreport_none(const sa_srprint_t *p, const sa_srfield_t *f, bool last);
/* The report's first header lines: the rule and "TITLE START - END[ (N secs)]" (nothing under -n). */
void sa_sreport_head(const sa_sreport_req_t *r, const sa_srprint_t *p, const char *title, bool secs);
/* "Usage reported in CPU Minutes" (TRES with -T; percent: "Usage reported in Percentage of Total"). */
void sa_sreport_usage_line(const sa_sreport_req_t *r, const sa_srprint_t *p);
/*
 * The archive's options q for the request: o's, with the request's clusters and window
 * and every TRES; lists borrowed (never clear q).
 */
void sa_sreport_opts(const sa_report_opts_t *o, const sa_sreport_req_t *r, sa_report_opts_t *q);
/* True when -t prints a percent (Percent, SecPer, MinPer, HourPer). */
bool sa_sreport_percent(sa_srtime_t t);
/* Each report. */
bool sa_sreport_usage_report(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                             sa_error_t *error);
bool sa_sreport_utilization(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                            sa_error_t *error);
bool sa_sreport_sizes(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                      sa_error_t *error);

#endif
