/*
 * test_merge_table.c - the merge's table test: runs tests/merge.test (format at the top
 * of that file), in the manner of jq's tests/jq.test. No server: each case's records are
 * parsed by the real parsers and merged with sa_jobdoc_merge.
 *
 * For every case:
 * - the records merged in the file's order give a document that matches "expect" (and
 *   the documents displaced by id reuse match "superseded", in order);
 * - merging any record again changes nothing (idempotent);
 * - EVERY permutation of the records gives the same document, but for the members
 *   PERMUTATION_FREE lists (unless the case says "# order-dependent: why"); the first
 *   permutation that differs is reported with the members that differ.
 *
 *   test_merge_table [FILE]     (default: tests/merge.test of the source tree)
 */
#define _GNU_SOURCE /* asprintf */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bson/bson.h>

#include "sa_bson.h"
#include "sa_jobdoc.h"
#include "sa_time.h"

#define DEFAULT_FILE SA_SOURCE_DIR "/tests/merge.test"
#define MAX_RECS 8 /* 8! = 40,320 permutations */
#define CLUSTER "t"

/*
 * Members that may differ between permutations by design (merge.test says why):
 * seen.last moves with every write; _merge, runs[]._key and the exit codes' _key are the
 * rank of whichever of two equal observations came first (a steady poll does not move them, so that it
 * writes nothing); the volatile members (sa_jobdoc_volatile_extra, expected_start,
 * expected_end) are refreshed only with another change.
 */
static const char *const PERMUTATION_FREE[] = {"seen.last",      "_merge",       "runs[]._key", "exit._key",
                                               "derived_exit._key", "expected_start", "expected_end", NULL};

typedef struct {
    int64_t at;
    int line;
    char *text;        /* the record as written (sacct: with its step lines) */
    char *header;      /* sacct: the header in force */
    bool squeue;
    tu_parsed_t parsed; /* exactly one job */
} rec_t;

typedef struct {
    char *name;
    int line;
    char *order_dependent; /* why, or NULL */
    char *header;          /* the sacct header in force */
    rec_t recs[MAX_RECS];
    size_t nrecs;
    json_t *expect;
    json_t *superseded; /* array */
} case_t;

static const char *file_path;
static int failures;

