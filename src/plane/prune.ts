import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { parseOperator, type Operator } from '../core/operator.js';
import { ratePruneFloorMs } from '../core/rate.js';
import { MAX_PRUNE_BATCH, PRUNABLE_STATUSES } from '../store/retention.js';
import type { RetentionStore } from '../store/store.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireBoolean, requireObject } from '../store/store-arguments.js';
import { DEFAULT_PRUNE_BATCH, RATE_PRUNE_BATCH, type PruneInput, type PruneProgress, type PruneResult, type TenantPruned } from './prune-types.js';
import { LIBRARY_OPERATOR } from './quota.js';
import { storeCall, tenantHandle } from './store-call.js';
import { tenantsInScope } from './tenant-scope.js';

/**
 * `Plane.prune` (docs/design/rules.md#r1–#r9): for each tenant in scope, walks its concluded and
 * then its released runs a page at a time (`prunableRuns`, by run id, so the walk always ends),
 * removes each page's candidates in one store transaction (`pruneRuns`, which re-checks every run
 * and audits the batch as `run.prune`), then deletes the rate-dispatch instants no window counts
 * any more, a bounded batch per transaction (`pruneRate`, audited as `rate.prune`). A dry run reads
 * the same pages and counts. A prune that dies halfway has committed (and audited) the batches it
 * finished; the next prune finds the rest. Nothing it removes is read by a decision: period
 * figures, holds, slots, halts and the audit log stay, and every pruned run id keeps a tombstone.
 */
export async function prune(context: PlaneContext, input: PruneInput): Promise<PruneResult> {
  const request = requireObject('request', input);
  const olderThanMs = requireAge(request.olderThanMs);
  const dryRun = request.dryRun === undefined ? false : requireBoolean('dryRun', request.dryRun);
  const by = request.by === undefined ? LIBRARY_OPERATOR : parseOperator(request.by, 'by');
  const batchSize = requireBatchSize(request.batchSize);
  const onProgress = request.onProgress === undefined ? undefined : requireProgress(request.onProgress);
  const signal = request.signal === undefined ? undefined : requireSignal(request.signal);
  const stopped = (): boolean => signal?.aborted === true;
  const atMs = instantOf(context, request.atMs);
  const closedAtOrBeforeMs = Math.max(0, atMs - olderThanMs);
  const rateAtOrBeforeMs = Math.max(0, Math.min(closedAtOrBeforeMs, ratePruneFloorMs(atMs)));

  const tenants: TenantPruned[] = [];
  for (const tenant of await tenantsInScope(context, request.tenant)) {
    if (stopped()) break;
    const handle = tenantHandle(context.store, tenant);
    const counts = { tenant, runs: 0, passes: 0, receipts: 0, rateDispatches: 0 };
    const report = (phase: PruneProgress['phase']): void => onProgress?.({ ...counts, phase });
    for (const status of PRUNABLE_STATUSES) {
      if (stopped()) break;
      let after: string | undefined;
      for (;;) {
        const page = await storeCall('prunableRuns', () => handle.prunableRuns({ status, closedAtOrBeforeMs, after, scanLimit: batchSize }));
        if (page.runs.length > 0) {
          if (dryRun) {
            counts.runs += page.runs.length;
            for (const run of page.runs) {
              counts.passes += run.passes;
              counts.receipts += run.receipts;
            }
          } else {
            const runs = page.runs.map((run) => run.run);
            const removed = await storeCall('pruneRuns', () => handle.pruneRuns({ runs, closedAtOrBeforeMs, atMs, by }));
            counts.runs += removed.runs.length;
            counts.passes += removed.passes;
            counts.receipts += removed.receipts;
          }
          report(status);
        }
        if (page.next === null || stopped()) break;
        after = page.next;
      }
    }
    if (!stopped()) {
      counts.rateDispatches = await pruneRate(handle, { atOrBeforeMs: rateAtOrBeforeMs, atMs, by, dryRun, stopped }, (dispatches) => {
        counts.rateDispatches = dispatches;
        report('rate');
      });
    }
    if (counts.runs + counts.rateDispatches > 0) tenants.push(counts);
  }
  const total = { runs: 0, passes: 0, receipts: 0, rateDispatches: 0 };
  for (const each of tenants) {
    total.runs += each.runs;
    total.passes += each.passes;
    total.receipts += each.receipts;
    total.rateDispatches += each.rateDispatches;
  }
  return { atMs, olderThanMs, dryRun, closedAtOrBeforeMs, rateAtOrBeforeMs, tenants, total, stopped: stopped() };
}

// Deletes (or counts) one tenant's dispatch rows no window counts, a bounded batch per transaction.
async function pruneRate(
  handle: RetentionStore,
  request: { atOrBeforeMs: number; atMs: number; by: Operator; dryRun: boolean; stopped: () => boolean },
  progress: (dispatches: number) => void,
): Promise<number> {
  const { atOrBeforeMs, atMs, by } = request;
  if (request.dryRun) return storeCall('countPrunableRate', () => handle.countPrunableRate({ atOrBeforeMs }));
  let dispatches = 0;
  for (;;) {
    const batch = await storeCall('pruneRate', () => handle.pruneRate({ atOrBeforeMs, limit: RATE_PRUNE_BATCH, atMs, by }));
    dispatches += batch.dispatches;
    if (batch.dispatches > 0) progress(dispatches);
    if (batch.dispatches < RATE_PRUNE_BATCH || request.stopped()) return dispatches;
  }
}

function requireAge(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument('olderThanMs', `must be an age in milliseconds, a positive integer (e.g. 7776000000 for 90 days), got ${describe(value)}`);
  }
  return value;
}

function requireBatchSize(value: unknown): number {
  if (value === undefined) return DEFAULT_PRUNE_BATCH;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_PRUNE_BATCH) {
    throw invalidArgument('batchSize', `must be an integer from 1 to ${MAX_PRUNE_BATCH}, got ${describe(value)}`);
  }
  return value;
}

function requireSignal(value: unknown): AbortSignal {
  if (!(value instanceof AbortSignal)) throw invalidArgument('signal', `must be an AbortSignal, got ${describe(value)}`);
  return value;
}

function requireProgress(value: unknown): (progress: PruneProgress) => void {
  if (typeof value !== 'function') throw invalidArgument('onProgress', `must be a function, got ${describe(value)}`);
  return value as (progress: PruneProgress) => void;
}
