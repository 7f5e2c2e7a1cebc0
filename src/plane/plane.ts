import type { Budget } from '../core/budget.js';
import type { Clock } from '../core/clock.js';
import type { AgentIdentity, Halt, HaltScope } from '../core/halt-scope.js';
import type { Operator } from '../core/operator.js';
import type { AgentCeilings, TenantQuota, TenantQuotaInput } from '../core/quota.js';
import type { PlaneCeiling } from '../core/plane-ceiling.js';
import type { AlertThreshold } from '../core/alert-thresholds.js';
import type { QuotaPatch } from '../core/quota-patch.js';
import type { RateCeiling } from '../core/rate.js';
import type {
  HaltedRefusal,
  RateLimitedRefusal,
  Refused,
  SpentOutRefusal,
  TooManyRunsRefusal,
  UnboundedRefusal,
  UncountableRateRefusal,
  WithheldRefusal,
} from '../core/refusal.js';
import type { Spend } from '../core/spend.js';
import type { QuotaStore } from '../store/store.js';
import type { RateWindows, RateWindowsInput } from './rate-windows.js';
import type { CallCeilings } from '../core/call-ceilings.js';
import type { CallReservation } from '../core/lifecycle/call-books.js';
import type { SubjectStanding } from '../core/lifecycle/call-standings.js';
import type { CallEnded, ReserveCallOutcome } from '../core/lifecycle/model-calls.js';
import type { AdjustCallInput, ReleaseCallInput, ReserveCallInput } from './model-calls.js';
import type { AlertsStatus, EventsPage, EventsInput } from './event-types.js';
import type { SpendHistory, SpendHistoryInput } from './spend-history.js';
import type { PruneInput, PruneResult } from './prune-types.js';
import type { LeaseRenewal, PassGrant, QuotaSettlement, ReleaseRunOutcome, SettleOutcome } from '../store/types.js';
import type {
  AttentionInput,
  AttentionReport,
  AuditLogInput,
  AuditLogPage,
  AuditVerification,
  LiftedHaltsInput,
  LiftedHaltsPage,
  ReleaseInput,
  DeleteTenantAnswer,
  DeleteTenantInput,
  ReservationsInput,
  ReservationsPage,
  RunsInput,
  RunsPage,
  SlotHoldersInput,
  SlotHoldersPage,
  SweepInput,
  SweepResult,
  VerifyAuditInput,
} from './operator-types.js';

/**
 * Options of {@link createPlane}.
 * - `store`: the quota store every instance of the plane shares (from `openStore`).
 * - `clock`: where the plane reads "now" when a call gives no `atMs`; defaults to the wall clock
 *   (`systemClock`). Tests and replay pass a manual clock.
 * - `leaseMs`: lease of a pass when a call gives none, in milliseconds; default 60 000
 *   (docs/design/decisions.md "Passes and leases"). An integer from 1 to `MAX_LEASE_MS`
 *   (86 400 000, 24 hours); every call's `leaseMs` (admit, resume, heartbeat, dispatch) obeys the
 *   same bound, so no pass can hold a concurrency slot longer than a day without heartbeating.
 * - `maxDecisionWaitMs`: the longest a decision asked without `atMs` (admit, resume, heartbeat,
 *   dispatch, settle, a waiting admission's collects) may wait between being asked and being
 *   applied, in ms: behind a group-commit batch, for the SQLite write lock another process holds,
 *   for a PostgreSQL tenant lock. Every instant such a decision records (admission, lease expiry,
 *   dispatch, renewal, grant) is the instant it is applied, read from `clock` inside the
 *   transaction, so a lease is never answered lapsed; a decision that waited longer than this is
 *   not applied and throws `STORE_UNAVAILABLE` (`details.reason = 'waited-too-long'`), nothing
 *   held (docs/design/rules.md#l93, #l94). An integer from 0 to 3 600 000; default 2 000.
 *
 * `createPlane` throws `INVALID_ARGUMENT` naming the option when one is malformed.
 */
export interface PlaneOptions {
  readonly store: QuotaStore;
  readonly clock?: Clock | undefined;
  readonly leaseMs?: number | undefined;
  readonly maxDecisionWaitMs?: number | undefined;
}