/* Reports a failure of a case (the test goes on with the next case). */
static void case_fail(const case_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void case_fail(const case_t *c, const char *fmt, ...)
{
    va_list ap;
    printf("FAIL %s:%d: case \"%s\": ", file_path, c->line, c->name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    failures++;
}

/* ---- reading merge.test ------------------------------------------------------------------------ */

/* Replaces an ISO-8601 string member by its epoch seconds; false after printing why. */
static bool iso_member(json_t *obj, const char *key, json_t *v, int line)
{
    int64_t t;
    if (!json_is_string(v))
        return true;
    if (!sa_time_parse_iso(json_string_value(v), &t)) {
        printf("%s:%d: %s: not a time: %s\n", file_path, line, key, json_string_value(v));
        return false;
    }
    json_object_set_new(obj, key, json_integer(t));
    return true;
}

/*
 * In a job object, a time may be written "YYYY-MM-DDTHH:MM:SSZ": members named *_time
 * (squeue) and the members of "time" (sacct JSON) become epoch seconds.
 */
static bool record_times(json_t *obj, int line)
{
    const char *k;
    json_t *v, *t = json_object_get(obj, "time");
    json_object_foreach(obj, k, v) {
        size_t n = strlen(k);
        if (n >= 5 && strcmp(k + n - 5, "_time") == 0 && !iso_member(obj, k, v, line))
            return false;
    }
    json_object_foreach(t, k, v) {
        if (!iso_member(t, k, v, line))
            return false;
    }
    return true;
}

/* Parses a record's text into rec->parsed (one job); false after printing why. */
static bool parse_record(rec_t *rec)
{
    const char *header = rec->header;
    sa_error_t err;
    char *text = NULL;
    bool ok;

    if (rec->squeue) {
        json_error_t jerr;
        json_t *obj = json_loads(rec->text, 0, &jerr), *wrap;
        if (!obj || !json_is_object(obj)) {
            printf("%s:%d: JSON record: %s\n", file_path, rec->line, obj ? "not an object" : jerr.text);
            json_decref(obj);
            return false;
        }
        if (!record_times(obj, rec->line)) {
            json_decref(obj);
            return false;
        }
        wrap = json_pack("{s:[o]}", "jobs", obj);
        text = json_dumps(wrap, JSON_COMPACT);
        json_decref(wrap);
    } else {
        if (!header) {
            printf("%s:%d: an sacct record without a header (\"sacct FIELD|FIELD...\" first)\n", file_path,
                   rec->line);
            return false;
        }
        if (asprintf(&text, "%s\n%s\n", header, rec->text) < 0)
            text = NULL;
    }
    ok = text && tu_parse_mem(text, strlen(text), NULL, &rec->parsed, &err);
    if (!ok)
        printf("%s:%d: record: %s\n", file_path, rec->line, text ? err.message : "out of memory");
    else if (rec->parsed.njobs != 1) {
        printf("%s:%d: the record gives %zu jobs, not one\n", file_path, rec->line, rec->parsed.njobs);
        tu_parsed_clear(&rec->parsed);
        ok = false;
    }
    free(text);
    return ok;
}

static void case_clear(case_t *c)
{
    free(c->name);
    free(c->order_dependent);
    free(c->header);
    for (size_t i = 0; i < c->nrecs; i++) {
        free(c->recs[i].text);
        free(c->recs[i].header);
        tu_parsed_clear(&c->recs[i].parsed);
    }
    json_decref(c->expect);
    json_decref(c->superseded);
    memset(c, 0, sizeof *c);
}

/* Appends to a growable string (the text of a record or of a JSON block). */
static void append(char **s, const char *more, const char *sep)
{
    char *n = NULL;
    if (asprintf(&n, "%s%s%s", *s ? *s : "", *s ? sep : "", more) < 0)
        abort();
    free(*s);
    *s = n;
}

/* ---- the document as stored: times as ISO-8601 ------------------------------------------------- */

static json_t *bson_display(bson_iter_t *it, bool is_array)
{
    json_t *out = is_array ? json_array() : json_object();
    while (bson_iter_next(it)) {
        json_t *v;
        bson_iter_t child;
        char buf[32];
        switch (bson_iter_type(it)) {
        case BSON_TYPE_DOCUMENT:
        case BSON_TYPE_ARRAY:
            bson_iter_recurse(it, &child);
            v = bson_display(&child, BSON_ITER_HOLDS_ARRAY(it));
            break;
        case BSON_TYPE_UTF8:
            v = json_string(bson_iter_utf8(it, NULL));
            break;
        case BSON_TYPE_INT64:
        case BSON_TYPE_INT32:
            v = json_integer(bson_iter_as_int64(it));
            break;
        case BSON_TYPE_DOUBLE:
            v = json_real(bson_iter_double(it));
            break;
        case BSON_TYPE_BOOL:
            v = json_boolean(bson_iter_bool(it));
            break;
        case BSON_TYPE_DATE_TIME:
            v = json_string(sa_time_format(bson_iter_date_time(it) / 1000, buf, sizeof buf));
            break;
        default:
            v = json_null();
        }
        if (is_array)
            json_array_append_new(out, v);
        else
            json_object_set_new(out, bson_iter_key(it), v);
    }
    return out;
}

/* The document as MongoDB would hold it, as JSON with dates as ISO-8601 strings (new reference). */
static json_t *display(const json_t *doc)
{
    bson_t b = BSON_INITIALIZER;
    bson_iter_t it;
    sa_error_t err;
    json_t *out;
    if (!sa_bson_from_json(doc, &b, &err))
        fail_msg("to BSON: %s", err.message);
    bson_iter_init(&it, &b);
    out = bson_display(&it, false);
    bson_destroy(&b);
    return out;
}

static char *dump(const json_t *v)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("(absent)");
}

/*
 * True if actual matches expected: every member of an expected object matches (null:
 * must be absent), arrays element by element with the same length, scalars equal. On a
 * mismatch, path names where (a buffer of 512).
 */
static bool match(const json_t *want, const json_t *got, char *path)
{
    size_t len = strlen(path);
    if (json_is_object(want) && json_is_object(got)) {
        const char *k;
        json_t *w;
        json_object_foreach((json_t *)want, k, w) {
            const json_t *g = json_object_get(got, k);
            snprintf(path + len, 512 - len, "%s%s", len ? "." : "", k);
            if (json_is_null(w) ? g != NULL : !g || !match(w, g, path))
                return false;
            path[len] = '\0';
        }
        return true;
    }
    if (json_is_array(want) && json_is_array(got)) {
        if (json_array_size(want) != json_array_size(got))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++) {
            snprintf(path + len, 512 - len, "[%zu]", i);
            if (!match(json_array_get(want, i), json_array_get(got, i), path))
                return false;
            path[len] = '\0';
        }
        return true;
    }
    return json_equal((json_t *)want, (json_t *)got);
}

