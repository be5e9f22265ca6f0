/*
 * fuzz.h - what the fuzz targets of tests/fuzz/ share.
 *
 * Each fuzz_<target>.c defines LLVMFuzzerTestOneInput(), the libFuzzer entry point.
 * The same file is linked two ways (tests/fuzz/CMakeLists.txt):
 *   - with -fsanitize=fuzzer (cmake -DSA_FUZZ=ON, clang): a coverage-guided fuzzer
 *     that tools/fuzz runs;
 *   - with replay.c instead (every build): a plain program that feeds the files of
 *     fixtures/fuzz/<target>/ (hand-written seeds and regressions/) to the target,
 *     run by ctest in the release and ASan builds.
 * A target aborts (fz_fail) when an invariant breaks, so libFuzzer, ASan and ctest
 * all see the failure; leaks are found by LeakSanitizer.
 */
#ifndef SA_FUZZ_H
#define SA_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz invariant broken: <message>" to stderr and aborts. */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A NUL-terminated copy of data[0..size) (aborts when out of memory). Caller frees. */
char *fz_strndup(const uint8_t *data, size_t size);

/*
 * A failed call must leave a one-line message (what the project promises for bad
 * input): non-empty, no control characters. Aborts otherwise; does nothing when ok.
 */
void fz_check_error(bool ok, const sa_error_t *error, const char *what);

/*
 * A reader over memory that hands out at most `chunk` bytes per read (1 byte at a
 * time when chunk is 1), so the streaming parsers meet every buffer boundary.
 */
typedef struct {
    sa_reader_t base; /* first: the parsers see a sa_reader_t * */
    const char *data;
    size_t len, pos, chunk;
} fz_reader_t;

void fz_reader_init(fz_reader_t *r, const char *data, size_t len, size_t chunk);

/*
 * A sink whose callbacks render each record as JSON (sa_job_to_json /
 * sa_node_to_json, so the model's formatting code is fuzzed too) and append it to
 * records (a JSON array the caller owns).
 */
sa_sink_t fz_sink(json_t *records);

/* One way to parse a document from a reader (a fuzz target wraps its parser in one). */
typedef bool (*fz_parse_fn)(sa_reader_t *r, const sa_sink_t *sink, void *arg, sa_error_t *error);

/*
 * Parses data twice, a few bytes at a time (chunk size derived from the input's
 * size, so a crash reproduces from the file alone) and whole, and aborts unless
 * both give the same result: both fail with the same one-line message, or both
 * succeed with the same records. Returns whether the parse succeeded.
 */
bool fz_parse_twice(fz_parse_fn parse, void *arg, const uint8_t *data, size_t size, const char *what);

/*
 * sacct text options from an input's first line, "#opts" followed by TAB-separated
 * "d=<delimiter>" and "f=<comma-separated fields>" (what --delimiter and -n with a field
 * list give the parser): true with *opts filled (its strings in *line, which the caller
 * frees) and *data, *size moved past the line; false (nothing changed) without one.
 */
bool fz_text_opts(const uint8_t **data, size_t *size, sa_sacct_text_opts_t *opts, char **line);

#endif
