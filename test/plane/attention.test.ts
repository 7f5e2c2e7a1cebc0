import { afterEach, describe, expect, it } from 'vitest';

import { ATTENTION_KINDS, DEFAULT_HOLD_STALE_AFTER_MS } from '../../src/plane/operator-types.js';
import { ALICE, HOUR_MS, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const LEASE_MS = 10_000;

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane.attention lists what needs a person', () => {
  it('reports nothing on a healthy plane', async () => {
    fixture = await memoryPlane();
    await fixture.plane.admit({ tenant: 'acme', run: 'run-ok' });
    expect(await fixture.plane.attention()).toEqual({
      atMs: T0,
      holdStaleAfterMs: DEFAULT_HOLD_STALE_AFTER_MS,
      needsAttention: false,
      conditions: [],
      items: [],
      truncated: false,
      truncatedKinds: [],
    });
  });

  it('names every kind with its run, since when it stands, how long, and the commands that end it', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    await plane.admit({ tenant: 'acme', run: 'run-dead', budget: BUDGET });
    await plane.admit({ tenant: 'acme', run: 'run-idle', budget: BUDGET });
    await plane.settle({ tenant: 'acme', run: 'run-idle', epoch: 1, spend: tokens(100), concludes: false });
    await plane.sweep({ atMs: T0 + LEASE_MS });
    clock.set(T0 + 2 * HOUR_MS);

    const report = await plane.attention({ tenant: 'acme', holdStaleAfterMs: HOUR_MS });
    expect(report.needsAttention).toBe(true);
    expect(report.conditions).toEqual([
      {
        kind: 'run.stranded',
        tenant: 'acme',
        run: 'run-dead',
        epoch: 1,
        halt: null,
        sinceMs: T0 + LEASE_MS,
        ageMs: 2 * HOUR_MS - LEASE_MS,
        summary: expect.stringContaining("run 'run-dead' of tenant 'acme' lost its lease (pass 1)"),
        remedy: {
          text: expect.stringContaining('settle pass 1 with what it really spent'),
          cli: [
            'quotaplane settle run-dead --tenant acme --epoch 1 --tokens <tokens> --minor-units <minorUnits> [--conclude]',
            'quotaplane release run-dead --tenant acme',
          ],
          http: [
            'POST /v1/tenants/acme/runs/run-dead/settle {"epoch":1,"spend":{"tokens":<tokens>,"minorUnits":<minorUnits>},"concludes":<true|false>}',
            'POST /v1/tenants/acme/runs/run-dead/release',
          ],
        },
      },
      expect.objectContaining({ kind: 'hold.stale', run: 'run-idle', sinceMs: T0, ageMs: 2 * HOUR_MS }),
      expect.objectContaining({ kind: 'pass.unsettled', run: 'run-dead', epoch: 1, sinceMs: T0 + LEASE_MS }),
    ]);
    // Per run, the dead run is one item with both its reasons, and one remedy: the stranded run's
    // commands already settle its last pass, so the unsettled pass adds no sentence of its own.
    const stranded = report.conditions[0];
    expect(report.items).toEqual([
      {
        tenant: 'acme',
        run: 'run-dead',
        reasons: ['run.stranded', 'pass.unsettled'],
        epochs: [1],
        halt: null,
        sinceMs: T0 + LEASE_MS,
        ageMs: 2 * HOUR_MS - LEASE_MS,
        summaries: [stranded?.summary, report.conditions[2]?.summary],
        remedy: stranded?.remedy,
      },
      expect.objectContaining({ run: 'run-idle', reasons: ['hold.stale'], epochs: [], sinceMs: T0, ageMs: 2 * HOUR_MS }),
    ]);
    // A hold younger than the threshold is not stale yet.
    const lenient = await plane.attention({ tenant: 'acme', holdStaleAfterMs: 3 * HOUR_MS });
    expect(lenient.conditions.map((condition) => condition.kind)).toEqual(['run.stranded', 'pass.unsettled']);

    // Settling the real spend ends both conditions of the stranded run; releasing ends the stale hold.
    await plane.settle({ tenant: 'acme', run: 'run-dead', epoch: 1, spend: tokens(5), concludes: true, by: ALICE });
    await plane.release({ tenant: 'acme', run: 'run-idle', by: ALICE });
    expect((await plane.attention({ tenant: 'acme', holdStaleAfterMs: HOUR_MS })).conditions).toEqual([]);
  });

  it('covers every tenant when none is named, and reads one more row than the limit so truncated is a fact', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    for (const tenant of ['acme', 'globex']) {
      for (const run of ['run-1', 'run-2']) await plane.admit({ tenant, run });
    }
    await plane.sweep({ atMs: T0 + LEASE_MS });

    const exact = await plane.attention({ limit: 4, atMs: T0 + LEASE_MS });
    expect(exact.truncated).toBe(false);
    expect(exact.conditions.filter((condition) => condition.kind === 'run.stranded').map((c) => `${c.tenant}/${c.run}`)).toEqual([
      'acme/run-1',
      'acme/run-2',
      'globex/run-1',
      'globex/run-2',
    ]);
    const cut = await plane.attention({ limit: 3, atMs: T0 + LEASE_MS });
    expect(cut.truncated).toBe(true);
    expect(cut.truncatedKinds).toEqual(['run.stranded', 'pass.unsettled']);
    expect(cut.conditions).toHaveLength(6);
    expect(ATTENTION_KINDS).toEqual(['run.stranded', 'run.withheld', 'hold.stale', 'pass.unsettled', 'run.overran', 'spend.overrun']);
  });

  it('refuses a bad limit or age, naming the field', async () => {
    fixture = await memoryPlane();
    await expect(fixture.plane.attention({ limit: 0 })).rejects.toMatchObject({ details: { field: 'limit' } });
    await expect(fixture.plane.attention({ holdStaleAfterMs: -1 })).rejects.toMatchObject({ details: { field: 'holdStaleAfterMs' } });
  });
});
