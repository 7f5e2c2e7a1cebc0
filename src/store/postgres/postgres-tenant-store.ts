import { MAX_AMOUNT } from '../../core/amounts.js';
import { QuotaError } from '../../core/errors.js';
import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import { normaliseRunId, requireIdentifier } from '../../core/identifiers.js';
import { periodKey } from '../../core/period.js';
import { parseQuota, parseRateCeilings, type TenantQuota } from '../../core/quota.js';
import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import { AUDIT_GENESIS_HASH, auditRowHash, canonicalJson } from '../audit-hash.js';
import { decodeHaltRow, type HaltRow } from '../halt-rows.js';
import {
  requireAdmitRequest,
  requireAuditEntry,
  requireDispatchRequest,
  requireResumeRequest,
  requireSettlePassRequest,
} from '../lifecycle-arguments.js';
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
} from '../store-arguments.js';
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
} from '../types.js';
import type { PostgresConnection, TransactionClient } from './postgres-connection.js';
import {
  coveringScopeKeys,
  decisionMismatch,
  halted,
  quotaOf,
  rateRefusal,
  spentOut,
  tooManyRuns,
  unbounded,
  type ReserveFigures,
} from './postgres-outcomes.js';
import type { PostgresQueries } from './postgres-queries.js';
import {
  corrupt,
  decodeAudit,
  decodeOptionalSpend,
  decodeQuota,
  decodeRun,
  decodeRunId,
  decodeSpend,
  type AuditRow,
  type RunRow,
} from './postgres-rows.js';

interface SpendRow {
  readonly tokens: number;
  readonly minor_units: number;
}

interface AdmitRow extends ReserveFigures {
  readonly outcome: string;
  readonly run_status: string | null;
  readonly grant_period: string | null;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
  readonly lease_expires_at_ms: number | null;
  readonly max_runs: number | null;
  readonly limit_tokens: number | null;
  readonly limit_minor_units: number | null;
  readonly halts: unknown;
}

interface ResumeRow {
  readonly outcome: string;
  readonly grant_epoch: number | null;
  readonly grant_period: string | null;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
  readonly lease_expires_at_ms: number | null;
}

interface RateRow {
  readonly outcome: string;
  readonly instants: unknown;
}

interface DispatchRow extends RateRow {
  readonly configured_counts: readonly (string | number)[] | null;
  readonly configured_windows: readonly (string | number)[] | null;
}

/**
 * One tenant's handle on a PostgreSQL store (store.ts `TenantStore`). Every method validates its
 * arguments first (`INVALID_ARGUMENT` naming the field, the same shared validators as SQLite),
 * then runs as one transaction. The hot operations (`admit`, `reserve`, `settle`, `settlePass`,
 * `resume`, `reserveRate`, `dispatch`, `rateRoom`) are one call of a server-side function: one
 * round trip, decided inside the database under the locks of contract §7.1, with refusal values
 * rebuilt from the returned figures by the pure functions of `core/`. Every statement is keyed by
 * `tenant`.
 */
export class PostgresTenantStore implements TenantStore {
  readonly tenant: string;
  readonly #db: PostgresConnection;
  readonly #q: PostgresQueries;

  /** Use `PostgresQuotaStore.tenant()`; `tenant` must already be a validated identifier. */
  constructor(db: PostgresConnection, queries: PostgresQueries, tenant: string) {
    this.#db = db;
    this.#q = queries;
    this.tenant = tenant;
  }

  // ── contract §6 ────────────────────────────────────────────────────────────

