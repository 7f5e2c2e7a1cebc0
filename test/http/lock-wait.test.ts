import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { makeKey } from './http-fixtures.js';

// The server never freezes. A SQLite write lock held by another process is
// waited for on timers, and group commit leaves the event loop free between batches, so the
// process keeps accepting connections and answering while decisions wait or pile up.

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A child process that takes the file's write lock and holds it until told to let go. */
async function holdWriteLock(path: string): Promise<{ child: ChildProcess; release(): Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script, path], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before locking`)));
  });
  return {
    child,
    release: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin?.write('go\n');
      }),
  };
}

/** GET `path` on a fresh TCP connection (no keep-alive agent), answering the status code. */
function getOnNewConnection(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
  });
}

describe('a server on SQLite never freezes', () => {
  let dir: string;
  let store: QuotaStore;
  let plane: Plane;
  let app: FastifyInstance;
  let port: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-lock-wait-'));
    store = await openStore(`sqlite:${join(dir, 'serve.db')}`, { busyTimeoutMs: 30_000 });
    plane = createPlane({ store });
    app = await buildApp({ plane, store, keys: store.apiKeys?.() as NonNullable<ReturnType<NonNullable<QuotaStore['apiKeys']>>> });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/healthz and reads answer while an admission waits for a write lock another process holds', async () => {
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 4 }, { by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
    const lock = await holdWriteLock(join(dir, 'serve.db'));
    let admitted = false;
    const admission = plane.admit({ tenant: 'acme', run: 'waits-for-the-lock', budget: {}, width: 1 }).then((result) => {
      admitted = true;
      return result;
    });
    try {
      expect(await getOnNewConnection(port, '/healthz')).toBe(200);
      expect(await getOnNewConnection(port, '/readyz')).toBe(200);
      expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
      // Everything above answered while the admission was still waiting for the lock.
      expect(admitted).toBe(false);
    } finally {
      await lock.release();
    }
    expect(await admission).toMatchObject({ ok: true, run: 'waits-for-the-lock' });
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(1);
  });

  it('a new client is answered while 200 clients keep writing', async () => {
    const keys = store.apiKeys?.();
    if (keys === undefined) throw new Error('the SQLite store keeps API keys');
    await plane.setQuota('busy', { period: 'daily', maxConcurrentRuns: 1000 }, { by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
    const runner = await makeKey(keys, 'runner', 'busy', 'writer');
    const client = createClient({ url: `http://127.0.0.1:${port}`, key: runner.secret });
    let cycles = 0;
    let writing = true;
    const writers = Array.from({ length: 200 }, async () => {
      while (writing) {
        const pass = await client.admit({ tenant: 'busy', budget: { maxTokens: 10, maxCallTokens: 10 }, width: 1 });
        if (!pass.ok) throw new Error(pass.message);
        await client.settle({ tenant: 'busy', run: pass.run, epoch: pass.epoch, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
        cycles += 1;
      }
    });
    try {
      while (cycles < 100) await new Promise((resolve) => setTimeout(resolve, 10));
      const status = await getOnNewConnection(port, '/healthz');
      const cyclesWhenAnswered = cycles;
      expect(status).toBe(200);
      // The writers were still at it when the new client got its answer (none has stopped yet),
      // and the server goes on deciding for them afterwards: it answered without freezing them.
      while (cycles < cyclesWhenAnswered + 50) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    expect((await plane.usage({ tenant: 'busy' })).running).toBe(0);
  }, 120_000);
});
