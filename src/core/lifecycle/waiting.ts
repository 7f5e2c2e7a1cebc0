import { holdFor } from '../budget.js';
import { isQuotaError } from '../errors.js';
import { periodKey } from '../period.js';
import { tenantWeight, type PlaneCeiling } from '../plane-ceiling.js';
import { holdQuotaFor, UNLIMITED_QUOTA } from '../quota.js';
import type { SpentOutRefusal } from '../refusal.js';
import { decideAdmitNow } from './admit-now.js';
import type { TenantBooks } from './books.js';
import { spendRefusal } from './reserve.js';
import type { AdmitOutcome, AdmitRequest } from './types.js';
import type { WaiterPlace, WaitTurnBooks } from './waiter-books.js';
import { requeueLapsedGrant } from './waiter-grants.js';
import { timedOutRefusal, type CancelOutcome, type WaitOutcome, type WaiterSweep, type WaitTerms } from './waiting-types.js';

/*
 * Waiting admissions (docs/design/rules.md#w1–#w19), decided once for every adapter: the queue of
 * each tenant (first come, first served), the grants written into the room a freed slot leaves,
 * the fair turns of the tenants while a plane-wide ceiling binds, and a waiter's collect, cancel
 * and sweep. A waiter holds no lock while it waits: it is a row, and its caller comes back to
 * collect. Every function runs inside the adapter's one transaction.
 */

/** The books of every tenant a queue decision may reach, and the plane-wide turns. */
export interface QueueBooks extends WaitTurnBooks {
  /** The books of `tenant`, in the same transaction. */
  tenant(tenant: string): TenantBooks;
  /** The plane-wide ceiling, or `null` when none is set. */
  planeCeiling(): PlaneCeiling | null;
}

/** What a decision that may grant waiters answers: its own outcome, and per grant the tenant it went to. */
export interface Granting<T> {
  readonly outcome: T;
  readonly granted: string[];
}

/** Why a pass over one tenant's queue stopped. */
type QueueStop = 'empty' | 'limit' | 'tenant-full' | 'plane-full';

/**
 * Grants the tenant's waiters, first come first served, into whatever room there is at `atMs`, at
 * most `limit` of them: each live waiter in queue order is admitted as the admission it asked for
 * (the whole decision of `admit`). Admitted → `granted` (its run and pass 1 are in the books for
 * its caller to collect). Refused `TooManyRuns` by the tenant's or the plane's ceiling → the pass
 * stops there: nobody behind it may take a slot ahead of it. Refused `TooManyRuns` by a ceiling on
 * its own agent → it keeps its place and the pass goes on (no head-of-line blocking). Refused
 * otherwise (a halt, spend, a run id taken meanwhile, a bound) → `refused`, and its caller gets
 * that answer when it collects. A waiter whose lease lapsed is removed (its caller is gone).
 */
function grantQueue(books: TenantBooks, atMs: number, limit: number): { granted: string[]; stop: QueueStop } {
  const granted: string[] = [];
  let after = 0;
  for (;;) {
    if (granted.length >= limit) return { granted, stop: 'limit' };
    const entry = books.nextWaiting(after);
    if (entry === null) return { granted, stop: 'empty' };
    after = entry.seq;
    if (entry.leaseExpiresAtMs <= atMs) {
      books.deleteWaiter(entry.run);
      continue;
    }
    if (books.run(entry.run) !== null) {
      books.decideWaiter(entry.run, 'refused', atMs);
      continue;
    }
    let outcome: AdmitOutcome;
    try {
      outcome = decideAdmitNow(books, entry.requestAt(atMs));
    } catch (error) {
      // Thrown before any write (an amount beyond the bound): its caller hears it on collect.
      if (!isQuotaError(error, 'INVALID_ARGUMENT') && !isQuotaError(error, 'CONFLICT')) throw error;
      books.decideWaiter(entry.run, 'refused', atMs);
      continue;
    }
    if (outcome.ok) {
      books.decideWaiter(entry.run, 'granted', atMs);
      granted.push(entry.run);
    } else if (outcome.refusal.code === 'TooManyRuns') {
      const bound = outcome.refusal.bound;
      if (bound === 'tenant') return { granted, stop: 'tenant-full' };
      if (bound === 'plane') return { granted, stop: 'plane-full' };
      // Held back only by its own agent's ceiling: the waiters behind it may still fit.
    } else {
      books.decideWaiter(entry.run, 'refused', atMs);
    }
  }
}

