import type { PeriodFigures } from '../admission-ceilings.js';
import type { NewEvent } from '../events.js';
import type { Halt } from '../halt-scope.js';
import type { PlaneCeiling } from '../plane-ceiling.js';
import type { TenantQuota } from '../quota.js';
import type { Spend } from '../spend.js';
import type { PrunedRunRecord } from './pruned.js';
import type { RateBooks } from './rate-books.js';
import type { WaiterGrantBooks } from './waiter-books.js';
import type { AuditEntry, AuditRecord, RunRecord, RunStatus } from './types.js';

/*
 * The books of one tenant as a decision sees them: the facts it reads and the facts it writes,
 * synchronously, inside the one transaction (or snapshot) the adapter runs it in. The decisions of
 * core/lifecycle/ are written once against this port; each store adapter implements it over its
 * own tables. A method holds no rule: reads return facts as stored, writes store what the decision
 * computed. Every instant is Unix ms, every amount a safe integer.
 */

/** The run's single hold: its period, the UTC day it was held or carried on (`null`: unknown), and its amount. */
export interface StoredHold {
  readonly period: string;
  readonly day: string | null;
  readonly amount: Spend;
}

/** A receipt as stored: the pass's period (`null` for a period-less port settle), its spend, and what it released. */
export interface StoredReceipt {
  readonly period: string | null;
  readonly spend: Spend;
  readonly releaseSlot: boolean;
  readonly concludes: boolean;
}

/** A pass's lease as stored: when it lapses, and when the pass settled (`null`: unsettled). */
export interface PassLease {
  readonly leaseExpiresAtMs: number;
  readonly settledAtMs: number | null;
}

/**
 * Everything a pass's settle decides on: the pass (its period, whether it took the slot, when it
 * started, the hold its grant reported), the receipt (run, epoch) already has (`undefined`: none),
 * the run (`null` when its registry row is missing), and whether a prune left a tombstone for the
 * run id.
 */
export interface PassToSettle {
  readonly period: string;
  readonly takesSlot: boolean;
  readonly startedAtMs: number;
  readonly granted: Spend | null;
  readonly receipt: StoredReceipt | undefined;
  readonly run: RunRecord | null;
  readonly pruned: boolean;
}

/**
 * What an admission retry is judged on: the run as admitted (with the budget it was admitted with,
 * as stored, and its width), its first pass (`null` when missing: corrupt), whether the run still
 * holds a slot, and the hold it holds now.
 */
export interface AdmittedRun {
  readonly record: RunRecord;
  readonly budget: Readonly<Record<string, unknown>>;
  readonly width: number;
  readonly firstPass: { readonly period: string; readonly lease: PassLease; readonly granted: Spend | null } | null;
  readonly slotHeld: boolean;
  readonly hold: Spend | null;
}

/** Whether the run holds a slot and a hold, and how many slots the tenant holds. */
export interface SlotSnapshot {
  readonly slotHeld: boolean;
  readonly holdHeld: boolean;
  readonly running: number;
}

/** A run to register at admission: its identity, chain, the budget and width it was admitted with, and the instant. */
export interface NewRun {
  readonly run: string;
  readonly agentName: string | null;
  readonly agentDigest: string | null;
  readonly chain: readonly string[] | null;
  readonly budget: Readonly<Record<string, unknown>>;
  readonly width: number;
  readonly atMs: number;
}

/** A pass to record as admission or resume opened it, with the hold its grant reported. */
export interface NewPass {
  readonly run: string;
  readonly epoch: number;
  readonly period: string;
  readonly takesSlot: boolean;
  readonly atMs: number;
  readonly leaseExpiresAtMs: number;
  readonly granted: Spend | null;
}

