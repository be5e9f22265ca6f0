/*
 * fuzz_time.c - Slurm's text times and durations: sa_time_parse_text (sacct dates),
 * sa_duration_parse ("[D-]HH:MM:SS", "MM:SS.mmm", "UNLIMITED") and sa_parse_int64.
 * Checks: a parsed date formats back (sa_time_format) to a text that parses to the
 * same second (years 1000-9999, which both print with four digits); a duration is
 * never negative; an integer prints back to itself.
 */
#include "fuzz.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sa_slurmtext.h"

#define YEAR_1000 INT64_C(-30610224000)  /* 1000-01-01T00:00:00Z */
#define YEAR_10000 INT64_C(253402300800) /* 10000-01-01T00:00:00Z */

/* sa_time_parse_text and the round trip through sa_time_format. */
static void date(const char *s)
{
    sa_error_t error;
    int64_t t, back;
    char buf[64];
    bool ok;

    sa_error_clear(&error);
    ok = sa_time_parse_text(s, &t, &error);
    fz_check_error(ok, &error, "sa_time_parse_text");
    if (!ok || t == SA_UNSET || t < YEAR_1000 || t >= YEAR_10000)
        return;
    sa_time_format(t, buf, sizeof buf);
    if (!sa_time_parse_text(buf, &back, &error) || back != t)
        fz_fail("sa_time_parse_text('%s') = %" PRId64 ", formatted '%s', parsed back %s", s, t, buf,
                error.message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    sa_error_t error;
    int64_t v;
    bool ok;

    date(s);

    sa_error_clear(&error);
    ok = sa_duration_parse(s, &v, &error);
    fz_check_error(ok, &error, "sa_duration_parse");
    if (ok && v != SA_UNSET && v < 0)
        fz_fail("sa_duration_parse('%s') = %" PRId64, s, v);

    if (sa_parse_int64(s, &v)) {
        char buf[32];
        int64_t back;
        snprintf(buf, sizeof buf, "%" PRId64, v);
        if (!sa_parse_int64(buf, &back) || back != v)
            fz_fail("sa_parse_int64('%s') = %" PRId64 " does not parse back", s, v);
    }
    free(s);
    return 0;
}
