import { holdFor } from '../../core/budget.js';
import { isQuotaError } from '../../core/errors.js';
import { periodKey } from '../../core/period.js';
import { holdQuotaFor, UNLIMITED_QUOTA } from '../../core/quota.js';
import type { SpentOutRefusal } from '../../core/refusal.js';
import type { AdmitRequest } from '../types.js';
import {
  timedOutRefusal,
  waiterRequest,
  waiterRequestJson,
  type CancelOutcome,
  type WaitOutcome,
  type WaitQueue,
  type WaiterSweep,
  type WaitTerms,
} from '../waiters.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { admitNowInTransaction } from './sqlite-lifecycle.js';
import { readStoredQuota } from './sqlite-quota.js';
import { spendRefusal } from '../../core/lifecycle/reserve.js';
import { readPlaneCeiling, SqliteTenantBooks } from './sqlite-tenant-books.js';
import { requeueLapsedGrant as requeueLapsedGrantOnBooks } from '../../core/lifecycle/waiter-grants.js';
import { REQUEUE_WAITER } from './sqlite-queries.js';
import { tenantWeight, type PlaneCeiling } from '../../core/plane-ceiling.js';

/*
 * Waiting admissions on SQLite. Every body runs inside the
 * caller's `BEGIN IMMEDIATE` transaction, so the queue, the slots and the grants are decided under
 * one write lock across every process on the file. A waiter holds no lock while it waits: it is a
 * row, and its caller comes back to collect.
 */

const NEXT_WAITING = `SELECT run_id, seq, request_json, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND seq > @after AND state = 'waiting' ORDER BY seq LIMIT 1`;
const SELECT_WAITER = `SELECT run_id, seq, state, enqueued_at_ms, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND run_id = @run`;
const SELECT_WAITER_WHOLE = `SELECT tenant, run_id AS run, seq, state, request_json AS requestJson, enqueued_at_ms AS enqueuedAtMs,
    wait_until_ms AS waitUntilMs, lease_expires_at_ms AS leaseExpiresAtMs, decided_at_ms AS decidedAtMs
  FROM quota_waiters WHERE tenant = @tenant AND run_id = @run`;
const RESTORE_WAITER = `INSERT INTO quota_waiters
  (tenant, run_id, seq, state, request_json, enqueued_at_ms, wait_until_ms, lease_expires_at_ms, decided_at_ms)
  VALUES (@tenant, @run, @seq, @state, @requestJson, @enqueuedAtMs, @waitUntilMs, @leaseExpiresAtMs, @decidedAtMs)`;
const INSERT_WAITER = `INSERT INTO quota_waiters
  (tenant, run_id, seq, state, request_json, enqueued_at_ms, wait_until_ms, lease_expires_at_ms)
  VALUES (@tenant, @run, coalesce((SELECT max(seq) FROM quota_waiters WHERE tenant = @tenant), 0) + 1, 'waiting',
          @requestJson, @atMs, @untilMs, @leaseExpiresAtMs)`;
const DECIDE_WAITER = `UPDATE quota_waiters SET state = @state, decided_at_ms = @atMs WHERE tenant = @tenant AND run_id = @run`;
const RENEW_WAITER = `UPDATE quota_waiters SET lease_expires_at_ms = max(lease_expires_at_ms, @leaseExpiresAtMs)
  WHERE tenant = @tenant AND run_id = @run`;
const DELETE_WAITER = 'DELETE FROM quota_waiters WHERE tenant = @tenant AND run_id = @run';
const COUNT_AHEAD = `SELECT count(*) AS ahead FROM quota_waiters
  WHERE tenant = @tenant AND state = 'waiting' AND lease_expires_at_ms > @atMs AND seq < @seq`;
