import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const T0 = 1_760_000_000_000;

describe('SQLite schema version 3 (run status instants, lease indexes)', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-v3-'));
    path = join(dir, 'quota.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('upgrades a version 2 file, dating each run from its latest pass, else its admission', async () => {
    const raw = new Database(path);
    raw.exec('CREATE TABLE quotaplane_schema (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL) STRICT');
    for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version < 3)) {
      raw.exec(migration.sql);
      raw.prepare('INSERT INTO quotaplane_schema VALUES (?, ?, 0)').run(migration.version, migration.name);
    }
    const run = raw.prepare(
      "INSERT INTO quota_runs (tenant, run_id, status, budget_json, width, admitted_at_ms, last_epoch) VALUES ('acme', ?, ?, '{}', 1, ?, ?)",
    );
    const pass = raw.prepare(
      "INSERT INTO quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms, settled_at_ms) VALUES ('acme', ?, ?, '2025-10', 0, ?, ?, ?)",
    );
    run.run('run-paused', 'paused', T0, 2);
    pass.run('run-paused', 1, T0, T0 + 10, T0 + 5);
    pass.run('run-paused', 2, T0 + 100, T0 + 200, T0 + 150);
    run.run('run-running', 'running', T0, 1);
    pass.run('run-running', 1, T0 + 7, T0 + 60_000, null);
    run.run('run-without-pass', 'running', T0 + 3, 1);
    raw.close();

    const store = await openSqliteStore(path);
    expect(store.migration.applied).toEqual([{ version: 3, name: 'run_status_since_and_lease_indexes' }]);
    const runs = await store.tenant('acme').runs({ limit: 10 });
    expect(runs.map((row) => [row.run, row.statusSinceMs])).toEqual([
      ['run-paused', T0 + 150],
      ['run-running', T0 + 7],
      ['run-without-pass', T0 + 3],
    ]);
    await store.close();
  });
});
