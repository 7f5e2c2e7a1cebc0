import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

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
    expect(result.stdout).toMatch(/replay \[options\] <trace\.csv>/);
    expect(result.stdout).toMatch(/Exit status:/);
  });

  it('runs as a subprocess: a bad flag exits 2 with one line on stderr', () => {
    const result = spawnSync(process.execPath, [BIN, 'replay', 'trace.csv', '--tenants', 'zero'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--tenants');
  });
});
