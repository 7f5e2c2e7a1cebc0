import { unboundedRefusal } from '../admission-ceilings.js';
import { holdFor } from '../budget.js';
import { coveringHalt, haltScopeKey } from '../halt-scope.js';
import { periodKey } from '../period.js';
import { holdQuotaFor, UNLIMITED_QUOTA } from '../quota.js';
import { answerAdmissionRetry } from './admission-retry.js';
import type { TenantBooks } from './books.js';
import { openPass } from './passes.js';
import { refuseIfPruned } from './refuse-pruned.js';
import { reserveTakingHold } from './reserve.js';
import type { AdmitOutcome, AdmitRequest } from './types.js';

/**
 * Admission (store.ts `admit`) as it stands, the waiting queue aside (an adapter serves the queue
 * first). A run id already registered is a retry, answered from the books
 * (`answerAdmissionRetry`: pass 1's grant only while it still holds what it was granted, else
 * `CONFLICT`); a pruned run id is refused. Otherwise: halts (the narrowest covering one refuses
 * `Halted`) → quota (explicit, else stored, else unlimited) → hold formula (`Unbounded`) → reserve
 * in the period of `atMs` → run and pass 1 recorded. Every refusal returns before the first write.
 */
export function decideAdmitNow(books: TenantBooks, request: AdmitRequest): AdmitOutcome {
  const tenant = books.tenant;
  const admitted = books.admittedRun(request.run);
  if (admitted !== null) return answerAdmissionRetry(tenant, request, admitted);
  refuseIfPruned(books, request.run, 'be admitted again');
  const halt = coveringHalt(books.halts(), { agent: request.agent, chain: request.chain });
  if (halt !== null) {
    return {
      ok: false,
      refusal: { code: 'Halted', tenant, scope: haltScopeKey(halt.scope), reason: halt.reason, by: halt.by, haltedAtMs: halt.atMs },
    };
  }
  const quota = request.quota ?? books.storedQuota() ?? UNLIMITED_QUOTA;
  const agent = request.agent?.name ?? null;
  // A unit bounded by the tenant or by the run's agent is held.
  const held = holdFor(holdQuotaFor(quota, agent), request.budget, request.width);
  if (!held.ok) return { ok: false, refusal: unboundedRefusal(tenant, quota, agent, held.unit, held.field) };
  const period = periodKey(quota.period, request.atMs);
  const hold = held.hold === null ? null : { period, amount: held.hold };
  const reserved = reserveTakingHold(books, { run: request.run, agent, quota, hold, atMs: request.atMs });
  if (!reserved.ok) return reserved;
  books.insertRun({
    run: request.run,
    agentName: request.agent?.name ?? null,
    agentDigest: request.agent?.digest ?? null,
    chain: request.chain ?? null,
    budget: request.budget as unknown as Record<string, unknown>,
    width: request.width,
    atMs: request.atMs,
  });
  const pass = { run: request.run, epoch: 1, period, takesSlot: true, atMs: request.atMs, leaseMs: request.leaseMs };
  // The hold just taken is the run's hold; otherwise it holds what it held before, read back.
  return openPass(books, pass, reserved.holdTaken && hold !== null ? hold.amount : undefined);
}
