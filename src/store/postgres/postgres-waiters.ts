import { answerAdmissionRetry } from '../../core/lifecycle/admission-retry.js';
import type { TenantQuota } from '../../core/quota.js';
import { decodeAdmittedRun, type RetryFactsRow } from '../admit-retry.js';
import { atApply } from '../applied-instant.js';
import { corrupt } from '../rows.js';
import type { AdmitRequest, AppliedInstant } from '../types.js';
import {
  timedOutRefusal,
  type CancelOutcome,
  type WaitOutcome,
  type WaitQueue,
  type WaiterSweep,
  type WaitTerms,
} from '../waiters.js';
import type { TransactionClient } from './postgres-connection.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import { admitAnswer, admitValues, type AdmitRow } from './postgres-waiter-admit.js';
import { quotaOf } from './postgres-outcomes.js';
import type { WaiterQueries } from './postgres-waiter-queries.js';

/*
 * Waiting admissions on PostgreSQL, mirroring
 * `sqlite-waiters.ts`. Each verb is one TypeScript transaction that first takes the tenant's
 * admission lock (the lock every batched decision of the tenant takes first, so the two never
 * wait for each other in opposite orders), then works through `quota_admit` and
 * `quota_grant_waiters` (in `migrations/`). The refusal values are rebuilt after the commit
 * from the returned figures, as for every admission.
 */

interface WaiterRow {
  readonly run_id: string;
  readonly seq: number;
  readonly state: 'waiting' | 'granted' | 'refused';
  readonly enqueued_at_ms: number;
}

/** What a waiter transaction decided, before the refusal values are rebuilt. */
type Decided =
  | { readonly kind: 'waiting'; readonly position: number; readonly enqueuedAtMs: number }
  | {
      readonly kind: 'admission';
      readonly row: AdmitRow | undefined;
      readonly place?: { position: number; waitedMs: number };
      /** The quota the row was decided under, when not the request's (the spend probe). */
      readonly quota?: TenantQuota;
    };

async function position(tx: TransactionClient, w: WaiterQueries, tenant: string, seq: number, atMs: number): Promise<number> {
  const [row] = await tx.rows<{ ahead: number }>(w.countAhead, [tenant, atMs, seq]);
  return Number(row?.ahead ?? 0) + 1;
}

async function admitNow(tx: TransactionClient, w: WaiterQueries, tenant: string, r: AdmitRequest): Promise<AdmitRow | undefined> {
  const [row] = await tx.rows<AdmitRow>(w.admitNow, admitValues(tenant, r));
  return row;
}

// The admission decided again with every concurrency ceiling lifted (the tenant's and the agent's
// in the quota it is decided under, the plane-wide ones by the transaction-local setting
// `quotaplane.spend_probe`), inside a savepoint rolled back at once, which also resets the setting:
// a `spent-out` answer is the refusal the caller gets instead of a place in the queue.
async function spendBehindConcurrency(
  tx: TransactionClient,
  w: WaiterQueries,
  tenant: string,
  r: AdmitRequest,
  row: AdmitRow,
): Promise<Decided | null> {
  const agent = r.agent?.name ?? null;
  const agentBounds = agent !== null && (row.agent_limit_tokens !== null || row.agent_limit_minor_units !== null);
  if (row.limit_tokens === null && row.limit_minor_units === null && !agentBounds) return null;
  // The quota in force without its concurrency ceilings (the tenant's and the agent's).
  const quota: TenantQuota = quotaOf(
    row.grant_period !== null && row.grant_period.length > 7 ? 'daily' : 'monthly',
    null,
    row.limit_tokens,
    row.limit_minor_units,
    agent === null ? null : { name: agent, maxRuns: null, limitTokens: row.agent_limit_tokens, limitMinorUnits: row.agent_limit_minor_units },
  );
  await tx.run('SAVEPOINT quotaplane_probe', []);
  await tx.run("SELECT set_config('quotaplane.spend_probe', 'on', true)", []);
  const probe = await admitNow(tx, w, tenant, { ...r, quota });
  await tx.run('ROLLBACK TO SAVEPOINT quotaplane_probe', []);
  return probe?.outcome === 'spent-out' ? { kind: 'admission', row: probe, quota } : null;
}

