import type { Operator } from '../core/operator.js';

/*
 * The shapes of the plane's retention verb (docs/design/rules.md#r1–#r9): `Plane.prune`,
 * `startPruner`, the CLI's `quotaplane prune` and `POST /v1/prune` all speak these.
 */

/** Default number of runs one prune batch (one store transaction) removes: 50. */
export const DEFAULT_PRUNE_BATCH = 50;

/** How many rate-dispatch rows one rate-prune batch removes: 1000. */
export const RATE_PRUNE_BATCH = 1000;

/**
 * A prune (docs/guides/retention.md).
 * - `olderThanMs`: the age, in ms, a run must have been closed (concluded or released) for before
 *   it is removed; a positive safe integer. Rate-dispatch instants go when they are older than
 *   this *and* older than the widest countable window (31 days), so no rate window changes.
 * - `tenant`: one tenant, or every tenant when absent.
 * - `dryRun`: count what would go and remove nothing (no audit row either); default false.
 * - `by`: the operator the audit rows name; default `{ actor: 'library', basis: 'asserted' }`.
 * - `atMs`: the instant ages are measured at; default the plane clock.
 * - `batchSize`: runs per batch (one store transaction each), 1 … 1000, default {@link DEFAULT_PRUNE_BATCH}.
 * - `onProgress`: called after every batch with the running totals of the tenant in hand (the
 *   HTTP client cannot report progress and ignores it).
 * - `signal`: when aborted, the prune stops after the batch in hand and answers what it removed
 *   so far (`stopped: true`); every finished batch is committed and audited.
 */
export interface PruneInput {
  readonly olderThanMs: number;
  readonly tenant?: string | undefined;
  readonly dryRun?: boolean | undefined;
  readonly by?: Operator | undefined;
  readonly atMs?: number | undefined;
  readonly batchSize?: number | undefined;
  readonly onProgress?: ((progress: PruneProgress) => void) | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What a prune removed (or, in a dry run, would remove) from one tenant. */
export interface TenantPruned {
  readonly tenant: string;
  /** Closed runs removed from the registry (each left a tombstone). */
  readonly runs: number;
  /** Their passes. */
  readonly passes: number;
  /** Their receipts. */
  readonly receipts: number;
  /** Rate-dispatch instants no window counts any more. */
  readonly rateDispatches: number;
}

/** The running totals of one tenant after a batch; `phase` says which walk the batch belonged to. */
export interface PruneProgress extends TenantPruned {
  readonly phase: 'concluded' | 'released' | 'rate';
}

/**
 * Answer of `prune`: the instant it measured ages at, the two cut-offs it applied (runs closed at
 * or before `closedAtOrBeforeMs`; dispatch instants recorded at or before `rateAtOrBeforeMs`,
 * Unix ms), whether it was a dry run, what it removed per tenant (tenants where nothing went are
 * left out) and in total, and whether it was stopped (`signal`) before it finished.
 */
export interface PruneResult {
  readonly atMs: number;
  readonly olderThanMs: number;
  readonly dryRun: boolean;
  readonly closedAtOrBeforeMs: number;
  readonly rateAtOrBeforeMs: number;
  readonly tenants: readonly TenantPruned[];
  readonly total: Omit<TenantPruned, 'tenant'>;
  readonly stopped: boolean;
}
