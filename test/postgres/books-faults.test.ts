import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { TenantQuota } from '../../src/core/quota.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { TenantStore } from '../../src/store/store.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

// The books under real faults (docs/design/decisions.md "Fail closed" and "Group commit"): a mixed
// workload of admissions, waiting admissions, resumes, both settles, dispatches, heartbeats,
// sweeps, releases, prunes and quota changes runs through two store instances (two pools, one with
// tight timeouts) on the same tenants, while the server's backends are terminated mid-batch, rows
// and tenant locks are held long enough to trip lock_timeout and statement_timeout inside batches,
// decisions raise domain violations (amounts past 2^53 − 1) beside others in the same batch, and
// the server is stopped and started. After every round the derived figures must agree with the rows
// they summarise, every acknowledged decision must be on the books, and no run may be there in part.
// This file stops and starts a server, so it has one of its own.

const SEED = Number(process.env.QUOTAPLANE_FAULT_SEED ?? 20261201);
const ROUNDS = Number(process.env.QUOTAPLANE_FAULT_ROUNDS ?? 12);
const OPS_PER_ROUND = 60;
const TENANTS = ['acme', 'globex', 'initech'];
const AGENTS = ['bot', 'helper', undefined];
const GRANTS = ['tool://pay/refund', 'tool://mail/send'];
const MAX = Number.MAX_SAFE_INTEGER;
const BY = { actor: 'fault-test', basis: 'asserted' } as const;
// Near a month's end, so rounds cross a day and a month boundary.
const T0 = Date.UTC(2026, 11, 31, 20);

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let server: EmbeddedServer;
let stores: PostgresQuotaStore[] = [];
let admin: pg.Client;

beforeAll(async () => {
  server = await startEmbeddedServer('books-faults');
  stores = [
    await openPostgresStore(server.url, { poolSize: 4 }),
    // The second instance trips its timeouts on the locks the faults hold.
    await openPostgresStore(server.url, { poolSize: 4, busyTimeoutMs: 150, statementTimeoutMs: 400 }),
  ];
  admin = await connectAdmin();
  // Test-only: writing a pass of a run whose id ends in '-slow' sleeps past the second instance's
  // statement_timeout, so a batch carrying that admission is cancelled whole.
  await admin.query(`
    CREATE FUNCTION quotaplane.fault_slow_pass() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NEW.run_id LIKE '%-slow' THEN PERFORM pg_sleep(0.6); END IF;
      RETURN NEW;
    END $fn$;
    CREATE TRIGGER fault_slow_pass BEFORE INSERT ON quotaplane.quota_passes FOR EACH ROW EXECUTE FUNCTION quotaplane.fault_slow_pass();
  `);
});

async function connectAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: server.url, application_name: 'fault-admin' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

afterAll(async () => {
  await admin?.end().catch(() => undefined);
  for (const store of stores) await store.close().catch(() => undefined);
  await server?.dispose();
});

interface Run {
  tenant: string;
  run: string;
  epoch: number;
}

type Ack =
  | { kind: 'admit' | 'resume'; tenant: string; run: string; epoch: number }
  | { kind: 'settlePass'; tenant: string; run: string; epoch: number; tokens: number }
  | { kind: 'settle'; tenant: string; run: string; epoch: number; tokens: number }
  | { kind: 'dispatch'; tenant: string; run: string; grant: string; dispatch: string; atMs: number }
  | { kind: 'heartbeat'; tenant: string; run: string; epoch: number; leaseExpiresAtMs: number }
  | { kind: 'release'; tenant: string; run: string };

class Workload {
  readonly random: () => number;
  readonly runs: Run[] = [];
  readonly acks: Ack[] = [];
  readonly errors = new Map<string, number>();
  readonly unexpected: string[] = [];
  atMs = T0;
  next = 0;
  readonly trace: string[] = [];
  rateCut = 0;

