/*
 * test_node_json.c - node records from sinfo --json, scontrol show nodes --json and
 * slurmrestd /nodes, every version (ingest/parse_node_json.c).
 *
 * Every file in slurm-samples/sinfo/ is parsed; field values asserted below were
 * read from the samples themselves. Where ../shared is absent those cases are skipped
 * (saying why) and the same kinds of checks run over the repository's fixtures:
 * fixtures/gen/<version>/ (every version) and fixtures/slurm-22.05/ (real 22.05 output).
 */
#include "testutil.h"
#include "tu_parse.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_json.h"

/* ---- helpers ------------------------------------------------------------------ */

/* Parses sinfo/<rel> through the whole pipeline; fails the test on error. */
static void parse_sample(const char *rel, tu_parsed_t *p)
{
    char path[512];
    sa_error_t err;

    tu_require_samples();
    sa_error_clear(&err);
    snprintf(path, sizeof path, "sinfo/%s", rel);
    if (!tu_parse_file(tu_sample(path), NULL, p, &err))
        fail_msg("%s: %s", rel, err.message);
}

/* Parses inline text; returns success, error message in *err. */
static bool parse_text(const char *text, tu_parsed_t *p, sa_error_t *err)
{
    sa_error_clear(err);
    return tu_parse_mem(text, strlen(text), NULL, p, err);
}

static sa_node_t *must_find(tu_parsed_t *p, const char *name)
{
    sa_node_t *n = tu_find_node(p, name);
    if (!n)
        fail_msg("node %s not found", name);
    return n;
}

static void assert_cpus(const sa_node_t *n, int64_t total, int64_t alloc, int64_t idle, int64_t other)
{
    assert_true(n->cpus_total == total);
    assert_true(n->cpus_alloc == alloc);
    assert_true(n->cpus_idle == idle);
    assert_true(n->cpus_other == other);
}

static void assert_mem(const sa_node_t *n, int64_t total, int64_t alloc, int64_t free_mb)
{
    assert_true(n->mem_total_mb == total);
    assert_true(n->mem_alloc_mb == alloc);
    assert_true(n->mem_free_mb == free_mb);
}

/* Partitions joined by ',' (static buffer). */
static const char *parts(const sa_node_t *n)
{
    static char buf[256];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n->partitions.n; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? "," : "", n->partitions.v[i]);
    return buf;
}

/* Converts one element directly (no document walker); returns success. */
static bool node_from_text(const char *text, sa_node_t **out, sa_error_t *err)
{
    json_error_t jerr;
    json_t *elem = json_loads(text, 0, &jerr);
    bool ok;

    if (!elem)
        fail_msg("bad test JSON: %s", jerr.text);
    *out = sa_node_new();
    sa_error_clear(err);
    ok = sa_node_from_json(elem, *out, err);
    json_decref(elem);
    return ok;
}

/* ---- every sample --------------------------------------------------------------- */

static void test_all_samples(void **state)
{
    char dirpath[512];
    DIR *d;
    struct dirent *e;
    size_t files = 0;

    (void)state;
    tu_require_samples();
    snprintf(dirpath, sizeof dirpath, "%s/sinfo", tu_samples_dir());
    d = opendir(dirpath);
    assert_non_null(d);
    while ((e = readdir(d))) {
        tu_parsed_t p;
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        parse_sample(e->d_name, &p);
        assert_true(p.kind == SA_KIND_NODES_JSON || p.kind == SA_KIND_SINFO_JSON);
        assert_true(p.nnodes > 0);
        for (size_t i = 0; i < p.nnodes; i++) {
            const sa_node_t *n = p.nodes[i];
            assert_non_null(n->name);
            assert_non_null(n->state.base);
            /* flags are sorted and unique */
            for (size_t k = 1; k < n->state.flags.n; k++)
                assert_true(strcmp(n->state.flags.v[k - 1], n->state.flags.v[k]) < 0);
            /* no partition object leaks into a node */
            if (n->extra)
                assert_null(json_object_get(n->extra, "partition"));
        }
        tu_parsed_clear(&p);
        files++;
    }
    closedir(d);
    assert_int_equal(files, 16); /* every capture in sinfo/ */
}

/* ---- v0.0.37 ---------------------------------------------------------------------- */

static void test_v0037_clockwork_sentinels(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("cli-v0037_21.08.8_clockwork_down-notresponding-anonymized.json", &p);
    assert_int_equal(p.kind, SA_KIND_NODES_JSON);
    assert_int_equal(p.nnodes, 2);

    n = must_find(&p, "test-node-1");
    assert_string_equal(tu_state(&n->state), "DOWN+NOT_RESPONDING");
    assert_string_equal(n->reason, "Not responding");
    assert_true(n->reason_time == 1667084449);
    assert_string_equal(n->reason_user, "root");
    assert_cpus(n, 2, 0, 2, 0);
    assert_mem(n, 1800, 0, SA_UNSET); /* free_memory -2 */
    assert_string_equal(n->gres, "gpu:1");
    assert_true(sa_gpus_get(&n->gpus_total, "") == 1);
    assert_true(sa_gpus_total(&n->gpus_total) == 1);
    assert_string_equal(n->gres_used, "gpu:0,tpu:0");
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_string_equal(parts(n), "debug");
    /* unmodelled keys kept as printed, sentinel included */
    assert_non_null(n->extra);
    assert_true(json_integer_value(json_object_get(n->extra, "cpu_load")) == 4294967294LL);
    assert_string_equal(json_string_value(json_object_get(n->extra, "features")), "test_features");
    assert_null(json_object_get(n->extra, "state_flags"));
    assert_null(json_object_get(n->extra, "name"));

    n = must_find(&p, "test-node-2");
    assert_string_equal(tu_state(&n->state), "DOWN+DRAIN");
    assert_string_equal(n->reason, "Sanity Check Failed");
    assert_true(n->reason_time == 1679695882);
    assert_mem(n, 1800, 0, 246);
    assert_null(n->gres);
    assert_true(n->gpus_total.n == 0);
    /* tres_used "cpu=1": no GPUs from the fallback either */
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_string_equal(json_string_value(json_object_get(n->extra, "tres_used")), "cpu=1");
    tu_parsed_clear(&p);
}

static void test_v0037_rivos_list(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("openapi-v0037_21.08.5_rivos_nodes-list.json", &p);
    assert_int_equal(p.nnodes, 4);

    n = must_find(&p, "cs2.example.company.com");
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_cpus(n, 64, 4, 60, 0);
    assert_mem(n, 500000, 114688, 337330);
    assert_null(n->reason);
    assert_true(n->reason_time == SA_UNSET); /* reason_changed_at 0 */
    assert_null(n->reason_user);
    assert_string_equal(parts(n), "hw");

    assert_string_equal(tu_state(&must_find(&p, "cs3.example.company.com")->state), "IDLE");
    n = must_find(&p, "cs4.example.company.com");
    assert_string_equal(tu_state(&n->state), "ALLOCATED");
    assert_cpus(n, 64, 0, 64, 0); /* as printed: allocated with alloc_cpus 0 */
    assert_string_equal(tu_state(&must_find(&p, "cs5.example.company.com")->state), "DOWN");
    tu_parsed_clear(&p);
}

