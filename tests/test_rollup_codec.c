/*
 * test_rollup_codec.c - schema/rollup/sa_rollup_codec.c: rollup documents to BSON and back
 * (every parted kind, a day's rows, unknown times, tombstones), what is read as another
 * version's (foreign) or refused, the two versions a stored document keeps for readers
 * (sa_rollup_version, sa_rollup_versioned, sa_rollup_unversioned) and the commit document.
 */
#include "tu_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D4 TU_D4
#define H TU_H

/* d to BSON (version v) and read back into back (initialised here); back equals d. */
static void round_trip(const sa_rollup_doc_t *d, int64_t v, sa_rollup_doc_t *back)
{
    bson_t out = BSON_INITIALIZER;
    sa_error_t err;

    assert_true(sa_rollup_doc_to_bson(d, v, &out, &err));
    sa_rollup_doc_init(back);
    if (!sa_rollup_doc_read(back, "c", &out, &err))
        fail_msg("%s read back: %s", d->id, err.message);
    assert_string_equal(back->id, d->id);
    assert_int_equal(back->kind, d->kind);
    assert_int_equal(back->day, d->day);
    assert_int_equal(back->part, d->part);
    assert_int_equal(back->nf, d->nf);
    assert_int_equal(back->v, v);
    assert_false(back->foreign);
    assert_true(sa_rollup_doc_equal(d, back));
    bson_destroy(&out);
}

/* Every kind of document comes back whole: members, open runs, the live, ended and started lists. */
static void test_kinds_round_trip(void **state)
{
    char run[1024], pending[1024], open[1024];
    static const struct {
        sa_rollup_kind_t kind;
        int64_t day;
        int part;
        int job; /* 0: the finished run, 1: the pending job, 2: the open run */
    } docs[] = {
        {SA_ROLLUP_K_MEMBERS, D4, 0, 0}, {SA_ROLLUP_K_ENDED, D4, 0, 0}, {SA_ROLLUP_K_STARTED, D4, 0, 0},
        {SA_ROLLUP_K_LIVE, 0, 5, 1},     {SA_ROLLUP_K_OPEN, 0, 0, 2},
    };
    (void)state;

    snprintf(run, sizeof run,
             "{\"_id\": \"c:7\", \"job_id\": 7, \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", "
             "\"state\": \"CANCELLED\", \"gpus\": 1, \"end\": {\"$date\": %lld}, \"runs\": [{\"start\": {\"$date\": "
             "%lld}, \"end\": {\"$date\": %lld}, \"state\": \"CANCELLED\", \"gpus\": 1, \"gpus_by_type\": "
             "[{\"type\": \"a100\", \"count\": 1}]}]}",
             (D4 + 5 * H) * 1000, (D4 + 2 * H) * 1000, (D4 + 5 * H) * 1000);
    snprintf(pending, sizeof pending,
             "{\"_id\": \"c:21000\", \"job_id\": 21000, \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", "
             "\"partition\": \"gpu\", \"state\": \"PENDING\", \"submit\": {\"$date\": %lld}, \"gpus\": 0, "
             "\"req\": {\"gpus\": 4, \"cpus\": 32}}",
             (D4 + H) * 1000);
    snprintf(open, sizeof open,
             "{\"_id\": \"c:8\", \"cluster\": \"c\", \"state\": \"RUNNING\", \"runs\": [{\"start\": {\"$date\": %lld}, "
             "\"gpus\": 2, \"cpus\": 16, \"gpus_by_type\": [{\"type\": \"h100\", \"count\": 1}, {\"type\": \"a100\", "
             "\"count\": 1}]}]}",
             (D4 + 5 * H) * 1000);
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        const char *json[] = {run, pending, open}, *ids[] = {"c:7", "c:21000", "c:8"};
        sa_rollup_doc_t d, back;
        tu_rollup_doc(&d, docs[i].kind, docs[i].day, docs[i].part);
        tu_rollup_put(&d, ids[docs[i].job], 3, json[docs[i].job]);
        assert_int_equal(d.nm, 1);
        if (d.m[0].nrec == 0)
            fail_msg("%s: no record to carry", d.id);
        round_trip(&d, 11, &back);
        sa_rollup_doc_clear(&back);
        sa_rollup_doc_clear(&d);
    }
}

