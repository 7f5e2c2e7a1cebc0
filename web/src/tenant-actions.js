import { useState } from 'preact/hooks';

import { seg } from './api.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { parseMoney, tokens, utc } from './format.js';
import { html } from './html.js';
import { describeRateCeilings, RateCeilingRows, rateCeilingsOf, rowsOf } from './rate-ceilings-form.js';

/*
 * The operator's acts: throw and lift halts, release or settle a run, replace
 * the quota. Each goes through a confirmation dialog and then one /v1 call; the server records it
 * in the audit log under the key's name (basis `authenticated`), as for the CLI and the API.
 */

const SCOPE_FORMS = [
  { value: 'tenant', label: 'the whole tenant', needs: null },
  { value: 'agent', label: 'one agent (by name)', needs: 'Agent name' },
  { value: 'revision', label: 'one agent revision (manifest SHA-256)', needs: 'Revision digest (64 hex digits)' },
  { value: 'subject', label: 'one subject (a principal in delegation chains)', needs: 'Principal' },
];

/** What a thrown halt's answer says of running work (docs/design/rules.md#c45). */
export function runningText(answer) {
  const runs = `${answer.running} running run${answer.running === 1 ? '' : 's'}`;
  return answer.reachesRunning
    ? `It reaches ${runs}: each answers Withheld at its next heartbeat or dispatch, and pauses.`
    : `${runs} in its scope continue${answer.running === 1 ? 's' : ''}.`;
}

/** Throwing a halt on any scope form with a required reason; it reaches running work when asked. */
export function HaltForm({ tenant, api, onActed }) {
  const [form, setForm] = useState('tenant');
  const [target, setTarget] = useState('');
  const [reason, setReason] = useState('');
  const [reachesRunning, setReachesRunning] = useState(false);
  const [problem, setProblem] = useState(null);
  const [confirming, setConfirming] = useState(false);
  const shape = SCOPE_FORMS.find((option) => option.value === form);
  const scope = form === 'tenant' ? 'tenant' : `${form}:${target.trim()}`;
  // A subject halt always reaches running work (docs/design/rules.md#l47); the others when asked (#c44).
  const reaches = form === 'subject' || reachesRunning;

  const review = (event) => {
    event.preventDefault();
    if (shape.needs !== null && target.trim() === '') return setProblem({ field: 'halt-target', text: `${shape.needs} is required for this scope.` });
    if (reason.trim() === '') return setProblem({ field: 'halt-reason', text: 'A reason is required: say why, for whoever lifts it.' });
    setProblem(null);
    setConfirming(true);
  };

  return html`<form class="act" onSubmit=${review} novalidate aria-labelledby="throw-halt-title">
    <h3 id="throw-halt-title">Throw a halt</h3>
    <div class="row">
      <div class="field">
        <label for="halt-form">Scope</label>
        <select id="halt-form" value=${form} onChange=${(event) => setForm(event.currentTarget.value)}>
          ${SCOPE_FORMS.map((option) => html`<option value=${option.value}>${option.label}</option>`)}
        </select>
      </div>
      ${shape.needs === null
        ? null
        : html`<div class="field grow">
            <label for="halt-target">${shape.needs}</label>
            <input id="halt-target" value=${target} onInput=${(event) => setTarget(event.currentTarget.value)}
              aria-invalid=${problem?.field === 'halt-target' ? 'true' : undefined} aria-describedby=${problem?.field === 'halt-target' ? 'halt-problem' : undefined} />
          </div>`}
    </div>
    <div class="field">
      <label for="halt-reason">Reason (required)</label>
      <textarea id="halt-reason" rows="2" maxlength="2000" value=${reason} onInput=${(event) => setReason(event.currentTarget.value)}
        aria-invalid=${problem?.field === 'halt-reason' ? 'true' : undefined} aria-describedby=${problem?.field === 'halt-reason' ? 'halt-problem' : undefined}></textarea>
    </div>
    <div class="field">
      <label for="halt-reaches-running">
        <input id="halt-reaches-running" type="checkbox" checked=${reaches} disabled=${form === 'subject'}
          onChange=${(event) => setReachesRunning(event.currentTarget.checked)} />
        Reaches running work
      </label>
    </div>
    ${problem === null ? null : html`<p id="halt-problem" class="error" role="alert">${problem.text}</p>`}
    <button type="submit" class="danger">Throw halt…</button>
    ${confirming
      ? html`<${ConfirmDialog}
          title="Throw this halt?"
          confirmLabel="Throw halt"
          danger=${true}
          onConfirm=${async () => {
            const body = form !== 'subject' && reachesRunning ? { scope, reason, reachesRunning: true } : { scope, reason };
            const answer = await api.post(`v1/tenants/${seg(tenant)}/halts`, body);
            onActed(`Halt on ${answer.scope} thrown; it stops ${answer.reach}. ${runningText(answer)}`);
            setTarget('');
            setReason('');
            setReachesRunning(false);
          }}
          onClose=${() => setConfirming(false)}
        >
          <dl class="facts">
            <dt>Tenant</dt><dd>${tenant}</dd>
            <dt>Scope</dt><dd><code>${scope}</code></dd>
            <dt>Reason</dt><dd class="reason">${reason}</dd>
          </dl>
          <p>${form === 'subject'
            ? 'A subject halt stops new admissions and reaches running work: its heartbeats and dispatches answer Withheld.'
            : reaches
              ? 'It stops new admissions in its scope and reaches running work: the running runs it covers answer Withheld at their next heartbeat or dispatch, and pause.'
              : 'It stops new admissions in its scope; running work continues.'} It is recorded in the audit log under your key's name.</p>
        </${ConfirmDialog}>`
      : null}
  </form>`;
}

