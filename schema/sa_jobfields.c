/*
 * sa_jobfields.c - the table of every member of a job document (see sa_jobfields.h).
 *
 * Times are BSON dates (UTC, whole seconds), counts 64-bit integers ("long"), memory
 * MiB. A member is absent when Slurm did not say (never null, never "").
 */
#include "sa_jobfields.h"

#include <string.h>

const sa_jobfield_t sa_jobfields[] = {
    /* ---- identity and bookkeeping ---- */
    {"_id", "string", "the document's key, \"<cluster>:<job_id>\" (jobs_superseded: \"<cluster>:<job_id>:<submit epoch>\")"},
    {"_v", "long", "version set by the writer (1 at insert, +1 per write); a replace is conditional on it, so two "
                   "ingests of one cluster never overwrite each other's merge (jobs only)"},
    {"_merge", "object", "merge rank (submit, final, sacct, at, start) of the observation behind the current "
                         "fields: a record replaces them only with a greater rank, so an older snapshot never rolls "
                         "the document back"},
    {"_merge.submit", "date", "first part of the rank: the record's submit time (a later incarnation wins)"},
    {"_merge.final", "long", "second part of the rank: 1 when the record's state is final, else 0"},
    {"_merge.sacct", "long", "third part of the rank: 1 for an sacct record, 0 for squeue"},
    {"_merge.at", "date", "fourth part of the rank: the observation time of the record"},
    {"_merge.start", "date", "last part of the rank: the start of the run the record describes (epoch 0 when none), "
                             "so that of one sacct -D capture the last run is the current one; ties left after it go "
                             "to the record whose current fields sort last"},
    {"cluster", "string", "the --cluster name of the ingest that wrote the document"},
    {"job_id", "long", "raw Slurm job id (JobIDRaw)"},
    {"job_id_display", "string", "the id as Slurm shows it: 123, 123_4 (array task), 123+1 (het component)"},
    {"array", "object", "array job membership, present for array jobs only"},
    {"array.job_id", "long", "the array's master job id (ArrayJobID)"},
    {"array.task_id", "long", "this task's index in the array (absent for a meta-record of pending tasks)"},
    {"array.task_string", "string", "the pending tasks a meta-record stands for, e.g. 1-10%3"},
    {"array.max_tasks", "long", "the array's throttle (%N): at most this many tasks run at once"},
    {"het", "object", "heterogeneous job membership, present for het components only"},
    {"het.job_id", "long", "the het job's leader id"},
    {"het.offset", "long", "this component's offset in the het job (0, 1, ...)"},
    {"user", "string", "the owner's user name"},
    {"user_id", "long", "the owner's numeric uid"},
    {"group", "string", "the owner's group name"},
    {"group_id", "long", "the owner's numeric gid"},
    {"account", "string", "the Slurm account charged"},
    {"partition", "string", "the partition(s) the job asked for or runs in"},
    {"qos", "string", "the quality of service"},
    {"name", "string", "the job name, exactly as Slurm printed it"},
    {"reservation", "string", "the reservation the job runs in"},
    {"wckey", "string", "the workload characterization key"},
    /* ---- current state ---- */
    {"state", "string", "base state as Slurm printed it: PENDING RUNNING COMPLETED FAILED CANCELLED TIMEOUT "
                        "NODE_FAIL OUT_OF_MEMORY REQUEUED REVOKED ... (unknown words kept)"},
    {"state_flags", "array", "the state's flags, sorted: COMPLETING, REQUEUED, CONFIGURING, ..."},
    {"state_flags[]", "string", "one state flag"},
    {"reason", "string", "Slurm's state reason (Priority, Resources, TimeLimit, None, ...)"},
    {"state_description", "string", "Slurm's free-text description of the state"},
    {"submit", "date", "submit time of the current incarnation (Slurm resets it when it requeues the job)"},
    {"submit_first", "date", "the earliest submit time any record gave: the first submission of a requeued job"},
    {"eligible", "date", "when the job became eligible to run"},
    {"start", "date", "start of the current run, from a record that saw it start (never a forecast)"},
    {"expected_start", "date", "a pending job's forecast start when its record gives one as the start (volatile; "
                               "squeue's parser keeps Slurm's forecast in extra.expected_start instead)"},
    {"end", "date", "when the job ended: sacct's End, or start + elapsed when Slurm recorded no End; absent until "
                    "it ended"},
    {"expected_end", "date", "squeue's forecast of an unfinished job's end, start + time limit (volatile)"},
    {"elapsed_s", "long", "the job's run time in seconds, once it ended"},
    {"time_limit_min", "long", "the time limit in minutes"},
    {"time_limit_unlimited", "bool", "true when the time limit is UNLIMITED (time_limit_min is then absent)"},
    {"nodes", "string", "the nodes of the current run, a Slurm hostlist expression such as gpu[01-04]"},
    {"node_count", "long", "the number of nodes allocated (or requested while pending)"},
    {"cpus", "long", "the CPUs allocated (or requested while pending)"},
    /* ---- what was asked and given ---- */
    {"req", "object", "the requested TRES"},
    {"req.cpus", "long", "CPUs requested"},
    {"req.mem_mb", "long", "memory requested, MiB"},
    {"req.nodes", "long", "nodes requested"},
    {"req.billing", "double", "billing weight requested"},
    {"req.gpus", "long", "GPUs requested (0: none)"},
    {"req.gpus_by_type", "array", "GPUs requested by type, present when req.gpus > 0"},
    {"req.gpus_by_type[]", "object", "one GPU type and its count"},
    {"req.gpus_by_type[].type", "string", "GPU type (a100, nvidia_h100_80gb_hbm3, MIG profile 3g.40gb); '' = untyped"},
    {"req.gpus_by_type[].count", "long", "GPUs of that type"},
    {"req.other", "array", "requested TRES the model does not name (energy, license/x, gres/shard, ...)"},
    {"req.other[]", "object", "one such TRES"},
    {"req.other[].name", "string", "the TRES name as Slurm printed it"},
    {"req.other[].value", "string", "its value as Slurm printed it"},
    {"alloc", "object", "the TRES allocated to the current run"},
    {"alloc.cpus", "long", "CPUs allocated"},
    {"alloc.mem_mb", "long", "memory allocated, MiB"},
    {"alloc.nodes", "long", "nodes allocated"},
    {"alloc.billing", "double", "billing weight allocated"},
    {"alloc.gpus", "long", "GPUs allocated (0: CPU-only); from the GRES when the TRES lack them"},
    {"alloc.gpus_by_type", "array", "GPUs allocated by type, present when alloc.gpus > 0"},
    {"alloc.gpus_by_type[]", "object", "one GPU type and its count"},
    {"alloc.gpus_by_type[].type", "string", "GPU type; '' = untyped"},
    {"alloc.gpus_by_type[].count", "long", "GPUs of that type"},
    {"alloc.other", "array", "allocated TRES the model does not name"},
    {"alloc.other[]", "object", "one such TRES"},
    {"alloc.other[].name", "string", "the TRES name as Slurm printed it"},
    {"alloc.other[].value", "string", "its value as Slurm printed it"},
    {"gpus", "long", "GPUs allocated to the current run (0: CPU-only), as alloc.gpus"},
    {"gpu_types", "array", "the GPU types of the current run, as in alloc.gpus_by_type"},
    {"gpu_types[]", "string", "one GPU type; '' = untyped"},
    {"exit", "object", "how the job ended, from its final records: of several, the greatest by (reliable, sacct, "
                       "submit, at, start, code), so a stale snapshot never undoes sacct's"},
    {"exit.code", "long", "exit code of the batch script (or the job's first failing task)"},
    {"exit.signal", "long", "signal that ended it (0: none)"},
    {"exit.reliable", "bool", "false when from sacct JSON <= v0.0.39, which reports SUCCESS/0 for every job"},
    {"exit.source", "string", "the source of the record that gave it: squeue, sacct-json or sacct-text"},
    {"exit._key", "object", "the rest of its rank: a code of a greater rank replaces it (the same code seen again "
                            "later does not, so a steady poll changes nothing)"},
    {"exit._key.submit", "date", "the submit time of the record that gave it (a requeue's later incarnation wins)"},
    {"exit._key.at", "date", "the observation time of the record that gave it"},
    {"exit._key.start", "date", "the start of the run the record describes (orders the runs of one sacct -D capture)"},
    {"derived_exit", "object", "the derived exit code (the highest of the job's steps), as exit"},
    {"derived_exit.code", "long", "the highest exit code of any step"},
    {"derived_exit.signal", "long", "the signal of that step (0: none)"},
    {"derived_exit.reliable", "bool", "false when from sacct JSON <= v0.0.39"},
    {"derived_exit.source", "string", "the source of the record that gave it"},
    {"derived_exit._key", "object", "the rest of its rank, as exit._key"},
    {"derived_exit._key.submit", "date", "the submit time of the record that gave it"},
    {"derived_exit._key.at", "date", "the observation time of the record that gave it"},
    {"derived_exit._key.start", "date", "the start of the run the record describes"},
    {"restart_cnt", "long", "how many times the job was requeued: the largest count any record gave, at least "
                            "the number of runs minus one"},
    {"requeue_allowed", "bool", "true when Slurm may requeue the job"},
    /* ---- history ---- */
    {"history", "array", "every state transition once, in time order, whatever order the records arrived in"},
    {"history[]", "object", "one transition: the job entered state at time at"},
    {"history[].state", "string", "the base state entered"},
    {"history[].flags", "array", "the flags seen with it (the union of every observation of the entry)"},
    {"history[].flags[]", "string", "one flag"},
    {"history[].reason", "string", "the reason of the earliest observation of the entry that gave one"},
    {"history[]._reason_at", "date", "the time of the observation that gave reason: an earlier observation "
                                     "replaces it, so the reason does not depend on arrival order"},
    {"history[].at", "date", "when the job entered the state: exact (a submit, start or end time), or when a "
                             "snapshot first saw it there (_observed)"},
    {"history[]._observed", "bool", "true when at is only when a snapshot first saw the state (the transition was "
                                    "at or before it); absent when at is the transition's exact time"},
    {"history[].source", "string", "the source that gave at: squeue, sacct-json or sacct-text"},
    /* ---- runs ---- */
    {"runs", "array", "one entry per run, by start (a requeued job runs several times)"},
    {"runs[]", "object", "one run: from its start to its end on its nodes"},
    {"runs[].start", "date", "when the run started"},
    {"runs[].end", "date", "when the run ended (sacct's End, or start + elapsed); absent while it runs"},
    {"runs[].submit", "date", "the submit time of the incarnation that ran"},
    {"runs[].state", "string", "the run's base state (RUNNING, or how it ended: REQUEUED, COMPLETED, NODE_FAIL, ...)"},
    {"runs[].flags", "array", "the state flags of the run's record"},
    {"runs[].flags[]", "string", "one flag"},
    {"runs[].nodes", "string", "the run's nodes, a hostlist expression"},
    {"runs[].node_count", "long", "the number of the run's nodes"},
    {"runs[].cpus", "long", "the CPUs allocated to the run"},
    {"runs[].mem_mb", "long", "the memory allocated to the run, MiB"},
    {"runs[].gpus", "long", "the GPUs allocated to the run (0: CPU-only)"},
    {"runs[].gpus_by_type", "array", "the run's GPUs by type, present when runs[].gpus > 0"},
    {"runs[].gpus_by_type[]", "object", "one GPU type and its count"},
    {"runs[].gpus_by_type[].type", "string", "GPU type; '' = untyped (the report then asks the node time series)"},
    {"runs[].gpus_by_type[].count", "long", "GPUs of that type"},
    {"runs[].gpu_type", "string", "the type of the run's GPUs: the one typed TRES entry, or for untyped GPUs the "
                                  "single GPU type of its nodes at its start (absent when several or unknown)"},
    {"runs[].gpu_type_source", "string", "where gpu_type comes from: tres, node (the nodes' gres), carried (the "
                                         "nodes' GPUs carried from an earlier per-node observation), unknown"},
    {"runs[].exit", "object", "how the run ended"},
    {"runs[].exit.code", "long", "its exit code"},
    {"runs[].exit.signal", "long", "its signal (0: none)"},
    {"runs[].exit.reliable", "bool", "false when from sacct JSON <= v0.0.39"},
    {"runs[].elapsed_s", "long", "the run's run time in seconds, once it ended"},
    {"runs[].source", "string", "the source of the record that wrote the run"},
    {"runs[]._key", "object", "merge rank of the record that wrote the run: a record of the same run replaces it "
                              "only with a greater rank"},
    {"runs[]._key.final", "long", "first part: 1 when the record's state is final"},
    {"runs[]._key.sacct", "long", "second part: 1 for an sacct record"},
    {"runs[]._key.at", "date", "last part: the observation time of the record"},
    {"runs[].steps", "array", "the run's steps, from sacct"},
    {"runs[].steps[]", "object", "one step"},
    {"runs[].steps[].id", "string", "the step id: batch, extern, interactive, 0, 1, 0+1, ..."},
    {"runs[].steps[].name", "string", "the step name"},
    {"runs[].steps[].state", "string", "the step's base state"},
    {"runs[].steps[].flags", "array", "the step's state flags"},
    {"runs[].steps[].flags[]", "string", "one flag"},
    {"runs[].steps[].start", "date", "when the step started"},
    {"runs[].steps[].end", "date", "when the step ended"},
    {"runs[].steps[].elapsed_s", "long", "the step's run time in seconds, once it ended"},
    {"runs[].steps[].exit", "object", "how the step ended"},
    {"runs[].steps[].exit.code", "long", "its exit code"},
    {"runs[].steps[].exit.signal", "long", "its signal (0: none)"},
    {"runs[].steps[].exit.reliable", "bool", "false when from sacct JSON <= v0.0.39"},
    {"runs[].steps[].nodes", "string", "the step's nodes, a hostlist expression"},
    {"runs[].steps[].alloc", "object", "the TRES allocated to the step"},
    {"runs[].steps[].alloc.cpus", "long", "CPUs"},
    {"runs[].steps[].alloc.mem_mb", "long", "memory, MiB"},
    {"runs[].steps[].alloc.nodes", "long", "nodes"},
    {"runs[].steps[].alloc.billing", "double", "billing weight"},
    {"runs[].steps[].alloc.gpus", "long", "GPUs (0: none)"},
    {"runs[].steps[].alloc.gpus_by_type", "array", "GPUs by type, present when gpus > 0"},
    {"runs[].steps[].alloc.gpus_by_type[]", "object", "one GPU type and its count"},
    {"runs[].steps[].alloc.gpus_by_type[].type", "string", "GPU type; '' = untyped"},
    {"runs[].steps[].alloc.gpus_by_type[].count", "long", "GPUs of that type"},
    {"runs[].steps[].alloc.other", "array", "TRES the model does not name"},
    {"runs[].steps[].alloc.other[]", "object", "one such TRES"},
    {"runs[].steps[].alloc.other[].name", "string", "the TRES name as Slurm printed it"},
    {"runs[].steps[].alloc.other[].value", "string", "its value as Slurm printed it"},
    /* ---- observation ---- */
    {"seen", "object", "when the archive saw the job"},
    {"seen.first", "date", "the first observation"},
    {"seen.last", "date", "the last observation that changed the document, or the last snapshot that listed it"},
    {"vanished_at", "date", "the last squeue snapshot that listed this unfinished job before squeue stopped "
                            "listing it; cleared when it is listed again or ends"},
    {"slurm", "object", "what produced the record behind the current fields"},
    {"slurm.source", "string", "squeue, sacct-json or sacct-text"},
    {"slurm.release", "string", "the Slurm release, e.g. 22.05.8"},
    {"slurm.data_parser", "string", "the data_parser (openapi) version of JSON output, e.g. v0.0.40"},
    {"extra", "object", "every field Slurm printed that is not modelled above, as printed (keys with '.' or a "
                        "leading '$' are %-escaped)"},
    {NULL, NULL, NULL},
};

const sa_jobfield_t *sa_jobfield_find(const char *path)
{
    for (const sa_jobfield_t *f = sa_jobfields; f->path; f++) {
        if (strcmp(f->path, path) == 0)
            return f;
    }
    return NULL;
}
