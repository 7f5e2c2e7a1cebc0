import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { MAX_INSTANT_MS, requireInstantMs } from '../../src/core/instant.js';
import { parseLimit, parseScope, parseWidth, requireReason } from '../../src/plane/plane-input.js';
import { requireAgent, requireChain } from '../../src/store/lifecycle-arguments.js';
import { MAX_LEASE_MS, requireBoolean, requireEpoch, requireLeaseMs, requireObject } from '../../src/store/store-arguments.js';
import { MAX_LIST_LIMIT } from '../../src/plane/operator-types.js';
import { invalidArgumentOf } from '../invalid-argument.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// Bounds and shapes of the plane's input rules that mutation testing found unasserted: each test
// fails when the rule it names is changed (a bound moved by one, an integer check dropped).

function fieldOf(fn: () => unknown): string {
  const error = invalidArgumentOf(fn);
  // The rest says what is wrong and what was given, not just the field's name.
  expect(error.message).toMatch(/^[^:]+: (must|is) .*got /);
  return String(error.details.field);
}

async function fieldOfAsync(promise: Promise<unknown>): Promise<string> {
  const caught = await promise.then(
    () => expect.unreachable('the input was accepted'),
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(QuotaError);
  expect((caught as QuotaError).code).toBe('INVALID_ARGUMENT');
  return String((caught as QuotaError).details.field);
}

const DIGEST = 'ab'.repeat(32);

describe('plane input: instants', () => {
  it('accepts 0 and the last instant a period can name, and refuses one ms more', () => {
    expect(requireInstantMs('atMs', 0)).toBe(0);
    expect(MAX_INSTANT_MS).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    expect(requireInstantMs('atMs', MAX_INSTANT_MS)).toBe(MAX_INSTANT_MS);
    expect(fieldOf(() => requireInstantMs('atMs', MAX_INSTANT_MS + 1))).toBe('atMs');
  });

  it.each([-1, 1.5, Number.NaN, '5', null])('refuses %j', (value) => {
    expect(fieldOf(() => requireInstantMs('when', value))).toBe('when');
  });
});

describe('plane input: leases, epochs, widths and booleans', () => {
  it('a lease is 1 … MAX_LEASE_MS whole milliseconds', () => {
    expect(requireLeaseMs('leaseMs', 1)).toBe(1);
    expect(requireLeaseMs('leaseMs', MAX_LEASE_MS)).toBe(MAX_LEASE_MS);
    for (const bad of [0, MAX_LEASE_MS + 1, 1.5, 1000.5, '1000']) expect(fieldOf(() => requireLeaseMs('leaseMs', bad))).toBe('leaseMs');
  });

  it('an epoch is a whole number of at least 1', () => {
    expect(requireEpoch('epoch', 1)).toBe(1);
    expect(requireEpoch('epoch', Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    for (const bad of [0, -1, 1.5, '1', Number.MAX_SAFE_INTEGER + 1]) expect(fieldOf(() => requireEpoch('epoch', bad))).toBe('epoch');
  });

  it('a width defaults to 1 and may be 0', () => {
    expect(parseWidth(undefined)).toBe(1);
    expect(parseWidth(0)).toBe(0);
    expect(parseWidth(4)).toBe(4);
    expect(fieldOf(() => parseWidth(1.5))).toBe('width');
  });

  it('a boolean is true or false, nothing truthy', () => {
    expect(requireBoolean('concludes', true)).toBe(true);
    expect(requireBoolean('concludes', false)).toBe(false);
    for (const bad of [1, 0, 'true', null]) expect(fieldOf(() => requireBoolean('concludes', bad))).toBe('concludes');
  });

  it('a request is a plain object', () => {
    const request = { tenant: 'acme' };
    expect(requireObject('request', request)).toBe(request);
    for (const bad of [null, [], 'acme', 3]) expect(fieldOf(() => requireObject('request', bad))).toBe('request');
  });
});

describe('plane input: listing limits', () => {
  it('absent is the fallback; 1 … MAX_LIST_LIMIT whole rows are accepted', () => {
    expect(MAX_LIST_LIMIT).toBe(1000);
    expect(parseLimit(undefined, 37)).toBe(37);
    expect(parseLimit(1, 37)).toBe(1);
    expect(parseLimit(MAX_LIST_LIMIT, 37)).toBe(MAX_LIST_LIMIT);
  });

  it.each([0, MAX_LIST_LIMIT + 1, 1.5, '10', null])('refuses %j', (value) => {
    expect(fieldOf(() => parseLimit(value, 100))).toBe('limit');
  });
});

describe('plane input: agents, chains and reasons', () => {
  it('lowercases an upper-case digest so it matches a revision halt', () => {
    expect(requireAgent('agent', { name: 'clerk', digest: DIGEST.toUpperCase() })).toEqual({ name: 'clerk', digest: DIGEST });
    expect(requireAgent('agent', undefined)).toBeUndefined();
    expect(requireAgent('agent', null)).toBeUndefined();
  });

  it('refuses an agent that is not an object, a digest that is not 64 hex digits, and a bad name', () => {
    expect(fieldOf(() => requireAgent('agent', 'clerk'))).toBe('agent');
    expect(fieldOf(() => requireAgent('agent', [DIGEST]))).toBe('agent');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: DIGEST.slice(1) }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: `${DIGEST}0` }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: `g${DIGEST.slice(1)}` }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: 42 }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: ' ', digest: DIGEST }))).toBe('agent.name');
  });

  it('a chain is absent, or an array of principals (which may be empty)', () => {
    expect(requireChain('chain', undefined)).toBeUndefined();
    expect(requireChain('chain', null)).toBeUndefined();
    expect(requireChain('chain', [])).toEqual([]);
    expect(requireChain('chain', ['user:alice', 'svc:mail'])).toEqual(['user:alice', 'svc:mail']);
    expect(fieldOf(() => requireChain('chain', { 0: 'user:alice' }))).toBe('chain');
    expect(fieldOf(() => requireChain('chain', ['user:alice', 7]))).toBe('chain[1]');
  });

  it('a reason must say something', () => {
    expect(requireReason('breach')).toBe('breach');
    expect(requireReason(' x ')).toBe(' x ');
    for (const bad of ['', '  ', 5, undefined]) expect(fieldOf(() => requireReason(bad))).toBe('reason');
  });
});

