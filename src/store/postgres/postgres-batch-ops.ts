/**
 * The decisions a PostgreSQL store batches (see `postgres-batcher.ts`): for each, the server-side
 * function it calls and the SQL type of each of its arguments, in order. The first argument is
 * always the tenant. `scalar` names the one column of a function that returns a single value.
 * The TypeScript side sends the values in this order; `quota_batch` in the migration files reads
 * them back out of JSON by the same list, which test/schema/migration-files.test.ts checks, so a
 * change here needs a migration that replaces `quota_batch`.
 */
export const BATCHED_DECISIONS = {
  admit: {
    fn: 'quota_admit',
    types: [
      'text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint',
      'bigint', 'text', 'text', 'text[]', 'boolean', 'bigint', 'bigint', 'bigint', 'text', 'bigint', 'bigint', 'bigint',
    ],
  },
  resume: { fn: 'quota_resume', types: ['text', 'text', 'bigint', 'bigint', 'text', 'text'] },
  settlePass: { fn: 'quota_settle_pass', types: ['text', 'text', 'bigint', 'bigint', 'bigint', 'boolean', 'bigint'] },
  dispatch: {
    fn: 'quota_dispatch',
    types: ['text', 'text', 'text', 'text', 'bigint[]', 'bigint[]', 'bigint', 'boolean', 'bigint', 'bigint'],
  },
  heartbeat: { fn: 'quota_heartbeat', types: ['text', 'text', 'bigint', 'bigint', 'bigint'] },
  reserve: {
    fn: 'quota_reserve',
    types: ['text', 'text', 'bigint', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'text', 'bigint', 'bigint', 'bigint'],
  },
  settle: {
    fn: 'quota_settle',
    scalar: 'outcome',
    types: ['text', 'text', 'bigint', 'text', 'bigint', 'bigint', 'boolean', 'boolean'],
  },
  reserveRate: {
    fn: 'quota_reserve_rate',
    types: ['text', 'text', 'text', 'text', 'bigint[]', 'bigint[]', 'bigint', 'boolean'],
  },
  sweepRun: { fn: 'quota_sweep_run', types: ['text', 'text', 'bigint'] },
} as const satisfies Record<string, { fn: string; types: readonly string[]; scalar?: string }>;

/** The name of a batched decision. */
export type BatchedDecision = keyof typeof BATCHED_DECISIONS;
