/*
 * test_parse_record.c - sa_parse_record: a job record read again alone, from the bytes
 * the whole parse said it came from (sa_sink_t span), is the same record.
 *
 * slurm-ingest notes where each changed record is instead of holding it when a snapshot
 * changes more jobs than it keeps in memory, and reads them again in job id order to
 * write each job once. This checks that every job record of every input the repository
 * and ../shared/slurm-samples hold (squeue and sacct JSON of every data_parser version,
 * sacct -P/-p text with and without a header, with a byte order mark, hostile and broken
 * inputs that are set aside in part) gives, alone, the record of the whole parse: the
 * same JSON form (sa_job_to_json) and the same digest. A record whose lines are not
 * contiguous (a line set aside among them) has no span, and that is counted too.
 */
#include "testutil.h"
#include "tu_parse.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "sa_jobdoc.h"
#include "sa_json_memo.h"

typedef struct {
    sa_span_t span;   /* the sink's: set before each job */
    const char *data; /* the whole input */
    size_t len;
    const sa_sacct_text_opts_t *topts;
    const char *path;
    size_t records, spanless, asides;
    sa_json_memo_t *memo; /* shared by the records read again, as slurm-ingest shares one */
} check_t;

static bool check_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    check_t *c = ctx;
    sa_job_t *again = NULL;
    sa_error_t err;
    json_t *a, *b;
    char *ta, *tb;
    (void)error;

    /* alone twice: with the member values of the records read before (slurm-ingest's way), and without */
    for (int with_memo = 1; with_memo >= 0; with_memo--) {
    if (c->span.len == 0) {
        c->spanless++;
        return true;
    }
    assert_true(c->span.off + c->span.len <= c->len);
    if (!sa_parse_record(c->data + c->span.off, (size_t)c->span.len, c->span.header,
                         c->span.header_len, c->span.delimiter, c->topts, with_memo ? c->memo : NULL, &again, &err))
        fail_msg("%s: job %lld at byte %llu (%llu bytes): alone: %s", c->path, (long long)job->job_id,
                 (unsigned long long)c->span.off, (unsigned long long)c->span.len, err.message);
    a = sa_job_to_json(job);
    b = sa_job_to_json(again);
    ta = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    tb = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
    if (strcmp(ta, tb) != 0)
        fail_msg("%s: job %lld at byte %llu reads otherwise alone:\n  whole: %s\n  alone: %s", c->path,
                 (long long)job->job_id, (unsigned long long)c->span.off, ta, tb);
    assert_true(sa_job_digest(job, NULL) == sa_job_digest(again, NULL));
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    sa_job_destroy(again);
    }
    c->records++;
    return true;
}

static bool count_aside(const char *raw, size_t len, const char *why, bool kept, void *ctx, sa_error_t *error)
{
    (void)raw, (void)len, (void)why, (void)kept, (void)error;
    ((check_t *)ctx)->asides++;
    return true;
}

/* Parses data as slurm-ingest does (bad records set aside) and checks each job read alone. */
static void check_bytes(const char *path, const char *data, size_t len, const sa_sacct_text_opts_t *topts,
                        size_t *records, size_t *spanless, size_t *asides)
{
    check_t c = {.data = data, .len = len, .topts = topts, .path = path, .memo = sa_json_memo_new()};
    sa_sink_t sink = {check_job, NULL, &c, count_aside, true, &c.span};
    sa_reader_t r;
    sa_meta_t meta;
    sa_kind_t kind;
    sa_error_t err;

    sa_meta_init(&meta);
    sa_reader_init_mem(&r, data, len);
    /* inputs that are refused whole (a fuzz seed of another target, a broken capture) have no records to read again */
    (void)sa_parse_any(&r, topts, &sink, &meta, &kind, &err);
    sa_meta_clear(&meta);
    sa_json_memo_destroy(c.memo);
    *records += c.records;
    *spanless += c.spanless;
    *asides += c.asides;
}

static void check_file(const char *path, const sa_sacct_text_opts_t *topts, size_t *records, size_t *spanless,
                       size_t *asides)
{
    size_t len;
    char *data = tu_read_file(path, &len);
    assert_non_null(data);
    check_bytes(path, data, len, topts, records, spanless, asides);
    free(data);
}

/* Every file under dir (recursively); fields_of gives a header-less sacct file's columns. */
static size_t check_tree(const char *dir, const char *rel, size_t *records, size_t *spanless, size_t *asides)
{
    char path[4096], sub[4096];
    struct dirent *e;
    size_t files = 0;
    DIR *d = opendir(dir);

    assert_non_null(d);
    while ((e = readdir(d))) {
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            files += check_tree(path, sub, records, spanless, asides);
        } else if (S_ISREG(st.st_mode) && st.st_size < (64 << 20)) {
            sa_sacct_text_opts_t o = {NULL, tu_sample_fields(sub), NULL};
            check_file(path, &o, records, spanless, asides);
            files++;
        }
    }
    closedir(d);
    return files;
}

