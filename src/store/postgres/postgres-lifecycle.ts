import { QuotaError } from '../../core/errors.js';
import { overrunOf } from '../../core/overrun.js';
import { periodKey } from '../../core/period.js';
import type { RateCeiling } from '../../core/rate.js';
import { agentCeilingsOf } from '../../core/quota.js';
import type { WithheldRefusal } from '../../core/refusal.js';
import { decodeHaltRow } from '../halt-rows.js';
import { closedRunError, fencePass, withheldBy } from '../../core/lifecycle/run-rules.js';
import type {
  AppliedInstant,
  AdmitOutcome,
  AdmitRequest,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  PassGrant,
  QuotaSettlement,
  RateOutcome,
  ResumeOutcome,
  ResumeRequest,
  RunStatus,
  SettleOutcome,
  SettlePassOutcome,
  SettlePassRequest,
} from '../types.js';
import { corrupt, decodeChain, decodeSpend } from '../rows.js';
import { answerRetry } from './postgres-admit-retry.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import { atApply } from '../applied-instant.js';
import type { AppliedDecision, PostgresBatcher } from './postgres-batcher.js';
import type { PostgresConnection, SqlValues } from './postgres-connection.js';
import {
  coveringScopeKeys,
  decisionMismatch,
  halted,
  quotaOf,
  rateRefusal,
  type RateFigures,
  spentOut,
  tooManyRuns,
  unbounded,
  type ReserveFigures,
} from './postgres-outcomes.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import { decodeOptionalSpend } from './postgres-rows.js';
import { refuseIfPruned } from './postgres-retention.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * The run-lifecycle composites on PostgreSQL (store.ts): each one
 * call of a server-side function (see `migrations/`), sent through the store's batcher so
 * concurrent decisions share one round trip and one transaction (postgres-batcher.ts), whose
 * outcome is turned here into the port's answer or fault with the shared rules of `core/` and
 * `core/lifecycle/run-rules.ts`. Only an operator's settle (`by`) is a TypeScript transaction, because its
 * audit row's hash is computed here.
 */

interface GrantColumns {
  /** The instant a decision asked without one was recorded at (`quota_batch`). */
  readonly applied_at_ms?: number | string | null;
  readonly grant_period: string | null;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
  readonly lease_expires_at_ms: number | null;
}

/** The row `quota_admit` answers. */
export interface AdmitRow extends ReserveFigures, GrantColumns {
  readonly outcome: string;
  readonly run_status: string | null;
  readonly max_runs: number | null;
  readonly limit_tokens: number | null;
  readonly limit_minor_units: number | null;
  readonly agent_max_runs: number | null;
  readonly agent_limit_tokens: number | null;
  readonly agent_limit_minor_units: number | null;
  readonly halts: unknown;
}

/** The facts a fenced or withheld answer was decided on (heartbeat, dispatch, resume). */
interface RunFacts {
  readonly outcome: string;
  readonly applied_at_ms?: number | string | null;
  readonly run_status: string | null;
  readonly last_epoch?: number | null;
  readonly pass_found?: boolean | null;
  readonly pass_settled_at_ms?: number | null;
  readonly chain_json: string | null;
  readonly halts: unknown;
}

interface ResumeRow extends RunFacts, GrantColumns {
  readonly grant_epoch: number | null;
}

interface HeartbeatRow extends RunFacts {
  readonly lease_expires_at_ms: number | null;
}

interface DispatchRow extends RunFacts, RateFigures {
  readonly configured_counts: readonly (string | number)[] | null;
  readonly configured_windows: readonly (string | number)[] | null;
}

interface SettlePassRow {
  readonly outcome: string;
  readonly receipt_period: string | null;
  readonly receipt_release_slot: boolean | null;
  readonly pass_hold_tokens: number | null;
  readonly pass_hold_minor_units: number | null;
}

/** The values `quota_admit` takes for admission `r` of `tenant`, in order (see `BATCHED_DECISIONS.admit`). */
export function admitValues(tenant: string, r: AdmitRequest): unknown[] {
  const given = r.quota;
  const givenAgent = given === undefined ? null : agentCeilingsOf(given, r.agent?.name ?? null);
  return [
    tenant,
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
    givenAgent?.maxConcurrentRuns ?? null,
    givenAgent?.maxTokensPerPeriod ?? null,
    givenAgent?.maxMinorUnitsPerPeriod ?? null,
  ];
}

/**
 * The values of a batched decision: made now for a request decided at its `atMs`, or when the batch
 * is sent for one asked without an instant (`applied`, docs/design/rules.md#l93; `at`, `month` and
 * `day` index the instant and its period keys among the values).
 */