/*
 * A started list keeps an unknown eligible time as SA_UNSET and a known one as itself
 * (times are stored as seconds into the day).
 */
static void test_started_times(void **state)
{
    char json[1024];
    sa_rollup_doc_t d, back;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:104\", \"cluster\": \"c\", \"state\": \"COMPLETED\", \"runs\": [{\"submit\": {\"$date\": "
             "%lld}, \"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"gpus\": 1}, {\"submit\": {\"$date\": "
             "%lld}, \"eligible\": {\"$date\": %lld}, \"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, "
             "\"gpus\": 1}]}",
             (D4 + 6 * H) * 1000, (D4 + 6 * H + 600) * 1000, (D4 + 7 * H) * 1000, (D4 + 7 * H) * 1000,
             (D4 + 7 * H + 120) * 1000, (D4 + 7 * H + 1920) * 1000, (D4 + 8 * H) * 1000);
    tu_rollup_doc(&d, SA_ROLLUP_K_STARTED, D4, 0);
    tu_rollup_put(&d, "c:104", 2, json);
    round_trip(&d, 1, &back);
    assert_int_equal(back.m[0].nrec, 2);
    assert_int_equal(back.m[0].rec[SA_RS_START], D4 + 6 * H + 600);
    assert_int_equal(back.m[0].rec[SA_RS_ELIGIBLE], SA_UNSET);
    assert_int_equal(back.m[0].rec[SA_RS_NF + SA_RS_ELIGIBLE], D4 + 7 * H + 120);
    sa_rollup_doc_clear(&back);
    sa_rollup_doc_clear(&d);
}

/* A tombstone keeps its version and time through BSON. */
static void test_tombstone_kept(void **state)
{
    sa_rollup_doc_t d, back;
    bson_t out = BSON_INITIALIZER;
    sa_error_t err;
    (void)state;

    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 0);
    assert_true(sa_rollup_doc_put(&d, "c:9", 6, NULL, &err));
    assert_true(sa_rollup_doc_to_bson(&d, 8, &out, &err));
    sa_rollup_doc_init(&back);
    assert_true(sa_rollup_doc_read(&back, "c", &out, &err));
    assert_int_equal(back.nm, 1);
    assert_string_equal(back.m[0].id, "c:9");
    assert_int_equal(back.m[0].v, 6);
    assert_int_equal(back.m[0].nrec, 0);
    assert_int_equal(back.m[0].gone_at, d.m[0].gone_at);
    assert_true(sa_rollup_doc_empty(&back));
    sa_rollup_doc_clear(&back);
    sa_rollup_doc_clear(&d);
    bson_destroy(&out);
}

