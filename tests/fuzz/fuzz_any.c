/*
 * fuzz_any.c - sa_parse_any(): the dispatch on the first bytes (JSON, scontrol
 * text, sacct text), UTF-8 and emptiness checks, read in chunks and whole.
 */
#include "fuzz.h"

/* fz_parse_fn over sa_parse_any without sacct text options. */
static bool parse(sa_reader_t *r, const sa_sink_t *sink, void *arg, sa_error_t *error)
{
    sa_meta_t meta;
    sa_kind_t kind = SA_KIND_UNKNOWN;
    bool ok;

    (void)arg;
    sa_meta_init(&meta);
    ok = sa_parse_any(r, NULL, sink, &meta, &kind, error);
    if (ok && kind == SA_KIND_UNKNOWN && json_array_size(sink->ctx) > 0)
        fz_fail("sa_parse_any: records from a document of unknown kind");
    sa_meta_clear(&meta);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_parse_twice(parse, NULL, data, size, "sa_parse_any");
    return 0;
}
