/*
 * test_utilcalc.c - report/sa_utilcalc.c, utilization's accounting rule, without a server:
 * one hour of one resource split over node states (exact allocation, the snapshots'
 * allocation, a cap at the capacity, CPUs), slurmdbd's planned time of a pending job and
 * its cap at the idle time. Every figure is computed by hand in the comments (seconds;
 * H = 3600).
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "sa_utilcalc.h"

#define H 3600.0
#define NEAR(x, want) assert_true(fabs((x) - (want)) < 1e-6)

/* out[i * SA_UC_N + c] of a split. */
static double at(const double *out, size_t i, sa_uclass_t c)
{
    return out[i * SA_UC_N + c];
}

/*
 * One hour of 20 GPUs in four states:
 *   0 MIXED       8 GPUs, 4 in use at the snapshots (free time: idle)
 *   1 IDLE        4 GPUs, none in use (idle)
 *   2 IDLE+DRAIN  4 GPUs (down)
 *   3 ALLOCATED   4 GPUs, 2 in use (no free CPU: stranded)
 * The snapshots saw 4 + 2 = 6 GPU-hours allocated.
 */
static const sa_uin_t gpus[4] = {
    {8 * H, 4 * H, 0, 0, SA_TSDB_FREE_IDLE},
    {4 * H, 0, 0, 0, SA_TSDB_FREE_IDLE},
    {4 * H, 0, 0, 0, SA_TSDB_FREE_DOWN},
    {4 * H, 2 * H, 0, 0, SA_TSDB_FREE_STRANDED},
};

/*
 * The runs had 9 GPU-hours: 3 more than the snapshots saw, on the free time of the states
 * whose free time is idle (MIXED 4 h, IDLE 4 h), in proportion: 1.5 h each. MIXED: 5.5 h
 * allocated, 2.5 idle; IDLE: 1.5 and 2.5; IDLE+DRAIN: 4 h down; ALLOCATED: 2 h allocated,
 * 2 stranded. Allocated 5.5 + 1.5 + 2 = 9; each state adds to its total.
 */
static void test_split_more_than_seen(void **state)
{
    double out[4 * SA_UC_N], capped = -1;
    (void)state;

    sa_util_split(gpus, 4, 9 * H, false, out, &capped);
    NEAR(capped, 0);
    NEAR(at(out, 0, SA_UC_ALLOCATED), 5.5 * H);
    NEAR(at(out, 0, SA_UC_IDLE), 2.5 * H);
    NEAR(at(out, 1, SA_UC_ALLOCATED), 1.5 * H);
    NEAR(at(out, 1, SA_UC_IDLE), 2.5 * H);
    NEAR(at(out, 2, SA_UC_DOWN), 4 * H);
    NEAR(at(out, 2, SA_UC_ALLOCATED), 0);
    NEAR(at(out, 3, SA_UC_ALLOCATED), 2 * H);
    NEAR(at(out, 3, SA_UC_STRANDED), 2 * H);
    for (size_t i = 0; i < 4; i++) {
        double sum = 0;
        for (int c = 0; c < SA_UC_N; c++)
            sum += at(out, i, (sa_uclass_t)c);
        NEAR(sum, gpus[i].total);
    }
}

/*
 * The runs had 3 GPU-hours, half what the snapshots saw: every state keeps half its
 * allocation (MIXED 2 h, ALLOCATED 1 h); the rest is free in the state's class: MIXED 6 h
 * idle, ALLOCATED 3 h stranded.
 */
static void test_split_less_than_seen(void **state)
{
    double out[4 * SA_UC_N];
    (void)state;

    sa_util_split(gpus, 4, 3 * H, false, out, NULL);
    NEAR(at(out, 0, SA_UC_ALLOCATED), 2 * H);
    NEAR(at(out, 0, SA_UC_IDLE), 6 * H);
    NEAR(at(out, 1, SA_UC_IDLE), 4 * H);
    NEAR(at(out, 3, SA_UC_ALLOCATED), 1 * H);
    NEAR(at(out, 3, SA_UC_STRANDED), 3 * H);
}

/*
 * More than the capacity (25 GPU-hours of 20): capped at 20, as slurmdbd caps it, 5 h cut;
 * the idle states' free time (4 + 4 h) takes 8 of the 14 missed, the others' (IDLE+DRAIN
 * 4 h, ALLOCATED 2 h) the last 6: all 20 allocated.
 */
static void test_split_capped(void **state)
{
    double out[4 * SA_UC_N], capped = 0, alloc = 0;
    (void)state;

    sa_util_split(gpus, 4, 25 * H, false, out, &capped);
    NEAR(capped, 5 * H);
    for (size_t i = 0; i < 4; i++)
        alloc += at(out, i, SA_UC_ALLOCATED);
    NEAR(alloc, 20 * H);
    NEAR(at(out, 2, SA_UC_ALLOCATED), 4 * H);
    NEAR(at(out, 2, SA_UC_DOWN), 0);
}

