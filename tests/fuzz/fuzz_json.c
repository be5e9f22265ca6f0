/*
 * fuzz_json.c - squeue / sacct / scontrol show nodes / sinfo JSON through
 * sa_parse_json(), read in chunks and whole (fz_parse_twice).
 */
#include "fuzz.h"

/* fz_parse_fn over sa_parse_json; the meta must be cleared on every path. */
static bool parse(sa_reader_t *r, const sa_sink_t *sink, void *arg, sa_error_t *error)
{
    sa_meta_t meta;
    sa_kind_t kind = SA_KIND_UNKNOWN;
    bool ok;

    (void)arg;
    sa_meta_init(&meta);
    ok = sa_parse_json(r, sink, &meta, &kind, error);
    if (ok && kind != SA_KIND_UNKNOWN && kind != SA_KIND_SQUEUE_JSON && kind != SA_KIND_SACCT_JSON &&
        kind != SA_KIND_NODES_JSON && kind != SA_KIND_SINFO_JSON)
        fz_fail("sa_parse_json: a JSON document of kind %s", sa_kind_name(kind));
    sa_meta_clear(&meta);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_parse_twice(parse, NULL, data, size, "sa_parse_json");
    return 0;
}