async function enqueueOrAdmit(tx: TransactionClient, w: WaiterQueries, tenant: string, r: AdmitRequest, terms: WaitTerms): Promise<Decided> {
  const row = await admitNow(tx, w, tenant, r);
  if (row?.outcome !== 'too-many-runs') return { kind: 'admission', row };
  // Concurrency is judged before spend: a hold that would not fit either is refused, never queued.
  const spentOut = await spendBehindConcurrency(tx, w, tenant, r, row);
  if (spentOut !== null) return spentOut;
  // quota_admit's values without the two period keys (a waiter is admitted in the period of its grant),
  // then the end of the wait and the waiter's lease.
  const values = admitValues(tenant, r).filter((_, index) => index !== 13 && index !== 14);
  await tx.run(w.insertWaiter, [...values, terms.untilMs, r.atMs + terms.leaseMs]);
  const [waiter] = await tx.rows<WaiterRow>(w.selectWaiter, [tenant, r.run]);
  if (waiter === undefined) throw new Error(`waiter ${r.run} vanished inside its own transaction`);
  return { kind: 'waiting', position: await position(tx, w, tenant, waiter.seq, r.atMs), enqueuedAtMs: r.atMs };
}

async function collect(tx: TransactionClient, w: WaiterQueries, tenant: string, r: AdmitRequest, terms: WaitTerms): Promise<Decided> {
  const final = r.atMs >= terms.untilMs;
  await tx.rows(w.grantWaiters, [tenant, r.atMs]);
  const [waiter] = await tx.rows<WaiterRow>(w.selectWaiter, [tenant, r.run]);
  if (waiter === undefined) {
    return final ? { kind: 'admission', row: await admitNow(tx, w, tenant, r) } : enqueueOrAdmit(tx, w, tenant, r, terms);
  }
  if (waiter.state === 'waiting' && !final) {
    await tx.run(w.renewWaiter, [tenant, r.run, r.atMs + terms.leaseMs]);
    return { kind: 'waiting', position: await position(tx, w, tenant, waiter.seq, r.atMs), enqueuedAtMs: Number(waiter.enqueued_at_ms) };
  }
  if (waiter.state === 'refused') return collectRefused(tx, w, tenant, r, terms, waiter);
  if (waiter.state === 'granted') {
    const [lapsed] = await tx.rows<{ requeued: boolean }>(w.requeueLapsedGrant, [tenant, r.run, r.atMs, r.atMs + terms.leaseMs]);
    // Its grant lapsed before it came for it: it stands in its place again, and is served afresh.
    if (lapsed?.requeued === true) return collect(tx, w, tenant, r, terms);
  }
  const place = waiter.state === 'waiting' ? await position(tx, w, tenant, waiter.seq, r.atMs) : 1;
  const waited = { position: place, waitedMs: r.atMs - Number(waiter.enqueued_at_ms) };
  // Another caller of this run waits on (keepPlace): if room still refuses, the place stays. The
  // row goes for the decision (its own place must not stand ahead of it) and comes back with the
  // savepoint's rollback; a refused admission wrote nothing else.
  const keep = waiter.state === 'waiting' && terms.keepPlace === true;
  if (keep) await tx.run('SAVEPOINT quotaplane_keep_place', []);
  await tx.run(w.deleteWaiter, [tenant, r.run]);
  const row = await admitNow(tx, w, tenant, r);
  if (keep) {
    if (row?.outcome === 'too-many-runs') await tx.run('ROLLBACK TO SAVEPOINT quotaplane_keep_place', []);
    await tx.run('RELEASE SAVEPOINT quotaplane_keep_place', []);
  }
  return { kind: 'admission', row, place: waited };
}

