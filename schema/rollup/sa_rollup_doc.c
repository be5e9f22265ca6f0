/*
 * sa_rollup_doc.c - rollup documents in memory (sa_rollup_doc.h): members put and merged,
 * sums, comparisons. The codec is in sa_rollup_codec.c.
 */
#include "sa_rollup_doc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_model.h"
#include "sa_vec.h"

sa_rollup_key_t sa_rollup_doc_key(const sa_rollup_doc_t *d)
{
    return (sa_rollup_key_t){d->cluster, d->kind, d->day, d->part};
}

void sa_rollup_doc_init(sa_rollup_doc_t *d)
{
    memset(d, 0, sizeof *d);
    d->nf = SA_RR_NF;
}

static void key_free(sa_rollup_rowkey_t *k)
{
    for (int i = 0; i < SA_ROLLUP_ROWKEY_N; i++)
        free(k->s[i]);
}

void sa_rollup_doc_clear(sa_rollup_doc_t *d)
{
    free(d->id);
    free(d->cluster);
    for (size_t i = 0; i < d->nkeys; i++)
        key_free(&d->keys[i]);
    free(d->keys);
    for (size_t i = 0; i < d->nstates; i++)
        free(d->states[i]);
    free(d->states);
    for (size_t i = 0; i < d->nhosts; i++)
        free(d->hosts[i]);
    free(d->hosts);
    for (size_t i = 0; i < d->nm; i++) {
        free(d->m[i].id);
        free(d->m[i].rec);
    }
    free(d->m);
    free(d->rows);
    free(d->rended);
    sa_rollup_doc_init(d);
}

bool sa_rollup_doc_new(sa_rollup_doc_t *d, const sa_rollup_key_t *k, sa_error_t *error)
{
    sa_rollup_doc_init(d);
    d->kind = k->kind;
    d->day = k->day;
    d->part = k->part;
    d->nf = sa_rollup_nf(k->kind);
    if (!(d->cluster = strdup(k->cluster)) || !(d->id = sa_rollup_key_id(k))) {
        sa_rollup_doc_clear(d);
        return sa_error_nomem(error);
    }
    return true;
}

bool sa_rollup_doc_empty(const sa_rollup_doc_t *d)
{
    for (size_t i = 0; i < d->nm; i++) {
        if (d->m[i].nrec)
            return false;
    }
    return d->nrows == 0;
}

/* The index of key s in d (added when new), or -1 on out of memory. */
static int64_t doc_key(sa_rollup_doc_t *d, const sa_rollup_rowkey_t *s)
{
    for (size_t i = 0; i < d->nkeys; i++) {
        if (sa_rollup_rowkey_cmp(&d->keys[i], s) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(d->keys, d->keycap, d->nkeys, 1, 16))
        return -1;
    for (size_t k = 0; k < SA_ROLLUP_ROWKEY_N; k++) {
        if (!(d->keys[d->nkeys].s[k] = strdup(s->s[k]))) {
            while (k-- > 0)
                free(d->keys[d->nkeys].s[k]);
            return -1;
        }
    }
    return (int64_t)d->nkeys++;
}

/* The index of string s in a table of d (added when new), or -1 on out of memory. */
static int64_t doc_str(char ***tab, size_t *n, size_t *cap, const char *s)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*tab)[i], s) == 0)
            return (int64_t)i;
    }
    if (!SA_VEC_GROW(*tab, *cap, *n, 1, 8) || !((*tab)[*n] = strdup(s)))
        return -1;
    return (int64_t)(*n)++;
}

