/*
 * test_tres.c - ingest/sa_tres.c: Slurm's TRES and GRES strings (AllocTRES, ReqTRES,
 * tres_alloc_str, gres, gres_used, tres_per_node): GPUs typed and untyped (never counted
 * twice), MIG profiles, memory units, billing, the entries not modelled kept as printed,
 * usage strings; malformed ones refused with a one-line message. Inputs are taken from the
 * real samples where they occur there (the sample is named next to the case).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_tres.h"

/* ---- helpers ------------------------------------------------------------------ */

/* Parses a TRES string that must be valid. */
static void tres_ok(const char *s, bool usage, sa_tres_t *t)
{
    sa_error_t err;
    sa_error_clear(&err);
    sa_tres_init(t);
    if (!sa_tres_parse(s, usage, t, &err))
        fail_msg("TRES '%s': %s", s, err.message);
}

/* A TRES string that must fail with an error containing want. */
static void tres_bad(const char *s, const char *want)
{
    sa_error_t err;
    sa_tres_t t;
    sa_error_clear(&err);
    sa_tres_init(&t);
    if (sa_tres_parse(s, false, &t, &err))
        fail_msg("TRES '%s' parsed", s);
    if (!strstr(err.message, want))
        fail_msg("TRES '%s': error '%s' lacks '%s'", s, err.message, want);
    assert_null(strchr(err.message, '\n'));
    sa_tres_clear(&t);
}

static const char *other(const sa_tres_t *t, const char *name)
{
    json_t *v = t->other ? json_object_get(t->other, name) : NULL;
    return v ? json_string_value(v) : NULL;
}

/* Parses GRES that must be valid into g (initialised here). */
static void gres_ok(const char *s, bool request, sa_gpus_t *g)
{
    sa_error_t err;
    sa_error_clear(&err);
    sa_gpus_init(g);
    if (!sa_gres_parse_gpus(s, request, g, &err))
        fail_msg("GRES '%s': %s", s, err.message);
}

/* ---- TRES ---------------------------------------------------------------------- */

/* local-sacct-P-D: AllocTRES of job 7, sacct's alphabetical order. */
static void test_tres_sacct_gpu_typed_and_untyped(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=500M,node=1", false, &t);
    assert_int_equal(t.cpu, 1);
    assert_int_equal(t.mem_mb, 500);
    assert_int_equal(t.node, 1);
    assert_true(t.billing == 1.0);
    assert_int_equal(t.gpu_total, 2); /* not 4 */
    assert_int_equal(t.gpus.n, 1);
    assert_int_equal(sa_gpus_get(&t.gpus, "a100"), 2);
    assert_int_equal(sa_gpus_total(&t.gpus), 2);
    assert_null(t.other);
    sa_tres_clear(&t);
}

/* squeue order (TRES id order), same job. */
static void test_tres_squeue_order(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("cpu=1,mem=300M,node=1,billing=1,gres/gpu=1,gres/gpu:a100=1", false, &t);
    assert_int_equal(t.gpu_total, 1);
    assert_int_equal(sa_gpus_get(&t.gpus, "a100"), 1);
    assert_int_equal(t.mem_mb, 300);
    sa_tres_clear(&t);
}

static void test_tres_untyped_only(void **state)
{
    sa_tres_t t;
    (void)state;
    /* xdmod ubhpc: alloctres "gres/gpu=2" */
    tres_ok("gres/gpu=2", false, &t);
    assert_int_equal(t.gpu_total, 2);
    assert_int_equal(sa_gpus_get(&t.gpus, ""), 2);
    assert_int_equal(t.cpu, SA_UNSET);
    assert_int_equal(t.mem_mb, SA_UNSET);
    assert_true(t.billing < 0);
    sa_tres_clear(&t);
}

static void test_tres_typed_only_and_remainder(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("gres/gpu:h100=1,gres/gpu:h200=3", false, &t);
    assert_int_equal(t.gpu_total, 4);
    assert_int_equal(sa_gpus_get(&t.gpus, "h100"), 1);
    assert_int_equal(sa_gpus_get(&t.gpus, "h200"), 3);
    sa_tres_clear(&t);

    /* typed entries covering only part of the total: the rest is untyped */
    tres_ok("gres/gpu=4,gres/gpu:1g.10gb=3", false, &t);
    assert_int_equal(t.gpu_total, 4);
    assert_int_equal(sa_gpus_get(&t.gpus, "1g.10gb"), 3);
    assert_int_equal(sa_gpus_get(&t.gpus, ""), 1);
    sa_tres_clear(&t);
}

