import { QuotaError } from '../core/errors.js';
import { parseHaltScope, PLANE_HALT_KEY, type Halt } from '../core/halt-scope.js';

/** A halt as both backends store it: one row per (tenant, scope key). Instants are Unix ms. */
export interface HaltRow {
  readonly scope: string;
  readonly reason: string;
  readonly by_actor: string;
  readonly by_basis: string;
  readonly at_ms: number | string | bigint;
  /** Whether it reaches running work (0/1 in SQLite, a boolean in PostgreSQL; absent: no). */
  readonly reaches_running?: number | boolean | null | undefined;
}

/**
 * Decodes a stored halt row. An unparseable scope, basis or instant throws `STORE_CORRUPT` and is
 * never skipped: a skipped halt reads from outside exactly like a lifted one.
 */
export function decodeHaltRow(tenant: string, row: HaltRow): Halt {
  const scope = parseHaltScope(row.scope);
  if (scope === null) {
    throw new QuotaError(
      'STORE_CORRUPT',
      `tenant '${tenant}' has a halt with the unreadable scope ${JSON.stringify(row.scope)}; the store refuses ` +
        `rather than admit work an operator may have stopped`,
      { details: { tenant, scope: row.scope } },
    );
  }
  const basis = row.by_basis;
  const atMs = Number(row.at_ms);
  if ((basis !== 'asserted' && basis !== 'authenticated') || !Number.isSafeInteger(atMs)) {
    throw new QuotaError(
      'STORE_CORRUPT',
      `tenant '${tenant}' has a halt on ${JSON.stringify(row.scope)} whose operator or instant cannot be read`,
      { details: { tenant, scope: row.scope } },
    );
  }
  const halt: Halt = { scope, reason: row.reason, by: { actor: row.by_actor, basis }, atMs };
  return reachesRunningOf(row) ? { ...halt, reachesRunning: true } : halt;
}

/** Whether a stored row says its halt reaches running work (docs/design/rules.md#c44). */
export function reachesRunningOf(row: { readonly reaches_running?: number | boolean | null | undefined }): boolean {
  return row.reaches_running === true || row.reaches_running === 1;
}

/** The plane-wide halt as both backends store it: its one row, without a scope column. */
export type PlaneHaltRow = Omit<HaltRow, 'scope'>;

/**
 * Decodes the stored plane-wide halt (docs/design/rules.md#c49). An unreadable operator or instant
 * throws `STORE_CORRUPT`, never skipped: every admission of every tenant then refuses.
 */
export function decodePlaneHaltRow(row: PlaneHaltRow): Halt {
  const basis = row.by_basis;
  const atMs = Number(row.at_ms);
  if ((basis !== 'asserted' && basis !== 'authenticated') || !Number.isSafeInteger(atMs)) {
    throw new QuotaError('STORE_CORRUPT', 'the store holds a plane-wide halt whose operator or instant cannot be read; the store refuses rather than admit work an operator may have stopped', {
      details: { scope: PLANE_HALT_KEY },
    });
  }
  const halt: Halt = { scope: { kind: 'plane' }, reason: row.reason, by: { actor: row.by_actor, basis }, atMs };
  return reachesRunningOf(row) ? { ...halt, reachesRunning: true } : halt;
}

/** True when two halts are the same throw: scope, reason, operator actor and basis, and instant (docs/design/rules.md#c28–#c30). */
export function sameHalt(a: Halt, b: Halt): boolean {
  return (
    a.reason === b.reason &&
    a.by.actor === b.by.actor &&
    a.by.basis === b.by.basis &&
    a.atMs === b.atMs &&
    (a.reachesRunning === true) === (b.reachesRunning === true)
  );
}