/* The value at a path of match() ("runs[1].start"), borrowed, or NULL. */
static const json_t *at_path(const json_t *v, const char *path)
{
    char key[128];
    while (v && *path) {
        size_t n = strcspn(path, ".[");
        if (n) {
            snprintf(key, sizeof key, "%.*s", (int)n, path);
            v = json_object_get(v, key);
            path += n;
        } else if (*path == '[') {
            v = json_array_get(v, strtoul(path + 1, NULL, 10));
            path = strchr(path, ']') + 1;
        } else {
            path++;
        }
    }
    return v;
}

/* ---- merging ------------------------------------------------------------------------------------- */

/*
 * Merges the records of c in the given order into a new document (new reference; NULL
 * with *why set on a merge error). Displaced documents are appended to superseded (may be
 * NULL).
 */
static json_t *merge_order(const case_t *c, const size_t *order, json_t *superseded, sa_error_t *why)
{
    json_t *doc = NULL;
    for (size_t i = 0; i < c->nrecs; i++) {
        const rec_t *r = &c->recs[order[i]];
        sa_obs_ctx_t ctx = {CLUSTER, r->at, NULL, NULL};
        sa_merge_kind_t kind;
        json_t *sup = NULL;
        if (!sa_jobdoc_merge(&doc, r->parsed.jobs[0], &ctx, &kind, &sup, why)) {
            json_decref(doc);
            return NULL;
        }
        if (sup && superseded)
            json_array_append(superseded, sup);
        json_decref(sup);
    }
    return doc;
}

/* Removes a PERMUTATION_FREE path ("runs[]._key") from v. */
static void strip_path(json_t *v, const char *path)
{
    size_t n = strcspn(path, ".[");
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)n, path);
    if (!path[n]) {
        json_object_del(v, key);
    } else if (path[n] == '.') {
        strip_path(json_object_get(v, key), path + n + 1);
    } else { /* "[]." */
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(v, key), i, e) {
            strip_path(e, path + n + 3);
        }
    }
}

/* A deep copy of doc without the members that may depend on the order (new reference). */
static json_t *comparable(const json_t *doc)
{
    json_t *c = json_deep_copy(doc), *extra;
    for (const char *const *p = PERMUTATION_FREE; *p; p++)
        strip_path(c, *p);
    if ((extra = json_object_get(c, "extra"))) {
        for (const char *const *v = sa_jobdoc_volatile_extra; *v; v++)
            json_object_del(extra, *v);
    }
    return c;
}

/* Prints the top-level members in which a and b differ. */
static void print_diff(const json_t *a, const json_t *b, const char *a_name, const char *b_name)
{
    json_t *keys = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) {
        json_object_set_new(keys, k, json_true());
    }
    json_object_foreach((json_t *)b, k, v) {
        json_object_set_new(keys, k, json_true());
    }
    json_object_foreach(keys, k, v) {
        json_t *x = json_object_get(a, k), *y = json_object_get(b, k);
        if (x && y && json_equal(x, y))
            continue;
        json_t *px = json_pack("{s:O*}", k, x), *py = json_pack("{s:O*}", k, y);
        json_t *dx = display(px), *dy = display(py);
        char *sx = dump(json_object_get(dx, k)), *sy = dump(json_object_get(dy, k));
        printf("    %s:\n      %-12s %s\n      %-12s %s\n", k, a_name, sx, b_name, sy);
        free(sx);
        free(sy);
        json_decref(px);
        json_decref(py);
        json_decref(dx);
        json_decref(dy);
    }
    json_decref(keys);
}

