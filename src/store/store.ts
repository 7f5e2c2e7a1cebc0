import type { Halt, HaltScope } from '../core/halt-scope.js';
import type { ApiKeyStore } from './api-keys.js';
import type { TenantQuota } from '../core/quota.js';
import type { PlaneCeiling } from '../core/plane-ceiling.js';
import type { RateCeiling } from '../core/rate.js';
import type { Spend } from '../core/spend.js';
import type {
  AppliedInstant,
  AdmitOutcome,
  AdmitRequest,
  AgentUsage,
  PlaneUsage,
  AuditEntry,
  AuditRecord,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  Held,
  IdleHold,
  OverranPass,
  PassRecord,
  QuotaSettlement,
  RateOutcome,
  RateReservation,
  ReserveOutcome,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  ResumeOutcome,
  ResumeRequest,
  RunListRequest,
  RunRecord,
  RunSummary,
  SettleOutcome,
  SettlePassOutcome,
  SettlePassRequest,
  SpendHold,
  SweptRun,
} from './types.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from './waiters.js';
import type { WaiterWakes } from './waiter-wakes.js';
import type {
  PrunableRunsPage,
  PrunableRunsRequest,
  PrunedRate,
  PrunedRuns,
  PruneRateRequest,
  PruneRunsRequest,
} from './retention.js';

/**
 * The durable store behind quotaplane: one database serving many tenants through
 * tenant-scoped handles. Adapters: SQLite (embedded default) and PostgreSQL.
 * Every handle method is one transaction; a store that cannot answer throws
 * `QuotaError('STORE_UNAVAILABLE')` and callers fail closed. The arguments of every method are
 * checked by `validated()` (validated-store.ts), which `openStore` applies: an adapter may assume
 * them valid and normalised, and the `INVALID_ARGUMENT` documented below is the wrapper's.
 */
export interface QuotaStore {
  /** `'sqlite'` or `'postgres'`. */
  readonly backend: string;
  /** A handle confined to one tenant's rows. Throws `INVALID_ARGUMENT` for a bad tenant id. */
  tenant(tenant: string): TenantStore;
  /**
   * The known tenants, in byte order: those the store holds a record of, of any kind of
   * `TENANT_RECORDS` (a quota, a run, a slot, a waiter, spend, a halt, an audit row or an API key;
   * rules.md#l95).
   */
  tenants(): Promise<string[]>;
  /**
   * Whether `tenant` is known (docs/design/rules.md#l95): the store holds a record of it of any
   * kind of `TENANT_RECORDS`, exactly when `tenants()` would list it, read with one indexed look-up
   * per kind instead of the whole listing. Read-only. Optional so a third-party store keeps
   * compiling: without it the plane asks `tenants()`. Throws `INVALID_ARGUMENT` for a bad tenant id.
   */
  hasTenant?(tenant: string): Promise<boolean>;
  /**
   * The API keys of the HTTP service. Optional until every adapter has it: the SQLite
   * adapter does; `quotaplane serve` and `keys` refuse a store without it.
   */
  apiKeys?(): ApiKeyStore;
  /**
   * How waiting admissions are woken: in this process at once, across instances by
   * PostgreSQL `LISTEN/NOTIFY` or, on SQLite, by the poll interval. Optional for third-party
   * adapters: without it a waiting caller polls every 100 ms.
   */
  waiterWakes?(): WaiterWakes;
  /** Closes connections. Further calls throw `STORE_UNAVAILABLE`. */
  close(): Promise<void>;

  // ── the plane-wide ceiling ────────────────────────────────────────────────
  // Optional like `apiKeys` so third-party stores keep compiling; both adapters have them, and the
  // plane refuses to set a plane-wide ceiling on a store without them (it could not enforce it).

  /** The stored plane-wide ceiling, or `null` when none was set (then no plane-wide ceiling applies). */
  getPlaneCeiling?(): Promise<PlaneCeiling | null>;
  /**
   * Replaces the plane-wide ceiling and appends `audit` to the chain of `auditTenant` (the reserved
   * chain `quotaplane:plane`), in one transaction. Every admission reads it inside its own
   * transaction, so it applies to the very next admission on every instance.
   */
  setPlaneCeiling?(plane: PlaneCeiling, audit: AuditEntry, auditTenant: string): Promise<void>;
  /** Slots across every tenant, and per agent name in `agents` (read-only, one snapshot). */
  planeUsage?(agents: readonly string[]): Promise<PlaneUsage>;
}

