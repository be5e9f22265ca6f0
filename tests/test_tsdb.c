/*
 * test_tsdb.c - the SQLite time series (schema/tsdb/sa_tsdb.c): intervals, exact states
 * from every real node sample and every node fixture of fixtures/gen (each version) and
 * fixtures/slurm-22.05, GPU types (MIG), hours by state, gaps, replay order,
 * crash safety (kill -9), a reader beside a writer, and the error cases (foreign,
 * corrupt, newer schema, locked, disk full) leaving the previous contents intact.
 */
#include "testutil.h"
#include "tu_parse.h"
#include "tu_archive.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sa_sdiag.h"
#include "sa_tsdb.h"

#define T0 1760000000 /* 2025-10-09T08:53:20Z */

static char tmpdir[256];

/* A fresh database path in the test directory (old files removed). */
static const char *dbpath(const char *name)
{
    static char path[512];
    char extra[600];

    snprintf(path, sizeof path, "%s/%s.db", tmpdir, name);
    unlink(path);
    snprintf(extra, sizeof extra, "%s-wal", path);
    unlink(extra);
    snprintf(extra, sizeof extra, "%s-shm", path);
    unlink(extra);
    return path;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_tsdb.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    char cmd[300];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

static sa_tsdb_t *open_ok(const char *path)
{
    sa_error_t err;
    sa_tsdb_t *db = sa_tsdb_open(path, false, 5000, &err);
    if (!db)
        fail_msg("open %s: %s", path, err.message);
    return db;
}

/*
 * A node: state "BASE+FLAG+...", CPUs total/alloc, partitions "a,b", GPUs of one type
 * (type NULL: none), reason (may be NULL).
 */
static sa_node_t *mk(const char *name, const char *state, int64_t cpus, int64_t alloc, const char *parts,
                     const char *gpu_type, int64_t gpus, int64_t gpus_used, const char *reason)
{
    sa_node_t *n = sa_node_new();
    char buf[256], *tok, *save = NULL;
    bool first = true;

    assert_non_null(n);
    n->name = strdup(name);
    snprintf(buf, sizeof buf, "%s", state);
    for (tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save), first = false) {
        if (first)
            n->state.base = strdup(tok);
        else
            assert_true(sa_strv_add_sorted_unique(&n->state.flags, tok));
    }
    n->cpus_total = cpus;
    n->cpus_alloc = alloc;
    n->cpus_idle = cpus - alloc;
    n->cpus_other = 0;
    n->mem_total_mb = 256000;
    n->mem_alloc_mb = alloc * 1000;
    snprintf(buf, sizeof buf, "%s", parts);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        assert_true(sa_strv_add_sorted_unique(&n->partitions, tok));
    if (gpu_type) {
        assert_true(sa_gpus_set(&n->gpus_total, gpu_type, gpus));
        assert_true(sa_gpus_set(&n->gpus_used, gpu_type, gpus_used));
    }
    if (reason)
        n->reason = strdup(reason);
    return n;
}

static void free_nodes(sa_node_t **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sa_node_destroy(v[i]);
}

static void write_ok(sa_tsdb_t *db, const char *cluster, int64_t at, sa_node_t **nodes, size_t n,
                     const sa_tsdb_opts_t *opts)
{
    sa_error_t err;
    if (!sa_tsdb_write_snapshot(db, cluster, at, nodes, n, opts, &err))
        fail_msg("write at %lld: %s", (long long)at, err.message);
}

static void verify_ok(sa_tsdb_t *db, const char *cluster, size_t want_snapshots)
{
    sa_error_t err;
    size_t n;
    if (!sa_tsdb_verify(db, cluster, &n, &err))
        fail_msg("verify: %s", err.message);
    if (want_snapshots != (size_t)-1)
        assert_int_equal(n, want_snapshots);
}

/* One integer from SQL through the handle's connection. */
static int64_t sql_int(sa_tsdb_t *db, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    assert_int_equal(sqlite3_prepare_v2(sa_tsdb_handle(db), sql, -1, &s, NULL), SQLITE_OK);
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* Appends the rows of a query (columns '|'-joined, one row a line) to a growing string. */
static void dump_query(sqlite3 *conn, const char *sql, char **out, size_t *len)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(conn, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(conn));
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(s); i++) {
            const char *t = (const char *)sqlite3_column_text(s, i);
            size_t add = (t ? strlen(t) : 4) + 2;
            *out = realloc(*out, *len + add + 1);
            assert_non_null(*out);
            *len += (size_t)sprintf(*out + *len, "%s%c", t ? t : "NULL", i + 1 < sqlite3_column_count(s) ? '|' : '\n');
        }
    }
    assert_int_equal(rc, SQLITE_DONE);
    sqlite3_finalize(s);
}

/* The whole database as text, by names (ids differ with arrival order). Caller frees. */
static char *canonical_dump(sa_tsdb_t *db)
{
    static const char *const queries[] = {
        "SELECT c.name, s.at, s.nodes FROM snapshot s JOIN cluster c ON c.id = s.cluster_id ORDER BY 1, 2",
        "SELECT c.name, g.start, g.end FROM gap g JOIN cluster c ON c.id = g.cluster_id ORDER BY 1, 2",
        "SELECT cluster, node, start, end, open, state, base, flags, reason, partitions, cpus_total, cpus_alloc,"
        " cpus_idle, cpus_other, mem_total_mb, mem_alloc_mb, (SELECT group_concat(x, ',') FROM (SELECT t.name"
        " || ':' || g.total || ':' || g.used AS x FROM attr_gpu g JOIN gpu_type t ON t.id = g.gpu_type_id"
        " WHERE g.attr_id = sp.attr_id ORDER BY t.name)) FROM node_interval_span sp ORDER BY 1, 2, 3",
        "SELECT c.name, n.name, i.start FROM node_interval i JOIN node n ON n.id = i.node_id JOIN cluster c"
        " ON c.id = n.cluster_id WHERE i.attr_id IS NULL ORDER BY 1, 2, 3",
        "SELECT c.name, n.name, st.text, a.cpus_alloc, a.mem_alloc_mb FROM node n JOIN cluster c ON c.id ="
        " n.cluster_id LEFT JOIN attr a ON a.id = n.cur_attr_id LEFT JOIN state st ON st.id = a.state_id"
        " ORDER BY 1, 2",
        "SELECT * FROM total_named ORDER BY cluster, at, state, partition",
        "SELECT * FROM gpu_total_named ORDER BY cluster, at, state, partition, gpu_type",
        "SELECT c.name, s.at, s.jobs_pending, s.bf_cycle_last FROM sched s JOIN cluster c ON c.id ="
        " s.cluster_id ORDER BY 1, 2",
    };
    char *out = NULL;
    size_t len = 0;

    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        out = realloc(out, len + 8);
        len += (size_t)sprintf(out + len, "--\n");
        dump_query(sa_tsdb_handle(db), queries[i], &out, &len);
    }
    return out;
}

/* ---- hours ----------------------------------------------------------------------------- */

typedef struct {
    char state[64], group[64];
    sa_tsdb_hours_t h;
} hrow_t;

typedef struct {
    hrow_t v[64];
    size_t n;
} hrows_t;

static bool collect_hours(const sa_tsdb_hours_t *row, void *ctx, sa_error_t *error)
{
    hrows_t *r = ctx;
    (void)error;
    assert_true(r->n < 64);
    snprintf(r->v[r->n].state, sizeof r->v[r->n].state, "%s", row->state);
    snprintf(r->v[r->n].group, sizeof r->v[r->n].group, "%s", row->group ? row->group : "(null)");
    r->v[r->n].h = *row;
    r->n++;
    return true;
}

static void hours(sa_tsdb_t *db, const char *cluster, int64_t from, int64_t to, sa_tsdb_group_t by, hrows_t *out)
{
    sa_error_t err;
    memset(out, 0, sizeof *out);
    if (!sa_tsdb_state_hours(db, cluster, from, to, by, collect_hours, out, &err))
        fail_msg("state_hours: %s", err.message);
}

/* The row of (group, state); fails when absent. */
static const sa_tsdb_hours_t *hfind(const hrows_t *r, const char *group, const char *state)
{
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->v[i].state, state) == 0 && strcmp(r->v[i].group, group) == 0)
            return &r->v[i].h;
    }
    fail_msg("no hours row for group %s state %s", group, state);
    return NULL;
}

/* ---- nodes at a snapshot ------------------------------------------------------------------ */

typedef struct {
    char name[64], state[128], flags[128], reason[128], partitions[128], gpus[256];
    int64_t cpus_alloc, start;
    int cpu_config;
} nrow_t;

typedef struct {
    nrow_t *v;
    size_t n;
} nrows_t;

static bool collect_node(const sa_tsdb_node_t *node, void *ctx, sa_error_t *error)
{
    nrows_t *r = ctx;
    nrow_t *x;
    size_t len = 0;
    (void)error;
    r->v = realloc(r->v, (r->n + 1) * sizeof *r->v);
    assert_non_null(r->v);
    x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", node->name);
    snprintf(x->state, sizeof x->state, "%s", node->state);
    snprintf(x->flags, sizeof x->flags, "%s", node->flags);
    snprintf(x->reason, sizeof x->reason, "%s", node->reason ? node->reason : "(null)");
    snprintf(x->partitions, sizeof x->partitions, "%s", node->partitions);
    for (size_t g = 0; g < node->ngpus; g++)
        len += (size_t)snprintf(x->gpus + len, sizeof x->gpus - len, "%s%s:%lld:%lld", g ? "," : "",
                                node->gpus[g].type, (long long)node->gpus[g].total, (long long)node->gpus[g].used);
    x->cpus_alloc = node->cpus_alloc;
    x->start = node->start;
    x->cpu_config = node->cpu_config;
    return true;
}

static void nodes_at(sa_tsdb_t *db, const char *cluster, int64_t at, nrows_t *out)
{
    sa_error_t err;
    memset(out, 0, sizeof *out);
    if (!sa_tsdb_nodes_at(db, cluster, at, collect_node, out, &err))
        fail_msg("nodes_at: %s", err.message);
}

static const nrow_t *nfind(const nrows_t *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->v[i].name, name) == 0)
            return &r->v[i];
    }
    fail_msg("node %s not in snapshot", name);
    return NULL;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Same state across 3 snapshots -> 1 interval, open to the latest; a change -> 2. */
