/*
 * sa_jobreport.c - `slurm-report job [-M CLUSTER] JOBID`: one job's whole story from the
 * archive. Its identity, every history entry, every run with its nodes, GPUs by type,
 * its steps and what Slurm measured of them, the efficiency lines seff prints, and
 * notes on requeues and on the job id's reuse (documents in jobs_superseded).
 *
 * The story is the preamble (the table and HTML; stderr under -v with -p, -P, CSV) and
 * the "jobs" member (JSON); the table has one row per run and per step, so every format
 * carries the same figures.
 * JOBID is the raw id (JobIDRaw) or the id as Slurm shows it (123_4, 123+1). The
 * documents of jobs_superseded come first, by submit time (the earlier jobs that had the
 * id), then the current one. As with sacct -j, an array's id shows every task (each is a
 * document of its own, keyed by its raw id) and a het job's leader every component, with
 * a summary line first; 123_4 and 123+1 show that task or component.
 */
#include "sa_rcommon.h"
#include "sa_efficiency.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_jobsvg.h"
#include "sa_vec.h"
#include "sa_rutil.h"

enum { J_COLL, J_CLUSTER, J_JOBID, J_RUN, J_STEP, J_NAME, J_STATE, J_START, J_END, J_ELAPSED, J_NODES, J_CPUS,
       J_GPUS, J_GPU_TYPES, J_CPU_S, J_CPU_EFF, J_MAXRSS, J_MEM_EFF, J_GPU_UTIL, J_GPU_MEM, J_ENERGY, J_EXIT,
       J_UTIL_SRC, J_N };

static const sa_col_t job_cols[J_N] = {
    [J_COLL] = {"document", "Doc", SA_COL_STR, 0, SA_COL_LONG},
    [J_CLUSTER] = {"cluster", "Cluster", SA_COL_STR, 0, 0},
    [J_JOBID] = {"job_id", "JobID", SA_COL_STR, 0, 0},
    [J_RUN] = {"run", "Run", SA_COL_INT, 0, 0},
    [J_STEP] = {"step", "Step", SA_COL_STR, 0, 0},
    [J_NAME] = {"name", "Name", SA_COL_STR, 0, SA_COL_LONG},
    [J_STATE] = {"state", "State", SA_COL_STR, 0, 0},
    [J_START] = {"start", "Start", SA_COL_STR, 0, 0},
    [J_END] = {"end", "End", SA_COL_STR, 0, SA_COL_LONG},
    [J_ELAPSED] = {"elapsed_s", "Elapsed s", SA_COL_INT, 0, 0},
    [J_NODES] = {"nodes", "Nodes", SA_COL_STR, 0, 0},
    [J_CPUS] = {"cpus", "CPUs", SA_COL_INT, 0, 0},
    [J_GPUS] = {"gpus", "GPUs", SA_COL_INT, 0, 0},
    [J_GPU_TYPES] = {"gpu_types", "GPU types", SA_COL_STR, 0, SA_COL_LONG},
    [J_CPU_S] = {"total_cpu_s", "TotalCPU s", SA_COL_NUM, 3, 0},
    [J_CPU_EFF] = {"cpu_efficiency_percent", "CPU eff %", SA_COL_NUM, 2, 0},
    [J_MAXRSS] = {"max_rss_bytes", "MaxRSS", SA_COL_INT, 0, 0},
    [J_MEM_EFF] = {"mem_efficiency_percent", "Mem eff %", SA_COL_NUM, 2, 0},
    [J_GPU_UTIL] = {"gpu_util_percent", "GPU util %", SA_COL_NUM, 1, 0},
    [J_GPU_MEM] = {"gpu_mem_bytes", "GPU mem", SA_COL_INT, 0, SA_COL_LONG},
    [J_ENERGY] = {"energy_j", "Energy J", SA_COL_INT, 0, SA_COL_LONG},
    [J_EXIT] = {"exit", "Exit", SA_COL_STR, 0, SA_COL_LONG},
    [J_UTIL_SRC] = {"gpu_util_source", "Util source", SA_COL_STR, 0, SA_COL_LONG},
};

const sa_col_t *sa_job_cols(size_t *n)
{
    *n = J_N;
    return job_cols;
}

/* What the documents of the id say it is (one per cluster): a plain job, an array, a het job. */
typedef struct {
    char *cluster;
    int64_t array_job_id, het_job_id; /* of the document whose raw id was asked for */
} jr_kind_t;

typedef struct {
    const char *coll;   /* the collection being read */
    sa_rtable_t t;
    sa_strv_t pre;
    json_t *jobs;       /* the stories, for JSON */
    size_t ndocs, nsuperseded;
    sa_jobview_t view;
    /* the members of an array or het job shown (the summary line) */
    bool in_members;         /* the documents read are the members */
    size_t nmembers;
    sa_strv_t member_states;
    sa_strv_t pending_tasks;  /* the ids of array meta-records: tasks not yet started (123_[4-10%2]) */ /* "STATE" once per member */
    jr_kind_t kinds[16];
    size_t nkinds;
    json_t *summaries;       /* the summary of each array or het job shown, for JSON */
    const sa_report_opts_t *o;
    FILE *warn;
    sa_jsvg_run_t *svg;      /* --svg: a panel per GPU run */
    size_t nsvg, svgcap;
} jr_t;

