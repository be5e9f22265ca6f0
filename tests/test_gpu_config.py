#!/usr/bin/env python3
"""test_gpu_config: GPU counts and types when Slurm does not say them per node (issue 15).

On a cluster from tools/gen-cluster whose node snapshots are grouped `sinfo --json` (no -N) and
whose A100 jobs carry only gres/gpu=N in their TRES (--untyped-tres a100):
- without a per-node source, slurm-ingest warns once per run with the number of nodes whose GPUs
  are unknown and the fix; utilization shows their time as "(unknown GPU configuration)" rows;
  health flags gpu-config-unknown;
- with one `scontrol show nodes --json` given to --node-config first, the time series holds
  exactly the GPU-hours per GPU type and per node state of the same cluster captured with
  sinfo -N --json, and `usage --by gpu-type` gives the same GPU-hours per type as the same jobs
  with typed TRES (the untyped runs take their nodes' type, stored in the run at ingest);
- the runs' gpu_type_source says where each type came from (checked when pymongo is there).

  tests/test_gpu_config.py SLURM_INGEST SLURM_REPORT SOURCE_DIR
Needs SLURM_TEST_MONGO_URI (tools/test starts a server); exits 77 without it.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

AT = "2026-10-15T00:00:00Z"
SNAPSHOTS = 7


class Failure(Exception):
    pass


def run(argv, env=None, want_rc=0):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                       env=dict(os.environ, **(env or {})))
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if want_rc is not None and p.returncode != want_rc:
        raise Failure("%s: exit %d (want %d): %s" % (" ".join(argv[:3]), p.returncode, want_rc, err.strip()[:2000]))
    return out, err


def generate(src, out, untyped):
    argv = [sys.executable, os.path.join(src, "tools", "gen-cluster"), "--version", "v0.0.40", "--nodes", "30",
            "--jobs", "120", "--seed", "11", "--at", AT, "--out", out, "--evolve", str(SNAPSHOTS), "--churn", "20",
            "--grouped-sinfo", "-q"]
    if untyped:
        argv += ["--untyped-tres", "a100"]
    run(argv)
    with open(os.path.join(out, "evolve", "index.json")) as f:
        return json.load(f)


class Site:
    """One archive: a MongoDB database, a time series, a spool and a lock directory."""

    def __init__(self, tmp, name, ingest, report, uri):
        self.dir = os.path.join(tmp, name)
        os.makedirs(os.path.join(self.dir, "spool"), mode=0o700)
        os.makedirs(os.path.join(self.dir, "lock"), mode=0o700)
        self.db = "gpucfg_%d_%s" % (os.getpid(), name)
        self.sqlite = os.path.join(self.dir, "ts.db")
        self.ingest_bin, self.report_bin = ingest, report
        self.env = {"SLURM_INGEST_MONGO_URI": uri, "SLURM_REPORT_MONGO_URI": uri}

    def ingest(self, *args):
        return run([self.ingest_bin, "--cluster", "synth", "--db", self.db, "--sqlite", self.sqlite, "--spool-dir",
                    os.path.join(self.dir, "spool"), "--lock-dir", os.path.join(self.dir, "lock")] + list(args),
                   self.env)

    def series(self, gen, index, sinfo_key):
        errs = []
        for s in index:
            args = ["--at", s["at"], "--sinfo", os.path.join(gen, "evolve", s[sinfo_key]),
                    "--squeue", os.path.join(gen, "evolve", s["squeue"])]
            if "sacct" in s:
                args += ["--sacct", os.path.join(gen, "evolve", s["sacct"])]
            errs.append(self.ingest(*args)[1])
        return errs

    def report(self, *args):
        out, _ = run([self.report_bin] + list(args) + ["--db", self.db, "--sqlite", self.sqlite, "--json"],
                     self.env, None)
        return json.loads(out)


def util_by(site, start, end):
    """utilization: GPU-hours per (GPU type, state) rows, per state of all nodes, the notes' figures."""
    d = site.report("utilization", "-S", start, "-E", end)
    per_type, per_state, unknown_rows = {}, {}, []
    for r in d["rows"]:
        if r["gpu_type"] == "*":
            per_state[r["state"]] = r["gpu_hours"]
        elif r["gpu_type"] == "(unknown GPU configuration)":
            unknown_rows.append(r)
        elif r["state"] != "(all)":
            per_type[(r["gpu_type"], r["state"])] = r["gpu_hours"]
    return per_type, per_state, unknown_rows, d["clusters"][0]


