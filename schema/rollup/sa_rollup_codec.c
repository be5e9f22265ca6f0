/*
 * sa_rollup_codec.c - rollup documents as BSON (sa_rollup_doc.h): packed members and rows,
 * the two versions a stored document keeps for readers, and the commit document.
 */
#define _GNU_SOURCE /* qsort_r */
#include "sa_rollup_doc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sa_model.h"
#include "sa_vec.h"

/* A zigzag varint (LEB128): small numbers, negative ones too, in a byte or two. */
static uint8_t *put_var(uint8_t *p, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    return p;
}

static bool get_var(const uint8_t *m, size_t len, size_t *pos, int64_t *v)
{
    uint64_t u = 0;
    for (int shift = 0; *pos < len && shift < 64; shift += 7) {
        uint8_t b = m[(*pos)++];
        u |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = (int64_t)(u >> 1) ^ (u & 1 ? -1 : 0);
            return true;
        }
    }
    return false;
}

/* Whether field f of a record of a document of kind is a time kept as seconds into the document's day. */
static bool day_relative(sa_rollup_kind_t kind, int f)
{
    if (kind == SA_ROLLUP_K_STARTED)
        return f == SA_RS_START || f == SA_RS_SUBMIT || f == SA_RS_ELIGIBLE;
    return kind == SA_ROLLUP_K_MEMBERS && (f == SA_RR_START || f == SA_RR_END || f == SA_RR_ENDED_AT);
}

/* A record's value as stored (encode) or as meant (decode): times of a day's records are relative to it. */
static int64_t rel_time(const sa_rollup_doc_t *d, int f, int64_t val, bool encode)
{
    if (!day_relative(d->kind, f) || val == SA_UNSET || (f == SA_RR_ENDED_AT && d->kind == SA_ROLLUP_K_MEMBERS && val < 0))
        return val;
    return encode ? val - d->day : val + d->day;
}

/*
 * The canonical order of the used keys, states and hosts (sorted; unused left out):
 * kmap[old] = new index or -1, korder[new] = old; likewise for states and hosts.
 */
typedef struct {
    size_t *korder, *sorder, *horder;
    int64_t *kmap, *smap, *hmap;
    size_t nk, ns, nh;
} canon_t;

static void canon_clear(canon_t *c)
{
    free(c->korder);
    free(c->sorder);
    free(c->horder);
    free(c->kmap);
    free(c->smap);
    free(c->hmap);
}

static int keyidx_cmp(const void *x, const void *y, void *ctx)
{
    const sa_rollup_doc_t *d = ctx;
    return sa_rollup_rowkey_cmp(&d->keys[*(const size_t *)x], &d->keys[*(const size_t *)y]);
}

/* The order of two indexes into a table of strings (ctx: the table). */
static int stridx_cmp(const void *x, const void *y, void *ctx)
{
    char *const *tab = ctx;
    return strcmp(tab[*(const size_t *)x], tab[*(const size_t *)y]);
}

/*
 * One table's canonical order: the n entries marked used (map[i] == 0, else -1) sorted by
 * cmp into order[0..*nused), and map[old] = the new index.
 */
static void canon_order(size_t n, int64_t *map, size_t *order, size_t *nused,
                        int (*cmp)(const void *, const void *, void *), void *ctx)
{
    *nused = 0;
    for (size_t i = 0; i < n; i++) {
        if (map[i] == 0)
            order[(*nused)++] = i;
    }
    qsort_r(order, *nused, sizeof *order, cmp, ctx);
    for (size_t i = 0; i < *nused; i++)
        map[order[i]] = (int64_t)i;
}

static bool canon_make(const sa_rollup_doc_t *d, canon_t *c)
{
    int sf = sa_rollup_state_field(d->kind), hf = sa_rollup_hosts_field(d->kind);
    memset(c, 0, sizeof *c);
    c->korder = malloc((d->nkeys + 1) * sizeof *c->korder);
    c->sorder = malloc((d->nstates + 1) * sizeof *c->sorder);
    c->horder = malloc((d->nhosts + 1) * sizeof *c->horder);
    c->kmap = malloc((d->nkeys + 1) * sizeof *c->kmap);
    c->smap = malloc((d->nstates + 1) * sizeof *c->smap);
    c->hmap = malloc((d->nhosts + 1) * sizeof *c->hmap);
    if (!c->korder || !c->sorder || !c->horder || !c->kmap || !c->smap || !c->hmap)
        return false;
    for (size_t i = 0; i < d->nkeys; i++)
        c->kmap[i] = -1;
    for (size_t i = 0; i < d->nstates; i++)
        c->smap[i] = -1;
    for (size_t i = 0; i < d->nhosts; i++)
        c->hmap[i] = -1;
    for (size_t i = 0; i < d->nm; i++) {
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * d->nf];
            c->kmap[x[0]] = 0;
            if (sf >= 0 && x[sf] >= 0)
                c->smap[x[sf]] = 0;
            if (hf >= 0 && x[hf] >= 0)
                c->hmap[x[hf]] = 0;
        }
    }
    canon_order(d->nkeys, c->kmap, c->korder, &c->nk, keyidx_cmp, (void *)d);
    canon_order(d->nstates, c->smap, c->sorder, &c->ns, stridx_cmp, d->states);
    canon_order(d->nhosts, c->hmap, c->horder, &c->nh, stridx_cmp, d->hosts);
    return true;
}

