import pg from 'pg';
import { describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { FALLBACK_POLL_MS, LISTENING_POLL_MS } from '../../src/store/postgres/postgres-wakes.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';
import { until } from '../until.js';

// Waiters on PostgreSQL wake by LISTEN/NOTIFY on a dedicated connection; a lost one is
// re-established, with polling as the fallback meanwhile.

describe('PostgreSQL waiter wakes', () => {
  it('W21: a grant another instance writes wakes the waiter by NOTIFY; a lost LISTEN connection falls back to polling and comes back', async () => {
    const url = testPgUrl();
    const schema = freshSchemaName('wakes');
    const waiting = await openPostgresStore(url, { schema, poolSize: 2 });
    const other = await openPostgresStore(url, { schema, poolSize: 2 });
    try {
      const wakes = waiting.waiterWakes();
      const woken: (string | null)[] = [];
      const unsubscribe = wakes.subscribe((tenant) => woken.push(tenant));
      await until(() => wakes.listening, 'the LISTEN connection is up', { withinMs: 5_000 });
      expect(wakes.pollMs()).toBe(LISTENING_POLL_MS);

      const planeOther = createPlane({ store: other });
      await planeOther.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await planeOther.admit({ tenant: 'acme', run: 'run-1' });
      const planeWaiting = createPlane({ store: waiting });
      const granted = planeWaiting.admit({ tenant: 'acme', run: 'run-2', waitMs: 30_000 });
      await until(async () => (await other.tenant('acme').waitQueue({ atMs: Date.now() })).depth === 1, 'run-2 waits', { withinMs: 5_000 });
      await planeOther.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      expect(await granted).toMatchObject({ ok: true, run: 'run-2' });
      await until(() => woken.includes('acme'), 'the NOTIFY of the grant arrives', { withinMs: 5_000 });

      // The LISTEN connection is killed on the server: the waiters poll, and it comes back.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quotaplane-listen' AND query LIKE 'LISTEN%'`);
      } finally {
        await admin.end();
      }
      await until(() => wakes.pollMs() === FALLBACK_POLL_MS, 'polling while the connection is lost', { withinMs: 5_000 });
      const third = planeWaiting.admit({ tenant: 'acme', run: 'run-3', waitMs: 30_000 });
      await until(async () => (await other.tenant('acme').waitQueue({ atMs: Date.now() })).depth === 1, 'run-3 waits', { withinMs: 5_000 });
      await planeOther.settle({ tenant: 'acme', run: 'run-2', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      expect(await third).toMatchObject({ ok: true, run: 'run-3' });
      await until(() => wakes.listening, 'the LISTEN connection is re-established', { withinMs: 5_000 });
      unsubscribe();
    } finally {
      await waiting.close();
      await other.close();
      await dropSchema(url, schema);
    }
  });
});
