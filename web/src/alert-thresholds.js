import { useState } from 'preact/hooks';

import { seg } from './api.js';
import { parseMoney, tokens } from './format.js';
import { html } from './html.js';
import { thresholdWords } from './meter.js';

/*
 * A tenant's spend-alert thresholds (GET /v1/tenants/{tenant}/alerts, docs/design/rules.md#e7):
 * each ceiling with its thresholds, their amounts, whether settled spend has crossed them and where
 * they come from; and a form that sets the tenant's own (PATCH of the quota's `alertThresholds`:
 * a list, `[]` for none, `null` to inherit the plane-wide default again).
 */

/** Where a ceiling's thresholds come from, in words (docs/design/rules.md#e2). */
export const SOURCE_WORDS = {
  agent: "the agent's own",
  tenant: "the tenant's quota",
  plane: 'the plane-wide default',
  default: 'the built-in default (80 % and 100 %)',
};

/**
 * The entry of an /alerts answer for one ceiling (`agent` null: the tenant's own), as a meter takes
 * it: `undefined` when the answer is not known, `null` when it names no threshold for the ceiling.
 */
export function alertsFor(alerts, agent, unit) {
  if (alerts === undefined || alerts === null) return undefined;
  return alerts.ceilings.find((entry) => entry.agent === agent && entry.unit === unit) ?? null;
}

/** The thresholds of every spend ceiling this period. */
export function AlertsTable({ alerts, money }) {
  if (alerts.ceilings.length === 0) return html`<p>No spend ceiling has an alert threshold (none configured, or no ceiling to take a percentage of).</p>`;
  return html`<div class="table-wrap"><table class="alerts">
    <caption>Alert thresholds this period, ${alerts.period}, against settled spend</caption>
    <thead><tr><th scope="col">Ceiling</th><th scope="col">Settled</th><th scope="col">Thresholds</th><th scope="col">From</th></tr></thead>
    <tbody>
      ${alerts.ceilings.map((entry) => {
        const show = entry.unit === 'tokens' ? tokens : money;
        return html`<tr>
          <th scope="row" data-label="Ceiling">${entry.agent === null ? 'Tenant' : html`Agent <code>${entry.agent}</code>`}, ${entry.unit === 'tokens' ? 'tokens' : 'money'}
            <div class="muted small">${entry.ceiling === null ? 'no ceiling' : `ceiling ${show(entry.ceiling)}`}</div></th>
          <td data-label="Settled">${show(entry.settled)}</td>
          <td data-label="Thresholds"><ul class="plain thresholds">
            ${entry.thresholds.map(
              (state) => html`<li>
                ${state.crossed ? html`<strong class="badge badge-warn">crossed</strong>` : html`<span class="badge badge-ok">not crossed</span>`}
                ${' '}${thresholdWords(state, show)}
              </li>`,
            )}
          </ul></td>
          <td data-label="From">${SOURCE_WORDS[entry.source] ?? entry.source}</td>
        </tr>`;
      })}
    </tbody>
  </table></div>`;
}

const KINDS = [
  { value: 'percent', label: '% of each ceiling' },
  { value: 'tokens', label: 'tokens settled' },
  { value: 'minorUnits', label: 'money settled' },
];

let nextRow = 1;
const row = (kind = 'percent', value = '') => ({ key: nextRow++, kind, value });

function rowsOf(thresholds, money) {
  return (thresholds ?? []).map((threshold) =>
    'percent' in threshold ? row('percent', String(threshold.percent)) : 'tokens' in threshold ? row('tokens', String(threshold.tokens)) : row('minorUnits', money.input(threshold.minorUnits)),
  );
}

/** The rows as a list of thresholds, or `{ problem: { field, input, message } }` naming the row. */
export function thresholdsOf(rows, config) {
  const value = [];
  for (const [index, entry] of rows.entries()) {
    const text = entry.value.trim();
    const field = `alertThresholds[${index}].${entry.kind}`;
    const input = `threshold-${entry.key}`;
    if (entry.kind === 'minorUnits') {
      let minor;
      try {
        minor = parseMoney(text, config, field);
      } catch (failure) {
        return { problem: { field, input, message: failure.message } };
      }
      if (minor === undefined || minor < 1) return { problem: { field, input, message: `must be an amount above 0 in ${config.currency}, got "${text}"` } };
      value.push({ minorUnits: minor });
      continue;
    }
    const clean = text.replace(/%$/, '').replaceAll(',', '').trim();
    if (!/^\d+$/.test(clean) || Number(clean) < 1) return { problem: { field, input, message: `must be a whole number of at least 1, got "${text}"` } };
    if (BigInt(clean) > BigInt(Number.MAX_SAFE_INTEGER)) return { problem: { field, input, message: `is larger than the largest amount, ${Number.MAX_SAFE_INTEGER}, got "${text}"` } };
    if (entry.kind === 'percent' && Number(clean) > 1000) return { problem: { field, input, message: `must be at most 1000 (%), got "${text}"` } };
    value.push({ [entry.kind]: Number(clean) });
  }
  return { value };
}

/**
 * The tenant's own thresholds: inherit (null: the plane-wide default, else 80 % and 100 %), none
 * ([]), or a list. One PATCH of the quota, audited as quota.update; a problem names the field.
 */
