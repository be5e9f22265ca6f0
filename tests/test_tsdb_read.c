/*
 * test_tsdb_read.c - the read API slurm-report uses (schema/tsdb/sa_tsdb.h, sa_tsdb_read.c)
 * beyond what test_tsdb.c covers: the clusters of a file, snapshot times, the
 * coverage of a window (before the first snapshot, gaps, after the last), and which
 * states strand idle GPUs (sa_tsdb_state_strands and the stranded hours of
 * sa_tsdb_state_hours).
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_tsdb.h"

#define T0 1760000000 /* 2025-10-09T08:53:20Z */

#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

static char path[64];

static int setup(void **state)
{
    int fd;
    (void)state;
    snprintf(path, sizeof path, "/tmp/test_tsdb_read-XXXXXX");
    if ((fd = mkstemp(path)) < 0)
        return -1;
    close(fd);
    unlink(path);
    return 0;
}

static int teardown(void **state)
{
    char side[96];
    (void)state;
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    return 0;
}

/* A node in state base(+flag) with cpus (alloc of them allocated) and gpus of type t (used of them). */
static sa_node_t *node(const char *name, const char *base, const char *flag, int64_t cpus, int64_t alloc,
                       const char *t, int64_t gpus, int64_t used)
{
    sa_node_t *n = sa_node_new();
    assert_non_null(n);
    n->name = strdup(name);
    n->state.base = strdup(base);
    if (flag)
        assert_true(sa_strv_add_sorted_unique(&n->state.flags, flag));
    n->cpus_total = cpus;
    n->cpus_alloc = alloc;
    n->cpus_idle = cpus - alloc;
    n->cpus_other = 0;
    assert_true(sa_strv_add_sorted_unique(&n->partitions, "gpu"));
    if (t) {
        assert_true(sa_gpus_set(&n->gpus_total, t, gpus));
        assert_true(sa_gpus_set(&n->gpus_used, t, used));
    }
    return n;
}

/* Writes one snapshot of cluster c at `at` (max gap 900 s) and frees the nodes. */
static void write_snap(sa_tsdb_t *db, const char *c, int64_t at, sa_node_t **v, size_t n)
{
    sa_error_t err;
    sa_tsdb_opts_t o;
    sa_tsdb_opts_init(&o);
    o.max_gap_s = 900;
    if (!sa_tsdb_write_snapshot(db, c, at, v, n, &o, &err))
        fail_msg("write: %s", err.message);
    for (size_t i = 0; i < n; i++)
        sa_node_destroy(v[i]);
}

/* alpha: snapshots at T0, +300, +600, then +2000 (a gap of 1,400 s); beta: one snapshot. */
static sa_tsdb_t *two_clusters(void)
{
    sa_error_t err;
    sa_tsdb_t *db = sa_tsdb_open(path, false, 5000, &err);
    if (!db)
        fail_msg("open: %s", err.message);
    for (int64_t d = 0; d <= 2000; d += d == 600 ? 1400 : 300) {
        sa_node_t *v[] = {node("g1", "MIXED", NULL, 64, 32, "a100", 4, 2)};
        write_snap(db, "alpha", T0 + d, v, 1);
    }
    {
        sa_node_t *v[] = {node("b1", "IDLE", NULL, 8, 0, NULL, 0, 0)};
        write_snap(db, "beta", T0, v, 1);
    }
    return db;
}

