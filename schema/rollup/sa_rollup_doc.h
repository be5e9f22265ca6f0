/*
 * sa_rollup_doc.h - one rollup document in memory (its members, or a day's rows), and its
 * BSON codec, including the two versions a stored document keeps for readers (sa_rollup.h,
 * "Commits").
 */
#ifndef SA_ROLLUP_DOC_H
#define SA_ROLLUP_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "sa_error.h"
#include "sa_rollup_contrib.h"
#include "sa_rollup_key.h"

/* The rollups' version, in the clusters document (rollup_version): older ones are rebuilt.
 * 3: the started lists; the efficiency sums take Prometheus's figures (runs[].prom) and count prom_s.
 * 4: a day's documents and the open runs' split in parts by job id. */
#define SA_ROLLUP_VERSION 4
/* The encoding of the packed members ("enc"): zigzag varints. */
#define SA_ROLLUP_ENC "varint2"
/* How long a removed member's tombstone stays (longer than any writer stages before it flushes). */
#define SA_ROLLUP_TOMBSTONE_S 3600

/* One job document's records in a rollup document. */
typedef struct {
    char *id;       /* the job document's _id */
    int64_t v;      /* its _v */
    int64_t *rec;   /* nrec x the document's nf */
    size_t nrec;    /* 0: a tombstone (the job left this document at version v) */
    int64_t gone_at; /* a tombstone's time (epoch s), else 0 */
} sa_rollup_member_t;

/* The sums of one row (rows[] of a rollup document). */
typedef struct {
    int64_t gpu_s, cpu_s, mem_mb_s, bill_milli_s, started;
    int64_t e[SA_RR_E_END - SA_RR_E_RUNS]; /* the efficiency sums, in the order of SA_RR_E_* */
} sa_rollup_sum_t;

/* A row as read: its key (index into keys), sums, and runs ended by state (ended[first .. first + n)). */
typedef struct {
    int64_t key;
    sa_rollup_sum_t s;
    size_t ended_first, nended;
} sa_rollup_row_t;

/* Runs ended in a state (index into states). */
typedef struct {
    int64_t state, n;
} sa_rollup_ended_t;

/* One rollup document in memory. */
typedef struct {
    char *id;          /* its _id (sa_rollup_key_id) */
    char *cluster;
    sa_rollup_kind_t kind;
    int64_t day;       /* the day's start for the dated kinds, else 0 */
    int part;
    size_t nf;         /* its records' width: sa_rollup_nf(kind) */
    int64_t v;         /* _v as read; 0: not stored yet */
    int64_t m_v;       /* a rows document: the version of the members it was computed from */
    int64_t seq;       /* _s: the commit that wrote this version (0: written before commits were kept) */
    sa_rollup_rowkey_t *keys;
    size_t nkeys, keycap;
    char **states;
    size_t nstates, statecap;
    char **hosts;      /* the hostlists SA_RR_HOSTS indexes */
    size_t nhosts, hostcap;
    sa_rollup_member_t *m; /* sorted by id */
    size_t nm, mcap;
    sa_rollup_row_t *rows; /* rows as stored (read only: written ones are computed from the members) */
    size_t nrows, rowcap;
    sa_rollup_ended_t *rended;
    size_t nrended, rendedcap;
    bool has_rows, has_members; /* what the query returned */
    bool foreign;      /* written by another version (another record size or encoding): read as empty, so
                          that a rebuild replaces it whole; a report refuses it */
    bool changed;
} sa_rollup_doc_t;

/* The key of d (borrowing its cluster). */
sa_rollup_key_t sa_rollup_doc_key(const sa_rollup_doc_t *d);

void sa_rollup_doc_init(sa_rollup_doc_t *d);
void sa_rollup_doc_clear(sa_rollup_doc_t *d);
/* An empty rollup document named k. */
bool sa_rollup_doc_new(sa_rollup_doc_t *d, const sa_rollup_key_t *k, sa_error_t *error);
/* True when d holds no live member (tombstones only, or none) and no row: the same as no document. */
bool sa_rollup_doc_empty(const sa_rollup_doc_t *d);

/*
 * Sets the member id (version v) of d to the records of c for d's kind and day (none:
 * the member goes, leaving a tombstone of version v for SA_ROLLUP_TOMBSTONE_S), unless d
 * holds that member from a newer version. d->changed says whether anything changed.
 */
bool sa_rollup_doc_put(sa_rollup_doc_t *d, const char *id, int64_t v, const sa_rollup_contrib_t *c,
                       sa_error_t *error);
/* Puts every member of src (tombstones remove) into dst, as sa_rollup_doc_put does. */
bool sa_rollup_doc_merge(sa_rollup_doc_t *dst, const sa_rollup_doc_t *src, sa_error_t *error);
/* The sums of each key (sums[nkeys]) and per key and state the runs ended (ended[nkeys x nstates]). */
bool sa_rollup_doc_sums(const sa_rollup_doc_t *d, sa_rollup_sum_t **sums, int64_t **ended, sa_error_t *error);
/*
 * True when the two documents hold the same live members and records (tables may differ in
 * order). A job list record without planned fields (SA_RL_PLAN 0) or a record without
 * nodes (SA_RR_HOSTS_UNKEPT), as 0.5.0 wrote them, equals one with them when the rest is
 * equal: an older archive verifies, and reports read that job's document instead.
 */
