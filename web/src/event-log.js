import { count, tokens, utc } from './format.js';
import { html } from './html.js';

/*
 * The newest events of a tenant, or of the plane, read from the event log
 * (GET /v1/tenants/{tenant}/events, GET /v1/events): the first read asks for the newest
 * {@link SHOWN_EVENTS} (`last`), and every later one, with the log's cursor, only for what is new
 * (`after`, oldest first; docs/design/rules.md#e8), keeping the newest {@link SHOWN_EVENTS}.
 */

/** How many events the page shows, newest first. */
export const SHOWN_EVENTS = 20;
/** Events asked for per request (the API's most). */
const PAGE = 1000;
/** Pages one read follows at most: a long log is caught up over several refreshes, not in one burst. */
const PAGES_PER_READ = 10;

/**
 * A tail of the log at `path` (`v1/events` or `v1/tenants/{tenant}/events`): `read()` answers
 * `{ events, caughtUp }`, the newest {@link SHOWN_EVENTS} newest first, and whether the log was
 * read to its end. Reads never overlap (a read asked for while one runs answers that one), and an
 * event is taken once, by its `seq`, so a refresh never lists one twice.
 */
export function eventTail(api, path) {
  let next = null;
  let kept = [];
  let caughtUp = false;
  let running = null;
  const readMore = async () => {
    for (let page = 0; page < PAGES_PER_READ; page += 1) {
      const answer = await api.get(next === null ? `${path}?last=${SHOWN_EVENTS}` : `${path}?after=${next}&limit=${PAGE}`);
      const last = kept.at(-1)?.seq ?? 0;
      kept = [...kept, ...answer.events.filter((event) => event.seq > last)].slice(-SHOWN_EVENTS);
      next = Math.max(next ?? 0, answer.next);
      caughtUp = !answer.truncated;
      if (caughtUp) break;
    }
    return { events: [...kept].reverse(), caughtUp };
  };
  return {
    read() {
      running ??= readMore().finally(() => {
        running = null;
      });
      return running;
    },
  };
}

const unitAmount = (unit, amount, money) => (unit === 'tokens' ? tokens(amount) : money(amount));
const whose = (agent) => (agent === null || agent === undefined ? '' : ` of agent ${agent}`);
const spend = (value, money) => `${tokens(value.tokens)}, ${money(value.minorUnits)}`;

/** One line saying what an event says, in the page's units (money in currency). */
export function eventSummary(event, money) {
  const data = event.data ?? {};
  switch (event.type) {
    case 'threshold.crossed': {
      const threshold = data.threshold ?? {};
      const which = 'percent' in threshold ? `${threshold.percent}% of ${unitAmount(data.unit, data.ceiling, money)}` : unitAmount(data.unit, data.thresholdAmount, money);
      return `Settled ${data.unit === 'tokens' ? 'tokens' : 'money'}${whose(data.agent)} reached ${which}: ${unitAmount(data.unit, data.settled, money)} settled in ${data.period}.`;
    }
    case 'ceiling.reached':
      return `Settled ${data.unit === 'tokens' ? 'tokens' : 'money'}${whose(data.agent)} reached the ceiling of ${unitAmount(data.unit, data.ceiling, money)} in ${data.period}: ${unitAmount(data.unit, data.settled, money)} settled.`;
    case 'run.overran': {
      const over = [data.overrun?.tokens > 0 ? tokens(data.overrun.tokens) : null, data.overrun?.minorUnits > 0 ? money(data.overrun.minorUnits) : null].filter((part) => part !== null);
      return `Run ${data.run} pass ${data.epoch}${whose(data.agent)} overran its hold by ${over.join(' and ') || 'nothing'}: settled ${spend(data.spend, money)}, held ${spend(data.hold, money)}.`;
    }
    case 'run.stranded':
      return `Run ${data.run} pass ${data.epoch} stranded: its lease lapsed at ${utc(data.leaseExpiredAtMs)}.`;
    case 'halt.set':
      return `Halt on ${data.scope} thrown by ${data.by?.actor ?? 'someone'}${typeof data.reason === 'string' ? `: ${data.reason}` : '.'}`;
    case 'halt.lifted':
      return `Halt on ${data.scope} lifted by ${data.liftedBy?.actor ?? 'someone'}.`;
    default:
      return JSON.stringify(data);
  }
}

const TYPE_BADGE = {
  'threshold.crossed': 'badge-warn',
  'ceiling.reached': 'badge-danger',
  'run.overran': 'badge-warn',
  'run.stranded': 'badge-warn',
  'halt.set': 'badge-danger',
  'halt.lifted': 'badge-ok',
};

/**
 * The events newest first: time, type and a one-line summary (`withTenant`: a column naming the
 * tenant, for the plane's log; as text, not links, so twenty rows add no stops to the keyboard's
 * way to the tenants below). `tail` is what {@link eventTail} read, or `{ error }`.
 */
export function EventList({ tail, money, withTenant = false, caption }) {
  if (tail.error !== undefined) return html`<p class="error" role="alert">The events could not be read: ${tail.error.message}</p>`;
  if (tail.events.length === 0) return html`<p>No event yet.${tail.caughtUp ? '' : ' (Still reading the log.)'}</p>`;
  return html`<div class="table-wrap"><table class="events">
      <caption>${caption} (the newest ${count(tail.events.length)}, newest first)${tail.caughtUp ? '' : '; a long log is still being read: newer events follow at the next refreshes'}</caption>
      <thead><tr><th scope="col">When</th>${withTenant ? html`<th scope="col">Tenant</th>` : null}<th scope="col">Type</th><th scope="col">What happened</th></tr></thead>
      <tbody>
        ${tail.events.map(
          (event) => html`<tr key=${event.seq}>
            <td data-label="When"><time datetime=${new Date(event.atMs).toISOString()}>${utc(event.atMs)}</time></td>
            ${withTenant ? html`<td data-label="Tenant">${event.tenant === null ? html`<span class="muted">the plane</span>` : event.tenant}</td>` : null}
            <td data-label="Type"><span class=${`badge ${TYPE_BADGE[event.type] ?? 'badge-ok'}`}>${event.type}</span></td>
            <td data-label="What happened" class="reason">${eventSummary(event, money)}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
}