def usage_by_type(site, start, end):
    d = site.report("usage", "-M", "synth", "--by", "gpu-type", "-S", start, "-E", end, "--unit", "gpu-hours")
    return {r["gpu_type"]: r["gpu_hours"] for r in d["rows"]}


def same(what, a, b):
    keys = sorted(set(a) | set(b), key=str)
    bad = ["%s: %s vs %s" % (k, a.get(k), b.get(k)) for k in keys if abs((a.get(k) or 0) - (b.get(k) or 0)) > 1e-9]
    if bad:
        raise Failure("%s differ: %s" % (what, "; ".join(bad)))


def run_sources(uri, db):
    try:
        import pymongo
    except ImportError:
        print("note: pymongo not installed: the runs' gpu_type_source are not checked")
        return None
    c = pymongo.MongoClient(uri)
    try:
        out = {}
        for d in c[db].jobs.find({}, {"runs": 1}):
            for r in d.get("runs", []):
                if r.get("gpus", 0) > 0:
                    k = (r.get("gpu_type"), r.get("gpu_type_source"))
                    out[k] = out.get(k, 0) + 1
        return out
    finally:
        c.close()


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    ingest, report, src = argv[1:]
    uri = os.environ.get("SLURM_TEST_MONGO_URI")
    if not uri:
        print("SKIP test_gpu_config: SLURM_TEST_MONGO_URI is not set (tools/mongo-test-server start)")
        return 77
    tmp = tempfile.mkdtemp(prefix="sa-gpucfg-")
    sites = []
    try:
        untyped = os.path.join(tmp, "gen-untyped")
        typed = os.path.join(tmp, "gen-typed")
        index = generate(src, untyped, True)
        generate(src, typed, False)
        start, end = index[0]["at"], index[-1]["at"]

        def site(name):
            s = Site(tmp, name, ingest, report, uri)
            sites.append(s)
            return s

        # the reference: the same snapshots captured per node (sinfo -N --json)
        pernode = site("pernode")
        pernode.series(untyped, index, "sinfo")
        ref_type, ref_state, ref_unknown, _ = util_by(pernode, start, end)
        if ref_unknown or not ref_type:
            raise Failure("the per-node series has unknown GPU configurations or no GPU")

        # grouped, nothing else: said in the ingest log, the utilization rows, health
        grouped = site("grouped")
        errs = grouped.series(untyped, index, "sinfo_grouped")
        warned = [e for e in errs if "the GPUs of" in e and "node(s) are unknown" in e]
        if len(warned) != len(errs) or any(e.count("node(s) are unknown") != 1 for e in warned):
            raise Failure("every run should warn once about unknown GPUs, got: %r" % errs[:2])
        if "sinfo -N --json" not in warned[0] or "--node-config" not in warned[0]:
            raise Failure("the warning does not say the fix: %s" % warned[0])
        _, g_state, g_unknown, g_cl = util_by(grouped, start, end)
        if not g_unknown or g_cl["gpu_unknown_config_node_hours"] <= 0:
            raise Failure("utilization shows no '(unknown GPU configuration)' row on a grouped series")
        if sum(g_state.values()) >= sum(ref_state.values()) - 1e-9:
            raise Failure("the grouped series should be short of GPU-hours without a per-node source")
        h = grouped.report("health", "-M", "synth", "-S", start, "-E", end)
        flags = [r for r in h["rows"] if r["check"] == "gpu-config-unknown" and r["severity"] == "warning"]
        if not flags:
            raise Failure("health does not flag gpu-config-unknown: %r" % h["rows"])
        g_unknown_type = [r for r in h["rows"] if r["check"] == "gpu-type-unknown"]
        if not g_unknown_type:
            raise Failure("health does not count GPU-hours of unknown type: %r" % h["rows"])
        print("health: %s" % g_unknown_type[0]["detail"])
        print("grouped: %.2f of %.2f GPU-hours counted; %.2f node-hours of unknown GPU configuration"
              % (sum(g_state.values()), sum(ref_state.values()), g_cl["gpu_unknown_config_node_hours"]))

        # grouped with one scontrol capture first: exactly the per-node GPU-hours
        carried = site("carried")
        _, err = carried.ingest("--node-config", os.path.join(untyped, "scontrol-nodes.json"), "--at", AT)
        errs = carried.series(untyped, index, "sinfo_grouped")
        if any("node(s) are unknown" in e for e in errs):
            raise Failure("warned about unknown GPUs although --node-config gave them")
        c_type, c_state, c_unknown, c_cl = util_by(carried, start, end)
        if c_unknown:
            raise Failure("unknown GPU configuration rows left with --node-config")
        same("GPU-hours per (type, state), grouped + --node-config vs sinfo -N", c_type, ref_type)
        same("GPU-hours per state, grouped + --node-config vs sinfo -N", c_state, ref_state)
        if c_cl["gpu_carried_hours"] <= 0:
            raise Failure("no GPU-hours said carried")
        print("carried: %.2f GPU-hours, %.2f of them carried" % (sum(c_state.values()), c_cl["gpu_carried_hours"]))
        h = carried.report("health", "-M", "synth", "-S", start, "-E", end)
        if any(r["check"] == "gpu-config-unknown" and r["severity"] == "warning" for r in h["rows"]):
            raise Failure("health flags unknown GPU configurations although --node-config gave them")

        # the same jobs with typed TRES: the same GPU-hours per GPU type
        typed_site = site("typed")
        typed_site.ingest("--node-config", os.path.join(typed, "scontrol-nodes.json"), "--at", AT)
        typed_site.series(typed, index, "sinfo_grouped")
        u_typed, u_untyped = usage_by_type(typed_site, start, end), usage_by_type(carried, start, end)
        if u_untyped.get("a100", 0) <= 0:
            raise Failure("no A100 GPU-hours from untyped runs: %r" % u_untyped)
        same("usage GPU-hours per GPU type, untyped vs typed TRES", u_untyped, u_typed)
        print("usage by GPU type (untyped TRES = typed): %s" % json.dumps(u_untyped, sort_keys=True))

        # RGU weights by a guess are flagged; a cluster's table maps a type to its parent and weight
        mig = "nvidia_a100_80gb_pcie_1g.10gb"
        wfile = os.path.join(tmp, "guess.json")
        with open(wfile, "w") as f:
            json.dump({"include_defaults": True,
                       "weights": [{"name": "test: parent not said", "rgu": 1.74, "match": ["*1g.10gb"], "guess": True}]},
                      f)
        d = carried.report("usage", "-M", "synth", "-S", start, "-E", end, "--unit", "rgu-years", "--rgu-weights", wfile)
        if d.get("rgu_guessed_gpu_types") != [mig] or abs(d.get("rgu_guessed_gpu_hours", 0) - u_untyped[mig]) > 1e-6:
            raise Failure("usage does not flag the GPU-hours weighted by a guess: %r" % {
                k: d.get(k) for k in ("rgu_guessed_gpu_types", "rgu_guessed_gpu_hours", "header")})
        if not any("guessed" in line for line in d["header"]):
            raise Failure("no note about guessed RGU weights: %r" % d["header"])
        with open(wfile, "w") as f:
            json.dump({"include_defaults": True, "weights": [{"name": "test: parent not said", "rgu": 1.74,
                                                               "match": ["*1g.10gb"], "guess": True}],
                       "clusters": {"synth": [{"gpu_type": "*1g.10gb", "parent": "A100-80gb", "rgu": 0.69}]}}, f)
        d = carried.report("usage", "-M", "synth", "-S", start, "-E", end, "--unit", "rgu-years", "--rgu-weights", wfile)
        if "rgu_guessed_gpu_types" in d:
            raise Failure("a cluster's table still counted as a guess")

        src_counts = run_sources(uri, carried.db)
        if src_counts is not None:
            if not any(k[0] == "a100" and k[1] in ("node", "carried") for k in src_counts):
                raise Failure("no untyped run stored with its nodes' type: %r" % src_counts)
            if any(k[1] in ("node", "carried") and not k[0] for k in src_counts):
                raise Failure("a run resolved from its nodes without a type: %r" % src_counts)
            print("runs by (gpu_type, gpu_type_source): %r" % sorted(src_counts.items(), key=str))
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        try:
            import pymongo
            c = pymongo.MongoClient(uri)
            for s in sites:
                c.drop_database(s.db)
            c.close()
        except Exception:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