function decisionValues(
  r: { readonly atMs: number; readonly applied?: AppliedInstant | undefined },
  values: (atMs: number) => SqlValues,
  at: number,
  keys: { month?: number; day?: number } = {},
): SqlValues | AppliedDecision {
  return r.applied === undefined ? values(r.atMs) : { askedAtMs: r.atMs, applied: r.applied, values, at, ...keys };
}

/** `r` at the instant its decision was recorded (`applied_at_ms` of the row), for reading its answer. */
function asApplied<R extends { readonly atMs: number }>(r: R, row: { readonly applied_at_ms?: number | string | null } | undefined): R {
  const at = row?.applied_at_ms;
  return at === undefined || at === null ? r : { ...r, atMs: Number(at) };
}

/** Admission (store.ts `admit`): see `quota_admit` in `migrations/` for the decision. */
export async function admit(context: LifecycleContext, r: AdmitRequest): Promise<AdmitOutcome> {
  const values = decisionValues(r, (atMs) => admitValues(context.tenant, { ...r, atMs }), 11, { month: 13, day: 14 });
  const row = await context.batch.decide<AdmitRow | undefined>('admit', values);
  return admitAnswer(context, asApplied(r, row), row);
}

/** The port's answer to admission `r` from the row `quota_admit` returned (committed already). */
export async function admitAnswer(context: LifecycleContext, r: AdmitRequest, row: AdmitRow | undefined): Promise<AdmitOutcome> {
  const { db, q, tenant } = context;
  const given = r.quota;
  const agent = r.agent?.name ?? null;
  if (row === undefined) throw decisionMismatch('admission', 'no answer');
  const agentCeilings =
    agent === null
      ? null
      : { name: agent, maxRuns: row.agent_max_runs, limitTokens: row.agent_limit_tokens, limitMinorUnits: row.agent_limit_minor_units };
  const quota = quotaOf(given?.period ?? 'monthly', row.max_runs, row.limit_tokens, row.limit_minor_units, agentCeilings);
  switch (row.outcome) {
    case 'admitted':
      return grant(tenant, r.run, 1, row);
    case 'existing':
    case 'closed':
      // A registered run id: answered from the books as they stand.
      return answerRetry(db, q.admitRetry, tenant, r);
    case 'first-pass-missing':
      throw corrupt(tenant, `run '${r.run}' registered without its first pass`);
    case 'pruned':
      await refuseIfPruned(context, r.run, 'be admitted again');
      throw decisionMismatch('admission', 'pruned, but the run has no tombstone');
    case 'halted':
      return { ok: false, refusal: halted(tenant, row.halts, { agent: r.agent, chain: r.chain }) };
    case 'unbounded':
      return { ok: false, refusal: unbounded(tenant, quota, r.budget, r.width, agent) };
    case 'too-many-runs':
      return { ok: false, refusal: tooManyRuns(tenant, quota, row, agent) };
    case 'spent-out': {
      const requested = decodeSpend(tenant, 'the requested hold', row.hold_tokens, row.hold_minor_units);
      return { ok: false, refusal: spentOut(tenant, quota, row.grant_period ?? '', requested, row, agent) };
    }
    default:
      throw decisionMismatch('admission', `unknown outcome ${JSON.stringify(row.outcome)}`);
  }
}

/** A resume (store.ts `resume`): see `quota_resume` in `migrations/`. */
export async function resume(context: LifecycleContext, r: ResumeRequest): Promise<ResumeOutcome> {
  const { batch, tenant } = context;
  const values = decisionValues(r, (atMs) => [tenant, r.run, atMs, r.leaseMs, periodKey('monthly', atMs), periodKey('daily', atMs)], 2, {
    month: 4,
    day: 5,
  });
  const row = await batch.decide<ResumeRow | undefined>('resume', values);
  if (row === undefined) throw decisionMismatch('resume', 'no answer');
  if (row.outcome === 'resumed') return grant(tenant, r.run, Number(row.grant_epoch), row);
  if (row.outcome === 'run-not-found') await refuseIfPruned(context, r.run, 'resume');
  const refusal = openRunFault(tenant, r.run, 'resume', row);
  return { ok: false, refusal };
}

/**
 * The end of a pass (store.ts `settlePass`): see `quota_settle_pass`. With `by` (an operator's
 * settle), the function runs inside a TypeScript transaction, under the tenant's admission lock as
 * a batch would run it, that also appends the `run.settle` audit row when the receipt is new.
 */
