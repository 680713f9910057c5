#!/usr/bin/env python3
"""Fuzzes the analysis of recorded samples: for each passed experiment of a result, every array in
its samples is emptied, and cut short, one at a time, and its id is renamed to another passed
experiment's (its samples then read as the other's); `gpuprobe analyze` runs on a result holding
that experiment alone. Every run must end with exit 0 or 2 (2 with one line on stderr),
never a signal, another code or a hang.

Arrays that repeat in a list (rows[0].cycles, rows[1].cycles, ...) count once by their shape
path; the first and one drawn instance are mutated.

Usage: fuzz_samples.py <gpuprobe> <result.json> [--sample N] [--seed S] [--budget S] [--ids G]
                       [--kinds KINDS]
  --sample N   run N mutations drawn at random (default: all)
  --ids G      mutate only experiments whose id matches one of the comma-separated globs
  --budget S   stop after S seconds (the mutations run so far count)
  --kinds K    the array mutations, comma-separated, of: empty, truncate, retype (the array
               replaced by a string); default empty,truncate
Exit 1 with one line per failure."""
import argparse
import copy
import fnmatch
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def arrays(node, path=()):
    """Yields (path, shape) for every array under node; shape has list indices as '*'."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from arrays(v, path + (k,))
    elif isinstance(node, list):
        yield path, tuple("*" if isinstance(p, int) else p for p in path)
        for i, v in enumerate(node):
            yield from arrays(v, path + (i,))


def mutations(result, rng, ids=None, kinds=("empty", "truncate")):
    """(experiment index, path, kind) for every shape path of every passed experiment (of those
    whose id matches one of the globs `ids`, when given)."""
    def chosen_id(i):
        return not ids or any(fnmatch.fnmatchcase(i, g) for g in ids)

    out = []
    for ei, e in enumerate(result["experiments"]):
        if e.get("status") != "passed" or not isinstance(e.get("samples"), dict):
            continue
        if not chosen_id(e["id"]):
            continue
        by_shape = {}
        for path, shape in arrays(e["samples"]):
            by_shape.setdefault(shape, []).append(path)
        for shape, paths in by_shape.items():
            chosen = {paths[0], rng.choice(paths)}
            for path in sorted(chosen, key=str):
                for kind in kinds:
                    out.append((ei, path, kind))
    passed = [e["id"] for e in result["experiments"] if e.get("status") == "passed"]
    for ei, e in enumerate(result["experiments"]):
        others = [i for i in passed if i != e["id"]]
        if e.get("status") == "passed" and chosen_id(e["id"]) and others:
            out.append((ei, ("id",), "rename:" + rng.choice(others)))
    return out


def apply(result, ei, path, kind):
    e = copy.deepcopy(result["experiments"][ei])
    r = {k: v for k, v in result.items() if k != "experiments"}
    r["experiments"] = [e]
    if kind.startswith("rename:"):
        e["id"] = kind.split(":", 1)[1]
        return r
    node = e["samples"]
    for p in path[:-1]:
        node = node[p]
    arr = node[path[-1]]
    if kind == "empty":
        node[path[-1]] = []
    elif kind == "retype":
        node[path[-1]] = "x"
    else:  # cut short: half of it (one element less when that is all)
        node[path[-1]] = arr[: max(0, min(len(arr) - 1, len(arr) // 2))]
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuprobe")
    ap.add_argument("result")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=0)
    ap.add_argument("--ids", default="")
    ap.add_argument("--kinds", default="empty,truncate")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    result = json.load(open(a.result))
    todo = mutations(result, rng, [g for g in a.ids.split(",") if g],
                     tuple(k for k in a.kinds.split(",") if k))
    if a.sample and a.sample < len(todo):
        todo = rng.sample(todo, a.sample)
    start, failures, ran = time.monotonic(), 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "result.json")
        for ei, path, kind in todo:
            if a.budget and time.monotonic() - start > a.budget:
                break
            with open(f, "w") as out:
                json.dump(apply(result, ei, path, kind), out)
            what = "%s samples.%s %s" % (result["experiments"][ei]["id"],
                                         ".".join(map(str, path)), kind)
            ran += 1
            try:
                p = subprocess.run([a.gpuprobe, "analyze", f], capture_output=True, text=True,
                                   timeout=60)
            except subprocess.TimeoutExpired:
                failures += 1
                print("FAIL %s: no answer in 60 s" % what)
                continue
            lines = p.stderr.count("\n")
            if p.returncode < 0:
                failures += 1
                print("FAIL %s: signal %d" % (what, -p.returncode))
            elif p.returncode not in (0, 2):
                failures += 1
                print("FAIL %s: exit %d: %s" % (what, p.returncode, p.stderr.strip()[:200]))
            elif p.returncode == 2 and lines != 1:
                failures += 1
                print("FAIL %s: %d lines on stderr" % (what, lines))
    print("%d of %d mutations run, %d failed, %.0f s" % (ran, len(todo), failures,
                                                      time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
