/*
 * sa_notes.h - records kept as Slurm printed them that are odd enough to say: a job with
 * no state or one that is not Slurm's, a sacct record that ends before it starts, a node
 * listed twice. Never dropped (the job document and the time series keep what the record
 * says; a node listed twice is one record, sa_node_merge), but said once per input and
 * kind, naming the input and the first such record, so that an admin can look.
 *
 * Both `slurm-ingest --dump` and a run feed each record of an input through
 * sa_notes_job / sa_notes_node and say the lines of sa_notes_say at its end.
 */
#ifndef SA_NOTES_H
#define SA_NOTES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "sa_model.h"

typedef enum {
    SA_NOTE_JOB_STATE,   /* no state, or a word Slurm does not print as one (sa_job_state_word_known) */
    SA_NOTE_JOB_END,     /* sacct: End before Start */
    SA_NOTE_NODE_TWICE,  /* a node listed twice in one input */
    SA_NOTE_KINDS
} sa_note_kind_t;

/* What one input held of each kind: how many records, the first one said in words. */
typedef struct {
    size_t count[SA_NOTE_KINDS];
    char first[SA_NOTE_KINDS][200];
    json_t *nodes; /* node name -> its index (sa_notes_node), made on first use */
} sa_notes_t;

void sa_notes_init(sa_notes_t *n);
void sa_notes_clear(sa_notes_t *n);

/* Notes what is odd about a job record. */
void sa_notes_job(sa_notes_t *n, const sa_job_t *job);

/*
 * Notes node, the index-th node record of the input. Returns SIZE_MAX for a name not seen
 * before (or one the parser already merged: node->listed_twice), else the index of the
 * first record of that name (the caller merges into it: sa_node_merge); also SIZE_MAX
 * when out of memory (*nomem set; the note is then not taken).
 */
size_t sa_notes_node(sa_notes_t *n, const sa_node_t *node, size_t index, bool *nomem);

/*
 * Calls say(line, ctx) once per kind the input held, each line naming input and the
 * first record: "<input>: job 6's state FROBNICATED is none of Slurm's (2 such jobs in
 * this input): kept as printed".
 */
void sa_notes_say(const sa_notes_t *n, const char *input, void (*say)(const char *line, void *ctx), void *ctx);

#endif
