import {
  admitOrWait as decideAdmitOrWait,
  cancelWaiter as decideCancelWaiter,
  collectWaiter as decideCollectWaiter,
  sweepWaiters as decideSweepWaiters,
  type Granting,
  type QueueBooks,
} from '../../core/lifecycle/waiting.js';
import type { AdmitRequest, AppliedInstant } from '../types.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../waiters.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';

/*
 * Waiting admissions on PostgreSQL, decided by core/lifecycle/waiting.ts on the books of the
 * tenants a batch holds (postgres-batcher.ts). A plane-wide round serves only the tenants whose
 * lock the batch holds or could take at once: a tenant busy in another transaction is passed over
 * this time, never waited for. Every grant wakes its tenant's waiters once the batch commits
 * (`NOTIFY`). Mirrors sqlite-waiters.ts.
 */

// A waiting decision of `context`'s tenant, in a batch; `name` as a waited-too-long fault names it.
function decideWaiting<T>(
  context: LifecycleContext,
  name: string,
  asked: { atMs: number; applied?: AppliedInstant | undefined; run?: string },
  decide: (queues: QueueBooks, atMs: number) => Granting<T>,
): Promise<T> {
  return context.batch.decide({
    tenant: context.tenant,
    name,
    atMs: asked.atMs,
    applied: asked.applied,
    ...(asked.run === undefined ? {} : { run: asked.run }),
    queue: true,
    decide: (_books, atMs, queues) => decide(queues, atMs).outcome,
  });
}

/** store.ts `admitOrWait`: core's `admitOrWait`. */
export function admitOrWait(context: LifecycleContext, request: AdmitRequest, terms: WaitTerms): Promise<WaitOutcome> {
  const { applied, ...r } = request;
  return decideWaiting(context, 'admission', { atMs: r.atMs, applied, run: r.run }, (queues, atMs) =>
    decideAdmitOrWait(queues, context.tenant, { ...r, atMs }, terms),
  );
}

/** store.ts `collectWaiter`: core's `collectWaiter`. */
export function collectWaiter(context: LifecycleContext, request: AdmitRequest, terms: WaitTerms): Promise<WaitOutcome> {
  const { applied, ...r } = request;
  return decideWaiting(context, 'admission', { atMs: r.atMs, applied, run: r.run }, (queues, atMs) =>
    decideCollectWaiter(queues, context.tenant, { ...r, atMs }, terms),
  );
}

/** store.ts `cancelWaiter`: core's `cancelWaiter`. */
export function cancelWaiter(context: LifecycleContext, request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome> {
  return decideWaiting(context, 'cancel', request, (queues, atMs) => decideCancelWaiter(queues, context.tenant, { run: request.run, atMs }));
}

/** store.ts `sweepWaiters`: core's `sweepWaiters`. */
export function sweepWaiters(context: LifecycleContext, request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep> {
  return decideWaiting(context, 'sweep', request, (queues, atMs) => decideSweepWaiters(queues, context.tenant, atMs));
}

/** store.ts `waitQueue`: one read. */
export async function readWaitQueue(context: LifecycleContext, atMs: number): Promise<WaitQueue> {
  const row = await context.db.row<{ depth: number; oldest: number | null; uncollected: number }>(context.q.waiters.queueFigures, [context.tenant, atMs]);
  return {
    depth: Number(row?.depth ?? 0),
    oldestEnqueuedAtMs: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
    uncollected: Number(row?.uncollected ?? 0),
  };
}
