/*
 * sa_cw.c - the CloudWatch names of the Prometheus export's figures, PutMetricData's
 * bodies and the embedded metric format (see sa_cw.h). Nothing here computes a figure: every
 * value is read from the sa_prom_t that `current --prometheus` writes.
 */
#define _GNU_SOURCE /* asprintf, open_memstream */
#include "sa_cw.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sa_model.h"
#include "sa_rutil.h"
#include "sa_vec.h"

void sa_cw_set_init(sa_cw_set_t *s)
{
    memset(s, 0, sizeof *s);
}

void sa_cw_set_clear(sa_cw_set_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].cluster);
        free(s->v[i].partition);
        free(s->v[i].gpu_type);
    }
    free(s->v);
    sa_cw_set_init(s);
}

/* ---- names ------------------------------------------------------------------------------ */

/* True when the exact state ("BASE+FLAG+...") has flag. */
static bool state_flag(const char *state, const char *flag)
{
    size_t n = strlen(flag);
    const char *p = strchr(state, '+');

    while (p) {
        p++;
        if (strncmp(p, flag, n) == 0 && (p[n] == '+' || p[n] == '\0'))
            return true;
        p = strchr(p, '+');
    }
    return false;
}

/* True when the exact state's base is base. */
static bool state_base(const char *state, const char *base)
{
    size_t n = strlen(base);
    return strncmp(state, base, n) == 0 && (state[n] == '+' || state[n] == '\0');
}

/* A Slurm word in CamelCase ("POWERED_DOWN" -> "PoweredDown") into buf (64 bytes). */
static const char *camel(const char *word, size_t len, char buf[64])
{
    size_t o = 0;
    bool up = true;

    for (size_t i = 0; i < len && o < 63; i++) {
        if (word[i] == '_' || word[i] == ' ' || word[i] == '-') {
            up = true;
            continue;
        }
        buf[o++] = (char)(up ? toupper((unsigned char)word[i]) : tolower((unsigned char)word[i]));
        up = false;
    }
    buf[o] = '\0';
    return buf;
}

const char *sa_cw_node_class(const char *state, char buf[64])
{
    bool alloc, drain, maint;

    if (!state || !*state)
        return strcpy(buf, "Unknown");
    alloc = state_base(state, "ALLOCATED") || state_base(state, "MIXED");
    drain = state_flag(state, "DRAIN");
    maint = state_flag(state, "MAINTENANCE") || state_flag(state, "MAINT");
    /* node_state_string's order: MAINT (unless drained, busy or down), REBOOT, DRAIN, FAIL */
    if (maint && !drain && !alloc && !state_base(state, "DOWN"))
        return strcpy(buf, "Maint");
    if ((state_flag(state, "REBOOT_REQUESTED") || state_flag(state, "REBOOT_ISSUED")) && !alloc)
        return strcpy(buf, "Reboot");
    if (drain)
        return strcpy(buf, "Drain");
    if (state_flag(state, "FAIL"))
        return strcpy(buf, "Fail");
    if (state_base(state, "DOWN"))
        return strcpy(buf, "Down");
    if (state_base(state, "ALLOCATED"))
        return strcpy(buf, "Allocated");
    if (state_flag(state, "COMPLETING"))
        return strcpy(buf, "Completing");
    if (state_base(state, "IDLE")) {
        if (state_flag(state, "RESERVED"))
            return strcpy(buf, "Resv");
        if (state_flag(state, "PLANNED"))
            return strcpy(buf, "Planned");
        return strcpy(buf, "Idle");
    }
    /* MIXED, ERROR, FUTURE, UNKNOWN and any base Slurm adds: its own word */
    return camel(state, strcspn(state, "+"), buf);
}

/* ---- datums from the Prometheus figures -------------------------------------------------- */

