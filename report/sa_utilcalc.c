/*
 * sa_utilcalc.c - utilization's accounting rule, one hour and one resource at a time
 * (sa_utilcalc.h). Pure: numbers in, numbers out.
 */
#include "sa_utilcalc.h"

#include <string.h>

const char *sa_uclass_name(sa_uclass_t c)
{
    static const char *const names[SA_UC_N] = {"allocated", "idle",     "stranded", "down",
                                               "planned_down", "reserved", "planned", "unknown"};
    return c < SA_UC_N ? names[c] : "unknown";
}

sa_uclass_t sa_uclass_of_free(sa_tsdb_free_t c)
{
    switch (c) {
    case SA_TSDB_FREE_STRANDED: return SA_UC_STRANDED;
    case SA_TSDB_FREE_DOWN: return SA_UC_DOWN;
    case SA_TSDB_FREE_PLANNED_DOWN: return SA_UC_PLANNED_DOWN;
    case SA_TSDB_FREE_RESERVED: return SA_UC_RESERVED;
    default: return SA_UC_IDLE;
    }
}

/* The class of a state's free time (not "other" CPUs) for the resource. */
static sa_tsdb_free_t free_class(const sa_uin_t *x, bool cpu)
{
    return cpu ? sa_tsdb_cpu_free_class(x->fc, false) : x->fc;
}

/* What a state could still have had allocated: its capacity less the allocation seen and the other CPUs. */
static double allocatable(const sa_uin_t *x)
{
    double g = x->total - x->sampled - x->other;
    return g > 0 ? g : 0;
}

/*
 * The allocation of each state (out[i * SA_UC_N + SA_UC_ALLOCATED]) when the runs had exactly a (<= the capacity
 * that can be allocated): the snapshots' allocation, plus what they missed on the free
 * time of the states whose free time is idle (tier 1), in proportion to it, then on the
 * others'; or less, in proportion to the allocation seen.
 */
static void spread(const sa_uin_t *in, size_t n, double a, bool cpu, double *out)
{
    double seen = 0, g[2] = {0, 0}, e;

    for (size_t i = 0; i < n; i++) {
        seen += in[i].sampled;
        g[free_class(&in[i], cpu) == SA_TSDB_FREE_IDLE ? 0 : 1] += allocatable(&in[i]);
    }
    if (a < seen) {
        for (size_t i = 0; i < n; i++)
            out[i * SA_UC_N + SA_UC_ALLOCATED] = seen > 0 ? in[i].sampled * a / seen : 0;
        return;
    }
    e = a - seen;
    for (size_t i = 0; i < n; i++) {
        int tier = free_class(&in[i], cpu) == SA_TSDB_FREE_IDLE ? 0 : 1;
        double take = tier == 0 ? (e < g[0] ? e : g[0]) : e - (e < g[0] ? e : g[0]);
        out[i * SA_UC_N + SA_UC_ALLOCATED] = in[i].sampled + (g[tier] > 0 ? take * allocatable(&in[i]) / g[tier] : 0);
    }
}

void sa_util_split(const sa_uin_t *in, size_t n, double exact, bool cpu, double *out, double *capped)
{
    double cap = 0;

    if (capped)
        *capped = 0;
    memset(out, 0, n * SA_UC_N * sizeof *out);
    for (size_t i = 0; i < n; i++)
        cap += in[i].total - in[i].other;
    if (exact > cap) {
        if (capped)
            *capped = exact - cap;
        exact = cap;
    }
    for (size_t i = 0; i < n; i++) {
        const sa_uin_t *x = &in[i];
        double *o = &out[i * SA_UC_N];
        o[SA_UC_ALLOCATED] = x->sampled;
        if (exact < 0)
            o[SA_UC_UNKNOWN] = x->unknown;
        if (x->other > 0)
            o[sa_uclass_of_free(sa_tsdb_cpu_free_class(x->fc, true))] += x->other;
    }
    if (exact >= 0)
        spread(in, n, exact, cpu, out);
    for (size_t i = 0; i < n; i++) {
        double *o = &out[i * SA_UC_N];
        double f = in[i].total - in[i].other - o[SA_UC_ALLOCATED] - o[SA_UC_UNKNOWN];
        if (f > 0)
            o[sa_uclass_of_free(free_class(&in[i], cpu))] += f;
    }
}

double sa_util_planned(double raw, double idle)
{
    if (raw <= 0 || idle <= 0)
        return 0;
    return raw < idle ? raw : idle;
}

double sa_util_pending_secs(int64_t eligible, int64_t start, int64_t end, int64_t hfrom, int64_t hto, int64_t cpus,
                            int64_t tasks)
{
    int64_t b, e;

    if (eligible == SA_UNSET || eligible <= 0 || cpus <= 0)
        return 0;
    b = eligible > hfrom ? eligible : hfrom;
    e = start != SA_UNSET ? start : end != SA_UNSET ? end : hto;
    if (e > hto)
        e = hto;
    if (e <= b)
        return 0;
    return (double)(e - b) * (double)cpus * (double)(tasks > 0 ? tasks : 1);
}
