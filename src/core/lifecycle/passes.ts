import { saturatingAdd } from '../amounts.js';
import { QuotaError } from '../errors.js';
import { hasOverrun, overrunOf } from '../overrun.js';
import { overrunEvent } from '../run-events.js';
import { periodKey } from '../period.js';
import { dayOf } from '../period-books.js';
import { UNLIMITED_QUOTA } from '../quota.js';
import type { WithheldRefusal } from '../refusal.js';
import type { Spend } from '../spend.js';
import type { BooksReads, TenantBooks } from './books.js';
import { corrupt } from './corrupt.js';
import { applyReceipt, carryHold } from './hold-moves.js';
import { refuseIfPruned } from './refuse-pruned.js';
import { answerStoredReceipt } from './receipts.js';
import { closedRunError, fencePass, isClosedStatus, statusAfterSettle, withheldBy } from './run-rules.js';
import type {
  HeartbeatOutcome,
  HeartbeatRequest,
  PassGrant,
  QuotaSettlement,
  ResumeOutcome,
  ResumeRequest,
  RunRecord,
  SettlePassOutcome,
  SettlePassRequest,
} from './types.js';

/*
 * The decisions about an admitted run's passes (store.ts `resume`, `heartbeat`, `settlePass`, and
 * the fencing `dispatch` shares), written once against the tenant's books; each adapter runs them
 * inside one transaction.
 */

/** The registered run, or `NOT_FOUND` (or the pruned-run `CONFLICT`) saying to admit it first. */
function requireRun(books: BooksReads, run: string, verb: string): RunRecord {
  const record = books.run(run);
  if (record !== null) return record;
  refuseIfPruned(books, run, verb);
  throw new QuotaError('NOT_FOUND', `tenant '${books.tenant}' has no run '${run}' to ${verb}; admit it first`, {
    details: { tenant: books.tenant, run },
  });
}

/** A run that must exist and not be closed, for a resume or a dispatch. */
export function requireOpenRun(books: BooksReads, run: string, verb: string): RunRecord {
  const record = requireRun(books, run, verb);
  if (isClosedStatus(record.status)) throw closedRunError(books.tenant, run, record.status, verb);
  return record;
}

/**
 * The `Withheld` refusal for the run under a standing halt that reaches running work (a subject
 * halt on its chain, or one thrown with `reachesRunning` covering it; docs/design/rules.md#l47,
 * #c44), after marking the run withheld (the one write a `Withheld` answer makes), or `null`.
 */
export function withholdIfHalted(books: TenantBooks, record: RunRecord, atMs: number): WithheldRefusal | null {
  const refusal = withheldBy(books.tenant, books.halts(), { agent: record.agent ?? undefined, chain: record.chain ?? undefined });
  if (refusal !== null && record.status !== 'withheld') books.setRunStatus(record.run, 'withheld', atMs);
  return refusal;
}

/** Fences pass (run, epoch) as store.ts `heartbeat` steps 1–4 order it, and answers its stored lease. */
export function fence(books: BooksReads, record: RunRecord, epoch: number, verb: string): { readonly leaseExpiresAtMs: number } {
  const lease = books.passLease(record.run, epoch);
  fencePass({
    tenant: books.tenant,
    run: record.run,
    epoch,
    status: record.status,
    lastEpoch: record.lastEpoch,
    pass: lease === null ? undefined : { settledAtMs: lease.settledAtMs },
    verb,
  });
  return lease as { leaseExpiresAtMs: number };
}

/**
 * Renews the lease of a fenced pass to `max(current expiry, atMs + leaseMs)`, so a late-arriving
 * renewal never shortens it, and answers the expiry; a withheld run whose halt is gone runs again.
 */
export function renewLease(books: TenantBooks, record: RunRecord, epoch: number, currentExpiresAtMs: number, atMs: number, leaseMs: number): number {
  const leaseExpiresAtMs = Math.max(currentExpiresAtMs, saturatingAdd(atMs, leaseMs));
  if (leaseExpiresAtMs !== currentExpiresAtMs) books.setLease(record.run, epoch, leaseExpiresAtMs);
  if (record.status === 'withheld') books.setRunStatus(record.run, 'running', atMs);
  return leaseExpiresAtMs;
}

/** Records a pass; `knownHold` is the run's hold when the caller knows it (`undefined`: read it). */
export function openPass(
  books: TenantBooks,
  pass: { run: string; epoch: number; period: string; takesSlot: boolean; atMs: number; leaseMs: number },
  knownHold?: Spend | null,
): PassGrant {
  const hold = knownHold !== undefined ? knownHold : (books.hold(pass.run)?.amount ?? null);
  const leaseExpiresAtMs = saturatingAdd(pass.atMs, pass.leaseMs);
  books.insertPass({ run: pass.run, epoch: pass.epoch, period: pass.period, takesSlot: pass.takesSlot, atMs: pass.atMs, leaseExpiresAtMs, granted: hold });
  return { ok: true, run: pass.run, epoch: pass.epoch, period: pass.period, hold, leaseExpiresAtMs };
}

