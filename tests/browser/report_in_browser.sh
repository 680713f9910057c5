#!/usr/bin/env bash
# The report in a real browser: the committed H200 result's report and a modelled run's report
# pass check_report.sh (screenshots in BUILD/browser/), and a report whose chart series were
# removed fails it, so the check can fail.
# usage: report_in_browser.sh GPUPROBE BUILD_DIR
set -euo pipefail
gpuprobe=$1
out=$2/browser
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=$here/check_report.sh
command -v chromium > /dev/null || command -v chromium-browser > /dev/null || {
  echo "no chromium: skipped" >&2; exit 77; }
rm -rf "$out"
mkdir -p "$out"
"$gpuprobe" report "$root/results/h200/result.json" --out "$out/h200" > /dev/null
bash "$check" "$out/h200/report.html" "$out/h200_report.png"
"$gpuprobe" --device model:tiny --quiet --out "$out/model" run 'latency.*' > /dev/null
bash "$check" "$out/model/report.html" "$out/model_report.png"
# A chart whose series were removed must fail.
perl -0pe "s/<polyline class='series'[^>]*>//g; s/<g class='points'.*?<\/g>//gs" \
  "$out/h200/report.html" > "$out/broken.html"
if bash "$check" "$out/broken.html" 2> "$out/broken.txt"; then
  echo "report_in_browser: a report without drawn series passed the check" >&2
  exit 1
fi
grep -q "chart without a drawn series" "$out/broken.txt" || {
  echo "report_in_browser: the broken report failed for another reason:" >&2
  cat "$out/broken.txt" >&2
  exit 1
}
echo "report_in_browser: passed (and the report without series failed as it must)"
