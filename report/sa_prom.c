/*
 * sa_prom.c - the metrics of `slurm-report current --prometheus` (see sa_prom.h).
 *
 * The names are stable: a metric is added, never renamed. Every sample has a cluster
 * label (slurm_archive_report_timestamp_seconds alone describes the file). Node
 * states are exact ("IDLE+DRAIN"); a GPU or CPU is counted once, under one status.
 */
#include "sa_prom.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sa_rutil.h"
#include "sa_vec.h"

/* Every metric, in the order written. */
static const struct {
    const char *name, *help;
} metrics[] = {
    {"slurm_archive_jobs", "Jobs in the cluster's latest squeue snapshot, by state."},
    {"slurm_archive_partition_jobs", "Jobs in the latest squeue snapshot, by partition and state."},
    {"slurm_archive_account_jobs", "Jobs in the latest squeue snapshot, by account and state."},
    {"slurm_archive_user_jobs", "Jobs in the latest squeue snapshot, by user and state."},
    {"slurm_archive_job_gpus", "GPUs of the jobs in the latest squeue snapshot (allocated; requested when pending), "
                               "by state."},
    {"slurm_archive_partition_job_gpus", "GPUs of the jobs in the latest squeue snapshot, by partition and state."},
    {"slurm_archive_account_job_gpus", "GPUs of the jobs in the latest squeue snapshot, by account and state."},
    {"slurm_archive_user_job_gpus", "GPUs of the jobs in the latest squeue snapshot, by user and state."},
    {"slurm_archive_job_cpus", "CPUs of the jobs in the latest squeue snapshot (allocated; requested when pending), "
                               "by state."},
    {"slurm_archive_partition_job_cpus", "CPUs of the jobs in the latest squeue snapshot, by partition and state."},
    {"slurm_archive_account_job_cpus", "CPUs of the jobs in the latest squeue snapshot, by account and state."},
    {"slurm_archive_user_job_cpus", "CPUs of the jobs in the latest squeue snapshot, by user and state."},
    {"slurm_archive_job_memory_bytes", "Memory of the jobs in the latest squeue snapshot (the job's total asked for, "
                                       "what Slurm allocates), by state."},
    {"slurm_archive_partition_job_memory_bytes", "Memory of the jobs in the latest squeue snapshot, by partition and "
                                                 "state."},
    {"slurm_archive_account_job_memory_bytes", "Memory of the jobs in the latest squeue snapshot, by account and "
                                               "state."},
    {"slurm_archive_user_job_memory_bytes", "Memory of the jobs in the latest squeue snapshot, by user and state."},
    {"slurm_archive_finished_jobs", "Jobs that ended since the --since time, by final state."},
    {"slurm_archive_partition_finished_jobs", "Jobs that ended since the --since time, by partition and final state."},
    {"slurm_archive_account_finished_jobs", "Jobs that ended since the --since time, by account and final state."},
    {"slurm_archive_user_finished_jobs", "Jobs that ended since the --since time, by user and final state."},
    {"slurm_archive_finished_since_timestamp_seconds", "Start of the window of the finished-jobs metrics."},
    {"slurm_archive_nodes", "Nodes of the latest node snapshot, by exact state (base state and flags)."},
    {"slurm_archive_partition_nodes", "Nodes of the latest node snapshot, by partition and exact state."},
    {"slurm_archive_cpus", "CPUs of the latest node snapshot by node state and status: allocated, or the class "
                           "of the node's free CPUs as utilization --summary says it: idle, down (DOWN, FAIL, "
                           "DRAIN; and Slurm's other CPUs), planned_down (maintenance, powered down), reserved; "
                           "unknown (a grouped sinfo did not say the node's own)."},
    {"slurm_archive_cluster_cpus", "CPUs of the latest node snapshot."},
    {"slurm_archive_partition_cpus", "CPUs of the latest node snapshot by partition, node state and status, as "
                                     "slurm_archive_cpus (a node in two partitions counts in both)."},
    {"slurm_archive_memory_bytes", "Memory of the latest node snapshot by node state and status: allocated, or the "
                                   "class of its free memory: idle, stranded (no free CPU), down, planned_down, "
                                   "reserved; unknown (a grouped sinfo did not say the node's own)."},
    {"slurm_archive_partition_memory_bytes", "Memory of the latest node snapshot by partition, node state and "
                                             "status."},
    {"slurm_archive_cluster_memory_bytes", "Memory (RealMemory) of the latest node snapshot."},
    {"slurm_archive_gpus", "GPUs of the latest node snapshot by type, node state and status: allocated, or the "
                           "class of the idle ones: idle, stranded (no free CPU), down, planned_down, reserved; "
                           "unknown (carried GPUs of a node that may run jobs: in use or not, nobody said)."},
    {"slurm_archive_cluster_gpus", "GPUs of the latest node snapshot, by type."},
    {"slurm_archive_nodes_gpu_config", "Nodes of the latest node snapshot whose GPUs Slurm did not say per node "
                                       "(grouped sinfo --json), by config: carried (from an earlier per-node "
                                       "observation) or unknown (their GPUs are in no GPU metric)."},
    {"slurm_archive_nodes_snapshot_timestamp_seconds", "Time of the latest node snapshot."},
    {"slurm_archive_node_cpus", "--per-node: the node's CPUs in the latest node snapshot, with its exact state."},
    {"slurm_archive_node_cpus_alloc", "--per-node: the node's CPUs allocated to jobs (none when a grouped sinfo "
                                      "said only its group's)."},
    {"slurm_archive_node_memory_bytes", "--per-node: the node's memory (RealMemory)."},
    {"slurm_archive_node_memory_alloc_bytes", "--per-node: the node's memory allocated to jobs."},
    {"slurm_archive_node_gpus", "--per-node: the node's GPUs, by type."},
    {"slurm_archive_node_gpus_alloc", "--per-node: the node's GPUs allocated to jobs, by type (none when nobody "
                                      "said: GPUs carried from an earlier observation of a busy node)."},
    {"slurm_archive_scheduler_threads", "sdiag: server threads of slurmctld."},
    {"slurm_archive_scheduler_agent_queue_size", "sdiag: RPCs queued for agents."},
    {"slurm_archive_scheduler_dbd_agent_queue_size", "sdiag: messages queued for slurmdbd."},
    {"slurm_archive_scheduler_cycle_last_seconds", "sdiag: the last main scheduling cycle."},
    {"slurm_archive_scheduler_cycle_max_seconds", "sdiag: the longest main scheduling cycle."},
    {"slurm_archive_scheduler_cycle_mean_seconds", "sdiag: the mean main scheduling cycle."},
    {"slurm_archive_scheduler_cycle_mean_depth", "sdiag: jobs looked at per main scheduling cycle, mean."},
    {"slurm_archive_scheduler_cycles_per_minute", "sdiag: main scheduling cycles per minute."},
    {"slurm_archive_scheduler_queue_length", "sdiag: jobs pending in the main scheduler's queue."},
    {"slurm_archive_scheduler_jobs", "sdiag: jobs by event since the statistics were reset (midnight or a restart)."},
    {"slurm_archive_scheduler_backfill_active", "sdiag: 1 while a backfill cycle runs."},
    {"slurm_archive_scheduler_backfill_cycles", "sdiag: backfill cycles since the statistics were reset."},
    {"slurm_archive_scheduler_backfill_cycle_last_seconds", "sdiag: the last backfill cycle."},
    {"slurm_archive_scheduler_backfill_cycle_max_seconds", "sdiag: the longest backfill cycle."},
    {"slurm_archive_scheduler_backfill_cycle_mean_seconds", "sdiag: the mean backfill cycle."},
    {"slurm_archive_scheduler_backfill_depth_mean", "sdiag: jobs looked at per backfill cycle, mean."},
    {"slurm_archive_scheduler_backfill_queue_length", "sdiag: jobs pending in the backfill queue."},
    {"slurm_archive_scheduler_backfilled_jobs", "sdiag: jobs started by backfill since the statistics were reset."},
    {"slurm_archive_scheduler_rpcs", "sdiag: RPCs by message type since slurmctld started or sdiag --reset."},
    {"slurm_archive_scheduler_rpc_time_seconds", "sdiag: the total time of those RPCs, by message type."},
    {"slurm_archive_scheduler_user_rpcs", "sdiag: RPCs by user since slurmctld started or sdiag --reset."},
    {"slurm_archive_scheduler_user_rpc_time_seconds", "sdiag: the total time of those RPCs, by user."},
    {"slurm_archive_scheduler_sample_timestamp_seconds", "sdiag: when the statistics were taken."},
    {"slurm_archive_last_ingest_timestamp_seconds", "Time of the last successful ingest of each source."},
    {"slurm_archive_ingest_lag_seconds", "Age of the last successful ingest of each source when this was written."},
    {"slurm_archive_ingest_last_run_timestamp_seconds", "End of slurm-ingest's last recorded run."},
    {"slurm_archive_ingest_last_run_success", "1 when slurm-ingest's last recorded run succeeded, else 0."},
    {"slurm_archive_ingest_last_run_duration_seconds", "Duration of slurm-ingest's last recorded run."},
    {"slurm_archive_ingest_last_success_timestamp_seconds", "End of slurm-ingest's last successful run."},
    {"slurm_archive_report_timestamp_seconds", "When slurm-report wrote this file."},
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

typedef struct {
    char *labels; /* 'name="value",...' escaped */
    double value;
} sample_t;

struct sa_prom {
    sample_t *v[NMETRICS];
    size_t n[NMETRICS], cap[NMETRICS];
};

sa_prom_t *sa_prom_new(void)
{
    return calloc(1, sizeof(sa_prom_t));
}

void sa_prom_free(sa_prom_t *p)
{
    if (!p)
        return;
    for (size_t m = 0; m < NMETRICS; m++) {
        for (size_t i = 0; i < p->n[m]; i++)
            free(p->v[m][i].labels);
        free(p->v[m]);
    }
    free(p);
}

/* Writes a label value with backslash, quote and newline escaped. */
static void label_value(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\n')
            fputs("\\n", out);
        else {
            if (*s == '\\' || *s == '"')
                fputc('\\', out);
            fputc(*s, out);
        }
    }
}