/** Lifting a standing halt, with the halt shown first. */
export function LiftButton({ tenant, api, halt, onActed }) {
  const [confirming, setConfirming] = useState(false);
  return html`<button type="button" class="secondary" onClick=${() => setConfirming(true)} aria-label=${`Lift halt on ${halt.scope}`}>Lift…</button>
    ${confirming
      ? html`<${ConfirmDialog}
          title="Lift this halt?"
          confirmLabel="Lift halt"
          onConfirm=${async () => {
            const answer = await api.post(`v1/tenants/${seg(tenant)}/halts/lift`, { scope: halt.scope });
            onActed(
              answer.removed
                ? `Halt on ${halt.scope} lifted.`
                : answer.wasStanding
                  ? `The halt on ${halt.scope} changed while lifting (re-thrown or lifted by someone else); see the audit log.`
                  : `No halt stood on ${halt.scope} any more.`,
            );
          }}
          onClose=${() => setConfirming(false)}
        >
          <p>This halt stands now:</p>
          <dl class="facts">
            <dt>Scope</dt><dd><code>${halt.scope}</code> (${halt.covers})</dd>
            <dt>Reason</dt><dd class="reason">${halt.reason}</dd>
            <dt>Thrown by</dt><dd>${halt.by.actor} (${halt.by.basis}) at ${utc(halt.atMs)}</dd>
          </dl>
          <p>Lifting is recorded in the audit log under your key's name before the halt is removed.</p>
        </${ConfirmDialog}>`
      : null}`;
}

/** Release or settle one run (typically a stranded one). `config` says the currency money is typed in. */
export function RunActions({ tenant, api, run, hold, money, config, onActed }) {
  const [dialog, setDialog] = useState(null);
  const [spend, setSpend] = useState({ tokens: '', minorUnits: '', concludes: true });
  const runPath = `v1/tenants/${seg(tenant)}/runs/${seg(run.run)}`;
  return html`<div class="buttons">
    <button type="button" class="secondary" onClick=${() => setDialog('settle')} aria-label=${`Settle run ${run.run}`}>Settle…</button>
    <button type="button" class="secondary" onClick=${() => setDialog('release')} aria-label=${`Release run ${run.run}`}>Release…</button>
    ${dialog === 'release'
      ? html`<${ConfirmDialog}
          title=${`Release run ${run.run}?`}
          confirmLabel="Release run"
          danger=${true}
          onConfirm=${async () => {
            const answer = await api.post(`${runPath}/release`, {});
            onActed(answer.outcome === 'released' ? `Run ${run.run} released.` : `Run ${run.run} was already closed.`);
          }}
          onClose=${() => setDialog(null)}
        >
          <p>Its slot${hold ? ` and its hold (${tokens(hold.remaining.tokens)}, ${money(hold.remaining.minorUnits)})` : ''} are given back and the run is closed as released, without settling any spend. Use this when the run did nothing billable, or its spend is unknown and will not be settled. Recorded in the audit log under your key's name.</p>
        </${ConfirmDialog}>`
      : null}
    ${dialog === 'settle'
      ? html`<${ConfirmDialog}
          title=${`Settle pass ${run.lastEpoch} of run ${run.run}?`}
          confirmLabel="Settle"
          onConfirm=${async () => {
            // Money is typed in currency units and sent as exact minor units; a bad amount names
            // the field here, a missing one is left for the API to name.
            const minorUnits = moneyField(spend.minorUnits, config, 'spend.minorUnits');
            const body = {
              epoch: run.lastEpoch,
              spend: { tokens: numberOrText(spend.tokens), minorUnits },
              concludes: spend.concludes,
            };
            const answer = await api.post(`${runPath}/settle`, body);
            onActed(`Run ${run.run} pass ${run.lastEpoch}: ${answer.outcome}.`);
          }}
          onClose=${() => setDialog(null)}
        >
          <p>Record the real spend of pass ${run.lastEpoch}; the rest of its hold is given back${spend.concludes ? ' and the run concludes' : ''}. Recorded in the audit log under your key's name.</p>
          <div class="field"><label for="settle-tokens">Tokens spent</label><input id="settle-tokens" inputmode="numeric" value=${spend.tokens} onInput=${(event) => setSpend({ ...spend, tokens: event.currentTarget.value })} /></div>
          <div class="field"><label for="settle-minor">Money spent (${config.currency}, e.g. 0.25)</label><input id="settle-minor" inputmode="decimal" value=${spend.minorUnits} onInput=${(event) => setSpend({ ...spend, minorUnits: event.currentTarget.value })} /></div>
          <div class="check"><input id="settle-concludes" type="checkbox" checked=${spend.concludes} onChange=${(event) => setSpend({ ...spend, concludes: event.currentTarget.checked })} /><label for="settle-concludes">This concludes the run</label></div>
        </${ConfirmDialog}>`
      : null}
  </div>`;
}

