import { describe } from '../core/amounts.js';
import { compareBytewise } from './byte-order.js';
import { invalidArgument } from '../core/errors.js';
import { normaliseRunId } from '../core/identifiers.js';
import { parseOperator, type Operator } from '../core/operator.js';
import { requireIdentifier } from '../core/identifiers.js';
import { requireInstantMs } from '../core/instant.js';
import { judgePrunable, type PruneFacts } from '../core/lifecycle/prunable.js';
import type { PrunedRunRecord } from '../core/lifecycle/pruned.js';
import { requireLimit, requireObject } from './store-arguments.js';
import type { AuditRecord, RunStatus } from './types.js';

/*
 * Retention, the backend-neutral part: the shapes of the store's prune operations, their argument
 * checks, the facts both stores read to let core judge a run (core/lifecycle/prunable.ts decides
 * which runs may be pruned), and the refusal every decision gives a run whose records were pruned.
 * What a prune removes, and only that: a closed run (concluded or
 * released) that holds no slot and no hold, closed at or before the cut-off, with its passes and
 * receipts, provided none of its passes can still be settled: a closed run with a pass whose receipt
 * was never written stays, concluded or released alike, because a late settle of that pass is
 * still accepted and booked, and a prune must never turn a settle that would be booked into a
 * refusal (a concluded run's pass stays in attention as `pass.unsettled` until someone settles
 * it); and rate-dispatch instants no window can count any more. So every pruned run had settled
 * every pass it had, and the refusal below says so truthfully.
 * It never touches an open run, a hold, a slot, a halt, a period figure or the audit log. Each
 * pruned run leaves a tombstone (`quota_pruned`), so a retried decision about it is refused
 * (`CONFLICT`) rather than counted again.
 */

/** The closed statuses a prune walks, one after the other (each walk pages by run id). */
export const PRUNABLE_STATUSES = Object.freeze(['concluded', 'released'] as const);

/** A closed run status: the only ones a prune removes. */
export type PrunableStatus = (typeof PRUNABLE_STATUSES)[number];

/** The largest batch a prune store call takes: 1000 runs, or 1000 rate rows. */
export const MAX_PRUNE_BATCH = 1000;

/**
 * A page of prune candidates (store.ts `prunableRuns`): registered runs of any status whose id
 * sorts after `after` (default: from the start), of which at most `scanLimit` are read; of those,
 * the ones of `status` that may be pruned: closed at or before `closedAtOrBeforeMs` (Unix ms),
 * holding no slot and no hold, and with no pass without a receipt (whether concluded or released).
 */
export interface PrunableRunsRequest {
  readonly status: PrunableStatus;
  readonly closedAtOrBeforeMs: number;
  readonly after?: string | undefined;
  readonly scanLimit: number;
}

/** One prune candidate: the run, its status, when it closed (Unix ms), and how many passes and receipts it has. */
export interface PrunableRun {
  readonly run: string;
  readonly status: PrunableStatus;
  readonly closedAtMs: number;
  readonly passes: number;
  readonly receipts: number;
}

/**
 * Answer of `prunableRuns`: the candidates of the page read, and the cursor to read on from
 * (`next`, the last run id scanned), `null` when the scan reached the end of that status.
 */
export interface PrunableRunsPage {
  readonly runs: readonly PrunableRun[];
  readonly next: string | null;
}

/**
 * One prune batch (store.ts `pruneRuns`): `runs` (1 … {@link MAX_PRUNE_BATCH} ids) are each
 * re-checked in the transaction against the `prunableRuns` condition at `closedAtOrBeforeMs`; those
 * that still meet it are removed with their passes and receipts and leave a tombstone stamped
 * `atMs`. `by` is the operator the `run.prune` audit row names.
 */
export interface PruneRunsRequest {
  readonly runs: readonly string[];
  readonly closedAtOrBeforeMs: number;
  readonly atMs: number;
  readonly by: Operator;
}

/**
 * What one prune batch removed: the runs (ascending id), how many passes and receipts went with
 * them, and the audit row appended in the same transaction (`null` when nothing was removed).
 */
export interface PrunedRuns {
  readonly runs: readonly string[];
  readonly passes: number;
  readonly receipts: number;
  readonly audit: AuditRecord | null;
}

/**
 * One batch of rate-instant pruning (store.ts `pruneRate`): at most `limit` of the tenant's
 * dispatch rows recorded at or before `atOrBeforeMs` are deleted, oldest first per grant. The
 * caller keeps `atOrBeforeMs` at or below the store-wide floor (`ratePruneFloorMs`), so no window
 * loses a row it counts. `by` and `atMs` stamp the `rate.prune` audit row.
 */
export interface PruneRateRequest {
  readonly atOrBeforeMs: number;
  readonly limit: number;
  readonly atMs: number;
  readonly by: Operator;
}

/** What one rate-prune batch removed, and the audit row (`null` when nothing was removed). */
export interface PrunedRate {
  readonly dispatches: number;
  readonly audit: AuditRecord | null;
}