/* Appends a datum (value already text). */
static bool datum_add(sa_cw_set_t *s, const char *name, const char *unit, const char *cluster, const char *part,
                      const char *gpu_type, double value, int64_t at)
{
    sa_cw_datum_t *d;

    if (!SA_VEC_GROW(s->v, s->cap, s->n, 1, 64))
        return false;
    d = &s->v[s->n];
    memset(d, 0, sizeof *d);
    d->name = strdup(name);
    d->cluster = strdup(cluster);
    d->partition = part ? strdup(part) : NULL;
    d->gpu_type = gpu_type ? strdup(gpu_type) : NULL;
    d->unit = unit;
    d->at = at;
    sa_prom_value_text(value, d->value);
    s->n++;
    if (!d->name || !d->cluster || (part && !d->partition) || (gpu_type && !d->gpu_type))
        return false; /* freed by sa_cw_set_clear */
    return true;
}

/* A figure under construction: name -> sum, in the order first met. */
typedef struct {
    char **names;
    double *sums;
    size_t n, cap;
} sums_t;

static void sums_clear(sums_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->sums);
    memset(t, 0, sizeof *t);
}

/* Adds v to the sum of name (a new sum when absent). */
static bool sums_add(sums_t *t, const char *name, double v)
{
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->names[i], name) == 0) {
            t->sums[i] += v;
            return true;
        }
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **n = realloc(t->names, cap * sizeof *n);
        double *s = n ? realloc(t->sums, cap * sizeof *s) : NULL;
        if (n)
            t->names = n;
        if (!s)
            return false;
        t->sums = s;
        t->cap = cap;
    }
    if (!(t->names[t->n] = strdup(name)))
        return false;
    t->sums[t->n++] = v;
    return true;
}

/* What one pass over a metric's samples gathers: the cluster's, keyed by a label. */
typedef struct {
    const char *cluster;
    const char *key_label;   /* the sample's label that is the datum's key (state, status) */
    const char *group_label; /* a second level (partition, gpu_type): sums per group; NULL: none */
    int kind;                /* KIND_NODES, KIND_JOBS_CURRENT, KIND_JOBS_FINISHED, KIND_GPUS */
    sums_t *top;             /* the cluster's sums */
    sums_t *groups;          /* one sums_t per group, named by group_names */
    char ***group_names;
    size_t *ngroups;
    double value;            /* KIND_SCALAR: the value found */
    bool found, oom;
} pass_t;

enum { KIND_NODES, KIND_JOBS_CURRENT, KIND_JOBS_FINISHED, KIND_GPUS, KIND_SCALAR };

/* The datum name of a sample's key: "Nodes" + class, "Jobs" + state, "GPUs" + status. */
static bool key_name(int kind, const char *key, char out[80])
{
    char buf[64];
    switch (kind) {
    case KIND_NODES:
        snprintf(out, 80, "Nodes%s", sa_cw_node_class(key, buf));
        return true;
    case KIND_JOBS_CURRENT:
    case KIND_JOBS_FINISHED:
        /* a state is counted where its figure is: final states ended since --since */
        if (sa_job_state_is_final(key) != (kind == KIND_JOBS_FINISHED))
            return false;
        snprintf(out, 80, "Jobs%s", camel(key, strlen(key), buf));
        return true;
    default:
        snprintf(out, 80, "GPUs%s", camel(key, strlen(key), buf));
        return true;
    }
}

/* Index of group g among the pass's groups (collected before the pass); SIZE_MAX when not there. */
static size_t group_of(const pass_t *ps, const char *g)
{
    for (size_t i = 0; i < *ps->ngroups; i++) {
        if (strcmp((*ps->group_names)[i], g) == 0)
            return i;
    }
    return SIZE_MAX;
}

