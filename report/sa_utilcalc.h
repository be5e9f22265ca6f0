/*
 * sa_utilcalc.h - utilization's accounting (internal to report/): where a cluster's CPU,
 * memory and GPU time went, by class, hour by hour, as sreport cluster utilization counts
 * it (slurmdbd's hourly rollup, src/plugins/accounting_storage/mysql/as_mysql_rollup.c),
 * with our own classes beside sreport's. The table by node state (sa_utilization.c), the
 * summary (sa_utilsum.c), the site and the metrics' status labels (sa_prom.c) use these
 * classes with one meaning.
 *
 * The rule, per UTC hour and resource (CPU, memory, the GPUs and each GPU type):
 * - capacity: the time series' nodes in every state x the time it knows (gaps, before its
 *   first snapshot and after its last count nowhere);
 * - allocated: what the runs had allocated, from their exact start and end as `usage`
 *   counts them (the rollups, or the job documents), within the time the series knows,
 *   never more than the capacity (slurmdbd caps it so); without an archive, the snapshots'
 *   allocation (sampled: a job's start and end move to the poll times);
 * - the rest by the node's exact state (sa_tsdb_free_class): planned_down, down, reserved,
 *   stranded, idle; CPUs Slurm calls "other" are down;
 * - per node state, the exact allocation is split as the snapshots saw it: each state keeps
 *   the allocation its snapshots saw; what the runs had more goes to the free time of the
 *   states whose free time is idle (where the runs the snapshots missed ran), in proportion
 *   to it, then to the others'; what they had less is taken from every state in proportion
 *   to its allocation (sa_util_split);
 * - planned (CPUs only, slurmdbd's rule): the CPUs of eligible pending jobs x the time they
 *   waited in the hour, never more than the hour's idle CPU time (sa_util_planned).
 */
#ifndef SA_UTILCALC_H
#define SA_UTILCALC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_tsdb.h"

/* The classes of a resource's time. */
typedef enum {
    SA_UC_ALLOCATED = 0, /* allocated to jobs */
    SA_UC_IDLE,          /* free and usable */
    SA_UC_STRANDED,      /* free GPUs or memory on a node with no free CPU */
    SA_UC_DOWN,          /* free on a node DOWN, failing or drained (slurmdbd's down); Slurm's other CPUs */
    SA_UC_PLANNED_DOWN,  /* free on a node in maintenance, powered down or not yet in service */
    SA_UC_RESERVED,      /* free on a node of a reservation (not maintenance) */
    SA_UC_PLANNED,       /* idle CPUs eligible pending jobs waited for (sreport's Planned) */
    SA_UC_UNKNOWN,       /* neither allocated nor free as far as anyone said */
    SA_UC_N
} sa_uclass_t;

/* "allocated", "idle", "stranded", "down", "planned_down", "reserved", "planned", "unknown". */
const char *sa_uclass_name(sa_uclass_t c);
/* The class of free resources of class c (sa_tsdb_free_t) of a node. */
sa_uclass_t sa_uclass_of_free(sa_tsdb_free_t c);

/* One node state's time of one resource in one hour, as the series says it (resource-seconds). */
typedef struct {
    double total;     /* capacity */
    double sampled;   /* allocated at the snapshots */
    double unknown;   /* of total: whose use nobody said (neither in sampled nor free) */
    double other;     /* of total: CPUs neither allocated nor idle (Slurm's "other"): never allocated */
    sa_tsdb_free_t fc; /* the class of the state's free resources */
} sa_uin_t;

/*
 * Splits one hour of one resource over the node states in[0..n) into out[i * SA_UC_N + class]
 * (resource-seconds; overwritten). exact >= 0: the resource-seconds the runs had allocated in
 * the hour's known time (capped at the capacity; *capped, may be NULL, gets what was cut);
 * exact < 0: the snapshots' allocation is kept and the time whose use nobody said is
 * unknown. cpu: the resource is CPUs (an idle CPU is never stranded, "other" CPUs are down).
 * Free time goes to the class of its state; the classes of each state add up to its total.
 */
void sa_util_split(const sa_uin_t *in, size_t n, double exact, bool cpu, double *out, double *capped);

/*
 * Planned CPU time of an hour by slurmdbd's rule: the pending jobs' raw planned time, but
 * never more than the hour's idle CPU time (slurmdbd takes the excess off planned).
 */
double sa_util_planned(double raw, double idle);

/*
 * slurmdbd's planned time of one pending job record in [hfrom, hto) (as_mysql_rollup.c
 * _add_planned_time): its requested CPUs x the seconds it was eligible and not started
 * there: from max(eligible, hfrom) to min(start, hto) (start SA_UNSET: not started then;
 * a job that never started counts to its end, when it has one), x the array tasks it stands
 * for (0: one). 0 when eligible is not known.
 */
double sa_util_pending_secs(int64_t eligible, int64_t start, int64_t end, int64_t hfrom, int64_t hto, int64_t cpus,
                            int64_t tasks);

#endif
