import { html } from './html.js';

/**
 * How close to a ceiling counts as a warning and as danger, as the share of the ceiling used
 * (settled + held), when the ceiling's alert thresholds are not known (the overview, the plane
 * view, concurrency): the fallback of {@link meterLevel}. Every meter and the overview's sort take
 * them from here (or from a `thresholds` parameter).
 */
export const DANGER_THRESHOLDS = Object.freeze({ warn: 0.8, danger: 1 });

/** `'danger'` at or past `thresholds.danger` of a ceiling, `'warn'` at or past `thresholds.warn`, else `'ok'`. */
export function dangerLevel(ratio, thresholds = DANGER_THRESHOLDS) {
  if (ratio >= thresholds.danger) return 'danger';
  if (ratio >= thresholds.warn) return 'warn';
  return 'ok';
}

/**
 * The one rule for a meter's level and the words that say it. `alerts` is what
 * GET /v1/tenants/{tenant}/alerts answered for this ceiling (one entry of `ceilings`), `null` when
 * that answer is known and names no threshold for it (`[]` configured), or `undefined` when no
 * alerts are known:
 * - used (settled + held) at or past the ceiling is `'danger'` ("at ceiling", "over ceiling"): it
 *   refuses admissions whatever the thresholds say;
 * - otherwise, with alerts known, the highest crossed threshold makes it `'warn'`, named in the
 *   words. Thresholds compare settled spend only, as the alerts do (docs/design/rules.md#e3): a
 *   hold is mostly given back;
 * - with no alerts known, {@link DANGER_THRESHOLDS} (or `thresholds`) of the share used.
 * Answers `{ level, ratio, crossed }`, `crossed` being the highest crossed threshold state or null.
 */
export function meterLevel({ settled, held = 0, ceiling, alerts, thresholds = DANGER_THRESHOLDS }) {
  const used = settled + held;
  const limited = ceiling !== undefined && ceiling !== null;
  const ratio = !limited ? 0 : ceiling === 0 ? (used > 0 ? Infinity : 1) : used / ceiling;
  if (alerts === undefined) return { level: limited ? dangerLevel(ratio, thresholds) : 'ok', ratio, crossed: null };
  if (limited && ratio >= 1) return { level: 'danger', ratio, crossed: highestCrossed(alerts) };
  const crossed = highestCrossed(alerts);
  return { level: crossed === null ? 'ok' : 'warn', ratio, crossed };
}

/** The crossed threshold with the largest amount, or null. */
export function highestCrossed(alerts) {
  let highest = null;
  for (const state of alerts?.thresholds ?? []) if (state.crossed && (highest === null || state.amount > highest.amount)) highest = state;
  return highest;
}

/** `50% ($0.50)` or `5,000 tokens`: a threshold state in the meter's unit. */
export function thresholdWords(state, show) {
  return 'percent' in state.threshold ? `${state.threshold.percent}% (${show(state.amount)})` : show(state.amount);
}

/**
 * A bar of settled and held amounts against a ceiling, with the same figures in words beside it
 * (the bar is decoration: the text carries the meaning, the level included). The bar's colour says
 * the level ({@link meterLevel}); settled is solid, held is striped, in either colour.
 * `ceiling` undefined means no ceiling (unlimited); 0 allows nothing (docs/design/decisions.md
 * "Absent means unlimited, 0 means nothing"). `show` formats an amount with its unit.
 */
export function Meter({ label, settled, held = 0, ceiling, show, settledWord = 'settled', heldWord = 'held', thresholds = DANGER_THRESHOLDS, alerts }) {
  const used = settled + held;
  const limited = ceiling !== undefined && ceiling !== null;
  const { level, ratio, crossed } = meterLevel({ settled, held, ceiling, alerts, thresholds });
  const scale = limited ? Math.max(ceiling, used, 1) : Math.max(used, 1);
  // With no ceiling there is nothing to fill: the bar stays striped and empty rather than look full.
  const pct = (n) => (limited ? `${Math.min(100, (n / scale) * 100).toFixed(2)}%` : '0%');
  const words = held > 0 ? `${show(settled)} ${settledWord} + ${show(held)} ${heldWord}` : show(settled);
  const percent = Number.isFinite(ratio) ? `${Math.floor(ratio * 100)}%` : 'over';
  return html`<div class=${`meter level-${level}${level === 'danger' ? ' at-ceiling' : ''}`}>
    <div class="meter-text">
      <span class="meter-label">${label}</span>
      <span class="meter-figures">${words} ${limited ? html`of ${show(ceiling)}` : html`<span class="muted">(no ceiling)</span>`}</span>
      ${level === 'danger'
        ? html`<strong class="badge badge-danger">${ratio > 1 ? `over ceiling (${percent})` : 'at ceiling'}</strong>`
        : level === 'warn'
          ? html`<strong class="badge badge-warn">${crossed === null ? `warning: ${percent} of ceiling` : `alert: ${thresholdWords(crossed, show)} crossed`}</strong>`
          : null}
    </div>
    <div class=${`bar${limited ? '' : ' bar-unlimited'}`} aria-hidden="true">
      <span class="bar-settled" style=${{ width: pct(settled) }}></span>
      <span class="bar-held" style=${{ width: pct(held) }}></span>
    </div>
  </div>`;
}

/** How close a tenant is to its nearest ceiling: the largest used/ceiling ratio (0 with no ceiling). */
export function closeness(usage) {
  const quota = usage.quota ?? {};
  const ratios = [0];
  const add = (used, ceiling) => {
    if (ceiling === undefined) return;
    ratios.push(ceiling === 0 ? (used > 0 ? Infinity : 1) : used / ceiling);
  };
  add(usage.running, quota.maxConcurrentRuns);
  add(usage.spent.tokens + usage.reserved.tokens, quota.maxTokensPerPeriod);
  add(usage.spent.minorUnits + usage.reserved.minorUnits, quota.maxMinorUnitsPerPeriod);
  return Math.max(...ratios);
}