static bool on_sample(const char *labels, double value, void *vctx)
{
    pass_t *ps = vctx;
    char *cl = NULL, *key = NULL, *grp = NULL, name[80];
    bool ok = true;

    if (!sa_prom_label(labels, "cluster", &cl))
        goto oom;
    if (!cl || strcmp(cl, ps->cluster) != 0)
        goto done;
    if (ps->kind == KIND_SCALAR) {
        ps->value = value;
        ps->found = true;
        goto done;
    }
    if (!sa_prom_label(labels, ps->key_label, &key) || (ps->group_label && !sa_prom_label(labels, ps->group_label, &grp)))
        goto oom;
    if (!key || !key_name(ps->kind, key, name))
        goto done;
    if (ps->group_label) {
        size_t g;
        if (!grp)
            goto done;
        if ((g = group_of(ps, grp)) == SIZE_MAX)
            goto done;
        ok = sums_add(&ps->groups[g], name, value);
    } else {
        ok = sums_add(ps->top, name, value);
    }
    if (!ok)
        goto oom;
done:
    free(cl);
    free(key);
    free(grp);
    return true;
oom:
    ps->oom = true;
    free(cl);
    free(key);
    free(grp);
    return false;
}

/* The value of a metric with only the cluster label (*found false when there is none). */
static bool scalar(const sa_prom_t *p, const char *metric, const char *cluster, double *v, bool *found)
{
    pass_t ps;
    memset(&ps, 0, sizeof ps);
    ps.cluster = cluster;
    ps.kind = KIND_SCALAR;
    if (!sa_prom_each(p, metric, on_sample, &ps) && ps.oom)
        return false;
    *v = ps.value;
    *found = ps.found;
    return true;
}

typedef struct {
    const char *cluster, *label;
    char **names;
    size_t n, cap;
    bool oom;
} groups_ctx_t;

/* Collects the distinct values of a label among a metric's samples of a cluster (NULL: of every cluster). */
static bool on_group(const char *labels, double value, void *vctx)
{
    groups_ctx_t *g = vctx;
    char *cl = NULL, *v = NULL;
    (void)value;

    if (!sa_prom_label(labels, "cluster", &cl) || !sa_prom_label(labels, g->label, &v)) {
        g->oom = true;
        free(cl);
        return false;
    }
    if (cl && v && (!g->cluster || strcmp(cl, g->cluster) == 0)) {
        bool seen = false;
        for (size_t i = 0; i < g->n && !seen; i++)
            seen = strcmp(g->names[i], v) == 0;
        if (!seen) {
            if (!SA_VEC_GROW(g->names, g->cap, g->n, 1, 8)) {
                g->oom = true;
                free(cl);
                free(v);
                return false;
            }
            g->names[g->n++] = v;
            v = NULL;
        }
    }
    free(cl);
    free(v);
    return true;
}

/* Orders group names (qsort). */
static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One family of a cluster: what the named metrics' samples sum to per key, fixed keys first (0 when none). */
typedef struct {
    const char *prefix;               /* "Nodes", "Jobs", "GPUs" */
    const char *const *fixed;         /* the keys always sent, NULL-terminated */
    const char *metric[2];            /* the cluster's metrics (and their kinds) */
    int kind[2];
    const char *group_metric[2];      /* the same per group (NULL: none) */
    const char *group_label, *dim;    /* "partition" -> Partition, "gpu_type" -> GPUType */
    const char *time_metric;          /* the observation time's metric; NULL: the squeue listing's */
} family_t;

static const char *const node_classes[] = {"Allocated", "Completing", "Down", "Drain", "Fail", "Error",
                                           "Idle", "Maint", "Mixed", "Resv", NULL};
static const char *const job_states[] = {"Pending", "Running", "Suspended", "Cancelled", "Completing",
                                         "Completed", "Configuring", "Failed", "Timeout", "Preempted",
                                         "NodeFail", NULL};
static const char *const gpu_statuses[] = {"Allocated", "Idle", "Stranded", "Down", "PlannedDown",
                                           "Reserved", "Unknown", NULL};