/* The label text of the name, value pairs in ap. Caller frees; NULL on out of memory. */
static char *labels_text(va_list ap)
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    const char *k;
    bool first = true;

    if (!m)
        return NULL;
    while ((k = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        fprintf(m, "%s%s=\"", first ? "" : ",", k);
        label_value(m, v ? v : "");
        fputc('"', m);
        first = false;
    }
    return fclose(m) == 0 ? s : (free(s), NULL);
}

bool sa_prom_add(sa_prom_t *p, const char *metric, double value, bool merge, ...)
{
    size_t m = 0;
    va_list ap;
    char *labels;

    while (m < NMETRICS && strcmp(metrics[m].name, metric) != 0)
        m++;
    if (m == NMETRICS)
        return false;
    va_start(ap, merge);
    labels = labels_text(ap);
    va_end(ap);
    if (!labels)
        return false;
    for (size_t i = 0; merge && i < p->n[m]; i++) {
        if (strcmp(p->v[m][i].labels, labels) == 0) {
            p->v[m][i].value += value;
            free(labels);
            return true;
        }
    }
    if (!SA_VEC_GROW(p->v[m], p->cap[m], p->n[m], 1, 16)) {
        free(labels);
        return false;
    }
    p->v[m][p->n[m]].labels = labels;
    p->v[m][p->n[m]++].value = value;
    return true;
}

