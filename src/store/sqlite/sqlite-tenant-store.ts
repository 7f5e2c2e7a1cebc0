import { carryHold } from '../../core/lifecycle/hold-moves.js';
import { judgeRate, reserveRate } from '../../core/lifecycle/rate-decision.js';
import { decideSettle } from '../../core/lifecycle/receipts.js';
import { reserveOnBooks } from '../../core/lifecycle/reserve.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';
import { MAX_AMOUNT } from '../../core/amounts.js';
import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import type { TenantQuota } from '../../core/quota.js';
import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import { sameHalt, decodeHaltRow, type HaltRow } from '../halt-rows.js';
import type { TenantStore } from '../store.js';
import type {
  AppliedInstant,
  AdmitOutcome,
  AdmitRequest,
  AgentUsage,
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
  ReleaseRunOutcome,
  ReleaseRunRequest,
  ReserveOutcome,
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
} from '../types.js';
import { atApply } from '../applied-instant.js';
import { alertOnQuota, alertOnStoredQuota } from '../../core/lifecycle/spend-alerts.js';
import { haltLiftedEvent, haltSetEvent, type HaltLift } from '../../core/run-events.js';
import { appendEventInTransaction } from './sqlite-events.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import { deleteTenantInTransaction } from './sqlite-tenant-deletion.js';
import type { DeleteTenantOutcome, DeleteTenantRequest } from '../port/tenant-deletion.js';
import { decodeOverran, overranPassesSql, type OverranRow } from '../overran-passes.js';

const OVERRAN_PASSES = overranPassesSql('', '@tenant', '@limit');
import type { SqliteConnection } from './sqlite-connection.js';
import { readHalts } from './sqlite-halts.js';
import { LIST_AUDIT_CHAIN } from './sqlite-lease-queries.js';
import {
  dispatchInTransaction,
  heartbeatInTransaction,
  resumeInTransaction,
  settlePassInTransaction,
} from './sqlite-lifecycle.js';
import {
  listIdleHolds,
  listLapsedRuns,
  listRuns,
  listUnsettledPasses,
  releaseRunInTransaction,
  sweepRunInTransaction,
} from './sqlite-operator.js';
import * as q from './sqlite-queries.js';
import { readStoredQuota } from './sqlite-quota.js';
import { decodeAudit, decodeRun, decodeRunId, decodeSpend, type AuditRow, type RunRow } from '../rows.js';
import {
  admitInTurnInTransaction,
  admitOrWaitInTransaction,
  cancelWaiterInTransaction,
  collectWaiterInTransaction,
  grantWaitersInTransaction,
  readWaitQueue,
  sweepWaitersInTransaction,
} from './sqlite-waiters.js';
import type { LocalWaiterWakes } from '../waiter-wakes.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../waiters.js';
import type { PrunableRunsPage, PrunableRunsRequest, PrunedRate, PrunedRuns, PruneRateRequest, PruneRunsRequest } from '../retention.js';
import { countPrunableRate, listPrunableRuns, pruneRateInTransaction, pruneRunsInTransaction } from './sqlite-retention.js';

/**
 * One tenant's handle on a SQLite store (store.ts `TenantStore`). It checks no argument: `openStore`
 * answers it wrapped in `validated()` (validated-store.ts), and the plane validates before it calls.
 * Every method runs on the shared connection:
 * anything that writes as one decision queued for group commit (undone alone if it throws, inside
 * a `BEGIN IMMEDIATE` batch, answered after the COMMIT), every write
 * awaited before the method returns; pure reads as a deferred read transaction. Every statement is
 * keyed by `tenant`.
 */
export class SqliteTenantStore implements TenantStore {
  readonly tenant: string;
  readonly #conn: SqliteConnection;
  readonly #wakes: LocalWaiterWakes | undefined;

  /**
   * Use `SqliteQuotaStore.tenant()`; `tenant` must already be a validated identifier. `wakes` is
   * told, after the commit, of every grant a write of this handle made.
   */
  constructor(conn: SqliteConnection, tenant: string, wakes?: LocalWaiterWakes) {
    this.#conn = conn;
    this.tenant = tenant;
    this.#wakes = wakes;
  }

  // The tenant's books on this connection, for a decision core makes inside the transaction.
  #books(): SqliteTenantBooks {
    return new SqliteTenantBooks(this.#conn, this.tenant);
  }

