import type { WaiterSweep } from '../store/waiters.js';
import type { Operator } from '../core/operator.js';
import type { AuditRecord, Held, RunStatus, RunSummary, SweptRun } from '../store/types.js';
import type { LiftedHalt } from './lifted-halts.js';

/*
 * The shapes of the plane's self-healing and operator verbs (docs/design/rules.md#l49–#l64):
 * sweep, attention, release, audit verification and the listings the operator CLI reads.
 */

/** A sweep of lapsed leases: one tenant, or every tenant when absent; `atMs` defaults to the plane clock. */
export interface SweepInput {
  readonly tenant?: string | undefined;
  readonly atMs?: number | undefined;
}

/** One run a sweep acted on. */
export interface TenantSweptRun extends SweptRun {
  readonly tenant: string;
}

/** Answer of `sweep`: the instant it swept at and every run it changed (runs left as they were are not listed). */
export interface SweepResult {
  readonly atMs: number;
  readonly swept: readonly TenantSweptRun[];
  /**
   * The waiting queues the sweep changed (docs/design/rules.md#w8, #w18), present only when it
   * changed one: per tenant, waiters removed because their lease lapsed, uncollected grants
   * withdrawn, and waiters granted.
   */
  readonly waiters?: readonly TenantWaiterSweep[];
}

/** What a sweep did to one tenant's waiting queue (store.ts `sweepWaiters`). */
export interface TenantWaiterSweep extends WaiterSweep {
  readonly tenant: string;
}

/** Default age after which a paused run's hold is `hold.stale`: 24 hours. */
export const DEFAULT_HOLD_STALE_AFTER_MS = 86_400_000;

/** Default page size of the operator listings and of each attention kind: 100 rows. */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * The largest page a listing (or an attention kind) answers: 1000. One request, over HTTP or on
 * the command line, cannot ask the store for everything at once; a longer walk pages with `after`.
 */
export const MAX_LIST_LIMIT = 1000;

/**
 * An attention question.
 * - `tenant`: one tenant, or every tenant when absent.
 * - `holdStaleAfterMs`: how long a paused run may keep a hold before it is `hold.stale`;
 *   default {@link DEFAULT_HOLD_STALE_AFTER_MS}.
 * - `limit`: at most this many conditions of each kind (default {@link DEFAULT_LIST_LIMIT}).
 * - `atMs`: the instant ages are measured at; default the plane clock.
 */
export interface AttentionInput {
  readonly tenant?: string | undefined;
  readonly holdStaleAfterMs?: number | undefined;
  readonly limit?: number | undefined;
  readonly atMs?: number | undefined;
}

/**
 * The stable kinds of attention conditions (docs/guides/operating.md#when-a-worker-dies):
 * - `run.stranded`: the sweep found the run's lease lapsed (its process died); its slot is back,
 *   its hold is kept. Ended by settling the real spend, or releasing the run.
 * - `run.withheld`: a subject halt withheld the run. Ended by lifting the halt and resuming, or
 *   releasing (abandoning) the run.
 * - `hold.stale`: a paused run has kept a non-zero hold longer than `holdStaleAfterMs`. Ended by
 *   resuming and concluding the run, or releasing it.
 * - `pass.unsettled`: a pass's lease lapsed and it never settled, so its spend is not booked.
 *   Ended by settling that pass.
 */
export type AttentionKind = 'run.stranded' | 'run.withheld' | 'hold.stale' | 'pass.unsettled' | 'run.overran' | 'spend.overrun';

/** Every {@link AttentionKind}, in the order a report lists them. */
export const ATTENTION_KINDS: readonly AttentionKind[] = Object.freeze([
  'run.stranded',
  'run.withheld',
  'hold.stale',
  'pass.unsettled',
  'run.overran',
  'spend.overrun',
]);

/** The commands that end a condition: as the `quotaplane` CLI spells them, and as HTTP requests. */
export interface Remedy {
  /** One sentence: what to do. */
  readonly text: string;
  /** Complete `quotaplane` command lines (store or server flags omitted); `<…>` marks what a person fills in. */
  readonly cli: readonly string[];
  /** `METHOD /path` lines of the HTTP API, with the JSON body where one is needed. */
  readonly http: readonly string[];
}

/**
 * One condition that needs a person. `run` is the run concerned; `epoch` the pass, for
 * `pass.unsettled`; `halt` the standing subject halt's scope key, for `run.withheld` (`null` once
 * lifted). `sinceMs` is when the condition began (Unix ms), `ageMs` how long it has stood at the
 * report's instant. `summary` says it in one sentence.
 */
export interface AttentionCondition {
  readonly kind: AttentionKind;
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number | null;
  readonly halt: string | null;
  readonly sinceMs: number;
  readonly ageMs: number;
  readonly summary: string;
  readonly remedy: Remedy;
}

/**
 * One run that needs a person, with every reason it does: a run whose process died is both
 * `run.stranded` and `pass.unsettled`, and is one item. A `spend.overrun` is an item of its own
 * (its `run` names a run that overran in the period, or is empty). `reasons` are in report order;
 * `epochs` the passes the conditions name, ascending; `halt` the standing halt's scope key for
 * `run.withheld`; `sinceMs` the earliest condition's start and `ageMs` the longest standing;
 * `summaries` one sentence per condition; `remedy` the commands that end them all, each once.
 */
