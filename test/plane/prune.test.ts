import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import type { PruneProgress } from '../../src/plane/prune-types.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, T0 } from './plane-fixtures.js';

// Plane.prune by age, in batches, audited; nothing a decision reads changes.

const DAY_MS = 86_400_000;
const NOW_MS = T0 + 100 * DAY_MS; // 2026-04-15: the prune runs then
const NINETY_DAYS_MS = 90 * DAY_MS;
const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });
const budget = (n: number) => ({ maxTokens: n, maxCallTokens: 0 });

async function concluded(plane: Plane, tenant: string, run: string, atMs: number, spend: number): Promise<void> {
  const grant = await plane.admit({ tenant, run, budget: budget(spend), atMs });
  if (!grant.ok) throw new Error(`admit ${run}: ${grant.message}`);
  await plane.settle({ tenant, run, epoch: 1, spend: tokens(spend), concludes: true, atMs });
}

async function rejection(promise: Promise<unknown>) {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

describe.each(BACKENDS)('Plane.prune on $name', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;
  let clock: ManualClock;

  beforeEach(async () => {
    shared = await fresh('prune');
    store = await openStore(shared.url, shared.options);
    clock = new ManualClock(NOW_MS);
    plane = createPlane({ store, clock });
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { by: ALICE, newTenant: true });
    // January: five runs concluded 100 days ago. April: one concluded today, one still open.
    for (let index = 0; index < 5; index += 1) await concluded(plane, 'acme', `jan-${index}`, T0 + index, 100);
    await concluded(plane, 'acme', 'apr-done', NOW_MS - DAY_MS, 400);
    const open = await plane.admit({ tenant: 'acme', run: 'apr-open', budget: budget(600), atMs: NOW_MS - DAY_MS });
    expect(open.ok).toBe(true);
    await concluded(plane, 'globex', 'jan-g', T0, 7);
  });
  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  it('a released run whose pass never settled survives the prune, its late settle is booked, and the refusal after a later prune is true', async () => {
    await plane.setQuota('initech', { period: 'monthly', maxTokensPerPeriod: 5000 }, { by: ALICE, newTenant: true });
    const grant = await plane.admit({ tenant: 'initech', run: 'r2', budget: { maxTokens: 1000, maxCallTokens: 100 }, atMs: NOW_MS - 5000 });
    expect(grant.ok).toBe(true);
    expect(await plane.release({ tenant: 'initech', run: 'r2', by: ALICE, atMs: NOW_MS - 4000 })).toMatchObject({ outcome: 'released' });
    const first = await plane.prune({ olderThanMs: 1000, tenant: 'initech', by: ALICE });
    expect(first.total.runs).toBe(0);

    const settled = await plane.settle({ tenant: 'initech', run: 'r2', epoch: 1, spend: tokens(900), concludes: true });
    expect(settled.outcome).toBe('settled');
    expect((await plane.usage({ tenant: 'initech' })).spent.tokens).toBe(900);

    const second = await plane.prune({ olderThanMs: 1000, tenant: 'initech', by: ALICE });
    expect(second.total.runs).toBe(1);
    const error = await rejection(plane.settle({ tenant: 'initech', run: 'r2', epoch: 1, spend: tokens(900), concludes: true }));
    expect(isQuotaError(error, 'CONFLICT')).toBe(true);
    expect((error as Error).message).toMatch(/was released at .* every one of its passes has settled \(it had 1\)/);
    expect((await plane.usage({ tenant: 'initech' })).spent.tokens).toBe(900);
  });

  it('--older-than 90d removes the January runs in batches, each batch audited, and the audit chain still verifies', async () => {
    const progress: PruneProgress[] = [];
    const result = await plane.prune({ olderThanMs: NINETY_DAYS_MS, by: ALICE, batchSize: 2, onProgress: (each) => progress.push(each) });
    expect(result).toMatchObject({
      atMs: NOW_MS,
      olderThanMs: NINETY_DAYS_MS,
      dryRun: false,
      closedAtOrBeforeMs: NOW_MS - NINETY_DAYS_MS,
      stopped: false,
      tenants: [
        { tenant: 'acme', runs: 5, passes: 5, receipts: 5, rateDispatches: 0 },
        { tenant: 'globex', runs: 1, passes: 1, receipts: 1, rateDispatches: 0 },
      ],
      total: { runs: 6, passes: 6, receipts: 6, rateDispatches: 0 },
    });
    // Pages of two runs of any status by run id (apr-done, apr-open | jan-0, jan-1 | jan-2, jan-3 |
    // jan-4): each page's candidates are one batch, reported and audited on its own; a page without
    // any is no batch.
    expect(progress.filter((each) => each.tenant === 'acme').map((each) => each.runs)).toEqual([2, 4, 5]);
    const audit = await plane.auditLog({ tenant: 'acme', action: 'run.prune' });
    expect(audit.rows.map((row) => row.detail.runs)).toEqual([['jan-4'], ['jan-2', 'jan-3'], ['jan-0', 'jan-1']]);
    expect(audit.rows.every((row) => row.by.actor === ALICE.actor && row.detail.closedAtOrBeforeMs === NOW_MS - NINETY_DAYS_MS)).toBe(true);
    expect(await plane.verifyAudit({})).toMatchObject({ ok: true });
    expect((await plane.runs({ tenant: 'acme' })).runs.map((run) => run.run)).toEqual(['apr-done', 'apr-open']);
  });

  it('never changes a period figure: January still reads 500 spent, and April still refuses what its ceiling cannot hold', async () => {
    const before = await Promise.all(['2026-01', '2026-04'].map((period) => plane.usage({ tenant: 'acme', period })));
    // Even an age of 1 ms prunes only closed runs: the open one keeps its slot and hold.
    await plane.prune({ olderThanMs: 1, by: ALICE });
    const after = await Promise.all(['2026-01', '2026-04'].map((period) => plane.usage({ tenant: 'acme', period })));
    expect(after).toEqual(before);
    expect(after[0]?.spent.tokens).toBe(500);
    expect(after[1]).toMatchObject({ spent: tokens(400), reserved: tokens(600), running: 1 });
    // April: 400 settled (its run pruned) + 600 held = the 1000 ceiling, so one more token is refused.
    const refused = await plane.admit({ tenant: 'acme', run: 'apr-more', budget: budget(1), atMs: NOW_MS });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'SpentOut', period: '2026-04' } });
    expect((await plane.runs({ tenant: 'acme' })).runs.map((run) => run.run)).toEqual(['apr-open']);
  });

  it('a settle retried after its run was pruned is CONFLICT naming the prune, and the books do not move', async () => {
    await plane.prune({ olderThanMs: NINETY_DAYS_MS, by: ALICE });
    const error = await rejection(plane.settle({ tenant: 'acme', run: 'jan-0', epoch: 1, spend: tokens(100), concludes: true }));
    expect(isQuotaError(error, 'CONFLICT')).toBe(true);
    expect((error as Error).message).toContain("run 'jan-0' of tenant 'acme' concluded at 2026-01-05");
    expect((error as Error).message).toContain('its records were pruned');
    expect((error as { details: object }).details).toMatchObject({ pruned: true, run: 'jan-0', status: 'concluded', prunedAtMs: NOW_MS });
    expect((await plane.usage({ tenant: 'acme', period: '2026-01' })).spent.tokens).toBe(500);
    const readmitted = await rejection(plane.admit({ tenant: 'acme', run: 'jan-0', budget: budget(1), atMs: NOW_MS }));
    expect(isQuotaError(readmitted, 'CONFLICT')).toBe(true);
    expect(await plane.release({ tenant: 'acme', run: 'jan-0', by: ALICE })).toMatchObject({ outcome: 'already-closed', previousStatus: 'concluded' });
  });

  it('a dry run counts what would go and changes nothing, not even the audit log', async () => {
    const auditBefore = await plane.auditLog({ tenant: 'acme', limit: 1000 });
    const result = await plane.prune({ olderThanMs: NINETY_DAYS_MS, dryRun: true, batchSize: 2 });
    expect(result).toMatchObject({ dryRun: true, total: { runs: 6, passes: 6, receipts: 6, rateDispatches: 0 } });
    expect(await plane.auditLog({ tenant: 'acme', limit: 1000 })).toEqual(auditBefore);
    expect((await plane.runs({ tenant: 'acme' })).runs).toHaveLength(7);
    expect((await plane.prune({ olderThanMs: NINETY_DAYS_MS, by: ALICE })).total.runs).toBe(6);
  });

  it('rate instants go only when no window can count them: a window of the last 31 days keeps its dispatches', async () => {
    await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000, rateCeilings: { 'tool://mail/send': [{ count: 2, windowSeconds: 2_678_400 }] } }, { by: ALICE, newTenant: true });
    const recent = NOW_MS - 20 * DAY_MS;
    for (const key of ['a', 'b']) {
      expect(await plane.dispatch({ tenant: 'acme', run: 'apr-open', grant: 'tool://mail/send', dispatch: key, atMs: recent })).toEqual({ ok: true });
    }
    // An old grant nobody dispatches to any more: its instants linger until a prune.
    for (const key of ['c', 'd', 'e']) {
      expect(await plane.dispatch({ tenant: 'acme', run: 'apr-open', grant: 'tool://old/tool', dispatch: key, atMs: T0 })).toEqual({ ok: true });
    }
    const result = await plane.prune({ olderThanMs: DAY_MS, by: ALICE });
    expect(result.rateAtOrBeforeMs).toBe(NOW_MS - 2_678_400_000);
    expect(result.tenants.find((each) => each.tenant === 'acme')?.rateDispatches).toBe(3);
    const third = await plane.dispatch({ tenant: 'acme', run: 'apr-open', grant: 'tool://mail/send', dispatch: 'f', atMs: NOW_MS });
    expect(third).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 2 } });
    expect((await plane.auditLog({ tenant: 'acme', action: 'rate.prune' })).rows[0]?.detail).toEqual({ atOrBeforeMs: NOW_MS - 2_678_400_000, dispatches: 3 });
  });

  it('an aborted signal stops after the batch in hand and says so; the next prune finishes the rest', async () => {
    const controller = new AbortController();
    const first = await plane.prune({
      tenant: 'acme',
      olderThanMs: NINETY_DAYS_MS,
      by: ALICE,
      batchSize: 2,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    expect(first).toMatchObject({ stopped: true, total: { runs: 2 } });
    expect((await plane.prune({ tenant: 'acme', olderThanMs: NINETY_DAYS_MS, by: ALICE })).total.runs).toBe(3);
  });

  it('refuses a malformed request naming the field, before touching the store', async () => {
    for (const [input, field] of [
      [{ olderThanMs: 0 }, 'olderThanMs'],
      [{ olderThanMs: 1.5 }, 'olderThanMs'],
      [{ olderThanMs: DAY_MS, batchSize: 1001 }, 'batchSize'],
      [{ olderThanMs: DAY_MS, dryRun: 'yes' }, 'dryRun'],
      [{ olderThanMs: DAY_MS, by: { actor: '' } }, 'by.actor'],
    ] as const) {
      const error = await rejection(plane.prune(input as never));
      expect(isQuotaError(error, 'INVALID_ARGUMENT'), JSON.stringify(input)).toBe(true);
      expect((error as { details: { field: string } }).details.field).toBe(field);
    }
    expect((await plane.runs({ tenant: 'acme' })).runs).toHaveLength(7);
  });
});
