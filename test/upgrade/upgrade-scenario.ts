// The books the upgrade fixture holds, written through the public library API (the plane, the
// store port's tenant handles and the API key admin), never with SQL, at fixed instants so the
// same scenario writes the same books on SQLite and PostgreSQL. Run only by
// scripts/make-upgrade-fixture.ts, at a release tag (docs/compatibility.md#the-upgrade-test).

import {
  MAX_LEASE_MS,
  WAITER_LEASE_MS,
  createPlane,
  storeApiKeyAdmin,
  type ApiKeyRole,
  type Plane,
  type QuotaStore,
} from '../../src/index.js';
import { hashApiKey } from '../../src/http/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { FIXTURE_KEY_SECRETS } from './upgrade-books.js';
import { FIXTURE_READ_AT, FIXTURE_T0 } from './upgrade-fixture.js';

const MINUTE = 60_000;
export const ALICE = { actor: 'ops-alice', basis: 'asserted' } as const;
export const BOB = { actor: 'ops-bob', basis: 'authenticated' } as const;
export const RESEARCHER = { name: 'researcher', digest: 'a1'.repeat(32) } as const;
export const REFUND = 'tool://payments/refund';
/** A budget bounding both units, as acme's quota requires. */
export const ACME_BUDGET = { maxTokens: 100_000, maxCallTokens: 2_000, maxMinorUnits: 5_000, maxCallMinorUnits: 100 } as const;
export const GLOBEX_BUDGET = { maxMinorUnits: 2_000, maxCallMinorUnits: 50 } as const;

/** Throws unless an answer is `ok`: a scenario step that was refused would leave other books than meant. */
function ok<T extends { ok: boolean }>(step: string, answer: T): T {
  if (!answer.ok) throw new Error(`upgrade scenario: ${step} was refused: ${JSON.stringify(answer)}`);
  return answer;
}

/** Deterministic key ids: `key_` and a fixed ULID-shaped suffix numbered `n`. */
function keyId(n: number): string {
  return `key_01KE${String(n).padStart(22, '0')}`;
}

/**
 * Writes the fixture's books into `store` (new and empty) and answers the plane, its clock left at
 * {@link FIXTURE_READ_AT}. What it leaves:
 * - plane ceiling: 50 runs, agent `researcher` 10, weight acme 2 (audited in the plane chain);
 * - acme (monthly; 4 runs, 1,000,000 tokens, 50,000 minor units, refund 5 per hour and 5 per
 *   day, agent researcher 2 runs and 400,000 tokens): run-a1 running with its hold and 4 refund
 *   dispatches (one in the last hour), run-a2 paused after a settled pass then resumed (pass 2
 *   open, no slot), run-a3 concluded, run-a4 stranded by the sweep after its lease lapsed (hold
 *   kept), run-a5 released by an operator, run-a6 running, run-a7 paused by an operator's settle;
 *   a revision halt;
 * - globex (daily; 1 run, 10,000 minor units): run-g0 concluded, run-g1 running, run-g2 waiting;
 * - initech (monthly; 2 runs, then 200,000 tokens by a patch): a tenant halt, a subject halt, and
 *   an agent halt thrown and lifted;
 * - API keys: an operator key of every tenant, acme's runner key, globex's revoked runner key.
 */
