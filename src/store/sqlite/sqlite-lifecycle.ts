import { saturatingAdd } from '../../core/amounts.js';
import { holdFor } from '../../core/budget.js';
import { QuotaError } from '../../core/errors.js';
import { overrunOf } from '../../core/overrun.js';
import { coveringHalt, haltScopeKey } from '../../core/halt-scope.js';
import { periodKey } from '../../core/period.js';
import { dayOf } from '../../core/period-books.js';
import { unboundedRefusal } from '../../core/admission-ceilings.js';
import { configuredRateCeilings, holdQuotaFor, UNLIMITED_QUOTA } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import { closedRunError, fencePass, isClosedStatus, statusAfterSettle, withheldBy } from '../pass-rules.js';
import type {
  AdmitOutcome,
  AdmitRequest,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  PassGrant,
  QuotaSettlement,
  ResumeOutcome,
  ResumeRequest,
  RunStatus,
  SettlePassOutcome,
  SettlePassRequest,
} from '../types.js';
import { admissionRetryInTransaction } from './sqlite-admit-retry.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import { carryHold } from './sqlite-books.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { readHalts } from './sqlite-halts.js';
import { MARK_RUN_RUNNING_AGAIN, MARK_RUN_WITHHELD, RENEW_LEASE, SELECT_PASS_LEASE } from './sqlite-lease-queries.js';
import {
  INSERT_PASS,
  INSERT_RUN,
  RECORD_PASS_RECEIPT,
  SELECT_HOLD,
  SELECT_PASS_TO_SETTLE,
  SELECT_RUN,
  UPDATE_RUN_PASS,
  UPDATE_RUN_STATUS_IF_LATEST,
} from './sqlite-queries.js';
import { readStoredQuota } from './sqlite-quota.js';
import { reserveRateInTransaction } from './sqlite-rate.js';
import { reserveTakingHold } from './sqlite-reserve.js';
import { refuseIfPruned } from './sqlite-retention.js';
import { corrupt, decodeRun, decodeSpend, type RunRow } from '../rows.js';
import { answerStoredReceipt, applyReceipt, storedReceipt, type ReceiptColumns } from './sqlite-settle.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * The run-lifecycle composites (store.ts): each body runs inside one
 * `BEGIN IMMEDIATE` transaction opened by the tenant handle, and every decision in it is a pure
 * function of `core/`.
 */

// What SELECT_PASS_TO_SETTLE reads: the pass, its receipts, and its run (columns NULL without one).
interface PassToSettleRow extends ReceiptColumns, Omit<RunRow, 'run_id' | 'status' | 'last_epoch' | 'admitted_at_ms'> {
  readonly period: string;
  readonly takes_slot: number;
  readonly started_at_ms: number;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
  readonly run_id: string | null;
  readonly status: string | null;
  readonly last_epoch: number | null;
  readonly admitted_at_ms: number | null;
  readonly pruned: number;
}

function currentHold(conn: SqliteConnection, tenant: string, run: string): Spend | null {
  const row = conn.get<{ tokens: number; minor_units: number }>(SELECT_HOLD, { tenant, run });
  return row === undefined ? null : decodeSpend(tenant, `the hold of run '${run}'`, row.tokens, row.minor_units);
}

// Records a pass; `knownHold` is the run's hold when the caller knows it (`undefined`: read it).
function openPass(
  conn: SqliteConnection,
  tenant: string,
  pass: { run: string; epoch: number; period: string; takesSlot: boolean; atMs: number; leaseMs: number },
  knownHold?: Spend | null,
): PassGrant {
  const hold = knownHold !== undefined ? knownHold : currentHold(conn, tenant, pass.run);
  const leaseExpiresAtMs = saturatingAdd(pass.atMs, pass.leaseMs);
  conn.run(INSERT_PASS, {
    tenant,
    run: pass.run,
    epoch: pass.epoch,
    period: pass.period,
    takesSlot: pass.takesSlot ? 1 : 0,
    atMs: pass.atMs,
    leaseExpiresAtMs,
    holdTokens: hold?.tokens ?? null,
    holdMinorUnits: hold?.minorUnits ?? null,
  });
  return { ok: true, run: pass.run, epoch: pass.epoch, period: pass.period, hold, leaseExpiresAtMs };
}

