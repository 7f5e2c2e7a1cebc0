import { randomBytes } from 'node:crypto';

import pg from 'pg';
import { inject } from 'vitest';

import { openPostgresStore, type PostgresStoreOptions } from '../../src/store/postgres/postgres-store.js';
import type { QuotaStore } from '../../src/store/store.js';

/**
 * The run's PostgreSQL URL, from the global setup (or `QUOTAPLANE_TEST_PG_URL`). Throws, failing
 * the calling test or hook, when the setup has no server: the suite fails, it never skips.
 */
export function testPgUrl(): string {
  const problem = inject('quotaplanePgError');
  if (typeof problem === 'string' && problem !== '') throw new Error(`no PostgreSQL server for the tests: ${problem}`);
  const url = inject('quotaplanePgUrl');
  if (typeof url !== 'string' || url === '') {
    throw new Error('no PostgreSQL URL was provided: is test/postgres/global-setup.ts registered in vitest.config.ts?');
  }
  return url;
}

/** A schema name no other test file or group uses: `qp_test_<label>_<random hex>`. */
export function freshSchemaName(label: string): string {
  return `qp_test_${label.replace(/[^a-z0-9]/g, '_').slice(0, 20)}_${randomBytes(5).toString('hex')}`;
}

/** Drops a test schema and everything in it; used by teardowns. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Opens a store in a fresh schema; `close()` closes it and drops the schema. */
export async function openFreshStore(
  label: string,
  options: Omit<PostgresStoreOptions, 'schema'> = {},
  url = testPgUrl(),
): Promise<{ store: QuotaStore; schema: string; url: string; close(): Promise<void> }> {
  const schema = freshSchemaName(label);
  const store = await openPostgresStore(url, { ...options, schema });
  return {
    store,
    schema,
    url,
    async close() {
      await store.close();
      await dropSchema(url, schema);
    },
  };
}
