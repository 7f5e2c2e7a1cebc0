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
  it('E8 `events --tenant` reads the events a deleted tenant kept, as GET /v1/tenants/{t}/events does', async () => {
    const store = await openStore(url);
    try {
      const plane = createPlane({ store, clock: new ManualClock(Date.now()) });
      await plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: OPS, newTenant: true });
      await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: OPS });
      await plane.lift({ tenant: 'acme', scope: 'tenant', by: OPS });
      await plane.deleteTenant({ tenant: 'acme', by: OPS, reason: 'customer left' });
      // The library reads them: the log kept them (TENANT_KEPT_TABLES).
      expect((await plane.events({ tenant: 'acme' })).events).toHaveLength(2);
    } finally {
      await store.close();
    }
    const read = await runCli(['events', '--tenant', 'acme', '--json', '--store', url]);
    expect(read.stderr).toBe('');
    expect(read.status).toBe(0);
    expect((JSON.parse(read.stdout) as { events: unknown[] }).events).toHaveLength(2);
  });
});
