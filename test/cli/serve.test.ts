import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { resolveServeConfig } from '../../src/cli/serve/serve-config.js';
import { FIRST_KEY_NAME, startServer } from '../../src/cli/serve/start-server.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { openStore } from '../../src/store/open-store.js';
import { createClient } from '../../src/client/create-client.js';
import { REPO_ROOT, runCli, temporaryDirectory } from './cli-helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = temporaryDirectory();
  cleanups.push(dir.remove);
  return dir.path;
}

describe('quotaplane serve as a process', () => {
  it('starts on a new SQLite file, prints the first operator key once, serves with it, and stops on SIGTERM closing the store', async () => {
    const dir = tempDir();
    const db = join(dir, 'served.db');
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src', 'cli', 'bin.ts'), 'serve', '--port', '0', '--store', `sqlite:${db}`, '--log-level', 'silent'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code} before serving: ${stdout}${stderr}`)));
    });

    const secrets = stdout.match(/qp_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(stdout).toContain('operator key for every tenant');
    const key = secrets[0] as string;

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/v1/tenants`)).status).toBe(401);
    const put = await fetch(`${url}/v1/tenants/acme/quota`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ maxConcurrentRuns: 3 }),
    });
    expect(put.status).toBe(200);
    expect(await (await fetch(`${url}/v1/tenants`, { headers: { authorization: `Bearer ${key}` } })).json()).toEqual({ tenants: ['acme'] });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('sweeping lapsed leases every 5000 ms');
    expect(stdout).toContain('SIGTERM: stopping the sweeper, finishing in-flight requests, then closing the store');
    expect(stdout).toMatch(/quotaplane: stopped\n$/);
    expect(stderr).toBe('');
    // SQLite removes the write-ahead log when the last connection closes cleanly.
    expect(existsSync(`${db}-wal`)).toBe(false);

    const store = await openStore(`sqlite:${db}`);
    expect(await store.tenant('acme').getQuota()).toEqual({ period: 'monthly', maxConcurrentRuns: 3 });
    const keys = await store.apiKeys?.().list();
    expect(keys?.map((record) => [record.name, record.role, record.tenant])).toEqual([[FIRST_KEY_NAME, 'operator', '*']]);
    await store.close();
  }, 60_000);
});

describe('startServer', () => {
  it('sweeps on its interval: a run whose lease lapsed is stranded by the running server, its hold kept', async () => {
    const db = join(tempDir(), 'swept.db');
    const server = await startServer({ storeUrl: `sqlite:${db}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 20 });
    cleanups.push(() => server.close());
    const ops = createClient({ url: server.url, key: server.firstKey?.secret ?? '' });
    await ops.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { actor: 'ops', basis: 'asserted' });
    // A lease of 1 ms has lapsed by the time the next sweep looks, however fast the machine.
    const pass = await ops.admit({ tenant: 'acme', run: 'run-dead', budget: { maxTokens: 100, maxCallTokens: 10 }, leaseMs: 1 });
    expect(pass.ok).toBe(true);
    let stranded: readonly string[] = [];
    for (let attempt = 0; attempt < 500 && stranded.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      stranded = (await ops.runs({ tenant: 'acme', statuses: ['stranded'] })).runs.map((run) => run.run);
    }
    expect(stranded).toEqual(['run-dead']);
    expect(await ops.slotHolders({ tenant: 'acme' })).toEqual({ runs: [], truncated: false });
    expect((await ops.reservations({ tenant: 'acme' })).holds.map((hold) => hold.run)).toEqual(['run-dead']);
    await server.close();
  });

  it('creates the first key only on a store with no key: a second start on the same file creates none', async () => {
    const db = join(tempDir(), 'twice.db');
    const first = await startServer({ storeUrl: `sqlite:${db}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
    expect(first.firstKey?.secret).toMatch(/^qp_/);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await first.close();
    await first.close();
    const second = await startServer({ storeUrl: `sqlite:${db}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
    expect(second.firstKey).toBeNull();
    const answer = await fetch(`${second.url}/v1/tenants`, { headers: { authorization: `Bearer ${first.firstKey?.secret ?? ''}` } });
    expect(answer.status).toBe(200);
    await second.close();
  });

  it('a port already taken fails the start with EADDRINUSE and leaves the store closed', async () => {
    const db = join(tempDir(), 'busy.db');
    const running = await startServer({ storeUrl: `sqlite:${db}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
    cleanups.push(() => running.close());
    const port = Number(new URL(running.url).port);
    const error = await startServer({ storeUrl: `sqlite:${join(tempDir(), 'other.db')}`, host: '127.0.0.1', port, sweepIntervalMs: 0 }).catch((caught: unknown) => caught);
    expect((error as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
  });
});

/** The money display `serve` gives the dashboard when nothing names one. */
const MICRO_USD = { currency: 'USD', minorUnitsPerUnit: 1_000_000 };

describe('serve configuration', () => {
  it('flags win over QUOTAPLANE_STORE and QUOTAPLANE_PORT, which win over the defaults', () => {
    expect(resolveServeConfig({}, {})).toEqual({ storeUrl: 'sqlite:./quotaplane.db', host: '127.0.0.1', port: 7070, sweepIntervalMs: 5000, shutdownTimeoutMs: 10_000, ...MICRO_USD });
    const env = { QUOTAPLANE_STORE: 'sqlite:/var/lib/q.db', QUOTAPLANE_PORT: '8080', QUOTAPLANE_SWEEP_INTERVAL_MS: '0' };
    expect(resolveServeConfig({}, env)).toEqual({ storeUrl: 'sqlite:/var/lib/q.db', host: '127.0.0.1', port: 8080, sweepIntervalMs: 0, shutdownTimeoutMs: 10_000, ...MICRO_USD });
    expect(resolveServeConfig({ store: 'sqlite:x.db', port: 0, host: '0.0.0.0', sweepIntervalMs: 250 }, env)).toEqual({
      storeUrl: 'sqlite:x.db',
      host: '0.0.0.0',
      port: 0,
      sweepIntervalMs: 250,
      shutdownTimeoutMs: 10_000,
      ...MICRO_USD,
    });
  });

  it('shows money as micro-USD unless --currency / --minor-units-per-unit or their variables say otherwise, and names a bad one', async () => {
    expect(resolveServeConfig({}, { QUOTAPLANE_CURRENCY: 'EUR', QUOTAPLANE_MINOR_UNITS_PER_UNIT: '100' })).toMatchObject({ currency: 'EUR', minorUnitsPerUnit: 100 });
    expect(resolveServeConfig({ currency: 'JPY', minorUnitsPerUnit: 1 }, { QUOTAPLANE_CURRENCY: 'EUR' })).toMatchObject({ currency: 'JPY', minorUnitsPerUnit: 1 });
    expect(() => resolveServeConfig({}, { QUOTAPLANE_CURRENCY: 'euro' })).toThrow(/QUOTAPLANE_CURRENCY/);
    expect(() => resolveServeConfig({}, { QUOTAPLANE_MINOR_UNITS_PER_UNIT: '250' })).toThrow(/QUOTAPLANE_MINOR_UNITS_PER_UNIT/);
    const flag = await runCli(['serve', '--minor-units-per-unit', '3']);
    expect([flag.status, flag.stderr]).toEqual([2, expect.stringMatching(/--minor-units-per-unit/)]);
  });

  it('a QUOTAPLANE_SWEEP_INTERVAL_MS or --sweep-interval-ms that is not a whole number of ms up to 2^31 - 1 is a usage error naming it', async () => {
    expect(() => resolveServeConfig({}, { QUOTAPLANE_SWEEP_INTERVAL_MS: '5s' })).toThrow(/QUOTAPLANE_SWEEP_INTERVAL_MS/);
    expect(() => resolveServeConfig({}, { QUOTAPLANE_SWEEP_INTERVAL_MS: '2147483648' })).toThrow(UsageError);
    const flag = await runCli(['serve', '--sweep-interval-ms', '-1']);
    expect([flag.status, flag.stderr]).toEqual([2, expect.stringMatching(/--sweep-interval-ms/)]);
  });

  it('a QUOTAPLANE_PORT that is not a port is a usage error naming it', () => {
    expect(() => resolveServeConfig({}, { QUOTAPLANE_PORT: '70000' })).toThrow(UsageError);
    expect(() => resolveServeConfig({}, { QUOTAPLANE_PORT: 'http' })).toThrow(/QUOTAPLANE_PORT/);
  });
});