/* Advances order to the next permutation in lexicographic order; false after the last. */
static bool next_permutation(size_t *order, size_t n)
{
    size_t i = n - 1, j = n - 1;
    if (n < 2)
        return false;
    while (i > 0 && order[i - 1] >= order[i])
        i--;
    if (i == 0)
        return false;
    while (order[j] <= order[i - 1])
        j--;
    size_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
    for (size_t a = i, b = n - 1; a < b; a++, b--) {
        t = order[a];
        order[a] = order[b];
        order[b] = t;
    }
    return true;
}

/* "lines 12, 10, 11": the records of an order by their line in the file (static buffer). */
static const char *order_str(const case_t *c, const size_t *order)
{
    static char buf[256];
    size_t len = (size_t)snprintf(buf, sizeof buf, "records of lines");
    for (size_t i = 0; i < c->nrecs; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %d", i ? "," : "", c->recs[order[i]].line);
    return buf;
}

/* The file's order: the expected document and displaced documents; merging again changes nothing. */
static json_t *check_file_order(case_t *c)
{
    size_t order[MAX_RECS];
    json_t *sup = json_array(), *doc, *shown;
    sa_error_t why;
    char path[512] = "";

    for (size_t i = 0; i < c->nrecs; i++)
        order[i] = i;
    if (!(doc = merge_order(c, order, sup, &why))) {
        case_fail(c, "merge: %s", why.message);
        json_decref(sup);
        return NULL;
    }
    shown = display(doc);
    if (!match(c->expect, shown, path)) {
        char *w = dump(at_path(c->expect, path)), *g = dump(at_path(shown, path)), *all = dump(shown);
        case_fail(c, "%s is\n    %s\n  expected\n    %s\n  the document:\n    %s", path, g, w, all);
        free(w);
        free(g);
        free(all);
    }
    if (json_array_size(sup) != json_array_size(c->superseded)) {
        case_fail(c, "%zu document(s) displaced by id reuse, expected %zu", json_array_size(sup),
                  json_array_size(c->superseded));
    } else {
        for (size_t i = 0; i < json_array_size(sup); i++) {
            json_t *s = display(json_array_get(sup, i));
            path[0] = '\0';
            if (!match(json_array_get(c->superseded, i), s, path)) {
                char *all = dump(s);
                case_fail(c, "superseded document %zu: %s differs; it is\n    %s", i + 1, path, all);
                free(all);
            }
            json_decref(s);
        }
    }
    /* idempotent: every record again changes nothing */
    for (size_t i = 0; i < c->nrecs; i++) {
        json_t *again = json_deep_copy(doc), *s = NULL;
        sa_obs_ctx_t ctx = {CLUSTER, c->recs[i].at, NULL, NULL};
        sa_merge_kind_t kind;
        if (!sa_jobdoc_merge(&again, c->recs[i].parsed.jobs[0], &ctx, &kind, &s, &why))
            case_fail(c, "merging line %d again: %s", c->recs[i].line, why.message);
        else if (kind != SA_MERGE_UNCHANGED && kind != SA_MERGE_STALE) {
            case_fail(c, "merging the record of line %d again changes the document (not idempotent):",
                      c->recs[i].line);
            print_diff(doc, again, "before", "after");
        }
        json_decref(again);
        json_decref(s);
    }
    json_decref(shown);
    json_decref(sup);
    return doc;
}

/*
 * A record seen again a second later, unchanged, changes nothing (but for
 * PERMUTATION_FREE): the job cache skips such a record, and a run whose cache was reset
 * (another host wrote) merges it, so both must give the same document. Each record is
 * repeated once, one second after its own time (unless another record falls in that
 * second: then the job may have moved on).
 */
static void check_seen_again(case_t *c, const json_t *reference)
{
    json_t *ref = comparable(reference);

    for (size_t i = 0; i < c->nrecs; i++) {
        int64_t again = c->recs[i].at + 1;
        json_t *doc = NULL, *cmp;
        sa_error_t why;
        bool ok = true;

        for (size_t k = 0; k < c->nrecs; k++) {
            if (c->recs[k].at == again)
                again = c->recs[i].at;
        }
        if (again <= c->recs[i].at)
            continue;
        for (size_t k = 0; k <= c->nrecs && ok; k++) {
            const rec_t *r = &c->recs[k == c->nrecs ? i : k];
            sa_obs_ctx_t ctx = {CLUSTER, k == c->nrecs ? again : r->at, NULL, NULL};
            sa_merge_kind_t kind;
            json_t *sup = NULL;
            ok = sa_jobdoc_merge(&doc, r->parsed.jobs[0], &ctx, &kind, &sup, &why);
            json_decref(sup);
        }
        if (!ok) {
            case_fail(c, "the record of line %d again at %lld: merge: %s", c->recs[i].line, (long long)again,
                      why.message);
            json_decref(doc);
            break;
        }
        cmp = comparable(doc);
        json_decref(doc);
        if (!json_equal(cmp, ref)) {
            case_fail(c, "the record of line %d seen again unchanged at %lld changes the document:", c->recs[i].line,
                      (long long)again);
            print_diff(ref, cmp, "once:", "again:");
            json_decref(cmp);
            break;
        }
        json_decref(cmp);
    }
    json_decref(ref);
}

/* Every permutation gives the document of the file's order (but for PERMUTATION_FREE). */
static void check_permutations(case_t *c, const json_t *reference, size_t *count)
{
    size_t order[MAX_RECS];
    json_t *ref = comparable(reference);

    for (size_t i = 0; i < c->nrecs; i++)
        order[i] = i;
    *count = 0;
    do {
        sa_error_t why;
        json_t *doc = merge_order(c, order, NULL, &why), *cmp;
        (*count)++;
        if (!doc) {
            case_fail(c, "%s: merge: %s", order_str(c, order), why.message);
            break;
        }
        cmp = comparable(doc);
        json_decref(doc);
        if (!json_equal(cmp, ref)) {
            case_fail(c, "the order %s gives another document than the file's order (permutation %zu):",
                      order_str(c, order), *count);
            print_diff(ref, cmp, "file order:", "this order:");
            json_decref(cmp);
            break;
        }
        json_decref(cmp);
    } while (next_permutation(order, c->nrecs));
    json_decref(ref);
}

static size_t ncases, npermutations;

static void run_case(case_t *c)
{
    json_t *doc;
    size_t n = 0;

    if (!c->expect) {
        case_fail(c, "no \"expect\"");
        return;
    }
    for (size_t i = 0; i < c->nrecs; i++) {
        if (!parse_record(&c->recs[i])) {
            case_fail(c, "a record does not parse (see above)");
            return;
        }
    }
    ncases++;
    if (!(doc = check_file_order(c)))
        return;
    if (c->order_dependent)
        printf("  %-60s %zu records; order-dependent: %s\n", c->name, c->nrecs, c->order_dependent);
    else {
        check_seen_again(c, doc);
        check_permutations(c, doc, &n);
        npermutations += n;
        printf("  %-60s %zu records, %zu permutations\n", c->name, c->nrecs, n);
    }
    json_decref(doc);
}

/* ---- the file ------------------------------------------------------------------------------------ */

typedef enum { BLOCK_NONE, BLOCK_EXPECT, BLOCK_SUPERSEDED } block_t;

typedef struct {
    case_t c;
    bool in_case;
    block_t block;
    char *json;    /* the text of the open block */
    int json_line; /* where it started */
} reader_t;

/* Closes the open JSON block into the case; false (after printing why) when it is not JSON. */
static bool close_block(reader_t *r)
{
    json_error_t jerr;
    json_t *v;
    if (r->block == BLOCK_NONE)
        return true;
    v = json_loads(r->json ? r->json : "", 0, &jerr);
    free(r->json);
    r->json = NULL;
    if (!v || !json_is_object(v)) {
        printf("%s:%d: %s: %s\n", file_path, r->json_line + (v ? 0 : jerr.line - 1),
               r->block == BLOCK_EXPECT ? "expect" : "superseded", v ? "not an object" : jerr.text);
        json_decref(v);
        r->block = BLOCK_NONE;
        return false;
    }
    if (r->block == BLOCK_EXPECT) {
        json_decref(r->c.expect);
        r->c.expect = v;
    } else {
        if (!r->c.superseded)
            r->c.superseded = json_array();
        json_array_append_new(r->c.superseded, v);
    }
    r->block = BLOCK_NONE;
    return true;
}

/* Runs and clears the case read so far. */
static void finish_case(reader_t *r)
{
    if (r->in_case)
        run_case(&r->c);
    case_clear(&r->c);
    r->in_case = false;
}

/* A record line "@TIME TEXT"; false after printing why. */
static bool add_record(reader_t *r, const char *line, int lineno)
{
    char when[32];
    size_t n = strcspn(line + 1, " \t");
    rec_t *rec;
    const char *text = line + 1 + n;

    if (r->c.nrecs == MAX_RECS) {
        printf("%s:%d: more than %d records in a case\n", file_path, lineno, MAX_RECS);
        return false;
    }
    rec = &r->c.recs[r->c.nrecs];
    snprintf(when, sizeof when, "%.*s", (int)n, line + 1);
    if (!sa_time_parse_iso(when, &rec->at)) {
        printf("%s:%d: \"%s\" is not a time YYYY-MM-DDTHH:MM:SSZ\n", file_path, lineno, when);
        return false;
    }
    text += strspn(text, " \t");
    rec->line = lineno;
    rec->squeue = text[0] == '{';
    rec->text = strdup(text);
    rec->header = r->c.header ? strdup(r->c.header) : NULL;
    r->c.nrecs++;
    return true;
}

/* Takes one line of the file (without its newline); false after printing why. */
static bool read_line(reader_t *r, const char *line, int lineno)
{
    if (r->block != BLOCK_NONE) {
        bool keyword = strncmp(line, "expect", 6) == 0 || strncmp(line, "superseded", 10) == 0 ||
                       strncmp(line, "case ", 5) == 0 || strncmp(line, "sacct ", 6) == 0 || line[0] == '@';
        if (line[strspn(line, " \t")] == '\0')
            return close_block(r);
        if (!keyword) {
            append(&r->json, line, "\n");
            return true;
        }
        if (!close_block(r))
            return false;
    }
    if (line[strspn(line, " \t")] == '\0')
        return true;
    if (strncmp(line, "# order-dependent:", 18) == 0 && r->in_case) {
        r->c.order_dependent = strdup(line + 18 + strspn(line + 18, " "));
        return true;
    }
    if (line[0] == '#')
        return true;
    if (strncmp(line, "case ", 5) == 0) {
        finish_case(r);
        r->in_case = true;
        r->c.name = strdup(line + 5);
        r->c.line = lineno;
        return true;
    }
    if (!r->in_case) {
        printf("%s:%d: \"case NAME\" first\n", file_path, lineno);
        return false;
    }
    if (strncmp(line, "sacct ", 6) == 0) {
        free(r->c.header);
        r->c.header = strdup(line + 6);
        return true;
    }
    if (line[0] == '@')
        return add_record(r, line, lineno);
    if ((line[0] == ' ' || line[0] == '\t') && r->c.nrecs && !r->c.recs[r->c.nrecs - 1].squeue) {
        append(&r->c.recs[r->c.nrecs - 1].text, line + strspn(line, " \t"), "\n");
        return true;
    }
    if (strncmp(line, "expect", 6) == 0 || strncmp(line, "superseded", 10) == 0) {
        bool expect = line[0] == 'e';
        r->block = expect ? BLOCK_EXPECT : BLOCK_SUPERSEDED;
        r->json_line = lineno;
        append(&r->json, line + (expect ? 6 : 10), "\n");
        return true;
    }
    printf("%s:%d: what is this line? %s\n", file_path, lineno, line);
    return false;
}

static void test_merge_table(void **state)
{
    FILE *f = fopen(file_path, "r");
    reader_t r;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    (void)state;

    if (!f)
        fail_msg("cannot open %s", file_path);
    memset(&r, 0, sizeof r);
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (!read_line(&r, line, lineno))
            failures++;
    }
    if (!close_block(&r))
        failures++;
    finish_case(&r);
    free(line);
    fclose(f);
    printf("  %zu cases, %zu permutations merged\n", ncases, npermutations);
    if (failures)
        fail_msg("%d failure(s) in %s (see above)", failures, file_path);
    assert_true(ncases >= 25);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_table),
    };
    file_path = argc > 1 ? argv[1] : DEFAULT_FILE;
    return tu_run_group_tests("merge_table", tests, NULL, NULL);
}
