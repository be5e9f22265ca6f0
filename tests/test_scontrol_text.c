/*
 * test_scontrol_text.c - ingest/parse_scontrol_text.c: `scontrol show nodes -o` (one line
 * per node, key=value pairs, values with blanks inside) as Slurm printed it on the
 * samples' clusters, in every data_parser version of the generated cluster and on the
 * project's 22.05 cluster: states, reasons, CPUs, memory, GPUs configured and in use (MIG
 * types), partitions, the fields not modelled kept; malformed lines refused.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scontrol show nodes -o ------------------------------------------------------------- */

static void parse_other(const char *name, tu_parsed_t *p)
{
    char rel[512];
    sa_error_t err;
    tu_require_samples();
    snprintf(rel, sizeof rel, "other/%s", name);
    sa_error_clear(&err);
    if (!tu_parse_file(tu_sample(rel), NULL, p, &err))
        fail_msg("%s: %s", name, err.message);
    assert_int_equal(p->kind, SA_KIND_SCONTROL_NODES_TEXT);
}

static void test_scontrol_local(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    (void)state;
    parse_other("local-scontrol-show-node-o_22.05.8_unknown-drain-maint.txt", &p);
    assert_int_equal(p.nnodes, 3);
    n = tu_find_node(&p, "ghost1");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
    assert_string_equal(n->reason, "disk failure ticket-123");
    assert_string_equal(n->reason_user, "root");
    assert_int_equal(n->reason_time, 1795642674 /* 2026-11-25T21:37:54Z */);
    assert_int_equal(n->cpus_total, 4);
    assert_int_equal(n->cpus_alloc, 0);
    assert_int_equal(n->cpus_idle, 4);
    assert_int_equal(n->mem_total_mb, 8000);
    assert_int_equal(n->mem_free_mb, SA_UNSET); /* FreeMem=N/A */
    assert_null(n->gres);
    assert_int_equal(n->gpus_total.n, 0);
    assert_string_equal(tu_json_str(n->extra, "CPULoad"), "N/A");
    assert_string_equal(tu_json_str(n->extra, "BootTime"), "None");

    n = tu_find_node(&p, "ghost2");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_null(n->reason);
    assert_int_equal(n->reason_time, SA_UNSET);

    n = tu_find_node(&p, "vm");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "IDLE");
    assert_string_equal(n->gres, "gpu:a100:2");
    assert_int_equal(sa_gpus_get(&n->gpus_total, "a100"), 2);
    assert_int_equal(n->gpus_used.n, 0);
    assert_int_equal(n->partitions.n, 2);
    assert_string_equal(n->partitions.v[0], "compute");
    assert_string_equal(n->partitions.v[1], "gpu");
    assert_int_equal(n->mem_free_mb, 23816);
    assert_int_equal(n->cpus_total, 2);
    /* a value with blanks */
    assert_string_equal(tu_json_str(n->extra, "OS"), "Linux 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0");
    assert_string_equal(tu_json_str(n->extra, "Version"), "22.05.8");
    assert_string_equal(tu_json_str(n->extra, "CfgTRES"), "cpu=2,mem=4000M,billing=2,gres/gpu=2,gres/gpu:a100=2");
    assert_null(tu_json_str(n->extra, "AllocTRES")); /* empty */
    tu_parsed_clear(&p);
}

static void test_scontrol_habrok(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    (void)state;
    parse_other("scontrol-show-o-nodes_habrok-2024_gpu-nodes.txt", &p);
    assert_int_equal(p.nnodes, 183);
    n = tu_find_node(&p, "a100gpu3");
    assert_non_null(n);
    assert_int_equal(n->cpus_total, 64);
    assert_int_equal(n->mem_total_mb, 514404);
    assert_int_equal(n->gpus_total.n, 1);
    assert_int_equal(sa_gpus_get(&n->gpus_total, "a100"), 4); /* not 8 */
    n = tu_find_node(&p, "v100gpu34");
    assert_non_null(n);
    assert_int_equal(sa_gpus_total(&n->gpus_total), 1);
    assert_int_equal(sa_gpus_get(&n->gpus_total, "v100"), 1);
    n = tu_find_node(&p, "memory2");
    assert_non_null(n);
    assert_int_equal(n->mem_total_mb, 4127070);
    assert_int_equal(n->gpus_total.n, 0);
    tu_parsed_clear(&p);
}

