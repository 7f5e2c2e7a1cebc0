import { expect } from 'vitest';

import type { PlaneVerbs } from '../../src/client/create-client.js';
import { QuotaError } from '../../src/core/errors.js';

/** 2026-01-05T08:00:00Z, where every scenario's clock starts. */
export const T0 = 1_767_600_000_000;
/** The operator every scenario names: what the HTTP service records for the key `ops-all`. */
export const OPS = { actor: 'ops-all', basis: 'authenticated' } as const;

/** Writes down one answer, so two runs of a scenario can be compared answer by answer. */
export type Record = (label: string, value: unknown) => void;

/** One plane scenario: it drives `plane` (a local plane or a client), asserts, and records every answer. */
export interface PlaneScenario {
  readonly name: string;
  run(plane: PlaneVerbs, record: Record): Promise<void>;
}

/** Runs `call` and answers what it threw, as `{ error: code, field }` (messages differ by layer, codes must not). */
export async function fault(call: () => Promise<unknown>): Promise<{ error: string; field?: unknown }> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    const quotaError = error as QuotaError;
    return quotaError.details.field === undefined ? { error: quotaError.code } : { error: quotaError.code, field: quotaError.details.field };
  }
  throw new Error('expected the call to throw a QuotaError');
}

const budget = { maxTokens: 500, maxCallTokens: 100 };

/**
 * The plane scenarios run both ways: against `createPlane` and against a client
 * of `buildApp`. Each names the acceptance case it adapts.
 */
