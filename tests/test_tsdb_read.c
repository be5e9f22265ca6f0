/*
 * test_tsdb_read.c - the read API slurm-report uses (schema/tsdb/sa_tsdb.h, sa_tsdb_read.c)
 * beyond what test_tsdb.c covers: the clusters of a file, snapshot times, the
 * coverage of a window (before the first snapshot, gaps, after the last) and its known
 * spans, the class of a state's free resources (sa_tsdb_free_class, the classes of
 * utilization and the metrics), and state hours by hour (sa_tsdb_state_hours_by) with
 * their memory.
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
    n->mem_total_mb = 256000;
    n->mem_alloc_mb = alloc * 1000;
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

/* The class of a state's free resources and why, in the order of precedence of sa_tsdb.h. */
static void test_free_class(void **state)
{
    static const struct {
        const char *state;
        double cpu_total, cpu_idle;
        sa_tsdb_free_t c;
        const char *why;
    } cases[] = {
        {"IDLE", 10, 10, SA_TSDB_FREE_IDLE, NULL},
        {"MIXED", 10, 2, SA_TSDB_FREE_IDLE, NULL},
        {"MIXED", 10, 0, SA_TSDB_FREE_STRANDED, "no free CPU"},
        {"MIXED", 0, 0, SA_TSDB_FREE_IDLE, NULL},
        {"ALLOCATED", 10, 0, SA_TSDB_FREE_STRANDED, "no free CPU"},
        {"DOWN", 0, 0, SA_TSDB_FREE_DOWN, "node down"},
        {"DOWN+NOT_RESPONDING", 0, 0, SA_TSDB_FREE_DOWN, "node down"},
        {"IDLE+DRAIN", 10, 10, SA_TSDB_FREE_DOWN, "node drained"},
        {"MIXED+DRAIN", 10, 5, SA_TSDB_FREE_DOWN, "node drained"},
        {"IDLE+FAIL", 10, 10, SA_TSDB_FREE_DOWN, "node failing"},
        {"IDLE+RESERVED", 10, 10, SA_TSDB_FREE_RESERVED, "node reserved"},
        {"IDLE+MAINTENANCE", 10, 10, SA_TSDB_FREE_PLANNED_DOWN, "maintenance"},
        {"IDLE+MAINTENANCE+RESERVED", 10, 10, SA_TSDB_FREE_PLANNED_DOWN, "maintenance"},
        {"DOWN+MAINT", 0, 0, SA_TSDB_FREE_PLANNED_DOWN, "maintenance"}, /* slurmdbd: a MAINT reservation's PLND Down */
        {"IDLE+POWERED_DOWN", 10, 10, SA_TSDB_FREE_PLANNED_DOWN, "node powered down"},
        {"IDLE+DRAIN+POWERED_DOWN", 10, 10, SA_TSDB_FREE_PLANNED_DOWN, "node powered down"},
        {"FUTURE", 10, 10, SA_TSDB_FREE_PLANNED_DOWN, "node not yet in service"},
        {"IDLE+DRAINING", 10, 10, SA_TSDB_FREE_IDLE, NULL}, /* not the DRAIN flag */
        {"IDLE+COMPLETING", 10, 10, SA_TSDB_FREE_IDLE, NULL},
        {"DOWNTIME", 0, 0, SA_TSDB_FREE_IDLE, NULL},
        {"MIXED+COMPLETING", 10, 0, SA_TSDB_FREE_STRANDED, "no free CPU"},
        {"", 0, 0, SA_TSDB_FREE_IDLE, NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why = "x";
        sa_tsdb_free_t c = sa_tsdb_free_class(cases[i].state, cases[i].cpu_total, cases[i].cpu_idle, &why);
        if (c != cases[i].c || (why == NULL) != (cases[i].why == NULL) || (why && strcmp(why, cases[i].why) != 0))
            fail_msg("%s (%g CPU-h, %g idle): %s (%s), expected %s (%s)", cases[i].state, cases[i].cpu_total,
                     cases[i].cpu_idle, sa_tsdb_free_name(c), why ? why : "-", sa_tsdb_free_name(cases[i].c),
                     cases[i].why ? cases[i].why : "-");
    }
    assert_int_equal(sa_tsdb_free_class(NULL, 1, 1, NULL), SA_TSDB_FREE_IDLE);
    /* an idle CPU is never stranded; Slurm's other CPUs of a usable node are down */
    assert_int_equal(sa_tsdb_cpu_free_class(SA_TSDB_FREE_STRANDED, false), SA_TSDB_FREE_IDLE);
    assert_int_equal(sa_tsdb_cpu_free_class(SA_TSDB_FREE_IDLE, true), SA_TSDB_FREE_DOWN);
    assert_int_equal(sa_tsdb_cpu_free_class(SA_TSDB_FREE_RESERVED, true), SA_TSDB_FREE_RESERVED);
    assert_string_equal(sa_tsdb_free_name(SA_TSDB_FREE_PLANNED_DOWN), "planned_down");
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

/*
 * One hour of three nodes: drained, busy without a free CPU, and in use with free CPUs;
 * then the same hour read by UTC hours (buckets aligned on the epoch: T0 is 08:53:20, so
 * the first hour's bucket ends at 09:00:00, 400 s in).
 */
static void test_free_hours(void **state)
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
    assert_int_equal(r.v[0].free_class, SA_TSDB_FREE_DOWN);
    assert_near(r.v[0].gpu_hours_idle, 8);
    assert_string_equal(r.state[1], "MIXED");
    assert_int_equal(r.v[1].free_class, SA_TSDB_FREE_IDLE);
    assert_near(r.v[1].gpu_hours_idle, 6);
    /* memory: 256000 MiB a node (node()), allocated 1000 MiB a CPU */
    assert_near(r.v[1].mem_mb_hours_total, 2 * 256000);
    assert_near(r.v[1].mem_mb_hours_alloc, 16000 + 8000);
    assert_int_equal(r.v[0].bucket, T0);
    /* by hour: [T0, 09:00:00) = 400 s, then [09:00, T0 + 3600) = 3,200 s */
    r.n = 0;
    assert_true(sa_tsdb_state_hours_by(db, "gamma", T0, T0 + 3600, 3600, SA_TSDB_BY_STATE, collect, &r, &err));
    assert_int_equal(r.n, 4);
    assert_int_equal(r.v[0].bucket, T0);
    assert_near(r.v[0].node_hours, 400.0 / 3600);
    assert_int_equal(r.v[2].bucket, T0 + 400);
    assert_string_equal(r.state[2], "IDLE+DRAIN");
    assert_near(r.v[2].node_hours, 3200.0 / 3600);
    assert_near(r.v[1].gpu_hours_total + r.v[3].gpu_hours_total, 16);
    sa_tsdb_close(db);
}

/* The known spans of a window: alpha's [T0, T0 + 600) and, after the gap, nothing up to its last snapshot. */
static void test_known_spans(void **state)
{
    sa_tsdb_t *db = two_clusters();
    sa_error_t err;
    int64_t *v;
    size_t n;
    (void)state;

    assert_true(sa_tsdb_known_spans(db, "alpha", T0 - 100, T0 + 5000, &v, &n, &err));
    assert_int_equal(n, 1); /* [T0, T0 + 600): the gap runs to the last snapshot, T0 + 2000 */
    assert_int_equal(v[0], T0);
    assert_int_equal(v[1], T0 + 600);
    free(v);
    assert_true(sa_tsdb_known_spans(db, "alpha", T0 + 300, T0 + 400, &v, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(v[0], T0 + 300);
    assert_int_equal(v[1], T0 + 400);
    free(v);
    assert_true(sa_tsdb_known_spans(db, "nowhere", T0, T0 + 100, &v, &n, &err));
    assert_int_equal(n, 0);
    assert_null(v);
    sa_tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clusters_and_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_coverage, setup, teardown),
        cmocka_unit_test(test_free_class),
        cmocka_unit_test_setup_teardown(test_free_hours, setup, teardown),
        cmocka_unit_test_setup_teardown(test_known_spans, setup, teardown),
    };
    return tu_run_group_tests("tsdb_read", tests, NULL, NULL);
}