describe('plane input: halt scopes, as keys and as objects', () => {
  it('parses every key form, lowercasing a revision digest', () => {
    expect(parseScope('tenant')).toEqual({ kind: 'tenant' });
    expect(parseScope('agent:clerk')).toEqual({ kind: 'agent', name: 'clerk' });
    expect(parseScope(`revision:${DIGEST.toUpperCase()}`)).toEqual({ kind: 'revision', digest: DIGEST });
    expect(parseScope('subject:user:alice')).toEqual({ kind: 'subject', principal: 'user:alice' });
  });

  it('parses every object form the same way', () => {
    expect(parseScope({ kind: 'tenant' })).toEqual({ kind: 'tenant' });
    expect(parseScope({ kind: 'agent', name: 'clerk' })).toEqual({ kind: 'agent', name: 'clerk' });
    expect(parseScope({ kind: 'revision', digest: DIGEST.toUpperCase() })).toEqual({ kind: 'revision', digest: DIGEST });
    expect(parseScope({ kind: 'subject', principal: 'user:alice' })).toEqual({ kind: 'subject', principal: 'user:alice' });
  });

  it('holds agent names and principals to the identifier rules, in both forms', () => {
    const tooLong = 'x'.repeat(201);
    for (const bad of ['agent: ', 'agent:a\nb', `agent:${tooLong}`, 'subject:  ', 'subject:a\u0000b', `subject:${tooLong}`]) {
      expect(fieldOf(() => parseScope(bad))).toBe('scope');
    }
    for (const bad of [
      { kind: 'agent', name: ' ' },
      { kind: 'agent', name: `${tooLong}` },
      { kind: 'subject', principal: 'a\u2028b' },
      { kind: 'subject', principal: tooLong },
    ]) {
      expect(fieldOf(() => parseScope(bad))).toBe('scope');
    }
    expect(parseScope(`agent:${'x'.repeat(200)}`)).toEqual({ kind: 'agent', name: 'x'.repeat(200) });
    expect(parseScope(`subject:${'x'.repeat(200)}`)).toEqual({ kind: 'subject', principal: 'x'.repeat(200) });
  });

  it.each([
    null,
    42,
    {},
    { kind: 'agent' },
    { kind: 'agent', name: 5 },
    { kind: 'revision' },
    { kind: 'revision', digest: 'abc' },
    { kind: 'subject' },
    { kind: 'subject', principal: ['user:alice'] },
    { kind: 'everything' },
  ])('refuses the scope object %j, naming scope', (scope) => {
    expect(fieldOf(() => parseScope(scope))).toBe('scope');
  });
});

describe('plane: non-integers and out-of-range values are refused before the store', () => {
  let fixture: MemoryPlane | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('refuses a fractional leaseMs, epoch and limit, and the instant after the last one', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    expect(await fieldOfAsync(plane.admit({ tenant: 'acme', leaseMs: 1.5 }))).toBe('leaseMs');
    const admitted = await plane.admit({ tenant: 'acme', run: 'run-a' });
    expect(admitted.ok).toBe(true);
    expect(await fieldOfAsync(plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 1.5 }))).toBe('epoch');
    expect(await fieldOfAsync(plane.heartbeat({ tenant: 'acme', run: 'run-a', epoch: 1, leaseMs: 2.5 }))).toBe('leaseMs');
    expect(await fieldOfAsync(plane.runs({ tenant: 'acme', limit: 1.5 }))).toBe('limit');
    expect(await fieldOfAsync(plane.runs({ tenant: 'acme', limit: MAX_LIST_LIMIT + 1 }))).toBe('limit');
    expect(await fieldOfAsync(plane.admit({ tenant: 'acme', atMs: MAX_INSTANT_MS + 1 }))).toBe('atMs');
    expect(await fieldOfAsync(plane.sweep({ atMs: T0 + 0.5 }))).toBe('atMs');
    // Nothing refused above reached the books: the one admitted run is all there is.
    expect((await plane.runs({ tenant: 'acme', limit: MAX_LIST_LIMIT })).runs.map((run) => run.run)).toEqual(['run-a']);
  });

  it('accepts the largest lease and renews a pass by it', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const admitted = await plane.admit({ tenant: 'acme', run: 'run-a', leaseMs: MAX_LEASE_MS });
    expect(admitted).toMatchObject({ ok: true, leaseExpiresAtMs: T0 + MAX_LEASE_MS });
  });
});