size_t sa_rollup_find(const void *base, size_t n, size_t stride, const char *id, bool *found)
{
    size_t lo = 0, hi = n;
    *found = false;
    while (lo < hi) { /* each element begins with its char *id */
        size_t mid = (lo + hi) / 2;
        int r = strcmp(*(char *const *)((const char *)base + mid * stride), id);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The position of member id in d (or where it would go); *found says whether it is there. */
static size_t member_pos(const sa_rollup_doc_t *d, const char *id, bool *found)
{
    return sa_rollup_find(d->m, d->nm, sizeof *d->m, id, found);
}

/*
 * n records of width d->nf whose keys, states and hosts index the tables (keys, states,
 * hosts), translated to d's tables: *out malloc'ed. False on out of memory.
 */
static bool translate(sa_rollup_doc_t *d, const int64_t *rec, size_t n, const sa_rollup_rowkey_t *keys,
                      const char *const *states, const char *const *hosts, int64_t **out)
{
    int sf = sa_rollup_state_field(d->kind), hf = sa_rollup_hosts_field(d->kind);
    *out = NULL;
    if (!n)
        return true;
    if (!(*out = malloc(n * d->nf * sizeof **out)))
        return false;
    memcpy(*out, rec, n * d->nf * sizeof **out);
    for (size_t r = 0; r < n; r++) {
        int64_t *x = &(*out)[r * d->nf];
        if ((x[0] = doc_key(d, &keys[x[0]])) < 0 ||
            (sf >= 0 && x[sf] >= 0 && (x[sf] = doc_str(&d->states, &d->nstates, &d->statecap, states[x[sf]])) < 0) ||
            (hf >= 0 && x[hf] >= 0 && (x[hf] = doc_str(&d->hosts, &d->nhosts, &d->hostcap, hosts[x[hf]])) < 0)) {
            free(*out);
            *out = NULL;
            return false;
        }
    }
    return true;
}

/*
 * Sets member id (version v) of d to rec[0..n) (owned by d from here), unless d holds the
 * member from a newer version. n == 0: the member leaves, and a tombstone of version v
 * stays (for SA_ROLLUP_TOMBSTONE_S), so that a put of an older version staged by
 * another writer before this removal cannot bring it back.
 */
static bool put_member(sa_rollup_doc_t *d, const char *id, int64_t v, int64_t *rec, size_t n, sa_error_t *error)
{
    bool found;
    size_t pos = member_pos(d, id, &found);
    int64_t gone = n ? 0 : (int64_t)time(NULL);

    if (found && d->m[pos].v > v) {
        free(rec);
        return true; /* a newer version of the job is there */
    }
    if (found) {
        sa_rollup_member_t *m = &d->m[pos];
        if (m->nrec == n && m->v == v && (n == 0 || memcmp(m->rec, rec, n * d->nf * sizeof *rec) == 0)) {
            free(rec);
            return true;
        }
        free(m->rec);
        m->rec = rec;
        m->nrec = n;
        m->v = v;
        m->gone_at = gone;
        d->changed = true;
        return true;
    }
    if (!SA_VEC_GROW(d->m, d->mcap, d->nm, 1, 64)) {
        free(rec);
        return sa_error_nomem(error);
    }
    memmove(&d->m[pos + 1], &d->m[pos], (d->nm - pos) * sizeof *d->m);
    d->m[pos].rec = rec;
    d->m[pos].nrec = n;
    d->m[pos].v = v;
    d->m[pos].gone_at = gone;
    if (!(d->m[pos].id = strdup(id))) {
        memmove(&d->m[pos], &d->m[pos + 1], (d->nm - pos) * sizeof *d->m);
        free(rec);
        return sa_error_nomem(error);
    }
    d->nm++;
    d->changed = true;
    return true;
}

bool sa_rollup_doc_put(sa_rollup_doc_t *d, const char *id, int64_t v, const sa_rollup_contrib_t *c,
                       sa_error_t *error)
{
    const sa_rollup_contrib_doc_t *cd = c ? sa_rollup_contrib_find(c, d->kind, d->day) : NULL;
    int64_t *rec = NULL;
    size_t n = cd ? cd->nrec : 0;

    if (n && !translate(d, cd->rec, n, c->keys, c->states, c->hosts, &rec))
        return sa_error_nomem(error);
    return put_member(d, id, v, rec, n, error);
}

bool sa_rollup_doc_merge(sa_rollup_doc_t *dst, const sa_rollup_doc_t *src, sa_error_t *error)
{
    for (size_t i = 0; i < src->nm; i++) {
        const sa_rollup_member_t *m = &src->m[i];
        int64_t *rec = NULL;
        if (m->nrec && !translate(dst, m->rec, m->nrec, src->keys, (const char *const *)src->states,
                                  (const char *const *)src->hosts, &rec))
            return sa_error_nomem(error);
        if (!put_member(dst, m->id, m->v, rec, m->nrec, error))
            return false;
    }
    return true;
}

/* ---- sums ----------------------------------------------------------------------------------- */

bool sa_rollup_doc_sums(const sa_rollup_doc_t *d, sa_rollup_sum_t **sums, int64_t **ended, sa_error_t *error)
{
    *sums = calloc(d->nkeys ? d->nkeys : 1, sizeof **sums);
    *ended = calloc(d->nkeys * d->nstates > 0 ? d->nkeys * d->nstates : 1, sizeof **ended);
    if (!*sums || !*ended) {
        free(*sums);
        free(*ended);
        *sums = NULL;
        *ended = NULL;
        return sa_error_nomem(error);
    }
    if (d->nf != SA_RR_NF)
        return true; /* a started list: no sums */
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * SA_RR_NF];
            sa_rollup_sum_t *s = &(*sums)[x[SA_RR_KEY]];
            int64_t len = d->kind != SA_ROLLUP_K_MEMBERS ? 0 : x[SA_RR_END] - x[SA_RR_START];
            s->gpu_s += x[SA_RR_GPUS] * len;
            s->cpu_s += x[SA_RR_CPUS] * len;
            s->mem_mb_s += x[SA_RR_MEM] * len;
            s->bill_milli_s += x[SA_RR_BILL] * len;
            s->started += x[SA_RR_STARTED];
            for (int e = SA_RR_E_RUNS; e < SA_RR_E_END; e++)
                s->e[e - SA_RR_E_RUNS] += x[e];
            if (x[SA_RR_STATE] >= 0)
                (*ended)[x[SA_RR_KEY] * (int64_t)d->nstates + x[SA_RR_STATE]]++;
        }
    }
    return true;
}

