/*
 * sa_audit.h - `slurm-ingest audit`: what the archive holds against what slurmdbd holds,
 * job by job and incarnation by incarnation (pure: no I/O; the command is in
 * sa_invocation.c).
 *
 * Both sides come down to one field list through one function (sa_audit_add_doc's): a
 * job document gives a job row (its current fields) and a row per run (runs[], keyed by
 * the run's start); a sacct record is first made the document the archive would make of
 * it (sa_jobdoc_merge, the archive's own rule) and then goes through the same function.
 * The fields compared (SA_AUDIT_F_*): state, submit, eligible, start, end, exit code,
 * allocated TRES, nodes on both kinds of row; user, account and partition on the job row.
 * Of slurmdbd's records of one job (sacct -D prints each incarnation, and a job running
 * over several windows is printed by each), a run row is the last one given for its start
 * and the job row that of the record with the greatest (submit, final, start): the
 * archive's current fields are the latest incarnation's.
 *
 * Which jobs: sacct -S S -E E lists a job when it was eligible before E and had not
 * ended before S (slurmdbd's as_mysql_jobacct_process.c: time_eligible && time_eligible
 * < E && (time_end >= S || time_end = 0)); an archived document the reference lacks is
 * extra only when it meets that rule (sa_audit_in_window).
 *
 * Use: sa_audit_add_record for every slurmdbd record, sa_audit_seal, then sa_audit_add_doc
 * for the archive's documents (those of sa_audit_ref_ids and those of the window), then
 * sa_audit_compare.
 */
#ifndef SA_AUDIT_H
#define SA_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_jobdoc.h"
#include "sa_model.h"

/* The fields compared, in the order lines name them. */
enum {
    SA_AUDIT_F_STATE, SA_AUDIT_F_SUBMIT, SA_AUDIT_F_ELIGIBLE, SA_AUDIT_F_START, SA_AUDIT_F_END, SA_AUDIT_F_EXIT,
    SA_AUDIT_F_TRES, SA_AUDIT_F_NODES, SA_AUDIT_F_USER, SA_AUDIT_F_ACCOUNT, SA_AUDIT_F_PARTITION, SA_AUDIT_NF
};
/* "state", "submit", ..., "partition". */
const char *sa_audit_field_name(int f);

/* One difference. */
typedef enum { SA_AUDIT_MISSING, SA_AUDIT_EXTRA, SA_AUDIT_CHANGED } sa_audit_kind_t;
typedef struct {
    sa_audit_kind_t kind;
    int64_t job_id;
    bool run;            /* an incarnation (run_start), else the job */
    int64_t run_start;   /* with run */
    int field;           /* CHANGED: SA_AUDIT_F_* */
    const char *archive, *slurmdbd; /* CHANGED: the values, NULL when absent (borrowed for the call) */
} sa_audit_diff_t;

/* What a comparison found. */
typedef struct {
    size_t jobs, runs;           /* slurmdbd's jobs and incarnations compared */
    size_t missing, extra, changed; /* lines of each kind */
} sa_audit_counts_t;

typedef struct sa_audit sa_audit_t;

/* A new audit of the window [from, to) (epoch s). NULL on out of memory. */
sa_audit_t *sa_audit_new(int64_t from, int64_t to);
void sa_audit_free(sa_audit_t *a);

/* Adds one of slurmdbd's records (borrowed), made a document with ctx. Before sa_audit_seal. */
bool sa_audit_add_record(sa_audit_t *a, const sa_job_t *rec, const sa_obs_ctx_t *ctx, sa_error_t *error);
/* Ends the records: sorts them. */
bool sa_audit_seal(sa_audit_t *a, sa_error_t *error);
/* The job ids slurmdbd listed, sorted and unique (borrowed: valid until a is freed). After seal. */
const int64_t *sa_audit_ref_ids(const sa_audit_t *a, size_t *n);
/* True if slurmdbd listed the job (after seal). */
bool sa_audit_listed(const sa_audit_t *a, int64_t job_id);

/*
 * True if an archived document (as sa_jobdoc.h holds it: times in epoch seconds) meets the
 * rule by which sacct lists a job in [from, to) (above).
 */
bool sa_audit_in_window(const json_t *doc, int64_t from, int64_t to);

/*
 * Adds an archived job document (borrowed). A document of a job slurmdbd did not list and
 * outside the window is left out; a document given twice counts once. After seal.
 */
bool sa_audit_add_doc(sa_audit_t *a, const json_t *doc, sa_error_t *error);

/* Forgets the archive's documents added (to compare again after a repair). */
void sa_audit_clear_archive(sa_audit_t *a);

/*
 * Compares the two sides: fn is called with each difference, in job id order (a job
 * missing or extra whole is one difference, not one per field or run); returning false
 * stops it with its error. *counts (may be NULL) says what was compared and found.
 */
typedef bool (*sa_audit_diff_fn)(const sa_audit_diff_t *d, void *ctx, sa_error_t *error);
bool sa_audit_compare(sa_audit_t *a, sa_audit_diff_fn fn, void *ctx, sa_audit_counts_t *counts, sa_error_t *error);

/*
 * One difference as a line (no newline) into buf: "job 123: missing", "job 123 run
 * 2026-10-01T08:00:00Z: extra", "job 123: state: archive COMPLETED, slurmdbd FAILED"
 * (an absent value is "(none)"). Returns buf.
 */
const char *sa_audit_diff_line(const sa_audit_diff_t *d, char *buf, size_t size);

#endif