static void test_coalesce(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("coalesce"));
    sa_node_t *n[2];
    (void)state;

    n[0] = mk("n1", "IDLE", 64, 0, "cpu", NULL, 0, 0, NULL);
    n[1] = mk("n2", "MIXED", 64, 16, "cpu", NULL, 0, 0, NULL);
    for (int k = 0; k < 3; k++)
        write_ok(db, "c", T0 + k * 300, n, 2, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span WHERE node = 'n1'"), 1);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span WHERE node = 'n1'"), T0 + 600);
    assert_int_equal(sql_int(db, "SELECT open FROM node_interval_span WHERE node = 'n1'"), 1);
    /* nothing stored per unchanged snapshot: one row per node */
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval"), 2);

    /* n1 changes at T0+900: its interval closes there and a new one opens */
    free_nodes(n, 1);
    n[0] = mk("n1", "IDLE+DRAIN", 64, 0, "cpu", NULL, 0, 0, "disk");
    write_ok(db, "c", T0 + 900, n, 2, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span WHERE node = 'n1'"), 2);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span WHERE node = 'n1' AND start = " "1760000000"),
                     T0 + 900);
    assert_int_equal(sql_int(db, "SELECT open FROM node_interval_span WHERE node = 'n1' AND start = 1760000000"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span WHERE node = 'n2'"), 1);

    /* n2 disappears at T0+1200: its interval closes there */
    write_ok(db, "c", T0 + 1200, n, 1, NULL);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span WHERE node = 'n2'"), T0 + 1200);
    assert_int_equal(sql_int(db, "SELECT open FROM node_interval_span WHERE node = 'n2'"), 0);
    /* ... and comes back: a new interval */
    write_ok(db, "c", T0 + 1500, n, 2, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span WHERE node = 'n2'"), 2);
    verify_ok(db, "c", 6);

    free_nodes(n, 2);
    sa_tsdb_close(db);
}

/* Collected state strings of the samples. */
typedef struct {
    char *v[256];
    size_t n;
} strset_t;

static void strset_add(strset_t *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i], x) == 0)
            return;
    }
    assert_true(s->n < 256);
    s->v[s->n++] = strdup(x);
}

static bool strset_has(const strset_t *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i], x) == 0)
            return true;
    }
    return false;
}

/* Every node sample, written as a snapshot, reads back with exactly the parsed states. */
static void test_sample_states(void **state)
{
    sa_tsdb_t *db;
    char dirpath[1024], rel[1200];
    DIR *d;
    struct dirent *e;
    strset_t seen = {{0}, 0};
    size_t files = 0, nodes = 0;
    (void)state;

    tu_require_samples();
    db = open_ok(dbpath("samples"));
    snprintf(dirpath, sizeof dirpath, "%s/sinfo", tu_samples_dir());
    d = opendir(dirpath);
    if (!d)
        skip();
    while ((e = readdir(d))) {
        tu_parsed_t p;
        sa_error_t err;
        nrows_t got;
        if (e->d_name[0] == '.')
            continue;
        snprintf(rel, sizeof rel, "sinfo/%s", e->d_name);
        if (!tu_parse_file(tu_sample(rel), NULL, &p, &err))
            fail_msg("%s: %s", rel, err.message);
        if (p.nnodes == 0) {
            tu_parsed_clear(&p);
            continue;
        }
        write_ok(db, e->d_name, T0, p.nodes, p.nnodes, NULL);
        nodes_at(db, e->d_name, T0, &got);
        assert_int_equal(got.n, p.nnodes);
        for (size_t i = 0; i < p.nnodes; i++) {
            const nrow_t *r = nfind(&got, p.nodes[i]->name);
            const char *want = tu_state(&p.nodes[i]->state);
            if (strcmp(r->state, want) != 0)
                fail_msg("%s: node %s: stored %s, parsed %s", rel, r->name, r->state, want);
            strset_add(&seen, want);
            nodes++;
        }
        verify_ok(db, e->d_name, 1);
        free(got.v);
        tu_parsed_clear(&p);
        files++;
    }
    closedir(d);
    assert_true(files >= 10);
    /* flag combinations the samples are known to hold (SOURCES.md), kept exactly */
    assert_true(strset_has(&seen, "IDLE+DRAIN"));
    assert_true(strset_has(&seen, "MIXED+DRAIN"));
    assert_true(strset_has(&seen, "DOWN+NOT_RESPONDING"));
    assert_true(strset_has(&seen, "IDLE+COMPLETING"));
    /* a flags column filters on one flag */
    assert_true(sql_int(db, "SELECT count(*) FROM state WHERE '+' || flags || '+' LIKE '%+DRAIN+%'") >= 2);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM state"), (int64_t)seen.n);
    printf("  %zu files, %zu nodes, %zu distinct states:", files, nodes, seen.n);
    for (size_t i = 0; i < seen.n; i++) {
        printf(" %s", seen.v[i]);
        free(seen.v[i]);
    }
    printf("\n");
    sa_tsdb_close(db);
}

/* GPU types incl. MIG profiles, and idle GPUs of IDLE+DRAIN nodes, from the Talapas sample. */
static void test_mig_and_drained_gpus(void **state)
{
    sa_tsdb_t *db;
    tu_parsed_t p;
    sa_error_t err;
    nrows_t got;
    hrows_t h;
    sa_tsdb_opts_t opts;
    const sa_tsdb_hours_t *r;
    (void)state;

    tu_require_samples();
    db = open_ok(dbpath("mig"));
    if (!tu_parse_file(tu_sample("sinfo/restd-nodes-v0040_23.11.1_talapas_gpu-mig-drain-down.json"), NULL, &p,
                       &err))
        fail_msg("%s", err.message);
    sa_tsdb_opts_init(&opts);
    opts.max_gap_s = 3600;
    write_ok(db, "talapas", T0, p.nodes, p.nnodes, &opts);
    write_ok(db, "talapas", T0 + 3600, p.nodes, p.nnodes, &opts);

    nodes_at(db, "talapas", T0 + 3600, &got);
    assert_string_equal(nfind(&got, "n0162")->gpus, "1g.10gb:21:9");
    assert_string_equal(nfind(&got, "n0162")->state, "MIXED");
    assert_string_equal(nfind(&got, "n0162")->partitions, "gpu,gpulong,preempt");
    assert_string_equal(nfind(&got, "n0164")->gpus, "nvidia_a100_80gb_pcie:3:0");
    assert_string_equal(nfind(&got, "n0164")->state, "IDLE+DRAIN");
    assert_string_equal(nfind(&got, "n0164")->flags, "DRAIN");
    assert_string_equal(nfind(&got, "n0164")->reason, "Kill task failed");
    assert_string_equal(nfind(&got, "n0999")->gpus, "nvidia_h100_80gb_hbm3:4:0");
    assert_string_equal(nfind(&got, "dtn1")->state, "DOWN+NOT_RESPONDING");
    assert_int_equal(nfind(&got, "n0164")->start, T0); /* one interval over both snapshots */
    free(got.v);

    /* one hour: GPU-hours by type and exact state */
    hours(db, "talapas", T0, T0 + 3600, SA_TSDB_BY_GPU_TYPE, &h);
    r = hfind(&h, "nvidia_a100_80gb_pcie", "IDLE+DRAIN"); /* n0164: 3 idle GPUs, drained */
    assert_near(r->gpu_hours_total, 3);
    assert_near(r->gpu_hours_used, 0);
    assert_near(r->gpu_hours_idle, 3);
    assert_near(r->node_hours, 1);
    r = hfind(&h, "nvidia_h100_80gb_hbm3", "IDLE+DRAIN"); /* n0999 */
    assert_near(r->gpu_hours_idle, 4);
    r = hfind(&h, "1g.10gb", "MIXED"); /* n0162: 21 MIG slices, 9 used */
    assert_near(r->gpu_hours_total, 21);
    assert_near(r->gpu_hours_used, 9);
    assert_near(r->gpu_hours_idle, 12);
    r = hfind(&h, "1g.10gb", "ALLOCATED"); /* n0161 (1 of 21 used) + n0163 (5 of 21) */
    assert_near(r->gpu_hours_total, 42);
    assert_near(r->gpu_hours_used, 6);
    r = hfind(&h, "nvidia_a100_80gb_pcie", "ALLOCATED"); /* n0160 */
    assert_near(r->gpu_hours_used, 1);

    /* the same as one SQL query on the views */
    assert_int_equal(sql_int(db, "SELECT sum((end - start) * idle) FROM node_interval_gpu WHERE gpu_type ="
                                 " 'nvidia_a100_80gb_pcie' AND '+' || flags || '+' LIKE '%+DRAIN+%'"),
                     3 * 3600);
    /* per-snapshot totals keep the exact state and the GPU type */
    assert_int_equal(sql_int(db, "SELECT total - used FROM gpu_total_named WHERE state = 'IDLE+DRAIN' AND"
                                 " gpu_type = 'nvidia_a100_80gb_pcie' AND partition = 'gpulong'"),
                     3);
    verify_ok(db, "talapas", 2);
    tu_parsed_clear(&p);
    sa_tsdb_close(db);
}

/* ---- the repository's fixtures: every version's node outputs and real 22.05 ones ------------------ */

/* Writes one fixture's nodes as a snapshot of cluster `name` and reads them back: each node keeps
 * exactly the state it was parsed with. Adds the states to *seen; returns the nodes written. */
static size_t fixture_states(sa_tsdb_t *db, const char *name, tu_parsed_t *p, strset_t *seen)
{
    nrows_t got;
    write_ok(db, name, T0, p->nodes, p->nnodes, NULL);
    nodes_at(db, name, T0, &got);
    assert_int_equal(got.n, p->nnodes);
    for (size_t i = 0; i < p->nnodes; i++) {
        const nrow_t *r = nfind(&got, p->nodes[i]->name);
        const char *want = tu_state(&p->nodes[i]->state);
        if (strcmp(r->state, want) != 0)
            fail_msg("%s: node %s: stored %s, parsed %s", name, r->name, r->state, want);
        strset_add(seen, want);
    }
    verify_ok(db, name, 1);
    free(got.v);
    return p->nnodes;
}