/* A day's rows document: named r<part>, its rows the members' sums, m_v the members' version. */
static void test_rows_document(void **state)
{
    char json[1024];
    sa_rollup_doc_t d, rows;
    bson_t rb = BSON_INITIALIZER;
    sa_error_t err;
    (void)state;

    snprintf(json, sizeof json,
             "{\"_id\": \"c:9\", \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", \"state\": \"FAILED\", "
             "\"runs\": [{\"start\": {\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"state\": \"FAILED\", "
             "\"gpus_by_type\": [{\"type\": \"a100\", \"count\": 2}], \"gpus\": 2, \"cpus\": 4}]}",
             (D4 + H) * 1000, (D4 + 3 * H) * 1000);
    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 5);
    tu_rollup_put(&d, "c:20489", 1, json);
    assert_true(sa_rollup_doc_rows_bson(&d, 4, 9, &rb, &err));
    sa_rollup_doc_init(&rows);
    assert_true(sa_rollup_doc_read(&rows, "c", &rb, &err));
    assert_string_equal(rows.id, "c:2026-10-04:r5");
    assert_int_equal(rows.kind, SA_ROLLUP_K_ROWS);
    assert_int_equal(rows.part, 5);
    assert_int_equal(rows.v, 9);
    assert_int_equal(rows.m_v, 4);
    assert_int_equal(rows.nm, 0);
    assert_int_equal(rows.nrows, 1);
    assert_string_equal(rows.keys[rows.rows[0].key].s[4], "a100");
    assert_int_equal(rows.rows[0].s.gpu_s, 2 * 2 * H);
    assert_int_equal(rows.rows[0].s.cpu_s, 4 * 2 * H);
    assert_int_equal(rows.rows[0].nended, 1);
    assert_string_equal(rows.states[rows.rended[rows.rows[0].ended_first].state], "FAILED");
    assert_int_equal(rows.rended[rows.rows[0].ended_first].n, 1);
    assert_true(sa_rollup_doc_rows_match(&d, &rows));
    sa_rollup_doc_clear(&rows);
    sa_rollup_doc_clear(&d);
    bson_destroy(&rb);
}

/*
 * A document of another encoding or record width (an older version's) is read as foreign
 * and empty; one without an _id, of another cluster or whose members do not add up is
 * refused with a message naming it.
 */
static void test_foreign_and_refused(void **state)
{
    sa_rollup_doc_t d;
    sa_error_t err;
    bson_t *b;
    (void)state;

    sa_rollup_doc_init(&d);
    b = tu_bson("{\"_id\": \"c:2026-10-04:m0\", \"_v\": 3, \"enc\": \"varint1\", \"nf\": 23, "
                "\"ids\": {\"$binary\": {\"base64\": \"YzoxAA==\", \"subType\": \"00\"}}, "
                "\"m\": {\"$binary\": {\"base64\": \"AAA=\", \"subType\": \"00\"}}}");
    assert_true(sa_rollup_doc_read(&d, "c", b, &err));
    assert_true(d.foreign);
    assert_int_equal(d.nm, 0);
    assert_int_equal(d.kind, SA_ROLLUP_K_MEMBERS);
    bson_destroy(b);
    b = tu_bson("{\"_id\": \"c:2026-10-04:m0\", \"_v\": 3, \"enc\": \"" SA_ROLLUP_ENC "\", \"nf\": 9, "
                "\"ids\": {\"$binary\": {\"base64\": \"YzoxAA==\", \"subType\": \"00\"}}, "
                "\"m\": {\"$binary\": {\"base64\": \"AAA=\", \"subType\": \"00\"}}}");
    assert_true(sa_rollup_doc_read(&d, "c", b, &err));
    assert_true(d.foreign);
    bson_destroy(b);

    b = tu_bson("{\"_v\": 3}");
    assert_false(sa_rollup_doc_read(&d, "c", b, &err));
    assert_non_null(strstr(err.message, "no _id"));
    bson_destroy(b);
    b = tu_bson("{\"_id\": \"d:2026-10-04:m0\"}");
    assert_false(sa_rollup_doc_read(&d, "c", b, &err));
    assert_non_null(strstr(err.message, "d:2026-10-04:m0"));
    bson_destroy(b);
    b = tu_bson("{\"_id\": \"c:commit\"}"); /* a rollup name, not a rollup document */
    assert_false(sa_rollup_doc_read(&d, "c", b, &err));
    bson_destroy(b);
    /* one id ("c:1"), no member record: the members do not add up */
    b = tu_bson("{\"_id\": \"c:2026-10-04:m0\", \"_v\": 3, \"enc\": \"" SA_ROLLUP_ENC "\", \"nf\": 23, "
                "\"ids\": {\"$binary\": {\"base64\": \"YzoxAA==\", \"subType\": \"00\"}}, "
                "\"m\": {\"$binary\": {\"base64\": \"\", \"subType\": \"00\"}}}");
    assert_false(sa_rollup_doc_read(&d, "c", b, &err));
    assert_non_null(strstr(err.message, "c:2026-10-04:m0"));
    bson_destroy(b);
    sa_rollup_doc_clear(&d);
}