/**
 * An admission request (docs/design/decisions.md "The order of admission").
 * - `tenant`: whose work this is (1–200 printable characters).
 * - `run`: the run id; a bare ULID gets the `run_` prefix, any other identifier is kept; absent →
 *   a new `run_<ULID>` whose time part is the admission instant, so ids sort by admission.
 * - `agent`: the governing agent identity `{ name, digest }` (digest: 64 hex, stored lowercase),
 *   matched by agent and revision halts.
 * - `chain`: the delegation chain, root person first, matched by subject halts.
 * - `budget`: the run's own ceilings; a run under a spend ceiling must declare the unit's total and
 *   per-call bound (docs/design/rules.md#d5), else the admission is refused `Unbounded`.
 * - `width`: steps the run may have in flight; a non-negative safe integer, default 1.
 * - `atMs`: the admission instant, Unix ms; default the plane clock. Not with `waitMs` above 0.
 * - `leaseMs`: the first pass's lease, ms, 1 to `MAX_LEASE_MS` (24 hours); default the plane's `leaseMs`.
 */
export interface AdmitInput {
  readonly tenant: string;
  readonly run?: string | undefined;
  readonly agent?: AgentIdentity | undefined;
  readonly chain?: readonly string[] | undefined;
  readonly budget?: Budget | undefined;
  readonly width?: number | undefined;
  readonly atMs?: number | undefined;
  readonly leaseMs?: number | undefined;
  /**
   * How long to wait for a slot, ms, 0 to `MAX_WAIT_MS` (15 minutes); default 0
   * (docs/design/rules.md#w1–#w5). Only a `TooManyRuns` refusal waits: the admission joins its
   * tenant's queue (first come, first served) and is admitted by the transaction that frees a slot.
   * When the time is up it answers the `TooManyRuns` refusal decided then, with `queuePosition` and
   * `waitedMs`. `SpentOut`, `Halted` and `Unbounded` never wait. A `waitMs` above 0 together with
   * `atMs` is `INVALID_ARGUMENT` naming `waitMs`: a wait runs in real time from now, so it cannot
   * be decided at a given instant.
   */
  readonly waitMs?: number | undefined;
  /** Cancels a waiting admission: its place (or a grant not yet collected) is given back and the signal's reason thrown. */
  readonly signal?: AbortSignal | undefined;
}

/** The refusals an admission can answer; each wrote nothing (docs/design/rules.md#l8, #l9). */
export type AdmitRefusal = HaltedRefusal | UnboundedRefusal | TooManyRunsRefusal | SpentOutRefusal;

/**
 * Answer of `admit`: pass 1 of the run (`epoch` 1, the billing `period` it started in, the run's
 * `hold` or `null` when the quota bounds no spend, and `leaseExpiresAtMs`), or a refusal value
 * `{ ok: false, refusal, message }` with code `Halted`, `Unbounded`, `TooManyRuns` or `SpentOut`.
 */
export type AdmitResult = PassGrant | Refused<AdmitRefusal>;

/**
 * The end of a pass (docs/design/rules.md#l19–#l22): `spend` is what this pass itself dispatched
 * (not the run's cumulative spend); `concludes` is true when this pass concluded the run (its
 * hold's remainder is given back). `epoch` is the pass's fencing epoch, a positive safe integer.
 * `atMs` defaults to the plane clock. `by` makes it an operator's settle (settling a stranded run's
 * real spend): when it writes the receipt, the audit row `run.settle` is appended in the same
 * transaction (docs/design/rules.md#l63).
 */
export interface SettleInput {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly spend: Spend;
  readonly concludes: boolean;
  readonly atMs?: number | undefined;
  readonly by?: Operator | undefined;
}

/**
 * Answer of `settle`: `'settled'` when this call wrote the receipt, `'already-settled'` when the
 * identical receipt was there (a retry after a lost acknowledgement); `receipt` is the receipt.
 */
export interface SettleResult {
  readonly ok: true;
  readonly outcome: SettleOutcome;
  readonly receipt: QuotaSettlement;
  /**
   * By how much the pass ran over its hold, per unit (zero when within; docs/design/rules.md#l90,
   * #l91): the spend is recorded whole and the overrun reported, never clipped.
   */
  readonly overrun: Spend;
}

/**
 * A resume (docs/design/rules.md#l15–#l17): a new pass of `run`, at `atMs` (default the plane
 * clock) with lease `leaseMs` (default the plane's).
 */
export interface ResumeInput {
  readonly tenant: string;
  readonly run: string;
  readonly atMs?: number | undefined;
  readonly leaseMs?: number | undefined;
}

/**
 * Answer of `resume`: the new pass, or `Withheld` while a subject halt names a principal of the
 * run's chain (docs/design/rules.md#l47); then no pass was opened and the run is marked `withheld`.
 */
