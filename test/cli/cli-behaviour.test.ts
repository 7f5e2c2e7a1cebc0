import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import stringWidth from 'string-width';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { compiledEntry } from '../compiled-entry.js';
import { CapturedStream, REPO_ROOT, runCli, temporaryDirectory } from './cli-helpers.js';

// A CLI that behaves in pipes and catches typos.

let dir: { path: string; remove: () => void };
let url: string;
beforeEach(() => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'cli.db')}`;
});
afterEach(() => dir.remove());

async function seed(runs: { tenant: string; run: string }[]): Promise<void> {
  const store = await openStore(url);
  const plane = createPlane({ store });
  for (const { tenant, run } of runs) await plane.admit({ tenant, run });
  await store.close();
}

describe('the quotaplane CLI in pipes and with typos', () => {
  it('quotaplane runs | head -1 ends quietly: no EPIPE stack trace, exit 0 under pipefail', async () => {
    await seed(Array.from({ length: 1000 }, (_, index) => ({ tenant: 'acme', run: `run-${String(index).padStart(4, '0')}-${'x'.repeat(60)}` })));
    const bin = `node ${JSON.stringify(await compiledEntry(join(REPO_ROOT, 'src', 'cli', 'bin.ts')))}`;
    const result = spawnSync('bash', ['-c', `set -o pipefail; ${bin} runs --limit 1000 --store ${JSON.stringify(url)} | head -1`], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.stdout.split('\n').filter((line) => line !== '')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(result.status).toBe(0);
  }, 60_000);

  it('with --json a failure is one JSON document on stderr with its code, message, exit status and field', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    const missing = await runCli(['settle', 'run-ghost', '--tenant', 'acme', '--epoch', '1', '--tokens', '1', '--minor-units', '0', '--conclude', '--actor', 'ops', '--store', url, '--json']);
    expect(missing.status).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: expect.stringContaining('run-ghost'), exitStatus: 1 } });
    const bad = await runCli(['runs', '--tenant', 'acme\u202e', '--store', url, '--json']);
    expect(bad.status).toBe(2);
    expect(JSON.parse(bad.stderr)).toEqual({ error: { code: 'USAGE', exitStatus: 2, message: expect.stringMatching(/^option '--tenant <tenant>' argument .* U\+202E/) } });
    const plain = await runCli(['settle', 'run-ghost', '--tenant', 'acme', '--epoch', '1', '--tokens', '1', '--minor-units', '0', '--conclude', '--actor', 'ops', '--store', url]);
    expect(plain.stderr).toMatch(/^error: .*run-ghost/);
  });

  it('an enumerated flag refuses an unknown value, listing the valid ones (audit --action)', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    const result = await runCli(['audit', '--action', 'quota.sett', '--store', url]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--action.*quota\.sett.*Allowed choices are halt, lift, quota\.set, quota\.update, plane\.set, plane\.update, plane\.halt, plane\.lift, run\.release, run\.settle, key\.create, key\.revoke, key\.rotate, run\.prune, rate\.prune, tenant\.delete, calls\.set, call\.release\./);
  });

  it('a number past the largest safe integer names the range, and comma-separated --status says to use spaces', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    const big = await runCli(['quota', 'set', '--tenant', 'acme', '--max-concurrent-runs', '99999999999999999999', '--actor', 'ops', '--store', url]);
    expect(big.status).toBe(2);
    expect(big.stderr).toContain('Use a whole number from 0 to 9007199254740991.');
    const commas = await runCli(['runs', '--tenant', 'acme', '--status', 'concluded,released', '--store', url]);
    expect(commas.status).toBe(2);
    expect(commas.stderr).toContain('give several separated by spaces');
  });

  it('--limit states the same range whether the number is too small or too large', async () => {
    for (const limit of ['0', '5000', 'x']) {
      const result = await runCli(['audit', '--limit', limit, '--store', url]);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(`argument '${limit}' is invalid. Use a whole number from 1 to 1000.`);
    }
  });

  it('a cut listing suggests --tenant only when more than one tenant was listed', async () => {
    await seed([
      { tenant: 'acme', run: 'run-1' },
      { tenant: 'acme', run: 'run-2' },
      { tenant: 'globex', run: 'run-3' },
    ]);
    const one = await runCli(['runs', '--tenant', 'acme', '--limit', '1', '--store', url]);
    expect(one.status).toBe(5);
    expect(one.stderr).toContain('raise --limit (up to 1000)');
    expect(one.stderr).not.toContain('--tenant');
    const all = await runCli(['runs', '--limit', '1', '--store', url]);
    expect(all.status).toBe(5);
    expect(all.stderr).toContain('raise --limit (up to 1000) or narrow with --tenant');
  });

  it('audit --action takes every action quotaplane records: plane.set rows of the plane chain', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    expect((await runCli(['quota', 'plane', 'set', '--max-concurrent-runs', '5', '--actor', 'ops', '--store', url])).status).toBe(0);
    const result = await runCli(['audit', '--tenant', 'quotaplane:plane', '--action', 'plane.set', '--store', url, '--json']);
    expect(result.status).toBe(0);
    expect((JSON.parse(result.stdout) as { rows: { tenant: string; action: string }[] }).rows).toMatchObject([{ tenant: 'quotaplane:plane', action: 'plane.set' }]);
  });

  it('a listing cut by --limit says so on stderr in table mode (and only in truncated with --json)', async () => {
    await seed([
      { tenant: 'acme', run: 'run-1' },
      { tenant: 'acme', run: 'run-2' },
    ]);
    const table = await runCli(['runs', '--limit', '1', '--store', url]);
    expect(table.status).toBe(5);
    expect(table.stderr).toMatch(/showing the first 1; there are more: raise --limit/);
    const json = await runCli(['runs', '--limit', '1', '--store', url, '--json']);
    expect([json.status, json.stderr, JSON.parse(json.stdout).truncated]).toEqual([5, '', true]);
  });

  it('status --tenant for a tenant the store has never seen says so (exit 1) instead of showing an unlimited tenant', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    const unknown = await runCli(['status', '--tenant', 'acmee', '--store', url]);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/tenant 'acmee' is not in store .*check --tenant/);
    // L95.3: the nearest tenant the store has is suggested.
    expect(unknown.stderr).toContain("did you mean 'acme'? check --tenant");
    // With --json the failure is JSON too, on stderr, and stdout stays empty.
    const asJson = await runCli(['status', '--tenant', 'acmee', '--store', url, '--json']);
    expect([asJson.status, asJson.stdout]).toEqual([1, '']);
    expect(JSON.parse(asJson.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: expect.stringMatching(/^tenant 'acmee' is not in store /), field: 'tenant', exitStatus: 1 } });
    expect((await runCli(['status', '--tenant', 'acme', '--store', url])).status).toBe(0);
  });

  it('every read with --tenant refuses a tenant the store has never seen (NOT_FOUND, exit 1) instead of answering empty', async () => {
    await seed([{ tenant: 'acme', run: 'run-1' }]);
    for (const command of [['halts'], ['runs'], ['reservations'], ['attention'], ['sweep'], ['audit'], ['audit', '--verify']]) {
      const result = await runCli([...command, '--tenant', 'acmee', '--store', url, '--json']);
      expect({ command, status: result.status, stdout: result.stdout }).toEqual({ command, status: 1, stdout: '' });
      expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: 'NOT_FOUND', field: 'tenant', message: expect.stringContaining("tenant 'acmee' is not in store") } });
      expect((await runCli([...command, '--tenant', 'acme', '--store', url, '--json'])).status).toBe(0);
    }
    // quotaplane's own chains are tenants to audit only.
    expect((await runCli(['audit', '--tenant', 'quotaplane:plane', '--store', url])).status).toBe(0);
    const chain = await runCli(['runs', '--tenant', 'quotaplane:plane', '--store', url]);
    expect(chain.status).toBe(1);
    expect(chain.stderr).toContain("'quotaplane:plane' is one of quotaplane's own audit chains");
  });

  it('remedies printed by attention carry the target flags the command was given', async () => {
    const store = await openStore(url);
    const plane = createPlane({ store, clock: { nowMs: () => Date.UTC(2026, 0, 5) } });
    await plane.admit({ tenant: 'acme', run: 'run-1', leaseMs: 1000 });
    await store.close();
    await runCli(['sweep', '--store', url]);
    const text = await runCli(['attention', '--store', url]);
    expect(text.status).toBe(1);
    expect(text.stdout).toContain(`    quotaplane release run-1 --tenant acme --store ${url} --actor <name>`);
    const secretUrl = 'postgres://app:s3cret-pw@127.0.0.1:1/db';
    expect((await runCli(['attention', '--store', secretUrl])).stdout).not.toContain('s3cret-pw');
  });

  it('tables align by display width: CJK and emoji names line up with the others', async () => {
    await seed([
      { tenant: 'acme', run: 'run-1' },
      { tenant: '租户甲', run: 'run-2' },
      { tenant: 'team-🚀', run: 'run-3' },
    ]);
    const { stdout } = await runCli(['runs', '--store', url]);
    const lines = stdout.trim().split('\n');
    const runColumn = lines.slice(1).map((line) => stringWidth(line.slice(0, line.indexOf('run-'))));
    expect(new Set(runColumn).size).toBe(1);
  });

  it('--help of every command wraps to the terminal width without cutting a sentence short', async () => {
    const commands = [[], ['serve'], ['replay'], ['halt'], ['lift'], ['halts'], ['status'], ['runs'], ['reservations'], ['release'], ['settle'], ['attention'], ['quota', 'set'], ['quota', 'update'], ['audit'], ['sweep'], ['migrate'], ['keys'], ['keys', 'create']];
    for (const command of commands) {
      const stdout = new CapturedStream();
      Object.defineProperty(stdout, 'columns', { value: 80 });
      await main([...command, '--help'], { stdout, stderr: new CapturedStream() });
      const lines = stdout.text.split('\n');
      // The description comes before the first list (Arguments, Options, Commands).
      const descriptionEnd = lines.findIndex((line) => /^(Arguments|Options|Commands):/.test(line));
      for (const [index, line] of lines.entries()) {
        // Only a word too long for any line (a URL, a CSV header) may run past the width.
        const unbreakable = line.trim().split(/\s+/).some((word) => stringWidth(word) > 30);
        // Commander leaves an option list unwrapped when its description column would be under 40
        // columns (replay's long flags); the prose it wraps is the description.
        if (!unbreakable && index < descriptionEnd) expect([command.join(' '), line, stringWidth(line) <= 80]).toEqual([command.join(' '), line, true]);
        // A line followed by the rest of its sentence must have had no room for the next word.
        const next = lines[index + 1] ?? '';
        const indent = (text: string) => /^\s*/.exec(text)?.[0].length ?? 0;
        if (index < descriptionEnd && /^[^\s]/.test(line) && /^[a-z(]/.test(next) && indent(next) === indent(line) && !/^\s*-/.test(next)) {
          const nextWord = next.trim().split(' ')[0] ?? '';
          expect([command.join(' '), line, stringWidth(line) + 1 + stringWidth(nextWord) > 80]).toEqual([command.join(' '), line, true]);
        }
      }
    }
  });
});
