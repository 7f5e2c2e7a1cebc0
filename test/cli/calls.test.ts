import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import type { CallCeilings } from '../../src/core/call-ceilings.js';
import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { CapturedStream, runCli, temporaryDirectory } from './cli-helpers.js';

// `quotaplane calls …` on a store and through a server: the same answers either way, a readable
// standings table, and errors that name the flag or the member and say what to do.

const CEILINGS: CallCeilings = {
  tenant: [{ unit: 'tokens', limit: 10_000, period: 'daily' }],
  models: { 'gpt-4o': [{ unit: 'requests', limit: 3, windowSeconds: 86_400 }] },
};

let dir: { path: string; remove: () => void };
let storeUrl: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  storeUrl = `sqlite:${join(dir.path, 'calls.db')}`;
  // Seeded on the wall clock, with day-long leases, so the calls are still in flight when the CLI reads.
  const store = await openStore(storeUrl);
  const plane = createPlane({ store });
  await plane.setCallCeilings('acme', CEILINGS, { newTenant: true, by: { actor: 'seed', basis: 'asserted' } });
  await plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', agent: 'planner', callId: 'c1', inputTokens: 100, maxOutputTokens: 400, leaseMs: 86_400_000 });
  await plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', callId: 'c2', inputTokens: 50, maxOutputTokens: 50, leaseMs: 86_400_000 });
  await plane.adjustCall({ tenant: 'acme', callId: 'c2', usage: { inputTokens: 50, outputTokens: 20 } });
  await store.close();
});
afterEach(() => dir.remove());

