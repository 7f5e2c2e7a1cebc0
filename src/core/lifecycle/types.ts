import type { AgentIdentity } from '../halt-scope.js';
import type { Budget } from '../budget.js';
import type { Operator } from '../operator.js';
import type { TenantQuota } from '../quota.js';
import type { RateCeiling } from '../rate.js';
import type {
  HaltedRefusal,
  RateLimitedRefusal,
  SpentOutRefusal,
  TooManyRunsRefusal,
  UnboundedRefusal,
  UncountableRateRefusal,
  WithheldRefusal,
} from '../refusal.js';
import type { Spend } from '../spend.js';

/**
 * Where a decision asked "now" reads its instant once it is applied. A
 * decision waits before it is applied: behind the other decisions of a group-commit batch, for
 * the SQLite write lock another process holds, for a PostgreSQL tenant lock another transaction
 * holds. Every instant it records (admission, lease expiry, dispatch, grant, renewal, resume) is
 * the instant it is applied, read from `nowMs` inside the transaction once the lock is held, so no
 * lease is answered that lapsed while the decision waited.
 * - `nowMs`: the plane's clock (integer Unix ms). The store calls it, never a clock of its own.
 * - `maxWaitMs`: the longest the decision may have waited, from the instant it was asked (the
 *   request's `atMs`) to the instant it is applied, in ms; past it the decision is not applied:
 *   `STORE_UNAVAILABLE` with `details.reason = 'waited-too-long'`, nothing written, nothing held.
 * A request without it is decided at its `atMs` exactly (replays, tests and library callers that
 * name their instant).
 */
export interface AppliedInstant {
  readonly nowMs: () => number;
  readonly maxWaitMs: number;
}

/** Spend reserved for a run against one billing period. */
export interface SpendHold {
  readonly period: string;
  readonly amount: Spend;
}

/** One hold row: what `run` may still cost, held in `period`. */
export interface Held {
  readonly run: string;
  readonly period: string;
  readonly remaining: Spend;
}

/**
 * The durable record of one settled pass (docs/design/rules.md#c6, #c7). All six fields form
 * the receipt: a retry with the same `(run, epoch)` must match every one.
 * - `period`: where the spend accrues; `null` accrues nothing but still moves the hold and slot.
 * - `releaseSlot`: this pass took the run's slot (the admission pass did; a resume did not).
 * - `concludes`: this pass concluded the run; its hold's remainder is given back.
 */
export interface QuotaSettlement {
  readonly run: string;
  readonly epoch: number;
  readonly period: string | null;
  readonly spend: Spend;
  readonly releaseSlot: boolean;
  readonly concludes: boolean;
}

/** One dispatch of a rate-ceilinged grant. `atMs` is Unix ms. */
export interface RateReservation {
  readonly grant: string;
  readonly run: string;
  /** The first attempt's idempotency key: retries and resumed passes derive the same one. */
  readonly dispatch: string;
  readonly ceilings: readonly RateCeiling[];
  readonly atMs: number;
  /** A compensating call: counted, never refused (docs/design/rules.md#c31–#c37). */
  readonly exempt: boolean;
}

/** Answer of `reserve`: ok, or the refusal; a refusal wrote nothing (docs/design/rules.md#c1, #c12). */
export type ReserveOutcome = { readonly ok: true } | { readonly ok: false; readonly refusal: TooManyRunsRefusal | SpentOutRefusal };

/** Answer of `reserveRate` and `rateRoom` (docs/design/rules.md#c31–#c37). */
export type RateOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly refusal: RateLimitedRefusal | UncountableRateRefusal };

/** Whether a settle wrote its receipt now, or found the identical receipt already there (docs/design/rules.md#c6, #c7). */
export type SettleOutcome = 'settled' | 'already-settled';