/** The facts a lifecycle decision reads, in the deciding transaction. */
export interface BooksReads {
  /** The tenant the books are of. */
  readonly tenant: string;
  /** The run's registry record, or `null` when it is not registered. */
  run(run: string): RunRecord | null;
  /** The tombstone a prune left for the run id, or `null` when none was pruned. */
  prunedRun(run: string): PrunedRunRecord | null;
  /** Whether any pass of the run holds a live lease at `atMs` (unsettled, expiring after `atMs`). */
  hasLivePass(run: string, atMs: number): boolean;
  /** The lease of pass (run, epoch), or `null` when no such pass exists. */
  passLease(run: string, epoch: number): PassLease | null;
  /** The receipt (run, epoch) has, the port's own or its pass's, or `undefined` when it has none. */
  receipt(run: string, epoch: number): StoredReceipt | undefined;
  /** What settling pass (run, epoch) decides on, or `null` when no such pass exists. */
  passToSettle(run: string, epoch: number): PassToSettle | null;
  /** The run as admitted, for an admission retry, or `null` when it is not registered. */
  admittedRun(run: string): AdmittedRun | null;
  /** The standing halts of the tenant. */
  halts(): readonly Halt[];
  /** The tenant's stored quota, or `null` when none is set. */
  storedQuota(): TenantQuota | null;
  /** The plane-wide ceiling, or `null` when none is set. */
  planeCeiling(): PlaneCeiling | null;
  /** Whether `run` holds a slot (one point read; no count). */
  holdsSlot(run: string): boolean;
  /** Slot and hold of `run`, and the tenant's slot count. */
  slotSnapshot(run: string): SlotSnapshot;
  /** Slots held by the tenant's runs of `agent`. */
  agentRunning(agent: string): number;
  /** Slots held across every tenant. */
  planeRunning(): number;
  /** Slots held by runs of `agent` across every tenant. */
  planeAgentRunning(agent: string): number;
  /** The tenant's settled and held spend counted in `period`. */
  periodFigures(period: string): PeriodFigures;
  /** The settled and held spend of the tenant's runs of `agent` counted in `period`. */
  agentPeriodFigures(agent: string, period: string): PeriodFigures;
  /** The run's hold, or `null` when it holds none. */
  hold(run: string): StoredHold | null;
  /** The sum of the tenant's holds counted in `month` (a month key). */
  heldInMonth(month: string): Spend;
  /** The tenant's settled spend in `period`. */
  settledIn(period: string): Spend;
  /** The agent name of a registered run (`null`: none, or not registered). */
  runAgent(run: string): string | null;
}

/** The facts a lifecycle decision writes, in the deciding transaction. Each stores what it is given. */
export interface BooksWrites {
  /** Takes the run's slot; a run that holds one keeps it (and its first instant). */
  takeSlot(run: string, agentName: string | null, atMs: number): void;
  /** Gives the run's slot back; nothing when it holds none. */
  giveSlot(run: string): void;
  /** Stores the run's hold; the run holds none. */
  putHold(run: string, agentName: string | null, hold: StoredHold): void;
  /** Moves the run's hold to another period and day (a carry); the run holds one. */
  moveHold(run: string, period: string, day: string | null): void;
  /** Sets the amount of the run's hold; the run holds one. */
  setHoldAmount(run: string, amount: Spend): void;
  /** Deletes the run's hold; nothing when it holds none. */
  dropHold(run: string): void;
  /**
   * Adds `spend` to the tenant's settled spend of `period` and answers the new totals, unless a
   * total would pass 2^53 − 1: then nothing is written and `null` is returned.
   */
  accrueSettled(period: string, spend: Spend): Spend | null;
  /**
   * Adds `spend` to the settled spend of the tenant's runs of `agent` in `period` (bounded by the
   * tenant's) and answers the new totals.
   */
  accrueAgentSettled(agent: string, period: string, spend: Spend): Spend;
  /** Registers a run, `running` at epoch 1 since `atMs`. */
  insertRun(run: NewRun): void;
  /** Records a pass. */
  insertPass(pass: NewPass): void;
  /** The run runs again at a new epoch, since `atMs` (a resume). */
  setRunEpoch(run: string, epoch: number, atMs: number): void;
  /** Sets the run's status, since `atMs`. */
  setRunStatus(run: string, status: RunStatus, atMs: number): void;
  /** Sets the lease expiry of pass (run, epoch). */
  setLease(run: string, epoch: number, leaseExpiresAtMs: number): void;
  /** Writes the receipt of a pass's own settle into the pass, settled at `atMs`. */
  recordPassReceipt(run: string, epoch: number, atMs: number, spend: Spend, concludes: boolean): void;
  /** Writes a receipt of the port's `settle` for (run, epoch), which has none. */
  insertReceipt(run: string, epoch: number, receipt: StoredReceipt): void;
  /** Appends a row to the tenant's audit log (numbered and hash-chained by the adapter). */
  appendAudit(entry: AuditEntry): AuditRecord;
  /**
   * Appends an event to the plane's event log, unless one of the same key is there already: then
   * nothing is written (docs/design/rules.md#e1).
   */
  appendEvent(event: NewEvent): void;
}

/** A tenant's books as a decision reads and writes them. */
export interface TenantBooks extends BooksReads, BooksWrites, RateBooks, WaiterGrantBooks {}
