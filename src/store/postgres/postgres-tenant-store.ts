import { MAX_AMOUNT } from '../../core/amounts.js';
import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import type { TenantQuota } from '../../core/quota.js';
import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import { decodeHaltRow, sameHalt, type HaltRow } from '../halt-rows.js';
import type { TenantStore } from '../store.js';
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
import { deleteTenant } from './postgres-tenant-deletion.js';
import type { DeleteTenantOutcome, DeleteTenantRequest } from '../port/tenant-deletion.js';
import type { PostgresBatcher } from './postgres-batcher.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import * as lifecycle from './postgres-lifecycle.js';
import type { PostgresTenantBooks } from './postgres-tenant-books.js';
import { reserveOnBooks } from '../../core/lifecycle/reserve.js';
import { carryHold } from '../../core/lifecycle/hold-moves.js';
import { decideSettle } from '../../core/lifecycle/receipts.js';
import { judgeRate, reserveRate } from '../../core/lifecycle/rate-decision.js';
import { grantWaiters } from '../../core/lifecycle/waiting.js';
import { alertOnQuota, alertOnStoredQuota } from '../../core/lifecycle/spend-alerts.js';
import { haltLiftedEvent, haltSetEvent, type HaltLift } from '../../core/run-events.js';
import { appendEventsInTransaction } from './postgres-events.js';
import { decideNow } from './postgres-batcher.js';
import * as operator from './postgres-operator.js';
import * as retention from './postgres-retention.js';
import type { PrunableRunsPage, PrunableRunsRequest, PrunedRate, PrunedRuns, PruneRateRequest, PruneRunsRequest } from '../retention.js';
import type { PostgresQueries } from './postgres-queries.js';
import { decodeQuota } from './postgres-rows.js';
import * as waiters from './postgres-waiters.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../waiters.js';

interface SpendRow {
  readonly tokens: number;
  readonly minor_units: number;
}