/* ---- v0.0.38 ---------------------------------------------------------------------- */

static void test_v0038_planned_maint(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("local-cli-v0038_22.05.8_planned-maint-reserved-drain-unknown-notresponding.json", &p);
    assert_int_equal(p.nnodes, 3);

    n = must_find(&p, "ghost1");
    assert_string_equal(tu_state(&n->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_string_equal(n->reason, "disk failure ticket-123");
    assert_true(n->reason_time == 1795642674);
    assert_string_equal(n->reason_user, "root");
    assert_cpus(n, 4, 0, 4, 0);
    assert_mem(n, 8000, 0, SA_UNSET);

    n = must_find(&p, "ghost2");
    assert_string_equal(tu_state(&n->state), "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_null(n->reason);
    assert_true(n->reason_time == SA_UNSET);

    n = must_find(&p, "vm");
    assert_string_equal(tu_state(&n->state), "IDLE+PLANNED");
    assert_null(n->reason_user); /* null */
    assert_cpus(n, 2, 0, 2, 0);
    assert_mem(n, 4000, 0, 23590);
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 2);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_string_equal(n->gres_used, "gpu:a100:0(IDX:N/A)");
    assert_string_equal(parts(n), "compute,gpu");
    tu_parsed_clear(&p);
}

static void test_v0038_allocated_drain(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("local-cli-v0038_22.05.8_allocated-drain-gres-used-idx.json", &p);
    n = must_find(&p, "vm");
    assert_string_equal(tu_state(&n->state), "ALLOCATED+DRAIN");
    assert_string_equal(n->reason, "scheduled maintenance");
    assert_true(n->reason_time == 1795642776);
    assert_cpus(n, 2, 2, 0, 0);
    assert_mem(n, 4000, 600, 23722);
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 2);
    assert_true(sa_gpus_get(&n->gpus_used, "a100") == 2);
    assert_string_equal(n->gres_used, "gpu:a100:2(IDX:0-1)");
    assert_string_equal(tu_state(&must_find(&p, "ghost1")->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
    tu_parsed_clear(&p);
}

/* ---- v0.0.39 ---------------------------------------------------------------------- */

static void test_v0039_restd_100(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    size_t allocated = 0;

    (void)state;
    parse_sample("restd-nodes-v0039_23.02.8_slurmweb_100nodes-alloc-drain-down.json", &p);
    assert_int_equal(p.kind, SA_KIND_NODES_JSON);
    assert_int_equal(p.nnodes, 100);
    for (size_t i = 0; i < p.nnodes; i++)
        allocated += strcmp(tu_state(&p.nodes[i]->state), "ALLOCATED") == 0;
    assert_int_equal(allocated, 95);

    n = must_find(&p, "cn051");
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(n->reason, "ECC memory error");
    assert_true(n->reason_time == 1727343318); /* plain int in v0.0.39 */
    assert_string_equal(n->reason_user, "root");
    assert_cpus(n, 2, 0, 2, 0);     /* alloc_idle_cpus */
    assert_true(n->mem_free_mb == SA_UNSET); /* free_mem {set:false} */

    n = must_find(&p, "cn084");
    assert_string_equal(tu_state(&n->state), "DOWN");
    assert_string_equal(n->reason, "CPU dead");
    assert_string_equal(parts(n), "debug");

    n = must_find(&p, "cn001");
    assert_string_equal(tu_state(&n->state), "ALLOCATED");
    assert_cpus(n, 2, 2, 0, 0);
    assert_null(n->reason_user); /* "" */
    tu_parsed_clear(&p);
}

static void test_v0039_sinfo_groups(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    json_t *groups, *g;

    (void)state;
    /* a group of 10 ALLOCATED+DRAIN nodes whose name list the fixture author trimmed to one */
    parse_sample("dp-v0039_23.02.4_rivos_allocated-drain.json", &p);
    assert_int_equal(p.kind, SA_KIND_SINFO_JSON);
    assert_int_equal(p.nnodes, 1);
    n = must_find(&p, "cs62");
    assert_string_equal(tu_state(&n->state), "ALLOCATED+DRAIN");
    assert_string_equal(parts(n), "hw");
    /* per-node configuration: cpus.minimum == maximum, memory.minimum == maximum */
    assert_true(n->cpus_total == 64);
    assert_true(n->mem_total_mb == 770000);
    /* group sums are not this node's */
    assert_true(n->cpus_alloc == SA_UNSET);
    assert_true(n->cpus_idle == SA_UNSET);
    assert_true(n->cpus_other == SA_UNSET);
    assert_true(n->mem_alloc_mb == SA_UNSET);
    assert_true(n->mem_free_mb == SA_UNSET); /* free ranges 428227..678817 */
    assert_true(n->gpus_used.n == 0);
    /* the group's reason is its first node's: kept with the group, not on the node */
    assert_null(n->reason);
    groups = json_object_get(n->extra, "sinfo_groups");
    assert_true(json_is_array(groups));
    assert_int_equal(json_array_size(groups), 1);
    g = json_array_get(groups, 0);
    assert_string_equal(json_string_value(json_object_get(g, "partition")), "hw");
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "reason"), "description")),
                        "IT-4461");
    assert_true(json_integer_value(json_object_get(json_object_get(g, "reason"), "time")) == 1705613872);
    assert_true(json_integer_value(json_object_get(json_object_get(g, "cpus"), "other")) == 526);
    assert_true(json_integer_value(json_object_get(json_object_get(g, "nodes"), "total")) == 10);
    assert_null(json_object_get(json_object_get(g, "nodes"), "nodes"));
    tu_parsed_clear(&p);

    /* sinfo -N: one node per group, every value is the node's */
    parse_sample("dp-v0039_23.02.5_rivos_sinfo-N-escaped-slashes.json", &p);
    assert_int_equal(p.kind, SA_KIND_SINFO_JSON);
    assert_int_equal(p.nnodes, 1);
    n = must_find(&p, "localhost");
    assert_string_equal(tu_state(&n->state), "ALLOCATED");
    assert_string_equal(parts(n), "debug");
    assert_cpus(n, 1, 1, 0, 0);
    assert_mem(n, 1, 1, 227);
    assert_null(n->reason);                  /* "" */
    assert_true(n->reason_time == SA_UNSET); /* 0 */
    assert_null(n->reason_user);
    assert_null(n->gres);
    assert_non_null(n->extra);
    assert_null(json_object_get(n->extra, "sinfo_groups"));
    assert_null(json_object_get(n->extra, "partition"));
    assert_true(json_integer_value(json_object_get(n->extra, "port")) == 6818);
    assert_true(json_integer_value(
                    json_object_get(json_object_get(json_object_get(n->extra, "cpus"), "load"), "minimum")) == 78);
    tu_parsed_clear(&p);
}

/* ---- v0.0.40 ---------------------------------------------------------------------- */