/**
 * One tenant's view of the store. The first group is the store primitives that the conformance
 * suite proves (the C cases of docs/design/rules.md); the second is the run lifecycle the plane
 * builds on, each still one transaction. No method reads or writes another tenant's rows.
 */
export interface TenantStore {
  /** The tenant every operation is confined to. */
  readonly tenant: string;

  // ── store primitives (the C cases) ────────────────────────────────────────

  /**
   * Decide and insert in one serialised transaction (docs/design/rules.md#c1, #c12): the run's slot
   * and, when `hold` is given and the run holds none, its hold. Refuses `TooManyRuns` (full count)
   * or `SpentOut` and writes nothing, not even the slot. Idempotent per run; the first
   * `admittedAtMs` wins. The stored plane-wide ceiling applies as well (`bound: 'plane'`); a raw
   * reserve has no agent, so no per-agent ceiling covers it.
   */
  reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome>;
  /** Deletes the run's slot and hold in one transaction; idempotent (docs/design/rules.md#p4). */
  release(run: string): Promise<void>;
  /** Moves the run's hold, whole, to `period`; no check, no-op without a hold (docs/design/rules.md#c17). */
  carry(run: string, period: string): Promise<void>;
  /** Hold rows in ascending run-id order, at most `limit` (docs/design/rules.md#c18). */
  reservations(limit: number): Promise<Held[]>;
  /** Sum of the holds in `period`, saturating. */
  reserved(period: string): Promise<Spend>;
  /** Upserts the halt row of `halt.scope`; a re-throw replaces reason, operator and instant (docs/design/rules.md#c22). */
  setHalt(halt: Halt): Promise<void>;
  /** Deletes the halt row; answers whether one stood (docs/design/rules.md#c24–#c26). */
  liftHalt(scope: HaltScope): Promise<boolean>;
  /** Deletes the row only if it still equals `standing` in reason, operator and instant (docs/design/rules.md#c28–#c30). */
  liftHaltIf(standing: Halt): Promise<boolean>;
  /** Every standing halt, bytewise by scope key, in one read; an unreadable row throws `STORE_CORRUPT` (docs/design/rules.md#c23). */
  halts(): Promise<Halt[]>;
  /**
   * Writes the receipt of `(run, epoch)` and applies it once: accrue to `period`, shrink or (when
   * concluding) delete the hold, release the slot when `releaseSlot`. An identical retry changes
   * nothing; a different payload throws `CONFLICT` and changes nothing (docs/design/rules.md#c6,
   * #c7). A receipt of a run `pruneRuns` removed is never written again: `CONFLICT`
   * (`details.pruned`), nothing changed.
   */
  settle(settlement: QuotaSettlement): Promise<SettleOutcome>;
  /** Settled total of `period`, zero when never written (docs/design/rules.md#c8). */
  spent(period: string): Promise<Spend>;
  /** Number of slots. */
  running(): Promise<number>;
  /** Slot holders in ascending run-id order, at most `limit` (docs/design/rules.md#p5). */
  runningRuns(limit: number): Promise<string[]>;
  /**
   * Records one dispatch against the grant's sliding windows, serialised per (tenant, grant)
   * (docs/design/rules.md#c31–#c37): a present key succeeds unjudged; otherwise prune below the
   * store-wide floor, judge (unless exempt) and insert. A refusal inserts nothing (the prune still
   * commits).
   */
  reserveRate(reservation: RateReservation): Promise<RateOutcome>;
  /** Read-only: what `reserveRate` would answer a fresh non-exempt key (docs/design/rules.md#c33). */
  rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome>;

  // ── tenant configuration ──────────────────────────────────────────────────

