import type {
  AppliedInstant,
  IdleHold,
  OverranPass,
  PassRecord,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  RunListRequest,
  RunSummary,
  SweptRun,
} from '../types.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * What an operator and the sweep see and do to runs, one transaction each: the run registry, the
 * sweep of lapsed leases, the listings of what needs attention, and an operator's release. Covered
 * by docs/design/rules.md#l49–#l55 (the sweep), #l56–#l64 (operator listings and acts), #l92 (the
 * overrun listing), #k5 and #w10 (a release or a sweep gives a slot back to the next run or
 * waiter). Used by the plane's sweep (plane/sweep.ts), operator listings, attention and release.
 */
export interface OperatorStore extends TenantScoped {
  /**
   * A page of the run registry (see `RunListRequest`), each with its status instant, whether it
   * holds a slot, and its latest pass's lease expiry. Read-only.
   */
  runs(request: RunListRequest): Promise<RunSummary[]>;
  /**
   * The runs a sweep at `atMs` would act on, read-only: registered runs
   * that hold a slot or have status `running`, and have no live pass — no pass whose receipt is
   * unwritten and whose lease expires after `atMs` (a lease is lapsed at its expiry instant).
   * Ascending run id after `after` (default: from the start), at most `limit`. Slot holders the
   * registry does not know (raw `reserve` callers) have no lease and are never listed.
   */
  lapsedRuns(request: { atMs: number; after?: string | undefined; limit: number }): Promise<string[]>;
  /**
   * Sweeps one run, one transaction: re-checks the `lapsedRuns` condition at `atMs` and, when it
   * holds, deletes the run's slot and, when its status is `running`, sets it to `stranded` with
   * `statusSinceMs` = its latest pass's lease expiry. The hold is never touched (its spend is
   * unknown). A run that is a waiter's grant its caller never collected is not stranded: the grant
   * is withdrawn whole (slot and hold given back, run and pass erased) and the waiter stands again
   * in its own place, `waiting`, served with the room in the same transaction (answered `{
   * releasedSlot: <it held one>, stranded: false }`). Idempotent: a run already swept, renewed
   * since, or unknown answers `{ releasedSlot: false, stranded: false }` and writes nothing.
   */
  sweepRun(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun>;
  /**
   * Passes whose lease lapsed at or before `atMs` and whose receipt was never written, of runs
   * that are not `released`; ascending (run id, epoch), at most `limit`. Read-only.
   */
  unsettledPasses(request: { atMs: number; limit: number }): Promise<PassRecord[]>;
  /**
   * Holds of `paused` runs that entered `paused` at or before `idleSinceMs`, skipping holds of
   * nothing (zero in both units); ascending run id, at most `limit`. Read-only.
   */
  idleHolds(request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]>;
  /**
   * Settled passes whose spend ran over the hold they were granted in a unit held above 0;
   * ascending (run id, epoch), at most `limit`. Read-only; reads the tenant's
   * receipts (an operator listing, never on a decision's path).
   */
  overranPasses(request: { limit: number }): Promise<OverranPass[]>;
  /**
   * An operator's release of a run, one transaction: a `concluded` or `released` run holding no
   * slot and no hold answers `'already-closed'` and writes nothing; an unknown run holding no slot
   * and no hold throws `NOT_FOUND`. Otherwise deletes its slot and hold, sets a registered run's
   * status to `released` (`statusSinceMs` = `atMs`), and appends the audit row `{ action:
   * 'run.release', subject: run, by, atMs, detail: { previousStatus, slot, hold } }` where `slot`
   * is whether a slot was held and `hold` is `{ period, tokens, minorUnits }` or `null`.
   */
  releaseRun(request: ReleaseRunRequest): Promise<ReleaseRunOutcome>;
}