/*
 * A day's rows, packed (r): per row in the order of the keys table, its key index, gpu_s,
 * cpu_s, mem_mb_s, billing_milli_s, runs_started, the SA_RR_NF - SA_RR_E_RUNS efficiency
 * sums, the number of states it has runs ended in, then (state index, runs) for each;
 * zigzag varints. The server then stores and returns a day as a few values, however many
 * rows it has (FerretDB spends microseconds per value it decodes).
 */
static bool append_rows(const sa_rollup_doc_t *d, const canon_t *c, const sa_rollup_sum_t *sums, const int64_t *ended,
                        bson_t *out)
{
    size_t cap = c->nk * (6 + (SA_RR_E_END - SA_RR_E_RUNS) + 1 + 2 * c->ns) * 10 + 1;
    uint8_t *r = malloc(cap), *p = r;

    if (!r || cap > UINT32_MAX) {
        free(r);
        return false;
    }
    for (size_t i = 0; i < c->nk; i++) {
        size_t k = c->korder[i], nend = 0;
        const sa_rollup_sum_t *sm = &sums[k];
        p = put_var(p, (int64_t)i);
        p = put_var(p, sm->gpu_s);
        p = put_var(p, sm->cpu_s);
        p = put_var(p, sm->mem_mb_s);
        p = put_var(p, sm->bill_milli_s);
        p = put_var(p, sm->started);
        for (int e = 0; e < SA_RR_E_END - SA_RR_E_RUNS; e++)
            p = put_var(p, sm->e[e]);
        for (size_t t = 0; t < c->ns; t++)
            nend += ended[k * d->nstates + c->sorder[t]] != 0;
        p = put_var(p, (int64_t)nend);
        for (size_t t = 0; t < c->ns; t++) {
            int64_t n = ended[k * d->nstates + c->sorder[t]];
            if (n) {
                p = put_var(p, (int64_t)t);
                p = put_var(p, n);
            }
        }
    }
    BSON_APPEND_INT32(out, "nf", SA_RR_NF_05); /* the sums' count follows it (older rows documents have none) */
    bson_append_binary(out, "r", -1, BSON_SUBTYPE_BINARY, r, (uint32_t)(p - r));
    free(r);
    return true;
}

/* A table of strings (tab[order[0..n)]), each NUL-terminated, packed as binary field name. */
static bool append_strs(bson_t *out, const char *name, char *const *tab, const size_t *order, size_t n)
{
    size_t len = 0;
    char *t, *p;

    for (size_t i = 0; i < n; i++)
        len += strlen(tab[order[i]]) + 1;
    if (len > UINT32_MAX || !(t = malloc(len + 1)))
        return false;
    p = t;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(tab[order[i]]) + 1;
        memcpy(p, tab[order[i]], l);
        p += l;
    }
    bson_append_binary(out, name, -1, BSON_SUBTYPE_BINARY, (const uint8_t *)t, (uint32_t)len);
    free(t);
    return true;
}

/*
 * The keys (kt: per key its SA_ROLLUP_ROWKEY_N strings, each NUL-terminated) and states
 * (st: each NUL-terminated) tables, in canonical order, packed for the reason of
 * append_rows.
 */
static bool append_tables(const sa_rollup_doc_t *d, const canon_t *c, bson_t *out)
{
    size_t kl = 0;
    char *kt, *p;

    for (size_t i = 0; i < c->nk; i++) {
        for (int f = 0; f < SA_ROLLUP_ROWKEY_N; f++)
            kl += strlen(d->keys[c->korder[i]].s[f]) + 1;
    }
    if (kl > UINT32_MAX || !(kt = malloc(kl + 1)))
        return false;
    p = kt;
    for (size_t i = 0; i < c->nk; i++) {
        for (int f = 0; f < SA_ROLLUP_ROWKEY_N; f++) {
            size_t l = strlen(d->keys[c->korder[i]].s[f]) + 1;
            memcpy(p, d->keys[c->korder[i]].s[f], l);
            p += l;
        }
    }
    BSON_APPEND_UTF8(out, "enc", SA_ROLLUP_ENC);
    bson_append_binary(out, "kt", -1, BSON_SUBTYPE_BINARY, (const uint8_t *)kt, (uint32_t)kl);
    free(kt);
    return append_strs(out, "st", d->states, c->sorder, c->ns);
}