static void test_scontrol_text_forms(void **state)
{
    static const char text[] =
        "NodeName=g1 CPUAlloc=16 CPUTot=64 RealMemory=512000 AllocMem=128000 FreeMem=300000 "
        "State=MIXED+DRAIN Gres=gpu:h100:2(S:0),gpu:h200:4(S:1) GresUsed=gpu:h100:1(IDX:0),gpu:h200:0(IDX:N/A) "
        "Partitions=b,a CfgTRES=cpu=64,mem=500G,gres/gpu=6 AllocTRES=cpu=16,mem=125G,gres/gpu=1 "
        "Reason=gpu_board x=1 [slurm@2024-01-01T00:00:00] Comment=rack 12 Extra=k=v\n"
        "NodeName=g2 State=down* Partitions=a CfgTRES=cpu=8 AllocTRES=gres/gpu:a100=2,gres/gpu=2\n";
    tu_parsed_t p;
    sa_node_t *n;
    sa_error_t err;
    (void)state;
    sa_error_clear(&err);
    if (!tu_parse_mem(text, strlen(text), NULL, &p, &err))
        fail_msg("%s", err.message);
    n = tu_find_node(&p, "g1");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
    assert_int_equal(n->cpus_idle, 48);
    assert_int_equal(n->mem_alloc_mb, 128000);
    assert_int_equal(sa_gpus_total(&n->gpus_total), 6);
    assert_int_equal(sa_gpus_get(&n->gpus_used, "h100"), 1);
    assert_int_equal(sa_gpus_total(&n->gpus_used), 1);
    assert_string_equal(n->partitions.v[0], "a");
    assert_string_equal(n->reason, "gpu_board x=1");
    assert_string_equal(n->reason_user, "slurm");
    assert_string_equal(tu_json_str(n->extra, "Comment"), "rack 12");
    assert_string_equal(tu_json_str(n->extra, "Extra"), "k=v");
    n = tu_find_node(&p, "g2");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "DOWN+NOT_RESPONDING");
    assert_int_equal(sa_gpus_get(&n->gpus_used, "a100"), 2); /* from AllocTRES */
    assert_int_equal(n->cpus_alloc, 0);
    assert_int_equal(n->cpus_total, 8);
    tu_parsed_clear(&p);
}

static void test_scontrol_errors(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"NodeName=n1 CPUTot=many\n", "line 1: node n1: CPUTot"},
        {"NodeName=n1 State=IDLE\nNodeName=n2 Gres=gpu:a100:x:1\n", "line 2: node n2: Gres"},
        {"NodeName=n1 State=IDLE\n bogus NodeName=n2\n", "line 2: expected Key=value"},
        {"NodeName=n1 State=IDLE\nState=IDLE NodeName=n3\n", "expected NodeName= first"},
        {"NodeName=n1 CfgTRES=cpu=x\n", "CfgTRES"},
        {"NodeName=n1 State=IDLE++\n", "State"},
        {"NodeName=n\xff State=IDLE\n", "UTF-8"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_parsed_t p;
        sa_error_t err;
        sa_reader_t r;
        sa_sink_t sink = {NULL, NULL, NULL, NULL, false, NULL};
        sa_error_clear(&err);
        sa_reader_init_mem(&r, cases[i].text, strlen(cases[i].text));
        if (sa_parse_scontrol_nodes_text(&r, &sink, &err))
            fail_msg("'%s' parsed", cases[i].text);
        if (!strstr(err.message, cases[i].want))
            fail_msg("'%s': error '%s' lacks '%s'", cases[i].text, err.message, cases[i].want);
        (void)p;
    }
}

/* ---- the repository's fixtures ----------------------------------------------------------- */

