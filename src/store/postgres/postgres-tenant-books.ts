import type { PeriodFigures } from '../../core/admission-ceilings.js';
import { MAX_AMOUNT } from '../../core/amounts.js';
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
import { countedKeys } from '../../core/period-books.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { TenantQuota } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import { decodeAdmittedRun } from '../admit-retry.js';
import { decodeHaltRow, decodePlaneHaltRow, type PlaneHaltRow } from '../halt-rows.js';
import { decodePlaneCeiling } from '../plane-rows.js';
import { decodeQuota } from './postgres-rows.js';
import { AUDIT_GENESIS_HASH, auditRowHash, canonicalJson } from '../audit-hash.js';
import { decodePrunedRow } from '../retention.js';
import { decodeRun, decodeSpend } from '../rows.js';
import { eventJsonColumns } from '../event-rows.js';
import type { NewEvent } from '../../core/events.js';
import type { AdmitRequest, AuditEntry, AuditRecord, RunRecord, RunStatus } from '../types.js';
import {
  FactsMissing,
  type BatchFacts,
  type HoldRow,
  type PassRow,
  type RunsRow,
  type SettledRow,
  type SpentRow,
  type TenantBase,
  type TenantFacts,
  type WaiterRow,
} from './postgres-books-facts.js';
import { waiterPlaceOf, waiterRequestJson, waitingEntryOf } from '../waiters.js';

const SEP = '\u0000';

/**
 * A tenant's books on PostgreSQL (core/lifecycle/books.ts), over the rows its batch loaded under
 * the tenant's lock (postgres-books-facts.ts): reads answer from those rows, and a read of a row
 * not loaded names it and throws `FactsMissing`; writes change the rows in memory, undoably, and
 * keep the counters the schema keeps beside the sets (the tenant's and each agent's slot counts,
 * each period's hold sums) exactly as the rows move. The batch writes the changed rows back in one
 * statement. Waiting-queue reads are not served here: the queue is decided by its own functions.
 */
export class PostgresTenantBooks implements TenantBooks {
  readonly tenant: string;
  readonly #batch: BatchFacts;
  readonly #facts: TenantFacts;

  constructor(batch: BatchFacts, tenant: string) {
    this.#batch = batch;
    this.tenant = tenant;
    this.#facts = batch.of(tenant);
  }

  // ── loading ───────────────────────────────────────────────────────────────

