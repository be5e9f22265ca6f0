/*
 * sa_sreport.c - `slurm-report sreport` (sa_sreport.h): sreport's cluster, user and job
 * reports printed as Slurm 22.05's sreport prints them, their figures from the archive:
 *
 * - cluster AccountUtilizationByUser, UserUtilizationByAccount and user TopUsage: usage's
 *   sums (sa_usage.h: the rollups, or the job documents with --from-jobs) by account and
 *   user over the window, every TRES (cpu, mem, billing, gres/gpu); "Used" in percent is
 *   of the cluster's capacity from the time series, as usage -t percent and top count it;
 * - cluster Utilization: utilization --summary's classes (sa_util.h) mapped to sreport's
 *   columns (sa_util_sreport_classes);
 * - job SizesByAccount: the rollups' members (sa_sreport_sizes.c).
 *
 * What the archive does not keep is said in slurm-report(1) (SREPORT): Energy is 0, the
 * account hierarchy is flat (root, then every account), Proper Name is the passwd entry of
 * this host (as sreport's).
 */
#define _GNU_SOURCE /* qsort_r, getpwnam_r */
#include "sa_sreport.h"

#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sa_rcommon.h"
#include "sa_usage.h"
#include "sa_util.h"
#include "sa_vec.h"

/* ---- cluster AccountUtilizationByUser, UserUtilizationByAccount, user TopUsage ------------ */

/* One line's figures: a (cluster, account, user) of usage's groups, or a sum of them. */
typedef struct {
    uint32_t c;
    const char *account, *user; /* user NULL: an account's line */
    int64_t secs[SA_TRES_N];    /* TRES-seconds: GPU, CPU, MiB, billing */
    char *accounts;             /* TopUsage Group: the user's accounts, ", "-joined (owned) */
} line_t;

typedef struct {
    line_t *v;
    size_t n, cap;
} lines_t;

static void lines_clear(lines_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].accounts);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static line_t *lines_add(lines_t *l)
{
    if (!SA_VEC_GROW(l->v, l->cap, l->n, 1, 16))
        return NULL;
    memset(&l->v[l->n], 0, sizeof l->v[l->n]);
    return &l->v[l->n++];
}

/* The TRES-seconds of a usage sum in sreport's units: billing in whole units x seconds. */
static void line_secs(const sa_usum_t *s, int64_t secs[SA_TRES_N])
{
    secs[SA_TRES_GPU] = s->tres[SA_TRES_GPU];
    secs[SA_TRES_CPU] = s->tres[SA_TRES_CPU];
    secs[SA_TRES_MEM] = s->tres[SA_TRES_MEM];
    secs[SA_TRES_BILLING] = (s->tres[SA_TRES_BILLING] + 500) / 1000;
}

/* What a report prints of the usage: its request, sums, capacity and lines. */
typedef struct {
    const sa_sreport_req_t *r;
    sa_usage_t u;
    lines_t lines;
    sa_srfield_t *f;
    size_t nf;
    sa_srprint_t p;
} ureport_t;

/* The cluster's capacity in TRES-seconds of t (0 when not known: sreport then divides by 1). */
static uint64_t capacity(const ureport_t *ur, uint32_t c, sa_rtres_t t)
{
    double cap = ur->u.cap_s && c < ur->u.s.nclusters ? ur->u.cap_s[c * SA_TRES_N + t] : -1;
    return cap > 0 ? (uint64_t)llround(cap) : 0;
}

/* The passwd entry's first GECOS field of user (sreport's Proper Name), or NULL. */
static const char *proper_name(const char *user, char *buf, size_t n)
{
    struct passwd pw, *res = NULL;
    char tmp[4096];

    if (!user || getpwnam_r(user, &pw, tmp, sizeof tmp, &res) != 0 || !res || !res->pw_gecos)
        return NULL;
    snprintf(buf, n, "%s", res->pw_gecos);
    buf[strcspn(buf, ",")] = '\0';
    return buf;
}

