import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { chooseTarget } from '../../src/cli/operator/target-choice.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { mintApiKey } from '../../src/http/api-key-secret.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { freshPostgresDatabase } from '../plane/backends.js';
import { pagesContaining } from '../docs/markdown.js';
import { describeOn } from '../test-backends.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// Every operator verb against a store and through a server, in process through
// main(argv, io), with --json output parsed and the two answers compared. Runs are admitted long
// ago with one-minute leases, so by the wall clock the CLI reads they have lapsed, as the leases
// of a crashed runner have.

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
  await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
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

/** The operators of the scenario: on a store each is an `--actor`, on a server each is an operator key of that name. */
const ACTORS = ['ops-alice', 'ops-bob', 'ops-carol'] as const;
type Actor = (typeof ACTORS)[number];

/** A `quotaplane serve` app listening on 127.0.0.1:0 over a store, with an all-tenant operator key per actor. */
interface Served {
  readonly url: string;
  readonly storeUrl: string;
  readonly keys: Record<Actor, string>;
  close(): Promise<void>;
}

async function serve(storeUrl: string): Promise<Served> {
  const store = await openStore(storeUrl);
  const apiKeys = store.apiKeys?.();
  if (apiKeys === undefined) throw new Error(`${storeUrl} keeps no API keys`);
  const keys = {} as Record<Actor, string>;
  for (const actor of ACTORS) {
    const minted = mintApiKey({ role: 'operator', tenant: '*', name: actor, atMs: T0 });
    await apiKeys.create(minted.key);
    keys[actor] = minted.secret;
  }
  const app = await buildApp({ plane: createPlane({ store }), store, keys: apiKeys });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    storeUrl,
    keys,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/** Instants after this one were read from the wall clock while the test ran; the seeded ones are T0 and T0 + 60 s. */
const LIVE_AFTER_MS = T0 + 86_400_000;

/**
 * What may differ between a verb run on a store and the same verb through a server: instants and
 * ages read from the wall clock while the test runs, audit hashes (they cover those instants), and
 * the basis (`asserted` by --actor, `authenticated` by key). Everything else must be equal.
 */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => comparable(item));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => {
      if (name === 'hash') return [name, '<hash>'];
      if (name === 'ageMs') return [name, '<age>'];
      if (/(^atMs|AtMs|SinceMs|sinceMs)$/.test(name) && typeof member === 'number' && member > LIVE_AFTER_MS) return [name, '<now>'];
      if ((name === 'basis' || name === 'thrownBasis') && (member === 'asserted' || member === 'authenticated')) return [name, '<basis>'];
      return [name, comparable(member)];
    }),
  );
}

type Answer = { status: number; body: any; stderr: string };

/**
 * Runs one verb both ways: on the store at `url` (with `--actor`), and through the server (with
 * the actor's key) over its own, identically seeded store. Both answers are parsed and must agree
 * (see {@link comparable}); a verb that only reads (no `actor`, and `reads` not false) is also run
 * with `--store` on the server's own store, which must answer what the server did. Answers the
 * store's answer and the server's.
 */
async function bothWays(
  server: Served,
  args: readonly string[],
  actor?: Actor,
  reads = actor === undefined,
): Promise<{ store: Answer; served: Answer }> {
  const run = async (flags: readonly string[]): Promise<Answer> => {
    const { status, stdout, stderr } = await runCli([...args, ...flags, '--json']);
    return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
  };
  const store = await run(['--store', url, ...(actor === undefined ? [] : ['--actor', actor])]);
  const served = await run(['--url', server.url, '--key', server.keys[actor ?? 'ops-alice']]);
  expect([served.status, comparable(served.body)], `${args.join(' ')} through the server: ${served.stderr}`).toEqual([
    store.status,
    comparable(store.body),
  ]);
  if (reads) {
    const sameStore = await run(['--store', server.storeUrl]);
    expect([sameStore.status, comparable(sameStore.body)], `${args.join(' ')} on the served store`).toEqual([
      served.status,
      comparable(served.body),
    ]);
  }
  return { store, served };
}

/**
 * Runs every operator verb in turn, each both ways ({@link bothWays}): on the store at `url` and
 * through `server`, both seeded by {@link seedStore}.
 */