export interface AttentionItem {
  readonly tenant: string;
  readonly run: string;
  readonly reasons: readonly AttentionKind[];
  readonly epochs: readonly number[];
  readonly halt: string | null;
  readonly sinceMs: number;
  readonly ageMs: number;
  readonly summaries: readonly string[];
  readonly remedy: Remedy;
}

/**
 * Answer of `attention`: the conditions found, by kind then tenant then run, and the same
 * gathered per run in `items` (what a person acts on; the CLI lists these). `truncated` is true
 * when some kind had more conditions than `limit` (each kind reads one more than it lists, so
 * this is a fact); `truncatedKinds` names them. `needsAttention` is `conditions.length > 0`.
 */
export interface AttentionReport {
  readonly atMs: number;
  readonly holdStaleAfterMs: number;
  readonly needsAttention: boolean;
  readonly conditions: readonly AttentionCondition[];
  readonly items: readonly AttentionItem[];
  readonly truncated: boolean;
  readonly truncatedKinds: readonly AttentionKind[];
}

/** An operator's release of a run; `atMs` defaults to the plane clock. */
export interface ReleaseInput {
  readonly tenant: string;
  readonly run: string;
  readonly by: Operator;
  readonly atMs?: number | undefined;
  /** Release only a run whose status is this one now; otherwise `CONFLICT`, nothing written. */
  readonly ifStatus?: RunStatus | undefined;
}

/**
 * An operator's deletion of a tenant (docs/design/rules.md#l95-4–#l95-7): the tenant, who deletes
 * it, why (a non-empty sentence, kept in the audit row), and when (`atMs`, default the plane clock).
 */
export interface DeleteTenantInput {
  readonly tenant: string;
  readonly by: Operator;
  readonly reason: string;
  readonly atMs?: number | undefined;
}

/**
 * Answer of `deleteTenant`: the tenant, the `tenant.delete` audit row appended to its chain (its
 * detail has the reason, the quota it had and the keys removed), and the ids of the tenant's own
 * API keys removed with it, which no longer authenticate.
 */
export interface DeleteTenantAnswer {
  readonly tenant: string;
  readonly audit: AuditRecord;
  readonly keysDeleted: readonly string[];
}

/** An audit verification of one tenant, or every tenant when absent. */
export interface VerifyAuditInput {
  readonly tenant?: string | undefined;
}

/**
 * The first row of a tenant's chain that does not verify:
 * - `'hash'`: its stored hash is not the hash of its content chained to the row before;
 * - `'sequence'`: the row numbered `seq` is missing (rows were deleted), the next found is `foundSeq`;
 * - `'unreadable'`: the row cannot be decoded at all.
 */
export interface AuditMismatch {
  readonly seq: number;
  readonly problem: 'hash' | 'sequence' | 'unreadable';
  readonly message: string;
}

/** One tenant's verified chain: `rows` verified good (in sequence, before any mismatch) and the first bad row, if any. */
export interface TenantAuditVerification {
  readonly tenant: string;
  readonly rows: number;
  readonly ok: boolean;
  readonly firstMismatch: AuditMismatch | null;
}

/** Answer of `verifyAudit`: `ok` when every tenant's chain verifies. */
export interface AuditVerification {
  readonly ok: boolean;
  readonly tenants: readonly TenantAuditVerification[];
}

/**
 * A page of a tenant's runs: ascending run id after `after`, at most `limit` (default
 * {@link DEFAULT_LIST_LIMIT}), only `statuses` when given.
 */
export interface RunsInput {
  readonly tenant: string;
  readonly statuses?: readonly RunStatus[] | undefined;
  readonly after?: string | undefined;
  readonly limit?: number | undefined;
}

/** A page of runs; `next` is the cursor of the following page (`after`), `null` when this is the last. */
export interface RunsPage {
  readonly runs: readonly RunSummary[];
  readonly truncated: boolean;
  readonly next: string | null;
}

/** A tenant's holds, at most `limit` (default {@link DEFAULT_LIST_LIMIT}). */
export interface ReservationsInput {
  readonly tenant: string;
  readonly limit?: number | undefined;
}

/** Holds in ascending run-id order, and whether more stood behind them (read, not guessed). */
export interface ReservationsPage {
  readonly holds: readonly Held[];
  readonly truncated: boolean;
}

/**
 * The runs holding one of a tenant's slots (docs/design/rules.md#c4), at most `limit` (default
 * {@link DEFAULT_LIST_LIMIT}).
 */
export interface SlotHoldersInput {
  readonly tenant: string;
  readonly limit?: number | undefined;
}

/** Run ids of the running set in ascending order, and whether more stood behind them. */
export interface SlotHoldersPage {
  readonly runs: readonly string[];
  readonly truncated: boolean;
}

/**
 * A tenant's recorded lifts (`halts --lifted`), at most `limit` (default
 * {@link DEFAULT_LIST_LIMIT}).
 */
export interface LiftedHaltsInput {
  readonly tenant: string;
  readonly limit?: number | undefined;
}

/** Recorded lifts, newest first, and whether more stood behind them. */
export interface LiftedHaltsPage {
  readonly lifted: readonly LiftedHalt[];
  readonly truncated: boolean;
}

/** A tenant's newest audit rows, at most `limit` (default {@link DEFAULT_LIST_LIMIT}), optionally of one `action`. */
export interface AuditLogInput {
  readonly tenant: string;
  readonly limit?: number | undefined;
  readonly action?: string | undefined;
}

/** Audit rows newest first, and whether more were there. */
export interface AuditLogPage {
  readonly rows: readonly AuditRecord[];
  readonly truncated: boolean;
}