/**
 * Releases every stranded run the page lists, in one act: one confirmation says how many and what
 * they hold, then one call (`POST …/runs/release-stranded` with exactly those runs) releases each as
 * a single release would, audited one by one. The answer is shown per run: released, skipped (no
 * longer stranded) or failed; a run is never said to be released unless the server said so.
 */
export function ReleaseStrandedButton({ tenant, api, stranded, holds, money, truncated = false, onActed }) {
  const [confirming, setConfirming] = useState(false);
  const [report, setReport] = useState(null);
  const held = stranded.map((run) => holds.get(run.run)).filter((hold) => hold !== undefined);
  const heldTokens = held.reduce((sum, hold) => sum + hold.remaining.tokens, 0);
  const heldMoney = held.reduce((sum, hold) => sum + hold.remaining.minorUnits, 0);
  const n = stranded.length;
  return html`<div class="bulk">
    <button type="button" class="danger" onClick=${() => setConfirming(true)}>${truncated ? `Release the ${n} stranded run${n === 1 ? '' : 's'} shown…` : n === 1 ? 'Release the stranded run…' : `Release all ${n} stranded runs…`}</button>
    ${truncated ? html`<p class="muted small">More runs stand than this page lists; release the rest afterwards, or with <code>quotaplane release --stranded --tenant ${tenant}</code>.</p>` : null}
    ${report === null
      ? null
      : html`<div class=${report.failed > 0 ? 'error' : 'notice'} role=${report.failed > 0 ? 'alert' : 'status'}>
          <p>Released ${report.released} of ${report.results.length} stranded run${report.results.length === 1 ? '' : 's'}${report.failed > 0 ? `; ${report.failed} failed and still hold what they held` : ''}${report.skipped > 0 ? `; ${report.skipped} skipped` : ''}.</p>
          ${report.released === report.results.length
            ? null
            : html`<ul class="plain small">
                ${report.results
                  .filter((result) => result.result !== 'released')
                  .map((result) => html`<li><code>${result.run}</code>: ${result.result === 'failed' ? `not released: ${result.error.code}: ${result.error.message}` : result.result === 'skipped' ? `skipped: ${result.reason}` : 'closed already; nothing written'}</li>`)}
              </ul>`}
        </div>`}
    ${confirming
      ? html`<${ConfirmDialog}
          title=${n === 1 ? 'Release the stranded run?' : `Release all ${n} stranded runs?`}
          confirmLabel=${`Release ${n} run${n === 1 ? '' : 's'}`}
          danger=${true}
          onConfirm=${async () => {
            const answer = await api.post(`v1/tenants/${seg(tenant)}/runs/release-stranded`, { runs: stranded.map((run) => run.run) });
            setReport(answer);
            const failed = answer.results.filter((result) => result.result === 'failed');
            onActed(
              `Released ${answer.released} of ${answer.results.length} stranded runs of ${tenant}.` +
                failed.map((result) => ` Not released: ${result.run} (${result.error.code}: ${result.error.message}).`).join(''),
            );
          }}
          onClose=${() => setConfirming(false)}
        >
          <p>
            ${n} stranded run${n === 1 ? '' : 's'} of <q>${tenant}</q> hold${n === 1 ? 's' : ''} ${held.length === 0 ? 'no spend' : html`<strong>${tokens(heldTokens)}</strong> and <strong>${money(heldMoney)}</strong>`} between them.
            Each is released as a single release is: its slot and hold given back, closed without settling spend, and
            recorded in the audit log under your key's name. A run no longer stranded by then is skipped.
          </p>
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">Run</th><th scope="col">Holds</th></tr></thead>
            <tbody>
              ${stranded.map((run) => {
                const hold = holds.get(run.run);
                return html`<tr><td data-label="Run"><code>${run.run}</code></td><td data-label="Holds">${hold === undefined ? 'nothing' : `${tokens(hold.remaining.tokens)}, ${money(hold.remaining.minorUnits)}`}</td></tr>`;
              })}
            </tbody>
          </table></div>
        </${ConfirmDialog}>`
      : null}
  </div>`;
}