/* One line per requested TRES of l (cluster_reports.c _cluster_account_by_user_tres_report and kin). */
static void print_line(const ureport_t *ur, const line_t *l)
{
    const sa_sreport_req_t *r = ur->r;
    const char *cluster = sa_rintern_str(&ur->u.s.names, l->c);

    for (size_t t = 0; t < r->ntres; t++) {
        sa_rtres_t tr = r->tres[t];
        for (size_t i = 0; i < ur->nf; i++) {
            const sa_srfield_t *f = &ur->f[i];
            bool last = i + 1 == ur->nf;
            char proper[256], acct[512];
            switch (f->type) {
            case SR_F_CLUSTER: sa_srprint_str(&ur->p, f, cluster, last); break;
            case SR_F_ACCOUNT:
                if (l->accounts)
                    sa_srprint_str(&ur->p, f, l->accounts, last);
                else if (r->tree && r->kind == SA_SR_ACCOUNT_BY_USER) {
                    /* the flat tree: root, an account one deeper, its users under it */
                    int depth = strcmp(l->account, "root") == 0 ? (l->user ? 1 : 0) : (l->user ? 2 : 1);
                    snprintf(acct, sizeof acct, "%*s%s", depth, "", l->account);
                    sa_srprint_str(&ur->p, f, acct, last);
                } else
                    sa_srprint_str(&ur->p, f, l->account, last);
                break;
            case SR_F_LOGIN: sa_srprint_str(&ur->p, f, l->user, last); break;
            case SR_F_PROPER: sa_srprint_str(&ur->p, f, proper_name(l->user, proper, sizeof proper), last); break;
            case SR_F_USED:
                sa_srprint_time(&ur->p, f, (uint64_t)l->secs[tr], capacity(ur, l->c, tr), last);
                break;
            case SR_F_ENERGY: sa_srprint_time(&ur->p, f, 0, 0, last); break;
            case SR_F_TRES_NAME: sa_srprint_str(&ur->p, f, sa_rtres_name(tr), last); break;
            default: sa_sreport_none(&ur->p, f, last); break;
            }
        }
        sa_srprint_eol(&ur->p);
    }
}

/* Lines of one (cluster, account, user) group of usage each (groups: usage's, by account and user). */
static bool group_lines(ureport_t *ur, sa_error_t *error)
{
    const sa_sreport_req_t *r = ur->r;
    size_t *order = NULL, ng = 0;
    sa_ugroup_t *g = NULL;
    bool ok = true;

    if (!sa_usage_groups(&ur->u, SA_BY_ACCOUNT | SA_BY_USER, &order, &g, &ng, error))
        return false;
    for (size_t i = 0; ok && i < ng; i++) {
        const char *a = sa_rintern_str(&ur->u.s.names, g[i].k.a), *us = sa_rintern_str(&ur->u.s.names, g[i].k.u);
        line_t *l;
        /* Accounts= names accounts with their sub-accounts: root's are all */
        if ((r->accounts.n && !sa_strv_contains(&r->accounts, a) && !sa_strv_contains(&r->accounts, "root")) ||
            (r->users.n && !sa_strv_contains(&r->users, us)))
            continue;
        if (!(l = lines_add(&ur->lines))) {
            ok = sa_error_nomem(error);
            break;
        }
        l->c = g[i].k.c;
        l->account = a;
        l->user = us;
        line_secs(&g[i].window, l->secs);
    }
    free(order);
    free(g);
    return ok;
}

/* sreport's sort_user_dec: the sort TRES's use, most first, then the user's name (then the account). */
static int user_cmp(const void *x, const void *y, void *ctx)
{
    const line_t *a = x, *b = y;
    sa_rtres_t t = *(const sa_rtres_t *)ctx;
    int c;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    if (a->secs[t] != b->secs[t])
        return a->secs[t] > b->secs[t] ? -1 : 1;
    if ((c = strcmp(a->user, b->user)))
        return c;
    return strcmp(a->account, b->account);
}

/* The hierarchy's order, flat: the cluster, root's line, root's users, then each account and its users. */
static int tree_cmp(const void *x, const void *y, void *ctx)
{
    const line_t *a = x, *b = y;
    bool ra = strcmp(a->account, "root") == 0, rb = strcmp(b->account, "root") == 0;
    int c;
    (void)ctx;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    if (ra != rb)
        return ra ? -1 : 1;
    if ((c = strcmp(a->account, b->account)))
        return c;
    if (!a->user != !b->user)
        return !a->user ? -1 : 1;
    return a->user ? strcmp(a->user, b->user) : 0;
}

/* The index of the account line (no user) of cluster c and account among lines [from, n), or SIZE_MAX. */
static size_t account_line(const lines_t *l, size_t from, uint32_t c, const char *account)
{
    for (size_t k = from; k < l->n; k++) {
        if (l->v[k].c == c && !l->v[k].user && strcmp(l->v[k].account, account) == 0)
            return k;
    }
    return SIZE_MAX;
}

