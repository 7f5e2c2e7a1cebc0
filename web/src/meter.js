import { html } from './html.js';

/**
 * A bar of settled and held amounts against a ceiling, with the same figures in words beside it
 * (the bar is decoration: the text carries the meaning). `ceiling` undefined means no ceiling
 * (unlimited); 0 allows nothing (docs/design/decisions.md "Absent means
 * unlimited, 0 means nothing"). `show` formats an amount with its unit.
 */
export function Meter({ label, settled, held = 0, ceiling, show, heldWord = 'held' }) {
  const used = settled + held;
  const limited = ceiling !== undefined && ceiling !== null;
  const ratio = !limited ? 0 : ceiling === 0 ? (used > 0 ? Infinity : 1) : used / ceiling;
  const atCeiling = limited && used >= ceiling;
  const scale = limited ? Math.max(ceiling, used, 1) : Math.max(used, 1);
  // With no ceiling there is nothing to fill: the bar stays striped and empty rather than look full.
  const pct = (n) => (limited ? `${Math.min(100, (n / scale) * 100).toFixed(2)}%` : '0%');
  const words = held > 0 ? `${show(settled)} settled + ${show(held)} ${heldWord}` : show(settled);
  return html`<div class=${`meter${atCeiling ? ' at-ceiling' : ''}`}>
    <div class="meter-text">
      <span class="meter-label">${label}</span>
      <span class="meter-figures">${words} ${limited ? html`of ${show(ceiling)}` : html`<span class="muted">(no ceiling)</span>`}</span>
      ${atCeiling ? html`<strong class="badge badge-danger">at ceiling</strong>` : limited && ratio >= 0.8 ? html`<strong class="badge badge-warn">${Math.floor(ratio * 100)}%</strong>` : null}
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
