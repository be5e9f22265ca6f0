/*
 * test_usage_calc.c - report/sa_usage_calc.c, the usage report's arithmetic, without a
 * server: GPU-seconds per key and segment, the key index, RGU weights and units,
 * grouping, and the awards (target to date, projection, status). Every figure is
 * computed by hand in the comments.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_usage.h"

#define DAY 86400
#define HOUR 3600
#define NEAR(x, want) assert_true(fabs((x) - (want)) < 1e-9 * (fabs(want) > 1 ? fabs(want) : 1))

static sa_report_opts_t opts;
static sa_usage_t u;

/* A computation over the boundaries b[0..nb) (window [o.start, o.end)), cluster "demo" (id 0) as of as_of. */
static void start(const int64_t *b, size_t nb, int64_t win_start, int64_t win_end, int64_t as_of)
{
    sa_error_t err;
    memset(&opts, 0, sizeof opts);
    opts.start = win_start;
    opts.end = win_end;
    opts.now = win_end;
    opts.year_days = 365;
    opts.unit = SA_UNIT_GPU_HOURS;
    assert_true(sa_usage_load(&u, &opts, &err)); /* the built-in RGU weights, no awards */
    assert_true(u.hpy == 8760);                  /* 365 days x 24 h */
    assert_int_equal(sa_rintern(&u.s.names, "demo"), 0);
    u.s.nclusters = 1;
    u.as_of = calloc(1, sizeof *u.as_of);
    u.as_of[0] = as_of;
    u.s.unknown_id = sa_rintern(&u.s.names, "unknown");
    u.s.b = malloc(nb * sizeof *u.s.b);
    memcpy(u.s.b, b, nb * sizeof *b);
    u.s.nb = nb;
    u.awards.recent_days = 30;
}

static sa_ukey_t key(const char *account, const char *user, const char *type)
{
    sa_ukey_t k = {0, sa_rintern(&u.s.names, account), sa_rintern(&u.s.names, user), sa_rintern(&u.s.names, type)};
    return k;
}

static const sa_uacc_t *acc_of(sa_ukey_t k)
{
    for (size_t i = 0; i < u.s.nacc; i++) {
        if (memcmp(&u.s.acc[i].k, &k, sizeof k) == 0)
            return &u.s.acc[i];
    }
    fail_msg("no accumulator for the key");
    return NULL;
}

/* Segments: a run is split over the boundaries, clipped to the range, summed over whole segments. */
static void test_segments(void **state)
{
    const int64_t b[] = {0, 100, 200, 300};
    sa_ukey_t k;
    const sa_uacc_t *a;
    (void)state;

    start(b, 4, 0, 300, 300);
    k = key("physics", "alice", "a100");
    /* 2 GPUs over [50, 250): 2 x 50 = 100 in [0,100), 2 x 100 = 200 in [100,200), 2 x 50 = 100 in [200,300) */
    assert_true(sa_usums_add(&u.s, &k, 2, 50, 250));
    a = acc_of(k);
    assert_int_equal(a->secs[0], 100);
    assert_int_equal(a->secs[1], 200);
    assert_int_equal(a->secs[2], 100);
    assert_int_equal(sa_usums_get(&u.s, a, 0, 300), 400);
    assert_int_equal(sa_usums_get(&u.s, a, 100, 200), 200);
    assert_int_equal(sa_usums_get(&u.s, a, 100, 300), 300);
    assert_int_equal(sa_usums_get(&u.s, a, 200, 100), 0); /* an empty interval */
    assert_int_equal(sa_usums_get(&u.s, a, 100, 100), 0);
    /* clipped to the range: 1 GPU over [-100, 50) counts [0, 50): 50 more in [0,100) -> 150 */
    assert_true(sa_usums_add(&u.s, &k, 1, -100, 50));
    assert_int_equal(a->secs[0], 150);
    /* 1 GPU over [290, 1000): [290, 300) -> 10 more in [200,300) -> 110 */
    assert_true(sa_usums_add(&u.s, &k, 1, 290, 1000));
    assert_int_equal(a->secs[2], 110);
    /* outside the range, no GPUs, an empty run: nothing, and no accumulator for a new key */
    {
        sa_ukey_t other = key("bio", "bob", "h100");
        size_t before = u.s.nacc;
        assert_true(sa_usums_add(&u.s, &other, 4, 300, 400));
        assert_true(sa_usums_add(&u.s, &other, 4, -50, 0));
        assert_true(sa_usums_add(&u.s, &other, 0, 0, 300));
        assert_true(sa_usums_add(&u.s, &other, -1, 0, 300));
        assert_int_equal(u.s.nacc, before);
        /* an empty run inside the range adds nothing (its key may get a zero accumulator) */
        assert_true(sa_usums_add(&u.s, &other, 1, 150, 150));
        assert_int_equal(sa_usums_get(&u.s, acc_of(other), 0, 300), 0);
    }
    /* seconds into the segment holding t: 7 at t = 150 -> [100,200) = 207; t = 300 (the end) is outside */
    assert_true(sa_usums_add_secs(&u.s, &k, 150, (const int64_t[SA_TRES_N]){7}));
    assert_int_equal(a->secs[1], 207);
    assert_true(sa_usums_add_secs(&u.s, &k, 100, (const int64_t[SA_TRES_N]){3})); /* a boundary starts its segment: 210 */
    assert_int_equal(a->secs[1], 210);
    assert_true(sa_usums_add_secs(&u.s, &k, 300, (const int64_t[SA_TRES_N]){1000}));
    assert_true(sa_usums_add_secs(&u.s, &k, -1, (const int64_t[SA_TRES_N]){1000}));
    assert_int_equal(sa_usums_get(&u.s, a, 0, 300), 150 + 210 + 110);
    sa_usage_clear(&u);
}

