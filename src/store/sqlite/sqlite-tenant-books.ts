import type { PeriodFigures } from '../../core/admission-ceilings.js';
import type { Halt } from '../../core/halt-scope.js';
import type {
  AdmittedRun,
  NewPass,
  NewRun,
  PassLease,
  PassToSettle,
  SlotSnapshot,
  StoredHold,
  StoredReceipt,
  TenantBooks,
} from '../../core/lifecycle/books.js';
import type { PrunedRunRecord } from '../../core/lifecycle/pruned.js';
import type { RateGrantCounter } from '../../core/lifecycle/rate-books.js';
import type { GrantedWaiter, WaiterPlace, WaitingEntry } from '../../core/lifecycle/waiter-books.js';
import { waiterPlaceOf, waiterRequestJson, waitingEntryOf } from '../waiters.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { TenantQuota } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import { decodeAdmittedRun, type RetryFactsRow } from '../admit-retry.js';
import { decodePlaneCeiling } from '../plane-rows.js';
import { decodeRun, decodeSpend, type RunRow } from '../rows.js';
import type { AdmitRequest, AuditEntry, AuditRecord, RunRecord, RunStatus } from '../types.js';
import { SELECT_RETRY_FACTS } from './sqlite-admit-retry.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import { appendEventInTransaction } from './sqlite-events.js';
import type { NewEvent } from '../../core/events.js';
import type { SqliteConnection, SqlParams } from './sqlite-connection.js';
import { readDecisionHalts } from './sqlite-halts.js';
import { HAS_LIVE_PASS, SELECT_PASS_LEASE } from './sqlite-lease-queries.js';
import {
  ACCRUE_AGENT_SPENT,
  ACCRUE_SPENT,
  CARRY_HOLD,
  COUNT_AGENT_SLOTS,
  COUNT_PLANE_AGENT_SLOTS,
  COUNT_PLANE_SLOTS,
  DELETE_HOLD,
  DELETE_SLOT,
  INSERT_HOLD,
  INSERT_PASS,
  INSERT_RATE,
  INSERT_RECEIPT,
  INSERT_RUN,
  INSERT_SLOT,
  PRUNE_RATE,
  RATE_KEY_EXISTS,
  RECORD_PASS_RECEIPT,
  SELECT_AGENT_PERIOD_FIGURES,
  SELECT_FIRST_COUNTED_RATE,
  SELECT_HOLD,
  SELECT_PASS_TO_SETTLE,
  SELECT_PERIOD_FIGURES,
  SELECT_PLANE_CEILING,
  SELECT_RATE_AT_ORDINAL,
  SELECT_RATE_GRANT,
  SELECT_RECEIPT,
  SELECT_RUN,
  SELECT_RUN_AGENT,
  SELECT_SLOT_SNAPSHOT,
  SELECT_SPENT,
  SET_HOLD_AMOUNT,
  SET_LEASE,
  SET_RUN_STATUS,
  SLOT_EXISTS,
  SUM_RESERVED,
  UPDATE_RUN_PASS,
  UPSERT_RATE_GRANT,
} from './sqlite-queries.js';
import {
  COUNT_AHEAD,
  DECIDE_WAITER,
  DELETE_WAITER,
  ERASE_PASSES,
  ERASE_RUN,
  INSERT_WAITER,
  LAPSED_WAITERS,
  NEXT_WAITING,
  REQUEUE_WAITER,
  RESTORE_WAITER,
  SELECT_GRANT_LEASE,
  SELECT_WAITER,
  SELECT_WAITER_WHOLE,
  SET_WAITER_LEASE,
} from './sqlite-waiter-queries.js';
import { readStoredQuota } from './sqlite-quota.js';
import { readTombstone } from './sqlite-retention.js';

/** The receipt columns `SELECT_RECEIPT` and `SELECT_PASS_TO_SETTLE` read (all NULL without a receipt). */
export interface ReceiptColumns {
  readonly stored_period: string | null;
  readonly stored_tokens: number | null;
  readonly stored_minor_units: number | null;
  readonly stored_release_slot: number | null;
  readonly stored_concludes: number | null;
}

/** The receipt (run, epoch) already has, from its receipt columns, or `undefined` when it has none. */
export function decodeStoredReceipt(tenant: string, row: ReceiptColumns): StoredReceipt | undefined {
  if (row.stored_tokens === null) return undefined;
  return {
    period: row.stored_period,
    spend: decodeSpend(tenant, 'a receipt', row.stored_tokens, row.stored_minor_units),
    releaseSlot: row.stored_release_slot === 1,
    concludes: row.stored_concludes === 1,
  };
}

