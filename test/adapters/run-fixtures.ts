import { createClient } from '../../src/client/create-client.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { injectFetch, serviceFixture } from '../http/http-fixtures.js';

/** 2026-01-05T08:00:00Z, where both targets' clocks stand (the HTTP fixture's T0). */
export const T0 = 1_767_600_000_000;
/** The operator the scenarios name: what the HTTP service records for the fixture key `ops-all`. */
export const OPS = { actor: 'ops-all', basis: 'authenticated' } as const;
/** The rate-ceilinged grant the scenarios' tools dispatch. */
export const REFUND = 'tool://payments/refund';

/** A plane to run a scenario on, and how to close it. */
export interface Target {
  readonly plane: Plane;
  close(): Promise<void>;
}

/** The in-process plane on a fresh SQLite store, its clock stopped at T0. */
export async function planeTarget(): Promise<Target> {
  const store = await openStore('sqlite::memory:');
  return { plane: createPlane({ store, clock: new ManualClock(T0) }), close: () => store.close() };
}

/**
 * The HTTP client of `buildApp` (the existing service fixture, through app.inject): the run's
 * verbs and the model calls go through a runner key of acme, as an agent's would; quotas, halts and the books through
 * an operator key of every tenant.
 */
export async function clientTarget(): Promise<Target> {
  const fixture = await serviceFixture();
  const fetch = injectFetch(fixture.app);
  const operator = createClient({ url: 'http://quotaplane.test', key: fixture.key.opAll.secret, fetch });
  const runner = createClient({ url: 'http://quotaplane.test', key: fixture.key.runAcme.secret, fetch });
  const plane: Plane = {
    ...operator,
    admit: runner.admit,
    resume: runner.resume,
    heartbeat: runner.heartbeat,
    dispatch: runner.dispatch,
    settle: runner.settle,
    reserveCall: runner.reserveCall,
    adjustCall: runner.adjustCall,
    releaseCall: runner.releaseCall,
  };
  return { plane, close: () => fixture.close() };
}

/** The tenant's books after a scenario: the period's figures and every run's registry row (ids are the scenario's own). */
export async function booksOf(plane: Plane, tenant: string): Promise<unknown> {
  const usage = await plane.usage({ tenant });
  const runs = await plane.runs({ tenant });
  return JSON.parse(JSON.stringify({ usage, runs: runs.runs })) as unknown;
}

/** Sets the scenarios' quota: 2 concurrent runs, token and money ceilings, and 2 refunds per minute. */
export async function standardQuota(plane: Plane, tenant: string): Promise<void> {
  await plane.setQuota(
    tenant,
    {
      period: 'monthly',
      maxConcurrentRuns: 2,
      maxTokensPerPeriod: 1_000_000,
      maxMinorUnitsPerPeriod: 10_000_000,
      rateCeilings: { [REFUND]: [{ count: 2, windowSeconds: 60 }] },
    },
    { by: OPS, newTenant: true },
  );
}

/** A price in micro-USD per million tokens: $3 in, $15 out, $0.30 cache reads. */
export const PRICE = { inputPerMillion: 3_000_000, outputPerMillion: 15_000_000, cacheReadPerMillion: 300_000 } as const;
