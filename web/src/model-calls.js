import { count, tokens } from './format.js';
import { html } from './html.js';
import { Meter } from './meter.js';

// The tenant's model-call ceilings as they stand (GET …/call-standings, docs/concepts/model-calls.md):
// each subject (the tenant, an agent, a model, a group, an end user) with one bar per ceiling,
// booked usage solid and the worst cases of calls in flight striped.

const SUBJECT_KIND = { agent: 'Agent', model: 'Model', group: 'Model group', user: 'End user' };

/** "Tenant", or "Model gpt-4.1": a subject as an operator reads it. */
export function subjectName(subject) {
  if (subject === 'tenant') return 'Whole tenant';
  const colon = subject.indexOf(':');
  return `${SUBJECT_KIND[subject.slice(0, colon)] ?? subject.slice(0, colon)} ${subject.slice(colon + 1)}`;
}

/** "per 1 min (sliding)" or "per UTC day": where a ceiling counts. */
export function ceilingSpan(ceiling) {
  const seconds = ceiling.windowSeconds;
  if (seconds !== undefined) {
    if (seconds === 86_400) return 'per day (sliding)';
    if (seconds % 3600 === 0) return `per ${seconds / 3600} h (sliding)`;
    if (seconds % 60 === 0) return `per ${seconds / 60} min (sliding)`;
    return `per ${seconds} s (sliding)`;
  }
  return ceiling.period === 'monthly' ? 'per UTC month' : 'per UTC day';
}

function showFor(unit, money) {
  if (unit === 'tokens') return tokens;
  if (unit === 'minorUnits') return money;
  return (n) => `${count(n)} request${n === 1 ? '' : 's'}`;
}

/** The model-call section of the tenant page; `standings` is the route's answer or `{ error }`. */
export function ModelCallsSection({ standings, money }) {
  if (standings.error !== undefined) {
    return html`<p class="error" role="alert">The model-call ceilings could not be read: ${standings.error.message}</p>`;
  }
  const subjects = standings.standings.filter((subject) => subject.ceilings.length > 0);
  if (subjects.length === 0) {
    return html`<p>No model-call ceiling is set. Set them with <code>quotaplane calls set</code> or <code>PUT …/call-ceilings</code>.</p>`;
  }
  return html`${subjects.map(
    (subject) => html`<div class="meters" role="group" aria-label=${subjectName(subject.subject)}>
      <h3>${subjectName(subject.subject)}</h3>
      ${subject.ceilings.map(
        (entry) => html`<${Meter}
          label=${`${entry.ceiling.unit === 'minorUnits' ? 'Money' : entry.ceiling.unit === 'tokens' ? 'Tokens' : 'Requests'} ${ceilingSpan(entry.ceiling)}`}
          settled=${entry.counted}
          held=${entry.held}
          settledWord="booked"
          heldWord="in flight"
          ceiling=${entry.ceiling.limit}
          show=${showFor(entry.ceiling.unit, money)}
        />`,
      )}
    </div>`,
  )}
  <p class="muted small">Booked usage in each window or period, plus the worst cases of calls still in flight.</p>`;
}