// A waiter the grant loop refused for a reason other than room hears that reason, never a
// TooManyRuns decided later because a waiter behind it took the slot (see `collectRefused` of the
// SQLite adapter): halts and Unbounded come before room, spend is probed with room left out; when
// nothing but room refuses it any more it waits again in its own place (or, its time up, gets
// TooManyRuns with that place).
async function collectRefused(
  tx: TransactionClient,
  w: WaiterQueries,
  tenant: string,
  r: AdmitRequest,
  terms: WaitTerms,
  waiter: WaiterRow,
): Promise<Decided> {
  const row = await admitNow(tx, w, tenant, r);
  if (row?.outcome !== 'too-many-runs') {
    await tx.run(w.deleteWaiter, [tenant, r.run]);
    return { kind: 'admission', row };
  }
  const spentOut = await spendBehindConcurrency(tx, w, tenant, r, row);
  if (spentOut !== null) {
    await tx.run(w.deleteWaiter, [tenant, r.run]);
    return spentOut;
  }
  const place = await position(tx, w, tenant, waiter.seq, r.atMs);
  if (r.atMs >= terms.untilMs) {
    // The place stays, waiting again, for another caller of this run who waits on (keepPlace).
    if (terms.keepPlace === true) await tx.run(w.requeueWaiter, [tenant, r.run, r.atMs]);
    else await tx.run(w.deleteWaiter, [tenant, r.run]);
    return { kind: 'admission', row, place: { position: place, waitedMs: r.atMs - Number(waiter.enqueued_at_ms) } };
  }
  await tx.run(w.requeueWaiter, [tenant, r.run, r.atMs + terms.leaseMs]);
  return { kind: 'waiting', position: place, enqueuedAtMs: Number(waiter.enqueued_at_ms) };
}

// A retry of a registered run judged inside the transaction (docs/design/rules.md#l13-1): unlike a
// plain admission, a waiter's verb has written before quota_admit answered `existing` (the waiter
// row it took, the grants it served), so a conflicting retry must throw here and roll that back, as
// the SQLite adapter's one transaction does. An identical retry is answered after the commit.
async function refuseConflictingRetry(tx: TransactionClient, context: LifecycleContext, r: AdmitRequest, decided: Decided): Promise<void> {
  if (decided.kind !== 'admission' || (decided.row?.outcome !== 'existing' && decided.row?.outcome !== 'closed')) return;
  const [row] = await tx.rows<RetryFactsRow>(context.q.admitRetry, [context.tenant, r.run]);
  if (row === undefined) throw corrupt(context.tenant, `run '${r.run}' vanished after its admission was found`);
  answerAdmissionRetry(context.tenant, r, decodeAdmittedRun(context.tenant, row));
}

async function answer(context: LifecycleContext, r: AdmitRequest, decided: Decided): Promise<WaitOutcome> {
  if (decided.kind === 'waiting') {
    return { ok: false, waiting: true, run: r.run, position: decided.position, enqueuedAtMs: decided.enqueuedAtMs };
  }
  const outcome = await admitAnswer(context, decided.quota === undefined ? r : { ...r, quota: decided.quota }, decided.row);
  if (!outcome.ok && outcome.refusal.code === 'TooManyRuns' && decided.place !== undefined) {
    return { ok: false, refusal: timedOutRefusal(outcome.refusal, decided.place.position, decided.place.waitedMs) };
  }
  return outcome;
}