const LAPSED_WAITERS = `SELECT run_id, state FROM quota_waiters WHERE tenant = @tenant AND lease_expires_at_ms <= @atMs ORDER BY seq`;
const QUEUE_FIGURES = `SELECT
    coalesce(sum(state = 'waiting' AND lease_expires_at_ms > @atMs), 0) AS depth,
    min(CASE WHEN state = 'waiting' AND lease_expires_at_ms > @atMs THEN enqueued_at_ms END) AS oldest,
    coalesce(sum(state = 'granted'), 0) AS uncollected
  FROM quota_waiters WHERE tenant = @tenant`;
const WAITING_TENANTS = `SELECT DISTINCT tenant FROM quota_waiters
  WHERE state = 'waiting' AND lease_expires_at_ms > @atMs ORDER BY tenant`;
const SELECT_TURN = 'SELECT vtime FROM quota_wait_turns WHERE tenant = @tenant';
const UPSERT_TURN = `INSERT INTO quota_wait_turns (tenant, vtime) VALUES (@tenant, @vtime)
  ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime`;
const SELECT_REGISTERED = 'SELECT 1 AS found FROM quota_runs WHERE tenant = @tenant AND run_id = @run';

interface WaitingRow {
  readonly run_id: string;
  readonly seq: number;
  readonly request_json: string;
  readonly lease_expires_at_ms: number;
}

interface WaiterRow {
  readonly run_id: string;
  readonly seq: number;
  readonly state: 'waiting' | 'granted' | 'refused';
  readonly enqueued_at_ms: number;
  readonly lease_expires_at_ms: number;
}

/** Why a pass over one tenant's queue stopped. */
type QueueStop = 'empty' | 'limit' | 'tenant-full' | 'plane-full';

/**
 * Grants the tenant's waiters, first come first served, into whatever room there is at `atMs`, at
 * most `limit` of them: each live waiter in queue order is admitted as the admission it asked for
 * (halts, quota, hold, reserve: the whole decision of `admit`). Admitted → `granted` (its run and
 * pass 1 are in the books for its caller to collect). Refused `TooManyRuns` by the tenant's or the
 * plane's ceiling → the pass stops there: nobody behind it may take a slot ahead of it. Refused
 * `TooManyRuns` by a ceiling on its own agent (in the tenant or plane-wide) → it keeps its place
 * and the pass goes on to the next (no head-of-line blocking). Refused otherwise (a halt, spend, a
 * run id taken meanwhile) → `refused`, and its caller gets that answer when it collects. A waiter
 * whose lease lapsed is removed (its caller is gone).
 */
function grantQueue(conn: SqliteConnection, tenant: string, atMs: number, limit: number): { granted: string[]; stop: QueueStop } {
  const granted: string[] = [];
  let after = 0;
  for (;;) {
    if (granted.length >= limit) return { granted, stop: 'limit' };
    // The head of the queue is read once while nothing writes the queue (`cachedInWrite`):
    // most admissions and settles find it empty.
    const row =
      after === 0
        ? conn.cachedInWrite(`queue-head:${tenant}`, () => conn.get<WaitingRow>(NEXT_WAITING, { tenant, after }))
        : conn.get<WaitingRow>(NEXT_WAITING, { tenant, after });
    if (row === undefined) return { granted, stop: 'empty' };
    after = row.seq;
    const key = { tenant, run: row.run_id };
    if (row.lease_expires_at_ms <= atMs) {
      conn.run(DELETE_WAITER, key);
      continue;
    }
    if (conn.get(SELECT_REGISTERED, key) !== undefined) {
      conn.run(DECIDE_WAITER, { ...key, state: 'refused', atMs });
      continue;
    }
    let outcome;
    try {
      outcome = admitNowInTransaction(conn, tenant, waiterRequest(tenant, row.request_json, atMs));
    } catch (error) {
      // Thrown before any write (an amount beyond the bound): its caller hears it on collect.
      if (!isQuotaError(error, 'INVALID_ARGUMENT') && !isQuotaError(error, 'CONFLICT')) throw error;
      conn.run(DECIDE_WAITER, { ...key, state: 'refused', atMs });
      continue;
    }
    if (outcome.ok) {
      conn.run(DECIDE_WAITER, { ...key, state: 'granted', atMs });
      granted.push(row.run_id);
    } else if (outcome.refusal.code === 'TooManyRuns') {
      const bound = outcome.refusal.bound;
      if (bound === 'tenant') return { granted, stop: 'tenant-full' };
      if (bound === 'plane') return { granted, stop: 'plane-full' };
      // Held back only by its own agent's ceiling: the waiters behind it may still fit.
    } else {
      conn.run(DECIDE_WAITER, { ...key, state: 'refused', atMs });
    }
  }
}