/* Every node output of fixtures/gen (each version) and fixtures/slurm-22.05 keeps its exact states. */
static void test_fixture_states(void **state)
{
    static const char *const gen_files[] = {"scontrol-nodes.json", "sinfo-N.json", "sinfo.json",
                                            "scontrol-nodes-o.txt"};
    static const char *const real_files[] = {"sinfo-A.json", "sinfo-B.json", "sinfo-E.json",
                                             "scontrol-nodes-o-A.txt", "scontrol-nodes-o-B.txt"};
    static const char *const combos[] = {
        "IDLE+DRAIN", "MIXED+DRAIN", "ALLOCATED+DRAIN", "DOWN+DRAIN", "DOWN+NOT_RESPONDING",
        "UNKNOWN+DRAIN+NOT_RESPONDING", "IDLE+MAINTENANCE+RESERVED", "IDLE+COMPLETING", "IDLE+PLANNED",
        "IDLE+POWERED_DOWN", "IDLE+DRAIN+REBOOT_REQUESTED", "UNKNOWN+MAINTENANCE+NOT_RESPONDING+RESERVED",
        "UNKNOWN+DRAIN", "MIXED", "ALLOCATED", "IDLE",
    };
    sa_tsdb_t *db = open_ok(dbpath("fixture-states"));
    strset_t seen = {{0}, 0};
    size_t files = 0, nodes = 0;
    (void)state;

    for (const char *const *v = tu_gen_versions; *v; v++) {
        for (size_t f = 0; f < sizeof gen_files / sizeof gen_files[0]; f++) {
            char name[128];
            tu_parsed_t p;
            if (f == 2 && tu_gen_vn(*v) < 39)
                continue; /* grouped sinfo from 23.02 on */
            snprintf(name, sizeof name, "%s/%s", *v, gen_files[f]);
            tu_parse_gen(*v, gen_files[f], &p);
            nodes += fixture_states(db, name, &p, &seen);
            tu_parsed_clear(&p);
            files++;
        }
    }
    for (size_t f = 0; f < sizeof real_files / sizeof real_files[0]; f++) {
        char rel[128];
        tu_parsed_t p;
        snprintf(rel, sizeof rel, "slurm-22.05/%s", real_files[f]);
        tu_parse_fixture(rel, &p);
        nodes += fixture_states(db, rel, &p, &seen);
        tu_parsed_clear(&p);
        files++;
    }
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++)
        if (!strset_has(&seen, combos[i]))
            fail_msg("no fixture node was %s", combos[i]);
    /* a flags column filters on one flag */
    assert_true(sql_int(db, "SELECT count(*) FROM state WHERE '+' || flags || '+' LIKE '%+DRAIN+%'") >= 6);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM state"), (int64_t)seen.n);
    printf("  %zu files, %zu nodes, %zu distinct states:", files, nodes, seen.n);
    for (size_t i = 0; i < seen.n; i++) {
        printf(" %s", seen.v[i]);
        free(seen.v[i]);
    }
    printf("\n");
    sa_tsdb_close(db);
}

/* GPU types incl. MIG profiles, idle GPUs of drained and down nodes, over an hour, from the
 * generated cluster (the same in every version: v0.0.37's lower-case states, v0.0.44's lists). */
static void test_fixture_mig_and_drained_gpus(void **state)
{
    static const char *const versions[] = {"v0.0.37", "v0.0.44"};
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        sa_tsdb_t *db = open_ok(dbpath(versions[k]));
        tu_parsed_t p;
        nrows_t got;
        hrows_t h;
        sa_tsdb_opts_t opts;
        const sa_tsdb_hours_t *r;

        tu_parse_gen(versions[k], "scontrol-nodes.json", &p);
        sa_tsdb_opts_init(&opts);
        opts.max_gap_s = 3600;
        write_ok(db, "synth", T0, p.nodes, p.nnodes, &opts);
        write_ok(db, "synth", T0 + 3600, p.nodes, p.nnodes, &opts);

        nodes_at(db, "synth", T0 + 3600, &got);
        assert_string_equal(nfind(&got, "gm001")->gpus,
                            "nvidia_a100_80gb_pcie_1g.10gb:14:2,nvidia_a100_80gb_pcie_3g.40gb:4:0");
        assert_string_equal(nfind(&got, "gm001")->partitions, "gpu,mig");
        assert_string_equal(nfind(&got, "ga001")->gpus, "a100:4:0");
        assert_string_equal(nfind(&got, "ga001")->state, "IDLE+DRAIN");
        assert_string_equal(nfind(&got, "ga001")->flags, "DRAIN");
        assert_string_equal(nfind(&got, "ga001")->reason, "GPU XID 79");
        assert_string_equal(nfind(&got, "ga002")->gpus, "a100:4:4");
        assert_string_equal(nfind(&got, "gh003")->state, "DOWN+DRAIN");
        assert_string_equal(nfind(&got, "gu01")->gpus, ":4:2");
        assert_string_equal(nfind(&got, "c0004")->state, "UNKNOWN+DRAIN+NOT_RESPONDING");
        assert_int_equal(nfind(&got, "ga001")->start, T0); /* one interval over both snapshots */
        free(got.v);

        hours(db, "synth", T0, T0 + 3600, SA_TSDB_BY_GPU_TYPE, &h);
        r = hfind(&h, "a100", "IDLE+DRAIN"); /* ga001: 4 idle GPUs, drained */
        assert_near(r->gpu_hours_total, 4);
        assert_near(r->gpu_hours_used, 0);
        assert_near(r->gpu_hours_idle, 4);
        assert_near(r->node_hours, 1);
        r = hfind(&h, "a100", "ALLOCATED+DRAIN"); /* ga002: all 4 in use on a draining node */
        assert_near(r->gpu_hours_used, 4);
        r = hfind(&h, "h100", "DOWN+DRAIN"); /* gh003 */
        assert_near(r->gpu_hours_idle, 8);
        r = hfind(&h, "nvidia_a100_80gb_pcie_1g.10gb", "MIXED"); /* gm001: 2 of 14 slices */
        assert_near(r->gpu_hours_used, 2);
        r = hfind(&h, "nvidia_a100_80gb_pcie_3g.40gb", "IDLE"); /* gm002 */
        assert_near(r->gpu_hours_total, 4);
        assert_near(r->gpu_hours_idle, 4);

        /* the same as one SQL query on the views */
        assert_int_equal(sql_int(db, "SELECT sum((end - start) * idle) FROM node_interval_gpu WHERE gpu_type ="
                                     " 'a100' AND '+' || flags || '+' LIKE '%+DRAIN+%'"),
                         4 * 3600);
        /* per-snapshot totals keep the exact state, the partition and the GPU type */
        assert_int_equal(sql_int(db, "SELECT total - used FROM gpu_total_named WHERE state = 'IDLE+DRAIN' AND"
                                     " gpu_type = 'a100' AND partition = 'gpu'"),
                         4);
        verify_ok(db, "synth", 2);
        tu_parsed_clear(&p);
        sa_tsdb_close(db);
    }
}

/* Two nodes x 4 GPUs over one hour with a drain in the middle: exact hours per state. */
static void build_hour(sa_tsdb_t *db)
{
    for (int k = 0; k <= 12; k++) {
        int64_t t = T0 + k * 300;
        sa_node_t *n[2];
        n[0] = mk("gA", "MIXED", 64, 32, "gpu", "a100", 4, 2, NULL);
        if (t < T0 + 1800)
            n[1] = mk("gB", "ALLOCATED", 64, 64, "gpu", "a100", 4, 4, NULL);
        else if (t < T0 + 2700)
            n[1] = mk("gB", "MIXED+DRAIN", 64, 32, "gpu", "a100", 4, 2, "bad fan");
        else
            n[1] = mk("gB", "IDLE+DRAIN", 64, 0, "gpu", "a100", 4, 0, "bad fan");
        write_ok(db, "h", t, n, 2, NULL);
        free_nodes(n, 2);
    }
}

static void test_state_hours(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("hours"));
    hrows_t h;
    const sa_tsdb_hours_t *r;
    int64_t secs = -1;
    sa_error_t err;
    (void)state;

    build_hour(db);
    hours(db, "h", T0, T0 + 3600, SA_TSDB_BY_STATE, &h);
    assert_int_equal(h.n, 4);
    /* sorted by state */
    assert_string_equal(h.v[0].state, "ALLOCATED");
    assert_string_equal(h.v[1].state, "IDLE+DRAIN");
    assert_string_equal(h.v[2].state, "MIXED");
    assert_string_equal(h.v[3].state, "MIXED+DRAIN");
    r = hfind(&h, "(null)", "MIXED");
    assert_near(r->node_hours, 1);
    assert_near(r->gpu_hours_total, 4);
    assert_near(r->gpu_hours_used, 2);
    assert_near(r->gpu_hours_idle, 2);
    assert_near(r->cpu_hours_total, 64);
    assert_near(r->cpu_hours_alloc, 32);
    assert_near(r->cpu_hours_idle, 32);
    r = hfind(&h, "(null)", "ALLOCATED");
    assert_near(r->node_hours, 0.5);
    assert_near(r->gpu_hours_total, 2);
    assert_near(r->gpu_hours_used, 2);
    assert_near(r->gpu_hours_idle, 0);
    r = hfind(&h, "(null)", "MIXED+DRAIN");
    assert_near(r->node_hours, 0.25);
    assert_near(r->gpu_hours_total, 1);
    assert_near(r->gpu_hours_used, 0.5);
    assert_near(r->gpu_hours_idle, 0.5);
    r = hfind(&h, "(null)", "IDLE+DRAIN");
    assert_near(r->node_hours, 0.25);
    assert_near(r->gpu_hours_used, 0);
    assert_near(r->gpu_hours_idle, 1);
    assert_near(r->cpu_hours_idle, 16);

    /* by node */
    hours(db, "h", T0, T0 + 3600, SA_TSDB_BY_NODE, &h);
    assert_int_equal(h.n, 4);
    assert_near(hfind(&h, "gA", "MIXED")->gpu_hours_used, 2);
    assert_near(hfind(&h, "gB", "ALLOCATED")->gpu_hours_used, 2);
    /* by partition and GPU type: the same figures here (one partition, one type) */
    hours(db, "h", T0, T0 + 3600, SA_TSDB_BY_PARTITION, &h);
    assert_near(hfind(&h, "gpu", "IDLE+DRAIN")->gpu_hours_idle, 1);
    hours(db, "h", T0, T0 + 3600, SA_TSDB_BY_GPU_TYPE, &h);
    assert_near(hfind(&h, "a100", "MIXED+DRAIN")->gpu_hours_idle, 0.5);

    /* a window clips the intervals: [T0+1500, T0+2000) */
    hours(db, "h", T0 + 1500, T0 + 2000, SA_TSDB_BY_NODE, &h);
    assert_int_equal(h.n, 3);
    assert_near(hfind(&h, "gA", "MIXED")->node_hours, 500.0 / 3600);
    assert_near(hfind(&h, "gB", "ALLOCATED")->node_hours, 300.0 / 3600);
    assert_near(hfind(&h, "gB", "MIXED+DRAIN")->gpu_hours_total, 4 * 200.0 / 3600);
    /* nothing is extrapolated past the latest snapshot */
    hours(db, "h", T0, T0 + 86400, SA_TSDB_BY_STATE, &h);
    assert_near(hfind(&h, "(null)", "MIXED")->node_hours, 1);
    /* unknown cluster, empty window: no rows */
    hours(db, "nope", T0, T0 + 3600, SA_TSDB_BY_STATE, &h);
    assert_int_equal(h.n, 0);
    hours(db, "h", T0 + 10, T0 + 10, SA_TSDB_BY_STATE, &h);
    assert_int_equal(h.n, 0);
    assert_true(sa_tsdb_gap_seconds(db, "h", T0, T0 + 3600, &secs, &err));
    assert_int_equal(secs, 0);
    verify_ok(db, "h", 13);
    sa_tsdb_close(db);
}

