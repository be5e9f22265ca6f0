/*
 * sa_sreport_sizes.c - `slurm-report sreport job SizesByAccount` (sa_sreport.h): the time
 * (or, with PrintJobCount, the number) of the jobs that ran in the window by account and
 * job size, as sreport's job_reports.c and slurmdb's job_report_functions.c count them:
 *
 * - a job is a run (sreport reads slurmdbd's job records with duplicates: each
 *   incarnation of a requeued job is a job of its own); its size is its CPUs, whatever
 *   -T says (slurmdb groups by TRES_CPU: "FIXME: This only works for CPUS now"; with -T
 *   the columns are titled "TRES" all the same); its time is -T's TRES (CPUs by default:
 *   GPUs, memory in MiB, billing) x the seconds of its run within the window (a run not
 *   ended counts to the cluster's last observation); a run with no second in the window,
 *   or whose CPUs are not known, is not a job of the report;
 * - the sizes are grouped by Grouping= (default 50,250,500,1000: 0-49, 50-249, ...,
 *   >= 1000), or one column per size found (Grouping=individual);
 * - the lines: one, root, with every job (sreport's default, the root account's
 *   totals); with Accounts=, each account named (root: every job); with AcctAsParent,
 *   each account under root; with FlatView, each account the jobs ran under. The archive
 *   keeps no account hierarchy (sacct does not say it): an account's line holds its own
 *   jobs, not its sub-accounts'.
 *
 * The runs come from the rollups' members (schema/rollup/sa_rollup.h): every day of the
 * window with each run's interval of that day, and the open runs; a run's records of one
 * day (one per GPU type) share its interval, and it counts as a job once, in the record
 * where its time in the window begins.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_sreport.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rcommon.h"
#include "sa_rollup_reader.h"
#include "sa_rutil.h"
#include "sa_vec.h"

/* A run's part of one rollup document: its size, its TRES-seconds in the window, whether it counts as a job. */
typedef struct {
    uint32_t c, account;
    uint64_t size, secs;
    bool job;
} piece_t;

typedef struct {
    const sa_sreport_req_t *r;
    int64_t w0, w1, as_of;
    uint32_t c;
    sa_rintern_t names;  /* accounts */
    piece_t *v;
    size_t n, cap;
} sctx_t;

/*
 * The count of TRES t of a run whose records are x[0..n) (one per GPU type: the first
 * carries the CPUs, memory and billing), billing in whole units.
 */
static uint64_t run_count(sa_rtres_t t, const int64_t *const *x, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case SA_TRES_GPU: s += x[i][SA_RR_GPUS]; break;
        case SA_TRES_MEM: s += x[i][SA_RR_MEM]; break;
        case SA_TRES_BILLING: s += x[i][SA_RR_BILL]; break;
        default: s += x[i][SA_RR_CPUS]; break;
        }
    }
    if (t == SA_TRES_BILLING)
        s = (s + 500) / 1000;
    return s > 0 ? (uint64_t)s : 0;
}

/* True when the run's key passes Users= and Partitions= (and, with FlatView, Accounts=). */
static bool key_ok(const sctx_t *s, const sa_rollup_rowkey_t *k)
{
    const sa_sreport_req_t *r = s->r;
    return (!r->users.n || sa_strv_contains(&r->users, k->s[1])) &&
           (!r->partitions.n || sa_strv_contains(&r->partitions, k->s[2])) &&
           (!r->flat_view || !r->accounts.n || sa_strv_contains(&r->accounts, k->s[0]));
}

/* Adds the run whose records of document d are x[0..n) (one interval), its interval [a, b). */
static bool add_run(sctx_t *s, const sa_rollup_doc_t *d, const int64_t *const *x, size_t n, int64_t a, int64_t b,
                    bool started, sa_error_t *error)
{
    const sa_rollup_rowkey_t *k = &d->keys[x[0][SA_RR_KEY]];
    int64_t lo = a > s->w0 ? a : s->w0, hi = b < s->w1 ? b : s->w1;
    uint64_t size = run_count(SA_TRES_CPU, x, n);
    piece_t *p;

    /* a run whose CPUs are not known has no size (sreport: no cpu in its TRES) */
    if (hi <= lo || !size || !key_ok(s, k))
        return true;
    if (!SA_VEC_GROW(s->v, s->cap, s->n, 1, 256))
        return sa_error_nomem(error);
    p = &s->v[s->n];
    p->c = s->c;
    if ((p->account = sa_rintern(&s->names, k->s[0])) == UINT32_MAX)
        return sa_error_nomem(error);
    p->size = size;
    p->secs = run_count(s->r->tres[0], x, n) * (uint64_t)(hi - lo);
    /* a job once: where its time in the window begins (the window's start, or its own start) */
    p->job = (a <= s->w0 && s->w0 < b) || (started && a >= s->w0);
    s->n++;
    return true;
}

