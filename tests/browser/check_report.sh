#!/usr/bin/env bash
# Renders one report.html in headless Chromium with checks run inside the page, and fails on a
# script or console error, on a chart with no drawn series, or on text overflowing its box
# (an SVG label outside its chart, an HTML cell or line wider than its box, a page wider than
# the window). Saves a screenshot when asked.
# usage: check_report.sh REPORT.html [SCREENSHOT.png]
# exit: 0 passed, 1 a check failed, 77 no Chromium here (ctest counts it as skipped)
set -euo pipefail
report=$1
shot=${2:-}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$browser" ]]; then
  echo "check_report: no chromium on PATH (apt-get install chromium)" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The checks go first in <head>, so they see every error the page raises while it loads.
cat > "$work/checks.html" <<'JS'
<script>
window.gpErrors = [];
window.addEventListener('error', e => gpErrors.push('script error: ' + e.message));
const gpConsoleError = console.error;
console.error = function (...a) { gpErrors.push('console error: ' + a.join(' ')); gpConsoleError.apply(console, a); };
window.addEventListener('load', () => {
  const problems = [...gpErrors];
  const charts = document.querySelectorAll('svg.chart');
  charts.forEach((svg, i) => {
    const fig = svg.closest('figure');
    const name = fig && fig.dataset.curve ? fig.dataset.curve : 'chart ' + i;
    const drawn = [...svg.querySelectorAll('polyline.series, g.points circle')].filter(e => {
      const b = e.getBBox();
      return e.tagName === 'circle' ? e.r.baseVal.value > 0 : (b.width > 0 || b.height > 0);
    });
    if (!drawn.length) problems.push('chart without a drawn series: ' + name);
    // Rendered boxes (rotated labels included) against the chart's own box.
    const s = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBoundingClientRect();
      if (b.left < s.left - 0.5 || b.top < s.top - 0.5 || b.right > s.right + 0.5 ||
          b.bottom > s.bottom + 0.5)
        problems.push('text outside its chart in ' + name + ': "' + t.textContent + '"');
    });
  });
  document.querySelectorAll('td,th,p,h1,h2,h3,h4,figcaption,dt,dd,summary,.legend span,pre')
    .forEach(el => {
      if (el.id === 'gp-check' || getComputedStyle(el).overflowX !== 'visible') return;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        problems.push('text overflows its box: <' + el.tagName.toLowerCase() + '> "' +
                      el.textContent.slice(0, 60) + '"');
    });
  const page = document.documentElement.scrollWidth;
  if (page > window.innerWidth + 1) problems.push('page wider than the window: ' + page + ' px');
  const out = document.createElement('pre');
  out.id = 'gp-check';
  out.textContent = 'GPCHECK ' + (problems.length ? 'FAIL\n' + problems.join('\n') : 'OK') +
                    '\nGPCHARTS ' + charts.length;
  document.body.appendChild(out);
});
</script>
JS
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
if [[ -n "$shot" ]]; then
  "$browser" "${flags[@]}" --screenshot="$shot" "file://$(realpath "$report")" > /dev/null 2>&1
  [[ -s "$shot" ]] || { echo "check_report: no screenshot written" >&2; exit 1; }
fi
echo "check_report: $report: $charts charts, no errors, every chart drawn, no overflow"