/** Virtual time a grant costs a tenant of weight 1 in the round robin; a weight-w tenant pays 1/w of it. */
const TURN_COST = 1_000_000;
/** The key of the plane's own virtual time. */
const PLANE_TURN = '*';

/**
 * The waiters of every tenant, in turn, while the plane-wide ceiling binds: start-time fair
 * queueing over the tenants that have live waiters. The tenant whose turn starts earliest (its
 * virtual time, never below the plane's) gets the next grant, the first in its own queue that fits
 * (one grant); its virtual time then moves on by `TURN_COST / weight` (weights from the plane
 * ceiling, default 1), so every backlogged tenant gets its share of freed slots whatever its
 * demand. A tenant whose own ceilings hold its waiters back is passed over; the round ends when the
 * plane is full or nobody fits.
 */
function grantInTurn(queues: QueueBooks, plane: PlaneCeiling, atMs: number): string[] {
  const woken: string[] = [];
  const passedOver = new Set<string>();
  for (;;) {
    const tenants = queues.waitingTenants(atMs).filter((tenant) => !passedOver.has(tenant));
    if (tenants.length === 0) return woken;
    const planeTime = queues.turn(PLANE_TURN);
    let next = tenants[0] as string;
    let nextStart = Math.max(queues.turn(next), planeTime);
    for (const tenant of tenants.slice(1)) {
      const start = Math.max(queues.turn(tenant), planeTime);
      if (start < nextStart) {
        next = tenant;
        nextStart = start;
      }
    }
    const { granted, stop } = grantQueue(queues.tenant(next), atMs, 1);
    if (granted.length > 0) {
      woken.push(next);
      queues.setTurn(next, nextStart + Math.max(1, Math.floor(TURN_COST / tenantWeight(plane, next))));
      queues.setTurn(PLANE_TURN, nextStart);
      continue;
    }
    if (stop === 'plane-full') return woken;
    passedOver.add(next);
  }
}

/**
 * Serves the waiting queues at `atMs` after a slot of `tenant` freed or before it admits: under a
 * plane-wide `maxConcurrentRuns`, every tenant's waiters in turn, since a slot freed anywhere is a
 * plane slot; otherwise the tenant's own queue, first come first served. Answers, per grant, the
 * tenant whose waiter it went to (to count them and wake their callers).
 */
export function grantWaiters(queues: QueueBooks, tenant: string, atMs: number): string[] {
  const plane = queues.planeCeiling();
  if (plane?.maxConcurrentRuns !== undefined) return grantInTurn(queues, plane, atMs);
  return grantQueue(queues.tenant(tenant), atMs, Number.POSITIVE_INFINITY).granted.map(() => tenant);
}

/**
 * Serves every tenant's queue at `atMs` (a plane-wide ceiling changed): in turn under a plane-wide
 * `maxConcurrentRuns`, else each tenant's own queue in tenant order. Answers, per grant, the tenant
 * it went to.
 */
export function grantEveryQueue(queues: QueueBooks, atMs: number): string[] {
  const plane = queues.planeCeiling();
  if (plane?.maxConcurrentRuns !== undefined) return grantInTurn(queues, plane, atMs);
  return queues
    .waitingTenants(atMs)
    .flatMap((tenant) => grantQueue(queues.tenant(tenant), atMs, Number.POSITIVE_INFINITY).granted.map(() => tenant));
}

/** Admission as `admit` decides it, after the tenant's waiters were served: no later arrival goes first. */
export function admitInTurn(queues: QueueBooks, tenant: string, request: AdmitRequest): Granting<AdmitOutcome> {
  const granted = grantWaiters(queues, tenant, request.atMs);
  return { outcome: decideAdmitNow(queues.tenant(tenant), request), granted };
}

