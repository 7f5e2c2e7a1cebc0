import { spendEquals, addSpend, ZERO_SPEND, type Spend } from '../../core/spend.js';
import type { Plane } from '../../plane/plane.js';
import { completionSettle, type PendingCompletion } from './completion-queue.js';
import type { RefusalCounts, ReplayInvariants } from './replay-types.js';

/**
 * What the replay itself did for one tenant. The invariants never trust these counters alone:
 * each is compared with what the store answers.
 */
export interface TenantLedger {
  readonly tenant: string;
  admitted: number;
  refused: RefusalCounts;
  /**
   * Largest slot count this tenant held right after one of its admissions: the replay's own count
   * (its answers applied in call order) or the store's, read whenever the replay compares them.
   */
  peakRunning: number;
  /** This tenant's runs the replay admitted and has not yet settled: the slots it holds. */
  heldByReplay: number;
  /**
   * False once the store, read at a check (after every admission through a server; every 100 rows
   * and after the last one on a local store), reported a slot count other than `heldByReplay`.
   */
  runningMatchedHeld: boolean;
  /** Settles the store answered `'settled'` (it wrote the receipt on that call). */
  receiptsWritten: number;
  /** Billing periods of this tenant's admissions. */
  readonly periods: Set<string>;
  /** What the replay sent to settle, per period of admission. */
  readonly settledByReplay: Map<string, Spend>;
}

/** The measured invariants, plus each tenant's settled total as the store reports it. */
export interface MeasuredInvariants {
  readonly invariants: ReplayInvariants;
  readonly settledByTenant: ReadonlyMap<string, Spend>;
}

/**
 * Measures the replay's invariants from the store once every run has settled (see
 * {@link ReplayInvariants}). First every settle is sent again, identically: the store must answer
 * each from the receipt it holds (`'already-settled'`) and apply nothing. Then, per tenant and per
 * period the replay touched, one `usage` read gives settled, reserved, running and the stored
 * quota, and each is compared with the ceilings and with what the replay settled.
 */
export async function measureInvariants(
  plane: Pick<Plane, 'settle' | 'usage'>,
  ledgers: readonly TenantLedger[],
  settledRuns: readonly PendingCompletion[],
): Promise<MeasuredInvariants> {
  let retriesAnsweredFromReceipts = true;
  for (const done of settledRuns) {
    const retry = await plane.settle(completionSettle(done));
    if (retry.outcome !== 'already-settled') retriesAnsweredFromReceipts = false;
  }

  let settledWithinCeiling = true;
  let runningWithinCeiling = true;
  let totalsMatch = true;
  let receiptsMatch = settledRuns.length === ledgers.reduce((sum, book) => sum + book.admitted, 0);
  let holdsReleased = true;
  let slotsReleased = true;
  const slotsHeldWhileRunning = ledgers.every((book) => book.runningMatchedHeld);
  const settledByTenant = new Map<string, Spend>();

  for (const book of ledgers) {
    const now = await plane.usage({ tenant: book.tenant });
    if (now.running !== 0) slotsReleased = false;
    const maxRuns = now.quota?.maxConcurrentRuns;
    if (maxRuns !== undefined && book.peakRunning > maxRuns) runningWithinCeiling = false;
    if (book.receiptsWritten !== book.admitted) receiptsMatch = false;

    let settled = ZERO_SPEND;
    const periods = new Set([...book.periods, ...book.settledByReplay.keys()]);
    for (const period of [...periods].sort()) {
      const figures = await plane.usage({ tenant: book.tenant, period });
      const tokenCeiling = figures.quota?.maxTokensPerPeriod;
      const minorUnitCeiling = figures.quota?.maxMinorUnitsPerPeriod;
      if (tokenCeiling !== undefined && figures.spent.tokens > tokenCeiling) settledWithinCeiling = false;
      if (minorUnitCeiling !== undefined && figures.spent.minorUnits > minorUnitCeiling) settledWithinCeiling = false;
      if (!spendEquals(figures.spent, book.settledByReplay.get(period) ?? ZERO_SPEND)) totalsMatch = false;
      if (!spendEquals(figures.reserved, ZERO_SPEND)) holdsReleased = false;
      settled = addSpend(settled, figures.spent);
    }
    settledByTenant.set(book.tenant, settled);
  }

  return {
    invariants: {
      settledWithinCeiling,
      runningWithinCeiling,
      slotsHeldWhileRunning,
      settledExactlyOnce: retriesAnsweredFromReceipts && receiptsMatch && totalsMatch,
      holdsReleased,
      slotsReleased,
    },
    settledByTenant,
  };
}