export type ResumeResult = PassGrant | Refused<WithheldRefusal>;

/**
 * A heartbeat of pass `(run, epoch)` (docs/design/rules.md#l42): renews its lease to
 * `atMs + leaseMs` (never shortening it). `atMs` defaults to the plane clock, `leaseMs` to the
 * plane's lease.
 */
export interface HeartbeatInput {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly atMs?: number | undefined;
  readonly leaseMs?: number | undefined;
}

/**
 * Answer of `heartbeat`: `{ ok: true, run, epoch, leaseExpiresAtMs }`, or `Withheld` (the lease
 * was not renewed: pause the run by settling without concluding, and resume after the lift).
 */
export type HeartbeatResult = LeaseRenewal | Refused<WithheldRefusal>;

/**
 * One dispatch of a granted tool (docs/design/rules.md#l24, #l25).
 * - `grant`: the tool reference, e.g. `tool://payments/refund`.
 * - `dispatch`: the first attempt's idempotency key; retries and resumed passes pass the same one
 *   and are counted once.
 * - `ceilings`: `[{ count, windowSeconds }]` the caller declares; optional, default none (`[]`).
 *   The tenant's configured `quota.rateCeilings[grant]` apply as well, declared or not, and every
 *   one must have room.
 * - `exempt`: a compensating call, counted but never refused; default false.
 * - `atMs`: default the plane clock.
 */
export interface DispatchInput {
  readonly tenant: string;
  readonly run: string;
  readonly grant: string;
  readonly dispatch: string;
  readonly ceilings?: readonly RateCeiling[] | undefined;
  readonly exempt?: boolean | undefined;
  readonly atMs?: number | undefined;
  /**
   * The dispatching pass's epoch. When given, the pass is fenced as a heartbeat is (a stale epoch
   * throws `CONFLICT`) and its lease is renewed by `leaseMs` (default the plane's lease).
   */
  readonly epoch?: number | undefined;
  readonly leaseMs?: number | undefined;
}

/** The refusals a dispatch can answer; a refused dispatch inserted nothing (`Withheld` marks the run). */
export type DispatchRefusal = RateLimitedRefusal | UncountableRateRefusal | WithheldRefusal;

/** Answer of `dispatch`: `{ ok: true }`, or `RateLimited` / `UncountableRate` / `Withheld` as a refusal value. */
export type DispatchResult = { readonly ok: true } | Refused<DispatchRefusal>;

/**
 * What a halt reaches (docs/design/rules.md#l46, #l47, #c44): tenant, agent and revision halts stop
 * admission only unless thrown with `reachesRunning: true`; a subject halt always also reaches
 * running work, which answers `Withheld` and pauses.
 */
export type HaltReach = 'admission' | 'admission and running work';

/**
 * Throwing a halt (docs/design/rules.md#c21, #c22). `scope` is a key string (`tenant`,
 * `agent:<name>`, `revision:<64 hex>`, `subject:<principal>`) or a `HaltScope`; `reason` is
 * required and not blank; `by` is the operator who throws it; `atMs` defaults to the plane clock.
 */
export interface HaltInput {
  readonly tenant: string;
  readonly scope: string | HaltScope;
  readonly reason: string;
  readonly by: Operator;
  readonly atMs?: number | undefined;
  /** `true` when `tenant` is meant as a new tenant: without it, a tenant that does not exist is refused (rules.md#l95). */
  readonly newTenant?: boolean | undefined;
  /**
   * `true` to reach running work too (docs/design/rules.md#c44): the running runs the halt covers
   * answer `Withheld` at their next heartbeat, dispatch or resume, and pause. Default `false`: new
   * admissions only. A subject halt reaches running work either way.
   */
  readonly reachesRunning?: boolean | undefined;
}

/**
 * The options of a quota change (`setQuota`, `updateQuota`), given in place of the operator:
 * - `by`: who changes it (default `{ actor: 'library', basis: 'asserted' }`);
 * - `newTenant: true`: the caller means a tenant that does not exist yet. Without it such a tenant
 *   is refused `NOT_FOUND` naming it and the nearest known tenant, and nothing is written
 *   (rules.md#l95), so a typo cannot create a tenant. `halt` and `keys.create` take the same
 *   member in their input.
 */
export interface QuotaChangeOptions {
  readonly by?: Operator | undefined;
  readonly newTenant?: boolean | undefined;
}