void sa_prom_value_text(double v, char buf[32])
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, 32, "%" PRId64, (int64_t)v);
    else
        snprintf(buf, 32, "%.9g", v);
}

bool sa_prom_each(const sa_prom_t *p, const char *metric, sa_prom_sample_fn fn, void *ctx)
{
    size_t m = 0;

    while (m < NMETRICS && strcmp(metrics[m].name, metric) != 0)
        m++;
    for (size_t i = 0; m < NMETRICS && i < p->n[m]; i++) {
        if (!fn(p->v[m][i].labels, p->v[m][i].value, ctx))
            return false;
    }
    return true;
}

bool sa_prom_label(const char *labels, const char *name, char **out)
{
    size_t nl = strlen(name);
    const char *s = labels;

    *out = NULL;
    while (s && *s) {
        /* at a label: NAME="VALUE" (label_value's escapes), then ',' or the end */
        const char *eq = strchr(s, '=');
        bool match = eq && (size_t)(eq - s) == nl && strncmp(s, name, nl) == 0;
        char *v = NULL;
        size_t n = 0;

        if (!eq || eq[1] != '"')
            return true; /* not label text: no such label */
        if (match && !(v = malloc(strlen(eq) + 1)))
            return false;
        for (s = eq + 2; *s && *s != '"'; s++) {
            char ch = *s;
            if (ch == '\\' && s[1]) {
                s++;
                ch = *s == 'n' ? '\n' : *s;
            }
            if (v)
                v[n++] = ch;
        }
        if (v) {
            v[n] = '\0';
            *out = v;
            return true;
        }
        s = *s ? s + 1 : s;
        if (*s == ',')
            s++;
    }
    return true;
}

