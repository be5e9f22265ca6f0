/*
 * test_strings.c - Slurm's string languages (ingest/sa_tres.h, ingest/sa_slurmtext.h): TRES and GRES
 * strings, hostlist expressions, sacct text dates and durations, text node states,
 * integers and exit codes. Inputs are taken from the real samples where they occur
 * there (the sample is named next to the case).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_hostlist.h"
#include "sa_slurmtext.h"
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

/* Expands a hostlist that must be valid; returns the names joined by ' '. */
static char *hosts(const char *expr, size_t *n)
{
    sa_strv_t sv;
    sa_error_t err;
    size_t len = 1;
    char *out;

    sa_strv_init(&sv);
    sa_error_clear(&err);
    if (!sa_hostlist_expand(expr, 0, &sv, &err))
        fail_msg("hostlist '%s': %s", expr, err.message);
    for (size_t i = 0; i < sv.n; i++)
        len += strlen(sv.v[i]) + 1;
    out = calloc(1, len);
    for (size_t i = 0; i < sv.n; i++) {
        if (i)
            strcat(out, " ");
        strcat(out, sv.v[i]);
    }
    if (n)
        *n = sv.n;
    sa_strv_clear(&sv);
    return out;
}

static void hosts_eq(const char *expr, const char *want)
{
    char *got = hosts(expr, NULL);
    if (strcmp(got, want) != 0)
        fail_msg("hostlist '%s': got '%s', want '%s'", expr, got, want);
    free(got);
}

/* A hostlist that must fail with an error containing want. */
static void hosts_bad(const char *expr, size_t max, const char *want)
{
    sa_strv_t sv;
    sa_error_t err;

    sa_strv_init(&sv);
    sa_error_clear(&err);
    if (sa_hostlist_expand(expr, max, &sv, &err))
        fail_msg("hostlist '%s' expanded to %zu names", expr, sv.n);
    if (!strstr(err.message, want))
        fail_msg("hostlist '%s': error '%s' lacks '%s'", expr, err.message, want);
    sa_strv_clear(&sv);
}

static int64_t when(const char *s)
{
    sa_error_t err;
    int64_t t;
    sa_error_clear(&err);
    if (!sa_time_parse_text(s, &t, &err))
        fail_msg("date '%s': %s", s, err.message);
    return t;
}

static int64_t secs(const char *s)
{
    sa_error_t err;
    int64_t t;
    sa_error_clear(&err);
    if (!sa_duration_parse(s, &t, &err))
        fail_msg("duration '%s': %s", s, err.message);
    return t;
}

