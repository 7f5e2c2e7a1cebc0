import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { releaseStranded } from '../../src/plane/release.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// `quotaplane release --stranded --tenant T`: every stranded run released and audited one by one,
// on a store and through a server, with per-run results, progress on stderr and exit statuses.

const T0 = Date.UTC(2026, 0, 5, 8);
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

let dir: { path: string; remove: () => void };
let url: string;

async function seed(stranded: number): Promise<void> {
  const store = await openStore(url);
  const plane = createPlane({ store, clock: new ManualClock(T0) });
  await plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
  for (let i = 0; i < stranded; i += 1) await plane.admit({ tenant: 'acme', run: `run-${String(i).padStart(3, '0')}`, budget: BUDGET, leaseMs: 60_000 });
  await plane.admit({ tenant: 'acme', run: 'run-live', budget: BUDGET, leaseMs: 86_400_000 });
  await plane.sweep({ tenant: 'acme', atMs: T0 + 120_000 });
  await store.close();
}

async function json(args: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const { status, stdout, stderr } = await runCli([...args, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

beforeEach(() => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'q.db')}`;
});
afterEach(() => dir.remove());

describe('quotaplane release --stranded', () => {
  it('releases every stranded run of the tenant, each audited as run.release, and leaves running ones alone', async () => {
    await seed(3);
    const answer = await json(['release', '--stranded', '--tenant', 'acme', '--store', url, '--actor', 'ops-alice']);
    expect(answer.status).toBe(0);
    expect(answer.body).toMatchObject({ tenant: 'acme', released: 3, failed: 0, skipped: 0, truncated: false });
    expect(answer.body.results.map((r: any) => [r.run, r.result, r.outcome.previousStatus])).toEqual([
      ['run-000', 'released', 'stranded'],
      ['run-001', 'released', 'stranded'],
      ['run-002', 'released', 'stranded'],
    ]);
    const audit = await json(['audit', '--tenant', 'acme', '--store', url]);
    const releases = audit.body.rows.filter((row: any) => row.action === 'run.release');
    expect(releases.map((row: any) => row.subject).sort()).toEqual(['run-000', 'run-001', 'run-002']);
    expect(releases.every((row: any) => row.by.actor === 'ops-alice')).toBe(true);
    const runs = await json(['runs', '--tenant', 'acme', '--store', url]);
    expect(runs.body.runs.find((r: any) => r.run === 'run-live').status).toBe('running');

    // Nothing stranded any more: exit 0, nothing written.
    const again = await runCli(['release', '--stranded', '--tenant', 'acme', '--store', url, '--actor', 'ops-alice']);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("tenant 'acme' has no stranded run; nothing was written");
  });

  it('reports progress on stderr for many runs, and works through a server under the key name', async () => {
    await seed(30);
    const store = await openStore(url);
    const apiKeys = store.apiKeys!();
    const minted = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-bob', atMs: T0 });
    await apiKeys.create(minted.key);
    const app = await buildApp({ plane: createPlane({ store }), store, keys: apiKeys });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const served = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const text = await runCli(['release', '--stranded', '--tenant', 'acme', '--url', served, '--key', minted.secret]);
      expect(text.status).toBe(0);
      expect(text.stdout).toMatch(/^tenant 'acme': released 30 of 30 stranded runs\n/);
      expect(text.stdout).toMatch(/\n  released run-029 \(was stranded\): .*; audit row \d+\n/);
      expect(text.stderr).toContain('quotaplane release --stranded: 25 of 30 runs done');
      expect(text.stderr).toContain('quotaplane release --stranded: 30 of 30 runs done');
      const [row] = await store.tenant('acme').auditLog({ limit: 1 });
      expect(row).toMatchObject({ action: 'run.release', by: { actor: 'ops-bob', basis: 'authenticated' } });
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('reports a failed release per run and never counts it released; exit 1 (4 when the store did not answer)', async () => {
    await seed(2);
    const store = await openStore(url);
    try {
      const plane = createPlane({ store });
      const by = { actor: 'ops-carol', basis: 'asserted' as const };
      const report = await releaseStranded(
        {
          runs: (input) => plane.runs(input),
          release: async (input) => {
            if (input.run === 'run-001') throw Object.assign(new Error('the store could not answer'), { code: 'STORE_UNAVAILABLE' });
            return plane.release({ ...input, by });
          },
        },
        'acme',
      );
      expect(report).toMatchObject({ released: 1, failed: 1, skipped: 0 });
      expect(report.results[1]).toEqual({ run: 'run-001', result: 'failed', error: { code: 'STORE_UNAVAILABLE', message: 'the store could not answer' } });
      // Only the runs a person confirmed, and only while stranded: run-000 was released above, run-live runs.
      const confirmed = await releaseStranded({ runs: (input) => plane.runs(input), release: (input) => plane.release({ ...input, by }) }, 'acme', {
        only: ['run-000', 'run-001', 'run-live'],
      });
      expect(confirmed.results.map((r) => [r.run, r.result])).toEqual([
        ['run-000', 'skipped'],
        ['run-001', 'released'],
        ['run-live', 'skipped'],
      ]);
      expect((await plane.runs({ tenant: 'acme', statuses: ['running'] })).runs.map((r) => r.run)).toEqual(['run-live']);

      // A run listed as stranded that runs again by the time of its release (resumed in between)
      // is skipped by the release's own transaction, never released.
      const stale = await releaseStranded(
        {
          runs: async () => ({ runs: [{ run: 'run-live' } as never], truncated: false, next: null }),
          release: (input) => plane.release({ ...input, by }),
        },
        'acme',
      );
      expect(stale).toMatchObject({ released: 0, failed: 0, skipped: 1 });
      expect(stale.results[0]).toMatchObject({ run: 'run-live', result: 'skipped', reason: expect.stringMatching(/is running now, not stranded; nothing was released/) });
      expect((await plane.runs({ tenant: 'acme', statuses: ['running'] })).runs.map((r) => r.run)).toEqual(['run-live']);
    } finally {
      await store.close();
    }
  });

  it('is a usage error with both a run and --stranded, or neither', async () => {
    expect((await runCli(['release', 'run-1', '--stranded', '--tenant', 'acme', '--store', url, '--actor', 'a'])).status).toBe(2);
    const neither = await runCli(['release', '--tenant', 'acme', '--store', url, '--actor', 'a']);
    expect(neither.status).toBe(2);
    expect(neither.stderr).toContain('--stranded');
  });
});
