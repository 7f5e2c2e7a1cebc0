import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import type { Operator } from '../core/operator.js';
import type { Plane } from './plane.js';
import type { PruneResult } from './prune-types.js';
import { requireIntervalMs, runPeriodically } from './periodic.js';

/** Default interval between prunes of a {@link startPruner}: one hour. */
export const DEFAULT_PRUNE_INTERVAL_MS = 3_600_000;

/**
 * Options of {@link startPruner} (docs/guides/retention.md).
 * - `olderThanMs`: the age passed to every `Plane.prune`; required, a positive integer of ms.
 * - `intervalMs`: the pause between the end of one prune and the start of the next, 1 to
 *   2^31 − 1 ms; default {@link DEFAULT_PRUNE_INTERVAL_MS}.
 * - `by`: the operator the audit rows name; default `{ actor: 'quotaplane-pruner', basis: 'asserted' }`.
 * - `onPrune`: called with each prune's result (for logs).
 * - `onError`: called when a prune fails; the pruner carries on after the interval. Default:
 *   `process.emitWarning`.
 */
export interface PrunerOptions {
  readonly olderThanMs: number;
  readonly intervalMs?: number | undefined;
  readonly by?: Operator | undefined;
  readonly onPrune?: ((result: PruneResult) => void) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
}

const PRUNER: Operator = Object.freeze({ actor: 'quotaplane-pruner', basis: 'asserted' });

/**
 * Prunes every tenant on an interval (retention, docs/design/rules.md#r1–#r9): the first prune runs
 * at once, each next one `intervalMs` after the previous one finished, so prunes never overlap. The
 * timer is unref'd. Returns `stop`, which cancels the next prune and resolves once one in flight
 * has finished the batch in hand. Several pruners may share a store: each batch re-checks its runs
 * in its own transaction, and a run another pruner removed first is simply not there. Throws
 * `INVALID_ARGUMENT` naming `olderThanMs` or `intervalMs`.
 */
export function startPruner(plane: Plane, options: PrunerOptions): () => Promise<void> {
  const { olderThanMs } = options;
  if (typeof olderThanMs !== 'number' || !Number.isSafeInteger(olderThanMs) || olderThanMs < 1) {
    throw invalidArgument('olderThanMs', `must be an age in milliseconds, a positive integer, got ${describe(olderThanMs)}`);
  }
  const intervalMs = requireIntervalMs(options.intervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(`quotaplane prune failed: ${String(error)}`));
  // Stopping ends a prune in flight after its batch in hand, rather than after its whole walk.
  return runPeriodically(async (signal) => {
    const result = await plane.prune({ olderThanMs, by: options.by ?? PRUNER, signal });
    options.onPrune?.(result);
  }, intervalMs, onError);
}
