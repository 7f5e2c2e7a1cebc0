import type { AgentIdentity, Halt, HaltScope } from '../core/halt-scope.js';
import type { Budget } from '../core/budget.js';
import type { Operator } from '../core/operator.js';
import type { TenantQuota } from '../core/quota.js';
import type { RateCeiling } from '../core/rate.js';
import type {
  HaltedRefusal,
  RateLimitedRefusal,
  SpentOutRefusal,
  TooManyRunsRefusal,
  UnboundedRefusal,
  UncountableRateRefusal,
} from '../core/refusal.js';
import type { Spend } from '../core/spend.js';

/** Spend reserved for a run against one billing period (contract §3 SpendHold). */
export interface SpendHold {
  readonly period: string;
  readonly amount: Spend;
}

/** One hold row: what `run` may still cost, held in `period` (contract §3 Held). */
export interface Held {
  readonly run: string;
  readonly period: string;
  readonly remaining: Spend;
}

/**
 * The durable record of one settled pass (contract §3 QuotaSettlement, §6.11). All six fields form
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

/** One dispatch of a rate-ceilinged grant (contract §3 RateReservation). `atMs` is Unix ms. */
export interface RateReservation {
  readonly grant: string;
  readonly run: string;
  /** The first attempt's idempotency key: retries and resumed passes derive the same one. */
  readonly dispatch: string;
  readonly ceilings: readonly RateCeiling[];
  readonly atMs: number;
  /** A compensating call: counted, never refused (contract §6.15, DESIGN.md decision 11). */
  readonly exempt: boolean;
}

/** Answer of `reserve`: ok, or the refusal; a refusal wrote nothing (contract §6.2). */
export type ReserveOutcome = { readonly ok: true } | { readonly ok: false; readonly refusal: TooManyRunsRefusal | SpentOutRefusal };

/** Answer of `reserveRate` and `rateRoom` (contract §6.15–6.16). */
export type RateOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly refusal: RateLimitedRefusal | UncountableRateRefusal };

/** Whether a settle wrote its receipt now, or found the identical receipt already there (contract §6.11). */
export type SettleOutcome = 'settled' | 'already-settled';

/** Where a run stands in its lifecycle, as the run registry records it. */
export type RunStatus = 'running' | 'paused' | 'concluded';

/**
 * One admission as a single transaction (DESIGN.md decision 6): halts (the narrowest covering is
 * reported) → the tenant's quota, read inside the transaction unless `quota` is given → hold
 * formula → reserve (slot + hold) → the run and its first pass recorded.
 */
export interface AdmitRequest {
  readonly run: string;
  readonly agent?: AgentIdentity | undefined;
  readonly chain?: readonly string[] | undefined;
  readonly budget: Budget;
  readonly width: number;
  readonly atMs: number;
  readonly leaseMs: number;
  /** An explicit quota overrides the stored one (library users; DESIGN.md decision 5). */
  readonly quota?: TenantQuota | undefined;
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

/** A resume: a new pass of an admitted run, never gated; carries the hold to the period of `atMs` (contract §8.4). */
export interface ResumeRequest {
  readonly run: string;
  readonly atMs: number;
  readonly leaseMs: number;
}

/** The end of a pass: its own spend, and whether it concluded the run (contract §8.3). */
export interface SettlePassRequest {
  readonly run: string;
  readonly epoch: number;
  readonly spend: Spend;
  readonly concludes: boolean;
  readonly atMs: number;
}

/** What a pass settlement did: the receipt written (or found), and whether this call wrote it. */
export interface SettlePassOutcome {
  readonly outcome: SettleOutcome;
  readonly receipt: QuotaSettlement;
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

/** A dispatch of a run's granted tool: rate reservation with the tenant's configured ceilings added (decision 11). */
export interface DispatchRequest {
  readonly run: string;
  readonly grant: string;
  readonly dispatch: string;
  /** Ceilings the caller declares; every one, and every one configured for the grant, must have room. */
  readonly ceilings: readonly RateCeiling[];
  readonly exempt: boolean;
  readonly atMs: number;
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