bool sa_prom_write(const sa_prom_t *p, FILE *out)
{
    for (size_t m = 0; m < NMETRICS; m++) {
        if (!p->n[m])
            continue;
        fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", metrics[m].name, metrics[m].help, metrics[m].name);
        for (size_t i = 0; i < p->n[m]; i++) {
            char v[32];
            sa_prom_value_text(p->v[m][i].value, v);
            fprintf(out, "%s%s%s%s %s\n", metrics[m].name, p->v[m][i].labels[0] ? "{" : "", p->v[m][i].labels,
                    p->v[m][i].labels[0] ? "}" : "", v);
        }
    }
    return !ferror(out);
}

/* ---- nodes, CPUs, GPUs ----------------------------------------------------------------- */

typedef struct {
    sa_prom_t *p;
    const char *cluster;
    bool per_node;
} nodes_ctx_t;

#define MIB 1048576.0

/* Adds v to metric{cluster[,partition],state,status} (part NULL: no partition label). */
static bool add_status(sa_prom_t *p, const char *metric, double v, const char *cluster, const char *part,
                       const char *st, const char *status)
{
    return part ? sa_prom_add(p, metric, v, true, "cluster", cluster, "partition", part, "state", st, "status", status,
                              NULL)
                : sa_prom_add(p, metric, v, true, "cluster", cluster, "state", st, "status", status, NULL);
}

/*
 * Node n's CPUs and memory by status, of the cluster (part NULL) or of partition part: fc
 * is the class of the node's free resources (sa_tsdb_free_class). An idle CPU is never
 * stranded, and Slurm's "other" CPUs of a usable node are down, as utilization --summary
 * counts them (sa_tsdb_cpu_free_class).
 */
