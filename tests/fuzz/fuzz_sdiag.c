/*
 * fuzz_sdiag.c - `sdiag --json` through sa_sdiag_parse_json(); the result is
 * cleared on success and on failure, so LeakSanitizer sees what either leaves.
 */
#include "fuzz.h"

#include "sa_sdiag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sa_sdiag_t sd;
    sa_error_t error;
    bool ok;

    sa_error_clear(&error);
    ok = sa_sdiag_parse_json((const char *)data, size, &sd, &error);
    fz_check_error(ok, &error, "sa_sdiag_parse_json");
    sa_sdiag_clear(&sd);
    return 0;
}
