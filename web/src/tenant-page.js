import { useMemo, useState } from 'preact/hooks';

import { AlertsTable, alertsFor, ThresholdsForm } from './alert-thresholds.js';
import { seg } from './api.js';
import { EventList, eventTail } from './event-log.js';
import { count, duration, periodName, rateCeiling, tokens, utc } from './format.js';
import { Freshness } from './freshness.js';
import { html } from './html.js';
import { Meter } from './meter.js';
import { ModelCallsSection } from './model-calls.js';
import { usePoll } from './poll.js';
import { SpendChart } from './spend-chart.js';
import { HaltForm, LiftButton, QuotaEditor, ReleaseStrandedButton, RunActions } from './tenant-actions.js';

// Everything the tenant page shows, read in parallel through the /v1 API. The alerts and the events
// are read apart: a failure of either is shown in its section, and the rest of the page stands.
async function loadTenant(api, tenant, events) {
  const base = `v1/tenants/${seg(tenant)}`;
  const [usage, halts, lifted, runs, reservations, rates, attention, audit, verify, history, alerts, recent, calls] = await Promise.all([
    api.get(`${base}/usage`),
    api.get(`${base}/halts`),
    api.get(`${base}/halts?state=lifted&limit=20`),
    api.get(`${base}/runs?status=running,stranded,withheld&limit=200`),
    api.get(`${base}/reservations?limit=1000`),
    api.get(`${base}/rates`),
    api.get(`${base}/attention?limit=100`),
    api.get(`${base}/audit?limit=50`),
    api.get(`${base}/audit/verify`),
    api.get(`${base}/spend?periods=12`),
    api.get(`${base}/alerts`).catch((error) => ({ error })),
    events.read().catch((error) => ({ error })),
    api.get(`${base}/call-standings`).catch((error) => ({ error })),
  ]);
  return { usage, halts, lifted, runs, reservations, rates, attention, audit, verify, history, alerts, recent, calls };
}

/**
 * One tenant: its figures, alert thresholds, quota, spend history, runs, holds, rate windows,
 * model-call ceilings, halts, attention, recent events and audit log.
 */
export function TenantPage({ tenant, api, config, money }) {
  // The event log's cursor lives as long as the page: each refresh reads only the new events.
  const events = useMemo(() => eventTail(api, `v1/tenants/${seg(tenant)}/events`), [api, tenant]);
  const poll = usePoll(() => loadTenant(api, tenant, events), [api, tenant, events], config.refreshMs);
  const [message, setMessage] = useState(null);
  const data = poll.data;
  const acted = (text) => {
    setMessage(text);
    poll.reload();
  };

  return html`
    <p class="crumbs"><a href="#/">All tenants</a> / <span>${tenant}</span></p>
    <div class="page-head">
      <h1 tabindex="-1">Tenant <q>${tenant}</q></h1>
      <${Freshness} poll=${poll} />
    </div>
    ${message === null ? null : html`<p class="notice" role="status">${message}</p>`}
    ${poll.error?.status === 404 && data === undefined
      ? html`<p role="alert">This key does not cover tenant “${tenant}”, or the name is not a tenant name.</p>`
      : null}
    ${data === undefined
      ? null
      : html`
          <${ThisPeriod} usage=${data.usage} alerts=${data.alerts.error === undefined ? data.alerts : undefined} money=${money} />
          <${AlertsSection} tenant=${tenant} api=${api} data=${data} money=${money} config=${config} onActed=${acted} />
          <${HaltsSection} tenant=${tenant} api=${api} data=${data} onActed=${acted} />
          <${AttentionSection} attention=${data.attention} />
          <${Section} id="events" title="Recent events">
            <${EventList} tail=${data.recent} money=${money} caption=${`Events of ${tenant}`} />
          </${Section}>
          <${RunsSection} tenant=${tenant} api=${api} data=${data} money=${money} config=${config} onActed=${acted} />
          <${HistorySection} history=${data.history} money=${money} />
          <${RatesSection} rates=${data.rates} />
          <${Section} id="model-calls" title="Model-call ceilings">
            <${ModelCallsSection} standings=${data.calls} money=${money} />
          </${Section}>
          <${QuotaEditor} tenant=${tenant} api=${api} quota=${data.usage.quota} money=${money} config=${config} onActed=${acted} />
          <${AuditSection} audit=${data.audit} verify=${data.verify} />
        `}
  `;
}

function Section({ id, title, children }) {
  return html`<section class="card" aria-labelledby=${id}><h2 id=${id}>${title}</h2>${children}</section>`;
}

