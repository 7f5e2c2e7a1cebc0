import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';

import { registerServe } from '../../src/cli/commands/serve.js';
import { resolveServeConfig } from '../../src/cli/serve/serve-config.js';
import { startServer } from '../../src/cli/serve/start-server.js';
import { openStore } from '../../src/store/open-store.js';
import { CapturedStream, runCli, temporaryDirectory } from './cli-helpers.js';

// Startup and shutdown faults a new user met: a failed start that left an unseen key, listen
// faults reported as internal errors, a store whose keys are all revoked, and a stop that a
// half-sent request could hold open forever.

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = temporaryDirectory();
  cleanups.push(dir.remove);
  return dir.path;
}

async function keyCount(storeUrl: string): Promise<number> {
  const store = await openStore(storeUrl);
  try {
    return (await store.apiKeys?.().list())?.length ?? -1;
  } finally {
    await store.close();
  }
}

// Runs `serve` in process with a stop that comes as soon as it is asked for.
async function serveOnce(argv: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = new CapturedStream();
  const stderr = new CapturedStream();
  let status = 0;
  const program = new Command('quotaplane').exitOverride();
  registerServe(program, { stdout, stderr }, (next) => (status = next), { env: {}, stopSignal: async () => 'SIGTERM' });
  await program.parseAsync(['serve', ...argv], { from: 'user' });
  return { status, stdout: stdout.text, stderr: stderr.text };
}

