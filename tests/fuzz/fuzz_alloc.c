/*
 * fuzz_alloc.c - the allocations' JSON (sa_awards_parse): what a file holds, and what an
 * --allocations URL answers, bytes nobody here controls. On success every award has a
 * cluster and an account, an amount > 0 and finite, end after start, bands in order and
 * members >= 0; on failure one line (fz_check_error).
 */
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>

#include "sa_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sa_awards_t a;
    sa_error_t error;
    bool ok;

    sa_error_clear(&error);
    ok = sa_awards_parse((const char *)data, size, "https://awards.example/x", &a, &error);
    fz_check_error(ok, &error, "sa_awards_parse");
    for (size_t i = 0; ok && i < a.n; i++) {
        const sa_award_t *w = &a.v[i];
        if (!w->cluster || !w->account || !(w->amount > 0) || !isfinite(w->amount) || w->end <= w->start ||
            w->under_pct > w->over_pct || w->members < 0 || w->index != i)
            fz_fail("award %zu: %s/%s amount %g [%lld, %lld) bands %g..%g members %lld", i,
                    w->cluster ? w->cluster : "NULL", w->account ? w->account : "NULL", w->amount,
                    (long long)w->start, (long long)w->end, w->under_pct, w->over_pct, (long long)w->members);
    }
    if (ok && !(a.recent_days > 0))
        fz_fail("recent_days %g", a.recent_days);
    sa_awards_clear(&a);
    return 0;
}
