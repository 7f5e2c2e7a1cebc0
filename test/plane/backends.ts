import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import pg from 'pg';

import type { OpenStoreOptions } from '../../src/store/open-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from '../postgres/pg-test-support.js';
import { testsBackend, type TestBackend } from '../test-backends.js';
import { tempDir } from './plane-fixtures.js';

/**
 * A fresh, empty store on one backend that several processes can open: its URL and the options
 * `openStore` needs for it, and how to remove it. `whole` stores (a file, a database of their own)
 * can also be named by URL alone, as the CLI names them.
 */
export interface SharedStore {
  readonly url: string;
  readonly options: OpenStoreOptions;
  remove(): Promise<void>;
}

/** How to make a fresh store on each backend. */
const EVERY_BACKEND: readonly { name: TestBackend; fresh: (label: string) => Promise<SharedStore> }[] = [
  {
    name: 'sqlite',
    fresh: async () => {
      const dir = tempDir();
      return { url: `sqlite:${join(dir.dir, 'quota.db')}`, options: {}, remove: async () => dir.remove() };
    },
  },
  {
    name: 'postgres',
    fresh: async (label) => {
      const url = testPgUrl();
      const schema = freshSchemaName(label);
      return { url, options: { schema }, remove: () => dropSchema(url, schema) };
    },
  },
];

/**
 * The backends the cross-process scenarios run on: those `QUOTAPLANE_TEST_BACKENDS` selects
 * (test-backends.ts; both by default).
 */
export const BACKENDS = EVERY_BACKEND.filter((backend) => testsBackend(backend.name));

/**
 * A PostgreSQL database of its own on the test server, so a URL alone (as the CLI takes it) names
 * an empty store; `remove` drops it.
 */
export async function freshPostgresDatabase(): Promise<SharedStore> {
  const serverUrl = testPgUrl();
  const name = `qp_cli_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    options: {},
    async remove() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
