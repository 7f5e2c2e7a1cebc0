import { MAX_AMOUNT } from '../../core/amounts.js';
import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import { normaliseRunId, requireIdentifier } from '../../core/identifiers.js';
import { parseQuota, parseRateCeilings, parseStoredQuota, type TenantQuota } from '../../core/quota.js';
import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import { sameHalt, decodeHaltRow, type HaltRow } from '../halt-rows.js';
import {
  requireAdmitRequest,
  requireAuditEntry,
  requireDispatchRequest,
  requireHeartbeatRequest,
  requireResumeRequest,
  requireSettlePassRequest,
} from '../lifecycle-arguments.js';
import {
  requireAuditChainRequest,
  requireIdleHoldsRequest,
  requireLapsedRunsRequest,
  requireReleaseRunRequest,
  requireRunListRequest,
  requireCancelWaiterRequest,
  requireSweepRunRequest,
  requireSweepWaitersRequest,
  requireUnsettledPassesRequest,
} from '../operator-arguments.js';
import type { TenantStore } from '../store.js';
import {
  requireHalt,
  requireHaltScopeKey,
  requireInstantMs,
  requireLimit,
  requireObject,
  requirePeriodKey,
  requireRateReservation,
  requireSettlement,
  requireSpendHold,
  requireAgentNames,
} from '../store-arguments.js';
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
import { appendAuditInTransaction } from './sqlite-audit.js';
import { carryHold } from './sqlite-books.js';
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
import { judgeRate, reserveRateInTransaction } from './sqlite-rate.js';
import { reserveInTransaction } from './sqlite-reserve.js';
import { decodeAudit, decodeRun, decodeRunId, decodeSpend, type AuditRow, type RunRow } from '../rows.js';
import { settleInTransaction } from './sqlite-settle.js';
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
import { requireWaitTerms, type CancelOutcome, type WaitOutcome, type WaitQueue, type WaiterSweep, type WaitTerms } from '../waiters.js';
import {
  requirePrunableRunsRequest,
  requirePruneRateRequest,
  requirePruneRunsRequest,
  type PrunableRunsPage,
  type PrunableRunsRequest,
  type PrunedRate,
  type PrunedRuns,
  type PruneRateRequest,
  type PruneRunsRequest,
} from '../retention.js';
import { countPrunableRate, listPrunableRuns, pruneRateInTransaction, pruneRunsInTransaction } from './sqlite-retention.js';

