/*
 * fuzz_sacct_text.c - sacct -P / -p text through sa_parse_sacct_text(), read in
 * chunks and whole.
 *
 * An input may start with an options line, "#opts" followed by TAB-separated
 * "d=<delimiter>" and "f=<comma-separated fields>" (what --delimiter and -n with a
 * field list give the parser); the document is the rest. Without it there are no
 * options (the header gives the fields, the delimiter is detected), so the real
 * captures are seeds as they are.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

/* fz_parse_fn over sa_parse_sacct_text; arg is the sa_sacct_text_opts_t (or NULL). */
static bool parse(sa_reader_t *r, const sa_sink_t *sink, void *arg, sa_error_t *error)
{
    return sa_parse_sacct_text(r, arg, sink, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sa_sacct_text_opts_t opts = {NULL, NULL, NULL};
    char *line = NULL;
    bool have_opts;

    have_opts = fz_text_opts(&data, &size, &opts, &line);
    fz_parse_twice(parse, have_opts ? &opts : NULL, data, size, "sa_parse_sacct_text");
    free(line);
    return 0;
}
