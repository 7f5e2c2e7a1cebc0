import { admissionConcurrencyRefusal, admissionSpendRefusal } from '../admission-ceilings.js';
import { dayOf } from '../period-books.js';
import { boundsPlane, planeAgentLimit } from '../plane-ceiling.js';
import { agentCeilingsOf, boundsSpend, type TenantQuota } from '../quota.js';
import type { SpentOutRefusal } from '../refusal.js';
import type { BooksReads, TenantBooks } from './books.js';
import { putHold } from './hold-moves.js';
import type { ReserveOutcome, SpendHold } from './types.js';

/**
 * What a reserve decides on: the run, its agent name (`null`: none, so no per-agent ceiling covers
 * it), the quota in force, the hold it asks for (or none), and the instant (Unix ms).
 */
export interface ReserveInput {
  readonly run: string;
  readonly agent: string | null;
  readonly quota: TenantQuota;
  readonly hold: SpendHold | null;
  readonly atMs: number;
}

/**
 * The `SpentOut` refusal a reserve would answer for `hold` under `quota` (the agent's ceilings in
 * the tenant first, then the tenant's) from the period's figures as they stand, or `null` when it
 * fits. Reads only; a waiting admission asks it too (docs/design/rules.md#w4-1: a hold that would
 * not fit either is refused, never queued).
 */
export function spendRefusal(books: BooksReads, quota: TenantQuota, agent: string | null, hold: SpendHold): SpentOutRefusal | null {
  const agentCeilings = agentCeilingsOf(quota, agent);
  const agentBounds = agent !== null && agentCeilings !== null && boundsSpend({ period: quota.period, ...agentCeilings });
  return admissionSpendRefusal({
    tenant: books.tenant,
    period: hold.period,
    quota,
    agent,
    tenantFigures: books.periodFigures(hold.period),
    agentFigures: agentBounds ? books.agentPeriodFigures(agent, hold.period) : null,
    requested: hold.amount,
  });
}

/**
 * A reserve (docs/design/rules.md#c1, #c12), inside the adapter's one transaction so the decision
 * and its writes are one: without any concurrency ceiling covering the run (tenant, agent, plane)
 * or a hold there is nothing to decide, so the slot is taken if absent. Otherwise count what the
 * ceilings covering the run need, judge concurrency (`admissionConcurrencyRefusal`), judge spend
 * only when a hold is asked for and the run holds none (the existing hold wins), and store hold
 * and slot. A refusal writes nothing, not even the slot. `holdTaken` tells an admission whether
 * the run's hold is now the one it asked for; when false, the run holds what it held before, or
 * nothing.
 */
export function reserveTakingHold(
  books: TenantBooks,
  input: ReserveInput,
): { readonly ok: true; readonly holdTaken: boolean } | Extract<ReserveOutcome, { ok: false }> {
  const { agent, run, atMs } = input;
  const agentCeilings = agentCeilingsOf(input.quota, agent);
  const plane = books.planeCeiling();
  if (input.quota.maxConcurrentRuns === undefined && agentCeilings?.maxConcurrentRuns === undefined && !boundsPlane(plane) && input.hold === null) {
    books.takeSlot(run, agent, atMs);
    return { ok: true, holdTaken: false };
  }
  const snapshot = books.slotSnapshot(run);
  const slotHeld = snapshot.slotHeld;
  const countsAgent = agent !== null && agentCeilings?.maxConcurrentRuns !== undefined;
  const countsPlaneAgent = agent !== null && planeAgentLimit(plane, agent) !== undefined;
  const tooMany = admissionConcurrencyRefusal(
    books.tenant,
    { quota: input.quota, plane, agent },
    {
      slotHeld,
      running: snapshot.running,
      agentRunning: slotHeld || !countsAgent ? 0 : books.agentRunning(agent),
      planeRunning: slotHeld || plane?.maxConcurrentRuns === undefined ? 0 : books.planeRunning(),
      planeAgentRunning: slotHeld || !countsPlaneAgent ? 0 : books.planeAgentRunning(agent),
    },
  );
  if (tooMany !== null) return { ok: false, refusal: tooMany };
  const hold = snapshot.holdHeld ? null : input.hold;
  if (hold !== null) {
    const spentOut = spendRefusal(books, input.quota, agent, hold);
    if (spentOut !== null) return { ok: false, refusal: spentOut };
    putHold(books, run, agent, hold.period, dayOf(hold.period, atMs), hold.amount);
  }
  books.takeSlot(run, agent, atMs);
  return { ok: true, holdTaken: hold !== null };
}

/** The port's `reserve` (docs/design/rules.md#c1, #c12): {@link reserveTakingHold}, answered ok or with its refusal. */
export function reserveOnBooks(books: TenantBooks, input: ReserveInput): ReserveOutcome {
  const reserved = reserveTakingHold(books, input);
  return reserved.ok ? { ok: true } : reserved;
}