static const family_t families[] = {
    {"Nodes", node_classes, {"slurm_archive_nodes", NULL}, {KIND_NODES, 0},
     {"slurm_archive_partition_nodes", NULL}, "partition", "Partition",
     "slurm_archive_nodes_snapshot_timestamp_seconds"},
    {"Jobs", job_states, {"slurm_archive_jobs", "slurm_archive_finished_jobs"},
     {KIND_JOBS_CURRENT, KIND_JOBS_FINISHED},
     {"slurm_archive_partition_jobs", "slurm_archive_partition_finished_jobs"}, "partition", "Partition", NULL},
    {"GPUs", gpu_statuses, {"slurm_archive_gpus", NULL}, {KIND_GPUS, 0}, {"slurm_archive_gpus", NULL}, "gpu_type",
     "GPUType", "slurm_archive_nodes_snapshot_timestamp_seconds"},
};

/* Emits sums (fixed keys first, 0 when absent; then the others in order met) as datums. */
static bool emit_sums(sa_cw_set_t *out, const family_t *f, sums_t *t, const char *cluster, const char *part,
                      const char *gpu_type, int64_t at)
{
    char name[80];
    for (size_t k = 0; f->fixed[k]; k++) {
        snprintf(name, sizeof name, "%s%s", f->prefix, f->fixed[k]);
        if (!sums_add(t, name, 0))
            return false;
    }
    for (size_t k = 0; f->fixed[k]; k++) {
        snprintf(name, sizeof name, "%s%s", f->prefix, f->fixed[k]);
        for (size_t i = 0; i < t->n; i++) {
            if (strcmp(t->names[i], name) == 0 &&
                !datum_add(out, name, "Count", cluster, part, gpu_type, t->sums[i], at))
                return false;
        }
    }
    for (size_t i = 0; i < t->n; i++) {
        bool fixed = false;
        for (size_t k = 0; f->fixed[k] && !fixed; k++) {
            snprintf(name, sizeof name, "%s%s", f->prefix, f->fixed[k]);
            fixed = strcmp(t->names[i], name) == 0;
        }
        if (!fixed && !datum_add(out, t->names[i], "Count", cluster, part, gpu_type, t->sums[i], at))
            return false;
    }
    return true;
}

/*
 * One family of one cluster: the cluster's datums, then each group's. Nothing when the
 * cluster has no observation for it (no node snapshot; no squeue listing).
 */
static bool family_datums(const sa_prom_t *p, const family_t *f, const char *cluster, int64_t at,
                          sa_cw_set_t *out)
{
    sums_t top;
    groups_ctx_t g;
    sums_t *gs = NULL;
    pass_t ps;
    bool ok = false;

    memset(&top, 0, sizeof top);
    memset(&g, 0, sizeof g);
    g.cluster = cluster;
    g.label = f->group_label;
    for (int m = 0; m < 2 && f->group_metric[m]; m++) {
        if (!sa_prom_each(p, f->group_metric[m], on_group, &g) && g.oom)
            goto done;
    }
    if (g.n)
        qsort(g.names, g.n, sizeof *g.names, name_cmp);
    if (g.n && !(gs = calloc(g.n, sizeof *gs)))
        goto done;
    memset(&ps, 0, sizeof ps);
    ps.cluster = cluster;
    ps.top = &top;
    ps.groups = gs;
    ps.group_names = &g.names;
    ps.ngroups = &g.n;
    for (int m = 0; m < 2 && f->metric[m]; m++) {
        ps.kind = f->kind[m];
        ps.key_label = f->kind[m] == KIND_GPUS ? "status" : "state";
        ps.group_label = NULL;
        if (!sa_prom_each(p, f->metric[m], on_sample, &ps) && ps.oom)
            goto done;
        ps.group_label = f->group_label;
        if (f->group_metric[m] && !sa_prom_each(p, f->group_metric[m], on_sample, &ps) && ps.oom)
            goto done;
    }
    if (!emit_sums(out, f, &top, cluster, NULL, NULL, at))
        goto done;
    for (size_t i = 0; i < g.n; i++) {
        bool part = strcmp(f->dim, "Partition") == 0;
        if (!emit_sums(out, f, &gs[i], cluster, part ? g.names[i] : NULL, part ? NULL : g.names[i], at))
            goto done;
    }
    ok = true;
done:
    sums_clear(&top);
    for (size_t i = 0; i < g.n; i++) {
        if (gs)
            sums_clear(&gs[i]);
        free(g.names[i]);
    }
    free(gs);
    free(g.names);
    return ok;
}