  constructor(seed: number) {
    this.random = rng(seed);
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  tenant(): TenantStore {
    return this.pick(stores).tenant(this.pick(TENANTS));
  }

  spend(): { tokens: number; minorUnits: number } {
    const r = this.random();
    if (r < 0.04) return { tokens: MAX, minorUnits: 0 };
    return { tokens: Math.floor(this.random() * 200), minorUnits: Math.floor(this.random() * 20) };
  }

  budget(): { maxTokens: number; maxCallTokens: number; maxMinorUnits: number; maxCallMinorUnits: number } {
    const big = this.random() < 0.05;
    return big
      ? { maxTokens: MAX, maxCallTokens: MAX, maxMinorUnits: 10, maxCallMinorUnits: 10 }
      : { maxTokens: 500, maxCallTokens: 500, maxMinorUnits: 50, maxCallMinorUnits: 50 };
  }

  quota(): TenantQuota {
    const period = this.random() < 0.5 ? 'daily' : 'monthly';
    const spendCeiling = this.random() < 0.5;
    return {
      period,
      maxConcurrentRuns: 2 + Math.floor(this.random() * 6),
      ...(spendCeiling ? { maxTokensPerPeriod: MAX, maxMinorUnitsPerPeriod: 1_000_000 } : {}),
      agents: { bot: { maxConcurrentRuns: 3 } },
      rateCeilings: { [GRANTS[0] as string]: [{ count: 20, windowSeconds: 60 }] },
    };
  }

  known(tenant: string): Run | undefined {
    // Mostly the tenant's latest runs, which are still open: older ones are mostly closed.
    const mine = this.runs.filter((r) => r.tenant === tenant);
    return mine.length === 0 ? undefined : this.pick(this.random() < 0.8 ? mine.slice(-6) : mine);
  }

  note(op: string, error: unknown): void {
    const code = error instanceof QuotaError ? error.code : `not a QuotaError: ${String(error)}`;
    const key = `${op}:${code}${error instanceof QuotaError && error.code === 'STORE_UNAVAILABLE' ? '' : ''}`;
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
    const expected = ['STORE_UNAVAILABLE', 'CONFLICT', 'NOT_FOUND', 'INVALID_ARGUMENT'];
    if (!(error instanceof QuotaError) || !expected.includes(error.code)) {
      this.unexpected.push(`${op}: ${error instanceof Error ? `${error.name} ${error.message}` : String(error)}`);
    }
  }

  /** One random operation; answers when it is done, whatever it answered. */
  async op(): Promise<void> {
    this.atMs += Math.floor(this.random() * 120_000);
    const atMs = this.atMs;
    const store = this.pick(stores);
    const tenantName = this.pick(TENANTS);
    const t = store.tenant(tenantName);
    const picked = this.known(tenantName);
    // A snapshot: another operation's resume may move the run's epoch while this one is awaited.
    const known = picked === undefined ? undefined : { ...picked };
    const roll = this.random();
    let label = 'op';
    try {
      if (roll < 0.2) {
        label = 'admit';
        const run = `run-${(this.next += 1)}${this.random() < 0.08 ? '-slow' : ''}`;
        const agentName = this.pick(AGENTS);
        const request = {
          run,
          ...(agentName === undefined ? {} : { agent: { name: agentName, digest: 'ab'.repeat(32) } }),
          budget: this.budget(),
          width: 1,
          atMs,
          leaseMs: 5 * 60_000,
        };
        if (this.random() < 0.3) {
          const waited = await t.admitOrWait(request, { untilMs: atMs + 600_000, leaseMs: 600_000 });
          if (waited.ok) {
            this.runs.push({ tenant: tenantName, run, epoch: waited.epoch });
            this.acks.push({ kind: 'admit', tenant: tenantName, run, epoch: waited.epoch });
          } else if ('waiting' in waited) {
            // Come back for it later: a collect, or a cancel.
            setTimeout(() => void this.collect(tenantName, request), 50);
          }
        } else {
          const admitted = await t.admit(request);
          if (admitted.ok) {
            this.runs.push({ tenant: tenantName, run, epoch: admitted.epoch });
            this.acks.push({ kind: 'admit', tenant: tenantName, run, epoch: admitted.epoch });
          }
        }
      } else if (roll < 0.3 && known !== undefined) {
        label = 'resume';
        const resumed = await t.resume({ run: known.run, atMs, leaseMs: 5 * 60_000 });
        this.trace.push(`resume ${tenantName}/${known.run}/${resumed.ok ? resumed.epoch : '-'} at ${new Date().toISOString()}`);
        if (resumed.ok) {
          if (picked !== undefined) picked.epoch = Math.max(picked.epoch, resumed.epoch);
          this.acks.push({ kind: 'resume', tenant: tenantName, run: known.run, epoch: resumed.epoch });
        }
      } else if (roll < 0.45 && known !== undefined) {
        label = 'settlePass';
        const spend = this.spend();
        const settled = await t.settlePass({
          run: known.run,
          epoch: known.epoch,
          spend,
          concludes: this.random() < 0.4,
          atMs,
          ...(this.random() < 0.2 ? { by: BY } : {}),
        });
        this.trace.push(`settlePass ${tenantName}/${known.run}/${known.epoch} ${spend.tokens} -> ${settled.outcome} at ${new Date().toISOString()}`);
        if (settled.outcome === 'settled') {
          this.acks.push({ kind: 'settlePass', tenant: tenantName, run: known.run, epoch: known.epoch, tokens: spend.tokens });
        }
      } else if (roll < 0.52 && known !== undefined) {
        label = 'settle';
        const spend = this.spend();
        const period = new Date(atMs).toISOString().slice(0, this.random() < 0.5 ? 7 : 10);
        const outcome = await t.settle({
          run: known.run,
          epoch: known.epoch,
          period,
          spend,
          releaseSlot: this.random() < 0.5,
          concludes: this.random() < 0.3,
        });
        this.trace.push(`settle ${store === stores[0] ? 'A' : 'B'} ${tenantName}/${known.run}/${known.epoch} ${period} ${spend.tokens} -> ${outcome} at ${new Date().toISOString()}`);
        if (outcome === 'settled') this.acks.push({ kind: 'settle', tenant: tenantName, run: known.run, epoch: known.epoch, tokens: spend.tokens });
      } else if (roll < 0.64 && known !== undefined) {
        label = 'dispatch';
        const grant = this.pick(GRANTS);
        const dispatch = `d-${(this.next += 1)}`;
        const withEpoch = this.random() < 0.5;
        const answered = await t.dispatch({
          run: known.run,
          grant,
          dispatch,
          ceilings: [{ count: 15, windowSeconds: 300 }],
          exempt: this.random() < 0.1,
          atMs,
          ...(withEpoch ? { epoch: known.epoch, leaseMs: 5 * 60_000 } : {}),
        });
        if (answered.ok) this.acks.push({ kind: 'dispatch', tenant: tenantName, run: known.run, grant, dispatch, atMs });
      } else if (roll < 0.7 && known !== undefined) {
        label = 'heartbeat';
        const renewed = await t.heartbeat({ run: known.run, epoch: known.epoch, atMs, leaseMs: 5 * 60_000 });
        if (renewed.ok) {
          this.acks.push({ kind: 'heartbeat', tenant: tenantName, run: known.run, epoch: known.epoch, leaseExpiresAtMs: renewed.leaseExpiresAtMs });
        }
      } else if (roll < 0.75) {
        label = 'sweep';
        for (const run of await t.lapsedRuns({ atMs, limit: 5 })) await t.sweepRun({ run, atMs });
      } else if (roll < 0.79 && known !== undefined) {
        label = 'releaseRun';
        const released = await t.releaseRun({ run: known.run, atMs, by: BY });
        if (released.outcome === 'released') this.acks.push({ kind: 'release', tenant: tenantName, run: known.run });
      } else if (roll < 0.84) {
        label = 'raw';
        // The raw contract primitives: a slot and a hold of a run the registry does not know.
        const run = `raw-${(this.next += 1)}`;
        const period = new Date(atMs).toISOString().slice(0, 7);
        const reserved = await t.reserve({
          run,
          quota: { period: 'monthly', maxConcurrentRuns: 50 },
          hold: { period, amount: this.spend() },
          atMs,
        });
        if (reserved.ok && this.random() < 0.3) await t.carry(run, new Date(atMs + 86_400_000 * 20).toISOString().slice(0, 7));
        if (reserved.ok && this.random() < 0.5) await t.release(run);
      } else if (roll < 0.88) {
        label = 'pruneRuns';
        const page = await t.prunableRuns({ status: this.random() < 0.5 ? 'concluded' : 'released', closedAtOrBeforeMs: atMs, scanLimit: 50 });
        if (page.runs.length > 0) this.trace.push(`prune ${tenantName} ${page.runs.map((r) => `${r.run}/`).join(' ')}`);
        if (page.runs.length > 0) await t.pruneRuns({ runs: page.runs.map((r) => r.run), closedAtOrBeforeMs: atMs, atMs, by: BY });
      } else if (roll < 0.9) {
        label = 'pruneRate';
        const cut = atMs - 10 * 60_000;
        this.rateCut = Math.max(this.rateCut, cut);
        await t.pruneRate({ atOrBeforeMs: cut, limit: 20, atMs, by: BY });
      } else if (roll < 0.92) {
        label = 'setPlaneCeiling';
        // The plane-wide ceiling switches the waiters' grant loop to every tenant in turn.
        const ceiling = this.random() < 0.4 ? {} : { maxConcurrentRuns: 6 + Math.floor(this.random() * 8), agents: { bot: { maxConcurrentRuns: 4 } } };
        await store.setPlaneCeiling!(ceiling, { atMs, by: BY, action: 'plane.set', subject: 'plane', detail: {} }, 'quotaplane:plane');
      } else if (roll < 0.95) {
        label = 'setQuota';
        await t.setQuota(this.quota(), { atMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
      } else {
        label = 'sweepWaiters';
        await t.sweepWaiters({ atMs });
      }
    } catch (error) {
      this.note(label, error);
      this.trace.push(`${label} ${tenantName}/${known?.run}/${known?.epoch} threw ${error instanceof QuotaError ? error.code : String(error)} at ${new Date().toISOString()}`);
    }
  }

  async collect(tenant: string, request: Parameters<TenantStore['admit']>[0]): Promise<void> {
    const t = this.pick(stores).tenant(tenant);
    try {
      if (this.random() < 0.3) {
        await t.cancelWaiter({ run: request.run, atMs: this.atMs });
        return;
      }
      const collected = await t.collectWaiter({ ...request, atMs: this.atMs }, { untilMs: this.atMs, leaseMs: 600_000 });
      if (collected.ok) {
        this.runs.push({ tenant, run: request.run, epoch: collected.epoch });
        this.acks.push({ kind: 'admit', tenant, run: request.run, epoch: collected.epoch });
      }
    } catch (error) {
      this.note('collect', error);
    }
  }
}

/** Runs `body` on a connection of its own; a fault that cannot reach the server is skipped. */
async function onConnection<T>(name: string, body: (client: pg.Client) => Promise<T>): Promise<T | undefined> {
  const client = new pg.Client({ connectionString: server.url, application_name: name });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await body(client);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Faults, until `stop` is set: quotaplane's active backends terminated (mid-batch), and a tenant's
 * admission lock, its run rows, its period figures or its running count held for 100 … 600 ms (past
 * the second instance's lock_timeout). With `restart`, the server is also stopped and started once.
 */
async function faults(random: () => number, stop: { done: boolean }, options: { restart: boolean }): Promise<string[]> {
  const done: string[] = [];
  const restarting = options.restart
    ? (async () => {
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(random() * 500)));
        await admin.end().catch(() => undefined);
        await server.stop();
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(random() * 300)));
        await server.start();
        admin = await connectAdmin();
        done.push('restarted');
      })()
    : Promise.resolve();
  while (!stop.done) {
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(random() * 60)));
    const roll = random();
    if (roll < 0.4) {
      const n = await onConnection('fault-killer', async (client) => {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE application_name = 'quotaplane' AND state = 'active' AND pid <> pg_backend_pid()`,
        );
        return rows[0]?.n ?? 0;
      });
      done.push(n === undefined ? 'terminate failed' : n > 0 ? 'terminated' : 'terminated none');
    } else {
      const tenant = TENANTS[Math.floor(random() * TENANTS.length)] as string;
      const what = random();
      const holdMs = 100 + Math.floor(random() * 500);
      const held = await onConnection('fault-locker', async (client) => {
        await client.query('BEGIN');
        if (what < 0.3) await client.query('SELECT quotaplane.quota_admission_lock($1)', [tenant]);
        else if (what < 0.6) await client.query('SELECT 1 FROM quotaplane.quota_runs WHERE tenant = $1 FOR UPDATE SKIP LOCKED', [tenant]);
        else if (what < 0.8) await client.query('SELECT 1 FROM quotaplane.quota_spent WHERE tenant = $1 FOR UPDATE SKIP LOCKED', [tenant]);
        else await client.query('SELECT 1 FROM quotaplane.quota_figures WHERE tenant = $1 FOR UPDATE SKIP LOCKED', [tenant]);
        await new Promise((resolve) => setTimeout(resolve, holdMs));
        await client.query('ROLLBACK');
        return true;
      });
      done.push(held === true ? 'locked' : 'lock failed');
    }
  }
  await restarting;
  return done;
}

/** Every acknowledged decision on the books; every registered run whole. */
async function unbooked(workload: Workload): Promise<string[]> {
  const problems: string[] = [];
  const pruned = new Set(
    (await admin.query<{ tenant: string; run_id: string }>('SELECT tenant, run_id FROM quotaplane.quota_pruned')).rows.map(
      (r) => `${r.tenant}/${r.run_id}`,
    ),
  );
  for (const ack of workload.acks) {
    if (pruned.has(`${ack.tenant}/${ack.run}`)) continue;
    const key = [ack.tenant, ack.run];
    switch (ack.kind) {
      case 'admit':
      case 'resume': {
        const { rowCount } = await admin.query('SELECT 1 FROM quotaplane.quota_passes WHERE tenant = $1 AND run_id = $2 AND epoch = $3', [
          ...key,
          ack.epoch,
        ]);
        if (rowCount !== 1) problems.push(`${ack.kind} ${ack.tenant}/${ack.run}/${ack.epoch} acknowledged but its pass is missing`);
        break;
      }
      case 'settlePass':
      case 'settle': {
        const { rows } = await admin.query<{ tokens: number }>(
          `SELECT coalesce(p.receipt_tokens, x.tokens)::float8 AS tokens FROM (SELECT $1::text AS tenant, $2::text AS run_id, $3::bigint AS epoch) k
             LEFT JOIN quotaplane.quota_passes p ON p.tenant = k.tenant AND p.run_id = k.run_id AND p.epoch = k.epoch
             LEFT JOIN quotaplane.quota_settled x ON x.tenant = k.tenant AND x.run_id = k.run_id AND x.epoch = k.epoch`,
          [...key, ack.epoch],
        );
        if (rows[0]?.tokens !== ack.tokens) {
          const passes = await admin.query('SELECT * FROM quotaplane.quota_passes WHERE tenant = $1 AND run_id = $2 ORDER BY epoch', key);
          const receipts = await admin.query('SELECT * FROM quotaplane.quota_settled WHERE tenant = $1 AND run_id = $2 ORDER BY epoch', key);
          const run = await admin.query('SELECT * FROM quotaplane.quota_runs WHERE tenant = $1 AND run_id = $2', key);
          problems.push(
            `${ack.kind} ${ack.tenant}/${ack.run}/${ack.epoch} acknowledged (${ack.tokens}) but its receipt reads ${rows[0]?.tokens}; ` +
              JSON.stringify({ ack, run: run.rows, passes: passes.rows, receipts: receipts.rows, trace: workload.trace.filter((t) => t.includes(`${ack.run}/`) || t.includes('restart')) }, null, 1),
          );
        }
        break;
      }
      case 'dispatch': {
        if (ack.atMs <= workload.rateCut) break;
        const { rowCount } = await admin.query(
          'SELECT 1 FROM quotaplane.quota_rate WHERE tenant = $1 AND grant_ref = $2 AND run_id = $3 AND dispatch = $4',
          [ack.tenant, ack.grant, ack.run, ack.dispatch],
        );
        if (rowCount !== 1) problems.push(`dispatch ${ack.tenant}/${ack.run}/${ack.dispatch} acknowledged but not recorded`);
        break;
      }
      case 'heartbeat': {
        const { rows } = await admin.query<{ lease: number }>(
          'SELECT lease_expires_at_ms AS lease FROM quotaplane.quota_passes WHERE tenant = $1 AND run_id = $2 AND epoch = $3',
          [...key, ack.epoch],
        );
        if (rows[0] === undefined || Number(rows[0].lease) < ack.leaseExpiresAtMs) {
          problems.push(`heartbeat ${ack.tenant}/${ack.run}/${ack.epoch} acknowledged to ${ack.leaseExpiresAtMs} but reads ${rows[0]?.lease}`);
        }
        break;
      }
      case 'release': {
        const { rows } = await admin.query<{ status: string; slot: boolean; hold: boolean }>(
          `SELECT r.status,
                  EXISTS (SELECT 1 FROM quotaplane.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id) AS slot,
                  EXISTS (SELECT 1 FROM quotaplane.quota_reserved h WHERE h.tenant = r.tenant AND h.run_id = r.run_id) AS hold
             FROM quotaplane.quota_runs r WHERE r.tenant = $1 AND r.run_id = $2`,
          key,
        );
        const row = rows[0];
        if (row === undefined || row.status !== 'released' || row.slot || row.hold) {
          problems.push(`release ${ack.tenant}/${ack.run} acknowledged but reads ${JSON.stringify(row)}`);
        }
        break;
      }
    }
  }
  // No run in part: every registered run has its passes 1 … last_epoch, every pass its run.
  const partial = await admin.query<{ tenant: string; run_id: string; last_epoch: number; passes: number }>(`
    SELECT r.tenant, r.run_id, r.last_epoch, (SELECT count(*) FROM quotaplane.quota_passes p
             WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch BETWEEN 1 AND r.last_epoch)::int AS passes
      FROM quotaplane.quota_runs r
     WHERE (SELECT count(*) FROM quotaplane.quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id) <> r.last_epoch
        OR (SELECT count(*) FROM quotaplane.quota_passes p
             WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch BETWEEN 1 AND r.last_epoch) <> r.last_epoch`);
  for (const row of partial.rows) problems.push(`run in part: ${JSON.stringify(row)}`);
  const grants = await admin.query(`SELECT w.tenant, w.run_id FROM quotaplane.quota_waiters w WHERE w.state = 'granted'
     AND NOT EXISTS (SELECT 1 FROM quotaplane.quota_passes p WHERE p.tenant = w.tenant AND p.run_id = w.run_id AND p.epoch = 1)`);
  for (const row of grants.rows) problems.push(`grant without its pass: ${JSON.stringify(row)}`);
  const orphans = await admin.query(`SELECT p.tenant, p.run_id, p.epoch FROM quotaplane.quota_passes p
     WHERE NOT EXISTS (SELECT 1 FROM quotaplane.quota_runs r WHERE r.tenant = p.tenant AND r.run_id = p.run_id)`);
  for (const row of orphans.rows) problems.push(`pass without its run: ${JSON.stringify(row)}`);
  return problems;
}

async function settle(): Promise<void> {
  // Let the waiters' collects and everything in flight finish.
  await new Promise((resolve) => setTimeout(resolve, 150));
}

describe('PostgreSQL books under faults', () => {
  it(`the books agree and every acknowledged decision is on them after ${ROUNDS} rounds of mixed traffic under faults (seed ${SEED})`, async () => {
    const workload = new Workload(SEED);
    for (const name of TENANTS) {
      await stores[0]!.tenant(name).setQuota(workload.quota(), { atMs: T0, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    }
    const faultLog: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const stop = { done: false };
      const faulting = faults(workload.random, stop, { restart: round % 5 === 4 });
      const lanes = Array.from({ length: 12 }, async () => {
        for (let i = 0; i < OPS_PER_ROUND / 12; i += 1) await workload.op();
      });
      await Promise.all(lanes);
      stop.done = true;
      faultLog.push(...(await faulting));
      await settle();
      const differences = await booksDisagreements(admin, 'quotaplane');
      expect(differences, `round ${round}: ${describeDifferences(differences)}`).toEqual([]);
      const problems = await unbooked(workload);
      expect(problems, `round ${round}`).toEqual([]);
    }
    const tally = (items: string[]) => items.reduce<Record<string, number>>((t, k) => ({ ...t, [k]: (t[k] ?? 0) + 1 }), {});
    console.log('faults', tally(faultLog));
    console.log('errors', Object.fromEntries(workload.errors));
    console.log('acks', tally(workload.acks.map((a) => a.kind)));
    expect(workload.unexpected).toEqual([]);
  }, 600_000);
});
