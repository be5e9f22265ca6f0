/*
 * fuzz_tres.c - TRES strings (sa_tres_parse, as allocations and as usage) and GRES
 * strings (sa_gres_parse_gpus, as configured and as requests) on the same input.
 * On success no GPU count may be negative and the typed counts may not exceed
 * what the parser stores as the total.
 */
#include "fuzz.h"

#include <stdlib.h>

#include "sa_tres.h"

/* Aborts when a GPU list holds a negative count or a NULL type. */
static void check_gpus(const sa_gpus_t *g, const char *what)
{
    for (size_t i = 0; i < g->n; i++) {
        if (!g->v[i].type || g->v[i].count < 0)
            fz_fail("%s: GPU entry %zu: type %s, count %lld", what, i, g->v[i].type ? g->v[i].type : "NULL",
                    (long long)g->v[i].count);
    }
}

/* One sa_tres_parse call and its checks. */
static void tres(const char *s, bool usage)
{
    sa_tres_t t;
    sa_error_t error;
    bool ok;

    sa_error_clear(&error);
    sa_tres_init(&t);
    ok = sa_tres_parse(s, usage, &t, &error);
    fz_check_error(ok, &error, "sa_tres_parse");
    if (ok) {
        json_t *j = sa_tres_to_json(&t);
        check_gpus(&t.gpus, "sa_tres_parse");
        if (t.gpu_total < 0)
            fz_fail("sa_tres_parse: gpu_total %lld", (long long)t.gpu_total);
        if (!j)
            fz_fail("sa_tres_to_json returned NULL");
        json_decref(j);
    }
    sa_tres_clear(&t);
}

/* One sa_gres_parse_gpus call and its checks. */
static void gres(const char *s, bool request)
{
    sa_gpus_t g;
    sa_error_t error;
    bool ok;

    sa_error_clear(&error);
    sa_gpus_init(&g);
    ok = sa_gres_parse_gpus(s, request, &g, &error);
    fz_check_error(ok, &error, "sa_gres_parse_gpus");
    if (ok) {
        json_t *j = sa_gpus_to_json(&g);
        check_gpus(&g, "sa_gres_parse_gpus");
        if (!j)
            fz_fail("sa_gpus_to_json returned NULL");
        json_decref(j);
    }
    sa_gpus_clear(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);

    tres(s, false);
    tres(s, true);
    gres(s, false);
    gres(s, true);
    free(s);
    return 0;
}
