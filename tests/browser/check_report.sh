#!/usr/bin/env bash
# Renders one report.html in headless Chromium with checks run inside the page, and fails on a
# script or console error, on a chart with no drawn series, a chart without axis titles or a
# series drawn with only zero values, on text overflowing its box (an SVG label outside its
# chart, an HTML cell or line wider than its box, an element or the page wider than the
# window at 1280 px), on a missing summary card (with --levels: on a missing hierarchy level),
# and on a findings filter that does not hide rows. Saves screenshots when asked.
# usage: check_report.sh [--levels] [--shot-summary PNG] [--shot-section FAMILY:PNG]
#                        REPORT.html [SCREENSHOT.png]
# prints "check_report: REPORT: N charts, ..." when it passes
# exit: 0 passed, 1 a check failed, 77 no Chromium here (ctest counts it as skipped)
set -euo pipefail
levels=0 shot_summary= shot_section=
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --levels) levels=1; shift ;;
    --shot-summary) shot_summary=$2; shift 2 ;;
    --shot-section) shot_section=$2; shift 2 ;;
    *) echo "check_report: unknown option $1" >&2; exit 2 ;;
  esac
done
report=$1
shot=${2:-}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$browser" ]]; then
  echo "check_report: no chromium on PATH (apt-get install chromium)" >&2
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The checks go first in <head>, so they see every error the page raises while it loads.
{
  echo "<script>window.gpExpectLevels = $levels;</script><script>"
  cat "$here/checks.js"
  echo "</script>"
} > "$work/checks.html"
page="$work/report.html"
CHECKS="$work/checks.html" perl -0pe \
  'BEGIN { local $/; open my $f, "<", $ENV{CHECKS} or die; $c = <$f> } s/<head>/<head>$c/' \
  "$report" > "$page"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400
       --virtual-time-budget=10000 --user-data-dir="$work/profile")
"$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "file://$page" \
  > "$work/dom.html" 2> "$work/log.txt" || true
if grep -q "Uncaught" "$work/log.txt"; then
  echo "check_report: $report: uncaught error in the browser:" >&2
  grep "Uncaught" "$work/log.txt" >&2
  exit 1
fi
verdict=$(sed -n '/<pre id="gp-check">/,/GPCHARTS/p' "$work/dom.html")
if [[ -z "$verdict" ]]; then
  echo "check_report: $report: the page's checks did not run; browser log:" >&2
  tail -20 "$work/log.txt" >&2
  exit 1
fi
charts=$(echo "$verdict" | sed -n 's/.*GPCHARTS \([0-9]*\).*/\1/p')
if ! echo "$verdict" | grep -q "GPCHECK OK"; then
  echo "check_report: $report:" >&2
  echo "$verdict" | grep -v "^GPCHECK\|^GPCHARTS" | sed 's/^/  /' >&2
  exit 1
fi
# A screenshot of the page's top, and of one part of it alone (everything else hidden).
only() {  # only SELECTOR PNG HEIGHT
  local copy="$work/only.html"
  SEL=$1 perl -0pe 's/<\/style>/body>*:not($ENV{SEL}){display:none}<\/style>/' "$report" > "$copy"
  "$browser" "${flags[@]/--window-size=1280,2400/--window-size=1280,$3}" --screenshot="$2" \
    "file://$copy" > /dev/null 2>&1
  [[ -s "$2" ]] || { echo "check_report: no screenshot written to $2" >&2; exit 1; }
}
if [[ -n "$shot" ]]; then
  "$browser" "${flags[@]}" --screenshot="$shot" "file://$(realpath "$report")" > /dev/null 2>&1
  [[ -s "$shot" ]] || { echo "check_report: no screenshot written" >&2; exit 1; }
fi
[[ -z "$shot_summary" ]] || only "#summary" "$shot_summary" 1500
if [[ -n "$shot_section" ]]; then
  grep -q "id='family-${shot_section%%:*}'" "$report" || {
    echo "check_report: no section family-${shot_section%%:*} in $report" >&2; exit 1; }
  only "#family-${shot_section%%:*}" "${shot_section#*:}" 2400
fi
echo "check_report: $report: $charts charts, no errors, every chart drawn with axis titles," \
     "no overflow, summary and filter work"
