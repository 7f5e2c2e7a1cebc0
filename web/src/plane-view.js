import { seg } from './api.js';
import { count, tokens, utc, utcClock } from './format.js';
import { EventList } from './event-log.js';
import { html } from './html.js';
import { Meter } from './meter.js';

/*
 * The plane at a glance, for an operator of every tenant: totals across the tenants of the
 * overview, the plane-wide ceilings (GET /v1/plane), refused admissions per minute per tenant
 * over the last hour (GET /v1/plane/refusals: this server instance's count since it started), and
 * the newest events of every tenant and of the plane (GET /v1/events, read with its cursor).
 */

const runs = (n) => `${count(n)} run${n === 1 ? '' : 's'}`;

/**
 * Reads what the plane view shows beyond the overview's rows: the plane-wide ceiling, the refusal
 * history, and, for tenants on daily periods, this month's days (their spend is booked per day).
 */
export async function loadPlane(api, rows, events) {
  const daily = rows.filter((row) => row.usage.period.length === 10);
  const [status, refusals, months, recent] = await Promise.all([
    api.get('v1/plane'),
    api.get('v1/plane/refusals'),
    Promise.all(daily.map((row) => api.get(`v1/tenants/${seg(row.tenant)}/spend?periods=${Number(row.usage.period.slice(8))}`))),
    events.read().catch((error) => ({ error })),
  ]);
  return { status, refusals, dailyMonths: months, recent };
}

// Settled and held figures summed over the tenants. "Today" can be told only for tenants on daily
// periods; "this month" sums monthly tenants' current period and daily tenants' days of this month.
function totals(rows, dailyMonths) {
  const sum = { running: 0, heldTokens: 0, heldMoney: 0, todayTokens: 0, todayMoney: 0, monthTokens: 0, monthMoney: 0, daily: 0, monthly: 0 };
  for (const { usage } of rows) {
    sum.running += usage.running;
    sum.heldTokens += usage.reserved.tokens;
    sum.heldMoney += usage.reserved.minorUnits;
    if (usage.period.length === 10) {
      sum.daily += 1;
      sum.todayTokens += usage.spent.tokens;
      sum.todayMoney += usage.spent.minorUnits;
    } else {
      sum.monthly += 1;
      sum.monthTokens += usage.spent.tokens;
      sum.monthMoney += usage.spent.minorUnits;
    }
  }
  for (const history of dailyMonths) {
    for (const period of history.periods) {
      const month = period.period.slice(0, 7);
      if (month !== history.periods.at(-1).period.slice(0, 7)) continue;
      sum.monthTokens += period.spent.tokens;
      sum.monthMoney += period.spent.minorUnits;
    }
  }
  return sum;
}

