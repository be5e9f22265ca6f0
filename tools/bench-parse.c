/*
 * bench-parse - how fast the parsers read a large capture, and how much memory they
 * hold while doing it (the design goal: flat with the size of the input, since the
 * top-level arrays are walked one record at a time).
 *
 *   bench-parse [--jobs N] [--sample FILE] [--keep]
 *
 * Writes a synthetic `squeue --json` of N jobs (default 100,000) to a temporary file,
 * each a copy of the first job of a real capture (default: the 24.05 Slurm-web sample
 * with per-core job_resources, ~20 KB a job) with its own job id, then parses it from
 * a file descriptor into a sink that drops the records, and prints the file size,
 * the time, the throughput and the peak resident memory (getrusage ru_maxrss) before
 * and after the parse. Not run by the tests.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "sa_parse.h"

static size_t jobs_seen;

static bool count_job(sa_job_t *job, void *ctx, sa_error_t *error)
{
    (void)job;
    (void)ctx;
    (void)error;
    jobs_seen++;
    return true;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    const char *sample = SA_SAMPLES_DIR "/squeue/restd-jobs-v0041_24.05.3_slurmweb_14jobs.json";
    long n = 100000;
    bool keep = false;
    char path[] = "/tmp/bench-parse-XXXXXX";
    json_error_t jerr;
    json_t *doc, *job;
    FILE *f;
    int fd;
    struct timespec t0, t1;
    sa_reader_t r;
    sa_sink_t sink = {count_job, NULL, NULL};
    sa_meta_t meta;
    sa_error_t err;
    sa_kind_t kind;
    long rss_before;
    off_t size;
    double secs;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc)
            sample = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else {
            fprintf(stderr, "usage: bench-parse [--jobs N] [--sample FILE] [--keep]\n");
            return 2;
        }
    }
    doc = json_load_file(sample, 0, &jerr);
    job = doc ? json_array_get(json_object_get(doc, "jobs"), 0) : NULL;
    if (!job) {
        fprintf(stderr, "bench-parse: %s: no jobs[0] (%s)\n", sample, jerr.text);
        return 1;
    }
    fd = mkstemp(path);
    f = fdopen(fd, "w");
    fputs("{\"meta\": {}, \"jobs\": [\n", f);
    for (long i = 0; i < n; i++) {
        char *s;
        json_object_set_new(job, "job_id", json_integer(1000000 + i));
        s = json_dumps(job, JSON_INDENT(2));
        fputs(i ? ",\n" : "", f);
        fputs(s, f);
        free(s);
    }
    fputs("\n], \"errors\": [], \"warnings\": []}\n", f);
    fclose(f);
    json_decref(doc);

    rss_before = maxrss_kb();
    fd = open(path, O_RDONLY);
    size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    sa_reader_init_fd(&r, fd);
    sa_meta_init(&meta);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!sa_parse_any(&r, NULL, &sink, &meta, &kind, &err)) {
        fprintf(stderr, "bench-parse: %s\n", err.message);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(fd);
    sa_meta_clear(&meta);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("squeue --json of %ld jobs: %.1f MB\n", n, (double)size / 1e6);
    printf("parsed %zu jobs in %.2f s: %.1f MB/s, %.0f jobs/s\n", jobs_seen, secs, (double)size / 1e6 / secs,
           (double)jobs_seen / secs);
    printf("peak RSS: %.1f MB before parsing (generator), %.1f MB after\n", rss_before / 1024.0,
           maxrss_kb() / 1024.0);
    if (keep)
        printf("kept %s\n", path);
    else
        unlink(path);
    return 0;
}
