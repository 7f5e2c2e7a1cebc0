import { holdFor } from '../../core/budget.js';
import { isQuotaError } from '../../core/errors.js';
import { periodKey } from '../../core/period.js';
import { UNLIMITED_QUOTA } from '../../core/quota.js';
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
import { spendRefusal } from './sqlite-reserve.js';

/*
 * Waiting admissions on SQLite (issue 12, DESIGN.md decision 18). Every body runs inside the
 * caller's `BEGIN IMMEDIATE` transaction, so the queue, the slots and the grants are decided under
 * one write lock across every process on the file. A waiter holds no lock while it waits: it is a
 * row, and its caller comes back to collect.
 */

const NEXT_WAITING = `SELECT run_id, seq, request_json, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND seq > @after AND state = 'waiting' ORDER BY seq LIMIT 1`;
const SELECT_WAITER = `SELECT run_id, seq, state, enqueued_at_ms, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND run_id = @run`;
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
const SELECT_REGISTERED = 'SELECT 1 AS found FROM quota_runs WHERE tenant = @tenant AND run_id = @run';
const ERASE_SLOT = 'DELETE FROM quota_running WHERE tenant = @tenant AND run_id = @run';
const ERASE_HOLD = 'DELETE FROM quota_reserved WHERE tenant = @tenant AND run_id = @run';
const ERASE_PASSES = 'DELETE FROM quota_passes WHERE tenant = @tenant AND run_id = @run';
const ERASE_RUN = 'DELETE FROM quota_runs WHERE tenant = @tenant AND run_id = @run';

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

/**
 * Grants the tenant's waiters, first come first served, into whatever room there is at `atMs`:
 * each live waiter in queue order is admitted as the admission it asked for (halts, quota, hold,
 * reserve: the whole decision of `admit`). Admitted → `granted` (its run and pass 1 are in the
 * books for its caller to collect). Refused `TooManyRuns` → the queue stops there: nobody behind
 * it may take a slot ahead of it. Refused otherwise (a halt, spend, a run id taken meanwhile) →
 * `refused`, and its caller gets that answer when it collects. A waiter whose lease lapsed is
 * removed (its caller is gone). Answers the run ids granted.
 */
export function grantWaitersInTransaction(conn: SqliteConnection, tenant: string, atMs: number): string[] {
  const granted: string[] = [];
  let after = 0;
  for (;;) {
    const row = conn.get<WaitingRow>(NEXT_WAITING, { tenant, after });
    if (row === undefined) return granted;
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
      return granted;
    } else {
      conn.run(DECIDE_WAITER, { ...key, state: 'refused', atMs });
    }
  }
}

/** Admission as `admit` decides it, after the tenant's waiters were served: no later arrival goes first. */
export function admitInTurnInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest): { outcome: ReturnType<typeof admitNowInTransaction>; granted: string[] } {
  const granted = grantWaitersInTransaction(conn, tenant, request.atMs);
  return { outcome: admitNowInTransaction(conn, tenant, request), granted };
}

// The SpentOut an admission refused TooManyRuns would also meet, from the figures as they stand.
function spendBehindConcurrency(conn: SqliteConnection, tenant: string, request: AdmitRequest): SpentOutRefusal | null {
  const quota = request.quota ?? readStoredQuota(conn, tenant) ?? UNLIMITED_QUOTA;
  const held = holdFor(quota, request.budget, request.width);
  if (!held.ok || held.hold === null) return null;
  return spendRefusal(conn, tenant, quota, request.agent?.name ?? null, { period: periodKey(quota.period, request.atMs), amount: held.hold });
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
 * still waiting, when the caller's time is not up (`atMs` before `terms.untilMs`), has its lease renewed and hears its place.
 * Otherwise its row goes and the admission is answered as the books now stand, in this
 * transaction: a grant comes back as the admission's pass (a retry answered from the books);
 * a timed-out waiter gets the `TooManyRuns` refusal the store decides now, with its place and how
 * long it waited (or, if a slot freed in this very instant, the pass). A waiter whose row is gone
 * (its lease lapsed) is decided afresh, and waits again at the back when the caller's time is not up.
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
  const place = row.state === 'waiting' ? position(conn, tenant, row.seq, request.atMs) : 1;
  conn.run(DELETE_WAITER, key);
  const outcome = admitNowInTransaction(conn, tenant, request);
  if (!outcome.ok && outcome.refusal.code === 'TooManyRuns') {
    return { outcome: { ok: false, refusal: timedOutRefusal(outcome.refusal, place, request.atMs - row.enqueued_at_ms) }, granted };
  }
  return { outcome, granted };
}

// A grant nobody collected: the run never started, so its slot, hold, pass and registry row go.
function withdrawGrant(conn: SqliteConnection, tenant: string, run: string): void {
  const key = { tenant, run };
  conn.run(ERASE_SLOT, key);
  conn.run(ERASE_HOLD, key);
  conn.run(ERASE_PASSES, key);
  conn.run(ERASE_RUN, key);
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