/**
 * Answer of `halt`: the standing halt as written (`scope` as its key string), what it reaches, and
 * `running`, how many runs in its scope were running once it stood (docs/design/rules.md#c45):
 * when `reachesRunning`, those the halt reaches (each answers `Withheld` at its next step);
 * otherwise those that continue.
 */
export interface HaltResult {
  readonly scope: string;
  readonly reason: string;
  readonly by: Operator;
  readonly atMs: number;
  readonly reach: HaltReach;
  readonly reachesRunning: boolean;
  readonly running: number;
}

/**
 * Throwing the plane-wide halt over every tenant of the store (docs/design/rules.md#c49–#c51):
 * `reason` is required and not blank; `by` is the operator; `atMs` defaults to the plane clock;
 * `reachesRunning: true` withholds the running runs of every tenant too (default: new admissions
 * only).
 */
export interface PlaneHaltInput {
  readonly reason: string;
  readonly by: Operator;
  readonly atMs?: number | undefined;
  readonly reachesRunning?: boolean | undefined;
}

/** Answer of `haltPlane`: as `halt` answers (`scope: 'plane'`), `running` counted over every tenant. */
export type PlaneHaltResult = HaltResult;

/** Lifting the plane-wide halt: `by` is the operator who lifts it; `atMs` defaults to the plane clock. */
export interface PlaneLiftInput {
  readonly by: Operator;
  readonly atMs?: number | undefined;
}

/**
 * Lifting a halt (docs/design/rules.md#c28–#c30): `by` is the operator who lifts it; `atMs`
 * defaults to the plane clock.
 */
export interface LiftInput {
  readonly tenant: string;
  readonly scope: string | HaltScope;
  readonly by: Operator;
  readonly atMs?: number | undefined;
}

/**
 * Answer of `lift` (docs/design/rules.md#c28–#c30):
 * - `wasStanding`: a halt stood on the scope when the lift read it (and the lift was audited);
 * - `removed`: this lift deleted that halt. `wasStanding && !removed` means the row changed
 *   in between: another lift removed it, or a re-throw replaced it, which stays standing.
 */
export interface LiftResult {
  readonly wasStanding: boolean;
  readonly removed: boolean;
}

/**
 * A JSON Merge Patch of the plane-wide ceiling: absent keeps, `null` removes;
 * `agents` and `weights` merge per key.
 */
export interface PlanePatch {
  readonly maxConcurrentRuns?: number | null;
  readonly agents?: Readonly<Record<string, { readonly maxConcurrentRuns?: number | null } | null>> | null;
  readonly weights?: Readonly<Record<string, number | null>> | null;
  /** The default spend-alert thresholds (docs/design/rules.md#e2); `null` removes them (80 % and 100 % again). */
  readonly alertThresholds?: readonly AlertThreshold[] | null;
}

/** A usage question: `period` is a `YYYY-MM` or `YYYY-MM-DD` key; default the current period of the tenant's quota. */
export interface UsageInput {
  readonly tenant: string;
  readonly period?: string | undefined;
}

/**
 * A tenant's figures for one period: `spent` (settled), `reserved` (held by open runs in that
 * period), `running` (slots now), and `quota` (the stored quota, `null` when none was set, which
 * means no ceilings and monthly periods). The figures come from separate reads, so under
 * concurrent traffic they are each true but not one snapshot.
 */
export interface Usage {
  readonly tenant: string;
  readonly period: string;
  readonly spent: Spend;
  readonly reserved: Spend;
  readonly running: number;
  readonly quota: TenantQuota | null;
  /**
   * The tenant's waiting admissions now: `depth` waiters in its queue, and how long the
   * oldest has waited (`oldestWaitMs`, ms; `null` when nobody waits).
   */
  readonly queue: QueueFigures;
  /**
   * Per agent with ceilings in the quota (`quota.agents`): its slots now, its settled
   * and reserved spend in `period`, and its ceilings. Absent when the quota sets no agent ceiling.
   */
  readonly agents?: readonly AgentUsageFigures[];
}

/**
 * A tenant's waiting queue as `usage` and `status` show it: `depth` waiters, the oldest waiting
 * `oldestWaitMs` ms (`null`: none).
 */
export interface QueueFigures {
  readonly depth: number;
  readonly oldestWaitMs: number | null;
}

/**
 * One agent's figures in {@link Usage}: its slots now, its settled and reserved spend in the
 * period, and its ceilings.
 */
