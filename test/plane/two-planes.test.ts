import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { ALICE, T0, tempDir } from './plane-fixtures.js';

// Two instances: two stores (two connections) on one SQLite file, each with its own plane.
let remove: () => void;
let stores: QuotaStore[];
let one: Plane;
let two: Plane;

beforeEach(async () => {
  const temp = tempDir();
  remove = temp.remove;
  const url = `sqlite:${join(temp.dir, 'quota.db')}`;
  stores = [await openStore(url), await openStore(url)];
  const clock = new ManualClock(T0);
  one = createPlane({ store: stores[0]!, clock });
  two = createPlane({ store: stores[1]!, clock });
});

afterEach(async () => {
  for (const store of stores) await store.close();
  remove();
});

const ZERO = { tokens: 0, minorUnits: 0 };

async function runToEnd(plane: Plane, tenant: string): Promise<void> {
  const pass = await plane.admit({ tenant });
  if (!pass.ok) throw new Error(`admission refused: ${pass.message}`);
  await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: ZERO, concludes: true });
}

describe('two planes on one SQLite file', () => {
  it('G11 a tenant halt thrown through plane one refuses admission on both planes, naming the reason', async () => {
    await runToEnd(one, 'acme');
    await one.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42: runaway spend', by: ALICE, newTenant: true });
    for (const plane of [one, two]) {
      const answer = await plane.admit({ tenant: 'acme' });
      expect(answer.ok).toBe(false);
      if (answer.ok) return;
      expect(answer.refusal).toMatchObject({ code: 'Halted', tenant: 'acme', scope: 'tenant' });
      expect(answer.refusal.code === 'Halted' && answer.refusal.reason).toContain('incident 42');
      expect(answer.message).toContain("the whole tenant is halted by an operator (tenant 'acme'): incident 42");
    }
  });

  it('G12 another tenant on the same store is still admitted while acme is halted', async () => {
    await one.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    const globex = await two.admit({ tenant: 'globex' });
    expect(globex.ok).toBe(true);
    expect((await one.admit({ tenant: 'acme' })).ok).toBe(false);
  });

  it('G13 a lift through plane one lets plane two admit', async () => {
    await one.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    expect((await two.admit({ tenant: 'acme' })).ok).toBe(false);
    expect(await one.lift({ tenant: 'acme', scope: 'tenant', by: ALICE })).toEqual({ wasStanding: true, removed: true });
    await runToEnd(two, 'acme');
    expect(await two.halts('acme')).toEqual([]);
  });

  it('a quota set through one plane applies to the very next admission through the other (docs/design/decisions.md "The quota is read where the decision is made")', async () => {
    expect((await two.admit({ tenant: 'acme' })).ok).toBe(true);
    await one.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    const refused = await two.admit({ tenant: 'acme' });
    expect(refused.ok === false && refused.refusal).toMatchObject({ code: 'TooManyRuns', running: 1, limit: 1 });
  });
});
