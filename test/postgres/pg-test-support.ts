import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import pg from 'pg';
import { inject } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore, type PostgresStoreOptions } from '../../src/store/postgres/postgres-store.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { tempDir } from '../plane/plane-fixtures.js';

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

/** What {@link openSchemaStore} opens: a store in a fresh schema and an admin connection to the same server. */
export interface SchemaStore {
  readonly url: string;
  readonly schema: string;
  readonly store: PostgresQuotaStore;
  /** A plain connection for what the test does behind the store's back (triggers, held locks, reads). */
  readonly admin: pg.Client;
}

/** Opens a store in a fresh schema (`freshSchemaName(label)`) and a connected admin client; close both with {@link closeSchemaStore}. */
export async function openSchemaStore(label: string, options: Omit<PostgresStoreOptions, 'schema'> = {}): Promise<SchemaStore> {
  const url = testPgUrl();
  const schema = freshSchemaName(label);
  const store = await openPostgresStore(url, { ...options, schema });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  return { url, schema, store, admin };
}

/** Ends what {@link openSchemaStore} opened and drops its schema; any part a failed setup never opened is skipped. */
export async function closeSchemaStore(opened: Partial<SchemaStore>): Promise<void> {
  await opened.admin?.end();
  await opened.store?.close();
  if (opened.url !== undefined && opened.schema !== undefined) await dropSchema(opened.url, opened.schema);
}

/** Two stores side by side for tests that hold both backends to one answer: a SQLite file and a PostgreSQL schema. */
export interface StorePair {
  readonly stores: { readonly sqlite: QuotaStore; readonly postgres: QuotaStore };
  /** Closes both stores, drops the schema and removes the file's directory. */
  close(): Promise<void>;
}

/** Opens a {@link StorePair}: SQLite in a temporary directory, PostgreSQL in a fresh schema (`freshSchemaName(label)`). */
export async function openStorePair(label: string): Promise<StorePair> {
  const dir = tempDir();
  const url = testPgUrl();
  const schema = freshSchemaName(label);
  const stores = { sqlite: await openStore(`sqlite:${join(dir.dir, 'q.db')}`), postgres: await openStore(url, { schema }) };
  return {
    stores,
    close: async () => {
      for (const store of Object.values(stores)) await store.close();
      await dropSchema(url, schema);
      dir.remove();
    },
  };
}
