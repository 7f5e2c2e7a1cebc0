import { QuotaError } from '../errors.js';
import type { TenantBooks } from './books.js';
import { isClosedStatus } from './run-rules.js';
import type { Held, ReleaseRunOutcome, ReleaseRunRequest } from './types.js';

/**
 * An operator's release (store.ts `releaseRun`): the slot, the hold and the `run.release` audit row
 * in one transaction, so the log never names a release that did not happen, nor misses one that
 * did. A run holding nothing that is closed (or was pruned after it closed) answers
 * `already-closed` and writes nothing; an unknown run id holding nothing is `NOT_FOUND`. With
 * `ifStatus`, a run whose status is another one is `CONFLICT` and nothing is written.
 */
export function decideRelease(books: TenantBooks, request: ReleaseRunRequest): ReleaseRunOutcome {
  const { tenant } = books;
  const run = request.run;
  const record = books.run(run);
  const previousStatus = record?.status ?? null;
  if (request.ifStatus !== undefined && previousStatus !== request.ifStatus) {
    throw new QuotaError(
      'CONFLICT',
      `run '${run}' of tenant '${tenant}' is ${previousStatus ?? 'not registered'} now, not ${request.ifStatus}; nothing was released`,
      { details: { tenant, run, status: previousStatus, ifStatus: request.ifStatus } },
    );
  }
  const slotHeld = books.holdsSlot(run);
  const stored = books.hold(run);
  const hold: Held | null = stored === null ? null : { run, period: stored.period, remaining: stored.amount };
  if (!slotHeld && hold === null) {
    if (previousStatus !== null && isClosedStatus(previousStatus)) {
      return { outcome: 'already-closed', run, previousStatus, slotReleased: false, holdReleased: null, audit: null };
    }
    const pruned = previousStatus === null ? (books.prunedRun(run)?.status ?? null) : null;
    if (pruned !== null) {
      // A pruned run was closed before it was pruned: nothing to release.
      return { outcome: 'already-closed', run, previousStatus: pruned, slotReleased: false, holdReleased: null, audit: null };
    }
    if (previousStatus === null) {
      throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no run '${run}' and nothing held under that id to release`, {
        details: { tenant, run },
      });
    }
  }
  if (slotHeld) books.giveSlot(run);
  if (hold !== null) books.dropHold(run);
  if (record !== null) books.setRunStatus(run, 'released', request.atMs);
  const audit = books.appendAudit({
    atMs: request.atMs,
    by: request.by,
    action: 'run.release',
    subject: run,
    detail: {
      previousStatus,
      slot: slotHeld,
      hold: hold === null ? null : { period: hold.period, tokens: hold.remaining.tokens, minorUnits: hold.remaining.minorUnits },
    },
  });
  return { outcome: 'released', run, previousStatus, slotReleased: slotHeld, holdReleased: hold, audit };
}
