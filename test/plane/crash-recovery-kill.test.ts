import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { compiledEntry } from '../compiled-entry.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, T0 } from './plane-fixtures.js';
import type { RunnerJob, RunnerReport } from './runner-worker.js';
import type { LoadAnswer, LoadJob } from './lease-load-worker.js';
import { until } from '../until.js';

const WORKER = fileURLToPath(new URL('./runner-worker.ts', import.meta.url));
const LEASE_MS = 30_000;
const LAPSE_MS = T0 + LEASE_MS;
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });

/**
 * Forks a runner that admits `runs` and waits, takes its report, then kills it with SIGKILL (no
 * handler can run, no settle can be sent) and resolves once the OS reports it dead.
 */
async function admitAndKill(job: RunnerJob): Promise<RunnerReport> {
  const child = fork(await compiledEntry(WORKER), [JSON.stringify(job)], { execArgv: [], stdio: 'inherit' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  try {
    const report = await new Promise<RunnerReport>((resolve, reject) => {
      child.once('message', (message) => resolve(message as RunnerReport));
      child.once('exit', (code) => reject(new Error(`the runner exited with ${code} before it reported`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    return report;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe.each(BACKENDS)('a runner killed with SIGKILL after admission, on $name (docs/design/decisions.md "A dead process strands its run")', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;

  beforeEach(async () => {
    shared = await fresh('kill');
    store = await openStore(shared.url, shared.options);
    plane = createPlane({ store });
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 2, maxTokensPerPeriod: 1_000_000 }, { by: ALICE, newTenant: true });
  });
  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  it('keeps its slots until the lease lapses; one sweep frees them, the holds stay until settled or released, and a late settle counts once', async () => {
    const report = await admitAndKill({ url: shared.url, options: shared.options, tenant: 'acme', runs: ['run-settled', 'run-released'], atMs: T0, leaseMs: LEASE_MS, budget: BUDGET });
    expect(report.grants).toEqual([
      { run: 'run-settled', ok: true, epoch: 1, leaseExpiresAtMs: LAPSE_MS },
      { run: 'run-released', ok: true, epoch: 1, leaseExpiresAtMs: LAPSE_MS },
    ]);

    // Dead, but its leases stand: the slots stay held and the tenant is full.
    const early = await plane.sweep({ atMs: LAPSE_MS - 1 });
    expect(early.swept).toEqual([]);
    const refused = await plane.admit({ tenant: 'acme', run: 'run-next', budget: BUDGET, atMs: LAPSE_MS - 1 });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', running: 2, limit: 2 } });

    // The leases lapse: one sweep frees both slots and strands both runs.
    const swept = await plane.sweep({ atMs: LAPSE_MS });
    expect(swept.swept).toEqual([
      { tenant: 'acme', run: 'run-released', releasedSlot: true, stranded: true },
      { tenant: 'acme', run: 'run-settled', releasedSlot: true, stranded: true },
    ]);
    expect((await plane.sweep({ atMs: LAPSE_MS + 1 })).swept).toEqual([]);
    const next = await plane.admit({ tenant: 'acme', run: 'run-next', budget: BUDGET, atMs: LAPSE_MS + 1 });
    expect(next).toMatchObject({ ok: true, run: 'run-next', epoch: 1 });

    // Their worst case stays reserved: what the dead process spent is unknown.
    const holds = await plane.reservations({ tenant: 'acme' });
    expect(holds.holds.map((hold) => [hold.run, hold.remaining.tokens])).toEqual([
      ['run-next', 1100],
      ['run-released', 1100],
      ['run-settled', 1100],
    ]);
    const usage = await plane.usage({ tenant: 'acme', period: '2026-01' });
    expect(usage).toMatchObject({ running: 1, reserved: tokens(3300), spent: tokens(0) });
    const attention = await plane.attention({ tenant: 'acme', atMs: LAPSE_MS + 2 });
    expect(attention.conditions.map((condition) => [condition.kind, condition.run])).toEqual([
      ['run.stranded', 'run-released'],
      ['run.stranded', 'run-settled'],
      ['pass.unsettled', 'run-released'],
      ['pass.unsettled', 'run-settled'],
    ]);

    // The killed pass's real spend arrives late (reported by its restarted runner): accepted once.
    const late = { tenant: 'acme', run: 'run-settled', epoch: 1, spend: tokens(420), concludes: true, atMs: LAPSE_MS + 10 };
    expect(await plane.settle(late)).toMatchObject({ ok: true, outcome: 'settled', receipt: { releaseSlot: true, concludes: true } });
    expect(await plane.settle({ ...late, atMs: LAPSE_MS + 11 })).toMatchObject({ ok: true, outcome: 'already-settled' });
    expect(await plane.settle({ ...late, by: ALICE })).toMatchObject({ outcome: 'already-settled' });
    await expect(plane.settle({ ...late, spend: tokens(421) })).rejects.toMatchObject({ code: 'CONFLICT' });

    // The other is given up by an operator: its hold goes back, and the act is audited.
    const released = await plane.release({ tenant: 'acme', run: 'run-released', by: ALICE, atMs: LAPSE_MS + 20 });
    expect(released).toMatchObject({ outcome: 'released', previousStatus: 'stranded', slotReleased: false });
    expect(released.holdReleased?.remaining).toEqual(tokens(1100));

    expect(await plane.usage({ tenant: 'acme', period: '2026-01' })).toMatchObject({ running: 1, reserved: tokens(1100), spent: tokens(420) });
    expect((await plane.reservations({ tenant: 'acme' })).holds.map((hold) => hold.run)).toEqual(['run-next']);
    const log = await plane.auditLog({ tenant: 'acme' });
    expect(log.rows.map((row) => [row.action, row.subject])).toEqual([
      ['run.release', 'run-released'],
      ['quota.set', 'quota'],
    ]);
    const after = await plane.attention({ tenant: 'acme', atMs: LAPSE_MS + 30 });
    expect(after.conditions).toEqual([]);
  });
});

const LOAD_WORKER = fileURLToPath(new URL('./lease-load-worker.ts', import.meta.url));
const LOAD_LEASE_MS = 1_000;
// Longer than the lease, and far shorter than the runner's bound on a decision's wait, so that a
// loaded machine (a slow fork, a late timer) cannot turn every waiting decision into a
// waited-too-long fault and leave no ok answer that waited past its lease.
const LOCK_HELD_MS = 2_000;
const LOAD_MAX_DECISION_WAIT_MS = 30_000;
const KILLS = 3;

/** Another writer holding the store's lock: the SQLite write lock, or a PostgreSQL tenant's admission lock. */
interface Locker {
  hold(): Promise<void>;
  free(): Promise<void>;
  close(): Promise<void>;
}

async function lockerFor(shared: SharedStore, tenant: string): Promise<Locker> {
  if (shared.url.startsWith('sqlite:')) {
    const db = new Database(shared.url.slice('sqlite:'.length), { timeout: 10_000 });
    return {
      hold: async () => void db.exec('BEGIN IMMEDIATE'),
      free: async () => void db.exec('COMMIT'),
      close: async () => {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: shared.url });
  await client.connect();
  const schema = client.escapeIdentifier(String(shared.options.schema));
  return {
    hold: async () => {
      await client.query('BEGIN');
      await client.query(`SELECT ${schema}.quota_admission_lock($1)`, [tenant]);
    },
    free: async () => void (await client.query('COMMIT')),
    close: () => client.end(),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)('runners killed with SIGKILL while batches of decisions are in flight, on $name (docs/design/decisions.md "Every acknowledgement is true")', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let locker: Locker;

  beforeEach(async () => {
    shared = await fresh('kill_load');
    store = await openStore(shared.url, shared.options);
    locker = await lockerFor(shared, 'load-acme');
  });
  afterEach(async () => {
    await locker.close();
    await store.close();
    await shared.remove();
  });

  it('no ok answer carries a lapsed lease, though decisions waited longer than the lease behind another writer; every acknowledged admission is on the books', async () => {
    const answers: LoadAnswer[] = [];
    const inFlightAtKill: number[] = [];
    for (let kill = 0; kill < KILLS; kill += 1) {
      const job: LoadJob = { url: shared.url, options: shared.options, tenant: 'load-acme', lanes: 32, leaseMs: LOAD_LEASE_MS, maxDecisionWaitMs: LOAD_MAX_DECISION_WAIT_MS };
      const child = fork(await compiledEntry(LOAD_WORKER), [JSON.stringify(job)], { execArgv: [], stdio: 'inherit' });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      const mine: LoadAnswer[] = [];
      let asked = 0;
      let lastAsked: LoadAnswer['verb'] | undefined;
      child.on('message', (message) => {
        if ('asked' in (message as object)) {
          asked += 1;
          lastAsked = (message as { verb: LoadAnswer['verb'] }).verb;
        }
        else mine.push(message as LoadAnswer);
      });
      try {
        await until(() => mine.filter((answer) => answer.ok).length >= 100, 'the runner is under way', { withinMs: 60_000 });
        // Another writer holds the lock longer than the lease while every lane's decision waits
        // behind it; the runner is killed while those decisions go through in batches. The lanes
        // move in step (admit, heartbeat, settle), and a settle carries no lease: the lock is
        // taken just after admissions were asked, so it catches their batch or the heartbeats',
        // and taken again (up to four times) until an ok answer with a lease has come back to a
        // decision that waited past that lease.
        const start = mine.length;
        const waitedPast = () =>
          mine.slice(start).some((answer) => answer.ok && answer.leaseExpiresAtMs !== undefined && answer.answeredAtMs - answer.askedAtMs > LOAD_LEASE_MS);
        for (let hold = 0; hold < 4 && !waitedPast(); hold += 1) {
          await until(() => lastAsked === 'admit', 'the lanes are admitting', { everyMs: 1, withinMs: 30_000 });
          await locker.hold();
          await sleep(LOCK_HELD_MS);
          const before = mine.length;
          await locker.free();
          // The held batch commits and is answered as one: wait until the answers after it come.
          await until(() => mine.slice(before).some((answer) => answer.answeredAtMs - answer.askedAtMs < LOCK_HELD_MS / 2), 'the held batch is answered', {
            everyMs: 1,
            withinMs: 30_000,
          });
        }
        expect(waitedPast()).toBe(true);
        await sleep(kill * 3);
        // Decisions asked and not answered as the kill lands (as far as the messages have come).
        inFlightAtKill.push(asked - mine.length);
        child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      answers.push(...mine);
    }

    const leases = answers.filter((answer) => answer.ok && answer.leaseExpiresAtMs !== undefined);
    const lapsed = leases.filter((answer) => (answer.leaseExpiresAtMs as number) <= answer.answeredAtMs);
    expect(lapsed).toEqual([]);
    // The property was put to the test: ok answers came to decisions that waited longer than their lease.
    const waitedPastLease = leases.filter((answer) => answer.answeredAtMs - answer.askedAtMs > LOAD_LEASE_MS);
    expect(waitedPastLease.length).toBeGreaterThan(0);
    expect(Math.max(...inFlightAtKill)).toBeGreaterThanOrEqual(8);

    // What a runner was told is what the books hold: every acknowledged admission is there.
    const acme = store.tenant('load-acme');
    for (const answer of answers.filter((each) => each.verb === 'admit' && each.ok)) {
      expect(await acme.getRun(answer.run), answer.run).not.toBeNull();
    }
  });
});