/*
 * The scheduler's figures of the cluster's latest sdiag (nothing when it has none), at the
 * time sdiag says it took them (else the node snapshot's, else now).
 */
static bool sched_datums(const sa_prom_t *p, const char *cluster, int64_t now, sa_cw_set_t *out)
{
    static const struct {
        const char *name, *metric, *unit;
    } m[] = {
        {"ServerThreadCount", "slurm_archive_scheduler_threads", "Count"},
        {"AgentQueueSize", "slurm_archive_scheduler_agent_queue_size", "Count"},
        {"ScheduleCycleLast", "slurm_archive_scheduler_cycle_last_seconds", "Seconds"},
        {"ScheduleCycleMean", "slurm_archive_scheduler_cycle_mean_seconds", "Seconds"},
        {"ScheduleCyclesPerMinute", "slurm_archive_scheduler_cycles_per_minute", "Count"},
        {"BackfillCycleLast", "slurm_archive_scheduler_backfill_cycle_last_seconds", "Seconds"},
        {"BackfillCycleMean", "slurm_archive_scheduler_backfill_cycle_mean_seconds", "Seconds"},
        {"BackfillDepthMean", "slurm_archive_scheduler_backfill_depth_mean", "Count"},
    };
    double v, t;
    bool found, tfound;

    if (!scalar(p, "slurm_archive_scheduler_sample_timestamp_seconds", cluster, &t, &tfound) ||
        (!tfound && !scalar(p, "slurm_archive_nodes_snapshot_timestamp_seconds", cluster, &t, &tfound)))
        return false;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (!scalar(p, m[i].metric, cluster, &v, &found))
            return false;
        if (found && !datum_add(out, m[i].name, m[i].unit, cluster, NULL, NULL, v, tfound ? (int64_t)t : now))
            return false;
    }
    return true;
}

typedef struct {
    const char *cluster;
    double at;
    bool found, oom;
} squeue_ctx_t;

/* The time of the cluster's last squeue listing (slurm_archive_last_ingest_timestamp_seconds{source="squeue"}). */
static bool on_ingest(const char *labels, double value, void *vctx)
{
    squeue_ctx_t *c = vctx;
    char *cl = NULL, *src = NULL;
    if (!sa_prom_label(labels, "cluster", &cl) || !sa_prom_label(labels, "source", &src)) {
        c->oom = true;
        free(cl);
        return false;
    }
    if (cl && src && strcmp(cl, c->cluster) == 0 && strcmp(src, "squeue") == 0) {
        c->at = value;
        c->found = true;
    }
    free(cl);
    free(src);
    return true;
}

bool sa_cw_from_prom(const sa_prom_t *p, int64_t now, sa_cw_set_t *out, sa_error_t *error)
{
    groups_ctx_t cl;
    bool ok = true;

    memset(&cl, 0, sizeof cl);
    cl.label = "cluster";
    if (!sa_prom_each(p, "slurm_archive_finished_since_timestamp_seconds", on_group, &cl) && cl.oom)
        ok = false;
    for (size_t c = 0; ok && c < cl.n; c++) {
        for (size_t f = 0; ok && f < sizeof families / sizeof families[0]; f++) {
            double t;
            bool found;
            if (families[f].time_metric) {
                ok = scalar(p, families[f].time_metric, cl.names[c], &t, &found);
            } else {
                squeue_ctx_t sq = {cl.names[c], 0, false, false};
                ok = sa_prom_each(p, "slurm_archive_last_ingest_timestamp_seconds", on_ingest, &sq) || !sq.oom;
                t = sq.at;
                found = sq.found;
            }
            /* a family without its observation (no node snapshot, no squeue listing) is not sent */
            if (ok && found)
                ok = family_datums(p, &families[f], cl.names[c], (int64_t)t, out);
        }
        ok = ok && sched_datums(p, cl.names[c], now, out);
    }
    for (size_t c = 0; c < cl.n; c++)
        free(cl.names[c]);
    free(cl.names);
    return ok || sa_error_nomem(error);
}

