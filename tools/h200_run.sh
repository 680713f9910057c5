#!/usr/bin/env bash
# The GPU-machine session in one call: characterize into $1 (default results/h200), cross-check
# the latencies with the independent reference chase, and run every GPU-labelled test.
# Usage: tools/h200_run.sh <bin dir with gpuprobe, reference_chase, gpuprobe_unit_tests> [out]
set -uo pipefail
bin="$1"; out="${2:-/tmp/results/h200}"
mkdir -p "$(dirname "$out")"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
start=$(date +%s.%N)
"$bin/gpuprobe" characterize --out "$out"
echo "characterize exit $? wall $(python3 -c "print(round($(date +%s.%N)-$start,2))") s"
{
  echo "# reference_chase (tools/reference_chase.cu) vs latency.chase at the same working sets"
  bash tools/crosscheck.sh "$out/result.json" "$bin"
} > "$out/crosscheck.txt" 2>&1
{
  for t in tests/device/*.sh; do
    echo "== $t"; bash "$t" "$bin/gpuprobe"; echo "exit $?"
  done
  echo "== unit tests on the GPU machine"; "$bin/gpuprobe_unit_tests" --gtest_brief=1 2>&1 | tail -5
} > "$out/device_tests.txt" 2>&1
cat "$out/crosscheck.txt"; grep -E "^==|^exit|FAIL|PASSED|FAILED" "$out/device_tests.txt"
