import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { staleHoldRemedy, strandedRemedy, unsettledPassRemedy, withheldRemedy } from '../../src/plane/attention-remedies.js';
import { memoryPlane, observedStore, T0, HOUR_MS, type MemoryPlane } from './plane-fixtures.js';

// Attention's exact summaries and remedies for every kind, and the read it skips.

const LEASE_MS = 10_000;

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('remedies, as a person types them', () => {
  it('escape tenant and run in HTTP paths, and put the tenant in a resume body', () => {
    expect(staleHoldRemedy('a/b', 'run 1')).toEqual({
      text: 'resume the run and conclude it, or release it to give the hold back',
      cli: ['quotaplane release run 1 --tenant a/b'],
      http: ['POST /v1/runs/run%201/resume {"tenant":"a/b"}', 'POST /v1/tenants/a%2Fb/runs/run%201/release'],
    });
  });

  it('an unsettled pass is settled with what it spent', () => {
    expect(
      unsettledPassRemedy('acme', { run: 'run-a', epoch: 3, period: '2026-01', takesSlot: false, startedAtMs: 0, leaseExpiresAtMs: 1 } as never),
    ).toEqual({
      text: 'settle pass 3 with what it really spent (0 if it spent nothing), so its period is booked',
      cli: ['quotaplane settle run-a --tenant acme --epoch 3 --tokens <tokens> --minor-units <minorUnits> [--conclude]'],
      http: [
        'POST /v1/tenants/acme/runs/run-a/settle {"epoch":3,"spend":{"tokens":<tokens>,"minorUnits":<minorUnits>},"concludes":<true|false>}',
      ],
    });
  });

  it('a stranded run is settled, released, or resumed', () => {
    const remedy = strandedRemedy('acme', { run: 'run-a', lastEpoch: 2 } as never);
    expect(remedy.text).toBe(
      'settle pass 2 with what it really spent (concluding it if the work is over), or release the run to give back any spend it holds; a runner may also resume it',
    );
    expect(remedy.cli[0]).toContain('--epoch 2');
  });

  it('a withheld run with a standing halt lifts it; without one, resumes or releases', () => {
    expect(withheldRemedy('acme', 'run-w', 'subject:p').http[0]).toBe('POST /v1/tenants/acme/halts/lift {"scope":"subject:p"}');
    expect(withheldRemedy('acme', 'run-w', null)).toEqual({
      text: 'the halt was lifted: resume the run, or release it to abandon it',
      cli: ['quotaplane release run-w --tenant acme'],
      http: ['POST /v1/runs/run-w/resume {"tenant":"acme"}', 'POST /v1/tenants/acme/runs/run-w/release'],
    });
  });
});

describe('attention summaries', () => {
  it('says what each condition is, with its figures', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000, maxMinorUnitsPerPeriod: 1_000_000 }, { newTenant: true });
    const budget = { maxTokens: 100, maxCallTokens: 10, maxMinorUnits: 50, maxCallMinorUnits: 5 };
    expect((await plane.admit({ tenant: 'acme', run: 'run-dead', budget })).ok).toBe(true);
    expect((await plane.admit({ tenant: 'acme', run: 'run-idle', budget })).ok).toBe(true);
    await plane.settle({ tenant: 'acme', run: 'run-idle', epoch: 1, spend: { tokens: 10, minorUnits: 5 }, concludes: false });
    await plane.sweep({ atMs: T0 + LEASE_MS });
    clock.set(T0 + 2 * HOUR_MS);
    const report = await plane.attention({ tenant: 'acme', holdStaleAfterMs: HOUR_MS });
    expect(Object.fromEntries(report.conditions.map((condition) => [condition.kind, condition.summary]))).toEqual({
      'run.stranded':
        "run 'run-dead' of tenant 'acme' lost its lease (pass 1) and was stranded: its slot is back, and any spend it holds stays held until its real spend is known",
      'hold.stale': "run 'run-idle' of tenant 'acme' is paused and still holds 100 tokens and 50 minor units in 2026-01",
      'pass.unsettled': "pass 1 of run 'run-dead' (tenant 'acme') lost its lease and never settled, so its spend is not booked",
    });
  });

  it('reads no halts when no run is withheld', async () => {
    fixture = await memoryPlane();
    const { store, clock } = fixture;
    const observed = observedStore(store);
    const plane = createPlane({ store: observed.store, clock });
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    observed.calls.length = 0;
    await plane.attention({ tenant: 'acme' });
    // Overruns read the overrun passes and the quota; the halts are never read.
    expect(observed.calls).toEqual(['runs', 'runs', 'idleHolds', 'unsettledPasses', 'overranPasses', 'getQuota']);
  });
});
