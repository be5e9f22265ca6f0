/*
 * parse_node_json.c - node records from Slurm's JSON node outputs, every version.
 *
 * Two shapes (sinfo --json changed shape in Slurm 23.02; see sinfo(1), scontrol(1) and the
 * REST API reference of Slurm's documentation, slurm.schedmd.com/rest_api.html):
 *
 *  - The node list: one element of a top-level "nodes" array. Produced by
 *    `scontrol show nodes --json`, slurmrestd GET /slurm/vX/nodes, and `sinfo --json`
 *    in 21.08/22.05 (openapi v0.0.37/38). One element is one node, every count is
 *    per node -> sa_node_from_json().
 *
 *  - The sinfo record list: elements of a top-level "sinfo" array (`sinfo --json`
 *    and `sinfo -N --json`, 23.02+). One element is one sinfo output *group* of one
 *    partition -> the sa_sinfo_acc_* accumulator, which expands each group to its
 *    node names and merges a node listed in several groups (one per partition) into
 *    one record with all its partitions.
 *
 * The shape of each field is decided where it is read (plain int, {set,infinite,
 * number}, raw sentinel; lower-case state string + state_flags, or a state list),
 * never per file: hand-merged files mix shapes in one array.
 *
 * Pure: no I/O. Errors are one line and name the node (or the sinfo group).
 */
#include "sa_parse.h"

#include <stdlib.h>
#include <string.h>

#include "sa_vec.h"
#include "sa_json.h"
#include "sa_hostlist.h"
#include "sa_tres.h"

/* Counts larger than this are rejected as garbage (2^53, exact in a double). */
#define COUNT_MAX (INT64_C(1) << 53)

/* ---- small helpers ------------------------------------------------------------- */

/*
 * Reads o[key] as a non-negative count (CPUs, MB) in any Slurm encoding: plain
 * number, {set,infinite,number}, null, raw NO_VAL sentinels (4294967294, -2:
 * free_memory in v0.0.37/38). Unset and INFINITE (meaningless for a count) give
 * SA_UNSET. Fails on other types, on negative numbers and on numbers beyond 2^53.
 */
static bool get_count(const json_t *o, const char *key, int64_t *out, sa_error_t *error)
{
    sa_noval_t nv;

    *out = SA_UNSET;
    if (!o)
        return true;
    if (!sa_json_noval(json_object_get(o, key), false, &nv, key, error))
        return false;
    if (!nv.set)
        return true;
    if (nv.value < 0 || nv.value > COUNT_MAX) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a count between 0 and 2^53, got %lld", key,
                     (long long)nv.value);
        return false;
    }
    *out = nv.value;
    return true;
}

/*
 * Adds the partition names in o[key] to *out (sorted, unique): a JSON array of
 * strings (every version) or a comma-separated string. Names keep their case.
 */
static bool get_partitions(const json_t *o, const char *key, sa_strv_t *out, sa_error_t *error)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    const json_t *item;
    size_t i;

    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v)) {
        char *copy = strdup(json_string_value(v));
        char *save = NULL;
        bool ok = true;
        if (!copy)
            return sa_error_nomem(error);
        for (char *tok = strtok_r(copy, ", ", &save); tok && ok; tok = strtok_r(NULL, ", ", &save))
            ok = sa_strv_add_sorted_unique(out, tok);
        free(copy);
        return ok ? true : sa_error_nomem(error);
    }
    if (!json_is_array(v)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a list of strings, got %s", key, sa_json_type_name(v));
        return false;
    }
    json_array_foreach(v, i, item) {
        if (!json_is_string(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a list of strings, found %s", key,
                         sa_json_type_name(item));
            return false;
        }
        if (json_string_length(item) == 0)
            continue;
        if (!sa_strv_add_sorted_unique(out, json_string_value(item)))
            return sa_error_nomem(error);
    }
    return true;
}

/* Parses a GRES string into *gpus; the error names key. */
static bool parse_gres(const char *s, const char *key, sa_gpus_t *gpus, sa_error_t *error)
{
    if (!s)
        return true;
    if (!sa_gres_parse_gpus(s, false, gpus, error)) {
        sa_error_prefix(error, "%s", key);
        return false;
    }
    return true;
}

/*
 * GPUs in use from a node's tres_used ("cpu=26,mem=501632M,gres/gpu=9"), for nodes
 * whose gres_used shows none. Typed entries are kept by type; an untyped-only count
 * is attributed to the node's GPU type when the node has exactly one (a MIG node
 * "gpu:1g.10gb:21" with tres_used "gres/gpu=9" -> 1g.10gb: 9), else to type "".
 */
static bool gpus_used_from_tres(const char *tres_used, sa_node_t *node, sa_error_t *error)
{
    sa_tres_t t;
    bool ok = true;

    sa_tres_init(&t);
    if (!sa_tres_parse(tres_used, false, &t, error)) {
        sa_error_prefix(error, "tres_used");
        ok = false;
        goto done;
    }
    if (t.gpu_total <= 0)
        goto done;
    sa_gpus_clear(&node->gpus_used);
    if (t.gpus.n == 1 && t.gpus.v[0].type[0] == '\0' && node->gpus_total.n == 1) {
        ok = sa_gpus_set(&node->gpus_used, node->gpus_total.v[0].type, t.gpus.v[0].count);
    } else if (t.gpus.n == 0) {
        const char *type = node->gpus_total.n == 1 ? node->gpus_total.v[0].type : "";
        ok = sa_gpus_set(&node->gpus_used, type, t.gpu_total);
    } else {
        for (size_t i = 0; i < t.gpus.n && ok; i++)
            ok = sa_gpus_set(&node->gpus_used, t.gpus.v[i].type, t.gpus.v[i].count);
    }
    if (!ok)
        sa_error_nomem(error);
done:
    sa_tres_clear(&t);
    return ok;
}