/*
 * Every TRES (-T cpu,mem,gres/gpu,billing): each rate over the segments, a run without
 * GPUs counted for CPU, memory and billing, and the units: core-, GB- (1024 MiB) and
 * billing-hours and -years; percent of a capacity.
 */
static void test_tres(void **state)
{
    const int64_t b[] = {0, 3600, 7200};
    const sa_uacc_t *a;
    sa_usum_t s = {0};
    sa_ukey_t k, cpu;
    (void)state;

    start(b, 3, 0, 7200, 7200);
    u.s.ntres = SA_TRES_N;
    k = key("physics", "alice", "a100");
    cpu = key("physics", "alice", "");
    /* 2 GPUs, 8 CPUs, 32 GiB (32768 MiB), billing 8 (8000 thousandths) over [1800, 7200) */
    assert_true(sa_usums_add_rates(&u.s, &k, (const int64_t[SA_TRES_N]){2, 8, 32768, 8000}, 1800, 7200));
    /* a run without GPUs: 4 CPUs x 3 h = 12 core-hours asked, 2 h of it in the range = 8 core-hours */
    assert_true(sa_usums_add_rates(&u.s, &cpu, (const int64_t[SA_TRES_N]){0, 4, 1024, 4000}, -3600, 7200));
    a = acc_of(k);
    /* GPU: 2 x 1800 = 3600 in [0, 3600), 2 x 3600 = 7200 in [3600, 7200) */
    assert_int_equal(sa_usums_get(&u.s, a, 0, 7200), 10800);
    assert_int_equal(sa_usums_get_tres(&u.s, a, SA_TRES_CPU, 0, 3600), 8 * 1800);
    assert_int_equal(sa_usums_get_tres(&u.s, a, SA_TRES_MEM, 3600, 7200), 32768LL * 3600);
    assert_int_equal(sa_usums_get_tres(&u.s, a, SA_TRES_BILLING, 0, 7200), 8000LL * 5400);
    assert_int_equal(sa_usums_get(&u.s, acc_of(cpu), 0, 7200), 0);
    assert_int_equal(sa_usums_get_tres(&u.s, acc_of(cpu), SA_TRES_CPU, 0, 7200), 4 * 7200);
    /* a day's rollup row adds each TRES at once, in the segment holding t */
    assert_true(sa_usums_add_secs(&u.s, &cpu, 100, (const int64_t[SA_TRES_N]){0, 3600, 0, 0}));
    assert_int_equal(sa_usums_get_tres(&u.s, acc_of(cpu), SA_TRES_CPU, 0, 3600), 4 * 3600 + 3600);
    sa_usage_sum_add(&u, &s, acc_of(k), 0, 7200);
    sa_usage_sum_add(&u, &s, acc_of(cpu), 0, 7200);
    /* CPU: 8 x 1.5 h = 12 + 4 x 2 h = 8 + 1 = 21 core-hours; / 8760 core-years */
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_CPU, SA_UNIT_GPU_HOURS, &s), 21.0);
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_CPU, SA_UNIT_GPU_MINUTES, &s), 21.0 * 60);
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_CPU, SA_UNIT_GPU_YEARS, &s), 21.0 / 8760);
    /* memory: 32 GB x 1.5 h = 48 + 1 GB x 2 h = 2 -> 50 GB-hours */
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_MEM, SA_UNIT_GPU_HOURS, &s), 50.0);
    /* billing: 8 x 1.5 h = 12 + 4 x 2 h = 8 -> 20 billing-hours */
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_BILLING, SA_UNIT_GPU_HOURS, &s), 20.0);
    /* GPUs as before: 2 x 1.5 h = 3 GPU-hours */
    NEAR(sa_usage_tres_in_unit(&u, SA_TRES_GPU, SA_UNIT_GPU_HOURS, &s), 3.0);
    /* percent of a capacity of 2 nodes x 64 CPUs over the 2 h window = 256 core-hours: 21 / 256 = 8.203125 % */
    u.cap_s = calloc(SA_TRES_N, sizeof *u.cap_s);
    u.cap_s[SA_TRES_GPU] = -1;
    u.cap_s[SA_TRES_CPU] = 2 * 64 * 7200.0;
    NEAR(sa_usage_percent(&u, 0, SA_TRES_CPU, &s), 100.0 * 21 / 256);
    NEAR(sa_usage_percent(&u, 0, SA_TRES_GPU, &s), 0.0); /* not known: no figure */
    assert_string_equal(sa_rtres_unit_title(SA_TRES_CPU, SA_UNIT_GPU_YEARS), "core-years");
    assert_string_equal(sa_rtres_unit_title(SA_TRES_MEM, SA_UNIT_GPU_HOURS), "GB-hours");
    {
        sa_rtres_t r;
        assert_true(sa_rtres_parse("GRES/GPU", &r) && r == SA_TRES_GPU);
        assert_true(sa_rtres_parse("billing", &r) && r == SA_TRES_BILLING);
        assert_false(sa_rtres_parse("gres/gpu:a100", &r));
    }
    sa_usage_clear(&u);
}