/** Virtual time a grant costs a tenant of weight 1 in the round robin; a weight-w tenant pays 1/w of it. */
const TURN_COST = 1_000_000;
/** The key of the plane's own virtual time in `quota_wait_turns`. */
const PLANE_TURN = '*';

function vtime(conn: SqliteConnection, tenant: string): number {
  return conn.get<{ vtime: number }>(SELECT_TURN, { tenant })?.vtime ?? 0;
}

/**
 * The waiters of every tenant, in turn, while the plane-wide ceiling binds:
 * start-time fair queueing over the tenants that have live waiters. The tenant whose turn starts
 * earliest (its virtual time, never below the plane's) gets the next grant, the first in its own
 * queue that fits (`grantQueue`, one grant); its virtual time then moves on by
 * `TURN_COST / weight` (weights from the plane ceiling, default 1), so under a plane ceiling every
 * backlogged tenant gets its share of freed slots whatever its demand. A tenant whose own ceilings
 * hold its waiters back is passed over; the round ends when the plane is full or nobody fits.
 */
function grantInTurn(conn: SqliteConnection, plane: PlaneCeiling, atMs: number): string[] {
  const woken: string[] = [];
  const passedOver = new Set<string>();
  for (;;) {
    const tenants = conn
      .all<{ tenant: string }>(WAITING_TENANTS, { atMs })
      .map((row) => row.tenant)
      .filter((tenant) => !passedOver.has(tenant));
    if (tenants.length === 0) return woken;
    const planeTime = vtime(conn, PLANE_TURN);
    let next = tenants[0] as string;
    let nextStart = Math.max(vtime(conn, next), planeTime);
    for (const tenant of tenants.slice(1)) {
      const start = Math.max(vtime(conn, tenant), planeTime);
      if (start < nextStart) {
        next = tenant;
        nextStart = start;
      }
    }
    const { granted, stop } = grantQueue(conn, next, atMs, 1);
    if (granted.length > 0) {
      woken.push(next);
      conn.run(UPSERT_TURN, { tenant: next, vtime: nextStart + Math.max(1, Math.floor(TURN_COST / tenantWeight(plane, next))) });
      conn.run(UPSERT_TURN, { tenant: PLANE_TURN, vtime: nextStart });
      continue;
    }
    if (stop === 'plane-full') return woken;
    passedOver.add(next);
  }
}

/**
 * Serves the waiting queues at `atMs` after a slot of `tenant` freed or before it admits:
 * under a plane-wide `maxConcurrentRuns`, every tenant's waiters in turn (`grantInTurn`), since a
 * slot freed anywhere is a plane slot; otherwise the tenant's own queue, first come first served.
 * Answers, per grant, the tenant whose waiter it went to (to count them and wake their callers).
 */
export function grantWaitersInTransaction(conn: SqliteConnection, tenant: string, atMs: number): string[] {
  const plane = readPlaneCeiling(conn);
  if (plane?.maxConcurrentRuns !== undefined) return grantInTurn(conn, plane, atMs);
  return grantQueue(conn, tenant, atMs, Number.POSITIVE_INFINITY).granted.map(() => tenant);
}

/**
 * Serves every tenant's queue at `atMs` (a plane-wide ceiling changed): in turn under a
 * plane-wide `maxConcurrentRuns`, else each tenant's own queue in tenant order. Answers, per grant,
 * the tenant it went to.
 */