// What SELECT_PASS_TO_SETTLE reads: the pass, its receipts, and its run (columns NULL without one).
interface PassToSettleRow extends ReceiptColumns, Omit<RunRow, 'run_id' | 'status' | 'last_epoch' | 'admitted_at_ms'> {
  readonly period: string;
  readonly takes_slot: number;
  readonly started_at_ms: number;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
  readonly run_id: string | null;
  readonly status: string | null;
  readonly last_epoch: number | null;
  readonly admitted_at_ms: number | null;
  readonly pruned: number;
}

interface SpentTotals {
  readonly tokens: number;
  readonly minor_units: number;
}

interface WaitingRow {
  readonly run_id: string;
  readonly seq: number;
  readonly request_json: string;
  readonly lease_expires_at_ms: number;
}

interface WaiterRow {
  readonly run_id: string;
  readonly seq: number;
  readonly state: 'waiting' | 'granted' | 'refused';
  readonly enqueued_at_ms: number;
  readonly lease_expires_at_ms: number;
}

interface SlotSnapshotRow {
  readonly slot_held: number;
  readonly hold_held: number;
  readonly running: number;
}

interface PeriodFiguresRow {
  readonly settled_tokens: number;
  readonly settled_minor_units: number;
  readonly reserved_tokens: number;
  readonly reserved_minor_units: number;
}

/**
 * The stored plane-wide ceiling, read in the caller's transaction (`null`: none). Inside a write
 * it is read and decoded once while nothing writes it (`cachedInWrite`).
 */
export function readPlaneCeiling(conn: SqliteConnection): PlaneCeiling | null {
  return conn.cachedInWrite('plane', () => {
    const row = conn.get<{ ceiling_json: string }>(SELECT_PLANE_CEILING, {});
    return row === undefined ? null : decodePlaneCeiling(row.ceiling_json);
  });
}

/**
 * A tenant's books on SQLite (core/lifecycle/books.ts): each method one statement on the caller's
 * connection, inside the `BEGIN IMMEDIATE` transaction the decision runs in, so every read sees
 * every write before it and no other writer in between.
 */
export class SqliteTenantBooks implements TenantBooks {
  readonly #conn: SqliteConnection;
  readonly tenant: string;
  // The tenant's held spend per period as `periodFigures` last read it, until a hold is written:
  // an admission reads its period's figures, then bounds the hold it puts by its month's holds,
  // the same sum when the period is a month.
  readonly #held = new Map<string, Spend>();

  constructor(conn: SqliteConnection, tenant: string) {
    this.#conn = conn;
    this.tenant = tenant;
  }

