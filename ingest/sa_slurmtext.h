/*
 * sa_slurmtext.h - Slurm's other little text languages (sa_slurmtext.c): sacct text
 * times, durations, CPU times and exit codes, text node states, plain integers.
 * Hostlist expressions are schema/core/sa_hostlist.h's; TRES and GRES strings sa_tres.h's.
 *
 * Pure functions: no I/O. Errors fill an optional sa_error_t (passed last) with a
 * one-line message that quotes the offending text (sa_error_quote()).
 */
#ifndef SA_SLURMTEXT_H
#define SA_SLURMTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"

/*
 * sacct text date "2026-11-25T21:37:49" (UTC, as run with TZ=UTC
 * SLURM_TIME_FORMAT=standard; a trailing "Z" is accepted) -> epoch.
 * "Unknown", "None", "N/A", "" -> SA_UNSET, returns true. Fails on anything else.
 */
bool sa_time_parse_text(const char *s, int64_t *out, sa_error_t *error);
/* The same in the process's current TZ (set by sa_tz_enter, schema/core/sa_time.h). */
bool sa_time_parse_text_local(const char *s, int64_t *out, sa_error_t *error);

/*
 * Durations "[DD-[HH:]]MM:SS", "MM:SS.mmm", "D-HH:MM:SS" -> seconds (fraction dropped).
 * "UNLIMITED", "INVALID", "Partition_Limit", "" -> SA_UNSET (UNLIMITED -> SA_INFINITE).
 */
bool sa_duration_parse(const char *s, int64_t *out, sa_error_t *error);

/*
 * Text node state as sinfo/scontrol print it: "IDLE+DRAIN", "idle~", "down*", "mix-",
 * "UNKNOWN+MAINTENANCE+RESERVED+NOT_RESPONDING", "drained", "draining", "maint".
 * Suffixes: * NOT_RESPONDING, ~ POWERED_DOWN, # POWERING_UP, % POWERING_DOWN,
 * ! POWER_DOWN (pending), @ REBOOT_REQUESTED, ^ REBOOT_ISSUED, - PLANNED,
 * $ MAINTENANCE (reservation). sinfo's derived words map to base + flags
 * ("drained" -> IDLE+DRAIN, "draining" -> ALLOCATED+DRAIN ...). Unknown words are
 * kept upper-cased. *out must be initialised.
 */
bool sa_node_state_parse_text(const char *s, sa_state_t *out, sa_error_t *error);

/*
 * CPU time as sacct prints TotalCPU, UserCPU, SystemCPU: "MM:SS.mmm", "[D-]HH:MM:SS"
 * -> seconds with the milliseconds kept. "" -> -1 (absent), returns true.
 */
bool sa_cputime_parse(const char *s, double *out, sa_error_t *error);

/* Parses a decimal int64 with nothing after it; fails on overflow or junk. */
bool sa_parse_int64(const char *s, int64_t *out);

/* "rc:sig" ("0:15") -> *rc, *sig. */
bool sa_exitcode_parse_text(const char *s, int *rc, int *sig, sa_error_t *error);

#endif
