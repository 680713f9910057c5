#!/usr/bin/env bash
# The report in a real browser: the committed H200 result's report (drawn from the CSVs beside
# it: recorded before curves carried rows) and modelled runs' reports pass check_report.sh
# (screenshots in BUILD/browser/); a report made from a lone copy of a result.json has as many
# charts as the one made with the CSVs beside it. Each check is shown able to fail: a report
# with a defect planted (series removed, axis titles removed, a zero series drawn, no summary,
# a dead filter, a too-wide element, a result without rows) fails it.
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
charts_of() { sed -n 's/^check_report: .*: \([0-9]*\) charts,.*/\1/p' "$1"; }

"$gpuprobe" report "$root/results/h200/result.json" --out "$out/h200" > "$out/h200.txt"
bash "$check" --levels --shot-summary "$out/h200_summary.png" \
  --shot-section "latency:$out/h200_section.png" "$out/h200/report.html" "$out/h200_report.png" \
  | tee "$out/h200.check"
# Every curve of the H200 result is found (its CSVs), and the report says how many it drew.
grep -q "($(charts_of "$out/h200.check") charts)" "$out/h200.txt" || {
  echo "report_in_browser: gpuprobe report's chart count differs from the page's:" >&2
  cat "$out/h200.txt" >&2; exit 1; }

# A modelled run holds its curves' rows: its result.json alone draws every chart.
"$gpuprobe" --device model:tiny --quiet --out "$out/model" run 'latency.*' 'cache.*' > /dev/null
bash "$check" "$out/model/report.html" "$out/model_report.png" | tee "$out/model.check"
mkdir -p "$out/lone"
cp "$out/model/result.json" "$out/lone/result.json"
"$gpuprobe" report "$out/lone/result.json" > /dev/null 2> "$out/lone.err"
bash "$check" "$out/lone/report.html" | tee "$out/lone.check"
same_charts() {  # same_charts WITH_CSV.check LONE.check
  local a b
  a=$(charts_of "$1")
  b=$(charts_of "$2")
  [[ -n "$a" && "$a" -gt 0 && "$a" == "$b" ]] || {
    echo "report_in_browser: $a charts with the CSVs beside result.json, $b from it alone" >&2
    return 1; }
}
same_charts "$out/model.check" "$out/lone.check"
[[ ! -s "$out/lone.err" ]] || { echo "report_in_browser: lone report warned:" >&2; cat "$out/lone.err" >&2; exit 1; }

# --- Each check can fail. ---
fails_with() {  # fails_with NAME EXPECTED_MESSAGE [check options] REPORT
  local name=$1 msg=$2
  shift 2
  if bash "$check" "$@" > /dev/null 2> "$out/$name.txt"; then
    echo "report_in_browser: the $name report passed the check" >&2
    exit 1
  fi
  grep -q "$msg" "$out/$name.txt" || {
    echo "report_in_browser: the $name report failed for another reason:" >&2
    cat "$out/$name.txt" >&2
    exit 1
  }
}
h200=$out/h200/report.html
perl -0pe "s/<polyline class='series'[^>]*>//g; s/<g class='points'.*?<\/g>//gs" "$h200" \
  > "$out/broken.html"
fails_with broken "chart without a drawn series" "$out/broken.html"
perl -0pe "s/<text class='axis-title [xy]'[^>]*>[^<]*<\/text>//g" "$h200" > "$out/untitled.html"
fails_with untitled "without a x axis title" "$out/untitled.html"
# A far-latency line at zero for SM group 0 in the partition chart (at the y of its 0 tick).
perl -0pe "s{(data-curve='cache.l2.partition.sm_latency'.*?<text class='tick y' data-v='0' x='[^']*' y=')([0-9.]+)(.*?)</svg>}{\$1\$2\$3<polyline class='series' data-label='SM group 0: far' fill='none' stroke='red' points='100,@{[\$2-4]} 600,@{[\$2-4]}'/></svg>}s" \
  "$h200" > "$out/zero.html"
grep -q "SM group 0: far" "$out/zero.html" || { echo "report_in_browser: zero series not planted" >&2; exit 1; }
fails_with zero "series drawn with only zero values" "$out/zero.html"
perl -0pe 's/<section id="summary".*?<\/section>//s' "$h200" > "$out/nosummary.html"
fails_with nosummary "no summary card" "$out/nosummary.html"
perl -0pe 's/<text[^>]*>L2 far partition<\/text>//' "$h200" > "$out/nolevel.html"
fails_with nolevel "without the level row: L2 far partition" --levels "$out/nolevel.html"
perl -0pe "s/<script id='gp-filter'>.*?<\/script>//s" "$h200" > "$out/nofilter.html"
fails_with nofilter "filter: typing a name no finding has left" "$out/nofilter.html"
perl -0pe "s/<\/h1>/<\/h1><div style='width:1400px'>wide<\/div>/" "$h200" > "$out/wide.html"
fails_with wide "element wider than the page" "$out/wide.html"
# A result whose curves lost their rows, alone: fewer charts, a note on the page, a warning.
mkdir -p "$out/norows"
python3 - "$out/model/result.json" "$out/norows/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for e in r["experiments"]:
    for c in e.get("curves", []):
        c.pop("rows", None)
json.dump(r, open(sys.argv[2], "w"))
PY
"$gpuprobe" report "$out/norows/result.json" > /dev/null 2> "$out/norows.err"
grep -q "curves not found" "$out/norows.err" || {
  echo "report_in_browser: no warning for curves without rows" >&2; exit 1; }
grep -q "no rows in result.json and no CSV beside it" "$out/norows/report.html" || {
  echo "report_in_browser: no note on the page for curves without rows" >&2; exit 1; }
bash "$check" "$out/norows/report.html" > "$out/norows.check" 2>&1 || true
if same_charts "$out/model.check" "$out/norows.check" 2> /dev/null; then
  echo "report_in_browser: a result without rows drew as many charts" >&2
  exit 1
fi
echo "report_in_browser: passed (and every planted defect failed as it must)"