export function grantEveryQueueInTransaction(conn: SqliteConnection, atMs: number): string[] {
  const plane = readPlaneCeiling(conn);
  if (plane?.maxConcurrentRuns !== undefined) return grantInTurn(conn, plane, atMs);
  return conn
    .all<{ tenant: string }>(WAITING_TENANTS, { atMs })
    .flatMap(({ tenant }) => grantQueue(conn, tenant, atMs, Number.POSITIVE_INFINITY).granted.map(() => tenant));
}

/** Admission as `admit` decides it, after the tenant's waiters were served: no later arrival goes first. */
export function admitInTurnInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest): { outcome: ReturnType<typeof admitNowInTransaction>; granted: string[] } {
  const granted = grantWaitersInTransaction(conn, tenant, request.atMs);
  return { outcome: admitNowInTransaction(conn, tenant, request), granted };
}

// The SpentOut an admission refused TooManyRuns would also meet, from the figures as they stand.
function spendBehindConcurrency(conn: SqliteConnection, tenant: string, request: AdmitRequest): SpentOutRefusal | null {
  const quota = request.quota ?? readStoredQuota(conn, tenant) ?? UNLIMITED_QUOTA;
  const agent = request.agent?.name ?? null;
  // Held as `admit` holds it: a unit its agent's spend ceiling bounds is held even when the tenant
  // bounds none.
  const held = holdFor(holdQuotaFor(quota, agent), request.budget, request.width);
  if (!held.ok || held.hold === null) return null;
  return spendRefusal(new SqliteTenantBooks(conn, tenant), quota, agent, { period: periodKey(quota.period, request.atMs), amount: held.hold });
}

function position(conn: SqliteConnection, tenant: string, seq: number, atMs: number): number {
  const row = conn.get<{ ahead: number }>(COUNT_AHEAD, { tenant, seq, atMs });
  return (row?.ahead ?? 0) + 1;
}

function waiting(conn: SqliteConnection, tenant: string, run: string, atMs: number): WaitOutcome {
  const row = conn.get<WaiterRow>(SELECT_WAITER, { tenant, run });
  if (row === undefined) throw new Error(`waiter ${run} vanished inside its own transaction`);
  return { ok: false, waiting: true, run, position: position(conn, tenant, row.seq, atMs), enqueuedAtMs: row.enqueued_at_ms };
}

/**
 * A waiting admission (store.ts `admitOrWait`): the admission is decided as `admit` decides it
 * (the queue served first); only a `TooManyRuns` refusal puts it in the queue instead, with a lease
 * of `terms.leaseMs`. A run already waiting keeps its place (its lease renewed).
 */
export function admitOrWaitInTransaction(
  conn: SqliteConnection,
  tenant: string,
  request: AdmitRequest,
  terms: WaitTerms,
): { outcome: WaitOutcome; granted: string[] } {
  const key = { tenant, run: request.run };
  const leaseExpiresAtMs = request.atMs + terms.leaseMs;
  if (conn.get<WaiterRow>(SELECT_WAITER, key) !== undefined) {
    return collectWaiterInTransaction(conn, tenant, request, terms);
  }
  const { outcome, granted } = admitInTurnInTransaction(conn, tenant, request);
  if (outcome.ok || outcome.refusal.code !== 'TooManyRuns') return { outcome, granted };
  // Concurrency is judged before spend: a hold that would not fit either is refused, never queued.
  const spentOut = spendBehindConcurrency(conn, tenant, request);
  if (spentOut !== null) return { outcome: { ok: false, refusal: spentOut }, granted };
  conn.run(INSERT_WAITER, {
    ...key,
    requestJson: waiterRequestJson(request),
    atMs: request.atMs,
    untilMs: terms.untilMs,
    leaseExpiresAtMs,
  });
  return { outcome: waiting(conn, tenant, request.run, request.atMs), granted };
}

