// Writes the upgrade fixture of a release, test/fixtures/<release>/ (npx tsx
// scripts/make-upgrade-fixture.ts), with the code checked out, which must be that release's tag:
// the books of test/upgrade/upgrade-scenario.ts written through the library into a new store of
// each backend, then the SQLite database file (checkpointed, vacuumed), a plain SQL dump of the
// PostgreSQL schema, and books.json, what test/upgrade/upgrade-books.ts reads back from both. Each
// file is checked before it is written: the copy reads back the same books. Run it at a release
// tag only, and never edit its output afterwards (docs/compatibility.md#the-upgrade-test).
// PostgreSQL is the server QUOTAPLANE_TEST_PG_URL names, else an embedded one started for the purpose.
import { deepStrictEqual } from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import pg from 'pg';

import { createPlane, openStore, type QuotaStore } from '../src/index.js';
import { POSTGRES_MIGRATION_FILES } from '../src/store/postgres/postgres-migrations.generated.js';
import { ManualClock } from '../src/testing/index.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { TEST_PG_URL_ENV } from '../test/postgres/global-setup.js';
import { postgresSnapshotOf } from '../test/schema/schema-snapshot.js';
import { readFixtureBooks, type FixtureBooks } from '../test/upgrade/upgrade-books.js';
import { FIXTURE_DIR, FIXTURE_FILES, FIXTURE_READ_AT, FIXTURE_RELEASE, loadPostgresFixture } from '../test/upgrade/upgrade-fixture.js';
import { writeFixtureBooks } from '../test/upgrade/upgrade-scenario.js';
import { dumpPostgresSchema } from './upgrade-fixture/postgres-dump.js';

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
if (`v${version}` !== FIXTURE_RELEASE) throw new Error(`package.json says ${version}; the fixture is of ${FIXTURE_RELEASE}`);

/** The books of a store as a plane over it reads them at the fixture's instant. */
async function booksOf(store: QuotaStore): Promise<FixtureBooks> {
  return readFixtureBooks(createPlane({ store, clock: new ManualClock(FIXTURE_READ_AT) }), store, FIXTURE_READ_AT);
}

async function sqliteFixture(work: string): Promise<FixtureBooks> {
  const path = join(work, 'made.db');
  const store = await openStore(`sqlite:${path}`);
  const { plane } = await writeFixtureBooks(store);
  const books = await readFixtureBooks(plane, store, FIXTURE_READ_AT);
  await store.close();
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('VACUUM');
  db.close();
  for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix) && statSync(path + suffix).size > 0) throw new Error(`${path}${suffix} is left`);
  // The file alone must hold the books.
  const copy = join(work, 'copy.db');
  copyFileSync(path, copy);
  const reopened = await openStore(`sqlite:${copy}`);
  try {
    deepStrictEqual(await booksOf(reopened), books);
  } finally {
    await reopened.close();
  }
  copyFileSync(path, FIXTURE_FILES.sqlite);
  return books;
}

async function postgresFixture(url: string): Promise<FixtureBooks> {
  const tag = Date.now().toString(36);
  const made = `qp_fixture_made_${tag}`;
  const loaded = `qp_fixture_loaded_${tag}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const store = await openStore(url, { schema: made });
    const { plane } = await writeFixtureBooks(store);
    const books = await readFixtureBooks(plane, store, FIXTURE_READ_AT);
    await store.close();
    const dump = await dumpPostgresSchema(admin, made, POSTGRES_MIGRATION_FILES, [
      `The upgrade fixture of quotaplane ${FIXTURE_RELEASE}: a PostgreSQL store with the books of`,
      'test/upgrade/upgrade-scenario.ts, dumped by scripts/make-upgrade-fixture.ts. Written at the',
      'release tag and never edited (docs/compatibility.md#the-upgrade-test). `:QUOTAPLANE_SCHEMA`',
      'stands for the quoted schema name; test/upgrade/upgrade-fixture.ts loads it in one transaction.',
    ]);
    if (dump.includes(made)) throw new Error(`the dump names the schema ${made} outside the placeholder`);
    writeFileSync(FIXTURE_FILES.postgres, dump);
    // The dump alone must make the same schema and hold the same books.
    await loadPostgresFixture(url, loaded);
    const normalised = async (schema: string) => (await postgresSnapshotOf(admin, schema)).replaceAll(schema, 'quotaplane');
    deepStrictEqual(await normalised(loaded), await normalised(made));
    const reopened = await openStore(url, { schema: loaded, migrate: false });
    try {
      deepStrictEqual(await booksOf(reopened), books);
    } finally {
      await reopened.close();
    }
    return books;
  } finally {
    for (const schema of [made, loaded]) await admin.query(`DROP SCHEMA IF EXISTS ${admin.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  }
}

mkdirSync(FIXTURE_DIR, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'quotaplane-fixture-'));
const given = process.env[TEST_PG_URL_ENV];
const server = given === undefined || given === '' ? await startEmbeddedServer('fixture') : null;
try {
  const sqlite = await sqliteFixture(work);
  const postgres = await postgresFixture(server?.url ?? given!);
  // One scenario, one rulebook: both backends must hold the same books.
  deepStrictEqual(postgres, sqlite);
  writeFileSync(FIXTURE_FILES.books, `${JSON.stringify(sqlite, null, 2)}\n`);
} finally {
  await server?.dispose();
  rmSync(work, { recursive: true, force: true });
}
for (const path of Object.values(FIXTURE_FILES)) console.log(`wrote ${path} (${statSync(path).size} bytes)`);
