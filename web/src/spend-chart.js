import { useEffect, useRef, useState } from 'preact/hooks';

import { html } from './html.js';

// Settled solid, held striped in the same blue, as on the meters (meter.js): amber and red there
// mean a warning and danger, so the chart does not use them for held spend.
const SETTLED = '#1d4ed8';
const HELD_LIGHT = '#bfdbfe';
const CEILING = '#b91c1c';

// A diagonal stripe of settled blue on light blue, as a canvas pattern for the held bars.
function heldStripes(context) {
  const tile = document.createElement('canvas');
  tile.width = 8;
  tile.height = 8;
  const pen = tile.getContext('2d');
  pen.fillStyle = HELD_LIGHT;
  pen.fillRect(0, 0, 8, 8);
  pen.strokeStyle = SETTLED;
  pen.lineWidth = 2.5;
  pen.beginPath();
  pen.moveTo(-2, 10);
  pen.lineTo(10, -2);
  pen.stroke();
  return context.createPattern(tile, 'repeat') ?? HELD_LIGHT;
}

/**
 * Settled and held spend of one unit over recent billing periods, as bars (uPlot), with the
 * current ceiling as a dashed line. The chart is drawn on a canvas and hidden
 * from assistive technology; the same figures are in the table beside it.
 */
export function SpendChart({ title, periods, settled, held, ceiling, show }) {
  const box = useRef(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    let cleanup = () => {};
    let cancelled = false;
    // uPlot is loaded when a chart is first drawn: it reads the browser's locale as it loads, and a
    // locale Intl refuses (`en-US@posix` under LANG=C) would otherwise stop the whole page.
    import('uplot')
      .then(({ default: uPlot }) => {
        if (!cancelled) cleanup = draw(uPlot, element);
      })
      .catch(() => setFailed(true));
    return () => {
      cancelled = true;
      cleanup();
    };
  }, [periods.join(','), settled.join(','), held.join(','), ceiling, show]);

  function draw(uPlot, element) {
    const xs = periods.map((_, index) => index);
    const bars = (align) => uPlot.paths.bars({ size: [0.38, 48], align });
    const series = [
      {},
      { label: 'settled', stroke: SETTLED, fill: SETTLED, paths: bars(-1), points: { show: false }, value: (_, v) => (v == null ? '—' : show(v)) },
      { label: 'held (striped)', stroke: SETTLED, fill: (plot) => heldStripes(plot.ctx), paths: bars(1), points: { show: false }, value: (_, v) => (v == null ? '—' : show(v)) },
    ];
    const data = [xs, settled, held];
    if (ceilingOnChart(ceiling, settled, held)) {
      series.push({ label: 'ceiling now', stroke: CEILING, dash: [6, 4], width: 1.5, points: { show: false }, value: (_, v) => (v == null ? '—' : show(v)) });
      data.push(periods.map(() => ceiling));
    }
    const width = () => Math.max(260, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, periods.length - 0.5] }, y: { range: (_, min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [
          {
            // Whole periods only, as many as fit: every one, or every 2nd, 3rd, …
            incrs: [1, 2, 3, 4, 6, 12],
            space: 40,
            values: (_, splits) => splits.map((index) => shortPeriod(periods[index] ?? '')),
            grid: { show: false },
            font: '12px system-ui, sans-serif',
          },
          { values: (_, splits) => splits.map((v) => show.short(v)), size: 72, font: '12px system-ui, sans-serif' },
        ],
        series,
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }

  const limited = ceiling !== undefined && ceiling !== null;
  return html`<figure class="chart">
    <figcaption>
      ${title}
      <span class="muted small">
        ${!limited ? ' · no ceiling' : ceilingOnChart(ceiling, settled, held) ? '' : ` · ceiling now ${show(ceiling)}, far above these bars`}
      </span>
    </figcaption>
    ${failed ? html`<p class="muted">The chart could not be drawn in this browser; the table below has the figures.</p>` : null}
    <div ref=${box} class="chart-canvas" aria-hidden="true"></div>
  </figure>`;
}

// The ceiling is drawn when it is within reach of the bars; a ceiling far above them would flatten
// every bar to nothing, so the caption names it instead.
function ceilingOnChart(ceiling, settled, held) {
  if (ceiling === undefined || ceiling === null) return false;
  const highest = Math.max(0, ...settled, ...held);
  return ceiling <= Math.max(highest * 2, 1);
}

// `2026-11` → `Nov`, January → `Jan 26`; `2026-11-30` → `30`, a first day → `1 Nov`.
function shortPeriod(key) {
  const [year, month, day] = key.split('-');
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const name = months[Number(month) - 1] ?? '';
  if (day === undefined) return month === '01' ? `${name} ${year.slice(2)}` : name;
  return day === '01' ? `1 ${name}` : String(Number(day));
}
