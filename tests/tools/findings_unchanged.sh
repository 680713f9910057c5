#!/usr/bin/env bash
# tools/findings_unchanged.py finds a changed conclusion: a recorded result against itself is
# identical (exit 0); a snapshot with one finding's value, one confidence and one status changed
# gives exactly those three differences (exit 1). Usage: findings_unchanged.sh <gpuprobe> <repo>
set -euo pipefail
bin=$(realpath "$1"); repo=$(realpath "$2")
tool=$repo/tools/findings_unchanged.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
result=$repo/results/h200/result.json
python3 "$tool" --before "$bin" --after "$bin" "$result" > "$tmp/same.txt"
grep -q ' 0 differences' "$tmp/same.txt" || { cat "$tmp/same.txt"; exit 1; }
python3 "$tool" --after "$bin" --snapshot "$tmp/snap.json" "$result" > /dev/null
python3 - "$tmp/snap.json" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
res = next(iter(snap.values()))
exps = list(res.values())
with_findings = [e for e in exps if e["findings"]]
with_findings[0]["findings"][0]["value"] += 1.0
with_findings[1]["findings"][-1]["confidence"] = 0.123
exps[-1]["status"] = "error"
json.dump(snap, open(sys.argv[1], "w"))
PY
set +e
python3 "$tool" --before-snapshot "$tmp/snap.json" --after "$bin" "$result" > "$tmp/diff.txt"
rc=$?
set -e
[[ $rc == 1 ]] || { echo "expected exit 1, got $rc"; cat "$tmp/diff.txt"; exit 1; }
grep -q ' 3 differences' "$tmp/diff.txt" || { echo "expected 3 differences"; cat "$tmp/diff.txt"; exit 1; }
grep -q '\.value: ' "$tmp/diff.txt" && grep -q '\.confidence: 0.123 before' "$tmp/diff.txt" \
  && grep -q '\.status: "error" before' "$tmp/diff.txt" || { cat "$tmp/diff.txt"; exit 1; }
echo "findings_unchanged: detects value, confidence and status changes"
