/*
 * sa_cw.h - `slurm-report current --cloudwatch` and `--cloudwatch-emf` (internal to report/):
 * the figures of the Prometheus export (sa_prom.h, computed once by sa_current.c) named as
 * CloudWatch metrics, sent to PutMetricData or printed in the embedded metric format.
 *
 * The metrics (namespace "Slurm" unless --cloudwatch-namespace), each with the dimension
 * ClusterName, and Partition where the figure is a partition's; every one timestamped at the
 * observation it comes from (the node snapshot, the sdiag, the squeue listing):
 * - Nodes<Class>: nodes by the class of their state (sa_cw_node_class: Allocated, Completing,
 *   Down, Drain, Fail, Error, Idle, Maint, Mixed, Resv; 0 when none; a state of another class
 *   is kept under its own name, NodesFuture, NodesPlanned, ...), of the cluster and of each
 *   partition (slurm_archive_nodes, slurm_archive_partition_nodes);
 * - Jobs<State>: jobs by state, Pending, Running, Suspended, Completing, Configuring from the
 *   latest squeue listing (slurm_archive_jobs), Cancelled, Completed, Failed, Timeout,
 *   Preempted, NodeFail (every final state) ended since --since (slurm_archive_finished_jobs);
 *   0 when none; another state is kept under its own name (JobsOutOfMemory); per partition too;
 * - the scheduler (the latest sdiag): ServerThreadCount, AgentQueueSize, ScheduleCycleLast,
 *   ScheduleCycleMean (seconds), ScheduleCyclesPerMinute, BackfillCycleLast,
 *   BackfillCycleMean (seconds), BackfillDepthMean;
 * - GPUs<Status>: GPUs by status (Allocated, Idle, Stranded, Down, PlannedDown, Reserved,
 *   Unknown: slurm_archive_gpus summed over GPU types and node states); the same with the
 *   dimension GPUType.
 * Every value is the Prometheus export's, as its text writes it (sa_prom_value_text).
 */
#ifndef SA_CW_H
#define SA_CW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sa_error.h"
#include "sa_prom.h"

/* One metric datum. The strings are owned by the set. */
typedef struct {
    char *name;          /* MetricName */
    const char *unit;    /* "Count" or "Seconds" (static) */
    char *cluster;       /* the ClusterName dimension */
    char *partition;     /* the Partition dimension, or NULL */
    char *gpu_type;      /* the GPUType dimension, or NULL */
    char value[32];      /* the value's text (sa_prom_value_text) */
    int64_t at;          /* the observation's time (UTC seconds) */
} sa_cw_datum_t;

typedef struct {
    sa_cw_datum_t *v;
    size_t n, cap;
} sa_cw_set_t;

void sa_cw_set_init(sa_cw_set_t *s);
void sa_cw_set_clear(sa_cw_set_t *s); /* frees every datum */

/*
 * The class of the seed's metrics for an exact node state ("IDLE+DRAIN"): the word
 * sinfo prints for it (Slurm's node_state_string: a MAINTENANCE flag over IDLE, then
 * DRAIN, FAIL, the base; RESERVED over IDLE), folded to the seed's classes: "Drain" for
 * DRAINED and DRAINING, "Fail" for FAIL and FAILING, "Resv" for RESERVED, "Maint",
 * "Completing", "Down", "Allocated", "Idle", "Mixed", "Error"; any other word capitalised
 * ("Future", "Unknown", "Planned", "Reboot", "PoweredDown"). Writes into buf (64 bytes).
 */
const char *sa_cw_node_class(const char *state, char buf[64]);

/*
 * The datums of every cluster of p (a cluster is one with a
 * slurm_archive_finished_since_timestamp_seconds sample), as sa_cw.h lists them. The
 * scheduler's time is its sdiag's (else the node snapshot's, else now). Appends to out.
 */
bool sa_cw_from_prom(const sa_prom_t *p, int64_t now, sa_cw_set_t *out, sa_error_t *error);

/*
 * PutMetricData's limits (the API reference, 2010-08-01): 1000 metric data per request and
 * a payload of 1 MB (HTTP POST). Tests may lower them.
 */
#define SA_CW_MAX_DATA 1000
#define SA_CW_MAX_BYTES 1048576

/*
 * The form-encoded bodies of the Query API's PutMetricData (Action=PutMetricData,
 * Version=2010-08-01, Namespace) for the datums in s, each within max_data datums and
 * max_bytes bytes: *bodies (n_bodies of them) are new strings, the caller frees each and
 * the array. False on out of memory, or when one datum alone exceeds max_bytes.
 */
bool sa_cw_bodies(const sa_cw_set_t *s, const char *ns, size_t max_data, size_t max_bytes, char ***bodies,
                  size_t *n_bodies, sa_error_t *error);

/*
 * Writes the datums as CloudWatch embedded metric format documents, one JSON object a line:
 * one per (cluster, dimensions, time), at most 100 metrics each (the format's limit).
 */
bool sa_cw_write_emf(const sa_cw_set_t *s, const char *ns, FILE *out, sa_error_t *error);

/* ---- sending (sa_cw_aws.c) ---------------------------------------------------------- */

typedef struct {
    char *key_id, *secret, *token; /* token NULL without a session token */
    const char *source;            /* "environment", "systemd credential", "instance role" */
} sa_aws_creds_t;

void sa_aws_creds_clear(sa_aws_creds_t *c); /* frees and zeroes the secret */

/*
 * The AWS credentials, the first source that has them:
 * 1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN);
 * 2. the systemd credential: $CREDENTIALS_DIRECTORY/aws-credentials (LoadCredential=), lines
 *    aws_access_key_id = ..., aws_secret_access_key = ..., aws_session_token = ... (the
 *    format of ~/.aws/credentials; section headers and comments are skipped);
 * 3. the instance's role through IMDSv2 (a token PUT, then the role's credentials), at
 *    $AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254), unless
 *    AWS_EC2_METADATA_DISABLED=true.
 * Fails (SA_ERR_USAGE) when none has them, (SA_ERR_INPUT) on a credential file that is not
 * readable as such. No message ever holds a key or a secret.
 */
bool sa_aws_creds_load(sa_aws_creds_t *c, sa_error_t *error);

typedef struct {
    const char *region;   /* --cloudwatch-region, $AWS_REGION, $AWS_DEFAULT_REGION */
    const char *endpoint; /* --cloudwatch-endpoint, else https://monitoring.REGION.amazonaws.com/ */
    const char *ns;       /* the namespace */
    long timeout_s;       /* a request, connection included (0: 30) */
    size_t max_data, max_bytes; /* a request's limits (0: SA_CW_MAX_DATA, SA_CW_MAX_BYTES) */
    size_t requests;      /* requests made */
} sa_cw_target_t;

/*
 * Sends the datums to PutMetricData, signed with Signature Version 4 (libcurl's
 * CURLOPT_AWS_SIGV4, service "monitoring") with creds, in requests within the limits. Fails
 * (SA_ERR_ENDPOINT) on the first request CloudWatch does not accept or that does not reach it:
 * one line naming the endpoint and the cause (the HTTP status, AWS's error code and message).
 */
bool sa_cw_put(sa_cw_target_t *t, const sa_aws_creds_t *creds, const sa_cw_set_t *s, sa_error_t *error);

#endif