/**
 * A waiter's caller comes back (store.ts `collectWaiter`): the queue is served first; a waiter
 * still waiting, when the caller's time is not up (`atMs` before `terms.untilMs`), has its lease
 * renewed and hears its place. Otherwise its row goes and the admission is answered as the books
 * now stand, in this transaction: a grant comes back as the admission's pass (a retry answered from
 * the books); a timed-out waiter gets the `TooManyRuns` refusal the store decides now, with its
 * place and how long it waited (or, if a slot freed in this very instant, the pass). A waiter whose
 * row is gone (its lease lapsed) is decided afresh, and waits again at the back when the caller's
 * time is not up. A waiter the grant loop refused is answered by `collectRefused`.
 */
export function collectWaiterInTransaction(
  conn: SqliteConnection,
  tenant: string,
  request: AdmitRequest,
  terms: WaitTerms,
): { outcome: WaitOutcome; granted: string[] } {
  const key = { tenant, run: request.run };
  const final = request.atMs >= terms.untilMs;
  const granted = grantWaitersInTransaction(conn, tenant, request.atMs);
  const row = conn.get<WaiterRow>(SELECT_WAITER, key);
  if (row === undefined) {
    if (final) return { outcome: admitNowInTransaction(conn, tenant, request), granted };
    const again = admitOrWaitInTransaction(conn, tenant, request, terms);
    return { outcome: again.outcome, granted: [...granted, ...again.granted] };
  }
  if (row.state === 'waiting' && !final) {
    conn.run(RENEW_WAITER, { ...key, leaseExpiresAtMs: request.atMs + terms.leaseMs });
    return { outcome: waiting(conn, tenant, request.run, request.atMs), granted };
  }
  if (row.state === 'refused') return { outcome: collectRefused(conn, tenant, request, terms, row), granted };
  if (row.state === 'granted' && requeueLapsedGrant(conn, tenant, request.run, request.atMs, request.atMs + terms.leaseMs)) {
    // Its grant lapsed before it came for it: it stands in its place again, and is served afresh.
    const again = collectWaiterInTransaction(conn, tenant, request, terms);
    return { outcome: again.outcome, granted: [...granted, ...again.granted] };
  }
  const place = row.state === 'waiting' ? position(conn, tenant, row.seq, request.atMs) : 1;
  // Another caller of this run waits on (keepPlace): if room still refuses, the place stays.
  const whole = row.state === 'waiting' && terms.keepPlace === true ? conn.get<Record<string, string | number | null>>(SELECT_WAITER_WHOLE, key) : undefined;
  conn.run(DELETE_WAITER, key);
  const outcome = admitNowInTransaction(conn, tenant, request);
  if (!outcome.ok && outcome.refusal.code === 'TooManyRuns') {
    if (whole !== undefined) conn.run(RESTORE_WAITER, whole);
    return { outcome: { ok: false, refusal: timedOutRefusal(outcome.refusal, place, request.atMs - row.enqueued_at_ms) }, granted };
  }
  return { outcome, granted };
}

/**
 * A waiter the grant loop refused for a reason other than room (a halt, spend, a budget the quota
 * cannot bound) hears that reason, never a `TooManyRuns` decided later because a waiter behind it
 * took the slot meanwhile. The reason is judged again the way the grant loop judged it, with room
 * left out: halts and `Unbounded` come before room in every admission, and spend, judged after
 * room, is probed on its own (`spendBehindConcurrency`). If nothing but room refuses it any more
 * (the halt was lifted, holds were given back), it goes back to waiting in its original place, or,
 * when its time is up, gets the `TooManyRuns` refusal with that place.
 */
