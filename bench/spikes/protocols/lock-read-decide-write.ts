import pg from 'pg';

import type { Decision, RunFacts, Verdict } from './decide.js';
import { GroupCommit } from './group-commit.js';
import { decideBatch, effectsSql, runOf, TENANT_COLUMNS, tenantOf, type TenantState } from './model.js';

/** How the effects are written: see `effectsSql`. */
export type Via = 'function' | 'statement';

/** A decision protocol over one pool: decisions in, verdicts out, with its own counters. */
export interface Protocol {
  decide(decision: Decision): Promise<Verdict>;
  readonly batcher: GroupCommit<Decision, Verdict>;
  /** Batches whose write found a tenant moved and were decided again (the optimistic protocol only). */
  readonly retries: { count: number };
  /** Decisions asked again because their batch gave up (`GaveUp`, the optimistic protocol only); counted by the caller. */
  readonly gaveUp: { count: number };
}

/**
 * Protocol A, lock-read-decide-write, two round trips per batch on one connection, both simple
 * queries with the values inlined as escaped literals:
 * 1. `BEGIN`, the batch's tenant rows `FOR NO KEY UPDATE` (in key order, so two batches never
 *    deadlock), then the runs its settles name (left out when it has none). Every write to a run also writes its tenant's row,
 *    so under the tenant's lock the runs read are current without locking them.
 * 2. the one statement writing every effect (`effectsSql`), then `COMMIT`.
 */
export function lockReadDecideWrite(pool: pg.Pool, schema: string, lanes: number, via: Via): Protocol {
  const send = lockedBatch(pool, schema, via);
  const batcher = new GroupCommit<Decision, Verdict>(async (batch) => (await send(batch)).verdicts, lanes);
  return { decide: (decision) => batcher.submit(decision), batcher, retries: { count: 0 }, gaveUp: { count: 0 } };
}

/** A's two round trips for one batch: answers its verdicts and its tenants' states after it. */
export function lockedBatch(pool: pg.Pool, schema: string, via: Via): (batch: readonly Decision[]) => Promise<{ verdicts: Verdict[]; after: Map<string, TenantState> }> {
  return async (batch) => {
    const client = await pool.connect();
    let failed: unknown;
    try {
      const literal = (value: string): string => client.escapeLiteral(value);
      const tenants = [...new Set(batch.map((decision) => decision.tenant))].sort();
      const settles = batch.filter((decision) => decision.kind === 'settle');
      // A statement of its own after the lock, so its snapshot sees what the lock waited for.
      const readRuns =
        settles.length === 0
          ? ''
          : `; SELECT tenant, run, epoch, hold_tokens, settled_at_ms IS NOT NULL AS settled FROM ${schema}.runs
              WHERE (tenant, run) IN (${settles.map((d) => `(${literal(d.tenant)}, ${literal(d.run)})`).join(', ')})`;
      const read = (await client.query(
        `BEGIN; SELECT ${TENANT_COLUMNS} FROM ${schema}.tenants WHERE tenant IN (${tenants.map(literal).join(', ')}) ORDER BY tenant FOR NO KEY UPDATE${readRuns}`,
      )) as unknown as pg.QueryResult[];
      const states = new Map<string, TenantState>();
      for (const row of read[1]?.rows ?? []) states.set(String(row.tenant), tenantOf(row));
      for (const row of read[2]?.rows ?? []) states.get(String(row.tenant))?.runs.set(String(row.run), runOf(row) as RunFacts);
      const { verdicts, effects, after } = decideBatch(states, batch, Date.now());
      const written = (await client.query(`${effectsSql(schema, `${literal(JSON.stringify(effects))}::jsonb`, via)}; COMMIT`)) as unknown as pg.QueryResult[];
      if ((written[0]?.rows.length ?? 0) > 0) throw new Error('a locked tenant moved: the lock did not hold');
      return { verdicts, after };
    } catch (error) {
      failed = error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(failed instanceof Error ? failed : undefined);
    }
  };
}
