import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// Attacks on `events` and `alerts` from the CLI (docs/design/rules.md#e7, #e8).

const OPS = { actor: 'ops', basis: 'asserted' } as const;

let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  await (await openStore(url)).close();
});
afterEach(() => dir.remove());

describe('events of a deleted tenant from the CLI', () => {
  it('E4 E8 a deleted tenant\'s events stay in the log, retired: every-event reads list them, the tenant\'s own none', async () => {
    const store = await openStore(url);
    try {
      const plane = createPlane({ store, clock: new ManualClock(Date.now()) });
      await plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: OPS, newTenant: true });
      await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: OPS });
      await plane.lift({ tenant: 'acme', scope: 'tenant', by: OPS });
      await plane.deleteTenant({ tenant: 'acme', by: OPS, reason: 'customer left' });
      expect((await plane.events({ tenant: 'acme' })).events).toEqual([]);
    } finally {
      await store.close();
    }
    const all = await runCli(['events', '--json', '--store', url]);
    expect(all.status).toBe(0);
    expect((JSON.parse(all.stdout) as { events: { tenant: string; type: string }[] }).events.map((event) => [event.tenant, event.type])).toEqual([
      ['acme', 'halt.set'],
      ['acme', 'halt.lifted'],
    ]);
    const own = await runCli(['events', '--tenant', 'acme', '--store', url]);
    expect(own.status).toBe(1);
    expect(own.stderr).toContain("'acme'");
  });
});
