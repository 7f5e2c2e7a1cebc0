import { afterEach, describe, expect, it } from 'vitest';

import { PostgresConnection } from '../../src/store/postgres/postgres-connection.js';
import { createPool } from '../../src/store/postgres/postgres-pool.js';
import { testPgUrl } from './pg-test-support.js';

// Fail closed without falling over (docs/design/decisions.md "Fail closed"): a connection the
// server ends at any moment answers STORE_UNAVAILABLE to the call using it and never reaches the
// process as an unhandled 'error'. Found by books-faults.test.ts: a server stopping (or
// pg_terminate_backend) just as a new connection was handed to a transaction ended the test process
// with "terminating connection due to administrator command".

const pools: { end(): Promise<void> }[] = [];

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end().catch(() => undefined);
});

describe('a pooled connection ended between its checkout and its first statement', () => {
  it('is never without an error listener, and the transaction that got it answers STORE_UNAVAILABLE', async () => {
    const pool = createPool({ url: testPgUrl(), poolSize: 1, busyTimeoutMs: 2_000, statementTimeoutMs: 5_000 }, () => undefined);
    pools.push(pool);
    const db = new PostgresConnection(pool, 'pool_errors');
    // The pool hands a new connection over from inside the socket event that completed it; the
    // borrower's code resumes only after that event's pending ticks. An error in between (as the
    // server's FATAL read in the same chunk as ReadyForQuery) is emitted here, at that moment.
    let listeners = -1;
    pool.once('acquire', (client) => {
      process.nextTick(() => {
        listeners = client.listenerCount('error');
        if (listeners > 0) {
          client.emit('error', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
        }
      });
    });
    const answer = await db.transaction((tx) => tx.rows('SELECT 1 AS one', [])).then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    );
    expect(listeners).toBeGreaterThan(0);
    expect(answer).toBe('STORE_UNAVAILABLE');
    // The broken connection was destroyed, not pooled: the next transaction gets a sound one.
    expect(await db.transaction((tx) => tx.rows<{ one: number }>('SELECT 1 AS one', []))).toEqual([{ one: 1 }]);
  });
});
