/*
 * sa_bson.h - archive documents between their jansson working form and BSON.
 *
 * Rules (the same both ways, so a document survives the round trip exactly):
 * - integers are int64, reals double;
 * - members named by sa_jobdoc_is_time_key() that hold integers are times: epoch
 *   seconds in jansson, BSON dates (UTC milliseconds) in MongoDB;
 * - under "extra" (Slurm's unmodelled fields, which may hold anything) no member is a
 *   time, keys that MongoDB refuses are escaped ('%' -> "%25", '.' -> "%2E", a
 *   leading '$' -> "%24"), and an array directly inside an array (which FerretDB
 *   refuses) is wrapped as {"_array": [...]};
 * - under "extra", the empty key is stored as "%00" and a subtree nested more than 32
 *   levels deep as {"_json": "<its JSON text>"} (MongoDB's limit is 100 levels);
 * - a string "_id" (sa_jobdoc_id) is carried both ways; an ObjectId "_id" (archives
 *   written before 0.2) is not carried over from BSON.
 */
#ifndef SA_BSON_H
#define SA_BSON_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>
#include <jansson.h>

#include "sa_error.h"

/* Appends the members of object o to *out (initialised by the caller). */
bool sa_bson_from_json(const json_t *o, bson_t *out, sa_error_t *error);

/* Appends {key: {$in: [v[0], ..., v[n - 1]]}} (strings) to b. */
void sa_bson_append_in_strings(bson_t *b, const char *key, char *const *v, size_t n);

/* Appends {state: {<op>: [every final job state]}} (op "$in" or "$nin") to a filter. */
void sa_bson_append_final_states(bson_t *filter, const char *op);

/* New jansson object from a BSON document, or NULL with *error set. */
json_t *sa_bson_to_json(const bson_t *b, sa_error_t *error);

/* ---- reading one value where a reader walks BSON itself (sa_jobview.c, report/) ---- */

/* A time as epoch seconds: a BSON date (floored), or an integer of seconds; SA_UNSET otherwise. */
int64_t sa_bson_iter_time(const bson_iter_t *it);
/* An integer (int32, int64 or double, truncated); def otherwise. */
int64_t sa_bson_iter_int(const bson_iter_t *it, int64_t def);
/* A string (borrowed from the document; *len set when len != NULL); NULL otherwise. */
const char *sa_bson_iter_str(const bson_iter_t *it, uint32_t *len);

#endif