function readRunRow(conn: SqliteConnection, tenant: string, run: string): RunRow | undefined {
  return conn.get<RunRow>(SELECT_RUN, { tenant, run });
}

// A run that must exist and not be closed for a resume or a dispatch.
function requireOpenRun(conn: SqliteConnection, tenant: string, run: string, verb: string): RunRow {
  const row = readRunRow(conn, tenant, run);
  if (row === undefined) {
    refuseIfPruned(conn, tenant, run, verb);
    throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no run '${run}' to ${verb}; admit it first`, {
      details: { tenant, run },
    });
  }
  const status = decodeRun(tenant, row).status;
  if (isClosedStatus(status)) throw closedRunError(tenant, run, status, verb);
  return row;
}

// The Withheld refusal for this run, from the halts read in the caller's transaction, after
// marking the run withheld: the one write a Withheld answer makes.
function withholdIfHalted(conn: SqliteConnection, tenant: string, row: RunRow, atMs: number) {
  const refusal = withheldBy(tenant, readHalts(conn, tenant), decodeRun(tenant, row).chain);
  if (refusal !== null) conn.run(MARK_RUN_WITHHELD, { tenant, run: row.run_id, atMs });
  return refusal;
}

// Fences pass (run, epoch) as store.ts `heartbeat` steps 1–4 order it.
function fence(conn: SqliteConnection, tenant: string, row: RunRow, epoch: number, verb: string): void {
  const pass = conn.get<{ lease_expires_at_ms: number; settled_at_ms: number | null }>(SELECT_PASS_LEASE, {
    tenant,
    run: row.run_id,
    epoch,
  });
  fencePass({
    tenant,
    run: row.run_id,
    epoch,
    status: decodeRun(tenant, row).status,
    lastEpoch: row.last_epoch,
    pass: pass === undefined ? undefined : { settledAtMs: pass.settled_at_ms },
    verb,
  });
}

// Renews the lease of a fenced pass and answers its expiry; a withheld run whose halt is gone runs
// again.
function renewLease(conn: SqliteConnection, tenant: string, run: string, epoch: number, atMs: number, leaseMs: number): number {
  const key = { tenant, run, epoch };
  conn.run(RENEW_LEASE, { ...key, leaseExpiresAtMs: saturatingAdd(atMs, leaseMs) });
  conn.run(MARK_RUN_RUNNING_AGAIN, { tenant, run, atMs });
  const pass = conn.get<{ lease_expires_at_ms: number }>(SELECT_PASS_LEASE, key);
  if (pass === undefined) throw corrupt(tenant, `pass ${run}/${epoch} vanished inside its own transaction`);
  return pass.lease_expires_at_ms;
}

/**
 * Admission (store.ts `admit`) as it stands, the waiting queue aside (the
 * handle serves the queue first, `sqlite-waiters.ts`). A run id already registered is a retry,
 * answered from the books (`answerAdmissionRetry`: pass 1's grant only while it still holds what it
 * was granted, else `CONFLICT`). Otherwise:
 * halts (the narrowest covering one refuses `Halted`) → quota (explicit, else stored, else
 * unlimited) → hold formula (`Unbounded`) → reserve in the period of `atMs` → run and pass 1
 * recorded. Every refusal returns before the first write.
 */
export function admitNowInTransaction(conn: SqliteConnection, tenant: string, request: AdmitRequest): AdmitOutcome {
  const retried = admissionRetryInTransaction(conn, tenant, request);
  if (retried !== undefined) return retried;
  refuseIfPruned(conn, tenant, request.run, 'be admitted again');
  const halt = coveringHalt(readHalts(conn, tenant), { agent: request.agent, chain: request.chain });
  if (halt !== null) {
    return {
      ok: false,
      refusal: { code: 'Halted', tenant, scope: haltScopeKey(halt.scope), reason: halt.reason, by: halt.by, haltedAtMs: halt.atMs },
    };
  }
  const quota = request.quota ?? readStoredQuota(conn, tenant) ?? UNLIMITED_QUOTA;
  const agent = request.agent?.name ?? null;
  // A unit bounded by the tenant or by the run's agent is held.
  const held = holdFor(holdQuotaFor(quota, agent), request.budget, request.width);
  if (!held.ok) return { ok: false, refusal: unboundedRefusal(tenant, quota, agent, held.unit, held.field) };
  const period = periodKey(quota.period, request.atMs);
  const hold = held.hold === null ? null : { period, amount: held.hold };
  const reserved = reserveTakingHold(conn, tenant, { run: request.run, agent, quota, hold, atMs: request.atMs });
  if (!reserved.ok) return reserved;
  conn.run(INSERT_RUN, {
    tenant,
    run: request.run,
    agentName: request.agent?.name ?? null,
    agentDigest: request.agent?.digest ?? null,
    chainJson: request.chain === undefined ? null : JSON.stringify(request.chain),
    budgetJson: JSON.stringify(request.budget),
    width: request.width,
    atMs: request.atMs,
  });
  const pass = { run: request.run, epoch: 1, period, takesSlot: true, atMs: request.atMs, leaseMs: request.leaseMs };
  // The hold just taken is the run's hold; otherwise it holds what it held before, read back.
  return openPass(conn, tenant, pass, reserved.holdTaken && hold !== null ? hold.amount : undefined);
}

/**
 * A resume (store.ts `resume`, docs/design/rules.md#l15–#l17): never gated by concurrency, spend or
 * workload halts. A subject halt on the run's chain answers `Withheld` and opens nothing. Otherwise
 * the next epoch, no slot, the period of `atMs` under the tenant's stored quota, the hold carried
 * there whole, status `running`. Throws `NOT_FOUND` for an unknown run, `CONFLICT` for a closed
 * one.
 */
export function resumeInTransaction(conn: SqliteConnection, tenant: string, request: ResumeRequest): ResumeOutcome {
  const row = requireOpenRun(conn, tenant, request.run, 'resume');
  const withheld = withholdIfHalted(conn, tenant, row, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  const quota = readStoredQuota(conn, tenant) ?? UNLIMITED_QUOTA;
  const period = periodKey(quota.period, request.atMs);
  carryHold(conn, tenant, request.run, period, dayOf(period, request.atMs));
  const epoch = row.last_epoch + 1;
  conn.run(UPDATE_RUN_PASS, { tenant, run: request.run, epoch, atMs: request.atMs });
  return openPass(conn, tenant, { run: request.run, epoch, period, takesSlot: false, atMs: request.atMs, leaseMs: request.leaseMs });
}

/**
 * The end of a pass (store.ts `settlePass`, docs/design/rules.md#l19–#l22): the receipt is derived
 * from the pass row (its period, whether it took the slot) and judged as `settle` judges it, with
 * the same conflict rule, against the pass's own receipt or one the port's `settle` wrote for it. A
 * new receipt is applied as `settle` applies it and written into the pass row (which also marks the
 * pass settled), moves the status of the run when this is its latest pass (`statusAfterSettle`),
 * and, for an operator's settle (`by`), appends the `run.settle` audit row. One statement reads
 * everything this decides on. Throws `NOT_FOUND` for an unknown pass.
 */
export function settlePassInTransaction(conn: SqliteConnection, tenant: string, request: SettlePassRequest): SettlePassOutcome {
  const key = { tenant, run: request.run, epoch: request.epoch };
  const pass = conn.get<PassToSettleRow>(SELECT_PASS_TO_SETTLE, key);
  if (pass === undefined) {
    refuseIfPruned(conn, tenant, request.run, 'settle');
    throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no pass ${request.run}/${request.epoch} to settle`, {
      details: { tenant, run: request.run, epoch: request.epoch },
    });
  }
  const receipt: QuotaSettlement = {
    run: request.run,
    epoch: request.epoch,
    period: pass.period,
    spend: request.spend,
    releaseSlot: pass.takes_slot === 1,
    concludes: request.concludes,
  };
  const stored = storedReceipt(pass);
  const outcome = stored !== undefined ? answerStoredReceipt(tenant, stored, receipt) : settleAnew(conn, tenant, request, receipt, pass);
  const granted =
    pass.hold_tokens === null ? null : decodeSpend(tenant, 'a pass hold', pass.hold_tokens, pass.hold_minor_units);
  return { outcome, receipt, overrun: overrunOf(request.spend, granted) };
}

