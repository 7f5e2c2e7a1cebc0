import type { Halt, HaltScope } from '../core/halt-scope.js';
import type { ApiKeyStore } from './api-keys.js';
import type { TenantQuota } from '../core/quota.js';
import type { RateCeiling } from '../core/rate.js';
import type { Spend } from '../core/spend.js';
import type {
  AdmitOutcome,
  AdmitRequest,
  AuditEntry,
  AuditRecord,
  DispatchRequest,
  Held,
  PassGrant,
  QuotaSettlement,
  RateOutcome,
  RateReservation,
  ReserveOutcome,
  ResumeRequest,
  RunRecord,
  SettleOutcome,
  SettlePassOutcome,
  SettlePassRequest,
  SpendHold,
} from './types.js';

/**
 * The durable store behind quotaplane: one database serving many tenants through
 * tenant-scoped handles (contract §1, §6). Adapters: SQLite (embedded default) and PostgreSQL.
 * Every handle method is one transaction; a store that cannot answer throws
 * `QuotaError('STORE_UNAVAILABLE')` and callers fail closed (DESIGN.md decision 12).
 */
export interface QuotaStore {
  /** `'sqlite'` or `'postgres'`. */
  readonly backend: string;
  /** A handle confined to one tenant's rows. Throws `INVALID_ARGUMENT` for a bad tenant id. */
  tenant(tenant: string): TenantStore;
  /** Tenants with a configured quota, a run, or a halt, in byte order. */
  tenants(): Promise<string[]>;
  /**
   * The API keys of the HTTP service (issue #4). Optional until every adapter has it: the SQLite
   * adapter does (schema version 2); `quotaplane serve` and `keys` refuse a store without it.
   */
  apiKeys?(): ApiKeyStore;
  /** Closes connections. Further calls throw `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}

/**
 * One tenant's view of the store. The first group is the store contract (§6) that the
 * conformance suite proves; the second is the run lifecycle the plane builds on (DESIGN.md §plane),
 * each still one transaction. No method reads or writes another tenant's rows.
 */
export interface TenantStore {
  /** The tenant every operation is confined to (contract §6.1). */
  readonly tenant: string;

  // ── contract §6 ────────────────────────────────────────────────────────────

  /**
   * Decide and insert in one serialised transaction (contract §6.2): the run's slot and, when
   * `hold` is given and the run holds none, its hold. Refuses `TooManyRuns` (full count) or
   * `SpentOut` and writes nothing, not even the slot. Idempotent per run; the first `admittedAtMs` wins.
   */
  reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome>;
  /** Deletes the run's slot and hold in one transaction; idempotent (contract §6.3). */
  release(run: string): Promise<void>;
  /** Moves the run's hold, whole, to `period`; no check, no-op without a hold (contract §6.4). */
  carry(run: string, period: string): Promise<void>;
  /** Hold rows in ascending run-id order, at most `limit` (contract §6.5). */
  reservations(limit: number): Promise<Held[]>;
  /** Sum of the holds in `period`, saturating (contract §6.6). */
  reserved(period: string): Promise<Spend>;
  /** Upserts the halt row of `halt.scope`; a re-throw replaces reason, operator and instant (contract §6.7). */
  setHalt(halt: Halt): Promise<void>;
  /** Deletes the halt row; answers whether one stood (contract §6.8). */
  liftHalt(scope: HaltScope): Promise<boolean>;
  /** Deletes the row only if it still equals `standing` in reason, operator and instant (contract §6.9). */
  liftHaltIf(standing: Halt): Promise<boolean>;
  /** Every standing halt, bytewise by scope key, in one read; an unreadable row throws `STORE_CORRUPT` (§6.10). */
  halts(): Promise<Halt[]>;
  /**
   * Writes the receipt of `(run, epoch)` and applies it once: accrue to `period`, shrink or (when
   * concluding) delete the hold, release the slot when `releaseSlot`. An identical retry changes
   * nothing; a different payload throws `CONFLICT` and changes nothing (contract §6.11).
   */
  settle(settlement: QuotaSettlement): Promise<SettleOutcome>;
  /** Settled total of `period`, zero when never written (contract §6.12). */
  spent(period: string): Promise<Spend>;
  /** Number of slots (contract §6.13). */
  running(): Promise<number>;
  /** Slot holders in ascending run-id order, at most `limit` (contract §6.14). */
  runningRuns(limit: number): Promise<string[]>;
  /**
   * Records one dispatch against the grant's sliding windows, serialised per (tenant, grant)
   * (contract §6.15): a present key succeeds unjudged; otherwise prune below the store-wide floor,
   * judge (unless exempt) and insert. A refusal inserts nothing (the prune still commits).
   */
  reserveRate(reservation: RateReservation): Promise<RateOutcome>;
  /** Read-only: what `reserveRate` would answer a fresh non-exempt key (contract §6.16). */
  rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome>;

  // ── tenant configuration ──────────────────────────────────────────────────

  /** The tenant's stored quota, or `null` when none was set (then every ceiling is absent). */
  getQuota(): Promise<TenantQuota | null>;
  /** Replaces the tenant's quota and appends `audit` in the same transaction. */
  setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void>;

  // ── run lifecycle (one transaction each) ───────────────────────────────────

  /** Admission as one transaction: halts → quota → hold formula → reserve → run and pass 1 recorded (decision 6). */
  admit(request: AdmitRequest): Promise<AdmitOutcome>;
  /** A new pass of an admitted run: next epoch, no slot, never gated, hold carried (contract §8.4). `NOT_FOUND`/`CONFLICT`. */
  resume(request: ResumeRequest): Promise<PassGrant>;
  /** Ends a pass: its receipt derived from the pass row and applied as `settle` does. `NOT_FOUND`/`CONFLICT`. */
  settlePass(request: SettlePassRequest): Promise<SettlePassOutcome>;
  /** A run's dispatch: reserveRate with the tenant's configured ceilings for the grant added, read in the same transaction. */
  dispatch(request: DispatchRequest): Promise<RateOutcome>;
  /** One run as the registry knows it, or `null`. */
  getRun(run: string): Promise<RunRecord | null>;

  // ── audit log ──────────────────────────────────────────────────────────────

  /** Appends one audit row (numbered and hash-chained per tenant) and returns it. */
  appendAudit(entry: AuditEntry): Promise<AuditRecord>;
  /** The newest `limit` audit rows, newest first, optionally only of one `action`. */
  auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]>;
}
