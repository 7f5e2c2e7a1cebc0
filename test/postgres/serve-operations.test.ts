import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compiledEntry } from '../compiled-entry.js';
import { REPO_ROOT } from '../cli/cli-helpers.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

// Operations of `serve` against a real PostgreSQL server of this file's own (it is stopped,
// frozen and thawed, so it cannot be the suite's shared one): no output channel of a start, a
// failed start or a store fault holds the password; a start waits for a server that is not up
// yet; and SIGTERM stops accepting connections at once while the server is frozen.

let pg: EmbeddedServer;
let password: string;
let bin: string;
beforeAll(async () => {
  bin = await compiledEntry(join(REPO_ROOT, 'src', 'cli', 'bin.ts'));
  pg = await startEmbeddedServer('serve-ops');
  password = decodeURIComponent(new URL(pg.url).password);
}, 120_000);
afterAll(async () => {
  thaw();
  await pg?.dispose();
});

interface Served {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly output: () => string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the first match of `pattern` on stderr. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
}

function serve(args: readonly string[]): Served {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--log-level', 'info', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => stdout + stderr,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const match = pattern.exec(stderr);
          if (match !== null) resolve(match);
          return match !== null;
        };
        if (check()) return;
        child.stderr?.on('data', () => check());
        void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stdout}${stderr}`)));
      }),
  };
}

// The postmaster and every backend of the embedded server (a frozen postmaster alone would leave
// open connections answering).
function serverPids(): number[] {
  const postmaster = Number.parseInt(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).trim().split('\n').filter((line) => line !== '').map(Number);
  return [postmaster, ...children];
}

let frozen: number[] = [];
function freeze(): void {
  frozen = serverPids();
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
}
function thaw(): void {
  for (const pid of frozen.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  }
}

function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('serve on PostgreSQL, operated', () => {
  it('a failed start never prints the password: a mistyped scheme (exit 2), a wrong password (exit 3, not retried), an unreachable server (retried, then exit 4)', async () => {
    const url = new URL(pg.url);
    const wrong = new URL(url);
    wrong.password = `${password}-wrong`;
    const nowhere = new URL(url);
    nowhere.port = '1';
    // The three starts run side by side: each is a process of its own.
    const mistyped = serve(['--store', pg.url.replace(/^postgres:/, 'postgress:')]);
    const refused = serve(['--store', wrong.toString()]);
    const unreachable = serve(['--store', nowhere.toString(), '--startup-timeout-ms', '4000']);
    expect(await mistyped.exited).toBe(2);
    expect(mistyped.stderr()).toMatch(/postgress:\/\/postgres:\*\*\*@/);
    expect(await refused.exited).toBe(3);
    expect(refused.stderr()).toMatch(/configuration: the server refused the password/);
    expect(refused.output()).not.toMatch(/not reachable yet/);
    expect(await unreachable.exited).toBe(4);
    const attempts = unreachable.stdout().split('\n').filter((line) => line.includes('not reachable yet'));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(attempts[0] ?? '{}')).toMatchObject({ level: 40, attempt: 1, retryInMs: 250, store: expect.stringContaining('postgres:***@') });

    for (const served of [mistyped, refused, unreachable]) {
      expect(served.output()).not.toContain(password);
      expect(served.output()).not.toContain(`${password}-wrong`);
    }
  }, 180_000);

  it('waits for a server that is not up yet (healthz 200, readyz 503 meanwhile), logs store faults without the password, and on SIGTERM with the server frozen stops accepting at once', async () => {
    await pg.stop();
    const schema = `qp_serve_ops_${Date.now()}`;
    const served = serve(['--store', `${pg.url}?schema=${schema}`, '--shutdown-timeout-ms', '1500', '--sweep-interval-ms', '0', '--first-key-file', '-']);
    try {
      const [, url = ''] = await served.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const waiting = await fetch(`${url}/readyz`);
      expect(waiting.status).toBe(503);
      expect(((await waiting.json()) as { detail: string }).detail).toMatch(/not ready: the store is not open yet/);
      await pg.start();
      await served.waitFor(/quotaplane: serving /);
      const [key = ''] = served.stderr().match(/qp_[A-Za-z0-9_-]{43}/) ?? [];
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const auth = { authorization: `Bearer ${key}` };

      // A store fault while serving: 503, logged at warn with its cause.
      await pg.stop();
      expect((await fetch(`${url}/v1/tenants`, { headers: auth })).status).toBe(503);
      await pg.start();
      expect((await fetch(`${url}/v1/tenants`, { headers: auth })).status).toBe(200);
      expect(served.stdout()).toMatch(/"level":40.*store could not answer/);

      // The server freezes with a request in flight; SIGTERM must close the listener at once.
      freeze();
      const inFlight = fetch(`${url}/v1/tenants/acme/quota`, { headers: auth }).then(
        (response) => response.status,
        () => 'cut',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const signalledAt = Date.now();
      served.child.kill('SIGTERM');
      await served.waitFor(/SIGTERM: no new connections/);
      let refusedAfterMs = Number.POSITIVE_INFINITY;
      for (let tries = 0; tries < 50; tries += 1) {
        if (await refusesConnections(url)) {
          refusedAfterMs = Date.now() - signalledAt;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // "At once": well before the drain limit of 1500 ms (the figure itself is not asserted).
      expect(refusedAfterMs).toBeLessThan(1500);
      expect(await served.exited).toBe(0);
      expect(await inFlight).toBe('cut');
      expect(served.stderr()).toMatch(/quotaplane: stopped/);
    } finally {
      thaw();
      if (served.child.exitCode === null) served.child.kill('SIGKILL');
    }
    // No output channel of the start, the fault or the stop holds the password.
    expect(served.output()).not.toContain(password);
  }, 180_000);
});
