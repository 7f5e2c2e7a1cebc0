import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { resolveServeConfig } from '../../src/cli/serve/serve-config.js';
import { FIRST_KEY_NAME, startServer } from '../../src/cli/serve/start-server.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { openStore } from '../../src/store/open-store.js';
import { createClient } from '../../src/client/create-client.js';
import { compiledEntry } from '../compiled-entry.js';
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
  it('starts on a new SQLite file, shows the first operator key once on stderr only when asked (--first-key-file -), logs only JSON on stdout, serves, and stops on SIGTERM closing the store', async () => {
    const dir = tempDir();
    const db = join(dir, 'served.db');
    const child = spawn(process.execPath, [await compiledEntry(join(REPO_ROOT, 'src', 'cli', 'bin.ts')), 'serve', '--port', '0', '--store', `sqlite:${db}`, '--log-level', 'info', '--first-key-file', '-'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, QUOTAPLANE_PROT: '8080' },
    });
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code} before serving: ${stdout}${stderr}`)));
    });

    const secrets = stderr.match(/qp_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(stderr).toContain('operator key for every tenant');
    expect(stderr).toContain('QUOTAPLANE_PROT is not a quotaplane setting and is ignored (did you mean QUOTAPLANE_PORT?)');
    const key = secrets[0] as string;

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/v1/tenants`)).status).toBe(401);
    const put = await fetch(`${url}/v1/tenants/acme/quota?newTenant=true`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ maxConcurrentRuns: 3 }),
    });
    expect(put.status).toBe(200);
    expect(await (await fetch(`${url}/v1/tenants`, { headers: { authorization: `Bearer ${key}` } })).json()).toEqual({ tenants: ['acme'] });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('sweeping lapsed leases every 5000 ms');
    expect(stderr).toContain('SIGTERM: no new connections; finishing requests in flight, then closing the store');
    expect(stderr).toMatch(/quotaplane: stopped\n$/);
    // Stdout is JSON log lines only, one per request, and never holds the key.
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.msg === 'request').map((line) => [line.method, line.route, line.status])).toEqual([
      ['GET', '/healthz', 200],
      ['GET', '/v1/tenants', 401],
      ['PUT', '/v1/tenants/:tenant/quota', 200],
      ['GET', '/v1/tenants', 200],
    ]);
    expect(stdout).not.toContain(key);
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
    await ops.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
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

describe('serve configuration', () => {
  it('flags win over QUOTAPLANE_STORE and QUOTAPLANE_PORT, which win over the defaults', () => {
    const defaults = {
      storeUrl: 'sqlite:./quotaplane.db',
      host: '127.0.0.1',
      port: 7070,
      logLevel: 'info',
      sweepIntervalMs: 5000,
      pruneIntervalMs: 3_600_000,
      startupTimeoutMs: 30_000,
      shutdownTimeoutMs: 10_000,
      bodyLimitBytes: 65_536,
      metricsTenants: 50,
      currency: 'USD',
      minorUnitsPerUnit: 1_000_000,
      spentOutStatus: 429,
      webhookPollMs: 250,
    };
    expect(resolveServeConfig({}, {})).toEqual(defaults);
    const env = {
      QUOTAPLANE_STORE: 'sqlite:/var/lib/q.db',
      QUOTAPLANE_PORT: '8080',
      QUOTAPLANE_SWEEP_INTERVAL_MS: '0',
      QUOTAPLANE_HOST: '0.0.0.0',
      QUOTAPLANE_LOG_LEVEL: 'warn',
      QUOTAPLANE_STARTUP_TIMEOUT_MS: '1000',
      QUOTAPLANE_SHUTDOWN_TIMEOUT_MS: '250',
      QUOTAPLANE_BODY_LIMIT_BYTES: '1024',
      QUOTAPLANE_METRICS_TENANTS: '5',
      QUOTAPLANE_FIRST_KEY_FILE: '/run/secrets/first-key',
      QUOTAPLANE_WEBHOOK_POLL_MS: '500',
    };
    const fromEnv = {
      storeUrl: 'sqlite:/var/lib/q.db',
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'warn',
      sweepIntervalMs: 0,
      pruneIntervalMs: 3_600_000,
      startupTimeoutMs: 1000,
      shutdownTimeoutMs: 250,
      bodyLimitBytes: 1024,
      metricsTenants: 5,
      firstKeyFile: '/run/secrets/first-key',
      currency: 'USD',
      minorUnitsPerUnit: 1_000_000,
      spentOutStatus: 429,
      webhookPollMs: 500,
    };
    expect(resolveServeConfig({}, env)).toEqual(fromEnv);
    expect(resolveServeConfig({ store: 'sqlite:x.db', port: 0, host: '::1', sweepIntervalMs: 250, logLevel: 'debug', metricsTenants: 0 }, env)).toEqual({
      ...fromEnv,
      storeUrl: 'sqlite:x.db',
      host: '::1',
      port: 0,
      sweepIntervalMs: 250,
      logLevel: 'debug',
      metricsTenants: 0,
    });
    expect(() => resolveServeConfig({}, { QUOTAPLANE_LOG_LEVEL: 'loud' })).toThrow(/QUOTAPLANE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/);
  });

  it('D13: answers a SpentOut only the period end clears with 429 unless --spent-out-status or its variable says 403, and names a bad one', async () => {
    expect(resolveServeConfig({}, { QUOTAPLANE_SPENT_OUT_STATUS: '403' })).toMatchObject({ spentOutStatus: 403 });
    expect(resolveServeConfig({ spentOutStatus: 429 }, { QUOTAPLANE_SPENT_OUT_STATUS: '403' })).toMatchObject({ spentOutStatus: 429 });
    expect(() => resolveServeConfig({}, { QUOTAPLANE_SPENT_OUT_STATUS: '402' })).toThrow(/QUOTAPLANE_SPENT_OUT_STATUS.*429 or 403/);
    const flag = await runCli(['serve', '--spent-out-status', '200']);
    expect([flag.status, flag.stderr]).toEqual([2, expect.stringMatching(/--spent-out-status.*429 or 403/)]);
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