// The SpentOut an admission refused TooManyRuns would also meet, from the figures as they stand.
function spendBehindConcurrency(books: TenantBooks, request: AdmitRequest): SpentOutRefusal | null {
  const quota = request.quota ?? books.storedQuota() ?? UNLIMITED_QUOTA;
  const agent = request.agent?.name ?? null;
  // Held as `admit` holds it: a unit its agent's spend ceiling bounds is held even when the tenant
  // bounds none.
  const held = holdFor(holdQuotaFor(quota, agent), request.budget, request.width);
  if (!held.ok || held.hold === null) return null;
  return spendRefusal(books, quota, agent, { period: periodKey(quota.period, request.atMs), amount: held.hold });
}

function position(books: TenantBooks, seq: number, atMs: number): number {
  return books.waitersAhead(seq, atMs) + 1;
}

function waiting(books: TenantBooks, run: string, atMs: number): WaitOutcome {
  const place = books.waiter(run);
  if (place === null) throw new Error(`waiter ${run} vanished inside its own transaction`);
  return { ok: false, waiting: true, run, position: position(books, place.seq, atMs), enqueuedAtMs: place.enqueuedAtMs };
}

/**
 * A waiting admission (store.ts `admitOrWait`): the admission is decided as `admit` decides it
 * (the queue served first); only a `TooManyRuns` refusal puts it in the queue instead, with a lease
 * of `terms.leaseMs`. A run already waiting keeps its place (its lease renewed). Concurrency is
 * judged before spend: a hold that would not fit either is refused, never queued.
 */
export function admitOrWait(queues: QueueBooks, tenant: string, request: AdmitRequest, terms: WaitTerms): Granting<WaitOutcome> {
  const books = queues.tenant(tenant);
  if (books.waiter(request.run) !== null) return collectWaiter(queues, tenant, request, terms);
  const { outcome, granted } = admitInTurn(queues, tenant, request);
  if (outcome.ok || outcome.refusal.code !== 'TooManyRuns') return { outcome, granted };
  const spentOut = spendBehindConcurrency(books, request);
  if (spentOut !== null) return { outcome: { ok: false, refusal: spentOut }, granted };
  books.enqueueWaiter(request, request.atMs, terms.untilMs, request.atMs + terms.leaseMs);
  return { outcome: waiting(books, request.run, request.atMs), granted };
}

/**
 * A waiter's caller comes back (store.ts `collectWaiter`): the queue is served first; a waiter
 * still waiting, when the caller's time is not up (`atMs` before `terms.untilMs`), has its lease
 * renewed (never shortened) and hears its place. Otherwise its row goes and the admission is
 * answered as the books now stand: a grant comes back as the admission's pass (a retry answered
 * from the books); a timed-out waiter gets the `TooManyRuns` refusal decided now, with its place
 * and how long it waited (or, if a slot freed in this very instant, the pass). A waiter whose row
 * is gone (its lease lapsed) is decided afresh, and waits again at the back when the caller's time
 * is not up. A waiter the grant loop refused is answered by `collectRefused`; a grant that lapsed
 * before its caller came is withdrawn and the waiter served afresh in its place.
 */
export function collectWaiter(queues: QueueBooks, tenant: string, request: AdmitRequest, terms: WaitTerms): Granting<WaitOutcome> {
  const books = queues.tenant(tenant);
  const final = request.atMs >= terms.untilMs;
  const granted = grantWaiters(queues, tenant, request.atMs);
  const place = books.waiter(request.run);
  if (place === null) {
    if (final) return { outcome: decideAdmitNow(books, request), granted };
    const again = admitOrWait(queues, tenant, request, terms);
    return { outcome: again.outcome, granted: [...granted, ...again.granted] };
  }
  if (place.state === 'waiting' && !final) {
    books.setWaiterLease(request.run, Math.max(place.leaseExpiresAtMs, request.atMs + terms.leaseMs));
    return { outcome: waiting(books, request.run, request.atMs), granted };
  }
  if (place.state === 'refused') return { outcome: collectRefused(books, request, terms, place), granted };
  if (place.state === 'granted' && requeueLapsedGrant(books, request.run, request.atMs, request.atMs + terms.leaseMs)) {
    // Its grant lapsed before it came for it: it stands in its place again, and is served afresh.
    const again = collectWaiter(queues, tenant, request, terms);
    return { outcome: again.outcome, granted: [...granted, ...again.granted] };
  }
  const ahead = place.state === 'waiting' ? position(books, place.seq, request.atMs) : 1;
  // Another caller of this run waits on (keepPlace): if room still refuses, the place stays.
  const kept = place.state === 'waiting' && terms.keepPlace === true ? books.keepWaiter(request.run) : undefined;
  books.deleteWaiter(request.run);
  const outcome = decideAdmitNow(books, request);
  if (!outcome.ok && outcome.refusal.code === 'TooManyRuns') {
    if (kept !== undefined) books.restoreWaiter(kept);
    return { outcome: { ok: false, refusal: timedOutRefusal(outcome.refusal, ahead, request.atMs - place.enqueuedAtMs) }, granted };
  }
  return { outcome, granted };
}