/* ---- node list element ---------------------------------------------------------- */

/*
 * Keys sa_node_from_json() models. tres_used is read only as a fallback for GPUs in
 * use and so is left in ->extra with everything else.
 */
static const char *const node_known_keys[] = {
    "name",        "state",        "state_flags",  "reason",      "reason_changed_at", "reason_set_by_user",
    "cpus",        "alloc_cpus",   "idle_cpus",    "alloc_idle_cpus", "real_memory",  "alloc_memory",
    "free_memory", "free_mem",     "gres",         "gres_used",   "partitions",        NULL,
};

/*
 * The fields of one node list element, whatever the version:
 *  state        v0.0.37/38: lower-case base string "idle" + "state_flags" array;
 *               v0.0.39+: one list ["IDLE","DRAIN"] (first known base word is the
 *               base, the rest are flags; unknown words are kept upper-cased).
 *  reason_changed_at  int (<= v0.0.39) or {set,infinite,number}; 0 = not set.
 *  idle CPUs    idle_cpus (v0.0.37/38) or alloc_idle_cpus (v0.0.39+).
 *  cpus_other   total - alloc - idle when all three are known and the result is
 *               >= 0; SA_UNSET otherwise (Slurm gives no such count per node).
 *  free memory  free_memory int (v0.0.37/38, -2 = unknown) or free_mem struct.
 *  GPUs         gres -> gpus_total, gres_used -> gpus_used (by type); when gres_used
 *               shows no GPU in use (absent, "", no gpu entry, or all counts 0) but
 *               tres_used accounts gres/gpu > 0, gpus_used comes from tres_used.
 */
static bool node_fields(const json_t *elem, sa_node_t *node, sa_error_t *error)
{
    json_t *v;
    char *tres_used = NULL;
    bool ok = false;

    v = json_object_get(elem, "state");
    if (!sa_json_state(v, sa_node_base_is_known, &node->state, "state", error))
        goto done;
    if (!sa_json_get_words(elem, "state_flags", &node->state.flags, error))
        goto done;

    if (!sa_json_get_str(elem, "reason", &node->reason, error) ||
        !sa_json_get_time(elem, "reason_changed_at", &node->reason_time, error) ||
        !sa_json_get_str(elem, "reason_set_by_user", &node->reason_user, error))
        goto done;

    if (!get_count(elem, "cpus", &node->cpus_total, error) ||
        !get_count(elem, "alloc_cpus", &node->cpus_alloc, error) ||
        !get_count(elem, "alloc_idle_cpus", &node->cpus_idle, error))
        goto done;
    if (node->cpus_idle == SA_UNSET && !get_count(elem, "idle_cpus", &node->cpus_idle, error))
        goto done;
    if (node->cpus_total != SA_UNSET && node->cpus_alloc != SA_UNSET && node->cpus_idle != SA_UNSET &&
        node->cpus_total - node->cpus_alloc - node->cpus_idle >= 0)
        node->cpus_other = node->cpus_total - node->cpus_alloc - node->cpus_idle;

    if (!get_count(elem, "real_memory", &node->mem_total_mb, error) ||
        !get_count(elem, "alloc_memory", &node->mem_alloc_mb, error) ||
        !get_count(elem, "free_mem", &node->mem_free_mb, error))
        goto done;
    if (node->mem_free_mb == SA_UNSET && !get_count(elem, "free_memory", &node->mem_free_mb, error))
        goto done;

    if (!sa_json_get_str(elem, "gres", &node->gres, error) ||
        !parse_gres(node->gres, "gres", &node->gpus_total, error))
        goto done;
    if (!sa_json_get_str(elem, "gres_used", &node->gres_used, error) ||
        !parse_gres(node->gres_used, "gres_used", &node->gpus_used, error))
        goto done;
    if (sa_gpus_total(&node->gpus_used) == 0) {
        if (!sa_json_get_str(elem, "tres_used", &tres_used, error))
            goto done;
        if (tres_used && !gpus_used_from_tres(tres_used, node, error))
            goto done;
    }

    if (!get_partitions(elem, "partitions", &node->partitions, error))
        goto done;

    node->extra = sa_json_extra(elem, node_known_keys);
    ok = true;
done:
    free(tres_used);
    return ok;
}

bool sa_node_from_json(const json_t *elem, sa_node_t *node, sa_error_t *error)
{
    if (!json_is_object(elem)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "node: expected an object, got %s",
                     sa_json_type_name(elem));
        return false;
    }
    if (!sa_json_get_str(elem, "name", &node->name, error)) {
        sa_error_prefix(error, "node");
        return false;
    }
    if (!node->name) {
        sa_error_set(error, SA_ERR_INPUT, 0, "node: name: missing or empty");
        return false;
    }
    if (!node_fields(elem, node, error)) {
        char q[80];
        sa_error_prefix(error, "node %s", sa_error_quote(node->name, 64, q, sizeof q));
        return false;
    }
    return true;
}