/* Node state text -> "BASE+FLAGS" (static buffer of tu_state). */
static const char *nstate(const char *s)
{
    static char buf[256];
    sa_state_t st;
    sa_error_t err;

    sa_state_init(&st);
    sa_error_clear(&err);
    if (!sa_node_state_parse_text(s, &st, &err))
        fail_msg("node state '%s': %s", s, err.message);
    snprintf(buf, sizeof buf, "%s", tu_state(&st));
    sa_state_clear(&st);
    return buf;
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

/* ---- hostlists -------------------------------------------------------------------- */

static void test_hostlist_basic(void **state)
{
    (void)state;
    hosts_eq("cn-a[001-004,010]", "cn-a001 cn-a002 cn-a003 cn-a004 cn-a010");
    hosts_eq("node1,node2", "node1 node2");
    hosts_eq("vm", "vm");
    hosts_eq("omni[2-3]", "omni2 omni3");
    hosts_eq("n[8-11]", "n8 n9 n10 n11");
    hosts_eq("n[08-11]", "n08 n09 n10 n11");
    hosts_eq("rack[1-2]x", "rack1x rack2x");
}

/* The low end's width is the zero padding (Slurm's rule). */
static void test_hostlist_padding(void **state)
{
    (void)state;
    hosts_eq("n[9-10]", "n9 n10");
    hosts_eq("n[09-10]", "n09 n10");
    hosts_eq("n[0010-0011]", "n0010 n0011");
    hosts_eq("n[007]", "n007");
    hosts_eq("cn[004-006]", "cn004 cn005 cn006");
}

static void test_hostlist_product(void **state)
{
    (void)state;
    hosts_eq("gpu[1-2]-ib[0-1]", "gpu1-ib0 gpu1-ib1 gpu2-ib0 gpu2-ib1");
    hosts_eq("r[1,3]n[01-02]", "r1n01 r1n02 r3n01 r3n02");
}

/* xdmod ubhpc NodeList: brackets and plain names mixed. */
static void test_hostlist_xdmod(void **state)
{
    size_t n;
    char *got;
    (void)state;
    hosts_eq("d09n04s[01-02],d13n[03,05,07-08,16]", "d09n04s01 d09n04s02 d13n03 d13n05 d13n07 d13n08 d13n16");
    got = hosts("d07n07s02,d07n19s02,d07n25s01,d07n28s01,d07n29s01,d07n31s02,d07n38s02,d09n04s[01-02],"
                "d09n05s02,d09n06s01,d09n07s01,d09n08s[01-02],d09n09s01,d09n11s[01-02],d09n13s01,d09n14s01,"
                "d09n15s01,d09n16s01,d09n17s01,d09n24s01,d09n25s02,d09n28s01,d09n35s01,d09n38s02,"
                "d13n[03,05,07-08,16]",
                &n);
    assert_int_equal(n, 32); /* NNodes of that row */
    free(got);
}

static void test_hostlist_none(void **state)
{
    size_t n = 99;
    char *got;
    (void)state;
    got = hosts("None assigned", &n);
    assert_int_equal(n, 0);
    free(got);
    got = hosts("", &n);
    assert_int_equal(n, 0);
    free(got);
    got = hosts("(null)", &n);
    assert_int_equal(n, 0);
    free(got);
}

static void test_hostlist_error_brackets(void **state)
{
    (void)state;
    hosts_bad("n[1-3", 0, "unbalanced");
    hosts_bad("n1-3]", 0, "unbalanced");
    hosts_bad("n[[1-3]]", 0, "nested");
    hosts_bad("a[1-2],b[3", 0, "unbalanced");
}

static void test_hostlist_error_ranges(void **state)
{
    (void)state;
    hosts_bad("n[5-2]", 0, "reversed");
    hosts_bad("n[]", 0, "bad range");
    hosts_bad("n[a-b]", 0, "bad range");
    hosts_bad("n[1,,2]", 0, "bad range");
    hosts_bad("n[1-]", 0, "bad range");
    hosts_bad("n[1-2-3]", 0, "bad range");
}

static void test_hostlist_error_huge(void **state)
{
    (void)state;
    hosts_bad("n[0-999999999]", 0, "more than 1000000 names");
    hosts_bad("n[0-999999999999999999]", 0, "more than 1000000 names");
    hosts_bad("n[0-99]x[0-99]", 1000, "more than 1000 names");
    hosts_bad("a[1-600],b[1-600]", 1000, "more than 1000 names");
}

/* Exactly max_hosts names is allowed; blanks separate hosts like commas. */
static void test_hostlist_limit_and_blanks(void **state)
{
    sa_strv_t sv;
    sa_error_t err;
    (void)state;
    sa_strv_init(&sv);
    assert_true(sa_hostlist_expand("n[1-10]x[1-100]", 1000, &sv, &err));
    assert_int_equal(sv.n, 1000);
    assert_string_equal(sv.v[999], "n10x100");
    sa_strv_clear(&sv);
    hosts_eq("a b\tc,d", "a b c d");
}

/* ---- dates, durations, numbers ----------------------------------------------------- */

static void test_time_text(void **state)
{
    (void)state;
    /* local-sacct-P-D: job 1 Submit */
    assert_int_equal(when("2026-11-25T21:37:49"), 1795642669);
    assert_int_equal(when("2026-11-25T21:37:49Z"), 1795642669);
    assert_int_equal(when("1970-01-01T00:00:00"), 0);
    assert_int_equal(when("2019-07-31T22:29:13"), 1564612153);
    assert_int_equal(when("2024-02-29T12:00:00"), 1709208000);
}

/* "Unknown" (0 / INFINITE) and "None" (NO_VAL, 22.05+) mean not set. */
static void test_time_text_unset_words(void **state)
{
    int64_t t = 0;
    (void)state;
    assert_int_equal(when("Unknown"), SA_UNSET);
    assert_int_equal(when("None"), SA_UNSET);
    assert_int_equal(when("N/A"), SA_UNSET);
    assert_int_equal(when(""), SA_UNSET);
    assert_true(sa_time_parse_text(NULL, &t, NULL));
    assert_int_equal(t, SA_UNSET);
}

static void test_time_text_errors(void **state)
{
    static const char *const bad[] = {"yesterday", "2026-13-01T00:00:00", "2026-02-30T00:00:00", "2026-11-25",
                                      "2026-11-25 21:37:49", " 2026-11-25T21:37:49", "2026-11-25T25:00:00",
                                      "2026-11-25T21:37:49+01", "2023-02-29T00:00:00"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_time_parse_text(bad[i], &t, &err))
            fail_msg("date '%s' parsed as %lld", bad[i], (long long)t);
        assert_non_null(strstr(err.message, "expected a date"));
    }
}