async function json(args: readonly string[], target: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const { status, stdout, stderr } = await runCli([...args, ...target, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

async function served(): Promise<{ target: string[]; close(): Promise<void> }> {
  const store = await openStore(storeUrl);
  const keys = store.apiKeys?.();
  if (keys === undefined) throw new Error('no API keys');
  const minted = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-alice', atMs: Date.now() });
  await keys.create(minted.key);
  const app = await buildApp({ plane: createPlane({ store }), store, keys });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    target: ['--url', `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, '--key', minted.secret],
    async close() {
      await app.close();
      await store.close();
    },
  };
}

describe('quotaplane calls', () => {
  it('ceilings, standings and open answer the same on a store and through a server', async () => {
    const onStore = ['--store', storeUrl];
    const server = await served();
    try {
      for (const verb of [['calls', 'ceilings', 'acme'], ['calls', 'standings', 'acme'], ['calls', 'open', 'acme', '--limit', '5']]) {
        const local = await json(verb, onStore);
        const remote = await json(verb, server.target);
        expect(local.status, local.stderr).toBe(0);
        expect(remote).toEqual(local);
      }
    } finally {
      await server.close();
    }
    const ceilings = await json(['calls', 'ceilings', 'acme'], onStore);
    expect(ceilings.body).toEqual({ tenant: 'acme', ceilings: CEILINGS });
    const open = await json(['calls', 'open', 'acme'], onStore);
    expect(open.body.calls.map((call: { callId: string }) => call.callId)).toEqual(['c1']);
  });

  it('standings print a table: subject, the ceiling in words, counted, held, remaining', async () => {
    const { status, stdout } = await runCli(['calls', 'standings', 'acme', '--store', storeUrl]);
    expect(status).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[1]?.split(/\s{2,}/)).toEqual(['subject', 'ceiling', 'counted', 'held', 'remaining']);
    expect(lines[2]?.split(/\s{2,}/)).toEqual(['tenant', 'at most 10000 tokens per UTC day', '70', '500', '9430']);
    expect(lines[3]?.split(/\s{2,}/)).toEqual(['agent:planner', 'no ceiling', '-', '-', '-']);
    expect(lines[4]?.split(/\s{2,}/)).toEqual(['model:gpt-4o', 'at most 3 requests per 86400 seconds', '1', '1', '1']);
    const text = await runCli(['calls', 'ceilings', 'acme', '--store', storeUrl]);
    expect(text.stdout).toContain('model:gpt-4o  at most 3 requests per 86400 seconds');
  });

  it('set from a file and from standard input (audited), keeping the counts; clear removes them', async () => {
    const file = join(dir.path, 'ceilings.json');
    const wider = { tenant: [{ unit: 'tokens', limit: 20_000, period: 'daily' }] };
    writeFileSync(file, JSON.stringify(wider));
    const set = await json(['calls', 'set', 'acme', '--file', file, '--actor', 'ops-bob'], ['--store', storeUrl]);
    expect(set).toMatchObject({ status: 0, body: { tenant: 'acme', ceilings: wider } });
    const standings = await json(['calls', 'standings', 'acme'], ['--store', storeUrl]);
    expect(standings.body.standings[0].ceilings[0]).toMatchObject({ counted: 70, held: 500, remaining: 19_430 });

    const stdout = new CapturedStream();
    const stderr = new CapturedStream();
    const piped = { tenant: [{ unit: 'requests', limit: 9, windowSeconds: 60 }] };
    const status = await main(['calls', 'set', 'acme', '--file', '-', '--actor', 'ops-bob', '--store', storeUrl, '--json'], {
      stdout,
      stderr,
      readStdin: async () => JSON.stringify(piped),
    });
    expect(status, stderr.text).toBe(0);
    expect(JSON.parse(stdout.text)).toEqual({ tenant: 'acme', ceilings: piped });

    expect(await json(['calls', 'clear', 'acme', '--actor', 'ops-bob'], ['--store', storeUrl])).toMatchObject({ status: 0, body: { ceilings: null } });
    expect((await json(['calls', 'ceilings', 'acme'], ['--store', storeUrl])).body).toEqual({ tenant: 'acme', ceilings: null });
    const audit = await json(['audit', '--tenant', 'acme', '--action', 'calls.set'], ['--store', storeUrl]);
    expect(audit.body.rows.map((row: { by: { actor: string } }) => row.by.actor)).toEqual(['ops-bob', 'ops-bob', 'ops-bob', 'seed']);
  });

  it('release frees a stuck call, on a store and through a server; a call that ended is exit status 1', async () => {
    const released = await json(['calls', 'release', 'acme', 'c1', '--actor', 'ops-bob'], ['--store', storeUrl]);
    expect(released).toMatchObject({ status: 0, body: { tenant: 'acme', retried: false, call: { callId: 'c1', status: 'released' } } });
    expect((await json(['calls', 'open', 'acme'], ['--store', storeUrl])).body.calls).toEqual([]);
    const server = await served();
    try {
      const again = await json(['calls', 'release', 'acme', 'c1'], server.target);
      expect(again).toMatchObject({ status: 0, body: { retried: true } });
      const booked = await runCli(['calls', 'release', 'acme', 'c2', ...server.target]);
      expect(booked.status).toBe(1);
      expect(booked.stderr).toContain("callId: model call 'c2'");
      const unknown = await runCli(['calls', 'release', 'acme', 'nope', ...server.target]);
      expect(unknown.status).toBe(1);
      expect(unknown.stderr).toContain('callId');
    } finally {
      await server.close();
    }
  });

  it('errors name the flag or the member and say what to do', async () => {
    const file = join(dir.path, 'bad.json');
    writeFileSync(file, JSON.stringify({ tenant: [{ unit: 'tokens', limit: 5, windowSeconds: 100_000 }] }));
    const bad = await runCli(['calls', 'set', 'acme', '--file', file, '--actor', 'ops-bob', '--store', storeUrl]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`--file ${file}: ceilings.tenant[0].windowSeconds: must be a whole number from 1 to 86400`);
    writeFileSync(file, '{ not json');
    const notJson = await runCli(['calls', 'set', 'acme', '--file', file, '--actor', 'ops-bob', '--store', storeUrl]);
    expect(notJson).toMatchObject({ status: 2 });
    expect(notJson.stderr).toContain('is not JSON');
    const missing = await runCli(['calls', 'set', 'acme', '--file', join(dir.path, 'none.json'), '--actor', 'ops-bob', '--store', storeUrl]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--file: cannot read');
    const noFile = await runCli(['calls', 'set', 'acme', '--store', storeUrl]);
    expect(noFile.status).toBe(2);
    expect(noFile.stderr).toContain('--file');
    const noActor = await runCli(['calls', 'clear', 'acme', '--store', storeUrl]);
    expect(noActor.status).toBe(2);
    expect(noActor.stderr).toContain('--actor');
    writeFileSync(file, JSON.stringify(CEILINGS));
    const newTenant = await runCli(['calls', 'set', 'acmee', '--file', file, '--actor', 'ops-bob', '--store', storeUrl]);
    expect(newTenant.status).toBe(1);
    expect(newTenant.stderr).toContain('--new-tenant');
    const typo = await runCli(['calls', 'standings', 'acmee', '--store', storeUrl]);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain("did you mean 'acme'? check the <tenant> argument");
    expect((await runCli(['calls', 'set', 'initech', '--file', file, '--new-tenant', '--actor', 'ops-bob', '--store', storeUrl])).status).toBe(0);
  });
});
