import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { deal, raceProcesses } from './race-harness.js';

// Exactness across processes on one file (docs/design/decisions.md "Exact across instances"): real
// OS processes, released together from a barrier, each with its own connection, decide against one
// SQLite file.
const PROCESSES = 4;

describe('SQLite store raced by several OS processes', () => {
  let dir: string;
  let url: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-race-'));
    url = `sqlite:${join(dir, 'race.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('X1-sqlite 40 admissions from 4 processes at maxConcurrentRuns 10 admit exactly 10', async () => {
    const store = await openStore(url);
    const audit = { atMs: 1, by: { actor: 'ops', basis: 'asserted' as const }, action: 'quota.set', subject: 'quota', detail: {} };
    await store.tenant('acme').setQuota({ period: 'monthly', maxConcurrentRuns: 10 }, audit);
    await store.close();

    const runs = Array.from({ length: 40 }, (_, index) => `run-${String(index).padStart(2, '0')}`);
    const reports = await raceProcesses(deal(runs, PROCESSES).map((share) => ({ scenario: 'admit', url, tenant: 'acme', runs: share })));
    const answers = reports.flatMap((report) => report.answers);

    expect(answers).toHaveLength(40);
    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(10);
    const refused = answers.filter((a) => a.answer !== 'ok');
    expect(refused).toHaveLength(30);
    for (const refusal of refused) {
      expect(refusal.answer).toBe('TooManyRuns');
      expect(refusal.figure).toBe(10); // the full count the decision was made from
    }
    const reopened = await openStore(url);
    const acme = reopened.tenant('acme');
    expect(await acme.running()).toBe(10);
    const admitted = answers.filter((a) => a.answer === 'ok').map((a) => a.run).sort();
    expect(await acme.runningRuns(100)).toEqual(admitted);
    for (const run of refused.map((a) => a.run)) expect(await acme.getRun(run)).toBeNull();
    await reopened.close();
  });

  it('C42-sqlite 20 reserves of 100 tokens from 4 processes against a 1000-token period: exactly 10 ok, reserved 1000', async () => {
    await (await openStore(url)).close();
    const runs = Array.from({ length: 20 }, (_, index) => `hold-${String(index).padStart(2, '0')}`);
    const reports = await raceProcesses(deal(runs, PROCESSES).map((share) => ({ scenario: 'reserve', url, tenant: 'acme', runs: share })));
    const answers = reports.flatMap((report) => report.answers);

    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(10);
    expect(answers.filter((a) => a.answer === 'SpentOut')).toHaveLength(10);
    const reopened = await openStore(url);
    const acme = reopened.tenant('acme');
    expect(await acme.reserved('2997-01')).toEqual({ tokens: 1000, minorUnits: 0 });
    expect(await acme.reservations(100)).toHaveLength(10);
    // A refused hold takes no slot.
    expect(await acme.running()).toBe(10);
    await reopened.close();
  });

  it('C41-sqlite 40 dispatches from 4 processes at 10 per 3600 s: exactly 10 ok and 30 RateLimited', async () => {
    await (await openStore(url)).close();
    const runs = Array.from({ length: 40 }, (_, index) => `rate-${String(index).padStart(2, '0')}`);
    const reports = await raceProcesses(
      deal(runs, PROCESSES).map((share) => ({ scenario: 'reserveRate', url, tenant: 'acme', runs: share })),
    );
    const answers = reports.flatMap((report) => report.answers);

    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(10);
    const refused = answers.filter((a) => a.answer !== 'ok');
    expect(refused).toHaveLength(30);
    for (const refusal of refused) expect(refusal).toMatchObject({ answer: 'RateLimited', figure: 10 });
  });

  it('four processes opening one new file at once migrate it exactly once', async () => {
    const reports = await raceProcesses(Array.from({ length: PROCESSES }, () => ({ scenario: 'open', url, tenant: 'acme', runs: [] })));

    const applied = reports.map((report) => report.appliedMigrations).sort();
    expect(applied).toEqual([0, 0, 0, SQLITE_MIGRATIONS.length]);
    const raw = new Database(join(dir, 'race.db'), { readonly: true });
    expect(raw.prepare('SELECT version FROM quotaplane_schema ORDER BY version').all()).toEqual(
      SQLITE_MIGRATIONS.map(({ version }) => ({ version })),
    );
    raw.close();
  });
});
