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

/*
 * Parses a duration (the forms above) into *secs (may be NULL; not changed on
 * failure). Fails (SA_ERR_USAGE, the value quoted) on bad syntax or overflow.
 */
bool sa_time_parse_duration(const char *s, int64_t *secs, sa_error_t *error);

#endif