function collectRefused(conn: SqliteConnection, tenant: string, request: AdmitRequest, terms: WaitTerms, row: WaiterRow): WaitOutcome {
  const key = { tenant, run: request.run };
  const outcome = admitNowInTransaction(conn, tenant, request);
  if (outcome.ok || outcome.refusal.code !== 'TooManyRuns') {
    conn.run(DELETE_WAITER, key);
    return outcome;
  }
  const spentOut = spendBehindConcurrency(conn, tenant, request);
  if (spentOut !== null) {
    conn.run(DELETE_WAITER, key);
    return { ok: false, refusal: spentOut };
  }
  const place = position(conn, tenant, row.seq, request.atMs);
  if (request.atMs >= terms.untilMs) {
    // The place stays, waiting again, for another caller of this run who waits on (keepPlace).
    if (terms.keepPlace === true) conn.run(REQUEUE_WAITER, { ...key, leaseExpiresAtMs: row.lease_expires_at_ms });
    else conn.run(DELETE_WAITER, key);
    return { ok: false, refusal: timedOutRefusal(outcome.refusal, place, request.atMs - row.enqueued_at_ms) };
  }
  conn.run(REQUEUE_WAITER, { ...key, leaseExpiresAtMs: request.atMs + terms.leaseMs });
  return { ok: false, waiting: true, run: request.run, position: place, enqueuedAtMs: row.enqueued_at_ms };
}

/**
 * core's `requeueLapsedGrant` (docs/design/rules.md#w18, #w19) on the tenant's books, inside the
 * caller's `BEGIN IMMEDIATE` transaction.
 */
export function requeueLapsedGrant(conn: SqliteConnection, tenant: string, run: string, atMs: number, leaseExpiresAtMs: number): boolean {
  return requeueLapsedGrantOnBooks(new SqliteTenantBooks(conn, tenant), run, atMs, leaseExpiresAtMs);
}

// A grant nobody collected: the run never started, so its slot, hold, passes and registry row go.
function withdrawGrant(conn: SqliteConnection, tenant: string, run: string): void {
  new SqliteTenantBooks(conn, tenant).eraseRun(run);
}

/**
 * A waiter's caller gave up (store.ts `cancelWaiter`): a waiting row is removed; a grant written
 * but not collected is withdrawn (slot and hold given back, the run erased) and the room goes to
 * the next waiters in this transaction.
 */
export function cancelWaiterInTransaction(
  conn: SqliteConnection,
  tenant: string,
  request: { run: string; atMs: number },
): { outcome: CancelOutcome; granted: string[] } {
  const key = { tenant, run: request.run };
  const row = conn.get<WaiterRow>(SELECT_WAITER, key);
  if (row === undefined) return { outcome: 'absent', granted: [] };
  conn.run(DELETE_WAITER, key);
  if (row.state !== 'granted') return { outcome: 'cancelled', granted: [] };
  withdrawGrant(conn, tenant, request.run);
  return { outcome: 'grant-withdrawn', granted: grantWaitersInTransaction(conn, tenant, request.atMs) };
}

/**
 * The sweep of the queue (store.ts `sweepWaiters`): waiters whose lease lapsed at `atMs` are
 * removed, a lapsed grant nobody collected is withdrawn, and the room goes to the next waiters.
 */
export function sweepWaitersInTransaction(
  conn: SqliteConnection,
  tenant: string,
  atMs: number,
): { outcome: WaiterSweep; granted: string[] } {
  let expired = 0;
  let recovered = 0;
  for (const row of conn.all<{ run_id: string; state: string }>(LAPSED_WAITERS, { tenant, atMs })) {
    conn.run(DELETE_WAITER, { tenant, run: row.run_id });
    if (row.state === 'granted') {
      withdrawGrant(conn, tenant, row.run_id);
      recovered += 1;
    } else {
      expired += 1;
    }
  }
  const granted = grantWaitersInTransaction(conn, tenant, atMs);
  return { outcome: { expired, recovered, granted: granted.length }, granted };
}

/** The tenant's queue at `atMs` (store.ts `waitQueue`). Read-only. */
export function readWaitQueue(conn: SqliteConnection, tenant: string, atMs: number): WaitQueue {
  const row = conn.get<{ depth: number; oldest: number | null; uncollected: number }>(QUEUE_FIGURES, { tenant, atMs });
  return { depth: row?.depth ?? 0, oldestEnqueuedAtMs: row?.oldest ?? null, uncollected: row?.uncollected ?? 0 };
}