/* ---- sinfo >= 23.02 groups ------------------------------------------------------ */

/*
 * What a sinfo group says about each of its nodes.
 *
 * `sinfo --json` groups nodes as its text output does: by partition and by the
 * sinfo state word (node_state_string(): "IDLE", "DRAINED", "MIXED", ...), plus
 * GRES used on releases where --json turns on MATCH_FLAG_GRES_USED. Every other
 * single-valued attribute of a group (reason, gres total, features, comment) is
 * copied from the group's FIRST node, and the counts are sums over the group
 * (src/sinfo/sinfo.c _match_node_data / _update_sinfo). `sinfo -N --json` gives one
 * group per node and partition, where everything is that node's.
 *
 * So, for a group of exactly one node (one name and nodes.total 1 or absent):
 *   every field maps: state, reason{description,time,user}, cpus{total,allocated,
 *   idle,other}, memory{minimum,allocated,free}, gres{total,used}; leftovers of
 *   those objects and unmodelled top-level keys go to ->extra.
 * For a group of several nodes (also when the names list is shorter than
 *   nodes.total, as in a trimmed fixture):
 *   - state: the group's (exact for the first node; the others share its sinfo
 *     state word, e.g. DRAINED covers IDLE+DRAIN and DOWN+DRAIN);
 *   - partitions: exact;
 *   - cpus_total = cpus.minimum when minimum == maximum, mem_total_mb likewise
 *     from memory.minimum/maximum, mem_free_mb from memory.free.minimum/maximum;
 *   - cpus_alloc/idle/other: from the group's sums (cpus.allocated/idle/other), once every
 *     group is in (sa_sinfo_acc_emit, resolve_group_cpus): a group whose CPUs are all in one
 *     state (all allocated, all idle, all other) gives each node its cpus_total in that
 *     state, exactly; a group whose CPUs are in several states, every node listed and none
 *     already given a share by another group, is split evenly over its nodes (cpu_config
 *     SA_NODE_CPUS_SPLIT: exact summed over the group, not per node; nodes whose own counts
 *     another group said exactly are taken out of the sums first); else they stay SA_UNSET
 *     (a node of two overlapping groups of several states, a group whose names list is
 *     shorter than nodes.total): unknown;
 *   - mem_alloc_mb: SA_UNSET (a group sum, not per node);
 *   - gpus_total/gpus_used, gres, gres_used, reason*: unset/empty (the first node's
 *     values, not this node's); when the group's gres names a GPU, gpu_config is
 *     SA_NODE_GPUS_UNKNOWN (the node may have GPUs nobody said; slurm-ingest carries
 *     them from the node's last per-node observation, or says they are unknown);
 *   - the group itself (without the partition object and the node name lists) is
 *     kept in ->extra "sinfo_groups" (an array: one entry per multi-node group the
 *     node was in), so nothing the group said is lost.
 * The partition object is never copied into a node (it is large): only its name.
 */

/* What a group of several nodes says of their CPUs, kept until every group is in. */
typedef struct {
    size_t *idx;            /* its nodes: positions in the accumulator's nodes */
    size_t n;
    int64_t listed;         /* nodes.total (SA_UNSET: not said) */
    int64_t node_total;     /* cpus.minimum when it equals cpus.maximum, else SA_UNSET */
    int64_t sum[4];         /* cpus.allocated, idle, other, total (SA_UNSET when not said) */
} cpu_group_t;

struct sa_sinfo_acc {
    sa_node_t **nodes; /* merged nodes, in order of first appearance */
    size_t n, cap;
    json_t *index;     /* node name -> JSON integer: position in nodes */
    size_t ngroups;    /* groups added so far: sinfo[i] in error messages */
    bool no_extra;     /* the groups' unmodelled keys are not kept (sa_sink_t no_node_extra) */
    cpu_group_t *cg;   /* the groups of several nodes */
    size_t ncg, cgcap;
};

void sa_sinfo_acc_no_extra(sa_sinfo_acc_t *acc)
{
    acc->no_extra = true;
}

sa_sinfo_acc_t *sa_sinfo_acc_new(void)
{
    sa_sinfo_acc_t *acc = calloc(1, sizeof *acc);

    if (!acc)
        return NULL;
    acc->index = json_object();
    if (!acc->index) {
        free(acc);
        return NULL;
    }
    return acc;
}

/* Frees every node and group held and empties the index. */
static void acc_reset(sa_sinfo_acc_t *acc)
{
    for (size_t i = 0; i < acc->n; i++)
        sa_node_destroy(acc->nodes[i]);
    acc->n = 0;
    for (size_t i = 0; i < acc->ncg; i++)
        free(acc->cg[i].idx);
    acc->ncg = 0;
    json_object_clear(acc->index);
}

void sa_sinfo_acc_destroy(sa_sinfo_acc_t *acc)
{
    if (!acc)
        return;
    acc_reset(acc);
    free(acc->nodes);
    free(acc->cg);
    json_decref(acc->index);
    free(acc);
}

