import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';

// Every plane verb names the store operation that could not answer (STORE_UNAVAILABLE's
// details.operation and message), and every verb names the request, tenant and run fields it
// refuses (these names were unasserted).

// A store that answers the methods in `answers` and fails every other handle call with a plain Error.
function storeFailing(answers: Partial<Record<keyof TenantStore, unknown>> = {}, tenants: () => Promise<string[]> = async () => ['acme']): QuotaStore {
  const handle = new Proxy({} as TenantStore, {
    get(_target, property) {
      if (property in answers) return async () => answers[property as keyof TenantStore];
      return async () => {
        throw new Error(`no ${String(property)} today`);
      };
    },
  });
  return { backend: 'failing', tenant: () => handle, tenants, close: async () => {} };
}

const clock = { nowMs: () => 1_767_600_000_000 };
const OPS = { actor: 'ops', basis: 'asserted' } as const;
const RUN = 'run_01JB0000000000000000000000';

async function operationOf(promise: Promise<unknown>): Promise<string> {
  const caught = await promise.then(
    () => expect.unreachable('the store failure was not reported'),
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(QuotaError);
  const error = caught as QuotaError;
  expect(error.code).toBe('STORE_UNAVAILABLE');
  const operation = String(error.details.operation);
  expect(error.message).toContain(`could not answer ${operation} (no `);
  expect(error.message).toContain('nothing was decided on a guess, retry later');
  return operation;
}

describe('STORE_UNAVAILABLE names the operation that failed', () => {
  const first: [string, (plane: Plane) => Promise<unknown>][] = [
    ['admit', (p) => p.admit({ tenant: 'acme' })],
    ['settle', (p) => p.settle({ tenant: 'acme', run: RUN, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true })],
    ['resume', (p) => p.resume({ tenant: 'acme', run: RUN })],
    ['heartbeat', (p) => p.heartbeat({ tenant: 'acme', run: RUN, epoch: 1 })],
    ['dispatch', (p) => p.dispatch({ tenant: 'acme', run: RUN, grant: 'tool://a/b', dispatch: 'k', ceilings: [] })],
    ['getQuota', (p) => p.setQuota('acme', { period: 'monthly' })],
    ['getQuota', (p) => p.getQuota('acme')],
    ['getQuota', (p) => p.usage({ tenant: 'acme' })],
    ['halts', (p) => p.halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: OPS })],
    ['halts', (p) => p.lift({ tenant: 'acme', scope: 'tenant', by: OPS })],
    ['halts', (p) => p.halts('acme')],
    ['releaseRun', (p) => p.release({ tenant: 'acme', run: RUN, by: OPS })],
    ['lapsedRuns', (p) => p.sweep({ tenant: 'acme' })],
    ['auditChain', (p) => p.verifyAudit({ tenant: 'acme' })],
    ['runs', (p) => p.attention({ tenant: 'acme' })],
    ['runs', (p) => p.runs({ tenant: 'acme' })],
    ['runningRuns', (p) => p.slotHolders({ tenant: 'acme' })],
    ['reservations', (p) => p.reservations({ tenant: 'acme' })],
    ['auditLog', (p) => p.liftedHalts({ tenant: 'acme' })],
    ['auditLog', (p) => p.auditLog({ tenant: 'acme' })],
  ];
  it.each(first)('%s', async (operation, call) => {
    expect(await operationOf(call(createPlane({ store: storeFailing(), clock })))).toBe(operation);
  });

  it('the later calls of a verb are named too', async () => {
    const halt = { scope: { kind: 'tenant' }, reason: 'x', by: OPS, atMs: 1 };
    const plane = (answers: Partial<Record<keyof TenantStore, unknown>>) => createPlane({ store: storeFailing(answers), clock });
    expect(await operationOf(plane({ getQuota: null }).setQuota('acme', { period: 'monthly' }))).toBe('setQuota');
    expect(await operationOf(plane({ getQuota: null }).usage({ tenant: 'acme' }))).toBe('spent');
    expect(await operationOf(plane({ getQuota: null, spent: { tokens: 0, minorUnits: 0 } }).usage({ tenant: 'acme' }))).toBe('reserved');
    expect(
      await operationOf(plane({ getQuota: null, spent: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 0, minorUnits: 0 } }).usage({ tenant: 'acme' })),
    ).toBe('running');
    expect(await operationOf(plane({ halts: [] }).halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: OPS }))).toBe('appendAudit');
    expect(await operationOf(plane({ halts: [], appendAudit: {} }).halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: OPS }))).toBe('setHalt');
    expect(await operationOf(plane({ halts: [halt] }).lift({ tenant: 'acme', scope: 'tenant', by: OPS }))).toBe('appendAudit');
    expect(await operationOf(plane({ halts: [halt], appendAudit: {} }).lift({ tenant: 'acme', scope: 'tenant', by: OPS }))).toBe('liftHaltIf');
    expect(await operationOf(plane({ lapsedRuns: ['run-a'] }).sweep({ tenant: 'acme' }))).toBe('sweepRun');
    expect(await operationOf(plane({ runs: [] }).attention({ tenant: 'acme' }))).toBe('idleHolds');
    expect(await operationOf(plane({ runs: [], idleHolds: [] }).attention({ tenant: 'acme' }))).toBe('unsettledPasses');
    const withheld = [{ run: 'run-w', status: 'withheld', chain: ['p'], statusSinceMs: 0 }];
    expect(await operationOf(plane({ runs: withheld }).attention({ tenant: 'acme' }))).toBe('halts');
  });

  it('a failing tenant list is named, and so is a store whose tenant() throws', async () => {
    const noTenants = createPlane({ store: storeFailing({}, async () => Promise.reject(new Error('no tenants today'))), clock });
    expect(await operationOf(noTenants.sweep())).toBe('tenants');
    expect(await operationOf(noTenants.tenants())).toBe('tenants');
    const store: QuotaStore = {
      backend: 'x',
      tenant: () => {
        throw new Error('no handle today');
      },
      tenants: async () => [],
      close: async () => {},
    };
    const error = await createPlane({ store, clock }).admit({ tenant: 'acme' }).catch((caught: unknown) => caught as QuotaError);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { operation: 'tenant' } });
    expect((error as QuotaError).message).toContain('could not answer tenant (no handle today)');
  });

  it('a QuotaError from tenant() passes through untouched', async () => {
    const fault = new QuotaError('STORE_CORRUPT', 'bad');
    const store: QuotaStore = { backend: 'x', tenant: () => { throw fault; }, tenants: async () => [], close: async () => {} };
    await expect(createPlane({ store, clock }).halts('acme')).rejects.toBe(fault);
  });
});

