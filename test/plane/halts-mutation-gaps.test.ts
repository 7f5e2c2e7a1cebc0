import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { ALICE, BOB, memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// Halt rules mutation testing found unasserted: digest case, the identifier rules of agent names
// and principals, object-form scopes end to end, and what a halt's audit row says it replaced.

const DIGEST = 'c0ffee'.padEnd(64, '7');

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function invalidField(promise: Promise<unknown>): Promise<string> {
  const caught = await promise.then(
    () => expect.unreachable('the input was accepted'),
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(QuotaError);
  expect((caught as QuotaError).code).toBe('INVALID_ARGUMENT');
  return String((caught as QuotaError).details.field);
}

describe('revision halts match an agent digest in either case', () => {
  it('an upper-case digest at admission meets a lower-case revision: halt', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.halt({ tenant: 'acme', scope: `revision:${DIGEST}`, reason: 'bad deploy', by: ALICE, newTenant: true });
    const answer = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST.toUpperCase() } });
    expect(answer.ok === false && answer.refusal).toMatchObject({ code: 'Halted', scope: `revision:${DIGEST}` });
    // Another revision of the same agent is not halted.
    const other = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: 'f'.repeat(64) } });
    expect(other.ok).toBe(true);
  });

  it('a lower-case digest meets a revision: halt thrown with an upper-case key', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const thrown = await plane.halt({ tenant: 'acme', scope: `revision:${DIGEST.toUpperCase()}`, reason: 'bad deploy', by: ALICE, newTenant: true });
    expect(thrown.scope).toBe(`revision:${DIGEST}`);
    const answer = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST } });
    expect(answer.ok === false && answer.refusal).toMatchObject({ code: 'Halted', scope: `revision:${DIGEST}` });
  });

  it('the store itself lowercases an upper-case digest, so a revision halt set on the store matches it too', async () => {
    fixture = await memoryPlane();
    const handle = fixture.handle('acme');
    await handle.setHalt({ scope: { kind: 'revision', digest: DIGEST.toUpperCase() }, reason: 'bad deploy', by: ALICE, atMs: T0 });
    expect((await handle.halts())[0]?.scope).toEqual({ kind: 'revision', digest: DIGEST });
    const answer = await handle.admit({
      run: 'run-a',
      agent: { name: 'clerk', digest: DIGEST.toUpperCase() },
      budget: {},
      width: 1,
      atMs: T0,
      leaseMs: 60_000,
    });
    expect(answer.ok === false && answer.refusal).toMatchObject({ code: 'Halted', scope: `revision:${DIGEST}` });
  });
});

describe('agent: and subject: scopes obey the identifier rules', () => {
  it.each([
    'agent:  ',
    'agent:a\tb',
    `agent:${'n'.repeat(201)}`,
    'subject: ',
    'subject:user\u0085alice',
    `subject:${'p'.repeat(201)}`,
  ])('halt and lift refuse %j, naming scope, and write nothing', async (scope) => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    expect(await invalidField(plane.halt({ tenant: 'acme', scope, reason: 'x', by: ALICE }))).toBe('scope');
    expect(await invalidField(plane.lift({ tenant: 'acme', scope, by: ALICE }))).toBe('scope');
    expect(await plane.halts('acme')).toEqual([]);
    expect(await handle('acme').auditLog({ limit: 10 })).toEqual([]);
  });

  it('the store refuses such a scope too, naming the member', async () => {
    fixture = await memoryPlane();
    const handle = fixture.handle('acme');
    const refused = async (scope: unknown): Promise<string> =>
      invalidField(handle.setHalt({ scope: scope as never, reason: 'x', by: ALICE, atMs: T0 }));
    expect(await refused({ kind: 'agent', name: ' ' })).toBe('halt.scope.name');
    expect(await refused({ kind: 'subject', principal: 'a\nb' })).toBe('halt.scope.principal');
    expect(await refused({ kind: 'revision', digest: 'abc' })).toBe('halt.scope.digest');
    expect(await refused({ kind: 'revision', digest: 7 })).toBe('halt.scope.digest');
    expect(await refused({ kind: 'everything' })).toBe('halt.scope.kind');
    expect(await handle.halts()).toEqual([]);
  });

  it('accepts a 200-character agent name and principal', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const name = 'n'.repeat(200);
    const principal = 'p'.repeat(200);
    expect((await plane.halt({ tenant: 'acme', scope: `agent:${name}`, reason: 'x', by: ALICE, newTenant: true })).scope).toBe(`agent:${name}`);
    expect((await plane.halt({ tenant: 'acme', scope: { kind: 'subject', principal }, reason: 'x', by: ALICE })).scope).toBe(`subject:${principal}`);
  });
});

describe('object-form halt scopes are thrown and lifted like their keys', () => {
  it.each([
    [{ kind: 'tenant' }, 'tenant'],
    [{ kind: 'agent', name: 'clerk' }, 'agent:clerk'],
    [{ kind: 'revision', digest: DIGEST.toUpperCase() }, `revision:${DIGEST}`],
    [{ kind: 'subject', principal: 'user:alice' }, 'subject:user:alice'],
  ] as const)('%j stands as %s, stops admission, and lifts', async (scope, key) => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    const thrown = await plane.halt({ tenant: 'acme', scope, reason: 'stop', by: ALICE, newTenant: true });
    expect(thrown).toMatchObject({ scope: key, reason: 'stop' });
    const refused = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST }, chain: ['user:alice'] });
    expect(refused.ok === false && refused.refusal).toMatchObject({ code: 'Halted', scope: key });

    expect(await plane.lift({ tenant: 'acme', scope, by: BOB })).toEqual({ wasStanding: true, removed: true });
    expect(await plane.halts('acme')).toEqual([]);
    const audit = await handle('acme').auditLog({ limit: 10 });
    expect(audit.map((row) => [row.action, row.subject])).toEqual([
      ['lift', key],
      ['halt', key],
    ]);
    const admitted = await plane.admit({ tenant: 'acme', agent: { name: 'clerk', digest: DIGEST }, chain: ['user:alice'] });
    expect(admitted.ok).toBe(true);
  });
});

describe('what a halt audit row says it replaced', () => {
  it('a halt on one scope while another stands replaces nothing', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'looping', by: BOB });
    await plane.halt({ tenant: 'acme', scope: 'subject:user:alice', reason: 'laptop lost', by: BOB });
    const audit = await handle('acme').auditLog({ limit: 10 });
    expect(audit.map((row) => [row.subject, row.detail])).toEqual([
      ['subject:user:alice', { reason: 'laptop lost', replaced: null }],
      ['agent:clerk', { reason: 'looping', replaced: null }],
      ['tenant', { reason: 'incident 42', replaced: null }],
    ]);
    expect((await plane.halts('acme')).length).toBe(3);
  });

  it('a re-thrown halt names the one it replaced, and only that one', async () => {
    fixture = await memoryPlane();
    const { plane, handle } = fixture;
    await plane.halt({ tenant: 'acme', scope: 'agent:clerk', reason: 'looping', by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, atMs: T0 + 1 });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 43', by: BOB, atMs: T0 + 2 });
    const [latest] = await handle('acme').auditLog({ limit: 1 });
    expect(latest?.detail).toEqual({
      reason: 'incident 43',
      replaced: { reason: 'incident 42', thrownBy: 'ops-alice', thrownBasis: 'asserted', thrownAtMs: T0 + 1 },
    });
  });
});