static void test_v0040_talapas_gpus(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-nodes-v0040_23.11.1_talapas_gpu-mig-drain-down.json", &p);
    assert_int_equal(p.nnodes, 12);

    n = must_find(&p, "n0162"); /* MIG */
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_true(sa_gpus_get(&n->gpus_total, "1g.10gb") == 21);
    assert_true(sa_gpus_get(&n->gpus_used, "1g.10gb") == 9);
    assert_cpus(n, 48, 26, 22, 0);
    assert_mem(n, 504433, 501632, 431966);
    assert_string_equal(parts(n), "gpu,gpulong,preempt");

    n = must_find(&p, "n1000"); /* H100 */
    assert_true(sa_gpus_get(&n->gpus_total, "nvidia_h100_80gb_hbm3") == 8);
    assert_true(sa_gpus_get(&n->gpus_used, "nvidia_h100_80gb_hbm3") == 0);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_cpus(n, 112, 96, 16, 0);

    n = must_find(&p, "n0160"); /* A100 */
    assert_string_equal(tu_state(&n->state), "ALLOCATED");
    assert_true(sa_gpus_get(&n->gpus_total, "nvidia_a100_80gb_pcie") == 1);
    assert_true(sa_gpus_get(&n->gpus_used, "nvidia_a100_80gb_pcie") == 1);
    assert_string_equal(n->gres, "gpu:nvidia_a100_80gb_pcie:1(S:1)");

    n = must_find(&p, "n0164");
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(n->reason, "Kill task failed");
    assert_true(n->reason_time == 1722018902); /* struct */
    assert_string_equal(n->reason_user, "root");
    assert_string_equal(must_find(&p, "n0999")->reason, "gpu_board");

    n = must_find(&p, "dtn1");
    assert_string_equal(tu_state(&n->state), "DOWN+NOT_RESPONDING");
    assert_string_equal(n->reason_user, "slurm");
    assert_true(n->reason_time == 1710797454);
    assert_true(n->mem_free_mb == SA_UNSET);
    assert_int_equal(n->partitions.n, 0);
    assert_true(sa_gpus_total(&n->gpus_total) == 0);

    n = must_find(&p, "n0397"); /* gres "" */
    assert_null(n->gres);
    assert_true(n->gpus_total.n == 0);
    tu_parsed_clear(&p);
}

static void test_v0040_gpu_types(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-nodes-v0040_23.11.10_slurmweb_6nodes-gpu-types.json", &p);
    assert_int_equal(p.nnodes, 6);
    n = must_find(&p, "ia1");
    assert_string_equal(tu_state(&n->state), "IDLE");
    assert_true(sa_gpus_get(&n->gpus_total, "h100") == 2);
    assert_true(sa_gpus_get(&n->gpus_total, "h200") == 4);
    assert_true(sa_gpus_total(&n->gpus_total) == 6);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);

    n = must_find(&p, "cn1");
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(n->reason, "ECC memory error");
    assert_true(n->reason_time == 1746621136);
    n = must_find(&p, "cn2");
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_cpus(n, 64, 45, 19, 0);
    assert_mem(n, 131072, 23040, 1637);
    n = must_find(&p, "cn4");
    assert_string_equal(tu_state(&n->state), "DOWN");
    assert_string_equal(n->reason, "CPU dead");
    tu_parsed_clear(&p);

    parse_sample("restd-node-v0040_23.11.10_slurmweb_gpu-idle-completing.json", &p);
    n = must_find(&p, "ia1");
    assert_string_equal(tu_state(&n->state), "IDLE+COMPLETING");
    assert_true(sa_gpus_get(&n->gpus_total, "h200") == 4);
    assert_string_equal(n->gres_used, "gpu:h100:0(IDX:N/A),gpu:h200:0(IDX:N/A)");
    tu_parsed_clear(&p);
}

/* ---- v0.0.41 .. v0.0.43 ------------------------------------------------------------ */

static void test_v0041_mixed_drain(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-node-v0041_24.05.3_slurmweb_mixed-drain.json", &p);
    assert_int_equal(p.nnodes, 1);
    n = must_find(&p, "cn1");
    assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
    assert_string_equal(n->reason, "ECC memory error");
    assert_true(n->reason_time == 1762858462);
    assert_string_equal(n->reason_user, "root");
    assert_cpus(n, 64, 1, 63, 0);
    assert_mem(n, 131072, 512, 333);
    assert_string_equal(parts(n), "normal");
    tu_parsed_clear(&p);
}

static void test_v0042_six_nodes(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-nodes-v0042_24.11.5_slurmweb_6nodes.json", &p);
    assert_int_equal(p.nnodes, 6);
    assert_string_equal(tu_state(&must_find(&p, "ia1")->state), "IDLE+COMPLETING");
    assert_string_equal(tu_state(&must_find(&p, "cn4")->state), "IDLE+DRAIN");
    n = must_find(&p, "cn3");
    assert_string_equal(tu_state(&n->state), "DOWN");
    assert_string_equal(n->reason, "CPU dead");
    assert_true(n->reason_time == 1763370725);
    assert_string_equal(n->reason_user, "slurm");
    assert_cpus(n, 64, 0, 64, 0);
    assert_true(sa_gpus_get(&must_find(&p, "ia2")->gpus_total, "h100") == 2);
    tu_parsed_clear(&p);
}

static void test_v0043_planned(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-node-v0043_25.05.4_slurmweb_idle-completing-planned.json", &p);
    n = must_find(&p, "gpu1");
    assert_string_equal(tu_state(&n->state), "IDLE+COMPLETING+PLANNED");
    assert_true(sa_gpus_get(&n->gpus_total, "h100") == 4);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_cpus(n, 32, 0, 32, 0);
    assert_mem(n, 524288, 0, 1878);
    tu_parsed_clear(&p);
}

/* ---- v0.0.44 ---------------------------------------------------------------------- */

static void test_v0044_untyped_and_dynamic(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;

    (void)state;
    parse_sample("restd-node-v0044_25.11.0_slurmweb_gpu-untyped-mixed.json", &p);
    n = must_find(&p, "gpu3");
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_true(sa_gpus_get(&n->gpus_total, "") == 4);
    assert_true(sa_gpus_get(&n->gpus_used, "") == 1);
    assert_cpus(n, 32, 1, 31, 0);
    assert_mem(n, 524288, 1024, 654);
    tu_parsed_clear(&p);

    parse_sample("cli-scontrol-show-node-json-v0044_25.11.0_charmed-hpc_down-dynamic-norm.json", &p);
    n = must_find(&p, "compute-0");
    assert_string_equal(tu_state(&n->state), "DOWN+DYNAMIC_NORM");
    assert_string_equal(n->reason, "Not responding");
    assert_true(n->reason_time == 1769096589);
    assert_string_equal(n->reason_user, "slurm");
    assert_cpus(n, 8, 0, 8, 0);
    assert_mem(n, 15986, 0, 525);
    assert_string_equal(parts(n), "compute");
    assert_true(json_is_array(json_object_get(n->extra, "next_state_after_reboot")));
    tu_parsed_clear(&p);

    parse_sample("restd-nodes-v0044_25.11.0_slurmweb_8nodes.json", &p);
    assert_int_equal(p.nnodes, 8);
    n = must_find(&p, "cn4");
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_cpus(n, 64, 46, 18, 0);
    assert_string_equal(tu_state(&must_find(&p, "cn1")->state), "IDLE+DRAIN");
    assert_true(sa_gpus_get(&must_find(&p, "gpu1")->gpus_total, "h100") == 4);
    assert_true(sa_gpus_get(&must_find(&p, "gpu4")->gpus_total, "") == 4);
    /* the newest fields land in extra */
    n = must_find(&p, "cn1");
    assert_non_null(json_object_get(n->extra, "tls_cert_last_renewal"));
    assert_non_null(json_object_get(n->extra, "topology"));
    assert_string_equal(json_string_value(json_object_get(n->extra, "version")), "25.11.0");
    tu_parsed_clear(&p);
}