/* ---- what 0.5.1 added: hosts in members, planned fields in the job lists -------------------- */

/*
 * A members document keeps each GPU run's nodes (a hosts table, canonical), not a CPU
 * run's; read as 0.5.0 stored it (no hosts), every record says SA_RR_HOSTS_UNKEPT and the
 * document equals this version's; two documents whose runs' nodes differ do not. A job
 * list record keeps planned fields only for a job that never started; one without them
 * (as 0.5.0 wrote it) equals one with them.
 */
static void test_hosts_and_planned(void **state)
{
    char g1[1024], g2[1024], c1[1024], g1b[1024];
    const char *fmt = "{\"_id\": \"c:%d\", \"job_id\": %d, \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", "
                      "\"state\": \"COMPLETED\", \"gpus\": %d, \"end\": {\"$date\": %lld}, \"runs\": [{\"start\": "
                      "{\"$date\": %lld}, \"end\": {\"$date\": %lld}, \"state\": \"COMPLETED\", \"gpus\": %d, "
                      "\"nodes\": \"%s\"}]}";
    sa_rollup_doc_t d, back, old, e;
    bson_t out = BSON_INITIALIZER, o5 = BSON_INITIALIZER;
    sa_error_t err;
    (void)state;

    snprintf(g1, sizeof g1, fmt, 7, 7, 4, (D4 + 5 * H) * 1000, (D4 + 2 * H) * 1000, (D4 + 5 * H) * 1000, 4,
             "gpu[01-02]");
    snprintf(g1b, sizeof g1b, fmt, 7, 7, 4, (D4 + 5 * H) * 1000, (D4 + 2 * H) * 1000, (D4 + 5 * H) * 1000, 4,
             "gpu[01,03]");
    snprintf(g2, sizeof g2, fmt, 9, 9, 1, (D4 + 6 * H) * 1000, (D4 + 3 * H) * 1000, (D4 + 6 * H) * 1000, 1, "gpu03");
    snprintf(c1, sizeof c1, fmt, 11, 11, 0, (D4 + 6 * H) * 1000, (D4 + 3 * H) * 1000, (D4 + 6 * H) * 1000, 0,
             "cpu01");
    tu_rollup_doc(&d, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&d, "c:9", 2, g2);
    tu_rollup_put(&d, "c:7", 2, g1);
    tu_rollup_put(&d, "c:11", 2, c1);
    assert_int_equal(d.nm, 3);
    assert_int_equal(d.nhosts, 2);
    round_trip(&d, 5, &back);
    /* stored in canonical order: gpu03 after gpu[01-02]; the CPU run keeps none */
    assert_int_equal(back.nhosts, 2);
    assert_string_equal(back.hosts[0], "gpu03");
    assert_string_equal(back.hosts[1], "gpu[01-02]");
    assert_int_equal(back.m[0].rec[SA_RR_HOSTS], -1);               /* c:11 */
    assert_string_equal(back.hosts[back.m[1].rec[SA_RR_HOSTS]], "gpu[01-02]"); /* c:7 */
    assert_string_equal(back.hosts[back.m[2].rec[SA_RR_HOSTS]], "gpu03");      /* c:9 */
    /* as 0.5.0 stored it */
    assert_true(sa_rollup_doc_to_bson(&d, 5, &out, &err));
    tu_rollup_as_05(&out, &o5);
    sa_rollup_doc_init(&old);
    if (!sa_rollup_doc_read(&old, "c", &o5, &err))
        fail_msg("read as 0.5.0: %s", err.message);
    assert_false(old.foreign);
    assert_int_equal(old.nm, 3);
    assert_int_equal(old.nhosts, 0);
    for (size_t i = 0; i < old.nm; i++)
        assert_int_equal(old.m[i].rec[SA_RR_HOSTS], SA_RR_HOSTS_UNKEPT);
    assert_true(sa_rollup_doc_equal(&d, &old));
    assert_true(sa_rollup_doc_equal(&old, &d));
    /* the same runs on other nodes: not equal (and not hidden by the 0.5.0 rule) */
    tu_rollup_doc(&e, SA_ROLLUP_K_MEMBERS, D4, 0);
    tu_rollup_put(&e, "c:9", 2, g2);
    tu_rollup_put(&e, "c:7", 2, g1b);
    tu_rollup_put(&e, "c:11", 2, c1);
    assert_false(sa_rollup_doc_equal(&d, &e));
    assert_true(sa_rollup_doc_equal(&old, &e));
    sa_rollup_doc_clear(&e);
    sa_rollup_doc_clear(&old);
    sa_rollup_doc_clear(&back);
    sa_rollup_doc_clear(&d);
    bson_destroy(&out);
    bson_destroy(&o5);

    /* the job lists: a pending job's planned fields; without them (0.5.0) the same record otherwise */
    {
        char p1[1024];
        snprintf(p1, sizeof p1,
                 "{\"_id\": \"c:21000\", \"job_id\": 21000, \"cluster\": \"c\", \"account\": \"a\", \"user\": \"u\", "
                 "\"state\": \"PENDING\", \"submit\": {\"$date\": %lld}, \"eligible\": {\"$date\": %lld}, "
                 "\"reservation\": \"maint\", \"array\": {\"task_string\": \"1-10%%2\"}, \"req\": {\"cpus\": 32}}",
                 (D4 + H) * 1000, (D4 + 2 * H) * 1000);
        tu_rollup_doc(&d, SA_ROLLUP_K_LIVE, 0, 5);
        tu_rollup_put(&d, NULL, 3, p1);
        assert_int_equal(d.nm, 1);
        assert_int_equal(d.m[0].rec[SA_RL_PLAN], SA_RL_PLAN_KEPT | SA_RL_PLAN_RESV);
        assert_int_equal(d.m[0].rec[SA_RL_ELIGIBLE], D4 + 2 * H);
        assert_int_equal(d.m[0].rec[SA_RL_PLAN_CPUS], 32);
        assert_int_equal(d.m[0].rec[SA_RL_TASKS], 10);
        round_trip(&d, 4, &back);
        sa_rollup_doc_clear(&back);
        tu_rollup_doc(&e, SA_ROLLUP_K_LIVE, 0, 5);
        tu_rollup_put(&e, NULL, 3, p1);
        for (int f = SA_RL_PLAN; f <= SA_RL_TASKS; f++)
            e.m[0].rec[f] = 0;
        assert_true(sa_rollup_doc_equal(&d, &e));
        e.m[0].rec[SA_RR_CPUS] += 1;
        assert_false(sa_rollup_doc_equal(&d, &e));
        sa_rollup_doc_clear(&e);
        sa_rollup_doc_clear(&d);
    }
}

