import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import { freshSchemaName, testPgUrl } from '../postgres/pg-test-support.js';
import { describeOn } from '../test-backends.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// A command that only reads never creates, migrates or alters a store,
// and a store that cannot be used as configured is a configuration error (exit 3) naming what is
// wrong, never the password, and never "unreachable, retry later" (exit 4).

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = temporaryDirectory();
  cleanups.push(dir.remove);
  return dir.path;
}

async function schemaExists(url: string, schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describeOn('sqlite', 'read-only commands on SQLite', () => {
  it("status on another application's SQLite file exits 3 naming it, and the file is byte for byte as it was", async () => {
    const path = join(tempDir(), 'other-app.db');
    const other = new Database(path);
    other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO invoices VALUES (1, 100);");
    other.close();
    const before = readFileSync(path);
    for (const args of [['status'], ['runs'], ['audit', '--verify'], ['keys', 'list']]) {
      const result = await runCli([...args, '--store', path]);
      expect([args.join(' '), result.status]).toEqual([args.join(' '), 3]);
      expect(result.stderr).toMatch(/^error: configuration: .*other-app\.db is a SQLite database with other tables \(invoices\) and no quotaplane store/);
    }
    // serve, migrate and keys create do not add quotaplane's tables to it either.
    expect((await runCli(['migrate', '--store', path])).status).toBe(3);
    expect((await runCli(['keys', 'create', '--tenant', 'acme', '--role', 'runner', '--store', path, '--actor', 'ops'])).status).toBe(3);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('an empty file is no quotaplane store to a read-only command (exit 3), and stays empty', async () => {
    const path = join(tempDir(), 'empty.db');
    writeFileSync(path, '');
    const result = await runCli(['status', '--store', `sqlite:${path}`]);
    expect(result.status).toBe(3);
    expect(result.stderr).toContain(`no quotaplane store at ${path}`);
    expect(readFileSync(path)).toHaveLength(0);
  });

  it('a store an older quotaplane wrote is refused by a read-only command naming quotaplane migrate, and is not changed', async () => {
    const path = join(tempDir(), 'older.db');
    await (await openStore(`sqlite:${path}`)).close();
    // Make it read as one schema version behind: what an older build would have left.
    const raw = new Database(path);
    raw.exec('DELETE FROM quotaplane_schema WHERE version = (SELECT max(version) FROM quotaplane_schema)');
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
    const before = readFileSync(path);
    const result = await runCli(['status', '--store', `sqlite:${path}`]);
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/is at schema version \d+, and this quotaplane reads version \d+; run `quotaplane migrate --store sqlite:/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('migrate creates a store where there is none and answers nothing to migrate on a current one', async () => {
    const path = join(tempDir(), 'new.db');
    const created = await runCli(['migrate', '--store', `sqlite:${path}`, '--json']);
    expect(created.status).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ store: `sqlite:${path}`, migration: { backend: 'sqlite', fromVersion: 0 } });
    const again = await runCli(['migrate', '--store', `sqlite:${path}`]);
    expect([again.status, again.stdout]).toEqual([0, expect.stringMatching(/nothing to migrate/)]);
    expect((await runCli(['status', '--store', `sqlite:${path}`])).status).toBe(0);
  });
});

describeOn('postgres', 'read-only commands and configuration errors on PostgreSQL', () => {
  it("status with ?schema=typo_schema exits 3 and creates no schema", async () => {
    const url = testPgUrl();
    const schema = freshSchemaName('typo');
    const result = await runCli(['status', '--store', `${url}?schema=${schema}`]);
    expect(result.status).toBe(3);
    expect(result.stderr).toContain(`no quotaplane store in schema ${schema}`);
    expect(await schemaExists(url, schema)).toBe(false);
  });

  it("a schema of another application is refused even by serve's open, and nothing is added to it", async () => {
    const url = testPgUrl();
    const schema = freshSchemaName('foreign');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.invoices (id int)`);
    const error = await openStore(url, { schema }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'STORE_MISCONFIGURED', details: { reason: 'foreign' } });
    const tables = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema]);
    expect(tables.rows.map((row: { tablename: string }) => row.tablename)).toEqual(['invoices']);
  });

  it('a wrong password and a missing database are configuration errors (exit 3) that never print the password', async () => {
    const url = new URL(testPgUrl());
    const wrong = new URL(url);
    wrong.password = 'not-the-Secret-7781';
    const refused = await runCli(['status', '--store', wrong.toString()]);
    expect(refused.status).toBe(3);
    expect(refused.stderr).toMatch(/refused the password/);
    expect(refused.stderr + refused.stdout).not.toContain('not-the-Secret-7781');
    expect(refused.stderr + refused.stdout).not.toContain(url.password);

    const missing = new URL(url);
    missing.pathname = '/no_such_database_here';
    const noDatabase = await runCli(['status', '--store', missing.toString()]);
    expect(noDatabase.status).toBe(3);
    expect(noDatabase.stderr).toMatch(/the database does not exist/);
    expect(noDatabase.stderr).not.toContain(url.password);
  });

  it('a PostgreSQL URL that cannot be parsed is a usage error naming url and what to encode, never showing its password', async () => {
    for (const url of ['postgres://quotaplane:pw#9931@127.0.0.1:1/db', 'postgres://quotaplane:pw-9931@127.0.0.1:notaport/db']) {
      const result = await runCli(['status', '--store', url, '--json']);
      expect(result.status).toBe(2);
      expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: 'USAGE', exitStatus: 2, message: expect.stringMatching(/^--store: url: .*percent-encode/) } });
      expect(result.stderr).not.toContain('9931');
    }
  });

  it('a server that does not answer is still exit 4 (retry later), not a configuration error', async () => {
    const result = await runCli(['status', '--store', 'postgres://quotaplane:pw-9931@127.0.0.1:1/db']);
    expect(result.status).toBe(4);
    expect(result.stderr).not.toContain('pw-9931');
  });
});
