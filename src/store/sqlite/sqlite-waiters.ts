import {
  admitInTurn,
  admitOrWait,
  cancelWaiter,
  collectWaiter,
  grantEveryQueue,
  grantWaiters,
  sweepWaiters,
  type Granting,
} from '../../core/lifecycle/waiting.js';
import type { AdmitOutcome, AdmitRequest } from '../types.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../waiters.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { QUEUE_FIGURES } from './sqlite-waiter-queries.js';
import { SqliteQueueBooks } from './sqlite-queue-books.js';

/*
 * Waiting admissions on SQLite, decided by core/lifecycle/waiting.ts on the books of every tenant
 * of the file (sqlite-queue-books.ts). Every body runs inside the caller's `BEGIN IMMEDIATE`
 * transaction, so the queue, the slots and the grants are decided under one write lock across
 * every process on the file. Mirrors postgres-waiters.ts.
 */

/** core's `grantWaiters` after a slot of `tenant` freed or before it admits. */
export function grantWaitersInTransaction(conn: SqliteConnection, tenant: string, atMs: number): string[] {
  return grantWaiters(new SqliteQueueBooks(conn), tenant, atMs);
}

/** core's `grantEveryQueue`: every tenant's queue served at `atMs` (a plane-wide ceiling changed). */
export function grantEveryQueueInTransaction(conn: SqliteConnection, atMs: number): string[] {
  return grantEveryQueue(new SqliteQueueBooks(conn), atMs);
}

/** core's `admitInTurn`: admission as `admit` decides it, after the tenant's waiters were served. */
export function admitInTurnInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest): Granting<AdmitOutcome> {
  return admitInTurn(new SqliteQueueBooks(conn), tenant, request);
}

/** core's `admitOrWait` (store.ts `admitOrWait`). */
export function admitOrWaitInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest, terms: WaitTerms): Granting<WaitOutcome> {
  return admitOrWait(new SqliteQueueBooks(conn), tenant, request, terms);
}

/** core's `collectWaiter` (store.ts `collectWaiter`). */
export function collectWaiterInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest, terms: WaitTerms): Granting<WaitOutcome> {
  return collectWaiter(new SqliteQueueBooks(conn), tenant, request, terms);
}

/** core's `cancelWaiter` (store.ts `cancelWaiter`). */
export function cancelWaiterInTransaction(conn: SqliteConnection, tenant: string, request: { run: string; atMs: number }): Granting<CancelOutcome> {
  return cancelWaiter(new SqliteQueueBooks(conn), tenant, request);
}

/** core's `sweepWaiters` (store.ts `sweepWaiters`). */
export function sweepWaitersInTransaction(conn: SqliteConnection, tenant: string, atMs: number): Granting<WaiterSweep> {
  return sweepWaiters(new SqliteQueueBooks(conn), tenant, atMs);
}

/** The tenant's queue at `atMs` (store.ts `waitQueue`). Read-only. */
export function readWaitQueue(conn: SqliteConnection, tenant: string, atMs: number): WaitQueue {
  const row = conn.get<{ depth: number; oldest: number | null; uncollected: number }>(QUEUE_FIGURES, { tenant, atMs });
  return { depth: row?.depth ?? 0, oldestEnqueuedAtMs: row?.oldest ?? null, uncollected: row?.uncollected ?? 0 };
}