/* ---- versions -------------------------------------------------------------------------------------- */

/*
 * What a reader at commit seq sees of a stored document: itself when its _s is at most seq;
 * else its prev, when that is old enough; no document when the version it sees says
 * absent; else it must read again from a newer commit.
 */
static void test_version_seen(void **state)
{
    bson_t *b, prev;
    (void)state;

    b = tu_bson("{\"_id\": \"c:open:0\", \"_s\": 7, \"x\": 1, \"prev\": {\"_s\": 4, \"x\": 0}}");
    assert_string_equal(sa_rollup_id_of(b), "c:open:0");
    assert_int_equal(sa_rollup_seq_of(b), 7);
    assert_int_equal(sa_rollup_version(b, 7, &prev), SA_ROLLUP_VER_THIS);
    assert_int_equal(sa_rollup_version(b, 9, &prev), SA_ROLLUP_VER_THIS);
    assert_int_equal(sa_rollup_version(b, 6, &prev), SA_ROLLUP_VER_PREV);
    assert_int_equal(sa_rollup_seq_of(&prev), 4);
    assert_true(bson_has_field(&prev, "x"));
    assert_int_equal(sa_rollup_version(b, 3, &prev), SA_ROLLUP_VER_NEWER);
    bson_destroy(b);

    b = tu_bson("{\"_id\": \"c:open:0\", \"_s\": 7, \"prev\": {\"_s\": 0, \"absent\": true}}");
    assert_int_equal(sa_rollup_version(b, 6, &prev), SA_ROLLUP_VER_ABSENT);
    bson_destroy(b);
    b = tu_bson("{\"_id\": \"c:open:0\", \"_s\": 7}"); /* read without its prev (a projection) */
    assert_int_equal(sa_rollup_version(b, 6, &prev), SA_ROLLUP_VER_NEWER);
    bson_destroy(b);
    b = tu_bson("{\"_id\": 3, \"x\": 1}"); /* written before commits were kept: _s 0, seen by all */
    assert_null(sa_rollup_id_of(b));
    assert_int_equal(sa_rollup_seq_of(b), 0);
    assert_int_equal(sa_rollup_version(b, 0, &prev), SA_ROLLUP_VER_THIS);
    bson_destroy(b);
}