/* Keys of a group mapped (or, for "partition", deliberately reduced to its name). */
static const char *const group_known_keys[] = {
    "node", "nodes", "cpus", "memory", "gres", "reason", "reason_set_by_user", "partition", NULL,
};
static const char *const group_node_keys[] = {"state", NULL};
static const char *const group_nodes_keys[] = {"nodes", "allocated", "idle", "other", "total", NULL};
static const char *const group_cpus_keys[] = {"allocated", "idle", "other", "total", "minimum", "maximum", NULL};
static const char *const group_memory_keys[] = {"minimum", "maximum", "allocated", "free", NULL};
static const char *const group_gres_keys[] = {"total", "used", NULL};
static const char *const group_reason_keys[] = {"description", "time", "user", NULL};

/* Reads group["partition"]: an object with "name" (or, leniently, a plain name). */
static bool group_partition(const json_t *group, char **name, sa_error_t *error)
{
    const json_t *p = json_object_get(group, "partition");

    *name = NULL;
    if (!p || json_is_null(p))
        return true;
    if (json_is_string(p))
        return sa_json_get_str(group, "partition", name, error);
    if (!json_is_object(p)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "partition: expected an object, got %s", sa_json_type_name(p));
        return false;
    }
    if (!sa_json_get_str(p, "name", name, error)) {
        sa_error_prefix(error, "partition");
        return false;
    }
    return true;
}

/*
 * Appends the node names of group["nodes"]["nodes"] to *names: an array of names
 * (each may also be a hostlist expression) or one hostlist expression string.
 */
static bool group_names(const json_t *nodes, sa_strv_t *names, sa_error_t *error)
{
    const json_t *v = nodes ? json_object_get(nodes, "nodes") : NULL;
    const json_t *item;
    size_t i;

    if (!v || json_is_null(v))
        return true;
    if (json_is_string(v)) {
        if (!sa_hostlist_expand(json_string_value(v), 0, names, error)) {
            sa_error_prefix(error, "nodes: nodes");
            return false;
        }
        return true;
    }
    if (!json_is_array(v)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "nodes: nodes: expected a list of names, got %s", sa_json_type_name(v));
        return false;
    }
    json_array_foreach(v, i, item) {
        const char *s;
        if (!json_is_string(item)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "nodes: nodes: expected a list of names, found %s",
                         sa_json_type_name(item));
            return false;
        }
        s = json_string_value(item);
        if (strpbrk(s, "[,")) {
            if (!sa_hostlist_expand(s, 0, names, error)) {
                sa_error_prefix(error, "nodes: nodes");
                return false;
            }
        } else if (s[0] && !sa_strv_push(names, s)) {
            return sa_error_nomem(error);
        }
    }
    return true;
}

/* Reads obj[key] as a count; the error names "parent: key". */
static bool sub_count(const json_t *obj, const char *parent, const char *key, int64_t *out, sa_error_t *error)
{
    if (!get_count(obj, key, out, error)) {
        sa_error_prefix(error, "%s", parent);
        return false;
    }
    return true;
}

/* Sets extra[key] to the leftover keys of sub (those not in known), if any. */
static bool put_leftovers(json_t **extra, const char *key, const json_t *sub, const char *const *known,
                          sa_error_t *error)
{
    json_t *left = sa_json_extra(sub, known);

    if (!left)
        return true;
    if (!*extra && !(*extra = json_object())) {
        json_decref(left);
        return sa_error_nomem(error);
    }
    if (json_object_set_new(*extra, key, left) != 0)
        return sa_error_nomem(error);
    return true;
}

/*
 * The summary of a multi-node group kept in each member's extra "sinfo_groups":
 * the group without its partition object (replaced by the partition name) and
 * without the node name / hostname / address lists.
 */
static json_t *group_summary(const json_t *group, const char *partition)
{
    json_t *sum = json_deep_copy(group);
    json_t *nodes;

    if (!sum)
        return NULL;
    json_object_del(sum, "partition");
    if (partition && json_object_set_new(sum, "partition", json_string(partition)) != 0)
        goto fail;
    nodes = json_object_get(sum, "nodes");
    if (json_is_object(nodes)) {
        json_object_del(nodes, "nodes");
        json_object_del(nodes, "hostnames");
        json_object_del(nodes, "addresses");
    }
    return sum;
fail:
    json_decref(sum);
    return NULL;
}

/*
 * True when a sinfo group's gres {total, used} names a GPU: its nodes may have GPUs,
 * which the group does not say per node. `sinfo --json` groups by gres used
 * (MATCH_FLAG_GRES_USED, slurm-24.05 src/sinfo/opts.c), and a GPU node prints its GPUs
 * in gres_used even when none is in use ("gpu:a100:0(IDX:N/A)"), so a group naming no
 * GPU in either string has none.
 */
static bool group_names_gpus(const json_t *gres)
{
    const char *keys[] = {"total", "used"};

    for (int i = 0; i < 2; i++) {
        const char *v = json_string_value(json_object_get(gres, keys[i]));
        if (v && strstr(v, "gpu"))
            return true;
    }
    return false;
}

/*
 * What a group of several nodes says of each: its CPU sums into *cg (split or given once
 * every group is in, resolve_group_cpus), whether its nodes may have GPUs nobody said, and
 * the group itself, kept in proto's extra "sinfo_groups" (its sums and first-node values
 * are not any node's).
 */