export function ThresholdsForm({ tenant, api, quota, money, config, onActed }) {
  const own = quota?.alertThresholds;
  const [editing, setEditing] = useState(null);
  const [problem, setProblem] = useState(null);
  const [busy, setBusy] = useState(false);

  const start = () => {
    setProblem(null);
    setEditing({ mode: own === undefined ? 'inherit' : own.length === 0 ? 'none' : 'list', rows: own === undefined || own.length === 0 ? [row()] : rowsOf(own, money) });
  };

  const save = async (event) => {
    event.preventDefault();
    let alertThresholds = null;
    if (editing.mode === 'none') alertThresholds = [];
    if (editing.mode === 'list') {
      const answer = thresholdsOf(editing.rows, config);
      if (answer.problem !== undefined) return setProblem(answer.problem);
      if (answer.value.length === 0) return setProblem({ field: 'alertThresholds', input: undefined, message: 'lists no threshold: add one, or choose "No alerts"' });
      alertThresholds = answer.value;
    }
    setProblem(null);
    setBusy(true);
    try {
      await api.patch(`v1/tenants/${seg(tenant)}/quota`, { alertThresholds });
    } catch (error) {
      setBusy(false);
      // The API's refusal names the field (alertThresholds.1.percent …): shown by the form, on the row it names.
      const field = error.field ?? 'alertThresholds';
      const index = /^(?:patch\.)?alertThresholds[.[](\d+)/.exec(field)?.[1];
      const named = index === undefined ? undefined : editing.rows[Number(index)];
      // The API's message starts with the field it names, which the form shows already.
      const message = error.message.startsWith(`${field}: `) ? error.message.slice(field.length + 2) : error.message;
      setProblem({ field, input: named === undefined ? undefined : `threshold-${named.key}`, message });
      return;
    }
    setBusy(false);
    setEditing(null);
    onActed(alertThresholds === null ? 'Alert thresholds removed: the tenant uses the default again.' : alertThresholds.length === 0 ? 'Alert thresholds set: none (no spend alert).' : 'Alert thresholds saved.');
  };

  const describeOwn = own === undefined ? 'none of its own: it uses the default (the plane-wide default, else 80 % and 100 %)' : own.length === 0 ? 'none: no spend alert' : own.map((threshold) => describe(threshold, money)).join(', ');
  const setRows = (rows) => {
    setEditing({ ...editing, rows });
    if (problem?.input?.startsWith('threshold-')) setProblem(null);
  };

  return html`<div class="act">
    <h3 id="thresholds-edit-title">The tenant's own thresholds</h3>
    <p>${describeOwn}.</p>
    ${editing === null
      ? html`<button type="button" onClick=${start}>Edit alert thresholds…</button>`
      : html`<form onSubmit=${save} novalidate aria-labelledby="thresholds-edit-title">
          <fieldset class="threshold-mode">
            <legend>Alert thresholds of the tenant (its agents without their own inherit them)</legend>
            ${[
              ['inherit', 'Use the default (the plane-wide default, else 80 % and 100 %)'],
              ['none', 'No alerts ([])'],
              ['list', 'These thresholds:'],
            ].map(
              ([mode, label]) => html`<div class="check">
                <input type="radio" name="threshold-mode" id=${`threshold-mode-${mode}`} value=${mode} checked=${editing.mode === mode}
                  onChange=${() => setEditing({ ...editing, mode })} />
                <label for=${`threshold-mode-${mode}`}>${label}</label>
              </div>`,
            )}
          </fieldset>
          ${editing.mode !== 'list'
            ? null
            : html`<fieldset class="rate-rows">
                <legend>Thresholds, compared with settled spend</legend>
                ${editing.rows.map(
                  (entry, index) => html`<div class="rate-row" key=${entry.key}>
                    <div class="field">
                      <label for=${`threshold-${entry.key}`}>Threshold ${index + 1}</label>
                      <input id=${`threshold-${entry.key}`} value=${entry.value} inputmode=${entry.kind === 'minorUnits' ? 'decimal' : 'numeric'}
                        placeholder=${entry.kind === 'percent' ? 'e.g. 80' : entry.kind === 'tokens' ? 'e.g. 50000' : `${config.currency}, e.g. 25.00`}
                        onInput=${(event) => setRows(editing.rows.map((other) => (other.key === entry.key ? { ...other, value: event.currentTarget.value } : other)))}
                        aria-invalid=${problem?.input === `threshold-${entry.key}` ? 'true' : undefined}
                        aria-describedby=${problem?.input === `threshold-${entry.key}` ? 'thresholds-problem' : undefined} />
                    </div>
                    <div class="field threshold-kind">
                      <label for=${`threshold-${entry.key}-kind`}>Unit<span class="visually-hidden">, threshold ${index + 1}</span></label>
                      <select id=${`threshold-${entry.key}-kind`} value=${entry.kind}
                        onChange=${(event) => setRows(editing.rows.map((other) => (other.key === entry.key ? { ...other, kind: event.currentTarget.value } : other)))}>
                        ${KINDS.map((kind) => html`<option value=${kind.value}>${kind.value === 'minorUnits' ? `${config.currency} settled` : kind.label}</option>`)}
                      </select>
                    </div>
                    <button type="button" class="secondary" aria-label=${`Remove threshold ${index + 1}`} onClick=${() => setRows(editing.rows.filter((other) => other.key !== entry.key))}>Remove</button>
                  </div>`,
                )}
                <button type="button" class="secondary" onClick=${() => setRows([...editing.rows, row()])}>Add a threshold</button>
              </fieldset>`}
          ${problem === null ? null : html`<p id="thresholds-problem" class="error" role="alert"><strong>${problem.field}</strong> ${problem.message}</p>`}
          <div class="buttons">
            <button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save alert thresholds'}</button>
            <button type="button" class="secondary" onClick=${() => setEditing(null)}>Cancel</button>
          </div>
        </form>`}
  </div>`;
}

/** `80%`, `50,000 tokens`, `$25.00`. */
export function describe(threshold, money) {
  if ('percent' in threshold) return `${threshold.percent}%`;
  if ('tokens' in threshold) return tokens(threshold.tokens);
  return money(threshold.minorUnits);
}
