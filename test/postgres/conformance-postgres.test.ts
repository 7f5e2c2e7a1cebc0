import { isQuotaError } from '../../src/core/errors.js';
import type { QuotaStore } from '../../src/store/store.js';
import type { OpenedStore } from '../../src/testing/index.js';
import { describeConformance } from '../../src/testing/vitest.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';

// The PostgreSQL adapter against the whole conformance battery (docs/design/rules.md#x2): every C, G
// and lifecycle case, each group in a fresh schema of the run's server. When a group is done, its
// derived figures must agree with the rows they summarise (books-agree.ts).

// Some groups close the store themselves, so closing again must not fail the group.
async function closeOnce(store: QuotaStore): Promise<void> {
  try {
    await store.close();
  } catch (error) {
    if (!isQuotaError(error, 'STORE_UNAVAILABLE')) throw error;
  }
}

describeConformance('postgres', async (): Promise<OpenedStore> => {
  const url = testPgUrl();
  const schema = freshSchemaName('conformance');
  const store = await openPostgresStore(url, { schema, poolSize: 4 });
  return {
    store,
    close: async () => {
      await closeOnce(store);
      try {
        const differences = await booksDisagreements(url, schema);
        if (differences.length > 0) throw new Error(`the books of ${schema} disagree:\n${describeDifferences(differences)}`);
      } finally {
        await dropSchema(url, schema);
      }
    },
  };
});