/* scontrol show nodes -o of every version and of the real 22.05 cluster. */
static void test_fixture_scontrol_text(void **state)
{
    tu_parsed_t p;
    sa_node_t *n;
    (void)state;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        tu_parse_gen(*v, "scontrol-nodes-o.txt", &p);
        assert_int_equal(p.kind, SA_KIND_SCONTROL_NODES_TEXT);
        assert_int_equal(p.nnodes, 24);
        n = tu_find_node(&p, "c0001");
        assert_non_null(n);
        assert_string_equal(tu_state(&n->state), "IDLE+DRAIN");
        assert_string_equal(n->reason, "disk failure ticket-123");
        assert_string_equal(n->reason_user, "root");
        assert_int_equal(n->reason_time, TU_GEN_AT - 3600);
        assert_int_equal(n->cpus_total, 16);
        assert_string_equal(tu_json_str(n->extra, "OS"), "Linux 5.14.0-427.el9.x86_64 #1 SMP"); /* blanks inside */
        n = tu_find_node(&p, "c0004"); /* never registered */
        assert_non_null(n);
        assert_string_equal(tu_state(&n->state), "UNKNOWN+DRAIN+NOT_RESPONDING");
        assert_int_equal(n->mem_free_mb, SA_UNSET); /* FreeMem=N/A */
        assert_string_equal(tu_json_str(n->extra, "CPULoad"), "N/A");
        assert_string_equal(tu_json_str(n->extra, "BootTime"), "None");
        assert_string_equal(tu_state(&tu_find_node(&p, "c0005")->state), "IDLE+MAINTENANCE+RESERVED");
        n = tu_find_node(&p, "c0002");
        assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
        assert_int_equal(n->cpus_alloc, 8);
        assert_int_equal(n->cpus_idle, 8);
        n = tu_find_node(&p, "gm001"); /* MIG types; GPUs in use from AllocTRES */
        assert_int_equal(sa_gpus_get(&n->gpus_total, "nvidia_a100_80gb_pcie_3g.40gb"), 4);
        assert_int_equal(sa_gpus_get(&n->gpus_used, "nvidia_a100_80gb_pcie_1g.10gb"), 2);
        assert_int_equal(n->partitions.n, 2);
        n = tu_find_node(&p, "ga001");
        assert_int_equal(sa_gpus_get(&n->gpus_total, "a100"), 4);
        assert_int_equal(sa_gpus_total(&n->gpus_used), 0);
        assert_int_equal(sa_gpus_get(&tu_find_node(&p, "gu01")->gpus_used, ""), 2);
        tu_parsed_clear(&p);
    }
    tu_parse_fixture("slurm-22.05/scontrol-nodes-o-B.txt", &p);
    assert_int_equal(p.nnodes, 3);
    n = tu_find_node(&p, "ghost2");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED");
    assert_null(n->reason);
    n = tu_find_node(&p, "vm");
    assert_non_null(n);
    assert_string_equal(tu_state(&n->state), "MIXED+DRAIN");
    assert_string_equal(n->reason, "scheduled maintenance");
    assert_string_equal(n->reason_user, "root");
    assert_int_equal(n->reason_time, 1795674499 /* 2026-11-26T06:28:19Z */);
    assert_int_equal(sa_gpus_get(&n->gpus_total, "a100"), 2);
    assert_int_equal(sa_gpus_get(&n->gpus_used, "a100"), 2);
    assert_int_equal(n->mem_alloc_mb, 500);
    assert_string_equal(tu_json_str(n->extra, "Version"), "22.05.8");
    assert_string_equal(tu_json_str(n->extra, "CfgTRES"), "cpu=2,mem=4000M,billing=2,gres/gpu=2,gres/gpu:a100=2");
    tu_parsed_clear(&p);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scontrol_local),
        cmocka_unit_test(test_scontrol_habrok),
        cmocka_unit_test(test_scontrol_text_forms),
        cmocka_unit_test(test_scontrol_errors),
        cmocka_unit_test(test_fixture_scontrol_text),
    };
    return tu_run_group_tests("scontrol_text", tests, NULL, NULL);
}