export async function settlePass(context: LifecycleContext, r: SettlePassRequest): Promise<SettlePassOutcome> {
  const { db, q, batch, tenant } = context;
  const values = (atMs: number): SqlValues => [tenant, r.run, r.epoch, r.spend.tokens, r.spend.minorUnits, r.concludes, atMs];
  const by = r.by;
  const row =
    by === undefined
      ? await batch.decide<SettlePassRow | undefined>('settlePass', decisionValues(r, values, 6))
      : await db.transaction(async (tx) => {
          // The tenant's admission lock before the run's row lock, the order of every batched
          // decision: a settle that gives a slot back grants the tenant's waiters, which takes that
          // lock, and taking it only then (holding the run row) deadlocked with a batch of the
          // tenant.
          await tx.rows(q.waiters.lockTenant, [tenant]);
          // Read once the lock is held.
          const atMs = atApply('settle', r).atMs;
          const [settled] = await tx.rows<SettlePassRow>(q.settlePass, values(atMs));
          if (settled?.outcome === 'settled') {
            await appendAuditInTransaction(tx, q, tenant, {
              atMs,
              by,
              action: 'run.settle' satisfies AuditAction,
              subject: r.run,
              detail: {
                epoch: r.epoch,
                period: settled.receipt_period,
                spend: { tokens: r.spend.tokens, minorUnits: r.spend.minorUnits },
                releaseSlot: settled.receipt_release_slot === true,
                concludes: r.concludes,
              },
            });
          }
          return settled;
        });
  if (row?.outcome === 'not-found' || row?.outcome === 'run-missing' || row?.outcome === 'pruned') {
    // Nothing was written: a pass or run that is gone may have been pruned.
    await refuseIfPruned(context, r.run, 'settle');
  }
  if (row?.outcome === 'not-found') {
    throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no pass ${r.run}/${r.epoch} to settle`, {
      details: { tenant, run: r.run, epoch: r.epoch },
    });
  }
  if (row?.outcome === 'run-missing') throw corrupt(tenant, `pass ${r.run}/${r.epoch} without its run`);
  const outcome = settleOutcome(tenant, row?.outcome, r.run, r.epoch);
  const receipt: QuotaSettlement = {
    run: r.run,
    epoch: r.epoch,
    period: row?.receipt_period ?? null,
    spend: r.spend,
    releaseSlot: row?.receipt_release_slot === true,
    concludes: r.concludes,
  };
  const granted =
    row?.pass_hold_tokens === null || row?.pass_hold_tokens === undefined
      ? null
      : decodeSpend(tenant, 'a pass hold', row.pass_hold_tokens, row.pass_hold_minor_units);
  return { outcome, receipt, overrun: overrunOf(r.spend, granted) };
}

/** A run's dispatch (store.ts `dispatch`): see `quota_dispatch`. */
export async function dispatch(context: LifecycleContext, r: DispatchRequest): Promise<DispatchOutcome> {
  const { batch, tenant } = context;
  const values = (atMs: number): SqlValues => [
    tenant,
    r.run,
    r.grant,
    r.dispatch,
    r.ceilings.map((ceiling) => ceiling.count),
    r.ceilings.map((ceiling) => ceiling.windowSeconds),
    atMs,
    r.exempt,
    r.epoch ?? null,
    r.leaseMs ?? null,
  ];
  const row = await batch.decide<DispatchRow | undefined>('dispatch', decisionValues(r, values, 6));
  if (row === undefined) throw decisionMismatch('dispatch', 'no answer');
  const atMs = asApplied(r, row).atMs;
  switch (row.outcome) {
    case 'ok':
    case 'present':
    case 'limited':
    case 'uncountable': {
      // bigint[] arrives as strings; the CHECK on quota_json keeps each one a safe integer.
      const counts = (row.configured_counts ?? []).map(Number);
      const windows = (row.configured_windows ?? []).map(Number);
      const configured = counts.map((count, index) => ({ count, windowSeconds: windows[index] ?? Number.NaN }));
      return rateOutcome(tenant, row, r.grant, [...r.ceilings, ...configured], atMs);
    }
    case 'fenced':
      throw fencedFault(tenant, r.run, r.epoch ?? 0, 'dispatch', row);
    default:
      if (row.outcome === 'run-not-found') await refuseIfPruned(context, r.run, 'dispatch');
      return { ok: false, refusal: openRunFault(tenant, r.run, 'dispatch', row) };
  }
}

/** A heartbeat (store.ts `heartbeat`): see `quota_heartbeat`. */
export async function heartbeat(context: LifecycleContext, r: HeartbeatRequest): Promise<HeartbeatOutcome> {
  const { batch, tenant } = context;
  const values = (atMs: number): SqlValues => [tenant, r.run, r.epoch, atMs, r.leaseMs];
  const row = await batch.decide<HeartbeatRow | undefined>('heartbeat', decisionValues(r, values, 3));
  if (row === undefined) throw decisionMismatch('heartbeat', 'no answer');
  switch (row.outcome) {
    case 'renewed':
      if (!Number.isSafeInteger(row.lease_expires_at_ms)) throw corrupt(tenant, `pass ${r.run}/${r.epoch} with an unreadable lease`);
      return { ok: true, run: r.run, epoch: r.epoch, leaseExpiresAtMs: row.lease_expires_at_ms as number };
    case 'fenced':
      throw fencedFault(tenant, r.run, r.epoch, 'heartbeat', row);
    default:
      if (row.outcome === 'run-not-found') await refuseIfPruned(context, r.run, 'heartbeat');
      return { ok: false, refusal: openRunFault(tenant, r.run, 'heartbeat', row) };
  }
}

/** The answer of a contract `settle` or of `settlePass` as the port words it. */
export function settleOutcome(tenant: string, outcome: string | undefined, run: string, epoch: number): SettleOutcome {
  switch (outcome) {
    case 'settled':
    case 'already-settled':
      return outcome;
    case 'conflict':
      throw new QuotaError('CONFLICT', `quota pass ${run}/${epoch} was settled already with a different payload; the first receipt stands and nothing changed (a retry must repeat that settle exactly)`, {
        details: { tenant, run, epoch },
      });
    default:
      throw decisionMismatch('settle', `unknown outcome ${String(outcome)}`);
  }
}

/** The answer of a rate decision (`reserveRate`, `rateRoom`, `dispatch`), refusals rebuilt with `checkRate`. */
export function rateOutcome(
  tenant: string,
  row: ({ outcome: string } & RateFigures) | undefined,
  grant: string,
  ceilings: readonly RateCeiling[],
  atMs: number,
): RateOutcome {
  switch (row?.outcome) {
    case 'ok':
    case 'present':
      return { ok: true };
    case 'limited':
    case 'uncountable':
      return { ok: false, refusal: rateRefusal(tenant, grant, ceilings, row, atMs) };
    default:
      throw decisionMismatch('rate', `unknown outcome ${String(row?.outcome)}`);
  }
}

function grant(tenant: string, run: string, epoch: number, row: GrantColumns): PassGrant {
  if (row.grant_period === null || !Number.isSafeInteger(epoch) || !Number.isSafeInteger(row.lease_expires_at_ms)) {
    throw corrupt(tenant, `pass ${run}/${epoch} that cannot be read`);
  }
  return {
    ok: true,
    run,
    epoch,
    period: row.grant_period,
    hold: decodeOptionalSpend(tenant, `the hold of run '${run}'`, row.hold_tokens, row.hold_minor_units),
    leaseExpiresAtMs: row.lease_expires_at_ms as number,
  };
}

/**
 * The answers a function acting on an open run gives before it decides anything: the run is
 * unknown (`NOT_FOUND`), closed (`CONFLICT`), a halt row is unreadable (`STORE_CORRUPT`), or a
 * subject halt withholds it (the `Withheld` value, returned). Anything else is a mismatch.
 */
function openRunFault(tenant: string, run: string, verb: string, row: RunFacts): WithheldRefusal {
  switch (row.outcome) {
    case 'run-not-found':
      throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no run '${run}' to ${verb}; admit it first`, {
        details: { tenant, run },
      });
    case 'closed':
      throw closedRunError(tenant, run, row.run_status as RunStatus, verb);
    case 'unreadable-halts':
    case 'withheld': {
      const halts = decodeHalts(tenant, row.halts);
      const refusal = withheldBy(tenant, halts, decodeChain(tenant, run, row.chain_json));
      if (row.outcome === 'withheld' && refusal !== null) return refusal;
      throw decisionMismatch(verb, `${row.outcome} though the halts read ${refusal === null ? 'withhold nothing' : 'withhold it'}`);
    }
    default:
      throw decisionMismatch(verb, `unknown outcome ${JSON.stringify(row.outcome)}`);
  }
}

/** The fault `fencePass` throws for the facts the function fenced on; not throwing is a mismatch. */
function fencedFault(tenant: string, run: string, epoch: number, verb: string, row: RunFacts): QuotaError {
  fencePass({
    tenant,
    run,
    epoch,
    status: row.run_status as RunStatus,
    lastEpoch: Number(row.last_epoch),
    pass: row.pass_found === true ? { settledAtMs: row.pass_settled_at_ms ?? null } : undefined,
    verb,
  });
  return decisionMismatch(verb, 'fenced a pass the rules let go on');
}

function decodeHalts(tenant: string, rows: unknown) {
  if (!Array.isArray(rows)) throw corrupt(tenant, 'halt rows the store could not list');
  return rows.map((row: unknown) => decodeHaltRow(tenant, row as Parameters<typeof decodeHaltRow>[1]));
}
