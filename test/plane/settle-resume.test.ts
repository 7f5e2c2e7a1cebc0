import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { PassGrant } from '../../src/store/types.js';
import { ALICE, HOUR_MS, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

const ZERO = { tokens: 0, minorUnits: 0 };
const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

function admitted(answer: { ok: boolean; message?: string }): PassGrant {
  if (!answer.ok) throw new Error(`refused: ${answer.message ?? ''}`);
  return answer as PassGrant;
}

describe('plane.settle and plane.resume on SQLite', () => {
  it('G14 a run settles 100 and pauses; resumed an hour later and concluded with 0, spent stays 100', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const first = admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 1000, maxCallTokens: 100 } }));
    expect(first.hold).toEqual(tokens(1100));

    await plane.settle({ tenant: 'acme', run: first.run, epoch: first.epoch, spend: tokens(100), concludes: false });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ period: '2026-01', spent: tokens(100), reserved: tokens(1000), running: 0 });

    clock.advance(HOUR_MS);
    const second = await plane.resume({ tenant: 'acme', run: first.run });
    expect(second).toEqual({ ok: true, run: first.run, epoch: 2, period: '2026-01', hold: tokens(1000), leaseExpiresAtMs: T0 + HOUR_MS + 60_000 });
    const done = await plane.settle({ tenant: 'acme', run: first.run, epoch: 2, spend: ZERO, concludes: true });

    expect(done.receipt).toEqual({ run: first.run, epoch: 2, period: '2026-01', spend: ZERO, releaseSlot: false, concludes: true });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ spent: tokens(100), reserved: ZERO, running: 0 });
  });

  it('G14 a resume that crosses into the next daily period carries the hold into it', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    clock.set(Date.UTC(2026, 0, 5, 23, 30));
    await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const first = admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 1000, maxCallTokens: 100 } }));
    expect(first.period).toBe('2026-01-05');
    await plane.settle({ tenant: 'acme', run: first.run, epoch: 1, spend: tokens(100), concludes: false });

    clock.advance(HOUR_MS); // 00:30 the next day
    const resumed = await plane.resume({ tenant: 'acme', run: first.run });

    expect(resumed).toMatchObject({ epoch: 2, period: '2026-01-06', hold: tokens(1000) });
    expect(await plane.usage({ tenant: 'acme', period: '2026-01-05' })).toMatchObject({ spent: tokens(100), reserved: ZERO });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ period: '2026-01-06', spent: ZERO, reserved: tokens(1000) });

    await plane.settle({ tenant: 'acme', run: first.run, epoch: 2, spend: tokens(50), concludes: true });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ spent: tokens(50), reserved: ZERO });
    expect(await plane.usage({ tenant: 'acme', period: '2026-01-05' })).toMatchObject({ spent: tokens(100), reserved: ZERO });
  });

  it('a resume is never refused for concurrency, spend or a workload halt, and takes no slot', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1000 }, { newTenant: true });
    const paused = admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 400, maxCallTokens: 100 } }));
    await plane.settle({ tenant: 'acme', run: paused.run, epoch: 1, spend: tokens(100), concludes: false });
    admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 500, maxCallTokens: 0 } })); // the slot, and the period full
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE });
    expect((await plane.admit({ tenant: 'acme', budget: { maxTokens: 0, maxCallTokens: 0 } })).ok).toBe(false);

    const resumed = await plane.resume({ tenant: 'acme', run: paused.run });

    expect(resumed).toMatchObject({ ok: true, epoch: 2, hold: tokens(400) });
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(1);
  });

  it('settle is idempotent: an identical retry answers already-settled and changes nothing', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { newTenant: true });
    const pass = admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 1000, maxCallTokens: 10 } }));
    const request = { tenant: 'acme', run: pass.run, epoch: 1, spend: tokens(300), concludes: true };

    const first = await plane.settle(request);
    const retry = await plane.settle(request);

    expect(first).toEqual({
      ok: true,
      outcome: 'settled',
      receipt: { run: pass.run, epoch: 1, period: '2026-01', spend: tokens(300), releaseSlot: true, concludes: true },
      overrun: ZERO,
    });
    expect(retry).toEqual({ ...first, outcome: 'already-settled' });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ spent: tokens(300), reserved: ZERO, running: 0 });
  });

  it('a conflicting retry of the same pass rejects with CONFLICT and changes nothing (docs/design/rules.md#l22)', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { newTenant: true });
    const pass = admitted(await plane.admit({ tenant: 'acme', budget: { maxTokens: 1000, maxCallTokens: 10 } }));
    await plane.settle({ tenant: 'acme', run: pass.run, epoch: 1, spend: tokens(300), concludes: false });
    const before = await plane.usage({ tenant: 'acme' });

    for (const change of [{ spend: tokens(301) }, { concludes: true }]) {
      const attempt = plane.settle({ tenant: 'acme', run: pass.run, epoch: 1, spend: tokens(300), concludes: false, ...change });
      await expect(attempt).rejects.toBeInstanceOf(QuotaError);
      await expect(attempt).rejects.toMatchObject({ code: 'CONFLICT' });
    }
    expect(await plane.usage({ tenant: 'acme' })).toEqual(before);
  });

  it('settling an unknown pass or resuming an unknown run is NOT_FOUND; resuming a concluded run is CONFLICT', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await expect(plane.settle({ tenant: 'acme', run: 'run_nobody', epoch: 1, spend: ZERO, concludes: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(plane.resume({ tenant: 'acme', run: 'run_nobody' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const pass = admitted(await plane.admit({ tenant: 'acme' }));
    await expect(plane.settle({ tenant: 'acme', run: pass.run, epoch: 2, spend: ZERO, concludes: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await plane.settle({ tenant: 'acme', run: pass.run, epoch: 1, spend: ZERO, concludes: true });
    await expect(plane.resume({ tenant: 'acme', run: pass.run })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('settle and resume accept a bare ULID for a run admitted under run_<ULID>', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const pass = admitted(await plane.admit({ tenant: 'acme' }));
    const bare = pass.run.slice('run_'.length);
    await plane.settle({ tenant: 'acme', run: bare, epoch: 1, spend: ZERO, concludes: false });
    expect(await plane.resume({ tenant: 'acme', run: bare })).toMatchObject({ run: pass.run, epoch: 2 });
  });
});