/** store.ts `admitOrWait` (see `admitOrWaitInTransaction` of the SQLite adapter for the rule). */
export async function admitOrWait(context: LifecycleContext, w: WaiterQueries, r: AdmitRequest, terms: WaitTerms): Promise<WaitOutcome> {
  const { db, tenant } = context;
  const { applied, decided } = await db.transaction(async (tx) => {
    await tx.rows(w.lockTenant, [tenant]);
    // Read once the tenant's lock is held.
    const now = atApply('admission', r);
    const [waiter] = await tx.rows<WaiterRow>(w.selectWaiter, [tenant, now.run]);
    const decided = await (waiter === undefined ? enqueueOrAdmit(tx, w, tenant, now, terms) : collect(tx, w, tenant, now, terms));
    await refuseConflictingRetry(tx, context, now, decided);
    return { applied: now, decided };
  });
  return answer(context, applied, decided);
}

/** store.ts `collectWaiter` (see `collectWaiterInTransaction` of the SQLite adapter for the rule). */
export async function collectWaiter(context: LifecycleContext, w: WaiterQueries, r: AdmitRequest, terms: WaitTerms): Promise<WaitOutcome> {
  const { db, tenant } = context;
  const { applied, decided } = await db.transaction(async (tx) => {
    await tx.rows(w.lockTenant, [tenant]);
    // Read once the tenant's lock is held.
    const now = atApply('admission', r);
    const decided = await collect(tx, w, tenant, now, terms);
    await refuseConflictingRetry(tx, context, now, decided);
    return { applied: now, decided };
  });
  return answer(context, applied, decided);
}

/** store.ts `cancelWaiter`: a waiting row goes; an uncollected grant is withdrawn and its room granted on. */
export async function cancelWaiter(
  context: LifecycleContext,
  w: WaiterQueries,
  asked: { run: string; atMs: number; applied?: AppliedInstant },
): Promise<CancelOutcome> {
  const { db, tenant } = context;
  return db.transaction(async (tx) => {
    await tx.rows(w.lockTenant, [tenant]);
    // Read once the tenant's lock is held.
    const request = atApply('cancel', asked);
    const [waiter] = await tx.rows<WaiterRow>(w.selectWaiter, [tenant, request.run]);
    if (waiter === undefined) return 'absent';
    await tx.run(w.deleteWaiter, [tenant, request.run]);
    if (waiter.state !== 'granted') return 'cancelled';
    await tx.rows(w.withdrawGrant, [tenant, request.run]);
    await tx.rows(w.grantWaiters, [tenant, request.atMs]);
    return 'grant-withdrawn';
  });
}

/** store.ts `sweepWaiters`: lapsed waiters removed, lapsed uncollected grants withdrawn, the room granted on. */
export async function sweepWaiters(
  context: LifecycleContext,
  w: WaiterQueries,
  asked: { atMs: number; applied?: AppliedInstant },
): Promise<WaiterSweep> {
  const { db, tenant } = context;
  return db.transaction(async (tx) => {
    await tx.rows(w.lockTenant, [tenant]);
    // Read once the tenant's lock is held.
    const atMs = atApply('sweep', asked).atMs;
    let expired = 0;
    let recovered = 0;
    for (const row of await tx.rows<{ run_id: string; state: string }>(w.lapsedWaiters, [tenant, atMs])) {
      await tx.run(w.deleteWaiter, [tenant, row.run_id]);
      if (row.state === 'granted') {
        await tx.rows(w.withdrawGrant, [tenant, row.run_id]);
        recovered += 1;
      } else {
        expired += 1;
      }
    }
    const [granted] = await tx.rows<{ granted: number }>(w.grantWaiters, [tenant, atMs]);
    return { expired, recovered, granted: Number(granted?.granted ?? 0) };
  });
}

/** store.ts `waitQueue`: one read. */
export async function readWaitQueue(context: LifecycleContext, w: WaiterQueries, atMs: number): Promise<WaitQueue> {
  const row = await context.db.row<{ depth: number; oldest: number | null; uncollected: number }>(w.queueFigures, [context.tenant, atMs]);
  return {
    depth: Number(row?.depth ?? 0),
    oldestEnqueuedAtMs: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
    uncollected: Number(row?.uncollected ?? 0),
  };
}