/* ---- PutMetricData's bodies ------------------------------------------------------------- */

/* Appends "&KEY=escaped(value)" (KEY printf-formatted with the member index) to m. */
static bool form_pair(FILE *m, const char *key, const char *value)
{
    char *e = curl_easy_escape(NULL, value, 0);
    if (!e)
        return false;
    fprintf(m, "&%s=%s", key, e);
    curl_free(e);
    return true;
}

/* The form text of datum d as member i of a request. New string (NULL on out of memory). */
static char *datum_form(const sa_cw_datum_t *d, size_t i)
{
    char *s = NULL, key[96];
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    const char *dn[3] = {"ClusterName", "Partition", "GPUType"};
    const char *dv[3] = {d->cluster, d->partition, d->gpu_type};
    size_t k = 0;
    bool ok;

    if (!m)
        return NULL;
    snprintf(key, sizeof key, "MetricData.member.%zu.MetricName", i);
    ok = form_pair(m, key, d->name);
    for (size_t j = 0; ok && j < 3; j++) {
        if (!dv[j])
            continue;
        k++;
        snprintf(key, sizeof key, "MetricData.member.%zu.Dimensions.member.%zu.Name", i, k);
        ok = form_pair(m, key, dn[j]);
        snprintf(key, sizeof key, "MetricData.member.%zu.Dimensions.member.%zu.Value", i, k);
        ok = ok && form_pair(m, key, dv[j]);
    }
    snprintf(key, sizeof key, "MetricData.member.%zu.Timestamp", i);
    ok = ok && form_pair(m, key, sa_riso(d->at));
    snprintf(key, sizeof key, "MetricData.member.%zu.Value", i);
    ok = ok && form_pair(m, key, d->value);
    snprintf(key, sizeof key, "MetricData.member.%zu.Unit", i);
    ok = ok && form_pair(m, key, d->unit);
    if (fclose(m) != 0 || !ok) {
        free(s);
        return NULL;
    }
    return s;
}

bool sa_cw_bodies(const sa_cw_set_t *s, const char *ns, size_t max_data, size_t max_bytes, char ***bodies,
                  size_t *n_bodies, sa_error_t *error)
{
    char *head = NULL, *cur = NULL, *nse = curl_easy_escape(NULL, ns, 0);
    size_t cur_len = 0, cur_n = 0, cap = 0, head_len;
    bool ok = false;

    *bodies = NULL;
    *n_bodies = 0;
    if (!nse || asprintf(&head, "Action=PutMetricData&Version=2010-08-01&Namespace=%s", nse) < 0) {
        head = NULL;
        goto oom;
    }
    head_len = strlen(head);
    for (size_t i = 0; i <= s->n; i++) {
        char *frag = NULL;
        size_t fl = 0;
        if (i < s->n) {
            if (!(frag = datum_form(&s->v[i], cur_n + 1)))
                goto oom;
            fl = strlen(frag);
        }
        /* close the request at hand when this datum would not fit it (or at the end) */
        if (cur && (i == s->n || cur_n == max_data || cur_len + fl > max_bytes)) {
            if (!SA_VEC_GROW(*bodies, cap, *n_bodies, 1, 4)) {
                free(frag);
                goto oom;
            }
            (*bodies)[(*n_bodies)++] = cur;
            cur = NULL;
            cur_n = 0;
            if (frag) {
                free(frag);
                if (!(frag = datum_form(&s->v[i], 1)))
                    goto oom;
                fl = strlen(frag);
            }
        }
        if (!frag)
            continue;
        if (head_len + fl > max_bytes) {
            free(frag);
            sa_error_set(error, SA_ERR_ENDPOINT, 0, "the metric %s alone is larger than a request may be (%zu bytes)",
                         s->v[i].name, max_bytes);
            goto done;
        }
        if (!cur) {
            if (!(cur = malloc(head_len + 1))) {
                free(frag);
                goto oom;
            }
            memcpy(cur, head, head_len + 1);
            cur_len = head_len;
        }
        {
            char *grown = realloc(cur, cur_len + fl + 1);
            if (!grown) {
                free(frag);
                goto oom;
            }
            cur = grown;
            memcpy(cur + cur_len, frag, fl + 1);
            cur_len += fl;
            cur_n++;
        }
        free(frag);
    }
    ok = true;
    goto done;
oom:
    sa_error_nomem(error);
done:
    free(cur);
    free(head);
    curl_free(nse);
    if (!ok) {
        for (size_t i = 0; i < *n_bodies; i++)
            free((*bodies)[i]);
        free(*bodies);
        *bodies = NULL;
        *n_bodies = 0;
    }
    return ok;
}