/**
 * Where a run stands in its lifecycle, as the run registry records it:
 * - `running`: its latest pass is open (admitted or resumed, not yet settled);
 * - `paused`: its latest pass settled without concluding; it may resume;
 * - `withheld`: a subject halt on a principal of its chain answered `Withheld` to its heartbeat,
 *   dispatch or resume; it stays withheld through the pause (settling without concluding) until a
 *   resume opens a pass, or it concludes or is released;
 * - `stranded`: the sweep found its latest pass's lease lapsed unsettled (the process died); its
 *   slot was released, its hold kept; a settle of the lapsed pass or a resume ends this;
 * - `concluded`: a pass settled with `concludes`; closed for good;
 * - `released`: an operator released its slot and hold (`releaseRun`); closed for good.
 */
export type RunStatus = 'running' | 'paused' | 'withheld' | 'stranded' | 'concluded' | 'released';

/** The statuses after which a run takes no new pass, heartbeat, dispatch or admission retry. */
export const CLOSED_RUN_STATUSES: readonly RunStatus[] = Object.freeze(['concluded', 'released']);

/** Every {@link RunStatus}, in lifecycle order. */
export const RUN_STATUSES: readonly RunStatus[] = Object.freeze([
  'running',
  'paused',
  'withheld',
  'stranded',
  'concluded',
  'released',
]);

/**
 * One admission as a single transaction: halts (the narrowest covering is
 * reported) → the tenant's quota, read inside the transaction unless `quota` is given → hold
 * formula (over the units the tenant or the run's agent bounds) → reserve (slot + hold) under every
 * ceiling covering the run: the tenant's for its agent (`quota.agents`), the tenant's, and the
 * stored plane-wide ceiling (refusals name the `bound`) → the run and its first pass recorded.
 */
export interface AdmitRequest {
  readonly run: string;
  readonly agent?: AgentIdentity | undefined;
  readonly chain?: readonly string[] | undefined;
  readonly budget: Budget;
  readonly width: number;
  readonly atMs: number;
  readonly leaseMs: number;
  /** An explicit quota overrides the stored one (library users). */
  readonly quota?: TenantQuota | undefined;
  /**
   * Read the instant when the decision is applied instead of using `atMs`:
   * `atMs` is then the instant it was asked, and a decision that waited past `applied.maxWaitMs`
   * is `STORE_UNAVAILABLE`, nothing written (see `AppliedInstant`).
   */
  readonly applied?: AppliedInstant | undefined;
}

/** A pass as admission or resume opened it: the run, its fencing epoch, its billing period, and the run's hold. */
export interface PassGrant {
  readonly ok: true;
  readonly run: string;
  readonly epoch: number;
  readonly period: string;
  /** The run's hold after this pass opened (the remaining worst case), or `null` when it holds none. */
  readonly hold: Spend | null;
  readonly leaseExpiresAtMs: number;
}

/** Answer of an admission: a pass, or a refusal that wrote nothing. */
export type AdmitOutcome =
  | PassGrant
  | { readonly ok: false; readonly refusal: HaltedRefusal | UnboundedRefusal | TooManyRunsRefusal | SpentOutRefusal };

/** A resume: a new pass of an admitted run, never gated; carries the hold to the period of `atMs` (docs/design/rules.md#l15–#l17). */
export interface ResumeRequest {
  readonly run: string;
  readonly atMs: number;
  readonly leaseMs: number;
  /**
   * Read the instant when the decision is applied instead of using `atMs`:
   * `atMs` is then the instant it was asked, and a decision that waited past `applied.maxWaitMs`
   * is `STORE_UNAVAILABLE`, nothing written (see `AppliedInstant`).
   */
  readonly applied?: AppliedInstant | undefined;
}

/**
 * Answer of `resume`: the new pass, or `Withheld` when a standing subject halt names a principal
 * of the run's chain. A `Withheld` answer opened no pass, carried nothing,
 * and only marked the run `withheld` (so `attention` can list it).
 */
export type ResumeOutcome = PassGrant | { readonly ok: false; readonly refusal: WithheldRefusal };

/**
 * A heartbeat of pass `(run, epoch)`: renews its lease to
 * `max(current expiry, atMs + leaseMs)`, so a late-arriving heartbeat never shortens a lease.
 */
