#!/usr/bin/env bash
# The GPU-machine session, in two calls of under ten minutes each:
#   main: `gpuprobe characterize --counters` into <out>/h200 (the committed result) with its
#         summary card, the cross-check against the independent reference chase, the quick
#         health profile three times into <out>/quick (and quick/run2, run3), each checked
#         against the shipped baseline, the fleet-health timing (bench_fleet_health.sh), and
#         every GPU-labelled test script (SASS checks, smoke, links) into <out>/h200/device_tests.txt;
#   rest: `gpuprobe repeat 3` into <out>/repeat, link.host and a one-GPU fleet report into
#         <out>/links, and the unit tests on the GPU machine.
# Usage: tools/h200_run.sh <dir with gpuprobe, reference_chase, gpuprobe_unit_tests> <out> [main|rest|all]
set -uo pipefail
bin="$1"; out="$2"; phase="${3:-all}"
mkdir -p "$out"
secs() { python3 -c "print(round($(date +%s.%N)-$1,2))"; }
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
if [[ $phase == main || $phase == all ]]; then
  t0=$(date +%s.%N)
  "$bin/gpuprobe" characterize --counters --quiet --out "$out/h200" > "$out/characterize_stdout.txt" 2>&1
  echo "characterize --counters exit $? wall $(secs "$t0") s"
  cp "$out/characterize_stdout.txt" "$out/h200/characterize_stdout.txt"
  "$bin/gpuprobe" summary "$out/h200/result.json" > "$out/h200/summary.txt"
  {
    echo "# reference_chase (tools/reference_chase.cu) vs latency.chase at the same working sets"
    bash tools/crosscheck.sh "$out/h200/result.json" "$bin"
  } > "$out/h200/crosscheck.txt" 2>&1
  # The quick profile three times (its wall time is a target), each checked against the baseline.
  for q in quick quick/run2 quick/run3; do
    t1=$(date +%s.%N)
    mkdir -p "$(dirname "$out/$q")"
    "$bin/gpuprobe" characterize --profile quick --quiet --out "$out/$q" > "$out/quick_stdout.txt" 2>&1
    echo "characterize --profile quick ($q) exit $? wall $(secs "$t1") s"
    cp "$out/quick_stdout.txt" "$out/$q/characterize_stdout.txt"
    "$bin/gpuprobe" check "$out/$q/result.json" > "$out/$q/check.txt" 2>&1
    echo "check $q exit $?" | tee -a "$out/$q/check.txt"
  done
  bash tools/bench_fleet_health.sh "$bin/gpuprobe" > "$out/quick/bench_fleet_health.txt" 2>&1
  cat "$out/quick/bench_fleet_health.txt"
  "$bin/gpuprobe" check "$out/h200/result.json" > "$out/h200/check.txt" 2>&1
  echo "check full exit $?" | tee -a "$out/h200/check.txt"
  {
    for t in tests/device/*.sh; do
      echo "== $t"; bash "$t" "$bin/gpuprobe" "$bin"; echo "exit $?"
    done
  } > "$out/h200/device_tests.txt" 2>&1
  cat "$out/h200/crosscheck.txt"; grep -E "^==|^exit|FAIL" "$out/h200/device_tests.txt"
  cat "$out/h200/summary.txt"; head -5 "$out/quick/check.txt"
fi
if [[ $phase == rest || $phase == all ]]; then
  t1=$(date +%s.%N)
  "$bin/gpuprobe" repeat 3 --quiet --out "$out/repeat" > "$out/repeat_stdout.txt" 2>&1
  echo "repeat 3 exit $? wall $(secs "$t1") s"
  "$bin/gpuprobe" run link.host --quiet --out "$out/links/gpu0" > "$out/links_stdout.txt" 2>&1
  echo "link.host exit $?"
  "$bin/gpuprobe" fleet merge "$out/repeat/run1/result.json" "$out/repeat/run2/result.json" \
    "$out/repeat/run3/result.json" --out "$out/links/fleet_of_runs" >> "$out/links_stdout.txt" 2>&1
  echo "fleet merge exit $?"
  echo "== unit tests on the GPU machine" > "$out/unit_tests_gpu.txt"
  "$bin/gpuprobe_unit_tests" --gtest_brief=1 >> "$out/unit_tests_gpu.txt" 2>&1
  echo "unit tests exit $?" | tee -a "$out/unit_tests_gpu.txt"
  tail -5 "$out/unit_tests_gpu.txt"; grep -E "repeat|beyond" "$out/repeat_stdout.txt" | tail -5
fi