  #missing(): never {
    throw new FactsMissing();
  }

  #base(): TenantBase {
    const base = this.#facts.base;
    if (base !== undefined) return base;
    this.#facts.want.base = true;
    return this.#missing();
  }

  #loadedRun(run: string): void {
    const facts = this.#facts;
    if (facts.loadedRuns.has(run)) return;
    if (facts.speculative) {
      // On kept rows, a run they lack is taken to be new: the write checks it still is.
      facts.loadedRuns.add(run);
      facts.assumedNew.add(run);
      return;
    }
    facts.want.runs.add(run);
    this.#missing();
  }

  #runRow(run: string): RunsRow | null {
    this.#loadedRun(run);
    return this.#facts.runs.rows.get(run) ?? null;
  }

  #pass(run: string, epoch: number): PassRow | null {
    this.#loadedRun(run);
    return this.#facts.passes.rows.get(run + SEP + epoch) ?? null;
  }

  #settledRow(run: string, epoch: number): SettledRow | null {
    this.#loadedRun(run);
    return this.#facts.settled.rows.get(run + SEP + epoch) ?? null;
  }

  #holdRow(run: string): HoldRow | null {
    this.#loadedRun(run);
    return this.#facts.holds.rows.get(run) ?? null;
  }

  #spentRow(period: string): SpentRow | null {
    const rows = this.#facts.spent.rows;
    if (!rows.has(period)) {
      this.#facts.want.periods.add(period);
      this.#missing();
    }
    return rows.get(period) ?? null;
  }

  #agentSpentRow(agent: string, period: string): SpentRow | null {
    const key = agent + SEP + period;
    const rows = this.#facts.agentSpent.rows;
    if (!rows.has(key)) {
      this.#facts.want.agentPeriods.set(key, [agent, period]);
      this.#missing();
    }
    return rows.get(key) ?? null;
  }

  #agentCount(agent: string): number {
    const rows = this.#facts.agentFigures.rows;
    if (!rows.has(agent)) {
      this.#facts.want.agents.add(agent);
      this.#missing();
    }
    return rows.get(agent)?.running ?? 0;
  }

  // ── reads ─────────────────────────────────────────────────────────────────

  run(run: string): RunRecord | null {
    const row = this.#runRow(run);
    return row === null ? null : decodeRun(this.tenant, row);
  }

  prunedRun(run: string): PrunedRunRecord | null {
    this.#loadedRun(run);
    const row = this.#facts.pruned.rows.get(run) ?? null;
    return row === null ? null : decodePrunedRow(run, row);
  }

  hasLivePass(run: string, atMs: number): boolean {
    this.#loadedRun(run);
    for (const pass of this.#facts.passes.rows.values()) {
      if (pass !== null && pass.run_id === run && pass.settled_at_ms === null && pass.lease_expires_at_ms > atMs) return true;
    }
    return false;
  }

  passLease(run: string, epoch: number): PassLease | null {
    const pass = this.#pass(run, epoch);
    return pass === null ? null : { leaseExpiresAtMs: pass.lease_expires_at_ms, settledAtMs: pass.settled_at_ms };
  }

  receipt(run: string, epoch: number): StoredReceipt | undefined {
    const pass = this.#pass(run, epoch);
    if (pass !== null && pass.receipt_tokens !== null) {
      return {
        period: pass.period,
        spend: decodeSpend(this.tenant, 'a receipt', pass.receipt_tokens, pass.receipt_minor_units),
        releaseSlot: pass.takes_slot,
        concludes: pass.receipt_concludes === true,
      };
    }
    const settled = this.#settledRow(run, epoch);
    if (settled === null) return undefined;
    return {
      period: settled.period,
      spend: decodeSpend(this.tenant, 'a receipt', settled.tokens, settled.minor_units),
      releaseSlot: settled.release_slot,
      concludes: settled.concludes,
    };
  }

  passToSettle(run: string, epoch: number): PassToSettle | null {
    const pass = this.#pass(run, epoch);
    if (pass === null) return null;
    return {
      period: pass.period,
      takesSlot: pass.takes_slot,
      startedAtMs: pass.started_at_ms,
      granted: pass.hold_tokens === null ? null : decodeSpend(this.tenant, 'a pass hold', pass.hold_tokens, pass.hold_minor_units),
      receipt: this.receipt(run, epoch),
      run: this.run(run),
      pruned: this.#facts.pruned.rows.get(run) != null,
    };
  }

  admittedRun(run: string): AdmittedRun | null {
    const row = this.#runRow(run);
    if (row === null) return null;
    const first = this.#pass(run, 1);
    const hold = this.#holdRow(run);
    return decodeAdmittedRun(this.tenant, {
      ...row,
      pass_period: first?.period ?? null,
      lease_expires_at_ms: first?.lease_expires_at_ms ?? null,
      settled_at_ms: first?.settled_at_ms ?? null,
      pass_hold_tokens: first?.hold_tokens ?? null,
      pass_hold_minor_units: first?.hold_minor_units ?? null,
      slot_held: this.#facts.slots.rows.get(run) != null,
      hold_tokens: hold?.tokens ?? null,
      hold_minor_units: hold?.minor_units ?? null,
    });
  }

  halts(): readonly Halt[] {
    const own = this.#base().haltRows.map((row) => decodeHaltRow(this.tenant, row));
    const plane = planeHaltOf(this.#batch);
    return plane === null ? own : [...own, plane];
  }

  storedQuota(): TenantQuota | null {
    const quotaJson = this.#base().quotaJson;
    return quotaJson === null ? null : decodeQuota(this.tenant, quotaJson);
  }

  planeCeiling(): PlaneCeiling | null {
    return planeCeilingOf(this.#batch);
  }

  holdsSlot(run: string): boolean {
    this.#loadedRun(run);
    return this.#facts.slots.rows.get(run) != null;
  }

  slotSnapshot(run: string): SlotSnapshot {
    const running = this.#base().running;
    return { slotHeld: this.holdsSlot(run), holdHeld: this.#holdRow(run) !== null, running };
  }

  agentRunning(agent: string): number {
    return this.#agentCount(agent);
  }

  planeRunning(): number {
    const plane = this.#batch.plane;
    if (plane.running === undefined) {
      plane.wantRunning = true;
      this.#missing();
    }
    return (plane.running as number) + plane.delta;
  }

  planeAgentRunning(agent: string): number {
    const plane = this.#batch.plane;
    const loaded = plane.agents.get(agent);
    if (loaded === undefined) {
      plane.wantAgents.add(agent);
      this.#missing();
    }
    return (loaded as number) + (plane.agentDelta.get(agent) ?? 0);
  }

  periodFigures(period: string): PeriodFigures {
    return this.#figuresOf(this.#spentRow(period));
  }

  agentPeriodFigures(agent: string, period: string): PeriodFigures {
    return this.#figuresOf(this.#agentSpentRow(agent, period));
  }

  #figuresOf(row: SpentRow | null): PeriodFigures {
    return {
      settled: decodeSpend(this.tenant, 'settled spend', row?.tokens ?? 0, row?.minor_units ?? 0),
      reserved: decodeSpend(this.tenant, 'reserved spend', Math.min(row?.held_tokens ?? 0, MAX_AMOUNT), Math.min(row?.held_minor_units ?? 0, MAX_AMOUNT)),
    };
  }

  hold(run: string): StoredHold | null {
    const row = this.#holdRow(run);
    if (row === null) return null;
    return { period: row.period, day: row.day, amount: decodeSpend(this.tenant, `the hold of run '${run}'`, row.tokens, row.minor_units) };
  }

  heldInMonth(month: string): Spend {
    return this.#figuresOf(this.#spentRow(month)).reserved;
  }

  settledIn(period: string): Spend {
    return this.#figuresOf(this.#spentRow(period)).settled;
  }

  runAgent(run: string): string | null {
    return this.#runRow(run)?.agent_name ?? null;
  }

  // ── writes ────────────────────────────────────────────────────────────────

  #moveRunning(agent: string | null, by: number): void {
    const base = this.#base();
    const facts = this.#facts;
    const batch = this.#batch;
    const plane = batch.plane;
    if (agent !== null) {
      const running = this.#agentCount(agent);
      batch.put(facts.agentFigures, agent, { running: running + by });
      batch.set(plane.agentDelta, agent, (plane.agentDelta.get(agent) ?? 0) + by);
    }
    const before = base.running;
    const wasDirty = facts.baseDirty;
    batch.onUndo(() => {
      base.running = before;
      facts.baseDirty = wasDirty;
    });
    base.running = before + by;
    facts.baseDirty = true;
    const delta = plane.delta;
    batch.onUndo(() => {
      plane.delta = delta;
    });
    plane.delta = delta + by;
  }

  takeSlot(run: string, agentName: string | null, atMs: number): void {
    if (this.holdsSlot(run)) return;
    this.#moveRunning(agentName, 1);
    this.#batch.put(this.#facts.slots, run, { run_id: run, admitted_at_ms: atMs, agent_name: agentName });
  }

  giveSlot(run: string): void {
    this.#loadedRun(run);
    const slot = this.#facts.slots.rows.get(run) ?? null;
    if (slot === null) return;
    this.#moveRunning(slot.agent_name, -1);
    this.#batch.put(this.#facts.slots, run, null);
  }

  // Moves the hold sums of every key a hold of (period, day) counts in by (tokens, minorUnits),
  // the tenant's and, for an agent's run, the agent's; a sum without a row starts at 0.
  #moveHeld(period: string, day: string | null, agent: string | null, tokens: number, minorUnits: number): void {
    if (tokens === 0 && minorUnits === 0) return;
    for (const key of countedKeys(period, day)) {
      this.#addHeld(this.#facts.spent, key, this.#spentRow(key), { period: key }, tokens, minorUnits);
      if (agent !== null) {
        this.#addHeld(this.#facts.agentSpent, agent + SEP + key, this.#agentSpentRow(agent, key), { agent_name: agent, period: key }, tokens, minorUnits);
      }
    }
  }

  #addHeld(
    table: TenantFacts['spent'],
    key: string,
    row: SpentRow | null,
    identity: { agent_name?: string; period: string },
    tokens: number,
    minorUnits: number,
  ): void {
    const from = row ?? { ...identity, tokens: 0, minor_units: 0, held_tokens: 0, held_minor_units: 0 };
    this.#batch.put(table, key, {
      ...from,
      held_tokens: Math.max(0, from.held_tokens + tokens),
      held_minor_units: Math.max(0, from.held_minor_units + minorUnits),
    });
  }

  putHold(run: string, agentName: string | null, hold: StoredHold): void {
    this.#loadedRun(run);
    const { period, day, amount } = hold;
    this.#moveHeld(period, day, agentName, amount.tokens, amount.minorUnits);
    this.#batch.put(this.#facts.holds, run, { run_id: run, period, day, agent_name: agentName, tokens: amount.tokens, minor_units: amount.minorUnits });
  }

  moveHold(run: string, period: string, day: string | null): void {
    const row = this.#holdRow(run);
    if (row === null) return;
    this.#moveHeld(row.period, row.day, row.agent_name, -row.tokens, -row.minor_units);
    this.#moveHeld(period, day, row.agent_name, row.tokens, row.minor_units);
    this.#batch.put(this.#facts.holds, run, { ...row, period, day });
  }

  setHoldAmount(run: string, amount: Spend): void {
    const row = this.#holdRow(run);
    if (row === null) return;
    this.#moveHeld(row.period, row.day, row.agent_name, amount.tokens - row.tokens, amount.minorUnits - row.minor_units);
    this.#batch.put(this.#facts.holds, run, { ...row, tokens: amount.tokens, minor_units: amount.minorUnits });
  }

  dropHold(run: string): void {
    const row = this.#holdRow(run);
    if (row === null) return;
    this.#moveHeld(row.period, row.day, row.agent_name, -row.tokens, -row.minor_units);
    this.#batch.put(this.#facts.holds, run, null);
  }

  accrueSettled(period: string, spend: Spend): Spend | null {
    const row = this.#spentRow(period);
    const from = row ?? { period, tokens: 0, minor_units: 0, held_tokens: 0, held_minor_units: 0 };
    const tokens = from.tokens + spend.tokens;
    const minorUnits = from.minor_units + spend.minorUnits;
    if (tokens > MAX_AMOUNT || minorUnits > MAX_AMOUNT) return null;
    this.#batch.put(this.#facts.spent, period, { ...from, tokens, minor_units: minorUnits });
    return { tokens, minorUnits };
  }

  accrueAgentSettled(agent: string, period: string, spend: Spend): Spend {
    const row = this.#agentSpentRow(agent, period);
    const from = row ?? { agent_name: agent, period, tokens: 0, minor_units: 0, held_tokens: 0, held_minor_units: 0 };
    const tokens = from.tokens + spend.tokens;
    const minorUnits = from.minor_units + spend.minorUnits;
    this.#batch.put(this.#facts.agentSpent, agent + SEP + period, { ...from, tokens, minor_units: minorUnits });
    return { tokens, minorUnits };
  }

  insertRun(run: NewRun): void {
    this.#loadedRun(run.run);
    this.#batch.put(this.#facts.runs, run.run, {
      run_id: run.run,
      status: 'running',
      agent_name: run.agentName,
      agent_digest: run.agentDigest,
      chain_json: run.chain === null ? null : JSON.stringify(run.chain),
      budget_json: JSON.stringify(run.budget),
      width: run.width,
      admitted_at_ms: run.atMs,
      last_epoch: 1,
      status_since_ms: run.atMs,
    });
  }

  insertPass(pass: NewPass): void {
    this.#loadedRun(pass.run);
    this.#batch.put(this.#facts.passes, pass.run + SEP + pass.epoch, {
      run_id: pass.run,
      epoch: pass.epoch,
      period: pass.period,
      takes_slot: pass.takesSlot,
      started_at_ms: pass.atMs,
      lease_expires_at_ms: pass.leaseExpiresAtMs,
      settled_at_ms: null,
      hold_tokens: pass.granted?.tokens ?? null,
      hold_minor_units: pass.granted?.minorUnits ?? null,
      receipt_tokens: null,
      receipt_minor_units: null,
      receipt_concludes: null,
    });
  }

  #updateRun(run: string, change: Partial<RunsRow>): void {
    const row = this.#runRow(run);
    if (row !== null) this.#batch.put(this.#facts.runs, run, { ...row, ...change });
  }

  #updatePass(run: string, epoch: number, change: Partial<PassRow>): void {
    const row = this.#pass(run, epoch);
    if (row !== null) this.#batch.put(this.#facts.passes, run + SEP + epoch, { ...row, ...change });
  }

  setRunEpoch(run: string, epoch: number, atMs: number): void {
    this.#updateRun(run, { status: 'running', last_epoch: epoch, status_since_ms: atMs });
  }

  setRunStatus(run: string, status: RunStatus, atMs: number): void {
    this.#updateRun(run, { status, status_since_ms: atMs });
  }

  setLease(run: string, epoch: number, leaseExpiresAtMs: number): void {
    this.#updatePass(run, epoch, { lease_expires_at_ms: leaseExpiresAtMs });
  }

  recordPassReceipt(run: string, epoch: number, atMs: number, spend: Spend, concludes: boolean): void {
    this.#updatePass(run, epoch, {
      settled_at_ms: atMs,
      receipt_tokens: spend.tokens,
      receipt_minor_units: spend.minorUnits,
      receipt_concludes: concludes,
    });
  }

  insertReceipt(run: string, epoch: number, receipt: StoredReceipt): void {
    this.#loadedRun(run);
    this.#batch.put(this.#facts.settled, run + SEP + epoch, {
      run_id: run,
      epoch,
      period: receipt.period,
      tokens: receipt.spend.tokens,
      minor_units: receipt.spend.minorUnits,
      release_slot: receipt.releaseSlot,
      concludes: receipt.concludes,
    });
  }

  appendAudit(entry: AuditEntry): AuditRecord {
    const facts = this.#facts;
    const head = facts.auditHead;
    if (head === undefined) {
      facts.want.audit = true;
      return this.#missing();
    }
    const seq = (head?.seq ?? 0) + 1;
    const prevHash = head?.hash ?? AUDIT_GENESIS_HASH;
    const detailJson = canonicalJson(entry.detail);
    const detail = JSON.parse(detailJson) as Record<string, unknown>;
    const stored: AuditEntry = { atMs: entry.atMs, by: entry.by, action: entry.action, subject: entry.subject, detail };
    const hash = auditRowHash(this.tenant, seq, stored, prevHash);
    const appended = facts.auditAppended;
    this.#batch.onUndo(() => {
      facts.auditHead = head;
      appended.pop();
    });
    facts.auditHead = { seq, hash };
    appended.push({
      seq,
      at_ms: entry.atMs,
      actor: entry.by.actor,
      basis: entry.by.basis,
      action: entry.action,
      subject: entry.subject,
      detail_json: detailJson,
      prev_hash: prevHash,
      hash,
    });
    return { seq, ...stored, hash };
  }

  appendEvent(event: NewEvent): void {
    const appended = this.#facts.eventsAppended;
    this.#batch.onUndo(() => appended.pop());
    appended.push(eventJsonColumns(event));
  }

  // ── rate ──────────────────────────────────────────────────────────────────

  #recorded(grant: string): readonly { ordinal: number; reserved_at_ms: number; run_id: string; dispatch: string }[] {
    return this.#facts.rateRecorded.get(grant) ?? [];
  }

  rateKeyRecorded(grant: string, run: string, dispatch: string): boolean {
    if (this.#recorded(grant).some((row) => row.run_id === run && row.dispatch === dispatch)) return true;
    const key = grant + SEP + run + SEP + dispatch;
    const storedAtMs = this.#facts.rateKeys.get(key);
    if (storedAtMs === undefined) {
      if (this.#facts.speculative) {
        // On kept rows, a dispatch they lack is taken to be new: the write checks it still is.
        this.#facts.assumedNewRates.set(key, [grant, run, dispatch]);
        return false;
      }
      this.#facts.want.rateKeys.set(key, [grant, run, dispatch]);
      return this.#missing();
    }
    // A stored dispatch stands unless this batch pruned its grant at or after its instant.
    const floor = this.#facts.ratePrunes.get(grant);
    return storedAtMs !== null && (floor === undefined || storedAtMs > floor);
  }

  pruneRate(grant: string, floorMs: number): void {
    const facts = this.#facts;
    const floor = Math.max(facts.ratePrunes.get(grant) ?? Number.NEGATIVE_INFINITY, floorMs);
    this.#batch.set(facts.ratePrunes, grant, floor);
    const recorded = facts.rateRecorded.get(grant);
    if (recorded !== undefined && recorded.some((row) => row.reserved_at_ms <= floor)) {
      this.#batch.set(
        facts.rateRecorded,
        grant,
        recorded.filter((row) => row.reserved_at_ms > floor),
      );
    }
  }

  rateCounter(grant: string): RateGrantCounter | null {
    const rows = this.#facts.rateGrants.rows;
    if (!rows.has(grant)) {
      this.#facts.want.grants.add(grant);
      return this.#missing();
    }
    const row = rows.get(grant) ?? null;
    return row === null ? null : { lastOrdinal: row.last_ordinal, lastAtMs: row.last_at_ms };
  }

  rateInstantAt(grant: string, ordinal: number): number | null {
    const recorded = this.#recorded(grant).find((row) => row.ordinal === ordinal);
    if (recorded !== undefined) return recorded.reserved_at_ms;
    const key = grant + SEP + ordinal;
    const stored = this.#facts.rateOrdinals.get(key);
    if (stored === undefined) {
      this.#facts.want.rateOrdinals.set(key, [grant, ordinal]);
      return this.#missing();
    }
    const floor = this.#facts.ratePrunes.get(grant);
    return stored === null || (floor !== undefined && stored <= floor) ? null : stored;
  }

  firstRateOrdinalAfter(grant: string, sinceMs: number): number | null {
    // Rows this batch pruned are at or before its floor: the oldest standing row after `sinceMs` is
    // the oldest stored after both, else the oldest this batch recorded after both.
    const since = Math.max(sinceMs, this.#facts.ratePrunes.get(grant) ?? Number.NEGATIVE_INFINITY);
    const key = grant + SEP + since;
    const stored = this.#facts.rateAfter.get(key);
    if (stored === undefined) {
      this.#facts.want.rateAfter.set(key, [grant, since]);
      return this.#missing();
    }
    if (stored !== null) return stored;
    return this.#recorded(grant).find((row) => row.reserved_at_ms > since)?.ordinal ?? null;
  }

  recordRate(grant: string, run: string, dispatch: string, ordinal: number, recordedMs: number): void {
    const facts = this.#facts;
    this.rateCounter(grant);
    this.#batch.set(facts.rateRecorded, grant, [...this.#recorded(grant), { grant_ref: grant, ordinal, run_id: run, dispatch, reserved_at_ms: recordedMs }]);
    this.#batch.put(facts.rateGrants, grant, { grant_ref: grant, last_ordinal: ordinal, last_at_ms: recordedMs });
  }

  // ── waiters ───────────────────────────────────────────────────────────────

  // The tenant's whole queue (loaded at once: its order and its next seq are read across it).
  #queue(): TenantFacts['waiters'] {
    const facts = this.#facts;
    if (facts.queueLoaded) return facts.waiters;
    facts.want.queue = true;
    return this.#missing();
  }

  #waiterRow(run: string): WaiterRow | null {
    return this.#queue().rows.get(run) ?? null;
  }

  #updateWaiter(run: string, change: Partial<WaiterRow>): void {
    const row = this.#waiterRow(run);
    if (row !== null) this.#batch.put(this.#facts.waiters, run, { ...row, ...change });
  }

  // The rows of the queue, in queue order.
  #inOrder(): WaiterRow[] {
    const rows: WaiterRow[] = [];
    for (const row of this.#queue().rows.values()) if (row !== null) rows.push(row);
    return rows.sort((a, b) => a.seq - b.seq);
  }

  grantedWaiter(run: string): GrantedWaiter | null {
    // No waiter holds a grant (as loaded, and nothing changed the queue since): nothing to read.
    const base = this.#base();
    if (!base.granted && !this.#facts.queueLoaded) return null;
    const waiter = this.#waiterRow(run);
    if (waiter === null || waiter.state !== 'granted') return null;
    const status = this.#runRow(run)?.status ?? null;
    return {
      waiterLeaseExpiresAtMs: waiter.lease_expires_at_ms,
      passLeaseExpiresAtMs: this.#pass(run, 1)?.lease_expires_at_ms ?? null,
      runStatus: status as RunStatus | null,
    };
  }

  requeueWaiter(run: string, leaseExpiresAtMs: number): void {
    const row = this.#waiterRow(run);
    if (row === null) return;
    this.#updateWaiter(run, { state: 'waiting', decided_at_ms: null, lease_expires_at_ms: Math.max(row.lease_expires_at_ms, leaseExpiresAtMs) });
  }

  eraseRun(run: string): void {
    this.giveSlot(run);
    this.dropHold(run);
    const facts = this.#facts;
    for (const [key, pass] of facts.passes.rows) {
      if (pass !== null && pass.run_id === run) this.#batch.put(facts.passes, key, null);
    }
    if (this.#runRow(run) !== null) this.#batch.put(facts.runs, run, null);
  }

  nextWaiting(afterSeq: number): WaitingEntry | null {
    // No waiter waits (as loaded, and nothing changed the queue since): the queue need not be read.
    if (!this.#base().waiting && !this.#facts.queueLoaded) return null;
    const row = this.#inOrder().find((candidate) => candidate.seq > afterSeq && candidate.state === 'waiting');
    if (row === undefined) return null;
    return waitingEntryOf(this.tenant, row);
  }

  waiter(run: string): WaiterPlace | null {
    const row = this.#waiterRow(run);
    if (row === null) return null;
    return waiterPlaceOf(row);
  }

  enqueueWaiter(request: AdmitRequest, atMs: number, untilMs: number, leaseExpiresAtMs: number): void {
    const last = this.#inOrder().at(-1)?.seq ?? 0;
    this.#batch.put(this.#facts.waiters, request.run, {
      run_id: request.run,
      seq: last + 1,
      state: 'waiting',
      request_json: waiterRequestJson(request),
      enqueued_at_ms: atMs,
      wait_until_ms: untilMs,
      lease_expires_at_ms: leaseExpiresAtMs,
      decided_at_ms: null,
    });
  }

  decideWaiter(run: string, state: 'granted' | 'refused', atMs: number): void {
    this.#updateWaiter(run, { state, decided_at_ms: atMs });
    if (state === 'granted') this.#batch.grant(this.tenant);
  }

  setWaiterLease(run: string, leaseExpiresAtMs: number): void {
    this.#updateWaiter(run, { lease_expires_at_ms: leaseExpiresAtMs });
  }

  deleteWaiter(run: string): void {
    if (this.#waiterRow(run) !== null) this.#batch.put(this.#facts.waiters, run, null);
  }

  waitersAhead(seq: number, atMs: number): number {
    return this.#inOrder().filter((row) => row.state === 'waiting' && row.lease_expires_at_ms > atMs && row.seq < seq).length;
  }

  lapsedWaiters(atMs: number): readonly { readonly run: string; readonly state: string }[] {
    return this.#inOrder()
      .filter((row) => row.lease_expires_at_ms <= atMs)
      .map((row) => ({ run: row.run_id, state: row.state }));
  }

  keepWaiter(run: string): unknown {
    const row = this.#waiterRow(run);
    return row === null ? undefined : { ...row };
  }

  restoreWaiter(kept: unknown): void {
    if (kept === undefined) return;
    const row = kept as WaiterRow;
    this.#queue();
    this.#batch.put(this.#facts.waiters, row.run_id, row);
  }

  /** Whether the tenant has a waiter waiting whose lease runs after `atMs`. */
  waitsAt(atMs: number): boolean {
    return this.#inOrder().some((row) => row.state === 'waiting' && row.lease_expires_at_ms > atMs);
  }
}

/** The stored plane-wide ceiling as `batch` loaded it (`null`: none); throws `FactsMissing` until it is loaded. */
export function planeCeilingOf(batch: BatchFacts): PlaneCeiling | null {
  const plane = batch.plane;
  if (plane.ceiling !== undefined) return plane.ceiling.raw === null ? null : decodePlaneCeiling(plane.ceiling.raw);
  plane.wantCeiling = true;
  throw new FactsMissing();
}

/**
 * The plane-wide halt as `batch` loaded it with the ceiling (`null`: none; docs/design/rules.md#c49);
 * throws `FactsMissing` until it is loaded.
 */
export function planeHaltOf(batch: BatchFacts): Halt | null {
  const plane = batch.plane;
  if (plane.halt !== undefined) return plane.halt.raw === null ? null : decodePlaneHaltRow(plane.halt.raw as PlaneHaltRow);
  plane.wantCeiling = true;
  throw new FactsMissing();
}

/** The facts a decision of `tenant` about `run` at `atMs` will read, asked for before it runs. */
export function prefetch(
  batch: BatchFacts,
  tenant: string,
  hint: { run?: string | undefined; agent?: string | null; periods?: readonly string[]; queue?: boolean },
): void {
  const facts = batch.of(tenant);
  if (facts.base === undefined) facts.want.base = true;
  if (hint.queue === true && !facts.queueLoaded) facts.want.queue = true;
  if (hint.run !== undefined && !facts.loadedRuns.has(hint.run)) facts.want.runs.add(hint.run);
  if (hint.agent != null && !facts.agentFigures.rows.has(hint.agent)) facts.want.agents.add(hint.agent);
  for (const period of hint.periods ?? []) {
    if (!facts.spent.rows.has(period)) facts.want.periods.add(period);
    if (hint.agent != null && !facts.agentSpent.rows.has(hint.agent + SEP + period)) {
      facts.want.agentPeriods.set(hint.agent + SEP + period, [hint.agent, period]);
    }
  }
}
