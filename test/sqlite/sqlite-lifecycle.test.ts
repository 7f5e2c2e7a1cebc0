import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { AUDIT_GENESIS_HASH, auditRowHash } from '../../src/store/audit-hash.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { failure } from '../plane/plane-fixtures.js';

const T0 = 1_760_000_000_000; // 2025-10-09T08:53:20Z
const NEXT_MONTH = 1_762_000_000_000; // 2025-11-01T12:26:40Z
const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const DIGEST = 'ab'.repeat(32);
const TOKENS_1000 = { period: 'monthly' as const, maxTokensPerPeriod: 1000 };
const BUDGET = { maxTokens: 400, maxCallTokens: 50 };

function audit(action: string, subject: string, detail: Record<string, unknown> = {}) {
  return { atMs: T0, by: OPS, action, subject, detail };
}

describe('SQLite run lifecycle composites', () => {
  let store: QuotaStore;
  let acme: TenantStore;

  beforeEach(async () => {
    store = await openStore('sqlite::memory:');
    acme = store.tenant('acme');
  });
  afterEach(() => store.close());

  it('admit reserves the hold formula in the period of atMs and records the run and pass 1', async () => {
    const grant = await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0, leaseMs: 60_000, quota: TOKENS_1000 });
    expect(grant).toEqual({ ok: true, run: 'r1', epoch: 1, period: '2025-10', hold: { tokens: 500, minorUnits: 0 }, leaseExpiresAtMs: T0 + 60_000 });
    expect(await acme.reserved('2025-10')).toEqual({ tokens: 500, minorUnits: 0 });
    expect(await acme.runningRuns(10)).toEqual(['r1']);
    expect(await acme.getRun('r1')).toEqual({ run: 'r1', status: 'running', agent: null, chain: null, admittedAtMs: T0, lastEpoch: 1 });
  });

  it('admit of a bare ULID stores the run under its run_ prefix', async () => {
    const ulid = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const grant = await acme.admit({ run: ulid, budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    expect(grant).toMatchObject({ ok: true, run: `run_${ulid}` });
    expect(await acme.getRun(`run_${ulid}`)).not.toBeNull();
  });

  it('an identical retried admit within the lease returns the first grant unchanged; a different one is CONFLICT', async () => {
    await acme.setQuota({ period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1000 }, audit('quota.set', 'quota'));
    const first = await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0, leaseMs: 60_000 });
    // A halt thrown since and a later instant within the lease change nothing for the retry.
    await acme.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS, atMs: T0 + 1 });
    const retry = await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0 + 5, leaseMs: 5 });
    expect(retry).toEqual(first);
    const differs = await failure(acme.admit({ run: 'r1', budget: { maxTokens: 1, maxCallTokens: 1 }, width: 0, atMs: T0 + 6, leaseMs: 5 }));
    expect(differs.code).toBe('CONFLICT');
    expect(differs.details).toMatchObject({ fields: ['budget.maxTokens', 'budget.maxCallTokens', 'width'] });
    expect(await acme.running()).toBe(1);
    expect(await acme.reserved('2025-10')).toEqual({ tokens: 500, minorUnits: 0 });
  });

  it('admit of a concluded run is CONFLICT naming the run', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, atMs: T0 + 1 });
    const error = await failure(acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0 + 2, leaseMs: 1 }));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain("'r1'");
  });

  it('a Halted refusal names the narrowest covering scope, its operator and instant, and writes nothing', async () => {
    await acme.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS, atMs: T0 - 3 });
    await acme.setHalt({ scope: { kind: 'agent', name: 'clerk' }, reason: 'agent 12 is looping', by: OPS, atMs: T0 - 2 });
    const carol = { actor: 'ops-carol', basis: 'authenticated' as const };
    await acme.setHalt({ scope: { kind: 'subject', principal: 'user:alice' }, reason: 'laptop lost', by: carol, atMs: T0 - 1 });
    const outcome = await acme.admit({
      run: 'r1',
      agent: { name: 'clerk', digest: DIGEST },
      chain: ['user:alice', 'svc:clerk'],
      budget: {},
      width: 1,
      atMs: T0,
      leaseMs: 1,
    });
    expect(outcome).toEqual({
      ok: false,
      refusal: { code: 'Halted', tenant: 'acme', scope: 'subject:user:alice', reason: 'laptop lost', by: carol, haltedAtMs: T0 - 1 },
    });
    expect(await acme.running()).toBe(0);
    expect(await acme.getRun('r1')).toBeNull();
    // A run the halts do not cover but the tenant halt does is refused on the tenant scope.
    const other = await acme.admit({ run: 'r2', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    expect(other).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'tenant', reason: 'incident 42' } });
  });

  it('a revision halt covers an agent whose digest was given in upper case', async () => {
    await acme.setHalt({ scope: { kind: 'revision', digest: DIGEST }, reason: 'bad deploy', by: OPS, atMs: T0 });
    const outcome = await acme.admit({ run: 'r1', agent: { name: 'clerk', digest: DIGEST.toUpperCase() }, budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    expect(outcome).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: `revision:${DIGEST}` } });
  });

  it('admit refuses Unbounded when the stored quota bounds tokens and the budget leaves a field open', async () => {
    await acme.setQuota(TOKENS_1000, audit('quota.set', 'quota'));
    const outcome = await acme.admit({ run: 'r1', budget: { maxTokens: 10 }, width: 1, atMs: T0, leaseMs: 1 });
    expect(outcome).toEqual({ ok: false, refusal: { code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxCallTokens', bound: 'tenant' } });
    expect(await acme.running()).toBe(0);
  });

  it('an explicit quota overrides the stored one', async () => {
    await acme.setQuota({ period: 'monthly', maxConcurrentRuns: 0 }, audit('quota.set', 'quota'));
    expect(await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 })).toMatchObject({
      ok: false,
      refusal: { code: 'TooManyRuns', running: 0, limit: 0 },
    });
    expect(await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1, quota: { period: 'monthly' } })).toMatchObject({ ok: true });
  });

  it('admit refuses SpentOut when the hold does not fit, and takes no slot', async () => {
    await acme.setQuota(TOKENS_1000, audit('quota.set', 'quota'));
    expect(await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0, leaseMs: 1 })).toMatchObject({ ok: true });
    expect(await acme.admit({ run: 'r2', budget: BUDGET, width: 2, atMs: T0, leaseMs: 1 })).toMatchObject({ ok: true });
    const refused = await acme.admit({ run: 'r3', budget: BUDGET, width: 0, atMs: T0, leaseMs: 1 });
    expect(refused).toEqual({
      ok: false,
      refusal: { code: 'SpentOut', tenant: 'acme', period: '2025-10', unit: 'tokens', settled: 0, reserved: 1000, requested: 400, limit: 1000, bound: 'tenant' },
    });
    expect(await acme.runningRuns(10)).toEqual(['r1', 'r2']);
  });

  it('resume opens the next epoch without a slot or a check, carrying the hold to the period of atMs', async () => {
    await acme.setQuota({ ...TOKENS_1000, maxConcurrentRuns: 1 }, audit('quota.set', 'quota'));
    await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 200, minorUnits: 0 }, concludes: false, atMs: T0 + 1 });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'paused', lastEpoch: 1 });
    // The slot went back with pass 1, so another run fills the ceiling; the resume is not gated.
    await acme.admit({ run: 'r2', budget: { maxTokens: 0, maxCallTokens: 0 }, width: 0, atMs: T0, leaseMs: 1 });
    await acme.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS, atMs: T0 });

    const grant = await acme.resume({ run: 'r1', atMs: NEXT_MONTH, leaseMs: 30_000 });
    expect(grant).toEqual({ ok: true, run: 'r1', epoch: 2, period: '2025-11', hold: { tokens: 300, minorUnits: 0 }, leaseExpiresAtMs: NEXT_MONTH + 30_000 });
    expect(await acme.reserved('2025-10')).toEqual({ tokens: 0, minorUnits: 0 });
    expect(await acme.reserved('2025-11')).toEqual({ tokens: 300, minorUnits: 0 });
    expect(await acme.runningRuns(10)).toEqual(['r2']);
    expect(await acme.getRun('r1')).toMatchObject({ status: 'running', lastEpoch: 2 });

    // Settling the resumed pass accrues to its own period and releases no slot.
    const settled = await acme.settlePass({ run: 'r1', epoch: 2, spend: { tokens: 100, minorUnits: 0 }, concludes: true, atMs: NEXT_MONTH + 1 });
    expect(settled.receipt).toEqual({ run: 'r1', epoch: 2, period: '2025-11', spend: { tokens: 100, minorUnits: 0 }, releaseSlot: false, concludes: true });
    expect(await acme.spent('2025-10')).toEqual({ tokens: 200, minorUnits: 0 });
    expect(await acme.spent('2025-11')).toEqual({ tokens: 100, minorUnits: 0 });
    expect(await acme.reservations(10)).toEqual([{ run: 'r2', period: '2025-10', remaining: { tokens: 0, minorUnits: 0 } }]);
    expect(await acme.getRun('r1')).toMatchObject({ status: 'concluded' });
  });

  it('resume of an unknown run is NOT_FOUND and of a concluded run is CONFLICT', async () => {
    expect((await failure(acme.resume({ run: 'ghost', atMs: T0, leaseMs: 1 }))).code).toBe('NOT_FOUND');
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, atMs: T0 });
    expect((await failure(acme.resume({ run: 'r1', atMs: T0, leaseMs: 1 }))).code).toBe('CONFLICT');
  });

  it('settlePass: an identical retry is already-settled, a different one CONFLICT, and neither changes anything', async () => {
    await acme.admit({ run: 'r1', budget: BUDGET, width: 2, atMs: T0, leaseMs: 1, quota: TOKENS_1000 });
    const request = { run: 'r1', epoch: 1, spend: { tokens: 120, minorUnits: 3 }, concludes: false, atMs: T0 + 1 };
    expect((await acme.settlePass(request)).outcome).toBe('settled');
    expect(await acme.settlePass({ ...request, atMs: T0 + 99 })).toMatchObject({ outcome: 'already-settled' });
    const conflict = await failure(acme.settlePass({ ...request, spend: { tokens: 121, minorUnits: 3 } }));
    expect(conflict.code).toBe('CONFLICT');
    expect(conflict.message).toBe('quota pass r1/1 was settled already with a different payload; the first receipt stands and nothing changed (a retry must repeat that settle exactly)');
    expect(await acme.spent('2025-10')).toEqual({ tokens: 120, minorUnits: 3 });
    expect(await acme.reserved('2025-10')).toEqual({ tokens: 380, minorUnits: 0 });
    expect((await failure(acme.settlePass({ ...request, epoch: 7 }))).code).toBe('NOT_FOUND');
  });

  it('spend accrues to the pass period even when no ceiling bounds spend', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 42, minorUnits: 7 }, concludes: true, atMs: T0 });
    expect(await acme.spent('2025-10')).toEqual({ tokens: 42, minorUnits: 7 });
    expect(await acme.running()).toBe(0);
  });

  it('the run status follows the latest pass: settling an older pass leaves a newer one running', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.resume({ run: 'r1', atMs: T0 + 10, leaseMs: 1 }); // a recovery while pass 1 still runs
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false, atMs: T0 + 20 });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'running', lastEpoch: 2 });
    await acme.settlePass({ run: 'r1', epoch: 2, spend: { tokens: 1, minorUnits: 0 }, concludes: false, atMs: T0 + 30 });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'paused', lastEpoch: 2 });
  });

  it('dispatch adds the stored quota ceilings of the grant to the declared ones', async () => {
    await acme.setQuota(
      { period: 'monthly', rateCeilings: { 'tool://payments/refund': [{ count: 1, windowSeconds: 3600 }] } },
      audit('quota.set', 'quota'),
    );
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    const base = { run: 'r1', grant: 'tool://payments/refund', ceilings: [{ count: 5, windowSeconds: 60 }], exempt: false };
    expect(await acme.dispatch({ ...base, dispatch: 'k0', atMs: T0 })).toEqual({ ok: true });
    expect(await acme.dispatch({ ...base, dispatch: 'k1', atMs: T0 + 1 })).toMatchObject({
      ok: false,
      refusal: { code: 'RateLimited', ceiling: { count: 1, windowSeconds: 3600 }, reached: 1 },
    });
    // A compensating call is counted, never refused; a retried key is not judged again.
    expect(await acme.dispatch({ ...base, dispatch: 'undo', exempt: true, atMs: T0 + 2 })).toEqual({ ok: true });
    expect(await acme.dispatch({ ...base, dispatch: 'k0', atMs: T0 + 3 })).toEqual({ ok: true });
    expect(await acme.rateRoom('tool://payments/refund', [{ count: 2, windowSeconds: 60 }], T0 + 3)).toMatchObject({
      ok: false,
      refusal: { code: 'RateLimited', reached: 2 },
    });
    // Another grant is counted apart.
    expect(await acme.dispatch({ ...base, grant: 'tool://payments/lookup', dispatch: 'k1', atMs: T0 + 1 })).toEqual({ ok: true });
  });

  it('dispatch of an unknown run is NOT_FOUND and of a concluded run is CONFLICT', async () => {
    const request = { run: 'r1', grant: 'tool://x/y', dispatch: 'k', ceilings: [], exempt: false, atMs: T0 };
    expect((await failure(acme.dispatch(request))).code).toBe('NOT_FOUND');
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, atMs: T0 });
    expect((await failure(acme.dispatch(request))).code).toBe('CONFLICT');
  });

  it('getRun keeps the agent identity and chain', async () => {
    await acme.admit({ run: 'r1', agent: { name: 'clerk', digest: DIGEST }, chain: ['user:alice'], budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    expect(await acme.getRun('r1')).toEqual({
      run: 'r1',
      status: 'running',
      agent: { name: 'clerk', digest: DIGEST },
      chain: ['user:alice'],
      admittedAtMs: T0,
      lastEpoch: 1,
    });
    expect(await acme.getRun('r2')).toBeNull();
  });
});

