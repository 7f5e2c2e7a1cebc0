import pg from 'pg';
import { describe, expect, it } from 'vitest';

import { testPgUrl } from './pg-test-support.js';

// The Postgres suite never skips: without a server this test fails with the reason, and so does
// every other Postgres test file (test/postgres/global-setup.ts).

describe('the PostgreSQL test server', () => {
  it('the run has a PostgreSQL server that answers', async () => {
    const client = new pg.Client({ connectionString: testPgUrl() });
    await client.connect();
    try {
      const result = await client.query<{ answer: number }>('SELECT 1 AS answer');
      expect(result.rows).toEqual([{ answer: 1 }]);
    } finally {
      await client.end();
    }
  });
});