static bool several_nodes(const json_t *group, const char *partition, const json_t *cpus, const json_t *gres,
                          sa_node_t *proto, cpu_group_t *cg, sa_error_t *error)
{
    static const char *const sum_keys[4] = {"allocated", "idle", "other", "total"};
    json_t *arr;

    for (int k = 0; k < 4; k++) {
        if (!sub_count(cpus, "cpus", sum_keys[k], &cg->sum[k], error))
            return false;
    }
    if (group_names_gpus(gres))
        proto->gpu_config = SA_NODE_GPUS_UNKNOWN;
    arr = json_array();
    if (!arr || json_array_append_new(arr, group_summary(group, partition)) != 0) {
        json_decref(arr);
        return sa_error_nomem(error);
    }
    if (!(proto->extra = json_object())) {
        json_decref(arr);
        return sa_error_nomem(error);
    }
    if (json_object_set_new(proto->extra, "sinfo_groups", arr) != 0)
        return sa_error_nomem(error);
    return true;
}

/*
 * Reads one sinfo group into *proto (a node record without a name, holding what the
 * group says about each member; see the comment above struct sa_sinfo_acc) and its
 * expanded member names into *names; for a group of several nodes, what it says of
 * their CPUs into *cg (cg->n 0: a group of one node).
 */
static bool group_to_proto(const json_t *group, const char *partition, sa_node_t *proto, sa_strv_t *names,
                           cpu_group_t *cg, sa_error_t *error)
{
    json_t *nodes, *nodeo, *cpus, *memory, *free_mem = NULL, *gres, *reason;
    int64_t total_nodes, cmin, cmax, mmin, mmax, fmin, fmax;
    bool single;

    if (partition && !sa_strv_add_sorted_unique(&proto->partitions, partition))
        return sa_error_nomem(error);

    if (!sa_json_get_obj(group, "nodes", &nodes, error) || !group_names(nodes, names, error) ||
        !sub_count(nodes, "nodes", "total", &total_nodes, error))
        return false;
    single = names->n == 1 && (total_nodes == SA_UNSET || total_nodes == 1);

    if (!sa_json_get_obj(group, "node", &nodeo, error))
        return false;
    if (nodeo && !sa_json_state(json_object_get(nodeo, "state"), sa_node_base_is_known, &proto->state, "state",
                                error)) {
        sa_error_prefix(error, "node");
        return false;
    }

    /* per-node configuration: exact whenever the group's minimum equals its maximum */
    if (!sa_json_get_obj(group, "cpus", &cpus, error) || !sub_count(cpus, "cpus", "minimum", &cmin, error) ||
        !sub_count(cpus, "cpus", "maximum", &cmax, error))
        return false;
    if (cmin != SA_UNSET && cmin == cmax)
        proto->cpus_total = cmin;
    if (!sa_json_get_obj(group, "memory", &memory, error) || !sub_count(memory, "memory", "minimum", &mmin, error) ||
        !sub_count(memory, "memory", "maximum", &mmax, error))
        return false;
    if (mmin != SA_UNSET && mmin == mmax)
        proto->mem_total_mb = mmin;
    if (memory && !sa_json_get_obj(memory, "free", &free_mem, error)) {
        sa_error_prefix(error, "memory");
        return false;
    }
    if (!sub_count(free_mem, "memory: free", "minimum", &fmin, error) ||
        !sub_count(free_mem, "memory: free", "maximum", &fmax, error))
        return false;
    if (fmin != SA_UNSET && fmin == fmax)
        proto->mem_free_mb = fmin;

    /* reason is {description,time,user}; a plain string is taken as the description */
    reason = json_object_get(group, "reason");
    if (json_is_string(reason))
        reason = NULL;
    else if (!sa_json_get_obj(group, "reason", &reason, error))
        return false;
    if (!sa_json_get_obj(group, "gres", &gres, error))
        return false;

    if (!single) {
        cg->n = names->n;
        cg->listed = total_nodes;
        cg->node_total = cmin != SA_UNSET && cmin == cmax ? cmin : SA_UNSET;
        return several_nodes(group, partition, cpus, gres, proto, cg, error);
    }

    /* one node: the group's values are that node's */
    if (!sub_count(cpus, "cpus", "total", &proto->cpus_total, error) ||
        !sub_count(cpus, "cpus", "allocated", &proto->cpus_alloc, error) ||
        !sub_count(cpus, "cpus", "idle", &proto->cpus_idle, error) ||
        !sub_count(cpus, "cpus", "other", &proto->cpus_other, error))
        return false;
    if (proto->cpus_total == SA_UNSET && cmin != SA_UNSET && cmin == cmax)
        proto->cpus_total = cmin;
    if (!sub_count(memory, "memory", "allocated", &proto->mem_alloc_mb, error))
        return false;

    if (gres) {
        if (!sa_json_get_str(gres, "total", &proto->gres, error) ||
            !sa_json_get_str(gres, "used", &proto->gres_used, error)) {
            sa_error_prefix(error, "gres");
            return false;
        }
        if (!parse_gres(proto->gres, "gres: total", &proto->gpus_total, error) ||
            !parse_gres(proto->gres_used, "gres: used", &proto->gpus_used, error))
            return false;
    }
    if (reason) {
        if (!sa_json_get_str(reason, "description", &proto->reason, error) ||
            !sa_json_get_time(reason, "time", &proto->reason_time, error) ||
            !sa_json_get_str(reason, "user", &proto->reason_user, error)) {
            sa_error_prefix(error, "reason");
            return false;
        }
    } else if (!sa_json_get_str(group, "reason", &proto->reason, error)) {
        return false;
    }
    if (!proto->reason_user && !sa_json_get_str(group, "reason_set_by_user", &proto->reason_user, error))
        return false;

    proto->extra = sa_json_extra(group, group_known_keys);
    if (!put_leftovers(&proto->extra, "node", nodeo, group_node_keys, error) ||
        !put_leftovers(&proto->extra, "nodes", nodes, group_nodes_keys, error) ||
        !put_leftovers(&proto->extra, "cpus", cpus, group_cpus_keys, error) ||
        !put_leftovers(&proto->extra, "memory", memory, group_memory_keys, error) ||
        !put_leftovers(&proto->extra, "gres", gres, group_gres_keys, error) ||
        !put_leftovers(&proto->extra, "reason", reason, group_reason_keys, error))
        return false;
    return true;
}

