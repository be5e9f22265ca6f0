/*
 * fuzz_hostlist.c - hostlist expressions through sa_hostlist_expand() with a small
 * limit (so "n[0-99999999]" is refused quickly). On success: at most the limit,
 * and no name holds a bracket, a comma or a blank (those are the syntax).
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "sa_hostlist.h"

#define FZ_MAX_HOSTS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    sa_strv_t names;
    sa_error_t error;
    bool ok;

    sa_error_clear(&error);
    sa_strv_init(&names);
    ok = sa_hostlist_expand(s, FZ_MAX_HOSTS, &names, &error);
    fz_check_error(ok, &error, "sa_hostlist_expand");
    if (ok && names.n > FZ_MAX_HOSTS)
        fz_fail("sa_hostlist_expand: %zu names, limit %d", names.n, FZ_MAX_HOSTS);
    for (size_t i = 0; ok && i < names.n; i++) {
        if (!names.v[i] || strpbrk(names.v[i], "[], \t\n"))
            fz_fail("sa_hostlist_expand: name %zu '%s' holds syntax", i, names.v[i] ? names.v[i] : "NULL");
    }
    sa_strv_clear(&names);
    free(s);
    return 0;
}