export interface AgentUsageFigures {
  readonly agent: string;
  readonly running: number;
  readonly spent: Spend;
  readonly reserved: Spend;
  readonly ceilings: AgentCeilings;
}

/**
 * The plane-wide ceiling and what it bounds now (docs/design/rules.md#k1–#k6): `ceiling` as stored
 * (`null`: none), `running` every tenant's slots (`null` when the store cannot count them), `limit`
 * the plane-wide `maxConcurrentRuns` (`null`: unlimited), and per agent with a plane-wide ceiling
 * its slots across tenants against its limit.
 */
export interface PlaneStatus {
  readonly ceiling: PlaneCeiling | null;
  readonly running: number | null;
  readonly limit: number | null;
  readonly agents: readonly { readonly agent: string; readonly running: number; readonly limit: number | null }[];
  /** The standing plane-wide halt (docs/design/rules.md#c49, #c51), or `null`. */
  readonly halt: PlaneHaltView | null;
}

/** The plane-wide halt as `planeStatus` and `halts` show it: why, who threw it, when, and what it reaches. */
export interface PlaneHaltView {
  readonly reason: string;
  readonly by: Operator;
  readonly atMs: number;
  readonly reachesRunning: boolean;
}

/**
 * The run lifecycle on top of a quota store (docs/design/architecture.md, "The layers"). Every
 * method validates its input at the boundary and throws `QuotaError('INVALID_ARGUMENT')` naming the
 * bad field. Refusals are values (`{ ok: false, refusal, message }`); faults are exceptions. A
 * store that cannot answer surfaces as `QuotaError('STORE_UNAVAILABLE')`, and nothing is admitted,
 * dispatched or settled on a guess (docs/design/decisions.md "Fail closed").
 */
