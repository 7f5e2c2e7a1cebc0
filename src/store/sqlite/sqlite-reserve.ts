import { admissionConcurrencyRefusal, admissionSpendRefusal, type PeriodFigures } from '../../core/admission-ceilings.js';
import { boundsPlane, planeAgentLimit, type PlaneCeiling } from '../../core/plane-ceiling.js';
import { agentCeilingsOf, boundsSpend, type TenantQuota } from '../../core/quota.js';
import type { SpentOutRefusal } from '../../core/refusal.js';
import type { ReserveOutcome, SpendHold } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { dayOf } from '../../core/period-books.js';
import { putHold } from './sqlite-books.js';
import {
  COUNT_AGENT_SLOTS,
  COUNT_PLANE_AGENT_SLOTS,
  COUNT_PLANE_SLOTS,
  INSERT_SLOT,
  SELECT_AGENT_PERIOD_FIGURES,
  SELECT_PERIOD_FIGURES,
  SELECT_PLANE_CEILING,
  SELECT_SLOT_SNAPSHOT,
} from './sqlite-queries.js';
import { decodeSpend } from '../rows.js';
import { decodePlaneCeiling } from '../plane-rows.js';

/**
 * What a reserve decides on: the run, its agent name (`null`: none, so no per-agent ceiling covers
 * it), the quota in force, the hold it asks for (or none), and the instant (Unix ms).
 */
export interface ReserveInput {
  readonly run: string;
  readonly agent: string | null;
  readonly quota: TenantQuota;
  readonly hold: SpendHold | null;
  readonly atMs: number;
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

function count(conn: SqliteConnection, sql: string, params: Readonly<Record<string, string | number | bigint | null>>): number {
  return conn.get<{ running: number }>(sql, params)?.running ?? 0;
}

function periodFigures(conn: SqliteConnection, tenant: string, sql: string, params: Readonly<Record<string, string | number | bigint | null>>): PeriodFigures {
  const row = conn.get<PeriodFiguresRow>(sql, params);
  return {
    settled: decodeSpend(tenant, 'settled spend', row?.settled_tokens, row?.settled_minor_units),
    reserved: decodeSpend(tenant, 'reserved spend', row?.reserved_tokens, row?.reserved_minor_units),
  };
}

/**
 * The body of `reserve` (docs/design/rules.md#c1, #c12) and of an admission's reserve, run inside
 * the caller's `BEGIN IMMEDIATE` transaction so the decision and the insert are one (invariant 1):
 * one writer at a time across every process, so every count below, the plane-wide ones included, is
 * exact. Fast path: without any concurrency ceiling covering the run (tenant, agent, plane) or a
 * hold there is nothing to decide, so the slot is inserted if absent. Otherwise count what the
 * ceilings covering the run need, judge concurrency with `admissionConcurrencyRefusal`, judge spend
 * (tenant and agent figures, each from one statement) only when a hold is asked for and the run
 * holds none, and insert hold and slot. A refusal writes nothing, not even the slot.
 */
export function reserveInTransaction(conn: SqliteConnection, tenant: string, input: ReserveInput): ReserveOutcome {
  const reserved = reserveTakingHold(conn, tenant, input);
  return reserved.ok ? { ok: true } : reserved;
}

/**
 * {@link reserveInTransaction}, also telling an admission whether it inserted the hold it asked for
 * (`holdTaken`): then the run's hold is that one, and the admission need not read it back. When
 * false, the run holds what it held before (an earlier `reserve` of the same run id), or nothing.
 */
export function reserveTakingHold(
  conn: SqliteConnection,
  tenant: string,
  input: ReserveInput,
): { readonly ok: true; readonly holdTaken: boolean } | Extract<ReserveOutcome, { ok: false }> {
  const agent = input.agent;
  const agentCeilings = agentCeilingsOf(input.quota, agent);
  const plane = readPlaneCeiling(conn);
  const key = { tenant, run: input.run, atMs: input.atMs, agentName: agent };
  const planeBounds = boundsPlane(plane);
  if (input.quota.maxConcurrentRuns === undefined && agentCeilings?.maxConcurrentRuns === undefined && !planeBounds && input.hold === null) {
    conn.run(INSERT_SLOT, key);
    return { ok: true, holdTaken: false };
  }
  const snapshot = conn.get<SlotSnapshotRow>(SELECT_SLOT_SNAPSHOT, key);
  const slotHeld = snapshot?.slot_held === 1;
  const holdHeld = snapshot?.hold_held === 1;
  const countsAgent = agent !== null && agentCeilings?.maxConcurrentRuns !== undefined;
  const countsPlaneAgent = agent !== null && planeAgentLimit(plane, agent) !== undefined;
  const tooMany = admissionConcurrencyRefusal(
    tenant,
    { quota: input.quota, plane, agent },
    {
      slotHeld,
      running: snapshot?.running ?? 0,
      agentRunning: slotHeld || !countsAgent ? 0 : count(conn, COUNT_AGENT_SLOTS, { tenant, agent }),
      planeRunning: slotHeld || plane?.maxConcurrentRuns === undefined ? 0 : count(conn, COUNT_PLANE_SLOTS, {}),
      planeAgentRunning: slotHeld || !countsPlaneAgent ? 0 : count(conn, COUNT_PLANE_AGENT_SLOTS, { agent }),
    },
  );
  if (tooMany !== null) return { ok: false, refusal: tooMany };
  // A run that already holds spend is neither re-checked nor re-held: the existing hold wins.
  const hold = holdHeld ? null : input.hold;
  if (hold !== null) {
    const spentOut = spendRefusal(conn, tenant, input.quota, agent, hold);
    if (spentOut !== null) return { ok: false, refusal: spentOut };
    putHold(conn, tenant, input.run, hold.period, dayOf(hold.period, input.atMs), hold.amount, agent);
  }
  conn.run(INSERT_SLOT, key);
  return { ok: true, holdTaken: hold !== null };
}

/**
 * The `SpentOut` refusal `reserve` would answer for `hold` under `quota` (the agent's ceilings in
 * the tenant first, then the tenant's) from the period's figures as they stand, or `null` when it
 * fits. Read-only; a waiting admission asks it too (docs/design/rules.md#w4-1: a hold that would
 * not fit either is refused, never queued).
 */
export function spendRefusal(
  conn: SqliteConnection,
  tenant: string,
  quota: TenantQuota,
  agent: string | null,
  hold: SpendHold,
): SpentOutRefusal | null {
  const agentCeilings = agentCeilingsOf(quota, agent);
  const agentBounds = agent !== null && agentCeilings !== null && boundsSpend({ period: quota.period, ...agentCeilings });
  return admissionSpendRefusal({
    tenant,
    period: hold.period,
    quota,
    agent,
    tenantFigures: periodFigures(conn, tenant, SELECT_PERIOD_FIGURES, { tenant, period: hold.period }),
    agentFigures: agentBounds ? periodFigures(conn, tenant, SELECT_AGENT_PERIOD_FIGURES, { tenant, agent, period: hold.period }) : null,
    requested: hold.amount,
  });
}