  /** The tenant's stored quota, or `null` when none was set (then every ceiling is absent). */
  getQuota(): Promise<TenantQuota | null>;
  /** Replaces the tenant's quota and appends `audit` in the same transaction. */
  setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void>;
  /**
   * Per agent name in `agents`: the slots its runs hold in this tenant, and its settled and
   * reserved spend in `period`. Read-only, one snapshot. Optional for third-party
   * stores; both adapters have it.
   */
  agentUsage?(agents: readonly string[], period: string): Promise<AgentUsage[]>;

  // ── run lifecycle (one transaction each) ──────────────────────────────────

  /** Admission as one transaction: halts → quota → hold formula → reserve → run and pass 1 recorded. */
  admit(request: AdmitRequest): Promise<AdmitOutcome>;
  /**
   * A new pass of an admitted run: next epoch, no slot, never gated by concurrency, spend or
   * workload halts, hold carried to the period of `atMs`, status `running`
   * (docs/design/rules.md#l15–#l17). A `stranded`, `paused` or `withheld` run resumes alike. Throws
   * `NOT_FOUND` for an unknown run, `CONFLICT` for a `concluded` or `released` one. In the same
   * transaction it reads the halts: when a `subject:` halt names a principal of the run's chain it
   * answers `Withheld` (naming the halt `coveringHalt` picks among those subject halts;
   * `pass-rules.ts` `withheldBy`), opens no pass, carries nothing, and sets the status to
   * `withheld` (`statusSinceMs` = `atMs` unless already withheld) — the one write a `Withheld`
   * answer makes.
   */
  resume(request: ResumeRequest): Promise<ResumeOutcome>;
  /**
   * Ends a pass: its receipt derived from the pass row and applied as `settle` does. A newly
   * written receipt stamps the pass settled and, when it is the run's latest pass and the run is
   * not `released`, sets the status: `concluded` when concluding; otherwise `paused`, except that a
   * `withheld` run stays `withheld` (it is pausing for its halt). A late settle of a lapsed or
   * stranded pass is accepted like any other, once (its receipt is unique). With `by`, a newly
   * written receipt also appends, in the same transaction, the audit row `{ action: 'run.settle',
   * subject: run, by, atMs, detail: { epoch, period, spend: { tokens, minorUnits }, releaseSlot,
   * concludes } }`; an `already-settled` answer appends nothing. Throws `NOT_FOUND` for an unknown
   * pass, `CONFLICT` for a receipt with a different payload, and `CONFLICT` (`details.pruned`) for
   * a run whose records `pruneRuns` removed.
   */
  settlePass(request: SettlePassRequest): Promise<SettlePassOutcome>;
  /**
   * A run's dispatch, one transaction: `NOT_FOUND`/`CONFLICT` as `resume` for the run; with
   * `epoch`, the pass is fenced as `heartbeat` fences it; then the subject-halt check as `resume`
   * (`Withheld`, nothing counted, the run marked `withheld`); then, with `epoch`, the lease renewed
   * as `heartbeat` renews it (also when the rate answer below is a refusal: the pass is alive);
   * then `reserveRate` with the tenant's configured ceilings for the grant added, read in the
   * same transaction.
   */
  dispatch(request: DispatchRequest): Promise<DispatchOutcome>;
  /**
   * Renews pass `(run, epoch)`'s lease, one transaction, checked in order:
   * 1. `NOT_FOUND` for an unknown run or pass;
   * 2. `CONFLICT` when the run is `concluded` or `released`;
   * 3. `CONFLICT` when `epoch` is below the run's latest epoch (a newer pass exists:
   *    `details.latestEpoch` names it; this pass must stop and settle);
   * 4. `CONFLICT` when the pass is settled already, or the run is `stranded` (a sweep declared the
   *    pass dead: settle it with its real spend, then resume);
   * 5. `Withheld` as `resume` answers it (lease not renewed, run marked `withheld`);
   * 6. otherwise the lease becomes `max(current expiry, atMs + leaseMs)` (saturating), and a
   *    `withheld` run whose halt was lifted becomes `running` again.
   * A lease that lapsed but that no sweep acted on is renewed: only the sweep acts on a lapse.
   */
  heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome>;
  /** One run as the registry knows it, or `null`. */
  getRun(run: string): Promise<RunRecord | null>;