  // A write whose body may grant waiters: their callers are woken once it committed.
  async #granting<T>(body: () => { outcome: T; granted: string[] }): Promise<T> {
    const { outcome, granted } = await this.#conn.write(body);
    // `granted` names, per grant, the tenant it went to: a plane-wide round may serve others.
    for (const tenant of new Set(granted)) this.#wakes?.wake(tenant);
    return outcome;
  }

  // A write that frees room at `atMs`: the tenant's waiters are granted in the same transaction.
  #freeing<T>(atMs: number, body: () => T): Promise<T> {
    return this.#granting(() => {
      const outcome = body();
      return { outcome, granted: grantWaitersInTransaction(this.#conn, this.tenant, atMs) };
    });
  }

  // ── store primitives (the C cases) ────────────────────────────────────────

  async reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome> {
    const input = { run: request.run, agent: null, quota: request.quota, hold: request.hold ?? null, atMs: request.atMs };
    return this.#conn.write(() => reserveOnBooks(this.#books(), input));
  }

  async release(run: string): Promise<void> {
    const key = { tenant: this.tenant, run };
    await this.#conn.write(() => {
      this.#conn.run(q.DELETE_SLOT, key);
      this.#conn.run(q.DELETE_HOLD, key);
    });
  }

  async carry(run: string, period: string): Promise<void> {
    await this.#conn.write(() => carryHold(this.#books(), run, period));
  }

  async reservations(limit: number): Promise<Held[]> {
    const params = { tenant: this.tenant, limit };
    const rows = await this.#conn.read(() =>
      this.#conn.all<{ run_id: string; period: string; tokens: number; minor_units: number }>(q.LIST_HOLDS, params),
    );
    return rows.map((row) => ({
      run: decodeRunId(this.tenant, 'hold', row.run_id),
      period: row.period,
      remaining: decodeSpend(this.tenant, 'the hold table', row.tokens, row.minor_units),
    }));
  }

  async reserved(period: string): Promise<Spend> {
    const params = { tenant: this.tenant, period };
    const row = await this.#conn.read(() => this.#conn.get<{ tokens: number; minor_units: number }>(q.SUM_RESERVED, params));
    return decodeSpend(this.tenant, 'reserved spend', row?.tokens, row?.minor_units);
  }

  async setHalt(halt: Halt): Promise<void> {
    const params = {
      tenant: this.tenant,
      scope: haltScopeKey(halt.scope),
      reason: halt.reason,
      actor: halt.by.actor,
      basis: halt.by.basis,
      atMs: halt.atMs,
      reachesRunning: halt.reachesRunning === true ? 1 : 0,
    };
    await this.#conn.write(() => {
      this.#conn.run(q.UPSERT_HALT, params);
      appendEventInTransaction(this.#conn, haltSetEvent(this.tenant, halt));
    });
  }

  async liftHalt(scope: HaltScope, lift?: HaltLift): Promise<boolean> {
    return this.#conn.write(() => this.#liftInTransaction(scope, null, lift));
  }

  async liftHaltIf(standing: Halt, lift?: HaltLift): Promise<boolean> {
    return this.#conn.write(() => this.#liftInTransaction(standing.scope, standing, lift));
  }

  // Removes the halt of `scope` (only if it equals `expected`, when given) with its halt.lifted event.
  #liftInTransaction(scope: HaltScope, expected: Halt | null, lift: HaltLift | undefined): boolean {
    const params = { tenant: this.tenant, scope: haltScopeKey(scope) };
    const row = this.#conn.get<HaltRow>(q.SELECT_HALT, params);
    if (row === undefined) return false;
    // Decoding first: an unreadable row throws STORE_CORRUPT rather than being treated as different.
    const standing = decodeHaltRow(this.tenant, row);
    if (expected !== null && !sameHalt(standing, expected)) return false;
    if (this.#conn.run(q.DELETE_HALT, params) === 0) return false;
    appendEventInTransaction(this.#conn, haltLiftedEvent(this.tenant, standing, lift));
    return true;
  }

  async halts(): Promise<Halt[]> {
    // readHalts answers a read-only array (inside a write, possibly the cache's frozen one); the caller gets its own.
    return this.#conn.read(() => [...readHalts(this.#conn, this.tenant)]);
  }

  async settle(settlement: QuotaSettlement): Promise<SettleOutcome> {
    return this.#conn.write(() => decideSettle(this.#books(), settlement, null));
  }

  async spent(period: string): Promise<Spend> {
    const params = { tenant: this.tenant, period };
    const row = await this.#conn.read(() => this.#conn.get<{ tokens: number; minor_units: number }>(q.SELECT_SPENT, params));
    return decodeSpend(this.tenant, 'settled spend', row?.tokens, row?.minor_units);
  }

  async running(): Promise<number> {
    const row = await this.#conn.read(() => this.#conn.get<{ running: number }>(q.COUNT_SLOTS, { tenant: this.tenant }));
    return Math.min(row?.running ?? 0, MAX_AMOUNT);
  }

  async runningRuns(limit: number): Promise<string[]> {
    const params = { tenant: this.tenant, limit };
    const rows = await this.#conn.read(() => this.#conn.all<{ run_id: string }>(q.LIST_SLOTS, params));
    return rows.map((row) => decodeRunId(this.tenant, 'slot', row.run_id));
  }

  async reserveRate(reservation: RateReservation): Promise<RateOutcome> {
    return this.#conn.write(() => reserveRate(this.#books(), this.tenant, reservation));
  }

  async rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome> {
    const refusal = await this.#conn.read(() => judgeRate(this.#books(), this.tenant, grant, ceilings, atMs));
    return refusal === null ? { ok: true } : { ok: false, refusal };
  }

  // ── tenant configuration ──────────────────────────────────────────────────

  async getQuota(): Promise<TenantQuota | null> {
    return this.#conn.read(() => readStoredQuota(this.#conn, this.tenant));
  }

  async setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void> {
    const params = { tenant: this.tenant, quotaJson: JSON.stringify(quota) };
    await this.#freeing(audit.atMs, () => {
      this.#conn.run(q.UPSERT_QUOTA, params);
      appendAuditInTransaction(this.#conn, this.tenant, audit);
      alertOnQuota(this.#books(), quota, audit.atMs);
    });
  }

  async agentUsage(agents: readonly string[], period: string): Promise<AgentUsage[]> {
    return this.#conn.read(() =>
      agents.map((agent) => {
        const params = { tenant: this.tenant, agent, period };
        const running = this.#conn.get<{ running: number }>(q.COUNT_AGENT_SLOTS, params)?.running ?? 0;
        const settled = this.#conn.get<{ tokens: number; minor_units: number }>(q.SELECT_AGENT_SPENT, params);
        const figures = this.#conn.get<{ reserved_tokens: number; reserved_minor_units: number }>(q.SELECT_AGENT_PERIOD_FIGURES, params);
        return {
          agent,
          running: Math.min(running, MAX_AMOUNT),
          period,
          settled: decodeSpend(this.tenant, 'settled spend', settled?.tokens, settled?.minor_units),
          reserved: decodeSpend(this.tenant, 'reserved spend', figures?.reserved_tokens, figures?.reserved_minor_units),
        };
      }),
    );
  }

  // ── run lifecycle ─────────────────────────────────────────────────────────

  async admit(request: AdmitRequest): Promise<AdmitOutcome> {
    return this.#granting(() => admitInTurnInTransaction(this.#conn, this.tenant, atApply('admission', request)));
  }

  async resume(request: ResumeRequest): Promise<ResumeOutcome> {
    return this.#conn.write(() => resumeInTransaction(this.#conn, this.tenant, atApply('resume', request)));
  }

  async settlePass(request: SettlePassRequest): Promise<SettlePassOutcome> {
    return this.#granting(() => {
      const applied = atApply('settle', request);
      const outcome = settlePassInTransaction(this.#conn, this.tenant, applied);
      return { outcome, granted: grantWaitersInTransaction(this.#conn, this.tenant, applied.atMs) };
    });
  }

  async dispatch(request: DispatchRequest): Promise<DispatchOutcome> {
    return this.#conn.write(() => dispatchInTransaction(this.#conn, this.tenant, atApply('dispatch', request)));
  }

  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome> {
    return this.#conn.write(() => heartbeatInTransaction(this.#conn, this.tenant, atApply('heartbeat', request)));
  }

  async getRun(run: string): Promise<RunRecord | null> {
    const params = { tenant: this.tenant, run };
    const row = await this.#conn.read(() => this.#conn.get<RunRow>(q.SELECT_RUN, params));
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  // ── sweep, listings and operator acts ─────────────────────────────────────

  async runs(request: RunListRequest): Promise<RunSummary[]> {
    return this.#conn.read(() => listRuns(this.#conn, this.tenant, request));
  }

  async lapsedRuns(request: { atMs: number; after?: string | undefined; limit: number }): Promise<string[]> {
    return this.#conn.read(() => listLapsedRuns(this.#conn, this.tenant, request));
  }

  async sweepRun(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
    return this.#granting(() => {
      const applied = atApply('sweep', request);
      const outcome = sweepRunInTransaction(this.#conn, this.tenant, applied);
      return { outcome, granted: grantWaitersInTransaction(this.#conn, this.tenant, applied.atMs) };
    });
  }

  async unsettledPasses(request: { atMs: number; limit: number }): Promise<PassRecord[]> {
    return this.#conn.read(() => listUnsettledPasses(this.#conn, this.tenant, request));
  }

  async idleHolds(request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]> {
    return this.#conn.read(() => listIdleHolds(this.#conn, this.tenant, request));
  }

  async overranPasses(request: { limit: number }): Promise<OverranPass[]> {
    const params = { tenant: this.tenant, limit: request.limit };
    const rows = await this.#conn.read(() => this.#conn.all<OverranRow>(OVERRAN_PASSES, params));
    return rows.map((row) => decodeOverran(this.tenant, row));
  }

  async releaseRun(request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
    return this.#freeing(request.atMs, () => releaseRunInTransaction(this.#conn, this.tenant, request));
  }

  // ── waiting admissions ────────────────────────────────────────────────────

  async admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return this.#granting(() => admitOrWaitInTransaction(this.#conn, this.tenant, atApply('admission', request), wait));
  }

  async collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return this.#granting(() => collectWaiterInTransaction(this.#conn, this.tenant, atApply('admission', request), wait));
  }

  async cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome> {
    return this.#granting(() => cancelWaiterInTransaction(this.#conn, this.tenant, atApply('cancel', request)));
  }

  async sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep> {
    return this.#granting(() => sweepWaitersInTransaction(this.#conn, this.tenant, atApply('sweep', request).atMs));
  }

  async waitQueue(request: { atMs: number }): Promise<WaitQueue> {
    return this.#conn.read(() => readWaitQueue(this.#conn, this.tenant, request.atMs));
  }

  // ── retention ─────────────────────────────────────────────────────────────

  async prunableRuns(request: PrunableRunsRequest): Promise<PrunableRunsPage> {
    return this.#conn.read(() => listPrunableRuns(this.#conn, this.tenant, request));
  }

  async pruneRuns(request: PruneRunsRequest): Promise<PrunedRuns> {
    return this.#conn.write(() => pruneRunsInTransaction(this.#conn, this.tenant, request));
  }

  async pruneRate(request: PruneRateRequest): Promise<PrunedRate> {
    return this.#conn.write(() => pruneRateInTransaction(this.#conn, this.tenant, request));
  }

  async countPrunableRate(request: { atOrBeforeMs: number }): Promise<number> {
    return this.#conn.read(() => countPrunableRate(this.#conn, this.tenant, request.atOrBeforeMs));
  }

  // ── audit log ─────────────────────────────────────────────────────────────

  async appendAudit(entry: AuditEntry): Promise<AuditRecord> {
    return this.#conn.write(() => appendAuditInTransaction(this.#conn, this.tenant, entry));
  }

  async auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]> {
    const { limit, action } = options;
    const rows = await this.#conn.read(() =>
      action === undefined
        ? this.#conn.all<AuditRow>(q.LIST_AUDIT, { tenant: this.tenant, limit })
        : this.#conn.all<AuditRow>(q.LIST_AUDIT_BY_ACTION, { tenant: this.tenant, limit, action }),
    );
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  async auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]> {
    const params = { tenant: this.tenant, afterSeq: request.afterSeq, limit: request.limit };
    const rows = await this.#conn.read(() => this.#conn.all<AuditRow>(LIST_AUDIT_CHAIN, params));
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  // ── the tenant's deletion ─────────────────────────────────────────────────

  async alertNow(atMs: number): Promise<void> {
    await this.#conn.write(() => alertOnStoredQuota(this.#books(), atMs));
  }

  async deleteTenant(request: DeleteTenantRequest): Promise<DeleteTenantOutcome> {
    return this.#conn.write(() => deleteTenantInTransaction(this.#conn, this.tenant, request));
  }
}
