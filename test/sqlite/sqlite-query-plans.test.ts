import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { overranPassesSql } from '../../src/store/overran-passes.js';
import { SELECT_PASS_LEASE } from '../../src/store/sqlite/sqlite-lease-queries.js';
import { migrateSqlite } from '../../src/store/sqlite/sqlite-migrations.js';

// The passes' unique index leads with the run id (entries of one group commit share the
// index's last page, whatever their tenants), so no read may walk it for one tenant's passes:
// such a read would visit every tenant's passes. These plans pin what each read uses instead.

function planOf(sql: string, params: Record<string, string | number>): string[] {
  const db = new Database(':memory:');
  try {
    migrateSqlite(db, 0);
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((row) => row.detail);
  } finally {
    db.close();
  }
}

describe('SQLite query plans of quota_passes', () => {
  it("overranPasses reads one tenant's overran passes through quota_passes_overran, never a scan of every pass", () => {
    const plan = planOf(overranPassesSql('', '@tenant', '@limit'), { tenant: 'acme', limit: 10 });
    expect(plan).toContain('SEARCH p USING INDEX quota_passes_overran (tenant=?)');
    expect(plan.filter((step) => /^SCAN (p|quota_passes)\b/.test(step))).toEqual([]);
  });

  it('a pass is found by run, tenant and epoch through the unique index', () => {
    const plan = planOf(SELECT_PASS_LEASE, { tenant: 'acme', run: 'r1', epoch: 1 });
    expect(plan).toEqual(['SEARCH quota_passes USING INDEX sqlite_autoindex_quota_passes_1 (run_id=? AND tenant=? AND epoch=?)']);
  });
});
