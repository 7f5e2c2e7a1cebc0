import type { Span } from '@opentelemetry/api';

import { normaliseRunId, requireTenant } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import { requireSpend } from '../core/spend.js';
import type { SettleInput, SettleResult } from './plane.js';
import { appliedFor, instantOf, type PlaneContext } from './plane-context.js';
import { requireRequest } from './plane-input.js';
import { requireBoolean, requireEpoch } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { inSpan, setSpanAttribute, setSpanOutcome, SPAN_ATTRIBUTES } from './tracing.js';

// The members of SettleInput: any other is refused by name (a misspelt member would be ignored).
const SETTLE_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'epoch', 'spend', 'concludes', 'atMs', 'by']);

/**
 * `Plane.settle`: ends a pass through the store's `settlePass`, which derives the receipt from the
 * pass row (its period, and whether it took the slot) and applies it exactly once
 * (docs/design/rules.md#l22). The plane adds no retry of its own: an identical retry by the caller
 * is answered from the receipt, and a conflicting one is the store's `CONFLICT`, passed through
 * untouched. With `by` (an operator settling a stranded run's real spend) the store appends the
 * `run.settle` audit row in the same transaction, so the books and the log cannot disagree.
 * Traced as `quotaplane.settle` (tracing.ts).
 */
export function settle(context: PlaneContext, input: SettleInput): Promise<SettleResult> {
  return inSpan('quotaplane.settle', (span) => settleInSpan(context, input, span));
}

async function settleInSpan(context: PlaneContext, input: SettleInput, span: Span): Promise<SettleResult> {
  const request = requireRequest(input, SETTLE_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const epoch = requireEpoch('epoch', request.epoch);
  setSpanAttribute(span, SPAN_ATTRIBUTES.tenant, tenant);
  setSpanAttribute(span, SPAN_ATTRIBUTES.run, run);
  setSpanAttribute(span, SPAN_ATTRIBUTES.epoch, epoch);
  const spend = requireSpend('spend', request.spend);
  const concludes = requireBoolean('concludes', request.concludes);
  const atMs = instantOf(context, request.atMs);
  const by = request.by === undefined ? undefined : parseOperator(request.by, 'by');

  const settled = await storeCall('settle', () =>
    tenantHandle(context.store, tenant).settlePass({ run, epoch, spend, concludes, atMs, ...(by === undefined ? {} : { by }), ...appliedFor(context, request.atMs) }),
  );
  setSpanOutcome(span, settled.outcome);
  return { ok: true, outcome: settled.outcome, receipt: settled.receipt, overrun: settled.overrun };
}
