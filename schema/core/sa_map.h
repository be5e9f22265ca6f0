/*
 * sa_map.h - the one hash map of slurm-archive: a key -> index map over a caller's
 * array, and the one FNV-1a.
 *
 * The map holds no keys: its slots hold an index into the caller's array (+ 1; 0 is
 * an empty slot), and the caller says how to hash and compare the key of an index.
 * Open addressing, linear probing, the slots doubled to keep the load at most 1/2.
 * Indexes are handed out by the caller in the order it adds records, so what the
 * caller iterates (its array) never depends on the hash.
 */
#ifndef SA_MAP_H
#define SA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a (64 bits) of n bytes; sa_fnv1a_more goes on from h (SA_FNV1A_INIT at first).
 * Values stored by the time series (attr.hash) are made with it: it never changes. */
#define SA_FNV1A_INIT 14695981039346656037ULL
uint64_t sa_fnv1a_more(uint64_t h, const void *p, size_t n);
uint64_t sa_fnv1a(const void *p, size_t n);

typedef struct {
    uint32_t *slots; /* an index + 1; 0: empty */
    size_t nslots;   /* 0 or a power of two */
} sa_map_t;

/* The hash of the key of the record at index i of the caller's array. */
typedef uint64_t (*sa_map_hash_fn)(size_t i, void *ctx);
/* Whether the record at index i has key `key`. */
typedef bool (*sa_map_eq_fn)(size_t i, const void *key, void *ctx);

/* An empty map (nothing allocated). */
#define SA_MAP_INIT {NULL, 0}

/*
 * The slot of `key` (whose hash is h) in a map over the caller's first n records
 * (indexes 0..n-1, each added once): *slot is the index + 1 of the record with that
 * key, or 0 when there is none, and then the caller adds its record n by storing n + 1
 * there. The slots are doubled first when n + 1 records would pass the load of 1/2
 * (rehashed with hash). NULL when memory runs out (nothing changed). Valid until the
 * next call.
 */
uint32_t *sa_map_slot(sa_map_t *m, uint64_t h, const void *key, size_t n, sa_map_hash_fn hash, sa_map_eq_fn eq,
                      void *ctx);

/* The index of the record with `key` (hash h), or SIZE_MAX when there is none. */
size_t sa_map_find(const sa_map_t *m, uint64_t h, const void *key, sa_map_eq_fn eq, void *ctx);

/* Frees the slots; the map is empty again. Accepts NULL. */
void sa_map_clear(sa_map_t *m);

#endif
