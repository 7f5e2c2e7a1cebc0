import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { instant } from '../../src/cli/operator/format.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

describe('operator table formatting', () => {
  it('an instant prints as ISO 8601 UTC to the second', () => {
    expect(instant(Date.UTC(2026, 0, 5, 8, 0, 0, 250))).toBe('2026-01-05T08:00:00Z');
  });

  it('an instant a Date cannot show prints its raw ms instead of throwing (a lease from an old store)', () => {
    expect(instant(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991ms');
    expect(instant(Number.NaN)).toBe('NaNms');
  });
});

describe('quotaplane runs with a lease a Date cannot show', () => {
  it('prints the table (the raw ms for that lease) instead of crashing with exit 70', async () => {
    const dir = temporaryDirectory();
    try {
      const url = `sqlite:${join(dir.path, 'old.db')}`;
      const store = await openStore(url);
      // An old store could hold such a lease: the plane bounds leaseMs now, the store never did.
      await store.tenant('acme').admit({ run: 'run-forever', budget: {}, width: 1, atMs: 1_767_600_000_000, leaseMs: Number.MAX_SAFE_INTEGER - 1_767_600_000_000 });
      await store.close();
      const result = await runCli(['runs', '--store', url]);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('run-forever');
      expect(result.stdout).toContain(`${Number.MAX_SAFE_INTEGER}ms`);
    } finally {
      dir.remove();
    }
  });
});