  #key(params: SqlParams = {}): SqlParams {
    return { tenant: this.tenant, ...params };
  }

  #count(sql: string, params: SqlParams): number {
    return this.#conn.get<{ running: number }>(sql, params)?.running ?? 0;
  }

  #figures(sql: string, params: SqlParams): PeriodFigures {
    const row = this.#conn.get<PeriodFiguresRow>(sql, params);
    return {
      settled: decodeSpend(this.tenant, 'settled spend', row?.settled_tokens, row?.settled_minor_units),
      reserved: decodeSpend(this.tenant, 'reserved spend', row?.reserved_tokens, row?.reserved_minor_units),
    };
  }

  run(run: string): RunRecord | null {
    const row = this.#conn.get<RunRow>(SELECT_RUN, this.#key({ run }));
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  prunedRun(run: string): PrunedRunRecord | null {
    return readTombstone(this.#conn, this.tenant, run);
  }

  hasLivePass(run: string, atMs: number): boolean {
    return this.#conn.get<{ live: number }>(HAS_LIVE_PASS, this.#key({ run, atMs }))?.live === 1;
  }

  passLease(run: string, epoch: number): PassLease | null {
    const row = this.#conn.get<{ lease_expires_at_ms: number; settled_at_ms: number | null }>(SELECT_PASS_LEASE, this.#key({ run, epoch }));
    return row === undefined ? null : { leaseExpiresAtMs: row.lease_expires_at_ms, settledAtMs: row.settled_at_ms };
  }

  receipt(run: string, epoch: number): StoredReceipt | undefined {
    const columns = this.#conn.get<ReceiptColumns>(SELECT_RECEIPT, this.#key({ run, epoch }));
    return columns === undefined ? undefined : decodeStoredReceipt(this.tenant, columns);
  }

  passToSettle(run: string, epoch: number): PassToSettle | null {
    const row = this.#conn.get<PassToSettleRow>(SELECT_PASS_TO_SETTLE, this.#key({ run, epoch }));
    if (row === undefined) return null;
    return {
      period: row.period,
      takesSlot: row.takes_slot === 1,
      startedAtMs: row.started_at_ms,
      granted: row.hold_tokens === null ? null : decodeSpend(this.tenant, 'a pass hold', row.hold_tokens, row.hold_minor_units),
      receipt: decodeStoredReceipt(this.tenant, row),
      run: row.run_id === null ? null : decodeRun(this.tenant, row as RunRow),
      pruned: row.pruned === 1,
    };
  }

  admittedRun(run: string): AdmittedRun | null {
    const row = this.#conn.get<RetryFactsRow>(SELECT_RETRY_FACTS, this.#key({ run }));
    return row === undefined ? null : decodeAdmittedRun(this.tenant, row);
  }

  halts(): readonly Halt[] {
    return readDecisionHalts(this.#conn, this.tenant);
  }

  storedQuota(): TenantQuota | null {
    return readStoredQuota(this.#conn, this.tenant);
  }

  planeCeiling(): PlaneCeiling | null {
    return readPlaneCeiling(this.#conn);
  }

  holdsSlot(run: string): boolean {
    return this.#conn.get(SLOT_EXISTS, this.#key({ run })) !== undefined;
  }

  slotSnapshot(run: string): SlotSnapshot {
    const row = this.#conn.get<SlotSnapshotRow>(SELECT_SLOT_SNAPSHOT, this.#key({ run }));
    return { slotHeld: row?.slot_held === 1, holdHeld: row?.hold_held === 1, running: row?.running ?? 0 };
  }

  agentRunning(agent: string): number {
    return this.#count(COUNT_AGENT_SLOTS, this.#key({ agent }));
  }

  planeRunning(): number {
    return this.#count(COUNT_PLANE_SLOTS, {});
  }

  planeAgentRunning(agent: string): number {
    return this.#count(COUNT_PLANE_AGENT_SLOTS, { agent });
  }

  periodFigures(period: string): PeriodFigures {
    const figures = this.#figures(SELECT_PERIOD_FIGURES, this.#key({ period }));
    this.#held.set(period, figures.reserved);
    return figures;
  }

  agentPeriodFigures(agent: string, period: string): PeriodFigures {
    return this.#figures(SELECT_AGENT_PERIOD_FIGURES, this.#key({ agent, period }));
  }

  hold(run: string): StoredHold | null {
    const row = this.#conn.get<{ period: string; day: string | null; tokens: number; minor_units: number }>(SELECT_HOLD, this.#key({ run }));
    if (row === undefined) return null;
    return { period: row.period, day: row.day, amount: decodeSpend(this.tenant, `the hold of run '${run}'`, row.tokens, row.minor_units) };
  }

  heldInMonth(month: string): Spend {
    const known = this.#held.get(month);
    if (known !== undefined) return known;
    const row = this.#conn.get<{ tokens: number; minor_units: number }>(SUM_RESERVED, this.#key({ period: month }));
    return decodeSpend(this.tenant, 'reserved spend', row?.tokens, row?.minor_units);
  }

  settledIn(period: string): Spend {
    const row = this.#conn.get<{ tokens: number; minor_units: number }>(SELECT_SPENT, this.#key({ period }));
    return decodeSpend(this.tenant, 'settled spend', row?.tokens, row?.minor_units);
  }

  runAgent(run: string): string | null {
    return this.#conn.get<{ agent_name: string | null }>(SELECT_RUN_AGENT, this.#key({ run }))?.agent_name ?? null;
  }

  takeSlot(run: string, agentName: string | null, atMs: number): void {
    this.#conn.run(INSERT_SLOT, this.#key({ run, atMs, agentName }));
  }

  giveSlot(run: string): void {
    this.#conn.run(DELETE_SLOT, this.#key({ run }));
  }

  putHold(run: string, agentName: string | null, hold: StoredHold): void {
    this.#held.clear();
    this.#conn.run(INSERT_HOLD, this.#key({ run, period: hold.period, day: hold.day, tokens: hold.amount.tokens, minorUnits: hold.amount.minorUnits, agentName }));
  }

  moveHold(run: string, period: string, day: string | null): void {
    this.#held.clear();
    this.#conn.run(CARRY_HOLD, this.#key({ run, period, day }));
  }

  setHoldAmount(run: string, amount: Spend): void {
    this.#held.clear();
    this.#conn.run(SET_HOLD_AMOUNT, this.#key({ run, tokens: amount.tokens, minorUnits: amount.minorUnits }));
  }

  dropHold(run: string): void {
    this.#held.clear();
    this.#conn.run(DELETE_HOLD, this.#key({ run }));
  }

  accrueSettled(period: string, spend: Spend): Spend | null {
    const row = this.#conn.get<SpentTotals>(ACCRUE_SPENT, this.#key({ period, tokens: spend.tokens, minorUnits: spend.minorUnits }));
    return row === undefined ? null : { tokens: row.tokens, minorUnits: row.minor_units };
  }

  accrueAgentSettled(agent: string, period: string, spend: Spend): Spend {
    const row = this.#conn.get<SpentTotals>(ACCRUE_AGENT_SPENT, this.#key({ agent, period, tokens: spend.tokens, minorUnits: spend.minorUnits }));
    return { tokens: row?.tokens ?? 0, minorUnits: row?.minor_units ?? 0 };
  }

  insertRun(run: NewRun): void {
    this.#conn.run(
      INSERT_RUN,
      this.#key({
        run: run.run,
        agentName: run.agentName,
        agentDigest: run.agentDigest,
        chainJson: run.chain === null ? null : JSON.stringify(run.chain),
        budgetJson: JSON.stringify(run.budget),
        width: run.width,
        atMs: run.atMs,
      }),
    );
  }

  insertPass(pass: NewPass): void {
    this.#conn.run(
      INSERT_PASS,
      this.#key({
        run: pass.run,
        epoch: pass.epoch,
        period: pass.period,
        takesSlot: pass.takesSlot ? 1 : 0,
        atMs: pass.atMs,
        leaseExpiresAtMs: pass.leaseExpiresAtMs,
        holdTokens: pass.granted?.tokens ?? null,
        holdMinorUnits: pass.granted?.minorUnits ?? null,
      }),
    );
  }

  setRunEpoch(run: string, epoch: number, atMs: number): void {
    this.#conn.run(UPDATE_RUN_PASS, this.#key({ run, epoch, atMs }));
  }

  setRunStatus(run: string, status: RunStatus, atMs: number): void {
    this.#conn.run(SET_RUN_STATUS, this.#key({ run, status, atMs }));
  }

  setLease(run: string, epoch: number, leaseExpiresAtMs: number): void {
    this.#conn.run(SET_LEASE, this.#key({ run, epoch, leaseExpiresAtMs }));
  }

  recordPassReceipt(run: string, epoch: number, atMs: number, spend: Spend, concludes: boolean): void {
    this.#conn.run(RECORD_PASS_RECEIPT, this.#key({ run, epoch, atMs, tokens: spend.tokens, minorUnits: spend.minorUnits, concludes: concludes ? 1 : 0 }));
  }

  insertReceipt(run: string, epoch: number, receipt: StoredReceipt): void {
    this.#conn.run(
      INSERT_RECEIPT,
      this.#key({
        run,
        epoch,
        period: receipt.period,
        tokens: receipt.spend.tokens,
        minorUnits: receipt.spend.minorUnits,
        releaseSlot: receipt.releaseSlot ? 1 : 0,
        concludes: receipt.concludes ? 1 : 0,
      }),
    );
  }

  appendAudit(entry: AuditEntry): AuditRecord {
    return appendAuditInTransaction(this.#conn, this.tenant, entry);
  }

  appendEvent(event: NewEvent): void {
    appendEventInTransaction(this.#conn, event);
  }

  rateKeyRecorded(grant: string, run: string, dispatch: string): boolean {
    return this.#conn.get(RATE_KEY_EXISTS, this.#key({ grant, run, dispatch })) !== undefined;
  }

  pruneRate(grant: string, floorMs: number): void {
    this.#conn.run(PRUNE_RATE, this.#key({ grant, floorMs }));
  }

  rateCounter(grant: string): RateGrantCounter | null {
    const row = this.#conn.get<{ last_ordinal: number; last_at_ms: number }>(SELECT_RATE_GRANT, this.#key({ grant }));
    return row === undefined ? null : { lastOrdinal: row.last_ordinal, lastAtMs: row.last_at_ms };
  }

  rateInstantAt(grant: string, ordinal: number): number | null {
    return this.#conn.get<{ reserved_at_ms: number }>(SELECT_RATE_AT_ORDINAL, this.#key({ grant, ordinal }))?.reserved_at_ms ?? null;
  }

  firstRateOrdinalAfter(grant: string, sinceMs: number): number | null {
    return this.#conn.get<{ ordinal: number }>(SELECT_FIRST_COUNTED_RATE, this.#key({ grant, sinceMs }))?.ordinal ?? null;
  }

  recordRate(grant: string, run: string, dispatch: string, ordinal: number, recordedMs: number): void {
    this.#conn.run(INSERT_RATE, this.#key({ grant, run, dispatch, ordinal, recordedMs }));
    this.#conn.run(UPSERT_RATE_GRANT, this.#key({ grant, ordinal, recordedMs }));
  }

  grantedWaiter(run: string): GrantedWaiter | null {
    const row = this.#conn.get<{ waiter_lease: number; pass_lease: number | null; status: string | null }>(SELECT_GRANT_LEASE, this.#key({ run }));
    if (row === undefined) return null;
    return { waiterLeaseExpiresAtMs: row.waiter_lease, passLeaseExpiresAtMs: row.pass_lease, runStatus: row.status as RunStatus | null };
  }

  requeueWaiter(run: string, leaseExpiresAtMs: number): void {
    this.#conn.run(REQUEUE_WAITER, this.#key({ run, leaseExpiresAtMs }));
  }

  eraseRun(run: string): void {
    const key = this.#key({ run });
    this.#held.clear();
    this.#conn.run(DELETE_SLOT, key);
    this.#conn.run(DELETE_HOLD, key);
    this.#conn.run(ERASE_PASSES, key);
    this.#conn.run(ERASE_RUN, key);
  }

  nextWaiting(afterSeq: number): WaitingEntry | null {
    // The head of the queue is read once while nothing writes the queue (`cachedInWrite`): most
    // admissions and settles find it empty.
    const read = () => this.#conn.get<WaitingRow>(NEXT_WAITING, this.#key({ after: afterSeq })) ?? null;
    const row = afterSeq === 0 ? this.#conn.cachedInWrite(`queue-head:${this.tenant}`, read) : read();
    if (row === null) return null;
    return waitingEntryOf(this.tenant, row);
  }

  waiter(run: string): WaiterPlace | null {
    const row = this.#conn.get<WaiterRow>(SELECT_WAITER, this.#key({ run }));
    if (row === undefined) return null;
    return waiterPlaceOf(row);
  }

  enqueueWaiter(request: AdmitRequest, atMs: number, untilMs: number, leaseExpiresAtMs: number): void {
    this.#conn.run(INSERT_WAITER, this.#key({ run: request.run, requestJson: waiterRequestJson(request), atMs, untilMs, leaseExpiresAtMs }));
  }

  decideWaiter(run: string, state: 'granted' | 'refused', atMs: number): void {
    this.#conn.run(DECIDE_WAITER, this.#key({ run, state, atMs }));
  }

  setWaiterLease(run: string, leaseExpiresAtMs: number): void {
    this.#conn.run(SET_WAITER_LEASE, this.#key({ run, leaseExpiresAtMs }));
  }

  deleteWaiter(run: string): void {
    this.#conn.run(DELETE_WAITER, this.#key({ run }));
  }

  waitersAhead(seq: number, atMs: number): number {
    return this.#conn.get<{ ahead: number }>(COUNT_AHEAD, this.#key({ seq, atMs }))?.ahead ?? 0;
  }

  lapsedWaiters(atMs: number): readonly { readonly run: string; readonly state: string }[] {
    return this.#conn.all<{ run_id: string; state: string }>(LAPSED_WAITERS, this.#key({ atMs })).map((row) => ({ run: row.run_id, state: row.state }));
  }

  keepWaiter(run: string): unknown {
    return this.#conn.get<Record<string, string | number | null>>(SELECT_WAITER_WHOLE, this.#key({ run }));
  }

  restoreWaiter(kept: unknown): void {
    if (kept !== undefined) this.#conn.run(RESTORE_WAITER, kept as SqlParams);
  }
}
