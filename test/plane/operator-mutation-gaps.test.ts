import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { pooledRandom } from '../../src/plane/pooled-random.js';
import { ALICE, BOB, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// Operator-side rules mutation testing found unasserted: a sweep pages through every
// lapsed run, attention on a withheld run whose halt is gone, listings refuse bad statuses, and
// generated run ids carry real randomness.

const LEASE_MS = 10_000;

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function invalidField(promise: Promise<unknown>): Promise<string> {
  const caught = await promise.then(
    () => expect.unreachable('the input was accepted'),
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(QuotaError);
  expect((caught as QuotaError).code).toBe('INVALID_ARGUMENT');
  const field = String((caught as QuotaError).details.field);
  expect((caught as QuotaError).message).toMatch(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: must .*got `));
  return field;
}

describe('sweep pages through every lapsed run', () => {
  it('frees more lapsed runs than one page holds (100), and exactly a page', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1000 }, { newTenant: true });
    const ids = Array.from({ length: 250 }, (_, index) => `run-${String(index).padStart(3, '0')}`);
    for (const run of ids) expect((await plane.admit({ tenant: 'acme', run })).ok).toBe(true);
    for (const run of ['run-x0', 'run-x1']) expect((await plane.admit({ tenant: 'globex', run, atMs: T0 + LEASE_MS })).ok).toBe(true);

    const result = await plane.sweep({ atMs: T0 + LEASE_MS });
    expect(result.atMs).toBe(T0 + LEASE_MS);
    expect(result.swept.map((run) => `${run.tenant}/${run.run}`)).toEqual(ids.map((run) => `acme/${run}`));
    expect(result.swept.every((run) => run.releasedSlot && run.stranded)).toBe(true);
    expect((await plane.slotHolders({ tenant: 'acme', limit: 1000 })).runs).toEqual([]);
    expect((await plane.runs({ tenant: 'acme', statuses: ['stranded'], limit: 1000 })).runs.length).toBe(250);
    // globex's leases were still live at that instant.
    expect((await plane.slotHolders({ tenant: 'globex' })).runs.length).toBe(2);
    expect((await plane.sweep({ atMs: T0 + LEASE_MS })).swept).toEqual([]);
  });

  it('a page of exactly 100 lapsed runs is swept whole and the walk ends', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    for (let index = 0; index < 100; index += 1) await plane.admit({ tenant: 'acme', run: `run-${String(index).padStart(3, '0')}` });
    expect((await plane.sweep({ atMs: T0 + LEASE_MS, tenant: 'acme' })).swept.length).toBe(100);
  });

  it('sweeps only the tenant named', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await plane.admit({ tenant: 'globex', run: 'run-g' });
    expect((await plane.sweep({ atMs: T0 + LEASE_MS, tenant: 'globex' })).swept.map((run) => run.run)).toEqual(['run-g']);
    expect((await plane.slotHolders({ tenant: 'acme' })).runs.length).toBe(1);
  });
});

describe('attention on withheld runs', () => {
  async function withheldRun(): Promise<MemoryPlane> {
    const made = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane, clock } = made;
    expect((await plane.admit({ tenant: 'acme', run: 'run-w', chain: ['user:alice', 'svc:mail'] })).ok).toBe(true);
    await plane.halt({ tenant: 'acme', scope: 'subject:user:alice', reason: 'laptop lost', by: ALICE, newTenant: true });
    clock.advance(1000);
    const beat = await plane.heartbeat({ tenant: 'acme', run: 'run-w', epoch: 1 });
    expect(beat.ok === false && beat.refusal.code).toBe('Withheld');
    return made;
  }

  it('while the subject halt stands: names the halt and how to lift it', async () => {
    fixture = await withheldRun();
    const { plane, clock } = fixture;
    clock.advance(5000);
    const report = await plane.attention({ tenant: 'acme' });
    const withheld = report.conditions.filter((condition) => condition.kind === 'run.withheld');
    expect(withheld).toEqual([
      {
        kind: 'run.withheld',
        tenant: 'acme',
        run: 'run-w',
        epoch: null,
        halt: 'subject:user:alice',
        sinceMs: T0 + 1000,
        ageMs: 5000,
        summary: "run 'run-w' of tenant 'acme' is withheld: authority of 'user:alice' was withdrawn (laptop lost)",
        remedy: {
          text: 'restore the authority (lift subject:user:alice) and resume the run, or release it to abandon it',
          cli: ['quotaplane lift subject:user:alice --tenant acme', 'quotaplane release run-w --tenant acme'],
          http: [
            'POST /v1/tenants/acme/halts/lift {"scope":"subject:user:alice"}',
            'POST /v1/runs/run-w/resume {"tenant":"acme"}',
            'POST /v1/tenants/acme/runs/run-w/release',
          ],
        },
      },
    ]);
  });

  it('after the subject halt was lifted: no halt, and resume or release as the remedy', async () => {
    fixture = await withheldRun();
    const { plane } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'unrelated', by: BOB, newTenant: true });
    await plane.lift({ tenant: 'acme', scope: 'subject:user:alice', by: BOB });
    const report = await plane.attention({ tenant: 'acme' });
    const withheld = report.conditions.filter((condition) => condition.kind === 'run.withheld');
    expect(withheld).toEqual([
      {
        kind: 'run.withheld',
        tenant: 'acme',
        run: 'run-w',
        epoch: null,
        halt: null,
        sinceMs: T0 + 1000,
        ageMs: 0,
        summary: "run 'run-w' of tenant 'acme' was withheld by a halt that has since been lifted",
        remedy: {
          text: 'the halt was lifted: resume the run, or release it to abandon it',
          cli: ['quotaplane release run-w --tenant acme'],
          http: ['POST /v1/runs/run-w/resume {"tenant":"acme"}', 'POST /v1/tenants/acme/runs/run-w/release'],
        },
      },
    ]);
    expect(report.needsAttention).toBe(true);
  });
});

describe('attention: its own inputs', () => {
  it('refuses a negative, fractional or non-number holdStaleAfterMs, and takes 0', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    for (const bad of [-1, 1.5, '60000']) expect(await invalidField(plane.attention({ holdStaleAfterMs: bad as never }))).toBe('holdStaleAfterMs');
    expect((await plane.attention({ holdStaleAfterMs: 0 })).holdStaleAfterMs).toBe(0);
  });

  it('stops each kind at the limit and says which kinds were cut', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    for (const run of ['run-1', 'run-2', 'run-3']) await plane.admit({ tenant: 'acme', run });
    await plane.sweep({ atMs: T0 + LEASE_MS });
    const report = await plane.attention({ atMs: T0 + LEASE_MS, limit: 2 });
    expect(report.conditions.map((condition) => `${condition.kind} ${condition.run}`)).toEqual([
      'run.stranded run-1',
      'run.stranded run-2',
      'pass.unsettled run-1',
      'pass.unsettled run-2',
    ]);
    expect(report).toMatchObject({ truncated: true, truncatedKinds: ['run.stranded', 'pass.unsettled'] });
    const whole = await plane.attention({ atMs: T0 + LEASE_MS, limit: 3 });
    expect(whole).toMatchObject({ truncated: false, truncatedKinds: [] });
    expect(whole.conditions.length).toBe(6);
  });
});

describe('operator listings refuse bad statuses', () => {
  it.each([
    [[], 'statuses'],
    ['running', 'statuses'],
    [null, 'statuses'],
    [['running', 'asleep'], 'statuses[1]'],
    [['Running'], 'statuses[0]'],
    [[7], 'statuses[0]'],
  ])('statuses %j is refused, naming %s', async (statuses, field) => {
    fixture = await memoryPlane();
    expect(await invalidField(fixture.plane.runs({ tenant: 'acme', statuses: statuses as never }))).toBe(field);
  });

  it('each status filters to its runs', async () => {
    fixture = await memoryPlane({ leaseMs: LEASE_MS });
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await plane.admit({ tenant: 'acme', run: 'run-b' });
    await plane.settle({ tenant: 'acme', run: 'run-b', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    expect((await plane.runs({ tenant: 'acme', statuses: ['running'] })).runs.map((run) => run.run)).toEqual(['run-a']);
    expect((await plane.runs({ tenant: 'acme', statuses: ['concluded'] })).runs.map((run) => run.run)).toEqual(['run-b']);
    expect((await plane.runs({ tenant: 'acme', statuses: ['running', 'concluded'] })).runs.map((run) => run.run)).toEqual(['run-a', 'run-b']);
    expect((await plane.runs({ tenant: 'acme' })).runs.map((run) => run.run)).toEqual(['run-a', 'run-b']);
  });

  it('pages runs by id: truncated and next come from one more row than the page', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    for (const run of ['run-a', 'run-b', 'run-c']) await plane.admit({ tenant: 'acme', run });
    const first = await plane.runs({ tenant: 'acme', limit: 2 });
    expect(first).toMatchObject({ truncated: true, next: 'run-b' });
    expect(first.runs.map((run) => run.run)).toEqual(['run-a', 'run-b']);
    const rest = await plane.runs({ tenant: 'acme', limit: 2, after: first.next ?? undefined });
    expect(rest).toMatchObject({ truncated: false, next: null });
    expect(rest.runs.map((run) => run.run)).toEqual(['run-c']);
    expect((await plane.runs({ tenant: 'acme', limit: 3 })).truncated).toBe(false);
    expect(await invalidField(plane.runs({ tenant: 'acme', after: '' }))).toBe('after');
  });
});

describe('generated run ids carry real randomness', () => {
  it('pooledRandom draws fresh bytes in [0, 1) on every refill', () => {
    const next = pooledRandom();
    const draws = Array.from({ length: 2048 }, () => next());
    expect(draws.every((value) => value >= 0 && value < 1)).toBe(true);
    // Each value is a byte over 256.
    expect(draws.every((value) => Number.isInteger(value * 256))).toBe(true);
    // 2048 draws from 256 values: nearly all appear, the mean is near one half, and no pool repeats the one before.
    expect(new Set(draws).size).toBeGreaterThan(200);
    const mean = draws.reduce((sum, value) => sum + value, 0) / draws.length;
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.6);
    const pools = Array.from({ length: 8 }, (_, index) => draws.slice(index * 256, (index + 1) * 256).join(','));
    expect(new Set(pools).size).toBe(8);
    // The first pool is drawn too, not left as zeros.
    expect(draws.slice(0, 256).filter((value) => value === 0).length).toBeLessThan(16);
  });

  it('two planes generate different ids at the same instant, and ids differ beyond their time part', async () => {
    fixture = await memoryPlane();
    const { plane, store, clock } = fixture;
    const { createPlane } = await import('../../src/plane/create-plane.js');
    const other = createPlane({ store, clock });
    const ids: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      clock.advance(1);
      const a = await plane.admit({ tenant: 'acme' });
      const b = await other.admit({ tenant: 'acme' });
      if (!a.ok || !b.ok) throw new Error('admission refused');
      ids.push(a.run, b.run);
    }
    expect(new Set(ids).size).toBe(40);
    const randomParts = ids.map((id) => id.slice('run_'.length + 10));
    expect(new Set(randomParts).size).toBe(40);
    // Every character of the random part ranges over the alphabet, not a constant.
    const firstChars = new Set(randomParts.map((part) => part[0]));
    expect(firstChars.size).toBeGreaterThan(5);
  });
});
