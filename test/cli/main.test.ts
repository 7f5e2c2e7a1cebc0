import { describe, expect, it } from 'vitest';

import { runCli } from './cli-helpers.js';

describe('quotaplane main: usage errors and help', () => {
  it('prints help with the exit-status table and exits 0', async () => {
    const { status, stdout } = await runCli(['--help']);
    expect(status).toBe(0);
    expect(stdout).toMatch(/replay/);
    expect(stdout).toMatch(/Exit status:/);
    expect(stdout).toMatch(/5 +output truncated by --limit/);
  });

  it('prints the replay help with its flags and exits 0', async () => {
    const { status, stdout } = await runCli(['replay', '--help']);
    expect(status).toBe(0);
    for (const flag of ['--tenants', '--seed', '--max-concurrent', '--tokens-per-period', '--period', '--store', '--json']) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toMatch(/Exit status:/);
  });

  it('prints the version and exits 0', async () => {
    const { status, stdout } = await runCli(['--version']);
    expect(status).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 2 without a command', async () => {
    const { status, stderr } = await runCli([]);
    expect(status).toBe(2);
    expect(stderr).toMatch(/Usage: quotaplane/);
  });

  it('exits 2 for an unknown command, naming it', async () => {
    const { status, stderr } = await runCli(['replya', 'x.csv']);
    expect(status).toBe(2);
    expect(stderr).toMatch(/unknown command 'replya'/);
    expect(stderr).toMatch(/replay/);
  });

  it('exits 2 for an unknown flag, naming it in one line', async () => {
    const { status, stderr } = await runCli(['replay', 'x.csv', '--tenant', '3']);
    expect(status).toBe(2);
    expect(stderr).toMatch(/unknown option '--tenant'/);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    [['--tenants', '0'], '--tenants'],
    [['--tenants', 'many'], '--tenants'],
    [['--max-concurrent', '-1'], '--max-concurrent'],
    [['--tokens-per-period', '1.5'], '--tokens-per-period'],
    [['--seed', '4294967296'], '--seed'],
    [['--zipf-exponent', '0'], '--zipf-exponent'],
    [['--period', 'weekly'], '--period'],
  ])('exits 2 for a bad value of %j, naming the flag', async (flags, name) => {
    const { status, stdout, stderr } = await runCli(['replay', 'x.csv', ...flags]);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(name);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 when the trace file does not exist, naming it', async () => {
    const { status, stderr } = await runCli(['replay', '/nonexistent/trace.csv']);
    expect(status).toBe(2);
    expect(stderr.trim()).toMatch(/^error: cannot read trace \/nonexistent\/trace\.csv \(ENOENT\)/);
  });

  it('exits 2 for --keep-store with --store, saying which to drop', async () => {
    const { status, stderr } = await runCli(['replay', 'x.csv', '--store', 'sqlite::memory:', '--keep-store']);
    expect(status).toBe(2);
    expect(stderr).toMatch(/--keep-store .* drop --keep-store or drop --store/);
  });
});
