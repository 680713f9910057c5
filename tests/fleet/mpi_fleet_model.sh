#!/usr/bin/env bash
# CI, no GPU: `mpirun -n 3 gpuprobe fleet` on modelled GPUs (needs the -DGPUPROBE_MPI=ON build).
#  1. rank 2 runs a model whose DRAM is 10 % slower (tests/data/fleet/h200_slow_dram.json):
#     it, and only it, is flagged;
#  2. three ranks of identical models: nothing flagged;
#  3. a rank whose device cannot be opened: recorded as error, the report written for the rest,
#     exit code 1;
#  4. --baseline: a baseline of the identical ranks' results (case 2); every rank 10 % slow in
#     DRAM latency (tests/data/fleet/h200_seed201_slow_dram.json): the fleet flags none, the
#     baseline flags all, exit code 3; the identical ranks against it: exit 0.
# Usage: mpi_fleet_model.sh <gpuprobe built with MPI> <tests/data/fleet>
set -euo pipefail
bin=$1
data=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun -n 3 --oversubscribe --allow-run-as-root)
fail() { echo "FAIL: $*" >&2; exit 1; }

"${mpi[@]}" "$bin" --device "model:$data/h200_seed201.json,model:$data/h200_seed202.json,model:$data/h200_slow_dram.json" \
  --out "$out/slow" fleet latency.chase > "$out/slow.log" 2>&1 || { cat "$out/slow.log"; fail "fleet with a slow rank"; }
table="$out/slow/fleet.txt"
[[ -f "$out/slow/fleet.json" && -f "$table" ]] || fail "no fleet report"
grep -q '^  rank2: ok.*OUTLIER' "$table" || { cat "$table"; fail "rank 2 (slow DRAM) not flagged"; }
[[ $(grep -c 'OUTLIER' "$table") == 1 ]] || { cat "$table"; fail "a rank other than 2 flagged"; }
for r in 0 1 2; do [[ -f "$out/slow/rank$r/result.json" ]] || fail "rank $r wrote no result"; done
grep -q '"fleet_overhead_percent"' "$out/slow/fleet.json" || fail "no overhead record"

"${mpi[@]}" "$bin" --device "model:$data/h200_seed201.json" --out "$out/same" fleet latency.chase \
  > "$out/same.log" 2>&1 || { cat "$out/same.log"; fail "fleet of identical models"; }
grep -q 'OUTLIER' "$out/same/fleet.txt" && { cat "$out/same/fleet.txt"; fail "identical models flagged"; }
grep -q '^0 outlier value' "$out/same/fleet.txt" || fail "identical models: no summary line"

set +e
"${mpi[@]}" "$bin" --device "model:$data/h200_seed201.json,model:$data/no_such_model.json,model:$data/h200_seed202.json" \
  --out "$out/broken" fleet latency.chase > "$out/broken.log" 2>&1
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$out/broken.log"; fail "a failed rank should exit 1, got $rc"; }
grep -q '^  rank1: error' "$out/broken/fleet.txt" || { cat "$out/broken/fleet.txt"; fail "failed rank not recorded"; }
grep -q '2 of 3 GPUs compared' "$out/broken/fleet.txt" || fail "the other ranks not compared"
"$bin" baseline build "$out"/same/rank{0,1,2}/result.json --out "$out/base.json" > /dev/null ||
  fail "baseline build of the identical ranks"
set +e
"${mpi[@]}" "$bin" --device "model:$data/h200_seed201_slow_dram.json" --out "$out/allslow" \
  fleet latency.chase --baseline "$out/base.json" > "$out/allslow.log" 2>&1
rc=$?
set -e
[[ $rc == 3 ]] || { cat "$out/allslow.log"; fail "every rank slow: expected exit 3, got $rc"; }
grep -q 'OUTLIER' "$out/allslow/fleet.txt" && { cat "$out/allslow/fleet.txt"; fail "the fleet flagged a rank"; }
grep -q '^3 GPU(s) out of family against the baseline' "$out/allslow/fleet.txt" ||
  { cat "$out/allslow/fleet.txt"; fail "the baseline did not flag every rank"; }
"${mpi[@]}" "$bin" --device "model:$data/h200_seed201.json" --out "$out/inbase" fleet latency.chase \
  --baseline "$out/base.json" > "$out/inbase.log" 2>&1 || { cat "$out/inbase.log"; fail "identical ranks against their baseline"; }
grep -q '^0 GPU(s) out of family against the baseline' "$out/inbase/fleet.txt" || fail "identical ranks flagged"
echo "mpi fleet on modelled GPUs: ok"