/* ---- inline documents ------------------------------------------------------------ */

/* A node in two partitions (two sinfo -N groups) is one node; a hostlist string group expands. */
static void test_sinfo_merge_partitions(void **state)
{
    static const char doc[] =
        "{\"sinfo\": ["
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 1, \"nodes\": [\"b1\"]},"
        "  \"cpus\": {\"allocated\": 2, \"idle\": 6, \"other\": 0, \"total\": 8, \"minimum\": 8, \"maximum\": 8},"
        "  \"memory\": {\"minimum\": 1000, \"maximum\": 1000, \"allocated\": 100,"
        "              \"free\": {\"minimum\": {\"set\": true, \"infinite\": false, \"number\": 700},"
        "                         \"maximum\": {\"set\": true, \"infinite\": false, \"number\": 700}}},"
        "  \"gres\": {\"total\": \"gpu:a100:4\", \"used\": \"gpu:a100:1(IDX:0)\"},"
        "  \"reason\": {\"description\": \"\", \"time\": 0, \"user\": \"\"},"
        "  \"partition\": {\"name\": \"p2\", \"nodes\": {\"configured\": \"b1\"}}},"
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 1, \"nodes\": [\"b1\"]},"
        "  \"cpus\": {\"allocated\": 2, \"idle\": 6, \"other\": 0, \"total\": 8, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p1\"}},"
        " {\"node\": {\"state\": [\"IDLE\", \"DRAIN\"]}, \"nodes\": {\"total\": 3, \"nodes\": \"a[1-2],a10\"},"
        "  \"cpus\": {\"allocated\": 0, \"idle\": 0, \"other\": 12, \"total\": 12, \"minimum\": 4, \"maximum\": 4},"
        "  \"memory\": {\"minimum\": 100, \"maximum\": 200, \"allocated\": 0},"
        "  \"reason\": {\"description\": \"maint\", \"time\": 1700000000, \"user\": \"root\"},"
        "  \"partition\": {\"name\": \"p1\"}},"
        " {\"node\": {\"state\": [\"DOWN\"]}, \"nodes\": {\"total\": 2, \"nodes\": [\"a1\", \"a2\"]},"
        "  \"partition\": {\"name\": \"p3\"}}"
        "]}";
    tu_parsed_t p;
    sa_error_t err;
    sa_node_t *n;
    json_t *conflict;

    (void)state;
    if (!parse_text(doc, &p, &err))
        fail_msg("%s", err.message);
    assert_int_equal(p.kind, SA_KIND_SINFO_JSON);
    assert_int_equal(p.nnodes, 4);
    /* emitted in name order */
    assert_string_equal(p.nodes[0]->name, "a1");
    assert_string_equal(p.nodes[1]->name, "a10");
    assert_string_equal(p.nodes[2]->name, "a2");
    assert_string_equal(p.nodes[3]->name, "b1");

    n = must_find(&p, "b1");
    assert_string_equal(parts(n), "p1,p2");
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_cpus(n, 8, 2, 6, 0);
    assert_mem(n, 1000, 100, 700);
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 4);
    assert_true(sa_gpus_get(&n->gpus_used, "a100") == 1);
    assert_null(n->reason);
    assert_true(n->extra == NULL || json_object_get(n->extra, "state_conflict") == NULL);
    assert_int_equal(n->gpu_config, SA_NODE_GPUS_OBSERVED); /* a group of one says the node's GPUs */

    n = must_find(&p, "a10");
    assert_int_equal(n->gpu_config, SA_NODE_GPUS_OBSERVED); /* its group names no GPU: none */
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(parts(n), "p1");
    assert_cpus(n, 4, 0, 0, 4); /* its group's 12 CPUs are all other: each node's 4 are */
    assert_int_equal(n->cpu_config, SA_NODE_CPUS_OBSERVED);
    assert_true(n->mem_total_mb == SA_UNSET); /* 100..200 */
    assert_null(n->reason);

    /* a1 listed as IDLE+DRAIN in p1 and DOWN in p3: first kept, conflict recorded */
    n = must_find(&p, "a1");
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(parts(n), "p1,p3");
    conflict = json_object_get(n->extra, "state_conflict");
    assert_true(json_is_array(conflict));
    assert_string_equal(json_string_value(json_array_get(conflict, 0)), "DOWN");
    assert_int_equal(json_array_size(json_object_get(n->extra, "sinfo_groups")), 2);
    tu_parsed_clear(&p);
}

/*
 * The CPUs of grouped nodes from their groups' sums (sa_sinfo_acc_emit):
 * - c[1-3] IDLE in p1, all 24 CPUs idle: each node's 8 idle, exactly (one state);
 * - m[1-4] MIXED in p1, 32 CPUs: 10 allocated, 22 idle, and m4 alone in p2 (3 allocated, 5
 *   idle): m4 exact, the other 7 allocated and 17 idle split over m1..m3 (7 = 3 + 2 + 2;
 *   idle 8 - 3 = 5, 6, 6: 17), SPLIT;
 * - d[1-2] MIXED+DRAIN in p1 (4 allocated, 12 other of 16) and d[2-3] in p2 (2, 14 of 16):
 *   the groups overlap in d2 and neither is in one state: p1's (first, same size) is split
 *   over d1 and d2 (2 + 2 allocated, 6 + 6 other), p2's cannot be (d2 has a share) and d3
 *   stays unknown;
 * - t1 in a group of 5 whose names list the fixture trimmed to one, CPUs in two states:
 *   unknown.
 */