async function everyVerb(server: Served): Promise<void> {
  const set = await bothWays(server, ['quota', 'set', '--tenant', 'acme', '--max-concurrent-runs', '2', '--max-tokens-per-period', '1000000', '--rate', 'tool://payments/refund=20/3600'], 'ops-alice');
  expect(set.store).toMatchObject({ status: 0, body: { tenant: 'acme', quota: { period: 'monthly', maxConcurrentRuns: 2, rateCeilings: { 'tool://payments/refund': [{ count: 20, windowSeconds: 3600 }] } } } });
  expect((await bothWays(server, ['quota', 'get', '--tenant', 'acme'])).store.body.quota.maxConcurrentRuns).toBe(2);
  // quota update changes the ceilings named and keeps the rest; 'unlimited' removes one.
  const update = await bothWays(server, ['quota', 'update', '--tenant', 'acme', '--max-concurrent-runs', '3', '--max-tokens-per-period', 'unlimited'], 'ops-alice');
  expect(update.store).toMatchObject({ status: 0, body: { tenant: 'acme', quota: { period: 'monthly', maxConcurrentRuns: 3, rateCeilings: { 'tool://payments/refund': [{ count: 20, windowSeconds: 3600 }] } } } });
  expect(update.store.body.quota.maxTokensPerPeriod).toBeUndefined();
  const dropRate = await bothWays(server, ['quota', 'update', '--tenant', 'acme', '--max-concurrent-runs', '2', '--max-tokens-per-period', '1000000', '--rate', 'tool://payments/refund=none'], 'ops-alice');
  expect(dropRate.store.body.quota).toEqual({ period: 'monthly', maxConcurrentRuns: 2, maxTokensPerPeriod: 1000000 });
  await bothWays(server, ['quota', 'set', '--tenant', 'acme', '--max-concurrent-runs', '2', '--max-tokens-per-period', '1000000', '--rate', 'tool://payments/refund=20/3600'], 'ops-alice');
  const [updateRow] = (await bothWays(server, ['audit', '--tenant', 'acme', '--action', 'quota.update', '--limit', '1'])).store.body.rows ?? [];
  expect(updateRow).toMatchObject({ action: 'quota.update', detail: { old: { maxConcurrentRuns: 3 }, new: { maxConcurrentRuns: 2, maxTokensPerPeriod: 1000000 }, patch: { rateCeilings: { 'tool://payments/refund': null } } } });

  const halt = await bothWays(server, ['halt', 'subject:svc-billing', '--tenant', 'acme', '--reason', 'credential leaked'], 'ops-alice');
  expect(halt.store).toMatchObject({
    status: 0,
    body: { tenant: 'acme', scope: 'subject:svc-billing', reach: 'admission and running work', reachesRunning: true, running: 2, by: { actor: 'ops-alice', basis: 'asserted' } },
  });
  // Through a server the operator is the key's name, authenticated.
  expect(halt.served.body.by).toEqual({ actor: 'ops-alice', basis: 'authenticated' });
  const halts = await bothWays(server, ['halts']);
  expect(halts.store.body).toEqual({
    plane: null,
    halts: [expect.objectContaining({ tenant: 'acme', scope: 'subject:svc-billing', reason: 'credential leaked' })],
    truncated: false,
  });

  const status = await bothWays(server, ['status', '--tenant', 'acme']);
  expect(status.store.body.tenants[0]).toMatchObject({ tenant: 'acme', running: 2, ceilings: { maxConcurrentRuns: 2 }, halts: [{ scope: 'subject:svc-billing' }] });
  expect((await bothWays(server, ['status'])).store.body.tenants.map((tenant: any) => tenant.tenant)).toEqual(['acme', 'globex']);

  const runs = await bothWays(server, ['runs']);
  expect(runs.store.body.runs.map((run: any) => `${run.tenant}/${run.run}:${run.status}`)).toEqual(['acme/run-a:running', 'acme/run-b:running', 'globex/run-g:running']);

  const swept = await bothWays(server, ['sweep'], undefined, false);
  expect(swept.store.status).toBe(0);
  expect(swept.store.body.swept).toEqual([
    { tenant: 'acme', run: 'run-a', releasedSlot: true, stranded: true },
    { tenant: 'acme', run: 'run-b', releasedSlot: true, stranded: true },
    { tenant: 'globex', run: 'run-g', releasedSlot: true, stranded: true },
  ]);
  expect((await bothWays(server, ['runs', '--stranded', '--tenant', 'acme'])).store.body.runs.map((run: any) => run.run)).toEqual(['run-a', 'run-b']);
  expect((await bothWays(server, ['reservations', '--tenant', 'acme'])).store.body.reservations).toEqual([
    { tenant: 'acme', run: 'run-a', period: '2026-01', remaining: { tokens: 1100, minorUnits: 0 } },
    { tenant: 'acme', run: 'run-b', period: '2026-01', remaining: { tokens: 1100, minorUnits: 0 } },
  ]);

  const attention = await bothWays(server, ['attention', '--tenant', 'acme']);
  expect(attention.store.status).toBe(1);
  expect(attention.store.body.conditions.map((c: any) => `${c.kind}:${c.run}`)).toEqual([
    'run.stranded:run-a',
    'run.stranded:run-b',
    'pass.unsettled:run-a',
    'pass.unsettled:run-b',
  ]);
  expect(attention.store.body.conditions[0].remedy.cli[0]).toBe(
    'quotaplane settle run-a --tenant acme --epoch 1 --tokens <tokens> --minor-units <minorUnits> [--conclude]',
  );
  expect((await bothWays(server, ['attention'])).store.body.conditions).toHaveLength(6);

  const settleArgs = ['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '420', '--minor-units', '7', '--conclude'];
  const settled = await bothWays(server, settleArgs, 'ops-bob');
  expect(settled.store).toMatchObject({ status: 0, body: { tenant: 'acme', outcome: 'settled', receipt: { run: 'run-a', epoch: 1, period: '2026-01', spend: { tokens: 420, minorUnits: 7 }, concludes: true } } });
  expect((await bothWays(server, settleArgs, 'ops-bob')).store).toMatchObject({ status: 0, body: { outcome: 'already-settled' } });
  const conflicting = await bothWays(server, ['settle', 'run-a', '--tenant', 'acme', '--epoch', '1', '--tokens', '1', '--minor-units', '7'], 'ops-bob');
  expect(conflicting.store.status).toBe(1);
  expect(conflicting.store.stderr).toMatch(/settled already with a different payload; the first receipt stands/);
  expect(conflicting.served.stderr).toMatch(/settled already with a different payload; the first receipt stands/);

  const released = await bothWays(server, ['release', 'run-b', '--tenant', 'acme'], 'ops-bob');
  expect(released.store).toMatchObject({ status: 0, body: { tenant: 'acme', outcome: 'released', previousStatus: 'stranded', holdReleased: { remaining: { tokens: 1100 } }, audit: { action: 'run.release' } } });
  expect(released.served.body.audit.by).toEqual({ actor: 'ops-bob', basis: 'authenticated' });
  expect((await bothWays(server, ['release', 'run-b', '--tenant', 'acme'], 'ops-bob')).store.status).toBe(1);
  expect((await bothWays(server, ['release', 'run-nobody', '--tenant', 'acme'], 'ops-bob')).store.status).toBe(1);

  expect((await bothWays(server, ['lift', 'subject:svc-billing', '--tenant', 'acme'], 'ops-carol')).store.body).toEqual({
    tenant: 'acme',
    scope: 'subject:svc-billing',
    wasStanding: true,
    removed: true,
  });
  expect((await bothWays(server, ['lift', 'subject:svc-billing', '--tenant', 'acme'], 'ops-carol')).store.status).toBe(1);
  const lifted = await bothWays(server, ['halts', '--lifted']);
  expect(lifted.store.body.lifted).toEqual([
    expect.objectContaining({ tenant: 'acme', scope: 'subject:svc-billing', by: { actor: 'ops-carol', basis: 'asserted' }, thrownBy: { actor: 'ops-alice', basis: 'asserted' } }),
  ]);
  expect(lifted.served.body.lifted[0]).toMatchObject({ by: { actor: 'ops-carol', basis: 'authenticated' }, thrownBy: { actor: 'ops-alice', basis: 'authenticated' } });

  const audit = await bothWays(server, ['audit', '--tenant', 'acme']);
  expect(audit.store.body.rows.map((row: any) => `${row.action}:${row.by.actor}`)).toEqual([
    'lift:ops-carol',
    'run.release:ops-bob',
    'run.settle:ops-bob',
    'halt:ops-alice',
    'quota.set:ops-alice',
    'quota.update:ops-alice',
    'quota.update:ops-alice',
    'quota.set:ops-alice',
    'quota.set:library',
  ]);
  expect(audit.served.body.rows.map((row: any) => row.by.basis)).toEqual([...Array(8).fill('authenticated'), 'asserted']);
  expect((await bothWays(server, ['audit', '--verify'])).store).toMatchObject({ status: 0, body: { ok: true, tenants: [{ tenant: 'acme', rows: 9, ok: true }, { tenant: 'globex', rows: 0, ok: true }] } });
  expect((await bothWays(server, ['attention', '--tenant', 'acme'])).store.status).toBe(0);
}

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  await seed();
});
afterEach(() => dir.remove());

