import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// `quotaplane halt tenant --tenant acmee` meaning acme (rules.md#l95): refused with exit 1, naming
// the tenant, suggesting acme and saying --new-tenant, on a store and through a server alike;
// nothing is written, so status still lists acme alone.

let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  expect((await runCli(['migrate', '--store', url])).status).toBe(0);
  const created = await runCli(['quota', 'set', '--tenant', 'acme', '--new-tenant', '--max-concurrent-runs', '3', '--actor', 'ops-alice', '--store', url]);
  expect(created.status, created.stderr).toBe(0);
});

afterEach(() => dir.remove());

const onStore = ['--actor', 'ops-alice', '--store', () => url] as const;
const args = (words: readonly (string | (() => string))[]) => words.map((word) => (typeof word === 'function' ? word() : word));

describe('a tenant that does not exist, in the CLI', () => {
  it("L95.1 halt, lift, quota set, quota update, keys create and release naming 'acmee' exit 1 with 'did you mean acme? pass --new-tenant', and write nothing", async () => {
    const before = await runCli(['audit', '--tenant', 'acme', '--store', url, '--json']);
    const acts = [
      ['halt', ['halt', 'tenant', '--tenant', 'acmee', '--reason', 'incident 42', ...onStore]],
      ['halt', ['halt', 'subject:alice', '--tenant', 'acmee', '--reason', 'leaked token', ...onStore]],
      ['lift', ['lift', 'tenant', '--tenant', 'acmee', ...onStore]],
      ['quota', ['quota', 'set', '--tenant', 'acmee', '--max-concurrent-runs', '0', ...onStore]],
      ['quota', ['quota', 'update', '--tenant', 'acmee', '--max-concurrent-runs', '0', ...onStore]],
      ['key', ['keys', 'create', '--tenant', 'acmee', '--role', 'runner', ...onStore]],
      ['release', ['release', 'run-1', '--tenant', 'acmee', ...onStore]],
    ] as const;
    for (const [act, words] of acts) {
      const result = await runCli(args(words));
      expect(result.status, `${act}: ${result.stderr}`).toBe(1);
      expect(result.stdout, act).toBe('');
      expect(result.stderr, act).toContain(`error: tenant 'acmee' does not exist in store ${url}: it has no quota and no history`);
      expect(result.stderr, act).toContain("did you mean 'acme'?");
      if (act === 'lift' || act === 'release') expect(result.stderr, act).not.toContain('--new-tenant');
      else expect(result.stderr, act).toContain("pass --new-tenant to create 'acmee'");
    }
    const asJson = await runCli([...args(['halt', 'tenant', '--tenant', 'acmee', '--reason', 'x', ...onStore]), '--json']);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: 'NOT_FOUND', exitStatus: 1, field: 'tenant' } });

    const status = await runCli(['status', '--store', url, '--json']);
    expect((JSON.parse(status.stdout) as { tenants: { tenant: string }[] }).tenants.map((row) => row.tenant)).toEqual(['acme']);
    expect((await runCli(['audit', '--tenant', 'acme', '--store', url, '--json'])).stdout).toBe(before.stdout);
    expect((await runCli(['halts', '--tenant', 'acmee', '--store', url])).status).toBe(1);
    expect((await runCli(['keys', 'list', '--store', url, '--json'])).stdout).toContain('"keys": []');
  });

  it('L95.2 with --new-tenant, halt creates the tenant, which status lists from then on', async () => {
    const halted = await runCli(args(['halt', 'tenant', '--tenant', 'initech', '--new-tenant', '--reason', 'onboarding', ...onStore]));
    expect(halted.status, halted.stderr).toBe(0);
    const status = await runCli(['status', '--store', url, '--json']);
    expect((JSON.parse(status.stdout) as { tenants: { tenant: string }[] }).tenants.map((row) => row.tenant)).toEqual(['acme', 'initech']);
    expect((await runCli(args(['lift', 'tenant', '--tenant', 'initech', ...onStore]))).status).toBe(0);
  });

  it('L95.1 through a server, the same refusal names the server and --new-tenant; --new-tenant creates', async () => {
    const store = await openStore(url);
    const apiKeys = store.apiKeys?.();
    if (apiKeys === undefined) throw new Error('the store keeps API keys');
    const minted = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-all', atMs: Date.now() });
    await apiKeys.create(minted.key);
    const app = await buildApp({ plane: createPlane({ store }), store, keys: apiKeys });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const server = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const through = ['--url', server, '--key', minted.secret];
      const refused = await runCli(['halt', 'tenant', '--tenant', 'acmee', '--reason', 'incident 42', ...through]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`error: tenant 'acmee' does not exist in server ${server}: it has no quota and no history; did you mean 'acme'? pass --new-tenant to create 'acmee'`);
      const key = await runCli(['keys', 'create', '--tenant', 'acmee', '--role', 'runner', ...through]);
      expect(key.status).toBe(1);
      expect(key.stderr).toContain("did you mean 'acme'? pass --new-tenant to create 'acmee'");
      expect((await runCli(['status', ...through, '--json'])).stdout).not.toContain('acmee');
      const created = await runCli(['quota', 'update', '--tenant', 'acmee', '--new-tenant', '--max-concurrent-runs', '1', ...through]);
      expect(created.status, created.stderr).toBe(0);
      expect((await runCli(['halt', 'tenant', '--tenant', 'acmee', '--reason', 'incident 42', ...through])).status).toBe(0);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
