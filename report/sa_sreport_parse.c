/*
 * sa_sreport_parse.c - sreport's grammar (sa_sreport.h): its -t and -T values, the report
 * words and each report's conditions, read as Slurm 22.05's sreport reads them
 * (src/sreport/sreport.c, cluster_reports.c, user_reports.c, job_reports.c): words are
 * case-insensitive and may be abbreviated down to the length sreport compares
 * (`cl ut`, `Start=`, `s=`, `fo=` for a job report's Format), a word without '=' means
 * what sreport makes of it (All_Clusters, Tree, Group, a user or a cluster name), and
 * the window is rounded to whole hours as slurmdb_report_set_start_end_time rounds it.
 * Pure: no I/O.
 */
#include "sa_sreport.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sa_rutil.h"
#include "sa_time.h"
#include "sa_vec.h"

/* Sets *error (SA_ERR_USAGE, the one line printf makes of fmt) and returns false. */
static bool usage_error(sa_error_t *error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool usage_error(sa_error_t *error, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sa_error_set(error, SA_ERR_USAGE, 0, "%s", buf);
    return false;
}

void sa_sreport_req_init(sa_sreport_req_t *r)
{
    memset(r, 0, sizeof *r);
    r->kind = SA_SR_ACCOUNT_BY_USER;
    r->time = SA_SRT_MINS;
    r->top_count = 10;
    r->tres[0] = SA_TRES_CPU;
    r->ntres = 1;
    sa_strv_init(&r->clusters);
    sa_strv_init(&r->accounts);
    sa_strv_init(&r->users);
    sa_strv_init(&r->partitions);
}

void sa_sreport_req_clear(sa_sreport_req_t *r)
{
    if (!r)
        return;
    free(r->tres_str);
    sa_strv_clear(&r->clusters);
    sa_strv_clear(&r->accounts);
    sa_strv_clear(&r->users);
    sa_strv_clear(&r->partitions);
    for (size_t i = 0; i < r->nformat; i++)
        free(r->format[i].name);
    free(r->format);
    free(r->grouping);
    memset(r, 0, sizeof *r);
}

/*
 * sreport's word match, strncasecmp(s, w, MAX(n, min)) == 0 where s has n characters:
 * s is w, or a prefix of it at least min long.
 */
static bool word_is(const char *s, size_t n, const char *w, size_t min)
{
    size_t k = n > min ? n : min;
    for (size_t i = 0; i < k; i++) {
        int a = i < n ? tolower((unsigned char)s[i]) : 0, b = tolower((unsigned char)w[i]);
        if (a != b)
            return false;
        if (!b)
            return true;
    }
    return true;
}

/* strncasecmp(s, w, n) == 0: the first n characters of s are w's (s may go on). */
static bool starts(const char *s, const char *w, size_t n)
{
    return strncasecmp(s, w, n) == 0;
}

static const struct {
    const char *name, *words;
    size_t min;
    sa_srtime_t t;
} time_formats[] = {
    /* in sreport's order of tests: the *Per forms first, 6 characters at least */
    {"SecPer", "Seconds/Percentage of Total", 6, SA_SRT_SECS_PER},
    {"MinPer", "Minutes/Percentage of Total", 6, SA_SRT_MINS_PER},
    {"HourPer", "Hours/Percentage of Total", 6, SA_SRT_HOURS_PER},
    {"Seconds", "Seconds", 1, SA_SRT_SECS},
    {"Minutes", "Minutes", 1, SA_SRT_MINS},
    {"Hours", "Hours", 1, SA_SRT_HOURS},
    {"Percent", "Percentage of Total", 1, SA_SRT_PERCENT},
};

bool sa_sreport_time_format(const char *s, sa_srtime_t *t)
{
    for (size_t i = 0; s && i < sizeof time_formats / sizeof time_formats[0]; i++) {
        if (word_is(s, strlen(s), time_formats[i].name, time_formats[i].min)) {
            *t = time_formats[i].t;
            return true;
        }
    }
    return false;
}

const char *sa_sreport_time_name(sa_srtime_t t)
{
    for (size_t i = 0; i < sizeof time_formats / sizeof time_formats[0]; i++) {
        if (time_formats[i].t == t)
            return time_formats[i].words;
    }
    return "Minutes";
}

bool sa_sreport_set_tres(sa_sreport_req_t *r, const char *s, sa_error_t *error)
{
    sa_rtres_t tres[SA_TRES_N];
    size_t n = 0;
    sa_strv_t v;
    bool ok = true;

    sa_strv_init(&v);
    if (!sa_rlist_split(s, &v))
        return sa_error_nomem(error);
    for (size_t i = 0; ok && i < v.n; i++) {
        sa_rtres_t t;
        bool dup = false;
        if (strcasecmp(v.v[i], "gpu") == 0 || !sa_rtres_parse(v.v[i], &t)) {
            ok = usage_error(error, "sreport -T: the archive keeps cpu, mem, billing and gres/gpu, not '%.100s'",
                             v.v[i]);
            break;
        }
        for (size_t k = 0; k < n; k++)
            dup = dup || tres[k] == t;
        if (!dup)
            tres[n++] = t;
    }
    if (ok && !n)
        ok = usage_error(error, "sreport -T: no TRES given");
    sa_strv_clear(&v);
    if (!ok)
        return false;
    free(r->tres_str);
    if (!(r->tres_str = strdup(s)))
        return sa_error_nomem(error);
    r->tres_given = true;
    r->ntres = n;
    memcpy(r->tres, tres, n * sizeof *tres);
    return true;
}

/* ---- the report words ------------------------------------------------------------------ */

/* Reports sreport has that the archive does not answer: their words and why. */
static bool refuse_report(const char *type, const char *word, sa_error_t *error)
{
    return usage_error(error, "sreport %s %.80s: not answered from the archive (slurm-report sreport answers cluster "
                        "AccountUtilizationByUser, UserUtilizationByAccount, Utilization, user TopUsage and job "
                        "SizesByAccount)",
                        type, word);
}

/*
 * The report of type word t and report word w, matched as sreport's _cluster_rep,
 * _user_rep and _job_rep match them: a cluster report word starting with 'a' is
 * AccountUtilizationByUser (but AccountUtilizationByQOS, Slurm 23.02's, is refused rather
 * than read so), "ua" or the first 18 characters of UserUtilizationByAccount is that one,
 * "ut" Utilization; a user report starting with 't' is TopUsage.
 */
static bool report_words(sa_sreport_req_t *r, const char *t, const char *w, sa_error_t *error)
{
    size_t tn = strlen(t), wn = strlen(w);

    if (word_is(t, tn, "cluster", 2)) {
        if (starts(w, "AccountUtilizationByQ", 21))
            return refuse_report("cluster", w, error);
        if (starts(w, "A", 1))
            r->kind = SA_SR_ACCOUNT_BY_USER;
        else if (starts(w, "UserUtilizationByAccount", 18) || starts(w, "UA", 2))
            r->kind = SA_SR_USER_BY_ACCOUNT;
        else if (starts(w, "UserUtilizationByWckey", 18) || starts(w, "UW", 2))
            return refuse_report("cluster", w, error);
        else if (starts(w, "Utilization", 2))
            r->kind = SA_SR_UTILIZATION;
        else if (starts(w, "WCKeyUtilizationByUser", 1))
            return refuse_report("cluster", w, error);
        else
            return usage_error(error, "sreport cluster: not a valid report '%.80s' (AccountUtilizationByUser, "
                                      "UserUtilizationByAccount, UserUtilizationByWckey, Utilization, "
                                      "WCKeyUtilizationByUser)",
                               w);
        return true;
    }
    if (word_is(t, tn, "user", 1)) {
        if (!starts(w, "Top", 1))
            return usage_error(error, "sreport user: not a valid report '%.80s' (Top)", w);
        r->kind = SA_SR_TOP_USAGE;
        return true;
    }
    if (word_is(t, tn, "job", 1)) {
        if (word_is(w, wn, "SizesByAccount", 1)) {
            r->kind = SA_SR_SIZES_BY_ACCOUNT;
            return true;
        }
        if (word_is(w, wn, "SizesByWcKey", 8) || word_is(w, wn, "SizesByAccountAndWcKey", 15))
            return refuse_report("job", w, error);
        return usage_error(error, "sreport job: not a valid report '%.80s' (SizesByAccount, SizesByAccountAndWcKey, "
                                  "SizesByWckey)",
                           w);
    }
    if (word_is(t, tn, "reservation", 2) || word_is(t, tn, "resv", 2) || word_is(t, tn, "association", 1))
        return refuse_report(t, w, error);
    return usage_error(error, "sreport: invalid keyword '%.80s' (cluster, user, job; then the report)", t);
}

/* ---- the conditions ------------------------------------------------------------------ */

/* A condition: its key (klen characters; 0: a word without '='), and its value. */
typedef struct {
    const char *arg, *val;
    size_t klen;
    bool has_eq;
} cond_t;

static bool key_is(const cond_t *c, const char *w, size_t min)
{
    return c->has_eq && word_is(c->arg, c->klen, w, min);
}

static bool flag_is(const cond_t *c, const char *w, size_t min)
{
    return !c->has_eq && word_is(c->arg, c->klen, w, min);
}

/* Appends a list value's items (sreport's slurm_addto_char_list: commas, a quote ends it, no duplicates). */
static bool add_list(sa_strv_t *v, const char *s, sa_error_t *error)
{
    sa_strv_t items;
    char *copy;
    bool ok = true;

    if (!(copy = strdup(s[0] == '"' || s[0] == '\'' ? s + 1 : s)))
        return sa_error_nomem(error);
    copy[strcspn(copy, "\"'")] = '\0';
    sa_strv_init(&items);
    if (!sa_rlist_split(copy, &items))
        ok = sa_error_nomem(error);
    for (size_t i = 0; ok && i < items.n; i++) {
        for (char *p = items.v[i]; *p; p++)
            *p = (char)tolower((unsigned char)*p); /* slurm_addto_char_list lowers names */
        if (!sa_strv_contains(v, items.v[i]) && !sa_strv_push(v, items.v[i]))
            ok = sa_error_nomem(error);
    }
    sa_strv_clear(&items);
    free(copy);
    return ok;
}

bool sa_sreport_format(sa_sreport_req_t *r, const char *s, sa_error_t *error)
{
    sa_strv_t items;
    bool ok = true;

    sa_strv_init(&items);
    if (!add_list(&items, s, error)) {
        sa_strv_clear(&items);
        return false;
    }
    for (size_t i = 0; ok && i < items.n; i++) {
        sa_srformat_t *f;
        char *pct;
        if (!SA_VEC_GROW(r->format, r->formatcap, r->nformat, 1, 8)) {
            ok = sa_error_nomem(error);
            break;
        }
        f = &r->format[r->nformat];
        if (!(f->name = strdup(items.v[i]))) {
            ok = sa_error_nomem(error);
            break;
        }
        f->width = 0;
        if ((pct = strchr(f->name, '%'))) {
            f->width = atoi(pct + 1);
            *pct = '\0';
        }
        r->nformat++;
    }
    sa_strv_clear(&items);
    return ok;
}

/* Grouping=: sizes, ascending as given ("individual": a column per size found). */
static bool add_grouping(sa_sreport_req_t *r, const char *s, sa_error_t *error)
{
    sa_strv_t items;
    bool ok = true;

    if (strncasecmp(s, "individual", 1) == 0 && (s[0] | 0x20) == 'i') {
        r->individual = true;
        return true;
    }
    sa_strv_init(&items);
    if (!add_list(&items, s, error)) {
        sa_strv_clear(&items);
        return false;
    }
    for (size_t i = 0; ok && i < items.n; i++) {
        char *e;
        long long n = strtoll(items.v[i], &e, 10);
        if (*e || n <= 0 || n > UINT32_MAX) {
            ok = usage_error(error, "sreport Grouping=: expected sizes above 0, got '%.80s'",
                              items.v[i]);
            break;
        }
        if (r->ngrouping && n <= r->grouping[r->ngrouping - 1]) {
            ok = usage_error(error, "sreport Grouping=: sizes must ascend, got '%.80s'", s);
            break;
        }
        if (!SA_VEC_GROW(r->grouping, r->groupingcap, r->ngrouping, 1, 8)) {
            ok = sa_error_nomem(error);
            break;
        }
        r->grouping[r->ngrouping++] = n;
    }
    sa_strv_clear(&items);
    return ok;
}

/* TopCount=: sreport's get_uint (a negative count means all). */
static bool set_top_count(sa_sreport_req_t *r, const char *s, sa_error_t *error)
{
    char *e;
    long long n = strtoll(s, &e, 10);

    if (*e || e == s || n > UINT32_MAX)
        return usage_error(error, "sreport TopCount=: expected a count, got '%.80s'", s);
    r->top_count = n < 0 ? UINT32_MAX : (uint32_t)n;
    return true;
}

static bool set_time(const char *what, const char *s, int64_t now, int64_t *t, bool *given, sa_error_t *error)
{
    sa_error_t e;
    if (!sa_time_parse(s, now, t, &e))
        return usage_error(error, "sreport %s=: %s", what, e.message);
    *given = true;
    return true;
}

static bool unknown_cond(const cond_t *c, sa_error_t *error)
{
    return usage_error(error, "sreport: unknown condition '%.80s' for this report", c->arg);
}

static bool not_answered(const cond_t *c, const char *why, sa_error_t *error)
{
    return usage_error(error, "sreport: condition '%.80s' is not answered from the archive (%s)",
                        c->arg, why);
}

/*
 * The conditions every report reads after its own (Clusters=, End=, Format=, Start=):
 * *done when c is one of them (the return says whether it was read).
 */
static bool common_cond(sa_sreport_req_t *r, const cond_t *c, size_t format_min, int64_t now, bool *done,
                        sa_error_t *error)
{
    *done = true;
    if (key_is(c, "Clusters", 1))
        return add_list(&r->clusters, c->val, error);
    if (key_is(c, "End", 1))
        return set_time("End", c->val, now, &r->end, &r->end_given, error);
    if (key_is(c, "Format", format_min))
        return sa_sreport_format(r, c->val, error);
    if (key_is(c, "Start", 1))
        return set_time("Start", c->val, now, &r->start, &r->start_given, error);
    *done = false;
    return true;
}

/*
 * A condition of the cluster reports but Utilization (sreport's _set_assoc_cond: Tree,
 * QosLevel=) or, top, of user TopUsage (user_reports.c _set_cond: Group, TopCount=); the
 * two read the rest alike, a word alone being a user.
 */
static bool assoc_cond(sa_sreport_req_t *r, const cond_t *c, int64_t now, bool top, sa_error_t *error)
{
    bool done, ok;

    if (flag_is(c, "all_clusters", 1)) {
        r->all_clusters = true;
        return true;
    }
    if (!top && flag_is(c, "Tree", 4)) {
        r->tree = true;
        return true;
    }
    if (top && flag_is(c, "group", 1)) {
        r->group = true;
        return true;
    }
    if (!c->has_eq || key_is(c, "Users", 1))
        return add_list(&r->users, c->val, error);
    if (key_is(c, "Accounts", 2) || key_is(c, "Acct", 4))
        return add_list(&r->accounts, c->val, error);
    ok = common_cond(r, c, 1, now, &done, error);
    if (done)
        return ok;
    if (top && key_is(c, "TopCount", 1))
        return set_top_count(r, c->val, error);
    if (!top && key_is(c, "QosLevel", 1))
        return not_answered(c, "the rollups keep no association's QOS list", error);
    return unknown_cond(c, error);
}

/* A condition of cluster Utilization (sreport's _set_cluster_cond): a word alone names a cluster. */
static bool cluster_cond(sa_sreport_req_t *r, const cond_t *c, int64_t now, sa_error_t *error)
{
    bool done, ok;

    if (flag_is(c, "all_clusters", 1)) {
        r->all_clusters = true;
        return true;
    }
    if (!c->has_eq)
        return add_list(&r->clusters, c->val, error);
    ok = common_cond(r, c, 1, now, &done, error);
    if (done)
        return ok;
    return unknown_cond(c, error);
}

/* A condition of job SizesByAccount (sreport's job_reports.c _set_cond): a word alone names a cluster. */
static bool job_cond(sa_sreport_req_t *r, const cond_t *c, int64_t now, sa_error_t *error)
{
    if (flag_is(c, "all_clusters", 1))
        r->all_clusters = true;
    else if (flag_is(c, "PrintJobCount", 2))
        r->print_job_count = true;
    else if (flag_is(c, "FlatView", 2))
        r->flat_view = true;
    else if (flag_is(c, "AcctAsParent", 2))
        r->acct_as_parent = true;
    else if (!c->has_eq || key_is(c, "Clusters", 1))
        return add_list(&r->clusters, c->val, error);
    else if (key_is(c, "Accounts", 2) || key_is(c, "Acct", 4))
        return add_list(&r->accounts, c->val, error);
    else if (key_is(c, "Associations", 2))
        return not_answered(c, "the archive keeps accounts and users, not association ids", error);
    else if (key_is(c, "End", 1))
        return set_time("End", c->val, now, &r->end, &r->end_given, error);
    else if (key_is(c, "Format", 2))
        return sa_sreport_format(r, c->val, error);
    else if (key_is(c, "Gid", 2))
        return not_answered(c, "the rollups keep no group id", error);
    else if (key_is(c, "grouping", 2))
        return add_grouping(r, c->val, error);
    else if (key_is(c, "Jobs", 1) || key_is(c, "Nodes", 1))
        return not_answered(c, "the rollups keep no job or node names: see `slurm-report jobs`", error);
    else if (key_is(c, "Partitions", 2))
        return add_list(&r->partitions, c->val, error);
    else if (key_is(c, "Start", 1))
        return set_time("Start", c->val, now, &r->start, &r->start_given, error);
    else if (key_is(c, "Users", 1))
        return add_list(&r->users, c->val, error);
    else if (key_is(c, "Wckeys", 2))
        return not_answered(c, "the archive keeps no WCKey", error);
    else
        return unknown_cond(c, error);
    return true;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits arg as sreport's parse_option_end does: the key before the first '=', the value after it ("==" too). */
static void split_cond(const char *arg, cond_t *c)
{
    const char *eq = strchr(arg, '=');
    c->arg = arg;
    c->has_eq = eq != NULL;
    c->klen = eq ? (size_t)(eq - arg) : strlen(arg);
    c->val = eq ? eq + 1 + (eq[1] == '=') : arg;
}

void sa_sreport_window(bool start_given, int64_t *start, bool end_given, int64_t *end, int64_t now)
{
    int64_t midnight = now - ((now % 86400) + 86400) % 86400;

    /* a second from 30 rounds the minute up, a minute from 30 the hour (slurmdb_report_set_start_end_time) */
    if (end_given) {
        int64_t t = *end, sec = ((t % 60) + 60) % 60, min = (((t - sec) % 3600) + 3600) % 3600 / 60;
        int64_t hour = t - sec - 60 * min;
        min += sec >= 30;
        *end = hour + (min >= 30 ? 3600 : 0);
    } else {
        *end = midnight;
    }
    if (start_given) {
        int64_t t = *start, sec = ((t % 60) + 60) % 60, min = (((t - sec) % 3600) + 3600) % 3600 / 60;
        int64_t hour = t - sec - 60 * min;
        min += sec >= 30;
        *start = hour + (min >= 30 ? 3600 : 0);
    } else {
        *start = midnight - 86400;
    }
    if (*end - *start < 3600)
        *end = *start + 3600;
}

bool sa_sreport_command(sa_sreport_req_t *r, int argc, char *const *argv, int64_t now, sa_error_t *error)
{
    if (argc < 2)
        return usage_error(error, "sreport needs a report: cluster AccountUtilizationByUser|UserUtilizationByAccount|"
                                  "Utilization, user TopUsage or job SizesByAccount");
    if (!report_words(r, argv[0], argv[1], error))
        return false;
    for (int i = 2; i < argc; i++) {
        cond_t c;
        bool ok;
        split_cond(argv[i], &c);
        switch (r->kind) {
        case SA_SR_UTILIZATION: ok = cluster_cond(r, &c, now, error); break;
        case SA_SR_TOP_USAGE: ok = assoc_cond(r, &c, now, true, error); break;
        case SA_SR_SIZES_BY_ACCOUNT: ok = job_cond(r, &c, now, error); break;
        default: ok = assoc_cond(r, &c, now, false, error); break;
        }
        if (!ok)
            return false;
    }
    if (r->kind == SA_SR_SIZES_BY_ACCOUNT) {
        /* AcctAsParent: the accounts under the ones named (root's by default) */
        if (r->acct_as_parent && r->accounts.n && !r->flat_view)
            return usage_error(error, "sreport AcctAsParent with Accounts=: the archive keeps no account hierarchy "
                                      "(sacct does not say it): name the accounts, or use FlatView");
        if (r->ntres > 1)
            return usage_error(error, "sreport job reports take a single --tres type: generate a separate report "
                                      "for each TRES type");
        if (!r->ngrouping && !r->individual) {
            static const int64_t dflt[] = {50, 250, 500, 1000};
            if (!SA_VEC_GROW(r->grouping, r->groupingcap, 0, 4, 4))
                return sa_error_nomem(error);
            memcpy(r->grouping, dflt, sizeof dflt);
            r->ngrouping = 4;
        }
    }
    /* End= at most now (sanity_check_endtime), then both rounded to the hour */
    if (r->end_given && r->end > now)
        r->end = now;
    sa_sreport_window(r->start_given, &r->start, r->end_given, &r->end, now);
    /* sreport lists the clusters by name */
    if (r->clusters.n > 1)
        qsort(r->clusters.v, r->clusters.n, sizeof *r->clusters.v, str_cmp);
    return true;
}
