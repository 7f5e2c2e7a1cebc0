import { periodKey } from '../../core/period.js';
import { agentCeilingsOf } from '../../core/quota.js';
import type { AdmitOutcome, AdmitRequest, PassGrant } from '../types.js';
import { corrupt, decodeSpend } from '../rows.js';
import { answerRetry } from './postgres-admit-retry.js';
import {
  coveringScopeKeys,
  decisionMismatch,
  halted,
  quotaOf,
  spentOut,
  tooManyRuns,
  unbounded,
  type ReserveFigures,
} from './postgres-outcomes.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import { decodeOptionalSpend } from './postgres-rows.js';
import { refuseIfPruned } from './postgres-retention.js';

/*
 * A waiting admission on PostgreSQL is decided by the queue's server-side functions
 * (`quota_admit_or_wait` and `quota_grant_waiters` in `migrations/`), which admit with `quota_admit`:
 * the values it takes and the answer its row is turned into.
 */

interface GrantColumns {
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

