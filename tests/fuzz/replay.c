/*
 * replay.c - runs a fuzz target (LLVMFuzzerTestOneInput, from one fuzz_<target>.c)
 * on files, without libFuzzer: the regression test of every build.
 *
 *   fuzz_<target>_replay PATH...   each PATH a file, or a directory read recursively
 *                                  (files whose name starts with '.' are skipped)
 *
 * An input that crashes, breaks an invariant (the target aborts) or leaks (in the
 * ASan build) fails the test. Prints how many inputs it ran; exits 77 (skipped)
 * when it found none.
 */
#define _GNU_SOURCE /* nftw */
#include "fuzz.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t replayed;

/* Reads the file at path whole. Caller frees *data. */
static bool read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);

    if (!f || !buf) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        free(buf);
        return false;
    }
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        uint8_t *b = realloc(buf, cap *= 2);
        if (!b) {
            fprintf(stderr, "replay: %s: out of memory\n", path);
            fclose(f);
            free(buf);
            return false;
        }
        buf = b;
    }
    fclose(f);
    *data = buf;
    *size = n;
    return true;
}

/* nftw callback: replays one regular file. */
static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    uint8_t *data;
    size_t size;

    (void)st;
    if (type != FTW_F || base[0] == '.')
        return 0;
    if (!read_file(path, &data, &size))
        return 1;
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    replayed++;
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (nftw(argv[i], visit, 16, FTW_PHYS) != 0) {
            fprintf(stderr, "replay: %s: cannot read it\n", argv[i]);
            return 1;
        }
    }
    if (replayed == 0) {
        printf("replay: no input found in the paths given; nothing tested\n");
        return 77;
    }
    printf("replay: %zu inputs, no crash, no broken invariant\n", replayed);
    return 0;
}