/* Copies *src's state into an empty *dst. */
static bool state_copy(sa_state_t *dst, const sa_state_t *src)
{
    if (src->base && !(dst->base = strdup(src->base)))
        return false;
    for (size_t i = 0; i < src->flags.n; i++) {
        if (!sa_strv_add_sorted_unique(&dst->flags, src->flags.v[i]))
            return false;
    }
    return true;
}

/* Ensures node->extra exists. */
static bool extra_obj(sa_node_t *node)
{
    if (!node->extra)
        node->extra = json_object();
    return node->extra != NULL;
}

/* Records in extra "state_conflict" (unique strings) a state that disagreed with the kept one. */
static bool note_state_conflict(sa_node_t *node, const sa_state_t *other)
{
    char *s = sa_state_format(other);
    json_t *arr, *item;
    size_t i;
    bool ok = false;

    if (!s || !extra_obj(node))
        goto done;
    arr = json_object_get(node->extra, "state_conflict");
    if (!json_is_array(arr)) {
        arr = json_array();
        if (!arr || json_object_set_new(node->extra, "state_conflict", arr) != 0)
            goto done;
    }
    json_array_foreach(arr, i, item) {
        if (json_is_string(item) && strcmp(json_string_value(item), s) == 0) {
            ok = true;
            goto done;
        }
    }
    ok = json_array_append_new(arr, json_string(s)) == 0;
done:
    free(s);
    return ok;
}

/* Merges src's extra into dst's: "sinfo_groups" arrays are concatenated, other keys kept first-come. */
static bool merge_extra(sa_node_t *dst, const json_t *src)
{
    const char *key;
    json_t *value;

    if (!src)
        return true;
    if (!extra_obj(dst))
        return false;
    json_object_foreach((json_t *)src, key, value) {
        json_t *have = json_object_get(dst->extra, key);
        if (have && strcmp(key, "sinfo_groups") == 0 && json_is_array(have) && json_is_array(value)) {
            size_t i;
            json_t *item;
            json_array_foreach(value, i, item) {
                if (json_array_append_new(have, json_deep_copy(item)) != 0)
                    return false;
            }
        } else if (!have && json_object_set_new(dst->extra, key, json_deep_copy(value)) != 0) {
            return false;
        }
    }
    return true;
}

/* Copies src's string into *dst when *dst is unset. */
static bool fill_str(char **dst, const char *src)
{
    if (*dst || !src)
        return true;
    *dst = strdup(src);
    return *dst != NULL;
}

/* Copies src's GPU counts into *dst when *dst is empty. */
static bool fill_gpus(sa_gpus_t *dst, const sa_gpus_t *src)
{
    if (dst->n)
        return true;
    for (size_t i = 0; i < src->n; i++) {
        if (!sa_gpus_set(dst, src->v[i].type, src->v[i].count))
            return false;
    }
    return true;
}

static void fill_int(int64_t *dst, int64_t src)
{
    if (*dst == SA_UNSET)
        *dst = src;
}

bool sa_node_merge(sa_node_t *dst, const sa_node_t *src)
{
    if (!dst->state.base && dst->state.flags.n == 0) {
        if (!state_copy(&dst->state, &src->state))
            return false;
    } else if ((src->state.base || src->state.flags.n) && !sa_state_equal(&dst->state, &src->state)) {
        if (!note_state_conflict(dst, &src->state))
            return false;
    }
    for (size_t i = 0; i < src->partitions.n; i++) {
        if (!sa_strv_add_sorted_unique(&dst->partitions, src->partitions.v[i]))
            return false;
    }
    if (!fill_str(&dst->reason, src->reason) || !fill_str(&dst->reason_user, src->reason_user) ||
        !fill_str(&dst->gres, src->gres) || !fill_str(&dst->gres_used, src->gres_used))
        return false;
    fill_int(&dst->reason_time, src->reason_time);
    fill_int(&dst->cpus_total, src->cpus_total);
    fill_int(&dst->cpus_alloc, src->cpus_alloc);
    fill_int(&dst->cpus_idle, src->cpus_idle);
    fill_int(&dst->cpus_other, src->cpus_other);
    fill_int(&dst->mem_total_mb, src->mem_total_mb);
    fill_int(&dst->mem_alloc_mb, src->mem_alloc_mb);
    fill_int(&dst->mem_free_mb, src->mem_free_mb);
    if (src->gpu_config == SA_NODE_GPUS_UNKNOWN && !dst->gpus_total.n && !src->gpus_total.n)
        dst->gpu_config = SA_NODE_GPUS_UNKNOWN;
    else if (src->gpus_total.n)
        dst->gpu_config = SA_NODE_GPUS_OBSERVED; /* one group said this node's own GPUs */
    if (!fill_gpus(&dst->gpus_total, &src->gpus_total) || !fill_gpus(&dst->gpus_used, &src->gpus_used))
        return false;
    return merge_extra(dst, src->extra);
}