/* Gaps: intervals are not extended across them; the time is recorded as unknown. */
static void test_gaps(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("gaps"));
    sa_node_t *n[2];
    hrows_t h;
    int64_t secs;
    sa_error_t err;
    (void)state;

    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    n[1] = mk("n2", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    write_ok(db, "g", T0, n, 1, NULL);
    write_ok(db, "g", T0 + 300, n, 2, NULL);  /* n2 seen once before the gap */
    write_ok(db, "g", T0 + 2000, n, 1, NULL); /* 1700 s > 900: a gap */
    write_ok(db, "g", T0 + 2300, n, 1, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM gap"), 1);
    assert_int_equal(sql_int(db, "SELECT start FROM gap"), T0 + 300);
    assert_int_equal(sql_int(db, "SELECT end FROM gap"), T0 + 2000);
    /* n1: closed at the snapshot before the gap, reopened after it although unchanged */
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span WHERE node = 'n1'"), 2);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span WHERE node = 'n1' AND start = 1760000000"),
                     T0 + 300);
    assert_int_equal(sql_int(db, "SELECT start FROM node_interval_span WHERE node = 'n1' AND open = 1"), T0 + 2000);
    /* n2: one observation right before the gap: a zero-length interval */
    assert_int_equal(sql_int(db, "SELECT end - start FROM node_interval_span WHERE node = 'n2'"), 0);
    assert_true(sa_tsdb_gap_seconds(db, "g", T0, T0 + 2300, &secs, &err));
    assert_int_equal(secs, 1700);
    assert_true(sa_tsdb_gap_seconds(db, "g", T0 + 1000, T0 + 1100, &secs, &err));
    assert_int_equal(secs, 100);
    hours(db, "g", T0, T0 + 2300, SA_TSDB_BY_NODE, &h);
    assert_int_equal(h.n, 1);
    assert_near(hfind(&h, "n1", "IDLE")->node_hours, 600.0 / 3600);
    verify_ok(db, "g", 4);

    /* a snapshot arriving later inside the gap splits it: [T0+300, T0+1000) is no longer one */
    write_ok(db, "g", T0 + 1000, n, 2, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM gap"), 1);
    assert_int_equal(sql_int(db, "SELECT start FROM gap"), T0 + 1000);
    assert_true(sa_tsdb_gap_seconds(db, "g", T0, T0 + 2300, &secs, &err));
    assert_int_equal(secs, 1000);
    hours(db, "g", T0, T0 + 2300, SA_TSDB_BY_NODE, &h);
    assert_near(hfind(&h, "n1", "IDLE")->node_hours, 1300.0 / 3600);
    assert_near(hfind(&h, "n2", "IDLE")->node_hours, 700.0 / 3600);
    verify_ok(db, "g", 5);
    free_nodes(n, 2);
    sa_tsdb_close(db);
}

