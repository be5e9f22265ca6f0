/*
 * sa_utf8.h - well-formed UTF-8, the one check: parsers repair what Slurm printed
 * (sa_utf8_repair), messages show what a user wrote without passing invalid bytes on to
 * a terminal or a log (sa_error_set, sa_error_quote).
 */
#ifndef SA_UTF8_H
#define SA_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Length of the well-formed UTF-8 sequence at s[i] of s[0..n) (no overlong forms, no
 * surrogates, nothing past U+10FFFF, no NUL), or 0 when there is none.
 */
size_t sa_utf8_seq_len(const unsigned char *s, size_t i, size_t n);

/*
 * A copy of s[0..n) with every byte that does not start a well-formed UTF-8 sequence
 * (and every NUL) replaced by U+FFFD; *out_len (may be NULL) its length. Caller frees.
 */
char *sa_utf8_repair(const unsigned char *s, size_t n, size_t *out_len);

/* True if s[0..n) is well-formed UTF-8 without NUL bytes. */
bool sa_utf8_valid(const unsigned char *s, size_t n);

#endif