export interface HeartbeatRequest {
  readonly run: string;
  readonly epoch: number;
  readonly atMs: number;
  /** A positive safe integer of milliseconds. */
  readonly leaseMs: number;
  /**
   * Read the instant when the decision is applied instead of using `atMs`:
   * `atMs` is then the instant it was asked, and a decision that waited past `applied.maxWaitMs`
   * is `STORE_UNAVAILABLE`, nothing written (see `AppliedInstant`).
   */
  readonly applied?: AppliedInstant | undefined;
}

/** A renewed lease: the pass and the instant (Unix ms) its lease now lapses at. */
export interface LeaseRenewal {
  readonly ok: true;
  readonly run: string;
  readonly epoch: number;
  readonly leaseExpiresAtMs: number;
}

/** Answer of `heartbeat`: the renewed lease, or `Withheld` (the lease was not renewed; pause the run). */
export type HeartbeatOutcome = LeaseRenewal | { readonly ok: false; readonly refusal: WithheldRefusal };

/**
 * The end of a pass: its own spend, and whether it concluded the run
 * (docs/design/rules.md#l19–#l22). `by` makes it an operator's settle: when this call writes the
 * receipt, the same transaction appends the audit row `run.settle` (see `TenantStore.settlePass`).
 */
export interface SettlePassRequest {
  readonly run: string;
  readonly epoch: number;
  readonly spend: Spend;
  readonly concludes: boolean;
  readonly atMs: number;
  readonly by?: Operator | undefined;
  /**
   * Read the instant when the decision is applied instead of using `atMs`:
   * `atMs` is then the instant it was asked, and a decision that waited past `applied.maxWaitMs`
   * is `STORE_UNAVAILABLE`, nothing written (see `AppliedInstant`).
   */
  readonly applied?: AppliedInstant | undefined;
}

/** What a pass settlement did: the receipt written (or found), and whether this call wrote it. */
export interface SettlePassOutcome {
  readonly outcome: SettleOutcome;
  readonly receipt: QuotaSettlement;
  /**
   * By how much the settled spend ran over the hold the pass was granted, per unit (`overrunOf`,
   * docs/design/rules.md#l90–#l92); zero when it stayed within, or when the pass held nothing. The
   * spend is still recorded whole: an overrun is reported, never clipped.
   */
  readonly overrun: Spend;
}

/** A run as the registry knows it. Times are Unix ms. */
export interface RunRecord {
  readonly run: string;
  readonly status: RunStatus;
  readonly agent: AgentIdentity | null;
  readonly chain: readonly string[] | null;
  readonly admittedAtMs: number;
  readonly lastEpoch: number;
}

/** A dispatch of a run's granted tool: rate reservation with the tenant's configured ceilings added. */
export interface DispatchRequest {
  readonly run: string;
  readonly grant: string;
  readonly dispatch: string;
  /** Ceilings the caller declares; every one, and every one configured for the grant, must have room. */
  readonly ceilings: readonly RateCeiling[];
  readonly exempt: boolean;
  readonly atMs: number;
  /**
   * The dispatching pass. When given, the dispatch is fenced like a heartbeat and renews that
   * pass's lease by `leaseMs`; `leaseMs` is then required.
   */
  readonly epoch?: number | undefined;
  readonly leaseMs?: number | undefined;
  /**
   * Read the instant when the decision is applied instead of using `atMs`:
   * `atMs` is then the instant it was asked, and a decision that waited past `applied.maxWaitMs`
   * is `STORE_UNAVAILABLE`, nothing written (see `AppliedInstant`).
   */
  readonly applied?: AppliedInstant | undefined;
}

/** Answer of `dispatch`: the rate outcome, or `Withheld` (nothing counted, no lease renewed). */
export type DispatchOutcome = RateOutcome | { readonly ok: false; readonly refusal: WithheldRefusal };

/**
 * A registered run as the operator listings show it: the registry record, when it entered its
 * status (`statusSinceMs`, Unix ms: for `stranded`, the instant its lease lapsed), whether it holds
 * a slot, and when its latest pass's lease lapses (or lapsed).
 */
