#!/usr/bin/env bash
# GPU-machine test: link.host runs with every copy verified (no failing row), reports bandwidth
# for every (direction, memory, method) and its latency points; a one-GPU fleet merge of the run
# writes a report with no outlier; --gpus beyond the node is one line and exit 2; link.peer is
# waived on one GPU and runs (no failing pair) on two or more.
set -euo pipefail
bin="${1:?usage: links_h200.sh <gpuprobe binary>}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" run link.host --out "$out/host" >"$out/log"
"$bin" fleet merge "$out/host/result.json" --out "$out/fleet" >>"$out/log"
set +e
"$bin" characterize --gpus 99 2>"$out/gpus.err"
rc=$?
set -e
[[ $rc == 2 && $(wc -l <"$out/gpus.err") == 1 ]] || { cat "$out/gpus.err"; exit 1; }
gpus=$(nvidia-smi -L | wc -l)
if ((gpus >= 2)); then
  NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    "$bin" run link.peer --out "$out/peer" >>"$out/log"
fi
python3 - "$out" "$gpus" <<'PY'
import json, sys
out, gpus = sys.argv[1], int(sys.argv[2])
r = json.load(open(out + "/host/result.json"))
e = r["experiments"][0]
assert e["status"] == "passed", e.get("reason")
assert not e["statistics"]["points_failing_verification"], e["statistics"]["points_failing_verification"]
f = {x["name"]: x["value"] for x in e["findings"]}
for d in ("h2d", "d2h"):
    for k in ("pinned.copy_engine", "pinned.sm_kernel", "pinned.cuda_memcpy", "pageable.copy_engine", "pageable.cuda_memcpy"):
        assert f"link.host.{d}.{k}.bandwidth" in f, (d, k)
        assert f"link.host.{d}.{k}.latency" in f, (d, k)
assert f["link.host.pinned.sm_load_latency"] > 0
fl = json.load(open(out + "/fleet/fleet.json"))
assert fl["summary"]["outliers"] == 0 and fl["summary"]["compared"] == 1, fl["summary"]
if gpus >= 2:
    p = json.load(open(out + "/peer/result.json"))["experiments"][0]
    assert p["status"] == "passed", p.get("reason")
    assert not p["statistics"]["pairs_failing_verification"]
print("ok", {k: round(v, 2) for k, v in f.items() if k.endswith("bandwidth")})
PY
