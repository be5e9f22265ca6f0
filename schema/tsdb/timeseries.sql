-- timeseries.sql - the SQLite time series of node, CPU and GPU states (schema version 4).
--
-- This file is the source of truth: the build embeds it into sa_tsdb.c (see the end of
-- the top-level CMakeLists.txt), which runs it on an empty database and then sets
-- PRAGMA application_id = 0x53415453 ('SATS') and PRAGMA user_version = 4.
-- A schema change edits this file, adds a migration step in sa_tsdb_migrate.c (version
-- N -> N+1, giving an older database the same tables and columns) and bumps
-- SA_TSDB_SCHEMA_VERSION; a database newer than the program is refused, untouched.
-- Version 2 added attr.gpu_config and the table node_config_gpu.
-- Version 3 added the tables rpc_name and sched_rpc (sdiag's RPC counts by message type and by user).
-- Version 4 added attr.cpu_config (CPU counts split from a grouped sinfo --json record's sums).
--
-- What Slurm said is stored exactly, never collapsed: a node state is its base plus
-- every flag ("IDLE+DRAIN" stays "IDLE+DRAIN", not "drained"). Times are seconds since
-- the epoch, UTC. NULL means "Slurm did not say" (SA_UNSET in the C records).
--
-- Layout in one paragraph: each node's observations are stored as INTERVALS, one row
-- per interval start (node_interval); what the node looked like during an interval is
-- an attribute set (attr, attr_gpu) shared by every interval, of any node, that looked
-- the same. Per-snapshot totals are stored the same way: one row per key (state,
-- partition[, GPU type]) when the key's figures change (total, gpu_total). The views
-- at the end spell the intervals out with their ends, and the totals with names.
--
-- Interval semantics. The snapshots of a cluster are s0 < s1 < ... (table snapshot).
-- Two consecutive snapshots further apart than the writer's max gap (900 s by
-- default) leave a gap row [s_i, s_i+1): that time is unknown. A node observed
-- with the same attributes at consecutive snapshots with no gap between them is in one
-- interval. An interval
--   starts at the first snapshot of the run, and
--   ends at the next snapshot after the run when that snapshot shows the node changed
--   or absent; at the last snapshot of the run when a gap follows it; and it is OPEN
--   (extended to the cluster's latest snapshot) when the run reaches the latest one.
-- So the state seen at a snapshot is taken to hold until the next snapshot, never
-- across a gap. Sums over intervals (state_hours) therefore cover exactly the time
-- between snapshots that is not a gap.

-- A Slurm cluster (the --cluster name given to slurm-ingest).
CREATE TABLE cluster (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- Every snapshot taken (one `sinfo`/`scontrol show nodes` run), by observation time.
CREATE TABLE snapshot (
    cluster_id INTEGER NOT NULL REFERENCES cluster (id),
    at         INTEGER NOT NULL,   -- observation time (slurm-ingest --at, or now)
    nodes      INTEGER NOT NULL,   -- nodes in the snapshot
    PRIMARY KEY (cluster_id, at)
) WITHOUT ROWID;

-- Unknown time: [start, end) between two consecutive snapshots further apart than the
-- writer's max gap. No interval or total spans a gap.
CREATE TABLE gap (
    cluster_id INTEGER NOT NULL REFERENCES cluster (id),
    start      INTEGER NOT NULL,   -- the snapshot before the gap
    end        INTEGER NOT NULL,   -- the snapshot after it
    PRIMARY KEY (cluster_id, start)
) WITHOUT ROWID;

-- A node name, per cluster.
CREATE TABLE node (
    id          INTEGER PRIMARY KEY,
    cluster_id  INTEGER NOT NULL REFERENCES cluster (id),
    name        TEXT NOT NULL,
    -- attributes at the cluster's latest snapshot (NULL: absent from it). Derivable
    -- from node_interval; kept so that the writer finds the open intervals cheaply.
    cur_attr_id INTEGER REFERENCES attr (id),
    UNIQUE (cluster_id, name)
);

-- An exact node state: base plus flags, as Slurm printed them (unknown words kept).
CREATE TABLE state (
    id    INTEGER PRIMARY KEY,
    text  TEXT NOT NULL UNIQUE,    -- "IDLE+DRAIN+NOT_RESPONDING": base, then sorted flags
    base  TEXT,                    -- "IDLE"; NULL when Slurm gave no state
    -- the flags sorted and joined by '+', '' when none. Filter on one flag with
    -- '+' || flags || '+' LIKE '%+DRAIN+%'
    flags TEXT NOT NULL
);

-- A node's reason text (why it is drained / down), as Slurm printed it.
CREATE TABLE reason (
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE
);

-- A partition name ('' for nodes in no partition).
CREATE TABLE partition (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- A set of partitions a node belongs to; names sorted and joined by ','.
CREATE TABLE partset (
    id    INTEGER PRIMARY KEY,
    names TEXT NOT NULL UNIQUE
);

CREATE TABLE partset_member (
    partset_id   INTEGER NOT NULL REFERENCES partset (id),
    partition_id INTEGER NOT NULL REFERENCES partition (id),
    PRIMARY KEY (partset_id, partition_id)
) WITHOUT ROWID;

-- A GPU type: "a100", "h100", MIG profiles such as "1g.10gb", '' for untyped GPUs.
CREATE TABLE gpu_type (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- An attribute set: everything observed about a node that, when it changes, starts a
-- new interval. Shared by all intervals (of any node) that looked exactly alike.
-- gpu_config (version 2), where the GPU rows come from: NULL: as Slurm printed them for
-- this node; 1: carried from the node's last per-node observation (a grouped sinfo --json
-- does not say a node's GPUs): totals exact, GPUs in use unknown unless the node is IDLE
-- or DOWN (then 0); 2: unknown, the node may have GPUs nobody said (no GPU rows).
-- cpu_config (version 4), where cpus_alloc/idle/other come from: NULL: as Slurm printed
-- them for this node (NULL counts: not said); 1: split, the node's even share of its
-- grouped sinfo --json record's sums (exact summed over the record's nodes, which share
-- its state; not per node). No comma in the comments after gpu_config: SQLite's DROP
-- COLUMN (the migration tests make older databases with it) looks for the comma before
-- the last column in the text.
CREATE TABLE attr (
    id           INTEGER PRIMARY KEY,
    hash         INTEGER NOT NULL,  -- 32-bit hash of the other columns and the GPU rows (lookup only)
    state_id     INTEGER NOT NULL REFERENCES state (id),
    reason_id    INTEGER REFERENCES reason (id),   -- NULL: no reason
    partset_id   INTEGER NOT NULL REFERENCES partset (id),
    cpus_total   INTEGER,           -- configured CPUs
    cpus_alloc   INTEGER,           -- allocated to jobs
    cpus_idle    INTEGER,           -- idle
    cpus_other   INTEGER,           -- neither (down, drained...): total - alloc - idle
    mem_total_mb INTEGER,           -- real memory (MiB)
    mem_alloc_mb INTEGER,           -- allocated to jobs (MiB)
    gpu_config   INTEGER,           -- where the GPU rows come from (version 2: above)
    cpu_config   INTEGER            -- where the CPU counts come from (version 4: above)
);
CREATE INDEX attr_by_hash ON attr (hash);

-- GPUs of an attribute set, one row per GPU type ("idle GPUs of type X on drained
-- nodes" is node_interval -> attr -> attr_gpu, state.flags).
CREATE TABLE attr_gpu (
    attr_id     INTEGER NOT NULL REFERENCES attr (id),
    gpu_type_id INTEGER NOT NULL REFERENCES gpu_type (id),
    total       INTEGER NOT NULL,   -- configured (gres)
    used        INTEGER NOT NULL,   -- in use (gres_used); idle = total - used
    PRIMARY KEY (attr_id, gpu_type_id)
) WITHOUT ROWID;

-- A node's configured GPUs as observed on their own, without its state (slurm-ingest
-- --node-config: `scontrol show nodes --json`): one row per GPU type; a row of type ''
-- with total 0 says the node had no GPUs. With the nodes' per-node observations in the
-- intervals, the source of carried configurations (attr.gpu_config = 1).
CREATE TABLE node_config_gpu (
    node_id     INTEGER NOT NULL REFERENCES node (id),
    at          INTEGER NOT NULL,   -- observation time
    gpu_type_id INTEGER NOT NULL REFERENCES gpu_type (id),
    total       INTEGER NOT NULL,   -- configured (gres)
    PRIMARY KEY (node_id, at, gpu_type_id)
) WITHOUT ROWID;

-- The intervals: one row where a node's interval starts, and one (attr_id NULL) where
-- a node disappears from the snapshots without a gap. A row exists at snapshot s for
-- node n exactly when n's attributes at s differ from those at the previous snapshot
-- (absent counting as a value), or a gap precedes s and n is present at s.
-- The interval a row starts ends at the first of: the node's next row, the start of the
-- first gap at or after its start, the cluster's latest snapshot (then it is open).
-- See the view node_interval_span for the intervals spelled out.
CREATE TABLE node_interval (
    node_id INTEGER NOT NULL REFERENCES node (id),
    start   INTEGER NOT NULL,       -- a snapshot time
    attr_id INTEGER REFERENCES attr (id),   -- NULL: absent from this snapshot on
    PRIMARY KEY (node_id, start)
) WITHOUT ROWID;

-- What a total is of: an exact state, a partition and, for GPU totals, a GPU type
-- (gpu_type_id 0 for the CPU/node totals). A dictionary, so that the total rows below
-- (a few per snapshot, for years) carry one small key instead of three.
CREATE TABLE total_key (
    id           INTEGER PRIMARY KEY,
    state_id     INTEGER NOT NULL REFERENCES state (id),
    partition_id INTEGER NOT NULL REFERENCES partition (id),
    gpu_type_id  INTEGER NOT NULL,  -- gpu_type (id), or 0 for the keys of `total`
    UNIQUE (state_id, partition_id, gpu_type_id)
);

-- Per-snapshot totals by exact state and partition (a node in two partitions counts
-- in both). Stored like the intervals: a row at snapshot `at` for a key when the key's
-- figures differ from the previous snapshot's (or a gap precedes `at`); the figures
-- hold until the key's next row. A row with nodes = 0 says the key is gone.
-- CPU sums count only nodes for which Slurm gave the figure. See total_named.
CREATE TABLE total (
    cluster_id   INTEGER NOT NULL REFERENCES cluster (id),
    at           INTEGER NOT NULL,
    key_id       INTEGER NOT NULL REFERENCES total_key (id),  -- state and partition
    nodes        INTEGER NOT NULL,
    cpus_total   INTEGER NOT NULL,
    cpus_alloc   INTEGER NOT NULL,
    cpus_idle    INTEGER NOT NULL,
    cpus_other   INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, at, key_id)
) WITHOUT ROWID;

-- Per-snapshot GPU totals by exact state, partition and GPU type; stored as `total`.
-- See gpu_total_named.
CREATE TABLE gpu_total (
    cluster_id   INTEGER NOT NULL REFERENCES cluster (id),
    at           INTEGER NOT NULL,
    key_id       INTEGER NOT NULL REFERENCES total_key (id),  -- state, partition, GPU type
    nodes        INTEGER NOT NULL,  -- nodes having GPUs of this type
    total        INTEGER NOT NULL,
    used         INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, at, key_id)
) WITHOUT ROWID;

-- Scheduler statistics from `sdiag --json` ("statistics"), one row per observation.
-- Cycle times in microseconds; counters "since last reset" reset at midnight
-- (slurmctld local time) and on `sdiag --reset`. NULL when sdiag did not say.
CREATE TABLE sched (
    cluster_id                INTEGER NOT NULL REFERENCES cluster (id),
    at                        INTEGER NOT NULL,  -- observation time (--at)
    req_time                  INTEGER,  -- when slurmctld produced the figures
    req_time_start            INTEGER,  -- counters accumulate since
    server_thread_count       INTEGER,  -- active slurmctld threads
    agent_queue_size          INTEGER,  -- outgoing RPCs queued for retry
    agent_count               INTEGER,  -- agent threads
    agent_thread_count        INTEGER,  -- threads created by agents
    dbd_agent_queue_size      INTEGER,  -- messages queued for slurmdbd
    jobs_submitted            INTEGER,  -- since last reset
    jobs_started              INTEGER,
    jobs_completed            INTEGER,
    jobs_canceled             INTEGER,
    jobs_failed               INTEGER,
    jobs_pending              INTEGER,  -- at job_states_ts
    jobs_running              INTEGER,  -- at job_states_ts
    job_states_ts             INTEGER,
    schedule_cycle_last       INTEGER,  -- main scheduler: last cycle (us)
    schedule_cycle_max        INTEGER,  -- longest cycle (us)
    schedule_cycle_mean       INTEGER,  -- mean cycle (us)
    schedule_cycle_mean_depth INTEGER,  -- mean jobs looked at per cycle
    schedule_cycle_per_minute INTEGER,
    schedule_cycle_total      INTEGER,  -- cycles since last reset
    schedule_queue_length     INTEGER,  -- jobs pending in queue (last cycle)
    bf_active                 INTEGER,  -- 1 when backfill was running
    bf_backfilled_jobs        INTEGER,  -- since slurmctld start
    bf_last_backfilled_jobs   INTEGER,  -- since last reset
    bf_cycle_counter          INTEGER,  -- backfill cycles since last reset
    bf_cycle_last             INTEGER,  -- backfill: last cycle (us)
    bf_cycle_max              INTEGER,
    bf_cycle_mean             INTEGER,
    bf_depth_mean             INTEGER,  -- mean jobs looked at per backfill cycle
    bf_depth_mean_try         INTEGER,
    bf_last_depth             INTEGER,  -- jobs looked at in the last backfill cycle
    bf_last_depth_try         INTEGER,
    bf_queue_len              INTEGER,  -- jobs pending for backfill (last cycle)
    bf_queue_len_mean         INTEGER,
    bf_when_last_cycle        INTEGER,  -- when the last backfill cycle ran
    PRIMARY KEY (cluster_id, at)
) WITHOUT ROWID;

-- A name of sdiag's RPC statistics: a message type ("REQUEST_JOB_INFO") or a user's name.
CREATE TABLE rpc_name (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- sdiag's RPC counts ("rpcs_by_message_type", "rpcs_by_user"), one row per entry, of the
-- latest stored `sched` row of each UTC hour (a later observation of the hour replaces them,
-- in any order). Counts and times accumulate from slurmctld's start or the last
-- `sdiag --reset` (not at midnight, unlike sched's counters). About 22 bytes a row (measured):
-- a controller answering 60 message types for 40 users adds about 53 kB a day, 19 MB a year
-- (one set a poll would be 620 kB a day).
CREATE TABLE sched_rpc (
    cluster_id INTEGER NOT NULL REFERENCES cluster (id),
    at         INTEGER NOT NULL,   -- the sched row's observation time
    kind       INTEGER NOT NULL,   -- 0: by message type, 1: by user
    name_id    INTEGER NOT NULL REFERENCES rpc_name (id),
    count      INTEGER NOT NULL,   -- RPCs
    total_time INTEGER,            -- their total time (us)
    PRIMARY KEY (cluster_id, at, kind, name_id)
) WITHOUT ROWID;

-- The intervals spelled out: one row per interval with its end and its attributes.
-- `open` = 1 when the interval is still open (extends to the latest snapshot).
CREATE VIEW node_interval_span AS
SELECT c.name AS cluster, n.name AS node, w.start AS start,
       min(coalesce(w.next_start, 9223372036854775807),
           coalesce((SELECT min(g.start) FROM gap g
                     WHERE g.cluster_id = n.cluster_id AND g.start >= w.start), 9223372036854775807),
           (SELECT max(s.at) FROM snapshot s WHERE s.cluster_id = n.cluster_id)) AS end,
       (w.next_start IS NULL
        AND NOT EXISTS (SELECT 1 FROM gap g WHERE g.cluster_id = n.cluster_id AND g.start >= w.start)) AS open,
       st.text AS state, st.base AS base, st.flags AS flags, r.text AS reason, ps.names AS partitions,
       a.cpus_total, a.cpus_alloc, a.cpus_idle, a.cpus_other, a.mem_total_mb, a.mem_alloc_mb,
       a.id AS attr_id
FROM (SELECT i.node_id, i.start, i.attr_id,
             lead(i.start) OVER (PARTITION BY i.node_id ORDER BY i.start) AS next_start
      FROM node_interval i) w
JOIN node n ON n.id = w.node_id
JOIN cluster c ON c.id = n.cluster_id
JOIN attr a ON a.id = w.attr_id
JOIN state st ON st.id = a.state_id
JOIN partset ps ON ps.id = a.partset_id
LEFT JOIN reason r ON r.id = a.reason_id;

-- GPUs per interval and type: e.g. idle GPU-seconds of type 'a100' on drained nodes:
--   SELECT sum((end - start) * (total - used)) FROM node_interval_gpu
--   WHERE gpu_type = 'a100' AND '+' || flags || '+' LIKE '%+DRAIN+%';
CREATE VIEW node_interval_gpu AS
SELECT s.cluster, s.node, s.start, s.end, s.open, s.state, s.base, s.flags,
       t.name AS gpu_type, g.total, g.used, g.total - g.used AS idle
FROM node_interval_span s
JOIN attr_gpu g ON g.attr_id = s.attr_id
JOIN gpu_type t ON t.id = g.gpu_type_id;

-- Totals with names. A row holds from `at` until the key's next row (see `total`).
CREATE VIEW total_named AS
SELECT c.name AS cluster, t.at, st.text AS state, p.name AS partition, t.nodes,
       t.cpus_total, t.cpus_alloc, t.cpus_idle, t.cpus_other
FROM total t
JOIN cluster c ON c.id = t.cluster_id
JOIN total_key k ON k.id = t.key_id
JOIN state st ON st.id = k.state_id
JOIN partition p ON p.id = k.partition_id;

CREATE VIEW gpu_total_named AS
SELECT c.name AS cluster, t.at, st.text AS state, p.name AS partition, gt.name AS gpu_type,
       t.nodes, t.total, t.used
FROM gpu_total t
JOIN cluster c ON c.id = t.cluster_id
JOIN total_key k ON k.id = t.key_id
JOIN state st ON st.id = k.state_id
JOIN partition p ON p.id = k.partition_id
JOIN gpu_type gt ON gt.id = k.gpu_type_id;
