import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { startServer, type StartedServer } from '../../src/cli/serve/start-server.js';
import { KEYS_AUDIT_TENANT } from '../../src/core/identifiers.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// Operator routes create (secret shown once), list and revoke API keys; the
// CLI's keys verbs work through a server as on a store; every creation and revocation is an audit
// row (who, key id, name, role, tenant) that audit --verify checks.

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served(): Promise<{ server: StartedServer; storeUrl: string; key: string }> {
  const dir = temporaryDirectory();
  cleanups.push(dir.remove);
  const storeUrl = `sqlite:${join(dir.path, 'keys.db')}`;
  const server = await startServer({ storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
  cleanups.push(() => server.close());
  return { server, storeUrl, key: server.firstKey?.secret ?? '' };
}

async function json(args: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const result = await runCli([...args, '--json']);
  return { status: result.status, body: result.stdout === '' ? undefined : JSON.parse(result.stdout), stderr: result.stderr };
}

describe('API keys over HTTP, audited', () => {
  it('keys create --expires-in and keys rotate --overlap work through a server as on a store, and the first key records its use', async () => {
    const { server, key } = await served();
    const through = ['--url', server.url, '--key', key];
    const created = await json(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--name', 'worker', '--expires-in', '7d', ...through]);
    expect(created.status, created.stderr).toBe(0);
    expect(created.body.expiresAtMs - created.body.createdAtMs).toBe(7 * 86_400_000);
    const rotated = await json(['keys', 'rotate', created.body.id, '--overlap', '1h', ...through]);
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(rotated.body.created).toMatchObject({ name: 'worker', role: 'runner', tenant: 'acme', key: expect.stringMatching(/^qp_/) });
    expect(rotated.body.old.id).toBe(created.body.id);
    expect(rotated.body.old.expiresAtMs - rotated.body.created.createdAtMs).toBe(3_600_000);
    const listed = await json(['keys', 'list', ...through]);
    const first = listed.body.keys.find((record: any) => record.name === 'first-operator');
    expect(typeof first.lastUsedAtMs).toBe('number');
    const missing = await runCli(['keys', 'rotate', 'key_01JB0000000000000000000000', '--overlap', '0', ...through]);
    expect(missing.status).toBe(1);
  });

  it('keys create, list and revoke through a server with --url/--key; each act is an audit row, verified by audit --verify', async () => {
    const { server, storeUrl, key } = await served();
    const through = ['--url', server.url, '--key', key];

    const created = await json(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'operator', '--name', 'ops-acme', ...through]);
    expect(created.status).toBe(0);
    expect(created.body).toMatchObject({ name: 'ops-acme', role: 'operator', tenant: 'acme', revokedAtMs: null, key: expect.stringMatching(/^qp_/) });
    const acmeKey = created.body.key as string;

    // The new key works, and sees only its own tenant's keys; it may not make a key for every tenant.
    const acmeList = await json(['keys', 'list', '--url', server.url, '--key', acmeKey]);
    expect(acmeList.body.keys.map((record: any) => record.name)).toEqual(['ops-acme']);
    const denied = await runCli(['keys', 'create', '--tenant', '*', '--role', 'operator', '--url', server.url, '--key', acmeKey]);
    expect(denied.status).toBe(1);
    const runner = await json(['keys', 'create', '--tenant', 'acme', '--role', 'runner', '--name', 'acme-worker', '--url', server.url, '--key', acmeKey]);
    expect(runner.status).toBe(0);

    const all = await json(['keys', 'list', ...through]);
    expect(all.body.keys.map((record: any) => [record.name, record.tenant])).toEqual([
      ['first-operator', '*'],
      ['ops-acme', 'acme'],
      ['acme-worker', 'acme'],
    ]);
    expect(JSON.stringify(all.body)).not.toContain('qp_');

    const revoked = await json(['keys', 'revoke', runner.body.id, '--url', server.url, '--key', acmeKey]);
    expect(revoked.body).toEqual({ id: runner.body.id, outcome: 'revoked' });
    expect((await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${runner.body.key}` } })).status).toBe(401);
    expect((await runCli(['keys', 'revoke', 'key_01JB0000000000000000000000', ...through])).status).toBe(1);
    expect((await json(['keys', 'revoke', runner.body.id, ...through])).body.outcome).toBe('already-revoked');

    // The audit rows: who (the calling key's name, authenticated), key id, name, role, tenant.
    const acmeAudit = await json(['audit', '--tenant', 'acme', ...through]);
    expect(acmeAudit.body.rows.map((row: any) => [row.action, row.by.actor, row.by.basis, row.subject, row.detail])).toEqual([
      ['key.revoke', 'ops-acme', 'authenticated', runner.body.id, { name: 'acme-worker', role: 'runner', tenant: 'acme' }],
      ['key.create', 'ops-acme', 'authenticated', runner.body.id, { name: 'acme-worker', role: 'runner', tenant: 'acme' }],
      ['key.create', 'first-operator', 'authenticated', created.body.id, { name: 'ops-acme', role: 'operator', tenant: 'acme' }],
    ]);
    const everyTenant = await json(['audit', '--tenant', KEYS_AUDIT_TENANT, ...through]);
    expect(everyTenant.body.rows.map((row: any) => [row.action, row.by.actor, row.detail.tenant])).toEqual([['key.create', 'quotaplane-serve', '*']]);
    const verified = await json(['audit', '--verify', '--store', storeUrl]);
    expect(verified.status).toBe(0);
    expect(verified.body.tenants).toEqual([
      { tenant: 'acme', rows: 3, ok: true, firstMismatch: null },
      { tenant: KEYS_AUDIT_TENANT, rows: 1, ok: true, firstMismatch: null },
    ]);
  });

  it('on a store, keys create and revoke need --actor and are audited as asserted', async () => {
    const { storeUrl } = await served();
    expect((await runCli(['keys', 'create', '--tenant', 'acme', '--role', 'runner', '--store', storeUrl])).status).toBe(2);
    const created = await json(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--store', storeUrl, '--actor', 'alice']);
    await json(['keys', 'revoke', created.body.id, '--store', storeUrl, '--actor', 'alice']);
    const store = await openStore(storeUrl);
    try {
      const rows = await store.tenant('acme').auditLog({ limit: 10 });
      expect(rows.map((row) => [row.action, row.by, row.subject])).toEqual([
        ['key.revoke', { actor: 'alice', basis: 'asserted' }, created.body.id],
        ['key.create', { actor: 'alice', basis: 'asserted' }, created.body.id],
      ]);
    } finally {
      await store.close();
    }
  });
});
