/*
 * oom_shim.c - LD_PRELOAD library for test_oom: makes the Nth memory allocation of a
 * program's main() fail (NULL, errno ENOMEM), as an exhausted machine would.
 *
 *   SA_OOM_FAIL_AT=N     the allocation that fails, counted from main()'s start (1 = the first)
 *   SA_OOM_REPORT=FILE   when main() returns, the number of allocations it made is written there
 *
 * malloc, calloc, realloc and the aligned allocators are replaced (glibc routes its own
 * internal allocations, strdup's or fopen's, through them too) and counted only once
 * main() runs, so N does not depend on what libraries allocate while they load. The
 * shim takes itself out of LD_PRELOAD at once: the Slurm commands slurm-ingest starts
 * are not affected. Release builds only: AddressSanitizer replaces malloc itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's own allocator, under the names it exports for this purpose */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t alignment, size_t n);

static long fail_at = -1;
static long count;
static int armed;

/* Counts an allocation; true if this one must fail. */
static int should_fail(void)
{
    long n;
    if (!__atomic_load_n(&armed, __ATOMIC_RELAXED))
        return 0;
    n = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    if (n == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

/* Writes the count to $SA_OOM_REPORT (no allocation). */
static void report(void)
{
    const char *path = getenv("SA_OOM_REPORT");
    char buf[32];
    int fd, len;
    if (!path)
        return;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    len = snprintf(buf, sizeof buf, "%ld\n", count);
    if (write(fd, buf, (size_t)len) != len)
        (void)0;
    close(fd);
}

static int (*real_main)(int, char **, char **);

/* main() of the program, counted. */
static int counted_main(int argc, char **argv, char **envp)
{
    const char *n = getenv("SA_OOM_FAIL_AT");
    int rc;
    if (n)
        fail_at = atol(n);
    unsetenv("LD_PRELOAD");
    __atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
    rc = real_main(argc, argv, envp);
    __atomic_store_n(&armed, 0, __ATOMIC_RELAXED);
    report();
    return rc;
}

typedef int (*start_main_fn)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
                             void (*)(void), void *);

/* glibc's entry point calls this with main: it gets counted_main instead. */
int __libc_start_main(int (*main_fn)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main_fn;
    return real(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

void *malloc(size_t n)
{
    return should_fail() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (n == 0)
        return __libc_realloc(p, 0);
    return should_fail() ? NULL : __libc_realloc(p, n);
}

void *memalign(size_t alignment, size_t n)
{
    return should_fail() ? NULL : __libc_memalign(alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n)
{
    return should_fail() ? NULL : __libc_memalign(alignment, n);
}

int posix_memalign(void **p, size_t alignment, size_t n)
{
    if (should_fail())
        return ENOMEM;
    *p = __libc_memalign(alignment, n);
    return *p ? 0 : ENOMEM;
}
