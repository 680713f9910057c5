#!/usr/bin/env bash
# Screenshots of a result's report, taken by the browser test's own check (so the pictures
# are of a page that passed it): the summary card and one family section.
# usage: scripts/report_screenshots.sh [GPUPROBE] [RESULT_DIR] [OUT_DIR] [FAMILY]
#   defaults: build/gpuprobe, results/h200, RESULT_DIR, latency
#   writes OUT_DIR/report_summary.png and OUT_DIR/report_section.png
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gpuprobe=${1:-$root/build/gpuprobe}
result_dir=${2:-$root/results/h200}
out_dir=${3:-$result_dir}
family=${4:-latency}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gpuprobe" report "$result_dir/result.json" --out "$work"
mkdir -p "$out_dir"
levels=()
[[ "$(basename "$result_dir")" == h200 ]] && levels=(--levels)
bash "$root/tests/browser/check_report.sh" "${levels[@]}" \
  --shot-summary "$out_dir/report_summary.png" \
  --shot-section "$family:$out_dir/report_section.png" "$work/report.html"
echo "screenshots: $out_dir/report_summary.png $out_dir/report_section.png"