static void test_sinfo_group_cpus(void **state)
{
    static const char doc[] =
        "{\"sinfo\": ["
        " {\"node\": {\"state\": [\"IDLE\"]}, \"nodes\": {\"total\": 3, \"nodes\": \"c[1-3]\"},"
        "  \"cpus\": {\"allocated\": 0, \"idle\": 24, \"other\": 0, \"total\": 24, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p1\"}},"
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 4, \"nodes\": \"m[1-4]\"},"
        "  \"cpus\": {\"allocated\": 10, \"idle\": 22, \"other\": 0, \"total\": 32, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p1\"}},"
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 1, \"nodes\": [\"m4\"]},"
        "  \"cpus\": {\"allocated\": 3, \"idle\": 5, \"other\": 0, \"total\": 8, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p2\"}},"
        " {\"node\": {\"state\": [\"MIXED\", \"DRAIN\"]}, \"nodes\": {\"total\": 2, \"nodes\": \"d[1-2]\"},"
        "  \"cpus\": {\"allocated\": 4, \"idle\": 0, \"other\": 12, \"total\": 16, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p1\"}},"
        " {\"node\": {\"state\": [\"MIXED\", \"DRAIN\"]}, \"nodes\": {\"total\": 2, \"nodes\": \"d[2-3]\"},"
        "  \"cpus\": {\"allocated\": 2, \"idle\": 0, \"other\": 14, \"total\": 16, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p2\"}},"
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 5, \"nodes\": [\"t1\"]},"
        "  \"cpus\": {\"allocated\": 5, \"idle\": 35, \"other\": 0, \"total\": 40, \"minimum\": 8, \"maximum\": 8},"
        "  \"partition\": {\"name\": \"p1\"}}"
        "]}";
    static const struct {
        const char *name;
        int64_t alloc, idle, other;
        int config;
    } want[] = {
        {"c1", 0, 8, 0, SA_NODE_CPUS_OBSERVED}, {"c3", 0, 8, 0, SA_NODE_CPUS_OBSERVED},
        {"m1", 3, 5, 0, SA_NODE_CPUS_SPLIT},    {"m2", 2, 6, 0, SA_NODE_CPUS_SPLIT},
        {"m3", 2, 6, 0, SA_NODE_CPUS_SPLIT},    {"m4", 3, 5, 0, SA_NODE_CPUS_OBSERVED},
        {"d1", 2, 0, 6, SA_NODE_CPUS_SPLIT},    {"d2", 2, 0, 6, SA_NODE_CPUS_SPLIT},
        {"d3", SA_UNSET, SA_UNSET, SA_UNSET, SA_NODE_CPUS_OBSERVED},
        {"t1", SA_UNSET, SA_UNSET, SA_UNSET, SA_NODE_CPUS_OBSERVED},
    };
    tu_parsed_t p;
    sa_error_t err;
    json_t *o;

    (void)state;
    if (!parse_text(doc, &p, &err))
        fail_msg("%s", err.message);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sa_node_t *n = must_find(&p, want[i].name);
        if (n->cpus_alloc != want[i].alloc || n->cpus_idle != want[i].idle || n->cpus_other != want[i].other ||
            n->cpu_config != want[i].config)
            fail_msg("%s: %lld/%lld/%lld (config %d), expected %lld/%lld/%lld (%d)", want[i].name,
                     (long long)n->cpus_alloc, (long long)n->cpus_idle, (long long)n->cpus_other, n->cpu_config,
                     (long long)want[i].alloc, (long long)want[i].idle, (long long)want[i].other, want[i].config);
        assert_true(n->cpus_total == 8);
    }
    o = sa_node_to_json(must_find(&p, "m1"));
    assert_string_equal(json_string_value(json_object_get(o, "cpu_config")), "split");
    json_decref(o);
    tu_parsed_clear(&p);
}

/* A group of several nodes whose gres names GPUs: each node's GPUs are unknown, not the first node's. */
static void test_sinfo_group_gpus_unknown(void **state)
{
    static const char doc[] =
        "{\"sinfo\": ["
        " {\"node\": {\"state\": [\"MIXED\"]}, \"nodes\": {\"total\": 3, \"nodes\": \"g[1-3]\"},"
        "  \"cpus\": {\"allocated\": 6, \"idle\": 18, \"other\": 0, \"total\": 24, \"minimum\": 8, \"maximum\": 8},"
        "  \"gres\": {\"total\": \"gpu:a100:4\", \"used\": \"gpu:a100:2(IDX:0-1)\"},"
        "  \"partition\": {\"name\": \"gpu\"}},"
        " {\"node\": {\"state\": [\"IDLE\"]}, \"nodes\": {\"total\": 1, \"nodes\": [\"g3\"]},"
        "  \"gres\": {\"total\": \"gpu:a100:4\", \"used\": \"gpu:a100:0(IDX:N/A)\"},"
        "  \"partition\": {\"name\": \"debug\"}}"
        "]}";
    tu_parsed_t p;
    sa_error_t err;
    sa_node_t *n;
    json_t *o;

    (void)state;
    if (!parse_text(doc, &p, &err))
        fail_msg("%s", err.message);
    n = must_find(&p, "g1");
    assert_int_equal(n->gpu_config, SA_NODE_GPUS_UNKNOWN);
    assert_int_equal(n->gpus_total.n, 0);
    o = sa_node_to_json(n);
    assert_string_equal(json_string_value(json_object_get(o, "gpu_config")), "unknown");
    json_decref(o);
    /* g3 is also alone in another partition's group: that one says its own GPUs */
    n = must_find(&p, "g3");
    assert_int_equal(n->gpu_config, SA_NODE_GPUS_OBSERVED);
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 4);
    tu_parsed_clear(&p);
}

/* Unknown and out-of-order state words, GPUs from tres_used, unknown keys kept. */
static void test_node_list_shapes(void **state)
{
    static const char doc[] =
        "{\"nodes\": ["
        " {\"name\": \"x1\", \"state\": [\"IDLE\", \"BRAND_NEW_FLAG\"], \"cpus\": 4, \"alloc_cpus\": 1,"
        "  \"alloc_idle_cpus\": 3, \"gres\": \"gpu:a100:4\", \"gres_used\": \"\","
        "  \"tres_used\": \"cpu=1,mem=1G,gres/gpu=2\", \"my_future_key\": {\"a\": [1, 2]}},"
        " {\"name\": \"x2\", \"state\": [\"DRAIN\", \"idle\"], \"cpus\": 4, \"alloc_cpus\": 3, \"idle_cpus\": 2},"
        " {\"name\": \"x3\", \"state\": \"weird_base\", \"state_flags\": [\"DRAIN\"],"
        "  \"partitions\": [\"b\", \"a\", \"b\"], \"free_mem\": {\"set\": false, \"infinite\": true, \"number\": 0}}"
        "]}";
    tu_parsed_t p;
    sa_error_t err;
    sa_node_t *n;

    (void)state;
    if (!parse_text(doc, &p, &err))
        fail_msg("%s", err.message);
    assert_int_equal(p.nnodes, 3);

    n = must_find(&p, "x1");
    assert_string_equal(tu_state(&n->state), "IDLE+BRAND_NEW_FLAG");
    assert_cpus(n, 4, 1, 3, 0);
    assert_true(sa_gpus_get(&n->gpus_used, "a100") == 2); /* tres_used, attributed to the one type */
    assert_non_null(json_object_get(n->extra, "my_future_key"));
    assert_int_equal(json_array_size(json_object_get(json_object_get(n->extra, "my_future_key"), "a")), 2);
    assert_string_equal(json_string_value(json_object_get(n->extra, "tres_used")), "cpu=1,mem=1G,gres/gpu=2");

    n = must_find(&p, "x2");
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_cpus(n, 4, 3, 2, SA_UNSET); /* 4 - 3 - 2 < 0: not derived */

    n = must_find(&p, "x3");
    assert_string_equal(tu_state(&n->state), "WEIRD_BASE+DRAIN");
    assert_string_equal(parts(n), "a,b");
    assert_true(n->mem_free_mb == SA_UNSET);
    tu_parsed_clear(&p);
}

