import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { until } from '../until.js';
import { REPO_ROOT } from './cli-helpers.js';

const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');

describe('the built quotaplane bin', () => {
  beforeAll(() => {
    // `npm ci` builds dist/ through `prepare`; a working tree that was never built gets built here.
    if (existsSync(BIN)) return;
    const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);
  }, 180_000);

  it('runs as a subprocess: --help lists replay and the exit statuses, exit 0', () => {
    const result = spawnSync(process.execPath, [BIN, '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: quotaplane/);
    expect(result.stdout).toMatch(/replay \[options\] \[trace\.csv\]/);
    expect(result.stdout).toMatch(/Exit status:/);
  });

  it('runs as a subprocess: a bad flag exits 2 with one line on stderr', () => {
    const result = spawnSync(process.execPath, [BIN, 'replay', 'trace.csv', '--tenants', 'zero'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--tenants');
  });

  describe('loads the heavy libraries only for a command that uses them', () => {
    // Fastify, prom-client, undici, pino, the store drivers and the progress bar are CommonJS, so
    // every one a process loaded is in require.cache; a preload script prints those packages at exit.
    const HEAVY = ['fastify', 'prom-client', 'undici', 'pino', 'better-sqlite3', 'pg', 'cli-progress'];
    const dir = mkdtempSync(join(tmpdir(), 'quotaplane-bin-load-'));
    const preload = join(dir, 'loaded-packages.cjs');
    writeFileSync(
      preload,
      String.raw`process.on('exit', () => {
  const names = new Set();
  for (const path of Object.keys(require.cache)) {
    const found = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(path);
    if (found) names.add(found[1]);
  }
  require('node:fs').writeSync(2, 'LOADED ' + JSON.stringify([...names]) + '\n');
});
`,
    );
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function loadedBy(args: string[]): string[] {
      const result = spawnSync(process.execPath, ['--require', preload, BIN, ...args], { cwd: dir, encoding: 'utf8' });
      const line = result.stderr.split('\n').find((each) => each.startsWith('LOADED '));
      expect(line, result.stderr).toBeDefined();
      return JSON.parse((line as string).slice('LOADED '.length)) as string[];
    }

    const LIGHT = [['--version'], ['--help'], ['serve', '--help'], ['halt', '--help'], ['replay', '--help']].map((args) => [args.join(' '), args] as const);
    it.each(LIGHT)('%s loads none of them', (_shown, args) => {
      const loaded = loadedBy([...args]);
      for (const name of HEAVY) expect(loaded).not.toContain(name);
    });

    it('a command that opens a SQLite store loads its driver (the check above sees what a process loads)', () => {
      expect(loadedBy(['halts', '--store', `sqlite:${join(dir, 'missing.db')}`, '--tenant', 'acme'])).toContain('better-sqlite3');
    });
  });

  it('npm start stops the server when npm itself gets SIGTERM, as a supervisor sends it (no server left behind)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quotaplane-npm-start-'));
    const child = spawn('npm', ['start', '--silent'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, QUOTAPLANE_STORE: `sqlite:${join(dir, 'started.db')}`, QUOTAPLANE_PORT: '0' },
    });
    try {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
          if (match?.[1] !== undefined) resolve(match[1]);
        });
        void exited.then(() => reject(new Error(`npm start exited before serving: ${stderr}`)));
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      child.kill('SIGTERM');
      await exited;
      // The server may take a moment to finish closing; it must stop answering, not outlive npm.
      await until(async () => !(await fetch(`${url}/healthz`).then(() => true, () => false)), `the server at ${url} stops answering after npm start got SIGTERM`, { everyMs: 100, withinMs: 15_000 });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