const runsOf = (n) => `${count(n)} run${n === 1 ? '' : 's'}`;

// The spend meters colour by the ceiling's alert thresholds (meter.js meterLevel), known from
// /alerts; `alerts` undefined (not read) falls back to the fixed 80 % and 100 %.
function ThisPeriod({ usage, alerts, money }) {
  const quota = usage.quota ?? {};
  const agents = usage.agents ?? [];
  return html`<${Section} id="this-period" title=${`This period: ${periodName(usage.period, quota.period)}`}>
    <div class="meters">
      <${Meter} label="Running runs" settled=${usage.running} ceiling=${quota.maxConcurrentRuns} show=${runsOf} />
      <${Meter} label="Tokens" settled=${usage.spent.tokens} held=${usage.reserved.tokens} ceiling=${quota.maxTokensPerPeriod} show=${tokens} alerts=${alertsFor(alerts, null, 'tokens')} />
      <${Meter} label="Money" settled=${usage.spent.minorUnits} held=${usage.reserved.minorUnits} ceiling=${quota.maxMinorUnitsPerPeriod} show=${money} alerts=${alertsFor(alerts, null, 'minorUnits')} />
    </div>
    ${agents.length === 0
      ? null
      : html`<h3>Agents with ceilings of their own</h3>
          ${agents.map(
            (agent) => html`<div class="meters agent-meters" role="group" aria-label=${`Agent ${agent.agent}`}>
              <h4>Agent <code>${agent.agent}</code></h4>
              <${Meter} label="Running runs" settled=${agent.running} ceiling=${agent.ceilings.maxConcurrentRuns} show=${runsOf} />
              <${Meter} label="Tokens" settled=${agent.spent.tokens} held=${agent.reserved.tokens} ceiling=${agent.ceilings.maxTokensPerPeriod} show=${tokens} alerts=${alertsFor(alerts, agent.agent, 'tokens')} />
              <${Meter} label="Money" settled=${agent.spent.minorUnits} held=${agent.reserved.minorUnits} ceiling=${agent.ceilings.maxMinorUnitsPerPeriod} show=${money} alerts=${alertsFor(alerts, agent.agent, 'minorUnits')} />
            </div>`,
          )}`}
    <p class="muted small">
      Settled spend, plus spend held for open runs. Money in ${money.unitName}.
      ${alerts === undefined
        ? ' Amber with a “warning” label from 80 % of a ceiling; red with “at ceiling” from 100 % (the alert thresholds could not be read).'
        : ' A spend bar is amber, labelled with the alert, once settled spend crosses one of its alert thresholds (see Alert thresholds); red with “at ceiling” once settled and held spend reach the ceiling.'}
    </p>
  </${Section}>`;
}

function AlertsSection({ tenant, api, data, money, config, onActed }) {
  return html`<${Section} id="alerts" title="Alert thresholds">
    ${data.alerts.error !== undefined
      ? html`<p class="error" role="alert">The alert thresholds could not be read: ${data.alerts.error.message}</p>`
      : html`<${AlertsTable} alerts=${data.alerts} money=${money} />`}
    <${ThresholdsForm} tenant=${tenant} api=${api} quota=${data.usage.quota} money=${money} config=${config} onActed=${onActed} />
  </${Section}>`;
}

function HaltsSection({ tenant, api, data, onActed }) {
  const standing = data.halts.halts;
  const lifted = data.lifted.lifted;
  return html`<${Section} id="halts" title="Halts">
    ${standing.length === 0
      ? html`<p>No halt stands.</p>`
      : html`<div class="table-wrap"><table>
          <caption>Standing halts</caption>
          <thead><tr><th scope="col">Scope</th><th scope="col">Reason</th><th scope="col">Thrown by</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
          <tbody>
            ${standing.map(
              (halt) => html`<tr>
                <td data-label="Scope"><code>${halt.scope}</code><div class="muted small">${halt.covers}${halt.reachesRunning ? '; reaches running work' : ''}</div></td>
                <td data-label="Reason" class="reason">${halt.reason}</td>
                <td data-label="Thrown by">${halt.by.actor} <span class="muted small">(${halt.by.basis})</span></td>
                <td data-label="Since">${utc(halt.atMs)}</td>
                <td data-label="Action"><${LiftButton} tenant=${tenant} api=${api} halt=${halt} onActed=${onActed} /></td>
              </tr>`,
            )}
          </tbody>
        </table></div>`}
    <${HaltForm} tenant=${tenant} api=${api} onActed=${onActed} />
    <details>
      <summary>Recently lifted halts (${lifted.length}${data.lifted.truncated ? '+' : ''})</summary>
      ${lifted.length === 0
        ? html`<p>None recorded.</p>`
        : html`<div class="table-wrap"><table>
            <thead><tr><th scope="col">Scope</th><th scope="col">Reason</th><th scope="col">Thrown</th><th scope="col">Lifted</th></tr></thead>
            <tbody>
              ${lifted.map(
                (row) => html`<tr>
                  <td data-label="Scope"><code>${row.scope}</code></td>
                  <td data-label="Reason" class="reason">${row.reason}</td>
                  <td data-label="Thrown">${utc(row.thrownAtMs)} by ${row.thrownBy.actor}</td>
                  <td data-label="Lifted">${utc(row.liftedAtMs)} by ${row.by.actor}</td>
                </tr>`,
              )}
            </tbody>
          </table></div>`}
    </details>
  </${Section}>`;
}

