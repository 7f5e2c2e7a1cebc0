import pg from 'pg';
import { monotonicFactory } from 'ulid';

import type { Verdict } from './decide.js';
import type { Protocol } from './lock-read-decide-write.js';
import { decideUntilDone } from './optimistic.js';
import { addTenant, createModel } from './model.js';

/** What the race saw and whether the figures it left are exact. */
export interface RaceReport {
  readonly label: string;
  readonly admitted: number;
  readonly refused: Readonly<Record<string, number>>;
  readonly settled: number;
  readonly retries: number;
  readonly gaveUp: number;
  /** Most runs held at once as the callers saw them (granted and not yet released): never above the ceiling. */
  readonly mostRunning: number;
  readonly failures: readonly string[];
}

const MAX_RUNS = 4;
const HOLD_TOKENS = 1_000;
/** Reached within the race, so period-ceiling refusals are raced too. */
const CEILING_TOKENS = 100_000;

/**
 * Two instances of a protocol (each its own pool, batcher and, for the optimistic one, cache),
 * eight callers each, race one tenant of 4 concurrent runs and a 100,000-token ceiling for
 * `seconds`. Each admitted run is settled by its instance and, at the same time, replayed by the
 * other (the same run and epoch): exactly one of the two may count it. Checks that the callers
 * never held more than 4 runs, and at the end that nothing is running or held, that the tenant's
 * settled tokens are the sum of the spends counted (and within the ceiling), and that every run
 * row is settled with its spend.
 */
export async function race(
  url: string,
  schema: string,
  label: string,
  make: (pool: pg.Pool) => Protocol,
  seconds: number,
): Promise<RaceReport> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const pools = [new pg.Pool({ connectionString: url, max: 4 }), new pg.Pool({ connectionString: url, max: 4 })];
  try {
    await createModel(admin, schema);
    await addTenant(admin, schema, 'race', MAX_RUNS, CEILING_TOKENS);
    const instances = pools.map(make);
    const nextRun = monotonicFactory();
    const failures: string[] = [];
    const refused: Record<string, number> = {};
    let running = 0;
    let mostRunning = 0;
    let admitted = 0;
    let settled = 0;
    let spentTokens = 0;
    const deadline = performance.now() + seconds * 1000;
    const caller = async (own: Protocol, other: Protocol): Promise<void> => {
      while (performance.now() < deadline) {
        const run = `run_${nextRun()}`;
        const verdict = await decideUntilDone(own, { kind: 'admit', tenant: 'race', run, holdTokens: HOLD_TOKENS });
        if (verdict !== 'admitted') {
          refused[verdict] = (refused[verdict] ?? 0) + 1;
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        admitted += 1;
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        if (running > MAX_RUNS) failures.push(`${running} runs held at once, above the ceiling of ${MAX_RUNS}`);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1; // Before the settle is sent, so this count never exceeds the database's.
        const spendTokens = 1 + Math.floor(Math.random() * HOLD_TOKENS);
        const settle = { kind: 'settle', tenant: 'race', run, epoch: 1, spendTokens } as const;
        const answers: Verdict[] = await Promise.all([decideUntilDone(own, settle), decideUntilDone(other, settle)]);
        const counted = answers.filter((answer) => answer === 'settled').length;
        if (counted !== 1 || !answers.every((answer) => answer === 'settled' || answer === 'already-settled')) {
          failures.push(`run ${run}: settle and its replay answered ${answers.join(' and ')}`);
        }
        settled += counted;
        spentTokens += counted * spendTokens;
      }
    };
    const [first, second] = instances as [Protocol, Protocol];
    const callers = Array.from({ length: 16 }, (_, index) => (index % 2 === 0 ? caller(first, second) : caller(second, first)));
    for (const outcome of await Promise.allSettled(callers)) if (outcome.status === 'rejected') failures.push(`a caller failed: ${String(outcome.reason)}`);
    const tenant = (await admin.query(`SELECT running, held_tokens, settled_tokens FROM ${schema}.tenants WHERE tenant = 'race'`)).rows[0];
    const runs = (
      await admin.query(
        `SELECT count(*)::int AS rows, count(*) FILTER (WHERE settled_at_ms IS NULL)::int AS unsettled, coalesce(sum(spend_tokens), 0)::bigint AS spent FROM ${schema}.runs`,
      )
    ).rows[0];
    const expect = (what: string, actual: unknown, wanted: number): void => {
      if (Number(actual) !== wanted) failures.push(`${what}: ${String(actual)}, expected ${wanted}`);
    };
    expect('running at the end', tenant?.running, 0);
    expect('held tokens at the end', tenant?.held_tokens, 0);
    expect('settled tokens against the spends counted', tenant?.settled_tokens, spentTokens);
    expect('run rows against the admissions', runs?.rows, admitted);
    expect('unsettled run rows', runs?.unsettled, 0);
    expect('run rows spend against the spends counted', runs?.spent, spentTokens);
    if (Number(tenant?.settled_tokens) > CEILING_TOKENS) failures.push(`settled ${String(tenant?.settled_tokens)} above the ceiling ${CEILING_TOKENS}`);
    if ((refused['period-ceiling'] ?? 0) === 0) failures.push('the ceiling was never reached: race longer');
    const retries = instances.reduce((sum, instance) => sum + instance.retries.count, 0);
    const gaveUp = instances.reduce((sum, instance) => sum + instance.gaveUp.count, 0);
    return { label, admitted, refused, settled, retries, gaveUp, mostRunning, failures: [...new Set(failures)] };
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.end();
  }
}