/* The open interval continues in another process. */
static void test_continuity(void **state)
{
    const char *path = dbpath("continuity");
    char saved[512];
    pid_t pid;
    int status;
    sa_tsdb_t *db;
    sa_node_t *n[1];
    int64_t last;
    sa_error_t err;
    (void)state;

    snprintf(saved, sizeof saved, "%s", path);
    n[0] = mk("n1", "ALLOCATED", 8, 8, "p", "h100", 4, 4, NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sa_tsdb_t *c = sa_tsdb_open(saved, false, 5000, &err);
        bool ok = c && sa_tsdb_write_snapshot(c, "x", T0, n, 1, NULL, &err) &&
                  sa_tsdb_write_snapshot(c, "x", T0 + 300, n, 1, NULL, &err);
        sa_tsdb_close(c);
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    db = open_ok(saved);
    assert_true(sa_tsdb_last_snapshot(db, "x", &last, &err));
    assert_int_equal(last, T0 + 300);
    write_ok(db, "x", T0 + 600, n, 1, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span"), 1);
    assert_int_equal(sql_int(db, "SELECT start FROM node_interval_span"), T0);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span"), T0 + 600);
    assert_int_equal(sql_int(db, "SELECT open FROM node_interval_span"), 1);
    sa_tsdb_close(db);

    /* and once more after close/reopen in this process */
    db = open_ok(saved);
    write_ok(db, "x", T0 + 900, n, 1, NULL);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_interval_span"), 1);
    assert_int_equal(sql_int(db, "SELECT end FROM node_interval_span"), T0 + 900);
    verify_ok(db, "x", 4);
    assert_true(sa_tsdb_last_snapshot(db, "nope", &last, &err));
    assert_int_equal(last, SA_UNSET);
    free_nodes(n, 1);
    sa_tsdb_close(db);
}

/* ---- a random series for replay and crash tests ------------------------------------------ */

static uint64_t rs_state;

static uint64_t rs_next(void)
{
    rs_state ^= rs_state << 13;
    rs_state ^= rs_state >> 7;
    rs_state ^= rs_state << 17;
    return rs_state;
}

#define SER_NODES 8
#define SER_SNAPS 70

typedef struct {
    int64_t at;
    sa_node_t *nodes[SER_NODES];
    size_t n;
} snap_t;

/* Snapshot k of a deterministic random series (nodes change, vanish, come back). */
static void series(snap_t *s, size_t count, uint64_t seed)
{
    static const char *const states[] = {"IDLE", "MIXED", "ALLOCATED", "IDLE+DRAIN", "MIXED+DRAIN",
                                         "DOWN+DRAIN+NOT_RESPONDING", "IDLE+MAINTENANCE+RESERVED"};
    int cur[SER_NODES], alloc[SER_NODES];
    int64_t t = T0;

    rs_state = seed;
    for (int i = 0; i < SER_NODES; i++) {
        cur[i] = 0;
        alloc[i] = 0;
    }
    for (size_t k = 0; k < count; k++) {
        s[k].at = t;
        s[k].n = 0;
        for (int i = 0; i < SER_NODES; i++) {
            char name[16];
            if (rs_next() % 100 < 12) {
                cur[i] = (int)(rs_next() % 7);
                alloc[i] = (int)(rs_next() % 3) * 8;
            }
            if (rs_next() % 100 < 4)
                continue; /* absent from this snapshot */
            snprintf(name, sizeof name, "node%02d", i);
            s[k].nodes[s[k].n++] =
                mk(name, states[cur[i]], 16, alloc[i], i % 2 ? "gpu,all" : "cpu,all", i % 2 ? "a100" : NULL, 4,
                   alloc[i] / 8, cur[i] >= 3 ? "maintenance" : NULL);
        }
        if (s[k].n == 0)
            s[k].nodes[s[k].n++] = mk("node00", "IDLE", 16, 0, "cpu,all", NULL, 0, 0, NULL);
        t += k % 23 == 22 ? 1500 : 300; /* now and then a gap */
    }
}

static void series_free(snap_t *s, size_t count)
{
    for (size_t k = 0; k < count; k++)
        free_nodes(s[k].nodes, s[k].n);
}

/* Out-of-order replay, repeats and replacements give the same database as in order. */
static void test_replay(void **state)
{
    snap_t s[SER_SNAPS], wrong[1];
    size_t order[SER_SNAPS];
    sa_tsdb_t *a, *b;
    char *da, *db_;
    hrows_t ha, hb;
    sa_tsdb_opts_t opts;
    sa_sdiag_t sd;
    (void)state;

    series(s, SER_SNAPS, 0x9e3779b97f4a7c15ULL);
    series(wrong, 1, 12345);
    sa_sdiag_init(&sd);
    sa_tsdb_opts_init(&opts);

    a = open_ok(dbpath("replay-a"));
    for (size_t k = 0; k < SER_SNAPS; k++) {
        sd.jobs_pending = (int64_t)k;
        opts.sdiag = k % 10 == 0 ? &sd : NULL;
        write_ok(a, "r", s[k].at, s[k].nodes, s[k].n, &opts);
    }
    verify_ok(a, "r", SER_SNAPS);
    assert_true(sql_int(a, "SELECT count(*) FROM gap") >= 2);

    for (int round = 0; round < 3; round++) {
        /* a shuffled order; some snapshots also arrive twice, one first with wrong data */
        for (size_t k = 0; k < SER_SNAPS; k++)
            order[k] = k;
        rs_state = 777 + (uint64_t)round;
        if (round == 1) {
            for (size_t k = 0; k < SER_SNAPS; k++)
                order[k] = SER_SNAPS - 1 - k; /* newest first */
        } else {
            for (size_t k = SER_SNAPS - 1; k > 0; k--) {
                size_t j = rs_next() % (k + 1), x = order[k];
                order[k] = order[j];
                order[j] = x;
            }
        }
        b = open_ok(dbpath("replay-b"));
        write_ok(b, "r", s[order[5]].at, wrong[0].nodes, wrong[0].n, NULL);
        for (size_t i = 0; i < SER_SNAPS; i++) {
            size_t k = order[i];
            sd.jobs_pending = (int64_t)k;
            opts.sdiag = k % 10 == 0 ? &sd : NULL;
            write_ok(b, "r", s[k].at, s[k].nodes, s[k].n, &opts);
            if (i % 9 == 4) /* the same again: no change */
                write_ok(b, "r", s[k].at, s[k].nodes, s[k].n, &opts);
            if (i % 17 == 3)
                verify_ok(b, "r", (size_t)-1);
        }
        verify_ok(b, "r", SER_SNAPS);
        da = canonical_dump(a);
        db_ = canonical_dump(b);
        if (strcmp(da, db_) != 0) {
            FILE *f1 = fopen("/tmp/test_tsdb-replay-a.txt", "w"), *f2 = fopen("/tmp/test_tsdb-replay-b.txt", "w");
            if (f1) {
                fputs(da, f1);
                fclose(f1);
            }
            if (f2) {
                fputs(db_, f2);
                fclose(f2);
            }
            fail_msg("round %d: replayed database differs (dumps in /tmp/test_tsdb-replay-[ab].txt)", round);
        }
        hours(a, "r", T0, T0 + 86400, SA_TSDB_BY_NODE, &ha);
        hours(b, "r", T0, T0 + 86400, SA_TSDB_BY_NODE, &hb);
        assert_int_equal(ha.n, hb.n);
        assert_true(ha.n > 8);
        for (size_t i = 0; i < ha.n; i++) {
            assert_string_equal(ha.v[i].group, hb.v[i].group);
            assert_string_equal(ha.v[i].state, hb.v[i].state);
            assert_near(ha.v[i].h.node_hours, hb.v[i].h.node_hours);
            assert_near(ha.v[i].h.cpu_hours_alloc, hb.v[i].h.cpu_hours_alloc);
            assert_near(ha.v[i].h.gpu_hours_used, hb.v[i].h.gpu_hours_used);
            assert_near(ha.v[i].h.gpu_hours_idle, hb.v[i].h.gpu_hours_idle);
        }
        free(da);
        free(db_);
        sa_tsdb_close(b);
    }
    sa_tsdb_close(a);
    series_free(s, SER_SNAPS);
    series_free(wrong, 1);
}

/* A writer killed with SIGKILL mid-write leaves a consistent database. */
static void test_kill9(void **state)
{
    const char *path = dbpath("kill9");
    char saved[512];
    snap_t s[SER_SNAPS];
    size_t before = 0;
    (void)state;

    snprintf(saved, sizeof saved, "%s", path);
    series(s, SER_SNAPS, 4242);
    for (int round = 0; round < 4; round++) {
        pid_t pid = fork();
        int status;
        assert_true(pid >= 0);
        if (pid == 0) {
            /* write big snapshots (600 nodes) forever, at increasing times */
            sa_error_t err;
            sa_tsdb_t *c = sa_tsdb_open(saved, false, 5000, &err);
            sa_node_t *big[600];
            int64_t at;
            if (!c || !sa_tsdb_last_snapshot(c, "k", &at, &err))
                _exit(1);
            at = at == SA_UNSET ? T0 : at + 300;
            for (uint64_t k = 0;; k++, at += 300) {
                for (int i = 0; i < 600; i++) {
                    char name[16];
                    snprintf(name, sizeof name, "b%03d", i);
                    big[i] = mk(name, (k + (uint64_t)i) % 5 == 0 ? "MIXED+DRAIN" : "MIXED", 64,
                                (int64_t)((k * 7 + (uint64_t)i) % 64), i % 3 ? "cpu" : "cpu,gpu",
                                i % 3 ? NULL : "a100", 8, (int64_t)((k + (uint64_t)i) % 9), NULL);
                }
                if (!sa_tsdb_write_snapshot(c, "k", at, big, 600, NULL, &err))
                    _exit(2);
                free_nodes(big, 600);
            }
        }
        usleep(150000 + (useconds_t)round * 70000);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        {
            sa_tsdb_t *db = open_ok(saved);
            sqlite3_stmt *st;
            size_t n;
            sa_error_t err;
            assert_int_equal(sqlite3_prepare_v2(sa_tsdb_handle(db), "PRAGMA integrity_check", -1, &st, NULL),
                             SQLITE_OK);
            assert_int_equal(sqlite3_step(st), SQLITE_ROW);
            assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
            sqlite3_finalize(st);
            if (!sa_tsdb_verify(db, "k", &n, &err))
                fail_msg("round %d: %s", round, err.message);
            assert_true(n >= before);
            before = n;
            sa_tsdb_close(db);
        }
    }
    assert_true(before > 0);
    series_free(s, SER_SNAPS);
}

/* A second process reads consistent data while this one writes. */
static void test_reader_while_writing(void **state)
{
    const char *path = dbpath("reader");
    char saved[512];
    sa_tsdb_t *db;
    sa_node_t *n[50];
    pid_t pid;
    int status, pfd[2];
    (void)state;

    snprintf(saved, sizeof saved, "%s", path);
    db = open_ok(saved);
    for (int i = 0; i < 50; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%02d", i);
        n[i] = mk(name, "MIXED", 32, i % 32, "p", NULL, 0, 0, NULL);
    }
    write_ok(db, "w", T0, n, 50, NULL);

    /* the reader says when it has read once; the writer waits for that half-way, so the two
     * overlap however the machine schedules them */
    assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* reader: every read sees a whole snapshot: 50 nodes present since T0 */
        sa_error_t err;
        sa_tsdb_t *r = sa_tsdb_open(saved, true, 5000, &err);
        int64_t last = 0, reads = 0;
        time_t until = time(NULL) + 60;
        close(pfd[0]);
        if (!r)
            _exit(10);
        while (last < T0 + 100 * 300 && time(NULL) < until) {
            hrows_t h;
            double total = 0;
            if (!sa_tsdb_last_snapshot(r, "w", &last, &err))
                _exit(11);
            memset(&h, 0, sizeof h);
            if (!sa_tsdb_state_hours(r, "w", T0, T0 + 1000000, SA_TSDB_BY_STATE, collect_hours, &h, &err))
                _exit(12);
            for (size_t i = 0; i < h.n; i++)
                total += h.v[i].h.node_hours;
            /* the hours may include a snapshot committed after last was read: >= */
            if (total + 1e-9 < 50.0 * (double)(last - T0) / 3600)
                _exit(13);
            if (reads++ == 0 && write(pfd[1], "r", 1) != 1)
                _exit(15);
        }
        sa_tsdb_close(r);
        _exit(last == T0 + 100 * 300 && reads > 1 ? 0 : 14);
    }
    close(pfd[1]);
    for (int k = 1; k <= 100; k++) {
        char c;
        if (k == 51) /* until the reader has read once (or has ended: then read() gives 0) */
            assert_true(read(pfd[0], &c, 1) >= 0);
        free_nodes(n, 1);
        n[0] = mk("r00", k % 2 ? "IDLE" : "MIXED", 32, k % 2 ? 0 : 5, "p", NULL, 0, 0, NULL);
        write_ok(db, "w", T0 + k * 300, n, 50, NULL);
    }
    close(pfd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    verify_ok(db, "w", 101);
    free_nodes(n, 50);
    sa_tsdb_close(db);
}

/* Scheduler statistics are stored with a snapshot or alone, and read back. */
typedef struct {
    int64_t at[8];
    sa_sdiag_t sd[8];
    size_t n;
} sdrows_t;

static bool collect_sdiag(int64_t at, const sa_sdiag_t *sd, void *ctx, sa_error_t *error)
{
    sdrows_t *r = ctx;
    (void)error;
    assert_true(r->n < 8);
    r->at[r->n] = at;
    r->sd[r->n++] = *sd;
    return true;
}

typedef struct {
    char line[8][96];
    size_t n;
} rpcrows_t;

static bool collect_rpc(const sa_sdiag_rpc_t *r, void *ctx, sa_error_t *error)
{
    rpcrows_t *x = ctx;
    (void)error;
    assert_true(x->n < 8);
    snprintf(x->line[x->n++], sizeof x->line[0], "%d %s %lld %lld", (int)r->kind, r->name, (long long)r->count,
             (long long)r->total_time);
    return true;
}

static void test_sdiag_store(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("sdiag"));
    char path[1024];
    char *data;
    size_t len;
    sa_sdiag_t sd;
    sa_error_t err;
    sa_tsdb_opts_t opts;
    sa_node_t *n[1];
    sdrows_t got;
    (void)state;

    snprintf(path, sizeof path, "%s/sdiag-v0041_24.05.json", SA_FIXTURES_DIR);
    data = tu_read_file(path, &len);
    assert_true(sa_sdiag_parse_json(data, len, &sd, &err));
    free(data);
    sa_tsdb_opts_init(&opts);
    opts.sdiag = &sd;
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    write_ok(db, "s", T0, n, 1, &opts);
    sd.jobs_pending = 7;
    assert_true(sa_tsdb_write_sdiag(db, "s", T0 + 60, &sd, &err));

    memset(&got, 0, sizeof got);
    assert_true(sa_tsdb_sdiag_range(db, "s", T0, T0 + 3600, collect_sdiag, &got, &err));
    assert_int_equal(got.n, 2);
    assert_int_equal(got.at[0], T0);
    assert_int_equal(got.sd[0].server_thread_count, 3);
    assert_int_equal(got.sd[0].agent_queue_size, 0);
    assert_int_equal(got.sd[0].jobs_pending, 1534);
    assert_int_equal(got.sd[0].jobs_running, 611);
    assert_int_equal(got.sd[0].schedule_cycle_last, 20411);
    assert_int_equal(got.sd[0].schedule_cycle_mean, 22915);
    assert_int_equal(got.sd[0].bf_cycle_last, 1622087);
    assert_int_equal(got.sd[0].bf_depth_mean, 1406);
    assert_int_equal(got.sd[0].bf_active, 0);
    assert_int_equal(got.sd[0].req_time, 1760004000);
    assert_int_equal(got.at[1], T0 + 60);
    assert_int_equal(got.sd[1].jobs_pending, 7);
    assert_null(got.sd[0].rpcs);
    /*
     * The RPC counts: the fixture's one message type and one user, kept for the latest row of
     * each UTC hour. T0 (08:53:20) and T0 + 60 are one hour: T0 + 60's replaced T0's.
     */
    {
        rpcrows_t r = {0};
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0, collect_rpc, &r, &err));
        assert_int_equal(r.n, 0);
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0 + 60, collect_rpc, &r, &err));
        assert_int_equal(r.n, 2);
        assert_string_equal(r.line[0], "0 REQUEST_PARTITION_INFO 52011 4120033");
        assert_string_equal(r.line[1], "1 root 181203 20110234");
        /* an earlier row of the hour written again (a replay) leaves the later one's */
        free(sd.rpcs[1].name);
        sd.nrpcs = 1;
        assert_true(sa_tsdb_write_sdiag(db, "s", T0, &sd, &err));
        r.n = 0;
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0, collect_rpc, &r, &err));
        assert_int_equal(r.n, 0);
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0 + 60, collect_rpc, &r, &err));
        assert_int_equal(r.n, 2);
        /* the same row again: replaced with it (one entry fewer) */
        assert_true(sa_tsdb_write_sdiag(db, "s", T0 + 60, &sd, &err));
        r.n = 0;
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0 + 60, collect_rpc, &r, &err));
        assert_int_equal(r.n, 1);
        /* the next hour (09:00:00 on) keeps its own beside it */
        assert_true(sa_tsdb_write_sdiag(db, "s", T0 + 400, &sd, &err));
        r.n = 0;
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0 + 60, collect_rpc, &r, &err));
        assert_true(sa_tsdb_sdiag_rpcs(db, "s", T0 + 400, collect_rpc, &r, &err));
        assert_int_equal(r.n, 2);
    }
    sa_sdiag_clear(&sd);
    free_nodes(n, 1);
    sa_tsdb_close(db);
}

