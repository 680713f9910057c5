#!/usr/bin/env bash
# GPU-machine test: the latency experiments run and verify on the real GPU, and what they find
# is plausible for any NVIDIA GPU (L1 hit < 60 cycles, L2 hit above L1, DRAM above L2).
set -euo pipefail
bin="${1:?usage: smoke_h200.sh <gpuprobe binary>}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" run latency.sweep latency.shared --out "$out/r" >"$out/log"
python3 - "$out/r/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = {x["name"]: x["value"] for e in r["experiments"] for x in e["findings"]}
assert all(e["status"] == "passed" for e in r["experiments"]), r["experiments"]
assert f["l1.hit_latency"] < 60, f
assert f["l2.hit_latency"] > f["l1.hit_latency"] * 3, f
assert f["dram.latency"] > f["l2.hit_latency"], f
assert f["shared.latency"] < 60, f
print("ok", {k: round(v, 1) for k, v in f.items()})
PY