/*
 * ids: the members' _ids joined by NUL; m: per member its version, record count and
 * tombstone time, then its records, every value a zigzag varint (a day's times as seconds
 * into the day); nf: the record width.
 */
static bool append_members(const sa_rollup_doc_t *d, const canon_t *c, bson_t *out)
{
    size_t idlen = 0, nval = 0;
    int64_t expired = (int64_t)time(NULL) - SA_ROLLUP_TOMBSTONE_S;
    int sf = sa_rollup_state_field(d->kind), hf = sa_rollup_hosts_field(d->kind);
    char *ids;
    uint8_t *m, *p;

    for (size_t i = 0; i < d->nm; i++) {
        if (!d->m[i].nrec && d->m[i].gone_at < expired)
            continue;
        idlen += strlen(d->m[i].id) + 1;
        nval += 3 + d->m[i].nrec * d->nf;
    }
    ids = malloc(idlen + 1);
    m = malloc(nval * 10 + 1);
    if (!ids || !m || idlen > UINT32_MAX || nval * 10 > UINT32_MAX) {
        free(ids);
        free(m);
        return false;
    }
    p = m;
    idlen = 0;
    for (size_t i = 0; i < d->nm; i++) {
        size_t l = strlen(d->m[i].id) + 1;
        if (!d->m[i].nrec && d->m[i].gone_at < expired)
            continue; /* a tombstone past its time */
        memcpy(ids + idlen, d->m[i].id, l);
        idlen += l;
        p = put_var(p, d->m[i].v);
        p = put_var(p, (int64_t)d->m[i].nrec);
        p = put_var(p, d->m[i].gone_at);
        for (size_t r = 0; r < d->m[i].nrec; r++) {
            const int64_t *x = &d->m[i].rec[r * d->nf];
            for (int f = 0; f < (int)d->nf; f++) {
                int64_t val = x[f];
                if (f == 0)
                    val = c->kmap[val];
                else if (f == sf && val >= 0)
                    val = c->smap[val];
                else if (f == hf && val >= 0)
                    val = c->hmap[val];
                p = put_var(p, rel_time(d, f, val, true));
            }
        }
    }
    BSON_APPEND_INT32(out, "nf", (int32_t)d->nf);
    if (c->nh && !append_strs(out, "ht", d->hosts, c->horder, c->nh)) { /* ht: the hostlists, canonical order */
        free(ids);
        free(m);
        return false;
    }
    bson_append_binary(out, "ids", -1, BSON_SUBTYPE_BINARY, (const uint8_t *)ids, (uint32_t)idlen);
    bson_append_binary(out, "m", -1, BSON_SUBTYPE_BINARY, m, (uint32_t)(p - m));
    free(ids);
    free(m);
    return true;
}

/* The fields every rollup document starts with: _id, cluster, and what names it (kind, day, part). */
static void append_head(const sa_rollup_doc_t *d, const char *id, sa_rollup_kind_t kind, bson_t *out)
{
    BSON_APPEND_UTF8(out, "_id", id);
    BSON_APPEND_UTF8(out, "cluster", d->cluster);
    BSON_APPEND_UTF8(out, "kind", sa_rollup_kind_name(kind));
    if (sa_rollup_kind_dated(kind))
        BSON_APPEND_DATE_TIME(out, "day", d->day * 1000);
    if (sa_rollup_kind_parted(kind))
        BSON_APPEND_INT32(out, "part", d->part);
}

bool sa_rollup_doc_to_bson(const sa_rollup_doc_t *d, int64_t v, bson_t *out, sa_error_t *error)
{
    canon_t c;
    bool ok = false;

    if (canon_make(d, &c)) {
        append_head(d, d->id, d->kind, out);
        BSON_APPEND_INT64(out, "_v", v);
        ok = append_tables(d, &c, out) && append_members(d, &c, out);
    }
    canon_clear(&c);
    return ok || sa_error_nomem(error);
}

bool sa_rollup_doc_rows_bson(const sa_rollup_doc_t *d, int64_t m_v, int64_t v, bson_t *out, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(d->cluster, SA_ROLLUP_K_ROWS, d->day, d->part);
    sa_rollup_sum_t *sums = NULL;
    int64_t *ended = NULL;
    char *id = d->kind == SA_ROLLUP_K_MEMBERS ? sa_rollup_key_id(&k) : NULL;
    canon_t c;
    bool ok = false;

    if (!id)
        return sa_error_nomem(error);
    if (!canon_make(d, &c)) {
        canon_clear(&c);
        free(id);
        return sa_error_nomem(error);
    }
    if (sa_rollup_doc_sums(d, &sums, &ended, error)) {
        append_head(d, id, SA_ROLLUP_K_ROWS, out);
        BSON_APPEND_INT64(out, "_v", v);
        BSON_APPEND_INT64(out, "m_v", m_v);
        ok = append_tables(d, &c, out) && append_rows(d, &c, sums, ended, out);
        if (!ok)
            sa_error_nomem(error);
    }
    canon_clear(&c);
    free(sums);
    free(ended);
    free(id);
    return ok;
}