/*
 * No archive (exact < 0): the snapshots' allocation stays, and carried GPUs whose use
 * nobody said are unknown: a MIXED state of 8 GPU-hours, 2 seen in use, 4 of unknown use:
 * 2 allocated, 4 unknown, 2 idle.
 */
static void test_split_sampled(void **state)
{
    const sa_uin_t in[1] = {{8 * H, 2 * H, 4 * H, 0, SA_TSDB_FREE_IDLE}};
    double out[SA_UC_N];
    (void)state;

    sa_util_split(in, 1, -1, false, out, NULL);
    NEAR(at(out, 0, SA_UC_ALLOCATED), 2 * H);
    NEAR(at(out, 0, SA_UC_UNKNOWN), 4 * H);
    NEAR(at(out, 0, SA_UC_IDLE), 2 * H);
}

/*
 * CPUs: IDLE+DRAIN 64 (Slurm counts a drained node's CPUs as other: down), MIXED 64 (16
 * seen allocated, 4 other), ALLOCATED 32 (32 seen). Capacity that can be allocated: 160 -
 * 68 other = 92. The runs had 60 CPU-hours: 12 more than the 48 seen, all on MIXED (its
 * free time is idle; ALLOCATED's is stranded but an idle CPU is never stranded, and it has
 * none): MIXED 28 allocated, 32 idle, 4 down (other); ALLOCATED 32; IDLE+DRAIN 64 down.
 */
static void test_split_cpus(void **state)
{
    const sa_uin_t in[3] = {
        {64 * H, 0, 0, 64 * H, SA_TSDB_FREE_DOWN},
        {64 * H, 16 * H, 0, 4 * H, SA_TSDB_FREE_IDLE},
        {32 * H, 32 * H, 0, 0, SA_TSDB_FREE_STRANDED},
    };
    double out[3 * SA_UC_N];
    (void)state;

    sa_util_split(in, 3, 60 * H, true, out, NULL);
    NEAR(at(out, 0, SA_UC_DOWN), 64 * H);
    NEAR(at(out, 1, SA_UC_ALLOCATED), 28 * H);
    NEAR(at(out, 1, SA_UC_IDLE), 32 * H);
    NEAR(at(out, 1, SA_UC_DOWN), 4 * H);
    NEAR(at(out, 2, SA_UC_ALLOCATED), 32 * H);
    NEAR(at(out, 2, SA_UC_STRANDED), 0);
    NEAR(at(out, 2, SA_UC_IDLE), 0);
}

/*
 * slurmdbd's planned time (as_mysql_rollup.c _add_planned_time) in the hour [10:00, 11:00)
 * (T = 2026-10-04T10:00:00Z):
 * - eligible 10:10, started 10:40, 4 CPUs: 30 min x 4 = 7200; the next hour: 0;
 * - eligible 10:50, still pending: to the hour's end, 10 min x 2 = 1200;
 * - eligible 10:30, cancelled 11:20 without starting: 30 min x 1 = 1800, the next hour 20 min = 1200;
 * - an array meta-record of 10 pending tasks, 1 CPU each, eligible 10:50: 10 min x 10 = 6000;
 * - started before the hour (eligible 9:00, start 9:30): 0; eligible not known: 0.
 * And the hour's planned time is never more than its idle CPU time.
 */
static void test_planned(void **state)
{
    const int64_t T = 1791108000LL;
    (void)state;
    NEAR(sa_util_pending_secs(T + 600, T + 2400, SA_UNSET, T, T + 3600, 4, 0), 7200);
    NEAR(sa_util_pending_secs(T + 600, T + 2400, SA_UNSET, T + 3600, T + 7200, 4, 0), 0);
    NEAR(sa_util_pending_secs(T + 3000, SA_UNSET, SA_UNSET, T, T + 3600, 2, 0), 1200);
    NEAR(sa_util_pending_secs(T + 1800, SA_UNSET, T + 4800, T, T + 3600, 1, 0), 1800);
    NEAR(sa_util_pending_secs(T + 1800, SA_UNSET, T + 4800, T + 3600, T + 7200, 1, 0), 1200);
    NEAR(sa_util_pending_secs(T + 3000, SA_UNSET, SA_UNSET, T, T + 3600, 1, 10), 6000);
    NEAR(sa_util_pending_secs(T - 3600, T - 1800, SA_UNSET, T, T + 3600, 8, 0), 0);
    NEAR(sa_util_pending_secs(SA_UNSET, SA_UNSET, SA_UNSET, T, T + 3600, 8, 0), 0);
    NEAR(sa_util_planned(5485, 10000), 5485);
    NEAR(sa_util_planned(5485, 3000), 3000);
    NEAR(sa_util_planned(5485, 0), 0);
    assert_string_equal(sa_uclass_name(SA_UC_PLANNED_DOWN), "planned_down");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_more_than_seen), cmocka_unit_test(test_split_less_than_seen),
        cmocka_unit_test(test_split_capped),         cmocka_unit_test(test_split_sampled),
        cmocka_unit_test(test_split_cpus),           cmocka_unit_test(test_planned),
    };
    return tu_run_group_tests("utilcalc", tests, NULL, NULL);
}
