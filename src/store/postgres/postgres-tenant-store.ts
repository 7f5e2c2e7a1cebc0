import { MAX_AMOUNT } from '../../core/amounts.js';
import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import { normaliseRunId, requireIdentifier } from '../../core/identifiers.js';
import { parseQuota, parseRateCeilings, parseStoredQuota, type TenantQuota } from '../../core/quota.js';
import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import { decodeHaltRow, type HaltRow } from '../halt-rows.js';
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
import { requireAgentNames } from '../store-arguments.js';
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
} from '../store-arguments.js';
import { decodeOverran, type OverranRow } from '../overran-passes.js';
import type {
  AppliedInstant,
  AgentUsage,
  AdmitOutcome,
  AdmitRequest,
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
import { decodeAudit, decodeRun, decodeRunId, decodeSpend, type AuditRow, type RunRow } from '../rows.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import type { PostgresBatcher } from './postgres-batcher.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import * as lifecycle from './postgres-lifecycle.js';
import * as operator from './postgres-operator.js';
import * as retention from './postgres-retention.js';
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
import { decisionMismatch, spentOut, tooManyRuns, type RateFigures, type ReserveFigures } from './postgres-outcomes.js';
import type { PostgresQueries } from './postgres-queries.js';
import { decodeQuota } from './postgres-rows.js';
import * as waiters from './postgres-waiters.js';
import { requireWaitTerms, type CancelOutcome, type WaitOutcome, type WaitQueue, type WaiterSweep, type WaitTerms } from '../waiters.js';

interface SpendRow {
  readonly tokens: number;
  readonly minor_units: number;
}

interface RateRow extends RateFigures {
  readonly outcome: string;
}

/**
 * One tenant's handle on a PostgreSQL store (store.ts `TenantStore`). Every method validates its
 * arguments first (`INVALID_ARGUMENT` naming the field, the same shared validators as SQLite),
 * then runs as one transaction. The hot operations (`admit`, `reserve`, `settle`, `settlePass`,
 * `resume`, `reserveRate`, `dispatch`, `heartbeat`, `sweepRun`) are one call of a server-side
 * function, sent through the store's batcher (concurrent calls share one round trip and one
 * transaction), decided inside the database under the tenant's locks, with refusal values
 * rebuilt from the returned figures by the pure functions of `core/`. Every statement is keyed by
 * `tenant`.
 */
export class PostgresTenantStore implements TenantStore {
  readonly tenant: string;
  readonly #db: PostgresConnection;
  readonly #q: PostgresQueries;
  readonly #batch: PostgresBatcher;
  readonly #context: LifecycleContext;

  /** Use `PostgresQuotaStore.tenant()`; `tenant` must already be a validated identifier. */
  constructor(db: PostgresConnection, queries: PostgresQueries, batch: PostgresBatcher, tenant: string) {
    this.#db = db;
    this.#q = queries;
    this.#batch = batch;
    this.tenant = tenant;
    this.#context = { db, q: queries, batch, tenant };
  }

  // ── store primitives (the C cases) ────────────────────────────────────────

  async reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome> {
    const record = requireObject('request', request);
    const run = normaliseRunId('run', record.run);
    const quota = parseStoredQuota(record.quota, 'quota');
    const hold = requireSpendHold('hold', record.hold);
    const atMs = requireInstantMs('atMs', record.atMs);
    const row = await this.#batch.decide<(ReserveFigures & { outcome: string }) | undefined>(
      'reserve',
      [
        this.tenant,
        run,
        quota.maxConcurrentRuns ?? null,
        hold?.period ?? null,
        hold?.amount.tokens ?? 0,
        hold?.amount.minorUnits ?? 0,
        quota.maxTokensPerPeriod ?? null,
        quota.maxMinorUnitsPerPeriod ?? null,
        atMs,
        null,
        null,
        null,
        null,
      ],
    );
    switch (row?.outcome) {
      case 'ok':
        return { ok: true };
      case 'too-many-runs':
        return { ok: false, refusal: tooManyRuns(this.tenant, quota, row) };
      case 'spent-out':
        if (hold === null) throw decisionMismatch('reserve', 'spend refused without a hold');
        return { ok: false, refusal: spentOut(this.tenant, quota, hold.period, hold.amount, row) };
      default:
        throw decisionMismatch('reserve', `unknown outcome ${String(row?.outcome)}`);
    }
  }

  async release(run: string): Promise<void> {
    const key = [this.tenant, normaliseRunId('run', run)];
    // Hold before slot, the order every settle takes them in, so the two never deadlock.
    await this.#db.transaction(async (tx) => {
      await tx.run(this.#q.deleteHold, key);
      await tx.run(this.#q.deleteSlot, key);
    });
  }

  async carry(run: string, period: string): Promise<void> {
    await this.#db.run(this.#q.carryHold, [this.tenant, normaliseRunId('run', run), requirePeriodKey('period', period)]);
  }

  async reservations(limit: number): Promise<Held[]> {
    const rows = await this.#db.rows<SpendRow & { run_id: string; period: string }>(this.#q.listHolds, [
      this.tenant,
      requireLimit('limit', limit),
    ]);
    return rows.map((row) => ({
      run: decodeRunId(this.tenant, 'hold', row.run_id),
      period: row.period,
      remaining: decodeSpend(this.tenant, 'the hold table', row.tokens, row.minor_units),
    }));
  }

  async reserved(period: string): Promise<Spend> {
    const row = await this.#db.row<SpendRow>(this.#q.sumReserved, [this.tenant, requirePeriodKey('period', period)], 'sum-reserved');
    return decodeSpend(this.tenant, 'reserved spend', row?.tokens, row?.minor_units);
  }

  async setHalt(halt: Halt): Promise<void> {
    const valid = requireHalt('halt', halt);
    await this.#db.run(this.#q.upsertHalt, [
      this.tenant,
      haltScopeKey(valid.scope),
      valid.reason,
      valid.by.actor,
      valid.by.basis,
      valid.atMs,
    ]);
  }

  async liftHalt(scope: HaltScope): Promise<boolean> {
    return (await this.#db.run(this.#q.deleteHalt, [this.tenant, requireHaltScopeKey('scope', scope)])) > 0;
  }

  async liftHaltIf(standing: Halt): Promise<boolean> {
    const valid = requireHalt('standing', standing);
    const scope = haltScopeKey(valid.scope);
    const removed = await this.#db.run(this.#q.deleteHaltIfSame, [
      this.tenant,
      scope,
      valid.reason,
      valid.by.actor,
      valid.by.basis,
      valid.atMs,
    ]);
    if (removed > 0) return true;
    // Nothing deleted: a row still standing on the scope is another halt, but it must at least be
    // readable, as in every other read of halts (an unreadable row is corrupt, never skipped).
    const row = await this.#db.row<HaltRow>(this.#q.selectHalt, [this.tenant, scope]);
    if (row !== undefined) decodeHaltRow(this.tenant, row);
    return false;
  }

  async halts(): Promise<Halt[]> {
    const rows = await this.#db.rows<HaltRow>(this.#q.listHalts, [this.tenant], 'list-halts');
    return rows.map((row) => decodeHaltRow(this.tenant, row));
  }

  async settle(settlement: QuotaSettlement): Promise<SettleOutcome> {
    const s = requireSettlement('settlement', settlement);
    const row = await this.#batch.decide<{ outcome: string } | undefined>('settle', [
      this.tenant,
      s.run,
      s.epoch,
      s.period,
      s.spend.tokens,
      s.spend.minorUnits,
      s.releaseSlot,
      s.concludes,
    ]);
    if (row?.outcome === 'pruned') await retention.refuseIfPruned(this.#context, s.run, 'settle');
    return lifecycle.settleOutcome(this.tenant, row?.outcome, s.run, s.epoch);
  }

  async spent(period: string): Promise<Spend> {
    const row = await this.#db.row<SpendRow>(this.#q.selectSpent, [this.tenant, requirePeriodKey('period', period)], 'spent');
    return decodeSpend(this.tenant, 'settled spend', row?.tokens, row?.minor_units);
  }

  async running(): Promise<number> {
    const row = await this.#db.row<{ running: number }>(this.#q.countSlots, [this.tenant], 'count-slots');
    return Math.min(row?.running ?? 0, MAX_AMOUNT);
  }

  async runningRuns(limit: number): Promise<string[]> {
    const rows = await this.#db.rows<{ run_id: string }>(this.#q.listSlots, [this.tenant, requireLimit('limit', limit)]);
    return rows.map((row) => decodeRunId(this.tenant, 'slot', row.run_id));
  }

  async reserveRate(reservation: RateReservation): Promise<RateOutcome> {
    const r = requireRateReservation('reservation', reservation);
    const row = await this.#batch.decide<RateRow | undefined>(
      'reserveRate',
      [
        this.tenant,
        r.grant,
        r.run,
        r.dispatch,
        r.ceilings.map((ceiling) => ceiling.count),
        r.ceilings.map((ceiling) => ceiling.windowSeconds),
        r.atMs,
        r.exempt,
      ],
    );
    return lifecycle.rateOutcome(this.tenant, row, r.grant, r.ceilings, r.atMs);
  }

  async rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome> {
    const validGrant = requireIdentifier('grant', grant);
    const validCeilings = parseRateCeilings(ceilings, 'ceilings');
    const validAtMs = requireInstantMs('atMs', atMs);
    const row = await this.#db.row<RateRow>(
      this.#q.judgeRate,
      [
        this.tenant,
        validGrant,
        validCeilings.map((ceiling) => ceiling.count),
        validCeilings.map((ceiling) => ceiling.windowSeconds),
        validAtMs,
      ],
      'judge-rate',
    );
    return lifecycle.rateOutcome(this.tenant, row, validGrant, validCeilings, validAtMs);
  }

  // ── tenant configuration ──────────────────────────────────────────────────

  async getQuota(): Promise<TenantQuota | null> {
    const row = await this.#db.row<{ quota_json: unknown }>(this.#q.selectQuota, [this.tenant]);
    return row === undefined ? null : decodeQuota(this.tenant, row.quota_json);
  }

  async setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void> {
    const valid = parseQuota(quota, 'quota');
    const entry = requireAuditEntry('audit', audit);
    await this.#db.transaction(async (tx) => {
      // A raised ceiling admits the tenant's waiters in this transaction.
      await tx.rows(this.#q.waiters.lockTenant, [this.tenant]);
      await tx.run(this.#q.upsertQuota, [this.tenant, JSON.stringify(valid)]);
      await appendAuditInTransaction(tx, this.#q, this.tenant, entry);
      await tx.rows(this.#q.waiters.grantWaiters, [this.tenant, entry.atMs]);
    });
  }

  async agentUsage(agents: readonly string[], period: string): Promise<AgentUsage[]> {
    const names = requireAgentNames('agents', agents);
    const validPeriod = requirePeriodKey('period', period);
    if (names.length === 0) return [];
    const rows = await this.#db.rows<{
      agent: string;
      running: number | null;
      tokens: number | null;
      minor_units: number | null;
      held_tokens: number | null;
      held_minor_units: number | null;
    }>(this.#q.agentUsage, [this.tenant, names, validPeriod]);
    const byAgent = new Map(rows.map((row) => [row.agent, row]));
    return names.map((agent) => {
      const row = byAgent.get(agent);
      return {
        agent,
        running: Number(row?.running ?? 0),
        period: validPeriod,
        settled: decodeSpend(this.tenant, 'settled spend', row?.tokens ?? 0, row?.minor_units ?? 0),
        reserved: decodeSpend(this.tenant, 'reserved spend', row?.held_tokens ?? 0, row?.held_minor_units ?? 0),
      };
    });
  }

  // ── run lifecycle ─────────────────────────────────────────────────────────

  async admit(request: AdmitRequest): Promise<AdmitOutcome> {
    return lifecycle.admit(this.#context, requireAdmitRequest(request));
  }

  async resume(request: ResumeRequest): Promise<ResumeOutcome> {
    return lifecycle.resume(this.#context, requireResumeRequest(request));
  }

  async settlePass(request: SettlePassRequest): Promise<SettlePassOutcome> {
    return lifecycle.settlePass(this.#context, requireSettlePassRequest(request));
  }

  async dispatch(request: DispatchRequest): Promise<DispatchOutcome> {
    return lifecycle.dispatch(this.#context, requireDispatchRequest(request));
  }

  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome> {
    return lifecycle.heartbeat(this.#context, requireHeartbeatRequest(request));
  }

  async getRun(run: string): Promise<RunRecord | null> {
    const row = await this.#db.row<RunRow>(this.#q.selectRun, [this.tenant, normaliseRunId('run', run)]);
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  // ── sweep, listings and operator acts ─────────────────────────────────────

  async runs(request: RunListRequest): Promise<RunSummary[]> {
    return operator.listRuns(this.#context, requireRunListRequest(request));
  }

  async lapsedRuns(request: { atMs: number; after?: string | undefined; limit: number }): Promise<string[]> {
    return operator.listLapsedRuns(this.#context, requireLapsedRunsRequest(request));
  }

  async sweepRun(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
    return operator.sweepRun(this.#context, requireSweepRunRequest(request));
  }

  async unsettledPasses(request: { atMs: number; limit: number }): Promise<PassRecord[]> {
    return operator.listUnsettledPasses(this.#context, requireUnsettledPassesRequest(request));
  }

  async idleHolds(request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]> {
    return operator.listIdleHolds(this.#context, requireIdleHoldsRequest(request));
  }

  async overranPasses(request: { limit: number }): Promise<OverranPass[]> {
    const limit = requireLimit('limit', requireObject('request', request).limit);
    const { db, q, tenant } = this.#context;
    const rows = await db.rows<OverranRow>(q.overranPasses, [tenant, limit]);
    return rows.map((row) => decodeOverran(tenant, row));
  }

  async releaseRun(request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
    return operator.releaseRun(this.#context, requireReleaseRunRequest(request));
  }

  // ── waiting admissions ────────────────────────────────────────────────────

  async admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return waiters.admitOrWait(this.#context, this.#q.waiters, requireAdmitRequest(request), requireWaitTerms(wait));
  }

  async collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return waiters.collectWaiter(this.#context, this.#q.waiters, requireAdmitRequest(request), requireWaitTerms(wait));
  }

  async cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome> {
    return waiters.cancelWaiter(this.#context, this.#q.waiters, requireCancelWaiterRequest(request));
  }

  async sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep> {
    return waiters.sweepWaiters(this.#context, this.#q.waiters, requireSweepWaitersRequest(request));
  }

  async waitQueue(request: { atMs: number }): Promise<WaitQueue> {
    const atMs = requireInstantMs('atMs', requireObject('request', request).atMs);
    return waiters.readWaitQueue(this.#context, this.#q.waiters, atMs);
  }

  // ── retention ─────────────────────────────────────────────────────────────

  async prunableRuns(request: PrunableRunsRequest): Promise<PrunableRunsPage> {
    return retention.listPrunableRuns(this.#context, requirePrunableRunsRequest(request));
  }

  async pruneRuns(request: PruneRunsRequest): Promise<PrunedRuns> {
    return retention.pruneRuns(this.#context, requirePruneRunsRequest(request));
  }

  async pruneRate(request: PruneRateRequest): Promise<PrunedRate> {
    return retention.pruneRate(this.#context, requirePruneRateRequest(request));
  }

  async countPrunableRate(request: { atOrBeforeMs: number }): Promise<number> {
    const atOrBeforeMs = requireInstantMs('atOrBeforeMs', requireObject('request', request).atOrBeforeMs);
    return retention.countPrunableRate(this.#context, atOrBeforeMs);
  }

  // ── audit log ─────────────────────────────────────────────────────────────

  async appendAudit(entry: AuditEntry): Promise<AuditRecord> {
    const valid = requireAuditEntry('entry', entry);
    return this.#db.transaction((tx) => appendAuditInTransaction(tx, this.#q, this.tenant, valid));
  }

  async auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]> {
    const record = requireObject('options', options);
    const limit = requireLimit('limit', record.limit);
    const action = record.action === undefined ? undefined : requireIdentifier('action', record.action);
    const rows =
      action === undefined
        ? await this.#db.rows<AuditRow>(this.#q.listAudit, [this.tenant, limit])
        : await this.#db.rows<AuditRow>(this.#q.listAuditByAction, [this.tenant, limit, action]);
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  async auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]> {
    const valid = requireAuditChainRequest(request);
    const rows = await this.#db.rows<AuditRow>(this.#q.listAuditChain, [this.tenant, valid.afterSeq, valid.limit]);
    return rows.map((row) => decodeAudit(this.tenant, row));
  }
}
