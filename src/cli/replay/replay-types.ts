import type { Period } from '../../core/period.js';
import type { Spend } from '../../core/spend.js';

/**
 * How to replay a trace. Amounts are non-negative safe integers; an absent
 * ceiling is unlimited (docs/design/decisions.md "Absent means unlimited, 0 means nothing").
 */
export interface ReplayOptions {
  /** The trace file (`TIMESTAMP,ContextTokens,GeneratedTokens`). */
  readonly tracePath: string;
  /** How many tenants the rows are spread over, at least 1. */
  readonly tenants: number;
  /** Seed of the Zipf tenant choice; the same seed gives every row the same tenant. */
  readonly seed: number;
  /** Zipf exponent of the tenant choice (> 0); default 1. */
  readonly zipfExponent: number;
  /** Every tenant's `maxConcurrentRuns`; absent = unlimited. */
  readonly maxConcurrent?: number | undefined;
  /** Every tenant's `maxTokensPerPeriod`; absent = unlimited. */
  readonly tokensPerPeriod?: number | undefined;
  /** Every tenant's `maxMinorUnitsPerPeriod`; absent = unlimited. */
  readonly minorUnitsPerPeriod?: number | undefined;
  /** Billing period of every tenant's quota. */
  readonly period: Period;
  /** Minor units per context (input) token; default 3 (micro-USD at $3 per million). */
  readonly priceIn: number;
  /** Minor units per generated (output) token; default 15 (micro-USD at $15 per million). */
  readonly priceOut: number;
  /** The per-call output bound each run declares; its budget is `ContextTokens + maxOutputTokens`. Default 1024. */
  readonly maxOutputTokens: number;
  /**
   * Store URL (`sqlite:<path>`, a `.db` path, `postgres://…`). Absent: a fresh durable SQLite file
   * in a new temporary directory. When given, tenants get a unique prefix so earlier rows in that
   * store cannot skew the invariants.
   */
  readonly storeUrl?: string | undefined;
  /** Keep the temporary store instead of removing it (ignored with `storeUrl`). */
  readonly keepStore: boolean;
  /**
   * `--wait MS`: each admission may wait up to this long (virtual ms) for a slot; a
   * waiting request starts when granted and keeps its duration. Absent: nobody waits (the
   * figures of a replay without it are unchanged).
   */
  readonly waitMs?: number | undefined;
  /**
   * `--plane-max-concurrent N`: the store's plane-wide ceiling on concurrent runs across
   * every tenant is set to N before the first row (it replaces the store's plane-wide ceiling).
   */
  readonly planeMaxConcurrent?: number | undefined;
}

/**
 * What waiting did for one tenant under `--wait`: how many admissions joined the queue
 * (`waited`), how many of those were granted and how many timed out, and the percentiles of the
 * wait of the granted ones, in virtual ms (`null` when none was granted after waiting).
 */
export interface WaitFigures {
  readonly waited: number;
  readonly granted: number;
  readonly timedOut: number;
  readonly p50Ms: number | null;
  readonly p90Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

/** Refusal counts of admission, by the contract's code. */
export interface RefusalCounts {
  TooManyRuns: number;
  SpentOut: number;
  Unbounded: number;
  Halted: number;
}

/** One tenant's line of the report; `settled` is read from the store. */
export interface TenantReport {
  readonly tenant: string;
  readonly admitted: number;
  readonly refused: RefusalCounts;
  /** The store's settled total over the periods the replay touched. */
  readonly settled: Spend;
  /**
   * Most slots the tenant held right after one of its admissions: the replay's count of its
   * unsettled runs (answers applied in call order), or more if the store ever read higher.
   */
  readonly peakRunning: number;
  /** Only under `--wait`: what waiting did for this tenant. */
  readonly wait?: WaitFigures;
}

/**
 * The replay's invariants, each measured from the store (never from the replay's own counters):
 * - `settledWithinCeiling`: every tenant-period's settled total ≤ its ceiling, in both units;
 * - `runningWithinCeiling`: the tenant's slot count never passed `maxConcurrentRuns`, as the
 *   replay counts it right after each admission (answers applied in call order) and as the store
 *   reports it at each check (slots grow only at admission, so this covers every instant);
 * - `slotsHeldWhileRunning`: at each check (after every admission through a server; every 100 rows
 *   and after the last one on a SQLite store) the store's slot count equals the tenant's runs the
 *   replay admitted and has not yet settled; a slot freed early (a server's sweeper judging the
 *   trace's past instants lapsed by the wall clock) or never taken makes it false;
 * - `settledExactlyOnce`: the store wrote a receipt for every admitted run on its settle, answers
 *   an identical retry from that receipt without applying it again, and its settled total per
 *   tenant-period equals the sum the replay settled;
 * - `holdsReleased`: nothing reserved at the end; `slotsReleased`: nothing running at the end.
 */
export interface ReplayInvariants {
  readonly settledWithinCeiling: boolean;
  readonly runningWithinCeiling: boolean;
  readonly slotsHeldWhileRunning: boolean;
  readonly settledExactlyOnce: boolean;
  readonly holdsReleased: boolean;
  readonly slotsReleased: boolean;
}

/** The whole report: what `replay --json` prints as one document. */
export interface ReplayReport {
  readonly trace: string;
  /** Where the store was (its URL with any password replaced by `***`), and whether it is still there. */
  readonly store: { readonly url: string; readonly temporary: boolean; readonly kept: boolean };
  readonly options: {
    readonly tenants: number;
    readonly seed: number;
    readonly zipfExponent: number;
    readonly maxConcurrent: number | null;
    readonly tokensPerPeriod: number | null;
    readonly minorUnitsPerPeriod: number | null;
    readonly period: Period;
    readonly priceIn: number;
    readonly priceOut: number;
    readonly maxOutputTokens: number;
    /** The prefix that isolates this replay's tenants in a shared store; `''` in a fresh one. */
    readonly tenantPrefix: string;
    /** Only under `--wait`: how long each admission may wait, virtual ms. */
    readonly waitMs?: number;
    /** Only with `--plane-max-concurrent`: the plane-wide ceiling on concurrent runs. */
    readonly planeMaxConcurrent?: number;
  };
  readonly tenants: readonly TenantReport[];
  readonly totals: {
    readonly rows: number;
    readonly admitted: number;
    readonly refused: RefusalCounts;
    readonly settled: Spend;
    /** Only under `--wait`: every tenant's waits together. */
    readonly wait?: WaitFigures;
  };
  readonly timing: {
    /** Wall time of driving the rows through the plane (reading, admitting, settling), ms. */
    readonly wallMs: number;
    /** Rows per second of wall time. */
    readonly requestsPerSecond: number;
    /** Wall time of measuring the invariants from the store afterwards, ms. */
    readonly verifyMs: number;
  };
  readonly invariants: ReplayInvariants;
  /** True when every invariant holds. */
  readonly ok: boolean;
}
