import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// `quotaplane status` shows a tenant's waiting admissions.

let dir: { path: string; remove: () => void } | null = null;
afterEach(() => {
  dir?.remove();
  dir = null;
});

describe('status shows the waiting queue', () => {
  it('names how many admissions wait and how long the oldest has, in text and --json', async () => {
    dir = temporaryDirectory();
    const url = `sqlite:${join(dir.path, 'quota.db')}`;
    const store = await openStore(url);
    const joinedAtMs = Date.now() - 5_000;
    try {
      const plane = createPlane({ store });
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await plane.admit({ tenant: 'acme', run: 'run-1' });
      const waiting = await store
        .tenant('acme')
        .admitOrWait({ run: 'run-2', budget: {}, width: 1, atMs: joinedAtMs, leaseMs: 60_000 }, { untilMs: joinedAtMs + 600_000, leaseMs: 600_000 });
      expect(waiting).toMatchObject({ waiting: true, position: 1 });
    } finally {
      await store.close();
    }
    const text = await runCli(['status', '--tenant', 'acme', '--store', url]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/waiting {7}1 admission\(s\), the oldest for \d+ ms/);
    const json = await runCli(['status', '--tenant', 'acme', '--store', url, '--json']);
    const queue = (JSON.parse(json.stdout) as { tenants: { queue: { depth: number; oldestWaitMs: number } }[] }).tenants[0]?.queue;
    expect(queue?.depth).toBe(1);
    expect(queue?.oldestWaitMs).toBeGreaterThanOrEqual(5_000);
  });
});
