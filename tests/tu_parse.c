/*
 * tu_parse.c - the test helpers that parse (see tu_parse.h).
 */
#include "tu_parse.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sa_jobdoc.h"

void tu_parse_gen(const char *version, const char *file, tu_parsed_t *out)
{
    char rel[256];
    sa_sacct_text_opts_t topts = {0};
    char *fields = tu_gen_fields(version, file);
    sa_error_t err;
    bool ok;

    snprintf(rel, sizeof rel, "gen/%s/%s", version, file);
    topts.fields = fields;
    sa_error_clear(&err);
    ok = tu_parse_file(tu_fixture(rel), &topts, out, &err);
    free(fields);
    if (!ok)
        fail_msg("%s: %s", rel, err.message);
}

void tu_parse_fixture(const char *rel, tu_parsed_t *out)
{
    sa_error_t err;
    sa_error_clear(&err);
    if (!tu_parse_file(tu_fixture(rel), NULL, out, &err))
        fail_msg("%s: %s", rel, err.message);
}

static bool collect_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    tu_parsed_t *p = ctx;
    sa_job_t **v = realloc(p->jobs, (p->njobs + 1) * sizeof *v);
    (void)error;
    if (!v)
        return false;
    p->jobs = v;
    p->jobs[p->njobs++] = sa_job_steal(job);
    return true;
}

static bool collect_node(sa_node_t *node, void *ctx, sa_error_t *error)
{
    tu_parsed_t *p = ctx;
    sa_node_t **v = realloc(p->nodes, (p->nnodes + 1) * sizeof *v);
    (void)error;
    if (!v)
        return false;
    p->nodes = v;
    p->nodes[p->nnodes++] = sa_node_steal(node);
    return true;
}

bool tu_parse_reader(sa_reader_t *r, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error)
{
    sa_sink_t sink = {collect_job, collect_node, out, NULL, false, NULL};
    memset(out, 0, sizeof *out);
    sa_meta_init(&out->meta);
    return sa_parse_any(r, topts, &sink, &out->meta, &out->kind, error);
}

bool tu_parse_file(const char *path, const sa_sacct_text_opts_t *topts, tu_parsed_t *out, sa_error_t *error)
{
    sa_reader_t r;
    bool ok;
    int fd = open(path, O_RDONLY);

    if (fd < 0) {
        fprintf(stderr, "tu_parse_file: cannot open %s\n", path);
        abort();
    }
    sa_reader_init_fd(&r, fd);
    ok = tu_parse_reader(&r, topts, out, error);
    close(fd);
    return ok;
}

bool tu_parse_mem(const char *data, size_t len, const sa_sacct_text_opts_t *topts, tu_parsed_t *out,
                  sa_error_t *error)
{
    sa_reader_t r;
    sa_reader_init_mem(&r, data, len);
    return tu_parse_reader(&r, topts, out, error);
}

void tu_parsed_clear(tu_parsed_t *p)
{
    for (size_t i = 0; i < p->njobs; i++)
        sa_job_destroy(p->jobs[i]);
    for (size_t i = 0; i < p->nnodes; i++)
        sa_node_destroy(p->nodes[i]);
    free(p->jobs);
    free(p->nodes);
    sa_meta_clear(&p->meta);
    memset(p, 0, sizeof *p);
}

sa_job_t *tu_find_job_n(tu_parsed_t *p, int64_t job_id, size_t nth)
{
    for (size_t i = 0; i < p->njobs; i++) {
        if (p->jobs[i]->job_id == job_id && nth-- == 0)
            return p->jobs[i];
    }
    return NULL;
}

sa_job_t *tu_find_job(tu_parsed_t *p, int64_t job_id)
{
    return tu_find_job_n(p, job_id, 0);
}

sa_node_t *tu_find_node(tu_parsed_t *p, const char *name)
{
    for (size_t i = 0; i < p->nnodes; i++) {
        if (p->nodes[i]->name && strcmp(p->nodes[i]->name, name) == 0)
            return p->nodes[i];
    }
    return NULL;
}

