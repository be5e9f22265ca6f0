/*
 * sa_tres.h - Slurm's TRES and GRES strings ("cpu=4,mem=16G,gres/gpu:a100=2",
 * "gpu:a100:4(S:0-1)") and the sizes of sacct's usage fields (sa_tres.c).
 *
 * Pure functions: no I/O. Errors fill an optional sa_error_t (passed last) with a
 * one-line message that quotes the offending text (sa_error_quote()).
 */
#ifndef SA_TRES_H
#define SA_TRES_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"

/*
 * Parses a TRES string into *out (which the caller has sa_tres_init()ed):
 *   "cpu=4,mem=16G,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2"
 *   "billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=500M,node=1" (sacct order)
 * mem units K M G T P (base 1024, result in MiB, decimals allowed: "62.50G");
 * a bare mem number is MiB. Entries we do not model ("energy=..", "fs/disk=..",
 * "license/x=..", "gres/gpumem=20500736K", "cpu=15:33:58" in usage strings when
 * usage is true) go to out->other as text. "" and NULL give an empty set.
 * usage: true for TRESUsage* strings, whose cpu value is a time and whose values
 *   are not allocations; then everything goes to out->other except mem/node.
 * Fails on syntax errors ("cpu", "cpu=abc", "gres/gpu=-3", a count beyond 2^53).
 */
bool sa_tres_parse(const char *s, bool usage, sa_tres_t *out, sa_error_t *error);

/*
 * The one TRES GPU rule, for both TRES readers (the string above and sacct's JSON list
 * of {type, name, count}): gathered entry by entry, then finished. The untyped total
 * ("gres/gpu") wins; typed entries ("gres/gpu:T") are the split, added to t->gpus as
 * they come; without an untyped entry their sum is the total; when the split sums to
 * less than the untyped total, the shortfall goes under type "".
 */
typedef struct {
    int64_t untyped;   /* SA_UNSET until an untyped entry is seen */
    int64_t typed_sum;
} sa_tres_gpus_t;

void sa_tres_gpus_init(sa_tres_gpus_t *b);
/* The untyped total (the last one seen counts). */
void sa_tres_gpus_untyped(sa_tres_gpus_t *b, int64_t n);
/* A typed entry of n GPUs of type: added to t->gpus. False on out of memory, or when the
 * typed sum passes 2^53 ("<where>: GPU count sum out of range"). */
bool sa_tres_gpus_typed(sa_tres_gpus_t *b, sa_tres_t *t, const char *type, int64_t n, const char *where,
                        sa_error_t *error);
/* Sets t->gpu_total and adds the shortfall under ""; false on out of memory. */
bool sa_tres_gpus_finish(const sa_tres_gpus_t *b, sa_tres_t *t, sa_error_t *error);

/*
 * Adds the GPU counts of a GRES string to *out (by type):
 *   "gpu:a100:4(S:0-1)", "gpu:1g.10gb:21(S:1)", "gpu:h100:2,gpu:h200:4", "gpu:4",
 *   "gpu:a100:2(IDX:0-1)", "gpu:h100:0(IDX:N/A)", "gpu:0,tpu:0", "gpu:h200:0(IDX:)",
 *   "(null)", "N/A", "" (no GPUs).
 * Also the request forms: "gres:gpu:a100:2", "gres/gpu:h100:1", "gres/gpu=2",
 *   "gres/gpu:2", "gpu:a100:2" (with request true the "gres:"/"gres/" prefix and
 *   "=count" are accepted; a request without a count means 1).
 * Non-GPU GRES are ignored. Untyped GPUs are counted under type "".
 */
bool sa_gres_parse_gpus(const char *s, bool request, sa_gpus_t *out, sa_error_t *error);

/*
 * A size as sacct prints MaxRSS, AveRSS and the sizes in TRESUsage* strings:
 * "1294440K", "0.31M", "85399.46K", "0" (K M G T P powers of 1024; a bare number is
 * bytes) -> bytes, rounded to the nearest. "" -> SA_UNSET, returns true.
 */
bool sa_size_bytes_parse(const char *s, int64_t *out, sa_error_t *error);

/*
 * The value of the entry name in a TRESUsage* string ("cpu=15:33:58,gres/gpuutil=90,
 * mem=1294440K"), read as a size (sa_size_bytes_parse: a percentage or a count has no
 * unit and reads as itself) into *out; SA_UNSET when the string has no such entry.
 */
bool sa_tres_usage_get(const char *s, const char *name, int64_t *out, sa_error_t *error);

#endif