export interface Plane {
  /**
   * Admits a run as one store transaction: halts (the narrowest covering halt is reported) → hold
   * formula → reserve (slot + hold) → run and pass 1 recorded (docs/design/decisions.md "The order
   * of admission"). Refuses `Halted`, `Unbounded`, `TooManyRuns` or `SpentOut`; a refusal writes
   * nothing. Retrying with the same `run` (a lost answer) returns its first pass again, uncounted;
   * a concluded run cannot be admitted again (`CONFLICT`), nor a pruned one (`CONFLICT`,
   * `details.pruned`).
   */
  admit(input: AdmitInput): Promise<AdmitResult>;
  /**
   * Settles a pass exactly once (docs/design/rules.md#l19–#l22): accrues its spend to the pass's
   * period, shrinks or (when concluding) deletes the run's hold, releases the slot if the pass took
   * it. An identical retry answers `'already-settled'` and changes nothing; a retry of the same
   * pass with a different payload throws `CONFLICT`; an unknown run or pass throws `NOT_FOUND`; a
   * run whose records a prune removed throws `CONFLICT` with `details.pruned` (never counted
   * again).
   */
  settle(input: SettleInput): Promise<SettleResult>;
  /**
   * Opens a new pass of an admitted run (docs/design/rules.md#l15–#l17): next epoch, no slot,
   * carries the run's hold to the period of `atMs`. Never refused for concurrency, spend or
   * workload halts; a stranded, paused or withheld run resumes alike. Answers `Withheld` while a
   * subject halt names a principal of the run's chain (docs/design/rules.md#l47). Throws
   * `NOT_FOUND` for an unknown run, `CONFLICT` for a concluded or released one.
   */
  resume(input: ResumeInput): Promise<ResumeResult>;
  /**
   * Renews a pass's lease (docs/design/rules.md#l42–#l44), one store transaction. Answers
   * `Withheld` under a subject halt on the run's chain (#l47). Throws `NOT_FOUND` for an unknown
   * run or pass, and `CONFLICT` when the run is closed, a newer pass exists
   * (`details.latestEpoch`), the pass has settled, or the sweep stranded the run (see
   * `TenantStore.heartbeat`).
   */
  heartbeat(input: HeartbeatInput): Promise<HeartbeatResult>;
  /**
   * Counts one dispatch against the grant's sliding windows (docs/design/rules.md#c31–#c34): the
   * caller's ceilings and the tenant's configured ones for the grant (#l24). Refuses
   * `RateLimited` or `UncountableRate`, inserting nothing; an `exempt` call is never refused.
   * Answers `Withheld` (counting nothing) under a subject halt on the run's chain. With `epoch`,
   * fences and renews that pass's lease as `heartbeat` does.
   */
  dispatch(input: DispatchInput): Promise<DispatchResult>;
  /**
   * Replaces the tenant's quota (validated with `parseQuota`) and audits it as `quota.set` with
   * the old and new quota, in the store's transaction. `by` defaults to
   * `{ actor: 'library', basis: 'asserted' }`. Returns the normalised quota stored. It applies to
   * the next admission on every instance (docs/design/rules.md#l11). The third argument is the
   * operator, or {@link QuotaChangeOptions} (`{ by, newTenant }`). A tenant that does not exist (no
   * quota and no history) is refused `NOT_FOUND` naming it and the nearest known tenant, and nothing
   * is written, unless `newTenant` is true (docs/design/rules.md#l95):
   * `setQuota('acme', quota, { newTenant: true })`.
   */
  setQuota(tenant: string, quota: TenantQuotaInput, by?: Operator | QuotaChangeOptions): Promise<TenantQuota>;
  /** The tenant's stored quota, or `null` when none was set (then every ceiling is absent). */
  getQuota(tenant: string): Promise<TenantQuota | null>;
  /**
   * Changes part of the tenant's quota with JSON Merge Patch semantics
   * (`QuotaPatch`: an absent member is kept, `null` removes a ceiling, rate ceilings merge per
   * grant), validated as `setQuota` validates, and audits it as `quota.update` with the old and new
   * quota and the patch. Returns the whole quota stored. The third argument is the operator, or
   * {@link QuotaChangeOptions}. Throws `INVALID_ARGUMENT` naming the field, and `NOT_FOUND` for a
   * tenant that does not exist unless `newTenant` is true (rules.md#l95).
   */
  updateQuota(tenant: string, patch: QuotaPatch, by?: Operator | QuotaChangeOptions): Promise<TenantQuota>;
  /** The tenant's spent, reserved and running figures for one period, with its quota (and per-agent figures where it sets agent ceilings). */
  usage(input: UsageInput): Promise<Usage>;
  /** The stored plane-wide ceiling, or `null` when none was set. */
  getPlaneCeiling(): Promise<PlaneCeiling | null>;
  /**
   * Replaces the plane-wide ceiling (validated with `parsePlaneCeiling`; see `PlaneCeiling`) and
   * audits it as `plane.set` with the old and new ceiling in the reserved `quotaplane:plane` chain.
   * It applies to the next admission of every tenant on every instance. Throws `INVALID_ARGUMENT`
   * naming the field, `STORE_MISCONFIGURED` on a store that keeps no plane-wide ceiling.
   */
  setPlaneCeiling(ceiling: PlaneCeiling, by?: Operator): Promise<PlaneCeiling>;
  /**
   * Changes part of the plane-wide ceiling (JSON Merge Patch; `agents` and `weights` merge per
   * key, `null` removes), audited as `plane.update`. Returns the whole ceiling stored.
   */
  updatePlaneCeiling(patch: PlanePatch, by?: Operator): Promise<PlaneCeiling>;
  /** The plane-wide ceiling with every tenant's slots and each bounded agent's against it. */
  planeStatus(): Promise<PlaneStatus>;
  /**
   * Throws (or re-throws, replacing) a halt on a scope (docs/design/rules.md#c21, #c22). The audit
   * row (action `halt`) is appended before the halt row changes. Answers what the halt reaches.
   * A tenant that does not exist is refused `NOT_FOUND` (naming it and the nearest known tenant)
   * before anything is written, unless `input.newTenant` is true (docs/design/rules.md#l95).
   */
  halt(input: HaltInput): Promise<HaltResult>;
  /**
   * Lifts a halt, journaled first (docs/design/decisions.md "Lifting is journaled first, and
   * everything an operator does is audited"): reads the standing halt; if none,
   * answers `{ wasStanding: false, removed: false }` and writes nothing; otherwise appends the
   * audit row (action `lift`) and then deletes the row only if it is still the halt read. A
   * tenant that does not exist is refused `NOT_FOUND`, naming the nearest known tenant (rules.md#l95).
   */
  lift(input: LiftInput): Promise<LiftResult>;
  /** Every standing halt of the tenant, bytewise by scope key (docs/design/rules.md#c23). */
  halts(tenant: string): Promise<Halt[]>;
  /**
   * Throws (or re-throws, replacing) the plane-wide halt over every tenant of the store
   * (docs/design/rules.md#c49–#c51), audited as `plane.halt` on the `quotaplane:plane` chain in the
   * store's one transaction. Answers what it reaches and how many runs of every tenant were running.
   * Throws `STORE_MISCONFIGURED` on a store that keeps no plane-wide halt.
   */
  haltPlane(input: PlaneHaltInput): Promise<PlaneHaltResult>;
  /** Lifts the plane-wide halt (audited as `plane.lift`), removed only if it is still the halt read. */
  liftPlaneHalt(input: PlaneLiftInput): Promise<LiftResult>;
  /** The standing plane-wide halt (`scope: { kind: 'plane' }`), or `null`. */
  planeHalt(): Promise<Halt | null>;
  /**
   * Sweeps lapsed leases (docs/design/rules.md#l49–#l55) of one tenant or every tenant: each run
   * holding a slot or running, with no live pass at `atMs`, gets its slot released and, when
   * running, is marked `stranded`; its hold stays. One store transaction per run, so a sweep that
   * dies halfway loses nothing: the next one finishes. Answers what it did.
   */
  sweep(input?: SweepInput): Promise<SweepResult>;
  /**
   * What needs a person: `run.stranded`, `run.withheld`, `hold.stale` and
   * `pass.unsettled` conditions, each with its run, how long it has stood and the commands that
   * end it. Read-only.
   */
  attention(input?: AttentionInput): Promise<AttentionReport>;
  /**
   * An operator's release of a run: its slot and hold given back and the run closed as `released`,
   * audited as `run.release` in the same transaction. A run already concluded or released answers
   * `'already-closed'` and writes nothing. Throws `NOT_FOUND` for a run that is unknown and holds
   * nothing, and for a tenant that does not exist, naming the nearest known tenant (rules.md#l95).
   */
  release(input: ReleaseInput): Promise<ReleaseRunOutcome>;
  /**
   * An operator's deletion of a tenant (docs/design/rules.md#l95-4–#l95-7): every record of it but
   * its audit chain removed, its own API keys included, and `tenant.delete` appended to the chain,
   * in one transaction; the tenant no longer exists (listed nowhere, acts on it refused as on any
   * unknown tenant) until something of it is written again. Refused `CONFLICT` while it has a
   * running run, a slot, a hold, a pass whose spend is not booked, a waiting admission, or one
   * the queue granted or refused whose caller has not yet collected it, naming each; `NOT_FOUND` for a tenant
   * that does not exist (also when another deletion went first); `INVALID_ARGUMENT` for a missing
   * `reason` or a `quotaplane:` chain.
   */
  deleteTenant(input: DeleteTenantInput): Promise<DeleteTenantAnswer>;
  /**
   * Recomputes every audit row's hash (`auditRowHash`) of one tenant or every tenant and names the
   * first row per tenant that does not match its content, is missing from the sequence, or
   * cannot be read. Read-only.
   */
  verifyAudit(input?: VerifyAuditInput): Promise<AuditVerification>;
  /*
   * The read-only listings (HTTP operator routes and the operator CLI read these and nothing
   * else). Each page is at most `limit` rows (1 … 1000, default 100) and reads one row more than
   * it answers, so `truncated` is read, not guessed.
   */
  /** A page of a tenant's run registry (ascending run id, after the cursor `after`), optionally of some statuses. */
  runs(input: RunsInput): Promise<RunsPage>;
  /**
   * The runs holding one of the tenant's slots, the running set, ascending run id
   * (docs/design/rules.md#p5).
   */
  slotHolders(input: SlotHoldersInput): Promise<SlotHoldersPage>;
  /** A tenant's holds in ascending run-id order (docs/design/rules.md#c18, #p5). */
  reservations(input: ReservationsInput): Promise<ReservationsPage>;
  /** A tenant's recorded lifts, newest first, read back from the audit log (`halts --lifted`). */
  liftedHalts(input: LiftedHaltsInput): Promise<LiftedHaltsPage>;
  /** A tenant's newest audit rows first, optionally of one action. */
  auditLog(input: AuditLogInput): Promise<AuditLogPage>;
  /**
   * A page of the event log after the cursor `after` (a `seq`), oldest first: spend thresholds
   * crossed, ceilings reached, overruns, stranded runs, halts thrown and lifted, each once
   * (docs/design/rules.md#e1–#e8); of one tenant when `tenant` is given. Throws
   * `STORE_MISCONFIGURED` on a store that keeps no event log.
   */
  events(input?: EventsInput): Promise<EventsPage>;
  /**
   * A tenant's spend alerts for its current period (docs/design/rules.md#e7): each spend ceiling
   * with the thresholds that apply, where they come from, their amounts and which are crossed.
   */
  alerts(input: { readonly tenant: string }): Promise<AlertsStatus>;
  /**
   * Reserves a model call's worst case against every model-call ceiling covering it, in one
   * decision (docs/design/rules.md#m3–#m6): answers `{ ok: true, call }` (its `maxOutputTokens` is
   * the cap to ask the model for) or `{ ok: false, refusal }`: `CallLimited` with `retryAtMs` (HTTP
   * 429), or `CallNeverFits` when the worst case alone passes a ceiling (HTTP 422). Throws
   * `INVALID_ARGUMENT` naming the field, `CONFLICT` for a `callId` that already ended.
   */
  reserveCall(input: ReserveCallInput): Promise<ReserveCallOutcome>;
  /**
   * Ends a call with its reported usage, or with none (its worst case is booked as an estimate)
   * (docs/design/rules.md#m5). A retry of the same end answers again; `NOT_FOUND` for an unknown
   * call, `CONFLICT` for one that ended otherwise.
   */
  adjustCall(input: AdjustCallInput): Promise<CallEnded>;
  /** Gives a failed call's reservation back; nothing is booked (docs/design/rules.md#m5). */
  releaseCall(input: ReleaseCallInput): Promise<CallEnded>;
  /** One model call as stored (ended calls are kept about a day), or `null`. */
  modelCall(input: { readonly tenant: string; readonly callId: string }): Promise<CallReservation | null>;
  /**
   * A tenant's model calls in flight, earliest deadline first (`limit` 1 … 1000, default 100),
   * after booking those past their deadline (docs/design/rules.md#m7).
   */
  openCalls(input: { readonly tenant: string; readonly limit?: number }): Promise<CallReservation[]>;
  /** A tenant's model-call ceilings, or `null` when none are set (docs/design/rules.md#m1). */
  getCallCeilings(tenant: string): Promise<CallCeilings | null>;
  /**
   * Replaces a tenant's model-call ceilings (`null` removes them), audited as `calls.set`; what the
   * windows count stays (docs/design/rules.md#m9). `options.by` names the operator, `newTenant`
   * allows a tenant that does not exist yet. Throws `INVALID_ARGUMENT` naming the bad member.
   */
  setCallCeilings(tenant: string, ceilings: CallCeilings | null, options?: { readonly by?: Operator; readonly newTenant?: boolean }): Promise<CallCeilings | null>;
  /**
   * Every subject of a tenant with a meter or ceilings, what each ceiling's window or period counts
   * at `atMs`, what calls in flight hold and the room left (docs/design/rules.md#m10), after
   * booking the calls past their deadline (#m7).
   */
  callStandings(input: { readonly tenant: string; readonly atMs?: number; readonly limit?: number }): Promise<SubjectStanding[]>;
  /** Every tenant the store has rows of, in byte order. */
  tenants(): Promise<string[]>;
  /**
   * A tenant's settled and held spend over its recent billing periods, oldest first (the
   * dashboard's chart): `periods` (1 … 36, default 12) ending with the one holding `atMs`.
   * Read-only; throws `INVALID_ARGUMENT` naming `periods` or `tenant`.
   */
  spendHistory(input: SpendHistoryInput): Promise<SpendHistory>;
  /**
   * A tenant's configured rate ceilings with how many dispatches each window holds at `atMs`.
   * Read-only.
   */
  rateWindows(input: RateWindowsInput): Promise<RateWindows>;
  /**
   * Retention (docs/design/rules.md#r1–#r9): removes, from one tenant or every tenant, the runs
   * closed (concluded or released) at least `olderThanMs` ago that hold no slot and no hold (a
   * concluded or released run with a pass never settled stays until that pass is settled), with
   * their passes and receipts, and the rate-dispatch instants older than both that age and the
   * widest countable window, in bounded batches of one store transaction each, every batch audited
   * (`run.prune`, `rate.prune`). Never touches an open run, a hold, a slot, a halt, a period figure
   * or an earlier audit row. Every pruned run id keeps a tombstone: a later settle, admission,
   * resume, heartbeat or dispatch under it throws `CONFLICT` (`details.pruned`), never counts
   * again. `dryRun` counts and removes nothing. Throws `INVALID_ARGUMENT` naming `olderThanMs`,
   * `batchSize`, `by`, `dryRun` or `tenant`.
   */
  prune(input: PruneInput): Promise<PruneResult>;
}
