#!/usr/bin/env python3
"""test_gen_cluster: tools/gen-cluster and slurm-ingest --dump agree, for every data_parser version.

For each version v0.0.37 .. v0.0.44 the generator writes a small cluster (with --expect, a short
--evolve and a small --sacct-month); every file must parse with slurm-ingest --dump, give the
record counts of manifest.json, and give exactly the field values of expect/<file>.jsonl
(state, ids, times, users, GPUs by type, exit codes, steps, node states, CPUs...). So neither
the generator nor the parser can drift from the other silently. Also checked: the generator's
sacct field list is slurm-ingest's (ingest/sa_invocation.c), its output is deterministic, and the
committed fixtures/gen/ are what the generator writes today (fixtures/gen/README.md has the
commands).

  tests/test_gen_cluster.py SLURM_INGEST SOURCE_DIR [VERSION...]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

VERSIONS = ["v0.0.%d" % n for n in range(37, 45)]


class Failure(Exception):
    pass


def run(argv, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, **kw)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def dump(ingest, path, info=None):
    argv = [ingest, "--dump"]
    if info and info.get("header") is False:
        argv += ["--sacct-fields", info["fields"]]
    rc, out, err = run(argv + [path])
    if rc != 0:
        raise Failure("%s: slurm-ingest --dump exit %d: %s" % (path, rc, err.strip()))
    if "record set aside" in err or "repaired and kept" in err:  # --dump sets bad records aside and goes on
        raise Failure("%s: slurm-ingest --dump: %s" % (path, err.strip()))
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def nonzero(d):
    return {k: v for k, v in (d or {}).items() if v}


def actual(rec, key):
    """The member of a --dump record an expectation key names."""
    if key == "alloc_gpus":
        return nonzero((rec.get("alloc") or {}).get("gpus_by_type"))
    if key in ("gpus_total", "gpus_used"):
        return nonzero(rec.get(key))
    if key == "steps":
        return [s.get("id") for s in rec.get("steps", [])]
    if key == "partitions":
        return rec.get("partitions", [])
    return rec.get(key)


def compare(path, got, want):
    if len(got) != len(want):
        raise Failure("%s: %d records, expected %d" % (path, len(got), len(want)))
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        for k, v in w.items():
            if k in ("alloc_gpus", "gpus_total", "gpus_used"):
                v = nonzero(v)
            a = actual(g, k)
            if a != v:
                who = g.get("job_id_display") or g.get("name")
                bad.append("%s: record %d (%s): %s is %s, expected %s" % (
                    os.path.basename(path), i, who, k, json.dumps(a), json.dumps(v)))
    if bad:
        raise Failure("\n".join(bad[:25]) + ("\n... %d more" % (len(bad) - 25) if len(bad) > 25 else ""))


def count_of(rec_list, kind):
    return sum(1 for r in rec_list if r.get("record") == kind)


def check_version(ingest, gen, version, tmp):
    out = os.path.join(tmp, version)
    argv = [gen, "--version", version, "--nodes", "30", "--jobs", "120", "--seed", "7", "--out", out, "--expect",
            "--evolve", "3", "--churn", "25", "--sacct-month", "--records", "1500", "-q"]
    rc, _o, err = run(argv)
    if rc != 0:
        raise Failure("%s: gen-cluster exit %d: %s" % (version, rc, err.strip()))
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    checked = []
    for name, info in sorted(manifest["files"].items()):
        path = os.path.join(out, name)
        recs = dump(ingest, path, info)
        if "jobs" in info and count_of(recs, "job") != info["jobs"]:
            raise Failure("%s: %d job records, manifest says %d" % (path, count_of(recs, "job"), info["jobs"]))
        if "nodes" in info and count_of(recs, "node") != info["nodes"]:
            raise Failure("%s: %d node records, manifest says %d" % (path, count_of(recs, "node"), info["nodes"]))
        exp = os.path.join(out, "expect", name + ".jsonl")
        if os.path.exists(exp):
            with open(exp, encoding="utf-8") as f:
                want = [json.loads(line) for line in f if line.strip()]
            compare(path, recs, want)
        checked.append("%s (%d)" % (name, len(recs)))
    # a few fixed values, so that a generator and a parser that both went wrong the same way still fail
    sq = dump(ingest, os.path.join(out, "squeue.json"))
    ids = manifest["scenario_jobs"]
    by = {}
    for r in sq:
        by.setdefault(r["job_id"], r)
    must = [
        (ids["train"], "alloc", {"cpu": 64, "mem_mb": 524288, "node": 1, "billing": 96.0, "gpus": 4,
                                 "gpus_by_type": {"a100": 4}}),
        (ids["fail3"], "exit", {"code": 3, "signal": 0}),
        (ids["sigkill"], "exit", {"code": 0, "signal": 9}),
        (ids["sweep"], "job_id_display", "%d_[15-100%%10]" % ids["sweep"]),
        (ids["small-array"], "job_id_display", "%d_4" % ids["small-array"]),
        (ids["het-run"] + 1, "job_id_display", "%d+1" % ids["het-run"]),
        (ids["hostile-name"], "name", 'na\u00efve "quoted" \\ back/slash \u2603'),
        (ids["requeued"], "restart_cnt", 1),
        (ids["forever"], "time_limit_min", "UNLIMITED"),
        (ids["mig-small"], "nodes", "gm001"),
    ]
    for jid, key, val in must:
        got = by.get(jid, {}).get(key)
        if key == "alloc":
            got = {k: v for k, v in (got or {}).items() if k in val}
        if got != val:
            raise Failure("%s squeue.json job %d: %s is %s, expected %s" % (version, jid, key, json.dumps(got),
                                                                           json.dumps(val)))
    return checked


def check_deterministic(gen, tmp):
    """The same options twice give the same bytes (manifest.json aside: it names the directory)."""
    dirs = [os.path.join(tmp, "det-%d" % k) for k in (1, 2)]
    for d in dirs:
        rc, _o, err = run([gen, "--version", "v0.0.41", "--nodes", "30", "--jobs", "120", "--seed", "3", "--out", d,
                           "--expect", "--evolve", "3", "--churn", "25", "--sacct-month", "--records", "1500", "-q"])
        if rc != 0:
            raise Failure("gen-cluster exit %d: %s" % (rc, err.strip()))
    diff = [x for x in same_tree(dirs[0], dirs[1]) if x != "manifest.json"]
    if diff:
        raise Failure("two runs differ: %s" % ", ".join(diff[:10]))
    return "same bytes"


def check_fields(gen, src):
    with open(os.path.join(src, "ingest", "sa_invocation.c")) as f:
        c = f.read()
    m = re.search(r"#define SACCT_FIELDS\s*\\?\s*((?:\"[^\"]*\"\s*\\?\s*)+)", c)
    if not m:
        raise Failure("ingest/sa_invocation.c: no SACCT_FIELDS")
    ingest_fields = "".join(re.findall(r"\"([^\"]*)\"", m.group(1)))
    with open(gen) as f:
        g = f.read()
    m = re.search(r"SACCT_FIELDS = \(((?:\s*\"[^\"]*\")+)\)", g)
    gen_fields = "".join(re.findall(r"\"([^\"]*)\"", m.group(1)))
    if gen_fields != ingest_fields:
        raise Failure("tools/gen-cluster SACCT_FIELDS differs from ingest/sa_invocation.c:\n  %s\n  %s" %
                      (gen_fields, ingest_fields))


def same_tree(a, b):
    """Lists the files that differ between two directories (by content)."""
    diff = []
    for root, _dirs, files in os.walk(a):
        for fn in files:
            pa = os.path.join(root, fn)
            pb = os.path.join(b, os.path.relpath(pa, a))
            if not os.path.exists(pb):
                diff.append(os.path.relpath(pa, a) + " (missing)")
                continue
            with open(pa, "rb") as fa, open(pb, "rb") as fb:
                if fa.read() != fb.read():
                    diff.append(os.path.relpath(pa, a))
    for root, _dirs, files in os.walk(b):
        for fn in files:
            pb = os.path.join(root, fn)
            if not os.path.exists(os.path.join(a, os.path.relpath(pb, b))):
                diff.append(os.path.relpath(pb, b) + " (extra)")
    return diff


def check_fixtures(gen, src, tmp):
    """fixtures/gen/<version>/ must be what `tools/gen-cluster` writes with the recorded command."""
    base = os.path.join(src, "fixtures", "gen")
    if not os.path.isdir(base):
        raise Failure("fixtures/gen/ is missing")
    n = 0
    for v in sorted(os.listdir(base)):
        d = os.path.join(base, v)
        mf = os.path.join(d, "manifest.json")
        if not os.path.isfile(mf):
            continue
        with open(mf) as f:
            cmd = json.load(f)["command"].split()
        i = cmd.index("--out")
        cmd[i + 1] = os.path.join(tmp, "fixture-" + v)
        rc, _o, err = run([gen] + cmd[1:], cwd=src)
        if rc != 0:
            raise Failure("regenerating fixtures/gen/%s: exit %d: %s" % (v, rc, err.strip()))
        # the recorded command names the output directory as given; compare everything else
        diff = [x for x in same_tree(d, cmd[i + 1]) if x != "manifest.json"]
        if diff:
            raise Failure("fixtures/gen/%s is not what tools/gen-cluster writes now (%s); regenerate it with "
                          "the command in fixtures/gen/README.md" % (v, ", ".join(diff[:5])))
        n += 1
    if n < len(VERSIONS):
        raise Failure("fixtures/gen/ holds %d versions, expected %d" % (n, len(VERSIONS)))
    return n


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: test_gen_cluster.py SLURM_INGEST SOURCE_DIR [VERSION...]\n")
        return 2
    ingest, src = argv[1], argv[2]
    versions = argv[3:] or VERSIONS
    gen = os.path.join(src, "tools", "gen-cluster")
    tmp = tempfile.mkdtemp(prefix="test_gen_cluster.")
    failed = 0
    try:
        steps = [("sacct field list is slurm-ingest's", lambda: check_fields(gen, src))]
        for v in versions:
            steps.append(("%s: every file parses to the expected records" % v,
                          lambda v=v: ", ".join(check_version(ingest, gen, v, tmp))))
        steps.append(("deterministic", lambda: check_deterministic(gen, tmp)))
        steps.append(("committed fixtures/gen/ are up to date", lambda: "%d versions" % check_fixtures(gen, src, tmp)))
        for name, fn in steps:
            try:
                res = fn()
                if isinstance(res, list) and res:
                    raise Failure("differs: %s" % ", ".join(res))
                print("[ OK ] %s%s" % (name, ": " + str(res) if res else ""))
            except Failure as e:
                print("[FAIL] %s\n%s" % (name, e))
                failed += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d of %d checks failed" % (failed, len(steps)) if failed else "all %d checks passed" % len(steps))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