/**
 * A resume (store.ts `resume`, docs/design/rules.md#l15–#l17): never gated by concurrency, spend or
 * workload halts. A subject halt on the run's chain answers `Withheld` and opens nothing. Otherwise
 * the next epoch, no slot, the period of `atMs` under the tenant's stored quota, the hold carried
 * there whole, status `running`. Throws `NOT_FOUND` for an unknown run, `CONFLICT` for a closed
 * one.
 */
export function decideResume(books: TenantBooks, request: ResumeRequest): ResumeOutcome {
  const record = requireOpenRun(books, request.run, 'resume');
  const withheld = withholdIfHalted(books, record, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  const quota = books.storedQuota() ?? UNLIMITED_QUOTA;
  const period = periodKey(quota.period, request.atMs);
  carryHold(books, request.run, period, dayOf(period, request.atMs));
  const epoch = record.lastEpoch + 1;
  books.setRunEpoch(request.run, epoch, request.atMs);
  return openPass(books, { run: request.run, epoch, period, takesSlot: false, atMs: request.atMs, leaseMs: request.leaseMs });
}

/**
 * A heartbeat (store.ts `heartbeat`, docs/design/rules.md#l42–#l44): fences the pass, answers
 * `Withheld` under a subject halt on the chain (lease not renewed), else renews the lease.
 */
export function decideHeartbeat(books: TenantBooks, request: HeartbeatRequest): HeartbeatOutcome {
  const record = requireRun(books, request.run, 'heartbeat');
  const lease = fence(books, record, request.epoch, 'heartbeat');
  const withheld = withholdIfHalted(books, record, request.atMs);
  if (withheld !== null) return { ok: false, refusal: withheld };
  const leaseExpiresAtMs = renewLease(books, record, request.epoch, lease.leaseExpiresAtMs, request.atMs, request.leaseMs);
  return { ok: true, run: request.run, epoch: request.epoch, leaseExpiresAtMs };
}

/**
 * The end of a pass (store.ts `settlePass`, docs/design/rules.md#l19–#l22): the receipt is derived
 * from the pass (its period, whether it took the slot) and judged as `settle` judges it, with the
 * same conflict rule, against the receipt (run, epoch) already has. A new receipt is applied as
 * `settle` applies it and written into the pass (which also marks it settled), moves the status of
 * the run when this is its latest pass (`statusAfterSettle`; the instant moves only when the status
 * changes), and, for an operator's settle (`by`), appends the `run.settle` audit row; a pass that
 * overran its hold appends its `run.overran` event (docs/design/rules.md#e6). Throws
 * `NOT_FOUND` for an unknown pass.
 */
export function decideSettlePass(books: TenantBooks, request: SettlePassRequest): SettlePassOutcome {
  const pass = books.passToSettle(request.run, request.epoch);
  if (pass === null) {
    refuseIfPruned(books, request.run, 'settle');
    throw new QuotaError('NOT_FOUND', `tenant '${books.tenant}' has no pass ${request.run}/${request.epoch} to settle`, {
      details: { tenant: books.tenant, run: request.run, epoch: request.epoch },
    });
  }
  const receipt: QuotaSettlement = {
    run: request.run,
    epoch: request.epoch,
    period: pass.period,
    spend: request.spend,
    releaseSlot: pass.takesSlot,
    concludes: request.concludes,
  };
  const overrun = overrunOf(request.spend, pass.granted);
  let outcome: SettlePassOutcome['outcome'];
  if (pass.receipt !== undefined) outcome = answerStoredReceipt(books.tenant, pass.receipt, receipt);
  else {
    // A receipt a prune removed must not be written again as if new.
    if (pass.pruned) refuseIfPruned(books, request.run, 'settle');
    const run = pass.run;
    if (run === null) throw corrupt(books.tenant, `pass ${request.run}/${request.epoch} without its run`);
    applyReceipt(books, receipt, dayOf(pass.period, pass.startedAtMs), run.agent?.name ?? null, request.atMs);
    books.recordPassReceipt(request.run, request.epoch, request.atMs, request.spend, request.concludes);
    const status = statusAfterSettle(run.status, request.concludes);
    if (run.lastEpoch === request.epoch && status !== run.status) books.setRunStatus(request.run, status, request.atMs);
    if (request.by !== undefined) {
      books.appendAudit({
        atMs: request.atMs,
        by: request.by,
        action: 'run.settle',
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
    outcome = 'settled';
    if (pass.granted !== null && hasOverrun(overrun)) {
      books.appendEvent(overrunEvent(books.tenant, request.run, request.epoch, run.agent?.name ?? null, pass.period, pass.granted, request.spend, overrun, request.atMs));
    }
  }
  return { outcome, receipt, overrun };
}
