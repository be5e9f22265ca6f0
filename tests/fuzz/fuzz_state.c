/*
 * fuzz_state.c - node and job state strings and exit codes:
 *   - sa_node_state_parse_text (sinfo / scontrol text states, "IDLE+DRAIN", "mix-");
 *   - sa_json_state with the input as a JSON string and as a list of words (split
 *     at '+', as ["PENDING","REQUEUED"]), for jobs and for nodes;
 *   - sa_exitcode_parse_text ("0:15").
 * A parsed state has its flags sorted and unique (sa_model.h) and formats without
 * failing.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "sa_json.h"
#include "sa_slurmtext.h"

/* Aborts unless st's flags are sorted, unique, non-NULL; formats it. */
static void check_state(const sa_state_t *st, const char *what)
{
    char *text;

    for (size_t i = 0; i < st->flags.n; i++) {
        if (!st->flags.v[i])
            fz_fail("%s: flag %zu is NULL", what, i);
        if (i > 0 && strcmp(st->flags.v[i - 1], st->flags.v[i]) >= 0)
            fz_fail("%s: flags '%s' and '%s' not sorted and unique", what, st->flags.v[i - 1], st->flags.v[i]);
    }
    text = sa_state_format(st);
    if (!text)
        fz_fail("%s: sa_state_format returned NULL", what);
    free(text);
}

/* sa_json_state on v (a string or an array of words), as a job and as a node state. */
static void json_state(json_t *v)
{
    for (int node = 0; node < 2; node++) {
        sa_state_t st;
        sa_error_t error;
        bool ok;

        sa_error_clear(&error);
        sa_state_init(&st);
        ok = sa_json_state(v, node ? sa_node_base_is_known : sa_job_base_is_known, &st, "state", &error);
        fz_check_error(ok, &error, "sa_json_state");
        if (ok)
            check_state(&st, "sa_json_state");
        sa_state_clear(&st);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    sa_state_t st;
    sa_error_t error;
    json_t *str, *words;
    int rc = -1, sig = -1;
    bool ok;

    sa_error_clear(&error);
    sa_state_init(&st);
    ok = sa_node_state_parse_text(s, &st, &error);
    fz_check_error(ok, &error, "sa_node_state_parse_text");
    if (ok)
        check_state(&st, "sa_node_state_parse_text");
    sa_state_clear(&st);

    /* jansson refuses strings that are not UTF-8; those cannot come from a JSON document */
    str = json_string(s);
    words = json_array();
    if (str) {
        char *copy = fz_strndup((const uint8_t *)s, strlen(s)), *save = NULL;
        for (char *w = strtok_r(copy, "+", &save); w; w = strtok_r(NULL, "+", &save))
            json_array_append_new(words, json_string(w));
        free(copy);
        json_state(str);
        json_state(words);
    }
    json_decref(str);
    json_decref(words);

    sa_error_clear(&error);
    ok = sa_exitcode_parse_text(s, &rc, &sig, &error);
    fz_check_error(ok, &error, "sa_exitcode_parse_text");
    free(s);
    return 0;
}
