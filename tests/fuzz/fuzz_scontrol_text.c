/*
 * fuzz_scontrol_text.c - `scontrol show nodes -o` text through
 * sa_parse_scontrol_nodes_text(), read in chunks and whole.
 */
#include "fuzz.h"

/* fz_parse_fn over sa_parse_scontrol_nodes_text. */
static bool parse(sa_reader_t *r, const sa_sink_t *sink, void *arg, sa_error_t *error)
{
    (void)arg;
    return sa_parse_scontrol_nodes_text(r, sink, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_parse_twice(parse, NULL, data, size, "sa_parse_scontrol_nodes_text");
    return 0;
}
