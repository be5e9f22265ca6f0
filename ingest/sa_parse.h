/*
 * sa_parse.h - parsers for every Slurm output slurm-ingest reads.
 *
 * Pure: bytes in (from an sa_reader_t, which the caller backs with a file, a pipe or
 * memory), records out (to callbacks), no I/O of their own. Memory stays flat with
 * the size of the input: the top-level "jobs" / "nodes" / "sinfo" arrays are walked
 * one element at a time (sa_json_stream.c); sacct text one line at a time. sa_parse.c
 * holds the readers and sa_parse_any.
 *
 * Records passed to callbacks are borrowed (see sa_model.h); a callback returning
 * false stops the parse, and its error is returned.
 */
#ifndef SA_PARSE_H
#define SA_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_model.h"

/* ---- byte sources -------------------------------------------------------- */

typedef struct sa_reader {
    /* Reads up to cap bytes into buf. Returns the count, 0 at the end, -1 on error
     * (with *error set). */
    ssize_t (*read)(struct sa_reader *r, char *buf, size_t cap, sa_error_t *error);
    /* for the implementations: */
    const char *mem;
    size_t mem_len, mem_pos;
    int fd;
    /* where the reader's first byte is in the input (a prefix it skipped: a byte order
     * mark): added to the offsets of sa_span_t */
    uint64_t origin;
} sa_reader_t;

void sa_reader_init_mem(sa_reader_t *r, const char *data, size_t len);
void sa_reader_init_fd(sa_reader_t *r, int fd);

/* ---- sinks ------------------------------------------------------------------ */

typedef bool (*sa_job_cb)(sa_job_t *job, void *ctx, sa_error_t *error);
typedef bool (*sa_node_cb)(sa_node_t *node, void *ctx, sa_error_t *error);

/*
 * A record that could not be taken as it was: raw[0..len) is its text as Slurm printed
 * it (a JSON element, or the line(s) of sacct text), why says what was wrong. kept:
 * the record was repaired and still handed to on_job (invalid UTF-8 replaced by
 * U+FFFD); otherwise it was dropped. Returning false stops the parse with *error.
 */
typedef bool (*sa_setaside_cb)(const char *raw, size_t len, const char *why, bool kept, void *ctx,
                               sa_error_t *error);

/*
 * Where a job record is in its input: bytes [off, off + len) (a JSON element of "jobs";
 * sacct text's allocation line with its step lines). Those bytes alone give the same
 * record again (sa_parse_record) with, for sacct text, what the parse had learnt before
 * them: header, a line that names the columns as the input has them (its header line; for
 * -n input, opts->fields as a line the parse skips as a header repeated), and delimiter,
 * the delimiter in use (both borrowed from the parser, valid during on_job; NULL for JSON).
 * len 0: the record cannot be read alone (a line set aside among its lines).
 * slurm-ingest notes where its changed records are rather than holding them.
 */
typedef struct {
    uint64_t off, len;
    const char *header;
    size_t header_len;
    const char *delimiter;
} sa_span_t;

typedef struct {
    sa_job_cb on_job;   /* may be NULL: jobs are parsed and dropped */
    sa_node_cb on_node; /* may be NULL */
    void *ctx;
    /* may be NULL: then a record that cannot be parsed fails the whole parse; with it,
     * such a record (in the jobs array of JSON, or a line of sacct text) is set aside
     * and the parse goes on. A structural error (truncated JSON) still fails. */
    sa_setaside_cb on_setaside;
    /* nodes are handed without ->extra, and sinfo's groups merged without it: a large
     * sinfo -N --json then holds a few hundred bytes a node, not kilobytes */
    bool no_node_extra;
    /* may be NULL; else set to where each job record is before on_job gets it */
    sa_span_t *span;
} sa_sink_t;

/* ---- what a document is ------------------------------------------------------ */

typedef enum {
    SA_KIND_UNKNOWN = 0,
    SA_KIND_SQUEUE_JSON,   /* {"jobs": [ squeue job records ]} */
    SA_KIND_SACCT_JSON,    /* {"jobs": [ sacct job records ]} */
    SA_KIND_NODES_JSON,    /* {"nodes": [ node records ]}: scontrol show nodes, restd, sinfo <= 22.05 */
    SA_KIND_SINFO_JSON,    /* {"sinfo": [ grouped records ]}: sinfo >= 23.02 */
    SA_KIND_SACCT_TEXT,    /* sacct -P / -p */
    SA_KIND_SCONTROL_NODES_TEXT, /* scontrol show nodes -o */
} sa_kind_t;

const char *sa_kind_name(sa_kind_t k);

/* ---- per-record converters (one JSON element -> one record) ----------------- */

/* squeue / scontrol show job / restd /jobs element -> *job (initialised by caller
 * with sa_job_new(SA_SRC_SQUEUE)). Error messages name the job id when known. */
bool sa_job_from_squeue_json(const json_t *elem, sa_job_t *job, sa_error_t *error);
/* sacct --json / restd /slurmdb/jobs element (with its steps) -> *job. */
bool sa_job_from_sacct_json(const json_t *elem, sa_job_t *job, sa_error_t *error);
/* Decides which of the two an element of "jobs" is ("job_state" vs "state"/"time"). */
sa_kind_t sa_job_json_kind(const json_t *elem);

/* Node list element (scontrol show nodes / restd / sinfo <= 22.05) -> *node. */
bool sa_node_from_json(const json_t *elem, sa_node_t *node, sa_error_t *error);

