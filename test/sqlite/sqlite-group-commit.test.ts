import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import { deal, raceProcesses } from './race-harness.js';

// Group commit (docs/design/decisions.md "Group commit"): writes queued in one turn share one
// BEGIN IMMEDIATE … COMMIT, each undone alone if it throws, answered only after that COMMIT.

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function outcome(promise: Promise<unknown>): Promise<Outcome> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

describe('SQLite group commit', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-group-commit-'));
    path = join(dir, 'group.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function openConnection(options: { maxBatchDecisions?: number; maxBatchHoldMs?: number } = {}): SqliteConnection {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY)');
    db.exec('CREATE TABLE IF NOT EXISTS item (name TEXT PRIMARY KEY, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
    db.exec('INSERT OR IGNORE INTO parent (id) VALUES (1)');
    db.pragma('foreign_keys = ON');
    // Batches are bounded by count only unless a test sets the hold: the default hold of a few ms
    // can end a batch early on a loaded machine, and these tests decide what shares a batch.
    return new SqliteConnection(db, { busyTimeoutMs: 1000, maxBatchHoldMs: 60_000, ...options });
  }

  function committedNames(): string[] {
    const reader = new Database(path, { readonly: true });
    try {
      return reader.prepare('SELECT name FROM item ORDER BY rowid').all().map((row) => (row as { name: string }).name);
    } finally {
      reader.close();
    }
  }

  const insert = (conn: SqliteConnection, name: string, parent = 1) => () => conn.run('INSERT INTO item (name, parent) VALUES (:name, :parent)', { name, parent });

  // A body that counts its runs: bodies may run again when a batch is rolled back whole.
  function counted(runs: Map<string, number>, name: string, body: () => unknown): () => unknown {
    return () => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      return body();
    };
  }

  // Queues 'first', then `second`, then 'third' in one turn, each counting its runs in `runs`.
  function firstSecondThird(conn: SqliteConnection, runs: Map<string, number>, second: () => unknown): Promise<Outcome[]> {
    return Promise.all([
      outcome(conn.write(counted(runs, 'first', insert(conn, 'first')))),
      outcome(conn.write(counted(runs, 'second', second))),
      outcome(conn.write(counted(runs, 'third', insert(conn, 'third')))),
    ]);
  }

  it('a batch in which one decision throws commits the others, and only that caller gets the error', async () => {
    const conn = openConnection();
    const conflict = new QuotaError('CONFLICT', 'the second decision refuses');
    const runs = new Map<string, number>();
    const answers = await firstSecondThird(conn, runs, () => {
      conn.run('INSERT INTO item (name, parent) VALUES (:name, 1)', { name: 'second' });
      throw conflict;
    });
    expect(answers[0]).toEqual({ ok: true, value: 1 });
    expect(answers[1]).toEqual({ ok: false, error: conflict });
    expect(answers[2]).toEqual({ ok: true, value: 1 });
    // The thrower had written, so the transaction was rolled back whole and the batch so far ran
    // again, each body in a savepoint; the thrower's insert was undone, the others are on disk once.
    expect(committedNames()).toEqual(['first', 'third']);
    expect(Object.fromEntries(runs)).toEqual({ first: 2, second: 2, third: 1 });
    await conn.close();
  });

  it('a decision that throws before it writes is answered alone, and no body of its batch runs again', async () => {
    const conn = openConnection();
    const missing = new QuotaError('NOT_FOUND', 'the second decision finds nothing to change');
    const runs = new Map<string, number>();
    const answers = await firstSecondThird(conn, runs, () => {
      if (conn.get('SELECT 1 AS found FROM item WHERE name = :name', { name: 'absent' }) === undefined) throw missing;
      return insert(conn, 'second')();
    });
    expect(answers).toEqual([
      { ok: true, value: 1 },
      { ok: false, error: missing },
      { ok: true, value: 1 },
    ]);
    expect(committedNames()).toEqual(['first', 'third']);
    expect(Object.fromEntries(runs)).toEqual({ first: 1, second: 1, third: 1 });
    await conn.close();
  });

  it('two decisions of one batch that throw after writing each get their own error, and the others commit once, in arrival order', async () => {
    const conn = openConnection();
    const runs = new Map<string, number>();
    const refusing = (name: string) =>
      counted(runs, name, () => {
        conn.run('INSERT INTO item (name, parent) VALUES (:name, 1)', { name });
        throw new QuotaError('CONFLICT', `${name} refuses`);
      });
    const order: string[] = [];
    const answers = await Promise.all(
      [
        ['a', counted(runs, 'a', insert(conn, 'a'))],
        ['x', refusing('x')],
        ['b', counted(runs, 'b', insert(conn, 'b'))],
        ['y', refusing('y')],
        ['c', counted(runs, 'c', insert(conn, 'c'))],
      ].map(([name, body]) => outcome(conn.write(body as () => unknown).finally(() => order.push(name as string)))),
    );
    expect(answers.map((answer) => (answer.ok ? answer.value : (answer.error as QuotaError).message))).toEqual([1, 'x refuses', 1, 'y refuses', 1]);
    expect(committedNames()).toEqual(['a', 'b', 'c']);
    // The first pass stopped at x and ran again guarded; y then rolled back to its own savepoint.
    expect(Object.fromEntries(runs)).toEqual({ a: 2, x: 2, b: 1, y: 1, c: 1 });
    // Every caller was answered after the one COMMIT that decided them all, in arrival order.
    expect(order).toEqual(['a', 'x', 'b', 'y', 'c']);
    // Savepoints were for that one batch: in the next, a throw after writing again reruns the
    // batch so far (d runs twice), rather than rolling back to a savepoint of its own.
    const next = await Promise.all([conn.write(counted(runs, 'd', insert(conn, 'd'))), outcome(conn.write(refusing('z')))]);
    expect(next[0]).toBe(1);
    expect({ d: runs.get('d'), z: runs.get('z') }).toEqual({ d: 2, z: 2 });
    expect(committedNames()).toEqual(['a', 'b', 'c', 'd']);
    await conn.close();
  });

  it('bodies run again stay guarded when their batch is cut short: none of them runs a third time', async () => {
    const conn = openConnection({ maxBatchHoldMs: 5 });
    const runs = new Map<string, number>();
    // 'a' holds the loop past the batch bound on its second run, so the rerun batch ends after it
    // and the other bodies run again in the batch after that.
    const slowOnRerun = counted(runs, 'a', () => {
      if (runs.get('a') === 2) for (const until = performance.now() + 10; performance.now() < until; );
      return insert(conn, 'a')();
    });
    const refusing = counted(runs, 'x', () => {
      conn.run('INSERT INTO item (name, parent) VALUES (:name, 1)', { name: 'x' });
      throw new QuotaError('CONFLICT', 'x refuses');
    });
    const answers = await Promise.all([
      outcome(conn.write(slowOnRerun)),
      ...['b', 'c', 'd'].map((name) => outcome(conn.write(counted(runs, name, insert(conn, name))))),
      outcome(conn.write(refusing)),
    ]);
    expect(answers.map((answer) => (answer.ok ? answer.value : (answer.error as QuotaError).message))).toEqual([1, 1, 1, 1, 'x refuses']);
    expect(committedNames()).toEqual(['a', 'b', 'c', 'd']);
    expect(Object.fromEntries(runs)).toEqual({ a: 2, b: 2, c: 2, d: 2, x: 2 });
    await conn.close();
  });

  it('a decision alone in its batch that throws rolls back its own writes, and the next decision commits', async () => {
    const conn = openConnection();
    const conflict = new QuotaError('CONFLICT', 'the lone decision refuses');
    // Awaited one by one, so each decision is the only one in its batch (it runs without a savepoint).
    await expect(
      conn.write(() => {
        conn.run('INSERT INTO item (name, parent) VALUES (:name, 1)', { name: 'refused' });
        throw conflict;
      }),
    ).rejects.toBe(conflict);
    expect(committedNames()).toEqual([]);
    await expect(conn.write(insert(conn, 'next'))).resolves.toBe(1);
    expect(committedNames()).toEqual(['next']);
    // A lone decision whose COMMIT fails is STORE_UNAVAILABLE, and nothing of it is on disk.
    await expect(conn.write(insert(conn, 'orphan', 99))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(committedNames()).toEqual(['next']);
    await conn.close();
  });

  it('a fault during COMMIT acknowledges nothing: every decision of the batch is STORE_UNAVAILABLE and none is on disk', async () => {
    const conn = openConnection();
    // The second insert names a parent that does not exist; the foreign key is deferred, so each
    // body succeeds and the batch's COMMIT is what fails.
    const answers = await Promise.all([
      outcome(conn.write(insert(conn, 'first'))),
      outcome(conn.write(insert(conn, 'orphan', 99))),
      outcome(conn.write(insert(conn, 'third'))),
    ]);
    for (const answer of answers) {
      expect(answer.ok).toBe(false);
      expect((answer as { error: QuotaError }).error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    }
    expect(committedNames()).toEqual([]);
    // The connection is usable again: the next batch commits.
    await conn.write(insert(conn, 'after'));
    expect(committedNames()).toEqual(['after']);
    await conn.close();
  });

  it('runs and answers a batch first in, first out, across several bounded batches', async () => {
    const conn = openConnection({ maxBatchDecisions: 3 });
    const ran: string[] = [];
    const answered: string[] = [];
    const names = Array.from({ length: 10 }, (_, index) => `w${index}`);
    await Promise.all(
      names.map((name) =>
        conn
          .write(() => {
            ran.push(name);
            insert(conn, name)();
          })
          .then(() => answered.push(name)),
      ),
    );
    expect(ran).toEqual(names);
    expect(answered).toEqual(names);
    expect(committedNames()).toEqual(names);
    await conn.close();
  });

  it('answers a write only after its COMMIT: a reader on another connection sees it once the promise resolves', async () => {
    const conn = openConnection();
    const written = conn.write(insert(conn, 'durable'));
    // Queued, not yet run: nothing is on disk before the batch commits.
    expect(committedNames()).toEqual([]);
    await written;
    expect(committedNames()).toEqual(['durable']);
    await conn.close();
  });

  it('close() answers the writes already queued, then refuses new ones with STORE_UNAVAILABLE', async () => {
    const conn = openConnection();
    const queued = conn.write(insert(conn, 'queued'));
    const closing = conn.close();
    await expect(conn.write(insert(conn, 'late'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(queued).resolves.toBe(1);
    await closing;
    expect(committedNames()).toEqual(['queued']);
  });

  it('a lock held by another connection is waited for on timers: reads keep answering, the write commits once it is free', async () => {
    const conn = openConnection();
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let committed = false;
    const pending = conn.write(insert(conn, 'waited')).then(() => {
      committed = true;
    });
    // Several turns of the event loop pass while the write waits; a read answers meanwhile.
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await conn.read(() => conn.get<{ n: number }>('SELECT count(*) AS n FROM item', {}))).toEqual({ n: 0 });
    expect(committed).toBe(false);
    other.exec('COMMIT');
    other.close();
    await pending;
    expect(committedNames()).toEqual(['waited']);
    await conn.close();
  });

  it('64 concurrent admissions at maxConcurrentRuns 4 in one process admit exactly 4', async () => {
    const store = await openStore(`sqlite:${path}`);
    const acme = store.tenant('acme');
    const audit = { atMs: 1, by: { actor: 'ops', basis: 'asserted' as const }, action: 'quota.set', subject: 'quota', detail: {} };
    await acme.setQuota({ period: 'monthly', maxConcurrentRuns: 4 }, audit);
    const runs = Array.from({ length: 64 }, (_, index) => `run-${String(index).padStart(2, '0')}`);
    const outcomes = await Promise.all(runs.map((run) => acme.admit({ run, budget: {}, width: 1, atMs: 1_760_000_000_000, leaseMs: 60_000 })));
    const admitted = runs.filter((_, index) => outcomes[index]?.ok === true);
    // First come, first served: the batch runs in call order.
    expect(admitted).toEqual(runs.slice(0, 4));
    for (const refused of outcomes.filter((o) => !o.ok)) expect(refused).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', running: 4 } });
    expect(await acme.runningRuns(100)).toEqual(admitted);
    await store.close();
  });

  it('64 concurrent admissions at maxConcurrentRuns 4 from 4 processes admit exactly 4', async () => {
    const url = `sqlite:${path}`;
    const store = await openStore(url);
    const audit = { atMs: 1, by: { actor: 'ops', basis: 'asserted' as const }, action: 'quota.set', subject: 'quota', detail: {} };
    await store.tenant('acme').setQuota({ period: 'monthly', maxConcurrentRuns: 4 }, audit);
    await store.close();

    const runs = Array.from({ length: 64 }, (_, index) => `run-${String(index).padStart(2, '0')}`);
    const reports = await raceProcesses(deal(runs, 4).map((share) => ({ scenario: 'admit', url, tenant: 'acme', runs: share, concurrent: true })));
    const answers = reports.flatMap((report) => report.answers);
    expect(answers).toHaveLength(64);
    const admitted = answers.filter((a) => a.answer === 'ok').map((a) => a.run).sort();
    expect(admitted).toHaveLength(4);
    for (const refused of answers.filter((a) => a.answer !== 'ok')) expect(refused).toMatchObject({ answer: 'TooManyRuns', figure: 4 });
    const reopened = await openStore(url);
    expect(await reopened.tenant('acme').runningRuns(100)).toEqual(admitted);
    await reopened.close();
  }, 120_000);
});