/*
 * The document to store: the content, _s, and under prev the version stored now (whole,
 * without its own prev; {_s: 0, absent} when none). Taking back a version never committed
 * gives its prev with the next _v, or says the document goes.
 */
static void test_versioned_and_back(void **state)
{
    bson_t *content, *stored, out = BSON_INITIALIZER, first = BSON_INITIALIZER, back = BSON_INITIALIZER, prev;
    sa_error_t err;
    bool absent;
    (void)state;

    content = tu_bson("{\"_id\": \"c:open:0\", \"_v\": 5, \"x\": 2, \"_s\": 1, \"prev\": {\"old\": 1}}");
    assert_true(sa_rollup_versioned(content, 8, NULL, &first, &err));
    assert_int_equal(sa_rollup_seq_of(&first), 8);
    assert_int_equal(sa_rollup_version(&first, 7, &prev), SA_ROLLUP_VER_ABSENT); /* nothing before it */
    assert_true(sa_rollup_unversioned(&first, &back, &absent, &err));
    assert_true(absent);

    stored = tu_bson("{\"_id\": \"c:open:0\", \"_v\": 4, \"x\": 1, \"_s\": 6, \"prev\": {\"_s\": 2, \"x\": 0}}");
    assert_true(sa_rollup_versioned(content, 8, stored, &out, &err));
    assert_int_equal(sa_rollup_seq_of(&out), 8);
    assert_true(bson_has_field(&out, "x"));
    assert_false(bson_has_field(&out, "prev.old")); /* the content's own _s and prev are not kept */
    assert_true(bson_has_field(&out, "prev.x"));
    assert_false(bson_has_field(&out, "prev.prev")); /* one version back, not two */
    assert_int_equal(sa_rollup_version(&out, 7, &prev), SA_ROLLUP_VER_PREV);
    assert_int_equal(sa_rollup_seq_of(&prev), 6);
    {
        bson_iter_t it;
        assert_true(bson_iter_init_find(&it, &prev, "_v"));
        assert_int_equal(bson_iter_as_int64(&it), 4);
    }

    assert_true(sa_rollup_unversioned(&out, &back, &absent, &err));
    assert_false(absent);
    {
        bson_iter_t it;
        assert_true(bson_iter_init_find(&it, &back, "_v"));
        assert_int_equal(bson_iter_as_int64(&it), 6); /* the stored one's _v (5) + 1 */
        assert_true(bson_iter_init_find(&it, &back, "x"));
        assert_int_equal(bson_iter_as_int64(&it), 1);
    }
    assert_int_equal(sa_rollup_seq_of(&back), 6);
    assert_string_equal(sa_rollup_id_of(&back), "c:open:0");
    bson_destroy(content);
    bson_destroy(stored);
    bson_destroy(&out);
    bson_destroy(&first);
    bson_destroy(&back);
}