export interface RunSummary extends RunRecord {
  readonly statusSinceMs: number;
  readonly holdsSlot: boolean;
  readonly leaseExpiresAtMs: number;
}

/**
 * A page of the run registry: runs whose id sorts bytewise after `after` (default: from the
 * start), in ascending run-id order, at most `limit`; only the given `statuses` when present.
 */
export interface RunListRequest {
  readonly statuses?: readonly RunStatus[] | undefined;
  readonly after?: string | undefined;
  readonly limit: number;
}

/** One pass row (Unix ms instants). `settledAtMs` is `null` until its receipt is written. */
export interface PassRecord {
  readonly run: string;
  readonly epoch: number;
  readonly period: string;
  readonly takesSlot: boolean;
  readonly startedAtMs: number;
  readonly leaseExpiresAtMs: number;
  readonly settledAtMs: number | null;
}

/** A hold of a paused run, and since when (Unix ms) the run has been paused. */
export interface IdleHold extends Held {
  readonly idleSinceMs: number;
}

/**
 * A settled pass that ran over the hold it was granted: its receipt's period and
 * spend, the hold the pass opened with, the overrun (`overrunOf`) and when it settled (Unix ms).
 */
export interface OverranPass {
  readonly run: string;
  readonly epoch: number;
  readonly period: string | null;
  readonly spend: Spend;
  readonly hold: Spend;
  readonly overrun: Spend;
  readonly settledAtMs: number;
}

/** What `sweepRun` did to one run: released its slot, and/or marked it `stranded`. */
export interface SweptRun {
  readonly run: string;
  readonly releasedSlot: boolean;
  readonly stranded: boolean;
}

/** An operator's release of a run: its slot and hold given back, audited as `run.release`. */
export interface ReleaseRunRequest {
  readonly run: string;
  readonly atMs: number;
  readonly by: Operator;
  /**
   * Release the run only if its status is this one when the transaction reads it; otherwise
   * `CONFLICT` naming its status, and nothing is written (a bulk release of stranded runs must not
   * release one that was resumed since it was listed).
   */
  readonly ifStatus?: RunStatus | undefined;
}

/**
 * Answer of `releaseRun`.
 * - `'released'`: this call released the run; `slotReleased` and `holdReleased` say what it held
 *   (the hold as it stood), `audit` is the row appended.
 * - `'already-closed'`: the run was concluded or released already and holds nothing; nothing was
 *   written (`audit` is `null`).
 * `previousStatus` is the registry status before the call, `null` for an unregistered run.
 */
export interface ReleaseRunOutcome {
  readonly outcome: 'released' | 'already-closed';
  readonly run: string;
  readonly previousStatus: RunStatus | null;
  readonly slotReleased: boolean;
  readonly holdReleased: Held | null;
  readonly audit: AuditRecord | null;
}

/** One row of a tenant's append-only audit log. */
export interface AuditRecord {
  /** 1, 2, 3 … per tenant. */
  readonly seq: number;
  readonly atMs: number;
  readonly by: Operator;
  /** `halt`, `lift`, `quota.set`, … */
  readonly action: string;
  /** What the action was about: a scope key, a run id, or `quota`. */
  readonly subject: string;
  /** What changed, as JSON-compatible data. */
  readonly detail: Readonly<Record<string, unknown>>;
  /** SHA-256 (hex) of this row's content and the previous row's hash. */
  readonly hash: string;
}

/** An audit row to append; the store numbers and hashes it. */
export type AuditEntry = Omit<AuditRecord, 'seq' | 'hash'>;

/**
 * Slots held across every tenant of a store: `running` counts every slot, `agents` the
 * slots of each agent name asked for (a name without slots reads 0). Read in one snapshot.
 */
export interface PlaneUsage {
  readonly running: number;
  readonly agents: Readonly<Record<string, number>>;
}

/**
 * One agent's figures inside a tenant: the slots its runs hold, and its settled and
 * reserved spend in `period` (counted as the tenant's are).
 */
export interface AgentUsage {
  readonly agent: string;
  readonly running: number;
  readonly period: string;
  readonly settled: Spend;
  readonly reserved: Spend;
}
