import { QuotaError } from '../core/errors.js';
import { instant } from '../core/instant.js';
import { spendEquals, type Spend } from '../core/spend.js';
import { closedRunError, isClosedStatus } from './pass-rules.js';
import { corrupt, decodeChain, decodeRun, decodeSpend, type RunRow } from './rows.js';
import type { AdmitRequest, PassGrant } from './types.js';

/**
 * What an admission retry is judged on, read from the books in one snapshot: the run's registry
 * row with the request it was admitted with, its first pass, and whether it still holds the slot
 * and which hold it holds now.
 */
export interface RetryFactsRow extends RunRow {
  readonly budget_json: string;
  readonly width: number;
  readonly pass_period: string | null;
  readonly lease_expires_at_ms: number | null;
  readonly settled_at_ms: number | null;
  readonly pass_hold_tokens: number | null;
  readonly pass_hold_minor_units: number | null;
  readonly slot_held: boolean | number;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
}

const BUDGET_FIELDS = ['maxTokens', 'maxCallTokens', 'maxMinorUnits', 'maxCallMinorUnits'] as const;

// The admission fields of `request` that differ from what the run was admitted with, as the
// message names them (`budget.maxTokens`, `width`, `agent.name`, `agent.digest`, `chain`).
function differingFields(tenant: string, request: AdmitRequest, row: RetryFactsRow): string[] {
  const fields: string[] = [];
  let stored: Record<string, unknown>;
  try {
    stored = JSON.parse(row.budget_json) as Record<string, unknown>;
  } catch {
    throw corrupt(tenant, `run '${row.run_id}' with an unreadable budget`);
  }
  const asked = request.budget as Record<string, unknown>;
  for (const field of BUDGET_FIELDS) if ((stored[field] ?? null) !== (asked[field] ?? null)) fields.push(`budget.${field}`);
  if (Number(row.width) !== request.width) fields.push('width');
  if (row.agent_name !== (request.agent?.name ?? null)) fields.push('agent.name');
  if (row.agent_digest !== (request.agent?.digest ?? null)) fields.push('agent.digest');
  const chain = decodeChain(tenant, row.run_id, row.chain_json);
  const askedChain = request.chain ?? null;
  if (JSON.stringify(chain) !== JSON.stringify(askedChain)) fields.push('chain');
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
 * Pure: every adapter calls it with the facts read in its own transaction or snapshot.
 */
export function answerAdmissionRetry(tenant: string, request: AdmitRequest, row: RetryFactsRow): PassGrant {
  const run = request.run;
  const fields = differingFields(tenant, request, row);
  if (fields.length > 0) {
    throw new QuotaError(
      'CONFLICT',
      `run '${run}' of tenant '${tenant}' was admitted with another ${fields.join(', ')}; a retry must repeat the ` +
        `admission exactly, so admit this request under a new run id`,
      { details: { tenant, run, fields } },
    );
  }
  const status = decodeRun(tenant, row).status;
  if (isClosedStatus(status)) throw closedRunError(tenant, run, status, 'be admitted again');
  if (row.pass_period === null || row.lease_expires_at_ms === null) {
    throw corrupt(tenant, `run '${run}' registered without its first pass`);
  }
  const granted =
    row.pass_hold_tokens === null ? null : decodeSpend(tenant, 'a pass hold', row.pass_hold_tokens, row.pass_hold_minor_units);
  const holding: Spend | null =
    row.hold_tokens === null ? null : decodeSpend(tenant, `the hold of run '${run}'`, row.hold_tokens, row.hold_minor_units);
  const lapsed = Number(row.lease_expires_at_ms) <= request.atMs;
  const slotHeld = row.slot_held === true || row.slot_held === 1;
  const sameHold = granted === null ? holding === null : holding !== null && spendEquals(granted, holding);
  let became: string | null = null;
  if (status === 'stranded') {
    became = `its lease lapsed and the sweep stranded it, giving its slot to other work; settle pass ${run}/1 with what it spent, or release it`;
  } else if (row.last_epoch !== 1 || row.settled_at_ms !== null || status !== 'running') {
    became = `its first pass has settled and the run is ${status} at epoch ${row.last_epoch}; resume it for a new pass instead of admitting it again`;
  } else if (lapsed) {
    became = `the lease of pass ${run}/1 lapsed at ${instant(Number(row.lease_expires_at_ms))}; settle the pass with what it spent, or release the run`;
  } else if (!slotHeld || !sameHold) {
    became = `it no longer holds the ${slotHeld ? 'hold' : 'slot'} it was granted; settle pass ${run}/1 with what it spent`;
  }
  if (became !== null) {
    throw new QuotaError('CONFLICT', `run '${run}' of tenant '${tenant}' cannot be admitted again: ${became}`, {
      details: { tenant, run, status, latestEpoch: row.last_epoch },
    });
  }
  return { ok: true, run, epoch: 1, period: row.pass_period, hold: granted, leaseExpiresAtMs: Number(row.lease_expires_at_ms) };
}
