import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, T0 } from './plane-fixtures.js';
import type { PruneRaceJob, PruneRaceReport } from './prune-race-worker.js';
import { raceWorkers } from '../sqlite/race-harness.js';

// A prune racing admissions, settles and settle retries of the very runs it
// removes, each in its own OS process on one real database, never changes a decision.

const WORKER = fileURLToPath(new URL('./prune-race-worker.ts', import.meta.url));
const DAY_MS = 86_400_000;
const OLD_MS = T0 - 100 * DAY_MS; // 2025-09: the old runs concluded then
const SPEND = 100;
const OLD_RUNS = Array.from({ length: 60 }, (_, index) => `old-${String(index).padStart(3, '0')}`);
const NEW_RUNS = Array.from({ length: 20 }, (_, index) => `new-${String(index).padStart(3, '0')}`);

function race(jobs: readonly PruneRaceJob[]): Promise<PruneRaceReport[]> {
  return raceWorkers<PruneRaceJob, PruneRaceReport>(WORKER, jobs);
}

describe.each(BACKENDS)('a prune racing admissions and settle retries across OS processes, on $name', ({ name, fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;

  beforeEach(async () => {
    shared = await fresh('prune-race');
    store = await openStore(shared.url, shared.options);
    plane = createPlane({ store });
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: OLD_RUNS.length * SPEND }, { by: ALICE, newTenant: true });
    for (const run of OLD_RUNS) {
      const grant = await plane.admit({ tenant: 'acme', run, budget: { maxTokens: SPEND, maxCallTokens: 0 }, atMs: OLD_MS });
      expect(grant.ok).toBe(true);
      await plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: SPEND, minorUnits: 0 }, concludes: true, atMs: OLD_MS });
    }
    // The current month's ceiling is exactly what the new runs will spend.
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: NEW_RUNS.length * SPEND }, ALICE);
  });
  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  it('retried settles are already-settled or refused as pruned, never counted again; the current books stay exact; the audit verifies', async () => {
    const base = { url: shared.url, options: shared.options, tenant: 'acme', atMs: T0, olderThanMs: 30 * DAY_MS, spendTokens: SPEND };
    const reversed = [...OLD_RUNS].reverse();
    const reports = await race([
      { ...base, role: 'prune', runs: [] },
      { ...base, role: 'retry', runs: OLD_RUNS },
      { ...base, role: 'retry', runs: reversed },
      { ...base, role: 'admit', runs: NEW_RUNS.slice(0, 10) },
      { ...base, role: 'admit', runs: NEW_RUNS.slice(10) },
    ]);

    const retries = reports.flatMap((report) => report.retries);
    expect(retries).toHaveLength(2 * OLD_RUNS.length);
    for (const retry of retries) expect(['already-settled', 'pruned']).toContain(retry.answer);
    const admitted = reports.flatMap((report) => report.admitted);
    expect(admitted).toEqual(expect.arrayContaining(NEW_RUNS.map((run) => ({ run, answer: 'ok', settled: true }))));
    expect(admitted).toHaveLength(NEW_RUNS.length);

    // A run a batch skipped (PostgreSQL skips a run row another transaction holds) goes in the next prune.
    const pruned = (reports[0]?.pruned ?? 0) + (await plane.prune({ tenant: 'acme', olderThanMs: 30 * DAY_MS, atMs: T0, by: ALICE })).total.runs;
    expect(pruned).toBe(OLD_RUNS.length);

    // The books: the old month keeps every settle once; the current month is full, exactly.
    expect((await plane.usage({ tenant: 'acme', period: '2025-09' })).spent.tokens).toBe(OLD_RUNS.length * SPEND);
    const current = await plane.usage({ tenant: 'acme', period: '2026-01' });
    expect(current.spent.tokens).toBe(NEW_RUNS.length * SPEND);
    expect(current.reserved.tokens).toBe(0);
    expect(current.running).toBe(0);
    const more = await plane.admit({ tenant: 'acme', run: 'one-more', budget: { maxTokens: 1, maxCallTokens: 0 }, atMs: T0 });
    expect(more).toMatchObject({ ok: false, refusal: { code: 'SpentOut' } });

    // Every old run is gone once, audited once; every new one is kept.
    const audit = await plane.auditLog({ tenant: 'acme', action: 'run.prune', limit: 1000 });
    const prunedRuns = audit.rows.flatMap((row) => row.detail.runs as string[]);
    expect([...prunedRuns].sort()).toEqual(OLD_RUNS);
    expect((await plane.runs({ tenant: 'acme', limit: 1000 })).runs.map((run) => run.run)).toEqual([...NEW_RUNS]);
    expect(await plane.verifyAudit({ tenant: 'acme' })).toMatchObject({ ok: true });

    // And now every retry is refused, naming the prune.
    for (const run of [OLD_RUNS[0], OLD_RUNS[59]] as string[]) {
      const error = await plane
        .settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: SPEND, minorUnits: 0 }, concludes: true, atMs: T0 + 1 })
        .then(() => null, (caught: unknown) => caught);
      expect(isQuotaError(error, 'CONFLICT'), `${name}: ${String(error)}`).toBe(true);
    }
  });
});
