/*
 * sa_time.h - the one date/time parser and the one duration parser of both binaries
 * (slurm-ingest's --at, --since and its configuration's durations; slurm-report's
 * -S, -E, --now, --since, --stale and the awards file). Everything is UTC; times are
 * seconds since the epoch.
 *
 * Dates and times are read the way sacct -S/-E read them (Slurm's parse_time() with
 * "past" set), in UTC instead of the local time zone:
 *
 *   YYYY-MM-DD[THH:MM[:SS]]        a blank may stand for the T
 *   MMDD[YY], MM/DD[/YY], MM.DD[.YY] each optionally followed by -HH:MM[:SS] (or a blank)
 *   HH:MM[:SS] [AM|PM]              today
 *   today, tomorrow                 (a date: combine with a time, "tomorrow noon")
 *   midnight, noon, elevenses, fika, teatime   00:00, 12:00, 11:00, 15:00, 16:00
 *   now[{+|-}N[seconds|minutes|hours|days|weeks]]   (singular too; or s, m, h, d, w;
 *                                   N alone is seconds)
 *
 * and an ISO-8601 "Z" may end a date or time. A date without a time is its midnight;
 * a time without a date is today (even when later than now, as sacct does); a date
 * without a year is in now's year, or the year before when its month is after now's.
 * YY is 20YY. Keywords are case-insensitive. Impossible dates (2026-02-30) fail.
 *
 * Durations: N (seconds), Ns, Nm, Nh, Nd, Nw; N is decimal digits (no sign, blank or
 * fraction) and the result fits an int64_t.
 */
#ifndef SA_TIME_H
#define SA_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "sa_error.h"

/*
 * Parses a date/time (the forms above) into *out. now is the reference for the
 * relative forms (now, today, tomorrow, a time or a date without a year); SA_UNSET
 * refuses them (a file that must mean the same thing tomorrow). *out is not changed
 * on failure; error (SA_ERR_USAGE) quotes s and says what is wrong.
 */
bool sa_time_parse(const char *s, int64_t now, int64_t *out, sa_error_t *error);

/*
 * Parses exactly "YYYY-MM-DDTHH:MM:SS", optionally followed by "Z" (how Slurm prints
 * times). Fails without a message on anything else or an impossible date.
 */
bool sa_time_parse_iso(const char *s, int64_t *out);

/*
 * The time of the UTC calendar fields (month 1-12); false when they name no real
 * time (month 13, 2026-02-30, 24:00, year outside 1..9999).
 */
bool sa_time_from_fields(int year, int month, int day, int hour, int min, int sec, int64_t *out);

/* ---- a capture's local time -------------------------------------------------------------
 *
 * sacct prints times in its local time zone (slurm-ingest runs it with TZ=UTC). A capture
 * made elsewhere in local time is read with the C library's zone database: the process's
 * TZ is set to the zone for the parse (sa_tz_enter) and put back after (sa_tz_leave).
 * Times that the zone's changes make ambiguous are resolved deterministically:
 * - a time that occurs twice (the hour repeated when clocks go back) is its first
 *   occurrence (the offset in force before the change: summer time);
 * - a time that does not exist (the hour skipped when clocks go forward; sacct never
 *   prints one) is read with the offset in force before the change, so it lands as far
 *   after the change as it names after the skipped hour's start (03:30 in Helsinki on the
 *   last Sunday of March is 01:30Z, 04:30 EEST).
 */

/*
 * True if zone names a zone of the zone database ("Europe/Helsinki", "UTC"): a relative
 * name without "..", whose file under $TZDIR (default /usr/share/zoneinfo) is a TZif file.
 * "UTC" is always known. Fails (SA_ERR_USAGE) saying what is wrong.
 */
bool sa_tz_valid(const char *zone, sa_error_t *error);

/* True if zone is UTC under one of its names (NULL, "", "UTC", "Etc/UTC", "Z"...): nothing to convert. */
bool sa_tz_is_utc(const char *zone);

/* The process's TZ before sa_tz_enter, to put back. */
typedef struct {
    char *saved; /* owned; NULL when TZ was unset */
    bool active;
} sa_tz_scope_t;

/* Sets TZ to zone (checked with sa_tz_valid) until sa_tz_leave. False (error) on a bad zone or no memory. */
bool sa_tz_enter(const char *zone, sa_tz_scope_t *scope, sa_error_t *error);
/* Puts TZ back as it was; does nothing for a scope that is not active. */
void sa_tz_leave(sa_tz_scope_t *scope);

/*
 * The time of the local calendar fields (month 1-12) in the current TZ, with the rules
 * above for repeated and skipped times; false when they name no real date.
 */
bool sa_time_from_local_fields(int year, int month, int day, int hour, int min, int sec, int64_t *out);

/*
 * Like sa_time_parse_iso, for "YYYY-MM-DDTHH:MM:SS" in the current TZ (a trailing "Z"
 * still means UTC).
 */
bool sa_time_parse_iso_local(const char *s, int64_t *out);

/*
 * Parses a duration (the forms above) into *secs (may be NULL; not changed on
 * failure). Fails (SA_ERR_USAGE, the value quoted) on bad syntax or overflow.
 */
bool sa_time_parse_duration(const char *s, int64_t *secs, sa_error_t *error);

#endif