/* The schema created by the program is exactly schema/tsdb/timeseries.sql (the embedded copy is in sync). */
static void test_schema_in_sync(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("schema"));
    sqlite3 *mem;
    char path[1024], *sql, *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    const char *q = "SELECT type, name, sql FROM sqlite_master ORDER BY name";
    (void)state;

    snprintf(path, sizeof path, "%s/../schema/tsdb/timeseries.sql", SA_FIXTURES_DIR);
    sql = tu_read_file(path, NULL);
    assert_int_equal(sqlite3_open(":memory:", &mem), SQLITE_OK);
    assert_int_equal(sqlite3_exec(mem, sql, NULL, NULL, NULL), SQLITE_OK);
    dump_query(mem, q, &a, &la);
    dump_query(sa_tsdb_handle(db), q, &b, &lb);
    assert_string_equal(a, b);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), SA_TSDB_SCHEMA_VERSION);
    assert_int_equal(sql_int(db, "PRAGMA application_id"), SA_TSDB_APPLICATION_ID);
    {
        sqlite3_stmt *s;
        assert_int_equal(sqlite3_prepare_v2(sa_tsdb_handle(db), "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
        sqlite3_finalize(s);
    }
    sqlite3_close(mem);
    free(sql);
    free(a);
    free(b);
    sa_tsdb_close(db);
}

/* ---- errors ------------------------------------------------------------------------------- */

/* Opens must fail; returns the message (static). */
static const char *open_error(const char *path, bool readonly, sa_err_domain_t *domain)
{
    static sa_error_t err;
    sa_tsdb_t *db = sa_tsdb_open(path, readonly, 100, &err);
    assert_null(db);
    assert_null(strchr(err.message, '\n'));
    assert_non_null(strstr(err.message, path)); /* names the database */
    printf("  %s\n", err.message);
    if (domain)
        *domain = err.domain;
    return err.message;
}

static void test_error_not_sqlite(void **state)
{
    const char *p = dbpath("notsqlite");
    char path[512], *before, *after;
    size_t lb, la;
    FILE *f;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 200; i++)
        fputs("this is a text file, not a database\n", f);
    fclose(f);
    before = tu_read_file(path, &lb);
    assert_non_null(strstr(open_error(path, false, NULL), "not an SQLite database"));
    assert_non_null(strstr(open_error(path, true, NULL), "not an SQLite database"));
    after = tu_read_file(path, &la);
    assert_int_equal(la, lb);
    assert_memory_equal(before, after, lb);
    free(before);
    free(after);
}

/*
 * A symbolic link is never opened, to write or to read (issue 22: a link planted in a
 * directory others can write aimed the time series at any file of root's); a dangling
 * one is not created through either. The file it points at is left as it was.
 */
static void test_error_symlink(void **state)
{
    char target[512], link[512], dangling[512], *before, *after;
    sa_err_domain_t domain;
    size_t lb, la;
    sa_tsdb_t *db;
    (void)state;

    snprintf(target, sizeof target, "%s", dbpath("linktarget"));
    db = open_ok(target);
    sa_tsdb_close(db);
    before = tu_read_file(target, &lb);
    snprintf(link, sizeof link, "%s", dbpath("link"));
    assert_int_equal(symlink(target, link), 0);
    assert_non_null(strstr(open_error(link, false, &domain), "is a symbolic link: refused"));
    assert_int_equal(domain, SA_ERR_SQLITE);
    assert_non_null(strstr(open_error(link, true, &domain), "is a symbolic link: refused"));
    assert_int_equal(domain, SA_ERR_SQLITE);
    after = tu_read_file(target, &la);
    assert_int_equal(la, lb);
    assert_memory_equal(before, after, lb);
    snprintf(dangling, sizeof dangling, "%s", dbpath("dangling"));
    assert_int_equal(symlink(dbpath("nothing-there"), dangling), 0);
    assert_non_null(strstr(open_error(dangling, false, NULL), "is a symbolic link: refused"));
    assert_non_null(strstr(open_error(dangling, true, NULL), "is a symbolic link: refused"));
    assert_int_not_equal(access(dbpath("nothing-there"), F_OK), 0);
    free(before);
    free(after);
}

static void test_error_foreign(void **state)
{
    const char *p = dbpath("foreign");
    char path[512];
    sqlite3 *c;
    sqlite3_stmt *s;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "CREATE TABLE jobs (id INTEGER); INSERT INTO jobs VALUES (42);", NULL, NULL,
                                  NULL),
                     SQLITE_OK);
    sqlite3_close(c);
    assert_non_null(strstr(open_error(path, false, NULL), "not a slurm-archive time series"));
    /* untouched: the one table, its row, the journal mode */
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT (SELECT count(*) FROM sqlite_master), (SELECT id FROM jobs),"
                                           " (SELECT journal_mode FROM pragma_journal_mode)",
                                        -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(s, 0), 1);
    assert_int_equal(sqlite3_column_int(s, 1), 42);
    assert_string_equal((const char *)sqlite3_column_text(s, 2), "delete");
    sqlite3_finalize(s);
    sqlite3_close(c);
}

static void test_error_corrupt(void **state)
{
    const char *p = dbpath("corrupt");
    char path[512];
    sa_tsdb_t *db;
    sa_node_t *n[1];
    FILE *f;
    long size;
    char *before, *after;
    size_t lb, la;
    sa_err_domain_t dom;
    (void)state;

    /* a real database whose page 2 onwards is overwritten with garbage */
    snprintf(path, sizeof path, "%s", p);
    db = open_ok(path);
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    write_ok(db, "c", T0, n, 1, NULL);
    free_nodes(n, 1);
    sa_tsdb_close(db);
    f = fopen(path, "r+");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    assert_true(size > 8192);
    fseek(f, 4096, SEEK_SET);
    for (long i = 4096; i < size; i++)
        fputc((int)(i * 7 % 251), f);
    fclose(f);
    before = tu_read_file(path, &lb);
    assert_non_null(strstr(open_error(path, false, &dom), "corrupt"));
    assert_int_equal(dom, SA_ERR_SQLITE);
    after = tu_read_file(path, &la);
    assert_int_equal(la, lb);
    assert_memory_equal(before, after, lb);
    free(before);
    free(after);
}

static void test_error_newer(void **state)
{
    const char *p = dbpath("newer");
    char path[512];
    sa_tsdb_t *db;
    sa_node_t *n[1];
    sqlite3 *c;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    db = open_ok(path);
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    write_ok(db, "c", T0, n, 1, NULL);
    free_nodes(n, 1);
    sa_tsdb_close(db);
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "PRAGMA user_version = 5", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(c);

    assert_non_null(strstr(open_error(path, false, NULL),
                           "schema version 5 is newer than this program knows (4); upgrade slurm-archive"));
    assert_non_null(strstr(open_error(path, true, NULL), "schema version 5 is newer"));
    /* nothing touched */
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    {
        sqlite3_stmt *s;
        assert_int_equal(sqlite3_prepare_v2(c, "SELECT (SELECT user_version FROM pragma_user_version),"
                                               " (SELECT count(*) FROM snapshot)",
                                            -1, &s, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(s, 0), 5);
        assert_int_equal(sqlite3_column_int(s, 1), 1);
        sqlite3_finalize(s);
    }
    sqlite3_close(c);
    /* a missing file read-only: no such database, and none created */
    assert_non_null(strstr(open_error(dbpath("missing"), true, NULL), "no such database"));
    assert_int_equal(access(dbpath("missing"), F_OK), -1);
}

static void test_error_locked(void **state)
{
    const char *p = dbpath("locked");
    char path[512];
    sa_tsdb_t *db;
    sa_node_t *n[2];
    sqlite3 *other;
    sa_error_t err;
    int64_t last;
    struct timespec t1, t2;
    double waited;
    nrows_t got;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    n[1] = mk("n2", "MIXED", 8, 4, "p", NULL, 0, 0, NULL);
    db = sa_tsdb_open(path, false, 200, &err);
    assert_non_null(db);
    write_ok(db, "l", T0, n, 1, NULL);

    assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE; DELETE FROM snapshot;", NULL, NULL, NULL), SQLITE_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_false(sa_tsdb_write_snapshot(db, "l", T0 + 300, n, 2, NULL, &err));
    clock_gettime(CLOCK_MONOTONIC, &t2);
    waited = (double)(t2.tv_sec - t1.tv_sec) * 1e3 + (double)(t2.tv_nsec - t1.tv_nsec) / 1e6;
    assert_int_equal(err.domain, SA_ERR_LOCKED);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "database is locked by another process (gave up after 200 ms)"));
    assert_null(strchr(err.message, '\n'));
    assert_true(waited >= 150);
    printf("  %s\n", err.message);
    /* the reader still sees the committed contents while the lock is held */
    assert_true(sa_tsdb_last_snapshot(db, "l", &last, &err));
    assert_int_equal(last, T0);
    assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(other);

    /* previous contents intact, and the next write works */
    nodes_at(db, "l", T0, &got);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.v[0].name, "n1");
    free(got.v);
    verify_ok(db, "l", 1);
    write_ok(db, "l", T0 + 300, n, 2, NULL);
    verify_ok(db, "l", 2);
    free_nodes(n, 2);
    sa_tsdb_close(db);
}

static void test_error_disk_full(void **state)
{
    const char *p = dbpath("full");
    char path[512], *before, *after;
    sa_tsdb_t *db;
    sa_node_t *n[3], *big[3000];
    sa_error_t err;
    int64_t pages, last;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    db = open_ok(path);
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    n[1] = mk("n2", "MIXED+DRAIN", 8, 4, "p", "a100", 4, 1, "fan");
    n[2] = mk("n3", "DOWN+NOT_RESPONDING", 8, 0, "p", NULL, 0, 0, "Not responding");
    write_ok(db, "f", T0, n, 3, NULL);
    write_ok(db, "f", T0 + 300, n, 3, NULL);
    before = canonical_dump(db);

    /* the database may not grow: the next big snapshot does not fit */
    pages = sql_int(db, "PRAGMA page_count");
    assert_int_equal(sql_int(db, "PRAGMA max_page_count = 1"), pages); /* clamps to the current size */
    for (int i = 0; i < 3000; i++) {
        char name[32], reason[64];
        snprintf(name, sizeof name, "bignode-%05d", i);
        snprintf(reason, sizeof reason, "a long reason that takes space, ticket %d", i);
        big[i] = mk(name, "IDLE+DRAIN", 128, 0, "p,q,r", "h100", 8, 0, reason);
    }
    assert_false(sa_tsdb_write_snapshot(db, "f", T0 + 600, big, 3000, NULL, &err));
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "disk full"));
    assert_non_null(strstr(err.message, "snapshot of f at 2025-10-09T09:03:20Z"));
    assert_null(strchr(err.message, '\n'));
    printf("  %s\n", err.message);

    /* previous contents intact */
    after = canonical_dump(db);
    assert_string_equal(before, after);
    free(after);
    assert_true(sa_tsdb_last_snapshot(db, "f", &last, &err));
    assert_int_equal(last, T0 + 300);
    verify_ok(db, "f", 2);
    sa_tsdb_close(db);

    /* and after reopening (no limit any more) writing goes on */
    db = open_ok(path);
    after = canonical_dump(db);
    assert_string_equal(before, after);
    write_ok(db, "f", T0 + 600, big, 3000, NULL);
    verify_ok(db, "f", 3);
    free(before);
    free(after);
    free_nodes(n, 3);
    free_nodes(big, 3000);
    sa_tsdb_close(db);
}