/* Returns the accumulated record for name, creating it; NULL on OOM. */
static sa_node_t *acc_node(sa_sinfo_acc_t *acc, const char *name)
{
    json_t *pos = json_object_get(acc->index, name);
    sa_node_t *node;

    if (pos)
        return acc->nodes[json_integer_value(pos)];
    if (!SA_VEC_GROW(acc->nodes, acc->cap, acc->n, 1, 64))
        return NULL;
    node = sa_node_new();
    if (!node)
        return NULL;
    node->name = strdup(name);
    if (!node->name || json_object_set_new(acc->index, name, json_integer((json_int_t)acc->n)) != 0) {
        sa_node_destroy(node);
        return NULL;
    }
    acc->nodes[acc->n++] = node;
    return node;
}

bool sa_sinfo_acc_add(sa_sinfo_acc_t *acc, const json_t *group, sa_error_t *error)
{
    sa_node_t *proto = NULL;
    sa_strv_t names;
    char *partition = NULL;
    size_t gno = acc->ngroups++;
    cpu_group_t cg = {NULL, 0, SA_UNSET, SA_UNSET, {SA_UNSET, SA_UNSET, SA_UNSET, SA_UNSET}};
    bool ok = false;

    sa_strv_init(&names);
    if (!json_is_object(group)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "expected an object, got %s", sa_json_type_name(group));
        goto done;
    }
    if (!group_partition(group, &partition, error))
        goto done;
    if (!(proto = sa_node_new())) {
        sa_error_nomem(error);
        goto done;
    }
    if (!group_to_proto(group, partition, proto, &names, &cg, error))
        goto done;
    if (acc->no_extra) {
        json_decref(proto->extra);
        proto->extra = NULL;
    }
    if (cg.n && !(cg.idx = calloc(cg.n, sizeof *cg.idx))) {
        sa_error_nomem(error);
        goto done;
    }
    for (size_t i = 0; i < names.n; i++) {
        sa_node_t *node = acc_node(acc, names.v[i]);
        /* one node, one group per partition: a second group of the same partition is a second listing */
        if (node && partition && sa_strv_contains(&node->partitions, partition))
            node->listed_twice = true;
        if (!node || !sa_node_merge(node, proto)) {
            sa_error_nomem(error);
            goto done;
        }
        if (cg.n)
            cg.idx[i] = (size_t)json_integer_value(json_object_get(acc->index, names.v[i]));
    }
    if (cg.n) {
        if (!SA_VEC_GROW(acc->cg, acc->cgcap, acc->ncg, 1, 16)) {
            sa_error_nomem(error);
            goto done;
        }
        acc->cg[acc->ncg++] = cg;
        cg.idx = NULL;
    }
    ok = true;
done:
    if (!ok) {
        char q[80];
        if (partition)
            sa_error_prefix(error, "sinfo[%zu] (partition %s)", gno,
                            sa_error_quote(partition, 64, q, sizeof q));
        else
            sa_error_prefix(error, "sinfo[%zu]", gno);
    }
    sa_node_destroy(proto);
    sa_strv_clear(&names);
    free(cg.idx);
    free(partition);
    return ok;
}

/* ---- the CPUs of grouped nodes ---------------------------------------------------------- */

/* True when the group's sums are said and add up: allocated + idle + other = total, none negative. */
static bool sums_usable(const cpu_group_t *g)
{
    for (int k = 0; k < 4; k++) {
        if (g->sum[k] == SA_UNSET || g->sum[k] < 0)
            return false;
    }
    return g->sum[0] + g->sum[1] + g->sum[2] == g->sum[3];
}

/* The one state (0 allocated, 1 idle, 2 other) all the group's CPUs are in, else -1. */
static int one_state(const cpu_group_t *g)
{
    for (int k = 0; k < 3; k++) {
        if (g->sum[k] == g->sum[3] && g->sum[3] > 0)
            return k;
    }
    return -1;
}

/* Sets node's CPU counts: its cpus_total in state k, none in the others. */
static void set_one_state(sa_node_t *node, int k)
{
    int64_t *c[3] = {&node->cpus_alloc, &node->cpus_idle, &node->cpus_other};
    for (int j = 0; j < 3; j++)
        *c[j] = j == k ? node->cpus_total : 0;
}

/* The i-th of n even shares of v: the first v mod n get one more (from_end: the last ones). */
static int64_t share(int64_t v, size_t n, size_t i, bool from_end)
{
    size_t r = (size_t)(v % (int64_t)n), pos = from_end ? n - 1 - i : i;
    return v / (int64_t)n + (pos < r ? 1 : 0);
}

/*
 * Splits what remains of group g's sums (rest: allocated, idle, other, total) evenly over
 * its nodes todo[0..nt): allocated from the first nodes, other from the last, idle the
 * rest of each node's total, so that every sum and every node's total stay exact.
 */