export type { PrunedRunRecord } from '../core/lifecycle/pruned.js';
export { prunedRunError } from '../core/lifecycle/pruned.js';

/**
 * The columns both stores read a run's prune facts with (core/lifecycle/prunable.ts
 * `PruneFacts`): its id, status, last epoch (for its tombstone), the instant it entered its status
 * (Unix ms), and whether it holds a slot, a hold, or a pass without a receipt (1/0 on SQLite).
 */
export interface PruneFactsRow {
  readonly run_id: string;
  readonly status: string;
  readonly last_epoch: number | string;
  readonly closed_at_ms: number | string;
  readonly holds_slot: boolean | number;
  readonly holds_hold: boolean | number;
  readonly pass_unsettled: boolean | number;
}

/**
 * The rows of `rows` whose run may be pruned at `closedAtOrBeforeMs` (Unix ms), in the order
 * given, as core/lifecycle/prunable.ts `judgePrunable` decides (docs/design/rules.md#r1, #r9).
 */
export function prunableRows<Row extends PruneFactsRow>(rows: readonly Row[], closedAtOrBeforeMs: number): Row[] {
  return rows.filter((row) => judgePrunable(decodePruneFacts(row), closedAtOrBeforeMs).prunable);
}

function decodePruneFacts(row: PruneFactsRow): PruneFacts {
  return {
    status: row.status as RunStatus,
    closedAtMs: Number(row.closed_at_ms),
    holdsSlot: Boolean(row.holds_slot),
    holdsHold: Boolean(row.holds_hold),
    hasUnsettledPass: Boolean(row.pass_unsettled),
  };
}

/** The columns a tombstone is read with on either backend. */
export interface PrunedRow {
  readonly status: string;
  readonly last_epoch: number | string;
  readonly closed_at_ms: number | string;
  readonly pruned_at_ms: number | string;
}

/** Decodes a tombstone row of run `run`. */
export function decodePrunedRow(run: string, row: PrunedRow): PrunedRunRecord {
  return {
    run,
    status: row.status as RunStatus,
    lastEpoch: Number(row.last_epoch),
    closedAtMs: Number(row.closed_at_ms),
    prunedAtMs: Number(row.pruned_at_ms),
  };
}

/** A `prunableRuns` request, validated (`INVALID_ARGUMENT` naming the field). */
export function requirePrunableRunsRequest(value: unknown): PrunableRunsRequest {
  const record = requireObject('request', value);
  if (typeof record.status !== 'string' || !(PRUNABLE_STATUSES as readonly string[]).includes(record.status)) {
    throw invalidArgument('status', `must be 'concluded' or 'released', got ${describe(record.status)}`);
  }
  return {
    status: record.status as PrunableStatus,
    closedAtOrBeforeMs: requireInstantMs('closedAtOrBeforeMs', record.closedAtOrBeforeMs),
    after: record.after === undefined || record.after === null ? undefined : requireIdentifier('after', record.after),
    scanLimit: requireBatch('scanLimit', record.scanLimit),
  };
}

/** A `pruneRuns` request, validated; run ids are normalised as everywhere else. */
export function requirePruneRunsRequest(value: unknown): PruneRunsRequest {
  const record = requireObject('request', value);
  if (!Array.isArray(record.runs) || record.runs.length > MAX_PRUNE_BATCH) {
    throw invalidArgument('runs', `must be an array of at most ${MAX_PRUNE_BATCH} run ids, got ${describe(record.runs)}`);
  }
  const runs = [...new Set(record.runs.map((run: unknown, index) => normaliseRunId(`runs[${index}]`, run)))].sort(compareBytewise);
  return {
    runs,
    closedAtOrBeforeMs: requireInstantMs('closedAtOrBeforeMs', record.closedAtOrBeforeMs),
    atMs: requireInstantMs('atMs', record.atMs),
    by: parseOperator(record.by, 'by'),
  };
}

/** A `pruneRate` request, validated. */
export function requirePruneRateRequest(value: unknown): PruneRateRequest {
  const record = requireObject('request', value);
  return {
    atOrBeforeMs: requireInstantMs('atOrBeforeMs', record.atOrBeforeMs),
    limit: requireBatch('limit', record.limit),
    atMs: requireInstantMs('atMs', record.atMs),
    by: parseOperator(record.by, 'by'),
  };
}

function requireBatch(field: string, value: unknown): number {
  const limit = requireLimit(field, value);
  if (limit > MAX_PRUNE_BATCH) throw invalidArgument(field, `must be at most ${MAX_PRUNE_BATCH}, got ${limit}`);
  return limit;
}


/** The `run.prune` audit detail of one batch. */
export function runPruneDetail(request: PruneRunsRequest, removed: { runs: readonly string[]; passes: number; receipts: number }) {
  return {
    closedAtOrBeforeMs: request.closedAtOrBeforeMs,
    runs: [...removed.runs],
    passes: removed.passes,
    receipts: removed.receipts,
  };
}
