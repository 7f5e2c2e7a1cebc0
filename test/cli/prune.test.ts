import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// `quotaplane prune --older-than` on a store and through a server. Runs are
// concluded on 2026-01-05, long before the wall clock the CLI reads, so 90d covers them.

const T0 = Date.UTC(2026, 0, 5, 8);
let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'q.db')}`;
  const store = await openStore(url);
  const plane = createPlane({ store, clock: new ManualClock(T0) });
  for (const [tenant, run] of [['acme', 'run-a'], ['acme', 'run-b'], ['globex', 'run-g']] as const) {
    await plane.admit({ tenant, run });
    await plane.settle({ tenant, run, epoch: 1, spend: { tokens: 5, minorUnits: 0 }, concludes: true });
  }
  await plane.admit({ tenant: 'acme', run: 'run-open' });
  await store.close();
});
afterEach(() => dir.remove());

async function json(args: readonly string[]) {
  const { status, stdout, stderr } = await runCli([...args, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

describe('quotaplane prune', () => {
  it('--dry-run needs no --actor, says what would go and changes nothing; the prune then removes exactly that', async () => {
    const dry = await json(['prune', '--older-than', '90d', '--dry-run', '--store', url]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.body).toMatchObject({ dryRun: true, olderThanMs: 90 * 86_400_000, total: { runs: 3, passes: 3, receipts: 3, rateDispatches: 0 } });
    const again = await json(['prune', '--older-than', '90d', '--dry-run', '--store', url]);
    expect(again.body.total).toEqual(dry.body.total);

    const done = await json(['prune', '--older-than', '90d', '--store', url, '--actor', 'ops-alice']);
    expect(done.status, done.stderr).toBe(0);
    expect(done.body).toMatchObject({ dryRun: false, total: dry.body.total, tenants: dry.body.tenants });
    const runs = await json(['runs', '--tenant', 'acme', '--all', '--store', url]);
    expect(runs.body.runs.map((run: { run: string }) => run.run)).toEqual(['run-open']);
    const verified = await json(['audit', '--verify', '--store', url]);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.body.ok).toBe(true);
    const audit = await json(['audit', '--tenant', 'acme', '--action', 'run.prune', '--store', url]);
    expect(audit.body.rows[0]).toMatchObject({ by: { actor: 'ops-alice', basis: 'asserted' }, detail: { runs: ['run-a', 'run-b'] } });
  });

  it('prints a table for a person, and a settle retried afterwards exits 1 with the pruned conflict', async () => {
    const { status, stdout } = await runCli(['prune', '--older-than', '12w', '--store', url, '--actor', 'ops-alice']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/TENANT\s+RUNS\s+PASSES\s+RECEIPTS\s+RATE INSTANTS/);
    expect(stdout).toMatch(/acme\s+2\s+2\s+2\s+0/);
    expect(stdout).toContain('removed 3 run(s), 3 pass(es), 3 receipt(s) and 0 rate instant(s)');
    const retry = await runCli(['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '5', '--minor-units', '0', '--conclude', '--store', url, '--actor', 'ops-alice']);
    expect(retry.status).toBe(1);
    expect(retry.stderr).toContain('pruned');
  });

  it('refuses an age without a unit, a prune without --actor, and a bad batch size, as usage errors (exit 2), touching nothing', async () => {
    const bare = await runCli(['prune', '--older-than', '90', '--store', url, '--actor', 'ops']);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('--older-than');
    expect(bare.stderr).toContain('a bare number has no unit');
    for (const age of ['0d', '-1d']) {
      const notPositive = await runCli(['prune', '--older-than', age, '--store', url, '--actor', 'ops']);
      expect(notPositive.status).toBe(2);
      expect(notPositive.stderr).toContain('an age must be positive');
      expect(notPositive.stderr).not.toContain('bare number');
    }
    const noActor = await runCli(['prune', '--older-than', '90d', '--store', url]);
    expect(noActor.status).toBe(2);
    expect(noActor.stderr).toContain('--actor');
    const batch = await runCli(['prune', '--older-than', '90d', '--batch-size', '0', '--store', url, '--actor', 'ops']);
    expect(batch.status).toBe(2);
    expect(batch.stderr).toContain('--batch-size');
    const runs = await json(['runs', '--tenant', 'acme', '--all', '--store', url]);
    expect(runs.body.runs).toHaveLength(3);
  });

  it('through a server (--url, --key) it answers what it answers on the store, recorded under the key', async () => {
    const store = await openStore(url);
    const keys = store.apiKeys?.();
    if (keys === undefined) throw new Error('no API keys');
    const minted = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-key', atMs: T0 });
    await keys.create(minted.key);
    const app = await buildApp({ plane: createPlane({ store }), store, keys });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const server = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const pruned = await json(['prune', '--older-than', '90d', '--tenant', 'acme', '--url', server, '--key', minted.secret]);
      expect(pruned.status, pruned.stderr).toBe(0);
      expect(pruned.body).toMatchObject({ tenants: [{ tenant: 'acme', runs: 2, passes: 2, receipts: 2, rateDispatches: 0 }] });
      const [row] = (await createPlane({ store }).auditLog({ tenant: 'acme', action: 'run.prune' })).rows;
      expect(row?.by).toEqual({ actor: 'ops-key', basis: 'authenticated' });
    } finally {
      await app.close();
      await store.close();
    }
  });
});