function AttentionSection({ attention }) {
  // One entry per run, with every reason it needs a person (a crashed run is stranded and unsettled).
  const items = attention.items;
  return html`<${Section} id="attention" title=${`Needs attention (${items.length}${attention.truncated ? '+' : ''})`}>
    ${items.length === 0
      ? html`<p>Nothing needs a person.</p>`
      : html`<ul class="attention">
          ${items.map(
            (item) => html`<li>
              <strong>${item.reasons.join(' + ')}</strong>${item.run === '' ? null : html` · run <code>${item.run}</code>`} · for ${duration(item.ageMs)}
              ${item.summaries.map((summary) => html`<div>${summary}</div>`)}
              <div class="muted">What ends it: ${item.remedy.text}</div>
            </li>`,
          )}
        </ul>`}
  </${Section}>`;
}

function RunsSection({ tenant, api, data, money, config, onActed }) {
  const holds = new Map(data.reservations.reservations.map((hold) => [hold.run, hold]));
  const runs = data.runs.runs;
  const heldRuns = data.reservations.reservations;
  const stranded = runs.filter((run) => run.status === 'stranded');
  return html`<${Section} id="runs" title="Running, stranded and withheld runs">
    ${stranded.length === 0 ? null : html`<${ReleaseStrandedButton} tenant=${tenant} api=${api} stranded=${stranded} holds=${holds} money=${money} truncated=${data.runs.truncated} onActed=${onActed} />`}
    ${runs.length === 0
      ? html`<p>No run is running, stranded or withheld.</p>`
      : html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Agent</th><th scope="col">Hold</th><th scope="col">Lease</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${runs.map((run) => {
              const hold = holds.get(run.run);
              return html`<tr>
                <td data-label="Run"><code>${run.run}</code><div class="muted small">pass ${run.lastEpoch}${run.chain ? ` · for ${run.chain.join(' → ')}` : ''}</div></td>
                <td data-label="Status"><span class=${`badge ${run.status === 'running' ? 'badge-ok' : 'badge-warn'}`}>${run.status}</span><div class="muted small">since ${utc(run.statusSinceMs)}</div></td>
                <td data-label="Agent">${run.agent === null ? html`<span class="muted">none</span>` : run.agent.name}</td>
                <td data-label="Hold">${hold === undefined ? html`<span class="muted">none</span>` : html`${tokens(hold.remaining.tokens)}, ${money(hold.remaining.minorUnits)} <span class="muted small">in ${hold.period}</span>`}</td>
                <td data-label="Lease">${run.leaseExpiresAtMs < Date.now() ? 'lapsed ' : 'until '}${utc(run.leaseExpiresAtMs)}</td>
                <td data-label="Actions"><${RunActions} tenant=${tenant} api=${api} run=${run} hold=${hold} money=${money} config=${config} onActed=${onActed} /></td>
              </tr>`;
            })}
          </tbody>
        </table></div>`}
    ${data.runs.truncated ? html`<p class="muted">Only the first 200 runs are shown.</p>` : null}
    <h3>Reservations (holds)</h3>
    ${heldRuns.length === 0
      ? html`<p>No spend is held.</p>`
      : html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Run</th><th scope="col">Period</th><th scope="col">Tokens held</th><th scope="col">Money held</th></tr></thead>
          <tbody>
            ${heldRuns.map(
              (hold) => html`<tr>
                <td data-label="Run"><code>${hold.run}</code></td>
                <td data-label="Period">${hold.period}</td>
                <td data-label="Tokens held">${tokens(hold.remaining.tokens)}</td>
                <td data-label="Money held" title=${money.exact(hold.remaining.minorUnits)}>${money(hold.remaining.minorUnits)}</td>
              </tr>`,
            )}
          </tbody>
        </table></div>`}
  </${Section}>`;
}

