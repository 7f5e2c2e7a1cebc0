import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// From the CLI: `quota plane show|set|update`, the --agent-* flags of `quota set|update`,
// and `status` with the plane-wide ceiling and per-agent figures; on a store and through a server.

const T0 = Date.UTC(2026, 0, 5, 8);
const REFUND_BOT = { name: 'refund-bot', digest: 'ab'.repeat(32) };

let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  await (await openStore(url)).close();
});
afterEach(() => dir.remove());

async function json(args: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const { status, stdout, stderr } = await runCli([...args, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

describe('quota plane and per-agent quota flags', () => {
  it('plane show, set (audited as plane.set), update (unlimited removes) and their --json answers', async () => {
    expect((await json(['quota', 'plane', 'show', '--store', url])).body).toEqual({ ceiling: null, running: 0, limit: null, agents: [], halt: null });
    const set = await json([
      'quota', 'plane', 'set', '--max-concurrent-runs', '2', '--agent-runs', 'refund-bot=1', '--weight', 'acme=3', '--store', url, '--actor', 'ops-alice',
    ]);
    expect(set).toMatchObject({ status: 0, body: { ceiling: { maxConcurrentRuns: 2, agents: { 'refund-bot': { maxConcurrentRuns: 1 } }, weights: { acme: 3 } } } });
    const update = await json(['quota', 'plane', 'update', '--max-concurrent-runs', 'unlimited', '--weight', 'acme=unlimited', '--store', url, '--actor', 'ops-alice']);
    expect(update.body).toEqual({ ceiling: { agents: { 'refund-bot': { maxConcurrentRuns: 1 } } } });
    const audit = await json(['audit', '--tenant', 'quotaplane:plane', '--store', url]);
    expect(audit.body.rows.map((row: { action: string; by: { actor: string } }) => `${row.action}:${row.by.actor}`)).toEqual([
      'plane.update:ops-alice',
      'plane.set:ops-alice',
    ]);
    const text = await runCli(['quota', 'plane', 'show', '--store', url]);
    expect(text.stdout).toContain('agent refund-bot  max concurrent runs 1');
    expect(text.stdout).toContain('running agent refund-bot  0 (limit 1)');
  });

  it('writing without --actor, or a malformed pair, is a usage error naming the flag, and nothing is stored', async () => {
    const unattributed = await runCli(['quota', 'plane', 'set', '--max-concurrent-runs', '2', '--store', url]);
    expect(unattributed.status).toBe(2);
    expect(unattributed.stderr).toContain('--actor');
    const malformed = await runCli(['quota', 'plane', 'set', '--agent-runs', 'refund-bot', '--store', url, '--actor', 'ops']);
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toContain('--agent-runs must look like <name>=<whole number>');
    const zeroWeight = await runCli(['quota', 'plane', 'set', '--weight', 'acme=0', '--store', url, '--actor', 'ops']);
    expect(zeroWeight.stderr).toContain('plane.weights["acme"]');
    expect((await json(['quota', 'plane', 'show', '--store', url])).body.ceiling).toBeNull();
  });

  it("a malformed value points at the help of the command given, 'quotaplane quota plane set --help'", async () => {
    const bad = await runCli(['quota', 'plane', 'set', '--max-concurrent-runs', 'abc', '--store', url, '--actor', 'ops']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("(see 'quotaplane quota plane set --help')");
    const update = await runCli(['quota', 'plane', 'update', '--max-concurrent-runs', 'abc', '--store', url, '--actor', 'ops']);
    expect(update.stderr).toContain("(see 'quotaplane quota plane update --help')");
    const tenantQuota = await runCli(['quota', 'set', '--tenant', 'acme', '--max-concurrent-runs', 'abc', '--store', url, '--actor', 'ops']);
    expect(tenantQuota.stderr).toContain("(see 'quotaplane quota set --help')");
    const topLevel = await runCli(['prune', '--older-than', 'x', '--store', url, '--actor', 'ops']);
    expect(topLevel.stderr).toContain("(see 'quotaplane prune --help')");
  });

  it('status leaves the plane section out while the plane-wide ceiling sets nothing ({}, every ceiling removed)', async () => {
    await json(['quota', 'set', '--tenant', 'acme', '--new-tenant', '--max-concurrent-runs', '5', '--store', url, '--actor', 'ops-alice']);
    await json(['quota', 'plane', 'set', '--max-concurrent-runs', '3', '--store', url, '--actor', 'ops-alice']);
    expect(Object.keys((await json(['status', '--tenant', 'acme', '--store', url])).body)).toEqual(['tenants', 'plane']);
    const emptied = await json(['quota', 'plane', 'update', '--max-concurrent-runs', 'unlimited', '--store', url, '--actor', 'ops-alice']);
    expect(emptied.body).toEqual({ ceiling: {} });
    expect(Object.keys((await json(['status', '--tenant', 'acme', '--store', url])).body)).toEqual(['tenants']);
    const text = await runCli(['status', '--tenant', 'acme', '--store', url]);
    expect(text.stdout).not.toMatch(/plane-wide/i);
    expect(text.stdout).toContain('acme');
  });

  it('quota set and update carry per-agent ceilings; status shows the plane-wide ceiling and each agent', async () => {
    const set = await json([
      'quota', 'set', '--tenant', 'acme', '--new-tenant', '--max-concurrent-runs', '5', '--agent-runs', 'refund-bot=2', '--agent-tokens', 'refund-bot=1000',
      '--store', url, '--actor', 'ops-alice',
    ]);
    expect(set.body.quota).toEqual({ period: 'monthly', maxConcurrentRuns: 5, agents: { 'refund-bot': { maxConcurrentRuns: 2, maxTokensPerPeriod: 1000 } } });
    const update = await json(['quota', 'update', '--tenant', 'acme', '--agent-runs', 'refund-bot=unlimited', '--agent-minor-units', 'triage=50', '--store', url, '--actor', 'ops-alice']);
    expect(update.body.quota.agents).toEqual({ 'refund-bot': { maxTokensPerPeriod: 1000 }, triage: { maxMinorUnitsPerPeriod: 50 } });

    const store = await openStore(url);
    const plane = createPlane({ store });
    await plane.setPlaneCeiling({ maxConcurrentRuns: 10 });
    await plane.admit({ tenant: 'acme', run: 'run-1', agent: REFUND_BOT, budget: { maxTokens: 400, maxCallTokens: 0 } });
    await store.close();

    const status = await json(['status', '--tenant', 'acme', '--store', url]);
    expect(status.body.plane).toEqual({ ceiling: { maxConcurrentRuns: 10 }, running: 1, limit: 10, agents: [], halt: null });
    expect(status.body.tenants[0].agents).toEqual([
      { agent: 'refund-bot', running: 1, spent: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 400, minorUnits: 0 }, ceilings: { maxTokensPerPeriod: 1000 } },
      { agent: 'triage', running: 0, spent: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 0, minorUnits: 0 }, ceilings: { maxMinorUnitsPerPeriod: 50 } },
    ]);
    const text = await runCli(['status', '--tenant', 'acme', '--store', url]);
    expect(text.stdout).toContain('running (all tenants)  1 (limit 10)');
    expect(text.stdout).toContain('agent refund-bot  running 1 (unlimited), tokens settled 0, reserved 400 (limit 1000)');
  });

  it('quota get prints one aligned column of values, rate and agent rows included', async () => {
    const set = await runCli([
      'quota', 'set', '--tenant', 'acme', '--new-tenant', '--max-concurrent-runs', '5', '--rate', 'tool://payments/refund=10/60', '--rate', 'tool://payments/refund=100/3600',
      '--agent-runs', 'refund-bot=2', '--store', url, '--actor', 'ops-alice',
    ]);
    expect(set.status).toBe(0);
    const text = await runCli(['quota', 'get', '--tenant', 'acme', '--store', url]);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      "tenant 'acme' (monthly periods, UTC)",
      '  max concurrent runs          5',
      '  max tokens per period        unlimited',
      '  max minor units per period   unlimited',
      '  rate tool://payments/refund  10 per 60s, 100 per 3600s',
      '  agent refund-bot             runs 2, tokens unlimited, minor units unlimited',
    ]);
  });

  it('status without a plane-wide ceiling has no plane member, as before', async () => {
    await json(['quota', 'set', '--tenant', 'acme', '--new-tenant', '--max-concurrent-runs', '5', '--store', url, '--actor', 'ops-alice']);
    const status = await json(['status', '--store', url]);
    expect(Object.keys(status.body)).toEqual(['tenants']);
    expect(status.body.tenants[0].agents).toBeUndefined();
  });

  it('through a server, quota plane set and show answer what they answer on the store (an all-tenant operator key)', async () => {
    const store = await openStore(url);
    const apiKeys = store.apiKeys?.();
    if (apiKeys === undefined) throw new Error('no API keys');
    const minted = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-alice', atMs: T0 });
    await apiKeys.create(minted.key);
    const app = await buildApp({ plane: createPlane({ store }), store, keys: apiKeys });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const server = ['--url', `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, '--key', minted.secret];
      const set = await json(['quota', 'plane', 'set', '--max-concurrent-runs', '4', ...server]);
      expect(set).toMatchObject({ status: 0, body: { ceiling: { maxConcurrentRuns: 4 } } });
      const served = await json(['quota', 'plane', 'show', ...server]);
      const local = await json(['quota', 'plane', 'show', '--store', url]);
      expect(served.body).toEqual(local.body);
      expect(served.body).toEqual({ ceiling: { maxConcurrentRuns: 4 }, running: 0, limit: 4, agents: [], halt: null });
      const [row] = await store.tenant('quotaplane:plane').auditLog({ limit: 1 });
      expect(row).toMatchObject({ action: 'plane.set', by: { actor: 'ops-alice', basis: 'authenticated' } });
      // An operator key of one tenant is told which key the plane-wide ceiling needs.
      const acme = mintApiKey({ role: 'operator', tenant: 'acme', name: 'ops-acme', atMs: T0 });
      await apiKeys.create(acme.key);
      const narrow = await runCli(['quota', 'plane', 'show', '--url', server[1] ?? '', '--key', acme.secret]);
      expect(narrow.status).toBe(1);
      expect(narrow.stderr).toContain("answers only an operator key of every tenant (tenant '*')");
      expect(narrow.stderr).toContain("this key is an operator key of tenant 'acme' only");
    } finally {
      await app.close();
      await store.close();
    }
  });
});
