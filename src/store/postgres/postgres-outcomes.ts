import { holdFor, type Budget } from '../../core/budget.js';
import { QuotaError } from '../../core/errors.js';
import { coveringHalt, haltScopeKey, type HaltTarget } from '../../core/halt-scope.js';
import type { Period } from '../../core/period.js';
import type { TenantQuota } from '../../core/quota.js';
import { checkRate, type RateCeiling } from '../../core/rate.js';
import type { HaltedRefusal, RateLimitedRefusal, SpentOutRefusal, TooManyRunsRefusal, UncountableRateRefusal, UnboundedRefusal } from '../../core/refusal.js';
import { concurrencyRefusal } from '../../core/reserve-decision.js';
import { checkSpend } from '../../core/spend-check.js';
import type { Spend } from '../../core/spend.js';
import { decodeHaltRow, type HaltRow } from '../halt-rows.js';
import { corrupt, decodeSpend } from '../rows.js';

/*
 * The decision functions in the database decide; the refusal *values* are built here, from the
 * figures each decision was made on, by the same pure functions of `core/` the SQLite adapter
 * calls. If core and the server ever disagree about a refusal, that is a bug in the mirror, and it
 * surfaces as `INTERNAL` instead of a wrong answer.
 */

/** `INTERNAL`: the server-side decision and the pure decision of `core/` disagree. */
export function decisionMismatch(operation: string, detail: string): QuotaError {
  return new QuotaError(
    'INTERNAL',
    `the PostgreSQL ${operation} decision disagrees with quotaplane's own rule (${detail}); nothing more was ` +
      `written, but report this as a bug`,
    { details: { backend: 'postgres', operation } },
  );
}

/** The figures a spend or concurrency refusal was decided on, as the admission and reserve functions return them. */
export interface ReserveFigures {
  readonly running: number | null;
  readonly settled_tokens: number | null;
  readonly settled_minor_units: number | null;
  readonly reserved_tokens: number | null;
  readonly reserved_minor_units: number | null;
}

/** The `TooManyRuns` value for a run without a slot, rebuilt with `concurrencyRefusal`. */
export function tooManyRuns(tenant: string, quota: TenantQuota, figures: ReserveFigures): TooManyRunsRefusal {
  const refusal = concurrencyRefusal(tenant, quota, { slotHeld: false, running: Number(figures.running ?? Number.NaN) });
  if (refusal === null) throw decisionMismatch('reserve', `refused for ${figures.running} running runs`);
  return refusal;
}

/** The `SpentOut` value, rebuilt with `checkSpend` from the one-snapshot figures. */
export function spentOut(
  tenant: string,
  quota: TenantQuota,
  period: string,
  requested: Spend,
  figures: ReserveFigures,
): SpentOutRefusal {
  const refusal = checkSpend({
    tenant,
    period,
    quota,
    settled: decodeSpend(tenant, 'settled spend', figures.settled_tokens, figures.settled_minor_units),
    reserved: decodeSpend(tenant, 'reserved spend', figures.reserved_tokens, figures.reserved_minor_units),
    requested,
  });
  if (refusal === null) throw decisionMismatch('reserve', `spend refused in ${period} though it fits`);
  return refusal;
}

/** The `Unbounded` value, rebuilt with `holdFor`. */
export function unbounded(tenant: string, quota: TenantQuota, budget: Budget, width: number): UnboundedRefusal {
  const held = holdFor(quota, budget, width);
  if (held.ok) throw decisionMismatch('admission', 'refused as unbounded though the budget bounds every unit');
  return { code: 'Unbounded', tenant, unit: held.unit, field: held.field };
}

/** A halt row as the admission function returns it in JSON (the instant as text, to keep every digit). */
interface HaltJson {
  readonly scope: string;
  readonly reason: string;
  readonly by_actor: string;
  readonly by_basis: string;
  readonly at_ms: string;
}

/**
 * The `Halted` value: every halt row decoded (an unreadable one throws `STORE_CORRUPT`, never
 * skipped), the narrowest covering one named with `coveringHalt`.
 */
export function halted(tenant: string, rows: unknown, target: HaltTarget): HaltedRefusal {
  if (!Array.isArray(rows)) throw corrupt(tenant, 'halt rows the admission could not list');
  const halts = (rows as HaltJson[]).map((row) => decodeHaltRow(tenant, row satisfies HaltRow));
  const halt = coveringHalt(halts, target);
  if (halt === null) throw decisionMismatch('admission', 'refused as halted though no halt covers the run');
  return { code: 'Halted', tenant, scope: haltScopeKey(halt.scope), reason: halt.reason, by: halt.by, haltedAtMs: halt.atMs };
}

/**
 * The scope keys that would cover a run (`haltCovers` turned into a key set): the tenant, the
 * agent's name, the agent's digest, and every principal on the chain.
 */
export function coveringScopeKeys(target: HaltTarget): string[] {
  const keys = ['tenant'];
  if (target.agent !== undefined) keys.push(`agent:${target.agent.name}`, `revision:${target.agent.digest}`);
  for (const principal of target.chain ?? []) keys.push(`subject:${principal}`);
  return keys;
}

/** The rate refusal, rebuilt with `checkRate` over the instants the server counted from. */
export function rateRefusal(
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  instants: unknown,
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal {
  const instantsMs = Array.isArray(instants) ? (instants as unknown[]).map(Number) : [];
  if (instantsMs.some((instant) => !Number.isSafeInteger(instant))) throw corrupt(tenant, `an unreadable dispatch instant of ${grant}`);
  const refusal = checkRate({ tenant, grant, ceilings, instantsMs, atMs });
  if (refusal === null) throw decisionMismatch('rate', `${grant} refused though every window has room`);
  return refusal;
}

/** A quota holding just the ceilings and period a server-side decision reported it used. */
export function quotaOf(
  period: Period,
  maxRuns: number | null,
  limitTokens: number | null,
  limitMinorUnits: number | null,
): TenantQuota {
  const quota: { -readonly [K in keyof TenantQuota]: TenantQuota[K] } = { period };
  if (maxRuns !== null) quota.maxConcurrentRuns = maxRuns;
  if (limitTokens !== null) quota.maxTokensPerPeriod = limitTokens;
  if (limitMinorUnits !== null) quota.maxMinorUnitsPerPeriod = limitMinorUnits;
  return quota;
}