/** The plane view: totals, plane-wide ceilings and refusals per minute. */
export function PlaneView({ rows, plane, money }) {
  if (plane.error !== undefined) {
    return html`<section class="card plane" aria-labelledby="plane-title"><h2 id="plane-title">The plane: every tenant</h2>
      <p class="error" role="alert">The plane's figures could not be read: ${plane.error.message}</p></section>`;
  }
  const sum = totals(rows, plane.dailyMonths);
  const { status, refusals } = plane;
  return html`<section class="card plane" aria-labelledby="plane-title">
    <h2 id="plane-title">The plane: every tenant</h2>
    ${status.halt === null || status.halt === undefined ? null : html`<${PlaneHalt} halt=${status.halt} />`}
    <dl class="totals">
      <div><dt>Running runs</dt><dd>${runs(sum.running)}</dd></div>
      <div><dt>Held by open runs</dt><dd>${money(sum.heldMoney)}<span class="muted small"> · ${tokens(sum.heldTokens)}</span></dd></div>
      <div>
        <dt>Settled today (UTC)</dt>
        <dd>${money(sum.todayMoney)}<span class="muted small"> · ${tokens(sum.todayTokens)}</span></dd>
        <dd class="muted small">${sum.monthly === 0 ? 'every tenant' : `the ${count(sum.daily)} tenant${sum.daily === 1 ? '' : 's'} on daily periods; ${count(sum.monthly)} on monthly periods book by month only`}</dd>
      </div>
      <div>
        <dt>Settled this month (UTC)</dt>
        <dd>${money(sum.monthMoney)}<span class="muted small"> · ${tokens(sum.monthTokens)}</span></dd>
        <dd class="muted small">every tenant shown below</dd>
      </div>
    </dl>
    <h3>Plane-wide ceilings</h3>
    ${status.ceiling === null
      ? html`<p>No plane-wide ceiling is set: only each tenant's own ceilings bound it.</p>`
      : html`<div class="meters">
          <${Meter} label="Runs across every tenant" settled=${status.running ?? 0} ceiling=${status.limit ?? undefined} show=${runs} />
          ${status.agents.map(
            (agent) => html`<${Meter} label=${`Agent ${agent.agent}, across every tenant`} settled=${agent.running} ceiling=${agent.limit ?? undefined} show=${runs} />`,
          )}
        </div>
        ${status.ceiling.weights === undefined
          ? null
          : html`<p class="small">Weights when waiting admissions share plane slots: ${Object.entries(status.ceiling.weights).map(([tenant, weight]) => `${tenant} ${weight}`).join(', ')}.</p>`}`}
    <${Refusals} refusals=${refusals} />
    <h3 id="plane-events-title">Recent events</h3>
    <${EventList} tail=${plane.recent} money=${money} withTenant=${true} caption="Events of every tenant and of the plane" />
  </section>`;
}

// A standing plane-wide halt stops every tenant: said first, with what it reaches and how it ends.
function PlaneHalt({ halt }) {
  return html`<p class="error plane-halt" role="status">
    <strong>Plane-wide halt</strong> since ${utc(halt.atMs)}, by ${halt.by.actor}: ${halt.reason}. Every tenant's admissions are refused
    (Halted, scope plane)${halt.reachesRunning ? ', and running runs answer Withheld at their next heartbeat or dispatch' : '; running runs continue'}.
    It ends with <code>quotaplane lift plane</code> (POST /v1/plane/halt/lift).
  </p>`;
}

function Refusals({ refusals }) {
  const rows = [...refusals.tenants.map((row) => ({ name: row.tenant, perMinute: row.perMinute, total: row.total, other: false }))];
  const otherTotal = refusals.other.reduce((a, b) => a + b, 0);
  if (otherTotal > 0) rows.push({ name: `every other tenant (beyond the busiest ${refusals.tenantBound})`, perMinute: refusals.other, total: otherTotal, other: true });
  const peak = Math.max(1, ...rows.flatMap((row) => row.perMinute));
  const first = refusals.minutes[0];
  return html`<h3 id="refusals-title">Refused admissions per minute, last hour</h3>
    <p class="muted small" id="refusals-source">
      Counted by this server instance since it started at ${utc(refusals.sinceMs)}, in memory only: other instances count
      their own, and a restart starts again from zero.${refusals.sinceMs > first ? ' Minutes before the start show 0 because nothing was counted then.' : ''}
    </p>
    ${rows.length === 0
      ? html`<p>No admission was refused in the last hour (on this instance).</p>`
      : html`<div class="table-wrap"><table class="refusals" aria-describedby="refusals-source">
          <thead><tr><th scope="col">Tenant</th><th scope="col">Last hour</th><th scope="col">Last 5 min</th><th scope="col">Busiest minute</th><th scope="col">Per minute, ${utcClock(first).slice(0, 5)} to now</th></tr></thead>
          <tbody>
            ${rows.map((row) => {
              const busiest = Math.max(...row.perMinute);
              const at = row.perMinute.indexOf(busiest);
              return html`<tr>
                <th scope="row" data-label="Tenant">${row.other ? html`<span class="muted">${row.name}</span>` : html`<a href=${`#/tenant/${seg(row.name)}`}>${row.name}</a>`}</th>
                <td data-label="Last hour">${count(row.total)}</td>
                <td data-label="Last 5 min">${count(row.perMinute.slice(-5).reduce((a, b) => a + b, 0))}</td>
                <td data-label="Busiest minute">${count(busiest)} at ${utcClock(refusals.minutes[at]).slice(0, 5)} UTC</td>
                <td data-label="Per minute"><${Spark} values=${row.perMinute} peak=${peak} /></td>
              </tr>`;
            })}
          </tbody>
        </table></div>`}`;
}

// Sixty thin bars, one per minute, scaled to the busiest minute of any row; decoration only (the
// cells beside it carry the figures).
function Spark({ values, peak }) {
  const height = 24;
  return html`<svg class="spark" viewBox=${`0 0 ${values.length * 3} ${height}`} preserveAspectRatio="none" aria-hidden="true" focusable="false">
    ${values.map((value, index) => {
      const h = value === 0 ? 0 : Math.max(1.5, (value / peak) * height);
      return html`<rect x=${index * 3} y=${height - h} width="2" height=${h}></rect>`;
    })}
  </svg>`;
}
