/*
 * sa_error.c - the one error type of slurm-archive (see sa_error.h).
 */
#include "sa_error.h"
#include "sa_utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bson/bson.h>
#include <jansson.h>

/*
 * Makes s one line of well-formed UTF-8 in place: control characters (newlines from
 * hostile input, say) and every byte that starts no well-formed UTF-8 sequence (a
 * Latin-1 file, a sequence cut short) become '?'.
 */
static void fold_controls(char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), len;

    for (size_t i = 0; i < n; i += len) {
        if (!(len = sa_utf8_seq_len(u, i, n)) || u[i] < 0x20 || u[i] == 0x7f) {
            s[i] = '?';
            len = 1;
        }
    }
}

void sa_error_set(sa_error_t *error, sa_err_domain_t domain, int code, const char *fmt, ...)
{
    va_list ap;

    if (!error)
        return;
    error->domain = domain;
    error->code = code;
    va_start(ap, fmt);
    vsnprintf(error->message, sizeof error->message, fmt, ap);
    va_end(ap);
    fold_controls(error->message);
}

void sa_error_prefix(sa_error_t *error, const char *fmt, ...)
{
    char prefix[512];
    char old[sizeof error->message];
    va_list ap;

    if (!error)
        return;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, error->message, sizeof old);
    /* truncation is fine: the message stays one line either way */
    if (snprintf(error->message, sizeof error->message, "%.300s: %.460s", prefix, old) < 0)
        error->message[0] = '\0';
    fold_controls(error->message);
}

bool sa_error_nomem(sa_error_t *error)
{
    sa_error_set(error, SA_ERR_NOMEM, ENOMEM, "out of memory");
    return false;
}

static const char *oom_program = "slurm-archive";

/* Says so on stderr without allocating, then exits 1 (SA_EXIT_FAILURE). */
static void die_oom(void)
{
    static const char tail[] = ": out of memory\n";
    ssize_t w = write(2, oom_program, strlen(oom_program));
    w = write(2, tail, sizeof tail - 1);
    (void)w;
    _exit(1);
}

void *sa_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die_oom();
    return p;
}

static void *x_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die_oom();
    return p;
}

static void *x_realloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);
    if (!p)
        die_oom();
    return p;
}

static void *x_aligned_alloc(size_t alignment, size_t n)
{
    void *p = aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
    if (!p)
        die_oom();
    return p;
}

void sa_error_install_allocators(const char *program)
{
    static bool installed;
    static bson_mem_vtable_t vt = {sa_xmalloc, x_calloc, x_realloc, free, x_aligned_alloc, {0}};

    if (program)
        oom_program = program;
    if (installed)
        return;
    installed = true;
    json_set_alloc_funcs(sa_xmalloc, free);
    bson_mem_set_vtable(&vt);
}

void sa_error_clear(sa_error_t *error)
{
    if (!error)
        return;
    error->domain = SA_ERR_NONE;
    error->code = 0;
    error->message[0] = '\0';
}

const char *sa_error_quote(const char *s, size_t max, char *out, size_t outsz)
{
    size_t i, n;

    if (!out || outsz == 0)
        return "";
    if (!s) {
        snprintf(out, outsz, "(null)");
        return out;
    }
    n = strlen(s);
    if (max > outsz - 4)
        max = outsz > 4 ? outsz - 4 : 0;
    for (i = 0; i < n && i < max; i++)
        out[i] = s[i];
    out[i] = '\0';
    fold_controls(out); /* before "...": a sequence cut at max is folded too */
    if (n > max && outsz >= 4)
        memcpy(out + i, "...", 4);
    return out;
}
