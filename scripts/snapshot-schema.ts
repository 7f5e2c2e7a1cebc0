// Refreshes the committed schema snapshots, test/schema/postgres.sql and test/schema/sqlite.sql
// (npm run snapshot:schema): creates a store with this checkout's migrations on each backend and
// writes what the live database then holds. PostgreSQL is the server QUOTAPLANE_TEST_PG_URL names,
// else an embedded one started for the purpose and stopped again. test/schema/schema-snapshot.test.ts
// fails while a snapshot differs from what the migrations create.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { TEST_PG_URL_ENV } from '../test/postgres/global-setup.js';
import { postgresSchemaSnapshot, SNAPSHOT_PATHS, sqliteSchemaSnapshot } from '../test/schema/schema-snapshot.js';

const root = fileURLToPath(new URL('..', import.meta.url));

writeFileSync(`${root}/${SNAPSHOT_PATHS.sqlite}`, await sqliteSchemaSnapshot());
const given = process.env[TEST_PG_URL_ENV];
const server = given === undefined || given === '' ? await startEmbeddedServer('snapshot') : null;
try {
  writeFileSync(`${root}/${SNAPSHOT_PATHS.postgres}`, await postgresSchemaSnapshot(server?.url ?? given!));
} finally {
  await server?.dispose();
}
console.log(`wrote ${SNAPSHOT_PATHS.postgres} and ${SNAPSHOT_PATHS.sqlite}`);