/* ---- bad elements ---------------------------------------------------------------- */

static void expect_node_error(const char *text, const char *needle)
{
    sa_node_t *n = NULL;
    sa_error_t err;

    if (node_from_text(text, &n, &err))
        fail_msg("accepted: %s", text);
    if (!strstr(err.message, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err.message, needle);
    assert_null(strchr(err.message, '\n'));
    sa_node_destroy(n);
}

static void test_bad_elements(void **state)
{
    (void)state;
    expect_node_error("{\"state\": [\"IDLE\"], \"cpus\": 4}", "node: name: missing");
    expect_node_error("{\"name\": \"\", \"cpus\": 4}", "name: missing");
    expect_node_error("{\"name\": \"n1\", \"state\": 3}", "node n1: state: expected");
    expect_node_error("{\"name\": \"n1\", \"state\": [\"IDLE\", 4]}", "node n1: state:");
    expect_node_error("{\"name\": \"n1\", \"state_flags\": {}}", "node n1: state_flags:");
    expect_node_error("{\"name\": \"n1\", \"cpus\": \"four\"}", "node n1: cpus:");
    expect_node_error("{\"name\": \"n1\", \"cpus\": 1e30}", "node n1: cpus:");
    expect_node_error("{\"name\": \"n1\", \"real_memory\": 9223372036854775807}", "node n1: real_memory:");
    expect_node_error("{\"name\": \"n1\", \"alloc_cpus\": -5}", "node n1: alloc_cpus:");
    expect_node_error("{\"name\": \"n1\", \"reason_changed_at\": \"yesterday\"}", "node n1: reason_changed_at:");
    expect_node_error("{\"name\": \"n1\", \"partitions\": [1]}", "node n1: partitions:");
    expect_node_error("{\"name\": \"n1\", \"reason\": [\"x\"]}", "node n1: reason:");
    expect_node_error("[1, 2]", "node: expected an object");

    /* numeric strings are numbers, not errors; -2 is Slurm's NO_VAL64 */
    {
        sa_node_t *n = NULL;
        sa_error_t err;
        if (!node_from_text("{\"name\": 12, \"cpus\": \"8\", \"free_memory\": -2}", &n, &err))
            fail_msg("%s", err.message);
        assert_string_equal(n->name, "12");
        assert_true(n->cpus_total == 8);
        assert_true(n->mem_free_mb == SA_UNSET);
        sa_node_destroy(n);
    }
}

/* Errors through the whole document walker name the node; sinfo groups name sinfo[i] and the partition. */
static void test_bad_documents(void **state)
{
    tu_parsed_t p;
    sa_error_t err;

    (void)state;
    assert_false(parse_text("{\"nodes\": [{\"name\": \"ok1\"}, {\"name\": \"cn7\", \"cpus\": \"many\"}]}", &p, &err));
    assert_non_null(strstr(err.message, "node cn7: cpus:"));
    tu_parsed_clear(&p);

    assert_false(parse_text("{\"sinfo\": [{\"partition\": {\"name\": \"gpu\"}, \"nodes\": {\"nodes\": 5}}]}", &p,
                            &err));
    assert_non_null(strstr(err.message, "sinfo[0] (partition gpu): nodes: nodes:"));
    tu_parsed_clear(&p);

    assert_false(parse_text("{\"sinfo\": [{\"partition\": {\"name\": \"p\"}, \"nodes\": {\"nodes\": [\"a\"]},"
                            " \"cpus\": {\"total\": \"lots\"}}]}",
                            &p, &err));
    assert_non_null(strstr(err.message, "sinfo[0] (partition p): cpus: total:"));
    tu_parsed_clear(&p);

    assert_false(parse_text("{\"sinfo\": [{\"nodes\": {\"nodes\": [\"a\"]}, \"node\": {\"state\": 7}}]}", &p, &err));
    assert_non_null(strstr(err.message, "sinfo[0]: node: state:"));
    tu_parsed_clear(&p);
}

/* The accumulator used directly: empty emit, re-use after emit, a failing callback. */
static bool refuse_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    (void)ctx;
    sa_error_set(error, SA_ERR_INPUT, 0, "refused %s", node->name);
    return false;
}

static void test_acc_direct(void **state)
{
    sa_sinfo_acc_t *acc = sa_sinfo_acc_new();
    sa_sink_t sink = {NULL, refuse_node, NULL, NULL, false, NULL};
    sa_error_t err;
    json_t *g = json_loads("{\"nodes\": {\"nodes\": [\"z1\", \"y1\"]}, \"partition\": {\"name\": \"p\"}}", 0, NULL);

    (void)state;
    assert_non_null(acc);
    assert_true(sa_sinfo_acc_emit(acc, &sink, &err)); /* nothing to emit */
    assert_true(sa_sinfo_acc_add(acc, g, &err));
    assert_false(sa_sinfo_acc_emit(acc, &sink, &err));
    assert_string_equal(err.message, "refused y1"); /* name order */
    assert_true(sa_sinfo_acc_emit(acc, &sink, &err)); /* emptied */
    assert_false(sa_sinfo_acc_add(acc, json_array_get(json_object_get(g, "nodes"), 0), &err));
    assert_non_null(strstr(err.message, "sinfo[1]: expected an object"));
    assert_true(sa_sinfo_acc_add(acc, g, &err));
    sa_sinfo_acc_destroy(acc); /* frees held nodes */
    sa_sinfo_acc_destroy(NULL);
    json_decref(g);
}

/* ---- the repository's fixtures: fixtures/gen/<version>/ and fixtures/slurm-22.05/ ------------------ */

#define AT TU_GEN_AT

/* Generic checks of every node of a parse: a name, a base, sorted flags, no partition object. */
static void check_nodes(const tu_parsed_t *p)
{
    for (size_t i = 0; i < p->nnodes; i++) {
        const sa_node_t *n = p->nodes[i];
        assert_non_null(n->name);
        assert_non_null(n->state.base);
        for (size_t k = 1; k < n->state.flags.n; k++)
            assert_true(strcmp(n->state.flags.v[k - 1], n->state.flags.v[k]) < 0);
        if (n->extra)
            assert_null(json_object_get(n->extra, "partition"));
    }
}

/* A fixture node, naming the file when absent. */
static sa_node_t *fnode(tu_parsed_t *p, const char *what, const char *name)
{
    sa_node_t *n = tu_find_node(p, name);
    if (!n)
        fail_msg("%s: node %s not found", what, name);
    return n;
}

