import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { testPgUrl } from '../postgres/pg-test-support.js';
import { describeOn } from '../test-backends.js';
import { postgresSchemaSnapshot, SNAPSHOT_PATHS, sqliteSchemaSnapshot } from './schema-snapshot.js';

// The committed snapshots are the schema a new store gets, read back from a live database: a
// migration that changes the schema changes them in the same commit (npm run snapshot:schema), so
// a reviewer sees the schema that results, not only the statements that make it.

const root = fileURLToPath(new URL('../..', import.meta.url));
const committed = (path: string): string => readFileSync(`${root}/${path}`, 'utf8');
const STALE = 'the schema a new store gets differs from the committed snapshot: run npm run snapshot:schema and review the diff';

describe('schema snapshots', () => {
  it('a new SQLite store has the schema of test/schema/sqlite.sql', async () => {
    expect(await sqliteSchemaSnapshot(), STALE).toBe(committed(SNAPSHOT_PATHS.sqlite));
  });
});

describeOn('postgres', 'schema snapshots on PostgreSQL', () => {
  it('a new PostgreSQL store has the schema of test/schema/postgres.sql', async () => {
    expect(await postgresSchemaSnapshot(testPgUrl()), STALE).toBe(committed(SNAPSHOT_PATHS.postgres));
  });
});
