import type { CallCeiling, CallCeilings } from '../call-ceilings.js';
import { subjectCeilings, TENANT_SUBJECT } from '../call-coverage.js';
import { callPruneFloorMs, emptyCallMeter, type CallAmounts } from '../call-meter.js';
import type { CallBooks } from './call-books.js';
import { ceilingUsage, storedCallCeilings } from './model-calls.js';

/** One ceiling of a subject as it stands: what its window or period counts booked, what calls in flight hold, and the room left. */
export interface CeilingStanding {
  readonly ceiling: CallCeiling;
  readonly counted: number;
  readonly held: number;
  /** `limit − counted − held`, floored at 0. */
  readonly remaining: number;
}

/**
 * One subject's meter as it stands at an instant (docs/design/rules.md#m10): everything ever
 * booked to it, what its calls in flight hold, and each ceiling configured for it now.
 */
export interface SubjectStanding {
  readonly subject: string;
  readonly booked: CallAmounts;
  readonly held: CallAmounts;
  readonly ceilings: readonly CeilingStanding[];
}

/**
 * Every subject of the tenant with a meter or configured ceilings, as it stands at `atMs`, in
 * subject order (the tenant first), at most `limit`. An end user with a meter shows the default
 * per-user ceilings unless it has its own.
 */
export function callStandings(books: CallBooks, atMs: number, limit: number): SubjectStanding[] {
  const config = storedCallCeilings(books);
  const subjects = new Set<string>([TENANT_SUBJECT, ...configuredSubjects(config), ...books.meterSubjects(limit)]);
  const ordered = [...subjects].sort((a, b) => (a === TENANT_SUBJECT ? -1 : b === TENANT_SUBJECT ? 1 : a < b ? -1 : a > b ? 1 : 0));
  return ordered.slice(0, limit).map((subject) => {
    const meter = books.meter(subject) ?? emptyCallMeter(callPruneFloorMs(atMs));
    const ceilings = subjectCeilings(config, subject).map((ceiling) => {
      const usage = ceilingUsage(books, meter, { subject, ceiling }, atMs);
      return { ceiling, counted: usage.counted, held: usage.held, remaining: Math.max(0, ceiling.limit - usage.counted - usage.held) };
    });
    return { subject, booked: meter.booked, held: meter.held, ceilings };
  });
}

function configuredSubjects(config: CallCeilings): string[] {
  return [
    ...Object.keys(config.agents ?? {}).map((name) => `agent:${name}`),
    ...Object.keys(config.models ?? {}).map((name) => `model:${name}`),
    ...Object.keys(config.groups ?? {}).map((name) => `group:${name}`),
    ...Object.keys(config.endUsers?.overrides ?? {}).map((name) => `user:${name}`),
  ];
}