/* What a node list (scontrol show nodes --json, sinfo --json up to 22.05) says of the scenario's nodes,
 * in every version. */
static void check_gen_node_list(tu_parsed_t *p, const char *what, int vn)
{
    sa_node_t *n;

    assert_int_equal(p->kind, SA_KIND_NODES_JSON);
    assert_int_equal(p->nnodes, 24);
    check_nodes(p);
    n = fnode(p, what, "c0001"); /* drained */
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_string_equal(n->reason, "disk failure ticket-123");
    assert_string_equal(n->reason_user, "root");
    assert_true(n->reason_time == AT - 3600);
    assert_cpus(n, 16, 0, 16, 0);
    assert_true(n->mem_total_mb == 515000 && n->mem_alloc_mb == 0);
    assert_string_equal(parts(n), "cpu,long");
    assert_null(n->gres);
    assert_string_equal(n->gres_used, "gpu:0");
    assert_true(sa_gpus_total(&n->gpus_total) == 0);
    assert_string_equal(json_string_value(json_object_get(n->extra, "features")) ? "string" : "list",
                        vn <= 38 ? "string" : "list"); /* a CSV string up to v0.0.38 */
    n = fnode(p, what, "c0002"); /* draining: jobs still run */
    assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
    assert_cpus(n, 16, 8, 8, 0);
    assert_string_equal(n->reason_user, "admin");
    n = fnode(p, what, "c0003");
    assert_string_equal(tu_state(&n->state), "DOWN+NOT_RESPONDING");
    assert_string_equal(n->reason, "Not responding");
    assert_string_equal(n->reason_user, "slurm");
    n = fnode(p, what, "c0004"); /* never registered: sentinels for load and free memory */
    assert_string_equal(tu_state(&n->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_true(n->mem_free_mb == SA_UNSET);
    if (vn <= 38)
        assert_true(json_integer_value(json_object_get(n->extra, "cpu_load")) == 4294967294LL);
    n = fnode(p, what, "c0005");
    assert_string_equal(tu_state(&n->state), "IDLE+MAINTENANCE+RESERVED");
    assert_null(n->reason);
    assert_true(n->reason_time == SA_UNSET);
    assert_null(n->reason_user);
    assert_string_equal(tu_state(&fnode(p, what, "c0006")->state), "IDLE+COMPLETING");
    assert_string_equal(tu_state(&fnode(p, what, "c0007")->state), "IDLE+PLANNED");
    assert_string_equal(tu_state(&fnode(p, what, "c0008")->state), "IDLE+POWERED_DOWN");
    assert_string_equal(tu_state(&fnode(p, what, "c0009")->state), "IDLE+DRAIN+REBOOT_REQUESTED");
    assert_true(fnode(p, what, "c0013")->mem_free_mb > 0);
    n = fnode(p, what, "ga001"); /* four idle GPUs on a drained node */
    assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 4);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_string_equal(n->gres, "gpu:a100:4(S:0-1)");
    assert_string_equal(n->gres_used, "gpu:a100:0(IDX:N/A)");
    n = fnode(p, what, "ga002");
    assert_string_equal(tu_state(&n->state), "ALLOCATED+DRAIN");
    assert_cpus(n, 64, 64, 0, 0);
    assert_true(sa_gpus_get(&n->gpus_used, "a100") == 4);
    assert_string_equal(fnode(p, what, "ga003")->partitions.v[0], "debug");
    n = fnode(p, what, "gm001"); /* MIG profiles */
    assert_string_equal(tu_state(&n->state), "MIXED");
    assert_true(sa_gpus_get(&n->gpus_total, "nvidia_a100_80gb_pcie_1g.10gb") == 14);
    assert_true(sa_gpus_get(&n->gpus_total, "nvidia_a100_80gb_pcie_3g.40gb") == 4);
    assert_true(sa_gpus_get(&n->gpus_used, "nvidia_a100_80gb_pcie_1g.10gb") == 2);
    assert_true(sa_gpus_get(&n->gpus_used, "nvidia_a100_80gb_pcie_3g.40gb") == 0);
    assert_string_equal(parts(n), "gpu,mig");
    n = fnode(p, what, "gh001");
    assert_true(sa_gpus_get(&n->gpus_used, "h100") == 8);
    assert_cpus(n, 96, 48, 48, 0);
    assert_string_equal(tu_state(&fnode(p, what, "gh003")->state), "DOWN+DRAIN");
    n = fnode(p, what, "gu01"); /* untyped GPUs */
    assert_true(sa_gpus_get(&n->gpus_total, "") == 4);
    assert_true(sa_gpus_get(&n->gpus_used, "") == 2);
    n = fnode(p, what, "gz01"); /* two types */
    assert_true(sa_gpus_get(&n->gpus_total, "h100") == 2);
    assert_true(sa_gpus_get(&n->gpus_total, "h200") == 4);
    assert_true(sa_gpus_get(&n->gpus_used, "h200") == 1);
    if (vn >= 43)
        assert_non_null(json_object_get(fnode(p, what, "c0001")->extra, "tls_cert_last_renewal"));
}

/* scontrol show nodes --json of every version (and sinfo --json of 21.08/22.05, the same list). */
static void test_fixture_node_lists(void **state)
{
    static const char *const release[] = {"21.08.8", "22.05.8", "23.02.7", "23.11.10",
                                          "24.05.8", "24.11.6", "25.05.4", "25.11.0"};
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        int vn = tu_gen_vn(*v);
        tu_parsed_t p;

        tu_parse_gen(*v, "scontrol-nodes.json", &p);
        check_gen_node_list(&p, *v, vn);
        /* slurmd's version: "version" from v0.0.39, "slurmd_version" before */
        assert_string_equal(json_string_value(json_object_get(fnode(&p, *v, "c0001")->extra,
                                                              vn >= 39 ? "version" : "slurmd_version")),
                            release[vn - 37]);
        tu_parsed_clear(&p);
        if (vn <= 38) {
            tu_parse_gen(*v, "sinfo-N.json", &p);
            check_gen_node_list(&p, *v, vn);
            tu_parsed_clear(&p);
        }
    }
}

/* Parses a sinfo[] file of fixtures/gen/<version> (v0.0.39+; false before) and checks its 24 nodes. */
static bool gen_sinfo(const char *version, const char *file, tu_parsed_t *p)
{
    if (tu_gen_vn(version) < 39)
        return false;
    tu_parse_gen(version, file, p);
    assert_int_equal(p->kind, SA_KIND_SINFO_JSON);
    assert_int_equal(p->nnodes, 24);
    check_nodes(p);
    return true;
}