static bool on_doc(const sa_rollup_doc_t *d, void *vctx, sa_error_t *error)
{
    sctx_t *s = vctx;
    bool open = d->kind == SA_ROLLUP_K_OPEN;
    const int64_t **x = NULL;
    bool ok = true;

    if (!d->has_members)
        return true;
    for (size_t m = 0; ok && m < d->nm; m++) {
        const sa_rollup_member_t *mm = &d->m[m];
        const int64_t **grown = realloc(x, (mm->nrec + 1) * sizeof *x);
        bool *done;
        if (!grown) {
            free(x);
            return sa_error_nomem(error);
        }
        x = grown;
        if (!(done = calloc(mm->nrec + 1, sizeof *done))) {
            free(x);
            return sa_error_nomem(error);
        }
        /* a run's records of the day: those of one interval (one per GPU type) */
        for (size_t i = 0; ok && i < mm->nrec; i++) {
            const int64_t *ri = &mm->rec[i * SA_RR_NF];
            size_t n = 0;
            bool started = open;
            if (done[i])
                continue;
            for (size_t k = i; k < mm->nrec; k++) {
                const int64_t *rk = &mm->rec[k * SA_RR_NF];
                if (!done[k] && rk[SA_RR_START] == ri[SA_RR_START] && rk[SA_RR_END] == ri[SA_RR_END]) {
                    done[k] = true;
                    x[n++] = rk;
                    started = started || rk[SA_RR_STARTED] == 1;
                }
            }
            ok = add_run(s, d, x, n, ri[SA_RR_START], open ? s->as_of : ri[SA_RR_END], started, error);
        }
        free(done);
    }
    free(x);
    return ok;
}

static bool whole_day_never(int64_t day, void *ctx)
{
    (void)day;
    (void)ctx;
    return false;
}

/* The line a piece goes to (an account's interned id), or UINT32_MAX for none. */
static uint32_t line_of(const sctx_t *s, const piece_t *p, uint32_t root)
{
    const sa_sreport_req_t *r = s->r;
    const char *a = sa_rintern_str(&s->names, p->account);

    if (r->flat_view)
        return p->account;
    if (r->acct_as_parent) /* root's children: every account but root */
        return strcmp(a, "root") == 0 ? UINT32_MAX : p->account;
    if (!r->accounts.n || sa_strv_contains(&r->accounts, "root"))
        return root;
    return sa_strv_contains(&r->accounts, a) ? p->account : UINT32_MAX;
}

/* One line: its cluster and account, per size column its time and jobs. */
typedef struct {
    uint32_t c, account;
    uint64_t *secs, *jobs; /* per column */
    uint64_t total_secs, total_jobs;
} sline_t;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The size columns' lower bounds: Grouping='s (0 first), or every size found (individual). */
static bool columns(const sctx_t *s, uint64_t **lo, size_t *n, sa_error_t *error)
{
    const sa_sreport_req_t *r = s->r;
    size_t k = 0;

    if (!(*lo = malloc((r->individual ? s->n : r->ngrouping) * sizeof **lo + sizeof **lo)))
        return sa_error_nomem(error);
    if (!r->individual) {
        (*lo)[k++] = 0;
        for (size_t i = 0; i < r->ngrouping; i++)
            (*lo)[k++] = (uint64_t)r->grouping[i];
    } else {
        for (size_t i = 0; i < s->n; i++)
            (*lo)[k++] = s->v[i].size;
        qsort(*lo, k, sizeof **lo, u64_cmp);
        size_t u = 0;
        for (size_t i = 0; i < k; i++) {
            if (!u || (*lo)[u - 1] != (*lo)[i])
                (*lo)[u++] = (*lo)[i];
        }
        k = u;
    }
    *n = k;
    return true;
}

/* The column of a size: the last whose lower bound it reaches (individual: its own). */
static size_t column_of(const uint64_t *lo, size_t n, uint64_t size)
{
    size_t c = 0;
    while (c + 1 < n && size >= lo[c + 1])
        c++;
    return c;
}

static int sline_cmp(const void *x, const void *y, void *ctx)
{
    const sline_t *a = x, *b = y;
    const sctx_t *s = ctx;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    return strcmp(sa_rintern_str(&s->names, a->account), sa_rintern_str(&s->names, b->account));
}

