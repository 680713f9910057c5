// The in-page checks of check_report.sh (inserted first in <head>): each problem found is one
// line of the verdict that the script reads back from the DOM.
window.gpErrors = [];
window.addEventListener('error', e => gpErrors.push('script error: ' + e.message));
const gpConsoleError = console.error;
console.error = function (...a) { gpErrors.push('console error: ' + a.join(' ')); gpConsoleError.apply(console, a); };

// Every chart: a drawn series, both axis titles, no text outside it, no series at zero only.
function gpCheckCharts(charts, problems) {
  charts.forEach((svg, i) => {
    const fig = svg.closest('figure');
    const name = fig && fig.dataset.curve ? fig.dataset.curve : 'chart ' + i;
    const drawn = [...svg.querySelectorAll('polyline.series, g.points circle')].filter(e => {
      const b = e.getBBox();
      return e.tagName === 'circle' ? e.r.baseVal.value > 0 : (b.width > 0 || b.height > 0);
    });
    if (!drawn.length) problems.push('chart without a drawn series: ' + name);
    for (const axis of ['x', 'y']) {
      const t = svg.querySelector('text.axis-title.' + axis);
      if (!t || !t.textContent.trim()) problems.push('chart without a ' + axis + ' axis title: ' + name);
    }
    // A series whose every point sits on the zero line (a group with no samples of it).
    const zero = svg.querySelector("text.tick.y[data-v='0']");
    if (zero) {
      const y0 = parseFloat(zero.getAttribute('y')) - 4;
      const at0 = v => Math.abs(v - y0) < 0.6;
      svg.querySelectorAll('polyline.series').forEach(p => {
        const ys = [...p.points].map(q => q.y);
        if (ys.length && ys.every(at0))
          problems.push('series drawn with only zero values in ' + name + ': ' + p.dataset.label);
      });
      svg.querySelectorAll('g.points').forEach(g => {
        const ys = [...g.querySelectorAll('circle')].map(c => c.cy.baseVal.value);
        if (ys.length && ys.every(at0))
          problems.push('points drawn with only zero values in ' + name);
      });
    }
    const s = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBoundingClientRect();
      if (b.left < s.left - 0.5 || b.top < s.top - 0.5 || b.right > s.right + 0.5 ||
          b.bottom > s.bottom + 0.5)
        problems.push('text outside its chart in ' + name + ': "' + t.textContent + '"');
    });
  });
}

// Nothing wider than its box, no element past the window's right edge (unless a scrolling or
// clipping box holds it), the page no wider than the window.
function gpCheckWidths(problems) {
  document.querySelectorAll('td,th,p,h1,h2,h3,h4,figcaption,dt,dd,summary,.legend span,pre')
    .forEach(el => {
      if (el.id === 'gp-check' || getComputedStyle(el).overflowX !== 'visible') return;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        problems.push('text overflows its box: <' + el.tagName.toLowerCase() + '> "' +
                      el.textContent.slice(0, 60) + '"');
    });
  const clipped = el => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    return false;
  };
  let wide = 0;
  document.body.querySelectorAll('*').forEach(el => {
    if (wide >= 5 || el.closest('#gp-check')) return;
    const b = el.getBoundingClientRect();
    if (b.width > 0 && b.right > window.innerWidth + 1 && !clipped(el)) {
      wide++;
      problems.push('element wider than the page: <' + el.tagName.toLowerCase() + '> "' +
                    (el.textContent || '').slice(0, 60) + '" (right edge ' + Math.round(b.right) + ' px)');
    }
  });
  const page = document.documentElement.scrollWidth;
  if (page > window.innerWidth + 1) problems.push('page wider than the window: ' + page + ' px');
}

// The summary card opens the page; with gpExpectLevels it holds every level of the H200.
function gpCheckSummary(problems) {
  const card = document.getElementById('summary');
  const first = [...document.body.children].find(el => el.tagName !== 'SCRIPT');
  if (!card) { problems.push('no summary card (#summary)'); return; }
  if (first !== card) problems.push('the summary card is not the first thing on the page');
  if (!window.gpExpectLevels) return;
  const names = [...card.querySelectorAll('svg.hierarchy g.level text:first-of-type')]
    .map(t => t.textContent.trim());
  for (const level of ['shared memory', 'L1', 'L2 near partition', 'L2 far partition', 'DRAM'])
    if (!names.includes(level)) problems.push('summary card without the level row: ' + level);
}

// Typing in the findings filter hides the rows that do not match and keeps those that do.
function gpCheckFilter(problems) {
  const box = document.getElementById('finding-filter');
  const rows = [...document.querySelectorAll('#all-findings tr.f')];
  if (!rows.length) return;
  if (!box) { problems.push('no findings filter box'); return; }
  const type = text => { box.value = text; box.dispatchEvent(new Event('input', {bubbles: true})); };
  const hidden = r => getComputedStyle(r).display === 'none';
  type('zz-no-finding-is-named-this-zz');
  const shown = rows.filter(r => !hidden(r)).length;
  if (shown) problems.push('filter: typing a name no finding has left ' + shown + ' rows shown');
  const name = rows[rows.length - 1].cells[0].textContent;
  type(name);
  if (hidden(rows[rows.length - 1])) problems.push('filter: typing "' + name + '" hid its row');
  type('');
  if (rows.some(hidden)) problems.push('filter: an empty filter left rows hidden');
}

window.addEventListener('load', () => {
  const problems = [...gpErrors];
  const charts = document.querySelectorAll('svg.chart');
  gpCheckCharts(charts, problems);
  gpCheckWidths(problems);
  gpCheckSummary(problems);
  gpCheckFilter(problems);
  const out = document.createElement('pre');
  out.id = 'gp-check';
  out.textContent = 'GPCHECK ' + (problems.length ? 'FAIL\n' + problems.join('\n') : 'OK') +
                    '\nGPCHARTS ' + charts.length;
  document.body.appendChild(out);
});