export const PLANE_SCENARIOS: readonly PlaneScenario[] = [
  {
    name: 'G6/G10 a ceiling of 0 refuses TooManyRuns with running 0 and takes no slot',
    async run(plane, record) {
      record('quota', await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { by: OPS, newTenant: true }));
      const refused = await plane.admit({ tenant: 'acme', run: 'run-1' });
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.refusal).toEqual({ code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'tenant' });
      record('admit', refused);
      const usage = await plane.usage({ tenant: 'acme' });
      expect(usage.running).toBe(0);
      record('usage', usage);
    },
  },
  {
    name: 'G7 under a ceiling of 1, three runs in sequence each admit and settle, leaving no slot',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { by: OPS, newTenant: true });
      for (const run of ['run-1', 'run-2', 'run-3']) {
        const pass = await plane.admit({ tenant: 'acme', run });
        expect(pass.ok).toBe(true);
        record(`admit ${run}`, pass);
        record(`settle ${run}`, await plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }));
      }
      expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
    },
  },
  {
    name: 'C2 a second run under a ceiling of 1 refuses TooManyRuns naming the one running',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { by: OPS, newTenant: true });
      record('first', await plane.admit({ tenant: 'acme', run: 'run-a', atMs: T0 + 10 }));
      const second = await plane.admit({ tenant: 'acme', run: 'run-b', atMs: T0 + 20 });
      expect(second.ok).toBe(false);
      if (!second.ok) expect(second.refusal).toMatchObject({ code: 'TooManyRuns', running: 1, limit: 1 });
      record('second', second);
    },
  },
  {
    name: 'C9 holds that fill the token ceiling exactly are admitted; one more token refuses SpentOut',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1000 }, { by: OPS, newTenant: true });
      record('a', await plane.admit({ tenant: 'acme', run: 'run-a', budget: { maxTokens: 500, maxCallTokens: 100 } }));
      record('c', await plane.admit({ tenant: 'acme', run: 'run-c', budget: { maxTokens: 300, maxCallTokens: 100 }, width: 1 }));
      const refused = await plane.admit({ tenant: 'acme', run: 'run-d', budget: { maxTokens: 0, maxCallTokens: 1 } });
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.refusal).toEqual({
          code: 'SpentOut',
          tenant: 'acme',
          period: '2026-01-05',
          unit: 'tokens',
          settled: 0,
          reserved: 1000,
          requested: 1,
          limit: 1000,
          bound: 'tenant',
        });
      }
      record('d', refused);
      record('usage', await plane.usage({ tenant: 'acme', period: '2026-01-05' }));
    },
  },
  {
    name: 'Unbounded: a run under a token ceiling without a per-call bound is refused naming maxCallTokens',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { by: OPS, newTenant: true });
      const refused = await plane.admit({ tenant: 'acme', run: 'run-u', budget: { maxTokens: 100 } });
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.refusal).toEqual({ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxCallTokens', bound: 'tenant' });
      record('admit', refused);
    },
  },
  {
    name: 'C5/C6/C7 settle accrues once: an identical retry is already-settled, a different payload is CONFLICT',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { by: OPS, newTenant: true });
      record('admit', await plane.admit({ tenant: 'acme', run: 'run-s', budget }));
      const settle = { tenant: 'acme', run: 'run-s', epoch: 1, spend: { tokens: 400, minorUnits: 7 }, concludes: true };
      const first = await plane.settle(settle);
      expect(first.outcome).toBe('settled');
      record('first', first);
      const retry = await plane.settle(settle);
      expect(retry.outcome).toBe('already-settled');
      record('retry', retry);
      const conflict = await fault(() => plane.settle({ ...settle, spend: { tokens: 401, minorUnits: 7 } }));
      expect(conflict).toEqual({ error: 'CONFLICT' });
      record('conflict', conflict);
      const usage = await plane.usage({ tenant: 'acme' });
      expect(usage.spent).toEqual({ tokens: 400, minorUnits: 7 });
      expect(usage.reserved).toEqual({ tokens: 0, minorUnits: 0 });
      record('usage', usage);
    },
  },
  {
    name: 'settling or resuming a run the tenant does not have is NOT_FOUND',
    async run(plane, record) {
      record(
        'settle',
        await fault(() => plane.settle({ tenant: 'acme', run: 'run-ghost', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true })),
      );
      record('resume', await fault(() => plane.resume({ tenant: 'acme', run: 'run-ghost' })));
    },
  },
  {
    name: 'G14 adapted: a paused run resumes in the next daily period with its hold carried, then concludes',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1_000_000 }, { by: OPS, newTenant: true });
      record('admit', await plane.admit({ tenant: 'acme', run: 'run-p', budget, atMs: T0 }));
      record('pause', await plane.settle({ tenant: 'acme', run: 'run-p', epoch: 1, spend: { tokens: 100, minorUnits: 0 }, concludes: false, atMs: T0 + 1000 }));
      const resumed = await plane.resume({ tenant: 'acme', run: 'run-p', atMs: T0 + 86_400_000 });
      expect(resumed).toMatchObject({ ok: true, epoch: 2, period: '2026-01-06' });
      record('resume', resumed);
      record('conclude', await plane.settle({ tenant: 'acme', run: 'run-p', epoch: 2, spend: { tokens: 50, minorUnits: 0 }, concludes: true, atMs: T0 + 86_401_000 }));
      record('day 1', await plane.usage({ tenant: 'acme', period: '2026-01-05' }));
      record('day 2', await plane.usage({ tenant: 'acme', period: '2026-01-06' }));
    },
  },
  {
    name: 'RG2/D6 a full rate window refuses RateLimited with the count and when to retry; a retried dispatch key counts once',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly' }, { by: OPS, newTenant: true });
      await plane.admit({ tenant: 'acme', run: 'run-r' });
      const ceilings = [{ count: 2, windowSeconds: 3600 }];
      const dispatch = (key: string, atMs: number) =>
        plane.dispatch({ tenant: 'acme', run: 'run-r', grant: 'tool://payments/refund', dispatch: key, ceilings, atMs });
      record('one', await dispatch('d-1', T0 + 1000));
      record('two', await dispatch('d-2', T0 + 2000));
      record('retry of one', await dispatch('d-1', T0 + 2500));
      const third = await dispatch('d-3', T0 + 3000);
      expect(third.ok).toBe(false);
      if (!third.ok) {
        expect(third.refusal).toEqual({
          code: 'RateLimited',
          tenant: 'acme',
          grant: 'tool://payments/refund',
          ceiling: { count: 2, windowSeconds: 3600 },
          reached: 2,
          retryAtMs: T0 + 1000 + 3_600_000,
        });
      }
      record('three', third);
      const uncountable = await plane.dispatch({
        tenant: 'acme',
        run: 'run-r',
        grant: 'tool://payments/refund',
        dispatch: 'd-4',
        ceilings: [{ count: 5, windowSeconds: 0 }],
      });
      expect(uncountable.ok ? null : uncountable.refusal.code).toBe('UncountableRate');
      record('uncountable', uncountable);
    },
  },
  {
    name: 'G11/G13 a tenant halt refuses admission as Halted with its reason, and after the lift admission succeeds',
    async run(plane, record) {
      const thrown = await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42: runaway spend', by: OPS, atMs: T0, newTenant: true });
      expect(thrown).toEqual({ scope: 'tenant', reason: 'incident 42: runaway spend', by: OPS, atMs: T0, reach: 'admission', reachesRunning: false, running: 0 });
      record('halt', thrown);
      const refused = await plane.admit({ tenant: 'acme', run: 'run-h' });
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.refusal).toMatchObject({ code: 'Halted', scope: 'tenant', reason: 'incident 42: runaway spend' });
      record('refused', refused);
      record('halts', await plane.halts('acme'));
      record('other tenant', await plane.admit({ tenant: 'globex', run: 'run-g' }));
      const lifted = await plane.lift({ tenant: 'acme', scope: 'tenant', by: OPS, atMs: T0 + 5 });
      expect(lifted).toEqual({ wasStanding: true, removed: true });
      record('lift', lifted);
      record('lift again', await plane.lift({ tenant: 'acme', scope: { kind: 'tenant' }, by: OPS }));
      record('admitted', await plane.admit({ tenant: 'acme', run: 'run-h' }));
    },
  },
  {
    name: 'D11 with a tenant and a subject halt standing, a run on that subject is refused naming the subject halt',
    async run(plane, record) {
      await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'maintenance', by: OPS, atMs: T0, newTenant: true });
      record('subject', await plane.halt({ tenant: 'acme', scope: 'subject:user:alice', reason: 'laptop lost', by: OPS, atMs: T0 + 1 }));
      const refused = await plane.admit({ tenant: 'acme', run: 'run-x', chain: ['user:alice', 'agent:helper'] });
      if (!refused.ok) expect(refused.refusal).toMatchObject({ code: 'Halted', scope: 'subject:user:alice' });
      record('refused', refused);
      record('halts', await plane.halts('acme'));
    },
  },
  {
    name: 'quota round trip: none set reads null; a set quota is normalised and read back',
    async run(plane, record) {
      expect(await plane.getQuota('acme')).toBeNull();
      const stored = await plane.setQuota(
        'acme',
        { maxConcurrentRuns: 4, maxMinorUnitsPerPeriod: 0, period: 'daily', rateCeilings: { 'tool://mail/send': [{ count: 10, windowSeconds: 60 }] } },
        { by: OPS, newTenant: true },
      );
      record('stored', stored);
      expect(await plane.getQuota('acme')).toEqual(stored);
      record('read', await plane.getQuota('acme'));
    },
  },
  {
    name: 'L95.1/L95.2 a halt or quota change of a tenant that does not exist is NOT_FOUND suggesting the nearest; said new, it creates it',
    async run(plane, record) {
      await plane.setQuota('acme', { period: 'monthly' }, { by: OPS, newTenant: true });
      const unknown = async (call: () => Promise<unknown>) => {
        const error = await call().then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(QuotaError);
        const { code, details } = error as QuotaError;
        return { code, field: details.field, tenant: details.tenant, act: details.act, suggestion: details.suggestion };
      };
      const expected = { code: 'NOT_FOUND', field: 'tenant', tenant: 'acmee', suggestion: 'acme' };
      const halt = await unknown(() => plane.halt({ tenant: 'acmee', scope: 'tenant', reason: 'incident 42', by: OPS }));
      expect(halt).toEqual({ ...expected, act: 'halt' });
      record('halt', halt);
      const quota = await unknown(() => plane.updateQuota('acmee', { maxConcurrentRuns: 0 }, OPS));
      expect(quota).toEqual({ ...expected, act: 'quota' });
      record('quota', quota);
      const lift = await unknown(() => plane.lift({ tenant: 'acmee', scope: 'tenant', by: OPS }));
      expect(lift).toEqual({ ...expected, act: 'lift' });
      record('lift', lift);
      record('created', await plane.setQuota('acmee', { period: 'monthly', maxConcurrentRuns: 0 }, { by: OPS, newTenant: true }));
      record('halted', await plane.halt({ tenant: 'acmee', scope: 'tenant', reason: 'incident 42', by: OPS, atMs: T0 }));
      record('halts', await plane.halts('acmee'));
    },
  },
  {
    name: 'bad input throws INVALID_ARGUMENT naming the field, and a refusal or fault changes nothing',
    async run(plane, record) {
      record('tenant', await fault(() => plane.admit({ tenant: '' })));
      record('budget', await fault(() => plane.admit({ tenant: 'acme', budget: { maxTokens: -1 } })));
      record('scope', await fault(() => plane.halt({ tenant: 'acme', scope: 'everything', reason: 'x', by: OPS })));
      record('period', await fault(() => plane.usage({ tenant: 'acme', period: '2026-13' })));
      record('usage', await plane.usage({ tenant: 'acme' }));
    },
  },
];