static void test_tres_mem_units(void **state)
{
    static const struct {
        const char *s;
        int64_t mib;
    } cases[] = {
        {"mem=62.50G", 64000},       {"mem=16G", 16384},   {"mem=500000M", 500000}, {"mem=4000", 4000},
        {"mem=12248K", 12},          {"mem=1536K", 2},     {"mem=1K", 0},           {"mem=1T", 1048576},
        {"mem=0.5P", 536870912},     {"mem=199G", 203776}, {"mem=514404M", 514404},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sa_tres_t t;
        tres_ok(cases[i].s, false, &t);
        if (t.mem_mb != cases[i].mib)
            fail_msg("%s: %lld MiB, want %lld", cases[i].s, (long long)t.mem_mb, (long long)cases[i].mib);
        sa_tres_clear(&t);
    }
}

/* Entries not modelled are kept as text. */
static void test_tres_other_kept(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("cpu=2,energy=0,fs/disk=53765,license/matlab=1,gres/gpumem=20500736K,gres/shard=2,bb/x=1", false, &t);
    assert_int_equal(t.cpu, 2);
    assert_string_equal(other(&t, "energy"), "0");
    assert_string_equal(other(&t, "fs/disk"), "53765");
    assert_string_equal(other(&t, "license/matlab"), "1");
    assert_string_equal(other(&t, "gres/gpumem"), "20500736K");
    assert_string_equal(other(&t, "gres/shard"), "2");
    assert_int_equal(t.gpu_total, 0);
    sa_tres_clear(&t);
}

/* local-sacct-p usage strings and peregrine's "cpu=7-17:04:32". */
static void test_tres_usage(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("cpu=00:00:00,energy=0,fs/disk=53765,mem=12248K,pages=2,vmem=221228K", true, &t);
    assert_int_equal(t.cpu, SA_UNSET);
    assert_string_equal(other(&t, "cpu"), "00:00:00");
    assert_int_equal(t.mem_mb, 12);
    assert_string_equal(other(&t, "vmem"), "221228K");
    sa_tres_clear(&t);

    tres_ok("cpu=7-17:04:32,energy=0,fs/disk=651343,mem=12653376K,pages=2432,vmem=432568K", true, &t);
    assert_string_equal(other(&t, "cpu"), "7-17:04:32");
    assert_int_equal(t.mem_mb, 12357);
    sa_tres_clear(&t);

    /* GPUs in a usage string are usage, not an allocation */
    tres_ok("gres/gpu=1,gres/gpuutil=90,gres/gpumem=20500736K", true, &t);
    assert_int_equal(t.gpu_total, 0);
    assert_string_equal(other(&t, "gres/gpu"), "1");
    assert_string_equal(other(&t, "gres/gpuutil"), "90");
    sa_tres_clear(&t);
}

static void test_tres_empty(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("", false, &t);
    assert_true(sa_tres_is_empty(&t));
    sa_tres_clear(&t);
    tres_ok(NULL, false, &t);
    assert_true(sa_tres_is_empty(&t));
    sa_tres_clear(&t);
}

static void test_tres_error_syntax(void **state)
{
    (void)state;
    tres_bad("cpu", "cpu");
    tres_bad("cpu=1,,mem=2G", "expected name=value");
    tres_bad("=5", "expected name=value");
    tres_bad("cpu=", "expected name=value");
}

static void test_tres_error_counts(void **state)
{
    (void)state;
    tres_bad("cpu=abc", "cpu=abc");
    tres_bad("gres/gpu=-3", "gres/gpu");
    tres_bad("gres/gpu:a100=x", "gres/gpu:a100");
    tres_bad("cpu=9007199254740993", "2^53");
    tres_bad("node=1.5", "node");
    tres_bad("billing=1.2.3", "billing");
}