static bool cpu_mem(sa_prom_t *p, const char *cluster, const char *part, const sa_tsdb_node_t *n, const char *st,
                    sa_tsdb_free_t fc)
{
    const char *cm = part ? "slurm_archive_partition_cpus" : "slurm_archive_cpus";
    const char *mm = part ? "slurm_archive_partition_memory_bytes" : "slurm_archive_memory_bytes";
    bool ok = true;

    if (n->cpus_total != SA_UNSET) {
        if (n->cpus_alloc == SA_UNSET) /* a grouped sinfo said only its group's */
            ok = add_status(p, cm, (double)n->cpus_total, cluster, part, st, "unknown");
        else
            ok = add_status(p, cm, (double)n->cpus_alloc, cluster, part, st, "allocated");
        if (ok && n->cpus_idle != SA_UNSET)
            ok = add_status(p, cm, (double)n->cpus_idle, cluster, part, st,
                            sa_tsdb_free_name(sa_tsdb_cpu_free_class(fc, false)));
        if (ok && n->cpus_other != SA_UNSET)
            ok = add_status(p, cm, (double)n->cpus_other, cluster, part, st,
                            sa_tsdb_free_name(sa_tsdb_cpu_free_class(fc, true)));
    }
    if (ok && n->mem_total_mb != SA_UNSET) {
        int64_t alloc = n->mem_alloc_mb != SA_UNSET && n->mem_alloc_mb > 0 ? n->mem_alloc_mb : 0;
        int64_t free_mb = n->mem_total_mb > alloc ? n->mem_total_mb - alloc : 0;
        if (n->mem_alloc_mb == SA_UNSET)
            ok = add_status(p, mm, (double)n->mem_total_mb * MIB, cluster, part, st, "unknown");
        else
            ok = add_status(p, mm, (double)alloc * MIB, cluster, part, st, "allocated") &&
                 add_status(p, mm, (double)free_mb * MIB, cluster, part, st, sa_tsdb_free_name(fc));
    }
    return ok;
}

/* --per-node: node n's CPUs, memory and GPUs by type, configured and allocated, its exact state as a label. */
static bool per_node(sa_prom_t *p, const char *cluster, const sa_tsdb_node_t *n, const char *st, bool use_unknown)
{
    bool ok = true;
#define NODE_ADD(metric, v) sa_prom_add(p, metric, v, false, "cluster", cluster, "node", n->name, "state", st, NULL)
    if (n->cpus_total != SA_UNSET)
        ok = NODE_ADD("slurm_archive_node_cpus", (double)n->cpus_total);
    if (ok && n->cpus_alloc != SA_UNSET && n->cpu_config != SA_NODE_CPUS_SPLIT)
        ok = NODE_ADD("slurm_archive_node_cpus_alloc", (double)n->cpus_alloc);
    if (ok && n->mem_total_mb != SA_UNSET)
        ok = NODE_ADD("slurm_archive_node_memory_bytes", (double)n->mem_total_mb * MIB);
    if (ok && n->mem_alloc_mb != SA_UNSET)
        ok = NODE_ADD("slurm_archive_node_memory_alloc_bytes", (double)n->mem_alloc_mb * MIB);
#undef NODE_ADD
    for (size_t i = 0; ok && i < n->ngpus; i++) {
        const char *type = n->gpus[i].type && n->gpus[i].type[0] ? n->gpus[i].type : "(untyped)";
        ok = sa_prom_add(p, "slurm_archive_node_gpus", (double)n->gpus[i].total, false, "cluster", cluster, "node",
                         n->name, "state", st, "gpu_type", type, NULL) &&
             (use_unknown || sa_prom_add(p, "slurm_archive_node_gpus_alloc",
                                         (double)(n->gpus[i].used > 0 ? n->gpus[i].used : 0), false, "cluster",
                                         cluster, "node", n->name, "state", st, "gpu_type", type, NULL));
    }
    return ok;
}

