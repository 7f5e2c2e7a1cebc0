import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { freshPostgresDatabase } from '../plane/backends.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// Every operator verb against a SQLite store (issue #5), in process through main(argv, io), with
// --json output parsed. Runs are admitted long ago with one-minute leases, so by the wall clock the
// CLI reads they have lapsed, as the leases of a crashed runner have.

const T0 = Date.UTC(2026, 0, 5, 8);
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

let dir: { path: string; remove: () => void };
let url: string;

async function seed(): Promise<void> {
  const store = await openStore(url);
  await seedStore(store);
  await store.close();
}

async function seedStore(store: Awaited<ReturnType<typeof openStore>>): Promise<void> {
  const plane = createPlane({ store, clock: new ManualClock(T0) });
  await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 1_000_000 });
  for (const run of ['run-a', 'run-b']) {
    await plane.admit({ tenant: 'acme', run, chain: ['alice@example.com', 'svc-billing'], budget: BUDGET, leaseMs: 60_000 });
  }
  await plane.admit({ tenant: 'globex', run: 'run-g', leaseMs: 60_000 });
}

/** Runs the CLI with `--store` and parses its --json answer. */
async function json(args: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const { status, stdout, stderr } = await runCli([...args, '--store', url, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

/** Runs every operator verb in turn against the store at `url`, seeded by {@link seedStore}. */
async function everyVerb(): Promise<void> {
  const set = await json(['quota', 'set', '--tenant', 'acme', '--actor', 'ops-alice', '--max-concurrent-runs', '2', '--max-tokens-per-period', '1000000', '--rate', 'tool://payments/refund=20/3600']);
  expect(set).toMatchObject({ status: 0, body: { tenant: 'acme', quota: { period: 'monthly', maxConcurrentRuns: 2, rateCeilings: { 'tool://payments/refund': [{ count: 20, windowSeconds: 3600 }] } } } });
  expect((await json(['quota', 'get', '--tenant', 'acme'])).body.quota.maxConcurrentRuns).toBe(2);

  const halt = await json(['halt', 'subject:svc-billing', '--tenant', 'acme', '--reason', 'credential leaked', '--actor', 'ops-alice']);
  expect(halt).toMatchObject({ status: 0, body: { tenant: 'acme', scope: 'subject:svc-billing', reach: 'admission and running work', by: { actor: 'ops-alice', basis: 'asserted' } } });
  const halts = await json(['halts']);
  expect(halts.body).toEqual({ halts: [expect.objectContaining({ tenant: 'acme', scope: 'subject:svc-billing', reason: 'credential leaked' })], truncated: false });

  const status = await json(['status', '--tenant', 'acme']);
  expect(status.body.tenants[0]).toMatchObject({ tenant: 'acme', running: 2, ceilings: { maxConcurrentRuns: 2 }, halts: [{ scope: 'subject:svc-billing' }] });

  const runs = await json(['runs']);
  expect(runs.body.runs.map((run: any) => `${run.tenant}/${run.run}:${run.status}`)).toEqual(['acme/run-a:running', 'acme/run-b:running', 'globex/run-g:running']);

  const swept = await json(['sweep']);
  expect(swept.status).toBe(0);
  expect(swept.body.swept).toEqual([
    { tenant: 'acme', run: 'run-a', releasedSlot: true, stranded: true },
    { tenant: 'acme', run: 'run-b', releasedSlot: true, stranded: true },
    { tenant: 'globex', run: 'run-g', releasedSlot: true, stranded: true },
  ]);
  expect((await json(['runs', '--stranded', '--tenant', 'acme'])).body.runs.map((run: any) => run.run)).toEqual(['run-a', 'run-b']);
  expect((await json(['reservations', '--tenant', 'acme'])).body.reservations).toEqual([
    { tenant: 'acme', run: 'run-a', period: '2026-01', remaining: { tokens: 1100, minorUnits: 0 } },
    { tenant: 'acme', run: 'run-b', period: '2026-01', remaining: { tokens: 1100, minorUnits: 0 } },
  ]);

  const attention = await json(['attention', '--tenant', 'acme']);
  expect(attention.status).toBe(1);
  expect(attention.body.conditions.map((c: any) => `${c.kind}:${c.run}`)).toEqual([
    'run.stranded:run-a',
    'run.stranded:run-b',
    'pass.unsettled:run-a',
    'pass.unsettled:run-b',
  ]);
  expect(attention.body.conditions[0].remedy.cli[0]).toBe(
    'quotaplane settle run-a --tenant acme --epoch 1 --tokens <tokens> --minor-units <minorUnits> [--conclude]',
  );

  const settled = await json(['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '420', '--minor-units', '7', '--conclude', '--actor', 'ops-bob']);
  expect(settled).toMatchObject({ status: 0, body: { tenant: 'acme', outcome: 'settled', receipt: { run: 'run-a', epoch: 1, period: '2026-01', spend: { tokens: 420, minorUnits: 7 }, concludes: true } } });
  const again = await json(['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '420', '--minor-units', '7', '--conclude', '--actor', 'ops-bob']);
  expect(again).toMatchObject({ status: 0, body: { outcome: 'already-settled' } });
  const conflicting = await json(['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '1', '--minor-units', '7', '--actor', 'ops-bob']);
  expect(conflicting.status).toBe(1);
  expect(conflicting.stderr).toMatch(/settled twice with different payloads/);

  const released = await json(['release', 'run-b', '--tenant', 'acme', '--actor', 'ops-bob']);
  expect(released).toMatchObject({ status: 0, body: { tenant: 'acme', outcome: 'released', previousStatus: 'stranded', holdReleased: { remaining: { tokens: 1100 } }, audit: { action: 'run.release' } } });
  expect((await json(['release', 'run-b', '--tenant', 'acme', '--actor', 'ops-bob'])).status).toBe(1);
  expect((await json(['release', 'run-nobody', '--tenant', 'acme', '--actor', 'ops-bob'])).status).toBe(1);

  expect((await json(['lift', 'subject:svc-billing', '--tenant', 'acme', '--actor', 'ops-carol'])).body).toEqual({
    tenant: 'acme',
    scope: 'subject:svc-billing',
    wasStanding: true,
    removed: true,
  });
  expect((await json(['lift', 'subject:svc-billing', '--tenant', 'acme', '--actor', 'ops-carol'])).status).toBe(1);
  expect((await json(['halts', '--lifted'])).body.lifted).toEqual([
    expect.objectContaining({ tenant: 'acme', scope: 'subject:svc-billing', by: { actor: 'ops-carol', basis: 'asserted' }, thrownBy: { actor: 'ops-alice', basis: 'asserted' } }),
  ]);

  const audit = await json(['audit', '--tenant', 'acme']);
  expect(audit.body.rows.map((row: any) => `${row.action}:${row.by.actor}`)).toEqual([
    'lift:ops-carol',
    'run.release:ops-bob',
    'run.settle:ops-bob',
    'halt:ops-alice',
    'quota.set:ops-alice',
    'quota.set:library',
  ]);
  expect(await json(['audit', '--verify'])).toMatchObject({ status: 0, body: { ok: true, tenants: [{ tenant: 'acme', rows: 6, ok: true }, { tenant: 'globex', rows: 0, ok: true }] } });
  expect((await json(['attention', '--tenant', 'acme'])).status).toBe(0);
}

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  await seed();
});
afterEach(() => dir.remove());

describe('quotaplane operator commands on a store', () => {
  it('every verb works and answers JSON a script can read', everyVerb);

  it('audit --verify names a row tampered with in the database file, and exits 1', async () => {
    await runCli(['halt', 'tenant', '--tenant', 'acme', '--reason', 'incident 42', '--actor', 'ops-alice', '--store', url]);
    const raw = new Database(join(dir.path, 'quota.db'));
    raw.prepare("UPDATE quota_audit SET detail_json = '{\"reason\":\"routine\",\"replaced\":null}' WHERE tenant = 'acme' AND seq = 2").run();
    raw.close();
    const verified = await json(['audit', '--verify']);
    expect(verified.status).toBe(1);
    expect(verified.body.tenants[0]).toMatchObject({ tenant: 'acme', ok: false, firstMismatch: { seq: 2, problem: 'hash' } });
    const text = await runCli(['audit', '--verify', '--store', url]);
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(/^acme: row 2 fails \(hash\): audit row 2 of tenant 'acme' \(halt tenant\) does not match its hash/m);
  });

  it('exits 5 when --limit cuts a list, 1 for attention findings, and prints tables without --json', async () => {
    const runs = await runCli(['runs', '--limit', '2', '--store', url]);
    expect(runs.status).toBe(5);
    expect(runs.stdout.split('\n')[0]).toMatch(/^TENANT +RUN +STATUS +FOR +EPOCH +SLOT +LEASE UNTIL$/);
    expect(runs.stdout).toMatch(/acme +run-a +running/);
    expect(runs.stdout).not.toMatch(/run-g/);
    expect((await json(['runs', '--limit', '3'])).status).toBe(0);
    await runCli(['sweep', '--store', url]);
    expect((await json(['attention', '--limit', '1'])).body).toMatchObject({ truncated: true, truncatedKinds: ['run.stranded', 'pass.unsettled'] });
    expect((await json(['attention', '--limit', '1'])).status).toBe(5);
    const text = await runCli(['attention', '--store', url]);
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(/^run\.stranded {2}acme {2}run-a pass 1 {2}for /m);
    expect(text.stdout).toContain('    quotaplane release run-a --tenant acme');
  });

  it('refuses usage mistakes with 2 before touching the store, and an unreachable store with 4', async () => {
    const scope = await runCli(['halt', 'everything', '--tenant', 'acme', '--reason', 'x', '--actor', 'a', '--store', url]);
    expect(scope.status).toBe(2);
    expect(scope.stderr).toContain("'tenant', 'agent:<metadata.name>', 'revision:<manifest digest>', 'subject:<principal on the chain>'");
    const noActor = await runCli(['release', 'run-a', '--tenant', 'acme', '--store', url]);
    expect(noActor.status).toBe(2);
    expect(noActor.stderr).toMatch(/--actor/);
    expect((await runCli(['runs', '--stranded', '--all', '--store', url])).status).toBe(2);
    expect((await runCli(['quota', 'set', '--tenant', 'acme', '--actor', 'a', '--rate', 'nonsense', '--store', url])).status).toBe(2);
    expect((await runCli(['runs', '--store', 'mysql://x'])).status).toBe(2);
    const unreachable = await runCli(['runs', '--store', `sqlite:${join(dir.path, 'no', 'such', 'dir', 'q.db')}`]);
    expect(unreachable.status).toBe(4);
    expect((await json(['attention'])).status).toBe(1);
  });

  it('lists every operator verb and the exit statuses in --help', async () => {
    const { status, stdout } = await runCli(['--help']);
    expect(status).toBe(0);
    for (const verb of ['halt', 'lift', 'halts', 'status', 'runs', 'reservations', 'release', 'settle', 'attention', 'quota', 'audit', 'sweep']) {
      expect(stdout).toMatch(new RegExp(`^  ${verb}\\b`, 'm'));
    }
    expect(stdout).toMatch(/1 +a negative finding/);
    const halt = await runCli(['halt', '--help']);
    expect(halt.stdout).toContain('  subject:<principal on the chain>');
    expect(halt.stdout).toMatch(/Exit status:/);
  });
});

describe('quotaplane operator commands on a PostgreSQL store named by URL', () => {
  it('every verb works and answers JSON a script can read', async () => {
    const database = await freshPostgresDatabase();
    const fileUrl = url;
    url = database.url;
    try {
      const store = await openStore(url);
      await seedStore(store);
      await store.close();
      await everyVerb();
    } finally {
      url = fileUrl;
      await database.remove();
    }
  });
});