describe('SQLite quota, audit log and tenants', () => {
  let store: QuotaStore;

  beforeEach(async () => {
    store = await openStore('sqlite::memory:');
  });
  afterEach(() => store.close());

  it('setQuota stores the normalised quota and appends its audit row in one transaction', async () => {
    const acme = store.tenant('acme');
    expect(await acme.getQuota()).toBeNull();
    await acme.setQuota({ period: 'daily', maxConcurrentRuns: 3 }, audit('quota.set', 'quota', { maxConcurrentRuns: 3 }));
    expect(await acme.getQuota()).toEqual({ period: 'daily', maxConcurrentRuns: 3 });
    expect(await acme.auditLog({ limit: 10 })).toMatchObject([{ seq: 1, action: 'quota.set', detail: { maxConcurrentRuns: 3 } }]);
    // A bad audit entry refuses the whole call: the quota is not replaced either.
    const error = await failure(acme.setQuota({ period: 'monthly' }, { ...audit('quota.set', 'quota'), action: '' }));
    expect(error.details.field).toBe('audit.action');
    expect(await acme.getQuota()).toEqual({ period: 'daily', maxConcurrentRuns: 3 });
  });

  it('audit rows are numbered and hash-chained per tenant, and listed newest first, optionally by action', async () => {
    const acme = store.tenant('acme');
    const first = await acme.appendAudit(audit('halt', 'tenant', { reason: 'incident 42', nested: { b: 1, a: 2 } }));
    const second = await acme.appendAudit(audit('lift', 'tenant'));
    const third = await acme.appendAudit(audit('halt', 'agent:clerk'));
    const globex = await store.tenant('globex').appendAudit(audit('halt', 'tenant'));

    expect([first.seq, second.seq, third.seq, globex.seq]).toEqual([1, 2, 3, 1]);
    expect(first.hash).toBe(auditRowHash('acme', 1, first, AUDIT_GENESIS_HASH));
    expect(second.hash).toBe(auditRowHash('acme', 2, second, first.hash));
    expect(third.hash).toBe(auditRowHash('acme', 3, third, second.hash));
    expect(globex.hash).toBe(auditRowHash('globex', 1, globex, AUDIT_GENESIS_HASH));

    expect(await acme.auditLog({ limit: 10 })).toEqual([third, second, first]);
    expect(await acme.auditLog({ limit: 1 })).toEqual([third]);
    expect(await acme.auditLog({ limit: 10, action: 'halt' })).toEqual([third, first]);
  });

  it('tenants() lists tenants with a quota, a run or a halt, once each, in byte order', async () => {
    await store.tenant('zeta').setQuota({ period: 'monthly' }, audit('quota.set', 'quota'));
    await store.tenant('Émile').admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await store.tenant('acme').setHalt({ scope: { kind: 'tenant' }, reason: 'x', by: OPS, atMs: T0 });
    await store.tenant('acme').admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1, quota: { period: 'monthly' } });
    await store.tenant('Zulu').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: T0 });
    await store.tenant('quiet').spent('2025-10');
    expect(await store.tenants()).toEqual(['Zulu', 'acme', 'zeta', 'Émile']);
  });

  it('halts() lists bytewise by scope key and liftHaltIf deletes only the halt it read', async () => {
    const acme = store.tenant('acme');
    await acme.setHalt({ scope: { kind: 'subject', principal: 'user:alice' }, reason: 's', by: OPS, atMs: 1 });
    await acme.setHalt({ scope: { kind: 'agent', name: 'Zed' }, reason: 'a', by: OPS, atMs: 2 });
    await acme.setHalt({ scope: { kind: 'tenant' }, reason: 't', by: OPS, atMs: 3 });
    await acme.setHalt({ scope: { kind: 'agent', name: 'alpha' }, reason: 'a2', by: OPS, atMs: 4 });
    const keys = (await acme.halts()).map((halt) => halt.scope);
    expect(keys).toEqual([
      { kind: 'agent', name: 'Zed' },
      { kind: 'agent', name: 'alpha' },
      { kind: 'subject', principal: 'user:alice' },
      { kind: 'tenant' },
    ]);
    const standing = (await acme.halts()).find((halt) => halt.scope.kind === 'tenant');
    expect(standing).toBeDefined();
    await acme.setHalt({ scope: { kind: 'tenant' }, reason: 't2', by: OPS, atMs: 5 });
    expect(await acme.liftHaltIf(standing!)).toBe(false);
    expect(await acme.liftHaltIf({ ...standing!, reason: 't2', atMs: 5 })).toBe(true);
    expect(await acme.liftHalt({ kind: 'tenant' })).toBe(false);
  });
});