static void split_group(sa_sinfo_acc_t *acc, const cpu_group_t *g, const int64_t rest[4], const size_t *todo,
                        size_t nt)
{
    for (size_t i = 0; i < nt; i++) {
        sa_node_t *node = acc->nodes[todo[i]];
        int64_t total = g->node_total != SA_UNSET ? g->node_total : share(rest[3], nt, i, false);
        node->cpus_total = total;
        node->cpus_alloc = share(rest[0], nt, i, false);
        node->cpus_other = share(rest[2], nt, i, true);
        node->cpus_idle = total - node->cpus_alloc - node->cpus_other;
        node->cpu_config = SA_NODE_CPUS_SPLIT;
    }
}

/* A group's position and size, to take the groups largest first. */
typedef struct {
    size_t n, pos;
} group_order_t;

/* Largest first, then as they came (qsort of group_order_t). */
static int cmp_group_size(const void *a, const void *b)
{
    const group_order_t *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * Gives the nodes of the groups of several nodes their CPU counts from the groups' sums
 * (the comment above struct sa_sinfo_acc): first every group whose CPUs are all in one
 * state (exact per node, when its nodes' total is said), then, largest first, each group
 * of several states whose nodes are all listed and none split by another group: the sums
 * less the nodes already exact, split evenly over the others. Changes the nodes only.
 */
static bool resolve_group_cpus(sa_sinfo_acc_t *acc)
{
    group_order_t *order = NULL;
    size_t *todo = NULL, maxn = 0;
    bool ok = false;

    for (size_t gi = 0; gi < acc->ncg; gi++) {
        const cpu_group_t *g = &acc->cg[gi];
        int k = sums_usable(g) ? one_state(g) : -1;
        maxn = g->n > maxn ? g->n : maxn;
        for (size_t i = 0; k >= 0 && g->node_total != SA_UNSET && i < g->n; i++) {
            sa_node_t *node = acc->nodes[g->idx[i]];
            if (node->cpus_alloc == SA_UNSET && node->cpus_total == g->node_total)
                set_one_state(node, k);
        }
    }
    if (!acc->ncg)
        return true;
    if (!(order = calloc(acc->ncg, sizeof *order)) || !(todo = calloc(maxn ? maxn : 1, sizeof *todo)))
        goto done;
    for (size_t gi = 0; gi < acc->ncg; gi++)
        order[gi] = (group_order_t){acc->cg[gi].n, gi};
    qsort(order, acc->ncg, sizeof *order, cmp_group_size);
    for (size_t oi = 0; oi < acc->ncg; oi++) {
        const cpu_group_t *g = &acc->cg[order[oi].pos];
        int64_t rest[4];
        size_t nt = 0;
        bool split_before = false;
        if (!sums_usable(g) || (one_state(g) >= 0 && g->node_total != SA_UNSET) ||
            (g->listed != SA_UNSET && (int64_t)g->n != g->listed))
            continue; /* done exactly above, or its names do not say all its nodes */
        memcpy(rest, g->sum, sizeof rest);
        for (size_t i = 0; i < g->n; i++) {
            const sa_node_t *node = acc->nodes[g->idx[i]];
            split_before = split_before || node->cpu_config == SA_NODE_CPUS_SPLIT;
            if (node->cpus_alloc == SA_UNSET || node->cpus_idle == SA_UNSET || node->cpus_other == SA_UNSET ||
                node->cpus_total == SA_UNSET) {
                todo[nt++] = g->idx[i];
                continue;
            }
            rest[0] -= node->cpus_alloc; /* said exactly: taken out of the sums */
            rest[1] -= node->cpus_idle;
            rest[2] -= node->cpus_other;
            rest[3] -= node->cpus_total;
        }
        if (split_before || !nt || rest[0] < 0 || rest[1] < 0 || rest[2] < 0 ||
            rest[0] + rest[1] + rest[2] != rest[3] ||
            (g->node_total != SA_UNSET && rest[3] != g->node_total * (int64_t)nt))
            continue;
        split_group(acc, g, rest, todo, nt);
    }
    ok = true;
done:
    free(order);
    free(todo);
    return ok;
}

static int cmp_node_name(const void *a, const void *b)
{
    const sa_node_t *x = *(sa_node_t *const *)a;
    const sa_node_t *y = *(sa_node_t *const *)b;
    return strcmp(x->name, y->name);
}

/*
 * Hands every merged node to sink->on_node in name order (byte order of the names)
 * and frees it after the callback (records are borrowed; steal to keep). Leaves the
 * accumulator empty, also on failure; a callback returning false stops the emission.
 */
bool sa_sinfo_acc_emit(sa_sinfo_acc_t *acc, const sa_sink_t *sink, sa_error_t *error)
{
    bool ok = resolve_group_cpus(acc);

    if (!ok)
        sa_error_nomem(error);
    if (ok && acc->n > 1)
        qsort(acc->nodes, acc->n, sizeof *acc->nodes, cmp_node_name);
    for (size_t i = 0; i < acc->n && ok; i++) {
        sa_node_t *node = acc->nodes[i];
        if (sink && sink->on_node)
            ok = sink->on_node(node, sink->ctx, error);
    }
    acc_reset(acc);
    return ok;
}
