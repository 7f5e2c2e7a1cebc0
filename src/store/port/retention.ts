import type {
  PrunableRunsPage,
  PrunableRunsRequest,
  PrunedRate,
  PrunedRuns,
  PruneRateRequest,
  PruneRunsRequest,
} from '../retention.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * Retention: pruning closed runs (their passes and receipts, leaving a tombstone) and old rate
 * instants, in bounded batches, each batch one transaction with its audit row (see
 * store/retention.ts). Covered by docs/design/rules.md#r1–#r9. Used by the plane's prune
 * (plane/prune.ts) and the pruner.
 */
export interface RetentionStore extends TenantScoped {
  /**
   * Read-only: one page of prune candidates. Reads at most `scanLimit` registered runs of any
   * status after the cursor `after` (ascending run id) and answers those of `status` among them
   * that are closed at or before `closedAtOrBeforeMs`, hold no slot and no hold, and have no pass
   * without a receipt (concluded or released alike: a late settle of such a pass would still be
   * booked, so the run stays), with their pass and receipt counts; `next` is the cursor to go on
   * from (`null` at the end). The page is bounded, so a walk over millions of runs never reads
   * them all at once.
   */
  prunableRuns(request: PrunableRunsRequest): Promise<PrunableRunsPage>;
  /**
   * One prune batch, one transaction: each of `runs` is re-checked against the `prunableRuns`
   * condition as it stands now; each that still meets it loses its passes, receipts and registry
   * row and gains a tombstone (`prunedAtMs` = `atMs`). When anything was removed, the audit row `{
   * action: 'run.prune', subject: 'runs', by, atMs, detail: { closedAtOrBeforeMs, runs, passes,
   * receipts } }` is appended in the same transaction. Never touches a slot, a hold, a halt, a
   * period figure or an earlier audit row. Afterwards every decision about a pruned run id (admit,
   * resume, heartbeat, dispatch, settle, settlePass) throws `CONFLICT` with `details.pruned =
   * true`, and `releaseRun` answers `'already-closed'`.
   */
  pruneRuns(request: PruneRunsRequest): Promise<PrunedRuns>;
  /**
   * One rate-prune batch, one transaction: deletes at most `limit` of the tenant's dispatch rows
   * recorded at or before `atOrBeforeMs` (oldest first per grant; the per-grant counters stay, so
   * ordinals keep growing), and, when it deleted any, appends the audit row
   * `{ action: 'rate.prune', subject: 'rate', detail: { atOrBeforeMs, dispatches } }`. The caller
   * keeps `atOrBeforeMs` at or below `ratePruneFloorMs` of now, so no window loses a row it counts.
   */
  pruneRate(request: PruneRateRequest): Promise<PrunedRate>;
  /** Read-only: how many of the tenant's dispatch rows are recorded at or before `atOrBeforeMs`. */
  countPrunableRate(request: { atOrBeforeMs: number }): Promise<number>;
}