describe('serve startup faults', () => {
  it('a port in use exits 4 naming the port and what to do, and creates no key nobody saw', async () => {
    const running = await startServer({ storeUrl: `sqlite:${join(tempDir(), 'running.db')}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
    cleanups.push(() => running.close());
    const port = new URL(running.url).port;
    const storeUrl = `sqlite:${join(tempDir(), 'fresh.db')}`;
    const result = await runCli(['serve', '--store', storeUrl, '--port', port, '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(4);
    expect(result.stderr).toContain(`port ${port} is in use`);
    expect(result.stderr).toMatch(/pass --port .* or stop the other server/);
    expect(result.stdout).not.toMatch(/qp_/);
    expect(await keyCount(storeUrl)).toBe(0);
  });

  it('an address this machine does not have exits 4 naming the host', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address.
    const result = await runCli(['serve', '--store', `sqlite:${join(tempDir(), 'q.db')}`, '--host', '192.0.2.1', '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/192\.0\.2\.1/);
  });

  it('a --store of no store URL form is a usage error (exit 2) before the port opens', async () => {
    const result = await runCli(['serve', '--store', 'mysql://ops:secret@db/quota', '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("url: must name a store as 'sqlite:<path>'");
    expect(result.stderr).not.toContain('secret');
    expect(result.stderr).not.toContain('listening');
  });

  it('a store whose every key is revoked starts with a warning saying how to create one', async () => {
    const storeUrl = `sqlite:${join(tempDir(), 'revoked.db')}`;
    const first = await startServer({ storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0 });
    expect(first.noUsableKey).toBe(false);
    await first.close();
    const store = await openStore(storeUrl);
    const [key] = (await store.apiKeys?.().list()) ?? [];
    expect(await store.apiKeys?.().revoke(key?.id ?? '', Date.now())).toBe('revoked');
    await store.close();
    const result = await serveOnce(['--store', storeUrl, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/every API key in this store is revoked.*quotaplane keys create/);
    expect(result.stdout).not.toMatch(/qp_/);
  });

  it('a store whose only usable keys are runner keys starts with a warning saying how to create an operator key', async () => {
    const storeUrl = `sqlite:${join(tempDir(), 'runners.db')}`;
    const made = await runCli(['keys', 'create', '--tenant', 'acme', '--new-tenant', '--role', 'runner', '--name', 'worker', '--actor', 'ops', '--store', storeUrl]);
    expect(made.status).toBe(0);
    const result = await serveOnce(['--store', storeUrl, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/no API key in this store is an operator's.*quotaplane keys create --role operator/);
    expect(result.stderr).not.toContain('every API key in this store is revoked');
  });

  it('--first-key-file writes the first key to a file created with mode 0600, and no output channel shows it', async () => {
    const dir = tempDir();
    const keyFile = join(dir, 'first-key');
    const result = await serveOnce(['--store', `sqlite:${join(dir, 'q.db')}`, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'info', '--first-key-file', keyFile]);
    expect(result.status).toBe(0);
    const secret = readFileSync(keyFile, 'utf8').trim();
    expect(secret).toMatch(/^qp_[A-Za-z0-9_-]{43}$/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(result.stderr).toContain(`written to ${keyFile} (mode 0600)`);
    expect(result.stdout + result.stderr).not.toContain(secret);
    expect(result.stdout + result.stderr).not.toMatch(/qp_[A-Za-z0-9_-]{43}/);
  });

  it('by default writes the first key to quotaplane-first-key beside the SQLite store file (mode 0600), naming it on stderr without the key', async () => {
    const dir = tempDir();
    const keyFile = join(dir, 'quotaplane-first-key');
    const result = await serveOnce(['--store', `sqlite:${join(dir, 'q.db')}`, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).toBe(0);
    const secret = readFileSync(keyFile, 'utf8').trim();
    expect(secret).toMatch(/^qp_[A-Za-z0-9_-]{43}$/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(result.stderr).toContain(`written to ${keyFile} (mode 0600)`);
    expect(result.stdout + result.stderr).not.toMatch(/qp_[A-Za-z0-9_-]{43}/);
    // A restart on the store that has its key leaves the file alone.
    const again = await serveOnce(['--store', `sqlite:${join(dir, 'q.db')}`, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(again.status).toBe(0);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(secret);
  });

  it('--first-key-file - prints the first key on stderr and writes no file', async () => {
    const dir = tempDir();
    const result = await serveOnce(['--store', `sqlite:${join(dir, 'q.db')}`, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent', '--first-key-file', '-']);
    expect(result.status).toBe(0);
    expect(result.stderr.match(/qp_[A-Za-z0-9_-]{43}/g)).toHaveLength(1);
    expect(existsSync(join(dir, 'quotaplane-first-key'))).toBe(false);
  });

  it('never overwrites an existing first-key file: refuses naming it, and makes no key', async () => {
    const dir = tempDir();
    const keyFile = join(dir, 'quotaplane-first-key');
    writeFileSync(keyFile, 'precious\n');
    const storeUrl = `sqlite:${join(dir, 'q.db')}`;
    const result = await runCli(['serve', '--store', storeUrl, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'silent']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`${keyFile} exists and is never overwritten`);
    expect(readFileSync(keyFile, 'utf8')).toBe('precious\n');
    expect(await keyCount(storeUrl)).toBe(0);
  });

  it('--shutdown-timeout-ms defaults to 10000, and one that is not a whole number of ms is a usage error naming it', async () => {
    expect(resolveServeConfig({}, {}).shutdownTimeoutMs).toBe(10_000);
    expect(resolveServeConfig({ shutdownTimeoutMs: 50 }, {}).shutdownTimeoutMs).toBe(50);
    const flag = await runCli(['serve', '--shutdown-timeout-ms', '10s']);
    expect([flag.status, flag.stderr]).toEqual([2, expect.stringMatching(/--shutdown-timeout-ms/)]);
  });
});

describe('serve shutdown', () => {
  it('a client that sent headers and half a body, then went quiet, is cut after the drain timeout and the store closes', async () => {
    const storeUrl = `sqlite:${join(tempDir(), 'drain.db')}`;
    const server = await startServer({ storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0, shutdownTimeoutMs: 100 });
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    // Read (and drop) what the server sends, so the socket sees the server's end and closes.
    socket.resume();
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    await new Promise<void>((resolve) =>
      socket.write('POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"run":', () => resolve()),
    );
    // Let the server read the headers, so the request is in flight and the connection is not idle.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.close();
    await socketClosed;
    // The store was closed: another opener gets it, and the first key is there.
    expect(await keyCount(storeUrl)).toBe(1);
  }, 15_000);
});