bool sa_rollup_doc_equal(const sa_rollup_doc_t *a, const sa_rollup_doc_t *b);
/* True when the rows read into rows are the sums of the members of members (a day's two documents agree). */
bool sa_rollup_doc_rows_match(const sa_rollup_doc_t *members, const sa_rollup_doc_t *rows);

/*
 * The position of id among n elements sorted by id (each stride bytes, beginning with its
 * char *id), or where it would go; *found says whether it is there.
 */
size_t sa_rollup_find(const void *base, size_t n, size_t stride, const char *id, bool *found);
_Static_assert(offsetof(sa_rollup_member_t, id) == 0, "sa_rollup_find finds a member's id at its start");
_Static_assert(offsetof(sa_rollup_doc_t, id) == 0, "sa_rollup_find finds a rollup document's id at its start");

/* ---- the codec (sa_rollup_codec.c) ---- */

/* The members document to store (its content: no _s, no prev): members packed, _v = v. */
bool sa_rollup_doc_to_bson(const sa_rollup_doc_t *d, int64_t v, bson_t *out, sa_error_t *error);
/* The rows document of a day's members document d (its content): the sums of its members, m_v, _v = v. */
bool sa_rollup_doc_rows_bson(const sa_rollup_doc_t *d, int64_t m_v, int64_t v, bson_t *out, sa_error_t *error);
/*
 * Reads one version of a stored rollup document (b itself, or its prev: see
 * sa_rollup_version): its rows and members when the query returned them (a report reads
 * a whole day's rows without its members). cluster names the document's cluster (the
 * _id's prefix).
 */
bool sa_rollup_doc_read(sa_rollup_doc_t *d, const char *cluster, const bson_t *b, sa_error_t *error);

/*
 * Commits (sa_rollup.h): a stored rollup document holds the version the commit _s wrote,
 * and under `prev` the version before it ({_s, absent: true} when there was none).
 */
#define SA_ROLLUP_SEQ "_s"
#define SA_ROLLUP_PREV "prev"
typedef enum {
    SA_ROLLUP_VER_THIS,   /* b itself */
    SA_ROLLUP_VER_PREV,   /* its prev (*prev points into b) */
    SA_ROLLUP_VER_ABSENT, /* no document at that commit */
    SA_ROLLUP_VER_NEWER   /* both versions are newer than the commit: read again from a newer one */
} sa_rollup_ver_t;
/* The _id of stored document b (borrowed; NULL when it has none that is a string). */
const char *sa_rollup_id_of(const bson_t *b);
/* The commit that wrote b (its _s; 0 when it has none). */
int64_t sa_rollup_seq_of(const bson_t *b);
/*
 * Which version of stored document b a reader at commit seq sees. With
 * SA_ROLLUP_VER_PREV, *prev is initialised as a read-only view of b's prev (valid while b
 * is); b read without its prev (a projection) gives SA_ROLLUP_VER_NEWER where the prev
 * would have been needed.
 */
sa_rollup_ver_t sa_rollup_version(const bson_t *b, int64_t seq, bson_t *prev);
/*
 * The document to store: content (sa_rollup_doc_to_bson's, with its _id and _v), _s =
 * seq, and prev = the version stored now (stored: as read, whole; NULL when there is no
 * document), which must be committed already (its _s <= the last commit).
 */
bool sa_rollup_versioned(const bson_t *content, int64_t seq, const bson_t *stored, bson_t *out, sa_error_t *error);
/*
 * The document that takes back a version never committed: stored's prev, as the
 * document (_v = stored's _v + 1); *absent when prev says there was none (the document
 * is then removed).
 */
bool sa_rollup_unversioned(const bson_t *stored, bson_t *out, bool *absent, sa_error_t *error);

/*
 * The commit document ("<cluster>:commit"): the last committed flush (seq), the
 * observation time open runs count up to at that commit (as_of, SA_UNSET when not said),
 * and a flush under way (intent_seq 0 when none; its writer's host, pid and start, and
 * the _ids it may write).
 */
typedef struct {
    int64_t v;           /* _v (0: not stored) */
    int64_t seq;
    int64_t as_of;
    bool parts;          /* every month that holds a document has its parts index (sa_rollup_key.h) */
    int64_t intent_seq;
    char *intent_host;
    int64_t intent_pid, intent_at;
    char *intent_proc;   /* the writer's process as the host knows it (sa_rollup_proc): a pid alone may be reused */
    sa_strv_t intent_ids;
} sa_rollup_commit_t;
void sa_rollup_commit_init(sa_rollup_commit_t *c);
void sa_rollup_commit_clear(sa_rollup_commit_t *c);
/* Reads a commit document (b NULL: none stored). */
bool sa_rollup_commit_read(sa_rollup_commit_t *c, const bson_t *b, sa_error_t *error);
/* The commit document of cluster to store (_v = c->v + 1). */
bool sa_rollup_commit_bson(const sa_rollup_commit_t *c, const char *cluster, bson_t *out, sa_error_t *error);

/* Reads a month's parts index (sa_rollup_key.h) from its stored version b (all zero when b holds none). */
void sa_rollup_parts_read(sa_rollup_parts_t *p, const bson_t *b);
/* The parts index of cluster's month to store (its content: _id, _v = v, cluster, kind, month, masks). */
bool sa_rollup_parts_bson(const sa_rollup_parts_t *p, const char *cluster, int64_t month, int64_t v, bson_t *out,
                          sa_error_t *error);

#endif