describe('every verb names request, tenant and run when it refuses them', () => {
  const plane = createPlane({ store: storeFailing(), clock });
  const verbs: [string, (input: unknown) => Promise<unknown>][] = [
    ['admit', (input) => plane.admit(input as never)],
    ['settle', (input) => plane.settle(input as never)],
    ['resume', (input) => plane.resume(input as never)],
    ['heartbeat', (input) => plane.heartbeat(input as never)],
    ['dispatch', (input) => plane.dispatch(input as never)],
    ['release', (input) => plane.release(input as never)],
    ['halt', (input) => plane.halt(input as never)],
    ['lift', (input) => plane.lift(input as never)],
    ['usage', (input) => plane.usage(input as never)],
    ['sweep', (input) => plane.sweep(input as never)],
    ['attention', (input) => plane.attention(input as never)],
    ['verifyAudit', (input) => plane.verifyAudit(input as never)],
    ['runs', (input) => plane.runs(input as never)],
  ];

  async function fieldOf(promise: Promise<unknown>): Promise<string> {
    const caught = await promise.then(
      () => expect.unreachable('accepted'),
      (error: unknown) => error,
    );
    expect((caught as QuotaError).code).toBe('INVALID_ARGUMENT');
    return String((caught as QuotaError).details.field);
  }

  it.each(verbs)('%s', async (_verb, call) => {
    expect(await fieldOf(call('acme'))).toBe('request');
    expect(await fieldOf(call({ tenant: '' }))).toBe('tenant');
  });

  it.each(verbs.slice(1, 6))('%s names a bad run', async (_verb, call) => {
    expect(await fieldOf(call({ tenant: 'acme', run: '' }))).toBe('run');
  });

  it('usage names a bad period', async () => {
    expect(await fieldOf(plane.usage({ tenant: 'acme', period: '2026' }))).toBe('period');
  });
});