/**
 * One tenant's handle on a PostgreSQL store (store.ts `TenantStore`). It checks no argument:
 * `openStore` answers it wrapped in `validated()` (validated-store.ts), and the plane validates
 * before it calls. Every method runs as one transaction. The hot operations (`admit`, `reserve`, `settle`, `settlePass`,
 * `resume`, `reserveRate`, `dispatch`, `heartbeat`, `sweepRun`) go through the store's batcher
 * (postgres-batcher.ts: concurrent calls share one transaction), which loads the rows under the
 * tenant's lock and lets `core/lifecycle/` decide on them in memory before writing what changed.
 * Every statement is keyed by `tenant`.
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

  // One decision of core on this tenant's books, in a batch of the store's batcher.
  #decide<T>(name: string, atMs: number, run: string | undefined, decide: (books: PostgresTenantBooks, atMs: number) => T): Promise<T> {
    return this.#batch.decide(run === undefined ? { tenant: this.tenant, name, atMs, decide } : { tenant: this.tenant, name, atMs, run, decide });
  }

  async reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome> {
    const input = { run: request.run, agent: null, quota: request.quota, hold: request.hold ?? null, atMs: request.atMs };
    return this.#decide('reservation', request.atMs, request.run, (books) => reserveOnBooks(books, input));
  }

  async release(run: string): Promise<void> {
    await this.#decide('release', 0, run, (books) => {
      books.giveSlot(run);
      books.dropHold(run);
    });
  }

  async carry(run: string, period: string): Promise<void> {
    await this.#decide('carry', 0, run, (books) => carryHold(books, run, period));
  }

  async reservations(limit: number): Promise<Held[]> {
    const rows = await this.#db.rows<SpendRow & { run_id: string; period: string }>(this.#q.listHolds, [
      this.tenant,
      limit,
    ]);
    return rows.map((row) => ({
      run: decodeRunId(this.tenant, 'hold', row.run_id),
      period: row.period,
      remaining: decodeSpend(this.tenant, 'the hold table', row.tokens, row.minor_units),
    }));
  }

  async reserved(period: string): Promise<Spend> {
    const row = await this.#db.row<SpendRow>(this.#q.sumReserved, [this.tenant, period], 'sum-reserved');
    return decodeSpend(this.tenant, 'reserved spend', row?.tokens, row?.minor_units);
  }

  // Halts change under the tenant's lock, which raises its books' version: an instance deciding on
  // the tenant's rows kept from an earlier batch hears of the change (migrations/0001_quotaplane.sql).
  async setHalt(halt: Halt): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.rows(this.#q.lockTenant, [this.tenant]);
      await tx.run(this.#q.upsertHalt, [this.tenant, haltScopeKey(halt.scope), halt.reason, halt.by.actor, halt.by.basis, halt.atMs, halt.reachesRunning === true]);
      await appendEventsInTransaction(tx, this.#q, [haltSetEvent(this.tenant, halt)]);
    });
  }

  async liftHalt(scope: HaltScope, lift?: HaltLift): Promise<boolean> {
    return this.#liftUnderLock(scope, null, lift);
  }

  async liftHaltIf(standing: Halt, lift?: HaltLift): Promise<boolean> {
    return this.#liftUnderLock(standing.scope, standing, lift);
  }

  // Removes the halt of `scope` (only if it equals `expected`, when given) with its halt.lifted
  // event, under the tenant's lock. A row that stands must be readable, removed or not, as in every
  // other read of halts (an unreadable row is corrupt, never skipped).
  async #liftUnderLock(scope: HaltScope, expected: Halt | null, lift: HaltLift | undefined): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      await tx.rows(this.#q.lockTenant, [this.tenant]);
      const [row] = await tx.rows<HaltRow>(this.#q.selectHalt, [this.tenant, haltScopeKey(scope)]);
      if (row === undefined) return false;
      const standing = decodeHaltRow(this.tenant, row);
      if (expected !== null && !sameHalt(standing, expected)) return false;
      if ((await tx.run(this.#q.deleteHalt, [this.tenant, haltScopeKey(scope)])) === 0) return false;
      await appendEventsInTransaction(tx, this.#q, [haltLiftedEvent(this.tenant, standing, lift)]);
      return true;
    });
  }

  async halts(): Promise<Halt[]> {
    const rows = await this.#db.rows<HaltRow>(this.#q.listHalts, [this.tenant], 'list-halts');
    return rows.map((row) => decodeHaltRow(this.tenant, row));
  }

  async settle(settlement: QuotaSettlement): Promise<SettleOutcome> {
    return this.#decide('settle', 0, settlement.run, (books) => decideSettle(books, settlement, null));
  }

  async spent(period: string): Promise<Spend> {
    const row = await this.#db.row<SpendRow>(this.#q.selectSpent, [this.tenant, period], 'spent');
    return decodeSpend(this.tenant, 'settled spend', row?.tokens, row?.minor_units);
  }

  async running(): Promise<number> {
    const row = await this.#db.row<{ running: number }>(this.#q.countSlots, [this.tenant], 'count-slots');
    return Math.min(row?.running ?? 0, MAX_AMOUNT);
  }

  async runningRuns(limit: number): Promise<string[]> {
    const rows = await this.#db.rows<{ run_id: string }>(this.#q.listSlots, [this.tenant, limit]);
    return rows.map((row) => decodeRunId(this.tenant, 'slot', row.run_id));
  }

  async reserveRate(reservation: RateReservation): Promise<RateOutcome> {
    return this.#decide('rate reservation', reservation.atMs, reservation.run, (books) => reserveRate(books, this.tenant, reservation));
  }

  async rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome> {
    return this.#decide('rate judgement', atMs, undefined, (books): RateOutcome => {
      const refusal = judgeRate(books, this.tenant, grant, ceilings, atMs);
      return refusal === null ? { ok: true } : { ok: false, refusal };
    });
  }

  // ── tenant configuration ──────────────────────────────────────────────────

  async getQuota(): Promise<TenantQuota | null> {
    const row = await this.#db.row<{ quota_json: unknown }>(this.#q.selectQuota, [this.tenant]);
    return row === undefined ? null : decodeQuota(this.tenant, row.quota_json);
  }

  async setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void> {
    await this.#db.transaction(async (tx) => {
      // The plane ceiling's lock before the tenant's, in the order a batch takes them.
      await tx.rows(this.#q.sharePlaneCeiling, []);
      await tx.rows(this.#q.lockTenant, [this.tenant]);
      await tx.run(this.#q.upsertQuota, [this.tenant, JSON.stringify(quota)]);
      await appendAuditInTransaction(tx, this.#q, this.tenant, audit);
      // A raised ceiling admits the tenant's waiters in this transaction.
      const tenant = this.tenant;
      // The alerts the new quota fires at once are written with it (docs/design/rules.md#e5).
      await decideNow(tx, this.#q.books, {
        tenant,
        name: 'quota change',
        atMs: audit.atMs,
        queue: true,
        decide: (books, atMs, queues) => {
          alertOnQuota(books, quota, audit.atMs);
          return grantWaiters(queues, tenant, atMs);
        },
      });
    });
  }

  async agentUsage(agents: readonly string[], period: string): Promise<AgentUsage[]> {
    if (agents.length === 0) return [];
    const rows = await this.#db.rows<{
      agent: string;
      running: number | null;
      tokens: number | null;
      minor_units: number | null;
      held_tokens: number | null;
      held_minor_units: number | null;
    }>(this.#q.agentUsage, [this.tenant, agents, period]);
    const byAgent = new Map(rows.map((row) => [row.agent, row]));
    return agents.map((agent) => {
      const row = byAgent.get(agent);
      return {
        agent,
        running: Number(row?.running ?? 0),
        period,
        settled: decodeSpend(this.tenant, 'settled spend', row?.tokens ?? 0, row?.minor_units ?? 0),
        reserved: decodeSpend(this.tenant, 'reserved spend', row?.held_tokens ?? 0, row?.held_minor_units ?? 0),
      };
    });
  }

  // ── run lifecycle ─────────────────────────────────────────────────────────

  async admit(request: AdmitRequest): Promise<AdmitOutcome> {
    return lifecycle.admit(this.#context, request);
  }

  async resume(request: ResumeRequest): Promise<ResumeOutcome> {
    return lifecycle.resume(this.#context, request);
  }

  async settlePass(request: SettlePassRequest): Promise<SettlePassOutcome> {
    return lifecycle.settlePass(this.#context, request);
  }

  async dispatch(request: DispatchRequest): Promise<DispatchOutcome> {
    return lifecycle.dispatch(this.#context, request);
  }

  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome> {
    return lifecycle.heartbeat(this.#context, request);
  }

  async getRun(run: string): Promise<RunRecord | null> {
    const row = await this.#db.row<RunRow>(this.#q.selectRun, [this.tenant, run]);
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  // ── sweep, listings and operator acts ─────────────────────────────────────

  async runs(request: RunListRequest): Promise<RunSummary[]> {
    return operator.listRuns(this.#context, request);
  }

  async lapsedRuns(request: { atMs: number; after?: string | undefined; limit: number }): Promise<string[]> {
    return operator.listLapsedRuns(this.#context, request);
  }

  async sweepRun(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
    return operator.sweepRun(this.#context, request);
  }

  async unsettledPasses(request: { atMs: number; limit: number }): Promise<PassRecord[]> {
    return operator.listUnsettledPasses(this.#context, request);
  }

  async idleHolds(request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]> {
    return operator.listIdleHolds(this.#context, request);
  }

  async overranPasses(request: { limit: number }): Promise<OverranPass[]> {
    const { db, q, tenant } = this.#context;
    const rows = await db.rows<OverranRow>(q.overranPasses, [tenant, request.limit]);
    return rows.map((row) => decodeOverran(tenant, row));
  }

  async releaseRun(request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
    return operator.releaseRun(this.#context, request);
  }

  // ── waiting admissions ────────────────────────────────────────────────────

  async admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return waiters.admitOrWait(this.#context, request, wait);
  }

  async collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome> {
    return waiters.collectWaiter(this.#context, request, wait);
  }

  async cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome> {
    return waiters.cancelWaiter(this.#context, request);
  }

  async sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep> {
    return waiters.sweepWaiters(this.#context, request);
  }

  async waitQueue(request: { atMs: number }): Promise<WaitQueue> {
    return waiters.readWaitQueue(this.#context, request.atMs);
  }

  // ── retention ─────────────────────────────────────────────────────────────

  async prunableRuns(request: PrunableRunsRequest): Promise<PrunableRunsPage> {
    return retention.listPrunableRuns(this.#context, request);
  }

  async pruneRuns(request: PruneRunsRequest): Promise<PrunedRuns> {
    return retention.pruneRuns(this.#context, request);
  }

  async pruneRate(request: PruneRateRequest): Promise<PrunedRate> {
    return retention.pruneRate(this.#context, request);
  }

  async countPrunableRate(request: { atOrBeforeMs: number }): Promise<number> {
    return retention.countPrunableRate(this.#context, request.atOrBeforeMs);
  }

  // ── audit log ─────────────────────────────────────────────────────────────

  async appendAudit(entry: AuditEntry): Promise<AuditRecord> {
    return this.#db.transaction((tx) => appendAuditInTransaction(tx, this.#q, this.tenant, entry));
  }

  async auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]> {
    const { limit, action } = options;
    const rows =
      action === undefined
        ? await this.#db.rows<AuditRow>(this.#q.listAudit, [this.tenant, limit])
        : await this.#db.rows<AuditRow>(this.#q.listAuditByAction, [this.tenant, limit, action]);
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  async auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]> {
    const rows = await this.#db.rows<AuditRow>(this.#q.listAuditChain, [this.tenant, request.afterSeq, request.limit]);
    return rows.map((row) => decodeAudit(this.tenant, row));
  }

  // ── the tenant's deletion ─────────────────────────────────────────────────

  async alertNow(atMs: number): Promise<void> {
    await this.#db.transaction(async (tx) => {
      // The plane ceiling's lock before the tenant's, in the order a batch takes them.
      await tx.rows(this.#q.sharePlaneCeiling, []);
      await tx.rows(this.#q.lockTenant, [this.tenant]);
      await decideNow(tx, this.#q.books, {
        tenant: this.tenant,
        name: 'alerts',
        atMs,
        decide: (books) => alertOnStoredQuota(books, atMs),
      });
    });
  }

  async deleteTenant(request: DeleteTenantRequest): Promise<DeleteTenantOutcome> {
    return deleteTenant(this.#db, this.#q, this.tenant, request);
  }
}