/* Adds one node: its state, partitions, CPUs and memory by status, GPUs by type and status. */
static bool on_node(const sa_tsdb_node_t *n, void *vctx, sa_error_t *error)
{
    nodes_ctx_t *c = vctx;
    sa_prom_t *p = c->p;
    const char *st = n->state ? n->state : "UNKNOWN";
    sa_tsdb_free_t fc = sa_tsdb_free_class(n->state, (double)n->cpus_total, (double)n->cpus_idle, NULL);
    /* carried GPUs: none in use on an IDLE or DOWN node, else unknown */
    bool use_unknown = n->gpu_config == SA_NODE_GPUS_CARRIED && n->base && strcmp(n->base, "IDLE") != 0 &&
                       strcmp(n->base, "DOWN") != 0;
    bool ok = sa_prom_add(p, "slurm_archive_nodes", 1, true, "cluster", c->cluster, "state", st, NULL);
    char *parts = strdup(n->partitions ? n->partitions : "");

    ok = ok && parts;
    for (char *save = NULL, *t = parts ? strtok_r(parts, ",", &save) : NULL; ok && t; t = strtok_r(NULL, ",", &save))
        ok = sa_prom_add(p, "slurm_archive_partition_nodes", 1, true, "cluster", c->cluster, "partition", t, "state",
                         st, NULL) &&
             cpu_mem(p, c->cluster, t, n, st, fc);
    free(parts);
    ok = ok && cpu_mem(p, c->cluster, NULL, n, st, fc);
    if (ok && n->cpus_total != SA_UNSET)
        ok = sa_prom_add(p, "slurm_archive_cluster_cpus", (double)n->cpus_total, true, "cluster", c->cluster, NULL);
    if (ok && n->mem_total_mb != SA_UNSET)
        ok = sa_prom_add(p, "slurm_archive_cluster_memory_bytes", (double)n->mem_total_mb * MIB, true, "cluster",
                         c->cluster, NULL);
    if (ok && n->gpu_config != SA_NODE_GPUS_OBSERVED)
        ok = sa_prom_add(p, "slurm_archive_nodes_gpu_config", 1, true, "cluster", c->cluster, "config",
                         sa_node_gpu_config_name(n->gpu_config), NULL);
    for (size_t i = 0; ok && i < n->ngpus; i++) {
        const char *type = n->gpus[i].type && n->gpus[i].type[0] ? n->gpus[i].type : "(untyped)";
        int64_t used = n->gpus[i].used > 0 ? n->gpus[i].used : 0, idle = n->gpus[i].total - used;
        ok = sa_prom_add(p, "slurm_archive_cluster_gpus", (double)n->gpus[i].total, true, "cluster", c->cluster,
                         "gpu_type", type, NULL) &&
             sa_prom_add(p, "slurm_archive_gpus", (double)used, true, "cluster", c->cluster, "gpu_type", type,
                         "state", st, "status", "allocated", NULL) &&
             sa_prom_add(p, "slurm_archive_gpus", (double)(idle > 0 ? idle : 0), true, "cluster", c->cluster,
                         "gpu_type", type, "state", st, "status", use_unknown ? "unknown" : sa_tsdb_free_name(fc),
                         NULL);
    }
    if (ok && c->per_node)
        ok = per_node(p, c->cluster, n, st, use_unknown);
    if (!ok)
        sa_error_nomem(error);
    return ok;
}

/* The latest sdiag of the cluster's series (within the day before its last snapshot). */
typedef struct {
    sa_sdiag_t last;
    int64_t at;
} sdiag_ctx_t;

static bool on_sdiag(int64_t at, const sa_sdiag_t *sd, void *vctx, sa_error_t *error)
{
    sdiag_ctx_t *c = vctx;
    (void)error;
    c->last = *sd;
    c->last.extra = NULL;
    c->last.rpcs = NULL;
    c->last.nrpcs = 0;
    c->at = at;
    return true;
}

/* Adds one sdiag figure when sdiag gave it (scale: 1e-6 for microseconds to seconds). */
static bool sched(sa_prom_t *p, const char *cluster, const char *metric, int64_t v, double scale)
{
    return v == SA_UNSET || sa_prom_add(p, metric, (double)v * scale, false, "cluster", cluster, NULL);
}