  // ── sweep, listings and operator acts (one transaction each) ──────────────

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

  // ── waiting admissions (one transaction each) ─────────────────────────────
  // `applied` (on `sweepRun`, `cancelWaiter`, `sweepWaiters` as on the lifecycle requests): the
  // instant is read inside the transaction once the lock is held, so a grant written there leases
  // from when it was applied (see `AppliedInstant`).
  // Every transaction that frees a slot or raises a ceiling of a tenant (`settlePass` of a pass
  // holding a slot, `releaseRun`, `sweepRun`, `setQuota`, `cancelWaiter`, `sweepWaiters`) grants
  // its waiters first come first served in that same transaction; `admit` serves them before it
  // decides. The raw contract primitives (`settle`, `release`) carry no instant and leave the
  // grant to the tenant's next decision.

  /**
   * An admission that may wait: decided exactly as `admit` (the queue is served first, so no later
   * arrival takes a slot ahead of a waiter that fits); only a `TooManyRuns` refusal instead puts it
   * in the tenant's queue, first come first served, with a lease of `wait.leaseMs` from `atMs`,
   * answering `{ ok: false, waiting: true, run, position, enqueuedAtMs }`. A run id already waiting
   * is a collect (see `collectWaiter`).
   */
  admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome>;
  /**
   * The waiting caller comes back at `request.atMs` (the same admission it asked for): the queue is
   * served first; when still waiting and `atMs` is before `wait.untilMs`, its lease is renewed and
   * its place answered. Otherwise its queue row goes and the admission is answered in the same
   * transaction as the books stand: a grant written for it comes back as its pass (a retry answered
   * from the books; a grant is collected once), a waiter whose time is up gets the `TooManyRuns`
   * refusal decided now with `queuePosition` and `waitedMs`, a waiter that something else now
   * refuses gets that refusal. A waiter the grant loop refused for a reason other than room hears
   * that reason (a halt, `Unbounded`, `SpentOut` judged with room left out), never a `TooManyRuns`
   * because a waiter behind it took the slot; if only room refuses it by now, it waits on in its
   * own place (or, its time up, gets `TooManyRuns` with that place; W15, W16). A grant whose lease
   * lapsed at `atMs` before this collect (its caller was away longer than the lease) is withdrawn
   * whole and the waiter stands again in its own place and is served afresh, so the caller hears a
   * fresh pass, its place or its refusal, never a `CONFLICT` about a pass it never received. With
   * `wait.keepPlace` (another caller of the same run waits on), a waiter whose time is up and whom
   * room still refuses gets that `TooManyRuns` and its place stays, waiting (W17).
   */
  collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome>;
  /**
   * The caller of a waiting admission gave up (disconnected, cancelled): its waiting row goes; a
   * grant written but not collected is withdrawn (slot and hold given back, its run and pass
   * erased) and the room goes to the next waiters in the same transaction.
   */
  cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome>;
  /**
   * The sweep of the queue at `atMs`: waiters whose lease lapsed are removed, grants nobody
   * collected before their waiter's lease lapsed are withdrawn, and the room goes to the next
   * waiters.
   */
  sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep>;
  /** The queue at `atMs`: live waiters still waiting, when the oldest joined, grants not collected. Read-only. */
  waitQueue(request: { atMs: number }): Promise<WaitQueue>;
  // ── retention (see store/retention.ts) ────────────────────────────────────

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

  // ── audit log ─────────────────────────────────────────────────────────────

  /** Appends one audit row (numbered and hash-chained per tenant) and returns it. */
  appendAudit(entry: AuditEntry): Promise<AuditRecord>;
  /** The newest `limit` audit rows, newest first, optionally only of one `action`. */
  auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]>;
  /**
   * The audit rows with `seq > afterSeq`, in ascending `seq`, at most `limit`, exactly as stored
   * (for verifying the hash chain page by page). An unreadable row throws `STORE_CORRUPT` with
   * `details.seq` naming it.
   */
  auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]>;
}