/* ---- reading ----------------------------------------------------------------------------------- */

static bool bad(sa_error_t *error, const char *id, const char *what)
{
    sa_error_set(error, SA_ERR_INPUT, 0, "rollup document %s: %s", id ? id : "(no _id)", what);
    return false;
}

/* The next NUL-terminated string of a packed table at *pos, or NULL at its end or when it is cut. */
static const char *next_str(const uint8_t *t, size_t len, size_t *pos)
{
    const char *s = (const char *)t + *pos;
    const uint8_t *nul = *pos < len ? memchr(t + *pos, 0, len - *pos) : NULL;
    if (!nul)
        return NULL;
    *pos = (size_t)(nul - t) + 1;
    return s;
}

static bool read_keys(sa_rollup_doc_t *d, const uint8_t *t, uint32_t len, sa_error_t *error)
{
    size_t pos = 0;
    while (pos < len) {
        const char *s[SA_ROLLUP_ROWKEY_N];
        for (int k = 0; k < SA_ROLLUP_ROWKEY_N; k++) {
            if (!(s[k] = next_str(t, len, &pos)))
                return bad(error, d->id, "the keys table is cut");
        }
        if (!SA_VEC_GROW(d->keys, d->keycap, d->nkeys, 1, 16))
            return sa_error_nomem(error);
        for (int k = 0; k < SA_ROLLUP_ROWKEY_N; k++) { /* appended as is: a stored table has no duplicates */
            if (!(d->keys[d->nkeys].s[k] = strdup(s[k]))) {
                while (k-- > 0)
                    free(d->keys[d->nkeys].s[k]);
                return sa_error_nomem(error);
            }
        }
        d->nkeys++;
    }
    return true;
}

/* A packed table of strings (st, ht: each NUL-terminated) into tab; what names it in an error. */
static bool read_strs(sa_rollup_doc_t *d, const uint8_t *t, uint32_t len, char ***tab, size_t *n, size_t *cap,
                      const char *what, sa_error_t *error)
{
    size_t pos = 0;
    while (pos < len) {
        const char *s = next_str(t, len, &pos);
        if (!s)
            return bad(error, d->id, what);
        if (!SA_VEC_GROW(*tab, *cap, *n, 1, 8) || !((*tab)[*n] = strdup(s)))
            return sa_error_nomem(error);
        (*n)++;
    }
    return true;
}

/* The packed rows (append_rows), against the tables read before. */
static bool read_rows(sa_rollup_doc_t *d, const uint8_t *r, uint32_t len, sa_error_t *error)
{
    size_t pos = 0;
    d->has_rows = true;
    while (pos < len) {
        sa_rollup_row_t row;
        int64_t *f[] = {&row.key, &row.s.gpu_s, &row.s.cpu_s, &row.s.mem_mb_s, &row.s.bill_milli_s, &row.s.started};
        int64_t nend;
        memset(&row, 0, sizeof row);
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            if (!get_var(r, len, &pos, f[i]))
                return bad(error, d->id, "the rows are cut");
        }
        for (int e = 0; e < SA_RR_E_END - SA_RR_E_RUNS; e++) {
            if (!get_var(r, len, &pos, &row.s.e[e]))
                return bad(error, d->id, "the rows are cut");
        }
        if (row.key < 0 || (size_t)row.key >= d->nkeys || !get_var(r, len, &pos, &nend) || nend < 0 ||
            (size_t)nend > d->nstates)
            return bad(error, d->id, "a row's key or states are out of range");
        row.ended_first = d->nrended;
        for (int64_t k = 0; k < nend; k++) {
            int64_t st, n;
            if (!get_var(r, len, &pos, &st) || !get_var(r, len, &pos, &n) || st < 0 || (size_t)st >= d->nstates)
                return bad(error, d->id, "a row's runs ended are cut or out of range");
            if (!SA_VEC_GROW(d->rended, d->rendedcap, d->nrended, 1, 16))
                return sa_error_nomem(error);
            d->rended[d->nrended].state = st;
            d->rended[d->nrended++].n = n;
            row.nended++;
        }
        if (!SA_VEC_GROW(d->rows, d->rowcap, d->nrows, 1, 16))
            return sa_error_nomem(error);
        d->rows[d->nrows++] = row;
    }
    return true;
}

/*
 * A started-list record as 0.4 stored it, in a member record's slots (start START,
 * submit END, eligible ENDED_AT, GPUs GPUS, nodes MEM, CPUs CPUS), into x (SA_RS_NF).
 */