/* ---- comparing ------------------------------------------------------------------------------- */

bool sa_rollup_doc_rows_match(const sa_rollup_doc_t *members, const sa_rollup_doc_t *rows)
{
    sa_rollup_sum_t *sums = NULL;
    int64_t *ended = NULL;
    size_t used = 0, matched = 0;
    sa_error_t err;
    bool ok = true;

    if (!sa_rollup_doc_sums(members, &sums, &ended, &err))
        return false;
    for (size_t k = 0; k < members->nkeys; k++) { /* the keys the members use have a row each */
        bool any = false;
        for (size_t i = 0; !any && i < members->nm; i++) {
            for (size_t r = 0; !any && r < members->m[i].nrec; r++)
                any = members->m[i].rec[r * members->nf + SA_RR_KEY] == (int64_t)k;
        }
        used += any;
    }
    for (size_t i = 0; ok && i < rows->nrows; i++) {
        const sa_rollup_row_t *row = &rows->rows[i];
        size_t k = 0;
        while (k < members->nkeys && sa_rollup_rowkey_cmp(&members->keys[k], &rows->keys[row->key]) != 0)
            k++;
        if (k == members->nkeys || memcmp(&sums[k], &row->s, sizeof row->s) != 0) {
            ok = false;
            break;
        }
        for (size_t e = 0; ok && e < row->nended; e++) {
            const sa_rollup_ended_t *x = &rows->rended[row->ended_first + e];
            size_t st = 0;
            while (st < members->nstates && strcmp(members->states[st], rows->states[x->state]) != 0)
                st++;
            ok = st < members->nstates && ended[k * members->nstates + st] == x->n;
        }
        matched++;
    }
    free(sums);
    free(ended);
    return ok && matched == used;
}

/* The next live member of d from *i (tombstones skipped), or NULL. */
static const sa_rollup_member_t *next_live(const sa_rollup_doc_t *d, size_t *i)
{
    while (*i < d->nm && d->m[*i].nrec == 0)
        (*i)++;
    return *i < d->nm ? &d->m[(*i)++] : NULL;
}

bool sa_rollup_doc_equal(const sa_rollup_doc_t *a, const sa_rollup_doc_t *b)
{
    size_t i = 0, j = 0;
    int sf = sa_rollup_state_field(a->kind), hf = sa_rollup_hosts_field(a->kind);
    bool list = a->kind == SA_ROLLUP_K_LIVE || a->kind == SA_ROLLUP_K_ENDED;
    if (a->kind != b->kind || a->day != b->day || a->part != b->part || a->nf != b->nf)
        return false;
    for (;;) {
        const sa_rollup_member_t *x = next_live(a, &i), *y = next_live(b, &j);
        if (!x || !y)
            return !x && !y;
        if (strcmp(x->id, y->id) != 0 || x->v != y->v || x->nrec != y->nrec)
            return false;
        for (size_t r = 0; r < x->nrec; r++) {
            const int64_t *p = &x->rec[r * a->nf], *q = &y->rec[r * b->nf];
            /* a list record written before 0.5.1 keeps no planned fields (SA_RL_*): the rest must be equal */
            bool unplanned = list && (p[SA_RL_PLAN] == 0) != (q[SA_RL_PLAN] == 0);
            for (int f = 0; f < (int)a->nf; f++) {
                if (unplanned && f >= SA_RL_PLAN && f <= SA_RL_TASKS)
                    continue;
                if (f == 0) {
                    if (sa_rollup_rowkey_cmp(&a->keys[p[f]], &b->keys[q[f]]) != 0)
                        return false;
                } else if (f == sf) {
                    if ((p[f] < 0) != (q[f] < 0) || (p[f] >= 0 && strcmp(a->states[p[f]], b->states[q[f]]) != 0))
                        return false;
                } else if (f == hf) {
                    /* a record written before 0.5.1 kept no hosts: the rest must be equal */
                    if (p[f] == SA_RR_HOSTS_UNKEPT || q[f] == SA_RR_HOSTS_UNKEPT)
                        continue;
                    if ((p[f] < 0) != (q[f] < 0) || (p[f] >= 0 && strcmp(a->hosts[p[f]], b->hosts[q[f]]) != 0))
                        return false;
                } else if (p[f] != q[f]) {
                    return false;
                }
            }
        }
    }
}