/* ---- formatting ------------------------------------------------------------------------- */

/* seconds -> "[D-]HH:MM:SS" (seff's and sacct's form) into buf, rounded to the second. */
static const char *hms(double secs, char *buf, size_t n)
{
    return sa_rhms((int64_t)(secs + 0.5), buf, n);
}

/* bytes -> "1.23 GB" with seff's 1024-based units into buf. */
static const char *size_str(int64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, "%.2f %s", v, units[u]);
    return buf;
}

/* "a100:2,h100:1" (untyped: "gpu:N") into buf. */
static const char *types_str(const sa_jobview_run_t *r, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < r->ngpu_types && len < n; k++) {
        const char *t = r->gpu_types[k].type && r->gpu_types[k].type[0] ? r->gpu_types[k].type : "gpu";
        int w = snprintf(buf + len, n - len, "%s%s:%" PRId64, k ? "," : "", t, r->gpu_types[k].count);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* ---- rows ------------------------------------------------------------------------------- */

static size_t new_row(jr_t *jr, size_t run, sa_error_t *error)
{
    const sa_jobview_t *j = &jr->view;
    size_t r = sa_rtable_add_row(&jr->t);
    char id[32];
    if (r == SIZE_MAX) {
        sa_error_nomem(error);
        return r;
    }
    snprintf(id, sizeof id, "%" PRId64, j->job_id);
    sa_rtable_str(&jr->t, r, J_COLL, jr->coll);
    sa_rtable_str(&jr->t, r, J_CLUSTER, j->cluster);
    sa_rtable_str(&jr->t, r, J_JOBID, j->job_id_display ? j->job_id_display : id);
    sa_rtable_int(&jr->t, r, J_RUN, (int64_t)run + 1);
    return r;
}

/* The usage cells both a run row and a step row have. */
static void usage_cells(jr_t *jr, size_t r, const sa_stats_t *u)
{
    if (u->cpu_s >= 0)
        sa_rtable_num(&jr->t, r, J_CPU_S, u->cpu_s);
    if (u->max_rss_bytes != SA_UNSET)
        sa_rtable_int(&jr->t, r, J_MAXRSS, u->max_rss_bytes);
    if (u->gpu_mem_bytes != SA_UNSET)
        sa_rtable_int(&jr->t, r, J_GPU_MEM, u->gpu_mem_bytes);
    if (u->energy_j != SA_UNSET)
        sa_rtable_int(&jr->t, r, J_ENERGY, u->energy_j);
}

static void exit_cell(jr_t *jr, size_t r, int code, int sig)
{
    char buf[32];
    if (code < 0)
        return;
    snprintf(buf, sizeof buf, "%d:%d", code, sig < 0 ? 0 : sig);
    sa_rtable_str(&jr->t, r, J_EXIT, buf);
}

/* One row for run i and one per step. */
static bool run_rows(jr_t *jr, size_t i, const sa_eff_run_t *f, sa_error_t *error)
{
    const sa_jobview_run_t *run = &jr->view.runs[i];
    char buf[256];
    size_t r = new_row(jr, i, error);

    if (r == SIZE_MAX)
        return false;
    sa_rtable_str(&jr->t, r, J_NAME, jr->view.name);
    sa_rtable_str(&jr->t, r, J_STATE, run->state);
    sa_rtable_str(&jr->t, r, J_START, run->start != SA_UNSET ? sa_riso(run->start) : NULL);
    sa_rtable_str(&jr->t, r, J_END, run->end != SA_UNSET ? sa_riso(run->end) : NULL);
    if (f->elapsed_s != SA_UNSET)
        sa_rtable_int(&jr->t, r, J_ELAPSED, f->elapsed_s);
    sa_rtable_str(&jr->t, r, J_NODES, run->nodes);
    if (run->cpus != SA_UNSET)
        sa_rtable_int(&jr->t, r, J_CPUS, run->cpus);
    sa_rtable_int(&jr->t, r, J_GPUS, run->gpus);
    if (run->ngpu_types)
        sa_rtable_str(&jr->t, r, J_GPU_TYPES, types_str(run, buf, sizeof buf));
    usage_cells(jr, r, &run->usage);
    if (f->has_cpu)
        sa_rtable_num(&jr->t, r, J_CPU_EFF, 100.0 * f->cpu_used_s / f->cpu_alloc_s);
    if (f->has_mem)
        sa_rtable_num(&jr->t, r, J_MEM_EFF, 100.0 * (double)f->mem_used_bytes / (double)f->mem_req_bytes);
    if (f->has_util) {
        sa_rtable_num(&jr->t, r, J_GPU_UTIL, f->gpu_util_pct);
        sa_rtable_str(&jr->t, r, J_UTIL_SRC, sa_eff_src_name(f->util_src));
    }
    exit_cell(jr, r, run->exit_code, run->exit_signal);
    for (size_t k = 0; k < run->nsteps; k++) {
        const sa_jobview_step_t *s = &run->steps[k];
        if ((r = new_row(jr, i, error)) == SIZE_MAX)
            return false;
        sa_rtable_str(&jr->t, r, J_STEP, s->id ? s->id : "?");
        sa_rtable_str(&jr->t, r, J_NAME, s->name);
        sa_rtable_str(&jr->t, r, J_STATE, s->state);
        sa_rtable_str(&jr->t, r, J_START, s->start != SA_UNSET ? sa_riso(s->start) : NULL);
        sa_rtable_str(&jr->t, r, J_END, s->end != SA_UNSET ? sa_riso(s->end) : NULL);
        if (s->elapsed_s != SA_UNSET)
            sa_rtable_int(&jr->t, r, J_ELAPSED, s->elapsed_s);
        sa_rtable_str(&jr->t, r, J_NODES, s->nodes);
        if (s->cpus != SA_UNSET)
            sa_rtable_int(&jr->t, r, J_CPUS, s->cpus);
        sa_rtable_int(&jr->t, r, J_GPUS, s->gpus);
        usage_cells(jr, r, &s->usage);
        if (s->usage.gpu_util_pct >= 0)
            sa_rtable_num(&jr->t, r, J_GPU_UTIL, s->usage.gpu_util_pct); /* Slurm's figure, over the tasks */
        exit_cell(jr, r, s->exit_code, s->exit_signal);
    }
    return true;
}

/* ---- the story -------------------------------------------------------------------------- */

/*
 * "Submit: ...  Start: ...  End: ...": a job that has not started says so and gives
 * squeue's forecast (expected_start), a running job its expected end.
 */
static void story_times(jr_t *jr)
{
    const sa_jobview_t *j = &jr->view;
    char start[80], end[80];

    if (j->start != SA_UNSET)
        snprintf(start, sizeof start, "%s", sa_riso(j->start));
    else if (j->final)
        snprintf(start, sizeof start, "never (it ended before it started)");
    else if (j->expected_start != SA_UNSET)
        snprintf(start, sizeof start, "not yet, expected %s (forecast)", sa_riso(j->expected_start));
    else
        snprintf(start, sizeof start, "not yet (no forecast)");
    if (j->end != SA_UNSET)
        snprintf(end, sizeof end, "%s", sa_riso(j->end));
    else if (j->final)
        snprintf(end, sizeof end, "unknown");
    else if (j->start != SA_UNSET && j->expected_end != SA_UNSET)
        snprintf(end, sizeof end, "not yet, expected by %s (time limit)", sa_riso(j->expected_end));
    else
        snprintf(end, sizeof end, "not yet");
    sa_rpreamble_add(&jr->pre, "Submit: %s  Start: %s  End: %s", sa_riso(j->submit), start, end);
}

/* The identity lines of the job at hand. */
static void story_identity(jr_t *jr)
{
    const sa_jobview_t *j = &jr->view;
    char a[32], b[32], c[32];

    sa_rpreamble_add(&jr->pre, "Job ID: %s (raw %" PRId64 ")%s", j->job_id_display ? j->job_id_display : "?",
                     j->job_id, strcmp(jr->coll, "jobs") == 0 ? "" : " - an earlier job that had this id (jobs_superseded)");
    sa_rpreamble_add(&jr->pre, "Cluster: %s  Name: %s", j->cluster ? j->cluster : "?", j->name ? j->name : "");
    sa_rpreamble_add(&jr->pre, "User/Account: %s/%s  Partition: %s  QOS: %s", j->user ? j->user : "?",
                     j->account ? j->account : "?", j->partition ? j->partition : "?", j->qos ? j->qos : "?");
    if (j->exit_code >= 0)
        sa_rpreamble_add(&jr->pre, "State: %s (exit code %d, signal %d)", j->state ? j->state : "?", j->exit_code,
                         j->exit_signal < 0 ? 0 : j->exit_signal);
    else
        sa_rpreamble_add(&jr->pre, "State: %s", j->state ? j->state : "?");
    story_times(jr);
    snprintf(a, sizeof a, "%" PRId64, j->req_cpus);
    sa_rpreamble_add(&jr->pre, "Requested: %s CPUs, %s memory, %" PRId64 " GPUs; time limit %s",
                     j->req_cpus != SA_UNSET ? a : "?",
                     j->req_mem_mb != SA_UNSET ? size_str(j->req_mem_mb * 1048576, b, sizeof b) : "?", j->req_gpus,
                     j->time_limit_unlimited ? "UNLIMITED"
                     : j->time_limit_min == SA_UNSET ? "?" : hms((double)j->time_limit_min * 60, c, sizeof c));
    for (size_t i = 0; i < j->nhistory; i++) {
        const sa_jobview_hist_t *h = &j->history[i];
        bool why = h->reason && strcmp(h->reason, "None") != 0;
        sa_rpreamble_add(&jr->pre, "History: %s %s%s%s%s", h->at != SA_UNSET ? sa_riso(h->at) : "?",
                         h->state ? h->state : "?", h->observed ? " (first seen then)" : "",
                         why ? " reason " : "", why ? h->reason : "");
    }
    if (j->nruns > 1 || (j->restart_cnt != SA_UNSET && j->restart_cnt > 0))
        sa_rpreamble_add(&jr->pre, "Requeued: %zu runs, restart count %" PRId64, j->nruns,
                         j->restart_cnt == SA_UNSET ? (int64_t)j->nruns - 1 : j->restart_cnt);
}

/* "41.7%", or "unknown" for a figure the import did not store (negative). */
static const char *pct_or_unknown(double v, char *buf, size_t n)
{
    if (v < 0)
        return "unknown";
    snprintf(buf, n, "%.1f%%", v);
    return buf;
}

static const char *idle_h(double s, char *buf, size_t n)
{
    snprintf(buf, n, "%.2f GPU-hours", s / 3600.0);
    return buf;
}

/* The Prometheus import's figures of run r (runs[].prom), when it has them; "unknown" for those it has not. */
static void story_prom(jr_t *jr, const sa_jobview_run_t *r)
{
    const sa_jobview_prom_t *p = &r->prom;
    char a[64], b[64], c[64];

    if (!p->has || p->gpu_series == 0) {
        if (p->has && r->gpus > 0)
            sa_rpreamble_add(&jr->pre, "  Prometheus (%s, read %s): no GPU series", p->exporter ? p->exporter : "?",
                             p->read_at != SA_UNSET ? sa_riso(p->read_at) : "?");
        return;
    }
    sa_rpreamble_add(&jr->pre, "  Prometheus (%s, read %s): %" PRId64 " GPU series", p->exporter ? p->exporter : "?",
                     p->read_at != SA_UNSET ? sa_riso(p->read_at) : "?", p->gpu_series);
    if (p->gpu_util_mean >= 0)
        sa_rpreamble_add(&jr->pre, "    GPU utilisation: mean %.1f%%, median %s, max %s; idle (under %g%%) %s",
                         p->gpu_util_mean, pct_or_unknown(p->gpu_util_p50, a, sizeof a),
                         pct_or_unknown(p->gpu_util_max, b, sizeof b), p->idle_pct >= 0 ? p->idle_pct : 5.0,
                         p->idle_gpu_s >= 0 ? idle_h(p->idle_gpu_s, c, sizeof c) : "unknown");
    if (p->gpu_mem_max_bytes >= 0)
        sa_rpreamble_add(&jr->pre, "    GPU memory: max %s, mean %s", size_str(llround(p->gpu_mem_max_bytes), a, sizeof a),
                         p->gpu_mem_mean_bytes >= 0 ? size_str(llround(p->gpu_mem_mean_bytes), b, sizeof b) : "unknown");
    if (p->gpu_power_mean_w >= 0)
        sa_rpreamble_add(&jr->pre, "    GPU power: %.0f W per GPU on average", p->gpu_power_mean_w);
    if (p->sm_occupancy_mean >= 0)
        sa_rpreamble_add(&jr->pre, "    SM occupancy: %.1f%%", p->sm_occupancy_mean);
    if (p->cpu_cores_mean >= 0)
        sa_rpreamble_add(&jr->pre, "    CPU cores used: %.2f on average", p->cpu_cores_mean);
    if (p->mem_max_bytes >= 0)
        sa_rpreamble_add(&jr->pre, "    Memory: max %s on one node", size_str(llround(p->mem_max_bytes), a, sizeof a));
}

/* seff's lines for run i (figures f). */
static void story_run(jr_t *jr, size_t i, const sa_eff_run_t *f)
{
    const sa_jobview_run_t *r = &jr->view.runs[i];
    const sa_stats_t *u = &r->usage;
    char a[64], b[64], t[256];

    sa_rpreamble_add(&jr->pre, "Run %zu: %s to %s, %s, on %s (%" PRId64 " nodes), %" PRId64 " CPUs, %" PRId64
                     " GPUs%s%s%s", i + 1, sa_riso(r->start), r->end != SA_UNSET ? sa_riso(r->end) : "(running)",
                     r->state ? r->state : "?", r->nodes ? r->nodes : "?", r->node_count == SA_UNSET ? 0 : r->node_count,
                     r->cpus == SA_UNSET ? 0 : r->cpus, r->gpus, r->ngpu_types ? " (" : "",
                     r->ngpu_types ? types_str(r, t, sizeof t) : "", r->ngpu_types ? ")" : "");
    if (f->elapsed_s != SA_UNSET)
        sa_rpreamble_add(&jr->pre, "  Job Wall-clock time: %s", hms((double)f->elapsed_s, a, sizeof a));
    if (u->cpu_s >= 0)
        sa_rpreamble_add(&jr->pre, "  CPU Utilized: %s", hms(u->cpu_s, a, sizeof a));
    if (f->has_cpu)
        sa_rpreamble_add(&jr->pre, "  CPU Efficiency: %.2f%% of %s core-walltime%s", 100.0 * f->cpu_used_s /
                         f->cpu_alloc_s, hms(f->cpu_alloc_s, b, sizeof b),
                         f->cpu_src == SA_EFF_SRC_PROM ? " (Prometheus: CPU cores used on average)" : "");
    else
        sa_rpreamble_add(&jr->pre, "  CPU Efficiency: unknown (Slurm gathered no TotalCPU for this run)");
    if (u->max_rss_bytes != SA_UNSET)
        sa_rpreamble_add(&jr->pre, "  Memory Utilized: %s", size_str(u->max_rss_bytes, a, sizeof a));
    if (f->has_mem)
        sa_rpreamble_add(&jr->pre, "  Memory Efficiency: %.2f%% of %s%s", 100.0 * (double)f->mem_used_bytes /
                         (double)f->mem_req_bytes, size_str(f->mem_req_bytes, b, sizeof b),
                         f->mem_src == SA_EFF_SRC_PROM ? " (Prometheus: the most used on one node)" : "");
    else
        sa_rpreamble_add(&jr->pre, "  Memory Efficiency: unknown (no MaxRSS or no requested memory)");
    if (r->gpus > 0 && f->has_util && f->util_src == SA_EFF_SRC_PROM)
        sa_rpreamble_add(&jr->pre, "  GPU Utilization: %.1f%% per allocated GPU (Prometheus)", f->gpu_util_pct);
    else if (r->gpus > 0 && f->has_util)
        sa_rpreamble_add(&jr->pre, "  GPU Utilization: %.1f%% per allocated GPU%s%s (sacct)", f->gpu_util_pct,
                         u->gpu_mem_bytes != SA_UNSET ? ", GPU memory " : "",
                         u->gpu_mem_bytes != SA_UNSET ? size_str(u->gpu_mem_bytes, a, sizeof a) : "");
    else if (r->gpus > 0)
        sa_rpreamble_add(&jr->pre, "  GPU Utilization: no usage data (Slurm gathered no gres/gpuutil%s)",
                         r->prom.has ? "; Prometheus had no series of it" : "");
    story_prom(jr, r);
}

/* A run's figures' sources and its runs[].prom, into its JSON. */
static void run_json_sources(json_t *o, const sa_jobview_run_t *r, const sa_eff_run_t *f)
{
    static const char *const keys[] = {"gpu_util_mean", "gpu_util_p50", "gpu_util_max", "idle_gpu_s", "idle_pct",
                                       "gpu_mem_max_bytes", "gpu_mem_mean_bytes", "gpu_power_mean_w",
                                       "sm_occupancy_mean", "cpu_cores_mean", "mem_max_bytes"};
    const sa_jobview_prom_t *p = &r->prom;
    const double v[] = {p->gpu_util_mean, p->gpu_util_p50, p->gpu_util_max, p->idle_gpu_s, p->idle_pct,
                        p->gpu_mem_max_bytes, p->gpu_mem_mean_bytes, p->gpu_power_mean_w, p->sm_occupancy_mean,
                        p->cpu_cores_mean, p->mem_max_bytes};
    json_t *pj;

    if (!o)
        return;
    json_object_set_new(o, "gpu_util_source", json_string(sa_eff_src_name(f->util_src)));
    json_object_set_new(o, "cpu_source", json_string(sa_eff_src_name(f->cpu_src)));
    json_object_set_new(o, "mem_source", json_string(sa_eff_src_name(f->mem_src)));
    if (!p->has)
        return;
    pj = json_pack("{s:s, s:s?, s:s?, s:I}", "source", "prometheus", "exporter", p->exporter, "read_at",
                   p->read_at != SA_UNSET ? sa_riso(p->read_at) : NULL, "gpu_series", (json_int_t)p->gpu_series);
    for (size_t k = 0; pj && k < sizeof keys / sizeof keys[0]; k++)
        json_object_set_new(pj, keys[k], v[k] >= 0 ? json_real(v[k]) : json_null());
    json_object_set_new(o, "prom", pj);
}

/* The JSON story of the job at hand. */
static json_t *story_json(jr_t *jr)
{
    const sa_jobview_t *j = &jr->view;
    json_t *o = json_pack("{s:s, s:s?, s:I, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}", "document", jr->coll,
                          "cluster", j->cluster, "job_id", (json_int_t)j->job_id, "job_id_display", j->job_id_display,
                          "name", j->name, "user", j->user, "account", j->account, "partition", j->partition, "qos",
                          j->qos, "state", j->state);
    json_t *hist = json_array(), *runs = json_array();

    json_object_set_new(o, "submit", j->submit != SA_UNSET ? json_string(sa_riso(j->submit)) : json_null());
    json_object_set_new(o, "start", j->start != SA_UNSET ? json_string(sa_riso(j->start)) : json_null());
    json_object_set_new(o, "end", j->end != SA_UNSET ? json_string(sa_riso(j->end)) : json_null());
    json_object_set_new(o, "expected_start",
                        j->expected_start != SA_UNSET && j->start == SA_UNSET && !j->final
                            ? json_string(sa_riso(j->expected_start)) : json_null());
    json_object_set_new(o, "req_mem_mb", j->req_mem_mb != SA_UNSET ? json_integer(j->req_mem_mb) : json_null());
    json_object_set_new(o, "restart_cnt", j->restart_cnt != SA_UNSET ? json_integer(j->restart_cnt) : json_null());
    for (size_t i = 0; i < j->nhistory; i++)
        json_array_append_new(hist, json_pack("{s:s?, s:s?, s:s?, s:b}", "state", j->history[i].state, "at",
                                              j->history[i].at != SA_UNSET ? sa_riso(j->history[i].at) : NULL,
                                              "reason", j->history[i].reason, "observed", j->history[i].observed));
    for (size_t i = 0; i < j->nruns; i++) {
        const sa_jobview_run_t *r = &j->runs[i];
        sa_eff_run_t f;
        json_t *u = sa_stats_to_json(&r->usage);
        sa_eff_run(j, r, &f);
        json_array_append_new(runs, json_pack("{s:I, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o}", "run", (json_int_t)i + 1,
                                              "start", r->start != SA_UNSET ? sa_riso(r->start) : NULL, "end",
                                              r->end != SA_UNSET ? sa_riso(r->end) : NULL, "nodes", r->nodes, "usage",
                                              u ? u : json_object(), "cpu_efficiency_percent",
                                              f.has_cpu ? json_real(100.0 * f.cpu_used_s / f.cpu_alloc_s) : json_null(),
                                              "mem_efficiency_percent",
                                              f.has_mem ? json_real(100.0 * (double)f.mem_used_bytes /
                                                                    (double)f.mem_req_bytes)
                                                        : json_null(),
                                              "gpu_util_percent", f.has_util ? json_real(f.gpu_util_pct) : json_null()));
        run_json_sources(json_array_get(runs, json_array_size(runs) - 1), r, &f);
    }
    json_object_set_new(o, "history", hist);
    json_object_set_new(o, "runs", runs);
    return o;
}

/* --svg: the panel of GPU run i of the job at hand (the series from --prometheus-url, else the stored summary). */
static bool svg_run(jr_t *jr, size_t i, const sa_eff_run_t *f, sa_error_t *error)
{
    const sa_jobview_t *j = &jr->view;
    const sa_jobview_run_t *r = &j->runs[i];
    sa_jsvg_run_t *p;
    sa_error_t err;
    char t[256];

    if (r->gpus <= 0 || r->start == SA_UNSET || r->end == SA_UNSET || r->end <= r->start)
        return true;
    if (!SA_VEC_GROW(jr->svg, jr->svgcap, jr->nsvg, 1, 4))
        return sa_error_nomem(error);
    p = &jr->svg[jr->nsvg++];
    memset(p, 0, sizeof *p);
    p->start = r->start;
    p->end = r->end;
    if (!(p->label = sa_rprintf("%s %s, run %zu: %s, %" PRId64 " GPUs (%s)", j->cluster ? j->cluster : "?",
                                j->job_id_display ? j->job_id_display : "?", i + 1, j->name ? j->name : "",
                                r->gpus, r->ngpu_types ? types_str(r, t, sizeof t) : "gpu")))
        return sa_error_nomem(error);
    if (r->prom.has && r->prom.gpu_util_mean >= 0) {
        p->has_summary = true;
        p->mean = r->prom.gpu_util_mean;
        p->p50 = r->prom.gpu_util_p50;
        p->max = r->prom.gpu_util_max;
        p->source = "the summary slurm-ingest stored from Prometheus: mean, median, max";
    } else if (f->has_util) {
        p->has_summary = true;
        p->mean = p->p50 = p->max = f->gpu_util_pct;
        p->source = "Slurm's gres/gpuutil (one figure per run)";
    } else {
        p->source = "no GPU utilisation stored";
    }
    sa_error_clear(&err);
    if (jr->o->prometheus_url &&
        !sa_jsvg_fetch(p, jr->o->prometheus_url, jr->o->prometheus_exporter, j->job_id, &err))
        fprintf(jr->warn ? jr->warn : stderr, "slurm-report: warning: %s; drawing the stored figures\n", err.message);
    return true;
}

/* One document of the job: its story, its rows. */
static bool on_doc(const bson_t *doc, void *ctx, sa_error_t *error)
{
    jr_t *jr = ctx;

    if (!sa_jobview_read(&jr->view, doc, error))
        return false;
    jr->ndocs++;
    if (jr->in_members && jr->view.array_job_id != SA_UNSET && jr->view.array_task_id == SA_UNSET) {
        /* an array's meta-record stands for its tasks not started yet */
        if (!sa_strv_push(&jr->pending_tasks, jr->view.job_id_display ? jr->view.job_id_display : "?")) {
            sa_error_nomem(error);
            return false;
        }
    } else if (jr->in_members) { /* a member of the array or het job asked for */
        jr->nmembers++;
        if (!sa_strv_push(&jr->member_states, jr->view.state ? jr->view.state : "?")) {
            sa_error_nomem(error);
            return false;
        }
    }
    if (strcmp(jr->coll, "jobs") != 0)
        jr->nsuperseded++;
    if (jr->ndocs > 1)
        sa_rpreamble_add(&jr->pre, "%s", "");
    story_identity(jr);
    for (size_t i = 0; i < jr->view.nruns; i++) {
        sa_eff_run_t f;
        sa_eff_run(&jr->view, &jr->view.runs[i], &f);
        story_run(jr, i, &f);
        if (!run_rows(jr, i, &f, error) || (jr->o->format == SA_FMT_SVG && !svg_run(jr, i, &f, error)))
            return false;
    }
    json_array_append_new(jr->jobs, story_json(jr));
    return true;
}

/*
 * The filter: the raw id (digits), an array task 123_4 or a het component 123+1 (the
 * index {cluster, array.job_id, het.job_id} serves both), or another id as shown
 * (job_id_display), in the clusters (-M, else every cluster). *raw is the raw id asked
 * for (SA_UNSET for the other forms).
 */
static bool job_filter(const sa_report_opts_t *o, const sa_strv_t *clusters, bson_t *f, int64_t *raw,
                       sa_error_t *error)
{
    const char *s = o->job_arg, *sep;
    int64_t a, b;

    *raw = SA_UNSET;
    if (!s || !*s || strlen(s) > 64) {
        sa_error_set(error, SA_ERR_USAGE, 0, "job needs a job id: slurm-report job [-M CLUSTER] JOBID");
        return false;
    }
    sep = strpbrk(s, "_+");
    if (!sep && sa_rjob_id_digits(s, strlen(s), &a)) {
        BSON_APPEND_INT64(f, "job_id", a); /* the index {cluster, job_id} */
        *raw = a;
    } else if (sep && sa_rjob_id_digits(s, (size_t)(sep - s), &a) && sa_rjob_id_digits(sep + 1, strlen(sep + 1), &b)) {
        sa_rbson_append_members(f, *sep == '_', a, b);
    } else {
        BSON_APPEND_UTF8(f, "job_id_display", s);
    }
    sa_rbson_append_in(f, "cluster", clusters);
    return true;
}

/* Notes what the document of the raw id asked for is, per cluster (an array's, a het job's). */
static bool on_kind(const bson_t *doc, void *ctx, sa_error_t *error)
{
    jr_t *jr = ctx;
    jr_kind_t *k;

    if (!sa_jobview_read(&jr->view, doc, error))
        return false;
    if (jr->nkinds == sizeof jr->kinds / sizeof jr->kinds[0] || !jr->view.cluster)
        return true;
    k = &jr->kinds[jr->nkinds];
    if (!(k->cluster = strdup(jr->view.cluster))) {
        sa_error_nomem(error);
        return false;
    }
    k->array_job_id = jr->view.array_job_id == jr->view.job_id ? jr->view.array_job_id : SA_UNSET;
    k->het_job_id = jr->view.het_job_id == jr->view.job_id ? jr->view.het_job_id : SA_UNSET;
    jr->nkinds++;
    return true;
}

/*
 * The members of the array or het job whose id is `raw`, on the cluster of kind k:
 * every document with array.job_id = raw by task, or every component (het.job_id = raw,
 * array.job_id absent) by offset. Each is an index range of {cluster, array.job_id,
 * het.job_id}.
 */
static bool each_member(sa_rdb_t *db, jr_t *jr, const jr_kind_t *k, int64_t raw, sa_error_t *error)
{
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    bool ok;

    BSON_APPEND_UTF8(&f, "cluster", k->cluster);
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    sa_rbson_append_members(&f, k->array_job_id != SA_UNSET, raw, SA_UNSET);
    BSON_APPEND_INT32(&sub, k->array_job_id != SA_UNSET ? "array.task_id" : "het.offset", 1);
    BSON_APPEND_INT32(&sub, "job_id", 1);
    bson_append_document_end(&opts, &sub);
    ok = sa_rdb_each(db, "jobs", &f, &opts, on_doc, jr, error);
    bson_destroy(&f);
    bson_destroy(&opts);
    return ok;
}

/*
 * "Array job 4: 5 tasks: COMPLETED 4, FAILED 1" ("; not started yet: 4_[6-9]" for a
 * meta-record), or "Het job 5: 2 components: CANCELLED 2", into out and jr->summaries.
 */
static void summary_line(jr_t *jr, const jr_kind_t *k, int64_t raw, sa_strv_t *out)
{
    char buf[1024];
    size_t len;
    bool array = k->array_job_id != SA_UNSET;
    json_t *counts = json_object(), *c;
    const char *st;
    size_t i = 0;

    len = (size_t)snprintf(buf, sizeof buf, "%s job %" PRId64 "%s%s: %zu %s%s", array ? "Array" : "Het", raw,
                           jr->nkinds > 1 ? " on " : "", jr->nkinds > 1 ? k->cluster : "", jr->nmembers,
                           array ? "task" : "component", jr->nmembers == 1 ? "" : "s");
    for (size_t m = 0; m < jr->member_states.n; m++) {
        st = jr->member_states.v[m];
        json_object_set_new(counts, st, json_integer(json_integer_value(json_object_get(counts, st)) + 1));
    }
    json_object_foreach(counts, st, c) {
        if (len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s %" JSON_INTEGER_FORMAT, i++ ? "," : ":", st,
                                    json_integer_value(c));
    }
    for (size_t m = 0; m < jr->pending_tasks.n; m++) {
        if (len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s", m ? "," : "; not started yet:",
                                    jr->pending_tasks.v[m]);
    }
    sa_strv_push(out, buf);
    json_array_append_new(jr->summaries, json_pack("{s:s, s:s, s:I, s:I, s:o, s:s}", "cluster", k->cluster, "kind",
                                                   array ? "array" : "het", "job_id", (json_int_t)raw, "members",
                                                   (json_int_t)jr->nmembers, "states", counts, "line", buf));
}

/* The stories of the id on one cluster: its members (an array, a het job) with a summary line first. */
static bool members_story(sa_rdb_t *db, jr_t *jr, const jr_kind_t *k, int64_t raw, sa_error_t *error)
{
    sa_strv_t before = jr->pre, story;
    bool ok;

    sa_strv_init(&jr->pre);
    jr->nmembers = 0;
    sa_strv_clear(&jr->member_states);
    sa_strv_init(&jr->member_states);
    sa_strv_clear(&jr->pending_tasks);
    sa_strv_init(&jr->pending_tasks);
    jr->in_members = true;
    ok = each_member(db, jr, k, raw, error);
    jr->in_members = false;
    story = jr->pre;
    jr->pre = before;
    if (ok && (jr->nmembers || jr->pending_tasks.n)) {
        if (jr->pre.n)
            sa_rpreamble_add(&jr->pre, "%s", "");
        summary_line(jr, k, raw, &jr->pre);
        for (size_t i = 0; i < story.n; i++)
            sa_strv_push(&jr->pre, story.v[i]);
    }
    sa_strv_clear(&story);
    return ok;
}

bool sa_report_job(const sa_report_opts_t *o, FILE *out, FILE *warn, sa_error_t *error)
{
    sa_rdb_t *db = NULL;
    sa_rclusters_t cl = {0};
    sa_strv_t names;
    bson_t f = BSON_INITIALIZER, opts = BSON_INITIALIZER, sub;
    jr_t jr;
    json_t *extra = NULL;
    int64_t raw;
    bool ok = false;

    memset(&jr, 0, sizeof jr);
    jr.o = o;
    jr.warn = warn;
    sa_rtable_init(&jr.t, job_cols, J_N);
    sa_strv_init(&jr.pre);
    sa_jobview_init(&jr.view);
    jr.jobs = json_array();
    jr.summaries = json_array();
    sa_strv_init(&jr.member_states);
    sa_strv_init(&jr.pending_tasks);
    sa_strv_init(&names);
    if (o->format == SA_FMT_PROMETHEUS) {
        sa_error_set(error, SA_ERR_USAGE, 0, "--format %s is not available for job", sa_format_name(o->format));
        goto done;
    }
    if (!(db = sa_report_connect(o, error)) || !sa_rdb_clusters(db, &o->clusters, &cl, error))
        goto done;
    for (size_t i = 0; i < cl.n; i++)
        sa_strv_push(&names, cl.v[i].name);
    if (!job_filter(o, &names, &f, &raw, error))
        goto done;
    BSON_APPEND_DOCUMENT_BEGIN(&opts, "sort", &sub);
    BSON_APPEND_INT32(&sub, "cluster", 1);
    BSON_APPEND_INT32(&sub, "submit", 1);
    bson_append_document_end(&opts, &sub);
    jr.coll = "jobs_superseded";
    if (!sa_rdb_each(db, jr.coll, &f, &opts, on_doc, &jr, error))
        goto done;
    jr.coll = "jobs";
    /* the raw id of an array or of a het job's leader: every task or component, as sacct -j shows them */
    if (raw != SA_UNSET && !sa_rdb_each(db, jr.coll, &f, &opts, on_kind, &jr, error))
        goto done;
    for (size_t i = 0; i < jr.nkinds; i++) {
        const jr_kind_t *k = &jr.kinds[i];
        if (k->array_job_id != SA_UNSET || k->het_job_id != SA_UNSET) {
            if (!members_story(db, &jr, k, raw, error))
                goto done;
        } else {
            bson_t one = BSON_INITIALIZER;
            bool ok1;
            BSON_APPEND_INT64(&one, "job_id", raw);
            BSON_APPEND_UTF8(&one, "cluster", k->cluster);
            ok1 = sa_rdb_each(db, jr.coll, &one, NULL, on_doc, &jr, error);
            bson_destroy(&one);
            if (!ok1)
                goto done;
        }
    }
    if (raw == SA_UNSET && !sa_rdb_each(db, jr.coll, &f, &opts, on_doc, &jr, error))
        goto done;
    if (jr.ndocs == 0) {
        sa_error_set(error, SA_ERR_USAGE, 0, "no job %s in the archive%s", o->job_arg,
                     o->clusters.n ? " on the clusters named by -M" : "");
        goto done;
    }
    if (jr.nsuperseded)
        sa_rpreamble_add(&jr.pre, "Reused id: %zu earlier job%s had this id (jobs_superseded), shown first",
                         jr.nsuperseded, jr.nsuperseded == 1 ? "" : "s");
    if (o->format == SA_FMT_SVG) {
        char *title = sa_rprintf("slurm-report job %s: GPU utilisation", o->job_arg);
        sa_jsvg_write(out, title ? title : "slurm-report job", jr.svg, jr.nsvg);
        free(title);
        ok = !ferror(out) || (sa_error_set(error, SA_ERR_IO, errno, "writing the SVG: %s", strerror(errno)), false);
        goto done;
    }
    extra = json_pack("{s:s, s:O, s:O}", "job", o->job_arg, "jobs", jr.jobs, "summaries", jr.summaries);
    {
        sa_rdoc_t doc = {.kind = "job", .title = "slurm-report: job", .preamble = &jr.pre, .table = &jr.t,
                         .json = extra};
        ok = sa_rdoc_emit(&doc, o, out, error);
    }
done:
    sa_jsvg_free(jr.svg, jr.nsvg);
    json_decref(extra);
    json_decref(jr.jobs);
    json_decref(jr.summaries);
    sa_strv_clear(&jr.member_states);
    sa_strv_clear(&jr.pending_tasks);
    for (size_t i = 0; i < jr.nkinds; i++)
        free(jr.kinds[i].cluster);
    bson_destroy(&f);
    bson_destroy(&opts);
    sa_rtable_clear(&jr.t);
    sa_strv_clear(&jr.pre);
    sa_jobview_clear(&jr.view);
    sa_strv_clear(&names);
    sa_rclusters_clear(&cl);
    sa_rdb_close(db);
    return ok;
}