static void started_of_04(const int64_t *old, int64_t *x)
{
    x[SA_RS_KEY] = old[SA_RR_KEY];
    x[SA_RS_START] = old[SA_RR_START];
    x[SA_RS_SUBMIT] = old[SA_RR_END];
    x[SA_RS_ELIGIBLE] = old[SA_RR_ENDED_AT];
    x[SA_RS_GPUS] = old[SA_RR_GPUS];
    x[SA_RS_NODES] = old[SA_RR_MEM];
    x[SA_RS_CPUS] = old[SA_RR_CPUS];
}

/* Reads one record of stored width snf at *mp into x (the document's width). */
static bool read_record(sa_rollup_doc_t *d, const uint8_t *m, uint32_t mlen, size_t *mp, size_t snf, int64_t *x,
                        sa_error_t *error)
{
    int64_t old[SA_RR_NF];
    int64_t *into = snf == d->nf || d->kind != SA_ROLLUP_K_STARTED ? x : old;
    int sf = sa_rollup_state_field(d->kind), hf = sa_rollup_hosts_field(d->kind);

    for (size_t f = 0; f < snf; f++) {
        if (!get_var(m, mlen, mp, &into[f]))
            return bad(error, d->id, "members cut short");
    }
    if (snf < d->nf && into == x)
        x[SA_RR_HOSTS] = SA_RR_HOSTS_UNKEPT; /* a record of 0.5.0 or before (SA_RR_NF_05): no hosts kept */
    if (into == old) { /* 0.4's started record: its three times relative to the day, in those slots */
        static const int rel[] = {SA_RR_START, SA_RR_END, SA_RR_ENDED_AT};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            if (old[rel[i]] != SA_UNSET)
                old[rel[i]] += d->day;
        }
        started_of_04(old, x);
    } else {
        for (size_t f = 0; f < snf; f++)
            x[f] = rel_time(d, (int)f, x[f], false);
    }
    if (x[0] < 0 || (size_t)x[0] >= d->nkeys ||
        (sf >= 0 && (x[sf] < -1 || (x[sf] >= 0 && (size_t)x[sf] >= d->nstates))) ||
        (hf >= 0 && (x[hf] < SA_RR_HOSTS_UNKEPT || (x[hf] >= 0 && (size_t)x[hf] >= d->nhosts))))
        return bad(error, d->id, "a record indexes no key, state or hosts");
    return true;
}

static bool read_members(sa_rollup_doc_t *d, size_t snf, const uint8_t *ids, uint32_t idlen, const uint8_t *m,
                         uint32_t mlen, sa_error_t *error)
{
    size_t ip = 0, mp = 0;
    while (ip < idlen) {
        const char *id = (const char *)ids + ip;
        size_t l = strnlen(id, idlen - ip);
        int64_t v, n, gone;
        sa_rollup_member_t *x;
        if (l == idlen - ip || !get_var(m, mlen, &mp, &v) || !get_var(m, mlen, &mp, &n) ||
            !get_var(m, mlen, &mp, &gone))
            return bad(error, d->id, "members cut short");
        if (n < 0 || (uint64_t)n > (mlen - mp) / snf || (n == 0) != (gone > 0))
            return bad(error, d->id, "a member's record count is out of range");
        if (!SA_VEC_GROW(d->m, d->mcap, d->nm, 1, 64))
            return sa_error_nomem(error);
        x = &d->m[d->nm];
        x->v = v;
        x->gone_at = gone;
        x->nrec = (size_t)n;
        x->id = strdup(id);
        x->rec = malloc(((size_t)n ? (size_t)n : 1) * d->nf * sizeof *x->rec);
        if (!x->id || !x->rec) {
            free(x->id);
            free(x->rec);
            return sa_error_nomem(error);
        }
        d->nm++;
        for (size_t r = 0; r < x->nrec; r++) {
            if (!read_record(d, m, mlen, &mp, snf, &x->rec[r * d->nf], error))
                return false;
        }
        if (d->nm > 1 && strcmp(d->m[d->nm - 2].id, id) >= 0)
            return bad(error, d->id, "members are not sorted");
        ip += l + 1;
    }
    if (mp != mlen)
        return bad(error, d->id, "members and their ids differ in number");
    return true;
}