/* Reads the window's runs of every cluster (the rollups' members; each run's part of each day). */
static bool read_runs(sctx_t *s, sa_rdb_t *db, const sa_rclusters_t *cl, int64_t now, sa_error_t *error)
{
    for (size_t i = 0; i < cl->n; i++) {
        if (cl->v[i].rollup_version < SA_ROLLUP_VERSION) {
            sa_error_set(error, SA_ERR_USAGE, 0,
                         "sreport job SizesByAccount reads the rollups, which cluster %s does not have yet "
                         "(slurm-ingest builds them on its next run, or `slurm-ingest rollup --rebuild`)",
                         cl->v[i].name);
            return false;
        }
        s->c = (uint32_t)i;
        s->as_of = sa_rcluster_as_of(&cl->v[i], now);
        if (!sa_rollup_read(db, cl->v[i].name, s->w0, s->w1, true, whole_day_never, on_doc, s, NULL, error))
            return false;
    }
    return true;
}

/* The header (job_reports.c _run_report) and the column titles. */
static void head(const sa_sreport_req_t *r, const sa_srprint_t *p, const sa_srfield_t *f, size_t nf)
{
    sa_sreport_head(r, p, "Job Sizes", true);
    if (r->no_header)
        return;
    if (r->tres_given)
        fprintf(p->out, "TRES type is %s\n", r->tres_str);
    if (r->print_job_count)
        fputs("Units are in number of jobs ran\n", p->out);
    else
        fprintf(p->out, "Time reported in %s\n", sa_sreport_time_name(r->time));
    sa_srprint_rule(p);
    sa_srprint_titles(p, f, nf);
}

/* A report in the making: the runs, the clusters, the columns and the lines. */
typedef struct {
    const sa_sreport_req_t *r;
    sctx_t s;
    sa_rclusters_t cl;
    sa_srfield_t *f, *all; /* Format='s columns; those, the size columns and "% of cluster" */
    size_t nf;
    uint64_t *lo;          /* the size columns' lower bounds */
    size_t ncol;
    char **titles;         /* the size columns' titles */
    sline_t *lines;
    size_t nlines;
} sizes_t;

static void sizes_clear(sizes_t *z)
{
    for (size_t i = 0; z->lines && i < z->nlines; i++) {
        free(z->lines[i].secs);
        free(z->lines[i].jobs);
    }
    free(z->lines);
    for (size_t k = 0; z->titles && k < z->ncol; k++)
        free(z->titles[k]);
    free(z->titles);
    free(z->all);
    free(z->lo);
    free(z->f);
    free(z->s.v);
    sa_rintern_clear(&z->s.names);
    sa_rclusters_clear(&z->cl);
}

/* The lines: each (cluster, line's account) of the runs, with its time and jobs per size column, by name. */
static bool make_lines(sizes_t *z, sa_error_t *error)
{
    uint32_t root;

    if ((root = sa_rintern(&z->s.names, "root")) == UINT32_MAX || !(z->lines = calloc(z->s.n + 1, sizeof *z->lines)))
        return sa_error_nomem(error);
    for (size_t i = 0; i < z->s.n; i++) {
        const piece_t *pc = &z->s.v[i];
        uint32_t a = line_of(&z->s, pc, root);
        sline_t *l = NULL;
        size_t col = column_of(z->lo, z->ncol, pc->size);
        if (a == UINT32_MAX)
            continue;
        for (size_t k = 0; k < z->nlines && !l; k++) {
            if (z->lines[k].c == pc->c && z->lines[k].account == a)
                l = &z->lines[k];
        }
        if (!l) {
            l = &z->lines[z->nlines++];
            l->c = pc->c;
            l->account = a;
            if (!(l->secs = calloc(z->ncol, sizeof *l->secs)) || !(l->jobs = calloc(z->ncol, sizeof *l->jobs)))
                return sa_error_nomem(error);
        }
        l->secs[col] += pc->secs;
        l->total_secs += pc->secs;
        l->jobs[col] += pc->job;
        l->total_jobs += pc->job;
    }
    qsort_r(z->lines, z->nlines, sizeof *z->lines, sline_cmp, &z->s);
    return true;
}

