import { eventKey, type NewEvent } from './events.js';
import { PLANE_AUDIT_TENANT } from './identifiers.js';
import type { AuditRecord } from './lifecycle/types.js';
import type { Spend } from './spend.js';

/*
 * The events of runs and halts (docs/design/rules.md#e6), each keyed by what it is about so it is
 * written once: a pass that overran its hold, a run the sweep stranded, a halt thrown or lifted.
 */

/**
 * `run.overran`: pass (run, epoch) of `tenant` settled `spend`, `overrun` more than the `hold` it
 * was granted (docs/design/rules.md#l90). One per pass.
 */
export function overrunEvent(tenant: string, run: string, epoch: number, agent: string | null, period: string, hold: Spend, spend: Spend, overrun: Spend, atMs: number): NewEvent {
  return {
    key: eventKey('run.overran', tenant, run, epoch),
    type: 'run.overran',
    tenant,
    atMs,
    data: { run, epoch, agent, period, hold: { ...hold }, spend: { ...spend }, overrun: { ...overrun } },
  };
}

/** `run.stranded`: the sweep found the lease of pass (run, epoch) lapsed at `leaseExpiredAtMs` and stranded the run. One per pass. */
export function strandedEvent(tenant: string, run: string, epoch: number, leaseExpiredAtMs: number, atMs: number): NewEvent {
  return {
    key: eventKey('run.stranded', tenant, run, epoch),
    type: 'run.stranded',
    tenant,
    atMs,
    data: { run, epoch, leaseExpiredAtMs },
  };
}

/**
 * The event an audit row of `chain` records, or `null` for a row that is none: `halt.set` for a
 * halt thrown (`halt`, `plane.halt`), `halt.lifted` for one lifted (`lift`, `plane.lift`), keyed by
 * the chain and the row's number, so the event is written with its audit row and never twice. A
 * row of the plane's chain is the plane's (`tenant: null`).
 */
export function auditEvent(chain: string, record: AuditRecord): NewEvent | null {
  const type = record.action === 'halt' || record.action === 'plane.halt' ? 'halt.set' : record.action === 'lift' || record.action === 'plane.lift' ? 'halt.lifted' : null;
  if (type === null) return null;
  return {
    key: eventKey(type, chain, record.seq),
    type,
    tenant: chain === PLANE_AUDIT_TENANT ? null : chain,
    atMs: record.atMs,
    data: { scope: record.subject, by: { ...record.by }, detail: record.detail, auditSeq: record.seq },
  };
}
