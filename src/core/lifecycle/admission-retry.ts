import { QuotaError } from '../errors.js';
import { instant } from '../instant.js';
import { spendEquals } from '../spend.js';
import type { AdmittedRun } from './books.js';
import { corrupt } from './corrupt.js';
import { closedRunError, isClosedStatus } from './run-rules.js';
import type { AdmitRequest, PassGrant } from './types.js';

const BUDGET_FIELDS = ['maxTokens', 'maxCallTokens', 'maxMinorUnits', 'maxCallMinorUnits'] as const;

// The admission fields of `request` that differ from what the run was admitted with, as the
// message names them (`budget.maxTokens`, `width`, `agent.name`, `agent.digest`, `chain`).
function differingFields(request: AdmitRequest, admitted: AdmittedRun): string[] {
  const fields: string[] = [];
  const asked = request.budget as Record<string, unknown>;
  for (const field of BUDGET_FIELDS) if ((admitted.budget[field] ?? null) !== (asked[field] ?? null)) fields.push(`budget.${field}`);
  if (admitted.width !== request.width) fields.push('width');
  const agent = admitted.record.agent;
  if ((agent?.name ?? null) !== (request.agent?.name ?? null)) fields.push('agent.name');
  if ((agent?.digest ?? null) !== (request.agent?.digest ?? null)) fields.push('agent.digest');
  if (JSON.stringify(admitted.record.chain) !== JSON.stringify(request.chain ?? null)) fields.push('chain');
  return fields;
}

/**
 * The answer to an admission whose run id is already registered (docs/design/rules.md#l13–#l14-2):
 * retries are answered from the books, never from the past.
 * - A request that differs from the admitted one (budget, width, agent, chain) throws `CONFLICT`
 *   naming every differing field in the message and in `details.fields`.
 * - A concluded or released run throws `CONFLICT` (`closedRunError`).
 * - Pass 1 must still hold what it was granted: the run is `running` at epoch 1, pass 1 is
 *   unsettled, its lease has not lapsed at `request.atMs`, the run still holds its slot, and its
 *   hold is still the one granted. Then pass 1's grant comes back unchanged. Otherwise `CONFLICT`
 *   saying what became of the run (`details.status`) and what to do.
 * A run without its first pass is `STORE_CORRUPT`.
 */
export function answerAdmissionRetry(tenant: string, request: AdmitRequest, admitted: AdmittedRun): PassGrant {
  const run = request.run;
  const fields = differingFields(request, admitted);
  if (fields.length > 0) {
    throw new QuotaError(
      'CONFLICT',
      `run '${run}' of tenant '${tenant}' was admitted with another ${fields.join(', ')}; a retry must repeat the ` +
        `admission exactly, so admit this request under a new run id`,
      { details: { tenant, run, fields } },
    );
  }
  const { status, lastEpoch } = admitted.record;
  if (isClosedStatus(status)) throw closedRunError(tenant, run, status, 'be admitted again');
  const first = admitted.firstPass;
  if (first === null) throw corrupt(tenant, `run '${run}' registered without its first pass`);
  const granted = first.granted;
  const holding = admitted.hold;
  const lapsed = first.lease.leaseExpiresAtMs <= request.atMs;
  const sameHold = granted === null ? holding === null : holding !== null && spendEquals(granted, holding);
  let became: string | null = null;
  if (status === 'stranded') {
    became = `its lease lapsed and the sweep stranded it, giving its slot to other work; settle pass ${run}/1 with what it spent, or release it`;
  } else if (lastEpoch !== 1 || first.lease.settledAtMs !== null || status !== 'running') {
    became = `its first pass has settled and the run is ${status} at epoch ${lastEpoch}; resume it for a new pass instead of admitting it again`;
  } else if (lapsed) {
    became = `the lease of pass ${run}/1 lapsed at ${instant(first.lease.leaseExpiresAtMs)}; settle the pass with what it spent, or release the run`;
  } else if (!admitted.slotHeld || !sameHold) {
    became = `it no longer holds the ${admitted.slotHeld ? 'hold' : 'slot'} it was granted; settle pass ${run}/1 with what it spent`;
  }
  if (became !== null) {
    throw new QuotaError('CONFLICT', `run '${run}' of tenant '${tenant}' cannot be admitted again: ${became}`, {
      details: { tenant, run, status, latestEpoch: lastEpoch },
    });
  }
  return { ok: true, run, epoch: 1, period: first.period, hold: granted, leaseExpiresAtMs: first.lease.leaseExpiresAtMs };
}