/* Adds secs to the account line of c and account (made when missing, after the lines [0, nusers)). */
static bool add_to_account(lines_t *l, size_t nusers, uint32_t c, const char *account, const int64_t *secs)
{
    size_t k = account_line(l, nusers, c, account);
    line_t *a;

    if (k == SIZE_MAX) {
        if (!(a = lines_add(l)))
            return false;
        a->c = c;
        a->account = account;
    } else {
        a = &l->v[k];
    }
    for (int t = 0; t < SA_TRES_N; t++)
        a->secs[t] += secs[t];
    return true;
}

/*
 * AccountUtilizationByUser's lines: per cluster the root line (every account's use), then
 * each account's line and its users' (with Accounts=, the accounts named and their users;
 * with Users=, the users' lines alone), in the order of the flat hierarchy.
 */
static bool account_lines(ureport_t *ur, sa_error_t *error)
{
    const sa_sreport_req_t *r = ur->r;
    size_t nusers = ur->lines.n;
    bool whole = !r->accounts.n || sa_strv_contains(&r->accounts, "root");

    for (size_t i = 0; !r->users.n && i < nusers; i++) {
        line_t l = ur->lines.v[i]; /* a copy: adding lines may move them */
        if ((strcmp(l.account, "root") != 0 && !add_to_account(&ur->lines, nusers, l.c, l.account, l.secs)) ||
            (whole && !add_to_account(&ur->lines, nusers, l.c, "root", l.secs)))
            return sa_error_nomem(error);
    }
    if (ur->lines.n > 1)
        qsort_r(ur->lines.v, ur->lines.n, sizeof *ur->lines.v, tree_cmp, NULL);
    return true;
}

/* TopUsage Group: one line per user and cluster, its accounts joined by ", " in name order. */
static bool group_users(ureport_t *ur, sa_error_t *error)
{
    lines_t out = {0};

    for (size_t i = 0; i < ur->lines.n; i++) {
        const line_t *l = &ur->lines.v[i];
        line_t *m = NULL;
        for (size_t k = 0; k < out.n && !m; k++) {
            if (out.v[k].c == l->c && strcmp(out.v[k].user, l->user) == 0)
                m = &out.v[k];
        }
        if (!m) {
            if (!(m = lines_add(&out))) {
                lines_clear(&out);
                return sa_error_nomem(error);
            }
            m->c = l->c;
            m->user = l->user;
            m->account = l->account;
            m->accounts = strdup(l->account);
        } else {
            char *j = sa_rprintf("%s, %s", m->accounts ? m->accounts : "", l->account);
            free(m->accounts);
            m->accounts = j;
        }
        if (!m->accounts) {
            lines_clear(&out);
            return sa_error_nomem(error);
        }
        for (int t = 0; t < SA_TRES_N; t++)
            m->secs[t] += l->secs[t];
    }
    lines_clear(&ur->lines);
    ur->lines = out;
    return true;
}

/*
 * The width of the Used (and Energy) column: sreport_set_usage_column_width, from each
 * cluster's first line (the root line, or the user with the most use), or, for a cluster
 * without lines, its capacity.
 */
static void usage_widths(ureport_t *ur)
{
    const sa_sreport_req_t *r = ur->r;
    uint64_t max = 0;
    bool energy = false;

    for (size_t i = 0; i < ur->nf; i++)
        energy = energy || ur->f[i].type == SR_F_ENERGY;
    for (uint32_t c = 0; c < ur->u.s.nclusters; c++) {
        const line_t *first = NULL;
        for (size_t i = 0; !first && i < ur->lines.n; i++) {
            if (ur->lines.v[i].c == c)
                first = &ur->lines.v[i];
        }
        for (size_t t = 0; t < (energy ? 1 : r->ntres); t++) {
            sa_rtres_t tr = energy ? SA_TRES_CPU : r->tres[t];
            uint64_t v = first ? (uint64_t)first->secs[tr] : capacity(ur, c, tr);
            if (v > max)
                max = v;
        }
    }
    for (size_t i = 0; i < ur->nf; i++) {
        if (ur->f[i].type == SR_F_USED)
            ur->f[i].len = sa_srprint_usage_width(r->time, max);
        else if (ur->f[i].type == SR_F_ENERGY)
            ur->f[i].len = sa_srprint_usage_width(r->time, 0);
    }
}