// A field as the API should judge it: blank → 0 is never assumed; a number when the text is one,
// else the text itself, so the server's validation names the field and says what is wrong.
function numberOrText(text) {
  const trimmed = String(text).trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

// Money typed in currency units, as an exact integer of minor units (format.js parseMoney); a
// mistake is thrown as an ApiError-like value naming `field`, shown as the API's own would be.
function moneyField(text, config, field) {
  try {
    return parseMoney(text, config, field);
  } catch (problem) {
    throw Object.assign(new Error(problem.message), { field: problem.field });
  }
}

// Quota members the quota form does not edit: agent ceilings and alert thresholds (the alert
// thresholds have their own form, alert-thresholds.js).
const KEPT_MEMBERS = ['agents', 'alertThresholds'];

const QUOTA_FIELDS = [
  { name: 'maxConcurrentRuns', label: 'Concurrent runs ceiling', unit: 'runs' },
  { name: 'maxTokensPerPeriod', label: 'Tokens per period ceiling', unit: 'tokens' },
  { name: 'maxMinorUnitsPerPeriod', label: 'Money per period ceiling', unit: 'currency', money: true },
];

/**
 * The quota: shown, editable, with the whole new quota shown before it replaces the old one, and
 * the validation message naming the field (the form's own, or the API's when it refuses). Money is
 * typed in currency units (`config.currency`) and sent as exact minor units; rate ceilings are rows.
 */
export function QuotaEditor({ tenant, api, quota, money, config, onActed }) {
  const [editing, setEditing] = useState(null);
  const [confirming, setConfirming] = useState(null);
  const [problem, setProblem] = useState(null);
  const current = quota ?? { period: 'monthly' };

  const start = () => {
    setProblem(null);
    setEditing({
      maxConcurrentRuns: current.maxConcurrentRuns?.toString() ?? '',
      maxTokensPerPeriod: current.maxTokensPerPeriod?.toString() ?? '',
      maxMinorUnitsPerPeriod: current.maxMinorUnitsPerPeriod === undefined ? '' : money.input(current.maxMinorUnitsPerPeriod),
      period: current.period,
      rates: rowsOf(current.rateCeilings),
    });
  };

  // The quota the form says, or a problem naming the field.
  const proposed = () => {
    const next = { period: editing.period };
    for (const field of QUOTA_FIELDS) {
      let value;
      if (field.money) {
        try {
          value = parseMoney(editing[field.name], config, field.name);
        } catch (failure) {
          return { problem: { field: field.name, input: `quota-${field.name}`, message: failure.message } };
        }
      } else value = numberOrText(editing[field.name]);
      if (value !== undefined) next[field.name] = value;
    }
    const rates = rateCeilingsOf(editing.rates);
    if (rates.problem !== undefined) return { problem: rates.problem };
    if (rates.value !== undefined) next.rateCeilings = rates.value;
    // What this form does not edit is sent as it stands, so replacing the quota keeps it.
    for (const kept of KEPT_MEMBERS) if (current[kept] !== undefined) next[kept] = current[kept];
    return { quota: next };
  };

  const review = (event) => {
    event.preventDefault();
    const answer = proposed();
    if (answer.problem !== undefined) return setProblem(answer.problem);
    setProblem(null);
    setConfirming(answer.quota);
  };

  const describeCeiling = (name, value) => {
    if (value === undefined) return 'no ceiling (unlimited)';
    if (typeof value !== 'number') return String(value);
    if (name === 'maxTokensPerPeriod') return tokens(value);
    if (name === 'maxMinorUnitsPerPeriod') return `${money(value)} (${money.exact(value)})`;
    return `${value} run${value === 1 ? '' : 's'}`;
  };
  const invalid = (id) => (problem?.input === id ? 'true' : undefined);

  return html`<section class="card" aria-labelledby="quota-title">
    <h2 id="quota-title">Quota</h2>
    ${quota === null ? html`<p>No quota was set: no ceilings, monthly periods.</p>` : null}
    <dl class="facts">
      ${QUOTA_FIELDS.map((field) => html`<dt>${field.label}</dt><dd>${describeCeiling(field.name, current[field.name])}</dd>`)}
      <dt>Billing period</dt><dd>${current.period} (UTC)</dd>
      <dt>Rate ceilings</dt><dd>${current.rateCeilings === undefined ? 'none configured' : describeRateCeilings(current.rateCeilings)}</dd>
    </dl>
    ${editing === null
      ? html`<button type="button" onClick=${start}>Edit quota…</button>`
      : html`<form class="act" onSubmit=${review} novalidate aria-labelledby="quota-edit-title">
          <h3 id="quota-edit-title">Edit the quota</h3>
          <p class="muted small">Empty means no ceiling (unlimited); 0 allows nothing. The whole quota is replaced; agent ceilings and alert thresholds are kept as they are.</p>
          ${QUOTA_FIELDS.map(
            (field) => html`<div class="field">
              <label for=${`quota-${field.name}`}>${field.label} (${field.money ? `${config.currency}, e.g. 25.00` : field.unit})</label>
              <input id=${`quota-${field.name}`} inputmode=${field.money ? 'decimal' : 'numeric'} value=${editing[field.name]}
                onInput=${(event) => setEditing({ ...editing, [field.name]: event.currentTarget.value })}
                aria-invalid=${invalid(`quota-${field.name}`) ?? (problem?.field === field.name ? 'true' : undefined)}
                aria-describedby=${problem?.field === field.name ? 'quota-problem' : undefined} />
            </div>`,
          )}
          <div class="field">
            <label for="quota-period">Billing period</label>
            <select id="quota-period" value=${editing.period} onChange=${(event) => setEditing({ ...editing, period: event.currentTarget.value })}>
              <option value="monthly">monthly (UTC calendar month)</option>
              <option value="daily">daily (UTC calendar day)</option>
            </select>
          </div>
          <${RateCeilingRows} rows=${editing.rates} problem=${problem} onChange=${(rates) => {
            setEditing({ ...editing, rates });
            // A row added or removed renumbers the rows: a problem naming one is no longer true.
            if (problem?.input?.startsWith('rate-')) setProblem(null);
          }} />
          ${problem === null ? null : html`<p id="quota-problem" class="error" role="alert"><strong>${problem.field}</strong> ${problem.message}</p>`}
          <div class="buttons">
            <button type="submit">Review the new quota…</button>
            <button type="button" class="secondary" onClick=${() => setEditing(null)}>Cancel</button>
          </div>
        </form>`}
    ${confirming !== null
      ? html`<${ConfirmDialog}
          title="Replace the quota?"
          confirmLabel="Replace quota"
          onConfirm=${async () => {
            try {
              await api.put(`v1/tenants/${seg(tenant)}/quota`, confirming);
            } catch (error) {
              // Validation refusals go back to the form, next to the field they name.
              if (error.status === 400) {
                const field = error.field ?? 'quota';
                setProblem({ field, input: field.startsWith('rateCeilings') ? undefined : `quota-${field}`, message: error.message });
                return;
              }
              throw error;
            }
            setEditing(null);
            onActed('Quota replaced; it applies to the next admission.');
          }}
          onClose=${() => setConfirming(null)}
        >
          <p>The whole quota of <q>${tenant}</q> is replaced by this one (recorded in the audit log under your key's name):</p>
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">Setting</th><th scope="col">Now</th><th scope="col">After</th></tr></thead>
            <tbody>
              ${QUOTA_FIELDS.map(
                (field) => html`<tr>
                  <th scope="row">${field.label}</th>
                  <td>${describeCeiling(field.name, current[field.name])}</td>
                  <td>${describeCeiling(field.name, confirming[field.name])}</td>
                </tr>`,
              )}
              <tr><th scope="row">Billing period</th><td>${current.period}</td><td>${confirming.period}</td></tr>
              <tr><th scope="row">Rate ceilings</th><td>${describeRateCeilings(current.rateCeilings)}</td><td>${describeRateCeilings(confirming.rateCeilings)}</td></tr>
            </tbody>
          </table></div>
          <p class="small">Sent as:</p>
          <pre class="detail">${JSON.stringify(confirming, null, 2)}</pre>
        </${ConfirmDialog}>`
      : null}
  </section>`;
}