/* The key index: thousands of keys, each found again at its own record, through growth. */
static void test_key_index(void **state)
{
    const int64_t b[] = {0, 10};
    char name[32];
    (void)state;

    start(b, 2, 0, 10, 10);
    for (int i = 0; i < 3000; i++) {
        sa_ukey_t k;
        snprintf(name, sizeof name, "user%d", i);
        k = key("physics", name, "a100");
        /* user i: i + 1 GPUs over [0, 10) = 10 (i + 1) GPU-seconds */
        assert_true(sa_usums_add(&u.s, &k, i + 1, 0, 10));
    }
    assert_int_equal(u.s.nacc, 3000);
    for (int i = 0; i < 3000; i += 7) {
        sa_ukey_t k;
        uint32_t *slot;
        snprintf(name, sizeof name, "user%d", i);
        k = key("physics", name, "a100");
        slot = sa_ukeyidx_slot(&u.s.idx, &k, u.s.acc, u.s.nacc, sizeof *u.s.acc);
        assert_non_null(slot);
        assert_true(*slot > 0);
        assert_int_equal(u.s.acc[*slot - 1].k.u, k.u);
        assert_int_equal(u.s.acc[*slot - 1].secs[0], 10 * (i + 1));
    }
    /* a key never added has an empty slot */
    {
        sa_ukey_t k = key("physics", "nobody", "a100");
        uint32_t *slot = sa_ukeyidx_slot(&u.s.idx, &k, u.s.acc, u.s.nacc, sizeof *u.s.acc);
        assert_non_null(slot);
        assert_int_equal(*slot, 0);
    }
    /* load factor at most 1/2 */
    assert_true(u.s.idx.map.nslots >= 2 * u.s.nacc);
    sa_usage_clear(&u);
}