static void test_tres_error_mem(void **state)
{
    (void)state;
    tres_bad("mem=12Q", "mem");
    tres_bad("mem=G", "mem");
    tres_bad("mem=12GB", "mem");
    tres_bad("mem=-1G", "mem");
    tres_bad("mem=99999999999P", "mem");
}

/* MIG profiles are types (restd-nodes-v0040_23.11.1_talapas tres "gres/gpu=21"). */
static void test_tres_mig_types(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("cpu=26,mem=501632M,gres/gpu=9,gres/gpu:1g.10gb=9", false, &t);
    assert_int_equal(t.gpu_total, 9);
    assert_int_equal(t.gpus.n, 1);
    assert_int_equal(sa_gpus_get(&t.gpus, "1g.10gb"), 9);
    assert_int_equal(t.mem_mb, 501632);
    sa_tres_clear(&t);
}

static void test_tres_billing_decimal(void **state)
{
    sa_tres_t t;
    (void)state;
    tres_ok("billing=24,cpu=1,mem=199G,node=1", false, &t); /* habrok ReqTRES */
    assert_true(t.billing == 24.0);
    assert_int_equal(t.mem_mb, 203776);
    sa_tres_clear(&t);
    tres_ok("billing=2.5", false, &t);
    assert_true(t.billing == 2.5);
    sa_tres_clear(&t);
}

/* ---- GRES ---------------------------------------------------------------------- */

