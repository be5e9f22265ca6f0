/*
 * sa_notes.c - odd records said once per input and kind (see sa_notes.h).
 */
#include "sa_notes.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_parse.h"
#include "sa_time.h"

/* What a line says of each kind: the record counted (one, several), and what is done with them. */
static const char *const counted[SA_NOTE_KINDS][2] = {{"job", "jobs"}, {"job", "jobs"}, {"node", "nodes"}};
static const char *const done[SA_NOTE_KINDS] = {"kept as printed", "kept as printed",
                                                "merged into one record, its first listing first"};

void sa_notes_init(sa_notes_t *n)
{
    memset(n, 0, sizeof *n);
}

void sa_notes_clear(sa_notes_t *n)
{
    json_decref(n->nodes);
    memset(n, 0, sizeof *n);
}

/* Counts one record of kind; the first one is said by the format (printf into first[kind]). */
__attribute__((format(printf, 3, 4))) static void note(sa_notes_t *n, sa_note_kind_t kind, const char *fmt, ...)
{
    va_list ap;

    if (n->count[kind]++)
        return;
    va_start(ap, fmt);
    vsnprintf(n->first[kind], sizeof n->first[kind], fmt, ap);
    va_end(ap);
}

void sa_notes_job(sa_notes_t *n, const sa_job_t *job)
{
    char id[32], q[80], a[32], b[32];
    const char *name = job->job_id_display;

    if (!name) {
        snprintf(id, sizeof id, "%" PRId64, job->job_id);
        name = id;
    }
    sa_error_quote(name, 32, q, sizeof q);
    if (!job->state.base) {
        note(n, SA_NOTE_JOB_STATE, "job %s has no state", q);
    } else if (!sa_job_state_word_known(job->state.base)) {
        char s[80];
        note(n, SA_NOTE_JOB_STATE, "job %s's state %s is none of Slurm's", q,
             sa_error_quote(job->state.base, 64, s, sizeof s));
    }
    if ((job->source == SA_SRC_SACCT_JSON || job->source == SA_SRC_SACCT_TEXT) && job->start != SA_UNSET &&
        job->end != SA_UNSET && job->end < job->start)
        note(n, SA_NOTE_JOB_END, "job %s ends (%s) before it starts (%s)", q, sa_time_format(job->end, a, sizeof a),
             sa_time_format(job->start, b, sizeof b));
}

size_t sa_notes_node(sa_notes_t *n, const sa_node_t *node, size_t index, bool *nomem)
{
    json_t *seen;
    char q[80];

    *nomem = false;
    if (!node->name)
        return SIZE_MAX;
    sa_error_quote(node->name, 64, q, sizeof q);
    if (node->listed_twice)
        note(n, SA_NOTE_NODE_TWICE, "node %s is listed twice", q);
    if (!n->nodes && !(n->nodes = json_object())) {
        *nomem = true;
        return SIZE_MAX;
    }
    if ((seen = json_object_get(n->nodes, node->name)) != NULL) {
        note(n, SA_NOTE_NODE_TWICE, "node %s is listed twice", q);
        return (size_t)json_integer_value(seen);
    }
    if (json_object_set_new(n->nodes, node->name, json_integer((json_int_t)index)) != 0)
        *nomem = true;
    return SIZE_MAX;
}

void sa_notes_say(const sa_notes_t *n, const char *input, void (*say)(const char *line, void *ctx), void *ctx)
{
    char line[600], q[300];

    sa_error_quote(input, 256, q, sizeof q);
    for (int k = 0; k < SA_NOTE_KINDS; k++) {
        if (!n->count[k])
            continue;
        snprintf(line, sizeof line, "%s: %s (%zu such %s in this input): %s", q, n->first[k], n->count[k],
                 counted[k][n->count[k] > 1], done[k]);
        say(line, ctx);
    }
}
