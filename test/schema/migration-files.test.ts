import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { WRITTEN_ROWS } from '../../src/store/postgres/postgres-books-io.js';
import { POSTGRES_MIGRATION_FILES } from '../../src/store/postgres/postgres-migrations.generated.js';
import { postgresMigrations, SCHEMA_PLACEHOLDER } from '../../src/store/postgres/postgres-migrations.js';
import { WAITER_CHANNEL } from '../../src/store/postgres/postgres-wakes.js';

// Each backend's schema is numbered plain-SQL files, compiled by scripts/build-sql.mjs into a
// committed module the package reads instead of files. The module must be what the files compile
// to, and the frozen SQL must agree with the TypeScript that calls it.

const root = fileURLToPath(new URL('../..', import.meta.url));
const MIGRATION_DIRS = ['src/store/postgres/migrations', 'src/store/sqlite/migrations'];
const GENERATED = ['src/store/postgres/postgres-migrations.generated.ts', 'src/store/sqlite/sqlite-migrations.generated.ts'];

function buildSql(args: string[]): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [join(root, 'scripts/build-sql.mjs'), ...args], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

const copies: string[] = [];
afterEach(() => {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the migration files and generated modules, laid out as in the repository. */
function copyOfSqlSources(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quotaplane-build-sql-'));
  copies.push(dir);
  for (const path of [...MIGRATION_DIRS, ...GENERATED]) cpSync(join(root, path), join(dir, path), { recursive: true });
  return dir;
}

// The migration files of one folder, oldest first.
function sqlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
}

describe('the generated migration modules', () => {
  it('are exactly what the SQL files compile to (npm run build:sql)', () => {
    const check = buildSql(['--check']);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('are reported stale, by name, when a SQL file changed after the last build, and current once rebuilt', () => {
    const copy = copyOfSqlSources();
    const next = String(sqlFiles(join(copy, 'src/store/sqlite/migrations')).length + 1).padStart(4, '0');
    writeFileSync(join(copy, `src/store/sqlite/migrations/${next}_later_change.sql`), 'CREATE TABLE t (x INTEGER) STRICT;\n');
    const stale = buildSql(['--check', '--root', copy]);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('src/store/sqlite/sqlite-migrations.generated.ts');
    expect(stale.stderr).not.toContain('postgres');
    expect(buildSql(['--root', copy]).status).toBe(0);
    expect(buildSql(['--check', '--root', copy])).toEqual({ status: 0, stderr: '' });
  });

  it('refuse a gap in the version numbers, naming the file', () => {
    const copy = copyOfSqlSources();
    const dir = join(copy, 'src/store/sqlite/migrations');
    const files = sqlFiles(dir);
    const last = files[files.length - 1] as string;
    const skipped = `${String(files.length + 1).padStart(4, '0')}${last.slice(4)}`;
    renameSync(join(dir, last), join(dir, skipped));
    const built = buildSql(['--root', copy]);
    expect(built.status).toBe(1);
    expect(built.stderr).toContain(`${skipped}: expected version ${files.length} here`);
  });
});

describe('the PostgreSQL migration files', () => {
  const latestSql = POSTGRES_MIGRATION_FILES.map((migration) => migration.sql).join('\n');

  it('name the schema only by the placeholder, which is replaced by the quoted schema name', () => {
    const [migration] = postgresMigrations('"tenant_books"');
    expect(migration?.sql).not.toContain(SCHEMA_PLACEHOLDER);
    expect(migration?.sql).toContain('CREATE TABLE "tenant_books".quota_running');
    expect(migration?.sql).not.toMatch(/"quotaplane"\./);
  });

  it('quota_books_write stores exactly the kinds of rows a batch of PostgreSQL decisions can change', () => {
    const writes = POSTGRES_MIGRATION_FILES.filter((migration) => migration.sql.includes(`FUNCTION ${SCHEMA_PLACEHOLDER}.quota_books_write(`));
    const latest = writes.at(-1)?.sql ?? '';
    const body = latest.slice(latest.indexOf(`FUNCTION ${SCHEMA_PLACEHOLDER}.quota_books_write(`));
    // `expect` is not a kind of row: it carries the versions a write on kept rows is checked against.
    const stored = [...body.matchAll(/IF p_rows \? '(\w+)' THEN/g)].map((match) => match[1]).filter((kind) => kind !== 'expect');
    expect([...stored].sort()).toEqual([...WRITTEN_ROWS].sort());
  });

  it('notify the waiter channel the TypeScript side listens for', () => {
    expect(latestSql).toContain(`pg_notify('${WAITER_CHANNEL}', '${SCHEMA_PLACEHOLDER}:' || `);
  });
});