/* Sums with RGU weights in thousandths, and every unit. */
static void test_sums_weights_units(void **state)
{
    const int64_t b[] = {0, 10 * HOUR};
    sa_ukey_t ka, kv, kg;
    sa_usum_t s = {0};
    int64_t milli;
    bool guess;
    (void)state;

    start(b, 2, 0, 10 * HOUR, 10 * HOUR);
    ka = key("physics", "alice", "a100");   /* 4.0 RGU in the built-in table */
    kv = key("physics", "alice", "voodoo"); /* no weight */
    kg = key("physics", "alice", "1g.10gb"); /* 1.74, a guess (H100's slice) */
    assert_true(sa_usage_type_weight(&u, ka.t, &milli));
    assert_int_equal(milli, 4000);
    assert_false(sa_usage_type_weight(&u, kv.t, &milli));
    assert_true(sa_usage_weight_on(&u, kg.c, kg.t, &milli, &guess));
    assert_int_equal(milli, 1740);
    assert_true(guess);
    /* a100: 2 GPUs x 3 h = 21,600 s; voodoo: 1 x 1 h = 3,600 s; 1g.10gb: 1 x 2 h = 7,200 s */
    assert_true(sa_usums_add(&u.s, &ka, 2, 0, 3 * HOUR));
    assert_true(sa_usums_add(&u.s, &kv, 1, 0, 1 * HOUR));
    assert_true(sa_usums_add(&u.s, &kg, 1, 0, 2 * HOUR));
    sa_usage_sum_add(&u, &s, acc_of(ka), 0, 10 * HOUR);
    sa_usage_sum_add(&u, &s, acc_of(kv), 0, 10 * HOUR);
    sa_usage_sum_add(&u, &s, acc_of(kg), 0, 10 * HOUR);
    assert_int_equal(s.secs, 21600 + 3600 + 7200); /* 32,400 s = 9 GPU-hours */
    /* 21,600 x 4,000 + 7,200 x 1,740 = 86,400,000 + 12,528,000 = 98,928,000 RGU-milliseconds */
    assert_int_equal(s.rgu_msecs, 98928000);
    assert_int_equal(s.unweighted, 3600);
    assert_int_equal(s.guessed, 7200);
    NEAR(sa_usage_hours(s.secs), 9.0);
    NEAR(sa_usage_in_unit(&u, SA_UNIT_GPU_HOURS, &s), 9.0);
    NEAR(sa_usage_in_unit(&u, SA_UNIT_GPU_MINUTES, &s), 540.0);
    NEAR(sa_usage_in_unit(&u, SA_UNIT_GPU_YEARS, &s), 9.0 / 8760);
    /* 98,928,000 / 1000 / 3600 = 27.48 RGU-hours; / 8760 = 0.0031369863 RGU-years */
    NEAR(sa_usage_rgu_years(&u, &s), 27.48 / 8760);
    NEAR(sa_usage_in_unit(&u, SA_UNIT_RGU_YEARS, &s), 27.48 / 8760);
    assert_string_equal(sa_unit_title(SA_UNIT_GPU_YEARS), "GPU-years");
    assert_string_equal(sa_unit_key(SA_UNIT_RGU_YEARS), "rgu-years");
    assert_string_equal(sa_unit_key(SA_UNIT_GPU_MINUTES), "gpu-minutes");
    assert_string_equal(sa_unit_title(SA_UNIT_GPU_HOURS), "GPU-hours");
    /* the types without a weight that have use, and the guesses over the range */
    {
        sa_strv_t out;
        sa_strv_init(&out);
        sa_usage_unweighted(&u, &out);
        assert_int_equal(out.n, 1);
        assert_string_equal(out.v[0], "voodoo");
        sa_strv_clear(&out);
    }
    sa_usage_guesses(&u);
    assert_int_equal(u.guessed_secs, 7200);
    assert_int_equal(u.guessed.n, 1);
    assert_string_equal(u.guessed.v[0], "1g.10gb");
    sa_usage_clear(&u);
}