/**
 * A waiter the grant loop refused for a reason other than room (a halt, spend, a budget the quota
 * cannot bound) hears that reason, never a `TooManyRuns` decided later because a waiter behind it
 * took the slot meanwhile. The reason is judged again the way the grant loop judged it, with room
 * left out: halts and `Unbounded` come before room in every admission, and spend, judged after
 * room, is probed on its own. If nothing but room refuses it any more (the halt was lifted, holds
 * were given back), it goes back to waiting in its original place, or, when its time is up, gets
 * the `TooManyRuns` refusal with that place.
 */
function collectRefused(books: TenantBooks, request: AdmitRequest, terms: WaitTerms, place: WaiterPlace): WaitOutcome {
  const outcome = decideAdmitNow(books, request);
  if (outcome.ok || outcome.refusal.code !== 'TooManyRuns') {
    books.deleteWaiter(request.run);
    return outcome;
  }
  const spentOut = spendBehindConcurrency(books, request);
  if (spentOut !== null) {
    books.deleteWaiter(request.run);
    return { ok: false, refusal: spentOut };
  }
  const ahead = position(books, place.seq, request.atMs);
  if (request.atMs >= terms.untilMs) {
    // The place stays, waiting again, for another caller of this run who waits on (keepPlace).
    if (terms.keepPlace === true) books.requeueWaiter(request.run, place.leaseExpiresAtMs);
    else books.deleteWaiter(request.run);
    return { ok: false, refusal: timedOutRefusal(outcome.refusal, ahead, request.atMs - place.enqueuedAtMs) };
  }
  books.requeueWaiter(request.run, Math.max(place.leaseExpiresAtMs, request.atMs + terms.leaseMs));
  return { ok: false, waiting: true, run: request.run, position: ahead, enqueuedAtMs: place.enqueuedAtMs };
}

/**
 * A waiter's caller gave up (store.ts `cancelWaiter`): a waiting row is removed; a grant written
 * but not collected is withdrawn (slot and hold given back, the run erased) and the room goes to
 * the next waiters in this transaction.
 */
export function cancelWaiter(queues: QueueBooks, tenant: string, request: { readonly run: string; readonly atMs: number }): Granting<CancelOutcome> {
  const books = queues.tenant(tenant);
  const place = books.waiter(request.run);
  if (place === null) return { outcome: 'absent', granted: [] };
  books.deleteWaiter(request.run);
  if (place.state !== 'granted') return { outcome: 'cancelled', granted: [] };
  books.eraseRun(request.run);
  return { outcome: 'grant-withdrawn', granted: grantWaiters(queues, tenant, request.atMs) };
}

/**
 * The sweep of the queue (store.ts `sweepWaiters`): waiters whose lease lapsed at `atMs` are
 * removed, a lapsed grant nobody collected is withdrawn, and the room goes to the next waiters.
 */
export function sweepWaiters(queues: QueueBooks, tenant: string, atMs: number): Granting<WaiterSweep> {
  const books = queues.tenant(tenant);
  let expired = 0;
  let recovered = 0;
  for (const lapsed of books.lapsedWaiters(atMs)) {
    books.deleteWaiter(lapsed.run);
    if (lapsed.state === 'granted') {
      books.eraseRun(lapsed.run);
      recovered += 1;
    } else {
      expired += 1;
    }
  }
  const granted = grantWaiters(queues, tenant, atMs);
  return { outcome: { expired, recovered, granted: granted.length }, granted };
}