  async reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome> {
    const record = requireObject('request', request);
    const run = normaliseRunId('run', record.run);
    const quota = parseQuota(record.quota, 'quota');
    const hold = requireSpendHold('hold', record.hold);
    const atMs = requireInstantMs('atMs', record.atMs);
    const row = await this.#db.row<ReserveFigures & { outcome: string }>(
      this.#q.reserve,
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
      ],
      'reserve',
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
    await this.#db.transaction(async (tx) => {
      await tx.run(this.#q.deleteSlot, key);
      await tx.run(this.#q.deleteHold, key);
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
    // readable, as in every other read of halts (contract §6.9: an unreadable row is corrupt).
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
    const row = await this.#db.row<{ outcome: string }>(
      this.#q.settle,
      [this.tenant, s.run, s.epoch, s.period, s.spend.tokens, s.spend.minorUnits, s.releaseSlot, s.concludes],
      'settle',
    );
    return this.#settleOutcome(row?.outcome, s.run, s.epoch);
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
    const row = await this.#db.row<RateRow>(
      this.#q.reserveRate,
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
      'reserve-rate',
    );
    return this.#rateOutcome(row, r.grant, r.ceilings, r.atMs);
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
    return this.#rateOutcome(row, validGrant, validCeilings, validAtMs);
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
      await tx.run(this.#q.upsertQuota, [this.tenant, JSON.stringify(valid)]);
      await this.#appendAudit(tx, entry);
    });
  }

  // ── run lifecycle ─────────────────────────────────────────────────────────

  async admit(request: AdmitRequest): Promise<AdmitOutcome> {
    const r = requireAdmitRequest(request);
    const given = r.quota;
    const row = await this.#db.row<AdmitRow>(
      this.#q.admit,
      [
        this.tenant,
        r.run,
        r.agent?.name ?? null,
        r.agent?.digest ?? null,
        r.chain === undefined ? null : JSON.stringify(r.chain),
        JSON.stringify(r.budget),
        r.budget.maxTokens ?? null,
        r.budget.maxCallTokens ?? null,
        r.budget.maxMinorUnits ?? null,
        r.budget.maxCallMinorUnits ?? null,
        r.width,
        r.atMs,
        r.leaseMs,
        periodKey('monthly', r.atMs),
        periodKey('daily', r.atMs),
        coveringScopeKeys({ agent: r.agent, chain: r.chain }),
        given !== undefined,
        given?.maxConcurrentRuns ?? null,
        given?.maxTokensPerPeriod ?? null,
        given?.maxMinorUnitsPerPeriod ?? null,
        given?.period ?? null,
      ],
      'admit',
    );
    if (row === undefined) throw decisionMismatch('admission', 'no answer');
    const quota = quotaOf(given?.period ?? 'monthly', row.max_runs, row.limit_tokens, row.limit_minor_units);
    switch (row.outcome) {
      case 'admitted':
      case 'existing':
        return this.#grant(r.run, 1, row);
      case 'concluded':
        throw concludedRun(this.tenant, r.run, 'be admitted again');
      case 'corrupt-status':
        throw corrupt(this.tenant, `run '${r.run}' with the unknown status ${JSON.stringify(row.run_status)}`);
      case 'first-pass-missing':
        throw corrupt(this.tenant, `run '${r.run}' registered without its first pass`);
      case 'halted':
        return { ok: false, refusal: halted(this.tenant, row.halts, { agent: r.agent, chain: r.chain }) };
      case 'unbounded':
        return { ok: false, refusal: unbounded(this.tenant, quota, r.budget, r.width) };
      case 'too-many-runs':
        return { ok: false, refusal: tooManyRuns(this.tenant, quota, row) };
      case 'spent-out': {
        const requested = decodeSpend(this.tenant, 'the requested hold', row.hold_tokens, row.hold_minor_units);
        return { ok: false, refusal: spentOut(this.tenant, quota, row.grant_period ?? '', requested, row) };
      }
      default:
        throw decisionMismatch('admission', `unknown outcome ${JSON.stringify(row.outcome)}`);
    }
  }

  async resume(request: ResumeRequest): Promise<PassGrant> {
    const r = requireResumeRequest(request);
    const row = await this.#db.row<ResumeRow>(
      this.#q.resume,
      [this.tenant, r.run, r.atMs, r.leaseMs, periodKey('monthly', r.atMs), periodKey('daily', r.atMs)],
      'resume',
    );
    switch (row?.outcome) {
      case 'resumed':
        return this.#grant(r.run, Number(row.grant_epoch), row);
      case 'not-found':
        throw new QuotaError('NOT_FOUND', `tenant '${this.tenant}' has no run '${r.run}' to resume; admit it first`, {
          details: { tenant: this.tenant, run: r.run },
        });
      case 'concluded':
        throw concludedRun(this.tenant, r.run, 'resume');
      case 'corrupt-status':
        throw corrupt(this.tenant, `run '${r.run}' with an unknown status`);
      default:
        throw decisionMismatch('resume', `unknown outcome ${String(row?.outcome)}`);
    }
  }

  async settlePass(request: SettlePassRequest): Promise<SettlePassOutcome> {
    const r = requireSettlePassRequest(request);
    const row = await this.#db.row<{ outcome: string; receipt_period: string | null; receipt_release_slot: boolean | null }>(
      this.#q.settlePass,
      [this.tenant, r.run, r.epoch, r.spend.tokens, r.spend.minorUnits, r.concludes, r.atMs],
      'settle-pass',
    );
    if (row?.outcome === 'not-found') {
      throw new QuotaError('NOT_FOUND', `tenant '${this.tenant}' has no pass ${r.run}/${r.epoch} to settle`, {
        details: { tenant: this.tenant, run: r.run, epoch: r.epoch },
      });
    }
    const outcome = this.#settleOutcome(row?.outcome, r.run, r.epoch);
    const receipt: QuotaSettlement = {
      run: r.run,
      epoch: r.epoch,
      period: row?.receipt_period ?? null,
      spend: r.spend,
      releaseSlot: row?.receipt_release_slot === true,
      concludes: r.concludes,
    };
    return { outcome, receipt };
  }

  async dispatch(request: DispatchRequest): Promise<RateOutcome> {
    const r = requireDispatchRequest(request);
    const row = await this.#db.row<DispatchRow>(
      this.#q.dispatch,
      [
        this.tenant,
        r.run,
        r.grant,
        r.dispatch,
        r.ceilings.map((ceiling) => ceiling.count),
        r.ceilings.map((ceiling) => ceiling.windowSeconds),
        r.atMs,
        r.exempt,
      ],
      'dispatch',
    );
    switch (row?.outcome) {
      case 'not-found':
        throw new QuotaError('NOT_FOUND', `tenant '${this.tenant}' has no run '${r.run}' to dispatch; admit it first`, {
          details: { tenant: this.tenant, run: r.run },
        });
      case 'concluded':
        throw concludedRun(this.tenant, r.run, 'dispatch');
      case 'corrupt-status':
        throw corrupt(this.tenant, `run '${r.run}' with an unknown status`);
      default: {
        // bigint[] arrives as strings; the CHECK on quota_json keeps each one a safe integer.
        const counts = (row?.configured_counts ?? []).map(Number);
        const windows = (row?.configured_windows ?? []).map(Number);
        const configured = counts.map((count, index) => ({ count, windowSeconds: windows[index] ?? Number.NaN }));
        return this.#rateOutcome(row, r.grant, [...r.ceilings, ...configured], r.atMs);
      }
    }
  }

  async getRun(run: string): Promise<RunRecord | null> {
    const row = await this.#db.row<RunRow>(this.#q.selectRun, [this.tenant, normaliseRunId('run', run)]);
    return row === undefined ? null : decodeRun(this.tenant, row);
  }

  // ── audit log ─────────────────────────────────────────────────────────────

  async appendAudit(entry: AuditEntry): Promise<AuditRecord> {
    const valid = requireAuditEntry('entry', entry);
    return this.#db.transaction((tx) => this.#appendAudit(tx, valid));
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

  // ── helpers ───────────────────────────────────────────────────────────────

  /**
   * Appends one audit row inside `tx`: appends of one tenant serialise on an advisory lock, then
   * the next sequence number chains to the previous row's hash (genesis for the first) with the
   * backend-neutral `auditRowHash`. `detail` is stored as canonical JSON, so the record returned
   * equals the one `auditLog` reads back and its hash verifies.
   */
  async #appendAudit(tx: TransactionClient, entry: AuditEntry): Promise<AuditRecord> {
    await tx.rows(this.#q.lockAudit, [this.tenant]);
    const [head] = await tx.rows<{ seq: number; hash: string }>(this.#q.selectAuditHead, [this.tenant]);
    const seq = (head?.seq ?? 0) + 1;
    const prevHash = head?.hash ?? AUDIT_GENESIS_HASH;
    const detailJson = canonicalJson(entry.detail);
    const detail = JSON.parse(detailJson) as Record<string, unknown>;
    const stored: AuditEntry = { atMs: entry.atMs, by: entry.by, action: entry.action, subject: entry.subject, detail };
    const hash = auditRowHash(this.tenant, seq, stored, prevHash);
    await tx.run(this.#q.insertAudit, [
      this.tenant,
      seq,
      entry.atMs,
      entry.by.actor,
      entry.by.basis,
      entry.action,
      entry.subject,
      detailJson,
      prevHash,
      hash,
    ]);
    return { seq, ...stored, hash };
  }

  #grant(
    run: string,
    epoch: number,
    row: { grant_period: string | null; hold_tokens: number | null; hold_minor_units: number | null; lease_expires_at_ms: number | null },
  ): PassGrant {
    if (row.grant_period === null || !Number.isSafeInteger(epoch) || !Number.isSafeInteger(row.lease_expires_at_ms)) {
      throw corrupt(this.tenant, `pass ${run}/${epoch} that cannot be read`);
    }
    return {
      ok: true,
      run,
      epoch,
      period: row.grant_period,
      hold: decodeOptionalSpend(this.tenant, `the hold of run '${run}'`, row.hold_tokens, row.hold_minor_units),
      leaseExpiresAtMs: row.lease_expires_at_ms as number,
    };
  }

  #settleOutcome(outcome: string | undefined, run: string, epoch: number): SettleOutcome {
    switch (outcome) {
      case 'settled':
      case 'already-settled':
        return outcome;
      case 'conflict':
        throw new QuotaError('CONFLICT', `quota pass ${run}/${epoch} was settled twice with different payloads`, {
          details: { tenant: this.tenant, run, epoch },
        });
      default:
        throw decisionMismatch('settle', `unknown outcome ${String(outcome)}`);
    }
  }

  #rateOutcome(row: RateRow | undefined, grant: string, ceilings: readonly RateCeiling[], atMs: number): RateOutcome {
    switch (row?.outcome) {
      case 'ok':
      case 'present':
        return { ok: true };
      case 'limited':
      case 'uncountable':
        return { ok: false, refusal: rateRefusal(this.tenant, grant, ceilings, row.instants, atMs) };
      default:
        throw decisionMismatch('rate', `unknown outcome ${String(row?.outcome)}`);
    }
  }
}

function concludedRun(tenant: string, run: string, verb: string): QuotaError {
  return new QuotaError('CONFLICT', `run '${run}' of tenant '${tenant}' has concluded, so it cannot ${verb}; start a new run`, {
    details: { tenant, run },
  });
}