function HistorySection({ history, money }) {
  const periods = history.periods.map((row) => row.period);
  const quota = history.quota ?? {};
  return html`<${Section} id="history" title=${`Spend over the last ${periods.length} ${history.periodKind === 'daily' ? 'days' : 'months'} (UTC)`}>
    <div class="charts">
      <${SpendChart}
        title="Tokens per period"
        periods=${periods}
        settled=${history.periods.map((row) => row.spent.tokens)}
        held=${history.periods.map((row) => row.reserved.tokens)}
        ceiling=${quota.maxTokensPerPeriod}
        show=${tokens}
      />
      <${SpendChart}
        title=${`Money per period (${money.unitName})`}
        periods=${periods}
        settled=${history.periods.map((row) => row.spent.minorUnits)}
        held=${history.periods.map((row) => row.reserved.minorUnits)}
        ceiling=${quota.maxMinorUnitsPerPeriod}
        show=${money}
      />
    </div>
    <details>
      <summary>The same figures as a table</summary>
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Period</th><th scope="col">Tokens settled</th><th scope="col">Tokens held</th><th scope="col">Money settled</th><th scope="col">Money held</th></tr></thead>
        <tbody>
          ${history.periods.map(
            (row) => html`<tr>
              <th scope="row" data-label="Period">${periodName(row.period, history.periodKind)}</th>
              <td data-label="Tokens settled">${tokens(row.spent.tokens)}</td>
              <td data-label="Tokens held">${tokens(row.reserved.tokens)}</td>
              <td data-label="Money settled">${money(row.spent.minorUnits)}</td>
              <td data-label="Money held">${money(row.reserved.minorUnits)}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
    </details>
  </${Section}>`;
}

function RatesSection({ rates }) {
  return html`<${Section} id="rates" title="Rate ceilings">
    ${rates.windows.length === 0
      ? html`<p>The quota configures no rate ceiling. (Callers may still declare their own per dispatch.)</p>`
      : html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Grant</th><th scope="col">Ceiling</th><th scope="col">In the window now</th></tr></thead>
          <tbody>
            ${rates.windows.map(
              (window) => html`<tr>
                <td data-label="Grant"><code>${window.grant}</code></td>
                <td data-label="Ceiling">${rateCeiling(window.ceiling)}</td>
                <td data-label="In the window now">
                  ${window.counted === null
                    ? html`<span class="muted">cannot be counted (window outside 1 s … 31 days)</span>`
                    : html`${count(window.counted)} of ${count(window.ceiling.count)} dispatches${window.counted >= window.ceiling.count ? html` <strong class="badge badge-danger">full</strong>` : ''}`}
                </td>
              </tr>`,
            )}
          </tbody>
        </table></div>`}
    <p class="muted small">Counted at ${utc(rates.atMs)}.</p>
  </${Section}>`;
}

function AuditSection({ audit, verify }) {
  const chain = verify.tenants[0];
  return html`<${Section} id="audit" title="Audit log">
    ${chain === undefined
      ? html`<p class="muted">No audit row yet.</p>`
      : chain.ok
        ? html`<p class="verified">Hash chain verified: ${count(chain.rows)} row${chain.rows === 1 ? '' : 's'}, every hash matches.</p>`
        : html`<p class="error" role="alert">Hash chain does NOT verify: row ${chain.firstMismatch?.seq} (${chain.firstMismatch?.problem}): ${chain.firstMismatch?.message}</p>`}
    ${audit.rows.length === 0
      ? null
      : html`<div class="table-wrap"><table class="audit">
          <caption>Newest first${audit.truncated ? ' (the latest 50)' : ''}</caption>
          <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Subject</th><th scope="col">Detail</th></tr></thead>
          <tbody>
            ${audit.rows.map(
              (row) => html`<tr>
                <td data-label="#">${row.seq}</td>
                <td data-label="When">${utc(row.atMs)}</td>
                <td data-label="Who">${row.by.actor} <span class="muted small">(${row.by.basis})</span></td>
                <td data-label="Action"><code>${row.action}</code></td>
                <td data-label="Subject" class="reason">${row.subject}</td>
                <td data-label="Detail"><pre class="detail">${JSON.stringify(row.detail, null, 1)}</pre></td>
              </tr>`,
            )}
          </tbody>
        </table></div>`}
  </${Section}>`;
}
