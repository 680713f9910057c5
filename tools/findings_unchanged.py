#!/usr/bin/env python3
"""Proves a change left the analysis alone: re-analyses every recorded result with two gpuprobe
binaries (`gpuprobe analyze --format json`) and compares what each experiment concluded, field by
field: status, reason, every finding (all its fields) and the statistics.

    tools/findings_unchanged.py --before /tmp/gpuprobe-old --after build/gpuprobe
    tools/findings_unchanged.py --after build/gpuprobe --snapshot before.json   # keep one side
    tools/findings_unchanged.py --before-snapshot before.json --after build/gpuprobe

Without file arguments it takes every result.json recorded in results/ (gzipped ones too) and
tests/data/. Exit 0: identical; 1: a difference (each printed as one line); 2: bad use.
"""
import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def recorded_results():
    found = []
    for top in ("results", os.path.join("tests", "data")):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if not (name.endswith(".json") or name.endswith(".json.gz")):
                    continue
                path = os.path.join(dirpath, name)
                if os.sep + "experiments" + os.sep in path:
                    continue
                found.append(path)
    return sorted(found)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def is_result(doc):
    return isinstance(doc, dict) and isinstance(doc.get("experiments"), list)


def analyzed(binary, path, scratch):
    """What `analyze --format json` concludes for one file, keyed by experiment id."""
    source = path
    if path.endswith(".gz"):
        source = os.path.join(scratch, "input.json")
        with open(source, "w") as f:
            json.dump(load(path), f)
    run = subprocess.run([binary, "-q", "analyze", source, "--format", "json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return {"<exit>": {"code": run.returncode, "stderr": run.stderr.strip()}}
    doc = json.loads(run.stdout)
    out = {}
    for i, e in enumerate(doc["experiments"]):
        key = "%s#%d" % (e.get("id"), i)
        out[key] = {k: e.get(k) for k in ("status", "reason", "findings", "statistics")}
    return out


def snapshot(binary, files):
    snap = {}
    with tempfile.TemporaryDirectory() as scratch:
        for path in files:
            snap[os.path.relpath(path, ROOT)] = analyzed(binary, path, scratch)
    return snap


def same_number(a, b, tol):
    if a == b:
        return True
    if tol == 0 or not all(isinstance(x, (int, float)) for x in (a, b)):
        return False
    if math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= tol * max(abs(a), abs(b))


def differences(before, after, where, tol, out):
    if isinstance(before, dict) and isinstance(after, dict):
        for k in sorted(set(before) | set(after)):
            if k not in before:
                out.append("%s.%s: added %s" % (where, k, json.dumps(after[k])[:120]))
            elif k not in after:
                out.append("%s.%s: removed (was %s)" % (where, k, json.dumps(before[k])[:120]))
            else:
                differences(before[k], after[k], "%s.%s" % (where, k), tol, out)
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            out.append("%s: %d entries before, %d after" % (where, len(before), len(after)))
        for i, (b, a) in enumerate(zip(before, after)):
            name = b.get("name") if isinstance(b, dict) else None
            differences(b, a, "%s[%s]" % (where, name if name else i), tol, out)
    elif not same_number(before, after, tol):
        out.append("%s: %s before, %s after" % (where, json.dumps(before)[:120],
                                                  json.dumps(after)[:120]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", help="the gpuprobe binary before the change")
    ap.add_argument("--before-snapshot", help="a snapshot written earlier with --snapshot")
    ap.add_argument("--after", required=True, help="the gpuprobe binary after the change")
    ap.add_argument("--snapshot", help="write the --after side's conclusions here and stop")
    ap.add_argument("--tol", type=float, default=0.0,
                    help="relative tolerance for numbers (default 0: identical)")
    ap.add_argument("files", nargs="*", help="result.json files (default: every recorded one)")
    args = ap.parse_args()
    for b in (args.before, args.after):
        if b and not os.access(b, os.X_OK):
            print("findings_unchanged: %s is not an executable gpuprobe" % b, file=sys.stderr)
            return 2
    files = [os.path.abspath(f) for f in args.files] or recorded_results()
    files = [f for f in files if is_result(load(f))]
    after = snapshot(args.after, files)
    if args.snapshot:
        with open(args.snapshot, "w") as f:
            json.dump(after, f, indent=1, sort_keys=True)
        print("findings_unchanged: %d results written to %s" % (len(after), args.snapshot))
        return 0
    if args.before_snapshot:
        before = load(args.before_snapshot)
    elif args.before:
        before = snapshot(args.before, files)
    else:
        print("findings_unchanged: give --before or --before-snapshot", file=sys.stderr)
        return 2
    diffs = []
    for path in sorted(set(before) | set(after)):
        differences(before.get(path), after.get(path), path, args.tol, diffs)
    for line in diffs:
        print(line)
    findings = sum(len(e.get("findings") or []) for r in after.values() for e in r.values())
    print("findings_unchanged: %d results, %d findings compared, %d differences"
          % (len(after), findings, len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
