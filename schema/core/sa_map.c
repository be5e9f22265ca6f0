/*
 * sa_map.c - the key -> index map and FNV-1a (see sa_map.h).
 */
#include "sa_map.h"

#include <stdlib.h>

uint64_t sa_fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

uint64_t sa_fnv1a(const void *p, size_t n)
{
    return sa_fnv1a_more(SA_FNV1A_INIT, p, n);
}

/* Doubles the slots (or makes the first 64) and puts the first n records back. */
static bool map_grow(sa_map_t *m, size_t n, sa_map_hash_fn hash, void *ctx)
{
    size_t nslots = m->nslots ? m->nslots * 2 : 64;
    uint32_t *slots;

    if (nslots < m->nslots || nslots > SIZE_MAX / sizeof *slots || n >= UINT32_MAX)
        return false;
    if (!(slots = calloc(nslots, sizeof *slots)))
        return false;
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)hash(i, ctx) & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = nslots;
    return true;
}

uint32_t *sa_map_slot(sa_map_t *m, uint64_t h, const void *key, size_t n, sa_map_hash_fn hash, sa_map_eq_fn eq,
                      void *ctx)
{
    size_t j;

    while ((n + 1) * 2 > m->nslots) {
        if (!map_grow(m, n, hash, ctx))
            return NULL;
    }
    j = (size_t)h & (m->nslots - 1);
    while (m->slots[j] && !eq(m->slots[j] - 1, key, ctx))
        j = (j + 1) & (m->nslots - 1);
    return &m->slots[j];
}

size_t sa_map_find(const sa_map_t *m, uint64_t h, const void *key, sa_map_eq_fn eq, void *ctx)
{
    if (!m->nslots)
        return SIZE_MAX;
    for (size_t j = (size_t)h & (m->nslots - 1); m->slots[j]; j = (j + 1) & (m->nslots - 1)) {
        if (eq(m->slots[j] - 1, key, ctx))
            return m->slots[j] - 1;
    }
    return SIZE_MAX;
}

void sa_map_clear(sa_map_t *m)
{
    if (!m)
        return;
    free(m->slots);
    m->slots = NULL;
    m->nslots = 0;
}
