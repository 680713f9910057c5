#!/usr/bin/env bash
# The GPU-machine session in one call:
#   1. `gpuprobe characterize --counters` into <out>/h200 (the committed result),
#   2. the latencies cross-checked with the independent reference chase (<out>/h200/crosscheck.txt),
#   3. `gpuprobe repeat 3` (three characterize runs back to back) into <out>/repeat,
#   4. link.host and a one-GPU fleet report into <out>/links,
#   5. every GPU-labelled test (SASS checks, smoke) and the unit tests (<out>/h200/device_tests.txt).
# Usage: tools/h200_run.sh <dir with gpuprobe, reference_chase, gpuprobe_unit_tests> <out>
set -uo pipefail
bin="$1"; out="$2"
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
t0=$(date +%s.%N)
"$bin/gpuprobe" characterize --counters --quiet --out "$out/h200"
echo "characterize --counters exit $? wall $(python3 -c "print(round($(date +%s.%N)-$t0,2))") s"
{
  echo "# reference_chase (tools/reference_chase.cu) vs latency.chase at the same working sets"
  bash tools/crosscheck.sh "$out/h200/result.json" "$bin"
} > "$out/h200/crosscheck.txt" 2>&1
t1=$(date +%s.%N)
"$bin/gpuprobe" repeat 3 --quiet --out "$out/repeat" > "$out/repeat_stdout.txt" 2>&1
echo "repeat 3 exit $? wall $(python3 -c "print(round($(date +%s.%N)-$t1,2))") s"
"$bin/gpuprobe" run link.host --quiet --out "$out/links/gpu0" > "$out/links_stdout.txt" 2>&1
echo "link.host exit $?"
"$bin/gpuprobe" fleet merge "$out/repeat/run1/result.json" "$out/repeat/run2/result.json" \
  "$out/repeat/run3/result.json" --out "$out/links/fleet_of_runs" >> "$out/links_stdout.txt" 2>&1
echo "fleet merge exit $?"
{
  for t in tests/device/*.sh; do
    echo "== $t"; bash "$t" "$bin/gpuprobe" "$bin"; echo "exit $?"
  done
  echo "== unit tests on the GPU machine"; "$bin/gpuprobe_unit_tests" --gtest_brief=1 2>&1 | tail -5
} > "$out/h200/device_tests.txt" 2>&1
cat "$out/h200/crosscheck.txt"; grep -E "^==|^exit|FAIL|PASSED|FAILED" "$out/h200/device_tests.txt"
tail -40 "$out/repeat_stdout.txt"