/* The commit document: its seq, as_of and a flush's intent there and back; _v one more than read. */
static void test_commit_document(void **state)
{
    sa_rollup_commit_t c, back;
    bson_t out = BSON_INITIALIZER, none = BSON_INITIALIZER;
    sa_error_t err;
    (void)state;

    sa_rollup_commit_init(&c);
    assert_int_equal(c.as_of, SA_UNSET);
    assert_true(sa_rollup_commit_read(&c, NULL, &err)); /* none stored */
    assert_int_equal(c.v, 0);
    assert_int_equal(c.seq, 0);
    c.v = 4;
    c.seq = 12;
    c.as_of = D4 + 5 * H;
    c.intent_seq = 13;
    c.intent_host = strdup("node1");
    c.intent_pid = 4242;
    c.intent_proc = strdup("0f3c2a/991234"); /* the process, so that a reused pid is not taken for it */
    c.intent_at = D4 + 6 * H;
    assert_true(sa_strv_push(&c.intent_ids, "c:2026-10-04:m0"));
    assert_true(sa_strv_push(&c.intent_ids, "c:open:0"));
    assert_true(sa_rollup_commit_bson(&c, "c", &out, &err));
    assert_string_equal(sa_rollup_id_of(&out), "c:commit");
    sa_rollup_commit_init(&back);
    assert_true(sa_rollup_commit_read(&back, &out, &err));
    assert_int_equal(back.v, 5);
    assert_int_equal(back.seq, 12);
    assert_int_equal(back.as_of, D4 + 5 * H);
    assert_int_equal(back.intent_seq, 13);
    assert_string_equal(back.intent_host, "node1");
    assert_int_equal(back.intent_pid, 4242);
    assert_string_equal(back.intent_proc, "0f3c2a/991234");
    assert_int_equal(back.intent_at, D4 + 6 * H);
    assert_int_equal(back.intent_ids.n, 2);
    assert_string_equal(back.intent_ids.v[1], "c:open:0");

    /* committed: no intent, no as_of said */
    sa_rollup_commit_clear(&c);
    c.seq = 13;
    assert_true(sa_rollup_commit_bson(&c, "c", &none, &err));
    assert_false(bson_has_field(&none, "intent"));
    assert_false(bson_has_field(&none, "as_of"));
    assert_true(sa_rollup_commit_read(&back, &none, &err));
    assert_int_equal(back.seq, 13);
    assert_int_equal(back.intent_seq, 0);
    assert_null(back.intent_host);
    assert_null(back.intent_proc);
    assert_int_equal(back.as_of, SA_UNSET);
    sa_rollup_commit_clear(&c);
    sa_rollup_commit_clear(&back);
    bson_destroy(&out);
    bson_destroy(&none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_round_trip),  cmocka_unit_test(test_started_times),
        cmocka_unit_test(test_tombstone_kept),    cmocka_unit_test(test_rows_document),
        cmocka_unit_test(test_foreign_and_refused), cmocka_unit_test(test_hosts_and_planned),
        cmocka_unit_test(test_version_seen),
        cmocka_unit_test(test_versioned_and_back), cmocka_unit_test(test_commit_document),
    };
    return tu_run_group_tests("rollup_codec", tests, NULL, NULL);
}