static void test_clusters_and_snapshots(void **state)
{
    sa_tsdb_t *db = two_clusters();
    sa_strv_t names;
    sa_error_t err;
    int64_t *ats = NULL;
    size_t n = 99;
    (void)state;

    sa_strv_init(&names);
    assert_true(sa_tsdb_clusters(db, &names, &err));
    assert_int_equal(names.n, 2);
    assert_string_equal(names.v[0], "alpha");
    assert_string_equal(names.v[1], "beta");
    sa_strv_clear(&names);

    assert_true(sa_tsdb_snapshot_times(db, "alpha", INT64_MIN, INT64_MAX, &ats, &n, &err));
    assert_int_equal(n, 4);
    assert_int_equal(ats[0], T0);
    assert_int_equal(ats[3], T0 + 2000);
    free(ats);
    assert_true(sa_tsdb_snapshot_times(db, "alpha", T0 + 300, T0 + 2000, &ats, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(ats[0], T0 + 300);
    assert_int_equal(ats[1], T0 + 600);
    free(ats);
    assert_true(sa_tsdb_snapshot_times(db, "nowhere", INT64_MIN, INT64_MAX, &ats, &n, &err));
    assert_int_equal(n, 0);
    assert_null(ats);
    sa_tsdb_close(db);
}

static void test_coverage(void **state)
{
    sa_tsdb_t *db = two_clusters();
    sa_tsdb_coverage_t c;
    sa_error_t err;
    (void)state;

    /* an hour before the first snapshot to 2,000 s after the last */
    assert_true(sa_tsdb_coverage(db, "alpha", T0 - 3600, T0 + 4000, &c, &err));
    assert_int_equal(c.first, T0);
    assert_int_equal(c.last, T0 + 2000);
    assert_int_equal(c.window_s, 7600);
    assert_int_equal(c.before_s, 3600);
    assert_int_equal(c.gap_s, 1400);
    assert_int_equal(c.after_s, 2000);
    assert_int_equal(c.known_s, 600);
    /* inside the series: known but for the gap */
    assert_true(sa_tsdb_coverage(db, "alpha", T0 + 300, T0 + 1000, &c, &err));
    assert_int_equal(c.before_s + c.after_s, 0);
    assert_int_equal(c.gap_s, 400);
    assert_int_equal(c.known_s, 300);
    /* after the series: unknown */
    assert_true(sa_tsdb_coverage(db, "alpha", T0 + 3000, T0 + 4000, &c, &err));
    assert_int_equal(c.before_s, 0);
    assert_int_equal(c.after_s, 1000);
    assert_int_equal(c.known_s, 0);
    /* a cluster without snapshots: the whole window before the (absent) first one */
    assert_true(sa_tsdb_coverage(db, "nowhere", T0, T0 + 100, &c, &err));
    assert_int_equal(c.first, SA_UNSET);
    assert_int_equal(c.last, SA_UNSET);
    assert_int_equal(c.before_s, 100);
    assert_int_equal(c.known_s, 0);
    sa_tsdb_close(db);
}

static void test_state_strands(void **state)
{
    static const struct {
        const char *state;
        double cpu_total, cpu_idle;
        bool strands;
    } cases[] = {
        {"IDLE", 10, 10, false},           {"MIXED", 10, 2, false},         {"MIXED", 10, 0, true},
        {"MIXED", 0, 0, false},            {"ALLOCATED", 10, 0, true},      {"DOWN", 0, 0, true},
        {"DOWN+NOT_RESPONDING", 0, 0, true}, {"IDLE+DRAIN", 10, 10, true},  {"MIXED+DRAIN", 10, 5, true},
        {"IDLE+FAIL", 10, 10, true},       {"IDLE+RESERVED", 10, 10, true}, {"IDLE+MAINTENANCE", 10, 10, true},
        {"IDLE+MAINT", 10, 10, true},      {"IDLE+DRAINING", 10, 10, false}, {"IDLE+COMPLETING", 10, 10, false},
        {"DOWNTIME", 0, 0, false},         {"MIXED+COMPLETING", 10, 0, true}, {"", 0, 0, false},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (sa_tsdb_state_strands(cases[i].state, cases[i].cpu_total, cases[i].cpu_idle) != cases[i].strands)
            fail_msg("%s (%g CPU-h, %g idle): expected %s", cases[i].state, cases[i].cpu_total, cases[i].cpu_idle,
                     cases[i].strands ? "stranded" : "usable");
    }
    assert_false(sa_tsdb_state_strands(NULL, 1, 1));
}

typedef struct {
    sa_tsdb_hours_t v[16];
    char state[16][64];
    size_t n;
} rows_t;

static bool collect(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error)
{
    rows_t *r = ctx;
    (void)error;
    assert_true(r->n < 16);
    r->v[r->n] = *row;
    snprintf(r->state[r->n], sizeof r->state[0], "%s", row->state);
    r->n++;
    return true;
}

/* One hour of three nodes: drained, busy without a free CPU, and in use with free CPUs. */
static void test_stranded_hours(void **state)
{
    sa_error_t err;
    sa_tsdb_t *db;
    rows_t r = {.n = 0};
    (void)state;

    if (!(db = sa_tsdb_open(path, false, 5000, &err)))
        fail_msg("open: %s", err.message);
    for (int64_t d = 0; d <= 3600; d += 600) {
        sa_node_t *v[] = {node("n1", "IDLE", "DRAIN", 16, 0, "h100", 8, 0),
                          node("n2", "MIXED", NULL, 16, 16, "h100", 8, 6),
                          node("n3", "MIXED", NULL, 16, 8, "h100", 8, 4)};
        write_snap(db, "gamma", T0 + d, v, 3);
    }
    assert_true(sa_tsdb_state_hours(db, "gamma", T0, T0 + 3600, SA_TSDB_BY_STATE, collect, &r, &err));
    assert_int_equal(r.n, 2); /* IDLE+DRAIN, MIXED (n2 and n3 together: 8 idle CPU-hours) */
    assert_string_equal(r.state[0], "IDLE+DRAIN");
    assert_true(r.v[0].stranded);
    assert_near(r.v[0].gpu_hours_stranded, 8);
    assert_string_equal(r.state[1], "MIXED");
    assert_false(r.v[1].stranded);
    assert_near(r.v[1].gpu_hours_idle, 6);
    assert_near(r.v[1].gpu_hours_stranded, 0);
    sa_tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clusters_and_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_coverage, setup, teardown),
        cmocka_unit_test(test_state_strands),
        cmocka_unit_test_setup_teardown(test_stranded_hours, setup, teardown),
    };
    return tu_run_group_tests("tsdb_read", tests, NULL, NULL);
}
