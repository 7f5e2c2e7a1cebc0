import { afterEach, describe, expect, it } from 'vitest';

import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { PLANE_AUDIT_TENANT } from '../../src/core/identifiers.js';
import { ALICE, memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// In the library: the plane-wide ceiling set, changed and audited like a quota, its
// status, refusals naming their bound, and stores that keep no plane-wide ceiling.

let m: MemoryPlane | undefined;
afterEach(async () => {
  await m?.close();
  m = undefined;
});

const BOT = { name: 'refund-bot', digest: 'cd'.repeat(32) };

describe('the plane-wide ceiling in the library', () => {
  it('setPlaneCeiling and updatePlaneCeiling are audited in the quotaplane:plane chain with old, new and patch, and verify', async () => {
    m = await memoryPlane();
    expect(await m.plane.getPlaneCeiling()).toBeNull();
    expect(await m.plane.setPlaneCeiling({ maxConcurrentRuns: 3 }, ALICE)).toEqual({ maxConcurrentRuns: 3 });
    expect(await m.plane.updatePlaneCeiling({ agents: { 'refund-bot': { maxConcurrentRuns: 1 } } })).toEqual({
      maxConcurrentRuns: 3,
      agents: { 'refund-bot': { maxConcurrentRuns: 1 } },
    });
    const rows = await m.handle(PLANE_AUDIT_TENANT).auditLog({ limit: 10 });
    expect(rows.map((row) => [row.action, row.by.actor])).toEqual([
      ['plane.update', 'library'],
      ['plane.set', 'ops-alice'],
    ]);
    expect(rows[0]?.detail).toEqual({
      old: { maxConcurrentRuns: 3 },
      new: { maxConcurrentRuns: 3, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } },
      patch: { agents: { 'refund-bot': { maxConcurrentRuns: 1 } } },
    });
    const verified = await m.plane.verifyAudit({ tenant: PLANE_AUDIT_TENANT });
    expect(verified.ok).toBe(true);
    expect(verified.tenants.map((t) => t.tenant)).toEqual([PLANE_AUDIT_TENANT]);
  });

  it('a bad ceiling is INVALID_ARGUMENT naming the field, and nothing is stored or audited', async () => {
    m = await memoryPlane();
    const error = await m.plane.setPlaneCeiling({ maxConcurrentRuns: -1 }).catch((caught: unknown) => caught);
    expect(isQuotaError(error, 'INVALID_ARGUMENT') && error.message).toContain('ceiling.maxConcurrentRuns');
    expect(await m.plane.getPlaneCeiling()).toBeNull();
    expect(await m.handle(PLANE_AUDIT_TENANT).auditLog({ limit: 10 })).toEqual([]);
  });

  it('planeStatus counts every tenant and each bounded agent; refusals name their bound with a message saying which ceiling', async () => {
    m = await memoryPlane();
    await m.plane.setPlaneCeiling({ maxConcurrentRuns: 2, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } });
    expect((await m.plane.admit({ tenant: 'acme', run: 'run-1', agent: BOT })).ok).toBe(true);
    const agentRefused = await m.plane.admit({ tenant: 'globex', run: 'run-2', agent: BOT });
    expect(agentRefused).toMatchObject({ ok: false, refusal: { bound: 'plane-agent', agent: 'refund-bot', running: 1, limit: 1 } });
    expect(agentRefused.ok === false && agentRefused.message).toContain("agent 'refund-bot' has 1 run(s) executing across all tenants");
    expect((await m.plane.admit({ tenant: 'globex', run: 'run-3' })).ok).toBe(true);
    const planeRefused = await m.plane.admit({ tenant: 'initech', run: 'run-4' });
    expect(planeRefused).toMatchObject({ ok: false, refusal: { bound: 'plane', running: 2, limit: 2, tenant: 'initech' } });
    expect(await m.plane.planeStatus()).toEqual({
      ceiling: { maxConcurrentRuns: 2, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } },
      running: 2,
      limit: 2,
      agents: [{ agent: 'refund-bot', running: 1, limit: 1 }],
      halt: null,
    });
  });

  it('a store that keeps no plane-wide ceiling reads none, and setting one is STORE_MISCONFIGURED', async () => {
    m = await memoryPlane();
    const { getPlaneCeiling: _get, setPlaneCeiling: _set, planeUsage: _usage, ...rest } = m.store as unknown as Record<string, unknown>;
    const bare = { ...rest, backend: 'bare', tenant: (t: string) => m!.store.tenant(t), tenants: () => m!.store.tenants(), close: async () => undefined };
    const plane = createPlane({ store: bare as never });
    expect(await plane.getPlaneCeiling()).toBeNull();
    const error = await plane.setPlaneCeiling({ maxConcurrentRuns: 1 }).catch((caught: unknown) => caught);
    expect(isQuotaError(error, 'STORE_MISCONFIGURED')).toBe(true);
    expect(await plane.planeStatus()).toEqual({ ceiling: null, running: null, limit: null, agents: [], halt: null });
  });
});