/* Groups: sorted by cluster then the --by keys bytewise; a group without use in the window is dropped. */
static void test_groups(void **state)
{
    const int64_t b[] = {0, 100, 200};
    sa_ukey_t k1, k2, k3, k4;
    size_t *order = NULL, ng = 0;
    sa_ugroup_t *g = NULL;
    sa_error_t err;
    (void)state;

    start(b, 3, 100, 200, 200); /* the window is the second segment */
    k1 = key("physics", "bob", "a100");
    k2 = key("physics", "alice", "a100");
    k3 = key("bio", "carol", "h100");
    k4 = key("astro", "dave", "a100");
    assert_true(sa_usums_add(&u.s, &k1, 1, 100, 200)); /* 100 in the window */
    assert_true(sa_usums_add(&u.s, &k2, 2, 50, 150));  /* 2 x 50 = 100 in the window (100 before) */
    assert_true(sa_usums_add(&u.s, &k3, 3, 100, 110)); /* 30 */
    assert_true(sa_usums_add(&u.s, &k4, 1, 0, 100));   /* before the window only */
    assert_true(sa_usage_groups(&u, SA_BY_ACCOUNT, &order, &g, &ng, &err));
    /* astro (0 in the window: dropped), bio 30, physics 100 + 100 = 200 */
    assert_int_equal(ng, 2);
    assert_string_equal(sa_rintern_str(&u.s.names, g[0].k.a), "bio");
    assert_int_equal(g[0].window.secs, 30);
    assert_int_equal(g[0].count, 1);
    assert_string_equal(sa_rintern_str(&u.s.names, g[1].k.a), "physics");
    assert_int_equal(g[1].window.secs, 200);
    assert_int_equal(g[1].count, 2);
    /* within physics the order is total: alice before bob */
    assert_string_equal(sa_rintern_str(&u.s.names, u.s.acc[order[g[1].first]].k.u), "alice");
    assert_string_equal(sa_rintern_str(&u.s.names, u.s.acc[order[g[1].first + 1]].k.u), "bob");
    free(order);
    free(g);
    /* by user: alice 100, bob 100, carol 30 */
    assert_true(sa_usage_groups(&u, SA_BY_USER, &order, &g, &ng, &err));
    assert_int_equal(ng, 3);
    assert_string_equal(sa_rintern_str(&u.s.names, g[0].k.u), "alice");
    assert_int_equal(g[0].window.secs, 100);
    assert_string_equal(sa_rintern_str(&u.s.names, g[2].k.u), "carol");
    free(order);
    free(g);
    /* by GPU type: a100 200, h100 30 */
    assert_true(sa_usage_groups(&u, SA_BY_GPU_TYPE, &order, &g, &ng, &err));
    assert_int_equal(ng, 2);
    assert_int_equal(g[0].window.secs, 200);
    assert_int_equal(g[1].window.secs, 30);
    free(order);
    free(g);
    sa_usage_clear(&u);
}

/* An award of amount (unit) for account on demo over [s, e), bands 80 / 120 %. */
static sa_award_t award(const char *account, const char *type, double amount, sa_award_unit_t unit, int64_t s,
                        int64_t e)
{
    sa_award_t a;
    memset(&a, 0, sizeof a);
    a.cluster = (char *)"demo";
    a.account = (char *)account;
    a.gpu_type = (char *)type;
    a.amount = amount;
    a.unit = unit;
    a.start = s;
    a.end = e;
    a.under_pct = 80;
    a.over_pct = 120;
    return a;
}

/*
 * Awards over a 365-day year from S (day 0) to E (day 365), 1 GPU-year each; the window
 * is days 273 to 304 and the cluster was last observed at day 304, so every award is
 * as of day 304 (to) and its recent rate starts 30 days earlier, at day 274.
 */
