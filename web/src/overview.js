import { useMemo, useState } from 'preact/hooks';

import { seg } from './api.js';
import { eventTail } from './event-log.js';
import { count, periodName, tokens } from './format.js';
import { Freshness } from './freshness.js';
import { html } from './html.js';
import { closeness, DANGER_THRESHOLDS, Meter } from './meter.js';
import { loadPlane, PlaneView } from './plane-view.js';
import { usePoll } from './poll.js';

const PAGE_SIZE = 25;

// Every tenant the key covers, with its figures this period, standing halts and attention items.
async function loadOverview(api, who, events) {
  let tenants = (await api.get('v1/tenants')).tenants;
  // An operator of one tenant sees that tenant even before it has a quota, a run or a halt.
  if (who.tenant !== '*' && !tenants.includes(who.tenant)) tenants = [who.tenant];
  const attention = await api.get('v1/attention?limit=1000');
  const attentionCount = new Map();
  for (const item of attention.items) attentionCount.set(item.tenant, (attentionCount.get(item.tenant) ?? 0) + 1);
  const rows = await Promise.all(
    tenants.map(async (tenant) => {
      const [usage, halts] = await Promise.all([api.get(`v1/tenants/${seg(tenant)}/usage`), api.get(`v1/tenants/${seg(tenant)}/halts`)]);
      return { tenant, usage, halts: halts.halts, attention: attentionCount.get(tenant) ?? 0, closeness: closeness(usage) };
    }),
  );
  // The plane view is for operators of every tenant (the plane routes answer no one else).
  const plane = who.tenant === '*' ? await loadPlane(api, rows, events).catch((error) => ({ error })) : null;
  return { rows, attentionTruncated: attention.truncated, plane };
}

const SORTS = {
  closeness: { label: 'closest to a ceiling first', compare: (a, b) => b.closeness - a.closeness || byName(a, b) },
  attention: { label: 'most attention items first', compare: (a, b) => b.attention - a.attention || b.halts.length - a.halts.length || byName(a, b) },
  name: { label: 'tenant name, A to Z', compare: (a, b) => byName(a, b) },
};

function byName(a, b) {
  return a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0;
}

/** Every tenant at a glance: paged, searchable, sortable by how close each is to a ceiling. */
export function Overview({ api, who, config, money }) {
  // The plane's event log is read with a cursor kept while the page stands: each refresh reads only new events.
  const events = useMemo(() => eventTail(api, 'v1/events'), [api]);
  const poll = usePoll(() => loadOverview(api, who, events), [api, who, events], config.refreshMs);
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState('closeness');
  const [page, setPage] = useState(0);

  const rows = poll.data?.rows ?? [];
  const needle = search.trim().toLowerCase();
  const shown = rows.filter((row) => needle === '' || row.tenant.toLowerCase().includes(needle)).sort(SORTS[sort].compare);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const slice = shown.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);

  return html`
    <div class="page-head">
      <h1 tabindex="-1">All tenants</h1>
      <${Freshness} poll=${poll} />
    </div>
    ${poll.data?.plane ? html`<${PlaneView} rows=${rows} plane=${poll.data.plane} money=${money} />` : null}
    <h2 class="tenants-title">Tenants</h2>
    <p class="units muted">
      Spend per billing period (UTC): settled, plus held by open runs. Money in ${money.unitName}.
    </p>
    <${MeterKey} />
    <div class="controls" role="search">
      <div class="field">
        <label for="tenant-search">Search tenants</label>
        <input id="tenant-search" type="search" value=${search} onInput=${(event) => {
          setSearch(event.currentTarget.value);
          setPage(0);
        }} />
      </div>
      <div class="field">
        <label for="tenant-sort">Sort by</label>
        <select id="tenant-sort" value=${sort} onChange=${(event) => setSort(event.currentTarget.value)}>
          ${Object.entries(SORTS).map(([value, option]) => html`<option value=${value}>${option.label}</option>`)}
        </select>
      </div>
    </div>
    ${poll.data === undefined
      ? null
      : shown.length === 0
        ? html`<p>${rows.length === 0 ? 'No tenant has a quota, a run or a halt yet.' : `No tenant name contains “${search}”.`}</p>`
        : html`
          <p class="muted" aria-live="polite">${count(shown.length)} tenant${shown.length === 1 ? '' : 's'}${needle === '' ? '' : ` matching “${search}”`}.</p>
          <table class="tenants">
            <caption class="visually-hidden">Tenants, ${SORTS[sort].label}</caption>
            <thead>
              <tr><th scope="col">Tenant</th><th scope="col">Running</th><th scope="col">Tokens this period</th><th scope="col">Money this period</th><th scope="col">Halts</th><th scope="col">Attention</th></tr>
            </thead>
            <tbody>
              ${slice.map((row) => html`<${TenantRow} key=${row.tenant} row=${row} money=${money} />`)}
            </tbody>
          </table>
          ${pages > 1
            ? html`<nav class="pager" aria-label="Tenant pages">
                <button type="button" class="secondary" disabled=${current === 0} onClick=${() => setPage(current - 1)}>Previous page</button>
                <span>Page ${current + 1} of ${pages}</span>
                <button type="button" class="secondary" disabled=${current >= pages - 1} onClick=${() => setPage(current + 1)}>Next page</button>
              </nav>`
            : null}
        `}
    ${poll.data?.attentionTruncated ? html`<p class="muted">More than 1,000 attention items: counts show the first 1,000.</p>` : null}
  `;
}

function TenantRow({ row, money }) {
  const { usage, halts } = row;
  const quota = usage.quota ?? {};
  return html`<tr>
    <th scope="row" data-label="Tenant">
      <a href=${`#/tenant/${seg(row.tenant)}`}>${row.tenant}</a>
      <div class="muted small">period ${periodName(usage.period, quota.period)}</div>
    </th>
    <td data-label="Running">
      <${Meter} label="" settled=${usage.running} ceiling=${quota.maxConcurrentRuns} show=${(n) => `${count(n)} run${n === 1 ? '' : 's'}`} />
    </td>
    <td data-label="Tokens this period">
      <${Meter} label="" settled=${usage.spent.tokens} held=${usage.reserved.tokens} ceiling=${quota.maxTokensPerPeriod} show=${tokens} />
    </td>
    <td data-label="Money this period">
      <${Meter} label="" settled=${usage.spent.minorUnits} held=${usage.reserved.minorUnits} ceiling=${quota.maxMinorUnitsPerPeriod} show=${money} />
    </td>
    <td data-label="Halts">
      ${halts.length === 0
        ? html`<span class="muted">none</span>`
        : html`<ul class="plain">${halts.map((halt) => html`<li><strong class="badge badge-danger">halted</strong> ${halt.scope}</li>`)}</ul>`}
    </td>
    <td data-label="Attention">${row.attention === 0 ? html`<span class="muted">none</span>` : html`<strong class="badge badge-warn">${count(row.attention)} item${row.attention === 1 ? '' : 's'}</strong>`}</td>
  </tr>`;
}

/** The bars' key, in words: the colour is never the only carrier of a level. */
function MeterKey() {
  const percent = (ratio) => `${Math.round(ratio * 100)} %`;
  return html`<p class="meter-key small muted">
    <span><span class="swatch swatch-settled" aria-hidden="true"></span>settled</span>
    <span><span class="swatch swatch-held" aria-hidden="true"></span>held (striped)</span>
    <span>amber with a “warning” label from ${percent(DANGER_THRESHOLDS.warn)} of a ceiling; red with “at ceiling” from ${percent(DANGER_THRESHOLDS.danger)}</span>
  </p>`;
}