/**
 * One tenant's handle on a SQLite store (store.ts `TenantStore`). Every method validates its
 * arguments first (`INVALID_ARGUMENT` naming the field), then runs on the shared connection:
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
    const record = requireObject('request', request);
    const input = {
      run: normaliseRunId('run', record.run),
      agent: null,
      quota: parseStoredQuota(record.quota, 'quota'),
      hold: requireSpendHold('hold', record.hold),
      atMs: requireInstantMs('atMs', record.atMs),
    };
    return this.#conn.write(() => reserveInTransaction(this.#conn, this.tenant, input));
  }

  async release(run: string): Promise<void> {
    const key = { tenant: this.tenant, run: normaliseRunId('run', run) };
    await this.#conn.write(() => {
      this.#conn.run(q.DELETE_SLOT, key);
      this.#conn.run(q.DELETE_HOLD, key);
    });
  }

  async carry(run: string, period: string): Promise<void> {
    const params = { tenant: this.tenant, run: normaliseRunId('run', run), period: requirePeriodKey('period', period) };
    await this.#conn.write(() => carryHold(this.#conn, this.tenant, params.run, params.period));
  }

  async reservations(limit: number): Promise<Held[]> {
    const params = { tenant: this.tenant, limit: requireLimit('limit', limit) };
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
    const params = { tenant: this.tenant, period: requirePeriodKey('period', period) };
    const row = await this.#conn.read(() => this.#conn.get<{ tokens: number; minor_units: number }>(q.SUM_RESERVED, params));
    return decodeSpend(this.tenant, 'reserved spend', row?.tokens, row?.minor_units);
  }

  async setHalt(halt: Halt): Promise<void> {
    const valid = requireHalt('halt', halt);
    const params = {
      tenant: this.tenant,
      scope: haltScopeKey(valid.scope),
      reason: valid.reason,
      actor: valid.by.actor,
      basis: valid.by.basis,
      atMs: valid.atMs,
    };
    await this.#conn.write(() => this.#conn.run(q.UPSERT_HALT, params));
  }

  async liftHalt(scope: HaltScope): Promise<boolean> {
    const params = { tenant: this.tenant, scope: requireHaltScopeKey('scope', scope) };
    return this.#conn.write(() => this.#conn.run(q.DELETE_HALT, params) > 0);
  }

  async liftHaltIf(standing: Halt): Promise<boolean> {
    const valid = requireHalt('standing', standing);
    const params = { tenant: this.tenant, scope: haltScopeKey(valid.scope) };
    return this.#conn.write(() => {
      const row = this.#conn.get<HaltRow>(q.SELECT_HALT, params);
      // Decoding first: an unreadable row throws STORE_CORRUPT rather than being treated as different.
      if (row === undefined || !sameHalt(decodeHaltRow(this.tenant, row), valid)) return false;
      return this.#conn.run(q.DELETE_HALT, params) > 0;
    });
  }

  async halts(): Promise<Halt[]> {
    // readHalts answers a read-only array (inside a write, possibly the cache's frozen one); the caller gets its own.
    return this.#conn.read(() => [...readHalts(this.#conn, this.tenant)]);
  }

  async settle(settlement: QuotaSettlement): Promise<SettleOutcome> {
    const valid = requireSettlement('settlement', settlement);
    return this.#conn.write(() => settleInTransaction(this.#conn, this.tenant, valid));
  }

  async spent(period: string): Promise<Spend> {
    const params = { tenant: this.tenant, period: requirePeriodKey('period', period) };
    const row = await this.#conn.read(() => this.#conn.get<{ tokens: number; minor_units: number }>(q.SELECT_SPENT, params));
    return decodeSpend(this.tenant, 'settled spend', row?.tokens, row?.minor_units);
  }

  async running(): Promise<number> {
    const row = await this.#conn.read(() => this.#conn.get<{ running: number }>(q.COUNT_SLOTS, { tenant: this.tenant }));
    return Math.min(row?.running ?? 0, MAX_AMOUNT);
  }

  async runningRuns(limit: number): Promise<string[]> {
    const params = { tenant: this.tenant, limit: requireLimit('limit', limit) };
    const rows = await this.#conn.read(() => this.#conn.all<{ run_id: string }>(q.LIST_SLOTS, params));
    return rows.map((row) => decodeRunId(this.tenant, 'slot', row.run_id));
  }

  async reserveRate(reservation: RateReservation): Promise<RateOutcome> {
    const valid = requireRateReservation('reservation', reservation);
    return this.#conn.write(() => reserveRateInTransaction(this.#conn, this.tenant, valid));
  }

  async rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome> {
    const validGrant = requireIdentifier('grant', grant);
    const validCeilings = parseRateCeilings(ceilings, 'ceilings');
    const validAtMs = requireInstantMs('atMs', atMs);
    const refusal = await this.#conn.read(() => judgeRate(this.#conn, this.tenant, validGrant, validCeilings, validAtMs));
    return refusal === null ? { ok: true } : { ok: false, refusal };
  }

  // ── tenant configuration ──────────────────────────────────────────────────

  async getQuota(): Promise<TenantQuota | null> {
    return this.#conn.read(() => readStoredQuota(this.#conn, this.tenant));
  }

  async setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void> {
    const valid = parseQuota(quota, 'quota');
    const entry = requireAuditEntry('audit', audit);
    const params = { tenant: this.tenant, quotaJson: JSON.stringify(valid) };
    await this.#freeing(entry.atMs, () => {
      this.#conn.run(q.UPSERT_QUOTA, params);
      appendAuditInTransaction(this.#conn, this.tenant, entry);
    });
  }

  async agentUsage(agents: readonly string[], period: string): Promise<AgentUsage[]> {
    const names = requireAgentNames('agents', agents);
    const validPeriod = requirePeriodKey('period', period);
    return this.#conn.read(() =>
      names.map((agent) => {
        const params = { tenant: this.tenant, agent, period: validPeriod };
        const running = this.#conn.get<{ running: number }>(q.COUNT_AGENT_SLOTS, params)?.running ?? 0;
        const settled = this.#conn.get<{ tokens: number; minor_units: number }>(q.SELECT_AGENT_SPENT, params);
        const figures = this.#conn.get<{ reserved_tokens: number; reserved_minor_units: number }>(q.SELECT_AGENT_PERIOD_FIGURES, params);
        return {
          agent,
          running: Math.min(running, MAX_AMOUNT),
          period: validPeriod,
          settled: decodeSpend(this.tenant, 'settled spend', settled?.tokens, settled?.minor_units),
          reserved: decodeSpend(this.tenant, 'reserved spend', figures?.reserved_tokens, figures?.reserved_minor_units),
        };
      }),
    );
  }

  // ── run lifecycle ─────────────────────────────────────────────────────────

  async admit(request: AdmitRequest): Promise<AdmitOutcome> {
    const valid = requireAdmitRequest(request);
    return this.#granting(() => admitInTurnInTransaction(this.#conn, this.tenant, atApply('admission', valid)));
  }

  async resume(request: ResumeRequest): Promise<ResumeOutcome> {
    const valid = requireResumeRequest(request);
    return this.#conn.write(() => resumeInTransaction(this.#conn, this.tenant, atApply('resume', valid)));
  }

  async settlePass(request: SettlePassRequest): Promise<SettlePassOutcome> {
    const valid = requireSettlePassRequest(request);
    return this.#granting(() => {
      const applied = atApply('settle', valid);
      const outcome = settlePassInTransaction(this.#conn, this.tenant, applied);
      return { outcome, granted: grantWaitersInTransaction(this.#conn, this.tenant, applied.atMs) };
    });
  }

  async dispatch(request: DispatchRequest): Promise<DispatchOutcome> {
    const valid = requireDispatchRequest(request);
    return this.#conn.write(() => dispatchInTransaction(this.#conn, this.tenant, atApply('dispatch', valid)));
  }

  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome> {
    const valid = requireHeartbeatRequest(request);
    return this.#conn.write(() => heartbeatInTransaction(this.#conn, this.tenant, atApply('heartbeat', valid)));
  }

  async getRun(run: string): Promise<RunRecord | null> {
    const params = { tenant: this.tenant, run: normaliseRunId('run', run) };
    const row = await this.#conn.read(() => this.#conn.get<RunRow>(q.SELECT_RUN, params));
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  // ── sweep, listings and operator acts ─────────────────────────────────────

  async runs(request: RunListRequest): Promise<RunSummary[]> {
    const valid = requireRunListRequest(request);
    return this.#conn.read(() => listRuns(this.#conn, this.tenant, valid));
  }

  async lapsedRuns(request: { atMs: number; after?: string | undefined; limit: number }): Promise<string[]> {
    const valid = requireLapsedRunsRequest(request);
    return this.#conn.read(() => listLapsedRuns(this.#conn, this.tenant, valid));
  }

  async sweepRun(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
    const valid = requireSweepRunRequest(request);
    return this.#granting(() => {
      const applied = atApply('sweep', valid);
      const outcome = sweepRunInTransaction(this.#conn, this.tenant, applied);
      return { outcome, granted: grantWaitersInTransaction(this.#conn, this.tenant, applied.atMs) };
    });
  }

  async unsettledPasses(request: { atMs: number; limit: number }): Promise<PassRecord[]> {
    const valid = requireUnsettledPassesRequest(request);
    return this.#conn.read(() => listUnsettledPasses(this.#conn, this.tenant, valid));
  }

  async idleHolds(request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]> {
    const valid = requireIdleHoldsRequest(request);
    return this.#conn.read(() => listIdleHolds(this.#conn, this.tenant, valid));
  }

  async overranPasses(request: { limit: number }): Promise<OverranPass[]> {
    const params = { tenant: this.tenant, limit: requireLimit('limit', requireObject('request', request).limit) };
    const rows = await this.#conn.read(() => this.#conn.all<OverranRow>(OVERRAN_PASSES, params));
    return rows.map((row) => decodeOverran(this.tenant, row));
  }

  async releaseRun(request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
    const valid = requireReleaseRunRequest(request);
    return this.#freeing(valid.atMs, () => releaseRunInTransaction(this.#conn, this.tenant, valid));
  }

  // ── waiting admissions ────────────────────────────────────────────────────

  async admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    const valid = requireAdmitRequest(request);
    const terms = requireWaitTerms(wait);
    return this.#granting(() => admitOrWaitInTransaction(this.#conn, this.tenant, atApply('admission', valid), terms));
  }

  async collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    const valid = requireAdmitRequest(request);
    const terms = requireWaitTerms(wait);
    return this.#granting(() => collectWaiterInTransaction(this.#conn, this.tenant, atApply('admission', valid), terms));
  }

  async cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome> {
    const valid = requireCancelWaiterRequest(request);
    return this.#granting(() => cancelWaiterInTransaction(this.#conn, this.tenant, atApply('cancel', valid)));
  }

  async sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep> {
    const valid = requireSweepWaitersRequest(request);
    return this.#granting(() => sweepWaitersInTransaction(this.#conn, this.tenant, atApply('sweep', valid).atMs));
  }

  async waitQueue(request: { atMs: number }): Promise<WaitQueue> {
    const atMs = requireInstantMs('atMs', requireObject('request', request).atMs);
    return this.#conn.read(() => readWaitQueue(this.#conn, this.tenant, atMs));
  }

  // ── retention ─────────────────────────────────────────────────────────────

  async prunableRuns(request: PrunableRunsRequest): Promise<PrunableRunsPage> {
    const valid = requirePrunableRunsRequest(request);
    return this.#conn.read(() => listPrunableRuns(this.#conn, this.tenant, valid));
  }

  async pruneRuns(request: PruneRunsRequest): Promise<PrunedRuns> {
    const valid = requirePruneRunsRequest(request);
    return this.#conn.write(() => pruneRunsInTransaction(this.#conn, this.tenant, valid));
  }

  async pruneRate(request: PruneRateRequest): Promise<PrunedRate> {
    const valid = requirePruneRateRequest(request);
    return this.#conn.write(() => pruneRateInTransaction(this.#conn, this.tenant, valid));
  }

  async countPrunableRate(request: { atOrBeforeMs: number }): Promise<number> {
    const atOrBeforeMs = requireInstantMs('atOrBeforeMs', requireObject('request', request).atOrBeforeMs);
    return this.#conn.read(() => countPrunableRate(this.#conn, this.tenant, atOrBeforeMs));
  }

  // ── audit log ─────────────────────────────────────────────────────────────

  async appendAudit(entry: AuditEntry): Promise<AuditRecord> {
    const valid = requireAuditEntry('entry', entry);
    return this.#conn.write(() => appendAuditInTransaction(this.#conn, this.tenant, valid));
  }

  async auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]> {
    const record = requireObject('options', options);
    const limit = requireLimit('limit', record.limit);
    const action = record.action === undefined ? undefined : requireIdentifier('action', record.action);
    const rows = await this.#conn.read(() =>
      action === undefined
        ? this.#conn.all<AuditRow>(q.LIST_AUDIT, { tenant: this.tenant, limit })
        : this.#conn.all<AuditRow>(q.LIST_AUDIT_BY_ACTION, { tenant: this.tenant, limit, action }),
    );
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  async auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]> {
    const valid = requireAuditChainRequest(request);
    const rows = await this.#conn.read(() => this.#conn.all<AuditRow>(LIST_AUDIT_CHAIN, { tenant: this.tenant, ...valid }));
    return rows.map((row) => decodeAudit(this.tenant, row));
  }
}
