import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { TENANT_DELETED_TABLES, TENANT_KEPT_TABLES } from '../../src/store/tenant-deletion-sql.js';

// The schema snapshots (test/schema/*.sql, checked against a migrated store by
// schema-snapshot.test.ts) name every table of each backend. A deletion must account for each one
// with a tenant column: removed with the tenant, or kept on purpose.
function tablesWithTenant(file: string): string[] {
  const text = readFileSync(new URL(`../schema/${file}`, import.meta.url), 'utf8');
  const tables: string[] = [];
  for (const match of text.matchAll(/CREATE TABLE (?:\w+\.)?(\w+) \(([\s\S]*?)\n\)/g)) {
    const [, name, body] = match;
    if (name !== undefined && body !== undefined && /^\s+tenant\s/m.test(body)) tables.push(name);
  }
  return tables.sort();
}

describe('L95.5: a deletion accounts for every table that holds a tenant’s rows', () => {
  it.each(['sqlite.sql', 'postgres.sql'])('%s: each table with a tenant column is deleted or kept on purpose, never both', (file) => {
    const found = tablesWithTenant(file);
    expect(found.length).toBeGreaterThan(10);
    const accounted = [...TENANT_DELETED_TABLES, ...TENANT_KEPT_TABLES];
    expect(found.filter((table) => !accounted.includes(table))).toEqual([]);
    expect(TENANT_DELETED_TABLES.filter((table) => TENANT_KEPT_TABLES.includes(table))).toEqual([]);
    // Every table the deletion names exists in this schema, so no statement fails at run time.
    expect(TENANT_DELETED_TABLES.filter((table) => !found.includes(table))).toEqual([]);
  });
});
