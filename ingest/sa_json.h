/*
 * sa_json.h - reading Slurm's JSON values with jansson, whatever the version.
 *
 * Slurm encodes the same field differently across releases (plain number, null,
 * "Infinity", {set, infinite, number}, raw NO_VAL sentinels; a state as one string
 * or as a list). These helpers accept every form, so a parser decides the shape per
 * field, never per file (hand-merged files mix shapes in one array).
 *
 * All getters take the object and a key; an absent key, JSON null and "" read as
 * unset. A value of a wrong type is an error naming the key. The field helpers also
 * mark the key as "known" in an sa_json_keys_t so that what is left can be copied
 * into the record's ->extra (unknown fields are kept, never dropped).
 */
#ifndef SA_JSON_H
#define SA_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "sa_error.h"
#include "sa_model.h"

/*
 * One element of "jobs" from its bytes, decoded and converted as sa_parse_json decodes
 * and converts it in a whole document (sa_parse_record's JSON half; sa_json_stream.c);
 * memo (may be NULL) shares member values with the records read before (sa_json_memo.h).
 */
struct sa_json_memo;
bool sa_json_job_record(const char *rec, size_t len, struct sa_json_memo *memo, sa_job_t **out, sa_error_t *error);

/* The JSON type of v for messages: "object", "array", "string", "integer", "number"
 * (a real), "boolean", "null"; "nothing" when v is NULL (absent). */
const char *sa_json_type_name(const json_t *v);

/* A value of a NO_VAL-tagged number. */
typedef struct {
    bool set;       /* a real value (0 included) */
    bool infinite;  /* INFINITE / "Infinity" / UNLIMITED */
    int64_t value;  /* when set */
    double fvalue;  /* when set (for FLOAT64 fields) */
} sa_noval_t;

/*
 * Reads v as a NO_VAL-tagged number: a JSON integer or real, null, "Infinity",
 * "infinite", a numeric string, or {set, infinite, number}. Raw sentinels
 * 4294967294 / 4294967295 (u32 NO_VAL / INFINITE), 65534 / 65535 when sentinel16,
 * -2 and 18446744073709551614 (NO_VAL64) read as unset / infinite.
 * Fails on other types and on numbers that do not fit int64 (reals beyond 2^63).
 */
bool sa_json_noval(const json_t *v, bool sentinel16, sa_noval_t *out, const char *key, sa_error_t *error);

/* Object field helpers. o may be NULL (then everything is unset). */
bool sa_json_get_int(const json_t *o, const char *key, int64_t *out, sa_error_t *error);  /* SA_UNSET / SA_INFINITE */
/* Epoch seconds; 0 and NO_VAL -> SA_UNSET. */
bool sa_json_get_time(const json_t *o, const char *key, int64_t *out, sa_error_t *error);
/* Copies a string (NULL when absent, null or ""). Numbers are accepted and printed
 * (dbv0.0.37 prints reservation name as integer 0). Other types fail. */
bool sa_json_get_str(const json_t *o, const char *key, char **out, sa_error_t *error);
bool sa_json_get_bool(const json_t *o, const char *key, bool *out, sa_error_t *error); /* false when absent */
/* Object or NULL when absent / null; fails when present with another type. */
bool sa_json_get_obj(const json_t *o, const char *key, json_t **out, sa_error_t *error);
/* Array or NULL when absent / null; fails when present with another type. */
bool sa_json_get_arr(const json_t *o, const char *key, json_t **out, sa_error_t *error);

/*
 * Reads a list of words: a string (one word, or "X by 123" -> "X", or words joined
 * by '+' or ',') or an array of strings. Each word is trimmed (21.08 prints
 * "JOB_CPUS_SET ") and upper-cased. Appended to *out (unique, sorted).
 */
bool sa_json_get_words(const json_t *o, const char *key, sa_strv_t *out, sa_error_t *error);

/*
 * Fills a state from a JSON state value: string ("RUNNING", "idle", "CANCELLED by 0")
 * or array (["PENDING","REQUEUED"], ["IDLE","DRAIN"]). For arrays, the first word that
 * is_base() accepts is the base and the rest are flags; if none is, the first word is
 * the base. A string is the base. *st must be initialised (and is added to).
 */
bool sa_json_state(const json_t *v, bool (*is_base)(const char *), sa_state_t *st, const char *key,
                   sa_error_t *error);

/*
 * Known-key bookkeeping: parsers list the keys they model (or ignore on purpose);
 * sa_json_extra() returns a new object with every other key of o, in o's order, or
 * NULL when there are none. Its values are new references to o's values, not
 * copies: the record keeps them after o is released (values in ->extra are
 * read-only; see sa_model.h).
 */
json_t *sa_json_extra(const json_t *o, const char *const *known_keys);

/*
 * Decoded exit code from any Slurm form: raw wait status integer (squeue v0.0.37/38),
 * {set,infinite,number} raw status (v0.0.39), {status, return_code, signal} objects
 * (sacct <= v0.0.39 and v0.0.40+). *reliable is set false for the pre-v0.0.40 sacct
 * object form whose SUCCESS/0 cannot be trusted (a bug of Slurm's data_parser before
 * v0.0.40: that form can say SUCCESS/0 for a job that did not succeed).
 * Unknown -> rc = sig = -1.
 */
bool sa_json_exit_code(const json_t *v, int *rc, int *sig, bool *reliable, const char *key, sa_error_t *error);

/* Reads a whole meta object into *m (release, data_parser, cluster). Never fails on
 * unexpected shapes: meta is informative. */
void sa_json_meta(const json_t *meta, sa_meta_t *m);

#endif