static void test_gres_node_strings(void **state)
{
    sa_gpus_t g;
    (void)state;
    /* restd-nodes-v0040_23.11.1_talapas: typed with socket suffix, MIG profile */
    gres_ok("gpu:nvidia_a100_80gb_pcie:1(S:1)", false, &g);
    assert_int_equal(sa_gpus_get(&g, "nvidia_a100_80gb_pcie"), 1);
    sa_gpus_clear(&g);
    gres_ok("gpu:1g.10gb:21(S:1)", false, &g);
    assert_int_equal(sa_gpus_get(&g, "1g.10gb"), 21);
    sa_gpus_clear(&g);
    gres_ok("gpu:1g.10gb:9(IDX:0-3,5-9)", false, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(sa_gpus_get(&g, "1g.10gb"), 9);
    sa_gpus_clear(&g);
    /* restd-nodes-v0040_23.11.10: two types */
    gres_ok("gpu:h100:2,gpu:h200:4", false, &g);
    assert_int_equal(sa_gpus_total(&g), 6);
    assert_int_equal(sa_gpus_get(&g, "h200"), 4);
    sa_gpus_clear(&g);
    /* restd-node-v0044 untyped */
    gres_ok("gpu:4", false, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(sa_gpus_get(&g, ""), 4);
    sa_gpus_clear(&g);
}

static void test_gres_zero_and_none(void **state)
{
    static const char *const none[] = {"gpu:0,tpu:0", "gpu:h100:0(IDX:N/A)", "gpu:h200:0(IDX:)", "(null)",
                                       "N/A", "", "tpu:8,shard:4"};
    sa_gpus_t g;
    (void)state;
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        gres_ok(none[i], false, &g);
        if (g.n != 0)
            fail_msg("GRES '%s' gave %zu GPU types", none[i], g.n);
        sa_gpus_clear(&g);
    }
    gres_ok("gpu:h100:0(IDX:N/A),gpu:h200:2(IDX:0-1)", false, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(sa_gpus_get(&g, "h200"), 2);
    sa_gpus_clear(&g);
}

static void test_gres_request_prefixes(void **state)
{
    sa_gpus_t g;
    (void)state;
    gres_ok("gres:gpu:a100:2", true, &g); /* 22.05 tres_per_node */
    assert_int_equal(sa_gpus_get(&g, "a100"), 2);
    sa_gpus_clear(&g);
    gres_ok("gres/gpu:h100:1,gres/gpu:h200:1", true, &g); /* 23.11 */
    assert_int_equal(sa_gpus_get(&g, "h100"), 1);
    assert_int_equal(sa_gpus_get(&g, "h200"), 1);
    sa_gpus_clear(&g);
    gres_ok("gres/gpu=2", true, &g); /* 24.05+ tres_per_task */
    assert_int_equal(sa_gpus_get(&g, ""), 2);
    sa_gpus_clear(&g);
    gres_ok("gres/gpu:2", true, &g); /* 23.11 tres_per_task */
    assert_int_equal(sa_gpus_get(&g, ""), 2);
    sa_gpus_clear(&g);
    gres_ok("gres:gpu:8", true, &g);
    assert_int_equal(sa_gpus_get(&g, ""), 8);
    sa_gpus_clear(&g);
}

static void test_gres_request_defaults(void **state)
{
    sa_gpus_t g;
    (void)state;
    gres_ok("gres/gpu:h100", true, &g); /* no count: one */
    assert_int_equal(sa_gpus_get(&g, "h100"), 1);
    sa_gpus_clear(&g);
    gres_ok("gres/gpu", true, &g);
    assert_int_equal(sa_gpus_get(&g, ""), 1);
    sa_gpus_clear(&g);
    gres_ok("gres/gpu:a100=3", true, &g);
    assert_int_equal(sa_gpus_get(&g, "a100"), 3);
    sa_gpus_clear(&g);
}

/* gres_used with MIG profiles and index lists containing commas. */
static void test_gres_mig_used(void **state)
{
    sa_gpus_t g;
    (void)state;
    gres_ok("gpu:1g.10gb:9(IDX:0-3,5-9),gpu:3g.40gb:1(IDX:10)", false, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(sa_gpus_get(&g, "1g.10gb"), 9);
    assert_int_equal(sa_gpus_get(&g, "3g.40gb"), 1);
    assert_int_equal(sa_gpus_total(&g), 10);
    sa_gpus_clear(&g);
    gres_ok("gpu:nvidia_h100_80gb_hbm3:8(S:0-1)", false, &g);
    assert_int_equal(sa_gpus_get(&g, "nvidia_h100_80gb_hbm3"), 8);
    sa_gpus_clear(&g);
}

static void test_gres_errors(void **state)
{
    static const char *const bad[] = {"gpu:a100:2(S:0", "gpu:a100:x:2", "gpu::2", "gpu:", "gpu:a100:2)x",
                                      "gpu:a:b:c", "gpu,,gpu"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sa_gpus_t g;
        sa_error_t err;
        sa_gpus_init(&g);
        sa_error_clear(&err);
        if (sa_gres_parse_gpus(bad[i], false, &g, &err))
            fail_msg("GRES '%s' parsed", bad[i]);
        assert_non_null(strstr(err.message, "GRES"));
        sa_gpus_clear(&g);
    }
}

/* ---- sizes, usage entries, the GPU rule ------------------------------------------------- */

/* MaxRSS-style sizes to bytes, rounded to the nearest (K M G T P are powers of 1024, a bare number bytes). */
static void test_size_bytes(void **state)
{
    static const struct {
        const char *s;
        int64_t bytes;
    } ok[] = {
        {"1294440K", 1294440LL * 1024}, {"0.31M", 325059}, /* 325058.56 */
        {"85399.46K", 87449047},        /* 87449047.04 */
        {"0", 0},                       {"12", 12},
        {"1G", 1073741824LL},           {"2T", 2LL << 40},
        {"", SA_UNSET},
    };
    static const char *const bad[] = {"abc", "12X", "K"};
    sa_error_t err;
    int64_t v;
    (void)state;

    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (!sa_size_bytes_parse(ok[i].s, &v, &err))
            fail_msg("'%s': %s", ok[i].s, err.message);
        assert_int_equal(v, ok[i].bytes);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(sa_size_bytes_parse(bad[i], &v, &err));
        assert_int_equal(v, SA_UNSET);
        assert_non_null(strstr(err.message, bad[i]));
    }
}

/* One entry of a TRESUsage* string: a size, a percentage or a count; none: SA_UNSET. */
static void test_usage_entry(void **state)
{
    const char *u = "cpu=15:33:58,energy=0,fs/disk=2048,gres/gpuutil=90,mem=1294440K,vmem=2G";
    sa_error_t err;
    int64_t v;
    (void)state;

    assert_true(sa_tres_usage_get(u, "gres/gpuutil", &v, &err));
    assert_int_equal(v, 90);
    assert_true(sa_tres_usage_get(u, "mem", &v, &err));
    assert_int_equal(v, 1294440LL * 1024);
    assert_true(sa_tres_usage_get(u, "fs/disk", &v, &err));
    assert_int_equal(v, 2048);
    assert_true(sa_tres_usage_get(u, "gres/gpumem", &v, &err));
    assert_int_equal(v, SA_UNSET);
    assert_true(sa_tres_usage_get(u, "me", &v, &err)); /* a prefix is not the entry */
    assert_int_equal(v, SA_UNSET);
    assert_true(sa_tres_usage_get("", "mem", &v, &err));
    assert_int_equal(v, SA_UNSET);
    assert_false(sa_tres_usage_get(u, "cpu", &v, &err)); /* a time, not a size */
    assert_non_null(strstr(err.message, "cpu"));
}

/*
 * The one TRES GPU rule, entry by entry: typed entries are the split; the untyped total
 * wins, the shortfall under ""; without it the typed sum is the total; a typed sum past
 * 2^53 is refused naming where.
 */
static void test_gpu_rule(void **state)
{
    sa_tres_gpus_t b;
    sa_tres_t t;
    sa_error_t err;
    (void)state;

    sa_tres_init(&t);
    sa_tres_gpus_init(&b);
    assert_true(sa_tres_gpus_typed(&b, &t, "a100", 2, "x", &err));
    sa_tres_gpus_untyped(&b, 4);
    assert_true(sa_tres_gpus_typed(&b, &t, "h100", 1, "x", &err));
    assert_true(sa_tres_gpus_finish(&b, &t, &err));
    assert_int_equal(t.gpu_total, 4);
    assert_int_equal(sa_gpus_get(&t.gpus, "a100"), 2);
    assert_int_equal(sa_gpus_get(&t.gpus, "h100"), 1);
    assert_int_equal(sa_gpus_get(&t.gpus, ""), 1);
    sa_tres_clear(&t);

    sa_tres_gpus_init(&b);
    assert_true(sa_tres_gpus_typed(&b, &t, "a100", 2, "x", &err));
    assert_true(sa_tres_gpus_typed(&b, &t, "a100", 1, "x", &err));
    assert_true(sa_tres_gpus_finish(&b, &t, &err));
    assert_int_equal(t.gpu_total, 3);
    assert_int_equal(t.gpus.n, 1);
    sa_tres_clear(&t);

    sa_tres_gpus_init(&b);
    assert_true(sa_tres_gpus_typed(&b, &t, "a100", SA_JOB_ID_MAX, "job 7 AllocTRES", &err));
    assert_false(sa_tres_gpus_typed(&b, &t, "h100", 1, "job 7 AllocTRES", &err));
    assert_non_null(strstr(err.message, "job 7 AllocTRES: GPU count sum out of range"));
    sa_tres_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tres_sacct_gpu_typed_and_untyped),
        cmocka_unit_test(test_tres_squeue_order),
        cmocka_unit_test(test_tres_untyped_only),
        cmocka_unit_test(test_tres_typed_only_and_remainder),
        cmocka_unit_test(test_tres_mem_units),
        cmocka_unit_test(test_tres_other_kept),
        cmocka_unit_test(test_tres_usage),
        cmocka_unit_test(test_tres_empty),
        cmocka_unit_test(test_tres_error_syntax),
        cmocka_unit_test(test_tres_error_counts),
        cmocka_unit_test(test_tres_error_mem),
        cmocka_unit_test(test_tres_mig_types),
        cmocka_unit_test(test_tres_billing_decimal),
        cmocka_unit_test(test_gres_node_strings),
        cmocka_unit_test(test_gres_zero_and_none),
        cmocka_unit_test(test_gres_request_prefixes),
        cmocka_unit_test(test_gres_request_defaults),
        cmocka_unit_test(test_gres_mig_used),
        cmocka_unit_test(test_gres_errors),
        cmocka_unit_test(test_size_bytes),
        cmocka_unit_test(test_usage_entry),
        cmocka_unit_test(test_gpu_rule),
    };
    return tu_run_group_tests("tres", tests, NULL, NULL);
}