// A pass's first settle: the books move, the pass row takes its receipt, the run its status.
function settleAnew(conn: SqliteConnection, tenant: string, request: SettlePassRequest, receipt: QuotaSettlement, pass: PassToSettleRow): 'settled' {
  // A receipt a prune removed must not be written again as if new.
  if (pass.pruned === 1) refuseIfPruned(conn, tenant, request.run, 'settle');
  applyReceipt(conn, tenant, receipt, dayOf(pass.period, pass.started_at_ms), pass.agent_name);
  const key = { tenant, run: request.run, epoch: request.epoch };
  conn.run(RECORD_PASS_RECEIPT, {
    ...key,
    atMs: request.atMs,
    tokens: receipt.spend.tokens,
    minorUnits: receipt.spend.minorUnits,
    concludes: receipt.concludes ? 1 : 0,
  });
  if (pass.run_id === null) throw corrupt(tenant, `pass ${request.run}/${request.epoch} without its run`);
  const status: RunStatus = statusAfterSettle(decodeRun(tenant, pass as RunRow).status, request.concludes);
  conn.run(UPDATE_RUN_STATUS_IF_LATEST, { ...key, status, atMs: request.atMs });
  if (request.by !== undefined) {
    appendAuditInTransaction(conn, tenant, {
      atMs: request.atMs,
      by: request.by,
      action: 'run.settle' satisfies AuditAction,
      subject: request.run,
      detail: {
        epoch: receipt.epoch,
        period: receipt.period,
        spend: { tokens: receipt.spend.tokens, minorUnits: receipt.spend.minorUnits },
        releaseSlot: receipt.releaseSlot,
        concludes: receipt.concludes,
      },
    });
  }
  return 'settled';
}