/*
 * True if word is a job state word Slurm prints: a base state (sa_job_base_is_known) or a
 * flag that string-valued producers print in its place (COMPLETING, REQUEUED: sacct's
 * requeued instances, CONFIGURING, ...).
 */
bool sa_job_state_word_known(const char *word);

/*
 * The one rule for a node listed twice (sinfo's groups of several partitions, a node
 * list naming it twice): src merged into dst. Into a fresh record this is a copy. Else
 * the states must agree (if not, dst's is kept and src's recorded in extra
 * "state_conflict"); partitions are unioned; any other field is filled only where dst
 * has none (the first listing wins). False when out of memory.
 */
bool sa_node_merge(sa_node_t *dst, const sa_node_t *src);

/*
 * sinfo >= 23.02 grouped records. Each group is expanded to its nodes and merged
 * into the accumulator (a node listed under two partitions is one node, with both
 * partitions). Per-node CPU counts are the node's own when the group has one node
 * (sinfo -N) or all its CPUs in one state; else the group's sums split over its nodes
 * (cpu_config SA_NODE_CPUS_SPLIT) when that is exact in sum, else SA_UNSET (the rules: the
 * comment above struct sa_sinfo_acc in parse_node_json.c). GPUs used are unknown.
 */
typedef struct sa_sinfo_acc sa_sinfo_acc_t;
sa_sinfo_acc_t *sa_sinfo_acc_new(void);
void sa_sinfo_acc_destroy(sa_sinfo_acc_t *acc);
bool sa_sinfo_acc_add(sa_sinfo_acc_t *acc, const json_t *group, sa_error_t *error);
/* Keeps no unmodelled keys of the groups added from now on (sa_sink_t no_node_extra). */
void sa_sinfo_acc_no_extra(sa_sinfo_acc_t *acc);
/* Emits the merged nodes in name order. */
bool sa_sinfo_acc_emit(sa_sinfo_acc_t *acc, const sa_sink_t *sink, sa_error_t *error);

/* ---- whole documents ----------------------------------------------------------- */

/*
 * Parses a JSON document from r: the top-level object is walked key by key; the
 * "jobs", "nodes" and "sinfo" arrays element by element, each element decoded
 * with jansson and handed to the converters above. meta/errors/warnings fill *meta
 * (initialised by the caller) wherever they appear in the document.
 * *kind_out (may be NULL) is set to what the document held.
 * Errors: "truncated JSON at byte N", "expected a JSON object at top level (found
 * '<')" for an HTML error page, "empty input", "job 1234: time_limit: ...".
 */
bool sa_parse_json(sa_reader_t *r, const sa_sink_t *sink, sa_meta_t *meta, sa_kind_t *kind_out,
                   sa_error_t *error);

/* sacct text options. */
typedef struct {
    const char *delimiter;  /* NULL: detect from the header / first line */
    const char *fields;     /* comma-separated field list for -n input; NULL: there is a header */
    const char *tz;         /* the zone the times were printed in ("Europe/Helsinki"); NULL: UTC (sa_time.h) */
} sa_sacct_text_opts_t;

/*
 * Parses sacct -P / -p text: header-driven (any field order or subset, case-insensitive
 * names), trailing delimiter allowed, multi-byte delimiters, -n with opts->fields.
 * Step lines (123.batch, 123_4.0, 123+1.0) are attached to the allocation line that
 * precedes them; each allocation line is one sa_job_t (so -D gives one record per run).
 * A line with the wrong number of fields is an error naming the line number and job id.
 * Columns not modelled are kept in job->extra (name -> text). Times are UTC, or local
 * time of opts->tz: TZ is set to that zone during the parse and put back after (sa_tz_enter);
 * an unknown zone fails the parse (SA_ERR_USAGE).
 */
bool sa_parse_sacct_text(sa_reader_t *r, const sa_sacct_text_opts_t *opts, const sa_sink_t *sink,
                         sa_error_t *error);

/* scontrol show nodes -o text ("NodeName=x Arch=.. State=IDLE+DRAIN ..." one node a line). */
bool sa_parse_scontrol_nodes_text(sa_reader_t *r, const sa_sink_t *sink, sa_error_t *error);

/*
 * Reads the whole input and dispatches on its first non-blank byte: '{' -> JSON,
 * "NodeName=" -> scontrol text, anything else -> sacct text (with topts, may be NULL).
 * Fails on empty input and on non-UTF-8 text.
 */
bool sa_parse_any(sa_reader_t *r, const sa_sacct_text_opts_t *topts, const sa_sink_t *sink, sa_meta_t *meta,
                  sa_kind_t *kind_out, sa_error_t *error);

/*
 * One job record from its bytes as sa_span_t gives them: rec[0..len) a JSON element of
 * "jobs" (squeue's or sacct's) when delimiter is NULL, else sacct text lines with the
 * span's header and delimiter and the text options of the whole input. Decoded and converted exactly
 * as in the whole input, so *out is the same record (a new one, for the caller to
 * destroy). memo (sa_json_memo.h; may be NULL): JSON member values shared with the
 * records read before, as a whole parse shares them. Fails when the bytes do not hold
 * exactly one record.
 */
struct sa_json_memo;
bool sa_parse_record(const char *rec, size_t len, const char *header, size_t header_len, const char *delimiter,
                     const sa_sacct_text_opts_t *topts, struct sa_json_memo *memo, sa_job_t **out,
                     sa_error_t *error);

#endif
