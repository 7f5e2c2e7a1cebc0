import { decideAdmitNow } from '../../core/lifecycle/admit-now.js';
import { decideHeartbeat, decideResume, decideSettlePass, fence, renewLease, requireOpenRun, withholdIfHalted } from '../../core/lifecycle/passes.js';
import { configuredRateCeilings } from '../../core/quota.js';
import { reserveRate } from '../../core/lifecycle/rate-decision.js';
import type {
  AdmitOutcome,
  AdmitRequest,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  ResumeOutcome,
  ResumeRequest,
  SettlePassOutcome,
  SettlePassRequest,
} from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/*
 * The run-lifecycle composites (store.ts): each runs inside one `BEGIN IMMEDIATE` transaction
 * opened by the tenant handle, and is decided by core/lifecycle/ on the tenant's SQLite books.
 */

/** Admission (store.ts `admit`), the waiting queue aside: core's `decideAdmitNow`. */
export function admitNowInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest): AdmitOutcome {
  return decideAdmitNow(new SqliteTenantBooks(conn, tenant), request);
}

/** A resume (store.ts `resume`, docs/design/rules.md#l15–#l17): core's `decideResume`. */
export function resumeInTransaction(conn: SqliteConnection, tenant: string, request: ResumeRequest): ResumeOutcome {
  return decideResume(new SqliteTenantBooks(conn, tenant), request);
}

/** The end of a pass (store.ts `settlePass`, docs/design/rules.md#l19–#l22): core's `decideSettlePass`. */
export function settlePassInTransaction(conn: SqliteConnection, tenant: string, request: SettlePassRequest): SettlePassOutcome {
  return decideSettlePass(new SqliteTenantBooks(conn, tenant), request);
}

/** A heartbeat (store.ts `heartbeat`): core's `decideHeartbeat`. */
export function heartbeatInTransaction(conn: SqliteConnection, tenant: string, request: HeartbeatRequest): HeartbeatOutcome {
  return decideHeartbeat(new SqliteTenantBooks(conn, tenant), request);
}

/**
 * A run's dispatch (store.ts `dispatch`): the run must be open; with `epoch` the pass is fenced; a
 * subject halt on the chain answers `Withheld` and counts nothing; with `epoch` the lease is
 * renewed; then the caller's ceilings plus the stored quota's ceilings for the grant, read in this
 * transaction, go through the `reserveRate` body.
 */
export function dispatchInTransaction(conn: SqliteConnection, tenant: string, request: DispatchRequest): DispatchOutcome {
  const books = new SqliteTenantBooks(conn, tenant);
  const record = requireOpenRun(books, request.run, 'dispatch');
  const lease = request.epoch !== undefined ? fence(books, record, request.epoch, 'dispatch') : null;
  const withheld = withholdIfHalted(books, record, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  if (request.epoch !== undefined && request.leaseMs !== undefined && lease !== null) {
    renewLease(books, record, request.epoch, lease.leaseExpiresAtMs, request.atMs, request.leaseMs);
  }
  const configured = configuredRateCeilings(books.storedQuota(), request.grant);
  return reserveRate(books, tenant, {
    grant: request.grant,
    run: request.run,
    dispatch: request.dispatch,
    ceilings: [...request.ceilings, ...configured],
    atMs: request.atMs,
    exempt: request.exempt,
  });
}
