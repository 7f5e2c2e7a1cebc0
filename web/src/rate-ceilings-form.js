import { html } from './html.js';

/*
 * A tenant's rate ceilings as rows of a form (grant, limit, window in seconds) instead of JSON:
 * `rowsOf` turns a quota's `rateCeilings` into rows, `RateCeilingRows` edits them (add, remove),
 * and `rateCeilingsOf` turns them back, or says which row and which field is wrong.
 */

let nextRow = 1;
const row = (grant = '', count = '', windowSeconds = '') => ({ key: nextRow++, grant, count, windowSeconds });

/** The rows of a quota's `rateCeilings` (grant → list of { count, windowSeconds }), one per ceiling. */
export function rowsOf(rateCeilings) {
  if (rateCeilings === undefined || rateCeilings === null) return [];
  return Object.entries(rateCeilings).flatMap(([grant, ceilings]) => ceilings.map((ceiling) => row(grant, String(ceiling.count), String(ceiling.windowSeconds))));
}

const COLUMNS = [
  { name: 'grant', label: 'Grant', hint: 'e.g. tool://payments/refund' },
  { name: 'count', label: 'Limit (dispatches)', hint: 'at most this many' },
  { name: 'windowSeconds', label: 'Window (seconds)', hint: 'per this many seconds' },
];

/**
 * The rows as the quota's `rateCeilings`: `{ value }` (undefined when there are none), or
 * `{ problem: { field, input, message } }` naming the row and field (`input` is the id of the box).
 * A row left wholly blank is ignored.
 */
export function rateCeilingsOf(rows) {
  const value = {};
  let any = false;
  for (const [index, entry] of rows.entries()) {
    const grant = entry.grant.trim();
    const count = entry.count.trim();
    const windowSeconds = entry.windowSeconds.trim();
    if (grant === '' && count === '' && windowSeconds === '') continue;
    const at = (name) => ({ field: `rateCeilings row ${index + 1}: ${COLUMNS.find((column) => column.name === name).label}`, input: `rate-${entry.key}-${name}` });
    if (grant === '') return { problem: { ...at('grant'), message: 'is required: the grant the ceiling counts dispatches of' } };
    for (const [name, text] of [['count', count], ['windowSeconds', windowSeconds]]) {
      if (!/^\d+$/.test(text)) return { problem: { ...at(name), message: `must be a whole number, got "${text}"` } };
      if (name === 'windowSeconds' && Number(text) === 0) return { problem: { ...at(name), message: 'must be at least 1 second' } };
    }
    (value[grant] ??= []).push({ count: Number(count), windowSeconds: Number(windowSeconds) });
    any = true;
  }
  return { value: any ? value : undefined };
}

/** The rows, each with its three boxes and a remove button, and a button that adds a row. */
export function RateCeilingRows({ rows, onChange, problem }) {
  const set = (key, name, text) => onChange(rows.map((entry) => (entry.key === key ? { ...entry, [name]: text } : entry)));
  return html`<fieldset class="rate-rows">
    <legend>Rate ceilings: at most <em>limit</em> dispatches of a grant per <em>window</em> seconds</legend>
    ${rows.length === 0 ? html`<p class="muted small">None: dispatches of any grant are not limited by the quota.</p>` : null}
    ${rows.map(
      (entry, index) => html`<div class="rate-row" key=${entry.key}>
        ${COLUMNS.map((column) => {
          const id = `rate-${entry.key}-${column.name}`;
          return html`<div class=${`field${column.name === 'grant' ? ' grow' : ''}`}>
            <label for=${id}>${column.label}<span class="visually-hidden">, row ${index + 1}</span></label>
            <input id=${id} value=${entry[column.name]} placeholder=${column.hint}
              inputmode=${column.name === 'grant' ? undefined : 'numeric'}
              onInput=${(event) => set(entry.key, column.name, event.currentTarget.value)}
              aria-invalid=${problem?.input === id ? 'true' : undefined}
              aria-describedby=${problem?.input === id ? 'quota-problem' : undefined} />
          </div>`;
        })}
        <button type="button" class="secondary" aria-label=${`Remove rate ceiling row ${index + 1}`} onClick=${() => onChange(rows.filter((other) => other.key !== entry.key))}>Remove</button>
      </div>`,
    )}
    <button type="button" class="secondary" onClick=${() => onChange([...rows, row()])}>Add a rate ceiling</button>
  </fieldset>`;
}

/** `tool://x: 5 per 600 s; 100 per 86,400 s` for a confirmation, or `none`. */
export function describeRateCeilings(rateCeilings) {
  if (rateCeilings === undefined) return 'none';
  return Object.entries(rateCeilings)
    .map(([grant, ceilings]) => `${grant}: ${ceilings.map((ceiling) => `${ceiling.count} per ${ceiling.windowSeconds} s`).join(', ')}`)
    .join('; ');
}
