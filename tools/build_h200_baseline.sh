#!/usr/bin/env bash
# Rebuilds baselines/h200.json from the H200 results this repository recorded, as they stand in
# the history up to a pinned commit (so the same command gives the same baseline later):
#   results/h200/result.json               every card's main run (one card per session)
#   results/h200/repeat/run{1,2,3}/...     that card's repeat runs (run-to-run spread)
#   results/h200/other_cards/*/result.json other cards of the pool
#   results/h200/ways_seeds/*.json         more runs of the main card (a few experiments)
#   results/h200/cache_family/*.json.gz    more runs of the main card (the cache family)
# Each distinct file version (git blob) is used once; `gpuprobe baseline build` groups them by
# device.uuid, skips (and counts) unreadable ones, and records each source's commit and path.
# Not used: replay/ (a modelled replay, not a measurement), links/, hopper_recheck/, pipeline/.
# Usage: tools/build_h200_baseline.sh [gpuprobe binary] [output file] [pinned commit]
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
bin=${1:-$root/build/gpuprobe}
out=${2:-$root/baselines/h200.json}
pin=${3:-54d03dad}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
pin=$(git rev-parse --verify "$pin^{commit}")
list="$work/sources.txt"
: > "$list"
declare -A seen
# Every version of every matching path, newest first: "<commit> <path>".
for spec in 'results/h200/result.json' ':(glob)results/h200/repeat/run*/result.json' \
  ':(glob)results/h200/other_cards/*/result.json' ':(glob)results/h200/ways_seeds/*.json' \
  ':(glob)results/h200/cache_family/*.json.gz'; do
  git log --format='C %H' --name-only --diff-filter=AM "$pin" -- "$spec" |
    awk '/^C /{c=$2; next} NF{print c, $0}'
done > "$work/versions.txt"
while read -r commit path; do
  blob=$(git rev-parse --verify -q "$commit:$path") || continue
  [[ -n ${seen[$blob]:-} ]] && continue
  seen[$blob]=1
  file="$work/$blob.json"
  if [[ $path == *.gz ]]; then
    git cat-file blob "$blob" | gzip -dc > "$file" 2>/dev/null || : # an unreadable one is skipped
  else
    git cat-file blob "$blob" > "$file"
  fi
  echo "$file $commit $path" >> "$list"
done < "$work/versions.txt"
echo "$(wc -l < "$list") distinct result files from the history up to ${pin:0:12}"
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2046
"$bin" baseline build $(cut -d' ' -f1 "$list") --source-commits "$list" --out "$out"