/* The scheduler's figures of one sdiag. */
static bool sdiag_metrics(sa_prom_t *p, const char *cluster, const sa_sdiag_t *s)
{
    static const char *const events[5] = {"submitted", "started", "completed", "canceled", "failed"};
    int64_t jobs[5] = {s->jobs_submitted, s->jobs_started, s->jobs_completed, s->jobs_canceled, s->jobs_failed};
    const char *pre = "slurm_archive_scheduler_";
    char name[96];
    bool ok = true;
#define SCHED(suffix, v, scale) (snprintf(name, sizeof name, "%s%s", pre, suffix), sched(p, cluster, name, v, scale))

    ok = SCHED("threads", s->server_thread_count, 1) && SCHED("agent_queue_size", s->agent_queue_size, 1) &&
         SCHED("dbd_agent_queue_size", s->dbd_agent_queue_size, 1) &&
         SCHED("cycle_last_seconds", s->schedule_cycle_last, 1e-6) &&
         SCHED("cycle_max_seconds", s->schedule_cycle_max, 1e-6) &&
         SCHED("cycle_mean_seconds", s->schedule_cycle_mean, 1e-6) &&
         SCHED("cycle_mean_depth", s->schedule_cycle_mean_depth, 1) &&
         SCHED("cycles_per_minute", s->schedule_cycle_per_minute, 1) &&
         SCHED("queue_length", s->schedule_queue_length, 1) && SCHED("backfill_active", s->bf_active, 1) &&
         SCHED("backfill_cycles", s->bf_cycle_counter, 1) &&
         SCHED("backfill_cycle_last_seconds", s->bf_cycle_last, 1e-6) &&
         SCHED("backfill_cycle_max_seconds", s->bf_cycle_max, 1e-6) &&
         SCHED("backfill_cycle_mean_seconds", s->bf_cycle_mean, 1e-6) &&
         SCHED("backfill_depth_mean", s->bf_depth_mean, 1) && SCHED("backfill_queue_length", s->bf_queue_len, 1) &&
         SCHED("backfilled_jobs", s->bf_backfilled_jobs, 1) && SCHED("sample_timestamp_seconds", s->req_time, 1);
#undef SCHED
    for (int i = 0; ok && i < 5; i++) {
        if (jobs[i] != SA_UNSET)
            ok = sa_prom_add(p, "slurm_archive_scheduler_jobs", (double)jobs[i], false, "cluster", cluster, "event",
                             events[i], NULL);
    }
    return ok;
}

typedef struct {
    sa_prom_t *p;
    const char *cluster;
} rpc_ctx_t;

/* One RPC count of the latest sdiag: its count and total time, by message type or by user. */
static bool on_rpc(const sa_sdiag_rpc_t *r, void *vctx, sa_error_t *error)
{
    rpc_ctx_t *c = vctx;
    bool user = r->kind == SA_SDIAG_RPC_USER;
    const char *label = user ? "user" : "operation";
    bool ok = sa_prom_add(c->p, user ? "slurm_archive_scheduler_user_rpcs" : "slurm_archive_scheduler_rpcs",
                          (double)r->count, false, "cluster", c->cluster, label, r->name, NULL) &&
              (r->total_time == SA_UNSET ||
               sa_prom_add(c->p,
                           user ? "slurm_archive_scheduler_user_rpc_time_seconds"
                                : "slurm_archive_scheduler_rpc_time_seconds",
                           (double)r->total_time * 1e-6, false, "cluster", c->cluster, label, r->name, NULL));
    return ok || sa_error_nomem(error);
}

