#!/usr/bin/env bash
# Times the fleet-health commands against issue 26's targets: `baseline build` over 20 recorded
# H200 results (the last 20 versions of results/h200/result.json in the history) and `check` of
# the committed result against the shipped baseline. Each command runs 5 times; the median wall
# time is printed with the machine it ran on. No GPU needed.
# Usage: tools/bench_fleet_health.sh [gpuprobe binary]   (prints a small report on stdout)
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
bin=$(realpath "${1:-$root/build/gpuprobe}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
n=0
files=()
source_words="the last 20 versions of results/h200/result.json in the history"
if git rev-parse --git-dir > /dev/null 2>&1; then
  for c in $(git log --format=%H -- results/h200/result.json); do
    git cat-file blob "$c:results/h200/result.json" > "$work/r$n.json" 2>/dev/null || continue
    files+=("$work/r$n.json")
    n=$((n + 1))
    [[ $n == 20 ]] && break
  done
else  # a copy without its history: the results in the tree, taken in turn until there are 20
  mapfile -t tree < <(find results -name result.json -not -path '*/replay/*' | sort)
  source_words="the ${#tree[@]} result.json files of results/ (no git history here), in turn"
  while [[ ${#tree[@]} -gt 0 && $n -lt 20 ]]; do
    files+=("${tree[$((n % ${#tree[@]}))]}")
    n=$((n + 1))
  done
fi
[[ $n == 20 ]] || { echo "bench_fleet_health: only $n recorded results found" >&2; exit 2; }
median_of_5() {  # prints the median wall seconds of 5 runs of "$@" (stdout discarded)
  local t=()
  for _ in 1 2 3 4 5; do
    local s e
    s=$(date +%s.%N)
    "$@" > /dev/null 2>&1 || [[ $? == 3 ]] || { echo "bench_fleet_health: failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    t+=("$(python3 -c "print(round($e - $s, 3))")")
  done
  printf '%s\n' "${t[@]}" | sort -g | sed -n 3p
}
build_once() { rm -f "$work/b.json"; "$bin" --out "$work/b.json" baseline build "${files[@]}"; }
build_s=$(median_of_5 build_once)
check_s=$(median_of_5 "$bin" check results/h200/result.json --baseline h200)
cards=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('cards', '?'))" \
  "$work/b.json" 2>/dev/null || echo '?')
echo "gpuprobe $("$bin" --version | head -1)"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "baseline build over 20 result files ($source_words; $cards cards): median of 5 runs ${build_s} s (target <= 5 s)"
echo "check of results/h200/result.json against the shipped h200 baseline: median of 5 runs ${check_s} s (target <= 1 s)"
