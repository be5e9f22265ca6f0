/*
 * sa_fault.h - fault points for the test suite's fault matrix (issue 10).
 *
 * SA_FAULT_POINT("name") marks a place where a crash must lose nothing (inside the
 * time series transaction, between MongoDB writes, between the writes and the
 * watermark...). It compiles to nothing unless SA_FAULT_INJECTION is defined, which
 * only the test-only binary `slurm-ingest-faults` is (CMake option SA_FAULT_INJECTION,
 * OFF by default): the slurm-ingest that is installed has no hook.
 *
 * In slurm-ingest-faults, the environment variable SA_FAULT=name[:N] makes the process
 * raise SIGKILL the Nth time (default: the first) it reaches the point `name`, exactly
 * as `kill -9` from outside would, without a debugger. The points:
 *   tsdb-commit        inside the time series transaction, its rows written, before COMMIT
 *   mongo-write        after each bulk write of job documents (insert or replace command)
 *   superseded-written after the documents displaced by a reused id are written, before the jobs
 *   before-watermark   a snapshot's jobs landed, its sacct watermark not moved yet
 *   before-drop        the watermark moved, the snapshot not yet dropped from the spool
 *   kept               the run's capture is kept in the spool, nothing of it landed
 */
#ifndef SA_FAULT_H
#define SA_FAULT_H

#ifdef SA_FAULT_INJECTION
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * Raises SIGKILL when SA_FAULT names this point and its count is reached. The count is
 * of the named point only (every place with that name in one source file counts).
 */
static inline void sa_fault_point(const char *name)
{
    static unsigned hits;
    const char *want = getenv("SA_FAULT");
    size_t n = strlen(name);
    unsigned at = 1;

    if (!want || strncmp(want, name, n) != 0 || (want[n] != '\0' && want[n] != ':'))
        return;
    if (want[n] == ':')
        at = (unsigned)strtoul(want + n + 1, NULL, 10);
    if (++hits == at)
        raise(SIGKILL);
}

#define SA_FAULT_POINT(name) sa_fault_point(name)
#else
#define SA_FAULT_POINT(name) ((void)0)
#endif

#endif
