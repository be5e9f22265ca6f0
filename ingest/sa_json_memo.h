/*
 * sa_json_memo.h - decodes the records of a Slurm document member by member, each
 * member value decoded by jansson once and reused while the next record repeats it.
 *
 * Of the ~130 members of a squeue job, most print the same text as in the record
 * before (defaults, {"set":false,...} numbers, flags, the owner's paths); decoding
 * each distinct text once makes the parse several times cheaper, and the records
 * then share those values instead of each holding a copy. Private to
 * sa_json_stream.c, which cuts the record out of the input and finds the member
 * separators (see there).
 */
#ifndef SA_JSON_MEMO_H
#define SA_JSON_MEMO_H

#include <stddef.h>

#include <jansson.h>

typedef struct sa_json_memo sa_json_memo_t;

/* A memo for one document; NULL on OOM. */
sa_json_memo_t *sa_json_memo_new(void);
/* Drops the memo's references (records keep theirs). Accepts NULL. */
void sa_json_memo_destroy(sa_json_memo_t *memo);

/*
 * Decodes the object text obj[0..len): a record cut out of the input without the
 * whitespace between tokens, whose ':' and ',' at depth 1 (outside strings) are at
 * offsets seps[0..nseps). Every key and value is decoded by jansson (json_loadb of
 * its own text), or is the value decoded earlier from the same text under the same
 * key text. The object is built in member order with json_object_set_new_nocheck,
 * exactly as jansson builds it. A key twice gives NULL, so that the caller's own
 * decoding (JSON_REJECT_DUPLICATES) refuses the record.
 * Returns a new reference, or NULL when obj is not a valid object as this memo
 * decodes it (or a value needs JSON_DECODE_INT_AS_REAL, or out of memory): the
 * caller then decodes the whole text, which also gives the error.
 * The values are shared with the memo and with later records: read-only.
 */
json_t *sa_json_memo_object(sa_json_memo_t *memo, const char *obj, size_t len, const size_t *seps, size_t nseps);

#endif
