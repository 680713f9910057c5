#!/usr/bin/env python3
"""Runs `gpuprobe analyze` under valgrind's memcheck over a fixed, deterministic part of the fuzz
corpus (tests/cli/fuzz_samples.py's mutations of a recorded result): samples emptied, cut short
and replaced by a string at paths of several experiment kinds, plus inputs known to be bad
(cache.l2.partition rows with an empty `cycles` array, a row cut short, no rows, no offsets;
typed sample lists replaced by a string). Typed samples are checked whole on load, so none of
them may reach an out-of-bounds read: any memcheck error fails (valgrind --error-exitcode=99).
A known-bad input must end with exit 2 and one line on stderr; a drawn mutation with exit 0, or
2 and one line (fuzz_samples.py's rule).

Usage: memcheck_samples.py <gpuprobe> <result.json> [--per-id N] [--seed S] [--jobs J]
Exit 0: clean; 1: a failure (one line each); 77: no valgrind (CTest SKIP_RETURN_CODE)."""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_samples  # noqa: E402  (mutations, apply)

# Experiment kinds whose samples are drawn from: a cache search, typed sweeps, a search, the
# shared-memory, timer, bandwidth-pattern, ordering, Hopper and link families.
IDS = ["cache.l2.partition", "cache.fetch_granularity", "latency.sweep", "compute.throughput",
       "smem.bank_conflicts", "timer.overhead", "bandwidth.stride", "ordering.atomic",
       "hopper.tma.latency", "link.host"]


def set_path(samples, path, value):
    node = samples
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def known_bad(result):
    """(what, experiment index, mutate(samples)) for inputs that must be refused (exit 2)."""
    idx = {e["id"]: i for i, e in enumerate(result["experiments"]) if e.get("status") == "passed"}
    bad = []
    if "cache.l2.partition" in idx:
        i = idx["cache.l2.partition"]
        bad += [
            ("cache.l2.partition rows[0].cycles empty", i,
             lambda s: set_path(s, ("rows", 0, "cycles"), [])),
            ("cache.l2.partition every row's cycles empty", i,
             lambda s: [row.__setitem__("cycles", []) for row in s["rows"]]),
            ("cache.l2.partition rows[5].cycles cut short", i,
             lambda s: set_path(s, ("rows", 5, "cycles"), s["rows"][5]["cycles"][:10])),
            ("cache.l2.partition rows[-1].cycles one short", i,
             lambda s: s["rows"][-1]["cycles"].pop()),
            ("cache.l2.partition rows empty", i, lambda s: set_path(s, ("rows",), [])),
            ("cache.l2.partition offsets empty", i, lambda s: set_path(s, ("offsets",), [])),
        ]
    for eid, key in (("compute.throughput", "points"), ("smem.bank_conflicts", "cases"),
                     ("bandwidth.stride", "rows"), ("hopper.tma.latency", "points")):
        if eid in idx:
            bad.append(("%s samples.%s a string" % (eid, key), idx[eid],
                        lambda s, key=key: set_path(s, (key,), "x")))
    return bad


def corpus(result, per_id, seed):
    """(what, result to analyze, must be refused) for every input, in a fixed order."""
    out = []
    for what, ei, mutate in known_bad(result):
        r = fuzz_samples.apply(result, ei, ("id",), "rename:" + result["experiments"][ei]["id"])
        mutate(r["experiments"][0]["samples"])
        out.append((what, r, True))
    for eid in IDS:
        rng = random.Random("%d:%s" % (seed, eid))
        todo = fuzz_samples.mutations(result, rng, [eid], ("empty", "truncate", "retype"))
        for ei, path, kind in rng.sample(todo, min(per_id, len(todo))):
            what = "%s samples.%s %s" % (eid, ".".join(map(str, path)), kind)
            out.append((what, fuzz_samples.apply(result, ei, path, kind), False))
    return out


def check(gpuprobe, valgrind, tmp, n, what, result, must_refuse):
    f = os.path.join(tmp, "result%d.json" % n)
    log = os.path.join(tmp, "valgrind%d.log" % n)
    with open(f, "w") as out:
        json.dump(result, out)
    cmd = [valgrind, "-q", "--error-exitcode=99", "--leak-check=no", "--log-file=" + log,
           gpuprobe, "analyze", f]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "FAIL %s: no answer in 300 s under valgrind" % what
    lines = p.stderr.count("\n")
    if p.returncode == 99:
        with open(log) as l:
            return "FAIL %s: memcheck errors:\n%s" % (what, l.read()[:4000])
    if p.returncode < 0:
        return "FAIL %s: signal %d" % (what, -p.returncode)
    if must_refuse and p.returncode != 2:
        return "FAIL %s: exit %d, expected 2 (a refused input)" % (what, p.returncode)
    if p.returncode not in (0, 2):
        return "FAIL %s: exit %d: %s" % (what, p.returncode, p.stderr.strip()[:200])
    if p.returncode == 2 and lines != 1:
        return "FAIL %s: %d lines on stderr: %s" % (what, lines, p.stderr.strip()[:400])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuprobe")
    ap.add_argument("result")
    ap.add_argument("--per-id", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    valgrind = shutil.which("valgrind")
    if not valgrind:
        print("valgrind not found: skipped (install valgrind)")
        return 77
    with open(a.result) as f:
        result = json.load(f)
    todo = corpus(result, a.per_id, a.seed)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = [pool.submit(check, a.gpuprobe, valgrind, tmp, n, what, r, bad)
                       for n, (what, r, bad) in enumerate(todo)]
            for fut in futures:
                msg = fut.result()
                if msg:
                    failures.append(msg)
                    print(msg, flush=True)
    refused = sum(1 for _, _, bad in todo if bad)
    print("memcheck: %d inputs (%d known bad), %d failed" % (len(todo), refused, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