/* ---- the embedded metric format --------------------------------------------------------- */

/* True when two datums share the document of an EMF line (cluster, dimensions, time). */
static bool same_doc(const sa_cw_datum_t *a, const sa_cw_datum_t *b)
{
    return a->at == b->at && strcmp(a->cluster, b->cluster) == 0 &&
           !a->partition == !b->partition && (!a->partition || strcmp(a->partition, b->partition) == 0) &&
           !a->gpu_type == !b->gpu_type && (!a->gpu_type || strcmp(a->gpu_type, b->gpu_type) == 0);
}

/* One EMF document of the datums [from, to) (one document's: same_doc). */
static json_t *emf_doc(const sa_cw_datum_t *v, size_t from, size_t to, const char *ns)
{
    const sa_cw_datum_t *d = &v[from];
    json_t *root = json_object(), *dims = json_array(), *metrics = json_array();
    json_t *dir = json_pack("{s:s, s:[o], s:o}", "Namespace", ns, "Dimensions", dims, "Metrics", metrics);

    json_array_append_new(dims, json_string("ClusterName"));
    json_object_set_new(root, "ClusterName", json_string(d->cluster));
    if (d->partition) {
        json_array_append_new(dims, json_string("Partition"));
        json_object_set_new(root, "Partition", json_string(d->partition));
    }
    if (d->gpu_type) {
        json_array_append_new(dims, json_string("GPUType"));
        json_object_set_new(root, "GPUType", json_string(d->gpu_type));
    }
    json_object_set_new(root, "_aws", json_pack("{s:I, s:[o]}", "Timestamp", (json_int_t)d->at * 1000,
                                                 "CloudWatchMetrics", dir));
    for (size_t i = from; i < to; i++) {
        char *end;
        double x = strtod(v[i].value, &end);
        long long n = strtoll(v[i].value, &end, 10);
        json_array_append_new(metrics, json_pack("{s:s, s:s}", "Name", v[i].name, "Unit", v[i].unit));
        /* the value's text, as a JSON number: an integer, or a real written with %.9g (sa_prom_value_text) */
        json_object_set_new(root, v[i].name, *end == '\0' ? json_integer(n) : json_real(x));
    }
    return root;
}

bool sa_cw_write_emf(const sa_cw_set_t *s, const char *ns, FILE *out, sa_error_t *error)
{
    size_t i = 0;

    while (i < s->n) {
        size_t j = i + 1;
        json_t *doc;
        char *text;
        while (j < s->n && j - i < 100 && same_doc(&s->v[i], &s->v[j]))
            j++;
        if (!(doc = emf_doc(s->v, i, j, ns)) ||
            !(text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)))) {
            json_decref(doc);
            return sa_error_nomem(error);
        }
        fprintf(out, "%s\n", text);
        free(text);
        json_decref(doc);
        i = j;
    }
    if (ferror(out)) {
        sa_error_set(error, SA_ERR_IO, 0, "writing the metrics failed");
        return false;
    }
    return true;
}
