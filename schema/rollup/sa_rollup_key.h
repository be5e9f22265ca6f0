/*
 * sa_rollup_key.h - the name of every document of the `rollups` collection: a typed key
 * {cluster, kind, day, part}, one _id writer (sa_rollup_key_id) and one parser
 * (sa_rollup_key_parse). What each kind holds: sa_rollup.h.
 *
 *   kind      _id                              day    part
 *   ROWS      <cluster>:<YYYY-MM-DD>:r<part>   yes    yes   a day's sums
 *   MEMBERS   <cluster>:<YYYY-MM-DD>:m<part>   yes    yes   a day's members
 *   ENDED     <cluster>:<YYYY-MM-DD>:e<part>   yes    yes   the final job documents that ended that day
 *   STARTED   <cluster>:<YYYY-MM-DD>:s<part>   yes    yes   the runs that started that day
 *   OPEN      <cluster>:open:<part>            no     yes   the runs still open
 *   LIVE      <cluster>:live:<part>            no     yes   the unfinished jobs
 *   UNTYPED   <cluster>:untyped                no     no    the writer's: jobs whose GPUs have no type yet
 *   WAITING   <cluster>:untyped-config         no     no    the writer's: ... waiting for their nodes' GPUs
 *   JOURNAL   <cluster>:pending                no     no    the writer's: job batches written, not yet rolled up
 *   COMMIT    <cluster>:commit                 no     no    the last committed flush (sa_rollup.h, "Commits")
 *   PARTS     <cluster>:parts:<YYYY-MM>        month  no    which parts of the month's days hold documents
 *
 * A cluster name holds no ':'. The part of a job document is its job id's block of
 * SA_ROLLUP_PART_BLOCK consecutive ids, mod SA_ROLLUP_PARTS (sa_rollup_part_of): a batch
 * of consecutive ids touches one or two parts, and a job's documents (jobs and
 * jobs_superseded) are all in the same part.
 */
#ifndef SA_ROLLUP_KEY_H
#define SA_ROLLUP_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_error.h"
#include "sa_model.h"

#define SA_ROLLUP_COLL "rollups"
#define SA_DAY 86400
/* The last day a rollup _id can name (9999-12-31). */
#define SA_ROLLUP_LAST_DAY 253402214400LL
/* The parts of the parted kinds: blocks of SA_ROLLUP_PART_BLOCK consecutive job ids, mod SA_ROLLUP_PARTS. */
#define SA_ROLLUP_PARTS 64
#define SA_ROLLUP_PART_BLOCK 4096

typedef enum {
    SA_ROLLUP_K_ROWS,
    SA_ROLLUP_K_MEMBERS,
    SA_ROLLUP_K_ENDED,
    SA_ROLLUP_K_STARTED,
    SA_ROLLUP_K_OPEN,
    SA_ROLLUP_K_LIVE,
    SA_ROLLUP_K_UNTYPED,
    SA_ROLLUP_K_WAITING,
    SA_ROLLUP_K_JOURNAL,
    SA_ROLLUP_K_COMMIT,
    SA_ROLLUP_K_PARTS,
    SA_ROLLUP_K_COUNT
} sa_rollup_kind_t;

typedef struct {
    const char *cluster;   /* borrowed */
    sa_rollup_kind_t kind;
    int64_t day;           /* the UTC day's start (epoch s) for the dated kinds, the month's for PARTS, else 0 */
    int part;              /* 0 .. SA_ROLLUP_PARTS - 1 for the parted kinds, else 0 */
} sa_rollup_key_t;

/* Whether documents of kind are named by a day, and by a part. */
bool sa_rollup_kind_dated(sa_rollup_kind_t kind);
bool sa_rollup_kind_parted(sa_rollup_kind_t kind);
/* The kind's name as documents and messages say it ("rows", "members", "ended", ...). */
const char *sa_rollup_kind_name(sa_rollup_kind_t kind);

/*
 * The key of kind, day (the start of the UTC day holding it; of its month for PARTS; ignored
 * when not dated) and part of cluster.
 */
sa_rollup_key_t sa_rollup_key(const char *cluster, sa_rollup_kind_t kind, int64_t day, int part);

/* Its _id; NULL on out of memory, a part out of range or a day no _id can name. */
char *sa_rollup_key_id(const sa_rollup_key_t *k);
/*
 * Reads an _id of cluster's: *k (k->cluster = cluster). False when id is not one of the
 * cluster's rollup documents (another cluster's, a job document's, a malformed name).
 */
bool sa_rollup_key_parse(const char *cluster, const char *id, sa_rollup_key_t *k);
/* Orders keys of one cluster by kind, day and part. */
int sa_rollup_key_cmp(const sa_rollup_key_t *a, const sa_rollup_key_t *b);
/* True when the two keys name one document. */
bool sa_rollup_key_eq(const sa_rollup_key_t *a, const sa_rollup_key_t *b);

/*
 * Appends to ids the _ids of the parts of mask (every part: UINT64_MAX) of cluster's
 * documents of kind (and day). False only on out of memory.
 */
bool sa_rollup_key_part_ids(sa_strv_t *ids, const char *cluster, sa_rollup_kind_t kind, int64_t day, uint64_t mask,
                            sa_error_t *error);

/* The start of the UTC day holding t; of the UTC month holding it. */
int64_t sa_rollup_day(int64_t t);
int64_t sa_rollup_month(int64_t t);

/*
 * The parts index of a month (document "<cluster>:parts:<YYYY-MM>"): for each day of the
 * month and each dated kind (members, whose rows go with them; ended; started), a bit per
 * part that holds a document, so that a report names the documents there are (a month of a
 * small cluster: a few dozen _ids, not 64 a day). Bits are set by the writer in the commit
 * that writes such a document, never cleared (a part left empty costs a lookup of nothing).
 * A cluster whose commit document says `parts: true` has an index of every month that holds
 * a document; else readers name every part.
 */
#define SA_ROLLUP_PARTS_KINDS 3
typedef struct {
    uint64_t mask[SA_ROLLUP_PARTS_KINDS][31];
} sa_rollup_parts_t;
/* Sets the bit of the document of kind, day and part (a dated kind of p's month); false when it has none. */
bool sa_rollup_parts_set(sa_rollup_parts_t *p, sa_rollup_kind_t kind, int64_t day, int part);
/* The parts that hold documents of kind on day (a day of p's month): a mask of SA_ROLLUP_PARTS bits. */
uint64_t sa_rollup_parts_of(const sa_rollup_parts_t *p, sa_rollup_kind_t kind, int64_t day);
/* True when every bit of b is in a. */
bool sa_rollup_parts_covers(const sa_rollup_parts_t *a, const sa_rollup_parts_t *b);
/* The part of job document id ("<cluster>:<job_id>[:<submit>]"): 0 .. SA_ROLLUP_PARTS - 1. */
int sa_rollup_part_of(const char *id);
/* True when id is a job document _id of `jobs` of cluster ("<cluster>:<job_id>", not jobs_superseded's). */
bool sa_rollup_is_jobs_id(const char *cluster, const char *id);
/*
 * Orders job document _ids ("<cluster>:<job_id>[:<submit>]") by the job id they name,
 * then as strings: a qsort comparator of char *.
 */
int sa_rollup_id_job_cmp(const void *a, const void *b);

#endif