/**
 * A run's dispatch (store.ts `dispatch`): the run must be open;
 * with `epoch` the pass is fenced; a subject halt on the chain answers `Withheld` and counts
 * nothing; with `epoch` the lease is renewed; then the caller's ceilings plus the stored quota's
 * ceilings for the grant, read in this transaction, go through the `reserveRate` body.
 */
export function dispatchInTransaction(conn: SqliteConnection, tenant: string, request: DispatchRequest): DispatchOutcome {
  const row = requireOpenRun(conn, tenant, request.run, 'dispatch');
  if (request.epoch !== undefined) fence(conn, tenant, row, request.epoch, 'dispatch');
  const withheld = withholdIfHalted(conn, tenant, row, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  if (request.epoch !== undefined && request.leaseMs !== undefined) {
    renewLease(conn, tenant, request.run, request.epoch, request.atMs, request.leaseMs);
  }
  const configured = configuredRateCeilings(readStoredQuota(conn, tenant), request.grant);
  return reserveRateInTransaction(conn, tenant, {
    grant: request.grant,
    run: request.run,
    dispatch: request.dispatch,
    ceilings: [...request.ceilings, ...configured],
    atMs: request.atMs,
    exempt: request.exempt,
  });
}

/**
 * A heartbeat (store.ts `heartbeat`): fences the pass, answers
 * `Withheld` under a subject halt on the chain (lease not renewed), else renews the lease.
 */
export function heartbeatInTransaction(conn: SqliteConnection, tenant: string, request: HeartbeatRequest): HeartbeatOutcome {
  const row = readRunRow(conn, tenant, request.run);
  if (row === undefined) {
    refuseIfPruned(conn, tenant, request.run, 'heartbeat');
    throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no run '${request.run}' to heartbeat; admit it first`, {
      details: { tenant, run: request.run },
    });
  }
  fence(conn, tenant, row, request.epoch, 'heartbeat');
  const withheld = withholdIfHalted(conn, tenant, row, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  const leaseExpiresAtMs = renewLease(conn, tenant, request.run, request.epoch, request.atMs, request.leaseMs);
  return { ok: true, run: request.run, epoch: request.epoch, leaseExpiresAtMs };
}
