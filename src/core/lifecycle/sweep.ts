import { strandedEvent } from '../run-events.js';
import type { TenantBooks } from './books.js';
import type { SweptRun } from './types.js';
import { requeueLapsedGrant } from './waiter-grants.js';

/**
 * The sweep of one run (store.ts `sweepRun`, docs/design/rules.md#l34–#l37): re-checks, inside the
 * adapter's transaction, that the run is registered and has no live pass at `atMs`, so a heartbeat
 * that won the race keeps its slot. A waiter's grant that lapsed uncollected is withdrawn whole and
 * the waiter requeued in its place. Otherwise the slot is given back and a running run is stranded
 * since its latest pass's lease lapsed, with its `run.stranded` event (docs/design/rules.md#e6).
 * The hold stays: what the dead pass spent is unknown.
 */
export function decideSweepRun(books: TenantBooks, request: { readonly run: string; readonly atMs: number }): SweptRun {
  const { run, atMs } = request;
  const untouched: SweptRun = { run, releasedSlot: false, stranded: false };
  const record = books.run(run);
  if (record === null || books.hasLivePass(run, atMs)) return untouched;
  const holding = books.holdsSlot(run);
  if (requeueLapsedGrant(books, run, atMs, 0)) return { run, releasedSlot: holding, stranded: false };
  if (holding) books.giveSlot(run);
  if (record.status !== 'running') return { run, releasedSlot: holding, stranded: false };
  // Stranded since the lease of its latest pass lapsed (a run without one: since its admission).
  const since = books.passLease(run, record.lastEpoch)?.leaseExpiresAtMs ?? record.admittedAtMs;
  books.setRunStatus(run, 'stranded', since);
  books.appendEvent(strandedEvent(books.tenant, run, record.lastEpoch, since, atMs));
  return { run, releasedSlot: holding, stranded: true };
}