/** A second store like `url`'s, seeded alike, served over HTTP for the duration of `body`. */
async function withServer(servedUrl: string, body: (server: Served) => Promise<void>): Promise<void> {
  const store = await openStore(servedUrl);
  await seedStore(store);
  await store.close();
  const server = await serve(servedUrl);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

describe('quotaplane operator commands on a store and through a server', () => {
  it('every verb works both ways and answers the same JSON, a script can read', async () => {
    await withServer(`sqlite:${join(dir.path, 'served.db')}`, everyVerb);
  });

  it('audit --verify through a server names a row tampered with in its database file, and exits 1', async () => {
    const servedFile = join(dir.path, 'served.db');
    await withServer(`sqlite:${servedFile}`, async (server) => {
      const flags = ['--url', server.url, '--key', server.keys['ops-alice']];
      expect((await runCli(['halt', 'tenant', '--tenant', 'acme', '--reason', 'incident 42', ...flags])).status).toBe(0);
      const raw = new Database(servedFile);
      raw.prepare("UPDATE quota_audit SET detail_json = '{\"reason\":\"routine\",\"replaced\":null}' WHERE tenant = 'acme' AND seq = 2").run();
      raw.close();
      const verified = await runCli(['audit', '--verify', '--json', ...flags]);
      expect(verified.status).toBe(1);
      expect(JSON.parse(verified.stdout).tenants[0]).toMatchObject({ tenant: 'acme', ok: false, firstMismatch: { seq: 2, problem: 'hash' } });
    });
  });

  it('every CLI remedy attention names runs as written, placeholders filled in, on a store and through a server', async () => {
    await withServer(`sqlite:${join(dir.path, 'served.db')}`, async (server) => {
      const ways = [
        { target: ['--store', url], writes: ['--actor', 'ops-alice'] },
        { target: ['--url', server.url, '--key', server.keys['ops-alice']], writes: [] },
      ];
      for (const way of ways) {
        const { target } = way;
        const flags = [...target, ...way.writes];
        await runCli(['halt', 'subject:svc-billing', '--tenant', 'acme', '--reason', 'leak', ...flags]);
        await runCli(['sweep', ...target]);
        const report = JSON.parse((await runCli(['attention', '--json', ...target])).stdout) as { conditions: { kind: string; remedy: { cli: string[] } }[] };
        expect(report.conditions.map((condition) => condition.kind)).toContain('run.stranded');
        for (const condition of report.conditions) {
          for (const [index, line] of condition.remedy.cli.entries()) {
            const argv = line
              .replace('<tokens>', '0')
              .replace('<minorUnits>', '0')
              .replace(' [--conclude]', ' --conclude')
              .split(' ')
              .slice(1);
            const answer = await runCli([...argv, ...(argv[0] === 'lift' || argv[0] === 'release' || argv[0] === 'settle' ? flags : target)]);
            // The first command of a remedy ends the condition; the others are its alternatives,
            // which may find the run closed already (status 1) but are never a usage error.
            expect([line, index === 0 ? answer.status : answer.status === 2 || answer.status === 70], answer.stderr).toEqual([line, index === 0 ? 0 : false]);
          }
        }
        expect((await runCli(['attention', ...target])).status).toBe(0);
      }
    });
  });

  it('through a server: usage mistakes exit 2 before anything is sent, an unreachable server exits 4', async () => {
    const key = ['--key', 'qp_anything'];
    const both = await runCli(['runs', '--store', url, '--url', 'http://127.0.0.1:9', ...key]);
    expect([both.status, both.stderr]).toEqual([2, expect.stringMatching(/--store .*--url.*not both/)]);
    const noKey = await runCli(['runs', '--url', 'http://127.0.0.1:9']);
    expect([noKey.status, noKey.stderr]).toEqual([2, expect.stringMatching(/--url needs --key/)]);
    const actor = await runCli(['release', 'run-a', '--tenant', 'acme', '--actor', 'ops-alice', '--url', 'http://127.0.0.1:9', ...key]);
    expect([actor.status, actor.stderr]).toEqual([2, expect.stringMatching(/--actor goes with --store/)]);
    expect((await runCli(['runs', '--store', url, ...key])).status).toBe(2);
    expect((await runCli(['runs', '--url', 'localhost:7070', ...key])).stderr).toMatch(/--url/);

    const closed = await serve(`sqlite:${join(dir.path, 'closed.db')}`);
    await closed.close();
    const unreachable = await runCli(['runs', '--url', closed.url, ...key]);
    expect([unreachable.status, unreachable.stderr]).toEqual([4, expect.stringMatching(/could not be reached/)]);
  });

  it('through a server: a key that is not accepted is a usage error naming the key, a tenant it does not cover exits 1', async () => {
    await withServer(`sqlite:${join(dir.path, 'served.db')}`, async (server) => {
      const wrong = await runCli(['runs', '--url', server.url, '--key', 'qp_not-a-key']);
      expect([wrong.status, wrong.stderr]).toEqual([2, expect.stringMatching(/key: the API key is not accepted/)]);
      const store = await openStore(server.storeUrl);
      const minted = mintApiKey({ role: 'operator', tenant: 'globex', name: 'ops-globex', atMs: T0 });
      await store.apiKeys?.().create(minted.key);
      await store.close();
      const narrow = ['--url', server.url, '--key', minted.secret];
      expect(JSON.parse((await runCli(['runs', '--json', ...narrow])).stdout).runs.map((run: any) => run.tenant)).toEqual(['globex']);
      expect((await runCli(['runs', '--tenant', 'acme', ...narrow])).status).toBe(1);
    });
  });

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
    // A crashed run is listed once, with both its reasons.
    expect(text.stdout).toMatch(/^run\.stranded \+ pass\.unsettled {2}acme {2}run-a pass 1 {2}for /m);
    expect(text.stdout.match(/ {2}run-a pass 1 {2}for /g)).toHaveLength(1);
    expect(text.stdout).toContain('    quotaplane release run-a --tenant acme');
  });

  it('C45 halt --reaches-running says how many running runs it reaches; without it, how many continue (text and --json)', async () => {
    const reaching = await runCli(['halt', 'tenant', '--tenant', 'acme', '--reason', 'incident 7', '--reaches-running', '--actor', 'ops-alice', '--store', url]);
    expect(reaching.status).toBe(0);
    expect(reaching.stdout).toContain('(reaches admission and running work)');
    expect(reaching.stdout).toContain('reaches 2 running runs: each answers Withheld at its next heartbeat, dispatch or resume, and pauses');
    const quiet = await json(['halt', 'tenant', '--tenant', 'globex', '--reason', 'new work only', '--actor', 'ops-alice']);
    expect(quiet.body).toMatchObject({ tenant: 'globex', scope: 'tenant', reach: 'admission', reachesRunning: false, running: 1 });
    const text = await runCli(['halt', 'agent:nobody', '--tenant', 'globex', '--reason', 'x', '--actor', 'ops-alice', '--store', url]);
    expect(text.stdout).toContain('0 running runs in scope continue: this halt stops new admissions only');
    const listed = await json(['halts', '--tenant', 'acme']);
    expect(listed.body.halts).toEqual([expect.objectContaining({ scope: 'tenant', reachesRunning: true })]);
  });

  it('C49 C51 halt plane stops admissions of every tenant, shows in halts and status, and lift plane ends it (text and --json)', async () => {
    const thrown = await json(['halt', 'plane', '--reason', 'provider outage', '--actor', 'ops-alice']);
    expect(thrown.body).toMatchObject({ tenant: null, scope: 'plane', reach: 'admission', reachesRunning: false, running: 3 });
    const text = await runCli(['halt', 'plane', '--reason', 'provider outage', '--reaches-running', '--actor', 'ops-alice', '--store', url]);
    expect(text.stdout).toContain('halted every tenant (plane) (reaches admission and running work): provider outage');
    expect(text.stdout).toContain('reaches 3 running runs');
    const listed = await json(['halts']);
    expect(listed.body.plane).toMatchObject({ scope: 'plane', covers: 'every tenant of the plane', reason: 'provider outage', reachesRunning: true });
    expect((await runCli(['halts', '--store', url])).stdout).toMatch(/^\* +plane +every tenant of the plane +admission and running work +provider outage/m);
    expect((await json(['status'])).body.plane.halt).toMatchObject({ reason: 'provider outage', reachesRunning: true });
    expect((await runCli(['status', '--store', url])).stdout).toContain('halt          plane: provider outage');
    const store = await openStore(url);
    try {
      const refused = await createPlane({ store, clock: new ManualClock(T0 + 1) }).admit({ tenant: 'globex', run: 'run-new' });
      expect(refused).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'plane' } });
    } finally {
      await store.close();
    }
    expect((await json(['audit', '--tenant', 'quotaplane:plane'])).body.rows.map((row: { action: string }) => row.action)).toEqual(['plane.halt', 'plane.halt']);
    expect((await runCli(['lift', 'plane', '--actor', 'ops-alice', '--store', url])).stdout).toBe('lifted plane of every tenant (plane)\n');
    expect((await json(['lift', 'plane', '--actor', 'ops-alice'])).status).toBe(1);
    expect((await json(['halts'])).body.plane).toBeNull();
    const withTenant = await runCli(['halt', 'plane', '--tenant', 'acme', '--reason', 'x', '--actor', 'a', '--store', url]);
    expect(withTenant.status).toBe(2);
    expect(withTenant.stderr).toContain("the scope 'plane' halts every tenant of the store; leave out --tenant");
    expect((await runCli(['halt', 'plane', '--new-tenant', '--reason', 'x', '--actor', 'a', '--store', url])).status).toBe(2);
    const noTenant = await runCli(['halt', 'tenant', '--reason', 'x', '--actor', 'a', '--store', url]);
    expect(noTenant.status).toBe(2);
    expect(noTenant.stderr).toContain("required option '--tenant <tenant>' not specified");
  });

  it('refuses usage mistakes with 2 before touching the store, and an unreachable store with 4', async () => {
    const scope = await runCli(['halt', 'everything', '--tenant', 'acme', '--reason', 'x', '--actor', 'a', '--store', url]);
    expect(scope.status).toBe(2);
    expect(scope.stderr).toContain("'tenant', 'agent:<metadata.name>', 'revision:<manifest digest>', 'subject:<principal on the chain>'");
    const noActor = await runCli(['release', 'run-a', '--tenant', 'acme', '--store', url]);
    expect(noActor.status).toBe(2);
    expect(noActor.stderr).toMatch(/--actor/);
    expect((await runCli(['runs', '--stranded', '--all', '--store', url])).status).toBe(2);
    expect((await runCli(['runs', '--limit', '1001', '--store', url])).stderr).toMatch(/--limit.*from 1 to 1000/);
    expect((await runCli(['quota', 'set', '--tenant', 'acme', '--actor', 'a', '--rate', 'nonsense', '--store', url])).status).toBe(2);
    expect((await runCli(['runs', '--store', 'mysql://x'])).status).toBe(2);
    const zeroWindow = await runCli(['quota', 'set', '--tenant', 'acme', '--actor', 'a', '--rate', 'search=10/0', '--store', url]);
    expect(zeroWindow.status).toBe(2);
    expect(zeroWindow.stderr).toMatch(/windowSeconds.*from 1 to 2678400/);
    const everyTenant = await runCli(['halt', 'tenant', '--tenant', '*', '--reason', 'x', '--actor', 'a', '--store', url]);
    expect(everyTenant.status).toBe(2);
    expect(everyTenant.stderr).toMatch(/--tenant.*'\*' means every tenant for API keys and is not a tenant name; name one tenant/);
    expect((await runCli(['status', '--tenant', '*', '--store', url])).status).toBe(2);
    expect((await json(['halts'])).body).toEqual({ plane: null, halts: [], truncated: false });
    for (const missingPath of [join(dir.path, 'no', 'such', 'dir', 'q.db'), join(dir.path, 'typo.db')]) {
      const missing = await runCli(['status', '--store', `sqlite:${missingPath}`]);
      expect(missing.status).toBe(3);
      expect(missing.stderr).toContain(`no quotaplane store at ${missingPath}; check --store`);
      expect(existsSync(missingPath)).toBe(false);
    }
    const directory = await runCli(['runs', '--store', `sqlite:${dir.path}`]);
    expect([directory.status, directory.stderr]).toEqual([3, expect.stringContaining('is a directory, not a SQLite file')]);
    expect(directory.stderr).toContain('name a file in it with --store');
    expect((await json(['attention'])).status).toBe(1);
  });

  it('lists every operator verb and the exit statuses in --help', async () => {
    const { status, stdout } = await runCli(['--help']);
    expect(status).toBe(0);
    for (const verb of ['halt', 'lift', 'halts', 'status', 'runs', 'reservations', 'release', 'settle', 'attention', 'quota', 'audit', 'sweep']) {
      expect(stdout).toMatch(new RegExp(`^  ${verb}\\b`, 'm'));
    }
    expect(stdout).toMatch(/1 +a negative finding/);
    expect(stdout).toMatch(/4 +the store or the server is unreachable/);
    // The docs carry the same table (every page with it is checked, and one must): one row per
    // status, each meaning starting as --help's does.
    const pages = pagesContaining('| status | meaning |');
    expect(pages.map(({ page }) => page)).not.toEqual([]);
    const statuses = [...stdout.matchAll(/^ {2}(\d+) +(.+)$/gm)].map((match) => [match[1], match[2]]);
    expect(statuses.map(([code]) => code)).toEqual(['0', '1', '2', '3', '4', '5', '70']);
    for (const { page, text } of pages) {
      const table = text.replaceAll('`', '');
      for (const [code, meaning] of statuses) {
        const firstWords = (meaning ?? '').split(/[:(,]/)[0]?.trim() ?? '';
        expect(table, `${page}: exit status ${code}`).toMatch(new RegExp(`^\\| ${code} \\| ${firstWords.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
      }
    }
    const halt = await runCli(['halt', '--help']);
    expect(halt.stdout).toContain('  subject:<principal on the chain>');
    expect(halt.stdout).toMatch(/Exit status:/);
  });
});

describeOn('postgres', 'quotaplane operator commands on a PostgreSQL store named by URL, and through a server over one', () => {
  it('every verb works both ways and answers the same JSON, a script can read', async () => {
    const database = await freshPostgresDatabase();
    const served = await freshPostgresDatabase();
    const fileUrl = url;
    url = database.url;
    try {
      const store = await openStore(url);
      await seedStore(store);
      await store.close();
      await withServer(served.url, everyVerb);
    } finally {
      url = fileUrl;
      await database.remove();
      await served.remove();
    }
  });
});

describe('chooseTarget', () => {
  it('flags win over the environment; both variables and no flag, or neither, are usage errors', () => {
    const env = { QUOTAPLANE_STORE: 'sqlite:env.db', QUOTAPLANE_URL: 'http://env:7070', QUOTAPLANE_KEY: 'qp_env' };
    expect(chooseTarget({ store: 'sqlite:flag.db' }, env)).toEqual({ kind: 'store', url: 'sqlite:flag.db' });
    expect(chooseTarget({ url: 'http://flag:7070' }, env)).toEqual({ kind: 'server', url: 'http://flag:7070', key: 'qp_env' });
    expect(chooseTarget({ url: 'http://flag:7070', key: 'qp_flag' }, env)).toEqual({ kind: 'server', url: 'http://flag:7070', key: 'qp_flag' });
    expect(chooseTarget({}, { QUOTAPLANE_URL: 'http://env:7070', QUOTAPLANE_KEY: 'qp_env' })).toEqual({ kind: 'server', url: 'http://env:7070', key: 'qp_env' });
    expect(chooseTarget({}, { QUOTAPLANE_STORE: 'sqlite:env.db' })).toEqual({ kind: 'store', url: 'sqlite:env.db' });
    expect(() => chooseTarget({}, env)).toThrow(/both \$QUOTAPLANE_STORE and \$QUOTAPLANE_URL/);
    expect(() => chooseTarget({}, {})).toThrow(UsageError);
    expect(() => chooseTarget({ store: 'sqlite:x.db', url: 'http://x' }, {})).toThrow(/not both/);
  });
});
