import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

// The two store adapters mirror each other file for file (docs/design/architecture.md#the-adapters-files):
// `sqlite/sqlite-<concept>` and `postgres/postgres-<concept>` hold the same concept, so learning
// one backend teaches the other. A file with no twin must be named below with the reason.

const STORE = join(import.meta.dirname, '..', '..', 'src', 'store');

const ADAPTERS = ['sqlite', 'postgres'] as const;
type Adapter = (typeof ADAPTERS)[number];

/** Files of one adapter that have no twin in the other, each with why. Keep it short. */
const ONE_SIDED: Readonly<Record<string, string>> = {
  'sqlite/sqlite-admit-retry.ts': 'the statement a retried admission is judged on; PostgreSQL loads those facts with the books (quota_books_load)',
  'sqlite/sqlite-checkpointer.ts': 'WAL checkpoints on a background thread; the PostgreSQL server checkpoints on its own',
  'sqlite/sqlite-halts.ts': "a tenant's halts read once per write (cachedInWrite); PostgreSQL reads them from a batch's loaded rows",
  'sqlite/sqlite-quota.ts': "a tenant's quota read once per write (cachedInWrite); PostgreSQL reads it from a batch's loaded rows",
  'sqlite/sqlite-wal-ahead.ts': 'keeps the WAL file written ahead of its frames; PostgreSQL has no WAL file of ours',
  'postgres/postgres-batcher.ts': "group commit as batches that lock, load, decide and write; SQLite's group commit is in sqlite-connection.ts",
  'postgres/postgres-books-facts.ts': "a batch's loaded rows and undo log; SQLite's books read and write one statement per fact",
  'postgres/postgres-books-cache.ts': "each tenant's rows kept between batches, at their books' version; SQLite's one writer reads its own file",
  'postgres/postgres-books-io.ts': "a batch's one load and one write (quota_books_load, quota_books_write); SQLite has neither",
  'postgres/postgres-lifecycle-context.ts': "what each composite is handed (pool, statements, batcher); SQLite's take the connection",
  'postgres/postgres-pool.ts': 'the pg pool and its int8 parsing; SQLite has one synchronous connection',
  'postgres/postgres-schema-name.ts': 'the configured schema, validated and quoted; a SQLite file has no schema name',
  'postgres/postgres-call-queries.ts': "the model-call books' load and writes as statements over JSONB; SQLite's call books run one statement per fact",
  'postgres/postgres-wakes.ts': 'LISTEN/NOTIFY across instances; SQLite wakes in process (store/waiter-wakes.ts) and polls',
};

/** Every entry of an adapter's folder (files and folders), as `adapter/name`. */
function entries(adapter: Adapter): string[] {
  return readdirSync(join(STORE, adapter)).map((name) => `${adapter}/${name}`).sort();
}

/** The concept an entry holds: its name without the adapter's prefix (`sqlite/sqlite-rows.ts` → `rows.ts`). */
function concept(entry: string): string {
  const [adapter, name] = entry.split('/') as [Adapter, string];
  return name.startsWith(`${adapter}-`) ? name.slice(adapter.length + 1) : name;
}

describe('the store adapters mirror each other file for file', () => {
  const sqlite = entries('sqlite');
  const postgres = entries('postgres');
  const concepts = (list: readonly string[]) => new Set(list.map(concept));

  it("every file is named after its adapter (sqlite-…, postgres-…), the migrations' folders aside", () => {
    const misnamed = [...sqlite, ...postgres].filter((entry) => {
      const [adapter, name] = entry.split('/') as [Adapter, string];
      return name !== 'migrations' && !name.startsWith(`${adapter}-`);
    });
    expect(misnamed, 'name each file sqlite-<concept> or postgres-<concept>').toEqual([]);
  });

  it('every file has its twin in the other adapter, or is listed as one-sided with its reason', () => {
    const sqliteConcepts = concepts(sqlite);
    const postgresConcepts = concepts(postgres);
    const unpaired = [
      ...sqlite.filter((entry) => !postgresConcepts.has(concept(entry))),
      ...postgres.filter((entry) => !sqliteConcepts.has(concept(entry))),
    ];
    const message = 'files with no twin: add the twin (or rename to the twin\'s concept), or list the file in ONE_SIDED with why';
    expect(unpaired.filter((entry) => ONE_SIDED[entry] === undefined), message).toEqual([]);
  });

  it('every file listed as one-sided exists and still has no twin', () => {
    const all = new Set([...sqlite, ...postgres]);
    const twinned = (entry: string) => {
      const other = entry.startsWith('sqlite/') ? postgres : sqlite;
      return other.some((candidate) => concept(candidate) === concept(entry));
    };
    expect(Object.keys(ONE_SIDED).filter((entry) => !all.has(entry) || twinned(entry)), 'stale ONE_SIDED entries: remove them').toEqual([]);
    expect(Object.entries(ONE_SIDED).filter(([, reason]) => reason.trim() === '' || reason.includes('\n'))).toEqual([]);
  });

  it('pairs the concepts both adapters hold', () => {
    // A sanity check of the listing itself: the twins named in docs/design/architecture.md.
    const both = [...concepts(sqlite)].filter((name) => concepts(postgres).has(name));
    expect(both).toEqual(expect.arrayContaining(['queue-books.ts', 'tenant-books.ts', 'waiters.ts', 'store.ts', 'migrations']));
  });
});