static void test_duration_elapsed(void **state)
{
    (void)state;
    assert_int_equal(secs("00:00:03"), 3);
    assert_int_equal(secs("00:10:00"), 600);
    assert_int_equal(secs("1-04:33:44"), 102824);
    assert_int_equal(secs("163-00:18:41"), 163 * 86400 + 18 * 60 + 41); /* habrok TotalCPU */
}

/* TotalCPU / UserCPU below an hour: MM:SS.mmm, the fraction dropped. */
static void test_duration_fraction(void **state)
{
    (void)state;
    assert_int_equal(secs("00:15.057"), 15);  /* aalto TotalCPU */
    assert_int_equal(secs("01:53.961"), 113); /* peregrine */
    assert_int_equal(secs("23:08.358"), 1388);
    assert_int_equal(secs("00:00.001"), 0);
}

static void test_duration_days(void **state)
{
    (void)state;
    assert_int_equal(secs("3-00:00:00"), 259200);
    assert_int_equal(secs("5-00:00:00"), 432000);
    assert_int_equal(secs("2-12"), 2 * 86400 + 12 * 3600);
    assert_int_equal(secs("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
    assert_int_equal(secs("30"), 1800); /* Slurm: a bare number is minutes */
}

static void test_duration_specials(void **state)
{
    (void)state;
    assert_int_equal(secs("UNLIMITED"), SA_INFINITE);
    assert_int_equal(secs("Partition_Limit"), SA_UNSET);
    assert_int_equal(secs("INVALID"), SA_UNSET);
    assert_int_equal(secs(""), SA_UNSET);
}

static void test_duration_errors(void **state)
{
    static const char *const bad[] = {"abc", "1:2:3:4", "-5", "1-", "00:-1", "1.5:00", "1-00:00.5", "12:", ":30"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t;
        sa_error_t err;
        sa_error_clear(&err);
        if (sa_duration_parse(bad[i], &t, &err))
            fail_msg("duration '%s' parsed as %lld", bad[i], (long long)t);
        assert_non_null(strstr(err.message, "duration"));
    }
}

static void test_parse_int64(void **state)
{
    int64_t v = 0;
    (void)state;
    assert_true(sa_parse_int64("0", &v));
    assert_int_equal(v, 0);
    assert_true(sa_parse_int64("9223372036854775807", &v));
    assert_true(v == INT64_MAX);
    assert_true(sa_parse_int64("-42", &v));
    assert_int_equal(v, -42);
    assert_false(sa_parse_int64("9223372036854775808", &v));
    assert_false(sa_parse_int64("99999999999999999999999", &v));
    assert_false(sa_parse_int64("", &v));
    assert_false(sa_parse_int64("12abc", &v));
    assert_false(sa_parse_int64(" 12", &v));
    assert_false(sa_parse_int64("0x10", &v));
    assert_false(sa_parse_int64(NULL, &v));
}

static void test_exitcode(void **state)
{
    int rc = -1, sig = -1;
    sa_error_t err;
    (void)state;
    assert_true(sa_exitcode_parse_text("0:15", &rc, &sig, &err));
    assert_int_equal(rc, 0);
    assert_int_equal(sig, 15);
    assert_true(sa_exitcode_parse_text("3:0", &rc, &sig, &err));
    assert_int_equal(rc, 3);
    assert_int_equal(sig, 0);
    assert_true(sa_exitcode_parse_text("0:9", &rc, &sig, &err));
    assert_int_equal(sig, 9);
    assert_false(sa_exitcode_parse_text("3", &rc, &sig, &err));
    assert_non_null(strstr(err.message, "rc:signal"));
    assert_false(sa_exitcode_parse_text("a:b", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("1:2:3", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("256:0", &rc, &sig, &err));
    assert_false(sa_exitcode_parse_text("", &rc, &sig, &err));
}

/* ---- node states ------------------------------------------------------------------- */

static void test_node_state_scontrol(void **state)
{
    (void)state;
    /* local-scontrol-show-node-o */
    assert_string_equal(nstate("UNKNOWN+DRAIN+NOT_RESPONDING"), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_string_equal(nstate("UNKNOWN+MAINTENANCE+RESERVED+NOT_RESPONDING"),
                        "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_string_equal(nstate("IDLE"), "IDLE");
    assert_string_equal(nstate("MIXED+DRAIN"), "MIXED+DRAIN");
    assert_string_equal(nstate("IDLE+CLOUD+POWERED_DOWN"), "IDLE+CLOUD+POWERED_DOWN");
    assert_string_equal(nstate("idle"), "IDLE"); /* v0.0.37/38 lower case */
}

/* sinfo's derived words: a flag printed instead of the base. */
static void test_node_state_sinfo_words(void **state)
{
    (void)state;
    assert_string_equal(nstate("drained"), "IDLE+DRAIN");
    assert_string_equal(nstate("drain*"), "IDLE+DRAIN+NOT_RESPONDING");
    assert_string_equal(nstate("draining"), "ALLOCATED+DRAIN");
    assert_string_equal(nstate("drng"), "ALLOCATED+DRAIN");
    assert_string_equal(nstate("maint"), "IDLE+MAINTENANCE");
    assert_string_equal(nstate("resv"), "IDLE+RESERVED");
    assert_string_equal(nstate("comp"), "IDLE+COMPLETING");
    assert_string_equal(nstate("failg"), "ALLOCATED+FAIL");
    assert_string_equal(nstate("futr"), "FUTURE");
    assert_string_equal(nstate("alloc"), "ALLOCATED");
}

/* sinfo's suffix characters. */
static void test_node_state_sinfo_suffixes(void **state)
{
    (void)state;
    assert_string_equal(nstate("idle~"), "IDLE+POWERED_DOWN");
    assert_string_equal(nstate("down*"), "DOWN+NOT_RESPONDING");
    assert_string_equal(nstate("mix-"), "MIXED+PLANNED");
    assert_string_equal(nstate("alloc#"), "ALLOCATED+POWERING_UP");
    assert_string_equal(nstate("idle%"), "IDLE+POWERING_DOWN");
    assert_string_equal(nstate("idle!"), "IDLE+POWER_DOWN");
    assert_string_equal(nstate("mix@"), "MIXED+REBOOT_REQUESTED");
    assert_string_equal(nstate("alloc^"), "ALLOCATED+REBOOT_ISSUED");
    assert_string_equal(nstate("idle$"), "IDLE+MAINTENANCE");
}

static void test_node_state_unknown_kept(void **state)
{
    sa_state_t st;
    sa_error_t err;
    (void)state;
    assert_string_equal(nstate("quantum+SPACE_WEATHER"), "QUANTUM+SPACE_WEATHER");
    sa_state_init(&st);
    assert_false(sa_node_state_parse_text("IDLE++DRAIN", &st, &err));
    assert_false(sa_node_state_parse_text("*", &st, &err));
    assert_false(sa_node_state_parse_text("IDLE DRAIN", &st, &err));
    sa_state_clear(&st);
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
        cmocka_unit_test(test_hostlist_basic),
        cmocka_unit_test(test_hostlist_padding),
        cmocka_unit_test(test_hostlist_product),
        cmocka_unit_test(test_hostlist_xdmod),
        cmocka_unit_test(test_hostlist_none),
        cmocka_unit_test(test_hostlist_error_brackets),
        cmocka_unit_test(test_hostlist_error_ranges),
        cmocka_unit_test(test_hostlist_error_huge),
        cmocka_unit_test(test_hostlist_limit_and_blanks),
        cmocka_unit_test(test_time_text),
        cmocka_unit_test(test_time_text_unset_words),
        cmocka_unit_test(test_time_text_errors),
        cmocka_unit_test(test_duration_elapsed),
        cmocka_unit_test(test_duration_fraction),
        cmocka_unit_test(test_duration_days),
        cmocka_unit_test(test_duration_specials),
        cmocka_unit_test(test_duration_errors),
        cmocka_unit_test(test_parse_int64),
        cmocka_unit_test(test_exitcode),
        cmocka_unit_test(test_node_state_scontrol),
        cmocka_unit_test(test_node_state_sinfo_words),
        cmocka_unit_test(test_node_state_sinfo_suffixes),
        cmocka_unit_test(test_node_state_unknown_kept),
    };
    return tu_run_group_tests("strings", tests, NULL, NULL);
}
