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
});