bool sa_rollup_doc_read(sa_rollup_doc_t *d, const char *cluster, const bson_t *b, sa_error_t *error)
{
    bson_iter_t it;
    const uint8_t *ids = NULL, *m = NULL, *kt = NULL, *stt = NULL, *ht = NULL, *rows = NULL;
    uint32_t idlen = 0, mlen = 0, ktlen = 0, stlen = 0, htlen = 0, rlen = 0;
    int64_t nf = SA_RR_NF;
    sa_rollup_key_t k;
    bool enc_ok = false, has_nf = false;

    sa_rollup_doc_clear(d);
    if (!bson_iter_init(&it, b))
        return bad(error, NULL, "not BSON");
    while (bson_iter_next(&it)) {
        const char *key = bson_iter_key(&it);
        bson_subtype_t st;
        if (strcmp(key, "_id") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            if (!(d->id = strdup(bson_iter_utf8(&it, NULL))))
                return sa_error_nomem(error);
        } else if (strcmp(key, "_v") == 0 && (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it))) {
            d->v = bson_iter_as_int64(&it);
        } else if (strcmp(key, SA_ROLLUP_SEQ) == 0 && (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it))) {
            d->seq = bson_iter_as_int64(&it);
        } else if (strcmp(key, "m_v") == 0 && (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it))) {
            d->m_v = bson_iter_as_int64(&it);
        } else if (strcmp(key, "nf") == 0 && BSON_ITER_HOLDS_INT32(&it)) {
            nf = bson_iter_int32(&it);
            has_nf = true;
        } else if (strcmp(key, "enc") == 0 && BSON_ITER_HOLDS_UTF8(&it)) {
            enc_ok = strcmp(bson_iter_utf8(&it, NULL), SA_ROLLUP_ENC) == 0;
        } else if (strcmp(key, "kt") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &ktlen, &kt);
        } else if (strcmp(key, "st") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &stlen, &stt);
        } else if (strcmp(key, "ht") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &htlen, &ht);
        } else if (strcmp(key, "r") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &rlen, &rows);
        } else if (strcmp(key, "ids") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &idlen, &ids);
        } else if (strcmp(key, "m") == 0 && BSON_ITER_HOLDS_BINARY(&it)) {
            bson_iter_binary(&it, &st, &mlen, &m);
        }
    }
    if (!d->id)
        return bad(error, NULL, "no _id");
    if (!sa_rollup_key_parse(cluster, d->id, &k) || k.kind > SA_ROLLUP_K_LIVE)
        return bad(error, d->id, "not the name of a rollup document of this cluster");
    if (!(d->cluster = strdup(cluster)))
        return sa_error_nomem(error);
    d->kind = k.kind;
    d->day = k.day;
    d->part = k.part;
    d->nf = sa_rollup_nf(k.kind);
    /* the widths read: this version's; 0.4's started lists (SA_RR_NF_05); 0.5.0's records (no hosts) */
    if ((ids || m || rows) &&
        (!enc_ok || !has_nf || (rows ? nf != SA_RR_NF_05 : nf != (int64_t)d->nf && nf != SA_RR_NF_05))) {
        /* an older version's (the first run of this version rebuilds them all): nothing of it is read */
        d->foreign = true;
        return true;
    }
    /* the tables first (records and rows index them as stored) */
    if ((kt && !read_keys(d, kt, ktlen, error)) ||
        (stt && !read_strs(d, stt, stlen, &d->states, &d->nstates, &d->statecap, "the states table is cut", error)) ||
        (ht && !read_strs(d, ht, htlen, &d->hosts, &d->nhosts, &d->hostcap, "the hosts table is cut", error)) ||
        (rows && !read_rows(d, rows, rlen, error)))
        return false;
    d->has_members = ids && m;
    return (!ids && !m) || read_members(d, (size_t)nf, ids, idlen, m, mlen, error);
}

/* ---- versions -------------------------------------------------------------------------------- */

const char *sa_rollup_id_of(const bson_t *b)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, b, "_id") && BSON_ITER_HOLDS_UTF8(&it) ? bson_iter_utf8(&it, NULL) : NULL;
}

int64_t sa_rollup_seq_of(const bson_t *b)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, b, SA_ROLLUP_SEQ) && BSON_ITER_HOLDS_NUMBER(&it) ? bson_iter_as_int64(&it) : 0;
}

/* True when b says it is no document ({absent: true}). */
static bool says_absent(const bson_t *b)
{
    bson_iter_t it;
    return bson_iter_init_find(&it, b, "absent") && BSON_ITER_HOLDS_BOOL(&it) && bson_iter_bool(&it);
}

sa_rollup_ver_t sa_rollup_version(const bson_t *b, int64_t seq, bson_t *prev)
{
    bson_iter_t it;
    const uint8_t *data;
    uint32_t len;

    if (sa_rollup_seq_of(b) <= seq)
        return says_absent(b) ? SA_ROLLUP_VER_ABSENT : SA_ROLLUP_VER_THIS;
    if (!bson_iter_init_find(&it, b, SA_ROLLUP_PREV) || !BSON_ITER_HOLDS_DOCUMENT(&it))
        return SA_ROLLUP_VER_NEWER;
    bson_iter_document(&it, &len, &data);
    if (!bson_init_static(prev, data, len) || sa_rollup_seq_of(prev) > seq)
        return SA_ROLLUP_VER_NEWER;
    return says_absent(prev) ? SA_ROLLUP_VER_ABSENT : SA_ROLLUP_VER_PREV;
}

