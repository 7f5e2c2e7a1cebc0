import { describe, expect, it } from 'vitest';

import { PendingStore } from '../../src/cli/serve/pending-store.js';
import { openStore } from '../../src/store/open-store.js';
import { PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteQuotaStore } from '../../src/store/sqlite/sqlite-store.js';

// `serve` answers through a PendingStore until its store opens, and through it afterwards: a
// capability it does not forward is one the server lacks though the store has it (the plane-wide
// halt once answered 500 over HTTP while it worked on the store).
const methods = (prototype: object): string[] => Object.getOwnPropertyNames(prototype).filter((name) => name !== 'constructor');

describe("serve's pending store", () => {
  it.each([
    ['sqlite', SqliteQuotaStore.prototype],
    ['postgres', PostgresQuotaStore.prototype],
  ])('forwards every method the %s store has', (_backend, prototype) => {
    const forwarded = methods(PendingStore.prototype);
    expect(methods(prototype).filter((name) => !forwarded.includes(name))).toEqual([]);
  });

  it('C49: throws, reads and lifts the plane-wide halt of the store it opened', async () => {
    const store = await openStore('sqlite::memory:');
    const pending = new PendingStore('sqlite');
    pending.open(store);
    try {
      const by = { actor: 'ops', basis: 'asserted' } as const;
      const halt = { scope: { kind: 'plane' }, reason: 'outage', by, atMs: 1, reachesRunning: false } as const;
      const audit = { atMs: 1, by, action: 'plane.halt', subject: 'plane', detail: {} };
      await pending.setPlaneHalt(halt, audit, 'quotaplane:plane');
      expect(await pending.getPlaneHalt()).toMatchObject({ scope: { kind: 'plane' }, reason: 'outage' });
      expect(await pending.liftPlaneHaltIf((await pending.getPlaneHalt())!, { ...audit, action: 'plane.lift' }, 'quotaplane:plane')).toBe(true);
      expect(await pending.getPlaneHalt()).toBeNull();
    } finally {
      await pending.close();
    }
  });

  it('M3: hands the model-call books of the store it opened through, and fails closed before', async () => {
    const pending = new PendingStore('sqlite');
    await expect(pending.callMeters().callCeilings('acme')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const store = await openStore('sqlite::memory:');
    pending.open(store);
    try {
      const meters = pending.callMeters();
      await meters.setCallCeilings('acme', { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] }, 1);
      expect((await meters.reserveCall('acme', { callId: 'a', model: 'm', inputTokens: 1, maxOutputTokens: 1, atMs: 2 })).ok).toBe(true);
      expect((await meters.reserveCall('acme', { callId: 'b', model: 'm', inputTokens: 1, maxOutputTokens: 1, atMs: 3 })).ok).toBe(false);
      expect((await store.callMeters!().call('acme', 'a'))?.status).toBe('open');
    } finally {
      await pending.close();
    }
  });
});
