import type pg from 'pg';

import { decide, type Decision, periodKeyOf, type RunFacts, type TenantFigures, type Verdict } from './decide.js';

// The reshaped data model: one row per tenant holding its running count and the current period's
// settled and held tokens (updated once per decision batch), one row per run (inserted at admit,
// its primary key its only index; settled by a HOT update, since no indexed column changes).

/** Room left in each page for the settle's new row version, so it can be HOT. */
const RUNS_FILLFACTOR = 70;

/** Creates the spike's two tables in a fresh schema `schema`. */
export async function createModel(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query(`
    CREATE SCHEMA ${schema};
    CREATE TABLE ${schema}.tenants (
      tenant         text COLLATE "C" PRIMARY KEY,
      max_runs       int    NOT NULL,
      ceiling_tokens bigint NOT NULL,
      period_key     text   NOT NULL,
      running        int    NOT NULL DEFAULT 0,
      settled_tokens bigint NOT NULL DEFAULT 0,
      held_tokens    bigint NOT NULL DEFAULT 0,
      version        bigint NOT NULL DEFAULT 0
    ) WITH (fillfactor = 50);
    CREATE TABLE ${schema}.runs (
      tenant         text COLLATE "C" NOT NULL,
      run            text COLLATE "C" NOT NULL,
      epoch          int    NOT NULL,
      hold_tokens    bigint NOT NULL,
      admitted_at_ms bigint NOT NULL,
      spend_tokens   bigint,
      settled_at_ms  bigint,
      PRIMARY KEY (tenant, run)
    ) WITH (fillfactor = ${RUNS_FILLFACTOR});
    CREATE FUNCTION ${schema}.apply_effects(effects jsonb) RETURNS SETOF jsonb LANGUAGE plpgsql AS $body$
    BEGIN
      RETURN QUERY ${effectsStatement(schema, 'effects')};
    END $body$;`);
}

/** Adds tenant `tenant` with its limits and nothing running, held or settled. */
export async function addTenant(client: pg.ClientBase, schema: string, tenant: string, maxRuns: number, ceilingTokens: number): Promise<void> {
  await client.query(`INSERT INTO ${schema}.tenants (tenant, max_runs, ceiling_tokens, period_key) VALUES ($1, $2, $3, $4)`, [
    tenant,
    maxRuns,
    ceilingTokens,
    periodKeyOf(Date.now()),
  ]);
}

/** A tenant as the decision sees it: its figures, the version they were read at, and the runs it knows. */
export interface TenantState {
  readonly figures: TenantFigures;
  readonly version: number;
  readonly runs: Map<string, RunFacts>;
}

/** The columns a tenant is read with, for `tenantOf`. */
export const TENANT_COLUMNS = 'tenant, max_runs, ceiling_tokens, period_key, running, settled_tokens, held_tokens, version';

/** A tenant row (TENANT_COLUMNS) as a state knowing no runs yet. */
export function tenantOf(row: Record<string, unknown>): TenantState {
  return {
    figures: {
      maxRuns: Number(row.max_runs),
      ceilingTokens: Number(row.ceiling_tokens),
      periodKey: String(row.period_key),
      running: Number(row.running),
      settledTokens: Number(row.settled_tokens),
      heldTokens: Number(row.held_tokens),
    },
    version: Number(row.version),
    runs: new Map(),
  };
}

/** A run row (`run, epoch, hold_tokens, settled`) as the facts a settle needs. */
export function runOf(row: Record<string, unknown>): RunFacts {
  return { epoch: Number(row.epoch), holdTokens: Number(row.hold_tokens), settled: row.settled === true };
}

/**
 * What a batch writes: each tenant's new figures (or only its version, to check), new runs, settled
 * runs; and the runs its settles name, answered with their tenant if it moved.
 */
export interface Effects {
  readonly tenants: { tenant: string; expect: number; write: boolean; running: number; settled: number; held: number; period: string }[];
  readonly inserts: { tenant: string; run: string; epoch: number; hold: number; at: number }[];
  readonly settles: { tenant: string; run: string; epoch: number; spend: number; at: number }[];
  readonly named: { tenant: string; run: string }[];
}

/**
 * Decides a batch in order on copies of `states` (every decision's tenant must be there) at
 * `atMs`, and answers each verdict, the effects to write, and the states after them (versions
 * moved on where a tenant's figures are written).
 */