static void test_awards(void **state)
{
    const int64_t S = 1767225600; /* 2026-01-01T00:00:00Z */
    const int64_t b[] = {S, S + 273 * DAY, S + 274 * DAY, S + 304 * DAY};
    sa_ukey_t kp, kb, kc, ka;
    sa_uaward_t f;
    sa_award_t a;
    (void)state;

    sa_usage_clear(&u);
    start(b, 4, S + 273 * DAY, S + 304 * DAY, S + 304 * DAY);
    kp = key("physics", "alice", "a100");
    kb = key("bio", "carol", "a100");
    kc = key("chem", "erin", "h100");
    ka = key("astro", "dave", "a100");
    /* physics: 1 GPU from day 0 to 304, and a second one from day 274: 304 + 30 = 334 GPU-days */
    assert_true(sa_usums_add(&u.s, &kp, 1, S, S + 304 * DAY));
    assert_true(sa_usums_add(&u.s, &kp, 1, S + 274 * DAY, S + 304 * DAY));
    /* bio: 1 GPU from day 274 to 304: 30 GPU-days */
    assert_true(sa_usums_add(&u.s, &kb, 1, S + 274 * DAY, S + 304 * DAY));
    /* chem: 2 GPUs from day 0 to 304: 608 GPU-days */
    assert_true(sa_usums_add(&u.s, &kc, 2, S, S + 304 * DAY));
    /* astro: 1 GPU from day 0 to 274: 274 GPU-days, nothing in the last 30 */
    assert_true(sa_usums_add(&u.s, &ka, 1, S, S + 274 * DAY));

    /*
     * physics: used since the start 334/365 = 0.915068 GPU-years; target to date
     * 1 x 304/365 = 0.832877 (elapsed 83.2877 %); 334/304 = 109.87 % of it (under the
     * 120 % band); recent rate 2 GPUs (60 GPU-days in 30 days), so the projection is
     * 334/365 + 2 x 61/365 = 456/365 = 1.249315 GPU-years, 124.93 % of the award:
     * "over pace". In the window (days 273-304): 1 + 2 x 30 = 61 GPU-days = 0.167123.
     */
    a = award("physics", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    assert_int_equal(f.to, S + 304 * DAY);
    assert_int_equal(f.recent_from, S + 274 * DAY);
    assert_int_equal(f.window.secs, 61 * DAY);
    NEAR(f.used_window, 61.0 / 365);
    NEAR(f.used_since, 334.0 / 365);
    NEAR(f.target, 304.0 / 365);
    NEAR(f.elapsed_pct, 100.0 * 304 / 365);
    assert_true(f.has_pct);
    NEAR(f.pct, 100.0 * 334 / 304);
    NEAR(f.projected, 456.0 / 365);
    NEAR(f.projected_pct, 100.0 * 456 / 365);
    assert_string_equal(f.status, "over pace");

    /* bio: 30/304 = 9.87 % of the target, projected 30/365 + 61/365 = 91/365 = 24.93 %: "under" */
    a = award("bio", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    NEAR(f.pct, 100.0 * 30 / 304);
    NEAR(f.projected_pct, 100.0 * 91 / 365);
    assert_string_equal(f.status, "under");

    /* chem: 608/304 = 200 % of the target (over the 120 % band): "over" */
    a = award("chem", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    NEAR(f.pct, 200.0);
    assert_string_equal(f.status, "over");

    /* astro: 274/304 = 90.13 % (inside 80-120), nothing recent: projected 274/365 = 75.07 %: "on track" */
    a = award("astro", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    NEAR(f.pct, 100.0 * 274 / 304);
    NEAR(f.projected, 274.0 / 365);
    assert_string_equal(f.status, "on track");

    /* an award that starts at the end of the window: not started, no percentage */
    a = award("physics", NULL, 1.0, SA_AWARD_GPU_YEARS, S + 304 * DAY, S + 669 * DAY);
    sa_usage_award(&u, &a, &f);
    assert_int_equal(f.to, S + 304 * DAY);
    assert_false(f.has_pct);
    NEAR(f.used_since, 0.0);
    assert_string_equal(f.status, "not started");

    /*
     * In RGU-years: physics' a100 weighs 4.0, so 334/365 x 4 = 3.660274 RGU-years used
     * against a 4 RGU-year award: target 4 x 304/365 = 3.331507, the same 109.87 %.
     */
    a = award("physics", NULL, 4.0, SA_AWARD_RGU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    NEAR(f.used_since, 4.0 * 334 / 365);
    NEAR(f.target, 4.0 * 304 / 365);
    NEAR(f.pct, 100.0 * 334 / 304);

    /* a type glob, case-insensitive: "A100*" covers physics' a100, "h100*" does not */
    a = award("physics", "A100*", 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    assert_true(sa_usage_award_matches(&u, &a, acc_of(kp)));
    assert_false(sa_usage_award_matches(&u, &a, acc_of(kb))); /* another account */
    a = award("chem", "h100*", 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    assert_true(sa_usage_award_matches(&u, &a, acc_of(kc)));
    a = award("chem", "a100*", 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    assert_false(sa_usage_award_matches(&u, &a, acc_of(kc)));
    a = award("physics", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    a.cluster = (char *)"other";
    assert_false(sa_usage_award_matches(&u, &a, acc_of(kp)));
    {
        /* the sum of what an award covers: physics over days 274-304 = 60 GPU-days */
        sa_usum_t s;
        a = award("physics", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
        s = sa_usage_award_sum(&u, &a, S + 274 * DAY, S + 304 * DAY);
        assert_int_equal(s.secs, 60 * DAY);
        NEAR(sa_usage_award_units(&u, &a, &s), 60.0 / 365);
    }

    /* the cluster observed last at day 290: the award is as of day 290, recent from day 260 */
    u.as_of[0] = S + 290 * DAY;
    a = award("astro", NULL, 1.0, SA_AWARD_GPU_YEARS, S, S + 365 * DAY);
    sa_usage_award(&u, &a, &f);
    assert_int_equal(f.to, S + 290 * DAY);
    assert_int_equal(f.recent_from, S + 260 * DAY);
    NEAR(f.target, 290.0 / 365);
    sa_usage_clear(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_key_index),
        cmocka_unit_test(test_tres),
        cmocka_unit_test(test_sums_weights_units),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_awards),
    };
    return tu_run_group_tests("usage_calc", tests, NULL, NULL);
}