/* ---- GPUs a grouped sinfo does not say: unknown, carried, recorded alone ------------------- */

/* A node of a multi-node sinfo group: its GPUs unknown (gpus_total empty). */
static sa_node_t *mk_grouped(const char *name, const char *state)
{
    sa_node_t *n = mk(name, state, 64, 0, "gpu", NULL, 0, 0, NULL);
    n->cpus_alloc = n->cpus_idle = n->cpus_other = SA_UNSET; /* group sums, not the node's */
    n->gpu_config = SA_NODE_GPUS_UNKNOWN;
    return n;
}

/* The row of nodes of unknown GPU configuration in state, BY_GPU_TYPE; fails when absent. */
static const sa_tsdb_hours_t *hunknown(const hrows_t *r, const char *state)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].h.gpu_config_unknown && strcmp(r->v[i].state, state) == 0)
            return &r->v[i].h;
    }
    fail_msg("no unknown-GPU row for state %s", state);
    return NULL;
}

/*
 * CPU counts of grouped sinfo records (issue 32, item 6): a node whose counts are its
 * record's sums split over its nodes (cpu_config SPLIT) starts an interval of its own and
 * reads back as such; a node whose counts nobody said is counted in none of allocated,
 * idle and other. Over 1 h of three 64-CPU MIXED nodes: s1 split 16 allocated, 48 idle;
 * s2 observed 16 and 48 (the same counts: another attribute set); u1 unknown: 64
 * CPU-hours unknown. Totals 192, allocated 32, idle 96, split 64, unknown 64.
 */
static void test_cpu_config_split(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("cpusplit"));
    sa_tsdb_opts_t opts;
    sa_node_t *n[3];
    nrows_t nr;
    hrows_t h;
    const sa_tsdb_hours_t *r;
    (void)state;

    n[0] = mk("s1", "MIXED", 64, 16, "cpu", NULL, 0, 0, NULL);
    n[0]->cpu_config = SA_NODE_CPUS_SPLIT;
    n[1] = mk("s2", "MIXED", 64, 16, "cpu", NULL, 0, 0, NULL);
    n[2] = mk("u1", "MIXED", 64, 0, "cpu", NULL, 0, 0, NULL);
    n[2]->cpus_alloc = n[2]->cpus_idle = n[2]->cpus_other = SA_UNSET;
    sa_tsdb_opts_init(&opts);
    opts.max_gap_s = 3600;
    write_ok(db, "g", T0, n, 3, &opts);
    write_ok(db, "g", T0 + 3600, n, 3, &opts);
    free_nodes(n, 3);
    nodes_at(db, "g", T0, &nr);
    assert_int_equal(nfind(&nr, "s1")->cpu_config, SA_NODE_CPUS_SPLIT);
    assert_int_equal(nfind(&nr, "s2")->cpu_config, SA_NODE_CPUS_OBSERVED);
    assert_true(nfind(&nr, "u1")->cpus_alloc == SA_UNSET);
    free(nr.v);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM attr WHERE cpu_config = 1"), 1);
    hours(db, "g", T0, T0 + 3600, SA_TSDB_BY_STATE, &h);
    r = hfind(&h, "(null)", "MIXED");
    assert_near(r->cpu_hours_total, 192);
    assert_near(r->cpu_hours_alloc, 32);
    assert_near(r->cpu_hours_idle, 96);
    assert_near(r->cpu_hours_split, 64);
    assert_near(r->cpu_hours_unknown, 64);
    verify_ok(db, "g", 2);
    sa_tsdb_close(db);
}

static void test_gpu_config_carry(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("gpucfg"));
    sa_node_t *obs[2], *grp[3], *cfg[1];
    sa_error_t err;
    size_t unknown = 99;
    hrows_t h;
    (void)state;

    /* T0: one per-node observation (sinfo -N): g1 has 4 A100s, c1 none */
    obs[0] = mk("c1", "IDLE", 64, 0, "gpu", NULL, 0, 0, NULL);
    obs[1] = mk("g1", "IDLE", 64, 0, "gpu", "a100", 4, 0, NULL);
    write_ok(db, "k", T0, obs, 2, NULL);
    /* T0+300, T0+600: grouped sinfo: nobody's GPUs; g2 never observed per node */
    for (int k = 1; k <= 2; k++) {
        grp[0] = mk_grouped("c1", "IDLE");
        grp[1] = mk_grouped("g1", "MIXED");
        grp[2] = mk_grouped("g2", "IDLE");
        assert_true(sa_tsdb_carry_gpu_config(db, "k", T0 + 300 * k, grp, 3, &unknown, &err));
        assert_int_equal(unknown, 1);
        assert_int_equal(grp[0]->gpu_config, SA_NODE_GPUS_CARRIED);
        assert_int_equal(sa_gpus_total(&grp[0]->gpus_total), 0); /* carried: no GPUs */
        assert_int_equal(grp[1]->gpu_config, SA_NODE_GPUS_CARRIED);
        assert_true(grp[1]->gpu_config_at == (k == 1 ? T0 : T0 + 300)); /* then from the interval carried at +300 */
        assert_true(sa_gpus_get(&grp[1]->gpus_total, "a100") == 4);
        assert_int_equal(grp[2]->gpu_config, SA_NODE_GPUS_UNKNOWN);
        write_ok(db, "k", T0 + 300 * k, grp, 3, NULL);
        free_nodes(grp, 3);
    }
    verify_ok(db, "k", 3);
    assert_int_equal(sql_int(db, "SELECT count(DISTINCT gpu_config) FROM attr WHERE gpu_config IS NOT NULL"), 2);

    /* [T0+300, T0+600): g1's carried GPUs on a MIXED node: use unknown; g2 apart */
    hours(db, "k", T0 + 300, T0 + 600, SA_TSDB_BY_GPU_TYPE, &h);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_total, 4 * 300 / 3600.0);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_carried, 4 * 300 / 3600.0);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_use_unknown, 4 * 300 / 3600.0);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_used, 0);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_idle, 0);
    assert_near(hunknown(&h, "IDLE")->node_hours, 300 / 3600.0);
    assert_near(hunknown(&h, "IDLE")->node_hours_gpu_unknown, 300 / 3600.0);
    assert_near(hunknown(&h, "IDLE")->gpu_hours_total, 0);
    /* c1 (no GPUs, carried) stays with the nodes without GPUs, not with the unknown ones */
    {
        int plain = 0;
        for (size_t i = 0; i < h.n; i++)
            plain += !h.v[i].h.gpu_config_unknown && strcmp(h.v[i].group, "(null)") == 0;
        assert_int_equal(plain, 1);
    }
    hours(db, "k", T0, T0 + 600, SA_TSDB_BY_STATE, &h);
    assert_near(hfind(&h, "(null)", "IDLE")->node_hours_gpu_unknown, 300 / 3600.0);
    assert_near(hfind(&h, "(null)", "IDLE")->gpu_hours_carried, 0);
    /* the g1 row at T0 (observed, IDLE) is not carried */
    assert_near(hfind(&h, "(null)", "IDLE")->gpu_hours_total, 4 * 300 / 3600.0);

    /* a configuration observed alone, later (scontrol show nodes --json): never carried back to g2 */
    cfg[0] = mk("g2", "IDLE", 64, 0, "gpu", "h100", 8, 0, NULL);
    assert_true(sa_tsdb_write_node_config(db, "k", T0 + 3600, cfg, 1, &err));
    assert_true(sa_tsdb_write_node_config(db, "k", T0 + 3600, cfg, 1, &err)); /* replaced, not doubled */
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_config_gpu"), 1);
    free_nodes(cfg, 1);
    grp[0] = mk_grouped("g2", "IDLE");
    assert_true(sa_tsdb_carry_gpu_config(db, "k", T0 + 900, grp, 1, &unknown, &err));
    assert_int_equal(unknown, 1);
    assert_int_equal(grp[0]->gpu_config, SA_NODE_GPUS_UNKNOWN);
    assert_int_equal(sa_gpus_total(&grp[0]->gpus_total), 0);
    free_nodes(grp, 1);
    /* as of its time on, it is */
    grp[0] = mk_grouped("g2", "IDLE");
    assert_true(sa_tsdb_carry_gpu_config(db, "k", T0 + 3600, grp, 1, &unknown, &err));
    assert_int_equal(unknown, 0);
    assert_true(sa_gpus_get(&grp[0]->gpus_total, "h100") == 8);
    assert_true(grp[0]->gpu_config_at == T0 + 3600);
    write_ok(db, "k", T0 + 3600, grp, 1, NULL);
    free_nodes(grp, 1);
    verify_ok(db, "k", 4);
    /* IDLE: carried GPUs are idle, not of unknown use */
    hours(db, "k", T0 + 3600, T0 + 3900, SA_TSDB_BY_GPU_TYPE, &h);
    assert_int_equal(h.n, 0); /* the latest snapshot: no time after it */
    free_nodes(obs, 2);
    sa_tsdb_close(db);
}

/* Lands a grouped snapshot at `at` of g1 and g2 as slurm-ingest does: carried, then written. */
static void land_grouped(sa_tsdb_t *db, int64_t at, size_t want_unknown)
{
    sa_node_t *grp[2] = {mk_grouped("g1", "MIXED"), mk_grouped("g2", "IDLE")};
    size_t unknown = 99;
    sa_error_t err;

    assert_true(sa_tsdb_carry_gpu_config(db, "r", at, grp, 2, &unknown, &err));
    assert_int_equal(unknown, want_unknown);
    write_ok(db, "r", at, grp, 2, NULL);
    free_nodes(grp, 2);
}

/*
 * Issue 22, item 2: a snapshot landed again (a replay into a time series that holds it
 * already, or a replay killed halfway and run again) lands as it did the first time: a
 * per-node observation later than it, already there, is not carried back to it, nor is
 * what its own earlier landing wrote.
 */