/* Reads usage's sums for the request (capacity too: percent needs it, and the widths of an empty cluster). */
static bool read_usage(ureport_t *ur, const sa_report_opts_t *q, sa_rdb_t **db, FILE *warn, sa_error_t *error)
{
    return sa_usage_load(&ur->u, q, error) && (*db = sa_report_connect(q, error)) &&
           sa_usage_prepare(&ur->u, *db, warn, error) && sa_usage_capacity(&ur->u, false, NULL, error) &&
           sa_usage_read(*db, &ur->u, error);
}

/* -t percent and kin divide by the capacity: known for every TRES of every cluster that has a line. */
static bool percent_known(const ureport_t *ur, sa_error_t *error)
{
    const sa_sreport_req_t *r = ur->r;

    for (size_t i = 0; sa_sreport_percent(r->time) && i < ur->lines.n; i++) {
        uint32_t c = ur->lines.v[i].c;
        for (size_t t = 0; t < r->ntres; t++) {
            if (ur->u.cap_s[c * SA_TRES_N + r->tres[t]] < 0) {
                sa_error_set(error, SA_ERR_USAGE, 0,
                             "sreport -t %s: the capacity of %s on cluster %s is not known (percent is of the "
                             "capacity, which the node state time series holds of CPUs and GPUs)",
                             r->time == SA_SRT_PERCENT ? "Percent" : "...Per", sa_rtres_name(r->tres[t]),
                             sa_rintern_str(&ur->u.s.names, c));
                return false;
            }
        }
    }
    return true;
}

bool sa_sreport_usage_report(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                             sa_error_t *error)
{
    static const char *const titles[] = {[SA_SR_ACCOUNT_BY_USER] = "Cluster/Account/User Utilization",
                                         [SA_SR_USER_BY_ACCOUNT] = "Cluster/User/Account Utilization"};
    sa_report_opts_t q;
    ureport_t ur;
    sa_rdb_t *db = NULL;
    bool ok = false;

    memset(&ur, 0, sizeof ur);
    ur.r = r;
    ur.p = (sa_srprint_t){out, r->parsable, r->time};
    sa_sreport_opts(o, r, &q);
    if (!sa_sreport_fields(r, &ur.f, &ur.nf, error) || !read_usage(&ur, &q, &db, warn, error) ||
        !group_lines(&ur, error) || !percent_known(&ur, error))
        goto done;
    if (r->kind == SA_SR_ACCOUNT_BY_USER) {
        if (!account_lines(&ur, error))
            goto done;
    } else {
        /* 22.05 orders UserUtilizationByAccount by CPUs, TopUsage by the first TRES -T names */
        sa_rtres_t sort = r->kind == SA_SR_TOP_USAGE ? r->tres[0] : SA_TRES_CPU;
        if (r->kind == SA_SR_TOP_USAGE && r->group && !group_users(&ur, error))
            goto done;
        if (ur.lines.n > 1)
            qsort_r(ur.lines.v, ur.lines.n, sizeof *ur.lines.v, user_cmp, &sort);
    }
    if (r->kind == SA_SR_TOP_USAGE) {
        char title[64];
        snprintf(title, sizeof title, "Top %u Users", r->top_count);
        sa_sreport_head(r, &ur.p, title, true);
    } else {
        sa_sreport_head(r, &ur.p, titles[r->kind], true);
    }
    sa_sreport_usage_line(r, &ur.p);
    if (!r->no_header)
        sa_srprint_rule(&ur.p);
    usage_widths(&ur);
    if (!r->no_header)
        sa_srprint_titles(&ur.p, ur.f, ur.nf);
    for (size_t i = 0, n = 0; i < ur.lines.n; i++) {
        n = i && ur.lines.v[i].c == ur.lines.v[i - 1].c ? n + 1 : 1;
        if (r->kind != SA_SR_TOP_USAGE || n <= r->top_count)
            print_line(&ur, &ur.lines.v[i]);
    }
    ok = true;
done:
    lines_clear(&ur.lines);
    free(ur.f);
    sa_usage_clear(&ur.u);
    sa_rdb_close(db);
    return ok;
}

bool sa_report_sreport(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    const sa_sreport_req_t *r = o->sreport;

    if (!r) {
        sa_error_set(error, SA_ERR_USAGE, 0, "sreport needs a report: slurm-report sreport cluster Utilization ...");
        return false;
    }
    switch (r->kind) {
    case SA_SR_UTILIZATION: return sa_sreport_utilization(o, r, out, warn, error);
    case SA_SR_SIZES_BY_ACCOUNT: return sa_sreport_sizes(o, r, out, warn, error);
    default: return sa_sreport_usage_report(o, r, out, warn, error);
    }
}