bool sa_rollup_versioned(const bson_t *content, int64_t seq, const bson_t *stored, bson_t *out, sa_error_t *error)
{
    bson_iter_t it;
    bson_t prev;

    bson_copy_to_excluding_noinit(content, out, SA_ROLLUP_SEQ, SA_ROLLUP_PREV, NULL);
    BSON_APPEND_INT64(out, SA_ROLLUP_SEQ, seq);
    BSON_APPEND_DOCUMENT_BEGIN(out, SA_ROLLUP_PREV, &prev);
    if (!stored || says_absent(stored)) {
        BSON_APPEND_INT64(&prev, SA_ROLLUP_SEQ, stored ? sa_rollup_seq_of(stored) : 0);
        BSON_APPEND_BOOL(&prev, "absent", true);
    } else if (bson_iter_init(&it, stored)) {
        bool has_seq = false;
        while (bson_iter_next(&it)) {
            const char *k = bson_iter_key(&it);
            if (strcmp(k, SA_ROLLUP_PREV) == 0)
                continue;
            has_seq = has_seq || strcmp(k, SA_ROLLUP_SEQ) == 0;
            if (!bson_append_iter(&prev, k, -1, &it))
                return sa_error_nomem(error);
        }
        if (!has_seq)
            BSON_APPEND_INT64(&prev, SA_ROLLUP_SEQ, 0);
    }
    return bson_append_document_end(out, &prev) || sa_error_nomem(error);
}

bool sa_rollup_unversioned(const bson_t *stored, bson_t *out, bool *absent, sa_error_t *error)
{
    bson_iter_t it, p;
    bson_t prev;
    const uint8_t *data;
    uint32_t len;
    int64_t v = 0;

    *absent = true;
    if (bson_iter_init_find(&it, stored, "_v") && BSON_ITER_HOLDS_NUMBER(&it))
        v = bson_iter_as_int64(&it);
    if (!bson_iter_init_find(&it, stored, SA_ROLLUP_PREV) || !BSON_ITER_HOLDS_DOCUMENT(&it))
        return true; /* nothing to go back to: gone */
    bson_iter_document(&it, &len, &data);
    if (!bson_init_static(&prev, data, len) || says_absent(&prev) || !bson_iter_init(&p, &prev))
        return true;
    *absent = false;
    while (bson_iter_next(&p)) {
        if (strcmp(bson_iter_key(&p), "_v") != 0 && !bson_append_iter(out, bson_iter_key(&p), -1, &p))
            return sa_error_nomem(error);
    }
    BSON_APPEND_INT64(out, "_v", v + 1);
    return true;
}

/* ---- the commit document --------------------------------------------------------------------- */

void sa_rollup_commit_init(sa_rollup_commit_t *c)
{
    memset(c, 0, sizeof *c);
    c->as_of = SA_UNSET;
    sa_strv_init(&c->intent_ids);
}

void sa_rollup_commit_clear(sa_rollup_commit_t *c)
{
    free(c->intent_host);
    free(c->intent_proc);
    sa_strv_clear(&c->intent_ids);
    sa_rollup_commit_init(c);
}

bool sa_rollup_commit_read(sa_rollup_commit_t *c, const bson_t *b, sa_error_t *error)
{
    bson_iter_t it, in, ids;
    sa_rollup_commit_clear(c);
    if (!b || !bson_iter_init(&it, b))
        return true;
    while (bson_iter_next(&it)) {
        const char *k = bson_iter_key(&it);
        if (strcmp(k, "_v") == 0 && BSON_ITER_HOLDS_NUMBER(&it))
            c->v = bson_iter_as_int64(&it);
        else if (strcmp(k, "seq") == 0 && BSON_ITER_HOLDS_NUMBER(&it))
            c->seq = bson_iter_as_int64(&it);
        else if (strcmp(k, "as_of") == 0 && BSON_ITER_HOLDS_DATE_TIME(&it))
            c->as_of = bson_iter_date_time(&it) / 1000;
        else if (strcmp(k, "parts") == 0 && BSON_ITER_HOLDS_BOOL(&it))
            c->parts = bson_iter_bool(&it);
        else if (strcmp(k, "intent") == 0 && BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &in)) {
            while (bson_iter_next(&in)) {
                const char *ik = bson_iter_key(&in);
                if (strcmp(ik, "seq") == 0 && BSON_ITER_HOLDS_NUMBER(&in))
                    c->intent_seq = bson_iter_as_int64(&in);
                else if (strcmp(ik, "host") == 0 && BSON_ITER_HOLDS_UTF8(&in)) {
                    if (!(c->intent_host = strdup(bson_iter_utf8(&in, NULL))))
                        return sa_error_nomem(error);
                } else if (strcmp(ik, "proc") == 0 && BSON_ITER_HOLDS_UTF8(&in)) {
                    free(c->intent_proc);
                    if (!(c->intent_proc = strdup(bson_iter_utf8(&in, NULL))))
                        return sa_error_nomem(error);
                } else if (strcmp(ik, "pid") == 0 && BSON_ITER_HOLDS_NUMBER(&in))
                    c->intent_pid = bson_iter_as_int64(&in);
                else if (strcmp(ik, "at") == 0 && BSON_ITER_HOLDS_DATE_TIME(&in))
                    c->intent_at = bson_iter_date_time(&in) / 1000;
                else if (strcmp(ik, "ids") == 0 && BSON_ITER_HOLDS_ARRAY(&in) && bson_iter_recurse(&in, &ids)) {
                    while (bson_iter_next(&ids)) {
                        if (BSON_ITER_HOLDS_UTF8(&ids) && !sa_strv_push(&c->intent_ids, bson_iter_utf8(&ids, NULL)))
                            return sa_error_nomem(error);
                    }
                }
            }
        }
    }
    return true;
}

