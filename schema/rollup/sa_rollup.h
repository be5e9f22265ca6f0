/*
 * sa_rollup.h - usage rollups: what every job document contributes to each UTC day of
 * its cluster, kept beside the archive so that a report reads its window's days by _id
 * instead of the window's job documents (sreport's usage tables; XDMoD's aggregates).
 * This header is the format's page; the pieces are:
 *   sa_rollup_key.h      the documents' names (a typed key, one _id writer, one parser)
 *   sa_rollup_contrib.h  what one job document contributes (the one function rollups derive from)
 *   sa_rollup_doc.h      a rollup document in memory, its codec, its versions, the commit document
 * The writer is ingest/rollup/ (its README says how a flush, a kill and a rebuild go), the
 * reader report/sa_rollup_reader.c.
 *
 * Collection `rollups`. A cluster's documents are split in parts by job id (part = job id
 * / SA_ROLLUP_PART_BLOCK mod SA_ROLLUP_PARTS, sa_rollup_part_of; the superseded documents
 * of a job go where the job goes), so that a document holds at most the jobs of its part
 * whatever the cluster runs in a day, a writer reads and rewrites only the parts its batch
 * of consecutive job ids touches (one or two), and a small cluster's day is one or two
 * documents. Per cluster, UTC day and part:
 *   rows     (ROWS) the sums, one per (account, user, partition, qos, gpu_type): allocated
 *            gpu_s (GPUs of the row's type x seconds), cpu_s, mem_mb_s, billing_milli_s;
 *            runs started that day; runs ended that day by final state; and the
 *            efficiency sums of runs that ended that day (runs, gpu_runs, mem_runs,
 *            gpu_s, idle_gpu_s under SA_ROLLUP_IDLE_PCT, no_data_gpu_s, util_gpu_s,
 *            util_mpct_s, cpu_used_ms, cpu_alloc_s, mem_used_kib, mem_req_kib, prom_s), packed
 *            like the members (r: zigzag varints per row; kt, st: the keys and states
 *            tables, NUL-terminated strings): the server then decodes a day as a few
 *            values (FerretDB spends microseconds per value; a day of 349 rows as BSON
 *            documents cost it 150 ms to return). CPU-only runs have gpu_type "".
 *   members  (MEMBERS) per job document (_id of jobs or jobs_superseded, with its version
 *            _v) what it adds to that day: the run's interval clipped to the day, its rates,
 *            the end and efficiency figures of a run that ended that day, and a GPU run's
 *            nodes (SA_RR_*; SA_RR_HOSTS indexes the hosts table ht, so that health's
 *            gpu-capacity reads no job document; 0.5.0 stored 23 fields, read as keeping
 *            no nodes, SA_RR_HOSTS_UNKEPT, and equal to this version's otherwise).
 *            Packed (ids: the _ids joined by NUL; m: per member its version, record count
 *            and tombstone time, then nf zigzag varints per record, times as seconds into
 *            the day, about 30 bytes a record; keys and states: the tables the records
 *            index), so the server stores a day as a few values whatever its job count.
 *            rows = the sum of the members; a report reads rows for whole days and members
 *            for a day a boundary of its window cuts, so any window is exact to the second.
 *            A document holds at most 16 MB (MongoDB's limit, half of it for the version
 *            before, see Commits): about 250,000 job runs of one day and part; by
 *            estimate about 160,000 if each is a GPU run on nodes no other run of its day
 *            and part used (a hostlist is kept once per document, ht).
 * and per cluster and part, OPEN: the members of runs still open (no end yet): their start
 * and rates, counted by a report up to the as_of of the commit it reads. A poll rewrites a
 * part only when one of its runs starts or ends.
 *
 * Three lists of job documents, with the same members, versions and tombstones, so that
 * `current`, `health`, `jobs` and `waits` read their answer by _id too:
 *   LIVE     the unfinished jobs of `jobs`, in their part: one record each (SA_RR_*): its
 *            state, GPUs (asked for while pending), CPUs, memory asked for, submit time
 *            (START) and vanished_at (ENDED_AT, -1 when listed);
 *   ENDED    the final documents (jobs and jobs_superseded) whose end is that day: state,
 *            GPUs, CPUs, memory, start (START) and end (END);
 *            in both, a job that never started keeps what utilization's planned time needs
 *            (SA_RL_*: eligible, CPUs asked for, reservation, array tasks; none in lists
 *            written before 0.5.1, whose jobs' documents a report then reads);
 *   STARTED  the runs that started that day (jobs and jobs_superseded; `waits` reads
 *            them): per run a record of its own (SA_RS_*: key, start, submit, eligible,
 *            GPUs of all types, nodes, CPUs; times as seconds into the day, SA_UNSET when
 *            not known). Every run of a requeued job counts (each waited in the queue),
 *            with its own incarnation's submit and eligible (sa_rollup_queue_times).
 *            0.4 stored these in a member record's slots (nf 23); they are read as such.
 *
 * Per cluster and month, PARTS ("<cluster>:parts:YYYY-MM"): which parts of each day hold
 * a members, ended or started document (a bit each, set in the commit that writes one,
 * never cleared), so that a report names the few documents there are, not 64 a day and
 * kind. The commit says `parts: true` once every month is indexed (a new archive at once,
 * a 0.4 archive on its first run of 0.5, from its documents' _ids); until then readers name
 * every part. The verify flags an index that misses a document; the rebuild remakes it.
 *
 * Each member is replaced whole from the job document (never incremented), and only by a
 * document version at least as new as the one it came from, so writing the same job
 * twice, in any order, from two writers or after a crash, gives the same rollups as one
 * clean run; a rebuild from the documents gives the same rollups byte for byte. A document
 * that holds no live member (tombstones only) counts as no document: the verify says so
 * too (sa_rollup_doc_empty).
 *
 * Commits. A report may run while an ingest writes, or after one was killed mid-flush,
 * and must never sum half a flush. Every flush of the writer is a commit, numbered: the
 * commit document "<cluster>:commit" holds the last one committed (seq) and the
 * observation time open runs count up to at that commit (as_of). A flush first writes its
 * intent there (its number, host, pid, and the _ids it may write), then each document
 * whole with _s = its number and, under `prev`, the version it replaces (whole, or
 * {_s, absent: true}), then the commit (seq = its number, intent gone): one write. A
 * reader takes seq and as_of once, then from each document the version its seq sees
 * (sa_rollup_version): the document when its _s <= seq, else its prev. A document written
 * twice since the reader took seq has neither: the reader starts again from a newer seq
 * (a report does so a few times, and says so under -v). A writer that finds the intent of
 * one that died takes its documents back to their prev (sa_rollup_unversioned) before it
 * writes anything; one that finds the intent of a live writer waits for it. FerretDB has no
 * multi-document transactions; this needs none.
 */
#ifndef SA_ROLLUP_H
#define SA_ROLLUP_H

#include "sa_rollup_contrib.h"
#include "sa_rollup_doc.h"
#include "sa_rollup_key.h"

#endif
