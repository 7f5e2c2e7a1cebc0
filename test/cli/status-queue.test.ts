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

  it('counts the conditions that need a person and the stranded runs, in text and --json', async () => {
    dir = temporaryDirectory();
    const url = `sqlite:${join(dir.path, 'quota.db')}`;
    const store = await openStore(url);
    try {
      const plane = createPlane({ store });
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 5 }, { newTenant: true });
      await plane.setQuota('globex', { period: 'monthly', maxConcurrentRuns: 5 }, { newTenant: true });
      // A run whose lease lapsed a minute ago: its process died.
      const lapsed = await store.tenant('acme').admit({ run: 'run-dead', budget: {}, width: 1, atMs: Date.now() - 120_000, leaseMs: 60_000 });
      expect(lapsed.ok).toBe(true);
      // The sweep finds it and frees its slot: the run is stranded, its spend still to settle.
      await store.tenant('acme').sweepRun({ run: 'run-dead', atMs: Date.now() });
    } finally {
      await store.close();
    }
    const text = await runCli(['status', '--store', url]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/tenant acme [^]*attention {5}\d+ condition\(s\), 1 run\(s\) stranded: see quotaplane attention --tenant acme/);
    expect(text.stdout).toMatch(/tenant globex [^]*attention {5}none/);
    const json = await runCli(['status', '--tenant', 'acme', '--store', url, '--json']);
    const attention = (JSON.parse(json.stdout) as { tenants: { attention: { conditions: number; stranded: number; truncated: boolean } }[] }).tenants[0]?.attention;
    expect(attention).toMatchObject({ stranded: 1, truncated: false });
    expect(attention?.conditions).toBeGreaterThanOrEqual(1);
  });
});