/* The repository's fixtures: generated clusters of every version, the Slurm 22.05 captures, fuzz seeds. */
static void test_fixtures(void **state)
{
    size_t records = 0, spanless = 0, asides = 0, files;
    (void)state;
    files = check_tree(tu_fixture(""), "", &records, &spanless, &asides);
    printf("  fixtures: %zu files, %zu job records read again alone, %zu without a span, %zu set aside\n", files,
           records, spanless, asides);
    assert_true(records > 1000);
}

/* The generated fixtures' header-less sacct files, with the field lists their manifests give. */
static void test_generated_headerless(void **state)
{
    size_t records = 0, spanless = 0, asides = 0;
    (void)state;
    for (int i = 0; tu_gen_versions[i]; i++) {
        char rel[256], *fields = tu_gen_fields(tu_gen_versions[i], "sacct-p-n.txt");
        sa_sacct_text_opts_t o = {NULL, fields, NULL};
        assert_non_null(fields);
        snprintf(rel, sizeof rel, "gen/%s/sacct-p-n.txt", tu_gen_versions[i]);
        check_file(tu_fixture(rel), &o, &records, &spanless, &asides);
        free(fields);
    }
    printf("  header-less generated sacct text: %zu records\n", records);
    assert_true(records > 100);
    assert_int_equal(spanless, 0);
}

/* A byte order mark, CRLF line ends, a value with a newline, local time, a bad step line among a job's lines. */
static void test_text_corners(void **state)
{
    static const char text[] =
        "\xEF\xBB\xBFJobID|JobIDRaw|State|Submit|Start|End|JobName\r\n"
        "10|10|COMPLETED|2026-10-01T10:00:00|2026-10-01T10:01:00|2026-10-01T10:02:00|a\r\n"
        "10.batch|10.batch|COMPLETED|2026-10-01T10:01:00|2026-10-01T10:01:00|2026-10-01T10:02:00|batch\r\n"
        "11|11|FAILED|2026-10-01T10:00:00|2026-10-01T10:01:00|2026-10-01T10:02:00|two\nlines\n"
        "12|12|COMPLETED|x|y|z|bad-times\n"
        "12.batch|12.batch|COMPLETED|2026-10-01T10:01:00|2026-10-01T10:01:00|2026-10-01T10:02:00|batch\n"
        "13|13|RUNNING|2026-10-01T10:00:00|2026-10-01T10:01:00|Unknown|c\n"
        "12.0|12.0|COMPLETED|2026-10-01T10:01:00|2026-10-01T10:01:00|2026-10-01T10:02:00|x\n"
        "13.0|13.0|RUNNING|2026-10-01T10:01:00|2026-10-01T10:01:00|Unknown|d";
    sa_sacct_text_opts_t helsinki = {NULL, NULL, "Europe/Helsinki"};
    size_t records = 0, spanless = 0, asides = 0;
    (void)state;

    check_bytes("corners", text, sizeof text - 1, NULL, &records, &spanless, &asides);
    /* 10 and 11 read again alone; 12 (its times unreadable) is set aside with its step lines 12.batch
     * and 12.0, and 12.0 comes among 13's lines: 13 has no span */
    printf("  corners: %zu records, %zu without a span, %zu set aside\n", records, spanless, asides);
    assert_int_equal(records, 2);
    assert_int_equal(spanless, 1);
    assert_int_equal(asides, 3);
    records = spanless = asides = 0;
    check_bytes("corners (Europe/Helsinki)", text, sizeof text - 1, &helsinki, &records, &spanless, &asides);
    assert_int_equal(records, 2);
}

/* The samples of ../shared/slurm-samples: counted as skipped, with the reason, when absent. */
static void test_samples(void **state)
{
    size_t records = 0, spanless = 0, asides = 0, files;
    (void)state;
    tu_require_samples();
    files = check_tree(tu_samples_dir(), "", &records, &spanless, &asides);
    printf("  samples: %zu files, %zu job records read again alone, %zu without a span, %zu set aside\n", files,
           records, spanless, asides);
    assert_true(records > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_generated_headerless),
        cmocka_unit_test(test_text_corners),
        cmocka_unit_test(test_samples),
    };
    return tu_run_group_tests("parse_record", tests, NULL, NULL);
}