export async function writeFixtureBooks(store: QuotaStore): Promise<{ plane: Plane; clock: ManualClock }> {
  const clock = new ManualClock(FIXTURE_T0);
  const plane = createPlane({ store, clock, leaseMs: MAX_LEASE_MS });
  const at = (minutes: number): number => clock.set(FIXTURE_T0 + minutes * MINUTE);

  await plane.setPlaneCeiling({ maxConcurrentRuns: 50, agents: { researcher: { maxConcurrentRuns: 10 } }, weights: { acme: 2 } }, ALICE);
  await plane.setQuota(
    'acme',
    {
      period: 'monthly',
      maxConcurrentRuns: 4,
      maxTokensPerPeriod: 1_000_000,
      maxMinorUnitsPerPeriod: 50_000,
      rateCeilings: { [REFUND]: [{ count: 5, windowSeconds: 3_600 }, { count: 5, windowSeconds: 86_400 }] },
      agents: { researcher: { maxConcurrentRuns: 2, maxTokensPerPeriod: 400_000 } },
    },
    { by: ALICE, newTenant: true },
  );
  await plane.setQuota('globex', { period: 'daily', maxConcurrentRuns: 1, maxMinorUnitsPerPeriod: 10_000 }, { by: BOB, newTenant: true });
  await plane.setQuota('initech', { period: 'monthly', maxConcurrentRuns: 2 }, { by: ALICE, newTenant: true });

  at(1);
  ok('admit run-a1', await plane.admit({ tenant: 'acme', run: 'run-a1', agent: RESEARCHER, chain: ['alice@acme'], budget: ACME_BUDGET }));
  at(2);
  ok('admit run-a2', await plane.admit({ tenant: 'acme', run: 'run-a2', budget: ACME_BUDGET, width: 2 }));
  at(3);
  ok('admit run-a3', await plane.admit({ tenant: 'acme', run: 'run-a3', budget: ACME_BUDGET }));
  at(4);
  ok('admit run-a4', await plane.admit({ tenant: 'acme', run: 'run-a4', budget: ACME_BUDGET, leaseMs: MINUTE }));
  at(5);
  ok('admit run-g0', await plane.admit({ tenant: 'globex', run: 'run-g0', budget: GLOBEX_BUDGET }));
  at(6);
  await plane.settle({ tenant: 'globex', run: 'run-g0', epoch: 1, spend: { tokens: 0, minorUnits: 321 }, concludes: true });
  ok('admit run-g1', await plane.admit({ tenant: 'globex', run: 'run-g1', budget: GLOBEX_BUDGET }));
  for (const [minute, key] of [[7, 'refund-1'], [8, 'refund-2'], [9, 'refund-3']] as const) {
    at(minute);
    ok(`dispatch ${key}`, await plane.dispatch({ tenant: 'acme', run: 'run-a1', grant: REFUND, dispatch: key, epoch: 1 }));
  }
  at(10);
  await plane.settle({ tenant: 'acme', run: 'run-a2', epoch: 1, spend: { tokens: 12_345, minorUnits: 678 }, concludes: false });
  at(11);
  await plane.settle({ tenant: 'acme', run: 'run-a3', epoch: 1, spend: { tokens: 20_000, minorUnits: 1_000 }, concludes: true });
  at(12);
  ok('admit run-a5', await plane.admit({ tenant: 'acme', run: 'run-a5', budget: ACME_BUDGET }));
  at(13);
  await plane.release({ tenant: 'acme', run: 'run-a5', by: BOB });
  at(15);
  ok('heartbeat run-a1', await plane.heartbeat({ tenant: 'acme', run: 'run-a1', epoch: 1 }));
  at(20);
  await plane.halt({ tenant: 'acme', scope: `revision:${'b2'.repeat(32)}`, reason: 'bad build', by: ALICE });
  await plane.halt({ tenant: 'initech', scope: 'agent:rogue', reason: 'runaway loop', by: ALICE });
  at(25);
  await plane.halt({ tenant: 'initech', scope: 'subject:mallory@initech', reason: 'account review', by: BOB });
  at(30);
  await plane.lift({ tenant: 'initech', scope: 'agent:rogue', by: BOB });
  await plane.updateQuota('initech', { maxTokensPerPeriod: 200_000 }, ALICE);
  at(70);
  await plane.sweep({ atMs: clock.nowMs() });
  at(75);
  ok('resume run-a2', await plane.resume({ tenant: 'acme', run: 'run-a2' }));
  at(80);
  ok('admit run-a6', await plane.admit({ tenant: 'acme', run: 'run-a6', budget: ACME_BUDGET }));
  at(85);
  ok('admit run-a7', await plane.admit({ tenant: 'acme', run: 'run-a7', agent: RESEARCHER, budget: ACME_BUDGET }));
  at(86);
  await plane.settle({ tenant: 'acme', run: 'run-a7', epoch: 1, spend: { tokens: 4_000, minorUnits: 90 }, concludes: false, by: BOB });
  at(90);
  await plane.halt({ tenant: 'initech', scope: 'tenant', reason: 'incident 42', by: ALICE });

  at(100);
  const secrets: Record<ApiKeyRole | 'revoked', string> = FIXTURE_KEY_SECRETS;
  let minted = 0;
  const keys = store.apiKeys?.();
  if (keys === undefined) throw new Error('upgrade scenario: the store keeps no API keys');
  const admin = (secret: string) =>
    storeApiKeyAdmin({
      store,
      keys,
      by: ALICE,
      nowMs: () => clock.nowMs(),
      mint: ({ role, tenant, name, atMs }) => {
        const id = keyId(++minted);
        return { secret, key: { id, name: name ?? id, role, tenant, createdAtMs: atMs, hash: hashApiKey(secret) } };
      },
    });
  await admin(secrets.operator).create({ tenant: '*', role: 'operator', name: 'ops-console' });
  at(101);
  await admin(secrets.runner).create({ tenant: 'acme', role: 'runner', name: 'acme-runner' });
  at(102);
  const old = await admin(secrets.revoked).create({ tenant: 'globex', role: 'runner', name: 'globex-old' });
  at(103);
  await admin(secrets.revoked).revoke(old.id);
  at(110);
  ok('dispatch refund-4', await plane.dispatch({ tenant: 'acme', run: 'run-a1', grant: REFUND, dispatch: 'refund-4', epoch: 1 }));

  // A waiter whose caller is gone: it joined the full queue and has not looked again since.
  const waitAt = FIXTURE_READ_AT - 1_000;
  clock.set(waitAt);
  const outcome = await store.tenant('globex').admitOrWait(
    { run: 'run-g2', budget: GLOBEX_BUDGET, width: 1, atMs: waitAt, leaseMs: MAX_LEASE_MS },
    { untilMs: waitAt + 10 * MINUTE, leaseMs: WAITER_LEASE_MS },
  );
  if (!('waiting' in outcome)) throw new Error(`upgrade scenario: run-g2 should wait, got ${JSON.stringify(outcome)}`);
  clock.set(FIXTURE_READ_AT);
  return { plane, clock };
}