static void test_gpu_config_replayed(void **state)
{
    char path[512];
    sa_tsdb_t *db;
    sa_node_t *obs[2], *one[1];
    char *once = NULL, *twice;
    sa_error_t err;
    (void)state;

    snprintf(path, sizeof path, "%s", dbpath("gpucfg-replay"));
    db = open_ok(path);
    /* T0: g1 said per node (4 A100s); T0+300: grouped; T0+600: both said per node (g1 now 8 H100s) */
    for (int pass = 0; pass < 2; pass++) {
        obs[0] = mk("g1", "IDLE", 64, 0, "gpu", "a100", 4, 0, NULL);
        write_ok(db, "r", T0, obs, 1, NULL);
        free_nodes(obs, 1);
        {
            sa_node_t *grp[2] = {mk_grouped("g1", "MIXED"), mk_grouped("g2", "IDLE")};
            size_t unknown = 99;
            assert_true(sa_tsdb_carry_gpu_config(db, "r", T0 + 300, grp, 2, &unknown, &err));
            assert_int_equal(unknown, 1); /* g2: said only later, at T0+600 (already there on the second pass) */
            assert_int_equal(grp[1]->gpu_config, SA_NODE_GPUS_UNKNOWN);
            assert_int_equal(grp[0]->gpu_config, SA_NODE_GPUS_CARRIED);
            assert_true(grp[0]->gpu_config_at == T0);
            assert_true(sa_gpus_get(&grp[0]->gpus_total, "a100") == 4);
            assert_true(sa_gpus_total(&grp[0]->gpus_total) == 4); /* not T0+600's H100s */
            write_ok(db, "r", T0 + 300, grp, 2, NULL);
            free_nodes(grp, 2);
        }
        obs[0] = mk("g1", "IDLE", 64, 0, "gpu", "h100", 8, 0, NULL);
        obs[1] = mk("g2", "IDLE", 64, 0, "gpu", "a100", 2, 0, NULL);
        write_ok(db, "r", T0 + 600, obs, 2, NULL);
        free_nodes(obs, 2);
        if (pass == 0)
            once = tu_tsdb_dump(path);
    }
    twice = tu_tsdb_dump(path);
    assert_non_null(once);
    assert_non_null(twice);
    assert_string_equal(once, twice);
    free(once);
    free(twice);
    verify_ok(db, "r", 3);

    /* the snapshot's own earlier landing is not an observation: a record before it, put in since, is carried */
    one[0] = mk("g1", "IDLE", 64, 0, "gpu", "a100", 2, 0, NULL);
    assert_true(sa_tsdb_write_node_config(db, "r", T0 + 100, one, 1, &err));
    free_nodes(one, 1);
    one[0] = mk_grouped("g1", "MIXED");
    {
        size_t unknown = 99;
        assert_true(sa_tsdb_carry_gpu_config(db, "r", T0 + 300, one, 1, &unknown, &err));
        assert_int_equal(unknown, 0);
    }
    assert_true(one[0]->gpu_config_at == T0 + 100);
    assert_true(sa_gpus_get(&one[0]->gpus_total, "a100") == 2);
    free_nodes(one, 1);
    /* and a later snapshot carries from the per-node one before it, the nearest */
    land_grouped(db, T0 + 900, 0);
    sa_tsdb_close(db);
}

/* A run's GPU type is never taken from a snapshot later than the time it was observed. */
static void test_run_gpu_type_until(void **state)
{
    sa_tsdb_t *db = open_ok(dbpath("runtype"));
    sa_node_t *n[1];
    sa_error_t err;
    char *type = NULL;
    int source = -1;
    (void)state;

    n[0] = mk("g1", "MIXED", 64, 8, "gpu", "a100", 4, 2, NULL);
    write_ok(db, "u", T0 + 600, n, 1, NULL);
    free_nodes(n, 1);
    n[0] = mk("g1", "MIXED", 64, 8, "gpu", "h100", 4, 2, NULL);
    write_ok(db, "u", T0 + 1200, n, 1, NULL);
    free_nodes(n, 1);
    /* a run started before the series: its first snapshot, unless it is later than the observation */
    assert_true(sa_tsdb_run_gpu_type(db, "u", "g1", T0, SA_UNSET, SA_UNSET, &type, &source, &err));
    assert_string_equal(type, "a100");
    assert_int_equal(source, SA_RUN_GPU_TYPE_NODE);
    free(type);
    assert_true(sa_tsdb_run_gpu_type(db, "u", "g1", T0, SA_UNSET, T0 + 600, &type, &source, &err));
    assert_string_equal(type, "a100");
    free(type);
    assert_true(sa_tsdb_run_gpu_type(db, "u", "g1", T0, SA_UNSET, T0 + 300, &type, &source, &err));
    assert_null(type);
    assert_int_equal(source, SA_RUN_GPU_TYPE_UNKNOWN);
    /* a start after the observation (a pending job's expected start): the snapshot at or before the observation */
    assert_true(sa_tsdb_run_gpu_type(db, "u", "g1", T0 + 1500, SA_UNSET, SA_UNSET, &type, &source, &err));
    assert_string_equal(type, "h100");
    free(type);
    assert_true(sa_tsdb_run_gpu_type(db, "u", "g1", T0 + 1500, SA_UNSET, T0 + 900, &type, &source, &err));
    assert_string_equal(type, "a100");
    free(type);
    sa_tsdb_close(db);
}

/* A version 1 database (no attr.gpu_config, no node_config_gpu) is migrated on a read-write open. */
static void test_migrate_v1(void **state)
{
    const char *p = dbpath("v1");
    char path[512];
    sa_tsdb_t *db;
    sa_node_t *n[2];
    sqlite3 *c;
    hrows_t h;
    sa_error_t err;
    size_t unknown;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    db = open_ok(path);
    n[0] = mk("g1", "IDLE", 64, 0, "gpu", "a100", 4, 0, NULL);
    n[1] = mk("g2", "MIXED", 64, 8, "gpu", "a100", 4, 2, NULL);
    write_ok(db, "m", T0, n, 2, NULL);
    write_ok(db, "m", T0 + 300, n, 2, NULL);
    free_nodes(n, 2);
    sa_tsdb_close(db);
    /* make it what version 1 wrote */
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "ALTER TABLE attr DROP COLUMN gpu_config; ALTER TABLE attr DROP COLUMN cpu_config;"
                                     " DROP TABLE node_config_gpu; DROP TABLE sched_rpc; DROP TABLE rpc_name;"
                                     " PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(c);
    /* read-only: refused, untouched */
    assert_non_null(strstr(open_error(path, true, NULL), "schema version 1 is older"));
    db = open_ok(path);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), SA_TSDB_SCHEMA_VERSION);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_table_info('attr') WHERE name = 'gpu_config'"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM node_config_gpu"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sched_rpc"), 0); /* version 3's table */
    assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_table_info('attr') WHERE name = 'cpu_config'"), 1);
    verify_ok(db, "m", 2);
    hours(db, "m", T0, T0 + 300, SA_TSDB_BY_GPU_TYPE, &h);
    assert_near(hfind(&h, "a100", "MIXED")->gpu_hours_used, 2 * 300 / 3600.0);
    /* the old rows are per-node observations: carried from */
    n[0] = mk_grouped("g1", "MIXED");
    assert_true(sa_tsdb_carry_gpu_config(db, "m", T0 + 600, n, 1, &unknown, &err));
    assert_int_equal(unknown, 0);
    assert_true(sa_gpus_get(&n[0]->gpus_total, "a100") == 4);
    n[1] = mk("g2", "MIXED", 64, 8, "gpu", "a100", 4, 2, NULL);
    write_ok(db, "m", T0 + 600, n, 2, NULL);
    free_nodes(n, 2);
    verify_ok(db, "m", 3);
    /* an unchanged observed node keeps its version 1 attribute set (the hash did not change) */
    assert_int_equal(sql_int(db, "SELECT count(*) FROM attr"), 3);
    sa_tsdb_close(db);
}

static void test_error_input(void **state)
{
    const char *p = dbpath("input");
    char path[512];
    sa_tsdb_t *db, *ro;
    sa_node_t *n[2];
    sa_error_t err;
    (void)state;

    snprintf(path, sizeof path, "%s", p);
    db = open_ok(path);
    n[0] = mk("n1", "IDLE", 8, 0, "p", NULL, 0, 0, NULL);
    n[1] = mk("n1", "MIXED", 8, 4, "p", NULL, 0, 0, NULL);
    assert_false(sa_tsdb_write_snapshot(db, "i", T0, n, 2, NULL, &err));
    assert_int_equal(err.domain, SA_ERR_INPUT);
    assert_non_null(strstr(err.message, "node n1 is listed twice"));
    assert_false(sa_tsdb_write_snapshot(db, "i", T0, n, 0, NULL, &err));
    assert_non_null(strstr(err.message, "snapshot of i at 2025-10-09T08:53:20Z: no nodes given"));
    assert_false(sa_tsdb_write_snapshot(db, "", T0, n, 1, NULL, &err));
    assert_non_null(strstr(err.message, "no cluster name given"));
    assert_false(sa_tsdb_write_snapshot(db, "i", SA_UNSET, n, 1, NULL, &err));
    assert_non_null(strstr(err.message, "snapshot time not set"));
    assert_int_equal(sql_int(db, "SELECT count(*) FROM snapshot"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM cluster"), 0);
    write_ok(db, "i", T0, n, 1, NULL);

    ro = sa_tsdb_open(path, true, 100, &err);
    assert_non_null(ro);
    assert_false(sa_tsdb_write_snapshot(ro, "i", T0 + 300, n, 1, NULL, &err));
    assert_non_null(strstr(err.message, "opened read-only"));
    assert_false(sa_tsdb_nodes_at(ro, "i", T0 + 1, collect_node, NULL, &err));
    assert_non_null(strstr(err.message, "cluster i has no snapshot at 2025-10-09T08:53:21Z"));
    sa_tsdb_close(ro);
    free_nodes(n, 2);
    sa_tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_sample_states),
        cmocka_unit_test(test_mig_and_drained_gpus),
        cmocka_unit_test(test_fixture_states),
        cmocka_unit_test(test_fixture_mig_and_drained_gpus),
        cmocka_unit_test(test_state_hours),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_continuity),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_reader_while_writing),
        cmocka_unit_test(test_sdiag_store),
        cmocka_unit_test(test_schema_in_sync),
        cmocka_unit_test(test_error_not_sqlite),
        cmocka_unit_test(test_error_symlink),
        cmocka_unit_test(test_error_foreign),
        cmocka_unit_test(test_error_corrupt),
        cmocka_unit_test(test_error_newer),
        cmocka_unit_test(test_error_locked),
        cmocka_unit_test(test_error_disk_full),
        cmocka_unit_test(test_error_input),
        cmocka_unit_test(test_cpu_config_split),
        cmocka_unit_test(test_gpu_config_carry),
        cmocka_unit_test(test_gpu_config_replayed),
        cmocka_unit_test(test_run_gpu_type_until),
        cmocka_unit_test(test_migrate_v1),
    };
    return tu_run_group_tests("tsdb", tests, group_setup, group_teardown);
}