bool sa_prom_nodes(sa_prom_t *p, sa_tsdb_t *db, const char *cluster, bool per_node, sa_error_t *error)
{
    nodes_ctx_t c = {p, cluster, per_node};
    rpc_ctx_t rc = {p, cluster};
    sdiag_ctx_t sc;
    int64_t at;

    if (!sa_tsdb_last_snapshot(db, cluster, &at, error))
        return false;
    if (at != SA_UNSET) {
        if (!sa_tsdb_nodes_at(db, cluster, at, on_node, &c, error))
            return false;
        if (!sa_prom_add(p, "slurm_archive_nodes_snapshot_timestamp_seconds", (double)at, false, "cluster", cluster,
                         NULL)) {
            sa_error_nomem(error);
            return false;
        }
    }
    memset(&sc, 0, sizeof sc);
    sc.at = SA_UNSET;
    if (!sa_tsdb_sdiag_range(db, cluster, (at == SA_UNSET ? 0 : at) - 86400, INT64_MAX / 2, on_sdiag, &sc, error))
        return false;
    if (sc.at != SA_UNSET && !sdiag_metrics(p, cluster, &sc.last)) {
        sa_error_nomem(error);
        return false;
    }
    return sc.at == SA_UNSET || sa_tsdb_sdiag_rpcs(db, cluster, sc.at, on_rpc, &rc, error);
}

/* ---- the ingester ------------------------------------------------------------------------ */

typedef struct {
    int64_t started, finished;
    bool ok, found;
} run_ctx_t;

static bool on_run(const bson_t *doc, void *vctx, sa_error_t *error)
{
    run_ctx_t *r = vctx;
    sa_ringest_run_t f;
    (void)error;
    sa_ringest_run_read(doc, &f);
    r->found = true;
    r->started = f.started_at;
    r->finished = f.finished_at;
    r->ok = f.has_ok && f.ok_flag;
    return true;
}

/* The latest ingest run of cluster c (only_ok: the latest successful one) into *r: its latest days first. */
static bool last_run(sa_rdb_t *db, const sa_rcluster_t *c, bool only_ok, run_ctx_t *r, sa_error_t *error)
{
    const sa_rdb_runs_query_t q = {.from = SA_UNSET, .to = SA_UNSET, .ok = only_ok ? 1 : -1, .newest_first = true,
                                   .limit = 1};
    memset(r, 0, sizeof *r);
    return sa_rdb_ingest_runs(db, c, &q, on_run, r, error);
}

bool sa_prom_ingest(sa_prom_t *p, sa_rdb_t *db, const sa_rcluster_t *c, int64_t now, sa_error_t *error)
{
    static const char *const src[3] = {"squeue", "sinfo", "sacct"};
    int64_t times[3] = {c->last_squeue_at, c->last_sinfo_at, c->last_sacct_at};
    run_ctx_t last, good;
    bool ok = true;

    for (int i = 0; ok && i < 3; i++) {
        if (times[i] == SA_UNSET)
            continue;
        ok = sa_prom_add(p, "slurm_archive_last_ingest_timestamp_seconds", (double)times[i], false, "cluster",
                         c->name, "source", src[i], NULL) &&
             sa_prom_add(p, "slurm_archive_ingest_lag_seconds", (double)(now - times[i]), false, "cluster", c->name,
                         "source", src[i], NULL);
    }
    if (!ok) {
        sa_error_nomem(error);
        return false;
    }
    if (!last_run(db, c, false, &last, error) || !last_run(db, c, true, &good, error))
        return false;
    if (last.found && last.finished != SA_UNSET)
        ok = sa_prom_add(p, "slurm_archive_ingest_last_run_timestamp_seconds", (double)last.finished, false,
                         "cluster", c->name, NULL) &&
             sa_prom_add(p, "slurm_archive_ingest_last_run_success", last.ok ? 1 : 0, false, "cluster", c->name,
                         NULL) &&
             (last.started == SA_UNSET ||
              sa_prom_add(p, "slurm_archive_ingest_last_run_duration_seconds", (double)(last.finished - last.started),
                          false, "cluster", c->name, NULL));
    if (ok && good.found && good.finished != SA_UNSET)
        ok = sa_prom_add(p, "slurm_archive_ingest_last_success_timestamp_seconds", (double)good.finished, false,
                         "cluster", c->name, NULL);
    if (!ok)
        sa_error_nomem(error);
    return ok;
}