/* sinfo -N --json (v0.0.39+): one record per node and partition, merged into one node each. */
static void test_fixture_sinfo_per_node(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parsed_t p;
        sa_node_t *n;

        if (!gen_sinfo(*v, "sinfo-N.json", &p))
            continue;
        n = fnode(&p, *v, "c0001"); /* listed under cpu and long */
        assert_string_equal(parts(n), "cpu,long");
        assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
        assert_cpus(n, 16, 0, 0, 16); /* sinfo counts a drained node's CPUs as other */
        assert_string_equal(n->reason, "disk failure ticket-123");
        assert_true(n->reason_time == AT - 3600);
        assert_null(json_object_get(n->extra, "sinfo_groups"));
        n = fnode(&p, *v, "c0002");
        assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
        assert_cpus(n, 16, 8, 0, 8);
        n = fnode(&p, *v, "c0013");
        assert_string_equal(tu_state(&n->state), "MIXED");
        assert_true(n->cpus_alloc + n->cpus_idle == 16 && n->cpus_other == 0);
        n = fnode(&p, *v, "ga003"); /* in gpu and debug */
        assert_string_equal(parts(n), "debug,gpu");
        n = fnode(&p, *v, "gm001");
        assert_true(sa_gpus_get(&n->gpus_total, "nvidia_a100_80gb_pcie_3g.40gb") == 4);
        assert_true(sa_gpus_get(&n->gpus_used, "nvidia_a100_80gb_pcie_1g.10gb") == 2);
        assert_string_equal(tu_state(&fnode(&p, *v, "c0004")->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
        assert_true(fnode(&p, *v, "c0004")->mem_free_mb != SA_UNSET); /* sinfo prints the group's free range */
        assert_true(json_integer_value(json_object_get(n->extra, "port")) == 6818);
        tu_parsed_clear(&p);
    }
}

/* sinfo --json (v0.0.39+) grouped: exact states per node, per-node CPUs from a group of one or of one state. */
static void test_fixture_sinfo_groups(void **state)
{
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parsed_t p;
        sa_node_t *n;
        json_t *groups;

        if (!gen_sinfo(*v, "sinfo.json", &p))
            continue;
        n = fnode(&p, *v, "c0010"); /* a group of three ALLOCATED nodes in cpu, of two in debug */
        assert_string_equal(tu_state(&n->state), "ALLOCATED");
        assert_string_equal(parts(n), "cpu,debug");
        assert_true(n->cpus_total == 16);
        assert_cpus(n, 16, 16, 0, 0); /* the group's CPUs are all allocated: so are each node's */
        groups = json_object_get(n->extra, "sinfo_groups");
        assert_int_equal(json_array_size(groups), 2);
        assert_true(json_integer_value(json_object_get(json_object_get(json_array_get(groups, 0), "nodes"),
                                                       "total")) == 3);
        assert_null(json_object_get(json_object_get(json_array_get(groups, 0), "nodes"), "nodes"));
        n = fnode(&p, *v, "c0002"); /* a group of one: its values are the node's */
        assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
        assert_cpus(n, 16, 8, 0, 8);
        assert_string_equal(n->reason, "kernel upgrade");
        for (size_t i = 0; i < p.nnodes; i++) /* every flag combination exactly */
            assert_non_null(p.nodes[i]->state.base);
        assert_string_equal(tu_state(&fnode(&p, *v, "c0009")->state), "IDLE+DRAIN+REBOOT_REQUESTED");
        assert_string_equal(tu_state(&fnode(&p, *v, "gh003")->state), "DOWN+DRAIN");
        tu_parsed_clear(&p);
    }
}

/* Real 22.05.8 node lists: never-registered nodes, a maintenance reservation, a node drained under a job. */
static void test_fixture_2205_nodes(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    (void)state;

    tu_parse_fixture("slurm-22.05/sinfo-B.json", &p);
    assert_int_equal(p.kind, SA_KIND_NODES_JSON);
    assert_int_equal(p.nnodes, 3);
    check_nodes(&p);
    n = fnode(&p, "B", "ghost1");
    assert_string_equal(tu_state(&n->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_string_equal(n->reason, "disk failure ticket-123");
    assert_string_equal(n->reason_user, "root");
    assert_cpus(n, 2, 0, 2, 0);
    assert_true(n->mem_free_mb == SA_UNSET); /* free_memory -2 */
    assert_true(json_integer_value(json_object_get(n->extra, "cpu_load")) == 4294967294LL);
    n = fnode(&p, "B", "ghost2");
    assert_string_equal(tu_state(&n->state), "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_null(n->reason);
    n = fnode(&p, "B", "vm"); /* drained while the GPU job runs */
    assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
    assert_string_equal(n->reason, "scheduled maintenance");
    assert_cpus(n, 2, 1, 1, 0);
    assert_true(n->mem_total_mb == 4000 && n->mem_alloc_mb == 500);
    assert_true(sa_gpus_get(&n->gpus_total, "a100") == 2);
    assert_true(sa_gpus_get(&n->gpus_used, "a100") == 2);
    assert_string_equal(n->gres_used, "gpu:a100:2(IDX:0-1)");
    assert_string_equal(parts(n), "compute,gpu");
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/sinfo-A.json", &p); /* early: ghost1 not yet found unresponsive */
    assert_string_equal(tu_state(&fnode(&p, "A", "ghost1")->state), "UNKNOWN+DRAIN");
    assert_string_equal(tu_state(&fnode(&p, "A", "vm")->state), "ALLOCATED");
    tu_parsed_clear(&p);

    tu_parse_fixture("slurm-22.05/sinfo-E.json", &p); /* resumed, idle */
    n = fnode(&p, "E", "vm");
    assert_string_equal(tu_state(&n->state), "IDLE");
    assert_null(n->reason);
    assert_true(sa_gpus_total(&n->gpus_used) == 0);
    assert_string_equal(n->gres_used, "gpu:a100:0(IDX:N/A)");
    tu_parsed_clear(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_samples),
        cmocka_unit_test(test_v0037_clockwork_sentinels),
        cmocka_unit_test(test_v0037_rivos_list),
        cmocka_unit_test(test_v0038_planned_maint),
        cmocka_unit_test(test_v0038_allocated_drain),
        cmocka_unit_test(test_v0039_restd_100),
        cmocka_unit_test(test_v0039_sinfo_groups),
        cmocka_unit_test(test_v0040_talapas_gpus),
        cmocka_unit_test(test_v0040_gpu_types),
        cmocka_unit_test(test_v0041_mixed_drain),
        cmocka_unit_test(test_v0042_six_nodes),
        cmocka_unit_test(test_v0043_planned),
        cmocka_unit_test(test_v0044_untyped_and_dynamic),
        cmocka_unit_test(test_sinfo_merge_partitions),
        cmocka_unit_test(test_sinfo_group_cpus),
        cmocka_unit_test(test_sinfo_group_gpus_unknown),
        cmocka_unit_test(test_node_list_shapes),
        cmocka_unit_test(test_bad_elements),
        cmocka_unit_test(test_fixture_node_lists),
        cmocka_unit_test(test_fixture_sinfo_per_node),
        cmocka_unit_test(test_fixture_sinfo_groups),
        cmocka_unit_test(test_fixture_2205_nodes),
        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_acc_direct),
    };
    return tu_run_group_tests("node_json", tests, NULL, NULL);
}
