import pg from 'pg';

import type { Decision, Verdict } from './decide.js';
import { GroupCommit } from './group-commit.js';
import { lockedBatch, type Protocol, type Via } from './lock-read-decide-write.js';
import { decideBatch, effectsSql, TENANT_COLUMNS, tenantWithRuns, type TenantState } from './model.js';

/** How often a batch may find its tenants moved before it gives up. */
const MAX_TRIES = 20;

/** A batch gave up, having written nothing: its tenants moved MAX_TRIES times in a row (contention). */
export class GaveUp extends Error {}

/**
 * Protocol B, optimistic: no lock and no transaction block. The batch is decided on an in-process
 * cache of its tenants (their figures, version, and the runs this instance admitted and has not
 * seen settled); what the cache lacks is read first in one statement (one snapshot). Then one
 * statement (`effectsSql`, one round trip, its own transaction) writes each tenant's effects only
 * where the tenant's version is still the one decided on, and answers the current rows of the
 * tenants that moved; only their decisions are decided again, on those rows, and written again.
 * A refusal is checked too: its tenant's version must not have moved. With `cache: false` every
 * batch reads its tenants first (two round trips, still no lock). With `lockOnConflict`, what
 * found its tenants moved is decided once more under A's lock instead (bounded: two tries).
 */
export function optimistic(
  pool: pg.Pool,
  schema: string,
  lanes: number,
  options: { cache: boolean; lockOnConflict?: boolean; via: Via },
): Protocol {
  const locked = lockedBatch(pool, schema, options.via);
  const cache = new Map<string, TenantState>();
  const retries = { count: 0 };

  const readMissing = async (known: Map<string, TenantState>, batch: readonly Decision[]): Promise<void> => {
    const missing = batch.filter((d) => !known.has(d.tenant) || (d.kind === 'settle' && !known.get(d.tenant)?.runs.has(d.run)));
    if (missing.length === 0) return;
    const wanted = {
      tenants: [...new Set(missing.map((d) => d.tenant))],
      settles: batch.filter((d) => d.kind === 'settle').map((d) => ({ tenant: d.tenant, run: d.run })),
    };
    const { rows } = await pool.query(
      `SELECT ${TENANT_COLUMNS.split(', ').map((column) => `c.${column}`).join(', ')},
              (SELECT coalesce(jsonb_agg(jsonb_build_object('run', r.run, 'epoch', r.epoch, 'hold_tokens', r.hold_tokens, 'settled', r.settled_at_ms IS NOT NULL)), '[]')
                 FROM ${schema}.runs r JOIN jsonb_to_recordset($1::jsonb->'settles') AS z(tenant text, run text) ON r.tenant = z.tenant AND r.run = z.run
                WHERE r.tenant = c.tenant) AS runs
         FROM ${schema}.tenants c WHERE c.tenant IN (SELECT jsonb_array_elements_text($1::jsonb->'tenants'))`,
      [JSON.stringify(wanted)],
    );
    for (const row of rows) remember(known, String(row.tenant), tenantWithRuns(row));
  };

  // A row read at a newer version replaces the cached one; runs read at the cached version add to it.
  const remember = (known: Map<string, TenantState>, tenant: string, read: TenantState): void => {
    const cached = known.get(tenant);
    if (cached !== undefined && cached.version === read.version) for (const [run, facts] of read.runs) cached.runs.set(run, facts);
    else known.set(tenant, read);
  };

  const send = async (batch: readonly Decision[]): Promise<Verdict[]> => {
    // B-read: what this batch reads, and nothing kept for the next.
    const known = options.cache ? cache : new Map<string, TenantState>();
    await readMissing(known, batch);
    const verdicts: Verdict[] = new Array(batch.length);
    let pending = batch.map((decision, index) => ({ decision, index }));
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      if (attempt > MAX_TRIES) throw new GaveUp(`the batch found its tenants moved ${MAX_TRIES} times in a row`);
      if (attempt > 1) retries.count += 1;
      if (attempt > 1 && options.lockOnConflict === true) {
        // Contended: decide what is left under A's lock, which always succeeds.
        const done = await locked(pending.map((p) => p.decision));
        pending.forEach((p, position) => (verdicts[p.index] = done.verdicts[position] as Verdict));
        for (const [tenant, state] of done.after) known.set(tenant, state);
        break;
      }
      const decided = decideBatch(known, pending.map((p) => p.decision), Date.now());
      // Named, so each connection parses and plans it once.
      const { rows } = await pool.query({ name: `effects-${schema}-${options.via}`, text: effectsSql(schema, '$1::jsonb', options.via), values: [JSON.stringify(decided.effects)] });
      const moved = new Set<string>();
      for (const { moved: row } of rows as { moved: Record<string, unknown> }[]) {
        remember(known, String(row.tenant), tenantWithRuns(row));
        moved.add(String(row.tenant));
      }
      pending.forEach((p, position) => {
        if (!moved.has(p.decision.tenant)) verdicts[p.index] = decided.verdicts[position] as Verdict;
      });
      for (const [tenant, state] of decided.after) if (!moved.has(tenant)) known.set(tenant, state);
      pending = pending.filter((p) => moved.has(p.decision.tenant));
    }
    return verdicts;
  };
  const batcher = new GroupCommit<Decision, Verdict>(send, lanes);
  return { decide: (decision) => batcher.submit(decision), batcher, retries, gaveUp: { count: 0 } };
}

/** Asks again, as a caller would, while an optimistic batch gives up under contention, counting each time in `gaveUp`. */
export async function decideUntilDone(protocol: Protocol, decision: Decision): Promise<Verdict> {
  for (;;) {
    try {
      return await protocol.decide(decision);
    } catch (error) {
      if (!(error instanceof GaveUp)) throw error;
      protocol.gaveUp.count += 1;
    }
  }
}
