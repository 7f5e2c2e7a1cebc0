import { decodeTime } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';

import { snapshotTenant } from '../../src/testing/conformance/no-writes.js';
import { ALICE, HOUR_MS, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

const ZERO = { tokens: 0, minorUnits: 0 };
const RUN_ULID = /^run_[0-9A-HJKMNP-TV-Z]{26}$/;
const DIGEST = 'c0ffee'.padEnd(64, '0');

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('plane.admit on SQLite', () => {
  it('G6 with a ceiling of 0 a run is refused, running stays 0 and nothing is written', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { newTenant: true });
    const probe = { periods: ['2026-01'], runs: ['run_g6'] };
    const before = await snapshotTenant(handle('acme'), probe);

    const answer = await plane.admit({ tenant: 'acme', run: 'run_g6' });

    expect(answer.ok).toBe(false);
    expect(await snapshotTenant(handle('acme'), probe)).toEqual(before);
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
  });

  it('G7 with a ceiling of 1, three runs in sequence are each admitted and settled, and running is 0 after', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    for (let i = 0; i < 3; i += 1) {
      const pass = await plane.admit({ tenant: 'acme' });
      if (!pass.ok) throw new Error(`run ${i} was refused: ${pass.message}`);
      expect((await plane.usage({ tenant: 'acme' })).running).toBe(1);
      clock.advance(1000);
      const settled = await plane.settle({ tenant: 'acme', run: pass.run, epoch: pass.epoch, spend: ZERO, concludes: true });
      expect(settled.outcome).toBe('settled');
    }
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
  });

  it('G10 a ceiling of 0 answers TooManyRuns with running 0 as a refusal value, not an exception', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { newTenant: true });
    const answer = await plane.admit({ tenant: 'acme' });
    expect(answer).toEqual({
      ok: false,
      refusal: { code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'tenant' },
      message: expect.stringContaining("tenant 'acme' has 0 run(s) executing"),
    });
  });

  it('a second run past a ceiling of 1 is refused TooManyRuns with running 1', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    expect((await plane.admit({ tenant: 'acme' })).ok).toBe(true);
    const second = await plane.admit({ tenant: 'acme' });
    expect(second.ok === false && second.refusal).toEqual({ code: 'TooManyRuns', tenant: 'acme', running: 1, limit: 1, bound: 'tenant' });
  });

  it('a quota that bounds tokens refuses a run declaring no maxTokens as Unbounded, and writes nothing', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { newTenant: true });
    const probe = { periods: ['2026-01'], runs: ['run_unbounded'] };
    const before = await snapshotTenant(handle('acme'), probe);

    const answer = await plane.admit({ tenant: 'acme', run: 'run_unbounded', budget: { maxCallTokens: 10 } });

    expect(answer.ok === false && answer.refusal).toEqual({ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'tenant' });
    expect(answer.ok === false && answer.message).toContain('declares no maxTokens');
    expect(await snapshotTenant(handle('acme'), probe)).toEqual(before);
  });

  it('the hold is ceiling + width × per-call bound, and a hold that does not fit is refused SpentOut', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
    const budget = { maxTokens: 400, maxCallTokens: 50 };
    const first = await plane.admit({ tenant: 'acme', budget, width: 3 });
    expect(first.ok && first.hold).toEqual({ tokens: 550, minorUnits: 0 });
    expect(first.ok && first.period).toBe('2026-01');
    const second = await plane.admit({ tenant: 'acme', budget, width: 1 });
    expect(second.ok && second.hold).toEqual({ tokens: 450, minorUnits: 0 }); // an exact fill is admitted
    const third = await plane.admit({ tenant: 'acme', budget: { maxTokens: 0, maxCallTokens: 0 } });
    expect(third.ok).toBe(true);
    const refused = await plane.admit({ tenant: 'acme', budget: { maxTokens: 1, maxCallTokens: 0 } });
    expect(refused.ok === false && refused.refusal).toEqual({
      code: 'SpentOut',
      tenant: 'acme',
      period: '2026-01',
      unit: 'tokens',
      settled: 0,
      reserved: 1000,
      requested: 1,
      limit: 1000,
      bound: 'tenant',
    });
  });

  it('width defaults to 1', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { newTenant: true });
    const pass = await plane.admit({ tenant: 'acme', budget: { maxTokens: 100, maxCallTokens: 7 } });
    expect(pass.ok && pass.hold).toEqual({ tokens: 107, minorUnits: 0 });
  });

  it('a missing run id is run_ + a ULID whose time is the admission instant, and ids sort by admission', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const pass = await plane.admit({ tenant: 'acme' });
      if (!pass.ok) throw new Error(pass.message);
      expect(pass.run).toMatch(RUN_ULID);
      expect(decodeTime(pass.run.slice('run_'.length))).toBe(clock.nowMs());
      ids.push(pass.run);
      if (i % 2 === 1) clock.advance(1); // two in the same millisecond must still sort in order
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
    const explicit = await plane.admit({ tenant: 'acme', atMs: T0 + HOUR_MS });
    expect(explicit.ok && decodeTime(explicit.run.slice(4))).toBe(T0 + HOUR_MS);
  });

  it('a bare ULID gets the run_ prefix and any other id is kept as given', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const bare = await plane.admit({ tenant: 'acme', run: '01JB0000000000000000000000' });
    expect(bare.ok && bare.run).toBe('run_01JB0000000000000000000000');
    const own = await plane.admit({ tenant: 'acme', run: 'order-4711' });
    expect(own.ok && own.run).toBe('order-4711');
  });

  it('pass 1 has epoch 1 and a lease of the plane default (60 s), a plane option, or the call', async () => {
    fixture = await memoryPlane();
    const defaulted = await fixture.plane.admit({ tenant: 'acme' });
    expect(defaulted.ok && [defaulted.epoch, defaulted.leaseExpiresAtMs, defaulted.hold]).toEqual([1, T0 + 60_000, null]);
    const perCall = await fixture.plane.admit({ tenant: 'acme', leaseMs: 5_000 });
    expect(perCall.ok && perCall.leaseExpiresAtMs).toBe(T0 + 5_000);
    await fixture.close();

    fixture = await memoryPlane({ leaseMs: 15_000 });
    const configured = await fixture.plane.admit({ tenant: 'acme' });
    expect(configured.ok && configured.leaseExpiresAtMs).toBe(T0 + 15_000);
  });

  it('an agent digest in upper case is matched by the revision halt on it', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.halt({ tenant: 'acme', scope: `revision:${DIGEST}`, reason: 'bad deploy', by: ALICE, newTenant: true });
    const answer = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST.toUpperCase() } });
    expect(answer.ok === false && answer.refusal).toMatchObject({ code: 'Halted', scope: `revision:${DIGEST}`, reason: 'bad deploy' });
  });

  it('an unlimited tenant is still accounted: every admitted run takes a slot', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'acme' });
    await plane.admit({ tenant: 'acme' });
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(2);
  });
});

describe('plane.admit retried', () => {
  it('a retried admission of the same run answers its first pass again and takes no second slot', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    const first = await plane.admit({ tenant: 'acme', run: 'order-1' });
    clock.advance(5000);
    const retry = await plane.admit({ tenant: 'acme', run: 'order-1' });
    expect(retry).toEqual(first);
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(1);
    await plane.settle({ tenant: 'acme', run: 'order-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    await expect(plane.admit({ tenant: 'acme', run: 'order-1' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
