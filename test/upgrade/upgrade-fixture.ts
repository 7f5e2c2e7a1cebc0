// Where the upgrade fixture of a release lives and how a test opens it: the SQLite file copied to
// a temporary directory, the PostgreSQL dump loaded into a fresh schema. How the fixture is made,
// and why it is never edited, is in docs/compatibility.md#the-upgrade-test.

import { copyFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import pg from 'pg';

import type { FixtureBooks } from './upgrade-books.js';

/** The release whose store the fixture holds. */
export const FIXTURE_RELEASE = 'v0.1.0';

/** The fixture's directory: test/fixtures/<release>/. */
export const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', FIXTURE_RELEASE);

/** Its files: the SQLite database, the PostgreSQL dump, and the books both must read back. */
export const FIXTURE_FILES = {
  sqlite: join(FIXTURE_DIR, 'sqlite.db'),
  postgres: join(FIXTURE_DIR, 'postgres.sql'),
  books: join(FIXTURE_DIR, 'books.json'),
} as const;

/** What stands for the quoted schema name in the PostgreSQL dump (the migrations' own placeholder). */
export const DUMP_SCHEMA_PLACEHOLDER = ':QUOTAPLANE_SCHEMA';

/** 2026-01-05T08:00:00Z: the fixture's first act. */
export const FIXTURE_T0 = 1_767_600_000_000;

/** 2026-01-05T10:00:00Z: the instant the fixture's books are read at, before and after the upgrade. */
export const FIXTURE_READ_AT = FIXTURE_T0 + 2 * 3_600_000;

/** The books the fixture's store must read back (books.json). */
export function expectedBooks(): FixtureBooks {
  return JSON.parse(readFileSync(FIXTURE_FILES.books, 'utf8')) as FixtureBooks;
}

/** Copies the fixture's SQLite database into `dir` and answers the copy's path. */
export function copySqliteFixture(dir: string): string {
  const path = join(dir, 'upgrade.db');
  copyFileSync(FIXTURE_FILES.sqlite, path);
  return path;
}

/**
 * Loads the fixture's PostgreSQL dump into `schema` (which must not exist yet), in one
 * transaction, as the release left it: no newer migration is applied here.
 */
export async function loadPostgresFixture(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sql = readFileSync(FIXTURE_FILES.postgres, 'utf8').replaceAll(DUMP_SCHEMA_PLACEHOLDER, client.escapeIdentifier(schema));
    await client.query('BEGIN');
    await client.query(sql);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