const char *tu_sample_fields(const char *rel)
{
    static const struct {
        const char *prefix, *fields;
    } table[] = {
        {"sacct-parsable/sacct-P-noheader-xdmod26fields",
         "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,start,end,elapsed,"
         "exitcode,state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname"},
        {"sacct-parsable/sacct-p-snowman-delim_peregrine",
         "JobID,JobName,User,Partition,NodeList,NNodes,NCPUS,NTasks,State,Submit,Start,End,Timelimit,Elapsed,"
         "TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,MaxDiskWrite,MaxDiskRead,"
         "MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment"},
        {"sacct-parsable/sacct-p-snowman-delim-37fields_habrok",
         "JobID,JobName,User,Partition,NodeList,NNodes,NCPUs,NTasks,State,Submit,Start,End,Timelimit,Elapsed,"
         "TotalCPU,CPUTime,UserCPU,SystemCPU,ReqMem,MaxRSS,MaxVMSize,ReqTRES,AllocTRES,TRESUsageInMax,"
         "TRESUsageInTot,TRESUsageOutTot,MaxDiskRead,MaxDiskWrite,MaxRSSNode,MaxRSSTask,MaxVMSizeNode,"
         "MaxVMSizeTask,MaxDiskReadNode,MaxDiskReadTask,MaxDiskWriteNode,MaxDiskWriteTask,Comment"},
        {"sacct-parsable/local-sacct-P-n_", "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strncmp(rel, table[i].prefix, strlen(table[i].prefix)) == 0)
            return table[i].fields;
    }
    return NULL;
}

char *tu_parsed_dump(const tu_parsed_t *p)
{
    json_t *all = json_array();
    char *s;
    for (size_t i = 0; i < p->njobs; i++)
        json_array_append_new(all, sa_job_to_json(p->jobs[i]));
    for (size_t i = 0; i < p->nnodes; i++)
        json_array_append_new(all, sa_node_to_json(p->nodes[i]));
    s = json_dumps(all, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(all);
    return s;
}

/* ---- merged documents of the fixtures ------------------------------------------------------------ */

/* The observation time of a parse: meta's last update, else just after the latest time its records print. */
static int64_t parse_time(const tu_parsed_t *p)
{
    int64_t at = p->meta.last_update;
    if (at != SA_UNSET)
        return at;
    at = 0;
    for (size_t i = 0; i < p->njobs; i++) {
        const sa_job_t *j = p->jobs[i];
        const int64_t t[4] = {j->submit, j->eligible, j->start, j->end};
        for (int k = 0; k < 4; k++)
            if (t[k] != SA_UNSET && t[k] > at)
                at = t[k];
    }
    return at + 1;
}

/* Merges every job record of a parse into docs (job id -> document); displaced ones go to old. */
static void merge_parse(const tu_parsed_t *p, int64_t at, const char *where, json_t *docs, json_t *old)
{
    sa_obs_ctx_t ctx = {"fx", at, p->meta.slurm_release, p->meta.data_parser};
    for (size_t i = 0; i < p->njobs; i++) {
        char key[32];
        json_t *doc, *sup = NULL;
        sa_merge_kind_t kind;
        sa_error_t err;
        snprintf(key, sizeof key, "%lld", (long long)p->jobs[i]->job_id);
        doc = json_incref(json_object_get(docs, key));
        if (!sa_jobdoc_merge(&doc, p->jobs[i], &ctx, &kind, &sup, &err))
            fail_msg("%s: job %s: merge: %s", where, key, err.message);
        json_object_set_new(docs, key, doc);
        if (sup)
            json_array_append_new(old, sup);
    }
}

/* Merges every job file of fixtures/<dir> (squeue*, sacct*, in name order) and hands each document to fn. */
static size_t merge_fixture_dir(const char *dir, const char *gen_version, tu_doc_fn fn, void *ctx)
{
    struct dirent **names;
    int n = scandir(tu_fixture(dir), &names, NULL, alphasort);
    json_t *docs = json_object(), *old = json_array(), *doc;
    const char *k;
    size_t i, files = 0, count = 0;

    if (n < 0)
        fail_msg("cannot read %s", tu_fixture(dir));
    for (int f = 0; f < n; f++) {
        const char *file = names[f]->d_name;
        if (strncmp(file, "squeue", 6) == 0 || strncmp(file, "sacct", 5) == 0) {
            char rel[512];
            tu_parsed_t p;
            snprintf(rel, sizeof rel, "%s/%s", dir, file);
            if (gen_version) {
                tu_parse_gen(gen_version, file, &p);
            } else {
                sa_sacct_text_opts_t topts = {0};
                sa_error_t err;
                if (strcmp(file, "sacct-P-n.txt") == 0) /* fixtures/slurm-22.05/README.md */
                    topts.fields = "JobID,JobIDRaw,State,ExitCode,Start,End,Elapsed,Timelimit,Reason";
                if (!tu_parse_file(tu_fixture(rel), &topts, &p, &err))
                    fail_msg("%s: %s", rel, err.message);
            }
            merge_parse(&p, gen_version ? TU_GEN_AT : parse_time(&p), rel, docs, old);
            tu_parsed_clear(&p);
            files++;
        }
        free(names[f]);
    }
    free(names);
    if (files < 4)
        fail_msg("%s: only %zu files of jobs", dir, files);
    json_object_foreach(docs, k, doc) {
        fn(doc, dir, ctx);
        count++;
    }
    json_array_foreach(old, i, doc) {
        fn(doc, dir, ctx);
        count++;
    }
    json_decref(docs);
    json_decref(old);
    return count;
}

size_t tu_merge_fixtures(tu_doc_fn fn, void *ctx)
{
    size_t count = 0;
    for (const char *const *v = tu_gen_versions; *v; v++) {
        char dir[64];
        snprintf(dir, sizeof dir, "gen/%s", *v);
        count += merge_fixture_dir(dir, *v, fn, ctx);
    }
    return count + merge_fixture_dir("slurm-22.05", NULL, fn, ctx);
}

/* ---- readers ------------------------------------------------------------------------------------ */

static ssize_t one_byte_read(sa_reader_t *r, char *buf, size_t cap, sa_error_t *error)
{
    (void)error;
    if (r->mem_pos == r->mem_len || cap == 0)
        return 0;
    buf[0] = r->mem[r->mem_pos++];
    return 1;
}

void tu_reader_one_byte(sa_reader_t *r, const char *data, size_t len)
{
    sa_reader_init_mem(r, data, len);
    r->read = one_byte_read;
}
