#!/usr/bin/env bash
# GPU-machine test (issue 9, "Run to run"): the findings that moved between runs come from
# independent replicates, and what each replicate design promises is in the result:
#   - timer.event.empty_kernel is the GPU's own interval (stream held busy while the host
#     enqueued it): present, below the idle-GPU (host-bound) figure, few samples late;
#   - hopper.tma latencies: 5 replicates per point, each with its cycle samples, offsets and SMs
#     (a point whose samples fall in two latency classes: one finding per class);
#   - latency.tlb: the miss penalty from 3 pairs of walks, or statistics.not_reported says why;
#   - link.host: 5 replicates per finding, each row with its host CPU.
set -euo pipefail
bin="${1:?usage: run_to_run_h200.sh <gpuprobe binary>}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" -q run timer.overhead hopper.tma.latency latency.tlb link.host --out "$out/r" >"$out/log"
python3 - "$out/r/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ex = {e["id"]: e for e in r["experiments"]}
def xf(f):
    # result.json writes a finding's extra fields beside its name and value
    return f.get("extra", f)
def findings(i):
    return {f["name"]: f for f in ex[i]["findings"]}
for i in ex:
    assert ex[i]["status"] == "passed", (i, ex[i].get("reason"))

t = ex["timer.overhead"]
f = findings("timer.overhead")
assert "timer.event.empty_kernel" in f, t.get("statistics")
k = f["timer.event.empty_kernel"]
assert xf(k)["replicates"]["replicates"] == 3, xf(k)
assert k["value"] < xf(k)["idle_gpu_median_ns"], k
assert xf(k)["samples_late"] <= t["parameters"]["event_samples"] // 4, xf(k)
print("timer.event.empty_kernel", k["value"], "ns, conf", round(k["confidence"], 2),
      "idle", xf(k)["idle_gpu_median_ns"], "late", xf(k)["samples_late"])

pts = ex["hopper.tma.latency"]["samples"]["points"]
assert sorted({p["replicate"] for p in pts}) == [0, 1, 2, 3, 4]
for p in pts:
    assert len(p["cycles_samples"]) == p["cycles"]["n"] == len(p["sample_offsets"]) == len(p["sample_smids"]), p
for name, x in findings("hopper.tma.latency").items():
    k = xf(x)["replicates"]["replicates"]
    # A class finding has the replicates that held samples of its class.
    assert k == 5 or ("latency_classes" in xf(x) and 1 <= k <= 5), (name, xf(x))
    print(name, x["value"], "conf", round(x["confidence"], 2), xf(x)["replicates"]["replicate_medians"],
          xf(x).get("latency_classes", ""))

tlb = ex["latency.tlb"]
levels = tlb["samples"]["levels"]
if levels:
    assert len(levels[0]["miss_penalty_replicates"]) == 3, levels[0]
    pen = findings("latency.tlb")["tlb.l1.miss_penalty"]
    assert xf(pen)["replicates"]["replicates"] == 3
    print("tlb.l1.miss_penalty", pen["value"], "conf", round(pen["confidence"], 2), levels[0]["miss_penalty_replicates"])
else:
    assert "not_reported" in tlb["statistics"], tlb["statistics"]

lh = ex["link.host"]
for p in lh["samples"]["points"]:
    assert "host_cpu" in p, p
for name, x in findings("link.host").items():
    if name.endswith(".bandwidth") or name.endswith(".latency"):
        assert xf(x)["replicates"]["replicates"] == 5, (name, xf(x))
print("ok")
PY
