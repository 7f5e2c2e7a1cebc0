import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'q.db')}`;
  const store = await openStore(url);
  const plane = createPlane({ store });
  await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
  await plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });
  await plane.admit({ tenant: 'acme', run: 'run-a', budget: BUDGET });
  await store.close();
});
afterEach(() => dir.remove());

const json = async (args: readonly string[]) => {
  const { status, stdout, stderr } = await runCli([...args, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
};

describe('quotaplane delete-tenant', () => {
  it('L95.7: refuses, as a usage error, without --confirm repeating the name, and without --reason', async () => {
    const none = await runCli(['delete-tenant', 'acme', '--reason', 'left', '--store', url, '--actor', 'ops']);
    expect([none.status, none.stderr]).toEqual([2, expect.stringContaining("deleting 'acme' cannot be undone: repeat its name with --confirm acme")]);
    const wrong = await runCli(['delete-tenant', 'acme', '--reason', 'left', '--confirm', 'acm', '--store', url, '--actor', 'ops']);
    expect([wrong.status, wrong.stderr]).toEqual([2, expect.stringContaining("--confirm 'acm' is not the tenant named ('acme')")]);
    const reasonless = await runCli(['delete-tenant', 'acme', '--confirm', 'acme', '--store', url, '--actor', 'ops']);
    expect([reasonless.status, reasonless.stderr]).toEqual([2, expect.stringContaining('--reason')]);
    const actorless = await runCli(['delete-tenant', 'acme', '--reason', 'left', '--confirm', 'acme', '--store', url]);
    expect([actorless.status, actorless.stderr]).toEqual([2, expect.stringContaining('--actor')]);
  });

  it('L95.4: exits 1 naming what stands in the way; after a release it deletes, and the tenant is listed no more (L95.5, L95.6)', async () => {
    const refused = await runCli(['delete-tenant', 'acme', '--reason', 'left', '--confirm', 'acme', '--store', url, '--actor', 'ops']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/tenant 'acme' cannot be deleted yet: 1 running run\(s\)/);
    expect((await runCli(['release', 'run-a', '--tenant', 'acme', '--store', url, '--actor', 'ops'])).status).toBe(0);

    const deleted = await json(['delete-tenant', 'acme', '--reason', 'left', '--confirm', 'acme', '--store', url, '--actor', 'ops']);
    expect(deleted.status).toBe(0);
    expect(deleted.body).toMatchObject({ tenant: 'acme', keysDeleted: [], audit: { action: 'tenant.delete', by: { actor: 'ops', basis: 'asserted' } } });
    const status = await json(['status', '--store', url]);
    expect(status.body.tenants.map((tenant: { tenant: string }) => tenant.tenant)).toEqual(['globex']);
    const audit = await json(['audit', '--tenant', 'acme', '--store', url]);
    expect(audit.body.rows.map((row: { action: string }) => row.action)).toEqual(['tenant.delete', 'run.release', 'quota.set']);
    const text = await runCli(['delete-tenant', 'acme', '--reason', 'again', '--confirm', 'acme', '--store', url, '--actor', 'ops']);
    expect([text.status, text.stderr]).toEqual([1, expect.stringContaining("tenant 'acme' does not exist")]);
  });

  it('L95.5, L95.7: through a server, an operator key of every tenant deletes and the tenant’s own keys stop working; a key of one tenant may not', async () => {
    const store = await openStore(url);
    const keys = store.apiKeys!();
    const all = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-all', atMs: 1 });
    const globexOps = mintApiKey({ role: 'operator', tenant: 'globex', name: 'ops-globex', atMs: 1 });
    await keys.create(all.key);
    await keys.create(globexOps.key);
    const app = await buildApp({ plane: createPlane({ store }), store, keys });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const server = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      const narrow = await runCli(['delete-tenant', 'globex', '--reason', 'left', '--confirm', 'globex', '--url', server, '--key', globexOps.secret]);
      expect(narrow.status).not.toBe(0);
      expect(narrow.stderr).toMatch(/every tenant/);
      const deleted = await json(['delete-tenant', 'globex', '--reason', 'left', '--confirm', 'globex', '--url', server, '--key', all.secret]);
      expect(deleted.status).toBe(0);
      expect(deleted.body).toMatchObject({ tenant: 'globex', keysDeleted: [globexOps.key.id], audit: { by: { actor: 'ops-all', basis: 'authenticated' } } });
      // Its chain is still read and verified through the server.
      const audit = await json(['audit', '--tenant', 'globex', '--verify', '--url', server, '--key', all.secret]);
      expect([audit.status, audit.body.ok]).toEqual([0, true]);
      const after = await runCli(['status', '--url', server, '--key', globexOps.secret]);
      expect(after.status).toBe(2);
      expect(after.stderr).toMatch(/key/i);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
