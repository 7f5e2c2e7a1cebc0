import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { hashApiKey } from '../../src/http/api-key-secret.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

describe('quotaplane keys', () => {
  let dir: { path: string; remove: () => void };
  let store: string;

  beforeEach(() => {
    dir = temporaryDirectory();
    store = `sqlite:${join(dir.path, 'keys.db')}`;
  });
  afterEach(() => dir.remove());

  it('create prints the key once and stores only its hash; list shows the record without it', async () => {
    const created = await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--name', 'acme-worker', '--store', store, '--actor', 'ops']);
    expect(created.status).toBe(0);
    const secret = /qp_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0] as string;
    expect(secret).toBeDefined();
    expect(created.stdout).toContain('runner key for tenant \'acme\', name acme-worker');

    const listed = await runCli(['keys', 'list', '--store', store]);
    expect(listed.status).toBe(0);
    // Upper-case column headers, like every other table of the CLI.
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ROLE\s+TENANT\s+CREATED\s+EXPIRES\s+LAST USED\s+REVOKED\s*$/);
    expect(listed.stdout).toContain('LAST USED is coarse');
    expect(listed.stdout).toMatch(/key_\w+\s+acme-worker\s+runner\s+acme/);
    expect(listed.stdout).not.toContain(secret);

    const opened = await openStore(store);
    const record = await opened.apiKeys?.().findByHash(hashApiKey(secret));
    expect(record).toMatchObject({ name: 'acme-worker', role: 'runner', tenant: 'acme', revokedAtMs: null });
    await opened.close();
  });

  it("--json answers one document; an operator key for '*' covers every tenant", async () => {
    const created = await runCli(['keys', 'create', '--tenant', '*', '--role', 'operator', '--store', store, '--actor', 'ops', '--json']);
    expect(created.status).toBe(0);
    const document = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(document).toMatchObject({ role: 'operator', tenant: '*', revokedAtMs: null });
    expect(document.name).toBe(document.id);
    expect(document.key).toMatch(/^qp_/);
    expect(document).not.toHaveProperty('hash');
    const listed = JSON.parse((await runCli(['keys', 'list', '--store', store, '--json'])).stdout) as { keys: unknown[] };
    expect(listed.keys).toEqual([{ id: document.id, name: document.name, role: 'operator', tenant: '*', createdAtMs: document.createdAtMs, revokedAtMs: null, expiresAtMs: null, lastUsedAtMs: null }]);
  });

  it('create --expires-in sets the expiry; list shows it in the table and --json', async () => {
    const before = Date.now();
    const created = await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--expires-in', '30d', '--store', store, '--actor', 'ops', '--json']);
    expect(created.status, created.stderr).toBe(0);
    const document = JSON.parse(created.stdout) as { id: string; createdAtMs: number; expiresAtMs: number };
    expect(document.expiresAtMs - document.createdAtMs).toBe(30 * 86_400_000);
    expect(document.createdAtMs).toBeGreaterThanOrEqual(before);
    const listed = JSON.parse((await runCli(['keys', 'list', '--store', store, '--json'])).stdout) as { keys: { expiresAtMs: number; lastUsedAtMs: null }[] };
    expect(listed.keys).toMatchObject([{ expiresAtMs: document.expiresAtMs, lastUsedAtMs: null }]);
    const table = await runCli(['keys', 'list', '--store', store]);
    expect(table.stdout).toContain(new Date(document.expiresAtMs).toISOString().slice(0, 10));
    const bad = await runCli(['keys', 'create', '--tenant', 'acme', '--role', 'runner', '--expires-in', '30', '--store', store, '--actor', 'ops']);
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringContaining('--expires-in')]);
  });

  it('rotate makes a new key with the same name, role and tenant, prints it once, and ends the old one after --overlap (audited)', async () => {
    const old = JSON.parse((await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--name', 'worker', '--store', store, '--actor', 'ops', '--json'])).stdout) as {
      id: string;
    };
    const rotated = await runCli(['keys', 'rotate', old.id, '--overlap', '1h', '--store', store, '--actor', 'ops']);
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain(`rotated ${old.id}: it is accepted until`);
    expect(rotated.stdout).toMatch(/runner key for tenant 'acme', name worker/);
    const secret = /qp_[A-Za-z0-9_-]{43}/.exec(rotated.stdout)?.[0] as string;
    const opened = await openStore(store);
    try {
      const keys = opened.apiKeys!();
      const fresh = await keys.findByHash(hashApiKey(secret));
      expect(fresh).toMatchObject({ name: 'worker', role: 'runner', tenant: 'acme', expiresAtMs: null });
      const before = (await keys.list()).find((key) => key.id === old.id);
      expect((before?.expiresAtMs ?? 0) - (fresh?.createdAtMs ?? 0)).toBe(3_600_000);
      const audit = await opened.tenant('acme').auditLog({ limit: 10 });
      expect(audit.map((row) => row.action)).toEqual(expect.arrayContaining(['key.rotate', 'key.create']));
    } finally {
      await opened.close();
    }
    const revoked = await runCli(['keys', 'revoke', old.id, '--store', store, '--actor', 'ops']);
    expect(revoked.status).toBe(0);
    const again = await runCli(['keys', 'rotate', old.id, '--overlap', '0', '--store', store, '--actor', 'ops']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('revoked key');
  });

  it('revoke revokes once, says so again idempotently, and exits 1 for an id that names no key', async () => {
    const created = JSON.parse((await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'operator', '--store', store, '--actor', 'ops', '--json'])).stdout) as {
      id: string;
    };
    const revoked = await runCli(['keys', 'revoke', created.id, '--store', store, '--actor', 'ops']);
    expect(revoked).toMatchObject({ status: 0, stdout: `revoked ${created.id}\n` });
    expect((await runCli(['keys', 'revoke', created.id, '--store', store, '--actor', 'ops'])).stdout).toContain('already revoked');
    const missing = await runCli(['keys', 'revoke', 'key_01JB0000000000000000000000', '--store', store, '--actor', 'ops']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no key has the id');
    const listed = JSON.parse((await runCli(['keys', 'list', '--store', store, '--json'])).stdout) as { keys: { revokedAtMs: unknown }[] };
    expect(typeof listed.keys[0]?.revokedAtMs).toBe('number');
  });

  it("refuses a runner key for '*', an unknown role and a missing tenant as usage errors (exit 2), creating nothing", async () => {
    const everyTenant = await runCli(['keys', 'create', '--tenant', '*', '--role', 'runner', '--store', store, '--actor', 'ops']);
    expect(everyTenant.status).toBe(2);
    expect(everyTenant.stderr).toContain('--tenant');
    expect((await runCli(['keys', 'create', '--tenant', 'acme', '--role', 'admin', '--store', store, '--actor', 'ops'])).status).toBe(2);
    expect((await runCli(['keys', 'create', '--role', 'runner', '--store', store, '--actor', 'ops'])).status).toBe(2);
    expect(existsSync(join(dir.path, 'keys.db'))).toBe(false);
  });

  it('list and revoke at a path with no store exit 3 (configuration) naming the path, and create no file', async () => {
    const path = join(dir.path, 'typo.db');
    for (const args of [['keys', 'list'], ['keys', 'revoke', 'key_x', '--actor', 'ops']]) {
      const missing = await runCli([...args, '--store', `sqlite:${path}`]);
      expect(missing.status).toBe(3);
      expect(missing.stderr).toContain(`no quotaplane store at ${path}; check --store, or create one with \`quotaplane migrate --store`);
    }
    expect(existsSync(path)).toBe(false);
    expect((await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--store', `sqlite:${path}`, '--actor', 'ops'])).status).toBe(0);
    expect((await runCli(['keys', 'list', '--store', `sqlite:${path}`])).status).toBe(0);
  });
});