bool sa_rollup_commit_bson(const sa_rollup_commit_t *c, const char *cluster, bson_t *out, sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(cluster, SA_ROLLUP_K_COMMIT, 0, 0);
    char *id = sa_rollup_key_id(&k);
    bson_t in, ids;

    if (!id)
        return sa_error_nomem(error);
    BSON_APPEND_UTF8(out, "_id", id);
    free(id);
    BSON_APPEND_INT64(out, "_v", c->v + 1);
    BSON_APPEND_INT64(out, "seq", c->seq);
    if (c->as_of != SA_UNSET)
        BSON_APPEND_DATE_TIME(out, "as_of", c->as_of * 1000);
    if (c->parts)
        BSON_APPEND_BOOL(out, "parts", true);
    if (c->intent_seq) {
        BSON_APPEND_DOCUMENT_BEGIN(out, "intent", &in);
        BSON_APPEND_INT64(&in, "seq", c->intent_seq);
        BSON_APPEND_UTF8(&in, "host", c->intent_host ? c->intent_host : "");
        BSON_APPEND_INT64(&in, "pid", c->intent_pid);
        if (c->intent_proc && c->intent_proc[0])
            BSON_APPEND_UTF8(&in, "proc", c->intent_proc);
        BSON_APPEND_DATE_TIME(&in, "at", c->intent_at * 1000);
        BSON_APPEND_ARRAY_BEGIN(&in, "ids", &ids);
        for (size_t i = 0; i < c->intent_ids.n; i++) {
            char ib[16];
            const char *ik;
            bson_uint32_to_string((uint32_t)i, &ik, ib, sizeof ib);
            BSON_APPEND_UTF8(&ids, ik, c->intent_ids.v[i]);
        }
        bson_append_array_end(&in, &ids);
        bson_append_document_end(out, &in);
    }
    return true;
}

/* ---- a month's parts index ------------------------------------------------------------------- */

#define PARTS_BYTES (SA_ROLLUP_PARTS_KINDS * 31 * 8)

void sa_rollup_parts_read(sa_rollup_parts_t *p, const bson_t *b)
{
    bson_iter_t it;
    bson_subtype_t st;
    const uint8_t *data;
    uint32_t len;

    memset(p, 0, sizeof *p);
    if (!b || !bson_iter_init_find(&it, b, "masks") || !BSON_ITER_HOLDS_BINARY(&it))
        return;
    bson_iter_binary(&it, &st, &len, &data);
    if (len != PARTS_BYTES)
        return;
    for (int k = 0; k < SA_ROLLUP_PARTS_KINDS; k++) {
        for (int d = 0; d < 31; d++) {
            uint64_t m = 0;
            for (int i = 7; i >= 0; i--)
                m = m << 8 | data[(k * 31 + d) * 8 + i]; /* little-endian */
            p->mask[k][d] = m;
        }
    }
}

bool sa_rollup_parts_bson(const sa_rollup_parts_t *p, const char *cluster, int64_t month, int64_t v, bson_t *out,
                          sa_error_t *error)
{
    sa_rollup_key_t k = sa_rollup_key(cluster, SA_ROLLUP_K_PARTS, month, 0);
    char *id = sa_rollup_key_id(&k);
    uint8_t data[PARTS_BYTES];

    if (!id)
        return sa_error_nomem(error);
    for (int kind = 0; kind < SA_ROLLUP_PARTS_KINDS; kind++) {
        for (int d = 0; d < 31; d++) {
            for (int i = 0; i < 8; i++)
                data[(kind * 31 + d) * 8 + i] = (uint8_t)(p->mask[kind][d] >> (8 * i));
        }
    }
    BSON_APPEND_UTF8(out, "_id", id);
    BSON_APPEND_INT64(out, "_v", v);
    BSON_APPEND_UTF8(out, "cluster", cluster);
    BSON_APPEND_UTF8(out, "kind", "parts");
    BSON_APPEND_UTF8(out, "month", id + strlen(cluster) + strlen(":parts:"));
    bson_append_binary(out, "masks", -1, BSON_SUBTYPE_BINARY, data, PARTS_BYTES);
    free(id);
    return true;
}