/* The columns: Format='s, one per size ("0-49 CPUs", ">= 1000 CPUs"; "TRES" with -T), "% of cluster". */
static bool make_columns(sizes_t *z, sa_error_t *error)
{
    const sa_sreport_req_t *r = z->r;
    bool per = r->time == SA_SRT_SECS_PER || r->time == SA_SRT_MINS_PER || r->time == SA_SRT_HOURS_PER;
    const char *unit = !r->tres_str || strcasecmp(r->tres_str, "cpu") == 0 ? "CPUs" : "TRES";

    if (!(z->all = calloc(z->nf + z->ncol + 1, sizeof *z->all)) ||
        !(z->titles = calloc(z->ncol + 1, sizeof *z->titles)))
        return sa_error_nomem(error);
    memcpy(z->all, z->f, z->nf * sizeof *z->f);
    for (size_t k = 0; k < z->ncol; k++) {
        if (r->individual)
            z->titles[k] = sa_rprintf("%" PRIu64 " %s", z->lo[k], unit);
        else if (k + 1 < z->ncol)
            z->titles[k] = sa_rprintf("%" PRIu64 "-%" PRIu64 " %s", z->lo[k], z->lo[k + 1] - 1, unit);
        else
            z->titles[k] = sa_rprintf(">= %" PRIu64 " %s", z->lo[k], unit);
        if (!z->titles[k])
            return sa_error_nomem(error);
        z->all[z->nf + k] = (sa_srfield_t){SR_F_SIZE, z->titles[k], per ? 20 : 13};
    }
    z->all[z->nf + z->ncol] = (sa_srfield_t){SR_F_SIZE, "% of cluster", 12};
    return true;
}

/* One line: its Format= cells (the cluster, the account; the others blank), its sizes, its share of the cluster. */
static void print_line(const sizes_t *z, const sa_srprint_t *p, const sline_t *l)
{
    const sa_sreport_req_t *r = z->r;
    sa_srprint_t pct = {p->out, r->parsable, SA_SRT_PERCENT};
    uint64_t csecs = 0, cjobs = 0;

    for (size_t k = 0; k < z->nlines; k++) {
        if (z->lines[k].c == l->c) {
            csecs += z->lines[k].total_secs;
            cjobs += z->lines[k].total_jobs;
        }
    }
    for (size_t k = 0; k < z->nf; k++) {
        if (z->f[k].type == SR_F_CLUSTER)
            sa_srprint_str(p, &z->f[k], z->cl.v[l->c].name, false);
        else if (z->f[k].type == SR_F_ACCOUNT || z->f[k].type == SR_F_WCKEY)
            sa_srprint_str(p, &z->f[k], sa_rintern_str(&z->s.names, l->account), false);
        else
            sa_sreport_none(p, &z->f[k], false);
    }
    for (size_t k = 0; k < z->ncol; k++) {
        if (r->print_job_count)
            sa_srprint_uint(p, &z->all[z->nf + k], l->jobs[k], false);
        else
            sa_srprint_time(p, &z->all[z->nf + k], l->secs[k], l->total_secs, false);
    }
    if (r->print_job_count)
        sa_srprint_time(&pct, &z->all[z->nf + z->ncol], l->total_jobs, cjobs, true);
    else
        sa_srprint_time(&pct, &z->all[z->nf + z->ncol], l->total_secs, csecs, true);
    sa_srprint_eol(p);
}

bool sa_sreport_sizes(const sa_report_opts_t *o, const sa_sreport_req_t *r, FILE *out, FILE *warn,
                      sa_error_t *error)
{
    sa_srprint_t p = {out, r->parsable, r->time};
    sa_report_opts_t q;
    sizes_t z;
    sa_rdb_t *db = NULL;
    bool ok = false;

    (void)warn;
    memset(&z, 0, sizeof z);
    z.r = r;
    z.s.r = r;
    z.s.w0 = r->start;
    z.s.w1 = r->end;
    sa_rintern_init(&z.s.names);
    sa_sreport_opts(o, r, &q);
    if (o->from_jobs) {
        sa_error_set(error, SA_ERR_USAGE, 0, "sreport job SizesByAccount reads the rollups' runs: --from-jobs is "
                                             "for the cluster and user reports");
        goto done;
    }
    if (!sa_sreport_fields(r, &z.f, &z.nf, error) || !(db = sa_report_connect(&q, error)) ||
        !sa_rdb_clusters(db, &q.clusters, &z.cl, error) || !read_runs(&z.s, db, &z.cl, o->now, error) ||
        !columns(&z.s, &z.lo, &z.ncol, error))
        goto done;
    if (r->individual && !z.ncol) {
        sa_error_set(error, SA_ERR_USAGE, 0, "sreport Grouping=individual: no job ran in the window, so there is no "
                                             "size to make a column of");
        goto done;
    }
    if (!make_lines(&z, error) || !make_columns(&z, error))
        goto done;
    head(r, &p, z.all, z.nf + z.ncol + 1);
    for (size_t i = 0; i < z.nlines; i++)
        print_line(&z, &p, &z.lines[i]);
    ok = true;
done:
    sizes_clear(&z);
    sa_rdb_close(db);
    return ok;
}