export function decideBatch(
  states: ReadonlyMap<string, TenantState>,
  decisions: readonly Decision[],
  atMs: number,
): { verdicts: Verdict[]; effects: Effects; after: Map<string, TenantState> } {
  const periodKey = periodKeyOf(atMs);
  const work = new Map<string, { figures: TenantFigures; runs: Map<string, RunFacts>; changed: boolean }>();
  const effects: Effects = { tenants: [], inserts: [], settles: [], named: [] };
  const verdicts = decisions.map((decision) => {
    let tenant = work.get(decision.tenant);
    if (tenant === undefined) {
      const state = states.get(decision.tenant);
      if (state === undefined) throw new Error(`tenant ${decision.tenant} was not read`);
      tenant = { figures: state.figures, runs: new Map(state.runs), changed: false };
      work.set(decision.tenant, tenant);
    }
    if (decision.kind === 'settle') effects.named.push({ tenant: decision.tenant, run: decision.run });
    const decided = decide(tenant.figures, tenant.runs.get(decision.run), decision, periodKey);
    if (decided.write === null) return decided.verdict;
    tenant.figures = decided.figures;
    tenant.changed = true;
    if (decision.kind === 'admit') {
      tenant.runs.set(decision.run, decided.run as RunFacts);
      effects.inserts.push({ tenant: decision.tenant, run: decision.run, epoch: 1, hold: decision.holdTokens, at: atMs });
    } else {
      tenant.runs.delete(decision.run); // Settled for good: a replay reads it again.
      effects.settles.push({ tenant: decision.tenant, run: decision.run, epoch: decision.epoch, spend: decision.spendTokens, at: atMs });
    }
    return decided.verdict;
  });
  const after = new Map<string, TenantState>();
  for (const [name, tenant] of work) {
    const version = (states.get(name) as TenantState).version;
    const f = tenant.figures;
    effects.tenants.push({ tenant: name, expect: version, write: tenant.changed, running: f.running, settled: f.settledTokens, held: f.heldTokens, period: f.periodKey });
    after.set(name, { figures: f, version: tenant.changed ? version + 1 : version, runs: tenant.runs });
  }
  return { verdicts, effects, after };
}

/**
 * The one statement that writes a batch's effects, `json` being the Effects as a jsonb expression
 * (a parameter or an inlined literal). Each tenant's figures are written only where its version is
 * still the one decided on (a row lock makes that certain, or it is the optimistic check), and its
 * runs only with them. It answers, for every tenant whose version moved (written ones that were not
 * written, checked ones whose version differs), its current row and the rows of the runs the batch's
 * settles name, so the caller can decide those again, as one jsonb per tenant, column `moved`.
 * Runs are updated HOT: no indexed column changes.
 *
 * `via` 'function' calls `apply_effects` (createModel), a PL/pgSQL function holding only that
 * statement, so its plan is cached per connection; 'statement' sends the statement itself, planned
 * every time it is sent.
 */
export function effectsSql(schema: string, json: string, via: 'function' | 'statement'): string {
  return via === 'function' ? `SELECT moved FROM ${schema}.apply_effects(${json}) AS moved` : effectsStatement(schema, json);
}

function effectsStatement(schema: string, json: string): string {
  return `WITH x AS (
    SELECT * FROM jsonb_to_recordset((${json})->'tenants')
      AS x(tenant text, expect bigint, write boolean, running int, settled bigint, held bigint, period text)),
  t AS (
    UPDATE ${schema}.tenants AS t
       SET running = x.running, settled_tokens = x.settled, held_tokens = x.held, period_key = x.period, version = t.version + 1
      FROM x WHERE x.write AND t.tenant = x.tenant AND t.version = x.expect
    RETURNING t.tenant),
  i AS (
    INSERT INTO ${schema}.runs (tenant, run, epoch, hold_tokens, admitted_at_ms)
    SELECT a.tenant, a.run, a.epoch, a.hold, a.at
      FROM jsonb_to_recordset((${json})->'inserts') AS a(tenant text, run text, epoch int, hold bigint, at bigint)
     WHERE a.tenant IN (SELECT tenant FROM t)),
  z AS (SELECT * FROM jsonb_to_recordset((${json})->'settles') AS z(tenant text, run text, epoch int, spend bigint, at bigint)),
  u AS (
    UPDATE ${schema}.runs AS r SET spend_tokens = z.spend, settled_at_ms = z.at
      FROM z WHERE r.tenant = z.tenant AND r.run = z.run AND r.epoch = z.epoch AND r.settled_at_ms IS NULL
       AND z.tenant IN (SELECT tenant FROM t))
  SELECT to_jsonb(c) || jsonb_build_object('runs', (SELECT coalesce(jsonb_agg(jsonb_build_object('run', r.run, 'epoch', r.epoch, 'hold_tokens', r.hold_tokens, 'settled', r.settled_at_ms IS NOT NULL)), '[]')
            FROM ${schema}.runs r JOIN jsonb_to_recordset((${json})->'named') AS n(tenant text, run text) ON r.tenant = n.tenant AND r.run = n.run
           WHERE r.tenant = c.tenant)) AS moved
    FROM ${schema}.tenants c JOIN x ON c.tenant = x.tenant
   WHERE (x.write AND c.tenant NOT IN (SELECT tenant FROM t)) OR (NOT x.write AND c.version <> x.expect)`;
}

/** A tenant row (or its jsonb) with its `runs` (a jsonb array of run rows), as `effectsSql` and the optimistic read answer them. */
export function tenantWithRuns(row: Record<string, unknown>): TenantState {
  const state = tenantOf(row);
  for (const run of row.runs as Record<string, unknown>[]) state.runs.set(String(run.run), runOf(run));
  return state;
}
